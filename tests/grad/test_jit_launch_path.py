"""The per-call path of compiled functions: constants folded into the kernels that read them
(``staging.fold_constants``), the fast signature of pytree arguments, launches without events
(``clnp._runtime.launch.Launch``), and the eager sum of a short leading axis (split-K partials)."""
from __future__ import annotations

import numpy as np
import pyopencl as cl
import pytest

import clnp
import clnp_grad as cg
from clnp._runtime import launch as _bound
from clnp._core import eager as _eager
from clnp_grad._jit.staging import fold_constants

# the fusion groups' kernels: small steps would be one whole-step kernel
pytestmark = pytest.mark.usefixtures("general_path")


def _mean_loss(w, x, y):
    z = x @ w
    m = clnp.max(z, axis=1, keepdims=True)
    lse = m[:, 0] + clnp.log(clnp.sum(clnp.exp(z - m), axis=1))
    return clnp.mean(lse - clnp.sum(z * y, axis=1))


def _np_mean_loss_grad(w, x, y):
    z = x @ w
    e = np.exp(z - z.max(axis=1, keepdims=True))
    s = e / e.sum(axis=1, keepdims=True)
    return x.T @ ((s - y) / x.shape[0])


def test_seed_constants_fold_and_merge_row_kernels(device, rng):
    """``mean``'s cotangent seed (1 / n, broadcast) becomes a literal: no kernel computes it,
    and the backward's row kernel joins the forward's (one kernel walks each row for both)."""
    w = rng.standard_normal((12, 10)).astype(np.float32)
    x = rng.standard_normal((64, 12)).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 64)]
    f = cg.jit(cg.grad(_mean_loss))
    args = [clnp.asarray(a, device=device) for a in (w, x, y)]
    np.testing.assert_allclose(clnp.asnumpy(f(*args)), _np_mean_loss_grad(w, x, y),
                               rtol=2e-4, atol=1e-6)
    low = f.lower(*args)
    assert "full[" not in low.as_text()
    assert "0.015625" in low.as_text()          # 1 / 64, a literal operand now
    rows = [s for s in low.kernel_sources() if "clnp_jrow" in s]
    assert len(rows) == 1, [s[:80] for s in low.kernel_sources()]


def test_fold_constants_values(device):
    """Folded arithmetic matches the eager results bit for bit (IEEE rounding of float32
    add/multiply/divide), through views and conversions, and a uniform constant that a
    product reads is still materialised."""
    def f(x):
        c = clnp.full((), 3.0, dtype=clnp.float32, device=x.device) * 0.1   # float32 rounding
        d = clnp.broadcast_to(clnp.reshape(c / 7.0, (1,)), (4,))
        e = clnp.astype(d, clnp.float32) - 1.5
        m = clnp.full((4, 3), 2.0, dtype=clnp.float32, device=x.device)
        return x * e + 1.0, e @ m
    x = clnp.asarray(np.arange(4, dtype=np.float32), device=device)
    jf = cg.jit(f)
    got = [clnp.asnumpy(r) for r in jf(x)]
    want = [clnp.asnumpy(r) for r in f(x)]
    for g, w_ in zip(got, want):
        np.testing.assert_array_equal(g, w_)
    c = np.float32(np.float32(3.0) * np.float32(0.1)) / np.float32(7.0) - np.float32(1.5)
    np.testing.assert_array_equal(got[0], np.arange(4, dtype=np.float32) * c + 1)
    text = jf.lower(x).as_text()
    assert "dot_general" in text and "full[shape=(4, 3)" in text


