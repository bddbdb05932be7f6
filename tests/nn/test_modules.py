"""clnp_nn.modules: initialisation (shapes, bounds, distributions), immutability and pytree
structure, forward passes against PyTorch modules given the same parameters, stateful layers
(BatchNorm) against PyTorch's running statistics, gradients of a small model, partition /
combine, Sequential's key and state threading, jit of a training step."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

import clnp
import clnp_grad as cg
import clnp_nn as nn
import clnp_nn.functional as F

torch = pytest.importorskip("torch")


def _np(a):
    return np.asarray(a)


def _t(a):
    return torch.tensor(np.asarray(a))


def _key(device, seed=0):
    return cg.random.key(seed, device=device)


# ------------------------------------------------------------------------------ initialisation
def test_linear_init(device):
    layer = nn.Linear(256, 64, key=_key(device))
    w, b = _np(layer.weight), _np(layer.bias)
    assert w.shape == (64, 256) and b.shape == (64,) and w.dtype == np.float32
    bound = 1 / math.sqrt(256)
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.03 * bound     # U(-b, b): std b/sqrt(3)
    assert abs(w.mean()) < 0.02 * bound
    assert np.abs(w).max() > 0.99 * bound
    again = nn.Linear(256, 64, key=_key(device))
    np.testing.assert_array_equal(_np(again.weight), w)          # same key, same parameters
    other = nn.Linear(256, 64, key=_key(device, 1))
    assert not np.array_equal(_np(other.weight), w)
    assert nn.Linear(3, 2, bias=False, key=_key(device)).bias is None


def test_conv_init(device):
    conv = nn.Conv2d(8, 16, 3, groups=2, key=_key(device))
    assert conv.weight.shape == (16, 4, 3, 3) and conv.bias.shape == (16,)
    bound = 1 / math.sqrt(4 * 9)
    assert np.abs(_np(conv.weight)).max() <= bound and np.abs(_np(conv.bias)).max() <= bound
    assert np.abs(_np(conv.weight)).max() > 0.9 * bound
    assert (conv.kernel_size, conv.stride, conv.padding) == ((3, 3), (1, 1), (0, 0))
    t = nn.ConvTranspose2d(8, 6, (3, 2), groups=2, key=_key(device))
    assert t.weight.shape == (8, 3, 3, 2)                         # (in, out/groups, kh, kw)
    tb = 1 / math.sqrt(3 * 6)                                     # PyTorch: fan_in = w.shape[1]*k
    assert np.abs(_np(t.weight)).max() <= tb and np.abs(_np(t.bias)).max() <= tb
    c1 = nn.Conv1d(2, 6, 5, padding="same", key=_key(device))
    assert c1.weight.shape == (6, 2, 5) and c1.padding == "same"


def test_other_inits(device):
    emb = nn.Embedding(200, 50, padding_idx=3, key=_key(device))
    w = _np(emb.weight)
    assert w.shape == (200, 50)
    np.testing.assert_array_equal(w[3], 0)
    rest = np.delete(w, 3, axis=0)
    assert abs(rest.std() - 1) < 0.03 and abs(rest.mean()) < 0.03   # N(0, 1)
    mha = nn.MultiheadAttention(32, 4, key=_key(device))
    xb = math.sqrt(6 / (32 + 96))
    assert mha.in_proj_weight.shape == (96, 32) and np.abs(_np(mha.in_proj_weight)).max() <= xb
    np.testing.assert_array_equal(_np(mha.in_proj_bias), 0)
    np.testing.assert_array_equal(_np(mha.out_proj.bias), 0)
    assert np.abs(_np(mha.out_proj.weight)).max() <= 1 / math.sqrt(32)
    bn = nn.BatchNorm2d(5)
    for a, v in ((bn.weight, 1), (bn.bias, 0), (bn.running_mean, 0), (bn.running_var, 1)):
        np.testing.assert_array_equal(_np(a), np.full(5, v, np.float32))
    assert nn.LayerNorm((4, 5)).weight.shape == (4, 5)
    assert nn.LayerNorm(4, bias=False).bias is None
    assert nn.GroupNorm(2, 6).bias.shape == (6,)
    assert nn.RMSNorm(7).weight.shape == (7,)


def test_init_errors(device):
    with pytest.raises(TypeError, match="Linear: key= is required"):
        nn.Linear(3, 4)
    with pytest.raises(ValueError, match="Conv2d: in_channels 3 and out_channels 4 must be "
                                         "divisible by groups=2"):
        nn.Conv2d(3, 4, 3, groups=2, key=_key(device))
    with pytest.raises(ValueError, match="MultiheadAttention: embed_dim 10 must be divisible"):
        nn.MultiheadAttention(10, 4, key=_key(device))
    with pytest.raises(ValueError, match="GroupNorm: num_channels 6 must be divisible by "
                                         "num_groups 4"):
        nn.GroupNorm(4, 6)


# ------------------------------------------------------------------------------ pytrees
def test_modules_are_immutable_pytrees(device):
    layer = nn.Linear(3, 2, key=_key(device))
    with pytest.raises(dataclasses.FrozenInstanceError, match="Linear is immutable"):
        layer.weight = layer.bias
    with pytest.raises(AttributeError, match="Linear has no field 'foo'"):
        layer.foo = 1
    leaves, tdef = cg.tree_flatten(layer)
    assert len(leaves) == 2 and leaves[0] is layer.weight
    rebuilt = cg.tree_unflatten(tdef, leaves)
    assert type(rebuilt) is nn.Linear and rebuilt.in_features == 3
    # hyper-parameters are structure: a different one is a different tree
    assert cg.tree_structure(nn.Linear(3, 2, key=_key(device))) == tdef
    assert cg.tree_structure(nn.Linear(3, 5, key=_key(device))) != tdef
    doubled = cg.tree_map(lambda a: a * 2, layer)
    np.testing.assert_allclose(_np(doubled.weight), 2 * _np(layer.weight))
    assert "Linear(weight=f32[2,3], bias=f32[2], in_features=3" in repr(layer)
    new = layer.replace(bias=None)
    assert new.bias is None and layer.bias is not None


def test_module_fields_at_their_class_defaults_flatten(device):
    """A field a module never assigns keeps its class default: flattening reads it there (the
    fast path reads the instance dict), and the rebuilt module has it."""
    class Scaled(nn.Module):
        w: object
        gain: object = None
        scale: float = dataclasses.field(default=2.0, metadata={"static": True})

        def __init__(self, w):
            self.w = w

    m = Scaled(clnp.ones(3, device=device))
    leaves, tdef = cg.tree_flatten(m)
    assert len(leaves) == 1 and leaves[0] is m.w        # None is an empty node
    back = cg.tree_unflatten(tdef, leaves)
    assert back.scale == 2.0 and back.gain is None
    np.testing.assert_array_equal(_np(back.w), np.ones(3))


def _small_cnn(device):
    k = cg.random.split(_key(device), 3)
    return nn.Sequential(
        nn.Conv2d(2, 4, 3, padding=1, key=k[0]), nn.BatchNorm2d(4, device=device), nn.ReLU(),
        nn.MaxPool2d(2), nn.Flatten(), nn.Dropout(0.5), nn.Linear(4 * 3 * 3, 5, key=k[1]))


def test_partition_combine_and_paths(device):
    model = _small_cnn(device)
    names = [p for p, _ in nn.named_leaves(model)]
    assert names == ["layers.0.weight", "layers.0.bias", "layers.1.weight", "layers.1.bias",
                     "layers.1.running_mean", "layers.1.running_var", "layers.6.weight",
                     "layers.6.bias"]
    params, rest = nn.partition(model, nn.trainable_mask(model))
    assert params.layers[1].running_mean is None and rest.layers[1].running_mean is not None
    assert params.layers[0].weight is model.layers[0].weight and rest.layers[0].weight is None
    assert len(cg.tree_leaves(params)) == 6 and len(cg.tree_leaves(rest)) == 2
    back = nn.combine(params, rest)
    assert [id(a) for a in cg.tree_leaves(back)] == [id(a) for a in cg.tree_leaves(model)]
    every, none = nn.partition(model, nn.is_inexact_array)
    assert len(cg.tree_leaves(every)) == 8 and cg.tree_leaves(none) == []
    with pytest.raises(ValueError, match="combine: tree 1 has structure"):
        nn.combine(params, nn.Linear(3, 2, key=_key(device)))


# ------------------------------------------------------------------------------ against PyTorch
def test_layers_match_torch(device, rng):
    x = rng.standard_normal((2, 4, 6, 6)).astype(np.float32)
    xc = clnp.asarray(x, device=device)
    tol = dict(rtol=1e-4, atol=1e-5)
    conv = nn.Conv2d(4, 6, (3, 2), stride=2, padding=1, groups=2, key=_key(device))
    tconv = torch.nn.Conv2d(4, 6, (3, 2), stride=2, padding=1, groups=2)
    tconv.weight.data, tconv.bias.data = _t(conv.weight), _t(conv.bias)
    np.testing.assert_allclose(_np(conv(xc)), tconv(torch.tensor(x)).detach().numpy(), **tol)
    up = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, key=_key(device))
    tup = torch.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1)
    tup.weight.data, tup.bias.data = _t(up.weight), _t(up.bias)
    np.testing.assert_allclose(_np(up(xc)), tup(torch.tensor(x)).detach().numpy(), **tol)
    lin = nn.Linear(6, 3, key=_key(device))
    tlin = torch.nn.Linear(6, 3)
    tlin.weight.data, tlin.bias.data = _t(lin.weight), _t(lin.bias)
    np.testing.assert_allclose(_np(lin(xc)), tlin(torch.tensor(x)).detach().numpy(), **tol)
    for mod, tmod in ((nn.AvgPool2d(3, 2, 1), torch.nn.AvgPool2d(3, 2, 1)),
                      (nn.AdaptiveAvgPool2d((4, 3)), torch.nn.AdaptiveAvgPool2d((4, 3))),
                      (nn.GELU("tanh"), torch.nn.GELU("tanh")), (nn.SiLU(), torch.nn.SiLU()),
                      (nn.Tanh(), torch.nn.Tanh()), (nn.Sigmoid(), torch.nn.Sigmoid()),
                      (nn.GroupNorm(2, 4, device=device), torch.nn.GroupNorm(2, 4)),
                      (nn.LayerNorm(6, device=device), torch.nn.LayerNorm(6)),
                      (nn.RMSNorm(6, device=device), torch.nn.RMSNorm(6)),
                      (nn.Flatten(1, 2), torch.nn.Flatten(1, 2))):
        np.testing.assert_allclose(_np(mod(xc)), tmod(torch.tensor(x)).detach().numpy(), **tol,
                                   err_msg=type(mod).__name__)


def _attention_pair(device, batch_first):
    """An ``nn.MultiheadAttention(8, 2)`` and PyTorch's with the same parameters."""
    mha = nn.MultiheadAttention(8, 2, batch_first=batch_first, key=_key(device))
    tm = torch.nn.MultiheadAttention(8, 2, batch_first=batch_first)
    tm.in_proj_weight.data, tm.in_proj_bias.data = _t(mha.in_proj_weight), _t(mha.in_proj_bias)
    tm.out_proj.weight.data, tm.out_proj.bias.data = (_t(mha.out_proj.weight),
                                                      _t(mha.out_proj.bias))
    return mha, tm


