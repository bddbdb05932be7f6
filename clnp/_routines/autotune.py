"""GEMM autotuner: per-device kernel shapes, measured once and cached on disk.

``clnp.autotune(device, dtypes)`` (or ``python -m clnp.tune``) times a short list of kernel
shapes (tile sizes, vector widths, work-group shape; see :func:`candidates`) for each dtype on a
square product (1024 on CPUs, 2048 elsewhere) and stores the fastest in a JSON file per
(device, driver): ``$CLNP_CACHE_DIR``, else ``$XDG_CACHE_HOME/clnp``, else ``~/.cache/clnp``.
Later processes read that file on the first product on the device. Nothing is tuned
implicitly: without a cache entry the library uses a built-in table for devices measured by
the developers (:data:`BUILTIN`, keyed by device name) and otherwise per-kind defaults
(``clnp._routines.dot_general.default_config``).

Configuration keys are the computing dtypes (``float32``, ``float64``, ``complex64``,
``complex128``, ``int32``, ``int64``), ``float16`` (tensor-core products, NVIDIA only) and
``tf32`` (float32 products at ``clnp.set_matmul_precision("tf32")``, NVIDIA only).
"""
from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path
from typing import Any, Iterator, Sequence

from .._runtime.program_cache import cache_dir  # noqa: F401  (also where clnp_nn keeps its tuning)
from .._runtime.deferred import deferred_import

# run at first use, not at import clnp (clnp._runtime.deferred)
hashlib = deferred_import("hashlib")
json = deferred_import("json")

_VERSION = 3      # 3: configurations for small products (key suffix ":small")

# Tuned on the developers' machines (python -m clnp.tune), keyed by device name. H200:
# NVIDIA OpenCL 3.0 CUDA 13.0.98, driver 580.159.04; 2048^2 products, ":small" 1024^2 (GFLOP/s
# of the tuner in comments; bench/results/gemm-nvidia-h200.csv has the end-to-end figures).
BUILTIN: dict[str, dict[str, dict[str, Any]]] = {
    "NVIDIA H200": {
        "float32": dict(kind="gpu", tm=8, tn=8, vec=4, lx=16, ly=16, bk=8),            # 35400
        "float32:small": dict(kind="gpu", tm=8, tn=8, vec=4, lx=8, ly=8, bk=16),       # 19400
        "float64": dict(kind="gpu", tm=8, tn=8, vec=2, lx=16, ly=8, bk=8),             # 20800
        "float64:small": dict(kind="gpu", tm=8, tn=8, vec=2, lx=16, ly=8, bk=8,
                              split=4),                                                # 14500
        "float16": dict(kind="mma", bm=128, bn=128, bk=32, wm=64, wn=64, stages=2,
                        swz=True),                                                     # 173000
        "float16:small": dict(kind="mma", bm=64, bn=64, bk=32, wm=32, wn=32,
                              stages=4),                                               # 49600
        "tf32": dict(kind="mma", bm=128, bn=128, bk=16, wm=64, wn=64, stages=2),       # 105800
        "tf32:small": dict(kind="mma", bm=64, bn=64, bk=16, wm=32, wn=32, stages=4),   # 37800
    },
}

_loaded: dict[str, dict[str, dict[str, Any]]] = {}     # device id -> key -> config
_override: dict[tuple[int, str], dict[str, Any]] = {}
# bumped whenever a lookup may answer differently: products planned before replan
epoch = 0


def device_id(device) -> str:
    """What a tuning result is valid for: the device, its platform and driver versions."""
    cl = device.cl_device
    return " | ".join([device.platform_name, device.name, str(cl.driver_version).strip(),
                       str(cl.platform.version).strip()])


def cache_path(device) -> Path:
    h = hashlib.sha1(device_id(device).encode()).hexdigest()[:16]
    return cache_dir() / f"gemm-{h}.json"


