"""NumPy names beyond the standard (clnp/_numpy/) against NumPy."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import clnp
from npcheck import check


@pytest.fixture
def data(device, rng):
    a = rng.standard_normal((4, 5))
    an = a.copy()
    an[1, 2] = np.nan
    an[3, :] = np.nan
    return a, clnp.asarray(a, device=device), an, clnp.asarray(an, device=device)


def test_dtype_aliases_and_errstate():
    assert clnp.float_ == clnp.double == np.float64 and clnp.single == np.float32
    assert clnp.int_ == clnp.intp == np.int64 and clnp.uint == np.uint64
    assert clnp.cdouble == np.complex128 and clnp.csingle == np.complex64
    assert clnp.half == np.float16
    before = clnp.geterr()
    with clnp.errstate(divide="ignore", invalid="raise"):
        assert clnp.geterr()["divide"] == "ignore" and clnp.geterr()["invalid"] == "raise"
    assert clnp.geterr() == before
    old = clnp.seterr(all="ignore")
    assert old == before and set(clnp.geterr().values()) == {"ignore"}
    clnp.seterr(**old)
    assert clnp.geterr() == before
    with pytest.raises(ValueError):
        clnp.seterr(divide="loud")

    @clnp.errstate(over="ignore")
    def f():
        return clnp.geterr()["over"]
    assert f() == "ignore" and clnp.geterr()["over"] == before["over"]


def test_logspace_geomspace(device):
    check(clnp.logspace(0, 3, 4, device=device), np.logspace(0, 3, 4))
    check(clnp.logspace(0, 1, 5, base=2.0, endpoint=False, device=device),
          np.logspace(0, 1, 5, base=2.0, endpoint=False))
    s = clnp.asarray([0.0, 1.0], device=device)
    check(clnp.logspace(s, 2.0, 3, axis=1), np.logspace([0.0, 1.0], 2.0, 3, axis=1))
    check(clnp.logspace(0, 2, 3, dtype=clnp.float32, device=device),
          np.logspace(0, 2, 3, dtype=np.float32))
    check(clnp.geomspace(1, 1000, 4, device=device), np.geomspace(1, 1000, 4))
    check(clnp.geomspace(-2, -1000, 5, endpoint=False, device=device),
          np.geomspace(-2, -1000, 5, endpoint=False))
    with pytest.raises(ValueError, match="zero"):
        clnp.geomspace(0, 1, 3, device=device)


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric", "wrap"])
def test_pad(data, mode):
    a, A, _, _ = data
    check(clnp.pad(A, ((1, 2), (3, 0)), mode=mode), np.pad(a, ((1, 2), (3, 0)), mode=mode))
    check(clnp.pad(A, 7, mode=mode), np.pad(a, 7, mode=mode))
    check(clnp.pad(A[0], (2,), mode=mode), np.pad(a[0], (2,), mode=mode))


def test_pad_constant_values_and_errors(data, device):
    a, A, _, _ = data
    check(clnp.pad(A, 2, constant_values=(1, 2)), np.pad(a, 2, constant_values=(1, 2)))
    check(clnp.pad(A, ((1, 1), (0, 2)), constant_values=((5, 6), (7, 8))),
          np.pad(a, ((1, 1), (0, 2)), constant_values=((5, 6), (7, 8))))
    i = clnp.arange(4, device=device)
    check(clnp.pad(i, 1, constant_values=2.7), np.pad(np.arange(4), 1, constant_values=2.7))
    assert clnp.pad(A, 1, mode="empty").shape == (6, 7)
    with pytest.raises(ValueError, match="not supported"):
        clnp.pad(A, 1, mode=lambda v, w, i, kw: None)
    with pytest.raises(ValueError, match="stat_length of 0"):
        clnp.pad(A, 1, mode="maximum", stat_length=0)
    with pytest.raises(ValueError, match="negative"):
        clnp.pad(A, -1)
    with pytest.raises(TypeError, match="integral"):
        clnp.pad(A, 1.5)
    with pytest.raises(ValueError, match="unsupported keyword"):
        clnp.pad(A, 1, mode="edge", constant_values=3)
    with pytest.raises(ValueError, match="empty axis"):
        clnp.pad(clnp.zeros((0,), device=device), 1, mode="wrap")


@pytest.mark.parametrize("method", ["linear", "lower", "higher", "nearest", "midpoint"])
def test_quantile_methods(data, device, method):
    a, A, an, AN = data
    check(clnp.quantile(A, [0.1, 0.5, 0.77], axis=1, method=method),
          np.quantile(a, [0.1, 0.5, 0.77], axis=1, method=method))
    check(clnp.percentile(A, 33, method=method), np.percentile(a, 33, method=method))
    i = clnp.arange(7, device=device)
    check(clnp.quantile(i, 0.4, method=method), np.quantile(np.arange(7), 0.4, method=method))
    check(clnp.quantile(AN, 0.3, axis=1, method=method),
          np.quantile(an, 0.3, axis=1, method=method))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(clnp.nanquantile(AN, [0.2, 0.9], axis=1, method=method),
              np.nanquantile(an, [0.2, 0.9], axis=1, method=method))


def test_nanquantile_of_empty_slices(device):
    """NaN for empty slices, with NumPy's shape and dtype, where the NaN-less versions raise
    (found by Hypothesis: clnp raised)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for shape, axis in (((0,), None), ((0, 3), 0), ((2, 0, 3), 1)):
            for d in (np.float32, np.int32):
                a = np.zeros(shape, d)
                x = clnp.asarray(a, device=device)
                for q in (0.5, [0.1, 0.9]):
                    for got, want in ((clnp.nanquantile(x, q, axis=axis),
                                       np.nanquantile(a, q, axis=axis)),
                                      (clnp.nanpercentile(x, np.multiply(q, 100), axis=axis,
                                                          keepdims=True),
                                       np.nanpercentile(a, np.multiply(q, 100), axis=axis,
                                                        keepdims=True))):
                        assert got.dtype == np.asarray(want).dtype
                        np.testing.assert_array_equal(np.asarray(got), want)
    # a 0-d input with keepdims keeps no dims (found by Hypothesis: clnp gave shape (1,))
    for fn in ("quantile", "nanquantile", "percentile", "nanpercentile"):
        got = getattr(clnp, fn)(clnp.asarray(2.0, device=device), [0.0, 1.0], keepdims=True)
        assert got.shape == getattr(np, fn)(np.asarray(2.0), [0.0, 1.0], keepdims=True).shape


