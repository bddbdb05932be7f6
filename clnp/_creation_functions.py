"""Array creation functions of the standard (plus NumPy's ``array``)."""
from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from . import _dtypes as dt
from ._array import Array
from ._helpers import is_array, normalize_shape
from ._prims import primitive
from ._runtime import Device, default_device, select_device

__all__ = ["arange", "asarray", "empty", "empty_like", "eye", "from_dlpack", "full", "full_like",
           "linspace", "meshgrid", "ones", "ones_like", "tril", "triu", "zeros", "zeros_like",
           "array"]


def _device(device: Any) -> Device:
    if device is None:
        return default_device()
    if isinstance(device, Device):
        return device
    return select_device(device)


def _dtype(dtype: Any, device: Device, fname: str) -> np.dtype | None:
    if dtype is None:
        return None
    d = dt.as_dtype(dtype)
    device.check_dtype(d, fname)
    return d


def _scalar_dtype(value: Any, device: Device) -> np.dtype:
    if isinstance(value, bool):
        return dt.bool_
    if isinstance(value, int):
        return dt.int64
    if isinstance(value, float):
        return device.default_float
    if isinstance(value, complex):
        return device.default_complex
    raise TypeError(f"expected a Python scalar; got {type(value).__name__}")


def _host_default_dtype(obj: Any, host: np.ndarray, device: Device) -> np.dtype:
    """Python data takes the device defaults; NumPy data keeps its dtype."""
    if isinstance(obj, np.ndarray) or isinstance(obj, np.generic):
        return dt.as_dtype(host.dtype)
    k = host.dtype.kind
    if k == "b":
        return dt.bool_
    if k in "iu":
        return dt.int64 if host.dtype != dt.uint64 else dt.uint64
    if k == "f":
        return device.default_float
    if k == "c":
        return device.default_complex
    if host.size == 0 and k == "f":
        return device.default_float
    raise TypeError(f"asarray: cannot convert {type(obj).__name__} with NumPy dtype "
                    f"{host.dtype} to a clnp array")


def asarray(obj: Any, /, *, dtype: Any = None, device: Any = None, copy: bool | None = None) -> Any:
    """Convert ``obj`` (array, NumPy array, nested sequence, Python scalar, buffer or DLPack
    producer) to a clnp array on ``device``.

    ``copy=True`` always copies, ``copy=False`` never does (raising ValueError when a copy is
    needed), ``None`` copies only when needed."""
    if is_array(obj):
        dev = obj.device if device is None else _device(device)
        d = _dtype(dtype, dev, "asarray") or obj.dtype
        if not isinstance(obj, Array):
            return obj if d == obj.dtype else obj.astype(d)
        if dev is not obj.device:
            if copy is False:
                raise ValueError("asarray: copy=False but the array is on another device")
            obj = obj.to_device(dev)
            return obj if d == obj.dtype else obj.astype(d)
        if d != obj.dtype:
            if copy is False:
                raise ValueError(f"asarray: copy=False but casting {obj.dtype} to {d} "
                                 f"needs a copy")
            return primitive("convert_element_type").bind(obj, dtype=d)
        if copy:
            return primitive("copy").bind(obj)
        return obj
    dev = _device(device)
    d = _dtype(dtype, dev, "asarray")
    if copy is False:
        raise ValueError("asarray: copy=False is impossible for host data; clnp arrays live "
                         "on an OpenCL device")
    if isinstance(obj, (bool, int, float, complex)) and d is None:
        d = _scalar_dtype(obj, dev)
        if d == dt.int64 and not -2**63 <= obj < 2**63:  # type: ignore[operator]
            raise OverflowError(f"asarray: Python integer {obj} does not fit int64")
    if not isinstance(obj, np.ndarray) and hasattr(obj, "__dlpack__") and \
            not hasattr(obj, "__array__"):
        obj = np.from_dlpack(obj)
    if isinstance(obj, (list, tuple)):
        obj = _unwrap_nested(obj)
    try:
        host = np.asarray(obj) if d is None else np.asarray(obj, dtype=d)
    except OverflowError:
        raise OverflowError(f"asarray: a value does not fit {d}") from None
    if host.dtype == object:
        raise TypeError(f"asarray: cannot convert {type(obj).__name__} to an array "
                        f"(ragged or non-numeric data)")
    if d is None:
        d = _host_default_dtype(obj, host, dev)
        if host.dtype.kind in "iu" and d == dt.int64 and host.dtype != dt.int64 and \
                not isinstance(obj, (np.ndarray, np.generic)):
            pass
        host = host.astype(d, copy=False)
    dev.check_dtype(d, "asarray")
    return Array.from_numpy(host, dev)


def _unwrap_nested(seq: Any) -> Any:
    if isinstance(seq, Array):
        return seq.to_numpy()
    if isinstance(seq, (list, tuple)):
        return [_unwrap_nested(s) for s in seq]
    return seq


