"""Carrying out one collective for ``pmap``: shards from the local devices to the host, across
processes (MPI), combined, and back to the devices.

clnp gives every device its own OpenCL context, so shards of different devices meet in host
memory. The reads of all local shards are enqueued before any is waited for (the devices copy
out together); ``psum``/``pmax``/``pmin`` then combine chunk by chunk (exchanging each chunk
with the other processes, if any), each chunk's result written back to every device without
waiting while later chunks are still being read, so the device-to-host copies, the exchange,
the host reduction and the host-to-device copies overlap. The other
collectives move whole shards and apply their stacked meaning
(``clnp_grad._collectives.STACKED``) with NumPy. Across processes each rank sends its local
shards to every other (``mpi.exchange``) and every rank combines the same global list in the
same order, so every replica gets bit-identical results.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from clnp._runtime import staging as _staging
from clnp._core.array import Array
from clnp._runtime.device import Device
import clnp
from clnp._core.transfer import copy_to_device, start_read, upload, write_into
from clnp_grad._collectives import STACKED

from . import mpi, nccl

CHUNK_BYTES = 4 << 20      # granularity of the overlapped reduction (docs/parallel.md)
# two devices, shards at least this large: exchange and combine on the devices instead
# (pageable transfers: faster at 64 MiB in every run of bench/bench_parallel.py, not at 16 MiB
# and below); at any size when the two share a context (CLNP_SHARED_CONTEXT=1: the copies are
# device to device) or stage through pinned memory (two H200s: exchange-and-add 1.95 / 5.75 /
# 13.2 GB/s at 1 / 4 / 16 MiB where the host reduction moved 1.49 / 3.16 / 2.99 GB/s)
EXCHANGE_MIN_BYTES = 32 << 20
_REDUCE = {"psum": np.add, "pmax": np.maximum, "pmin": np.minimum}
# the chunked reduction keeps at most this many bytes of shard reads in flight (enqueued
# ahead of the chunk being combined), which bounds the pinned staging it holds
WINDOW_BYTES = 64 << 20


class _HostBuffer:
    """A host array for transfers with ``device``: a view of a pinned staging block where
    ``clnp._runtime.staging`` stages for it (every transfer to or from it is then a DMA), else an
    ordinary NumPy array. ``release()`` gives the block back (it is reused only after the
    transfers using it have completed)."""

    __slots__ = ("array", "_block")

    def __init__(self, device: Device, shape: tuple[int, ...], dtype: np.dtype):
        if _staging.enabled(device):
            nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
            self._block = _staging.acquire(device, nbytes)
            self.array = self._block.view(shape, dtype)
        else:
            self._block, self.array = None, np.empty(shape, dtype)

    def release(self) -> None:
        if self._block is not None:
            _staging.release(self._block)
            self._block = None


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


def _rows(who: Participants) -> tuple[list[int], int]:
    """Where each process's participants start in a buffer of one row per participant, and
    this process's first row."""
    starts = [int(v) for v in np.cumsum((0,) + who.counts)]
    return starts, (starts[mpi.process_index()] if who.multiprocess else 0)


def _exchange_rows(buf: np.ndarray, who: Participants, starts: list[int], first: int,
                   n_local: int, what: str) -> None:
    """Fill the other processes' rows of ``buf`` with theirs (MPI), sending this process's
    ``n_local`` rows from ``first`` on; nothing in a single process."""
    if who.multiprocess:
        mpi.exchange(buf[first:first + n_local], [(c,) + buf.shape[1:] for c in who.counts],
                     what, out=[buf[a:b] for a, b in zip(starts[:-1], starts[1:])])


def _combine_rows(op: Any, buf: np.ndarray, home: Device) -> _HostBuffer:
    """``op`` of the rows of ``buf`` in participant order, into a host buffer for transfers
    with ``home`` (the caller releases it once its writes are enqueued)."""
    res = _HostBuffer(home, buf.shape[1:], buf.dtype)
    acc = res.array
    if len(buf) == 1:
        np.copyto(acc, buf[0])
    else:
        op(buf[0], buf[1], out=acc)
    for row in buf[2:]:
        op(acc, row, out=acc)
    return res


