"""Sorting functions of the standard: ``sort`` and ``argsort`` (stable radix sort on the
device; NumPy's order for NaN, signed zeros and complex values)."""
from __future__ import annotations

from typing import Any

from ._helpers import check_array, normalize_axis
from ._prims import primitive

__all__ = ["argsort", "sort"]


def _check(x: Any, axis: Any, fname: str) -> int:
    check_array(x, fname)
    return normalize_axis(axis, x.ndim, fname)


def argsort(x: Any, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Any:
    """Returns the indices that sort an array ``x`` along a specified axis.

    ``descending`` sorts in descending order; ``stable`` keeps the relative order of values
    that compare as equal (clnp's sort is always stable, so ties keep their input order in
    both directions). NaNs sort after every other value (before them when ``descending``),
    ``-0.0`` equals ``+0.0``, and complex values order lexicographically as in NumPy. Returns
    an array of the default index dtype (int64) with the shape of ``x``.
    """
    a = _check(x, axis, "argsort")
    return primitive("argsort").bind(x, axis=a, descending=bool(descending),
                                     stable=bool(stable))


def sort(x: Any, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Any:
    """Returns a sorted copy of an input array ``x``.

    ``axis`` is the axis along which to sort; ``descending`` sorts in descending order;
    ``stable`` keeps the relative order of values that compare as equal (always the case
    here). NaNs sort after every other value (before them when ``descending``). The result
    has the data type and shape of ``x``.
    """
    a = _check(x, axis, "sort")
    return primitive("sort").bind(x, axis=a, descending=bool(descending), stable=bool(stable))
