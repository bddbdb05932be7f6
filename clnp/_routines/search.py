"""Eager implementations of the searching and scanning primitives: ``argmax``/``argmin``,
``cumsum``/``cumprod``, ``nonzero`` (device stream compaction) and ``searchsorted``.

Kernels come from ``clnp._kernels.argreduce``, ``.scan`` and ``.searchsorted``; this module
chooses the work mapping and launches. Sizes and strides are kernel arguments, so one program
per dtype and layout rank serves every shape.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._runtime.deferred import deferred_import
from .._core import dtypes as dt
from .._core.array import Array
from .._core.eager import (_span_ok, collapse, column_vec, contiguous_copy, convert_element_type,
                           copy_into, ew_apply, local_size, reduce_plan)
from .._core.prims import def_impl
from .._runtime.device import Device, launch

# run at first use, not at import clnp (clnp._runtime.deferred)
_searchsorted_kernels = deferred_import("clnp._kernels.searchsorted")
_scan_kernels = deferred_import("clnp._kernels.scan")
_argreduce_kernels = deferred_import("clnp._kernels.argreduce")


def _kernel(device: Device, spec: Any, render: Any, *names: str):
    """Kernel ``names`` of ``spec`` (every name of a spec shares one program)."""
    return device.kernel((spec,) + names, lambda: render(spec, *names))


def _rounded(items: int, group: int) -> int:
    return -(-items // group) * group


def _gpu_group(device: Device) -> int:
    """Work-group size of the local-memory kernels on a GPU: a power of two (tree steps
    halve it) of at most 256 items."""
    g = 1
    while g * 2 <= min(256, device.max_work_group_size):
        g *= 2
    return g


def _pad(shape: list[int], strides: list[list[int]]) -> tuple[list[int], list[list[int]]]:
    """Pad collapsed kept dims with leading unit dims to 2 (or 4): kernels decompose the
    row/output index once per row, so a unit dim costs nothing per element while every
    distinct rank would cost a program build."""
    pad = (2 if len(shape) <= 2 else 4 if len(shape) <= 4 else len(shape)) - len(shape)
    return [1] * pad + shape, [[0] * pad + st for st in strides]


# ------------------------------------------------------------------------------ argmax/argmin
def _argreduce(x: Array, op: str, axis: int | None) -> Array:
    """Index (int64) of the first maximum/minimum along ``axis`` (flattened when None);
    NaN counts as the extreme. The caller rejects zero-size searches."""
    device = x.device
    axes = tuple(range(x.ndim)) if axis is None else (axis,)
    kept = [i for i in range(x.ndim) if i not in axes]
    out_shape = tuple(x.shape[i] for i in kept)
    n_out = math.prod(out_shape)
    nred = math.prod(x.shape[i] for i in axes)
    out = Array.empty(out_shape, dt.int64, device)
    if n_out == 0:
        return out
    if nred == 0:
        raise ValueError(f"{op}: attempt to get {op} of an empty sequence")
    if nred == 1:
        copy_into(out, 0, dt.int64)
        return out
    oshape, (ostr,) = _pad(*collapse(out_shape, [[x._strides[i] for i in kept]]))
    rshape, (rstr,) = collapse([x.shape[i] for i in axes], [[x._strides[i] for i in axes]])
    kind, mode, G, parts = _arg_plan(device, n_out, nred, ostr[-1], rstr, x.dtype.itemsize)
    chunk = -(-nred // parts)
    index = "int" if _span_ok([x], max(n_out * parts * G, nred)) else "long"
    # the column width depends on the device only, so every kernel of a dtype shares one spec
    vec = column_vec(device, x.dtype.itemsize)
    spec = _argreduce_kernels.ArgReduceSpec(x.dtype, len(oshape), len(rshape), G, index, mode, vec)
    pv = Array.empty((n_out * parts,), _argreduce_kernels.partial_dtype(x.dtype),
                     device) if parts > 1 else None
    pi = Array.empty((n_out * parts,), dt.int64, device) if parts > 1 else out
    args = [n_out, parts, chunk, nred, *oshape, *rshape, x._buf, x._offset, *ostr, *rstr,
            (pv if pv is not None else pi)._buf, pi._buf]
    if kind in ("column", "rows"):
        L = local_size(device)
        per = vec if kind == "column" else 1
        launch(device, _kernel(device, spec, _argreduce_kernels.render_argreduce, op, kind),
               (_rounded(-(-n_out // per) * parts, L),), (L,), *args)
    else:
        launch(device, _kernel(device, spec, _argreduce_kernels.render_argreduce, op, "local"),
               (n_out * parts * G,), (G,), *args)
    if parts > 1:
        launch(device, _kernel(device, spec, _argreduce_kernels.render_argreduce, op, "final"),
               (n_out * G,), (G,), n_out, parts, pv._buf, pi._buf, out._buf)
    return out


def _arg_plan(device: Device, n_out: int, nred: int, so: int, rstr: list[int],
              itemsize: int = 8) -> tuple[str, str, int, int]:
    """(``local`` | ``column`` | ``rows``, ``blocked`` | ``group`` layout of ``local``,
    work-group size of ``local``, chunks per output) for ``n_out`` searches of ``nred``
    elements (innermost kept stride ``so``, reduced strides ``rstr``): the reductions' plan
    (:func:`clnp._core.eager.reduce_plan`)."""
    # inner = 1: no ``tile`` kernel here (its work goes to ``column``)
    mode, G, parts, _ = reduce_plan(device, n_out, nred, 1, so, rstr, itemsize)
    if mode in ("column", "rows"):
        # both launch with the local kernel's spec, so every kernel shares one program
        return "rows" if mode == "rows" else "column", "blocked" if device.is_cpu else "group", \
            16 if device.is_cpu else _gpu_group(device), parts
    # the local kernels' tree halves the group: a power of two
    return "local", mode, G if device.is_cpu else min(G, _gpu_group(device)), parts


@def_impl("argmax")
def argmax(x: Array, *, axis: int | None) -> Array:
    return _argreduce(x, "argmax", axis)


@def_impl("argmin")
def argmin(x: Array, *, axis: int | None) -> Array:
    return _argreduce(x, "argmin", axis)


# ------------------------------------------------------------------------------ scans
_INIT = {"sum": 0, "prod": 1}


def _scan_geometry(device: Device, dtype: np.dtype) -> tuple[int, int]:
    """(work-group size, elements per item per tile) of the ``rows`` scan kernels: a tile (and
    the group's totals) take at most half of the device's local memory."""
    G, K = (16, 16) if device.is_cpu else (_gpu_group(device), 8)
    size = _scan_kernels.acc_dtype(dtype).itemsize
    while K > 1 and (G * K + G * K // 32 + G) * size > device.local_mem // 2:
        K //= 2
    return G, K


def _scan(x: Array, op: str, axis: int, include_initial: bool) -> Array:
    """Inclusive scan of ``x`` along ``axis`` in x's dtype; with ``include_initial`` the
    identity comes first and the axis grows by one."""
    device = x.device
    init = 1 if include_initial else 0
    L = x.shape[axis]
    out_shape = tuple(n + init if i == axis else n for i, n in enumerate(x.shape))
    out = Array.empty(out_shape, x.dtype, device)
    if out.size == 0:
        return out
    if L == 0:
        copy_into(out, _INIT[op], x.dtype)
        return out
    kept = [i for i in range(x.ndim) if i != axis]
    n_rows = math.prod(x.shape[i] for i in kept)
    kshape, (kx, ky) = _pad(*collapse([x.shape[i] for i in kept],
                                    [[x._strides[i] for i in kept],
                                     [out._strides[i] for i in kept]]))
    sx, sy = x._strides[axis], out._strides[axis]
    G, K = _scan_geometry(device, x.dtype)
    kind, parts = _scan_plan(device, n_rows, L, sx, kx[-1])
    index = "int" if _span_ok([x, out], max(out.size, n_rows * parts * G * K)) else "long"
    spec = _scan_kernels.ScanSpec(op, x.dtype, len(kshape), G, K, index)
    row = [*kshape, x._buf, x._offset, *kx, sx]
    dst = [out._buf, out._offset, *ky, sy]
    chunk = -(-L // parts)
    Lc = local_size(device)
    if kind == "column":
        grid, group = _rounded(n_rows * parts, Lc), Lc
    else:
        grid, group = n_rows * parts * G, G
    tot = out   # not read when parts == 1
    if parts > 1:
        tot = Array.empty((n_rows * parts,), _scan_kernels.acc_dtype(x.dtype), device)
        launch(device, _kernel(device, spec, _scan_kernels.render_scan,
                               "coltotals" if kind == "column" else "totals"),
               (grid,), (group,), n_rows, parts, chunk, L, *row, tot._buf)
        launch(device, _kernel(device, spec, _scan_kernels.render_scan, "carry"),
               (_rounded(n_rows, Lc),), (Lc,), n_rows, parts, tot._buf)
    launch(device, _kernel(device, spec, _scan_kernels.render_scan, kind), (grid,), (group,),
           n_rows, parts, chunk, L, init, *row, *dst, tot._buf)
    return out


def _scan_plan(device: Device, n_rows: int, L: int, sx: int, sk: int) -> tuple[str, int]:
    """(``rows`` | ``column``, chunks per row) for ``n_rows`` rows of length ``L`` with axis
    stride ``sx`` and innermost kept stride ``sk``."""
    cu = device.compute_units
    if device.is_cpu:
        # a core scans a row sequentially at memory speed: split rows only when there are
        # too few of them to occupy the cores
        if n_rows >= 4 * cu or L <= 1024:
            return "column", 1
        return "rows", max(1, min(-(-L // 1024), -(-4 * cu // n_rows)))
    if L <= 64 or (n_rows >= 256 and abs(sx) > abs(sk)):
        # short rows, or an outer axis (adjacent items then read adjacent elements): chunks
        # of at least 32 elements until the device has some 2048 items per compute unit
        return "column", max(1, min(L // 32, -(-2048 * cu // n_rows)))
    G, K = _scan_geometry(device, np.dtype(np.float32))
    return "rows", max(1, min(-(-L // (4 * G * K)), -(-8 * cu // n_rows)))


@def_impl("cumsum")
def cumsum(x: Array, *, axis: int, include_initial: bool = False) -> Array:
    return _scan(x, "sum", axis, include_initial)


@def_impl("cumprod")
def cumprod(x: Array, *, axis: int, include_initial: bool = False) -> Array:
    return _scan(x, "prod", axis, include_initial)


# ------------------------------------------------------------------------------ nonzero
@def_impl("nonzero", multiple_results=True)
def nonzero(x: Array) -> tuple[Array, ...]:
    """Indices of the non-zero elements, one int64 array per dim (a 0-d input counts as
    1-d). Data-dependent shape: one host read of the count; the rest stays on the device
    (flags, an int64 scan, a compaction kernel)."""
    device = x.device
    shape = x.shape or (1,)
    n = math.prod(shape)
    if n == 0:
        return tuple(Array.empty((0,), dt.int64, device) for _ in shape)
    nz = x if x.dtype == dt.bool_ else ew_apply("not_equal", [x, 0], x.dtype, dt.bool_,
                                                  [x.dtype, x.dtype])
    flags = convert_element_type(nz, dtype=dt.int64)
    flat = Array(flags._buf, flags._offset, (n,), (1,), dt.int64, device)   # dense, C order
    incl = _scan(flat, "sum", 0, False)
    count = int(Array(incl._buf, n - 1, (1,), (1,), dt.int64, device).to_numpy()[0])
    res = Array.empty((len(shape), count), dt.int64, device)
    if count:
        dims = Array.from_numpy(np.asarray(shape, np.int64), device)
        # the program of the scan above (the same spec) holds the compaction kernel
        spec = _scan_kernels.ScanSpec("sum", dt.int64, 2, *_scan_geometry(device, dt.int64),
                        "int" if _span_ok([incl], n) else "long")
        L = local_size(device)
        launch(device, _kernel(device, spec, _scan_kernels.render_scan, "compact"),
               (_rounded(n, L),), (L,), n, len(shape), dims._buf, incl._buf, count, res._buf)
    return tuple(Array(res._buf, d * count, (count,), (1,), dt.int64, device)
                 for d in range(len(shape)))


# ------------------------------------------------------------------------------ searchsorted
@def_impl("searchsorted")
def searchsorted(x1: Array, x2: Array, *sorter: Array, side: str = "left") -> Array:
    """Insertion indices (int64, shaped like ``x2``) of ``x2`` in the sorted 1-d ``x1`` (or in
    ``x1[sorter]``); ``x1`` and ``x2`` share a dtype. NaNs sort last, as in NumPy. Sorter
    values outside ``[0, len(x1))`` are clamped (never read out of bounds)."""
    device = x1.device
    out = Array.empty(x2.shape, dt.int64, device)
    n2, m = x2.size, x1.shape[0]
    if n2 == 0:
        return out
    if m == 0:
        copy_into(out, 0, dt.int64)
        return out
    if not x2.is_contiguous:
        x2 = contiguous_copy(x2)
    srt = sorter[0] if sorter else None
    if srt is not None and srt.dtype != dt.int64:
        srt = convert_element_type(srt, dtype=dt.int64)
    spec = _searchsorted_kernels.SearchSpec(x1.dtype)
    kern = device.kernel(spec, lambda: _searchsorted_kernels.render_searchsorted(spec))
    s_args = [srt._buf, srt._offset, srt._strides[0], 1] if srt is not None else \
        [out._buf, 0, 0, 0]
    L = local_size(device)
    launch(device, kern, (_rounded(n2, L),), (L,), n2, m, 1 if side == "right" else 0,
           x1._buf, x1._offset, x1._strides[0], *s_args, x2._buf, x2._offset, out._buf)
    return out
