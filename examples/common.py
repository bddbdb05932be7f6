"""What the training examples share: command-line flags, the jitted training step (float32, or
float16 compute with dynamic loss scaling through ``clnp_nn.amp``), the loop with a tqdm
progress bar, and the loss-curve plot.

The examples (digits_mlp.py, digits_cnn.py, char_transformer.py) import this module from their
own directory; it is not part of the installed packages.
"""
from __future__ import annotations

import argparse
import os
import time
from dataclasses import dataclass, field
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

import clnp as xp
import clnp_grad as cg
import clnp_nn as nn
from clnp_nn import amp, optim

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "out")

# The half-precision policy of ``--amp``: float32 master weights and loss, float16 compute.
AMP_POLICY = "params=float32,compute=float16,output=float32"


def add_arguments(ap: argparse.ArgumentParser, *, name: str, epochs: int, batch_size: int,
                  lr: float) -> None:
    """Add the flags every example takes (``--epochs``, ``--batch-size``, ``--lr``,
    ``--device``, ``--amp``, ``--seed``, ``--plot``, ``--prefetch``, ``--no-progress``)."""
    ap.add_argument("--epochs", type=int, default=epochs, help="passes over the training set")
    ap.add_argument("--batch-size", type=int, default=batch_size)
    ap.add_argument("--lr", type=float, default=lr, help="peak learning rate")
    ap.add_argument("--device", default=None,
                    help="OpenCL device: gpu, cpu, pocl:0, nvidia:0, an index or a name "
                         "substring (default: CLNP_DEVICE, else the first GPU, else the CPU)")
    ap.add_argument("--amp", action="store_true",
                    help=f"mixed precision: {AMP_POLICY} with dynamic loss scaling")
    ap.add_argument("--seed", type=int, default=0, help="data split, initialisation, shuffling")
    ap.add_argument("--plot", default=os.path.join(OUT_DIR, f"{name}-loss.png"),
                    help="where to write the loss-curve PNG (empty: no plot)")
    ap.add_argument("--prefetch", type=int, default=2,
                    help="batches the DataLoader's thread uploads ahead (0: no thread)")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar")


def select_device(spec: str | None) -> Any:
    """Make ``spec`` (or the default device) the default device and return it."""
    if spec:
        return xp.set_default_device(spec)
    return xp.default_device()


def precision(use_amp: bool, device: Any) -> tuple[amp.Policy, Any]:
    """The policy and the initial loss scale for float32 or ``--amp`` training."""
    if not use_amp:
        return amp.get_policy("float32"), amp.NoOpLossScale()
    # 2**15 is jmp's customary start; the scale halves on each overflow and doubles after
    # `period` finite steps.
    scale = xp.asarray(2.0 ** 15, dtype=xp.float32, device=device)
    return amp.get_policy(AMP_POLICY), amp.DynamicLossScale(scale, period=200)


def init_state(model: Any, optimizer: optim.GradientTransformation, loss_scale: Any,
               key: Any) -> dict:
    """The training state: trainable parameters, the rest of the model (buffers such as
    BatchNorm's running statistics, and static fields), optimizer state, loss scale and the
    random key of the training step. It is one pytree: it goes through ``jit`` and into
    ``clnp_nn.save``."""
    params, rest = nn.partition(model, nn.trainable_mask(model))
    return {"params": params, "rest": rest, "opt": optimizer.init(params),
            "loss_scale": loss_scale, "key": key}


def model_of(state: dict) -> Any:
    """The float32 model held by a training state."""
    return nn.combine(state["params"], state["rest"])


LossFn = Callable[[Any, Any, Any], "tuple[Any, Any]"]


def make_train_step(loss_fn: LossFn, optimizer: optim.GradientTransformation,
                    policy: amp.Policy) -> Callable[[dict, Any], tuple[Any, dict]]:
    """A jitted ``step(state, batch) -> (loss, new_state)``.

    ``loss_fn(model, batch, key) -> (loss, new_model)`` gets the model and the batch's
    floating-point arrays in the policy's compute dtype, and a fresh random key (for dropout);
    it returns a float32 scalar loss and the model with its new state (the model itself when
    no layer is stateful). The step scales the loss, differentiates with respect to the
    float32 parameters, unscales, and skips the update (parameters, optimizer state and
    buffers) when a gradient overflowed, all on the device.
    """
    def step(state: dict, batch: Any) -> tuple[Any, dict]:
        key, sub = cg.random.split(state["key"])
        rest, loss_scale = state["rest"], state["loss_scale"]

        def scaled_loss(params: Any) -> tuple[Any, tuple[Any, Any]]:
            model = policy.cast_to_compute(nn.combine(params, rest))
            loss, new_model = loss_fn(model, policy.cast_to_compute(batch), sub)
            return loss_scale.scale(loss), (loss, new_model)

        (_, (loss, new_model)), grads = cg.value_and_grad(scaled_loss, has_aux=True)(
            state["params"])
        grads = loss_scale.unscale(policy.cast_to_param(grads))
        finite = amp.all_finite(grads)
        updates, opt_state = optimizer.update(grads, state["opt"], state["params"])
        params = optim.apply_updates(state["params"], updates)
        new_model = policy.cast_to_param(new_model)
        _, new_rest = nn.partition(new_model, nn.trainable_mask(new_model))
        params, opt_state, new_rest = amp.select_tree(
            finite, (params, opt_state, new_rest), (state["params"], state["opt"], rest))
        return loss, {"params": params, "rest": new_rest, "opt": opt_state,
                      "loss_scale": loss_scale.adjust(finite), "key": key}

    return cg.jit(step)


