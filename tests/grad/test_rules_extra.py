"""Rules of clnp_grad._rules_extra (sort, cumsum/cumprod, real FFTs, unique, batching) and
custom_jvp, against closed forms computed with NumPy."""
from __future__ import annotations

from functools import partial

import numpy as np
import pytest

import clnp
import clnp_grad as cg
from clnp._core.prims import primitive
from test_all_primitives import check_grads


@pytest.fixture
def f64(device):
    if not device.has_fp64:
        pytest.skip("closed-form comparisons need float64")
    return device


def _a(v, device):
    return clnp.asarray(v, device=device)


# ------------------------------------------------------------------------------ sort
@pytest.mark.parametrize("axis,descending", [(1, False), (0, True)])
def test_sort_rules(axis, descending, f64, rng):
    a = rng.permutation(12).reshape(3, 4) * 0.5
    check_grads(lambda x: clnp.sort(x, axis=axis, descending=descending), [a], f64, rng)


def test_sort_ties_follow_stable_order(f64):
    """Equal values: each output position's derivative goes to the element the stable sort
    put there."""
    a = np.array([2.0, 1.0, 2.0, 0.5, 1.0])
    w = np.arange(1.0, 6.0)
    g = cg.grad(lambda x: clnp.sum(clnp.sort(x) * _a(w, f64)))(_a(a, f64))
    expect = np.empty(5)
    expect[np.argsort(a, kind="stable")] = w
    np.testing.assert_array_equal(np.asarray(g), expect)


def test_sort_second_order(f64):
    a = np.array([0.3, -1.2, 2.0, 0.7])
    w = np.array([1.0, -2.0, 0.5, 3.0])
    h = cg.hessian(lambda x: clnp.sum(clnp.sort(x) ** 3 * _a(w, f64)))(_a(a, f64))
    expect = np.zeros(4)
    expect[np.argsort(a)] = 6 * np.sort(a) * w
    np.testing.assert_allclose(np.asarray(h), np.diag(expect), rtol=1e-12, atol=1e-12)


def test_argsort_is_constant(f64, rng):
    a = rng.standard_normal((3, 4))
    x = _a(a, f64)
    g = cg.grad(lambda x: clnp.sum(x * clnp.astype(clnp.argsort(x, axis=0), clnp.float64)))(x)
    np.testing.assert_array_equal(np.asarray(g), np.argsort(a, axis=0, kind="stable"))


# ------------------------------------------------------------------------------ cumulative
@pytest.mark.parametrize("include_initial", [False, True])
def test_cumsum_vjp(include_initial, f64, rng):
    a, w = rng.standard_normal((3, 4)), rng.standard_normal((3 + include_initial, 4))
    g = cg.grad(lambda x: clnp.sum(clnp.cumulative_sum(x, axis=0,
                                                       include_initial=include_initial)
                                   * _a(w, f64)))(_a(a, f64))
    tail = w[1:] if include_initial else w
    np.testing.assert_allclose(np.asarray(g), np.cumsum(tail[::-1], axis=0)[::-1], rtol=1e-12)


def _cumprod_jacobian(a):
    """J[k, j] = prod(a[i] for i <= k, i != j) for j <= k: no division, exact with zeros."""
    n = len(a)
    J = np.zeros((n, n))
    for k in range(n):
        for j in range(k + 1):
            J[k, j] = np.prod([a[i] for i in range(k + 1) if i != j])
    return J


@pytest.mark.parametrize("a", [[1.5, 0.0, 2.0, -1.0, 0.5], [0.0, 3.0, 0.0, 2.0, 1.0],
                               [0.5, 2.0, -1.5, 1.2, 0.8]])
def test_cumprod_jacobian_with_zeros(a, f64):
    a = np.array(a)
    J = _cumprod_jacobian(a)
    x = _a(a, f64)
    np.testing.assert_allclose(np.asarray(cg.jacfwd(clnp.cumulative_prod)(x)), J, atol=1e-14)
    np.testing.assert_allclose(np.asarray(cg.jacrev(clnp.cumulative_prod)(x)), J, atol=1e-14)
    Ji = np.asarray(cg.jacrev(partial(clnp.cumulative_prod, include_initial=True))(x))
    np.testing.assert_allclose(Ji, np.vstack([np.zeros((1, 5)), J]), atol=1e-14)


