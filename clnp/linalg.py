"""``clnp.linalg``: the Array API ``linalg`` extension (2025.12), computed on the device.

Every decomposition runs on the device (``clnp._codegen.linalg``, one work-group per matrix
of a batch); nothing falls back to the host. Algorithms: Cholesky (right-looking), LU with
partial pivoting (``solve``, ``inv``, ``det``, ``slogdet``), both blocked from order 128 on
(panels of 64 columns, trailing updates by the GEMM kernel), Householder QR, Householder
tridiagonalization + implicit QL for ``eigh``, one-sided Jacobi for ``svd`` (a few sweeps of
about ``2 m n^2`` each), Hessenberg reduction + shifted complex QR for ``eig``. Norms,
``pinv``, ``matrix_rank`` and ``matrix_power`` are compositions of these with clnp
functions.

Conventions where the standard leaves a choice:

* Decompositions take float32, float64, complex64 and complex128 arrays; integer, boolean and
  float16 input raises ``TypeError`` (as NumPy's linalg does for float16).
* Eager calls raise :class:`LinAlgError` (a subclass of ``numpy.linalg.LinAlgError``) where
  NumPy raises: ``inv``/``solve``/``matrix_power(x, -n)`` of a singular matrix, ``cholesky``
  of one that is not positive definite, ``svd``/``svdvals``/``pinv``/``matrix_rank``/
  ``lstsq``/``cond`` when the SVD gives NaN, ``eig``/``eigvals`` of NaN or inf input,
  ``eigh`` when the iteration does not converge. The kernels write a status per matrix and
  the call reads it back once (see ``docs/linalg.md`` for the cost). Under ``clnp_grad``
  transformations and ``jit`` nothing is read back and nothing raises: ``cholesky`` gives an
  all-NaN factor, ``inv``/``solve`` inf/NaN entries, as in JAX. ``det`` is 0 and
  ``slogdet`` ``(0, -inf)`` for a singular matrix everywhere, as in NumPy.
* ``cholesky``, ``eigh`` and ``eigvalsh`` read the lower triangle (``cholesky(upper=True)``
  the upper one), like NumPy. Eigenvalues of ``eigh`` are ascending, singular values
  descending; ``eig`` returns complex eigenvalues and unit-norm eigenvectors in no particular
  order, for real input too.
"""
from __future__ import annotations

import math
import operator
from collections import namedtuple
from typing import Any, Sequence

import numpy as np

from . import _dtypes as dt
from ._helpers import is_array, normalize_axes
from ._linalg_info import LinAlgError, checked, reports_as
from ._linear_algebra_functions import matmul, tensordot, vecdot
from ._manipulation_functions import matrix_transpose
from ._prims import primitive

__all__ = ["cholesky", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv",
           "matmul", "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "outer",
           "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "tensordot", "trace", "vecdot",
           "vector_norm", "norm", "multi_dot", "cond", "lstsq", "LinAlgError",
           "EighResult", "EigResult", "QRResult", "SlogdetResult", "SVDResult"]
__all__ += ["tensorinv", "tensorsolve"]   # NumPy's, on inv/solve of the reshaped operands

EighResult = namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
EigResult = namedtuple("EigResult", ["eigenvalues", "eigenvectors"])
QRResult = namedtuple("QRResult", ["Q", "R"])
SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])
SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])

_DECOMP = (dt.float32, dt.float64, dt.complex64, dt.complex128)


def _xp() -> Any:
    import clnp
    return clnp


def _bind(name: str, *args: Any, **params: Any) -> Any:
    return primitive(name).bind(*args, **params)


def _float_array(x: Any, fname: str, arg: str = "x") -> Any:
    """``x`` checked to be an array of a dtype the decompositions support."""
    if not is_array(x):
        raise TypeError(f"linalg.{fname}: {arg} must be a clnp array; got {type(x).__name__} "
                        f"(wrap it with clnp.asarray)")
    if x.dtype not in _DECOMP:
        if x.dtype == dt.float16:
            raise TypeError(f"linalg.{fname}: float16 is not supported; convert {arg} to "
                            f"float32 or float64 first")
        raise TypeError(f"linalg.{fname} requires a floating-point array; got {arg} of dtype "
                        f"{x.dtype}")
    return x


def _matrix(x: Any, fname: str, square: bool = False, arg: str = "x") -> Any:
    if x.ndim < 2:
        raise ValueError(f"linalg.{fname}: {arg} must have at least two dimensions; got shape "
                         f"{x.shape}")
    if square and x.shape[-1] != x.shape[-2]:
        raise ValueError(f"linalg.{fname}: the last two dimensions of {arg} must be square; "
                         f"got shape {x.shape}")
    return x


