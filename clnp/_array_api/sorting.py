"""Sorting functions of the standard: ``sort`` and ``argsort`` (stable radix sort on the
device; NumPy's order for NaN, signed zeros and complex values)."""
from __future__ import annotations

from typing import Any

from .._core.checks import check_array, normalize_axis
from .._core.prims import primitive

__all__ = ["argsort", "sort"]


def _check(x: Any, axis: Any, fname: str) -> int:
    check_array(x, fname)
    return normalize_axis(axis, x.ndim, fname)


def argsort(x: Any, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Any:
    """Indices that sort ``x`` along ``axis``.

    NaNs sort after every other value (before them when ``descending``), ``-0.0`` equals
    ``+0.0``, and complex values order lexicographically as in NumPy.

    Parameters
    ----------
    x : array
        Input array.
    axis : int or None, default -1
        The axis to sort along; None sorts the flattened array (NumPy).
    descending : bool, default False
        Sort in descending order.
    stable : bool, default True
        Keep ties in input order (clnp's sort is always stable, in both directions).
    kind : {'quicksort', 'mergesort', 'heapsort', 'stable'}, optional
        NumPy's algorithm choice: accepted; clnp's sort is stable, a valid result for every
        kind.
    order : None
        NumPy's field names of structured arrays: not supported (TypeError).

    Returns
    -------
    array
        Indices of the default index dtype (int64), of ``x``'s shape.

    Raises
    ------
    IndexError
        An axis is out of range for ``x``.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.argsort(clnp.asarray([3, 1, 2])))
    [1 2 0]
    >>> print(clnp.argsort(clnp.asarray([3, 1, 3]), descending=True))
    [0 2 1]
    """
    if axis is None:        # NumPy: sort the flattened array
        check_array(x, "argsort")
        x, axis = x.reshape((-1,)), -1
    a = _check(x, axis, "argsort")
    return primitive("argsort").bind(x, axis=a, descending=bool(descending),
                                     stable=bool(stable))


def sort(x: Any, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Any:
    """A sorted copy of ``x``.

    Parameters
    ----------
    x : array
        Input array.
    axis : int or None, default -1
        The axis to sort along; None sorts the flattened array (NumPy).
    descending : bool, default False
        Sort in descending order.
    stable : bool, default True
        Keep ties in input order (always the case).
    kind : {'quicksort', 'mergesort', 'heapsort', 'stable'}, optional
        NumPy's algorithm choice: accepted; clnp's sort is stable, a valid result for every
        kind.
    order : None
        NumPy's field names of structured arrays: not supported (TypeError).

    Returns
    -------
    array
        Array of ``x``'s shape and dtype. NaNs sort after every other value (before them
        when ``descending``).

    Raises
    ------
    IndexError
        An axis is out of range for ``x``.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.sort(clnp.asarray([[3, 1, 2], [0, 5, 4]])))
    [[1 2 3]
     [0 4 5]]
    >>> print(clnp.sort(clnp.asarray([3.0, float("nan"), 1.0])))
    [ 1.  3. nan]
    """
    if axis is None:        # NumPy: sort the flattened array
        check_array(x, "sort")
        x, axis = x.reshape((-1,)), -1
    a = _check(x, axis, "sort")
    return primitive("sort").bind(x, axis=a, descending=bool(descending), stable=bool(stable))
