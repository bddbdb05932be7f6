"""Every GEMM kernel shape the autotuner can pick, the tuning cache, the matmul precision API
and the tensor-core (inline PTX) kernels: rendering and dispatch everywhere, results on
devices that have them."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

import clnp
from clnp import _autotune as tuner
from clnp import _eager_linalg as linalg
from clnp._codegen.mma import MmaSpec, render_mma

F16, F32 = np.dtype(np.float16), np.dtype(np.float32)


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
    for key in ("float16", "tf32"):
        cands = tuner.candidates(device, key, kind="gpu")
        assert cands and all(c["kind"] == "mma" for c in cands)
        if not linalg.tensor_cores(device):
            assert tuner.candidates(device, key) == []


def test_cache_roundtrip(device, tmp_path, monkeypatch):
    """A tuning run writes a per-(device, driver) file under CLNP_CACHE_DIR that later
    lookups (and later processes) read; a corrupt file is ignored."""
    monkeypatch.setenv("CLNP_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(tuner, "_loaded", {})
    monkeypatch.setattr(tuner, "candidates",
                        lambda dev, key, kind=None: [linalg.default_config(dev, key)])
    res = tuner.autotune(device, ["float32"], n=48)
    assert res == {"float32": linalg.default_config(device, "float32")}
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
    assert linalg.config_key(F16) == "float16"
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
    x16 = clnp.ones((4, 4), dtype=clnp.float16, device=device)
    x32 = clnp.ones((4, 4), dtype=clnp.float32, device=device)
    tc = linalg.tensor_cores(device)
    r = x16 @ x16
    assert r.dtype == clnp.float16 and np.all(r.to_numpy() == 4)
    with clnp.matmul_precision("tf32"):
        x32 @ x32
    x32 @ x32
    assert seen == [(F16 if tc else F32, False), (F32, tc), (F32, False)]


_ASM = re.compile(r'asm(?: volatile)?\("[^"]*" :[^;]*\);')


@pytest.mark.parametrize("key", ["float16", "tf32"])
def test_mma_render(device, key):
    """The tensor-core sources: the right PTX, and (with the PTX statements stubbed out, as
    no other compiler takes them) valid OpenCL C for every shape the tuner tries."""
    dtype = F16 if key == "float16" else F32
    for cfg in tuner.candidates(device, key, kind="gpu"):
        geo = {k: v for k, v in cfg.items() if k != "kind"}
        for out in ((F16, F32) if key == "float16" else (F32,)):
            spec = MmaSpec(dtype, out, **geo)
            src, name, argtypes = render_mma(spec)
            assert len(argtypes) == 7 + 3 * 6 + 1
            if key == "float16":
                assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in src
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


@pytest.mark.parametrize("key", ["float16", "tf32"])
def test_tensor_cores(device, rng, key):
    """Every tensor-core shape the tuner tries, on every layout (NVIDIA, cc >= 8.0 only)."""
    if not linalg.tensor_cores(device):
        pytest.skip("no tensor cores")
    dtype = F16 if key == "float16" else F32
    # float16: exact products, float32 sums, a float16 result; TF32: 11-bit operands
    tol = 2e-3 if key == "float16" else 1e-3
    for cfg in tuner.candidates(device, key):
        with tuner.use_config(device, key, cfg), clnp.matmul_precision("tf32"):
            _check_all(_layouts(rng, dtype, device), tol)


def test_gpu_tile_shape_checked():
    from clnp._codegen.gemm import GemmSpec, render_gemm
    with pytest.raises(ValueError, match="GEMM tile shape"):
        render_gemm(GemmSpec(F32, "gpu", tm=3, tn=4, vec=4, bk=8))
