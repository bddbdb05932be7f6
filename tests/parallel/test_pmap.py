"""pmap over two devices: every collective against NumPy, the data-parallel gradient step
against one device on the combined batch, gradients through collectives, ShardedArray, errors.

They need two OpenCL devices of one platform in this process. With fewer (the usual PoCL
set-up) they skip, and ``test_parallel_launch.py`` runs this file again in a subprocess with
``POCL_DEVICES="pthread pthread"`` (two PoCL CPU devices), so the default test command covers
them. (No conftest.py here: ``tests/test_helpers_c.py`` imports the top-level one by name.)"""
from __future__ import annotations

import numpy as np
import pytest

import clnp
import clnp_grad as cg
from clnp_nn import parallel as P

import _parallel_oracle as _oracle
import _parallel_mlp as mlp

N = 2


@pytest.fixture
def devs():
    """The first two devices of the default device's platform, or a skip."""
    d0 = clnp.default_device()
    found = [d for d in clnp.devices() if d.platform_name == d0.platform_name]
    if len(found) < 2:
        pytest.skip("needs two OpenCL devices of one platform (tests/parallel/test_parallel_launch.py "
                    "runs these with POCL_DEVICES='pthread pthread')")
    return found[:2]


CASES = {name: (f, ref) for name, f, ref in _oracle.cases(N)}


@pytest.mark.parametrize("name", sorted(CASES))
def test_collective_matches_numpy(name, devs, rng):
    f, ref = CASES[name]
    a = rng.standard_normal((N, N, 2 * N)).astype(np.float32)
    out = P.pmap(f, "i", devices=devs)(a)
    assert isinstance(out, P.ShardedArray) and out.devices == tuple(devs)
    expect = np.stack([np.asarray(o) for o in ref(list(a))])
    got = np.asarray(out)
    np.testing.assert_allclose(got, expect, rtol=1e-6, atol=1e-6)
    assert got.dtype == expect.dtype or name == "axis_index"
    for i, d in enumerate(devs):
        assert out[i].device is d


def test_value_and_grad_step_equals_one_device(devs, rng):
    """pmap of a value_and_grad step with pmean'd gradients == one device, combined batch."""
    params = mlp.init(rng, (6, 8, 3))
    x = rng.standard_normal((2 * 4, 6)).astype(np.float32)
    y = rng.integers(0, 3, 2 * 4)
    step = P.pmap(mlp.parallel_step, "batch", in_axes=(None, 0, 0), devices=devs)
    dev_params = [clnp.asarray(p, device=devs[0]) for p in params]
    loss, new = step(dev_params, x.reshape(2, 4, 6), y.reshape(2, 4))
    ref_loss, ref_new = mlp.step(dev_params, clnp.asarray(x, device=devs[0]),
                                 clnp.asarray(y, device=devs[0]))
    np.testing.assert_allclose(np.asarray(loss), float(ref_loss), rtol=1e-5)
    for p, r in zip(new, ref_new):
        got = np.asarray(p)
        assert np.array_equal(got[0], got[1])        # replicas bit-identical
        np.testing.assert_allclose(got[0], np.asarray(r), rtol=1e-5, atol=1e-6)
    # the updated (replicated) parameters go back in without leaving their devices: mapped
    # (in_axes=0), each device takes its own replica
    step0 = P.pmap(mlp.parallel_step, "batch", devices=devs)
    loss2, new2 = step0(list(new), x.reshape(2, 4, 6), y.reshape(2, 4))
    assert np.isfinite(np.asarray(loss2)).all()
    ref_loss2, _ = mlp.step(ref_new, clnp.asarray(x, device=devs[0]),
                            clnp.asarray(y, device=devs[0]))
    np.testing.assert_allclose(np.asarray(loss2), float(ref_loss2), rtol=1e-5)


def test_gradients_through_collectives(devs, rng):
    """d/dw of sum_k psum(w * x)^2 and of an all_gather/ppermute chain, per device."""
    w = rng.standard_normal((N, 3)).astype(np.float32)
    x = rng.standard_normal((N, 3)).astype(np.float32)

    def f(w, x):
        s = P.psum(w * x, "i")
        g = P.all_gather(w, "i")                       # (N, 3)
        r = P.ppermute(w, "i", [(0, 1), (1, 0)])
        return clnp.sum(s ** 2) + clnp.sum(g * g[0]) + clnp.sum(r * x)
    got = np.asarray(P.pmap(cg.grad(f), "i", devices=devs)(w, x))
    s = (w * x).sum(0)
    # device k: 2*x_k*psum(psum...): the psum's transpose sums the cotangents of all devices
    e1 = 2 * N * s * x
    # sum(g * g[0]) = sum_j w_j . w_0 -> d/dw_k: (w_0 + [k == 0] * sum_j w_j), summed over
    # the N devices' copies of the loss by all_gather's transpose (psum_scatter)
    e2 = N * (w[0] + (np.arange(N)[:, None] == 0) * w.sum(0))
    e3 = x[::-1]                                     # ppermute's transpose: the inverse swap
    np.testing.assert_allclose(got, e1 + e2 + e3, rtol=1e-5, atol=1e-5)