def _square(x: Any, fname: str) -> Any:
    return _matrix(_float_array(x, fname), fname, square=True)


def _as(x: Any, dtype: np.dtype) -> Any:
    return x if x.dtype == dtype else _bind("convert_element_type", x, dtype=dtype)


def _real_dtype(dtype: np.dtype) -> np.dtype:
    return {dt.complex64: dt.float32, dt.complex128: dt.float64}.get(dtype, dtype)


def _same_device(x1: Any, x2: Any, fname: str) -> None:
    if x1.device is not x2.device:
        raise ValueError(f"linalg.{fname}: operands are on different devices: {x1.device} and "
                         f"{x2.device}; move one with to_device()")


def _check_numeric_pair(x1: Any, x2: Any, fname: str) -> None:
    """TypeError unless both operands are clnp arrays of numeric dtypes."""
    for name, v in (("x1", x1), ("x2", x2)):
        if not is_array(v):
            raise TypeError(f"linalg.{fname}: {name} must be a clnp array; got "
                            f"{type(v).__name__}")
        if v.dtype not in dt.NUMERIC:
            raise TypeError(f"linalg.{fname} requires numeric arrays; got {x1.dtype} and "
                            f"{x2.dtype}")


def _eps(dtype: np.dtype) -> float:
    return float(np.finfo(_real_dtype(dtype)).eps)


# ------------------------------------------------------------------------------ factorizations
def cholesky(x: Any, /, *, upper: bool = False) -> Any:
    """Returns the lower (upper) Cholesky decomposition of a complex Hermitian or real
    symmetric positive-definite matrix ``x`` (or a stack of them): ``x = L L^H`` or
    ``x = U^H U``.

    The lower triangle of ``x`` is read (the upper one when ``upper``).

    Raises
    ------
    LinAlgError
        Eagerly, when a matrix is not positive definite (as NumPy). Under transformations
        and ``jit`` such a matrix gets a factor full of NaN instead."""
    x = _square(x, "cholesky")
    return checked("cholesky", "Matrix is not positive definite", x.shape[:-2],
                   lambda: _bind("cholesky", x, upper=bool(upper)))


def det(x: Any, /) -> Any:
    """Returns the determinant of a square matrix (or a stack of square matrices) ``x``,
    with the same data type as ``x``."""
    return _bind("det", _square(x, "det"))


def slogdet(x: Any, /) -> SlogdetResult:
    """Returns the sign and the natural logarithm of the absolute value of the determinant of
    a square matrix (or a stack of them) as a namedtuple ``(sign, logabsdet)``.

    ``sign`` has the dtype of ``x`` (``det / |det|`` for complex ``x``), ``logabsdet`` the real
    dtype of the same precision; a singular matrix gives ``(0, -inf)``."""
    sign, logabsdet = _bind("slogdet", _square(x, "slogdet"))
    return SlogdetResult(sign, logabsdet)


def inv(x: Any, /) -> Any:
    """Returns the multiplicative inverse of a square matrix (or a stack of square matrices)
    ``x`` (LU with partial pivoting).

    Raises
    ------
    LinAlgError
        Eagerly, when a matrix is singular (an exact zero pivot, as NumPy/LAPACK). Under
        transformations and ``jit`` it gets inf/NaN entries instead."""
    x = _square(x, "inv")
    return checked("inv", "Singular matrix", x.shape[:-2], lambda: _bind("inv", x))


