"""Arguments NumPy takes as arrays (0-d or n-d) or NumPy scalars where clnp took only Python
scalars (issue #25 item 1): each form against NumPy's result.

SciPy's suite, run with clnp as its array-API backend, passed a clnp 0-d array as ``atol`` to
``numpy.testing.assert_allclose``; ``__array_function__`` routed it to ``clnp.isclose``, which
refused it. The sweep behind this file called every candidate function with each form
(NumPy 0-d array, NumPy scalar, clnp 0-d array, and n-d arrays where NumPy broadcasts) and
compared with NumPy; the forms that raised or differed are the ones tested here.
"""
from __future__ import annotations

import numpy as np
import pytest

import clnp
from clnp._numpy import comparisons
from npcheck import check


def _same(got, want):
    """``got`` (clnp arrays, possibly in a tuple) equals NumPy's ``want`` exactly: dtype,
    shape and values (NaN equal to NaN)."""
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
        return
    w = np.asarray(want)
    g = got.to_numpy() if isinstance(got, clnp.ndarray) else np.asarray(got)
    assert g.dtype == w.dtype, (g.dtype, w.dtype)
    assert g.shape == w.shape, (g.shape, w.shape)
    np.testing.assert_array_equal(g, w)


def _forms(value, device):
    """``value`` as NumPy takes it and as clnp should: (NumPy's, clnp's) pairs for a NumPy
    array, a NumPy scalar (0-d values only) and a clnp array."""
    h = np.asarray(value)
    out = [(h, h), (h, clnp.asarray(h, device=device))]
    if h.ndim == 0:
        out.append((h[()], h[()]))
    return out


# ---------------------------------------------------------------- isclose and allclose

def _pairs(rng, dtype):
    base = rng.standard_normal(40) * 3
    a = base.astype(dtype)
    rel = 10.0 ** rng.integers(-9, -2, 40)
    b = (base * (1 + rng.standard_normal(40) * rel) + rng.standard_normal(40) * 1e-7)
    b = b.astype(dtype)
    if np.dtype(dtype).kind == "f":
        a[:4] = [np.nan, np.inf, -np.inf, 1.0]
        b[:4] = [np.nan, np.inf, np.inf, np.nan]
    return a, b


