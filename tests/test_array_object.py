"""The array object: attributes, views' strides, Python protocols, host/device transfer."""
from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

import clnp


def _fd(device):
    return np.dtype(np.float64 if device.has_fp64 else np.float32)


@pytest.fixture
def a(device):
    return np.arange(24, dtype=_fd(device)).reshape(4, 6)


@pytest.fixture
def x(device, a):
    return clnp.asarray(a, device=device)


# ----------------------------------------------------------------------------- attributes
def test_attributes(device, a, x):
    assert x.shape == (4, 6) and isinstance(x.shape, tuple)
    assert x.ndim == 2 and x.size == 24
    assert x.dtype == a.dtype
    assert x.device is device
    assert x.strides == a.strides
    assert x.itemsize == a.itemsize and x.nbytes == a.nbytes
    z = clnp.asarray(np.zeros((0, 3), np.int16), device=device)
    assert (z.shape, z.size, len(z.strides)) == ((0, 3), 0, 2)   # values: NumPy varies
    s = clnp.asarray(np.int8(3), device=device)
    assert (s.shape, s.ndim, s.size, s.strides) == ((), 0, 1, ())


def test_view_strides(device, a, x):
    """Views report NumPy's byte strides, including negative and zero ones."""
    cases = [(x[::-1], a[::-1]), (x[:, ::-2], a[:, ::-2]), (x[1:3, 2:], a[1:3, 2:]),
             (x.T, a.T), (x[2], a[2]), (x[None, :, 1], a[None, :, 1]),
             (clnp.broadcast_to(x[1], (3, 6)), np.broadcast_to(a[1], (3, 6))),
             (clnp.reshape(x, (2, 12)), a.reshape(2, 12)),
             (clnp.permute_dims(clnp.reshape(x, (2, 3, 4)), (1, 2, 0)),
              a.reshape(2, 3, 4).transpose(1, 2, 0))]
    for v, ref in cases:
        assert v.shape == ref.shape
        assert v.strides == ref.strides, (v.strides, ref.strides)
        np.testing.assert_array_equal(np.asarray(v), ref)


def test_transpose_attributes(device, a, x):
    assert x.T.shape == (6, 4)
    np.testing.assert_array_equal(np.asarray(x.T), a.T)
    # NumPy's .T: every axis reversed; 0-d and 1-d arrays unchanged (issue #12)
    for h in (np.ones(()), np.arange(3.0), np.arange(24.0).reshape(2, 3, 4)):
        t = clnp.asarray(h, device=device).T
        assert t.shape == h.T.shape
        np.testing.assert_array_equal(np.asarray(t), h.T)
    b = np.arange(24.0).reshape(2, 3, 4)
    xb = clnp.asarray(b, device=device)
    assert xb.mT.shape == (2, 4, 3)
    np.testing.assert_array_equal(np.asarray(xb.mT), np.swapaxes(b, -1, -2))
    np.testing.assert_array_equal(np.asarray(x.mT), a.T)
    with pytest.raises(ValueError):
        clnp.asarray(np.ones(3), device=device).mT


# ----------------------------------------------------------------------------- repr / str
@pytest.mark.parametrize("host", [
    np.array([1.0, 2.0]), np.array([1, 2]), np.array([1, 2], np.int32),
    np.array([True, False]), np.array(3.5), np.array(7, np.uint8), np.array([], np.float64),
    np.zeros((0, 3)), np.zeros((2, 0), np.int32), np.array([1.0, 2.5], np.float32),
    np.array([1 + 2j]), np.array([1 - 1j], np.complex64), np.array([1.5, -2], np.float16),
    np.arange(12.0).reshape(3, 4), np.arange(2000.0)])
def test_repr_str_like_numpy(device, host):
    if not device.supports(host.dtype):
        pytest.skip(f"{host.dtype} unsupported on {device}")
    x = clnp.asarray(host, device=device)
    assert repr(x) == repr(host)
    assert str(x) == str(host)


def test_repr_examples(device):
    assert repr(clnp.asarray(np.array([1.0, 2.0], np.float32), device=device)) == \
        "array([1., 2.], dtype=float32)"
    assert repr(clnp.asarray(np.array([1, 2]), device=device)) == "array([1, 2])"
    assert repr(clnp.asarray(np.zeros((0, 2), np.float32), device=device)) == \
        "array([], shape=(0, 2), dtype=float32)"


