"""NumPy's diagonal functions: ``diagonal``, ``diag`` and ``trace``.
"""
from __future__ import annotations

import builtins
import operator
from typing import Any

import numpy as np

from .._core.checks import normalize_axis
from .._core.namespace import namespace as _xp
from .array_likes import _arr, _finish

__all__ = ["diag", "diagonal", "trace"]


def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """The ``offset``-th diagonal of the 2-D sub-arrays on ``axis1`` and ``axis2``.

    Parameters
    ----------
    a : array_like
        Input array.
    offset : int, default 0
        The diagonal (above the main one when positive).
    axis1 : int, default 0
        First axis of the 2-D sub-arrays.
    axis2 : int, default 1
        Second axis.

    Returns
    -------
    array
        A new array (NumPy returns a read-only view): ``axis1`` and ``axis2`` are
        removed and the diagonal is the last axis.

    Raises
    ------
    ValueError
        ``axis1`` equals ``axis2``, or ``a`` has fewer than two dimensions.
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.diagonal(clnp.asarray([[1, 2], [3, 4]])))
    [1 4]
    """
    xp = _xp()
    x = _arr(a)
    if x.ndim < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    i = normalize_axis(axis1, x.ndim, "diagonal")
    j = normalize_axis(axis2, x.ndim, "diagonal")
    if i == j:
        raise ValueError("axis1 and axis2 cannot be the same")
    offset = operator.index(offset)
    rest = [d for d in range(x.ndim) if d not in (i, j)]
    moved = xp.permute_dims(x, tuple(rest) + (i, j))
    n1, n2 = x.shape[i], x.shape[j]
    length = builtins.max(0, builtins.min(n1, n2 - offset) if offset >= 0
                          else builtins.min(n1 + offset, n2))
    r = np.arange(length) + builtins.max(-offset, 0)
    c = np.arange(length) + builtins.max(offset, 0)
    if length == 0:
        return xp.zeros(tuple(x.shape[d] for d in rest) + (0,), dtype=x.dtype,
                        device=x.device)
    return moved[..., r, c]


def diag(v: Any, k: int = 0) -> Any:
    """Extract a diagonal, or build a diagonal array (``numpy.diag``).

    Parameters
    ----------
    v : array_like
        1-D: the diagonal to place; 2-D: the array to read from.
    k : int, default 0
        The diagonal (above the main one when positive).

    Returns
    -------
    array
        For 1-D ``v`` a 2-D array with ``v`` on the ``k``-th diagonal; for 2-D ``v`` its
        ``k``-th diagonal.

    Raises
    ------
    ValueError
        ``v`` is neither 1-D nor 2-D.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.diag(clnp.asarray([1, 2])))
    [[1 0]
     [0 2]]
    >>> print(clnp.diag(clnp.asarray([[1, 2], [3, 4]]), k=1))
    [2]
    """
    xp = _xp()
    x = _arr(v)
    k = operator.index(k)
    if x.ndim == 1:
        n = x.shape[0]
        m = n + abs(k)
        out = xp.zeros((m, m), dtype=x.dtype, device=x.device)
        if n:
            out[np.arange(n) + builtins.max(-k, 0), np.arange(n) + builtins.max(k, 0)] = x
        return out
    if x.ndim == 2:
        return diagonal(x, k)
    raise ValueError("Input must be 1- or 2-d.")


def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None,
          out: Any = None) -> Any:
    """Sum along the ``offset``-th diagonals (``numpy.trace``).

    Parameters
    ----------
    a : array_like
        Input array.
    offset : int, default 0
        The diagonal.
    axis1 : int, default 0
        First axis of the 2-D sub-arrays.
    axis2 : int, default 1
        Second axis.
    dtype : dtype, optional
        The accumulator dtype (default: integers in the default integer type).
    out : array, optional
        A clnp array that receives the result.

    Returns
    -------
    array
        The sums, with ``axis1`` and ``axis2`` removed.

    Raises
    ------
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> int(clnp.trace(clnp.asarray([[1, 2], [3, 4]])))
    5
    """
    res = _xp().sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)
    return _finish(res, out, "trace")
