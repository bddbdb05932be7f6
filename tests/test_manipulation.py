"""Manipulation functions against NumPy; views must alias their base."""
from __future__ import annotations

import itertools

import array_api_strict as xps
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import clnp

SETTINGS = settings(max_examples=30, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])

A = np.arange(24, dtype=np.int64).reshape(2, 3, 4)


def base(device, a=A):
    return clnp.asarray(a, device=device)


def same(got, expected):
    assert isinstance(got, clnp.Array)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    np.testing.assert_array_equal(np.asarray(got), expected)


def aliases(view, base_arr, a_base, np_view_fn):
    """Writing through ``view`` changes ``base_arr`` exactly as NumPy's view would."""
    view[...] = -1
    np_view_fn(a_base)[...] = -1
    np.testing.assert_array_equal(np.asarray(base_arr), a_base)


# ----------------------------------------------------------------------------- broadcasting
def test_broadcast_arrays(device):
    b = np.arange(4.0)
    c = np.array([[1], [2], [3]], dtype=np.int32)
    out = clnp.broadcast_arrays(base(device), base(device, b), base(device, c))
    assert isinstance(out, tuple) and len(out) == 3
    for g, e in zip(out, np.broadcast_arrays(A, b, c)):
        same(g, e)
    assert clnp.broadcast_arrays() == ()
    (single,) = clnp.broadcast_arrays(base(device))
    same(single, A)
    with pytest.raises(ValueError, match=r"\(2, 3, 4\).*\(5,\)"):
        clnp.broadcast_arrays(base(device), clnp.ones(5, device=device))


def test_broadcast_to(device):
    b = np.arange(4.0)
    same(clnp.broadcast_to(base(device, b), (2, 3, 4)), np.broadcast_to(b, (2, 3, 4)))
    same(clnp.broadcast_to(base(device, A[:, :1]), [2, 5, 4]), np.broadcast_to(A[:, :1], (2, 5, 4)))
    same(clnp.broadcast_to(base(device, np.float32(3)), ()), np.full((), 3, np.float32))
    same(clnp.broadcast_to(base(device, b), (0, 4)), np.broadcast_to(b, (0, 4)))
    for shape in [(3,), (2, 3), (4, 5), ()]:
        with pytest.raises(ValueError) as e:
            clnp.broadcast_to(base(device, A[0]), shape)
        assert "(3, 4)" in str(e.value) and str(tuple(shape)) in str(e.value)
    with pytest.raises(ValueError, match="negative"):
        clnp.broadcast_to(base(device, b), (-1, 4))
    with pytest.raises(TypeError):
        clnp.broadcast_to(object(), (2, 4))


# ----------------------------------------------------------------------------- concat / stack
@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_concat_axes(device, axis):
    a, b = A, A[:, :, :2] if axis in (-1, None) else A
    if axis == 1:
        b = A[:, :1]
    same(clnp.concat([base(device, a), base(device, b), base(device, a)], axis=axis),
         np.concatenate([a, b, a], axis=axis))


@pytest.mark.parametrize("d1, d2", [("int8", "uint8"), ("int32", "float32"), ("bool", "bool"),
                                    ("float32", "float64"), ("complex64", "float64"),
                                    ("int16", "int64")])
def test_concat_promotion(device, d1, d2):
    a = np.arange(3).astype(d1)
    b = np.arange(2).astype(d2)
    got = clnp.concat((base(device, a), base(device, b)))
    if a.dtype.kind == b.dtype.kind or {a.dtype.kind, b.dtype.kind} == {"f", "c"}:
        expected = xps.result_type(getattr(xps, d1), getattr(xps, d2))
        assert got.dtype == np.dtype(str(expected).split(".")[-1])
    else:   # mixed kinds: the standard is silent, clnp follows NumPy
        assert got.dtype == np.result_type(a, b)
    np.testing.assert_array_equal(np.asarray(got), np.concatenate([a, b]))


