"""Elementwise functions of the standard, generated from the op table (``clnp._kernels.op_table``).

Operands are clnp arrays (or ``clnp_grad`` tracers), Python scalars, NumPy arrays (uploaded to
the device of the array operand) and NumPy scalars. Type promotion follows NumPy 2 / NEP 50:
arrays and NumPy scalars are strongly typed, Python scalars are weak (they take the array's
dtype when their kind allows it; an ``int`` that does not fit an integer dtype raises
OverflowError, except in comparisons, whose result is then known exactly).
"""
from __future__ import annotations

import ast
import builtins
import functools
from typing import Any, Callable, Sequence

import numpy as np

from .._core import dtypes as dt
from .._kernels import op_table as _ops
from .._core.array import Array
from .._core.dispatch import apply_fast
from .._core.checks import is_array
from .._core.prims import primitive
from .ufunc import ufunc
from .._core.dtypes import kind as dkind

__all__: list[str] = []

from .._core.promotion import _BOUNDS, _PY_SCALARS, _Strong, _is_int, _promote, _resolve, resolve
from .._core.namespace import namespace as _namespace
_FAST_TYPES = frozenset({Array, bool, int, float, complex})


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
            from .creation import asarray
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
            from .creation import asarray
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


def _kernel_args(args: list[Any], compute: np.dtype) -> list[Any]:
    """Strong scalars become plain values; float16 computations get their scalars rounded to
    float16 first (NumPy converts the weak scalar to the array dtype, then computes)."""
    if compute not in dt.HALF and not any([type(a) is _Strong for a in args]):
        return args
    out = [a.value if isinstance(a, _Strong) else a for a in args]
    if compute in dt.HALF:
        with np.errstate(over="ignore"):     # too large for the type: inf, as on the device
            out = [float(compute.type(a)) if isinstance(a, (int, float)) and
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


def _check_operands(name: str, args: Sequence[Any]) -> None:
    """Same device and broadcastable shapes, or an error naming ``name`` (before any kernel)."""
    arrays = [a for a in args if type(a) is Array]
    if len(arrays) < 2:
        return
    device = arrays[0].device
    for a in arrays[1:]:
        if a.device is not device:
            raise ValueError(f"{name}: operands are on different devices: {device} and "
                             f"{a.device}; move one with to_device()")
    from .._core.eager import broadcast_shapes
    try:
        broadcast_shapes(*(a.shape for a in arrays))
    except ValueError as e:
        raise ValueError(f"{name}: {e}") from None


def _truth(a: Any) -> Any:
    """A logical op's operand as bool: NumPy counts non-zero values as true."""
    if isinstance(a, _Strong):
        return bool(a.value)
    if isinstance(a, _PY_SCALARS):
        return bool(a)
    return a if a.dtype == dt.bool_ else apply("not_equal", a, 0)


def apply(name: str, *args: Any) -> Any:
    """Apply elementwise op ``name`` to arrays/scalars (broadcasting, NEP 50 promotion)."""
    fast = apply_fast(name, args)
    if fast is not None:
        return fast
    rec = _ops.OPS[name]
    norm, device = _normalize(name, args)
    _check_operands(name, norm)
    if rec.extra.get("truthy"):
        norm = [_truth(a) for a in norm]
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


def _summary(rec: _ops.EwOp) -> str:
    extra = (" Booleans and integers are computed in floating point, as NumPy does."
             if rec.float_only else "")
    return (f"Computes ``{rec.name}`` for each element of the input{'' if rec.nin == 1 else 's'}"
            f" (``numpy.{rec.ref.__name__}`` semantics, with the Array API special cases)."
            f"{extra}")


_round = builtins.round       # the module defines its own round (the op) below


def _example(rec: _ops.EwOp) -> str:
    """A call on small arrays inside the op's domain, printed through NumPy; the expected
    output is the op's NumPy reference on the same values (rounded to 4 decimals, so that
    float32 and float64 devices print the same)."""
    lo, hi = rec.domain
    if rec.category in ("boolean",):
        vals = ["[True, False, True]", "[True, True, False]"]
    elif rec.category in ("integer", "integer or boolean"):
        vals = ["[1, 6, 12]", "[3, 2, 5]"] if rec.name.startswith("bitwise") and \
            "shift" not in rec.name else ["[1, 6, 12]", "[1, 2, 3]"]
    else:
        a, b = _round(lo + 0.25 * (hi - lo), 2), _round(lo + 0.75 * (hi - lo), 2)
        vals = [f"[{a}, {b}]", f"[{_round(0.5 * (lo + hi), 2)}, {b}]"]
    host = [np.asarray(ast.literal_eval(v)) for v in vals]

    def show(expr: str, value: Any) -> list[str]:
        value = np.asarray(value)
        if dkind(value.dtype) in "fc":
            return [f">>> print(numpy.round(numpy.asarray({expr}), 4))",
                    str(np.round(value, 4))]
        return [f">>> print(numpy.asarray({expr}))", str(value)]
    call = ", ".join(f"np.asarray({v})" for v in vals[:rec.nin])
    lines = [">>> import numpy, clnp as np"]
    with np.errstate(all="ignore"):
        lines += show(f"np.{rec.name}({call})", rec.ref(*host[:rec.nin]))
        if rec.nin == 2 and rec.out == "same" and not rec.float_only and \
                hasattr(rec.ref, "reduce"):
            lines += show(f"np.{rec.name}.reduce(np.asarray({vals[0]}))",
                          rec.ref.reduce(host[0]))
        if rec.nin == 2 and hasattr(rec.ref, "outer"):
            lines += show(f"np.{rec.name}.outer(np.asarray({vals[0]}), np.asarray({vals[1]}))",
                          rec.ref.outer(host[0], host[1]))
    return "\n".join(lines)


def ufunc_doc(rec: _ops.EwOp) -> str:
    """The NumPy-format docstring of the ufunc made from table row ``rec``."""
    ins = "x" if rec.nin == 1 else "x1, x2"
    out = {"same": "the promoted dtype of the inputs (NEP 50)", "bool": "bool",
           "real": "the real-valued dtype of the input (float for complex)"}[rec.out]
    methods = ("" if rec.nin == 1 else
               "\n\nAs a ufunc it also has ``reduce``, ``accumulate``, ``reduceat``, "
               "``outer`` and ``at``\n(``at`` with a ``b`` operand); see :class:`clnp.ufunc`.")
    if rec.nin == 1:
        methods = "\n\nAs a ufunc it also has ``at(a, indices)``; see :class:`clnp.ufunc`."
    return f"""{rec.name}({ins}, /, out=None, *, where=True, casting='same_kind', order='K', dtype=None)

{_summary(rec)}{methods}

Parameters
----------
{ins} : Array or array_like
    Input{'s' if rec.nin > 1 else ''} of the standard's category "{rec.category}". Python
    scalars, lists and NumPy arrays are accepted and uploaded next to the array operand
    (Python scalars are weakly typed, NEP 50){'; inputs broadcast together' if rec.nin > 1 else ''}.
out : Array, optional
    Array the result is written to (cast under ``casting``); it is also returned.
where : array_like of bool, optional
    Where False, the result keeps ``out``'s value (zero when no ``out`` is given).
casting : {{'no', 'equiv', 'safe', 'same_kind', 'unsafe'}}, optional
    Casts allowed between the inputs, ``dtype`` and ``out``.
order : {{'K', 'A', 'C'}}, optional
    Results are C-ordered; ``'F'`` raises ValueError.
dtype : dtype, optional
    Computation dtype: the inputs are cast to it first.
subok : bool, optional
    Accepted for NumPy (clnp has no array subclasses).
signature : None, optional
    Choosing a loop is not supported (use ``dtype``).

Returns
-------
Array
    The elementwise result, of {out}.

Raises
------
TypeError
    An input dtype outside the op's category, an operand that is not array-like, or a cast
    that ``casting`` forbids.
ValueError
    Shapes that do not broadcast together (or into ``out``).
OverflowError
    A Python int that does not fit the integer dtype it is computed in.

Examples
--------
{_example(rec)}
"""


for _rec in _ops.OPS.values():
    if _rec.nin == 3 or _rec.name == "copy" or _rec.name == "round":
        continue
    _f = (_make_unary if _rec.nin == 1 else _make_binary)(_rec.name)
    _f.__name__ = _f.__qualname__ = _rec.name
    globals()[_rec.name] = ufunc(_rec, _f, functools.partial(ufunc_doc, _rec))
    __all__.append(_rec.name)


def round(x, /):
    """Rounds each element to the nearest integer-valued number (ties to even), as
    ``numpy.round`` with ``decimals=0``. Complex inputs round both components.

    The namespace function also takes NumPy's ``decimals`` (rounding to that many decimal
    places, as ``clnp.around``) and ``out=``.

    Parameters
    ----------
    x : array
        Input array of a numeric dtype (Python scalars, lists and NumPy arrays are uploaded
        first).
    decimals : int, default 0
        NumPy's number of decimal places (the namespace function; as ``clnp.around``).
    out : array, optional
        NumPy's output array (the namespace function); it is also returned.

    Returns
    -------
    array
        The rounded values, of ``x``'s dtype (integers are returned unchanged).

    Raises
    ------
    TypeError
        ``x`` is boolean or not numeric.

    Examples
    --------
    >>> import clnp
    >>> x = clnp.asarray([0.5, 1.5, 2.5, 3.75], dtype=clnp.float32)
    >>> print(clnp.round(x))
    [0. 2. 2. 4.]
    >>> print(clnp.round(clnp.asarray([1.25, 2.5], dtype=clnp.float32), 1))
    [1.2 2.5]
    """
    return apply("round", x)


_UNSET = object()


def where(condition, x1=_UNSET, x2=_UNSET, /):
    """Elements of ``x1`` where ``condition`` is true, else of ``x2`` (broadcast together).

    Parameters
    ----------
    condition : Array or array_like
        Where true, take ``x1``. A non-boolean condition counts its non-zero elements as
        true (NumPy); lists and NumPy arrays are uploaded, and a Python or NumPy scalar
        acts as a 0-d condition.
    x1, x2 : Array, array_like or Python scalar, optional
        The values; the result dtype is their promoted dtype (NEP 50 for Python scalars).
        Both omitted: ``where(condition)`` is ``nonzero(condition)``, as in NumPy.

    Returns
    -------
    Array or tuple of Array
        The selection, or (one argument) the int64 indices of the true elements per axis.

    Raises
    ------
    TypeError
        Only one of ``x1``/``x2`` given, or operands that are not arrays or scalars.
    ValueError
        Shapes that do not broadcast together.

    Examples
    --------
    >>> import numpy, clnp as np
    >>> x = np.asarray([1.0, -2.0, 3.0])
    >>> print(numpy.asarray(np.where(x > 0, x, 0.0)))
    [1. 0. 3.]
    >>> print(numpy.asarray(np.where(x > 0)[0]))
    [0 2]
    """
    if isinstance(condition, (list, tuple)):
        condition = np.asarray(condition)
    if x1 is _UNSET and x2 is _UNSET:
        from .creation import asarray
        nonzero = _namespace().nonzero     # searching: later in this layer
        c = condition if is_array(condition) else asarray(condition)
        return nonzero(c)
    if x1 is _UNSET or x2 is _UNSET:
        raise TypeError("where: either both or neither of x1 and x2 should be given")
    x1, x2 = (np.asarray(v) if isinstance(v, (list, tuple)) else v for v in (x1, x2))
    norm, device = _normalize("where", (condition, x1, x2))
    _check_operands("where", norm)
    condition, x1, x2 = norm
    if isinstance(condition, (_Strong, bool, int, float, complex)):
        # NumPy takes a scalar condition (a NumPy bool from a host test, say) as a 0-d one
        from .creation import asarray
        condition = asarray(bool(condition.value if isinstance(condition, _Strong)
                                 else condition), device=device)
    if not is_array(condition):
        raise TypeError(f"where: condition must be an array; got "
                        f"{type(condition).__name__}")
    if condition.dtype != dt.bool_:
        condition = apply("not_equal", condition, 0)     # NumPy: non-zero is true
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

    NaN in ``x`` or a bound propagates. The namespace function also takes NumPy's
    ``a_min``/``a_max`` spellings and ``out=``.

    Parameters
    ----------
    x : array
        Input array of a real numeric dtype.
    min, max : scalar or array, optional
        The bounds: Python scalars, or arrays broadcast together with ``x`` (cast to ``x``'s
        dtype); None leaves that side open.
    out : array, optional
        NumPy's output array (the namespace function); it is also returned.
    a_min, a_max : scalar or array, optional
        NumPy's older names of ``min`` and ``max`` (not together with them).

    Returns
    -------
    array
        The clamped values, of ``x``'s dtype and the broadcast shape.

    Raises
    ------
    TypeError
        ``x`` is not an array or not real numeric, a bound is not real numeric, or a float
        bound is given for integer ``x``.
    ValueError
        ``x`` and array bounds do not broadcast together.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.clip(clnp.arange(6), 1, 4))
    [1 1 2 3 4 4]
    >>> x = clnp.asarray([1.0, -2.0, 5.0], dtype=clnp.float32)
    >>> print(clnp.clip(x, max=clnp.asarray([0.0, 0.0, 3.0], dtype=clnp.float32)))
    [ 0. -2.  3.]
    """
    if isinstance(x, np.ndarray):
        from .creation import asarray
        x = asarray(x)
    if not is_array(x):
        raise TypeError(f"clip: x must be an array; got {type(x).__name__}")
    if dkind(x.dtype) not in "iuf":
        raise TypeError(f"clip requires real numeric input; got {x.dtype}")
    bounds = []
    for b, side in ((min, "min"), (max, "max")):
        if isinstance(b, np.generic):
            b = b.item()
        elif isinstance(b, np.ndarray):
            from .creation import asarray
            b = asarray(b, device=x.device)
        if b is None:
            if dkind(x.dtype) == "f":
                b = -float("inf") if side == "min" else float("inf")
            else:
                info = np.iinfo(x.dtype)
                b = int(info.min if side == "min" else info.max)
        elif is_array(b):
            if dkind(b.dtype) not in "iuf":
                raise TypeError(f"clip: {side} must be real numeric; got {b.dtype}")
        elif isinstance(b, (bool, int, float)):
            if isinstance(b, float) and dkind(x.dtype) in "iu":
                raise TypeError(f"clip: float {side}={b} with integer input {x.dtype}")
            if dkind(x.dtype) in "iu":
                info = np.iinfo(x.dtype)
                b = int(np.clip(b, info.min, info.max))
        else:
            raise TypeError(f"clip: {side} must be an array, a Python scalar or None")
        bounds.append(b)
    arrays = [a for a in (x, *bounds) if is_array(a)]
    if len(arrays) > 1:
        from .._core.eager import broadcast_shapes
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
