"""Memory accounting: memory_info / release_memory, peak tracking, pool reuse in loops."""
from __future__ import annotations

import gc

import numpy as np
import pytest

import clnp


def test_memory_info_fields(device):
    gc.collect()
    base = clnp.memory_info(device)
    assert isinstance(base, clnp.MemoryInfo)
    assert dict(base) == {"in_use": base.in_use, "pooled": base.pooled,
                          "peak_in_use": base.peak_in_use, "active_blocks": base.active_blocks,
                          "held_blocks": base.held_blocks}
    assert base.peak_in_use >= base.in_use >= 0 and base.pooled >= 0
    n = 1 << 18
    x = clnp.empty((n,), dtype=clnp.float32, device=device)
    info = clnp.memory_info(device)
    assert info.in_use - base.in_use >= 4 * n
    assert info.active_blocks == base.active_blocks + 1
    assert info.peak_in_use >= info.in_use
    del x
    gc.collect()
    after = clnp.memory_info(device)
    assert after.in_use == base.in_use
    assert after.peak_in_use == info.peak_in_use     # the peak survives the free
    assert after.pooled >= 4 * n


def test_release_memory(device):
    n = 1 << 18
    x = clnp.empty((n,), dtype=clnp.float32, device=device)
    y = clnp.ones((n,), dtype=clnp.float32, device=device)
    del x
    gc.collect()
    assert clnp.memory_info(device).pooled >= 4 * n
    # no garbage collection between the release and the check: one could free arrays that
    # earlier tests left in reference cycles, whose blocks would be pooled again (10 small
    # blocks did, once, in a 16-worker run)
    gc.disable()
    try:
        clnp.release_memory(device)
        info = clnp.memory_info(device)
    finally:
        gc.enable()
    assert info.held_blocks == 0 and info.in_use >= 4 * n
    assert info.pooled <= info.in_use // 8       # only the size classes' rounding is left
    np.testing.assert_array_equal(clnp.asnumpy(y), np.ones(n, np.float32))   # live data kept
    del y
    gc.collect()
    gc.disable()
    try:
        clnp.release_memory(reset_peak=True)             # every device
        info = clnp.memory_info(device)
    finally:
        gc.enable()
    assert info.held_blocks == 0 and info.peak_in_use == info.in_use


def test_peak_tracks_the_largest_in_use(device):
    gc.collect()
    clnp.release_memory(device, reset_peak=True)
    start = clnp.memory_info(device).in_use
    big = [clnp.empty((1 << 16,), dtype=clnp.float32, device=device) for _ in range(4)]
    top = clnp.memory_info(device).in_use
    del big
    gc.collect()
    small = clnp.empty((16,), dtype=clnp.float32, device=device)
    info = clnp.memory_info(device)
    assert top - start >= 4 * 4 * (1 << 16)
    assert info.peak_in_use == top > info.in_use
    del small


def test_pool_does_not_grow_in_a_loop(device):
    """About 10^4 small ops (2000 steps of 6 ops, temporaries of several sizes) reuse pooled
    blocks: after a warm-up the pool's total (in use + held) and the bytes in use stay flat."""
    x = clnp.asarray(np.linspace(-1, 1, 257, dtype=np.float32), device=device)
    acc = clnp.zeros((), dtype=clnp.float32, device=device)

    def step(acc):
        y = x * 0.5 + 1.0            # two temporaries of x's size
        return acc + clnp.sum(y[::3]) * 1e-6

    for _ in range(50):
        acc = step(acc)
    clnp.synchronize(device)
    gc.collect()
    warm = clnp.memory_info(device)
    for i in range(2000):
        acc = step(acc)
        if i % 500 == 0:
            clnp.synchronize(device)   # keep the queue short; frees are not deferred anyway
    clnp.synchronize(device)
    gc.collect()
    end = clnp.memory_info(device)
    assert end.in_use == warm.in_use
    assert end.in_use + end.pooled <= warm.in_use + warm.pooled
    h = np.linspace(-1, 1, 257, dtype=np.float32) * np.float32(0.5) + np.float32(1)
    expected = 2050 * float(h[::3].sum()) * 1e-6
    assert abs(float(acc) - expected) < 1e-3 * abs(expected)


def test_memory_functions_take_device_specs(device):
    info = clnp.memory_info(device.key)
    assert info.in_use == clnp.memory_info(device).in_use
    clnp.release_memory(device.key)
    with pytest.raises(ValueError, match="no OpenCL device"):
        clnp.memory_info("no-such-device")
    with pytest.raises(ValueError, match="no OpenCL device"):
        clnp.release_memory("no-such-device")


def test_peak_counts_fast_path_allocations(device):
    """One-op calls (the eager fast path) allocate through the same path as the rest, so
    the peak sees them."""
    x = clnp.ones((1 << 16,), dtype=clnp.float32, device=device)
    x + x                                  # builds the fast-path entry
    clnp.synchronize()
    clnp.release_memory(device, reset_peak=True)
    base = clnp.memory_info(device).peak_in_use
    y = x + x                              # fresh buffer: nothing pooled is left to reuse
    nbytes = y.nbytes
    del y                                  # back to the pool: only the peak remembers it
    assert clnp.memory_info(device).peak_in_use >= base + nbytes


class _RefusingPool:
    """A pool whose first ``refusals`` allocations fail with ``error`` (a driver refusal)."""

    def __init__(self, real, refusals: int, error: Exception):
        self.real, self.refusals, self.error = real, refusals, error
        self.given_back = 0

    def allocate(self, n):
        if self.refusals:
            self.refusals -= 1
            raise self.error
        return self.real.allocate(n)

    def free_held(self):
        self.given_back += 1

    def __getattr__(self, name):
        return getattr(self.real, name)


@pytest.mark.parametrize("refusals", [1, 2])
def test_a_refused_allocation_is_retried_once_after_giving_memory_back(device, monkeypatch,
                                                                        refusals):
    """One refusal: the pool's held memory goes back to the driver and the request is tried
    again; two: DeviceMemoryError naming the request. Other errors are not refusals."""
    import pyopencl as cl
    pool = _RefusingPool(device.pool, refusals, cl.MemoryError("out of resources"))
    monkeypatch.setattr(device, "pool", pool)
    if refusals == 1:
        assert device.alloc(64).size >= 64
    else:
        with pytest.raises(clnp.DeviceMemoryError, match="cannot allocate 64 bytes"):
            device.alloc(64)
    assert pool.given_back == 1
    pool.refusals, pool.error = 1, cl.Error("not a refusal")
    with pytest.raises(cl.Error, match="not a refusal"):
        device.alloc(64)
    assert pool.given_back == 1