TOLERANCES = [
    1e-6, 0, np.float64(1e-6), np.float32(1e-6), np.float16(1e-3), np.int64(0),
    np.array(1e-6), np.array(1e-6, np.float32), np.inf, np.array(np.inf),
    [1e-6] * 40, np.linspace(1e-8, 1e-4, 40), np.array([[1e-9], [1e-3]]),
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64"])
@pytest.mark.parametrize("equal_nan", [False, True])
def test_isclose_array_tolerances_equal_numpys(device, rng, dtype, equal_nan):
    """Every pair of tolerance forms (Python, NumPy scalars of several dtypes, NumPy 0-d and
    n-d arrays, the same as clnp arrays) gives NumPy's booleans and shape: a float64
    tolerance widens a float32 comparison as in NumPy, n-d tolerances broadcast (and may
    widen the result's shape), NaN and inf as NumPy."""
    if not device.supports(np.dtype(dtype)) or not device.has_fp64:
        pytest.skip("needs the dtype and float64")
    a, b = _pairs(rng, dtype)
    A, B = clnp.asarray(a, device=device), clnp.asarray(b, device=device)
    for rt in TOLERANCES:
        for at in TOLERANCES[::3]:
            with np.errstate(invalid="ignore"):     # NumPy warns of an inf tolerance
                want = np.isclose(a, b, rtol=rt, atol=at, equal_nan=equal_nan)
            _same(clnp.isclose(A, B, rtol=rt, atol=at, equal_nan=equal_nan), want)
            dev = [clnp.asarray(np.asarray(t), device=device)
                   if isinstance(t, (np.ndarray, np.generic, list)) else t for t in (rt, at)]
            _same(clnp.isclose(A, B, rtol=dev[0], atol=dev[1], equal_nan=equal_nan), want)


def test_isclose_tolerance_forms_with_scalar_operands(device):
    """Python-scalar ``a`` or ``b`` with array tolerances, as NumPy."""
    for npf, clf in _forms(1e-6, device):
        _same(clnp.isclose(1.0, 1.0 + 1e-7, atol=clf), np.isclose(1.0, 1.0 + 1e-7, atol=npf))
        x = np.array([1.0, 1.0 + 1e-5, np.inf])
        _same(clnp.isclose(clnp.asarray(x, device=device), 1.0, rtol=0, atol=clf),
              np.isclose(x, 1.0, rtol=0, atol=npf))
    tol = np.array([1e-7, 1e-5, 0.0])
    _same(clnp.isclose(1.0, 1.0 + 1e-6, atol=clnp.asarray(tol, device=device)),
          np.isclose(1.0, 1.0 + 1e-6, atol=tol))


def test_allclose_array_tolerances(device):
    a = np.arange(6.0).reshape(2, 3)
    A = clnp.asarray(a, device=device)
    for rt in ([[1e-3], [1e-1]], np.array([[1e-1], [1e-1]]), 1e-1):
        for npf, clf in _forms(rt, device):
            assert clnp.allclose(A, A * 1.01, rtol=clf) is bool(np.allclose(a, a * 1.01,
                                                                            rtol=npf))
    for npf, clf in _forms(1e-6, device):
        assert clnp.allclose(A, A + 1e-7, atol=clf) is True
        assert clnp.allclose(A, A + 1e-5, atol=clf, rtol=0) is False


def test_python_tolerances_stay_on_the_host(device):
    """The fast path: a Python tolerance, or a NumPy one whose dtype the comparison's holds,
    is used as a Python number (no upload, no extra kernel); a wider NumPy scalar stays a
    (strong) NumPy scalar, and only an n-d host array is uploaded."""
    f32, f64 = np.dtype("float32"), np.dtype("float64")
    for t in (1e-8, 0, True, 1e-8 + 0j):
        assert comparisons._tolerance("isclose", "atol", t, f32, None) is t
    for t in (np.float32(1e-8), np.array(1e-8, np.float16), np.float64(1e-8)):
        got = comparisons._tolerance("isclose", "atol", t, f64, None)
        assert type(got) is float and got == float(t)
    for t in (np.float64(1e-8), np.array(1e-8), np.int64(0)):   # int64 and float32: float64
        got = comparisons._tolerance("isclose", "atol", t, f32, None)
        assert isinstance(got, np.generic) and got.dtype == np.asarray(t).dtype
    got = comparisons._tolerance("isclose", "atol", np.ones(3), f32, device)
    assert isinstance(got, clnp.ndarray) and got.device is device


def test_numpy_assert_allclose_with_clnp_tolerance(device):
    """SciPy's failure: NumPy's assert_allclose with a clnp 0-d ``atol`` (or ``rtol``)
    dispatches to clnp.isclose through ``__array_function__`` and works; a real mismatch
    still fails as an AssertionError naming the tolerance."""
    a = clnp.asarray([1.0, 2.0, 3.0], device=device)
    b = a + 1e-7
    np.testing.assert_allclose(a, b, atol=clnp.asarray(1e-6, device=device))
    np.testing.assert_allclose(a, b, rtol=clnp.asarray(1e-6, device=device), atol=0)
    np.testing.assert_allclose(a, b, rtol=clnp.asarray(np.float32(1e-6), device=device),
                               atol=clnp.asarray(np.float32(0), device=device))
    with pytest.raises(AssertionError, match="atol=1e-06"):
        np.testing.assert_allclose(a, a + 1e-3, atol=clnp.asarray(1e-6, device=device))
    # the same through NumPy's own isclose and allclose, NumPy operands included
    h = a.to_numpy()
    want = np.isclose(h, h + 1e-7, atol=1e-6)
    _same(np.isclose(a, b, atol=clnp.asarray(1e-6, device=device)), want)
    _same(np.isclose(h, h + 1e-7, atol=clnp.asarray(1e-6, device=device)), want)
    assert np.allclose(a, b, atol=clnp.asarray(1e-6, device=device)) is True


def test_isclose_tolerance_errors_name_the_call_and_argument(device):
    a = clnp.asarray([1.0, 2.0, 3.0], device=device)
    for fn in ("isclose", "allclose"):
        f = getattr(clnp, fn)
        with pytest.raises(ValueError, match=rf"^{fn}: atol of shape \(2,\) does not "
                                             r"broadcast against the arrays compared"):
            f(a, a, atol=clnp.asarray([1.0, 2.0], device=device))
        with pytest.raises(ValueError, match=rf"^{fn}: rtol of shape \(4,\)"):
            f(a, a, rtol=np.ones(4))
        with pytest.raises(TypeError, match=rf"^{fn}: atol must be a number or an array of "
                                            r"numbers; got NoneType"):
            f(a, a, atol=None)
        with pytest.raises(TypeError, match=rf"^{fn}: rtol must be a number or an array of "
                                            r"numbers; got str"):
            f(a, a, rtol="1e-5")
        with pytest.raises(TypeError, match=rf"^{fn}: atol must be a number .* dtype <U"):
            f(a, a, atol=np.array(["x"]))


# ------------------------------------------------------------- creation and shapes

def test_full_and_full_like_broadcast_an_array_fill(device):
    for fill in ([1.0, 2.0, 3.0], [[1], [2]], np.array([1.5, 2.5, 3.5], np.float32)):
        for npf, clf in _forms(fill, device):
            _same(clnp.full((2, 3), clf, device=device), np.full((2, 3), npf))
            x = np.zeros((2, 3), np.int32)
            _same(clnp.full_like(clnp.asarray(x, device=device), clf), np.full_like(x, npf))
    _same(clnp.full((2, 3), [1.0, 2.0, 3.0], device=device), np.full((2, 3), [1.0, 2.0, 3.0]))
    for npf, clf in _forms(np.float32(1.5), device):
        _same(clnp.full(3, clf, device=device), np.full(3, npf))
    with pytest.raises(ValueError, match=r"^full_like: fill_value of shape \(4,\) does not "
                                         r"broadcast to the shape \(2, 3\)"):
        clnp.full_like(clnp.zeros((2, 3), device=device), np.ones(4))
    with pytest.raises(TypeError, match="^full: fill_value must be a scalar or an array"):
        clnp.full(2, None, device=device)


def test_shapes_from_arrays(device):
    """A 0-d or 1-d integer array is a shape, as NumPy reads it through __index__."""
    for npf, clf in _forms(3, device):
        _same(clnp.zeros(clf, device=device), np.zeros(npf))
        _same(clnp.ones(clf, device=device), np.ones(npf))
        assert clnp.empty(clf, device=device).shape == np.empty(npf).shape
        _same(clnp.broadcast_to(clnp.asarray([1.0], device=device), clf),
              np.broadcast_to([1.0], npf))
    x = np.arange(6.0)
    X = clnp.asarray(x, device=device)
    for npf, clf in _forms([3, 2], device):
        _same(clnp.reshape(X, clf), np.reshape(x, npf))
        _same(X.reshape(clf), x.reshape(npf))
    for npf, clf in _forms(6, device):
        _same(X.reshape(clf), x.reshape(npf))
    _same(clnp.zeros((clnp.asarray(2, device=device), np.int64(3)), device=device),
          np.zeros((2, 3)))
    with pytest.raises(TypeError, match=r"^zeros: shape must be an int or a sequence of "
                                        r"ints; got an array of dtype float64"):
        clnp.zeros(clnp.asarray([2.0], device=device))
    with pytest.raises(TypeError, match=r"^reshape: shape must be an int or a sequence of "
                                        r"ints; got an array of dtype int64 and shape \(1, 2\)"):
        clnp.reshape(X, np.array([[3, 2]]))


LINSPACE_BOUNDS = [0.0, 1, np.float32(0.5), np.float64(-2.0), np.int32(3),
                   np.array(1.5, np.float32), np.array([0.0, 1.0]),
                   np.array([[1.0], [2.0]], np.float32), 1 + 2j, np.array([1e-310, 0.0])]


@pytest.mark.parametrize("num, endpoint, retstep, dtype, axis", [
    (5, True, False, None, 0), (4, False, True, None, -1), (1, True, True, None, 0),
    (0, True, False, None, 0), (7, True, False, np.int32, 0), (2, False, False, None, 0)])
def test_linspace_array_bounds(device, num, endpoint, retstep, dtype, axis):
    """NumPy's linspace on array and NumPy-scalar bounds: their dtype (Python scalars weak),
    broadcast, samples along ``axis``, the step, the integer floor and NumPy's special case
    for a step that underflows (the 1e-310 bound), bit for bit."""
    if not device.has_fp64:
        pytest.skip("NumPy's float64 results")
    for s in LINSPACE_BOUNDS:
        for e in LINSPACE_BOUNDS:
            try:
                want = np.linspace(s, e, num, endpoint=endpoint, retstep=retstep,
                                   dtype=dtype, axis=axis)
            except (TypeError, ValueError) as err:   # NumPy's refusals are clnp's
                for conv in (lambda v: v, lambda v: clnp.asarray(v, device=device)
                             if isinstance(v, (np.ndarray, np.generic)) else v):
                    with pytest.raises(type(err)):
                        clnp.linspace(conv(s), conv(e), num, endpoint=endpoint,
                                      retstep=retstep, dtype=dtype, axis=axis)
                continue
            for conv in (lambda v: v, lambda v: clnp.asarray(v, device=device)
                         if isinstance(v, (np.ndarray, np.generic)) else v):
                got = clnp.linspace(conv(s), conv(e), num, endpoint=endpoint,
                                    retstep=retstep, dtype=dtype, axis=axis)
                if retstep:     # the step: NumPy's scalar (Python NaN when undefined)
                    _same(got[0], want[0])
                    g, w = got[1], np.asarray(want[1])
                    g = g.to_numpy() if isinstance(g, clnp.ndarray) else np.asarray(g)
                    assert g.dtype == w.dtype and g.shape == w.shape
                    np.testing.assert_array_equal(g, w)
                else:
                    _same(got, want)


def test_logspace_geomspace_array_bounds(device):
    if not device.has_fp64:
        pytest.skip("NumPy's float64 results")
    for s, e in ((np.float32(0.0), np.float32(1.0)), (np.array([0.0, 1.0]), 2.0)):
        for conv in (lambda v: v, lambda v: clnp.asarray(v, device=device)
                     if isinstance(v, (np.ndarray, np.generic)) else v):
            # float32 bounds give float32 results: within an ulp of NumPy's (libm differs)
            check(clnp.logspace(conv(s), conv(e), 4), np.logspace(s, e, 4),
                  rtol=2.5e-7 if isinstance(s, np.float32) else 1e-12)
    for s, e, axis in ((np.float32(1.0), np.float32(10.0), 0),
                       (np.array([1.0, 2.0]), 8.0, 1), (np.array([-1.0, 2.0]), [-8.0, 4.0], 0),
                       (np.array([[1.0], [3.0]]), np.array([10.0, 20.0]), -1)):
        for conv in (lambda v: v, lambda v: clnp.asarray(v, device=device)
                     if isinstance(v, (np.ndarray, np.generic)) else v):
            check(clnp.geomspace(conv(s), conv(e), 5, axis=axis),
                  np.geomspace(s, e, 5, axis=axis),
                  rtol=2.5e-7 if isinstance(s, np.float32) else 1e-12)
    check(clnp.geomspace(clnp.asarray([1.0, 2.0], dtype=clnp.float32, device=device), 8.0,
                         3, dtype=clnp.float32),
          np.geomspace(np.array([1.0, 2.0], np.float32), 8.0, 3, dtype=np.float32),
          rtol=1e-6)
    with pytest.raises(ValueError, match="cannot include zero"):
        clnp.geomspace(clnp.asarray([1.0, 0.0], device=device), 8.0, 3)


# ------------------------------------------------------------------ the rest of the sweep

def test_histogram_bins_as_0d_arrays(device, rng):
    x = rng.random(50) * 4
    X = clnp.asarray(x, device=device)
    for npf, clf in _forms(4, device):
        check(clnp.histogram(X, bins=clf), np.histogram(x, bins=npf))
        check(clnp.histogram(X, bins=clf, range=(0.0, 5.0), density=True),
              np.histogram(x, bins=npf, range=(0.0, 5.0), density=True))
        check(clnp.histogram_bin_edges(X, bins=clf), np.histogram_bin_edges(x, bins=npf))
        check(clnp.histogram2d(X, X, bins=clf), np.histogram2d(x, x, bins=npf))
        s = np.stack([x, x[::-1]], axis=1)
        check(clnp.histogramdd(clnp.asarray(s, device=device), bins=clf),
              np.histogramdd(s, bins=npf))


def test_roll_and_tile_take_integer_arrays(device):
    x = np.arange(6).reshape(2, 3)
    X = clnp.asarray(x, device=device)
    for npf, clf in _forms([1, 2], device):
        _same(clnp.roll(X, clf, axis=(0, 1)), np.roll(x, npf, axis=(0, 1)))
        _same(clnp.tile(X, clf), np.tile(x, npf))
    for npf, clf in _forms(2, device):
        _same(clnp.roll(X, clf), np.roll(x, npf))
        _same(clnp.tile(X, clf), np.tile(x, npf))
    with pytest.raises(TypeError, match=r"^roll: shift must be an int or a sequence of ints; "
                                        r"got an array of dtype float64"):
        clnp.roll(X, clnp.asarray(1.0, device=device))
    with pytest.raises(TypeError, match=r"^tile: repetitions must be an int or a sequence"):
        clnp.tile(X, np.array([1.5]))


def test_diff_0d_prepend_append(device):
    x = np.array([1, 4, 9, 16], np.int32)
    X = clnp.asarray(x, device=device)
    for v in (0, 2.5, np.float32(0.5), np.int8(3)):
        for npf, clf in _forms(v, device):
            _same(clnp.diff(X, prepend=clf), np.diff(x, prepend=npf))
            _same(clnp.diff(X, append=clf, n=2), np.diff(x, append=npf, n=2))
    x2 = np.arange(6.0).reshape(2, 3)
    for npf, clf in _forms(-1.0, device):
        _same(clnp.diff(clnp.asarray(x2, device=device), axis=0, prepend=clf),
              np.diff(x2, axis=0, prepend=npf))
    with pytest.raises(ValueError, match=r"^diff: prepend of shape \(1, 1\) does not match"):
        clnp.diff(X, prepend=np.array([[1]]))


def test_where_scalar_condition(device):
    x = np.array([1.0, 2.0])
    X = clnp.asarray(x, device=device)
    for c in (np.True_, np.False_, True, 0, np.int64(2)):
        _same(clnp.where(c, X, 0.0), np.where(c, x, 0.0))


def test_searchsorted_host_sorter(device):
    a = np.array([3.0, 1.0, 2.0])
    A = clnp.asarray(a, device=device)
    for sorter in ([1, 2, 0], np.array([1, 2, 0])):
        _same(clnp.searchsorted(A, clnp.asarray([2.0, 0.5], device=device), sorter=sorter),
              np.searchsorted(a, [2.0, 0.5], sorter=sorter))


def test_nan_to_num_array_values(device):
    """The values are copied into x's dtype (NumPy's copyto), broadcast to x's shape, and
    a replacement that is itself infinite stays (the masks come from the input)."""
    x = np.array([np.nan, np.inf, -np.inf, 1.0, np.nan, 2.0], np.float32)
    X = clnp.asarray(x, device=device)
    for nan in (9.0, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], np.float64(7.0)):
        for npf, clf in _forms(nan, device):
            _same(clnp.nan_to_num(X, nan=clf, posinf=clf, neginf=clf),
                  np.nan_to_num(x, nan=npf, posinf=npf, neginf=npf))
    _same(clnp.nan_to_num(X, nan=np.inf, posinf=-np.inf),
          np.nan_to_num(x, nan=np.inf, posinf=-np.inf))
    c = np.array([complex(np.nan, np.inf), 1 + 1j])
    _same(clnp.nan_to_num(clnp.asarray(c, device=device), nan=clnp.asarray(5.0, device=device)),
          np.nan_to_num(c, nan=np.array(5.0)))
    with pytest.raises(ValueError, match=r"^nan_to_num: nan of shape \(3,\) does not "
                                         r"broadcast to x's shape \(6,\)"):
        clnp.nan_to_num(X, nan=np.ones(3))


