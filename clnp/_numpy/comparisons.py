"""NumPy's whole-array comparisons: ``isclose``, ``allclose`` and ``array_equal``.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._core import dtypes as dt
from .._core.checks import is_array, result_dtype_of
from .._core.dtypes import kind as dkind
from .._core.namespace import namespace as _xp
from .array_likes import _arr, _device_of

__all__ = ["allclose", "isclose", "array_equal"]


_PY_NUMBERS = (int, float, complex)      # bool is an int: NumPy keeps all four as Python
_PY_TYPES = (bool, int, float, complex)  # exactly these: np.float64 is a float, but strong


def isclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08,
            equal_nan: bool = False) -> Any:
    """Elementwise ``|a - b| <= atol + rtol * |b|`` (``numpy.isclose``).

    Parameters
    ----------
    a, b : array_like
        The arrays to compare (they broadcast).
    rtol : array_like, default 1e-05
        Relative tolerance: a Python or NumPy scalar, or a clnp or NumPy array (0-d or
        n-d) that broadcasts against ``a`` and ``b``, as in NumPy.
    atol : array_like, default 1e-08
        Absolute tolerance, taking the same forms as ``rtol``.
    equal_nan : bool, default False
        NaNs compare equal.

    Returns
    -------
    array
        Booleans of the shape ``a``, ``b``, ``rtol`` and ``atol`` broadcast to; infinities
        are close only to themselves, NaN to nothing unless ``equal_nan``.

    Raises
    ------
    ValueError
        Shapes that do not broadcast (naming the tolerance when it is the one that does
        not), or operands on different devices.
    TypeError
        A tolerance that is not a number or an array of numbers.

    Notes
    -----
    NumPy warns when a tolerance is not finite; clnp does not (device arithmetic never
    warns, see ``clnp.seterr``), and the result is NumPy's.

    Examples
    --------
    >>> import clnp
    >>> a = clnp.asarray([1.0, float("nan")])
    >>> print(clnp.isclose(a, a + 1e-9, equal_nan=True))
    [ True  True]
    >>> print(clnp.isclose(clnp.asarray([1.0, 2.0]), clnp.asarray([1.1, 2.1]),
    ...                    atol=clnp.asarray([0.2, 0.05])))
    [ True False]
    """
    return _isclose("isclose", a, b, rtol, atol, equal_nan)


def _isclose(fname: str, a: Any, b: Any, rtol: Any, atol: Any, equal_nan: bool) -> Any:
    """NumPy's isclose expression, on behalf of ``fname`` (its errors name it)."""
    xp = _xp()
    dev = _device_of(a, b, rtol, atol)
    x = a if isinstance(a, _PY_NUMBERS) and not isinstance(a, bool) else _arr(a, dev)
    y = b if isinstance(b, _PY_NUMBERS) and not isinstance(b, bool) else _arr(b, dev)
    if not is_array(x) and not is_array(y):
        x = _arr(x, dev)
    if is_array(y):
        if dkind(y.dtype) not in "fc":
            y = xp.astype(y, y.device.default_float)
    elif isinstance(y, int):
        y = float(y)
    from .._array_api.elementwise import _check_operands
    _check_operands(fname, [x, y])          # shapes and devices before any kernel
    # the dtype NumPy compares in when the tolerances are weak Python scalars
    work = result_dtype_of([x, y], fname)
    rtol = _tolerance(fname, "rtol", rtol, work, dev)
    atol = _tolerance(fname, "atol", atol, work, dev)
    _check_tolerance_shapes(fname, x, y, rtol, atol)
    ay = xp.abs(y) if is_array(y) else abs(y)
    # NumPy's order of operations, atol + rtol * |b|: a wider tolerance dtype widens the sum
    # as it does in NumPy, so the comparison rounds as NumPy's does
    scaled = xp.multiply(rtol, ay) if is_array(rtol) or is_array(ay) else rtol * ay
    tol = xp.add(atol, scaled) if is_array(atol) or is_array(scaled) else atol + scaled
    fin = xp.isfinite(y) if is_array(y) else math.isfinite(abs(y))
    res = xp.logical_or(xp.logical_and(xp.less_equal(xp.abs(xp.subtract(x, y)), tol), fin),
                        xp.equal(x, y))
    if equal_nan:
        nx = xp.isnan(x) if is_array(x) else bool(np.isnan(x))
        ny = xp.isnan(y) if is_array(y) else bool(np.isnan(y))
        res = xp.logical_or(res, xp.logical_and(nx, ny) if is_array(nx) or is_array(ny)
                            else bool(nx and ny))
    return res


