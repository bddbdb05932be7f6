"""Data types and their categories: the facts devices and kernel generators need (which
dtypes exist, their kinds and limits). The Array API's rules on them (promotion, user dtype
specs, Python scalars) build on these in :mod:`clnp._core.dtypes`.

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
