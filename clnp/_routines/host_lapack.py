"""LAPACK, through NumPy, on the memory of devices that share it with the host.

On PoCL's CPU device a clnp buffer *is* host memory (``Device.shares_host_memory``): NumPy's
``linalg`` can read it in place once the queued work has finished. There the SVD and the
eigensolvers run in NumPy's LAPACK instead of clnp's OpenCL kernels, for two reasons (issue
#25):

- **NumPy's exact results.** Singular vectors and eigenvectors are defined up to sign or
  phase, and conjugate pairs of eigenvalues are exact conjugates only where the real
  driver (``dgeev``) works on 2x2 blocks. Code tuned to LAPACK compares them exactly:
  scikit-learn's LDA, ``scipy.cluster``'s ``kmeans2`` initialisation, ``scipy.signal``'s
  filter design (``np.roots([1, 0, 1])`` is ``±1j`` in LAPACK, ``±0.9999999999999998j`` by
  a complex QR iteration).
- **Speed.** LAPACK's blocked algorithms on the host's BLAS beat the kernels on the same
  cores (measured in bench/NOTES.md, "Linear algebra on the CPU device").

It applies to eager evaluation only: not while a launch capture records (a jitted step's
replay cannot contain a host computation), and to the dtypes LAPACK has (float32, float64,
complex64, complex128). ``CLNP_HOST_LAPACK=0`` turns it off (the kernels then run, as on
every other device). A matrix LAPACK fails on (no convergence, NaN or inf) gets NaN results
and a failing status, which eager namespace calls turn into ``LinAlgError`` as the kernels'
statuses are (clnp._routines.linalg_status).
"""
from __future__ import annotations

import os
from typing import Any, Callable

import numpy as np

from .._core import dtypes as dt
from .._core.array import Array, _shared_host_view
from .._runtime import capture_hooks as _hooks
from .linalg_status import note

ENV = "CLNP_HOST_LAPACK"       # the switch (read by enabled())
_DTYPES = (dt.float32, dt.float64, dt.complex64, dt.complex128)


def enabled() -> bool:
    """Whether ``CLNP_HOST_LAPACK`` allows the host path (anything but ``0``; default on).

    Examples
    --------
    >>> from clnp._routines.host_lapack import enabled
    >>> isinstance(enabled(), bool)
    True
    """
    return os.environ.get("CLNP_HOST_LAPACK", "1") != "0"


def applies(x: Array) -> bool:
    """Whether the decomposition of ``x`` runs in NumPy's LAPACK on its host memory."""
    return (x.size > 0 and x._device.shares_host_memory and x._dtype in _DTYPES
            and _hooks.current() is None and enabled())


def _per_matrix(fn: Callable[[np.ndarray], tuple], host: np.ndarray,
                shapes: list[tuple[tuple[int, ...], np.dtype]]) -> tuple[list, np.ndarray]:
    """``fn`` on the whole stack ``host`` (NumPy's batched call); where LAPACK fails on a
    matrix, the matrices one by one, the failed ones NaN. Returns the results and one status
    per matrix (1: failed)."""
    batch = host.shape[:-2]
    info = np.zeros(max(int(np.prod(batch)), 1), np.int32)
    try:
        return list(fn(host)), info
    except np.linalg.LinAlgError:
        pass
    outs = [np.full(batch + s, np.nan, d) for s, d in shapes]
    for k, idx in enumerate(np.ndindex(*batch)):
        try:
            for o, r in zip(outs, fn(host[idx])):
                o[idx] = r
        except np.linalg.LinAlgError:
            info[k] = 1
    return outs, info


def _upload(results: list[np.ndarray], dtypes: list[np.dtype], info: np.ndarray,
            device: Any) -> list[Array]:
    note(Array.from_numpy(info, device))
    return [Array.from_numpy(np.ascontiguousarray(r), device, dtype=d)
            for r, d in zip(results, dtypes)]


def _real(dtype: np.dtype) -> np.dtype:
    return {dt.complex64: dt.float32, dt.complex128: dt.float64}.get(dtype, dtype)


def svd(x: Array, full_matrices: bool, compute_uv: bool
        ) -> tuple[Array | None, Array, Array | None]:
    """The ``svd`` primitive's results (``clnp._routines.linalg.svd``) from LAPACK's gesdd."""
    host = _shared_host_view(x)
    m, n = x.shape[-2:]
    k = min(m, n)
    real = _real(x.dtype)
    if not compute_uv:
        (s,), info = _per_matrix(lambda a: (np.linalg.svd(a, compute_uv=False),), host,
                                 [((k,), real)])
        return None, _upload([s], [real], info, x.device)[0], None
    um, vn = (m, n) if full_matrices else (k, k)
    outs, info = _per_matrix(lambda a: tuple(np.linalg.svd(a, full_matrices=full_matrices)),
                             host, [((m, um), x.dtype), ((k,), real), ((vn, n), x.dtype)])
    u, s, vh = _upload(outs, [x.dtype, real, x.dtype], info, x.device)
    return u, s, vh


def eigh(x: Array, compute_v: bool) -> tuple[Array, Array | None]:
    """The ``eigh`` primitive's results from LAPACK's syevd/heevd (lower triangle)."""
    host = _shared_host_view(x)
    n = x.shape[-1]
    real = _real(x.dtype)
    if not compute_v:
        (w,), info = _per_matrix(lambda a: (np.linalg.eigvalsh(a, UPLO="L"),), host,
                                 [((n,), real)])
        return _upload([w], [real], info, x.device)[0], None
    outs, info = _per_matrix(lambda a: tuple(np.linalg.eigh(a, UPLO="L")), host,
                             [((n,), real), ((n, n), x.dtype)])
    w, v = _upload(outs, [real, x.dtype], info, x.device)
    return w, v


def eig(x: Array, compute_v: bool) -> tuple[Array, Array | None]:
    """The ``eig`` primitive's results (complex) from LAPACK's geev. The primitive takes
    complex matrices (the namespace converts real input); a stack whose imaginary parts are
    all zero goes to the real driver, as NumPy's call on the real input does: real
    eigenvalues come out exactly real and complex ones in exact conjugate pairs."""
    host = _shared_host_view(x)
    if not np.any(host.imag):
        host = host.real
    n = x.shape[-1]
    if not compute_v:
        (w,), info = _per_matrix(lambda a: (np.linalg.eigvals(a),), host,
                                 [((n,), x.dtype)])
        return _upload([w], [x.dtype], info, x.device)[0], None
    outs, info = _per_matrix(lambda a: tuple(np.linalg.eig(a)), host,
                             [((n,), x.dtype), ((n, n), x.dtype)])
    w, v = _upload(outs, [x.dtype, x.dtype], info, x.device)
    return w, v
