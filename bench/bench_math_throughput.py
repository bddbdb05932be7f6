"""Throughput of OpenCL float32 math builtins, alone and in issue #26's elementwise chain, on
clnp's default device: is the chain bound by memory or by its arithmetic?

    python bench/bench_math_throughput.py [--n 16777216] [--csv bench/results/math-throughput-<device>.csv]

Each case is a hand kernel ``y[i] = f(x[i])`` on float4 elements over ``--n`` floats (x
uniform in [-3, 3)), enqueued 20 times back to back per wait (the device's throughput, not a
wait's latency), median of 7. ``copy`` (``x + 1``) is the bandwidth reference: every case
moves the same bytes. Also the accuracy of ``tanh`` (the builtin, and one from ``expm1``)
against float64 NumPy, in ulp of the float32 result.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import clnp as xp  # noqa: E402
from clnp._runtime.opencl import cl  # noqa: E402

from bench_core import append_csv  # noqa: E402

CASES = {
    "copy": "v + 1.0f", "sin": "sin(v)", "cos": "cos(v)", "sincos": "sincos_sum(v)",
    "exp": "exp(v)", "expm1": "expm1(v)", "tanh": "tanh(v)", "tanh from expm1": "tanh_e(v)",
    "native_sin": "native_sin(v)", "native_exp": "native_exp(v)",
    "chain": "exp(sin(v) * 2.0f + cos(v)) / (1.0f + v * v) - 0.5f * tanh(v)",
}
HELPERS = """
float4 tanh_e(float4 x) { float4 a = fabs(x); float4 e = expm1(-2.0f * a);
  return copysign(select(-e / (e + 2.0f), (float4)(1.0f), a > 9.0f), x); }
float4 sincos_sum(float4 x) { float4 c; float4 s = sincos(x, &c); return s + c; }
"""


def ulp(got: np.ndarray, want: np.ndarray) -> float:
    """Largest error of ``got`` in units in the last place of the float32 ``want``."""
    spacing = np.spacing(np.abs(want.astype(np.float32))).astype(np.float64)
    return float(np.max(np.abs(got.astype(np.float64) - want) / spacing))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1 << 24)
    ap.add_argument("--csv", default=None)
    ap.add_argument("--label", default="")
    a = ap.parse_args(argv)
    n = a.n - a.n % 4
    dev = xp.default_device()
    q = dev.queue
    xh = np.random.default_rng(0).uniform(-3, 3, n).astype(np.float32)
    mf = cl.mem_flags
    bx = cl.Buffer(dev.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=xh)
    by = cl.Buffer(dev.context, mf.READ_WRITE, 4 * n)
    src = HELPERS + "\n".join(
        f"__kernel void k{j}(__global const float4 *x, __global float4 *y) "
        f"{{ size_t i = get_global_id(0); float4 v = x[i]; y[i] = {e}; }}"
        for j, e in enumerate(CASES.values()))
    prg = cl.Program(dev.context, src).build()
    rows, outs = [], {}
    for j, name in enumerate(CASES):
        k = getattr(prg, f"k{j}")
        k.set_args(bx, by)
        for _ in range(3):
            cl.enqueue_nd_range_kernel(q, k, (n // 4,), None)
        q.finish()
        ts = []
        for _ in range(7):
            t = time.perf_counter()
            for _ in range(20):
                cl.enqueue_nd_range_kernel(q, k, (n // 4,), None)
            q.finish()
            ts.append((time.perf_counter() - t) / 20)
        y = np.empty_like(xh)
        cl.enqueue_copy(q, y, by)
        outs[name] = y
        ms = statistics.median(ts) * 1e3
        rows.append({"label": a.label, "device": str(dev), "case": name, "ms": round(ms, 5),
                     "tb_per_s": round(8 * n / (ms * 1e-3) / 1e12, 3)})
    x64 = xh.astype(np.float64)
    for r in rows:
        r["ulp"] = (round(ulp(outs[r["case"]], np.tanh(x64)), 3) if "tanh" in r["case"]
                    else "")
        r["vs_copy"] = round(rows[0]["ms"] / r["ms"], 3)
        print(f"{r['case']:16s} {r['ms']:9.4f} ms {r['tb_per_s']:6.2f} TB/s  copy/this "
              f"{r['vs_copy']:.2f} {('ulp ' + str(r['ulp'])) if r['ulp'] != '' else ''}")
    if a.csv:
        append_csv(a.csv, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