def _tolerance(fname: str, name: str, t: Any, work: np.dtype, dev: Any) -> Any:
    """``rtol``/``atol`` as a Python number (no kernel, no upload) where that computes what
    NumPy does, else as a NumPy scalar or a clnp array on the operands' device.

    A Python number stays one (NumPy keeps it weak). A NumPy scalar or 0-d array is strong
    in NumPy 2: it matters only where its dtype is wider than the comparison's (a float64
    ``atol`` with float32 operands compares in float64), so it becomes a Python number
    unless it would widen, and stays a NumPy scalar (strong in clnp's arithmetic too) when
    it does. Arrays of any other shape broadcast against the operands on the device.
    """
    if type(t) in _PY_TYPES:
        return t
    if is_array(t):
        if dkind(t.dtype) not in "biufc":
            raise TypeError(f"{fname}: {name} must be numeric; got an array of dtype "
                            f"{t.dtype}")
        if dev is not None and t.device is not dev:
            raise ValueError(f"{fname}: {name} is on {t.device} but the arrays compared "
                             f"are on {dev}; move it with to_device()")
        return t
    if isinstance(t, (np.generic, np.ndarray, list, tuple)):
        h = np.asarray(t)
        if h.dtype.kind not in "biufc":
            raise TypeError(f"{fname}: {name} must be a number or an array of numbers; got "
                            f"{type(t).__name__} of dtype {h.dtype}")
        if h.ndim == 0:
            # the exact value as a Python number where the comparison's dtype holds it;
            # else the NumPy scalar, which clnp's arithmetic takes as strong, as NumPy does
            # (no upload either way)
            return h[()] if _widens(h.dtype, work) else h.item()
        return _arr(h, dev)
    raise TypeError(f"{fname}: {name} must be a number or an array of numbers; got "
                    f"{type(t).__name__}")


def _widens(d: np.dtype, work: np.dtype) -> bool:
    try:
        return dt.promote(d, work) != work
    except TypeError:
        return True             # no rule: the device arithmetic says what it says


def _check_tolerance_shapes(fname: str, x: Any, y: Any, rtol: Any, atol: Any) -> None:
    """An array tolerance must broadcast against the compared arrays: say which one does
    not (before any kernel)."""
    from .._core.eager import broadcast_shapes
    shape = broadcast_shapes(*(tuple(v.shape) for v in (x, y) if is_array(v)))
    for name, t in (("rtol", rtol), ("atol", atol)):
        if is_array(t):
            try:
                shape = broadcast_shapes(shape, tuple(t.shape))
            except ValueError:
                raise ValueError(f"{fname}: {name} of shape {tuple(t.shape)} does not "
                                 f"broadcast against the arrays compared (shape "
                                 f"{shape})") from None


def allclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08,
             equal_nan: bool = False) -> bool:
    """Whether every element pair is close (``numpy.allclose``).

    Parameters
    ----------
    a, b : array_like
        The arrays to compare (they broadcast).
    rtol : array_like, default 1e-05
        Relative tolerance: a Python or NumPy scalar, or a clnp or NumPy array (0-d or
        n-d) that broadcasts against ``a`` and ``b``.
    atol : array_like, default 1e-08
        Absolute tolerance, taking the same forms as ``rtol``.
    equal_nan : bool, default False
        NaNs compare equal.

    Returns
    -------
    bool
        A Python bool (one value read back from the device).

    Raises
    ------
    ValueError
        Shapes that do not broadcast, or operands on different devices.
    TypeError
        A tolerance that is not a number or an array of numbers.

    Examples
    --------
    >>> import clnp
    >>> clnp.allclose(clnp.asarray([1.0, 2.0]), clnp.asarray([1.0, 2.0 + 1e-9]))
    True
    >>> clnp.allclose(clnp.asarray([1.0, 2.0]), clnp.asarray([1.1, 2.0]),
    ...               atol=clnp.asarray(0.2))
    True
    """
    return bool(_xp().all(_isclose("allclose", a, b, rtol, atol, equal_nan)))


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
