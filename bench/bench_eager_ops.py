"""Host time of one small eager op: clnp against PyTorch CPU and NumPy (issue #26: eager
overhead). Each case runs back to back, 5 rounds of ``--calls`` calls, the best round; the
device is drained after each round, outside the timing. The operands are tiny, so the
figures are the cost of the call itself: Python, dispatch and the enqueue.

    python bench/bench_eager_ops.py [--csv bench/results/eager-ops-<device>.csv]

Rows: ``a + b`` (8 floats), ``exp(a)``, ``sum(a)``, ``sum(M, axis=0)`` and
``max(M, axis=1)`` of a 64x16 float32 matrix, ``W @ a`` (8x8 times 8), and the gradient
of ``sum(exp(x) * 2)`` (``clnp_grad.grad`` against ``torch.autograd.grad``). On a GPU,
PyTorch CUDA is measured too (the issue's target for eager overhead: at most PyTorch eager
on the GPU).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any, Callable

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import clnp  # noqa: E402
import clnp_grad as cg  # noqa: E402
from bench_core import write_csv  # noqa: E402


def best_us(fn: Callable[[], Any], calls: int, drain: Callable[[], None]) -> float:
    fn()
    drain()
    rounds = []
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        rounds.append((time.perf_counter() - t) / calls * 1e6)
        drain()
    return min(rounds)


def _torch_cases(torch: Any, dev: str, cases: dict, a_np: np.ndarray, m_np: np.ndarray,
                 w_np: np.ndarray) -> None:
    ta, tm, tw = (torch.tensor(v, device=dev) for v in (a_np, m_np, w_np))
    tx = torch.tensor(a_np, requires_grad=True, device=dev)

    def tgrad() -> Any:
        return torch.autograd.grad((torch.exp(tx) * 2.0).sum(), tx)[0]
    for name, fn in (("a + b", lambda: ta + ta), ("exp(a)", lambda: torch.exp(ta)),
                     ("sum(a)", lambda: ta.sum()), ("sum(M, axis=0)", lambda: tm.sum(0)),
                     ("max(M, axis=1)", lambda: tm.max(1).values),
                     ("W @ a", lambda: tw @ ta), ("grad of sum(exp(x) * 2)", tgrad)):
        cases[name][f"torch {dev}"] = fn


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=5000)
    ap.add_argument("--csv", default=None)
    args = ap.parse_args()
    d = clnp.default_device()
    rng = np.random.default_rng(0)
    a_np = rng.random(8).astype(np.float32)
    m_np = rng.random((64, 16)).astype(np.float32)
    w_np = rng.random((8, 8)).astype(np.float32)
    a, b, m, w = (clnp.asarray(v) for v in (a_np, a_np, m_np, w_np))
    grad = cg.grad(lambda x: clnp.sum(clnp.exp(x) * 2.0))
    cases: dict[str, dict[str, Callable[[], Any]]] = {
        "a + b": {"clnp": lambda: a + b, "numpy": lambda: a_np + a_np},
        "exp(a)": {"clnp": lambda: clnp.exp(a), "numpy": lambda: np.exp(a_np)},
        "sum(a)": {"clnp": lambda: clnp.sum(a), "numpy": lambda: np.sum(a_np)},
        "sum(M, axis=0)": {"clnp": lambda: clnp.sum(m, axis=0),
                           "numpy": lambda: np.sum(m_np, axis=0)},
        "max(M, axis=1)": {"clnp": lambda: clnp.max(m, axis=1),
                           "numpy": lambda: np.max(m_np, axis=1)},
        "W @ a": {"clnp": lambda: w @ a, "numpy": lambda: w_np @ a_np},
        "grad of sum(exp(x) * 2)": {"clnp": lambda: grad(a)},
    }
    drains: dict[str, Callable[[], None]] = {"clnp": clnp.synchronize}
    try:
        import torch
        torch.set_num_threads(1)
        where = ["cpu"] + (["cuda"] if d.is_gpu and torch.cuda.is_available() else [])
        for dev in where:
            _torch_cases(torch, dev, cases, a_np, m_np, w_np)
            if dev == "cuda":
                drains["torch cuda"] = torch.cuda.synchronize
    except ImportError:
        pass
    rows = []
    print(f"device: {d}")
    for name, impls in cases.items():
        got = {}
        for impl, fn in impls.items():
            drain = drains.get(impl, lambda: None)
            got[impl] = best_us(fn, args.calls if "grad" not in name else args.calls // 5, drain)
        line = "  ".join(f"{k} {v:8.2f} us" for k, v in got.items())
        print(f"{name:26s} {line}")
        for impl, us in got.items():
            rows.append({"device": str(d), "case": name, "impl": impl, "us_per_call": f"{us:.3f}",
                         "vs_clnp": f"{us / got['clnp']:.3f}"})
    if args.csv:
        write_csv(args.csv, rows)


if __name__ == "__main__":
    main()
