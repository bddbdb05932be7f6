"""clnp_grad.jit: horizontal reductions (``fusion._horizontal_reductions``). Independent
reductions to one value each join one kernel (``codegen.render_horizontal_reduce``): a
gradient-norm clip's sums of squares, the finiteness checks of a step's gradients. Against
NumPy, in the device's own layout and in the GPU layout (``Device.is_cpu`` off, as the
Oclgrind cases do: a work-group per member, combined in local memory)."""
from __future__ import annotations

import numpy as np
import pytest

import clnp
import clnp_grad as cg
from clnp_grad._jit import executable

# the fusion groups' kernels: small steps would be one whole-step kernel
pytestmark = pytest.mark.usefixtures("general_path")


@pytest.fixture(params=["auto", "gpu"])
def dev(request, device, monkeypatch):
    if request.param == "gpu":
        monkeypatch.setattr(device, "is_cpu", False)
    return device


SHAPES = [(5,), (64, 64), (3, 7, 9), (1000,), (20000,), ()]


def _leaves(dev, rng, shapes=SHAPES, dtype=np.float32):
    hs = [rng.standard_normal(s).astype(dtype) for s in shapes]
    return hs, [clnp.asarray(h, device=dev) for h in hs]


def _n_sources(jf, *args):
    return len(jf.lower(*args).kernel_sources())


@pytest.mark.parametrize("zero_d", [False, True])
def test_global_norm_is_one_reduction_launch(dev, zero_d):
    """The global norm of five leaves: one kernel for the five sums of squares, one for
    their sum and square root. A 0-d leaf's square joins the scalar code instead."""
    hs, xs = _leaves(dev, np.random.default_rng(0), SHAPES if zero_d else SHAPES[:-1])
    f = cg.jit(lambda ts: clnp.sqrt(sum(clnp.sum(t * t) for t in ts)))
    want = np.sqrt(sum((h.astype(np.float64) ** 2).sum() for h in hs))
    for _ in range(3):       # build, record, replay
        np.testing.assert_allclose(float(f(xs)), want, rtol=1e-5)
    srcs = f.lower(xs).kernel_sources()
    assert sum("clnp_jh_5_multiply_sum" in s for s in srcs) == 1
    assert len(srcs) == (3 if zero_d else 2)


def test_members_of_several_kinds(dev):
    """float32 sums, bool ``all`` of finiteness and int64 sums: one kernel per accumulator
    dtype, each result right (a NaN and an inf among the leaves)."""
    rng = np.random.default_rng(1)
    hs, xs = _leaves(dev, rng)
    hs[1][3, 4] = np.nan
    hs[3][7] = np.inf
    xs = [clnp.asarray(h, device=dev) for h in hs]
    ih = [rng.integers(-50, 50, s) for s in [(9,), (4, 5)]]
    ix = [clnp.asarray(h, device=dev) for h in ih]

    def f(ts, js):
        return ([clnp.all(clnp.isfinite(t)) for t in ts], [clnp.sum(t) for t in ts],
                [clnp.sum(j * 3) for j in js])
    jf = cg.jit(f)
    for _ in range(3):
        fin, sums, isums = jf(xs, ix)
        assert [bool(v) for v in fin] == [bool(np.isfinite(h).all()) for h in hs]
        for got, h in zip(sums, hs):
            if np.isfinite(h).all():
                np.testing.assert_allclose(float(got), h.astype(np.float64).sum(), rtol=2e-4,
                                           atol=1e-3)
        assert [int(v) for v in isums] == [int((h * 3).sum()) for h in ih]
    assert _n_sources(jf, xs, ix) == 3


def test_dependent_reductions_do_not_join(dev):
    """``s2`` reads ``s1`` (through an elementwise group), ``s4`` reads ``s3``: the
    independent ones join, the dependent ones run after, and no join makes a cycle."""
    rng = np.random.default_rng(2)
    (x, y, z, w), xs = _leaves(dev, rng, [(50,), (60,), (70,), (80,)])

    def f(x, y, z, w):
        s1, s3 = clnp.sum(x * x), clnp.sum(z)
        s2 = clnp.sum(y * s1)
        s4 = clnp.sum(w * s3 + s2)
        return s1, s2, s3, s4
    jf = cg.jit(f)
    x64, y64, z64, w64 = (a.astype(np.float64) for a in (x, y, z, w))
    s1, s3 = (x64 * x64).sum(), z64.sum()
    s2 = (y64 * s1).sum()
    want = [s1, s2, s3, (w64 * s3 + s2).sum()]
    for _ in range(3):
        for got, v in zip(jf(*xs), want):
            np.testing.assert_allclose(float(got), v, rtol=1e-4, atol=1e-3)


def test_many_members_split_by_argument_bytes(dev, monkeypatch):
    """Forty leaves take several kernels: each kernel's arguments fit the device's
    parameter bytes (and a budget cut to 512 bytes here, about four members)."""
    monkeypatch.setattr(executable, "_HORIZONTAL_PARAM_BYTES", 512)
    rng = np.random.default_rng(3)
    shapes = [(int(n),) for n in rng.integers(1, 400, 40)]
    hs, xs = _leaves(dev, rng, shapes)
    f = cg.jit(lambda ts: [clnp.sum(t * t) for t in ts])
    for _ in range(3):
        for got, h in zip(f(xs), hs):
            np.testing.assert_allclose(float(got), (h.astype(np.float64) ** 2).sum(),
                                       rtol=1e-4)
    n = _n_sources(f, xs)
    assert 40 // 5 <= n < 40


def test_clip_by_global_norm_step(dev):
    """A gradient step with clipping (clnp_nn.optim) over leaves of several shapes: its
    sums of squares are one launch, and the update matches NumPy's."""
    from clnp_nn import optim
    rng = np.random.default_rng(4)
    hs, ps = _leaves(dev, rng, [(8, 3), (3,), (5, 5), (7,)])
    gh, gs = _leaves(dev, rng, [(8, 3), (3,), (5, 5), (7,)])
    opt = optim.chain(optim.clip_by_global_norm(0.5), optim.sgd(0.1))
    state = opt.init(ps)

    def step(p, g, s):
        u, s = opt.update(g, s, p)
        return optim.apply_updates(p, u), s
    jstep = cg.jit(step)
    norm = np.sqrt(sum((g.astype(np.float64) ** 2).sum() for g in gh))
    scale = min(1.0, 0.5 / norm)
    for _ in range(3):
        new, _ = jstep(ps, gs, state)
        for got, p, g in zip(new, hs, gh):
            np.testing.assert_allclose(clnp.asnumpy(got), p - 0.1 * g * scale, rtol=1e-5,
                                       atol=1e-6)
    srcs = "\n".join(jstep.lower(ps, gs, state).kernel_sources())
    assert "clnp_jh_4_multiply_sum" in srcs
