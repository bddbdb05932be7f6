"""clnp_grad.lax: cond / switch / while_loop / fori_loop / scan, eagerly and under
grad / jvp / vmap / make_ir, against Python loops and finite differences."""
from __future__ import annotations

import numpy as np
import pytest

import clnp
import clnp_grad as cg
from clnp_grad import lax


def _a(v, device, dtype=None):
    return clnp.asarray(np.asarray(v), dtype=dtype, device=device)


def _np(x):
    return np.asarray(x)


def _fd(f, x, eps=1e-6):
    """Central finite differences of scalar ``f`` (NumPy in, float out) at NumPy ``x``."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


def _need64(device):
    if not device.has_fp64:
        pytest.skip("device has no float64")


# ------------------------------------------------------------------------------ eager
def test_eager_against_python(device):
    x = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    X = _a(x, device)
    for p in (True, False):
        got = lax.cond(_a(p, device), lambda v: (v * 2.0, {"s": v.sum()}),
                       lambda v: (v - 1.0, {"s": v.max()}), X)
        ref = (x * 2, x.sum()) if p else (x - 1, x.max())
        np.testing.assert_allclose(_np(got[0]), ref[0])
        np.testing.assert_allclose(float(got[1]["s"]), ref[1], rtol=1e-6)
    fns = [lambda v: v + 1.0, lambda v: v * v, lambda v: -v]
    for i in (-3, 0, 1, 2, 7):   # clamped, as JAX
        got = lax.switch(_a(i, device, clnp.int32), fns, X)
        np.testing.assert_allclose(_np(got), [x + 1, x * x, -x][min(max(i, 0), 2)])
    # while: Collatz steps of 27, with a pytree carry
    r = lax.while_loop(lambda c: c["n"] != 1,
                          lambda c: {"n": clnp.where(c["n"] % 2 == 0, c["n"] // 2,
                                                     3 * c["n"] + 1), "k": c["k"] + 1},
                       {"n": _a(27, device, clnp.int32), "k": _a(0, device, clnp.int32)})
    assert (int(r["n"]), int(r["k"])) == (1, 111)
    acc = x.copy()
    for i in range(2, 6):
        acc = acc * 0.5 + i
    body = lambda i, v: v * 0.5 + clnp.astype(i, v.dtype)   # noqa: E731
    np.testing.assert_allclose(_np(lax.fori_loop(2, 6, body, X)), acc, rtol=1e-6)
    np.testing.assert_allclose(_np(lax.fori_loop(_a(2, device, clnp.int32),
                                                 _a(6, device, clnp.int32),
                                                 body, X)), acc, rtol=1e-6)
    np.testing.assert_allclose(_np(lax.fori_loop(5, 2, lambda i, v: v + 1.0, X)), x)


def test_scan_eager(device):
    xs = np.arange(12, dtype=np.float32).reshape(4, 3)
    init = np.ones(3, dtype=np.float32)
    for reverse in (False, True):
        c, ys = lax.scan(lambda c, x: (c * 0.5 + x["a"], (c.sum(), x["b"] * 2)),
                         _a(init, device), {"a": _a(xs, device), "b": _a(xs[:, 0], device)},
                         reverse=reverse)
        rc, rys0, rys1 = init.copy(), [None] * 4, [None] * 4
        for i in (range(3, -1, -1) if reverse else range(4)):
            rys0[i], rys1[i] = rc.sum(), xs[i, 0] * 2
            rc = rc * 0.5 + xs[i]
        np.testing.assert_allclose(_np(c), rc, rtol=1e-6)
        np.testing.assert_allclose(_np(ys[0]), rys0, rtol=1e-6)
        np.testing.assert_allclose(_np(ys[1]), rys1, rtol=1e-6)
    # no xs: length steps; ys None
    c, ys = lax.scan(lambda c, _: (c + 1.0, None), _a(0.0, device, clnp.float32), length=5)
    assert float(c) == 5.0 and ys is None
    c, ys = lax.scan(lambda c, x: (c + x, c), _a(1.0, device, clnp.float32),
                     _a(np.zeros((0,), np.float32), device))
    assert float(c) == 1.0 and ys.shape == (0,)


# ------------------------------------------------------------------------------ reverse mode
def test_grad_cond_switch(device):
    _need64(device)
    x0 = np.array([0.3, -0.7, 1.1])
    w0 = np.array(1.7)

    def f_np(x, w, p, i):
        v = np.sin(x) * w if p else np.exp(x) + w
        return float(np.sum([v ** 2, v * x, np.cos(v)][i]))

    def f(x, w, p, i):
        v = lax.cond(p, lambda a: clnp.sin(a) * w, lambda a: clnp.exp(a) + w, x)
        return clnp.sum(lax.switch(i, [lambda a, b: a ** 2, lambda a, b: a * b,
                                       lambda a, b: clnp.cos(a)], v, x))
    for p, i in ((True, 0), (False, 1), (True, 2)):
        gx, gw = cg.grad(f, argnums=(0, 1))(_a(x0, device), _a(w0, device), p, i)
        np.testing.assert_allclose(_np(gx), _fd(lambda x: f_np(x, w0, p, i), x0), rtol=1e-6)
        np.testing.assert_allclose(float(gw), _fd(lambda w: f_np(x0, w, p, i), w0), rtol=1e-6)


def test_grad_scan_and_fori(device):
    _need64(device)
    xs0 = np.array([[0.2, 0.1], [-0.4, 0.3], [0.5, -0.2], [0.1, 0.1]])
    w0 = np.array([[0.9, -0.3], [0.2, 0.8]])
    h0 = np.array([0.1, -0.2])

    def rnn_np(w, h, xs, reverse):
        ys = []
        for x in (xs[::-1] if reverse else xs):
            h = np.tanh(h @ w + x)
            ys.append(np.sum(h * h))
        return float(np.sum(h) + np.sum(np.array(ys) * np.arange(1, 5)))

    def rnn(w, h, xs, reverse):
        def step(h, x):
            hn = clnp.tanh(h @ w + x)
            return hn, clnp.sum(hn * hn)
        hT, ys = lax.scan(step, h, xs, reverse=reverse)
        k = clnp.arange(1, 5, dtype=clnp.float64, device=device)
        order = k if not reverse else k[::-1]
        return clnp.sum(hT) + clnp.sum(ys * order)
    for reverse in (False, True):
        gw, gh, gx = cg.grad(rnn, argnums=(0, 1, 2))(_a(w0, device), _a(h0, device),
                                                     _a(xs0, device), reverse)
        np.testing.assert_allclose(_np(gw), _fd(lambda w: rnn_np(w, h0, xs0, reverse), w0),
                                   rtol=1e-5, atol=1e-8)
        np.testing.assert_allclose(_np(gh), _fd(lambda h: rnn_np(w0, h, xs0, reverse), h0),
                                   rtol=1e-5, atol=1e-8)
        np.testing.assert_allclose(_np(gx), _fd(lambda x: rnn_np(w0, h0, x, reverse), xs0),
                                   rtol=1e-5, atol=1e-8)

    def fori_np(x):
        for i in range(1, 4):
            x = np.sin(x) * i + x
        return float(np.sum(x))
    x0 = np.array([0.4, -1.2])
    g = cg.grad(lambda x: clnp.sum(lax.fori_loop(1, 4, lambda i, v: clnp.sin(v) * i + v, x)))(
        _a(x0, device))
    np.testing.assert_allclose(_np(g), _fd(fori_np, x0), rtol=1e-6)


def test_closure_over_outer_tracers(device):
    _need64(device)
    x = _a(np.array([0.5, 1.5]), device)

    # grad w.r.t. a value the branches / body only close over
    def f(w):
        a = lax.cond(clnp.sum(w) > 0, lambda v: v * w, lambda v: v - w, x)
        _, ys = lax.scan(lambda c, xi: (c * w, c * xi), w, x)
        b = lax.fori_loop(0, 3, lambda i, v: v * w, x)
        return clnp.sum(a) + clnp.sum(ys) + clnp.sum(b)
    w0 = 0.8
    ref = lambda w: 2.0 * w + (w * 0.5 + w * w * 1.5) + 2.0 * w ** 3   # noqa: E731
    g = cg.grad(f)(_a(w0, device))
    np.testing.assert_allclose(float(g), (ref(w0 + 1e-6) - ref(w0 - 1e-6)) / 2e-6, rtol=1e-6)
    # jvp through a while_loop closing over the differentiated value
    _, t = cg.jvp(lambda w: lax.while_loop(lambda c: c[0] < 4,
                                           lambda c: (c[0] + 1, c[1] * w), (0, x))[1],
                  (_a(w0, device),), (_a(1.0, device),))
    np.testing.assert_allclose(_np(t), 4 * w0 ** 3 * np.array([0.5, 1.5]), rtol=1e-6)
    # second order: grad of grad through cond and scan
    h = cg.grad(cg.grad(lambda w: clnp.sum(lax.scan(lambda c, xi: (c * w, c), w, x)[1])))(
        _a(w0, device))
    np.testing.assert_allclose(float(h), 2.0, rtol=1e-6)


def test_hessian_and_vmap_closures(device):
    _need64(device)
    x0 = np.array([0.3, -0.5, 0.8])

    def f(v):
        _, ys = lax.scan(lambda c, xi: (c * xi + clnp.sin(c), c * c), clnp.sum(v), v)
        return clnp.sum(lax.cond(clnp.sum(v) > 0, lambda a: a * v, lambda a: a, ys))

    def f_np(v):
        c, ys = v.sum(), []
        for xi in v:
            ys.append(c * c)
            c = c * xi + np.sin(c)
        return float(np.sum(np.array(ys) * v) if v.sum() > 0 else np.sum(ys))
    H = cg.hessian(f)(_a(x0, device))       # jacfwd(jacrev): vmap of jvp of the backward scan
    e, eye = 1e-4, np.eye(3) * 1e-4
    Hn = np.array([[(f_np(x0 + eye[i] + eye[j]) - f_np(x0 + eye[i] - eye[j])
                     - f_np(x0 - eye[i] + eye[j]) + f_np(x0 - eye[i] - eye[j])) / (4 * e * e)
                    for j in range(3)] for i in range(3)])
    np.testing.assert_allclose(_np(H), Hn, atol=1e-5)
    # vmap over a value the body only closes over
    w = _a(np.array([1.0, 2.0]), device)
    got = cg.vmap(lambda wi: lax.scan(lambda c, xi: (c + wi * xi, c), 0.0, _a(x0, device))[0])(w)
    np.testing.assert_allclose(_np(got), [x0.sum(), 2 * x0.sum()])
    got = cg.vmap(lambda wi: lax.cond(wi > 1.5, lambda a: a * wi, lambda a: a,
                                      _a(x0, device)))(w)
    np.testing.assert_allclose(_np(got), [x0, 2 * x0])


def test_while_reverse_mode_error(device):
    x = _a(np.array([1.0, 2.0], np.float32), device)
    with pytest.raises(TypeError, match="not reverse-mode differentiable.*fori_loop with "
                                        "Python int bounds or lax.scan"):
        cg.grad(lambda v: clnp.sum(lax.while_loop(lambda c: c[0] < 3,
                                                  lambda c: (c[0] + 1, c[1] * 2.0),
                                                  (0, v))[1]))(x)
    with pytest.raises(TypeError, match="not reverse-mode differentiable"):
        cg.grad(lambda v: clnp.sum(lax.fori_loop(_a(0, device), _a(3, device),
                                                 lambda i, c: c * 2.0, v)))(x)


# ------------------------------------------------------------------------------ forward mode
def test_jvp_all(device):
    _need64(device)
    x0 = np.array([0.3, 0.9])
    t0 = np.array([1.0, -0.5])

    def f(x):
        y = lax.while_loop(lambda c: c[1] < 3.0, lambda c: (c[0] * 1.5 + clnp.sin(c[0]),
                                                            c[1] + 1.0), (x, 0.0))[0]
        y = lax.cond(clnp.sum(y) > 0, lambda v: v * v, lambda v: -v, y)
        y = lax.switch(1, [lambda v: v, lambda v: clnp.exp(v) * 0.1], y)
        return lax.scan(lambda c, xi: (c + xi * c, c), y, x)[1]

    def f_np(x):
        y = x
        for _ in range(3):
            y = y * 1.5 + np.sin(y)
        y = y * y if y.sum() > 0 else -y
        y = np.exp(y) * 0.1
        ys = []
        for xi in x:
            ys.append(y)
            y = y + xi * y
        return np.array(ys)
    _, t = cg.jvp(f, (_a(x0, device),), (_a(t0, device),))
    fd = (f_np(x0 + 1e-6 * t0) - f_np(x0 - 1e-6 * t0)) / 2e-6
    np.testing.assert_allclose(_np(t), fd, rtol=1e-5)


# ------------------------------------------------------------------------------ vmap
def test_vmap(device):
    xs = np.array([0.5, 2.0, -1.0, 3.0], np.float32)
    X = _a(xs, device)
    # batched predicate -> select; unbatched predicate -> cond of vmapped branches
    got = cg.vmap(lambda v: lax.cond(v > 1.0, lambda a: a * 10.0, lambda a: a - 1.0, v))(X)
    np.testing.assert_allclose(_np(got), [v * 10 if v > 1 else v - 1 for v in xs])
    for p in (True, False):
        got = cg.vmap(lambda v: lax.cond(_a(p, device), lambda a: a * 10.0,
                                         lambda a: a - 1.0, v))(X)
        np.testing.assert_allclose(_np(got), xs * 10 if p else xs - 1)
    idx = _a(np.array([0, 2, 1, 5]), device, clnp.int32)
    got = cg.vmap(lambda i, v: lax.switch(i, [lambda a: a, lambda a: a * 2.0,
                                              lambda a: -a], v))(idx, X)
    np.testing.assert_allclose(_np(got), [xs[0], -xs[1], xs[2] * 2, -xs[3]])
    # while: batched predicate (per-example trip counts, masked) and unbatched predicate
    got = cg.vmap(lambda v: lax.while_loop(lambda c: c[0] < 4.0,
                                           lambda c: (c[0] + 1.5, c[1] + 1), (v, 0)))(X)
    ref = []
    for v in xs:
        k = 0
        while v < 4.0:
            v, k = v + 1.5, k + 1
        ref.append((v, k))
    np.testing.assert_allclose(_np(got[0]), [r[0] for r in ref])
    np.testing.assert_array_equal(_np(got[1]), [r[1] for r in ref])
    got = cg.vmap(lambda v: lax.fori_loop(0, 3, lambda i, c: c * 2.0 + clnp.astype(i, c.dtype),
                                          v))(X)
    np.testing.assert_allclose(_np(got), ((xs * 2) * 2 + 1) * 2 + 2)
    got = cg.vmap(lambda v: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * v),
                                           (0, 1.0)))(X)
    np.testing.assert_allclose(_np(got[1]), xs ** 3, rtol=1e-6)
    # scan of the vmapped body; batched xs, unbatched carry that becomes batched
    seq = np.arange(6, dtype=np.float32).reshape(2, 3)
    c, ys = cg.vmap(lambda s: lax.scan(lambda c, x: (c + x, c * x), 1.0, s))(_a(seq, device))
    for b in range(2):
        rc, rys = 1.0, []
        for x in seq[b]:
            rys.append(rc * x)
            rc = rc + x
        np.testing.assert_allclose(float(c[b]), rc)
        np.testing.assert_allclose(_np(ys[b]), rys)


# ------------------------------------------------------------------------------ make_ir
def test_make_ir_prints_and_replays(device):
    x = _a(np.array([0.5, -1.0, 2.0], np.float32), device)

    def f(v):
        a = lax.cond(clnp.sum(v) > 0, lambda u: u * 2.0, lambda u: u - 1.0, v)
        b = lax.switch(1, [lambda u: u, lambda u: -u], a)
        c = lax.while_loop(lambda s: s[0] < 3, lambda s: (s[0] + 1, s[1] * 1.5), (0, b))[1]
        d = lax.fori_loop(0, 2, lambda i, u: u + 1.0, c)
        _, ys = lax.scan(lambda s, xi: (s + xi, s * xi), clnp.sum(d), d)
        return ys
    g = cg.make_ir(f)(x)
    text = str(g)
    for name in ("= cond[branches=(", "= while[", "cond_graph={ lambda", "= scan[",
                 "num_carry=", "length=3"):
        assert name in text, name
    g.typecheck()
    np.testing.assert_allclose(_np(cg.eval_graph(g, x)[0]), _np(f(x)), rtol=1e-6)
    y = _a(np.array([-3.0, 0.5, 1.0], np.float32), device)
    np.testing.assert_allclose(_np(cg.eval_graph(g, y)[0]), _np(f(y)), rtol=1e-6)


def test_make_ir_of_grad_with_traced_predicate(device):
    x = _a(np.array([0.5, -1.0, 2.0], np.float32), device)

    def f(v):
        return clnp.sum(lax.cond(clnp.sum(v) > 0, lambda u: clnp.sin(u) * u,
                                 lambda u: u * u, v))
    g = cg.make_ir(cg.grad(f))(x)
    names = [e.prim.name for e in g.eqns]
    assert names.count("cond") == 2 and "greater" in names
    g.typecheck()
    xn = _np(x)
    for v in (xn, -xn):
        (got,) = cg.eval_graph(g, _a(v, device))
        ref = (np.cos(v) * v + np.sin(v)) if v.sum() > 0 else 2 * v
        np.testing.assert_allclose(_np(got), ref, rtol=1e-5)
    # scan under make_ir(grad)
    g2 = cg.make_ir(cg.grad(lambda v: clnp.sum(lax.scan(lambda c, xi: (c * xi, c), 1.0,
                                                        v)[1])))(x)
    assert [e.prim.name for e in g2.eqns].count("scan") == 2


# ------------------------------------------------------------------------------ errors
def test_errors(device):
    x = _a(np.array([1.0, 2.0], np.float32), device)
    with pytest.raises(TypeError, match=r"output has shape \(2,\) dtype float32 in the output "
                                        r"of true_fun but shape \(2,\) dtype int32 in the "
                                        r"output of false_fun"):
        lax.cond(True, lambda v: v, lambda v: clnp.astype(v, clnp.int32), x)
    with pytest.raises(ValueError, match=r"output\[1\] has shape \(2,\) dtype float32 in the "
                                         r"output of true_fun but shape \(\) dtype float32"):
        lax.cond(True, lambda v: (v, v), lambda v: (v, clnp.sum(v)), x)
    with pytest.raises(TypeError, match=r"same structure.*tuple\(\*, \*\).*list\(\*, \*\)"):
        lax.cond(True, lambda v: (v, v), lambda v: [v, v], x)
    with pytest.raises(TypeError, match="pred must be a boolean scalar; got dtype float32"):
        lax.cond(x[0], lambda v: v, lambda v: v, x)
    with pytest.raises(ValueError, match=r"pred must be a scalar \(shape \(\)\); got shape "
                                         r"\(2,\)"):
        lax.cond(x > 1, lambda v: v, lambda v: v, x)
    with pytest.raises(TypeError, match="index must be an integer scalar; got dtype float32"):
        lax.switch(x[0], [lambda v: v], x)
    with pytest.raises(ValueError, match=r"index must be a scalar \(shape \(\)\)"):
        lax.switch(_a([0, 1], device, clnp.int32), [lambda v: v], x)
    with pytest.raises(ValueError, match=r"branches\[2\]"):
        lax.switch(0, [lambda v: v, lambda v: v, lambda v: v[0]], x)
    with pytest.raises(ValueError, match=r"carry\[1\] has shape \(2,\) dtype float32 in the "
                                         r"initial carry but shape \(3,\) dtype float32 in the "
                                         r"carry returned by body_fun"):
        lax.while_loop(lambda c: c[0] < 2,
                       lambda c: (c[0] + 1, clnp.concat([c[1], c[1][:1]])), (0, x))
    with pytest.raises(TypeError, match="cond_fun must return a boolean scalar"):
        lax.while_loop(lambda c: c, lambda c: c, x)
    with pytest.raises(TypeError, match=r"carry\['h'\] has shape \(2,\) dtype float32 in the "
                                        r"initial carry but shape \(2,\) dtype int32"):
        lax.scan(lambda c, xi: ({"h": clnp.astype(c["h"], clnp.int32)}, xi), {"h": x}, x)
    with pytest.raises(TypeError, match=r"lax.fori_loop: carry has shape \(2,\) dtype float32 "
                                        r"in the initial carry but shape \(2,\) dtype int32"):
        lax.fori_loop(0, 2, lambda i, v: clnp.astype(v, clnp.int32), x)
    with pytest.raises(ValueError, match=r"xs\['a'\] has length 2, xs\['b'\] has length 3"):
        lax.scan(lambda c, xi: (c, None), x, {"a": x, "b": _a(np.zeros(3), device)})
    with pytest.raises(ValueError, match="xs is None.*pass length="):
        lax.scan(lambda c, xi: (c, None), x)
    with pytest.raises(ValueError, match="length=5 but xs has leading length 2"):
        lax.scan(lambda c, xi: (c, None), x, x, length=5)
    with pytest.raises(TypeError, match=r"f must return a pair \(carry, y\)"):
        lax.scan(lambda c, xi: c, x, x)


def _loop_sources(jf, *args):
    return [s for s in jf.lower(*args).kernel_sources() if "clnp loop kernel" in s]


def test_elementwise_loops_compile_to_one_kernel(device):
    """A fori_loop/while_loop whose values are 0-d or of one shape, with an elementwise body
    and a predicate on 0-d values, runs as one kernel with the loop inside (eagerly and under
    jit); the results are the Python loop's."""
    rng = np.random.default_rng(3)
    # points whose orbits converge (inside the main cardioid), so that compilers' different
    # float contractions (fma on GPUs) cannot grow into different orbits over the iterations
    cs = rng.uniform(-0.4, 0.15, 37).astype(np.float32)

    def mandel(c, n):
        def body(i, st):
            zr, zi, cnt = st
            zr2 = zr * zr - zi * zi + c
            zi2 = 2.0 * zr * zi + 0.25
            inside = (zr2 * zr2 + zi2 * zi2) < 4.0
            return (clnp.where(inside, zr2, zr), clnp.where(inside, zi2, zi),
                    cnt + clnp.astype(inside, clnp.int32))
        z = clnp.zeros_like(c)
        return lax.fori_loop(0, n, body, (z, z, clnp.zeros(c.shape, dtype=clnp.int32,
                                                            device=c.device)))

    def mandel_np(c, n):
        zr = zi = np.zeros_like(c)
        cnt = np.zeros(c.shape, np.int32)
        for _ in range(n):
            zr2 = zr * zr - zi * zi + c
            zi2 = np.float32(2) * zr * zi + np.float32(0.25)
            inside = (zr2 * zr2 + zi2 * zi2) < 4
            zr, zi, cnt = np.where(inside, zr2, zr), np.where(inside, zi2, zi), cnt + inside
        return zr, zi, cnt
    c = _a(cs, device)
    jm = cg.jit(mandel, static_argnums=1)
    for got in (mandel(c, 25), jm(c, 25)):
        for g, r in zip(got, mandel_np(cs, 25)):
            np.testing.assert_allclose(_np(g), r, rtol=1e-5, atol=1e-5)
    # the zero initial carries (one fused kernel), then the whole loop in one kernel
    assert len(jm.lower(c, 25).kernel_sources()) == 2
    assert len(_loop_sources(jm, c, 25)) == 1

    def decay(x, k):   # while_loop: a 0-d counter and bound, a field carry
        return lax.while_loop(lambda s: s[0] < k, lambda s: (s[0] + 1, s[1] * 0.5 + 1.0),
                              (clnp.asarray(0, device=device), x))
    jd = cg.jit(decay)
    seven = _a(np.int64(7), device)   # an array bound: a Python int would be a weak scalar,
    for xs in (cs, cs[::-1].copy()):  # whose step runs host-driven (the loop kernel still)
        ref = xs.copy()
        for _ in range(7):
            ref = ref * np.float32(0.5) + np.float32(1)
        for i, y in (decay(_a(xs, device), 7), jd(_a(xs, device), seven),
                     jd(_a(xs, device), 7)):
            assert int(i) == 7
            np.testing.assert_allclose(_np(y), ref, rtol=1e-6)
    assert len(_loop_sources(jd, c, seven)) == 1