def test_cumprod_second_order_with_zero(f64):
    a = np.array([1.5, 0.0, 2.0, -1.0])
    w = np.array([1.0, 2.0, -1.0, 0.5])
    h = cg.hessian(lambda x: clnp.sum(clnp.cumulative_prod(x) * _a(w, f64)))(_a(a, f64))
    expect = np.zeros((4, 4))
    for j in range(4):
        for m in range(4):
            if j != m:
                expect[j, m] = sum(w[k] * np.prod([a[i] for i in range(k + 1) if i not in (j, m)])
                                   for k in range(max(j, m), 4))
    np.testing.assert_allclose(np.asarray(h), expect, atol=1e-13)


def test_cumprod_rules_2d(f64, rng):
    a = np.where(np.arange(12).reshape(3, 4) % 4 == 2, 0.0, rng.uniform(0.5, 2.0, (3, 4)))
    check_grads(lambda x: clnp.cumulative_prod(x, axis=0, include_initial=True), [a], f64, rng)


# ------------------------------------------------------------------------------ real FFTs
REAL_FFTS = [(name, n, norm) for name, norm in (("rfft", "backward"), ("irfft", "ortho"),
                                                 ("hfft", "forward"), ("ihfft", "backward"))
             for n in (None, 5, 8)]


@pytest.mark.parametrize("name,n,norm", REAL_FFTS)
def test_real_fft_rules(name, n, norm, f64, rng):
    real_in = name in ("rfft", "ihfft")
    a = rng.standard_normal((3, 4))
    if not real_in:
        a = a + 1j * rng.standard_normal((3, 4))
    fn = getattr(clnp.fft, name)
    check_grads(lambda x: fn(x, n=n, norm=norm), [a], f64, rng)


def test_real_fft_vjp_closed_forms(f64, rng):
    """JAX's transposes: rfft -> Re(DFT of the zero-padded cotangent); irfft ->
    conj(rfft(ct)) / n with the non-self-mirrored frequencies doubled."""
    a = rng.standard_normal(5)
    ct = rng.standard_normal(4) + 1j * rng.standard_normal(4)
    (g,) = cg.vjp(lambda x: clnp.fft.rfft(x, n=6), _a(a, f64))[1](_a(ct, f64))
    np.testing.assert_allclose(np.asarray(g), np.fft.fft(np.r_[ct, 0, 0]).real[:5],
                               rtol=1e-12, atol=1e-12)
    c = rng.standard_normal(5) + 1j * rng.standard_normal(5)
    ctr = rng.standard_normal(8)
    (g,) = cg.vjp(lambda z: clnp.fft.irfft(z, n=8), _a(c, f64))[1](_a(ctr, f64))
    expect = np.conj(np.fft.rfft(ctr)) * np.array([1, 2, 2, 2, 1]) / 8
    np.testing.assert_allclose(np.asarray(g), expect, rtol=1e-12, atol=1e-12)


