"""clnp_grad.random: determinism, key derivation, statistics against theory, vmap/grad/staging,
dtypes and errors."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import clnp
import clnp_grad as cg
from clnp_grad import random as jr

N = 100_000


def host(x):
    return np.asarray(x)


def test_keys_and_determinism(device):
    k = jr.key(42, device=device)
    assert k.shape == (2,) and k.dtype == clnp.uint32 and k.device == device
    assert host(jr.key(-1, device=device)).tolist() == [2**32 - 1] * 2
    assert host(jr.key(clnp.asarray(-1, device=device))).tolist() == [2**32 - 1] * 2
    assert host(jr.key(clnp.asarray(5, dtype=clnp.int32, device=device))).tolist() == [0, 5]
    assert jr.PRNGKey is jr.key
    a, b = host(jr.normal(k, (1000,), clnp.float32)), host(jr.normal(k, (1000,), clnp.float32))
    np.testing.assert_array_equal(a, b)
    c = host(jr.normal(jr.key(43, device=device), (1000,), clnp.float32))
    assert np.mean(a == c) < 0.01
    # a prefix of a longer draw is the shorter draw (counter-based)
    np.testing.assert_array_equal(host(jr.uniform(k, (10,), clnp.float32)),
                                  host(jr.uniform(k, (1000,), clnp.float32))[:10])


def test_split_fold_in(device):
    k = jr.key(0, device=device)
    ks = jr.split(k, 5)
    assert ks.shape == (5, 2) and ks.dtype == clnp.uint32
    assert jr.split(k).shape == (2, 2) and jr.split(k, 0).shape == (0, 2)
    rows = {tuple(r) for r in host(ks).tolist()} | {tuple(host(k).tolist())}
    assert len(rows) == 6
    np.testing.assert_array_equal(host(jr.split(k, 5)), host(ks))
    f = [tuple(host(jr.fold_in(k, d)).tolist()) for d in range(4)]
    assert len(set(f) | rows) == 10
    # a traced/array data gives the key a Python int gives, and vmap over data works
    np.testing.assert_array_equal(host(jr.fold_in(k, clnp.asarray(3, device=device))), f[3])
    fv = cg.vmap(lambda d: jr.fold_in(k, d))(clnp.arange(4, device=device))
    np.testing.assert_array_equal(host(fv), np.array(f, np.uint32))
    # independence: samples of sibling keys are uncorrelated
    x, y = (host(jr.normal(kk, (N,), clnp.float32)) for kk in (ks[0], ks[1]))
    assert abs(np.corrcoef(x, y)[0, 1]) < 5 / math.sqrt(N)
    z = host(jr.normal(k, (N,), clnp.float32))
    assert abs(np.corrcoef(x, z)[0, 1]) < 5 / math.sqrt(N)


def _ks(x, cdf):
    assert stats.kstest(x, cdf).pvalue > 1e-4


def test_uniform_normal_stats(device):
    k = jr.key(1, device=device)
    u = host(jr.uniform(k, (N,), clnp.float32, -2.0, 3.0))
    assert u.dtype == np.float32 and u.min() >= -2 and u.max() < 3
    _ks(u, stats.uniform(-2, 5).cdf)
    z = host(jr.normal(k, (N,), clnp.float32))
    assert abs(z.mean()) < 5 / math.sqrt(N) and abs(z.var() - 1) < 5 * math.sqrt(2 / N)
    _ks(z, stats.norm.cdf)
    lo = clnp.asarray(np.arange(4.0), dtype=clnp.float32, device=device)
    ua = host(jr.uniform(k, (N // 4, 4), clnp.float32, lo, lo + 2))
    assert (ua >= np.arange(4)).all() and (ua <= np.arange(4) + 2).all()
    np.testing.assert_allclose(ua.mean(0), np.arange(4) + 1, atol=0.02)


def test_bernoulli_randint_stats(device):
    k = jr.key(2, device=device)
    b = host(jr.bernoulli(k, 0.3, (N,)))
    assert b.dtype == np.bool_ and abs(b.mean() - 0.3) < 5 * math.sqrt(0.21 / N)
    p = clnp.asarray([0.0, 1.0, 0.5], dtype=clnp.float32, device=device)
    assert jr.bernoulli(k, p).shape == (3,)
    bp = host(jr.bernoulli(k, p, (N // 3, 3)))
    assert bp[:, 0].sum() == 0 and bp[:, 1].all() and abs(bp[:, 2].mean() - 0.5) < 0.02
    for dtype, lo, hi in ((clnp.int32, -5, 7), (clnp.int64, 0, 2**40), (clnp.int32, -2**31, 2**31)):
        r = host(jr.randint(k, (N,), lo, hi, dtype))
        assert r.dtype == dtype and r.min() >= lo and r.max() < hi
        mean, sd = (lo + hi - 1) / 2, (hi - lo) / math.sqrt(12)
        assert abs(r.mean() - mean) < 5 * sd / math.sqrt(N)
    counts = np.bincount(host(jr.randint(k, (N,), -5, 7, clnp.int32)) + 5, minlength=12)
    assert stats.chisquare(counts).pvalue > 1e-4
    hi = clnp.asarray([1, 3, 10], device=device)
    ra = host(jr.randint(k, (N // 3, 3), 0, hi))
    assert (ra >= 0).all() and (ra < [1, 3, 10]).all() and len(np.unique(ra[:, 2])) == 10
    assert jr.randint(k, (4,), 0, 10).dtype == clnp.int64


def test_truncated_normal_categorical(device):
    k = jr.key(3, device=device)
    dts = [clnp.float32] + ([clnp.float64] if device.has_fp64 else [])
    for dt in dts:
        for lo, hi in ((-1.0, 2.0), (2.5, np.inf), (-np.inf, -3.0)):
            t = host(jr.truncated_normal(k, lo, hi, (N,), dt))
            assert t.dtype == dt and (t >= lo).all() and (t <= hi).all()
            _ks(t, stats.truncnorm(lo, hi).cdf)
    logits = np.log(np.array([0.1, 0.2, 0.3, 0.4]))
    c = host(jr.categorical(k, clnp.asarray(logits, device=device), shape=(N,)))
    assert stats.chisquare(np.bincount(c, minlength=4), N * np.exp(logits)).pvalue > 1e-4
    lg = clnp.asarray(np.log([[0.9, 0.1], [0.1, 0.9], [0.5, 0.5]]).T, device=device)
    c2 = host(jr.categorical(k, lg, axis=0, shape=(N // 3, 3)))
    np.testing.assert_allclose(c2.mean(0), [0.1, 0.9, 0.5], atol=0.02)


def test_permutation(device):
    k = jr.key(4, device=device)
    p = host(jr.permutation(k, 100))
    assert sorted(p.tolist()) == list(range(100)) and (p != np.arange(100)).any()
    x = np.arange(24).reshape(4, 6)
    y = host(jr.permutation(k, clnp.asarray(x, device=device), axis=1))
    assert sorted(y[0].tolist()) == list(range(6)) and (y == x[:, y[0]]).all()
    yi = host(jr.permutation(k, clnp.asarray(x, device=device), axis=1, independent=True))
    assert (np.sort(yi, axis=1) == x).all()
    # each of the 6 orders of 3 items equally likely
    keys = jr.split(k, 600)
    perms = host(cg.vmap(lambda kk: jr.permutation(kk, 3))(keys))
    codes = perms[:, 0] * 3 + perms[:, 1]
    assert stats.chisquare(np.unique(codes, return_counts=True)[1]).pvalue > 1e-4


def test_vmap_matches_loop(device):
    keys = jr.split(jr.key(5, device=device), 8)
    fns = {"uniform": lambda kk: jr.uniform(kk, (3,), clnp.float32),
           "normal": lambda kk: jr.normal(kk, (2, 2), clnp.float32),
           "randint": lambda kk: jr.randint(kk, (3,), 0, 9),
           "split": lambda kk: jr.split(kk, 3),
           "fold_in": lambda kk: jr.fold_in(kk, 7),
           "bernoulli": lambda kk: jr.bernoulli(kk, 0.5, (4,)),
           "categorical": lambda kk: jr.categorical(kk, clnp.zeros(5, device=device)),
           "permutation": lambda kk: jr.permutation(kk, 5)}
    for name, f in fns.items():
        got = host(cg.vmap(f)(keys))
        want = np.stack([host(f(keys[i])) for i in range(8)])
        np.testing.assert_array_equal(got, want, err_msg=name)


def test_grad_through_sampling(device):
    k = jr.key(6, device=device)
    dt = device.default_float
    z = host(jr.normal(k, (4,), dt))
    g = cg.grad(lambda s: clnp.sum(jr.normal(k, (4,), dt) * s))(clnp.asarray(2.0, dtype=dt,
                                                                               device=device))
    np.testing.assert_allclose(host(g), z.sum(), rtol=1e-6)
    lo = clnp.asarray(np.zeros(3), dtype=dt, device=device)
    gl = cg.grad(lambda a: clnp.sum(jr.uniform(k, (3,), dt, a, 5.0)))(lo)
    u = host(jr.uniform(k, (3,), dt))
    np.testing.assert_allclose(host(gl), 1 - u, rtol=1e-6)


def test_dtypes(device):
    k = jr.key(7, device=device)
    assert jr.uniform(k, (2,)).dtype == device.default_float
    assert jr.normal(k, (2,), clnp.float32).dtype == clnp.float32
    if device.has_fp64:
        assert jr.normal(k, (2,), clnp.float64).dtype == clnp.float64
    else:
        with pytest.raises(Exception, match="float64"):
            jr.normal(k, (2,), clnp.float64)
    assert jr.bits(k, (3,)).dtype == clnp.uint32
    assert jr.bits(k, (3,), clnp.uint64).dtype == clnp.uint64
    with pytest.raises(TypeError, match="uniform: dtype must be float32 or float64"):
        jr.uniform(k, (2,), clnp.int32)
    with pytest.raises(TypeError, match="randint: dtype must be an integer"):
        jr.randint(k, (2,), 0, 3, clnp.float32)


def test_traces_under_staging(device):
    k = jr.key(8, device=device)
    fns = [lambda kk: jr.split(kk, 3), lambda kk: jr.fold_in(kk, 3),
           lambda kk: jr.uniform(kk, (3,)), lambda kk: jr.normal(kk, (3,)),
           lambda kk: jr.bernoulli(kk, 0.2, (3,)), lambda kk: jr.randint(kk, (3,), 0, 4),
           lambda kk: jr.categorical(kk, clnp.zeros((2, 3), device=device)),
           lambda kk: jr.permutation(kk, 4), lambda kk: jr.truncated_normal(kk, -1, 1, (3,)),
           lambda kk: jr.bits(kk, (3,))]
    for f in fns:
        g = cg.make_ir(f)(k)
        assert any(e.prim.name == "random_bits" for e in g.eqns), str(g)
        np.testing.assert_array_equal(host(cg.eval_graph(g, k)[0]), host(f(k)))
    # traced seeds and fold_in data
    g = cg.make_ir(lambda s, d: jr.normal(jr.fold_in(jr.key(s), d), (2,)))(
        clnp.asarray(3, device=device), clnp.asarray(9, device=device))
    assert "random_bits" in str(g)


def test_errors(device):
    k = jr.key(9, device=device)
    with pytest.raises(ValueError, match=r"uniform: key must have shape \(2,\).*shape \(3, 2\)"):
        jr.uniform(jr.split(k, 3), (2,))
    with pytest.raises(TypeError, match="normal: key must have dtype uint32.*int64"):
        jr.normal(clnp.asarray([1, 2], device=device), (2,))
    with pytest.raises(TypeError, match="split: key must be a clnp uint32 array"):
        jr.split(3)
    with pytest.raises(ValueError, match="randint: needs minval < maxval"):
        jr.randint(k, (2,), 5, 5)
    with pytest.raises(ValueError, match="do not fit int32"):
        jr.randint(k, (2,), 0, 2**31 + 1, clnp.int32)
    with pytest.raises(ValueError, match="uniform: needs finite minval < maxval"):
        jr.uniform(k, (2,), minval=1.0, maxval=0.0)
    with pytest.raises(ValueError, match="negative"):
        jr.normal(k, (2, -1))
    with pytest.raises(TypeError, match="shape must be an int or a tuple"):
        jr.normal(k, (2.5,))
    with pytest.raises(ValueError, match="bernoulli: p must be in"):
        jr.bernoulli(k, 1.5)
    with pytest.raises(ValueError, match="does not broadcast to shape"):
        jr.uniform(k, (2,), minval=clnp.zeros(3, device=device), maxval=1.0)
    with pytest.raises(ValueError, match="fold_in: data must be a scalar"):
        jr.fold_in(k, clnp.arange(2, device=device))
    with pytest.raises(TypeError, match="fold_in: data must be an int"):
        jr.fold_in(k, 1.5)
    with pytest.raises(ValueError, match="truncated_normal: needs lower < upper"):
        jr.truncated_normal(k, 1.0, 1.0)
    with pytest.raises(ValueError, match="categorical: shape"):
        jr.categorical(k, clnp.zeros((2, 3), device=device), shape=(3,))
    with pytest.raises(ValueError, match="permutation: x must be an int or an array of at least"):
        jr.permutation(k, clnp.asarray(1.0, device=device))
