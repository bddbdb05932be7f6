"""Host time per kernel launch on clnp's default device, and where a jitted step's host time
goes (issue #26: steps of a few hundred small launches are bound by the host on the GPU).

    python bench/bench_launch_cost.py [--csv bench/results/launch-cost-<device>.csv]

Rows (microseconds of host time per launch, medians of 7 runs of 4,000 enqueues each, the
device drained outside the timed region):

- ``pyopencl enqueue``: ``pyopencl.enqueue_nd_range_kernel`` of a three-argument kernel whose
  arguments are set;
- ``Launch``: clnp's launch path (``clnp._runtime.launch.Launch``: on NVIDIA
  ``clEnqueueNDRangeKernel`` without an event);
- ``BoundKernel, 2 buffers``: the step path of a jitted function (two buffers set, then the
  launch);
- the character transformer's training step (bench/bench_transformer.py's model) as jit
  replays it: host time per call, the same with every enqueue replaced by nothing (clnp's
  Python alone), and the launches per call;
- that step and the digits CNN's (bench/bench_nn_train.py's) as a training loop sees them:
  the host's time per call (returning before the device finishes), the time per step with
  its loss read, and per step with ten steps per read. Where the three agree, the host's
  enqueues bound the step.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Any, Callable

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "examples"))

import clnp as xp  # noqa: E402
from clnp._runtime import launch as L  # noqa: E402
from clnp._runtime.opencl import cl  # noqa: E402

from bench_core import append_csv  # noqa: E402

N = 4000
SRC = ("__kernel void k(__global float *x, __global float *y, const int n) "
       "{ if (get_global_id(0) == 0) x[0] += 1.0f; }")


def per_launch(queue: Any, fn: Callable[[], None]) -> float:
    """Median host microseconds per launch of ``fn`` (``N`` launches)."""
    fn()
    queue.finish()
    ts = []
    for _ in range(7):
        t = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t) / N * 1e6)
        queue.finish()
    return statistics.median(ts)


def launch_rows(dev: Any) -> list[tuple[str, float]]:
    q = dev.queue
    prg = cl.Program(dev.context, SRC).build()
    a, b = (xp.zeros(1024, dtype=xp.float32) for _ in range(2))
    k = L.Kernel(prg, "k")
    k.set_args(a._buf, b._buf, np.int32(1))
    k._clnp_arg_dtypes = [None, None, np.dtype(np.int32)]
    fast = L.Launch(k, (256,), (256,))
    bound = L.bind(k, (256,), (256,), [a._buf, b._buf, np.int32(1)], [0, 1])

    def raw() -> None:
        for _ in range(N):
            cl.enqueue_nd_range_kernel(q, k, (256,), (256,))

    def launch() -> None:
        for _ in range(N):
            fast(q)

    def bound_call() -> None:
        bufs = [a._buf, b._buf]
        for _ in range(N):
            bound(q, bufs)
    return [("pyopencl enqueue", per_launch(q, raw)), ("Launch", per_launch(q, launch)),
            ("BoundKernel, 2 buffers", per_launch(q, bound_call))]


def step_rows(name: str, step: Callable[[], Any], dev: Any) -> list[tuple[str, float]]:
    """A jitted training step's host time per call (returning without waiting), its time
    with its loss read, and its time per step with ten steps per read (us, medians of 15)."""
    for _ in range(3):
        float(step())
    host, synced, piped = [], [], []
    for _ in range(15):
        dev.synchronize()
        t = time.perf_counter()
        loss = step()
        t1 = time.perf_counter()
        float(loss)
        host.append((t1 - t) * 1e6)
        synced.append((time.perf_counter() - t) * 1e6)
        dev.synchronize()
        t = time.perf_counter()
        for _ in range(10):
            loss = step()
        float(loss)
        piped.append((time.perf_counter() - t) / 10 * 1e6)
    return [(f"{name}: host us per call", statistics.median(host)),
            (f"{name}: us per step, loss read", statistics.median(synced)),
            (f"{name}: us per step, 10 steps per read", statistics.median(piped))]


def cnn_rows(dev: Any) -> list[tuple[str, float]]:
    """The digits CNN's jitted training step (bench/bench_nn_train.py's clnp peer)."""
    import clnp_grad as cg
    import bench_nn_train as bn
    import digits_cnn
    x, y = bn.batch_of(64)
    peer = bn.ClnpPeer(digits_cnn.make_model(cg.random.key(0)), x, y)
    return step_rows("digits CNN step", peer.step, dev)


def transformer_rows(dev: Any) -> list[tuple[str, float]]:
    """The transformer step's replay: host us per call, with enqueues stubbed, launches."""
    from clnp._core import capture as C
    import bench_transformer as bt
    seen: dict[int, tuple] = {}
    call = C.Replay.__call__

    def spy(self: Any, inputs: Any) -> Any:
        seen[id(self)] = (self, list(inputs))
        return call(self, inputs)
    C.Replay.__call__ = spy
    try:
        model, batch, _ = bt.problem(32, 64, 64, 4, 2)     # bench_transformer's defaults
        one = bt.clnp_training(model, batch, 4)
        for _ in range(4):
            float(one())
    finally:
        C.Replay.__call__ = call
    stepped = step_rows("transformer step", one, dev)
    rep, inputs = max(seen.values(), key=lambda t: len(t[0].steps))
    q = dev.queue

    def per_call() -> float:
        ts = []
        for _ in range(30):
            q.finish()
            t = time.perf_counter()
            call(rep, inputs)
            ts.append((time.perf_counter() - t) * 1e6)
        q.finish()
        return statistics.median(ts)
    whole = per_call()
    saved = L.Launch.__call__, cl.Kernel.__call__
    L.Launch.__call__ = lambda self, queue: None
    cl.Kernel.__call__ = lambda *a, **k: None
    try:
        python = per_call()
    finally:
        L.Launch.__call__, cl.Kernel.__call__ = saved
    return stepped + [("transformer step replay, host us per call", whole),
                      ("the same, enqueues stubbed (clnp's Python)", python),
                      ("transformer step replay, launches per call", float(rep.n_launches))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--csv", default=None)
    ap.add_argument("--label", default="")
    a = ap.parse_args(argv)
    dev = xp.default_device()
    rows = launch_rows(dev) + transformer_rows(dev) + cnn_rows(dev)
    for name, v in rows:
        print(f"{name:48s} {v:10.2f}")
    if a.csv:
        append_csv(a.csv, [{"label": a.label, "device": str(dev), "case": name,
                            "value": round(v, 3),
                            "unit": "launches" if "launches per" in name else
                            ("us/step" if "per step" in name else
                             "us/call" if "per call" in name or "stubbed" in name
                             else "us/launch")} for name, v in rows])
    return 0


if __name__ == "__main__":
    sys.exit(main())
