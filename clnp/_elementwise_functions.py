"""Elementwise functions of the standard, generated from the op table (``clnp._ops``)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import _dtypes as dt
from . import _ops
from ._array import Array
from ._helpers import check_scalar_fits, is_array, result_dtype_of, unwrap_scalar
from ._prims import primitive

__all__: list[str] = []


def _real_of(d: np.dtype) -> np.dtype:
    return {"complex64": dt.float32, "complex128": dt.float64}.get(d.name, d)


def _float_of(d: np.dtype, device) -> np.dtype:
    """Floating dtype an integer/bool input computes in (NumPy: int8->f16, int16->f32, ...)."""
    if d.kind in "fc":
        return d
    f = np.promote_types(d, np.float16)
    return dt.float32 if f == dt.float64 and not device.has_fp64 else f


def resolve(rec: _ops.EwOp, args: tuple[Any, ...]) -> tuple[np.dtype, np.dtype, tuple]:
    """(compute dtype, result dtype, per-argument dtypes) for ``rec`` applied to ``args``,
    raising TypeError when a dtype is outside the op's category."""
    name = rec.name
    res = result_dtype_of(args, name)
    arrays = [a for a in args if is_array(a)]
    device = arrays[0].device
    if res == dt.float64 and not device.has_fp64 and all(a.dtype != dt.float64 for a in arrays):
        res = dt.float32  # a Python float next to a non-float array on a device without fp64
    if res == dt.complex128 and not device.has_fp64 and all(a.dtype != dt.complex128
                                                            for a in arrays):
        res = dt.complex64
    compute = res
    if rec.float_only and res.kind in "iub":
        compute = _float_of(res, device)
    kind = compute.kind
    if kind not in rec.c:
        bad = next((a.dtype for a in arrays if a.dtype.kind not in rec.c), res)
        raise TypeError(f"{name} requires {rec.category} input; got {bad}")
    for s in args:
        if not is_array(s):
            check_scalar_fits(s, compute, name)
    out = {"same": compute, "bool": dt.bool_, "real": _real_of(compute)}[rec.out]
    return compute, out, (compute,) * len(args)


def apply(name: str, *args: Any) -> Any:
    rec = _ops.OPS[name]
    args = tuple(unwrap_scalar(a) for a in args)
    compute, out, arg_dtypes = resolve(rec, args)
    return primitive(name).bind(*args, dtype=compute, out_dtype=out, arg_dtypes=arg_dtypes)


def inplace(name: str, x: Any, other: Any) -> Any:
    """``x op= other``: the result keeps x's dtype and shape; eager arrays are written in place,
    tracers are rebound functionally."""
    rec = _ops.OPS[name]
    other = unwrap_scalar(other)
    compute, out, arg_dtypes = resolve(rec, (x, other))
    if out != x.dtype:
        raise TypeError(f"in-place {name} would change the dtype of the left operand from "
                        f"{x.dtype} to {out}; write x = x {name} y instead")
    if is_array(other):
        from ._eager import broadcast_shapes
        if broadcast_shapes(x.shape, other.shape) != x.shape:
            raise ValueError(f"in-place {name}: operand of shape {other.shape} cannot be "
                             f"broadcast to the left operand's shape {x.shape}")
    if not isinstance(x, Array):
        return primitive(name).bind(x, other, dtype=compute, out_dtype=out,
                                    arg_dtypes=arg_dtypes)
    from ._eager import ew_apply
    ew_apply(name, [x, other], compute, out, arg_dtypes, out=x)
    return x


def _make_unary(name: str) -> Callable[..., Any]:
    def f(x, /):
        return apply(name, x)
    return f


def _make_binary(name: str) -> Callable[..., Any]:
    def f(x1, x2, /):
        return apply(name, x1, x2)
    return f


_DOC = ("Computes ``{name}`` for each element of the input{s} ({ref} semantics, with the "
        "Array API special cases).\n\nInput dtypes: {category}. Returns an array of the "
        "{out} dtype{bcast}.")