def test_axes_statics_and_outputs(devs, rng):
    a = rng.standard_normal((3, N)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)

    def f(x, y, k, s):
        return x * y * k + s, P.psum(x, "i")
    out, tot = P.pmap(f, "i", in_axes=(1, None, None, None), out_axes=(0, None),
                      static_broadcasted_argnums=2, devices=devs)(a, b, 2, 0.5)
    np.testing.assert_allclose(np.asarray(out), (a * b[:, None] * 2 + 0.5).T, rtol=1e-6)
    assert not isinstance(tot, P.ShardedArray) and tot.device is devs[0]
    np.testing.assert_allclose(np.asarray(tot), a.sum(1), rtol=1e-6)
    assert np.asarray(out).dtype == np.float32          # the Python scalar stays weak


def test_sharded_array_protocols(devs, rng):
    a = rng.standard_normal((N, 2, 3)).astype(np.float32)
    y = P.pmap(lambda v: v + 1, devices=devs)(a)
    assert y.shape == (N, 2, 3) and y.dtype == np.float32 and len(y) == N
    np.testing.assert_allclose(np.asarray(y), a + 1)
    z = clnp.asarray(y)
    assert isinstance(z, type(clnp.zeros(1))) and z.shape == (N, 2, 3)
    np.testing.assert_allclose(np.asarray(y[1]), a[1] + 1)
    assert y[1].device is devs[1]
    np.testing.assert_allclose(np.asarray(y[1, 0]), a[1, 0] + 1)
    np.testing.assert_allclose(np.asarray(y[:, 1]), a[:, 1] + 1)
    with pytest.raises(IndexError, match="out of bounds"):
        y[N]
    y2 = P.pmap(lambda v: v * 2, devices=devs)(y)     # shards used where they are
    np.testing.assert_allclose(np.asarray(y2), (a + 1) * 2)


def test_constants_and_creation_move_to_each_device(devs, rng):
    c = clnp.asarray(np.arange(3, dtype=np.float32), device=devs[0])
    a = rng.standard_normal((N, 3)).astype(np.float32)
    out = P.pmap(lambda v: v + c + clnp.ones(3, dtype=clnp.float32), devices=devs)(a)
    np.testing.assert_allclose(np.asarray(out), a + np.arange(3) + 1, rtol=1e-6)


def test_errors(devs):
    f = P.pmap(lambda v: P.psum(v, "i"), "i", devices=devs)
    with pytest.raises(ValueError, match=r"has size 3 along its mapped axis 0 \(shape \(3, 2\)\)"
                                         r", but pmap runs on 2 local device"):
        f(np.ones((3, 2), np.float32))
    with pytest.raises(ValueError, match="cannot be mapped"):
        f(np.float32(1.0))
    with pytest.raises(NameError, match="unbound axis name 'j'"):
        P.pmap(lambda v: P.psum(v, "j"), "i", devices=devs)(np.ones((2, 2), np.float32))
    with pytest.raises(TypeError, match="positionally"):
        f(x=np.ones((2, 2), np.float32))
    with pytest.raises(ValueError, match="appears twice"):
        P.pmap(lambda v: v, devices=[devs[0], devs[0]])(np.ones((2, 2), np.float32))
    with pytest.raises(ValueError, match="in_axes has 2 entries for 1"):
        P.pmap(lambda v: v, in_axes=(0, 0), devices=devs)(np.ones((2, 2), np.float32))
    with pytest.raises(NotImplementedError, match="nested pmap"):
        P.pmap(lambda v: f(v[None] * clnp.ones((2, 1))), devices=devs)(np.ones((2, 2)))


def test_collective_inside_control_flow_is_refused(devs):
    from clnp_grad import lax
    f = P.pmap(lambda v: lax.fori_loop(0, 2, lambda i, c: c + P.psum(v, "i"), v), "i",
               devices=devs)
    with pytest.raises(NotImplementedError, match="'psum' sits inside"):
        f(np.ones((2, 3), np.float32))


def test_in_axes_must_be_ints_or_none(devs):
    with pytest.raises(TypeError, match="in_axes must be an int, None, or a pytree prefix"):
        P.pmap(lambda v: v, in_axes=((0, "1"),), devices=devs)
    with pytest.raises(TypeError, match="in_axes must be"):
        P.pmap(lambda v: v, in_axes="0", devices=devs)
    with pytest.raises(TypeError, match="out_axes must be"):
        P.pmap(lambda v: v, out_axes=1.0, devices=devs)


