"""bfloat16 storage: ml_dtypes' dtype on the host, 16-bit storage and float32 arithmetic on the
device, JAX's promotion rules. Oracle: NumPy on ml_dtypes arrays (which rounds every bfloat16
result, as clnp does), and float64 for what accumulates in float32.

Every op of the table and every astype pair run on bfloat16 in tests/test_ops_table.py and
tests/test_data_types.py; this file covers the rest: host transfers, promotion, rounding,
reductions, products, indexing and manipulation, jit fusion and gradients."""
from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest

import clnp
import clnp_grad as cg
from clnp._core import dtypes as dt

BF = np.dtype(ml_dtypes.bfloat16)
ALL = list(dt.ALL)


def bf(a):
    return np.asarray(a, np.float32).astype(BF)


def bits(a):
    return np.asarray(a).view(np.uint16)


def same_bits(got, exp):
    got = clnp.asnumpy(got) if isinstance(got, clnp.ndarray) else np.asarray(got)
    assert got.dtype == BF and got.shape == np.shape(exp)
    np.testing.assert_array_equal(bits(got), bits(exp))


def within_one_ulp(got, ref64, what=""):
    """bfloat16 ``got`` is float64 ``ref64`` after one rounding (plus float32 noise)."""
    got = clnp.asnumpy(got)
    assert got.dtype == BF, what
    g, r = got.astype(np.float64), np.asarray(ref64, np.float64)
    err = np.abs(g - r)
    assert (err <= 2.0 ** -8 * np.abs(r) * 1.01 + 1e-30).all(), \
        f"{what}: worst error {err.max()} (ref {r.ravel()[np.argmax(err)]})"


SPECIAL = np.array([0.0, -0.0, 1.0, -1.5, 3.140625, 1e-40, -1e-39, 3.3e38, -3.3e38, np.inf,
                    -np.inf, np.nan], np.float32)


# ----------------------------------------------------------------------------- host and dtype
def test_dtype_and_host_round_trip(device):
    assert clnp.bfloat16 is ml_dtypes.bfloat16
    assert clnp.isdtype(clnp.bfloat16, "real floating")
    assert not clnp.isdtype(clnp.bfloat16, "integral")
    h = bf(SPECIAL)
    h = np.concatenate([h, np.array([0x7FC1, 0xFF81, 0x0001, 0x8001], np.uint16).view(BF)])
    x = clnp.asarray(h, device=device)
    assert x.dtype == BF and x.device == device
    back = np.asarray(x)                                # NaN payloads and -0 survive
    assert back.dtype == BF
    np.testing.assert_array_equal(bits(back), bits(h))
    same_bits(x[::-1].copy(), h[::-1])                  # copies move bits too
    same_bits(clnp.asarray([1.0, 1.00390625, 2.0 ** -130], dtype=clnp.bfloat16, device=device),
              np.array([1.0, 1.00390625, 2.0 ** -130]).astype(BF))
    same_bits(clnp.zeros(3, dtype=clnp.bfloat16, device=device), np.zeros(3, BF))
    same_bits(clnp.full((2,), 1.3, dtype=clnp.bfloat16, device=device), np.full(2, 1.3, BF))
    same_bits(clnp.arange(0, 300, 7, dtype=clnp.bfloat16, device=device),
              np.arange(0, 300, 7, dtype=np.float32).astype(BF))
    same_bits(clnp.eye(3, dtype=clnp.bfloat16, device=device), np.eye(3, dtype=BF))
    fi = clnp.finfo(clnp.bfloat16)
    assert (fi.bits, fi.eps, fi.max) == (16, 2.0 ** -7, float(ml_dtypes.finfo(BF).max))


