"""Whole-step kernels (``clnp_grad._jit.whole_step``) against the general path, per call, with
``jax.jit`` on the same steps: where one kernel in one work-group beats one kernel per fusion
group, which sets ``CPU_WORK_MAX`` / ``GPU_WORK_MAX``.

    python bench/bench_whole_step.py [--calls 500] [--csv bench/results/whole-step-<device>.csv]

Steps (float32, the SGD update included): logistic regression (``B x F`` batch; the row of
bench/xla_table.py is 64x16) and a two-layer tanh MLP (16 inputs, ``H`` hidden units, 4
outputs, squared error; batch ``B``). Each row: the step's work as the whole-step planner
counts it (elements computed, plus reduced and contracted elements), the per-call time with
the whole step forced on and forced off, the kernels each launches, and ``jax.jit``'s time
on the same device. Each call reads the same arguments; 7 rounds of ``--calls`` calls, the
three measured in turn in every round, medians; the device is drained after each round.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Callable

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import clnp  # noqa: E402
import clnp_grad as cg  # noqa: E402
from bench_core import per_call_rounds, write_csv  # noqa: E402
from clnp_grad._jit import whole_step  # noqa: E402


def logistic(ns: Any, grad: Callable, B: int, F: int) -> tuple[Callable, list[np.ndarray]]:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((B, F)).astype(np.float32)
    y = np.where(rng.standard_normal(B) > 0, 1.0, -1.0).astype(np.float32)

    def loss(w: Any, b: Any, X: Any, y: Any) -> Any:
        return ns.mean(ns.log1p(ns.exp(-y * (X @ w + b))))

    def step(w: Any, b: Any, X: Any, y: Any) -> tuple:
        gw, gb = grad(loss, argnums=(0, 1))(w, b, X, y)
        return w - 0.1 * gw, b - 0.1 * gb
    return step, [np.zeros(F, np.float32), np.zeros((), np.float32), X, y]


def mlp(ns: Any, grad: Callable, B: int, H: int) -> tuple[Callable, list[np.ndarray]]:
    rng = np.random.default_rng(0)
    ps = [rng.standard_normal(s).astype(np.float32) * 0.1
          for s in [(16, H), (H,), (H, 4), (4,)]]
    x = rng.standard_normal((B, 16)).astype(np.float32)
    t = np.eye(4, dtype=np.float32)[rng.integers(0, 4, B)]

    def step(w1: Any, b1: Any, w2: Any, b2: Any, x: Any, t: Any) -> tuple:
        def loss(p: tuple) -> Any:
            z = ns.tanh(x @ p[0] + p[1]) @ p[2] + p[3]
            return ns.mean(ns.sum((z - t) ** 2, axis=1))
        g = grad(loss)((w1, b1, w2, b2))
        return tuple(p - 0.1 * q for p, q in zip((w1, b1, w2, b2), g))
    return step, ps + [x, t]


CASES = [("logistic", logistic, (64, 16)), ("logistic", logistic, (256, 32)),
         ("logistic", logistic, (1024, 32)), ("logistic", logistic, (4096, 32)),
         ("mlp", mlp, (32, 32)), ("mlp", mlp, (128, 64)), ("mlp", mlp, (256, 128))]


def _clnp(make: Callable, dims: tuple, mode: bool) -> tuple[Callable, int, int]:
    """The jitted step with the whole step ``mode``, built; its call, kernels and work."""
    old = whole_step.WHOLE_STEP
    whole_step.WHOLE_STEP = mode
    try:
        step, hosts = make(clnp, cg.grad, *dims)
        args = [clnp.asarray(h) for h in hosts]
        f = cg.jit(step)
        for _ in range(3):       # build, record, replay
            f(*args)
        low = f.lower(*args)
        work = getattr(low.executable.steps[0], "work", 0)
        return (lambda: f(*args)), len(low.kernel_sources()), work
    finally:
        whole_step.WHOLE_STEP = old


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=500)
    ap.add_argument("--csv", default=None)
    a = ap.parse_args()
    dev = clnp.default_device()
    import jax
    import jax.numpy as jnp
    jdev = jax.devices("cpu")[0] if dev.is_cpu else jax.devices()[0]
    rows = []
    for name, make, dims in CASES:
        whole, n_whole, work = _clnp(make, dims, True)
        general, n_general, _ = _clnp(make, dims, False)
        jstep, hosts = make(jnp, jax.grad, *dims)
        jf = jax.jit(jstep)
        jargs = [jax.device_put(h, jdev) for h in hosts]

        def jcall() -> Any:
            return jf(*jargs)
        drain = lambda _: dev.synchronize()  # noqa: E731
        med = per_call_rounds([("whole", whole, drain), ("general", general, drain),
                               ("jax", jcall, jax.block_until_ready)], a.calls)
        row = {"device": str(dev), "step": f"{name} {dims[0]}x{dims[1]}", "work": work,
               "whole_us": round(med["whole"], 2), "whole_kernels": n_whole,
               "general_us": round(med["general"], 2), "general_kernels": n_general,
               "jax_us": round(med["jax"], 2),
               "picked": "whole" if work <= (whole_step.CPU_WORK_MAX if dev.is_cpu else
                                             whole_step.GPU_WORK_MAX) else "general"}
        rows.append(row)
        print(row, flush=True)
    tag = "pocl-cpu" if dev.is_cpu else "nvidia-" + ("h200" if "H200" in dev.name else "gpu")
    write_csv(a.csv or os.path.join(HERE, "results", f"whole-step-{tag}.csv"), rows)


if __name__ == "__main__":
    main()
