"""clnp_grad.jit: whole-step kernels (``clnp_grad._jit.whole_step``). A small step runs as one
kernel: elementwise blocks, reductions, products and views in one work-group. Each case runs
with the whole step forced, against NumPy and against the general path (one kernel per fusion
group), on every device, in the device's own form (one work-item on CPUs) and in the GPU form
(a work-group of 64: barriers between blocks, reductions split over work-items)."""
from __future__ import annotations

import numpy as np
import pytest

import clnp
import clnp_grad as cg
from clnp_grad._jit import whole_step


@pytest.fixture(params=[None, 64], ids=["own-group", "group-64"])
def group(request, monkeypatch):
    monkeypatch.setattr(whole_step, "GROUP", request.param)
    return request.param


def _run(monkeypatch, mode, f, args, calls=3):
    """``jit(f)`` with the whole step ``mode`` (True/False/None), called ``calls`` times (build,
    record, replay); the last results as NumPy arrays and the kernels one call launches."""
    monkeypatch.setattr(whole_step, "WHOLE_STEP", mode)
    jf = cg.jit(f)
    for _ in range(calls):
        out = jf(*args)
    outs = out if isinstance(out, tuple) else (out,)
    return [np.asarray(o) for o in outs], jf.lower(*args).kernel_sources()


def _check(monkeypatch, device, f, hosts, rtol=1e-5, atol=1e-6):
    args = [clnp.asarray(h, device=device) for h in hosts]
    want = f(np, *hosts)
    want = want if isinstance(want, tuple) else (want,)
    got, srcs = _run(monkeypatch, True, lambda *a: f(clnp, *a), args)
    assert len(srcs) == 1 and "clnp_whole_step" in srcs[0]
    general, _ = _run(monkeypatch, False, lambda *a: f(clnp, *a), args)
    for g, w, r in zip(got, want, general):
        assert g.shape == np.shape(w) and g.dtype == np.asarray(w).dtype
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
        np.testing.assert_allclose(g, r, rtol=rtol, atol=atol)
    return got


RNG = np.random.default_rng(7)
X = RNG.standard_normal((5, 7)).astype(np.float32)
Y = RNG.standard_normal(7).astype(np.float32)
W = RNG.standard_normal((7, 3)).astype(np.float32)
T = RNG.standard_normal((3, 4, 5)).astype(np.float32)
A = RNG.standard_normal((2, 3, 4)).astype(np.float32)
B = RNG.standard_normal((2, 4, 5)).astype(np.float32)
I32 = RNG.integers(-40, 40, (6, 4)).astype(np.int32)
I64 = RNG.integers(-40, 40, (6, 4)).astype(np.int64)
U = RNG.standard_normal((6, 21, 5)).astype(np.float32)

