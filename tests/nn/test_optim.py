"""clnp_nn.optim against a NumPy reference of optax's formulas (always) and optax itself
(where it is installed), for 10 steps of every optimizer and schedule."""
from __future__ import annotations

import math

import numpy as np
import pytest

import clnp as xp
import clnp_grad as cg
import clnp_nn.optim as optim

STEPS = 10
F = np.float32


# ---------------------------------------------------------------- NumPy reference (float32)
def ref_schedule(name, kw):
    """The schedules' formulas in float32 NumPy, from optax's documentation."""
    def poly(init, end, power, steps, begin=0):
        def s(c):
            c = np.clip(F(c) - begin, 0, steps)
            return F((init - end) * (F(1) - c / F(steps)) ** F(power) + end)
        return s

    def expo(init_value, transition_steps, decay_rate, transition_begin=0, staircase=False,
             end_value=None):
        init, steps, rate, begin, end = (init_value, transition_steps, decay_rate,
                                         transition_begin, end_value)
        def s(c):
            d = F(c) - F(begin)
            p = d / F(steps)
            if staircase:
                p = np.floor(p)
            v = F(init) if d <= 0 else F(init * F(rate) ** p)
            if end is not None:
                v = max(v, F(end)) if rate < 1 else min(v, F(end))
            return F(v)
        return s

    def cos(init_value, decay_steps, alpha=0.0, exponent=1.0):
        init, steps = init_value, decay_steps
        def s(c):
            c = min(F(c), F(steps))
            cd = F(0.5) * (F(1) + np.cos(F(math.pi) * c / F(steps)))
            return F(init * ((1 - alpha) * cd ** F(exponent) + alpha))
        return s

    def join(scheds, bounds):
        def s(c):
            out = scheds[0](c)
            for b, sc in zip(bounds, scheds[1:]):
                out = out if c < b else sc(c - b)
            return out
        return s

    if name == "constant_schedule":
        return lambda c: F(kw["value"])
    if name == "linear_schedule":
        return poly(kw["init_value"], kw["end_value"], 1, kw["transition_steps"],
                    kw.get("transition_begin", 0))
    if name == "polynomial_schedule":
        return poly(kw["init_value"], kw["end_value"], kw["power"], kw["transition_steps"],
                    kw.get("transition_begin", 0))
    if name == "exponential_decay":
        return expo(**kw)
    if name == "cosine_decay_schedule":
        return cos(**kw)
    if name == "warmup_cosine_decay_schedule":
        peak, w, d = kw["peak_value"], kw["warmup_steps"], kw["decay_steps"]
        alpha = kw.get("end_value", 0.0) / peak
        return join([poly(kw["init_value"], peak, 1, w), cos(peak, d - w, alpha)], [w])
    if name == "join_schedules":
        return join([lambda c: F(1.0), expo(0.5, 2, 0.5)], [4])
    raise KeyError(name)


SCHEDULES = [
    ("constant_schedule", dict(value=0.3)),
    ("linear_schedule", dict(init_value=1.0, end_value=0.1, transition_steps=6,
                             transition_begin=2)),
    ("polynomial_schedule", dict(init_value=1.0, end_value=0.0, power=2.0,
                                 transition_steps=8)),
    ("exponential_decay", dict(init_value=0.5, transition_steps=3, decay_rate=0.7)),
    ("exponential_decay", dict(init_value=0.5, transition_steps=3, decay_rate=0.7,
                               transition_begin=2, staircase=True, end_value=0.2)),
    ("cosine_decay_schedule", dict(init_value=0.8, decay_steps=7, alpha=0.1)),
    ("warmup_cosine_decay_schedule", dict(init_value=0.0, peak_value=1.0, warmup_steps=3,
                                          decay_steps=9, end_value=0.05)),
    ("join_schedules", None),
]


def make_schedule(mod, name, kw):
    if name == "join_schedules":
        return mod.join_schedules([mod.constant_schedule(1.0),
                                   mod.exponential_decay(0.5, 2, 0.5)], [4])
    return getattr(mod, name)(**kw)


