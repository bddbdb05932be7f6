"""NumPy's reductions beyond the standard: ``amax``/``amin``, ``ptp``, ``average``,
quantiles and medians, and the NaN-ignoring ``nan*`` functions.
"""
from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from .._core import dtypes as dt
from .._core.checks import is_array, normalize_axes
from .._core.dtypes import kind as dkind
from .._core.namespace import namespace as _xp
from .array_likes import _arr, _check_real, _finish

__all__ = ["percentile", "quantile", "median", "average", "nanmean", "nansum", "nanmax", "nanmin",
           "nanprod", "nanstd", "nanvar", "nanargmax", "nanargmin", "nanmedian", "nanpercentile",
           "nanquantile", "nancumsum", "nancumprod", "ptp", "amax", "amin"]


def amax(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Any:
    """Maximum along ``axis`` (``numpy.amax``; NaN propagates).

    Parameters
    ----------
    a : array_like
        Input array.
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    out : array, optional
        A clnp array that receives the result.
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions.
    **kw
        NumPy's ``initial``/``where`` keywords where supported.

    Returns
    -------
    array
        The maxima.

    Raises
    ------
    ValueError
        A zero-size reduction without ``initial``.
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.amax(clnp.asarray([[1, 5], [7, 2]]), axis=0))
    [7 5]
    """
    _no_extra(kw, "amax")
    return _finish(_xp().max(_arr(a), axis=_ax(axis), keepdims=keepdims), out, "amax")


def amin(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False, **kw: Any) -> Any:
    """Minimum along ``axis`` (``numpy.amin``; NaN propagates).

    Parameters
    ----------
    a : array_like
        Input array.
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    out : array, optional
        A clnp array that receives the result.
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions.
    **kw
        NumPy's ``initial``/``where`` keywords where supported.

    Returns
    -------
    array
        The minima.

    Raises
    ------
    ValueError
        A zero-size reduction without ``initial``.
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.amin(clnp.asarray([[1, 5], [7, 2]]), axis=1))
    [1 2]
    """
    _no_extra(kw, "amin")
    return _finish(_xp().min(_arr(a), axis=_ax(axis), keepdims=keepdims), out, "amin")


def _no_extra(kw: dict, fname: str) -> None:
    for k, v in kw.items():
        if k in ("initial", "where") and v is not np._NoValue and not (k == "where" and
                                                                      v is True):
            raise TypeError(f"{fname}: {k}= is not supported by clnp")
        if k not in ("initial", "where"):
            raise TypeError(f"{fname}() got an unexpected keyword argument '{k}'")


def _ax(axis: Any) -> Any:
    return tuple(axis) if isinstance(axis, list) else axis


def ptp(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
    """Range of values, ``max - min``, along ``axis`` (``numpy.ptp``).

    Parameters
    ----------
    a : array_like
        Input array.
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    out : array, optional
        A clnp array that receives the result.
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions.

    Returns
    -------
    array
        The ranges.

    Raises
    ------
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.ptp(clnp.asarray([[1, 5], [2, 9]]), axis=1))
    [4 7]
    """
    xp = _xp()
    x = _arr(a)
    axis = _ax(axis)
    if x.dtype == dt.bool_:           # NumPy: boolean subtract is not supported
        raise TypeError("ptp: max - min is not supported for dtype bool (cast to an integer "
                        "dtype first)")
    res = xp.subtract(xp.max(x, axis=axis, keepdims=keepdims),
                      xp.min(x, axis=axis, keepdims=keepdims))
    return _finish(res, out, "ptp")


def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False, *,
            keepdims: bool = False) -> Any:
    """Weighted average along ``axis``: ``sum(a * w) / sum(w)`` (``numpy.average``).

    Parameters
    ----------
    a : array_like
        Input array.
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    weights : array_like, optional
        Weights of ``a``'s shape, or 1-D along a single ``axis`` (default: all ones).
    returned : bool, default False
        Also return the sum of the weights.
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions.

    Returns
    -------
    array or tuple
        The average, or ``(average, sum of weights)`` with ``returned``.

    Raises
    ------
    ZeroDivisionError
        The weights sum to zero (one value read back from the device), or, without
        weights, the result is empty (as in NumPy).
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> float(clnp.average(clnp.asarray([1.0, 2.0, 4.0]), weights=clnp.asarray([2.0, 1.0, 1.0])))
    2.0
    """
    xp = _xp()
    x = _arr(a)
    axis = _ax(axis)
    if weights is None:
        avg = xp.mean(x, axis=axis, keepdims=keepdims)
        if avg.size == 0:
            # NumPy divides x.size by the result's size for the weight sum, and fails alike
            raise ZeroDivisionError("average: the result is empty (division by zero)")
        n = math.prod(x.shape) // max(math.prod(avg.shape), 1) if x.ndim else 1
        scl = xp.full(avg.shape, n, dtype=avg.dtype, device=x.device)
        return (avg, scl) if returned else avg
    w = _arr(weights, x.device)
    if dkind(x.dtype) in "biu":
        rd = dt.promote(dt.promote(x.dtype, w.dtype), x.device.default_float) \
            if dkind(w.dtype) not in "c" else dt.promote(w.dtype, x.device.default_complex)
    else:
        rd = dt.promote(x.dtype, w.dtype)
    axes = None if axis is None else normalize_axes(axis, x.ndim, "average")
    if tuple(x.shape) != tuple(w.shape):
        if axes is None:
            raise TypeError("Axis must be specified when shapes of a and weights differ.")
        if tuple(w.shape) != tuple(x.shape[ax] for ax in axes):
            raise ValueError("Shape of weights must be consistent with shape of a along "
                             "specified axis.")
        w = xp.permute_dims(w, tuple(int(i) for i in np.argsort(axes)))
        w = xp.reshape(w, tuple(s if ax in axes else 1 for ax, s in enumerate(x.shape)))
        w = xp.broadcast_to(w, x.shape)
    w = xp.astype(w, rd)
    scl = xp.sum(w, axis=axis, keepdims=keepdims)
    if bool(xp.any(xp.equal(scl, 0))):
        raise ZeroDivisionError("Weights sum to zero, can't be normalized")
    avg = xp.sum(xp.multiply(xp.astype(x, rd), w), axis=axis, keepdims=keepdims) / scl
    if returned:
        if tuple(scl.shape) != tuple(avg.shape):
            scl = xp.asarray(xp.broadcast_to(scl, avg.shape), copy=True)
        return avg, scl
    return avg


def _sorted_slices(x: Any, axis: Any, fname: str, what: str) -> tuple[Any, tuple[int, ...],
                                                                        tuple]:
    """The values of each reduction slice of ``x`` over ``axis``, sorted along the last dim
    (with :func:`_reduce_axes`' kept and keepdims shapes); ValueError for empty slices."""
    xp = _xp()
    if x.ndim == 0:
        x = xp.reshape(x, (1,))
        axis = None if axis is None else 0
    flat, kshape, keep = _reduce_axes(x, axis, fname)
    if flat.shape[-1] == 0:
        raise ValueError(f"{fname}: cannot compute {what} of an empty array")
    return xp.sort(flat, axis=-1), kshape, keep


def _reduce_axes(x: Any, axis: Any, fname: str) -> tuple[Any, tuple[int, ...], tuple]:
    """``x`` with the reduced axes moved last and merged: (array of shape kept + (N,),
    kept shape, keepdims shape)."""
    xp = _xp()
    axes = normalize_axes(_ax(axis), x.ndim, fname)
    kept = [d for d in range(x.ndim) if d not in axes]
    moved = xp.permute_dims(x, tuple(kept) + tuple(sorted(axes)))
    kshape = tuple(x.shape[d] for d in kept)
    n = math.prod(x.shape[d] for d in axes)
    keep = tuple(1 if d in axes else x.shape[d] for d in range(x.ndim))
    return xp.reshape(moved, kshape + (n,)), kshape, keep


_METHODS = ("linear", "lower", "higher", "nearest", "midpoint")


def _quantile(a: Any, q: Any, axis: Any, method: str, keepdims: bool, fname: str,
              percent: bool, nan: bool, out: Any = None, interpolation: Any = None,
              weights: Any = None) -> Any:
    if weights is not None:
        raise TypeError(f"{fname}: weights= is not supported by clnp")
    xp = _xp()
    x = _arr(a)
    if dkind(x.dtype) in "cb":          # NumPy refuses both
        raise TypeError(f"{fname}: a must be an array of real numbers; got dtype {x.dtype}")
    _check_real(x, fname)
    if interpolation is not None:
        method = interpolation
    if method not in _METHODS:
        raise ValueError(f"{fname}: method {method!r} is not supported by clnp; use one of "
                         f"{_METHODS}")
    weak_q = type(q) in (int, float)
    qh = q.to_numpy() if is_array(q) else np.asarray(q)
    if dkind(qh.dtype) not in "biuf":
        raise TypeError(f"{fname}: q must be real numbers; got {qh.dtype}")
    if percent:
        qh = np.true_divide(qh, 100)
    if qh.ndim and qh.size:
        valid = bool(np.all((qh >= 0) & (qh <= 1)))
    else:
        valid = bool(np.all(0 <= qh) and np.all(qh <= 1)) if qh.size else True
    if not valid:
        raise ValueError("Percentiles must be in the range [0, 100]" if percent else
                         "Quantiles must be in the range [0, 1]")
    if nan and x.size == 0:
        # empty slices give NaN, and no slices NumPy's own shape and dtype (its nan-quantiles
        # of no slices drop q's dims): NumPy's answer on an empty host array (no values to
        # move; its "All-NaN slice" warning left out, as clnp's nanmedian does)
        ref_fn = np.nanpercentile if percent else np.nanquantile
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)
            ref = ref_fn(np.empty(x.shape, x.dtype), q.to_numpy() if is_array(q) else q,
                         axis=_ax(axis), method=method, keepdims=keepdims)
        ref = np.asarray(ref)
        if ref.dtype == dt.float64 and not x.device.has_fp64:
            ref = ref.astype(x.device.default_float)
        return _finish(xp.asarray(ref, device=x.device), out, fname)
    srt, kshape, keep = _sorted_slices(x, axis, fname, "a quantile")   # NaNs sort last
    n = srt.shape[-1]
    dev = x.device
    floating = dkind(x.dtype) == "f"
    nq = qh.size
    bshape = kshape + (nq,)
    # The index arithmetic runs on the host when every slice has n values (no kernels to
    # build), on the device when NaN-skipping gives each slice its own count.
    if nan and floating:
        m: Any = xp
        count = xp.sum(xp.logical_not(xp.isnan(srt)), axis=-1, keepdims=True)
        last: Any = xp.subtract(count, 1)
        top: Any = xp.clip(last, 0, None)
    else:
        m, last, top = np, n - 1, n - 1
    # NumPy's virtual index (n - 1) * q; integer q with the linear method indexes exactly
    int_q = dkind(qh.dtype) in "iub" and not percent
    # in q's own float dtype, as NumPy computes it (a float32 q gives float32 indices and
    # weights, and a float32 result for float32 input); a Python q is float64 there
    qd = dt.int64 if int_q else qh.dtype if dkind(qh.dtype) == "f" and \
        dev.supports(qh.dtype) else (dt.float64 if dev.has_fp64 else dt.float32)
    qv = np.ravel(qh).astype(qd)
    # NumPy's count is a Python int there (weak): the product stays in q's dtype
    vi = m.multiply(qv, last) if m is np else \
        xp.multiply(xp.asarray(qv, device=dev), xp.astype(last, qd))

    def dev_array(v: Any, dtype: Any) -> Any:
        v = m.astype(v, dtype)
        return xp.asarray(v, device=dev) if m is np else v

    def rows(v: Any) -> Any:
        v = dev_array(m.minimum(m.clip(m.astype(v, dt.int64), 0, None), top), dt.int64)
        return xp.broadcast_to(v if v.ndim == len(bshape) else
                               xp.reshape(v, (1,) * len(kshape) + (nq,)), bshape)

    if method in ("lower", "higher", "nearest") or (method == "linear" and int_q):
        pick = {"lower": m.floor, "higher": m.ceil, "nearest": m.round}.get(method)
        res = xp.take_along_axis(srt, rows(vi if pick is None else pick(vi)), axis=-1)
    else:
        if method == "midpoint":
            vi = m.multiply(m.add(m.floor(vi), m.ceil(vi)), 0.5)
            gamma = m.where(m.equal(m.remainder(vi, 1), 0), 0.0, 0.5)
        prev = m.floor(vi)
        if method == "linear":
            gamma = m.subtract(vi, prev)
        a_lo = xp.take_along_axis(srt, rows(prev), axis=-1)
        a_hi = xp.take_along_axis(srt, rows(m.add(prev, 1)), axis=-1)
        # a Python-scalar q keeps a float input's dtype (NumPy's weak promotion)
        rd = (x.dtype if weak_q else dt.promote(x.dtype, qd)) if floating else \
            dev.default_float
        if not floating:
            a_lo, a_hi = xp.astype(a_lo, rd), xp.astype(a_hi, rd)
        upper = dev_array(m.greater_equal(gamma, 0.5), dt.bool_)
        g, g1 = dev_array(gamma, rd), dev_array(m.subtract(1, gamma), rd)
        # NumPy's _lerp: from the nearer end, so that gamma = 1 gives exactly a_hi; the
        # difference in the input's dtype, widened only by the product with gamma (a wider
        # q's dtype), as NumPy rounds it
        diff = xp.subtract(a_hi, a_lo)
        res = xp.where(upper, xp.subtract(a_hi, xp.multiply(diff, g1)),
                       xp.add(a_lo, xp.multiply(diff, g)))
    if floating:
        bad = xp.equal(count, 0) if nan else xp.isnan(srt[..., -1:])
        res = xp.where(bad, xp.asarray(math.nan, dtype=res.dtype, device=dev), res)
    # NumPy puts the dimensions of q first
    res = xp.moveaxis(res, -1, 0)
    tail = keep if keepdims and x.ndim else kshape    # a 0-d input keeps no dims
    res = xp.reshape(res, tuple(qh.shape) + tuple(tail))
    return _finish(res, out, fname)


