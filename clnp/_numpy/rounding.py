"""NumPy's rounding and cleaning functions: ``around``, ``fix``, ``real_if_close`` and
``nan_to_num``.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .._core import dtypes as dt
from .._core.checks import is_array
from .._core.dtypes import kind as dkind
from .._core.namespace import namespace as _xp
from .array_likes import _arr, _finish
from .creation import copy

__all__ = ["around", "round_", "fix", "real_if_close", "nan_to_num"]


def around(a: Any, decimals: int = 0, out: Any = None) -> Any:
    """Round to ``decimals`` decimal places, ties to even (``numpy.around``, ``numpy.round``).

    Parameters
    ----------
    a : array_like
        Input array.
    decimals : int, default 0
        Decimal places (negative: to tens, hundreds...).
    out : array, optional
        A clnp array that receives the result.

    Returns
    -------
    array
        ``rint(a * 10**decimals) / 10**decimals`` in double precision, as NumPy computes
        it; integers are returned unchanged for ``decimals >= 0``.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.around(clnp.asarray([0.5, 1.5, 2.675]), 2))
    [0.5  1.5  2.68]
    >>> print(clnp.around(clnp.asarray([0.5, 1.5, 2.5])))
    [0. 2. 2.]
    """
    xp = _xp()
    x = _arr(a)
    decimals = operator.index(decimals)
    if dkind(x.dtype) == "b":
        raise TypeError("around: boolean input is not supported")
    if decimals == 0 and dkind(x.dtype) in "fc":
        return _finish(xp.round(x), out, "around")
    if dkind(x.dtype) in "iu":
        if decimals >= 0:
            return _finish(xp.asarray(x, copy=True), out, "around")
        work = x.device.default_float
    else:
        work = x.dtype
    wide = dt.promote(work, x.device.default_complex if work.kind == "c"
                      else x.device.default_float)
    f = float(10.0 ** abs(decimals))
    y = xp.astype(x, wide)
    y = xp.astype(y * f if decimals >= 0 else y / f, work)
    y = xp.round(y)
    y = xp.astype(y, wide)
    y = xp.astype(y / f if decimals >= 0 else y * f, work)
    if dkind(x.dtype) in "iu":
        y = xp.astype(y, x.dtype)
    return _finish(y, out, "around")


round_ = around


def fix(x: Any, out: Any = None) -> Any:
    """Round toward zero (``numpy.fix``).

    Parameters
    ----------
    x : array_like
        Input array.
    out : array, optional
        A clnp array that receives the result.

    Returns
    -------
    array
        The rounded values, of ``x``'s dtype.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.fix(clnp.asarray([-1.5, 1.5])))
    [-1.  1.]
    """
    return _finish(_xp().trunc(_arr(x)), out, "fix")


def real_if_close(a: Any, tol: float = 100) -> Any:
    """The real part when every imaginary part is within ``tol`` epsilons of zero.

    Parameters
    ----------
    a : array_like
        Input array.
    tol : float, default 100
        Tolerance in machine epsilons of the dtype.

    Returns
    -------
    array
        The real part, or ``a`` unchanged.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.real_if_close(clnp.asarray([2.0 + 0j, 1.0 + 0j])))
    [2. 1.]
    """
    xp = _xp()
    x = _arr(a)
    if dkind(x.dtype) != "c":
        return x
    if tol > 1:
        tol = float(dt.finfo(x.dtype).eps) * tol
    if bool(xp.all(xp.less(xp.abs(xp.imag(x)), tol))):
        return xp.real(x)
    return x


def nan_to_num(x: Any, copy: bool = True, nan: float = 0.0, posinf: Any = None,
               neginf: Any = None) -> Any:
    """Replace NaN and infinities by finite numbers (``numpy.nan_to_num``).

    Parameters
    ----------
    x : array_like
        Input array (complex: per component).
    copy : bool, default True
        False writes into a clnp ``x``.
    nan : float or array_like, default 0.0
        The value for NaN: a scalar, or an array (clnp or NumPy, 0-d or broadcasting to
        ``x``'s shape) taking the values elementwise; cast to ``x``'s dtype, as in NumPy.
    posinf : float or array_like, optional
        For +inf (default: the largest finite value).
    neginf : float or array_like, optional
        For -inf (default: the most negative finite value).

    Returns
    -------
    array
        The replaced array.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.nan_to_num(clnp.asarray([float("nan"), float("inf"), 1.0]), posinf=9.0))
    [0. 9. 1.]
    >>> x = clnp.asarray([float("nan"), float("nan")], dtype=clnp.float32)
    >>> print(clnp.nan_to_num(x, nan=clnp.asarray([1.0, 2.0])))
    [1. 2.]
    """
    xp = _xp()
    arr = _arr(x)
    if dkind(arr.dtype) not in "fc":
        return xp.asarray(arr, copy=True) if copy and arr is x else arr
    rdt = np.dtype(dt.finfo(arr.dtype).dtype)
    maxf = float(dt.finfo(rdt).max) if posinf is None else posinf
    minf = float(dt.finfo(rdt).min) if neginf is None else neginf

    def value(v: Any, name: str) -> Any:
        # NumPy copies the value into x (copyto): x's dtype wins over the value's, and an
        # array value broadcasts to x's shape (it cannot widen the result)
        if isinstance(v, np.generic):
            return v.item()
        if not (is_array(v) or isinstance(v, (np.ndarray, list, tuple))):
            return v
        h = _arr(v, arr.device)
        try:
            xp.broadcast_to(h, arr.shape)
        except ValueError:
            raise ValueError(f"nan_to_num: {name} of shape {tuple(h.shape)} does not "
                             f"broadcast to x's shape {tuple(arr.shape)}") from None
        return xp.astype(h, rdt) if h.dtype != rdt else h

    nan, maxf, minf = value(nan, "nan"), value(maxf, "posinf"), value(minf, "neginf")

    def fix_real(d: Any) -> Any:
        # the masks come from the input, as NumPy's do: a replacement that is itself
        # infinite (nan=inf) is not replaced again
        pos = xp.logical_and(xp.isinf(d), xp.greater(d, 0))
        neg = xp.logical_and(xp.isinf(d), xp.less(d, 0))
        d2 = xp.where(xp.isnan(d), nan, d)
        d2 = xp.where(pos, maxf, d2)
        return xp.where(neg, minf, d2)

    if dkind(arr.dtype) == "c":
        res = xp.add(fix_real(xp.real(arr)), xp.multiply(fix_real(xp.imag(arr)), 1j))
        res = xp.astype(res, arr.dtype)
    else:
        res = fix_real(arr)
    if not copy and arr is x:
        x[...] = res
        return x
    return res
