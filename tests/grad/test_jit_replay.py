"""Whole-call replay of compiled functions (``clnp_grad._jit.replay``): an executable's second
call is recorded and later calls enqueue the recording. Every case compares with eager clnp
or NumPy on calls after the recording, where the replay (or its refusal) is what runs."""
from __future__ import annotations

import numpy as np
import pytest

import clnp
import clnp_grad as cg
from clnp_grad._jit import replay as R
from conftest import run_in_threads


def _executable(f):
    """The one executable a jitted function has compiled."""
    (exe, _), = f._fast.values()
    return exe


def _state(f) -> int:
    return _executable(f).replay.state


def _mlp(p, x, y):
    h = clnp.maximum(x @ p["w1"] + p["b1"], 0.0)
    z = h @ p["w2"] + p["b2"]
    m = clnp.max(z, axis=1, keepdims=True)
    lse = m[:, 0] + clnp.log(clnp.sum(clnp.exp(z - m), axis=1))
    return clnp.mean(lse - clnp.sum(z * y, axis=1))


def _sgd(p, x, y):
    loss, g = cg.value_and_grad(_mlp)(p, x, y)
    return loss, {k: p[k] - 0.1 * g[k] for k in p}


def _problem(rng, device, n=32):
    p = {"w1": rng.standard_normal((12, 16)).astype(np.float32) * 0.3,
         "b1": rng.standard_normal(16).astype(np.float32) * 0.1,
         "w2": rng.standard_normal((16, 5)).astype(np.float32) * 0.3,
         "b2": rng.standard_normal(5).astype(np.float32) * 0.1}
    x = rng.standard_normal((n, 12)).astype(np.float32)
    y = np.eye(5, dtype=np.float32)[rng.integers(0, 5, n)]
    return ({k: clnp.asarray(v, device=device) for k, v in p.items()},
            clnp.asarray(x, device=device), clnp.asarray(y, device=device))


def _close(a, b):
    np.testing.assert_allclose(clnp.asnumpy(a), clnp.asnumpy(b), rtol=2e-5, atol=2e-6)


def test_training_loop_replays_each_step(device, rng):
    """Ten SGD steps feeding each step's parameters to the next: the jitted loop (recorded
    on its second call, replayed after) follows the eager loop, and the replay is live."""
    p, x, y = _problem(rng, device)
    step = cg.jit(_sgd)
    pj, pe = dict(p), dict(p)
    for i in range(10):
        lj, pj = step(pj, x, y)
        le, pe = _sgd(pe, x, y)
        _close(lj, le)
        for k in p:
            _close(pj[k], pe[k])
    assert _state(step) == R._ACTIVE
    assert R.kept_bytes(device) > 0


def test_results_are_fresh_arrays(device, rng):
    """Two replayed calls return arrays on distinct buffers: writing into one result leaves
    the other and the inputs intact."""
    f = cg.jit(lambda a, b: (clnp.sin(a) * b + 1.0, a))
    a = clnp.asarray(rng.standard_normal(50).astype(np.float32), device=device)
    b = clnp.asarray(rng.standard_normal(50).astype(np.float32), device=device)
    for _ in range(3):
        f(a, b)
    r1, same1 = f(a, b)
    r2, same2 = f(a, b)
    assert _state(f) == R._ACTIVE
    assert r1._buf is not r2._buf
    want = np.sin(clnp.asnumpy(a)) * clnp.asnumpy(b) + 1.0
    r1[0] = 100.0
    np.testing.assert_allclose(clnp.asnumpy(r2), want, rtol=1e-6)
    np.testing.assert_array_equal(clnp.asnumpy(same2), clnp.asnumpy(a))


def test_new_inputs_every_call(device, rng):
    """Each replayed call reads its own inputs, not the recorded call's."""
    f = cg.jit(lambda a, b: clnp.sum(clnp.exp(a) * b, axis=0) / 3.0)
    for i in range(6):
        ah = rng.standard_normal((7, 9)).astype(np.float32)
        bh = rng.standard_normal((7, 9)).astype(np.float32)
        got = f(clnp.asarray(ah, device=device), clnp.asarray(bh, device=device))
        np.testing.assert_allclose(clnp.asnumpy(got), (np.exp(ah) * bh).sum(0) / 3.0,
                                   rtol=1e-5, atol=1e-6)
    assert _state(f) == R._ACTIVE


