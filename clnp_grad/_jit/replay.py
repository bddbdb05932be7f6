"""Whole-call replay: a compiled call's launches recorded once and enqueued again as a list.

An executable's call walks its steps: it allocates every intermediate from the pool, binds
the buffers of each bound kernel and enqueues it. For a small step (the MLP training step of
``bench/bench_jit.py``: 23 launches) that Python costs as much as the launches themselves, and
on NVIDIA's OpenCL each enqueue already costs ~10 us of driver time. So an executable's second
call is recorded with ``clnp._core.capture`` (the same mechanism that replays opaque primitives
inside a step), and later calls replay the recording: the outputs are allocated, the inputs'
and outputs' buffers bound, every launch enqueued; the intermediates keep the buffers of the
recorded call (TinyJit's trade: memory for host time).

What makes a call replayable, checked here and by ``capture`` itself:

- every input is an array (a weakly typed Python scalar is a kernel argument that changes
  per call) laid out as the executable was built for (offset 0, the planned strides);
- no input is donated (an output taking a donated buffer depends on who else holds it);
- nothing in the call reads data back to the host (host-driven control flow) or sets a
  scalar argument per call: ``capture`` refuses those;
- the intermediates' buffers fit in the device's replay budget (:data:`BUDGET_FRACTION` of
  its memory, at most :data:`BUDGET_MAX` bytes) together with every other live replay's.
  Replays past the budget are dropped least recently used first, as they are under memory
  pressure (``clnp.release_memory()``, a refused allocation): their executables record again
  on a later call.

The recorded call's intermediates each had a buffer of their own while it was recorded (the
recording holds them, so the pool could not hand one's memory to the next as the steps do).
Those the executable allocated for its steps' values (``note_value_buffer``; not scratch an
eager implementation keeps, which may hold state between calls) are packed afterwards by
their first and last launch, in the order of the launches, onto shared buffers: the replay
keeps about the memory the steps would use at their peak, and reuses it as they do (a chain
of six products keeps two buffers, not five; the MLP step of ``bench/bench_jit.py`` 7.8 MB
instead of 9.0 on PoCL, most of its values living until the backward pass reads them).

A replay enqueues a fixed list of kernels on buffers it keeps, so calls of one executable
are serialised by a lock: two threads interleaving their launches would share intermediates.
"""
from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from typing import Any, Callable, Sequence

from clnp._core import capture as _capture
from clnp._runtime import capture_hooks as _hooks
from clnp._core.array import Array
from clnp._runtime.device import Device, on_memory_pressure

# A device's live replays keep at most this many bytes of intermediates together, and at most
# this fraction of its global memory
BUDGET_MAX = 256 << 20
BUDGET_FRACTION = 1 / 16
# Switch for tests and measurements: False runs every call through the steps
ENABLED = True

_UNTRIED, _ACTIVE, _REFUSED = 0, 1, 2


class _Local(threading.local):
    ids: "set[int] | None" = None     # a recording's value buffers (note_value_buffer)


_LOCAL = _Local()


def note_value_buffer(buf: Any) -> None:
    """The executable allocated ``buf`` for a step's value (packed if a recording is
    running on this thread)."""
    ids = _LOCAL.ids
    if ids is not None:
        ids.add(id(buf))


def _pack(rep: _capture.Replay, values: set[int], device: Device) -> None:
    """Move the kept buffers of ``values`` onto shared ones (module docstring): each buffer
    takes the smallest free shared one that fits, freed after its last launch (one launch
    reading a buffer and writing another never gets the same one for both)."""
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    size: dict[int, int] = {}
    for i, b in rep.kept_buffers():
        key = id(b)
        if key in values:
            first.setdefault(key, i)
            last[key] = i
            size[key] = _capture._nbytes(b)
    if not first:
        return
    free: list[tuple[int, Any]] = []            # (bytes, shared buffer)
    busy: list[tuple[int, int, Any]] = []       # (last launch, bytes, shared buffer)
    mapping: dict[int, Any] = {}
    made = 0
    for key in sorted(first, key=lambda k: (first[k], k)):
        now = first[key]
        for item in [t for t in busy if t[0] < now]:
            busy.remove(item)
            free.append(item[1:])
        fits = [f for f in free if f[0] >= size[key]]
        if fits:
            pick = min(fits, key=lambda f: f[0])
            free.remove(pick)
        else:
            pick = (size[key], device.alloc(size[key]))
            made += size[key]
        mapping[key] = pick[1]
        busy.append((last[key],) + pick)
    rep.rebind(mapping)
    rep.kept_nbytes += made - sum(size.values())