def test_loops_outside_the_elementwise_form_run_from_the_host(device):
    x = _a(np.arange(1, 6, dtype=np.float32), device)
    # the predicate reads the array (a reduction): a host loop, one predicate read per step
    grow = cg.jit(lambda x: lax.while_loop(lambda v: clnp.max(v) < 100.0, lambda v: v * 2.0, x))
    np.testing.assert_array_equal(_np(grow(x)), np.arange(1, 6) * 32.0)
    assert not _loop_sources(grow, x)
    # values of two shapes (a row and a matrix): not one elementwise loop
    m = _a(np.ones((3, 5), np.float32), device)
    mix = cg.jit(lambda x, m: lax.fori_loop(0, 3, lambda i, s: (s[0] + 1.0, s[1] + s[0]),
                                               (x, m)))
    a, b = mix(x, m)
    np.testing.assert_array_equal(_np(a), np.arange(1, 6) + 3.0)
    np.testing.assert_array_equal(_np(b), np.broadcast_to(1 + 3 * np.arange(1, 6) + 3.0, (3, 5)))
    assert not _loop_sources(mix, x, m)


def test_host_loops_under_jit_see_new_data_on_every_call(device, monkeypatch):
    """A loop that runs from the host inside jit is captured (the launches of its compiled
    bodies) and replayed: later calls must compute on their own arguments."""
    monkeypatch.setenv("CLNP_LOOP_KERNELS", "0")
    w = _a(np.array([[0.5, 0.25], [0.0, 1.0]], np.float32), device)
    f = cg.jit(lambda x: lax.fori_loop(0, 3, lambda i, v: clnp.tanh(v @ w) + v * 0.5, x))
    rng = np.random.default_rng(8)
    for _ in range(3):
        xs = rng.standard_normal((4, 2)).astype(np.float32)
        ref = xs
        for _ in range(3):
            ref = np.tanh(ref @ np.asarray(w)) + ref * np.float32(0.5)
        np.testing.assert_allclose(_np(f(_a(xs, device))), ref, rtol=1e-5, atol=1e-6)


