"""Soak: many eager operations and jitted calls over a mix of shapes; prints, at each
checkpoint, the device memory in use and pooled, the kernel and program caches, the jit
cache and the process's resident memory, so that growth shows (docs/robustness.md).

    python tools/soak.py --eager 1000000 --jit 10000
"""
from __future__ import annotations

import argparse
import gc
import resource
import time

import numpy as np

import clnp


def _rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def _row(label: str, dev, t0: float) -> str:
    gc.collect()
    m = dev.memory_info()
    return (f"{label:>12} {time.perf_counter() - t0:8.1f} s  in_use {m['in_use']:>9} B  "
            f"pooled {m['pooled']:>9} B  kernels {len(dev._kernels):4d}  "
            f"programs {len(dev._programs):4d}  rss {_rss_mib():7.1f} MiB")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--eager", type=int, default=100_000)
    ap.add_argument("--jit", type=int, default=10_000)
    ap.add_argument("--checkpoints", type=int, default=5)
    a = ap.parse_args()
    dev = clnp.default_device()
    rng = np.random.default_rng(0)
    shapes = [(7,), (64,), (33, 5), (128, 17), (3, 4, 5)]
    data = [clnp.asarray(rng.standard_normal(s).astype(np.float32)) for s in shapes]
    t0 = time.perf_counter()
    print(f"device {dev}\n{_row('start', dev, t0)}")
    step = max(1, a.eager // a.checkpoints)
    for i in range(a.eager):          # one op per iteration, cycling shapes and ops
        x = data[i % len(data)]
        k = i % 4
        y = x * 1.5 if k == 0 else x + x if k == 1 else clnp.sum(x, axis=0) if k == 2 \
            else clnp.maximum(x, 0.0)
        del y
        if (i + 1) % step == 0:
            dev.synchronize()
            print(_row(f"eager {i + 1}", dev, t0), flush=True)
    if a.jit:
        import clnp_grad as cg
        f = cg.jit(lambda x: clnp.tanh(x) * 2 + clnp.sum(x, axis=0))
        step = max(1, a.jit // a.checkpoints)
        for i in range(a.jit):
            f(data[i % len(data)])
            if (i + 1) % step == 0:
                dev.synchronize()
                print(_row(f"jit {i + 1}", dev, t0), flush=True)


if __name__ == "__main__":
    main()
