"""NumPy's ``interp`` and ``convolve``.
"""
from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from .._core import dtypes as dt
from .._core.dtypes import kind as dkind
from .._core.namespace import namespace as _xp
from .array_likes import _arr, _default_float, _device_of
from .manipulation import pad

__all__ = ["interp", "convolve"]


def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None,
           period: Any = None) -> Any:
    """One-dimensional piecewise-linear interpolation (``numpy.interp``).

    Parameters
    ----------
    x : array_like
        Where to evaluate.
    xp : array_like
        Increasing x-coordinates of the data points.
    fp : array_like
        The y-coordinates (complex: per component).
    left : float, optional
        Value below ``xp[0]`` (default ``fp[0]``).
    right : float, optional
        Value above ``xp[-1]`` (default ``fp[-1]``).
    period : float, optional
        Makes ``xp`` periodic.

    Returns
    -------
    array
        The interpolated values, in the default float.

    Raises
    ------
    ValueError
        ``xp`` and ``fp`` of different lengths, or empty.

    Examples
    --------
    >>> import clnp
    >>> xp, fp = clnp.asarray([0.0, 1.0, 2.0]), clnp.asarray([0.0, 2.0, 4.0])
    >>> print(clnp.interp(clnp.asarray([0.5, 1.5, 3.0]), xp, fp))
    [1. 3. 4.]
    """
    ns = _xp()
    dev = _device_of(x, xp, fp)
    fd = _default_float(dev)
    # every operand converted and checked before a kernel runs
    fpa, xv, xpa = _arr(fp, dev), _arr(x, dev), _arr(xp, dev)
    for v, what in ((xv, "x"), (xpa, "xp")):
        if dkind(v.dtype) == "c":
            raise TypeError(f"interp: {what} must be real; got dtype {v.dtype}")
    if xpa.ndim != 1 or fpa.ndim != 1:
        raise ValueError(f"interp: xp and fp must be 1-D; got shapes {tuple(xpa.shape)} and "
                         f"{tuple(fpa.shape)}")
    if xpa.shape[0] != fpa.shape[0]:
        raise ValueError(f"interp: fp and xp are not of the same length: shapes "
                         f"{tuple(fpa.shape)} and {tuple(xpa.shape)}")
    if dkind(fpa.dtype) == "c":
        re = interp(x, xp, ns.real(fpa), None if left is None else np.real(left),
                    None if right is None else np.real(right), period)
        im = interp(x, xp, ns.imag(fpa), None if left is None else np.imag(left),
                    None if right is None else np.imag(right), period)
        return ns.add(re, ns.multiply(im, 1j))
    xv, xpa, fpa = (ns.astype(v, fd) for v in (xv, xpa, fpa))
    if xpa.shape[0] == 0:
        raise ValueError("array of sample points is empty")
    if period is not None:
        if period == 0:
            raise ValueError("period must be a non-zero value")
        period = abs(float(period))
        left = right = None
        xv = ns.remainder(xv, period)
        xpa = ns.remainder(xpa, period)
        order = ns.argsort(xpa)
        xpa, fpa = ns.take(xpa, order), ns.take(fpa, order)
        xpa = ns.concat([xpa[-1:] - period, xpa, xpa[0:1] + period])
        fpa = ns.concat([fpa[-1:], fpa, fpa[0:1]])
    n = xpa.shape[0]
    lval = fpa[0] if left is None else float(left)
    rval = fpa[-1] if right is None else float(right)
    if n == 1:
        res = ns.where(ns.less(xv, xpa[0]), lval,
                       ns.where(ns.greater(xv, xpa[0]), rval, fpa[0]))
        return ns.astype(res, fd)
    shp = xv.shape
    xf = ns.reshape(xv, (-1,))
    j = ns.subtract(ns.searchsorted(xpa, xf, side="right"), 1)
    j = ns.clip(j, 0, n - 2)
    x0, x1 = ns.take(xpa, j), ns.take(xpa, j + 1)
    f0, f1 = ns.take(fpa, j), ns.take(fpa, j + 1)
    slope = (f1 - f0) / (x1 - x0)
    res = slope * (xf - x0) + f0
    alt = slope * (xf - x1) + f1
    res = ns.where(ns.isnan(res), alt, res)
    res = ns.where(ns.logical_and(ns.isnan(res), ns.equal(f0, f1)), f0, res)
    res = ns.where(ns.equal(xf, x0), f0, res)
    res = ns.where(ns.equal(xf, xpa[-1]), fpa[-1], res)
    res = ns.where(ns.less(xf, xpa[0]), lval, res)
    res = ns.where(ns.greater(xf, xpa[-1]), rval, res)
    res = ns.where(ns.isnan(xf), xf, res)
    return ns.reshape(ns.astype(res, fd), shp)


