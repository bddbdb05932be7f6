"""Device memory that CUDA can see: CUDA virtual-memory allocations imported into OpenCL.

NVIDIA's OpenCL driver imports memory exported by CUDA as a POSIX file descriptor
(``cl_khr_external_memory_opaque_fd``). A buffer made so is one allocation with two names:
a ``cl.Buffer`` for clnp's kernels and a CUDA device pointer for NCCL, PyTorch, CuPy or JAX.
The CUDA side goes through NVIDIA's own bindings (``cuda-bindings``, the ``[cuda]`` extra),
imported only when a device asks for shared memory; the OpenCL side calls
``clCreateBufferWithProperties`` through the OpenCL loader PyOpenCL uses.

One allocation (``SharedAllocation``):

1. ``cuMemCreate`` of pinned device memory on the CUDA device that is this OpenCL device
   (matched by UUID), with a POSIX file descriptor as its shareable handle, rounded up
   to the allocation granularity;
2. ``cuMemExportToShareableHandle`` (the descriptor), ``cuMemAddressReserve``, ``cuMemMap``
   and ``cuMemSetAccess`` (read-write on that device): the CUDA pointer;
3. ``clCreateBufferWithProperties(ctx, [CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR, fd,
   CL_MEM_DEVICE_HANDLE_LIST_KHR, device, CL_MEM_DEVICE_HANDLE_LIST_END_KHR, 0])``: the
   OpenCL buffer, acquired for OpenCL once (``clEnqueueAcquireExternalMemObjectsKHR``). The
   import takes the descriptor over (the driver closes it with the buffer).

Freeing undoes it in reverse (release for OpenCL, release the buffer, ``cuMemUnmap``,
``cuMemAddressFree``, ``cuMemRelease``; the descriptor only where the import failed). Allocations are pooled per
device by size (``SharedPool``): creating one costs driver calls that a step must not pay
each time. A forked child forgets the pools without freeing (the parent owns them).

Ordering between the two APIs is the caller's: OpenCL work on a buffer must be complete
before CUDA work reads it (``clnp_nn.parallel.nccl`` waits for the queue's events) and the
other way round.
"""
from __future__ import annotations

import atexit
import ctypes
import os
import threading
from typing import Any

from .launch import opencl_library_path
from .opencl import cl

# cl_khr_external_memory
_CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR = 0x2060
_CL_MEM_DEVICE_HANDLE_LIST_KHR = 0x2051
_CL_MEM_DEVICE_HANDLE_LIST_END_KHR = 0
_CL_MEM_READ_WRITE = 1

EXTENSION = "cl_khr_external_memory_opaque_fd"


class SharedMemoryUnavailable(RuntimeError):
    """This device cannot hold memory CUDA sees (not NVIDIA, no external-memory extension,
    or NVIDIA's ``cuda-bindings`` not installed: ``pip install clnp[cuda]``)."""


# ----------------------------------------------------------------------------- CUDA side
_cu: Any = None
_cu_lock = threading.Lock()


def _driver() -> Any:
    """``cuda.bindings.driver``, initialised once; SharedMemoryUnavailable without it."""
    global _cu
    if _cu is None:
        with _cu_lock:
            if _cu is None:
                try:
                    from cuda.bindings import driver as cu
                except ImportError as e:
                    raise SharedMemoryUnavailable(
                        "memory shared with CUDA needs NVIDIA's cuda-bindings: "
                        "pip install 'clnp[cuda]'") from e
                _check(cu, cu.cuInit(0), "cuInit")
                _cu = cu
    return _cu


def _check(cu: Any, result: Any, what: str) -> Any:
    """The value(s) of a ``cuda-bindings`` call, or RuntimeError naming the call."""
    err, *rest = result if isinstance(result, tuple) else (result,)
    if err != cu.CUresult.CUDA_SUCCESS:
        name = cu.cuGetErrorName(err)[1] if hasattr(cu, "cuGetErrorName") else err
        raise RuntimeError(f"{what} failed: {name.decode() if isinstance(name, bytes) else name}")
    if not rest:
        return None
    return rest[0] if len(rest) == 1 else tuple(rest)


_CL_DEVICE_UUID_KHR = 0x106A
_ORDINALS: dict[bytes, int] = {}


