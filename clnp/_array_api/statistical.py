"""Reductions and statistics of the standard: sum, prod, max, min, mean, var, std, all, any."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._core import dtypes as dt
from .._core.checks import check_array, normalize_axes
from .._core.prims import primitive
from .._core.dtypes import kind as dkind

__all__ = ["max", "mean", "min", "prod", "std", "sum", "var", "all", "any"]


def _acc_dtype(x: Any, dtype: Any, fname: str) -> np.dtype:
    """Default accumulation dtype (the standard: integers widen to the default integer type)."""
    if dtype is not None:
        try:
            d = dt.as_dtype(dtype)
        except TypeError as e:
            raise TypeError(f"{fname}: {e}") from None
        x.device.check_dtype(d, fname)
        if dkind(d) == "b":
            raise TypeError(f"{fname}: dtype=bool is not a numeric dtype")
        return d
    k = dkind(x.dtype)
    if k == "b" or k == "i":
        return dt.int64
    if k == "u":
        return dt.uint64
    return x.dtype


def _reduce(x: Any, op: str, axis: Any, keepdims: bool, acc: np.dtype, out: np.dtype,
            fname: str) -> Any:
    axes = normalize_axes(axis, x.ndim, fname)
    res = primitive("reduce").bind(x, op=op, axes=tuple(sorted(axes)), acc_dtype=acc,
                                   out_dtype=out)
    if keepdims:
        from .manipulation import reshape
        res = reshape(res, tuple(1 if i in axes else n for i, n in enumerate(x.shape)))
    return res


def sum(x: Any, /, *, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    """Sum of the elements over ``axis``.

    Parameters
    ----------
    x : array
        Input array.
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    dtype : dtype, optional
        The accumulator and result dtype (default: integers in the default integer type
        of their signedness).
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions, so the result broadcasts against
        ``x``.
    out : array, optional
        NumPy's output array: the result is written to it and returned.
    initial : scalar, optional
        NumPy's starting value of the reduction (computed through the ufunc's ``reduce``).
    where : array_like of bool, optional
        NumPy's mask of the elements that take part (computed through the ufunc's ``reduce``).

    Returns
    -------
    array
        The sums; zero for an empty reduction.

    Raises
    ------
    IndexError
        An axis is out of range for ``x``.

    Examples
    --------
    >>> import clnp
    >>> x = clnp.asarray([[1, 2], [3, 4]])
    >>> print(clnp.sum(x, axis=0))
    [4 6]
    >>> clnp.sum(x, axis=1, keepdims=True).shape
    (2, 1)
    """
    check_array(x, "sum")
    if dkind(x.dtype) not in "biufc":
        raise TypeError(f"sum requires numeric input; got {x.dtype}")
    d = _acc_dtype(x, dtype, "sum")
    acc = dt.float32 if d in dt.HALF else d
    return _reduce(x, "sum", axis, keepdims, acc, d, "sum")


def prod(x: Any, /, *, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    """Product of the elements over ``axis``.

    Parameters
    ----------
    x : array
        Input array.
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    dtype : dtype, optional
        The accumulator and result dtype (default: integers in the default integer type
        of their signedness).
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions, so the result broadcasts against
        ``x``.
    out : array, optional
        NumPy's output array: the result is written to it and returned.
    initial : scalar, optional
        NumPy's starting value of the reduction (computed through the ufunc's ``reduce``).
    where : array_like of bool, optional
        NumPy's mask of the elements that take part (computed through the ufunc's ``reduce``).

    Returns
    -------
    array
        The products; one for an empty reduction.

    Raises
    ------
    IndexError
        An axis is out of range for ``x``.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.prod(clnp.asarray([[1, 2], [3, 4]]), axis=1))
    [ 2 12]
    """
    check_array(x, "prod")
    d = _acc_dtype(x, dtype, "prod")
    acc = dt.float32 if d in dt.HALF else d
    return _reduce(x, "prod", axis, keepdims, acc, d, "prod")


def _minmax(x: Any, op: str, axis: Any, keepdims: bool) -> Any:
    check_array(x, op)
    if dkind(x.dtype) not in "biuf":
        raise TypeError(f"{op} requires real-valued input; got {x.dtype}")
    axes = normalize_axes(axis, x.ndim, op)
    if math.prod(x.shape[a] for a in axes) == 0:
        raise ValueError(f"{op}: zero-size reduction over axes {axes} of shape {x.shape} has "
                         f"no identity")
    acc = dt.float32 if x.dtype in dt.HALF else x.dtype
    return _reduce(x, op, axis, keepdims, acc, x.dtype, op)


def max(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    """Maximum over ``axis``; NaN propagates.

    Parameters
    ----------
    x : array
        Input array.
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions, so the result broadcasts against
        ``x``.
    out : array, optional
        NumPy's output array: the result is written to it and returned.
    initial : scalar, optional
        NumPy's starting value of the reduction (computed through the ufunc's ``reduce``).
    where : array_like of bool, optional
        NumPy's mask of the elements that take part (computed through the ufunc's
        ``reduce``; it needs ``initial``, as in NumPy).

    Returns
    -------
    array
        The maxima, of ``x``'s dtype.

    Raises
    ------
    ValueError
        A zero-size reduction.
    IndexError
        An axis is out of range for ``x``.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.max(clnp.asarray([[1, 5], [3, 2]]), axis=0))
    [3 5]
    """
    return _minmax(x, "max", axis, keepdims)


def min(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    """Minimum over ``axis``; NaN propagates.

    Parameters
    ----------
    x : array
        Input array.
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions, so the result broadcasts against
        ``x``.
    out : array, optional
        NumPy's output array: the result is written to it and returned.
    initial : scalar, optional
        NumPy's starting value of the reduction (computed through the ufunc's ``reduce``).
    where : array_like of bool, optional
        NumPy's mask of the elements that take part (computed through the ufunc's
        ``reduce``; it needs ``initial``, as in NumPy).

    Returns
    -------
    array
        The minima, of ``x``'s dtype.

    Raises
    ------
    ValueError
        A zero-size reduction.
    IndexError
        An axis is out of range for ``x``.

    Examples
    --------
    >>> import clnp
    >>> int(clnp.min(clnp.asarray([[1, 5], [3, 2]])))
    1
    """
    return _minmax(x, "min", axis, keepdims)


def _float_input(x: Any, fname: str) -> Any:
    check_array(x, fname)
    if dkind(x.dtype) in "fc":
        return x
    if dkind(x.dtype) in "iub":
        return x.astype(x.device.default_float)
    raise TypeError(f"{fname} requires floating-point input; got {x.dtype}")


def _count(x: Any, axis: Any, fname: str) -> int:
    return math.prod(x.shape[a] for a in normalize_axes(axis, x.ndim, fname))


def mean(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    """Arithmetic mean over ``axis``.

    Parameters
    ----------
    x : array
        Input array.
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions, so the result broadcasts against
        ``x``.
    dtype : dtype, optional
        NumPy's dtype: ``x`` is cast to it first.
    out : array, optional
        NumPy's output array: the result is written to it and returned.
    where : array_like of bool, optional
        NumPy's mask: the mean of the selected elements.

    Returns
    -------
    array
        The means; NaN for an empty reduction. Integer input gives the default floating
        type (NumPy's promotion).

    Raises
    ------
    IndexError
        An axis is out of range for ``x``.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.mean(clnp.asarray([[1.0, 2.0], [3.0, 4.0]]), axis=0))
    [2. 3.]
    """
    x = _float_input(x, "mean")
    return _narrow(_mean(x, axis, keepdims), x.dtype)


def _mean(x: Any, axis: Any, keepdims: bool) -> Any:
    """The mean, in float32 for float16/bfloat16 ``x`` (NumPy's float16 mean computes in
    float32 and rounds once)."""
    from .elementwise import divide
    n = _count(x, axis, "mean")
    s = sum(x, axis=axis, keepdims=keepdims, dtype=dt.float32 if x.dtype in dt.HALF else None)
    return divide(s, float(n) if n else float("nan"))


def _narrow(r: Any, dtype: np.dtype) -> Any:
    """A float32 result of float16/bfloat16 input, rounded once to the input's dtype."""
    return r.astype(dtype) if r.dtype != dtype and dtype in dt.HALF else r


