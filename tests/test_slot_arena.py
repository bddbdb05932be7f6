"""The slot arena (clnp/_runtime/slot_arena.py): arrays in memory that is costly to create,
carved out of chunks and taken back by sweeps. On NVIDIA its chunks are memory shared with
CUDA (``Device.set_cuda_memory``); here they are plain OpenCL buffers with made-up CUDA
addresses, installed as a device's arena, so the same code serves whole workloads in CI."""
from __future__ import annotations

import gc
import itertools

import numpy as np
import pytest

import clnp
from clnp._runtime.opencl import cl
from clnp._runtime.slot_arena import SlotArena, size_class

_ADDRESSES = itertools.count(1)


class _PlainBacking:
    """A chunk of ordinary device memory with a made-up address in "the other API"."""

    made: list["_PlainBacking"] = []

    def __init__(self, device, nbytes: int):
        self.size = nbytes
        self.address = next(_ADDRESSES) << 40
        self.buffer = cl.Buffer(device.context, cl.mem_flags.READ_WRITE, nbytes)
        self.freed = False
        _PlainBacking.made.append(self)

    def free(self) -> None:
        self.buffer.release()
        self.buffer, self.freed = None, True


def _arena(device) -> SlotArena:
    return SlotArena(lambda n: _PlainBacking(device, n), align=device.host_ptr_align,
                     granularity=1 << 16)


@pytest.fixture
def with_arena(device, monkeypatch):
    """``device`` allocating every array in a plain-memory arena, as set_cuda_memory does."""
    device.pool                                      # decided before it is replaced
    arena = _arena(device)
    monkeypatch.setattr(device, "_arena", arena)
    yield arena
    clnp.synchronize()


def test_size_classes_are_aligned_quarter_octaves():
    for align in (1, 64, 128, 1024):
        prev = 0
        for n in list(range(1, 3000)) + [1 << 20, (1 << 20) + 1, 5 << 20]:
            s = size_class(n, align)
            assert s >= n and s % align == 0
            assert s >= prev                         # monotone
            assert s <= max(2 * n, align) and (n < 8 or s <= 1.25 * n + align)
            prev = s


def test_slots_are_sub_buffers_of_shared_chunks_and_taken_back(device):
    arena = _arena(device)
    made = len(_PlainBacking.made)
    bufs = [arena.take(1000) for _ in range(100)]
    assert len(_PlainBacking.made) - made == 1       # one chunk carved into slots
    addresses = sorted(arena.address_of(b) for b in bufs)
    assert len(set(addresses)) == 100
    assert all(b - a >= 1000 for a, b in zip(addresses, addresses[1:]))
    assert arena.info()["in_use"] == 100 * size_class(1000, device.host_ptr_align)
    keep = bufs[:10]
    del bufs
    arena.sweep()
    assert arena.info()["in_use"] == 10 * size_class(1000, device.host_ptr_align)
    again = [arena.take(1000) for _ in range(90)]    # the freed slots come back
    assert len(_PlainBacking.made) - made == 1
    assert not {id(b) for b in again} & {id(b) for b in keep}
    del again
    assert arena.free_unused() == 0                  # a chunk with a lent slot stays
    del keep
    assert arena.free_unused() > 0 and _PlainBacking.made[-1].freed
    assert arena.info() == {"in_use": 0, "pooled": 0, "lent_slots": 0, "free_slots": 0,
                            "chunks": 0, "sweeps": arena.sweeps}


def test_large_requests_get_chunks_of_their_own(device):
    arena = _arena(device)
    made = len(_PlainBacking.made)
    big = arena.take(3 << 20)
    chunk = _PlainBacking.made[-1]
    assert len(_PlainBacking.made) - made == 1 and big is chunk.buffer
    assert arena.address_of(big) == chunk.address
    del big
    arena.sweep()
    assert arena.take((3 << 20) - 100) is chunk.buffer   # same size class: reused


def test_address_lookup_finds_lent_slots_only(device):
    arena = _arena(device)
    a = arena.take(300)
    b = arena.take(300)
    base = arena.address_of(b)
    assert arena.buffer_at(base) == (b, 0)
    assert arena.buffer_at(base + 17) == (b, 17)
    assert arena.buffer_at(arena.address_of(a) + 5)[0] is a
    assert arena.buffer_at(1) is None                          # nobody's
    assert arena.buffer_at(base + 100 * size_class(300, device.host_ptr_align)) is None
    del b
    arena.sweep()
    assert arena.buffer_at(base) is None                       # taken back


