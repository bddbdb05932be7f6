"""clnp_nn.data.DataLoader: batches, epochs, devices, the background thread's errors and
shutdown."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import clnp as xp
from clnp_nn.data import DataLoader


def _loader_threads():
    return [t for t in threading.enumerate() if t.name == "clnp_nn.DataLoader"]


def _host(batch):
    if isinstance(batch, tuple):
        return tuple(xp.asnumpy(b) for b in batch)
    if isinstance(batch, dict):
        return {k: xp.asnumpy(v) for k, v in batch.items()}
    return xp.asnumpy(batch)


@pytest.mark.parametrize("prefetch", [0, 2])
@pytest.mark.parametrize("drop_last", [False, True])
def test_batches_follow_the_epoch_permutation(device, prefetch, drop_last):
    x = np.arange(23 * 3, dtype=np.float32).reshape(23, 3)
    y = np.arange(23, dtype=np.int32)
    loader = DataLoader((x, y), batch_size=5, seed=3, drop_last=drop_last,
                        prefetch=prefetch, device=device)
    assert len(loader) == (4 if drop_last else 5)
    for epoch in range(2):
        order = np.random.default_rng(3 + epoch).permutation(23)
        batches = list(loader)
        assert len(batches) == len(loader)
        for i, (xb, yb) in enumerate(batches):
            assert xb.device == device and yb.device == device
            assert xb.dtype == xp.float32 and yb.dtype == xp.int32
            rows = order[i * 5:(i + 1) * 5]
            np.testing.assert_array_equal(xp.asnumpy(xb), x[rows])
            np.testing.assert_array_equal(xp.asnumpy(yb), y[rows])
        seen = np.concatenate([xp.asnumpy(yb) for _, yb in batches])
        assert len(seen) == (20 if drop_last else 23) and len(set(seen.tolist())) == len(seen)
    assert loader.epoch == 2


def test_forms_and_no_shuffle(device):
    a = np.arange(10, dtype=np.int64)
    single = list(DataLoader(a, 4, shuffle=False, device=device))
    assert [xp.asnumpy(b).tolist() for b in single] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    d = list(DataLoader({"a": a, "b": a * 2}, 6, shuffle=False, device=device))
    assert set(d[0]) == {"a", "b"} and xp.asnumpy(d[1]["b"]).tolist() == [12, 14, 16, 18]
    lst = next(iter(DataLoader([a, xp.asarray(a, device=device)], 3, shuffle=False,
                               device=device)))
    assert isinstance(lst, tuple) and xp.asnumpy(lst[1]).tolist() == [0, 1, 2]


def test_epochs_are_deterministic_and_resumable(device):
    x = np.arange(50, dtype=np.float32)
    first = [_host(b) for _ in range(3) for b in DataLoader(x, 8, seed=11, device=device)]
    a = DataLoader(x, 8, seed=11, device=device)
    runs = [[_host(b) for b in a] for _ in range(3)]
    b = DataLoader(x, 8, seed=11, device=device)
    b.set_epoch(2)                     # a run resumed at epoch 2
    for u, v in zip(runs[2], [_host(t) for t in b]):
        np.testing.assert_array_equal(u, v)
    assert not all(np.array_equal(u, v) for u, v in zip(runs[0], runs[1]))
    for u, v in zip(first[:len(runs[0])], runs[0]):
        np.testing.assert_array_equal(u, v)


def test_early_stop_and_errors_shut_the_thread_down(device, monkeypatch):
    x = np.zeros((100, 2), np.float32)
    loader = DataLoader(x, 2, prefetch=3, device=device)
    it = iter(loader)
    next(it)
    assert len(_loader_threads()) == 1
    it.close()                         # as a `break` out of the for loop does
    assert not _loader_threads()
    unstarted = iter(loader)           # dropped before its first batch: no thread to leak
    del unstarted
    assert not _loader_threads()

    calls = []
    real = DataLoader._batch

    def flaky(self, rows, dev):
        calls.append(len(rows))
        if len(calls) == 3:
            raise RuntimeError("decode failed in batch 3")
        return real(self, rows, dev)
    monkeypatch.setattr(DataLoader, "_batch", flaky)
    got = []
    with pytest.raises(RuntimeError, match="decode failed in batch 3"):
        for b in loader:
            got.append(b)
    assert len(got) == 2 and not _loader_threads()


def test_uploads_overlap_with_compute(device):
    # a consumer that launches kernels while the thread uploads sees every batch intact
    x = np.random.default_rng(0).standard_normal((64, 32)).astype(np.float32)
    w = xp.asarray(np.eye(32, dtype=np.float32), device=device)
    total = 0.0
    for xb in DataLoader(x, 4, seed=1, prefetch=4, device=device):
        total += float(xp.sum(xp.tanh(xb @ w)))
    np.testing.assert_allclose(total, np.sum(np.tanh(x)), rtol=1e-4)


def test_loader_thread_builds_no_kernels(device):
    # the thread-safety argument of clnp_nn.data: the loader only allocates and copies
    x = np.arange(40, dtype=np.float32).reshape(20, 2)
    y = np.arange(20, dtype=np.int64)
    next(iter(DataLoader((x, y), 4, device=device)))     # first use may set up the queue
    before = (len(device._kernels), len(device._programs))
    for _ in DataLoader((x, y), 4, prefetch=2, device=device):
        pass
    assert (len(device._kernels), len(device._programs)) == before


def test_argument_errors(device):
    x = np.zeros((4, 2), np.float32)
    with pytest.raises(ValueError, match="batch_size must be an int >= 1"):
        DataLoader(x, 0)
    with pytest.raises(ValueError, match="prefetch must be an int >= 0"):
        DataLoader(x, 2, prefetch=-1)
    with pytest.raises(ValueError, match=r"same length.*arrays\[1\]: \(3,\)"):
        DataLoader((x, np.zeros(3)), 2)
    with pytest.raises(ValueError, match="leading batch dimension"):
        DataLoader(np.float32(1.0), 2)
    with pytest.raises(TypeError, match="dtype <U1"):
        DataLoader(np.array(["a", "b"]), 1)
    with pytest.raises(ValueError, match="no OpenCL device"):
        DataLoader(x, 2, device="nosuchdevice:7")
    assert DataLoader(x, 2, device=device.key).device == device
    with pytest.raises(ValueError, match="arrays is empty"):
        DataLoader((), 1)
    if not device.has_fp64:
        with pytest.raises(TypeError, match="no cl_khr_fp64"):
            iter(DataLoader(np.zeros(3), 1, device=device))