def test_loop_kernels_swap_carries_and_read_closed_over_arrays(device):
    """Carries that trade places, a closed-over array and a closed-over 0-d value, a boolean
    carry, and a size that is not a multiple of the elements per work-item."""
    rng = np.random.default_rng(12)
    n = 70
    ah, bh = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    wh = rng.uniform(0.5, 1.5, n).astype(np.float32)
    w, s = _a(wh, device), _a(np.float32(0.25), device)

    def f(a, b):
        def body(i, st):
            a, b, flag = st
            return b * w + s, a, clnp.logical_not(flag)
        return lax.fori_loop(0, 5, body, (a, b, clnp.zeros(a.shape, dtype=clnp.bool,
                                                              device=a.device)))
    ra, rb = ah.copy(), bh.copy()
    for _ in range(5):
        ra, rb = rb * wh + np.float32(0.25), ra
    jf = cg.jit(f)
    for got in (f(_a(ah, device), _a(bh, device)), jf(_a(ah, device), _a(bh, device))):
        np.testing.assert_allclose(_np(got[0]), ra, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(_np(got[1]), rb, rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(_np(got[2]), np.ones(n, bool))
    assert len(_loop_sources(jf, _a(ah, device), _a(bh, device))) == 1


# ------------------------------------------------------------------------------ devices
@pytest.fixture
def other_device():
    """A device other than the default one, of the same platform (arrays of two contexts
    cannot meet in one kernel anyway); skips with a single device."""
    default = clnp.default_device()
    others = [d for d in clnp.devices()
              if d != default and d.platform_name == default.platform_name]
    if not others:
        pytest.skip("needs two OpenCL devices (e.g. POCL_DEVICES='pthread pthread')")
    return others[0]


def _sum(v):
    return float(np.sum(v))


# Each case: a function of one array x of shape (3,) that enters the loop only by closure or
# beside Python-scalar carries / operands / predicates / bounds, and its Python reference.
def _fori(x):
    return lax.fori_loop(0, 4, lambda i, c: c * 0.5 + clnp.sum(x), 1.0)


def _fori_ref(x):
    c = 1.0
    for _ in range(4):
        c = c * 0.5 + _sum(x)
    return c


def _fori_traced_bound(x):
    # a Python lower bound and Python carry next to an array upper bound on x's device
    n = clnp.astype(clnp.sum(x * 0.0), clnp.int32) + 3
    return lax.fori_loop(1, n, lambda i, c: c + clnp.sum(x) * clnp.astype(i, x.dtype), 0.5)


def _fori_traced_bound_ref(x):
    c = 0.5
    for i in range(1, 3):
        c = c + _sum(x) * i
    return c


def _fori_nested(x):
    # the outer carry is a Python scalar; only the inner loop's body reads x
    def body(i, c):
        return lax.fori_loop(0, 2, lambda j, a: a * 0.5 + clnp.max(x), c) - 1.0
    return lax.fori_loop(0, 2, body, 2.0)


def _fori_nested_ref(x):
    c = 2.0
    for _ in range(2):
        for _ in range(2):
            c = c * 0.5 + float(np.max(x))
        c = c - 1.0
    return c


def _while(x):
    return lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 0.5 + clnp.sum(x)),
                          (0, 1.0))[1]


