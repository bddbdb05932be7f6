"""clnp._core.transfer: asynchronous reads and writes, and copies between devices (within a
context with clEnqueueCopyBuffer, else chunked through the host)."""
from __future__ import annotations

import numpy as np
import pytest

import clnp
from clnp._core.transfer import copy_to_device, start_read, upload, write_into


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


# --------------------------------------------------------------------------------------------
# Pinned staging (clnp._runtime.staging): on GPUs by default; forced here so that PoCL runs it.

from clnp._runtime import staging as _staging
from clnp._core import transfer as _transfer  # noqa: E402
from clnp_nn.parallel import transport  # noqa: E402


@pytest.fixture(params=[False, True], ids=["pageable", "pinned"])
def pinned(request, monkeypatch):
    """Both staging paths, with tiny chunks and windows so that a few KiB cross many chunk
    boundaries and the windowed reads re-enqueue into reused blocks."""
    monkeypatch.setattr(_staging, "FORCE", request.param)
    monkeypatch.setattr(_transfer, "CHUNK_BYTES", 1000)
    monkeypatch.setattr(_transfer, "WINDOW_BYTES", 3000)
    monkeypatch.setattr(transport, "WINDOW_BYTES", 3000)
    return request.param


def _values(rng, dtype, n):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(n) < 0.5
    if dtype.kind == "c":
        return (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dtype)
    if dtype.kind in "iu":
        return rng.integers(-100 if dtype.kind == "i" else 0, 100, n).astype(dtype)
    return rng.standard_normal(n).astype(dtype)


