"""Array creation functions of the standard (plus NumPy's ``array``).

Default dtypes follow the device: Python floats (and float64 data from Python sequences)
become the default floating type (float64, or float32 on devices without fp64), Python ints
become int64. NumPy arrays, buffers and DLPack producers keep their dtype.
"""
from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from .._core import dtypes as dt
from .._core.array import Array, cuda_ordinal_of, c_strides
from .._core.checks import is_array, normalize_shape
from .._core.prims import primitive
from .._runtime.device import Device, default_device, devices, select_device
from .._core.dtypes import kind as dkind
from .._core.namespace import namespace as _namespace
from .._runtime.opencl import cl

__all__ = ["arange", "asarray", "empty", "empty_like", "eye", "from_dlpack", "full", "full_like",
           "linspace", "meshgrid", "ones", "ones_like", "tril", "triu", "zeros", "zeros_like",
           "array"]

_I64_MIN, _I64_MAX = -2 ** 63, 2 ** 63 - 1


def linspace_num(num: Any) -> int:
    """``linspace``'s sample count as an int: TypeError for a non-integer, ValueError for a
    negative one (both linspaces, the scalar one here and NumPy's array form).

    Examples
    --------
    >>> from clnp._array_api.creation import linspace_num
    >>> linspace_num(5)
    5
    >>> linspace_num(-1)
    Traceback (most recent call last):
    ...
    ValueError: linspace: num must be non-negative; got -1
    """
    try:
        num = operator.index(num)
    except TypeError:
        raise TypeError(f"linspace: num must be an int; got {type(num).__name__}") from None
    if num < 0:
        raise ValueError(f"linspace: num must be non-negative; got {num}")
    return num


def _device(device: Any) -> Device:
    if device is None:
        return default_device()
    if isinstance(device, Device):
        return device
    return select_device(device, arg="device")


def _dtype(dtype: Any, device: Device, fname: str) -> np.dtype | None:
    if dtype is None:
        return None
    try:
        d = dt.as_dtype(dtype)
    except TypeError as e:
        raise TypeError(f"{fname}: {e}") from None
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


def _has_big_int(obj: Any) -> bool:
    """Whether a nested Python sequence holds an int outside int64."""
    if isinstance(obj, (list, tuple)):
        return any(_has_big_int(o) for o in obj)
    return isinstance(obj, int) and not isinstance(obj, bool) and \
        not _I64_MIN <= obj <= _I64_MAX


def _sequence_dtype(host: np.ndarray, device: Device) -> np.dtype:
    """Python data takes the device defaults (NumPy infers float64/complex128 for it)."""
    if host.dtype == dt.float64:
        return device.default_float
    if host.dtype == dt.complex128:
        return device.default_complex
    return host.dtype


def asarray(obj: Any, /, *, dtype: Any = None, device: Any = None,
            copy: bool | None = None) -> Any:
    """Convert ``obj`` to a clnp array on ``device``.

    Parameters
    ----------
    obj : array_like
        A clnp array, NumPy array or scalar, nested sequence, Python scalar, or an
        object with ``__array__``, the buffer protocol or ``__dlpack__``.
    dtype : dtype, optional
        The result's dtype.
    device : Device, optional
        Where the result lives (default: the default device, or ``x``'s device).
    copy : bool, optional
        True always copies. None copies host data (NumPy arrays, sequences, scalars) and
        reuses a clnp array that needs no conversion. False never copies: a clnp array
        itself, or, on a device that shares host memory (``Device.shares_host_memory``: PoCL
        and other CPU devices), a NumPy array's own memory used in place (as
        ``from_dlpack``: writable, C-contiguous, aligned to ``Device.host_ptr_align`` bytes,
        of a clnp dtype); ValueError where that is impossible.
    order : {'C', 'K', 'A', 'F'}, optional
        NumPy's memory layout: clnp arrays are C-ordered, so ``'F'`` raises ValueError for
        two or more dimensions.
    like : None
        NumPy's array-protocol creation: not supported (TypeError; pass ``device=``).

    Returns
    -------
    array
        The array; ``obj`` itself when it is a clnp array that needs no conversion. Host data
        is copied once, converted to ``dtype`` on the way (no second host copy).

    Raises
    ------
    OverflowError
        Python ints outside int64 without a ``dtype`` that holds them.
    ValueError
        Ragged sequences, or ``copy=False`` where a copy is needed.
    TypeError
        Non-numeric data.

    Examples
    --------
    >>> import clnp, numpy
    >>> x = clnp.asarray([1, 2, 3])
    >>> x.dtype, x.shape
    (dtype('int64'), (3,))
    >>> print(clnp.asarray(numpy.arange(3, dtype=numpy.float32)))
    [0. 1. 2.]
    >>> clnp.asarray(x) is x
    True
    """
    if is_array(obj):
        dev = obj.device if device is None else _device(device)
        d = _dtype(dtype, dev, "asarray") or obj.dtype
        if not isinstance(obj, Array):
            return obj if d == obj.dtype else obj.astype(d)
        if dev is not obj.device:
            if copy is False:
                raise ValueError(f"asarray: copy=False but the array is on {obj.device}, not "
                                 f"{dev}")
            obj = obj.to_device(dev)
            return obj if d == obj.dtype else primitive("convert_element_type").bind(obj, dtype=d)
        if d != obj.dtype:
            if copy is False:
                raise ValueError(f"asarray: copy=False but casting {obj.dtype} to {d} "
                                 f"needs a copy")
            return primitive("convert_element_type").bind(obj, dtype=d)
        if copy:
            return primitive("copy").bind(obj)
        return obj
    # NumPy's arrays export host memory: only other producers are asked their device
    cuda_dev = None if isinstance(obj, (np.ndarray, np.generic)) or \
        not hasattr(obj, "__dlpack__") else _cuda_target(obj, device)
    if cuda_dev is not None:                 # a CUDA tensor onto its own GPU: no host trip
        x = _from_cuda(obj, cuda_dev, copy, "asarray")
        return x if dtype is None else asarray(x, dtype=dtype, copy=copy)
    dev = _device(device)
    d = _dtype(dtype, dev, "asarray")
    if copy is False:
        return _host_without_copy(obj, d, dev)
    python_data = isinstance(obj, (bool, int, float, complex, list, tuple))
    if isinstance(obj, (bool, int, float, complex)) and d is None:
        d = _scalar_dtype(obj, dev)
        if d == dt.int64 and not _I64_MIN <= obj <= _I64_MAX:  # type: ignore[operator]
            raise OverflowError(f"asarray: Python integer {obj} does not fit int64; pass "
                                f"dtype=uint64 or convert it yourself")
    elif not isinstance(obj, (np.ndarray, np.generic)) and hasattr(obj, "__dlpack__") and \
            not hasattr(obj, "__array__"):
        obj = _host_from_dlpack(obj)
    if isinstance(obj, (list, tuple)):
        obj = _unwrap_nested(obj)
    try:
        # a NumPy array is converted in the upload's one copy, not in a copy of its own
        host = np.asarray(obj) if d is None or (isinstance(obj, np.ndarray) and
                                                dkind(obj.dtype) in "biufc") else \
            np.asarray(obj, dtype=d)
    except OverflowError:
        raise OverflowError(f"asarray: a value of {type(obj).__name__} does not fit "
                            f"{d or 'int64'}") from None
    except ValueError as e:
        if "inhomogeneous" in str(e) or "sequence" in str(e):
            raise ValueError(f"asarray: cannot convert a ragged nested sequence to an array "
                             f"({e})") from None
        raise
    if host.dtype == object or (python_data and d is None and dkind(host.dtype) in "uf"):
        # ints beyond int64 make NumPy infer uint64, float64 (mixed with negatives) or object
        if python_data and _has_big_int(obj):
            raise OverflowError("asarray: a Python integer does not fit int64; pass "
                                "dtype=uint64 or convert it yourself")
        if host.dtype == object:
            raise TypeError(f"asarray: cannot convert {type(obj).__name__} to a numeric array "
                            f"(it holds non-numeric objects; clnp arrays cannot hold Python "
                            f"objects: device memory holds only numbers)")
    if d is None:
        d = _host_dtype(host, obj)
        if python_data:
            d = _sequence_dtype(host, dev)
    dev.check_dtype(d, "asarray")
    # one copy: the upload converts (dtype, byte order) and reorders on the way
    # (NumPy made ``host`` from Python data: no one else holds it, so no private copy)
    return Array.from_numpy(host, dev, d, private=python_data)