def _read(device) -> dict[str, dict[str, Any]]:
    did = device_id(device)
    r = _loaded.get(did)
    if r is None:
        r = {}
        try:
            data = json.loads(cache_path(device).read_text())
            if data.get("version") == _VERSION and data.get("device") == did:
                r = {k: dict(v) for k, v in data.get("configs", {}).items()}
        except (OSError, ValueError, AttributeError):
            pass      # no cache or an unreadable one: the defaults serve
        _loaded[did] = r
        _bump()
    return r


def _bump() -> None:
    global epoch
    epoch += 1


def imposed(device, key: str) -> bool:
    """Whether :func:`use_config` imposes a configuration of ``key`` on ``device``."""
    return (id(device), key) in _override


def lookup(device, key: str) -> dict[str, Any] | None:
    """The tuned configuration of ``key`` on ``device`` (override, cache, built-in table), or
    None."""
    o = _override.get((id(device), key))
    if o is not None:
        return o
    c = _read(device).get(key)
    if c is not None:
        return c
    return BUILTIN.get(device.name, {}).get(key)


@contextlib.contextmanager
def use_config(device, key: str, cfg: dict[str, Any]) -> Iterator[None]:
    """Run products of ``key`` on ``device`` with the kernel configuration ``cfg`` (tests and
    the tuner)."""
    prev = _override.get((id(device), key))
    _override[(id(device), key)] = cfg
    _bump()
    try:
        yield
    finally:
        if prev is None:
            _override.pop((id(device), key), None)
        else:
            _override[(id(device), key)] = prev
        _bump()


def _save(device, configs: dict[str, dict[str, Any]]) -> Path:
    path = cache_path(device)
    path.parent.mkdir(parents=True, exist_ok=True)
    merged = dict(_read(device))
    merged.update(configs)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"version": _VERSION, "device": device_id(device),
                               "configs": merged}, indent=1, sort_keys=True))
    os.replace(tmp, path)             # atomic: concurrent readers see old or new
    _loaded[device_id(device)] = merged
    _bump()
    return path


# tensor-core shapes tried (bm, bn, bk, wm, wn, stages, swz): 4 warps of 64x64 or 8 of 64x32
# per 128x128 tile, padded rows with 2-4 stages or swizzled ones with a 3-stage ring, 8 warps
# of 64x64 per 128x256 tile; small products: 4 warps of 32x32 per 64x64 tile and the like
_MMA_SHAPES = {
    "float16": ((128, 128, 32, 64, 64, 2, 0), (128, 128, 16, 64, 64, 4, 0),
                (128, 128, 32, 64, 32, 2, 0), (128, 128, 32, 64, 64, 3, 1),
                (128, 128, 32, 64, 32, 3, 1), (128, 256, 32, 64, 64, 2, 1),
                (128, 128, 32, 64, 64, 2, 1)),
    "tf32": ((128, 128, 16, 64, 32, 2, 0), (128, 128, 8, 64, 64, 4, 0),
             (128, 128, 16, 64, 64, 2, 0), (128, 128, 16, 64, 64, 3, 1),
             (128, 128, 16, 64, 32, 3, 1), (128, 256, 16, 64, 64, 2, 1)),
    "float16:small": ((64, 64, 32, 32, 32, 3, 1), (64, 128, 32, 32, 64, 3, 1),
                      (128, 64, 32, 64, 32, 3, 1), (64, 64, 64, 32, 32, 2, 1),
                      (64, 64, 32, 32, 32, 4, 0)),
    "tf32:small": ((64, 64, 16, 32, 32, 3, 1), (64, 128, 16, 32, 64, 3, 1),
                   (128, 64, 16, 64, 32, 3, 1), (64, 64, 32, 32, 32, 2, 1),
                   (64, 64, 16, 32, 32, 4, 0)),
}
# local-memory kernel shapes tried (tm, tn, vec, lx, ly, bk); most take the kernel's 16-byte
# vector path (a tile a multiple of 16 bytes per item)
_GPU_SHAPES = {
    "": ((8, 8, 4, 16, 16, 16), (8, 4, 4, 16, 16, 16), (4, 8, 4, 16, 16, 16),
         (4, 4, 4, 16, 16, 16), (8, 8, 2, 16, 8, 8), (4, 4, 1, 16, 16, 16),
         (8, 8, 4, 16, 8, 8), (2, 2, 1, 16, 16, 16)),
    ":small": ((4, 4, 4, 16, 16, 16), (8, 4, 4, 16, 16, 16), (4, 8, 4, 16, 16, 16),
               (8, 8, 4, 8, 8, 16), (4, 4, 4, 16, 8, 16), (4, 4, 2, 16, 16, 8)),
}


