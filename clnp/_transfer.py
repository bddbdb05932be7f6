"""Moving whole arrays between devices and the host without serialising the queues.

Every ``clnp.Device`` has its own OpenCL context, so a buffer of one device cannot be named in
another's queue: data between devices goes through host memory. These helpers keep that
asynchronous: ``start_read`` enqueues a non-blocking device-to-host copy and returns at once
(so reads from several devices run together), ``upload`` a non-blocking host-to-device copy,
and ``copy_to_device`` pipelines the two in chunks (the read of chunk k+1 overlaps the write of
chunk k). Where two arrays share a context (the same device, or two devices of one platform
under ``CLNP_SHARED_CONTEXT=1``) the copy is one ``clEnqueueCopyBuffer``, ordered after the
source device's queued work by a marker event, without a host wait. This module and ``clnp._array`` are the only places above the runtime
that name OpenCL buffers.
"""
from __future__ import annotations

import numpy as np
import pyopencl as cl

from ._array import Array
from ._runtime import Device

CHUNK_BYTES = 4 << 20     # host staging granularity of copy_to_device


def _contiguous(x: Array) -> Array:
    if x.is_contiguous:
        return x
    from clnp._prims import primitive
    return primitive("copy").bind(x)


class PendingRead:
    """A device-to-host copy in flight; ``wait()`` returns the NumPy array."""

    __slots__ = ("host", "events", "shape")

    def __init__(self, host: np.ndarray, events: list, shape: tuple[int, ...]):
        self.host, self.events, self.shape = host, events, shape

    def wait(self) -> np.ndarray:
        if self.events:
            cl.wait_for_events(self.events)
            self.events = []
        return self.host.reshape(self.shape)


def start_read(x: Array, out: np.ndarray | None = None) -> PendingRead:
    """Enqueue a non-blocking copy of ``x`` to the host (into ``out``, a C-contiguous array of
    ``x``'s size and dtype, if given) and return without waiting."""
    x = _contiguous(x)
    host = np.empty(x.size, x.dtype) if out is None else out.reshape(-1)
    if host.size != x.size or host.dtype != x.dtype:
        raise ValueError(f"start_read: out has {host.size} {host.dtype} elements for an array "
                         f"of {x.size} {x.dtype}")
    if x.size == 0:
        return PendingRead(host, [], x.shape)
    ev = cl.enqueue_copy(x.device.queue, host, x._buf,
                         src_offset=x._offset * x.dtype.itemsize, is_blocking=False)
    return PendingRead(host, [ev], x.shape)


def upload(host: np.ndarray, device: Device, *, owned: bool = False) -> Array:
    """A new array on ``device`` holding ``host``, copied without waiting. ``owned=True``
    promises that the caller never modifies ``host`` again (no private host copy is made)."""
    if not owned or not host.flags.c_contiguous:
        return Array.from_numpy(host, device)
    out = Array.empty(host.shape, host.dtype, device)
    if host.size:
        device.keep_until_done(cl.enqueue_copy(device.queue, out._buf, host,
                                               is_blocking=False))
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
        dev = dst.device
        dev.keep_until_done(cl.enqueue_copy(
            dev.queue, dst._buf, host, dst_offset=(dst._offset + start) * dst.dtype.itemsize,
            is_blocking=False))


def copy_to_device(x: Array, device: Device, chunk_bytes: int = CHUNK_BYTES) -> Array:
    """A copy of ``x`` on ``device``: one ``clEnqueueCopyBuffer`` within a context, else
    staged through host memory in chunks whose reads and writes overlap."""
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
    host = np.empty(nbytes, np.uint8)
    step = max(int(chunk_bytes), 1)
    reads = [(lo, cl.enqueue_copy(x.device.queue, host[lo:lo + step], x._buf,
                                  src_offset=off + lo, is_blocking=False))
             for lo in range(0, nbytes, step)]
    for lo, ev in reads:
        ev.wait()
        device.keep_until_done(cl.enqueue_copy(device.queue, out._buf, host[lo:lo + step],
                                               dst_offset=lo, is_blocking=False))
    return out


__all__ = ["start_read", "upload", "write_into", "copy_to_device", "PendingRead", "CHUNK_BYTES"]