def quantile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
             method: str = "linear", keepdims: bool = False, *, weights: Any = None,
             interpolation: Any = None) -> Any:
    """The ``q``-th quantiles of ``a`` along ``axis`` (``numpy.quantile``).

    Parameters
    ----------
    a : array_like
        Input array.
    q : float or array_like
        The quantiles, in [0, 1]: a Python number, a NumPy scalar, or an array (clnp
        or NumPy, 0-d or n-d). As in NumPy, a Python ``q`` keeps ``a``'s float dtype and
        a NumPy or clnp ``q`` computes in its own dtype too (float32 with float32 ``a``
        stays float32, float64 widens).
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    out : array, optional
        A clnp array that receives the result.
    overwrite_input : bool, default False
        Accepted for NumPy compatibility (the input is never modified).
    method : str, default 'linear'
        ``linear``, ``lower``, ``higher``, ``nearest`` or ``midpoint``.
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions.
    weights : array_like, optional
        Weights per element (``method='inverted_cdf'`` only, as in NumPy).
    interpolation : str, optional
        NumPy's deprecated name for ``method``.

    Returns
    -------
    array
        The quantiles; the dimensions of ``q`` come first. NaN in a slice gives NaN.

    Raises
    ------
    ValueError
        ``q`` outside [0, 1], or an unknown method.
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> x = clnp.asarray([1.0, 2.0, 3.0, 4.0])
    >>> float(clnp.quantile(x, 0.5))
    2.5
    >>> print(clnp.quantile(x, clnp.asarray([0.0, 1.0])))
    [1. 4.]
    """
    return _quantile(a, q, axis, method, keepdims, "quantile", False, False, out,
                     interpolation, weights)


