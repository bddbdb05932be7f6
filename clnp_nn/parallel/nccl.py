"""``pmap``'s collectives through NCCL, on NVIDIA devices whose memory CUDA can see.

Where every participant of a ``pmap`` is an NVIDIA device that shares memory with CUDA
(:mod:`clnp._runtime.cuda_memory`) and NCCL is installed (CuPy's ``cupy.cuda.nccl``, the
``[cuda]`` extra), ``psum``/``pmax``/``pmin`` (and so ``pmean``), ``all_gather``,
``psum_scatter``, ``ppermute`` and ``all_to_all`` run in NCCL, the library DDP and JAX use,
over NVLink where the GPUs have it, instead of staging through host memory
(:mod:`clnp_nn.parallel.transport`, the fallback everywhere else).

One collective, per local device: the operand is copied (device to device, on the OpenCL
queue) into a pooled buffer of shared memory; once those copies are complete (the host waits
for their events), the devices' NCCL calls are issued as one group on a CUDA stream per
device; once NCCL is done (the host waits for the streams), each result is copied from shared
memory into a fresh array on the OpenCL queue. The copies move data at the device's memory
bandwidth (0.1 ms for 400 MB on an H200), next to the minutes of a training step they serve.

Across processes (``mpiexec``, one GPU or more per process), MPI bootstraps NCCL: rank 0 makes
the unique id, MPI broadcasts it, and every process joins one communicator with a rank per
device (its global position in ``pmap``'s device list); every process must agree to use NCCL
(an MPI all-reduce of each one's answer decides), so a process without it makes every process
take the MPI path. ``CLNP_NCCL=0`` turns NCCL off.
"""
from __future__ import annotations

import atexit
import math
import os
import threading
import warnings
from typing import Any, Sequence

import numpy as np
import pyopencl as cl

from clnp._core.array import Array
from clnp._core.eager import contiguous_copy
from clnp._runtime import cuda_memory
from clnp_grad._collectives import STACKED

from . import mpi

_OPS = {"psum": "NCCL_SUM", "pmax": "NCCL_MAX", "pmin": "NCCL_MIN"}
_DTYPES = {"int8": "NCCL_INT8", "uint8": "NCCL_UINT8", "int32": "NCCL_INT32",
           "uint32": "NCCL_UINT32", "int64": "NCCL_INT64", "uint64": "NCCL_UINT64",
           "float16": "NCCL_FLOAT16", "float32": "NCCL_FLOAT32", "float64": "NCCL_FLOAT64",
           "bfloat16": "NCCL_BFLOAT16"}
_COMPLEX = {"complex64": "float32", "complex128": "float64"}   # psum only: a pair of reals

_nccl: Any = None
_cupy: Any = None


def _modules() -> tuple[Any, Any] | None:
    """(cupy, cupy.cuda.nccl), or None where they cannot be imported."""
    global _nccl, _cupy
    if _nccl is None:
        try:
            import cupy
            from cupy.cuda import nccl
        except Exception:          # ImportError, or CuPy failing to find CUDA/NCCL
            _nccl = False
            return None
        if not getattr(nccl, "available", True):
            _nccl = False
            return None
        _cupy, _nccl = cupy, nccl
    return None if _nccl is False else (_cupy, _nccl)


def enabled() -> bool:
    """Whether NCCL may be used at all (``CLNP_NCCL=0`` turns it off).

    Returns
    -------
    bool

    Examples
    --------
    >>> from clnp_nn.parallel import nccl
    >>> nccl.enabled() in (True, False)
    True
    """
    return os.environ.get("CLNP_NCCL", "1").lower() not in ("0", "false", "no", "off")


