"""NumPy's histogram bin estimators (``bins="auto"``, ``"fd"``, ``"doane"``, ``"scott"``,
``"stone"``, ``"rice"``, ``"sturges"``, ``"sqrt"``), computed from the data on the device.

Each estimator gives a bin width from a few statistics of the data (count, range, standard
deviation, quartiles, skewness); those are computed by clnp functions on the device and read
back together, then combined on the host with NumPy's formulas and NumPy scalar types (so a
float32 array's width is rounded as NumPy rounds it). ``"stone"`` minimises an estimate of
the L2 risk over 1 to ``max(100, sqrt(n))`` equal bins: every candidate's bin counts come
from one sort and one ``searchsorted`` of all candidates' edges at once, and only the risks
are read back.
"""
from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from .._core.dtypes import kind as dkind
from .._runtime.user_frames import user_stacklevel
from .._core.namespace import namespace as _xp

ESTIMATORS = ("auto", "fd", "doane", "scott", "stone", "rice", "sturges", "sqrt")
_UNSIGNED = {np.dtype(np.int8): np.uint8, np.dtype(np.int16): np.uint16,
             np.dtype(np.int32): np.uint32, np.dtype(np.int64): np.uint64}




def _ptp(mn: np.generic, mx: np.generic) -> Any:
    """``max - min`` as NumPy's histogram takes it: in the data's dtype, integers through
    their unsigned type (no overflow)."""
    d = np.result_type(mn, mx)
    u = _UNSIGNED.get(np.dtype(d))
    if u is None:
        return np.subtract(mx, mn, dtype=d)
    return np.subtract(np.asarray(mx, dtype=d), np.asarray(mn, dtype=d), casting="unsafe",
                       dtype=u)


def _float(x: Any) -> Any:
    xp = _xp()
    return x if dkind(x.dtype) == "f" else xp.astype(x, x.device.default_float)


def bin_width(x: Any, name: str, first: Any, last: Any) -> Any:
    """The width estimator ``name`` gives for the 1-D data ``x`` (non-empty, already
    restricted to the range ``[first, last]``); 0 when it has none."""
    xp = _xp()
    n = int(x.shape[0])
    mm = xp.stack([xp.min(x), xp.max(x)]).to_numpy()
    ptp = _ptp(mm[0], mm[1])
    if name == "sqrt":
        return ptp / np.sqrt(n)
    if name == "sturges":
        return ptp / (np.log2(n) + 1.0)
    if name == "rice":
        return ptp / (2.0 * n ** (1.0 / 3))
    if name == "scott":
        return (24.0 * np.pi ** 0.5 / n) ** (1.0 / 3.0) * xp.std(_float(x)).to_numpy()[()]
    if name in ("fd", "auto"):
        p = xp.percentile(x, [75, 25]).to_numpy()
        fd = 2.0 * np.subtract(p[0], p[1]) * n ** (-1.0 / 3.0)
        if name == "fd":
            return fd
        sturges = ptp / (np.log2(n) + 1.0)
        corrected = max(fd, (ptp / np.sqrt(n)) / 2)
        return min(corrected, sturges)
    if name == "doane":
        if n <= 2:
            return 0.0
        sg1 = np.sqrt(6.0 * (n - 2) / ((n + 1.0) * (n + 3)))
        f = _float(x)
        mean = xp.mean(f)
        c = f - mean
        stats = xp.stack([xp.sqrt(xp.mean(c * c)), xp.mean(c * c * c)]).to_numpy()
        sigma = stats[0]
        if sigma > 0.0:
            g1 = stats[1] / sigma ** 3
            return ptp / (1.0 + np.log2(n) + np.log2(1.0 + np.absolute(g1) / sg1))
        return 0.0
    if name == "stone":
        return _stone(x, n, ptp, first, last)
    raise ValueError(f"{name!r} is not a valid estimator for `bins`")


def _stone(x: Any, n: int, ptp: Any, first: Any, last: Any) -> Any:
    """Stone's rule: the width ``ptp / k`` of the candidate ``k`` minimising
    ``(2 - (n + 1) * sum(p_k^2)) / (ptp / k)``, where ``p_k`` are the bin frequencies of
    ``k`` equal bins over ``[first, last]`` (NumPy's ``_hist_bin_stone``)."""
    xp = _xp()
    if n <= 1 or ptp == 0:
        return 0
    top = max(100, int(np.sqrt(n)))
    ks = np.arange(1, top + 1)
    ed = np.result_type(first, last, x.dtype)
    if np.issubdtype(ed, np.integer) or ed == np.bool_:
        ed = np.result_type(ed, float)
    if not x.device.supports(np.dtype(ed)):
        ed = np.float32
    # every candidate's edges (linspace as numpy.histogram makes them), one after another
    edges = np.concatenate([np.linspace(first, last, k + 1, endpoint=True, dtype=ed)
                            for k in ks])
    ends = np.cumsum(ks + 1)                     # one past each candidate's last edge
    starts = ends - (ks + 1)
    last_edge = np.zeros(edges.size, dtype=bool)
    last_edge[ends - 1] = True
    cd = np.promote_types(x.dtype, ed)
    s = xp.sort(xp.astype(x, cd))
    e = xp.asarray(edges.astype(cd), device=x.device)
    # counts below each edge: the last edge of a candidate includes its right end
    below = xp.where(xp.asarray(last_edge, device=x.device),
                     xp.searchsorted(s, e, side="right"), xp.searchsorted(s, e, side="left"))
    hi = np.concatenate([np.arange(a + 1, b) for a, b in zip(starts, ends)])
    counts = xp.take(below, xp.asarray(hi, device=x.device)) - \
        xp.take(below, xp.asarray(hi - 1, device=x.device))
    fd = x.device.default_float
    p = xp.astype(counts, fd) / n
    csum = xp.cumulative_sum(p * p, include_initial=True)
    bin_ends = np.cumsum(ks)
    sq = xp.take(csum, xp.asarray(bin_ends, device=x.device)) - \
        xp.take(csum, xp.asarray(bin_ends - ks, device=x.device))
    sq = sq.to_numpy()
    hh = ptp / ks
    risk = (2 - (n + 1) * sq) / hh
    best = int(ks[int(np.argmin(risk))])      # the first minimum, as min(..., key=) picks
    if best == top:
        warnings.warn("The number of bins estimated may be suboptimal.", RuntimeWarning,
                      stacklevel=user_stacklevel())
    return ptp / best


def n_equal_bins(x: Any, name: str, first: Any, last: Any) -> int:
    """The number of equal bins over ``[first, last]`` that estimator ``name`` gives for the
    flattened data ``x`` (values outside the range are dropped first), as NumPy's
    ``histogram_bin_edges``."""
    xp = _xp()
    if name not in ESTIMATORS:
        raise ValueError(f"{name!r} is not a valid estimator for `bins` (one of "
                         f"{', '.join(repr(e) for e in ESTIMATORS)})")
    if x.shape[0]:
        keep = xp.logical_and(x >= first, x <= last)
        if not bool(xp.all(keep)):
            x = x[keep]
    if x.shape[0] == 0:
        return 1
    width = bin_width(x, name, first, last)
    if not width:
        return 1
    if dkind(x.dtype) in "iub" and width < 1:
        width = 1
    delta = _ptp(np.asarray(first)[()], np.asarray(last)[()])
    return int(math.ceil(delta / width))
