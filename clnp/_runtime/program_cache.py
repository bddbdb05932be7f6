"""Disk cache of compiled OpenCL programs (``CL_PROGRAM_BINARIES``), shared between processes.

:meth:`clnp._runtime.device.Device.build` asks here after its in-process cache misses. An entry is one
file ``<cache dir>/programs/<sha256>.bin``, where the cache dir is the autotuner's
(:func:`cache_dir`: ``$CLNP_CACHE_DIR``, else ``$XDG_CACHE_HOME/clnp``, else
``~/.cache/clnp``) and the hash covers the platform name and version, device name and version,
driver version, PyOpenCL version, the build options and the source text. ``CLNP_CACHE_DIR=""``
or ``CLNP_DISK_CACHE=0`` turns the cache off.

File format: ``MAGIC`` + SHA-256 of the payload + payload (the driver's binary). The digest is
checked before the binary reaches the driver, because some drivers do not survive a damaged
binary (PoCL 3.1 aborts the process on a truncated one). Writes go to a temporary file in the
same directory and are renamed over the entry (``os.replace``), so a concurrent reader sees the
old file, the new one or none, never half a file. Anything that goes wrong reading or loading
an entry (missing, damaged, rejected by a changed driver) makes the caller build from source
and overwrite the entry; write failures (read-only or full disk) are ignored. Nothing here
raises to the user.

Size bound (least recently used first): a hit refreshes the entry's mtime; when the cache holds
more than :data:`MAX_ENTRIES` files or :data:`MAX_BYTES` bytes, the entries with the oldest
mtimes are deleted until it is under 3/4 of both limits (so that eviction, once done, is not
needed again soon). The check lists the directory, so it runs rarely: on a process's first
store and then every :data:`EVICT_EVERY` stores. Orphaned temporary files (a writer killed
mid-write) older than an hour are removed by the same pass.

Entries completed at exit (:func:`complete_at_exit`): some drivers generate a kernel's machine
code only at its first launch and put it in the binaries of programs built after that (PoCL:
the work-group function per local size, 50-300 ms of LLVM per kernel; a binary taken right
after the build holds bitcode only, and PoCL redoes that work in every process whose own cache,
``POCL_CACHE_DIR``, lacks it). So at interpreter exit, each program this process built from
source is built once more from source (the driver's cache answers: 20-50 ms each on PoCL) and,
where the binary it hands out now differs, the entry is rewritten (atomically, as above). A
process that loaded everything from the cache does nothing at exit; one that built many
programs (a test suite) completes the first :data:`COMPLETE_MAX` of them, for at most
:data:`COMPLETE_BUDGET_S` seconds, and leaves the rest as they are (bitcode, as before).
``CLNP_DISK_CACHE=0`` turns this off with the rest; entries deleted meanwhile are not brought
back. On PoCL with its own kernel cache on, nothing is stored while the process runs
(:func:`stores_binaries`: handing out the binary compiles every kernel of the program), so
this applies to other devices and ``CLNP_DISK_CACHE=1``; ``program_fill`` writes PoCL's entries
after exit. bench/bench_startup.py, mode ``clnp-only``, measures what it gives.
"""
from __future__ import annotations

import atexit
import os
import sys
import threading
import time
import warnings
import weakref
from pathlib import Path
from typing import Any, Sequence

from .opencl import cl
from .deferred import deferred_import

# run at first use, not at import clnp (clnp._runtime.deferred)
hashlib = deferred_import("hashlib")


MAGIC = b"CLNPPRG1"
_DIGEST = 32
MAX_ENTRIES = 2000
MAX_BYTES = 512 * 2**20
EVICT_EVERY = 200
_TMP_MAX_AGE = 3600.0
COMPLETE_MAX = 128           # entries completed at exit, at most ...
COMPLETE_BUDGET_S = 3.0      # ... and for at most this long

# counters for tests and debugging; reset with reset_stats()
stats = {"hits": 0, "misses": 0, "stores": 0, "bad": 0, "evicted": 0, "completed": 0,
         "prebuilt": 0}