@pytest.mark.parametrize("batch_first", [False, True])
def test_multihead_attention_matches_torch(device, rng, batch_first):
    mha, tm = _attention_pair(device, batch_first)
    q = rng.standard_normal((3, 2, 8)).astype(np.float32)       # (L, N, E) or (N, L, E)
    kv = rng.standard_normal((3, 2, 8) if not batch_first else (2, 3, 8)).astype(np.float32)
    if batch_first:
        q = q.transpose(1, 0, 2).copy()
    pad = np.array([[False, False, True], [False, False, False]])
    mask = np.triu(np.ones((3, 3), bool), 1)
    out, w = mha(clnp.asarray(q, device=device), clnp.asarray(kv, device=device),
                 clnp.asarray(kv, device=device),
                 key_padding_mask=clnp.asarray(pad, device=device),
                 attn_mask=clnp.asarray(mask, device=device))
    tout, tw = tm(torch.tensor(q), torch.tensor(kv), torch.tensor(kv),
                  key_padding_mask=torch.tensor(pad), attn_mask=torch.tensor(mask))
    np.testing.assert_allclose(_np(out), tout.detach().numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(_np(w), tw.detach().numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("batch_first", [True, False])
def test_self_attention_matches_torch_with_gradients(device, rng, batch_first):
    """Query, key and value one array (self-attention: one product with the whole in-proj
    weight, then views of its thirds): outputs and the gradients of the in-proj weight and
    bias and of the input equal PyTorch's, eager and under jit, causal mask included."""
    mha, tm = _attention_pair(device, batch_first)
    xh = rng.standard_normal((2, 5, 8)).astype(np.float32)     # (N, L, E) or (L, N, E)
    wt = rng.standard_normal((2, 5, 8)).astype(np.float32)
    if not batch_first:
        xh, wt = xh.transpose(1, 0, 2).copy(), wt.transpose(1, 0, 2).copy()

    def loss(m, x):
        out, _ = m(x, is_causal=True, need_weights=False)
        return clnp.sum(out * clnp.asarray(wt, device=device))
    tx = torch.tensor(xh, requires_grad=True)
    tout, _ = tm(tx, tx, tx, attn_mask=torch.triu(torch.ones(5, 5, dtype=torch.bool), 1),
                 need_weights=False)
    (tout * torch.tensor(wt)).sum().backward()
    x = clnp.asarray(xh, device=device)
    for fn in (cg.grad(loss, argnums=(0, 1)), cg.jit(cg.grad(loss, argnums=(0, 1)))):
        gm, gx = fn(mha, x)
        for got, want in ((gm.in_proj_weight, tm.in_proj_weight.grad),
                          (gm.in_proj_bias, tm.in_proj_bias.grad), (gx, tx.grad)):
            np.testing.assert_allclose(_np(got), want.numpy(), rtol=1e-4, atol=1e-5)


def test_batchnorm_state_matches_torch(device, rng):
    bn = nn.BatchNorm2d(4, momentum=0.2, device=device)
    tbn = torch.nn.BatchNorm2d(4, momentum=0.2)
    assert bn.stateful
    for step in range(2):
        x = rng.standard_normal((3, 4, 2, 2)).astype(np.float32) * (step + 1)
        y, bn = bn(clnp.asarray(x, device=device), training=True)
        ty = tbn(torch.tensor(x))
        np.testing.assert_allclose(_np(y), ty.detach().numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(_np(bn.running_mean), tbn.running_mean.numpy(), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(_np(bn.running_var), tbn.running_var.numpy(), rtol=1e-5)
    tbn.eval()
    y, same = bn(clnp.asarray(x, device=device), training=False)
    assert same is bn
    np.testing.assert_allclose(_np(y), tbn(torch.tensor(x)).detach().numpy(), rtol=1e-4,
                               atol=1e-5)
    with pytest.raises(ValueError, match=r"BatchNorm2d: expected 4-D input, got shape \(3, 4\)"):
        bn(clnp.zeros((3, 4), device=device))
    y1, _ = nn.BatchNorm1d(4, device=device)(clnp.asarray(x[:, :, 0, 0], device=device))
    assert y1.shape == (3, 4)


# ------------------------------------------------------------------------------ training
def test_grad_of_small_model_matches_torch(device, rng):
    model = _small_cnn(device)
    x = rng.standard_normal((3, 2, 6, 6)).astype(np.float32)
    y = np.array([0, 3, 4])

    def loss(m, x, y):
        out, new = m(x, training=True, key=_key(device, 5))
        return F.cross_entropy(out, y), new
    g, new = cg.grad(loss, has_aux=True)(model, clnp.asarray(x, device=device),
                                         clnp.asarray(y, device=device))
    assert type(g) is nn.Sequential and cg.tree_structure(g) == cg.tree_structure(model)
    np.testing.assert_array_equal(_np(g.layers[1].running_mean), 0)   # buffers: no gradient
    assert not np.allclose(_np(new.layers[1].running_mean), 0)        # ... but a new state

    # PyTorch with the same parameters and the same dropout mask
    tm = torch.nn.Sequential(torch.nn.Conv2d(2, 4, 3, padding=1), torch.nn.BatchNorm2d(4),
                             torch.nn.ReLU(), torch.nn.MaxPool2d(2), torch.nn.Flatten(),
                             torch.nn.Linear(36, 5))
    for tl, l in ((tm[0], model.layers[0]), (tm[5], model.layers[6])):
        tl.weight.data, tl.bias.data = _t(l.weight), _t(l.bias)
    keys = cg.random.split(_key(device, 5), 7)
    mask = _np(F.dropout(clnp.ones((3, 36), dtype=clnp.float32, device=device), 0.5, key=keys[5]))
    h = tm[4](tm[3](tm[2](tm[1](tm[0](torch.tensor(x))))))
    tloss = torch.nn.functional.cross_entropy(tm[5](h * torch.tensor(mask)), torch.tensor(y))
    tloss.backward()
    tol = dict(rtol=2e-4, atol=2e-5)
    np.testing.assert_allclose(_np(g.layers[0].weight), tm[0].weight.grad.numpy(), **tol)
    np.testing.assert_allclose(_np(g.layers[1].weight), tm[1].weight.grad.numpy(), **tol)
    np.testing.assert_allclose(_np(g.layers[6].weight), tm[5].weight.grad.numpy(), **tol)
    np.testing.assert_allclose(_np(new.layers[1].running_var), tm[1].running_var.numpy(),
                               rtol=1e-5)


def test_sequential_keys_training_and_errors(device, rng):
    model = _small_cnn(device)
    x = clnp.asarray(rng.standard_normal((3, 2, 6, 6)).astype(np.float32), device=device)
    with pytest.raises(ValueError, match="dropout: training with p=0.5 needs a random key"):
        model(x)
    a, _ = model(x, key=_key(device, 1))
    b, _ = model(x, key=_key(device, 2))
    assert not np.allclose(_np(a), _np(b))                            # different masks
    e1, m1 = model(x, training=False)
    e2, _ = model(x, training=False)
    np.testing.assert_array_equal(_np(e1), _np(e2))                   # deterministic
    assert m1.layers[1] is model.layers[1]
    plain = nn.Sequential([nn.Linear(4, 3, key=_key(device)), F.relu])
    assert not plain.stateful and isinstance(plain.layers[1], nn.Lambda)
    out = plain(clnp.ones((2, 4), dtype=clnp.float32, device=device))
    assert out.shape == (2, 3) and float(clnp.min(out)) >= 0
    with pytest.raises(TypeError, match="Sequential: layer 1 is a int"):
        nn.Sequential(nn.ReLU(), 3)


def test_jit_train_step(device, rng):
    """A whole SGD step (forward, backward, state update) under jit equals the eager step."""
    model = _small_cnn(device)
    x = clnp.asarray(rng.standard_normal((3, 2, 6, 6)).astype(np.float32), device=device)
    y = clnp.asarray(np.array([0, 3, 4]), device=device)
    params, rest = nn.partition(model, nn.trainable_mask(model))

    def step(params, rest, x, y, key):
        def loss(p):
            out, new = nn.combine(p, rest)(x, key=key, training=True)
            return F.cross_entropy(out, y), new
        (l, new), g = cg.value_and_grad(loss, has_aux=True)(params)
        params = cg.tree_map(lambda p, g: p - 0.1 * g, params, g)
        return l, params, nn.partition(new, nn.trainable_mask(new))[1]
    k = _key(device, 3)
    le, pe, re = step(params, rest, x, y, k)
    lj, pj, rj = cg.jit(step)(params, rest, x, y, k)
    np.testing.assert_allclose(float(lj), float(le), rtol=1e-5)
    for a, b in zip(cg.tree_leaves((pj, rj)), cg.tree_leaves((pe, re))):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-4, atol=1e-6)


def test_vmap_over_models(device, rng):
    """An ensemble: vmap over a stack of Linear layers."""
    layers = [nn.Linear(4, 3, key=_key(device, s)) for s in range(3)]
    stacked = cg.tree_map(lambda *a: clnp.stack(a), *layers)
    x = clnp.asarray(rng.standard_normal((2, 4)).astype(np.float32), device=device)
    out = cg.vmap(lambda m: m(x))(stacked)
    for i, l in enumerate(layers):
        np.testing.assert_allclose(_np(out)[i], _np(l(x)), rtol=1e-5, atol=1e-6)
