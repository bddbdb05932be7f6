"""clnp.ElementwiseKernel and clnp.RawKernel (CuPy's spelling) against NumPy, under
clnp_grad transformations, and their error messages."""
from __future__ import annotations

import numpy as np
import pytest

import clnp
import clnp_grad

FMA = clnp.ElementwiseKernel("float32 x, float32 y", "float32 z", "z = x * y + 1", "fma1")
ADDSUB = clnp.ElementwiseKernel("T x, T y", "T s, T d", "s = x + y; d = x - y", "addsub")
SAXPY_SRC = """
__kernel void saxpy(__global float *y, __global const float *x, const float a, const int n)
{
    int g = get_global_id(0);
    if (g < n) y[g] = a * x[g] + y[g];
}
"""


def _arr(device, a):
    return clnp.asarray(np.asarray(a), device=device)


# ------------------------------------------------------------------ ElementwiseKernel
def test_broadcast_strided_and_scalars(device, rng):
    xh = rng.standard_normal((4, 5)).astype(np.float32)
    yh = rng.standard_normal((5,)).astype(np.float32)
    x, y = _arr(device, xh), _arr(device, yh)
    np.testing.assert_allclose(FMA(x, y).to_numpy(), xh * yh + 1, rtol=1e-5, atol=1e-6)
    # transposed and reversed (negative strides) inputs, a Python scalar
    np.testing.assert_allclose(FMA(x.T, 2.0).to_numpy(), xh.T * 2 + 1, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(FMA(x[::-1, ::2], y[::2]).to_numpy(),
                               xh[::-1, ::2] * yh[::2] + 1, rtol=1e-5, atol=1e-6)
    # 3-d with a broadcast middle axis and an offset view
    zh = rng.standard_normal((3, 1, 5)).astype(np.float32)
    np.testing.assert_allclose(FMA(_arr(device, zh), x[1:]).to_numpy(), zh * xh[1:] + 1,
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(FMA(np.float32(3), 4).to_numpy(), 13.0)


def test_placeholders_multiple_outputs_and_int(device, rng):
    xh = rng.integers(-50, 50, (3, 4)).astype(np.int32)
    yh = rng.integers(-50, 50, (3, 4)).astype(np.int32)
    s, d = ADDSUB(_arr(device, xh), _arr(device, yh))
    assert s.dtype == clnp.int32 and d.dtype == clnp.int32
    np.testing.assert_array_equal(s.to_numpy(), xh + yh)
    np.testing.assert_array_equal(d.to_numpy(), xh - yh)
    # placeholder typedef usable in the body; mixed concrete/placeholder output
    k = clnp.ElementwiseKernel("T x", "T y, bool pos", "T t = x * (T)2; y = t; pos = x > 0",
                               "dbl")
    y, pos = k(_arr(device, xh[0]))
    np.testing.assert_array_equal(y.to_numpy(), xh[0] * 2)
    np.testing.assert_array_equal(pos.to_numpy(), xh[0] > 0)
    assert pos.dtype == clnp.bool


def test_float16_storage(device, rng):
    xh = rng.standard_normal((7, 3)).astype(np.float16)
    k = clnp.ElementwiseKernel("T x, float32 w", "T y", "y = x * w", "scale16")
    y = k(_arr(device, xh).T, np.float32(0.5))
    assert y.dtype == clnp.float16
    np.testing.assert_array_equal(y.to_numpy(), (xh.T.astype(np.float32) * 0.5).astype(
        np.float16))


def test_out_and_positional_outputs(device, rng):
    xh = rng.standard_normal((3, 4)).astype(np.float32)
    x = _arr(device, xh)
    out = clnp.zeros((3, 4), dtype=clnp.float32, device=device)
    r = FMA(x, 2.0, out=out)
    assert r is out
    np.testing.assert_allclose(out.to_numpy(), xh * 2 + 1, rtol=1e-5, atol=1e-6)
    # outputs start from out's values (CuPy's references): accumulate in place, strided out
    acc = clnp.ElementwiseKernel("float32 x", "float32 z", "z += x", "acc")
    big = clnp.ones((3, 8), dtype=clnp.float32, device=device)
    acc(x, big[:, ::2])
    expect = np.ones((3, 8), np.float32)
    expect[:, ::2] += xh
    np.testing.assert_allclose(big.to_numpy(), expect, rtol=1e-5, atol=1e-6)
    # in place on an input
    acc(x, x)
    np.testing.assert_allclose(x.to_numpy(), 2 * xh, rtol=1e-5, atol=1e-6)


def test_index_size_and_raw(device):
    k = clnp.ElementwiseKernel("raw T src", "T y", "y = src[n - 1 - i]", "rev")
    src = _arr(device, np.arange(10, dtype=np.float32))
    np.testing.assert_array_equal(k(src, size=10).to_numpy(), np.arange(10)[::-1])
    np.testing.assert_array_equal(k(src[::2], size=5).to_numpy(), np.arange(0, 10, 2)[::-1])
    ki = clnp.ElementwiseKernel("T x", "int64 y", "y = i * 10 + (long)x", "idx")
    np.testing.assert_array_equal(ki(_arr(device, np.ones((2, 3), np.int32))).to_numpy(),
                                  np.arange(6).reshape(2, 3) * 10 + 1)


# ------------------------------------------------------------------ RawKernel
def test_raw_saxpy(device, rng):
    k = clnp.RawKernel(SAXPY_SRC, "saxpy")
    xh = rng.standard_normal(100).astype(np.float32)
    yh = rng.standard_normal(100).astype(np.float32)
    x, y = _arr(device, xh), _arr(device, yh)
    assert k((4,), (32,), (y, x, 2.0, 100)) is None
    np.testing.assert_allclose(y.to_numpy(), 2 * xh + yh, rtol=1e-5, atol=1e-6)
    # functional form: a copy is written and returned, y is untouched
    y2 = k((100,), None, (y, x, np.float32(-1), np.int32(100)), outputs=0)
    np.testing.assert_allclose(y2.to_numpy(), xh + yh, rtol=1e-5)
    np.testing.assert_allclose(y.to_numpy(), 2 * xh + yh, rtol=1e-5, atol=1e-6)


def test_raw_2d_local(device, rng):
    src = """
    __kernel void tr(__global const float *a, __global float *b, const int rows,
                     const int cols)
    {
        __local float tile[8][9];
        int lx = get_local_id(0), ly = get_local_id(1);
        int c = get_group_id(0) * 8 + lx, r = get_group_id(1) * 8 + ly;
        if (r < rows && c < cols) tile[ly][lx] = a[r * cols + c];
        barrier(CLK_LOCAL_MEM_FENCE);
        int tc = get_group_id(1) * 8 + lx, tr_ = get_group_id(0) * 8 + ly;
        if (tr_ < cols && tc < rows) b[tr_ * rows + tc] = tile[lx][ly];
    }"""
    k = clnp.RawKernel(src, "tr")
    ah = rng.standard_normal((20, 13)).astype(np.float32)
    a = _arr(device, ah)
    b = clnp.empty((13, 20), dtype=clnp.float32, device=device)
    k((2, 3), (8, 8), (a, b, 20, 13))
    np.testing.assert_array_equal(b.to_numpy(), ah.T)


# ------------------------------------------------------------------ transformations
def test_vmap_elementwise_kernel(device, rng):
    xh = rng.standard_normal((6, 5)).astype(np.float32)
    yh = rng.standard_normal((5,)).astype(np.float32)
    x, y = _arr(device, xh), _arr(device, yh)
    got = clnp_grad.vmap(lambda u: FMA(u, y))(x)
    np.testing.assert_allclose(got.to_numpy(), xh * yh + 1, rtol=1e-5, atol=1e-6)
    got = clnp_grad.vmap(lambda u: FMA(y, u), in_axes=1)(x.T)
    np.testing.assert_allclose(got.to_numpy(), xh * yh + 1, rtol=1e-5, atol=1e-6)
    s, d = clnp_grad.vmap(ADDSUB)(x, x)
    np.testing.assert_allclose(s.to_numpy(), 2 * xh, rtol=1e-5, atol=1e-6)
    k = clnp.ElementwiseKernel("T x", "T y", "y = x + i", "plus_i")
    with pytest.raises(NotImplementedError, match="plus_i.*'i'"):
        clnp_grad.vmap(k)(x)


def test_vmap_raw_kernel_loops(device, rng):
    k = clnp.RawKernel(SAXPY_SRC, "saxpy")
    xh = rng.standard_normal((3, 16)).astype(np.float32)
    x = _arr(device, xh)
    ones = clnp.ones(16, dtype=clnp.float32, device=device)
    got = clnp_grad.vmap(lambda u: k((16,), None, (u, ones, 3.0, 16), outputs=0))(x)
    np.testing.assert_allclose(got.to_numpy(), xh + 3, rtol=1e-5, atol=1e-6)


def test_grad_through_custom_vjp(device, rng):
    sq = clnp.ElementwiseKernel("T x", "T y", "y = x * x * x", "cube")
    dsq = clnp.ElementwiseKernel("T x, T g", "T dx", "dx = (T)3 * x * x * g", "cube_bwd")
    f = clnp_grad.custom_vjp(lambda x: sq(x))
    f.defvjp(lambda x: (sq(x), x), lambda x, g: (dsq(x, g),))
    xh = rng.standard_normal((4, 3)).astype(np.float32)
    g = clnp_grad.grad(lambda x: clnp.sum(f(x) * 2.0))(_arr(device, xh))
    np.testing.assert_allclose(g.to_numpy(), 6 * xh ** 2, rtol=1e-5)
    # and batched: grad of vmap keeps the custom rule
    g = clnp_grad.grad(lambda x: clnp.sum(clnp_grad.vmap(f)(x)))(_arr(device, xh))
    np.testing.assert_allclose(g.to_numpy(), 3 * xh ** 2, rtol=1e-5)


def test_not_differentiable(device):
    x = _arr(device, np.ones(3, np.float32))
    with pytest.raises(TypeError, match="ElementwiseKernel 'fma1'.*custom_vjp"):
        clnp_grad.grad(lambda u: clnp.sum(FMA(u, 2.0)))(x)
    with pytest.raises(TypeError, match="ElementwiseKernel 'fma1'.*custom_vjp"):
        clnp_grad.jvp(lambda u: FMA(u, 2.0), (x,), (x,))
    k = clnp.RawKernel(SAXPY_SRC, "saxpy")
    with pytest.raises(TypeError, match="RawKernel 'saxpy'.*custom_vjp"):
        clnp_grad.grad(lambda u: clnp.sum(k((3,), None, (u, u, 1.0, 3), outputs=0)))(x)
    with pytest.raises(TypeError, match="RawKernel 'saxpy'.*outputs="):
        clnp_grad.grad(lambda u: clnp.sum(k((3,), None, (u, u, 1.0, 3)) * u))(x)
    # no derivative wanted: results of a cut kernel are constants
    g = clnp_grad.grad(lambda u: clnp.sum(clnp_grad.stop_gradient(FMA(u, 2.0)) * u))(x)
    np.testing.assert_allclose(g.to_numpy(), 3.0)


# ------------------------------------------------------------------ errors
def test_elementwise_errors(device):
    x = _arr(device, np.ones(3, np.float32))
    d = _arr(device, np.ones(3, np.float64)) if device.has_fp64 else \
        _arr(device, np.ones(3, np.int32))
    with pytest.raises(TypeError, match=r"'fma1' takes 2 input\(s\) \(x, y\).*got 1"):
        FMA(x)
    with pytest.raises(TypeError, match=f"'fma1': argument 'y' expects float32, got a "
                                        f"{d.dtype} array"):
        FMA(x, d)
    with pytest.raises(TypeError, match="placeholder 'T': 'x' is float32, 'y' is"):
        ADDSUB(x, d)
    with pytest.raises(TypeError, match="argument 'x' expects int32, got float"):
        clnp.ElementwiseKernel("int32 x", "int32 y", "y = x", "cp")(2.5)
    with pytest.raises(ValueError, match=r"shapes \(3,\), \(4,\) cannot be broadcast"):
        FMA(x, _arr(device, np.ones(4, np.float32)))
    with pytest.raises(ValueError, match="unknown type 'floot32' in 'floot32 y'"):
        clnp.ElementwiseKernel("float32 x, floot32 y", "float32 z", "z = x", "bad")
    with pytest.raises(ValueError, match="'float32' is not"):
        clnp.ElementwiseKernel("float32 x, float32", "float32 z", "z = x", "bad")
    with pytest.raises(ValueError, match="unknown qualifier 'const'"):
        clnp.ElementwiseKernel("const float32 x", "float32 z", "z = x", "bad")
    with pytest.raises(ValueError, match="'i' is reserved"):
        clnp.ElementwiseKernel("float32 i", "float32 z", "z = i", "bad")
    with pytest.raises(TypeError, match="cannot determine the type 'U' of output 'z'"):
        clnp.ElementwiseKernel("T x", "U z", "z = x", "cast")(x)
    with pytest.raises(TypeError, match="NumPy array"):
        FMA(np.ones(3, np.float32), x)
    with pytest.raises(TypeError, match="out= .* not supported under clnp_grad"):
        clnp_grad.vmap(lambda u: FMA(u, 1.0, out=x))(_arr(device, np.ones((2, 3), np.float32)))
    with pytest.raises(ValueError, match=r"broadcast shape \(3,\) cannot be written to an "
                                         r"output of shape \(2,\)"):
        FMA(x, 1.0, out=clnp.empty(2, dtype=clnp.float32, device=device))


def test_raw_errors(device):
    k = clnp.RawKernel(SAXPY_SRC, "saxpy")
    y = _arr(device, np.zeros(8, np.float32))
    with pytest.raises(ValueError, match=r"argument 0 .* \(x\.copy\(\)\)"):
        k((8,), None, (y[1:], y, 1.0, 7))
    with pytest.raises(TypeError, match="'saxpy' takes 4 arguments, got 3"):
        k((8,), None, (y, y, 1.0))
    with pytest.raises(TypeError, match="argument 2 must be .* got str"):
        k((8,), None, (y, y, "a", 8))
    with pytest.raises(OverflowError, match="does not fit the int32"):
        k((8,), None, (y, y, 1.0, 2 ** 40))
    with pytest.raises(ValueError, match="grid must be an int or a tuple of 1 to 3"):
        k((1, 2, 3, 4), None, (y, y, 1.0, 8))
    with pytest.raises(ValueError, match="different numbers of dimensions"):
        k((1, 2), (8,), (y, y, 1.0, 8))
    with pytest.raises(ValueError, match="exceeds"):
        k((1,), (device.max_work_group_size + 1,), (y, y, 1.0, 8))
    with pytest.raises(ValueError, match="no kernel named 'nope'.*saxpy"):
        clnp.RawKernel(SAXPY_SRC, "nope")((8,), None, (y, y, 1.0, 8))
    with pytest.raises(ValueError, match="outputs=.*must index array arguments"):
        k((8,), None, (y, y, 1.0, 8), outputs=2)


def test_local_memory_over_the_device_limit_is_refused(device):
    """A RawKernel whose __local arrays exceed the device's local memory raises before any
    launch (PoCL ran one silently) and leaves its argument untouched; one that fits runs."""
    n = device.local_mem // 4 + 1024
    src = ("__kernel void big(__global float *x) {{ __local float buf[{n}]; "
           "buf[get_local_id(0)] = 1; barrier(CLK_LOCAL_MEM_FENCE); "
           "x[get_global_id(0)] = buf[get_local_id(0) ^ 1]; }}")
    x = clnp.full(8, 5.0, dtype=clnp.float32, device=device)
    with pytest.raises(ValueError, match=rf"'big': its __local arrays take \d+ bytes, more "
                                         rf"than .*local memory \({device.local_mem} bytes"):
        clnp.RawKernel(src.format(n=n), "big")((1,), (8,), (x,))
    np.testing.assert_array_equal(np.asarray(x), np.full(8, 5.0, np.float32))
    clnp.RawKernel(src.format(n=64), "big")((1,), (8,), (x,))
    np.testing.assert_array_equal(np.asarray(x), np.ones(8, np.float32))


def test_block_over_the_kernels_own_limit_is_refused(device):
    """A block within the device's work-group limit but over the kernel's own (registers,
    private memory) raises before the launch, naming both sizes."""
    import pyopencl as cl
    src = ("__kernel void regs(__global float *x) { float p[512]; "
           "for (int i = 0; i < 512; ++i) p[i] = x[(get_global_id(0) + i) % 64]; "
           "float s = 0; for (int i = 0; i < 512; ++i) s += p[(i * 7) % 512] * p[i]; "
           "x[get_global_id(0) % 64] = s; }")
    k = clnp.RawKernel(src, "regs")
    x = clnp.zeros(64, dtype=clnp.float32, device=device)
    kern = clnp._routines.custom_kernels.raw_kernel_object(device, src, "regs", ())
    most = kern.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE, device.cl_device)
    if most >= device.max_work_group_size:
        pytest.skip(f"{device.key}: the kernel's limit is the device's ({most})")
    with pytest.raises(ValueError, match=rf"'regs': block \({most + 1},\).*work-group limit "
                                         rf"on .*: {most}"):
        k((1,), (most + 1,), (x,))
    np.testing.assert_array_equal(np.asarray(x), np.zeros(64, np.float32))


def test_build_errors_show_source_and_log(device):
    k = clnp.ElementwiseKernel("float32 x", "float32 z", "z = x + undefined_thing", "broken")
    x = _arr(device, np.ones(3, np.float32))
    with pytest.raises(clnp.KernelBuildError) as e:
        k(x)
    msg = str(e.value)
    assert "undefined_thing" in e.value.log and "build log" in msg
    assert "clnp_ck_broken" in e.value.source and "z = x + undefined_thing" in msg
    r = clnp.RawKernel("__kernel void bad(__global float *a) { a[0] = nope; }", "bad")
    with pytest.raises(clnp.KernelBuildError) as e:
        r((1,), None, (x,))
    assert "nope" in e.value.log and "__kernel void bad" in e.value.source


def test_jit_runs_kernels_as_steps(device, rng):
    """jit stages both primitives and replays their launches (new input values)."""
    if not hasattr(clnp_grad, "jit"):
        pytest.skip("clnp_grad.jit not available")
    dbl = clnp.RawKernel("__kernel void dbl(__global float *a, const int n)"
                         "{ int g = get_global_id(0); if (g < n) a[g] *= 2; }", "dbl")
    f = clnp_grad.jit(lambda u: dbl((6,), None, (FMA(u, 2.0) + 1, 6), outputs=0) * 3)
    for k in range(2):
        xh = rng.standard_normal(6).astype(np.float32)
        np.testing.assert_allclose(f(_arr(device, xh)).to_numpy(), (xh * 2 + 2) * 6,
                                   rtol=1e-5, atol=1e-5)


def test_jit_fuses_elementwise_kernels_with_their_neighbours(device, rng):
    """A one-output ElementwiseKernel without raw arguments, ``i``/``n`` or a preamble joins
    the fused kernel of the ops around it under jit (its body becomes an inline function
    of that kernel); the rest stay their own kernels. Results as eagerly and as NumPy."""
    xh = rng.standard_normal((5, 7)).astype(np.float32)
    bh = rng.standard_normal(7).astype(np.float32)
    x, b = _arr(device, xh), _arr(device, bh)
    clamp = clnp.ElementwiseKernel("T x, T lo", "T z", "z = x > lo ? x : lo", "clamp_lo")
    positive = clnp.ElementwiseKernel("float32 x", "bool p", "p = x > 0", "positive")

    def f(x, b):
        y = clnp.exp(FMA(x, b) * 0.5)            # broadcast operand, then table ops
        return clamp(y - 1.0, 0.25) + clnp.astype(positive(x), clnp.float32)
    jf = clnp_grad.jit(f)
    ref = np.maximum(np.exp((xh * bh + 1) * np.float32(0.5)) - 1, np.float32(0.25)) + (xh > 0)
    np.testing.assert_allclose(jf(x, b).to_numpy(), ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(f(x, b).to_numpy(), ref, rtol=1e-5, atol=1e-6)
    src = jf.lower(x, b).kernel_sources()
    assert len(src) == 1, [s.splitlines()[0] for s in src]
    assert "z = x > lo ? x : lo" in src[0] and "z = x * y + 1" in src[0]
    # a new scalar value is an argument, not a new kernel
    np.testing.assert_allclose(clnp_grad.jit(lambda x: clamp(x, 0.5))(x).to_numpy(),
                               np.maximum(xh, np.float32(0.5)))
    # multi-output and index-reading kernels run by themselves
    with_i = clnp.ElementwiseKernel("float32 x", "float32 z", "z = x + i", "plus_index")
    g = clnp_grad.jit(lambda x: ADDSUB(x, x)[0] * with_i(x))
    np.testing.assert_allclose(g(x).to_numpy(), (2 * xh) * (xh + np.arange(35).reshape(5, 7)),
                               rtol=1e-5, atol=1e-5)
    assert len(g.lower(x).kernel_sources()) == 3
    # ... and inside a loop kernel
    from clnp_grad import lax
    step = clnp.ElementwiseKernel("float32 v", "float32 w", "w = 0.5f * v + 1.0f", "halfplus")
    h = clnp_grad.jit(lambda x: lax.fori_loop(0, 4, lambda i, v: step(v), x))
    r = xh.copy()
    for _ in range(4):
        r = np.float32(0.5) * r + np.float32(1)
    np.testing.assert_allclose(h(x).to_numpy(), r, rtol=1e-6)
    (src,) = h.lower(x).kernel_sources()
    assert src.startswith("// clnp loop kernel: add, ck_halfplus_") and "w = 0.5f * v" in src
