"""Host time of a jitted call's pytree work: the general walk (``tree_flatten``,
``tree_unflatten``) against the code generated per structure (``_tree.flattener``,
``_tree.unflattener``), on the arguments of two training steps of issue #26's table.

    python bench/bench_pytree.py [--calls 500] [--csv bench/results/pytree-<host>.csv]

Trees: the digits CNN's state and batch (``bench/bench_nn_train.py``: modules, AdamW state,
loss scale, key) and the character transformer's parameters, frozen rest, optimizer state
and batch (``bench/bench_transformer.py``). A jitted call flattens its arguments and builds
its outputs' tree on every call. Per tree: leaves, nodes, and the per-call time of each
form (``time.thread_time``; 7 rounds of ``--calls``, the four measured in turn, medians).
Pure Python: the device does not matter.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from typing import Any, Callable

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "examples"))

import clnp  # noqa: E402
import clnp_grad as cg  # noqa: E402
import clnp_nn as nn  # noqa: E402
from bench_core import per_call_rounds, write_csv  # noqa: E402
from clnp_grad._tree import flattener, tree_flatten, tree_unflatten, unflattener  # noqa: E402


def cnn_args() -> Any:
    import bench_nn_train as bn
    import digits_cnn
    x, y = bn.batch_of(64)
    peer = bn.ClnpPeer(digits_cnn.make_model(cg.random.key(0)), x, y)
    return (peer.state, peer.batch)


def transformer_args() -> Any:
    import bench_transformer as bt
    model, batch_np, _ = bt.problem(32, 64, 64, 4, 2)
    params, rest = nn.partition(model, nn.trainable_mask(model))
    _, opt = bt.clnp_step_fn(4)
    return (params, rest, opt.init(params), clnp.asarray(batch_np))


def _nodes(tdef: Any) -> int:
    return 1 + sum(_nodes(c) for c in tdef.children) if tdef.kind != "leaf" else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=500)
    ap.add_argument("--csv", default=None)
    a = ap.parse_args()
    rows = []
    for name, make in (("digits CNN state", cnn_args), ("transformer state", transformer_args)):
        tree = make()
        leaves, tdef = tree_flatten(tree)
        flat, build = flattener(tdef), unflattener(tdef)
        assert flat(tree) == leaves and tree_flatten(build(leaves))[1] == tdef
        cases: list[tuple[str, Callable[[], Any]]] = [
            ("flatten_walk", lambda: tree_flatten(tree)), ("flatten_code", lambda: flat(tree)),
            ("unflatten_walk", lambda: tree_unflatten(tdef, leaves)),
            ("unflatten_code", lambda: build(leaves))]
        med = {k: round(v, 1) for k, v in per_call_rounds(
            [(k, fn, lambda _: None) for k, fn in cases], a.calls,
            clock=time.thread_time).items()}
        row = {"host": platform.processor() or platform.machine(), "tree": name,
               "leaves": len(leaves), "nodes": _nodes(tdef),
               **{f"{k}_us": v for k, v in med.items()}}
        rows.append(row)
        print(row, flush=True)
    tag = "pocl-cpu" if clnp.default_device().is_cpu else "nvidia-h200"
    write_csv(a.csv or os.path.join(HERE, "results", f"pytree-{tag}.csv"), rows)


if __name__ == "__main__":
    main()
