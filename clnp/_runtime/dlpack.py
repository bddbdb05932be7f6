"""DLPack capsules made and read by clnp itself, for memory NumPy cannot describe.

NumPy's ``__dlpack__`` exports host memory only. Device memory that CUDA sees
(:mod:`clnp._runtime.cuda_memory`) is exported as ``kDLCUDA`` here, and a ``kDLCUDA``
producer's capsule (PyTorch, CuPy, JAX) is read here, so neither direction needs CuPy or
PyTorch to be installed.

The layout is DLPack's ABI (``dlpack.h``): ``DLManagedTensor`` in a capsule named
``"dltensor"`` for consumers that ask for no version, ``DLManagedTensorVersioned`` (1.0) in
one named ``"dltensor_versioned"`` for those whose ``max_version`` is 1.0 or newer. A
consumer renames the capsule (``"used_dltensor..."``) and calls the deleter when it lets go.
The deleter drops the exporter's reference to ``owner``, which keeps the memory alive until
then.

A capsule nobody consumed must free its tensor itself. A capsule destructor written in
Python cannot: it runs while the failing consumer's exception is pending (NumPy's
``from_dlpack`` of a ``kDLCUDA`` capsule), and any C-API call it makes through ctypes
reports or clears that exception. So the capsules carry no destructor; clnp keeps each
until it is consumed (renamed: the consumer calls the deleter) or abandoned (nothing else
holds it: clnp frees the tensor), checked at every export and by :func:`collect`.
"""
from __future__ import annotations

import ctypes
import sys
import threading
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

__all__ = ["KDLCPU", "KDLCUDA", "Imported", "collect", "export", "consume", "dtype_of",
           "code_of"]

KDLCPU, KDLCUDA = 1, 2
_VERSION = (1, 0)
_FLAG_READ_ONLY, _FLAG_IS_COPIED = 1, 2


class _Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _Device), ("ndim", ctypes.c_int32),
                ("dtype", _DataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_Deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class _Managed(ctypes.Structure):
    _fields_ = [("dl_tensor", _Tensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _Deleter)]


class _Version(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class _ManagedVersioned(ctypes.Structure):
    _fields_ = [("version", _Version), ("manager_ctx", ctypes.c_void_p), ("deleter", _Deleter),
                ("flags", ctypes.c_uint64), ("dl_tensor", _Tensor)]


# names live as long as the module: a capsule keeps a pointer to its name, not a copy
_NAME, _USED = b"dltensor", b"used_dltensor"
_NAME_V, _USED_V = b"dltensor_versioned", b"used_dltensor_versioned"

_api = ctypes.pythonapi
_new = _api.PyCapsule_New
_new.restype, _new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_is_valid = _api.PyCapsule_IsValid
_is_valid.restype, _is_valid.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]
_pointer = _api.PyCapsule_GetPointer
_pointer.restype, _pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
_set_name = _api.PyCapsule_SetName
_set_name.restype, _set_name.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]

# exported tensors alive in a consumer: address of the managed struct -> what it holds
_LIVE: dict[int, tuple[Any, ...]] = {}
# capsules not known to be consumed yet: (capsule, its first name, managed struct address)
_OUT: list[tuple[Any, bytes, int]] = []
_LOCK = threading.Lock()
# references to an abandoned capsule: its entry tuple's slot and getrefcount's argument
_ABANDONED_REFS = 2


def _release(address: int) -> None:
    with _LOCK:
        _LIVE.pop(address, None)


@_Deleter
def _deleter(address: int) -> None:
    # called by the consumer (any thread: ctypes takes the GIL) once it lets go
    _release(address)


def collect() -> int:
    """Forget consumed capsules and free the tensors of abandoned ones (no consumer took
    them); returns how many were freed.

    Examples
    --------
    >>> from clnp._runtime import dlpack
    >>> dlpack.collect() >= 0
    True
    """
    with _LOCK:
        out, _OUT[:] = list(_OUT), []
    freed, keep = 0, []
    while out:
        entry = out.pop()
        capsule, name, address = entry
        if not _is_valid(capsule, name):
            continue                                 # consumed: the consumer calls the deleter
        del capsule
        if sys.getrefcount(entry[0]) <= _ABANDONED_REFS:
            _release(address)
            freed += 1
        else:
            keep.append(entry)
    with _LOCK:
        _OUT.extend(keep)
    return freed


_CODES = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}


def code_of(dtype: np.dtype) -> tuple[int, int]:
    """DLPack's (type code, bits) of a clnp dtype (bfloat16 is ``kDLBfloat``).

    Examples
    --------
    >>> import numpy as np
    >>> from clnp._runtime.dlpack import code_of
    >>> code_of(np.dtype(np.float32)), code_of(np.dtype(bool))
    ((2, 32), (6, 8))
    """
    dtype = np.dtype(dtype)
    if dtype.name == "bfloat16":
        return 4, 16
    if dtype.kind not in _CODES:
        raise BufferError(f"DLPack has no type code for {dtype}")
    return _CODES[dtype.kind], dtype.itemsize * 8


