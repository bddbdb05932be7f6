"""NumPy's creation functions beyond the standard: ``logspace``, ``geomspace``,
``identity``, ``tri``, ``copy``, ``asanyarray``, ``ascontiguousarray``.
"""
from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from .._core import dtypes as dt
from .._core.checks import is_array
from .._core.namespace import namespace as _xp
from .._array_api.creation import linspace_num
from .array_likes import _arr, _device_of, _host_scalar, _inexact
from .queries import shape

__all__ = ["logspace", "geomspace", "copy", "identity", "tri", "ascontiguousarray", "asanyarray"]


_PY = (bool, int, float, complex)


def _bounds_dtype(values: tuple[Any, ...], device: Any) -> Any:
    """NumPy's ``result_type(start, stop)`` made inexact: arrays and NumPy scalars keep
    their dtype, Python scalars are weak (NEP 50)."""
    strong = [v.dtype if is_array(v) else np.asarray(v).dtype
              for v in values if type(v) not in _PY]     # np.float64 is strong, not weak
    res = dt.as_dtype(strong[0])
    for d in strong[1:]:
        res = dt.promote(res, dt.as_dtype(d))
    for v in values:
        if type(v) in _PY:
            res = dt.promote(res, dt.weak_scalar_dtype(v, res))
    if res.kind in "biu":
        res = device.default_float
    if not device.supports(res):
        res = device.default_complex if res.kind == "c" else device.default_float
    return res


def linspace_arrays(start: Any, stop: Any, num: Any = 50, endpoint: bool = True,
                    retstep: bool = False, dtype: Any = None, axis: Any = 0, *,
                    device: Any = None) -> Any:
    """NumPy's ``linspace`` for bounds that are not both Python scalars: 0-d or n-d arrays
    (clnp or NumPy) and NumPy scalars, computed in their dtype and broadcast together (the
    samples run along ``axis``). Called by ``clnp.linspace`` for such bounds.

    Parameters
    ----------
    start, stop : array_like
        The bounds; arrays broadcast together.
    num : int, default 50
        Number of samples (a 0-d integer array is read).
    endpoint : bool, default True
        Include ``stop``.
    retstep : bool, default False
        Also return the step (an array of the bounds' broadcast shape).
    dtype : dtype, optional
        The result dtype (default: the bounds' dtype, made floating).
    axis : int, default 0
        Where the samples run in the result.
    device : Device, optional
        Where the result lives (default: the bounds' device).

    Returns
    -------
    array or (array, array)
        The samples, of shape ``(num,) + broadcast shape`` with the samples axis moved to
        ``axis``; and the step with ``retstep``.

    Raises
    ------
    ValueError
        ``num`` is negative.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.linspace(clnp.asarray([0.0, 1.0]), 2.0, 3))
    [[0.  1. ]
     [1.  1.5]
     [2.  2. ]]
    """
    xp = _xp()
    num = linspace_num(num)
    for v, name in ((start, "start"), (stop, "stop")):
        if not (is_array(v) or isinstance(v, (_PY, np.generic, np.ndarray, list, tuple))):
            raise TypeError(f"linspace: {name} must be a number or an array of numbers; got "
                            f"{type(v).__name__}")
    dev = device or _device_of(start, stop) or _xp().default_device()
    work = _bounds_dtype((start, stop), dev)
    s, e = (_arr(v, dev, dtype=work) for v in (start, stop))
    s, e = xp.broadcast_arrays(s, e)
    div = (num - 1) if endpoint else num
    delta = xp.subtract(e, s)
    y = xp.reshape(xp.arange(num, dtype=work, device=dev), (num,) + (1,) * delta.ndim)
    if div > 0:
        step = xp.divide(delta, div)
        # NumPy's special case for a step that underflows to zero (gh-5437), taken when any
        # slice has one: divide first, then scale (one value read back, as NumPy reads it)
        if bool(xp.any(xp.equal(step, 0))):
            y = xp.multiply(xp.divide(y, div), delta)
        else:
            y = xp.multiply(y, step)
    else:
        step = math.nan             # NumPy's undefined step: a Python NaN
        y = xp.multiply(y, delta)
    y = xp.add(y, s)
    if endpoint and num > 1:
        y[-1, ...] = e
    axis = operator.index(axis)
    if axis != 0:
        y = xp.moveaxis(y, 0, axis)
    if dtype is not None:
        d = dt.as_dtype(dtype)
        if d.kind in "iu":
            y = xp.floor(y)
        y = xp.astype(y, d)
    return (y, step) if retstep else y


def _linspace_any(start: Any, stop: Any, num: int, endpoint: bool, axis: int,
                  device: Any) -> Any:
    """NumPy's linspace for scalar or array bounds."""
    xp = _xp()
    if all(type(v) in _PY for v in (start, stop)):
        s, e = start, stop
        if isinstance(s, bool) or isinstance(e, bool):
            s, e = int(s), int(e)
        return xp.linspace(s, e, num, endpoint=endpoint, device=device)
    return linspace_arrays(start, stop, num, endpoint, axis=axis, device=device)


def logspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, base: Any = 10.0,
             dtype: Any = None, axis: int = 0, *, device: Any = None) -> Any:
    """``num`` samples evenly spaced on a log scale: ``base ** linspace(start, stop, num)``.

    Parameters
    ----------
    start : float or array_like
        ``base ** start`` is the first sample.
    stop : float or array_like
        ``base ** stop`` is the last sample (or the excluded end).
    num : int, default 50
        Number of samples.
    endpoint : bool, default True
        Include ``stop``.
    base : float, default 10.0
        The base of the log space.
    dtype : dtype, optional
        The result dtype.
    axis : int, default 0
        Where the samples run when ``start``/``stop`` are arrays.
    device : Device, optional
        Where the result lives (default: the default device).

    Returns
    -------
    array
        The samples.

    Raises
    ------
    ValueError
        ``num`` is negative.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.logspace(0, 3, 4))
    [   1.   10.  100. 1000.]
    """
    xp = _xp()
    y = _linspace_any(start, stop, num, endpoint, axis, device)
    if is_array(base) or np.ndim(base) > 0:
        b = _arr(base, y.device)
        b = xp.expand_dims(b, axis=axis) if b.ndim else b
        res = xp.pow(b, y)
    else:
        res = xp.pow(base.item() if isinstance(base, np.generic) else base, y)
    return res if dtype is None else xp.astype(res, dt.as_dtype(dtype))


def geomspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, dtype: Any = None,
              axis: int = 0, *, device: Any = None) -> Any:
    """``num`` samples evenly spaced on a log scale whose ends are exactly ``start`` and ``stop``.

    Parameters
    ----------
    start : float or array_like
        The first sample, non-zero. Arrays (clnp or NumPy) broadcast against ``stop``
        and give one progression per element, as in NumPy; a 0-d array is a number.
    stop : float or array_like
        The last sample, non-zero, of ``start``'s sign.
    num : int, default 50
        Number of samples.
    endpoint : bool, default True
        Include ``stop``.
    dtype : dtype, optional
        The result dtype.
    axis : int, default 0
        The sample axis.
    device : Device, optional
        Where the result lives (default: the default device).

    Returns
    -------
    array
        The samples (a geometric progression).

    Raises
    ------
    ValueError
        A zero bound.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.geomspace(1, 1000, 4))
    [   1.   10.  100. 1000.]
    >>> print(clnp.geomspace(clnp.asarray([1.0, 10.0]), clnp.asarray([100.0, 1000.0]), 3,
    ...                      axis=1))
    [[   1.   10.  100.]
     [  10.  100. 1000.]]
    """
    xp = _xp()
    start, stop = _host_scalar(start), _host_scalar(stop)   # a 0-d bound is a number
    if any(is_array(v) or np.ndim(v) != 0 for v in (start, stop)):
        return _geomspace_arrays(start, stop, num, endpoint, dtype, axis, device)
    vals = []
    for v, name in ((start, "start"), (stop, "stop")):
        v = v.item() if isinstance(v, np.generic) else v
        if isinstance(v, complex):
            raise TypeError("geomspace: complex bounds are not supported by clnp")
        vals.append(float(v))
    s, e = vals
    if s == 0 or e == 0:
        raise ValueError("Geometric sequence cannot include zero")
    sign = math.copysign(1.0, s)
    s, e = s / sign, e / sign
    log_s = math.log10(s)
    log_e = math.log10(e) if e > 0 else math.nan
    res = logspace(log_s, log_e, num, endpoint=endpoint, base=10.0, device=device)
    if num > 0:
        res[0] = s
        if num > 1 and endpoint:
            res[-1] = e
    if sign < 0:
        res = -res
    if axis not in (0, -1):
        raise ValueError(f"geomspace: axis {axis} is out of bounds for the 1-D result")
    return res if dtype is None else xp.astype(res, dt.as_dtype(dtype))


def _geomspace_arrays(start: Any, stop: Any, num: int, endpoint: bool, dtype: Any,
                      axis: Any, device: Any) -> Any:
    """NumPy's geomspace for array bounds, on the device: in float64 (NumPy's
    ``result_type(start, stop, float(num), zeros((), dtype))``), start rotated to positive,
    the ends set exactly, the samples along ``axis``."""
    xp = _xp()
    dev = device or _device_of(start, stop) or xp.default_device()
    s, e = _arr(start, dev), _arr(stop, dev)
    d = dt.promote(dt.promote(s.dtype, e.dtype),
                   dev.default_float if dtype is None else dt.as_dtype(dtype))
    if d.kind in "biu":         # NumPy's float(num) in the result_type makes it floating
        d = dev.default_float
    if d.kind == "c":
        raise TypeError("geomspace: complex bounds are not supported by clnp")
    s, e = xp.astype(s, d), xp.astype(e, d)
    if bool(xp.any(xp.equal(s, 0))) or bool(xp.any(xp.equal(e, 0))):
        raise ValueError("Geometric sequence cannot include zero")
    sign = xp.sign(s)
    s, e = xp.divide(s, sign), xp.divide(e, sign)
    res = logspace(xp.log10(s), xp.log10(e), num, endpoint=endpoint, base=10.0, dtype=d,
                   device=dev)
    if num > 0:         # exp(log(x)) need not be x: the ends are the bounds themselves
        s, e = xp.broadcast_arrays(s, e)
        res[0, ...] = s
        if num > 1 and endpoint:
            res[-1, ...] = e
    res = xp.multiply(res, sign)
    axis = operator.index(axis)
    if axis != 0:
        res = xp.moveaxis(res, 0, axis)
    return res if dtype is None else xp.astype(res, dt.as_dtype(dtype))