def device_uuid(device: Any) -> bytes:
    """The 16-byte UUID of an OpenCL device (``cl_khr_device_uuid``; NVIDIA reports CUDA's):
    the same GPU seen from any process of its host gives the same UUID.

    Raises
    ------
    SharedMemoryUnavailable
        The driver does not report it.

    Examples
    --------
    >>> import clnp
    >>> from clnp._runtime import cuda_memory
    >>> d = clnp.default_device()
    >>> try:
    ...     len(cuda_memory.device_uuid(d))
    ... except cuda_memory.SharedMemoryUnavailable:
    ...     16
    16
    """
    api = _opencl()
    buf = (ctypes.c_ubyte * 16)()
    err = api.device_info(device.cl_device.int_ptr, _CL_DEVICE_UUID_KHR, 16, buf, None)
    if err != 0:
        raise SharedMemoryUnavailable(f"{device}: the driver does not report its UUID "
                                      f"(cl_khr_device_uuid)")
    return bytes(buf)


def cuda_ordinal(device: Any) -> int:
    """The CUDA device ordinal of an NVIDIA OpenCL ``device``, matched by UUID (so
    ``CUDA_VISIBLE_DEVICES`` and the two enumeration orders do not matter).

    Raises
    ------
    SharedMemoryUnavailable
        No visible CUDA device has that UUID.
    """
    cu = _driver()
    if not _ORDINALS:
        for i in range(_check(cu, cu.cuDeviceGetCount(), "cuDeviceGetCount")):
            dev = _check(cu, cu.cuDeviceGet(i), "cuDeviceGet")
            uuid = _check(cu, cu.cuDeviceGetUuid(dev), "cuDeviceGetUuid")
            _ORDINALS[bytes(uuid.bytes)] = i
    uuid = device_uuid(device)
    if uuid not in _ORDINALS:
        raise SharedMemoryUnavailable(f"{device}: no visible CUDA device has its UUID "
                                      f"{uuid.hex()}")
    return _ORDINALS[uuid]


class _Context:
    """The CUDA primary context of an ordinal, made current for the duration of a block
    (the one CuPy, PyTorch and NCCL use too)."""

    _ctx: dict[int, Any] = {}

    def __init__(self, ordinal: int):
        cu = _driver()
        ctx = self._ctx.get(ordinal)
        if ctx is None:
            dev = _check(cu, cu.cuDeviceGet(ordinal), "cuDeviceGet")
            ctx = self._ctx[ordinal] = _check(cu, cu.cuDevicePrimaryCtxRetain(dev),
                                              "cuDevicePrimaryCtxRetain")
        self.ctx = ctx

    def __enter__(self) -> "_Context":
        cu = _driver()
        _check(cu, cu.cuCtxPushCurrent(self.ctx), "cuCtxPushCurrent")
        return self

    def __exit__(self, *exc: Any) -> None:
        cu = _driver()
        _check(cu, cu.cuCtxPopCurrent(), "cuCtxPopCurrent")


# --------------------------------------------------------------------------- OpenCL side
class _OpenCL:
    """clCreateBufferWithProperties and the external-memory acquire/release entry points."""

    def __init__(self) -> None:
        lib = ctypes.CDLL(opencl_library_path())
        f = lib.clCreateBufferWithProperties
        f.restype = ctypes.c_void_p
        f.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint64), ctypes.c_uint64,
                      ctypes.c_size_t, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int32)]
        self.create = f
        d = lib.clGetDeviceInfo
        d.restype = ctypes.c_int32
        d.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_size_t, ctypes.c_void_p,
                      ctypes.c_void_p]
        self.device_info = d
        g = lib.clGetExtensionFunctionAddressForPlatform
        g.restype = ctypes.c_void_p
        g.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        self._address = g
        self._fns: dict[tuple[int, str], Any] = {}

    def khr(self, platform: Any, name: str) -> Any:
        """An extension function of ``platform`` (acquire/release), or None."""
        key = (platform.int_ptr, name)
        if key not in self._fns:
            addr = self._address(platform.int_ptr, name.encode())
            proto = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_uint32,
                                     ctypes.POINTER(ctypes.c_void_p), ctypes.c_uint32,
                                     ctypes.c_void_p, ctypes.c_void_p)
            self._fns[key] = proto(addr) if addr else None
        return self._fns[key]