# ----------------------------------------------------------------------------- host transfer
def test_numpy_asarray(device, a, x):
    h = np.asarray(x)
    assert isinstance(h, np.ndarray) and h.dtype == a.dtype
    np.testing.assert_array_equal(h, a)
    if device.shares_host_memory:                 # x's own memory, as NumPy's asarray
        h[0, 0] = -1
        assert float(x[0, 0]) == -1.0
        h[0, 0] = 0
    else:                                         # a copy: refuses writes that would be lost
        assert not h.flags.writeable
        with pytest.raises(ValueError):
            np.asarray(x, copy=False)
    c = np.array(x)                               # numpy.array copies
    c[0, 0] = -5
    assert float(x[0, 0]) == 0.0
    np.testing.assert_array_equal(np.asarray(x, dtype=np.float32), a.astype(np.float32))
    np.testing.assert_array_equal(np.array(x[::-1, 1::2]), a[::-1, 1::2])
    with pytest.raises(ValueError):
        np.asarray(x, dtype=np.float32, copy=False)


def test_tolist_item(device, a, x):
    assert x.tolist() == a.tolist()
    assert x[::-2].tolist() == a[::-2].tolist()
    assert clnp.asarray(np.array(5, np.int16), device=device).tolist() == 5
    assert x[1, 2].item() == 8.0 and type(x[1, 2].item()) is float
    assert x.item(9) == a.item(9) and x.item(1, 2) == a.item(1, 2)
    assert type(clnp.asarray(np.array([3], np.uint8), device=device).item()) is int
    assert type(clnp.asarray(np.array(True), device=device).item()) is bool
    with pytest.raises(ValueError):
        x.item()


def test_python_scalar_conversions(device):
    fd = _fd(device)
    f = clnp.asarray(np.array(2.5, fd), device=device)
    i = clnp.asarray(np.array(-7, np.int32), device=device)
    b = clnp.asarray(np.array(True), device=device)
    c = clnp.asarray(np.array(1 - 2j, np.complex64), device=device)
    assert float(f) == 2.5 and int(f) == 2 and bool(f) is True and complex(f) == 2.5
    assert int(i) == -7 and float(i) == -7.0 and i.__index__() == -7
    assert [10, 20, 30, 40, 50, 60, 70][i] == 10
    assert bool(b) is True and int(b) == 1
    assert complex(c) == 1 - 2j
    assert bool(clnp.asarray(np.array([0.0]), device=device)) is False
    with pytest.raises(TypeError):
        float(c)                                   # complex -> float loses information
    with pytest.raises(TypeError):
        int(c)
    with pytest.raises(ValueError, match="nan"):
        int(clnp.asarray(np.array(np.nan, fd), device=device))
    with pytest.raises(OverflowError):
        int(clnp.asarray(np.array(np.inf, fd), device=device))
    with pytest.raises(TypeError):
        f.__index__()                              # floats are not indices
    with pytest.raises(TypeError):
        b.__index__()
    many = clnp.asarray(np.array([1.0, 2.0], fd), device=device)
    for conv in (float, int, complex):
        with pytest.raises(TypeError):
            conv(many)
    with pytest.raises(TypeError):
        many.__index__()
    with pytest.raises(ValueError):
        bool(many)                                 # NumPy: ambiguous truth value
    with pytest.raises(ValueError):
        bool(clnp.asarray(np.zeros(0, fd), device=device))


def test_len_iter(device, a, x):
    assert len(x) == 4 and len(x.T) == 6
    rows = list(x)
    assert len(rows) == 4 and all(r.shape == (6,) for r in rows)
    np.testing.assert_array_equal(np.stack([np.asarray(r) for r in rows]), a)
    assert [float(v) for v in x[1]] == a[1].tolist()
    s = clnp.asarray(np.array(1.0), device=device)
    with pytest.raises(TypeError):
        len(s)
    with pytest.raises(TypeError):
        iter(s)


