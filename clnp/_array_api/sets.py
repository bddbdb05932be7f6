"""Set functions of the standard (``unique_*``, ``isin``) and NumPy's ``unique``, built on the
device sort: equal values become adjacent runs, whose starts are flagged and numbered."""
from __future__ import annotations

from typing import Any, NamedTuple

from .._core import dtypes as dt
from .._core.checks import (SCALARS, check_array, check_scalar_fits, is_array, normalize_axis,
                            result_dtype_of)
from .._core.prims import primitive
from .._core.dtypes import kind as dkind
from .._core.namespace import namespace as _namespace

__all__ = ["isin", "unique", "unique_all", "unique_counts", "unique_inverse", "unique_values"]


class UniqueAllResult(NamedTuple):
    values: Any
    indices: Any
    inverse_indices: Any
    counts: Any


class UniqueCountsResult(NamedTuple):
    values: Any
    counts: Any


class UniqueInverseResult(NamedTuple):
    values: Any
    inverse_indices: Any


def _unique(x: Any, fname: str, index: bool, inverse: bool, counts: bool,
            equal_nan: bool = False) -> tuple[Any, Any, Any, Any]:
    check_array(x, fname)
    return primitive("unique", multiple_results=True).bind(
        x, return_index=index, return_inverse=inverse, return_counts=counts,
        equal_nan=equal_nan)


def unique_all(x: Any, /) -> UniqueAllResult:
    """The unique elements of ``x``, their first indices, the inverse indices and the counts.

    ``x`` is flattened. NaNs are distinct (each has a count of one); ``-0.0`` and ``+0.0``
    are one value. The result shape depends on the data: the count is read back to the host.

    Parameters
    ----------
    x : array
        Input array.

    Returns
    -------
    UniqueAllResult
        Named tuple ``(values, indices, inverse_indices, counts)``: ``values`` sorted,
        ``inverse_indices`` of ``x``'s shape, index arrays of the default index dtype.

    Raises
    ------
    TypeError
        ``x`` is not a clnp array.

    Examples
    --------
    >>> import clnp
    >>> r = clnp.unique_all(clnp.asarray([3, 1, 3, 2]))
    >>> print(r.values, r.indices, r.inverse_indices, r.counts)
    [1 2 3] [1 3 0] [2 0 2 1] [1 1 2]
    """
    v, i, inv, c = _unique(x, "unique_all", True, True, True)
    return UniqueAllResult(v, i, inv, c)


def unique_counts(x: Any, /) -> UniqueCountsResult:
    """The unique elements of ``x`` and how often each occurs.

    ``x`` is flattened. NaNs are distinct; signed zeros are one value with an aggregated
    count.

    Parameters
    ----------
    x : array
        Input array.

    Returns
    -------
    UniqueCountsResult
        Named tuple ``(values, counts)`` with sorted ``values``.

    Raises
    ------
    TypeError
        ``x`` is not a clnp array.

    Examples
    --------
    >>> import clnp
    >>> values, counts = clnp.unique_counts(clnp.asarray([2, 2, 5]))
    >>> print(values, counts)
    [2 5] [2 1]
    """
    v, _, _, c = _unique(x, "unique_counts", False, False, True)
    return UniqueCountsResult(v, c)


def unique_inverse(x: Any, /) -> UniqueInverseResult:
    """The unique elements of ``x`` and the indices that rebuild ``x`` from them.

    Parameters
    ----------
    x : array
        Input array.

    Returns
    -------
    UniqueInverseResult
        Named tuple ``(values, inverse_indices)``: sorted ``values``,
        ``inverse_indices`` of ``x``'s shape.

    Raises
    ------
    TypeError
        ``x`` is not a clnp array.

    Examples
    --------
    >>> import clnp
    >>> values, inverse = clnp.unique_inverse(clnp.asarray([[5, 1], [1, 5]]))
    >>> print(values)
    [1 5]
    >>> print(values[inverse])
    [[5 1]
     [1 5]]
    """
    v, _, inv, _ = _unique(x, "unique_inverse", False, True, False)
    return UniqueInverseResult(v, inv)


def unique_values(x: Any, /) -> Any:
    """The unique elements of ``x``, sorted.

    Parameters
    ----------
    x : array
        Input array.

    Returns
    -------
    array
        1-D array of ``x``'s dtype. NaNs are distinct; signed zeros are one value.

    Raises
    ------
    TypeError
        ``x`` is not a clnp array.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.unique_values(clnp.asarray([3, 1, 3, 1])))
    [1 3]
    """
    return _unique(x, "unique_values", False, False, False)[0]


