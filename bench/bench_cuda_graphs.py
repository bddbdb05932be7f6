"""Jitted training steps replayed through OpenCL launches against the same replays as CUDA
graphs (``clnp._runtime.cuda_graph``), on an NVIDIA device whose arrays CUDA sees.

    python bench/bench_cuda_graphs.py [--steps cnn,transformer] [--rounds 2]
                                      [--csv bench/results/cuda-graphs-<device>.csv]

Each measurement is a process of its own (``CLNP_CUDA_MEMORY=1``, ``CLNP_CUDA_GRAPHS=0`` or
``1``), the two forms alternating, ``--rounds`` of each: the digits CNN's step
(``bench/bench_nn_train.py``) and the character transformer's (``bench/bench_transformer.py``).
A process reports the pipelined time per step (20 steps back to back, then a read of the
loss; median of 7), the host's enqueue time of one step after a drain (median of 15), how
many calls ran as graphs, and its result; the parent records how long the process took to
exit after reporting (a process that loaded clnp's PTX into CUDA has hung at exit on the H200:
``--exit-timeout`` bounds the wait). Needs an NVIDIA device with the ``cuda`` extra; elsewhere
it says so and writes nothing.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any, Callable

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "examples"))


def _step(name: str) -> Callable[[], Any]:
    import clnp_grad as cg
    if name == "cnn":
        import bench_nn_train as bn
        import digits_cnn
        x, y = bn.batch_of(64)
        return bn.ClnpPeer(digits_cnn.make_model(cg.random.key(0)), x, y).step
    import bench_transformer as bt
    model, batch_np, _ = bt.problem(32, 64, 64, 4, 2)
    return bt.clnp_training(model, batch_np, 4)


def child(name: str) -> None:
    """Measure one step in this process and print one JSON line."""
    import clnp
    from clnp._runtime import cuda_graph
    launched = {"graph": 0, "fallback": 0}
    launch = cuda_graph.GraphReplay.launch

    def counted(self: Any, bufs: Any) -> bool:
        ok = launch(self, bufs)
        launched["graph" if ok else "fallback"] += 1
        return ok
    cuda_graph.GraphReplay.launch = counted   # type: ignore[method-assign]
    device = clnp.default_device()
    step = _step(name)
    for _ in range(10):
        loss = step()
    float(loss)
    enqueue, pipelined = [], []
    for _ in range(15):
        device.synchronize()
        t0 = time.perf_counter()
        loss = step()
        enqueue.append(time.perf_counter() - t0)
        float(loss)
    for _ in range(7):
        device.synchronize()
        t0 = time.perf_counter()
        for _ in range(20):
            loss = step()
        final = float(loss)
        pipelined.append((time.perf_counter() - t0) / 20)
    print(json.dumps({"step": name, "pipelined_ms": statistics.median(pipelined) * 1e3,
                      "enqueue_ms": statistics.median(enqueue) * 1e3,
                      "graph_calls": launched["graph"], "loss": final,
                      "reported_at": time.time()}), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", default="cnn,transformer")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--csv", default=None)
    ap.add_argument("--exit-timeout", type=float, default=60.0)
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(a.child)
        return
    import clnp
    from clnp._runtime import cuda_memory
    device = clnp.default_device()
    why = cuda_memory.why_unsupported(device)
    if why is not None:
        raise SystemExit(f"{device}: no memory shared with CUDA ({why}); nothing measured")
    from bench_core import write_csv
    rows = []
    for name in a.steps.split(","):
        for r in range(a.rounds):
            for graphs in ("0", "1"):
                env = dict(os.environ, CLNP_CUDA_MEMORY="1", CLNP_CUDA_GRAPHS=graphs)
                p = subprocess.Popen([sys.executable, __file__, "--child", name], env=env,
                                     stdout=subprocess.PIPE, text=True)
                assert p.stdout is not None
                line = p.stdout.readline()
                try:
                    rc = p.wait(timeout=a.exit_timeout)
                    exit_s = round(time.time() - json.loads(line)["reported_at"], 2) \
                        if line else None
                except subprocess.TimeoutExpired:
                    p.kill()
                    rc, exit_s = "hung at exit", f">{a.exit_timeout}"
                got = json.loads(line) if line else {}
                row = {"device": str(device.name), "step": name, "graphs": graphs,
                       "round": r, "pipelined_ms": round(got.get("pipelined_ms", 0), 3),
                       "enqueue_ms": round(got.get("enqueue_ms", 0), 3),
                       "graph_calls": got.get("graph_calls"), "loss": got.get("loss"),
                       "exit_s": exit_s, "rc": rc}
                rows.append(row)
                print(row, flush=True)
    write_csv(a.csv or os.path.join(HERE, "results", "cuda-graphs-nvidia-h200.csv"), rows)


if __name__ == "__main__":
    main()