def test_quantile_options(data, device):
    a, A, an, AN = data
    check(clnp.percentile(A, [5, 95], axis=0, keepdims=True),
          np.percentile(a, [5, 95], axis=0, keepdims=True))
    check(clnp.quantile(A, 0.25, axis=(0, 1)), np.quantile(a, 0.25, axis=(0, 1)))
    a32 = a.astype(np.float32)
    A32 = clnp.asarray(a32, device=device)
    check(clnp.quantile(A32, 0.3), np.quantile(a32, 0.3), rtol=1e-6)       # weak q: float32
    check(clnp.quantile(A32, [0.3]), np.quantile(a32, [0.3]), rtol=1e-6)   # array q: float64
    check(clnp.quantile(clnp.arange(5, device=device), 1), np.quantile(np.arange(5), 1))
    out = clnp.empty((5,), device=device)
    assert clnp.median(A, axis=0, out=out) is out
    check(out, np.median(a, axis=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(clnp.nanpercentile(AN, 40, axis=0), np.nanpercentile(an, 40, axis=0))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        clnp.quantile(A, 1.5)
    with pytest.raises(ValueError, match=r"\[0, 100\]"):
        clnp.percentile(A, [-1, 50])
    with pytest.raises(ValueError, match="method"):
        clnp.quantile(A, 0.5, method="hazen")
    with pytest.raises(TypeError, match="real"):
        clnp.quantile(A * 1j, 0.5)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=30),
       st.lists(st.floats(0, 1), min_size=1, max_size=4),
       st.sampled_from(["linear", "lower", "higher", "nearest", "midpoint"]))