def solve(x1: Any, x2: Any, /) -> Any:
    """Returns the solution of the square system ``x1 @ out = x2`` (LU with partial pivoting).

    ``x1`` has shape ``(..., M, M)``. A one-dimensional ``x2`` of shape ``(M,)`` is one
    right-hand side for every matrix of the stack and the result has shape
    ``x1.shape[:-2] + (M,)``; otherwise ``x2`` has shape ``(..., M, K)``, the batch dimensions
    broadcast and the result has shape ``(..., M, K)``. The result has the promoted
    floating-point dtype.

    Raises
    ------
    LinAlgError
        Eagerly, when a matrix of ``x1`` is singular (under transformations and ``jit`` the
        solution gets inf/NaN entries instead)."""
    x1 = _matrix(_float_array(x1, "solve", "x1"), "solve", square=True, arg="x1")
    x2 = _float_array(x2, "solve", "x2")
    _same_device(x1, x2, "solve")
    M = x1.shape[-1]
    if x2.ndim == 0:
        raise ValueError(f"linalg.solve: x2 must have at least one dimension; got shapes "
                         f"{x1.shape} and {x2.shape}")
    vector = x2.ndim == 1
    rows = x2.shape[0] if vector else x2.shape[-2]
    if rows != M:
        raise ValueError(f"linalg.solve: x1 of shape {x1.shape} and x2 of shape {x2.shape} "
                         f"do not match ({M} equations, {rows} rows in x2)")
    from ._eager import broadcast_shapes
    b2 = () if vector else x2.shape[:-2]
    try:
        batch = broadcast_shapes(x1.shape[:-2], b2)
    except ValueError:
        raise ValueError(f"linalg.solve: batch dimensions of shapes {x1.shape} and {x2.shape} "
                         f"cannot be broadcast together") from None
    d = dt.promote(x1.dtype, x2.dtype)
    lu, piv = checked("solve", "Singular matrix", x1.shape[:-2],
                      lambda: _bind("lu", _as(x1, d)))
    rhs = _as(x2, d)
    if vector:
        rhs = _bind("reshape", rhs, shape=(M, 1))
    K = rhs.shape[-1]
    bc = "broadcast_to"
    x = _bind("lu_solve", _bind(bc, lu, shape=batch + (M, M)),
              _bind(bc, piv, shape=batch + (M,)), _bind(bc, rhs, shape=batch + (M, K)))
    return _bind("reshape", x, shape=batch + (M,)) if vector else x


def qr(x: Any, /, mode: str = "reduced") -> QRResult | Any:
    """Returns the QR decomposition ``x = Q R`` of a matrix (or a stack of matrices) as a
    namedtuple ``(Q, R)`` (Householder reflections; ``R`` has a real diagonal).

    ``mode="reduced"``: ``Q`` ``(..., M, K)``, ``R`` ``(..., K, N)`` with ``K = min(M, N)``;
    ``mode="complete"``: ``Q`` ``(..., M, M)``, ``R`` ``(..., M, N)``; NumPy's ``mode="r"``:
    ``R`` alone."""
    x = _matrix(_float_array(x, "qr"), "qr")
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"linalg.qr: mode must be 'reduced' or 'complete' (or NumPy's 'r'); "
                         f"got {mode!r}")
    q, r = _bind("qr", x, mode=mode)
    return r if mode == "r" else QRResult(q, r)


def _triangle(x: Any, UPLO: str, fname: str) -> Any:
    """``x`` arranged so that the kernel's lower triangle holds the one ``UPLO`` names."""
    if UPLO not in ("L", "U"):
        raise ValueError(f"linalg.{fname}: UPLO must be 'L' or 'U'; got {UPLO!r}")
    if UPLO == "L":
        return x
    xt = matrix_transpose(x)
    return _xp().conj(xt) if x.dtype.kind == "c" else xt


def eigh(x: Any, /, UPLO: str = "L") -> EighResult:
    """Returns the eigenvalue decomposition ``x = Q diag(w) Q^H`` of a complex Hermitian or
    real symmetric matrix (or a stack of them) as a namedtuple ``(eigenvalues,
    eigenvectors)``.

    Only the lower triangle of ``x`` is read (the upper one with NumPy's ``UPLO="U"``).
    Eigenvalues are ascending, with the real dtype of ``x``'s precision; the eigenvectors are
    the columns of an orthogonal (unitary) matrix of ``x``'s dtype."""
    x = _triangle(_square(x, "eigh"), UPLO, "eigh")
    w, v = _eigh(x, True, "eigh")
    return EighResult(w, v)


def eigvalsh(x: Any, /, UPLO: str = "L") -> Any:
    """Returns the eigenvalues (ascending, real dtype) of a complex Hermitian or real
    symmetric matrix (or a stack of them); only the lower triangle of ``x`` is read (the
    upper one with NumPy's ``UPLO="U"``)."""
    x = _triangle(_square(x, "eigvalsh"), UPLO, "eigvalsh")
    return _eigh(x, False, "eigvalsh")[0]


def _eigh(x: Any, compute_v: bool, fname: str) -> Any:
    return checked(fname, "Eigenvalues did not converge", x.shape[:-2],
                   lambda: _bind("eigh", x, compute_v=compute_v))


def _svd(x: Any, fname: str, **params: Any) -> Any:
    return checked(fname, "SVD did not converge", x.shape[:-2],
                   lambda: _bind("svd", x, **params))


def _eig(x: Any, compute_v: bool, fname: str) -> Any:
    return checked(fname, "Array must not contain infs or NaNs", x.shape[:-2],
                   lambda: _bind("eig", x, compute_v=compute_v))


