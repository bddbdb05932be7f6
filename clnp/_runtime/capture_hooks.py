"""The hooks of launch capture (``clnp._core.capture``), kept free of imports so that the runtime
and the eager hot paths can call them: each is one thread-local lookup when nothing records."""
from __future__ import annotations

import threading
from typing import Any, Sequence

import numpy as np


class _State(threading.local):
    """Per thread: the recording in progress. A class default, not ``getattr(..., None)``:
    on a thread that never recorded, a missing thread-local attribute costs an exception
    inside ``getattr`` (0.67 against 0.12 us per check; every launch path checks)."""
    rec: "Recording | None" = None


_STATE = _State()


class Recording:
    """What one eager call enqueued (filled in by the hooks while it runs)."""

    __slots__ = ("launches", "uploads", "checks", "readback", "allocated")

    def __init__(self) -> None:
        self.launches: list[tuple] = []   # (kernel, gsize, lsize, args | None, {pos: buf})
        self.uploads: list[tuple] = []    # (index in launches, dst buffer, host copy)
        # (index in launches, device_checks.FlagCheck): flags read after those launches
        self.checks: list[tuple] = []
        self.readback = False
        self.allocated: set[int] = set()  # ids of the buffers allocated during the call


def current() -> Recording | None:
    """The recording in progress on this thread, if any (the hooks' fast check)."""
    return _STATE.rec


def note_launch(kernel: Any, gsize: Any, lsize: Any, args: Sequence[Any]) -> None:
    rec = _STATE.rec
    if rec is not None:
        rec.launches.append((kernel, gsize, lsize, list(args), None))


def note_preset_launch(kernel: Any, gsize: Any, lsize: Any, bufs: dict[int, Any]) -> None:
    """A launch of a private kernel object whose scalar arguments were set once; only the
    buffers at ``bufs``' positions change between calls."""
    rec = _STATE.rec
    if rec is not None:
        rec.launches.append((kernel, gsize, lsize, None, dict(bufs)))


class HostCall:
    """A computation the host runs on buffers of a device whose memory it shares, in the
    device queue's order (``run_on_host(*bufs)``: it waits for the work queued before, as a
    map does, and what it writes is there for the work queued after). A product in the
    host's BLAS is one (``clnp._routines.host_blas``). Captures record it as a step of its
    own, and replays run it again on their buffers."""

    __slots__ = ()

    def run_on_host(self, *bufs: Any) -> None:
        raise NotImplementedError


def note_host_call(call: HostCall, bufs: Sequence[Any]) -> None:
    """``call.run_on_host(*bufs)`` is being made; a replay makes it on its buffers."""
    rec = _STATE.rec
    if rec is not None:
        rec.launches.append((call, None, None, list(bufs), None))


def note_upload(buf: Any, host: np.ndarray) -> None:
    rec = _STATE.rec
    if rec is not None:
        rec.uploads.append((len(rec.launches), buf, host))


def note_check(check: Any) -> bool:
    """Record a device flag check (``clnp._core.device_checks``) for the end of the call
    being captured; False when nothing records (the caller checks at once)."""
    rec = _STATE.rec
    if rec is None:
        return False
    rec.checks.append((len(rec.launches), check))
    return True


def note_alloc(buf: Any) -> None:
    rec = _STATE.rec
    if rec is not None:
        rec.allocated.add(id(buf))


def note_readback() -> None:
    rec = _STATE.rec
    if rec is not None:
        rec.readback = True
