"""sort / argsort against NumPy's stable sort: every dtype, any axis, descending order (stable:
ties keep their input order; NaNs first), NaN/inf/-0.0, complex order, empty inputs, long rows
and many short rows, non-contiguous inputs.

Every dtype sorts with one of two OpenCL programs (32- or 64-bit keys), so the cost of the
file is mostly two builds per device.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import clnp

ALL_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
              "float16", "float32", "float64", "complex64", "complex128"]


def _skip_unsupported(device, dtype):
    if not device.supports(np.dtype(dtype)):
        pytest.skip(f"{dtype} unsupported on {device}")


def ref_argsort(a: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """NumPy's stable argsort; descending as the standard asks for it: the reverse order by
    value with ties in input order (NumPy has no descending sort; this is array-api-strict's
    construction, which puts NaNs first)."""
    if not descending:
        return np.argsort(a, axis=axis, kind="stable")
    n = a.shape[axis]
    return n - 1 - np.flip(np.argsort(np.flip(a, axis), axis=axis, kind="stable"), axis)


def assert_same(got: np.ndarray, ref: np.ndarray) -> None:
    """Equal values, NaN where NaN, and the sign of every zero (sorting moves elements; it
    never changes them)."""
    assert got.shape == ref.shape and got.dtype == ref.dtype, (got.shape, got.dtype, ref.dtype)
    np.testing.assert_array_equal(got, ref)
    if ref.dtype.kind in "fc":
        for part in ((np.real, np.imag) if ref.dtype.kind == "c" else (lambda v: v,)):
            np.testing.assert_array_equal(np.signbit(part(got)) | np.isnan(part(got)),
                                          np.signbit(part(ref)) | np.isnan(part(ref)))


def check(x: clnp.Array, a: np.ndarray, axis: int = -1, descending: bool = False) -> None:
    ref = ref_argsort(a, axis, descending)
    idx = clnp.argsort(x, axis=axis, descending=descending)
    assert idx.dtype == clnp.int64 and idx.shape == a.shape
    np.testing.assert_array_equal(np.asarray(idx), ref)
    s = clnp.sort(x, axis=axis, descending=descending)
    assert_same(np.asarray(s), np.take_along_axis(a, ref, axis))


def _special(dtype: str, shape, rng) -> np.ndarray:
    """Values with many ties, and for floats NaN, +-inf and both zeros."""
    d = np.dtype(dtype)
    if d.kind == "b":
        return rng.random(shape) < 0.5
    if d.kind in "iu":
        info = np.iinfo(d)
        a = rng.integers(0 if d.kind == "u" else -3, 4, shape).astype(d)
        a.flat[::13] = info.max
        a.flat[5::17] = info.min
        return a
    vals = np.array([0.0, -0.0, 1.5, -1.5, np.inf, -np.inf, np.nan, 2.0, -2.0, 1e-3])
    if d.kind == "f":
        return rng.choice(vals, shape).astype(d)
    c = np.empty(shape, d)
    c.real, c.imag = rng.choice(vals, shape), rng.choice(vals, shape)
    return c


# ----------------------------------------------------------------------------- every dtype
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_every_dtype_both_orders_both_axes(device, dtype, rng):
    _skip_unsupported(device, dtype)
    a = _special(dtype, (3, 301), rng)
    x = clnp.asarray(a, device=device)
    for axis in (-1, 0):
        for desc in (False, True):
            check(x, a, axis, desc)


def test_descending_is_stable_not_flipped(device):
    a = np.array([1, 0, 1, 2, 0, 1], np.int32)
    x = clnp.asarray(a, device=device)
    assert clnp.argsort(x, descending=True).tolist() == [3, 0, 2, 5, 1, 4]
    assert clnp.argsort(x).tolist() == [1, 4, 0, 2, 5, 3]
    assert clnp.sort(x, descending=True).tolist() == [2, 1, 1, 1, 0, 0]


def test_nan_and_signed_zero_order(device):
    dtype = clnp.float64 if device.has_fp64 else clnp.float32
    a = np.array([np.nan, 0.0, -np.inf, -0.0, np.inf, -np.nan, 1.0, -0.0], dtype)
    x = clnp.asarray(a, device=device)
    # NaNs last ascending, first descending; zeros tie (input order kept both ways)
    assert clnp.argsort(x).tolist() == [2, 1, 3, 7, 6, 4, 0, 5]
    assert clnp.argsort(x, descending=True).tolist() == [0, 5, 4, 6, 1, 3, 7, 2]
    check(x, a)
    check(x, a, descending=True)


def test_complex_order_is_numpys(device):
    dtype = clnp.complex128 if device.has_fp64 else clnp.complex64
    n = np.nan
    a = np.array([complex(n, n), complex(2, n), complex(n, 1), complex(1, n), complex(n, 0),
                  complex(3, 0), complex(0, 5), complex(0, 1), complex(n, -1), complex(-1, n),
                  complex(0, -0.0), complex(-0.0, 0)], dtype)
    x = clnp.asarray(a, device=device)
    check(x, a)
    check(x, a, descending=True)


@pytest.mark.parametrize("dtype", ["int64", "uint64", "float32"])
def test_extreme_values(device, dtype):
    d = np.dtype(dtype)
    if d.kind == "f":
        fi = np.finfo(d)
        vals = [fi.max, -fi.max, fi.tiny, -fi.tiny, fi.smallest_subnormal,
                -fi.smallest_subnormal, 0.0, -0.0, np.inf, -np.inf, np.nan, 1.0]
    else:
        ii = np.iinfo(d)
        vals = [ii.max, ii.min, ii.max - 1, ii.min + 1, 0, 1, 2 ** 31, 2 ** 32 + 5, 7]
    a = np.array(vals * 3, d)[::-1].copy()
    x = clnp.asarray(a, device=device)
    check(x, a)
    check(x, a, descending=True)


# ----------------------------------------------------------------------------- shapes
def test_all_axes_of_3d(device, rng):
    a = rng.integers(-5, 5, (4, 5, 6)).astype(np.int32)
    x = clnp.asarray(a, device=device)
    for axis in (0, 1, 2, -2):
        for desc in (False, True):
            check(x, a, axis, desc)


def test_long_rows(device, rng):
    # ties (quarters) over 2**16 + 3 elements: tiles, several digit passes, stability
    a = (rng.integers(-2000, 2000, 2 ** 16 + 3) / 4).astype(np.float32)
    x = clnp.asarray(a, device=device)
    check(x, a)
    check(x, a, descending=True)
    b = rng.integers(-2 ** 62, 2 ** 62, 2 ** 16 + 3)   # every byte of the int64 keys differs
    check(clnp.asarray(b, device=device), b)


def test_many_short_rows(device, rng):
    a = rng.integers(-3, 3, (6000, 3)).astype(np.int16)
    x = clnp.asarray(a, device=device)
    check(x, a, -1)
    check(x, a, -1, True)
    check(x, a, 0)            # three long columns
    # 64-bit keys with many rows: the row is a key component of its own
    b = rng.integers(-3, 3, (3000, 5)).astype(np.int64)
    check(clnp.asarray(b, device=device), b, -1, True)


def test_rows_of_one_and_single_row(device):
    a = np.array([[3], [1], [2]], np.int32)
    x = clnp.asarray(a, device=device)
    check(x, a, -1)
    check(x, a, 0, True)


def test_non_contiguous_inputs(device, rng):
    base = rng.integers(-4, 4, (12, 20)).astype(np.int32)
    xb = clnp.asarray(base, device=device)
    for view, ref in ((xb[::2, 1::3], base[::2, 1::3]),
                      (clnp.permute_dims(xb, (1, 0)), base.T),
                      (xb[::-1, ::-2], base[::-1, ::-2])):
        for axis in (0, 1):
            check(view, ref, axis, axis == 1)


def test_input_is_not_modified(device, rng):
    a = rng.integers(0, 9, 50).astype(np.int32)
    x = clnp.asarray(a, device=device)
    clnp.sort(x)
    clnp.argsort(x, descending=True)
    np.testing.assert_array_equal(np.asarray(x), a)


def test_empty_and_constant(device):
    for shape in ((0,), (3, 0), (0, 4)):
        x = clnp.zeros(shape, dtype=clnp.float32, device=device)
        for axis in (0, -1):
            s, i = clnp.sort(x, axis=axis), clnp.argsort(x, axis=axis)
            assert s.shape == shape and s.dtype == clnp.float32
            assert i.shape == shape and i.dtype == clnp.int64
    c = clnp.full((2, 40), 7, dtype=clnp.int32, device=device)   # no digit differs
    np.testing.assert_array_equal(np.asarray(clnp.argsort(c, descending=True)),
                                  np.tile(np.arange(40), (2, 1)))
    assert clnp.sort(c).tolist() == [[7] * 40] * 2


def test_errors(device):
    x = clnp.asarray(3.0, device=device)
    for f in (clnp.sort, clnp.argsort):
        with pytest.raises(IndexError, match="axis"):
            f(x)                                  # 0-d: no valid axis
        with pytest.raises(IndexError, match="axis"):
            f(clnp.ones((2, 3), device=device), axis=2)
        with pytest.raises(TypeError, match="axis"):
            f(clnp.ones((2, 3), device=device), axis=1.0)
        with pytest.raises(TypeError):
            f(object())
        # NumPy's positional axis and kind= (issue #12)
        y = clnp.asarray(np.asarray([[3.0, 1.0, 2.0]]), device=device)
        np.testing.assert_array_equal(f(y, 1, kind="stable").to_numpy(),
                                      getattr(np, f.__name__)(np.asarray([[3.0, 1.0, 2.0]]),
                                                              1, kind="stable"))
        with pytest.raises(ValueError, match="kind"):
            f(y, kind="bogus")
        with pytest.raises(TypeError, match="structured"):
            f(y, order="a")


def test_signatures():
    import inspect
    for f in (clnp.sort, clnp.argsort):
        ps = inspect.signature(f).parameters
        assert ps["x"].kind is inspect.Parameter.POSITIONAL_ONLY
        # NumPy's order: axis, kind, order positional; the standard's keywords after them
        assert [k for k, p in ps.items() if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD] \
            == ["axis", "kind", "order"]
        assert all(ps[k].kind is inspect.Parameter.KEYWORD_ONLY
                   for k in ("descending", "stable"))
        assert (ps["axis"].default, ps["descending"].default, ps["stable"].default) == \
            (-1, False, True)


# ----------------------------------------------------------------------------- properties
@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_property_matches_numpy(device, data):
    dtype = data.draw(st.sampled_from(["int8", "uint16", "int32", "float32", "int64"]))
    shape = data.draw(st.lists(st.integers(1, 9), min_size=1, max_size=3).map(tuple))
    n = int(np.prod(shape))
    d = np.dtype(dtype)
    if d.kind == "f":
        elems = st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5, np.inf, -np.inf, np.nan, 3.25])
    else:
        info = np.iinfo(d)
        elems = st.one_of(st.integers(-2, 2).filter(lambda v: v >= info.min),
                          st.sampled_from([int(info.min), int(info.max)]))
    a = np.array(data.draw(st.lists(elems, min_size=n, max_size=n)), d).reshape(shape)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    desc = data.draw(st.booleans())
    check(clnp.asarray(a, device=device), a, axis, desc)
