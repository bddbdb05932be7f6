"""psum bandwidth across OpenCL devices (one process) and across MPI processes, beside peers.

    python bench/bench_parallel.py [--reps 5] [--sizes 1,4,16,64] [--mlp]
        [--csv bench/results/parallel-pocl-cpu.csv]
    mpiexec -n 2 python bench/bench_parallel.py --mpi
        [--csv bench/results/parallel-mpi-pocl-cpu.csv]

One process: the first two devices of the default device's platform (``CLNP_DEVICE=gpu``: two
GPUs); ``POCL_DEVICES`` defaults to "pthread pthread" (two PoCL CPU devices) when unset;
with ``CLNP_SHARED_CONTEXT=1`` the two share one OpenCL context and ``exchange_add`` (and
``pmap_psum``, which then always uses it) copies device to device with ``clEnqueueCopyBuffer``.
For each float32 size (MiB per device), the shards already on their devices:

- ``pmap_psum``: ``pmap(lambda x: psum(x, "i"))`` on a ShardedArray, the library as users call
  it (host-staged reduction in 4 MiB chunks, reads/sum/writes overlapped; from 32 MiB per
  shard, exchange-and-add, as chosen from these measurements);
- ``host_chunk_<c>``: the same reduction (``transport.reduce_collective``) with other chunk
  sizes, ``whole`` = no chunking: the choice of the default;
- ``exchange_add``: the alternative for two devices (what a ring does at N = 2): each device
  receives the other's shard (``clnp._core.transfer.copy_to_device``, chunked through the host) and
  adds on the device;
- peers: ``d2h_h2d_one``: one shard read to the host and written back (the transfers any
  host-staged scheme needs per device), ``numpy_add``: NumPy adding two host arrays of the size,
  and on two GPUs ``torch_nccl_all_reduce``: PyTorch's NCCL all-reduce of the same shards
  (``torch.cuda.nccl.all_reduce``, one process).

Where host staging goes through pinned memory (GPUs by default, any device with
``CLNP_PINNED=1``; ``clnp._runtime.staging``), every run also times ``pmap_psum``, ``exchange_add`` and
``d2h_h2d_one`` through pageable NumPy memory (suffix ``_pageable``, pinned staging turned off
for the call, as before it existed), and ``d2h_h2d_one_pinned_block``: one shard read into a
pinned block and written back from it (the floor any staged transfer can reach), and
``d2h_h2d_other_pinned_block``: the same for device 1's shard through device 0's block (the
collectives stage every device's chunks in one device's blocks: without its own context's
pinning a driver may fall back to its pageable path there); the MLP step
(``--mlp``) and the ``--mpi`` psum likewise get a ``_pageable`` row. The ``setting`` column
says which staging the unsuffixed rows used.

Bandwidth is the algorithm bandwidth (bytes of one shard / seconds), as NCCL reports ``algbw``.
Times are medians of ``--reps`` rounds after two warm-up runs, each run ending with every queue
finished; the methods take turns within each round, so load changes on the shared machine hit
them alike.
Results are checked against NumPy first.

``--mlp``: also the data-parallel MLP step of examples/data_parallel_mlp.py (784-1024-1024-10,
global batch 512) on one device and on two, in ms per step, beside the same step jitted on one
device without pmap (what a one-device user runs).

``--mpi`` (one device per process): ``pmap_psum`` across the two processes (each rank sends its
shard to the other with Isend/Irecv, both sum in rank order; 4 MiB chunks) and the same
unchunked, beside mpi4py's ``Allreduce`` of host arrays (MPICH) and the ``Sendrecv`` exchange
alone.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("POCL_DEVICES", "pthread pthread")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import clnp  # noqa: E402
from clnp._runtime import staging as _staging  # noqa: E402
from clnp._core.transfer import copy_to_device, start_read, upload  # noqa: E402
from clnp_nn import parallel as P  # noqa: E402
from clnp_nn.parallel import transport  # noqa: E402

from bench_core import write_csv  # noqa: E402

MIB = 1 << 20


def interleaved(fns: dict, sync, reps: int) -> dict:
    """Median seconds of each ``fn(); sync()``, the methods taking turns in every round (the
    machine is shared: a load change then hits every method alike)."""
    for fn in fns.values():
        fn()
        fn()
        sync()
    times: dict = {k: [] for k in fns}
    for _ in range(reps):
        for k, fn in fns.items():
            t = time.perf_counter()
            fn()
            sync()
            times[k].append(time.perf_counter() - t)
    return {k: statistics.median(v) for k, v in times.items()}


def pageable(fn):
    """``fn`` with pinned staging turned off for the call (``clnp._runtime.staging.FORCE``): the
    host-staged transfers then use pageable NumPy memory, as before pinned staging."""
    def run():
        saved, _staging.FORCE = _staging.FORCE, False
        try:
            return fn()
        finally:
            _staging.FORCE = saved
    return run


def _staging_note(devs: list) -> str:
    return "pinned staging" if _staging.enabled(devs[0]) else "pageable staging"


def _psum_fn():
    return P.pmap(lambda x: P.psum(x, "i"), "i")


def _kind(devs: list) -> str:
    return "GPU" if not devs[0].is_cpu else "PoCL"


def _nccl_peer(devs: list, a: np.ndarray) -> tuple[dict, object]:
    """PyTorch's NCCL all-reduce of the same shards on the first two CUDA devices (GPUs only,
    where PyTorch sees two), and its synchronisation; ({}, None) elsewhere."""
    if devs[0].is_cpu:
        return {}, None
    try:
        import torch
        from torch.cuda import nccl
    except Exception:  # noqa: BLE001 - an optional peer
        return {}, None
    if torch.cuda.device_count() < 2:
        return {}, None
    ts = [torch.from_numpy(a[i]).to(f"cuda:{i}") for i in range(2)]
    if not nccl.is_available(ts):
        return {}, None
    nccl.all_reduce(ts)
    assert np.allclose(ts[1].cpu().numpy(), a[0] + a[1])

    def sync() -> None:
        for i in range(2):
            torch.cuda.synchronize(i)
    # in place, so the values grow from call to call; the timing does not depend on them
    return {"torch_nccl_all_reduce": lambda: nccl.all_reduce(ts)}, sync


def single(sizes: list[int], reps: int) -> list[dict]:
    d0 = clnp.default_device()
    devs = [d for d in clnp.devices() if d.platform_name == d0.platform_name][:2]
    if len(devs) < 2:
        sys.exit("needs two devices of one platform (POCL_DEVICES='pthread pthread')")
    who = transport.Participants(devs, devs, [0, 1], [2])
    f = P.pmap(lambda x: P.psum(x, "i"), "i", devices=devs)
    sync = clnp.synchronize
    rows = []
    for mib in sizes:
        n = mib * MIB // 4
        rng = np.random.default_rng(0)
        a = rng.standard_normal((2, n)).astype(np.float32)
        sh = P.ShardedArray([upload(a[i], d) for i, d in enumerate(devs)])
        expect = a[0] + a[1]
        got = np.asarray(f(sh))
        assert np.array_equal(got[0], expect) and np.array_equal(got[1], expect)
        x0, x1 = sh.shards
        add = (clnp.add(x0, copy_to_device(x1, devs[0])), clnp.add(copy_to_device(x0, devs[1]), x1))
        assert np.array_equal(np.asarray(add[1]), expect)
        h0, h1 = a[0].copy(), a[1].copy()
        peer, peer_sync = _nccl_peer(devs, a)
        ab = {}
        if _staging.enabled(devs[0]):     # the same calls through pageable memory, side by side
            blk = _staging.acquire(devs[0], x0.nbytes)
            view = blk.view((n,), np.float32)
            ab = {
                "pmap_psum_pageable": pageable(lambda: f(sh)),
                "exchange_add_pageable": pageable(
                    lambda: (clnp.add(x0, copy_to_device(x1, devs[0])),
                             clnp.add(copy_to_device(x0, devs[1]), x1))),
                "d2h_h2d_one_pageable": pageable(
                    lambda: upload(start_read(x0).wait(), devs[0], owned=True)),
                # the floor of staging: DMA into a pinned block and back out of it
                "d2h_h2d_one_pinned_block": lambda: upload(start_read(x0, view).wait(),
                                                           devs[0], owned=True),
                # the same with device 1's shard through device 0's block: whether memory
                # pinned in one context is DMA speed for another (the collectives rely on it)
                "d2h_h2d_other_pinned_block": lambda: upload(start_read(x1, view).wait(),
                                                             devs[1], owned=True),
            }
        fns = {
            "pmap_psum": lambda: f(sh),
            **{f"host_chunk_{c}": (lambda c=c: transport.reduce_collective(
                "psum", sh.shards, who, (c * 1024 if c != "whole" else n * 4)))
               for c in (256, 1024, 4096, "whole")},
            "exchange_add": lambda: (clnp.add(x0, copy_to_device(x1, devs[0])),
                                     clnp.add(copy_to_device(x0, devs[1]), x1)),
            "d2h_h2d_one": lambda: upload(start_read(x0).wait(), devs[0], owned=True),
            "numpy_add": lambda: np.add(h0, h1),
            **ab,
            **peer,
        }
        res = interleaved(fns, (lambda: (sync(), peer_sync())) if peer_sync else sync, reps)
        if ab:
            _staging.release(blk)
        for k, t in res.items():
            rows.append({"setting": f"1 process, 2 {_kind(devs)} devices, "
                                    f"{_staging_note(devs)}" + (
                             ", one shared context" if devs[0].context == devs[1].context
                             else ""), "MiB": mib, "method": k,
                         "seconds": f"{t:.6f}", "GB_s": f"{mib * MIB / t / 1e9:.3f}",
                         "ratio_to_pmap_psum": f"{res['pmap_psum'] / t:.2f}"})
        print(f"{mib:4d} MiB  " + "  ".join(f"{k}={mib * MIB / t / 1e9:.2f}GB/s"
                                           for k, t in res.items()), flush=True)
    return rows


def multi(sizes: list[int], reps: int) -> list[dict]:
    from mpi4py import MPI
    P.initialize(local_device_ids=[clnp.default_device().index])
    comm, me = MPI.COMM_WORLD, P.process_index()
    f = P.pmap(lambda x: P.psum(x, "i"), "i")
    dev = P.local_devices()[0]
    rows = []

    def sync() -> None:
        clnp.synchronize()
        comm.Barrier()
    for mib in sizes:
        n = mib * MIB // 4
        a = np.random.default_rng(0).standard_normal((2, n)).astype(np.float32)
        sh = P.ShardedArray([upload(a[me], dev)])
        expect = a[0] + a[1]
        assert np.array_equal(np.asarray(f(sh))[0], expect)
        host = a[me].copy()
        out = np.empty_like(host)
        other = 1 - me
        def chunked(c: int) -> None:
            saved, transport.CHUNK_BYTES = transport.CHUNK_BYTES, c
            try:
                f(sh)
            finally:
                transport.CHUNK_BYTES = saved
        res = interleaved({
            "pmap_psum": lambda: f(sh),
            "pmap_psum_chunk_4M": lambda: chunked(4 * MIB),
            "pmap_psum_chunk_16M": lambda: chunked(16 * MIB),
            "pmap_psum_unchunked": lambda: chunked(1 << 40),
            **({"pmap_psum_pageable": pageable(lambda: f(sh))}
               if _staging.enabled(dev) else {}),
            "mpi_Allreduce": lambda: comm.Allreduce(host, out, op=MPI.SUM),
            "mpi_Sendrecv": lambda: comm.Sendrecv(host, dest=other, recvbuf=out, source=other),
        }, sync, reps)
        if me == 0:
            for k, t in res.items():
                rows.append({"setting": f"mpiexec -n 2, 1 {_kind([dev])} device each, "
                                        f"{_staging_note([dev])}",
                             "MiB": mib,
                             "method": k, "seconds": f"{t:.6f}",
                             "GB_s": f"{mib * MIB / t / 1e9:.3f}",
                             "ratio_to_pmap_psum": f"{res['pmap_psum'] / t:.2f}"})
            print(f"{mib:4d} MiB  " + "  ".join(f"{k}={mib * MIB / t / 1e9:.2f}GB/s"
                                               for k, t in res.items()), flush=True)
    return rows


def mlp(reps: int) -> list[dict]:
    """The data-parallel MLP step (784-1024-1024-10, global batch 512) of
    examples/data_parallel_mlp.py on one device and on two devices of this process."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(
        __file__))), "examples"))
    from data_parallel_mlp import init_params, loss, make_step
    d0 = clnp.default_device()
    devs = [d for d in clnp.devices() if d.platform_name == d0.platform_name][:2]
    rng = np.random.default_rng(0)
    params0 = init_params(rng, [784, 1024, 1024, 10])
    x = rng.standard_normal((512, 784)).astype(np.float32)
    y = rng.integers(0, 10, 512)
    rows, base = [], None
    # the reference a one-GPU user would run: the same step jitted, without pmap
    import clnp_grad as cg

    def plain(params, x, y):
        v, g = cg.value_and_grad(loss)(params, x, y)
        return v, [p - 0.01 * gg for p, gg in zip(params, g)]
    jstep = cg.jit(plain)
    ref = {"p": [clnp.asarray(a, device=d0) for a in params0]}
    xj, yj = clnp.asarray(x, device=d0), clnp.asarray(y, device=d0)

    def run_jit() -> None:
        _, ref["p"] = jstep(ref["p"], xj, yj)
    t_jit = interleaved({"": run_jit}, clnp.synchronize, reps)[""]
    rows.append({"setting": f"1 process, 1 {_kind(devs)} device, jit without pmap",
                 "MiB": "", "method": "mlp_step_784-1024-1024-10_b512_jit", "seconds":
                 f"{t_jit:.6f}", "GB_s": "", "ratio_to_pmap_psum": ""})
    print(f"MLP step, jit without pmap, one device: {t_jit * 1e3:.2f} ms "
          f"({512 / t_jit:.0f} examples/s)", flush=True)
    for k in (1, len(devs)):
        use = devs[:k]
        params = P.pmap(lambda p: p, in_axes=None, devices=use)(params0)
        step = P.pmap(make_step(0.01), "batch", devices=use)
        xs = [upload(a, d) for a, d in zip(np.split(x, k), use)]
        ys = [upload(a, d) for a, d in zip(np.split(y, k), use)]
        xb, yb = P.ShardedArray(xs), P.ShardedArray(ys)
        state = {"p": params}

        def run() -> None:
            _, state["p"] = step(state["p"], xb, yb)
        fns = {"": run}
        if _staging.enabled(devs[0]):
            fns["_pageable"] = pageable(run)
        res = interleaved(fns, clnp.synchronize, reps)
        base = base or res[""]
        for tag, t in res.items():
            rows.append({"setting": f"1 process, {k} {_kind(devs)} device(s), "
                                    f"{'pageable staging' if tag else _staging_note(devs)}",
                         "MiB": "", "method": "mlp_step_784-1024-1024-10_b512" + tag,
                         "seconds": f"{t:.6f}", "GB_s": "",
                         "ratio_to_pmap_psum": f"{base / t:.2f}"})
            print(f"MLP step{tag} on {k} device(s): {t * 1e3:.2f} ms ({512 / t:.0f} "
                  f"examples/s, {base / t:.2f}x one device's pmap, {t_jit / t:.2f}x its "
                  f"jit)", flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--sizes", default="1,4,16,64")
    ap.add_argument("--mpi", action="store_true")
    ap.add_argument("--mlp", action="store_true", help="also time the data-parallel MLP step")
    ap.add_argument("--csv", default=None)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = multi(sizes, args.reps) if args.mpi else single(sizes, args.reps)
    if args.mlp and not args.mpi:
        rows += mlp(args.reps)
    if args.csv and rows:
        write_csv(args.csv, rows)


if __name__ == "__main__":
    main()
