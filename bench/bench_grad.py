"""Eager reverse mode: value_and_grad of a 784-1024-1024-10 MLP, clnp_grad vs JAX vs PyTorch.

    python bench/bench_grad.py [--device SPEC] [--reps 9] [--batch 256]
                               [--csv bench/results/grad-<dev>.csv]

The loss is a relu MLP with a log-sum-exp stabilised softmax cross-entropy (float32, batch
256). Peers, in the same process, with the same weights and data: JAX's ``jax.value_and_grad``
*without* ``jit`` on the CPU (``JAX_PLATFORMS=cpu`` unless set), PyTorch CPU autograd
(``loss.backward()``) and, when CUDA is available, PyTorch on the GPU. Loss and gradients are
checked against clnp_grad's before anything is timed. Times are medians of ``--reps`` runs after
warm-up, with clnp's device queue (``device.synchronize``), JAX (``block_until_ready``) and CUDA
(``torch.cuda.synchronize``) drained inside the timed region. Ratios are peer time / clnp time
(>1 means clnp is faster). ``CLNP_DEVICE`` (or ``--device``) picks clnp's device.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Callable

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import clnp  # noqa: E402
import clnp_grad  # noqa: E402

from bench_core import timeit, write_csv  # noqa: E402  (the protocol of the other benches)

try:  # optional peers; never installed by this script
    import torch  # type: ignore
except Exception:  # pragma: no cover - depends on the machine
    torch = None
try:
    import jax  # type: ignore
    import jax.numpy as jnp  # type: ignore
except Exception:  # pragma: no cover
    jax = jnp = None

LAYERS = (784, 1024, 1024, 10)
NAMES = ("w1", "b1", "w2", "b2", "w3", "b3")


def make_problem(batch: int, seed: int = 0) -> tuple[dict, np.ndarray, np.ndarray]:
    """He-initialised float32 weights, inputs and one-hot labels (host arrays)."""
    rng = np.random.default_rng(seed)
    params = {}
    for i, (m, n) in enumerate(zip(LAYERS[:-1], LAYERS[1:]), start=1):
        params[f"w{i}"] = (rng.standard_normal((m, n)) * np.sqrt(2.0 / m)).astype(np.float32)
        params[f"b{i}"] = (rng.standard_normal(n) * 0.01).astype(np.float32)
    x = rng.standard_normal((batch, LAYERS[0])).astype(np.float32)
    y = np.eye(LAYERS[-1], dtype=np.float32)[rng.integers(0, LAYERS[-1], batch)]
    return params, x, y


def mlp_loss(ns: Any, p: dict, x: Any, y: Any) -> Any:
    """The loss written once against an array namespace (clnp, jax.numpy)."""
    h = ns.maximum(x @ p["w1"] + p["b1"], 0.0)
    h = ns.maximum(h @ p["w2"] + p["b2"], 0.0)
    z = h @ p["w3"] + p["b3"]
    m = ns.max(z, axis=1, keepdims=True)
    lse = m[:, 0] + ns.log(ns.sum(ns.exp(z - m), axis=1))
    return ns.mean(lse - ns.sum(z * y, axis=1))


def torch_loss(p: dict, x: Any, y: Any) -> Any:
    h = torch.relu(x @ p["w1"] + p["b1"])
    h = torch.relu(h @ p["w2"] + p["b2"])
    z = h @ p["w3"] + p["b3"]
    m = torch.amax(z, dim=1, keepdim=True)
    lse = m[:, 0] + torch.log(torch.sum(torch.exp(z - m), dim=1))
    return torch.mean(lse - torch.sum(z * y, dim=1))


def check(name: str, loss: float, grads: dict, ref_loss: float, ref: dict) -> None:
    """Loss and every gradient allclose to clnp's (float32 sums in different orders)."""
    np.testing.assert_allclose(loss, ref_loss, rtol=1e-4, err_msg=f"{name}: loss")
    for k in NAMES:
        g, r = np.asarray(grads[k], dtype=np.float64), np.asarray(ref[k], dtype=np.float64)
        scale = float(np.max(np.abs(r)))
        np.testing.assert_allclose(g, r, rtol=1e-3, atol=1e-4 * scale,
                                   err_msg=f"{name}: gradient of {k}")