def test_astype_rounds_to_nearest_even(device):
    """float32/float64 -> bfloat16 rounds as ml_dtypes does (ties to even, overflow to inf,
    NaN stays NaN; float64 goes through float32 as in ml_dtypes), and back exactly."""
    ties = 1.0 + np.arange(0, 2 ** 10) * 2.0 ** -16                     # every tie pattern
    vals = np.concatenate([SPECIAL, ties, 3.3895e38 + np.arange(4) * 2e34, -ties * 2.0 ** -130])
    for src in (np.float32, np.float64):
        h = vals.astype(src)
        x = clnp.asarray(h, device=device)
        if not device.supports(x.dtype):
            continue
        same_bits(x.astype(clnp.bfloat16), h.astype(BF))
    y = clnp.asarray(bf(vals), device=device)
    np.testing.assert_array_equal(clnp.asnumpy(y.astype(clnp.float32)),
                                  bf(vals).astype(np.float32))
    np.testing.assert_array_equal(clnp.asnumpy(y.astype(clnp.float16)),
                                  bf(vals).astype(np.float16))


def _float32_rounding_cases() -> np.ndarray:
    """Every bfloat16 value, the midpoints between neighbours (ties), values just off them,
    random magnitudes from subnormal to near overflow, and specials, as float32."""
    rng = np.random.default_rng(0)
    every = np.arange(65536, dtype=np.uint16).view(BF).astype(np.float32)
    finite = np.unique(every[np.isfinite(every)].astype(np.float64))
    mids = (finite[1:] + finite[:-1]) / 2
    near = np.concatenate([mids * (1 + 2.0 ** -20), mids * (1 - 2.0 ** -20)])
    rand = np.concatenate([rng.standard_normal(2048) * 10.0 ** e for e in range(-40, 39, 6)])
    nans = np.array([0x7F800001, 0xFF800001, 0x7FBFFFFF, 0x7FFF0000, 0xFFC12345],
                    np.uint32).view(np.float32)            # signalling, payloads, signs
    with np.errstate(over="ignore"):
        return np.concatenate([finite, mids, near, rand, SPECIAL, nans]).astype(np.float32)


