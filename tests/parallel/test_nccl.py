"""pmap's collectives through NCCL on memory shared between OpenCL and CUDA (issue #24).

On an NVIDIA machine with two GPUs or more (and ``cuda-bindings``/CuPy, the ``[cuda]``
extra) every collective runs in NCCL and must equal the NumPy oracle and the host path; the
memory a clnp buffer shares is the memory CuPy and PyTorch see (the same pointer). Elsewhere
(CI: PoCL, no CUDA) the checks that remain are that nothing imports CUDA and that the host
path serves every collective.
"""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import clnp
from clnp._runtime import cuda_memory
from clnp_nn import parallel as P
from clnp_nn.parallel import nccl, transport

import _parallel_oracle as oracle

NVIDIA = [d for d in clnp.devices() if cuda_memory.supported(d)]
needs_two = pytest.mark.skipif(len(NVIDIA) < 2 or nccl._modules() is None,
                               reason="needs two NVIDIA GPUs sharing memory with CUDA, and "
                                      "CuPy's NCCL")
needs_one = pytest.mark.skipif(not NVIDIA, reason="needs an NVIDIA GPU sharing memory with "
                                                  "CUDA (cuda-bindings)")


def test_importing_and_using_clnp_imports_no_cuda_module():
    """On a machine without CUDA, nothing imports cuda-bindings or CuPy (the bare ``cuda``
    namespace may be there: cuda-bindings' own .pth file imports it at start-up); a psum of
    two participants runs (on the host path) all the same."""
    code = ("import sys, numpy as np, clnp\n"
            "from clnp_nn.parallel import transport\n"
            "d = clnp.default_device()\n"
            "who = transport.Participants([d, d], [d, d], [0, 1], [2])\n"
            "out = transport.collective_group([('psum', {})], [[clnp.ones(3)], [clnp.ones(3)]], who)\n"
            "assert float(np.asarray(out[1][0]).sum()) == 6.0\n"
            "print(sorted(m for m in sys.modules if m.startswith(('cuda.bindings', 'cupy'))))\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    if not NVIDIA:
        assert res.stdout.strip() == "[]", res.stdout


def test_no_nccl_without_shared_memory():
    """Devices that cannot share memory with CUDA (PoCL) get no NCCL group: the host path
    serves them, and ``supports`` says which collectives and dtypes NCCL would take."""
    d = clnp.default_device()
    if cuda_memory.supported(d):
        pytest.skip("this device shares memory with CUDA")
    who = transport.Participants([d, d], [d, d], [0, 1], [2])
    assert nccl.group(who) is None
    assert nccl.collective_group([("psum", {})], [[clnp.ones(3)], [clnp.ones(3)]], who) == {}
    assert nccl.supports("psum", np.dtype("float32")) and nccl.supports("psum", np.dtype("complex64"))
    assert not nccl.supports("pmax", np.dtype("complex64"))
    assert not nccl.supports("psum", np.dtype("bool"))


def test_processes_sharing_a_gpu_get_mpi_and_a_warning(monkeypatch):
    """Two processes that both chose GPU 0 (``mpiexec`` with ``CLNP_DEVICE=gpu`` each) are
    refused by NCCL ("Duplicate GPU detected"); every process decides, from the same gathered
    list, to use MPI instead, and the warning names the processes and says how to fix it.
    The gather across processes is replaced here by what two processes would report."""
    d = clnp.default_device()
    who = type("Who", (), {"local": [d]})()
    monkeypatch.setattr(cuda_memory, "device_uuid", lambda dev: bytes(range(16)))
    monkeypatch.setattr(nccl.mpi, "all_gather_object", lambda obj, what: [obj, obj])
    with pytest.warns(RuntimeWarning, match=r"psum: processes \[0, 1\] all on GPU 00010203"
                                            r".*one GPU per rank.*local_device_ids"):
        assert nccl._one_gpu_per_rank(who, "psum") is False
    monkeypatch.setattr(nccl.mpi, "all_gather_object",
                        lambda obj, what: [obj, [bytes(range(1, 17)).hex()]])
    assert nccl._one_gpu_per_rank(who, "psum") is True


def test_nccl_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("CLNP_NCCL", "0")
    assert not nccl.enabled()
    monkeypatch.setenv("CLNP_NCCL", "1")
    assert nccl.enabled()


@needs_one
def test_shared_memory_is_the_memory_cuda_and_torch_see():
    """OpenCL writes, CuPy and PyTorch read the same pointer and write back."""
    import cupy
    from clnp._core.array import Array
    d = NVIDIA[0]
    n = 1 << 16
    a = cuda_memory.SharedAllocation(d, 4 * n)
    try:
        x = Array(a.buffer, 0, (n,), (1,), np.dtype(np.float32), d)
        x[...] = clnp.arange(n, dtype=clnp.float32, device=d)
        d.queue.finish()
        o = cuda_memory.cuda_ordinal(d)
        with cupy.cuda.Device(o):
            mem = cupy.cuda.UnownedMemory(a.cuda_ptr, 4 * n, owner=a, device_id=o)
            c = cupy.ndarray((n,), cupy.float32, cupy.cuda.MemoryPointer(mem, 0))
            assert bool((c == cupy.arange(n, dtype=cupy.float32)).all())
            try:
                import torch
            except ImportError:
                torch = None
            if torch is not None:
                t = torch.as_tensor(c, device=f"cuda:{o}")
                assert t.data_ptr() == a.cuda_ptr          # zero copies: one allocation
                t.mul_(2)
                torch.cuda.synchronize(o)
            else:
                c *= 2
                cupy.cuda.runtime.deviceSynchronize()
        np.testing.assert_array_equal(clnp.asnumpy(x), 2 * np.arange(n, dtype=np.float32))
        del x
    finally:
        a.free()


@needs_two
@pytest.mark.parametrize("n", sorted({2, len(NVIDIA)}))
def test_every_collective_through_nccl_matches_the_oracle(n):
    devs = NVIDIA[:n]
    who = transport.Participants(devs, devs, list(range(n)), [n])
    assert nccl.group(who) is not None
    rng = np.random.default_rng(5)
    for name, f, ref in oracle.cases(n):
        a = rng.standard_normal((n, n, 2 * n)).astype(np.float32)
        out = np.asarray(P.pmap(f, "i", devices=devs)(a))
        expect = np.stack([np.asarray(o) for o in ref(list(a))])
        np.testing.assert_allclose(out, expect, rtol=1e-5, atol=1e-5, err_msg=name)


@needs_two
def test_a_step_of_gradients_is_one_all_reduce_per_dtype(monkeypatch):
    """pmean of several gradients (two dtypes) packs each dtype's into one NCCL call, with
    the host path's results."""
    devs = NVIDIA[:2]
    calls = []
    real = nccl._all_reduce_many
    monkeypatch.setattr(nccl, "_all_reduce_many",
                        lambda name, lists, who: calls.append((name, len(lists[0]))) or
                        real(name, lists, who))
    f = P.pmap(lambda a, b, c: (P.pmean(a, "i"), P.pmean(b, "i"), P.psum(c, "i")), "i",
               devices=devs)
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((2, 5, 3)).astype(np.float32), rng.standard_normal((2, 7)).astype(np.float32)
    c = rng.integers(0, 9, (2, 4)).astype(np.int32)
    ra, rb, rc = f(a, b, c)
    np.testing.assert_allclose(np.asarray(ra)[0], a.mean(0), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(rb)[1], b.mean(0), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(rc)[0], c.sum(0))
    assert sorted(calls) == [("psum", 1), ("psum", 2)], calls


@needs_one
def test_all_reduce_of_arrays_in_cuda_memory_stages_nothing(monkeypatch):
    """Operands already in memory CUDA sees (``set_cuda_memory``) are all-reduced where they
    lie: no copy in or out. One participant (one GPU) runs the same NCCL calls as several."""
    if nccl._modules() is None:
        pytest.skip("needs CuPy's NCCL")
    d = NVIDIA[0]
    d.set_cuda_memory(True)
    try:
        who = transport.Participants([d], [d], [0], [1])
        xs = [clnp.arange(10, dtype=clnp.float32, device=d),
              clnp.ones((3, 4), dtype=clnp.float32, device=d) * 2,
              clnp.zeros((0,), dtype=clnp.float32, device=d)]
        copies = []
        real_copy = nccl.cl.enqueue_copy
        monkeypatch.setattr(nccl.cl, "enqueue_copy",
                            lambda *a, **k: copies.append(a) or real_copy(*a, **k))
        out = nccl._all_reduce_many("psum", [xs], who)[0]
        assert copies == []
        for x, y in zip(xs, out):
            np.testing.assert_array_equal(clnp.asnumpy(y), clnp.asnumpy(x))
            assert y.shape == x.shape and (x.size == 0 or y._buf is not x._buf)
            assert cuda_memory.address_of(d, y._buf) is not None
        d.set_cuda_memory(False)                     # operands in OpenCL memory: staged
        ys = [clnp.asarray(x, copy=True) for x in xs[:2]]
        out = nccl._all_reduce_many("psum", [ys], who)[0]
        assert copies
        np.testing.assert_array_equal(clnp.asnumpy(out[1]), clnp.asnumpy(xs[1]))
    finally:
        d.set_cuda_memory(False)
