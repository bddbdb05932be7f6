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
    if clnp.zeros(1, device=device).__dlpack_device__()[0] != 1:
        pytest.skip(f"{device} exports kDLCUDA (tests/parallel/test_cuda_dlpack.py)")
    x = clnp.arange(4, dtype=clnp.float32, device=device)
    h = np.from_dlpack(x)
    h[0] = 9.0
    assert float(x[0]) == 0.0
    with pytest.raises(BufferError, match="not host memory"):
        x.__dlpack__(copy=False)
    with pytest.raises(BufferError, match="not host memory"):
        clnp.from_dlpack(np.arange(3.0), device=device, copy=False)


# ------------------------------------------------------------------ clnp's own capsules
# (clnp/_runtime/dlpack.py: kDLCUDA exports and imports use them; host memory checks the
# layout against NumPy's and PyTorch's readers here)
class _HostExport:
    """Host memory exported through clnp's capsule writer."""

    def __init__(self, a: np.ndarray):
        self.a = a

    def __dlpack_device__(self):
        return (1, 0)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        from clnp._runtime import dlpack
        a = self.a
        return dlpack.export(a.ctypes.data, (1, 0), a.shape,
                             tuple(s // a.itemsize for s in a.strides), a.dtype, a,
                             max_version=max_version)


@pytest.mark.parametrize("dtype", ["float32", "int8", "uint64", "complex64", "bool", "bfloat16"])
def test_capsules_read_by_numpy_and_torch(dtype):
    from clnp._runtime import dlpack
    torch = pytest.importorskip("torch")
    base = np.arange(24).reshape(4, 6)
    a = (base % 2 == 0) if dtype == "bool" else base.astype(clnp.dtype(dtype) if dtype ==
                                                            "bfloat16" else dtype)
    v = a[::2, 1::2]
    h = None
    if dtype != "bfloat16":                             # NumPy's reader has no bfloat16
        h = np.from_dlpack(_HostExport(v))
        assert h.ctypes.data == v.ctypes.data and h.dtype == v.dtype
        np.testing.assert_array_equal(h, v)
    t = torch.from_dlpack(_HostExport(v))               # a legacy (unversioned) capsule
    assert t.data_ptr() == v.ctypes.data and tuple(t.shape) == v.shape
    assert t.stride() == tuple(s // v.itemsize for s in v.strides)
    back = dlpack.consume(t.__dlpack__())               # and PyTorch's capsule read back
    assert (back.address, back.shape, back.dtype) == (v.ctypes.data, v.shape, v.dtype)
    assert back.strides == t.stride() and back.device == (1, 0)
    back.release()
    del t, h                                            # the consumers let go: so does clnp
    assert not dlpack._LIVE or all(e[3] is not v for e in dlpack._LIVE.values())


def test_unconsumed_capsules_let_their_owner_go():
    import weakref
    from clnp._runtime import dlpack
    for version in (None, (1, 0)):
        a = np.ones(3)
        ref = weakref.ref(a)
        cap = _HostExport(a).__dlpack__(max_version=version)
        del a
        assert ref() is not None                        # the capsule holds it
        dlpack.collect()
        assert ref() is not None                        # held, not abandoned: kept
        del cap
        gc.collect()
        assert dlpack.collect() >= 1                    # abandoned: freed
        assert ref() is None


def test_a_consumer_that_fails_does_not_lose_its_exception():
    """NumPy refuses a kDLCUDA capsule with BufferError after taking it; the capsule, never
    consumed, is freed later, and NumPy's exception reaches the caller intact."""
    import weakref
    from clnp._runtime import dlpack
    a = np.ones(3)
    ref = weakref.ref(a)

    class OnGpu:
        def __dlpack_device__(self):
            return (2, 0)

        def __dlpack__(self, **kw):
            return dlpack.export(a.ctypes.data, (2, 0), a.shape, (1,), a.dtype, a,
                                 max_version=kw.get("max_version"))
    with pytest.raises((BufferError, RuntimeError, ValueError)):
        np.from_dlpack(OnGpu())
    del a
    gc.collect()
    dlpack.collect()
    assert ref() is None


def test_consume_reads_numpy_versioned_capsules_and_refuses_used_ones():
    from clnp._runtime import dlpack
    a = np.arange(10, dtype=np.int16)[::-3]
    cap = a.__dlpack__(max_version=(1, 0))
    imp = dlpack.consume(cap)
    assert imp.shape == (4,) and imp.strides == (-3,) and imp.dtype == np.int16
    assert imp.address == a.ctypes.data and imp.span() == (-9, 1) and not imp.copied
    imp.release()
    imp.release()                                       # once only
    with pytest.raises(BufferError, match="no unconsumed DLPack capsule"):
        dlpack.consume(cap)
    ro = np.arange(3.0)
    ro.flags.writeable = False
    imp = dlpack.consume(ro.__dlpack__(max_version=(1, 0)))
    assert imp.read_only
    imp.release()


def test_dtype_codes_round_trip():
    from clnp._runtime import dlpack
    for name in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                 "uint64", "float16", "float32", "float64", "complex64", "complex128",
                 "bfloat16"):
        d = np.dtype(clnp.dtype(name)) if name == "bfloat16" else np.dtype(name)
        assert dlpack.dtype_of(*dlpack.code_of(d), 1) == d
    with pytest.raises(BufferError, match="lanes=4"):
        dlpack.dtype_of(2, 32, 4)
    with pytest.raises(BufferError, match="type code 3"):
        dlpack.dtype_of(3, 8, 1)


def test_arrays_of_cpu_devices_export_to_the_host_only(device):
    """dl_device other than the array's own or the host is refused before anything moves."""
    x = clnp.arange(3, dtype=clnp.float32, device=device)
    own = x.__dlpack_device__()
    with pytest.raises(BufferError, match=r"dl_device=\(2, 7\) is not supported"):
        x.__dlpack__(dl_device=(2, 7))
    if own == (1, 0):
        np.testing.assert_array_equal(np.from_dlpack(x, device="cpu"), [0, 1, 2])


def test_a_copy_for_export_spans_a_strided_view(device):
    """``__dlpack__``'s copy into memory CUDA sees takes the bytes a view spans (more than
    its ``nbytes`` when strided, less when broadcast), keeping its shape and strides; here
    into OpenCL memory, which every device has."""
    from clnp._core.array import _copy_into
    base = np.arange(60, dtype=np.float32).reshape(6, 10)
    x = clnp.asarray(base, device=device)
    asked = []

    def take(n):
        asked.append(n)
        return device.alloc(n)
    for view, ref in ((x[::2, ::-3], base[::2, ::-3]), (x[1:, 2], base[1:, 2]),
                      (clnp.broadcast_to(x[0], (4, 10)), np.broadcast_to(base[0], (4, 10)))):
        c = _copy_into(view, take)
        assert c._buf is not view._buf and c.strides == view.strides
        np.testing.assert_array_equal(clnp.asnumpy(c), ref)
    assert asked[0] > x[::2, ::-3].nbytes and asked[2] == 40
