"""clnp.random: Philox4x32-10 known answers, stream bookkeeping, distributions, and NumPy's
random API (Generator and the legacy functions). Statistical checks use fixed seeds, so they
are deterministic; their bounds are those of a test at a ~0.1% level."""
from __future__ import annotations

import math

import numpy as np
import pytest

import clnp
from clnp._core.prims import primitive
from clnp.random import Generator, Philox, default_rng

M32 = 0xFFFFFFFF


# ------------------------------------------------------------------ host reference Philox
def philox_ref(ctr: list[int], key: list[int]) -> list[int]:
    """Philox4x32-10 written from Salmon et al. (2011), for comparison with the kernels."""
    c0, c1, c2, c3 = ctr
    k0, k1 = key
    for r in range(10):
        if r:
            k0, k1 = (k0 + 0x9E3779B9) & M32, (k1 + 0xBB67AE85) & M32
        p0, p1 = 0xD2511F53 * c0, 0xCD9E8D57 * c2
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0, p1 & M32, (p0 >> 32) ^ c3 ^ k1, p0 & M32)
    return [c0, c1, c2, c3]


def ref_words(key: tuple[int, int], counter: int, nblocks: int) -> list[list[int]]:
    out = []
    for g in range(nblocks):
        c = (counter + g) % 2 ** 128
        out.append(philox_ref([(c >> (32 * i)) & M32 for i in range(4)], list(key)))
    return out


def bits(device, key, counter, n, dtype=clnp.uint32):
    return primitive("rng_bits").bind(key=key, counter=counter, shape=(n,), dtype=dtype,
                                      dist="bits", loc=0, scale=0, device=device).to_numpy()


# Random123 tests/kat_vectors, philox4x32 10: counter (4 words), key (2 words) -> 4 words
KAT = [
    ([0, 0, 0, 0], [0, 0], [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]),
    ([M32] * 4, [M32] * 2, [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]),
    ([0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344], [0xA4093822, 0x299F31D0],
     [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1]),
]


def test_philox_known_answers(device):
    for ctr, key, want in KAT:
        assert philox_ref(ctr, key) == want
        counter = sum(w << (32 * i) for i, w in enumerate(ctr))
        assert bits(device, tuple(key), counter, 4).tolist() == want
        w64 = bits(device, tuple(key), counter, 2, clnp.uint64).tolist()
        assert w64 == [want[0] << 32 | want[1], want[2] << 32 | want[3]]


def test_counter_carries_and_wraps(device):
    key = (0x12345678, 0x9ABCDEF0)
    for counter in (2 ** 32 - 1, 2 ** 64 - 2, 2 ** 96 - 1, 2 ** 128 - 2):
        got = bits(device, key, counter, 11)   # 3 blocks, the last one partial
        want = sum(ref_words(key, counter, 3), [])[:11]
        assert got.tolist() == want, hex(counter)