def dtype_of(code: int, bits: int, lanes: int) -> np.dtype:
    """The NumPy dtype of DLPack's (code, bits, lanes); BufferError for one clnp has not.

    Examples
    --------
    >>> from clnp._runtime.dlpack import dtype_of
    >>> dtype_of(2, 64, 1)
    dtype('float64')
    """
    if lanes != 1:
        raise BufferError(f"DLPack vector types (lanes={lanes}) are not supported")
    if code == 4 and bits == 16:
        import ml_dtypes                       # clnp's bfloat16 is ml_dtypes'
        return np.dtype(ml_dtypes.bfloat16)
    kinds = {v: k for k, v in _CODES.items()}
    if code not in kinds:
        raise BufferError(f"DLPack type code {code} ({bits} bits) is not supported")
    try:
        return np.dtype(f"{kinds[code]}{bits // 8}") if code != 6 else np.dtype(bool)
    except TypeError:
        raise BufferError(f"DLPack type code {code} with {bits} bits is not supported") from None


def export(address: int, device: tuple[int, int], shape: tuple[int, ...],
           strides: tuple[int, ...], dtype: np.dtype, owner: Any, *,
           max_version: tuple[int, int] | None = None, copied: bool = False) -> Any:
    """A DLPack capsule of the tensor at ``address`` on ``device`` (type, id), ``strides``
    in elements. ``owner`` is held until the consumer lets go. ``max_version`` of 1.0 or
    newer gets a versioned capsule (which can say ``copied``).

    Examples
    --------
    >>> import numpy as np
    >>> from clnp._runtime import dlpack
    >>> h = np.arange(6.0).reshape(2, 3)
    >>> class Host:                     # host memory, exported by hand
    ...     def __dlpack_device__(self):
    ...         return (dlpack.KDLCPU, 0)
    ...     def __dlpack__(self, **kw):
    ...         return dlpack.export(h.ctypes.data, (1, 0), h.shape, (3, 1), h.dtype, h)
    >>> np.from_dlpack(Host())[1, 2]
    np.float64(5.0)
    """
    code, bits = code_of(dtype)
    ndim = len(shape)
    shape_c = (ctypes.c_int64 * max(ndim, 1))(*shape)
    strides_c = (ctypes.c_int64 * max(ndim, 1))(*strides)
    tensor = _Tensor(ctypes.c_void_p(address or None), _Device(*device), ndim,
                     _DataType(code, bits, 1), shape_c, strides_c, 0)
    versioned = max_version is not None and tuple(max_version)[:1] >= (1,)
    if versioned:
        managed: Any = _ManagedVersioned(_Version(*_VERSION), None, _deleter,
                                         _FLAG_IS_COPIED if copied else 0, tensor)
    else:
        managed = _Managed(tensor, None, _deleter)
    where = ctypes.addressof(managed)
    name = _NAME_V if versioned else _NAME
    if _OUT:
        collect()
    with _LOCK:
        _LIVE[where] = (managed, shape_c, strides_c, owner)
    capsule = _new(where, name, None)
    with _LOCK:
        _OUT.append((capsule, name, where))
    return capsule


@dataclass
class Imported:
    """A consumed producer's tensor: where it is (``address`` of element 0, ``device`` as
    (type, id)), its ``shape``, ``strides`` in elements and ``dtype``, whether it is
    ``read_only`` and whether the producer says it is a ``copied`` one (DLPack 1.0);
    ``release()`` hands it back to the producer (once)."""

    address: int
    device: tuple[int, int]
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    dtype: np.dtype
    read_only: bool
    copied: bool
    _release: Callable[[], None]

    def release(self) -> None:
        fn, self._release = self._release, lambda: None
        fn()

    def span(self) -> tuple[int, int]:
        """Element offsets (relative to element 0) of the lowest and one past the highest
        element: the bytes a copy of the tensor must move, divided by the itemsize."""
        if any(n == 0 for n in self.shape):
            return 0, 0
        lo = sum((n - 1) * s for n, s in zip(self.shape, self.strides) if s < 0)
        hi = sum((n - 1) * s for n, s in zip(self.shape, self.strides) if s > 0)
        return lo, hi + 1


def consume(capsule: Any) -> Imported:
    """Take a producer's capsule over (renaming it, as the protocol asks) and read it.

    Raises
    ------
    BufferError
        Not a DLPack capsule, already consumed, or a dtype clnp has not.
    """
    if _is_valid(capsule, _NAME_V):
        ptr = _pointer(capsule, _NAME_V)
        m: Any = _ManagedVersioned.from_address(ptr)
        if m.version.major > _VERSION[0]:
            raise BufferError(f"DLPack {m.version.major}.{m.version.minor} is newer than "
                              f"clnp reads ({_VERSION[0]}.x)")
        used, read_only = _USED_V, bool(m.flags & _FLAG_READ_ONLY)
        copied = bool(m.flags & _FLAG_IS_COPIED)
    elif _is_valid(capsule, _NAME):
        ptr = _pointer(capsule, _NAME)
        m, used, read_only, copied = _Managed.from_address(ptr), _USED, False, False
    else:
        raise BufferError("from_dlpack: the producer's __dlpack__ returned no unconsumed "
                          "DLPack capsule")
    t = m.dl_tensor
    shape = tuple(int(t.shape[i]) for i in range(t.ndim))
    if t.strides:
        strides = tuple(int(t.strides[i]) for i in range(t.ndim))
    else:                                  # NULL strides: C-contiguous
        strides, acc = [], 1
        for n in reversed(shape):
            strides.append(acc)
            acc *= max(n, 1)
        strides = tuple(reversed(strides))
    dtype = dtype_of(t.dtype.code, t.dtype.bits, t.dtype.lanes)
    address = (t.data or 0) + int(t.byte_offset)
    _set_name(capsule, used)
    deleter = m.deleter

    def release() -> None:
        if deleter:
            deleter(ptr)

    return Imported(address, (int(t.device.device_type), int(t.device.device_id)), shape,
                    strides, dtype, read_only, copied, release)
