"""clnp_nn.amp: jmp's policies and loss scales (against jmp where installed, and against the
rules written out here), and mixed-precision training of an MLP on scikit-learn's digits."""
from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np
import pytest

import clnp as xp
import clnp_grad as cg
import clnp_grad.random as jr
from clnp_nn import amp, optim

from mlp_helpers import accuracy, cross_entropy, init_mlp, mlp, onehot

F16, F32, F64 = np.dtype("float16"), np.dtype("float32"), np.dtype("float64")
BF16 = np.dtype(xp.bfloat16)

POLICIES = [
    ("params=float32,compute=float16,output=float32", (F32, F16, F32)),
    ("p=f32,c=half", (F32, F16, F16)),
    ("c=f16", (F32, F16, F16)),
    ("p=full,c=full,o=half", (F32, F32, F16)),
    ("half", (F16, F16, F16)),
    ("float64", (F64, F64, F64)),
    ("params=f64,output=f32", (F64, F64, F32)),
    ("params=float32,compute=bfloat16,output=float32", (F32, BF16, F32)),
    ("p=f32,c=bf16", (F32, BF16, BF16)),
    ("bf16", (BF16, BF16, BF16)),
    ("p=bfloat16,c=f16,o=full", (BF16, F16, F32)),
]


@pytest.mark.parametrize("name,want", POLICIES, ids=[p for p, _ in POLICIES])
def test_get_policy(name, want):
    p = amp.get_policy(name)
    assert (p.param_dtype, p.compute_dtype, p.output_dtype) == want
    assert amp.get_policy(str(p)) == p
    jmp = pytest.importorskip("jmp")
    j = jmp.get_policy(name)
    assert str(p) == str(j)


def test_get_policy_errors():
    with pytest.raises(ValueError, match="unknown key 'q'"):
        amp.get_policy("q=f32")
    with pytest.raises(ValueError, match="unknown dtype 'f8'"):
        amp.get_policy("p=f8")
    with pytest.raises(ValueError, match="unknown dtype 'bf8'"):
        amp.get_policy("params=float32,compute=bf8")
    with pytest.raises(TypeError, match="Policy: compute_dtype must be float16"):
        amp.Policy(xp.float32, xp.int32, xp.float32)


class Pair(NamedTuple):
    a: object
    b: object


def test_policy_casts_floating_leaves_only(device):
    p = amp.get_policy("params=float32,compute=float16,output=float64"
                       if device.has_fp64 else "params=float32,compute=float16,output=float32")
    tree = {"w": xp.ones((2, 3), dtype=xp.float32, device=device),
            "ids": xp.arange(3, device=device), "mask": xp.ones(3, dtype=xp.bool, device=device),
            "host": np.ones(2, np.float32), "n": 3, "pair": Pair(xp.zeros(2, device=device),
                                                                None)}
    c = p.cast_to_compute(tree)
    assert c["w"].dtype == F16 and c["w"].device == device and c["pair"].a.dtype == F16
    assert c["ids"].dtype == tree["ids"].dtype and c["mask"].dtype == xp.bool
    assert c["host"].dtype == F16 and isinstance(c["host"], np.ndarray) and c["n"] == 3
    assert isinstance(c["pair"], Pair) and c["pair"].b is None
    assert p.cast_to_param(c)["w"].dtype == F32
    assert p.cast_to_output(c)["w"].dtype == p.output_dtype
    np.testing.assert_array_equal(xp.asnumpy(amp.cast_to_full(c)["w"]), np.ones((2, 3)))
    assert amp.cast_to_half(tree)["w"].dtype == F16
    assert p.with_output_dtype(xp.float16).output_dtype == F16


def test_policy_bfloat16_casts(device):
    p = amp.get_policy("params=float32,compute=bfloat16,output=float32")
    w = np.array([[1.0, 1.00390625, 1.01171875, -3e30]], np.float32)   # ties round to even
    tree = {"w": xp.asarray(w, device=device), "ids": xp.arange(3, device=device),
            "host": w.copy()}
    c = p.cast_to_compute(tree)
    assert c["w"].dtype == BF16 and c["host"].dtype == BF16 and c["ids"].dtype == xp.int64
    np.testing.assert_array_equal(xp.asnumpy(c["w"]).view(np.uint16), w.astype(BF16).view(
        np.uint16))
    back = p.cast_to_output(c)
    assert back["w"].dtype == F32 and back["host"].dtype == F32
    np.testing.assert_array_equal(xp.asnumpy(back["w"]), w.astype(BF16).astype(np.float32))
    # loss scaling and finiteness checks take bfloat16 gradient trees as they are
    ls = amp.DynamicLossScale(xp.asarray(2.0 ** 4, dtype=xp.float32, device=device), period=2)
    g = ls.scale({"g": c["w"]})
    assert g["g"].dtype == BF16 and bool(amp.all_finite(ls.unscale(g)))
    bad = {"g": c["w"] * xp.asarray(np.array(np.inf, BF16), device=device)}
    assert not bool(amp.all_finite(bad))
    assert float(ls.adjust(amp.all_finite(bad)).loss_scale) == 8.0