def _matmul(a: Any, b: Any) -> Any:
    """``a @ b`` through ``clnp.matmul`` when the namespace has it, else broadcast products."""
    xp = _xp()
    mm = getattr(xp, "matmul", None)
    if mm is not None and dkind(a.dtype) != "b":
        return mm(a, b)
    if b.ndim == 1:
        return xp.sum(a * b, axis=-1)
    return xp.sum(xp.expand_dims(a, axis=-1) * xp.expand_dims(b, axis=-3), axis=-2)


def convolve(a: Any, v: Any, mode: str = "full") -> Any:
    """Discrete linear convolution of two 1-D sequences (``numpy.convolve``).

    Parameters
    ----------
    a : array_like
        First 1-D input.
    v : array_like
        Second 1-D input.
    mode : {'full', 'same', 'valid'}, default 'full'
        Output length ``N + M - 1``, ``max(N, M)`` (centred), or ``max(N, M) - min(N, M)
        + 1``.

    Returns
    -------
    array
        The convolution, evaluated directly in bounded memory (the sliding-window matrix
        is gathered in chunks).

    Raises
    ------
    ValueError
        Empty inputs, inputs that are not 1-D, or an unknown mode.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.convolve(clnp.asarray([1.0, 2.0, 3.0]), clnp.asarray([0.0, 1.0, 0.5])))
    [0.  1.  2.5 4.  1.5]
    """
    xp = _xp()
    dev = _device_of(a, v)
    x, k = _arr(a, dev), _arr(v, dev)
    if x.ndim > 1 or k.ndim > 1:
        raise ValueError("object too deep for desired array")
    x, k = xp.reshape(x, (-1,)), xp.reshape(k, (-1,))
    if x.shape[0] == 0:
        raise ValueError("a cannot be empty")
    if k.shape[0] == 0:
        raise ValueError("v cannot be empty")
    if k.shape[0] > x.shape[0]:
        x, k = k, x
    n, m = x.shape[0], k.shape[0]
    rd = dt.promote(x.dtype, k.dtype)
    work = dt.int64 if rd.kind == "b" else rd
    x, k = xp.astype(x, work), xp.astype(xp.flip(k), work)
    if mode == "full":
        start, length = 0, n + m - 1
    elif mode == "same":
        start, length = (m - 1) // 2, n
    elif mode == "valid":
        start, length = m - 1, n - m + 1
    else:
        raise ValueError(f"mode must be one of 'full', 'same', or 'valid' (got {mode!r})")
    xpad = pad(x, (m - 1, m - 1)) if m > 1 else x
    cols = xp.reshape(xp.arange(m, dtype=dt.int64, device=x.device), (1, m))
    chunk = builtins.max(1, (1 << 22) // m)
    parts = []
    for s in builtins.range(start, start + length, chunk):
        e = builtins.min(s + chunk, start + length)
        rows = xp.reshape(xp.arange(s, e, dtype=dt.int64, device=x.device), (e - s, 1))
        window = xp.take(xpad, xp.reshape(rows + cols, (-1,)))
        parts.append(_matmul(xp.reshape(window, (e - s, m)), k))
    res = parts[0] if len(parts) == 1 else xp.concat(parts)
    if rd.kind == "b":
        res = xp.not_equal(res, 0)
    return res
