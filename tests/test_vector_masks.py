"""Bools in vector code: comparisons, ``where`` and logical ops on OpenCL vectors, where a bool
lane is a mask (-1/0) that loads, stores, scalars and conversions turn into NumPy's 0/1
(``_ops``: ``vmask``; ``_codegen.ctypes``). Eager and jitted elementwise kernels and fused
reductions on contiguous arrays long enough for vectors (CPU devices), with bool inputs,
outputs and scalars, operands of 1-, 2-, 4- and 8-byte lanes, against NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import clnp
import clnp_grad as cg

N = 1000   # vectors of 16 lanes, and a scalar tail


def _a(v, device):
    return clnp.asarray(v, device=device)


def _vectorised(jf, *args):
    return any("select(" in s or "convert_uchar" in s for s in jf.lower(*args).kernel_sources())


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "int16", "int64", "uint8",
                                   "float16"])
def test_where_of_a_comparison(device, dtype):
    if dtype == "float64" and not device.has_fp64:
        pytest.skip("no float64")
    rng = np.random.default_rng(0)
    x_h = (rng.standard_normal(N) * 50).astype(dtype)
    y_h = (rng.standard_normal(N) * 50).astype(dtype)
    x, y = _a(x_h, device), _a(y_h, device)

    def f(m, x, y):
        return m.where(x > y, x, y - x), m.where(x <= 0, 1.5, 0.25)
    for got, ref in zip(cg.jit(lambda x, y: f(clnp, x, y))(x, y), f(np, x_h, y_h)):
        np.testing.assert_array_equal(clnp.asnumpy(got), ref)
    for got, ref in zip(f(clnp, x, y), f(np, x_h, y_h)):
        np.testing.assert_array_equal(clnp.asnumpy(got), ref)
    if device.is_cpu and dtype != "float16":
        assert _vectorised(cg.jit(lambda x, y: f(clnp, x, y)), x, y)


def test_bool_outputs_inputs_and_scalars(device):
    rng = np.random.default_rng(1)
    x_h = rng.standard_normal(N).astype(np.float32)
    b_h = rng.random(N) > 0.5
    x, b = _a(x_h, device), _a(b_h, device)

    def f(m, x, b):
        c = x > 0.1
        return (c, m.logical_and(c, b), m.logical_or(b, x < -1.0), m.logical_xor(c, b),
                m.logical_not(b), c == b, c != True, m.astype(b, m.float32) * x,  # noqa: E712
                m.where(b, c, False), b & c, b | True)
    jf = cg.jit(lambda x, b: f(clnp, x, b))
    for got, ref in zip(jf(x, b), f(np, x_h, b_h)):
        np.testing.assert_array_equal(clnp.asnumpy(got), ref)
    for got, ref in zip(f(clnp, x, b), f(np, x_h, b_h)):
        np.testing.assert_array_equal(clnp.asnumpy(got), ref)
    if device.is_cpu:
        assert _vectorised(jf, x, b)


@pytest.mark.parametrize("dtype", ["float32", "int32", "float16", "bfloat16"])
def test_bool_conversions(device, dtype):
    """A mask converted to numbers is 0/1 in every dtype, and numbers to bools."""
    rng = np.random.default_rng(2)
    x_h = rng.integers(-3, 3, N).astype(np.float32)
    x = _a(x_h, device)
    jf = cg.jit(lambda x: (clnp.astype(x > 0, getattr(clnp, dtype)),
                           clnp.astype(clnp.astype(x, clnp.int32), clnp.bool)))
    a, b = jf(x)
    np.testing.assert_array_equal(clnp.asnumpy(clnp.astype(a, clnp.float32)),
                                  (x_h > 0).astype(np.float32))
    np.testing.assert_array_equal(clnp.asnumpy(b), x_h != 0)


def test_fused_reductions_of_masks(device):
    """Sums of bools and of values selected by masks, fused with their producers (rows and
    several reduced dims)."""
    rng = np.random.default_rng(3)
    x_h = rng.standard_normal((4, 3, 40)).astype(np.float32)
    x = _a(x_h, device)

    def f(m, x):
        return (m.sum(x > 0, axis=(0, 2)), m.sum(m.where(x > 0, x, 0.0), axis=2),
                m.sum(m.astype(m.abs(x) < 1.0, m.float32) * x, axis=(0, 2)))
    jf = cg.jit(lambda x: f(clnp, x))
    for got, ref in zip(jf(x), f(np, x_h)):
        np.testing.assert_allclose(clnp.asnumpy(got), ref, rtol=1e-5, atol=1e-6)


def test_relu_gradient(device):
    """The ReLU gradient, a comparison and a select, as a jitted backward pass."""
    rng = np.random.default_rng(4)
    x_h = rng.standard_normal(N).astype(np.float32)
    x_h[:5] = 0.0
    g = cg.jit(cg.grad(lambda x: clnp.sum(clnp.maximum(x, 0.0) * 2.0)))(_a(x_h, device))
    ref = np.where(x_h > 0, 2.0, np.where(x_h == 0, 1.0, 0.0)).astype(np.float32)
    np.testing.assert_array_equal(clnp.asnumpy(g), ref)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
                                   "uint64", "float16", "bfloat16", "float32", "float64"])
def test_casts_to_and_from_bool(device, dtype):
    """astype to bool from every lane size (a comparison with a zero of the lanes' own type)
    and back, eagerly and under jit, on arrays long enough for vectors."""
    if dtype == "float64" and not device.has_fp64:
        pytest.skip("no float64")
    rng = np.random.default_rng(5)
    x_h = rng.integers(0, 3, N).astype(np.float32)
    x = clnp.astype(clnp.asarray(x_h, device=device), getattr(clnp, dtype))
    to_bool = clnp.astype(x, clnp.bool)
    np.testing.assert_array_equal(clnp.asnumpy(to_bool), x_h != 0)
    back = clnp.astype(to_bool, getattr(clnp, dtype))
    np.testing.assert_array_equal(clnp.asnumpy(clnp.astype(back, clnp.float32)),
                                  (x_h != 0).astype(np.float32))
    jf = cg.jit(lambda v: clnp.astype(clnp.astype(v, clnp.bool), getattr(clnp, dtype)))
    np.testing.assert_array_equal(clnp.asnumpy(clnp.astype(jf(x), clnp.float32)),
                                  (x_h != 0).astype(np.float32))