def _ref_dynamic(scale, counter, period, factor, min_scale, finite):
    """jmp's DynamicLossScale.adjust written out."""
    if finite:
        if counter == period - 1:
            grown = scale * factor
            scale = grown if np.isfinite(np.float32(grown)) else scale
        counter = (counter + 1) % period
    else:
        scale, counter = max(min_scale, scale / factor), 0
    return np.float32(scale), counter


def test_dynamic_loss_scale_rule(device):
    pattern = [True, True, True, False, True, False, False, True, True, True, True, True]
    ls = amp.DynamicLossScale(xp.asarray(2.0 ** 4, dtype=xp.float32, device=device),
                              period=3, factor=4, min_loss_scale=xp.asarray(
                                  2.0, dtype=xp.float32, device=device))
    s, c = np.float32(16.0), 0
    for finite in pattern:
        ls = ls.adjust(xp.asarray(finite, device=device))
        s, c = _ref_dynamic(s, c, 3, 4, 2.0, finite)
        assert float(ls.loss_scale) == s and int(ls.counter) == c
        assert ls.loss_scale.device == device and ls.counter.dtype == xp.int32
    # overflow of the grown scale keeps the old one
    big = amp.DynamicLossScale(xp.asarray(np.float32(3e38), device=device), period=1)
    assert float(big.adjust(xp.asarray(True, device=device)).loss_scale) == np.float32(3e38)


def test_dynamic_loss_scale_matches_jmp(device):
    jmp = pytest.importorskip("jmp")
    jnp = pytest.importorskip("jax.numpy")
    pattern = [True] * 5 + [False, True, False] + [True] * 6
    ours = amp.DynamicLossScale(2.0 ** 15, period=4)
    theirs = jmp.DynamicLossScale(jnp.float32(2.0 ** 15), period=4)
    g = {"a": np.array([1.5, -2.0], np.float32)}
    for finite in pattern:
        ours, theirs = ours.adjust(xp.asarray(finite)), theirs.adjust(jnp.asarray(finite))
        assert float(ours.loss_scale) == float(theirs.loss_scale)
        assert int(ours.counter) == int(theirs.counter)
        np.testing.assert_array_equal(
            xp.asnumpy(ours.scale({"a": xp.asarray(g["a"])})["a"]),
            np.asarray(theirs.scale({"a": jnp.asarray(g["a"])})["a"]))


def test_static_and_noop_loss_scale(device):
    x = {"g": xp.asarray([2.0, -8.0], dtype=xp.float32, device=device)}
    s = amp.StaticLossScale(4.0)
    np.testing.assert_array_equal(xp.asnumpy(s.scale(x)["g"]), [8.0, -32.0])
    np.testing.assert_array_equal(xp.asnumpy(s.unscale(x)["g"]), [0.5, -2.0])
    assert s.adjust(xp.asarray(False)) is s
    n = amp.NoOpLossScale()
    assert n.scale(x) is x and n.unscale(x) is x and n.loss_scale == 1
    assert n.adjust(xp.asarray(False)) is n


def test_all_finite_and_select_tree(device):
    good = {"a": xp.ones(3, device=device), "b": [xp.zeros((2, 2), dtype=xp.float16,
                                                           device=device)]}
    bad = {"a": xp.asarray([1.0, np.nan, 2.0], device=device), "b": good["b"]}
    inf16 = {"a": good["a"], "b": [xp.full((2, 2), 7e4, dtype=xp.float16, device=device)]}
    assert bool(amp.all_finite(good)) and not bool(amp.all_finite(bad))
    assert not bool(amp.all_finite(inf16))
    assert bool(amp.all_finite({})) and amp.all_finite(good).shape == ()
    t = amp.select_tree(amp.all_finite(bad), bad, good)
    np.testing.assert_array_equal(xp.asnumpy(t["a"]), np.ones(3))
    with pytest.raises(ValueError, match="select_tree: expected a boolean scalar"):
        amp.select_tree(xp.ones(2, dtype=xp.bool), good, good)
    with pytest.raises(ValueError, match="DynamicLossScale.adjust: expected a boolean"):
        amp.DynamicLossScale(2.0).adjust(xp.asarray(1.0))


