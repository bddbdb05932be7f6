"""clnp_grad.jit: reduction epilogues (``fusion._reduce_epilogues``, ``FusedReduceSpec.post``):
elementwise code on a reduction's results runs in the reduction's kernel, where each output is
finished. Every case against NumPy, on the device's own layouts and on the GPU layouts forced
onto it (column reductions split into parts and finished in the kernel)."""
from __future__ import annotations

import numpy as np
import pytest

import clnp
import clnp_grad as cg
from clnp_grad._jit import executable

# the fusion groups' kernels: small steps would be one whole-step kernel
pytestmark = pytest.mark.usefixtures("general_path")


@pytest.fixture(params=["own", "gpu"])
def layout(request, device, monkeypatch):
    if request.param == "gpu":
        monkeypatch.setattr(device, "is_cpu", False)
        monkeypatch.setattr(device, "compute_units", 132)
        monkeypatch.setattr(executable, "COLUMN_LAYOUT", "gpu")
    return request.param


def _np(x):
    return clnp.asnumpy(x)


def _kernels(jf, *args):
    return jf.lower(*args).kernel_sources()


def _bias_step(a, g, b, b2):
    d = g * (a > 0)
    s = clnp.sum(d, axis=0)
    return d, b - 0.01 * s, b2 * 0.5 + clnp.max(d, axis=0)


def test_bias_gradient_and_update_in_one_kernel(device, layout, rng):
    """The masked gradient (a side output), its column sum and max, and the bias updates on
    them: each reduction's kernel updates its bias (the max is a second reduction group, the
    sum's group being sealed by the update that reads it), right on every call."""
    jf = cg.jit(_bias_step)
    for _ in range(3):
        a_h = rng.standard_normal((256, 96)).astype(np.float32)
        g_h = rng.standard_normal((256, 96)).astype(np.float32)
        b_h = rng.standard_normal(96).astype(np.float32)
        b2_h = rng.standard_normal(96).astype(np.float32)
        args = [clnp.asarray(h, device=device) for h in (a_h, g_h, b_h, b2_h)]
        d, b, b2 = jf(*args)
        dh = g_h * (a_h > 0)
        np.testing.assert_allclose(_np(d), dh, rtol=1e-6)
        np.testing.assert_allclose(_np(b), b_h - np.float32(0.01) * dh.sum(0), rtol=1e-5,
                                   atol=1e-6)
        np.testing.assert_allclose(_np(b2), b2_h * 0.5 + dh.max(0), rtol=1e-6)
    srcs = _kernels(jf, *args)
    assert len(srcs) == 2 and all("__global float *t0" in s for s in srcs), \
        [s[:60] for s in srcs]