def test_aliased_and_strided_inputs_after_recording(device, rng):
    """After the recording, one array passed twice and a transposed (strided) argument of the
    planned shape give the eager results (the strided one through the steps)."""
    f = cg.jit(lambda a, b: a * 2.0 - b)
    ah = rng.standard_normal((6, 6)).astype(np.float32)
    bh = rng.standard_normal((6, 6)).astype(np.float32)
    a, b = clnp.asarray(ah, device=device), clnp.asarray(bh, device=device)
    for _ in range(3):
        f(a, b)
    assert _state(f) == R._ACTIVE
    np.testing.assert_allclose(clnp.asnumpy(f(a, a)), ah, rtol=1e-6)
    np.testing.assert_allclose(clnp.asnumpy(f(a.T, b)), ah.T * 2.0 - bh, rtol=1e-6)
    np.testing.assert_allclose(clnp.asnumpy(f(a, b)), ah * 2.0 - bh, rtol=1e-6)


def test_recording_with_aliased_inputs_waits(device, rng):
    """A second call whose arguments share a buffer is not recorded (its buffers could not be
    told apart); the next call with distinct arguments is."""
    f = cg.jit(lambda a, b: a + b * 3.0)
    ah = rng.standard_normal(10).astype(np.float32)
    a = clnp.asarray(ah, device=device)
    b = clnp.asarray(ah[::-1].copy(), device=device)
    f(a, b)
    np.testing.assert_allclose(clnp.asnumpy(f(a, a)), ah * 4.0, rtol=1e-6)
    assert _state(f) == R._UNTRIED
    f(a, b)
    assert _state(f) == R._ACTIVE
    np.testing.assert_allclose(clnp.asnumpy(f(b, a)), ah[::-1] + ah * 3.0, rtol=1e-6)


def test_weak_scalar_argument_is_not_replayed(device, rng):
    """A Python scalar argument is a kernel argument that changes per call: such an
    executable runs its steps, and every call sees its own scalar."""
    f = cg.jit(lambda a, s: a * s + 1.0)
    ah = rng.standard_normal(8).astype(np.float32)
    a = clnp.asarray(ah, device=device)
    for s in (1.0, 2.5, -3.0, 0.5):
        np.testing.assert_allclose(clnp.asnumpy(f(a, s)), ah * np.float32(s) + 1.0,
                                   rtol=1e-6)
    exe = next(iter(f._cache.values()))[2]
    assert exe.replay.state == R._REFUSED


def test_donated_arguments_are_not_replayed(device, rng):
    f = cg.jit(lambda a, b: a + b, donate_argnums=(0,))
    bh = rng.standard_normal(16).astype(np.float32)
    b = clnp.asarray(bh, device=device)
    for i in range(4):
        a = clnp.asarray(np.full(16, float(i), np.float32), device=device)
        np.testing.assert_allclose(clnp.asnumpy(f(a, b)), bh + i, rtol=1e-6)
    exe = next(iter(f._cache.values()))[2]
    assert exe.replay.state == R._REFUSED


def test_host_driven_loop_is_not_replayed(device):
    """A while_loop whose body is not elementwise runs from the host and reads its predicate
    back: the call cannot be recorded, and each call computes its own trip count."""
    def f(x):
        return cg.lax.while_loop(lambda c: clnp.sum(c) < 100.0,
                                 lambda c: c @ clnp.ones((3, 3), dtype=c.dtype, device=c.device),
                                 x)
    jf = cg.jit(f)
    for v in (1.0, 2.0, 30.0, 0.5):
        x = clnp.full((3,), v, dtype=clnp.float32, device=device)
        want = np.full(3, v, np.float32)
        while want.sum() < 100.0:
            want = want @ np.ones((3, 3), np.float32)
        np.testing.assert_allclose(clnp.asnumpy(jf(x)), want, rtol=1e-6)
    exe = next(iter(jf._fast.values()))[0]
    assert exe.replay.state == R._REFUSED


def test_kernels_shared_with_other_launches_keep_their_buffers(device, rng):
    """A replay sets the buffers it keeps only when another launch set the kernel's
    arguments since (``launch.Kernel.args_of``): two products of one shape share the eager
    product's kernel inside a call, and eager products of that shape between calls set it
    to their own buffers. Every replayed call stays right."""
    sh = [rng.standard_normal((24, 40)).astype(np.float32) for _ in range(2)]
    wh = [rng.standard_normal((40, 24)).astype(np.float32) for _ in range(2)]
    ws = [clnp.asarray(w, device=device) for w in wh]
    f = cg.jit(lambda a, b: (clnp.sin(a) @ ws[0], clnp.cos(b) @ ws[1]))
    for i in range(5):
        a, b = (clnp.asarray(x * (i + 1), device=device) for x in sh)
        p, q = f(a, b)
        _close(p, clnp.sin(a) @ ws[0])
        _close(q, clnp.cos(b) @ ws[1])
        other = clnp.asarray(rng.standard_normal((24, 40)).astype(np.float32), device=device)
        _close(other @ ws[1], clnp.asarray(clnp.asnumpy(other) @ wh[1], device=device))
    assert _state(f) == R._ACTIVE


