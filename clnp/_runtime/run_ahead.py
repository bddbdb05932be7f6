"""How far the host may enqueue ahead of each device: a bound in launches.

OpenCL queues accept work without limit. A Python loop of kernels that take longer than their
enqueue then piles up a backlog of its own making: a loop of ``a = (a @ a) * 1e-3 + 1`` on a
512x512 float32 array (PoCL, 2 cores) enqueued 55,000 launches in 1.5 s, and after Ctrl-C the
next result waited 43.5 s for them (issue #27). CUDA bounds its launch queue (1,024 entries),
so PyTorch never runs further ahead than that; clnp now does the same per OpenCL queue.

Every ``MARK_EVERY`` launches on a queue, the last one's event is kept as a marker (launches
made without an event, NVIDIA's fast path, enqueue a marker instead). Once more than
``limit() // MARK_EVERY`` markers are outstanding the host waits for the oldest one, so at most
``limit()`` launches are ever queued ahead of the device, and the device still has
``limit() - MARK_EVERY`` queued when the host resumes (it never starves). The bound counts
launches, not work: bench/bench_run_ahead.py measures what it costs and what it saves.

``CLNP_RUN_AHEAD`` sets the bound in launches (default 256; ``0`` turns it off).
"""
from __future__ import annotations

import collections
import os
import threading
from typing import Any

from .opencl import cl

MARK_EVERY = 32           # launches between two markers: one marker's cost spread over 32
DEFAULT_LIMIT = 256       # launches; bench/bench_run_ahead.py chose it (docs/performance.md)


def _limit_from_environment() -> int:
    raw = os.environ.get("CLNP_RUN_AHEAD", "").strip()
    if not raw:
        return DEFAULT_LIMIT
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"CLNP_RUN_AHEAD={raw!r}: expected a whole number of launches "
                         f"(0 turns the bound off, default {DEFAULT_LIMIT})") from None
    if value < 0:
        raise ValueError(f"CLNP_RUN_AHEAD={raw!r}: expected 0 (no bound) or a positive "
                         "number of launches")
    return value


_LIMIT: int | None = None


def limit() -> int:
    """The most launches the host may enqueue ahead of a device (0: no bound).

    Returns
    -------
    int
        ``CLNP_RUN_AHEAD`` when set, else 256; a positive bound below ``MARK_EVERY`` (32)
        counts as ``MARK_EVERY``.

    Examples
    --------
    >>> from clnp._runtime import run_ahead
    >>> run_ahead.limit() >= 0
    True
    """
    global _LIMIT
    if _LIMIT is None:
        _LIMIT = _limit_from_environment()
    return _LIMIT


def set_limit(launches: int | None) -> int:
    """Set the bound in launches (0: none; None: back to ``CLNP_RUN_AHEAD`` or the default)
    and return the previous one.

    Parameters
    ----------
    launches : int or None
        The most launches queued ahead of each device.

    Returns
    -------
    int
        The bound that was in force.

    Examples
    --------
    >>> from clnp._runtime import run_ahead
    >>> old = run_ahead.set_limit(64)
    >>> run_ahead.limit()
    64
    >>> _ = run_ahead.set_limit(old)
    """
    global _LIMIT
    old = limit()
    if launches is not None and (not isinstance(launches, int) or launches < 0):
        raise ValueError(f"set_limit: launches must be None or an int >= 0; got {launches!r}")
    _LIMIT = launches
    return old


class _Backlog:
    """One queue's launches since its last marker and its outstanding markers, oldest first."""

    __slots__ = ("count", "markers", "queue", "lock")

    def __init__(self, queue: Any):
        self.count = 0
        self.markers: collections.deque = collections.deque()
        self.queue = queue      # keeps id(queue) from being reused while this record lives
        # threads sharing a queue take turns at placing and waiting for markers (every
        # MARK_EVERY launches), so no marker is waited for or released by two at once
        self.lock = threading.Lock()


_BACKLOGS: dict[int, _Backlog] = {}


def note_launch(queue: Any, event: Any = None) -> None:
    """Count one launch enqueued on ``queue``; wait for the device when the host is more than
    ``limit()`` launches ahead. Called by every launch path (``clnp._runtime.launch``) with
    the launch's event where it made one: that event is the marker then, so a launch through
    PyOpenCL adds no OpenCL call (only launches made without an event enqueue a marker)."""
    backlog = _BACKLOGS.get(id(queue))
    if backlog is None:
        backlog = _BACKLOGS.setdefault(id(queue), _Backlog(queue))
    backlog.count += 1
    if backlog.count < MARK_EVERY:
        return
    bound = limit()
    allowed = max(1, bound // MARK_EVERY) if bound else 0    # outstanding markers
    with backlog.lock:
        if backlog.count < MARK_EVERY:      # another thread placed this marker
            return
        backlog.count = 0
        if not allowed:
            return
        markers = backlog.markers
        markers.append(event if event is not None else cl.enqueue_marker(queue))
        while len(markers) > allowed:
            markers.popleft().wait()


def queued_ahead(queue: Any) -> int:
    """An upper bound on the launches on ``queue`` the device has not finished: those behind
    the oldest marker it has not reached, and those since the last marker (counted whether
    or not they have run).

    Parameters
    ----------
    queue : pyopencl.CommandQueue
        A device's queue (``Device.queue``).

    Returns
    -------
    int

    Examples
    --------
    >>> import clnp
    >>> from clnp._runtime import run_ahead
    >>> d = clnp.default_device()
    >>> d.synchronize()
    >>> run_ahead.queued_ahead(d.queue) < run_ahead.MARK_EVERY   # every marker reached
    True
    """
    backlog = _BACKLOGS.get(id(queue))
    if backlog is None:
        return 0
    done = cl.command_execution_status.COMPLETE
    outstanding = sum(m.command_execution_status != done for m in backlog.markers)
    return outstanding * MARK_EVERY + backlog.count


_FORK_ORPHANS: list[Any] = []


def _after_fork_in_child() -> None:
    # the parent's events and queues are not this process's to release (device.py does the
    # same with its contexts)
    _FORK_ORPHANS.append(dict(_BACKLOGS))
    _BACKLOGS.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