def _correction(correction: float, ddof: float | None, fname: str) -> float:
    """NumPy's ``ddof`` is the standard's ``correction`` under another name."""
    if ddof is None or (ddof == 0 and correction != 0.0):
        return correction     # (NumPy-signature calls pass ddof's default 0 along)
    if correction != 0.0:
        raise TypeError(f"{fname}(): got both 'ddof' and 'correction' (NumPy's and the "
                        f"standard's name for one argument); pass one")
    return ddof


def var(x: Any, /, *, axis: Any = None, correction: float = 0.0, keepdims: bool = False,
        ddof: float | None = None) -> Any:
    """Variance over ``axis``.

    Parameters
    ----------
    x : array
        Input array.
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    correction : float, default 0.0
        Degrees of freedom removed from the count.
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions, so the result broadcasts against
        ``x``.
    ddof : float, optional
        NumPy's name for ``correction``; give one of the two.
    dtype : dtype, optional
        NumPy's dtype: ``x`` is cast to it first.
    out : array, optional
        NumPy's output array: the result is written to it and returned.
    where : True
        Not supported: any other value raises TypeError (mask the input with ``clnp.where``).

    Returns
    -------
    array
        The variances, of a floating dtype (complex input: the variance of ``|x -
        mean|``).

    Raises
    ------
    IndexError
        An axis is out of range for ``x``.
    TypeError
        Both ``ddof`` and ``correction`` are given.

    Examples
    --------
    >>> import clnp
    >>> float(clnp.var(clnp.asarray([1.0, 2.0, 3.0, 4.0])))
    1.25
    """
    correction = _correction(correction, ddof, "var")
    x = _float_input(x, "var")
    return _narrow(_var(x, axis, correction, keepdims), x.dtype)


