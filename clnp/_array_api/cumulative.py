"""Cumulative sums and products: the standard's ``cumulative_sum``/``cumulative_prod`` and
NumPy's ``cumsum``/``cumprod`` (which flatten when ``axis`` is None)."""
from __future__ import annotations

from typing import Any

from .._core import dtypes as dt
from .._core.checks import check_array, normalize_axis
from .._core.prims import primitive
from .._core.dtypes import kind as dkind

__all__ = ["cumulative_sum", "cumulative_prod", "cumsum", "cumprod"]


def _result_dtype(x: Any, dtype: Any, fname: str) -> Any:
    """The standard's accumulation dtype: integers (and booleans) widen to the default integer
    of their signedness, other dtypes stay, an explicit ``dtype`` wins."""
    if dtype is not None:
        d = dt.as_dtype(dtype, fname)
        x.device.check_dtype(d, fname)
        if dkind(d) == "b":
            raise TypeError(f"{fname}: dtype=bool is not a numeric dtype")
        return d
    if dkind(x.dtype) in "bi":
        return dt.int64
    if dkind(x.dtype) == "u":
        return dt.uint64
    return x.dtype


def _cumulative(x: Any, op: str, axis: Any, dtype: Any, include_initial: bool,
                fname: str, flatten: bool) -> Any:
    check_array(x, fname)
    if dkind(x.dtype) not in "biufc":
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
    """Cumulative sum of the elements of ``x`` along ``axis``.

    Parameters
    ----------
    x : array
        Input array.
    axis : int, optional
        The axis; required when ``x`` has more than one dimension.
    dtype : dtype, optional
        The result dtype (default: integer and bool input in the default integer type of
        its signedness); the input is cast to it first.
    include_initial : bool, default False
        Start with the additive identity (zero); the axis grows by one.

    Returns
    -------
    array
        The running sums.

    Raises
    ------
    ValueError
        ``axis`` omitted for a multi-dimensional ``x``.
    IndexError
        An axis is out of range for ``x``.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.cumulative_sum(clnp.asarray([1, 2, 3])))
    [1 3 6]
    >>> print(clnp.cumulative_sum(clnp.asarray([1, 2, 3]), include_initial=True))
    [0 1 3 6]
    """
    return _cumulative(x, "sum", axis, dtype, include_initial, "cumulative_sum", False)


def cumulative_prod(x: Any, /, *, axis: int | None = None, dtype: Any = None,
                    include_initial: bool = False) -> Any:
    """Cumulative product of the elements of ``x`` along ``axis``.

    Parameters
    ----------
    x : array
        Input array.
    axis : int, optional
        The axis; required when ``x`` has more than one dimension.
    dtype : dtype, optional
        The result dtype (default: integer and bool input in the default integer type of
        its signedness); the input is cast to it first.
    include_initial : bool, default False
        Start with the multiplicative identity (one); the axis grows by one.

    Returns
    -------
    array
        The running products.

    Raises
    ------
    ValueError
        ``axis`` omitted for a multi-dimensional ``x``.
    IndexError
        An axis is out of range for ``x``.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.cumulative_prod(clnp.asarray([[1, 2], [3, 4]]), axis=1))
    [[ 1  2]
     [ 3 12]]
    """
    return _cumulative(x, "prod", axis, dtype, include_initial, "cumulative_prod", False)


def cumsum(a: Any, axis: int | None = None, dtype: Any = None) -> Any:
    """NumPy's ``cumsum``: cumulative sum along ``axis`` (the flattened array when None).

    Parameters
    ----------
    a : array
        Input array.
    axis : int, optional
        The axis (the flattened array when None).
    dtype : dtype, optional
        The result dtype (default: integers in the default integer dtype).
    out : array, optional
        NumPy's output array: the result is written to it and returned.

    Returns
    -------
    array
        The running sums.

    Raises
    ------
    IndexError
        An axis is out of range for ``x``.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.cumsum(clnp.asarray([[1, 2], [3, 4]])))
    [ 1  3  6 10]
    """
    return _cumulative(a, "sum", axis, dtype, False, "cumsum", True)


def cumprod(a: Any, axis: int | None = None, dtype: Any = None) -> Any:
    """NumPy's ``cumprod``: cumulative product along ``axis`` (the flattened array when None).

    Parameters
    ----------
    a : array
        Input array.
    axis : int, optional
        The axis (the flattened array when None).
    dtype : dtype, optional
        The result dtype (default: integers in the default integer dtype).
    out : array, optional
        NumPy's output array: the result is written to it and returned.

    Returns
    -------
    array
        The running products.

    Raises
    ------
    IndexError
        An axis is out of range for ``x``.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.cumprod(clnp.asarray([1, 2, 3, 4])))
    [ 1  2  6 24]
    """
    return _cumulative(a, "prod", axis, dtype, False, "cumprod", True)
