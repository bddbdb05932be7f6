"""Soak (issue #13 item 3): many eager operations and jitted calls over a mix of shapes,
dtypes and op kinds, measuring at each checkpoint what could grow without bound: device
memory in use and pooled, the device's kernel and program caches, the FFT plan cache, the
jit trace caches, the eager op-body cache, live Python objects and the process's resident
memory; and that results are still NumPy's. After one warm-up round (every op on every shape: first kernels, plans and traces
are built) each measure must stay within ``BOUNDS`` of its value at the first checkpoint.

    python tools/soak.py --eager 1000000 --jit 10000       # the full soak (docs/robustness.md)

``tests/robust/test_soak.py`` runs it bounded (CI) and longer under ``-m slow``.
"""
from __future__ import annotations

import argparse
import gc
import resource
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import clnp

# Allowed growth of each measure from the first checkpoint (after warm-up) to any later one.
# Caches and device memory must not grow at all; the pool may keep up to 1 MiB more blocks
# (a data-dependent size, the boolean mask's result, can take a new block size), Python's
# allocator and the drivers' may move host memory by a few MiB without a leak behind it.
BOUNDS: dict[str, float] = {
    "in_use_B": 0, "pooled_B": 1 << 20, "kernels": 0, "programs": 0, "fft_plans": 0,
    "jit_traces": 0, "eager_bodies": 0, "py_objects": 2000, "rss_MiB": 16.0,
}

SHAPES = [(7,), (64,), (33, 5), (128, 17), (3, 4, 5)]


def _rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def _last_axis_matmul(x: Any) -> Any:
    return x @ clnp.swapaxes(x, -1, -2) if x.ndim >= 2 else clnp.vecdot(x, x)


def _setitem(x: Any) -> Any:
    y = x.copy()
    y[..., :1] = 0.0
    return y