def _host_dtype(host: np.ndarray, obj: Any) -> np.dtype:
    """The clnp dtype of host data (its own, in native byte order)."""
    hd = host.dtype if host.dtype.isnative else host.dtype.newbyteorder("=")
    try:
        return dt.as_dtype(hd)
    except TypeError:
        from .._core.scalar_types import unsupported_dtype_message
        why = unsupported_dtype_message(host.dtype) or (
            f"NumPy dtype {host.dtype} is not one of clnp's")
        raise TypeError(f"asarray: cannot convert {type(obj).__name__} to a clnp array: "
                        f"{why}") from None


def _host_without_copy(obj: Any, d: np.dtype | None, dev: Device) -> Array:
    """``asarray(obj, copy=False)`` of host data: an array over its memory where the device
    shares host memory and can use it in place (as ``from_dlpack`` does), else ValueError
    naming what stands in the way."""
    if isinstance(obj, (bool, int, float, complex, list, tuple)):
        raise ValueError("asarray: copy=False is impossible for Python data (a list or scalar "
                         "has no array memory to share); use copy=None")
    try:
        host = np.asarray(obj, copy=False)      # NumPy's own rule: no copy on the host side
    except (ValueError, TypeError) as e:
        raise ValueError(f"asarray: copy=False but {type(obj).__name__} cannot be viewed "
                         f"without a copy ({e})") from None
    hd = _host_dtype(host, obj)
    if (d is not None and d != host.dtype) or hd != host.dtype:
        raise ValueError(f"asarray: copy=False but converting {host.dtype} to "
                         f"{d if d is not None else hd} needs a copy")
    dev.check_dtype(hd, "asarray")
    if host.size == 0:
        return Array.from_numpy(host, dev)       # no elements: nothing is copied
    shared = _in_place(host, dev)
    if shared is None:
        raise ValueError(f"asarray: copy=False but {_why_copied(host, dev)}, so {dev} "
                         f"would need a copy")
    return shared


def _why_copied(host: np.ndarray, dev: Any) -> str:
    """Why ``_in_place`` refused ``host``, for copy=False's errors."""
    return ("the device's memory is not host memory" if not dev.shares_host_memory
            else "the memory is read-only" if not host.flags.writeable
            else "the memory is not C-contiguous" if not host.flags.c_contiguous
            else f"the memory is not aligned to {dev.host_ptr_align} bytes")


def _cuda_target(obj: Any, device: Any) -> Device | None:
    """The NVIDIA device a kDLCUDA producer's tensor goes to without a host trip: ``device``,
    or (None) the clnp device of the tensor's GPU, where that device shares memory with
    CUDA and is the tensor's GPU; else None (other producers, other targets)."""
    try:
        kind, ordinal = obj.__dlpack_device__()
    except (AttributeError, TypeError, ValueError, BufferError):
        return None
    if kind != 2:                               # kDLCUDA
        return None
    cands = devices() if device is None else (_device(device),)
    return next((d for d in cands if cuda_ordinal_of(d) == ordinal), None)


