"""Searching functions of the standard: argmax, argmin, count_nonzero, nonzero, searchsorted
(``where`` lives with the elementwise functions)."""
from __future__ import annotations

import math
from typing import Any

from . import _dtypes as dt
from ._helpers import SCALARS, check_array, is_array, normalize_axes, normalize_axis, \
    result_dtype_of
from ._prims import primitive

__all__ = ["argmax", "argmin", "count_nonzero", "nonzero", "searchsorted"]


def _keep(res: Any, x: Any, axes: tuple[int, ...]) -> Any:
    """``res`` reshaped with the reduced ``axes`` of ``x`` kept as unit dims."""
    shape = tuple(1 if i in axes else n for i, n in enumerate(x.shape))
    return primitive("reshape").bind(res, shape=shape)


def _argsearch(x: Any, op: str, axis: Any, keepdims: bool) -> Any:
    check_array(x, op)
    if x.dtype.kind not in "biufc":
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
    """Returns the indices of the maximum values along a specified axis.

    When the maximum value occurs multiple times, only the index of the first occurrence is
    returned; NaN counts as the maximum (the first NaN wins, as in NumPy). With ``axis=None``
    the index is into the flattened array. The result has the default index dtype (int64);
    a zero-size search raises ValueError."""
    return _argsearch(x, "argmax", axis, keepdims)


def argmin(x: Any, /, *, axis: int | None = None, keepdims: bool = False) -> Any:
    """Returns the indices of the minimum values along a specified axis.

    When the minimum value occurs multiple times, only the index of the first occurrence is
    returned; NaN counts as the minimum (the first NaN wins, as in NumPy). With ``axis=None``
    the index is into the flattened array. The result has the default index dtype (int64);
    a zero-size search raises ValueError."""
    return _argsearch(x, "argmin", axis, keepdims)


def count_nonzero(x: Any, /, *, axis: int | tuple[int, ...] | None = None,
                  keepdims: bool = False) -> Any:
    """Counts the number of array elements which are non-zero.

    Complex elements are non-zero when either component is; booleans when True. The result
    has the default index dtype (int64)."""
    check_array(x, "count_nonzero")
    axes = normalize_axes(axis, x.ndim, "count_nonzero")
    if x.dtype == dt.bool_:
        flags = x
    else:
        from ._elementwise_functions import not_equal
        flags = not_equal(x, 0)
    res = primitive("reduce").bind(flags, op="sum", axes=tuple(sorted(axes)),
                                   acc_dtype=dt.int64, out_dtype=dt.int64)
    return _keep(res, x, axes) if keepdims else res


def nonzero(x: Any, /) -> tuple[Any, ...]:
    """Returns the indices of the array elements which are non-zero.

    A tuple of ``x.ndim`` int64 arrays, one per dimension, with the indices in row-major
    (C) order. Zero-dimensional input raises ValueError. The output shape depends on the data:
    the count of non-zero elements is read back to the host."""
    check_array(x, "nonzero")
    if x.ndim == 0:
        raise ValueError("nonzero: zero-dimensional arrays are not allowed; use "
                         "nonzero(reshape(x, (1,))) instead")
    return tuple(primitive("nonzero").bind(x))


def searchsorted(x1: Any, x2: Any, /, *, side: str = "left", sorter: Any = None) -> Any:
    """Finds the indices into ``x1`` such that, if the corresponding elements in ``x2`` were
    inserted before the indices, the order of ``x1``, when sorted in ascending order, would be
    preserved.

    ``x1`` is one-dimensional and sorted ascending, or ``sorter`` holds the indices that sort
    it. ``side='left'`` returns ``i`` with ``x1[i-1] < v <= x1[i]``, ``side='right'`` with
    ``x1[i-1] <= v < x1[i]``. ``x2`` may be a Python scalar (a 0-d result). NaNs sort last, as
    in NumPy. The result has the default index dtype (int64) and the shape of ``x2``."""
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
        check_array(sorter, "searchsorted", "sorter")
        if sorter.dtype.kind not in "iu":
            raise TypeError(f"searchsorted: sorter must have an integer dtype; got "
                            f"{sorter.dtype}")
        if sorter.shape != x1.shape:
            raise ValueError(f"searchsorted: sorter of shape {sorter.shape} does not match x1 "
                             f"of shape {x1.shape}")
        if sorter.device is not x1.device:
            raise ValueError(f"searchsorted: x1 is on {x1.device}, sorter on {sorter.device}")
    d = result_dtype_of([x1, x2], "searchsorted")
    if d.kind not in "biufc":
        raise TypeError(f"searchsorted: unsupported dtype {d}")
    if not x1.device.supports(d):
        d = dt.float32 if d.kind == "f" else dt.complex64
    if not is_array(x2):
        from ._creation_functions import asarray
        x2 = asarray(x2, dtype=d, device=x1.device)
    from ._data_type_functions import astype
    x1 = astype(x1, d, copy=False)
    x2 = astype(x2, d, copy=False)
    extra = () if sorter is None else (sorter,)
    return primitive("searchsorted").bind(x1, x2, *extra, side=side)