_cl_api: _OpenCL | None = None


def _opencl() -> _OpenCL:
    global _cl_api
    if _cl_api is None:
        _cl_api = _OpenCL()
    return _cl_api


def supported(device: Any) -> bool:
    """Whether ``device`` can hold memory CUDA sees: an NVIDIA OpenCL device reporting
    ``cl_khr_external_memory_opaque_fd``, with ``cuda-bindings`` installed and the device
    visible to CUDA. Cheap after the first call; never raises.

    Examples
    --------
    >>> import clnp
    >>> from clnp._runtime.cuda_memory import supported
    >>> supported(clnp.default_device()) in (True, False)
    True
    """
    hit = _SUPPORTED.get(device)
    if hit is None:
        hit = _SUPPORTED[device] = why_unsupported(device) is None
    return hit


def why_unsupported(device: Any) -> str | None:
    """Why ``device`` cannot hold memory CUDA sees (None where it can).

    Examples
    --------
    >>> import clnp
    >>> from clnp._runtime.cuda_memory import supported, why_unsupported
    >>> d = clnp.default_device()
    >>> (why_unsupported(d) is None) == supported(d)
    True
    """
    if "NVIDIA" not in device.platform_name.upper():
        return f"its platform, {device.platform_name}, is not NVIDIA's"
    if EXTENSION not in device.extensions:
        return f"its driver does not report {EXTENSION}"
    try:
        cuda_ordinal(device)
    except (SharedMemoryUnavailable, RuntimeError, cl.Error) as e:
        return str(e)
    return None


_SUPPORTED: dict[Any, bool] = {}


def _acquire_release(device: Any, buffer: cl.Buffer, name: str) -> None:
    fn = _opencl().khr(device.cl_device.platform, name)
    if fn is None:
        return
    objs = (ctypes.c_void_p * 1)(buffer.int_ptr)
    err = fn(device.queue.int_ptr, 1, objs, 0, None, None)
    if err != 0:
        raise RuntimeError(f"{name} failed with OpenCL error {err}")