class RefOpt:
    """One optimizer's update rule in NumPy, per leaf (optax's formulas, float32)."""

    def __init__(self, name, lr, **kw):
        self.name, self.lr, self.kw, self.t = name, lr, kw, 0
        self.st: dict = {}

    def lr_at(self, count):
        return F(self.lr(count)) if callable(self.lr) else F(self.lr)

    def _adam(self, k, g, b1, b2, eps, eps_root):
        m, v = self.st.get((k, "m"), np.zeros_like(g)), self.st.get((k, "v"), np.zeros_like(g))
        m = F(1 - b1) * g + F(b1) * m
        v = F(1 - b2) * (g * g) + F(b2) * v
        self.st[(k, "m")], self.st[(k, "v")] = m, v
        c = self.t + 1
        mh = m / F(1 - F(b1) ** F(c))
        vh = v / F(1 - F(b2) ** F(c))
        return mh / (np.sqrt(vh + F(eps_root)) + F(eps))

    def step(self, grads, params):
        kw, lr = self.kw, self.lr_at(self.t)
        out = {}
        for k, g in grads.items():
            p = params[k]
            if self.name == "sgd":
                u = g
                if kw.get("momentum") is not None:
                    mu = F(kw["momentum"])
                    tr = g + mu * self.st.get((k, "t"), np.zeros_like(g))
                    self.st[(k, "t")] = tr
                    u = g + mu * tr if kw.get("nesterov") else tr
                u = -lr * u
            elif self.name in ("adam", "adamw", "lamb"):
                eps = kw.get("eps", 1e-6 if self.name == "lamb" else 1e-8)
                u = self._adam(k, g, kw.get("b1", 0.9), kw.get("b2", 0.999), eps,
                               kw.get("eps_root", 0.0))
                wd = kw.get("weight_decay", 1e-4 if self.name == "adamw" else 0.0)
                if wd:
                    u = u + F(wd) * p
                if self.name == "lamb":
                    pn, un = np.sqrt(np.sum(p * p)), np.sqrt(np.sum(u * u))
                    u = u * (F(1) if pn == 0 or un == 0 else pn / un)
                u = -lr * u
            elif self.name == "rmsprop":
                d, eps = F(kw.get("decay", 0.9)), F(kw.get("eps", 1e-8))
                nu = F(1 - d) * (g * g) + d * self.st.get((k, "nu"), np.zeros_like(g))
                self.st[(k, "nu")] = nu
                if kw.get("centered"):
                    mu = F(1 - d) * g + d * self.st.get((k, "mu"), np.zeros_like(g))
                    self.st[(k, "mu")] = mu
                    nu = nu - mu * mu
                u = -lr * (F(1) / np.sqrt(nu + eps) * g)
                if kw.get("momentum") is not None:
                    tr = u + F(kw["momentum"]) * self.st.get((k, "t"), np.zeros_like(g))
                    self.st[(k, "t")] = tr
                    u = tr
            elif self.name == "adagrad":
                s = g * g + self.st.get((k, "s"), np.full_like(g, F(0.1)))
                self.st[(k, "s")] = s
                u = -lr * (np.where(s > 0, F(1) / np.sqrt(s + F(1e-7)), F(0)) * g)
            out[k] = u.astype(F)
        self.t += 1
        return out


OPTIMIZERS = [
    ("sgd", dict()),
    ("sgd", dict(momentum=0.9)),
    ("sgd", dict(momentum=0.8, nesterov=True)),
    ("adam", dict()),
    ("adam", dict(b1=0.8, b2=0.99, eps=1e-6, eps_root=1e-8)),
    ("adamw", dict(weight_decay=0.05)),
    ("rmsprop", dict()),
    ("rmsprop", dict(centered=True, momentum=0.9)),
    ("adagrad", dict()),
    ("lamb", dict(weight_decay=0.01)),
]


def _problem(rng):
    params = {"w": rng.standard_normal((4, 3)).astype(F), "b": rng.standard_normal(3).astype(F)}
    grads = [{"w": rng.standard_normal((4, 3)).astype(F), "b": rng.standard_normal(3).astype(F)}
             for _ in range(STEPS)]
    return params, grads


def _run_clnp(opt, params, grads, device):
    p = {k: xp.asarray(v, device=device) for k, v in params.items()}
    state = opt.init(p)
    traj = []
    for g in grads:
        u, state = opt.update({k: xp.asarray(v, device=device) for k, v in g.items()}, state, p)
        p = optim.apply_updates(p, u)
        traj.append({k: xp.asnumpy(v) for k, v in p.items()})
    return traj, state


def _ids(cases):
    return [f"{n}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" if kw else n for n, kw in cases]


@pytest.mark.parametrize("use_schedule", [False, True], ids=["lr", "schedule"])
@pytest.mark.parametrize("name,kw", OPTIMIZERS, ids=_ids(OPTIMIZERS))
def test_optimizer_matches_reference(device, rng, name, kw, use_schedule):
    params, grads = _problem(rng)
    lr = optim.exponential_decay(0.05, 3, 0.6) if use_schedule else 0.05
    traj, _ = _run_clnp(getattr(optim, name)(lr, **kw), params, grads, device)

    ref = RefOpt(name, ref_schedule("exponential_decay",
                                    dict(init_value=0.05, transition_steps=3, decay_rate=0.6))
                 if use_schedule else 0.05, **kw)
    p = {k: v.copy() for k, v in params.items()}
    for i, g in enumerate(grads):
        u = ref.step(g, p)
        p = {k: (p[k] + u[k]).astype(F) for k in p}
        for k in p:
            np.testing.assert_allclose(traj[i][k], p[k], rtol=2e-5, atol=2e-6,
                                       err_msg=f"{name} step {i} leaf {k}")