def test_transforms_match_reference(device):
    bg = Philox(key=0x0123456789ABCDEF, counter=2 ** 64 - 1)
    g = Generator(bg, device=device)
    key = bg._key
    w = ref_words(key, 2 ** 64 - 1, 4)
    u32 = g.random(7, dtype=clnp.float32).to_numpy()        # 2 blocks
    assert bg.state["state"]["counter"] == 2 ** 64 + 1
    assert u32.tolist() == [(x >> 8) * 2.0 ** -24 for x in sum(w[:2], [])][:7]
    e32 = g.standard_exponential(4, dtype=clnp.float32).to_numpy()   # block 2
    u = [(x + 0.5) * 2.0 ** -32 for x in w[2]]
    want = [-math.log1p(-v) if x < 2 ** 31 else -math.log(1 - v) for v, x in zip(u, w[2])]
    np.testing.assert_allclose(e32, want, rtol=2e-6)
    z32 = g.standard_normal(4, dtype=clnp.float32).to_numpy()   # block 3
    want = []
    for a, b in (w[3][:2], w[3][2:]):
        r = math.sqrt(-2 * math.log((a + 0.5) * 2.0 ** -32))
        t = math.pi * (b >> 8) * 2.0 ** -23
        want += [r * math.cos(t), r * math.sin(t)]
    np.testing.assert_allclose(z32, want, rtol=1e-5, atol=1e-6)
    ints = g.integers(-7, 1000, 3, dtype=clnp.int16).to_numpy()   # 2 values per block
    w = sum(ref_words(key, 2 ** 64 + 3, 2), [])
    want = [-7 + (((w[2 * i] << 32 | w[2 * i + 1]) * 1007) >> 64) for i in range(3)]
    assert ints.tolist() == want
    big = g.integers(-2 ** 40, 2 ** 41, 2).to_numpy()              # 1 value per block
    blk = ref_words(key, 2 ** 64 + 5, 2)
    span = 2 ** 41 + 2 ** 40
    want = [-2 ** 40 + (((b[0] << 96 | b[1] << 64 | b[2] << 32 | b[3]) * span) >> 128)
            for b in blk]
    assert big.tolist() == want
    full = g.integers(0, 2 ** 64 - 1, 1, dtype=clnp.uint64, endpoint=True).to_numpy()
    b = ref_words(key, 2 ** 64 + 7, 1)[0]
    assert full.tolist() == [b[0] << 32 | b[1]]
    assert bg.state["state"]["counter"] == 2 ** 64 + 8
    bg2 = Philox(key=0x0123456789ABCDEF, counter=12345)
    for span in (2 ** 64 - 1, 2 ** 63 + 12345, 2 ** 32 + 1):
        x = Generator(bg2, device=device).integers(0, span, 64, dtype=clnp.uint64).to_numpy()
        blk = ref_words(key, bg2.state["state"]["counter"] - 64, 64)
        want = [((b[0] << 96 | b[1] << 64 | b[2] << 32 | b[3]) * span) >> 128 for b in blk]
        assert x.tolist() == want, span
    if device.has_fp64:
        u64 = g.random(3, dtype=clnp.float64).to_numpy()
        blk = sum(ref_words(key, 2 ** 64 + 8, 2), [])
        want = [((blk[2 * i] << 32 | blk[2 * i + 1]) >> 11) * 2.0 ** -53 for i in range(3)]
        assert u64.tolist() == want


def test_normal_exponential_accuracy(device):
    """The in-kernel logarithm and sin/cos polynomials against float64 NumPy on the same
    words, over 512 blocks of each distribution (both halves of the exponential's word range,
    every quadrant of the angle)."""
    nb, u64 = 512, np.uint64
    for d in _float_dtypes(device):
        g = Generator(Philox(key=0x0123456789ABCDEF), device=device)
        k = g.bit_generator._key
        per = 4 if d == clnp.float32 else 2
        z = g.standard_normal(nb * per, dtype=d).to_numpy().astype(np.float64)
        e = g.standard_exponential(nb * per, dtype=d).to_numpy().astype(np.float64)
        w = np.array(ref_words(k, 0, nb), dtype=u64)
        w2 = np.array(ref_words(k, nb, nb), dtype=u64)
        if d == clnp.float32:
            a, b = w[:, 0::2].ravel(), w[:, 1::2].ravel()
            r = np.sqrt(-2 * np.log((a + 0.5) * 2.0 ** -32))
            t = np.pi * (b >> u64(8)) * 2.0 ** -23
            x = w2.ravel()
            lo, hi = (x + 0.5) * 2.0 ** -32, ((u64(M32) - x) + 0.5) * 2.0 ** -32
            half = 2 ** 31
        else:
            a, b = (w[:, 0] << u64(32)) | w[:, 1], (w[:, 2] << u64(32)) | w[:, 3]
            r = np.sqrt(-2 * np.log(((a >> u64(11)).astype(np.float64) + 0.5) * 2.0 ** -53))
            t = np.pi * (b >> u64(11)).astype(np.float64) * 2.0 ** -52
            x = np.stack([(w2[:, 0] << u64(32)) | w2[:, 1],
                          (w2[:, 2] << u64(32)) | w2[:, 3]], 1).ravel()
            lo = ((x >> u64(11)).astype(np.float64) + 0.5) * 2.0 ** -53
            hi = (((~x) >> u64(11)).astype(np.float64) + 0.5) * 2.0 ** -53
            half = 2 ** 63
        zr = np.stack([r * np.cos(t), r * np.sin(t)], 1).ravel()
        er = np.where(x < half, -np.log1p(-lo), -np.log(hi))
        assert np.any(x < half) and np.any(x >= half)
        eps = float(np.finfo(d).eps)
        np.testing.assert_allclose(z, zr, rtol=8 * eps, atol=64 * eps)
        np.testing.assert_allclose(e, er, rtol=8 * eps)


