"""Data-parallel training of an MLP with clnp_nn.parallel.pmap: per-device batches, gradients
averaged with pmean, the SGD step replicated, the replicas bit-identical.

    python examples/data_parallel_mlp.py                         # every device of the platform
    POCL_DEVICES="pthread pthread" python examples/data_parallel_mlp.py   # two PoCL devices
    CLNP_DEVICE=pocl:0 python examples/data_parallel_mlp.py --devices 1
    mpiexec -n 2 python examples/data_parallel_mlp.py            # two processes (MPI)

The global batch (``--batch``) is split over all devices of all processes; each process loads
only the rows of its own devices. The model is plain clnp code (``loss``), differentiated with
``clnp_grad.value_and_grad`` inside the mapped step; the step is traced and compiled once per
device on the first call.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import clnp  # noqa: E402
import clnp_grad as cg  # noqa: E402
from clnp_nn import parallel as P  # noqa: E402


def init_params(rng: np.random.Generator, sizes: list[int]) -> list[np.ndarray]:
    params = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        params += [(rng.standard_normal((a, b)) * np.sqrt(2.0 / a)).astype(np.float32),
                   np.zeros(b, np.float32)]
    return params


def loss(params: list, x: clnp.ndarray, y: clnp.ndarray) -> clnp.ndarray:
    """Mean softmax cross-entropy of an MLP with ReLU hidden layers."""
    h = x
    for i in range(0, len(params) - 2, 2):
        h = clnp.maximum(h @ params[i] + params[i + 1], 0.0)
    logits = h @ params[-2] + params[-1]
    m = clnp.max(logits, axis=1, keepdims=True)
    lse = clnp.log(clnp.sum(clnp.exp(logits - m), axis=1)) + m[:, 0]
    picked = clnp.take_along_axis(logits, clnp.reshape(y, (-1, 1)), axis=1)[:, 0]
    return clnp.mean(lse - picked)


def make_step(lr: float):
    def step(params: list, x: clnp.ndarray, y: clnp.ndarray):
        value, grads = cg.value_and_grad(loss)(params, x, y)
        grads = P.pmean(grads, "batch")              # the only communication of the step
        new = [p - lr * g for p, g in zip(params, grads)]
        return P.pmean(value, "batch"), new
    return step


def dataset(rng: np.random.Generator, n: int, d_in: int, classes: int):
    """A synthetic classification problem (a random teacher network labels Gaussian data)."""
    x = rng.standard_normal((n, d_in)).astype(np.float32)
    teacher = rng.standard_normal((d_in, classes)).astype(np.float32)
    return x, np.argmax(np.tanh(x @ teacher), axis=1).astype(np.int64)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--batch", type=int, default=256, help="global batch (all devices)")
    ap.add_argument("--sizes", default="32,64,64,8", help="layer widths")
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--devices", type=int, default=0, help="use the first N local devices")
    args = ap.parse_args()
    if "PMI_SIZE" in os.environ or "OMPI_COMM_WORLD_SIZE" in os.environ:   # under mpiexec
        # this process's devices: the default device's platform (one GPU per process where
        # a host runs several processes on GPUs)
        P.initialize()
    local = list(P.local_devices())
    if args.devices:
        local = local[:args.devices]
    glob = list(P.devices()) if P.process_count() > 1 else local
    n_global, n_local = len(glob), len(local)
    if args.batch % n_global:
        sys.exit(f"--batch {args.batch} must divide over {n_global} devices")
    per_dev = args.batch // n_global
    first = next(i for i, d in enumerate(glob) if d is local[0])   # my first global slot
    me = P.process_index()
    sizes = [int(s) for s in args.sizes.split(",")]
    rng = np.random.default_rng(0)                   # same data and init on every process
    x_all, y_all = dataset(rng, 16 * args.batch, sizes[0], sizes[-1])
    params = init_params(rng, sizes)

    params = P.device_put_replicated(params, local)  # ShardedArrays: one replica per device
    step = P.pmap(make_step(args.lr), "batch", devices=glob)
    check = P.pmap(lambda v: P.all_gather(v, "batch"), "batch", devices=glob)
    print(f"process {me}/{P.process_count()}: {n_local} local of {n_global} devices "
          f"({', '.join(d.key for d in local)}), {per_dev} examples per device", flush=True)
    order = np.random.default_rng(1)
    t0 = time.perf_counter()
    for it in range(args.steps):
        idx = order.choice(len(x_all), args.batch, replace=False)
        mine = idx[first * per_dev:(first + n_local) * per_dev]   # only my devices' rows
        xb = x_all[mine].reshape(n_local, per_dev, -1)
        yb = y_all[mine].reshape(n_local, per_dev)
        value, params = step(params, xb, yb)
        if it % 10 == 0 or it == args.steps - 1:
            losses = np.asarray(check(value))        # every replica's loss, on every device
            same = bool((losses == losses[0, 0]).all())
            print(f"step {it:3d}  loss {float(losses[0, 0]):.6f}  replicas bit-identical: "
                  f"{same}", flush=True)
            if not same:
                sys.exit("replicas diverged")
    clnp.synchronize()
    dt = time.perf_counter() - t0
    final = np.concatenate([np.asarray(p).reshape(n_local, -1) for p in params], axis=1)
    gathered = np.asarray(check(P.ShardedArray([clnp.asarray(r, device=d) for r, d in
                                                zip(final, local)])))
    identical = bool((gathered == gathered[0, 0]).all())
    print(f"process {me}: {args.steps} steps in {dt:.2f} s; final parameters identical on all "
          f"{n_global} replicas: {identical}", flush=True)
    if not identical:
        sys.exit(1)


if __name__ == "__main__":
    main()