def _while_ref(x):
    k, c = 0, 1.0
    while k < 5:
        k, c = k + 1, c * 0.5 + _sum(x)
    return c


def _scan(x):
    # no xs: the carry is the only operand
    c, ys = lax.scan(lambda c, _: (c * 0.5 + clnp.sum(x), c), 1.0, None, length=3)
    return c + clnp.sum(ys)


def _scan_ref(x):
    c, ys = 1.0, []
    for _ in range(3):
        ys.append(c)
        c = c * 0.5 + _sum(x)
    return c + sum(ys)


def _scan_xs(x):
    # a Python-scalar carry beside xs on x's device
    c, ys = lax.scan(lambda c, xi: (c + xi * 2.0, c * xi), 1.0, x)
    return c + clnp.sum(ys)


def _scan_xs_ref(x):
    c, ys = 1.0, []
    for xi in x:
        ys.append(c * xi)
        c = c + xi * 2.0
    return c + sum(ys)


def _cond(x):
    return (lax.cond(True, lambda a: a + clnp.sum(x), lambda a: a - 1.0, 2.0)
            + lax.cond(False, lambda a: a + clnp.sum(x), lambda a: a - clnp.max(x), 3.0))


def _cond_ref(x):
    return (2.0 + _sum(x)) + (3.0 - float(np.max(x)))


