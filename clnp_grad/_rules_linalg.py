"""Differentiation and batching rules for the dense linear-algebra primitives.

Rules follow JAX's conventions: a VJP is the transpose of the JVP under the real pairing
``Re(sum(ct * t))`` (no conjugation, so holomorphic maps transpose plainly). The rules for the
non-holomorphic decompositions (cholesky, qr, eigh, svd) are easier to state with the
Hermitian pairing ``Re(sum(conj(g) * t))``; they take ``g = conj(ct)`` on entry and conjugate
the result back. Every rule is written with clnp functions and primitives, so rules are
differentiated again for higher derivatives (``hessian`` of ``slogdet``).

``cholesky`` and ``eigh`` read one triangle: their input is the Hermitian matrix
``S = tril(x, -1) + tril(x, -1)^H + Re(diag(x))`` (upper triangle for ``cholesky(upper=True)``)
and derivatives flow to that triangle only. Eigenvector and singular vector derivatives need
distinct eigenvalues (singular values); ones equal to working precision raise
``NotImplementedError`` when the values are concrete (not traced by an outer transformation).
``det``, ``slogdet`` and ``inv`` need an invertible matrix (a singular one gives NaN). For complex inputs, eigenvectors and
singular vectors are defined up to a phase: only phase-invariant functions of them have
meaningful derivatives (as in JAX).
"""
from __future__ import annotations

from typing import Any

import numpy as np

import clnp as xp
from clnp._core.array import Array
from clnp._core.prims import primitive

from ._rules import JVP, VJP, is_float
from ._vmap import BATCH, _materialize


def _bind(name: str, *args: Any, **params: Any) -> Any:
    return primitive(name).bind(*args, **params)


# ------------------------------------------------------------------------------ helpers
def _cplx(x: Any) -> bool:
    return x.dtype.kind == "c"


def _cj(x: Any) -> Any:
    return xp.conj(x) if _cplx(x) else x


def _mT(x: Any) -> Any:
    return xp.matrix_transpose(x)


def _mH(x: Any) -> Any:
    return _cj(_mT(x))


def _eye(x: Any, n: int | None = None) -> Any:
    return xp.eye(x.shape[-1] if n is None else n, dtype=x.dtype, device=x.device)


def _diag(m: Any) -> Any:
    """The main diagonal of each matrix, shape ``(..., n)``."""
    return xp.sum(m * _eye(m), axis=-1)


def _diag_mat(v: Any) -> Any:
    """Diagonal matrices from vectors ``(..., n)``."""
    return xp.expand_dims(v, axis=-1) * _eye(v, v.shape[-1])


def _trace(m: Any) -> Any:
    return xp.sum(m * _eye(m), axis=(-2, -1))


def _real_part(x: Any) -> Any:
    return xp.real(x) if _cplx(x) else x


def _as_dtype(x: Any, dtype: Any) -> Any:
    return x if x.dtype == dtype else xp.astype(x, dtype)


def _herm_lower(t: Any) -> Any:
    """The Hermitian matrix the lower triangle of ``t`` stands for (diagonal: real part)."""
    low = xp.tril(t, k=-1)
    return low + _mH(low) + 0.5 * (t + _cj(t)) * _eye(t)


def _herm_lower_adjoint(g: Any) -> Any:
    """Adjoint of ``_herm_lower``: the Hermitian part of ``g`` folded onto the lower
    triangle (diagonal halved)."""
    h = g + _mH(g)
    return xp.tril(h, k=-1) + 0.5 * h * _eye(h)


def _phi(m: Any) -> Any:
    """The strictly lower triangle plus half the diagonal."""
    return xp.tril(m, k=-1) + 0.5 * m * _eye(m)


def _is_concrete(x: Any) -> bool:
    return isinstance(x, Array)


