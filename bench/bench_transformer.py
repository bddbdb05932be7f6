"""The character transformer's training step (examples/char_transformer.py): clnp_grad.jit
against jax.jit, with PyTorch eager and torch.compile as context (issue #26's transformer row).

    python bench/bench_transformer.py [--reps 20] [--batch 32] [--block 64] [--dim 64]
                                      [--heads 4] [--layers 2] [--turn 6] [--no-torch-compile]
                                      [--csv bench/results/transformer-pocl-cpu.csv]

The model is the example's: token and position embeddings, pre-norm blocks of causal
multi-head attention and a GELU (exact, erf) MLP, a final LayerNorm and a linear head; the
loss is the mean cross-entropy of the next character. One step is ``value_and_grad`` of the
loss plus the optimizer's update: gradient clipping to global norm 1, then AdamW (lr 3e-3,
weight decay 1e-2 on the matrices only), ``optim.chain`` in clnp_nn and ``optax.chain`` in
JAX (written out where optax is not installed), a constant learning rate on both sides (the
example's schedule is left out so that both run the same arithmetic). JAX and PyTorch run the same functions written in their own
vocabularies, from the same initial parameters (clnp's, copied) on the same batch; before
anything is timed the first three steps' losses must agree with clnp's to 1e-4 (relative),
so every peer trains the same model. Times are medians of ``--reps`` steps, the peers taking
turns of ``--turn`` consecutive steps, the first of each turn untimed (bench_core.race_blocks),
with the result read (``float(loss)``,
``block_until_ready``, ``cuda.synchronize``) inside the timed region. clnp runs on its default
device (``CLNP_DEVICE``); JAX and PyTorch on their default device of the same kind (CPU, or
the GPU when clnp's device is one and they have it).
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
from typing import Any, Callable

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "examples"))

import clnp as xp  # noqa: E402
import clnp_grad as cg  # noqa: E402
import clnp_nn as nn  # noqa: E402
from clnp_nn import optim  # noqa: E402

import char_transformer as ex  # noqa: E402
from bench_core import append_csv, race_blocks  # noqa: E402

LR, WD, CLIP, EPS = 3e-3, 1e-2, 1.0, 1e-5


def problem(batch: int, block: int, dim: int, heads: int, layers: int
            ) -> tuple[Any, np.ndarray, int]:
    """The example's model from key 0, a batch of ``batch`` windows of ``block + 1``
    characters (seed 0), and the vocabulary size."""
    text = ex.load_text()
    chars = sorted(set(text))
    index = {c: i for i, c in enumerate(chars)}
    ids = np.array([index[c] for c in text], np.int32)
    windows = ex.windows(ids, block + 1, block // 2)
    batch_np = windows[np.random.default_rng(0).choice(len(windows), batch, replace=False)]
    model = ex.CharTransformer(len(chars), block, dim, heads, layers, key=cg.random.key(0))
    return model, batch_np, len(chars)


def clnp_training(model: Any, batch_np: np.ndarray, heads: int) -> Callable[[], Any]:
    """One jitted clnp training step per call on ``batch_np`` (state kept between calls),
    returning the loss."""
    params, rest = nn.partition(model, nn.trainable_mask(model))
    cstep, copt = clnp_step_fn(heads)
    state = {"p": params, "o": copt.init(params)}
    cbatch = xp.asarray(batch_np)

    def one() -> Any:
        loss, state["p"], state["o"] = cstep(state["p"], rest, state["o"], cbatch)
        return loss
    return one


def params_as_numpy(model: Any) -> dict:
    """The clnp model's parameters as a nested dict of NumPy arrays (PyTorch's layouts:
    ``Linear.weight`` is ``(out, in)``, attention's ``in_proj_weight`` is ``(3E, E)``)."""
    def lin(m: Any) -> dict:
        return {"w": xp.asnumpy(m.weight), "b": xp.asnumpy(m.bias)}

    def ln(m: Any) -> dict:
        return {"g": xp.asnumpy(m.weight), "b": xp.asnumpy(m.bias)}
    blocks = [{"ln1": ln(b.ln1), "ln2": ln(b.ln2), "fc1": lin(b.fc1), "fc2": lin(b.fc2),
               "qkv": {"w": xp.asnumpy(b.attn.in_proj_weight),
                       "b": xp.asnumpy(b.attn.in_proj_bias)},
               "out": lin(b.attn.out_proj)} for b in model.blocks]
    return {"tok": xp.asnumpy(model.tok.weight), "pos": xp.asnumpy(model.pos.weight),
            "blocks": blocks, "ln_f": ln(model.ln_f), "head": lin(model.head)}


