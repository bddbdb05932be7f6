"""Eager implementations of the dense linear algebra primitives (the ``linalg`` extension).

Every primitive is one launch of a kernel from ``clnp._kernels.linalg``: one work-group per
matrix of the batch, inputs read in place through their strides (transposed, sliced and
broadcast views need no copy), outputs fresh dense arrays. From order ``_BLOCKED_MIN`` on,
LU, Cholesky and the solves with LU factors are blocked instead: a loop over panels of
``_NB`` columns whose trailing updates go through the GEMM kernel (``dot_general``), which
spreads one large matrix over the whole device. Inputs have a dtype the kernels support
(float32, float64, complex64, complex128; the namespace converts and checks first).

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

from .._runtime.deferred import deferred_import
from .._core import dtypes as dt
from .._core.array import Array
from .._core.eager import collapse, contiguous_copy, copy_into, ew_apply, full, slice_, transpose
from .dot_general import dot_general
from . import host_lapack
from .linalg_status import note
from .._core.prims import def_impl
from .._runtime.device import Device, launch

# run at first use, not at import clnp (clnp._runtime.deferred)
_linalg_kernels = deferred_import("clnp._kernels.linalg")

# Tests set this to run the multi-item (GPU) variant of the kernels on a CPU device.
_FORCE_GROUP: int | None = None
# LU and the solves with it switch to the blocked algorithm (GEMM trailing updates) from this
# order on: one work-group per matrix keeps a GPU's other compute units idle on a big matrix,
# and on CPUs the GEMM kernel outruns the single-item loops. Tests lower it.
_BLOCKED_MIN = {"cpu": 128, "gpu": 128}
_NB = 64          # panel width / block size of the blocked algorithms
_NOT_PD = 2       # the Cholesky status bit of a pivot <= 0 (1: NaN/inf, which NumPy lets pass)


def _group(device: Device) -> int:
    """Work-group size: 1 on CPUs (a group never spans cores; serial inner loops vectorize),
    64 (or the device's largest power of two below that) elsewhere."""
    if _FORCE_GROUP:
        return _FORCE_GROUP
    if device.is_cpu:
        return 1
    return 1 << (min(64, device.max_work_group_size).bit_length() - 1)   # a power of two


def _real(dtype: np.dtype) -> np.dtype:
    return {dt.complex64: dt.float32, dt.complex128: dt.float64}.get(dtype, dtype)


def _run(name: str, dtype: np.dtype, device: Device, nbatch: int, *args: Any,
         items: int = 1) -> None:
    """Launch kernel ``name``: ``nbatch`` rows of work-groups, ``items`` work-items (rounded
    up to whole groups) per row."""
    spec = _linalg_kernels.LinalgSpec(dtype, _group(device))
    kern = device.kernel((spec, name), lambda: _linalg_kernels.render_linalg(spec, name))
    L = spec.group
    launch(device, kern, (-(-items // L) * L, nbatch), (L, 1), *args)


def _blocked(device: Device, n: int) -> bool:
    return n >= _BLOCKED_MIN["cpu" if device.is_cpu else "gpu"] and n > _NB


def _chunk(device: Device) -> int:
    """Columns per work-item in the column-parallel kernels of the blocked algorithms."""
    return 32 if _group(device) == 1 else 1


def _view(a: Array, starts: tuple[int, ...], shape: tuple[int, ...]) -> Array:
    return slice_(a, starts=starts, steps=(1,) * a.ndim, shape=shape)


def _gemm_sub(c: Array, a: Array, b: Array, nbatch_dims: int) -> None:
    """``c -= a @ b`` over the trailing two dims (``c`` a view of a work array)."""
    bd = tuple(range(nbatch_dims))
    p = dot_general(a, b, dimension_numbers=(((a.ndim - 1,), (b.ndim - 2,)), (bd, bd)))
    ew_apply("subtract", [c, p], c.dtype, c.dtype, [c.dtype, c.dtype], out=c)


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


def _info(nbatch: int, device: Device, mask: int = -1) -> Array:
    """The status array of one launch (one int per matrix; see ``clnp._routines.linalg_status``)."""
    info = Array.empty((max(nbatch, 1),), dt.int32, device)
    note(info, mask)
    return info


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
    if _blocked(device, n):
        return _potrf_blocked(x, out, bool(upper))
    (x,), nb0, nb1, bs = _batch(bshape, [x], [out])
    B = nb0 * nb1
    work = _scratch(B * n * n, x.dtype, device)
    _run("chol", x.dtype, device, B, n, nb1, int(bool(upper)), n * n, *_mat(x, bs[0]),
         *_mat(out, bs[1]), work._buf, _info(B, device, _NOT_PD)._buf)
    return out


def _potrf_blocked(x: Array, out: Array, upper: bool) -> Array:
    """Right-looking blocked Cholesky on the lower triangle: the panel kernel factors the
    diagonal block and solves the rows below it, GEMM updates the trailing matrix (whole,
    though only its lower triangle is read later)."""
    device, n, dtype = x.device, x.shape[-1], x.dtype
    bshape = x.shape[:-2]
    B = out.size // (n * n)
    if upper:   # the upper triangle, read as the lower one of x^H
        xt = transpose(x, perm=tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2))
        src = ew_apply("conj", [xt], dtype, dtype, [dtype]) if dtype.kind == "c" else xt
    else:
        src = x
    work = Array.empty(x.shape, dtype, device)
    copy_into(work, src)
    w = Array(work._buf, 0, (B, n, n), (n * n, n, 1), dtype, device)
    flag = full(shape=(B,), value=0, dtype=dt.int32, device=device)
    note(flag, _NOT_PD)
    for k in range(0, n, _NB):
        kb = min(_NB, n - k)
        _run("cholpanel", dtype, device, B, n, k, kb, work._buf, flag._buf)
        m = n - k - kb
        if m:
            l21 = _view(w, (0, k + kb, k), (B, m, kb))
            l21h = transpose(l21, perm=(0, 2, 1))
            if dtype.kind == "c":
                l21h = ew_apply("conj", [l21h], dtype, dtype, [dtype])
            _gemm_sub(_view(w, (0, k + kb, k + kb), (B, m, m)), l21, l21h, 1)
    _, nb0, nb1, bs = _batch(bshape, [], [out])
    _run("cholfin", dtype, device, B, n, nb1, int(upper), work._buf, flag._buf,
         *_mat(out, bs[0]))
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
    if _blocked(device, n):
        _getrf_blocked(x, lu, piv, det, sgn, lad)
        return lu, piv, det, sgn, lad
    (x,), nb0, nb1, bs = _batch(bshape, [x], [lu])
    _run("getrf", x.dtype, device, nb0 * nb1, n, nb1, *_mat(x, bs[0]), lu._buf, piv._buf,
         det._buf, sgn._buf, lad._buf, _info(nb0 * nb1, device)._buf)
    return lu, piv, det, sgn, lad


def _getrf_blocked(x: Array, lu: Array, piv: Array, det: Array, sgn: Array, lad: Array
                   ) -> None:
    """Right-looking blocked LU in ``lu`` (dense): for each panel of ``_NB`` columns, the
    panel kernel (one work-group per matrix), its row swaps on the other columns, the block
    row of ``U`` by a unit-lower solve, and the trailing update ``A22 -= L21 U12`` by GEMM."""
    device, n, dtype = x.device, x.shape[-1], x.dtype
    B = lu.size // (n * n)
    copy_into(lu, x)
    w = Array(lu._buf, 0, (B, n, n), (n * n, n, 1), dtype, device)
    ch = _chunk(device)
    for k in range(0, n, _NB):
        kb = min(_NB, n - k)
        _run("lupanel", dtype, device, B, n, k, kb, lu._buf, piv._buf)
        m = n - k - kb
        _run("luswap", dtype, device, B, n, k, kb, ch, lu._buf, piv._buf,
             items=-(-(n - kb) // ch))
        if m:
            _run("lutrsm", dtype, device, B, n, k, kb, ch, lu._buf, items=-(-m // ch))
            _gemm_sub(_view(w, (0, k + kb, k + kb), (B, m, m)),
                      _view(w, (0, k + kb, k), (B, m, kb)),
                      _view(w, (0, k, k + kb), (B, kb, m)), 1)
    _run("lustat", dtype, device, B, n, lu._buf, piv._buf, det._buf, sgn._buf, lad._buf,
         _info(B, device)._buf)


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
    if _blocked(device, n):
        return _getrs_blocked(lu, piv, b, out)
    ins = [lu, piv] + ([b] if b is not None else [])
    ins, nb0, nb1, bs = _batch(bshape, ins, [out])
    if b is None:
        bx, bxs = ins[0], bs[0]   # any matrix: the kernel does not read it
    else:
        bx, bxs = ins[2], bs[2]
    _run("getrs", lu.dtype, device, nb0 * nb1, n, k, nb1, int(b is None), *_mat(ins[0], bs[0]),
         *_vec(ins[1], bs[1]), *_mat(bx, bxs), out._buf)
    return out


def _getrs_blocked(lu: Array, piv: Array, b: Array | None, out: Array) -> Array:
    """Blocked forward and back substitution in ``out``: the diagonal blocks by the
    ``trblk`` kernel, everything below (above) them by GEMM."""
    device, dtype = lu.device, lu.dtype
    n, k = out.shape[-2:]
    bshape = out.shape[:-2]
    nd = len(bshape)
    if b is None:
        copy_into(out, 0, dtype)
        diag = Array(out._buf, out._offset, bshape + (min(n, k),),
                     out._strides[:-2] + (k + 1,), dtype, device)
        copy_into(diag, 1, dtype)
    else:
        copy_into(out, b)
    (lu, piv), nb0, nb1, bs = _batch(bshape, [lu, piv], [out])
    B, ch = nb0 * nb1, _chunk(device)
    items = -(-k // ch)
    z = (0,) * nd
    _run("rhsswap", dtype, device, B, n, k, nb1, ch, *_vec(piv, bs[1]), out._buf, items=items)
    for i0 in range(0, n, _NB):
        i1 = min(n, i0 + _NB)
        _run("trblk", dtype, device, B, n, k, nb1, i0, i1, 0, ch, *_mat(lu, bs[0]), out._buf,
             items=items)
        if i1 < n:
            _gemm_sub(_view(out, z + (i1, 0), bshape + (n - i1, k)),
                      _view(lu, z + (i1, i0), bshape + (n - i1, i1 - i0)),
                      _view(out, z + (i0, 0), bshape + (i1 - i0, k)), nd)
    for i1 in range(n, 0, -_NB):
        i0 = max(0, i1 - _NB)
        _run("trblk", dtype, device, B, n, k, nb1, i0, i1, 1, ch, *_mat(lu, bs[0]), out._buf,
             items=items)
        if i0 > 0:
            _gemm_sub(_view(out, z + (0, 0), bshape + (i0, k)),
                      _view(lu, z + (0, i0), bshape + (i0, i1 - i0)),
                      _view(out, z + (i0, 0), bshape + (i1 - i0, k)), nd)
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
    if host_lapack.applies(x):          # NumPy's LAPACK on the host memory (CPU devices)
        return host_lapack.eigh(x, compute_v)
    n = x.shape[-1]
    return _eigen("eigh", x, _real(x.dtype), compute_v, 2 * n * n + 3 * n, 4 * n)


def _eigen(kind: str, x: Array, w_dtype: np.dtype, compute_v: bool, ws: int,
           rws: int = 0) -> tuple[Array, Array | None]:
    """Run the ``kind`` eigensolver kernel on each matrix of ``x``: eigenvalues of
    ``w_dtype`` and, with ``compute_v``, eigenvectors; ``ws`` elements of scratch per matrix
    (plus ``rws`` real ones when given)."""
    device, n, bshape = x.device, x.shape[-1], x.shape[:-2]
    _check_size(n)
    w = Array.empty(bshape + (n,), w_dtype, device)
    v = Array.empty(x.shape, x.dtype, device) if compute_v else None
    if w.size == 0:
        return w, v
    outs = [w] + ([v] if compute_v else [])
    (x,), nb0, nb1, bs = _batch(bshape, [x], outs)
    B = nb0 * nb1
    scratch = [_scratch(B * ws, x.dtype, device)]
    if rws:
        scratch.append(_scratch(B * rws, _real(x.dtype), device))
    va = _mat(v, bs[2]) if compute_v else _mat(x, bs[0])
    _run(kind, x.dtype, device, B, n, nb1, int(compute_v), ws, *([rws] if rws else []),
         *_mat(x, bs[0]), *_vec(w, bs[1]), *va, *(t._buf for t in scratch),
         _info(B, device)._buf)
    return w, v


# ------------------------------------------------------------------------------ SVD
@def_impl("svd", multiple_results=True)
def svd(x: Array, *, full_matrices: bool = True, compute_uv: bool = True
        ) -> tuple[Array | None, Array, Array | None]:
    """Singular values (descending, real dtype) and, with ``compute_uv``, ``U`` and ``Vh``
    (``(m, m)``/``(n, n)`` when ``full_matrices``, else ``(m, k)``/``(k, n)``)."""
    if host_lapack.applies(x):          # NumPy's LAPACK on the host memory (CPU devices)
        return host_lapack.svd(x, full_matrices, compute_uv)
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
         rws, *_mat(x, bs[0]), *_vec(s, bs[1]), *ua, *ha, work._buf, rwork._buf,
         _info(B, device)._buf)
    return u, s, vh


# ------------------------------------------------------------------------------ eig
@def_impl("eig", multiple_results=True)
def eig(x: Array, *, compute_v: bool = True) -> tuple[Array, Array | None]:
    """Eigenvalues and unit-norm eigenvectors (columns, largest component real) of each
    general square matrix; ``x`` is complex (the namespace converts real input)."""
    if host_lapack.applies(x):          # NumPy's LAPACK on the host memory (CPU devices)
        return host_lapack.eig(x, compute_v)
    n = x.shape[-1]
    return _eigen("eig", x, x.dtype, compute_v, 4 * n * n + 2 * n)