def _check_distinct(vals: Any, what: str, with_zero: bool = False) -> None:
    """Refuse (concrete) degenerate eigenvalues/singular values: the vectors' derivative
    does not exist there (``with_zero``: a zero value counts as repeated too). Traced values
    (nested transformations) are not checked, as that would need their concrete value."""
    if not _is_concrete(vals) or vals.shape[-1] + with_zero < 2:
        return
    v = np.asarray(vals.to_numpy())
    if with_zero:
        v = np.concatenate([v, np.zeros(v.shape[:-1] + (1,), v.dtype)], axis=-1)
    v = np.sort(v, axis=-1)
    scale = np.maximum(np.max(np.abs(v), axis=-1, keepdims=True), np.finfo(v.dtype).tiny)
    gaps = np.diff(v, axis=-1)
    if np.any(gaps <= v.shape[-1] * np.finfo(v.dtype).eps * scale):
        raise NotImplementedError(
            f"clnp_grad: the derivative of the {what} is undefined for repeated (degenerate) "
            f"values; differentiate a function of the whole invariant subspace instead, or "
            f"perturb the input")


def _safe_recip(v: Any) -> Any:
    """``1 / v`` with 0 where ``v`` is 0."""
    zero = v == 0
    return xp.where(zero, 0.0, 1.0 / xp.where(zero, 1.0, v))


def _gap_matrix(v: Any, square: bool) -> Any:
    """``F[i, j] = 1 / (v_j - v_i)`` (of squares when ``square``) off the diagonal, 0 on it."""
    row, col = xp.expand_dims(v, axis=-2), xp.expand_dims(v, axis=-1)
    d = row * row - col * col if square else row - col
    eye = _eye(v, v.shape[-1])
    return 1.0 / (d + eye) - eye


def _iota_piv(lu: Any) -> Any:
    """Pivots that swap nothing, for solves with triangular factors."""
    n = lu.shape[-1]
    return xp.broadcast_to(xp.arange(n, dtype=xp.int32, device=lu.device), lu.shape[:-1])


def _lu_solve(packed: Any, piv: Any, b: Any) -> Any:
    return _bind("lu_solve", packed, piv, xp.broadcast_to(b, packed.shape[:-1] + b.shape[-1:]))


class _Factors:
    """``P A = L U`` spelled out from a packed LU: L, U, their inverses and P as matrices
    (each a triangular solve or a row permutation of the identity)."""

    def __init__(self, lu: Any, piv: Any):
        eye = _eye(lu)
        self.L = xp.tril(lu, k=-1) + eye
        self.U = xp.triu(lu)
        iota = _iota_piv(lu)
        self.Linv = _lu_solve(self.L, iota, eye)    # packed U part is I: a unit-lower solve
        self.Uinv = _lu_solve(self.U, iota, eye)    # packed L part is 0: an upper solve
        self.P = _lu_solve(xp.broadcast_to(eye, lu.shape), piv, eye)


# ------------------------------------------------------------------------------ cholesky
def _jvp_cholesky(primals: tuple, tangents: tuple, out: Any, *, upper: bool) -> Any:
    t = tangents[0]
    if t is None:
        return None
    L = _mH(out) if upper else out
    ds = _herm_lower(_mH(t) if upper else t)
    linv = xp.linalg.inv(L)
    dL = L @ _phi(linv @ ds @ _mH(linv))
    return _mH(dL) if upper else dL


def _vjp_cholesky(ct: Any, primals: tuple, out: Any, *, upper: bool) -> tuple:
    if not is_float(primals[0]):
        return (None,)
    g = _cj(ct)
    L = _mH(out) if upper else out
    Lbar = _mH(g) if upper else g
    linv = xp.linalg.inv(L)
    G = _mH(linv) @ _phi(_mH(L) @ Lbar) @ linv
    xbar = _herm_lower_adjoint(G)
    return (_cj(_mH(xbar) if upper else xbar),)


JVP["cholesky"] = _jvp_cholesky
VJP["cholesky"] = _vjp_cholesky


