"""A small MLP written with plain clnp ops, its loss and SGD step (shared by the two-device
and MPI tests)."""
from __future__ import annotations

import numpy as np

import clnp
import clnp_grad as cg
from clnp_nn import parallel as P

LR = 0.1


def init(rng, sizes):
    out = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        out += [(rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32),
                np.zeros(b, np.float32)]
    return out


def loss(params, x, y):
    h = x
    for i in range(0, len(params) - 2, 2):
        h = clnp.maximum(h @ params[i] + params[i + 1], 0.0)
    logits = h @ params[-2] + params[-1]
    m = clnp.max(logits, axis=1, keepdims=True)
    lse = clnp.log(clnp.sum(clnp.exp(logits - m), axis=1)) + m[:, 0]
    picked = clnp.take_along_axis(logits, clnp.reshape(y, (-1, 1)), axis=1)[:, 0]
    return clnp.mean(lse - picked)


def step(params, x, y):
    value, grads = cg.value_and_grad(loss)(params, x, y)
    return value, [p - LR * g for p, g in zip(params, grads)]


def parallel_step(params, x, y):
    value, grads = cg.value_and_grad(loss)(params, x, y)
    grads = P.pmean(grads, "batch")
    return P.pmean(value, "batch"), [p - LR * g for p, g in zip(params, grads)]