def array(obj: Any, dtype: Any = None, *, copy: bool = True, device: Any = None) -> Any:
    """NumPy's ``array``: like :func:`asarray` but copies by default."""
    return asarray(obj, dtype=dtype, device=device, copy=copy if copy else None)


def empty(shape: Any, *, dtype: Any = None, device: Any = None) -> Array:
    """An uninitialised array of ``shape`` (default dtype: the default floating type)."""
    dev = _device(device)
    d = _dtype(dtype, dev, "empty") or dev.default_float
    return Array.empty(normalize_shape(shape, "empty"), d, dev)


def full(shape: Any, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Any:
    """An array of ``shape`` filled with ``fill_value``; the dtype defaults from the value's
    Python type (bool, int64, default float, default complex)."""
    dev = _device(device)
    shape = normalize_shape(shape, "full")
    if is_array(fill_value) and fill_value.ndim == 0:
        fill_value = fill_value.item()
    if isinstance(fill_value, np.generic):
        fill_value = fill_value.item()
    if not isinstance(fill_value, (bool, int, float, complex)):
        raise TypeError(f"full: fill_value must be a Python scalar; got "
                        f"{type(fill_value).__name__}")
    d = _dtype(dtype, dev, "full") or _scalar_dtype(fill_value, dev)
    if isinstance(fill_value, complex) and d.kind != "c":
        raise TypeError(f"full: complex fill_value with real dtype {d}")
    if isinstance(fill_value, float) and d.kind in "iub" and not isinstance(fill_value, bool):
        if not math.isfinite(fill_value):
            raise ValueError(f"full: cannot fill {d} with {fill_value}")
    if d.kind in "iu" and isinstance(fill_value, int):
        info = np.iinfo(d)
        if not info.min <= fill_value <= info.max:
            raise OverflowError(f"full: fill_value {fill_value} out of bounds for {d}")
    return primitive("full").bind(shape=shape, value=fill_value, dtype=d, device=dev)


def zeros(shape: Any, *, dtype: Any = None, device: Any = None) -> Any:
    """An array of zeros (default dtype: the default floating type)."""
    dev = _device(device)
    return full(shape, 0, dtype=_dtype(dtype, dev, "zeros") or dev.default_float, device=dev)


def ones(shape: Any, *, dtype: Any = None, device: Any = None) -> Any:
    """An array of ones (default dtype: the default floating type)."""
    dev = _device(device)
    return full(shape, 1, dtype=_dtype(dtype, dev, "ones") or dev.default_float, device=dev)


def _like(x: Any, dtype: Any, device: Any, fname: str) -> tuple[tuple[int, ...], np.dtype, Device]:
    if not is_array(x):
        raise TypeError(f"{fname}: x must be an array; got {type(x).__name__}")
    dev = x.device if device is None else _device(device)
    return x.shape, _dtype(dtype, dev, fname) or x.dtype, dev


def empty_like(x: Any, /, *, dtype: Any = None, device: Any = None) -> Array:
    """An uninitialised array with the shape (and by default dtype and device) of ``x``."""
    shape, d, dev = _like(x, dtype, device, "empty_like")
    return Array.empty(shape, d, dev)


def zeros_like(x: Any, /, *, dtype: Any = None, device: Any = None) -> Any:
    """Zeros with the shape (and by default dtype and device) of ``x``."""
    shape, d, dev = _like(x, dtype, device, "zeros_like")
    return full(shape, 0, dtype=d, device=dev)


def ones_like(x: Any, /, *, dtype: Any = None, device: Any = None) -> Any:
    """Ones with the shape (and by default dtype and device) of ``x``."""
    shape, d, dev = _like(x, dtype, device, "ones_like")
    return full(shape, 1, dtype=d, device=dev)


def full_like(x: Any, /, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Any:
    """``fill_value`` with the shape (and by default dtype and device) of ``x``."""
    shape, d, dev = _like(x, dtype, device, "full_like")
    if isinstance(fill_value, float) and d.kind in "iu" and dtype is None:
        raise TypeError(f"full_like: float fill_value for integer array of {d}; pass dtype")
    return full(shape, fill_value, dtype=d, device=dev)


def arange(start: Any, /, stop: Any = None, step: Any = 1, *, dtype: Any = None,
           device: Any = None) -> Any:
    """Evenly spaced values in the half-open interval ``[start, stop)``."""
    dev = _device(device)
    if stop is None:
        start, stop = 0, start
    for v, n in ((start, "start"), (stop, "stop"), (step, "step")):
        if not isinstance(v, (int, float)) and not isinstance(v, np.number):
            raise TypeError(f"arange: {n} must be a real Python scalar; got {type(v).__name__}")
    if step == 0:
        raise ValueError("arange: step must not be zero")
    d = _dtype(dtype, dev, "arange")
    if d is None:
        d = dt.int64 if all(isinstance(v, (int, np.integer)) for v in (start, stop, step)) \
            else dev.default_float
    n = max(0, math.ceil((stop - start) / step))
    if d.kind in "iu":
        start, step = int(start), int(step)
        if n:
            info = np.iinfo(d)
            last = start + (n - 1) * step
            if not (info.min <= start <= info.max and info.min <= last <= info.max):
                raise OverflowError(f"arange: values from {start} to {last} do not fit {d}")
    return primitive("iota").bind(n=n, start=start, step=step, dtype=d, device=dev)


def linspace(start: Any, stop: Any, /, num: int, *, dtype: Any = None, device: Any = None,
             endpoint: bool = True) -> Any:
    """``num`` evenly spaced samples over ``[start, stop]`` (or ``[start, stop)`` when
    ``endpoint`` is False)."""
    dev = _device(device)
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"linspace: num must be non-negative; got {num}")
    is_c = isinstance(start, complex) or isinstance(stop, complex)
    d = _dtype(dtype, dev, "linspace") or (dev.default_complex if is_c else dev.default_float)
    if d.kind not in "fc":
        raise TypeError(f"linspace: dtype must be floating-point; got {d}")
    div = (num - 1) if endpoint else num
    step = (stop - start) / div if div > 0 else 0.0
    out = primitive("iota").bind(n=num, start=start, step=step, dtype=d, device=dev)
    if endpoint and num > 1 and isinstance(out, Array):
        out[num - 1] = stop
    return out


def eye(n_rows: int, n_cols: int | None = None, /, *, k: int = 0, dtype: Any = None,
        device: Any = None) -> Any:
    """A 2-D array with ones on the ``k``-th diagonal and zeros elsewhere."""
    dev = _device(device)
    n_rows = operator.index(n_rows)
    n_cols = n_rows if n_cols is None else operator.index(n_cols)
    out = zeros((n_rows, n_cols), dtype=dtype, device=dev)
    length = max(0, min(n_rows, n_cols - k) if k >= 0 else min(n_rows + k, n_cols))
    if length:
        start = k if k >= 0 else -k * n_cols
        diag = Array(out._buf, start, (length,), (n_cols + 1,), out.dtype, dev)
        from ._eager import copy_into
        copy_into(diag, 1, out.dtype)
    return out


def meshgrid(*arrays: Any, indexing: str = "xy") -> tuple[Any, ...]:
    """Coordinate matrices from 1-D coordinate vectors (``xy`` or ``ij`` indexing)."""
    from ._manipulation_functions import broadcast_to, reshape
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij'; got {indexing!r}")
    for a in arrays:
        if not is_array(a) or a.ndim != 1:
            raise ValueError("meshgrid: every input must be a 1-D array")
    if len({a.dtype for a in arrays}) > 1:
        raise TypeError("meshgrid: all inputs must have the same dtype")
    n = len(arrays)
    sizes = [a.shape[0] for a in arrays]
    if indexing == "xy" and n > 1:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, a in enumerate(arrays):
        pos = i
        if indexing == "xy" and n > 1 and i < 2:
            pos = 1 - i
        shape = [1] * n
        shape[pos] = a.shape[0]
        out.append(asarray(broadcast_to(reshape(a, tuple(shape)), tuple(sizes)), copy=True))
    return tuple(out)


def _tri_mask(x: Any, k: int, lower: bool) -> Any:
    from ._elementwise_functions import greater_equal, less_equal, subtract
    from ._manipulation_functions import reshape
    rows, cols = x.shape[-2], x.shape[-1]
    i = reshape(arange(rows, device=x.device), (rows, 1))
    j = reshape(arange(cols, device=x.device), (1, cols))
    diff = subtract(j, i)
    return less_equal(diff, k) if lower else greater_equal(diff, k)


def tril(x: Any, /, *, k: int = 0) -> Any:
    """The lower triangle (on and below the ``k``-th diagonal) of each matrix in ``x``."""
    from ._elementwise_functions import where
    if not is_array(x) or x.ndim < 2:
        raise ValueError("tril: x must be an array with at least 2 dimensions")
    return where(_tri_mask(x, k, True), x, zeros((), dtype=x.dtype, device=x.device))


def triu(x: Any, /, *, k: int = 0) -> Any:
    """The upper triangle (on and above the ``k``-th diagonal) of each matrix in ``x``."""
    from ._elementwise_functions import where
    if not is_array(x) or x.ndim < 2:
        raise ValueError("triu: x must be an array with at least 2 dimensions")
    return where(_tri_mask(x, k, False), x, zeros((), dtype=x.dtype, device=x.device))


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Any:
    """An array from any DLPack producer (NumPy, PyTorch, JAX, clnp, ...)."""
    if isinstance(x, Array):
        return asarray(x, device=device, copy=copy)
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack: {type(x).__name__} does not implement __dlpack__")
    if copy is False:
        raise ValueError("from_dlpack: copy=False is impossible; clnp arrays live on an "
                         "OpenCL device")
    try:
        host = np.from_dlpack(x)
    except (TypeError, RuntimeError, BufferError):
        host = np.from_dlpack(x, device="cpu", copy=True)
    return Array.from_numpy(np.asarray(host), _device(device))