def _embed_loss(ids, w):
    return clnp.sum(clnp.take(w, ids, axis=0) * 2.0)


def check_gather_raises_after_recording(device) -> None:
    """Three calls of a jitted bounds-checked gather (recorded, then replayed), two with an
    out-of-range index that raise IndexError, one valid after them that is right; the
    executable's replay is active throughout."""
    wh = np.arange(12.0, dtype=np.float32).reshape(6, 2)
    w = clnp.asarray(wh, device=device)
    f = cg.jit(_embed_loss)
    good = np.array([0, 5, -1, 3], np.int32)
    for _ in range(3):
        assert float(f(clnp.asarray(good, device=device), w)) == 2 * wh[good].sum()
    assert _state(f) == R._ACTIVE
    bad = clnp.asarray(np.array([0, 6, 1, -7], np.int32), device=device)
    for _ in range(2):       # the flag is cleared after each failure
        with pytest.raises(IndexError, match="index 6 is out of bounds for axis 0 with size 6"):
            f(bad, w)
    assert _state(f) == R._ACTIVE
    assert float(f(clnp.asarray(good[::-1].copy(), device=device), w)) == 2 * wh[good].sum()


def test_bounds_checked_gather_is_replayed_and_raises(device):
    """Integer-array indexing checks its bounds on the device; the check does not stop the
    call from replaying. A replayed call with an out-of-range index raises IndexError (its
    result is dropped), clears the flag, and the next call with valid ids is right."""
    check_gather_raises_after_recording(device)


def test_bounds_check_names_the_launch_that_failed(device):
    """Two gathers in one call, each with a flag of its own: the report names the table
    whose index was out of range, whether the first or the second gather failed, on the
    recording call and on replays."""
    a = clnp.asarray(np.zeros((5, 2), np.float32), device=device)
    b = clnp.asarray(np.zeros((9, 2), np.float32), device=device)
    f = cg.jit(lambda i, j: clnp.take(a, i, axis=0) + clnp.take(b, j, axis=0))
    ok = clnp.asarray(np.array([1, 2], np.int64), device=device)
    for call in range(4):      # build, record, replay, replay
        with pytest.raises(IndexError, match="index 7 is out of bounds for axis 0 with size 5"):
            f(clnp.asarray(np.array([7, 0], np.int64), device=device), ok)
        with pytest.raises(IndexError, match="index 9 is out of bounds for axis 0 with size 9"):
            f(ok, clnp.asarray(np.array([0, 9], np.int64), device=device))
        f(ok, ok)


def test_bounds_checks_of_threads_do_not_mix(device):
    """Four threads gather at once, two with an out-of-range index each time: those raise
    with their own table's size every time, the others never raise (each thread's eager
    flag and each recorded launch's flag are its own)."""
    tables = [clnp.asarray(np.zeros((n, 3), np.float32), device=device) for n in (5, 6, 7, 8)]
    jitted = [cg.jit(lambda i, t=t: clnp.take(t, i, axis=0) + 1.0) for t in tables]
    errors: list[str] = []

    def work(j):
        n = 5 + j
        bad, good = j % 2 == 0, clnp.asarray(np.array([0, n - 1], np.int64), device=device)
        idx = clnp.asarray(np.array([1, n], np.int64), device=device) if bad else good
        for i in range(20):
            fn = jitted[j] if i % 2 else (lambda x: clnp.take(tables[j], x, axis=0))
            try:
                fn(idx)
                if bad:
                    errors.append(f"thread {j}: no IndexError")
            except IndexError as e:
                if not bad or f"size {n}" not in str(e):
                    errors.append(f"thread {j}: {e}")
    run_in_threads(work, 4)
    assert not errors, errors[:5]


