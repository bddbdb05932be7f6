"""Searching functions of the standard: argmax, argmin, count_nonzero, nonzero, searchsorted
(``where`` lives with the elementwise functions)."""
from __future__ import annotations

import math
from typing import Any

from .._core import dtypes as dt
from .._core.checks import (SCALARS, check_array, is_array, normalize_axes, normalize_axis,
                            result_dtype_of)
from .._core.prims import primitive
from .._core.dtypes import kind as dkind

__all__ = ["argmax", "argmin", "count_nonzero", "nonzero", "searchsorted"]


def _keep(res: Any, x: Any, axes: tuple[int, ...]) -> Any:
    """``res`` reshaped with the reduced ``axes`` of ``x`` kept as unit dims."""
    shape = tuple(1 if i in axes else n for i, n in enumerate(x.shape))
    return primitive("reshape").bind(res, shape=shape)


def _argsearch(x: Any, op: str, axis: Any, keepdims: bool) -> Any:
    check_array(x, op)
    if dkind(x.dtype) not in "biufc":
        raise TypeError(f"{op}: unsupported dtype {x.dtype}")
    if axis is None or x.ndim == 0:
        if axis is not None:
            normalize_axis(axis, 1, op)   # NumPy searches a 0-d array along axis 0 or -1
        ax, axes = None, tuple(range(x.ndim))
    else:
        ax = normalize_axis(axis, x.ndim, op)
        axes = (ax,)
    if math.prod(x.shape[a] for a in axes) == 0:
        raise ValueError(f"{op}: attempt to get {op} of an empty sequence (shape {x.shape}, "
                         f"axis {axis})")
    res = primitive(op).bind(x, axis=ax)
    return _keep(res, x, axes) if keepdims else res


def argmax(x: Any, /, *, axis: int | None = None, keepdims: bool = False) -> Any:
    """Indices of the maximum values along ``axis``.

    When the maximum occurs several times, the index of the first occurrence is returned;
    NaN counts as the maximum (the first NaN wins, as in NumPy).

    Parameters
    ----------
    x : array
        Input array.
    axis : int, optional
        The axis (the flattened array when None).
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions, so the result broadcasts against
        ``x``.
    out : array, optional
        NumPy's output array: the result is written to it and returned.

    Returns
    -------
    array
        Indices of the default index dtype (int64).

    Raises
    ------
    ValueError
        A zero-size search.
    IndexError
        An axis is out of range for ``x``.

    Examples
    --------
    >>> import clnp
    >>> x = clnp.asarray([[1, 5, 5], [7, 0, 2]])
    >>> print(clnp.argmax(x, axis=1))
    [1 0]
    >>> int(clnp.argmax(x))
    3
    """
    return _argsearch(x, "argmax", axis, keepdims)


def argmin(x: Any, /, *, axis: int | None = None, keepdims: bool = False) -> Any:
    """Indices of the minimum values along ``axis``.

    When the minimum occurs several times, the index of the first occurrence is returned;
    NaN counts as the minimum (the first NaN wins, as in NumPy).

    Parameters
    ----------
    x : array
        Input array.
    axis : int, optional
        The axis (the flattened array when None).
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions, so the result broadcasts against
        ``x``.
    out : array, optional
        NumPy's output array: the result is written to it and returned.

    Returns
    -------
    array
        Indices of the default index dtype (int64).

    Raises
    ------
    ValueError
        A zero-size search.
    IndexError
        An axis is out of range for ``x``.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.argmin(clnp.asarray([[1, 5, 0], [7, 0, 0]]), axis=1))
    [2 1]
    """
    return _argsearch(x, "argmin", axis, keepdims)


def count_nonzero(x: Any, /, *, axis: int | tuple[int, ...] | None = None,
                  keepdims: bool = False) -> Any:
    """Count the non-zero elements along ``axis``.

    Parameters
    ----------
    x : array
        Input array.
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions, so the result broadcasts against
        ``x``.

    Returns
    -------
    array
        Counts of the default index dtype (int64). Complex elements are non-zero when
        either component is.

    Raises
    ------
    IndexError
        An axis is out of range for ``x``.

    Examples
    --------
    >>> import clnp
    >>> x = clnp.asarray([[0, 1, 2], [0, 0, 3]])
    >>> int(clnp.count_nonzero(x))
    3
    >>> print(clnp.count_nonzero(x, axis=0))
    [0 1 2]
    """
    check_array(x, "count_nonzero")
    axes = normalize_axes(axis, x.ndim, "count_nonzero")
    if x.dtype == dt.bool_:
        flags = x
    else:
        from .elementwise import not_equal
        flags = not_equal(x, 0)
    res = primitive("reduce").bind(flags, op="sum", axes=tuple(sorted(axes)),
                                   acc_dtype=dt.int64, out_dtype=dt.int64)
    return _keep(res, x, axes) if keepdims else res