def test_quantile_property(values, qs, method):
    x = np.asarray(values)
    check(clnp.quantile(clnp.asarray(x), qs, method=method), np.quantile(x, qs, method=method))
    check(clnp.median(clnp.asarray(x)), np.median(x))


def test_median(data, device):
    a, A, an, AN = data
    check(clnp.median(A), np.median(a))
    check(clnp.median(A, axis=0), np.median(a, axis=0))
    check(clnp.median(A, axis=1, keepdims=True), np.median(a, axis=1, keepdims=True))
    check(clnp.median(clnp.arange(6, device=device)), np.median(np.arange(6)))
    check(clnp.median(AN, axis=1), np.median(an, axis=1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for ax in (None, 0, 1):
            check(clnp.nanmedian(AN, axis=ax), np.nanmedian(an, axis=ax))


@pytest.mark.parametrize("name", ["nanmean", "nansum", "nanmax", "nanmin", "nanprod",
                                  "nanstd", "nanvar", "nancumsum", "nancumprod"])
def test_nan_functions(data, name):
    _, _, an, AN = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for ax in (None, 0, 1):
            check(getattr(clnp, name)(AN, axis=ax), getattr(np, name)(an, axis=ax))


def test_nan_functions_options(data, device):
    a, A, an, AN = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(clnp.nanvar(AN, axis=1, ddof=1), np.nanvar(an, axis=1, ddof=1))
        check(clnp.nanstd(AN, axis=0, keepdims=True), np.nanstd(an, axis=0, keepdims=True))
        check(clnp.nanmean(AN, axis=1, keepdims=True), np.nanmean(an, axis=1, keepdims=True))
    check(clnp.nanargmax(AN[:3], axis=1), np.nanargmax(an[:3], axis=1))
    check(clnp.nanargmin(AN), np.nanargmin(an))
    i = clnp.asarray([[3, 1], [2, 4]], dtype=clnp.int32, device=device)
    ih = np.array([[3, 1], [2, 4]], dtype=np.int32)
    check(clnp.nanmean(i, axis=0), np.nanmean(ih, axis=0))
    check(clnp.nansum(i), np.nansum(ih))
    check(clnp.nanmax(i), np.nanmax(ih))
    check(clnp.nanargmax(i, axis=1), np.nanargmax(ih, axis=1))
    with pytest.raises(ValueError, match="All-NaN"):
        clnp.nanargmax(AN, axis=1)
    with pytest.raises(TypeError, match="initial"):
        clnp.nansum(AN, initial=1.0)


def test_average(data, device):
    a, A, _, _ = data
    w = np.arange(1.0, 6.0)
    check(clnp.average(A), np.average(a))
    check(clnp.average(A, axis=1, weights=clnp.asarray(w, device=device)),
          np.average(a, axis=1, weights=w))
    check(clnp.average(A, axis=0, weights=np.arange(1.0, 5.0), returned=True),
          np.average(a, axis=0, weights=np.arange(1.0, 5.0), returned=True))
    check(clnp.average(A, weights=A * A, keepdims=True),
          np.average(a, weights=a * a, keepdims=True))
    check(clnp.average(A, axis=0, returned=True), np.average(a, axis=0, returned=True))
    i = clnp.arange(3, device=device)
    check(clnp.average(i, weights=[1, 2, 3]), np.average(np.arange(3), weights=[1, 2, 3]))
    with pytest.raises(ZeroDivisionError):
        clnp.average(A, axis=1, weights=np.zeros(5))
    with pytest.raises(TypeError, match="Axis must be specified"):
        clnp.average(A, weights=w)
    with pytest.raises(ValueError, match="consistent"):
        clnp.average(A, axis=0, weights=w)


def test_bincount(device, rng):
    x = rng.integers(0, 7, 50)
    w = rng.random(50)
    X = clnp.asarray(x, device=device)
    check(clnp.bincount(X), np.bincount(x))
    check(clnp.bincount(X, minlength=10), np.bincount(x, minlength=10))
    check(clnp.bincount(X, weights=clnp.asarray(w, device=device), minlength=10),
          np.bincount(x, weights=w, minlength=10))
    check(clnp.bincount(clnp.asarray([True, False, True], device=device)),
          np.bincount(np.array([True, False, True])))
    check(clnp.bincount(clnp.zeros((0,), dtype=clnp.int64, device=device), minlength=3),
          np.bincount(np.zeros(0, np.int64), minlength=3))
    with pytest.raises(ValueError, match="negative"):
        clnp.bincount(clnp.asarray([1, -1], device=device))
    with pytest.raises(TypeError, match="safe"):
        clnp.bincount(clnp.asarray([1.0], device=device))
    with pytest.raises(ValueError, match="1-D"):
        clnp.bincount(clnp.zeros((2, 2), dtype=clnp.int64, device=device))
    with pytest.raises(ValueError, match="minlength"):
        clnp.bincount(X, minlength=-1)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 40), max_size=60), st.integers(0, 50))
