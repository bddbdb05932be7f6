"""Eager implementations of the dense linear algebra primitives (the ``linalg`` extension).

Every primitive is one launch of a kernel from ``clnp._codegen.linalg``: one work-group per
matrix of the batch, inputs read in place through their strides (transposed, sliced and
broadcast views need no copy), outputs fresh dense arrays. Inputs have a dtype the kernels
support (float32, float64, complex64, complex128; the namespace converts and checks first).

Primitives (``...`` is the batch shape)::

    cholesky(x, upper)             -> L (or U)                    NaN factor if not PD
    lu(x)                          -> (lu, pivots int32)          LAPACK getrf row swaps
    lu_solve(lu, pivots, b)        -> x with lu x = b             b (..., n, k)
    inv(x)                         -> x^-1                        (getrf + getrs on I)
    det(x)                         -> det
    slogdet(x)                     -> (sign, logabsdet)
    qr(x, mode)                    -> (q, r); mode "reduced" | "complete" | "r" (q is None)
    eigh(x, compute_v)             -> (w ascending, v or None)    lower triangle of x
    svd(x, full_matrices, compute_uv) -> (u or None, s descending, vh or None)
    eig(x, compute_v)              -> (w, v or None)              complex x only
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import _dtypes as dt
from ._array import Array
from ._codegen.linalg import LinalgSpec, render_linalg
from ._eager import collapse, contiguous_copy, full
from ._prims import def_impl
from ._runtime import Device, launch

# Tests set this to run the multi-item (GPU) variant of the kernels on a CPU device.
_FORCE_GROUP: int | None = None


def _group(device: Device) -> int:
    """Work-group size: 1 on CPUs (a group never spans cores; serial inner loops vectorize),
    64 elsewhere."""
    if _FORCE_GROUP:
        return _FORCE_GROUP
    return 1 if device.is_cpu else min(64, device.max_work_group_size)


def _real(dtype: np.dtype) -> np.dtype:
    return {dt.complex64: dt.float32, dt.complex128: dt.float64}.get(dtype, dtype)


def _run(name: str, dtype: np.dtype, device: Device, nbatch: int, *args: Any) -> None:
    spec = LinalgSpec(dtype, _group(device))
    kern = device.kernel((spec, name), lambda: render_linalg(spec, name))
    L = spec.group
    launch(device, kern, (L, nbatch), (L, 1), *args)


def _batch(bshape: tuple[int, ...], inputs: list[Array], outputs: list[Array]
           ) -> tuple[list[Array], int, int, list[tuple[int, int]]]:
    """Collapse the batch dims shared by ``inputs`` (views, possibly broadcast) and
    ``outputs`` (dense) to at most two; returns the (possibly copied) inputs, ``nb0``,
    ``nb1`` and each operand's two batch strides (inputs first)."""
    nd = len(bshape)
    ops = inputs + outputs
    cshape, cstr = collapse(list(bshape), [list(a._strides[:nd]) for a in ops])
    if len(cshape) > 2:
        inputs = [contiguous_copy(a) for a in inputs]
        ops = inputs + outputs
        cshape, cstr = collapse(list(bshape), [list(a._strides[:nd]) for a in ops])
    pad = 2 - len(cshape)
    cshape = [1] * pad + cshape
    strides = [tuple([0] * pad + s) for s in cstr]
    return inputs, cshape[0], cshape[1], strides


def _mat(a: Array, bs: tuple[int, int]) -> list:
    return [a._buf, a._offset, bs[0], bs[1], a._strides[-2], a._strides[-1]]


def _vec(a: Array, bs: tuple[int, int]) -> list:
    return [a._buf, a._offset, bs[0], bs[1], a._strides[-1]]


def _scratch(n: int, dtype: np.dtype, device: Device) -> Array:
    return Array.empty((max(int(n), 1),), dtype, device)


def _check_size(*dims: int) -> None:
    if max((a * b for a in dims for b in dims), default=0) >= 2 ** 31:
        raise ValueError(f"linalg: matrix dimensions {dims} are too large for the kernels "
                         f"(a matrix must have fewer than 2**31 elements)")


# ------------------------------------------------------------------------------ Cholesky
@def_impl("cholesky")
def cholesky(x: Array, *, upper: bool = False) -> Array:
    """Cholesky factor of each Hermitian positive-definite matrix (lower triangle read, or the
    upper one when ``upper``); a matrix that is not positive definite gets NaN."""
    device, n, bshape = x.device, x.shape[-1], x.shape[:-2]
    _check_size(n)
    out = Array.empty(x.shape, x.dtype, device)
    if out.size == 0:
        return out
    (x,), nb0, nb1, bs = _batch(bshape, [x], [out])
    B = nb0 * nb1
    work = _scratch(B * n * n, x.dtype, device)
    _run("chol", x.dtype, device, B, n, nb1, int(bool(upper)), n * n, *_mat(x, bs[0]),
         *_mat(out, bs[1]), work._buf)
    return out


