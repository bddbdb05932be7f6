"""Render bench/results/*.csv as docs/performance.md, with one PNG chart per device.

    python bench/report.py                # writes docs/performance.md and docs/img/*.png

``core-*.csv`` (bench_core.py, the peer table) become a table of clnp times and peer/clnp
ratios per device plus a bar chart of those ratios; every other CSV in bench/results is
rendered as a plain table under the heading of the benchmark that wrote it.
"""
from __future__ import annotations

import csv
import glob
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from bench_core import PEER_NAMES, PEERS  # noqa: E402

HEADER = """# Performance

Every figure comes from a side-by-side run on the named device: all peers run in the same
process on the same inputs, times are medians after warm-up, asynchronous work is drained
inside the timed region, and clnp's result is checked against NumPy before timing. Ratios
are **peer time / clnp time: above 1 means clnp is faster**. Reproduce with:

    python bench/bench_core.py --csv bench/results/core-pocl-cpu.csv          # PoCL CPU here
    CLNP_DEVICE=gpu python bench/bench_core.py --csv bench/results/core-nvidia-h200.csv
    python bench/report.py                                  # this page and docs/img/*.png

Peers: NumPy; a hand-written PyOpenCL kernel on clnp's own device, context and queue (float8
vectors on CPU devices, one element per work-item on GPUs); PyTorch 2.13.0 on the CPU; JAX on
its default backend (CPU here, CUDA on the GPU machine); on the GPU machine also CuPy and
PyTorch-CUDA. The CPU machine has 2 cores shared with other work, so its figures move by
tens of percent between runs: compare ratios from the same run only.
"""

SECTIONS = {
    "kernels": ("Kernels against memory bandwidth", "bench/bench_kernels.py"),
    "gemm": ("GEMM", "bench/bench_gemm.py"),
    "grad": ("Automatic differentiation (value_and_grad of an MLP)", "bench/bench_grad.py"),
    "extended": ("Extended workloads (library routines)", "bench/bench_extended.py"),
    "jit": ("jit: fused kernels, loops, per-call cost (clnp_grad.jit)", "bench/bench_jit.py"),
    "disk-cache": ("Disk cache of compiled programs", "bench/bench_disk_cache.py"),
    "linalg-check": ("LinAlgError checks in eager linalg", "bench/bench_linalg_check.py"),
    "amp": ("Mixed precision (float16 storage)", "bench/bench_amp.py"),
    "nn-conv": ("clnp_nn convolutions and a ResNet block against PyTorch",
                "bench/bench_nn_conv.py"),
    "nn-train": ("A digits-CNN training step against PyTorch and JAX", "bench/bench_nn_train.py"),
    "parallel": ("Data parallelism: collectives and pmap (clnp_nn.parallel)",
                 "bench/bench_parallel.py"),
    "startup": ("Start-up of NumPy scripts in a fresh process", "bench/bench_startup.py"),
    "xla-table": ("Issue #26's table: clnp_grad.jit against jax.jit, one command per device",
                  "bench/xla_table.py"),
    "transformer": ("The character transformer's training step", "bench/bench_transformer.py"),
    "whole-step": ("Whole-step kernels against the general path (clnp_grad.jit)",
                   "bench/bench_whole_step.py"),
    "host-blas": ("Products in the host's BLAS against the GEMM kernel (CPU device)",
                  "bench/bench_host_blas.py"),
    "pytree": ("A jitted call's pytree work: walked against generated code",
               "bench/bench_pytree.py"),
}
RENDER = {"jit": "render_jit", "xla-table": "render_xla"}


