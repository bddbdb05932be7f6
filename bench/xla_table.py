"""Issue #26's table, regenerated on one device by one command: clnp_grad.jit against jax.jit
on each training workload, with the other peers of the same runs as context.

    python bench/xla_table.py [--quick] [--only mlp,chain,logistic,cnn,resnet,transformer]
                              [--csv bench/results/xla-table-<device>.csv]

Each row comes from the benchmark that owns it, run here as a child process on clnp's default
device (``CLNP_DEVICE``), where its peers take turns in one process and medians are taken
(see each script's docstring for its checks against NumPy, JAX or PyTorch before timing):

- MLP SGD step 784-1024-1024-10, batch 256, float32, the update included, and the
  elementwise chain over 2^24 float32: ``bench/bench_jit.py --only chain,mlp`` (on a GPU
  the chain's pipelined rows: 20 calls per wait, the device's throughput);
- logistic-regression SGD step, 64x16, per call: here (below), 1,000 chained calls per
  repetition with one wait at the end, clnp and JAX in turn;
- digits CNN training step (AdamW, batch 64): ``bench/bench_nn_train.py``;
- ResNet block forward + backward (batch 64 on the GPU, 16 on the CPU):
  ``bench/bench_nn_conv.py``;
- the character transformer's training step: ``bench/bench_transformer.py``.

Writes one CSV row per workload (clnp ms, jax ms, clnp/jax, the others) and prints the table
in markdown. ``--quick`` runs fewer repetitions (a smoke run, not for the record).
"""
from __future__ import annotations

import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

from bench_core import append_csv  # noqa: E402

ROWS = ("mlp", "chain", "logistic", "cnn", "resnet", "transformer")