class _Group:
    """NCCL communicators (one per local device) and CUDA streams of one participant set."""

    def __init__(self, who: Any, what: str):
        cupy, nccl = _modules()
        self.who = who
        self.ordinals = [cuda_memory.cuda_ordinal(d) for d in who.local]
        self.streams = []
        for o in self.ordinals:
            with cupy.cuda.Device(o):
                self.streams.append(cupy.cuda.Stream(non_blocking=True))
        if not who.multiprocess:
            self.comms = list(nccl.NcclCommunicator.initAll(self.ordinals))
        else:
            # under the exchange deadline, as every other cross-process step
            uid = mpi.broadcast_object(
                nccl.get_unique_id() if mpi.process_index() == 0 else None, 0, what)
            self.comms = []
            nccl.groupStart()
            try:
                for o, rank in zip(self.ordinals, who.local_ids):
                    with cupy.cuda.Device(o):
                        self.comms.append(nccl.NcclCommunicator(who.size, uid, rank))
            finally:
                nccl.groupEnd()
        self.ranks = list(range(len(who.local))) if not who.multiprocess else list(who.local_ids)


_GROUPS: dict[Any, _Group | None] = {}
_lock = threading.Lock()


def close_all() -> None:
    """Abort every NCCL communicator of this process (run at exit; later collectives make
    new ones). ``ncclCommDestroy`` finalizes, a collective step that waits for every rank of
    the clique, so destroying one process's communicators one after another from one thread
    never returns; ``ncclCommAbort`` is local.

    Returns
    -------
    None

    Examples
    --------
    >>> from clnp_nn.parallel import nccl
    >>> nccl.close_all()
    >>> nccl.in_use()
    False
    """
    with _lock:
        groups = [g for g in _GROUPS.values() if g is not None]
        _GROUPS.clear()
    for g in groups:
        for c in g.comms:
            try:
                c.abort()
            except Exception:
                pass
        g.comms = []


atexit.register(close_all)    # registered after cuda_memory's: runs before its pools go


def _key(who: Any) -> tuple:
    return (tuple(id(d) for d in who.global_devices), who.local_ids, who.counts)


def group(who: Any, what: str = "pmap") -> _Group | None:
    """The NCCL communicators and streams of the participants ``who`` (a
    ``clnp_nn.parallel.transport.Participants``), made on first use; None where NCCL cannot
    serve them: a device that does not share memory with CUDA, a device named twice, NCCL
    or CuPy missing, ``CLNP_NCCL=0``. Across processes every process agrees (an MPI
    all-reduce of their answers).

    Parameters
    ----------
    who : Participants
        The devices of one pmap.
    what : str, optional
        The collective that asks, named by a ``CollectiveTimeoutError`` when another
        process does not answer.

    Returns
    -------
    object or None

    Raises
    ------
    CollectiveTimeoutError
        Across processes, another process did not answer in time.

    Examples
    --------
    >>> import clnp
    >>> from clnp_nn.parallel import nccl, transport
    >>> d = clnp.default_device()
    >>> nccl.group(transport.Participants([d, d], [d, d], [0, 1], [2])) is None
    True
    """
    key = _key(who)
    with _lock:
        if key in _GROUPS:
            return _GROUPS[key]
        # the devices first: on other platforms nothing CUDA is imported
        ok = enabled() and len(set(who.local)) == len(who.local) and \
            all(cuda_memory.supported(d) for d in who.local) and _modules() is not None
        if who.multiprocess:   # a dead rank is named, not waited for
            ok = mpi.all_agree(ok, what) and _one_gpu_per_rank(who, what)
        g = _Group(who, what) if ok else None
        _GROUPS[key] = g
        return g


def _one_gpu_per_rank(who: Any, what: str) -> bool:
    """Whether no GPU serves two NCCL ranks across the processes. NCCL refuses that
    (``NCCL_ERROR_INVALID_USAGE``, "Duplicate GPU detected"), which happens when processes
    pick their device themselves, e.g. every process of ``mpiexec`` with ``CLNP_DEVICE=gpu``.
    Every process sees the same list, so all of them decide alike: MPI then carries the
    collectives, with a warning that says how to give each process its own GPU."""
    mine = [cuda_memory.device_uuid(d).hex() for d in who.local]
    ranks: dict[str, list[int]] = {}
    for rank, uuids in enumerate(mpi.all_gather_object(mine, what)):
        for u in uuids:
            ranks.setdefault(u, []).append(rank)
    shared = {u: r for u, r in ranks.items() if len(r) > 1}
    if shared:
        where = "; ".join(f"processes {r} all on GPU {u[:8]}" for u, r in shared.items())
        warnings.warn(f"{what}: {where}. NCCL needs one GPU per rank, so these collectives "
                      "go through MPI and host memory. Give each process its own GPU: "
                      "clnp_nn.parallel.initialize() picks one by local rank when "
                      "local_device_ids is not given.", RuntimeWarning, stacklevel=2)
    return not shared