def test_device_order_and_non_default_first_device(devs, rng):
    """devices=[second, first]: tracing happens beside the first listed device's shard."""
    a = rng.standard_normal((N, 3)).astype(np.float32)
    rev = devs[::-1]
    out = P.pmap(lambda v: v + clnp.ones(3, dtype=clnp.float32) + P.axis_index("i"), "i",
                 devices=rev)(a)
    assert out.devices == tuple(rev) and out[0].device is rev[0]
    np.testing.assert_allclose(np.asarray(out), a + 1 + np.arange(N)[:, None], rtol=1e-6)


def test_device_put_replicated_and_sharded(devs, rng):
    a = rng.standard_normal((3, 2)).astype(np.float32)
    rep = P.device_put_replicated({"w": a, "b": clnp.asarray(a[0], device=devs[0])}, devs)
    assert rep["w"].shape == (N, 3, 2) and rep["w"].devices == tuple(devs)
    np.testing.assert_array_equal(np.asarray(rep["w"]), np.stack([a, a]))
    np.testing.assert_array_equal(np.asarray(rep["b"][1]), a[0])
    sh = P.device_put_sharded([a[:1], a[1:2]], devs)
    assert sh[1].device is devs[1]
    out = P.pmap(lambda w, s: w * s, devices=devs)(rep["w"], sh)
    np.testing.assert_allclose(np.asarray(out), np.stack([a * a[:1], a * a[1:2]]), rtol=1e-6)
    with pytest.raises(ValueError, match="1 shards for 2 devices"):
        P.device_put_sharded([a], devs)


def test_vmap_inside_pmap_with_both_axis_names(devs, rng):
    a = rng.standard_normal((N, 3, 4)).astype(np.float32)
    f = P.pmap(cg.vmap(lambda v: P.psum(v, ("i", "j")) - P.pmean(v, "i"), axis_name="j"), "i",
               devices=devs)
    expect = np.broadcast_to(a.sum((0, 1)), a.shape) - np.broadcast_to(a.mean(0), a.shape)
    np.testing.assert_allclose(np.asarray(f(a)), expect, rtol=1e-5, atol=1e-5)
    k = P.pmap(lambda v: P.psum(v, "i"), "i", devices=devs)(np.arange(6).reshape(N, 3))
    assert np.asarray(k).dtype == np.int64
    np.testing.assert_array_equal(np.asarray(k)[1], [3, 5, 7])


def test_reduction_in_several_chunks(devs, rng, monkeypatch):
    from clnp_nn.parallel import transport
    monkeypatch.setattr(transport, "CHUNK_BYTES", 4096)
    a = rng.standard_normal((N, 10_001)).astype(np.float32)
    s, m = P.pmap(lambda v: (P.psum(v, "i"), P.pmin(v, "i")), "i", devices=devs)(a)
    np.testing.assert_allclose(np.asarray(s), np.broadcast_to(a[0] + a[1], a.shape), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(m), np.broadcast_to(a.min(0), a.shape))


def test_reduction_by_exchange_between_two_devices(devs, rng, monkeypatch):
    """Large shards on two devices are exchanged and combined on the devices."""
    from clnp_nn.parallel import transport
    monkeypatch.setattr(transport, "EXCHANGE_MIN_BYTES", 0)
    a = rng.standard_normal((N, 5, 7)).astype(np.float32)
    s, m = P.pmap(lambda v: (P.psum(v, "i"), P.pmax(v, "i")), "i", devices=devs)(a)
    got = np.asarray(s)
    assert np.array_equal(got[0], got[1])
    np.testing.assert_array_equal(got[0], a[0] + a[1])
    np.testing.assert_array_equal(np.asarray(m), np.broadcast_to(a.max(0), a.shape))


def test_jit_inside_pmap(devs, rng):
    a = rng.standard_normal((N, 4)).astype(np.float32)
    f = P.pmap(cg.jit(lambda v: v - P.pmean(v, "i")), "i", devices=devs)
    np.testing.assert_allclose(np.asarray(f(a)), a - a.mean(0), rtol=1e-5, atol=1e-6)


def test_vmap_axis_index_on_a_non_default_device(devs, rng):
    a = rng.standard_normal((3, 2)).astype(np.float32)
    x = clnp.asarray(a, device=devs[1])
    out = cg.vmap(lambda v: v * P.axis_index("i"), axis_name="i")(x)
    assert out.device is devs[1]
    np.testing.assert_allclose(np.asarray(out), a * np.arange(3)[:, None], rtol=1e-6)