def test_sweeps_keep_memory_near_what_is_live(device):
    """A loop that makes and drops arrays holds about 1.5x what is live, not all it made."""
    arena = _arena(device)
    live = [arena.take(1 << 16) for _ in range(64)]            # 4 MiB live
    for _ in range(2000):                                       # 128 MiB made in all
        tmp = arena.take(1 << 16)
        del tmp
    assert arena.sweeps > 0
    assert arena.info()["in_use"] + arena.info()["pooled"] < 16 << 20
    del live


def test_arrays_and_a_jitted_training_step_in_an_arena(device, with_arena):
    """Every allocation of a real workload goes through the arena (eager, jit capture and
    replay, views, in-place updates) and gives the results of OpenCL's own memory."""
    import clnp_grad as cg
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((16, 8)).astype(np.float32)
    xs = rng.standard_normal((32, 16)).astype(np.float32)

    def loss(w, x):
        return clnp.mean(clnp.tanh(x @ w) ** 2)

    step = cg.jit(lambda w, x: w - 0.1 * cg.grad(loss)(w, x))
    w = clnp.asarray(w0, device=device)
    x = clnp.asarray(xs, device=device)
    for _ in range(5):
        w = step(w, x)
    v = clnp.asarray(xs, device=device)[::2, 1::3]
    v2 = v * 2
    got = clnp.asnumpy(w)
    assert with_arena.info()["in_use"] > 0 and with_arena.lent_bytes > 0
    # the same in OpenCL's own memory
    device._arena = None
    w = clnp.asarray(w0, device=device)
    x = clnp.asarray(xs, device=device)
    for _ in range(5):
        w = step(w, x)
    np.testing.assert_allclose(got, clnp.asnumpy(w), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(clnp.asnumpy(v2), xs[::2, 1::3] * 2)


def test_memory_info_and_release_count_the_arena(device, with_arena):
    base = clnp.memory_info(device).in_use
    x = clnp.ones(1 << 15, dtype=clnp.float32, device=device)
    info = device.memory_info()
    assert info["in_use"] >= x.nbytes and clnp.memory_info(device).in_use - base >= x.nbytes
    assert clnp.memory_info(device).peak_in_use >= x.nbytes
    del x
    gc.collect()
    assert clnp.memory_info(device).in_use - base < 1 << 17     # swept when asked
    clnp.synchronize()
    device.free_pooled()
    assert with_arena.info()["chunks"] == 0


def test_cuda_memory_refused_where_cuda_cannot_see_it(device):
    from clnp._runtime import cuda_memory
    if cuda_memory.supported(device):
        pytest.skip("this device shares memory with CUDA")
    assert not device.cuda_memory
    with pytest.raises(ValueError, match=r"set_cuda_memory\(True\): .* cannot share memory "
                                         r"with CUDA: "):
        device.set_cuda_memory(True)
    assert not device.cuda_memory
    device.set_cuda_memory(False)                               # off is always possible


def test_threads_share_an_arena_without_mixing_slots(device, with_arena):
    """Four threads make, fill, check and drop arrays in one arena at once: no slot is ever
    handed to two live arrays (each thread sees only its own values)."""
    import threading
    errors: list[str] = []

    def work(k: int) -> None:
        try:
            for i in range(60):
                a = clnp.full((257 + 31 * (i % 5),), float(k * 1000 + i), dtype=clnp.float32,
                              device=device)
                b = a + 1
                got = clnp.asnumpy(b)
                if not (got == k * 1000 + i + 1).all():
                    errors.append(f"thread {k} step {i}: {got[:3]}")
                del a, b
        except Exception as e:   # noqa: BLE001 -- reported below, with the thread
            errors.append(f"thread {k}: {type(e).__name__}: {e}")
    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:5]
    assert with_arena.sweeps > 0


def test_a_refused_slot_is_retried_once_after_freeing_unused_chunks(device, with_arena,
                                                                     monkeypatch):
    """A CUDA or OpenCL refusal in the arena: unused chunks go back, the request is tried
    again; a second refusal is DeviceMemoryError."""
    real, calls = with_arena.take, {"n": 0, "refuse": 1}

    def take(n):
        calls["n"] += 1
        if calls["refuse"]:
            calls["refuse"] -= 1
            raise RuntimeError("cuMemCreate failed: CUDA_ERROR_OUT_OF_MEMORY")
        return real(n)
    monkeypatch.setattr(with_arena, "take", take)
    assert device.alloc(100).size >= 100 and calls["n"] == 2
    calls["refuse"] = 2
    with pytest.raises(clnp.DeviceMemoryError, match="CUDA_ERROR_OUT_OF_MEMORY"):
        device.alloc(100)
