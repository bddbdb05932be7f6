"""Data types, the Array API promotion lattice and dtype categories.

clnp dtypes *are* NumPy dtype objects (an array's ``.dtype`` is ``numpy.dtype('float32')``, and
``clnp.float32 is numpy.float32``, the scalar type, as in CuPy): that keeps
interop with NumPy, scikit-learn and array_api_compat free, and lets NumPy be the oracle.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

bool_ = np.dtype("bool")
int8, int16, int32, int64 = (np.dtype(n) for n in ("int8", "int16", "int32", "int64"))
uint8, uint16, uint32, uint64 = (np.dtype(n) for n in ("uint8", "uint16", "uint32", "uint64"))
float16, float32, float64 = (np.dtype(n) for n in ("float16", "float32", "float64"))
complex64, complex128 = np.dtype("complex64"), np.dtype("complex128")
# bfloat16 is ml_dtypes' NumPy dtype (what JAX uses): a host copy holds ml_dtypes.bfloat16
# values. NumPy files it under kind 'V' (a user-defined dtype), so code that asks for the kind
# of a dtype that may be bfloat16 uses :func:`kind`, which says 'f'.
bfloat16 = np.dtype(ml_dtypes.bfloat16)
# 16-bit floats stored as 16 bits and computed in float32 on every device
HALF = (float16, bfloat16)

SIGNED = (int8, int16, int32, int64)
UNSIGNED = (uint8, uint16, uint32, uint64)
INTEGER = SIGNED + UNSIGNED
REAL_FLOATING = (float16, bfloat16, float32, float64)
COMPLEX_FLOATING = (complex64, complex128)
FLOATING = REAL_FLOATING + COMPLEX_FLOATING
NUMERIC = INTEGER + FLOATING
ALL = (bool_,) + NUMERIC

# Category names use the standard's wording so error messages can quote it.
CATEGORIES: dict[str, tuple[np.dtype, ...]] = {
    "any": ALL,
    "boolean": (bool_,),
    "integer": INTEGER,
    "integer or boolean": INTEGER + (bool_,),
    "signed integer": SIGNED,
    "unsigned integer": UNSIGNED,
    "real-valued": INTEGER + REAL_FLOATING,
    "real numeric": INTEGER + REAL_FLOATING,
    "numeric": NUMERIC,
    "floating-point": FLOATING,
    "real floating-point": REAL_FLOATING,
    "complex floating-point": COMPLEX_FLOATING,
}

# isdtype kinds (spec names) -> dtypes
KINDS: dict[str, tuple[np.dtype, ...]] = {
    "bool": (bool_,),
    "signed integer": SIGNED,
    "unsigned integer": UNSIGNED,
    "integral": INTEGER,
    "real floating": REAL_FLOATING,
    "complex floating": COMPLEX_FLOATING,
    "numeric": NUMERIC,
}


def kind(d: np.dtype) -> str:
    """``d.kind``, with bfloat16 a float ('f') rather than NumPy's 'V'."""
    k = d.kind
    return "f" if k == "V" and d == bfloat16 else k


def finfo(d: np.dtype) -> object:
    """NumPy's finfo, or ml_dtypes' for bfloat16 (NumPy's does not know user-defined dtypes)."""
    return ml_dtypes.finfo(d) if d == bfloat16 else np.finfo(d)


def _promote_bfloat16(other: np.dtype) -> np.dtype:
    """JAX's lattice (which ml_dtypes follows where NumPy defines the pair): bool and every
    integer keep bfloat16, float16 meets it at float32, wider floats and complex win."""
    if other.kind in "biu" or other == bfloat16:
        return bfloat16
    if other == float16:
        return float32
    return other


def _build_promotion() -> dict[tuple[np.dtype, np.dtype], np.dtype]:
    """The standard's table for same-kind pairs; NumPy 2 where the standard is silent."""
    # Pairs the standard leaves undefined (bool with numbers, int64 with uint64) follow NumPy 2,
    # which makes clnp a drop-in for NumPy code such as ``x * mask``.
    return {(a, b): _promote_bfloat16(b) if a == bfloat16 else
            _promote_bfloat16(a) if b == bfloat16 else np.promote_types(a, b)
            for a in ALL for b in ALL}


PROMOTION = _build_promotion()


def promote(a: np.dtype, b: np.dtype) -> np.dtype:
    """Result dtype of a binary operation between arrays of dtypes ``a`` and ``b``."""
    try:
        return PROMOTION[(a, b)]
    except KeyError:
        raise TypeError(f"no promotion rule for {a} and {b} (the Array API leaves this "
                        f"combination undefined; cast one operand explicitly)") from None


def is_in(dtype: np.dtype, category: str) -> bool:
    return dtype in CATEGORIES[category]


def as_dtype(dtype: object, fname: str = "") -> np.dtype:
    """Normalise a user dtype spec (dtype, type, or name) to one of clnp's dtypes;
    ``fname`` names the calling function in the error."""
    where = f"{fname}: " if fname else ""
    if dtype is bool:
        return bool_
    if isinstance(dtype, str) and dtype == "bfloat16":   # a name NumPy does not know
        return bfloat16
    try:
        dt = np.dtype(dtype)  # type: ignore[call-overload]
    except TypeError:
        raise TypeError(f"{where}{dtype!r} is not a data type") from None
    if dt not in ALL:
        from .._core.scalar_types import unsupported_dtype_message
        msg = unsupported_dtype_message(dt, fname)
        if msg:
            raise TypeError(msg)
        raise TypeError(f"{where}data type {dt} is not supported by clnp "
                        f"(supported: {', '.join(str(d) for d in ALL)})")
    return dt


def scalar_kind_ok(value: object, dtype: np.dtype) -> bool:
    """Whether a Python scalar may combine with an array of ``dtype`` (NEP 50 / the standard)."""
    if isinstance(value, bool):
        return True if dtype == bool_ else kind(dtype) in "iufc"
    if isinstance(value, int):
        return kind(dtype) in "iufc"
    if isinstance(value, float):
        return kind(dtype) in "fc"
    if isinstance(value, complex):
        return dtype.kind == "c"
    return False


def weak_scalar_dtype(value: object, dtype: np.dtype) -> np.dtype:
    """The dtype a Python scalar takes next to an array of ``dtype`` (NEP 50 weak scalars).

    ``int`` with a bool array gives int64 (the default integer), ``float`` with an integer array
    gives the default float, ``complex`` with a real float gives the matching complex type.
    """
    if isinstance(value, bool) or kind(dtype) in "fc":
        if isinstance(value, complex) and kind(dtype) == "f":
            return complex128 if dtype == float64 else complex64
        return dtype
    if isinstance(value, int):
        return dtype if dtype.kind in "iu" else int64
    if isinstance(value, float):
        return dtype if kind(dtype) in "fc" else float64
    if isinstance(value, complex):
        return dtype if dtype.kind == "c" else complex128
    raise TypeError(f"unsupported scalar {value!r}")
