"""``clnp.linalg``: the Array API ``linalg`` extension (2025.12), computed on the device.

Every decomposition runs on the device (``clnp._kernels.linalg``, one work-group per matrix
of a batch); nothing falls back to the host. Algorithms: Cholesky (right-looking), LU with
partial pivoting (``solve``, ``inv``, ``det``, ``slogdet``), both blocked from order 128 on
(panels of 64 columns, trailing updates by the GEMM kernel), Householder QR, Householder
tridiagonalization + implicit QL for ``eigh``, one-sided Jacobi for ``svd`` (a few sweeps of
about ``2 m n^2`` each), Hessenberg reduction + shifted complex QR for ``eig``. Norms,
``pinv``, ``matrix_rank`` and ``matrix_power`` are compositions of these with clnp
functions.

Conventions where the standard leaves a choice:

* Decompositions take float32, float64, complex64 and complex128 arrays; integer, boolean and
  float16 and bfloat16 inputs raise ``TypeError`` (as NumPy's linalg does for float16).
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

from ._core import dtypes as dt
from ._core.checks import is_array, normalize_axes
from ._core.array import Array
from ._routines import host_lapack
from ._routines.linalg_status import LinAlgError, checked, eager, reports_as
from ._array_api.linear_algebra import matmul, tensordot, vecdot
from ._array_api.manipulation import matrix_transpose
from ._core.prims import primitive
from ._core.namespace import namespace as _xp
from ._core.namespace import namespace as _namespace

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
EighResult.__doc__ = "What `eigh` returns: the eigenvalues (ascending) and the eigenvectors."
EigResult.__doc__ = "What `eig` returns: the eigenvalues and the eigenvectors."
QRResult.__doc__ = "What `qr` returns: the factors Q and R."
SlogdetResult.__doc__ = "What `slogdet` returns: the sign and the log of the absolute determinant."
SVDResult.__doc__ = "What `svd` returns: U, the singular values S (descending) and Vh."

_DECOMP = (dt.float32, dt.float64, dt.complex64, dt.complex128)




def _bind(name: str, *args: Any, **params: Any) -> Any:
    return primitive(name).bind(*args, **params)


def _float_array(x: Any, fname: str, arg: str = "x") -> Any:
    """``x`` checked to be an array of a dtype the decompositions support."""
    if not is_array(x):
        raise TypeError(f"linalg.{fname}: {arg} must be a clnp array; got {type(x).__name__} "
                        f"(wrap it with clnp.asarray)")
    if x.dtype not in _DECOMP:
        if x.dtype in dt.HALF:
            raise TypeError(f"linalg.{fname}: {x.dtype} is not supported; convert {arg} to "
                            f"float32 or float64 first")
        raise TypeError(f"linalg.{fname} requires a floating-point array; got {arg} of dtype "
                        f"{x.dtype}")
    return x


def _matrix(x: Any, fname: str, square: bool = False, arg: str = "x") -> Any:
    if x.ndim < 2:
        # NumPy's class (a ValueError), so code written for either catches it
        raise LinAlgError(f"linalg.{fname}: {arg} must have at least two dimensions; got "
                          f"shape {x.shape}")
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

    Parameters
    ----------
    x : array
        Matrix or stack of matrices, shape ``(..., M, M)``, of dtype float32, float64,
        complex64 or complex128.
    upper : bool, default False
        Return the upper factor ``U`` instead of the lower factor ``L``.

    Returns
    -------
    array
        The triangular factor, of ``x``'s shape and dtype.

    Raises
    ------
    TypeError
        ``x`` is not a clnp array, or its dtype is integer, boolean or float16.
    ValueError
        ``x`` has fewer than two dimensions or its last two are not square.
    LinAlgError
        Eagerly, when a matrix is not positive definite (as NumPy). Under transformations
        and ``jit`` such a matrix gets a factor full of NaN instead.

    Examples
    --------
    >>> import clnp
    >>> x = clnp.asarray([[4.0, 2.0], [2.0, 5.0]], dtype=clnp.float32)
    >>> print(clnp.linalg.cholesky(x))
    [[2. 0.]
     [1. 2.]]
    >>> print(clnp.linalg.cholesky(x, upper=True))
    [[2. 1.]
     [0. 2.]]
    """
    x = _square(x, "cholesky")
    return checked("cholesky", "Matrix is not positive definite", x.shape[:-2],
                   lambda: _bind("cholesky", x, upper=bool(upper)))


def det(x: Any, /) -> Any:
    """Returns the determinant of a square matrix (or a stack of square matrices) ``x``,
    with the same data type as ``x``.

    Parameters
    ----------
    x : array
        Square matrix or stack of them, shape ``(..., M, M)``, of a floating-point or complex
        dtype (not float16).

    Returns
    -------
    array
        The determinants, shape ``x.shape[:-2]``; 0 for a singular matrix.

    Raises
    ------
    TypeError
        ``x`` is not a clnp array, or its dtype is integer, boolean or float16.
    ValueError
        ``x`` has fewer than two dimensions or its last two are not square.

    Examples
    --------
    >>> import clnp
    >>> x = clnp.asarray([[2.0, 1.0], [1.0, 3.0]], dtype=clnp.float32)
    >>> print(clnp.linalg.det(x))
    5.0
    """
    return _bind("det", _square(x, "det"))