def percentile(a: Any, q: Any, axis: Any = None, out: Any = None,
               overwrite_input: bool = False, method: str = "linear", keepdims: bool = False,
               *, weights: Any = None, interpolation: Any = None) -> Any:
    """The ``q``-th percentiles of ``a`` along ``axis`` (``numpy.percentile``).

    Parameters
    ----------
    a : array_like
        Input array.
    q : float or array_like
        The percentiles, in [0, 100]: a Python number, a NumPy scalar, or an array (clnp
        or NumPy, 0-d or n-d). As in NumPy, a Python ``q`` keeps ``a``'s float dtype and
        a NumPy or clnp ``q`` computes in its own dtype too (float32 with float32 ``a``
        stays float32, float64 widens).
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    out : array, optional
        A clnp array that receives the result.
    overwrite_input : bool, default False
        Accepted for NumPy compatibility (the input is never modified).
    method : str, default 'linear'
        ``linear``, ``lower``, ``higher``, ``nearest`` or ``midpoint``.
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions.
    weights : array_like, optional
        Weights per element (``method='inverted_cdf'`` only, as in NumPy).
    interpolation : str, optional
        NumPy's deprecated name for ``method``.

    Returns
    -------
    array
        The percentiles; the dimensions of ``q`` come first.

    Raises
    ------
    ValueError
        ``q`` outside [0, 100], or an unknown method.
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> float(clnp.percentile(clnp.asarray([1.0, 2.0, 3.0, 4.0, 5.0]), 25))
    2.0
    """
    return _quantile(a, q, axis, method, keepdims, "percentile", True, False, out,
                     interpolation, weights)