@pytest.mark.parametrize("width", [1, 4, 16])
def test_shared_conversions_are_exact(device, width):
    """``clnp_bf2f``/``clnp_f2bf`` (ctypes.bfloat16_helpers, prepended by the build's source
    filter), scalar and vector: every bfloat16 value loads exactly, float32 values store as
    ml_dtypes rounds them (any NaN: the quiet NaN of its sign)."""
    cl = pytest.importorskip("pyopencl")
    from clnp._kernels import ctypes as C
    w = "" if width == 1 else str(width)
    src = f"""__kernel void bf_roundtrip(__global const ushort *b, __global float *f,
                                         __global const float *x, __global ushort *y) {{
    const int i = get_global_id(0) * {width};
    {C.store(dt.float32, "f", "i", C.load(BF, "b", "i", width), width)}
    {C.store(BF, "y", "i", C.load(dt.float32, "x", "i", width), width)}
}}"""
    assert f"clnp_bf2f{w}(" in src and "inline" not in src
    prg = device.build(src)
    bits16 = np.arange(65536, dtype=np.uint16)
    x = _float32_rounding_cases()
    n = max(bits16.size, -(-x.size // width) * width)
    b = np.resize(bits16, n)
    xs = np.resize(x, n)
    mf = cl.mem_flags
    ctx, q = device.context, device.queue
    bufs = [cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b),
            cl.Buffer(ctx, mf.WRITE_ONLY, 4 * n),
            cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=xs),
            cl.Buffer(ctx, mf.WRITE_ONLY, 2 * n)]
    prg.bf_roundtrip(q, (n // width,), None, *bufs)
    f, y = np.empty(n, np.float32), np.empty(n, np.uint16)
    cl.enqueue_copy(q, f, bufs[1])
    cl.enqueue_copy(q, y, bufs[3])
    q.finish()
    np.testing.assert_array_equal(f.view(np.uint32),
                                  b.view(BF).astype(np.float32).view(np.uint32))
    with np.errstate(over="ignore", invalid="ignore"):
        want = xs.astype(BF).view(np.uint16)
    np.testing.assert_array_equal(y, want)


# ----------------------------------------------------------------------------- promotion
# JAX's table for bfloat16 (jax.numpy.promote_types), which ml_dtypes follows where NumPy
# defines the pair; the test asks JAX too when it is installed
JAX_PROMOTION = {"bool": "bfloat16", "int8": "bfloat16", "int16": "bfloat16",
                 "int32": "bfloat16", "int64": "bfloat16", "uint8": "bfloat16",
                 "uint16": "bfloat16", "uint32": "bfloat16", "uint64": "bfloat16",
                 "float16": "float32", "bfloat16": "bfloat16", "float32": "float32",
                 "float64": "float64", "complex64": "complex64", "complex128": "complex128"}


def test_promotion_follows_jax(device):
    for d in ALL:
        want = np.dtype(JAX_PROMOTION[d.name])
        assert clnp.result_type(clnp.bfloat16, d) == want, d
        assert clnp.result_type(d, clnp.bfloat16) == want, d
        try:                          # where ml_dtypes defines the pair, it agrees
            assert np.promote_types(BF, d) == want, d
        except TypeError:
            pass
    try:
        import jax.numpy as jnp
    except ImportError:
        jnp = None
    if jnp is not None:
        for d in ALL:
            assert np.dtype(jnp.promote_types(jnp.bfloat16, d.name)).name == \
                JAX_PROMOTION[d.name], d
    # weak Python scalars keep bfloat16 (complex ones give complex64)
    x = clnp.asarray(bf([1.5, -2.0]), device=device)
    assert (x * 2.5).dtype == BF and (x + 1).dtype == BF and (2 ** x).dtype == BF
    assert (x + 1j).dtype == np.complex64 and (x > 1.0).dtype == np.bool_
    assert (x + clnp.asarray(np.float16([1, 2]), device=device)).dtype == np.float32
    assert (x * clnp.asarray(np.int32([3, 4]), device=device)).dtype == BF
    same_bits(x * 2.5, bf([3.75, -5.0]))
    same_bits(x + 0.1, np.array([1.5, -2.0], BF) + BF.type(0.1))   # 0.1 rounds to bf16 first


def test_elementwise_chain_matches_ml_dtypes(device, rng):
    """Each op rounds to bfloat16 as NumPy's ml_dtypes loops do; strided and broadcast
    operands go through the same loads."""
    a, b = bf(rng.standard_normal((16, 12))), bf(rng.uniform(0.5, 2, 12))
    xa, xb = clnp.asarray(a, device=device), clnp.asarray(b, device=device)
    got = clnp.exp(xa[:, ::2] * 0.5) / xb[::2] - clnp.sqrt(xb[::2])
    exp = np.exp(a[:, ::2] * BF.type(0.5)) / b[::2] - np.sqrt(b[::2])
    g, e = clnp.asnumpy(got).astype(np.float64), exp.astype(np.float64)
    np.testing.assert_allclose(g, e, rtol=2.0 ** -7)   # a last-bit difference of exp may flip
    same_bits(clnp.maximum(xa, 0.0), np.maximum(a, BF.type(0)))
    same_bits(clnp.where(xa > 0, xa, xb), np.where(a > 0, a, b))
    same_bits(clnp.nextafter(xa, clnp.asarray(np.float32(np.inf), device=device)
                             .astype(clnp.bfloat16)), np.nextafter(a, BF.type(np.inf)))


# ----------------------------------------------------------------------------- reductions
def test_reductions_accumulate_in_float32(device, rng):
    """Sums that a bfloat16 accumulator could not hold (it stalls at 256 adding ones) come out
    as the float64 sum of the same values, rounded once."""
    same_bits(clnp.sum(clnp.ones(1000, dtype=clnp.bfloat16, device=device)), bf(1000.0))
    a = bf(rng.uniform(0, 2, (64, 300)))
    x = clnp.asarray(a, device=device)
    a64 = a.astype(np.float64)
    within_one_ulp(clnp.sum(x), a64.sum(), "sum")
    within_one_ulp(clnp.sum(x, axis=0), a64.sum(axis=0), "sum axis 0")
    within_one_ulp(clnp.sum(x[:, ::3], axis=1), a64[:, ::3].sum(axis=1), "strided sum")
    within_one_ulp(clnp.mean(x, axis=1), a64.mean(axis=1), "mean")
    within_one_ulp(clnp.var(x, axis=1), a64.var(axis=1), "var")
    within_one_ulp(clnp.std(x), a64.std(), "std")
    within_one_ulp(clnp.prod(x[:4, :40], axis=1), a64[:4, :40].prod(axis=1), "prod")
    within_one_ulp(clnp.cumulative_sum(x[:2], axis=1), np.cumsum(a64[:2], axis=1), "cumsum")
    same_bits(clnp.max(x, axis=0), a.max(axis=0))
    same_bits(clnp.min(x), a.min())
    np.testing.assert_array_equal(clnp.asnumpy(clnp.argmax(x, axis=1)), a.argmax(axis=1))
    assert clnp.sum(x, dtype=clnp.float32).dtype == np.float32


# ----------------------------------------------------------------------------- products
def test_matmul_accumulates_in_float32(device, rng):
    """Products of bfloat16 values (exact in float32) summed in float32: the float64 result of
    the same operands, rounded once, over a contraction of 512."""
    a, b = bf(rng.standard_normal((24, 512))), bf(rng.standard_normal((512, 20)))
    xa, xb = clnp.asarray(a, device=device), clnp.asarray(b, device=device)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    # the float32 sums of 512 terms carry cancellation error far below a bfloat16 unit; the
    # bound allows it relative to the terms' scale
    for got, r, what in [(xa @ xb, ref, "matmul"),
                         (clnp.tensordot(xa, xb, axes=1), ref, "tensordot"),
                         (clnp.matmul(clnp.stack([xa, xa]), xb), np.stack([ref, ref]),
                          "batched"),
                         (clnp.vecdot(xa, xa), (a.astype(np.float64) ** 2).sum(-1), "vecdot")]:
        g = clnp.asnumpy(got)
        assert g.dtype == BF, what
        err = np.abs(g.astype(np.float64) - r)
        assert (err <= 2.0 ** -8 * np.abs(r) + 1e-4 * np.sqrt(512)).all(), (what, err.max())
    mixed = xa @ clnp.asarray(b.astype(np.float32), device=device)     # promotes to float32
    assert mixed.dtype == np.float32
    np.testing.assert_allclose(clnp.asnumpy(mixed), ref, rtol=1e-5, atol=1e-4)
    # the dot_general primitive itself, with a batch dimension
    from clnp._core.prims import primitive
    g = primitive("dot_general").bind(clnp.stack([xa, xa]), clnp.stack([xb, xb]),
                                      dimension_numbers=(((2,), (1,)), ((0,), (0,))))
    same_bits(g, np.stack([clnp.asnumpy(xa @ xb)] * 2))


# ----------------------------------------------------------------------------- data movement
@pytest.mark.filterwarnings("ignore:invalid value encountered")   # NumPy comparing the NaN
def test_indexing_and_manipulation(device, rng):
    a = bf(rng.standard_normal((6, 8)))
    a[1, 2], a[3, 4] = np.nan, -0.0
    x = clnp.asarray(a, device=device)
    idx = np.array([5, 0, 3])
    same_bits(x[1:5, ::-2], a[1:5, ::-2])
    same_bits(x[clnp.asarray(idx, device=device)], a[idx])
    same_bits(x[x > 0], a[a > 0])
    same_bits(clnp.take(x, clnp.asarray(idx, device=device), axis=1), np.take(a, idx, axis=1))
    same_bits(clnp.concat([x, x[:2]]), np.concatenate([a, a[:2]]))
    same_bits(clnp.stack([x, x], axis=1), np.stack([a, a], axis=1))
    same_bits(clnp.flip(x, axis=1), np.flip(a, axis=1))
    same_bits(clnp.roll(x, 3), np.roll(a, 3))
    same_bits(clnp.permute_dims(x, (1, 0)).copy(), a.T.copy())
    same_bits(clnp.reshape(x.T, (4, 12)), a.T.reshape(4, 12))
    same_bits(clnp.tril(x), np.tril(a))
    same_bits(clnp.pad(x, 1), np.pad(a, 1))
    srt = np.sort(a.astype(np.float32), axis=1).astype(BF)            # NaN last, as NumPy
    same_bits(clnp.sort(x, axis=1), srt)
    np.testing.assert_array_equal(
        clnp.asnumpy(clnp.argsort(x, axis=0, stable=True)),
        np.argsort(a.astype(np.float32), axis=0, kind="stable"))
    y = clnp.asarray(a, device=device)
    y[0] = 7.0
    y[y < 0] = clnp.asarray(bf(0.5), device=device)
    y[2, 1:3] = clnp.asarray(bf([1.0, 2.0]), device=device)
    b = a.copy()
    b[0] = 7.0
    b[b < 0] = BF.type(0.5)
    b[2, 1:3] = bf([1.0, 2.0])
    same_bits(y, b)
    same_bits(x, a)                                   # the source is untouched


# ----------------------------------------------------------------------------- jit and grad
def test_jit_fuses_bfloat16_loads_and_stores(device, rng):
    """A bfloat16 chain is one fused kernel (loads and stores through the shared spellings,
    intermediate results rounded as eager rounds them); a chain feeding a reduction is one
    kernel too; results equal the eager ones bit for bit."""
    a, b = bf(rng.standard_normal((32, 40))), bf(rng.standard_normal(40))
    xa, xb = clnp.asarray(a, device=device), clnp.asarray(b, device=device)

    def chain(x, y):
        return clnp.tanh(x * 0.5 + y) * y - 1.0

    def chain_sum(x, y):
        return clnp.sum(clnp.exp(x - y) * 2.0, axis=1)

    for f, n in ((chain, 1), (chain_sum, 1)):
        jf = cg.jit(f)
        src = jf.lower(xa, xb).kernel_sources()
        assert len(src) == n, (f.__name__, len(src))
        assert "= clnp_bf2f(" in src[0] and "= clnp_f2bf(" in "".join(src)
        got, eager = jf(xa, xb), f(xa, xb)
        assert got.dtype == eager.dtype
        if f is chain:
            same_bits(got, clnp.asnumpy(eager))
        else:
            np.testing.assert_allclose(clnp.asnumpy(got), clnp.asnumpy(eager), rtol=1e-6)


@pytest.mark.parametrize("n", [5, 33, 1027])
def test_vector_bodies_round_every_result(device, n):
    """bfloat16 bodies compute on float vectors on CPUs (one element per work-item on GPUs):
    each intermediate is still rounded to bfloat16 as ml_dtypes rounds it, casts in and out
    (int8, int32, float32, float64) and the scalar tail agree, eager and fused alike."""
    rng = np.random.default_rng(n)
    a, b = bf(rng.standard_normal(n) * 300), bf(rng.standard_normal(n))
    i8 = rng.integers(-128, 127, n).astype(np.int8)
    i32 = rng.integers(-(2 ** 30), 2 ** 30, n).astype(np.int32)
    f, d = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n) * 1e3
    x, y = clnp.asarray(a, device=device), clnp.asarray(b, device=device)
    xi8, xi32 = clnp.asarray(i8, device=device), clnp.asarray(i32, device=device)
    xf = clnp.asarray(f, device=device)
    # a * b rounds before + a, a * 3 before - b: dropping a rounding changes these bits
    want = (a * b + a) * BF.type(3) - b
    same_bits((x * y + x) * 3 - y, want)
    same_bits(cg.jit(lambda p, q: (p * q + p) * 3 - q)(x, y), want)
    same_bits(cg.jit(lambda p, k: p * 0.5 + k)(x, xi8), a * BF.type(0.5) + i8.astype(BF))
    same_bits(cg.jit(lambda p, k: clnp.astype(k, clnp.bfloat16) + p)(x, xi32),
              i32.astype(np.float32).astype(BF) + a)
    same_bits(cg.jit(lambda p, g: p + clnp.astype(g, clnp.bfloat16) * 2)(x, xf),
              a + f.astype(BF) * BF.type(2))
    got = cg.jit(lambda p: clnp.astype(clnp.sin(p * 7), clnp.float32) - 1)(x)
    want32 = np.sin((a * BF.type(7)).astype(np.float32)).astype(BF).astype(np.float32) - 1
    # sin's float32 result may differ from NumPy's in the last bit: one bfloat16 ulp
    np.testing.assert_allclose(clnp.asnumpy(got), want32, rtol=2.0 ** -7, atol=0)
    if device.has_fp64:
        xd = clnp.asarray(d, device=device)
        same_bits(cg.jit(lambda p, e: clnp.astype(e * 3, clnp.bfloat16) + p)(x, xd),
                  (d * 3).astype(BF) + a)


def test_gradients_through_bfloat16_casts(device, rng):
    """The cast's derivative casts the cotangent: float32 -> bfloat16 -> float32 passes the
    gradient straight through (rounded to bfloat16 on the way), a bfloat16 input gets a
    bfloat16 gradient, and jit gives the same."""
    w = rng.standard_normal(20).astype(np.float32)
    xw = clnp.asarray(w, device=device)

    def f(v):
        h = v.astype(clnp.bfloat16)
        return clnp.sum((h * h).astype(clnp.float32))

    g = cg.grad(f)(xw)
    wb = bf(w)
    ref = (wb * wb.dtype.type(2)).astype(np.float32)              # d(h*h) = 2h, in bfloat16
    assert g.dtype == np.float32
    np.testing.assert_array_equal(clnp.asnumpy(g), ref)
    np.testing.assert_array_equal(clnp.asnumpy(cg.jit(cg.grad(f))(xw)), ref)
    gb = cg.grad(lambda h: clnp.sum(clnp.sin(h).astype(clnp.float32)))(
        clnp.asarray(wb, device=device))
    assert gb.dtype == BF
    same_bits(gb, np.cos(wb))
    # vjp through a bfloat16 matmul with float32 master weights
    x = bf(rng.standard_normal((4, 20)))

    def loss(wm):
        return clnp.sum((clnp.asarray(x, device=device) @ wm.astype(clnp.bfloat16)[:, None])
                        .astype(clnp.float32))

    gm = cg.grad(loss)(xw)
    np.testing.assert_allclose(clnp.asnumpy(gm), x.astype(np.float32).sum(0), rtol=2.0 ** -7)


def test_errors_name_bfloat16(device):
    x = clnp.asarray(bf(np.eye(2)), device=device)
    with pytest.raises(TypeError, match="linalg.inv: bfloat16 is not supported"):
        clnp.linalg.inv(x)
    with pytest.raises(TypeError, match="bitwise_and requires integer or boolean input; got "
                                        "bfloat16"):
        clnp.bitwise_and(x, x)
    assert clnp.fft.fft(x).dtype == np.complex64            # widened, as float16 is


def test_elementwise_kernel_takes_bfloat16(device):
    """User kernels see bfloat16 values as float (generic ``T`` or the name ``bfloat16``)."""
    x = clnp.asarray(bf([1.5, -2.0, 3.0]), device=device)
    k = clnp.ElementwiseKernel("T x", "T y", "y = x * 3", "bf_triple")
    same_bits(k(x), bf([4.5, -6.0, 9.0]))
    k2 = clnp.ElementwiseKernel("bfloat16 x", "float32 y", "y = x / 3", "bf_third")
    np.testing.assert_array_equal(clnp.asnumpy(k2(x)), np.float32([1.5, -2.0, 3.0]) / 3)
    assert clnp.zeros(2, dtype="bfloat16", device=device).dtype == BF


@pytest.mark.parametrize("a,b", list(itertools.product(["bfloat16"], [d.name for d in ALL])))
def test_can_cast(a, b):
    safe = b in ("bfloat16", "float32", "float64", "complex64", "complex128")
    assert clnp.can_cast(np.dtype(a), np.dtype(b)) == safe
