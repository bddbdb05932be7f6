"""fft (complex-to-complex) rules: JVP equals the transform of the tangent; the VJP satisfies
the (bilinear, JAX-convention) inner-product identity <ct, J t> = <J^T ct, t>."""
from __future__ import annotations

import numpy as np
import pytest

import clnp
import clnp_grad as cg


@pytest.mark.parametrize("n", [8, 5, 12])
@pytest.mark.parametrize("inverse", [False, True])
def test_fft_rules(n, inverse, device, rng):
    cdt = clnp.complex128 if device.has_fp64 else clnp.complex64
    tol = 1e-10 if device.has_fp64 else 1e-4
    X = rng.random((3, 8)) + 1j * rng.random((3, 8))
    T = rng.random((3, 8)) + 1j * rng.random((3, 8))
    CT = rng.random((3, n)) + 1j * rng.random((3, n))
    x = clnp.asarray(X, dtype=cdt, device=device)
    if inverse:
        def f(z):
            return clnp.fft.ifft(z, n=n, norm="ortho")
        ref = np.fft.ifft(T, n=n, norm="ortho")
    else:
        def f(z):
            return clnp.fft.fft(z, n=n)
        ref = np.fft.fft(T, n=n)
    _, jt = cg.jvp(f, (x,), (clnp.asarray(T, dtype=cdt, device=device),))
    np.testing.assert_allclose(np.asarray(jt), ref, rtol=tol, atol=tol)
    _, f_vjp = cg.vjp(f, x)
    (g,) = f_vjp(clnp.asarray(CT, dtype=cdt, device=device))
    np.testing.assert_allclose(np.sum(CT * ref), np.sum(np.asarray(g) * T), rtol=tol)