def nanquantile(a: Any, q: Any, axis: Any = None, out: Any = None,
                overwrite_input: bool = False, method: str = "linear", keepdims: bool = False,
                *, weights: Any = None, interpolation: Any = None) -> Any:
    """:func:`quantile` ignoring NaNs (``numpy.nanquantile``).

    Parameters
    ----------
    a : array_like
        Input array.
    q : float or array_like
        The quantiles, in [0, 1]: a Python number, a NumPy scalar, or an array (clnp
        or NumPy, 0-d or n-d). As in NumPy, a Python ``q`` keeps ``a``'s float dtype and
        a NumPy or clnp ``q`` computes in its own dtype too (float32 with float32 ``a``
        stays float32, float64 widens).
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    out : array, optional
        A clnp array that receives the result.
    overwrite_input : bool, default False
        Accepted for NumPy compatibility (the input is never modified).
    method : str, default 'linear'
        ``linear``, ``lower``, ``higher``, ``nearest`` or ``midpoint``.
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions.
    weights : array_like, optional
        Weights per element (``method='inverted_cdf'`` only, as in NumPy).
    interpolation : str, optional
        NumPy's deprecated name for ``method``.

    Returns
    -------
    array
        The quantiles; all-NaN slices give NaN.

    Raises
    ------
    ValueError
        ``q`` outside [0, 1], or an unknown method.
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> float(clnp.nanquantile(clnp.asarray([1.0, float("nan"), 3.0]), 0.5))
    2.0
    """
    return _quantile(a, q, axis, method, keepdims, "nanquantile", False, True, out,
                     interpolation, weights)