def test_two_reductions_feed_separate_parts(device, layout, rng):
    """One elementwise group of the output shape reads two reductions of different groups:
    each independent part joins its own reduction's kernel."""
    def f(a, c, w, v):
        sa = clnp.sum(a * 2.0, axis=0)
        sc = clnp.sum(clnp.exp(c), axis=0)
        return w - 0.1 * sa, v - 0.1 * sc
    hs = [rng.standard_normal(s).astype(np.float32) for s in ((64, 40), (32, 40), (40,), (40,))]
    args = [clnp.asarray(h, device=device) for h in hs]
    jf = cg.jit(f)
    for _ in range(2):
        w, v = jf(*args)
    a, c, w0, v0 = hs
    np.testing.assert_allclose(_np(w), w0 - 0.1 * (a * 2).sum(0), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(_np(v), v0 - 0.1 * np.exp(c).sum(0), rtol=1e-5, atol=1e-5)
    assert len(_kernels(jf, *args)) == 2


def test_part_reading_two_reductions_stays_a_step(device, layout, rng):
    """A value reading the results of two reduction groups joins neither."""
    def f(a, c):
        return clnp.sum(a, axis=0) * clnp.sum(clnp.exp(c), axis=0) + 1.0
    a_h, c_h = (rng.standard_normal(s).astype(np.float32) for s in ((50, 30), (20, 30)))
    jf = cg.jit(f)
    a, c = clnp.asarray(a_h, device=device), clnp.asarray(c_h, device=device)
    np.testing.assert_allclose(_np(jf(a, c)), a_h.sum(0) * np.exp(c_h).sum(0) + 1.0,
                               rtol=1e-5, atol=1e-5)
    assert len(_kernels(jf, a, c)) == 3


def test_weak_scalar_and_full_reduction(device, layout, rng):
    """A full reduction (a lone ``sum``) with an epilogue reading a Python scalar argument:
    the scalar changes per call without a retrace."""
    f = cg.jit(lambda x, lr: clnp.sum(x * x) * lr + 1.0)
    xh = rng.standard_normal(1000).astype(np.float32)
    x = clnp.asarray(xh, device=device)
    for lr in (0.5, 2.0, -1.0):
        np.testing.assert_allclose(float(f(x, lr)), (xh * xh).sum() * lr + 1.0, rtol=1e-5)
    assert len(_kernels(f, x, 1.0)) == 1


def test_results_escaping_and_dtypes(device, layout, rng):
    """The reduction's result and the epilogue's values are both outputs; the epilogue
    converts (an int32 sum to float32, a float32 sum to float16, rounded as stored)."""
    def f(k, x):
        s = clnp.sum(k, axis=1)
        t = clnp.sum(x, axis=1)
        return s, clnp.astype(s, clnp.float32) * 0.5, clnp.astype(t, clnp.float16) * 2
    kh = rng.integers(-100, 100, (30, 300)).astype(np.int32)
    xh = rng.standard_normal((30, 300)).astype(np.float32)
    jf = cg.jit(f)
    s, h, t = jf(clnp.asarray(kh, device=device), clnp.asarray(xh, device=device))
    np.testing.assert_array_equal(_np(s), kh.sum(1))
    np.testing.assert_allclose(_np(h), kh.sum(1).astype(np.float32) * 0.5, rtol=1e-7)
    assert t.dtype == clnp.float16
    np.testing.assert_allclose(_np(t).astype(np.float32),
                               xh.sum(1).astype(np.float16).astype(np.float32) * 2, rtol=2e-3,
                               atol=2e-3)


def test_cpu_partials_run_the_epilogue_after(device, rng, monkeypatch):
    """On CPUs a long column split into parts is finished by a second launch, and the
    epilogue is a step after it."""
    if not device.is_cpu:
        pytest.skip("CPU layouts")
    f = cg.jit(lambda a, b: b - clnp.sum(a, axis=0) * 0.25)
    ah = rng.standard_normal((40000, 3)).astype(np.float32)
    bh = rng.standard_normal(3).astype(np.float32)
    got = f(clnp.asarray(ah, device=device), clnp.asarray(bh, device=device))
    np.testing.assert_allclose(_np(got), bh - ah.sum(0) * 0.25, rtol=1e-4, atol=1e-4)


def test_mlp_training_step_against_numpy(device, layout, rng):
    """An SGD step of a two-layer MLP (bias gradients and their updates fused) follows
    NumPy's hand-written backprop for three steps."""
    w1 = rng.standard_normal((20, 32)).astype(np.float32) * 0.2
    b1 = rng.standard_normal(32).astype(np.float32) * 0.1
    w2 = rng.standard_normal((32, 6)).astype(np.float32) * 0.2
    b2 = rng.standard_normal(6).astype(np.float32) * 0.1
    x = rng.standard_normal((64, 20)).astype(np.float32)
    y = np.eye(6, dtype=np.float32)[rng.integers(0, 6, 64)]

    def loss(p, x, y):
        h = clnp.maximum(x @ p[0] + p[1], 0.0)
        z = h @ p[2] + p[3]
        m = clnp.max(z, axis=1, keepdims=True)
        lse = m[:, 0] + clnp.log(clnp.sum(clnp.exp(z - m), axis=1))
        return clnp.mean(lse - clnp.sum(z * y, axis=1))

    def step(p, x, y):
        g = cg.grad(loss)(p, x, y)
        return [a - 0.05 * b for a, b in zip(p, g)]

    def np_step(p):
        a1 = x @ p[0] + p[1]
        h = np.maximum(a1, 0)
        z = h @ p[2] + p[3]
        e = np.exp(z - z.max(1, keepdims=True))
        dz = (e / e.sum(1, keepdims=True) - y) / len(x)
        dh = (dz @ p[2].T) * (a1 > 0)
        g = [x.T @ dh, dh.sum(0), h.T @ dz, dz.sum(0)]
        return [a - np.float32(0.05) * b for a, b in zip(p, g)]
    jf = cg.jit(step)
    p = [clnp.asarray(a, device=device) for a in (w1, b1, w2, b2)]
    ph = [w1, b1, w2, b2]
    xd, yd = clnp.asarray(x, device=device), clnp.asarray(y, device=device)
    for _ in range(3):
        p, ph = jf(p, xd, yd), np_step(ph)
        for a, b in zip(p, ph):
            np.testing.assert_allclose(_np(a), b, rtol=1e-4, atol=1e-5)


def test_mean_loss_over_rows(device, layout, rng):
    """A loss averaged over rows of a row kernel's values (softmax cross-entropy): the row
    kernel stores its per-row values, and one fused reduction sums them and scales the sum
    (no eager reduction, no elementwise kernel after it)."""
    def loss(z, y):
        m = clnp.max(z, axis=1, keepdims=True)
        lse = m[:, 0] + clnp.log(clnp.sum(clnp.exp(z - m), axis=1))
        return clnp.mean(lse - clnp.sum(z * y, axis=1))
    zh = rng.standard_normal((300, 10)).astype(np.float32)
    yh = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 300)]
    z, y = clnp.asarray(zh, device=device), clnp.asarray(yh, device=device)
    jf = cg.jit(cg.value_and_grad(loss))
    for _ in range(2):
        val, g = jf(z, y)
    e = np.exp(zh - zh.max(1, keepdims=True))
    s = e / e.sum(1, keepdims=True)
    want = np.mean(np.log(e.sum(1)) + zh.max(1) - (zh * yh).sum(1))
    np.testing.assert_allclose(float(val), want, rtol=1e-5)
    np.testing.assert_allclose(_np(g), (s - yh) / 300, rtol=1e-4, atol=1e-7)
    srcs = jf.lower(z, y).kernel_sources()
    heads = [t.splitlines()[0] for t in srcs]
    assert not any("clnp elementwise" in h or "clnp reductions of" in h for h in heads), heads
    assert sum("fused reduction" in h and "divide" in h for h in heads) == 1, heads
