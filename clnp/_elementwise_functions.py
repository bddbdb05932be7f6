"""Elementwise functions of the standard, generated from the op table (``clnp._ops``).

Operands are clnp arrays (or ``clnp_grad`` tracers), Python scalars, NumPy arrays (uploaded to
the device of the array operand) and NumPy scalars. Type promotion follows NumPy 2 / NEP 50:
arrays and NumPy scalars are strongly typed, Python scalars are weak (they take the array's
dtype when their kind allows it; an ``int`` that does not fit an integer dtype raises
OverflowError, except in comparisons, whose result is then known exactly).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import _dtypes as dt
from . import _ops
from ._array import Array
from ._dispatch import apply_fast
from ._helpers import is_array
from ._prims import primitive

__all__: list[str] = []

_PY_SCALARS = (bool, int, float, complex)
_FAST_TYPES = frozenset({Array, bool, int, float, complex})


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


def _normalize(name: str, args: tuple[Any, ...]) -> tuple[list[Any], Any]:
    """Upload NumPy arrays next to the first device operand, wrap NumPy scalars as strong
    scalars, and reject anything else that is not a Python scalar; returns (args, device)."""
    device = None
    fast = True
    for a in args:
        if device is None and (type(a) is Array or is_array(a)):
            device = a.device
        if type(a) not in _FAST_TYPES:
            fast = False
    if fast and device is not None:
        return list(args), device            # the common case: arrays and Python scalars
    if device is None:
        if any(isinstance(a, np.ndarray) for a in args):
            from ._creation_functions import asarray
            device = asarray(next(a for a in args if isinstance(a, np.ndarray))).device
        else:
            raise TypeError(f"{name}: at least one argument must be an array; got "
                            f"{', '.join(type(a).__name__ for a in args)} (wrap lists with "
                            f"clnp.asarray)")
    out: list[Any] = []
    for a in args:
        if is_array(a) or (isinstance(a, _PY_SCALARS) and not isinstance(a, np.generic)):
            out.append(a)
        elif isinstance(a, np.ndarray):
            from ._creation_functions import asarray
            out.append(asarray(a, device=device))
        elif isinstance(a, np.generic):
            try:
                d = dt.as_dtype(a.dtype)
            except TypeError:
                raise TypeError(f"{name}: unsupported operand {a!r} of NumPy dtype "
                                f"{a.dtype}") from None
            # without fp64 a NumPy double (e.g. from a host reduction) acts as a Python float
            out.append(_Strong(a.item(), d) if device.supports(d) else a.item())
        else:
            wrap = " (wrap lists with clnp.asarray)" if isinstance(a, (list, tuple)) else ""
            raise TypeError(f"{name}: unsupported operand type {type(a).__name__}; expected "
                            f"an array, a Python scalar or a NumPy array/scalar{wrap}")
    return out, device


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
            res = dt.promote(res, dt.weak_scalar_dtype(_WEAK_SAMPLE[a.dtype.kind], res))
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


def _kernel_args(args: list[Any], compute: np.dtype) -> list[Any]:
    """Strong scalars become plain values; float16 computations get their scalars rounded to
    float16 first (NumPy converts the weak scalar to the array dtype, then computes)."""
    if compute is not dt.float16 and not any([type(a) is _Strong for a in args]):
        return args
    out = [a.value if isinstance(a, _Strong) else a for a in args]
    if compute == dt.float16:
        with np.errstate(over="ignore"):     # too large for float16: inf, as on the device
            out = [float(np.float16(a)) if isinstance(a, (int, float)) and
                   not isinstance(a, bool) else a for a in out]
    return out


_COMPARISONS = {"equal": "equal", "not_equal": "not_equal", "less": "greater",
                "greater": "less", "less_equal": "greater_equal",
                "greater_equal": "less_equal"}


def _compare_out_of_range(name: str, args: list[Any], compute: np.dtype) -> Any:
    """``x op s`` for an integer array ``x`` and a Python int ``s`` outside its range: every
    element compares the same way (NumPy 2 answers exactly instead of raising)."""
    k = 0 if isinstance(args[0], int) and not isinstance(args[0], bool) else 1
    s, x = args[k], args[1 - k]
    op = _COMPARISONS[name] if k == 0 else name      # rewrite as ``x op s``
    big = s > np.iinfo(compute).max
    truth = {"less": big, "less_equal": big, "greater": not big, "greater_equal": not big,
             "equal": False, "not_equal": True}[op]
    lo = int(np.iinfo(compute).min)
    # x >= min is always true and x < min always false: one kernel, no host round trip
    return apply("greater_equal" if truth else "less", x, lo)


def apply(name: str, *args: Any) -> Any:
    """Apply elementwise op ``name`` to arrays/scalars (broadcasting, NEP 50 promotion)."""
    fast = apply_fast(name, args)
    if fast is not None:
        return fast
    rec = _ops.OPS[name]
    norm, device = _normalize(name, args)
    compute, out, arg_dtypes, overflow = _resolve(rec, norm, device)
    if overflow:
        if name in _COMPARISONS and len(norm) == 2:
            return _compare_out_of_range(name, norm, compute)
        lo, hi = _BOUNDS[compute]
        bad = next(a for a in norm if _is_int(a) and not lo <= a <= hi)
        raise OverflowError(f"{name}: Python integer {bad} out of bounds for {compute}")
    if name == "pow" and compute.kind in "iu" and isinstance(norm[1], int) and norm[1] < 0:
        # NumPy raises; for array exponents (not checked: it would need a device read) the
        # kernel gives 0, or +-1 for bases +-1
        raise ValueError(f"pow: integers to negative integer powers are not allowed "
                         f"(exponent {norm[1]} with {compute} base)")
    return primitive(name).bind(*_kernel_args(norm, compute), dtype=compute, out_dtype=out,
                                arg_dtypes=arg_dtypes)


def _make_unary(name: str) -> Callable[..., Any]:
    def f(x, /):
        return apply(name, x)
    return f


def _make_binary(name: str) -> Callable[..., Any]:
    def f(x1, x2, /):
        return apply(name, x1, x2)
    return f


_DOC = ("Computes ``{name}`` for each element of the input{s} ({ref} semantics, with the "
        "Array API special cases).\n\nInput dtypes: {category}{extra}. Returns an array of "
        "the {out} dtype{bcast}.")

for _rec in _ops.OPS.values():
    if _rec.nin == 3 or _rec.name == "copy" or _rec.name == "round":
        continue
    _f = (_make_unary if _rec.nin == 1 else _make_binary)(_rec.name)
    _f.__name__ = _f.__qualname__ = _rec.name
    _f.__doc__ = _DOC.format(
        name=_rec.name, s="" if _rec.nin == 1 else "s", ref=f"numpy.{_rec.ref.__name__}",
        category=_rec.category,
        extra=(" (booleans and integers are computed in floating point, as NumPy does)"
               if _rec.float_only else ""),
        out={"same": "promoted", "bool": "bool", "real": "real-valued"}[_rec.out],
        bcast="" if _rec.nin == 1 else "; inputs broadcast together and either may be a "
                                       "Python scalar")
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
    norm, device = _normalize("where", (condition, x1, x2))
    condition, x1, x2 = norm
    if not is_array(condition):
        raise TypeError(f"where: condition must be a boolean array; got "
                        f"{type(condition).__name__}")
    if condition.dtype != dt.bool_:
        raise TypeError(f"where: condition must have dtype bool; got {condition.dtype}")
    if any(is_array(a) or isinstance(a, _Strong) for a in (x1, x2)):
        res = _promote("where", [x1, x2])
        if not device.has_fp64 and res in (dt.float64, dt.complex128):
            res = dt.float32 if res == dt.float64 else dt.complex64
    else:
        res = _scalar_default_dtype((x1, x2), device)
    if res.kind in "iu":
        info = np.iinfo(res)
        for s in (x1, x2):
            if isinstance(s, int) and not isinstance(s, bool) and \
                    not info.min <= s <= info.max:
                raise OverflowError(f"where: Python integer {s} out of bounds for {res}")
    kx1, kx2 = _kernel_args([x1, x2], res)
    return primitive("where").bind(condition, kx1, kx2, dtype=res, out_dtype=res,
                                   arg_dtypes=(dt.bool_, res, res))


def _scalar_default_dtype(scalars: tuple[Any, ...], device: Any) -> np.dtype:
    """where(cond, scalar, scalar): the widest scalar kind's default dtype decides."""
    if any(isinstance(k, complex) for k in scalars):
        return device.default_complex
    if any(isinstance(k, float) for k in scalars):
        return device.default_float
    if any(isinstance(k, int) and not isinstance(k, bool) for k in scalars):
        return dt.int64
    return dt.bool_


