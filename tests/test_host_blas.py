"""Products in the host's BLAS on devices that share host memory (clnp._routines.host_blas):
the layouts BLAS takes in place, the ones that stay on the kernel, the order against queued
kernels, launch capture and jit replays, and the kept host mappings (Device.host_bytes).
Every case runs with ``host_blas.FORCE`` so small operands reach the host path."""
from __future__ import annotations

import subprocess
import sys
import types

import numpy as np
import pytest

import clnp
import clnp_grad
from clnp._core import capture
from clnp._routines import host_blas
from clnp._runtime import device as device_module

RNG = np.random.default_rng(3)


@pytest.fixture
def host_calls(device, monkeypatch):
    """Force products into BLAS where the device shares host memory; count the host runs."""
    if not device.shares_host_memory:
        pytest.skip(f"{device} does not share host memory: products stay on the kernel")
    calls: list[tuple] = []
    run = host_blas.HostProduct.run_on_host

    def counted(self, *bufs):
        calls.append((self.a[1], self.b[1]))
        return run(self, *bufs)
    monkeypatch.setattr(host_blas.HostProduct, "run_on_host", counted)
    monkeypatch.setattr(host_blas, "FORCE", True)
    return calls


def _rand(shape, dtype):
    a = RNG.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * RNG.standard_normal(shape)
    return a.astype(dtype)


def _tol(dtype):
    return dict(rtol=2e-5, atol=2e-5) if np.dtype(dtype) in (np.float32, np.complex64) else \
        dict(rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_products_in_blas_equal_numpy(device, host_calls, dtype):
    if not device.supports(np.dtype(dtype)):
        pytest.skip(f"{device} has no {dtype}")
    a, b = _rand((37, 29), dtype), _rand((29, 41), dtype)
    x, y = clnp.asarray(a, device=device), clnp.asarray(b, device=device)
    cases = [
        (x @ y, a @ b),
        (x.T.T @ y, a @ b),
        (clnp.asarray(a.T.copy(), device=device).T @ y, a @ b),            # column-major A
        (x @ clnp.asarray(b.T.copy(), device=device).T, a @ b),            # column-major B
        (x[3:20] @ y[:, 5:30], a[3:20] @ b[:, 5:30]),                      # leading dims
        (x[4] @ y, a[4] @ b),                                              # vector @ matrix
        (x @ y[:, 7], a @ b[:, 7]),                                        # matrix @ vector
    ]
    for got, want in cases:
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got.to_numpy(), want, **_tol(dtype))
    assert len(host_calls) == len(cases)


def test_batched_and_broadcast_batches(device, host_calls):
    a, b = _rand((4, 3, 9, 7), np.float32), _rand((4, 3, 7, 5), np.float32)
    x, y = clnp.asarray(a, device=device), clnp.asarray(b, device=device)
    np.testing.assert_allclose((x @ y).to_numpy(), a @ b, **_tol(np.float32))
    w = _rand((7, 5), np.float32)
    shared = clnp.asarray(w, device=device)
    np.testing.assert_allclose((x @ shared).to_numpy(), a @ w, **_tol(np.float32))
    bb = clnp.broadcast_to(clnp.asarray(_rand((1, 3, 7, 5), np.float32), device=device),
                           (4, 3, 7, 5))
    np.testing.assert_allclose((x @ bb).to_numpy(), a @ bb.to_numpy(), **_tol(np.float32))
    e = np.einsum("bij,bjk->bik", a[0], b[0])
    got = clnp.einsum("bij,bjk->bik", x[0], y[0])
    np.testing.assert_allclose(got.to_numpy(), e, **_tol(np.float32))
    assert len(host_calls) == 4