DTYPES = ["float32", "float16", "bool", "complex64", "int8", "int32"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_staged_reads_and_writes(device, rng, pinned, dtype):
    if not device.supports(np.dtype(dtype)):
        pytest.skip(f"{device} has no {dtype}")
    a = _values(rng, dtype, 3 * 1013).reshape(3, 1013)              # odd size, many chunks
    x = clnp.asarray(a, device=device)
    reads = [start_read(x), start_read(x[1:, 7:]), start_read(x[:, ::3]), start_read(x[2])]
    out = np.empty(1013, a.dtype)
    into = start_read(x[0], out)
    for r, e in reversed(list(zip(reads, [a, a[1:, 7:], a[:, ::3], a[2]]))):  # any order
        np.testing.assert_array_equal(r.wait(), e)
    assert np.shares_memory(into.wait(), out)
    np.testing.assert_array_equal(out, a[0])
    host = np.ascontiguousarray(a[::-1])
    up = upload(host, device)                                       # private copy
    up_strided = upload(a[:, ::2], device)
    host[...] = a[0, 0]                                             # changed right after
    np.testing.assert_array_equal(np.asarray(up), a[::-1])
    np.testing.assert_array_equal(np.asarray(up_strided), a[:, ::2])
    z = clnp.asarray(np.zeros_like(a), device=device)
    part = a[1, 5:900].copy()
    write_into(z.reshape(-1), 1013 + 5, part)
    if pinned:                  # staged: copied into a pinned block before returning
        part[...] = a[0, 0]
    expect = np.zeros_like(a)
    expect[1, 5:900] = a[1, 5:900]
    np.testing.assert_array_equal(np.asarray(z), expect)


def test_read_into_a_pinned_block_and_write_from_it(device, rng, pinned):
    """A host array lying in a pinned block is used directly; the block is not handed out
    again before the transfers using it have completed."""
    a = rng.standard_normal(5000).astype(np.float32)
    x = clnp.asarray(a, device=device)
    block = _staging.acquire(device, x.nbytes)
    view = block.view((5000,), np.float32)
    r = start_read(x, view)
    assert _staging.block_of(view) is block and _staging.block_of(view[10:20]) is block
    np.testing.assert_array_equal(r.wait(), a)
    y = upload(view, device, owned=True)
    _staging.release(block)
    again = _staging.acquire(device, x.nbytes)   # may be the same block, only once idle
    again.view((5000,), np.float32)[...] = 0
    np.testing.assert_array_equal(np.asarray(y), a)
    _staging.release(again)
    assert _staging.block_of(np.zeros(3)) is None


def test_pool_is_bounded_and_released(device, rng, monkeypatch):
    monkeypatch.setattr(_staging, "FORCE", True)
    monkeypatch.setenv("CLNP_PINNED_POOL_MB", "1")
    _staging.free_idle(device)
    a = rng.standard_normal(200_000).astype(np.float32)            # 800 kB
    x = clnp.asarray(a, device=device)
    for _ in range(4):
        np.testing.assert_array_equal(start_read(x).wait(), a)
        start_read(x)                                              # never waited for
        y = upload(a, device)
    np.testing.assert_array_equal(np.asarray(y), a)
    clnp.synchronize()
    assert _staging.pooled_bytes(device) <= (1 << 20) + (4 << 20)  # bound + blocks held out
    clnp.release_memory(device)
    assert _staging.pooled_bytes(device) == 0


def test_staging_follows_the_environment(device, monkeypatch):
    monkeypatch.setattr(_staging, "FORCE", None)
    monkeypatch.setenv("CLNP_PINNED", "0")
    assert not _staging.enabled(device)
    monkeypatch.setenv("CLNP_PINNED", "1")
    assert _staging.enabled(device)
    monkeypatch.delenv("CLNP_PINNED")
    assert _staging.enabled(device) == (not device.is_cpu)


@pytest.mark.parametrize("dtype", ["float32", "float16", "complex64", "bool"])
def test_copy_between_devices_staged(rng, pinned, dtype):
    d0 = clnp.default_device()
    devs = [d for d in clnp.devices() if d.platform_name == d0.platform_name][:2]
    if len(devs) < 2:
        devs = [d0, d0]              # same device: one copy within the context
    if not all(d.supports(np.dtype(dtype)) for d in devs):
        pytest.skip(f"no {dtype}")
    a = _values(rng, dtype, 7001)
    x = clnp.asarray(a, device=devs[0])
    for src, expect in ((x, a), (x[13:], a[13:]), (x[::2], a[::2])):
        y = copy_to_device(src, devs[1], chunk_bytes=999)
        assert y.device is devs[1]
        np.testing.assert_array_equal(np.asarray(y), expect)


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "bool"])
@pytest.mark.parametrize("name", ["psum", "pmax", "pmin"])
def test_reduce_collective_staged(rng, pinned, name, dtype):
    d0 = clnp.default_device()
    devs = [d for d in clnp.devices() if d.platform_name == d0.platform_name][:2]
    if len(devs) < 2:
        devs = [d0, d0]
    if not d0.supports(np.dtype(dtype)):
        pytest.skip(f"no {dtype}")
    who = transport.Participants(devs, devs, [0, 1], [2])
    a = [_values(rng, dtype, 2503).reshape(2503) for _ in devs]
    shards = [clnp.asarray(v, device=d) for v, d in zip(a, devs)]
    op = {"psum": np.add, "pmax": np.maximum, "pmin": np.minimum}[name]
    for chunk in (512, 1 << 20):
        outs = transport.reduce_collective(name, shards, who, chunk)
        for o, d in zip(outs, devs):
            assert o.device is d
            np.testing.assert_array_equal(np.asarray(o), op(a[0], a[1]))
    gathered = transport.collective("all_gather", {"axis_name": "i", "axis": 0,
                                                   "tiled": False}, shards, who)
    for o in gathered:
        np.testing.assert_array_equal(np.asarray(o), np.stack(a))


def test_gather_of_0d_shards(rng, pinned):
    """0-d shards (a loss per device) land in their rows of the host stack (a row of a 1-d
    array is a NumPy scalar, not a view)."""
    d0 = clnp.default_device()
    devs = [d for d in clnp.devices() if d.platform_name == d0.platform_name][:2]
    if len(devs) < 2:
        devs = [d0, d0]
    who = transport.Participants(devs, devs, [0, 1], [2])
    shards = [clnp.asarray(np.float32(v), device=d) for v, d in zip((1.5, -2.25), devs)]
    for o in transport.collective("all_gather", {"axis_name": "i", "axis": 0, "tiled": False},
                                  shards, who):
        np.testing.assert_array_equal(np.asarray(o), np.float32([1.5, -2.25]))


# --------------------------------------------------------------------------------------------
# Groups of collectives (transport.collective_group, reduce_many; api._schedule)