def test_flag_cleared_when_a_replayed_call_fails_otherwise(device, monkeypatch):
    """A replayed call with a bad index that raises something else before its checks are
    read (a launch failing after the gather) leaves no flag set: the next call with good
    indices returns its result."""
    from clnp._core import capture as C
    t = clnp.asarray(np.arange(12.0, dtype=np.float32).reshape(6, 2), device=device)
    f = cg.jit(lambda i: clnp.exp(clnp.take(t, i, axis=0)))
    good = clnp.asarray(np.array([0, 5], np.int64), device=device)
    for _ in range(3):
        f(good)
    assert _state(f) == R._ACTIVE
    enqueue = C.Replay._enqueue

    def failing(self, bufs, queue, pending, outer):
        enqueue(self, bufs, queue, pending, outer)
        raise RuntimeError("a launch failed")
    monkeypatch.setattr(C.Replay, "_enqueue", failing)
    with pytest.raises(RuntimeError, match="a launch failed"):
        f(clnp.asarray(np.array([9, 1], np.int64), device=device))
    monkeypatch.setattr(C.Replay, "_enqueue", enqueue)
    np.testing.assert_allclose(clnp.asnumpy(f(good)), np.exp(np.arange(12.0).reshape(6, 2)[[0, 5]]),
                               rtol=1e-6)


def test_unsigned_index_past_int64_is_out_of_range(device):
    """A uint64 index of 2**64 - 1 is out of range (it used to wrap as -1), eager and
    replayed, and the report gives its unsigned value."""
    w = clnp.asarray(np.arange(6.0, dtype=np.float32), device=device)
    u = clnp.asarray(np.array([2**64 - 1], np.uint64), device=device)
    with pytest.raises(IndexError, match="index 18446744073709551615 is out of bounds"):
        w[u]
    f = cg.jit(lambda i: w[i])
    for _ in range(3):
        f(clnp.asarray(np.array([1], np.uint64), device=device))
    assert _state(f) == R._ACTIVE
    with pytest.raises(IndexError, match="index 18446744073709551615 is out of bounds"):
        f(u)


def test_budget_drops_least_recently_used(device, rng, monkeypatch):
    """With room for one replay, recording a second drops the first; the first records again
    on a later call; results stay right throughout."""
    monkeypatch.setattr(R, "_BUDGETS", R._Budgets())
    # products and reductions: intermediates between kernels, which the replay keeps
    f = cg.jit(lambda a: clnp.sum(a @ a, axis=0) @ a)
    g = cg.jit(lambda a: clnp.sum(clnp.tanh(a) @ a, axis=0) @ a)
    ah = rng.standard_normal((64, 64)).astype(np.float32)
    a = clnp.asarray(ah, device=device)
    for _ in range(3):
        f(a), g(a)
    nf = _executable(f).replay.replay.kept_nbytes
    ng = _executable(g).replay.replay.kept_nbytes
    assert nf > 0 and ng > 0
    R.release(device)
    R._BUDGETS[device].limit = max(nf, ng) + min(nf, ng) // 2     # room for one of them
    f(a)
    assert _state(f) == R._ACTIVE
    g(a)
    assert _state(g) == R._ACTIVE and _state(f) == R._UNTRIED
    np.testing.assert_allclose(clnp.asnumpy(f(a)), (ah @ ah).sum(0) @ ah, rtol=1e-3,
                               atol=1e-3)
    assert _state(f) == R._ACTIVE and _state(g) == R._UNTRIED
    np.testing.assert_allclose(clnp.asnumpy(g(a)), (np.tanh(ah) @ ah).sum(0) @ ah,
                               rtol=1e-3, atol=1e-3)


def test_over_budget_call_is_refused(device, rng, monkeypatch):
    monkeypatch.setattr(R, "_BUDGETS", R._Budgets())
    R._BUDGETS[device].limit = 16
    f = cg.jit(lambda a: clnp.sum(clnp.exp(a) @ a, axis=0))
    ah = rng.standard_normal((32, 32)).astype(np.float32)
    a = clnp.asarray(ah, device=device)
    for _ in range(4):
        np.testing.assert_allclose(clnp.asnumpy(f(a)), (np.exp(ah) @ ah).sum(0), rtol=1e-4,
                                   atol=1e-4)
    assert _state(f) == R._REFUSED


def test_release_memory_drops_replays(device, rng):
    """``clnp.release_memory`` (memory pressure) gives the kept intermediates back; the next
    call records again."""
    f = cg.jit(lambda a: clnp.cos(a @ a) + 1.0)
    ah = rng.standard_normal((16, 16)).astype(np.float32)
    a = clnp.asarray(ah, device=device)
    for _ in range(3):
        f(a)
    assert _state(f) == R._ACTIVE
    clnp.release_memory(device)
    assert _state(f) == R._UNTRIED and R.kept_bytes(device) == 0
    for _ in range(2):
        np.testing.assert_allclose(clnp.asnumpy(f(a)), np.cos(ah @ ah) + 1.0, rtol=1e-4,
                                   atol=1e-4)
    assert _state(f) == R._ACTIVE


