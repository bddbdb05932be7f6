"""A small character-level transformer trained on the Python standard library's own source.

    python examples/char_transformer.py                      # default device, 600 steps
    python examples/char_transformer.py --steps 100          # a quick look
    python examples/char_transformer.py --amp --device pocl:0 --plot /tmp/chars.png

The text is a few modules of the running interpreter's standard library (every machine with
Python has them: ``os.path.dirname(os.__file__)``), cut into overlapping windows; the last
10 % of the text is held out. The model is a GPT-style decoder written with clnp_nn modules:
token and position embeddings, pre-norm blocks of causal ``MultiheadAttention`` and a GELU
MLP, a final LayerNorm and a linear head. It trains with AdamW (warm-up, cosine decay,
gradient clipping), batches from clnp_nn.data.DataLoader, and one jitted ``value_and_grad``
step (examples/common.py). The bar shows the loss, the held-out loss and characters per
second; at the end the model writes a sample, and the loss curve goes to ``--plot`` (default
examples/out/char_transformer-loss.png).
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clnp as xp  # noqa: E402
import clnp_grad as cg  # noqa: E402
import clnp_nn as nn  # noqa: E402
import clnp_nn.functional as F  # noqa: E402
from clnp_nn import optim  # noqa: E402
from clnp_nn.data import DataLoader  # noqa: E402

import common  # noqa: E402

# Pure-Python modules present in every CPython >= 3.10, on every platform.
SOURCES = ("textwrap.py", "string.py", "heapq.py", "bisect.py", "functools.py", "random.py")


def load_text(names: tuple[str, ...] = SOURCES) -> str:
    """The concatenated source of ``names`` from the standard library's directory, with
    characters outside printable ASCII (and newline) replaced by ``?``."""
    root = os.path.dirname(os.__file__)
    parts = []
    for name in names:
        with open(os.path.join(root, name), encoding="utf-8") as f:
            parts.append(f.read())
    text = "\n".join(parts).replace("\t", "    ")
    return "".join(c if (" " <= c <= "~" or c == "\n") else "?" for c in text)


class Block(nn.Module):
    """Pre-norm transformer block: ``x + attn(ln1(x))``, then ``x + mlp(ln2(x))``."""

    ln1: Any
    attn: Any
    ln2: Any
    fc1: Any
    fc2: Any

    def __init__(self, dim: int, heads: int, *, key: Any):
        k1, k2, k3 = cg.random.split(key, 3)
        self.ln1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True, key=k1)
        self.ln2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim, key=k2)
        self.fc2 = nn.Linear(4 * dim, dim, key=k3)

    def __call__(self, x: Any, *, key: Any = None, training: bool = True) -> Any:
        h, _ = self.attn(self.ln1(x), need_weights=False, is_causal=True)
        x = x + h
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class CharTransformer(nn.Module):
    """Token ids ``(N, L)`` with ``L <= block_size`` -> next-character logits ``(N, L, V)``."""

    tok: Any
    pos: Any
    blocks: tuple
    ln_f: Any
    head: Any
    block_size: int = nn.static()

    def __init__(self, vocab: int, block_size: int, dim: int, heads: int, layers: int, *,
                 key: Any):
        keys = cg.random.split(key, layers + 3)
        self.block_size = block_size
        self.tok = nn.Embedding(vocab, dim, key=keys[0])
        self.pos = nn.Embedding(block_size, dim, key=keys[1])
        self.blocks = tuple(Block(dim, heads, key=keys[3 + i]) for i in range(layers))
        self.ln_f = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, key=keys[2])

    def __call__(self, ids: Any, *, key: Any = None, training: bool = True) -> Any:
        h = self.tok(ids) + self.pos(xp.arange(ids.shape[1]))
        for block in self.blocks:
            h = block(h)
        return self.head(self.ln_f(h))


def loss_fn(model: CharTransformer, batch: Any, key: Any) -> tuple[Any, CharTransformer]:
    ids = batch                                   # (N, L + 1): inputs and shifted targets
    logits = model(ids[:, :-1], key=key, training=True)
    n, length, vocab = logits.shape
    logits = xp.reshape(xp.astype(logits, xp.float32), (n * length, vocab))
    return F.cross_entropy(logits, xp.reshape(ids[:, 1:], (n * length,))), model


def windows(ids: np.ndarray, length: int, stride: int) -> np.ndarray:
    """Every ``stride``-th window of ``length`` consecutive ids, ``(n, length)``."""
    starts = np.arange(0, len(ids) - length + 1, stride)
    return ids[starts[:, None] + np.arange(length)]


def sample(model: CharTransformer, policy: Any, prompt: list[int], n: int,
           rng: np.random.Generator, temperature: float = 0.8) -> list[int]:
    """``n`` characters drawn one by one after ``prompt``. The forward pass always sees a
    ``(1, block_size)`` window, so it compiles once: the causal mask makes the logits at
    position ``t`` independent of what lies after ``t``."""
    forward = cg.jit(lambda m, ids: m(ids, training=False))
    model = policy.cast_to_compute(model)
    size = model.block_size
    out = list(prompt)
    for _ in range(n):
        ctx = out[-size:]
        window = np.zeros((1, size), np.int32)
        window[0, :len(ctx)] = ctx
        logits = xp.asnumpy(xp.astype(forward(model, xp.asarray(window)), xp.float32))
        z = logits[0, len(ctx) - 1].astype(np.float64) / temperature
        p = np.exp(z - z.max())
        out.append(int(rng.choice(len(p), p=p / p.sum())))
    return out


def train(argv: list[str] | None = None) -> dict:
    """Parse ``argv``, train, evaluate, sample and plot; return the results
    (``val_loss``, ``sample``, ``history``, ``plot``, ``state``)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    common.add_arguments(ap, name="char_transformer", epochs=0, batch_size=32, lr=3e-3)
    ap.add_argument("--steps", type=int, default=600,
                    help="training steps (used when --epochs is 0)")
    ap.add_argument("--block", type=int, default=64, help="context length in characters")
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--sample-chars", type=int, default=300)
    ap.add_argument("--prompt", default="def ")
    args = ap.parse_args(argv)
    device = common.select_device(args.device)

    text = load_text()
    chars = sorted(set(text))
    index = {c: i for i, c in enumerate(chars)}
    ids = np.array([index[c] for c in text], np.int32)
    split = int(0.9 * len(ids))
    train_windows = windows(ids[:split], args.block + 1, args.block // 2)
    val_windows = windows(ids[split:], args.block + 1, args.block + 1)[:64]

    key_model, key_train = cg.random.split(cg.random.key(args.seed))
    model = CharTransformer(len(chars), args.block, args.dim, args.heads, args.layers,
                            key=key_model)
    loader = DataLoader(train_windows, batch_size=args.batch_size, shuffle=True,
                        seed=args.seed, drop_last=True, prefetch=args.prefetch)
    steps = args.epochs * len(loader) if args.epochs else args.steps
    schedule = optim.warmup_cosine_decay_schedule(0.0, args.lr, warmup_steps=min(50, steps // 10),
                                                  decay_steps=steps, end_value=args.lr / 10)
    optimizer = optim.chain(optim.clip_by_global_norm(1.0),
                            optim.adamw(schedule, weight_decay=1e-2,
                                        mask=lambda p: cg.tree_map(lambda a: a.ndim > 1, p)))
    policy, loss_scale = common.precision(args.amp, device)
    state = common.init_state(model, optimizer, loss_scale, key_train)
    step = common.make_train_step(loss_fn, optimizer, policy)

    val_ids = xp.asarray(val_windows)
    val_loss = cg.jit(lambda m, b: loss_fn(m, b, None)[0])

    def evaluate(state: dict) -> dict:
        return {"val_loss": float(val_loss(policy.cast_to_compute(common.model_of(state)),
                                           val_ids))}

    mode = "amp float16" if args.amp else "float32"
    n_params = sum(int(np.prod(a.shape)) for a in cg.tree_leaves(state["params"]))
    print(f"char transformer: {len(text):,} characters of {', '.join(SOURCES)}; vocabulary "
          f"{len(chars)}; {n_params:,} parameters; {steps} steps of {args.batch_size}x"
          f"{args.block}; {mode}, on {device}", flush=True)
    state, hist = common.fit(step, state, loader, steps,
                             items_per_step=args.batch_size * args.block, unit="char",
                             steps_per_epoch=len(loader), evaluate=evaluate,
                             eval_every=max(1, steps // 6), desc="char_transformer",
                             progress=not args.no_progress)
    rng = np.random.default_rng(args.seed)
    prompt = [index.get(c, index["?"]) for c in args.prompt]
    out = sample(common.model_of(state), policy, prompt, args.sample_chars, rng)
    text_out = "".join(chars[i] for i in out)
    final = hist.evals[-1][1]["val_loss"]
    plot = common.plot_history(hist, args.plot,
                               f"char transformer ({mode}, {device.name.strip()}): "
                               f"held-out loss {final:.3f}")
    print(f"loss {hist.losses[0]:.3f} -> {hist.losses[-1]:.3f}, held-out loss {final:.3f} "
          f"(uniform guess: {np.log(len(chars)):.3f}); {hist.throughput:,.0f} char/s over "
          f"{hist.seconds:.1f} s (compilation included)" + (f"; plot: {plot}" if plot else ""))
    print("sample:\n" + text_out, flush=True)
    return {"val_loss": final, "sample": text_out, "history": hist, "plot": plot,
            "state": state}


if __name__ == "__main__":
    train()