def _who():
    """Two participants: two devices of the default platform where there are two, else the
    default device twice."""
    d0 = clnp.default_device()
    devs = [d for d in clnp.devices() if d.platform_name == d0.platform_name][:2]
    devs = devs if len(devs) == 2 else [d0, d0]
    return transport.Participants(devs, devs, [0, 1], [2])


@pytest.mark.parametrize("name", ["psum", "pmax", "pmin"])
def test_reduce_many_matches_numpy(pinned, rng, name):
    who = _who()
    shapes = [(3, 4), (5,), (2, 1, 3), (0,), (700,)]
    host = [[rng.standard_normal(s).astype(np.float32) for s in shapes] for _ in range(2)]
    shards = [[clnp.asarray(a, device=d) for a in lst] for lst, d in zip(host, who.local)]
    out = transport.reduce_many(name, shards, who)
    op = {"psum": np.add, "pmax": np.maximum, "pmin": np.minimum}[name]
    for d, lst in zip(who.local, out):
        for j, r in enumerate(lst):
            assert r.device is d and r.shape == shapes[j]
            np.testing.assert_array_equal(np.asarray(r), op(host[0][j], host[1][j]))
    with pytest.raises(ValueError, match="several dtypes"):
        transport.reduce_many("psum", [[s[0], clnp.astype(s[1], clnp.int32)] for s in shards],
                              who)


def test_collective_group_equals_one_by_one(pinned, rng):
    who = _who()
    params = [("psum", {}), ("pmax", {}), ("all_gather", {"axis": 0, "tiled": False}),
              ("psum", {}), ("psum", {})]
    host = [[rng.standard_normal(4).astype(np.float32),
             rng.standard_normal((2, 3)).astype(np.float32),
             rng.standard_normal(3).astype(np.float32),
             rng.integers(-5, 5, 6).astype(np.int32),
             rng.standard_normal((3, 3)).astype(np.float32)] for _ in range(2)]
    shards = [[clnp.asarray(a, device=d) for a in lst] for lst, d in zip(host, who.local)]
    got = transport.collective_group(params, shards, who)
    for j, (name, p) in enumerate(params):
        ref = transport.collective(name, p, [lst[j] for lst in shards], who)
        for d in range(2):
            assert got[d][j].device is who.local[d]
            assert got[d][j].dtype == ref[d].dtype
            np.testing.assert_array_equal(np.asarray(got[d][j]), np.asarray(ref[d]))
    np.testing.assert_array_equal(np.asarray(got[1][3]), host[0][3] + host[1][3])


def test_one_participant_reduction_is_the_value(rng):
    d = clnp.default_device()
    who = transport.Participants([d], [d], [0], [1])
    x = clnp.asarray(rng.standard_normal(5).astype(np.float32))
    for name in ("psum", "pmax", "pmin"):
        assert transport.collective(name, {}, [x], who)[0] is x


def test_independent_collectives_run_as_one_group(rng):
    """A pmean of every leaf is one step of the plan, however the trace interleaves it with
    other work; a collective of a collective's result is a second group."""
    from clnp_nn.parallel import pmap, pmean, psum
    who = _who()
    devs = list(dict.fromkeys(who.local))
    n = len(devs)

    def f(a, b, c):
        g = [a * 2, clnp.sin(b), c + 1]
        m = pmean(g, "i")
        return m, psum(m[0] * 3, "i")

    host = [rng.standard_normal((n,) + s).astype(np.float32) for s in [(4,), (2, 3), (5,)]]
    pf = pmap(f, "i", devices=devs)
    (m, s) = pf(*[clnp.asarray(h) for h in host])
    graph = next(iter(pf._cache.values()))[0]          # (graph, output tree, out_axes)
    plan = next(iter(graph.__dict__["_pmap_plans"].values()))
    kinds = [(k, len(e)) for k, e in plan.steps]
    assert [k for k, _ in kinds] == ["seg", "coll", "seg", "coll"], kinds
    assert kinds[1][1] == 3 and kinds[3][1] == 1
    ref = [np.mean(h2, axis=0) for h2 in (host[0] * 2, np.sin(host[1]), host[2] + 1)]
    for got, r in zip(m, ref):
        np.testing.assert_allclose(np.asarray(got)[0], r, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.asarray(s)[-1], n * ref[0] * 3, rtol=1e-6, atol=1e-6)