def in_use() -> bool:
    """Whether some participant set of this process runs its collectives in NCCL.

    Returns
    -------
    bool

    Examples
    --------
    >>> from clnp_nn.parallel import nccl
    >>> nccl.in_use() in (True, False)
    True
    """
    return any(g is not None for g in _GROUPS.values())


def supports(name: str, dtype: np.dtype) -> bool:
    """Whether collective ``name`` on ``dtype`` runs in NCCL (others take the MPI/host path):
    the reductions on NCCL's types (``psum`` also on complex, as pairs of reals), the other
    collectives on every dtype (they move bytes).

    Parameters
    ----------
    name : str
        A collective primitive's name (``"psum"``, ``"all_gather"``...).
    dtype : numpy.dtype
        The operand's dtype.

    Returns
    -------
    bool

    Examples
    --------
    >>> import numpy as np
    >>> from clnp_nn.parallel import nccl
    >>> nccl.supports("psum", np.dtype("complex64")), nccl.supports("pmax", np.dtype("bool"))
    (True, False)
    """
    d = str(dtype)
    if name in _OPS:
        return d in _DTYPES or (name == "psum" and d in _COMPLEX)
    return name in ("all_gather", "psum_scatter", "ppermute", "all_to_all") and \
        (d in _DTYPES or d in _COMPLEX or d == "bool")


# ------------------------------------------------------------------------ data movement
def _stage_in(g: _Group, shards: Sequence[Array], nbytes: int) -> list[Any]:
    """Each shard copied into shared memory of its device (at least ``nbytes``), the host
    waiting for the copies: afterwards CUDA may read them."""
    allocs, events = [], []
    for dev, x in zip(g.who.local, shards):
        x = x if x.flags.c_contiguous else contiguous_copy(x)
        a = cuda_memory.pool(dev).take(max(nbytes, 1))
        if x.nbytes:
            events.append(cl.enqueue_copy(dev.queue, a.buffer, x._buf, byte_count=x.nbytes,
                                          src_offset=x._offset * x.dtype.itemsize))
        allocs.append(a)
    _flush(g.who.local)
    for e in events:
        e.wait()
    return allocs


def _flush(devices: Sequence[Any]) -> None:
    """Submit every device's enqueued work before the host waits for one of them (a wait
    flushes only its own queue)."""
    for dev in devices:
        dev.queue.flush()


def _scratch(g: _Group, nbytes: int) -> list[Any]:
    return [cuda_memory.pool(dev).take(max(nbytes, 1)) for dev in g.who.local]


def _finish(g: _Group) -> None:
    for s in g.streams:
        s.synchronize()


def _copy_out(dev: Any, a: Any, shape: tuple, dtype: np.dtype) -> Array:
    """A fresh array of ``shape`` copied from shared allocation ``a`` (OpenCL, after NCCL
    finished)."""
    y = Array.empty(tuple(shape), dtype, dev)
    if y.nbytes:
        cl.enqueue_copy(dev.queue, y._buf, a.buffer, byte_count=y.nbytes)
    return y


def _stage_out(g: _Group, allocs: Sequence[Any], shape: tuple, dtype: np.dtype) -> list[Array]:
    """Fresh arrays copied from shared memory; the allocations go back to their pools (each
    device's in-order queue orders any later use after the copy)."""
    out = []
    for dev, a in zip(g.who.local, allocs):
        out.append(_copy_out(dev, a, shape, dtype))
        cuda_memory.pool(dev).give(a)
    _flush(g.who.local)
    return out


