"""unique_all / unique_counts / unique_inverse / unique_values, NumPy's unique, and isin against
NumPy: every dtype, NaNs distinct (the standard) or collapsed (NumPy's ``equal_nan``), signed
zeros as one value, flattening, non-contiguous and empty inputs, Python scalars in isin."""
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


def _data(dtype: str, shape, rng) -> np.ndarray:
    d = np.dtype(dtype)
    if d.kind == "b":
        return rng.random(shape) < 0.5
    if d.kind in "iu":
        a = rng.integers(0 if d.kind == "u" else -4, 5, shape).astype(d)
        a.flat[::11] = np.iinfo(d).max
        return a
    vals = np.array([0.0, -0.0, 1.5, -1.5, np.inf, -np.inf, np.nan, 2.0])
    if d.kind == "f":
        return rng.choice(vals, shape).astype(d)
    c = np.empty(shape, d)
    c.real, c.imag = rng.choice(vals, shape), rng.choice(vals[:4], shape)
    return c


def _np_unique(a: np.ndarray, equal_nan: bool):
    return np.unique(a, return_index=True, return_inverse=True, return_counts=True,
                     equal_nan=equal_nan)


def _eq(got, ref) -> None:
    got = np.asarray(got)
    assert got.shape == ref.shape and got.dtype == ref.dtype, (got.shape, ref.shape, got.dtype)
    np.testing.assert_array_equal(got, ref)


# ----------------------------------------------------------------------------- unique_*
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_unique_all_every_dtype(device, dtype, rng):
    _skip_unsupported(device, dtype)
    a = _data(dtype, (4, 45), rng)
    x = clnp.asarray(a, device=device)
    rv, ri, rinv, rc = _np_unique(a, equal_nan=False)
    r = clnp.unique_all(x)
    assert type(r).__name__ == "UniqueAllResult"
    assert r._fields == ("values", "indices", "inverse_indices", "counts")
    _eq(r.values, rv)
    _eq(r.indices, ri)
    _eq(r.inverse_indices, rinv)
    _eq(r.counts, rc)
    if np.dtype(dtype).kind in "fc":
        # every NaN is its own value with a count of one; signed zeros aggregate
        nan = np.isnan(np.asarray(r.values))
        assert nan.sum() == np.isnan(a).sum() and (np.asarray(r.counts)[nan] == 1).all()
        zero = np.asarray(r.values) == 0
        assert zero.sum() <= 1 and np.asarray(r.counts)[zero].sum() == (a == 0).sum()


@pytest.mark.parametrize("dtype", ["int32", "float32", "complex64"])
def test_unique_counts_inverse_values(device, dtype, rng):
    a = _data(dtype, (3, 5, 7), rng)
    x = clnp.asarray(a, device=device)
    rv, _, rinv, rc = _np_unique(a, equal_nan=False)
    c = clnp.unique_counts(x)
    assert c._fields == ("values", "counts")
    _eq(c.values, rv)
    _eq(c.counts, rc)
    inv = clnp.unique_inverse(x)
    assert inv._fields == ("values", "inverse_indices")
    _eq(inv.values, rv)
    _eq(inv.inverse_indices, rinv)
    assert inv.inverse_indices.shape == a.shape
    _eq(clnp.unique_values(x), rv)


def test_unique_reconstructs_input(device, rng):
    a = rng.integers(-50, 50, (30, 40)).astype(np.int64)
    x = clnp.asarray(a, device=device)
    r = clnp.unique_all(x)
    v, inv = np.asarray(r.values), np.asarray(r.inverse_indices)
    np.testing.assert_array_equal(v[inv], a)
    np.testing.assert_array_equal(a.reshape(-1)[np.asarray(r.indices)], v)


def test_unique_large(device, rng):
    a = rng.integers(0, 3000, 2 ** 16 + 5).astype(np.int32)
    x = clnp.asarray(a, device=device)
    rv, ri, rinv, rc = _np_unique(a, equal_nan=False)
    r = clnp.unique_all(x)
    _eq(r.values, rv)
    _eq(r.indices, ri)
    _eq(r.inverse_indices, rinv)
    _eq(r.counts, rc)
    f = (a / 7).astype(np.float32)
    _eq(clnp.unique_values(clnp.asarray(f, device=device)), np.unique(f))