def test_bincount_property(values, minlength):
    x = np.asarray(values, dtype=np.int64)
    check(clnp.bincount(clnp.asarray(x), minlength=minlength),
          np.bincount(x, minlength=minlength))


def test_histogram(device, rng):
    v = rng.standard_normal(200)
    ww = rng.random(200)
    V = clnp.asarray(v, device=device)
    check(clnp.histogram(V), np.histogram(v))
    check(clnp.histogram(V, bins=7, range=(-1, 1), weights=clnp.asarray(ww, device=device)),
          np.histogram(v, bins=7, range=(-1, 1), weights=ww))
    check(clnp.histogram(V, bins=[-3, -1, 0, 0.5, 2], density=True),
          np.histogram(v, bins=[-3, -1, 0, 0.5, 2], density=True))
    check(clnp.histogram(V, bins=5, density=True), np.histogram(v, bins=5, density=True))
    i = rng.integers(0, 10, 30)
    check(clnp.histogram(clnp.asarray(i, device=device), bins=4), np.histogram(i, bins=4))
    check(clnp.histogram(clnp.full((3,), 2.0, device=device)),
          np.histogram(np.full(3, 2.0)))
    v32 = v.astype(np.float32)
    check(clnp.histogram(clnp.asarray(v32, device=device), bins=6), np.histogram(v32, bins=6))
    with pytest.raises(ValueError, match="max must be larger"):
        clnp.histogram(V, range=(1, 0))
    with pytest.raises(ValueError, match="positive"):
        clnp.histogram(V, bins=0)
    with pytest.raises(ValueError, match="monotonically"):
        clnp.histogram(V, bins=[0, 2, 1])
    with pytest.raises(ValueError, match="not a valid estimator"):
        clnp.histogram(V, bins="bogus")
    with pytest.raises(TypeError, match="weighted data"):
        clnp.histogram(V, bins="auto", weights=V)
    with pytest.raises(ValueError, match="not finite"):
        clnp.histogram(clnp.asarray([1.0, np.inf], device=device))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-100, 100, allow_nan=False), min_size=1, max_size=40),
       st.integers(1, 12), st.sampled_from([None, (-50.0, 50.0), (0.0, 10.0)]))
def test_histogram_property(values, bins, rng_):
    x = np.asarray(values)
    check(clnp.histogram(clnp.asarray(x), bins=bins, range=rng_),
          np.histogram(x, bins=bins, range=rng_))


def test_index_functions(data, device, rng):
    a, A, _, _ = data
    check(clnp.argwhere(A > 0), np.argwhere(a > 0))
    check(clnp.argwhere(clnp.asarray(3.0, device=device)), np.argwhere(3.0))
    check(clnp.flatnonzero(A > 0), np.flatnonzero(a > 0))
    v = clnp.arange(3.0, device=device)
    for k in (0, 1, -2):
        check(clnp.diag(v, k=k), np.diag(np.arange(3.0), k=k))
        check(clnp.diag(A, k), np.diag(a, k))
    b3 = rng.standard_normal((3, 4, 5))
    B3 = clnp.asarray(b3, device=device)
    check(clnp.diagonal(B3, 1, 2, 0), np.diagonal(b3, 1, 2, 0))
    check(clnp.diagonal(B3, -1, axis1=1, axis2=2), np.diagonal(b3, -1, axis1=1, axis2=2))
    check(clnp.diagonal(A, 10), np.diagonal(a, 10))
    check(clnp.trace(A, -1), np.trace(a, -1))
    check(clnp.trace(B3, axis1=1, axis2=2), np.trace(b3, axis1=1, axis2=2))
    i = clnp.ones((3, 3), dtype=clnp.int32, device=device)
    check(clnp.trace(i), np.trace(np.ones((3, 3), np.int32)))
    with pytest.raises(ValueError, match="1- or 2-d"):
        clnp.diag(B3)
    with pytest.raises(ValueError, match="same"):
        clnp.diagonal(A, 0, 1, 1)