def test_float16_storage_round_trip(device):
    h = np.array([0.0, -1.5, 65504.0, 6.1e-5, np.inf, 1e-7, 3.14159], np.float16)
    x = clnp.asarray(h, device=device)
    assert x.dtype == np.float16 and x.strides == (2,)
    np.testing.assert_array_equal(np.asarray(x), h)
    np.testing.assert_array_equal(np.asarray(x[::-2]), h[::-2])
    y = x + x                      # computed in float32, stored as half (65504 -> inf)
    assert y.dtype == np.float16
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(np.asarray(y), h + h)


# ----------------------------------------------------------------------------- protocols
def test_array_namespace(x):
    assert x.__array_namespace__() is clnp
    for v in ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12"):
        assert x.__array_namespace__(api_version=v) is clnp
    with pytest.raises(ValueError, match="2099.12"):
        x.__array_namespace__(api_version="2099.12")


def test_to_device(device, a, x):
    assert x.to_device(device) is x
    h = x.to_device("cpu")
    assert isinstance(h, np.ndarray)
    np.testing.assert_array_equal(h, a)
    for other in clnp.devices():
        y = x[::-1].to_device(other)
        assert y.device is other and y.dtype == x.dtype
        np.testing.assert_array_equal(np.asarray(y), a[::-1])
    with pytest.raises(ValueError):
        x.to_device(device, stream=1)
    with pytest.raises(ValueError, match="available"):
        x.to_device("no-such-device-anywhere")


def test_dlpack(device, a, x):
    from clnp._runtime import cuda_memory
    # kDLCUDA on an NVIDIA device sharing memory with CUDA (tests/parallel/test_cuda_dlpack.py)
    assert x.__dlpack_device__() == ((2, cuda_memory.cuda_ordinal(device))
                                     if cuda_memory.supported(device) else (1, 0))
    h = np.from_dlpack(x, device="cpu")
    np.testing.assert_array_equal(h, a)
    v = x[:, ::-2]
    np.testing.assert_array_equal(np.from_dlpack(v, device="cpu"), a[:, ::-2])
    y = clnp.from_dlpack(x)
    assert isinstance(y, clnp.Array)
    np.testing.assert_array_equal(np.asarray(y), a)
    z = clnp.from_dlpack(np.arange(5, dtype=np.int32), device=device)
    assert z.device is device and z.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(z), np.arange(5))
    if device.shares_host_memory:       # the array's own memory (tests/test_dlpack.py)
        x.__dlpack__(copy=False)
    else:
        with pytest.raises(BufferError, match="copy=False"):
            x.__dlpack__(copy=False)
    with pytest.raises(BufferError):
        x.__dlpack__(dl_device=(2, 99))          # a GPU it is not on


def test_pickle(device, a, x):
    for obj, ref in ((x, a), (x[::-1, 1:4], a[::-1, 1:4]),
                     (clnp.asarray(np.array([1, 2], np.uint16), device=device),
                      np.array([1, 2], np.uint16))):
        y = pickle.loads(pickle.dumps(obj))
        assert isinstance(y, clnp.Array)
        assert y.device is device and y.dtype == ref.dtype and y.shape == ref.shape
        np.testing.assert_array_equal(np.asarray(y), ref)
    assert pickle.loads(pickle.dumps(device)) is device


def test_unhashable(x):
    with pytest.raises(TypeError):
        hash(x)
    with pytest.raises(TypeError):
        {x: 1}


def test_nan_inf_round_trip(device):
    h = np.array([np.nan, -np.inf, np.inf, -0.0], _fd(device))
    x = clnp.asarray(h, device=device)
    got = np.asarray(x)
    assert np.isnan(got[0]) and got[1] == -np.inf and got[2] == np.inf
    assert math.copysign(1.0, got[3]) == -1.0


def test_upload_is_isolated_from_later_host_writes(device):
    """asarray() uploads asynchronously; writing to the NumPy source right afterwards must not
    leak into the device copy (regression: the upload used to read the caller's buffer)."""
    big = np.ones(1 << 20, np.float32)
    busy = clnp.asarray(big, device=device)
    for _ in range(3):          # queue work so the upload is likely still pending
        busy = clnp.sin(busy)
    a = np.arange(1, 11, dtype=np.float32)
    x = clnp.asarray(a, device=device)
    a *= 100
    np.testing.assert_array_equal(x.to_numpy(), np.arange(1, 11, dtype=np.float32))
