"""NumPy's ``cov`` and ``corrcoef``.
"""
from __future__ import annotations

import math
from typing import Any

from .._core import dtypes as dt
from .._core.dtypes import kind as dkind
from .._core.namespace import namespace as _xp
from .array_likes import _arr, _default_float, _device_of
from .diagonals import diagonal
from .interpolation import _matmul
from .reductions import average

__all__ = ["cov", "corrcoef"]


def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: Any = None,
        fweights: Any = None, aweights: Any = None, *, dtype: Any = None) -> Any:
    """Covariance matrix (``numpy.cov``).

    Parameters
    ----------
    m : array_like
        Variables as rows (columns with ``rowvar=False``), observations along the other
        axis.
    y : array_like, optional
        More variables.
    rowvar : bool, default True
        Rows are variables.
    bias : bool, default False
        Normalise by ``N`` instead of ``N - 1``.
    ddof : int, optional
        Normalise by ``N - ddof``.
    fweights : array_like, optional
        Integer frequency weights of the observations.
    aweights : array_like, optional
        Observation weights.
    dtype : dtype, optional
        The result dtype.

    Returns
    -------
    array
        The covariance matrix (0-d for a single variable).

    Raises
    ------
    ValueError
        Negative frequency weights.
    RuntimeError
        Weights whose length differs from the number of observations (as NumPy).

    Examples
    --------
    >>> import clnp
    >>> print(clnp.cov(clnp.asarray([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])))
    [[ 1. -1.]
     [-1.  1.]]
    """
    xp = _xp()
    dev = _device_of(m, y)
    X = _arr(m, dev)
    if X.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if dtype is None:
        dtype = dt.promote(X.dtype, _default_float(X.device))
        if y is not None:
            dtype = dt.promote(dtype, _arr(y, X.device).dtype)
    dtype = dt.as_dtype(dtype)
    X = xp.astype(X, dtype)
    one_d = X.ndim < 2
    if one_d:
        X = xp.reshape(X, (1, -1))
    if not rowvar and not one_d:        # NumPy: a (1, n) matrix is n variables, once each
        X = xp.permute_dims(X, (1, 0))
    if X.shape[0] == 0:
        return xp.reshape(xp.zeros((0,), dtype=dtype, device=X.device), (0, 0))
    if y is not None:
        Y = _arr(y, X.device)
        if Y.ndim > 2:
            raise ValueError("y has more than 2 dimensions")
        Y = xp.astype(Y, dtype)
        if Y.ndim < 2:
            Y = xp.reshape(Y, (1, -1))
        if not rowvar and Y.shape[0] != 1:
            Y = xp.permute_dims(Y, (1, 0))
        X = xp.concat([X, Y], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    n = X.shape[1]
    w = None
    if fweights is not None:
        fw = _arr(fweights, X.device)
        if dkind(fw.dtype) not in "iub":
            raise TypeError("fweights must be integer")
        if fw.ndim > 1:
            raise RuntimeError("cannot handle multidimensional fweights")
        if fw.shape[0] != n:
            raise RuntimeError("incompatible numbers of samples and fweights")
        if bool(xp.any(xp.less(fw, 0))):
            raise ValueError("fweights cannot be negative")
        w = xp.astype(fw, dt.float64 if X.device.has_fp64 else dt.float32)
    aw = None
    if aweights is not None:
        aw = _arr(aweights, X.device)
        if aw.ndim > 1:
            raise RuntimeError("cannot handle multidimensional aweights")
        if aw.shape[0] != n:
            raise RuntimeError("incompatible numbers of samples and aweights")
        if bool(xp.any(xp.less(aw, 0))):
            raise ValueError("aweights cannot be negative")
        aw = xp.astype(aw, dt.float64 if X.device.has_fp64 else dt.float32)
        w = aw if w is None else w * aw
    avg, w_sum = average(X, axis=1, weights=w, returned=True)
    if w is None:
        fact: Any = n - ddof
    else:
        w_sum0 = float(w_sum[0])
        if ddof == 0:
            fact = w_sum0
        elif aw is None:
            fact = w_sum0 - ddof
        else:
            fact = w_sum0 - ddof * float(xp.sum(w * aw)) / w_sum0
    if fact <= 0:
        fact = 0.0
    X = X - xp.expand_dims(avg, axis=1)
    XT = xp.permute_dims(X if w is None else X * w, (1, 0))
    c = _matmul(X, xp.conj(XT) if dkind(XT.dtype) == "c" else XT)
    c = c * (1.0 / fact if fact else math.inf)
    return xp.squeeze(c) if 1 in c.shape else c


def corrcoef(x: Any, y: Any = None, rowvar: bool = True, *, dtype: Any = None) -> Any:
    """Pearson correlation coefficients (``numpy.corrcoef``).

    Parameters
    ----------
    x : array_like
        Variables as rows (columns with ``rowvar=False``).
    y : array_like, optional
        More variables.
    rowvar : bool, default True
        Rows are variables.
    dtype : dtype, optional
        The result dtype.

    Returns
    -------
    array
        :func:`cov` normalised by the standard deviations, the real part clipped to [-1,
        1].

    Examples
    --------
    >>> import clnp
    >>> print(clnp.corrcoef(clnp.asarray([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])))
    [[ 1. -1.]
     [-1.  1.]]
    """
    xp = _xp()
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c
    d = diagonal(c)
    std = xp.sqrt(xp.real(d)) if dkind(d.dtype) == "c" else xp.sqrt(d)
    c = c / xp.reshape(std, (-1, 1))
    c = c / xp.reshape(std, (1, -1))
    if dkind(c.dtype) == "c":
        return xp.add(xp.clip(xp.real(c), -1, 1), xp.multiply(xp.imag(c), 1j))
    return xp.clip(c, -1, 1)