# ------------------------------------------------------------------ reproducibility
def test_reproducible_and_distinct_streams(device):
    a = default_rng(42, device=device).random(1000, dtype=clnp.float32).to_numpy()
    b = default_rng(42, device=device).random(1000, dtype=clnp.float32).to_numpy()
    c = default_rng(43, device=device).random(1000, dtype=clnp.float32).to_numpy()
    assert np.array_equal(a, b)
    assert np.mean(a == c) < 0.01
    g = default_rng([1, 2, 3], device=device)
    s1, s2 = g.spawn(2)
    x1 = s1.random(1000, dtype=clnp.float32).to_numpy()
    x2 = s2.random(1000, dtype=clnp.float32).to_numpy()
    x3 = g.random(1000, dtype=clnp.float32).to_numpy()
    assert s1.device is device
    assert np.mean(x1 == x2) < 0.01 and np.mean(x1 == x3) < 0.01
    # successive calls continue the stream: 4 float32 values per block
    g = default_rng(7, device=device)
    whole = g.random(16, dtype=clnp.float32).to_numpy()
    g = default_rng(7, device=device)
    parts = [g.random(n, dtype=clnp.float32).to_numpy() for n in (4, 8, 4)]
    assert np.array_equal(whole, np.concatenate(parts))
    assert len(np.unique(whole)) == 16
    # a partial block is not reused by the next call
    g = default_rng(7, device=device)
    first = g.random(3, dtype=clnp.float32).to_numpy()
    second = g.random(4, dtype=clnp.float32).to_numpy()
    assert np.array_equal(first, whole[:3]) and np.array_equal(second, whole[4:8])


def test_state_roundtrip_jumped(device):
    g = default_rng(5, device=device)
    g.integers(0, 10, 5)
    st = g.bit_generator.state
    assert st["bit_generator"] == "Philox4x32" and st["state"]["counter"] == 3
    x = g.integers(0, 2 ** 40, 20).to_numpy()
    g.bit_generator.state = st
    assert np.array_equal(g.integers(0, 2 ** 40, 20).to_numpy(), x)
    h = Generator(g.bit_generator.jumped(), device=device)
    assert h.bit_generator.state["state"]["counter"] == 23 + 2 ** 64   # 2**40: 1 per block
    assert not np.array_equal(h.integers(0, 2 ** 40, 20).to_numpy(), x)
    with pytest.raises(ValueError):
        g.bit_generator.state = {"bit_generator": "PCG64", "state": {}}
    assert default_rng(g) is g
    assert default_rng(Philox(5), device=device).integers(0, 10, 5).tolist() == \
        default_rng(5, device=device).integers(0, 10, 5).tolist()


# ------------------------------------------------------------------ statistics
def ks_distance(sample: np.ndarray, cdf) -> float:
    x = np.sort(sample.astype(np.float64))
    n = len(x)
    f = cdf(x)
    i = np.arange(1, n + 1)
    return float(max(np.max(i / n - f), np.max(f - (i - 1) / n)))


_erf = np.vectorize(math.erf)


def _normal_cdf(x):
    return 0.5 * (1 + _erf(x / math.sqrt(2)))


def _float_dtypes(device):
    return [d for d in (clnp.float32, clnp.float64) if device.supports(d)]


