"""DLPack without copies on devices that share host memory (PoCL and other CPU devices):
``numpy.from_dlpack(x)``/``torch.from_dlpack(x)`` see the array's own memory, and
``clnp.from_dlpack`` uses a producer's host memory in place where it is writable,
C-contiguous and aligned as the device asks (issue #24). Elsewhere both copy, and
``copy=False`` raises BufferError."""
from __future__ import annotations

import gc

import numpy as np
import pytest

import clnp


def _aligned(n: int, align: int, dtype=np.float32) -> np.ndarray:
    item = np.dtype(dtype).itemsize
    raw = np.empty(n * item + align, np.uint8)
    off = (-raw.ctypes.data) % align
    return raw[off:off + n * item].view(dtype)


def _shared_or_skip(device):
    if not device.shares_host_memory:
        pytest.skip(f"{device}'s memory is not host memory")


def test_export_is_the_arrays_memory(device):
    _shared_or_skip(device)
    x = clnp.arange(12, dtype=clnp.float32, device=device)
    h = np.from_dlpack(x)
    h[0] = 42.0                                        # the host writes, a kernel reads
    np.testing.assert_array_equal(clnp.asnumpy(x + 1)[:2], [43.0, 2.0])
    x[1] = 7.0                                         # a kernel writes, the host reads
    clnp.synchronize()
    assert h[1] == 7.0
    h2 = np.from_dlpack(x, copy=False)
    assert h2.ctypes.data == h.ctypes.data
    c = np.from_dlpack(x, copy=True)                   # a copy: independent
    c[2] = -1
    assert float(x[2]) == 2.0


def test_export_of_a_view_keeps_the_memory(device):
    """A strided, negative-stride view exports its elements; the buffer stays the export's
    after the array is gone (the pool does not hand it to a new array)."""
    _shared_or_skip(device)
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    x = clnp.asarray(base, device=device)
    v = x[::-1, 1::2]
    h = np.from_dlpack(v)
    np.testing.assert_array_equal(h, base[::-1, 1::2])
    del x, v
    gc.collect()
    fresh = [clnp.full((4, 6), -5.0, dtype=clnp.float32, device=device) for _ in range(4)]
    clnp.synchronize()
    np.testing.assert_array_equal(h, base[::-1, 1::2])
    assert fresh[0].shape == (4, 6)


def test_torch_shares_the_memory(device):
    _shared_or_skip(device)
    torch = pytest.importorskip("torch")
    x = clnp.zeros(5, dtype=clnp.float32, device=device)
    t = torch.from_dlpack(x)
    t += 3
    np.testing.assert_array_equal(clnp.asnumpy(x), np.full(5, 3, np.float32))


def test_import_uses_aligned_host_memory_in_place(device):
    _shared_or_skip(device)
    h = _aligned(16, device.host_ptr_align)
    h[:] = np.arange(16)
    x = clnp.from_dlpack(h, device=device, copy=False)
    x *= 2                                            # a kernel writes NumPy's memory
    clnp.synchronize()
    np.testing.assert_array_equal(h, 2 * np.arange(16, dtype=np.float32))
    h[0] = 100.0
    assert float(x[0]) == 100.0
    y = clnp.from_dlpack(h, device=device, copy=True)
    h[1] = -1.0
    assert float(y[1]) == 2.0


def test_import_copies_what_cannot_be_used_in_place(device):
    """Misaligned, read-only and strided memory is copied (copy=None) or refused
    (copy=False, naming why)."""
    _shared_or_skip(device)
    h = _aligned(17, device.host_ptr_align)[1:]       # 4 bytes past an aligned address
    h[:] = 1.0
    x = clnp.from_dlpack(h, device=device)
    x += 1
    clnp.synchronize()
    assert h[0] == 1.0 and float(x[0]) == 2.0
    with pytest.raises(BufferError, match="aligned"):
        clnp.from_dlpack(h, device=device, copy=False)
    ro = _aligned(8, device.host_ptr_align)
    ro.flags.writeable = False
    with pytest.raises(BufferError, match="read-only"):
        clnp.from_dlpack(ro, device=device, copy=False)
    with pytest.raises(BufferError, match="C-contiguous"):
        clnp.from_dlpack(_aligned(16, device.host_ptr_align)[::2], device=device, copy=False)


def test_devices_without_host_memory_copy(device):
    if device.shares_host_memory:
        pytest.skip(f"{device}'s memory is host memory")
    x = clnp.arange(4, dtype=clnp.float32, device=device)
    h = np.from_dlpack(x)
    h[0] = 9.0
    assert float(x[0]) == 0.0
    with pytest.raises(BufferError, match="not host memory"):
        x.__dlpack__(copy=False)
    with pytest.raises(BufferError, match="not host memory"):
        clnp.from_dlpack(np.arange(3.0), device=device, copy=False)