def _cond_traced_pred(x):
    return lax.cond(clnp.sum(x) > 0.0, lambda a: a * 2.0, lambda a: a - 1.0, 2.0)


def _cond_traced_pred_ref(x):
    return 4.0 if _sum(x) > 0 else 1.0


def _switch(x):
    branches = [lambda a: a, lambda a: a * clnp.sum(x), lambda a: -a]
    return lax.switch(1, branches, 3.0) + lax.switch(7, branches, 0.5)


def _switch_ref(x):
    return 3.0 * _sum(x) - 0.5


def _switch_traced_index(x):
    i = clnp.astype(clnp.sum(x) > 0.0, clnp.int32) * 2
    return lax.switch(i, [lambda a: a + 1.0, lambda a: a * 2.0, lambda a: a - clnp.max(x)],
                      3.0)


def _switch_traced_index_ref(x):
    return 3.0 - float(np.max(x)) if _sum(x) > 0 else 4.0


_DEVICE_CASES = {
    "fori_loop": (_fori, _fori_ref),
    "fori_loop-array-bound": (_fori_traced_bound, _fori_traced_bound_ref),
    "fori_loop-nested": (_fori_nested, _fori_nested_ref),
    "while_loop": (_while, _while_ref),
    "scan": (_scan, _scan_ref),
    "scan-xs": (_scan_xs, _scan_xs_ref),
    "cond": (_cond, _cond_ref),
    "cond-array-pred": (_cond_traced_pred, _cond_traced_pred_ref),
    "switch": (_switch, _switch_ref),
    "switch-array-index": (_switch_traced_index, _switch_traced_index_ref),
}


