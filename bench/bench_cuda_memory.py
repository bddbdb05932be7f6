"""What arrays in memory CUDA sees cost, and what DLPack with PyTorch/CuPy/JAX costs (#24).

    python bench/bench_cuda_memory.py [--csv bench/results/cuda-memory-<device>.csv]

On an NVIDIA device sharing memory with CUDA (``Device.set_cuda_memory``, the ``[cuda]``
extra), side by side in one process, OpenCL's own memory ("opencl") against memory CUDA
sees ("cuda"):

- ``alloc``: host microseconds to take and drop one buffer (``Device.alloc``), 2,000 times,
  at three sizes, once the pools are warm;
- ``new chunk``: milliseconds to create and free 4 MiB the first time (``clCreateBuffer``
  against a CUDA VMM allocation exported, mapped and imported into OpenCL);
- ``x + 1``: a 256 MiB float32 elementwise kernel on each memory, GB/s;
- ``MLP step``: bench_jit's jitted 784-1024-1024-10 SGD step, batch 256, peers in turns;
- ``dlpack``: microseconds per ``torch.from_dlpack(x)`` (the same pointer from memory CUDA
  sees, a copy from OpenCL's), ``clnp.from_dlpack(t)`` of PyTorch's tensor (a copy on the
  GPU) and of a tensor clnp exported (the same memory), ``cupy.from_dlpack`` and
  ``torch.from_dlpack`` of a CuPy array as the reference; each checks whether the pointers
  are equal;
- ``torch memory importable``: whether PyTorch's allocations (default allocator, then
  ``expandable_segments``) can be exported as the POSIX fd OpenCL imports.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from typing import Any, Callable

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import clnp  # noqa: E402
import clnp_grad  # noqa: E402
from clnp._runtime import cuda_memory  # noqa: E402
from bench_core import cuda_sharing_device, race_blocks, timeit_batched, write_csv  # noqa: E402

ROWS: list[dict] = []


def row(section: str, case: str, value: float, unit: str, note: str = "") -> None:
    ROWS.append({"section": section, "case": case, "value": f"{value:.6g}", "unit": unit,
                 "note": note})
    print(f"{section:28s} {case:58s} {value:12.4g} {unit:6s} {note}")


def per_call_us(fn: Callable[[], Any], calls: int) -> float:
    """Host microseconds per call of ``fn`` issued ``calls`` times back to back."""
    return timeit_batched(fn, lambda: None, calls) * 1e6


def bench_alloc(d: clnp.Device) -> None:
    for nbytes in (256, 64 << 10, 4 << 20):
        for mode in ("opencl", "cuda"):
            d.set_cuda_memory(mode == "cuda")
            keep = [d.alloc(nbytes) for _ in range(64)]           # a warm pool
            us = per_call_us(lambda: d.alloc(nbytes), 2000)
            row("alloc", f"{mode}: take and drop {nbytes} B", us, "us")
            us = per_call_us(lambda: clnp.empty(nbytes // 4, dtype=clnp.float32, device=d), 2000)
            row("alloc", f"{mode}: clnp.empty of {nbytes} B", us, "us")
            del keep
    d.set_cuda_memory(False)


def bench_new_chunk(d: clnp.Device) -> None:
    import pyopencl as cl
    n = 4 << 20
    t = []
    for _ in range(5):
        s = time.perf_counter()
        b = cl.Buffer(d.context, cl.mem_flags.READ_WRITE, n)
        cl.enqueue_fill_buffer(d.queue, b, np.uint8(0), 0, n)
        d.queue.finish()
        b.release()
        t.append(time.perf_counter() - s)
    row("new chunk", "opencl: clCreateBuffer 4 MiB, touch, release", statistics.median(t) * 1e3,
        "ms")
    t = []
    for _ in range(5):
        s = time.perf_counter()
        a = cuda_memory.SharedAllocation(d, n)
        cl.enqueue_fill_buffer(d.queue, a.buffer, np.uint8(0), 0, n)
        d.queue.finish()
        a.free()
        t.append(time.perf_counter() - s)
    row("new chunk", "cuda: cuMemCreate+export+map+import 4 MiB, touch, free",
        statistics.median(t) * 1e3, "ms")


def bench_bandwidth(d: clnp.Device) -> None:
    n = 1 << 26
    for mode in ("opencl", "cuda"):
        d.set_cuda_memory(mode == "cuda")
        x = clnp.ones(n, dtype=clnp.float32, device=d)
        y = x + 1
        d.synchronize()
        t = []
        for _ in range(20):
            s = time.perf_counter()
            y = x + 1
            d.synchronize()
            t.append(time.perf_counter() - s)
        sec = statistics.median(t)
        row("x + 1, 256 MiB float32", mode, 2 * 4 * n / sec / 1e9, "GB/s",
            f"{sec * 1e3:.3f} ms")
        del x, y
    d.set_cuda_memory(False)


def bench_mlp(d: clnp.Device, reps: int) -> None:
    from bench_jit import clnp_step, make_problem
    ph, xh, yh = make_problem(256)
    jstep = clnp_grad.jit(clnp_step)
    steps = {}
    state = {}
    for mode in ("opencl", "cuda"):
        d.set_cuda_memory(mode == "cuda")
        p = {k: clnp.asarray(v, device=d) for k, v in ph.items()}
        x, y = clnp.asarray(xh, device=d), clnp.asarray(yh, device=d)
        state[mode] = (p, x, y)

        def step(mode: str = mode) -> Any:
            d.set_cuda_memory(mode == "cuda")
            p, x, y = state[mode]
            loss, _ = jstep(p, x, y)
            return float(loss)
        steps[mode] = step
    got = race_blocks(steps, reps, 6)
    for mode, sec in got.items():
        row("MLP 784-1024-1024-10 b256 jit step", mode, sec * 1e3, "ms",
            f"/opencl={sec / got['opencl']:.3f}")
    d.set_cuda_memory(False)


def bench_dlpack(d: clnp.Device) -> None:
    import torch
    o = cuda_memory.cuda_ordinal(d)
    n = 1 << 20
    for mode in ("opencl", "cuda"):
        d.set_cuda_memory(mode == "cuda")
        x = clnp.ones(n, dtype=clnp.float32, device=d)
        same = torch.from_dlpack(x).data_ptr() == cuda_memory.address_of(d, x._buf)
        us = per_call_us(lambda: torch.from_dlpack(x), 500)
        row("dlpack", f"{mode}: torch.from_dlpack(clnp 4 MiB)", us, "us",
            "same pointer" if same else "a copy")
    d.set_cuda_memory(True)
    x = clnp.ones(n, dtype=clnp.float32, device=d)
    t = torch.from_dlpack(x)
    back = clnp.from_dlpack(t)
    row("dlpack", "clnp.from_dlpack(torch tensor clnp exported)",
        per_call_us(lambda: clnp.from_dlpack(t), 500), "us",
        "same memory" if back._buf is x._buf else "a copy")
    tt = torch.ones(n, device=f"cuda:{o}")
    y = clnp.from_dlpack(tt)
    row("dlpack", "clnp.from_dlpack(torch's own 4 MiB)", per_call_us(lambda: clnp.from_dlpack(tt),
                                                                     500), "us",
        "same pointer" if cuda_memory.address_of(d, y._buf) == tt.data_ptr() else "a copy")
    try:
        import cupy
        c = cupy.ones(n, dtype=cupy.float32)
        row("dlpack", "reference: torch.from_dlpack(cupy 4 MiB)",
            per_call_us(lambda: torch.from_dlpack(c), 500), "us",
            "same pointer" if torch.from_dlpack(c).data_ptr() == c.data.ptr else "a copy")
        cx = cupy.from_dlpack(x)
        row("dlpack", "cupy.from_dlpack(clnp 4 MiB)", per_call_us(lambda: cupy.from_dlpack(x), 500),
            "us", "same pointer" if cx.data.ptr == cuda_memory.address_of(d, x._buf) else "a copy")
    except ImportError:
        pass
    try:
        import jax
        if any(dv.platform == "gpu" for dv in jax.devices()):
            j = jax.dlpack.from_dlpack(x)
            ptr = j.unsafe_buffer_pointer()
            row("dlpack", "jax.dlpack.from_dlpack(clnp 4 MiB)",
                per_call_us(lambda: jax.dlpack.from_dlpack(x), 200), "us",
                "same pointer" if ptr == cuda_memory.address_of(d, x._buf) else "a copy")
    except Exception as e:   # noqa: BLE001 -- a peer's failure is a row, not the bench's end
        row("dlpack", "jax.dlpack.from_dlpack(clnp 4 MiB)", float("nan"), "us",
            f"failed: {type(e).__name__}: {str(e)[:120]}")
    d.set_cuda_memory(False)


_PROBE = r"""
import torch
from cuda.bindings import driver as cu
cu.cuInit(0)
t = torch.ones(1 << 20, device="cuda")
torch.cuda.synchronize()
err, h = cu.cuMemRetainAllocationHandle(t.data_ptr())
if err != cu.CUresult.CUDA_SUCCESS:
    print("no:", cu.cuGetErrorName(err)[1].decode(), "from cuMemRetainAllocationHandle")
