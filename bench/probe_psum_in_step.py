"""What one ``psum`` costs inside a pmapped step (issue #24), beside a whole ``pmap`` call.

    python bench/probe_psum_in_step.py        # 2 NVIDIA GPUs sharing memory with CUDA

``bench/bench_allreduce.py`` times one ``pmap`` call per all-reduce, its dispatch included.
Here two pmapped functions chain 1 and 5 all-reduces, each followed by an elementwise
kernel (``x = psum(x) * 0.5``); the difference over 4 is the cost of one all-reduce and its
kernel inside a step: the host waits for the OpenCL queues before NCCL and for NCCL's
streams after, then enqueues the next OpenCL kernel. Arrays in memory CUDA sees (NCCL in
place), float32, 1 to 256 MiB per device, 20 calls each, one round.
"""
import os
import sys
import time

sys.path[:0] = [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]
import numpy as np  # noqa: E402
import clnp  # noqa: E402
from clnp_nn import parallel as P  # noqa: E402

devs = list(P.local_devices())[:2]
if len(devs) < 2:
    raise SystemExit("this probe needs two devices")
for d in devs:
    d.set_cuda_memory(True)


def chain(k: int):
    """A pmapped function of ``k`` all-reduces, each followed by an elementwise kernel."""
    def f(x):
        for _ in range(k):
            x = P.psum(x, "i") * 0.5
        return x
    return P.pmap(f, "i", devices=devs)


fs = {k: chain(k) for k in (1, 5)}
for mib in (1, 16, 64, 256):
    n = (mib << 20) // 4
    xs = P.device_put_sharded([np.full(n, 1.0, np.float32) for _ in range(2)], devs)
    res = {}
    for k, f in fs.items():
        for _ in range(3):
            out = f(xs)
        clnp.synchronize()
        reps = 20
        t = time.perf_counter()
        for _ in range(reps):
            out = f(xs)
        clnp.synchronize()
        res[k] = (time.perf_counter() - t) / reps
    marg = (res[5] - res[1]) / 4
    print(f"{mib} MiB: pmap call with 1 psum {res[1] * 1e3:.3f} ms, with 5 "
          f"{res[5] * 1e3:.3f} ms; one psum and its kernel {marg * 1e3:.3f} ms = "
          f"{(mib << 20) / marg / 1e9:.1f} GB/s", flush=True)