def _complex_of(x: Any) -> Any:
    return _as(x, dt.complex128 if x.dtype in (dt.float64, dt.complex128) else dt.complex64)


def eig(x: Any, /) -> EigResult:
    """Returns eigenvalues and eigenvectors of a real or complex square matrix (or a stack of
    them) as a namedtuple ``(eigenvalues, eigenvectors)``, both complex of ``x``'s precision.

    Eigenvectors are the columns of ``eigenvectors``, each of unit Euclidean norm with its
    largest component real; the order of the eigenvalues is unspecified."""
    w, v = _eig(_complex_of(_square(x, "eig")), True, "eig")
    return EigResult(w, v)


def eigvals(x: Any, /) -> Any:
    """Returns the eigenvalues (complex, of ``x``'s precision) of a real or complex square
    matrix (or a stack of them), in no particular order."""
    return _eig(_complex_of(_square(x, "eigvals")), False, "eigvals")[0]


def svd(x: Any, /, full_matrices: bool = True, compute_uv: bool = True,
        hermitian: bool = False) -> SVDResult | Any:
    """Returns a singular value decomposition ``x = U diag(S) Vh`` of a matrix (or a stack
    of matrices) as a namedtuple ``(U, S, Vh)``.

    ``S`` (real dtype of ``x``'s precision) is sorted in descending order. With
    ``full_matrices`` ``U`` is ``(..., M, M)`` and ``Vh`` ``(..., N, N)``, otherwise
    ``(..., M, K)`` and ``(..., K, N)`` with ``K = min(M, N)``. NumPy's ``compute_uv=False``
    returns ``S`` alone; ``hermitian`` is accepted and ignored (the general algorithm is
    used)."""
    x = _matrix(_float_array(x, "svd"), "svd")
    if not compute_uv:
        return _svd(x, "svd", full_matrices=False, compute_uv=False)[1]
    u, s, vh = _svd(x, "svd", full_matrices=bool(full_matrices), compute_uv=True)
    return SVDResult(u, s, vh)


def svdvals(x: Any, /) -> Any:
    """Returns the singular values of a matrix (or a stack of matrices), sorted in
    descending order, with the real dtype of ``x``'s precision."""
    x = _matrix(_float_array(x, "svdvals"), "svdvals")
    return _svd(x, "svdvals", full_matrices=False, compute_uv=False)[1]


# ------------------------------------------------------------------------------ compositions
def _rtol_array(rtol: Any, x: Any, fname: str) -> Any:
    """``rtol`` as something that broadcasts against the ``(..., 1)`` maximum singular
    values; the default is ``max(M, N) * eps``."""
    xp = _xp()
    if rtol is None:
        return max(x.shape[-2:]) * _eps(x.dtype)
    if is_array(rtol):
        if rtol.dtype not in (dt.float16, dt.float32, dt.float64):
            raise TypeError(f"linalg.{fname}: rtol must have a real floating-point dtype; got "
                            f"{rtol.dtype}")
        return xp.expand_dims(rtol, axis=-1)
    if isinstance(rtol, (bool, complex)) or not isinstance(rtol, (int, float, np.floating,
                                                                    np.integer)):
        raise TypeError(f"linalg.{fname}: rtol must be a float or an array; got "
                        f"{type(rtol).__name__}")
    return float(rtol)


@reports_as("matrix_rank")
def matrix_rank(x: Any, /, tol: float | Any | None = None, hermitian: bool = False, *,
                rtol: float | Any | None = None) -> Any:
    """Returns the rank (number of singular values greater than ``rtol * largest``) of a
    matrix (or a stack of matrices), in the default integer dtype, shape ``x.shape[:-2]``.

    ``rtol`` defaults to ``max(M, N) * eps``; an array ``rtol`` broadcasts against
    ``x.shape[:-2]``. NumPy's ``tol`` is an absolute threshold instead (not together with
    ``rtol``); ``hermitian`` is accepted and ignored."""
    xp = _xp()
    x = _matrix(_float_array(x, "matrix_rank"), "matrix_rank")
    if tol is not None and rtol is not None:
        raise ValueError("linalg.matrix_rank: tol and rtol cannot both be set")
    rel = _rtol_array(rtol, x, "matrix_rank")
    if min(x.shape[-2:]) == 0:
        return xp.zeros(x.shape[:-2], dtype=xp.int64, device=x.device)
    s = svdvals(x)
    if tol is not None:
        cut = xp.expand_dims(tol, axis=-1) if is_array(tol) else float(tol)
    else:
        cut = xp.max(s, axis=-1, keepdims=True) * rel
    return xp.astype(xp.count_nonzero(s > cut, axis=-1), xp.int64)


