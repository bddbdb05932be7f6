"""NumPy's whole-array comparisons: ``isclose``, ``allclose`` and ``array_equal``.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._core import dtypes as dt
from .._core.checks import is_array
from .._core.dtypes import kind as dkind
from .._core.namespace import namespace as _xp
from .array_likes import _arr, _device_of

__all__ = ["allclose", "isclose", "array_equal"]


def isclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Any:
    """Elementwise ``|a - b| <= atol + rtol * |b|`` (``numpy.isclose``).

    Parameters
    ----------
    a, b : array_like
        The arrays to compare (they broadcast).
    rtol : float, default 1e-05
        Relative tolerance.
    atol : float, default 1e-08
        Absolute tolerance.
    equal_nan : bool, default False
        NaNs compare equal.

    Returns
    -------
    array
        Booleans; infinities are close only to themselves, NaN to nothing unless
        ``equal_nan``.

    Raises
    ------
    ValueError
        Shapes that do not broadcast.

    Examples
    --------
    >>> import clnp
    >>> a = clnp.asarray([1.0, float("nan")])
    >>> print(clnp.isclose(a, a + 1e-9, equal_nan=True))
    [ True  True]
    """
    xp = _xp()
    dev = _device_of(a, b)
    x = a if isinstance(a, (int, float, complex)) and not isinstance(a, bool) else \
        _arr(a, dev)
    y = b if isinstance(b, (int, float, complex)) and not isinstance(b, bool) else \
        _arr(b, dev)
    if not is_array(x) and not is_array(y):
        x = _arr(x, dev)
    if is_array(y):
        if dkind(y.dtype) not in "fc":
            y = xp.astype(y, y.device.default_float)
    elif isinstance(y, int):
        y = float(y)
    from .._array_api.elementwise import _check_operands
    _check_operands("isclose", [x, y])          # shapes and devices before any kernel
    for t, name in ((rtol, "rtol"), (atol, "atol")):
        if is_array(t) or np.ndim(t):
            raise TypeError(f"isclose: {name} must be a scalar in clnp")
    rtol = float(rtol)
    atol = float(atol)
    ay = xp.abs(y) if is_array(y) else abs(y)
    tol = xp.add(xp.multiply(ay, rtol), atol) if is_array(ay) else atol + rtol * ay
    fin = xp.isfinite(y) if is_array(y) else math.isfinite(abs(y))
    res = xp.logical_or(xp.logical_and(xp.less_equal(xp.abs(xp.subtract(x, y)), tol), fin),
                        xp.equal(x, y))
    if equal_nan:
        nx = xp.isnan(x) if is_array(x) else bool(np.isnan(x))
        ny = xp.isnan(y) if is_array(y) else bool(np.isnan(y))
        res = xp.logical_or(res, xp.logical_and(nx, ny) if is_array(nx) or is_array(ny)
                            else bool(nx and ny))
    return res


def allclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """Whether every element pair is close (``numpy.allclose``).

    Parameters
    ----------
    a, b : array_like
        The arrays to compare (they broadcast).
    rtol : float, default 1e-05
        Relative tolerance.
    atol : float, default 1e-08
        Absolute tolerance.
    equal_nan : bool, default False
        NaNs compare equal.

    Returns
    -------
    bool
        A Python bool (one value read back from the device).

    Raises
    ------
    ValueError
        Shapes that do not broadcast.

    Examples
    --------
    >>> import clnp
    >>> clnp.allclose(clnp.asarray([1.0, 2.0]), clnp.asarray([1.0, 2.0 + 1e-9]))
    True
    """
    return bool(_xp().all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)))


def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> bool:
    """Whether the arrays have the same shape and elements (``numpy.array_equal``).

    Parameters
    ----------
    a1, a2 : array_like
        The arrays.
    equal_nan : bool, default False
        NaNs compare equal.

    Returns
    -------
    bool
        A Python bool.

    Examples
    --------
    >>> import clnp
    >>> a = clnp.asarray([1, 2])
    >>> clnp.array_equal(a, clnp.asarray([1, 2])), clnp.array_equal(a, clnp.asarray([1]))
    (True, False)
    """
    xp = _xp()
    dev = _device_of(a1, a2)
    try:
        x, y = _arr(a1, dev), _arr(a2, dev)
    except (TypeError, ValueError):
        return False
    if tuple(x.shape) != tuple(y.shape):
        return False
    eq = xp.equal(x, y)
    if equal_nan and (dkind(x.dtype) in "fc" or dkind(y.dtype) in "fc"):
        nx = xp.isnan(x) if dkind(x.dtype) in "fc" else xp.zeros(x.shape, dtype=dt.bool_,
                                                               device=x.device)
        ny = xp.isnan(y) if dkind(y.dtype) in "fc" else xp.zeros(y.shape, dtype=dt.bool_,
                                                               device=y.device)
        if not bool(xp.all(xp.equal(nx, ny))):
            return False
        eq = xp.logical_or(eq, nx)
    return bool(xp.all(eq))
