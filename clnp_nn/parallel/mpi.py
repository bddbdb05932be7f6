"""Processes and hosts: the MPI world as JAX's multi-process API (``initialize``,
``process_index``, ``process_count``, ``local_devices``, ``devices``).

``initialize()`` reads ``MPI.COMM_WORLD`` (start the program with ``mpiexec -n N python
train.py``) and tells every process which devices the others contribute. Without it (or with
one process) everything is local. Data crosses processes only through ``exchange``: every rank
sends its host buffer to every other rank with non-blocking ``Isend``/``Irecv`` and polls them
against a deadline, so a rank that died or stopped calling the collective makes the others
raise ``CollectiveTimeoutError`` naming it instead of waiting forever; an uncaught exception
in any process then aborts the whole job (``MPI_Abort``).
"""
from __future__ import annotations

import itertools
import os
import pickle
import sys
import time
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

import clnp
from clnp._runtime.device import Device

DEFAULT_TIMEOUT = 300.0   # seconds a collective waits for the other processes
_SPINS = 20000            # immediate re-polls before sleeping between tests


class CollectiveTimeoutError(RuntimeError):
    """Another process did not take part in a collective in time (it died or hangs)."""

    def __init__(self, what: str, ranks: Sequence[int], timeout: float, me: int):
        self.ranks, self.timeout = list(ranks), timeout
        super().__init__(
            f"{what}: rank {me} got no data from rank(s) {self.ranks} within {timeout:g} s: "
            f"that process died, hangs, or runs a different program (collectives must be "
            f"called in the same order by every process). Set the limit with "
            f"clnp_nn.parallel.initialize(timeout=...) or CLNP_MPI_TIMEOUT")


@dataclass(frozen=True)
class RemoteDevice:
    """A device owned by another process: it appears in ``devices()`` and in ``pmap``'s
    global device list, but its shards are computed and held by that process."""
    id: int                 # position in the global device list
    process_index: int
    description: str

    def __repr__(self) -> str:
        return f"<RemoteDevice {self.id} of process {self.process_index}: {self.description}>"


class _World:
    def __init__(self) -> None:
        self.comm: Any = None
        self.rank, self.size = 0, 1
        self.timeout = float(os.environ.get("CLNP_MPI_TIMEOUT", DEFAULT_TIMEOUT))
        self.local: tuple[Device, ...] | None = None
        self.global_: tuple[Any, ...] | None = None
        self.counts: tuple[int, ...] = ()
        self.seq = itertools.count()
        self.hooked = False


_W = _World()


def _platform_devices() -> tuple[Device, ...]:
    d0 = clnp.default_device()
    return tuple(d for d in clnp.devices() if d.platform_name == d0.platform_name)


