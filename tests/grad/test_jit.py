"""clnp_grad.jit: results against eager clnp and NumPy, fused kernel counts, caching,
composition with the other transformations, and errors."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import clnp
import clnp_grad as cg
from conftest import env_importing_this_checkout


def _np(x):
    return clnp.asnumpy(x)


def _chain(x):
    return clnp.exp(clnp.sin(x) * 2 + clnp.cos(x)) / (1 + x * x) - 0.5 * clnp.tanh(x)


def _softmax(x):
    m = clnp.max(x, axis=-1, keepdims=True)
    e = clnp.exp(x - m)
    return e / clnp.sum(e, axis=-1, keepdims=True)


def _layernorm(x, w, b):
    mu = clnp.mean(x, axis=-1, keepdims=True)
    d = x - mu
    var = clnp.mean(d * d, axis=-1, keepdims=True)
    return d / clnp.sqrt(var + 1e-5) * w + b


def _logsumexp(x):
    m = clnp.max(x, axis=-1, keepdims=True)
    return clnp.log(clnp.sum(clnp.exp(x - m), axis=-1)) + m[..., 0]


def _data(device, shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def test_elementwise_chain_is_one_kernel(device):
    xs = np.linspace(-3, 3, 10_001, dtype=np.float32)
    x = clnp.asarray(xs, device=device)
    jf = cg.jit(_chain)
    got = jf(x)
    ref = np.exp(np.sin(xs) * 2 + np.cos(xs)) / (1 + xs * xs) - 0.5 * np.tanh(xs)
    np.testing.assert_allclose(_np(got), ref, rtol=2e-6, atol=2e-6)
    np.testing.assert_allclose(_np(jf(x)), _np(_chain(x)), rtol=1e-6, atol=1e-6)
    src = jf.lower(x).kernel_sources()
    assert len(src) == 1 and "__kernel" in src[0] and "exp" in src[0]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sin_and_cos_of_one_value_share_sincos(device, dtype):
    """``sin(x)`` and ``cos(x)`` in one fused kernel become one ``sincos`` call (the shared
    argument reduction is most of ew_chain's time on PoCL); the values stay those of the
    separate eager kernels, huge lanes (the lane-by-lane path), inf and NaN included."""
    if dtype == "float64" and not device.has_fp64:
        pytest.skip("device has no fp64")
    xs = np.concatenate([np.linspace(-30, 30, 4093), [1e6, -3e7, 2.5e5, np.inf, -np.inf,
                                                       np.nan, 0.0, -0.0, 1e-30]]).astype(dtype)
    x = clnp.asarray(xs, device=device)
    f = lambda v: clnp.sin(v) * 2 + clnp.cos(v) * clnp.cos(v + 1) - clnp.sin(v * 3)  # noqa: E731
    jf = cg.jit(f)
    src = jf.lower(x).kernel_sources()
    assert len(src) == 1
    # one pair (sin(v), cos(v)); cos(v + 1) and sin(3 v) have other arguments: each copy of
    # the body (GPUs: one; CPUs: a scalar tail and one or more unrolled vector copies, as
    # many as the device's vector width asks for) has one sincos, one cos and one sin
    bodies = src[0].count("= clnp_vm_sincos_")
    assert bodies == 1 if "vload" not in src[0] else bodies >= 2
    assert src[0].count("= clnp_vm_cos_") == src[0].count("= clnp_vm_sin_") == bodies
    got = _np(jf(x))
    np.testing.assert_array_equal(got, _np(f(x)))
    with np.errstate(invalid="ignore"):
        ref = np.sin(xs) * 2 + np.cos(xs) * np.cos(xs + 1) - np.sin(xs * 3)
    np.testing.assert_allclose(got, ref, rtol=1e-5 if dtype == "float32" else 1e-12,
                               atol=1e-5 if dtype == "float32" else 1e-12)


def test_sincos_pairs_only_same_value_and_dtype():
    from clnp._kernels.elementwise import Instr, sincos_pairs
    f4, f8, f2 = np.dtype("float32"), np.dtype("float64"), np.dtype("float16")
    ins = lambda op, a, d=f4: Instr(op, (a,), (d,), d, d)  # noqa: E731
    assert sincos_pairs((ins("sin", 0), ins("exp", 0), ins("cos", 0))) == {0: 2, 2: 0}
    assert sincos_pairs((ins("sin", 0), ins("cos", 1))) == {}
    assert sincos_pairs((ins("sin", 0, f8), ins("cos", 0, f4))) == {}
    assert sincos_pairs((ins("sin", 0, f2), ins("cos", 0, f2))) == {}
    # the second sin finds no partner left
    assert sincos_pairs((ins("cos", 0), ins("sin", 0), ins("sin", 0))) == {0: 1, 1: 0}


def test_new_size_reuses_the_program(device):
    jf = cg.jit(_chain)
    jf(clnp.asarray(np.ones(1000, np.float32), device=device))
    n_programs = len(device._programs)
    out = jf(clnp.asarray(np.full(777, 0.5, np.float32), device=device))
    assert len(device._programs) == n_programs      # only the trace is new
    assert len(jf._cache) == 2
    np.testing.assert_allclose(_np(out), _np(_chain(clnp.full(777, 0.5, device=device,
                                                              dtype=clnp.float32))), rtol=1e-6)


def test_broadcasts_casts_and_scalars_fuse(device):
    a = clnp.asarray(_data(device, (64, 33)), device=device)
    b = clnp.asarray(_data(device, (33,), 1), device=device)
    i = clnp.asarray(np.arange(64, dtype=np.int32).reshape(64, 1), device=device)

    def f(a, b, i):
        return clnp.astype(a * b + i, clnp.float32) * 0.5 + clnp.full((64, 33), 2.0,
                                                                      device=device)
    jf = cg.jit(f)
    np.testing.assert_allclose(_np(jf(a, b, i)), _np(f(a, b, i)), rtol=1e-6)
    assert len(jf.lower(a, b, i).kernel_sources()) == 1


@pytest.mark.parametrize("name", ["softmax", "layernorm", "logsumexp"])
def test_normalisations_in_one_kernel(device, name):
    xs = _data(device, (48, 130))
    x = clnp.asarray(xs, device=device)
    w = clnp.asarray(_data(device, (130,), 2), device=device)
    b = clnp.asarray(_data(device, (130,), 3), device=device)
    f, args = {"softmax": (_softmax, (x,)), "layernorm": (_layernorm, (x, w, b)),
               "logsumexp": (_logsumexp, (x,))}[name]
    jf = cg.jit(f)
    np.testing.assert_allclose(_np(jf(*args)), _np(f(*args)), rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(_np(jf(*args)), _np(f(*args)), rtol=2e-5, atol=2e-6)
    # one row kernel: every row's reductions, then its outputs (rows.py, rowcodegen.py)
    src = jf.lower(*args).kernel_sources()
    assert len(src) == 1 and src[0].startswith("// clnp jit row kernel")


# forward and backward of sum(f(x) * w): the ones cotangent, one row kernel for the forward
# values, the loss's per-row parts and the backward's row reductions, the loss's finishing
# reduction (see docs/jit.md "What fuses")
_FWD_BWD_KERNELS = {"softmax": 3, "layernorm": 3, "logsumexp": 3}


@pytest.mark.parametrize("name", ["softmax", "layernorm", "logsumexp"])
def test_normalisations_forward_and_backward_kernels(device, name):
    xs = _data(device, (48, 130))
    x = clnp.asarray(xs, device=device)
    ws = _data(device, (48, 130), 4)
    w = clnp.asarray(ws, device=device)
    g1 = clnp.asarray(np.ones(130, np.float32), device=device)
    g0 = clnp.asarray(np.zeros(130, np.float32), device=device)
    f = {"softmax": _softmax, "layernorm": lambda x: _layernorm(x, g1, g0),
         "logsumexp": lambda x: _logsumexp(x)[:, None] * w}[name]
    vg = cg.value_and_grad(lambda x: clnp.sum(f(x) * w))
    jvg = cg.jit(vg)
    v_ref, g_ref = vg(x)
    v, g = jvg(x)
    assert abs(float(v) - float(v_ref)) <= 1e-4 * max(1.0, abs(float(v_ref)))
    np.testing.assert_allclose(_np(g), _np(g_ref), rtol=2e-4, atol=2e-5)
    assert len(jvg.lower(x).kernel_sources()) <= _FWD_BWD_KERNELS[name]


def test_full_reduction_splits_and_matches(device):
    xs, ys = _data(device, (300_001,)), _data(device, (300_001,), 1)
    x, y = clnp.asarray(xs, device=device), clnp.asarray(ys, device=device)
    jf = cg.jit(lambda x, y: clnp.sum((x - y) ** 2))
    ref = np.sum((xs.astype(np.float64) - ys) ** 2)
    assert abs(float(jf(x, y)) - ref) / ref < 1e-4
    assert abs(float(jf(x, y)) - ref) / ref < 1e-4


def test_reduction_over_outer_axis_and_float64(device):
    dtypes = [np.float32] + ([np.float64] if device.has_fp64 else [])
    for d in dtypes:
        xs = _data(device, (37, 5, 11), dtype=d)
        x = clnp.asarray(xs, device=device)
        jf = cg.jit(lambda x: clnp.sum(x * x, axis=(0, 2)) + clnp.max(x, axis=(0, 2)))
        ref = np.sum(xs * xs, axis=(0, 2)) + np.max(xs, axis=(0, 2))
        np.testing.assert_allclose(_np(jf(x)), ref, rtol=1e-5 if d == np.float32 else 1e-12)


def test_reduction_over_several_strided_axes(device):
    """Reductions over two and three non-adjacent reduced dims (stepped with a carry on
    CPUs), split into parts that start mid-row, with a side output and a transposed input."""
    cases = [((64, 3, 33, 17), (0, 2, 3)), ((5, 3, 6, 4, 7), (0, 2, 4)),
             ((9, 2, 8, 3), (0, 3))]
    for shape, axes in cases:
        xs = _data(device, shape)
        x = clnp.asarray(xs, device=device)
        jf = cg.jit(lambda x: (x * 2 + 1, clnp.sum(x * 2 + 1, axis=axes),
                               clnp.max(x, axis=axes)))
        y, s, m = jf(x)
        np.testing.assert_allclose(_np(y), xs * 2 + 1, rtol=1e-6)
        np.testing.assert_allclose(_np(s), np.sum(xs.astype(np.float64) * 2 + 1, axis=axes),
                                   rtol=1e-4, atol=1e-3)
        np.testing.assert_array_equal(_np(m), np.max(xs, axis=axes))
        xt = clnp.asarray(np.ascontiguousarray(xs.T), device=device).T
        np.testing.assert_allclose(_np(cg.jit(lambda x: clnp.sum(x, axis=axes))(xt)),
                                   np.sum(xs.astype(np.float64), axis=axes),
                                   rtol=1e-4, atol=1e-3)


def test_weak_scalars_keep_dtype_and_do_not_retrace(device):
    x = clnp.asarray(_data(device, (10,)), device=device)
    jf = cg.jit(lambda x, s: x * s + s)
    assert jf(x, 2.0).dtype == clnp.float32
    np.testing.assert_allclose(_np(jf(x, 3.5)), _np(x) * 3.5 + 3.5, rtol=1e-6)
    assert len(jf._cache) == 1
    jf(x, 2)    # an int is another signature
    assert len(jf._cache) == 2


def test_repeated_calls_rebind_buffers_and_changed_scalars(device):
    """Later calls launch bound kernel copies (constant arguments set once): every call must
    see its own buffers and the current values of weak scalar arguments, in fused
    elementwise kernels, fused reductions and replayed opaque launches alike."""
    rng = np.random.default_rng(11)
    jf = cg.jit(lambda x, w, s: (x * s + 1.0, clnp.sum(x * s, axis=1), (x @ w) * s))
    for s in (2.0, -0.5, 2.0, 7.25):
        xs = rng.standard_normal((6, 5)).astype(np.float32)
        ws = rng.standard_normal((5, 3)).astype(np.float32)
        x, w = clnp.asarray(xs, device=device), clnp.asarray(ws, device=device)
        a, b, c = jf(x, w, s)
        np.testing.assert_allclose(_np(a), xs * np.float32(s) + 1, rtol=1e-6)
        np.testing.assert_allclose(_np(b), (xs * np.float32(s)).sum(1), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(_np(c), (xs @ ws) * np.float32(s), rtol=1e-5, atol=1e-5)
    assert len(jf._cache) == 1
    # the positional-array fast path: outputs are fresh arrays, inputs never written
    jg = cg.jit(lambda x: x * 2.0)
    x = clnp.asarray(np.arange(7, dtype=np.float32), device=device)
    outs = [jg(x) for _ in range(3)]
    assert len({id(o._buf) for o in outs}) == 3
    for o in outs:
        np.testing.assert_array_equal(_np(o), np.arange(7, dtype=np.float32) * 2)
    np.testing.assert_array_equal(_np(x), np.arange(7, dtype=np.float32))


def test_donated_arguments_give_their_buffers_to_outputs(device):
    def upd(p, g):
        return {k: p[k] - 0.5 * g[k] for k in p}, clnp.sum(g["a"])
    j = cg.jit(upd, donate_argnums=0)
    host = {"a": np.arange(6, dtype=np.float32), "b": np.ones((2, 3), np.float32)}
    mk = lambda: {k: clnp.asarray(v, device=device) for k, v in host.items()}  # noqa: E731
    g = mk()
    ref = {k: host[k] - 0.5 * host[k] for k in host}
    j(mk(), g)                                       # the first call builds
    p = mk()
    handles = {k: p[k]._buf.int_ptr for k in p}      # the handle, not a reference
    q, total = j(p, g)
    for k in ref:
        np.testing.assert_array_equal(_np(q[k]), ref[k])
        assert q[k]._buf.int_ptr == handles[k], k    # written in place
    assert float(total) == 15.0
    with pytest.raises(RuntimeError, match="donated to a jitted function"):
        p["a"] + 1
    with pytest.raises(RuntimeError, match="donated"):
        np.asarray(p["b"])
    assert "donated" in repr(p["a"])
    # a view of a donated array elsewhere: its buffer is left alone
    p = mk()
    view = p["a"][:3]
    q, _ = j(p, g)
    assert q["a"]._buf is not view._buf
    np.testing.assert_array_equal(_np(view), host["a"][:3])
    np.testing.assert_array_equal(_np(p["a"]), host["a"])
    # the same array passed twice: the donation gets a private copy, results stay right
    j2 = cg.jit(upd, donate_argnums=0)
    for _ in range(2):
        a, b = clnp.asarray(host["a"], device=device), clnp.asarray(host["b"], device=device)
        q, total = j2({"a": a, "b": b}, {"a": a, "b": b})
        np.testing.assert_array_equal(_np(q["a"]), host["a"] * 0.5)
        assert float(total) == 15.0
        np.testing.assert_array_equal(_np(a), host["a"])
    # a training loop that donates its state every step
    p = mk()
    for _ in range(3):
        p, _ = j(p, g)
    np.testing.assert_array_equal(_np(p["a"]), host["a"] - 1.5 * host["a"])
    with pytest.raises(ValueError, match="both static .* and donated"):
        cg.jit(lambda x, n: x * n, static_argnums=1, donate_argnums=1)(g["a"], 2)
    with pytest.raises(ValueError, match="donate_argnums 3 is out of range"):
        cg.jit(lambda x: x + 1, donate_argnums=3)(g["a"])


def test_square_by_pow_is_a_multiply(device):
    """``x ** 2`` compiles to ``x * x`` as NumPy computes it (bit-identical to NumPy's
    result), not the pow builtin; other exponents keep pow."""
    xs = _data(device, (5, 7))
    x = clnp.asarray(xs, device=device)
    jf = cg.jit(lambda x: x ** 2 - x ** 2.5)
    src = jf.lower(x).kernel_sources()
    assert len(src) == 1
    assert src[0].splitlines()[0] == "// clnp elementwise: multiply, pow, subtract"
    np.testing.assert_array_equal(_np(cg.jit(lambda x: x ** 2)(x)), xs ** 2)
    np.testing.assert_allclose(_np(jf(clnp.abs(x))), np.abs(xs) ** 2 - np.abs(xs) ** 2.5,
                               rtol=1e-5, atol=1e-6)
    xi = clnp.asarray(np.arange(-4, 5, dtype=np.int32), device=device)
    np.testing.assert_array_equal(_np(cg.jit(lambda x: x ** 2)(xi)),
                                  np.arange(-4, 5, dtype=np.int32) ** 2)


def test_static_arguments_and_pytrees(device):
    x = clnp.asarray(_data(device, (4, 6)), device=device)
    params = {"w": clnp.asarray(_data(device, (6, 3), 1), device=device),
              "b": clnp.asarray(_data(device, (3,), 2), device=device)}

    @cg.jit
    def layer(p, x):
        return {"y": clnp.tanh(x @ p["w"] + p["b"]), "n": x.shape[0]}
    out = layer(params, x)
    np.testing.assert_allclose(_np(out["y"]), np.tanh(_np(x) @ _np(params["w"]) +
                                                      _np(params["b"])), rtol=1e-5, atol=1e-6)
    assert int(out["n"]) == 4

    jp = cg.jit(lambda x, n: x ** n, static_argnums=1)
    np.testing.assert_allclose(_np(jp(x, 3)), _np(x) ** 3, rtol=1e-5)
    assert len(jp._cache) == 1 and jp(x, 2) is not None and len(jp._cache) == 2
    jk = cg.jit(lambda x, *, axis: clnp.sum(x, axis=axis), static_argnames="axis")
    np.testing.assert_allclose(_np(jk(x, axis=1)), _np(x).sum(1), rtol=1e-5)
    with pytest.raises(TypeError, match="static positional argument 1 must be hashable"):
        cg.jit(lambda x, n: x, static_argnums=1)(x, [1, 2])


def test_closed_over_constants(device):
    c = clnp.asarray(_data(device, (5,)), device=device)
    x = clnp.asarray(_data(device, (5,), 1), device=device)
    jf = cg.jit(lambda x: x * c + clnp.sum(c))
    np.testing.assert_allclose(_np(jf(x)), _np(x) * _np(c) + _np(c).sum(), rtol=1e-5)


def test_opaque_primitives_replay(device):
    xs = _data(device, (16, 12))
    x = clnp.asarray(xs, device=device)
    idx = clnp.asarray(np.array([3, 0, 7], np.int64), device=device)

    def f(x, idx):
        y = clnp.sort(x, axis=-1)
        z = clnp.cumulative_sum(x, axis=0)
        return y[idx] + z[:3] @ clnp.ones((12, 12), device=device, dtype=clnp.float32)
    jf = cg.jit(f)
    ref = _np(f(x, idx))
    np.testing.assert_allclose(_np(jf(x, idx)), ref, rtol=1e-5, atol=1e-5)
    x2 = clnp.asarray(xs[::-1].copy(), device=device)
    np.testing.assert_allclose(_np(jf(x2, idx)), _np(f(x2, idx)), rtol=1e-5, atol=1e-5)


def test_strided_arguments(device):
    xs = _data(device, (20, 30))
    x = clnp.asarray(xs, device=device)
    jf = cg.jit(lambda a: clnp.sum(clnp.exp(a), axis=0))
    np.testing.assert_allclose(_np(jf(x)), np.exp(xs).sum(0), rtol=1e-5)
    np.testing.assert_allclose(_np(jf(x.T[:, :20])), np.exp(xs.T[:, :20]).sum(0), rtol=1e-5)


def _mlp_loss(p, x, y):
    h = clnp.maximum(x @ p["w1"] + p["b1"], 0.0)
    logits = h @ p["w2"] + p["b2"]
    return clnp.mean(_logsumexp(logits) - clnp.sum(logits * y, axis=-1))


def _mlp(device):
    rng = np.random.default_rng(5)
    p = {"w1": rng.standard_normal((20, 16)) * 0.3, "b1": rng.standard_normal(16) * 0.1,
         "w2": rng.standard_normal((16, 4)) * 0.3, "b2": rng.standard_normal(4) * 0.1}
    p = {k: clnp.asarray(v.astype(np.float32), device=device) for k, v in p.items()}
    x = clnp.asarray(rng.standard_normal((32, 20)).astype(np.float32), device=device)
    y = clnp.asarray(np.eye(4, dtype=np.float32)[rng.integers(0, 4, 32)], device=device)
    return p, x, y


def _close_tree(a, b, tol=2e-5):
    for k in a:
        np.testing.assert_allclose(_np(a[k]), _np(b[k]), rtol=tol, atol=tol)


def test_grad_of_jit_and_jit_of_grad(device):
    p, x, y = _mlp(device)
    v_ref, g_ref = cg.value_and_grad(_mlp_loss)(p, x, y)
    for f in (cg.grad(cg.jit(_mlp_loss)), cg.jit(cg.grad(_mlp_loss))):
        f(p, x, y)
        _close_tree(f(p, x, y), g_ref)
    jvg = cg.jit(cg.value_and_grad(_mlp_loss))
    v, g = jvg(p, x, y)
    v, g = jvg(p, x, y)
    assert abs(float(v) - float(v_ref)) < 1e-5
    _close_tree(g, g_ref)
    # the whole train step: far fewer kernels than equations
    lowered = jvg.lower(p, x, y)
    n_eqns = lowered.as_text().count("\n")
    assert len(lowered.kernel_sources()) < n_eqns / 2


def test_jvp_vmap_and_nesting(device):
    xs = _data(device, (8, 5))
    x = clnp.asarray(xs, device=device)
    t = clnp.asarray(_data(device, (8, 5), 1), device=device)
    f = lambda x: clnp.sum(clnp.sin(x) * x, axis=-1)
    o, dt = cg.jvp(cg.jit(f), (x,), (t,))
    o2, dt2 = cg.jvp(f, (x,), (t,))
    np.testing.assert_allclose(_np(dt), _np(dt2), rtol=1e-5, atol=1e-6)
    for g in (cg.vmap(cg.jit(f)), cg.jit(cg.vmap(f)), cg.jit(cg.jit(f))):
        np.testing.assert_allclose(_np(g(x)), _np(f(x)), rtol=1e-5, atol=1e-6)
    h = cg.grad(cg.grad(cg.jit(lambda x: clnp.sum(clnp.sin(x)))))
    one = clnp.asarray(np.float32(1.0), device=device)
    assert abs(float(h(one)) + np.sin(1.0)) < 1e-5


def test_ir_text_and_clear_cache(device):
    x = clnp.asarray(_data(device, (6,)), device=device)
    jf = cg.jit(lambda x: clnp.exp(x) + 1)
    text = jf.lower(x).as_text()
    assert "exp" in text and "float32[6]" in text
    jf.clear_cache()
    assert len(jf._cache) == 0
    jf(x)
    cg.clear_caches()
    assert len(jf._cache) == 0


def test_log_compiles_says_why(device, capfd, monkeypatch):
    monkeypatch.setenv("CLNP_LOG_COMPILES", "1")
    jf = cg.jit(lambda x: x * 2)
    jf(clnp.ones(3, device=device, dtype=clnp.float32))
    jf(clnp.ones(4, device=device, dtype=clnp.float32))
    jf(clnp.ones(4, device=device, dtype=clnp.int32))
    err = capfd.readouterr().err
    assert "first call" in err and "new shape: [3] -> [4]" in err and \
        "new dtype: float32 -> int32" in err


def test_concretization_errors_name_the_line_and_the_fix(device):
    x = clnp.ones(3, device=device, dtype=clnp.float32)

    def f(x):
        if clnp.sum(x) > 0:        # the line the error names
            return x
        return -x
    with pytest.raises(cg.ConcretizationError) as e:
        cg.jit(f)(x)
    msg = str(e.value)
    assert isinstance(e.value, TypeError)
    assert "test_jit.py" in msg and "if clnp.sum(x) > 0" in msg
    assert "lax.cond" in msg and "clnp.where" in msg and "static_argnums" in msg
    with pytest.raises(cg.ConcretizationError, match="shape depends on the values"):
        cg.jit(lambda x: x[x > 0])(x)
    with pytest.raises(cg.ConcretizationError, match="float"):
        cg.jit(lambda x: float(x[0]))(x)


def test_concretization_error_names_a_script_in_a_folder_named_clnp(tmp_path):
    """The line named is the user's even where their script sits in a folder named ``clnp``
    (what ``git clone`` names a clone, whose tests and scripts are the user's code): frames
    are told apart by the packages' real folders, not by a name in the path (issue #28)."""
    folder = tmp_path / "clnp" / "clnp_grad"
    folder.mkdir(parents=True)
    script = folder / "my_script.py"
    script.write_text(
        "import clnp, clnp_grad as cg\n"
        "def f(x):\n"
        "    if clnp.sum(x) > 0:   # the user's line\n"
        "        return x\n"
        "    return -x\n"
        "try:\n"
        "    cg.jit(f)(clnp.ones(3))\n"
        "except cg.ConcretizationError as e:\n"
        "    print(e)\n")
    res = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=300, cwd=str(tmp_path), env=env_importing_this_checkout())
    assert res.returncode == 0, res.stderr[-3000:]
    assert f"at {script}:3 (if clnp.sum(x) > 0:" in res.stdout, res.stdout


def test_bad_arguments(device):
    with pytest.raises(TypeError, match="expected a function"):
        cg.jit(3)
    jf = cg.jit(lambda x: x)
    with pytest.raises(TypeError, match="argument leaves must be arrays"):
        jf("text")
    with pytest.raises(ValueError, match="static_argnums 4 is out of range"):
        cg.jit(lambda x: x, static_argnums=4)(clnp.ones(2, device=device))


def test_empty_and_zero_d(device):
    e = clnp.zeros((0, 3), device=device, dtype=clnp.float32)
    jf = cg.jit(lambda x: clnp.exp(x) * 2)
    assert jf(e).shape == (0, 3)
    z = clnp.asarray(np.float32(0.5), device=device)
    np.testing.assert_allclose(_np(jf(z)), np.exp(0.5) * 2, rtol=1e-6)


def test_runs_on_the_arguments_device():
    """Each device gets its own executable; the backward graph of grad(jit) runs there too
    (it used to fall back to the default device, mixing buffers of two contexts)."""
    devs = clnp.devices()
    if len(devs) < 2:
        pytest.skip("needs two OpenCL devices (e.g. POCL_DEVICES='pthread pthread')")
    jf = cg.jit(lambda x, s: clnp.sum(clnp.sin(x) * s))
    for d in devs[:2]:
        x = clnp.asarray(np.arange(5, dtype=np.float32), device=d)
        y = jf(x, 2.0)
        assert y.device == d
        np.testing.assert_allclose(float(y), 2 * np.sin(np.arange(5)).sum(), rtol=1e-5)
        g = cg.grad(jf)(x, 2.0)
        assert g.device == d
        np.testing.assert_allclose(_np(g), 2 * np.cos(np.arange(5)), rtol=1e-5)


def test_arrays_of_two_devices_in_one_kernel_raise():
    """A jitted function whose fused kernel would read an array of another device (a
    closed-over constant, a creation op on the default device) raises ValueError naming
    both devices before the launch: PoCL aborted the process on such a buffer."""
    devs = clnp.devices()
    if len(devs) < 2 or devs[0].platform_name != devs[1].platform_name:
        pytest.skip("needs two OpenCL devices (e.g. POCL_DEVICES='pthread pthread')")
    w = clnp.asarray(np.ones(5, np.float32), device=devs[0])
    x = clnp.asarray(np.arange(5, dtype=np.float32), device=devs[1])
    with pytest.raises(ValueError, match="different devices|in a function running on"):
        cg.jit(lambda x: clnp.sin(x) * w + 1)(x)
    loop = lambda x: lax_fori(x, w)  # noqa: E731
    with pytest.raises(ValueError, match="different devices|in a function running on"):
        loop(x)
    np.testing.assert_allclose(_np(cg.jit(lambda x: clnp.sin(x) + 1)(x)),
                               np.sin(np.arange(5)) + 1, rtol=1e-6)


def lax_fori(x, w):
    from clnp_grad import lax
    return lax.fori_loop(0, 3, lambda i, c: c * w + 1.0, x)


def test_matmul_precision_is_part_of_the_cache_key(device, monkeypatch, capfd):
    # as jax_default_matmul_precision in JAX: an executable built under one precision is
    # not replayed under another (its product kernels were chosen when it was built)
    monkeypatch.setenv("CLNP_LOG_COMPILES", "1")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((16, 8)).astype(np.float32)
    b = rng.standard_normal((8, 4)).astype(np.float32)
    x, w = clnp.asarray(a, device=device), clnp.asarray(b, device=device)
    jf = cg.jit(lambda x, w: clnp.tanh(x @ w))
    r1 = np.asarray(jf(x, w))
    with clnp.matmul_precision("tf32"):
        r2 = np.asarray(jf(x, w))
        eager = np.asarray(clnp.tanh(x @ w))
    r3 = np.asarray(jf(x, w))
    err = capfd.readouterr().err
    assert "(matmul precision highest)" in err and "(matmul precision tf32)" in err
    assert err.count("tracing") == 1           # one trace, two executables
    np.testing.assert_allclose(r1, np.tanh(a @ b), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(r2, eager, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(r3, r1)


def test_cpu_reductions_spread_over_work_groups(device, monkeypatch):
    """A fused reduction with few outputs (a batch norm's per-channel sums) launches at least
    four work-groups per compute unit on CPUs, where PoCL runs each work-group on one thread
    (64 channel sums in one group of 64 used one core of two)."""
    from clnp_grad._jit import executable as ex
    seen = []
    real = ex._RedStep.run

    def spy(self, env):
        real(self, env)
        seen.append((self.gsize, self.lsize))
    monkeypatch.setattr(ex._RedStep, "run", spy)
    xs = np.random.default_rng(3).standard_normal((4, 64, 8, 8)).astype(np.float32)
    x = clnp.asarray(xs, device=device)
    f = cg.jit(lambda x: clnp.sum(x * x, axis=(0, 2, 3)))
    np.testing.assert_allclose(_np(f(x)), (xs * xs).sum((0, 2, 3)), rtol=1e-5)
    assert seen
    (g,), (l,) = seen[0]
    if device.is_cpu:
        assert g // l >= min(64, 4 * device.compute_units), (g, l)