def test_fold_constants_leaves_other_dtypes(device):
    """Only float32/float64 uniform values are folded: integer and half-precision arithmetic
    keeps its device semantics (wrap-around, float16 rounding)."""
    def f(x):
        i = clnp.full((), 2**31 - 1, dtype=clnp.int32, device=x.device) + 1   # wraps there
        return x + i
    x = clnp.asarray(np.zeros(3, np.int32), device=device)
    g = cg.make_ir(f)(x)
    folded = fold_constants(g)
    assert any(e.prim.name == "full" for e in folded.eqns)
    assert [e.inputs for e in folded.eqns] == [e.inputs for e in g.eqns]
    np.testing.assert_array_equal(clnp.asnumpy(cg.jit(f)(x)), clnp.asnumpy(f(x)))


def test_pytree_arguments_take_the_fast_path(device, rng):
    """A dict of arrays is signed by its structure and leaves: one entry per structure, the
    new values used, a new shape or key compiles again."""
    calls = []

    def step(p, x):
        calls.append(1)
        return {k: v - 0.5 * x[: (tuple(v.shape) + (1,))[0]] for k, v in p.items()}
    f = cg.jit(step)
    x = clnp.asarray(rng.standard_normal(8).astype(np.float32), device=device)
    for scale in (1.0, 2.0, 3.0):
        p = {"a": clnp.asarray(np.full(3, scale, np.float32), device=device),
             "b": clnp.asarray(np.full(5, -scale, np.float32), device=device)}
        out = f(p, x)
        np.testing.assert_allclose(clnp.asnumpy(out["a"]), scale - 0.5 * clnp.asnumpy(x)[:3])
        np.testing.assert_allclose(clnp.asnumpy(out["b"]), -scale - 0.5 * clnp.asnumpy(x)[:5])
    assert len(calls) == 1 and len(f._fast) == 1
    f({"a": p["a"], "c": p["b"]}, x)                 # another key: another structure
    f({"a": p["b"], "b": p["b"]}, x)                 # another shape
    assert len(calls) == 3 and len(f._fast) == 3
    f({"a": p["a"], "b": 1.0}, x)                    # a Python scalar leaf: the full path
    assert len(calls) == 4 and len(f._fast) == 3


@pytest.fixture
def no_event_everywhere(monkeypatch):
    """Launch without events on every platform (the NVIDIA path, exercised on any device)."""
    monkeypatch.setattr(_bound, "_NO_EVENT_VENDORS", ("",))
    monkeypatch.setattr(_bound, "_by_context", {})
    yield
    _bound._by_context.clear()


def test_launch_without_event(device, rng, no_event_everywhere):
    """Compiled steps (bound kernels, split-K products, captured launches) launched without
    events compute what they computed with them."""
    w = rng.standard_normal((300, 40)).astype(np.float32)
    x = rng.standard_normal((16, 300)).astype(np.float32)
    f = cg.jit(cg.value_and_grad(lambda w, x: clnp.sum(clnp.tanh(x @ w) ** 2)))
    args = (clnp.asarray(w, device=device), clnp.asarray(x, device=device))
    for _ in range(3):
        v, g = f(*args)
    t = np.tanh(x @ w)
    np.testing.assert_allclose(float(v), float((t ** 2).sum()), rtol=1e-4)
    np.testing.assert_allclose(clnp.asnumpy(g), x.T @ (2 * t * (1 - t * t)), rtol=2e-3,
                               atol=1e-3)
    k = cl.Kernel(cl.Program(device.context, "__kernel void k(__global float *a)"
                             "{ a[get_global_id(0)] = 7.0f; }").build(), "k")
    buf = clnp.zeros(64, dtype=clnp.float32, device=device)
    k.set_arg(0, buf._buf)
    launch = _bound.Launch(k, (64,), (16,))
    # the foreign call goes through the OpenCL loader PyOpenCL uses (a pip-only environment
    # has no other); were it missing, the launch goes through PyOpenCL instead
    try:
        _bound._library()
        available = True
    except (OSError, AttributeError):
        available = False
    assert (launch.fast is not None) == available
    launch(device.queue)
    np.testing.assert_array_equal(clnp.asnumpy(buf), np.full(64, 7, np.float32))