def _run(args: list[str], timeout: float = 1200) -> None:
    print("+ python " + " ".join(args), flush=True)
    r = subprocess.run([sys.executable, *args], cwd=ROOT, timeout=timeout,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode:
        raise SystemExit(f"{args[0]} failed ({r.returncode}):\n{r.stdout[-3000:]}")


def _read(path: str) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _row(workload: str, unit: str, clnp_v: float | None, jax_v: float | None,
         others: dict[str, float], source: str) -> dict:
    return {"workload": workload, "unit": unit,
            "clnp_jit": None if clnp_v is None else round(clnp_v, 4),
            "jax_jit": None if jax_v is None else round(jax_v, 4),
            "clnp_over_jax": (round(clnp_v / jax_v, 3) if clnp_v and jax_v else None),
            "others": "; ".join(f"{k} {v:.4g}" for k, v in others.items()),
            "source": source}


def jit_rows(tmp: str, reps: int) -> list[dict]:
    path = os.path.join(tmp, "jit.csv")
    _run(["bench/bench_jit.py", "--only", "chain,mlp", "--reps", str(reps), "--csv", path])
    rows = _read(path)
    out = []
    for prefix, name in (("ew_chain", "elementwise chain 2^24 float32"),
                         ("MLP", "MLP SGD step 784-1024-1024-10, batch 256")):
        mine = [r for r in rows if r["benchmark"].startswith(prefix) and r["unit"] == "ms"]
        # the GPU's chain: device throughput, calls enqueued back to back (bench_jit's
        # chain_pipelined), not a wait's latency after each 0.1 ms kernel
        piped = [r for r in mine if r["impl"].endswith(", pipelined")]
        pick = piped if any(r["impl"].startswith("jax jit") for r in piped) else \
            [r for r in mine if not r["impl"].endswith(", pipelined")]
        # like with like: float32 products on both sides where the GPU also has TF32 rows
        # ("clnp jit, matmul precision tf32", "jax jit (gpu), default precision (TF32)")
        ours = next((r for r in pick if r["impl"].startswith("clnp jit")
                     and "tf32" not in r["impl"].lower()), None)
        jaxs = [r for r in pick if r["impl"].startswith("jax jit")]
        theirs = next((r for r in jaxs if "float32" in r["impl"]), jaxs[0] if jaxs else None)
        others = {r["impl"]: float(r["ms_or_us"]) for r in mine if r is not ours and
                  r is not theirs}
        out.append(_row(name, "ms", ours and float(ours["ms_or_us"]),
                        theirs and float(theirs["ms_or_us"]), others, "bench/bench_jit.py"))
    return out


def nn_rows(tmp: str, reps: int, gpu: bool) -> list[dict]:
    path = os.path.join(tmp, "train.csv")
    _run(["bench/bench_nn_train.py", "--batch", "64", "--reps", str(reps), "--csv", path])
    r = _read(path)[0]
    f = lambda k: float(r[k]) if r.get(k) else None   # noqa: E731
    torch_of = lambda r: {"torch eager": float(v) for k, v in r.items()   # noqa: E731
                          if k.startswith("torch_") and k.endswith("_ms") and v}
    out = [_row("digits CNN training step (AdamW, batch 64)", "ms", f("clnp_ms"), f("jax_ms"),
                torch_of(r), "bench/bench_nn_train.py")]
    path = os.path.join(tmp, "conv.csv")
    batch = "64" if gpu else "16"
    _run(["bench/bench_nn_conv.py", "--batch", batch, "--reps", str(reps), "--csv", path])
    r = next(x for x in _read(path) if x["case"] == "ResNet block forward+backward")
    out.append(_row(f"ResNet block forward+backward (batch {batch})", "ms", f("clnp_ms"),
                    f("jax_ms"), torch_of(r), "bench/bench_nn_conv.py"))
    return out


def transformer_row(tmp: str, reps: int) -> list[dict]:
    path = os.path.join(tmp, "transformer.csv")
    _run(["bench/bench_transformer.py", "--reps", str(reps), "--csv", path])
    rows = {r["impl"]: float(r["ms"]) for r in _read(path)}
    return [_row("char transformer training step (examples/char_transformer.py)", "ms",
                 rows.pop("clnp jit"), rows.pop("jax.jit"), rows,
                 "bench/bench_transformer.py")]


def logistic_problem() -> tuple:
    """The logistic row's starting weights and bias and its 64x16 batch, as NumPy arrays."""
    import numpy as np
    rng = np.random.default_rng(0)
    X = rng.standard_normal((64, 16)).astype(np.float32)
    y = np.where(rng.standard_normal(64) > 0, 1.0, -1.0).astype(np.float32)
    return np.zeros(16, np.float32), np.zeros((), np.float32), X, y


def logistic_step(ns: Any, jit: Callable, grad: Callable) -> Callable:
    """The logistic row's jitted SGD step ``(w, b, X, y) -> (w, b)`` written against array
    namespace ``ns`` with ``jit`` and ``grad`` (clnp's or JAX's)."""
    def loss(w: Any, b: Any, X: Any, y: Any) -> Any:
        return ns.mean(ns.log1p(ns.exp(-y * (X @ w + b))))

    @jit
    def step(w: Any, b: Any, X: Any, y: Any) -> tuple:
        gw, gb = grad(loss, argnums=(0, 1))(w, b, X, y)
        return w - 0.1 * gw, b - 0.1 * gb
    return step


def logistic_row(reps: int) -> list[dict]:
    """One SGD step of logistic regression on a 64x16 batch, per call: the step's fixed cost
    (launches, dispatch) with almost no arithmetic."""
    import numpy as np

    import clnp as xp
    import clnp_grad as cg
    import jax
    import jax.numpy as jnp

    w0, b0, X, y = logistic_problem()
    cstep = logistic_step(xp, cg.jit, cg.grad)
    jstep = logistic_step(jnp, jax.jit, jax.grad)
    jdev = jax.devices("cpu")[0] if xp.default_device().is_cpu else jax.devices()[0]
    cargs = [xp.asarray(a) for a in (w0, b0, X, y)]
    jargs = [jax.device_put(a, jdev) for a in (w0, b0, X, y)]
    cw = cstep(*cargs)
    jw = jstep(*jargs)
    for _ in range(50):
        cw = cstep(cw[0], cw[1], cargs[2], cargs[3])
        jw = jstep(jw[0], jw[1], jargs[2], jargs[3])
    np.testing.assert_allclose(np.asarray(cw[0]), np.asarray(jw[0]), rtol=1e-4, atol=1e-6)
    calls, ct, jt = 1000, [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(calls):
            cw = cstep(cw[0], cw[1], cargs[2], cargs[3])
        float(cw[1])
        ct.append((time.perf_counter() - t0) / calls * 1e6)
        t0 = time.perf_counter()
        for _ in range(calls):
            jw = jstep(jw[0], jw[1], jargs[2], jargs[3])
        float(jw[1].block_until_ready())
        jt.append((time.perf_counter() - t0) / calls * 1e6)
    return [_row("logistic-regression SGD step 64x16, per call", "us", statistics.median(ct),
                 statistics.median(jt), {}, "bench/xla_table.py")]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default=",".join(ROWS))
    ap.add_argument("--csv", default=None)
    ap.add_argument("--label", default="")
    a = ap.parse_args(argv)
    only = set(a.only.split(","))
    import clnp
    dev = clnp.default_device()
    gpu = not dev.is_cpu
    tag = "pocl-cpu" if not gpu else "nvidia-" + ("h200" if "H200" in dev.name else "gpu")
    path = a.csv or os.path.join(HERE, "results", f"xla-table-{tag}.csv")
    reps = 5 if a.quick else 15
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="clnp-xla-") as tmp:
        if only & {"chain", "mlp"}:
            rows += [r for r in jit_rows(tmp, reps)
                     if ("chain" in only and "chain" in r["workload"]) or
                     ("mlp" in only and "MLP" in r["workload"])]
        if "logistic" in only:
            rows += logistic_row(reps)
        if only & {"cnn", "resnet"}:
            rows += [r for r in nn_rows(tmp, max(5, reps // 2), gpu)
                     if ("cnn" in only and "CNN" in r["workload"]) or
                     ("resnet" in only and "ResNet" in r["workload"])]
        if "transformer" in only:
            rows += transformer_row(tmp, reps)
    for r in rows:
        r.update(label=a.label, device=str(dev),
                 date=time.strftime("%Y-%m-%d"))
    cols = ["label", "date", "device", "workload", "unit", "clnp_jit", "jax_jit",
            "clnp_over_jax", "others", "source"]
    append_csv(path, [{c: r[c] for c in cols} for r in rows])    # the columns in this order
    print(f"\n{dev}\n\n| workload | clnp jit | jax.jit | clnp/jax | others |\n|---|---|---|---|---|")
    for r in rows:
        ratio = r["clnp_over_jax"]
        verdict = "" if ratio is None else (" (ahead)" if ratio <= 1 else " slower")
        print(f"| {r['workload']} | {r['clnp_jit']} {r['unit']} | {r['jax_jit']} {r['unit']} | "
              f"{ratio}x{verdict} | {r['others']} |")
    print(f"\nrows appended to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