def unique(ar: Any, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: int | None = None, *, equal_nan: bool = True,
           sorted: bool = True) -> Any:
    """NumPy's ``unique``: the sorted unique elements of the flattened ``ar``.

    Parameters
    ----------
    ar : array
        Input array (flattened).
    return_index : bool, default False
        Also return the indices of the first occurrences.
    return_inverse : bool, default False
        Also return the inverse indices (shaped like ``ar``).
    return_counts : bool, default False
        Also return the counts.
    axis : int, optional
        None: the unique elements of the flattened array. An axis: the unique sub-arrays
        along it (``ar``'s slices ``take(ar, [k], axis)``), sorted lexicographically with
        NaN last; the inverse is then 1-D, of length ``ar.shape[axis]``, as in NumPy.
    equal_nan : bool, default True
        Collapse all NaNs into one value, as NumPy does (for the elements: sub-arrays
        holding NaN are all distinct, as NumPy's are).
    sorted : bool, default True
        The values are always sorted.

    Returns
    -------
    array or tuple of array
        The unique values, followed by the requested index, inverse and count arrays.

    Raises
    ------
    AxisError
        ``axis`` out of range.

    Examples
    --------
    >>> import clnp
    >>> values, counts = clnp.unique(clnp.asarray([2, 1, 2]), return_counts=True)
    >>> print(values, counts)
    [1 2] [1 2]
    >>> print(clnp.unique(clnp.asarray([[3, 4], [1, 2], [3, 4]]), axis=0))
    [[1 2]
     [3 4]]
    """
    if axis is not None:
        check_array(ar, "unique")
        ax = normalize_axis(axis, ar.ndim, "unique")
        if ar.ndim > 1:
            v, i, inv, c = _unique_axis(ar, ax)
            extra = [a for a, want in ((i, return_index), (inv, return_inverse),
                                       (c, return_counts)) if want]
            return (v, *extra) if extra else v
    v, i, inv, c = _unique(ar, "unique", bool(return_index), bool(return_inverse),
                           bool(return_counts), bool(equal_nan))
    extra = [a for a, want in ((i, return_index), (inv, return_inverse), (c, return_counts))
             if want]
    return (v, *extra) if extra else v


def _unique_axis(x: Any, axis: int) -> tuple[Any, Any, Any, Any]:
    """NumPy's ``unique`` along ``axis``: the sub-arrays become rows, sorted by a lexicographic
    sort (one stable argsort per column, last column first), and a row starts a new group
    where it differs from its predecessor (NaN differs from itself, as in NumPy's field
    comparison). Reads the number of groups back to the host."""
    xp = _namespace()
    moved = xp.moveaxis(x, axis, 0)
    n, rest = moved.shape[0], tuple(moved.shape[1:])
    m = 1
    for k in rest:
        m *= k
    rows = xp.reshape(moved, (n, m))
    perm = xp.arange(n, dtype=dt.int64, device=x.device)
    for j in range(m - 1, -1, -1) if n > 1 else ():
        col = xp.take(rows[:, j], perm)
        perm = xp.take(perm, xp.argsort(col, stable=True))
    srt = xp.take(rows, perm, axis=0)
    if n:
        starts = xp.concat([xp.ones((1,), dtype=dt.bool_, device=x.device),
                            xp.any(srt[1:] != srt[:-1], axis=1)])
    else:
        starts = xp.zeros((0,), dtype=dt.bool_, device=x.device)
    first = xp.nonzero(starts)[0]
    values = xp.moveaxis(xp.reshape(xp.take(srt, first, axis=0), (first.shape[0],) + rest),
                         0, axis)
    group = xp.cumulative_sum(xp.astype(starts, dt.int64)) - 1
    inverse = xp.zeros((n,), dtype=dt.int64, device=x.device)
    inverse[perm] = group
    ends = xp.concat([first[1:], xp.full((1,), n, dtype=first.dtype, device=x.device)])
    counts = xp.astype(ends - first, dt.int64)
    return values, xp.astype(xp.take(perm, first), dt.int64), inverse, counts


def isin(x1: Any, x2: Any, /, *, invert: bool = False) -> Any:
    """Test whether each element of ``x1`` is in ``x2``.

    Values compare by equality after type promotion: NaN is in nothing, ``-0.0`` equals
    ``+0.0``.

    Parameters
    ----------
    x1 : array or scalar
        The elements to test (at least one of ``x1``, ``x2`` is an array).
    x2 : array or scalar
        The elements to test against.
    invert : bool, default False
        Test whether each element is *not* in ``x2``.
    assume_unique : bool, default False
        A hint, accepted and ignored (the result is the same).
    kind : str, optional
        NumPy's strategy hint, accepted and ignored (the result is the same).

    Returns
    -------
    array
        Boolean array of ``x1``'s shape (0-d when ``x1`` is a scalar).

    Raises
    ------
    TypeError
        Neither argument is an array.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.isin(clnp.asarray([1, 2, 3, 4]), clnp.asarray([2, 4])))
    [False  True False  True]
    """
    from .creation import asarray, full
    a1, a2 = is_array(x1), is_array(x2)
    if not (a1 or a2):
        raise TypeError(f"isin: at least one of x1, x2 must be an array; got "
                        f"{type(x1).__name__} and {type(x2).__name__}")
    for v, name in ((x1, "x1"), (x2, "x2")):
        if not is_array(v) and not isinstance(v, SCALARS):
            raise TypeError(f"isin: {name} must be an array or a Python scalar; got "
                            f"{type(v).__name__}")
    if a1 and a2 and x1.device != x2.device:
        raise ValueError(f"isin: x1 and x2 are on different devices ({x1.device} and "
                         f"{x2.device})")
    d = result_dtype_of([x1, x2], "isin")
    device = (x1 if a1 else x2).device
    if not device.supports(d):   # a Python float next to integers: the device's own float
        d = device.default_float if dkind(d) == "f" else device.default_complex
    invert = bool(invert)
    shape = x1.shape if a1 else ()
    for v in (x1, x2):
        if not is_array(v):
            try:
                check_scalar_fits(v, d, "isin")
            except OverflowError:
                # no element of the array's dtype equals a Python int beyond its range
                return full(shape, invert, dtype=dt.bool_, device=device)
    conv = primitive("convert_element_type")

    def arr(v: Any) -> Any:
        if not is_array(v):
            return asarray(v, dtype=d, device=device)
        return v if v.dtype == d else conv.bind(v, dtype=d)

    return primitive("isin").bind(arr(x1), arr(x2), invert=invert)