def test_comparisons(data, device):
    a, A, an, AN = data
    assert clnp.allclose(A, a + 1e-9) is True
    assert clnp.allclose(A, a + 1e-3) is False
    b = a + np.where(a > 0, 1e-6, 1e-3)
    check(clnp.isclose(A, clnp.asarray(b, device=device)), np.isclose(a, b))
    check(clnp.isclose(A, b, rtol=0, atol=1e-4), np.isclose(a, b, rtol=0, atol=1e-4))
    check(clnp.isclose(AN, an, equal_nan=True), np.isclose(an, an, equal_nan=True))
    x = np.array([np.inf, -np.inf, 1.0, np.nan])
    X = clnp.asarray(x, device=device)
    check(clnp.isclose(X, x[::-1].copy()), np.isclose(x, x[::-1]))
    check(clnp.isclose(X, 1.0), np.isclose(x, 1.0))
    i = clnp.asarray([1, 2, 3], device=device)
    check(clnp.isclose(i, [1, 2, 4]), np.isclose([1, 2, 3], [1, 2, 4]))
    assert clnp.array_equal(A, a) is True
    assert clnp.array_equal(A, A[:2]) is False
    assert clnp.array_equal(AN, an) is False
    assert clnp.array_equal(AN, an, equal_nan=True) is True
    assert clnp.array_equal(i, [1, 2, 3]) and not clnp.array_equal(i, [1, 2, 4])


def test_rounding(data, device):
    a, A, _, _ = data
    for d in (0, 1, 2, -1):
        check(clnp.around(A * 100, d), np.around(a * 100, d))
    check(clnp.round_(A * 100, 1), np.round(a * 100, 1))
    i = np.array([15, 25, -15, 149])
    check(clnp.around(clnp.asarray(i, device=device), -1), np.around(i, -1))
    check(clnp.around(clnp.asarray(i, device=device), 2), np.around(i, 2))
    f32 = (a * 10).astype(np.float32)
    check(clnp.around(clnp.asarray(f32, device=device), 2), np.around(f32, 2))
    c = (a + 1j * a[::-1]) * 10
    check(clnp.around(clnp.asarray(c, device=device), 1), np.around(c, 1))
    check(clnp.fix(A * 3), np.fix(a * 3))
    check(clnp.fix(clnp.asarray(i, device=device)), np.fix(i))
    check(clnp.rint(A * 3), np.rint(a * 3))


def test_elementwise_extras(device):
    x = np.array([np.nan, np.inf, -np.inf, 1.0, -2.5, 0.0])
    y = x[::-1].copy()
    X, Y = clnp.asarray(x, device=device), clnp.asarray(y, device=device)
    check(clnp.fmax(X, Y), np.fmax(x, y))
    check(clnp.fmin(X, 0.5), np.fmin(x, 0.5))
    f1, f2 = np.array([-5.0, 5.0, -3.5, 7.25]), np.array([3.0, -3.0, 2.0, 0.5])
    check(clnp.fmod(clnp.asarray(f1, device=device), clnp.asarray(f2, device=device)),
          np.fmod(f1, f2))
    i1, i2 = np.array([-5, 5, 7, -7]), np.array([3, -3, 2, 2])
    check(clnp.fmod(clnp.asarray(i1, device=device), clnp.asarray(i2, device=device)),
          np.fmod(i1, i2))
    check(clnp.exp2(clnp.arange(4, device=device)), np.exp2(np.arange(4)))
    check(clnp.fabs(clnp.asarray([-1, 2], device=device)), np.fabs([-1, 2]))
    check(clnp.degrees(X), np.degrees(x))
    check(clnp.radians(X), np.radians(x))
    check(clnp.rad2deg(X), np.rad2deg(x))
    check(clnp.deg2rad(X), np.deg2rad(x))
    check(clnp.heaviside(X, 0.5), np.heaviside(x, 0.5))
    check(clnp.float_power(clnp.asarray([2, 3], device=device), 2), np.float_power([2, 3], 2))
    check(clnp.logaddexp2(X[3:], 1.5), np.logaddexp2(x[3:], 1.5), rtol=1e-10)
    check(clnp.divmod(clnp.asarray([7, -7], device=device), 3), np.divmod([7, -7], 3))


