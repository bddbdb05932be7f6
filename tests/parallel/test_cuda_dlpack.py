"""Arrays in memory CUDA sees, and DLPack with PyTorch, CuPy and JAX on the GPU (issue #24).

On an NVIDIA device that shares memory with CUDA (the ``[cuda]`` extra) ``__dlpack__`` is
``kDLCUDA``: an array allocated in memory CUDA sees (``Device.set_cuda_memory``) is the same
pointer in PyTorch and CuPy, writes go both ways, and such a tensor comes back to clnp as
the same memory. A tensor PyTorch allocated comes to clnp as one copy on the GPU, into memory
CUDA sees. Elsewhere (CI) these tests skip: tests/test_slot_arena.py runs the arena on
plain memory and tests/test_dlpack.py the capsules.
"""
from __future__ import annotations

import numpy as np
import pytest

import clnp
from clnp._runtime import cuda_memory

NVIDIA = [d for d in clnp.devices() if cuda_memory.supported(d)]
pytestmark = pytest.mark.skipif(not NVIDIA, reason="needs an NVIDIA GPU sharing memory with "
                                                   "CUDA (cuda-bindings)")
torch = pytest.importorskip("torch") if NVIDIA else None


@pytest.fixture
def gpu():
    """The first NVIDIA device, allocating its arrays in memory CUDA sees."""
    d = NVIDIA[0]
    d.set_cuda_memory(True)
    yield d
    clnp.synchronize()
    d.set_cuda_memory(False)


def _ptr(x) -> int:
    return cuda_memory.address_of(x.device, x._buf) + x._offset * x.dtype.itemsize


def test_torch_sees_the_arrays_memory_and_writes_both_ways(gpu):
    x = clnp.arange(1 << 12, dtype=clnp.float32, device=gpu)
    o = cuda_memory.cuda_ordinal(gpu)
    assert x.__dlpack_device__() == (2, o)
    t = torch.from_dlpack(x)
    assert t.device == torch.device("cuda", o) and t.data_ptr() == _ptr(x)   # one memory
    t.mul_(2)
    torch.cuda.synchronize(o)
    np.testing.assert_array_equal(clnp.asnumpy(x[:3]), [0, 2, 4])
    x[0] = -7.0
    clnp.synchronize()
    assert float(t[0]) == -7.0
    v = x.reshape(64, 64)[::2, 1::3]                    # a strided view: same memory
    tv = torch.from_dlpack(v)
    assert tv.data_ptr() == _ptr(v) and tv.stride() == (128, 3)
    np.testing.assert_array_equal(tv.cpu().numpy(), clnp.asnumpy(v))


def test_a_tensor_from_clnp_comes_back_as_the_same_memory(gpu):
    x = clnp.ones((8, 8), dtype=clnp.float32, device=gpu)
    t = torch.from_dlpack(x)
    y = clnp.from_dlpack(t[2:, 1:])
    assert y._buf is x._buf and _ptr(y) == t[2:, 1:].data_ptr()
    y *= 3                                               # clnp writes, PyTorch reads
    clnp.synchronize()
    assert float(t[2, 1]) == 3.0 and float(t[0, 0]) == 1.0
    z = clnp.from_dlpack(t, copy=True)
    assert z._buf is not x._buf
    np.testing.assert_array_equal(clnp.asnumpy(z), t.cpu().numpy())


def test_torch_allocations_are_copied_on_the_gpu_and_export_back_in_place():
    d = NVIDIA[0]
    o = cuda_memory.cuda_ordinal(d)
    t = torch.arange(30, dtype=torch.float64, device=f"cuda:{o}").reshape(5, 6)[:, 1::2].t()
    y = clnp.from_dlpack(t)                              # torch's memory: copied
    assert y.device is d and y.shape == (3, 5) and y.strides == (16, 48)
    np.testing.assert_array_equal(clnp.asnumpy(y), t.cpu().numpy())
    assert clnp.asarray(t).shape == (3, 5)              # asarray takes the same path
    back = torch.from_dlpack(y)                          # the copy is in memory CUDA sees
    assert back.data_ptr() == _ptr(y)
    with pytest.raises(BufferError, match=r"from_dlpack\(copy=False\): Tensor's CUDA memory "
                                          r"was not allocated by clnp"):
        clnp.from_dlpack(t, copy=False)


