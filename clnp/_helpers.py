"""Argument checking shared by the namespace modules (no kernels, no buffers)."""
from __future__ import annotations

import operator
from typing import Any, Sequence

import numpy as np

from . import _dtypes as dt
from ._array import Array
from ._dtypes import kind as dkind

SCALARS = (bool, int, float, complex)


def is_array(x: Any) -> bool:
    """True for clnp arrays and for clnp_grad tracers standing in for them."""
    return isinstance(x, Array) or getattr(x, "_is_clnp_tracer", False)


def check_array(x: Any, fname: str, arg: str = "x") -> None:
    if not is_array(x):
        raise TypeError(f"{fname}: {arg} must be a clnp array; got {type(x).__name__} "
                        f"(wrap it with clnp.asarray)")


def normalize_axis(axis: Any, ndim: int, fname: str) -> int:
    try:
        a = operator.index(axis)
    except TypeError:
        raise TypeError(f"{fname}: axis must be an integer; got {type(axis).__name__}") from None
    if not -ndim <= a < ndim:
        raise IndexError(f"{fname}: axis {a} is out of bounds for an array of dimension {ndim}")
    return a % ndim if ndim else 0


def normalize_axes(axis: Any, ndim: int, fname: str, allow_none: bool = True) -> tuple[int, ...]:
    if axis is None:
        if not allow_none:
            raise TypeError(f"{fname}: axis must not be None")
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        axes = tuple(normalize_axis(a, ndim, fname) for a in axis)
        if len(set(axes)) != len(axes):
            raise ValueError(f"{fname}: repeated axis in {tuple(axis)}")
        return axes
    return (normalize_axis(axis, ndim, fname),)


def normalize_shape(shape: Any, fname: str) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        out = tuple(operator.index(n) for n in shape)
    except TypeError:
        raise TypeError(f"{fname}: shape must be an int or a sequence of ints; got "
                        f"{shape!r}") from None
    if any(n < 0 for n in out):
        raise ValueError(f"{fname}: negative dimensions are not allowed; got {out}")
    return out


def check_scalar_fits(value: Any, dtype: np.dtype, fname: str) -> None:
    """NumPy 2 raises OverflowError when a Python int does not fit the array's integer dtype."""
    if isinstance(value, int) and not isinstance(value, bool) and dkind(dtype) in "iu":
        info = np.iinfo(dtype)
        if not info.min <= value <= info.max:
            raise OverflowError(f"{fname}: Python integer {value} out of bounds for {dtype}")


def result_dtype_of(args: Sequence[Any], fname: str) -> np.dtype:
    """Promote array dtypes, then Python scalars as weak types (NEP 50)."""
    arrays = [a for a in args if is_array(a)]
    if not arrays:
        raise TypeError(f"{fname}: at least one argument must be an array")
    res = arrays[0].dtype
    for a in arrays[1:]:
        res = dt.promote(res, a.dtype)
    for s in args:
        if is_array(s):
            continue
        if not isinstance(s, SCALARS):
            raise TypeError(f"{fname}: unsupported operand type {type(s).__name__}; expected "
                            f"an array or a Python scalar")
        res = dt.promote(res, dt.weak_scalar_dtype(s, res))
    return res


def unwrap_scalar(x: Any) -> Any:
    """NumPy scalars and 0-d NumPy arrays act as Python scalars; other NumPy arrays upload."""
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        from ._creation_functions import asarray
        return asarray(x)
    return x
