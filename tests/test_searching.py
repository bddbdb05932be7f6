"""argmax, argmin, count_nonzero, nonzero, searchsorted against NumPy on every device."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import clnp

INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
REAL_DTYPES = ["bool"] + INT_DTYPES + ["float16", "float32", "float64"]


def _supported(device, names):
    return [n for n in names if device.supports(np.dtype(n))]


def _sample(rng, dtype, shape, nan=False):
    """Values with many ties (small range) and, for floats, NaN/inf/-0.0 when asked."""
    d = np.dtype(dtype)
    if d.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if d.kind in "iu":
        info = np.iinfo(d)
        a = rng.integers(max(info.min, -5), 6, shape).astype(d)
        flat = a.reshape(-1)
        if flat.size > 3:   # the extremes of the dtype, to check the search's starting value
            flat[1], flat[-2] = info.min, info.max
        return a
    if d.kind == "c":
        a = (rng.integers(-3, 4, shape) + 1j * rng.integers(-3, 4, shape)).astype(d)
    else:
        a = rng.integers(-4, 5, shape).astype(d)
    if nan and a.size > 4:
        flat = a.reshape(-1)
        flat[rng.integers(0, flat.size, 2)] = np.nan
        flat[rng.integers(0, flat.size)] = np.inf
        flat[rng.integers(0, flat.size)] = -np.inf
        flat[rng.integers(0, flat.size)] = -0.0
    return a


# ------------------------------------------------------------------------------ argmax/argmin
@pytest.mark.parametrize("dtype", REAL_DTYPES + ["complex64", "complex128"])
def test_argmax_argmin_dtypes(device, rng, dtype):
    if not device.supports(np.dtype(dtype)):
        pytest.skip("dtype not supported on device")
    for nan in (False, True):
        a = _sample(rng, dtype, (37,), nan)
        x = clnp.asarray(a, device=device)
        for f in ("argmax", "argmin"):
            r = getattr(clnp, f)(x)
            assert r.dtype == clnp.int64 and r.shape == ()
            assert int(r) == getattr(np, f)(a), (f, a)


@pytest.mark.parametrize("shape,axis", [((6, 9), 1), ((6, 9), 0), ((6, 9), -1), ((100, 7), 0),
                                        ((3, 4, 5), 1), ((3, 4, 5), None), ((2, 3, 300), 2),
                                        ((300, 3), 0), ((1, 5), 0), ((0, 5), 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_argmax_argmin_axes(device, rng, shape, axis, keepdims):
    for dtype in ("float64", "int32"):
        if not device.supports(np.dtype(dtype)):
            continue
        a = _sample(rng, dtype, shape, nan=True)
        x = clnp.asarray(a, device=device)
        for f in ("argmax", "argmin"):
            r = getattr(clnp, f)(x, axis=axis, keepdims=keepdims)
            e = getattr(np, f)(a, axis=axis, keepdims=keepdims)
            assert r.dtype == clnp.int64 and r.shape == e.shape, (f, r.shape, e.shape)
            np.testing.assert_array_equal(r.to_numpy(), e)


def test_argmax_long_rows_two_stage(device, rng):
    """Rows much longer than a work-group (partial results combined by a second kernel);
    the extreme sits near the end and is repeated, so chunk order matters."""
    for shape, axis in (((10000,), None), ((3, 5000), 1), ((5000, 70), 0), ((64, 4500), 1)):
        a = rng.standard_normal(shape)
        a.reshape(-1)[-7] = 50.0
        a.reshape(-1)[-3] = 50.0
        a.reshape(-1)[-5] = -50.0
        x = clnp.asarray(a, device=device)
        for f in ("argmax", "argmin"):
            np.testing.assert_array_equal(getattr(clnp, f)(x, axis=axis).to_numpy(),
                                          getattr(np, f)(a, axis=axis))
        a[a > 1.5] = np.nan     # the first NaN wins, wherever the chunk boundaries fall
        x = clnp.asarray(a, device=device)
        for f in ("argmax", "argmin"):
            np.testing.assert_array_equal(getattr(clnp, f)(x, axis=axis).to_numpy(),
                                          getattr(np, f)(a, axis=axis))


def test_argmax_ties_and_specials(device):
    cases = [[1.0, 3.0, 3.0, 2.0], [np.nan, 1.0, np.nan], [1.0, np.inf, np.nan, np.inf],
             [-0.0, 0.0, -0.0], [0.0, -0.0], [-np.inf, -np.inf], [2.0, 2.0, 2.0]]
    for c in cases:
        a = np.array(c)
        x = clnp.asarray(a, device=device)
        assert int(clnp.argmax(x)) == np.argmax(a), c
        assert int(clnp.argmin(x)) == np.argmin(a), c
    z = np.array([1 + 1j, 1 + 2j, 1 + np.nan * 1j, 3 + 0j, np.nan + 0j])
    x = clnp.asarray(z, device=device)
    assert int(clnp.argmax(x)) == np.argmax(z) == 2
    assert int(clnp.argmin(x)) == np.argmin(z) == 2


def test_argmax_non_contiguous(device, rng):
    a = rng.standard_normal((20, 30))
    x = clnp.asarray(a, device=device)
    views = [(x.T, a.T), (x[::2, ::-3], a[::2, ::-3]), (x[3:15:4, 1:], a[3:15:4, 1:])]
    for v, b in views:
        for axis in (None, 0, 1):
            np.testing.assert_array_equal(clnp.argmax(v, axis=axis).to_numpy(),
                                          np.argmax(b, axis=axis))
            np.testing.assert_array_equal(clnp.argmin(v, axis=axis).to_numpy(),
                                          np.argmin(b, axis=axis))


def test_argmax_zero_dim_and_errors(device):
    x = clnp.asarray(np.float64(3.5) if device.has_fp64 else np.float32(3.5), device=device)
    assert int(clnp.argmax(x)) == 0 and clnp.argmax(x).shape == ()
    assert clnp.argmin(x, axis=0, keepdims=True).shape == ()
    e = clnp.zeros((0, 3), dtype=clnp.float32, device=device)
    with pytest.raises(ValueError, match="empty"):
        clnp.argmax(e)
    with pytest.raises(ValueError, match="empty"):
        clnp.argmin(e, axis=0)
    assert clnp.argmax(e, axis=1).shape == (0,)
    y = clnp.ones((2, 3), dtype=clnp.float32, device=device)
    with pytest.raises(IndexError):
        clnp.argmax(y, axis=2)
    with pytest.raises(TypeError):
        clnp.argmax(y, axis=(0, 1))
    with pytest.raises(TypeError):
        clnp.argmax(object())


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape=st.lists(st.integers(1, 9), min_size=1, max_size=3), data=st.data())
def test_argmax_hypothesis(device, shape, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16)))
    a = _sample(rng, "float32", tuple(shape), nan=data.draw(st.booleans()))
    axis = data.draw(st.none() | st.integers(-len(shape), len(shape) - 1))
    keepdims = data.draw(st.booleans())
    x = clnp.asarray(a, device=device)
    for f in ("argmax", "argmin"):
        np.testing.assert_array_equal(
            getattr(clnp, f)(x, axis=axis, keepdims=keepdims).to_numpy(),
            getattr(np, f)(a, axis=axis, keepdims=keepdims))


# ------------------------------------------------------------------------------ count_nonzero
@pytest.mark.parametrize("dtype", ["bool", "int8", "uint32", "int64", "float32", "float64",
                                   "complex64"])
def test_count_nonzero(device, rng, dtype):
    if not device.supports(np.dtype(dtype)):
        pytest.skip("dtype not supported on device")
    a = _sample(rng, dtype, (4, 5, 6), nan=True)
    if a.dtype.kind == "c":
        a.reshape(-1)[:3] = [0j, 1j, complex(0, -0.0)]
    x = clnp.asarray(a, device=device)
    for axis in (None, 0, -1, (0, 2), (1,)):
        for keepdims in (False, True):
            r = clnp.count_nonzero(x, axis=axis, keepdims=keepdims)
            e = np.count_nonzero(a, axis=axis, keepdims=keepdims)
            assert r.dtype == clnp.int64
            np.testing.assert_array_equal(r.to_numpy(), e)


def test_count_nonzero_edges(device):
    x = clnp.asarray(np.array([0.0, -0.0, np.nan, 2.0]), device=device) if device.has_fp64 \
        else clnp.asarray(np.array([0.0, -0.0, np.nan, 2.0], np.float32), device=device)
    assert int(clnp.count_nonzero(x)) == 2
    assert int(clnp.count_nonzero(clnp.zeros((0, 4), device=device))) == 0
    np.testing.assert_array_equal(
        clnp.count_nonzero(clnp.ones((3, 0), device=device), axis=1).to_numpy(), [0, 0, 0])
    assert int(clnp.count_nonzero(clnp.asarray(5, device=device))) == 1
    big = np.arange(10000) % 3
    assert int(clnp.count_nonzero(clnp.asarray(big, device=device))) == np.count_nonzero(big)
    with pytest.raises(IndexError):
        clnp.count_nonzero(x, axis=1)
    with pytest.raises(ValueError):
        clnp.count_nonzero(clnp.ones((2, 2), device=device), axis=(0, 0))


# ------------------------------------------------------------------------------ nonzero
@pytest.mark.parametrize("dtype", ["bool", "int32", "float64", "complex128", "uint8"])
def test_nonzero(device, rng, dtype):
    if not device.supports(np.dtype(dtype)):
        pytest.skip("dtype not supported on device")
    for shape in ((17,), (3, 4, 5), (2, 1, 3, 2)):
        a = _sample(rng, dtype, shape, nan=True)
        r = clnp.nonzero(clnp.asarray(a, device=device))
        e = np.nonzero(a)
        assert isinstance(r, tuple) and len(r) == len(e)
        for u, v in zip(r, e):
            assert u.dtype == clnp.int64 and u.ndim == 1
            np.testing.assert_array_equal(u.to_numpy(), v)


def test_nonzero_edges(device, rng):
    cases = [np.zeros(5, np.int32), np.ones((2, 3), np.int32), np.zeros((0, 4), np.int32),
             np.array([0.0, -0.0, np.nan, 1e-300]) if device.has_fp64 else
             np.array([0.0, -0.0, np.nan, 1e-30], np.float32),
             np.array([0j, 1j, -0.0 + 0j], np.complex64)]
    for a in cases:
        r = clnp.nonzero(clnp.asarray(a, device=device))
        for u, v in zip(r, np.nonzero(a), strict=True):
            np.testing.assert_array_equal(u.to_numpy(), v)
    # long input: the count comes from a multi-chunk scan
    a = rng.random((90, 120)) < 0.3
    x = clnp.asarray(a, device=device)
    for u, v in zip(clnp.nonzero(x), np.nonzero(a), strict=True):
        np.testing.assert_array_equal(u.to_numpy(), v)
    # non-contiguous input
    b = rng.integers(0, 3, (6, 8)).astype(np.int32)
    y = clnp.asarray(b, device=device)
    for u, v in zip(clnp.nonzero(y[::2, ::-3].T), np.nonzero(b[::2, ::-3].T), strict=True):
        np.testing.assert_array_equal(u.to_numpy(), v)
    with pytest.raises(ValueError, match="zero-dimensional"):
        clnp.nonzero(clnp.asarray(1, device=device))
    with pytest.raises(TypeError):
        clnp.nonzero(object())


def test_boolean_mask_indexing_uses_nonzero(device, rng):
    a = rng.standard_normal((40, 50)) if device.has_fp64 else \
        rng.standard_normal((40, 50)).astype(np.float32)
    x = clnp.asarray(a, device=device)
    m = x > 0.5
    np.testing.assert_array_equal(x[m].to_numpy(), a[a > 0.5])


# ------------------------------------------------------------------------------ searchsorted
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_floats_with_nan(device, rng, side):
    dtypes = _supported(device, ["float64", "float32", "float16"])
    for d in dtypes:
        x1 = np.sort(np.concatenate([rng.integers(-5, 6, 40).astype(d),
                                     np.array([np.nan, np.nan, np.inf, -np.inf, -0.0], d)]))
        x2 = np.concatenate([rng.integers(-7, 8, 23), [np.nan, np.inf, -np.inf, 0.0,
                                                       -0.0]]).astype(d).reshape(4, 7)
        r = clnp.searchsorted(clnp.asarray(x1, device=device), clnp.asarray(x2, device=device),
                              side=side)
        assert r.dtype == clnp.int64 and r.shape == (4, 7)
        np.testing.assert_array_equal(r.to_numpy(), np.searchsorted(x1, x2, side=side))


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int32", "int64", "uint64", "bool"])
def test_searchsorted_ints(device, rng, dtype):
    x1 = np.sort(_sample(rng, dtype, (31,)))
    x2 = _sample(rng, dtype, (12,))
    for side in ("left", "right"):
        r = clnp.searchsorted(clnp.asarray(x1, device=device), clnp.asarray(x2, device=device),
                              side=side)
        np.testing.assert_array_equal(r.to_numpy(), np.searchsorted(x1, x2, side=side))


def test_searchsorted_sorter_scalars_and_promotion(device, rng):
    fd = device.default_float
    x1 = rng.permutation(np.arange(50)).astype(np.int32) * 2
    sorter = np.argsort(x1)
    x2 = np.array([-1, 0, 3, 4, 98, 99, 200], np.int32)
    X1, S = clnp.asarray(x1, device=device), clnp.asarray(sorter, device=device)
    for side in ("left", "right"):
        r = clnp.searchsorted(X1, clnp.asarray(x2, device=device), side=side, sorter=S)
        np.testing.assert_array_equal(r.to_numpy(), np.searchsorted(x1, x2, side, sorter))
        # int32 sorter, strided sorter
        r = clnp.searchsorted(X1, clnp.asarray(x2, device=device), side=side,
                              sorter=clnp.asarray(sorter.astype(np.int32), device=device))
        np.testing.assert_array_equal(r.to_numpy(), np.searchsorted(x1, x2, side, sorter))
        # Python scalars: a 0-d result; a float against integers promotes
        for v in (7, 8, 7.5, -3.0):
            r = clnp.searchsorted(X1, v, side=side, sorter=S)
            assert r.shape == () and r.dtype == clnp.int64
            assert int(r) == np.searchsorted(x1, v, side, sorter), v
    s1 = np.sort(x1)
    y = clnp.asarray(np.array([5.5, 6.0, 100.25], fd), device=device)
    np.testing.assert_array_equal(
        clnp.searchsorted(clnp.asarray(s1, device=device), y).to_numpy(),
        np.searchsorted(s1, np.array([5.5, 6.0, 100.25], fd)))
    # strided x1 and x2
    big = np.sort(rng.standard_normal(200).astype(fd))
    q = rng.standard_normal((5, 6)).astype(fd)
    r = clnp.searchsorted(clnp.asarray(big, device=device)[::3], clnp.asarray(q, device=device).T)
    np.testing.assert_array_equal(r.to_numpy(), np.searchsorted(big[::3], q.T))


def test_searchsorted_complex(device):
    d = device.default_complex
    x1 = np.sort(np.array([1 + 1j, 1 + 2j, 2 + 0j, np.nan + 0j, 1 + np.nan * 1j], d))
    x2 = np.array([1 + 1.5j, 0j, 3 + 0j, 2 + 0j, np.nan + 0j], d)
    for side in ("left", "right"):
        r = clnp.searchsorted(clnp.asarray(x1, device=device), clnp.asarray(x2, device=device),
                              side=side)
        np.testing.assert_array_equal(r.to_numpy(), np.searchsorted(x1, x2, side=side))


def test_searchsorted_edges_and_errors(device):
    x1 = clnp.asarray(np.array([1, 2, 3], np.int32), device=device)
    empty = clnp.asarray(np.zeros(0, np.int32), device=device)
    np.testing.assert_array_equal(
        clnp.searchsorted(empty, x1).to_numpy(), [0, 0, 0])
    assert clnp.searchsorted(x1, empty).shape == (0,)
    with pytest.raises(ValueError, match="one-dimensional"):
        clnp.searchsorted(clnp.ones((2, 2), device=device), x1)
    with pytest.raises(ValueError, match="side"):
        clnp.searchsorted(x1, x1, side="middle")
    with pytest.raises(TypeError, match="integer"):
        clnp.searchsorted(x1, x1, sorter=clnp.ones(3, dtype=clnp.float32, device=device))
    with pytest.raises(ValueError, match="shape"):
        clnp.searchsorted(x1, x1, sorter=clnp.asarray([0, 1], device=device))
    with pytest.raises(TypeError):
        clnp.searchsorted(x1, "a")


@pytest.mark.parametrize("plan", [("local", "group", 16, 3), ("local", "blocked", 16, 5),
                                  ("column", "blocked", 16, 4)])
def test_argmax_forced_plans(device, rng, monkeypatch, plan):
    """Every kernel mapping on every device, whichever the planner would pick (GPUs use the
    interleaved ``group`` layout that CPUs never do)."""
    from clnp._routines import search as _eager_search
    monkeypatch.setattr(_eager_search, "_arg_plan", lambda *args: plan)
    for shape, axis in (((5, 40), 1), ((40, 5), 0), ((3, 4, 23), None), ((70, 3), 0)):
        a = _sample(rng, "float64" if device.has_fp64 else "float32", shape, nan=True)
        x = clnp.asarray(a, device=device)
        for f in ("argmax", "argmin"):
            np.testing.assert_array_equal(getattr(clnp, f)(x, axis=axis).to_numpy(),
                                          getattr(np, f)(a, axis=axis))
