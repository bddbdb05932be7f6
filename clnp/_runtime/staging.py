"""Pinned (page-locked) host staging buffers, a small reused pool per device.

GPU drivers copy between a device and host memory at DMA speed only when the host side is
page-locked; from ordinary (pageable) NumPy memory NVIDIA's OpenCL driver reaches a fraction
of that (2-5 GB/s on an H200, bench/results/parallel-nvidia-h200-x2.csv). OpenCL's way to get
page-locked memory is a buffer created with ``CL_MEM_ALLOC_HOST_PTR`` and mapped: the mapped
pointer, kept mapped, is the host side of ``clEnqueueRead/WriteBuffer`` (``clnp._core.transfer``).

Blocks are rounded up to powers of two (at least 64 KiB) and reused: a block given back with
transfers still in flight is handed out again only once they have completed. Blocks handed
out are never limited (a caller never waits for another caller's release); what the pool
*keeps* for reuse is bounded by ``CLNP_PINNED_POOL_MB`` per device (default 256), and
``clnp.release_memory`` (or the device running out of memory) frees the idle blocks.

Where pinned staging is used: ``CLNP_PINNED=1`` on every device, ``0`` nowhere, unset (or
``auto``) on every device that is not a CPU (on a CPU device host memory already is the
device's memory: staging would only add a copy). ``FORCE`` overrides the variable (tests).
"""
from __future__ import annotations

import os
import threading
from typing import Any

import numpy as np

from .device import Device, on_memory_pressure
from .opencl import cl

MIN_BLOCK = 64 << 10
DEFAULT_POOL_MB = 256
#: True/False: use (or not) pinned staging on every device, whatever ``CLNP_PINNED`` says
FORCE: bool | None = None

_DONE = 0      # CL_COMPLETE: cl.command_execution_status.COMPLETE, read without the import


def enabled(device: Device) -> bool:
    """Whether transfers with ``device`` stage through pinned host memory."""
    if FORCE is not None:
        return FORCE
    v = os.environ.get("CLNP_PINNED", "auto").strip().lower()
    if v in ("0", "false", "no", "off"):
        return False
    if v in ("1", "true", "yes", "on"):
        return True
    return not device.is_cpu


def _pool_limit() -> int:
    try:
        return int(float(os.environ.get("CLNP_PINNED_POOL_MB", DEFAULT_POOL_MB)) * (1 << 20))
    except ValueError:
        return DEFAULT_POOL_MB << 20


class Block:
    """One pinned host block of ``device``'s pool: ``host`` is its mapped memory (uint8).

    Transfers that read or write ``host`` are registered with :meth:`track`; the block is
    reused only after they have completed.
    """

    __slots__ = ("device", "nbytes", "host", "ptr", "events", "_buf", "_pinned")

    def __init__(self, device: Device, nbytes: int, queue: Any):
        self.device, self.nbytes, self.events = device, nbytes, []
        self._buf: Any = None
        self._pinned = False
        try:
            buf = cl.Buffer(device.context,
                            cl.mem_flags.READ_WRITE | cl.mem_flags.ALLOC_HOST_PTR, nbytes)
            host, _ = cl.enqueue_map_buffer(queue, buf, cl.map_flags.READ | cl.map_flags.WRITE,
                                            0, (nbytes,), np.uint8, is_blocking=True)
            self._buf, self.host, self._pinned = buf, host, True
        except cl.Error:    # the driver cannot pin this much: ordinary memory still works
            self.host = np.empty(nbytes, np.uint8)
        self.ptr = int(self.host.ctypes.data)

    def view(self, shape: tuple[int, ...] | int, dtype: Any) -> np.ndarray:
        """The first bytes of the block as a C-contiguous array of ``shape`` and ``dtype``."""
        dtype = np.dtype(dtype)
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        n = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        return self.host[:n].view(dtype).reshape(shape)

    def track(self, event: Any) -> None:
        """Keep the block from reuse until ``event`` (a transfer using it) has completed."""
        if len(self.events) > 8:
            self.idle()
        self.events.append(event)

    def idle(self) -> bool:
        self.events = [e for e in self.events if e.command_execution_status != _DONE]
        return not self.events

    def wait(self) -> None:
        for e in self.events:     # one by one: they may belong to different contexts
            e.wait()
        self.events = []

    def destroy(self, queue: Any) -> None:
        self.wait()
        if self._pinned:
            self.host.base.release(queue)
            queue.finish()
            self._buf.release()
            self._pinned = False


