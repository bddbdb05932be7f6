"""A small MLP written with clnp ops (no modules), shared by the clnp_nn tests."""
from __future__ import annotations

import math

import numpy as np

import clnp as xp

import clnp_grad.random as jr


def init_mlp(key, sizes, device=None):
    """PyTorch-style uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)) layers ``{"layers": [...]}``."""
    layers = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        key, kw, kb = jr.split(key, 3)
        bound = 1 / math.sqrt(fan_in)
        w = jr.uniform(kw, (fan_out, fan_in), dtype=xp.float32, minval=-bound, maxval=bound)
        b = jr.uniform(kb, (fan_out,), dtype=xp.float32, minval=-bound, maxval=bound)
        if device is not None:
            w, b = w.to_device(device), b.to_device(device)
        layers.append({"weight": w, "bias": b})
    return {"layers": layers}


def mlp(params, x):
    """tanh hidden layers, linear output; weights are (out, in) as in PyTorch."""
    layers = params["layers"]
    for layer in layers[:-1]:
        x = xp.tanh(x @ xp.matrix_transpose(layer["weight"]) + layer["bias"])
    last = layers[-1]
    return x @ xp.matrix_transpose(last["weight"]) + last["bias"]


def cross_entropy(logits, onehot):
    """Mean cross-entropy, computed in float32 whatever the logits' dtype."""
    logits = xp.astype(logits, xp.float32)
    m = xp.max(logits, axis=-1, keepdims=True)
    lse = xp.log(xp.sum(xp.exp(logits - m), axis=-1, keepdims=True)) + m
    return -xp.mean(xp.sum(onehot * (logits - lse), axis=-1))


def onehot(y, n):
    out = np.zeros((len(y), n), np.float32)
    out[np.arange(len(y)), y] = 1
    return out


def accuracy(params, x, y):
    pred = np.argmax(xp.asnumpy(xp.astype(mlp(params, x), xp.float32)), axis=-1)
    return float(np.mean(pred == y))



