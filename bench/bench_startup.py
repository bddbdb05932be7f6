"""Start-up cost of ordinary NumPy scripts under ``import clnp as np`` (issue #14, item 2).

    python bench/bench_startup.py [--reps 3] [--cold-reps 1] [--only NAME ...] [--modes ...]
                                  [--csv bench/results/startup-pocl-cpu.csv] [--label after]
                                  [--compare ROOT_OF_OLD_CHECKOUT --compare-label before]

The six scripts in ``bench/startup_scripts/`` (CSV statistics, image filtering, least squares
and polynomials, random-walk Monte Carlo, FFT low-pass, data cleaning) and the README's first
command, ``python -m clnp``, each run in a fresh child Python process, in two modes:

* ``cold``: empty ``CLNP_CACHE_DIR`` and empty ``POCL_CACHE_DIR`` (fresh temp dirs): every
  program is compiled from source, as on a user's very first run.
* ``warm``: both directories as the cold run left them, once the background filler it started
  has finished (a user's second run of the script).
* ``pocl-only``: clnp's cache off (``CLNP_DISK_CACHE=0``), PoCL's directory from the cold run:
  what a second run cost before clnp had a cache of its own (issue #14 measured this).
* ``clnp-only``: clnp's directory from the cold run, a fresh empty ``POCL_CACHE_DIR``: what
  clnp's cache gives alone (a wiped or unshared PoCL cache).
* ``prebuilt``: empty ``CLNP_CACHE_DIR`` and ``POCL_CACHE_DIR``, as ``cold``, with the store
  that ``python -m clnp.prebuild`` writes in the README's install step (``--prebuilt-dir``, or
  built once into a temp dir by the tree under test before the first script): a user's first
  run of a script after installing. Every other mode runs with that store off
  (``CLNP_PREBUILT_DIR=""``), so ``cold`` compiles everything.

Each child reports, timed from before ``import clnp`` to the end of the script with every queue
drained: ``total_s`` (the first pass), ``import_s`` (``import clnp``), and the program work the
runtime did, counted by wrapping ``clnp._runtime.device.Device.build`` (every OpenCL program clnp
creates goes through it): ``programs`` created in the process, how many were ``loaded`` from
clnp's binary cache and how many ``built`` from source, and the seconds spent in each
(``load_s``, ``build_s``; ``kernel_s`` is their sum; ``loaded`` counts the prebuilt store's
programs too). PoCL generates each kernel's machine code
at its first launch unless its cache or the loaded binary already holds it; that time shows
only in ``total_s``. ``process_s`` is the parent's wall time around the child (interpreter start
and exit included), ``cpu_s`` the child's user + system CPU time (all its threads): on a shared
machine the wall times move with the load, the CPU time much less. Times are medians over the repetitions: each cold repetition starts from
new temp directories; the other modes reuse the first cold repetition's directories (they only
read them; each ``clnp-only`` repetition gets a new empty PoCL directory). The script's stdout
must be identical in every run.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(ROOT, "bench", "startup_scripts")
NAMES = ["csv_stats", "image_filter", "lstsq_poly", "monte_carlo", "fft_lowpass",
         "data_cleaning", "python -m clnp"]

# Runs one script in this (fresh) process and prints a JSON line of figures on stderr's last
# line, so that the script's own stdout is compared untouched.
CHILD = r"""
import time
t0 = time.perf_counter()
import json, runpy, sys
import clnp
t_import = time.perf_counter() - t0
from clnp._runtime import device as _runtime, program_cache as _program_cache
st = {"programs": 0, "loaded": 0, "built": 0, "load_s": 0.0, "build_s": 0.0}
_orig = _runtime.Device.build
def build(self, source, options=()):
    n0 = len(self._programs)
    h0 = _program_cache.stats["hits"] + _program_cache.stats.get("prebuilt", 0)
    t = time.perf_counter()
    prg = _orig(self, source, options)
    dt = time.perf_counter() - t
    if len(self._programs) > n0:
        st["programs"] += 1
        if _program_cache.stats["hits"] + _program_cache.stats.get("prebuilt", 0) > h0:
            st["loaded"] += 1; st["load_s"] += dt
        else:
            st["built"] += 1; st["build_s"] += dt
    return prg
_runtime.Device.build = build
target = sys.argv[1]
if target == "-m":
    sys.argv = [sys.argv[2]]
    runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