_lock = threading.Lock()
_stores_since_evict: int | None = None     # None: this process has not checked yet



def cache_dir() -> Path:
    """Directory of clnp's caches: compiled programs (under ``programs/``), GEMM and
    convolution tuning results (``CLNP_CACHE_DIR``, ``$XDG_CACHE_HOME/clnp`` or
    ``~/.cache/clnp``).

    Examples
    --------
    >>> import pathlib
    >>> from clnp._runtime.program_cache import cache_dir
    >>> isinstance(cache_dir(), pathlib.Path)
    True
    """
    d = os.environ.get("CLNP_CACHE_DIR")
    if d:
        return Path(d)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return Path(xdg) / "clnp" if xdg else Path.home() / ".cache" / "clnp"

def reset_stats() -> None:
    global _stores_since_evict
    with _lock:
        for k in stats:
            stats[k] = 0
        _stores_since_evict = None


def _setting() -> str:
    return os.environ.get("CLNP_DISK_CACHE", "auto").strip().lower()


def _off() -> bool:
    """``CLNP_DISK_CACHE=0`` (or false/no/off): neither the cache nor the prebuilt store."""
    return _setting() in ("0", "false", "no", "off")


def enabled() -> bool:
    """Off with ``CLNP_DISK_CACHE=0`` (or false/no/off) or ``CLNP_CACHE_DIR=""``."""
    if _off():
        return False
    return os.environ.get("CLNP_CACHE_DIR") != ""


def stores_binaries(device: Any) -> bool:
    """Whether programs built from source on ``device`` are written to the cache.

    ``CLNP_DISK_CACHE=1`` (or true/yes/on): everywhere. Unset or ``auto``: everywhere but PoCL
    with its own kernel cache on (``POCL_KERNEL_CACHE`` unset or not 0). Handing out a
    program's binary makes PoCL 3.0 compile machine code for every kernel in the program
    (measured on the 2-core machine: 18.3 s of a 26.2 s first run of a six-operation script,
    12 programs, 0.1-8 s each, also after the kernels had run), while its own cache already
    serves a second run (that script warm: 0.94-1.2 s through PoCL's cache, 0.76 s through
    clnp's). Entries already in the cache are still loaded.

    Examples
    --------
    >>> import clnp
    >>> from clnp._runtime import program_cache
    >>> program_cache.stores_binaries(clnp.default_device()) in (True, False)
    True
    """
    if not enabled():
        return False
    if _setting() in ("1", "true", "yes", "on"):
        return True
    pocl = "portable computing language" in device.platform_name.lower()
    return not (pocl and os.environ.get("POCL_KERNEL_CACHE", "1").strip() != "0")


def programs_dir() -> Path:
    return cache_dir() / "programs"


def prebuilt_dir() -> Path | None:
    """Directory of the programs built ahead of time by ``python -m clnp.prebuild``, or None
    when that store is off (``CLNP_PREBUILT_DIR=""`` or ``CLNP_DISK_CACHE=0``).

    ``$CLNP_PREBUILT_DIR``, else ``<sys.prefix>/share/clnp/prebuilt``: it belongs to the
    Python environment clnp is installed in, not to the user's cache, so clearing
    ``~/.cache/clnp`` leaves it, as uninstalling a package leaves nothing to rebuild. Entries
    have the cache's format and names (:func:`key`); a run only reads them.

    Examples
    --------
    >>> import os
    >>> from clnp._runtime.program_cache import prebuilt_dir
    >>> saved = os.environ.get("CLNP_PREBUILT_DIR")
    >>> os.environ["CLNP_PREBUILT_DIR"] = "/tmp/clnp-prebuilt"
    >>> str(prebuilt_dir())
    '/tmp/clnp-prebuilt'
    >>> os.environ["CLNP_PREBUILT_DIR"] = ""
    >>> prebuilt_dir() is None
    True
    >>> os.environ.pop("CLNP_PREBUILT_DIR")
    ''
    >>> if saved is not None: os.environ["CLNP_PREBUILT_DIR"] = saved
    """
    if _off():
        return None
    d = os.environ.get("CLNP_PREBUILT_DIR")
    if d is not None:
        return Path(d) if d else None
    return Path(sys.prefix) / "share" / "clnp" / "prebuilt"