def _from_cuda(obj: Any, dev: Device, copy: bool | None, fname: str) -> Array:
    """An array of ``dev`` from a kDLCUDA producer on ``dev``'s GPU: the same memory where
    it is clnp's (an array exported before), else (copy=None or True) a device-to-device
    copy into memory CUDA sees, so the result exports back without a copy."""
    from .._runtime import cuda_memory, dlpack
    try:
        capsule = obj.__dlpack__(stream=1, max_version=(1, 0))   # ready on the legacy stream
    except TypeError:
        capsule = obj.__dlpack__(stream=1)
    imp = dlpack.consume(capsule)
    try:
        dev.check_dtype(imp.dtype, fname)
        item = imp.dtype.itemsize
        lo, hi = imp.span()
        start = imp.address + lo * item
        found = cuda_memory.buffer_at(dev, start) if copy is not True and hi > lo else None
        if found is not None and found[1] % item == 0 and \
                found[1] + (hi - lo) * item <= found[0].size and not imp.read_only:
            cuda_memory.wait_for_cuda(dev)
            return Array(found[0], found[1] // item - lo, imp.shape, imp.strides, imp.dtype,
                         dev)
        if copy is False and hi > lo:
            raise BufferError(
                f"{fname}(copy=False): {type(obj).__name__}'s CUDA memory was not allocated "
                f"by clnp, and OpenCL can only use CUDA memory made exportable (clnp's own, "
                f"handed out by __dlpack__); pass copy=None for a copy on the GPU")
        buf = cuda_memory.arena(dev).take(max((hi - lo) * item, 1))
        if hi > lo:
            cuda_memory.copy_from_cuda(dev, cuda_memory.address_of(dev, buf), start,
                                       (hi - lo) * item)
        return Array(buf, -lo, imp.shape, imp.strides, imp.dtype, dev)
    finally:
        imp.release()


def _host_from_dlpack(obj: Any) -> np.ndarray:
    try:
        return np.from_dlpack(obj)
    except (TypeError, RuntimeError, BufferError, ValueError):
        return np.from_dlpack(obj, device="cpu", copy=True)


def _unwrap_nested(seq: Any) -> Any:
    if isinstance(seq, Array):
        return seq.to_numpy()
    if isinstance(seq, (list, tuple)):
        return [_unwrap_nested(s) for s in seq]
    return seq


def array(obj: Any, dtype: Any = None, *, copy: bool = True, device: Any = None) -> Any:
    """Create an array; NumPy's ``array``, which copies by default.

    Parameters
    ----------
    obj : array_like
        An array, NumPy array, nested sequence or scalar.
    dtype : dtype, optional
        The result's dtype.
    copy : bool, default True
        Copy even when ``obj`` is already a clnp array of the right dtype and device.
    device : Device, optional
        Where the result lives (default: the default device, or ``x``'s device).

    Returns
    -------
    array
        The new array.

    Raises
    ------
    ValueError
        Ragged nested sequences.
    TypeError
        Non-numeric data.

    See Also
    --------
    asarray : converts without copying when it can.

    Examples
    --------
    >>> import clnp
    >>> a = clnp.array([[1, 2], [3, 4]])
    >>> a.shape
    (2, 2)
    >>> b = clnp.array(a)
    >>> b[0, 0] = 9
    >>> int(a[0, 0])
    1
    """
    return asarray(obj, dtype=dtype, device=device, copy=copy if copy else None)


def empty(shape: Any, *, dtype: Any = None, device: Any = None) -> Array:
    """An uninitialised array of ``shape``.

    Parameters
    ----------
    shape : int, tuple of int, or a 0-d or 1-d integer array
        The result's shape.
    dtype : dtype, optional
        The dtype (default: the default floating type).
    device : Device, optional
        Where the result lives (default: the default device, or ``x``'s device).
    order : {'C', 'K', 'A', 'F'}, optional
        NumPy's memory layout: clnp arrays are C-ordered, so ``'F'`` raises ValueError for
        two or more dimensions.
    like : None
        NumPy's array-protocol creation: not supported (TypeError; pass ``device=``).

    Returns
    -------
    array
        An array whose values are whatever the memory held.

    Raises
    ------
    ValueError
        A negative dimension.

    Examples
    --------
    >>> import clnp
    >>> clnp.empty((2, 3), dtype=clnp.int32).shape
    (2, 3)
    """
    dev = _device(device)
    d = _dtype(dtype, dev, "empty") or dev.default_float
    return Array.empty(normalize_shape(shape, "empty"), d, dev)


def _check_fill(fill_value: Any, d: np.dtype, fname: str) -> Any:
    """Validate a Python scalar fill value against ``d`` (NumPy's casting rules: floats
    truncate into integers, complex into a real dtype is an error; a bool dtype takes the
    value's truth, NaN and complex values included)."""
    if dkind(d) == "b" and isinstance(fill_value, (int, float, complex)):
        return bool(fill_value)
    if isinstance(fill_value, complex) and dkind(d) != "c":
        raise TypeError(f"{fname}: complex fill_value {fill_value} for real dtype {d}")
    if isinstance(fill_value, float) and dkind(d) in "iu":
        if math.isnan(fill_value):
            raise ValueError(f"{fname}: cannot fill {d} with NaN")
        if math.isinf(fill_value):
            raise OverflowError(f"{fname}: cannot fill {d} with {fill_value}")
        fill_value = int(fill_value)
    if dkind(d) in "iu" and isinstance(fill_value, int) and not isinstance(fill_value, bool):
        info = np.iinfo(d)
        if not info.min <= fill_value <= info.max:
            raise OverflowError(f"{fname}: fill_value {fill_value} out of bounds for {d}")
    return fill_value