@pytest.mark.parametrize("fn", ["quantile", "percentile", "nanquantile", "nanpercentile"])
def test_quantile_q_dtype_as_numpy(device, rng, fn):
    """q's own dtype: a float32 q computes (and returns) float32 for float32 input, a
    float64 one float64, a Python q keeps the input's dtype, bit for bit with NumPy."""
    if not device.has_fp64:
        pytest.skip("NumPy's float64 results")
    scale = 100 if "percentile" in fn else 1
    for adt in (np.float32, np.float64, np.int32):
        a = (rng.standard_normal((5, 7)) * 10).astype(adt)
        A = clnp.asarray(a, device=device)
        for q in (0.3, np.float32(0.37), np.float64(0.37), np.array([0.1, 0.77], np.float32),
                  np.array([0.1, 0.77])):
            q = q * scale
            for method in ("linear", "nearest", "midpoint"):
                for axis in (None, 1):
                    want = getattr(np, fn)(a, q, axis=axis, method=method)
                    for qq in (q, clnp.asarray(q, device=device)
                               if isinstance(q, (np.ndarray, np.generic)) else q):
                        _same(getattr(clnp, fn)(A, qq, axis=axis, method=method), want)


def test_random_integers_0d_bounds(device):
    rng = clnp.random.default_rng(0)
    want = clnp.random.default_rng(0).integers(2, 9, size=5).to_numpy()
    got = rng.integers(clnp.asarray(2, device=device), np.array(9), size=5).to_numpy()
    np.testing.assert_array_equal(got, want)
    with pytest.raises(TypeError, match="array-valued bounds are not supported"):
        clnp.random.default_rng(0).integers(clnp.asarray([1, 2]), 9)


