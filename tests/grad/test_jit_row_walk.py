"""clnp_grad.jit: fused reductions over several dims whose innermost reduced dim is
unit-stride (a batch norm's per-channel sums over (N, H, W)), which CPU devices walk in
vectors row by row (``codegen._row_vector_walk``): side outputs, operands constant along the
row but not along the outer reduced dims, walks split mid-row, rows shorter than a vector
and ragged tails, integer values, against NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import clnp
import clnp_grad as cg

# the fusion groups' kernels: small steps would be one whole-step kernel
pytestmark = pytest.mark.usefixtures("general_path")


def _walks_rows(jf, *args):
    return any("while (r < rhi)" in s for s in jf.lower(*args).kernel_sources())


@pytest.mark.parametrize("shape", [(4, 3, 5, 37), (2, 5, 8, 8), (3, 2, 1, 45)])
def test_centered_square_sum_with_side_output(device, shape):
    """``e = x - mean`` stored, ``sum(e * e)`` over (0, 2, 3): the batch norm statistics."""
    rng = np.random.default_rng(1)
    x_h = rng.standard_normal(shape).astype(np.float32)
    x = clnp.asarray(x_h, device=device)

    def f(x):
        m = clnp.mean(x, axis=(0, 2, 3), keepdims=True)
        e = x - m
        return e, clnp.sum(e * e, axis=(0, 2, 3))
    jf = cg.jit(f)
    e, s = jf(x)
    e_ref = x_h - x_h.mean(axis=(0, 2, 3), keepdims=True)
    np.testing.assert_allclose(clnp.asnumpy(e), e_ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(clnp.asnumpy(s), (e_ref * e_ref).sum(axis=(0, 2, 3)),
                               rtol=1e-4)
    if device.is_cpu and shape[-1] * shape[-2] >= 32:
        assert _walks_rows(jf, x)


def test_walk_split_mid_row(device):
    """Few outputs over a long reduced range: the walk is split into parts whose bounds fall
    inside rows (8200 is not a multiple of any part's chunk)."""
    rng = np.random.default_rng(2)
    x_h = rng.standard_normal((3, 2, 8200)).astype(np.float32)
    w_h = rng.standard_normal((3, 1, 1)).astype(np.float32)
    x, w = clnp.asarray(x_h, device=device), clnp.asarray(w_h, device=device)
    jf = cg.jit(lambda x, w: clnp.sum(x * w + 1.0, axis=(0, 2)))
    np.testing.assert_allclose(clnp.asnumpy(jf(x, w)), (x_h * w_h + 1.0).sum(axis=(0, 2)),
                               rtol=1e-4)
    if device.is_cpu:
        assert _walks_rows(jf, x, w)


def test_operand_constant_along_rows_varies_across_them(device):
    """``w`` of shape (6, 1, 1) is constant along the row but differs between the rows of
    the outer reduced dim."""
    rng = np.random.default_rng(3)
    x_h = rng.standard_normal((6, 4, 50)).astype(np.float32)
    w_h = np.arange(1, 7, dtype=np.float32).reshape(6, 1, 1)
    x, w = clnp.asarray(x_h, device=device), clnp.asarray(w_h, device=device)
    jf = cg.jit(lambda x, w: clnp.sum(clnp.exp(x * 0.1) * w, axis=(0, 2)))
    np.testing.assert_allclose(clnp.asnumpy(jf(x, w)),
                               (np.exp(x_h * 0.1) * w_h).sum(axis=(0, 2)), rtol=1e-4)
    if device.is_cpu:
        assert _walks_rows(jf, x, w)


@pytest.mark.parametrize("op", ["sum", "prod"])
def test_integer_rows(device, op):
    rng = np.random.default_rng(4)
    x_h = rng.integers(1, 3, (2, 3, 5, 13)).astype(np.int32)
    x = clnp.asarray(x_h, device=device)
    jf = cg.jit(lambda x: getattr(clnp, op)(x * 1, axis=(0, 2, 3)))
    ref = getattr(np, op)(x_h, axis=(0, 2, 3), dtype=np.int32)
    np.testing.assert_array_equal(clnp.asnumpy(jf(x)), ref)
    if device.is_cpu:
        assert _walks_rows(jf, x)


def test_batch_norm_gradient(device):
    """The batch norm forward and backward under jit (its reductions walk rows) against the
    same computed with NumPy."""
    import clnp_nn.functional as F
    rng = np.random.default_rng(5)
    x_h = rng.standard_normal((4, 3, 6, 7)).astype(np.float32)
    ct_h = rng.standard_normal(x_h.shape).astype(np.float32)
    x, ct = clnp.asarray(x_h, device=device), clnp.asarray(ct_h, device=device)
    ones = clnp.ones((3,), dtype=clnp.float32, device=device)
    zeros = clnp.zeros((3,), dtype=clnp.float32, device=device)
    g = cg.jit(cg.grad(lambda x: clnp.sum(
        F.batch_norm(x, zeros, ones, training=True)[0] * ct)))(x)
    m = x_h.mean(axis=(0, 2, 3), keepdims=True)
    v = x_h.var(axis=(0, 2, 3), keepdims=True)
    xh = (x_h - m) / np.sqrt(v + 1e-5)
    n = x_h.size // 3
    ref = (ct_h - ct_h.mean(axis=(0, 2, 3), keepdims=True)
           - xh * (ct_h * xh).sum(axis=(0, 2, 3), keepdims=True) / n) / np.sqrt(v + 1e-5)
    np.testing.assert_allclose(clnp.asnumpy(g), ref, rtol=1e-3, atol=1e-4)