# ------------------------------------------------------------------------------ det, slogdet, inv
def _solve_trace(x: Any, t: Any) -> Any:
    """``tr(x^-1 t)``: the derivative of log det along ``t``."""
    return _trace(xp.linalg.solve(x, t))


def _jvp_det(primals: tuple, tangents: tuple, out: Any) -> Any:
    t = tangents[0]
    return None if t is None else out * _solve_trace(primals[0], t)


def _vjp_det(ct: Any, primals: tuple, out: Any) -> tuple:
    x = primals[0]
    scale = xp.expand_dims(ct * out, axis=(-2, -1))
    return (scale * _mT(xp.linalg.inv(x)),)


JVP["det"] = _jvp_det
VJP["det"] = _vjp_det


def _jvp_slogdet(primals: tuple, tangents: tuple, out: tuple) -> tuple:
    t = tangents[0]
    if t is None:
        return (None, None)
    tau = _solve_trace(primals[0], t)
    if not _cplx(tau):
        return (None, tau)      # the sign of a real determinant is locally constant
    sign = out[0]
    return (sign * (1j * xp.imag(tau)), xp.real(tau))


def _vjp_slogdet(ct: Any, primals: tuple, out: tuple) -> tuple:
    x = primals[0]
    ct_sign, ct_lad = ct
    ct_tau = None
    if ct_lad is not None:
        ct_tau = _as_dtype(ct_lad, x.dtype)
    if ct_sign is not None and _cplx(x):
        # sign' = sign * i * Im(tau); the transpose of Im is multiplication by -i
        term = -1j * xp.real(ct_sign * out[0] * 1j)
        ct_tau = term if ct_tau is None else ct_tau + term
    if ct_tau is None:
        return (None,)
    return (xp.expand_dims(ct_tau, axis=(-2, -1)) * _mT(xp.linalg.inv(x)),)


JVP["slogdet"] = _jvp_slogdet
VJP["slogdet"] = _vjp_slogdet


def _jvp_inv(primals: tuple, tangents: tuple, out: Any) -> Any:
    t = tangents[0]
    return None if t is None else -(out @ t @ out)


def _vjp_inv(ct: Any, primals: tuple, out: Any) -> tuple:
    yt = _mT(out)
    return (-(yt @ ct @ yt),)


JVP["inv"] = _jvp_inv
VJP["inv"] = _vjp_inv


# ------------------------------------------------------------------------------ lu, lu_solve
def _jvp_lu(primals: tuple, tangents: tuple, out: tuple) -> tuple:
    """``P dA = dL U + L dU``: with ``M = L^-1 P dA U^-1`` the strictly lower part of ``M``
    is ``L^-1 dL`` and its upper part ``dU U^-1``."""
    t = tangents[0]
    if t is None:
        return (None, None)
    f = _Factors(*out)
    m = f.Linv @ (f.P @ t) @ f.Uinv
    return (f.L @ xp.tril(m, k=-1) + xp.triu(m) @ f.U, None)


def _vjp_lu(ct: Any, primals: tuple, out: tuple) -> tuple:
    g = ct[0]
    if g is None or not is_float(primals[0]):
        return (None,)
    f = _Factors(*out)
    ct_m = xp.tril(_mT(f.L) @ g, k=-1) + xp.triu(g @ _mT(f.U))
    return (_mT(f.P) @ _mT(f.Linv) @ ct_m @ _mT(f.Uinv),)


JVP["lu"] = _jvp_lu
VJP["lu"] = _vjp_lu