def initialize(*, local_device_ids: Sequence[int] | None = None,
               timeout: float | None = None) -> None:
    """Join the MPI world of this program (``mpiexec -n N python prog.py``).

    Every process calls it once, at start, before any ``pmap``; it exchanges the device
    lists, so that ``devices()`` then lists every process's devices.

    Parameters
    ----------
    local_device_ids : sequence of int, optional
        Positions in ``clnp.devices()`` this process contributes. Default: every device of
        the default device's platform; but where that platform's devices are GPUs and
        several processes run on this host, one GPU per process, chosen by the process's
        rank among them (as ``jax.distributed.initialize`` does under Open MPI and Slurm),
        so that ``mpiexec -n 4`` on a host of four GPUs gives each process its own.
    timeout : float, optional
        Seconds a collective waits for the other processes before raising
        ``CollectiveTimeoutError`` (default ``CLNP_MPI_TIMEOUT`` or 300).

    Returns
    -------
    None

    Raises
    ------
    ImportError
        mpi4py is missing (``pip install "clnp[mpi]"``).
    ValueError
        ``timeout`` is not positive, ``local_device_ids`` names a device beyond
        ``clnp.devices()``, or the process contributes no device.
    CollectiveTimeoutError
        Another process did not call ``initialize`` in time.

    Examples
    --------
    Without ``mpiexec`` (and before ``initialize``) there is one process:

    >>> from clnp_nn import parallel
    >>> parallel.process_index(), parallel.process_count()
    (0, 1)

    Under ``mpiexec -n 2 python prog.py``, every process calls it once, at start:

    >>> parallel.initialize()  # doctest: +SKIP
    >>> parallel.process_count()  # doctest: +SKIP
    2
    """
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise ImportError("clnp_nn.parallel.initialize needs mpi4py and an MPI library: "
                          "pip install \"clnp[mpi]\" (mpi4py with the mpich wheel)") from e
    if timeout is not None:
        if not timeout > 0:
            raise ValueError(f"initialize: timeout must be positive; got {timeout!r}")
        _W.timeout = float(timeout)
    if local_device_ids is None:
        local = _platform_devices()
        if local and not local[0].is_cpu:
            node = MPI.COMM_WORLD.Split_type(MPI.COMM_TYPE_SHARED)
            node_rank, node_size = node.Get_rank(), node.Get_size()
            node.Free()
            if node_size > 1:
                local = (local[node_rank % len(local)],)
    else:
        all_devs = clnp.devices()
        try:
            local = tuple(all_devs[int(i)] for i in local_device_ids)
        except IndexError:
            raise ValueError(f"initialize: local_device_ids {list(local_device_ids)} name a "
                             f"device beyond the {len(all_devs)} of clnp.devices()") from None
    if not local:
        raise ValueError("initialize: this process contributes no device")
    comm = MPI.COMM_WORLD
    _W.comm, _W.rank, _W.size, _W.local = comm, comm.Get_rank(), comm.Get_size(), local
    descs = [f"{d.key} '{d.name}'" for d in local]
    blob = np.frombuffer(pickle.dumps(descs), np.uint8)
    sizes = exchange(np.asarray([blob.size], np.int64), [(1,)] * _W.size, "initialize")
    lens = [int(s[0]) for s in sizes]
    blobs = exchange(blob, [(n,) for n in lens], "initialize")
    glob: list[Any] = []
    counts = []
    for r, b in enumerate(blobs):
        names = pickle.loads(b.tobytes())
        counts.append(len(names))
        for j, nm in enumerate(names):
            glob.append(local[j] if r == _W.rank else RemoteDevice(len(glob), r, nm))
    _W.global_, _W.counts = tuple(glob), tuple(counts)
    if _W.size > 1 and not _W.hooked:
        _abort_on_uncaught_exception(comm)
        _W.hooked = True


def _abort_on_uncaught_exception(comm: Any) -> None:
    """An exception that ends one process ends the job (as ``python -m mpi4py`` does): the
    traceback is printed, then ``MPI_Abort`` stops the other ranks, which would otherwise
    wait in their next collective (and MPI_Finalize waits for the pending requests).

    The exception's own line is written first: ``MPI_Abort`` can cut the forwarding of a
    long traceback short (seen with MPICH's mpiexec), and that line names the cause."""
    previous = sys.excepthook

    def hook(tp: Any, value: Any, tb: Any) -> None:
        sys.stderr.write(f"rank {comm.Get_rank()}: {tp.__module__}.{tp.__qualname__}: "
                         f"{value}\n")
        sys.stderr.flush()
        previous(tp, value, tb)
        sys.stderr.flush()
        comm.Abort(1)
    sys.excepthook = hook


def is_initialized() -> bool:
    """Whether ``initialize()`` has run in this process.

    Returns
    -------
    bool
        True after ``initialize()``, False before (everything is then local).

    Examples
    --------
    >>> from clnp_nn import parallel
    >>> if not parallel.is_initialized():           # a single process without MPI
    ...     print(parallel.process_count())
    1
    """
    return _W.comm is not None


def process_index() -> int:
    """This process's rank (0 without MPI).

    Returns
    -------
    int
        The MPI rank, in ``[0, process_count())``.

    Examples
    --------
    >>> from clnp_nn.parallel import process_index
    >>> process_index()                           # a single process without MPI
    0
    >>> if process_index() == 0:                  # log once per job
    ...     print("epoch 1 done")
    epoch 1 done
    """
    return _W.rank


def process_count() -> int:
    """Number of processes (1 without MPI).

    Returns
    -------
    int
        The size of the MPI world once ``initialize()`` has run, else 1.

    Examples
    --------
    >>> from clnp_nn.parallel import device_count, devices, process_count
    >>> process_count()                           # a single process without MPI
    1
    >>> device_count() == len(devices())          # device_count() spans processes
    True
    """
    return _W.size