def _var(x: Any, axis: Any, correction: float, keepdims: bool) -> Any:
    """The variance, in float32 for float16/bfloat16 ``x``: deviations from the float32 mean
    are float32 (the input's loads widen), so are their squares and sums."""
    from .elementwise import divide, multiply, real, square, subtract, conj
    n = _count(x, axis, "var")
    m = _mean(x, axis, True)
    dev = subtract(x, m)
    sq = real(multiply(dev, conj(dev))) if dkind(x.dtype) == "c" else square(dev)
    s = sum(sq, axis=axis, keepdims=keepdims)
    denom = n - correction
    return divide(s, float(denom) if denom > 0 else float("nan")) if n else \
        divide(s, float("nan"))


def std(x: Any, /, *, axis: Any = None, correction: float = 0.0, keepdims: bool = False,
        ddof: float | None = None) -> Any:
    """Standard deviation over ``axis``: ``sqrt(var(x, axis, correction))``.

    Parameters
    ----------
    x : array
        Input array.
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    correction : float, default 0.0
        Degrees of freedom removed from the count.
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions, so the result broadcasts against
        ``x``.
    ddof : float, optional
        NumPy's name for ``correction``; give one of the two.
    dtype : dtype, optional
        NumPy's dtype: ``x`` is cast to it first.
    out : array, optional
        NumPy's output array: the result is written to it and returned.
    where : True
        Not supported: any other value raises TypeError (mask the input with ``clnp.where``).

    Returns
    -------
    array
        The standard deviations, of a floating dtype.

    Raises
    ------
    IndexError
        An axis is out of range for ``x``.
    TypeError
        Both ``ddof`` and ``correction`` are given.

    Examples
    --------
    >>> import clnp
    >>> float(clnp.std(clnp.asarray([1.0, 3.0])))
    1.0
    >>> float(clnp.std(clnp.asarray([1.0, 3.0, 5.0]), correction=1))
    2.0
    """
    from .elementwise import sqrt
    correction = _correction(correction, ddof, "std")
    x = _float_input(x, "std")
    return _narrow(sqrt(_var(x, axis, correction, keepdims)), x.dtype)


def _logical(x: Any, op: str, axis: Any, keepdims: bool) -> Any:
    check_array(x, op)
    return _reduce(x, op, axis, keepdims, dt.bool_, dt.bool_, op)


def all(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    """Whether every element along ``axis`` is true (non-zero).

    Parameters
    ----------
    x : array
        Input array.
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions, so the result broadcasts against
        ``x``.
    out : array, optional
        NumPy's output array: the result is written to it and returned.
    where : array_like of bool, optional
        NumPy's mask of the elements that take part (computed through the ufunc's ``reduce``).

    Returns
    -------
    array
        Boolean array; True for an empty reduction.

    Raises
    ------
    IndexError
        An axis is out of range for ``x``.

    Examples
    --------
    >>> import clnp
    >>> x = clnp.asarray([[True, False], [True, True]])
    >>> print(clnp.all(x, axis=0))
    [ True False]
    >>> bool(clnp.all(x))
    False
    """
    return _logical(x, "all", axis, keepdims)


def any(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    """Whether any element along ``axis`` is true (non-zero).

    Parameters
    ----------
    x : array
        Input array.
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions, so the result broadcasts against
        ``x``.
    out : array, optional
        NumPy's output array: the result is written to it and returned.
    where : array_like of bool, optional
        NumPy's mask of the elements that take part (computed through the ufunc's ``reduce``).

    Returns
    -------
    array
        Boolean array; False for an empty reduction.

    Raises
    ------
    IndexError
        An axis is out of range for ``x``.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.any(clnp.asarray([[0, 1], [0, 0]]), axis=1))
    [ True False]
    """
    return _logical(x, "any", axis, keepdims)