def test_concat_misc(device):
    x = base(device)
    one = clnp.concat([x])
    same(one, A)
    one[0, 0, 0] = 100
    assert int(x[0, 0, 0]) == 0, "concat of one array must copy"
    same(clnp.concat([x, x[:0]], axis=0), A)
    same(clnp.concat([base(device, np.zeros((0, 3))), base(device, np.ones((2, 3)))]),
         np.ones((2, 3)))
    same(clnp.concat([base(device, np.float64(1)), x[0, 0]], axis=None),
         np.concatenate([[1.0], A[0, 0].astype(float)]))
    same(clnp.concatenate([x, x], axis=2), np.concatenate([A, A], axis=2))


@pytest.mark.parametrize("dtype", ["float32", "float16", "bool", "int64", "complex128",
                                   "uint8"])
def test_concat_in_one_launch(device, dtype):
    """Inputs of the output's dtype are joined by one kernel (clnp._kernels.concatenate), bit
    for bit, from any layout whose dims merge around the axis: permuted, reversed and
    stepped views, an empty input among them; inputs whose dims do not merge take the
    copies."""
    from clnp._core.capture import capture
    rng = np.random.default_rng(5)
    if dtype in ("float16", "complex128") and not device.supports(np.dtype(dtype)):
        pytest.skip(f"{device} has no {dtype}")
    hs = [(rng.standard_normal((3, n, 5)) * 4).astype(dtype) for n in (4, 2, 1)]
    xs = [clnp.asarray(h, device=device) for h in hs]
    views = [clnp.permute_dims(clnp.asarray(np.ascontiguousarray(hs[0].transpose(2, 1, 0)),
                                            device=device), (2, 1, 0)),
             xs[1][::-1, :, ::2], xs[2][:, :0], xs[2]]
    got, rep = capture(lambda *a: clnp.concatenate(list(a), axis=1), xs, device)
    assert rep.n_launches == 1
    np.testing.assert_array_equal(clnp.asnumpy(got), np.concatenate(hs, axis=1))
    parts = [views[0][:, :, :3], views[1], views[2][:, :, :3], views[3][:, :, :3]]
    got, rep = capture(lambda *a: clnp.concatenate(list(a), axis=1), parts, device)
    assert rep.n_launches == 1
    np.testing.assert_array_equal(
        clnp.asnumpy(got), np.concatenate([hs[0][:, :, :3], hs[1][::-1, :, ::2],
                                           hs[2][:, :0, :3], hs[2][:, :, :3]], axis=1))
    # dims before the axis that do not merge: a (5, 3) grid of a transposed (3, 5) array
    t = clnp.permute_dims(clnp.asarray(hs[0][:, 0, :], device=device), (1, 0))
    np.testing.assert_array_equal(clnp.asnumpy(clnp.concatenate(
        [clnp.expand_dims(t, axis=2), clnp.expand_dims(t, axis=2)], axis=2)),
        np.stack([hs[0][:, 0, :].T] * 2, axis=2))


def test_concat_errors(device):
    x = base(device)
    with pytest.raises(ValueError, match=r"\(2, 3, 4\).*\(2, 2, 4\)"):
        clnp.concat([x, x[:, :2]], axis=0)
    with pytest.raises(ValueError, match=r"\(2, 3, 4\).*\(3, 4\)"):
        clnp.concat([x, x[0]])
    with pytest.raises(ValueError, match="at least one"):
        clnp.concat([])
    with pytest.raises(ValueError, match="zero-dimensional"):
        clnp.concat([x[0, 0, 0], x[0, 0, 1]])
    with pytest.raises(IndexError, match="axis 3"):
        clnp.concat([x, x], axis=3)
    # NumPy arrays among the inputs are uploaded, as NumPy users expect (issue #12)
    np.testing.assert_array_equal(clnp.concat([x, A]).to_numpy(),
                                  np.concatenate([x.to_numpy(), A]))
    with pytest.raises(TypeError, match="clnp array"):
        clnp.concat([x, object()])


