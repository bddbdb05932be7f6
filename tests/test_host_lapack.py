"""clnp.linalg against LAPACK exactly where code compares exactly (issue #25): on devices
sharing host memory the SVD and eigensolvers are NumPy's LAPACK on the buffers
(clnp._routines.host_lapack); elsewhere the kernels' eigenvalues of real matrices are made
exactly real or exactly conjugate (clnp.linalg._conjugate_pairs). Both paths run here: the
kernels' with ``CLNP_HOST_LAPACK=0``."""
from __future__ import annotations

import numpy as np
import pytest

import clnp
import clnp_grad
from clnp._routines import host_lapack

RNG = np.random.default_rng(7)
A = RNG.standard_normal((3, 6, 6))
S = A + np.swapaxes(A, -1, -2)


def _host(device) -> bool:
    return device.shares_host_memory and host_lapack.enabled()


def _need64(device):
    if not device.has_fp64:
        pytest.skip("device has no float64")


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_decompositions_are_numpys_exactly_on_host_memory(device, dtype):
    if not _host(device):
        pytest.skip("the kernels run on this device (tested below up to sign and phase)")
    if not device.supports(np.dtype(dtype)):
        pytest.skip(f"{device} has no {dtype}")
    a = (A + 1j * A[::-1] if np.dtype(dtype).kind == "c" else A).astype(dtype)
    x = clnp.asarray(a, device=device)
    for got, want in ((clnp.linalg.svd(x), np.linalg.svd(a)),
                      (clnp.linalg.svd(x, full_matrices=False), np.linalg.svd(a, False)),
                      ((clnp.linalg.svdvals(x),), (np.linalg.svd(a, compute_uv=False),))):
        for g, w in zip(got, want):
            assert np.array_equal(g.to_numpy(), w)
    h = (a + np.conj(np.swapaxes(a, -1, -2))) / 2
    xh = clnp.asarray(h, device=device)
    for g, w in zip(clnp.linalg.eigh(xh), np.linalg.eigh(h)):
        assert np.array_equal(g.to_numpy(), w)
    assert np.array_equal(clnp.linalg.eigvalsh(xh).to_numpy(), np.linalg.eigvalsh(h))
    w, v = clnp.linalg.eig(x)
    ww, wv = np.linalg.eig(a)
    assert np.array_equal(w.to_numpy(), ww.astype(w.dtype))
    assert np.array_equal(v.to_numpy(), wv.astype(v.dtype))


def test_roots_and_conjugate_pairs_exact(device, monkeypatch):
    _need64(device)
    for host_path in ("1", "0"):
        monkeypatch.setenv(host_lapack.ENV, host_path)
        r = clnp.roots(clnp.asarray([1.0, 0.0, 1.0], device=device)).to_numpy()
        lo, hi = sorted(r.tolist(), key=lambda z: z.imag)
        assert lo == np.conj(hi) and abs(hi - 1j) < 1e-15, (host_path, r)
        if host_path == "1" and _host(device):
            assert (lo, hi) == (-1j, 1j)         # LAPACK's 2x2 block: exactly ±1j
        x = clnp.asarray(A, device=device)
        w, v = clnp.linalg.eig(x)
        w, v = w.to_numpy(), v.to_numpy()
        for k in range(A.shape[0]):
            wk = w[k]
            # every eigenvalue is real or has its exact conjugate among the others
            for i, z in enumerate(wk):
                assert z.imag == 0 or np.conj(z) in np.delete(wk, i), (host_path, wk)
            assert np.allclose(np.sort_complex(wk), np.sort_complex(np.linalg.eigvals(A[k])),
                               atol=1e-10)
            np.testing.assert_allclose(A[k] @ v[k], v[k] * wk, atol=1e-10)
        assert np.array_equal(clnp.linalg.eigvals(x).to_numpy(), w)


def test_host_path_errors_as_the_kernels(device):
    _need64(device)
    a = np.stack([A[0], np.full((6, 6), np.nan)])
    x = clnp.asarray(a, device=device)
    with pytest.raises(np.linalg.LinAlgError, match=r"linalg.svd: SVD did not converge "
                                                    r"\(matrix \(1,\) of the batch"):
        clnp.linalg.svd(x)
    with pytest.raises(np.linalg.LinAlgError, match="must not contain infs or NaNs"):
        clnp.linalg.eigvals(x)
    # traced, failures are NaN and nothing raises (the kernels run under jit)
    s = clnp_grad.jit(clnp.linalg.svdvals)(x).to_numpy()
    assert np.isnan(s[1]).any() and np.allclose(s[0], np.linalg.svd(A[0], compute_uv=False))


def test_results_without_vectors_under_jit(device):
    """eigvalsh, svdvals and eigvals have no vectors: the staged primitive's absent result
    (once an AttributeError under jit)."""
    _need64(device)
    x = clnp.asarray(S[0], device=device)
    for f, ref in ((clnp.linalg.eigvalsh, np.linalg.eigvalsh(S[0])),
                   (clnp.linalg.svdvals, np.linalg.svd(S[0], compute_uv=False)),
                   (lambda m: clnp.linalg.qr(m, mode="r"), np.linalg.qr(S[0], mode="r"))):
        got = clnp_grad.jit(f)(x).to_numpy()
        np.testing.assert_allclose(np.abs(got), np.abs(ref), atol=1e-10)
    got = np.sort_complex(clnp_grad.jit(clnp.linalg.eigvals)(x).to_numpy())
    np.testing.assert_allclose(got, np.sort_complex(np.linalg.eigvals(S[0])), atol=1e-10)