def test_unique_non_contiguous_and_odd_shapes(device, rng):
    base = rng.integers(0, 6, (10, 12)).astype(np.int16)
    xb = clnp.asarray(base, device=device)
    for view, ref in ((xb[::3, 1::2], base[::3, 1::2]), (clnp.permute_dims(xb, (1, 0)), base.T)):
        r = clnp.unique_all(view)
        rv, ri, rinv, rc = _np_unique(ref, equal_nan=False)
        _eq(r.values, rv)
        _eq(r.indices, ri)
        _eq(r.inverse_indices, rinv)
        _eq(r.counts, rc)
    s = clnp.unique_all(clnp.asarray(np.int32(4), device=device))     # 0-d: flattened
    assert s.values.tolist() == [4] and s.inverse_indices.shape == ()
    assert int(s.inverse_indices) == 0 and s.counts.tolist() == [1]
    for shape in ((0,), (2, 0, 3)):
        e = clnp.unique_all(clnp.zeros(shape, dtype=clnp.float32, device=device))
        assert e.values.shape == (0,) and e.values.dtype == clnp.float32
        assert e.indices.shape == e.counts.shape == (0,)
        assert e.inverse_indices.shape == shape
        assert e.indices.dtype == e.counts.dtype == e.inverse_indices.dtype == clnp.int64


def test_numpy_unique_alias(device, rng):
    a = _data("float32", (60,), rng)
    x = clnp.asarray(a, device=device)
    _eq(clnp.unique(x), np.unique(a))                          # NaNs collapsed by default
    _eq(clnp.unique(x, equal_nan=False), np.unique(a, equal_nan=False))
    got = clnp.unique(x, return_index=True, return_inverse=True, return_counts=True)
    for g, r in zip(got, np.unique(a, True, True, True)):
        _eq(g, r)
    v, c = clnp.unique(x, return_counts=True)
    rv, rc = np.unique(a, return_counts=True)
    _eq(v, rv)
    _eq(c, rc)
    ci = _data("complex64", (40,), rng)
    _eq(clnp.unique(clnp.asarray(ci, device=device), return_counts=True)[1],
        np.unique(ci, return_counts=True)[1])
    _eq(clnp.unique(x, axis=0), np.unique(a, axis=0))            # 1-d: the flat unique


@pytest.mark.parametrize("dtype", ["float32", "int32", "uint8", "bool", "complex64"])
def test_numpy_unique_along_an_axis(device, dtype, rng):
    # the unique sub-arrays along an axis, sorted lexicographically; rows holding NaN are
    # distinct, -0.0 equals 0.0, the inverse is 1-D (NumPy's rules)
    if not device.supports(np.dtype(dtype)):
        pytest.skip(f"{device} has no {dtype}")
    base = _data(dtype, (4, 2, 3), rng)
    a = np.concatenate([base, base[::-1], base[:1]], axis=0)         # repeated sub-arrays
    a = np.concatenate([a, a[:, :1]], axis=1)
    x = clnp.asarray(a, device=device)
    for axis in (0, 1, 2, -1):
        got = clnp.unique(x, return_index=True, return_inverse=True, return_counts=True,
                          axis=axis)
        want = np.unique(a, return_index=True, return_inverse=True, return_counts=True,
                         axis=axis)
        for g, w in zip(got, want):
            _eq(g, w)
        _eq(clnp.unique(x, axis=axis), np.unique(a, axis=axis))
    for shape, axis in (((3, 0), 0), ((0, 3), 0), ((3, 0, 2), 2)):
        e = np.zeros(shape, dtype)
        for g, w in zip(clnp.unique(clnp.asarray(e, device=device), True, True, True, axis),
                        np.unique(e, True, True, True, axis)):
            _eq(g, w)
    with pytest.raises(np.exceptions.AxisError):
        clnp.unique(x, axis=3)
    with pytest.raises(np.exceptions.AxisError):
        clnp.unique(clnp.asarray(a[0, 0, 0], device=device), axis=0)


def test_unique_errors():
    for f in (clnp.unique_all, clnp.unique_counts, clnp.unique_inverse, clnp.unique_values):
        with pytest.raises(TypeError):
            f(object())


# ----------------------------------------------------------------------------- isin
@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int32", "uint64", "float16",
                                   "float64", "complex128"])
