"""The Array API's rules on data types: the promotion lattice, user dtype specs and Python
(weak) scalars, on top of the dtype objects and categories of :mod:`clnp._runtime.dtypes`,
which this module also re-exports (``from clnp._core import dtypes as dt`` gives both).
"""
from __future__ import annotations

import numpy as np

from .._runtime.dtypes import *  # noqa: F401,F403  (the dtype objects and categories)
from .._runtime.dtypes import (ALL, CATEGORIES, bfloat16, bool_, complex64, complex128, float16,
                               float32, float64, int64, kind)


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


def unsupported_dtype_message(d: Any, fname: str = "") -> str | None:
    """The error text for a dtype no OpenCL device holds (None for a supported one)."""
    try:
        d = np.dtype(d)
    except TypeError:
        return None
    where = f"{fname}: " if fname else ""
    if d.kind in "US":
        return (f"{where}clnp arrays cannot hold strings (data type {d}): an OpenCL device has no "
                f"string type; keep text in NumPy arrays or Python lists and put numeric "
                f"codes (e.g. from numpy.unique(..., return_inverse=True)) on the device")
    if d.kind == "O":
        return (f"{where}clnp arrays cannot hold Python objects (data type object): device memory "
                f"holds only numbers; keep objects in NumPy arrays or lists, or convert them "
                f"to a numeric dtype first")
    if d.kind in "mM":
        return (f"{where}clnp arrays cannot hold {d} values (data type {d}): OpenCL has no datetime type; "
                f"convert with .astype('int64') (ticks since the epoch) on the host first")
    if d.kind == "V":
        return (f"{where}clnp arrays cannot hold structured or void data types ({d}); use one "
                f"array per field")
    if d.kind in "fc" and d.itemsize > 16 or (d.kind == "f" and d.itemsize > 8):
        return (f"{where}clnp arrays cannot hold data type {d}: OpenCL devices have no long double; "
                f"use float64 (or complex128)")
    return None


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