def candidates(device, key: str, kind: str | None = None) -> list[dict[str, Any]]:
    """The kernel shapes the tuner tries for ``key`` on ``device`` (default first), each a few
    register/local-memory budgets around the default: small enough that one dtype tunes in
    well under a minute on PoCL. ``kind`` ("cpu" | "gpu") overrides the device's kind and
    lists tensor-core shapes even where the device has none (tests). Keys of small products
    (suffix ``":small"``, GPU kinds) also try the big products' shape with K split in 2 and 4
    (``split``: the most parts)."""
    from .dot_general import default_config, tensor_cores
    from .._kernels.mma import MmaSpec
    import numpy as np
    base = default_config(device, key, kind)
    name, _, small = key.partition(":")
    out = [base]
    if base["kind"] == "mma":
        f16 = name == "float16"
        for bm, bn, bk, wm, wn, st, swz in _MMA_SHAPES[key]:
            c = dict(kind="mma", bm=bm, bn=bn, bk=bk, wm=wm, wn=wn, stages=st)
            if swz:
                c["swz"] = True
            if bm * bn > 128 * 128:
                c["split"] = 1      # few enough tiles at 2048: never split K
            spec = MmaSpec(np.dtype(np.float16 if f16 else np.float32),
                           np.dtype(np.float32), **{q: v for q, v in c.items()
                                                    if q not in ("kind", "split")})
            if spec.local_bytes() <= device.local_mem and spec.threads <= \
                    device.max_work_group_size:
                out.append(c)
        if kind is None and not tensor_cores(device):
            return []
    elif base["kind"] == "cpu":
        tm, tn, v = base["tm"], base["tn"], base["vec"]
        w = v // 2 if np.dtype(name).kind == "c" else v     # values per vector
        shapes = [(4, tn), (8, w), (tm, tn), (tm, tn)] if tm == 6 else \
            [(6, tn), (4, 2 * tn), (tm, tn), (tm, tn)] if tm == 8 else \
            [(2, tn), (6, w), (tm, tn), (tm, tn)]
        for (m, n), (rm, bk) in zip(shapes, ((16, 64), (16, 64), (8, 64), (16, 128))):
            out.append(dict(base, tm=m, tn=n, rm=rm, bk=bk))
        out.append(dict(base, bk=32))
    else:
        item = np.dtype(name).itemsize
        real = np.dtype(name).kind != "c"
        for tm, tn, vec, lx, ly, bk in _GPU_SHAPES[":small" if small else ""]:
            if not real:
                vec = 1
            v = min(vec, 16 // item) if real else 1
            c = dict(kind="gpu", tm=tm, tn=tn, vec=v, lx=lx, ly=ly, bk=bk)
            if (2 * bk * (ly * tm + lx * tn + 2 * v) * item <= device.local_mem
                    and lx * ly <= device.max_work_group_size
                    and (ly * tm * bk) % (lx * ly) == 0 and (lx * tn * bk) % (lx * ly) == 0
                    and tm % v == 0 and tn % v == 0):
                out.append(c)
    if small and base["kind"] != "cpu":
        big = lookup(device, name) if kind is None else None
        big = big or default_config(device, name, kind)
        out += [dict(big, split=2), dict(big, split=4)]
    seen, uniq = set(), []
    for c in out:
        t = tuple(sorted(c.items()))
        if t not in seen:
            seen.add(t)
            uniq.append(c)
    return uniq


# largest |error| / max |exact| a candidate may show on the tuning product: a kernel that
# computes wrongly on this device (e.g. a driver miscompiling it) is never chosen
_TOL = {"float32": 1e-4, "complex64": 1e-4, "float64": 1e-10, "complex128": 1e-10,
        "int32": 0, "int64": 0, "float16": 4e-3, "tf32": 4e-3}


def _square(a):
    """``a @ a`` of a square matrix through the ``dot_general`` implementation (the
    implementation layer does not import the namespace)."""
    from .dot_general import dot_general
    return dot_general(a, a, dimension_numbers=(((1,), (0,)), ((), ())),
                       preferred_element_type=a.dtype)


def _time_config(device, key: str, cfg: dict[str, Any], a, reps: int):
    """(median seconds of ``a @ a`` with ``cfg`` after a warm-up run that compiles, the
    result)."""
    from .dot_general import matmul_precision
    prec = matmul_precision("tf32" if key.startswith("tf32") else "highest")
    with use_config(device, key, cfg), prec:
        r = _square(a)
        device.synchronize()
        ts = []
        for _ in range(reps):
            t = time.perf_counter()
            _square(a)
            device.synchronize()
            ts.append(time.perf_counter() - t)
    import statistics   # the tuner's alone: 6 ms of import clnp with fractions, decimal
    return statistics.median(ts), r.to_numpy()


def tune(device, key: str, n: int | None = None, reps: int = 5,
         verbose: bool = False) -> tuple[dict[str, Any], float] | None:
    """Time every candidate of ``key`` on an ``n x n`` product (``n / 2`` for the keys of
    small products); return the fastest configuration that computes it correctly and its
    GFLOP/s (None when ``key`` does not apply to the device)."""
    import numpy as np
    import pyopencl as cl
    from .._core.array import Array
    from .._runtime.device import KernelBuildError
    name, _, small = key.partition(":")
    cands = candidates(device, key)
    if not cands or (name in ("float64", "complex128") and not device.has_fp64):
        return None
    n = n or (1024 if device.is_cpu else 2048)
    if small:
        n //= 2
    dtype = np.dtype(np.float32 if name == "tf32" else name)
    rng = np.random.default_rng(0)
    if dtype.kind in "iu":
        x = rng.integers(-100, 100, (n, n)).astype(dtype)
    else:
        x = rng.standard_normal((n, n)).astype(dtype)
        if dtype.kind == "c":
            x = x + 1j * rng.standard_normal((n, n)).astype(dtype)
    exact = x.astype(np.complex128 if dtype.kind == "c" else
                     np.int64 if dtype.kind in "iu" else np.float64)
    exact = (exact @ exact).astype(dtype) if dtype.kind in "iu" else exact @ exact
    scale = max(float(np.abs(exact).max()), 1.0)
    a = Array.from_numpy(x, device)
    flops = 2 * n ** 3 * (4 if dtype.kind == "c" else 1)
    best: tuple[dict[str, Any], float] | None = None
    for cfg in cands:
        try:
            t, r = _time_config(device, key, cfg, a, reps)
        except (KernelBuildError, cl.Error) as e:   # e.g. out of registers or local memory
            if verbose:
                print(f"  {key} {cfg}: build failed ({str(e).splitlines()[0][:200]})",
                      file=sys.stderr)
            continue
        err = float(np.abs(r.astype(exact.dtype) - exact).max()) / scale
        gf = flops / t / 1e9
        if verbose:
            print(f"  {key} {cfg}: {gf:.1f} GFLOP/s, error {err:.2e}", file=sys.stderr)
        if err > _TOL[name]:
            continue
        if best is None or gf > best[1]:
            best = (cfg, gf)
    return best


# the configuration keys autotune() accepts (each also with the suffix ":small")
TUNABLE = ("float32", "float64", "complex64", "complex128", "float16", "tf32")


def autotune(device=None, dtypes: Sequence[str] | None = None, n: int | None = None,
             verbose: bool = False) -> dict[str, dict[str, Any]]:
    """Tune the GEMM kernels of ``device`` and cache the result.

    Parameters
    ----------
    device : Device or str, optional
        The device (default: the default device).
    dtypes : sequence of str, optional
        Configuration keys (default: every one that applies: float32, float64,
        complex64, complex128, plus float16 and tf32 on tensor-core devices; on GPUs
        each also for small products, key suffix ``":small"``).
    n : int, optional
        The matrix size timed.
    verbose : bool, default False
        Print each timing.

    Returns
    -------
    dict
        ``{key: configuration}``, also saved to the cache in ``CLNP_CACHE_DIR``. Runs
        are explicit only: the library never tunes by itself.

    Raises
    ------
    ValueError
        An unknown configuration key.
    UnsupportedDtypeError
        A dtype the device does not support.

    Examples
    --------
    Tuning times real kernels for minutes, so this example is not run by the tests:

    >>> import clnp
    >>> configs = clnp.autotune(dtypes=["float32"])  # doctest: +SKIP
    >>> sorted(configs)  # doctest: +SKIP
    ['float32']
    """
    from .dot_general import tensor_cores
    from .._runtime.device import default_device, select_device
    device = default_device() if device is None else select_device(device)
    if isinstance(dtypes, str):
        raise TypeError(f"autotune: dtypes must be a sequence of names, e.g. "
                        f"{list(TUNABLE)}; got the string {dtypes!r}")
    for key in dtypes or ():
        name, _, suffix = str(key).partition(":")
        if name not in TUNABLE or suffix not in ("", "small"):
            raise ValueError(f"autotune: cannot tune {key!r}; keys are {list(TUNABLE)}, "
                             f"optionally with the suffix ':small'")
    if dtypes is None:
        dtypes = ["float32", "float64", "complex64", "complex128"]
        if tensor_cores(device):
            dtypes += ["float16", "tf32"]
    if not device.is_cpu:
        dtypes = [k for key in dtypes for k in ((key,) if ":" in key else (key, key + ":small"))]
    results: dict[str, dict[str, Any]] = {}
    for key in dtypes:
        r = tune(device, key, n=n, verbose=verbose)
        if r is not None:
            results[key] = r[0]
            # saved at once: the small products' candidates include the big products' shape,
            # and an interrupted run keeps what it measured
            _save(device, {key: r[0]})
            if verbose:
                print(f"{device}: {key} -> {r[0]} ({r[1]:.1f} GFLOP/s)", file=sys.stderr)
    if results:
        path = _save(device, results)
        if verbose:
            print(f"saved to {path}", file=sys.stderr)
    return results


def main(argv: Sequence[str] | None = None) -> int:
    """The ``python -m clnp.tune`` command line: tune a device's GEMM kernels, or show the cache.

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments (default: ``sys.argv[1:]``): ``--device SPEC``, ``--dtypes
        KEY,...``, ``--n N``, ``--show``.

    Returns
    -------
    int
        The exit status, 0; the tuned (or, with ``--show``, cached) configurations are
        printed as JSON.

    Raises
    ------
    SystemExit
        Invalid arguments (from argparse).
    ValueError
        A device spec that matches no device.

    Examples
    --------
    ``--show`` only reads the cache:

    >>> from clnp.tune import main
    >>> main(["--show"])  # doctest: +ELLIPSIS
    {
     "device": ...
    0
    """
    import argparse
    from .._runtime.device import default_device, select_device
    p = argparse.ArgumentParser(prog="python -m clnp.tune",
                                description="Tune clnp's GEMM kernels for a device and cache "
                                            "the result (see docs/env_vars.md).")
    p.add_argument("--device", help="device spec as for CLNP_DEVICE (default: the default)")
    p.add_argument("--dtypes", help="comma-separated keys (float32,float64,complex64,"
                                    "complex128,int32,int64,float16,tf32; on GPUs each "
                                    "also tunes KEY:small unless given with a suffix)")
    p.add_argument("--n", type=int, help="matrix size (default 1024 on CPUs, 2048 elsewhere)")
    p.add_argument("--show", action="store_true", help="print the cached results and exit")
    args = p.parse_args(argv)
    device = select_device(args.device) if args.device else default_device()
    if args.show:
        print(json.dumps({"device": device_id(device), "path": str(cache_path(device)),
                          "configs": _read(device)}, indent=1))
        return 0
    keys = args.dtypes.split(",") if args.dtypes else None
    print(json.dumps(autotune(device, keys, n=args.n, verbose=True), indent=1))
    return 0