def test_isin_every_kind(device, dtype, rng):
    _skip_unsupported(device, dtype)
    a = _data(dtype, (5, 30), rng)
    b = _data(dtype, (9,), rng)
    x1, x2 = clnp.asarray(a, device=device), clnp.asarray(b, device=device)
    for invert in (False, True):
        _eq(clnp.isin(x1, x2, invert=invert), np.isin(a, b, invert=invert))


def test_isin_nan_and_zero(device):
    dtype = clnp.float64 if device.has_fp64 else clnp.float32
    a = np.array([np.nan, 0.0, -0.0, 1.0, np.inf], dtype)
    b = np.array([np.nan, -0.0, np.inf], dtype)
    got = clnp.isin(clnp.asarray(a, device=device), clnp.asarray(b, device=device))
    assert got.tolist() == [False, True, True, False, True]


def test_isin_promotes_and_takes_scalars(device, rng):
    a = rng.integers(-5, 5, (4, 6)).astype(np.int8)
    b = np.array([-3, 2, 300], np.int16)
    x1, x2 = clnp.asarray(a, device=device), clnp.asarray(b, device=device)
    _eq(clnp.isin(x1, x2), np.isin(a, b))
    _eq(clnp.isin(x2, x1, invert=True), np.isin(b, a, invert=True))
    _eq(clnp.isin(x1, 2), a == 2)
    r = clnp.isin(2, x1)
    assert r.shape == () and r.dtype == clnp.bool and bool(r) == (2 in a)
    assert bool(clnp.isin(-100, x1, invert=True))
    _eq(clnp.isin(x1, 1000), np.zeros(a.shape, bool))      # beyond int8: equal to nothing
    _eq(clnp.isin(x1, 1000, invert=True), np.ones(a.shape, bool))
    f = np.array([1.0, 2.5, -3.0])
    _eq(clnp.isin(x1, clnp.asarray(f, dtype=clnp.float32, device=device)), np.isin(a, f))


def test_isin_shapes_and_empty(device, rng):
    a = rng.integers(0, 4, (2, 3, 4)).astype(np.int32)
    x1 = clnp.asarray(a, device=device)
    empty = clnp.zeros((0,), dtype=clnp.int32, device=device)
    _eq(clnp.isin(x1, empty), np.zeros(a.shape, bool))
    _eq(clnp.isin(x1, empty, invert=True), np.ones(a.shape, bool))
    assert clnp.isin(empty, x1).shape == (0,)
    b = np.array([[1], [3]], np.int32)
    _eq(clnp.isin(x1[:, ::2, 1:], clnp.asarray(b, device=device)), np.isin(a[:, ::2, 1:], b))
    big = rng.integers(0, 10 ** 6, 2 ** 16 + 1)
    probe = rng.integers(0, 10 ** 6, 1000)
    _eq(clnp.isin(clnp.asarray(probe, device=device), clnp.asarray(big, device=device)),
        np.isin(probe, big))


def test_isin_errors_and_signature(device):
    import inspect
    ps = inspect.signature(clnp.isin).parameters
    assert ps["x1"].kind is ps["x2"].kind is inspect.Parameter.POSITIONAL_ONLY
    # NumPy's order (element, test_elements, assume_unique, invert), array-likes accepted
    assert ps["invert"].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    assert bool(clnp.isin(1, 2)) is False
    np.testing.assert_array_equal(
        clnp.isin(clnp.asarray([1.0, 3.0], device=device), [1, 2], False, True).to_numpy(),
        np.isin([1.0, 3.0], [1, 2], False, True))
    with pytest.raises(TypeError, match="isin"):
        clnp.isin(object(), [1, 2])


# ----------------------------------------------------------------------------- properties
@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_property_unique_and_isin(device, data):
    dtype = data.draw(st.sampled_from(["int16", "float32", "int64"]))
    d = np.dtype(dtype)
    elems = (st.sampled_from([0.0, -0.0, 1.0, -1.0, np.inf, np.nan, 2.5]) if d.kind == "f"
             else st.integers(-3, 3))
    a = np.array(data.draw(st.lists(elems, min_size=1, max_size=40)), d)
    b = np.array(data.draw(st.lists(elems, min_size=0, max_size=10)), d)
    x = clnp.asarray(a, device=device)
    r = clnp.unique_all(x)
    for g, ref in zip(r, _np_unique(a, equal_nan=False)):
        _eq(g, ref)
    invert = data.draw(st.booleans())
    _eq(clnp.isin(x, clnp.asarray(b, device=device), invert=invert),
        np.isin(a, b, invert=invert))
