"""clnp._transfer: asynchronous reads and writes, and copies between devices (within a
context with clEnqueueCopyBuffer, else chunked through the host)."""
from __future__ import annotations

import numpy as np
import pytest

import clnp
from clnp._transfer import copy_to_device, start_read, upload, write_into


def test_reads_writes_and_same_device_copy(device, rng):
    a = rng.standard_normal((5, 7)).astype(np.float32)
    x = clnp.asarray(a, device=device)
    r1, r2 = start_read(x[1:3]), start_read(x[:, ::2])       # offset view; strided view
    np.testing.assert_array_equal(r1.wait(), a[1:3])
    np.testing.assert_array_equal(r2.wait(), a[:, ::2])
    y = copy_to_device(x[1:], device)                          # one clEnqueueCopyBuffer
    x[1] = 0.0                                                 # the copy is independent
    np.testing.assert_array_equal(np.asarray(y), a[1:])
    z = upload(np.ascontiguousarray(a), device, owned=True)
    write_into(z.reshape(-1), 3, np.arange(4, dtype=np.float32))
    expect = a.copy().reshape(-1)
    expect[3:7] = np.arange(4)
    np.testing.assert_array_equal(np.asarray(z).reshape(-1), expect)
    with pytest.raises(ValueError, match="fall outside an array of 35"):
        write_into(z.reshape(-1), 33, np.arange(4, dtype=np.float32))
    with pytest.raises(ValueError, match="same dtype"):
        write_into(z.reshape(-1), 0, np.arange(4, dtype=np.float64))


def test_copy_between_devices_in_chunks(rng):
    d0 = clnp.default_device()
    devs = [d for d in clnp.devices() if d.platform_name == d0.platform_name]
    if len(devs) < 2:
        pytest.skip("needs two devices (test_parallel_launch.py runs test_pmap.py with two)")
    a = rng.standard_normal(10_001).astype(np.float32)
    x = clnp.asarray(a, device=devs[0]) * 2
    y = copy_to_device(x, devs[1], chunk_bytes=4096)
    assert y.device is devs[1]
    np.testing.assert_array_equal(np.asarray(y), a * 2)