for _rec in _ops.OPS.values():
    if _rec.nin == 3 or _rec.name == "copy" or _rec.name == "round":
        continue
    _f = (_make_unary if _rec.nin == 1 else _make_binary)(_rec.name)
    _f.__name__ = _f.__qualname__ = _rec.name
    _f.__doc__ = _DOC.format(name=_rec.name, s="" if _rec.nin == 1 else "s",
                             ref=f"numpy.{_rec.ref.__name__}", category=_rec.category,
                             out={"same": "promoted", "bool": "bool",
                                  "real": "real-valued"}[_rec.out],
                             bcast="" if _rec.nin == 1 else "; inputs broadcast together")
    globals()[_rec.name] = _f
    __all__.append(_rec.name)


def round(x, /):
    """Rounds each element to the nearest integer-valued number (ties to even), as
    ``numpy.round`` with ``decimals=0``. Complex inputs round both components."""
    return apply("round", x)


def where(condition, x1, x2, /):
    """Elements of ``x1`` where ``condition`` is true, else of ``x2`` (broadcast together).

    ``condition`` must be a boolean array; ``x1``/``x2`` are arrays or Python scalars and the
    result dtype is their promoted dtype."""
    condition, x1, x2 = (unwrap_scalar(a) for a in (condition, x1, x2))
    if not is_array(condition):
        raise TypeError(f"where: condition must be a boolean array; got "
                        f"{type(condition).__name__}")
    if condition.dtype != dt.bool_:
        raise TypeError(f"where: condition must have dtype bool; got {condition.dtype}")
    if is_array(x1) or is_array(x2):
        res = result_dtype_of((x1, x2), "where")
    else:
        res = _scalar_default_dtype((x1, x2), condition.device)
    for s in (x1, x2):
        if not is_array(s):
            check_scalar_fits(s, res, "where")
    return primitive("where").bind(condition, x1, x2, dtype=res, out_dtype=res,
                                   arg_dtypes=(dt.bool_, res, res))


def _scalar_default_dtype(scalars: tuple[Any, ...], device: Any) -> np.dtype:
    """where(cond, scalar, scalar): the widest scalar kind's default dtype decides."""
    if any(isinstance(k, complex) for k in scalars):
        return device.default_complex
    if any(isinstance(k, float) for k in scalars):
        return device.default_float
    if any(isinstance(k, int) and not isinstance(k, bool) for k in scalars):
        return dt.int64
    for k in scalars:
        if not isinstance(k, bool):
            raise TypeError(f"where: unsupported operand type {type(k).__name__}")
    return dt.bool_


def clip(x, /, min=None, max=None):
    """Clamps each element of ``x`` to ``[min, max]``; ``None`` leaves that side open.

    ``min``/``max`` are Python scalars or arrays broadcastable to ``x``; the result has x's
    dtype and shape. NaN in ``x`` or a bound propagates."""
    x = unwrap_scalar(x)
    if not is_array(x):
        raise TypeError(f"clip: x must be an array; got {type(x).__name__}")
    if x.dtype.kind not in "iuf":
        raise TypeError(f"clip requires real numeric input; got {x.dtype}")
    bounds = []
    for b, side in ((min, "min"), (max, "max")):
        b = unwrap_scalar(b)
        if b is None:
            if x.dtype.kind == "f":
                b = -float("inf") if side == "min" else float("inf")
            else:
                info = np.iinfo(x.dtype)
                b = int(info.min if side == "min" else info.max)
        elif is_array(b):
            if b.dtype.kind not in "iuf":
                raise TypeError(f"clip: {side} must be real numeric; got {b.dtype}")
            from ._eager import broadcast_shapes
            shape = broadcast_shapes(x.shape, b.shape)
            if shape != x.shape:
                raise ValueError(f"clip: {side} of shape {b.shape} does not broadcast to x's "
                                 f"shape {x.shape}")
        elif isinstance(b, (bool, int, float)):
            if isinstance(b, float) and x.dtype.kind in "iu":
                raise TypeError(f"clip: float {side}={b} with integer input {x.dtype}")
            if x.dtype.kind in "iu":
                info = np.iinfo(x.dtype)
                b = int(np.clip(b, info.min, info.max))
        else:
            raise TypeError(f"clip: {side} must be an array, a Python scalar or None")
        bounds.append(b)
    return primitive("clip").bind(x, *bounds, dtype=x.dtype, out_dtype=x.dtype,
                                  arg_dtypes=(x.dtype,) * 3)


__all__ += ["round", "where", "clip"]
