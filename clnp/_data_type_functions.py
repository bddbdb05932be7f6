"""Data type functions of the standard: astype, can_cast, finfo, iinfo, isdtype, result_type."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _dtypes as dt
from ._helpers import check_array, is_array
from ._prims import primitive

__all__ = ["astype", "can_cast", "finfo", "iinfo", "isdtype", "result_type"]


def astype(x: Any, dtype: Any, /, *, copy: bool = True, device: Any = None) -> Any:
    """Copy of ``x`` cast to ``dtype`` (NumPy casting: complex to real drops the imaginary
    part, float to int truncates). With ``copy=False`` the input is returned when no cast is
    needed."""
    check_array(x, "astype")
    d = dt.as_dtype(dtype, "astype")
    if device is not None:
        x = x.to_device(device)
    x.device.check_dtype(d, "astype")
    if d == x.dtype:
        return primitive("copy").bind(x) if copy else x
    return primitive("convert_element_type").bind(x, dtype=d)


def _dtype_of(v: Any, fname: str) -> np.dtype:
    if is_array(v):
        return v.dtype
    try:
        return dt.as_dtype(v)
    except TypeError:
        raise TypeError(f"{fname}: expected an array or a dtype; got {v!r}") from None


def can_cast(from_: Any, to: Any, /) -> bool:
    """Whether ``from_`` (dtype or array) can be cast to ``to`` without loss under type
    promotion (NumPy's "safe" casting, which contains the standard's promotion table)."""
    f, t = _dtype_of(from_, "can_cast"), dt.as_dtype(to)
    return bool(np.can_cast(f, t, casting="safe"))


@dataclass(frozen=True)
class finfo_object:
    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: np.dtype
    resolution: float = 0.0
    tiny: float = 0.0


@dataclass(frozen=True)
class iinfo_object:
    bits: int
    max: int
    min: int
    dtype: np.dtype


def finfo(type: Any, /) -> finfo_object:
    """Machine limits of a floating-point dtype (or array), as Python floats."""
    d = _dtype_of(type, "finfo")
    if d.kind not in "fc":
        raise TypeError(f"finfo: {d} is not a floating-point dtype")
    f = np.finfo(d)
    real = np.dtype(f.dtype)
    return finfo_object(int(f.bits), float(f.eps), float(f.max), float(f.min),
                        float(f.smallest_normal), real,
                        float(f.resolution), float(f.smallest_normal))


def iinfo(type: Any, /) -> iinfo_object:
    """Machine limits of an integer dtype (or array), as Python ints."""
    d = _dtype_of(type, "iinfo")
    if d.kind not in "iu":
        raise TypeError(f"iinfo: {d} is not an integer dtype")
    i = np.iinfo(d)
    return iinfo_object(int(i.bits), int(i.max), int(i.min), d)


def isdtype(dtype: Any, kind: Any) -> bool:
    """Whether ``dtype`` is of ``kind``: a dtype, a kind name ('bool', 'signed integer',
    'unsigned integer', 'integral', 'real floating', 'complex floating', 'numeric'), or a tuple
    of those."""
    if is_array(dtype) or not isinstance(dtype, np.dtype):
        raise TypeError(f"isdtype: expected a dtype; got {type_name(dtype)}")
    if isinstance(kind, tuple):
        return builtins_any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, str):
        if kind not in dt.KINDS:
            raise ValueError(f"isdtype: unknown kind {kind!r}; expected one of "
                             f"{sorted(dt.KINDS)}")
        return dtype in dt.KINDS[kind]
    try:
        return dtype == dt.as_dtype(kind)
    except TypeError:
        raise TypeError(f"isdtype: kind must be a dtype, a string or a tuple; got "
                        f"{kind!r}") from None


def type_name(v: Any) -> str:
    return type(v).__name__


def builtins_any(it: Any) -> bool:
    for v in it:
        if v:
            return True
    return False


def result_type(*arrays_and_dtypes: Any) -> np.dtype:
    """The dtype that results from applying type promotion to the arguments (arrays, dtypes
    and Python scalars; scalars are weak, as in binary operations)."""
    if not arrays_and_dtypes:
        raise ValueError("result_type: at least one array or dtype is required")
    res = None
    scalars = []
    for a in arrays_and_dtypes:
        if isinstance(a, (bool, int, float, complex)):
            scalars.append(a)
            continue
        d = _dtype_of(a, "result_type")
        res = d if res is None else dt.promote(res, d)
    if res is None:
        raise ValueError("result_type: at least one array or dtype is required (Python "
                         "scalars alone have no array dtype)")
    from ._helpers import check_scalar_fits
    for s in scalars:
        res = dt.promote(res, dt.weak_scalar_dtype(s, res))
        check_scalar_fits(s, res, "result_type")
    return res