@reports_as("pinv")
def pinv(x: Any, /, rcond: float | Any | None = None, hermitian: bool = False, *,
         rtol: float | Any | None = None) -> Any:
    """Returns the (Moore-Penrose) pseudo-inverse ``V diag(1/S) U^H`` of a matrix (or a stack
    of matrices), shape ``(..., N, M)``; singular values at or below ``rtol * largest`` count
    as zero (``rtol`` defaults to ``max(M, N) * eps``). NumPy's ``rcond`` is another name
    for ``rtol``; ``hermitian`` is accepted and ignored."""
    xp = _xp()
    x = _matrix(_float_array(x, "pinv"), "pinv")
    if rcond is not None:
        if rtol is not None:
            raise ValueError("linalg.pinv: rcond and rtol cannot both be set")
        rtol = rcond
    tol = _rtol_array(rtol, x, "pinv")
    M, N = x.shape[-2:]
    if min(M, N) == 0:
        return xp.zeros(x.shape[:-2] + (N, M), dtype=x.dtype, device=x.device)
    u, s, vh = svd(x, full_matrices=False)
    cut = xp.max(s, axis=-1, keepdims=True) * tol
    keep = s > cut
    sinv = xp.where(keep, 1 / xp.where(keep, s, xp.ones_like(s)), xp.zeros_like(s))
    sinv = _as(sinv, x.dtype)
    vs = xp.conj(matrix_transpose(vh)) * xp.expand_dims(sinv, axis=-2)
    return matmul(vs, xp.conj(matrix_transpose(u)))


@reports_as("matrix_power")
def matrix_power(x: Any, n: int, /) -> Any:
    """Raises a square matrix (or a stack of square matrices) ``x`` to the integer power
    ``n`` (repeated squaring with ``matmul``); ``n = 0`` gives identity matrices and a
    negative ``n`` powers of the inverse. Integer matrices are accepted for ``n >= 0``."""
    xp = _xp()
    if not is_array(x):
        raise TypeError(f"linalg.matrix_power: x must be a clnp array; got {type(x).__name__}")
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"linalg.matrix_power: n must be an integer; got "
                        f"{type(n).__name__}") from None
    if n < 0 or x.dtype not in dt.NUMERIC:
        _float_array(x, "matrix_power")
    _matrix(x, "matrix_power", square=True)
    if n == 0:
        eye = xp.eye(x.shape[-1], dtype=x.dtype, device=x.device)
        return xp.zeros(x.shape, dtype=x.dtype, device=x.device) + eye
    orig = x
    if n < 0:
        x, n = inv(x), -n
    result = None
    base = x
    while True:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if not n:
            break
        base = matmul(base, base)
    return xp.asarray(result, copy=True) if result is orig else result


@reports_as("matrix_norm")
def matrix_norm(x: Any, /, *, keepdims: bool = False,
                ord: int | float | str | None = "fro") -> Any:
    """Computes the matrix norm of a matrix (or a stack of matrices) ``x``.

    ``ord``: ``'fro'`` (Frobenius), ``'nuc'`` (sum of singular values), ``1``/``-1``
    (max/min column sum of ``|x|``), ``2``/``-2`` (largest/smallest singular value),
    ``inf``/``-inf`` (max/min row sum of ``|x|``). The result has the real dtype of ``x``'s
    precision; ``keepdims`` keeps the last two axes as size 1."""
    xp = _xp()
    x = _matrix(_float_array(x, "matrix_norm"), "matrix_norm")
    if ord is None:
        ord = "fro"
    rd = _real_dtype(x.dtype)
    if isinstance(ord, str):
        if ord == "fro":
            r = vector_norm(x, axis=(-2, -1), ord=2)
        elif ord == "nuc":
            r = xp.sum(svdvals(x), axis=-1)
        else:
            raise ValueError(f"linalg.matrix_norm: invalid ord {ord!r}")
    elif ord in (2, -2):
        if min(x.shape[-2:]) == 0:
            raise ValueError(f"linalg.matrix_norm: ord={ord} of an empty matrix of shape "
                             f"{x.shape}")
        s = svdvals(x)
        r = xp.max(s, axis=-1) if ord == 2 else xp.min(s, axis=-1)
    elif ord in (1, -1, math.inf, -math.inf):
        ax = -2 if ord in (1, -1) else -1
        sums = xp.sum(xp.abs(x), axis=ax)
        r = xp.max(sums, axis=-1) if ord > 0 else xp.min(sums, axis=-1)
    else:
        raise ValueError(f"linalg.matrix_norm: invalid ord {ord!r} (expected 'fro', 'nuc', "
                         f"1, -1, 2, -2, inf or -inf)")
    r = _as(r, rd)
    if keepdims:
        r = xp.reshape(r, r.shape + (1, 1))
    return r


