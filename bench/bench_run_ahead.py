"""What bounding the host's run-ahead costs and saves (issue #27; clnp/_runtime/run_ahead.py).

    python bench/bench_run_ahead.py [--device pocl:0] [--reps 5] [--bounds 0,256,1024]
                                    [--csv bench/results/run-ahead.csv]

Two measurements, each for every bound in ``--bounds`` (0: no bound, as before the change):

- ``interrupt``: the loop ``a = (a @ a) * 1e-3 + 1`` on a 512x512 float32 array runs for
  1.5 s, a SIGINT (Ctrl-C) arrives from a timer thread, and the time until the next result
  (``numpy.asarray(a)``) is the figure: the backlog the host had queued. ``launches`` is how
  many launches the loop had enqueued.
- throughput, ``seconds`` per iteration of three loops ended by one synchronisation: the same
  product loop (the device is the bottleneck: the bound waits), an eager elementwise loop on
  1,000 elements (the host is the bottleneck: only the markers' cost shows) and a jitted MLP
  SGD step (784-256-10, batch 64). Bounds alternate within each repetition, so the machine's
  load reaches them alike; figures are medians. ``vs_unbounded`` is the bounded time over the
  unbounded one (1.00: no cost).
"""
from __future__ import annotations

import argparse
import os
import signal
import statistics
import sys
import threading
import time
from typing import Callable

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import clnp  # noqa: E402
import clnp_grad as cg  # noqa: E402
from clnp._runtime import run_ahead  # noqa: E402
from bench_core import append_csv  # noqa: E402


def _interrupt_latency(device: clnp.Device, seconds: float) -> tuple[float, int]:
    """Seconds from a Ctrl-C after ``seconds`` of the product loop to its next result, and the
    launches enqueued before it."""
    a = clnp.asarray(np.full((512, 512), 0.5, np.float32), device=device)
    np.asarray((a @ a) * 1e-3 + 1)              # compiled and warm
    device.synchronize()
    timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
    iterations = 0
    timer.start()
    try:
        while True:
            a = (a @ a) * 1e-3 + 1
            iterations += 1
    except KeyboardInterrupt:
        t0 = time.perf_counter()
        np.asarray(a)
        waited = time.perf_counter() - t0
    timer.join()
    device.synchronize()
    return waited, 3 * iterations


def _loops(device: clnp.Device) -> dict[str, Callable[[], object]]:
    rng = np.random.default_rng(0)
    a0 = clnp.asarray(np.full((512, 512), 0.5, np.float32), device=device)
    b0 = clnp.asarray(rng.standard_normal(1000).astype(np.float32), device=device)

    def products():
        a = a0
        for _ in range(60):
            a = (a @ a) * 1e-3 + 1
        return a

    def elementwise():
        b = b0
        for _ in range(2000):
            b = b * 1.0001 + 0.5
        return b

    w1 = clnp.asarray(rng.standard_normal((784, 256)).astype(np.float32) * 0.05, device=device)
    w2 = clnp.asarray(rng.standard_normal((256, 10)).astype(np.float32) * 0.05, device=device)
    x = clnp.asarray(rng.standard_normal((64, 784)).astype(np.float32), device=device)
    y = clnp.asarray(rng.integers(0, 10, 64), device=device)

    def loss(params, x, y):
        h = clnp.maximum(x @ params[0], 0)
        z = h @ params[1]
        z = z - clnp.max(z, axis=1, keepdims=True)
        logp = z - clnp.log(clnp.sum(clnp.exp(z), axis=1, keepdims=True))
        return -clnp.mean(clnp.take_along_axis(logp, y[:, None], axis=1))

    @cg.jit
    def step(params, x, y):
        value, grads = cg.value_and_grad(loss)(params, x, y)
        return value, [p - 0.1 * g for p, g in zip(params, grads)]

    def mlp():
        params = [w1, w2]
        for _ in range(200):
            _, params = step(params, x, y)
        return params[0]

    return {"products_512": products, "elementwise_1000": elementwise, "jit_mlp_step": mlp}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default=None)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--bounds", default="0,256,1024")
    ap.add_argument("--seconds", type=float, default=1.5)
    ap.add_argument("--csv", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                  "results", "run-ahead.csv"))
    args = ap.parse_args()
    device = (clnp._runtime.device.select_device(args.device) if args.device
              else clnp.default_device())
    bounds = list(dict.fromkeys(int(b) for b in args.bounds.split(",")))   # each once
    rows = []
    for bound in bounds:
        run_ahead.set_limit(bound)
        waited, launches = _interrupt_latency(device, args.seconds)
        rows.append({"device": str(device), "name": device.name, "bound": bound,
                     "workload": "interrupt", "seconds": round(waited, 4),
                     "launches": launches, "vs_unbounded": ""})
        print(f"{device} bound {bound:>5}: result {waited:.3f} s after Ctrl-C "
              f"({launches} launches enqueued in {args.seconds} s)", flush=True)
    loops = _loops(device)
    times: dict[tuple[str, int], list[float]] = {}
    for fn in loops.values():                    # compiled, warm
        np.asarray(fn())
    for _ in range(args.reps):
        for name, fn in loops.items():
            for bound in bounds:
                run_ahead.set_limit(bound)
                device.synchronize()
                t0 = time.perf_counter()
                np.asarray(fn())
                times.setdefault((name, bound), []).append(time.perf_counter() - t0)
    run_ahead.set_limit(None)
    for name in loops:
        base = statistics.median(times[(name, bounds[0])])
        for bound in bounds:
            t = statistics.median(times[(name, bound)])
            rows.append({"device": str(device), "name": device.name, "bound": bound,
                         "workload": name, "seconds": round(t, 5), "launches": "",
                         "vs_unbounded": round(t / base, 3)})
            print(f"{device} bound {bound:>5}: {name:<17} {t:.4f} s  x{t / base:.3f}",
                  flush=True)
    append_csv(args.csv, rows)


if __name__ == "__main__":
    main()
