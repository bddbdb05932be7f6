"""diff against NumPy on every device."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import clnp


def _check(r, e):
    e = np.asarray(e)
    assert r.shape == e.shape and r.dtype == e.dtype, (r.shape, r.dtype, e.shape, e.dtype)
    np.testing.assert_array_equal(r.to_numpy(), e)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int64", "float32", "float64",
                                   "complex64", "bool"])
def test_diff_dtypes(device, rng, dtype):
    if not device.supports(np.dtype(dtype)):
        pytest.skip("dtype not supported on device")
    d = np.dtype(dtype)
    a = rng.integers(0, 50, (4, 9)).astype(d)          # uint8 differences wrap around
    if d.kind == "c":
        a = a + 1j * rng.integers(0, 5, a.shape).astype(d)
    x = clnp.asarray(a, device=device)
    for n in (0, 1, 2, 3):
        _check(clnp.diff(x, n=n), np.diff(a, n=n))
        _check(clnp.diff(x, axis=0, n=n), np.diff(a, axis=0, n=n))


def test_diff_axes_and_views(device, rng):
    a = rng.integers(-9, 9, (3, 5, 6)).astype(np.int32)
    x = clnp.asarray(a, device=device)
    for axis in (0, 1, 2, -1, -3):
        _check(clnp.diff(x, axis=axis), np.diff(a, axis=axis))
    _check(clnp.diff(clnp.permute_dims(x, (2, 0, 1)), axis=1, n=2),
           np.diff(a.transpose(2, 0, 1), axis=1, n=2))
    _check(clnp.diff(x[:, ::-2, 1::2], axis=1), np.diff(a[:, ::-2, 1::2], axis=1))
    # n at or beyond the axis length leaves an empty axis
    _check(clnp.diff(x, axis=0, n=3), np.diff(a, axis=0, n=3))
    _check(clnp.diff(x, axis=0, n=7), np.diff(a, axis=0, n=7))
    e = np.zeros((0, 4), np.int32)
    _check(clnp.diff(clnp.asarray(e, device=device)), np.diff(e))
    _check(clnp.diff(clnp.asarray(e, device=device), axis=0), np.diff(e, axis=0))


def test_diff_prepend_append(device, rng):
    a = rng.integers(-9, 9, (3, 4)).astype(np.int64)
    p = rng.integers(-9, 9, (3, 2)).astype(np.int64)
    q = rng.integers(-9, 9, (3, 5)).astype(np.int64)
    x, P, Q = (clnp.asarray(v, device=device) for v in (a, p, q))
    _check(clnp.diff(x, prepend=P), np.diff(a, prepend=p))
    _check(clnp.diff(x, append=Q, n=2), np.diff(a, append=q, n=2))
    _check(clnp.diff(x, prepend=P, append=Q, n=3), np.diff(a, prepend=p, append=q, n=3))
    r = rng.integers(-9, 9, (1, 4)).astype(np.int64)
    _check(clnp.diff(x, axis=0, prepend=clnp.asarray(r, device=device)),
           np.diff(a, axis=0, prepend=r))
    # Python scalars are broadcast to one slice along the axis (NumPy)
    _check(clnp.diff(x, prepend=0, append=5), np.diff(a, prepend=0, append=5))
    _check(clnp.diff(x, axis=0, append=-1), np.diff(a, axis=0, append=-1))
    # other dtypes are promoted
    f = rng.standard_normal((3, 1)).astype(np.float32)
    _check(clnp.diff(clnp.asarray(a.astype(np.int16), device=device),
                     append=clnp.asarray(f, device=device)),
           np.diff(a.astype(np.int16), append=f))


def test_diff_errors(device):
    x = clnp.ones((3, 4), dtype=clnp.float32, device=device)
    with pytest.raises(ValueError, match="shape"):
        clnp.diff(x, prepend=clnp.ones((2, 4), dtype=clnp.float32, device=device))
    with pytest.raises(ValueError, match="shape"):
        clnp.diff(x, append=clnp.ones((3,), dtype=clnp.float32, device=device))
    with pytest.raises(ValueError, match="0-d"):
        clnp.diff(clnp.asarray(1.0, device=device))
    with pytest.raises(ValueError, match="non-negative"):
        clnp.diff(x, n=-1)
    with pytest.raises(TypeError):
        clnp.diff(x, n=1.5)
    with pytest.raises(IndexError):
        clnp.diff(x, axis=2)
    with pytest.raises(TypeError):
        clnp.diff(x, append="a")
    with pytest.raises(TypeError):
        clnp.diff(object())


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape=st.lists(st.integers(1, 6), min_size=1, max_size=3), data=st.data())
def test_diff_hypothesis(device, shape, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16)))
    a = rng.integers(-20, 20, tuple(shape)).astype(np.int32)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    n = data.draw(st.integers(0, 4))
    _check(clnp.diff(clnp.asarray(a, device=device), axis=axis, n=n), np.diff(a, axis=axis, n=n))