def test_manipulation(data, device):
    a, A, _, _ = data
    b = a[:, :2]
    B = A[:, :2]
    check(clnp.ravel(A), np.ravel(a))
    check(clnp.ravel(A, order="F"), np.ravel(a, order="F"))
    check(clnp.swapaxes(A, 0, -1), np.swapaxes(a, 0, -1))
    check(clnp.transpose(A), np.transpose(a))
    check(clnp.transpose(A[None], (2, 0, 1)), np.transpose(a[None], (2, 0, 1)))
    check(clnp.atleast_1d(clnp.asarray(1.0, device=device)), np.atleast_1d(1.0))
    check(clnp.atleast_2d(A[0]), np.atleast_2d(a[0]))
    check(clnp.atleast_3d(A[0], A), np.atleast_3d(a[0], a))
    check(clnp.vstack([A[0], A]), np.vstack([a[0], a]))
    check(clnp.vstack([A, A[:2]], dtype=clnp.float32),
          np.vstack([a, a[:2]], dtype=np.float32))
    check(clnp.hstack([A, B]), np.hstack([a, b]))
    check(clnp.hstack([A[0], A[1]]), np.hstack([a[0], a[1]]))
    check(clnp.dstack([A, A]), np.dstack([a, a]))
    check(clnp.column_stack([A[:, 0], A]), np.column_stack([a[:, 0], a]))
    check(clnp.split(A, 5, axis=1), np.split(a, 5, axis=1))
    check(clnp.split(A, [1, 3], axis=1), np.split(a, [1, 3], axis=1))
    check(clnp.array_split(A, 3, axis=1), np.array_split(a, 3, axis=1))
    check(clnp.hsplit(A, [2]), np.hsplit(a, [2]))
    check(clnp.vsplit(A, 2), np.vsplit(a, 2))
    check(clnp.dsplit(A[..., None], 1), np.dsplit(a[..., None], 1))
    check(clnp.ptp(A, axis=1), np.ptp(a, axis=1))
    check(clnp.ptp(A, keepdims=True), np.ptp(a, keepdims=True))
    check(clnp.amax(A, axis=0), np.amax(a, axis=0))
    check(clnp.amin(A, axis=1, keepdims=True), np.amin(a, axis=1, keepdims=True))
    with pytest.raises(ValueError, match="equal division"):
        clnp.split(A, 3, axis=1)
    with pytest.raises(ValueError, match="larger than 0"):
        clnp.array_split(A, 0)
    with pytest.raises(ValueError, match="vsplit"):
        clnp.vsplit(A[0], 2)
    with pytest.raises(ValueError, match="axes"):
        clnp.transpose(A, (0,))


