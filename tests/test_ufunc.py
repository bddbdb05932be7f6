"""Ufunc objects (issue #12, item 2): attributes and every method against NumPy, on every
device, and their composition with clnp_grad."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import clnp
import clnp_grad as cg
from clnp._kernels import op_table as _ops

# table ops NumPy also has as ufuncs (real/imag are functions in NumPy)
NUMPY_UFUNCS = [r for r in _ops.OPS.values()
                if r.nin < 3 and r.name != "copy" and isinstance(r.ref, np.ufunc)
                and hasattr(clnp, r.name)]


def up(a, device):
    return clnp.asarray(a, device=device)


def close(got, expected, rtol=1e-5, atol=1e-6):
    assert isinstance(got, clnp.ndarray), type(got)
    e = np.asarray(expected)
    g = got.to_numpy()
    assert g.shape == e.shape, (g.shape, e.shape)
    assert g.dtype == e.dtype, (g.dtype, e.dtype)
    if e.dtype.kind in "biu":
        np.testing.assert_array_equal(g, e)
    else:
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, equal_nan=True)


def _dtypes(device, *names):
    return [np.dtype(n) for n in names if device.supports(np.dtype(n))]


# ------------------------------------------------------------------------------ attributes
@pytest.mark.parametrize("rec", NUMPY_UFUNCS, ids=lambda r: r.name)
def test_attributes_match_numpy(rec):
    u, ref = getattr(clnp, rec.name), rec.ref
    assert isinstance(u, clnp.ufunc)
    assert (u.nin, u.nout, u.nargs, u.__name__) == (ref.nin, ref.nout, ref.nargs, ref.__name__)
    assert u.identity == ref.identity or (u.identity is None and ref.identity is None)
    assert repr(u) == repr(ref)
    # clnp's loops are a subset of NumPy's (same spelling)
    assert u.ntypes == len(u.types) > 0
    assert set(u.types) <= set(ref.types), set(u.types) - set(ref.types)
    assert u.__doc__ and "Parameters" in u.__doc__ and "Examples" in u.__doc__


def test_numpy_names_are_the_same_objects():
    assert clnp.absolute is clnp.abs and clnp.power is clnp.pow
    assert clnp.arctan2 is clnp.atan2 and clnp.invert is clnp.bitwise_invert
    assert clnp.add.__name__ == "add" and clnp.pow.__name__ == "power"


# ------------------------------------------------------------------------------ __call__
def test_call_keywords(device, rng):
    a = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    A, B = up(a, device), up(b, device)
    o = clnp.zeros((3, 4), dtype=clnp.float32, device=device)
    r = clnp.add(A, B, out=o)
    assert r is o
    close(o, a + b)
    # out= aliasing an input, positional out, tuple out
    clnp.multiply(A, 2, A)
    close(A, a * 2)
    clnp.subtract(A, B, out=(A,))
    close(A, a * 2 - b)
    # where= keeps out's values where false
    m = a > 0
    o2 = up(np.full((3, 4), 7, np.float32), device)
    clnp.sqrt(up(np.abs(a), device), out=o2, where=up(m, device))
    e = np.full((3, 4), 7, np.float32)
    np.sqrt(np.abs(a), out=e, where=m)
    close(o2, e)
    # dtype= is the computation dtype
    i = up(np.arange(6, dtype=np.int32), device)
    close(clnp.add(i, i, dtype=np.float32), np.add(np.arange(6, dtype=np.int32),
                                                   np.arange(6, dtype=np.int32),
                                                   dtype=np.float32))


def test_call_casting_errors(device):
    i = clnp.arange(3, dtype=clnp.int32, device=device)
    with pytest.raises(TypeError, match="Cannot cast ufunc 'add' output from .*float.* to "
                                        ".*int32.* with casting rule 'same_kind'"):
        clnp.add(i, 1.5, out=i)
    np.testing.assert_array_equal(i.to_numpy(), [0, 1, 2])     # nothing written
    m = clnp.asarray(np.asarray([True, False, True]), device=device)
    with pytest.raises(TypeError, match="Cannot cast ufunc 'add' output"):
        clnp.add(i, 1.5, out=i, where=m)
    clnp.add(i, 1.5, out=i, casting="unsafe")
    np.testing.assert_array_equal(i.to_numpy(), [1, 2, 3])
    f = clnp.ones((2, 2), dtype=clnp.float32, device=device)
    with pytest.raises(ValueError, match="order='F'"):
        clnp.exp(f, order="F")
    with pytest.raises(ValueError, match="casting must be one of"):
        clnp.add(f, f, casting="bogus", out=f)
    with pytest.raises(TypeError, match=r"add\(\) takes 2 positional arguments but 4"):
        clnp.add(f, f, f, f)
    with pytest.raises(ValueError, match="non-broadcastable output"):
        clnp.add(f, f, out=clnp.zeros((3,), dtype=clnp.float32, device=device))


def test_python_scalars_and_lists():
    np.testing.assert_allclose(float(clnp.sqrt(2)), np.sqrt(2), rtol=1e-6)
    r = clnp.maximum([1, 2, -3], 0)
    assert r.dtype == np.maximum([1, 2, -3], 0).dtype
    np.testing.assert_array_equal(r.to_numpy(), [1, 2, 0])
    np.testing.assert_array_equal(clnp.add((1, 2), [3, 4]).to_numpy(), [4, 6])


# ------------------------------------------------------------------------------ reduce
# one dtype per op (each fold is its own kernel: CI compiles every one), every kind covered
REDUCE_CASES = [("add", "int32"), ("add", "float32"), ("multiply", "uint8"),
                ("maximum", "float32"), ("minimum", "int32"), ("subtract", "float32"),
                ("subtract", "int32"), ("divide", "float64"), ("hypot", "float32"),
                ("logaddexp", "float64"), ("power", "float32"), ("bitwise_or", "uint8"),
                ("bitwise_xor", "int32"), ("bitwise_and", "bool"), ("logical_xor", "bool"),
                ("logical_and", "bool"), ("logical_or", "bool"), ("floor_divide", "int32"),
                ("equal", "bool")]


def _operand(name, dtype, shape, rng):
    if dtype.kind == "b":
        return rng.random(shape) > 0.5
    if dtype.kind in "iu":
        lo = 1 if name in ("floor_divide", "power") else -9 if dtype.kind == "i" else 0
        return rng.integers(lo, 3 if name in ("power", "multiply") else 10, shape).astype(dtype)
    if name in ("power",):
        return rng.uniform(0.5, 1.5, shape).astype(dtype)
    if name in ("divide", "floor_divide"):
        return (rng.uniform(0.5, 2.0, shape) * rng.choice([-1, 1], shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


_LAYOUT_CASES = {("add", np.dtype("float32")), ("subtract", np.dtype("float32")),
                 ("maximum", np.dtype("float32")), ("bitwise_xor", np.dtype("int32")),
                 ("hypot", np.dtype("float32")), ("logical_xor", np.dtype("bool"))}


def _reduce_cases(device):
    return [(n, np.dtype(d)) for n, d in REDUCE_CASES if device.supports(np.dtype(d))]


@pytest.mark.parametrize("shape,axis", [((7,), 0), ((3, 5), 1), ((3, 5), 0), ((2, 3, 4), None),
                                        ((2, 3, 4), (0, 2))])
def test_reduce_matches_numpy(device, rng, shape, axis):
    cases = _reduce_cases(device)
    if len(shape) > 1:      # layouts: a few ops (the 1-d shape has every op)
        cases = [c for c in cases if c in _LAYOUT_CASES]
    for name, d in cases:
        u, ref = getattr(clnp, name), getattr(np, name)
        multi = axis is None or isinstance(axis, tuple)
        a = _operand(name, d, shape, rng)
        if multi and name in ("subtract", "divide", "power", "floor_divide", "equal"):
            with pytest.raises(ValueError, match="not reorderable"):
                u.reduce(up(a, device), axis=axis)
            continue
        tol = 1e-3 if d == np.float32 else 1e-9
        e = ref.reduce(a, axis=axis)
        if name == "power":
            # NumPy 2.4's power.reduce of floats computes a[0] ** a[-1] (a NumPy bug);
            # its accumulate folds left to right, as reduce is documented to
            e = np.take(ref.accumulate(a, axis=axis), -1, axis=axis)
        close(u.reduce(up(a, device), axis=axis), e, rtol=tol, atol=tol)


def test_reduce_keywords(device, rng):
    a = rng.standard_normal((4, 6)).astype(np.float32)
    A = up(a, device)
    m = a > -0.3
    M = up(m, device)
    for name in ("add", "maximum", "subtract", "hypot", "multiply"):
        u, ref = getattr(clnp, name), getattr(np, name)
        close(u.reduce(A, axis=1, keepdims=True), ref.reduce(a, axis=1, keepdims=True))
        close(u.reduce(A, axis=0, initial=0.5), ref.reduce(a, axis=0, initial=0.5))
        close(u.reduce(A, axis=1, initial=1.0, where=M),
              ref.reduce(a, axis=1, initial=1.0, where=m))
    close(clnp.add.reduce(A, axis=1, where=M), np.add.reduce(a, axis=1, where=m))
    close(clnp.add.reduce(up(np.arange(5, dtype=np.int8), device)),
          np.add.reduce(np.arange(5, dtype=np.int8)))                # widens to int64
    close(clnp.add.reduce(A, axis=0, dtype=np.float32), np.add.reduce(a, axis=0,
                                                                       dtype=np.float32))
    o = clnp.zeros((6,), dtype=clnp.float32, device=device)
    assert clnp.subtract.reduce(A, out=o) is o
    close(o, np.subtract.reduce(a))
    # empty reductions: identity, initial, or NumPy's error
    e = np.zeros((0, 3), np.float32)
    close(clnp.add.reduce(up(e, device)), np.add.reduce(e))
    close(clnp.subtract.reduce(up(e, device), initial=2.0), np.subtract.reduce(e, initial=2.0))
    close(clnp.maximum.reduce(up(e, device), initial=-1.0), np.maximum.reduce(e, initial=-1.0))
    with pytest.raises(ValueError, match="zero-size array to reduction operation maximum"):
        clnp.maximum.reduce(up(e, device))
    with pytest.raises(ValueError, match="does not have an identity"):
        clnp.subtract.reduce(A, where=M)


def test_method_errors(device):
    x = clnp.ones((3,), dtype=clnp.float32, device=device)
    with pytest.raises(ValueError, match="reduce only supported for binary functions"):
        clnp.sqrt.reduce(x)
    with pytest.raises(ValueError, match="accumulate only supported for binary functions"):
        clnp.negative.accumulate(x)
    with pytest.raises(TypeError, match="less.reduce"):
        clnp.less.reduce(clnp.ones((3,), dtype=clnp.int32, device=device))
    with pytest.raises(TypeError, match="cannot accumulate on a scalar"):
        clnp.add.accumulate(clnp.asarray(1.0, device=device))
    with pytest.raises(IndexError, match="out-of-bounds"):
        clnp.add.reduceat(x, [0, 3])


# ------------------------------------------------------------------------------ accumulate
@pytest.mark.parametrize("shape,axis", [((9,), 0), ((3, 5), 1), ((4, 3), 0)])
def test_accumulate_matches_numpy(device, rng, shape, axis):
    for name, dn in (("add", "float32"), ("add", "int32"), ("multiply", "float64"),
                     ("maximum", "float32"), ("minimum", "int32"), ("subtract", "float32"),
                     ("divide", "float64"), ("logaddexp", "float32"), ("bitwise_xor", "int32"),
                     ("logical_or", "bool")):
        for d in _dtypes(device, dn):
            a = _operand(name, d, shape, rng)
            tol = 1e-4 if d == np.float32 else 1e-9
            close(getattr(clnp, name).accumulate(up(a, device), axis=axis),
                  getattr(np, name).accumulate(a, axis=axis), rtol=tol, atol=tol)
    a = rng.integers(0, 5, shape).astype(np.int16)
    close(clnp.add.accumulate(up(a, device), axis=axis), np.add.accumulate(a, axis=axis))


# ------------------------------------------------------------------------------ reduceat
@pytest.mark.parametrize("indices", [[0, 4, 1, 5], [2, 2, 7], [0], [6, 3, 0]])
def test_reduceat_matches_numpy(device, rng, indices):
    a = rng.standard_normal((3, 8)).astype(np.float32)
    ai = rng.integers(-5, 5, (8, 2)).astype(np.int32)
    for name in ("add", "multiply", "maximum", "subtract"):
        u, ref = getattr(clnp, name), getattr(np, name)
        close(u.reduceat(up(a, device), indices, axis=1), ref.reduceat(a, indices, axis=1),
              rtol=1e-5)
        close(u.reduceat(up(ai, device), indices), ref.reduceat(ai, indices))
    close(clnp.add.reduceat(up(ai, device), up(np.asarray(indices), device)),
          np.add.reduceat(ai, indices))


# ------------------------------------------------------------------------------ outer
def test_outer_matches_numpy(device, rng):
    a = rng.standard_normal((2, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    for name in ("multiply", "subtract", "greater", "maximum", "atan2"):
        close(getattr(clnp, name).outer(up(a, device), up(b, device)),
              getattr(np, name).outer(a, b))
    close(clnp.add.outer([1, 2], [10, 20, 30]), np.add.outer([1, 2], [10, 20, 30]))


# ------------------------------------------------------------------------------ at
AT_CASES = [
    ("add", "float32", [0, 1, 1, 4, 1, 0], 1.5),
    ("add", "int32", [3, 3, 3, 0], [1, 2, 3, 4]),
    ("subtract", "float32", [2, 2, 5], [1.0, 2.0, 0.5]),
    ("multiply", "float32", [1, 1, 1, 6], 2.0),
    ("maximum", "int32", [0, 0, 2], [5, -1, 7]),
    ("minimum", "float32", [4, 4], [-3.0, -2.0]),
    ("divide", "float32", [1, 1, 3], [2.0, 4.0, 8.0]),
    ("power", "float32", [2, 2], [2.0, 3.0]),
    ("bitwise_or", "uint8", [1, 1, 5], [1, 2, 4]),
]


@pytest.mark.parametrize("name,dtype,idx,b", AT_CASES, ids=lambda v: str(v))
def test_at_with_duplicate_indices(device, name, dtype, idx, b):
    a = (np.arange(8) + 1).astype(dtype)
    e = a.copy()
    getattr(np, name).at(e, idx, np.asarray(b, dtype=dtype) if isinstance(b, list) else b)
    A = up(a, device)
    B = np.asarray(b, dtype=dtype) if isinstance(b, list) else b
    assert getattr(clnp, name).at(A, idx, B) is None
    close(A, e)


def test_at_forms(device):
    # unary ops apply once per occurrence
    a = np.arange(6, dtype=np.float32)
    e = a.copy()
    np.negative.at(e, [0, 0, 1, 2, 2, 2])
    A = up(a, device)
    clnp.negative.at(A, [0, 0, 1, 2, 2, 2])
    close(A, e)
    # 2-d with a tuple of index arrays, a slice, and a strided view
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    e, A = a.copy(), up(a, device)
    np.add.at(e, ([0, 0, 2], [1, 1, 3]), [1.0, 2.0, 3.0])
    clnp.add.at(A, ([0, 0, 2], [1, 1, 3]), up(np.asarray([1.0, 2.0, 3.0], np.float32), device))
    close(A, e)
    np.maximum.at(e, (slice(None), 1), 5.0)
    clnp.maximum.at(A, (slice(None), 1), 5.0)
    close(A, e)
    v, ev = A[:, ::2], e[:, ::2]
    np.multiply.at(ev, ([1, 1], [0, 0]), 3.0)
    clnp.multiply.at(v, ([1, 1], [0, 0]), 3.0)
    close(A, e)
    # NumPy's at casts its results to a's dtype unsafely (no same_kind check)
    e, A = np.zeros(3, np.int32), clnp.zeros((3,), dtype=clnp.int32, device=device)
    np.add.at(e, [0, 0], 1.5)
    clnp.add.at(A, [0, 0], 1.5)
    np.testing.assert_array_equal(A.to_numpy(), e)
    e, A = np.array([1, 2], np.int32), up(np.array([1, 2], np.int32), device)
    np.sin.at(e, [0])
    clnp.sin.at(A, [0])
    np.testing.assert_array_equal(A.to_numpy(), e)
    with pytest.raises(TypeError, match="imaginary"):
        clnp.add.at(clnp.zeros((3,), dtype=clnp.float32, device=device), [0], 1j)
    with pytest.raises(ValueError, match="second operand needed"):
        clnp.add.at(A, [0])
    with pytest.raises(IndexError):
        clnp.add.at(clnp.zeros((3,), dtype=clnp.float32, device=device), [5], 1.0)


# ------------------------------------------------------------------------------ transforms
def test_ufuncs_under_grad_and_vmap(device, rng):
    a = rng.uniform(0.5, 1.5, (3, 4)).astype(np.float32)
    A = up(a, device)
    # the call binds the same primitives as before
    g = cg.grad(lambda x: clnp.sum(clnp.multiply(x, x)))(A)
    close(g, 2 * a, rtol=1e-5)
    # reductions with a primitive (add -> sum) and composed folds (subtract, logaddexp)
    g = cg.grad(lambda x: clnp.add.reduce(x, axis=None))(A)
    close(g, np.ones_like(a))
    g = cg.grad(lambda x: clnp.sum(clnp.subtract.reduce(x, axis=1)))(A)
    e = -np.ones_like(a)
    e[:, 0] = 1
    close(g, e)
    g = cg.grad(lambda x: clnp.sum(clnp.logaddexp.accumulate(x, axis=0)))(A)
    ex = np.exp(a)
    cs = np.cumsum(ex, axis=0)
    close(g, ex * np.cumsum((1 / cs)[::-1], axis=0)[::-1], rtol=1e-4)
    # batching: each row folded independently
    r = cg.vmap(lambda x: clnp.maximum.accumulate(x))(A)
    close(r, np.maximum.accumulate(a, axis=1))
    r = cg.vmap(lambda x: clnp.subtract.outer(x, x))(A)
    close(r, a[:, :, None] - a[:, None, :])
    with pytest.raises(TypeError, match="in place"):
        cg.grad(lambda x: (clnp.add.at(x, [0], 1.0), clnp.sum(x))[1])(A)


# ------------------------------------------------------------------------------ composites
@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")   # NumPy's fmod of NaN
def test_composite_ufuncs_match_numpy(device, rng):
    """NumPy's ufuncs that clnp composes from table ops (fmax, fmod, rint, ...) are ufunc
    objects too; their methods compose calls."""
    from clnp._array_api.ufunc import COMPOSITES
    for name in COMPOSITES:
        u, ref = getattr(clnp, name), getattr(np, name)
        assert isinstance(u, clnp.ufunc), name
        assert (u.nin, u.nout, u.__name__, u.identity) == (ref.nin, ref.nout, ref.__name__,
                                                           ref.identity), name
    a = rng.standard_normal((3, 5)).astype(np.float32)
    a[1, 2] = np.nan
    A = up(a, device)
    for name in ("fmax", "fmin", "logaddexp2"):
        close(getattr(clnp, name).reduce(A, axis=1), getattr(np, name).reduce(a, axis=1),
              rtol=1e-5)
    close(clnp.fmax.reduce(A, axis=None), np.fmax.reduce(a, axis=None))
    close(clnp.fmod.reduce(A, axis=0), np.fmod.reduce(a, axis=0), rtol=1e-5)
    close(clnp.fmin.accumulate(A, axis=1), np.fmin.accumulate(a, axis=1))
    close(clnp.fmax.reduceat(A, [0, 3, 1], axis=1), np.fmax.reduceat(a, [0, 3, 1], axis=1))
    close(clnp.heaviside.outer(A[0], A[1]), np.heaviside.outer(a[0], a[1]))
    h = np.zeros(4, np.float32)
    D = up(h, device)
    np.fmax.at(h, [0, 0, 3], np.asarray([2.0, np.nan, -1.0], np.float32))
    clnp.fmax.at(D, [0, 0, 3], up(np.asarray([2.0, np.nan, -1.0], np.float32), device))
    close(D, h)
    h = np.asarray([0.4, 1.6, -2.5], np.float32)
    D = up(h, device)
    np.degrees.at(h, [1, 1])
    clnp.degrees.at(D, [1, 1])
    close(D, h, rtol=1e-5)
    # a strided view: the update lands in the base array
    g = np.arange(12, dtype=np.float32).reshape(3, 4)
    G = up(g, device)
    np.fmin.at(g[:, ::2], ([0, 0, 2], [1, 1, 0]), np.asarray([5.0, 2.0, 1.0], np.float32))
    clnp.fmin.at(G[:, ::2], ([0, 0, 2], [1, 1, 0]), np.asarray([5.0, 2.0, 1.0], np.float32))
    close(G, g)


def test_long_rows_take_the_parallel_scan(device, rng):
    # reorderable ops scan with the cumsum kernels generalised to their template; reductions
    # of a few long rows take the scan's last element (long enough to split rows in chunks)
    a = rng.standard_normal((2, 9000)).astype(np.float32)
    a[1, 123] = np.nan
    A = up(a, device)
    with np.errstate(invalid="ignore"):
        close(clnp.maximum.accumulate(A, axis=1), np.maximum.accumulate(a, axis=1))
        close(clnp.maximum.reduce(A, axis=1), np.maximum.reduce(a, axis=1))
        close(clnp.logaddexp.reduce(A, axis=1), np.logaddexp.reduce(a, axis=1), rtol=1e-4)
    b = rng.integers(0, 1 << 20, 9000).astype(np.int64)
    close(clnp.bitwise_or.reduce(up(b, device)), np.bitwise_or.reduce(b))
    close(clnp.bitwise_xor.accumulate(up(b, device)), np.bitwise_xor.accumulate(b))
    m = rng.random(9000) > 0.5
    close(clnp.logical_xor.reduce(up(m, device)), np.logical_xor.reduce(m))


# ------------------------------------------------------- methods on __call__'s extended loops
# (issue #12: the methods ran the op table's loops, not NumPy's bool loops, logical casts and
# complex order that the call has)
def _at_both(name, a, idx, *b, device):
    got = up(a, device)
    getattr(clnp, name).at(got, idx, *b)
    want = a.copy()
    with warnings.catch_warnings():     # NumPy warns of a complex b into a real a even
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)     # with no index
        getattr(np, name).at(want, idx, *b)
    close(got, want)


@pytest.mark.parametrize("name", ["greater", "greater_equal", "less", "less_equal",
                                  "maximum", "minimum", "add", "multiply"])
def test_methods_on_bool_operands(device, name):
    x = np.asarray([[True, False, True, True], [False, False, True, False]])
    ref, op = getattr(np, name), getattr(clnp, name)
    X = up(x, device)
    close(op.reduceat(X, [0, 2, 1, 3], axis=1), ref.reduceat(x, [0, 2, 1, 3], axis=1))
    close(op.accumulate(X, axis=1), ref.accumulate(x, axis=1))
    close(op.reduce(X, axis=1), ref.reduce(x, axis=1))
    _at_both(name, x[0], [0, 1, 1, 3, 0], np.asarray([True, False, True, True, False]),
             device=device)
    _at_both(name, x[1], [2, 2, 0], True, device=device)


@pytest.mark.parametrize("name", ["greater", "greater_equal", "less", "less_equal"])
def test_comparison_at_with_complex_b(device, name):
    dt = _dtypes(device, "float32", "float64")[-1]
    a = np.asarray([0.5, 2.0, -1.0, 1.0], dt)
    _at_both(name, a, [0, 1, 1, 2, 3], 1 + 1j, device=device)
    b = np.asarray([1 - 1j, 2 + 0j, 0.5j, -1 + 0j], np.complex64)
    _at_both(name, a, [3, 2, 1, 0], b, device=device)


@pytest.mark.parametrize("name", ["logical_and", "logical_or", "logical_xor", "logical_not"])
def test_logical_at_on_non_bool(device, name):
    for a in (np.asarray([0.5, 0.0, -2.0, 3.0], np.float32), np.asarray([3, 0, -1, 2], np.int32)):
        b = () if name == "logical_not" else (np.asarray([0, 2, 0, 1, 5], a.dtype),)
        _at_both(name, a, [0, 1, 1, 2, 0], *b, device=device)
        if b:
            _at_both(name, a, [3, 3], 0.0, device=device)


@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_maximum_minimum_methods_on_complex(device, rng, name):
    # NumPy's lexicographic complex order (real, then imaginary parts; the first NaN wins)
    z = (rng.integers(-2, 3, (5, 6)) + 1j * rng.integers(-2, 3, (5, 6))).astype(np.complex64)
    z[1, 2] = complex(np.nan, 1.0)
    ref, op = getattr(np, name), getattr(clnp, name)
    Z = up(z, device)
    for axis in (0, 1, None):
        close(op.reduce(Z, axis=axis), ref.reduce(z, axis=axis))
    close(op.reduce(Z, axis=1, initial=1 + 1j, where=up(z.real > 0, device)),
          ref.reduce(z, axis=1, initial=1 + 1j, where=z.real > 0))
    for axis in (0, 1):
        close(op.accumulate(Z, axis=axis), ref.accumulate(z, axis=axis))
    # longer rows (log2(n) doubling/pairwise steps; the first NaN along the row wins)
    w = (rng.integers(-9, 10, (2, 37)) + 1j * rng.integers(-2, 3, (2, 37))).astype(np.complex64)
    w[0, 20], w[0, 30], w[1, 9] = complex(np.nan, 2.0), complex(1.0, np.nan), complex(np.nan, 0)
    w[1, 25] = complex(3.0, np.nan)
    W = up(w, device)
    for got, want in [(op.accumulate(W, axis=1), ref.accumulate(w, axis=1)),
                      (op.reduce(W, axis=1), ref.reduce(w, axis=1)),
                      (op.reduce(W, axis=None), ref.reduce(w, axis=None)),
                      (op.reduceat(W, [2, 1, 5], axis=1), ref.reduceat(w, [2, 1, 5], axis=1))]:
        got = got.to_numpy()
        np.testing.assert_array_equal(np.isnan(got.real), np.isnan(want.real))
        np.testing.assert_array_equal(np.isnan(got.imag), np.isnan(want.imag))
        np.testing.assert_array_equal(np.nan_to_num(got), np.nan_to_num(want))
    close(op.reduceat(Z, [0, 3, 1, 5], axis=1), ref.reduceat(z, [0, 3, 1, 5], axis=1))
    none = np.zeros(0, np.intp)
    close(op.reduceat(Z, none, axis=1), ref.reduceat(z, none, axis=1))
    _at_both(name, z, [0, 2, 0, 4], z[:4] * 1j, device=device)
    _at_both(name, z[0], [1, 1, 3], 1 - 1j, device=device)
    # complex results into a real a: refused where some would be written (NumPy drops the
    # imaginary parts), a no-op like NumPy's where none are
    f = z.real.copy()
    _at_both(name, f[0], np.zeros(0, np.intp), 1j, device=device)
    F = up(f, device)
    with pytest.raises(TypeError, match=f"{name}.at: the results are complex"):
        op.at(F, [1], 1j)
    close(F, f)


# ------------------------------------------------------------------------------ two outputs
def test_multi_output_ufuncs_match_numpy(device, rng):
    """divmod, frexp and modf are ufunc objects of two outputs, as NumPy's: their attributes,
    calls with ``out`` (keyword tuple or positional), ``where``, ``divmod.outer``, and the
    methods NumPy refuses raising ValueError with NumPy's reason."""
    for name in ("divmod", "frexp", "modf"):
        u, ref = getattr(clnp, name), getattr(np, name)
        assert isinstance(u, clnp.ufunc), name
        assert (u.nin, u.nout, u.nargs, u.__name__, u.identity, u.signature) == \
            (ref.nin, ref.nout, ref.nargs, ref.__name__, ref.identity, ref.signature), name
        assert set(u.types) <= set(ref.types) and u.types, name
    a = np.array([7, -7, 9, 0, -3], np.int32)
    b = np.array([2, 3, -4], np.int32)
    for got, want in zip(clnp.divmod.outer(up(a, device), up(b, device)), np.divmod.outer(a, b)):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.to_numpy(), want)
    f = rng.standard_normal(6).astype(np.float32) * 10
    g = np.array([0.5, -2.0, 3.0], np.float32)
    for got, want in zip(clnp.divmod.outer(up(f, device), up(g, device)), np.divmod.outer(f, g)):
        close(got, want, rtol=1e-6)
    # outer from lists and with out=: NumPy's shapes and dtypes, written in place
    q = clnp.empty((2, 2), dtype=clnp.int64, device=device)
    r = clnp.empty((2, 2), dtype=clnp.int64, device=device)
    res = clnp.divmod.outer(clnp.asarray([7, -7], dtype=clnp.int64, device=device), [2, 3],
                            out=(q, r))
    assert res[0] is q and res[1] is r
    want = np.divmod.outer(np.array([7, -7]), [2, 3])
    np.testing.assert_array_equal(q.to_numpy(), want[0])
    np.testing.assert_array_equal(r.to_numpy(), want[1])
    # positional outputs, where=
    m = clnp.empty(3, dtype=clnp.float32, device=device)
    e = clnp.zeros(3, dtype=clnp.int32, device=device)
    x = np.array([1.0, 8.0, -0.375], np.float32)
    got = clnp.frexp(up(x, device), m, e, where=up(np.array([True, False, True]), device))
    assert got[0] is m and got[1] is e
    e_want = np.zeros(3, np.int32)
    np.frexp(x, np.empty(3, np.float32), e_want, where=[True, False, True])
    np.testing.assert_array_equal(e.to_numpy(), e_want)
    for name, args, npargs in (("divmod", (up(a, device), up(a, device)), (a, a)),
                               ("frexp", (up(x, device),), (x,)),
                               ("modf", (up(x, device),), (x,))):
        u, ref = getattr(clnp, name), getattr(np, name)
        for meth, extra in (("reduce", ()), ("accumulate", ()), ("reduceat", ([0],)),
                            ("at", ([0],) + ((1,) if ref.nin == 2 else ()))):
            with pytest.raises(ValueError) as want_e:
                getattr(ref, meth)(npargs[0].copy(), *extra)
            with pytest.raises(ValueError) as got_e:
                getattr(u, meth)(args[0], *extra)
            assert str(want_e.value).split(" (")[0] in str(got_e.value), (name, meth)
        if ref.nin == 1:
            with pytest.raises(ValueError, match="binary"):
                u.outer(args[0], args[0])
    with pytest.raises(TypeError, match="out must be a tuple of 2"):
        clnp.divmod(up(a, device), 2, out=q)


