"""Weak scaling of a compute-bound data-parallel training step (issue #24): an MLP (default
4096-8192-8192-10, float32), a fixed batch per device, ``pmap`` of ``value_and_grad`` with
the gradients averaged by ``pmean`` and an SGD update, on 1, 2, 4... devices of one process,
or one device per process under ``mpiexec``. The peer is PyTorch DDP on the same model and
batch (``bench/bench_ddp.py``).

    python bench/bench_dp_scaling.py --ndev 1,2,4 --csv bench/results/dp-scaling-h200.csv
    mpiexec -n 4 python bench/bench_dp_scaling.py --csv bench/results/dp-scaling-h200.csv

Scaling is throughput (examples per second) against the 1-device run of the same
invocation; under ``mpiexec`` against ``--base-ms`` when given.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(_HERE), _HERE, os.path.join(os.path.dirname(_HERE), "examples")]
import clnp  # noqa: E402
import clnp_grad as cg  # noqa: E402
from clnp_nn import parallel as P  # noqa: E402

from bench_core import append_csv  # noqa: E402
from data_parallel_mlp import init_params, loss  # noqa: E402  (the example's model)


def step(params: list, x: clnp.ndarray, y: clnp.ndarray):
    value, grads = cg.value_and_grad(loss)(params, x, y)
    grads = P.pmean(grads, "batch")
    return P.pmean(value, "batch"), [p - 0.01 * g for p, g in zip(params, grads)]


def measure(sizes: list[int], per_dev: int, devs: list, reps: int) -> float:
    """Seconds per step on ``devs`` (this process's share of the participants)."""
    rng = np.random.default_rng(0)
    params = init_params(rng, sizes)
    n = len(devs)
    x = rng.standard_normal((n, per_dev, sizes[0])).astype(np.float32)
    y = rng.integers(0, sizes[-1], (n, per_dev)).astype(np.int64)
    xs = P.device_put_sharded([x[i] for i in range(n)], devs)
    ys = P.device_put_sharded([y[i] for i in range(n)], devs)
    ps = P.device_put_replicated(params, devs)
    f = P.pmap(step, "batch", devices=list(P.devices()) if P.process_count() > 1 else devs)
    for _ in range(3):
        v, ps = f(ps, xs, ys)
    np.asarray(v)
    clnp.synchronize()
    t = time.perf_counter()
    for _ in range(reps):
        v, ps = f(ps, xs, ys)
    np.asarray(v)
    clnp.synchronize()
    return (time.perf_counter() - t) / reps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="4096,8192,8192,10")
    ap.add_argument("--per-dev", type=int, default=4096)
    ap.add_argument("--ndev", default="1,2,4", help="device counts (one process)")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--base-ms", type=float, default=0.0,
                    help="the 1-device step (ms) to scale against under mpiexec")
    ap.add_argument("--csv", default="")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    nparam = sum(a * b + b for a, b in zip(sizes[:-1], sizes[1:]))
    rows = []
    from clnp_nn.parallel import nccl
    if "PMI_SIZE" in os.environ or "OMPI_COMM_WORLD_SIZE" in os.environ:
        P.initialize()
        n = P.device_count()
        dt = measure(sizes, args.per_dev, list(P.local_devices()), args.reps)
        if P.process_index() == 0:
            base = args.base_ms / 1e3 if args.base_ms else None
            rows.append(("clnp pmap", n, P.process_count(), dt, base,
                         "nccl" if nccl.in_use() else "host"))
    else:
        devs = [d for d in P.local_devices()]
        base = None
        for n in [int(k) for k in args.ndev.split(",")]:
            if n > len(devs):
                print(f"skip ndev={n}: {len(devs)} devices", flush=True)
                continue
            dt = measure(sizes, args.per_dev, devs[:n], args.reps)
            base = dt if n == 1 else base
            rows.append(("clnp pmap", n, 1, dt, base,
                         "nccl" if nccl.in_use() and n > 1 else "host" if n > 1 else "-"))
    for impl, n, procs, dt, base, tr in rows:
        scale = (n * base / dt) if base else float("nan")
        print(f"RESULT {impl} ndev={n} processes={procs} transport={tr} params={nparam / 1e6:.1f}M "
              f"step_ms={dt * 1e3:.2f} samples_per_s={args.per_dev * n / dt:.0f} "
              f"scaling={scale:.2f}x", flush=True)
        if args.csv:
            append_csv(args.csv, [{"impl": impl, "ndev": n, "processes": procs, "transport": tr,
                                   "sizes": args.sizes, "per_dev": args.per_dev,
                                   "step_ms": f"{dt * 1e3:.3f}",
                                   "samples_per_s": f"{args.per_dev * n / dt:.1f}",
                                   "scaling_vs_1": f"{scale:.3f}"}])

if __name__ == "__main__":
    main()