def local_devices() -> tuple[Device, ...]:
    """Devices this process computes on: those given to ``initialize``, else every device of
    the default device's platform.

    Returns
    -------
    tuple of clnp.Device
        This process's devices, in the order ``pmap`` uses them.

    Examples
    --------
    >>> import numpy, clnp
    >>> from clnp_nn.parallel import device_put_replicated, local_devices
    >>> params = device_put_replicated(clnp.asarray([1.0, 2.0]), local_devices())
    >>> params.shape == (len(local_devices()), 2)
    True
    >>> print(numpy.asarray(params)[0])
    [1. 2.]
    """
    return _W.local if _W.local is not None else _platform_devices()


def local_device_count() -> int:
    """``len(local_devices())``.

    Returns
    -------
    int
        The number of devices this process computes on.

    Examples
    --------
    >>> from clnp_nn.parallel import local_device_count, local_devices
    >>> local_device_count() == len(local_devices()) >= 1
    True
    """
    return len(local_devices())


def devices() -> tuple[Any, ...]:
    """Every device of every process, in process order: this process's are ``clnp.Device``
    objects, the others' ``RemoteDevice`` records (``pmap``'s default device list).

    Returns
    -------
    tuple of clnp.Device or RemoteDevice
        The global device list (``local_devices()`` without ``initialize``).

    Examples
    --------
    >>> from clnp_nn.parallel import devices, local_devices, process_index
    >>> {getattr(d, "process_index", process_index()) for d in devices()}   # owners' ranks
    {0}
    >>> devices() == local_devices()              # one process: every device is local
    True
    """
    return _W.global_ if _W.global_ is not None else local_devices()


def device_count() -> int:
    """``len(devices())``: the devices of every process.

    Returns
    -------
    int
        The number of devices of the whole job.

    Examples
    --------
    >>> from clnp_nn.parallel import device_count, local_device_count, process_count
    >>> process_count() > 1 or device_count() == local_device_count()
    True
    """
    return len(devices())


def process_counts() -> tuple[int, ...]:
    """Number of devices each process contributes.

    Returns
    -------
    tuple of int
        Entry ``r`` is the number of devices of process ``r`` (one entry without
        ``initialize``).

    Examples
    --------
    >>> from clnp_nn.parallel import device_count, mpi
    >>> sum(mpi.process_counts()) == device_count()
    True
    """
    return _W.counts if _W.counts else (local_device_count(),)


def exchange(local: np.ndarray, shapes: Sequence[tuple[int, ...]], what: str,
             out: Sequence[np.ndarray | None] | None = None) -> list:
    """Every rank's array: an all-to-all exchange of host buffers between the processes.

    Parameters
    ----------
    local : numpy.ndarray
        This rank's array.
    shapes : sequence of tuple of int
        ``shapes[r]`` is rank ``r``'s shape (the dtype is the same everywhere).
    what : str
        The name of the calling collective, for error messages.
    out : sequence of numpy.ndarray or None, optional
        ``out[r]``, where given, is the C-contiguous array to receive rank ``r``'s data
        into.

    Returns
    -------
    list of numpy.ndarray
        Entry ``r`` holds rank ``r``'s array (``[local]`` in a single process).

    Raises
    ------
    CollectiveTimeoutError
        A rank did not send in time; the error names the ranks.

    Examples
    --------
    >>> import numpy
    >>> from clnp_nn.parallel import mpi
    >>> n = mpi.process_count()
    >>> parts = mpi.exchange(numpy.arange(3), [(3,)] * n, "example")
    >>> len(parts) == n
    True
    >>> print(parts[mpi.process_index()])
    [0 1 2]
    """
    if _W.size == 1:
        return [local]
    from mpi4py import MPI
    comm, me = _W.comm, _W.rank
    tag = next(_W.seq) % 32000
    local = np.ascontiguousarray(local)
    given = out
    result: list[Any] = [None] * _W.size
    result[me] = local
    recvs: dict[int, Any] = {}
    reqs = []
    for r in range(_W.size):
        if r == me:
            continue
        buf = given[r] if given is not None and given[r] is not None else \
            np.empty(shapes[r], local.dtype)
        result[r] = buf
        recvs[r] = comm.Irecv([buf.reshape(-1).view(np.uint8), MPI.BYTE], source=r, tag=tag)
        reqs.append(comm.Isend([local.reshape(-1).view(np.uint8), MPI.BYTE], dest=r, tag=tag))
    deadline = time.monotonic() + _W.timeout
    spins, pause = 0, 0.0
    while True:
        for r in [r for r, q in recvs.items() if q.Test()]:
            del recvs[r]
        if not recvs and MPI.Request.Testall(reqs):
            return result
        if time.monotonic() > deadline:
            for q in list(recvs.values()) + reqs:
                try:
                    q.Cancel()
                except Exception:   # noqa: BLE001  (cancelling is best effort)
                    pass
            raise CollectiveTimeoutError(what, sorted(recvs) or
                                         [r for r in range(_W.size) if r != me],
                                         _W.timeout, me)
        # MPI moves large messages only while a rank is inside an MPI call, so poll at once
        # for a while (yielding the core), and back off to 1 ms sleeps only for long waits
        spins += 1
        if spins > _SPINS:
            pause = min(pause * 2 + 1e-5, 1e-3)
        time.sleep(pause)