def nanpercentile(a: Any, q: Any, axis: Any = None, out: Any = None,
                  overwrite_input: bool = False, method: str = "linear",
                  keepdims: bool = False, *, weights: Any = None,
                  interpolation: Any = None) -> Any:
    """:func:`percentile` ignoring NaNs (``numpy.nanpercentile``).

    Parameters
    ----------
    a : array_like
        Input array.
    q : float or array_like
        The percentiles, in [0, 100]: a Python number, a NumPy scalar, or an array (clnp
        or NumPy, 0-d or n-d). As in NumPy, a Python ``q`` keeps ``a``'s float dtype and
        a NumPy or clnp ``q`` computes in its own dtype too (float32 with float32 ``a``
        stays float32, float64 widens).
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    out : array, optional
        A clnp array that receives the result.
    overwrite_input : bool, default False
        Accepted for NumPy compatibility (the input is never modified).
    method : str, default 'linear'
        ``linear``, ``lower``, ``higher``, ``nearest`` or ``midpoint``.
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions.
    weights : array_like, optional
        Weights per element (``method='inverted_cdf'`` only, as in NumPy).
    interpolation : str, optional
        NumPy's deprecated name for ``method``.

    Returns
    -------
    array
        The percentiles; all-NaN slices give NaN.

    Raises
    ------
    ValueError
        ``q`` outside [0, 100], or an unknown method.
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> float(clnp.nanpercentile(clnp.asarray([1.0, float("nan"), 3.0]), 100))
    3.0
    """
    return _quantile(a, q, axis, method, keepdims, "nanpercentile", True, True, out,
                     interpolation, weights)