def identity(n: int, dtype: Any = None, *, device: Any = None) -> Any:
    """The ``n x n`` identity matrix (``numpy.identity``).

    Parameters
    ----------
    n : int
        Size.
    dtype : dtype, optional
        The dtype (default: the default float).
    device : Device, optional
        Where the result lives (default: the default device).

    Returns
    -------
    array
        The identity.

    Raises
    ------
    ValueError
        A negative ``n``.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.identity(2, dtype=clnp.int32))
    [[1 0]
     [0 1]]
    """
    return _xp().eye(operator.index(n), dtype=dtype, device=device)


def tri(N: int, M: int | None = None, k: int = 0, dtype: Any = float, *,
        device: Any = None) -> Any:
    """An ``N x M`` array with ones at and below the ``k``-th diagonal (``numpy.tri``).

    Parameters
    ----------
    N : int
        Rows.
    M : int, optional
        Columns (default: ``N``).
    k : int, default 0
        The diagonal.
    dtype : dtype, default float
        The dtype.
    device : Device, optional
        Where the result lives (default: the default device).

    Returns
    -------
    array
        Ones at and below the diagonal, zeros elsewhere.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.tri(2, 3, dtype=clnp.int32))
    [[1 0 0]
     [1 1 0]]
    """
    xp = _xp()
    N = operator.index(N)
    M = N if M is None else operator.index(M)
    k = operator.index(k)
    from .._array_api.creation import _device
    dev = _device(device)
    d = dev.default_float if dtype is float or dtype is None else dt.as_dtype(dtype)
    i = xp.reshape(xp.arange(N, device=dev), (N, 1))
    j = xp.reshape(xp.arange(M, device=dev), (1, M))
    return xp.astype(xp.greater_equal(i + k, j), d)


def copy(a: Any, order: str = "K", subok: bool = False) -> Any:
    """A new array with a copy of the data of ``a`` (``numpy.copy``).

    Parameters
    ----------
    a : array_like
        Input array.
    order : str, default 'K'
        Accepted for NumPy compatibility (copies are C-ordered).
    subok : bool, default False
        Accepted for NumPy compatibility.

    Returns
    -------
    array
        The copy.

    Examples
    --------
    >>> import clnp
    >>> a = clnp.asarray([1, 2])
    >>> b = clnp.copy(a)
    >>> b[0] = 9
    >>> a.tolist()
    [1, 2]
    """
    if is_array(a):
        return _xp().asarray(a, copy=True)
    return _arr(a)


def asanyarray(a: Any, dtype: Any = None, order: Any = None, *, device: Any = None,
               copy: bool | None = None, like: Any = None) -> Any:
    """``a`` as a clnp array (``numpy.asanyarray``; clnp has no array subclasses).

    Parameters
    ----------
    a : array_like
        Input array.
    dtype : dtype, optional
        The dtype.
    order : str, optional
        Accepted for NumPy compatibility.
    device : Device, optional
        Where the result lives (default: the default device).
    copy : bool, optional
        As for :func:`asarray`.
    like : object, optional
        Accepted for NumPy compatibility.

    Returns
    -------
    array
        As :func:`asarray` returns it.

    Raises
    ------
    ValueError
        Ragged sequences.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.asanyarray([1, 2]))
    [1 2]
    """
    return _xp().asarray(a, dtype=dtype, device=device, copy=copy)


def ascontiguousarray(a: Any, dtype: Any = None, *, like: Any = None) -> Any:
    """``a`` as a C-contiguous clnp array of at least one dimension (``numpy.ascontiguousarray``).

    Parameters
    ----------
    a : array_like
        Input array.
    dtype : dtype, optional
        The dtype.
    like : object, optional
        Accepted for NumPy compatibility.

    Returns
    -------
    array
        ``a`` itself when it is already contiguous and of the dtype, else a copy.

    Examples
    --------
    >>> import clnp
    >>> x = clnp.ones((2, 3)).T
    >>> clnp.ascontiguousarray(x).is_contiguous
    True
    """
    xp = _xp()
    x = _arr(a, dtype=dtype)
    if x.ndim == 0:
        return xp.reshape(x, (1,))
    if getattr(x, "is_contiguous", True):
        return x
    return xp.reshape(x, x.shape, copy=True)
