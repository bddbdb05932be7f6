"""Eager launches of the ufunc methods that have no dedicated primitive: sequential folds of a
table op (``reduce``/``reduceat``/``accumulate`` of ops without a reduction or scan kernel)
and ``at`` (atomic adds where the device has them, else sort-and-segment).

Kernels come from :mod:`clnp._kernels.fold`. These run on concrete arrays only; the namespace
(:mod:`clnp._array_api.ufunc`) composes the same results from primitives under transformations.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from .._runtime import dtypes as dt
from .._core.array import Array
from .._kernels import ctypes as C
from .._kernels.fold import AtSpec, FoldSpec, render_at, render_fold
from .._core.eager import broadcast_to, collapse, local_size
from .sort import argsort
from .._runtime.device import Device, launch

_PADDED_NDIM = {3: 4, 5: 6}      # fewer distinct kernels, as for elementwise launches


def _splat(device: Device) -> int:
    return 4 if device.is_cpu else 1     # the elementwise kernels' choice (same math results)


def _upload_i64(values: Sequence[int], device: Device) -> Array:
    return Array.from_numpy(np.asarray(values, dtype=np.int64), device)


def fold(x: Array, op: str, axis: int, starts: Sequence[int], ends: Sequence[int], mode: str,
         init: Any = None, mask: Array | None = None, refold: Array | None = None) -> Array:
    """Fold ``op`` along ``axis`` of ``x`` (already in the compute dtype) over the segments
    ``[starts[s], ends[s])`` (``mode="reduce"``: the axis becomes one entry per segment), or
    scan it along the whole axis (``mode="accumulate"``). ``init`` starts every fold from
    that value; ``mask`` (bool, broadcastable to ``x``) selects the elements that take part.
    ``refold`` (complex reduce) is the result of a parallel reduction, shaped as the result:
    its entries that are not finite are folded again, in place, and it is returned."""
    device = x.device
    kept = [i for i in range(x.ndim) if i != axis]
    nseg = len(starts)
    shape = list(x.shape)
    if mode == "reduce":
        shape[axis] = nseg
    y = Array.empty(tuple(shape), x.dtype, device) if refold is None else refold
    n = math.prod(x.shape[i] for i in kept)
    if n == 0 or nseg == 0 or y.size == 0:
        return y
    views = [x, y]
    if mask is not None:
        views.append(broadcast_to(mask, shape=x.shape))
    cshape, cstr = collapse([x.shape[i] for i in kept],
                            [[v._strides[i] for i in kept] for v in views])
    nd = max(1, _PADDED_NDIM.get(len(cshape), len(cshape)))
    pad = nd - len(cshape)
    cshape = [1] * pad + cshape
    cstr = [[0] * pad + st for st in cstr]
    spec = FoldSpec(op, x.dtype, mode, nd, init is not None, mask is not None,
                    _splat(device), refold is not None)
    kernel = device.kernel(spec, lambda: render_fold(spec))
    st, en = _upload_i64(starts, device), _upload_i64(ends, device)
    args: list[Any] = [n, nseg, *cshape, x._buf, x._offset, *cstr[0], x._strides[axis],
                       st._buf, en._buf, y._buf, y._offset, *cstr[1], y._strides[axis]]
    if mask is not None:
        m = views[2]
        args += [m._buf, m._offset, *cstr[2], m._strides[axis]]
    if init is not None:
        args.append(np.asarray(init, C.scalar_arg_dtype(x.dtype))[()])
    L = local_size(device)
    launch(device, kernel, (-(-(n * nseg) // L) * L,), (L,), *args)
    return y


def prod_refold(x: Array, axes: Sequence[int], out: Array) -> None:
    """Complex ``prod`` of ``x`` over ``axes`` as NumPy's loop computes it where ``out`` (the
    parallel result, kept dims in order) is not finite: ``1 * x0 * x1 * ...`` left to right,
    whose NaN and infinite components a tree of partial products does not reproduce
    (``prod([1, infj])`` is ``nan+infj``, a tree gives ``nan+nanj``). Finite outputs are
    left as they are, without a host read."""
    from .._core.eager import contiguous_copy, convert_element_type, try_view_reshape
    kept = [i for i in range(x.ndim) if i not in axes]
    nred = math.prod(x.shape[i] for i in axes)
    moved = Array(x._buf, x._offset, tuple(x.shape[i] for i in kept + list(axes)),
                  tuple(x._strides[i] for i in kept + list(axes)), x.dtype, x.device)
    shape = out.shape + (nred,)
    flat = try_view_reshape(moved, shape)
    if flat is None:
        flat = try_view_reshape(contiguous_copy(moved), shape)
    if flat.dtype != out.dtype:
        flat = convert_element_type(flat, dtype=out.dtype)
    into = Array(out._buf, out._offset, shape[:-1] + (1,), out._strides + (0,), out.dtype,
                 out.device)
    fold(flat, "multiply", len(shape) - 1, [0], [nred], "reduce", init=1, refold=into)


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
    from .._core.eager import scatter_into
    if not a.is_contiguous or b.dtype != a.dtype or \
            not scatter_add_supported(a.dtype, a.device.extensions):
        return False
    flat = Array(a._buf, a._offset, (a.size,), (1,), a.dtype, a.device)
    from .._core.eager import ew_apply
    rel = ew_apply("subtract", [offsets, a._offset], dt.int64, dt.int64, [dt.int64, dt.int64]) \
        if a._offset else offsets
    scatter_into(flat, [rel], b, in_bounds=True, accumulate=True)
    return True