def all_agree(flag: bool, what: str) -> bool:
    """Whether ``flag`` holds on every process (a logical AND across ranks), under the same
    deadline as every other exchange: a rank that stopped taking part is named in a
    ``CollectiveTimeoutError`` rather than waited for.

    Parameters
    ----------
    flag : bool
        This rank's answer.
    what : str
        The name of the calling collective, for error messages.

    Returns
    -------
    bool
        True when every rank passed True.

    Raises
    ------
    CollectiveTimeoutError
        A rank did not answer in time.

    Examples
    --------
    >>> from clnp_nn.parallel import mpi
    >>> mpi.all_agree(True, "example")
    True
    """
    answers = exchange(np.asarray([int(bool(flag))], np.int8), [(1,)] * _W.size, what)
    return all(int(a[0]) for a in answers)


def broadcast_object(obj: Any, root: int, what: str) -> Any:
    """Rank ``root``'s picklable ``obj`` on every process (the others pass anything, e.g.
    None), under the exchange deadline.

    Parameters
    ----------
    obj : object
        The value on ``root``; ignored elsewhere.
    root : int
        The rank whose value every process receives.
    what : str
        The name of the calling collective, for error messages.

    Returns
    -------
    object
        ``root``'s value.

    Raises
    ------
    ValueError
        ``root`` is not a rank.
    CollectiveTimeoutError
        A rank did not take part in time.

    Examples
    --------
    >>> from clnp_nn.parallel import mpi
    >>> mpi.broadcast_object({"seed": 3}, 0, "example")
    {'seed': 3}
    """
    n = _W.size
    if not 0 <= root < n:
        raise ValueError(f"{what}: root {root} is not a rank of the {n} processes")
    blob = np.frombuffer(pickle.dumps(obj), np.uint8) if _W.rank == root else \
        np.empty(0, np.uint8)
    return pickle.loads(_exchange_bytes(blob, what)[root].tobytes())


def all_gather_object(obj: Any, what: str) -> list:
    """Every process's picklable ``obj``, in rank order, under the exchange deadline.

    Parameters
    ----------
    obj : object
        This rank's value.
    what : str
        The name of the calling collective, for error messages.

    Returns
    -------
    list
        Entry ``r`` is rank ``r``'s value (``[obj]`` in a single process).

    Raises
    ------
    CollectiveTimeoutError
        A rank did not take part in time.

    Examples
    --------
    >>> from clnp_nn.parallel import mpi
    >>> mpi.all_gather_object(("gpu", 0), "example") == [("gpu", 0)] * mpi.process_count()
    True
    """
    parts = _exchange_bytes(np.frombuffer(pickle.dumps(obj), np.uint8), what)
    return [pickle.loads(p.tobytes()) for p in parts]


def _exchange_bytes(blob: np.ndarray, what: str) -> list:
    """Every rank's byte string (sizes first, then the bytes)."""
    sizes = exchange(np.asarray([blob.size], np.int64), [(1,)] * _W.size, what)
    return exchange(blob, [(int(s[0]),) for s in sizes], what)


__all__ = ["initialize", "is_initialized", "process_index", "process_count", "local_devices",
           "local_device_count", "devices", "device_count", "process_counts", "exchange",
           "all_agree", "broadcast_object", "all_gather_object", "RemoteDevice", "CollectiveTimeoutError"]
