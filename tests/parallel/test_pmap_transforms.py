"""pmap's out_axes/in_axes beyond 0, the ShardedArray's device axis, and pmap under grad,
jvp, vmap and jit (the ``pmap`` primitive's rules), against NumPy and the unmapped program.

They run on the default platform's devices, two at most: one device in the default test
process, two when ``POCL_DEVICES="pthread pthread"`` gives two (``test_parallel_launch.py``
runs this file that way), so every check covers both the one-device and the cross-device
paths of the collectives."""
from __future__ import annotations

import numpy as np
import pytest

import clnp
import clnp_grad as cg
from clnp_nn import parallel as P


@pytest.fixture
def devs():
    """Up to two devices of the default device's platform, the default device first."""
    d0 = clnp.default_device()
    return [d0] + [d for d in clnp.devices() if d.platform_name == d0.platform_name
                   and d is not d0][:1]


def _np(x):
    return np.asarray(x)


# ---------------------------------------------------------------------------- out_axes
@pytest.mark.parametrize("k", [0, 1, 2, -1, -2, -3])
def test_out_axes_int_matches_numpy_stack(devs, rng, k):
    n = len(devs)
    a = rng.standard_normal((n, 3, 4)).astype(np.float32)
    y = P.pmap(lambda v: v * 2 + 1, devices=devs, out_axes=k)(a)
    expect = np.stack([a[i] * 2 + 1 for i in range(n)], axis=k)
    assert isinstance(y, P.ShardedArray)
    assert y.shard_axis == k % 3 and y.shape == expect.shape and y.ndim == 3
    assert y.size == expect.size and len(y) == expect.shape[0]
    np.testing.assert_allclose(np.asarray(y), expect, rtol=1e-6)
    np.testing.assert_allclose(y.to_numpy(), expect, rtol=1e-6)
    z = clnp.asarray(y)
    assert z.shape == expect.shape
    np.testing.assert_allclose(_np(z), expect, rtol=1e-6)
    for i, (s, d) in enumerate(zip(y.shards, devs)):       # shards stay on their devices
        assert s.device is d and s.shape == (3, 4)
        np.testing.assert_allclose(_np(s), a[i] * 2 + 1, rtol=1e-6)
    np.testing.assert_allclose(_np(y[-1]), expect[-1], rtol=1e-6)
    np.testing.assert_allclose(_np(y[:, -1]), expect[:, -1], rtol=1e-6)
    np.testing.assert_allclose(np.stack([_np(r) for r in y]), expect, rtol=1e-6)
    assert (f"shard_axis={k % 3}" in repr(y)) == (k % 3 != 0)


def test_out_axes_prefixes(devs, rng):
    n = len(devs)
    a = rng.standard_normal((n, 3)).astype(np.float32)

    def f(v):
        return (v + 1, clnp.outer(v, v)), P.psum(v, "i")
    (p, q), s = P.pmap(f, "i", devices=devs, out_axes=((1, -1), None))(a)
    np.testing.assert_allclose(np.asarray(p), (a + 1).T, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(q), np.stack([np.outer(r, r) for r in a], axis=-1),
                               rtol=1e-6)
    assert not isinstance(s, P.ShardedArray) and s.device is devs[0]
    np.testing.assert_allclose(_np(s), a.sum(0), rtol=1e-5)
    # one int for every output; a tuple prefix (1 for both leaves of the first element)
    (p, q), s = P.pmap(f, "i", devices=devs, out_axes=1)(a)
    assert p.shard_axis == q.shard_axis == s.shard_axis == 1
    (p, q), s = P.pmap(f, "i", devices=devs, out_axes=(1, 0))(a)
    assert (p.shard_axis, q.shard_axis, s.shard_axis) == (1, 1, 0)
    np.testing.assert_allclose(np.asarray(s), np.broadcast_to(a.sum(0), a.shape), rtol=1e-5)
    # dicts: a dict prefix by key
    d = P.pmap(lambda v: {"a": v * 2, "b": P.pmax(v, "i")}, "i", devices=devs,
               out_axes={"a": -1, "b": None})(a)
    np.testing.assert_allclose(np.asarray(d["a"]), (2 * a).T, rtol=1e-6)
    np.testing.assert_allclose(_np(d["b"]), a.max(0), rtol=1e-6)


