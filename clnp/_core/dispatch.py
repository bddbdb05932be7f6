"""The eager fast path: one-op elementwise calls on arrays and Python scalars.

``a + b`` through the general route normalises operands, resolves NEP 50 dtypes, binds the
primitive through the current interpreter and plans the launch: tens of microseconds of
Python per op. Here a call is reduced to one dictionary lookup keyed by everything those
steps depend on (op, operand dtypes or scalar kinds, shapes, strides, device), an
allocation and the launch. The general route builds each entry once, so both routes give
the same result; anything the entry cannot express (dtype conversions, float16 scalar
rounding, out-of-range Python ints, traced values, other interpreters) returns ``None`` and
the caller takes the general route, which also raises the errors.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._runtime import capture_hooks as _hooks
from .._runtime.launch import launch_with
from . import dtypes as dt
from .._kernels import op_table as _ops
from .array import Array, c_strides
from .eager import broadcast_shapes, ew_body, plan_elementwise, remember_plan
from .prims import _CURRENT, EVAL

_SCALARS = (bool, int, float)
_new = object.__new__


class _Entry:
    __slots__ = ("plan", "dtype", "shape", "strides", "nbytes", "bounds")

    def __init__(self, plan: Any, dtype: np.dtype, shape: tuple[int, ...],
                 bounds: tuple[int, int] | None):
        self.plan, self.dtype, self.shape = plan, dtype, shape
        self.strides = c_strides(shape)
        self.nbytes = max(math.prod(shape) * dtype.itemsize, 1)
        self.bounds = bounds    # Python ints must lie inside when the op computes in integers


_ENTRIES: dict[tuple, _Entry | None] = {}
_MISSING = object()


def apply_fast(name: str, args: tuple[Any, ...]) -> Array | None:
    """``name(*args)`` by a cached launch plan, or ``None`` when the general route must run.

    Written for speed: this is the whole Python cost of an eager elementwise op."""
    if _CURRENT.get() is not EVAL:
        return None
    if len(args) == 2:
        x, y = args
        tx, ty = type(x), type(y)
        if tx is Array:
            device = x._device
            if ty is Array:
                if y._device is not device:
                    return None
                key = (name, device, x._dtype, x._shape, x._strides, y._dtype, y._shape,
                       y._strides)
            elif ty in _SCALARS:
                key = (name, device, x._dtype, x._shape, x._strides, ty)
            else:
                return None
        elif ty is Array and tx in _SCALARS:
            device = y._device
            key = (name, device, tx, y._dtype, y._shape, y._strides)
        else:
            return None
    elif len(args) == 1:
        x = args[0]
        if type(x) is not Array:
            return None
        device = x._device
        key = (name, device, x._dtype, x._shape, x._strides)
    else:
        return None
    entry = _ENTRIES.get(key, _MISSING)
    if entry is _MISSING:
        entry = _build(name, args)
        remember_plan(_ENTRIES, key, entry)
    if entry is None:
        return None
    if entry.bounds is not None:
        lo, hi = entry.bounds
        for a in args:
            if type(a) is int and not lo <= a <= hi:
                return None
    plan = entry.plan
    kargs = plan.fill([a for a in args if type(a) is Array], args)
    if kargs is None:
        return None
    buf = device.alloc(entry.nbytes)     # the one allocation path: it keeps the peak exact
    kargs[plan.slots[-1]] = buf          # the output: offset 0 (in the template)
    if _hooks.current() is not None:
        _hooks.note_launch(plan.kernel, plan.gsize, plan.lsize, kargs)
    launch_with(plan.kernel, plan.launch, device.queue, kargs)
    out = _new(Array)                  # skips __init__'s call: a third of a microsecond
    out._buf, out._offset, out._shape = buf, 0, entry.shape
    out._strides, out._dtype, out._device = entry.strides, entry.dtype, device
    return out


def inplace_fast(name: str, x: Any, other: Any) -> bool:
    """``x op= other`` by a cached plan; False when the general route must run (which it
    also does whenever ``other`` shares ``x``'s buffer, to go through a temporary)."""
    if _CURRENT.get() is not EVAL or type(x) is not Array:
        return False
    device = x._device
    to = type(other)
    if to is Array:
        if other._device is not device or other._buf is x._buf:
            return False
        key = (name, device, x._dtype, x._shape, x._strides, other._dtype, other._shape,
               other._strides, True)
    elif to in _SCALARS:
        key = (name, device, x._dtype, x._shape, x._strides, to, True)
    else:
        return False
    args = (x, other)
    entry = _ENTRIES.get(key, _MISSING)
    if entry is _MISSING:
        entry = _build(name, args, inplace=True)
        remember_plan(_ENTRIES, key, entry)
    if entry is None:
        return False
    if entry.bounds is not None and to is int and not entry.bounds[0] <= other <= entry.bounds[1]:
        return False
    plan = entry.plan
    kargs = plan.fill((x, other, x) if to is Array else (x, x), args)   # x is the output too
    if kargs is None:
        return False
    if _hooks.current() is not None:
        _hooks.note_launch(plan.kernel, plan.gsize, plan.lsize, kargs)
    launch_with(plan.kernel, plan.launch, device.queue, kargs)
    return True


def _build(name: str, args: tuple[Any, ...], inplace: bool = False) -> _Entry | None:
    """The entry for this signature, when the general route would run exactly one kernel
    on the operands as given (no conversions, no scalar rewriting); ``inplace``: the result
    is written into ``args[0]``, which must keep its dtype and shape."""
    from .promotion import _resolve
    rec = _ops.OPS.get(name)
    if rec is None:
        return None
    arrays = [a for a in args if type(a) is Array]
    device = arrays[0]._device
    try:
        shape = broadcast_shapes(*(a._shape for a in arrays))
        compute, out_dtype, arg_dtypes, _ = _resolve(rec, list(args), device)
    except (TypeError, ValueError, OverflowError):
        return None       # the general route raises the precise error
    if math.prod(shape) == 0 or compute in dt.HALF or \
            any(a._dtype != d for a, d in zip(args, arg_dtypes) if type(a) is Array) or \
            (name == "pow" and compute.kind in "iu"):
        return None
    bounds = None
    if compute.kind in "iu" and any(type(a) is int for a in args):
        info = np.iinfo(compute)
        bounds = (int(info.min), int(info.max))
    in_dtypes = [a._dtype if type(a) is Array else d for a, d in zip(args, arg_dtypes)]
    body = ew_body(name, compute, out_dtype, tuple(arg_dtypes))
    if inplace:
        x = args[0]
        if out_dtype != x._dtype or shape != x._shape:
            return None
        out = x
    else:
        out = Array(None, 0, shape, c_strides(shape), out_dtype, device)
    plan = plan_elementwise(device, body, args, in_dtypes, [out])
    if not plan.cacheable or any(cdt is not None for _, _, cdt in plan.scalars):
        return None
    if not inplace:
        plan.template[plan.slots[-1] + 1] = 0      # the output is always a fresh buffer
    return _Entry(plan, out_dtype, shape, bounds)



def _fast_unary(name: str, slow: Any) -> Any:
    def op(self: Array) -> Any:
        r = apply_fast(name, (self,))
        return slow(self) if r is None else r
    op.__name__, op.__doc__ = slow.__name__, slow.__doc__
    return op


def _fast_binary(name: str, slow: Any, reflected: bool) -> Any:
    def op(self: Array, other: Any) -> Any:
        r = apply_fast(name, (other, self) if reflected else (self, other))
        return slow(self, other) if r is None else r
    op.__name__, op.__doc__ = slow.__name__, slow.__doc__
    return op


def _install_operators() -> None:
    """Give ``Array`` (not the tracers sharing its operator surface) fast operator dunders
    that fall back to the shared ones."""
    for rec in _ops.OPS.values():
        for d in rec.dunder:
            if rec.nin == 1:
                setattr(Array, d, _fast_unary(rec.name, getattr(Array, d)))
                continue
            base = d[2:-2]
            setattr(Array, d, _fast_binary(rec.name, getattr(Array, d), False))
            r = f"__r{base}__"
            if hasattr(Array, r):
                setattr(Array, r, _fast_binary(rec.name, getattr(Array, r), True))


_install_operators()