@pytest.mark.parametrize("name", ["fmax", "fmin"])
def test_fmax_fmin_bool_operands_match_numpy(device, name):
    """``fmax``/``fmin`` with bool scalars and arrays (NumPy promotes a bool array against a
    float scalar to float; before, clnp's NaN test refused the bool operand)."""
    u, ref = getattr(clnp, name), getattr(np, name)
    fl = np.float64 if device.has_fp64 else np.float32
    arrays = [np.array([1.0, np.nan, -2.0], fl), np.array([True, False, True]),
              np.array([1, -2, 0], np.int8), np.array([0.5, np.nan, -1.0], np.float32)]
    scalars = [True, False, np.True_, 2.5, np.float32(0.5), np.nan, 1]
    for a in arrays:
        for b in scalars + arrays:
            for args in ((a, b), (b, a)):
                want = ref(*args)
                if want.dtype == np.float64 and not device.has_fp64:
                    continue
                got = u(*[up(x, device) if isinstance(x, np.ndarray) else x for x in args])
                assert got.dtype == want.dtype, (args, got.dtype, want.dtype)
                np.testing.assert_array_equal(got.to_numpy(), want)
    h = np.array([True, False, False])
    x = up(h, device)
    close(u.outer(x, up(np.array([0.5, np.nan], np.float32), device)),
          ref.outer(h, np.array([0.5, np.nan], np.float32)))


