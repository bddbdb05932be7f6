"""float16 storage: the integer conversions every kernel loads and stores float16 with
(``clnp._codegen.ctypes.half_helpers``) are exact, on every device, against NumPy."""
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
