"""Math builtins on the CPU vector path: accuracy at the device's own vector width.

Contiguous elementwise kernels compute on vectors as wide as the device prefers (64 bytes,
``float16``, where PoCL targets AVX-512; 32 bytes on AVX2), and ``sin``/``cos``/``tan`` test
each vector for huge lanes before calling the builtin (``clnp._kernels.elementwise``). These
tests hold that path to the OpenCL C specification's ulp bounds against NumPy in float64, over
ordinary, huge, tiny, subnormal and non-finite arguments, check that the kernel at the other
vector width gives the same bits, and that the fused ``jit`` kernel of a chain of these ops
agrees with NumPy wherever huge values sit in its vectors.
"""
from __future__ import annotations

import warnings

import numpy as np
import pyopencl as cl
import pytest

import clnp
import clnp_grad
from clnp._core.array import Array
from clnp._kernels.elementwise import EwSpec, Instr, Operand, render_elementwise
from clnp._core.eager import vector_bytes

F32 = np.dtype(np.float32)
# OpenCL C 3.0, 7.4 (full profile), float32 ulp bounds
ULP_BOUND = {"sin": 4, "cos": 4, "tan": 5, "exp": 3, "expm1": 3, "tanh": 5, "log": 3,
             "atan": 5, "sinh": 4}


def _arguments(rng: np.random.Generator, positive: bool = False) -> np.ndarray:
    """Uniform and log-uniform float32 values from subnormals to 3e38, plus the special ones,
    shuffled so that huge and non-finite values share vectors with ordinary ones."""
    mag = np.exp(rng.uniform(np.log(1e-38), np.log(3e38), 1 << 15))
    parts = [rng.uniform(-10, 10, 1 << 15), rng.uniform(-1e4, 1e4, 1 << 13), mag,
             rng.integers(1, 1 << 23, 1 << 10) * 2.0 ** -149,            # subnormals
             np.array([0.0, np.inf, np.nan, 3.4e38, 1e5, 1.0000001e5, 8388608.0, 1e30,
                       np.pi / 2, np.pi, 1e-45])]
    x = np.concatenate(parts)
    if not positive:
        x = np.concatenate([x, -x])
    return rng.permutation(x.astype(np.float32))