# ------------------------------------------- found by the namespace comparison under other seeds

def _binary_numpy_ufuncs():
    return sorted(n for n in dir(np) if isinstance(getattr(np, n), np.ufunc)
                  and getattr(np, n).nin == 2 and getattr(np, n).nout == 1
                  and isinstance(getattr(clnp, n, None), clnp.ufunc)
                  and n not in ("matmul", "vecdot", "matvec", "vecmat"))


def _numpy_reorderable(name):
    """NumPy's own answer: does ``reduce`` over two axes of a 2-d operand refuse it?"""
    for d in ("d", "i", "?"):
        try:
            getattr(np, name).reduce(np.ones((2, 2), d), axis=None)
            return True
        except ValueError as e:
            if "reorderable" in str(e):
                return False
        except TypeError:
            continue
    return None


@pytest.mark.parametrize("name", _binary_numpy_ufuncs())
def test_reduce_of_several_axes_refused_where_numpy_does(device, name):
    # lcm was reorderable in clnp; NumPy gives it no identity and refuses axis=None on 3-d
    reorderable = _numpy_reorderable(name)
    if reorderable is None:
        pytest.skip(f"NumPy reduces {name} over no dtype tried")
    d = next(d for d in ("d", "i", "?") if device.supports(np.dtype(d)) and
             _try(lambda: getattr(np, name).reduce(np.ones(3, d))))
    a = np.ones((2, 2, 2), d)
    if reorderable:
        close(getattr(clnp, name).reduce(up(a, device), axis=None),
              getattr(np, name).reduce(a, axis=None))
    else:
        for axis in (None, (0, 2)):
            with pytest.raises(ValueError,
                               match=f"'{getattr(np, name).__name__}' is not reorderable"):
                getattr(clnp, name).reduce(up(a, device), axis=axis)
        if name == "ldexp":    # NumPy reduces floats with ldexp, which it will not call on
            return             # them; clnp refuses both (open in docs/roadmap.md #12)
        close(getattr(clnp, name).reduce(up(a, device), axis=1),     # one axis is fine
              getattr(np, name).reduce(a, axis=1))