def _nccl_type(dtype: np.dtype) -> tuple[Any, int]:
    """(NCCL datatype, elements per array element): complex goes as pairs of reals, bool as
    bytes."""
    _, nccl = _modules()
    d = str(dtype)
    if d in _COMPLEX:
        return getattr(nccl, _DTYPES[_COMPLEX[d]]), 2
    if d == "bool":
        return nccl.NCCL_UINT8, 1
    return getattr(nccl, _DTYPES[d]), 1


def _for_each(g: _Group, call: Any) -> None:
    """``call(i, comm, stream_ptr)`` for every local device, as one NCCL group."""
    cupy, nccl = _modules()
    nccl.groupStart()
    try:
        for i, (o, comm, s) in enumerate(zip(g.ordinals, g.comms, g.streams)):
            with cupy.cuda.Device(o):
                call(i, comm, s.ptr)
    finally:
        nccl.groupEnd()


# ------------------------------------------------------------------------ the collectives
_ALIGN = 256      # bytes between the arrays packed into one all-reduce


def _all_reduce(name: str, shards: Sequence[Array], who: Any) -> list[Array]:
    """``psum``/``pmax``/``pmin`` of the local shards over every participant."""
    return [r[0] for r in _all_reduce_many(name, [[x] for x in shards], who)]


