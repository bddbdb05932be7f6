"""Scatter: writing values through index arrays, ``x[i0, i1, ...] = values``, with NumPy's
rule for repeated indices (the last value in C order lands), and the ``scatter_add``
primitive (repeated indices add up, atomically).

A scatter first decides which of several writes to one target wins: a table of winners over
the targets' span where it is small next to the index count, else a stable sort of the
offsets (:func:`clnp._routines.sort.argsort`), which is why scatter lives above the core's
gather. Kernels come from :mod:`clnp._kernels.indexing`.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

from .._core import dtypes as dt
from .._runtime.device import launch
from .._core.array import Array
from .._core.eager import (_index_kernel, broadcast_shapes, collapse, contiguous_copy,
                           copy_into, full, gather, linear_offsets, local_size)
from .._core.prims import def_impl
from .sort import argsort


# A SCATTER_TABLE scatter's winner table spans the targets' offsets; it is used while that
# span is at most this floor or this many times the index count (beyond, a stable sort of the
# offsets costs less than filling the table).
SCATTER_TABLE_FLOOR = 1 << 20
SCATTER_TABLE_RATIO = 8


def _scatter_winners(x: Array, k: int, off: Array) -> tuple[int, Array | None, int, Array | None,
                                                             Array]:
    """How a scatter through the offsets ``off`` (into the leading ``k`` dims of ``x``) keeps
    the last of repeated indices: ``(mode, win, lo, perm, off)`` for the scatter kernel."""
    from .._kernels.indexing import (SCATTER_ALL, SCATTER_SORTED, SCATTER_TABLE,
                                     render_scatter_winner)
    n = off.size
    if n < 2:
        return SCATTER_ALL, None, 0, None, off
    lo = sum(min(0, (d - 1) * s) for d, s in zip(x.shape[:k], x._strides[:k]))
    span = 1 + sum((d - 1) * abs(s) for d, s in zip(x.shape[:k], x._strides[:k]))
    if n < 2 ** 31 and span <= max(SCATTER_TABLE_FLOOR, SCATTER_TABLE_RATIO * n):
        win = full(shape=(span,), value=-1, dtype=dt.int32, device=x.device)
        kern = x.device.kernel("clnp_scatter_winner", render_scatter_winner)
        L = local_size(x.device)
        launch(x.device, kern, (-(-n // L) * L,), (L,), n, off._buf, lo, win._buf)
        return SCATTER_TABLE, win, lo, None, off
    flat = Array(off._buf, off._offset, (n,), (1,), off.dtype, off.device)   # dense, C order
    perm = argsort(flat, axis=0, descending=False, stable=True)
    return SCATTER_SORTED, None, 0, perm, gather(flat, perm, in_bounds=True)


def scatter_into(x: Array, indices: Sequence[Array], values: Any,
                 in_bounds: bool = False, accumulate: bool = False) -> None:
    """``x[i0, i1, ...] = values`` in place (``values`` broadcast to the indexing result).
    Bounds are checked before anything is written. With repeated indices the last value in C
    order lands, as in NumPy, on every device (a winner per target is chosen first, see
    clnp._kernels.indexing); with ``accumulate`` every value is added (atomically) instead."""
    if accumulate:
        from .._kernels.indexing import scatter_add_supported
        if not scatter_add_supported(x.dtype, x.device.extensions):
            raise TypeError(f"scatter_add: no atomic add for {x.dtype} on {x.device}")
    bshape = broadcast_shapes(*(i.shape for i in indices))
    k = len(indices)
    rest = x.shape[k:]
    full_shape = bshape + rest
    if isinstance(values, Array):
        if broadcast_shapes(values.shape, full_shape) != full_shape:
            raise ValueError(f"shape mismatch: value array of shape {values.shape} could not be "
                             f"broadcast to indexing result of shape {full_shape}")
    off = linear_offsets(x, indices, bshape, in_bounds)
    if math.prod(full_shape) == 0:
        return
    if isinstance(values, Array) and values.shape == full_shape and \
            values.dtype == x.dtype and values.is_contiguous and values._buf is not x._buf:
        vals = values      # read in place (a gradient scattered into an embedding table)
    else:
        vals = Array.empty(full_shape, x.dtype, x.device)
        copy_into(vals, values, None if isinstance(values, Array) else x.dtype)
    rshape, (rstr,) = collapse(rest, [x._strides[k:]])
    kern = _index_kernel("scatter_add" if accumulate else "scatter", x, len(rshape))
    n_b, n_rest = math.prod(bshape), math.prod(rest)
    L = local_size(x.device)
    args: list[Any] = [n_b, n_rest, *rshape, x._buf, x._offset, *rstr]
    if accumulate:
        args += [off._buf, vals._buf, vals._offset]
    else:
        mode, win, lo, perm, off = _scatter_winners(x, k, off)
        args += [off._buf, vals._buf, vals._offset, mode, (off if win is None else win)._buf, lo,
                 (off if perm is None else perm)._buf]
    launch(x.device, kern, (-(-(n_b * n_rest) // L) * L,), (L,), *args)


@def_impl("scatter_add")
def scatter_add(x: Array, values: Array, *indices: Array, in_bounds: bool = False) -> Array:
    """A copy of ``x`` with ``values`` added at ``x[i0, i1, ...]`` (repeated indices add up):
    the transpose of ``gather``."""
    out = contiguous_copy(x)
    scatter_into(out, indices, values, in_bounds=in_bounds, accumulate=True)
    return out