def render_xla(path: str, out: list[str]) -> None:
    """xla_table.py's rows of the latest label, then a chart of jax.jit time / clnp jit time
    per workload (above 1: clnp ahead)."""
    rows = list(csv.DictReader(open(path)))
    if not rows:
        return
    rows = [r for r in rows if r["label"] == rows[-1]["label"]]
    dev = rows[0]["device"]
    out.append(f"### {dev} (`{os.path.relpath(path, ROOT)}`, {rows[0]['label']}, "
               f"{rows[0]['date']})\n")
    out.append("| workload | clnp jit | jax.jit | clnp/jax | others (same run) |")
    out.append("|---|---|---|---|---|")
    for r in rows:
        out.append(f"| {r['workload']} | {r['clnp_jit']} {r['unit']} | {r['jax_jit']} "
                   f"{r['unit']} | {_f(r['clnp_over_jax'], '.2f')}x | {r['others']} |")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        out.append("")
        return
    named = [(r["workload"], 1 / float(r["clnp_over_jax"])) for r in rows
             if r["clnp_over_jax"] not in ("", "None")]
    fig, ax = plt.subplots(figsize=(10, 0.5 * len(named) + 1.5))
    ax.barh(range(len(named)), [v for _, v in named],
            color=["tab:green" if v >= 1 else "tab:red" for _, v in named])
    ax.axvline(1.0, color="k", lw=1)
    ax.set_xscale("log")
    ax.set_yticks(range(len(named)), [n for n, _ in named])
    ax.invert_yaxis()
    ax.set_xlabel("jax.jit time / clnp jit time (log scale; > 1: clnp ahead)")
    ax.set_title(f"clnp_grad.jit against jax.jit on {dev}")
    fig.tight_layout()
    os.makedirs(os.path.join(ROOT, "docs", "img"), exist_ok=True)
    png = os.path.join(ROOT, "docs", "img", f"xla-{_slug(dev)}.png")
    fig.savefig(png, dpi=90)
    plt.close(fig)
    out.append(f"\n![jax.jit time / clnp jit time on {dev}]"
               f"({os.path.relpath(png, ROOT + '/docs')})\n")


def _f(v: str | None, spec: str) -> str:
    if v in (None, "", "None"):
        return "-"
    try:
        return format(float(v), spec)
    except ValueError:
        return v


def _slug(device: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in device.split("(")[0].strip()).strip("-")


def render_core(path: str, out: list[str]) -> None:
    rows = list(csv.DictReader(open(path)))
    if not rows:
        return
    peers = [p for p in PEERS if any(r.get(f"{p}_ms") not in (None, "", "None") for r in rows)]
    dev = rows[0]["device"]
    out.append(f"## {dev}\n")
    out.append(f"`{os.path.relpath(path, ROOT)}`; peers: {rows[0].get('peers', '')}\n")
    head = "| workload | clnp ms | clnp rate |" + "".join(f" {PEER_NAMES[p]}/clnp |"
                                                     for p in peers)
    out.append(head)
    out.append("|---" * (3 + len(peers)) + "|")
    for r in rows:
        line = f"| {r['workload']} | {_f(r['clnp_ms'], '.4f')} | " \
               f"{_f(r['clnp_rate'], '.1f')} {r['rate_unit']} |"
        line += "".join(f" {_f(r.get(f'{p}_over_clnp'), '.2f')} |" for p in peers)
        out.append(line)
    png = chart(rows, peers, dev)
    if png:
        out.append(f"\n![peer time / clnp time on {dev}]({os.path.relpath(png, ROOT + '/docs')})"
                   "\n")
    out.append("")


