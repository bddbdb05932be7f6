"""One training step of the digits CNN: clnp vs PyTorch and JAX, side by side in one process.

    python bench/bench_nn_train.py [--batch 64] [--reps 7] [--csv PATH]

The model is ``make_model`` of examples/digits_cnn.py: conv(1->32, 3x3, padding 1)-BatchNorm-
ReLU-max-pool 2 -> conv(32->64)-BatchNorm-ReLU-max-pool 2 -> flatten -> linear(256->10), on
``(batch, 1, 8, 8)`` float32 images (the first ``--batch`` training images of scikit-learn's
digits, repeated when ``--batch`` exceeds the training set), cross-entropy, AdamW (learning
rate 3e-3, weight decay 1e-4 on the weights of rank > 1 only, as the example masks it; the
example's warm-up/cosine schedule is replaced by the constant peak rate), batch norm in
training mode updating its running statistics. One timed step is:

- clnp: the example's own step, ``examples/common.py``'s ``make_train_step`` (float32 policy,
  no loss scaling): ``clnp_grad.value_and_grad`` of the loss with the new BatchNorm state as
  auxiliary output, the optimizer update, and the example's finiteness check that keeps the
  old state on a non-finite gradient, all under one ``clnp_grad.jit``. It runs on clnp's
  default device (``CLNP_DEVICE`` picks it).
- PyTorch: the same model as ``torch.nn`` modules in eager mode, ``zero_grad``, forward,
  ``F.cross_entropy``, ``backward`` and ``torch.optim.AdamW`` (two parameter groups for the
  mask). It runs on the CPU with ``torch.set_num_threads(os.cpu_count())``, or on CUDA (cuDNN)
  when clnp's device is a GPU and PyTorch sees one, with TF32 off.
- JAX (when ``import jax`` and ``import optax`` work; else its columns stay empty): the same
  model written with ``lax.conv_general_dilated``, a hand-written training-mode batch norm,
  ``lax.reduce_window`` max pooling and ``optax.adamw`` (masked alike), ``value_and_grad``
  plus the update under one ``jax.jit``, on JAX's default backend (``JAX_PLATFORMS=cuda`` on
  the GPU machine; ``XLA_PYTHON_CLIENT_PREALLOCATE=false`` is set so that XLA leaves GPU
  memory to OpenCL).

All three compute in full float32: PyTorch with TF32 disabled, JAX's convolutions and product
at ``Precision.HIGHEST``. All three start from clnp's initial weights and see the same batch;
before timing, the first step's loss of each must agree with clnp's (rtol 1e-4), and so must
the second step's loss (rtol 1e-3), the parameters and the running statistics after the first
step (so the optimizers and the batch-norm updates agree too; a weight whose PyTorch gradient
is below 1e-3 of the model's largest, such as the conv biases that batch norm cancels, may
differ by up to 2 * lr, since Adam's first update is about lr * sign(g)). Times are medians of
``--reps`` steps after warm-up steps, with ``clnp.synchronize()`` (and
``torch.cuda.synchronize()``, ``jax.block_until_ready``) inside each timed region. The peers
take turns of ``--block`` consecutive steps, the first of each turn untimed, so that load from
other processes hits them alike while no timed step follows another framework's: on a CPU
with few cores the peers disturb each other, PyTorch's OpenMP threads and XLA's pool spinning
for a while after each step (``OMP_WAIT_POLICY``), which cost whichever peer came next
1.5-2 ms per step on the shared 2-core machine when the peers alternated step by step, and
PyTorch's own step time swung from 3 ms to over 300 ms between runs (docs/performance.md).
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Callable

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "examples"))

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")   # before any jax import

import numpy as np  # noqa: E402

import clnp  # noqa: E402
import clnp_grad as cg  # noqa: E402
import clnp_nn as nn  # noqa: E402
from clnp_nn import optim  # noqa: E402

import common  # noqa: E402  (examples/common.py)
import digits_cnn  # noqa: E402  (examples/digits_cnn.py)
from bench_core import race_blocks  # noqa: E402
from bench_nn_conv import timed, torch_device  # noqa: E402

LR, WEIGHT_DECAY = 3e-3, 1e-4
CONV_LAYERS, BN_LAYERS, LINEAR_LAYER = (0, 4), (1, 5), 9    # indices in make_model's Sequential
# Adam's first update is about -lr * sign(g): where a gradient is near zero (below this share
# of the model's largest gradient, e.g. the conv biases, which the batch norm after them
# cancels), float32 rounding decides its sign, and peers may move that weight by up to lr in
# opposite directions. The share was set this wide when clnp's jitted step was less precise
# than eager clnp and PyTorch at large batches (at batch 1500 its gradients erred by up to
# 3.6e-4 against float64, PyTorch float32 3e-7); since the fused reductions sum each row
# into its own accumulators, the jitted gradients at batch 1500 are within 7e-7 (of the
# largest) of eager clnp's.
NEAR_ZERO_GRAD = 1e-3


def decay_mask(params: Any) -> Any:
    """The example's weight-decay mask: weights of rank > 1 (conv and linear weights)."""
    return cg.tree_map(lambda a: a.ndim > 1, params)