def slogdet(x: Any, /) -> SlogdetResult:
    """Returns the sign and the natural logarithm of the absolute value of the determinant of
    a square matrix (or a stack of them) as a namedtuple ``(sign, logabsdet)``.

    ``sign`` has the dtype of ``x`` (``det / |det|`` for complex ``x``), ``logabsdet`` the real
    dtype of the same precision; a singular matrix gives ``(0, -inf)``.

    Parameters
    ----------
    x : array
        Square matrix or stack of them, shape ``(..., M, M)``, of a floating-point or complex
        dtype (not float16).

    Returns
    -------
    SlogdetResult
        ``(sign, logabsdet)``, each of shape ``x.shape[:-2]``.

    Raises
    ------
    TypeError
        ``x`` is not a clnp array, or its dtype is integer, boolean or float16.
    ValueError
        ``x`` has fewer than two dimensions or its last two are not square.

    Examples
    --------
    >>> import clnp
    >>> x = clnp.asarray([[0.0, 2.0], [1.0, 0.0]], dtype=clnp.float32)
    >>> sign, logabsdet = clnp.linalg.slogdet(x)
    >>> print(sign, round(float(logabsdet), 4))
    -1.0 0.6931
    """
    sign, logabsdet = _bind("slogdet", _square(x, "slogdet"))
    return SlogdetResult(sign, logabsdet)


def inv(x: Any, /) -> Any:
    """Returns the multiplicative inverse of a square matrix (or a stack of square matrices)
    ``x`` (LU with partial pivoting).

    Parameters
    ----------
    x : array
        Square matrix or stack of them, shape ``(..., M, M)``, of a floating-point or complex
        dtype (not float16).

    Returns
    -------
    array
        The inverses, of ``x``'s shape and dtype.

    Raises
    ------
    TypeError
        ``x`` is not a clnp array, or its dtype is integer, boolean or float16.
    ValueError
        ``x`` has fewer than two dimensions or its last two are not square.
    LinAlgError
        Eagerly, when a matrix is singular (an exact zero pivot, as NumPy/LAPACK). Under
        transformations and ``jit`` it gets inf/NaN entries instead.

    Examples
    --------
    >>> import clnp
    >>> import numpy
    >>> x = clnp.asarray([[2.0, 1.0], [1.0, 1.0]], dtype=clnp.float32)
    >>> print(clnp.linalg.inv(x))
    [[ 1. -1.]
     [-1.  2.]]
    >>> try:
    ...     clnp.linalg.inv(clnp.asarray([[1.0, 2.0], [2.0, 4.0]]))
    ... except numpy.linalg.LinAlgError as e:
    ...     print(e)
    linalg.inv: Singular matrix
    """
    x = _square(x, "inv")
    return checked("inv", "Singular matrix", x.shape[:-2], lambda: _bind("inv", x))


