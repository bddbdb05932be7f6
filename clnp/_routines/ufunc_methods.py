"""Eager launches of the ufunc methods that have no dedicated primitive: sequential folds of a
table op (``reduce``/``reduceat``/``accumulate`` of ops without a reduction or scan kernel:
:func:`clnp._core.folds.fold`) and ``at`` (atomic adds where the device has them, else
sort-and-segment).

Kernels come from :mod:`clnp._kernels.fold`. These run on concrete arrays only; the namespace
(:mod:`clnp._array_api.ufunc`) composes the same results from primitives under transformations.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from .._core import dtypes as dt
from .._core.array import Array
from .._kernels import ctypes as C
from .._kernels.fold import AtSpec, render_at
from .._core.folds import _splat
from .._core.eager import broadcast_to, collapse, local_size
from .sort import argsort
from .._runtime.device import Device, launch

def element_offsets(a: Array, indices: Sequence[Array]) -> Array:
    """int64 storage offsets of ``a[i0, i1, ..., :, ...]`` (integer index arrays for the
    leading dims, broadcast together; negative indices wrap), shaped like that selection.
    One bounds-checked launch for the indexed dims (IndexError before anything is written),
    plus one add per remaining dim."""
    from .._core.eager import broadcast_shapes, iota, linear_offsets
    bshape = broadcast_shapes(*(i.shape for i in indices))
    off = linear_offsets(a, list(indices), bshape)
    from .._core.eager import ew_apply
    off = ew_apply("add", [off, a._offset], dt.int64, dt.int64, [dt.int64, dt.int64])
    k = len(indices)
    for n, st in zip(a.shape[k:], a._strides[k:]):
        lead = off.ndim
        off = Array(off._buf, off._offset, off.shape + (1,), off._strides + (0,), dt.int64,
                    off.device)
        r = iota(n=n, start=0, step=st, dtype=dt.int64, device=a.device)
        r = Array(r._buf, r._offset, (1,) * lead + (n,), (0,) * lead + (1,), dt.int64,
                  r.device)
        off = ew_apply("add", [off, r], dt.int64, dt.int64, [dt.int64, dt.int64])
    return off


def scan(x: Array, op: str, axis: int) -> Array:
    """Inclusive scan of reorderable table op ``op`` along ``axis`` (``x`` in its compute
    dtype) by the parallel scan kernels of ``cumsum``, generalised to the op's template."""
    from .search import _scan
    return _scan(x, op, axis, False)


def at_segments(a: Array, offsets: Array, b: Array | None, op: str,
                compute: np.dtype) -> None:
    """``a.flat_storage[offsets[k]] = op(a..., b[k])`` for every ``k`` in order, in place:
    ``offsets`` (int64, 1-d) are element offsets into ``a``'s buffer, ``b`` (1-d, in the
    ``compute`` dtype, or None for unary ops) the operands. Repeated offsets apply the op
    once per occurrence, in their original order (sort-and-segment: a stable sort groups
    them, one work-item per group walks its run)."""
    device = a.device
    n = offsets.size
    if n == 0:
        return
    perm = argsort(offsets, axis=0, descending=False, stable=True)
    from .._core.eager import gather
    srt = gather(offsets, perm, in_bounds=True)
    spec = AtSpec(op, a.dtype, compute, _splat(device))
    kernel = device.kernel(spec, lambda: render_at(spec))
    args: list[Any] = [n, srt._buf, perm._buf, a._buf]
    if b is not None:
        args.append(b._buf)
    L = local_size(device)
    launch(device, kernel, (-(-n // L) * L,), (L,), *args)


def at_add_atomic(a: Array, offsets: Array, b: Array) -> bool:
    """``a``'s elements at ``offsets`` += ``b`` with atomic adds; False (nothing done) when the
    device has no atomic add for ``a``'s dtype or ``a`` is not contiguous."""
    from .._kernels.indexing import scatter_add_supported
    from .scatter import scatter_into
    if not a.is_contiguous or b.dtype != a.dtype or \
            not scatter_add_supported(a.dtype, a.device.extensions):
        return False
    flat = Array(a._buf, a._offset, (a.size,), (1,), a.dtype, a.device)
    from .._core.eager import ew_apply
    rel = ew_apply("subtract", [offsets, a._offset], dt.int64, dt.int64, [dt.int64, dt.int64]) \
        if a._offset else offsets
    scatter_into(flat, [rel], b, in_bounds=True, accumulate=True)
    return True
