"""cumulative_sum, cumulative_prod and NumPy's cumsum/cumprod against NumPy on every device."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import clnp


def _check(r, e, dtype=None):
    e = np.asarray(e)
    assert r.shape == e.shape, (r.shape, e.shape)
    assert r.dtype == (e.dtype if dtype is None else dtype), (r.dtype, e.dtype)
    h = r.to_numpy()
    if e.dtype.kind in "fc":
        tol = {2: 2e-3, 4: 1e-5, 8: 1e-12, 16: 1e-12}[e.dtype.itemsize // (2 if e.dtype.kind
                                                                           == "c" else 1)]
        np.testing.assert_allclose(h, e, rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(h, e)


def _values(rng, dtype, shape):
    d = np.dtype(dtype)
    if d.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if d.kind in "iu":
        return rng.integers(0 if d.kind == "u" else -3, 4, shape).astype(d)
    if d.kind == "c":
        return (rng.uniform(0.5, 1.5, shape) + 1j * rng.uniform(-0.5, 0.5, shape)).astype(d)
    return rng.uniform(0.5, 1.5, shape).astype(d)


@pytest.mark.parametrize("dtype", ["bool", "int8", "int16", "int32", "int64", "uint8",
                                   "uint32", "uint64", "float16", "float32", "float64",
                                   "complex64", "complex128"])
def test_cumulative_sum_dtypes(device, rng, dtype):
    if not device.supports(np.dtype(dtype)):
        pytest.skip("dtype not supported on device")
    a = _values(rng, dtype, (23,))
    x = clnp.asarray(a, device=device)
    # the standard widens small integers (and bool) to the default integer, like NumPy
    for ii in (False, True):
        _check(clnp.cumulative_sum(x, include_initial=ii), np.cumulative_sum(a, include_initial=ii))
    _check(clnp.cumsum(x), np.cumsum(a))


@pytest.mark.parametrize("dtype", ["int32", "uint8", "int64", "float32", "float64",
                                   "complex128"])
def test_cumulative_prod_dtypes(device, rng, dtype):
    if not device.supports(np.dtype(dtype)):
        pytest.skip("dtype not supported on device")
    a = _values(rng, dtype, (23,))
    x = clnp.asarray(a, device=device)
    for ii in (False, True):
        _check(clnp.cumulative_prod(x, include_initial=ii),
               np.cumulative_prod(a, include_initial=ii))
    _check(clnp.cumprod(x), np.cumprod(a))


def _fdtype(device):
    return device.default_float


@pytest.mark.parametrize("shape,axis", [((5, 7), 0), ((5, 7), 1), ((5, 7), -1), ((3, 4, 5), 1),
                                        ((3, 4, 5), 0), ((300, 3), 0), ((3, 300), 1),
                                        ((2, 1, 3), 1), ((0, 4), 1), ((4, 0), 1), ((4, 0), 0)])
@pytest.mark.parametrize("include_initial", [False, True])
def test_cumulative_axes(device, rng, shape, axis, include_initial):
    a = _values(rng, _fdtype(device), shape)
    x = clnp.asarray(a, device=device)
    for f, nf in ((clnp.cumulative_sum, np.cumulative_sum),
                  (clnp.cumulative_prod, np.cumulative_prod)):
        _check(f(x, axis=axis, include_initial=include_initial),
               nf(a, axis=axis, include_initial=include_initial))


@pytest.mark.parametrize("shape,axis", [((10000,), 0), ((3, 5000), 1), ((5000, 3), 0),
                                        ((2, 4100, 2), 1), ((20, 1100), 1)])
def test_cumulative_long_rows(device, rng, shape, axis):
    """Rows longer than a chunk: chunk totals, their scan, and the carried scan."""
    fd = _fdtype(device)
    a = rng.integers(-3, 4, shape).astype(fd)     # exact in floating point
    x = clnp.asarray(a, device=device)
    for ii in (False, True):
        np.testing.assert_array_equal(
            clnp.cumulative_sum(x, axis=axis, include_initial=ii).to_numpy(),
            np.cumulative_sum(a, axis=axis, include_initial=ii))
    p = rng.choice(np.array([1.0, -1.0, 1.0, 1.0], fd), shape)
    np.testing.assert_array_equal(clnp.cumulative_prod(clnp.asarray(p, device=device),
                                                       axis=axis).to_numpy(),
                                  np.cumulative_prod(p, axis=axis))
    b = rng.integers(-1000, 1000, shape).astype(np.int64)
    np.testing.assert_array_equal(
        clnp.cumulative_sum(clnp.asarray(b, device=device), axis=axis).to_numpy(),
        np.cumulative_sum(b, axis=axis))


def test_cumulative_float32_long_accuracy(device, rng):
    a = rng.uniform(0, 1, 20000).astype(np.float32)
    r = clnp.cumulative_sum(clnp.asarray(a, device=device)).to_numpy()
    np.testing.assert_allclose(r, np.cumsum(a.astype(np.float64)), rtol=2e-5)


def test_cumulative_non_contiguous(device, rng):
    a = _values(rng, _fdtype(device), (12, 40))
    x = clnp.asarray(a, device=device)
    for v, b in ((x.T, a.T), (x[::3, ::-2], a[::3, ::-2]), (x[1:, 5:30], a[1:, 5:30])):
        for axis in (0, 1):
            _check(clnp.cumulative_sum(v, axis=axis, include_initial=True),
                   np.cumulative_sum(b, axis=axis, include_initial=True))
            _check(clnp.cumulative_prod(v, axis=axis), np.cumulative_prod(b, axis=axis))
    _check(clnp.cumsum(x[::2, ::3]), np.cumsum(a[::2, ::3]))
    _check(clnp.cumprod(x.T), np.cumprod(a.T))


def test_cumulative_special_values(device):
    fd = _fdtype(device)
    for vals in ([-0.0, -0.0, 0.0, -0.0], [np.inf, 1.0, -np.inf, 2.0], [1.0, np.nan, 2.0]):
        a = np.array(vals, fd)
        x = clnp.asarray(a, device=device)
        with np.errstate(invalid="ignore"):
            es, ep = np.cumulative_sum(a), np.cumulative_prod(a)
        np.testing.assert_array_equal(np.signbit(clnp.cumulative_sum(x).to_numpy()),
                                      np.signbit(es))
        np.testing.assert_array_equal(clnp.cumulative_sum(x).to_numpy(), es)
        np.testing.assert_array_equal(clnp.cumulative_prod(x).to_numpy(), ep)
    # -0.0 survives the chunked path too
    z = np.full(6000, -0.0, fd)
    assert np.signbit(clnp.cumulative_sum(clnp.asarray(z, device=device)).to_numpy()).all()
    # include_initial starts from +0 (the additive identity)
    r = clnp.cumulative_sum(clnp.asarray(np.array([-0.0], fd), device=device),
                            include_initial=True).to_numpy()
    assert not np.signbit(r[0]) and np.signbit(r[1])
    # a lone complex infinity is not multiplied by the identity
    c = np.array([complex(np.inf, 0.0)], device.default_complex)
    np.testing.assert_array_equal(
        clnp.cumulative_prod(clnp.asarray(c, device=device)).to_numpy(), c)


def test_cumulative_dtype_argument_and_overflow(device, rng):
    a = np.array([100, 100, 100], np.int8)
    x = clnp.asarray(a, device=device)
    _check(clnp.cumulative_sum(x, dtype=clnp.int8), np.cumulative_sum(a, dtype=np.int8))
    _check(clnp.cumulative_sum(x, dtype=clnp.float32), np.cumulative_sum(a, dtype=np.float32))
    _check(clnp.cumsum(x, dtype=clnp.int16), np.cumsum(a, dtype=np.int16))
    big = np.array([2 ** 62, 2 ** 62, 2 ** 62], np.int64)     # wraps around, like NumPy
    _check(clnp.cumulative_sum(clnp.asarray(big, device=device)), np.cumulative_sum(big))
    u = np.array([3, 250, 9], np.uint8)
    _check(clnp.cumulative_prod(clnp.asarray(u, device=device)), np.cumulative_prod(u))


def test_cumulative_zero_dim_and_errors(device):
    s = clnp.asarray(3, device=device)
    _check(clnp.cumulative_sum(s), np.cumulative_sum(np.array(3)))
    _check(clnp.cumsum(s), np.cumsum(np.array(3)))
    m = clnp.ones((2, 3), dtype=clnp.float32, device=device)
    with pytest.raises(ValueError, match="axis"):
        clnp.cumulative_sum(m)
    with pytest.raises(ValueError, match="axis"):
        clnp.cumulative_prod(m)
    _check(clnp.cumsum(m), np.cumsum(np.ones((2, 3), np.float32)))
    with pytest.raises(IndexError):
        clnp.cumulative_sum(m, axis=2)
    with pytest.raises(TypeError):
        clnp.cumulative_sum(m, dtype=clnp.bool)
    with pytest.raises(TypeError):
        clnp.cumulative_sum(m, dtype="not a dtype")
    with pytest.raises(TypeError):
        clnp.cumulative_sum(object())      # NumPy arrays and lists are array-likes


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape=st.lists(st.integers(0, 8), min_size=1, max_size=3), data=st.data())
def test_cumulative_hypothesis(device, shape, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16)))
    a = rng.integers(-5, 6, tuple(shape)).astype(np.int64)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    ii = data.draw(st.booleans())
    x = clnp.asarray(a, device=device)
    np.testing.assert_array_equal(
        clnp.cumulative_sum(x, axis=axis, include_initial=ii).to_numpy(),
        np.cumulative_sum(a, axis=axis, include_initial=ii))


@pytest.mark.parametrize("plan", [("column", 3), ("column", 7), ("rows", 3), ("rows", 1)])
def test_cumulative_forced_plans(device, rng, monkeypatch, plan):
    """Every kernel mapping on every device, whichever the planner would pick (GPUs split
    outer-axis scans into chunks that CPUs never need)."""
    from clnp._routines import search as _eager_search
    monkeypatch.setattr(_eager_search, "_scan_plan", lambda *args: plan)
    fd = _fdtype(device)
    for shape, axis in (((5, 40), 1), ((40, 5), 0), ((3, 4, 23), 2), ((2, 100), 1), ((6, 2), 1)):
        a = rng.integers(-3, 4, shape).astype(fd)
        x = clnp.asarray(a, device=device)
        np.testing.assert_array_equal(
            clnp.cumulative_sum(x, axis=axis, include_initial=True).to_numpy(),
            np.cumulative_sum(a, axis=axis, include_initial=True))
        b = rng.choice(np.array([1, -1, 2], np.int64), shape)
        np.testing.assert_array_equal(
            clnp.cumulative_prod(clnp.asarray(b, device=device), axis=axis).to_numpy(),
            np.cumulative_prod(b, axis=axis))
    z = np.full(50, -0.0, fd)
    assert np.signbit(clnp.cumulative_sum(clnp.asarray(z, device=device)).to_numpy()).all()