def solve(x1: Any, x2: Any, /) -> Any:
    """Returns the solution of the square system ``x1 @ out = x2`` (LU with partial pivoting).

    ``x1`` has shape ``(..., M, M)``. A one-dimensional ``x2`` of shape ``(M,)`` is one
    right-hand side for every matrix of the stack and the result has shape
    ``x1.shape[:-2] + (M,)``; otherwise ``x2`` has shape ``(..., M, K)``, the batch dimensions
    broadcast and the result has shape ``(..., M, K)``. The result has the promoted
    floating-point dtype.

    Parameters
    ----------
    x1 : array
        Coefficient matrices, shape ``(..., M, M)``, of a floating-point or complex dtype (not
        float16).
    x2 : array
        Right-hand sides: shape ``(M,)`` or ``(..., M, K)``, on ``x1``'s device.

    Returns
    -------
    array
        The solutions, shape ``x1.shape[:-2] + (M,)`` or ``(..., M, K)``.

    Raises
    ------
    TypeError
        An operand is not a clnp array, or its dtype is integer, boolean or float16.
    ValueError
        ``x1`` is not square, the shapes do not match or their batch dimensions do not
        broadcast, or the operands are on different devices.
    LinAlgError
        Eagerly, when a matrix of ``x1`` is singular (under transformations and ``jit`` the
        solution gets inf/NaN entries instead).

    Examples
    --------
    >>> import clnp
    >>> a = clnp.asarray([[2.0, 1.0], [1.0, 1.0]], dtype=clnp.float32)
    >>> b = clnp.asarray([3.0, 2.0], dtype=clnp.float32)
    >>> print(clnp.linalg.solve(a, b))
    [1. 1.]
    """
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
    from ._core.eager import broadcast_shapes
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

    Parameters
    ----------
    x : array
        Matrix or stack of matrices, shape ``(..., M, N)``, of a floating-point or complex
        dtype (not float16).
    mode : {'reduced', 'complete', 'r'}, default 'reduced'
        ``'reduced'``: ``Q`` ``(..., M, K)``, ``R`` ``(..., K, N)`` with ``K = min(M, N)``;
        ``'complete'``: ``Q`` ``(..., M, M)``, ``R`` ``(..., M, N)``; NumPy's ``'r'``: ``R``
        alone.

    Returns
    -------
    QRResult or array
        ``(Q, R)`` of ``x``'s dtype (``Q`` with orthonormal columns, ``R`` upper triangular),
        or ``R`` alone with ``mode='r'``.

    Raises
    ------
    TypeError
        ``x`` is not a clnp array, or its dtype is integer, boolean or float16.
    ValueError
        ``x`` has fewer than two dimensions, or ``mode`` is not one of the above.

    Examples
    --------
    >>> import clnp
    >>> import numpy
    >>> x = clnp.asarray([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=clnp.float32)
    >>> q, r = clnp.linalg.qr(x)
    >>> q.shape, r.shape
    ((3, 2), (2, 2))
    >>> bool(numpy.allclose(numpy.asarray(q @ r), numpy.asarray(x), atol=1e-5))
    True
    >>> clnp.linalg.qr(x, mode="complete").Q.shape
    (3, 3)
    """
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
    the columns of an orthogonal (unitary) matrix of ``x``'s dtype.

    Parameters
    ----------
    x : array
        Symmetric (Hermitian) matrix or stack of them, shape ``(..., M, M)``, of a
        floating-point or complex dtype (not float16).
    UPLO : {'L', 'U'}, default 'L'
        The triangle of ``x`` that is read.

    Returns
    -------
    EighResult
        ``(eigenvalues, eigenvectors)``: shapes ``(..., M)`` and ``(..., M, M)``.

    Raises
    ------
    TypeError
        ``x`` is not a clnp array, or its dtype is integer, boolean or float16.
    ValueError
        ``x`` is not a (stack of) square matrices, or ``UPLO`` is neither 'L' nor 'U'.
    LinAlgError
        Eagerly, when the iteration does not converge.

    Examples
    --------
    >>> import clnp
    >>> import numpy
    >>> x = clnp.asarray([[2.0, 1.0], [1.0, 2.0]], dtype=clnp.float32)
    >>> w, v = clnp.linalg.eigh(x)
    >>> print(numpy.round(numpy.asarray(w), 4))
    [1. 3.]
    >>> bool(numpy.allclose(numpy.asarray(x @ v), numpy.asarray(v * w), atol=1e-5))
    True
    """
    x = _triangle(_square(x, "eigh"), UPLO, "eigh")
    w, v = _eigh(x, True, "eigh")
    return EighResult(w, v)


def eigvalsh(x: Any, /, UPLO: str = "L") -> Any:
    """Returns the eigenvalues (ascending, real dtype) of a complex Hermitian or real
    symmetric matrix (or a stack of them); only the lower triangle of ``x`` is read (the
    upper one with NumPy's ``UPLO="U"``).

    Parameters
    ----------
    x : array
        Symmetric (Hermitian) matrix or stack of them, shape ``(..., M, M)``, of a
        floating-point or complex dtype (not float16).
    UPLO : {'L', 'U'}, default 'L'
        The triangle of ``x`` that is read.

    Returns
    -------
    array
        The eigenvalues in ascending order, shape ``(..., M)``, of the real dtype of ``x``'s
        precision.

    Raises
    ------
    TypeError
        ``x`` is not a clnp array, or its dtype is integer, boolean or float16.
    ValueError
        ``x`` is not a (stack of) square matrices, or ``UPLO`` is neither 'L' nor 'U'.
    LinAlgError
        Eagerly, when the iteration does not converge.

    Examples
    --------
    >>> import clnp
    >>> import numpy
    >>> x = clnp.asarray([[2.0, 1.0], [1.0, 2.0]], dtype=clnp.float32)
    >>> print(numpy.round(numpy.asarray(clnp.linalg.eigvalsh(x)), 4))
    [1. 3.]
    """
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


def _eig_of_real(x: Any, compute_v: bool, fname: str) -> tuple[Any, Any]:
    """``eig`` of ``x``, with the structure of a real matrix's eigenvalues restored where
    the complex solver blurred it: real ones exactly real, complex ones in exact conjugate
    pairs (as LAPACK's real driver gives them, and code tuned to it compares them exactly).
    Devices sharing host memory run LAPACK itself (clnp._routines.host_lapack); elsewhere
    an eager call pairs the kernels' results on the host; traced calls keep them as they
    are, as JAX's do."""
    xc = _complex_of(x)
    w, v = _eig(xc, compute_v, fname)
    if x.dtype.kind == "c" or not eager() or not isinstance(xc, Array) or \
            host_lapack.applies(xc) or w.size == 0:
        return w, v
    scale = np.abs(x.to_numpy()).max(axis=(-2, -1), initial=0.0)
    wh, vh = _conjugate_pairs(w.to_numpy(), None if v is None else v.to_numpy(), scale)
    return (Array.from_numpy(wh, w.device),
            None if v is None else Array.from_numpy(vh, v.device))


def _conjugate_pairs(w: np.ndarray, v: np.ndarray | None, scale: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray | None]:
    """Eigenvalues ``w`` (``(..., n)``, complex) of real matrices whose entries are at most
    ``scale`` (``(...)``) in magnitude, and eigenvectors ``v`` (columns), made exactly
    structured: an eigenvalue within rounding of the real axis becomes real (its vector
    too), and each eigenvalue above the axis is paired with the nearest one below its
    conjugate, which becomes its exact conjugate (its vector the conjugate vector).

    Examples
    --------
    >>> import numpy
    >>> from clnp.linalg import _conjugate_pairs
    >>> w = numpy.array([0.9999999999999998j, -1.0000000000000002j, 2 + 1e-17j])
    >>> _conjugate_pairs(w, None, numpy.array(1.0))[0].tolist()
    [0.9999999999999998j, -0.9999999999999998j, (2+0j)]
    """
    w = np.array(w, copy=True)
    v = None if v is None else np.array(v, copy=True)
    n = w.shape[-1]
    eps = np.finfo(w.real.dtype).eps
    for idx in np.ndindex(*w.shape[:-1]):
        vals = w[idx]
        tol = 64 * n * eps * max(float(np.asarray(scale)[idx] if np.ndim(scale) else scale),
                                 np.finfo(w.real.dtype).tiny)
        real = np.abs(vals.imag) <= tol
        vals[real] = vals[real].real
        if v is not None:
            v[idx][..., real] = v[idx][..., real].real
        below = [int(j) for j in np.flatnonzero(~real & (vals.imag < 0))]
        for i in np.flatnonzero(~real & (vals.imag > 0)):
            if not below:
                break
            j = min(below, key=lambda k: abs(vals[k] - np.conj(vals[i])))
            below.remove(j)
            vals[j] = np.conj(vals[i])
            if v is not None:
                v[idx][..., j] = np.conj(v[idx][..., i])
    return w, v


def eig(x: Any, /) -> EigResult:
    """Returns eigenvalues and eigenvectors of a real or complex square matrix (or a stack of
    them) as a namedtuple ``(eigenvalues, eigenvectors)``, both complex of ``x``'s precision.

    Eigenvectors are the columns of ``eigenvectors``, each of unit Euclidean norm with its
    largest component real; the order of the eigenvalues is unspecified.

    Parameters
    ----------
    x : array
        Square matrix or stack of them, shape ``(..., M, M)``, of a floating-point or complex
        dtype (not float16).

    Returns
    -------
    EigResult
        ``(eigenvalues, eigenvectors)``: shapes ``(..., M)`` and ``(..., M, M)``, complex64
        for single-precision and complex128 for double-precision input.

    Raises
    ------
    TypeError
        ``x`` is not a clnp array, or its dtype is integer, boolean or float16.
    ValueError
        ``x`` is not a (stack of) square matrices.
    LinAlgError
        Eagerly, when ``x`` contains NaN or inf.

    Examples
    --------
    >>> import clnp
    >>> import numpy
    >>> x = clnp.asarray([[2.0, 1.0], [0.0, 3.0]], dtype=clnp.float32)
    >>> w, v = clnp.linalg.eig(x)
    >>> print(numpy.round(numpy.sort(numpy.asarray(w).real), 4))
    [2. 3.]
    >>> bool(numpy.allclose(numpy.asarray(x.astype(clnp.complex64) @ v),
    ...                     numpy.asarray(v * w), atol=1e-5))
    True
    """
    w, v = _eig_of_real(_square(x, "eig"), True, "eig")
    return EigResult(w, v)


def eigvals(x: Any, /) -> Any:
    """Returns the eigenvalues (complex, of ``x``'s precision) of a real or complex square
    matrix (or a stack of them), in no particular order.

    Parameters
    ----------
    x : array
        Square matrix or stack of them, shape ``(..., M, M)``, of a floating-point or complex
        dtype (not float16).

    Returns
    -------
    array
        The eigenvalues, shape ``(..., M)``, complex of ``x``'s precision.

    Raises
    ------
    TypeError
        ``x`` is not a clnp array, or its dtype is integer, boolean or float16.
    ValueError
        ``x`` is not a (stack of) square matrices.
    LinAlgError
        Eagerly, when ``x`` contains NaN or inf.

    Examples
    --------
    >>> import clnp
    >>> import numpy
    >>> x = clnp.asarray([[0.0, -1.0], [1.0, 0.0]], dtype=clnp.float32)
    >>> w = numpy.asarray(clnp.linalg.eigvals(x))
    >>> print(numpy.round(numpy.sort(w.imag), 4))
    [-1.  1.]
    """
    return _eig_of_real(_square(x, "eigvals"), False, "eigvals")[0]


def svd(x: Any, /, full_matrices: bool = True, compute_uv: bool = True,
        hermitian: bool = False) -> SVDResult | Any:
    """Returns a singular value decomposition ``x = U diag(S) Vh`` of a matrix (or a stack
    of matrices) as a namedtuple ``(U, S, Vh)``.

    Parameters
    ----------
    x : array
        Matrix or stack of matrices, shape ``(..., M, N)``, of a floating-point or complex
        dtype (not float16).
    full_matrices : bool, default True
        With it ``U`` is ``(..., M, M)`` and ``Vh`` ``(..., N, N)``, otherwise ``(..., M, K)``
        and ``(..., K, N)`` with ``K = min(M, N)``.
    compute_uv : bool, default True
        NumPy's ``compute_uv=False`` returns ``S`` alone.
    hermitian : bool, default False
        Accepted for NumPy and ignored (the general algorithm is used).

    Returns
    -------
    SVDResult or array
        ``(U, S, Vh)``: ``S`` (shape ``(..., K)``, real dtype of ``x``'s precision) sorted in
        descending order, ``U`` and ``Vh`` of ``x``'s dtype; ``S`` alone without
        ``compute_uv``.

    Raises
    ------
    TypeError
        ``x`` is not a clnp array, or its dtype is integer, boolean or float16.
    ValueError
        ``x`` has fewer than two dimensions.
    LinAlgError
        Eagerly, when the SVD gives NaN (NaN or inf input).

    Examples
    --------
    >>> import clnp
    >>> import numpy
    >>> x = clnp.asarray([[3.0, 0.0], [0.0, 4.0], [0.0, 0.0]], dtype=clnp.float32)
    >>> u, s, vh = clnp.linalg.svd(x)
    >>> u.shape, s.shape, vh.shape
    ((3, 3), (2,), (2, 2))
    >>> print(numpy.round(numpy.asarray(s), 4))
    [4. 3.]
    >>> u, s, vh = clnp.linalg.svd(x, full_matrices=False)
    >>> bool(numpy.allclose(numpy.asarray((u * s) @ vh), numpy.asarray(x), atol=1e-5))
    True
    """
    x = _matrix(_float_array(x, "svd"), "svd")
    if not compute_uv:
        return _svd(x, "svd", full_matrices=False, compute_uv=False)[1]
    u, s, vh = _svd(x, "svd", full_matrices=bool(full_matrices), compute_uv=True)
    return SVDResult(u, s, vh)


def svdvals(x: Any, /) -> Any:
    """Returns the singular values of a matrix (or a stack of matrices), sorted in
    descending order, with the real dtype of ``x``'s precision.

    Parameters
    ----------
    x : array
        Matrix or stack of matrices, shape ``(..., M, N)``, of a floating-point or complex
        dtype (not float16).

    Returns
    -------
    array
        The singular values, shape ``(..., min(M, N))``.

    Raises
    ------
    TypeError
        ``x`` is not a clnp array, or its dtype is integer, boolean or float16.
    ValueError
        ``x`` has fewer than two dimensions.
    LinAlgError
        Eagerly, when the SVD gives NaN (NaN or inf input).

    Examples
    --------
    >>> import clnp
    >>> import numpy
    >>> x = clnp.asarray([[3.0, 0.0], [0.0, -4.0]], dtype=clnp.float32)
    >>> print(numpy.round(numpy.asarray(clnp.linalg.svdvals(x)), 4))
    [4. 3.]
    """
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

    Parameters
    ----------
    x : array
        Matrix or stack of matrices, shape ``(..., M, N)``, of a floating-point or complex
        dtype (not float16).
    tol : float or array, optional
        NumPy's absolute threshold on the singular values (not together with ``rtol``).
    hermitian : bool, default False
        Accepted for NumPy and ignored.
    rtol : float or array, optional
        Relative threshold, ``max(M, N) * eps`` by default; an array broadcasts against
        ``x.shape[:-2]``.

    Returns
    -------
    array
        The ranks, int64, shape ``x.shape[:-2]``.

    Raises
    ------
    TypeError
        ``x`` is not a clnp array or has an unsupported dtype, or ``rtol`` is neither a real
        number nor a real floating-point array.
    ValueError
        ``x`` has fewer than two dimensions, or both ``tol`` and ``rtol`` are given.
    LinAlgError
        Eagerly, when the SVD gives NaN.

    Examples
    --------
    >>> import clnp
    >>> x = clnp.asarray([[1.0, 2.0], [2.0, 4.0]], dtype=clnp.float32)
    >>> print(clnp.linalg.matrix_rank(x))
    1
    >>> print(clnp.linalg.matrix_rank(clnp.eye(3, dtype=clnp.float32)))
    3
    """
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
    of matrices), shape ``(..., N, M)``.

    Parameters
    ----------
    x : array
        Matrix or stack of matrices, shape ``(..., M, N)``, of a floating-point or complex
        dtype (not float16).
    rcond : float or array, optional
        NumPy's name for ``rtol`` (not together with it).
    hermitian : bool, default False
        Accepted for NumPy and ignored.
    rtol : float or array, optional
        Singular values at or below ``rtol * largest`` count as zero; ``max(M, N) * eps`` by
        default.

    Returns
    -------
    array
        The pseudo-inverses, shape ``(..., N, M)``, of ``x``'s dtype.

    Raises
    ------
    TypeError
        ``x`` is not a clnp array or has an unsupported dtype, or ``rtol`` has the wrong type.
    ValueError
        ``x`` has fewer than two dimensions, or both ``rcond`` and ``rtol`` are given.
    LinAlgError
        Eagerly, when the SVD gives NaN.

    Examples
    --------
    >>> import clnp
    >>> import numpy
    >>> x = clnp.asarray([[1.0], [1.0]], dtype=clnp.float32)
    >>> print(numpy.round(numpy.asarray(clnp.linalg.pinv(x)), 4))
    [[0.5 0.5]]
    """
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
    negative ``n`` powers of the inverse.

    Parameters
    ----------
    x : array
        Square matrix or stack of them, shape ``(..., M, M)``; integer matrices are accepted
        for ``n >= 0``, a negative ``n`` needs a floating-point or complex dtype.
    n : int
        The exponent.

    Returns
    -------
    array
        ``x`` to the power ``n``, of ``x``'s shape and dtype (always a new array).

    Raises
    ------
    TypeError
        ``x`` is not a clnp array, ``n`` is not an integer, or ``n < 0`` with a dtype that
        ``inv`` does not take.
    ValueError
        ``x`` is not a (stack of) square matrices.
    LinAlgError
        Eagerly, for ``n < 0`` and a singular matrix.

    Examples
    --------
    >>> import clnp
    >>> x = clnp.asarray([[1, 1], [0, 1]])
    >>> print(clnp.linalg.matrix_power(x, 3))
    [[1 3]
     [0 1]]
    >>> print(clnp.linalg.matrix_power(clnp.asarray([[2.0, 0.0], [0.0, 4.0]]), -1))
    [[0.5  0.  ]
     [0.   0.25]]
    """
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

    Parameters
    ----------
    x : array
        Matrix or stack of matrices, shape ``(..., M, N)``, of a floating-point or complex
        dtype (not float16).
    keepdims : bool, default False
        Keep the last two axes as size 1.
    ord : {'fro', 'nuc', 1, -1, 2, -2, inf, -inf}, default 'fro'
        ``'fro'`` (Frobenius), ``'nuc'`` (sum of singular values), ``1``/``-1`` (max/min
        column sum of ``|x|``), ``2``/``-2`` (largest/smallest singular value),
        ``inf``/``-inf`` (max/min row sum of ``|x|``); None means ``'fro'``.

    Returns
    -------
    array
        The norms, shape ``x.shape[:-2]`` (``(..., 1, 1)`` with ``keepdims``), of the real
        dtype of ``x``'s precision.

    Raises
    ------
    TypeError
        ``x`` is not a clnp array, or its dtype is integer, boolean or float16.
    ValueError
        ``x`` has fewer than two dimensions, ``ord`` is not one of the above, or ``ord`` is
        2 or -2 for an empty matrix.

    Examples
    --------
    >>> import clnp
    >>> x = clnp.asarray([[2.0, -1.0], [-2.0, 4.0]], dtype=clnp.float32)
    >>> print(clnp.linalg.matrix_norm(x))
    5.0
    >>> print(clnp.linalg.matrix_norm(x, ord=1), clnp.linalg.matrix_norm(x, ord=clnp.inf))
    5.0 6.0
    """
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
    """Computes the vector norm of a vector (or batch of vectors) ``x``.

    Parameters
    ----------
    x : array
        Input array of a floating-point or complex dtype (not float16).
    axis : int or tuple of ints, optional
        Axes the norm is taken over (all axes when None; negative axes count from the end).
    keepdims : bool, default False
        Keep the reduced axes as size 1.
    ord : int or float, default 2
        ``2`` (Euclidean), ``1``, ``inf`` (max ``|x|``), ``-inf`` (min ``|x|``), ``0``
        (number of nonzeros), any other ``p``: ``sum(|x|**p)**(1/p)``.

    Returns
    -------
    array
        The norms, of the real dtype of ``x``'s precision.

    Raises
    ------
    TypeError
        ``x`` is not a clnp array, or its dtype is integer, boolean or float16.
    ValueError
        ``ord`` is not a real number, or an axis is repeated.
    IndexError
        An axis is out of range for ``x``.

    Examples
    --------
    >>> import clnp
    >>> x = clnp.asarray([3.0, -4.0], dtype=clnp.float32)
    >>> print(clnp.linalg.vector_norm(x))
    5.0
    >>> print(clnp.linalg.vector_norm(x, ord=1), clnp.linalg.vector_norm(x, ord=clnp.inf))
    7.0 4.0
    >>> m = clnp.asarray([[3.0, 0.0], [4.0, 1.0]], dtype=clnp.float32)
    >>> print(clnp.linalg.vector_norm(m, axis=0, ord=1))
    [7. 1.]
    """
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
    last two axes are replaced by one holding the diagonal.

    Parameters
    ----------
    x : array
        Matrix or stack of matrices, shape ``(..., M, N)``.
    offset : int, default 0
        ``offset > 0`` above the main diagonal, ``< 0`` below.

    Returns
    -------
    array
        The diagonals, shape ``x.shape[:-2] + (K,)``, of ``x``'s dtype (``K = 0`` for an
        offset outside the matrix).

    Raises
    ------
    TypeError
        ``x`` is not a clnp array, or ``offset`` is not an integer.
    ValueError
        ``x`` has fewer than two dimensions.

    Examples
    --------
    >>> import clnp
    >>> x = clnp.reshape(clnp.arange(9), (3, 3))
    >>> print(clnp.linalg.diagonal(x))
    [0 4 8]
    >>> print(clnp.linalg.diagonal(x, offset=1))
    [1 5]
    """
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
    matrices) ``x``.

    Parameters
    ----------
    x : array
        Matrix or stack of matrices, shape ``(..., M, N)``, of a numeric dtype.
    offset : int, default 0
        ``offset > 0`` above the main diagonal, ``< 0`` below.
    dtype : dtype, optional
        As for ``sum``: integers accumulate in the default integer dtype, floating-point
        input keeps its dtype.

    Returns
    -------
    array
        The traces, shape ``x.shape[:-2]``.

    Raises
    ------
    TypeError
        ``x`` is not a clnp array or not numeric, or ``offset`` is not an integer.
    ValueError
        ``x`` has fewer than two dimensions.

    Examples
    --------
    >>> import clnp
    >>> x = clnp.reshape(clnp.arange(9), (3, 3))
    >>> print(clnp.linalg.trace(x), clnp.linalg.trace(x, offset=-1))
    12 10
    """
    if not is_array(x):
        raise TypeError(f"linalg.trace: x must be a clnp array; got {type(x).__name__}")
    if x.dtype not in dt.NUMERIC:
        raise TypeError(f"linalg.trace requires a numeric array; got dtype {x.dtype}")
    return _xp().sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """Returns the cross product of 3-element vectors along ``axis`` of ``x1`` and ``x2``;
    the other axes broadcast.

    Parameters
    ----------
    x1, x2 : array
        Numeric arrays with size 3 along ``axis``, on one device.
    axis : int, default -1
        The axis holding the vectors, negative (counted from the last axis).

    Returns
    -------
    array
        The cross products, of the broadcast shape and the promoted dtype.

    Raises
    ------
    TypeError
        An operand is not a clnp array or not numeric, or ``axis`` is not an integer.
    ValueError
        ``axis`` is out of range, a size along it is not 3, the other axes do not broadcast,
        or the operands are on different devices.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.linalg.cross(clnp.asarray([1, 0, 0]), clnp.asarray([0, 1, 0])))
    [0 0 1]
    """
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
        raise np.exceptions.AxisError(f"linalg.cross: axis {ax} is out of range [-{nd}, -1] "
                                      f"for shapes {x1.shape} and {x2.shape}")
    if x1.shape[ax] != 3 or x2.shape[ax] != 3:
        raise ValueError(f"linalg.cross: shapes {x1.shape} and {x2.shape} must have size 3 "
                         f"along axis {ax}")
    from ._core.eager import broadcast_shapes
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
    """Returns the outer product of two vectors ``x1`` (size ``N``) and ``x2`` (size ``M``).

    Parameters
    ----------
    x1, x2 : array
        One-dimensional numeric arrays on one device.

    Returns
    -------
    array
        ``out[i, j] = x1[i] * x2[j]``, shape ``(N, M)``, of the promoted dtype.

    Raises
    ------
    TypeError
        An operand is not a clnp array or not numeric.
    ValueError
        An operand is not one-dimensional, or the operands are on different devices.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.linalg.outer(clnp.asarray([1, 2]), clnp.asarray([1, 2, 3])))
    [[1 2 3]
     [2 4 6]]
    """
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
    ``axis`` are None, a vector norm over one axis, a matrix norm over two.

    Parameters
    ----------
    x : array_like
        Input; integer and boolean input is converted to the device's default float dtype,
        float16 and bfloat16 to float32.
    ord : int, float or str, optional
        The norm's order, as for ``vector_norm`` (one axis) or ``matrix_norm`` (two axes).
    axis : int or pair of ints, optional
        One axis for vector norms, two for matrix norms; all axes when None.
    keepdims : bool, default False
        Keep the reduced axes as size 1.

    Returns
    -------
    array
        The norms, of the real dtype of ``x``'s precision.

    Raises
    ------
    ValueError
        More than two axes (given as ``axis``, or all of ``x``'s with an ``ord`` and no
        ``axis``), a repeated axis, or an invalid ``ord``.
    IndexError
        An axis is out of range for ``x``.

    Examples
    --------
    >>> import clnp
    >>> x = clnp.asarray([[3.0, 0.0], [0.0, 4.0]], dtype=clnp.float32)
    >>> print(clnp.linalg.norm(x))
    5.0
    >>> print(clnp.linalg.norm(x, axis=0))
    [3. 4.]
    >>> print(clnp.linalg.norm(x, ord=1))
    4.0
    """
    xp = _xp()
    if not is_array(x):
        x = xp.asarray(x)
    if x.dtype not in _DECOMP:
        x = xp.astype(x, dt.float32 if x.dtype in dt.HALF else x.device.default_float)
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
    a row vector and a trailing one a column vector (evaluated left to right).

    Parameters
    ----------
    arrays : sequence of arrays
        At least two operands; the first and last may be one-dimensional, the others are
        matrices.
    out : Array, optional
        Receives the product: it must have the product's shape and dtype exactly (as NumPy
        requires), and is returned.

    Returns
    -------
    array
        The product, of the promoted dtype.

    Raises
    ------
    LinAlgError
        An operand of the wrong number of dimensions (NumPy's class and message).
    TypeError
        An operand is not of a numeric dtype, or ``out`` is not a clnp array.
    ValueError
        Fewer than two operands, shapes that do not chain, or an ``out`` of the wrong shape
        or dtype.

    Examples
    --------
    >>> import clnp
    >>> a = clnp.asarray([[1, 2], [3, 4]])
    >>> b = clnp.asarray([[0, 1], [1, 0]])
    >>> print(clnp.linalg.multi_dot([a, b, clnp.asarray([1, 1])]))
    [3 7]
    """
    from ._array_api.creation import asarray
    from ._array_api.data_types import result_type
    if not isinstance(arrays, (list, tuple)):
        raise TypeError(f"linalg.multi_dot: arrays must be a sequence of arrays; got "
                        f"{type(arrays).__name__}")
    arrays = [a if is_array(a) else asarray(a) for a in arrays]
    if len(arrays) < 2:
        raise ValueError("linalg.multi_dot: expecting at least two arrays")
    for i, a in enumerate(arrays):
        # NumPy's rule and words: only the ends may be vectors
        ok = a.ndim in (1, 2) if i in (0, len(arrays) - 1) else a.ndim == 2
        if not ok:
            shapes = ", ".join(str(b.shape) for b in arrays)
            raise LinAlgError(f"linalg.multi_dot: {a.ndim}-dimensional array given (operand "
                              f"{i} of shapes {shapes}). Array must be two-dimensional")
    if out is not None:
        if not is_array(out):
            raise TypeError(f"linalg.multi_dot: out must be a clnp array; got "
                            f"{type(out).__name__}")
        shape = arrays[0].shape[:-1] + arrays[-1].shape[1:]
        dtype = result_type(*arrays)
        if out.shape != shape or out.dtype != dtype:
            raise ValueError(f"linalg.multi_dot: out must have the product's shape {shape} "
                             f"and dtype {dtype}; got {out.shape} {out.dtype}")
    r = arrays[0]
    for a in arrays[1:]:
        r = matmul(r, a)
    if out is None:
        return r
    out[...] = r
    return out