# One user-level operation each (some launch several kernels): elementwise in three dtypes,
# reductions, scans, sorting, manipulation, basic/boolean/integer indexing and assignment,
# GEMM, FFT, random numbers and host transfers.
EAGER: list[tuple[str, Callable[[Any, Any, Any], Any]]] = [
    ("mul", lambda x, i, g: x * 1.5),
    ("add_self", lambda x, i, g: x + x),
    ("where", lambda x, i, g: clnp.where(x > 0, x, 0.0)),
    ("exp", lambda x, i, g: clnp.exp(x)),
    ("int_floordiv", lambda x, i, g: (i * 3) // 2),
    ("astype", lambda x, i, g: x.astype(clnp.int32)),
    ("sum_axis0", lambda x, i, g: clnp.sum(x, axis=0)),
    ("max", lambda x, i, g: clnp.max(x)),
    ("mean_last", lambda x, i, g: clnp.mean(x, axis=-1)),
    ("argmax", lambda x, i, g: clnp.argmax(x)),
    ("cumsum", lambda x, i, g: clnp.cumsum(x, axis=-1)),
    ("sort", lambda x, i, g: clnp.sort(x, axis=-1)),
    ("transpose_copy", lambda x, i, g: x.T + 0),
    ("concat", lambda x, i, g: clnp.concat([x, x], axis=0)),
    ("reversed_slice", lambda x, i, g: x[::-1] * 2),
    ("mask", lambda x, i, g: x[x > 0]),
    ("take", lambda x, i, g: clnp.take(x, clnp.abs(i) % x.shape[0], axis=0)),
    ("setitem", lambda x, i, g: _setitem(x)),
    ("matmul", lambda x, i, g: _last_axis_matmul(x)),
    ("fft", lambda x, i, g: clnp.fft.fft(x, axis=-1)),
    ("random", lambda x, i, g: g.standard_normal(x.shape, dtype=clnp.float32)),
    ("to_numpy", lambda x, i, g: x.to_numpy()),
]


@dataclass
class Soak:
    """The operands, jitted functions and measures of one soak run on one device."""

    device: Any
    data: list = field(default_factory=list)
    ints: list = field(default_factory=list)
    jitted: list = field(default_factory=list)

    def __post_init__(self) -> None:
        rng = np.random.default_rng(0)
        for s in SHAPES:
            self.data.append(clnp.asarray(rng.standard_normal(s).astype(np.float32),
                                          device=self.device))
            self.ints.append(clnp.asarray(rng.integers(-50, 50, s).astype(np.int32),
                                          device=self.device))
        self.gen = clnp.random.default_rng(0, device=self.device)

    def jit_functions(self) -> list:
        """Three jitted functions: a fused chain with a reduction, a GEMM with an epilogue,
        and a gradient (imported here: clnp alone soaks without clnp_grad)."""
        if not self.jitted:
            import clnp_grad as cg
            self.jitted = [
                cg.jit(lambda x: clnp.tanh(x) * 2 + clnp.sum(x, axis=0)),
                cg.jit(lambda x: clnp.maximum(_last_axis_matmul(x) + 1.0, 0.0)),
                cg.jit(cg.grad(lambda x: clnp.sum(clnp.sin(x) ** 2))),
            ]
        return self.jitted

    def eager(self, k: int) -> None:
        """The k-th eager operation: ops cycle fastest, then shapes."""
        _, fn = EAGER[k % len(EAGER)]
        s = (k // len(EAGER)) % len(SHAPES)
        fn(self.data[s], self.ints[s], self.gen)

    def jit_call(self, k: int) -> None:
        """The k-th jitted call: functions cycle fastest, then shapes."""
        fns = self.jit_functions()
        s = (k // len(fns)) % len(SHAPES)
        fns[k % len(fns)](self.data[s])

    def verify(self) -> None:
        """Results still NumPy's after the soak so far: a reduction, a sort, a product and,
        when jit ran, the fused chain (raises AssertionError naming the one that is not)."""
        for x in self.data:
            h = x.to_numpy()
            np.testing.assert_allclose(clnp.sum(x, axis=0).to_numpy(), h.sum(axis=0),
                                       rtol=1e-5, atol=1e-5, err_msg="sum")
            np.testing.assert_array_equal(clnp.sort(x, axis=-1).to_numpy(),
                                          np.sort(h, axis=-1), err_msg="sort")
            np.testing.assert_allclose(_last_axis_matmul(x).to_numpy(),
                                       h @ np.swapaxes(h, -1, -2) if h.ndim >= 2 else h @ h,
                                       rtol=1e-4, atol=1e-4, err_msg="matmul")
            if self.jitted:
                np.testing.assert_allclose(self.jitted[0](x).to_numpy(),
                                           np.tanh(h) * 2 + h.sum(axis=0), rtol=1e-5,
                                           atol=1e-5, err_msg="jit chain")

    def measure(self) -> dict[str, float]:
        """Every measure that must stay flat, after finishing queued work and collecting."""
        from clnp._core import eager as _eager
        from clnp._routines import fft as _eager_fft
        self.device.synchronize()
        gc.collect()
        m = self.device.memory_info()
        return {
            "in_use_B": m["in_use"], "pooled_B": m["pooled"],
            "kernels": len(self.device._kernels), "programs": len(self.device._programs),
            "fft_plans": len(_eager_fft._CACHE),
            "jit_traces": sum(len(f._cache) + len(f._fast) for f in self.jitted),
            "eager_bodies": len(_eager._BODIES), "py_objects": len(gc.get_objects()),
            "rss_MiB": round(_rss_mib(), 1),
        }


def run(n_eager: int, n_jit: int, checkpoints: int = 4, device: Any = None,
        report: Callable[[str], None] | None = None) -> list[tuple[str, float, dict]]:
    """Warm up, then run ``n_eager`` eager operations and ``n_jit`` jitted calls, measuring
    at ``checkpoints`` points of each phase.

    Returns
    -------
    list of (label, seconds, measures)
        The first row is the baseline taken after the warm-up round.
    """
    soak = Soak(device or clnp.default_device())
    warm = len(EAGER) * len(SHAPES)
    for k in range(warm):
        soak.eager(k)
    if n_jit:
        # twice per shape: a jitted function's second call records the launches later calls
        # replay (clnp_grad/_jit/replay.py), whose buffers it keeps from then on
        for k in range(2 * len(soak.jit_functions()) * len(SHAPES)):
            soak.jit_call(k)
    t0 = time.perf_counter()
    rows = [("warm", 0.0, soak.measure())]
    if report:
        report(_format(*rows[0]))
    for phase, n, step in (("eager", n_eager, soak.eager), ("jit", n_jit, soak.jit_call)):
        every = max(1, n // checkpoints)
        for k in range(n):
            step(k)
            if (k + 1) % every == 0 or k + 1 == n:
                soak.verify()
                rows.append((f"{phase} {k + 1}", time.perf_counter() - t0, soak.measure()))
                if report:
                    report(_format(*rows[-1]))
    return rows


def growth(rows: list[tuple[str, float, dict]]) -> dict[str, float]:
    """Largest growth of each measure over the baseline (the first row)."""
    base = rows[0][2]
    return {k: max(r[2][k] - base[k] for r in rows) for k in base}


def violations(rows: list[tuple[str, float, dict]]) -> list[str]:
    """The measures whose growth exceeds ``BOUNDS``, each with its figures."""
    return [f"{k} grew by {g} (bound {BOUNDS[k]}): "
            + ", ".join(f"{r[0]}={r[2][k]}" for r in rows)
            for k, g in growth(rows).items() if g > BOUNDS[k]]


def _format(label: str, secs: float, m: dict) -> str:
    return f"{label:>14} {secs:8.1f} s  " + "  ".join(f"{k} {v}" for k, v in m.items())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--eager", type=int, default=100_000)
    ap.add_argument("--jit", type=int, default=10_000)
    ap.add_argument("--checkpoints", type=int, default=5)
    a = ap.parse_args()
    print(f"device {clnp.default_device()}; {len(EAGER)} eager ops x {len(SHAPES)} shapes")
    rows = run(a.eager, a.jit, a.checkpoints, report=lambda s: print(s, flush=True))
    print("growth over the baseline:", growth(rows))
    bad = violations(rows)
    print("\n".join(bad) if bad else "flat: every measure within BOUNDS")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
