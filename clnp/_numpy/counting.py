"""NumPy's counting functions: ``bincount``, ``histogram`` (with its bin edges),
``argwhere`` and ``flatnonzero``.
"""
from __future__ import annotations

import builtins
import operator
from typing import Any

import numpy as np

from .._core import dtypes as dt
from .._core.checks import is_array
from .._core.dtypes import kind as dkind
from .._core.namespace import namespace as _xp
from .array_likes import _arr, _check_real, _host_scalar

__all__ = ["bincount", "histogram", "histogram_bin_edges", "argwhere", "flatnonzero"]


def bincount(x: Any, /, weights: Any = None, minlength: int = 0) -> Any:
    """Number of occurrences of each value in the non-negative integer array ``x``, or the
    sum of ``weights`` per value (``numpy.bincount``). The result has ``max(x) + 1`` bins, at
    least ``minlength``.

    Computed without scatter-add: a stable sort of ``x`` and ``searchsorted`` of every bin
    value give the bin boundaries; weighted sums are differences of the prefix sums of the
    weights in sorted order (so the rounding error of a bin is relative to the running
    total, as in ``numpy.histogram`` with explicit edges). Memory is O(len(x) + bins). Reads
    ``min(x)`` and ``max(x)`` back from the device.

    Parameters
    ----------
    x : array_like
        One-dimensional array of non-negative integers (boolean and integer dtypes other
        than uint64).
    weights : array_like, optional
        Real weights of ``x``'s shape.
    minlength : int, default 0
        The minimum number of bins.

    Returns
    -------
    array
        The counts (int64), or the sums of the weights (the device's default float dtype),
        shape ``(max(max(x) + 1, minlength),)``. An empty ``x`` gives ``minlength`` int64
        zeros whatever the weights, as in NumPy.

    Raises
    ------
    TypeError
        ``x`` is not of an integer dtype that casts safely to int64, or ``weights`` is
        complex.
    ValueError
        ``x`` is not one-dimensional or has negative values, ``minlength`` is negative, or
        ``weights`` has another shape.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.bincount(clnp.asarray([0, 1, 1, 3])))
    [1 2 0 1]
    >>> w = clnp.asarray([0.5, 1.0, 0.25], dtype=clnp.float32)
    >>> print(clnp.bincount(clnp.asarray([0, 1, 1]), weights=w, minlength=4))
    [0.5  1.25 0.   0.  ]
    """
    xp = _xp()
    if not is_array(x) and np.size(x) == 0 and np.ndim(x) == 1:
        x = np.zeros(0, dtype=np.int64)
    v = _arr(x)
    if v.ndim != 1:
        raise ValueError(f"bincount: x must be 1-D; got shape {v.shape}")
    if dkind(v.dtype) not in "biu" or v.dtype == dt.uint64:
        raise TypeError(f"Cannot cast array data from dtype('{v.dtype}') to "
                        f"dtype('int64') according to the rule 'safe'")
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError("'minlength' must not be negative")
    n = v.shape[0]
    if n == 0:
        # NumPy returns int64 zeros for an empty x without looking at the weights
        return xp.zeros((minlength,), dtype=dt.int64, device=v.device)
    w = None
    if weights is not None:
        w = _arr(weights, v.device)
        if tuple(w.shape) != tuple(v.shape):
            raise ValueError(f"bincount: weights of shape {w.shape} do not match x of shape "
                             f"{v.shape}")
        if dkind(w.dtype) == "c":
            raise TypeError("bincount: complex weights are not supported")
    wd = v.device.default_float
    v = xp.astype(v, dt.int64)
    lo, hi = (int(t) for t in xp.stack([xp.min(v), xp.max(v)]).tolist())
    if lo < 0:
        raise ValueError("'list' argument must have no negative elements")
    nbins = builtins.max(hi + 1, minlength)
    bins = xp.arange(nbins, dtype=dt.int64, device=v.device)
    if w is None:
        right = xp.searchsorted(xp.sort(v), bins, side="right")
        return xp.diff(right, prepend=xp.zeros((1,), dtype=right.dtype, device=v.device))
    order = xp.argsort(v, stable=True)
    sv = xp.take(v, order)
    right = xp.searchsorted(sv, bins, side="right")
    cw = xp.cumulative_sum(xp.take(xp.astype(w, wd), order), include_initial=True)
    return xp.diff(xp.take(cw, right), prepend=xp.zeros((1,), dtype=wd, device=v.device))