@pytest.mark.parametrize("axis", [0, 1, -1, 3, -4])
def test_stack(device, axis):
    same(clnp.stack([base(device), base(device) * 2], axis=axis),
         np.stack([A, A * 2], axis=axis))


def test_stack_misc(device):
    x = base(device, np.arange(3.0))
    same(clnp.stack([x]), np.arange(3.0)[None])
    same(clnp.stack([x, base(device, np.arange(3, dtype=np.int32))], axis=1),
         np.stack([np.arange(3.0), np.arange(3)], axis=1))
    same(clnp.stack([x[0], x[1]]), np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match=r"\(3,\).*\(2,\)"):
        clnp.stack([x, x[:2]])
    with pytest.raises(ValueError, match="at least one"):
        clnp.stack([])
    with pytest.raises(IndexError, match="axis"):
        clnp.stack([x, x], axis=2)


def test_unstack(device):
    a = A.copy()
    x = base(device, a)
    for axis in (0, 1, -1):
        parts = clnp.unstack(x, axis=axis)
        assert isinstance(parts, tuple)
        expected = [np.take(a, i, axis=axis) for i in range(a.shape[axis])]
        assert len(parts) == len(expected)
        for g, e in zip(parts, expected):
            same(g, e)
    parts = clnp.unstack(x, axis=1)
    parts[1][...] = -9          # views: writing changes the base
    a[:, 1] = -9
    np.testing.assert_array_equal(np.asarray(x), a)
    assert clnp.unstack(base(device, np.zeros((0, 2)))) == ()
    with pytest.raises(ValueError, match="dimension"):
        clnp.unstack(x[0, 0, 0])
    with pytest.raises(IndexError, match="axis"):
        clnp.unstack(x, axis=3)


# ----------------------------------------------------------------------------- views
@pytest.mark.parametrize("axis", [0, -1, 3, (0, 2), (-1, 0), (1, 2, 3)], ids=repr)
def test_expand_dims(device, axis):
    a = A.copy()
    x = base(device, a)
    v = clnp.expand_dims(x, axis=axis)
    same(v, np.expand_dims(A, axis))
    aliases(v, x, a, lambda t: np.expand_dims(t, axis))


def test_expand_dims_errors(device):
    x = base(device)
    with pytest.raises(IndexError, match="axis 4"):
        clnp.expand_dims(x, axis=4)
    with pytest.raises(IndexError, match="axis -5"):
        clnp.expand_dims(x, axis=-5)
    with pytest.raises(ValueError, match="repeated"):
        clnp.expand_dims(x, axis=(0, 0))
    with pytest.raises(ValueError, match="repeated"):
        clnp.expand_dims(x, axis=(0, -5))


@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2), ()], ids=repr)
def test_flip(device, axis):
    a = A.copy()
    x = base(device, a)
    v = clnp.flip(x, axis=axis)
    same(v, np.flip(A, axis=axis))
    aliases(v[0], x, a, lambda t: np.flip(t, axis=axis)[0])
    same(clnp.flip(base(device, np.zeros((0, 2))), axis=axis if axis != (0, 2) else 0),
         np.zeros((0, 2)))


def test_flip_errors(device):
    with pytest.raises(IndexError, match="axis 3"):
        clnp.flip(base(device), axis=3)


@pytest.mark.parametrize("src, dst", [(0, -1), (-1, 0), ((0, 1), (2, 0)), ((2, 0), (0, 1)),
                                      ((0, 1, 2), (2, 1, 0)), ((), ())], ids=repr)
def test_moveaxis(device, src, dst):
    a = A.copy()
    x = base(device, a)
    v = clnp.moveaxis(x, src, dst)
    same(v, np.moveaxis(A, src, dst))
    aliases(v[..., 1:], x, a, lambda t: np.moveaxis(t, src, dst)[..., 1:])