def peers(params: dict, x: np.ndarray, y: np.ndarray
          ) -> dict[str, tuple[Callable[[], Any], Callable[[], tuple[float, dict]]]]:
    """name -> (timed call, call returning (loss, grads as NumPy)) for each available peer."""
    out = {}
    if jax is not None:
        pj = {k: jnp.asarray(v) for k, v in params.items()}
        xj, yj = jnp.asarray(x), jnp.asarray(y)
        vg = jax.value_and_grad(lambda p, a, b: mlp_loss(jnp, p, a, b))

        def jax_run() -> Any:
            return jax.block_until_ready(vg(pj, xj, yj))

        def jax_result() -> tuple[float, dict]:
            v, g = jax_run()
            return float(v), {k: np.asarray(a) for k, a in g.items()}
        out["jax (cpu, no jit)"] = (jax_run, jax_result)
    if torch is not None:
        devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
        for dev in devices:
            pt = {k: torch.tensor(v, device=dev, requires_grad=True) for k, v in params.items()}
            xt, yt = torch.tensor(x, device=dev), torch.tensor(y, device=dev)
            sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)

            def torch_run(pt: dict = pt, xt: Any = xt, yt: Any = yt, sync: Any = sync) -> Any:
                for t in pt.values():
                    t.grad = None
                loss = torch_loss(pt, xt, yt)
                loss.backward()
                sync()
                return loss

            def torch_result(pt: dict = pt, run: Any = torch_run) -> tuple[float, dict]:
                loss = run()
                return float(loss.detach()), {k: t.grad.cpu().numpy() for k, t in pt.items()}
            out[f"torch ({dev})"] = (torch_run, torch_result)
    return out


def run(device: clnp.Device, batch: int, reps: int) -> list[dict]:
    params, x, y = make_problem(batch)
    pd = {k: clnp.asarray(v, device=device) for k, v in params.items()}
    xd, yd = clnp.asarray(x, device=device), clnp.asarray(y, device=device)
    vg = clnp_grad.value_and_grad(lambda p, a, b: mlp_loss(clnp, p, a, b))

    def clnp_run() -> Any:
        res = vg(pd, xd, yd)
        block = getattr(res[0], "block_until_ready", None)
        if block is not None:
            block()
        else:
            device.synchronize()
        return res

    v, g = clnp_run()
    ref_loss, ref = float(v), {k: np.asarray(a) for k, a in g.items()}
    others = peers(params, x, y)
    for name, (_, result) in others.items():
        check(name, *result(), ref_loss, ref)
    nosync = (lambda: None)
    t_clnp = timeit(clnp_run, nosync, reps)
    rows = [{"workload": f"value_and_grad MLP {'-'.join(map(str, LAYERS))} batch {batch}",
             "impl": "clnp_grad", "device": str(device), "ms": t_clnp * 1e3,
             "peer_over_clnp": 1.0}]
    for name, (fn, _) in others.items():
        t = timeit(fn, nosync, reps)
        rows.append({"workload": rows[0]["workload"], "impl": name, "device": str(device),
                     "ms": t * 1e3, "peer_over_clnp": t / t_clnp})
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--device", default=None, help="clnp device spec (default: clnp's default)")
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--reps", type=int, default=9)
    p.add_argument("--csv", default=None)
    args = p.parse_args()
    device = clnp._runtime.device.select_device(args.device) if args.device else clnp.default_device()
    rows = run(device, args.batch, args.reps)
    print(f"clnp device: {device!r}")
    print(rows[0]["workload"] + " (float32; peer/clnp > 1 means clnp is faster)")
    print(f"{'implementation':22s} {'median ms':>10s} {'peer/clnp':>10s}")
    for r in rows:
        print(f"{r['impl']:22s} {r['ms']:10.2f} {r['peer_over_clnp']:10.2f}")
    if args.csv:
        write_csv(args.csv, rows)


if __name__ == "__main__":
    main()
