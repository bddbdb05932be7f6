"""clnp.emath against numpy.emath (issue #25 item 6): the same dtype (decided by the values,
as in NumPy) and close values, for real inputs with negatives, zeros and |x| > 1, integers,
float32/float64, n-d arrays and scalars; through NumPy's dispatch too."""
from __future__ import annotations

import numpy as np
import pytest

import clnp

UNARY = ("sqrt", "log", "log2", "log10", "arccos", "arcsin", "arctanh")

VALUES = {
    "neg": [-4.0, -1.0, 0.0, 0.25, 2.0, 9.0],
    "nonneg": [0.0, 0.25, 1.0, 4.0],
    "unit": [-1.0, -0.5, 0.0, 0.5, 1.0],
    "big": [-3.0, -1.0, 0.0, 0.5, 1.5],
}
DTYPES = ("float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16")


def _needs(device, *dtypes):
    for d in dtypes:
        if not device.supports(np.dtype(d)):
            pytest.skip(f"{device} has no {d}")


def _check(got, want, dtype_of_input=None):
    got_np = clnp.asnumpy(got)
    want = np.asarray(want)
    assert got_np.dtype == want.dtype, (got_np.dtype, want.dtype)
    assert got_np.shape == want.shape
    rtol = 1e-3 if want.dtype in (np.float16, np.float32, np.complex64) else 1e-10
    np.testing.assert_allclose(got_np, want, rtol=rtol, atol=rtol, equal_nan=True)


def _host(values, dtype):
    a = np.array(values)
    if np.dtype(dtype).kind in "iu":
        a = np.trunc(a)
        if np.dtype(dtype).kind == "u":
            a = np.abs(a)
    return a.astype(dtype)


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("kind", sorted(VALUES))
@pytest.mark.parametrize("dtype", DTYPES)
def test_unary_matches_numpy(device, name, kind, dtype):
    host = _host(VALUES[kind], dtype)
    with np.errstate(all="ignore"):
        want = getattr(np.emath, name)(host)
    _needs(device, host.dtype, want.dtype)
    with np.errstate(all="ignore"):
        got = getattr(clnp.emath, name)(clnp.asarray(host, device=device))
    _check(got, want)


@pytest.mark.parametrize("name", UNARY)
def test_unary_nd_and_scalars(device, name):
    _needs(device, np.float64, np.complex128)
    host = np.linspace(-2.5, 2.5, 24).reshape(2, 3, 4)
    with np.errstate(all="ignore"):
        _check(getattr(clnp.emath, name)(clnp.asarray(host, device=device)),
               getattr(np.emath, name)(host))
    for scalar in (-2.0, 0.5, 3, -1, 1.0):
        with np.errstate(all="ignore"):
            want = getattr(np.emath, name)(scalar)
            got = getattr(clnp.emath, name)(scalar)
        assert got.ndim == 0
        _check(got, want)
    # lists, and complex input passing through unchanged
    _check(getattr(clnp.emath, name)([-2.0, 0.5]), getattr(np.emath, name)([-2.0, 0.5]))
    c = np.array([-2 + 1j, 0.5 - 0.25j], dtype=np.complex64)
    _check(getattr(clnp.emath, name)(clnp.asarray(c, device=device)),
           getattr(np.emath, name)(c))


def test_the_whole_array_becomes_complex(device):
    """One negative element makes every element complex (NumPy's value-based rule)."""
    _needs(device, np.float64, np.complex128)
    x = clnp.asarray(np.array([[4.0, 9.0], [16.0, -1.0]]), device=device)
    r = clnp.emath.sqrt(x)
    assert r.dtype == np.complex128
    np.testing.assert_allclose(clnp.asnumpy(r), [[2, 3], [4, 1j]])
    assert clnp.emath.sqrt(clnp.abs(x)).dtype == np.float64
    f32 = clnp.asarray(np.array([-1.0, 1.0], dtype=np.float32), device=device)
    assert clnp.emath.log(f32).dtype == np.complex64
    assert clnp.emath.arcsin(f32).dtype == np.float32


@pytest.mark.parametrize("dtype", ("float32", "float64", "int32", "int8"))
def test_logn(device, dtype):
    x = _host([-8.0, -1.0, 1.0, 4.0, 8.0], dtype)
    for n in (2, 2.0, -2.0, np.array([2.0, 3.0, -10.0, 4.0, 0.5], dtype=np.float32)):
        want = np.emath.logn(n, x)
        _needs(device, x.dtype, want.dtype)
        nn = clnp.asarray(n, device=device) if isinstance(n, np.ndarray) else n
        _check(clnp.emath.logn(nn, clnp.asarray(x, device=device)), want)
    _check(clnp.emath.logn(3, 9.0), np.emath.logn(3, 9.0))


@pytest.mark.parametrize("dtype", ("float32", "float64", "int32", "int64", "int8"))
def test_power(device, dtype):
    x = _host([-4.0, -1.0, 0.0, 2.0, 4.0], dtype)
    for p in (2, 0.5, -2, 3.0, np.array([2, -1, 1, -2, 0], dtype=np.int32),
              np.array([0.5, 2.0, 1.0, -0.5, 3.0], dtype=np.float32)):
        with np.errstate(all="ignore"):
            want = np.emath.power(x, p)
        _needs(device, x.dtype, want.dtype)
        pp = clnp.asarray(p, device=device) if isinstance(p, np.ndarray) else p
        with np.errstate(all="ignore"):
            got = clnp.emath.power(clnp.asarray(x, device=device), pp)
        _check(got, want)
    _check(clnp.emath.power(2, -2), np.emath.power(2, -2))
    _check(clnp.emath.power(-8.0, 1 / 3), np.emath.power(-8.0, 1 / 3))


def test_numpy_dispatch(device):
    """numpy.emath's functions dispatch through __array_function__ to clnp.emath."""
    _needs(device, np.float64, np.complex128)
    host = np.array([-4.0, 0.0, 0.5, 2.0])
    x = clnp.asarray(host, device=device)
    for name in UNARY:
        with np.errstate(all="ignore"):
            got = getattr(np.emath, name)(x)
            want = getattr(np.emath, name)(host)
        assert isinstance(got, clnp.Array), name
        _check(got, want)
    got = np.emath.logn(2, x)
    assert isinstance(got, clnp.Array)
    with np.errstate(all="ignore"):
        _check(got, np.emath.logn(2, host))
        _check(np.emath.power(x, 0.5), np.emath.power(host, 0.5))


def test_namespace_and_errors():
    assert clnp.emath.__all__ == ["sqrt", "log", "log2", "log10", "logn", "power", "arccos",
                                  "arcsin", "arctanh"]
    assert sorted(clnp.emath.__all__) == sorted(np.emath.__all__)
    import importlib
    assert importlib.import_module("clnp.emath") is clnp.emath
    with pytest.raises(TypeError, match=r"emath\.logn"):
        clnp.emath.logn(2, "x")
    with pytest.raises(TypeError, match=r"emath\.sqrt"):
        clnp.emath.sqrt("x")