def test_out_axes_errors(devs, rng):
    a = rng.standard_normal((len(devs), 3)).astype(np.float32)
    with pytest.raises(ValueError, match=r"out_axes entry 2 of output 0 \(per-device shape "
                                         r"\(3,\)\) 2 is out of range for rank 2"):
        P.pmap(lambda v: v, devices=devs, out_axes=2)(a)
    with pytest.raises(ValueError, match="out_axes entry -3 .* out of range"):
        P.pmap(lambda v: v, devices=devs, out_axes=-3)(a)
    with pytest.raises(ValueError, match=r"out_axes \(0, 0\) is not a pytree prefix"):
        P.pmap(lambda v: v, devices=devs, out_axes=(0, 0))(a)
    with pytest.raises(ValueError, match=r"out_axes \(0, 0, 0\) is not a pytree prefix"):
        P.pmap(lambda v: (v, v), devices=devs, out_axes=(0, 0, 0))(a)
    with pytest.raises(ValueError, match="not a pytree prefix"):
        P.pmap(lambda v: {"a": v}, devices=devs, out_axes={"b": 0})(a)
    with pytest.raises(TypeError, match="out_axes must be an int, None, or a pytree prefix"):
        P.pmap(lambda v: v, devices=devs, out_axes=(0, "1"))
    with pytest.raises(ValueError, match="shard_axis 3 is out of range"):
        P.ShardedArray([clnp.zeros((2, 2), device=devs[0])], shard_axis=3)


# ----------------------------------------------------------------- ShardedArray as input
def test_sharded_array_with_device_axis_back_into_pmap(devs, rng):
    n = len(devs)
    a = rng.standard_normal((n, 3, 2)).astype(np.float32)
    y = P.pmap(lambda v: v + 1, devices=devs, out_axes=1)(a)          # (3, n, 2)
    e = np.moveaxis(a + 1, 0, 1)
    # mapped along its device axis: each device takes its own shard, in place
    r = P.pmap(lambda v: v * 3, devices=devs, in_axes=1)(y)
    np.testing.assert_allclose(np.asarray(r), (a + 1) * 3, rtol=1e-6)
    # mapped along another axis of the same size: gathered and split again
    if n == 2:
        b = P.pmap(lambda v: v + 1, devices=devs, out_axes=2)(
            rng.standard_normal((n, 3, 2)).astype(np.float32))     # (3, 2, n)
        r = P.pmap(lambda v: v.sum(), devices=devs, in_axes=1)(b)
        np.testing.assert_allclose(np.asarray(r), np.asarray(b).sum(axis=(0, 2)), rtol=1e-5)
    # broadcast (in_axes=None): every device sees the whole stacked array, as in JAX
    r = P.pmap(lambda v, w: v.sum() + w.sum(), devices=devs, in_axes=(0, None))(a, y)
    np.testing.assert_allclose(np.asarray(r), a.sum(axis=(1, 2)) + e.sum(), rtol=1e-5)


def test_in_axes_nonzero_negative_and_prefixes(devs, rng):
    n = len(devs)
    a = rng.standard_normal((3, n, 4)).astype(np.float32)
    b = rng.standard_normal((4, n)).astype(np.float32)
    c = rng.standard_normal(4).astype(np.float32)
    for ax in (1, -2):
        out = P.pmap(lambda v: v * 2, devices=devs, in_axes=ax)(a)
        np.testing.assert_allclose(np.asarray(out), np.moveaxis(a, 1, 0) * 2, rtol=1e-6)
    out = P.pmap(lambda x, y, z: x @ y + z, devices=devs, in_axes=(1, -1, None))(a, b, c[:3])
    np.testing.assert_allclose(np.asarray(out),
                               np.stack([a[:, i] @ b[:, i] + c[:3] for i in range(n)]),
                               rtol=1e-5, atol=1e-5)
    # a pytree prefix: a dict argument with its own axis per key
    out = P.pmap(lambda d: d["x"].sum(-1) * d["s"], devices=devs,
                 in_axes=({"x": 1, "s": None},))({"x": a, "s": c[:3]})
    np.testing.assert_allclose(np.asarray(out), np.stack([a[:, i].sum(-1) * c[:3]
                                                         for i in range(n)]), rtol=1e-5)
    with pytest.raises(ValueError, match=r"in_axes 2 of argument 0 \(shape \(4, %d\)\) 2 is "
                                         r"out of range" % n):
        P.pmap(lambda v: v, devices=devs, in_axes=2)(b)
    with pytest.raises(ValueError, match="in_axes entry 0 .* is not a pytree prefix"):
        P.pmap(lambda d: d, devices=devs, in_axes=({"y": 0},))({"x": a})


