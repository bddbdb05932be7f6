"""Carrying out one collective for ``pmap``: shards from the local devices to the host, across
processes (MPI), combined, and back to the devices.

clnp gives every device its own OpenCL context, so shards of different devices meet in host
memory. The reads of all local shards are enqueued before any is waited for (the devices copy
out together); ``psum``/``pmax``/``pmin`` then combine chunk by chunk, each chunk's result
written back to every device without waiting while later chunks are still being read, so the
device-to-host copies, the host reduction and the host-to-device copies overlap. The other
collectives move whole shards and apply their stacked meaning
(``clnp_grad._collectives.STACKED``) with NumPy. Across processes each rank sends its local
shards to every other (``mpi.exchange``) and every rank combines the same global list in the
same order, so every replica gets bit-identical results.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from clnp._array import Array
from clnp._runtime import Device
from clnp._transfer import start_read, upload, write_into
from clnp_grad._collectives import STACKED

from . import mpi

CHUNK_BYTES = 4 << 20      # granularity of the overlapped reduction (docs/parallel.md)
_REDUCE = {"psum": np.add, "pmax": np.maximum, "pmin": np.minimum}


class Participants:
    """The devices of one pmap: every participant (global order), which are local here and
    the global index of each local one."""

    def __init__(self, global_devices: Sequence[Any], local: Sequence[Device],
                 local_ids: Sequence[int], counts: Sequence[int]):
        self.global_devices = tuple(global_devices)
        self.local = tuple(local)
        self.local_ids = tuple(local_ids)
        self.counts = tuple(counts)      # participants per process, in process order

    @property
    def size(self) -> int:
        return len(self.global_devices)

    @property
    def multiprocess(self) -> bool:
        return len(self.counts) > 1


def _reads(shards: Sequence[Array], lo: int, hi: int) -> list:
    return [start_read(s.reshape(-1)[lo:hi] if (lo, hi) != (0, s.size) else s)
            for s in shards]


def reduce_collective(name: str, shards: Sequence[Array], who: Participants,
                      chunk_bytes: int = CHUNK_BYTES) -> list[Array]:
    """``psum``/``pmax``/``pmin`` of the local shards (and, across processes, the others')."""
    op = _REDUCE[name]
    x0 = shards[0]
    shape, dtype, n = tuple(x0.shape), x0.dtype, x0.size
    if who.multiprocess:          # whole shards cross processes; chunking is local only
        rows = np.empty((who.size, n), dtype)       # every participant's shard, global order
        starts = np.cumsum((0,) + who.counts)
        me = mpi.process_index()
        mine = rows[starts[me]:starts[me + 1]]
        for r in [start_read(s, mine[k]) for k, s in enumerate(shards)]:
            r.wait()
        mpi.exchange(mine, [(c, n) for c in who.counts], name,
                     out=[rows[starts[p]:starts[p + 1]] for p in range(len(who.counts))])
        acc = rows[0].copy()
        for row in rows[1:]:
            op(acc, row, out=acc)
        acc = acc.reshape(shape)
        return [upload(acc, d, owned=True) for d in who.local]
    outs = [Array.empty(shape, dtype, d) for d in who.local]
    flat_outs = [o.reshape(-1) for o in outs]
    step = max(chunk_bytes // max(dtype.itemsize, 1), 1)
    bounds = [(lo, min(lo + step, n)) for lo in range(0, n, step)] or [(0, 0)]
    pending = [_reads(shards, lo, hi) for lo, hi in bounds]   # every read enqueued first
    for (lo, hi), reads in zip(bounds, pending):
        r = reads[0].wait().copy()
        for q in reads[1:]:
            op(r, q.wait(), out=r)
        for fo in flat_outs:
            write_into(fo, lo, r)
    return outs


def collective(name: str, params: dict, shards: Sequence[Array], who: Participants
               ) -> list[Array]:
    """Result shards (one per local device) of collective ``name`` over the participants."""
    if name in _REDUCE:
        return reduce_collective(name, shards, who)
    reads = _reads(shards, 0, shards[0].size)
    local = np.stack([r.wait() for r in reads])
    if who.multiprocess:
        parts = mpi.exchange(local, [(c,) + local.shape[1:] for c in who.counts], name)
        local = np.concatenate(parts, axis=0)
    p = {k: v for k, v in params.items() if k != "axis_name"}
    out = STACKED[name](np, local, **p)
    return [upload(np.ascontiguousarray(out[g]), d, owned=True)
            for g, d in zip(who.local_ids, who.local)]


def axis_index_values(who: Participants) -> list[Array]:
    """Each local device's index along the mapped axis, as an int32 0-d array there."""
    return [upload(np.asarray(g, np.int32), d) for g, d in zip(who.local_ids, who.local)]


__all__ = ["Participants", "collective", "reduce_collective", "axis_index_values",
           "CHUNK_BYTES"]