@dataclass
class History:
    """What a run recorded: the loss of every step, evaluations, timing."""

    losses: list[float] = field(default_factory=list)
    evals: list[tuple[int, dict]] = field(default_factory=list)   # (step, metrics)
    seconds: float = 0.0
    items: int = 0                                                 # samples or tokens seen

    @property
    def throughput(self) -> float:
        return self.items / self.seconds if self.seconds else 0.0


def fit(step: Callable[[dict, Any], tuple[Any, dict]], state: dict, loader: Iterable,
        steps: int, *, items_per_step: int, unit: str, steps_per_epoch: int,
        evaluate: Callable[[dict], dict] | None = None, eval_every: int | None = None,
        log_every: int = 10, desc: str = "train", progress: bool = True) -> tuple[dict, History]:
    """Run ``steps`` training steps over ``loader`` (re-iterated once per epoch).

    The bar counts ``unit`` (images, tokens) so its rate is the throughput. Losses stay on the
    device until every ``log_every`` steps, when they are read back together: reading each
    one would make the host wait for every step. ``evaluate(state) -> {name: value}`` runs
    every ``eval_every`` steps and at the end.
    """
    from tqdm.auto import tqdm

    if steps_per_epoch < 1:
        raise ValueError("fit: the loader yields no batch (fewer rows than --batch-size?)")
    hist = History()
    pending: list[Any] = []
    eval_every = eval_every or steps_per_epoch
    postfix: dict[str, str] = {}
    bar = tqdm(total=steps * items_per_step, unit=unit, unit_scale=True, desc=desc,
               disable=not progress, dynamic_ncols=True)
    # the first step builds every kernel the caches lack (tens of seconds on a first run on
    # PoCL): say so while the bar sits at 0 (issue #27)
    bar.set_description(f"{desc} (first step: building kernels not yet cached)", refresh=True)
    t0 = time.perf_counter()
    done = 0
    try:
        while done < steps:
            for batch in loader:
                loss, state = step(state, batch)
                pending.append(loss)
                done += 1
                if done == 1:
                    bar.set_description(desc, refresh=False)
                bar.update(items_per_step)
                if done % log_every == 0 or done == steps:
                    hist.losses += [float(v) for v in pending]
                    pending.clear()
                    postfix["epoch"] = f"{(done - 1) // steps_per_epoch + 1}"
                    postfix["loss"] = f"{hist.losses[-1]:.4f}"
                    bar.set_postfix(postfix, refresh=False)
                if evaluate is not None and (done % eval_every == 0 or done == steps):
                    metrics = evaluate(state)
                    hist.evals.append((done, metrics))
                    postfix.update({k: f"{v:.4f}" for k, v in metrics.items()})
                    bar.set_postfix(postfix, refresh=False)
                if done == steps:
                    break
        xp.synchronize()
    finally:
        bar.close()
    hist.seconds = time.perf_counter() - t0
    hist.items = done * items_per_step
    return state, hist


def plot_history(hist: History, path: str, title: str) -> str | None:
    """Write the loss curve (every step, and a moving average), with the evaluations on a
    second axis, to ``path`` as a PNG; return the path (None when ``path`` is empty)."""
    if not path:
        return None
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig, ax = plt.subplots(figsize=(7, 4), dpi=100)
    losses = np.asarray(hist.losses)
    steps = np.arange(1, len(losses) + 1)
    ax.plot(steps, losses, color="tab:blue", alpha=0.3, lw=0.8, label="loss (step)")
    w = max(1, len(losses) // 25)
    if w > 1:
        smooth = np.convolve(losses, np.ones(w) / w, mode="valid")
        ax.plot(steps[w - 1:], smooth, color="tab:blue", lw=1.8, label=f"loss ({w}-step mean)")
    ax.set_xlabel("step")
    ax.set_ylabel("training loss")
    ax.set_yscale("log")
    handles, labels = ax.get_legend_handles_labels()
    if hist.evals:
        ax2 = ax.twinx()
        names = list(hist.evals[0][1])
        for name, color in zip(names, ("tab:orange", "tab:green", "tab:red")):
            xs = [s for s, m in hist.evals]
            ys = [m[name] for s, m in hist.evals]
            ax2.plot(xs, ys, "o-", color=color, ms=3, lw=1.2, label=name)
        ax2.set_ylabel(", ".join(names))
        h2, l2 = ax2.get_legend_handles_labels()
        handles, labels = handles + h2, labels + l2
    ax.legend(handles, labels, loc="center right", fontsize=8)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def digits_data(seed: int, test_fraction: float = 0.2) -> tuple[np.ndarray, ...]:
    """scikit-learn's bundled digits (1797 8x8 images, 16 grey levels) as float32 images
    ``(N, 1, 8, 8)`` scaled to [0, 1] and int32 labels, split into train and test sets,
    stratified by class, by ``seed``: ``x_train, y_train, x_test, y_test``."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    d = load_digits()
    x = (d.images / 16.0).astype(np.float32)[:, None]
    y = d.target.astype(np.int32)
    x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=test_fraction,
                                              random_state=seed, stratify=y)
    return x_tr, y_tr, x_te, y_te


def make_accuracy(predict: Callable[[Any, Any], Any], policy: amp.Policy, x: np.ndarray,
                  y: np.ndarray) -> Callable[[dict], dict]:
    """``evaluate(state) -> {"test_acc": ...}``: the share of ``x`` whose arg-max of
    ``predict(model, x)`` (jitted, inference mode, in the policy's compute dtype) is ``y``."""
    predict = cg.jit(predict)
    x_dev = xp.asarray(x)

    def evaluate(state: dict) -> dict:
        model, xc = policy.cast_to_compute((model_of(state), x_dev))
        logits = xp.asnumpy(xp.astype(predict(model, xc), xp.float32))
        return {"test_acc": float(np.mean(np.argmax(logits, axis=-1) == y))}

    return evaluate
