"""Can the GPU order OpenCL work before CUDA work without a host wait? (issue #24)

    python bench/probe_cuda_ordering.py        # an NVIDIA device with the cuda extra

1. External semaphores: the OpenCL device's semaphore export and import handle types
   (``CL_DEVICE_SEMAPHORE_EXPORT/IMPORT_HANDLE_TYPES_KHR``) and whether an exportable binary
   semaphore can be made (``clCreateSemaphoreWithPropertiesKHR`` with
   ``CL_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR = OPAQUE_FD``). CUDA imports external semaphores
   but makes none to export, so a pair needs OpenCL to export one.
2. A counter in memory CUDA sees: after an array's writes, OpenCL fills a 4-byte counter
   (the in-order queue orders it after them) and the consumer's stream waits for it
   (``cuStreamWaitValue32``, GEQ). Host time against ``clFinish``, with the queue idle and
   behind a 256 MiB kernel; and a check that a CUDA read after the wait sees the writes.
"""
from __future__ import annotations

import ctypes
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import clnp  # noqa: E402
from clnp._runtime import cuda_memory as cm  # noqa: E402
from clnp._runtime.launch import opencl_library_path  # noqa: E402
from bench_core import cuda_sharing_device  # noqa: E402


def semaphores(d: clnp.Device) -> None:
    lib = ctypes.CDLL(opencl_library_path())
    vp, u32, i32 = ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int32
    info = lib.clGetDeviceInfo
    info.argtypes = [vp, u32, ctypes.c_size_t, vp, ctypes.POINTER(ctypes.c_size_t)]
    for what, code in (("export", 0x204E), ("import", 0x204D)):
        buf, size = (ctypes.c_uint32 * 8)(), ctypes.c_size_t(0)
        err = info(d.cl_device.int_ptr, code, ctypes.sizeof(buf), buf, ctypes.byref(size))
        print(f"semaphore {what} handle types: err {err}, "
              f"{[hex(buf[i]) for i in range(size.value // 4)]}")
    gefa = lib.clGetExtensionFunctionAddressForPlatform
    gefa.restype, gefa.argtypes = vp, [vp, ctypes.c_char_p]
    addr = gefa(d.cl_device.platform.int_ptr, b"clCreateSemaphoreWithPropertiesKHR")
    if not addr:
        print("no clCreateSemaphoreWithPropertiesKHR")
        return
    create = ctypes.CFUNCTYPE(vp, vp, ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(i32))(addr)
    # CL_SEMAPHORE_TYPE_KHR = BINARY, CL_SEMAPHORE_EXPORT_HANDLE_TYPES_KHR = [OPAQUE_FD]
    props = (ctypes.c_uint64 * 6)(0x203D, 1, 0x203F, 0x2055, 0, 0)
    err = i32(0)
    create(d.context.int_ptr, props, ctypes.byref(err))
    print(f"exportable binary semaphore: OpenCL error {err.value}")


def counter(d: clnp.Device) -> None:
    import cupy
    import pyopencl as cl
    from cuda.bindings import driver as cu
    o = cm.cuda_ordinal(d)
    cupy.cuda.Device(o).use()
    q = d.queue
    d.set_cuda_memory(True)
    flag = clnp.zeros(64, dtype=clnp.uint32)
    fptr = cm.address_of(d, flag._buf)
    n = 1 << 26
    x = clnp.zeros(n, dtype=clnp.float32)
    mem = cupy.cuda.UnownedMemory(cm.address_of(d, x._buf), 4 * n, x)
    cx = cupy.ndarray((n,), cupy.float32, cupy.cuda.MemoryPointer(mem, 0))
    stream = cupy.cuda.Stream(non_blocking=True)
    count = [0]
    geq = cu.CUstreamWaitValue_flags.CU_STREAM_WAIT_VALUE_GEQ

    def cl_to_cuda() -> None:
        count[0] += 1
        cl.enqueue_fill_buffer(q, flag._buf, np.uint32(count[0]), 0, 4)
        q.flush()
        err, = cu.cuStreamWaitValue32(stream.ptr, fptr, count[0], geq)
        assert err == cu.CUresult.CUDA_SUCCESS, err

    bad = 0
    for it in range(20):
        x[...] = float(it + 1)
        cl_to_cuda()
        with stream:
            got = cx[n - 1:].copy()
        stream.synchronize()
        bad += float(got[0]) != it + 1
        q.finish()
    print(f"CUDA reads after the counter's wait: {bad} of 20 wrong")

    def host_us(f: object, reps: int = 500) -> float:
        f(); q.finish(); stream.synchronize()          # type: ignore[operator]
        t = time.perf_counter()
        for _ in range(reps):
            f()                                        # type: ignore[operator]
        dt = (time.perf_counter() - t) / reps
        q.finish(); stream.synchronize()
        return dt * 1e6

    def busy(f: object) -> float:
        y = x + 1.0
        t = time.perf_counter(); f(); dt = time.perf_counter() - t   # type: ignore[operator]
        q.finish(); stream.synchronize()
        del y
        return dt * 1e6
    print(f"idle queue: counter {host_us(cl_to_cuda):.1f} us of host, "
          f"clFinish {host_us(q.finish):.1f} us")
    print(f"behind a 256 MiB kernel: counter "
          f"{statistics.median([busy(cl_to_cuda) for _ in range(20)]):.1f} us of host, "
          f"clFinish {statistics.median([busy(q.finish) for _ in range(20)]):.1f} us")
    d.set_cuda_memory(False)


def main() -> None:
    d = cuda_sharing_device("probe_cuda_ordering")
    print(f"device: {d}; {sorted(e for e in d.extensions if 'semaphore' in e)}")
    semaphores(d)
    counter(d)


if __name__ == "__main__":
    main()
