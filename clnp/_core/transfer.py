"""Moving whole arrays between devices and the host without serialising the queues.

Every ``clnp.Device`` has its own OpenCL context, so a buffer of one device cannot be named in
another's queue: data between devices goes through host memory. These helpers keep that
asynchronous: ``start_read`` enqueues a non-blocking device-to-host copy and returns at once
(so reads from several devices run together), ``upload`` a non-blocking host-to-device copy,
and ``copy_to_device`` pipelines the two in chunks (the read of chunk k+1 overlaps the write of
chunk k). Where two arrays share a context (the same device, or two devices of one platform
under ``CLNP_SHARED_CONTEXT=1``) the copy is one ``clEnqueueCopyBuffer``, ordered after the
source device's queued work by a marker event, without a host wait. This module and ``clnp._core.array`` are the only places above the runtime
that name OpenCL buffers.

Host staging goes through pinned (page-locked) memory from ``clnp._runtime.staging`` wherever
``_staging.enabled(device)`` (by default every device that is not a CPU; ``CLNP_PINNED``):
``copy_to_device`` reads each chunk into a pinned block and writes from the same block,
``upload``/``write_into`` copy the caller's array into a pinned block before the DMA (so the
caller may reuse its array at once), and ``start_read`` reads into pinned blocks and copies out
in ``PendingRead.wait``. A host array that already lies in a pinned block (``_staging.acquire``
then ``Block.view``) is used as it is, without a copy, by every function here.
"""
from __future__ import annotations

import numpy as np

from . import dtypes as dt
from .._runtime import staging as _staging
from .array import Array
from .._runtime.capture_hooks import current as _capturing
from .._runtime.device import Device
from .._runtime.opencl import cl

CHUNK_BYTES = 4 << 20     # host staging granularity of copy_to_device
# pinned staging keeps at most this much of one transfer in flight (reads beyond it are
# enqueued as earlier chunks are consumed), so the pool stays bounded for large arrays
WINDOW_BYTES = 64 << 20


def _contiguous(x: Array) -> Array:
    if x.is_contiguous:
        return x
    from .prims import primitive
    return primitive("copy").bind(x)


def _pinned(device: Device) -> bool:
    return _staging.enabled(device) and _capturing() is None


class PendingRead:
    """A device-to-host copy in flight; ``wait()`` returns the NumPy array."""

    __slots__ = ("host", "events", "shape", "_staged")

    def __init__(self, host: np.ndarray, events: list, shape: tuple[int, ...],
                 staged: "_StagedRead | None" = None):
        self.host, self.events, self.shape = host, events, shape
        self._staged = staged

    def wait(self) -> np.ndarray:
        if self._staged is not None:
            self._staged.finish(self.host)
            self._staged = None
        if self.events:
            cl.wait_for_events(self.events)
            self.events = []
        return self.host.reshape(self.shape)

    def __del__(self) -> None:   # never waited for: the blocks still go back to the pool
        st = getattr(self, "_staged", None)
        if st is not None:
            st.abandon()


