"""Reductions and statistics (sum, prod, max, min, mean, var, std, all, any) against NumPy.

Kernel builds dominate the run time, so the tests reuse a few shapes: every reduction of one
input dtype and (kept, reduced) dimension count lives in one OpenCL program.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import clnp
from clnp._core import eager as _eager

ALL_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
              "float16", "float32", "float64", "complex64", "complex128"]


def _dtypes(device):
    return [d for d in ALL_DTYPES if device.supports(np.dtype(d))]


def _real_float(device):
    return np.dtype(np.float64 if device.has_fp64 else np.float32)


def _data(dtype, shape, rng):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind == "i":
        return rng.integers(-3, 4, shape).astype(dtype)
    if dtype.kind == "u":
        return rng.integers(0, 4, shape).astype(dtype)
    if dtype.kind == "f":
        return rng.uniform(0.5, 1.5, shape).astype(dtype) * rng.choice([-1, 1], shape)
    return (rng.uniform(0.5, 1.5, shape) + 1j * rng.uniform(-0.5, 0.5, shape)).astype(dtype)


def _tol(dtype):
    return {"float16": 2e-3, "float32": 2e-5, "complex64": 2e-5}.get(np.dtype(dtype).name, 1e-12)


def check(res, ref, rtol=None, atol=0.0):
    """``res`` (clnp) equals ``ref`` (NumPy) in shape, dtype and value."""
    assert isinstance(res, clnp.Array), type(res)
    ref = np.asarray(ref)
    assert res.shape == ref.shape, (res.shape, ref.shape)
    assert res.dtype == ref.dtype, (res.dtype, ref.dtype)
    got = np.asarray(res)
    if ref.dtype.kind in "fc":
        np.testing.assert_allclose(got, ref, rtol=_tol(ref.dtype) if rtol is None else rtol,
                                   atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, ref)


# ----------------------------------------------------------------------------- every dtype
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_every_op_every_dtype(device, dtype, rng):
    if not device.supports(np.dtype(dtype)):
        pytest.skip(f"{dtype} unsupported on {device}")
    a = _data(dtype, (37,), rng)
    x = clnp.asarray(a, device=device)
    ops = ["sum", "prod", "any", "all"] + ([] if np.dtype(dtype).kind == "c" else ["max", "min"])
    for op in ops:
        ref = getattr(np, op)(a, keepdims=True)
        if op in ("sum", "prod") and a.dtype.kind in "fc":
            # NumPy accumulates float16 in float16; clnp (like the standard allows) in float32
            wide = np.complex128 if a.dtype.kind == "c" else np.float64
            ref = getattr(np, op)(a.astype(wide), keepdims=True).astype(ref.dtype)
        check(getattr(clnp, op)(x), ref.reshape(()))
        check(getattr(clnp, op)(x, axis=0, keepdims=True), ref)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "bool"])
def test_integer_accumulation_defaults(device, dtype):
    """The standard: integer sums/products accumulate in the default integer type of the same
    signedness (bool counts as signed)."""
    a = np.full(300, 100 if dtype != "bool" else 1, dtype=dtype)
    x = clnp.asarray(a, device=device)
    s = clnp.sum(x)
    assert s.dtype == (np.uint64 if dtype == "uint8" else np.int64)
    assert int(s) == 300 * (100 if dtype != "bool" else 1)
    p = clnp.prod(x[:5])
    assert p.dtype == s.dtype
    assert int(p) == (100 ** 5 if dtype != "bool" else 1)


def test_large_integer_sum_does_not_wrap(device):
    a = np.full(1 << 16, 1 << 20, dtype=np.int32)
    x = clnp.asarray(a, device=device)
    assert int(clnp.sum(x)) == (1 << 36)


def test_dtype_argument(device):
    a = np.arange(1, 40, dtype=np.int8)
    x = clnp.asarray(a, device=device)
    check(clnp.sum(x, dtype=clnp.int8), np.sum(a, dtype=np.int8))      # wraps like NumPy
    check(clnp.prod(x[:12], dtype=clnp.int16), np.prod(a[:12], dtype=np.int16))
    check(clnp.sum(x, dtype=clnp.uint64), np.sum(a, dtype=np.uint64))
    f = np.linspace(0, 1, 50, dtype=np.float32)
    xf = clnp.asarray(f, device=device)
    fd = _real_float(device)
    check(clnp.sum(xf, dtype=fd), np.sum(f, dtype=fd), rtol=1e-6)
    check(clnp.sum(x, dtype=clnp.float32), np.sum(a, dtype=np.float32))
    with pytest.raises(TypeError, match="sum"):
        clnp.sum(x, dtype=clnp.bool)


# ----------------------------------------------------------------------------- axes
AXES = [None, 0, 1, 2, -1, -3, (0, 2), (2, 0), (1, 2), (0, 1), (-1, -3), (0, 1, 2), ()]


@pytest.mark.parametrize("dtype", ["int32", "float64"])
@pytest.mark.parametrize("keepdims", [False, True])
def test_axes_and_keepdims(device, dtype, keepdims, rng):
    if dtype == "float64" and not device.has_fp64:
        dtype = "float32"
    a = _data(dtype, (3, 4, 5), rng)
    x = clnp.asarray(a, device=device)
    for axis in AXES:
        for op in ("sum", "prod", "max", "min", "any", "all"):
            res = getattr(clnp, op)(x, axis=axis, keepdims=keepdims)
            check(res, getattr(np, op)(a, axis=axis, keepdims=keepdims))


def test_mean_var_std(device, rng):
    fd = _real_float(device)
    a = _data(fd, (3, 4, 5), rng)
    x = clnp.asarray(a, device=device)
    for axis in (None, 0, -1, (0, 2)):
        for keepdims in (False, True):
            check(clnp.mean(x, axis=axis, keepdims=keepdims),
                  np.mean(a, axis=axis, keepdims=keepdims))
            for c in (0, 1, 1.5):
                check(clnp.var(x, axis=axis, correction=c, keepdims=keepdims),
                      np.var(a, axis=axis, ddof=c, keepdims=keepdims))
                check(clnp.std(x, axis=axis, correction=c, keepdims=keepdims),
                      np.std(a, axis=axis, ddof=c, keepdims=keepdims))


def test_mean_var_dtypes(device, rng):
    """float32 stays float32; integers promote to the default floating type (NumPy)."""
    fd = _real_float(device)
    a32 = _data("float32", (4, 6), rng)
    x32 = clnp.asarray(a32, device=device)
    check(clnp.mean(x32, axis=1), np.mean(a32, axis=1))
    check(clnp.var(x32, axis=1), np.var(a32, axis=1))
    ai = np.arange(10, dtype=np.int32)
    xi = clnp.asarray(ai, device=device)
    check(clnp.mean(xi), np.mean(ai).astype(fd))
    check(clnp.std(xi, correction=1), np.std(ai, ddof=1).astype(fd))
    ab = np.array([True, False, True, True])
    check(clnp.mean(clnp.asarray(ab, device=device)), np.mean(ab).astype(fd))


def test_mean_var_complex(device, rng):
    cd = np.dtype(np.complex128 if device.has_fp64 else np.complex64)
    a = _data(cd, (3, 5), rng)
    x = clnp.asarray(a, device=device)
    check(clnp.mean(x, axis=0), np.mean(a, axis=0))
    v = clnp.var(x, axis=1)
    check(v, np.var(a, axis=1))
    assert v.dtype.kind == "f"


def test_var_correction_too_large_is_nan(device):
    """The standard: N - correction <= 0 gives NaN."""
    x = clnp.asarray(np.array([1.0, 2.0], dtype=_real_float(device)), device=device)
    assert math.isnan(float(clnp.var(x, correction=2)))
    assert math.isnan(float(clnp.std(x, correction=3)))


def test_float16_accumulates_in_float32(device):
    a = np.full(4096, 0.1, dtype=np.float16)
    x = clnp.asarray(a, device=device)
    s = clnp.sum(x)
    assert s.dtype == np.float16
    # float16 accumulation would stall at 256; float32 accumulation rounds once at the end
    assert float(s) == float(np.float16(np.sum(a.astype(np.float32))))
    check(clnp.mean(x), np.mean(a))
    check(clnp.max(x), np.max(a))


# ----------------------------------------------------------------------------- special values
def test_empty(device):
    fd = _real_float(device)
    for shape, axis in [((0,), None), ((0, 3), 0), ((0, 3), None), ((3, 0), 1), ((0, 3), 1)]:
        a = np.zeros(shape, fd)
        x = clnp.asarray(a, device=device)
        check(clnp.sum(x, axis=axis), np.sum(a, axis=axis))
        check(clnp.prod(x, axis=axis), np.prod(a, axis=axis))
        check(clnp.any(x, axis=axis), np.any(a, axis=axis))
        check(clnp.all(x, axis=axis), np.all(a, axis=axis))
        check(clnp.sum(x, axis=axis, keepdims=True), np.sum(a, axis=axis, keepdims=True))
    ai = np.zeros((0, 2), np.int16)
    check(clnp.sum(clnp.asarray(ai, device=device)), np.sum(ai))
    check(clnp.prod(clnp.asarray(ai, device=device), axis=0), np.prod(ai, axis=0))
    x = clnp.asarray(np.zeros((0, 3), fd), device=device)
    for op in (clnp.max, clnp.min):
        with pytest.raises(ValueError, match="zero-size"):
            op(x)
        with pytest.raises(ValueError, match=r"\(0, 3\)"):
            op(x, axis=0)
        check(op(x, axis=1), np.zeros((0,), fd))        # nothing to reduce per output
    m = clnp.mean(x)
    assert m.shape == () and math.isnan(float(m))
    m0 = clnp.mean(x, axis=0)
    assert m0.shape == (3,) and np.isnan(np.asarray(m0)).all()
    assert math.isnan(float(clnp.var(x)))


def test_nan_propagation(device):
    fd = _real_float(device)
    for dtype in {np.dtype(np.float32), fd}:
        a = np.arange(100, dtype=dtype).reshape(4, 25)
        a[0, 3] = np.nan      # early in a row
        a[2, 24] = np.nan     # last element of a row
        a[3, :] = np.nan      # an all-NaN row
        a[1, 10] = np.inf
        x = clnp.asarray(a, device=device)
        for op in ("max", "min"):
            check(getattr(clnp, op)(x, axis=1), getattr(np, op)(a, axis=1))
            check(getattr(clnp, op)(x, axis=0), getattr(np, op)(a, axis=0))
            assert math.isnan(float(getattr(clnp, op)(x)))
        b = np.array([-np.inf, 1.0, np.inf], dtype)
        check(clnp.max(clnp.asarray(b, device=device)), np.max(b))
        check(clnp.min(clnp.asarray(b, device=device)), np.min(b))
        check(clnp.sum(x, axis=1), np.sum(a, axis=1))
        check(clnp.any(x, axis=1), np.any(a, axis=1))   # NaN is true
        check(clnp.all(x, axis=1), np.all(a, axis=1))


def test_zero_d(device):
    fd = _real_float(device)
    for a in (np.array(2.5, fd), np.array(-3, np.int32), np.array(True)):
        x = clnp.asarray(a, device=device)
        for op in ("sum", "prod", "max", "min", "any", "all"):
            for axis in (None, ()):
                for keepdims in (False, True):
                    check(getattr(clnp, op)(x, axis=axis, keepdims=keepdims),
                          getattr(np, op)(a, axis=axis, keepdims=keepdims))
        with pytest.raises(IndexError):
            clnp.sum(x, axis=0)
    x = clnp.asarray(np.array(2.5, fd), device=device)
    check(clnp.mean(x), np.mean(np.array(2.5, fd)))
    check(clnp.var(x), np.array(0.0, fd))


# ----------------------------------------------------------------------------- layouts
def test_non_contiguous(device, rng):
    fd = _real_float(device)
    a = _data(fd, (6, 8), rng)
    x = clnp.asarray(a, device=device)
    views = [(x.T, a.T), (x[::2, ::-3], a[::2, ::-3]), (x[1:, 2:7], a[1:, 2:7]),
             (clnp.permute_dims(clnp.reshape(x, (2, 3, 8)), (2, 0, 1)),
              np.transpose(a.reshape(2, 3, 8), (2, 0, 1))),
             (clnp.broadcast_to(x[2], (5, 8)), np.broadcast_to(a[2], (5, 8)))]
    for xv, av in views:
        for axis in (None, 0, -1):
            check(clnp.sum(xv, axis=axis), np.sum(av, axis=axis))
            check(clnp.max(xv, axis=axis), np.max(av, axis=axis))
            check(clnp.mean(xv, axis=axis), np.mean(av, axis=axis))
    assert np.array_equal(np.asarray(x), a)         # inputs untouched


def test_inner_and_outer_axes(device, rng):
    a = _data("int32", (7, 33), rng)
    x = clnp.asarray(a, device=device)
    check(clnp.sum(x, axis=1), np.sum(a, axis=1))   # inner (contiguous) axis
    check(clnp.sum(x, axis=0), np.sum(a, axis=0))   # outer (strided) axis
    check(clnp.max(x.T, axis=1), np.max(a.T, axis=1))


def test_outer_axis_layouts(device, rng):
    """Reductions over outer axes with many outputs (one work-item per group of outputs),
    ragged output counts, split reduced ranges and non-mergeable strides."""
    fd = _real_float(device)
    a = _data(fd, (2048, 70), rng)
    x = clnp.asarray(a, device=device)
    for op in ("sum", "max", "min", "prod", "any", "all"):
        ref = getattr(np, op)(a if op != "prod" else a[:300], axis=0)
        check(getattr(clnp, op)(x if op != "prod" else x[:300], axis=0), ref, rtol=1e-9
              if fd == np.float64 else 1e-4)
    check(clnp.sum(x, axis=1), np.sum(a, axis=1))       # short rows: one item per output
    check(clnp.max(x[:, ::-3], axis=1), np.max(a[:, ::-3], axis=1))
    b = _data(fd, (32, 40, 70), rng)
    y = clnp.asarray(b, device=device)
    check(clnp.sum(y[::2], axis=(0, 1)), np.sum(b[::2], axis=(0, 1)))      # 2 reduced dims
    check(clnp.sum(y[:, :, :35], axis=0), np.sum(b[:, :, :35], axis=0))    # 2 kept dims
    check(clnp.max(y[::-1, :, ::-1], axis=0), np.max(b[::-1, :, ::-1], axis=0))
    ai = _data("int16", (600, 100), rng)
    check(clnp.sum(clnp.asarray(ai, device=device), axis=0), np.sum(ai, axis=0))
    ab = _data("bool", (300, 65), rng)
    check(clnp.any(clnp.asarray(ab, device=device), axis=0), np.any(ab, axis=0))
    check(clnp.all(clnp.asarray(ab, device=device), axis=0), np.all(ab, axis=0))


# ----------------------------------------------------------------------------- two-stage path
@pytest.fixture
def launches(monkeypatch):
    """Records ``parts`` of every reduction launch planned (parts > 1: the two-stage path;
    a single launch repeated with the same layouts is planned once)."""
    seen: list[int] = []
    orig = _eager._reduce_launch

    def spy(spec, x, y, n_out, parts, *rest):
        seen.append(parts)
        return orig(spec, x, y, n_out, parts, *rest)
    monkeypatch.setattr(_eager, "_reduce_launch", spy)
    return seen


def test_large_full_reduction(device, launches, rng):
    a = rng.random(1 << 20, dtype=np.float32)
    x = clnp.asarray(a, device=device)
    ref = np.sum(a.astype(np.float64))
    np.testing.assert_allclose(float(clnp.sum(x)), ref, rtol=1e-4)
    assert max(launches) > 1, "expected the two-stage path"
    np.testing.assert_allclose(float(clnp.mean(x)), ref / a.size, rtol=1e-4)
    a[777_777] = 3.0
    a[12] = -1.0
    x = clnp.asarray(a, device=device)
    assert float(clnp.max(x)) == 3.0
    assert float(clnp.min(x)) == -1.0
    ai = (a * 1000).astype(np.int32)
    a[500_000] = np.nan
    assert math.isnan(float(clnp.max(clnp.asarray(a, device=device))))
    check(clnp.sum(clnp.asarray(ai, device=device)), np.sum(ai))
    b = np.ones(1 << 20, dtype=bool)
    xb = clnp.asarray(b, device=device)
    assert bool(clnp.all(xb)) and bool(clnp.any(xb))
    b[999_999] = False
    assert not bool(clnp.all(clnp.asarray(b, device=device)))


def test_large_axis_reduction(device, launches, rng):
    a = rng.random((4, 1 << 18), dtype=np.float32)
    x = clnp.asarray(a, device=device)
    ref = np.sum(a.astype(np.float64), axis=1)
    check(clnp.sum(x, axis=1), ref.astype(np.float32), rtol=1e-4)
    assert max(launches) > 1, "expected the two-stage path"
    check(clnp.max(x, axis=1), np.max(a, axis=1))
    check(clnp.sum(x.T, axis=0), ref.astype(np.float32), rtol=1e-4)        # strided rows
    check(clnp.sum(x, axis=0), np.sum(a.astype(np.float64), axis=0).astype(np.float32),
          rtol=1e-5)                                                       # many outputs
    check(clnp.var(x, axis=1), np.var(a.astype(np.float64), axis=1).astype(np.float32),
          rtol=1e-3)


def test_gpu_launch_configuration(device, monkeypatch, rng):
    """The layouts chosen for GPUs (interleaved work-groups, small groups for short rows, one
    item per output, two stages), checked on whatever device runs the suite."""
    monkeypatch.setattr(device, "is_cpu", False)
    monkeypatch.setattr(device, "is_gpu", True)
    a = rng.random(1 << 16, dtype=np.float32)
    x = clnp.asarray(a, device=device)
    np.testing.assert_allclose(float(clnp.sum(x)), np.sum(a, dtype=np.float64), rtol=1e-5)
    assert float(clnp.max(x)) == a.max()
    b = _data("float32", (300, 70), rng)
    y = clnp.asarray(b, device=device)
    for axis in (0, 1):              # column layout; short rows
        check(clnp.sum(y, axis=axis), np.sum(b, axis=axis))
        check(clnp.min(y, axis=axis), np.min(b, axis=axis))
    c = _data("float32", (8, 5000), rng)
    check(clnp.sum(clnp.asarray(c, device=device), axis=1), np.sum(c, axis=1))
    e = _data("float32", (100, 700), rng)      # rows too short for a full work-group
    check(clnp.sum(clnp.asarray(e, device=device), axis=1), np.sum(e, axis=1))


# ----------------------------------------------------------------------------- errors
def test_errors(device):
    fd = _real_float(device)
    x = clnp.asarray(np.ones((2, 3), fd), device=device)
    c = clnp.asarray(np.ones(3, np.complex64), device=device)
    for op in (clnp.max, clnp.min):
        with pytest.raises(TypeError, match="complex64"):
            op(c)
    for op in (clnp.sum, clnp.prod, clnp.max, clnp.mean, clnp.var, clnp.any):
        with pytest.raises(TypeError):
            op(object())             # not array-like (NumPy arrays and lists are)
        with pytest.raises(IndexError, match="axis 2"):
            op(x, axis=2)
        with pytest.raises(IndexError):
            op(x, axis=(0, -3))
        with pytest.raises(ValueError, match="repeated"):
            op(x, axis=(1, -1))
        with pytest.raises(TypeError, match="axis"):
            op(x, axis=1.0)
    with pytest.raises(TypeError, match="sum.*U3"):
        clnp.sum(x, dtype=np.dtype("U3"))
    assert np.array_equal(np.asarray(x), np.ones((2, 3)))


# ----------------------------------------------------------------------------- properties
@st.composite
def _arrays_and_axes(draw):
    shape = tuple(draw(st.lists(st.integers(1, 6), min_size=0, max_size=3)))
    axes = draw(st.one_of(st.none(), st.lists(st.integers(0, max(len(shape) - 1, 0)),
                                              unique=True, max_size=len(shape)).map(tuple)))
    seed = draw(st.integers(0, 2 ** 16))
    return shape, axes, seed


@settings(max_examples=30, deadline=None)
@given(case=_arrays_and_axes(), keepdims=st.booleans())
def test_property_sum_max_mean(case, keepdims):
    shape, axes, seed = case
    device = clnp.default_device()
    if axes and not shape:
        axes = None
    a = np.random.default_rng(seed).standard_normal(shape).astype(_real_float(device))
    x = clnp.asarray(a, device=device)
    check(clnp.sum(x, axis=axes, keepdims=keepdims), np.sum(a, axis=axes, keepdims=keepdims))
    check(clnp.max(x, axis=axes, keepdims=keepdims), np.max(a, axis=axes, keepdims=keepdims))
    check(clnp.mean(x, axis=axes, keepdims=keepdims),
          np.mean(a, axis=axes, keepdims=keepdims))


_CINF = [1, complex(0, np.inf), complex(np.inf, 0), complex(np.inf, np.inf), 0, complex(1, 2),
         complex(-np.inf, 1), complex(0.5, -np.inf), -1j, complex(np.nan, 0), 2.5 - 1j,
         complex(0, -np.inf)]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_prod_of_infinities_matches_numpy(device, dtype):
    """NumPy's complex ``prod`` is ``1 * x0 * x1 * ...`` left to right with the plain complex
    product, so infinities give its own pattern of NaN and infinite components
    (``prod([1, infj])`` is ``nan+infj``; a tree of partial products gives ``nan+nanj``):
    clnp refolds the outputs that are not finite. Elementwise ``multiply`` is the same plain
    product (array, NumPy scalar and Python scalar operands)."""
    if not device.supports(np.dtype(dtype)):
        pytest.skip(f"{device} has no {dtype}")
    rng = np.random.default_rng(11)

    def same(got, want):
        np.testing.assert_array_equal(np.asarray(got), want)      # NaN equals NaN here

    a = np.array([1, 1j * np.inf], dtype)
    same(clnp.prod(clnp.asarray(a, device=device)).to_numpy(), np.prod(a))
    b = np.array([1, complex(0, np.inf)], dtype)
    same(clnp.prod(clnp.asarray(b, device=device)).to_numpy(), np.prod(b))
    assert np.isnan(np.prod(b).real) and np.isinf(np.prod(b).imag)
    for shape, axis in [((1,), None), ((2,), None), ((7,), None), ((300,), None),
                        ((3, 4), 0), ((3, 4), 1), ((6, 1), 1), ((2, 3, 40), (0, 2)),
                        ((50, 70), 0), ((50, 70), 1)]:
        for t in range(4):
            h = np.array(rng.choice(_CINF, shape), dtype)
            if t % 2:
                h[h == 0] = 1.5
            x = clnp.asarray(h, device=device)
            same(clnp.prod(x, axis=axis).to_numpy(), np.prod(h, axis=axis))
            same(clnp.multiply.reduce(x, axis=axis).to_numpy(),
                 np.multiply.reduce(h, axis=axis))
    pairs = np.array([[p, q] for p in _CINF for q in _CINF], dtype)
    x, y = (clnp.asarray(pairs[:, k].copy(), device=device) for k in (0, 1))
    same((x * y).to_numpy(), pairs[:, 0] * pairs[:, 1])
    for s in _CINF:
        same(clnp.multiply(x, np.dtype(dtype).type(s)).to_numpy(),
             np.multiply(pairs[:, 0], np.dtype(dtype).type(s)))
        same((x * s).to_numpy(), pairs[:, 0] * s)


def test_repeated_reductions_reuse_their_launch(device, monkeypatch, rng):
    """An eager reduction repeated with the same layouts is planned once and launched with
    the new buffers; other layouts, offsets and dtypes plan again, and every result is
    right."""
    planned: list[tuple] = []
    orig = _eager._reduce_launch

    def spy(spec, x, y, *rest):
        planned.append((x.shape, x.dtype))
        return orig(spec, x, y, *rest)
    monkeypatch.setattr(_eager, "_reduce_launch", spy)
    _eager._REDUCE_LAUNCHES.clear()
    a = rng.random((37, 11)).astype(np.float32)
    for k in range(3):
        x = clnp.asarray(a + k, device=device)
        check(clnp.sum(x, axis=0), np.sum(a + k, axis=0), rtol=1e-5)
    assert len(planned) == 1
    check(clnp.sum(clnp.asarray(a, device=device)[1:], axis=0), np.sum(a[1:], axis=0),
          rtol=1e-5)                                   # an offset: planned, not cached
    check(clnp.sum(clnp.asarray(a.T, device=device), axis=1), np.sum(a.T, axis=1), rtol=1e-5)
    check(clnp.max(clnp.asarray(a, device=device), axis=0), np.max(a, axis=0))
    assert len(planned) == 4