def test_arrays_in_opencl_memory_export_a_copy_or_refuse(gpu):
    gpu.set_cuda_memory(False)
    x = clnp.arange(5, dtype=clnp.int32, device=gpu)
    t = torch.from_dlpack(x)                             # a copy, on the GPU
    assert t.is_cuda and t.tolist() == [0, 1, 2, 3, 4]
    t[0] = 9
    assert int(x[0]) == 0
    with pytest.raises(BufferError, match=r"set_cuda_memory\(True\)"):
        x.__dlpack__(copy=False)
    from clnp._runtime import dlpack
    for version, copied in (((1, 0), True), (None, False)):   # only 1.0 can say "copied"
        imp = dlpack.consume(x.__dlpack__(max_version=version))
        assert imp.copied is copied and imp.device == x.__dlpack_device__()
        imp.release()
    with pytest.raises((BufferError, RuntimeError, ValueError)):
        np.from_dlpack(x)                                # NumPy reads host memory only
    with pytest.raises(ValueError, match="stream=0"):
        x.__dlpack__(stream=0)
    h = np.from_dlpack(_Host(x))                         # a host copy when asked
    np.testing.assert_array_equal(h, [0, 1, 2, 3, 4])


class _Host:
    """``x`` asked for a host copy (NumPy's reader takes kDLCPU only)."""

    def __init__(self, x):
        self.x = x

    def __dlpack_device__(self):
        return (1, 0)

    def __dlpack__(self, **kw):
        return self.x.__dlpack__(dl_device=(1, 0), max_version=kw.get("max_version"))


def test_cupy_and_jax_read_the_array(gpu):
    cupy = pytest.importorskip("cupy")
    x = clnp.linspace(0, 1, 100, dtype=clnp.float32, device=gpu)
    c = cupy.from_dlpack(x)
    assert c.data.ptr == _ptr(x)
    np.testing.assert_array_equal(cupy.asnumpy(c), clnp.asnumpy(x))
    jax = pytest.importorskip("jax")
    if not any(dev.platform == "gpu" for dev in jax.devices()):
        pytest.skip("JAX has no GPU here")
    j = jax.dlpack.from_dlpack(x)
    np.testing.assert_array_equal(np.asarray(j), clnp.asnumpy(x))


def test_a_torch_model_and_clnp_share_parameters_and_activations(gpu):
    """A PyTorch CUDA layer runs on clnp's arrays in place: its weight is clnp's memory, its
    input comes from clnp and its output is written into clnp's array (``out=``); clnp
    then continues from that memory. No byte is copied either way."""
    o = cuda_memory.cuda_ordinal(gpu)
    rng = np.random.default_rng(0)
    w = clnp.asarray(rng.standard_normal((4, 3)).astype(np.float32), device=gpu)
    x = clnp.asarray(rng.standard_normal((2, 3)).astype(np.float32), device=gpu)
    y = clnp.empty((2, 4), dtype=clnp.float32, device=gpu)
    lin = torch.nn.Linear(3, 4, bias=False, device=f"cuda:{o}")
    with torch.no_grad():
        lin.weight = torch.nn.Parameter(torch.from_dlpack(w))
        assert lin.weight.data_ptr() == _ptr(w)
        torch.matmul(torch.from_dlpack(x), lin.weight.t(), out=torch.from_dlpack(y))
    torch.cuda.synchronize(o)
    np.testing.assert_allclose(clnp.asnumpy(y), clnp.asnumpy(x) @ clnp.asnumpy(w).T,
                               rtol=1e-5, atol=1e-5)
    assert _ptr(clnp.from_dlpack(torch.from_dlpack(y))) == _ptr(y)


def test_a_jitted_step_on_memory_cuda_sees_equals_opencl_memory(gpu):
    import clnp_grad as cg
    rng = np.random.default_rng(1)
    w0 = rng.standard_normal((64, 32)).astype(np.float32)
    xs = rng.standard_normal((128, 64)).astype(np.float32)
    step = cg.jit(lambda w, x: w - 0.1 * cg.grad(lambda w: clnp.mean(clnp.tanh(x @ w) ** 2))(w))

    def run():
        w = clnp.asarray(w0, device=gpu)
        x = clnp.asarray(xs, device=gpu)
        for _ in range(4):
            w = step(w, x)
        return w
    shared = run()
    assert cuda_memory.address_of(gpu, shared._buf) is not None
    gpu.set_cuda_memory(False)
    plain = run()
    assert cuda_memory.address_of(gpu, plain._buf) is None
    np.testing.assert_allclose(clnp.asnumpy(shared), clnp.asnumpy(plain), rtol=1e-6, atol=1e-6)
