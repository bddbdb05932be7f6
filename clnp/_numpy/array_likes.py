"""Array-likes for NumPy's functions: host data uploaded next to the first clnp array
argument (the default device when there is none), results written into ``out=``.

NumPy's functions beyond the standard (this package) are composed from clnp functions (no
kernels of their own), with NumPy's signatures and semantics so that ``import clnp as np``
runs NumPy code. Every function takes array-likes (clnp arrays, NumPy arrays, nested
sequences, scalars); results are clnp arrays; where NumPy returns a NumPy scalar, clnp
returns a 0-d array (predicates such as ``allclose`` and ``array_equal`` return a Python
``bool``). Data-dependent sizes (``bincount``, ``histogram`` ranges, ``argwhere``) read a
few values back from the device.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .._core import dtypes as dt
from .._core.checks import is_array
from .._core.dtypes import kind as dkind
from .._core.namespace import namespace as _xp


def _device_of(*objs: Any) -> Any:
    """The device of the first clnp array among ``objs`` (searching into sequences)."""
    for o in objs:
        if is_array(o):
            return o.device
        if isinstance(o, (list, tuple)):
            d = _device_of(*o)
            if d is not None:
                return d
    return None


def _arr(a: Any, device: Any = None, dtype: Any = None) -> Any:
    """``a`` as a clnp array (clnp arrays stay on their device, host data is uploaded)."""
    xp = _xp()
    if is_array(a):
        return a if dtype is None else xp.astype(a, dt.as_dtype(dtype))
    return xp.asarray(a, dtype=dtype, device=device)


def _host_scalar(v: Any) -> Any:
    """A 0-d array (clnp: one device read; NumPy) as the NumPy scalar it holds, where NumPy
    takes it as a number (a count, an index, a bound read on the host); anything else as it
    is."""
    if getattr(v, "ndim", None) == 0 and (is_array(v) or isinstance(v, np.ndarray)):
        return v.to_numpy()[()] if is_array(v) else v[()]
    return v


def _default_float(device: Any) -> np.dtype:
    return (device or _xp().default_device()).default_float


def _inexact(a: Any) -> Any:
    """Integer and boolean arrays as the device's default float (NumPy's float64)."""
    if dkind(a.dtype) in "fc":
        return a
    return _xp().astype(a, a.device.default_float)


def _check_real(a: Any, fname: str) -> None:
    if dkind(a.dtype) not in "biuf":
        raise TypeError(f"{fname} requires real numeric input; got {a.dtype}")


def _finish(res: Any, out: Any, fname: str) -> Any:
    """Write ``res`` into ``out`` (a clnp array of the result's shape) when given."""
    if out is None:
        return res
    if not is_array(out):
        raise TypeError(f"{fname}: out must be a clnp array; got {type(out).__name__}")
    if tuple(out.shape) != tuple(res.shape):
        raise ValueError(f"{fname}: out has shape {out.shape} but the result has shape "
                         f"{res.shape}")
    out[...] = res
    return out