def batch_of(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The first ``n`` training images and labels of the example's split (repeated if short)."""
    x_tr, y_tr, _, _ = common.digits_data(0)
    reps = -(-n // len(x_tr))
    return (np.concatenate([x_tr] * reps)[:n], np.concatenate([y_tr] * reps)[:n])


def weights_of(model: Any) -> dict[str, np.ndarray]:
    """Every array of the model as NumPy, by its PyTorch-style path (``layers.0.weight``)."""
    return {k: np.asarray(v) for k, v in nn.named_leaves(model) if v is not None}


class ClnpPeer:
    """The example's jitted training step on clnp's default device."""

    def __init__(self, model: Any, x: np.ndarray, y: np.ndarray):
        optimizer = optim.adamw(LR, weight_decay=WEIGHT_DECAY, mask=decay_mask)
        policy, loss_scale = common.precision(False, clnp.default_device())
        self.state = common.init_state(model, optimizer, loss_scale, cg.random.key(0))
        self.step_fn = common.make_train_step(digits_cnn.loss_fn, optimizer, policy)
        self.batch = (clnp.asarray(x), clnp.asarray(y))

    def step(self) -> Any:
        loss, self.state = self.step_fn(self.state, self.batch)
        return loss

    def weights(self) -> dict[str, np.ndarray]:
        return weights_of(common.model_of(self.state))


class TorchPeer:
    """The same model as eager ``torch.nn`` modules with ``torch.optim.AdamW``."""

    def __init__(self, w: dict[str, np.ndarray], x: np.ndarray, y: np.ndarray, dev: str):
        import torch
        tnn = torch.nn
        self.torch = torch
        self.model = tnn.Sequential(
            tnn.Conv2d(1, 32, 3, padding=1), tnn.BatchNorm2d(32), tnn.ReLU(), tnn.MaxPool2d(2),
            tnn.Conv2d(32, 64, 3, padding=1), tnn.BatchNorm2d(64), tnn.ReLU(), tnn.MaxPool2d(2),
            tnn.Flatten(), tnn.Linear(256, 10)).to(dev)
        state = self.model.state_dict()
        with torch.no_grad():
            for k, v in w.items():
                k = k[len("layers."):]               # torch's Sequential names "0.weight"
                if state[k].shape != v.shape:
                    raise ValueError(f"bench_nn_train: torch {k} has shape "
                                     f"{tuple(state[k].shape)}, clnp's {v.shape}")
                state[k].copy_(torch.from_numpy(v))
        params = list(self.model.named_parameters())
        self.opt = torch.optim.AdamW(
            [{"params": [p for _, p in params if p.ndim > 1], "weight_decay": WEIGHT_DECAY},
             {"params": [p for _, p in params if p.ndim <= 1], "weight_decay": 0.0}],
            lr=LR, betas=(0.9, 0.999), eps=1e-8)
        self.model.train()
        self.x = torch.tensor(x, device=dev)
        self.y = torch.tensor(y, dtype=torch.int64, device=dev)

    def step(self) -> Any:
        self.opt.zero_grad(set_to_none=True)
        loss = self.torch.nn.functional.cross_entropy(self.model(self.x), self.y)
        loss.backward()
        self.opt.step()
        return loss.detach()

    def grads(self) -> dict[str, np.ndarray]:
        """The gradients of the last step (kept until the next step's ``zero_grad``)."""
        return {f"layers.{k}": p.grad.detach().cpu().numpy().copy()
                for k, p in self.model.named_parameters()}

    def weights(self) -> dict[str, np.ndarray]:
        # copies: on the CPU .numpy() shares the tensors that the next step updates in place
        return {f"layers.{k}": v.detach().cpu().numpy().copy()
                for k, v in self.model.state_dict().items()
                if k.rsplit(".", 1)[-1] != "num_batches_tracked"}


class JaxPeer:
    """The same model in JAX (lax convolutions, hand-written batch norm, reduce_window max
    pooling) with ``optax.adamw``; one ``jax.jit`` of value_and_grad plus the update."""

    def __init__(self, w: dict[str, np.ndarray], x: np.ndarray, y: np.ndarray):
        import jax
        import jax.numpy as jnp
        import optax
        lax = jax.lax
        self.jax = jax
        hi = lax.Precision.HIGHEST

        def conv(h: Any, wt: Any, b: Any) -> Any:
            out = lax.conv_general_dilated(h, wt, (1, 1), ((1, 1), (1, 1)),
                                           dimension_numbers=("NCHW", "OIHW", "NCHW"),
                                           precision=hi)
            return out + b[None, :, None, None]

        def batch_norm(h: Any, gamma: Any, beta: Any, mean_r: Any, var_r: Any,
                       momentum: float = 0.1, eps: float = 1e-5) -> tuple[Any, Any, Any]:
            # PyTorch's training mode: normalise by the biased batch variance, move the
            # running variance towards the unbiased one
            n = h.shape[0] * h.shape[2] * h.shape[3]
            mean = jnp.mean(h, axis=(0, 2, 3))
            var = jnp.mean(jnp.square(h - mean[None, :, None, None]), axis=(0, 2, 3))
            y = (h - mean[None, :, None, None]) * lax.rsqrt(var + eps)[None, :, None, None]
            y = y * gamma[None, :, None, None] + beta[None, :, None, None]
            mean_r = (1 - momentum) * mean_r + momentum * lax.stop_gradient(mean)
            var_r = (1 - momentum) * var_r + momentum * lax.stop_gradient(var) * (n / (n - 1))
            return y, mean_r, var_r

        def max_pool2(h: Any) -> Any:
            return lax.reduce_window(h, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")

        def loss_fn(p: dict, s: dict, xb: Any, yb: Any) -> tuple[Any, dict]:
            h, new_s = xb, {}
            for c, b in zip(CONV_LAYERS, BN_LAYERS):
                h = conv(h, p[f"layers.{c}.weight"], p[f"layers.{c}.bias"])
                h, new_s[f"layers.{b}.running_mean"], new_s[f"layers.{b}.running_var"] = \
                    batch_norm(h, p[f"layers.{b}.weight"], p[f"layers.{b}.bias"],
                               s[f"layers.{b}.running_mean"], s[f"layers.{b}.running_var"])
                h = max_pool2(jax.nn.relu(h))
            h = h.reshape(h.shape[0], -1)
            logits = jnp.dot(h, p[f"layers.{LINEAR_LAYER}.weight"].T, precision=hi) \
                + p[f"layers.{LINEAR_LAYER}.bias"]
            logp = jax.nn.log_softmax(logits, axis=-1)
            return -jnp.mean(jnp.take_along_axis(logp, yb[:, None], axis=1)), new_s

        opt = optax.adamw(LR, b1=0.9, b2=0.999, eps=1e-8, weight_decay=WEIGHT_DECAY,
                          mask=lambda p: jax.tree_util.tree_map(lambda a: a.ndim > 1, p))

        def step(p: dict, s: dict, o: Any, xb: Any, yb: Any) -> tuple:
            (loss, new_s), g = jax.value_and_grad(loss_fn, has_aux=True)(p, s, xb, yb)
            updates, o = opt.update(g, o, p)
            return loss, optax.apply_updates(p, updates), new_s, o

        stats = ("running_mean", "running_var")
        self.p = {k: jnp.asarray(v) for k, v in w.items() if k.rsplit(".", 1)[-1] not in stats}
        self.s = {k: jnp.asarray(v) for k, v in w.items() if k.rsplit(".", 1)[-1] in stats}
        self.o = opt.init(self.p)
        self.step_fn = jax.jit(step)
        self.x, self.y = jnp.asarray(x), jnp.asarray(y)
        self.device = jax.devices()[0].platform

    def step(self) -> Any:
        loss, self.p, self.s, self.o = self.step_fn(self.p, self.s, self.o, self.x, self.y)
        return self.jax.block_until_ready(loss)

    def weights(self) -> dict[str, np.ndarray]:
        return {k: np.asarray(v) for k, v in {**self.p, **self.s}.items()}


def make_jax(w: dict[str, np.ndarray], x: np.ndarray, y: np.ndarray) -> JaxPeer | None:
    try:
        import jax  # noqa: F401
        import optax  # noqa: F401
    except ImportError:
        return None
    return JaxPeer(w, x, y)


def check(peers: dict[str, Any]) -> None:
    """Two steps of every peer from the same start: the losses, and the weights and running
    statistics after the first step, must agree with clnp's (weights whose gradient is near
    zero, by PyTorch's, within 2 * lr: see ``NEAR_ZERO_GRAD``)."""
    first = {k: float(p.step()) for k, p in peers.items()}
    after = {k: p.weights() for k, p in peers.items()}
    grads = peers["torch"].grads()
    second = {k: float(p.step()) for k, p in peers.items()}
    print("first step's loss: " + ", ".join(f"{k} {v:.6f}" for k, v in first.items())
          + "; second: " + ", ".join(f"{k} {v:.6f}" for k, v in second.items()))
    g_max = max(float(np.abs(g).max()) for g in grads.values())
    for k in peers:
        if k == "clnp":
            continue
        np.testing.assert_allclose(first[k], first["clnp"], rtol=1e-4,
                                   err_msg=f"first step's loss: {k} vs clnp")
        np.testing.assert_allclose(second[k], second["clnp"], rtol=1e-3,
                                   err_msg=f"second step's loss: {k} vs clnp")
        assert after[k].keys() == after["clnp"].keys(), (sorted(after[k]),
                                                         sorted(after["clnp"]))
        for name, ref in after["clnp"].items():
            near0 = (np.abs(grads[name]) <= NEAR_ZERO_GRAD * g_max if name in grads else
                     np.zeros(ref.shape, dtype=bool))         # running statistics: no gradient
            np.testing.assert_allclose(after[k][name][~near0], ref[~near0], rtol=1e-3,
                                       atol=LR * 0.02,
                                       err_msg=f"{name} after one step: {k} vs clnp")
            np.testing.assert_allclose(after[k][name][near0], ref[near0], rtol=0, atol=2 * LR,
                                       err_msg=f"{name} after one step (gradient near zero): "
                                               f"{k} vs clnp")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--warmup", type=int, default=3, help="untimed steps before timing")
    ap.add_argument("--block", type=int, default=6,
                    help="consecutive steps per turn of each peer, the first untimed")
    ap.add_argument("--csv", default=None, help="also write the table as CSV")
    a = ap.parse_args()
    if a.batch < 2:
        ap.error("--batch must be at least 2 (batch norm's unbiased running variance)")
    import torch
    tdev = torch_device(torch)

    x, y = batch_of(a.batch)
    model = digits_cnn.make_model(cg.random.key(0))
    w = weights_of(model)
    peers: dict[str, Any] = {"clnp": ClnpPeer(model, x, y), "torch": TorchPeer(w, x, y, tdev)}
    jx = make_jax(w, x, y)
    if jx is not None:
        peers["jax"] = jx
    print(f"device: {clnp.default_device()}; torch {torch.__version__} on {tdev} "
          f"({torch.get_num_threads()} CPU threads); "
          + (f"jax on {jx.device}" if jx else "jax/optax not importable (no JAX columns)")
          + f"; digits CNN, batch {a.batch}, float32, median of {a.reps}")
    check(peers)

    clnp_peer = peers["clnp"]
    n_kernels = len(clnp_peer.step_fn.lower(clnp_peer.state, clnp_peer.batch).kernel_sources())
    print(f"clnp's jitted step launches {n_kernels} kernels")
    steps: dict[str, Callable[[], Any]] = {k: p.step for k, p in peers.items()}
    for _ in range(a.warmup):
        for f in steps.values():
            f()
    r = race_blocks(steps, a.reps, max(2, a.block), timed)
    name = "digits CNN training step (AdamW)"
    jcols = (f" {r['jax'] * 1e3:9.3f} {r['jax'] / r['clnp']:8.2f}x" if "jax" in r else
             f" {'-':>9s} {'-':>9s}")
    print(f"{'case':36s} {'clnp ms':>9s} {'torch ms':>9s} {'torch/clnp':>10s} {'jax ms':>9s} "
          f"{'jax/clnp':>9s}")
    print(f"{name:36s} {r['clnp'] * 1e3:9.3f} {r['torch'] * 1e3:9.3f} "
          f"{r['torch'] / r['clnp']:9.2f}x" + jcols)
    if a.csv:
        import csv
        j = r.get("jax")
        with open(a.csv, "w", newline="") as f:
            wr = csv.writer(f)
            wr.writerow(["case", "batch", "clnp_ms", f"torch_{tdev}_ms", "torch_over_clnp",
                         "jax_ms", "jax_over_clnp"])
            wr.writerow([name, a.batch, round(r["clnp"] * 1e3, 4), round(r["torch"] * 1e3, 4),
                         round(r["torch"] / r["clnp"], 3),
                         "" if j is None else round(j * 1e3, 4),
                         "" if j is None else round(j / r["clnp"], 3)])


if __name__ == "__main__":
    main()