def key(device: Any, source: str, options: Sequence[str]) -> str:
    """Hex digest naming the binary of ``source`` built with ``options`` on ``device``."""
    cld = device.cl_device
    parts = [MAGIC.decode(), cld.platform.name.strip(), str(cld.platform.version).strip(),
             cld.name.strip(), str(cld.version).strip(), str(cld.driver_version).strip(),
             cl.VERSION_TEXT, os.environ.get("PYOPENCL_BUILD_OPTIONS", ""),
             "\x1f".join(options), source]
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


def path_for(device: Any, source: str, options: Sequence[str]) -> Path | None:
    """Where the entry lives, or None when the cache is disabled."""
    if not enabled():
        return None
    return programs_dir() / f"{key(device, source, options)}.bin"


_prebuilt_present: dict[Path, bool] = {}     # prebuilt_path_for: is_dir, once per process


def prebuilt_path_for(device: Any, source: str, options: Sequence[str]) -> Path | None:
    """Where the prebuilt entry of ``source`` would be (:func:`prebuilt_dir`), or None when the
    store is off or absent (one ``stat`` per process, not one per program)."""
    d = prebuilt_dir()
    if d is None:
        return None
    if _prebuilt_present.get(d) is None:
        _prebuilt_present[d] = d.is_dir()
    if not _prebuilt_present[d]:
        return None
    return d / f"{key(device, source, options)}.bin"


