"""Eager implementations of the primitives: shape bookkeeping, kernel selection and launches.

Views (reshape, transpose, broadcast, slice) are metadata-only here; every computing primitive
renders (once per spec and device) and launches a kernel from ``clnp._kernels``.
"""
from __future__ import annotations

import math
import threading
from typing import Any, NoReturn, Sequence

import numpy as np

from . import device_checks
from . import dtypes as dt
from .._kernels import op_table as _ops
from .array import Array, c_strides
from .._kernels import ctypes as C
from .._kernels.elementwise import EwSpec, Instr, Operand, can_vectorize, render_elementwise
from .._kernels.reduction import ReduceSpec, fusable, render_reduction, vector_ok
from .._runtime import capture_hooks as _hooks
from .._runtime import launch as _launch
from .prims import def_impl, primitive
from .._runtime.deferred import deferred_import
from .._runtime.device import Device, launch
from .._runtime.opencl import cl
from .dtypes import kind as dkind

# run at the first fill, not at import clnp (clnp._runtime.deferred)
_iota_kernels = deferred_import("clnp._kernels.iota")

_I32 = 2 ** 31 - 1


def local_size(device: Device) -> int:
    return 64 if device.is_cpu else min(256, device.max_work_group_size)


def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The broadcast shape; ValueError naming every shape when they are incompatible."""
    nd = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(nd):
        n = 1
        for s in shapes:
            k = i - nd + len(s)
            if k < 0:
                continue
            m = s[k]
            if m != 1:
                if n != 1 and n != m:
                    raise ValueError("shapes " + ", ".join(str(tuple(s)) for s in shapes)
                                     + " cannot be broadcast together")
                n = m
        out.append(n)
    return tuple(out)


def broadcast_strides(a: Array, shape: tuple[int, ...]) -> tuple[int, ...]:
    return strides_broadcast_to(a._shape, a._strides, shape)


def strides_broadcast_to(old_shape: Sequence[int], old_strides: Sequence[int],
                         shape: Sequence[int]) -> tuple[int, ...]:
    """Strides that read a layout ``old_shape``/``old_strides`` broadcast to ``shape``
    (NumPy's rule, dims aligned at the end): 0 along new dims and dims of one element. Used
    by eager views and by ``clnp_grad.jit``'s whole-step kernels.

    Examples
    --------
    >>> from clnp._core.eager import strides_broadcast_to
    >>> strides_broadcast_to((3, 1), (1, 1), (2, 3, 4))
    (0, 1, 0)
    """
    pad = len(shape) - len(old_shape)
    return tuple(0 if k < pad or old_shape[k - pad] == 1 else old_strides[k - pad]
                 for k in range(len(shape)))


def collapse(shape: Sequence[int], strides: Sequence[Sequence[int]]):
    """Drop unit dims and merge dims that are contiguous for *every* operand."""
    dims = [i for i, n in enumerate(shape) if n != 1]
    cshape: list[int] = []
    cstr: list[list[int]] = [[] for _ in strides]
    for i in dims:
        if cshape and all(st[-1] == s[i] * shape[i] for st, s in zip(cstr, strides)):
            cshape[-1] *= shape[i]
            for st, s in zip(cstr, strides):
                st[-1] = s[i]
            continue
        cshape.append(shape[i])
        for st, s in zip(cstr, strides):
            st.append(s[i])
    return cshape, cstr


def _span_ok(arrays: Sequence[Array], n: int) -> bool:
    if n > _I32:
        return False
    for a in arrays:
        lo, hi = a._span()
        if lo < 0 or hi > _I32:
            return False
    return True


def _math_heavy(body: tuple[Instr, ...]) -> bool:
    """Whether ``body`` calls a math builtin (its op's float template goes through a
    ``clnp_vm_`` wrapper): compute-bound, where memory-bound bodies are not."""
    return any("clnp_vm_" in _ops.lookup(i.op).c.get("f", "") for i in body)


def vector_bytes(device: Device) -> int:
    """Bytes of the vectors CPU kernels compute on: the device's preferred float vector,
    16 to 64 (PoCL: 64 where it targets AVX-512, 32 on AVX2)."""
    return max(16, min(64, 4 * device.preferred_vector_width.get("float", 8)))


def _vector_width(device: Device, dtypes: list[np.dtype], body: tuple[Instr, ...]) -> int:
    if not device.is_cpu:
        # GPUs: one element per work-item, except chains of math builtins on 32-bit data,
        # where four give the instruction-level parallelism that hides their latency
        # (NVIDIA H200, ew_chain at 2^24: 109 us with one element, 70 us with float4; a
        # memory-bound body gains nothing), and 8- and 16-bit data, whose one-element
        # accesses use a quarter or half of each memory transaction (H100, a float16
        # relu(x * 1.5 + 0.5) at 2^24 by hand: 0.051 ms with one element, 0.028 ms with four)
        sizes = [d.itemsize for d in dtypes]
        return 4 if (_math_heavy(body) or min(sizes) <= 2) and max(sizes) <= 4 else 1
    # a cache line per vector: PoCL's float16 add/sin run ~10% faster than float8 ones
    return max(1, min(16, 64 // max(C.compute_itemsize(d) for d in dtypes)))


# Strided kernels exist for 1, 2, 4 and 6 collapsed dims; other counts are padded up, since
# every distinct kernel costs a compile (0.2-1.5 s on PoCL) while a unit dim costs little.
_PADDED_NDIM = {3: 4, 5: 6}
_ANY_OFFSET = (-(1 << 62), 1 << 62)


def _dense(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """``strides`` address ``shape`` densely in C order (so a flat index addresses it)."""
    acc = 1
    for n, st in zip(reversed(shape), reversed(strides)):
        if n != 1 and st != acc:
            return False
        acc *= n
    return True


def _rel_span(shape: Sequence[int], strides: Sequence[int]) -> tuple[int, int]:
    """[lo, hi) of the elements a view touches, relative to its offset."""
    lo = hi = 0
    for n, s in zip(shape, strides):
        if s > 0:
            hi += (n - 1) * s
        else:
            lo += (n - 1) * s
    return lo, hi + 1


class LaunchPlan:
    """Everything about one elementwise launch that depends only on dtypes and layouts.

    Eager code runs the same op on the same shapes over and over, so the kernel, the launch
    geometry and the packed argument list are built once per (program, dtypes, shapes,
    strides); a call only drops its buffers, offsets and scalars into a copy of
    ``template``. ``limits`` bound each view's offset: inside them the plan's ``int``
    indices address every element the view touches."""

    __slots__ = ("kernel", "gsize", "lsize", "template", "slots", "scalars", "limits",
                 "cacheable", "launch")

    def __init__(self, kernel: Any, gsize: tuple[int, ...], lsize: tuple[int, ...],
                 template: list[Any], slots: tuple[int, ...],
                 scalars: tuple[tuple[int, int, np.dtype | None], ...],
                 limits: tuple[tuple[int, int], ...], cacheable: bool):
        self.kernel, self.gsize, self.lsize = kernel, gsize, lsize
        self.template, self.slots, self.scalars = template, slots, scalars
        self.limits, self.cacheable = limits, cacheable
        # the enqueue itself, without an event where that is cheaper (NVIDIA)
        self.launch = _launch.Launch(kernel, gsize, lsize)

    def fill(self, views: Sequence[Array], args: Sequence[Any]) -> list[Any] | None:
        """The kernel's argument list with the buffers and offsets of ``views`` (the array
        operands, then the outputs; a prefix of them is fine, the caller fills the rest) and
        the scalar operands of ``args``; None when an offset lies outside ``limits``."""
        kargs = self.template.copy()
        for pos, (lo, hi), v in zip(self.slots, self.limits, views):
            off = v._offset
            if not lo <= off <= hi:
                return None
            kargs[pos] = v._buf
            kargs[pos + 1] = off
        for i, pos, cdt in self.scalars:
            kargs[pos] = args[i] if cdt is None else np.asarray(args[i], cdt)[()]
        return kargs


_PLANS: dict[tuple, LaunchPlan] = {}
_PLANS_MAX = 4096     # distinct layouts kept: a program sweeping shapes must not grow it forever


def remember_plan(cache: dict, key: Any, plan: Any) -> None:
    if len(cache) >= _PLANS_MAX:
        cache.clear()
    cache[key] = plan


def plan_elementwise(device: Device, body: tuple[Instr, ...], args: Sequence[Any],
                     in_dtypes: Sequence[np.dtype], outs: Sequence[Array]) -> LaunchPlan:
    """The launch plan for ``body`` over ``args`` (Arrays or scalars) writing ``outs``.

    Operands dense over the output shape get the flat (vectorised on CPUs) kernel; others
    the strided kernel over the collapsed dims. Indices are 32-bit when every view's
    elements are addressable with them; such plans are cached by layout (``cacheable``)."""
    shape = outs[0]._shape
    n = math.prod(shape)
    arrays = [a for a in args if isinstance(a, Array)]
    views = arrays + list(outs)
    contiguous = all(v._shape == shape and _dense(shape, v._strides) for v in views)
    if contiguous:
        cshape: list[int] = []
        cstr: list[list[int]] = [[] for _ in views]
        spans = [(0, n)] * len(views)
    else:
        strides = [broadcast_strides(a, shape) for a in arrays] + [o._strides for o in outs]
        cshape, cstr = collapse(shape, strides)
        pad = _PADDED_NDIM.get(len(cshape), len(cshape)) - len(cshape)
        if pad:  # fewer distinct kernels: a unit dim costs one cheap div/mod per element
            cshape = [1] * pad + cshape
            cstr = [[0] * pad + st for st in cstr]
        spans = [_rel_span(v._shape, v._strides) for v in views]
    small = n <= _I32 and all(v._offset + lo >= 0 and v._offset + hi <= _I32
                              for v, (lo, hi) in zip(views, spans))
    scalar_flags = tuple(not isinstance(a, Array) for a in args)
    out_dtypes = tuple(o._dtype for o in outs)
    index = "int" if small else "long"
    tile = _EW_TILE if device.is_cpu and n >= _EW_TILE * _EW_TILE and _transposed(cshape, cstr) \
        else 0
    strided = device.is_cpu and not contiguous and not tile and len(cshape) > 1
    unit = _unit_pattern(cstr, len(arrays)) if strided else ()
    if unit and not can_vectorize(body, list(in_dtypes) + [i.out_dtype for i in body] +
                                  list(out_dtypes)):
        unit = ()
    inner = _EW_INNER if strided and cshape[-1] >= (_EW_STRETCH_MIN_VEC if unit else
                                                    _EW_STRETCH_MIN) else 0
    # CPUs, innermost dims too short for stretches: consecutive elements across all dims
    carry = _EW_INNER if strided and not inner and n >= 2 * _EW_INNER else 0
    if inner and unit:
        inner = _EW_INNER_VEC
    else:
        unit = ()
    kkey = (body, tuple(in_dtypes), scalar_flags, out_dtypes, len(cshape), contiguous, index,
            tile, inner, unit, carry)
    kw = device._kernels.get(kkey)
    if kw is None:
        kw = device._kernels[kkey] = _elementwise_kernel(
            device, body, in_dtypes, scalar_flags, out_dtypes, len(cshape), contiguous, index,
            tile, inner, unit, carry)
    kernel, width = kw
    template: list[Any] = [n] + cshape
    slots: list[int] = []
    scalars: list[tuple[int, int, np.dtype | None]] = []
    k = 0
    for i, (a, d) in enumerate(zip(args, in_dtypes)):
        if isinstance(a, Array):
            slots.append(len(template))
            template += [None, None] + cstr[k]
            k += 1
        else:
            scalars.append((i, len(template), d if dkind(d) == "c" else None))
            template.append(None)
    for j in range(len(outs)):
        slots.append(len(template))
        template += [None, None] + cstr[len(arrays) + j]
    L = local_size(device)
    items = -(-cshape[0] // tile) * -(-cshape[1] // tile) if tile else \
        (n // cshape[-1]) * -(-cshape[-1] // inner) if inner else \
        -(-n // carry) if carry else -(-n // width)
    limits = tuple((-lo, _I32 - hi) for lo, hi in spans) if small else \
        (_ANY_OFFSET,) * len(views)
    return LaunchPlan(kernel, (-(-items // L) * L,), (L,), template, tuple(slots),
                      tuple(scalars), limits, small)


def run_elementwise(body: tuple[Instr, ...], args: Sequence[Any], in_dtypes: Sequence[np.dtype],
                    outs: Sequence[Array]) -> None:
    """Launch a fused elementwise program: ``args`` are Arrays or scalars (dtypes given)."""
    out0 = outs[0]
    device, shape = out0._device, out0._shape
    if 0 in shape:
        return
    arrays = [a for a in args if isinstance(a, Array)]
    for a in arrays:
        if a._device is not device:
            raise ValueError(f"operands are on different devices: {a._device} and {device}; "
                             f"move one with to_device()")
    views = arrays + list(outs)
    key = (device, body, tuple(in_dtypes), shape,
           tuple([(a._shape, a._strides) if isinstance(a, Array) else None
                  for a in args]),
           tuple([(o._strides, o._dtype) for o in outs]))
    plan = _PLANS.get(key)
    kargs = None if plan is None else plan.fill(views, args)
    if kargs is None:
        plan = plan_elementwise(device, body, args, in_dtypes, outs)
        if plan.cacheable:
            remember_plan(_PLANS, key, plan)
        kargs = plan.fill(views, args)
    if _hooks.current() is not None:
        _hooks.note_launch(plan.kernel, plan.gsize, plan.lsize, kargs)
    _launch.launch_with(plan.kernel, plan.launch, device.queue, kargs)


# CPU devices walk 2-D operations with a transposed operand in blocks of this side
_EW_TILE = 32
# and other strided operations (broadcasts) in stretches of this many innermost elements
_EW_INNER = 64
# or, where every operand's innermost stride is 1 or 0, this many, walked in vectors (PoCL,
# AVX-512, jitted relu(x * p + 0.5) at (4096, 4096): 256 beat 64 and 1024 for float32,
# float16 and bfloat16 rows and columns)
_EW_INNER_VEC = 256
# Stretches (rather than carried indices) from innermost dims this long, or this long where
# they are walked in vectors. Kernel times (PoCL, AVX-512, jitted, 4096 rows of length L
# from a transposed view): (64, 64, L) as relu(y / s * s + s) with s per row, carry against
# vector stretch: L=4 0.039/0.027 ms, 8 0.073/0.026, 16 0.144/0.023, 24 0.217/0.030; a
# 4-d transposed view times 2, carry against scalar stretch: L=4 0.053/0.057, 8 0.10/0.071,
# 16 0.20/0.11, 24 0.30/0.14 (the digits CNN's batch norm over 4x4 maps, 0.30 -> 0.05 ms)
_EW_STRETCH_MIN, _EW_STRETCH_MIN_VEC = 8, 4


def _unit_pattern(cstr: Sequence[Sequence[int]], n_arrays: int) -> tuple[int, ...]:
    """The innermost collapsed stride of each of the ``n_arrays`` array operands when every
    one is 1 or 0, at least one is 0 (a broadcast column, x[i, j] * s[i]) and every output's
    (the rest of ``cstr``) is 1: a stretch of that dim is then walked in vectors, the
    stride-0 operands splatted. () otherwise, negative strides included. Where every stride
    is 1 (x[i, j] * p[j]) the scalar stretch stays: PoCL's compiler vectorises that loop
    itself (versioned on unit strides), and faster than the explicit vectors for 16-bit
    storage (jitted relu(x * p + 0.5), (4096, 4096), min of 7 runs: bfloat16 2.4 ms
    against 3.4 ms, float16 7.3 against 8.2 ms), but not a loop with a stride-0 operand
    (bfloat16 30 ms, float16 100 ms, against 3.4 and 7.5 ms in vectors)."""
    last = [st[-1] for st in cstr]
    if all(s in (0, 1) for s in last[:n_arrays]) and all(s == 1 for s in last[n_arrays:]) \
            and 0 in last[:n_arrays]:
        return tuple(last[:n_arrays])
    return ()


def _transposed(cshape: Sequence[int], cstr: Sequence[Sequence[int]]) -> bool:
    """Two collapsed dims, and some operand runs fastest along the first while the others
    (the output at least) run along the second: per-element order would stride it."""
    if len(cshape) != 2:
        return False
    return any(st[0] and st[1] and abs(st[0]) < abs(st[1]) for st in cstr) and \
        any(st[1] and abs(st[1]) < abs(st[0]) for st in cstr)


def _elementwise_kernel(device: Device, body: tuple[Instr, ...], in_dtypes: Sequence[np.dtype],
                        scalars: tuple[bool, ...], out_dtypes: tuple[np.dtype, ...], ndim: int,
                        contiguous: bool, index: str, tile: int = 0,
                        inner: int = 0, unit: tuple[int, ...] = (),
                        carry: int = 0) -> tuple[Any, int]:
    operands = tuple(Operand(d, s) for d, s in zip(in_dtypes, scalars))
    all_dtypes = [o.dtype for o in operands] + [i.out_dtype for i in body] + list(out_dtypes)
    width = 1
    if (contiguous or unit) and can_vectorize(body, all_dtypes):
        width = _vector_width(device, all_dtypes, body)
    nargs = len(in_dtypes)
    spec = EwSpec(operands, body, tuple((nargs + len(body) - len(out_dtypes) + j, d)
                                        for j, d in enumerate(out_dtypes)),
                  0 if contiguous else ndim, contiguous, width, index,
                  splat=4 if device.is_cpu else 1,   # CPU: scalar code matches vector code
                  tile=tile, inner=inner,
                  vbytes=vector_bytes(device) if device.is_cpu else 32, unit=unit,
                  carry=carry)
    return device.kernel(spec, lambda: render_elementwise(spec)), width


def _overlaps(a: Array, out: Array) -> bool:
    if a._buf is not out._buf:
        return False
    return not (a._offset == out._offset and a._shape == out._shape and
                a._strides == out._strides)


_BODIES: dict[tuple, tuple[Instr, ...]] = {}   # one-op programs, built once per signature


def ew_body(op: str, dtype: np.dtype, out_dtype: np.dtype,
            arg_dtypes: tuple[np.dtype, ...]) -> tuple[Instr, ...]:
    """The (interned) one-instruction program applying ``op``."""
    bkey = (op, dtype, out_dtype, arg_dtypes)
    body = _BODIES.get(bkey)
    if body is None:
        body = _BODIES[bkey] = (Instr(op, tuple(range(len(arg_dtypes))), arg_dtypes, dtype,
                                      out_dtype),)
    return body


def ew_apply(op: str, args: Sequence[Any], dtype: np.dtype, out_dtype: np.dtype,
             arg_dtypes: Sequence[np.dtype], out: Array | None = None) -> Array:
    """Eager one-op elementwise: broadcast, allocate (or write ``out``), launch.

    Array operands whose dtype differs from the op's argument dtype are converted first by the
    shared ``copy`` kernels, so op kernels are specialised on the compute dtype only: mixed-dtype
    programs would otherwise multiply the number of compiled programs (each costs 0.2-1.5 s on
    PoCL) by the number of dtype pairs. Fusion under ``jit`` removes the extra pass."""
    if op != "copy":
        args = [convert_element_type(a, dtype=d) if isinstance(a, Array) and a.dtype != d else a
                for a, d in zip(args, arg_dtypes)]
    elif dtype in dt.HALF and isinstance(args[0], Array) and args[0].dtype == dtype:
        # float16/bfloat16 copies move raw bits: a trip through float would canonicalise NaNs
        src = args[0]
        bits = Array(src._buf, src._offset, src._shape, src._strides, dt.uint16, src._device)
        if out is None:
            out = Array.empty(broadcast_shapes(src.shape), dtype, src._device)
        view = Array(out._buf, out._offset, out._shape, out._strides, dt.uint16, out._device)
        ew_apply("copy", [bits], dt.uint16, dt.uint16, [dt.uint16], out=view)
        return out
    arrays = [a for a in args if isinstance(a, Array)]
    shape = out.shape if out is not None else broadcast_shapes(*(a.shape for a in arrays))
    device = out.device if out is not None else arrays[0].device
    in_dtypes = [a.dtype if isinstance(a, Array) else d for a, d in zip(args, arg_dtypes)]
    body = ew_body(op, dtype, out_dtype, tuple(arg_dtypes))
    if out is not None and any(_overlaps(a, out) for a in arrays):
        tmp = Array.empty(shape, out.dtype, device)
        run_elementwise(body, args, in_dtypes, [tmp])
        return ew_apply("copy", [tmp], out.dtype, out.dtype, [out.dtype], out)
    if out is None:
        out = Array.empty(shape, out_dtype, device)
    run_elementwise(body, args, in_dtypes, [out])
    return out


for _name in _ops.OPS:
    def _impl(*args: Any, _op: str = _name, dtype: np.dtype, out_dtype: np.dtype,
              arg_dtypes: tuple[np.dtype, ...]) -> Array:
        return ew_apply(_op, args, dtype, out_dtype, arg_dtypes)
    primitive(_name).impl = _impl


@def_impl("convert_element_type")
def convert_element_type(x: Array, *, dtype: np.dtype) -> Array:
    x.device.check_dtype(dtype, "astype")
    return ew_apply("copy", [x], dtype, dtype, [dtype])


def copy_into(dst: Array, src: Any, src_dtype: np.dtype | None = None) -> None:
    """Write ``src`` (Array or scalar, broadcast to ``dst.shape``) into the view ``dst``."""
    if isinstance(src, Array):
        broadcast_shapes(src.shape, dst.shape)
        if broadcast_shapes(src.shape, dst.shape) != dst.shape:
            raise ValueError(f"could not broadcast value of shape {src.shape} into "
                             f"shape {dst.shape}")
        ew_apply("copy", [src], dst.dtype, dst.dtype, [dst.dtype], out=dst)
    else:
        ew_apply("copy", [src], dst.dtype, dst.dtype, [dst.dtype], out=dst)


# ------------------------------------------------------------------------------ views
@def_impl("reshape")
def reshape(x: Array, *, shape: tuple[int, ...]) -> Array:
    v = try_view_reshape(x, shape)
    if v is not None:
        return v
    c = contiguous_copy(x)
    return Array(c._buf, 0, shape, c_strides(shape), x.dtype, x.device)


def try_view_reshape(x: Array, shape: tuple[int, ...]) -> Array | None:
    """A view with the new shape when strides allow it (NumPy's no-copy reshape), else None."""
    if x.size == 0 or x.is_contiguous:
        return Array(x._buf, x._offset, shape, c_strides(shape), x.dtype, x.device)
    strides = reshape_strides(x.shape, x._strides, shape)
    if strides is None:
        return None
    return Array(x._buf, x._offset, tuple(shape), strides, x.dtype, x.device)


def reshape_strides(old_shape: Sequence[int], old_strides: Sequence[int],
                    shape: Sequence[int]) -> tuple[int, ...] | None:
    """Strides (in elements) of a view of ``shape`` over the elements of a nonempty layout
    ``old_shape``/``old_strides`` in C order, or None when no strides can: NumPy's
    no-copy reshape. Used by eager views and by ``clnp_grad.jit``'s whole-step kernels.

    Examples
    --------
    >>> from clnp._core.eager import reshape_strides
    >>> reshape_strides((4, 6), (1, 4), (24,)) is None     # a transpose, flattened
    True
    >>> reshape_strides((4, 6), (1, 4), (4, 2, 3))          # split without a copy
    (1, 12, 4)
    >>> reshape_strides((4, 6), (12, 2), (2, 2, 6))            # every other column
    (24, 12, 2)
    """
    old = [(n, s) for n, s in zip(old_shape, old_strides) if n != 1]
    oi, ni = 0, 0
    newdims = list(shape)
    out_str = [0] * len(newdims)
    while ni < len(newdims) and oi < len(old):
        if newdims[ni] == 1:
            out_str[ni] = 0
            ni += 1
            continue
        np_, op_ = newdims[ni], old[oi][0]
        nj, oj = ni + 1, oi + 1
        while np_ != op_:
            if np_ < op_:
                np_ *= newdims[nj]
                nj += 1
            else:
                op_ *= old[oj][0]
                oj += 1
        for k in range(oi, oj - 1):
            if old[k][1] != old[k + 1][0] * old[k + 1][1]:
                return None
        out_str[nj - 1] = old[oj - 1][1]
        for k in range(nj - 1, ni, -1):
            out_str[k - 1] = out_str[k] * newdims[k]
        ni, oi = nj, oj
    while ni < len(newdims):
        out_str[ni] = 0
        ni += 1
    return tuple(out_str)


def contiguous_copy(x: Array) -> Array:
    return ew_apply("copy", [x], x.dtype, x.dtype, [x.dtype])


@def_impl("transpose")
def transpose(x: Array, *, perm: tuple[int, ...]) -> Array:
    return Array(x._buf, x._offset, tuple(x._shape[p] for p in perm),
                 tuple(x._strides[p] for p in perm), x.dtype, x.device)


@def_impl("broadcast_to")
def broadcast_to(x: Array, *, shape: tuple[int, ...]) -> Array:
    return Array(x._buf, x._offset, tuple(shape), broadcast_strides(x, shape), x.dtype, x.device)


@def_impl("slice")
def slice_(x: Array, *, starts: tuple[int, ...], steps: tuple[int, ...],
           shape: tuple[int, ...]) -> Array:
    """View ``x[start_i :: step_i]`` limited to ``shape`` (steps may be negative)."""
    off = x._offset + sum(s * st for s, st in zip(starts, x._strides))
    return Array(x._buf, off, tuple(shape), tuple(st * k for st, k in zip(x._strides, steps)),
                 x.dtype, x.device)


@def_impl("copy")
def copy(x: Array) -> Array:
    return contiguous_copy(x)


# ------------------------------------------------------------------------------ creation
@def_impl("full")
def full(*, shape: tuple[int, ...], value: Any, dtype: np.dtype, device: Device) -> Array:
    out = Array.empty(shape, dtype, device)
    if out.size:
        copy_into(out, value, dtype)
    return out


@def_impl("iota")
def iota(*, n: int, start: Any, step: Any, dtype: np.dtype, device: Device,
         out_dtype: np.dtype | None = None, last: Any = None) -> Array:
    """``start + step * arange(n)`` computed on the device in ``dtype``, stored as
    ``out_dtype`` (default ``dtype``), with ``last`` (when given) at index ``n - 1``.
    Real dtypes of 32 bits and more take one kernel (clnp._kernels.iota); complex and 16-bit
    float ones the elementwise ops."""
    out_dtype = dtype if out_dtype is None else out_dtype
    out = Array.empty((n,), out_dtype, device)
    if not n:
        return out
    cdt = dtype if dkind(dtype) in "fc" else dt.int64
    if dtype in dt.HALF:
        cdt = dt.float32   # half is storage-only on most devices (NumPy fills in float too)
    elif dtype == dt.uint64:
        # modular uint64 arithmetic covers values above 2**63 and negative steps
        cdt, start, step = dt.uint64, int(start) % 2 ** 64, int(step) % 2 ** 64
        last = None if last is None else int(last) % 2 ** 64
    if dkind(cdt) in "fiu" and dkind(out_dtype) in "fiu" and out_dtype not in dt.HALF:
        spec = _iota_kernels.IotaSpec(cdt, out_dtype)
        kern = device.kernel(spec, lambda: _iota_kernels.render_iota(spec))
        arg = C.scalar_arg_dtype(cdt).type
        # a fixed work-group size, whatever n is: PoCL's choice for None divides n, so each
        # new length made a new work-group function to compile (0.1-0.4 s on the CPU) and
        # programs loaded from prebuilt binaries (clnp.prebuild) did not cover it
        L = local_size(device)
        launch(device, kern, (-(-n // L) * L,), (L,), out._buf, np.uint64(n), arg(start),
               arg(step),
               np.int32(last is not None), arg(0 if last is None else last))
        return out
    idx = _index_array(n, device)
    t = ew_apply("multiply", [idx, step], cdt, cdt, [cdt, cdt])
    ew_apply("add", [t, start], cdt, out_dtype, [cdt, cdt], out=out)
    if last is not None:
        copy_into(Array(out._buf, out._offset + n - 1, (), (), out_dtype, device), last,
                  out_dtype)
    return out


_INDEX_CACHE: dict[tuple[int, int], Array] = {}


def _index_array(n: int, device: Device) -> Array:
    """int64 ``0..n-1`` (built once per device with a host upload, then reused by slicing)."""
    key = (device.index, 0)
    base = _INDEX_CACHE.get(key)
    if base is None or base.size < n:
        size = max(n, 2 * (base.size if base is not None else 0), 1024)
        base = Array.from_numpy(np.arange(size, dtype=np.int64), device)
        _INDEX_CACHE[key] = base
    return Array(base._buf, 0, (n,), (1,), dt.int64, device)


# ------------------------------------------------------------------------------ reductions
REDUCE_NEUTRAL = {"sum": 0, "prod": 1, "any": False, "all": True}
_SHORT_ROW = 128  # reduced lengths up to this go one output per work-item
_CPU_ROW = 4096   # on CPUs, rows up to this long go one output per work-item (``rows``)


@def_impl("reduce")
def reduce(x: Array, *, op: str, axes: tuple[int, ...], acc_dtype: np.dtype,
           out_dtype: np.dtype) -> Array:
    """Reduce ``axes`` of ``x`` (output has the kept dims, in order)."""
    device = x.device
    kept = [i for i in range(x.ndim) if i not in axes]
    out_shape = tuple(x.shape[i] for i in kept)
    n_out = math.prod(out_shape)
    nred = math.prod(x.shape[i] for i in axes)
    out = Array.empty(out_shape, out_dtype, device)
    if n_out == 0:
        return out
    if nred == 0:
        copy_into(out, REDUCE_NEUTRAL[op], dt.bool_ if op in ("any", "all") else out_dtype)
        return out
    if nred == 1:
        sq = Array(x._buf, x._offset, out_shape, tuple(x._strides[i] for i in kept), x.dtype,
                   device)
        if op in ("any", "all"):
            return ew_apply("not_equal", [sq, 0], x.dtype, dt.bool_, [x.dtype, x.dtype],
                            out=out) if x.dtype != dt.bool_ else ew_apply(
                "copy", [sq], dt.bool_, dt.bool_, [dt.bool_], out=out)
        ew_apply("copy", [sq], out_dtype, out_dtype, [out_dtype], out=out)
        if op == "prod" and dkind(out_dtype) == "c" and out_dtype == acc_dtype:
            from .folds import prod_refold     # NumPy's 1 * x0 (inf+0j -> inf+nanj)
            prod_refold(x, axes, out)
        return out
    # kept dims between reduced ones (axes (0, 2) of a C-ordered 3-d array): CPUs reduce the
    # reduced dims inside the kept ones first, so each pass reads long runs (GPUs read such
    # layouts coalesced in one pass; short inner runs are not worth a pass of their own)
    kstride = min((abs(x._strides[i]) for i in kept if x.shape[i] > 1), default=0)
    inner = [i for i in axes if x.shape[i] > 1 and abs(x._strides[i]) < kstride]
    outer = [i for i in axes if i not in inner and x.shape[i] > 1]
    src, src_axes = x, axes
    if inner and outer and device.is_cpu and math.prod(x.shape[i] for i in inner) >= 32:
        rest = [i for i in range(x.ndim) if i not in inner]
        tmp = Array.empty(tuple(x.shape[i] for i in rest), acc_dtype, device)
        _reduce_into(x, rest, inner, tmp, op, acc_dtype)
        x, kept, axes = tmp, [rest.index(i) for i in kept], [rest.index(i) for i in outer]
    _reduce_into(x, kept, axes, out, op, acc_dtype)
    if op == "prod" and dkind(out_dtype) == "c" and out_dtype == acc_dtype:
        from .folds import prod_refold
        prod_refold(src, src_axes, out)
    return out


def column_vec(device: Device, itemsize: int) -> int:
    """Outputs per work-item of ``column`` kernels: a cache line's worth on CPUs, so each line
    is read once; one on GPUs (adjacent items read adjacent elements)."""
    return max(1, min(16, 64 // itemsize)) if device.is_cpu else 1


def reduce_plan(device: Device, n_out: int, nred: int, inner: int, so: int,
                rstr: Sequence[int], itemsize: int,
                gcolumn: bool = False) -> tuple[str, int, int, int]:
    """The work mapping of ``n_out`` reductions of ``nred`` elements each, shared by the
    reductions and argmax/argmin: ``(mode, work-group size, chunks per output, vec)`` (modes:
    :mod:`clnp._kernels.reduction`). ``inner`` and ``so`` are the size and stride of the
    innermost (collapsed) kept dim, ``rstr`` the reduced strides, ``itemsize`` that of an
    accumulator (an ``inner`` below 64 rules the ``tile`` mode out).

    More than one chunk per output (a second launch combines the partial results) when the
    outputs alone would not give the device enough work-items. ``gcolumn``: GPUs may answer
    ``gcolumn`` for outer axes (``vec`` is then its ``lanes``; :func:`_gcolumn_plan`)."""
    cpu = device.is_cpu
    # work-items worth launching: a few per core on a CPU, many per compute unit on a GPU
    target = 4 * device.compute_units * (16 if cpu else 2048)
    outer = abs(so) < min(abs(s) for s in rstr)
    if cpu and not outer and n_out >= 64 and _SHORT_ROW < nred <= _CPU_ROW:
        # CPUs run a group's items one after another: a row per item streams as well,
        # without a group's overhead per row (shorter rows: ``column`` below)
        vec = column_vec(device, itemsize)
        return "rows", 16, max(1, min(-(-target // -(-n_out // vec)), nred // 256)), vec
    # one item per output when the reduced axes are outer (items then read rows together)
    # or too short to share among a work-group
    if n_out >= 64 and (nred <= _SHORT_ROW or outer):
        if cpu and so == 1 and inner >= 64:
            vec = max(16, min(256, 1024 // itemsize))   # a kilobyte of accumulators
            blocks = n_out // inner * -(-inner // vec)
            return "tile", 16, max(1, min(nred // 32, -(-target // blocks))), vec
        if gcolumn and not cpu and outer and nred >= _GCOL_MIN_RED:
            return _gcolumn_plan(device, n_out, nred)
        vec = column_vec(device, itemsize)
        return "column", local_size(device), max(1, min(-(-target // -(-n_out // vec)),
                                                        nred // 256)), vec
    G = 16 if cpu else local_size(device)
    if not cpu and nred <= 2048:
        G = min(G, 64)    # short rows: a big work-group would leave most items idle
    parts = 1
    if cpu and n_out * G < target and nred >= 4 * G:
        parts = max(1, min(-(-nred // (4 * G)), -(-target // (n_out * G))))
    if not cpu:
        # one wave of resident groups, each streaming at least 16 elements per item: more
        # groups only add tree steps, partial results and a longer second stage
        resident = device.compute_units * max(1, 2048 // G)
        if n_out < resident:
            parts = max(1, min(-(-resident // n_out), nred // (16 * G)))
    return "blocked" if cpu else "group", G, parts, 1


_GCOL_GROUP = 512   # gcolumn work-group size (rows of items share a group's outputs)
# gcolumn only for reduced lengths that give each of a group's rows of items a few elements:
# shorter ones (a split-K product's 4 partial sums) leave most items idle, and one item per
# output (``column``) reads them as coalesced. H200: the sum of [4, 256, 1024] partials took
# 57 us as gcolumn
_GCOL_MIN_RED = 64


def _gcolumn_plan(device: Device, n_out: int, nred: int) -> tuple[str, int, int, int]:
    """``("gcolumn", group, parts, outputs per group)``: the most outputs per group (up to
    32: whole sectors per row) that still give every compute unit a group or two; more chunks
    (a second launch) only when one output per group would leave compute units idle."""
    G = min(_GCOL_GROUP, device.max_work_group_size)
    cu, width = device.compute_units, 32
    while width > 1 and 2 * -(-n_out // width) < 3 * cu:
        width //= 2
    groups = -(-n_out // width)
    parts = 1
    if groups < cu:
        parts = max(1, min(-(-2 * cu // groups), nred // (16 * G)))
    return "gcolumn", G, parts, width


def _reduce_into(x: Array, kept: Sequence[int], axes: Sequence[int], out: Array, op: str,
                 acc_dtype: np.dtype, final: bool = False) -> None:
    """Reduce ``axes`` of ``x`` into the dense ``out`` (shaped like the ``kept`` dims); a
    two-stage plan reduces its partial results ``[n_out, parts]`` by the same route, in one
    launch (``final``)."""
    device = x.device
    key = None
    if x._offset == 0 and out._offset == 0:
        # an eager reduction repeats with the same layouts (a training loop's sums): its one
        # launch is kept, and a call only drops its two buffers in (a small sum's host time
        # on PoCL: 60 -> 37 us, bench/bench_eager_ops.py)
        key = (device, x._dtype, x._shape, x._strides, tuple(kept), tuple(axes), op,
               acc_dtype, out._dtype, out._shape, final)
        hit = _REDUCE_LAUNCHES.get(key)
        if hit is not None:
            kernel, gsize, lsize, template, xpos, ypos = hit
            args = template.copy()
            args[xpos], args[ypos] = x._buf, out._buf
            launch(device, kernel, gsize, lsize, *args)
            return
    n_out, nred = out.size, math.prod(x.shape[i] for i in axes)
    oshape, (ostr,) = collapse([x.shape[i] for i in kept], [[x._strides[i] for i in kept]])
    rshape, (rstr,) = collapse([x.shape[i] for i in axes], [[x._strides[i] for i in axes]])
    mode, G, parts, vec = reduce_plan(device, n_out, nred, oshape[-1] if oshape else 1,
                                      ostr[-1] if ostr else 0, rstr, acc_dtype.itemsize, True)
    if final:
        parts = 1
    lanes = 1
    if mode == "group":
        vec = 16 // x.dtype.itemsize if vector_ok(x.dtype) else 1
    elif mode == "gcolumn":
        lanes, vec = vec, _gcolumn_vec(x, oshape, ostr, rstr)
        lanes = max(1, lanes // vec)
    fused = mode == "group" and parts > 1 and not device.is_cpu and n_out <= _FUSED_MAX \
        and fusable(op, acc_dtype, device.extensions)
    if fused:
        # no second launch to amortise: smaller chunks keep more bytes in flight (measured
        # on an H200: 21 us instead of 27 for the first stage of a 2^24 float32 sum)
        parts = max(1, min(4 * parts, nred // (16 * G)))
    chunk = -(-nred // parts)
    index = "int" if _span_ok([x], max(n_out * parts * G, nred)) else "long"
    first_out = out.dtype if parts == 1 or fused else acc_dtype
    spec = ReduceSpec(op, x.dtype, acc_dtype, first_out, len(oshape), len(rshape), G, index,
                      mode, vec, lanes, fused)
    dst = out if parts == 1 or fused else Array.empty((n_out, parts), acc_dtype, device)
    extra = (_partials(device, acc_dtype, n_out * parts), _counters(device)) if fused else ()
    kernel, gsize, lsize, args = _reduce_launch(spec, x, dst, n_out, parts, chunk, nred,
                                                oshape, rshape, ostr, rstr, *extra)
    launch(device, kernel, gsize, lsize, *args)
    if parts > 1 and not fused:
        _reduce_into(dst, (0,), (1,), out, op, acc_dtype, final=True)
    elif key is not None and not fused:
        xpos = 4 + len(oshape) + len(rshape)
        remember_plan(_REDUCE_LAUNCHES, key, (kernel, gsize, lsize, args, xpos,
                                              xpos + 2 + len(ostr) + len(rstr)))


# single-launch eager reductions by layout: (kernel, gsize, lsize, arguments, position of
# the input's buffer, of the output's)
_REDUCE_LAUNCHES: dict[tuple, tuple] = {}


_FUSED_MAX = 4096                     # outputs a fused reduction may have (counters kept)
_COUNTERS: dict[Device, Array] = {}


def _counters(device: Device) -> Array:
    """The device's zeroed completion counters of fused reductions (each kernel leaves them
    zero again; the in-order queue never runs two reductions at once)."""
    c = _COUNTERS.get(device)
    if c is None:
        c = _COUNTERS[device] = full(shape=(_FUSED_MAX,), value=0, dtype=np.dtype(np.uint32),
                                     device=device)
    return c


_PARTIALS: dict[tuple[Device, np.dtype], Array] = {}


def _partials(device: Device, acc_dtype: np.dtype, n: int) -> Array:
    """The device's zeroed buffer of at least ``n`` partial results of fused reductions in
    ``acc_dtype``, grown when too short. Its values are exchanged atomically, and an atomic
    exchange reads the old value: zeroed, it is never uninitialised (Oclgrind)."""
    key = (device, acc_dtype)
    p = _PARTIALS.get(key)
    if p is None or p.size < n:
        p = _PARTIALS[key] = full(shape=(max(n, 1024),), value=0, dtype=acc_dtype,
                                  device=device)
    return p


def _gcolumn_vec(x: Array, oshape, ostr, rstr) -> int:
    """Vector width of a ``gcolumn`` reduction: 16 bytes of adjacent outputs when every
    vector is contiguous and aligned (innermost kept dim of unit stride, its size, the offset
    and every other stride multiples of the width), else 1."""
    w = 16 // x.dtype.itemsize
    if not vector_ok(x.dtype) or w < 2 or not oshape or ostr[-1] != 1 or oshape[-1] % w:
        return 1
    if x._offset % w or any(s % w for s in list(ostr[:-1]) + list(rstr)):
        return 1
    return w


def _reduce_launch(spec: ReduceSpec, x: Array, y: Array, n_out: int, parts: int, chunk: int,
                   nred: int, oshape, rshape, ostr, rstr, *fused: Array) -> tuple:
    """The kernel, launch sizes and arguments of one reduction launch of ``x`` into ``y``."""
    kernel = x.device.kernel(spec, lambda: render_reduction(spec))
    args = [n_out, parts, chunk, nred, *oshape, *rshape, x._buf, x._offset, *ostr, *rstr,
            y._buf, y._offset] + [f._buf for f in fused]
    G = spec.group
    if spec.mode == "gcolumn":
        items = -(-n_out // (spec.lanes * spec.vec)) * parts * G
    elif spec.mode == "column":
        items = -(-(-(-n_out // spec.vec) * parts) // G) * G
    elif spec.mode == "rows":
        items = -(-(-(-n_out // spec.vec) * parts) // G) * G
    elif spec.mode == "tile":
        inner = oshape[-1]
        items = -(-(n_out // inner * -(-inner // spec.vec) * parts) // G) * G
    else:
        items = n_out * parts * G
    return kernel, (items,), (G,), args


# ------------------------------------------------------------------------------ joins
# One-launch concatenations (clnp._kernels.concatenate) on CPU devices up to this many
# output elements: past it the per-input copies' vector loops are faster than the kernel's
# per-element index arithmetic, and one launch more per input costs little beside them
_CONCATENATE_CPU_MAX = 1 << 18


def _merged_stride(shape: Sequence[int], strides: Sequence[int]) -> int | None:
    """The one stride of ``shape``'s dims seen as one (``collapse``), or None where they do
    not merge."""
    cshape, (cstr,) = collapse(shape, [strides])
    return None if len(cshape) > 1 else (cstr[0] if cshape else 0)


def _concatenate_one_launch(arrays: Sequence[Array], axis: int, out: Array) -> bool:
    """Fill ``out`` with ``arrays`` joined along ``axis`` in one launch (module
    clnp._kernels.concatenate), where every input has the output's dtype and dims that merge
    around the axis; False (nothing launched) where not."""
    from .._kernels.concatenate import MAX_INPUTS, ConcatenateSpec, render_concatenate
    device = out.device
    parts = [a for a in arrays if a.size]
    if not 2 <= len(parts) <= MAX_INPUTS or any(a.dtype != out.dtype for a in arrays) or \
            (device.is_cpu and out.size > _CONCATENATE_CPU_MAX):
        return False
    args: list[Any] = [out.size, out.shape[axis], math.prod(out.shape[axis + 1:])]
    pos = 0
    for a in arrays:
        if a.size:
            so = _merged_stride(a.shape[:axis], a._strides[:axis])
            si = _merged_stride(a.shape[axis + 1:], a._strides[axis + 1:])
            if so is None or si is None:
                return False
            args += [a._buf, a._offset, so, a._strides[axis], si, pos]
        pos += a.shape[axis]
    spec = ConcatenateSpec(out.dtype, len(parts))
    kernel = device.kernel(spec, lambda: render_concatenate(spec))
    L = local_size(device)
    launch(device, kernel, (-(-out.size // L) * L,), (L,), *args, out._buf)
    return True


@def_impl("concatenate")
def concatenate(*arrays: Array, axis: int, dtype: np.dtype) -> Array:
    shape = list(arrays[0].shape)
    shape[axis] = sum(a.shape[axis] for a in arrays)
    out = Array.empty(tuple(shape), dtype, arrays[0].device)
    if out.size and _concatenate_one_launch(arrays, axis, out):
        return out
    pos = 0
    for a in arrays:
        n = a.shape[axis]
        if n and a.size:
            starts = tuple(pos if i == axis else 0 for i in range(len(shape)))
            view = slice_(out, starts=starts, steps=(1,) * len(shape), shape=a.shape)
            ew_apply("copy", [a], dtype, dtype, [dtype], out=view)
        pos += n
    return out


# ------------------------------------------------------------------------------ gather/scatter
def _index_kernel(kind: str, x: Array, ndim_rest: int):
    from .._kernels.indexing import IndexSpec, render_indexing
    spec = IndexSpec(kind, x.dtype, ndim_rest)
    return x.device.kernel(spec, lambda: render_indexing(spec))


class IndexOutOfBounds(IndexError):
    """Index array ``j`` holds ``value``, outside ``[-size, size)`` for its dim of ``x``
    (the namespace re-raises it naming the user's axis)."""

    def __init__(self, j: int, value: int, size: int):
        super().__init__(f"index {value} is out of bounds for axis {j} with size {size}")
        self.j, self.value, self.size = j, value, size


_FLAGS = threading.local()       # this thread's out-of-range flag per device index


def _index_flag(device: Device) -> Array:
    """An out-of-range flag (``render_offsets``' four ints, zero until a check fails and
    cleared by the check that raises, ``device_checks``) that no other launch in flight
    shares: this thread's for an eager call, which reads it right after its launch; one of
    its own for a launch being recorded, whose replays their executable serialises. Shared
    flags let one thread's failure claim the flag first and hide another's, or a check read
    another launch's report. A recorded launch's flag is made outside the recording (a
    buffer of zeros written there, not an upload the replay would repeat), from the device's
    allocator like every other array (so in memory CUDA sees where the device's arrays are:
    a replay as a CUDA graph passes it by address)."""
    if _hooks.current() is not None:
        buf = device.alloc(16)
        cl.enqueue_copy(device.queue, buf, np.zeros(4, np.int32), is_blocking=True)
        return Array(buf, 0, (4,), (1,), dt.int32, device)
    flags = getattr(_FLAGS, "by_device", None)
    if flags is None:
        flags = _FLAGS.by_device = {}
    f = flags.get(device.index)
    if f is None:
        f = flags[device.index] = Array.from_numpy(np.zeros(4, np.int32), device)
    return f


def linear_offsets(x: Array, indices: Sequence[Array], bshape: tuple[int, ...],
                   in_bounds: bool = False) -> Array:
    """int64 element offsets ``sum_j wrap(idx_j) * stride_j`` for the leading dims of ``x``,
    dense over ``bshape``, in one launch (sizes and strides are kernel arguments).

    Negative indices wrap. Unless ``in_bounds`` (the caller knows every index is valid), the
    kernel's out-of-range flag is checked: read back at once (one host synchronisation, and
    IndexOutOfBounds before anything is written), or, while a call is captured for replay,
    at the end of that call and of each replay of it (``device_checks``)."""
    from .._kernels.indexing import OffsetsSpec, render_offsets
    device = x.device
    n = math.prod(bshape)
    out = Array.empty(bshape, dt.int64, device)
    if n == 0:
        return out
    k = len(indices)
    cshape, cstr = collapse(bshape, [broadcast_strides(i, bshape) for i in indices])
    spec = OffsetsSpec(tuple(i.dtype for i in indices), len(cshape))
    kernel = device.kernel(spec, lambda: render_offsets(spec))
    flag = _index_flag(device)
    args: list[Any] = [n, *cshape]
    for j, idx in enumerate(indices):
        args += [idx._buf, idx._offset, *cstr[j], x.shape[j], x._strides[j]]
    args += [out._buf, flag._buf]
    L = local_size(device)
    launch(device, kernel, (-(-n // L) * L,), (L,), *args)
    if not in_bounds:
        sizes = tuple(x.shape[:k])
        unsigned = tuple(i.dtype.kind == "u" for i in indices)
        host_indices = None if _hooks.current() is not None else list(indices)

        def raise_for(report: np.ndarray) -> NoReturn:
            j = int(report[1]) - 1
            if host_indices is not None:
                # an eager call: NumPy's message names the first bad index in order
                h = host_indices[j].to_numpy().astype(object).reshape(-1)
                value = next(v for v in h if not -sizes[j] <= v < sizes[j])
            else:
                value = int(report[2:4].view(np.int64)[0])
                if unsigned[j] and value < 0:
                    value += 1 << 64
            raise IndexOutOfBounds(j, int(value), sizes[j])
        device_checks.check(device_checks.FlagCheck(flag, raise_for))
    return out


@def_impl("gather")
def gather(x: Array, *indices: Array, in_bounds: bool = False) -> Array:
    """``x[i0, i1, ..., :, ...]``: integer arrays (broadcast together) index the leading dims
    of ``x``; negative indices wrap; an out-of-range index raises IndexOutOfBounds unless
    ``in_bounds`` promises there is none."""
    bshape = broadcast_shapes(*(i.shape for i in indices))
    k = len(indices)
    rest = x.shape[k:]
    out = Array.empty(bshape + rest, x.dtype, x.device)
    off = linear_offsets(x, indices, bshape, in_bounds)
    if out.size == 0:
        return out
    rshape, (rstr,) = collapse(rest, [x._strides[k:]])
    kern = _index_kernel("gather", x, len(rshape))
    n_b, n_rest = math.prod(bshape), math.prod(rest)
    L = local_size(x.device)
    launch(x.device, kern, (-(-(n_b * n_rest) // L) * L,), (L,), n_b, n_rest, *rshape, x._buf,
           x._offset, *rstr, off._buf, out._buf, 0)
    return out


# ``nonzero`` (device stream compaction) is implemented in clnp._routines.search.
