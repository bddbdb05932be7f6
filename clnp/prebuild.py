"""``python -m clnp.prebuild [--device SPEC] [--jobs N] [--groups NAMES] [--dir DIR]``: build
ahead of time the kernels ordinary array code meets, so that a first run finds them compiled.

A first run of a script on PoCL compiles every kernel it meets: 0.3-0.8 s of clang and LLVM
per program on a 2-core machine, 7 s for six operations against 0.33 s warm (issue #27). This
command runs a catalog of common operations (:data:`CATALOG`: creation, conversions,
elementwise arithmetic and math, comparisons, reductions, sorting, products, indexing, random
numbers; the strided layouts of broadcasting and slicing) in float32, float64 (where the
device has it), int64 and bool, at a small and a large size (PoCL compiles a kernel's
work-group function separately for grids under and over 2^16 work-items), and writes each
program's binary, with the machine code of those launches, to a read-only store of the
Python environment (``clnp._runtime.program_cache.prebuilt_dir``: ``$CLNP_PREBUILT_DIR``, else
``<sys.prefix>/share/clnp/prebuilt``). ``Device.build`` loads from it when the user's cache
misses, so the results are those of the same kernels built from source, bit for bit. The
README's first command starts it with ``--background`` after installing.

The catalog is split over ``--jobs`` worker processes (default: the CPU count), each with
its own empty program caches, so that every program is built and launched here rather than
taken from a cache. Entries are named by the cache's key (platform, device, driver, build
options, source): a store built for one device or driver is simply not found by another.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

__all__ = ["CATALOG", "PrebuildReport", "prebuild", "running", "main"]

# PoCL compiles a kernel's work-group function separately for grids of fewer and more than
# 2^16 work-items ("smallgrid"); _LARGE is past it even for kernels that take 16 elements per
# work-item, and both divide by 10 (the catalog's 2-D shapes)
_SMALL, _LARGE = 1000, 1_280_000


def _arrays(np: Any, dtype: Any, n: int) -> tuple[Any, Any]:
    """Two arrays of ``n`` values of ``dtype`` with no zeros, NaNs or ties to trip an op."""
    kind = np.dtype(dtype).kind
    if kind == "b":
        a = np.arange(n) % 3 == 0
        return a, np.logical_not(a)
    a = np.linspace(0.1, 0.9, n, dtype=np.float64)
    if kind == "f":
        return a.astype(dtype), (a * 0.5 + 0.25).astype(dtype)
    i = np.arange(1, n + 1, dtype=dtype)
    return i, i % 7 + 1


def _creation(np: Any, dt: Any, n: int) -> None:
    np.zeros(n, dtype=dt), np.ones((n // 10, 10), dtype=dt), np.full(n, 1, dtype=dt)
    if np.dtype(dt).kind != "b":
        np.arange(n, dtype=dt), np.zeros_like(np.ones(n, dtype=dt)), np.eye(8, dtype=dt)
    if np.dtype(dt).kind == "f":
        np.linspace(0, 1, n, dtype=dt), np.arange(0.0, 1.0, 1.0 / n, dtype=dt)


def _convert(np: Any, dt: Any, n: int) -> None:
    a, _ = _arrays(np, dt, n)
    for other in ("bool", "int32", "int64", "float32", "float64"):
        if other != np.dtype(dt).name and np.default_device().supports(np.dtype(other)):
            a.astype(other)


def _unary_math(np: Any, dt: Any, n: int) -> None:
    a, _ = _arrays(np, dt, n)
    for f in (np.sin, np.cos, np.tan, np.exp, np.log, np.log1p, np.expm1, np.sqrt, np.abs,
              np.negative, np.square, np.tanh, np.sinh, np.cosh, np.arcsin, np.arccos,
              np.arctan, np.floor, np.ceil, np.round, np.sign, np.exp2, np.log2, np.log10,
              np.reciprocal, np.isnan, np.isfinite, np.isinf):
        f(a)


def _arithmetic(np: Any, dt: Any, n: int) -> None:
    a, b = _arrays(np, dt, n)
    m, row = a.reshape(-1, 10), b[:10]
    kind = np.dtype(dt).kind
    s = 2 if kind in "iu" else 0.5
    for x, y in ((a, b), (a, s), (s, a), (m, row)):
        x + y, x - y, x * y, x / y, np.maximum(x, y), np.minimum(x, y)
        if kind in "iu":
            x // y, x % y
        else:
            x ** y
    a ** 2, -a
    c = a.copy()
    c += b
    c *= s
    if kind == "f":
        np.arctan2(a, b), np.hypot(a, b), np.clip(a, 0.2, 0.8)
    else:
        np.clip(a, 2, 8)


def _broadcasting(np: Any, dt: Any, n: int) -> None:
    """The strided layouts the elementwise kernels specialise on (``plan_elementwise``):
    rows shorter than a stretch (a table's few columns), columns against a row, strided 1-D
    views, transposes, and conversions of a column."""
    a, b = _arrays(np, dt, n)
    narrow, wide = a.reshape(-1, 5), a.reshape(-1, 10)
    col = wide[:, :1]
    for x, y in ((narrow, b[:5]), (wide, col), (a[::2], b[::2]), (wide.T, wide.T)):
        x + y, x - y, x * y, x / y
    (narrow - b[:5]) / b[5:10]
    narrow[:, 1].astype("float64"), wide[:, 2].copy(), narrow.T.copy()


def _logic(np: Any, dt: Any, n: int) -> None:
    a, b = _arrays(np, dt, n)
    kind = np.dtype(dt).kind
    if kind == "b":
        a & b, a | b, a ^ b, ~a, np.logical_and(a, b), np.logical_or(a, b), np.logical_not(a)
        np.where(a, 1.0, 0.0), np.where(a, 1, 0)
        return
    s = 5 if kind in "iu" else 0.5
    for x, y in ((a, b), (a, s)):
        x < y, x <= y, x > y, x >= y, x == y, x != y
    np.where(a > s, a, b), np.where(a > s, a, 0)


def _reductions(np: Any, dt: Any, n: int) -> None:
    a, _ = _arrays(np, dt, n)
    tall, wide = a.reshape(-1, 10), a.reshape(10, -1)
    for x in (a, tall, wide):
        for axis in ((None,) if x.ndim == 1 else (None, 0, 1)):
            x.sum(axis=axis), x.max(axis=axis), x.min(axis=axis), x.any(axis=axis)
            x.all(axis=axis), np.argmax(x, axis=axis), np.argmin(x, axis=axis)
            if np.dtype(dt).kind != "b":
                x.mean(axis=axis), x.prod(axis=axis), x.std(axis=axis), x.var(axis=axis)
    np.cumsum(a), np.count_nonzero(a)
    if np.dtype(dt).kind != "b":
        np.cumprod(tall, axis=1), np.diff(a)


def _sorting(np: Any, dt: Any, n: int) -> None:
    a, _ = _arrays(np, dt, n)
    np.sort(a), np.argsort(a), np.unique(a), np.sort(a.reshape(10, -1), axis=1)
    if np.dtype(dt).kind != "b":
        np.searchsorted(np.sort(a), a[:10]), np.median(a), np.percentile(a, 90)


def _products(np: Any, dt: Any, n: int) -> None:
    k = 64 if n <= _SMALL else 512
    a, b = _arrays(np, dt, k * k)
    m, v = a.reshape(k, k), b[:k]
    np.dot(v, v), m @ v, v @ m, m @ m, m.T @ m, np.outer(v, v), np.matmul(m, m.T)
    if np.dtype(dt).kind == "f":
        np.linalg.norm(v), np.linalg.norm(m)


def _indexing(np: Any, dt: Any, n: int) -> None:
    a, b = _arrays(np, dt, n)
    m = a.reshape(-1, 10)
    a[a > a[3]] if np.dtype(dt).kind != "b" else a[a]
    a[np.arange(0, n, 7)], a[::2].copy(), a[1:-1] + b[:-2], m.T.copy(), m[:, 3].copy()
    m[np.arange(5), np.arange(5)], m[np.arange(5)]
    np.concatenate([a, b]), np.stack([a, b]), np.flip(a), np.roll(a, 3), m.reshape(10, -1)
    c = a.copy()
    c[:10] = b[:10]
    c[5] = b[0]
    c[c != c[0]] = b[0]


def _random(np: Any, dt: Any, n: int) -> None:
    rng = np.random.default_rng(0)
    if np.dtype(dt).kind == "f":
        rng.random(n, dtype=dt), rng.standard_normal(n, dtype=dt)
        rng.normal(0, 1, n).astype(dt), rng.uniform(0, 1, n).astype(dt)
    else:
        rng.integers(0, 10, n), rng.permutation(n)


#: (group name, function of (clnp, dtype, n)) run for every dtype of the device at both sizes.
CATALOG: tuple[tuple[str, Callable[[Any, Any, int], None]], ...] = (
    ("creation", _creation), ("convert", _convert), ("unary_math", _unary_math),
    ("arithmetic", _arithmetic), ("broadcasting", _broadcasting), ("logic", _logic),
    ("reductions", _reductions), ("sorting", _sorting), ("products", _products),
    ("indexing", _indexing), ("random", _random),
)
_DTYPES = ("float32", "float64", "int64", "bool")
_FLOAT_ONLY = {"unary_math"}
_NUMERIC_ONLY = {"arithmetic", "broadcasting", "products", "random"}


@dataclass
class PrebuildReport:
    """What :func:`prebuild` did: the programs it wrote, the size of the whole store, its
    seconds, the store and the device."""
    programs: int
    bytes: int
    seconds: float
    directory: Path
    device: str

    def __str__(self) -> str:
        return (f"clnp.prebuild: {self.programs} programs for {self.device} in "
                f"{self.seconds:.1f} s, {self.bytes / 2**20:.1f} MiB in {self.directory}")


def _tasks(groups: Sequence[str] | None, has_fp64: bool) -> list[tuple[str, str]]:
    names = [g for g, _ in CATALOG]
    unknown = sorted(set(groups or ()) - set(names))
    if unknown:
        raise ValueError(f"clnp.prebuild: unknown groups {unknown}; the catalog's groups are "
                         f"{names}")
    out = []
    for g in names:
        if groups and g not in groups:
            continue
        for d in _DTYPES:
            if d == "float64" and not has_fp64:
                continue
            if g in _FLOAT_ONLY and not d.startswith("float"):
                continue
            if g in _NUMERIC_ONLY and d == "bool":
                continue
            out.append((g, d))
    return out


def _run_worker(tasks: Sequence[tuple[str, str]], directory: Path, verbose: bool = False
                ) -> set[str]:
    """Run ``tasks`` on the default device (this process's caches are empty: see
    :func:`prebuild`). After each task, build its programs again from source, PoCL's cache
    answering with the machine code of the launches, and write their binaries to
    ``directory``: a script started meanwhile already finds the tasks done so far. Returns
    the names of the entries written."""
    import clnp
    from ._runtime import program_cache, program_fill
    from ._runtime.device import build_stats
    from ._runtime.opencl import cl

    device = clnp.default_device()
    program_fill.FILL_MAX = 1 << 30     # every program of the catalog, not the exit filler's cap
    directory.mkdir(parents=True, exist_ok=True)
    fns = dict(CATALOG)
    written: set[str] = set()
    for group, dtype in tasks:
        t0, b0 = time.perf_counter(), build_stats["built"]
        for n in (_SMALL, _LARGE):
            try:
                fns[group](clnp, clnp.dtype(dtype), n)
            except Exception as e:      # noqa: BLE001  (the rest of the catalog still helps)
                print(f"clnp.prebuild: skipped {group}/{dtype}/{n}: {type(e).__name__}: {e}",
                      file=sys.stderr)
        device.synchronize()            # every launch done: its machine code is in the cache
        for path, source, options in program_fill.take_pending(device):
            try:
                prg = cl.Program(device.context, source).build(options=options)
            except Exception:   # noqa: BLE001  (built once already; a failure is skipped)
                continue
            if program_cache.store(directory / Path(path).name, prg):
                written.add(Path(path).name)
        if verbose:
            print(f"clnp.prebuild: {group}/{dtype}: {build_stats['built'] - b0} programs, "
                  f"{time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    # devices whose binaries were stored while running (not PoCL): completed, then copied
    program_cache.complete_at_exit()
    for entry in program_cache.programs_dir().glob("*.bin"):
        binary = program_cache.read(entry)
        if binary is not None and program_cache.write(directory / entry.name, binary):
            written.add(entry.name)
    return written


def _lock_holder(directory: Path) -> int | None:
    """The process id in the store's lock file when that process is alive, else None (no
    lock, or one left by a prebuild that died)."""
    try:
        pid = int((directory / ".prebuild.lock").read_text() or 0)
        os.kill(pid, 0)
    except (OSError, ValueError):
        return None
    return pid


def _take_lock(directory: Path) -> Path:
    """The store's lock file, created for this process; RuntimeError naming the process that
    holds it. A lock whose process is gone is taken over."""
    lock = directory / ".prebuild.lock"
    directory.mkdir(parents=True, exist_ok=True)
    for _ in range(2):
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            pid = _lock_holder(directory)
            if pid is None:                     # its process died: take it over
                lock.unlink(missing_ok=True)
                continue
            raise RuntimeError(f"clnp.prebuild: another prebuild (process {pid}) is writing "
                               f"{directory}; wait for it, or see {directory / _LOG}") from None
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        return lock
    raise RuntimeError(f"clnp.prebuild: cannot take the lock {lock}")


def running(directory: str | os.PathLike | None = None) -> int | None:
    """The process id of a prebuild writing the store (``directory``, default the prebuilt
    store), or None when none is.

    Examples
    --------
    >>> import clnp.prebuild, tempfile
    >>> clnp.prebuild.running(tempfile.mkdtemp()) is None
    True
    """
    from ._runtime import program_cache
    d = Path(directory) if directory is not None else program_cache.prebuilt_dir()
    return None if d is None else _lock_holder(d)


_LOG = ".prebuild.log"


def prebuild(device: str | None = None, *, jobs: int | None = None,
             groups: Sequence[str] | None = None, directory: str | os.PathLike | None = None,
             quiet: bool = False, verbose: bool = False, background: bool = False,
             force: bool = False) -> PrebuildReport | subprocess.Popen:
    """Build the catalog's programs for ``device`` into the prebuilt store.

    Parameters
    ----------
    device : str, optional
        A device spec as for ``CLNP_DEVICE`` (``pocl:0``, ``gpu``, ...); default: the default
        device.
    jobs : int, optional
        Worker processes; default ``os.cpu_count()``.
    groups : sequence of str, optional
        Catalog groups to build (names in :data:`CATALOG`); default all.
    directory : path, optional
        The store; default ``clnp._runtime.program_cache.prebuilt_dir()``.
    quiet : bool
        Nothing on stderr (default: one line at the end, and what the workers report).
    verbose : bool
        One line per catalog group and dtype: programs built and seconds.
    background : bool
        Return at once and build in a detached process at the lowest CPU priority, so that
        the user's own work goes first; it writes its lines to ``<directory>/.prebuild.log``
        and each task's programs as soon as they are built (:func:`running` tells whether it
        is still at work).
    force : bool
        Build even when the store already holds the whole catalog for this device, driver
        and clnp (a stamp file written at the end of a full build); otherwise that case
        returns at once with ``programs == 0``.

    Returns
    -------
    PrebuildReport, or the detached process (``subprocess.Popen``) with ``background``.

    Raises
    ------
    ValueError
        An unknown group, ``jobs`` below 1, or the store is turned off
        (``CLNP_PREBUILT_DIR=""`` or ``CLNP_DISK_CACHE=0``) and no ``directory`` is given.
    RuntimeError
        Another prebuild is writing the same store, or a worker failed.

    Examples
    --------
    >>> import clnp.prebuild, tempfile
    >>> report = clnp.prebuild.prebuild(groups=["creation"], directory=tempfile.mkdtemp(),
    ...                                 quiet=True)                     # doctest: +SKIP
    >>> report.programs > 0                                              # doctest: +SKIP
    True
    """
    import clnp
    from ._runtime import program_cache
    from ._runtime.device import select_device

    if jobs is not None and jobs < 1:
        raise ValueError(f"clnp.prebuild: jobs must be at least 1; got {jobs}")
    if directory is None:
        directory = program_cache.prebuilt_dir()
        if directory is None:
            raise ValueError("clnp.prebuild: the prebuilt store is off (CLNP_PREBUILT_DIR is "
                             "empty or CLNP_DISK_CACHE=0); pass directory= or unset them")
    directory = Path(directory)
    dev = clnp.default_device() if device is None else select_device(device)
    tasks = _tasks(groups, dev.has_fp64)
    # only a build of the whole catalog is stamped (or skipped for its stamp)
    stamp = None if groups else directory / f".complete-{_stamp(dev)}"
    if stamp is not None and not force and stamp.exists():
        report = PrebuildReport(0, _store_bytes(directory), 0.0, directory,
                                f"{dev.key} ({dev.name})")
        if not quiet:
            print(f"clnp.prebuild: {directory} already holds the whole catalog for {dev.key} "
                  f"({dev.name}) as this clnp generates it; --force builds it again",
                  file=sys.stderr)
        return report
    if background:
        return _spawn_background(dev.key, jobs, groups, directory, verbose, force)
    jobs = min(jobs or os.cpu_count() or 1, len(tasks))
    lock = _take_lock(directory)
    try:
        report = _build(dev, tasks, jobs, directory, quiet, verbose)
        if stamp is not None:
            stamp.touch()
        return report
    finally:
        lock.unlink(missing_ok=True)


def _stamp(dev: Any) -> str:
    """Names the whole catalog built for ``dev`` by this clnp: the device and driver, and the
    text of this module and of the kernel generators (a change to either can change the
    programs, so a store stamped before it is built again)."""
    import hashlib
    h = hashlib.sha256()
    cld = dev.cl_device
    for part in (cld.platform.name, cld.platform.version, cld.name, cld.version,
                 cld.driver_version):
        h.update(str(part).encode() + b"\0")
    here = Path(__file__).resolve().parent
    for f in [Path(__file__).resolve()] + sorted(here.glob("_kernels/*.py")) + sorted(
            here.glob("_core/*.py")):
        h.update(f.read_bytes())
    return h.hexdigest()[:20]


def _store_bytes(directory: Path) -> int:
    return sum(p.stat().st_size for p in directory.glob("*.bin"))


def _spawn_background(device: str, jobs: int | None, groups: Sequence[str] | None,
                      directory: Path, verbose: bool, force: bool) -> subprocess.Popen:
    pid = _lock_holder(directory)
    if pid is not None:
        raise RuntimeError(f"clnp.prebuild: a prebuild (process {pid}) is "
                           f"already writing {directory}; see {directory / _LOG}")
    directory.mkdir(parents=True, exist_ok=True)
    argv = _this_clnp("--device", device, "--dir", str(directory), "--nice",
                      *(["--jobs", str(jobs)] if jobs else []),
                      *(["--groups", ",".join(groups)] if groups else []),
                      *(["--verbose"] if verbose else []), *(["--force"] if force else []))
    with open(directory / _LOG, "w") as log:
        return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                start_new_session=True)


def _this_clnp(*args: str) -> list[str]:
    """The command line of ``python -m clnp.prebuild args`` for a child that imports the clnp
    this process runs, installed or not."""
    from ._runtime.program_fill import python_running_this_clnp
    return python_running_this_clnp(
        "from clnp.prebuild import main; sys.exit(main(sys.argv[1:]))", *args)


def _worker_environment(device: str, tmp: str) -> None:
    """A worker's settings, made before it first touches a device (PoCL reads its variables
    then): empty caches of its own, so that every program is built and launched here."""
    os.environ["CLNP_DEVICE"] = device
    os.environ["CLNP_PREBUILT_DIR"] = ""
    os.environ["CLNP_DISK_CACHE"] = "auto"
    os.environ["CLNP_CACHE_DIR"] = os.path.join(tmp, "clnp")
    os.environ["CLNP_CACHE_FILL"] = "1"
    os.environ["POCL_CACHE_DIR"] = os.path.join(tmp, "pocl")
    os.environ["POCL_KERNEL_CACHE"] = "1"


def _build(dev: Any, tasks: list[tuple[str, str]], jobs: int, directory: Path, quiet: bool,
           verbose: bool) -> PrebuildReport:
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="clnp-prebuild-") as tmp:
        procs = []
        for k in range(jobs):
            spec = ",".join(f"{g}:{d}" for g, d in tasks[k::jobs])
            procs.append(subprocess.Popen(
                _this_clnp("--worker", spec, "--device", dev.key, "--dir", str(directory),
                           "--tmp", os.path.join(tmp, str(k)),
                           *(["--verbose"] if verbose else [])),
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        errors, written = [], set()
        for p in procs:
            out, err = p.communicate()
            # a worker prints the names of its entries; two workers may build one program
            # (int64 arange for the int64 and float tasks), so count names, not writes
            written |= {w for w in out.split() if w.endswith(".bin")}
            if err.strip() and not quiet:
                print(err.rstrip(), file=sys.stderr)
            if p.returncode:
                errors.append(err.strip().splitlines()[-1] if err.strip() else
                              f"exit status {p.returncode}")
    if errors:
        raise RuntimeError("clnp.prebuild: a worker failed: " + "; ".join(errors))
    report = PrebuildReport(len(written), _store_bytes(directory),
                            time.perf_counter() - t0, directory, f"{dev.key} ({dev.name})")
    if not quiet:
        print(report, file=sys.stderr)
    return report


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m clnp.prebuild``: the command line of :func:`prebuild` (see the module
    docstring); returns the exit status.

    Examples
    --------
    >>> from clnp.prebuild import main
    >>> main(["--groups", "no-such-group"])
    1
    """
    ap = argparse.ArgumentParser(prog="python -m clnp.prebuild", description=__doc__.split(
        "\n\n")[0])
    ap.add_argument("--device", help="device spec (default: the default device)")
    ap.add_argument("--jobs", type=int, help="worker processes (default: the CPU count)")
    ap.add_argument("--groups", help="comma-separated catalog groups (default: all): "
                    + ", ".join(g for g, _ in CATALOG))
    ap.add_argument("--dir", help="the store (default: CLNP_PREBUILT_DIR or "
                    "<sys.prefix>/share/clnp/prebuilt)")
    ap.add_argument("--clear", action="store_true", help="empty the store first")
    ap.add_argument("--force", action="store_true",
                    help="build even when the store holds the whole catalog already")
    ap.add_argument("--verbose", action="store_true",
                    help="a line per catalog group and dtype: programs and seconds")
    ap.add_argument("--background", action="store_true",
                    help="return at once; build in a detached low-priority process that "
                    "logs to <dir>/.prebuild.log")
    ap.add_argument("--nice", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--tmp", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.nice:
        try:
            os.nice(19)         # the workers inherit it: the user's own work goes first
        except OSError:
            pass
    if a.worker is not None:
        _worker_environment(a.device, a.tmp)
        tasks = [tuple(t.split(":")) for t in a.worker.split(",") if t]
        print("\n".join(sorted(_run_worker(tasks, Path(a.dir), a.verbose))))
        return 0
    directory = Path(a.dir) if a.dir else None
    if a.clear:
        from ._runtime import program_cache
        target = directory or program_cache.prebuilt_dir()
        if target is not None and target.is_dir():
            for p in [*target.glob("*.bin"), *target.glob(".complete-*")]:
                p.unlink()
    try:
        r = prebuild(a.device, jobs=a.jobs, groups=a.groups.split(",") if a.groups else None,
                     directory=directory, verbose=a.verbose, background=a.background,
                     force=a.force or a.clear)
    except (ValueError, RuntimeError) as e:
        print(e, file=sys.stderr)
        return 1
    if isinstance(r, subprocess.Popen):
        log = Path(r.args[r.args.index("--dir") + 1]) / _LOG
        print(f"clnp.prebuild: building in the background (process {r.pid}, lowest priority);"
              f" log: {log}", file=sys.stderr)
    return 0


from ._namespace import hide_imports as _hide_imports  # noqa: E402
__dir__ = _hide_imports(__name__)

if __name__ == "__main__":
    sys.exit(main())
