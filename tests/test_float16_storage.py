"""float16 storage: the integer conversions every kernel loads and stores float16 with
(``clnp._kernels.ctypes.half_helpers``) are exact, on every device, against NumPy."""
import numpy as np
import pytest

import clnp
import clnp_grad as cg


def _same_bits(got: np.ndarray, want: np.ndarray) -> None:
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(got[~nan].view(f"u{got.itemsize}"),
                                  want[~nan].view(f"u{want.itemsize}"))


def test_every_float16_value_loads_exactly(device):
    bits = np.arange(65536, dtype=np.uint16).view(np.float16)
    x = clnp.asarray(bits, device=device)
    _same_bits(np.asarray(clnp.astype(x, clnp.float32)), bits.astype(np.float32))
    _same_bits(np.asarray(x + clnp.asarray(np.float16(0), device=device)),
               bits + np.float16(0))


def _float32_cases() -> np.ndarray:
    rng = np.random.default_rng(0)
    halves = np.arange(65536, dtype=np.uint16).view(np.float16)
    finite = np.sort(halves[np.isfinite(halves)].astype(np.float64))
    mids = (finite[1:] + finite[:-1]) / 2          # ties: round to even
    near = np.concatenate([mids * (1 + 2.0 ** -20), mids * (1 - 2.0 ** -20)])
    scales = (1e-9, 1e-7, 6e-5, 1e-3, 1.0, 3e3, 6e4, 1e6)
    rand = np.concatenate([rng.standard_normal(4096) * s for s in scales])
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 65504.0, 65519.99, 65520.0, -65520.0,
               2.0 ** -24, 2.0 ** -25, 3 * 2.0 ** -26, 2.0 ** -14, 2.0 ** -14 - 2.0 ** -25,
               1e-45, 3e38]
    return np.concatenate([finite, mids, near, rand, special]).astype(np.float32)


def test_float32_to_float16_rounds_to_nearest_even(device):
    v = _float32_cases()
    with np.errstate(over="ignore"):
        want = v.astype(np.float16)
    x = clnp.asarray(v, device=device)
    _same_bits(np.asarray(clnp.astype(x, clnp.float16)), want)
    # the jitted (fused) store uses the same conversion
    f = cg.jit(lambda a: clnp.astype(a * 1.0, clnp.float16))
    _same_bits(np.asarray(f(x)), want)


@pytest.mark.parametrize("n", [1, 7, 4099])
def test_float16_kernels_vector_and_tail_paths(device, n):
    rng = np.random.default_rng(n)
    a = rng.standard_normal(n).astype(np.float16)
    b = rng.standard_normal(n).astype(np.float16)
    x, y = clnp.asarray(a, device=device), clnp.asarray(b, device=device)
    _same_bits(np.asarray(x * y + x), a * b + a)
    _same_bits(np.asarray(cg.jit(lambda p, q: p * q + p)(x, y)), a * b + a)


@pytest.mark.parametrize("n", [5, 33, 1027])
def test_float16_vector_bodies_round_every_result(device, n):
    """float16 bodies compute on float vectors on CPUs: each intermediate is still rounded to
    float16 as NumPy rounds it, casts in and out (int8, float32) and the scalar tail agree,
    and a body that also holds float64 (scalar: double -> half rounds once) is exact too."""
    rng = np.random.default_rng(n)
    a = (rng.standard_normal(n) * 300).astype(np.float16)
    b = rng.standard_normal(n).astype(np.float16)
    i = rng.integers(-128, 127, n).astype(np.int8)
    f = rng.standard_normal(n).astype(np.float32)
    d = rng.standard_normal(n)
    x, y = clnp.asarray(a, device=device), clnp.asarray(b, device=device)
    xi, xf = clnp.asarray(i, device=device), clnp.asarray(f, device=device)
    # a * b rounds before + a, a * 3 before - b: dropping a rounding changes these bits
    _same_bits(np.asarray(cg.jit(lambda p, q: (p * q + p) * 3 - q)(x, y)), (a * b + a) * 3 - b)
    _same_bits(np.asarray(cg.jit(lambda p, k: p * 0.5 + k)(x, xi)), a * np.float16(0.5) + i)
    got = np.asarray(cg.jit(lambda p, g: p + g.astype(clnp.float16) * 2)(x, xf))
    _same_bits(got, a + f.astype(np.float16) * np.float16(2))
    _same_bits(np.asarray(cg.jit(lambda p: clnp.astype(p * 7, clnp.float32) - 1)(x)),
               (a * np.float16(7)).astype(np.float32) - 1)
    if device.has_fp64:
        xd = clnp.asarray(d, device=device)
        _same_bits(np.asarray(cg.jit(lambda p, e: clnp.astype(e * 3, clnp.float16) + p)(x, xd)),
                   (d * 3).astype(np.float16) + a)


