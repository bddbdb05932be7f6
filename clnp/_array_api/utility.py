"""Utility functions of the standard not covered elsewhere: ``diff`` (``all``/``any`` live with
the statistical functions)."""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .._core.checks import SCALARS, check_array, is_array, normalize_axis
from .._core.prims import primitive
from .._core.dtypes import kind as dkind

__all__ = ["diff"]


def _edge(v: Any, x: Any, ax: int, what: str) -> Any:
    """``prepend``/``append`` as an array matching ``x`` outside ``ax``; a scalar or 0-d
    array becomes one slice along ``ax`` (NumPy)."""
    if not is_array(v):
        if not isinstance(v, (SCALARS, np.generic, np.ndarray, list, tuple)):
            raise TypeError(f"diff: {what} must be an array or a scalar; got "
                            f"{type(v).__name__}")
        from .creation import asarray
        v = asarray(v, device=x.device)     # NumPy's asanyarray: a NumPy dtype is kept
    if v.ndim == 0:         # NumPy broadcasts a 0-d value to one slice along the axis
        from .manipulation import broadcast_to
        if v.device is not x.device:
            raise ValueError(f"diff: x is on {x.device}, {what} on {v.device}")
        shape = tuple(1 if i == ax else n for i, n in enumerate(x.shape))
        return broadcast_to(v, shape)
    if v.ndim != x.ndim or any(m != n for i, (m, n) in enumerate(zip(v.shape, x.shape))
                               if i != ax):
        raise ValueError(f"diff: {what} of shape {v.shape} does not match x of shape "
                         f"{x.shape} outside axis {ax}")
    if v.device is not x.device:
        raise ValueError(f"diff: x is on {x.device}, {what} on {v.device}")
    return v


def _shifted(x: Any, ax: int, start: int, length: int) -> Any:
    starts = tuple(start if i == ax else 0 for i in range(x.ndim))
    shape = tuple(length if i == ax else n for i, n in enumerate(x.shape))
    return primitive("slice").bind(x, starts=starts, steps=(1,) * x.ndim, shape=shape)


def diff(x: Any, /, *, axis: int = -1, n: int = 1, prepend: Any = None,
         append: Any = None) -> Any:
    """The ``n``-th discrete forward difference along ``axis``.

    Parameters
    ----------
    x : array
        Input array.
    axis : int, default -1
        The axis.
    n : int, default 1
        The order; higher orders are computed recursively.
    prepend : array_like or scalar, optional
        Values joined before ``x`` along ``axis`` (same shape as ``x`` except along it;
        other dtypes promote); a scalar or 0-d array (clnp or NumPy) is one slice of it,
        as in NumPy.
    append : array_like or scalar, optional
        Values joined after ``x``, taking the same forms.

    Returns
    -------
    array
        ``out[i] = x[i+1] - x[i]`` along ``axis``, with ``M + N1 + N2 - n`` elements
        there (none when ``n`` exceeds that). Boolean input differences with ``!=``, as
        NumPy does.

    Raises
    ------
    ValueError
        ``n`` is negative.
    IndexError
        An axis is out of range for ``x``.

    Examples
    --------
    >>> import clnp
    >>> x = clnp.asarray([1, 4, 9, 16])
    >>> print(clnp.diff(x))
    [3 5 7]
    >>> print(clnp.diff(x, n=2))
    [2 2]
    >>> print(clnp.diff(x, prepend=clnp.asarray(0)))
    [1 3 5 7]
    """
    check_array(x, "diff")
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"diff: n must be an integer; got {type(n).__name__}") from None
    if n < 0:
        raise ValueError(f"diff: order n must be non-negative; got {n}")
    if x.ndim == 0:
        raise ValueError("diff: x must have at least one dimension; got a 0-d array")
    ax = normalize_axis(axis, x.ndim, "diff")
    if dkind(x.dtype) not in "biufc":
        raise TypeError(f"diff: unsupported dtype {x.dtype}")
    if prepend is not None or append is not None:
        parts = [_edge(prepend, x, ax, "prepend")] if prepend is not None else []
        parts.append(x)
        if append is not None:
            parts.append(_edge(append, x, ax, "append"))
        from .manipulation import concat
        x = concat(parts, axis=ax)
    from .elementwise import not_equal, subtract
    op = not_equal if dkind(x.dtype) == "b" else subtract
    for _ in range(n):
        m = x.shape[ax]
        if m <= 1:
            return _shifted(x, ax, 0, 0)   # nothing left to difference
        x = op(_shifted(x, ax, 1, m - 1), _shifted(x, ax, 0, m - 1))
    return x