def test_loss_scales_are_pytrees():
    ls = amp.DynamicLossScale(2.0 ** 15, period=7, factor=3)
    leaves, treedef = cg.tree_flatten(ls)
    assert len(leaves) == 3
    back = cg.tree_unflatten(treedef, leaves)
    assert isinstance(back, amp.DynamicLossScale) and back.period == 7 and back.factor == 3
    assert dataclasses.replace(back, factor=2).factor == 2


def _digits():
    sk = pytest.importorskip("sklearn.datasets")
    d = sk.load_digits()
    x = (d.data / 16.0).astype(np.float32)
    perm = np.random.default_rng(0).permutation(len(x))
    return x, d.target, perm[:1400], perm[1400:]


def _train(policy, loss_scale, x, y, steps, device):
    params = init_mlp(jr.key(0), [64, 64, 10], device=device)
    opt = optim.adam(1e-2)
    opt_state = opt.init(params)

    def loss_fn(p, xb, yb, ls):
        pc, xc = policy.cast_to_compute((p, xb))
        return ls.scale(policy.cast_to_output(cross_entropy(mlp(pc, xc), yb)))

    @cg.jit
    def step(p, s, ls, xb, yb):
        loss, g = cg.value_and_grad(loss_fn)(p, xb, yb, ls)
        g = ls.unscale(policy.cast_to_param(g))
        finite = amp.all_finite(g)
        updates, s2 = opt.update(g, s, p)
        p, s = amp.select_tree(finite, (optim.apply_updates(p, updates), s2), (p, s))
        return loss, p, s, ls.adjust(finite)

    for _ in range(steps):
        _, params, opt_state, loss_scale = step(params, opt_state, loss_scale, x, y)
    return params, loss_scale


def test_bfloat16_training_matches_float32_on_digits(device):
    """compute=bfloat16 (float32 master weights, no loss scaling: bfloat16 has float32's
    range) reaches float32's test accuracy within half a point."""
    x, y, tr, te = _digits()
    xtr = xp.asarray(x[tr], device=device)
    ytr = xp.asarray(onehot(y[tr], 10), device=device)
    xte = xp.asarray(x[te], device=device)
    p32, _ = _train(amp.get_policy("float32"), amp.NoOpLossScale(), xtr, ytr, 120, device)
    pbf, _ = _train(amp.get_policy("params=float32,compute=bfloat16,output=float32"),
                    amp.NoOpLossScale(), xtr, ytr, 120, device)
    assert pbf["layers"][0]["weight"].dtype == F32          # master weights stay float32
    acc32, accbf = accuracy(p32, xte, y[te]), accuracy(pbf, xte, y[te])
    assert acc32 > 0.95
    assert abs(accbf - acc32) <= 0.005, (acc32, accbf)      # within 0.5 points


def test_amp_training_matches_float32_on_digits(device):
    x, y, tr, te = _digits()
    xtr = xp.asarray(x[tr], device=device)
    ytr = xp.asarray(onehot(y[tr], 10), device=device)
    xte = xp.asarray(x[te], device=device)
    p32, _ = _train(amp.get_policy("float32"), amp.NoOpLossScale(), xtr, ytr, 120, device)
    p16, ls = _train(amp.get_policy("params=float32,compute=float16,output=float32"),
                     amp.DynamicLossScale(xp.asarray(2.0 ** 15, dtype=xp.float32,
                                                 device=device), period=50),
                     xtr, ytr, 120, device)
    assert p16["layers"][0]["weight"].dtype == F32          # master weights stay float32
    acc32, acc16 = accuracy(p32, xte, y[te]), accuracy(p16, xte, y[te])
    assert acc32 > 0.95
    assert abs(acc16 - acc32) <= 0.005, (acc32, acc16)      # within 0.5 points
    assert float(ls.loss_scale) >= 2.0 ** 15                # no overflow at this scale
    assert ls.loss_scale.device == device and ls.counter.device == device
