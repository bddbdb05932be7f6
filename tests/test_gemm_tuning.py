"""Every GEMM kernel shape the autotuner can pick, the tuning cache, the matmul precision API
and the tensor-core (inline PTX) kernels: rendering and dispatch everywhere, results on
devices that have them."""
from __future__ import annotations

import json
import re
import threading

import numpy as np
import pytest

import clnp
from clnp._routines import autotune as tuner
from clnp._routines import dot_general as linalg
from clnp._kernels.mma import MmaSpec, render_mma

F16, F32 = np.dtype(np.float16), np.dtype(np.float32)
BF16 = clnp.bfloat16 if isinstance(clnp.bfloat16, np.dtype) else np.dtype(clnp.bfloat16)
_MMA_DTYPE = {"float16": F16, "bfloat16": BF16, "tf32": F32}


def _data(rng, shape, dtype):
    dtype = np.dtype(dtype)
    x = rng.standard_normal(shape)
    if dtype.kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _layouts(rng, dtype, device):
    """(clnp result, exact product, K) for operands covering the kernels' branches: edges
    off the tiles, transposed (column-major) operands read in place, a broadcast batch, a
    matrix times a vector, split-K, K not a multiple of any vector width."""
    cases = []
    h = _data(rng, (70, 37), dtype)
    g = _data(rng, (37, 130), dtype)
    x, y = clnp.asarray(h, device=device), clnp.asarray(g, device=device)
    cases.append((x @ y, h, g))
    cases.append((y.T @ x.T, g.T, h.T))
    cases.append((x @ clnp.asarray(g.T.copy(), device=device).T, h, g))
    a3 = _data(rng, (3, 1, 9, 24), dtype)
    b3 = _data(rng, (2, 24, 33), dtype)
    cases.append((clnp.asarray(a3, device=device) @ clnp.asarray(b3, device=device), a3, b3))
    v = _data(rng, (37,), dtype)
    cases.append((x @ clnp.asarray(v, device=device), h, v))
    long_a, long_b = _data(rng, (6, 2100), dtype), _data(rng, (2100, 5), dtype)
    cases.append((clnp.asarray(long_a, device=device) @ clnp.asarray(long_b, device=device),
                   long_a, long_b))
    wide = _data(rng, (32, 64), dtype)
    w = clnp.asarray(wide, device=device)
    cases.append((w @ w.T, wide, wide.T))                    # aligned, B contiguous along K
    cases.append((w[:, 8:40] @ w[:, 8:40].T, wide[:, 8:40], wide[:, 8:40].T))
    # both operands contiguous along a K shorter than two vectors (the CPU kernel's panel
    # loop instead of its dot products), ragged M and N
    for k in (1, 10, 31):
        p, q = _data(rng, (70, k), dtype), _data(rng, (130, k), dtype)
        cases.append((clnp.asarray(p, device=device) @ clnp.asarray(q, device=device).T,
                      p, q.T))
    # a small A times a B over 2 MiB (CPUs: computed as C^T = B^T A^T), alone and batched
    # with A broadcast
    sa, sb = _data(rng, (9, 130), dtype), _data(rng, (2, 130, 4200), dtype)
    a_, b_ = clnp.asarray(sa, device=device), clnp.asarray(sb, device=device)
    cases.append((a_ @ b_[1], sa, sb[1]))
    cases.append((a_ @ b_, np.broadcast_to(sa, (2, 9, 130)), sb))
    return cases


def _check_all(cases, tol):
    for r, a, b in cases:
        hi = np.complex128 if np.iscomplexobj(a) else np.float64
        want = np.matmul(a.astype(hi), b.astype(hi))
        got = r.to_numpy().astype(hi)
        assert got.shape == want.shape
        scale = np.sqrt(a.shape[-1]) * max(1.0, float(np.abs(want).max()))
        assert np.abs(got - want).max() <= tol * scale, (got.shape, a.shape, b.shape)


def _tol(dtype):
    return 1e-5 if np.dtype(dtype) in (F32, np.dtype(np.complex64)) else 1e-12


@pytest.mark.parametrize("kind", ["cpu", "gpu"])
def test_every_float32_candidate(device, rng, kind):
    """Each float32 shape the tuner tries (CPU register-blocked and GPU local-memory kinds,
    whatever the device) computes every layout correctly."""
    for cfg in tuner.candidates(device, "float32", kind=kind):
        with tuner.use_config(device, "float32", cfg):
            _check_all(_layouts(rng, "float32", device), _tol("float32"))