def _jvp_lu_solve(primals: tuple, tangents: tuple, out: Any) -> Any:
    """``x = U^-1 L^-1 P b``: linear in ``b``; along the factors
    ``dx = -U^-1 (L^-1 dL U x + dU x)`` (the permutation drops out)."""
    lu, piv, b = primals
    t_lu, _, t_b = tangents
    res = None if t_b is None else _bind("lu_solve", lu, piv, t_b)
    if t_lu is not None:
        f = _Factors(lu, piv)
        y = f.U @ out
        d = -(f.Uinv @ (f.Linv @ (xp.tril(t_lu, k=-1) @ y) + xp.triu(t_lu) @ out))
        res = d if res is None else res + d
    return res


def _vjp_lu_solve(ct: Any, primals: tuple, out: Any) -> tuple:
    lu, piv, b = primals
    f = _Factors(lu, piv)
    g = _mT(f.Uinv) @ ct                  # U^-T ct
    ct_b = _mT(f.P) @ (_mT(f.Linv) @ g) if is_float(b) else None
    ct_lu = None
    if is_float(lu):
        y = f.U @ out
        ct_lu = -(xp.tril(_mT(f.Linv) @ g @ _mT(y), k=-1) + xp.triu(g @ _mT(out)))
    return (ct_lu, None, ct_b)


JVP["lu_solve"] = _jvp_lu_solve
VJP["lu_solve"] = _vjp_lu_solve


# ------------------------------------------------------------------------------ qr
def _qr_factors(x: Any, out: tuple, mode: str) -> tuple[Any, Any]:
    m, n = x.shape[-2:]
    if m < n or (mode == "complete" and m != n):
        raise NotImplementedError(
            f"clnp_grad: QR derivatives are implemented for mode='reduced' (or 'r') with at "
            f"least as many rows as columns, and mode='complete' for square matrices; got "
            f"shape {x.shape} with mode={mode!r}")
    q, r = out
    if mode == "r":    # no Q (decided from the mode: under vmap a missing output is wrapped)
        q = _bind("qr", x, mode="reduced")[0]
    return q, r


def _qr_omega(b: Any) -> Any:
    """The anti-Hermitian part of ``Q^H dQ``, fixed by ``R`` keeping a real diagonal."""
    low = xp.tril(b, k=-1)
    om = low - _mH(low)
    if _cplx(b):
        om = om + 0.5 * (b - xp.conj(b)) * _eye(b)
    return om


def _jvp_qr(primals: tuple, tangents: tuple, out: tuple, *, mode: str) -> tuple:
    t = tangents[0]
    if t is None:
        return (None, None)
    q, r = _qr_factors(primals[0], out, mode)
    a = t @ xp.linalg.inv(r)
    b = _mH(q) @ a
    om = _qr_omega(b)
    dr = (b - om) @ r
    return (None if mode == "r" else q @ (om - b) + a, dr)


def _vjp_qr(ct: Any, primals: tuple, out: tuple, *, mode: str) -> tuple:
    x = primals[0]
    if not is_float(x):
        return (None,)
    q, r = _qr_factors(x, out, mode)
    ct_q, ct_r = ct
    qbar = None if ct_q is None else _cj(ct_q)
    om_bar = None
    if qbar is not None:
        om_bar = _mH(q) @ qbar
    if ct_r is not None:
        term = _cj(ct_r) @ _mH(r)
        om_bar = -term if om_bar is None else om_bar - term
    bbar = -om_bar + xp.tril(om_bar, k=-1) - xp.tril(_mH(om_bar), k=-1)
    if _cplx(om_bar):
        bbar = bbar + 0.5 * (om_bar - xp.conj(om_bar)) * _eye(om_bar)
    abar = q @ bbar if qbar is None else qbar + q @ bbar
    return (_cj(abar @ _mH(xp.linalg.inv(r))),)


JVP["qr"] = _jvp_qr
VJP["qr"] = _vjp_qr


# ------------------------------------------------------------------------------ eigh
def _eigh_full(x: Any, out: tuple, compute_v: bool) -> tuple[Any, Any]:
    if not compute_v:    # eigvalsh: the derivative of the eigenvalues needs the vectors
        return _bind("eigh", x, compute_v=True)
    return out