def test_moments_and_ks(device):
    n = 10 ** 6
    se = 1 / math.sqrt(n)
    for d in _float_dtypes(device):
        g = default_rng(2024, device=device)
        u = g.random(n, dtype=d).to_numpy()
        assert u.dtype == d and u.min() >= 0 and u.max() < 1
        assert abs(u.mean() - 0.5) < 5 * se * math.sqrt(1 / 12)
        assert abs(u.var() - 1 / 12) < 5 * se * math.sqrt(1 / 180)
        assert ks_distance(u[:200_000], lambda x: x) < 1.95 / math.sqrt(200_000)
        z = g.standard_normal(n, dtype=d).to_numpy()
        assert abs(z.mean()) < 5 * se and abs(z.var() - 1) < 5 * se * math.sqrt(2)
        assert abs(np.mean(z ** 4) - 3) < 5 * se * math.sqrt(96)
        assert ks_distance(z[:200_000], _normal_cdf) < 1.95 / math.sqrt(200_000)
        # the tails are populated (P(|z| > 4) = 6.3e-5: ~63 expected)
        assert 30 < np.sum(np.abs(z) > 4) < 110
        e = g.standard_exponential(n, dtype=d).to_numpy()
        assert e.min() >= 0 and abs(e.mean() - 1) < 5 * se and abs(e.var() - 1) < 5 * se * 3
        assert ks_distance(e[:200_000], lambda x: -np.expm1(-x)) < 1.95 / math.sqrt(200_000)


def test_integers_chi_square_and_range(device):
    g = default_rng(99, device=device)
    x = g.integers(0, 10, 10 ** 6).to_numpy()
    assert x.dtype == np.int64
    counts = np.bincount(x, minlength=10)
    chi2 = float(np.sum((counts - 1e5) ** 2 / 1e5))
    assert len(counts) == 10 and chi2 < 27.9   # 9 degrees of freedom, 0.1% level
    y = g.integers(3, 6, 10 ** 5, dtype=clnp.int8).to_numpy()
    assert y.dtype == np.int8 and set(np.unique(y)) == {3, 4, 5}
    y = g.integers(3, 6, 10 ** 5, dtype=clnp.int8, endpoint=True).to_numpy()
    assert set(np.unique(y)) == {3, 4, 5, 6}
    y = g.integers(-128, 127, 10 ** 5, dtype=clnp.int8, endpoint=True).to_numpy()
    assert y.min() == -128 and y.max() == 127
    # a range above 2**63: the top half must be hit about half of the time
    y = g.integers(0, 2 ** 64 - 1, 10 ** 4, dtype=clnp.uint64, endpoint=True).to_numpy()
    assert 0.45 < np.mean(y >= 2 ** 63) < 0.55
    y = g.integers(-2 ** 63, 2 ** 63, 10 ** 4).to_numpy()
    assert 0.45 < np.mean(y < 0) < 0.55
    b = g.integers(2, size=1000, dtype=bool).to_numpy()
    assert b.dtype == np.bool_ and 400 < b.sum() < 600
    assert int(g.integers(5, 6, 10).to_numpy().max()) == 5


def test_parameterised_distributions(device):
    d = _float_dtypes(device)[-1]
    g = default_rng(11, device=device)
    x = g.normal(3.0, 2.0, 100_000, dtype=d).to_numpy()
    assert abs(x.mean() - 3) < 0.03 and abs(x.std() - 2) < 0.03
    x = g.uniform(-2, 5, (200, 500), dtype=d).to_numpy()
    assert x.shape == (200, 500) and x.min() >= -2 and x.max() < 5
    assert abs(x.mean() - 1.5) < 0.03
    x = g.exponential(0.5, 100_000, dtype=d).to_numpy()
    assert abs(x.mean() - 0.5) < 0.01
    # array parameters broadcast (size=None: the broadcast shape)
    loc = clnp.asarray([0.0, 100.0, -100.0], dtype=d, device=device)
    x = g.normal(loc, 0.1).to_numpy()
    assert x.shape == (3,) and np.all(np.abs(x - [0, 100, -100]) < 1)
    x = g.normal(loc, clnp.asarray([[1.0], [0.0]], dtype=d, device=device), size=(2, 3))
    assert x.shape == (2, 3) and np.array_equal(x.to_numpy()[1], [0, 100, -100])
    x = g.uniform(loc, loc + 1, (4, 3)).to_numpy()
    assert np.all((x >= [0, 100, -100]) & (x < [1, 101, -99]))