def reduce_collective(name: str, shards: Sequence[Array], who: Participants,
                      chunk_bytes: int | None = None) -> list[Array]:
    """``psum``/``pmax``/``pmin`` of the local shards (and, across processes, the others').

    Every chunk's device-to-host reads are enqueued first; then chunk by chunk: wait for its
    reads, exchange it with the other processes, reduce it in participant order, enqueue its
    writes to every device. Later chunks' reads and earlier chunks' writes proceed on the
    devices meanwhile.

    Parameters
    ----------
    name : {'psum', 'pmax', 'pmin'}
        The reduction.
    shards : sequence of clnp arrays
        One shard per local participant (``who.local``), of one shape and dtype.
    who : Participants
        The participants of the pmap.
    chunk_bytes : int, optional
        Granularity of the overlapped reduction (default ``CHUNK_BYTES``, 4 MiB).

    Returns
    -------
    list of clnp arrays
        The reduced values, one per local device, bit-identical on every participant.

    Raises
    ------
    KeyError
        ``name`` is not one of the three reductions.
    CollectiveTimeoutError
        Across processes, another process did not take part in time.

    Examples
    --------
    Two participants on one device (``pmap`` builds ``Participants`` from its device list):

    >>> import numpy, clnp
    >>> from clnp_nn.parallel import transport
    >>> d = clnp.default_device()
    >>> who = transport.Participants([d, d], [d, d], [0, 1], [2])
    >>> shards = [clnp.asarray([1.0, 2.0]), clnp.asarray([10.0, 20.0])]
    >>> out = transport.reduce_collective("pmax", shards, who)
    >>> print(numpy.asarray(out[0]), numpy.asarray(out[1]))
    [10. 20.] [10. 20.]
    """
    op = _REDUCE[name]
    x0 = shards[0]
    shape, dtype, n = tuple(x0.shape), x0.dtype, x0.size
    flat = [s.reshape(-1) for s in shards]
    outs = [Array.empty(shape, dtype, d) for d in who.local]
    flat_outs = [o.reshape(-1) for o in outs]
    step = max((chunk_bytes or CHUNK_BYTES) // max(dtype.itemsize, 1), 1)
    bounds = [(lo, min(lo + step, n)) for lo in range(0, n, step)] or [(0, 0)]
    starts, first = _rows(who)
    home = who.local[0]
    window = max(2, WINDOW_BYTES // max(step * dtype.itemsize * len(flat), 1))

    def stage(lo: int, hi: int) -> tuple[_HostBuffer, list]:
        buf = _HostBuffer(home, (who.size, hi - lo), dtype)     # one row per participant
        return buf, [start_read(f[lo:hi], buf.array[first + k]) for k, f in enumerate(flat)]
    staged = [stage(lo, hi) for lo, hi in bounds[:window]]
    for i, (lo, hi) in enumerate(bounds):
        hb, reads = staged[i]
        for r in reads:
            r.wait()
        buf = hb.array
        _exchange_rows(buf, who, starts, first, len(flat), name)
        res = _combine_rows(op, buf, home)
        for fo in flat_outs:
            write_into(fo, lo, res.array)
        res.release()               # reused once the writes have completed
        hb.release()
        staged[i] = None            # type: ignore[call-overload]
        if i + window < len(bounds):
            staged.append(stage(*bounds[i + window]))
    return outs


def reduce_many(name: str, shard_lists: Sequence[Sequence[Array]], who: Participants
                ) -> list[list[Array]]:
    """``psum``/``pmax``/``pmin`` of several arrays at once, as one transfer round: every
    array of every local device is read into its place in one host buffer (all reads enqueued
    before the one wait), the buffer is exchanged across processes once, reduced in
    participant order, and each array's part written back without waiting.

    A training step's gradients are many small arrays (a bias is a few KiB): reduced one by
    one, each pays a host round trip, and the devices idle between them.

    Parameters
    ----------
    name : {'psum', 'pmax', 'pmin'}
        The reduction.
    shard_lists : sequence of sequences of clnp arrays
        ``shard_lists[d][j]``: array ``j`` on local device ``d``; array ``j`` has one shape
        on every device, and every array one dtype.
    who : Participants
        The participants of the pmap.

    Returns
    -------
    list of lists of clnp arrays
        ``[d][j]``: the reduction of array ``j``, on local device ``d``; bit-identical on
        every participant.

    Raises
    ------
    KeyError
        ``name`` is not one of the three reductions.
    ValueError
        The arrays do not share one dtype.
    CollectiveTimeoutError
        Across processes, another process did not take part in time.

    Examples
    --------
    >>> import numpy, clnp
    >>> from clnp_nn.parallel import transport
    >>> d = clnp.default_device()
    >>> who = transport.Participants([d, d], [d, d], [0, 1], [2])
    >>> a = [[clnp.asarray([1.0, 2.0]), clnp.asarray([[3.0]])],
    ...      [clnp.asarray([10.0, 20.0]), clnp.asarray([[30.0]])]]
    >>> out = transport.reduce_many("psum", a, who)
    >>> print(numpy.asarray(out[1][0]), numpy.asarray(out[1][1]))
    [11. 22.] [[33.]]
    """
    op = _REDUCE[name]
    first_list = shard_lists[0]
    dtypes = {a.dtype for a in first_list}
    if len(dtypes) != 1:
        raise ValueError(f"reduce_many: the arrays have several dtypes {sorted(map(str, dtypes))}")
    dtype = first_list[0].dtype
    sizes = [a.size for a in first_list]
    offs = [int(v) for v in np.cumsum([0] + sizes)]
    starts, first = _rows(who)
    home = who.local[0]
    hb = _HostBuffer(home, (who.size, offs[-1]), dtype)
    buf = hb.array
    reads = [start_read(a, buf[first + k, offs[j]:offs[j + 1]])
             for k, lst in enumerate(shard_lists) for j, a in enumerate(lst)]
    for r in reads:
        r.wait()
    _exchange_rows(buf, who, starts, first, len(shard_lists), name)
    res = _combine_rows(op, buf, home)
    acc = res.array
    outs = []
    for d in who.local:
        mine = []
        for j, a in enumerate(first_list):
            o = Array.empty(tuple(a.shape), dtype, d)
            write_into(o, 0, acc[offs[j]:offs[j + 1]])
            mine.append(o)
        outs.append(mine)
    res.release()                   # reused once the writes have completed
    hb.release()
    return outs


def exchange_reduce(name: str, shards: Sequence[Array], who: Participants) -> list[Array]:
    """``psum``/``pmax``/``pmin`` of two local shards by exchange: each device receives the
    other's shard (``copy_to_device``: ``clEnqueueCopyBuffer`` in a shared context, else
    chunked through the host) and combines on the device.

    Two transfers instead of the host reduction's four; both devices compute ``x0 op x1``
    (``op`` is commutative in IEEE arithmetic), so the results are bit-identical.

    Parameters
    ----------
    name : {'psum', 'pmax', 'pmin'}
        The reduction.
    shards : sequence of two clnp arrays
        The shards of the two local participants.
    who : Participants
        The participants of the pmap: exactly two local devices.

    Returns
    -------
    list of clnp arrays
        The two results, on ``who.local[0]`` and ``who.local[1]``.

    Raises
    ------
    KeyError
        ``name`` is not one of the three reductions.
    ValueError
        There are not exactly two shards and two local devices.

    Examples
    --------
    Two participants on one device (``pmap`` builds ``Participants`` from its device list):

    >>> import numpy, clnp
    >>> from clnp_nn.parallel import transport
    >>> d = clnp.default_device()
    >>> who = transport.Participants([d, d], [d, d], [0, 1], [2])
    >>> shards = [clnp.asarray([1.0, 2.0]), clnp.asarray([10.0, 20.0])]
    >>> out = transport.exchange_reduce("psum", shards, who)
    >>> print(numpy.asarray(out[0]), numpy.asarray(out[1]))
    [11. 22.] [11. 22.]
    """
    x0, x1 = shards
    d0, d1 = who.local
    fn = {"psum": clnp.add, "pmax": clnp.maximum, "pmin": clnp.minimum}[name]
    return [fn(x0, copy_to_device(x1, d0)), fn(copy_to_device(x0, d1), x1)]


def collective(name: str, params: dict, shards: Sequence[Array], who: Participants
               ) -> list[Array]:
    """Result shards (one per local device) of collective ``name`` over the participants.

    Reductions go through :func:`exchange_reduce` (two local devices with large shards or a
    shared context) or :func:`reduce_collective`; the other collectives gather every shard on
    the host, apply their stacked meaning (``clnp_grad._collectives.STACKED``) and upload each
    participant's part.

    Parameters
    ----------
    name : str
        A collective primitive: ``'psum'``, ``'pmax'``, ``'pmin'``, ``'all_gather'``,
        ``'psum_scatter'``, ``'ppermute'`` or ``'all_to_all'``.
    params : dict
        The primitive's parameters (``axis_name`` is ignored here).
    shards : sequence of clnp arrays
        One shard per local participant.
    who : Participants
        The participants of the pmap.

    Returns
    -------
    list of clnp arrays
        One result per local device, on that device.

    Raises
    ------
    KeyError
        ``name`` is not a collective.
    CollectiveTimeoutError
        Across processes, another process did not take part in time.

    Examples
    --------
    Two participants on one device (``pmap`` builds ``Participants`` from its device list):

    >>> import numpy, clnp
    >>> from clnp_nn.parallel import transport
    >>> d = clnp.default_device()
    >>> who = transport.Participants([d, d], [d, d], [0, 1], [2])
    >>> shards = [clnp.asarray([1.0, 2.0]), clnp.asarray([10.0, 20.0])]
    >>> out = transport.collective("psum", {"axis_name": "i"}, shards, who)
    >>> print(numpy.asarray(out[1]))
    [11. 22.]
    >>> out = transport.collective("ppermute", {"axis_name": "i", "perm": ((0, 1), (1, 0))},
    ...                            shards, who)
    >>> print(numpy.asarray(out[0]), numpy.asarray(out[1]))
    [10. 20.] [1. 2.]
    """
    if name in _REDUCE:
        if who.size == 1:
            return list(shards)         # one participant: the reduction is the value itself
        if _exchanges(who, shards[0]):
            return exchange_reduce(name, shards, who)
        return reduce_collective(name, shards, who)
    # every participant's shard in one host array (pinned where staging is on): the local
    # ones read straight into their rows, the other processes' received into theirs
    x0 = shards[0]
    starts, first = _rows(who)
    hb = _HostBuffer(who.local[0], (who.size,) + tuple(x0.shape), x0.dtype)
    stack = hb.array
    reads = [start_read(s, stack[first + k, ...]) for k, s in enumerate(shards)]  # all at once
    for r in reads:
        r.wait()
    _exchange_rows(stack, who, starts, first, len(shards), name)
    p = {k: v for k, v in params.items() if k != "axis_name"}
    out = STACKED[name](np, stack, **p)
    try:
        return [upload(np.ascontiguousarray(out[g]), d, owned=True)
                for g, d in zip(who.local_ids, who.local)]
    finally:
        hb.release()     # reused once the uploads of any views of it have completed


def _exchanges(who: Participants, x: Array) -> bool:
    """Whether a reduction of shards like ``x`` goes through :func:`exchange_reduce`."""
    if len(who.local) != 2 or who.multiprocess or x.dtype.kind == "b":
        return False
    d0, d1 = who.local
    return (x.nbytes >= EXCHANGE_MIN_BYTES or d0.context == d1.context or
            (_staging.enabled(d0) and _staging.enabled(d1)))


def collective_group(eqn_params: Sequence[tuple[str, dict]],
                     shard_lists: Sequence[Sequence[Array]], who: Participants
                     ) -> list[list[Array]]:
    """Results of several independent collectives (``eqn_params[j] = (name, params)`` applied
    to ``shard_lists[d][j]``), ``[d][j]`` per local device ``d``.

    Where every participant shares memory with CUDA and NCCL is installed, NCCL runs the
    collectives it supports (:func:`clnp_nn.parallel.nccl.collective_group`: a step's
    reductions of one dtype as one all-reduce). Otherwise, and for the rest,
    ``psum``/``pmax``/``pmin`` of one dtype form one reduction per (name, dtype): through
    :func:`exchange_reduce` of the flattened, concatenated shards where two devices exchange
    (``_exchanges``), else through one :func:`reduce_many` of the shards below
    ``EXCHANGE_MIN_BYTES`` (larger ones are reduced one by one, chunked). The rest go one by
    one through :func:`collective`.

    Parameters
    ----------
    eqn_params : sequence of (str, dict)
        Each collective's primitive name and parameters.
    shard_lists : sequence of sequences of clnp arrays
        ``shard_lists[d][j]``: collective ``j``'s operand on local device ``d``.
    who : Participants
        The participants of the pmap.

    Returns
    -------
    list of lists of clnp arrays
        ``[d][j]``: collective ``j``'s result on local device ``d``.

    Raises
    ------
    KeyError
        A name that is not a collective.
    CollectiveTimeoutError
        Across processes, another process did not take part in time.

    Examples
    --------
    >>> import numpy, clnp
    >>> from clnp_nn.parallel import transport
    >>> d = clnp.default_device()
    >>> who = transport.Participants([d, d], [d, d], [0, 1], [2])
    >>> a = [[clnp.asarray([1.0]), clnp.asarray([2.0])], [clnp.asarray([10.0]), clnp.asarray([20.0])]]
    >>> out = transport.collective_group([("psum", {}), ("pmax", {})], a, who)
    >>> print(numpy.asarray(out[0][0]), numpy.asarray(out[0][1]))
    [11.] [20.]
    """
    n_dev = len(shard_lists)
    out: list[list[Any]] = [[None] * len(eqn_params) for _ in range(n_dev)]
    # NVIDIA devices sharing memory with CUDA: NCCL takes what it can (clnp_nn/parallel/nccl.py)
    in_nccl = nccl.collective_group(eqn_params, shard_lists, who)
    for j, res in in_nccl.items():
        for d in range(n_dev):
            out[d][j] = res[d]
    groups: dict[tuple[str, np.dtype, bool], list[int]] = {}
    for j, (name, _) in enumerate(eqn_params):
        if j in in_nccl:
            continue
        x = shard_lists[0][j]
        if name in _REDUCE and who.size > 1 and x.dtype.kind != "b":
            ex = _exchanges(who, x)
            if ex or x.nbytes < EXCHANGE_MIN_BYTES:
                groups.setdefault((name, x.dtype, ex), []).append(j)
                continue
        res = collective(name, eqn_params[j][1], [lst[j] for lst in shard_lists], who)
        for d in range(n_dev):
            out[d][j] = res[d]
    for (name, _, ex), js in groups.items():
        if ex:
            res = _exchange_many(name, [[lst[j] for j in js] for lst in shard_lists], who)
        else:
            res = reduce_many(name, [[lst[j] for j in js] for lst in shard_lists], who)
        for d in range(n_dev):
            for j, r in zip(js, res[d]):
                out[d][j] = r
    return out


def _exchange_many(name: str, shard_lists: Sequence[Sequence[Array]], who: Participants
                   ) -> list[list[Array]]:
    """:func:`exchange_reduce` of several arrays as one: each device's arrays flattened into
    one (a copy kernel per array), one exchange, results split back into views."""
    if len(shard_lists[0]) == 1:
        return [[r] for r in exchange_reduce(name, [lst[0] for lst in shard_lists], who)]
    flat = [clnp.concat([clnp.reshape(a, (-1,)) for a in lst]) for lst in shard_lists]
    red = exchange_reduce(name, flat, who)
    shapes = [tuple(a.shape) for a in shard_lists[0]]
    out = []
    for r in red:
        parts, lo = [], 0
        for shp in shapes:
            n = int(np.prod(shp, dtype=np.int64))
            parts.append(clnp.reshape(r[lo:lo + n], shp))
            lo += n
        out.append(parts)
    return out


def axis_index_values(who: Participants) -> list[Array]:
    """Each local device's index along the mapped axis, as an int32 0-d array there.

    Parameters
    ----------
    who : Participants
        The participants of the pmap.

    Returns
    -------
    list of clnp arrays
        One 0-d int32 array per local device: its global participant index.

    Examples
    --------
    >>> import clnp
    >>> from clnp_nn.parallel import transport
    >>> d = clnp.default_device()
    >>> who = transport.Participants([d, d], [d, d], [0, 1], [2])
    >>> [int(v) for v in transport.axis_index_values(who)]
    [0, 1]
    """
    return [upload(np.asarray(g, np.int32), d) for g, d in zip(who.local_ids, who.local)]


__all__ = ["Participants", "collective", "collective_group", "reduce_collective",
           "reduce_many", "exchange_reduce",
           "axis_index_values", "CHUNK_BYTES"]
