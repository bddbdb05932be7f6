"""In-place operators (``x += y``, ``x @= y``...) with NumPy's ``same_kind`` output casting.

``x op= y`` is NumPy's ``ufunc(x, y, out=x, casting="same_kind")``: the operation runs in the
dtype NEP 50 promotion gives (float64 for a float32 ``x`` and a float64 ``y``; float32 for a
Python float ``y``), then the result is cast back to ``x``'s dtype when that cast stays within
a kind (float64 -> float32, int64 -> int32, int64 -> uint8). A cast across kinds (float into
an integer array, complex into a real one, anything but bool into bool) is refused with a
``TypeError`` before anything is written, as NumPy refuses it. Eager arrays are written in
place; a traced left operand (``clnp_grad``) is rebound to the functional result.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .._kernels import op_table as _ops
from .._core.array import Array
from .._core.dispatch import inplace_fast
from .._core.checks import is_array
from .._core.prims import primitive
from .._core import attached as _attached

# the Python spelling of each in-place operator, for messages
SYMBOLS = {"add": "+=", "subtract": "-=", "multiply": "*=", "divide": "/=",
           "floor_divide": "//=", "remainder": "%=", "pow": "**=", "bitwise_and": "&=",
           "bitwise_or": "|=", "bitwise_xor": "^=", "bitwise_left_shift": "<<=",
           "bitwise_right_shift": ">>=", "matmul": "@="}


def check_cast(name: str, result: np.dtype, target: np.dtype) -> None:
    """TypeError unless NumPy's ``same_kind`` rule lets ``x op= y`` store a ``result``-typed
    value into ``x`` of dtype ``target``."""
    if result != target and not np.can_cast(result, target, casting="same_kind"):
        sym = SYMBOLS.get(name, f"{name}=")
        op = sym[:-1]
        raise TypeError(
            f"in-place {name} ({sym}): cannot cast the result from {result} to the left "
            f"operand's dtype {target} with casting rule 'same_kind' (NumPy refuses it too); "
            f"write x = x {op} y for a {result} result, or convert y with "
            f"astype(y, {target}) first")


def inplace(name: str, x: Any, other: Any) -> Any:
    """``x op= other`` for elementwise op ``name`` (see the module docstring); returns the
    object the caller's name is bound to: ``x`` itself for an eager array."""
    if getattr(x, "dtype", None) == np.bool_ and (
            isinstance(other, (bool, np.bool_)) or getattr(other, "dtype", None) == np.bool_):
        if name in _ops.BOOL_LOGICAL:       # NumPy's bool loops: += is |=, *= is &=
            name = _ops.BOOL_LOGICAL[name]
        elif name in _ops.BOOL_INT8:        # computed in int8, which bool cannot hold
            check_cast(name, np.dtype(np.int8), x.dtype)
    if inplace_fast(name, x, other):
        return x          # one kernel writing x: operands of x's dtype, exact shape
    from .elementwise import _kernel_args, _normalize, _resolve, apply
    rec = _ops.OPS[name]
    given = other
    norm, device = _normalize(name, (x, other))
    compute, out, arg_dtypes, overflow = _resolve(rec, norm, device)
    if overflow:
        raise OverflowError(f"in-place {name}: Python integer {other} out of bounds for "
                            f"{compute}")
    check_cast(name, out, x.dtype)
    other = norm[1]
    if is_array(other):
        from .._core.eager import broadcast_shapes
        try:
            shape = broadcast_shapes(x.shape, other.shape)
        except ValueError:
            shape = None
        if shape != tuple(x.shape):
            raise ValueError(f"in-place {name} ({SYMBOLS[name]}): operand of shape "
                             f"{other.shape} cannot be broadcast to the left operand's shape "
                             f"{x.shape}")
    traced = not isinstance(x, Array) or (is_array(other) and not isinstance(other, Array))
    if out == x.dtype:
        kargs = _kernel_args([x, other], compute)
        if traced:
            return primitive(name).bind(*kargs, dtype=compute, out_dtype=out,
                                        arg_dtypes=arg_dtypes)
        from .._core.eager import ew_apply
        ew_apply(name, kargs, compute, out, arg_dtypes, out=x)
        return x
    # computed in the promoted dtype, as NumPy's loop is, then cast back into x
    r = apply(name, x, given)
    if traced:
        return primitive("convert_element_type").bind(r, dtype=x.dtype)
    from .._core.eager import copy_into
    copy_into(x, r)
    return x

# the core's methods implemented here (clnp/_core/attached.py)
_attached.attach(inplace=inplace)
