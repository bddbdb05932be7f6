"""Errors found by kernels: a device-side flag, read after the launch that sets it.

An eager call that validates data on the device (integer-array indexing's bounds) reads its
flag back at once and raises before anything uses the result. Under launch capture
(``clnp._core.capture``, which ``clnp_grad.jit`` replays whole calls with) a read would make
the call unreplayable and wait for the queue in the middle of it, so the check is recorded
instead: the replay enqueues a non-blocking read of the flag right after the launch that sets
it, enqueues the rest of the call, and then waits for the reads and raises for the first flag
that is set. The call's outputs are dropped with the exception, as an eager call's would be;
its inputs are untouched (replayed calls never take donated buffers). A flag is zero until a
check fails, and is cleared again before the exception is raised (or, where the call raised
something else first, by ``abandon``), so the next call (or the next replay, which binds the
same flag buffer) starts clean. No two launches in flight share a flag
(``clnp._core.eager._index_flag``).
"""
from __future__ import annotations

from typing import Any, Callable, NoReturn, Sequence

import numpy as np

from .._runtime import capture_hooks as _hooks
from .._runtime.opencl import cl
from .array import Array


class FlagCheck:
    """The ``int32`` flag array ``flag`` as the launch that may set it leaves it:
    ``report[0]`` is nonzero once it is set (``report`` is the flag's host copy), and
    ``raise_for(report)`` raises for it."""

    __slots__ = ("flag", "raise_for")

    def __init__(self, flag: Array, raise_for: Callable[[np.ndarray], NoReturn]):
        self.flag, self.raise_for = flag, raise_for

    def start(self, queue: Any) -> tuple[np.ndarray, Any]:
        """Enqueue a non-blocking read of the flag; returns the host copy and its event."""
        f = self.flag
        host = np.empty(f.size, np.int32)
        ev = cl.enqueue_copy(queue, host, f._buf, src_offset=f._offset * 4, is_blocking=False)
        return host, ev

    def clear(self) -> None:
        f = self.flag
        cl.enqueue_copy(f.device.queue, f._buf, np.zeros(f.size, np.int32),
                        dst_offset=f._offset * 4, is_blocking=True)


def check(chk: FlagCheck) -> None:
    """Check ``chk`` now, or record it for the end of the call being captured."""
    if _hooks.note_check(chk):
        return
    finish_all([(chk, *chk.start(chk.flag.device.queue))])


def finish_all(pending: Sequence[tuple[FlagCheck, np.ndarray, Any]]) -> None:
    """Wait for the reads that ``FlagCheck.start`` enqueued; for the first flag set, in the
    order of the launches, clear it and raise (every check has a flag of its own)."""
    if not pending:
        return
    cl.wait_for_events([ev for _, _, ev in pending])
    for chk, host, _ in pending:
        if host[0]:
            chk.clear()
            chk.raise_for(host)


def abandon(pending: Sequence[tuple[FlagCheck, np.ndarray, Any]]) -> None:
    """A call that raised before its checks were finished: clear whatever flag its launches
    set, without raising (the call's own exception is the one to see), so that the next
    call of the same launches does not report this one's index."""
    if pending:
        cl.wait_for_events([ev for _, _, ev in pending])
    for chk, host, _ in pending:
        if host[0]:
            chk.clear()


def run_recorded(checks: Sequence[FlagCheck], queue: Any) -> None:
    """The checks a finished capture recorded, for the call that was captured (a replay reads
    its flags as it goes; the captured call reads them once it has finished)."""
    finish_all([(c, *c.start(queue)) for c in checks])