@pytest.mark.parametrize("dtype", ["float64", "complex64", "complex128"])
@pytest.mark.parametrize("kind", ["cpu", "gpu"])
def test_other_dtypes_default_and_extreme(device, rng, kind, dtype):
    """The default and the last (most different) candidate of the other float dtypes."""
    if not device.supports(np.dtype(dtype)):
        pytest.skip("no fp64")
    cands = tuner.candidates(device, dtype, kind=kind)
    for cfg in (cands[0], cands[-1]):
        with tuner.use_config(device, dtype, cfg):
            _check_all(_layouts(rng, dtype, device), _tol(dtype))


def test_candidate_lists_are_small(device):
    for key in ("float32", "float64", "complex64", "complex128"):
        for kind in ("cpu", "gpu"):
            assert 1 <= len(tuner.candidates(device, key, kind=kind)) <= 10
            assert 1 <= len(tuner.candidates(device, key + ":small", kind=kind)) <= 10
    for key in ("float16", "tf32", "float16:small", "tf32:small"):
        cands = tuner.candidates(device, key, kind="gpu")
        assert 1 <= len(cands) <= 10 and all(c["kind"] == "mma" for c in cands)
        if not linalg.tensor_cores(device):
            assert tuner.candidates(device, key) == []
    # small products also try the big shape with K split
    small = tuner.candidates(device, "float32:small", kind="gpu")
    assert {c.get("split") for c in small} >= {None, 2, 4}
    big = linalg.default_config(device, "float32", "gpu")
    assert all(_tile(c) <= _tile(big) for c in small if "split" not in c)


