"""Dtype resolution of elementwise ops (NumPy 2 / NEP 50 promotion) over normalised operands:
clnp arrays or tracers, Python scalars (weak) and NumPy scalars (strong, ``_Strong``).

An implementation module: both the namespace (``clnp._array_api.elementwise``) and the eager
fast path (``clnp._core.dispatch``) resolve through it, so their results cannot differ.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import dtypes as dt
from .._kernels import op_table as _ops
from .array import Array
from .checks import is_array
from .dtypes import kind as dkind

_PY_SCALARS = (bool, int, float, complex)


class _Strong:
    """A NumPy scalar operand: strongly typed in promotion, passed to kernels by value."""

    __slots__ = ("value", "dtype")

    def __init__(self, value: Any, dtype: np.dtype):
        self.value, self.dtype = value, dtype


def _real_of(d: np.dtype) -> np.dtype:
    return {"complex64": dt.float32, "complex128": dt.float64}.get(d.name, d)


def _float_of(d: np.dtype, device: Any, default: bool) -> np.dtype:
    """Floating dtype an integer/bool input computes in: NumPy's smallest float that holds it
    (int8 -> float16, int16 -> float32, ...), or the default float (NumPy's true division)."""
    f = device.default_float if default else np.promote_types(d, np.float16)
    return dt.float32 if f == dt.float64 and not device.has_fp64 else f


def _promote(name: str, args: list[Any]) -> np.dtype:
    """NEP 50 promotion: arrays and strong scalars first, then weak Python scalars."""
    res = None
    for a in args:
        if (is_array(a) and not _weak(a)) or isinstance(a, _Strong):
            res = a.dtype if res is None else dt.promote(res, a.dtype)
    if res is None:
        weak = [a for a in args if _weak(a)]
        if not weak:
            raise TypeError(f"{name}: at least one argument must be an array")
        res = weak[0].dtype   # weak values only: they keep their own (default) dtype
    for a in args:
        if isinstance(a, _PY_SCALARS):
            res = dt.promote(res, dt.weak_scalar_dtype(a, res))
        elif _weak(a):
            res = dt.promote(res, dt.weak_scalar_dtype(_WEAK_SAMPLE[dkind(a.dtype)], res))
    return res


# A weakly typed traced value (a Python scalar argument of a jitted function) promotes like a
# Python scalar of its kind (NEP 50), so ``x * s`` keeps x's float32 when s is a traced float.
_WEAK_SAMPLE = {"b": True, "i": 0, "u": 0, "f": 0.0, "c": 0j}


def _weak(a: Any) -> bool:
    return getattr(a, "weak_type", False) is True


def _check_accepts(rec: _ops.EwOp, args: list[Any], res: np.dtype) -> None:
    """The promoted dtype must be in the op's category. Operands are not checked one by one:
    NumPy code multiplies by boolean masks (``x * mask``), which promote to a valid dtype."""
    if not rec.accepts(res):
        kinds = [type(a).__name__ if isinstance(a, _PY_SCALARS) else str(a.dtype)
                 for a in args]
        got = str(res) if all(k == kinds[0] for k in kinds) else \
            f"{res} (promoted from {', '.join(kinds)})"
        raise TypeError(f"{rec.name} requires {rec.category} input; got {got}")


def resolve(rec: _ops.EwOp, args: tuple[Any, ...]) -> tuple[np.dtype, np.dtype, tuple]:
    """(compute dtype, result dtype, per-argument dtypes) for ``rec`` applied to ``args``
    (arrays and Python scalars), raising TypeError when a dtype is outside the op's category
    and OverflowError when a Python int does not fit the integer dtype it computes in."""
    compute, out, arg_dtypes, overflow = _resolve(rec, list(args), next(
        a.device for a in args if is_array(a)))
    if overflow:
        raise OverflowError(f"{rec.name}: Python integer out of bounds for {compute}")
    return compute, out, arg_dtypes


_RESOLVED: dict[tuple, tuple[np.dtype, np.dtype, tuple, bool]] = {}
_BOUNDS: dict[np.dtype, tuple[int, int]] = {d: (int(np.iinfo(d).min), int(np.iinfo(d).max))
                                            for d in dt.INTEGER}


def _resolve(rec: _ops.EwOp, args: list[Any], device: Any) -> tuple[np.dtype, np.dtype, tuple,
                                                                      bool]:
    """``resolve`` plus whether a Python int overflows the integer compute dtype; dtype
    decisions depend only on the operands' dtypes and scalar kinds, so they are memoised."""
    sig = tuple([a._dtype if type(a) is Array else
                 (type(a) if isinstance(a, _PY_SCALARS) else
                  (("weak", a.dtype) if _weak(a) else a.dtype)) for a in args])
    key = (rec.name, device.has_fp64, sig)
    r = _RESOLVED.get(key)
    if r is None:
        compute, out, arg_dtypes = _resolve_dtypes(rec, args, device)
        ints = compute in _BOUNDS and any(isinstance(t, type) and issubclass(t, int) and
                                          t is not bool for t in sig)
        r = _RESOLVED[key] = (compute, out, arg_dtypes, ints)
    compute, out, arg_dtypes, ints = r
    overflow = False
    if ints:
        lo, hi = _BOUNDS[compute]
        overflow = any(_is_int(a) and not lo <= a <= hi for a in args)
    return compute, out, arg_dtypes, overflow


def _is_int(a: Any) -> bool:
    return isinstance(a, int) and not isinstance(a, bool)


def _resolve_dtypes(rec: _ops.EwOp, args: list[Any], device: Any) -> tuple[np.dtype, np.dtype,
                                                                           tuple]:
    res = _promote(rec.name, args)
    if not device.has_fp64 and res in (dt.float64, dt.complex128):
        # only weak scalars can ask for double here (arrays of it cannot exist on this device)
        res = dt.float32 if res == dt.float64 else dt.complex64
    _check_accepts(rec, args, res)
    compute = res
    if rec.float_only and res.kind in "iub":
        compute = _float_of(res, device, rec.float_default)
    out = {"same": compute, "bool": dt.bool_, "real": _real_of(compute)}[rec.out]
    return compute, out, (compute,) * len(args)
