"""NumPy's dtype objects, scalar types and dtype utilities, shared with NumPy (as CuPy does).

``clnp.float32 is numpy.float32``: calling it makes a NumPy scalar (``clnp.float32(3)``), and
``x.dtype == clnp.float32`` holds for a float32 array, whose ``.dtype`` is a ``numpy.dtype``.
The abstract scalar classes (``clnp.floating``, ``clnp.integer``, ...) are NumPy's too, so
``clnp.issubdtype(x.dtype, clnp.floating)`` works as in NumPy. Only the dtypes OpenCL devices
hold are array dtypes (bool, integers, floats, complex); the rest of NumPy's types (strings,
objects, datetimes, long double) are refused when an array would get them, with an error that
says what to use instead (:func:`clnp._core.dtypes.unsupported_dtype_message`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import dtypes as dt
from .dtypes import unsupported_dtype_message

__all__ = [
    "dtype", "generic", "number", "integer", "signedinteger", "unsignedinteger", "inexact",
    "floating", "complexfloating",
    "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "bfloat16", "float32", "float64", "complex64", "complex128",
    "byte", "ubyte", "short", "ushort", "intc", "uintc", "int_", "uint", "intp", "uintp",
    "long", "ulong", "longlong", "ulonglong", "half", "single", "double", "float_",
    "csingle", "cdouble", "True_", "False_", "ScalarType", "sctypeDict", "typecodes",
    "issubdtype", "promote_types", "min_scalar_type", "common_type", "mintypecode",
    "typename",
]

dtype = np.dtype
generic, number, integer = np.generic, np.number, np.integer
signedinteger, unsignedinteger = np.signedinteger, np.unsignedinteger
inexact, floating, complexfloating = np.inexact, np.floating, np.complexfloating

bool_ = np.bool_
int8, int16, int32, int64 = np.int8, np.int16, np.int32, np.int64
uint8, uint16, uint32, uint64 = np.uint8, np.uint16, np.uint32, np.uint64
float16, float32, float64 = np.float16, np.float32, np.float64
bfloat16 = dt.bfloat16.type   # ml_dtypes.bfloat16, the scalar type JAX uses
complex64, complex128 = np.complex64, np.complex128
byte, ubyte, short, ushort = np.byte, np.ubyte, np.short, np.ushort
intc, uintc, int_, uint = np.intc, np.uintc, np.int_, np.uint
intp, uintp, long, ulong = np.intp, np.uintp, np.long, np.ulong
longlong, ulonglong = np.longlong, np.ulonglong
half, single, double = np.float16, np.float32, np.float64
float_ = np.float64  # NumPy 1's spelling, which clnp has kept
csingle, cdouble = np.complex64, np.complex128
True_, False_ = np.True_, np.False_

# The scalar types a clnp array can hold, plus Python's: NumPy's ScalarType is broader
ScalarType: tuple[type, ...] = (int, float, complex, bool) + tuple(d.type for d in dt.ALL)
sctypeDict: dict[Any, type] = {k: v for k, v in np.sctypeDict.items()
                               if np.dtype(v) in dt.ALL}
typecodes: dict[str, str] = {
    "Character": "c", "Integer": "bhilqnp", "UnsignedInteger": "BHILQNP", "Float": "efd",
    "Complex": "FD", "AllInteger": "bBhHiIlLqQnNpP", "AllFloat": "efdFD",
    "All": "?bhilqnpBHILQNPefdFD",
}

issubdtype = np.issubdtype
typename = np.typename
mintypecode = np.mintypecode


def promote_types(type1: Any, type2: Any) -> np.dtype:
    """The smallest dtype both ``type1`` and ``type2`` cast to safely (``numpy.promote_types``).

    Parameters
    ----------
    type1, type2 : dtype or type
        Two of clnp's dtypes (NumPy dtypes, scalar types or names).

    Returns
    -------
    numpy.dtype
        The promoted dtype, NumPy's (NEP 50).

    Raises
    ------
    TypeError
        A dtype clnp arrays cannot hold (strings, objects, datetimes).

    Examples
    --------
    >>> import clnp
    >>> clnp.promote_types(clnp.int8, clnp.uint8)
    dtype('int16')
    >>> clnp.promote_types("float32", clnp.int64)
    dtype('float64')
    """
    a = dt.as_dtype(type1, "promote_types")
    b = dt.as_dtype(type2, "promote_types")
    return np.promote_types(a, b)


def min_scalar_type(a: Any) -> np.dtype:
    """The smallest dtype that holds the value ``a`` (``numpy.min_scalar_type``).

    Parameters
    ----------
    a : scalar or array_like
        A Python or NumPy scalar, or an array (whose dtype comes back unchanged).

    Returns
    -------
    numpy.dtype
        The smallest integer or float dtype holding ``a``.

    Raises
    ------
    TypeError
        ``a`` is a string or object.

    Examples
    --------
    >>> import clnp
    >>> clnp.min_scalar_type(10)
    dtype('uint8')
    >>> clnp.min_scalar_type(-260)
    dtype('int16')
    """
    from .checks import is_array
    if is_array(a):
        return a.dtype
    res = np.min_scalar_type(a)
    msg = unsupported_dtype_message(res, "min_scalar_type")
    if msg:
        raise TypeError(msg)
    return res


def common_type(*arrays: Any) -> type:
    """The inexact scalar type common to the arrays (``numpy.common_type``).

    Integer arrays count as float64; the result is a float or complex scalar type.

    Parameters
    ----------
    *arrays : array
        clnp or NumPy arrays.

    Returns
    -------
    type
        A scalar type such as ``clnp.float64`` or ``clnp.complex64``.

    Raises
    ------
    TypeError
        An argument without a numeric dtype.

    Examples
    --------
    >>> import clnp
    >>> clnp.common_type(clnp.arange(3, dtype=clnp.float32))
    <class 'numpy.float32'>
    >>> clnp.common_type(clnp.arange(3), clnp.ones(2, dtype=clnp.complex64))
    <class 'numpy.complex128'>
    """
    is_complex, precision = False, 0
    for a in arrays:
        d = getattr(a, "dtype", None)
        if d is None or d.kind not in "biufc":
            raise TypeError(f"common_type: can't get common type for non-numeric array "
                            f"{type(a).__name__}")
        if d.kind == "c":
            is_complex = True
        size = 8 if d.kind in "biu" else (d.itemsize // 2 if d.kind == "c" else d.itemsize)
        precision = max(precision, size)
    if is_complex:
        return {2: np.complex64, 4: np.complex64, 8: np.complex128}[precision]
    return {2: np.float16, 4: np.float32, 8: np.float64}[precision]