def test_queries_and_creation(data, device):
    a, A, _, _ = data
    assert clnp.ndim(A) == 2 and clnp.shape(A) == (4, 5) and clnp.size(A) == 20
    assert clnp.size(A, 1) == 5 and clnp.ndim([[1]]) == 2 and clnp.shape([1, 2]) == (2,)
    assert clnp.isscalar(1.0) and not clnp.isscalar(A) and not clnp.isscalar([1])
    assert not clnp.iscomplexobj(A) and clnp.isrealobj(A) and clnp.iscomplexobj(A * 1j)
    assert clnp.iscomplexobj([1j])
    c = clnp.copy(A)
    c[0, 0] = 99.0
    assert float(A[0, 0]) == a[0, 0]
    check(clnp.identity(3, device=device), np.identity(3))
    check(clnp.identity(2, dtype=clnp.int32, device=device), np.identity(2, dtype=np.int32))
    check(clnp.tri(3, 4, 1, device=device), np.tri(3, 4, 1))
    check(clnp.tri(3, dtype=clnp.int32, device=device), np.tri(3, dtype=np.int32))
    t = clnp.ascontiguousarray(A.T)
    assert t.is_contiguous
    check(t, np.ascontiguousarray(a.T))
    assert clnp.ascontiguousarray(A) is A
    check(clnp.ascontiguousarray(clnp.asarray(2.0, device=device)), np.ascontiguousarray(2.0))
    check(clnp.asanyarray([1, 2], device=device), np.asanyarray([1, 2]))
    check(clnp.real_if_close(A + 1e-20j), np.real_if_close(a + 1e-20j))
    check(clnp.real_if_close(A + 1e-3j), np.real_if_close(a + 1e-3j))


def test_nan_to_num(device):
    x = np.array([np.nan, np.inf, -np.inf, 1.0])
    X = clnp.asarray(x, device=device)
    check(clnp.nan_to_num(X), np.nan_to_num(x))
    check(clnp.nan_to_num(X, nan=5, posinf=1, neginf=-2),
          np.nan_to_num(x, nan=5, posinf=1, neginf=-2))
    x32 = x.astype(np.float32)
    check(clnp.nan_to_num(clnp.asarray(x32, device=device)), np.nan_to_num(x32))
    c = np.empty(4, np.complex128)
    c.real, c.imag = x, x[::-1]
    check(clnp.nan_to_num(clnp.asarray(c, device=device)), np.nan_to_num(c))
    i = clnp.asarray([1, 2], device=device)
    check(clnp.nan_to_num(i), np.array([1, 2]))
    r = clnp.nan_to_num(X, copy=False)
    assert r is X
    check(X, np.nan_to_num(x))


def test_interp(device):
    xp_ = np.array([0.0, 1.0, 2.5, 4.0])
    fp = np.array([1.0, 3.0, -1.0, 0.0])
    xs = np.array([-1, 0, 0.5, 1, 2, 3.9, 4, 5, np.nan])
    XS = clnp.asarray(xs, device=device)
    check(clnp.interp(XS, clnp.asarray(xp_, device=device), clnp.asarray(fp, device=device)),
          np.interp(xs, xp_, fp))
    check(clnp.interp(XS, xp_, fp, left=-7, right=9), np.interp(xs, xp_, fp, left=-7, right=9))
    check(clnp.interp(XS, xp_, fp, period=3), np.interp(xs, xp_, fp, period=3))
    check(clnp.interp(XS, [1.0], [2.0]), np.interp(xs, [1.0], [2.0]))
    check(clnp.interp(XS, xp_, fp + 1j), np.interp(xs, xp_, fp + 1j))
    check(clnp.interp(clnp.reshape(XS[:8], (2, 4)), xp_, fp), np.interp(xs[:8].reshape(2, 4),
                                                                         xp_, fp))
    with pytest.raises(ValueError, match="same length"):
        clnp.interp(XS, xp_, fp[:2])
    with pytest.raises(ValueError, match="empty"):
        clnp.interp(XS, [], [])
    with pytest.raises(ValueError, match="period"):
        clnp.interp(XS, xp_, fp, period=0)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve(device, mode):
    a = np.arange(10.0)
    k = np.array([1.0, -2.0, 0.5])
    check(clnp.convolve(clnp.asarray(a, device=device), clnp.asarray(k, device=device), mode),
          np.convolve(a, k, mode))
    check(clnp.convolve(clnp.asarray([1, 2], device=device), [1, 1, 1, 1], mode),
          np.convolve([1, 2], [1, 1, 1, 1], mode))


def test_convolve_errors(device):
    a = clnp.arange(3.0, device=device)
    with pytest.raises(ValueError, match="mode"):
        clnp.convolve(a, a, "circular")
    with pytest.raises(ValueError, match="empty"):
        clnp.convolve(a, clnp.zeros((0,), device=device))