def test_layouts_blas_cannot_take_stay_on_the_kernel(device, host_calls):
    a, b = _rand((40, 30), np.float32), _rand((30, 20), np.float32)
    x, y = clnp.asarray(a, device=device), clnp.asarray(b, device=device)
    # no unit stride along either dim of A, a negative step, integers, float16
    np.testing.assert_allclose((x[::2, ::3] @ y[:10]).to_numpy(), a[::2, ::3] @ b[:10],
                               **_tol(np.float32))
    np.testing.assert_allclose((x[:, ::-1] @ y).to_numpy(), a[:, ::-1] @ b, **_tol(np.float32))
    ia = RNG.integers(-5, 5, (6, 4))
    assert np.array_equal((clnp.asarray(ia, device=device) @ clnp.asarray(ia.T, device=device)
                           ).to_numpy(), ia @ ia.T)
    h = a.astype(np.float16)
    np.testing.assert_allclose((clnp.asarray(h, device=device) @ clnp.asarray(h.T, device=device)
                                ).to_numpy().astype(np.float32),
                               (h.astype(np.float32) @ h.T.astype(np.float32)), rtol=2e-2,
                               atol=0.5)
    assert host_calls == []


def test_order_against_queued_kernels_and_reused_memory(device, host_calls):
    """The product reads what kernels queued before it wrote, the kernels queued after it read
    what it wrote, and memory the pool hands out again is never written before its last
    queued reader ran."""
    a, b = _rand((64, 48), np.float32), _rand((48, 32), np.float32)
    x, y = clnp.asarray(a, device=device), clnp.asarray(b, device=device)
    want = a.copy()
    for _ in range(6):
        x = clnp.tanh(((clnp.tanh(x * 0.5) @ y) @ clnp.asarray(b.T, device=device)) * 0.05) + 1
        want = np.tanh(((np.tanh(want * 0.5) @ b) @ b.T) * 0.05) + 1
    np.testing.assert_allclose(x.to_numpy(), want, rtol=1e-4, atol=1e-4)
    assert len(host_calls) == 12


def test_minimum_work_and_switch(device, host_calls, monkeypatch):
    monkeypatch.setattr(host_blas, "FORCE", None)         # by MIN_WORK
    monkeypatch.setattr(host_blas, "MIN_WORK", 16 * 16 * 16)
    a = _rand((16, 16), np.float32)
    x = clnp.asarray(a, device=device)
    np.testing.assert_allclose((x @ x).to_numpy(), a @ a, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose((x[:15] @ x).to_numpy(), a[:15] @ a, rtol=1e-5, atol=1e-5)
    assert len(host_calls) == 1, "16^3 multiply-adds reach MIN_WORK, 15x16x16 do not"
    monkeypatch.setattr(host_blas, "FORCE", False)
    np.testing.assert_allclose((x @ x).to_numpy(), a @ a, rtol=1e-5, atol=1e-5)
    assert len(host_calls) == 1


def test_environment_switch_turns_it_off():
    code = ("import clnp; from clnp._routines import host_blas; "
            "print(host_blas.enabled())")
    for value, want in (("0", "False"), ("1", "True")):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             env={**__import__("os").environ, host_blas.ENV: value},
                             check=True).stdout.split()[-1]
        assert out == want


def test_no_host_products_where_memory_is_not_shared():
    dev = types.SimpleNamespace(shares_host_memory=False)
    f32 = np.dtype(np.float32)
    assert host_blas.plan(dev, f32, f32, (8, 8), (8, (8, 8)), (8, (1, 1)), (8, (1, 8)),
                          (1, 1), ((0, 0), (0, 0), (0, 0)), (0, 0)) is None


def test_capture_records_a_host_step_that_replays(device, host_calls):
    a, b = _rand((20, 12), np.float32), _rand((12, 9), np.float32)
    x, y = clnp.asarray(a, device=device), clnp.asarray(b, device=device)
    res, rep = capture.capture(lambda p, q: clnp.exp(p @ q), [x, y], device)
    assert rep is not None and [s[0] for s in rep.steps].count("h") == 1
    np.testing.assert_allclose(res.to_numpy(), np.exp(a @ b), rtol=1e-5)
    a2, b2 = _rand((20, 12), np.float32), _rand((12, 9), np.float32)
    out, = rep([clnp.asarray(a2, device=device), clnp.asarray(b2, device=device)])
    np.testing.assert_allclose(out.to_numpy(), np.exp(a2 @ b2), rtol=1e-5)


