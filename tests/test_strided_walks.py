"""Elementwise kernels over strided layouts whose innermost dims are too short for a stretch
per work-item: CPU devices walk consecutive elements across all dims with carried indices
(``EwSpec.carry``). Transposed views, broadcasts along middle dims, ragged last items and
several outputs, eagerly and under jit, against NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import clnp
import clnp_grad as cg


@pytest.mark.parametrize("shape,perm", [((5, 3, 7, 3), (2, 0, 3, 1)), ((4, 33, 2, 2), (1, 0, 2, 3)),
                                        ((3, 2, 5, 4, 2), (4, 1, 0, 3, 2))])
def test_transposed_views_with_short_dims(device, shape, perm):
    rng = np.random.default_rng(0)
    a_h = rng.standard_normal(shape).astype(np.float32)
    b_h = rng.standard_normal(tuple(shape[p] for p in perm)).astype(np.float32)
    a, b = clnp.asarray(a_h, device=device), clnp.asarray(b_h, device=device)
    got = clnp.permute_dims(a, perm) * 2.0 + b
    np.testing.assert_allclose(clnp.asnumpy(got), np.transpose(a_h, perm) * 2.0 + b_h,
                               rtol=1e-6)
    jf = cg.jit(lambda a, b: (clnp.permute_dims(a, perm) - b, clnp.permute_dims(a, perm) > b))
    d, m = jf(a, b)
    np.testing.assert_allclose(clnp.asnumpy(d), np.transpose(a_h, perm) - b_h, rtol=1e-6)
    np.testing.assert_array_equal(clnp.asnumpy(m), np.transpose(a_h, perm) > b_h)
    if device.is_cpu:
        assert any("e1 = min(e0 + " in s for s in jf.lower(a, b).kernel_sources())


def test_broadcast_along_a_middle_dim(device):
    """The max-pool gradient's shape: (C, window, N, OH, OW) against a (C, 1, N, OH, OW)
    operand, small innermost dims."""
    rng = np.random.default_rng(1)
    x_h = rng.standard_normal((6, 4, 9, 2, 2)).astype(np.float32)
    m_h = x_h.max(axis=1, keepdims=True)
    x, m = clnp.asarray(x_h, device=device), clnp.asarray(m_h, device=device)
    ct = clnp.asarray(np.transpose(rng.standard_normal((9, 6, 2, 2)).astype(np.float32),
                                   (1, 0, 2, 3)), device=device)
    got = clnp.where(x == m, clnp.expand_dims(ct, axis=1), 0.0)
    ref = np.where(x_h == m_h, np.expand_dims(clnp.asnumpy(ct), 1), 0.0)
    np.testing.assert_array_equal(clnp.asnumpy(got), ref)


@pytest.mark.parametrize("length", [3, 4, 8, 16, 24])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int32"])
def test_short_rows_of_a_transposed_view(device, length, dtype):
    """A convolution's NCHW view of its GEMM's (C, N*H*W) output over 2x2 and 4x4 maps: rows
    of 3-24 contiguous elements. CPU devices walk them a row per work-item from 4 elements
    where every operand is unit-stride or broadcast along them (in vectors), from 8 where
    not, with carried indices below that: a per-channel broadcast and two outputs (values
    and a mask), eagerly and under jit."""
    dt = np.dtype(clnp.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    if not device.supports(dt):
        pytest.skip(f"no {dtype}")
    rng = np.random.default_rng(2)
    C, N = 6, 37
    g_h = rng.integers(-20, 20, (C, N * length)).astype(dt)
    s_h = rng.integers(-3, 4, (1, C, 1)).astype(dt)
    y_h = np.transpose(g_h.reshape(C, N, length), (1, 0, 2))
    g, s = clnp.asarray(g_h, device=device), clnp.asarray(s_h, device=device)

    def f(g, s):
        y = clnp.permute_dims(clnp.reshape(g, (C, N, length)), (1, 0, 2))
        z = y * s + s
        return clnp.where(z > 0, z, 0), z > 0

    def g_only(g):                 # no broadcast operand: the scalar walk
        return clnp.permute_dims(clnp.reshape(g, (C, N, length)), (1, 0, 2)) * 3

    z_h = y_h.astype(np.float64) * s_h.astype(np.float64) + s_h.astype(np.float64)
    want = (np.where(z_h > 0, z_h, 0), z_h > 0)
    jf = cg.jit(f)
    for got in (f(g, s), jf(g, s)):
        np.testing.assert_array_equal(clnp.asnumpy(got[0]).astype(np.float64), want[0])
        np.testing.assert_array_equal(clnp.asnumpy(got[1]), want[1])
    jg = cg.jit(g_only)
    for got in (g_only(g), jg(g)):
        np.testing.assert_array_equal(clnp.asnumpy(got).astype(np.float64),
                                      y_h.astype(np.float64) * 3)
    if device.is_cpu:
        walks = [("nc = " in k, "e1 = min(e0 + " in k) for k in
                 jf.lower(g, s).kernel_sources() + jg.lower(g).kernel_sources()
                 if "clnp_ew_" in k]
        assert walks[0] == (length >= 4, length < 4)
        assert walks[-1] == (length >= 8, length < 8)
        assert walks[-1] == (length >= 8, length < 8)