def test_moveaxis_errors(device):
    x = base(device)
    with pytest.raises(ValueError, match="same number"):
        clnp.moveaxis(x, (0, 1), 2)
    with pytest.raises(IndexError, match="axis 3"):
        clnp.moveaxis(x, 3, 0)
    with pytest.raises(ValueError, match="repeated"):
        clnp.moveaxis(x, (0, 0), (1, 2))


@pytest.mark.parametrize("perm", list(itertools.permutations(range(3))) + [(-1, 0, 1)], ids=repr)
def test_permute_dims(device, perm):
    a = A.copy()
    x = base(device, a)
    v = clnp.permute_dims(x, perm)
    same(v, np.transpose(A, perm))
    aliases(v[:, 1], x, a, lambda t: np.transpose(t, perm)[:, 1])


def test_permute_dims_errors(device):
    x = base(device)
    with pytest.raises(ValueError, match="permutation"):
        clnp.permute_dims(x, (0, 1))
    with pytest.raises(ValueError, match="permutation"):
        clnp.permute_dims(x, (0, 1, 1))
    with pytest.raises(IndexError, match="axis 3"):
        clnp.permute_dims(x, (0, 1, 3))


def test_transposes(device):
    a = A.copy()
    x = base(device, a)
    same(clnp.matrix_transpose(x), np.swapaxes(A, -1, -2))
    same(x.mT, np.swapaxes(A, -1, -2))
    same(x[0].T, A[0].T)
    same(x.transpose(), A.transpose())
    same(x.transpose(1, 0, 2), A.transpose(1, 0, 2))
    aliases(x.mT[1], x, a, lambda t: np.swapaxes(t, -1, -2)[1])
    aliases(x[1].T[::2], x, a, lambda t: t[1].T[::2])
    with pytest.raises(ValueError, match="2 dimensions"):
        clnp.matrix_transpose(x[0, 0])
    same(x.T, a.T)          # NumPy: every axis reversed (a mirrors x)
    with pytest.raises(ValueError):
        x[0, 0].mT


# ----------------------------------------------------------------------------- reshape
@pytest.mark.parametrize("shape", [(24,), (-1,), (4, -1), (2, 3, 4), (1, 24, 1), (3, 2, 2, 2),
                                   (6, -1, 2), 24], ids=repr)
def test_reshape_contiguous_is_view(device, shape):
    a = A.copy()
    x = base(device, a)
    v = clnp.reshape(x, shape, copy=False)
    same(v, A.reshape(shape))
    aliases(v[..., :1], x, a, lambda t: t.reshape(shape)[..., :1])


VIEW_CASES = [((2, 3, 4), (2, 0, 1)), ((6, 4), (1, 0)), ((4, 1, 6), (2, 1, 0)),
              ((2, 2, 6), (0, 2, 1)), ((3, 8), (0, 1))]


@SETTINGS
@given(case=st.sampled_from(VIEW_CASES), rev=st.booleans(), step=st.sampled_from([1, 2]),
       target=st.sampled_from([(-1,), (4, -1), (2, -1), (-1, 2, 3), (3, 1, -1), (1, -1, 1)]))
def test_reshape_views_vs_copies(device, case, rev, step, target):
    """Values always match NumPy; copy=False raises exactly when NumPy cannot make a view."""
    shape, perm = case
    a = np.arange(24, dtype=np.int64).reshape(shape).transpose(perm)
    x = clnp.permute_dims(base(device, np.arange(24, dtype=np.int64).reshape(shape)), perm)
    if rev:
        a, x = a[..., ::-1], x[..., ::-1]
    a, x = a[::step], x[::step]
    try:
        expected = a.reshape(target)
    except ValueError:
        with pytest.raises(ValueError):
            clnp.reshape(x, target)
        return
    same(clnp.reshape(x, target), expected)
    try:
        a.reshape(target, copy=False)
        view_ok = True
    except ValueError:
        view_ok = False
    if view_ok:
        v = clnp.reshape(x, target, copy=False)
        same(v, expected)
    else:
        with pytest.raises(ValueError, match="copy=False"):
            clnp.reshape(x, target, copy=False)


