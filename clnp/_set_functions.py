"""Set functions of the standard (``unique_*``, ``isin``) and NumPy's ``unique``, built on the
device sort: equal values become adjacent runs, whose starts are flagged and numbered."""
from __future__ import annotations

from typing import Any, NamedTuple

from . import _dtypes as dt
from ._helpers import SCALARS, check_array, check_scalar_fits, is_array, result_dtype_of
from ._prims import primitive

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
    """Returns the unique elements of an input array ``x``, the first occurring indices for
    each unique element in ``x``, the indices from the set of unique elements that reconstruct
    ``x``, and the corresponding counts for each unique element in ``x``.

    ``x`` is flattened. The result is a namedtuple ``(values, indices, inverse_indices,
    counts)``; ``values`` is sorted, ``inverse_indices`` has the shape of ``x``, and the index
    arrays have the default index dtype. NaNs are distinct (each has a count of one); ``-0.0``
    and ``+0.0`` are one value.
    """
    v, i, inv, c = _unique(x, "unique_all", True, True, True)
    return UniqueAllResult(v, i, inv, c)


def unique_counts(x: Any, /) -> UniqueCountsResult:
    """Returns the unique elements of an input array ``x`` and the corresponding counts for
    each unique element in ``x``.

    ``x`` is flattened; the result is a namedtuple ``(values, counts)`` with sorted
    ``values``. NaNs are distinct; signed zeros are one value with an aggregated count.
    """
    v, _, _, c = _unique(x, "unique_counts", False, False, True)
    return UniqueCountsResult(v, c)


def unique_inverse(x: Any, /) -> UniqueInverseResult:
    """Returns the unique elements of an input array ``x`` and the indices from the set of
    unique elements that reconstruct ``x``.

    ``x`` is flattened; the result is a namedtuple ``(values, inverse_indices)`` with sorted
    ``values`` and ``inverse_indices`` of the shape of ``x``. NaNs are distinct.
    """
    v, _, inv, _ = _unique(x, "unique_inverse", False, True, False)
    return UniqueInverseResult(v, inv)


def unique_values(x: Any, /) -> Any:
    """Returns the unique elements of an input array ``x``.

    ``x`` is flattened; the result is a sorted one-dimensional array of the dtype of ``x``.
    NaNs are distinct; signed zeros are one value.
    """
    return _unique(x, "unique_values", False, False, False)[0]


def unique(ar: Any, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: int | None = None, *, equal_nan: bool = True,
           sorted: bool = True) -> Any:
    """NumPy's ``unique``: the sorted unique elements of the flattened ``ar``, and optionally
    the indices of their first occurrences, the inverse indices (shaped like ``ar``) and the
    counts. ``equal_nan`` (the default, as in NumPy) collapses all NaNs into one value.
    Only ``axis=None`` is supported."""
    if axis is not None:
        raise NotImplementedError("unique: only axis=None is supported (unique sub-arrays "
                                  "along an axis are not implemented)")
    v, i, inv, c = _unique(ar, "unique", bool(return_index), bool(return_inverse),
                           bool(return_counts), bool(equal_nan))
    extra = [a for a, want in ((i, return_index), (inv, return_inverse), (c, return_counts))
             if want]
    return (v, *extra) if extra else v


def isin(x1: Any, x2: Any, /, *, invert: bool = False) -> Any:
    """Tests for each element in ``x1`` whether the element is in ``x2``.

    ``x1`` and ``x2`` are arrays or Python scalars (at least one an array), compared by value
    equality (``equal``) after type promotion: NaN is in nothing, ``-0.0`` equals ``+0.0``.
    With ``invert`` the test is whether the element is *not* in ``x2``. The result is a
    boolean array of the shape of ``x1`` (0-d when ``x1`` is a scalar).
    """
    from ._creation_functions import asarray, full
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
        d = device.default_float if d.kind == "f" else device.default_complex
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