def _ulp_error(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """|got - ref| in units of the float32 spacing at ``ref`` (2^-149 below the normals)."""
    with np.errstate(all="ignore"):
        spacing = np.spacing(np.abs(ref.astype(np.float32))).astype(np.float64)
        return np.abs(got.astype(np.float64) - ref) / np.maximum(spacing, 2.0 ** -149)


def _denormals(device) -> bool:
    cfg = int(getattr(device.cl_device, "single_fp_config", 0))
    return bool(cfg & cl.device_fp_config.DENORM)


@pytest.mark.parametrize("name", sorted(ULP_BOUND))
def test_contiguous_float32_within_opencl_ulp(device, name):
    """The contiguous (vector) kernel of ``name`` is within OpenCL's ulp bound of the float64
    result everywhere the float32 result is finite, and NaN/inf exactly where NumPy's is."""
    x = _arguments(np.random.default_rng(29), positive=name == "log")
    got = getattr(clnp, name)(clnp.asarray(x, device=device)).to_numpy()
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        ref = getattr(np, name)(x.astype(np.float64))
        ref32 = ref.astype(np.float32)
    special = ~np.isfinite(ref32)
    assert np.array_equal(got[special], ref32[special], equal_nan=True), (
        f"{name}: {got[special][:4]} for {x[special][:4]}, NumPy {ref32[special][:4]}")
    check = ~special
    if not _denormals(device):
        # a device without denormals may flush subnormal arguments and results to zero
        tiny = np.finfo(np.float32).tiny
        check &= (np.abs(x) >= tiny) & (np.abs(ref) >= tiny)
    err = _ulp_error(got[check], ref[check])
    worst = int(np.argmax(err))
    assert err[worst] <= ULP_BOUND[name], (
        f"{name}({x[check][worst]!r}) = {got[check][worst]!r}, float64 {ref[check][worst]!r}: "
        f"{err[worst]:.2f} ulp > {ULP_BOUND[name]}")


def _run_contiguous(device, op: str, x: np.ndarray, vbytes: int) -> np.ndarray:
    """``op`` over ``x`` by the contiguous kernel with 16 elements per work-item computed in
    vectors of at most ``vbytes`` bytes (the CPU path, whatever the device)."""
    spec = EwSpec((Operand(F32),), (Instr(op, (0,), (F32,), F32, F32),), ((1, F32),), 0, True,
                  16, "int", splat=4, vbytes=vbytes)
    kernel = device.kernel(("test-vector-width", spec), lambda: render_elementwise(spec))
    a = clnp.asarray(x, device=device)
    out = Array.empty(x.shape, F32, device)
    n = x.size
    kernel(device.queue, (-(-n // 16),), None, np.int32(n), a._buf, np.int32(a._offset),
           out._buf, np.int32(out._offset))
    return out.to_numpy()


@pytest.mark.parametrize("op", ["sin", "cos", "tan", "exp", "tanh", "atan"])
def test_vector_widths_give_the_same_bits(device, op):
    """32-byte (float8) and 64-byte (float16) vectors, and the scalar tail, give identical
    results, also next to huge, infinite and NaN lanes (the length leaves a tail of 7)."""
    src_16 = render_elementwise(EwSpec((Operand(F32),), (Instr(op, (0,), (F32,), F32, F32),),
                                       ((1, F32),), 0, True, 16, "int", splat=4,
                                       vbytes=64))[0]
    assert "float16" in src_16 and "float8" not in src_16
    x = _arguments(np.random.default_rng(5))[: (1 << 14) + 7]
    wide = _run_contiguous(device, op, x, 64)
    narrow = _run_contiguous(device, op, x, 32)
    same = (wide == narrow) & (np.signbit(wide) == np.signbit(narrow)) | \
        (np.isnan(wide) & np.isnan(narrow))
    assert same.all(), f"{op}: float16 {wide[~same][:4]} != float8 {narrow[~same][:4]} " \
                       f"for {x[~same][:4]}"


def test_cpu_vector_bytes_follow_the_device(device, monkeypatch):
    """The vector size asked of the device: its preferred float width, 16 to 64 bytes."""
    for width, expect in ((16, 64), (8, 32), (4, 16), (1, 16), (32, 64)):
        monkeypatch.setattr(device, "preferred_vector_width",
                            dict(device.preferred_vector_width, float=width))
        assert vector_bytes(device) == expect


def _chain(ns, x):
    return ns.exp(ns.sin(x) * 2 + ns.cos(x)) / (1 + x * x) - 0.5 * ns.tanh(x)


def test_jit_chain_with_huge_neighbours(device):
    """The fused ew_chain kernel: every element right, where vectors hold huge, infinite or
    NaN values beside ordinary ones (sin/cos then go lane by lane)."""
    rng = np.random.default_rng(11)
    x = rng.uniform(-3, 3, 4099).astype(np.float32)
    # tiny values were the lanes PoCL's slow path corrupted (sin(1e-30) == 0.0099)
    x[rng.choice(x.size, 400, replace=False)] = rng.choice(
        np.array([1e-30, -1e-20, 1e-8, -0.0, 1e-40], np.float32), 400)
    x[rng.choice(x.size, 40, replace=False)] = rng.choice(
        np.array([1e30, -3e38, 1e6, 2e5, np.inf, -np.inf, np.nan], np.float32), 40)
    got = clnp_grad.jit(lambda v: _chain(clnp, v))(clnp.asarray(x, device=device))
    got = np.asarray(got)
    with np.errstate(all="ignore"):
        ref = _chain(np, x.astype(np.float64))
    np.testing.assert_allclose(got, ref, rtol=2e-6, atol=2e-7, equal_nan=True)