def _jvp_eigh(primals: tuple, tangents: tuple, out: tuple, *, compute_v: bool) -> tuple:
    t = tangents[0]
    if t is None:
        return (None, None)
    w, v = _eigh_full(primals[0], out, compute_v)
    c = _mH(v) @ _herm_lower(t) @ v
    dw = _real_part(_diag(c))
    if not compute_v:
        return (dw, None)
    _check_distinct(w, "eigenvectors (eigh)")
    return (dw, v @ (_gap_matrix(w, False) * c))


def _vjp_eigh(ct: Any, primals: tuple, out: tuple, *, compute_v: bool) -> tuple:
    x = primals[0]
    if not is_float(x):
        return (None,)
    w, v = _eigh_full(x, out, compute_v)
    ct_w, ct_v = ct
    cbar = None if ct_w is None else _diag_mat(_as_dtype(ct_w, x.dtype))
    if ct_v is not None:
        _check_distinct(w, "eigenvectors (eigh)")
        term = _gap_matrix(w, False) * (_mH(v) @ _cj(ct_v))
        cbar = term if cbar is None else cbar + term
    if cbar is None:
        return (None,)
    return (_cj(_herm_lower_adjoint(v @ cbar @ _mH(v))),)


JVP["eigh"] = _jvp_eigh
VJP["eigh"] = _vjp_eigh


# ------------------------------------------------------------------------------ svd
def _svd_parts(x: Any, out: tuple, full_matrices: bool, compute_uv: bool,
               vectors: bool) -> tuple[Any, Any, Any]:
    """The reduced ``(U, S, Vh)`` for the rules; ``vectors``: the singular vectors'
    derivatives are wanted."""
    m, n = x.shape[-2:]
    if vectors and full_matrices and m != n:
        raise NotImplementedError(
            f"clnp_grad: derivatives of the singular vectors of svd(full_matrices=True) are "
            f"not implemented for non-square matrices (shape {x.shape}): the extra columns are "
            f"arbitrary; use full_matrices=False")
    u, s, vh = out
    if not compute_uv or (full_matrices and m != n):
        u, s, vh = _bind("svd", x, full_matrices=False, compute_uv=True)
    if vectors:
        # repeated singular values, or a zero one when U or V has columns outside the range
        _check_distinct(s, "singular vectors (svd)", with_zero=m != n)
    return u, s, vh


def _jvp_svd(primals: tuple, tangents: tuple, out: tuple, *, full_matrices: bool,
             compute_uv: bool) -> tuple:
    t = tangents[0]
    if t is None:
        return (None, None, None)
    x = primals[0]
    u, s, vh = _svd_parts(x, out, full_matrices, compute_uv, compute_uv)
    v = _mH(vh)
    k = _mH(u) @ t @ v
    ds = _real_part(_diag(k))
    if not compute_uv:
        return (None, ds, None)
    m, n = x.shape[-2:]
    sc = _as_dtype(s, x.dtype)
    row, col = xp.expand_dims(sc, axis=-2), xp.expand_dims(sc, axis=-1)
    f = _gap_matrix(s, True)
    ks, sk = k * row, col * k
    du = u @ (f * (ks + _mH(ks)))
    if _cplx(k):
        du = du + u @ (0.5 * (k - _mH(k)) * _eye(k) * _safe_recip(row))
    dv = v @ (f * (sk + _mH(sk)))
    if m > n:
        tv = t @ v
        du = du + (tv - u @ (_mH(u) @ tv)) / row
    elif n > m:
        tu = _mH(t) @ u
        dv = dv + (tu - v @ (vh @ tu)) / row
    return (du, ds, _mH(dv))