class _StagedRead:
    """A read through pinned blocks, chunk by chunk: at most ``WINDOW_BYTES`` in flight; the
    rest is enqueued while ``finish`` copies the earlier chunks out."""

    def __init__(self, x: Array, chunk_bytes: int):
        self.x = x
        self.nbytes = x.nbytes
        self.off = x._offset * x.dtype.itemsize
        self.step = max(int(chunk_bytes), 1)
        self.los = list(range(0, self.nbytes, self.step))
        self.window = max(2, WINDOW_BYTES // self.step)
        self.inflight: list[tuple[int, _staging.Block, cl.Event]] = []
        self.next = 0
        while self.next < len(self.los) and len(self.inflight) < self.window:
            self._enqueue(None)

    def _enqueue(self, block: "_staging.Block | None") -> None:
        lo = self.los[self.next]
        n = min(self.step, self.nbytes - lo)
        b = block if block is not None and block.nbytes >= n else \
            _staging.acquire(self.x.device, n)
        if block is not None and b is not block:
            _staging.release(block)
        ev = cl.enqueue_copy(self.x.device.queue, b.host[:n], self.x._buf,
                             src_offset=self.off + lo, is_blocking=False)
        b.track(ev)
        self.inflight.append((lo, b, ev))
        self.next += 1

    def finish(self, out: np.ndarray) -> None:
        dst = out.reshape(-1).view(np.uint8)
        while self.inflight:
            lo, b, ev = self.inflight.pop(0)
            ev.wait()
            n = min(self.step, self.nbytes - lo)
            dst[lo:lo + n] = b.host[:n]
            if self.next < len(self.los):
                self._enqueue(b)       # the block is free again: the next chunk goes into it
            else:
                _staging.release(b)

    def abandon(self) -> None:
        for _, b, _ in self.inflight:
            _staging.release(b)     # reused only once the read has completed
        self.inflight = []


def start_read(x: Array, out: np.ndarray | None = None) -> PendingRead:
    """Enqueue a non-blocking copy of ``x`` to the host (into ``out``, a C-contiguous array of
    ``x``'s size and dtype, if given) and return without waiting.

    With pinned staging (``clnp._runtime.staging.enabled``) the data goes through pinned blocks and is
    copied into ``out`` by ``wait()``, unless ``out`` itself lies in a pinned block."""
    x = _contiguous(x)
    host = np.empty(x.size, x.dtype) if out is None else out.reshape(-1)
    if host.size != x.size or host.dtype != x.dtype:
        raise ValueError(f"start_read: out has {host.size} {host.dtype} elements for an array "
                         f"of {x.size} {x.dtype}")
    if x.size == 0:
        return PendingRead(host, [], x.shape)
    block = _staging.block_of(host)
    if block is None and _pinned(x.device):
        return PendingRead(host, [], x.shape, _StagedRead(x, CHUNK_BYTES))
    ev = cl.enqueue_copy(x.device.queue, host, x._buf,
                         src_offset=x._offset * x.dtype.itemsize, is_blocking=False)
    if block is not None:
        block.track(ev)
    return PendingRead(host, [ev], x.shape)


def _write(dst: Array, byte_offset: int, host: np.ndarray) -> None:
    """Enqueue ``host`` (any layout, ``dst``'s dtype) into ``dst``'s buffer at
    ``byte_offset``, without waiting; through a pinned block where staging is on."""
    dev = dst.device
    block = _staging.block_of(host) if host.flags.c_contiguous else None
    if block is None and _pinned(dev):
        block = _staging.acquire(dev, host.nbytes)
        src = block.view(host.shape, host.dtype)
        np.copyto(src, host, casting="no")
        ev = cl.enqueue_copy(dev.queue, dst._buf, src, dst_offset=byte_offset,
                             is_blocking=False)
        block.track(ev)
        _staging.release(block)          # reused once this write has completed
    else:
        ev = cl.enqueue_copy(dev.queue, dst._buf, np.ascontiguousarray(host),
                             dst_offset=byte_offset, is_blocking=False)
        if block is not None:
            block.track(ev)
    dev.keep_until_done(ev)


def upload(host: np.ndarray, device: Device, *, owned: bool = False) -> Array:
    """A new array on ``device`` holding ``host``, copied without waiting. ``owned=True``
    promises that the caller never modifies ``host`` again (no private host copy is made);
    with pinned staging the host data is copied into a pinned block either way (and a host
    array lying in a pinned block is written from directly)."""
    staged = _pinned(device) or _staging.block_of(host) is not None
    if not staged and (not owned or not host.flags.c_contiguous):
        return Array.from_numpy(host, device)
    if staged and (host.dtype.kind not in "biufc" or dt.as_dtype(host.dtype) != host.dtype):
        return Array.from_numpy(host, device)      # it converts the dtype
    out = Array.empty(host.shape, host.dtype, device)
    if host.size:
        _write(out, 0, host)
    return out


def write_into(dst: Array, start: int, host: np.ndarray) -> None:
    """Copy ``host`` (C-contiguous, ``dst``'s dtype, never modified afterwards) into the
    contiguous array ``dst`` from flat element ``start`` on, without waiting."""
    if not dst.is_contiguous or host.dtype != dst.dtype or not host.flags.c_contiguous:
        raise ValueError("write_into: needs a contiguous destination and a C-contiguous host "
                         "array of the same dtype")
    if start < 0 or start + host.size > dst.size:
        raise ValueError(f"write_into: elements [{start}, {start + host.size}) fall outside "
                         f"an array of {dst.size}")
    if host.size:
        _write(dst, (dst._offset + start) * dst.dtype.itemsize, host)


def copy_to_device(x: Array, device: Device, chunk_bytes: int = CHUNK_BYTES) -> Array:
    """A copy of ``x`` on ``device``: one ``clEnqueueCopyBuffer`` within a context, else
    staged through host memory in chunks whose reads and writes overlap (through pinned
    blocks of the source device where staging is on, each chunk written from the block it
    was read into)."""
    x = _contiguous(x)
    out = Array.empty(x.shape, x.dtype, device)
    nbytes = x.nbytes
    if nbytes == 0:
        return out
    off = x._offset * x.dtype.itemsize
    if x.device.context == device.context:
        other = x.device is not device     # two devices of a shared context
        waits = [cl.enqueue_marker(x.device.queue)] if other else None   # x is written
        ev = cl.enqueue_copy(device.queue, out._buf, x._buf, src_offset=off,
                             byte_count=nbytes, wait_for=waits)
        if other:   # x's memory is not reused by its device before the copy has read it
            cl.enqueue_barrier(x.device.queue, wait_for=[ev])
        device.keep_until_done(ev)
        return out
    step = max(int(chunk_bytes), 1)
    if _pinned(x.device) or _pinned(device):
        _copy_pinned(x, off, out, device, step)
        return out
    host = np.empty(nbytes, np.uint8)
    reads = [(lo, cl.enqueue_copy(x.device.queue, host[lo:lo + step], x._buf,
                                  src_offset=off + lo, is_blocking=False))
             for lo in range(0, nbytes, step)]
    for lo, ev in reads:
        ev.wait()
        device.keep_until_done(cl.enqueue_copy(device.queue, out._buf, host[lo:lo + step],
                                               dst_offset=lo, is_blocking=False))
    return out


def _copy_pinned(x: Array, off: int, out: Array, device: Device, step: int) -> None:
    """``copy_to_device`` through pinned blocks: at most ``WINDOW_BYTES`` of reads in
    flight; each chunk's block goes back to the pool after its write is enqueued (reused once
    the write has completed)."""
    nbytes = x.nbytes
    los = list(range(0, nbytes, step))
    window = max(2, WINDOW_BYTES // step)
    inflight: list[tuple[int, _staging.Block, cl.Event]] = []
    nxt = 0
    while nxt < len(los) or inflight:
        while nxt < len(los) and len(inflight) < window:
            lo = los[nxt]
            n = min(step, nbytes - lo)
            b = _staging.acquire(x.device, n)
            ev = cl.enqueue_copy(x.device.queue, b.host[:n], x._buf, src_offset=off + lo,
                                 is_blocking=False)
            b.track(ev)
            inflight.append((lo, b, ev))
            nxt += 1
        lo, b, ev = inflight.pop(0)
        ev.wait()
        n = min(step, nbytes - lo)
        w = cl.enqueue_copy(device.queue, out._buf, b.host[:n], dst_offset=lo,
                            is_blocking=False)
        b.track(w)
        device.keep_until_done(w)
        _staging.release(b)


__all__ = ["start_read", "upload", "write_into", "copy_to_device", "PendingRead", "CHUNK_BYTES"]