# ------------------------------------------------------------------------------ LU
def _getrf(x: Array) -> tuple[Array, Array, Array, Array, Array]:
    device, n, bshape = x.device, x.shape[-1], x.shape[:-2]
    _check_size(n)
    lu = Array.empty(x.shape, x.dtype, device)
    piv = Array.empty(bshape + (n,), dt.int32, device)
    det = Array.empty(bshape, x.dtype, device)
    sgn = Array.empty(bshape, x.dtype, device)
    lad = Array.empty(bshape, _real(x.dtype), device)
    if math.prod(bshape) == 0:
        return lu, piv, det, sgn, lad
    if n == 0:   # the empty product
        return (lu, piv, full(shape=bshape, value=1, dtype=x.dtype, device=device),
                full(shape=bshape, value=1, dtype=x.dtype, device=device),
                full(shape=bshape, value=0, dtype=lad.dtype, device=device))
    (x,), nb0, nb1, bs = _batch(bshape, [x], [lu])
    _run("getrf", x.dtype, device, nb0 * nb1, n, nb1, *_mat(x, bs[0]), lu._buf, piv._buf,
         det._buf, sgn._buf, lad._buf)
    return lu, piv, det, sgn, lad


@def_impl("lu", multiple_results=True)
def lu(x: Array) -> tuple[Array, Array]:
    """LU factorization with partial pivoting: ``(lu, pivots)``, unit-lower ``L`` and upper
    ``U`` packed in ``lu``; row ``k`` was swapped with row ``pivots[k]`` (0-based), in order."""
    f = _getrf(x)
    return f[0], f[1]


@def_impl("det")
def det(x: Array) -> Array:
    """Determinant of each square matrix (product of the LU diagonal and the pivot sign)."""
    return _getrf(x)[2]


@def_impl("slogdet", multiple_results=True)
def slogdet(x: Array) -> tuple[Array, Array]:
    """``(sign, log|det|)`` of each square matrix; ``(0, -inf)`` for a singular one."""
    f = _getrf(x)
    return f[3], f[4]


def _getrs(lu: Array, piv: Array, b: Array | None, k: int, bshape: tuple[int, ...]) -> Array:
    device, n = lu.device, lu.shape[-1]
    out = Array.empty(bshape + (n, k), lu.dtype, device)
    if out.size == 0:
        return out
    ins = [lu, piv] + ([b] if b is not None else [])
    ins, nb0, nb1, bs = _batch(bshape, ins, [out])
    if b is None:
        bx, bxs = ins[0], bs[0]   # any matrix: the kernel does not read it
    else:
        bx, bxs = ins[2], bs[2]
    _run("getrs", lu.dtype, device, nb0 * nb1, n, k, nb1, int(b is None), *_mat(ins[0], bs[0]),
         *_vec(ins[1], bs[1]), *_mat(bx, bxs), out._buf)
    return out


@def_impl("lu_solve")
def lu_solve(lu: Array, piv: Array, b: Array) -> Array:
    """Solve ``A x = b`` from ``(lu, pivots) = lu(A)``; ``b`` has shape ``(..., n, k)`` and
    every operand the same batch shape (broadcast views are fine)."""
    _check_size(lu.shape[-1], b.shape[-1])
    return _getrs(lu, piv, b, b.shape[-1], b.shape[:-2])


@def_impl("inv")
def inv(x: Array) -> Array:
    """Inverse of each square matrix (LU, then the solve against the identity); a singular
    matrix gives inf/NaN entries."""
    f = _getrf(x)
    return _getrs(f[0], f[1], None, x.shape[-1], x.shape[:-2])


# ------------------------------------------------------------------------------ QR
@def_impl("qr", multiple_results=True)
def qr(x: Array, *, mode: str = "reduced") -> tuple[Array | None, Array]:
    """Householder QR: ``mode="reduced"``: Q ``(..., m, k)``, R ``(..., k, n)``;
    ``"complete"``: Q ``(..., m, m)``, R ``(..., m, n)``; ``"r"``: ``(None, R (..., k, n))``.
    ``R`` has a real diagonal."""
    device, (m, n), bshape = x.device, x.shape[-2:], x.shape[:-2]
    _check_size(m, n)
    k = min(m, n)
    qc, rr = (m, m) if mode == "complete" else (k, k)
    want_q = mode != "r"
    r = Array.empty(bshape + (rr, n), x.dtype, device)
    q = Array.empty(bshape + (m, qc), x.dtype, device) if want_q else None
    if math.prod(bshape) == 0:
        return q, r
    outs = [r] + ([q] if want_q else [])
    (x,), nb0, nb1, bs = _batch(bshape, [x], outs)
    B = nb0 * nb1
    ws = m * n + m * (qc if want_q else 0) + k
    work = _scratch(B * ws, x.dtype, device)
    qa = _mat(q, bs[2]) if want_q else _mat(r, bs[1])
    _run("qr", x.dtype, device, B, m, n, nb1, qc if want_q else 0, rr, int(want_q), ws,
         *_mat(x, bs[0]), *qa, *_mat(r, bs[1]), work._buf)
    return q, r