def test_cache_roundtrip(device, tmp_path, monkeypatch):
    """A tuning run writes a per-(device, driver) file under CLNP_CACHE_DIR that later
    lookups (and later processes) read; a corrupt file is ignored."""
    monkeypatch.setenv("CLNP_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(tuner, "_loaded", {})
    monkeypatch.setattr(tuner, "candidates",
                        lambda dev, key, kind=None: [linalg.default_config(dev, key)])
    res = tuner.autotune(device, ["float32"], n=48)
    want = {"float32": linalg.default_config(device, "float32")}
    if not device.is_cpu:             # GPUs tune small products too
        want["float32:small"] = linalg.default_config(device, "float32:small")
    assert res == want
    path = tuner.cache_path(device)
    assert path.parent == tmp_path
    data = json.loads(path.read_text())
    assert data["device"] == tuner.device_id(device) and data["configs"] == res
    monkeypatch.setattr(tuner, "_loaded", {})
    assert tuner.lookup(device, "float32") == res["float32"]
    assert linalg.gemm_config(device, F32) == res["float32"]
    path.write_text("{not json")
    monkeypatch.setattr(tuner, "_loaded", {})
    # an unreadable cache falls back to the built-in table (None for unlisted devices)
    assert tuner.lookup(device, "float32") == tuner.BUILTIN.get(device.name, {}).get("float32")


def test_cache_dir_env(monkeypatch, tmp_path):
    monkeypatch.delenv("CLNP_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert tuner.cache_dir() == tmp_path / "clnp"
    monkeypatch.setenv("CLNP_CACHE_DIR", str(tmp_path / "x"))
    assert tuner.cache_dir() == tmp_path / "x"


def test_tuner_rejects_wrong_kernels(device, monkeypatch):
    """A candidate whose results are wrong is never chosen, however fast."""
    good = linalg.default_config(device, "float32")
    bad = dict(good, broken=True)
    monkeypatch.setattr(tuner, "candidates", lambda dev, key, kind=None: [good, bad])
    real = tuner._time_config

    def timed(dev, key, cfg, a, reps):
        t, r = real(dev, key, good, a, reps)
        return (t / 100, r + 1) if cfg.get("broken") else (t, r)
    monkeypatch.setattr(tuner, "_time_config", timed)
    best, _ = tuner.tune(device, "float32", n=32, reps=1)
    assert best == good


def test_precision_api():
    assert clnp.get_matmul_precision() == "highest"
    with clnp.matmul_precision("tf32"):
        assert clnp.get_matmul_precision() == "tf32"
        with clnp.matmul_precision("float32"):
            assert clnp.get_matmul_precision() == "highest"
        assert clnp.get_matmul_precision() == "tf32"
    assert clnp.get_matmul_precision() == "highest"
    clnp.set_matmul_precision("tensorfloat32")
    try:
        assert clnp.get_matmul_precision() == "tf32"
    finally:
        clnp.set_matmul_precision("highest")
    for bad in ("bf16", "TF32x", 3, None):
        with pytest.raises(ValueError, match="matmul precision"):
            clnp.set_matmul_precision(bad)
        with pytest.raises(ValueError, match="matmul precision"):
            with clnp.matmul_precision(bad):
                pass
    assert clnp.get_matmul_precision() == "highest"


def test_tf32_is_exact_without_tensor_cores(device, rng):
    """TF32 is an allowance: devices without tensor cores keep NumPy's float32 products."""
    if linalg.tensor_cores(device):
        pytest.skip("tensor cores round to TF32")
    a, b = _data(rng, (20, 30), "float32"), _data(rng, (30, 10), "float32")
    x, y = clnp.asarray(a, device=device), clnp.asarray(b, device=device)
    exact = (x @ y).to_numpy()
    with clnp.matmul_precision("tf32"):
        assert np.array_equal((x @ y).to_numpy(), exact)


def test_dispatch(device, monkeypatch):
    """Which kernel a product takes: tensor cores only where the device has them, for
    float16 always, for float32 only at TF32 precision."""
    assert linalg.config_key(F32) == "float32" and linalg.config_key(F32, True) == "tf32"
    assert linalg.config_key(F16) == "float16" and linalg.config_key(BF16) == "float16"
    assert linalg.gemm_config(device, F32, tf32=True)["kind"] == "mma"
    assert linalg.gemm_config(device, F16)["kind"] == "mma"
    assert linalg.gemm_config(device, F32)["kind"] in ("cpu", "gpu")
    if device.vendor_key != "nvidia":
        assert not linalg.tensor_cores(device)
    seen = []
    real = linalg._run

    def spy(lhs, rhs, out_shape, out_dtype, tf32, *plan):
        seen.append((lhs.dtype, tf32))
        return real(lhs, rhs, out_shape, out_dtype, tf32, *plan)
    monkeypatch.setattr(linalg, "_run", spy)
    monkeypatch.setattr(linalg, "_local", threading.local())      # nothing planned yet
    x16 = clnp.ones((4, 4), dtype=clnp.float16, device=device)
    xbf = clnp.ones((4, 4), dtype=clnp.bfloat16, device=device)
    x32 = clnp.ones((4, 4), dtype=clnp.float32, device=device)
    tc = linalg.tensor_cores(device)
    r = x16 @ x16
    assert r.dtype == clnp.float16 and np.all(r.to_numpy() == 4)
    r = xbf @ xbf
    assert r.dtype == clnp.bfloat16 and np.all(r.to_numpy().astype(np.float32) == 4)
    with clnp.matmul_precision("tf32"):
        x32 @ x32
    x32 @ x32
    assert seen == [(F16 if tc else F32, False), (BF16 if tc else F32, False), (F32, tc),
                    (F32, False)]


_ASM = re.compile(r'asm(?: volatile)?\("[^"]*" :[^;]*\);')


@pytest.mark.parametrize("key", ["float16", "bfloat16", "tf32"])
def test_mma_render(device, key):
    """The tensor-core sources: the right PTX, and (with the PTX statements stubbed out, as
    no other compiler takes them) valid OpenCL C for every shape the tuner tries (bfloat16
    products take float16's shapes)."""
    dtype = _MMA_DTYPE[key]
    shapes = linalg.config_key(dtype, key == "tf32")
    for cfg in tuner.candidates(device, shapes, kind="gpu") + \
            tuner.candidates(device, shapes + ":small", kind="gpu"):
        geo = {k: v for k, v in cfg.items() if k not in ("kind", "split")}
        for out in ((dtype, F32) if key != "tf32" else (F32,)):
            spec = MmaSpec(dtype, out, **geo)
            src, name, argtypes = render_mma(spec)
            assert len(argtypes) == 7 + 3 * 6 + 1
            if key != "tf32":
                t = "f16" if key == "float16" else "bf16"
                assert f"mma.sync.aligned.m16n8k16.row.col.f32.{t}.{t}.f32" in src
                assert "tf32" not in src
            else:
                assert "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32" in src
                assert "cvt.rna.tf32.f32" in src
            assert src.count("mma.sync") == (spec.wm // 16) * (spec.wn // 8) * \
                (spec.bk // spec.ks)
            assert f"reqd_work_group_size({spec.threads}, 1, 1)" in src
            if not linalg.tensor_cores(device) and out == F32:
                device.build(_ASM.sub("{}", src))
    with pytest.raises(ValueError, match="MMA tile"):
        render_mma(MmaSpec(F16, F32, bm=128, bn=128, bk=24, wm=64, wn=32))


@pytest.mark.parametrize("key", ["float16", "bfloat16", "tf32"])
def test_tensor_cores(device, rng, key):
    """Every tensor-core shape the tuner tries, on every layout (NVIDIA, cc >= 8.0 only)."""
    if not linalg.tensor_cores(device):
        pytest.skip("no tensor cores")
    dtype = _MMA_DTYPE[key]
    shapes = linalg.config_key(dtype, key == "tf32")
    # float16/bfloat16: exact products, float32 sums, a 16-bit result (bfloat16 keeps 8
    # significant bits); TF32: 11-bit operands
    tol = {"float16": 2e-3, "bfloat16": 8e-3, "tf32": 1e-3}[key]
    for cfg in tuner.candidates(device, shapes) + tuner.candidates(device, shapes + ":small"):
        with tuner.use_config(device, shapes, cfg), clnp.matmul_precision("tf32"):
            _check_all(_layouts(rng, dtype, device), tol)


def test_gpu_tile_shape_checked():
    from clnp._kernels.gemm import GemmSpec, render_gemm
    with pytest.raises(ValueError, match="GEMM tile shape"):
        render_gemm(GemmSpec(F32, "gpu", tm=3, tn=4, vec=4, bk=8))


def _c(expr: str, **env) -> int:
    """Value of a C integer expression of a generated kernel (casts dropped; the operators
    used there mean the same in Python for non-negative values)."""
    return eval(re.sub(r"\((?:uint|int)\)", "", expr), {}, env)


@pytest.mark.parametrize("key, geo", [
    ("float16", dict(bm=128, bn=128, bk=32, wm=64, wn=64, stages=3)),
    ("float16", dict(bm=64, bn=128, bk=16, wm=32, wn=64, stages=2)),
    ("float16", dict(bm=64, bn=64, bk=64, wm=32, wn=32, stages=2)),
    ("float16", dict(bm=128, bn=256, bk=32, wm=64, wn=32, stages=2)),
    ("tf32", dict(bm=128, bn=128, bk=16, wm=64, wn=32, stages=3)),
    ("tf32", dict(bm=64, bn=64, bk=32, wm=32, wn=32, stages=2)),
    ("tf32", dict(bm=64, bn=64, bk=8, wm=32, wn=32, stages=2))])
def test_mma_swizzle(key, geo):
    """Swizzled local tiles, read off the generated source: the copies (cp.async) place each
    16-byte chunk of a tile once, every fragment read (ldmatrix, TF32 B loads) finds the
    element the MMA layout wants there, and the 8 rows (32 lanes) read together hit distinct
    banks."""
    f16 = key == "float16"
    spec = MmaSpec(F16 if f16 else F32, F32, swz=True, **geo)
    src, _, _ = render_mma(spec)
    esz, lv, ks = spec.dtype.itemsize, spec.lv, spec.ks
    bm, bn, bk, wm, wn = spec.bm, spec.bn, spec.bk, spec.wm, spec.wn
    dst = re.findall(r'"r"\(s([ab]) \+ \(uint\)\(\(j \* \d+ \+ (.*?)\) \* \d+\)\), "l"', src)
    wa = {x for t, x in dst if t == "a"}
    wb = {x for t, x in dst if t == "b"}
    assert len(wa) == 1 and len(wb) == 1
    wa, wb = wa.pop(), wb.pop()
    where_a = {_c(wa, rr=r, kk=c * lv): (r, c * lv) for r in range(bm) for c in range(bk // lv)}
    where_b = {_c(wb, kk=k, rr=c * lv): (k, c * lv) for k in range(bk) for c in range(bn // lv)}
    assert len(where_a) == bm * bk // lv and len(where_b) == bk * bn // lv
    assert all(0 <= e < bm * bk and e % lv == 0 for e in where_a)
    assert all(0 <= e < bk * bn and e % lv == 0 for e in where_b)
    lane_consts = dict(re.findall(r"const (?:uint|int) (l[ab]\d+|bc\d+) = (.*);", src))
    loads = re.findall(r'"=r"\(([ab])(\d+)_(\d+)_0\)[^;]*"r"\((l[ab]\d+) \+ r[ab] \+ (\d+)\)',
                       src)
    tf32_b = re.findall(r"b(\d+)_(\d+)_(\d+) = clnp_tf32\(lb\[(\d+) \+ (bc\d+)\]\)", src)
    assert len(loads) == (bk // ks) * (wm // 16 + (wn // 16 if f16 else 0))
    assert len(tf32_b) == (0 if f16 else (bk // ks) * (wn // 8) * 2)
    for warp in range(spec.threads // 32):
        wm0, wn0 = (warp // (bn // wn)) * wm, (warp % (bn // wn)) * wn
        for ab, s, ij, base, off in loads:
            s, ij, off = int(s), int(ij), int(off)
            phases = [[], [], [], []]
            for lane in range(32):
                env = dict(lane=lane, wm0=wm0, wn0=wn0, sa=0, sb=0, arow=wm0 + (lane & 15))
                e = (_c(lane_consts[base], **env) + off) // esz
                if ab == "a":
                    want = (wm0 + (lane & 15) + 16 * ij, s * ks + (lane >> 4) * lv)
                    assert where_a[e] == want
                else:
                    want = (s * 16 + (lane & 15), wn0 + 8 * ij + (lane >> 4) * 8)
                    assert where_b[e] == want
                phases[lane // 8].append(e * esz // 16 % 8)
            assert all(len(set(p)) == 8 for p in phases)
        for s, j, q, off, bc in tf32_b:
            s, j, q = int(s), int(j), int(q)
            banks = []
            for lane in range(32):
                g, t = lane >> 2, lane & 3
                e = int(off) + t * bn + _c(lane_consts[bc], wn0=wn0, g=g, t=t)
                k, c = where_b[e - e % lv]
                assert (k, c + e % lv) == (s * ks + 4 * q + t, wn0 + 8 * j + g)
                banks.append(e % 32)
            assert len(set(banks)) == 32


def _tile(cfg) -> int:
    """Outputs per work-group of a local-memory kernel configuration."""
    return cfg["tm"] * cfg["ly"] * cfg["tn"] * cfg["lx"]


def test_small_products(device, rng, monkeypatch):
    """GPU products with fewer 128-square output tiles than compute units take the
    configuration of small products, whose "split" caps split-K; others the big one."""
    big = linalg.default_config(device, "float32", "gpu")
    small = dict(linalg.default_config(device, "float32:small", "gpu"), split=1)
    assert _tile(small) < _tile(big)
    specs = []
    real = device.kernel
    monkeypatch.setattr(device, "kernel", lambda key, make: specs.append(key) or
                        real(key, make))
    monkeypatch.setattr(linalg, "_local", threading.local())
    cu = device.compute_units
    with tuner.use_config(device, "float32", big), \
            tuner.use_config(device, "float32:small", small):
        for (m, k, n), is_small in (((128 * cu, 8, 8), False), ((5, 2100, 7), cu > 1)):
            a, b = _data(rng, (m, k), "float32"), _data(rng, (k, n), "float32")
            _check_all([(clnp.asarray(a, device=device) @ clnp.asarray(b, device=device),
                         a, b)], _tol("float32"))
            want = small if is_small else big
            assert _tile(specs[-1].__dict__) == _tile(want)
            plan = list(linalg._local.plans.values())[-1]
            assert plan.parts == 1 or not is_small
    with tuner.use_config(device, "float32", big):
        # a shape imposed for big products (tests, the tuner) serves small ones too
        a = _data(rng, (5, 9), "float32")
        x = clnp.asarray(a, device=device)
        _check_all([(x @ x.T, a, a.T)], _tol("float32"))
        assert _tile(specs[-1].__dict__) == _tile(big)


def test_planned_products(device, rng, monkeypatch):
    """A product's launch is planned once per operand geometry (offsets included) and
    replanned when the configuration may have changed."""
    h = _data(rng, (40, 33), "float32")
    x = clnp.asarray(h, device=device)
    # the configuration first (the tuning cache read, the defaults chosen): plans made while
    # it settles would be replanned, which is what the end of this test checks on purpose
    clnp.asnumpy(x @ x.T)
    monkeypatch.setattr(linalg, "_local", threading.local())
    for _ in range(2):
        _check_all([(x @ x.T, h, h.T), (x[1:] @ x.T, h[1:], h.T),
                    (x[1:] @ x[:-1].T, h[1:], h[:-1].T)], _tol("float32"))
    plans = linalg._local.plans
    assert len(plans) == 3
    with tuner.use_config(device, "float32", linalg.default_config(device, "float32")):
        _check_all([(x @ x.T, h, h.T)], _tol("float32"))
    assert len(plans) == 4
    y = clnp.asarray(h.astype(np.float64 if device.has_fp64 else np.float16), device=device)
    _check_all([(x @ y.T, h, h.T)], 1e-3)           # converted operands: not planned
    assert len(plans) == 4


def test_autotune_rejects_bad_keys_before_tuning(device):
    with pytest.raises(ValueError, match="cannot tune 'int8'"):
        clnp.autotune(device, ["float32", "int8"])
    with pytest.raises(ValueError, match="suffix"):
        clnp.autotune(device, ["float32:big"])
    with pytest.raises(TypeError, match="sequence of names"):
        clnp.autotune(device, "float32")


@pytest.mark.parametrize("key", ["float16", "tf32"])
def test_tensor_cores_copy_a_transposed_lhs(device, rng, key, monkeypatch):
    """A tensor-core product whose A is not K-contiguous (``a.T @ b``, batched, a sliced A)
    runs on a K-contiguous copy of A (NVIDIA, cc >= 8.0 only): same results as NumPy."""
    if not linalg.tensor_cores(device):
        pytest.skip("no tensor cores")
    monkeypatch.setattr(linalg, "_MMA_COPY_A", 1)
    dtype = F16 if key == "float16" else F32
    tol = 2e-3 if key == "float16" else 1e-3
    a = rng.standard_normal((3, 70, 40)).astype(dtype)
    b = rng.standard_normal((3, 70, 50)).astype(dtype)
    x, y = clnp.asarray(a, device=device), clnp.asarray(b, device=device)
    with clnp.matmul_precision("tf32"):
        got = [clnp.matmul(clnp.matrix_transpose(x), y), clnp.matrix_transpose(x[0]) @ y[1],
               clnp.matrix_transpose(x[:, ::2, :]) @ y[:, ::2, :]]
    want = [np.swapaxes(a, -1, -2).astype(np.float64) @ b, a[0].T.astype(np.float64) @ b[1],
            np.swapaxes(a[:, ::2], -1, -2).astype(np.float64) @ b[:, ::2]]
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g).astype(np.float64), w, rtol=tol,
                                   atol=tol * np.abs(w).max())


@pytest.mark.parametrize("dtype", ["int32", "int64", "float16", "float32", "float64",
                                   "complex64", "complex128"])
def test_cpu_column_stores(device, rng, dtype, monkeypatch):
    """Products whose kernel writes an output with unit stride along its M (on CPUs the
    swapped C^T = B^T A^T: a small A times a B over 2 MiB, a convolution's NCHW output, and
    a.T @ b.T) store it a column at a time: tiles ragged along both dims, fewer rows than a
    sub-tile, a batch with A broadcast, every computing dtype."""
    dt = np.dtype(dtype)
    if not device.supports(dt):
        pytest.skip(f"no {dtype}")
    monkeypatch.setattr(linalg, "_local", threading.local())

    def data(shape):
        if dt.kind == "i":
            return rng.integers(-9, 10, shape).astype(dt)
        return _data(rng, shape, dt)

    # 4100 columns: B spans 2.1 MB even in 4-byte dtypes
    sa, sb = data((13, 130)), data((2, 130, 4100))
    ta, tb = data((37, 70)), data((130, 37))
    na, nb = data((5, 21)), data((3, 5))
    cases = [(sa, sb, sa, sb), (ta, tb, ta.T, tb.T), (na, nb, na.T, nb.T)]
    for a, b, want_a, want_b in cases:
        x, y = clnp.asarray(a, device=device), clnp.asarray(b, device=device)
        got = (x @ y if a is sa else x.T @ y.T).to_numpy()
        hi = np.int64 if dt.kind == "i" else np.complex128 if dt.kind == "c" else np.float64
        want = np.matmul(want_a.astype(hi), want_b.astype(hi))
        assert got.dtype == dt and got.shape == want.shape
        if dt.kind == "i":
            np.testing.assert_array_equal(got, want.astype(dt))
        else:
            # float16: exact operands, float32 sums, one rounding to float16 at the end
            tol = 2e-3 if dt == F16 else _tol(dtype) * np.sqrt(want_a.shape[-1])
            scale = max(1.0, float(np.abs(want).max()))
            assert np.abs(got.astype(hi) - want).max() <= tol * scale, (dtype, want.shape)
    if device.is_cpu and dt != F16:
        # each product ran through the column stores: its kernel's C has scm == 1 (float16
        # operands are converted to float32 first, whose products are not planned)
        plans = list(linalg._local.plans.values())
        assert plans and all(p.swap and p.args[21] == 1 and p.args[22] != 1 for p in plans)
