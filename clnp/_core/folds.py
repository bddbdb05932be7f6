"""Sequential folds of an elementwise table op along one axis, as NumPy's loops compute them
(left to right, one item per output segment): the ufunc methods' ``reduce``/``reduceat``/
``accumulate`` of ops that have no reduction or scan kernel (``clnp._routines.ufunc_methods``)
and the refold of complex products that a parallel reduction cannot reproduce.

Kernels come from :mod:`clnp._kernels.fold`.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from .._kernels import ctypes as C
from .._kernels.fold import FoldSpec, render_fold
from .._runtime.device import Device, launch
from .array import Array
from .eager import (broadcast_to, collapse, contiguous_copy, convert_element_type, local_size,
                    try_view_reshape)

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
