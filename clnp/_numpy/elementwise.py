"""NumPy's elementwise functions composed from the table's ops (made ufuncs by
``clnp._array_api.ufunc.install_composites``): ``fmax``, ``fmin``, ``fmod``, ``exp2``,
``rint``, ``fabs``, ``degrees``, ``radians``, ``heaviside``, ``float_power``,
``logaddexp2`` and ``divmod``.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._core import dtypes as dt
from .._core.checks import is_array
from .._core.dtypes import kind as dkind
from .._core.namespace import namespace as _xp
from .array_likes import _arr, _default_float, _device_of, _inexact
from .queries import iscomplexobj

__all__ = ["fmax", "fmin", "fmod", "exp2", "rint", "fabs", "degrees", "radians", "deg2rad",
           "rad2deg", "heaviside", "float_power", "logaddexp2", "divmod"]


def _nan_ignoring(x1: Any, x2: Any, op: str) -> Any:
    xp = _xp()
    m = getattr(xp, op)(x1, x2)
    if dkind(m.dtype) != "f":
        return m
    # both operands in the result's float dtype: a bool or integer operand (NumPy promotes
    # it against a float scalar) has no NaN, and isnan refuses booleans
    a, b = (xp.astype(v, m.dtype) if is_array(v) and v.dtype != m.dtype else
            v if is_array(v) else _arr(v, m.device, m.dtype) for v in (x1, x2))
    return xp.where(xp.isnan(b), a, xp.where(xp.isnan(a), b, m))


def fmax(x1: Any, x2: Any, /) -> Any:
    """Elementwise maximum that ignores NaN: NaN only when both are NaN (``numpy.fmax``)."""
    return _nan_ignoring(x1, x2, "maximum")


def fmin(x1: Any, x2: Any, /) -> Any:
    """Elementwise minimum that ignores NaN (``numpy.fmin``)."""
    return _nan_ignoring(x1, x2, "minimum")


def fmod(x1: Any, x2: Any, /) -> Any:
    """Remainder of division with the sign of the dividend, C's ``fmod``
    (``numpy.fmod``)."""
    xp = _xp()
    dev = _device_of(x1, x2)
    a, b = (v if isinstance(v, (int, float)) else _arr(v, dev) for v in (x1, x2))
    r = xp.remainder(xp.abs(a) if is_array(a) else abs(a), xp.abs(b) if is_array(b) else abs(b))
    if dkind(r.dtype) == "f":
        return xp.copysign(r, xp.astype(a, r.dtype) if is_array(a) else float(a))
    return xp.where(xp.less(a, 0), xp.negative(r), r)


def exp2(x: Any, /) -> Any:
    """``2 ** x`` elementwise (``numpy.exp2``); integers compute in the default float."""
    xp = _xp()
    return xp.pow(2.0, _inexact(_arr(x)))


def rint(x: Any, /) -> Any:
    """Round to the nearest integer, ties to even (``numpy.rint``)."""
    xp = _xp()
    x = _arr(x)
    return xp.round(x if dkind(x.dtype) in "fc" else _inexact(x))


def fabs(x: Any, /) -> Any:
    """Absolute value of real input as floating point (``numpy.fabs``)."""
    x = _arr(x)
    if dkind(x.dtype) == "c":
        raise TypeError("fabs: complex input is not supported (use abs)")
    return _xp().abs(_inexact(x))


def degrees(x: Any, /) -> Any:
    """Radians to degrees (``numpy.degrees``)."""
    return _inexact(_arr(x)) * (180.0 / math.pi)


def radians(x: Any, /) -> Any:
    """Degrees to radians (``numpy.radians``)."""
    return _inexact(_arr(x)) * (math.pi / 180.0)


rad2deg = degrees
deg2rad = radians


def heaviside(x1: Any, x2: Any, /) -> Any:
    """Heaviside step: 0 for ``x1 < 0``, ``x2`` at 0, 1 for ``x1 > 0``, NaN for NaN
    (``numpy.heaviside``); integers compute in the default float."""
    xp = _xp()
    x = _inexact(_arr(x1, _device_of(x2)))
    d = x.dtype
    if is_array(x2) or isinstance(x2, (np.ndarray, np.generic)):
        h0 = _inexact(_arr(x2, x.device))
        d = dt.promote(d, h0.dtype)
    else:
        h0 = x2
    zero = xp.zeros((), dtype=d, device=x.device)
    h = xp.where(xp.less(x, 0), zero, xp.where(xp.greater(x, 0), zero + 1, h0))
    return xp.where(xp.isnan(x), math.nan, h)


def float_power(x1: Any, x2: Any, /) -> Any:
    """``x1 ** x2`` in double (or complex double) precision (``numpy.float_power``)."""
    xp = _xp()
    dev = _device_of(x1, x2)
    c = any(iscomplexobj(v) if is_array(v) else isinstance(v, complex) for v in (x1, x2))
    d = (dev or xp.default_device()).default_complex if c else _default_float(dev)
    a = _arr(x1, dev, d) if is_array(x1) or not isinstance(x1, (int, float, complex)) else x1
    b = _arr(x2, dev, d) if is_array(x2) or not isinstance(x2, (int, float, complex)) else x2
    if not is_array(a) and not is_array(b):
        a = _arr(a, dev, d)
    return xp.pow(a, b)


def logaddexp2(x1: Any, x2: Any, /) -> Any:
    """``log2(2**x1 + 2**x2)`` without overflow (``numpy.logaddexp2``).

    NumPy's algorithm: ``max + log2(1 + 2**-|x1 - x2|)``, exactly ``x1 + 1`` where
    ``x1 == x2``. (Through ``logaddexp`` of ``x * ln 2`` the rounding of the scaled inputs
    cost up to 128 ulp where the result is near 0; ``tools/ulp.py`` measures it.)
    """
    xp = _xp()
    a = _inexact(x1) if is_array(x1) else x1
    b = _inexact(x2) if is_array(x2) else x2
    if not is_array(a) and not is_array(b):
        a = _inexact(_arr(a))
    half = xp.result_type(a, b) == dt.float16
    if half:       # as NumPy: in float, rounded once (float16 steps would cancel badly)
        a, b = (xp.astype(v, dt.float32) if is_array(v) else v for v in (a, b))
    d = xp.negative(xp.abs(xp.subtract(a, b)))
    r = xp.add(xp.maximum(a, b), xp.multiply(xp.log1p(xp.exp2(d)), 1.0 / math.log(2.0)))
    r = xp.where(xp.equal(a, b), xp.add(a, 1.0), r)
    return xp.astype(r, dt.float16) if half else r


def divmod(x1: Any, x2: Any, /) -> tuple[Any, Any]:
    """``(floor_divide(x1, x2), remainder(x1, x2))`` (``numpy.divmod``).

    Parameters
    ----------
    x1 : array
        Dividend.
    x2 : array
        Divisor.

    Returns
    -------
    tuple of array
        The quotients and remainders.

    Raises
    ------
    TypeError
        Neither argument is an array.

    Examples
    --------
    >>> import clnp
    >>> q, r = clnp.divmod(clnp.asarray([7, -7]), 3)
    >>> print(q, r)
    [ 2 -3] [1 2]
    """
    xp = _xp()
    return xp.floor_divide(x1, x2), xp.remainder(x1, x2)