def vector_norm(x: Any, /, *, axis: int | tuple[int, ...] | None = None,
                keepdims: bool = False, ord: int | float = 2) -> Any:
    """Computes the vector norm of a vector (or batch of vectors) ``x`` over ``axis`` (all
    axes when None; an int or a tuple of axes, negative ones allowed).

    ``ord``: ``2`` (Euclidean), ``1``, ``inf`` (max ``|x|``), ``-inf`` (min ``|x|``), ``0``
    (number of nonzeros), any other ``p``: ``sum(|x|**p)**(1/p)``. The result has the real
    dtype of ``x``'s precision."""
    xp = _xp()
    x = _float_array(x, "vector_norm")
    if isinstance(ord, (bool, str)) or not isinstance(ord, (int, float, np.integer,
                                                            np.floating)):
        raise ValueError(f"linalg.vector_norm: invalid ord {ord!r}")
    axes = normalize_axes(axis, x.ndim, "linalg.vector_norm")
    rd = _real_dtype(x.dtype)
    a = xp.abs(x)
    ord = float(ord)
    if not axes:
        r = a if ord != 0 else _as(a != 0, rd)
    elif ord == 2:
        r = xp.sqrt(xp.sum(a * a, axis=axes))
    elif ord == 1:
        r = xp.sum(a, axis=axes)
    elif ord == math.inf:
        r = xp.max(a, axis=axes)
    elif ord == -math.inf:
        r = xp.min(a, axis=axes)
    elif ord == 0:
        r = _as(xp.sum(_as(a != 0, rd), axis=axes), rd)
    else:
        r = xp.pow(xp.sum(xp.pow(a, ord), axis=axes), 1.0 / ord)
    r = _as(r, rd)
    if keepdims:
        shape = tuple(1 if i in axes else n for i, n in enumerate(x.shape))
        r = xp.reshape(r, shape)
    return r


def diagonal(x: Any, /, *, offset: int = 0) -> Any:
    """Returns the ``offset``-th diagonals of a matrix (or a stack of matrices) ``x``: the
    last two axes are replaced by one holding the diagonal (``offset > 0`` above the main
    diagonal, ``< 0`` below)."""
    if not is_array(x):
        raise TypeError(f"linalg.diagonal: x must be a clnp array; got {type(x).__name__}")
    _matrix(x, "diagonal")
    try:
        offset = operator.index(offset)
    except TypeError:
        raise TypeError(f"linalg.diagonal: offset must be an integer; got "
                        f"{type(offset).__name__}") from None
    M, N = x.shape[-2:]
    if offset >= N or -offset >= M:
        return _xp().zeros(x.shape[:-2] + (0,), dtype=x.dtype, device=x.device)
    return _xp().diagonal(x, offset, -2, -1)


def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
    """Returns the sum along the ``offset``-th diagonals of a matrix (or a stack of
    matrices) ``x``; ``dtype`` as for ``sum`` (integers accumulate in the default integer
    dtype, floating-point input keeps its dtype)."""
    if not is_array(x):
        raise TypeError(f"linalg.trace: x must be a clnp array; got {type(x).__name__}")
    if x.dtype not in dt.NUMERIC:
        raise TypeError(f"linalg.trace requires a numeric array; got dtype {x.dtype}")
    return _xp().sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """Returns the cross product of 3-element vectors along ``axis`` (negative, counted from
    the last axis) of ``x1`` and ``x2``; the other axes broadcast. The result has the
    promoted dtype."""
    xp = _xp()
    _check_numeric_pair(x1, x2, "cross")
    _same_device(x1, x2, "cross")
    try:
        ax = operator.index(axis)
    except TypeError:
        raise TypeError(f"linalg.cross: axis must be an integer; got "
                        f"{type(axis).__name__}") from None
    nd = min(x1.ndim, x2.ndim)
    if nd == 0 or not -nd <= ax <= -1:
        raise ValueError(f"linalg.cross: axis {ax} is out of range [-{nd}, -1] for shapes "
                         f"{x1.shape} and {x2.shape}")
    if x1.shape[ax] != 3 or x2.shape[ax] != 3:
        raise ValueError(f"linalg.cross: shapes {x1.shape} and {x2.shape} must have size 3 "
                         f"along axis {ax}")
    from ._eager import broadcast_shapes
    try:
        shape = broadcast_shapes(x1.shape, x2.shape)
    except ValueError:
        raise ValueError(f"linalg.cross: shapes {x1.shape} and {x2.shape} cannot be "
                         f"broadcast together") from None
    d = dt.promote(x1.dtype, x2.dtype)
    a = xp.broadcast_to(_as(x1, d), shape)
    b = xp.broadcast_to(_as(x2, d), shape)
    tail = (slice(None),) * (-ax - 1)

    def comp(v: Any, i: int) -> Any:
        return v[(Ellipsis, i) + tail]

    a0, a1, a2 = (comp(a, i) for i in range(3))
    b0, b1, b2 = (comp(b, i) for i in range(3))
    return xp.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=ax)


