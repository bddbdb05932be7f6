"""Arrays in memory that is costly to create: slots carved out of large chunks, reused.

Some device memory is far dearer to create than a pooled OpenCL buffer. Memory shared with
CUDA (:mod:`clnp._runtime.cuda_memory`) takes a CUDA allocation, an export, a mapping and
an OpenCL import per allocation, and comes in units of the driver's granularity (2 MiB on an
H200), so giving each small array one of its own would cost both time and memory. An arena
cuts chunks of such memory into slots of a few sizes and hands out each slot as an OpenCL
sub-buffer, made once and reused for as long as the chunk lives.

A slot is handed back when nothing outside the arena holds its buffer any more. PyOpenCL's
buffers take no weak references and its pool takes no Python allocator, so the arena cannot
be told when the last array of a slot goes; it counts the references to the slot's buffer
instead (``sys.getrefcount``) in a sweep. Sweeps run when a size has no free slot and,
since the last sweep, more memory was handed out than half of what was live after it (so
the memory held stays within about 1.5 times what is live) or more slots than an eighth of
those live after it (a new slot is an OpenCL sub-buffer, which took ~35 us on an H200,
where a sweep looks at a slot in well under a microsecond). Either way a sweep's cost is
spread over the slots handed out since the one before.

As with PyOpenCL's pool, a slot may be handed out again while kernels queued on it before
are still running: every user of the memory must be on the device's one in-order queue, or
must have finished with it (work of other APIs on the memory, such as CUDA kernels reading
a DLPack export, is ordered by whoever hands the memory across).
"""
from __future__ import annotations

import bisect
import sys
import threading
from typing import Any, Callable, Protocol

__all__ = ["Backing", "SlotArena", "size_class"]

# chunks of slots this size or smaller are carved into several slots; larger requests get a
# chunk of their own (still reused by size class)
_CARVE_MAX = 1 << 20
_CHUNK_BYTES = 4 << 20
_CLASSES_KEPT = 4096              # request sizes whose slot size is remembered


class Backing(Protocol):
    """One chunk of memory: its OpenCL ``buffer``, its ``size`` in bytes, its ``address``
    in another API (0 where there is none), and ``free()``."""

    buffer: Any
    size: int
    address: int

    def free(self) -> None: ...


