import numpy as np

import clnp


def test_roundtrip_and_add(device):
    a = np.arange(10, dtype=np.float32)
    x = clnp.asarray(a, device=device)
    assert x.device is device
    np.testing.assert_array_equal(clnp.asnumpy(x + x), a + a)
    np.testing.assert_array_equal(np.asarray(x[::-2] * 3), a[::-2] * 3)


def test_sum_axis(device):
    a = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    if not device.has_fp64:
        a = a.astype(np.float32)
    x = clnp.asarray(a, device=device)
    for ax in (None, 0, 1, 2, (0, 2)):
        np.testing.assert_allclose(np.asarray(clnp.sum(x, axis=ax)), a.sum(axis=ax))
