"""Disk-cache entries written after the process has exited, by a background process.

On PoCL, handing out a program's binary compiles a generic work-group function for every
kernel in the program: 0.1-8 s per program, 18.3 s of the 26.2 s first run of a six-operation
script (issue #27). ``program_cache.stores_binaries`` therefore stores nothing on PoCL during
the run, and PoCL's own cache serves the next run, but more slowly than clnp's entries (that
script's second run: 1.09 s through PoCL's cache, 0.48 s through clnp's). So at exit a process
that built programs it did not store hands their sources to a detached, low-priority child
(:func:`fill` of a job file) that builds them again (PoCL's cache answers),
takes the binaries and writes the entries. The user's process does not wait for it; a run that
starts before it has finished finds PoCL's cache, as without it.

One filler works on a cache directory at a time (a lock file; a stale one, older than
``LOCK_STALE_S``, is taken over); a filler skips entries that exist meanwhile. ``CLNP_CACHE_FILL=0``
turns it off (the test suite does, except where it tests it).
"""
from __future__ import annotations

import atexit
import os
import sys
import threading
import time
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence
from .deferred import deferred_import

# run at first use, not at import clnp (clnp._runtime.deferred)
json = deferred_import("json")

if TYPE_CHECKING:
    import subprocess

FILL_MAX = 256          # entries one process hands on, at most
LOCK_STALE_S = 900.0

_pending: list[tuple[Any, str, str, list[str]]] = []   # (device ref, path, source, options)
_registered = False
_owner_pid = os.getpid()
_lock = threading.Lock()


def enabled() -> bool:
    """Off with ``CLNP_CACHE_FILL=0`` (or false/no/off)."""
    return os.environ.get("CLNP_CACHE_FILL", "1").strip().lower() not in ("0", "false", "no",
                                                                          "off")


def note_unstored(device: Any, path: Path, source: str, options: Sequence[str]) -> None:
    """Remember a program built from source and not stored, for the filler at exit."""
    global _registered, _owner_pid
    if not enabled() or len(_pending) >= FILL_MAX:
        return
    with _lock:
        _pending.append((weakref.ref(device), str(path), source, list(options)))
        if not _registered:
            _registered, _owner_pid = True, os.getpid()
            atexit.register(spawn_filler)


def take_pending(device: Any) -> list[tuple[str, str, list[str]]]:
    """(path, source, options) of every program built on ``device`` and not stored yet, taken
    off the list the filler would get at exit (``clnp.prebuild`` stores them itself)."""
    with _lock:
        mine = [e for e in _pending if e[0]() is device]
        _pending[:] = [e for e in _pending if e[0]() is not device]
    return [(path, source, options) for _, path, source, options in mine]


def spawn_filler() -> subprocess.Popen | None:
    """Write the job (the device's names and each entry's path, source and options) next to the
    entries and start the detached filler; None when there is nothing to do. Never raises:
    runs at interpreter exit."""
    import subprocess       # at exit only: 7 ms of import clnp
    with _lock:
        todo = list(_pending) if os.getpid() == _owner_pid else []
        _pending.clear()
    entries, device = [], None
    for ref, path, source, options in todo:
        dev = ref()
        if dev is None or os.path.exists(path):
            continue
        device = device or dev
        if dev is device:
            entries.append({"path": path, "source": source, "options": options})
    if not entries or not enabled():
        return None
    try:
        folder = Path(entries[0]["path"]).parent
        folder.mkdir(parents=True, exist_ok=True)
        job = folder / f".fill-{os.getpid()}-{int(time.time() * 1000)}.json"
        job.write_text(json.dumps({"platform": device.cl_device.platform.name,
                                   "device": device.cl_device.name, "entries": entries}))
        argv = python_running_this_clnp(
            f"from clnp._runtime.program_fill import fill; fill({str(job)!r})")
        return subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True, cwd=str(folder))
    except Exception:       # noqa: BLE001  (exit must not fail over a cache)
        return None


def python_running_this_clnp(code: str, *args: str) -> list[str]:
    """The command line of a child Python that runs ``code`` (then ``args`` in its
    ``sys.argv[1:]``) importing the clnp this process runs, installed or not: the filler,
    and ``clnp.prebuild``'s workers.

    Examples
    --------
    >>> from clnp._runtime.program_fill import python_running_this_clnp
    >>> argv = python_running_this_clnp("print(1)", "--x")
    >>> argv[1], argv[-1], argv[2].endswith("print(1)")
    ('-c', '--x', True)
    """
    root = str(Path(__file__).resolve().parents[2])
    return [sys.executable, "-c", f"import sys; sys.path.insert(0, {root!r}); {code}", *args]


def _take_lock(folder: Path) -> Path | None:
    lock = folder / ".fill.lock"
    for _ in range(2):
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            os.write(fd, str(os.getpid()).encode())
            os.close(fd)
            return lock
        except FileExistsError:
            try:
                if time.time() - lock.stat().st_mtime < LOCK_STALE_S:
                    return None
                lock.unlink()       # its filler died: take over
            except OSError:
                return None
    return None


def fill(job_path: str | os.PathLike) -> int:
    """Build the job's programs on its device and store their binaries; returns how many
    entries were written. The job file is removed."""
    import pyopencl as cl

    from . import program_cache

    job = Path(job_path)
    try:
        spec = json.loads(job.read_text())
    finally:
        job.unlink(missing_ok=True)
    folder = job.parent
    lock = _take_lock(folder)
    if lock is None:
        return 0
    written = 0
    try:
        try:
            os.nice(10)     # behind the user's own work
        except OSError:
            pass
        cl_device = next((d for p in cl.get_platforms() if p.name == spec["platform"]
                          for d in p.get_devices() if d.name == spec["device"]), None)
        if cl_device is None:
            return 0
        context = cl.Context([cl_device])
        for entry in spec["entries"]:
            path = Path(entry["path"])
            if path.exists():
                continue
            try:
                prg = cl.Program(context, entry["source"]).build(options=entry["options"])
            except Exception:   # noqa: BLE001  (a source that fails here is left to the user)
                continue
            written += program_cache.store(path, prg)
            os.utime(lock)      # alive: not stale
    finally:
        lock.unlink(missing_ok=True)
    return written