class SharedAllocation:
    """``nbytes`` (rounded up to the granularity) of ``device`` memory with an OpenCL name
    (``buffer``) and a CUDA name (``cuda_ptr``). ``free()`` gives everything back."""

    __slots__ = ("device", "ordinal", "size", "buffer", "cuda_ptr", "_handle", "_fd", "_pid",
                 "__weakref__")

    def __init__(self, device: Any, nbytes: int):
        cu = _driver()
        self.device, self.ordinal = device, cuda_ordinal(device)
        self._pid = os.getpid()
        self._handle = self._fd = None
        self.cuda_ptr = 0
        self.buffer = None
        prop = _allocation_prop(cu, self.ordinal)
        fd_type = prop.requestedHandleTypes
        gran = granularity(device)
        self.size = -(-max(int(nbytes), 1) // gran) * gran
        with _Context(self.ordinal):
            try:
                self._handle = _check(cu, cu.cuMemCreate(self.size, prop, 0), "cuMemCreate")
                self._fd = int(_check(cu, cu.cuMemExportToShareableHandle(
                    self._handle, fd_type, 0), "cuMemExportToShareableHandle"))
                ptr = _check(cu, cu.cuMemAddressReserve(self.size, 0, 0, 0),
                             "cuMemAddressReserve")
                _check(cu, cu.cuMemMap(ptr, self.size, 0, self._handle, 0), "cuMemMap")
                self.cuda_ptr = int(ptr)
                access = cu.CUmemAccessDesc()
                access.location.type = cu.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
                access.location.id = self.ordinal
                access.flags = cu.CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_READWRITE
                _check(cu, cu.cuMemSetAccess(ptr, self.size, [access], 1), "cuMemSetAccess")
                self.buffer = self._import(device)
            except BaseException:
                self.free()
                raise

    @property
    def address(self) -> int:
        """The CUDA pointer (the arena's name for a chunk's address in the other API)."""
        return self.cuda_ptr

    def _import(self, device: Any) -> cl.Buffer:
        api = _opencl()
        props = (ctypes.c_uint64 * 6)(
            _CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR, self._fd,
            _CL_MEM_DEVICE_HANDLE_LIST_KHR, device.cl_device.int_ptr,
            _CL_MEM_DEVICE_HANDLE_LIST_END_KHR, 0)
        err = ctypes.c_int32(0)
        mem = api.create(device.context.int_ptr, props, _CL_MEM_READ_WRITE, self.size, None,
                         ctypes.byref(err))
        if err.value != 0 or not mem:
            raise RuntimeError(f"{device}: clCreateBufferWithProperties (external memory, "
                               f"{self.size} bytes) failed with OpenCL error {err.value}")
        # a successful import hands the descriptor to the driver, which closes it when the
        # buffer is released (seen on NVIDIA 580: closing it after the release fails with
        # EBADF), as Vulkan's import of an opaque fd does
        self._fd = None
        buf = cl.Buffer.from_int_ptr(mem, retain=False)
        _acquire_release(device, buf, "clEnqueueAcquireExternalMemObjectsKHR")
        return buf

    def free(self) -> None:
        """Give the memory back: to OpenCL, then to CUDA (a forked child only forgets)."""
        if self._pid != os.getpid():
            self.buffer = None
            return
        cu = _driver()
        if self.buffer is not None:
            try:
                _acquire_release(self.device, self.buffer,
                                 "clEnqueueReleaseExternalMemObjectsKHR")
                self.device.queue.finish()
            finally:
                self.buffer.release()
                self.buffer = None
        with _Context(self.ordinal):
            if self.cuda_ptr:
                _check(cu, cu.cuMemUnmap(self.cuda_ptr, self.size), "cuMemUnmap")
                _check(cu, cu.cuMemAddressFree(self.cuda_ptr, self.size), "cuMemAddressFree")
                self.cuda_ptr = 0
            if self._handle is not None:
                _check(cu, cu.cuMemRelease(self._handle), "cuMemRelease")
                self._handle = None
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class SharedPool:
    """Shared allocations of one device, reused by size: ``take(nbytes)`` hands out a free
    one at least that large (within twice the size), ``give(a)`` takes it back once the
    caller's work on it is ordered before any later use."""

    def __init__(self, device: Any):
        self.device = device
        self._free: list[SharedAllocation] = []
        self._lock = threading.Lock()
        self.held_bytes = 0

    def take(self, nbytes: int) -> SharedAllocation:
        with self._lock:
            best = None
            for a in self._free:
                if nbytes <= a.size <= 2 * max(nbytes, 1) and (best is None or a.size < best.size):
                    best = a
            if best is not None:
                self._free.remove(best)
                self.held_bytes -= best.size
                return best
        return SharedAllocation(self.device, nbytes)

    def give(self, a: SharedAllocation) -> None:
        with self._lock:
            self._free.append(a)
            self.held_bytes += a.size

    def free_held(self) -> None:
        with self._lock:
            held, self._free, self.held_bytes = self._free, [], 0
        for a in held:
            a.free()


_POOLS: dict[Any, SharedPool] = {}
_ARENAS: dict[Any, Any] = {}
_GRANULARITY: dict[int, int] = {}


def granularity(device: Any) -> int:
    """The CUDA allocation granularity of ``device`` in bytes (2 MiB on an H200)."""
    ordinal = cuda_ordinal(device)
    if ordinal not in _GRANULARITY:
        cu = _driver()
        with _Context(ordinal):
            _GRANULARITY[ordinal] = int(_check(cu, cu.cuMemGetAllocationGranularity(
                _allocation_prop(cu, ordinal),
                cu.CUmemAllocationGranularity_flags.CU_MEM_ALLOC_GRANULARITY_MINIMUM),
                "cuMemGetAllocationGranularity"))
    return _GRANULARITY[ordinal]


def _allocation_prop(cu: Any, ordinal: int) -> Any:
    """What every shared allocation asks of ``cuMemCreate``: pinned memory of GPU
    ``ordinal``, exportable as a POSIX file descriptor."""
    prop = cu.CUmemAllocationProp()
    prop.type = cu.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
    prop.location.type = cu.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    prop.location.id = ordinal
    prop.requestedHandleTypes = \
        cu.CUmemAllocationHandleType.CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
    return prop


def arena(device: Any) -> Any:
    """The arena of ``device``'s arrays in memory CUDA sees (:class:`SlotArena` of shared
    allocations): every array when the device allocates there
    (``Device.set_cuda_memory``), and the arrays ``from_dlpack`` copies from CUDA tensors.

    Raises
    ------
    SharedMemoryUnavailable
        ``device`` cannot share memory with CUDA.
    """
    a = _ARENAS.get(device)
    if a is None:
        from .slot_arena import SlotArena
        why = why_unsupported(device)
        if why is not None:
            raise SharedMemoryUnavailable(f"{device} cannot share memory with CUDA: {why}")
        a = _ARENAS[device] = SlotArena(lambda n: SharedAllocation(device, n),
                                        align=device.host_ptr_align,
                                        granularity=granularity(device))
    return a


def address_of(device: Any, buffer: Any) -> int | None:
    """The CUDA pointer of ``buffer``'s first byte where it is one of ``device``'s arena
    buffers, else None. Imports nothing: a device that never used the arena answers None.

    Examples
    --------
    >>> import clnp
    >>> from clnp._runtime import cuda_memory
    >>> d = clnp.default_device()
    >>> x = clnp.zeros(4, device=d)
    >>> cuda_memory.address_of(d, x._buf) is None or d.cuda_memory
    True
    """
    a = _ARENAS.get(device)
    return None if a is None else a.address_of(buffer)


def buffer_at(device: Any, address: int) -> tuple[Any, int] | None:
    """The buffer of ``device``'s arena lent out that holds CUDA pointer ``address`` and the
    address's byte offset in it, else None (memory clnp did not hand out). Imports nothing
    for a device that never used the arena.

    Examples
    --------
    >>> import clnp
    >>> from clnp._runtime import cuda_memory
    >>> cuda_memory.buffer_at(clnp.default_device(), 1 << 40) is None
    True
    """
    a = _ARENAS.get(device)
    return None if a is None else a.buffer_at(address)


def copy_from_cuda(device: Any, dst: int, src: int, nbytes: int) -> None:
    """Copy ``nbytes`` from CUDA pointer ``src`` to ``dst`` on ``device``'s GPU, ordered
    after the work on CUDA's legacy default stream (where a DLPack producer asked with
    ``stream=1`` puts its tensor's readiness), and wait for it."""
    cu = _driver()
    with _Context(cuda_ordinal(device)):
        legacy = cu.CUstream(cu.CU_STREAM_LEGACY)
        _check(cu, cu.cuMemcpyDtoDAsync(dst, src, nbytes, legacy), "cuMemcpyDtoDAsync")
        _check(cu, cu.cuStreamSynchronize(legacy), "cuStreamSynchronize")


def wait_for_cuda(device: Any) -> None:
    """Wait for the work on CUDA's legacy default stream of ``device``'s GPU (which a DLPack
    producer asked with ``stream=1`` orders its tensor's writes before)."""
    cu = _driver()
    with _Context(cuda_ordinal(device)):
        _check(cu, cu.cuStreamSynchronize(cu.CUstream(cu.CU_STREAM_LEGACY)),
               "cuStreamSynchronize")


def pool(device: Any) -> SharedPool:
    """The shared-memory pool of ``device`` (SharedMemoryUnavailable where ``supported``
    is False)."""
    p = _POOLS.get(device)
    if p is None:
        if not supported(device):
            raise SharedMemoryUnavailable(f"{device} cannot share memory with CUDA (NVIDIA "
                                          f"OpenCL with {EXTENSION} and cuda-bindings needed)")
        p = _POOLS[device] = SharedPool(device)
    return p


def _after_fork_in_child() -> None:
    # the parent owns the allocations: the child forgets them without freeing
    for p in _POOLS.values():
        for a in p._free:
            a._pid = -1
    for ar in _ARENAS.values():
        for c in ar._chunks.values():
            c.backing._pid = -1
    _POOLS.clear()
    _ARENAS.clear()
    _SUPPORTED.clear()


def free_all() -> None:
    """Free every pooled allocation (at exit, before the OpenCL contexts go)."""
    for ar in list(_ARENAS.values()):
        ar.free_unused()
    for p in list(_POOLS.values()):
        p.free_held()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
atexit.register(free_all)