def histogram_bin_edges(a: Any, bins: Any = 10, range: Any = None,
                        weights: Any = None) -> Any:
    """The bin edges ``numpy.histogram`` uses (``numpy.histogram_bin_edges``).

    Parameters
    ----------
    a : array_like
        Input data of a real dtype (flattened).
    bins : int, sequence of scalars, array or str, default 10
        A number of equal-width bins over ``range`` (a 0-d integer array is one), a
        monotonically increasing array of edges, or the name of NumPy's estimator of the
        bin width: ``'auto'``, ``'fd'``, ``'doane'``, ``'scott'``, ``'stone'``, ``'rice'``,
        ``'sturges'``, ``'sqrt'``
        (computed from the data's statistics on the device; see ``clnp._numpy.histogram_bins``).
    range : (float, float), optional
        The lower and upper edge (default ``(a.min(), a.max())``).
    weights : array_like, optional
        Only checked for its shape (NumPy's estimators do not take weights).

    Returns
    -------
    array
        The ``nbins + 1`` edges, floating point.

    Raises
    ------
    TypeError
        ``a`` is not real, ``bins`` has an unsupported type, or an estimator is named with
        ``weights``.
    ValueError
        ``bins`` is not positive, not increasing, or an unknown estimator; ``range`` is
        reversed or not finite; ``weights`` has another shape.

    Examples
    --------
    >>> import clnp
    >>> x = clnp.asarray([1.0, 2.0, 2.0, 3.0, 4.0], dtype=clnp.float32)
    >>> print(clnp.histogram_bin_edges(x, bins=4))
    [1.   1.75 2.5  3.25 4.  ]
    >>> print(clnp.histogram_bin_edges(x, bins=2, range=(0, 4)))
    [0. 2. 4.]
    """
    xp = _xp()
    x = xp.reshape(_arr(a), (-1,))
    _check_real(x, "histogram_bin_edges")
    if weights is not None and tuple(_arr(weights, x.device).shape) != tuple(_arr(a).shape):
        raise ValueError("weights should have the same shape as a.")
    return _bin_edges(x, bins, range, weights is not None)


def _bin_edges(x: Any, bins: Any, range: Any, weighted: bool) -> Any:
    xp = _xp()
    dev = x.device
    estimator = None
    bins = _host_scalar(bins)         # a 0-d array is a number of bins, as in NumPy
    if isinstance(bins, str):
        from .histogram_bins import ESTIMATORS
        if bins not in ESTIMATORS:
            raise ValueError(f"{bins!r} is not a valid estimator for `bins` (one of "
                             f"{', '.join(repr(e) for e in ESTIMATORS)})")
        if weighted:
            raise TypeError("Automated estimation of the number of bins is not supported "
                            "for weighted data")
        estimator, bins = bins, 1
    if is_array(bins) or np.ndim(bins) == 1:
        edges_h = bins.to_numpy() if is_array(bins) else np.asarray(bins)
        if np.any(edges_h[:-1] > edges_h[1:]):
            raise ValueError("`bins` must increase monotonically, when an array")
        edges = _arr(edges_h, dev)
    elif np.ndim(bins) == 0:
        try:
            nb = operator.index(bins)
        except TypeError:
            raise TypeError("`bins` must be an integer, a string, or an array") from None
        if nb < 1:
            raise ValueError("`bins` must be positive, when an integer")
        if range is not None:
            first, last = range
            first = first.item() if isinstance(first, np.generic) else first
            last = last.item() if isinstance(last, np.generic) else last
            if first > last:
                raise ValueError("max must be larger than min in range parameter.")
            if not (np.isfinite(first) and np.isfinite(last)):
                raise ValueError(f"supplied range of [{first}, {last}] is not finite")
        elif x.shape[0] == 0:
            first, last = 0, 1
        else:
            mm = xp.stack([xp.min(x), xp.max(x)]).to_numpy()
            first, last = mm[0], mm[1]
            if not (np.isfinite(first) and np.isfinite(last)):
                raise ValueError(f"autodetected range of [{first}, {last}] is not finite")
        if first == last:
            first, last = first - 0.5, last + 0.5
        if estimator is not None:
            from .histogram_bins import n_equal_bins
            nb = n_equal_bins(x, estimator, first, last)
        host_a = np.empty(0, dtype=x.dtype)
        bin_type = np.result_type(first, last, host_a)
        if np.issubdtype(bin_type, np.integer) or bin_type == np.bool_:
            bin_type = np.result_type(bin_type, float)
        if not dev.supports(np.dtype(bin_type)):
            bin_type = np.float32
        edges_h = np.linspace(first, last, nb + 1, endpoint=True, dtype=bin_type)
        edges = _arr(edges_h, dev)
    else:
        raise ValueError("`bins` must be 1d, when an array")
    if edges.shape[0] < 2:
        raise ValueError("histogram: bins needs at least two edges")
    return edges