def _try(f):
    try:
        f()
        return True
    except (TypeError, ValueError):
        return False


def test_reduce_casts_the_identity_as_numpy(device):
    # bitwise_and's identity -1 is 255 for uint8 (clnp raised OverflowError for a 0-d uint8)
    for name in ("bitwise_and", "bitwise_or", "bitwise_xor", "add", "multiply", "gcd"):
        for d in _dtypes(device, "uint8", "uint32", "uint64", "int8", "int64"):
            u, ref = getattr(clnp, name), getattr(np, name)
            for a, kw in ((np.array(5, d), {}), (np.array(5, d), {"axis": None}),
                          (np.array([6], d), {}), (np.zeros(0, d), {}),
                          (np.zeros((0, 3), d), {"axis": 0})):
                close(u.reduce(up(a, device), **kw), ref.reduce(a, **kw))
            a, m = np.array([[5, 6, 7], [1, 2, 3]], d), np.array([True, False, True])
            close(u.reduce(up(a, device), axis=1, where=up(m, device)),
                  ref.reduce(a, axis=1, where=m))


def test_at_takes_python_scalars_as_numpy_arrays(device):
    # NumPy's at does not promote a Python scalar weakly: nextafter.at of float32 with 0.0
    # steps in float64 (inf stays inf once cast back), add.at of uint8 with 300 wraps
    cases = [("nextafter", "float32", 0.0, [np.inf, 2.0, 3.0]),
             ("nextafter", "float32", 2.0, [1.0, 2.0, 3.0]),
             ("add", "float32", 2.0 ** -30, [1.0, 2.0, 3.0]),
             ("add", "uint8", 300, [1, 2, 3]), ("add", "uint8", -1, [1, 2, 3]),
             ("add", "int32", 1.5, [1, 2, 3]), ("maximum", "uint8", -1, [1, 2, 3]),
             ("multiply", "int8", 200, [1, 2, 3]), ("add", "bool", 1, [1, 0, 0])]
    for name, d, b, values in cases:
        if not device.supports(np.asarray(b).dtype):
            continue
        want = np.array(values, d)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            getattr(np, name).at(want, [0, 0, 2], b)
        got = up(np.array(values, d), device)
        getattr(clnp, name).at(got, [0, 0, 2], b)
        close(got, want, rtol=0, atol=0)