else:
    fd_type = cu.CUmemAllocationHandleType.CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
    err, fd = cu.cuMemExportToShareableHandle(h, fd_type, 0)
    print("yes" if err == cu.CUresult.CUDA_SUCCESS else
          "no: " + cu.cuGetErrorName(err)[1].decode() + " from cuMemExportToShareableHandle")
"""


def bench_torch_importable() -> None:
    for conf in ("", "expandable_segments:True"):
        env = dict(os.environ, PYTORCH_CUDA_ALLOC_CONF=conf)
        res = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True,
                             text=True, timeout=120)
        out = (res.stdout.strip() or res.stderr.strip()[-200:]).replace(",", ";")
        row("torch memory importable", conf or "default allocator",
            1.0 if out.startswith("yes") else 0.0, "bool", out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--csv", default=None)
    ap.add_argument("--reps", type=int, default=60)
    a = ap.parse_args()
    d = cuda_sharing_device("bench_cuda_memory")
    print(f"device: {d}")
    bench_alloc(d)
    bench_new_chunk(d)
    bench_bandwidth(d)
    bench_mlp(d, a.reps)
    bench_dlpack(d)
    bench_torch_importable()
    if a.csv:
        write_csv(a.csv, ROWS)


if __name__ == "__main__":
    main()