class CallReplay:
    """The recorded launches of one executable's call, or why there are none.

    ``run(flat, steps_run)`` answers a call: through the replay when one is recorded and the
    call fits it, else by ``steps_run(flat)`` (recording that call when none was tried)."""

    __slots__ = ("device", "strides", "replay", "state", "lock", "__weakref__")

    def __init__(self, device: Device, strides: Sequence[tuple | None], replayable: bool):
        self.device = device
        self.strides = tuple(strides)        # the planned strides of each input (None: weak)
        self.replay: _capture.Replay | None = None
        self.state = _UNTRIED if replayable and None not in self.strides else _REFUSED
        self.lock = threading.RLock()

    def run(self, flat: Sequence[Any], steps_run: Callable[[Sequence[Any]], list]) -> list:
        with self.lock:
            rep = self.replay
            if rep is not None and self._fits(flat):
                _BUDGETS[self.device].touch(self)
                return rep(flat)
            if self.state == _UNTRIED and ENABLED and _hooks.current() is None and \
                    self._fits(flat) and len({id(a._buf) for a in flat}) == len(flat):
                return self._record(flat, steps_run)
            return steps_run(flat)

    def _fits(self, flat: Sequence[Any]) -> bool:
        """Every input an array in the layout the executable was built for."""
        for a, st in zip(flat, self.strides):
            if type(a) is not Array or a._offset or a._strides != st:
                return False
        return True

    def _record(self, flat: Sequence[Any], steps_run: Callable[[Sequence[Any]], list]) -> list:
        _LOCAL.ids = values = set()
        try:
            outs, rep = _capture.capture(lambda *xs: steps_run(xs), list(flat), self.device)
        finally:
            _LOCAL.ids = None
        if rep is not None:
            _pack(rep, values, self.device)
        if rep is None:
            self.state = _REFUSED          # reads back, or sets scalars per call
        elif _BUDGETS[self.device].admit(self, rep.kept_nbytes):
            self.replay, self.state = rep, _ACTIVE
        else:
            self.state = _REFUSED          # larger than the whole budget
        return list(outs)

    def drop(self) -> None:
        """Forget the recording (its buffers return to the pool); a later call records
        again."""
        with self.lock:
            self.replay = None
            if self.state == _ACTIVE:
                self.state = _UNTRIED


class _Budget:
    """A device's live replays, least recently used first, with their kept bytes (held
    weakly: a discarded executable's replay leaves the account with it)."""

    def __init__(self, device: Device):
        self.limit = min(BUDGET_MAX, int(device.global_mem * BUDGET_FRACTION))
        self.live: OrderedDict[int, tuple[Any, int]] = OrderedDict()
        # reentrant: a collected owner's weakref callback may run inside a locked section
        self.lock = threading.RLock()

    def touch(self, owner: CallReplay) -> None:
        key = id(owner)
        if key in self.live:
            self.live.move_to_end(key)

    def admit(self, owner: CallReplay, nbytes: int) -> bool:
        """Whether ``owner`` may keep ``nbytes``, dropping older replays to make room."""
        if nbytes > self.limit:
            return False
        with self.lock:
            used = sum(n for _, n in self.live.values())
            victims = []
            for key, (ref, n) in list(self.live.items()):
                if used + nbytes <= self.limit:
                    break
                victims.append(ref())
                del self.live[key]
                used -= n
            key = id(owner)
            self.live[key] = (weakref.ref(owner, lambda _, k=key: self._gone(k)), nbytes)
        for v in victims:
            if v is not None:
                v.drop()
        return True

    def _gone(self, key: int) -> None:
        with self.lock:
            self.live.pop(key, None)

    def clear(self) -> None:
        with self.lock:
            owners = [r() for r, _ in self.live.values()]
            self.live.clear()
        for o in owners:
            if o is not None:
                o.drop()

    def kept_bytes(self) -> int:
        return sum(n for _, n in self.live.values())


class _Budgets(dict):
    _lock = threading.Lock()

    def __missing__(self, device: Device) -> _Budget:
        with self._lock:        # one account per device, also when threads ask at once
            b = dict.get(self, device)
            if b is None:
                b = self[device] = _Budget(device)
        return b


_BUDGETS: dict[Device, _Budget] = _Budgets()


def kept_bytes(device: Device) -> int:
    """Bytes of intermediates the live replays on ``device`` keep."""
    b = _BUDGETS.get(device)
    return b.kept_bytes() if b is not None else 0


def release(device: Device | None = None) -> None:
    """Drop the live replays (of ``device``, or of every device): their buffers go back to
    the pool, and their executables record again on a later call."""
    for d, b in list(_BUDGETS.items()):
        if device is None or d is device:
            b.clear()


on_memory_pressure(release)