def full(shape: Any, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Any:
    """An array of ``shape`` filled with ``fill_value``.

    Parameters
    ----------
    shape : int, tuple of int, or a 0-d or 1-d integer array
        The result's shape.
    fill_value : bool, int, float, complex or array_like
        The value; an array (clnp or NumPy, 0-d or n-d, or a list) broadcasts to
        ``shape``, as in NumPy.
    dtype : dtype, optional
        The dtype (default: from the value's Python type: bool, int64, the default float
        or complex; or an array's dtype).
    device : Device, optional
        Where the result lives (default: the default device, or ``x``'s device).
    order : {'C', 'K', 'A', 'F'}, optional
        NumPy's memory layout: clnp arrays are C-ordered, so ``'F'`` raises ValueError for
        two or more dimensions.
    like : None
        NumPy's array-protocol creation: not supported (TypeError; pass ``device=``).

    Returns
    -------
    array
        The filled array.

    Raises
    ------
    OverflowError
        ``fill_value`` does not fit an integer ``dtype``.
    ValueError
        An array ``fill_value`` that does not broadcast to ``shape``.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.full((2, 2), 7))
    [[7 7]
     [7 7]]
    >>> print(clnp.full((2, 3), clnp.asarray([1.0, 2.0, 3.0])))
    [[1. 2. 3.]
     [1. 2. 3.]]
    """
    return _full(shape, fill_value, dtype, device, "full")


def _full(shape: Any, fill_value: Any, dtype: Any, device: Any, fname: str) -> Any:
    """``full`` on behalf of ``fname`` (``full_like`` names itself in its errors)."""
    dev = _device(device)
    shape = normalize_shape(shape, fname)
    if isinstance(fill_value, (np.ndarray, list, tuple)):
        fill_value = asarray(fill_value, device=dev)   # NumPy's array-valued fill
    if is_array(fill_value):
        d = _dtype(dtype, dev, fname) or fill_value.dtype
        if fill_value.device is not dev:
            fill_value = asarray(fill_value, device=dev)
        fs = tuple(fill_value.shape)     # NumPy broadcasts it to the result's own shape
        if len(fs) > len(shape) or any(f not in (1, n) for f, n in
                                       zip(fs[::-1], shape[::-1])):
            raise ValueError(f"{fname}: fill_value of shape {fs} does not broadcast to the "
                             f"shape {shape}")
        broadcast_to = _namespace().broadcast_to     # manipulation: later in this layer
        v = broadcast_to(fill_value, shape)
        return primitive("convert_element_type").bind(v, dtype=d) if d != v.dtype else \
            primitive("copy").bind(v)
    if isinstance(fill_value, np.generic):
        if dtype is None:
            dtype = dt.as_dtype(fill_value.dtype)   # NumPy scalars keep their dtype
        fill_value = fill_value.item()
    if not isinstance(fill_value, (bool, int, float, complex)):
        raise TypeError(f"{fname}: fill_value must be a scalar or an array of numbers; got "
                        f"{type(fill_value).__name__}")
    d = _dtype(dtype, dev, fname) or _scalar_dtype(fill_value, dev)
    if d == dt.int64 and dtype is None and not _I64_MIN <= fill_value <= _I64_MAX:
        raise OverflowError(f"{fname}: Python integer {fill_value} does not fit int64")
    fill_value = _check_fill(fill_value, d, fname)
    return primitive("full").bind(shape=shape, value=fill_value, dtype=d, device=dev)


def zeros(shape: Any, *, dtype: Any = None, device: Any = None) -> Any:
    """An array of zeros.

    Parameters
    ----------
    shape : int, tuple of int, or a 0-d or 1-d integer array
        The result's shape.
    dtype : dtype, optional
        The dtype (default: the default floating type).
    device : Device, optional
        Where the result lives (default: the default device, or ``x``'s device).
    order : {'C', 'K', 'A', 'F'}, optional
        NumPy's memory layout: clnp arrays are C-ordered, so ``'F'`` raises ValueError for
        two or more dimensions.
    like : None
        NumPy's array-protocol creation: not supported (TypeError; pass ``device=``).

    Returns
    -------
    array
        The array of zeros.

    Raises
    ------
    ValueError
        A negative dimension.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.zeros(3))
    [0. 0. 0.]
    """
    dev = _device(device)
    return full(normalize_shape(shape, "zeros"), 0,
                dtype=_dtype(dtype, dev, "zeros") or dev.default_float, device=dev)


def ones(shape: Any, *, dtype: Any = None, device: Any = None) -> Any:
    """An array of ones.

    Parameters
    ----------
    shape : int, tuple of int, or a 0-d or 1-d integer array
        The result's shape.
    dtype : dtype, optional
        The dtype (default: the default floating type).
    device : Device, optional
        Where the result lives (default: the default device, or ``x``'s device).
    order : {'C', 'K', 'A', 'F'}, optional
        NumPy's memory layout: clnp arrays are C-ordered, so ``'F'`` raises ValueError for
        two or more dimensions.
    like : None
        NumPy's array-protocol creation: not supported (TypeError; pass ``device=``).

    Returns
    -------
    array
        The array of ones.

    Raises
    ------
    ValueError
        A negative dimension.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.ones((2, 3), dtype=clnp.int32))
    [[1 1 1]
     [1 1 1]]
    """
    dev = _device(device)
    return full(normalize_shape(shape, "ones"), 1,
                dtype=_dtype(dtype, dev, "ones") or dev.default_float, device=dev)


def _like(x: Any, dtype: Any, device: Any, fname: str) -> tuple[tuple[int, ...], np.dtype,
                                                                 Device]:
    if not is_array(x):
        raise TypeError(f"{fname}: x must be a clnp array; got {type(x).__name__}")
    dev = x.device if device is None else _device(device)
    return x.shape, _dtype(dtype, dev, fname) or x.dtype, dev


def empty_like(x: Any, /, *, dtype: Any = None, device: Any = None) -> Array:
    """An uninitialised array with the shape (and by default dtype and device) of ``x``.

    Parameters
    ----------
    x : array
        Input array.
    dtype : dtype, optional
        The dtype (default: ``x``'s).
    device : Device, optional
        Where the result lives (default: the default device, or ``x``'s device).
    order : {'C', 'K', 'A', 'F'}, optional
        NumPy's memory layout: clnp arrays are C-ordered, so ``'F'`` raises ValueError for
        two or more dimensions.
    subok : bool, optional
        Accepted for NumPy (clnp has no array subclasses).
    shape : int or tuple of ints, optional
        NumPy's override of the result's shape (the dtype and device still follow ``x``).

    Returns
    -------
    array
        An array of ``x``'s shape with unspecified values.

    Examples
    --------
    >>> import clnp
    >>> y = clnp.empty_like(clnp.ones((2, 2), dtype=clnp.float32))
    >>> y.shape, y.dtype
    ((2, 2), dtype('float32'))
    """
    shape, d, dev = _like(x, dtype, device, "empty_like")
    return Array.empty(shape, d, dev)


def zeros_like(x: Any, /, *, dtype: Any = None, device: Any = None) -> Any:
    """Zeros with the shape (and by default dtype and device) of ``x``.

    Parameters
    ----------
    x : array
        Input array.
    dtype : dtype, optional
        The dtype (default: ``x``'s).
    device : Device, optional
        Where the result lives (default: the default device, or ``x``'s device).
    order : {'C', 'K', 'A', 'F'}, optional
        NumPy's memory layout: clnp arrays are C-ordered, so ``'F'`` raises ValueError for
        two or more dimensions.
    subok : bool, optional
        Accepted for NumPy (clnp has no array subclasses).
    shape : int or tuple of ints, optional
        NumPy's override of the result's shape (the dtype and device still follow ``x``).

    Returns
    -------
    array
        The array of zeros.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.zeros_like(clnp.asarray([[1, 2]])))
    [[0 0]]
    """
    shape, d, dev = _like(x, dtype, device, "zeros_like")
    return full(shape, 0, dtype=d, device=dev)


def ones_like(x: Any, /, *, dtype: Any = None, device: Any = None) -> Any:
    """Ones with the shape (and by default dtype and device) of ``x``.

    Parameters
    ----------
    x : array
        Input array.
    dtype : dtype, optional
        The dtype (default: ``x``'s).
    device : Device, optional
        Where the result lives (default: the default device, or ``x``'s device).
    order : {'C', 'K', 'A', 'F'}, optional
        NumPy's memory layout: clnp arrays are C-ordered, so ``'F'`` raises ValueError for
        two or more dimensions.
    subok : bool, optional
        Accepted for NumPy (clnp has no array subclasses).
    shape : int or tuple of ints, optional
        NumPy's override of the result's shape (the dtype and device still follow ``x``).

    Returns
    -------
    array
        The array of ones.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.ones_like(clnp.arange(3)))
    [1 1 1]
    """
    shape, d, dev = _like(x, dtype, device, "ones_like")
    return full(shape, 1, dtype=d, device=dev)


def full_like(x: Any, /, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Any:
    """``fill_value`` with the shape (and by default dtype and device) of ``x``.

    Parameters
    ----------
    x : array
        Input array.
    fill_value : bool, int, float, complex or array_like
        The value; cast to the dtype as NumPy does (a float truncates into an integer
        array). An array (clnp or NumPy, 0-d or n-d, or a list) broadcasts to ``x``'s
        shape, as in NumPy.
    dtype : dtype, optional
        The dtype (default: ``x``'s).
    device : Device, optional
        Where the result lives (default: the default device, or ``x``'s device).
    order : {'C', 'K', 'A', 'F'}, optional
        NumPy's memory layout: clnp arrays are C-ordered, so ``'F'`` raises ValueError for
        two or more dimensions.
    subok : bool, optional
        Accepted for NumPy (clnp has no array subclasses).
    shape : int or tuple of ints, optional
        NumPy's override of the result's shape (the dtype and device still follow ``x``).

    Returns
    -------
    array
        The filled array.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.full_like(clnp.arange(3), 2.7))
    [2 2 2]
    >>> print(clnp.full_like(clnp.zeros((2, 2)), clnp.asarray([1.0, 2.0])))
    [[1. 2.]
     [1. 2.]]
    """
    shape, d, dev = _like(x, dtype, device, "full_like")
    return _full(shape, fill_value, d, dev, "full_like")


def _real_scalar(v: Any, name: str, fname: str) -> Any:
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(f"{fname}: {name} must be a real Python scalar; got {type(v).__name__}")
    return v


def arange(start: Any, /, stop: Any = None, step: Any = 1, *, dtype: Any = None,
           device: Any = None) -> Any:
    """Evenly spaced values in the half-open interval ``[start, stop)``.

    The dtype defaults to int64 when every argument is an int, else to the default floating
    type. Values are computed on the device as ``start + i * delta`` with NumPy's ``delta``
    (the difference of the first two values in the result dtype).

    Parameters
    ----------
    start : int or float
        The first value; with ``stop`` omitted, the end (and the start is 0).
    stop : int or float, optional
        The end, excluded.
    step : int or float, default 1
        The spacing; not zero.
    dtype : dtype, optional
        The result's dtype.
    device : Device, optional
        Where the result lives (default: the default device, or ``x``'s device).
    like : None
        NumPy's array-protocol creation: not supported (TypeError; pass ``device=``).

    Returns
    -------
    array
        1-D array of ``ceil((stop - start) / step)`` values (none when that is
        negative).

    Raises
    ------
    ValueError
        ``step`` is zero.
    TypeError
        An argument is not a real number, ``dtype`` is not numeric, or a bool ``dtype``
        would give more than two elements (NumPy's limit: ``start`` and ``start + step``
        as truth values).

    Examples
    --------
    >>> import clnp
    >>> print(clnp.arange(5))
    [0 1 2 3 4]
    >>> print(clnp.arange(1.0, 2.0, 0.25))
    [1.   1.25 1.5  1.75]
    """
    dev = _device(device)
    if stop is None:
        start, stop = 0, start
    start = _real_scalar(start, "start", "arange")
    stop = _real_scalar(stop, "stop", "arange")
    step = _real_scalar(step, "step", "arange")
    if step == 0:
        raise ValueError("arange: step must not be zero")
    d = _dtype(dtype, dev, "arange")
    if d is None:
        d = dt.int64 if all(isinstance(v, int) for v in (start, stop, step)) \
            else dev.default_float
    if dkind(d) not in "iufcb":
        raise TypeError(f"arange: dtype must be numeric; got {d}")
    if all(isinstance(v, int) for v in (start, stop, step)):
        n = max(0, -(-(stop - start) // step))
    else:
        n = max(0, math.ceil((stop - start) / step))
    if dkind(d) == "b":
        # NumPy: start and start + step, as truth values, for at most two elements
        if n > 2:
            raise TypeError(f"arange: a bool arange has at most 2 elements; got {n} (NumPy: "
                            f"arange() is only supported for booleans when the result has "
                            f"at most length 2)")
        vals = [bool(start), bool(start + step)][:n]
        return _namespace().asarray(np.asarray(vals, dtype=bool), device=dev)
    if dkind(d) in "iu":
        start, step = int(start), int(step)
        if n:
            info = np.iinfo(d)
            last = start + (n - 1) * step
            if not (info.min <= start <= info.max and info.min <= last <= info.max):
                raise OverflowError(f"arange: values from {start} to {last} do not fit {d}")
    else:
        with np.errstate(all="ignore"):
            s0 = np.asarray(start, d)
            delta = np.asarray(np.asarray(start + step, d) - s0, d)
        start, step = s0.item(), delta.item()
    return primitive("iota").bind(n=n, start=start, step=step, dtype=d, device=dev)


def linspace(start: Any, stop: Any, /, num: int, *, dtype: Any = None, device: Any = None,
             endpoint: bool = True) -> Any:
    """``num`` evenly spaced samples over ``[start, stop]`` (or ``[start, stop)``).

    Computed as NumPy does, ``start + i * step`` in float64 (complex128 for complex bounds)
    where the device has fp64, then cast; with ``endpoint`` the last value is exactly
    ``stop``. Integer dtypes take the floor, as in NumPy.

    Parameters
    ----------
    start : float, complex or array_like
        The first sample. The namespace function also takes NumPy scalars and arrays
        (clnp or NumPy, 0-d or n-d) as NumPy does: computed in their dtype, broadcast
        against ``stop``, one run of samples per element.
    stop : float, complex or array_like
        The last sample (or the excluded end).
    num : int
        Number of samples, at least 0.
    dtype : dtype, optional
        The dtype (default: the default floating or complex type).
    device : Device, optional
        Where the result lives (default: the default device, or ``x``'s device).
    endpoint : bool, default True
        Include ``stop``.
    retstep : bool, default False
        NumPy's option to also return the step: ``(samples, step)``.
    axis : int, default 0
        Where the samples run when the bounds are arrays; 0 (or -1) for scalar bounds,
        other values raising NumPy's AxisError.

    Returns
    -------
    array
        ``num`` samples: 1-D for scalar bounds, else of shape ``(num,)`` plus the bounds'
        broadcast shape, the samples axis moved to ``axis``.

    Raises
    ------
    ValueError
        ``num`` is negative.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.linspace(0, 1, 5))
    [0.   0.25 0.5  0.75 1.  ]
    >>> print(clnp.linspace(0, 1, 4, endpoint=False))
    [0.   0.25 0.5  0.75]
    >>> print(clnp.linspace(clnp.asarray([0.0, 1.0]), 2.0, 3, axis=1))
    [[0.  1.  2. ]
     [1.  1.5 2. ]]
    """
    dev = _device(device)
    num = linspace_num(num)
    for v, name in ((start, "start"), (stop, "stop")):
        if isinstance(v, np.generic):
            v = v.item()
        if isinstance(v, bool) or not isinstance(v, (int, float, complex)):
            raise TypeError(f"linspace: {name} must be a Python scalar; got "
                            f"{type(v).__name__}")
    start = start.item() if isinstance(start, np.generic) else start
    stop = stop.item() if isinstance(stop, np.generic) else stop
    is_c = isinstance(start, complex) or isinstance(stop, complex)
    d = _dtype(dtype, dev, "linspace") or (dev.default_complex if is_c else dev.default_float)
    if dkind(d) == "b":
        raise TypeError(f"linspace: dtype must be numeric; got {d}")
    if is_c and dkind(d) != "c":
        raise TypeError(f"linspace: complex start/stop need a complex dtype; got {d}")
    wide = dev.default_complex if (is_c or dkind(d) == "c") else dev.default_float
    div = (num - 1) if endpoint else num
    step = (stop - start) / div if div > 0 else 0.0
    last = stop if endpoint and num > 1 else None
    if dkind(d) in "fc" and dkind(wide) in "fc":
        # one kernel: computed in the wide dtype, stored as d, stop exactly at the end
        return primitive("iota").bind(n=num, start=start, step=step, dtype=wide, device=dev,
                                      out_dtype=d, last=last)
    out = primitive("iota").bind(n=num, start=start, step=step, dtype=wide, device=dev)
    if last is not None:
        out[num - 1] = stop
    if dkind(d) in "iu":
        floor = _namespace().floor     # elementwise: later in this layer
        out = floor(out)
    if d != wide:
        out = primitive("convert_element_type").bind(out, dtype=d)
    return out


def eye(n_rows: int, n_cols: int | None = None, /, *, k: int = 0, dtype: Any = None,
        device: Any = None) -> Any:
    """A 2-D array with ones on the ``k``-th diagonal and zeros elsewhere.

    Parameters
    ----------
    n_rows : int
        Number of rows.
    n_cols : int, optional
        Number of columns (default: ``n_rows``).
    k : int, default 0
        The diagonal: ``k > 0`` above the main diagonal, ``k < 0`` below.
    dtype : dtype, optional
        The dtype (default: the default floating type).
    device : Device, optional
        Where the result lives (default: the default device, or ``x``'s device).
    order : {'C', 'K', 'A', 'F'}, optional
        NumPy's memory layout: clnp arrays are C-ordered, so ``'F'`` raises ValueError for
        two or more dimensions.
    like : None
        NumPy's array-protocol creation: not supported (TypeError; pass ``device=``).
    M : int, optional
        NumPy's keyword name of ``n_cols`` (``np.eye(3, M=4)``).

    Returns
    -------
    array
        Array of shape ``(n_rows, n_cols)``.

    Raises
    ------
    ValueError
        A negative size.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.eye(2, 3, k=1))
    [[0. 1. 0.]
     [0. 0. 1.]]
    """
    dev = _device(device)
    n_rows = operator.index(n_rows)
    n_cols = n_rows if n_cols is None else operator.index(n_cols)
    k = operator.index(k)
    if n_rows < 0 or n_cols < 0:
        raise ValueError(f"eye: negative dimensions are not allowed; got "
                         f"{(n_rows, n_cols)}")
    flat = zeros((n_rows * n_cols,), dtype=dtype, device=dev)
    length = max(0, min(n_rows, n_cols - k) if k >= 0 else min(n_rows + k, n_cols))
    if length:
        start = k if k >= 0 else -k * n_cols
        # into the flat array itself, then reshaped: a write through a reshaped view would
        # not reach the array under a transformation (jit(lambda: clnp.eye(3)))
        flat[start:start + (length - 1) * (n_cols + 1) + 1:n_cols + 1] = 1
    return primitive("reshape").bind(flat, shape=(n_rows, n_cols))


def meshgrid(*arrays: Any, indexing: str = "xy", sparse: bool = False,
             copy: bool = True) -> tuple[Any, ...]:
    """Coordinate matrices from 1-D coordinate vectors.

    Parameters
    ----------
    *arrays : array or array_like
        Coordinate vectors (NumPy: inputs of more than one dimension are flattened). Their
        dtypes may differ: each output keeps its input's dtype.
    indexing : {'xy', 'ij'}, default 'xy'
        Cartesian (``xy``: the first two output dimensions are swapped) or matrix
        (``ij``) indexing.
    sparse : bool, default False
        NumPy's option: return each output with length-1 dimensions except its own axis
        (they broadcast against each other) instead of the full grid.
    copy : bool, default True
        NumPy's option: False returns broadcast views of the inputs instead of copies.

    Returns
    -------
    tuple of array
        One array per input, all of the same shape (unless ``sparse``).

    Raises
    ------
    ValueError
        ``indexing`` is neither 'xy' nor 'ij'.

    Examples
    --------
    >>> import clnp
    >>> X, Y = clnp.meshgrid(clnp.asarray([1, 2, 3]), clnp.asarray([10, 20]))
    >>> print(X)
    [[1 2 3]
     [1 2 3]]
    >>> print(Y)
    [[10 10 10]
     [20 20 20]]
    >>> [a.shape for a in clnp.meshgrid([1, 2, 3], [10, 20], sparse=True)]
    [(1, 3), (2, 1)]
    """
    broadcast_to = _namespace().broadcast_to     # manipulation: later in this layer
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij'; got {indexing!r}")
    device = next((a.device for a in arrays if is_array(a)), None)
    vectors = []
    for a in arrays:
        if not is_array(a):
            if not isinstance(a, (list, tuple, int, float, complex, bool, np.ndarray,
                                  np.generic)):
                raise TypeError(f"meshgrid: inputs must be arrays or array_likes; got "
                                f"{type(a).__name__}")
            a = asarray(a, device=device)
        if a.ndim != 1:
            a = primitive("reshape").bind(a, shape=(a.size,))
        vectors.append(a)
    n = len(vectors)
    sizes = [a.shape[0] for a in vectors]
    if indexing == "xy" and n > 1:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, a in enumerate(vectors):
        pos = i
        if indexing == "xy" and n > 1 and i < 2:
            pos = 1 - i
        shape = [1] * n
        shape[pos] = a.shape[0]
        v = primitive("reshape").bind(a, shape=tuple(shape))
        if not sparse:
            v = broadcast_to(v, tuple(sizes))
        out.append(primitive("copy").bind(v) if copy else v)
    return tuple(out)


def _tri(x: Any, k: Any, lower: bool, fname: str) -> Any:
    ns = _namespace()     # elementwise: later in this layer, reached through the namespace
    greater_equal, less_equal, subtract, where = (ns.greater_equal, ns.less_equal, ns.subtract,
                                                  ns.where)
    if not is_array(x):
        raise TypeError(f"{fname}: x must be a clnp array; got {type(x).__name__}")
    if x.ndim < 2:
        raise ValueError(f"{fname}: x must have at least 2 dimensions; got shape {x.shape}")
    try:
        k = operator.index(k)
    except TypeError:
        raise TypeError(f"{fname}: k must be an int; got {type(k).__name__}") from None
    rows, cols = x.shape[-2], x.shape[-1]
    i = primitive("reshape").bind(arange(rows, device=x.device), shape=(rows, 1))
    j = primitive("reshape").bind(arange(cols, device=x.device), shape=(1, cols))
    diff = subtract(j, i)
    mask = less_equal(diff, k) if lower else greater_equal(diff, k)
    return where(mask, x, zeros((), dtype=x.dtype, device=x.device))


def tril(x: Any, /, *, k: int = 0) -> Any:
    """The lower triangle of each matrix in ``x``; the rest is zero.

    Parameters
    ----------
    x : array
        Array of at least two dimensions (a stack of matrices).
    k : int, default 0
        Keep the elements on and below the ``k``-th diagonal.

    Returns
    -------
    array
        An array of ``x``'s shape and dtype.

    Raises
    ------
    ValueError
        ``x`` has fewer than two dimensions.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.tril(clnp.ones((3, 3), dtype=clnp.int32)))
    [[1 0 0]
     [1 1 0]
     [1 1 1]]
    """
    return _tri(x, k, True, "tril")


def triu(x: Any, /, *, k: int = 0) -> Any:
    """The upper triangle of each matrix in ``x``; the rest is zero.

    Parameters
    ----------
    x : array
        Array of at least two dimensions (a stack of matrices).
    k : int, default 0
        Keep the elements on and above the ``k``-th diagonal.

    Returns
    -------
    array
        An array of ``x``'s shape and dtype.

    Raises
    ------
    ValueError
        ``x`` has fewer than two dimensions.

    Examples
    --------
    >>> import clnp
    >>> print(clnp.triu(clnp.ones((3, 3), dtype=clnp.int32), k=1))
    [[0 1 1]
     [0 0 1]
     [0 0 0]]
    """
    return _tri(x, k, False, "triu")


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Any:
    """An array from any DLPack producer (NumPy, PyTorch, CuPy, JAX, clnp...).

    On a device that shares host memory (``Device.shares_host_memory``: PoCL and other CPU
    devices) an array of host memory the producer exports is used in place, without a copy,
    where that memory is writable, C-contiguous and aligned as the device asks
    (``Device.host_ptr_align`` bytes; NumPy's allocations often are not); the result then
    aliases it (writes on either side are seen on the other, a kernel's once it has
    completed).

    A CUDA tensor (``kDLCUDA``) goes to the clnp device of its GPU where that device shares
    memory with CUDA (NVIDIA, the ``cuda`` extra), without a trip through the host: memory
    clnp exported comes back as the same memory; memory the producer allocated is copied
    once on the GPU into memory CUDA sees (so the result exports back without a copy). The
    producer's pending writes are waited for. Everything else is copied to the device.

    Parameters
    ----------
    x : object
        An object with ``__dlpack__`` and ``__dlpack_device__``.
    device : Device, optional
        Where the result lives (default: the clnp device of a CUDA tensor's GPU, else the
        default device).
    copy : bool, optional
        True: always a copy. False: never a copy (BufferError where the memory cannot be
        used in place). None: in place where it can be, else a copy.

    Returns
    -------
    array
        A clnp array with ``x``'s shape and dtype.

    Raises
    ------
    BufferError
        ``copy=False`` where the memory cannot be used in place (a CUDA tensor clnp did not
        allocate, host memory a GPU cannot use), or a producer that cannot export.
    TypeError
        ``x`` does not implement DLPack, or its dtype is not one of the device's.

    Examples
    --------
    >>> import clnp, numpy
    >>> print(clnp.from_dlpack(numpy.arange(3)))
    [0 1 2]
    """
    if is_array(x):
        return asarray(x, device=device, copy=copy)
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack: {type(x).__name__} does not implement __dlpack__")
    cuda_dev = _cuda_target(x, device)
    if cuda_dev is not None:
        return _from_cuda(x, cuda_dev, copy, "from_dlpack")
    dev = _device(device)
    if copy is False:
        try:
            host = np.from_dlpack(x)
        except (TypeError, RuntimeError, BufferError, ValueError) as e:
            raise BufferError(f"from_dlpack(copy=False): {type(x).__name__}'s memory is not "
                              f"host memory that {dev} can use in place ({e})") from None
    else:
        host = _host_from_dlpack(x)
    host = np.asarray(host)
    dev.check_dtype(dt.as_dtype(host.dtype), "from_dlpack")
    if copy is not True:
        shared = _in_place(host, dev)
        if shared is not None:
            return shared
        if copy is False:
            raise BufferError(f"from_dlpack(copy=False): {_why_copied(host, dev)}, so {dev} "
                              f"would need a copy")
    return Array.from_numpy(host, dev)


def _in_place(host: np.ndarray, dev: Any) -> Array | None:
    """An array of ``dev`` over ``host``'s memory (CL_MEM_USE_HOST_PTR), where the device
    shares host memory and the memory is writable, C-contiguous, non-empty and aligned as
    the device asks; else None. The buffer holds ``host`` (and so the producer's memory)."""
    if not (dev.shares_host_memory and host.size and host.flags.writeable and
            host.flags.c_contiguous and host.ctypes.data % dev.host_ptr_align == 0):
        return None
    flags = cl.mem_flags.READ_WRITE | cl.mem_flags.USE_HOST_PTR
    buf = cl.Buffer(dev.context, flags, hostbuf=host)
    return Array(buf, 0, tuple(host.shape), c_strides(tuple(host.shape)),
                 dt.as_dtype(host.dtype), dev)