def decay_mask(tree: Any, tree_map: Callable) -> Any:
    return tree_map(lambda a: a.ndim > 1, tree)


# ------------------------------------------------------------------------------ clnp
def clnp_step_fn(heads: int) -> tuple[Callable, Any]:
    optimizer = optim.chain(optim.clip_by_global_norm(CLIP),
                            optim.adamw(LR, weight_decay=WD,
                                        mask=lambda p: decay_mask(p, cg.tree_map)))

    def step(params: Any, rest: Any, opt: Any, batch: Any) -> tuple:
        def loss(p: Any) -> Any:
            return ex.loss_fn(nn.combine(p, rest), batch, None)[0]
        value, grads = cg.value_and_grad(loss)(params)
        updates, opt = optimizer.update(grads, opt, params)
        return value, optim.apply_updates(params, updates), opt
    return cg.jit(step), optimizer


# ------------------------------------------------------------------------------- JAX
def jax_step_fn(heads: int) -> tuple[Callable, Any]:
    import jax
    import jax.numpy as jnp
    try:
        import optax
    except ImportError:
        optax = None

    def layer_norm(x: Any, p: dict) -> Any:
        mu = jnp.mean(x, -1, keepdims=True)
        var = jnp.mean(jnp.square(x - mu), -1, keepdims=True)
        return (x - mu) / jnp.sqrt(var + EPS) * p["g"] + p["b"]

    def linear(x: Any, p: dict) -> Any:
        return x @ p["w"].T + p["b"]

    def attention(x: Any, p: dict, qkv: dict) -> Any:
        n, length, e = x.shape
        d = e // heads
        q, k, v = (x @ qkv["w"][i * e:(i + 1) * e].T + qkv["b"][i * e:(i + 1) * e]
                   for i in range(3))
        split = lambda t: t.reshape(n, length, heads, d).transpose(0, 2, 1, 3)  # noqa: E731
        q, k, v = split(q), split(k), split(v)
        s = q @ k.transpose(0, 1, 3, 2) * (1.0 / math.sqrt(d))
        causal = jnp.triu(jnp.ones((length, length), bool), 1)
        s = jnp.where(causal, -jnp.inf, s)
        a = jax.nn.softmax(s, axis=-1)
        o = (a @ v).transpose(0, 2, 1, 3).reshape(n, length, e)
        return linear(o, p)

    def forward(p: dict, ids: Any) -> Any:
        h = p["tok"][ids] + p["pos"][jnp.arange(ids.shape[1])]
        for b in p["blocks"]:
            h = h + attention(layer_norm(h, b["ln1"]), b["out"], b["qkv"])
            h = h + linear(jax.nn.gelu(linear(layer_norm(h, b["ln2"]), b["fc1"]),
                                       approximate=False), b["fc2"])
        return linear(layer_norm(h, p["ln_f"]), p["head"])

    def loss_fn(p: dict, batch: Any) -> Any:
        logits = forward(p, batch[:, :-1])
        v = logits.shape[-1]
        logp = jax.nn.log_softmax(logits.reshape(-1, v), axis=-1)
        return -jnp.take_along_axis(logp, batch[:, 1:].reshape(-1, 1), axis=1).mean()

    if optax is not None:
        optimizer = optax.chain(optax.clip_by_global_norm(CLIP),
                                optax.adamw(LR, weight_decay=WD,
                                            mask=lambda p: decay_mask(p, jax.tree_util.tree_map)))
        apply_updates = optax.apply_updates
    else:
        optimizer, apply_updates = _adamw_by_hand(jax, jnp)

    @jax.jit
    def step(params: Any, opt: Any, batch: Any) -> tuple:
        value, grads = jax.value_and_grad(loss_fn)(params, batch)
        updates, opt = optimizer.update(grads, opt, params)
        return value, apply_updates(params, updates), opt
    return step, optimizer