@pytest.mark.parametrize("use_schedule", [False, True], ids=["lr", "schedule"])
@pytest.mark.parametrize("name,kw", OPTIMIZERS, ids=_ids(OPTIMIZERS))
def test_optimizer_matches_optax(device, rng, name, kw, use_schedule):
    optax = pytest.importorskip("optax")
    jnp = pytest.importorskip("jax.numpy")
    params, grads = _problem(rng)
    if use_schedule:
        ours = getattr(optim, name)(optim.exponential_decay(0.05, 3, 0.6), **kw)
        theirs = getattr(optax, name)(optax.exponential_decay(0.05, 3, 0.6), **kw)
    else:
        ours, theirs = getattr(optim, name)(0.05, **kw), getattr(optax, name)(0.05, **kw)
    traj, state = _run_clnp(ours, params, grads, device)
    jp = {k: jnp.asarray(v) for k, v in params.items()}
    js = theirs.init(jp)
    for i, g in enumerate(grads):
        u, js = theirs.update({k: jnp.asarray(v) for k, v in g.items()}, js, jp)
        jp = optax.apply_updates(jp, u)
        for k in jp:
            np.testing.assert_allclose(traj[i][k], np.asarray(jp[k]), rtol=2e-5, atol=2e-6,
                                       err_msg=f"{name} step {i} leaf {k}")
    # same state layout: the same number of leaves, counts where optax keeps counts
    assert len(cg.tree_leaves(state)) == len([x for x in __import__("jax").tree.leaves(js)])


@pytest.mark.parametrize("name,kw", SCHEDULES, ids=[f"{n}{i}" for i, (n, _) in
                                                    enumerate(SCHEDULES)])
def test_schedule_matches_reference(device, name, kw):
    ours = make_schedule(optim, name, kw)
    ref = ref_schedule(name, kw)
    for c in range(12):
        # the optimizer state's count: a 0-d int32 array on the device
        got = ours(xp.asarray(c, dtype=xp.int32, device=device))
        np.testing.assert_allclose(float(got), ref(c), rtol=1e-6, atol=1e-7,
                                   err_msg=f"{name} at step {c}")
        np.testing.assert_allclose(float(ours(c)), ref(c), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name,kw", SCHEDULES, ids=[f"{n}{i}" for i, (n, _) in
                                                    enumerate(SCHEDULES)])
def test_schedule_matches_optax(name, kw):
    optax = pytest.importorskip("optax")
    ours, theirs = make_schedule(optim, name, kw), make_schedule(optax, name, kw)
    for c in range(12):
        np.testing.assert_allclose(float(ours(c)), float(theirs(c)), rtol=1e-6, atol=1e-7,
                                   err_msg=f"{name} at step {c}")


def test_clip_transforms(device, rng):
    g = {"a": rng.standard_normal(5).astype(F) * 3, "b": rng.standard_normal((2, 2)).astype(F)}
    cg_ = {k: xp.asarray(v, device=device) for k, v in g.items()}
    u, _ = optim.clip(0.5).update(cg_, optim.clip(0.5).init(cg_))
    for k in g:
        np.testing.assert_array_equal(xp.asnumpy(u[k]), np.clip(g[k], -0.5, 0.5))
    norm = np.sqrt(sum(np.sum(v * v) for v in g.values()))
    for max_norm in (norm / 2, norm * 2):
        t = optim.clip_by_global_norm(float(max_norm))
        u, _ = t.update(cg_, t.init(cg_))
        scale = 1.0 if norm < max_norm else max_norm / norm
        for k in g:
            np.testing.assert_allclose(xp.asnumpy(u[k]), g[k] * scale, rtol=1e-6)
    np.testing.assert_allclose(float(optim.global_norm(cg_)), norm, rtol=1e-6)


def test_masked_and_chain(device, rng):
    params = {"w": xp.asarray(rng.standard_normal((3, 2)).astype(F), device=device),
              "b": xp.asarray(rng.standard_normal(2).astype(F), device=device)}
    grads = cg.tree_map(xp.ones_like, params)
    decay_matrices = lambda p: cg.tree_map(lambda x: x.ndim > 1, p)  # noqa: E731
    opt = optim.chain(optim.masked(optim.add_decayed_weights(0.5), decay_matrices),
                      optim.masked(optim.trace(0.9), {"w": False, "b": True}),
                      optim.scale(-1.0))
    state = opt.init(params)
    # the masked trace keeps a buffer for "b" only
    assert cg.tree_leaves(state[1].inner_state.trace)[0].shape == (2,)
    u, state = opt.update(grads, state, params)
    np.testing.assert_allclose(xp.asnumpy(u["w"]), -(1 + 0.5 * xp.asnumpy(params["w"])),
                               rtol=1e-6)
    np.testing.assert_allclose(xp.asnumpy(u["b"]), -np.ones(2, F))
    u, state = opt.update(grads, state, params)
    np.testing.assert_allclose(xp.asnumpy(u["b"]), -np.full(2, 1.9, F), rtol=1e-6)
    frozen = optim.masked(optim.set_to_zero(), {"w": True, "b": False})
    u, _ = frozen.update(grads, frozen.init(params))
    assert float(xp.sum(xp.abs(u["w"]))) == 0.0 and float(xp.sum(u["b"])) == 2.0


