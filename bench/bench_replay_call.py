"""Host time of a replayed jitted call: the recording walked step by step
(``capture.Replay.__call__``) against the same recording as generated straight-line code
(``capture._generated_call``).

    python bench/bench_replay_call.py [--calls 3000] [--csv bench/results/replay-call-<device>.csv]

The step: the logistic-regression SGD step of ``bench/xla_table.py`` (64x16, float32), whose
per-call time on PoCL is the host's Python around one whole-step launch. Reported: the
recording's launches and the thread time per call of each form (``time.thread_time``: the
calling thread's CPU time, steadier on a shared machine than the wall clock; calls back to
back as a training loop makes them; 7 rounds of ``--calls``, the forms in turn, medians),
for the replay alone and for the whole jitted call.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any, Callable


HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import clnp  # noqa: E402
import clnp_grad as cg  # noqa: E402
from bench_core import per_call_rounds, write_csv  # noqa: E402
from xla_table import logistic_problem, logistic_step  # noqa: E402


def logistic() -> tuple[Any, Callable[[], Any]]:
    """The jitted step of ``bench/xla_table.py``'s logistic row and a call of it that feeds
    its results to the next."""
    w0, b0, Xh, yh = logistic_problem()
    step = logistic_step(clnp, cg.jit, cg.grad)
    X, y = clnp.asarray(Xh), clnp.asarray(yh)
    state = [clnp.asarray(w0), clnp.asarray(b0)]

    def call() -> Any:
        state[:] = step(state[0], state[1], X, y)
        return state[0]
    return step, call


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=3000)
    ap.add_argument("--csv", default=None)
    a = ap.parse_args()
    device = clnp.default_device()
    jitted, call = logistic()
    for _ in range(4):
        call()
    device.synchronize()
    (exe, _), = jitted._fast.values()
    rep = exe.replay.replay
    code = rep.fast
    if not callable(code):
        raise SystemExit(f"no generated call for this recording: steps "
                         f"{[s[0] for s in rep.steps]}")
    seen: list = []
    walk = type(rep).__call__

    def spy(self: Any, flat: Any) -> Any:
        seen.append(list(flat))
        return walk(self, flat)
    type(rep).__call__ = spy          # the executable's inputs of one call, in its order
    call()
    type(rep).__call__ = walk
    inputs = seen[-1]

    def mode(fast: Any, fn: Callable[[], Any]) -> Callable[[], Any]:
        def run() -> Any:
            rep.fast = fast
            return fn()
        return run
    drain = lambda _: device.synchronize()   # noqa: E731
    med = per_call_rounds([("replay_code", mode(code, lambda: rep(inputs)), drain),
                           ("replay_walk", mode(False, lambda: rep(inputs)), drain),
                           ("call_code", mode(code, call), drain),
                           ("call_walk", mode(False, call), drain)],
                          a.calls, clock=time.thread_time)
    rep.fast = code
    row = {"device": str(device.name), "step": "logistic 64x16", "launches": rep.n_launches,
           **{f"{k}_us": round(v, 1) for k, v in med.items()}}
    print(row, flush=True)
    tag = "pocl-cpu" if device.is_cpu else "nvidia-h200"
    write_csv(a.csv or os.path.join(HERE, "results", f"replay-call-{tag}.csv"), [row])


if __name__ == "__main__":
    main()