@reports_as("cond")
def cond(x: Any, p: Any = None) -> Any:
    """NumPy's ``linalg.cond``: the condition number of ``x`` in the norm ``p``.

    Parameters
    ----------
    x : array
        Matrix or stack of matrices, shape ``(..., M, N)`` (square unless ``p`` is None, 2
        or -2), of a floating-point or complex dtype (not float16).
    p : {None, 1, -1, 2, -2, inf, -inf, 'fro', 'nuc'}, optional
        The norm: None (the 2-norm, ``s_max / s_min``) or an ``ord`` of ``matrix_norm``.

    Returns
    -------
    array
        The condition numbers, shape ``x.shape[:-2]``, of the real dtype of ``x``'s
        precision; inf for a singular matrix and a ``p`` other than 2 or -2, as NumPy.

    Raises
    ------
    TypeError
        ``x`` is not a clnp array, or its dtype is integer, boolean or float16.
    ValueError
        ``x`` has fewer than two dimensions, is not square where ``p`` needs it, or ``p`` is
        invalid.
    LinAlgError
        Eagerly, when the SVD gives NaN.

    Examples
    --------
    >>> import clnp
    >>> x = clnp.asarray([[2.0, 0.0], [0.0, 0.5]], dtype=clnp.float32)
    >>> print(round(float(clnp.linalg.cond(x)), 4))
    4.0
    >>> print(clnp.linalg.cond(x, 1))
    4.0
    """
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
    pseudo-inverse.

    Parameters
    ----------
    a : array
        Coefficient matrix, shape ``(M, N)``, of a floating-point or complex dtype (not
        float16).
    b : array
        Right-hand sides, shape ``(M,)`` or ``(M, K)``.
    rcond : float, optional
        Relative cut-off for small singular values (``max(M, N) * eps`` when None; a negative
        value means machine precision, as NumPy's old default).

    Returns
    -------
    x : array
        The solution, shape ``(N,)`` or ``(N, K)``, of the promoted dtype.
    residuals : array
        Squared residual norms, shape ``(1,)`` or ``(K,)``, when ``a`` has full column rank
        and more rows than columns; else empty.
    rank : int
        The rank of ``a``.
    s : array
        The singular values of ``a``, descending.

    Raises
    ------
    TypeError
        An operand is not a clnp array, or its dtype is integer, boolean or float16.
    ValueError
        ``a`` is not two-dimensional, or ``b``'s shape does not match.
    LinAlgError
        Eagerly, when the SVD does not converge.

    Examples
    --------
    >>> import clnp
    >>> import numpy
    >>> a = clnp.asarray([[0.0, 1.0], [1.0, 1.0], [2.0, 1.0]], dtype=clnp.float32)
    >>> b = clnp.asarray([1.0, 3.0, 5.0], dtype=clnp.float32)
    >>> x, residuals, rank, s = clnp.linalg.lstsq(a, b)
    >>> print(numpy.round(numpy.asarray(x), 4), rank)
    [2. 1.] 2
    """
    xp = _xp()
    a = _matrix(_float_array(a, "lstsq", "a"), "lstsq", arg="a")
    b = _float_array(b, "lstsq", "b")
    if a.ndim != 2:
        raise ValueError(f"linalg.lstsq: a must be two-dimensional; got shape {a.shape}")
    if b.ndim not in (1, 2) or b.shape[0] != a.shape[0]:
        # NumPy's class (a ValueError)
        raise LinAlgError(f"linalg.lstsq: incompatible shapes {a.shape} and {b.shape}")
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
    clnp = _namespace()
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
    clnp = _namespace()
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
    if math.prod(x.shape) != prod * prod or math.prod(y.shape) != prod:
        raise LinAlgError(f"tensorsolve: the problem is not square: a has shape {x.shape} "
                          f"and b has shape {y.shape}")
    res = solve(clnp.reshape(x, (prod, prod)), clnp.reshape(y, (prod, 1)))
    return clnp.reshape(res, oldshape)