def test_shapes_and_dtypes(device):
    g = default_rng(0, device=device)
    assert g.random().shape == () and g.random(5).shape == (5,)
    assert g.random((2, 3)).shape == (2, 3) and g.random((0, 3)).shape == (0, 3)
    assert g.random(np.int64(4)).shape == (4,)
    assert g.random().dtype == device.default_float
    assert g.random(3).device is device
    for d in _float_dtypes(device):
        for f in (g.random, g.standard_normal, g.standard_exponential):
            assert f(3, dtype=d).dtype == d
    assert g.integers(10).shape == () and g.integers(10).dtype == clnp.int64
    for d in (clnp.int8, clnp.uint16, clnp.int32, clnp.uint32, clnp.uint64):
        y = g.integers(0, 100, (2, 2), dtype=d)
        assert y.dtype == d and y.shape == (2, 2)
    before = g.bit_generator.state
    assert g.random(0).shape == (0,) and g.bit_generator.state == before
    assert len(g.bytes(10)) == 10 and isinstance(g.bytes(3), bytes)


def test_choice(device):
    g = default_rng(3, device=device)
    s = g.choice(1000, 1000, replace=False).to_numpy()
    assert sorted(s.tolist()) == list(range(1000))
    s = g.choice(50, (4, 5), replace=False).to_numpy()
    assert s.shape == (4, 5) and len(np.unique(s)) == 20 and s.max() < 50
    a = clnp.asarray(np.arange(40.0).reshape(10, 4), device=device)
    c = g.choice(a, 3, replace=False, axis=1).to_numpy()
    assert c.shape == (10, 3) and len(set(c[0].tolist())) == 3
    assert np.array_equal(c, np.arange(40.0).reshape(10, 4)[:, c[0].astype(int)])
    c = g.choice(a, (2, 2)).to_numpy()
    assert c.shape == (2, 2, 4) and np.all(c % 4 == 0 + np.arange(4))
    assert g.choice([5, 6, 7]).shape == ()
    # with probabilities: frequencies follow p, zero-probability entries never appear
    p = [0.1, 0.0, 0.2, 0.3, 0.4, 0.0]
    x = g.choice(6, 100_000, p=p).to_numpy()
    counts = np.bincount(x, minlength=6)
    assert counts[1] == 0 and counts[5] == 0
    exp = np.array(p) * 1e5
    nz = exp > 0
    assert np.sum((counts[nz] - exp[nz]) ** 2 / exp[nz]) < 16.3   # 3 d.o.f., 0.1%
    pd = clnp.asarray(np.array(p, np.float32), device=device)
    x = g.choice(6, 1000, p=pd).to_numpy()
    assert set(np.unique(x)) <= {0, 2, 3, 4}
    # without replacement, weighted: distinct, and heavy items come first more often
    x = g.choice(6, 4, replace=False, p=p).to_numpy()
    assert sorted(x.tolist()) == [0, 2, 3, 4]
    firsts = np.array([int(g.choice(4, 1, replace=False, p=[0.7, 0.1, 0.1, 0.1])[0])
                       for _ in range(60)])
    assert np.mean(firsts == 0) > 0.45


def test_permutation_and_shuffle(device):
    g = default_rng(8, device=device)
    p = g.permutation(1000).to_numpy()
    assert p.dtype == np.int64 and sorted(p.tolist()) == list(range(1000))
    assert not np.array_equal(p, np.arange(1000))
    host = np.arange(24).reshape(4, 6)
    x = clnp.asarray(host, device=device)
    y = g.permutation(x, axis=1).to_numpy()
    # every row moved by the same column permutation
    assert sorted(y[0].tolist()) == list(range(6)) and np.all(y - y[:1] == host - host[:1])
    assert np.array_equal(x.to_numpy(), host)   # permutation copies
    g.shuffle(x)
    s = x.to_numpy()
    assert sorted(s[:, 0].tolist()) == [0, 6, 12, 18] and np.all(s - s[:, :1] == host[0])
    z = clnp.asarray(np.arange(20.0), device=device)
    v = z[5:15]
    g.shuffle(v)
    out = z.to_numpy()
    assert np.array_equal(out[:5], np.arange(5)) and np.array_equal(out[15:], np.arange(15, 20))
    assert sorted(out[5:15].tolist()) == list(range(5, 15))
    assert not np.array_equal(out[5:15], np.arange(5, 15))