def clip(x, /, min=None, max=None):
    """Clamps each element of ``x`` to ``[min, max]``; ``None`` leaves that side open.

    ``min``/``max`` are Python scalars or arrays broadcast together with ``x``; the result has
    x's dtype (array bounds are cast to it). NaN in ``x`` or a bound propagates."""
    if isinstance(x, np.ndarray):
        from ._creation_functions import asarray
        x = asarray(x)
    if not is_array(x):
        raise TypeError(f"clip: x must be an array; got {type(x).__name__}")
    if x.dtype.kind not in "iuf":
        raise TypeError(f"clip requires real numeric input; got {x.dtype}")
    bounds = []
    for b, side in ((min, "min"), (max, "max")):
        if isinstance(b, np.generic):
            b = b.item()
        elif isinstance(b, np.ndarray):
            from ._creation_functions import asarray
            b = asarray(b, device=x.device)
        if b is None:
            if x.dtype.kind == "f":
                b = -float("inf") if side == "min" else float("inf")
            else:
                info = np.iinfo(x.dtype)
                b = int(info.min if side == "min" else info.max)
        elif is_array(b):
            if b.dtype.kind not in "iuf":
                raise TypeError(f"clip: {side} must be real numeric; got {b.dtype}")
        elif isinstance(b, (bool, int, float)):
            if isinstance(b, float) and x.dtype.kind in "iu":
                raise TypeError(f"clip: float {side}={b} with integer input {x.dtype}")
            if x.dtype.kind in "iu":
                info = np.iinfo(x.dtype)
                b = int(np.clip(b, info.min, info.max))
        else:
            raise TypeError(f"clip: {side} must be an array, a Python scalar or None")
        bounds.append(b)
    arrays = [a for a in (x, *bounds) if is_array(a)]
    if len(arrays) > 1:
        from ._eager import broadcast_shapes
        broadcast_shapes(*(a.shape for a in arrays))    # ValueError naming every shape
    bounds = _kernel_args(bounds, x.dtype)
    return primitive("clip").bind(x, *bounds, dtype=x.dtype, out_dtype=x.dtype,
                                  arg_dtypes=(x.dtype,) * 3)


__all__ += ["round", "where", "clip"]

# NumPy spellings of the same functions (same objects, so behaviour cannot drift)
_ALIASES = {"absolute": "abs", "arccos": "acos", "arccosh": "acosh", "arcsin": "asin",
            "arcsinh": "asinh", "arctan": "atan", "arctan2": "atan2", "arctanh": "atanh",
            "power": "pow", "invert": "bitwise_invert", "bitwise_not": "bitwise_invert",
            "left_shift": "bitwise_left_shift", "right_shift": "bitwise_right_shift",
            "conjugate": "conj", "true_divide": "divide", "mod": "remainder"}
for _alias, _target in _ALIASES.items():
    globals()[_alias] = globals()[_target]
__all__ += list(_ALIASES)