def histogram(a: Any, bins: Any = 10, range: Any = None, density: Any = None,
              weights: Any = None) -> tuple[Any, Any]:
    """Histogram of ``a`` over ``bins`` (``numpy.histogram``).

    Bins are half-open ``[e_i, e_{i+1})`` except the last, which includes its right edge;
    values outside are ignored.

    Parameters
    ----------
    a : array_like
        Input data of a real dtype (flattened).
    bins : int, sequence of scalars, array or str, default 10
        A number of equal-width bins over ``range`` (a 0-d integer array is one), a
        monotonically increasing array of edges, or the name of one of NumPy's bin-width
        estimators (``'auto'``, ``'fd'``, ``'doane'``, ``'scott'``, ``'stone'``, ``'rice'``,
        ``'sturges'``, ``'sqrt'``; see
        :func:`histogram_bin_edges`).
    range : (float, float), optional
        The lower and upper edge (default ``(a.min(), a.max())``).
    density : bool, optional
        Normalise to a probability density (the integral over the range is 1).
    weights : array_like, optional
        A weight per element of ``a``; bins hold the sums of the weights.

    Returns
    -------
    hist : array
        The counts (int64), the summed weights, or the density (default float dtype).
    bin_edges : array
        The ``len(hist) + 1`` edges.

    Raises
    ------
    TypeError
        ``a`` is not real, ``bins`` has an unsupported type, or an estimator is named with
        ``weights``.
    ValueError
        ``bins`` is not positive, not increasing, or an unknown estimator; ``range`` is
        reversed or not finite; ``weights`` has another shape.

    Examples
    --------
    >>> import clnp
    >>> x = clnp.asarray([1.0, 2.0, 2.0, 3.0, 4.0], dtype=clnp.float32)
    >>> hist, edges = clnp.histogram(x, bins=3)
    >>> print(hist, edges)
    [1 2 2] [1. 2. 3. 4.]
    >>> print(clnp.histogram(x, bins=clnp.asarray([0.0, 2.0, 4.0], dtype=clnp.float32))[0])
    [1 4]
    """
    xp = _xp()
    x = xp.reshape(_arr(a), (-1,))
    _check_real(x, "histogram")
    dev = x.device
    w = None
    if weights is not None:
        w = _arr(weights, dev)
        if tuple(w.shape) != tuple(_arr(a, dev).shape):
            raise ValueError("weights should have the same shape as a.")
        w = xp.reshape(w, (-1,))
    edges = _bin_edges(x, bins, range, w is not None)
    cd = dt.promote(x.dtype, edges.dtype)
    xs = xp.astype(x, cd)
    e = xp.astype(edges, cd)
    if w is None:
        srt = xp.sort(xs)
        cum = xp.concat([xp.searchsorted(srt, e[:-1], side="left"),
                         xp.searchsorted(srt, e[-1:], side="right")])
        hist = xp.diff(cum)
    else:
        order = xp.argsort(xs, stable=True)
        srt = xp.take(xs, order)
        cum = xp.concat([xp.searchsorted(srt, e[:-1], side="left"),
                         xp.searchsorted(srt, e[-1:], side="right")])
        cw = xp.cumulative_sum(xp.take(w, order), include_initial=True)
        hist = xp.diff(xp.take(cw, cum))
    if density:
        # as NumPy: the widths are differences in the edges' dtype, then widened (float32
        # edges give float32-rounded widths); the total is summed in the counts' dtype
        fd = dev.default_float
        db = xp.astype(xp.diff(edges), fd)
        total = xp.sum(hist)
        if dkind(hist.dtype) not in "fc":
            hist, total = xp.astype(hist, fd), xp.astype(total, fd)
        return hist / db / total, edges
    return hist, edges


def argwhere(a: Any) -> Any:
    """Indices of the non-zero elements, one row per element (``numpy.argwhere``).

    Parameters
    ----------
    a : array_like
        Input array.

    Returns
    -------
    array
        Integer array of shape ``(N, a.ndim)`` (the count is read back to the host).

    Examples
    --------
    >>> import clnp
    >>> print(clnp.argwhere(clnp.asarray([[0, 1], [1, 0]])))
    [[0 1]
     [1 0]]
    """
    xp = _xp()
    x = _arr(a)
    if x.ndim == 0:
        return argwhere(xp.reshape(x, (1,)))[:, :0]
    return xp.stack(xp.nonzero(x), axis=1)


def flatnonzero(a: Any) -> Any:
    """Indices of the non-zero elements of the flattened array (``numpy.flatnonzero``).

    Parameters
    ----------
    a : array_like
        Input array.

    Returns
    -------
    array
        1-D integer array.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.flatnonzero(clnp.asarray([[0, 1], [1, 0]])))
    [1 2]
    """
    xp = _xp()
    return xp.nonzero(xp.reshape(_arr(a), (-1,)))[0]