def read(path: Path) -> bytes | None:
    """The stored binary, or None if missing or damaged (counted in ``stats['bad']``)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    head = len(MAGIC) + _DIGEST
    payload = data[head:]
    if (len(data) <= head or data[:len(MAGIC)] != MAGIC
            or hashlib.sha256(payload).digest() != data[len(MAGIC):head]):
        _count("bad")
        return None
    return payload


def load(context: Any, cl_device: Any, path: Path, options: Sequence[str], *,
         prebuilt: bool = False) -> Any | None:
    """A program built from the stored binary, or None (miss, damaged entry, driver refused).
    ``prebuilt``: ``path`` is in the read-only store of :func:`prebuilt_dir` (counted in
    ``stats['prebuilt']``; its misses are not the cache's, and its mtimes stay)."""
    binary = read(path)
    if binary is None:
        if not prebuilt:
            _count("misses")
        return None
    try:
        prg = cl.Program(context, [cl_device], [binary]).build(options=list(options))
    except Exception:       # noqa: BLE001  (any refusal: rebuild from source)
        _count("bad")
        if not prebuilt:
            _count("misses")
        return None
    if prebuilt:
        _count("prebuilt")
        return prg
    try:
        os.utime(path)      # recently used: evicted last
    except OSError:
        pass
    _count("hits")
    return prg


def _binary(program: Any) -> bytes | None:
    try:
        binary = program.get_info(cl.program_info.BINARIES)[0]
    except Exception:       # noqa: BLE001
        return None
    return bytes(binary) if binary else None      # some drivers give no binary


def store(path: Path, program: Any) -> bool:
    """Write ``program``'s binary to ``path`` atomically; False if it could not be done."""
    binary = _binary(program)
    if binary is None or not write(path, binary):
        return False
    _maybe_evict(path.parent)
    return True


def write(path: Path, binary: bytes) -> bool:
    """Write the entry of ``binary`` to ``path`` atomically (a temporary file renamed over it,
    so a concurrent reader sees the old entry, the new one or none); False on failure."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as f:
            f.write(MAGIC + hashlib.sha256(binary).digest() + binary)
        os.replace(tmp, path)
    except OSError:
        try:
            tmp.unlink()
        except OSError:
            pass
        return False
    _count("stores")
    return True


# entries stored by this process: (device, path, source, options, stored binary's SHA-256)
_stored: list[tuple[Any, Path, str, list[str], bytes]] = []
_exit_hook = False
_owner_pid = os.getpid()     # a forked child inherits the list, not the OpenCL objects


def note_stored(device: Any, path: Path, source: str, options: Sequence[str]) -> None:
    """Remember the entry just stored for ``source`` on ``device`` (:func:`complete_at_exit`)."""
    global _exit_hook, _owner_pid
    if len(_stored) >= COMPLETE_MAX:
        return
    binary = read(path)
    if binary is None:
        return
    with _lock:
        _stored.append((weakref.ref(device), path, source, list(options),
                        hashlib.sha256(binary).digest()))
        if not _exit_hook:
            _exit_hook, _owner_pid = True, os.getpid()
            atexit.register(complete_at_exit)


def complete_at_exit() -> int:
    """Rewrite the entries this process stored whose program, built again from source now,
    comes with a different binary (the driver added the machine code it generated at the
    kernels' first launches). Returns how many were rewritten; never raises. Runs at
    interpreter exit; callable earlier (tests)."""
    with _lock:
        todo = list(_stored) if os.getpid() == _owner_pid else []
        _stored.clear()
    done = 0
    synced: set[int] = set()
    stop = time.monotonic() + COMPLETE_BUDGET_S
    for ref, path, source, options, digest in todo:
        device = ref()
        if device is None or not enabled():
            continue
        if time.monotonic() > stop:
            break
        try:
            if not path.exists():       # cleared meanwhile: leave it so
                continue
            if id(device) not in synced:
                device.synchronize()    # launches finished: their machine code is complete
                synced.add(id(device))
            with warnings.catch_warnings():    # the build log was shown (or not) already
                warnings.simplefilter("ignore")
                prg = cl.Program(device.context, source).build(options=options)
            binary = _binary(prg)
            if binary and hashlib.sha256(binary).digest() != digest and store(path, prg):
                done += 1
        except Exception:   # noqa: BLE001  (exit must not fail over a cache)
            continue
    _count("completed", done)
    return done


def evict(directory: Path | None = None, max_entries: int | None = None,
          max_bytes: int | None = None) -> int:
    """Delete least recently used entries while over a limit, down to 3/4 of the limits;
    also orphaned temporary files. Returns the number of entries deleted."""
    directory = programs_dir() if directory is None else directory
    max_entries = MAX_ENTRIES if max_entries is None else max_entries
    max_bytes = MAX_BYTES if max_bytes is None else max_bytes
    entries = []
    now = time.time()
    try:
        with os.scandir(directory) as it:
            for e in it:
                try:
                    st = e.stat(follow_symlinks=False)
                except OSError:
                    continue
                if e.name.endswith(".tmp"):
                    if now - st.st_mtime > _TMP_MAX_AGE:
                        _unlink(e.path)
                elif e.name.endswith(".bin"):
                    entries.append((st.st_mtime, st.st_size, e.path))
    except OSError:
        return 0
    total = sum(s for _, s, _ in entries)
    if len(entries) <= max_entries and total <= max_bytes:
        return 0
    entries.sort()
    n, removed = len(entries), 0
    for _, size, p in entries:
        if n <= max_entries * 3 // 4 and total <= max_bytes * 3 // 4:
            break
        if _unlink(p):
            removed += 1
        n -= 1
        total -= size
    _count("evicted", removed)
    return removed


def clear() -> int:
    """Delete every entry of the cache directory; returns how many."""
    removed = 0
    try:
        with os.scandir(programs_dir()) as it:
            for e in it:
                if e.name.endswith((".bin", ".tmp")) and _unlink(e.path):
                    removed += 1
    except OSError:
        pass
    return removed


def _unlink(p: str) -> bool:
    try:
        os.unlink(p)
        return True
    except OSError:
        return False


def _count(what: str, n: int = 1) -> None:
    with _lock:
        stats[what] += n


def _maybe_evict(directory: Path) -> None:
    global _stores_since_evict
    with _lock:
        if _stores_since_evict is None:
            due = True
        else:
            _stores_since_evict += 1
            due = _stores_since_evict >= EVICT_EVERY
        if due:
            _stores_since_evict = 0
    if due:
        evict(directory)