def test_float16_fused_reductions_and_rows(device):
    """float16 rows and reductions run fused (one kernel each) with float32 accumulators."""
    xs = np.random.default_rng(3).standard_normal((37, 300)).astype(np.float16)
    x = clnp.asarray(xs, device=device)
    f = cg.jit(lambda v: clnp.sum(v * v + 1, axis=1))
    got = np.asarray(f(x))
    assert got.dtype == np.float16
    want = ((xs * xs + np.float16(1)).astype(np.float32)).sum(1).astype(np.float16)
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=2e-3)
    assert len(f.lower(x).kernel_sources()) == 1

    def layernorm(v):
        m = clnp.mean(v, axis=-1, keepdims=True)
        c = v - m
        return c / clnp.sqrt(clnp.mean(c * c, axis=-1, keepdims=True) + 1e-5)
    g = cg.jit(layernorm)
    x32 = xs.astype(np.float32)
    ref = (x32 - x32.mean(-1, keepdims=True)) / np.sqrt(x32.var(-1, keepdims=True) + 1e-5)
    got = np.asarray(g(x))
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float32), ref, rtol=4e-3, atol=4e-3)
    assert len(g.lower(x).kernel_sources()) == 1


def test_float16_indexing_moves_bits(device):
    """Gathers and scatters of float16 (fancy and boolean indexing, take, diagonal, put)
    build on devices without ``cl_khr_fp16`` and move the stored bits (NaN payloads, -0)."""
    a = np.arange(12, dtype=np.float16).reshape(3, 4)
    a[0, 1], a[2, 2] = -0.0, np.uint16(0x7E01).view(np.float16)
    x = clnp.asarray(a, device=device)
    i = clnp.asarray([2, 0], device=device)
    _same_bits(np.asarray(x[clnp.asarray([2, 0, 2], device=device)]), a[[2, 0, 2]])
    _same_bits(np.asarray(clnp.take(x, i, axis=1)), np.take(a, [2, 0], axis=1))
    _same_bits(np.asarray(clnp.diagonal(x)), np.diagonal(a))
    _same_bits(np.asarray(x[x > 3]), a[a > 3])
    y, b = x.copy(), a.copy()
    y[clnp.asarray([1, 0], device=device)] = x[2]
    b[[1, 0]] = a[2]
    _same_bits(np.asarray(y), b)
    clnp.put(y, clnp.asarray([0, 5], device=device),
             clnp.asarray(np.array([7.5, -2.25], np.float16), device=device))
    np.put(b, [0, 5], np.array([7.5, -2.25], np.float16))
    _same_bits(np.asarray(y), b)


@pytest.mark.parametrize("native", [False, True], ids=["integer", "vload_half"])
@pytest.mark.parametrize("width", ["", "4"])
def test_both_conversion_forms_are_exact(device, native, width):
    """GPUs build with CLNP_NATIVE_HALF (the core vload_half/vstore_half_rte), CPUs with the
    integer form: each form, forced on this device, converts every float16 value and the
    rounding cases of float32 as NumPy does (NaN payloads aside)."""
    import pyopencl as cl
    w = int(width or 1)
    ld = f"clnp_h2f{width}(vload{width}(i, h))" if width else "clnp_h2f(h[i])"
    st = (f"vstore{width}(clnp_f2h{width}(vload{width}(i, f)), i, o)" if width
          else "o[i] = clnp_f2h(f[i])")
    src = ("__kernel void cvt(__global const ushort *h, __global float *g, "
           "__global const float *f, __global ushort *o, const int n) {\n"
           "  const int i = get_global_id(0);\n  if (i >= n) return;\n"
           f"  {'vstore' + width + '(' + ld + ', i, g)' if width else 'g[i] = ' + ld};\n"
           f"  {st};\n}}")
    prg = device.build(src, [f"-DCLNP_NATIVE_HALF={int(native)}"])
    halves = np.arange(65536, dtype=np.uint16).view(np.float16)
    floats = _float32_cases()
    floats = np.resize(floats, 65536).astype(np.float32)    # one length for both directions
    h, f = clnp.asarray(halves, device=device), clnp.asarray(floats, device=device)
    g = clnp.empty(65536, dtype=clnp.float32, device=device)
    o = clnp.empty(65536, dtype=clnp.float16, device=device)
    cl.Kernel(prg, "cvt")(device.queue, (65536 // w,), None, h._buf, g._buf, f._buf, o._buf,
                          np.int32(65536 // w))
    _same_bits(np.asarray(g), halves.astype(np.float32))
    with np.errstate(over="ignore"):
        _same_bits(np.asarray(o), floats.astype(np.float16))
