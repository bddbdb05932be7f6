"""The error contract: precise exception types and messages, raised before any kernel is built
where the input alone shows the problem, and never leaving an input array modified."""
from __future__ import annotations

import numpy as np
import pytest

import clnp


def _fd(device):
    return np.dtype(np.float64 if device.has_fp64 else np.float32)


@pytest.fixture
def no_build(device, monkeypatch):
    """Fails the test if the device is asked to build a program."""
    def refuse(source, options=()):
        raise AssertionError("a kernel was built before the error was raised:\n" + source)
    monkeypatch.setattr(device, "build", refuse)
    return device


@pytest.fixture
def x(device):
    return clnp.asarray(np.arange(6, dtype=_fd(device)), device=device)


def unchanged(arr, ref):
    np.testing.assert_array_equal(np.asarray(arr), ref)


# ----------------------------------------------------------------------------- dtypes
def test_wrong_dtype_names_function_and_dtype(device, x):
    f = clnp.asarray(np.ones(3, np.float32), device=device)
    c = clnp.asarray(np.ones(3, np.complex64), device=device)
    b = clnp.asarray(np.ones(3, bool), device=device)
    cases = [(lambda: clnp.bitwise_and(f, f), "bitwise_and", "float32"),
             (lambda: f & f, "bitwise_and", "float32"),
             (lambda: ~f, "bitwise_invert", "float32"),
             (lambda: clnp.bitwise_left_shift(f, 1), "bitwise_left_shift", "float32"),
             (lambda: clnp.floor(c), "floor", "complex64"),
             (lambda: clnp.atan2(c, c), "atan2", "complex64"),
             (lambda: -b, "negative", "bool"),
             (lambda: clnp.max(c), "max", "complex64"),
             (lambda: clnp.min(c, axis=0), "min", "complex64")]
    for fn, name, dtype in cases:
        with pytest.raises(TypeError) as ei:
            fn()
        msg = str(ei.value)
        assert name in msg and dtype in msg, msg


def test_wrong_dtype_raises_before_any_build(no_build):
    f = clnp.Array.empty((3,), np.dtype(np.float32), no_build)
    with pytest.raises(TypeError):
        clnp.bitwise_xor(f, f)
    with pytest.raises(TypeError):
        clnp.sum(f, dtype=clnp.bool)


def test_unsupported_dtype_in_astype(device, x):
    ref = np.array(x)                 # a snapshot (numpy.asarray(x) may be x itself)
    with pytest.raises(TypeError, match="U3"):
        x.astype(np.dtype("U3"))
    with pytest.raises(TypeError, match="object"):
        clnp.astype(x, object)
    unchanged(x, ref)


def test_unsupported_dtype_message_names_astype(device, x):
    with pytest.raises(TypeError, match="astype"):
        clnp.astype(x, np.dtype("U3"))


def test_inplace_cast_across_kinds_is_refused(device):
    i = clnp.asarray(np.arange(3, dtype=np.int32), device=device)
    with pytest.raises(TypeError, match="int32"):
        i += 1.5
    with pytest.raises(TypeError, match=r"\+=.*float64.*int32.*same_kind"):
        i += clnp.asarray(np.ones(3, np.float64), device=device)
    unchanged(i, np.arange(3))
    f = clnp.asarray(np.arange(3, dtype=np.float32), device=device)
    with pytest.raises(TypeError, match="complex"):
        f[1] = 1j
    unchanged(f, np.arange(3))


# ----------------------------------------------------------------------------- shapes
def test_incompatible_shapes_name_both(device):
    a = clnp.ones(3, device=device)
    b = clnp.ones(4, device=device)
    for fn in (lambda: clnp.add(a, b), lambda: a + b, lambda: a * b, lambda: a < b):
        with pytest.raises(ValueError) as ei:
            fn()
        assert "(3,)" in str(ei.value) and "(4,)" in str(ei.value)
    m = clnp.ones((2, 3), device=device)
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(3, 2\)"):
        m + clnp.ones((3, 2), device=device)


def test_shape_errors_raise_before_any_build(no_build):
    d = no_build
    a = clnp.Array.empty((3,), np.dtype(np.float32), d)
    b = clnp.Array.empty((4,), np.dtype(np.float32), d)
    with pytest.raises(ValueError):
        a + b
    with pytest.raises(ValueError):
        clnp.reshape(a, (2, 2))
    with pytest.raises(ValueError):
        a += b


def test_inplace_bad_shape_leaves_input(device, x):
    ref = np.array(x)                 # a snapshot (numpy.asarray(x) may be x itself)
    with pytest.raises(ValueError) as ei:
        x += clnp.ones(4, dtype=x.dtype, device=device)
    assert "(6,)" in str(ei.value) and "(4,)" in str(ei.value)
    with pytest.raises(ValueError):
        x *= clnp.ones((2, 6), dtype=x.dtype, device=device)   # would change x's shape
    unchanged(x, ref)