def test_numpy_functions_dispatch_with_clnp_array_arguments(device):
    """NumPy's own functions called with clnp arrays in these arguments reach clnp through
    ``__array_function__`` and give NumPy's results."""
    xf = np.array([0.1, 0.5, 1.2, 2.2, 3.9, 4.0])
    x2 = np.arange(6.0).reshape(2, 3)

    def C(v):
        return clnp.asarray(np.asarray(v), device=device)
    cases = [
        (lambda c: np.isclose(c(xf), c(xf) + 1e-7, atol=c(1e-6))),
        (lambda c: np.full_like(c(x2), c([1.0, 2.0, 3.0]))),
        (lambda c: np.linspace(c([0.0, 1.0]), c(2.0), 5)),
        (lambda c: np.tile(c(xf), c([2, 1]))),
        (lambda c: np.roll(c(x2), c([1, 1]), axis=(0, 1))),
        (lambda c: np.histogram(c(xf), bins=c(3))),
        (lambda c: np.nan_to_num(c([np.nan, np.inf]), nan=c(5.0), posinf=c(7.0))),
        (lambda c: np.diff(c(xf), prepend=c(0.0))),
        (lambda c: np.reshape(c(xf), c([3, 2]))),
        (lambda c: np.geomspace(c([1.0, 2.0]), c(8.0), 3)),
        (lambda c: np.percentile(c(xf), c(np.float32(30.0)))),
    ]
    for f in cases:
        check(f(C), f(np.asarray), rtol=0, atol=0)