# ------------------------------------------------------------------------------ eigh
@def_impl("eigh", multiple_results=True)
def eigh(x: Array, *, compute_v: bool = True) -> tuple[Array, Array | None]:
    """Eigenvalues (ascending, real dtype) and eigenvectors (columns) of each Hermitian
    matrix, read from its lower triangle."""
    device, n, bshape = x.device, x.shape[-1], x.shape[:-2]
    _check_size(n)
    w = Array.empty(bshape + (n,), _real(x.dtype), device)
    v = Array.empty(x.shape, x.dtype, device) if compute_v else None
    if w.size == 0:
        return w, v
    outs = [w] + ([v] if compute_v else [])
    (x,), nb0, nb1, bs = _batch(bshape, [x], outs)
    B = nb0 * nb1
    ws, rws = 2 * n * n + 3 * n, 4 * n
    work = _scratch(B * ws, x.dtype, device)
    rwork = _scratch(B * rws, _real(x.dtype), device)
    va = _mat(v, bs[2]) if compute_v else _mat(x, bs[0])
    _run("eigh", x.dtype, device, B, n, nb1, int(compute_v), ws, rws, *_mat(x, bs[0]),
         *_vec(w, bs[1]), *va, work._buf, rwork._buf)
    return w, v


# ------------------------------------------------------------------------------ SVD
@def_impl("svd", multiple_results=True)
def svd(x: Array, *, full_matrices: bool = True, compute_uv: bool = True
        ) -> tuple[Array | None, Array, Array | None]:
    """Singular values (descending, real dtype) and, with ``compute_uv``, ``U`` and ``Vh``
    (``(m, m)``/``(n, n)`` when ``full_matrices``, else ``(m, k)``/``(k, n)``)."""
    device, (m, n), bshape = x.device, x.shape[-2:], x.shape[:-2]
    _check_size(m, n)
    K, M = min(m, n), max(m, n)
    s = Array.empty(bshape + (K,), _real(x.dtype), device)
    u = vh = None
    if compute_uv:
        u = Array.empty(bshape + ((m, m) if full_matrices else (m, K)), x.dtype, device)
        vh = Array.empty(bshape + ((n, n) if full_matrices else (K, n)), x.dtype, device)
    if math.prod(bshape) == 0 or (not compute_uv and K == 0):
        return u, s, vh
    outs = [s] + ([u, vh] if compute_uv else [])
    (x,), nb0, nb1, bs = _batch(bshape, [x], outs)
    B = nb0 * nb1
    qc = M if full_matrices else K
    ws = 2 * K * M + K * K + (qc * M if compute_uv else 0) + K
    rws = 2 * K
    work = _scratch(B * ws, x.dtype, device)
    rwork = _scratch(B * rws, _real(x.dtype), device)
    ua = _mat(u, bs[2]) if compute_uv else _mat(x, bs[0])
    ha = _mat(vh, bs[3]) if compute_uv else _mat(x, bs[0])
    _run("svd", x.dtype, device, B, m, n, nb1, int(compute_uv), int(bool(full_matrices)), ws,
         rws, *_mat(x, bs[0]), *_vec(s, bs[1]), *ua, *ha, work._buf, rwork._buf)
    return u, s, vh


# ------------------------------------------------------------------------------ eig
@def_impl("eig", multiple_results=True)
def eig(x: Array, *, compute_v: bool = True) -> tuple[Array, Array | None]:
    """Eigenvalues and unit-norm eigenvectors (columns, largest component real) of each
    general square matrix; ``x`` is complex (the namespace converts real input)."""
    device, n, bshape = x.device, x.shape[-1], x.shape[:-2]
    _check_size(n)
    w = Array.empty(bshape + (n,), x.dtype, device)
    v = Array.empty(x.shape, x.dtype, device) if compute_v else None
    if w.size == 0:
        return w, v
    outs = [w] + ([v] if compute_v else [])
    (x,), nb0, nb1, bs = _batch(bshape, [x], outs)
    B = nb0 * nb1
    ws = 4 * n * n + 2 * n
    work = _scratch(B * ws, x.dtype, device)
    va = _mat(v, bs[2]) if compute_v else _mat(x, bs[0])
    _run("eig", x.dtype, device, B, n, nb1, int(compute_v), ws, *_mat(x, bs[0]),
         *_vec(w, bs[1]), *va, work._buf)
    return w, v