# -------------------------------------------------------------- pmap under transformations
def _body(w, x):
    """One device's program: elementwise work plus psum and pmean across the devices."""
    y = clnp.tanh(x * w)
    return P.psum(y, "i") * y - P.pmean(y * y, "i") + 0.5 * w


def _unmapped(w, xs, n):
    """The same computation written without pmap: a loop over the devices' slices, the
    collectives as sums over the loop."""
    ys = [clnp.tanh(xs[k] * w) for k in range(n)]
    s = sum(ys[1:], ys[0])
    m = sum([y * y for y in ys[1:]], ys[0] * ys[0]) / n
    return clnp.stack([s * y - m + 0.5 * w for y in ys])


def _data(devs, rng):
    n = len(devs)
    d0 = devs[0]
    w = clnp.asarray(rng.standard_normal(4).astype(np.float32), device=d0)
    xs = clnp.asarray(rng.standard_normal((n, 3, 4)).astype(np.float32), device=d0)
    return n, w, xs


def test_grad_of_pmap_matches_unmapped_and_finite_differences(devs, rng):
    n, w, xs = _data(devs, rng)
    pf = P.pmap(_body, "i", in_axes=(None, 0), devices=devs)

    def loss(w, xs):
        # eagerly pf gives a ShardedArray, which clnp functions take through clnp.asarray;
        # under grad a traced array (asarray passes it through)
        return clnp.sum(clnp.asarray(pf(w, xs)) ** 2)

    def loss_ref(w, xs):
        return clnp.sum(_unmapped(w, xs, n) ** 2)
    np.testing.assert_allclose(float(loss(w, xs)), float(loss_ref(w, xs)), rtol=1e-5)
    gw, gx = cg.grad(loss, argnums=(0, 1))(w, xs)
    rw, rx = cg.grad(loss_ref, argnums=(0, 1))(w, xs)
    assert gw.shape == w.shape and gx.shape == xs.shape
    np.testing.assert_allclose(_np(gw), _np(rw), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(_np(gx), _np(rx), rtol=1e-4, atol=1e-5)
    # finite differences along random directions (float64 where the device has it)
    dt = np.float64 if devs[0].has_fp64 else np.float32
    eps, tol = (1e-6, 1e-6) if dt == np.float64 else (1e-2, 2e-2)
    w64, x64 = clnp.asarray(_np(w).astype(dt)), clnp.asarray(_np(xs).astype(dt))
    g64w, g64x = cg.grad(loss, argnums=(0, 1))(w64, x64)
    for arg, g in ((0, g64w), (1, g64x)):
        u = rng.standard_normal(g.shape).astype(dt)
        base = [_np(w64), _np(x64)]
        hi, lo = list(base), list(base)
        hi[arg] = base[arg] + eps * u
        lo[arg] = base[arg] - eps * u
        fd = (float(loss(*map(clnp.asarray, hi))) - float(loss(*map(clnp.asarray, lo)))) / \
            (2 * eps)
        np.testing.assert_allclose(float((_np(g) * u).sum()), fd, rtol=tol, atol=tol)


def test_grad_of_pmap_out_axes(devs, rng):
    """out_axes=None takes the first device's value, so its cotangent reaches that device
    only; a mapped out_axes transposes to the same axis."""
    n, w, xs = _data(devs, rng)
    x2 = xs[:, 0]                                            # (n, 4)
    first = P.pmap(lambda x: x * x, devices=devs, out_axes=None)
    g = cg.grad(lambda x: clnp.sum(first(x)))(x2)
    expect = np.zeros(x2.shape, np.float32)
    expect[0] = 2 * _np(x2)[0]
    np.testing.assert_allclose(_np(g), expect, rtol=1e-6)
    total = P.pmap(lambda x: P.psum(x * x, "i"), "i", devices=devs, out_axes=None)
    np.testing.assert_allclose(_np(cg.grad(lambda x: clnp.sum(total(x)))(x2)), 2 * _np(x2),
                               rtol=1e-6)
    outer = P.pmap(lambda x: clnp.outer(x, x), devices=devs, out_axes=2)
    c = rng.standard_normal((4, 4, n)).astype(np.float32)
    g = cg.grad(lambda x: clnp.sum(outer(x) * clnp.asarray(c, device=devs[0])))(x2)
    xn = _np(x2)
    expect = np.stack([(c[..., i] + c[..., i].T) @ xn[i] for i in range(n)])
    np.testing.assert_allclose(_np(g), expect, rtol=1e-5, atol=1e-5)


def test_value_and_grad_of_pmap_in_a_loss(devs, rng):
    """JAX's pattern: grad(lambda w: pmap(f, in_axes=(None, 0))(w, xs).sum())(w); the
    broadcast argument's cotangent is summed over the devices."""
    n, w, xs = _data(devs, rng)
    pf = P.pmap(lambda w, x: clnp.sum(clnp.sin(x @ w)), in_axes=(None, 0), devices=devs)
    v, g = cg.value_and_grad(lambda w: pf(w, xs[:, :, :]).sum())(w)
    rv, rg = cg.value_and_grad(
        lambda w: sum(clnp.sum(clnp.sin(xs[k] @ w)) for k in range(n)))(w)
    np.testing.assert_allclose(float(v), float(rv), rtol=1e-5)
    np.testing.assert_allclose(_np(g), _np(rg), rtol=1e-5, atol=1e-6)


def test_jvp_of_pmap(devs, rng):
    n, w, xs = _data(devs, rng)
    pf = P.pmap(_body, "i", in_axes=(None, 0), devices=devs)
    tw = clnp.asarray(rng.standard_normal(4).astype(np.float32), device=devs[0])
    tx = clnp.asarray(rng.standard_normal(xs.shape).astype(np.float32), device=devs[0])
    out, tout = cg.jvp(pf, (w, xs), (tw, tx))
    rout, rtout = cg.jvp(lambda w, x: _unmapped(w, x, n), (w, xs), (tw, tx))
    assert isinstance(out, type(w)) and out.device is devs[0]
    np.testing.assert_allclose(_np(out), _np(rout), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_np(tout), _np(rtout), rtol=1e-4, atol=1e-5)
    # second order: a Hessian-vector product (jvp of grad through pmap)
    def loss(w):
        return clnp.sum(pf(w, xs) ** 2)
    hv = cg.jvp(cg.grad(loss), (w,), (tw,))[1]
    rhv = cg.jvp(cg.grad(lambda w: clnp.sum(_unmapped(w, xs, n) ** 2)), (w,), (tw,))[1]
    np.testing.assert_allclose(_np(hv), _np(rhv), rtol=1e-4, atol=1e-4)


def test_vmap_of_pmap_matches_a_loop(devs, rng):
    n, w, xs = _data(devs, rng)
    pf = P.pmap(_body, "i", in_axes=(None, 0), devices=devs)
    W = clnp.asarray(rng.standard_normal((5, 4)).astype(np.float32), device=devs[0])
    got = cg.vmap(lambda w: pf(w, xs))(W)
    assert got.shape == (5, n, 3, 4)
    expect = np.stack([_np(pf(W[b], xs)) for b in range(5)])
    np.testing.assert_allclose(_np(got), expect, rtol=1e-5, atol=1e-6)
    # the batch axis of the mapped argument second (vmap in_axes=1): moved off the device axis
    XB = rng.standard_normal((n, 5, 3, 4)).astype(np.float32)
    got = cg.vmap(lambda x: pf(w, x), in_axes=1)(clnp.asarray(XB, device=devs[0]))
    expect = np.stack([_np(pf(w, XB[:, b])) for b in range(5)])
    np.testing.assert_allclose(_np(got), expect, rtol=1e-5, atol=1e-6)
    # out_axes=1 and a collective over vmap's own named axis inside the pmapped body
    g = P.pmap(lambda x: x - P.pmean(x, "b") + P.psum(x, "i"), "i", devices=devs,
               out_axes=1)
    V = rng.standard_normal((5, n, 3)).astype(np.float32)
    got = cg.vmap(g, axis_name="b")(clnp.asarray(V, device=devs[0]))
    assert got.shape == (5, 3, n)
    expect = np.moveaxis(V - V.mean(0) + V.sum(1, keepdims=True), 1, 2)
    np.testing.assert_allclose(_np(got), expect, rtol=1e-5, atol=1e-5)
    # grad inside vmap (per-example gradients through pmap)
    pg = cg.vmap(cg.grad(lambda w: clnp.sum(pf(w, xs) ** 2)))(W)
    for b in range(2):
        np.testing.assert_allclose(
            _np(pg[b]), _np(cg.grad(lambda w: clnp.sum(_unmapped(w, xs, n) ** 2))(W[b])),
            rtol=1e-4, atol=1e-4)


def test_jit_of_pmap_matches_eager(devs, rng):
    n, w, xs = _data(devs, rng)
    pf = P.pmap(_body, "i", in_axes=(None, 0), devices=devs)
    jf = cg.jit(lambda w, x: pf(w, x) * 2.0 + 1.0)
    for _ in range(2):                         # the compiled pmap step runs on new values
        got = jf(w, xs)
        assert type(got) is type(w) and got.device is devs[0] and got.shape == (n, 3, 4)
        np.testing.assert_allclose(_np(got), _np(pf(w, xs)) * 2 + 1, rtol=1e-6, atol=1e-6)
        w = w + 0.25
    assert "pmap[" in cg.jit(pf).lower(w, xs).as_text()
    # jit of a pmap object itself, with out_axes other than 0
    po = P.pmap(lambda x: clnp.outer(x, x), devices=devs, out_axes=2)
    x2 = xs[:, 0]
    np.testing.assert_allclose(_np(cg.jit(po)(x2)), np.asarray(po(x2)), rtol=1e-6)
    # a Python scalar jit traces (weakly typed) stays weak inside the pmap: float32 results
    ps = P.pmap(lambda x, s: x * s, in_axes=(0, None), devices=devs)
    assert cg.jit(lambda s: ps(x2, s))(2.0).dtype == np.float32
    np.testing.assert_allclose(_np(cg.jit(lambda s: ps(x2, s))(2.0)), 2 * _np(x2), rtol=1e-6)
    # jit of grad and grad of jit through pmap
    loss = lambda w: clnp.sum(pf(w, xs) ** 2)        # noqa: E731
    ref = cg.grad(lambda w: clnp.sum(_unmapped(w, xs, n) ** 2))(w)
    np.testing.assert_allclose(_np(cg.jit(cg.grad(loss))(w)), _np(ref), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(_np(cg.grad(cg.jit(loss))(w)), _np(ref), rtol=1e-4, atol=1e-5)


def test_transformations_of_pmap_errors(devs, rng):
    n, w, xs = _data(devs, rng)
    inner = P.pmap(lambda v: v * 2, devices=devs)
    with pytest.raises(NotImplementedError, match="nested pmap"):
        P.pmap(lambda v: inner(clnp.stack([v] * n)), devices=devs)(xs)
    with pytest.raises(NotImplementedError, match="nested pmap"):
        cg.grad(lambda w: clnp.sum(P.pmap(lambda x: inner(clnp.stack([x] * n)),
                                          devices=devs)(xs * w)))(w)
    # a traced value captured by the mapped function (not passed as an argument)
    with pytest.raises(TypeError, match="closes over a value traced by an enclosing "
                                        "transformation"):
        cg.grad(lambda w: clnp.sum(P.pmap(lambda x: x * w, devices=devs)(xs)))(w)
    with pytest.raises(ValueError, match="argument 1 is a scalar and cannot be mapped"):
        cg.grad(lambda w: clnp.sum(P.pmap(lambda x, s: x * s, devices=devs)(w, 2.0)))(
            clnp.stack([w] * n))
    with pytest.raises(ValueError, match="has size 3 along its mapped axis 1"):
        cg.grad(lambda x: clnp.sum(P.pmap(lambda v: v, devices=devs, in_axes=1)(x)))(xs)
