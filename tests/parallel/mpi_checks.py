"""Run under ``mpiexec -n 2`` by test_parallel_launch.py: the pmap checks across processes.

``python mpi_checks.py``: every collective against NumPy over the global devices, the
data-parallel value_and_grad step against one device on the combined batch (and replicas
bit-identical across processes), gradients through collectives. Prints ``rank R OK``.
``python mpi_checks.py local2`` (with ``POCL_DEVICES="pthread pthread"``): two devices per
process, every collective over the four. ``python mpi_checks.py dead``: rank 1 stops taking part; rank 0 must raise
CollectiveTimeoutError naming rank 1, and the job must end (MPI_Abort) long before rank 1
would.
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [_HERE, os.path.dirname(os.path.dirname(_HERE))]   # helpers; this checkout

import clnp  # noqa: E402
import clnp_grad as cg  # noqa: E402
from clnp_nn import parallel as P  # noqa: E402
from clnp_nn.parallel import nccl  # noqa: E402   (which path the collectives took)

import _parallel_oracle as _oracle  # noqa: E402
import _parallel_mlp as mlp  # noqa: E402


def two_local_devices() -> None:
    """Two processes with two devices each: every collective over the four devices."""
    P.initialize(timeout=120.0)
    me, n, nl = P.process_index(), P.device_count(), P.local_device_count()
    assert (n, nl) == (4, 2), (n, nl)
    rng = np.random.default_rng(3)
    for name, f, ref in _oracle.cases(n):
        a = rng.standard_normal((n, n, 2 * n)).astype(np.float32)
        out = np.asarray(P.pmap(f, "i")(a[me * nl:(me + 1) * nl]))
        expect = np.stack([np.asarray(o) for o in ref(list(a))])[me * nl:(me + 1) * nl]
        np.testing.assert_allclose(out, expect, rtol=1e-5, atol=1e-5, err_msg=name)
    print(f"rank {me} OK (collectives through {'NCCL' if nccl.in_use() else 'MPI'})",
          flush=True)


def main(mode: str) -> None:
    if mode == "local2":
        return two_local_devices()
    P.initialize(local_device_ids=[clnp.default_device().index], timeout=120.0)
    if mode == "dead":   # both ranks are up (a slow start must not count): now a short limit
        P.initialize(local_device_ids=[clnp.default_device().index], timeout=5.0)
    me, nproc = P.process_index(), P.process_count()
    n = P.device_count()
    assert nproc == 2 and n == 2 and len(P.local_devices()) == 1, (nproc, n)
    assert isinstance(P.devices()[1 - me], P.RemoteDevice)
    if mode == "dead":
        if me == 1:
            time.sleep(60)
            return
        # uncaught: the traceback names rank 1, then MPI_Abort ends the job
        P.pmap(lambda v: P.psum(v, "i"), "i")(np.ones((1, 4), np.float32))
        raise AssertionError("no timeout")
    # the deadline-bound agreement and broadcast (NCCL's set-up uses them)
    from clnp_nn.parallel import mpi
    assert mpi.broadcast_object({"rank": me}, 1, "check") == {"rank": 1}
    assert mpi.all_agree(True, "check") and not mpi.all_agree(me == 0, "check")
    assert mpi.all_gather_object(("rank", me), "check") == [("rank", 0), ("rank", 1)]
    rng = np.random.default_rng(7)                  # the same data on every rank
    for name, f, ref in _oracle.cases(n):
        a = rng.standard_normal((n, n, 2 * n)).astype(np.float32)
        out = P.pmap(f, "i")(a[me:me + 1])
        expect = np.asarray(ref(list(a))[me])
        np.testing.assert_allclose(np.asarray(out)[0], expect, rtol=1e-6, atol=1e-6,
                                   err_msg=name)
    # several chunks (the last one short) of the overlapped reduction
    from clnp_nn.parallel import transport
    transport.CHUNK_BYTES, saved = 4096, transport.CHUNK_BYTES
    a = rng.standard_normal((n, 10_001)).astype(np.float32)
    out = P.pmap(lambda v: (P.psum(v, "i"), P.pmax(v, "i")), "i")(a[me:me + 1])
    np.testing.assert_allclose(np.asarray(out[0])[0], a.sum(0), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(np.asarray(out[1])[0], a.max(0))
    transport.CHUNK_BYTES = saved
    # data-parallel step == one device on the combined batch; replicas bit-identical
    params = mlp.init(rng, (6, 8, 3))
    x = rng.standard_normal((2 * 4, 6)).astype(np.float32)
    y = rng.integers(0, 3, 2 * 4)
    step = P.pmap(mlp.parallel_step, "batch", in_axes=(None, 0, 0))
    dev = P.local_devices()[0]
    dparams = [clnp.asarray(p, device=dev) for p in params]
    loss, new = step(dparams, x.reshape(2, 4, 6)[me:me + 1], y.reshape(2, 4)[me:me + 1])
    ref_loss, ref_new = mlp.step(dparams, clnp.asarray(x, device=dev), clnp.asarray(y, device=dev))
    np.testing.assert_allclose(np.asarray(loss)[0], float(ref_loss), rtol=1e-5)
    mine = np.concatenate([np.asarray(p)[0].ravel() for p in new])
    np.testing.assert_allclose(mine, np.concatenate([np.asarray(r).ravel() for r in ref_new]),
                               rtol=1e-5, atol=1e-6)
    both = P.pmap(lambda v: P.all_gather(v, "i"), "i")(mine[None])
    both = np.asarray(both)[0]
    assert np.array_equal(both[0], both[1]), "replicas differ across processes"
    # gradients through collectives
    w = rng.standard_normal((n, 3)).astype(np.float32)
    xx = rng.standard_normal((n, 3)).astype(np.float32)
    g = P.pmap(cg.grad(lambda w, x: clnp.sum(P.psum(w * x, "i") ** 2)
                       + clnp.sum(P.ppermute(w, "i", [(0, 1), (1, 0)]) * x)), "i")(
        w[me:me + 1], xx[me:me + 1])
    expect = 2 * n * (w * xx).sum(0) * xx + xx[::-1]
    np.testing.assert_allclose(np.asarray(g)[0], expect[me], rtol=1e-5, atol=1e-5)
    # pmap under grad and jit, and out_axes, across processes. Every process runs the same
    # program on its shards (SPMD): the broadcast w is one copy per process, and its
    # cotangent is summed over this process's devices (as JAX's multi-process pmap), while
    # psum's transpose (psum) brings every process's cotangents in: d(sum_p loss_p)/d w_me
    w = rng.standard_normal(3).astype(np.float32)
    xs = rng.standard_normal((n, 3)).astype(np.float32)
    pf = P.pmap(lambda w, x: P.psum(clnp.sin(x * w), "i") * x, "i", in_axes=(None, 0))
    wl = clnp.asarray(w, device=dev)
    gw = cg.grad(lambda w: clnp.sum(pf(w, xs[me:me + 1])))(wl)
    np.testing.assert_allclose(np.asarray(gw), xs.sum(0) * xs[me] * np.cos(xs[me] * w),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(cg.jit(pf)(wl, xs[me:me + 1])),
                               np.asarray(pf(wl, xs[me:me + 1])), rtol=1e-6)
    y = P.pmap(lambda x: clnp.outer(x, P.psum(x, "i")), "i", out_axes=1)(xs[me:me + 1])
    assert y.shape == (3, 1, 3) and y.shard_axis == 1
    np.testing.assert_allclose(np.asarray(y)[:, 0], np.outer(xs[me], xs.sum(0)), rtol=1e-5)
    print(f"rank {me} OK (collectives through {'NCCL' if nccl.in_use() else 'MPI'})",
          flush=True)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "checks")