def test_errors(device):
    g = default_rng(0, device=device)
    before = g.bit_generator.state
    with pytest.raises(ValueError):
        g.random(-1)
    with pytest.raises(TypeError):
        g.random(1.5)
    with pytest.raises(TypeError):
        g.random(3, dtype=clnp.int32)
    with pytest.raises(ValueError, match="low >= high"):
        g.integers(5, 5)
    with pytest.raises(ValueError):
        g.integers(5, 4, endpoint=True)
    with pytest.raises(ValueError, match="out of bounds"):
        g.integers(0, 300, dtype=clnp.uint8)
    with pytest.raises(ValueError, match="out of bounds"):
        g.integers(-1, 3, dtype=clnp.uint8)
    with pytest.raises(TypeError):
        g.integers(0, 3, dtype=clnp.float32)
    with pytest.raises(TypeError):
        g.integers(0.5, 3)
    with pytest.raises(ValueError, match="scale < 0"):
        g.normal(0, -1, 3)
    with pytest.raises(ValueError, match="sum to 1"):
        g.choice(3, 2, p=[0.5, 0.2, 0.2])
    with pytest.raises(ValueError, match="sum to 1"):
        g.choice(3, 2, p=clnp.asarray([0.5, 0.2, 0.2], device=device))
    with pytest.raises(ValueError, match="non-negative"):
        g.choice(3, 2, p=[1.5, -0.5, 0.0])
    with pytest.raises(ValueError, match="same size"):
        g.choice(3, 2, p=[0.5, 0.5])
    with pytest.raises(ValueError, match="larger sample"):
        g.choice(3, 4, replace=False)
    with pytest.raises(ValueError, match="non-zero"):
        g.choice(3, 3, replace=False, p=[0.5, 0.5, 0.0])
    with pytest.raises(ValueError):
        g.choice(0, 2)
    with pytest.raises(TypeError):
        g.shuffle(np.arange(3))
    with pytest.raises(ValueError):
        g.shuffle(clnp.asarray(1.0, device=device))
    with pytest.raises(IndexError):
        g.permutation(clnp.asarray([1, 2], device=device), axis=1)
    assert g.bit_generator.state == before   # rejected calls consume nothing


def test_float64_needs_fp64(device, monkeypatch):
    monkeypatch.setattr(device, "has_fp64", False)
    g = default_rng(0, device=device)
    with pytest.raises(clnp.UnsupportedDtypeError, match="float64"):
        g.random(3, dtype=clnp.float64)
    with pytest.raises(clnp.UnsupportedDtypeError):
        g.standard_normal(3, dtype="float64")
    assert g.random(3).dtype == clnp.float32   # the device's default float


def test_legacy_functions(device):
    old = clnp.default_device()
    clnp.set_default_device(device)
    try:
        clnp.random.seed(123)
        a = clnp.random.rand(2, 3).to_numpy()
        st = clnp.random.get_state()
        b = clnp.random.randn(4)
        clnp.random.seed(123)
        assert np.array_equal(clnp.random.random_sample((2, 3)).to_numpy(), a)
        assert np.array_equal(clnp.random.standard_normal(4).to_numpy(), b.to_numpy())
        clnp.random.set_state(st)
        assert np.array_equal(clnp.random.randn(4).to_numpy(), b.to_numpy())
        assert a.shape == (2, 3) and b.shape == (4,) and b.device is device
        r = clnp.random.randint(3, 7, size=100).to_numpy()
        assert r.min() >= 3 and r.max() <= 6
        assert clnp.random.random().shape == ()
        assert clnp.random.normal(1.0, 0.0, 3).tolist() == [1.0, 1.0, 1.0]
        assert clnp.random.uniform(size=2).shape == (2,)
        assert sorted(clnp.random.permutation(5).tolist()) == [0, 1, 2, 3, 4]
        assert clnp.random.choice(5, 3, replace=False).shape == (3,)
        x = clnp.arange(10, device=device)
        clnp.random.shuffle(x)
        assert sorted(x.tolist()) == list(range(10))
    finally:
        clnp.set_default_device(old)
