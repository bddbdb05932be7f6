"""All-reduce bandwidth (issue #24): ``pmap``'s ``psum`` over 2 and 4 devices, 1 MiB to
256 MiB of float32 per device, beside ``torch.distributed.all_reduce`` (NCCL) on the same
GPUs. Bandwidth is algorithm bandwidth: bytes per device over the time of one call.

clnp is measured twice where its devices can share memory with CUDA: with arrays in
OpenCL's own memory (NCCL works on staging copies) and with arrays in memory CUDA sees
(``Device.set_cuda_memory``: NCCL works on them where they lie).

    python bench/bench_allreduce.py --ndev 2,4 --csv bench/results/allreduce-h200.csv
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

SIZES_MIB = (1, 4, 16, 64, 256)
sys.path[:0] = [os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                os.path.dirname(os.path.abspath(__file__))]


def clnp_rows(ndevs: list[int], reps: int) -> list[tuple]:
    import clnp
    from clnp_nn import parallel as P
    from clnp_nn.parallel import nccl
    from clnp._runtime import cuda_memory
    devs = list(P.local_devices())
    rows = []
    modes = ["opencl"] + (["cuda"] if all(cuda_memory.supported(d) for d in devs) else [])
    for n, mode in [(n, m) for n in ndevs for m in modes]:
        if n > len(devs):
            continue
        for d in devs[:n]:
            d.set_cuda_memory(mode == "cuda")
        f = P.pmap(lambda x: P.psum(x, "i"), "i", devices=devs[:n])
        for mib in SIZES_MIB:
            k = (mib << 20) // 4
            xs = P.device_put_sharded([np.full(k, i + 1, np.float32) for i in range(n)],
                                      devs[:n])
            out = f(xs)
            assert float(np.asarray(out.shards[0])[0]) == n * (n + 1) / 2
            for _ in range(2):
                f(xs)
            clnp.synchronize()
            t = time.perf_counter()
            for _ in range(reps):
                out = f(xs)
            clnp.synchronize()
            dt = (time.perf_counter() - t) / reps
            transport = "nccl" if nccl.in_use() else "host"
            rows.append((f"clnp psum ({transport}, {mode} memory)", n, mib, dt))
            print(f"RESULT clnp psum {transport} {mode} memory ndev={n} {mib} MiB "
                  f"{dt * 1e3:.3f} ms "
                  f"{(mib << 20) / dt / 1e9:.1f} GB/s", flush=True)
    for d in devs:
        d.set_cuda_memory(False)
    return rows


def _torch_worker(rank: int, world: int, reps: int, out: str) -> None:
    import torch
    import torch.distributed as dist
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(29600 + world)
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world)
    res = []
    for mib in SIZES_MIB:
        x = torch.ones((mib << 20) // 4, device="cuda")
        for _ in range(3):
            dist.all_reduce(x)
        torch.cuda.synchronize()
        dist.barrier()
        t = time.perf_counter()
        for _ in range(reps):
            dist.all_reduce(x)
        torch.cuda.synchronize()
        res.append((mib, (time.perf_counter() - t) / reps))
    if rank == 0:
        with open(out, "w") as f:
            f.write(repr(res))
    dist.destroy_process_group()


def torch_rows(ndevs: list[int], reps: int) -> list[tuple]:
    import torch
    import torch.multiprocessing as mp
    rows = []
    tmp = f"/tmp/allreduce-{os.getpid()}.txt"
    for n in ndevs:
        if n > torch.cuda.device_count():
            continue
        mp.spawn(_torch_worker, args=(n, reps, tmp), nprocs=n)
        for mib, dt in eval(open(tmp).read()):
            rows.append(("torch.distributed all_reduce (nccl)", n, mib, dt))
            print(f"RESULT torch all_reduce ndev={n} {mib} MiB {dt * 1e3:.3f} ms "
                  f"{(mib << 20) / dt / 1e9:.1f} GB/s", flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ndev", default="2,4")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--impl", default="clnp,torch", help="clnp, torch or both")
    ap.add_argument("--csv", default="")
    args = ap.parse_args()
    ndevs = [int(v) for v in args.ndev.split(",")]
    impls = args.impl.split(",")
    rows = clnp_rows(ndevs, args.reps) if "clnp" in impls else []
    if "torch" in impls:
        rows += torch_rows(ndevs, args.reps)
    if args.csv and rows:
        from bench_core import append_csv
        append_csv(args.csv, [{"impl": impl, "ndev": n, "MiB": mib, "ms": f"{dt * 1e3:.4f}",
                               "algbw_GBps": f"{(mib << 20) / dt / 1e9:.2f}"}
                              for impl, n, mib, dt in rows])

if __name__ == "__main__":
    main()
