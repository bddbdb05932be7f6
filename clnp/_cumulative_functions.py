"""Cumulative sums and products: the standard's ``cumulative_sum``/``cumulative_prod`` and
NumPy's ``cumsum``/``cumprod`` (which flatten when ``axis`` is None)."""
from __future__ import annotations

from typing import Any

from . import _dtypes as dt
from ._helpers import check_array, normalize_axis
from ._prims import primitive

__all__ = ["cumulative_sum", "cumulative_prod", "cumsum", "cumprod"]


def _result_dtype(x: Any, dtype: Any, fname: str) -> Any:
    """The standard's accumulation dtype: integers (and booleans) widen to the default integer
    of their signedness, other dtypes stay, an explicit ``dtype`` wins."""
    if dtype is not None:
        d = dt.as_dtype(dtype, fname)
        x.device.check_dtype(d, fname)
        if d.kind == "b":
            raise TypeError(f"{fname}: dtype=bool is not a numeric dtype")
        return d
    if x.dtype.kind in "bi":
        return dt.int64
    if x.dtype.kind == "u":
        return dt.uint64
    return x.dtype


def _cumulative(x: Any, op: str, axis: Any, dtype: Any, include_initial: bool,
                fname: str, flatten: bool) -> Any:
    check_array(x, fname)
    if x.dtype.kind not in "biufc":
        raise TypeError(f"{fname}: unsupported dtype {x.dtype}")
    if not isinstance(include_initial, bool):
        raise TypeError(f"{fname}: include_initial must be a bool; got "
                        f"{type(include_initial).__name__}")
    d = _result_dtype(x, dtype, fname)
    if x.ndim == 0 or (axis is None and flatten):
        # a scalar is a one-element vector (NumPy and array_api_strict agree)
        x = primitive("reshape").bind(x, shape=(x.size,))
        ax = 0 if axis is None else normalize_axis(axis, 1, fname)
    elif axis is None:
        if x.ndim > 1:
            raise ValueError(f"{fname}: axis must be specified for an array of shape "
                             f"{x.shape} (more than one dimension)")
        ax = 0
    else:
        ax = normalize_axis(axis, x.ndim, fname)
    if x.dtype != d:
        x = primitive("convert_element_type").bind(x, dtype=d)
    return primitive("cum" + op).bind(x, axis=ax, include_initial=include_initial)


def cumulative_sum(x: Any, /, *, axis: int | None = None, dtype: Any = None,
                   include_initial: bool = False) -> Any:
    """Calculates the cumulative sum of elements in the input array ``x``.

    ``axis`` is required when ``x`` has more than one dimension. Integer and boolean inputs
    accumulate in the default integer dtype of their signedness unless ``dtype`` is given
    (the input is cast to the result dtype first). With ``include_initial`` the first value
    along ``axis`` is the additive identity (zero) and the axis grows by one."""
    return _cumulative(x, "sum", axis, dtype, include_initial, "cumulative_sum", False)


def cumulative_prod(x: Any, /, *, axis: int | None = None, dtype: Any = None,
                    include_initial: bool = False) -> Any:
    """Calculates the cumulative product of elements in the input array ``x``.

    ``axis`` is required when ``x`` has more than one dimension. Integer and boolean inputs
    accumulate in the default integer dtype of their signedness unless ``dtype`` is given
    (the input is cast to the result dtype first). With ``include_initial`` the first value
    along ``axis`` is the multiplicative identity (one) and the axis grows by one."""
    return _cumulative(x, "prod", axis, dtype, include_initial, "cumulative_prod", False)


def cumsum(a: Any, axis: int | None = None, dtype: Any = None) -> Any:
    """Cumulative sum along ``axis`` (NumPy's ``cumsum``: the flattened array when ``axis`` is
    None); integers accumulate in the default integer dtype."""
    return _cumulative(a, "sum", axis, dtype, False, "cumsum", True)


def cumprod(a: Any, axis: int | None = None, dtype: Any = None) -> Any:
    """Cumulative product along ``axis`` (NumPy's ``cumprod``: the flattened array when
    ``axis`` is None); integers accumulate in the default integer dtype."""
    return _cumulative(a, "prod", axis, dtype, False, "cumprod", True)
