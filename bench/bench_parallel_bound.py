"""The bound host-staged collectives put on 2-device data parallelism (issue #11's MLP step).

    python bench/bench_parallel_bound.py [--reps 60]        # CLNP_DEVICE=gpu on the GPU machine

On one device, times the jitted SGD step of bench_jit.py's MLP (784-1024-1024-10, float32,
``jit(value_and_grad)`` + update) at batch 256 and 512, and the transfer of one step's
gradients (all parameters, float32) device -> host and host -> device with clnp's own
transfers (``numpy.asarray``, ``clnp.asarray``). Where every collective goes through host
memory (OpenCL offers no peer-to-peer copies or NCCL), two devices each running batch 256
and exchanging the gradients reach at most ``t512 / max(t256, round trip)`` of one device's
throughput on batch 512 with perfect overlap, ``t512 / (t256 + round trip)`` without.
Times are medians after warm-up, synchronised inside each timed region.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Any, Callable

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

import clnp  # noqa: E402
import clnp_grad  # noqa: E402
import bench_jit  # noqa: E402


def median_ms(f: Callable[[], Any], reps: int) -> float:
    for _ in range(5):
        f()
    clnp.synchronize()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        clnp.synchronize()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e3


def step_ms(batch: int, reps: int) -> float:
    """Median time of the jitted SGD step at ``batch``."""
    ph, xh, yh = bench_jit.make_problem(batch)
    p = {k: clnp.asarray(v) for k, v in ph.items()}
    x, y = clnp.asarray(xh), clnp.asarray(yh)
    jstep = clnp_grad.jit(bench_jit.clnp_step)
    return median_ms(lambda: jstep(p, x, y), reps)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=60)
    a = ap.parse_args()
    step = {batch: step_ms(batch, a.reps) for batch in (256, 512)}
    n = sum(v.size for v in bench_jit.make_problem(1)[0].values())
    g, h = clnp.asarray(np.ones(n, np.float32)), np.ones(n, np.float32)
    d2h = median_ms(lambda: np.asarray(g), a.reps)
    h2d = median_ms(lambda: clnp.asarray(h), a.reps)
    rt = d2h + h2d
    print(f"device: {clnp.default_device()}; {n} parameters ({n * 4 / 1e6:.2f} MB float32)")
    print(f"jitted SGD step: batch 256 {step[256]:.3f} ms, batch 512 {step[512]:.3f} ms")
    print(f"gradients device->host {d2h:.3f} ms, host->device {h2d:.3f} ms")
    print(f"2-device throughput over 1 device, at most: {step[512] / max(step[256], rt):.2f} "
          f"(perfect overlap), {step[512] / (step[256] + rt):.2f} (none)")


if __name__ == "__main__":
    main()