def chart(rows: list[dict], peers: list[str], dev: str) -> str | None:
    """A log-scale bar chart of peer/clnp per workload; returns the PNG path."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    names = [r["workload"] for r in rows]
    fig, ax = plt.subplots(figsize=(11, 0.45 * len(names) * max(1, len(peers) / 3) + 1.5))
    h = 0.8 / max(len(peers), 1)
    for k, p in enumerate(peers):
        ys, vals = [], []
        for i, r in enumerate(rows):
            v = r.get(f"{p}_over_clnp")
            if v not in (None, "", "None") and float(v) > 0:
                ys.append(i + (k - (len(peers) - 1) / 2) * h)
                vals.append(float(v))
        ax.barh(ys, vals, height=h, label=PEER_NAMES[p])
    ax.axvline(1.0, color="k", lw=1)
    ax.set_xscale("log")
    ax.set_yticks(range(len(names)), names)
    ax.invert_yaxis()
    ax.set_xlabel("peer time / clnp time (log scale; > 1: clnp faster)")
    ax.set_title(f"clnp against peers on {dev}")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    fig.tight_layout()
    os.makedirs(os.path.join(ROOT, "docs", "img"), exist_ok=True)
    png = os.path.join(ROOT, "docs", "img", f"core-{_slug(dev)}.png")
    fig.savefig(png, dpi=90)
    plt.close(fig)
    return png


def jit_ratios(rows: list[dict]) -> list[tuple[str, float]]:
    """(label, peer time / clnp jit time) from the ``X/jit=r`` notes of bench_jit.py rows
    (``X/kernel`` for the loop kernel; ``jit/raw`` is turned around to raw/jit)."""
    out = []
    for r in rows:
        note = r.get("ratio_note") or ""
        if "=" not in note:
            continue
        key, _, val = note.split(";")[0].partition("=")
        num, _, den = key.partition("/")
        try:
            v = float(val)
        except ValueError:
            continue
        if den in ("jit", "kernel"):
            out.append((f"{r['benchmark']}: {r['impl']}", v))
        elif num == "jit" and den == "raw" and v > 0:
            out.append((f"{r['benchmark']}: raw PyOpenCL launch", 1 / v))
    return out


def render_jit(path: str, out: list[str]) -> None:
    """bench_jit.py's table, then a chart of how much faster clnp jit is than each peer."""
    render_plain(path, out)
    rows = list(csv.DictReader(open(path)))
    ratios = jit_ratios(rows)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    if not ratios:
        return
    tag = os.path.basename(path)[len("jit-"):-len(".csv")]
    fig, ax = plt.subplots(figsize=(12, 0.32 * len(ratios) + 1.2))
    vals = [v for _, v in ratios]
    ax.barh(range(len(ratios)), vals,
            color=["tab:green" if v >= 1 else "tab:red" for v in vals])
    ax.axvline(1.0, color="k", lw=1)
    ax.set_xscale("log")
    ax.set_yticks(range(len(ratios)), [lbl for lbl, _ in ratios], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("other time / clnp jit time (log scale; > 1: jit faster)")
    ax.set_title(f"clnp_grad.jit against eager clnp and peers ({tag})")
    fig.tight_layout()
    fig.subplots_adjust(left=0.4)     # the labels are long
    os.makedirs(os.path.join(ROOT, "docs", "img"), exist_ok=True)
    png = os.path.join(ROOT, "docs", "img", f"jit-{tag}.png")
    fig.savefig(png, dpi=90)
    plt.close(fig)
    out.append(f"![clnp jit against peers, {tag}]({os.path.relpath(png, ROOT + '/docs')})\n")


def render_plain(path: str, out: list[str]) -> None:
    rows = list(csv.DictReader(open(path)))
    if not rows:
        return
    cols = [c for c in rows[0] if c != "device" and any(r.get(c) not in ("", None)
                                                        for r in rows)]
    dev = rows[0].get("device") or os.path.basename(path).split("-", 1)[-1][:-len(".csv")]
    out.append(f"### {dev} (`{os.path.relpath(path, ROOT)}`)\n")
    out.append("| " + " | ".join(cols) + " |")
    out.append("|---" * len(cols) + "|")
    for r in rows:
        cells = []
        for c in cols:
            v = r.get(c, "")
            try:
                x = float(v)
                cells.append(v if x.is_integer() and "." not in v else
                             format(x, ".3g" if abs(x) >= 1e4 or (x and abs(x) < 1e-2)
                                    else ".3f") if math.isfinite(x) else v)
            except (TypeError, ValueError):
                cells.append(str(v).replace("|", "\\|"))
        out.append("| " + " | ".join(cells) + " |")
    out.append("")


def main() -> None:
    out = [HEADER]
    for path in sorted(glob.glob(os.path.join(HERE, "results", "core-*.csv"))):
        render_core(path, out)
    for prefix, (title, script) in SECTIONS.items():
        paths = sorted(glob.glob(os.path.join(HERE, "results", f"{prefix}-*.csv")))
        if not paths:
            continue
        out.append(f"## {title}\n\nFrom `{script}` (see its docstring for what is timed).\n")
        for path in paths:
            globals()[RENDER.get(prefix, "render_plain")](path, out)
    notes = os.path.join(HERE, "NOTES.md")
    if os.path.exists(notes):
        out.append(open(notes).read())
    target = os.path.join(ROOT, "docs", "performance.md")
    with open(target, "w") as f:
        f.write("\n".join(out).rstrip() + "\n")
    print("wrote", target)


if __name__ == "__main__":
    main()