def outer(x1: Any, x2: Any, /) -> Any:
    """Returns the outer product of two vectors ``x1`` (size ``N``) and ``x2`` (size ``M``):
    an ``(N, M)`` array of the promoted dtype."""
    xp = _xp()
    _check_numeric_pair(x1, x2, "outer")
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"linalg.outer: both operands must be one-dimensional; got shapes "
                         f"{x1.shape} and {x2.shape}")
    _same_device(x1, x2, "outer")
    return xp.multiply(xp.reshape(x1, (-1, 1)), xp.reshape(x2, (1, -1)))


# ------------------------------------------------------------------------------ NumPy names
@reports_as("norm")
def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    """NumPy's ``linalg.norm``: the Frobenius/2-norm of ``x`` (flattened) when ``ord`` and
    ``axis`` are None, a vector norm over one axis, a matrix norm over two."""
    xp = _xp()
    if not is_array(x):
        x = xp.asarray(x)
    if x.dtype not in _DECOMP:
        x = xp.astype(x, dt.float32 if x.dtype == dt.float16 else x.device.default_float)
    if axis is None:
        if ord is None:
            return vector_norm(x, keepdims=keepdims)
        axis = tuple(range(x.ndim))
    axes = normalize_axes(axis, x.ndim, "linalg.norm")
    if len(axes) == 1:
        return vector_norm(x, axis=axes, keepdims=keepdims, ord=2 if ord is None else ord)
    if len(axes) == 2:
        if ord is None:
            return vector_norm(x, axis=axes, keepdims=keepdims)
        rest = [i for i in range(x.ndim) if i not in axes]
        moved = xp.permute_dims(x, tuple(rest) + tuple(axes))
        r = matrix_norm(moved, ord=ord)
        if keepdims:
            shape = tuple(1 if i in axes else n for i, n in enumerate(x.shape))
            r = xp.reshape(r, shape)
        return r
    raise ValueError("linalg.norm: improper number of dimensions to norm")


def multi_dot(arrays: Sequence[Any], *, out: Any = None) -> Any:
    """NumPy's ``linalg.multi_dot``: the chained matrix product, with a leading 1-D operand
    a row vector and a trailing one a column vector (evaluated left to right)."""
    if out is not None:
        raise TypeError("linalg.multi_dot: out= is not supported")
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ValueError("linalg.multi_dot: expecting at least two arrays")
    r = arrays[0]
    for a in arrays[1:]:
        r = matmul(r, a)
    return r


@reports_as("cond")
def cond(x: Any, p: Any = None) -> Any:
    """NumPy's ``linalg.cond``: the condition number of ``x`` in the norm ``p`` (the
    2-norm, ``s_max / s_min``, when None)."""
    xp = _xp()
    x = _matrix(_float_array(x, "cond"), "cond")
    if p is None or p in (2, -2):
        s = svdvals(x)
        r = xp.max(s, axis=-1) / xp.min(s, axis=-1)
        return r if p in (None, 2) else 1 / r
    _matrix(x, "cond", square=True)
    # NumPy's cond gives inf for a singular matrix instead of raising: the unchecked inverse
    r = matrix_norm(x, ord=p) * matrix_norm(_bind("inv", x), ord=p)
    return xp.where(xp.isnan(r), xp.asarray(math.inf, dtype=r.dtype, device=r.device), r)