@pytest.mark.parametrize("mode", ["eager", "jit", "vmap"])
@pytest.mark.parametrize("case", list(_DEVICE_CASES))
def test_python_scalars_follow_the_operands_device(other_device, case, mode):
    """Python scalars entering lax control flow (carries, operands, a predicate, an index, a
    bound) go to the device of the arrays the call reads, also when those arrays are only
    closed over: they used to be put on the default device, and the first kernel mixing
    them with the arrays raised ValueError. Values and dtypes match the same call on the
    default device (weak typing unchanged)."""
    fn, ref = _DEVICE_CASES[case]
    xh = np.array([[0.5, -1.25, 2.0], [-3.0, 0.25, 1.0]], np.float32)
    run = {"eager": fn, "jit": cg.jit(fn), "vmap": cg.vmap(fn)}[mode]
    if mode == "vmap":
        got, want = run(_a(xh, other_device)), [ref(r.astype(np.float64)) for r in xh]
        on_default = run(_a(xh, clnp.default_device()))
    else:
        got, want = run(_a(xh[0], other_device)), ref(xh[0].astype(np.float64))
        on_default = run(_a(xh[0], clnp.default_device()))
    assert got.device == other_device
    assert on_default.device == clnp.default_device()
    assert got.dtype == on_default.dtype
    np.testing.assert_allclose(_np(got), want, rtol=1e-5)
    np.testing.assert_array_equal(_np(got), _np(on_default))