def size_class(nbytes: int, align: int) -> int:
    """The slot size that serves ``nbytes``: the next of 2^k x {1, 1.25, 1.5, 1.75}, at
    least ``align``, and a multiple of it (so every slot of a chunk starts aligned).

    Examples
    --------
    >>> from clnp._runtime.slot_arena import size_class
    >>> [size_class(n, 128) for n in (1, 128, 129, 1000, 1 << 20)]
    [128, 128, 256, 1024, 1048576]
    """
    n = max(int(nbytes), 1)
    top = 1 << max(n - 1, 1).bit_length()          # the power of two at or above n
    step = max(top // 8, 1)                        # quarters of the octave below it
    size = top if top <= 4 else -(-n // step) * step
    return -(-max(size, align) // align) * align


class _Chunk:
    __slots__ = ("backing", "slot_size", "slots")

    def __init__(self, backing: Backing, slot_size: int):
        self.backing, self.slot_size = backing, slot_size
        self.slots: list[_Slot] = []                # made when first used, in address order


class _Slot:
    __slots__ = ("buffer", "chunk", "offset", "size", "idle_refs", "lent")

    def __init__(self, buffer: Any, chunk: _Chunk, offset: int, size: int, whole: bool):
        self.buffer, self.chunk, self.offset, self.size = buffer, chunk, offset, size
        # a lent slot is idle when only the slot (and the chunk's backing, for a slot that is
        # the whole chunk) and getrefcount's argument hold its buffer
        self.idle_refs = 3 if whole else 2
        self.lent = False


class SlotArena:
    """Slots of ``make_backing(nbytes)`` chunks, handed out as buffers by :meth:`take`.

    Parameters
    ----------
    make_backing : callable
        ``make_backing(nbytes)`` returns a :class:`Backing` of at least ``nbytes``.
    align : int
        Bytes every slot's start is a multiple of (the device's ``mem_base_addr_align``).
    granularity : int
        The backing's unit: chunk sizes are rounded up to it.

    Examples
    --------
    >>> import pyopencl as cl, clnp
    >>> from clnp._runtime.slot_arena import SlotArena
    >>> d = clnp.default_device()
    >>> class Plain:
    ...     def __init__(self, n):
    ...         self.size, self.address = n, 0
    ...         self.buffer = cl.Buffer(d.context, cl.mem_flags.READ_WRITE, n)
    ...     def free(self):
    ...         self.buffer = None
    >>> arena = SlotArena(Plain, align=d.host_ptr_align, granularity=4096)
    >>> b = arena.take(1000)
    >>> b.size >= 1000, arena.info()["in_use"] >= 1000
    (True, True)
    """

    def __init__(self, make_backing: Callable[[int], Backing], *, align: int, granularity: int):
        self._make = make_backing
        self.align, self.granularity = max(int(align), 1), max(int(granularity), 1)
        self._lock = threading.Lock()
        self._free: dict[int, list[_Slot]] = {}     # slot size -> free slots
        self._open: dict[int, _Chunk] = {}          # slot size -> chunk with slots to carve
        self._lent: list[_Slot] = []
        self._chunks: dict[int, _Chunk] = {}        # id(backing) -> chunk
        self._by_address: list[tuple[int, int, _Chunk]] = []   # (start, end, chunk), sorted
        self._by_handle: dict[int, _Slot] = {}      # cl_mem handle -> slot
        self.lent_bytes = 0
        self.held_bytes = 0                         # bytes of every chunk
        self._since_sweep = 0
        self._taken_since_sweep = 0
        self._live_after_sweep = 0
        self._count_after_sweep = 0
        self._classes: dict[int, int] = {}         # nbytes -> size_class, memoised (bounded)
        self.sweeps = 0

    # ------------------------------------------------------------------ handing out
    def take(self, nbytes: int) -> Any:
        """A buffer of at least ``nbytes`` bytes (a slot's sub-buffer, or a whole chunk)."""
        size = self._classes.get(nbytes)
        if size is None:
            if len(self._classes) >= _CLASSES_KEPT:     # a program sweeping sizes
                self._classes.clear()
            size = self._classes[nbytes] = size_class(nbytes, self.align)
        with self._lock:
            free = self._free.get(size)
            if not free and (
                    self._since_sweep > max(self._live_after_sweep // 2, _CHUNK_BYTES) or
                    8 * self._taken_since_sweep >= self._count_after_sweep):
                self._sweep()
                free = self._free.get(size)
            slot = free.pop() if free else self._carve(size)
            slot.lent = True
            self._lent.append(slot)
            self.lent_bytes += size
            self._since_sweep += size
            self._taken_since_sweep += 1
            return slot.buffer

    def _carve(self, size: int) -> _Slot:
        chunk = self._open.get(size)
        if chunk is None:
            nbytes = size if size > _CARVE_MAX else max(_CHUNK_BYTES, size)
            nbytes = -(-nbytes // self.granularity) * self.granularity
            backing = self._make(nbytes)
            chunk = _Chunk(backing, size)
            self._chunks[id(backing)] = chunk
            if backing.address:
                bisect.insort(self._by_address, (backing.address, backing.address + backing.size,
                                                 chunk), key=lambda e: e[0])
            self.held_bytes += backing.size
            self._open[size] = chunk
        carved = len(chunk.slots)
        offset = carved * size
        whole = carved == 0 and chunk.backing.size < 2 * size
        buffer = chunk.backing.buffer if whole else \
            chunk.backing.buffer.get_sub_region(offset, size)
        slot = _Slot(buffer, chunk, offset, size, whole)
        chunk.slots.append(slot)
        if (carved + 2) * size > chunk.backing.size:
            del self._open[size]                    # full: the next take of this size opens one
        self._by_handle[buffer.int_ptr] = slot
        return slot

    # ------------------------------------------------------------------ taking back
    def _sweep(self) -> None:
        still: list[_Slot] = []
        for slot in self._lent:
            if sys.getrefcount(slot.buffer) <= slot.idle_refs:
                slot.lent = False
                self._free.setdefault(slot.size, []).append(slot)
                self.lent_bytes -= slot.size
            else:
                still.append(slot)
        self._lent = still
        self._since_sweep = self._taken_since_sweep = 0
        self._live_after_sweep = self.lent_bytes
        self._count_after_sweep = len(still)
        self.sweeps += 1

    def sweep(self) -> None:
        """Take back every slot nothing outside the arena holds."""
        with self._lock:
            self._sweep()

    def free_unused(self) -> int:
        """Sweep, then give back every chunk none of whose slots is lent; returns the bytes
        given back."""
        with self._lock:
            self._sweep()
            busy = {id(s.chunk) for s in self._lent}
            gone = [c for c in self._chunks.values() if id(c) not in busy]
            for c in gone:
                del self._chunks[id(c.backing)]
                for s in c.slots:
                    self._by_handle.pop(s.buffer.int_ptr, None)
                free = self._free.get(c.slot_size, [])
                self._free[c.slot_size] = [s for s in free if s.chunk is not c]
                if self._open.get(c.slot_size) is c:
                    del self._open[c.slot_size]
                self._by_address = [e for e in self._by_address if e[2] is not c]
                self.held_bytes -= c.backing.size
            given = 0
            for c in gone:
                for s in c.slots:
                    s.buffer = None
                given += c.backing.size
                c.backing.free()
            return given

    # ------------------------------------------------------------------ lookups
    def address_of(self, buffer: Any) -> int | None:
        """The other API's address of ``buffer``'s first byte, if it is one of this arena's
        buffers and its chunk has one; else None."""
        slot = self._by_handle.get(buffer.int_ptr)
        if slot is None or not slot.chunk.backing.address:
            return None
        return slot.chunk.backing.address + slot.offset

    def buffer_at(self, address: int) -> tuple[Any, int] | None:
        """The lent buffer holding the other API's ``address`` and the byte offset of the
        address in it, or None where no lent slot holds it."""
        with self._lock:
            i = bisect.bisect_right(self._by_address, address, key=lambda e: e[0]) - 1
            if i < 0 or not self._by_address[i][0] <= address < self._by_address[i][1]:
                return None
            chunk = self._by_address[i][2]
            k = (address - self._by_address[i][0]) // chunk.slot_size
            if k >= len(chunk.slots):
                return None
            slot = chunk.slots[k]
            if not slot.lent:
                return None
            return slot.buffer, address - self._by_address[i][0] - slot.offset

    def info(self) -> dict[str, int]:
        """``in_use`` (bytes lent, as of the last sweep for slots since let go), ``pooled``
        (held beyond those), ``lent_slots``, ``free_slots`` (made and free), ``chunks`` and
        ``sweeps``."""
        with self._lock:
            return {"in_use": self.lent_bytes, "pooled": self.held_bytes - self.lent_bytes,
                    "lent_slots": len(self._lent),
                    "free_slots": sum(len(v) for v in self._free.values()),
                    "chunks": len(self._chunks), "sweeps": self.sweeps}