def test_reshape_copy_semantics(device):
    a = A.copy()
    x = base(device, a)
    c = clnp.reshape(x, (6, 4), copy=True)
    c[...] = 0
    np.testing.assert_array_equal(np.asarray(x), A)
    same_shape = clnp.reshape(x, (2, 3, 4), copy=True)
    same_shape[0] = 0
    np.testing.assert_array_equal(np.asarray(x), A)
    t = x.mT                                   # (2, 4, 3), not contiguous
    r = clnp.reshape(t, (8, 3))
    same(r, np.swapaxes(A, -1, -2).reshape(8, 3))
    r[...] = 5                                 # a copy: the base is untouched
    np.testing.assert_array_equal(np.asarray(x), A)
    same(x.reshape(4, 6), A.reshape(4, 6))
    same(x.reshape((4, 6)), A.reshape(4, 6))
    same(x.flatten(), A.flatten())
    same(x.mT.ravel(), np.swapaxes(A, -1, -2).ravel())
    e = clnp.reshape(base(device, np.zeros((0, 3))), (3, 0, 5))
    assert e.shape == (3, 0, 5)


def test_reshape_fortran_and_any_order_as_numpy(device):
    # NumPy's order= is the index order of the reading and the writing (found with a 0-d
    # array, which clnp refused, by the namespace comparison under CLNP_HYPO_SEED=1)
    zero = np.asarray(3.5)
    same(clnp.reshape(base(device, zero), (), order="F"), np.reshape(zero, (), order="F"))
    same(clnp.reshape(base(device, zero), (1, 1), order="A"), np.reshape(zero, (1, 1), order="A"))
    x = base(device)
    for shape in ((4, 6), (24,), (-1, 3), (2, 3, 4), (3, 2, 2, 2)):
        same(clnp.reshape(x, shape, order="F"), np.reshape(A, shape, order="F"))
        same(clnp.reshape(x, shape, order="A"), np.reshape(A, shape, order="A"))
        same(clnp.reshape(x.T, shape, order="A"), np.reshape(A.T, shape, order="A"))
        same(x.T.reshape(shape, order="F"), A.T.reshape(shape, order="F"))
    v = clnp.reshape(x.T, (4, 6), order="F", copy=False)          # a view, as in NumPy
    v[...] = -1
    assert (np.asarray(x) == -1).all()
    with pytest.raises(ValueError, match=r"\(2, 3, 4\).*\(5, 5\).*Fortran"):
        clnp.reshape(x, (5, 5), order="F")
    with pytest.raises(ValueError, match="copy=False"):
        clnp.reshape(x, (4, 6), order="F", copy=False)
    with pytest.raises(ValueError, match="order must be"):
        clnp.reshape(x, (4, 6), order="K")


def test_reshape_errors(device):
    x = base(device)
    with pytest.raises(ValueError, match=r"\(2, 3, 4\).*\(5, 5\)"):
        clnp.reshape(x, (5, 5))
    with pytest.raises(ValueError, match="one unknown"):
        clnp.reshape(x, (-1, -1))
    with pytest.raises(ValueError, match=r"\(2, 3, 4\).*\(5, -1\)"):
        clnp.reshape(x, (5, -1))
    with pytest.raises(ValueError, match="invalid"):
        clnp.reshape(x, (-2, -12))
    with pytest.raises(ValueError):
        clnp.reshape(base(device, np.zeros((0, 3))), (0, -1))
    with pytest.raises(TypeError):
        clnp.reshape(x, (2.0, 12))