def _adamw_by_hand(jax: Any, jnp: Any) -> tuple[Any, Callable]:
    """optax's ``chain(clip_by_global_norm(CLIP), adamw(LR, weight_decay=WD, mask=...))``
    written out, for machines without optax (the GPU machine): the same arithmetic."""
    tm = jax.tree_util.tree_map
    b1, b2, eps = 0.9, 0.999, 1e-8

    class Opt:
        @staticmethod
        def init(params: Any) -> Any:
            return (jnp.zeros((), jnp.int32), tm(jnp.zeros_like, params),
                    tm(jnp.zeros_like, params))

        @staticmethod
        def update(g: Any, state: Any, params: Any) -> tuple:
            count, mu, nu = state
            norm = jnp.sqrt(sum(jnp.sum(jnp.square(x)) for x in jax.tree_util.tree_leaves(g)))
            g = tm(lambda x: jnp.where(norm < CLIP, x, x * (CLIP / norm)), g)
            count = count + 1
            mu = tm(lambda m, x: b1 * m + (1 - b1) * x, mu, g)
            nu = tm(lambda v, x: b2 * v + (1 - b2) * x * x, nu, g)
            c1, c2 = 1 - b1 ** count, 1 - b2 ** count
            upd = tm(lambda m, v, p: -LR * ((m / c1) / (jnp.sqrt(v / c2) + eps)
                                            + (WD * p if p.ndim > 1 else 0.0)), mu, nu, params)
            return upd, (count, mu, nu)
    return Opt, lambda p, u: tm(lambda a, b: a + b, p, u)


# --------------------------------------------------------------------------- PyTorch
def torch_step_fn(p0: dict, heads: int, device: str, compile_: bool) -> tuple[Callable, Any]:
    import torch
    import torch.nn.functional as tf

    params = torch.utils._pytree.tree_map(
        lambda a: torch.tensor(a, device=device, requires_grad=True), p0)
    leaves = torch.utils._pytree.tree_leaves(params)
    decay = [t for t in leaves if t.ndim > 1]
    no_decay = [t for t in leaves if t.ndim <= 1]
    # torch's AdamW decays before the step (lr * wd * p), optax's after scaling by lr:
    # the same update; eps as optax's default (1e-8), torch's default too
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": WD},
                             {"params": no_decay, "weight_decay": 0.0}], lr=LR)

    def linear(x: Any, p: dict) -> Any:
        return tf.linear(x, p["w"], p["b"])

    def forward(ids: Any) -> Any:
        p = params
        length = ids.shape[1]
        h = p["tok"][ids] + p["pos"][torch.arange(length, device=ids.device)]
        for b in p["blocks"]:
            x = tf.layer_norm(h, (h.shape[-1],), b["ln1"]["g"], b["ln1"]["b"], EPS)
            n, _, e = x.shape
            q, k, v = tf.linear(x, b["qkv"]["w"], b["qkv"]["b"]).split(e, dim=-1)
            split = lambda t: t.view(n, length, heads, e // heads).transpose(1, 2)  # noqa
            o = tf.scaled_dot_product_attention(split(q), split(k), split(v), is_causal=True)
            h = h + linear(o.transpose(1, 2).reshape(n, length, e), b["out"])
            x = tf.layer_norm(h, (e,), b["ln2"]["g"], b["ln2"]["b"], EPS)
            h = h + linear(tf.gelu(linear(x, b["fc1"])), b["fc2"])
        x = tf.layer_norm(h, (h.shape[-1],), p["ln_f"]["g"], p["ln_f"]["b"], EPS)
        return linear(x, p["head"])

    def loss_fn(batch: Any) -> Any:
        logits = forward(batch[:, :-1])
        return tf.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch[:, 1:].reshape(-1))
    if compile_:
        loss_fn = torch.compile(loss_fn)

    def step(batch: Any) -> Any:
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(batch)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(leaves, CLIP)
        opt.step()
        return loss
    return step, opt