CASES = {
    "broadcast": (lambda ns, x, y: (x * 2 + y[None, :]) / (1 + ns.abs(x)), [X, Y]),
    "sum-axes": (lambda ns, t: (ns.sum(t, axis=0), ns.sum(t, axis=2), ns.sum(t)), [T]),
    "mean-two-axes": (lambda ns, t: ns.mean(t, axis=(0, 2)), [T]),
    "max-min-prod": (lambda ns, x: (ns.max(x, axis=1), ns.min(x, axis=0),
                                    ns.prod(x[:, :3], axis=1)), [X]),
    "ints": (lambda ns, i, j: (ns.sum(i * 3 - j, axis=0), ns.max(i), ns.min(j, axis=1)),
             [I32, I64]),
    "bools": (lambda ns, x: (ns.any(x > 0.5, axis=1), ns.all(x > -3.0), ns.sum(x > 0)), [X]),
    "matmul": (lambda ns, x, w: ns.tanh(x @ w) * 2, [X, W]),
    "batched-matmul": (lambda ns, a, b: a @ b, [A, B]),
    "vector-dot": (lambda ns, y: y @ y + ns.sum(y), [Y]),
    "gram": (lambda ns, x: x.T @ x, [X]),
    "two-contracted-dims": (lambda ns, a, t: ns.tensordot(a, t[:, :, :4], axes=([1, 2], [0, 1])),
                            [A, T]),
    # CPU form: 8 outputs per walk, here 16 of them and a tail of 5, over two reduced axes
    "outputs-in-eights": (lambda ns, u: (ns.sum(u, axis=(0, 2)), ns.max(u, axis=(0, 2)),
                                         u[:, :, 0].T @ u[:, :, 1]), [U]),
    # a view of one element with every stride 0, read by a vector loop (a splat, not a load)
    "broadcast-scalar-view": (lambda ns, x: ns.broadcast_to(ns.sum(x), (24,)) * -1.0 +
                              ns.reshape(x, (-1,))[:24], [X]),
    "transposed-view": (lambda ns, x: x.T * 2 + 1, [X]),
    "slices": (lambda ns, x: x[::2, 1:6:2] * 3 + x[::-2, ::-3], [X]),
    "reshape-copy": (lambda ns, t: ns.reshape(ns.permute_dims(t, (2, 0, 1)), (-1,)) + 1, [T]),
    "broadcast_to": (lambda ns, y: ns.broadcast_to(y, (5, 7)) * ns.sum(y), [Y]),
    "returned-views": (lambda ns, x: ((x * 2).T, x[1:3]), [X]),
    "literals": (lambda ns, x: (ns.where(x > 0, x, -np.inf), ns.maximum(x, 0.1) * 1e-30,
                                x * 0 + 3.0), [X]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_cases(monkeypatch, device, group, name):
    f, hosts = CASES[name]
    _check(monkeypatch, device, f, hosts)


def test_nan_propagates_through_max(monkeypatch, device, group):
    x = X.copy()
    x[2, 3] = np.nan
    got = _check(monkeypatch, device, lambda ns, x: (ns.max(x, axis=1), ns.sum(x, axis=0)),
                 [x])
    assert np.isnan(got[0][2]) and np.isnan(got[0]).sum() == 1


def test_integer_extremes_and_unsigned(monkeypatch, device, group):
    lo = np.full((3,), np.iinfo(np.int64).min, np.int64)
    u = np.arange(6, dtype=np.uint32).reshape(2, 3)
    _check(monkeypatch, device, lambda ns, a, u: (ns.maximum(a, a), ns.sum(u * 7, axis=1)),
           [lo, u], rtol=0, atol=0)


def test_float64(monkeypatch, device, group):
    if not device.has_fp64:
        pytest.skip("device without float64")
    d = RNG.standard_normal((4, 9))
    _check(monkeypatch, device, lambda ns, d: ns.sum(ns.sin(d) * d, axis=1) + d[:, 0],
           [d], rtol=1e-12)


def test_float16(monkeypatch, device, group):
    h = RNG.standard_normal((4, 8)).astype(np.float16)
    _check(monkeypatch, device, lambda ns, h: h * 2 + ns.asarray(1, dtype=ns.float16), [h],
           rtol=1e-3, atol=1e-3)


def test_identity_and_repeated_outputs(monkeypatch, device):
    x = clnp.asarray(X, device=device)
    (a, b, c), srcs = _run(monkeypatch, True, lambda x: (x, x * 2, x * 2), [x])
    np.testing.assert_array_equal(a, X)
    np.testing.assert_array_equal(b, X * 2)
    np.testing.assert_array_equal(c, X * 2)


def _logistic(ns, grad):
    def loss(w, b, X, y):
        return ns.mean(ns.log1p(ns.exp(-y * (X @ w + b))))

    def step(w, b, X, y):
        gw, gb = grad(loss, argnums=(0, 1))(w, b, X, y)
        return w - 0.1 * gw, b - 0.1 * gb
    return step


def test_logistic_step_is_one_kernel_and_equals_numpy(monkeypatch, device, group):
    rng = np.random.default_rng(0)
    Xh = rng.standard_normal((64, 16)).astype(np.float32)
    yh = np.where(rng.standard_normal(64) > 0, 1.0, -1.0).astype(np.float32)
    wh = rng.standard_normal(16).astype(np.float32) * 0.1
    bh = np.float32(0.2)
    monkeypatch.setattr(whole_step, "WHOLE_STEP", None)       # chosen by its size
    step = cg.jit(_logistic(clnp, cg.grad))
    w, b = clnp.asarray(wh, device=device), clnp.asarray(bh, device=device)
    X, y = clnp.asarray(Xh, device=device), clnp.asarray(yh, device=device)
    for _ in range(5):
        w, b = step(w, b, X, y)
        z = Xh @ wh + bh
        s = -yh / (1 + np.exp(yh * z)) / 64
        wh, bh = wh - 0.1 * (Xh.T @ s), bh - 0.1 * s.sum()
        np.testing.assert_allclose(np.asarray(w), wh, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(float(b), bh, rtol=1e-5, atol=1e-6)
    assert len(step.lower(w, b, X, y).kernel_sources()) == 1


def test_mlp_step_matches_the_general_path(monkeypatch, device, group):
    rng = np.random.default_rng(3)
    hosts = [rng.standard_normal(s).astype(np.float32) * 0.3
             for s in [(8, 12), (12,), (12, 4), (4,), (16, 8)]]
    labels = rng.integers(0, 4, 16)
    onehot = np.eye(4, dtype=np.float32)[labels]

    def step(w1, b1, w2, b2, x, t):
        def loss(p):
            h = clnp.tanh(x @ p[0] + p[1])
            z = h @ p[2] + p[3]
            z = z - clnp.max(z, axis=1, keepdims=True)
            logp = z - clnp.log(clnp.sum(clnp.exp(z), axis=1, keepdims=True))
            return -clnp.mean(clnp.sum(logp * t, axis=1))
        g = cg.grad(loss)((w1, b1, w2, b2))
        return tuple(p - 0.5 * gp for p, gp in zip((w1, b1, w2, b2), g))
    args = [clnp.asarray(h, device=device) for h in hosts + [onehot]]
    got, srcs = _run(monkeypatch, True, step, args)
    assert len(srcs) == 1
    want, _ = _run(monkeypatch, False, step, args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_large_steps_keep_the_general_path(monkeypatch, device):
    monkeypatch.setattr(whole_step, "WHOLE_STEP", None)
    big = clnp.asarray(RNG.standard_normal((256, 256)).astype(np.float32), device=device)
    _, srcs = _run(monkeypatch, None, lambda x: clnp.sum(x @ x, axis=0) + 1, [big])
    assert not any("clnp_whole_step" in s for s in srcs)
    small = clnp.asarray(X, device=device)
    _, srcs = _run(monkeypatch, None, lambda x: clnp.sum(x @ x.T, axis=0) + 1, [small])
    assert len(srcs) == 1 and "clnp_whole_step" in srcs[0]


def test_python_scalars_and_other_ops_keep_the_general_path(monkeypatch, device):
    """A Python scalar changes per call, so what reads it keeps its group's kernel; an op
    whole-step kernels do not run (a sort) keeps its own, and the groups after it form a
    whole step of their own."""
    x = clnp.asarray(X, device=device)
    _, srcs = _run(monkeypatch, True, lambda x, s: clnp.sum(x * s), [x, 2.0])
    assert not any("clnp_whole_step" in s for s in srcs)
    (got,), srcs = _run(monkeypatch, True, lambda x: clnp.sum(clnp.sort(x, axis=1) * 2, axis=0),
                        [x])
    np.testing.assert_allclose(got, (np.sort(X, axis=1) * 2).sum(axis=0), rtol=1e-5)
    assert "clnp_whole_step" not in srcs[0] and "clnp_whole_step" in srcs[-1]


def test_new_inputs_each_call(monkeypatch, device, group):
    """The replayed launch reads each call's buffers and writes fresh outputs."""
    monkeypatch.setattr(whole_step, "WHOLE_STEP", True)
    f = cg.jit(lambda x, w: (clnp.sum(x @ w, axis=0), x * 2))
    outs = []
    for k in range(4):
        xh = X + k
        s, d = f(clnp.asarray(xh, device=device), clnp.asarray(W, device=device))
        outs.append((s, d, xh))
    for s, d, xh in outs:
        np.testing.assert_allclose(np.asarray(s), (xh @ W).sum(axis=0), rtol=1e-5)
        np.testing.assert_allclose(np.asarray(d), xh * 2)


def test_literal_spelling():
    f32, f64, i64, u8 = (np.dtype(t) for t in ("float32", "float64", "int64", "uint8"))
    assert whole_step.literal(0.1, f32) == "((float)(0x1.99999a0000000p-4f))"
    assert whole_step.literal(0.1, f64) == "((double)(0x1.999999999999ap-4))"
    assert whole_step.literal(float("inf"), f32) == "((float)(INFINITY))"
    assert whole_step.literal(float("-inf"), f32) == "((float)((-INFINITY)))"
    assert whole_step.literal(float("nan"), f64) == "((double)(NAN))"
    assert whole_step.literal(np.iinfo(np.int64).min, i64) == \
        "((long)((-9223372036854775807L - 1)))"
    assert whole_step.literal(200, u8) == "((uchar)(200U))"
    assert whole_step.literal(True, np.dtype(bool)) == "((int)(1))"


def _segment_step(x, w):
    """Small groups, a sort (which whole-step kernels do not run), small groups again."""
    h = clnp.tanh(x @ w)                                    # a product and its epilogue
    s = clnp.sum(h, axis=0) / clnp.max(clnp.abs(h))         # two reductions, then a divide
    r = clnp.sort(h * s, axis=0)
    return clnp.sum(r * r, axis=1) + clnp.mean(r), s * 2


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_segments_around_an_op_they_do_not_run(monkeypatch, device, group, dtype):
    """The groups before and after the sort each become one whole-step kernel: three
    kernels where the general path launches one per group."""
    if dtype == "float64" and not device.has_fp64:
        pytest.skip("device without float64")
    x = clnp.asarray(X.astype(dtype), device=device)
    w = clnp.asarray(W.astype(dtype), device=device)
    got, srcs = _run(monkeypatch, None, _segment_step, [x, w])
    want, general = _run(monkeypatch, False, _segment_step, [x, w])
    assert [("clnp_whole_step" in s) for s in srcs] == [True] + [False] * (len(srcs) - 2) + \
        [True]
    assert len(general) > len(srcs)
    for g, r in zip(got, want):
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-6)


def test_the_work_limit_cuts_a_run_into_segments(monkeypatch, device):
    """With a limit of 450 units, a chain of six fused reductions of about 190 units each
    becomes whole-step kernels of two groups, and the results stay the general path's."""
    monkeypatch.setattr(whole_step, "CPU_WORK_MAX", 450)
    monkeypatch.setattr(whole_step, "GPU_WORK_MAX", 450)
    y = clnp.asarray(RNG.standard_normal(32).astype(np.float32), device=device)

    def chain(y):
        for k in range(6):
            # a reduction and a broadcast; a contraction, so rounding differences stay small
            y = y * 0.5 + clnp.mean(clnp.sin(y)) * (0.1 * (k + 1))
        return y
    got, srcs = _run(monkeypatch, None, chain, [y])
    want, general = _run(monkeypatch, False, chain, [y])
    whole = [s for s in srcs if "clnp_whole_step" in s]
    assert len(whole) >= 2 and len(srcs) < len(general)
    for s in whole:
        work = int(s.split("work ")[1].split()[0])
        assert work <= 450
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-6)


def test_digits_cnn_step_launches_fewer_kernels(monkeypatch, device):
    """The digits CNN's training step (examples/digits_cnn.py, AdamW, as
    bench/bench_nn_train.py runs it): segments replace some of its groups' kernels, and the
    losses and weights after two steps stay the general path's (docs/jit.md gives the
    counts)."""
    import os
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for sub in ("bench", "examples"):
        if os.path.join(root, sub) not in sys.path:
            sys.path.insert(0, os.path.join(root, sub))
    import bench_nn_train as bn
    import digits_cnn
    if device is not clnp.default_device():
        pytest.skip("the example runs on the default device")
    x, y = bn.batch_of(16)
    counts, results = {}, {}
    for mode in (None, False):
        monkeypatch.setattr(whole_step, "WHOLE_STEP", mode)
        peer = bn.ClnpPeer(digits_cnn.make_model(cg.random.key(0)), x, y)
        losses = [float(peer.step()) for _ in range(2)]
        counts[mode] = len(peer.step_fn.lower(peer.state, peer.batch).kernel_sources())
        results[mode] = (losses, peer.weights())
    assert counts[None] < counts[False]
    np.testing.assert_allclose(results[None][0], results[False][0], rtol=1e-5)
    # AdamW's first updates are about lr * sign(gradient): the convolutions' biases, which
    # batch norm cancels, have gradients of rounding size whose signs differ between any two
    # summation orders, so weights agree to two steps of lr
    for k, w in results[False][1].items():
        np.testing.assert_allclose(results[None][1][k], w, rtol=0, atol=2 * 2 * bn.LR)


def test_a_kernel_that_cannot_take_the_group_keeps_the_groups(monkeypatch, device):
    """When the built kernel's largest work-group (``CL_KERNEL_WORK_GROUP_SIZE``: registers,
    local memory) is below the group it was written for, the groups' own kernels run."""
    from clnp_grad._jit import executable
    monkeypatch.setattr(whole_step, "GROUP", 64)
    monkeypatch.setattr(executable, "_kernel_group_limit", lambda kernel, device: 32)
    x, w = clnp.asarray(X, device=device), clnp.asarray(W, device=device)
    (got,), srcs = _run(monkeypatch, None, lambda x, w: clnp.sum(clnp.tanh(x @ w), axis=0),
                        [x, w])
    assert len(srcs) > 1 and not any("clnp_whole_step" in s for s in srcs)
    np.testing.assert_allclose(got, np.tanh(X @ W).sum(axis=0), rtol=1e-5, atol=1e-6)