def nonzero(x: Any, /) -> tuple[Any, ...]:
    """Indices of the non-zero elements.

    The output shape depends on the data: the count of non-zero elements is read back to the
    host.

    Parameters
    ----------
    x : array
        Array of at least one dimension.

    Returns
    -------
    tuple of array
        ``x.ndim`` int64 arrays, one per dimension, with the indices in row-major order.

    Raises
    ------
    ValueError
        ``x`` is zero-dimensional.

    Examples
    --------
    >>> import clnp
    >>> rows, cols = clnp.nonzero(clnp.asarray([[0, 1], [2, 0]]))
    >>> print(rows, cols)
    [0 1] [1 0]
    """
    check_array(x, "nonzero")
    if x.ndim == 0:
        raise ValueError("nonzero: zero-dimensional arrays are not allowed; use "
                         "nonzero(reshape(x, (1,))) instead")
    return tuple(primitive("nonzero").bind(x))


def searchsorted(x1: Any, x2: Any, /, *, side: str = "left", sorter: Any = None) -> Any:
    """Indices where ``x2``'s elements would be inserted into sorted ``x1`` to keep it sorted.

    Parameters
    ----------
    x1 : array
        1-D array, sorted ascending unless ``sorter`` is given.
    x2 : array or scalar
        The values to insert (a Python scalar gives a 0-d result).
    side : {'left', 'right'}, default 'left'
        ``left`` returns ``i`` with ``x1[i-1] < v <= x1[i]``, ``right`` with ``x1[i-1]
        <= v < x1[i]``.
    sorter : array_like, optional
        Indices that sort ``x1`` (a NumPy array or a list is uploaded, as NumPy takes
        them).

    Returns
    -------
    array
        Indices of the default index dtype (int64), of ``x2``'s shape. NaNs sort last,
        as in NumPy.

    Raises
    ------
    ValueError
        ``x1`` is not one-dimensional, or ``side`` is neither 'left' nor 'right'.

    Examples
    --------
    >>> import clnp
    >>> edges = clnp.asarray([1.0, 2.0, 3.0])
    >>> print(clnp.searchsorted(edges, clnp.asarray([0.5, 2.0, 9.0])))
    [0 1 3]
    >>> print(clnp.searchsorted(edges, clnp.asarray([2.0]), side="right"))
    [2]
    """
    check_array(x1, "searchsorted", "x1")
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right'; got {side!r}")
    if x1.ndim != 1:
        raise ValueError(f"searchsorted: x1 must be one-dimensional; got shape {x1.shape}")
    if not is_array(x2) and not isinstance(x2, SCALARS):
        raise TypeError(f"searchsorted: x2 must be an array or a Python scalar; got "
                        f"{type(x2).__name__}")
    if is_array(x2) and x2.device is not x1.device:
        raise ValueError(f"searchsorted: x1 is on {x1.device}, x2 on {x2.device}")
    if sorter is not None:
        if not is_array(sorter) and hasattr(sorter, "__len__") and not isinstance(sorter, str):
            from .creation import asarray
            sorter = asarray(sorter, device=x1.device)   # NumPy takes any array_like sorter
        check_array(sorter, "searchsorted", "sorter")
        if dkind(sorter.dtype) not in "iu":
            raise TypeError(f"searchsorted: sorter must have an integer dtype; got "
                            f"{sorter.dtype}")
        if sorter.shape != x1.shape:
            raise ValueError(f"searchsorted: sorter of shape {sorter.shape} does not match x1 "
                             f"of shape {x1.shape}")
        if sorter.device is not x1.device:
            raise ValueError(f"searchsorted: x1 is on {x1.device}, sorter on {sorter.device}")
    d = result_dtype_of([x1, x2], "searchsorted")
    if dkind(d) not in "biufc":
        raise TypeError(f"searchsorted: unsupported dtype {d}")
    if not x1.device.supports(d):
        d = dt.float32 if dkind(d) == "f" else dt.complex64
    if not is_array(x2):
        from .creation import asarray
        x2 = asarray(x2, dtype=d, device=x1.device)
    from .data_types import astype
    x1 = astype(x1, d, copy=False)
    x2 = astype(x2, d, copy=False)
    extra = () if sorter is None else (sorter,)
    return primitive("searchsorted").bind(x1, x2, *extra, side=side)