def test_jitted_training_step_with_host_products(device, host_calls, general_path):
    """An MLP step whose products (forward, weight and input gradients, read transposed by
    the SGD update) run in BLAS, through the executable's steps and then its replay (whole
    steps off: they would take products this small into one kernel)."""
    rng = np.random.default_rng(0)
    ps = {"w1": rng.standard_normal((12, 16)).astype(np.float32) * 0.3,
          "w2": rng.standard_normal((16, 3)).astype(np.float32) * 0.3}
    xh = rng.standard_normal((10, 12)).astype(np.float32)

    def loss(p, x):
        return clnp.mean((clnp.tanh(x @ p["w1"]) @ p["w2"]) ** 2)

    def step(p, x):
        g = clnp_grad.grad(loss)(p, x)
        return {k: p[k] - 0.1 * g[k] for k in p}

    def np_step(p, x):
        h = np.tanh(x @ p["w1"])
        z = h @ p["w2"]
        dz = 2 * z / z.size
        dh = (dz @ p["w2"].T) * (1 - h * h)
        return {"w1": p["w1"] - 0.1 * (x.T @ dh), "w2": p["w2"] - 0.1 * (h.T @ dz)}
    jstep = clnp_grad.jit(step)
    p = {k: clnp.asarray(v, device=device) for k, v in ps.items()}
    x = clnp.asarray(xh, device=device)
    want = dict(ps)
    counts = []
    for _ in range(4):            # build, record, replay, replay
        p = jstep(p, x)
        want = np_step(want, xh)
        for k in want:
            np.testing.assert_allclose(p[k].to_numpy(), want[k], rtol=1e-5, atol=1e-6)
        counts.append(len(host_calls))
    replayed = np.diff(counts)
    assert replayed[-1] >= 4 and replayed[-1] == replayed[-2], counts


def test_host_bytes_keeps_one_mapping_per_buffer(device, monkeypatch):
    if not device.shares_host_memory:
        pytest.skip(f"{device} does not share host memory")
    x = clnp.arange(8, dtype=clnp.float32, device=device)
    device.synchronize()
    m = device.host_bytes(x._buf)
    assert m is device.host_bytes(x._buf)
    assert np.array_equal(m[:32].view(np.float32), np.arange(8, dtype=np.float32))
    y = x + 1                     # kernels use a buffer while its mapping is kept
    device.synchronize()
    assert np.array_equal(device.host_bytes(y._buf)[:32].view(np.float32),
                          np.arange(1, 9, dtype=np.float32))
    device.free_pooled()          # memory pressure lets the mappings go
    assert device._host_maps == {}
    monkeypatch.setattr(device_module, "_HOST_MAPS_MAX", 2)
    bufs = [clnp.zeros(4, device=device) for _ in range(3)]
    device.synchronize()
    for b in bufs:
        device.host_bytes(b._buf)
    assert len(device._host_maps) <= 2


def test_documented_minimum_is_the_code_s():
    """docs/linalg.md and docs/env_vars.md state the minimum work; a change of MIN_WORK must
    change them."""
    import math
    import os
    import re
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    exponent = int(math.log2(host_blas.MIN_WORK))
    assert host_blas.MIN_WORK == 1 << exponent
    for doc in ("docs/linalg.md", "docs/env_vars.md"):
        text = open(os.path.join(root, doc)).read()
        stated = set(re.findall(r"at least 2\^(\d+) multiply-adds per matrix", text))
        assert stated == {str(exponent)}, (doc, stated)


def test_host_bytes_refuses_memory_that_is_not_the_host_s(device):
    if device.shares_host_memory:
        fake = types.SimpleNamespace(shares_host_memory=False)
        with pytest.raises(ValueError, match="host_bytes: .*not host memory"):
            type(device).host_bytes(fake, clnp.zeros(4, device=device)._buf)
    else:
        with pytest.raises(ValueError, match="host_bytes: .*not host memory"):
            device.host_bytes(clnp.zeros(4, device=device)._buf)