def lstsq(a: Any, b: Any, rcond: Any = None) -> tuple[Any, Any, Any, Any]:
    """NumPy's ``linalg.lstsq``: the least-squares solution of ``a @ x = b`` through the
    pseudo-inverse; returns ``(x, residuals, rank, s)`` as NumPy does (residuals are
    computed when ``a`` has full column rank and more rows than columns, else empty)."""
    xp = _xp()
    a = _matrix(_float_array(a, "lstsq", "a"), "lstsq", arg="a")
    b = _float_array(b, "lstsq", "b")
    if a.ndim != 2:
        raise ValueError(f"linalg.lstsq: a must be two-dimensional; got shape {a.shape}")
    if b.ndim not in (1, 2) or b.shape[0] != a.shape[0]:
        raise ValueError(f"linalg.lstsq: incompatible shapes {a.shape} and {b.shape}")
    d = dt.promote(a.dtype, b.dtype)
    a, b = _as(a, d), _as(b, d)
    M, N = a.shape
    rtol = None if rcond is None else float(rcond)
    if rtol is not None and rtol < 0:
        rtol = _eps(d)
    try:
        s = svdvals(a)
    except LinAlgError:
        raise LinAlgError("linalg.lstsq: SVD did not converge in Linear Least Squares") \
            from None
    rank = matrix_rank(a, rtol=rtol)
    x = matmul(pinv(a, rtol=rtol), b)
    r = int(rank)
    if r == N and M > N:
        res = matmul(a, x) - b
        res = xp.sum(_as(xp.abs(res) ** 2, _real_dtype(d)), axis=0)
        if b.ndim == 1:
            res = xp.reshape(res, (1,))
    else:
        res = xp.empty((0,), dtype=_real_dtype(d), device=a.device)
    return x, res, r, s


def tensorinv(a: Any, ind: int = 2) -> Any:
    """The inverse of an N-d array for ``tensordot`` with ``ind`` leading axes (NumPy's
    ``linalg.tensorinv``).

    Parameters
    ----------
    a : Array
        With ``prod(a.shape[:ind]) == prod(a.shape[ind:])``.
    ind : int, optional
        Number of leading axes of the "row" side.

    Returns
    -------
    Array
        Of shape ``a.shape[ind:] + a.shape[:ind]``.

    Raises
    ------
    ValueError
        When ``ind`` is not positive.
    LinAlgError
        When the reshaped matrix is not square or singular.

    Examples
    --------
    >>> import numpy, clnp
    >>> a = clnp.reshape(clnp.eye(4) * 2.0, (4, 2, 2))
    >>> clnp.linalg.tensorinv(a, ind=1).shape
    (2, 2, 4)
    """
    import clnp
    x = a if is_array(a) else clnp.asarray(a)
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError(f"tensorinv: invalid ind argument {ind}; it must be positive")
    old = x.shape
    rows = math.prod(old[:ind])
    cols = math.prod(old[ind:])
    if rows != cols:
        raise LinAlgError(f"tensorinv: prod(a.shape[:ind]) = {rows} and prod(a.shape[ind:]) = "
                          f"{cols} differ: the reshaped matrix is not square")
    return clnp.reshape(inv(clnp.reshape(x, (rows, cols))), old[ind:] + old[:ind])


def tensorsolve(a: Any, b: Any, axes: Sequence[int] | None = None) -> Any:
    """Solve ``tensordot(a, x, axes=x.ndim) = b`` for ``x`` (NumPy's
    ``linalg.tensorsolve``).

    Parameters
    ----------
    a : Array
        Coefficients; its trailing dimensions (after moving ``axes`` there) are ``x``'s.
    b : Array
        Right-hand side, of ``a``'s leading shape.
    axes : tuple of int, optional
        Axes of ``a`` to move to the end first.

    Returns
    -------
    Array
        ``x``, of shape ``a.shape[b.ndim:]``.

    Raises
    ------
    LinAlgError
        When the reshaped system is not square or singular.

    Examples
    --------
    >>> import numpy, clnp
    >>> a = clnp.reshape(clnp.eye(6) * 2.0, (6, 2, 3))
    >>> print(numpy.asarray(clnp.linalg.tensorsolve(a, clnp.ones(6) * 2.0)))
    [[1. 1. 1.]
     [1. 1. 1.]]
    """
    import clnp
    x = a if is_array(a) else clnp.asarray(a)
    y = b if is_array(b) else clnp.asarray(b, device=x.device)
    if axes is not None:
        allaxes = list(range(x.ndim))
        for k in axes:
            allaxes.remove(k)
            allaxes.insert(x.ndim, k)
        x = clnp.permute_dims(x, tuple(allaxes))
    oldshape = x.shape[-(x.ndim - y.ndim):] if x.ndim > y.ndim else ()
    prod = math.prod(oldshape)
    if math.prod(x.shape) != prod * prod:
        raise LinAlgError(f"tensorsolve: the problem is not square: a has shape {x.shape} "
                          f"and b has shape {y.shape}")
    res = solve(clnp.reshape(x, (prod, prod)), clnp.reshape(y, (prod, 1)))
    return clnp.reshape(res, oldshape)