def _mlp_loss(params, x, y):
    h = xp.tanh(x @ params["w1"] + params["b1"])
    out = h @ params["w2"] + params["b2"]
    return xp.mean((out - y) ** 2)


def test_train_step_jits_and_equals_eager(device, rng):
    params = {"w1": rng.standard_normal((4, 8)).astype(F) * 0.5, "b1": np.zeros(8, F),
              "w2": rng.standard_normal((8, 1)).astype(F) * 0.5, "b2": np.zeros(1, F)}
    params = {k: xp.asarray(v, device=device) for k, v in params.items()}
    x = xp.asarray(rng.standard_normal((16, 4)).astype(F), device=device)
    y = xp.asarray(rng.standard_normal((16, 1)).astype(F), device=device)
    opt = optim.chain(optim.clip_by_global_norm(1.0),
                      optim.adamw(optim.warmup_cosine_decay_schedule(0.0, 0.05, 2, 20)))

    def step(params, state, x, y):
        loss, grads = cg.value_and_grad(_mlp_loss)(params, x, y)
        updates, state = opt.update(grads, state, params)
        return loss, optim.apply_updates(params, updates), state

    jstep = cg.jit(step)
    pe, se = params, opt.init(params)
    pj, sj = params, opt.init(params)
    for _ in range(4):
        le, pe, se = step(pe, se, x, y)
        lj, pj, sj = jstep(pj, sj, x, y)
        np.testing.assert_allclose(float(lj), float(le), rtol=1e-5)
    for a, b in zip(cg.tree_leaves((pj, sj)), cg.tree_leaves((pe, se))):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(xp.asnumpy(a), xp.asnumpy(b), rtol=1e-5, atol=1e-6)
    assert int(sj[1][0].count) == 4 and sj[1][0].count.device == device


def test_errors():
    with pytest.raises(TypeError, match="adam: learning_rate"):
        optim.adam("fast")
    with pytest.raises(TypeError, match="chain: argument 1"):
        optim.chain(optim.sgd(0.1), 3)
    with pytest.raises(ValueError, match="clip_by_global_norm: max_norm"):
        optim.clip_by_global_norm(0.0)
    with pytest.raises(ValueError, match="cosine_decay_schedule: decay_steps"):
        optim.cosine_decay_schedule(1.0, 0)
    with pytest.raises(ValueError, match="join_schedules"):
        optim.join_schedules([optim.constant_schedule(1.0)], [3])
    opt = optim.lamb(0.1)
    p = {"w": xp.ones(3)}
    with pytest.raises(ValueError, match="requires the current value of the parameters"):
        opt.update(p, opt.init(p))
    # errors name the optimizer the user called, not the chain or transform inside it
    with pytest.raises(ValueError, match=r"adam\.update: state must be the tuple of 2 states "
                                         r"that adam\.init returned; got a tuple of 0"):
        optim.adam(0.1).update(p, (), p)
    with pytest.raises(ValueError, match="masked.init: the mask"):
        optim.masked(optim.sgd(0.1), {"v": True}).init(p)
    with pytest.raises(ValueError, match=r"adam\.update: updates and params must have the "
                                         r"same structure; updates is a dict with keys "
                                         r"\['b', 'w'\], params is a dict with keys \['w'\]"):
        opt = optim.adam(0.1)
        opt.update({"w": xp.ones(3), "b": xp.ones(1)}, opt.init(p), p)
    with pytest.raises(ValueError, match=r"adam\.update: the updates must have the structure "
                                         r"of the state's nu; updates is a dict with keys "
                                         r"\['b', 'w'\]"):
        opt = optim.adam(0.1)
        opt.update({"w": xp.ones(3), "b": xp.ones(1)}, opt.init(p))
    with pytest.raises(ValueError, match="add_decayed_weights.update: updates and params"):
        opt = optim.add_decayed_weights(0.1)
        opt.update(p, opt.init(p), {"v": xp.ones(3)})
    with pytest.raises(ValueError, match="apply_updates"):
        optim.apply_updates(p, {"v": xp.ones(3)})