def test_python_scalar_carries_differentiate_on_another_device(other_device):
    """grad of fori_loop / scan and jvp of while_loop whose carries are Python scalars and
    whose bodies close over the differentiated array of a non-default device."""
    wh = np.array([0.5, -1.0, 2.0])
    w = _a(wh.astype(np.float32), other_device)
    g = cg.grad(lambda w: lax.fori_loop(0, 3, lambda i, c: c * 0.5 + clnp.sum(w * w), 1.0))(w)
    assert g.device == other_device
    # c3 = 0.125 + 1.75 * sum(w**2)
    np.testing.assert_allclose(_np(g), 1.75 * 2 * wh, rtol=1e-6)
    g = cg.grad(lambda w: lax.scan(lambda c, x: (c + x * w[0], None), 0.0, w)[0])(w)
    assert g.device == other_device
    # c = w0 * sum(w)
    np.testing.assert_allclose(_np(g), [2 * wh[0] + wh[1] + wh[2], wh[0], wh[0]], rtol=1e-6)
    p, t = cg.jvp(lambda w: lax.while_loop(lambda c: c[0] < 3,
                                           lambda c: (c[0] + 1, c[1] * clnp.sum(w)),
                                           (0, 1.0))[1], (w,), (clnp.ones_like(w),))
    assert p.device == t.device == other_device
    s = wh.sum()
    np.testing.assert_allclose([float(p), float(t)], [s ** 3, 3 * s ** 2 * 3], rtol=1e-6)