class _Pool:
    def __init__(self, device: Device):
        self.device = device
        self.lock = threading.Lock()
        self.free: list[Block] = []
        self.live: dict[int, Block] = {}     # by host address: every block, out or free
        self.total = 0
        self._queue: Any = None

    @property
    def queue(self) -> Any:   # its own queue: mapping never waits for queued compute
        if self._queue is None:
            self._queue = cl.CommandQueue(self.device.context, self.device.cl_device)
        return self._queue

    def acquire(self, nbytes: int) -> Block:
        size = max(MIN_BLOCK, 1 << max(int(nbytes) - 1, 0).bit_length())
        with self.lock:
            fits = sorted((b for b in self.free if b.nbytes >= size), key=lambda b: b.nbytes)
            for b in fits:
                if b.nbytes <= 4 * size and b.idle():
                    self.free.remove(b)
                    return b
            if fits and fits[0].nbytes <= 4 * size and self.total + size > _pool_limit():
                b = fits[0]       # at the bound: wait for a busy block instead of growing
                self.free.remove(b)
                b.wait()
                return b
            b = Block(self.device, size, self.queue)
            self.live[b.ptr] = b
            self.total += size
            self._trim(_pool_limit(), busy_too=False)
            return b

    def release(self, block: Block) -> None:
        with self.lock:
            self.free.append(block)
            self._trim(_pool_limit())

    def _trim(self, limit: int, busy_too: bool = True) -> None:
        """Free kept blocks, idle ones first (largest first), until the pool holds at most
        ``limit`` bytes; busy ones (waiting for their transfers) only if ``busy_too``."""
        self.free.sort(key=lambda b: (not b.idle(), -b.nbytes))
        while self.free and self.total > max(limit, 0):
            if not busy_too and self.free[0].events:
                break
            self._drop(self.free.pop(0))

    def _drop(self, b: Block) -> None:
        self.live.pop(b.ptr, None)
        self.total -= b.nbytes
        b.destroy(self.queue)

    def free_idle(self) -> None:
        with self.lock:
            for b in [b for b in self.free if b.idle()]:
                self.free.remove(b)
                self._drop(b)

    def owner(self, ptr: int, nbytes: int) -> Block | None:
        for b in list(self.live.values()):
            if b.ptr <= ptr and ptr + nbytes <= b.ptr + b.nbytes:
                return b
        return None


_POOLS: dict[Device, _Pool] = {}
_LOCK = threading.Lock()


def _pool(device: Device) -> _Pool:
    p = _POOLS.get(device)
    if p is None:
        with _LOCK:
            p = _POOLS.setdefault(device, _Pool(device))
    return p


def acquire(device: Device, nbytes: int) -> Block:
    """A pinned block of at least ``nbytes`` from ``device``'s pool (give it back with
    :func:`release` once the transfers using it are enqueued and tracked)."""
    return _pool(device).acquire(nbytes)


def release(block: Block) -> None:
    """Give ``block`` back; it is reused once its tracked transfers have completed."""
    _pool(block.device).release(block)


def block_of(a: np.ndarray) -> Block | None:
    """The pinned block holding all of ``a``'s memory (a view of one), else None."""
    if not _POOLS or not isinstance(a, np.ndarray):
        return None
    ptr, n = int(a.ctypes.data), a.nbytes
    for p in list(_POOLS.values()):
        b = p.owner(ptr, n)
        if b is not None:
            return b
    return None


def pooled_bytes(device: Device) -> int:
    """Bytes of pinned blocks ``device``'s pool holds (handed out and kept for reuse)."""
    p = _POOLS.get(device)
    return p.total if p is not None else 0


def free_idle(device: Device | None = None) -> None:
    """Free the idle blocks kept for reuse (of ``device``, or of every device)."""
    for d, p in list(_POOLS.items()):
        if device is None or d is device:
            p.free_idle()


on_memory_pressure(free_idle)

__all__ = ["Block", "acquire", "release", "block_of", "enabled", "free_idle", "pooled_bytes",
           "FORCE", "MIN_BLOCK"]