else:
    sys.argv = [target]
    runpy.run_path(target, run_name="__main__")
clnp.synchronize()
total = time.perf_counter() - t0
sys.stdout.flush()
st.update(import_s=t_import, total_s=total, kernel_s=st["load_s"] + st["build_s"],
          device=str(clnp.default_device()))
print("\n" + json.dumps(st), file=sys.stderr)
"""


def child(target: str, env: dict[str, str]) -> tuple[dict, str]:
    args = ["-m", "clnp"] if target == "python -m clnp" else [
        os.path.join(SCRIPTS, target + ".py")]
    t = time.perf_counter()
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run([sys.executable, "-c", CHILD, *args], env=env, capture_output=True,
                       text=True, cwd=env["PYTHONPATH"].split(os.pathsep)[0])
    wall = time.perf_counter() - t
    ru2 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (ru2.ru_utime - ru.ru_utime) + (ru2.ru_stime - ru.ru_stime)
    if r.returncode != 0:
        raise SystemExit(f"{target} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    res = json.loads(r.stderr.strip().splitlines()[-1])
    res["process_s"] = wall
    res["cpu_s"] = cpu
    out = r.stdout
    if target == "python -m clnp":      # its own timing line differs between runs
        out = "\n".join(l for l in out.splitlines() if " ms " not in l)
    return res, out


def make_env(clnp_dir: str | None, pocl_dir: str, root: str = ROOT,
             prebuilt: str = "") -> dict[str, str]:
    env = dict(os.environ)
    env["CLNP_PREBUILT_DIR"] = prebuilt
    env.pop("CLNP_DISK_CACHE", None)
    env.pop("CLNP_DEBUG", None)
    # an installed package has its bytecode compiled; without it every child would compile
    # clnp's modules again (0.1-0.2 s of import_s), which is no start-up cost users see
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if clnp_dir is None:
        env["CLNP_DISK_CACHE"] = "0"
        env["CLNP_CACHE_DIR"] = pocl_dir + "-unused-clnp"
    else:
        env["CLNP_CACHE_DIR"] = clnp_dir
    env["POCL_CACHE_DIR"] = pocl_dir
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _wait_for_filler(programs: str, limit: float = 300.0) -> None:
    """Until the background filler a cold run started (PoCL: clnp/_runtime/program_fill.py)
    has written its entries: the next runs, and the machine's load, then are a user's who
    comes back later."""
    stop = time.monotonic() + limit
    while time.monotonic() < stop and os.path.isdir(programs) and any(
            n == ".fill.lock" or n.startswith(".fill-") for n in os.listdir(programs)):
        time.sleep(0.5)


FIELDS = ["total_s", "import_s", "kernel_s", "load_s", "build_s", "process_s", "cpu_s"]
MODES = ("warm", "pocl-only", "clnp-only", "cold", "prebuilt")


def build_store(root: str, directory: str) -> dict:
    """``python -m clnp.prebuild`` of the tree at ``root`` into ``directory``: a row (mode
    ``prebuild``) with its seconds (``total_s``, ``process_s``), CPU time and programs."""
    env = make_env(directory + "-clnp", directory + "-pocl", root)
    env.pop("CLNP_PREBUILT_DIR")
    t0 = time.perf_counter()
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run([sys.executable, "-m", "clnp.prebuild", "--dir", directory], env=env,
                       cwd=root, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    ru2 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode:
        raise SystemExit(f"python -m clnp.prebuild failed:\n{r.stderr}")
    m = re.search(r"(\d+) programs for (.*) in [\d.]+ s", r.stderr)
    return {"script": "python -m clnp.prebuild", "mode": "prebuild", "reps": 1,
            "total_s": round(wall, 3), "process_s": round(wall, 3),
            "cpu_s": round(ru2.ru_utime - ru.ru_utime + ru2.ru_stime - ru.ru_stime, 3),
            "programs": int(m.group(1)) if m else "", "built": int(m.group(1)) if m else "",
            "device": m.group(2) if m else ""}


def measure(target: str, reps: int, cold_reps: int, modes=MODES,
            root: str = ROOT, prebuilt: str = "") -> list[dict]:
    runs: dict[str, list[dict]] = {m: [] for m in modes}
    outputs = set()

    def run(mode: str, env: dict[str, str]) -> None:
        res, out = child(target, env)
        outputs.add(out)
        if mode in runs:
            runs[mode].append(res)

    with tempfile.TemporaryDirectory(prefix="clnp-startup-") as tmp:
        for i in range(max(cold_reps, 1)):
            d = os.path.join(tmp, f"r{i}")
            run("cold", make_env(d + "/clnp", d + "/pocl", root))
            _wait_for_filler(d + "/clnp/programs")
        d = os.path.join(tmp, "r0")
        for i in range(reps):
            run("warm", make_env(d + "/clnp", d + "/pocl", root))
            if "pocl-only" in runs:
                run("pocl-only", make_env(None, d + "/pocl", root))
            if "clnp-only" in runs:
                run("clnp-only", make_env(d + "/clnp", os.path.join(tmp, f"pocl-empty{i}"),
                                          root))
            if "prebuilt" in runs and prebuilt:     # (a tree from before clnp.prebuild: none)
                e = os.path.join(tmp, f"empty{i}")
                env = make_env(e + "/clnp", e + "/pocl", root, prebuilt)
                env["CLNP_CACHE_FILL"] = "0"    # each repetition starts empty anyway
                run("prebuilt", env)
    if len(outputs) != 1:
        raise SystemExit(f"{target}: output differs between runs:\n" + "\n---\n".join(outputs))
    rows = []
    for mode in modes:
        rs = runs[mode]
        if not rs:
            continue
        row = {"script": target, "mode": mode, "reps": len(rs), "device": rs[0]["device"]}
        for f in FIELDS:
            row[f] = round(statistics.median(r[f] for r in rs), 3)
        for f in ("programs", "loaded", "built"):
            row[f] = max(r[f] for r in rs)
        row["ms_per_program"] = round(1e3 * row["kernel_s"] / max(row["programs"], 1), 1)
        rows.append(row)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=3, help="warm repetitions per script")
    ap.add_argument("--cold-reps", type=int, default=1, help="cold repetitions per script")
    ap.add_argument("--only", nargs="*", default=None, help="script names to run")
    ap.add_argument("--modes", nargs="*", default=list(MODES), choices=MODES)
    ap.add_argument("--csv", default=None, help="append the rows to this CSV file")
    ap.add_argument("--label", default="", help="value of the 'label' column (before/after)")
    ap.add_argument("--compare", default=None, metavar="ROOT",
                    help="also run every script against the clnp checkout at ROOT (e.g. a "
                         "worktree of the commit before a change), right before this one's, so "
                         "that both see the same machine load")
    ap.add_argument("--compare-label", default="before")
    ap.add_argument("--prebuilt-dir", default=None, help="the store for mode 'prebuilt' "
                    "(default: built by each tree into a temp dir before its first script)")
    args = ap.parse_args(argv)
    names = args.only or NAMES
    cols = ["label", "script", "mode", "reps", "total_s", "import_s", "kernel_s", "load_s",
            "build_s", "programs", "loaded", "built", "ms_per_program", "process_s", "cpu_s",
            "device"]
    rows = []
    print(" | ".join(cols[:-1]))
    trees = ([(args.compare_label, os.path.abspath(args.compare))] if args.compare else [])
    trees.append((args.label, ROOT))
    stores: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="clnp-prebuilt-") as tmp:
        for label, root in trees:
            if "prebuilt" in args.modes and os.path.exists(
                    os.path.join(root, "clnp", "prebuild.py")):
                stores[root] = args.prebuilt_dir or os.path.join(tmp, str(len(stores)))
                if not args.prebuilt_dir:
                    row = {**build_store(root, stores[root]), "label": label}
                    rows.append(row)
                    print(" | ".join(str(row.get(c, "")) for c in cols[:-1]), flush=True)
        _measure_all(names, trees, args, stores, cols, rows)
    if args.csv:
        new = not os.path.exists(args.csv)
        with open(args.csv, "a", newline="") as f:
            w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
            if new:
                w.writeheader()
            w.writerows(rows)
    return 0


def _measure_all(names, trees, args, stores, cols, rows) -> None:
    for name in names:
        for label, root in trees:
            for row in measure(name, args.reps, args.cold_reps, args.modes, root,
                               stores.get(root, "")):
                row["label"] = label
                rows.append(row)
                print(" | ".join(str(row[c]) for c in cols[:-1]), flush=True)


if __name__ == "__main__":
    sys.exit(main())
