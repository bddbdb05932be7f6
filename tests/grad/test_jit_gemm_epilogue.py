"""clnp_grad.jit: matrix products take their elementwise consumers as an epilogue inside the
GEMM kernel. Results against NumPy, kernel counts through ``lower(...).kernel_sources()``,
every layout the kernels handle (transposed operands, the CPU kernel's swapped and
dot-product paths, batches, edges), the GPU kernel (forced on CPU devices), the fallbacks,
and gradients through ``grad(jit(loss))``.

Most cases share one epilogue (``relu(p + b)`` in float32), hence one compiled program."""
from __future__ import annotations

import numpy as np
import pytest

import clnp
import clnp_grad as cg
from clnp._routines import dot_general as _linalg
from clnp._kernels.elementwise import Instr, Operand
from clnp._kernels.gemm import GemmSpec, render_gemm

# the fusion groups' kernels: small steps would be one whole-step kernel
pytestmark = pytest.mark.usefixtures("general_path")


def _np(x):
    return clnp.asnumpy(x)


def _relu_bias(p, b):
    return clnp.maximum(p + b, 0.0)


def _data(shape, seed, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _tol(dtype):
    tol = 1e-5 if dtype == np.float32 else 1e-12
    return {"rtol": tol, "atol": tol}


def _gemm_sources(src):
    return [s for s in src if "clnp gemm" in s]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_of_bias_is_one_kernel(device, dtype):
    if not device.supports(np.dtype(dtype)):
        pytest.skip(f"{device} has no {np.dtype(dtype).name}")
    # sizes that are no multiple of any tile: every edge path of the store loop runs
    xh, wh, bh = _data((37, 41), 0, dtype), _data((41, 29), 1, dtype), _data(29, 2, dtype)
    x, w, b = (clnp.asarray(a, device=device) for a in (xh, wh, bh))
    jf = cg.jit(lambda x, w, b: _relu_bias(x @ w, b))
    src = jf.lower(x, w, b).kernel_sources()
    assert len(src) == 1 and "clnp gemm" in src[0] and "epilogue: add, maximum" in src[0]
    ref = np.maximum(xh @ wh + bh, 0)
    np.testing.assert_allclose(_np(jf(x, w, b)), ref, **_tol(dtype))
    np.testing.assert_allclose(_np(jf(x, w, b)), ref, **_tol(dtype))     # replayed


@pytest.mark.parametrize("form", ["vector @ matrix", "matrix @ vector", "transposed"])
def test_vector_products_take_an_epilogue(device, form):
    """A product with one free dim (a linear model's weight gradient ``g @ X``, or ``X @ w``)
    takes its elementwise consumers as an epilogue too: the SGD update runs in the product's
    kernel. A dot of two vectors (no free dim) stays a product of its own."""
    xh, vh, wh = _data((37, 19), 3), _data(37, 4), _data(19, 5)
    X, v, w = (clnp.asarray(a, device=device) for a in (xh, vh, wh))
    if form == "vector @ matrix":
        jf, args, ref = cg.jit(lambda v, X, w: w - 0.1 * (v @ X)), (v, X, w), wh - 0.1 * (vh @ xh)
    elif form == "matrix @ vector":
        jf, args, ref = cg.jit(lambda X, w, v: clnp.maximum(X @ w + v, 0.0)), (X, w, v), \
            np.maximum(xh @ wh + vh, 0)
    else:
        jf, args, ref = cg.jit(lambda X, v, w: w - 0.1 * (X.T @ v)), (X, v, w), \
            wh - 0.1 * (xh.T @ vh)
    src = jf.lower(*args).kernel_sources()
    assert len(src) == 1 and "clnp gemm" in src[0] and "epilogue" in src[0], src
    for _ in range(2):                                              # traced, then replayed
        np.testing.assert_allclose(_np(jf(*args)), ref, rtol=1e-5, atol=1e-5)
    dot = cg.jit(lambda a, b: (a @ b) * 2.0)
    a, b = clnp.asarray(vh, device=device), clnp.asarray(_data(37, 6), device=device)
    assert not any("epilogue" in s for s in dot.lower(a, b).kernel_sources())
    np.testing.assert_allclose(float(dot(a, b)), 2 * float(vh @ _data(37, 6)), rtol=1e-5)


def test_operands_bias_rows_residual_and_weak_scale(device):
    """A bias over N, a per-row vector over M, a full (M, N) residual and a Python scalar
    (weak: a new value neither retraces nor rebuilds) in one epilogue. N is wider than a
    CPU tile, so whole tiles take the vector epilogue and the last one the overlap."""
    M, K, N = 37, 41, 71
    xh, wh = _data((M, K), 3), _data((K, N), 4)
    bh, ch, rh = _data(N, 5), _data((M, 1), 6), _data((M, N), 7)
    x, w, b, c, r = (clnp.asarray(a, device=device) for a in (xh, wh, bh, ch, rh))

    def f(x, w, b, c, r, s):
        return (x @ w + b) * s - c + r
    jf = cg.jit(f)
    src = jf.lower(x, w, b, c, r, 0.5).kernel_sources()
    assert len(src) == 1 and "clnp gemm" in src[0]
    for s in (0.5, -2.0):
        ref = (xh @ wh + bh) * np.float32(s) - ch + rh
        np.testing.assert_allclose(_np(jf(x, w, b, c, r, s)), ref, rtol=1e-5, atol=1e-5)
    assert len(jf._cache) == 1


def test_transposed_operands_and_transposed_product(device):
    """``a.T @ w.T`` (the CPU kernel computes C^T = B^T A^T), ``x @ v.T`` (both operands
    contiguous along K: the CPU kernel's dot-product path) and ``(x @ w).T + b`` (the group
    reads the product transposed: the product of the swapped operands is fused instead)."""
    M, K, N = 37, 41, 29
    ah, wth = _data((K, M), 8), _data((N, K), 9)
    xh, bh, bmh = _data((M, K), 10), _data(N, 11), _data(M, 12)
    a, wt, x, b, bm = (clnp.asarray(v, device=device) for v in (ah, wth, xh, bh, bmh))
    ref = np.maximum(xh @ wth.T + bh, 0)
    cases = [(lambda a, wt, b: _relu_bias(a.T @ wt.T, b), (a, wt, b),
              np.maximum(ah.T @ wth.T + bh, 0)),
             (lambda x, wt, b: _relu_bias(x @ wt.T, b), (x, wt, b), ref),
             (lambda x, wt, b: _relu_bias((wt @ x.T).T, b), (x, wt, b), ref),
             (lambda x, wt, bm: _relu_bias((x @ wt.T).T, bm), (x, wt, bm),
              np.maximum((xh @ wth.T).T + bmh, 0))]
    # a weight update: the gradient is a transposed product of two activations
    hh, dh, w0 = _data((13, M), 30), _data((13, 71), 31), _data((71, M), 32)
    hd, dd, wd = (clnp.asarray(v, device=device) for v in (hh, dh, w0))
    cases.append((lambda h, d, w: w - 0.5 * (h.T @ d).T, (hd, dd, wd),
                  w0 - np.float32(0.5) * (hh.T @ dh).T))
    for fn, args, want in cases:
        jf = cg.jit(fn)
        assert len(jf.lower(*args).kernel_sources()) == 1
        np.testing.assert_allclose(_np(jf(*args)), want, rtol=1e-5, atol=1e-5)


def test_batched_products(device):
    """A batch of products, and a batch times one matrix (the batch folds into M)."""
    B, M, K, N = 3, 13, 41, 29
    xh, wh, w2h, bh = _data((B, M, K), 13), _data((B, K, N), 14), _data((K, N), 15), \
        _data(N, 16)
    x, w, w2, b = (clnp.asarray(v, device=device) for v in (xh, wh, w2h, bh))
    jf = cg.jit(lambda x, w, b: _relu_bias(x @ w, b))
    for args, want in (((x, w, b), np.maximum(xh @ wh + bh, 0)),
                       ((x, w2, b), np.maximum(xh @ w2h + bh, 0))):
        assert len(jf.lower(*args).kernel_sources()) == 1
        np.testing.assert_allclose(_np(jf(*args)), want, rtol=1e-5, atol=1e-5)


def test_free_dims_that_do_not_merge(device):
    """``x @ w`` of a batched x whose batch and row dims cannot merge into one M (x is a
    permuted view inside the function): the product and its epilogue stay right."""
    xh, wh, bh = _data((13, 3, 41), 20), _data((41, 29), 21), _data(29, 22)
    x, w, b = (clnp.asarray(v, device=device) for v in (xh, wh, bh))
    jf = cg.jit(lambda x, w, b: _relu_bias(clnp.permute_dims(x, (1, 0, 2)) @ w, b))
    want = np.maximum(xh.transpose(1, 0, 2) @ wh + bh, 0)
    for _ in range(3):
        np.testing.assert_allclose(_np(jf(x, w, b)), want, rtol=1e-5, atol=1e-5)


def test_several_outputs(device):
    """The pre-activation escapes (a residual for the backward pass): both values are
    stored by the one kernel."""
    xh, wh, bh = _data((37, 41), 17), _data((41, 29), 18), _data(29, 19)
    x, w, b = (clnp.asarray(v, device=device) for v in (xh, wh, bh))

    def f(x, w, b):
        h = x @ w + b
        return h, clnp.maximum(h, 0.0)
    jf = cg.jit(f)
    assert len(jf.lower(x, w, b).kernel_sources()) == 1
    h, r = jf(x, w, b)
    np.testing.assert_allclose(_np(h), xh @ wh + bh, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(_np(r), np.maximum(xh @ wh + bh, 0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kind", [None, "gpu"])
def test_outputs_of_another_dtype_first(device, monkeypatch, kind):
    """A boolean mask stored first (C takes its type) beside a float value: the mask of the
    backward pass of ReLU. C's pointer was once declared as the product's float type, so the
    mask went to 4x its offsets, past the end of its buffer (found by Oclgrind)."""
    if kind:
        monkeypatch.setattr(_linalg, "_FORCE_KIND", kind)
    xh, wh, bh = _data((8, 12), 31), _data((12, 16), 32), _data(16, 33)
    x, w, b = (clnp.asarray(v, device=device) for v in (xh, wh, bh))

    def f(x, w, b):
        h = x @ w + b
        m = h > 0
        return m, clnp.where(m, h, 0.0)
    jf = cg.jit(f)
    src = jf.lower(x, w, b).kernel_sources()
    assert len(src) == 1 and "__global uchar *c = C" in src[0]
    h = xh @ wh + bh
    for _ in range(2):
        m, r = jf(x, w, b)
        np.testing.assert_array_equal(_np(m), h > 0)
        np.testing.assert_allclose(_np(r), np.where(h > 0, h, 0), rtol=1e-5, atol=1e-5)


def test_product_read_elsewhere_is_not_fused(device):
    """A product that another step also reads stays a product of its own."""
    xh, wh, bh = _data((37, 41), 20), _data((41, 29), 21), _data(29, 22)
    x, w, b = (clnp.asarray(v, device=device) for v in (xh, wh, bh))
    jf = cg.jit(lambda x, w, b: (_relu_bias(x @ w, b), x @ w))
    src = jf.lower(x, w, b).kernel_sources()
    assert len(src) == 2
    r, p = jf(x, w, b)
    np.testing.assert_allclose(_np(r), np.maximum(xh @ wh + bh, 0), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(_np(p), xh @ wh, rtol=1e-5, atol=1e-5)


def test_split_k_sums_partials_into_the_epilogue(device):
    """A few outputs and a long K split the product into partial products: one elementwise
    kernel then sums them and evaluates the epilogue (two kernels, where the eager product
    and a separate elementwise kernel take three)."""
    M, K, N = 5, 6000, 7
    xh, wh, bh = _data((M, K), 23), _data((K, N), 24), _data(N, 25)
    x, w, b = (clnp.asarray(v, device=device) for v in (xh, wh, bh))
    ref = np.maximum(xh @ wh + bh, 0)
    jf = cg.jit(lambda x, w, b: _relu_bias(x @ w, b))
    src = jf.lower(x, w, b).kernel_sources()
    assert len(src) == 2 and "clnp gemm" in src[0] and "epilogue" not in src[0]
    assert "add_add" in src[1] or "add, add" in src[1]       # the partials' sum
    np.testing.assert_allclose(_np(jf(x, w, b)), ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(_np(jf(x, w, b)), ref, rtol=1e-4, atol=1e-4)
    # the product read transposed, with a second stored value
    def f(wt, x, b):
        h = (wt @ x.T).T + b
        return h, clnp.maximum(h, 0.0)
    jt = cg.jit(f)
    wt = clnp.asarray(np.ascontiguousarray(wh.T), device=device)
    assert len(jt.lower(wt, x, b).kernel_sources()) == 2
    h, r = jt(wt, x, b)
    np.testing.assert_allclose(_np(r), ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(_np(h), xh @ wh + bh, rtol=1e-4, atol=1e-4)


def test_float16_product_is_not_fused(device):
    """float16 products are computed in float32 after conversions (eager planning): the
    product and its consumers stay separate steps, with the same results."""
    xh, wh, bh = (_data(s, 33 + i).astype(np.float16) for i, s in
                  enumerate(((37, 41), (41, 29), (29,))))
    x, w, b = (clnp.asarray(v, device=device) for v in (xh, wh, bh))
    jf = cg.jit(lambda x, w, b: _relu_bias(x @ w, b))
    src = jf.lower(x, w, b).kernel_sources()
    assert len(src) >= 2 and all("epilogue" not in s for s in src)
    ref = np.maximum(xh.astype(np.float32) @ wh.astype(np.float32) + bh, 0)
    np.testing.assert_allclose(_np(jf(x, w, b)).astype(np.float32), ref, rtol=1e-2,
                               atol=1e-2)


def test_gpu_kernel_epilogue(device, monkeypatch):
    """The local-memory (GPU) kernel's epilogue, forced on whatever device is present."""
    monkeypatch.setattr(_linalg, "_FORCE_KIND", "gpu")
    xh, wh, bh = _data((37, 41), 26), _data((41, 29), 27), _data(29, 28)
    x, w, b = (clnp.asarray(v, device=device) for v in (xh, wh, bh))
    jf = cg.jit(lambda x, w, b: _relu_bias(x @ w, b))
    src = jf.lower(x, w, b).kernel_sources()
    assert len(src) == 1 and "kind='gpu'" in src[0]
    np.testing.assert_allclose(_np(jf(x, w, b)), np.maximum(xh @ wh + bh, 0), rtol=1e-5,
                               atol=1e-5)


def test_grad_of_jitted_mlp_matches_eager(device):
    rng = np.random.default_rng(29)
    ph = {"w1": rng.standard_normal((20, 33)).astype(np.float32) * 0.3,
          "b1": rng.standard_normal(33).astype(np.float32) * 0.1,
          "w2": rng.standard_normal((33, 7)).astype(np.float32) * 0.3,
          "b2": rng.standard_normal(7).astype(np.float32) * 0.1}
    xh = rng.standard_normal((11, 20)).astype(np.float32)
    p = {k: clnp.asarray(v, device=device) for k, v in ph.items()}
    x = clnp.asarray(xh, device=device)

    def loss(p, x):
        h = clnp.maximum(x @ p["w1"] + p["b1"], 0.0)
        z = h @ p["w2"] + p["b2"]
        return clnp.sum(z * z)
    g_jit = cg.grad(cg.jit(loss))(p, x)
    g_eager = cg.grad(loss)(p, x)
    for k in ph:
        np.testing.assert_allclose(_np(g_jit[k]), _np(g_eager[k]), rtol=1e-4, atol=1e-4)
    # the forward's first layer is one kernel: product, bias and relu
    fwd = cg.jit(lambda p, x: clnp.maximum(x @ p["w1"] + p["b1"], 0.0))
    assert len(fwd.lower(p, x).kernel_sources()) == 1


def test_epilogue_spec_errors():
    relu = (Instr("maximum", (0, 1), (np.dtype("int32"),) * 2, np.dtype("int32"),
                  np.dtype("int32")),)
    spec = GemmSpec(np.dtype("int32"), "cpu", 6, 8, vec=8, epilogue=relu,
                    ep_inputs=(Operand(np.dtype("int32"), True),),
                    ep_outputs=((2, np.dtype("int32")),))
    with pytest.raises(ValueError, match="real float dtype"):
        render_gemm(spec)
    f32 = np.dtype("float32")
    bad = GemmSpec(f32, "cpu", 6, 32, vec=16,
                   epilogue=(Instr("add", (0, 5), (f32, f32), f32, f32),),
                   ep_outputs=((2, f32),))
    with pytest.raises(ValueError, match="not defined before it"):
        render_gemm(bad)
    # eager products have no epilogue: their source is unchanged by the feature
    plain = render_gemm(GemmSpec(f32, "cpu", 6, 32, vec=16))[0]
    assert "epilogue" not in plain and "ep1" not in plain


@pytest.mark.parametrize("kind", [None, "gpu"])
def test_split_k_partials_summed_by_their_readers(device, monkeypatch, kind):
    """A split product whose readers are fused reductions or row kernels: its partials are
    their operands, summed in order where read (no kernel of its own sums them), on the
    device's own kernels and the GPU ones. A product that is also an output is summed first."""
    if kind:
        monkeypatch.setattr(_linalg, "_FORCE_KIND", kind)
        monkeypatch.setattr(device, "compute_units", 132)
    # a shape the device's planner splits into 2 to 8 parts (CPU kernels: 5x6000x40 in 4;
    # 32x32 GPU tiles on 132 units: 256x1536x256 in 5; 64x64 ones: 256x2048x576 in 8)
    for M, K, N in ((5, 6000, 40), (256, 1536, 256), (256, 2048, 576)):
        probe = [clnp.zeros(s, dtype=clnp.float32, device=device) for s in ((M, K), (K, N))]
        plan = _linalg.epilogue_plan(*probe, (((1,), (0,)), ((), ())), [])
        if plan is not None and 1 < plan[0].parts <= 8:
            break
    else:
        pytest.skip("no shape tried splits into 2 to 8 parts on this device")
    xh, wh, ah = _data((M, K), 41), _data((K, N), 42), _data((M, N), 43)
    x, w, a = (clnp.asarray(v, device=device) for v in (xh, wh, ah))
    z = xh.astype(np.float64) @ wh

    def colsum(x, w, a):
        d = (x @ w) * (a > 0)
        return d, clnp.sum(d, axis=0)

    def softmax(x, w):
        z = x @ w
        e = clnp.exp(z - clnp.max(z, axis=1, keepdims=True))
        return e / clnp.sum(e, axis=1, keepdims=True)

    jc, js = cg.jit(colsum), cg.jit(softmax)
    for _ in range(3):
        d, s = jc(x, w, a)
        np.testing.assert_allclose(_np(d), z * (ah > 0), rtol=1e-4, atol=1e-3)
        np.testing.assert_allclose(_np(s), (z * (ah > 0)).sum(0), rtol=1e-4, atol=1e-3)
        e = np.exp(z - z.max(1, keepdims=True))
        np.testing.assert_allclose(_np(js(x, w)), e / e.sum(1, keepdims=True), rtol=1e-4,
                                   atol=1e-5)
    for jf, args in ((jc, (x, w, a)), (js, (x, w))):
        src = jf.lower(*args).kernel_sources()
        assert len(src) == 2 and "clnp gemm" in src[0] and "add" in src[1], \
            [t[:50] for t in src]
    both = cg.jit(lambda x, w: (x @ w, clnp.sum(x @ w, axis=0)))
    p, s = both(x, w)
    np.testing.assert_allclose(_np(p), z, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(_np(s), z.sum(0), rtol=1e-4, atol=1e-3)
    # a lone reduction of the product is a fused reduction summing the partials (the eager
    # reduction once received the partials' placeholder)
    lone = cg.jit(lambda x, w: clnp.sum(x @ w, axis=0))
    for _ in range(3):
        np.testing.assert_allclose(_np(lone(x, w)), z.sum(0), rtol=1e-4, atol=1e-3)
    assert len(lone.lower(x, w).kernel_sources()) == 2