def _all_reduce_many(name: str, shard_lists: Sequence[Sequence[Array]], who: Any
                    ) -> list[list[Array]]:
    """``psum``/``pmax``/``pmin`` of several arrays of one dtype as one NCCL all-reduce:
    ``shard_lists[d]`` are device ``d``'s operands, packed into one shared buffer (DDP's
    gradient bucket: a step's every gradient in one call)."""
    g = group(who)
    _, nccl = _modules()
    if _in_cuda_memory(who.local, shard_lists):
        return _all_reduce_in_place(name, shard_lists, g)
    first = shard_lists[0]
    dtype = first[0].dtype
    ntype, per = _nccl_type(dtype)
    offsets, total = [], 0
    for x in first:
        offsets.append(total)
        total += -(-x.nbytes // _ALIGN) * _ALIGN
    allocs, events = [], []
    for dev, xs in zip(who.local, shard_lists):
        a = cuda_memory.pool(dev).take(max(total, 1))
        for x, off in zip(xs, offsets):
            x = x if x.flags.c_contiguous else contiguous_copy(x)
            if x.nbytes:
                events.append(cl.enqueue_copy(dev.queue, a.buffer, x._buf, byte_count=x.nbytes,
                                              src_offset=x._offset * x.dtype.itemsize,
                                              dst_offset=off))
        allocs.append(a)
    _flush(who.local)
    for e in events:
        e.wait()
    count = total // dtype.itemsize * per
    op = getattr(nccl, _OPS[name])
    _for_each(g, lambda i, comm, s: comm.allReduce(allocs[i].cuda_ptr, allocs[i].cuda_ptr,
                                                   count, ntype, op, s))
    _finish(g)
    out = []
    for dev, a in zip(who.local, allocs):
        res = []
        for x, off in zip(first, offsets):
            y = Array.empty(tuple(x.shape), dtype, dev)
            if y.nbytes:
                cl.enqueue_copy(dev.queue, y._buf, a.buffer, byte_count=y.nbytes,
                                src_offset=off)
            res.append(y)
        cuda_memory.pool(dev).give(a)
        out.append(res)
    _flush(who.local)
    return out


def _cuda_pointer(x: Array) -> int | None:
    """The CUDA pointer of ``x``'s first element where it lies in memory CUDA sees."""
    base = cuda_memory.address_of(x.device, x._buf)
    return None if base is None else base + x._offset * x.dtype.itemsize


def _in_cuda_memory(devices: Sequence[Any], shard_lists: Sequence[Sequence[Array]]) -> bool:
    """Whether NCCL can work on the operands where they lie: every device allocates in
    memory CUDA sees (``Device.set_cuda_memory``: the results go there too) and every
    operand is a C-contiguous array there."""
    return all(dev.cuda_memory for dev in devices) and all(
        x.flags.c_contiguous and _cuda_pointer(x) is not None
        for xs in shard_lists for x in xs)


def _all_reduce_in_place(name: str, shard_lists: Sequence[Sequence[Array]], g: _Group
                         ) -> list[list[Array]]:
    """``psum``/``pmax``/``pmin`` of operands in memory CUDA sees, without staging: NCCL
    reads each operand where it lies and writes a fresh array of its device (one all-reduce
    per operand, the whole step's as one NCCL group). The host waits for each device's queue
    before (OpenCL's writes are done) and for NCCL's streams after (the results are)."""
    _, nccl = _modules()
    dtype = shard_lists[0][0].dtype
    ntype, per = _nccl_type(dtype)
    op = getattr(nccl, _OPS[name])
    outs = [[Array.empty(tuple(x.shape), dtype, dev) for x in xs]
            for dev, xs in zip(g.who.local, shard_lists)]
    _flush(g.who.local)
    for dev in g.who.local:
        dev.queue.finish()

    def call(i: int, comm: Any, s: Any) -> None:
        for x, y in zip(shard_lists[i], outs[i]):
            if x.size:
                comm.allReduce(_cuda_pointer(x), _cuda_pointer(y), x.size * per, ntype, op, s)
    _for_each(g, call)
    _finish(g)
    return outs


def collective_group(eqn_params: Sequence[tuple[str, dict]],
                     shard_lists: Sequence[Sequence[Array]], who: Any
                     ) -> dict[int, list[Array]]:
    """The collectives of one ``pmap`` step that NCCL runs: ``{j: results per local
    device}`` (empty where NCCL cannot serve ``who``); the caller runs the others. The
    reductions of one (name, dtype) are packed into one all-reduce.

    Parameters
    ----------
    eqn_params : sequence of (str, dict)
        Each collective's primitive name and parameters.
    shard_lists : sequence of sequences of clnp arrays
        ``shard_lists[d][j]``: collective ``j``'s operand on local device ``d``.
    who : Participants
        The devices of the pmap.

    Returns
    -------
    dict of int to list of clnp arrays

    Examples
    --------
    >>> import clnp
    >>> from clnp_nn.parallel import nccl, transport
    >>> d = clnp.default_device()
    >>> who = transport.Participants([d, d], [d, d], [0, 1], [2])
    >>> nccl.collective_group([("psum", {})], [[clnp.ones(2)], [clnp.ones(2)]], who)
    {}
    """
    if who.size < 2 or group(who, eqn_params[0][0] if eqn_params else "pmap") is None:
        return {}
    n_dev = len(shard_lists)
    done: dict[int, list[Array]] = {}
    buckets: dict[tuple[str, str], list[int]] = {}
    for j, (name, params) in enumerate(eqn_params):
        x = shard_lists[0][j]
        if not supports(name, x.dtype):
            continue
        if name in _OPS:
            buckets.setdefault((name, str(x.dtype)), []).append(j)
        else:
            done[j] = _OTHERS[name](params, [lst[j] for lst in shard_lists], who)
    for (name, _), js in buckets.items():
        res = _all_reduce_many(name, [[lst[j] for j in js] for lst in shard_lists], who)
        for k, j in enumerate(js):
            done[j] = [res[d][k] for d in range(n_dev)]
    return done


def _gather(g: _Group, shards: Sequence[Array]) -> list[Array]:
    """Every participant's operand, stacked in participant order, on every local device."""
    x0 = shards[0]
    ntype, per = _nccl_type(x0.dtype)
    n = g.who.size
    allocs = _stage_in(g, shards, x0.nbytes)
    outs = _scratch(g, n * x0.nbytes)
    _for_each(g, lambda i, comm, s: comm.allGather(allocs[i].cuda_ptr, outs[i].cuda_ptr,
                                                   x0.size * per, ntype, s))
    _finish(g)
    for dev, a in zip(g.who.local, allocs):
        cuda_memory.pool(dev).give(a)
    return _stage_out(g, outs, (n,) + tuple(x0.shape), x0.dtype)


def _all_gather(params: dict, shards: Sequence[Array], who: Any) -> list[Array]:
    """``all_gather``: NCCL's gather, then the collective's stacked meaning on each device."""
    import clnp
    g = group(who)
    stacked = _gather(g, shards)
    p = {k: v for k, v in params.items() if k != "axis_name"}
    return [_mine(STACKED["all_gather"](clnp, s, **p), r) for s, r in zip(stacked, _my_rows(g))]


def _psum_scatter(params: dict, shards: Sequence[Array], who: Any) -> list[Array]:
    """``psum_scatter``: each participant's pieces laid out along the leading axis in
    participant order, reduced and scattered by NCCL (each rank keeps its piece)."""
    import clnp
    g = group(who)
    _, nccl = _modules()
    n = who.size
    d, tiled = params["scatter_dimension"], params["tiled"]
    pieces = []
    for x in shards:
        s = tuple(x.shape)
        v = clnp.reshape(x, s[:d] + (n, s[d] // n) + s[d + 1:]) if tiled else x
        pieces.append(clnp.moveaxis(v, d, 0))
    piece_shape = tuple(pieces[0].shape[1:])
    ntype, per = _nccl_type(pieces[0].dtype)
    count = math.prod(piece_shape) * per
    allocs = _stage_in(g, pieces, pieces[0].nbytes)
    outs = _scratch(g, pieces[0].nbytes // n)
    op = nccl.NCCL_SUM
    _for_each(g, lambda i, comm, s: comm.reduceScatter(allocs[i].cuda_ptr, outs[i].cuda_ptr,
                                                       count, ntype, op, s))
    _finish(g)
    for dev, a in zip(who.local, allocs):
        cuda_memory.pool(dev).give(a)
    return _stage_out(g, outs, piece_shape, pieces[0].dtype)


def _ppermute(params: dict, shards: Sequence[Array], who: Any) -> list[Array]:
    """``ppermute``: one NCCL send/receive per pair of ``perm``; participants that receive
    nothing get zeros."""
    import clnp
    g = group(who)
    perm = [(int(s), int(d)) for s, d in params["perm"]]
    x0 = shards[0]
    ntype, per = _nccl_type(x0.dtype)
    count = x0.size * per
    sources = {d: s for s, d in perm}
    allocs = _stage_in(g, shards, x0.nbytes)
    outs = _scratch(g, x0.nbytes)
    ranks = _my_rows(g)

    def call(i: int, comm: Any, s: Any) -> None:
        me = ranks[i]
        for src, dst in perm:
            if src == me and dst != me:
                comm.send(allocs[i].cuda_ptr, count, ntype, dst, s)
        if me in sources and sources[me] != me:
            comm.recv(outs[i].cuda_ptr, count, ntype, sources[me], s)
    _for_each(g, call)
    _finish(g)
    res = []
    for i, dev in enumerate(who.local):
        src = sources.get(ranks[i])
        if src is None:
            res.append(clnp.zeros(x0.shape, dtype=x0.dtype, device=dev))
        else:
            res.append(_copy_out(dev, allocs[i] if src == ranks[i] else outs[i], x0.shape,
                                 x0.dtype))
        cuda_memory.pool(dev).give(allocs[i])
        cuda_memory.pool(dev).give(outs[i])
    return res


def _all_to_all(params: dict, shards: Sequence[Array], who: Any) -> list[Array]:
    """``all_to_all``: every participant's operand gathered by NCCL, then the collective's
    stacked meaning on each device (each keeps its row)."""
    import clnp
    g = group(who)
    stacked = _gather(g, shards)
    p = {k: v for k, v in params.items() if k != "axis_name"}
    return [_mine(STACKED["all_to_all"](clnp, s, **p), r) for s, r in zip(stacked, _my_rows(g))]


def _my_rows(g: _Group) -> list[int]:
    return list(g.who.local_ids) if g.who.multiprocess else list(range(len(g.who.local)))


def _mine(stacked: Array, row: int) -> Array:
    import clnp
    return clnp.asarray(stacked[row], copy=True)


_OTHERS = {"all_gather": _all_gather, "psum_scatter": _psum_scatter, "ppermute": _ppermute,
           "all_to_all": _all_to_all}

__all__ = ["collective_group", "group", "supports", "enabled", "in_use", "close_all"]