def _vjp_svd(ct: Any, primals: tuple, out: tuple, *, full_matrices: bool,
             compute_uv: bool) -> tuple:
    x = primals[0]
    if not is_float(x):
        return (None,)
    ct_u, ct_s, ct_vh = ct
    vectors = ct_u is not None or ct_vh is not None
    u, s, vh = _svd_parts(x, out, full_matrices, compute_uv, vectors)
    m, n = x.shape[-2:]
    sc = _as_dtype(s, x.dtype)
    row, col = xp.expand_dims(sc, axis=-2), xp.expand_dims(sc, axis=-1)
    kbar = None if ct_s is None else _diag_mat(_as_dtype(ct_s, x.dtype))
    abar = None
    f = _gap_matrix(s, True) if vectors else None

    def acc(a: Any, b: Any) -> Any:
        return b if a is None else a + b
    if ct_u is not None:
        ubar = _cj(ct_u)
        ju = _mH(u) @ ubar
        skew = ju - _mH(ju)
        kbar = acc(kbar, (f * skew) * row)
        if _cplx(ju):
            kbar = kbar + 0.5 * skew * _eye(ju) * _safe_recip(row)
        if m > n:
            abar = acc(abar, (ubar / row - u @ (_mH(u) @ ubar) / row) @ vh)
    if ct_vh is not None:
        vbar = _mT(ct_vh)    # the adjoint of V = Vh^H: conj(ct)^H
        v = _mH(vh)
        jv = vh @ vbar
        kbar = acc(kbar, col * (f * (jv - _mH(jv))))
        if n > m:
            abar = acc(abar, u @ _mH(vbar / row - v @ (vh @ vbar) / row))
    if kbar is None:
        return (None,) if abar is None else (_cj(abar),)
    abar = acc(abar, u @ kbar @ vh)
    return (_cj(abar),)


JVP["svd"] = _jvp_svd
VJP["svd"] = _vjp_svd


# ------------------------------------------------------------------------------ eig
def _eig_vectors(x: Any, out: tuple, compute_v: bool) -> Any:
    return out[1] if compute_v else _bind("eig", x, compute_v=True)[1]


def _no_eig_vectors(compute_v: bool, wanted: bool) -> None:
    if compute_v and wanted:
        raise NotImplementedError("clnp_grad: derivatives of the eigenvectors of eig are not "
                                  "implemented (only of its eigenvalues)")


def _jvp_eig(primals: tuple, tangents: tuple, out: tuple, *, compute_v: bool) -> tuple:
    """Eigenvalues only: ``dw = diag(V^-1 dA V)`` (distinct eigenvalues)."""
    t = tangents[0]
    if t is None:
        return (None, None)
    _no_eig_vectors(compute_v, True)
    v = _eig_vectors(primals[0], out, compute_v)
    return (_diag(xp.linalg.solve(v, t @ v)), None)


def _vjp_eig(ct: Any, primals: tuple, out: tuple, *, compute_v: bool) -> tuple:
    x = primals[0]
    ct_w, ct_v = ct
    _no_eig_vectors(compute_v, ct_v is not None)
    if ct_w is None:
        return (None,)
    v = _eig_vectors(x, out, compute_v)
    return (_mT(xp.linalg.inv(v)) @ _diag_mat(ct_w) @ _mT(v),)


JVP["eig"] = _jvp_eig
VJP["eig"] = _vjp_eig


# ------------------------------------------------------------------------------ batching
def _batch_same(prim: Any, vals: tuple, batched: tuple, size: int, **params: Any) -> Any:
    """The linalg primitives act on the trailing matrix dims: the batch axis passes through."""
    return prim.bind(vals[0], **params)


for _name in ("cholesky", "det", "slogdet", "inv", "lu", "qr", "eigh", "svd", "eig"):
    BATCH[_name] = _batch_same


def _batch_lu_solve(prim: Any, vals: tuple, batched: tuple, size: int, **params: Any) -> Any:
    return prim.bind(*(_materialize(v, b, size) for v, b in zip(vals, batched)), **params)


BATCH["lu_solve"] = _batch_lu_solve