# ----------------------------------------------------------------------------- indices
def test_bad_index_is_index_error(device, x):
    idx = clnp.asarray(np.array([0, 7]), device=device)
    for key in (6, -7, (1, 2), 1.5, "a", (Ellipsis, Ellipsis), idx,
                clnp.asarray(np.array([0, -7]), device=device),
                clnp.asarray(np.ones(5, bool), device=device),
                clnp.asarray(np.ones(2, _fd(device)), device=device)):
        with pytest.raises(IndexError):
            x[key]
    with pytest.raises(IndexError, match="7"):
        x[idx]


def test_basic_index_errors_raise_before_any_build(no_build, x):
    for key in (6, (0, 0), 1.5):
        with pytest.raises(IndexError):
            x[key]


def test_failed_setitem_leaves_input(device, x):
    ref = np.array(x)                 # a snapshot (numpy.asarray(x) may be x itself)
    cases = [(clnp.asarray(np.array([0, 5, 9]), device=device), 7.0, IndexError),
             (clnp.asarray(np.array([-8, 1]), device=device), 7.0, IndexError),
             (6, 1.0, IndexError),
             (slice(0, 2), clnp.ones(3, dtype=x.dtype, device=device), ValueError),
             (clnp.asarray(np.array([0, 1]), device=device),
              clnp.ones(3, dtype=x.dtype, device=device), ValueError),
             (clnp.asarray(np.ones(2, bool), device=device), 1.0, IndexError)]
    for key, value, exc in cases:
        with pytest.raises(exc):
            x[key] = value
        unchanged(x, ref)
    u = clnp.asarray(np.arange(3, dtype=np.uint8), device=device)
    with pytest.raises(OverflowError):
        u[0] = 300
    unchanged(u, np.arange(3))


# ----------------------------------------------------------------------------- memory
def test_allocation_failure(device):
    n = device.max_alloc // 4 + 1024
    with pytest.raises(clnp.DeviceMemoryError) as ei:
        clnp.empty((n,), dtype=clnp.float32, device=device)
    e = ei.value
    assert isinstance(e, MemoryError)
    assert e.nbytes == 4 * n and e.device is device
    msg = str(e)
    assert str(4 * n) in msg and str(device) in msg and str(device.max_alloc) in msg
    with pytest.raises(clnp.DeviceMemoryError):
        clnp.zeros((n,), dtype=clnp.float32, device=device)
    with pytest.raises(MemoryError):
        clnp.empty((1 << 40, 1 << 30), dtype=clnp.int8, device=device)
    # the device still works afterwards
    assert int(clnp.sum(clnp.ones(10, dtype=clnp.int32, device=device))) == 10


def test_allocation_failure_in_an_operation_leaves_inputs(device, x):
    ref = np.array(x)                 # a snapshot (numpy.asarray(x) may be x itself)
    n = device.max_alloc // 8 + 1024
    big = clnp.broadcast_to(x[:1], (n,))            # a view: no memory
    with pytest.raises(clnp.DeviceMemoryError, match=str(n * 8)):
        big + 1.0 if x.dtype == np.float64 else clnp.astype(big, clnp.float64)
    unchanged(x, ref)


# ----------------------------------------------------------------------------- builds
BROKEN = "__kernel void broken(__global float *y)\n{\n    y[0] = undefined_name;\n}\n"


def test_kernel_build_error(device):
    with pytest.raises(clnp.KernelBuildError) as ei:
        device.build(BROKEN)
    e = ei.value
    assert isinstance(e, RuntimeError)
    assert e.source == BROKEN and e.device is device
    assert "undefined_name" in e.log                # the compiler's own diagnostic
    assert "clBuildProgram failed" not in e.log     # not PyOpenCL's wrapper text
    msg = str(e)
    assert e.log in msg and str(device) in msg
    assert "   3      y[0] = undefined_name;" in msg   # numbered source
    # failures are not cached: the same source fails again, a good one still builds
    with pytest.raises(clnp.KernelBuildError):
        device.build(BROKEN)
    assert not any(k.startswith(BROKEN) for k in device._programs)


def test_kernel_build_error_from_a_spec(device):
    key = ("test_errors-broken-spec",)
    with pytest.raises(clnp.KernelBuildError) as ei:
        device.kernel(key, lambda: (BROKEN, "broken", None))
    assert ei.value.source == BROKEN and "undefined_name" in ei.value.log
    assert key not in device._kernels