# ------------------------------------------------------------------------------ main
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--block", type=int, default=64)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--turn", type=int, default=6,
                    help="consecutive steps per turn of each peer, the first untimed")
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--no-torch-compile", action="store_true")
    ap.add_argument("--csv", default=None, help="append the rows to this CSV file")
    ap.add_argument("--label", default="")
    a = ap.parse_args(argv)

    dev = xp.default_device()
    gpu = not dev.is_cpu
    model, batch_np, vocab = problem(a.batch, a.block, a.dim, a.heads, a.layers)
    p0 = params_as_numpy(model)
    n_params = sum(int(np.prod(v.shape)) for v in
                   __import__("jax").tree_util.tree_leaves(p0))
    print(f"char transformer: vocabulary {vocab}, {n_params:,} parameters, batch "
          f"{a.batch}x{a.block}, dim {a.dim}, {a.heads} heads, {a.layers} layers; clnp on {dev}")

    # clnp
    clnp_one = clnp_training(model, batch_np, a.heads)

    def run_clnp() -> float:
        return float(clnp_one())

    # JAX
    import jax
    import jax.numpy as jnp
    jdev = jax.devices("gpu")[0] if gpu and jax.default_backend() == "gpu" else \
        jax.devices("cpu")[0]
    jstep, jopt = jax_step_fn(a.heads)
    jparams = jax.device_put(jax.tree_util.tree_map(jnp.asarray, p0), jdev)
    jstate = {"p": jparams, "o": jopt.init(jparams)}
    jbatch = jax.device_put(jnp.asarray(batch_np), jdev)

    def run_jax() -> float:
        loss, jstate["p"], jstate["o"] = jstep(jstate["p"], jstate["o"], jbatch)
        return float(loss.block_until_ready())

    peers: dict[str, Callable[[], float]] = {"clnp jit": run_clnp, "jax.jit": run_jax}
    if not a.no_torch:
        import torch
        tdev = "cuda" if gpu and torch.cuda.is_available() else "cpu"
        torch.backends.cuda.matmul.allow_tf32 = False
        tbatch = torch.tensor(batch_np.astype(np.int64), device=tdev)
        sync = torch.cuda.synchronize if tdev == "cuda" else (lambda: None)
        for name, comp in (("torch eager", False), ("torch.compile", True)):
            if comp and a.no_torch_compile:
                continue
            tstep, _ = torch_step_fn(p0, a.heads, tdev, comp)

            def run_torch(tstep: Callable = tstep) -> float:
                loss = tstep(tbatch).detach()
                sync()
                return float(loss)
            peers[name] = run_torch

    # the same model: the first three losses agree (each peer from the same start)
    first: dict[str, list[float]] = {}
    t_first: dict[str, float] = {}
    for name, fn in list(peers.items()):
        t0 = time.perf_counter()
        try:
            first[name] = [fn() for _ in range(3)]
        except Exception as e:      # noqa: BLE001  (torch.compile without its compiler)
            if not name.startswith("torch"):
                raise
            print(f"{name}: left out, it failed: {type(e).__name__}: {str(e)[:200]}")
            del peers[name]
            continue
        t_first[name] = time.perf_counter() - t0
    for name, losses in first.items():
        ref = first["clnp jit"]
        if not np.allclose(losses, ref, rtol=1e-4, atol=0):
            raise SystemExit(f"{name}'s first losses {losses} differ from clnp's {ref}")
    print("first three losses (all peers agree to 1e-4):",
          ", ".join(f"{v:.5f}" for v in first["clnp jit"]))

    med = {k: 1e3 * v for k, v in race_blocks(peers, a.reps, max(2, a.turn)).items()}
    device = str(dev)
    rows = []
    for name, m in med.items():
        rows.append({"label": a.label, "workload": "char transformer step", "device": device,
                     "impl": name, "ms": round(m, 4),
                     "vs_jax": round(m / med["jax.jit"], 3),
                     "first_3_steps_s": round(t_first[name], 2),
                     "shape": f"{a.batch}x{a.block} d{a.dim} h{a.heads} l{a.layers}",
                     "reps": a.reps})
        print(f"{name:14s} {m:9.3f} ms   {m / med['jax.jit']:.2f}x jax.jit   "
              f"(first three steps incl. compile {t_first[name]:.1f} s)")
    if a.csv:
        append_csv(a.csv, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
