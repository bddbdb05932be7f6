"""clnp_nn.functional on bfloat16 inputs: results stay bfloat16 and equal the float64 result of
the same (bfloat16-rounded) inputs to within the final rounding, which is only possible when
the products, sums, softmaxes and norms inside run in float32 (bfloat16 arithmetic inside
would be off by many units in the last place on these shapes). Oracle: PyTorch CPU in float64.
"""
from __future__ import annotations

import numpy as np
import pytest

import clnp
import clnp_grad as cg
import clnp_nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

BF16 = np.dtype(clnp.bfloat16)


def _bf(a):
    """``a`` rounded to bfloat16 (the values the device gets)."""
    return np.asarray(a, np.float32).astype(BF16)


def _t(a):
    return torch.from_numpy(np.asarray(a).astype(np.float64))


def _close(got, ref, what):
    """``got`` (bfloat16) is ``ref`` (float64) after one rounding, up to float32 noise:
    at most one bfloat16 unit in the last place (2**-7 relative) plus a sliver of the scale."""
    assert got.dtype == BF16, f"{what}: dtype {got.dtype}"
    g = np.asarray(got).astype(np.float64)
    ref = np.asarray(ref, np.float64)
    assert g.shape == ref.shape, what
    err = np.abs(g - ref)
    bound = 2.0 ** -8 * np.abs(ref) * 2 + 1e-4 * np.max(np.abs(ref))
    assert (err <= bound).all(), f"{what}: max error {err.max()} at {np.argmax(err - bound)}"


def test_linear_and_conv2d(device, rng):
    # long contractions: a bfloat16 accumulator would lose ~8 bits of these sums
    x, w, b = _bf(rng.standard_normal((8, 1024))), _bf(rng.standard_normal((16, 1024))), \
        _bf(rng.standard_normal(16))
    got = F.linear(clnp.asarray(x, device=device), clnp.asarray(w, device=device),
                   clnp.asarray(b, device=device))
    _close(got, TF.linear(_t(x), _t(w), _t(b)).numpy(), "linear")
    xi, wi, bi = _bf(rng.standard_normal((2, 16, 6, 6))), \
        _bf(rng.standard_normal((8, 16, 3, 3)) * 0.3), _bf(rng.standard_normal(8))
    got = F.conv2d(clnp.asarray(xi, device=device), clnp.asarray(wi, device=device),
                   clnp.asarray(bi, device=device), padding=1)
    _close(got, TF.conv2d(_t(xi), _t(wi), _t(bi), padding=1).numpy(), "conv2d")


def test_softmax_layer_norm_cross_entropy(device, rng):
    # rows of 2048: their sums and statistics need float32 accumulation; the layer-norm input
    # sits on an offset of 64, so its variance is lost if the mean is taken in bfloat16
    x = _bf(rng.standard_normal((4, 2048)) * 3)
    xc = clnp.asarray(x, device=device)
    _close(F.softmax(xc, axis=-1), TF.softmax(_t(x), -1).numpy(), "softmax")
    _close(F.log_softmax(xc, axis=-1), TF.log_softmax(_t(x), -1).numpy(), "log_softmax")
    xn = _bf(64 + rng.standard_normal((4, 2048)))
    w, b = _bf(rng.standard_normal(2048)), _bf(rng.standard_normal(2048))
    got = F.layer_norm(clnp.asarray(xn, device=device), (2048,), clnp.asarray(w, device=device),
                       clnp.asarray(b, device=device))
    _close(got, TF.layer_norm(_t(xn), (2048,), _t(w), _t(b)).numpy(), "layer_norm")
    t = rng.integers(0, 2048, 4)
    for red in ("mean", "sum", "none"):
        got = F.cross_entropy(xc, clnp.asarray(t, device=device), reduction=red)
        ref = TF.cross_entropy(_t(x), torch.from_numpy(t), reduction=red).numpy()
        _close(got, ref, f"cross_entropy({red})")


def test_gradients_through_bfloat16_compute(device, rng):
    """float32 master weights, bfloat16 compute (the AMP pattern): the weight gradient is
    float32 and matches PyTorch's float64 gradient of the same rounded values."""
    w, x = rng.standard_normal((10, 64)).astype(np.float32), _bf(rng.standard_normal((32, 64)))
    t = rng.integers(0, 10, 32)

    def loss(w32, xb):
        logits = F.linear(xb, w32.astype(clnp.bfloat16))
        return F.cross_entropy(logits, clnp.asarray(t, device=device)).astype(clnp.float32)

    g = cg.grad(loss)(clnp.asarray(w, device=device), clnp.asarray(x, device=device))
    assert g.dtype == np.float32
    wt = _t(_bf(w)).requires_grad_()
    TF.cross_entropy(TF.linear(_t(x), wt), torch.from_numpy(t)).backward()
    ref = wt.grad.numpy()
    # the backward pass rounds the logits' cotangent and the product to bfloat16
    np.testing.assert_allclose(clnp.asnumpy(g), ref, rtol=2e-2, atol=2e-2 * np.abs(ref).max())