# ----------------------------------------------------------------------------- copies
@pytest.mark.parametrize("shift, axis", [(5, None), (-3, None), (1, 0), (-1, 2), ((1, -2), (0, 2)),
                                         (1, (0, 2)), ((1, 2), 1), ((1, 2), None), (0, 1),
                                         (25, None), (3, -1)], ids=repr)
def test_roll(device, shift, axis):
    x = base(device)
    r = clnp.roll(x, shift, axis=axis)
    same(r, np.roll(A, shift, axis=axis))
    r[...] = 0
    np.testing.assert_array_equal(np.asarray(x), A)


def test_roll_errors(device):
    x = base(device)
    with pytest.raises(ValueError, match="same length"):
        clnp.roll(x, (1, 2, 3), axis=(0, 1))
    with pytest.raises(IndexError, match="axis"):
        clnp.roll(x, 1, axis=3)
    with pytest.raises(TypeError, match="shift"):
        clnp.roll(x, 1.5)
    same(clnp.roll(base(device, np.zeros((0, 3))), 2, axis=0), np.zeros((0, 3)))


@pytest.mark.parametrize("repeats, axis", [(2, None), (2, 1), (0, 0), (3, -1),
                                           ([1, 0, 2], 1), ([2], 0), ([2], None),
                                           (np.array(3), 2), ([1, 2, 0, 1], -1)], ids=repr)
def test_repeat(device, repeats, axis):
    x = base(device)
    expected = np.repeat(A, repeats, axis=axis)
    same(clnp.repeat(x, repeats, axis=axis), expected)
    if not isinstance(repeats, int):
        r = clnp.asarray(np.asarray(repeats), device=device)
        same(clnp.repeat(x, r, axis=axis), expected)


def test_repeat_errors(device):
    x = base(device)
    with pytest.raises(ValueError, match="non-negative"):
        clnp.repeat(x, -1)
    with pytest.raises(ValueError, match="non-negative"):
        clnp.repeat(x, clnp.asarray([1, -1, 1], device=device), axis=1)
    with pytest.raises(ValueError, match=r"\(2,\).*3"):
        clnp.repeat(x, clnp.asarray([1, 1], device=device), axis=1)
    with pytest.raises(TypeError, match="integer"):
        clnp.repeat(x, clnp.asarray([1.0], device=device))
    with pytest.raises(IndexError, match="axis"):
        clnp.repeat(x, 2, axis=3)


@pytest.mark.parametrize("axis", [None, 0, 2, -1, (0, 2), (4, 0, 2)], ids=repr)
def test_squeeze(device, axis):
    a = A.reshape(1, 2, 1, 12, 1)
    x = base(device, a)
    same(clnp.squeeze(x, axis=axis), np.squeeze(a, axis=axis))
    b = a.copy()
    xb = base(device, b)
    aliases(clnp.squeeze(xb, axis=axis), xb, b, lambda t: np.squeeze(t, axis=axis))


def test_squeeze_errors(device):
    x = base(device, A.reshape(1, 2, 12))
    with pytest.raises(ValueError, match=r"axis 1 of size 2"):
        clnp.squeeze(x, axis=1)
    with pytest.raises(ValueError, match=r"size 12"):
        clnp.squeeze(x, axis=(0, 2))
    with pytest.raises(IndexError, match="axis 3"):
        clnp.squeeze(x, axis=3)
    same(clnp.squeeze(x, axis=()), A.reshape(1, 2, 12))


@pytest.mark.parametrize("reps", [(2,), (1, 2), (2, 1, 1, 2), (0, 1), (1, 1, 1), 2], ids=repr)
def test_tile(device, reps):
    x = base(device)
    r = clnp.tile(x, reps)
    same(r, np.tile(A, reps))
    same(clnp.tile(base(device, np.arange(3.0)), reps), np.tile(np.arange(3.0), reps))


def test_tile_errors(device):
    with pytest.raises(ValueError, match="non-negative"):
        clnp.tile(base(device), (-1,))
