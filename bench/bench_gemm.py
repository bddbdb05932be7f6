"""GEMM throughput: clnp vs NumPy (OpenBLAS) vs PyTorch (CPU, and CUDA/cuBLAS when present).

    python bench/bench_gemm.py [--device SPEC] [--sizes 1024,2048] [--reps 7] [--csv PATH]

Square ``a @ b`` for float32 and float64, plus float16 (float32 sums) and float32 at TF32
precision on devices with tensor cores (compared with cuBLAS at the same precision:
``torch.backends.cuda.matmul.allow_tf32``). Every peer runs in the same process, so a busy
machine slows them alike; times are medians after warm-up, device queues drained inside the
timed region (``clnp_pipelined_gflops``: ten products back to back per wait, so that the
Python of each call overlaps the kernels before it). GFLOP/s count ``2 n^3`` (``8 n^3`` for
complex). The kernels used are the tuned ones when ``python -m clnp.tune`` has run on this
device (see docs/env_vars.md).
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import clnp  # noqa: E402
from clnp._routines.dot_general import tensor_cores  # noqa: E402
from bench_core import timeit, write_csv  # noqa: E402

try:
    import torch
except ImportError:                     # the peers are optional
    torch = None


def _torch_cuda() -> bool:
    return torch is not None and torch.cuda.is_available()


def run(device: clnp.Device, sizes: list[int], reps: int) -> list[dict]:
    cases = ["float32", "float64"]
    if tensor_cores(device):
        cases += ["float16", "tf32"]
    rows = []
    rng = np.random.default_rng(0)
    for case in cases:
        if case == "float64" and not device.has_fp64:
            continue
        dtype = np.dtype(np.float32 if case == "tf32" else case)
        prec = "tf32" if case == "tf32" else "highest"
        for n in sizes:
            a = rng.standard_normal((n, n)).astype(dtype)
            b = rng.standard_normal((n, n)).astype(dtype)
            flops = 2 * n ** 3
            x, y = clnp.asarray(a, device=device), clnp.asarray(b, device=device)

            def mm():
                with clnp.matmul_precision(prec):
                    return x @ y
            row = {"workload": f"matmul {case}", "n": n, "device": str(device),
                   "clnp_gflops": flops / timeit(mm, device.synchronize, reps) / 1e9}

            def mm10():
                for _ in range(10):
                    mm()
            # back to back, one wait: the Python of a call overlaps the previous kernels
            row["clnp_pipelined_gflops"] = 10 * flops / timeit(mm10, device.synchronize,
                                                               max(3, reps // 2)) / 1e9
            nothing = (lambda: None)
            row["numpy_gflops"] = (flops / timeit(lambda: a @ b, nothing, reps) / 1e9
                                   if dtype != np.float16 else float("nan"))
            row["torch_cpu_gflops"] = float("nan")
            row["torch_cuda_gflops"] = float("nan")
            if torch is not None and case in ("float32", "float64"):
                ta, tb = torch.from_numpy(a), torch.from_numpy(b)
                row["torch_cpu_gflops"] = flops / timeit(lambda: ta @ tb, nothing, reps) / 1e9
            if _torch_cuda():
                ca, cb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
                torch.backends.cuda.matmul.allow_tf32 = case == "tf32"
                row["torch_cuda_gflops"] = flops / timeit(lambda: ca @ cb,
                                                          torch.cuda.synchronize, reps) / 1e9
                torch.backends.cuda.matmul.allow_tf32 = False
            peers = [row[k] for k in ("numpy_gflops", "torch_cpu_gflops", "torch_cuda_gflops")
                     if not np.isnan(row[k])]
            row["clnp_over_best_peer"] = row["clnp_gflops"] / max(peers) if peers else \
                float("nan")
            rows.append(row)
            print(f"{row['workload']:18s} {n:6d} clnp {row['clnp_gflops']:10.1f} "
                  f"(pipelined {row['clnp_pipelined_gflops']:10.1f})  "
                  f"numpy {row['numpy_gflops']:10.1f}  torch-cpu {row['torch_cpu_gflops']:9.1f}"
                  f"  torch-cuda {row['torch_cuda_gflops']:10.1f}  (GFLOP/s) "
                  f"clnp/best {row['clnp_over_best_peer']:.2f}", flush=True)
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--device", default=None, help="clnp device spec (default: clnp's default)")
    p.add_argument("--sizes", default="1024,2048")
    p.add_argument("--reps", type=int, default=7)
    p.add_argument("--csv", default=None)
    args = p.parse_args()
    device = clnp._runtime.device.select_device(args.device) if args.device else clnp.default_device()
    print(f"device: {device!r}")
    rows = run(device, [int(s) for s in args.sizes.split(",")], args.reps)
    if args.csv:
        write_csv(args.csv, rows)


if __name__ == "__main__":
    main()