def _median(a: Any, axis: Any, keepdims: bool, fname: str, nan: bool) -> Any:
    xp = _xp()
    x = _arr(a)
    _check_real(x, fname)
    floating = dkind(x.dtype) == "f"
    rd = x.dtype if floating else x.device.default_float
    if x.ndim == 0:
        keepdims = False        # NumPy: a 0-d input has a 0-d median, keepdims or not
    flat, kshape, keep = _reduce_axes(x if x.ndim else xp.reshape(x, (1,)),
                                      axis if x.ndim or axis is None else 0, fname)
    if flat.shape[-1] == 0:     # NumPy: the mean of nothing, NaN (with a RuntimeWarning)
        return xp.full(keep if keepdims else kshape, math.nan, dtype=rd, device=x.device)
    srt, kshape, keep = _sorted_slices(x, axis, fname, "the median")
    n = srt.shape[-1]
    if nan and floating:
        cnt = xp.sum(xp.logical_not(xp.isnan(srt)), axis=-1, keepdims=True)
        lo = xp.clip(xp.floor_divide(xp.subtract(cnt, 1), 2), 0, None)
        hi = xp.floor_divide(cnt, 2)
        hi = xp.minimum(hi, xp.clip(xp.subtract(cnt, 1), 0, None))
        a_lo = xp.astype(xp.take_along_axis(srt, lo, axis=-1), rd)
        a_hi = xp.astype(xp.take_along_axis(srt, hi, axis=-1), rd)
        res = xp.where(xp.equal(lo, hi), a_lo, xp.divide(xp.add(a_lo, a_hi), 2))
        res = xp.where(xp.equal(cnt, 0), math.nan, res)
    else:
        if n % 2:
            res = xp.astype(srt[..., n // 2:n // 2 + 1], rd)
        else:
            pair = xp.astype(srt[..., n // 2 - 1:n // 2 + 1], rd)
            res = xp.divide(xp.add(pair[..., :1], pair[..., 1:]), 2)
        if floating:
            res = xp.where(xp.isnan(srt[..., -1:]), math.nan, res)
    return xp.reshape(res, keep if keepdims else kshape)


def median(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
           keepdims: bool = False) -> Any:
    """Median along ``axis`` (``numpy.median``).

    Parameters
    ----------
    a : array_like
        Input array.
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    out : array, optional
        A clnp array that receives the result.
    overwrite_input : bool, default False
        Accepted for NumPy compatibility (the input is never modified).
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions.

    Returns
    -------
    array
        The middle element of each sorted slice, or the mean of the two middle ones; NaN
        in a slice gives NaN.

    Raises
    ------
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.median(clnp.asarray([[1.0, 9.0, 2.0], [4.0, 3.0, 5.0]]), axis=1))
    [2. 4.]
    """
    return _finish(_median(a, axis, keepdims, "median", False), out, "median")


def nanmedian(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
              keepdims: bool = False) -> Any:
    """Median along ``axis`` ignoring NaNs (``numpy.nanmedian``).

    Parameters
    ----------
    a : array_like
        Input array.
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    out : array, optional
        A clnp array that receives the result.
    overwrite_input : bool, default False
        Accepted for NumPy compatibility (the input is never modified).
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions.

    Returns
    -------
    array
        The medians; all-NaN slices give NaN.

    Raises
    ------
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> float(clnp.nanmedian(clnp.asarray([1.0, float("nan"), 3.0, 8.0])))
    3.0
    """
    return _finish(_median(a, axis, keepdims, "nanmedian", True), out, "nanmedian")


def _check_axes(x: Any, axis: Any, fname: str = "") -> None:
    """An out-of-range axis raises AxisError before the NaN mask below builds a kernel (the
    public function's wrapper names it in the message)."""
    if axis is not None:
        normalize_axes(_ax(axis), x.ndim, fname or "axis")


def _nan_filled(x: Any, value: float) -> Any:
    xp = _xp()
    if dkind(x.dtype) not in "fc":
        return x
    return xp.where(xp.isnan(x), value, x)


def nansum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
           keepdims: bool = False, **kw: Any) -> Any:
    """Sum treating NaNs as zero (``numpy.nansum``).

    Parameters
    ----------
    a : array_like
        Input array.
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    dtype : dtype, optional
        The accumulator and result dtype.
    out : array, optional
        A clnp array that receives the result.
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions.
    **kw
        NumPy's ``initial``/``where`` keywords where supported.

    Returns
    -------
    array
        The reduced array.

    Raises
    ------
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> float(clnp.nansum(clnp.asarray([1.0, float("nan"), 3.0])))
    4.0
    """
    _no_extra(kw, "nansum")
    x = _arr(a)
    _check_axes(x, axis)
    res = _xp().sum(_nan_filled(x, 0), axis=_ax(axis), dtype=dtype, keepdims=keepdims)
    return _finish(res, out, "nansum")


def nanprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
            keepdims: bool = False, **kw: Any) -> Any:
    """Product treating NaNs as one (``numpy.nanprod``).

    Parameters
    ----------
    a : array_like
        Input array.
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    dtype : dtype, optional
        The accumulator and result dtype.
    out : array, optional
        A clnp array that receives the result.
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions.
    **kw
        NumPy's ``initial``/``where`` keywords where supported.

    Returns
    -------
    array
        The reduced array.

    Raises
    ------
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> float(clnp.nanprod(clnp.asarray([2.0, float("nan"), 3.0])))
    6.0
    """
    _no_extra(kw, "nanprod")
    x = _arr(a)
    _check_axes(x, axis)
    res = _xp().prod(_nan_filled(x, 1), axis=_ax(axis), dtype=dtype, keepdims=keepdims)
    return _finish(res, out, "nanprod")


def nancumsum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    """Cumulative sum treating NaNs as zero (``numpy.nancumsum``).

    Parameters
    ----------
    a : array_like
        Input array.
    axis : int, optional
        The axis (the flattened array when None).
    dtype : dtype, optional
        The accumulator and result dtype.
    out : array, optional
        A clnp array that receives the result.

    Returns
    -------
    array
        The running sums.

    Raises
    ------
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.nancumsum(clnp.asarray([1.0, float("nan"), 3.0])))
    [1. 1. 4.]
    """
    x = _arr(a)
    _check_axes(x, axis)
    return _finish(_xp().cumsum(_nan_filled(x, 0), axis=axis, dtype=dtype), out,
                   "nancumsum")


def nancumprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    """Cumulative product treating NaNs as one (``numpy.nancumprod``).

    Parameters
    ----------
    a : array_like
        Input array.
    axis : int, optional
        The axis (the flattened array when None).
    dtype : dtype, optional
        The accumulator and result dtype.
    out : array, optional
        A clnp array that receives the result.

    Returns
    -------
    array
        The running products.

    Raises
    ------
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.nancumprod(clnp.asarray([2.0, float("nan"), 3.0])))
    [2. 2. 6.]
    """
    x = _arr(a)
    _check_axes(x, axis)
    return _finish(_xp().cumprod(_nan_filled(x, 1), axis=axis, dtype=dtype), out,
                   "nancumprod")


def _nanextreme(a: Any, axis: Any, keepdims: bool, op: str) -> Any:
    xp = _xp()
    x = _arr(a)
    _check_axes(x, axis)
    axis = _ax(axis)
    if dkind(x.dtype) != "f":
        return getattr(xp, op)(x, axis=axis, keepdims=keepdims)
    mask = xp.isnan(x)
    fill = -math.inf if op == "max" else math.inf
    res = getattr(xp, op)(xp.where(mask, fill, x), axis=axis, keepdims=keepdims)
    return xp.where(xp.all(mask, axis=axis, keepdims=keepdims), math.nan, res)


def nanmax(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False,
           **kw: Any) -> Any:
    """Maximum ignoring NaNs (``numpy.nanmax``).

    Parameters
    ----------
    a : array_like
        Input array.
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    out : array, optional
        A clnp array that receives the result.
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions.
    **kw
        NumPy's ``initial``/``where`` keywords where supported.

    Returns
    -------
    array
        The maxima; all-NaN slices give NaN.

    Raises
    ------
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> float(clnp.nanmax(clnp.asarray([1.0, float("nan"), 3.0])))
    3.0
    """
    _no_extra(kw, "nanmax")
    return _finish(_nanextreme(a, axis, keepdims, "max"), out, "nanmax")


def nanmin(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False,
           **kw: Any) -> Any:
    """Minimum ignoring NaNs (``numpy.nanmin``).

    Parameters
    ----------
    a : array_like
        Input array.
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    out : array, optional
        A clnp array that receives the result.
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions.
    **kw
        NumPy's ``initial``/``where`` keywords where supported.

    Returns
    -------
    array
        The minima; all-NaN slices give NaN.

    Raises
    ------
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> float(clnp.nanmin(clnp.asarray([4.0, float("nan"), 3.0])))
    3.0
    """
    _no_extra(kw, "nanmin")
    return _finish(_nanextreme(a, axis, keepdims, "min"), out, "nanmin")


def _nanarg(a: Any, axis: Any, keepdims: bool, op: str) -> Any:
    xp = _xp()
    x = _arr(a)
    _check_axes(x, axis)
    if dkind(x.dtype) != "f":
        return getattr(xp, op)(x, axis=axis, keepdims=keepdims)
    mask = xp.isnan(x)
    if bool(xp.any(xp.all(mask, axis=axis))):
        raise ValueError("All-NaN slice encountered")
    fill = -math.inf if op == "argmax" else math.inf
    return getattr(xp, op)(xp.where(mask, fill, x), axis=axis, keepdims=keepdims)


def nanargmax(a: Any, axis: int | None = None, out: Any = None, *,
              keepdims: bool = False) -> Any:
    """Index of the maximum ignoring NaNs (``numpy.nanargmax``).

    Parameters
    ----------
    a : array_like
        Input array.
    axis : int, optional
        The axis (the flattened array when None).
    out : array, optional
        A clnp array that receives the result.
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions.

    Returns
    -------
    array
        Indices of the default index dtype.

    Raises
    ------
    ValueError
        An all-NaN slice (one value read back from the device).
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> int(clnp.nanargmax(clnp.asarray([1.0, float("nan"), 3.0])))
    2
    """
    return _finish(_nanarg(a, axis, keepdims, "argmax"), out, "nanargmax")


def nanargmin(a: Any, axis: int | None = None, out: Any = None, *,
              keepdims: bool = False) -> Any:
    """Index of the minimum ignoring NaNs (``numpy.nanargmin``).

    Parameters
    ----------
    a : array_like
        Input array.
    axis : int, optional
        The axis (the flattened array when None).
    out : array, optional
        A clnp array that receives the result.
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions.

    Returns
    -------
    array
        Indices of the default index dtype.

    Raises
    ------
    ValueError
        An all-NaN slice (one value read back from the device).
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> int(clnp.nanargmin(clnp.asarray([float("nan"), 5.0, 3.0])))
    2
    """
    return _finish(_nanarg(a, axis, keepdims, "argmin"), out, "nanargmin")


def nanmean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
            keepdims: bool = False, **kw: Any) -> Any:
    """Mean ignoring NaNs (``numpy.nanmean``).

    Parameters
    ----------
    a : array_like
        Input array.
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    dtype : dtype, optional
        The accumulator and result dtype.
    out : array, optional
        A clnp array that receives the result.
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions.
    **kw
        NumPy's ``initial``/``where`` keywords where supported.

    Returns
    -------
    array
        The means; all-NaN slices give NaN.

    Raises
    ------
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> float(clnp.nanmean(clnp.asarray([1.0, float("nan"), 3.0])))
    2.0
    """
    _no_extra(kw, "nanmean")
    xp = _xp()
    x = _arr(a)
    _check_axes(x, axis)
    axis = _ax(axis)
    if dkind(x.dtype) not in "fc":
        res = xp.mean(x, axis=axis, keepdims=keepdims)
        return _finish(res if dtype is None else xp.astype(res, dt.as_dtype(dtype)), out,
                       "nanmean")
    mask = xp.isnan(x)
    tot = xp.sum(xp.where(mask, 0, x), axis=axis, dtype=dtype, keepdims=keepdims)
    cnt = xp.sum(xp.logical_not(mask), axis=axis, keepdims=keepdims)
    res = xp.divide(tot, xp.astype(cnt, tot.dtype))
    return _finish(res, out, "nanmean")


def nanvar(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: float = 0,
           keepdims: bool = False, *, correction: Any = None, **kw: Any) -> Any:
    """Variance ignoring NaNs (``numpy.nanvar``).

    Parameters
    ----------
    a : array_like
        Input array.
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    dtype : dtype, optional
        The accumulator and result dtype.
    out : array, optional
        A clnp array that receives the result.
    ddof : float, default 0
        Degrees of freedom removed from the count.
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions.
    correction : float, optional
        The Array API's name for ``ddof``.
    **kw
        NumPy's ``initial``/``where`` keywords where supported.

    Returns
    -------
    array
        The variances; slices with no more than ``ddof`` values give NaN.

    Raises
    ------
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> float(clnp.nanvar(clnp.asarray([1.0, float("nan"), 3.0])))
    1.0
    """
    _no_extra(kw, "nanvar")
    xp = _xp()
    x = _arr(a)
    _check_axes(x, axis)
    axis = _ax(axis)
    if correction is not None:
        ddof = correction
    if dkind(x.dtype) not in "fc":
        res = xp.var(x, axis=axis, correction=ddof, keepdims=keepdims)
        return _finish(res, out, "nanvar")
    mask = xp.isnan(x)
    xz = xp.where(mask, 0, x)
    if dtype is not None:
        xz = xp.astype(xz, dt.as_dtype(dtype))
    cnt = xp.sum(xp.logical_not(mask), axis=axis, keepdims=True)
    avg = xp.divide(xp.sum(xz, axis=axis, keepdims=True), xp.astype(cnt, xz.dtype))
    dev = xp.where(mask, 0, xp.subtract(xz, avg))
    sq = xp.real(xp.multiply(dev, xp.conj(dev))) if dkind(x.dtype) == "c" else \
        xp.multiply(dev, dev)
    var = xp.sum(sq, axis=axis, keepdims=keepdims)
    dof = xp.subtract(xp.sum(xp.logical_not(mask), axis=axis, keepdims=keepdims), ddof)
    res = xp.divide(var, xp.astype(dof, var.dtype))
    res = xp.where(xp.less_equal(dof, 0), math.nan, res)
    return _finish(res, out, "nanvar")


def nanstd(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: float = 0,
           keepdims: bool = False, *, correction: Any = None, **kw: Any) -> Any:
    """Standard deviation ignoring NaNs: ``sqrt(nanvar(...))`` (``numpy.nanstd``).

    Parameters
    ----------
    a : array_like
        Input array.
    axis : int or tuple of int, optional
        The axes to reduce (all of them when None).
    dtype : dtype, optional
        The accumulator and result dtype.
    out : array, optional
        A clnp array that receives the result.
    ddof : float, default 0
        Degrees of freedom removed from the count.
    keepdims : bool, default False
        Keep the reduced axes as size-one dimensions.
    correction : float, optional
        The Array API's name for ``ddof``.
    **kw
        NumPy's ``initial``/``where`` keywords where supported.

    Returns
    -------
    array
        The standard deviations.

    Raises
    ------
    IndexError
        An axis is out of range.

    Examples
    --------
    >>> import clnp
    >>> float(clnp.nanstd(clnp.asarray([1.0, float("nan"), 3.0])))
    1.0
    """
    res = _xp().sqrt(nanvar(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims,
                            correction=correction, **kw))
    return _finish(res, out, "nanstd")