def test_launch_falls_back_to_pyopencl(device, no_event_everywhere, monkeypatch):
    """Where the foreign call is unavailable (no OpenCL library found), a launch goes through
    PyOpenCL's enqueue, with the same result."""
    def no_library():
        raise OSError("no libOpenCL")
    monkeypatch.setattr(_bound, "_library", no_library)
    calls = []
    enqueue = _bound._enqueue
    k = cl.Kernel(cl.Program(device.context, "__kernel void k(__global float *a)"
                             "{ a[get_global_id(0)] = 5.0f; }").build(), "k")
    buf = clnp.zeros(64, dtype=clnp.float32, device=device)
    k.set_arg(0, buf._buf)
    launch = _bound.Launch(k, (64,), (16,))
    assert launch.fast is None
    monkeypatch.setattr(_bound, "_enqueue", lambda *a: calls.append(a) or enqueue(*a))
    launch(device.queue)
    assert len(calls) == 1
    np.testing.assert_array_equal(clnp.asnumpy(buf), np.full(64, 5, np.float32))


def test_no_launch_over_zero_work_items(device, no_event_everywhere, monkeypatch):
    """A launch over a zero global size reaches no driver, on every path: a kernel's call,
    a bound kernel and a prepared launch (PoCL 3.0 divides by zero enqueueing one: #28)."""
    calls = []
    monkeypatch.setattr(cl, "enqueue_nd_range_kernel", lambda *a, **k: calls.append(a))
    src = "__kernel void k(__global float *a, int n) { a[get_global_id(0)] = n; }"
    k = device.kernel(("test-zero-work", src), lambda: (src, "k", [None, np.int32]))
    assert isinstance(k, _bound.Kernel)
    buf = clnp.zeros(4, dtype=clnp.float32, device=device)
    assert k(device.queue, (0,), None, buf._buf, 3) is None
    assert k(device.queue, (4, 0), (1, 1), buf._buf, 3) is None
    bound = _bound.bind(k, (0,), None, [buf._buf, 3], [0])
    bound(device.queue, [buf._buf])
    launch = _bound.Launch(bound.kernel, (0,), None)
    assert launch.fast is None
    launch(device.queue)
    assert calls == []
    np.testing.assert_array_equal(clnp.asnumpy(buf), np.zeros(4, np.float32))


def test_launch_error_is_pyopencl_error(device, no_event_everywhere):
    """A launch the driver refuses raises PyOpenCL's error, naming it, as before."""
    k = cl.Kernel(cl.Program(device.context, "__kernel void k(__global float *a)"
                             "{ a[get_global_id(0)] = 1.0f; }").build(), "k")
    # the argument was never set: CL_INVALID_KERNEL_ARGS
    with pytest.raises(cl.Error, match="(?i)arg"):
        _bound.Launch(k, (64,), (16,))(device.queue)


def test_gpu_sum_of_short_leading_axis_is_one_item_per_output(device, rng, monkeypatch):
    """The sum of a few partials ([4, M, N], the split-K products') takes one item per
    output on GPUs; long leading axes keep the group-per-columns mapping."""
    fake_gpu = type("FakeGPU", (), {"is_cpu": False, "compute_units": 132,
                                    "max_work_group_size": 1024})()
    mode = _eager.reduce_plan(fake_gpu, 256 * 1024, 4, 256 * 1024, 1, [256 * 1024], 4,
                              gcolumn=True)[0]
    assert mode == "column"
    assert _eager.reduce_plan(fake_gpu, 1024, 256, 1024, 1, [1024], 4, gcolumn=True)[0] \
        == "gcolumn"
    a = rng.standard_normal((4, 33, 70)).astype(np.float32)
    np.testing.assert_allclose(clnp.asnumpy(clnp.sum(clnp.asarray(a, device=device),
                                                     axis=0)), a.sum(axis=0), rtol=1e-5,
                               atol=1e-6)