def test_real_fft_roundtrip_gradient(f64, rng):
    """irfft(rfft(x)) is the identity, so the gradient of sum(w * it) is w."""
    a, w = rng.standard_normal(6), rng.standard_normal(6)
    g = cg.grad(lambda x: clnp.sum(clnp.fft.irfft(clnp.fft.rfft(x), n=6) * _a(w, f64)))(
        _a(a, f64))
    np.testing.assert_allclose(np.asarray(g), w, rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------------------------ unique
def test_unique_values_follow_first_occurrence(f64):
    a = np.array([3.0, 1.0, 3.0, 2.0, 1.0])
    x = _a(a, f64)
    t = np.array([10.0, 20.0, 30.0, 40.0, 50.0])
    out, jt = cg.jvp(clnp.unique_values, (x,), (_a(t, f64),))
    np.testing.assert_array_equal(np.asarray(out), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(np.asarray(jt), [20.0, 40.0, 10.0])
    w = _a([1.0, 2.0, 3.0], f64)
    g = cg.grad(lambda x: clnp.sum(clnp.unique_all(x).values * w))(x)
    np.testing.assert_array_equal(np.asarray(g), [3.0, 1.0, 0.0, 2.0, 0.0])
    g2 = cg.grad(lambda x: clnp.sum(clnp.unique_counts(x).values ** 2))(x)
    # summed by atomic adds in any order: equal up to rounding
    np.testing.assert_allclose(np.asarray(g2), [6.0, 2.0, 0.0, 4.0, 0.0], rtol=1e-15)


# ------------------------------------------------------------------------------ batching
def test_vmap_sort_fft_argsearch(f64, rng):
    a = rng.standard_normal((3, 2, 4))
    x = _a(a, f64)
    np.testing.assert_array_equal(np.asarray(cg.vmap(lambda v: clnp.sort(v, axis=0))(x)),
                                  np.sort(a, axis=1))
    np.testing.assert_array_equal(np.asarray(cg.vmap(lambda v: clnp.argsort(v))(x)),
                                  np.argsort(a, axis=-1, kind="stable"))
    np.testing.assert_array_equal(np.asarray(cg.vmap(clnp.argmax)(x)),
                                  np.argmax(a.reshape(3, -1), axis=1))
    np.testing.assert_array_equal(np.asarray(cg.vmap(lambda v: clnp.argmin(v, axis=0))(x)),
                                  np.argmin(a, axis=1))
    np.testing.assert_allclose(np.asarray(cg.vmap(lambda v: clnp.fft.rfft(v, axis=0))(x)),
                               np.fft.rfft(a, axis=1), rtol=1e-12, atol=1e-12)


def test_vmap_of_grad_through_sort_cumprod_and_indexing(f64, rng):
    a = rng.standard_normal((3, 5))
    x = _a(a, f64)
    idx = _a(np.array([4, 0, 4]), f64)

    def f(v):
        return clnp.sum(clnp.sort(v) * clnp.cumulative_prod(v)) + clnp.sum(v[idx] ** 2)
    got = np.asarray(cg.vmap(cg.grad(f))(x))
    rows = [np.asarray(cg.grad(f)(_a(r, f64))) for r in a]
    np.testing.assert_allclose(got, np.stack(rows), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("axes", [(0, 0, 0), (None, 0, 0), (0, None, None), (0, 0, None)])
def test_vmap_scatter_add(axes, f64, rng):
    X, V = rng.standard_normal((2, 4, 3)), rng.standard_normal((2, 5, 3))
    Ii = np.array([[0, 3, 3, 1, 2], [1, 1, 0, 2, 3]])     # repeated indices add up

    def sa(x, v, i):
        return primitive("scatter_add").bind(x, v, i, in_bounds=True)
    host = [A if ax == 0 else A[0] for A, ax in zip((X, V, Ii), axes)]
    got = cg.vmap(sa, in_axes=axes)(*[_a(h, f64) for h in host])
    for b in range(2):
        x, v, i = (h[b] if ax == 0 else h for h, ax in zip(host, axes))
        expect = x.copy()
        np.add.at(expect, i, v)
        np.testing.assert_allclose(np.asarray(got)[b], expect, rtol=1e-12)


def test_vmap_searchsorted_and_isin(f64):
    s = np.array([[0.0, 1.0, 1.0, 3.0], [-2.0, 0.5, 4.0, np.nan]])
    q = np.array([[1.0, np.nan, -5.0], [0.5, np.nan, 5.0]])
    for side in ("left", "right"):
        got = cg.vmap(lambda a, b: clnp.searchsorted(a, b, side=side))(_a(s, f64), _a(q, f64))
        expect = [np.searchsorted(si, qi, side=side) for si, qi in zip(s, q)]
        np.testing.assert_array_equal(np.asarray(got), expect)
    one = cg.vmap(lambda b: clnp.searchsorted(_a(s[0], f64), b), in_axes=0)(_a(q, f64))
    np.testing.assert_array_equal(np.asarray(one), np.searchsorted(s[0], q))
    test = _a(np.array([1.0, 5.0]), f64)
    got = cg.vmap(lambda a: clnp.isin(a, test))(_a(q, f64))
    np.testing.assert_array_equal(np.asarray(got), np.isin(q, [1.0, 5.0]))
    got = cg.vmap(lambda a, b: clnp.isin(a, b, invert=True))(_a(q, f64), _a(s, f64))
    np.testing.assert_array_equal(np.asarray(got), [np.isin(qi, si, invert=True)
                                                    for qi, si in zip(q, s)])
    unsorted = _a(np.stack([s[0][::-1], s[1]]), f64)    # sorted by the sorters below
    order = _a(np.array([[3, 2, 1, 0], [0, 1, 2, 3]]), f64)
    got = cg.vmap(lambda a, b, o: clnp.searchsorted(a, b, sorter=o))(unsorted, _a(q, f64),
                                                                      order)
    np.testing.assert_array_equal(np.asarray(got), [np.searchsorted(si, qi)
                                                    for si, qi in zip(s, q)])


# ------------------------------------------------------------------------------ custom_jvp
@cg.custom_jvp
def log1pexp(x):
    """log(1 + exp(x)); naive differentiation overflows to nan for large x."""
    return clnp.log1p(clnp.exp(x))


@log1pexp.defjvp
def _log1pexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return log1pexp(x), t * (1.0 - 1.0 / (1.0 + clnp.exp(x)))


def _sigmoid(a):
    return 1.0 / (1.0 + np.exp(-a))


def test_custom_jvp_used_by_every_transform(f64):
    a = np.array([-3.0, 0.5, 800.0])
    x = _a(a, f64)
    expect = np.array([_sigmoid(-3.0), _sigmoid(0.5), 1.0])
    np.testing.assert_allclose(np.asarray(cg.jvp(log1pexp, (x,), (clnp.ones_like(x),))[1]),
                               expect, rtol=1e-12)
    g = cg.grad(lambda v: clnp.sum(log1pexp(v)))(x)
    np.testing.assert_allclose(np.asarray(g), expect, rtol=1e-12)
    naive = cg.grad(lambda v: clnp.sum(clnp.log1p(clnp.exp(v))))(x)
    assert np.isnan(np.asarray(naive)[2])      # the rule, not autodiff of the body, ran
    m = _a(np.stack([a, -a]), f64)
    vg = cg.vmap(cg.grad(lambda v: clnp.sum(log1pexp(v))))(m)
    np.testing.assert_allclose(np.asarray(vg), np.stack([expect, 1.0 - expect]), rtol=1e-12)
    gv = cg.grad(lambda v: clnp.sum(cg.vmap(log1pexp)(v)))(m)
    np.testing.assert_allclose(np.asarray(gv), np.stack([expect, 1.0 - expect]), rtol=1e-12)
    _, jv = cg.jvp(cg.vmap(log1pexp), (m,), (clnp.ones_like(m),))
    np.testing.assert_allclose(np.asarray(jv), np.stack([expect, 1.0 - expect]), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(log1pexp(x))[:2], np.log1p(np.exp(a[:2])))


def test_custom_jvp_second_order(f64):
    """The rule is differentiated like any code (it calls log1pexp, whose rule applies)."""
    a = np.array([-1.0, 0.3, 2.0])
    h = cg.hessian(lambda v: clnp.sum(log1pexp(v)))(_a(a, f64))
    s = _sigmoid(a)
    np.testing.assert_allclose(np.asarray(h), np.diag(s * (1 - s)), rtol=1e-12)
    d2 = cg.grad(cg.grad(lambda v: log1pexp(v)))(_a(np.array(0.7), f64))
    np.testing.assert_allclose(float(d2), _sigmoid(0.7) * (1 - _sigmoid(0.7)), rtol=1e-12)


def test_custom_jvp_multiple_inputs_outputs_and_nondiff(f64, rng):
    @partial(cg.custom_jvp, nondiff_argnums=(0,))
    def scaled(k, x, y):
        return {"p": x * y * k, "s": x + y}

    @scaled.defjvp
    def scaled_jvp(k, primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        return scaled(k, x, y), {"p": k * (tx * y + x * ty), "s": tx + ty}
    a, b = rng.standard_normal(3), rng.standard_normal(3)
    x, y = _a(a, f64), _a(b, f64)
    gx, gy = cg.grad(lambda x, y: clnp.sum(scaled(2.0, x, y)["p"] + scaled(2.0, x, y)["s"] ** 2),
                     argnums=(0, 1))(x, y)
    np.testing.assert_allclose(np.asarray(gx), 2 * b + 2 * (a + b), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(gy), 2 * a + 2 * (a + b), rtol=1e-12)
    out = scaled(3.0, x, y=y)     # keyword arguments are resolved to positions
    np.testing.assert_allclose(np.asarray(out["p"]), 3 * a * b, rtol=1e-12)
    vg = cg.vmap(cg.grad(lambda x: clnp.sum(scaled(2.0, x, x)["p"])))(_a(np.stack([a, b]),
                                                                         f64))
    np.testing.assert_allclose(np.asarray(vg), 4 * np.stack([a, b]), rtol=1e-12)


def test_custom_jvp_integer_argument_and_output(f64):
    @cg.custom_jvp
    def times(x, n):
        return x * clnp.astype(n, x.dtype), n + 1

    @times.defjvp
    def times_jvp(primals, tangents):
        x, n = primals
        return times(x, n), (tangents[0] * clnp.astype(n, x.dtype), None)
    x, n = _a(np.array([0.5, 1.5]), f64), _a(np.array([2, 3]), f64)
    g = cg.grad(lambda v: clnp.sum(times(v, n)[0]))(x)
    np.testing.assert_array_equal(np.asarray(g), [2.0, 3.0])
    (_, m), (_, tm) = cg.jvp(lambda v: times(v, n), (x,), (x,))
    np.testing.assert_array_equal(np.asarray(m), [3, 4])
    np.testing.assert_array_equal(np.asarray(tm), [0, 0])


def test_custom_jvp_defjvps(f64):
    f = cg.custom_jvp(lambda x, y: x * y)
    f.defjvps(lambda tx, out, x, y: tx * y * 10.0, None)
    x, y = _a(np.array([1.0, 2.0]), f64), _a(np.array([3.0, 4.0]), f64)
    gx, gy = cg.grad(lambda x, y: clnp.sum(f(x, y)), argnums=(0, 1))(x, y)
    np.testing.assert_array_equal(np.asarray(gx), [30.0, 40.0])
    np.testing.assert_array_equal(np.asarray(gy), [0.0, 0.0])


@pytest.mark.parametrize("rule,err,match", [
    (lambda p, t: p[0], TypeError, "must return a pair"),
    (lambda p, t: (p[0], (t[0], t[0])), ValueError, r"structure \* but a tangent output of "
                                                     r"structure tuple"),
    (lambda p, t: (p[0], t[0][:1]), ValueError, r"tangent of shape \(1,\) for a primal output "
                                                r"of shape \(2,\)"),
    (lambda p, t: (p[0], clnp.astype(t[0], clnp.float32)), TypeError,
     "tangent of dtype float32 for a primal output of dtype float64"),
])
def test_custom_jvp_rule_errors(rule, err, match, f64):
    f = cg.custom_jvp(lambda v: v * 1.0)
    f.defjvp(rule)
    x = _a(np.array([1.0, 2.0]), f64)
    with pytest.raises(err, match=match):
        cg.jvp(f, (x,), (x,))
    with pytest.raises(err, match=match):
        cg.grad(lambda v: clnp.sum(f(v)))(x)


def test_custom_jvp_without_rule(f64):
    f = cg.custom_jvp(lambda v: v * 2.0)
    x = _a(np.array([1.0, 2.0]), f64)
    np.testing.assert_array_equal(np.asarray(f(x)), [2.0, 4.0])   # eager: no rule needed
    with pytest.raises(TypeError, match="defjvp"):
        cg.grad(lambda v: clnp.sum(f(v)))(x)
    bad = cg.custom_jvp(lambda v: v, nondiff_argnums=(3,))
    with pytest.raises(ValueError, match="nondiff_argnums 3 is out of range"):
        bad(x)


def test_custom_jvp_closures(f64):
    """Closing over a value traced by an enclosing transformation: fine when that
    transformation is below the one differentiating the call, or when the call's own
    arguments are not traced (the body is differentiated); an error otherwise."""
    x = _a(np.array([0.5, 1.0]), f64)

    def make(y):
        f = cg.custom_jvp(lambda v: v * y)
        f.defjvp(lambda p, t: (f(p[0]), t[0] * y))
        return f
    g = cg.grad(lambda y: clnp.sum(cg.grad(lambda v: clnp.sum(make(y)(v) ** 2))(x)))(x)
    np.testing.assert_allclose(np.asarray(g), 4 * np.asarray(x) ** 2, rtol=1e-12)
    g = cg.grad(lambda y: clnp.sum(make(y)(x)))(x)
    np.testing.assert_allclose(np.asarray(g), np.asarray(x), rtol=1e-12)
    with pytest.raises(TypeError, match="closes over a value traced by grad"):
        cg.grad(lambda y: clnp.sum(make(y)(y)))(x)
    m = _a(np.array([[1.0, 2.0], [3.0, 4.0]]), f64)
    np.testing.assert_allclose(np.asarray(cg.vmap(lambda y: make(y)(y))(m)),
                               np.asarray(m) ** 2, rtol=1e-12)