def test_cov_corrcoef(data, device, rng):
    a, A, _, _ = data
    check(clnp.cov(A), np.cov(a))
    check(clnp.cov(A, rowvar=False, bias=True), np.cov(a, rowvar=False, bias=True))
    check(clnp.cov(A[0], A[1]), np.cov(a[0], a[1]))
    check(clnp.cov(A[0]), np.cov(a[0]))
    check(clnp.cov(A, ddof=0), np.cov(a, ddof=0))
    fw = np.array([1, 2, 1, 3, 1])
    aw = rng.random(5)
    check(clnp.cov(A, fweights=fw, aweights=aw), np.cov(a, fweights=fw, aweights=aw))
    check(clnp.cov(A, aweights=aw, ddof=0), np.cov(a, aweights=aw, ddof=0))
    a32 = a.astype(np.float32)
    check(clnp.cov(clnp.asarray(a32, device=device)), np.cov(a32), rtol=1e-6)
    check(clnp.corrcoef(A), np.corrcoef(a))
    check(clnp.corrcoef(A[0], A[1]), np.corrcoef(a[0], a[1]))
    check(clnp.corrcoef(A, rowvar=False), np.corrcoef(a, rowvar=False))
    with pytest.raises(ValueError, match="2 dimensions"):
        clnp.cov(A[None, None])
    with pytest.raises(ValueError, match="negative"):
        clnp.cov(A, fweights=[1, -1, 1, 1, 1])


EINSUM_CASES = ["ij,jk->ik", "ij,jk", "ii", "ii->i", "ij->ji", "ij->", "bij,jk->bik",
                "...ij,jk->...ik", "i,i", "i,j->ij", "ij,ij->i", "bij,bkj->bik",
                "ij,jk,kl->il", "ji", "...", "i...->...", "ij,jk->"]


@pytest.mark.parametrize("sub", EINSUM_CASES)
def test_einsum(device, rng, sub):
    shapes = {"ij": (4, 5), "jk": (5, 3), "kl": (3, 2), "ii": (4, 4), "bij": (2, 4, 5),
              "bkj": (2, 3, 5), "...ij": (2, 4, 5), "i": (4,), "j": (3,), "ji": (4, 5),
              "...": (4, 5), "i...": (4, 5)}
    lhs = sub.split("->")[0].split(",")
    ops = []
    for t in lhs:
        shp = shapes[t] if not (t == "i" and lhs == ["i", "j"]) else (4,)
        ops.append(rng.standard_normal(shp))
    got = clnp.einsum(sub, *[clnp.asarray(o, device=device) for o in ops])
    check(got, np.einsum(sub, *ops), rtol=1e-10)


def test_einsum_broadcast_and_errors(device, rng):
    a = rng.standard_normal((2, 1, 3, 4))
    b = rng.standard_normal((5, 4, 2))
    A, B = clnp.asarray(a, device=device), clnp.asarray(b, device=device)
    check(clnp.einsum("...ij,...jk", A, B), np.einsum("...ij,...jk", a, b), rtol=1e-10)
    check(clnp.einsum("ij,jk", A[0, 0][:, :1], B[0][:1]),
          np.einsum("ij,jk", a[0, 0][:, :1], b[0][:1]), rtol=1e-10)
    i = clnp.arange(6, device=device)
    check(clnp.einsum("i,i->", i, i), np.einsum("i,i->", np.arange(6), np.arange(6)))
    out = clnp.empty((3, 2), device=device)
    assert clnp.einsum("ij,jk->ik", A[0, 0], B[0], out=out) is out
    with pytest.raises(ValueError, match="operands"):
        clnp.einsum("ij,jk", A[0, 0])
    with pytest.raises(ValueError, match="broadcast"):
        clnp.einsum("ij,ij", A[0, 0], B[0])
    with pytest.raises(ValueError, match="does not appear"):
        clnp.einsum("ij->k", A[0, 0])
    with pytest.raises(ValueError, match="ellipsis"):
        clnp.einsum("...i->i", A)
    with pytest.raises(TypeError, match="subscript-string"):
        clnp.einsum(A, [0, 1])
