"""The peer of ``bench/bench_dp_scaling.py``: PyTorch DistributedDataParallel (NCCL, TF32
off) on the same MLP and per-device batch, one process per GPU (``torch.multiprocessing``).

    python bench/bench_ddp.py --ngpu 1,2,4 --csv bench/results/dp-scaling-h200.csv
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def run(rank: int, world: int, sizes: list[int], per_dev: int, reps: int, port: int,
        out: str) -> None:
    import torch
    import torch.distributed as dist
    import torch.nn as nn
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.cuda.set_device(rank)
    if world > 1:
        dist.init_process_group("nccl", rank=rank, world_size=world)
    layers: list = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    model = nn.Sequential(*layers[:-1]).cuda()
    if world > 1:
        model = nn.parallel.DistributedDataParallel(model, device_ids=[rank])
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(per_dev, sizes[0], device="cuda")
    y = torch.randint(0, sizes[-1], (per_dev,), device="cuda")
    lossf = nn.CrossEntropyLoss()

    def step() -> None:
        opt.zero_grad(set_to_none=True)
        lossf(model(x), y).backward()
        opt.step()
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    if world > 1:
        dist.barrier()
    t = time.perf_counter()
    for _ in range(reps):
        step()
    torch.cuda.synchronize()
    dt = (time.perf_counter() - t) / reps
    if rank == 0:
        with open(out, "w") as f:
            f.write(f"{dt}\n")
    if world > 1:
        dist.destroy_process_group()


def main() -> None:
    import torch.multiprocessing as mp

    from bench_core import append_csv   # here: the spawned workers import this module too
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="4096,8192,8192,10")
    ap.add_argument("--per-dev", type=int, default=4096)
    ap.add_argument("--ngpu", default="1,2,4")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--csv", default="")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    base = None
    tmp = f"/tmp/ddp-{os.getpid()}.txt"
    for k, n in enumerate(int(v) for v in args.ngpu.split(",")):
        mp.spawn(run, args=(n, sizes, args.per_dev, args.reps, 29533 + k, tmp), nprocs=n)
        dt = float(open(tmp).read())
        base = dt if n == 1 else base
        scale = n * base / dt if base else float("nan")
        print(f"RESULT torch DDP ngpu={n} step_ms={dt * 1e3:.2f} "
              f"samples_per_s={args.per_dev * n / dt:.0f} scaling={scale:.2f}x", flush=True)
        if args.csv:
            append_csv(args.csv, [{"impl": "torch DDP", "ndev": n, "processes": n,
                                   "transport": "nccl", "sizes": args.sizes,
                                   "per_dev": args.per_dev, "step_ms": f"{dt * 1e3:.3f}",
                                   "samples_per_s": f"{args.per_dev * n / dt:.1f}",
                                   "scaling_vs_1": f"{scale:.3f}"}])

if __name__ == "__main__":
    main()