def test_disabled_replay_runs_the_steps(device, rng, monkeypatch):
    monkeypatch.setattr(R, "ENABLED", False)
    f = cg.jit(lambda a: a * a)
    a = clnp.asarray(np.arange(5, dtype=np.float32), device=device)
    for _ in range(4):
        np.testing.assert_array_equal(clnp.asnumpy(f(a)), np.arange(5.0) ** 2)
    assert _state(f) == R._UNTRIED


def test_same_executable_from_four_threads(device, rng):
    """Four threads call one replayed executable with the same shapes at once: the calls are
    serialised, so no thread reads another's intermediates."""
    f = cg.jit(lambda a, b: clnp.sum(clnp.tanh(a @ b) * 2.0, axis=1) - 1.0)

    def run(seed):
        r = np.random.default_rng(seed)
        for _ in range(20):
            ah = r.standard_normal((24, 8)).astype(np.float32)
            bh = r.standard_normal((8, 24)).astype(np.float32)
            got = f(clnp.asarray(ah, device=device), clnp.asarray(bh, device=device))
            np.testing.assert_allclose(clnp.asnumpy(got), (np.tanh(ah @ bh) * 2.0).sum(1) - 1.0,
                                       rtol=1e-4, atol=1e-4)
    run_in_threads(run)
    assert _state(f) == R._ACTIVE


def test_replay_enqueues_the_steps_kernels(device, rng):
    """The replay launches exactly the kernels ``lower().kernel_sources()`` lists."""
    p, x, y = _problem(rng, device)
    step = cg.jit(_sgd)
    for _ in range(3):
        step(p, x, y)
    rep = _executable(step).replay.replay
    assert rep.n_launches == len(step.lower(p, x, y).kernel_sources())


def test_intermediates_share_buffers_by_lifetime(device, rng, general_path):
    """A chain of products whose every intermediate dies at the next launch keeps two
    buffers, not one per intermediate, and computes the chain (whole steps off: on GPUs
    pairs of these products are whole-step kernels, whose scratch the replay keeps too)."""
    def chain(a, w):
        for _ in range(6):
            a = a @ w
        return a
    f = cg.jit(chain)
    ah = rng.standard_normal((64, 64)).astype(np.float32) * 0.3
    wh = rng.standard_normal((64, 64)).astype(np.float32) * 0.2
    a, w = clnp.asarray(ah, device=device), clnp.asarray(wh, device=device)
    for _ in range(3):
        got = f(a, w)
    want = ah
    for _ in range(6):
        want = want @ wh
    np.testing.assert_allclose(clnp.asnumpy(got), want, rtol=1e-3, atol=1e-5)
    rep = _executable(f).replay.replay
    one = 64 * 64 * 4
    assert one <= rep.kept_nbytes <= 2 * 1.1 * one, rep.kept_nbytes


def test_constant_and_argument_outputs(device, rng):
    """Outputs that are a Python constant (uploaded by the recorded call: uploaded again by
    every replay, into a fresh array) or an argument itself come back right on every call."""
    f = cg.jit(lambda a, b: (a * 2.0, 3.0, b))
    for i in range(4):
        ah = rng.standard_normal(6).astype(np.float32)
        a = clnp.asarray(ah, device=device)
        b = clnp.asarray(ah + i, device=device)
        x, c, same = f(a, b)
        np.testing.assert_allclose(clnp.asnumpy(x), ah * 2, rtol=1e-6)
        assert float(c) == 3.0
        np.testing.assert_array_equal(clnp.asnumpy(same), ah + i)
        c[...] = 7.0                      # a fresh array each call: the next call is unaffected
    assert _state(f) == R._ACTIVE


def test_recorded_call_runs_as_generated_code(device, rng):
    """A recording of launches only runs as generated straight-line code
    (``capture._generated_call``), equal to the general walk over its steps; packing the
    recording's buffers (a rebind) makes the code again."""
    p, x, y = _problem(rng, device)
    step = cg.jit(_sgd)
    for _ in range(3):
        loss, p = step(p, x, y)
    rep = _executable(step).replay.replay
    assert callable(rep.fast)
    flat = cg._tree.tree_flatten((p, x, y))[0]      # the executable's inputs, in order
    fast = [o.to_numpy() for o in rep(flat)]
    rep.fast = False                               # the general path
    general = [o.to_numpy() for o in rep(flat)]
    for a, b in zip(fast, general):
        assert np.array_equal(a, b)
    rep.rebind({})
    assert rep.fast is None
    assert all(np.array_equal(o.to_numpy(), a) for o, a in zip(rep(flat), fast))
    assert callable(rep.fast)
