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
from .array_likes import _arr, _device_of, _inexact
from .queries import shape

__all__ = ["logspace", "geomspace", "copy", "identity", "tri", "ascontiguousarray", "asanyarray"]


def _linspace_any(start: Any, stop: Any, num: int, endpoint: bool, axis: int,
                  device: Any) -> Any:
    """NumPy's linspace for scalar or array bounds (in the default float type)."""
    xp = _xp()
    scalar = all(not is_array(v) and np.ndim(v) == 0 for v in (start, stop))
    if scalar:
        s = start.item() if isinstance(start, np.generic) else start
        e = stop.item() if isinstance(stop, np.generic) else stop
        if isinstance(s, bool) or isinstance(e, bool):
            s, e = int(s), int(e)
        return xp.linspace(s, e, num, endpoint=endpoint, device=device)
    device = device or _device_of(start, stop)
    s, e = _inexact(_arr(start, device)), _inexact(_arr(stop, device))
    s, e = xp.broadcast_arrays(s, e)
    div = (num - 1) if endpoint else num
    shape = (num,) + (1,) * s.ndim
    t = xp.reshape(xp.arange(num, dtype=s.dtype, device=s.device), shape)
    step = (e - s) / div if div > 0 else (e - s) * 0.0
    y = t * step + s
    if endpoint and num > 1:
        y[-1, ...] = e
    return xp.moveaxis(y, 0, axis) if axis != 0 else y


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
    start : float
        The first sample, non-zero.
    stop : float
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
    """
    xp = _xp()
    vals = []
    for v, name in ((start, "start"), (stop, "stop")):
        if is_array(v) or np.ndim(v) != 0:
            raise TypeError(f"geomspace: {name} must be a real scalar in clnp; got "
                            f"{type(v).__name__}")
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
