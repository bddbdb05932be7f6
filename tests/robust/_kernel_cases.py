"""Cases run on the Oclgrind simulator by ``test_oclgrind.py`` (one subprocess per family).

Each case drives one kernel generator with tiny operands chosen to reach its code paths
(ragged vector tails, strided/negative/broadcast operands, 0-d and empty arrays, edge tiles,
work-group and split reductions) and checks the result against NumPy. Before each case the
driver writes a ``@@case <family>.<name>`` line to stderr, so that every Oclgrind diagnostic
that follows can be attributed to the case whose kernels produced it.

Usage: ``python _kernel_cases.py [--gpu] FAMILY [FAMILY ...]``. ``--gpu`` makes clnp treat
the simulated device as a GPU (``Device.is_cpu = False``), so the generators emit their GPU
layouts: local-memory tiles, barriers, work-group reductions, the GEMM ``gpu`` kind.
"""
from __future__ import annotations

import re
import sys
from typing import Callable

import numpy as np

import clnp

CASES: dict[str, dict[str, Callable[[], None]]] = {}


def case(family: str):
    def deco(fn):
        CASES.setdefault(family, {})[fn.__name__] = fn
        return fn
    return deco


def dev():
    return clnp.default_device()


def A(x):
    return clnp.asarray(np.asarray(x))


def N(x):
    return x.to_numpy() if hasattr(x, "to_numpy") else np.asarray(x)


def check(got, want, tol=1e-5):
    got = N(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(got, want)


R = np.random.default_rng(7)


def rnd(*shape, dtype=np.float32):
    return R.standard_normal(shape).astype(dtype)


# ----------------------------------------------------------------------------- elementwise
@case("elementwise")
def contiguous_tail():
    for n in (1, 5, 13, 67):                  # vector body + ragged tail
        h = rnd(n)
        check(A(h) * 2 + 1, h * 2 + 1)


@case("elementwise")
def strided_negative_broadcast():
    h = rnd(6, 9)
    x = A(h)
    check(x[::2, ::-3] + x[1::2, 1::3], h[::2, ::-3] + h[1::2, 1::3])
    check(x.T * x.T, h.T * h.T)
    c, r = rnd(3, 1), rnd(1, 4)
    check(A(c) - A(r), c - r)


@case("elementwise")
def zero_d_empty():
    check(A(np.float32(3.0)) + 1, np.float32(4.0))
    check(A(np.zeros((0, 3), np.float32)) + 1, np.zeros((0, 3), np.float32))
    check(clnp.sin(A(np.zeros((2, 0), np.float32))), np.zeros((2, 0), np.float32))


@case("elementwise")
def dtypes_where_cast():
    i = np.arange(-7, 10, dtype=np.int32)
    check(A(i) // 3, i // 3)
    check(A(i).astype(np.float32), i.astype(np.float32))
    c = (rnd(7) + 1j * rnd(7)).astype(np.complex64)
    check(A(c) * A(c), c * c)
    h = rnd(11)
    check(clnp.where(A(h) > 0, A(h), 0.0), np.where(h > 0, h, 0.0).astype(np.float32))
    b = np.array([1, 0, 1, 1, 0], np.uint8)
    check(A(b) & 1, b & 1)


@case("elementwise")
def transcendental():
    h = np.abs(rnd(13)) + 0.5
    for f in ("exp", "log", "sqrt", "tanh", "arctan2"):
        if f == "arctan2":
            check(clnp.arctan2(A(h), A(h[::-1])), np.arctan2(h, h[::-1]))
        else:
            check(getattr(clnp, f)(A(h)), getattr(np, f)(h), 1e-5)


@case("elementwise")
def inplace_alias():
    h = rnd(12)
    x = A(h)
    x[1:] += x[:-1]
    h[1:] += h[:-1].copy()
    check(x, h)


# ----------------------------------------------------------------------------- reductions
@case("reduction")
def full_and_axes():
    for n in (1, 7, 100, 5000):             # serial, vector tail, work-group, split
        h = rnd(n)
        check(clnp.sum(A(h)), h.sum(dtype=np.float32), 1e-3)
        check(clnp.max(A(h)), h.max())
    h = rnd(7, 9)
    for ax in (0, 1, None):
        check(clnp.sum(A(h), axis=ax), h.sum(axis=ax), 1e-4)
        check(clnp.argmax(A(h), axis=ax), h.argmax(axis=ax))
        check(clnp.min(A(h)[::-1, ::2], axis=ax), h[::-1, ::2].min(axis=ax))


@case("reduction")
def long_axes():
    h = rnd(3, 700)
    check(clnp.sum(A(h), axis=1), h.sum(axis=1), 1e-3)
    h = rnd(700, 3)
    check(clnp.sum(A(h), axis=0), h.sum(axis=0), 1e-3)
    check(clnp.argmin(A(h), axis=0), h.argmin(axis=0))


@case("reduction")
def complex_prod_refold():
    # outputs that are not finite are folded again left to right (NumPy's NaN pattern)
    h = (rnd(4, 6) + 1j * rnd(4, 6)).astype(np.complex64)
    h[1, 2] = complex(0, np.inf)
    h[3, 0] = complex(np.inf, 0)
    with np.errstate(invalid="ignore"):
        want = np.prod(h, axis=1)
    got = N(clnp.prod(A(h), axis=1))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got[[0, 2]], want[[0, 2]], rtol=1e-5)


@case("reduction")
def stats_empty_bool():
    h = rnd(5, 6)
    check(clnp.mean(A(h), axis=1), h.mean(axis=1))
    check(clnp.var(A(h), axis=0), h.var(axis=0), 1e-4)
    check(clnp.prod(A(h[:, :3]), axis=1), h[:, :3].prod(axis=1), 1e-4)
    check(clnp.any(A(h) > 1, axis=0), (h > 1).any(axis=0))
    check(clnp.all(A(h) > -5), (h > -5).all())
    check(clnp.sum(A(np.zeros((0, 4), np.float32)), axis=0), np.zeros(4, np.float32))
    check(clnp.count_nonzero(A(h > 0)), np.count_nonzero(h > 0))


# ----------------------------------------------------------------------------- scans
@case("scan")
def cumsum_paths():
    for n in (1, 9, 300, 3000):
        h = np.arange(n, dtype=np.int32) % 7
        check(clnp.cumsum(A(h)), np.cumsum(h))
    h = rnd(5, 40)
    check(clnp.cumsum(A(h), axis=0), np.cumsum(h, axis=0), 1e-4)
    check(clnp.cumsum(A(h), axis=1), np.cumsum(h, axis=1), 1e-4)
    check(clnp.cumprod(A(h[:, :5]), axis=1), np.cumprod(h[:, :5], axis=1), 1e-4)


# ----------------------------------------------------------------------------- sorting/search
@case("sort")
def sort_argsort():
    for n in (1, 2, 37, 600):
        h = rnd(n)
        check(clnp.sort(A(h)), np.sort(h))
        check(clnp.argsort(A(h), stable=True), np.argsort(h, kind="stable"))
    h = rnd(6, 33)
    check(clnp.sort(A(h), axis=0), np.sort(h, axis=0))
    check(clnp.sort(A(h), axis=1), np.sort(h, axis=1))


@case("sort")
def search_unique():
    s = np.sort(rnd(50))
    q = rnd(17)
    check(clnp.searchsorted(A(s), A(q)), np.searchsorted(s, q))
    i = np.array([3, 1, 3, 2, 1, 9, 0], np.int32)
    check(clnp.unique_values(A(i)), np.unique(i))
    check(clnp.nonzero(A(i > 1))[0], np.nonzero(i > 1)[0])


# ----------------------------------------------------------------------------- GEMM
def _gemm_operands():
    a, b = rnd(9, 7), rnd(7, 13)
    yield a, b
    yield rnd(2, 5, 3), rnd(3, 4)
    yield rnd(33, 17), rnd(17, 5)
    yield rnd(4, 300), rnd(300, 3)          # long K: split


def _check_gemm():
    for a, b in _gemm_operands():
        check(A(a) @ A(b), a @ b, 1e-4)
    a = rnd(8, 6)
    check(A(a).T @ A(a), a.T @ a, 1e-4)
    check(A(a) @ A(np.ones(6, np.float32)), a @ np.ones(6, np.float32), 1e-4)


@case("gemm")
def default_config():
    _check_gemm()


@case("gemm")
def every_candidate():
    from clnp._routines import autotune as tuner
    kind = "cpu" if dev().is_cpu else "gpu"
    for key in ("float32", "float32:small"):
        for cfg in tuner.candidates(dev(), key, kind=kind):
            with tuner.use_config(dev(), key, cfg):
                _check_gemm()


@case("gemm")
def float64_complex():
    a, b = rnd(5, 6, dtype=np.float64), rnd(6, 7, dtype=np.float64)
    check(A(a) @ A(b), a @ b, 1e-10)
    c = (rnd(4, 5) + 1j * rnd(4, 5)).astype(np.complex64)
    check(A(c) @ A(c.T), c @ c.T, 1e-4)


# ----------------------------------------------------------------------------- linalg
@case("linalg")
def factorizations():
    m = rnd(5, 5, dtype=np.float64)
    spd = m @ m.T + 5 * np.eye(5)
    check(clnp.linalg.solve(A(spd), A(m)), np.linalg.solve(spd, m), 1e-8)
    check(clnp.linalg.inv(A(m)), np.linalg.inv(m), 1e-8)
    check(clnp.linalg.det(A(m)), np.linalg.det(m), 1e-8)
    check(clnp.linalg.cholesky(A(spd)), np.linalg.cholesky(spd), 1e-8)
    q, r = clnp.linalg.qr(A(m))
    check(N(q) @ N(r), m, 1e-8)


@case("linalg")
def spectral():
    m = rnd(6, 6, dtype=np.float64)
    s = m + m.T
    check(clnp.linalg.eigvalsh(A(s)), np.linalg.eigvalsh(s), 1e-8)
    check(clnp.linalg.svdvals(A(m)), np.linalg.svd(m, compute_uv=False), 1e-8)
    got = N(clnp.linalg.eigvals(A(m)))
    for w in np.linalg.eigvals(m):         # conjugate pairs come in either order
        assert np.abs(got - w).min() < 1e-6, (got, w)


@case("linalg")
def blocked():
    """The blocked LU/Cholesky (panels, GEMM trailing updates), reached at a small order by
    lowering their thresholds as tests/test_linalg.py does."""
    from clnp._routines import linalg as X
    old = X._BLOCKED_MIN, X._NB
    X._BLOCKED_MIN, X._NB = {"cpu": 8, "gpu": 8}, 8
    try:
        m = rnd(21, 21, dtype=np.float64)
        spd = m @ m.T + 21 * np.eye(21)
        check(clnp.linalg.solve(A(m), A(m[:, :3])), np.linalg.solve(m, m[:, :3]), 1e-8)
        check(clnp.linalg.det(A(m)), np.linalg.det(m), 1e-6)
        check(clnp.linalg.cholesky(A(spd)), np.linalg.cholesky(spd), 1e-8)
    finally:
        X._BLOCKED_MIN, X._NB = old


# ----------------------------------------------------------------------------- fft
@case("fft")
def transforms():
    for n in (1, 8, 12, 7, 11 * 13, 512):      # radix 2/3, odd prime, Bluestein, long
        h = (rnd(n) + 1j * rnd(n)).astype(np.complex64)
        check(clnp.fft.fft(A(h)), np.fft.fft(h), 1e-4)
    h = rnd(6, 10)
    check(clnp.fft.rfft(A(h)), np.fft.rfft(h), 1e-4)
    check(clnp.fft.irfft(A(np.fft.rfft(h).astype(np.complex64))), np.fft.irfft(np.fft.rfft(h)),
          1e-4)
    check(clnp.fft.fftn(A(h)), np.fft.fftn(h), 1e-4)


# ----------------------------------------------------------------------------- random
@case("random")
def generators():
    g = clnp.random.default_rng(3)
    for draw in (lambda: g.normal(size=17), lambda: g.random(13), lambda: g.integers(0, 9, 11),
                 lambda: g.standard_exponential(5), lambda: g.permutation(10)):
        x = N(draw())
        assert np.all(np.isfinite(x))
    p = np.sort(N(g.permutation(10)))
    check(p, np.arange(10))


# ----------------------------------------------------------------------------- indexing
@case("indexing")
def gather_scatter():
    h = rnd(7, 5)
    x = A(h)
    idx = np.array([4, 0, 6, 0], np.int64)
    check(x[A(idx)], h[idx])
    check(x[A(idx), 1:4], h[idx, 1:4])
    check(x[A(h > 0)], h[h > 0])
    check(clnp.take(x, A(idx), axis=0), np.take(h, idx, axis=0))
    x[A(idx[:3])] = 0.5
    h[idx[:3]] = 0.5
    check(x, h)
    x[A(h > 0)] = -1.0
    h[h > 0] = -1.0
    check(x, h)


@case("indexing")
def out_of_range_report():
    # several work-items find bad indices at once: one claims the flag and writes the report
    x = A(rnd(7, 5))
    idx = np.array([7, 1, -9, 8, 2, 30], np.int64)
    try:
        x[A(idx)]
    except IndexError as e:
        assert "out of bounds for axis 0 with size 7" in str(e), e
    else:
        raise AssertionError("no IndexError")
    import clnp_grad as cg
    f = cg.jit(lambda i: clnp.take(x, i, axis=0))
    ok = np.array([0, 6, -7], np.int64)
    for _ in range(3):       # build, record, replay
        check(f(A(ok)), np.take(N(x), ok, axis=0))
    try:                     # the replay's own check reads the report
        f(A(idx))
    except IndexError as e:
        assert "out of bounds for axis 0 with size 7" in str(e), e
    else:
        raise AssertionError("no IndexError")


@case("indexing")
def ufunc_at_reduce():
    h = np.zeros(6, np.float32)
    idx = np.array([0, 2, 2, 5, 0, 2], np.int64)
    v = np.arange(6, dtype=np.float32)
    x = A(h)
    clnp.add.at(x, A(idx), A(v))
    np.add.at(h, idx, v)
    check(x, h)
    hm = np.ones(6, np.float32)
    xm = A(hm)
    clnp.multiply.at(xm, A(idx), A(v + 1))        # no atomic multiply: sort and segment
    np.multiply.at(hm, idx, v + 1)
    check(xm, hm)
    m = rnd(4, 6)
    check(clnp.add.reduce(A(m), axis=1), np.add.reduce(m, axis=1), 1e-5)
    check(clnp.add.accumulate(A(m), axis=0), np.add.accumulate(m, axis=0), 1e-5)
    check(clnp.multiply.outer(A(m[0]), A(m[1])), np.multiply.outer(m[0], m[1]))
    check(clnp.maximum.reduceat(A(m[0]), A(np.array([0, 2, 5]))),
          np.maximum.reduceat(m[0], [0, 2, 5]))


# ----------------------------------------------------------------------------- scatter
# Assignment through index arrays with repeated indices: NumPy keeps the last value written
# (C order). Every path below writes different values to a repeated target, so a scatter that
# lets the repeats race shows up as a write-write data race (uniform races stay suppressed).
_REP = np.array([3, 0, 3, 5, 0, 3, 1, 5, 5, 2], np.int64)


def _scatter_paths():
    h = np.arange(8, dtype=np.float32)
    v = np.arange(10, dtype=np.float32) + 10
    x = A(h)
    x[A(_REP)] = A(v)
    h[_REP] = v
    check(x, h)
    h2 = rnd(6, 3)
    x2 = A(h2)
    x2[A(_REP[:7] % 6)] = A(rnd(7, 3) * 0 + np.arange(21, dtype=np.float32).reshape(7, 3))
    h2[_REP[:7] % 6] = np.arange(21, dtype=np.float32).reshape(7, 3)
    check(x2, h2)
    rows, cols = np.array([1, 4, 1, 1]), np.array([2, 0, 2, 2])
    x2[A(rows), A(cols)] = A(np.array([7, 8, 9, 10], np.float32))
    h2[rows, cols] = [7, 8, 9, 10]
    check(x2, h2)
    hp = np.zeros(6, np.int32)
    xp = A(hp)
    clnp.put(xp, A(_REP % 6), A(np.arange(10, dtype=np.int32)))
    np.put(hp, _REP % 6, np.arange(10, dtype=np.int32))
    check(xp, hp)
    xp.put(_REP[::-1] % 6, np.arange(10, dtype=np.int32) * 3)
    hp.put(_REP[::-1] % 6, np.arange(10, dtype=np.int32) * 3)
    check(xp, hp)
    xp.flat[A(_REP % 6)] = A(np.arange(10, dtype=np.int32) - 7)
    hp.flat[_REP % 6] = np.arange(10, dtype=np.int32) - 7
    check(xp, hp)
    ha = rnd(3, 4)
    xa = A(ha)
    ia = np.array([[1, 1, 3], [0, 2, 0], [3, 3, 3]])
    va = np.arange(9, dtype=np.float32).reshape(3, 3)
    clnp.put_along_axis(xa, A(ia), A(va), axis=1)
    np.put_along_axis(ha, ia, va, axis=1)
    check(xa, ha)


@case("scatter")
def repeated_indices_last_wins():
    _scatter_paths()


@case("scatter")
def repeated_indices_sorted_path():
    # the path taken when the targets' span is large next to the index count
    from clnp._routines import scatter
    saved = scatter.SCATTER_TABLE_FLOOR, scatter.SCATTER_TABLE_RATIO
    scatter.SCATTER_TABLE_FLOOR, scatter.SCATTER_TABLE_RATIO = 0, 0
    try:
        _scatter_paths()
    finally:
        scatter.SCATTER_TABLE_FLOOR, scatter.SCATTER_TABLE_RATIO = saved


# ----------------------------------------------------------------------------- manipulation
@case("manipulation")
def copies_and_joins():
    h = rnd(3, 5)
    x = A(h)
    check(clnp.concat([x, x[::-1]], axis=0), np.concatenate([h, h[::-1]], axis=0))
    # one launch of three strided inputs, the middle one along the axis; float16 and bool
    # elements are copied as bits
    g = rnd(3, 4, 6)
    y = A(g)
    check(clnp.concat([y[:, :2], y[::-1, 1:2, :], y[:, :, ::-1][:, 1:]], axis=1),
          np.concatenate([g[:, :2], g[::-1, 1:2, :], g[:, :, ::-1][:, 1:]], axis=1))
    b = g > 0
    check(clnp.concat([A(b), A(b)[:, ::2]], axis=1), np.concatenate([b, b[:, ::2]], axis=1))
    check(clnp.stack([x, x.T.T], axis=1), np.stack([h, h], axis=1))
    check(clnp.flip(x, axis=1), np.flip(h, axis=1))
    check(clnp.roll(x, 2, axis=1), np.roll(h, 2, axis=1))
    check(clnp.reshape(x.T, (15,)), h.T.reshape(15))
    check(clnp.tile(x[:, :2], (2, 3)), np.tile(h[:, :2], (2, 3)))
    check(clnp.repeat(x, 2, axis=0), np.repeat(h, 2, axis=0))
    check(clnp.moveaxis(A(rnd(2, 3, 4)), 0, -1).to_numpy().shape, (3, 4, 2))
    check(clnp.pad(x, ((1, 0), (2, 1))), np.pad(h, ((1, 0), (2, 1))))
    check(clnp.broadcast_to(x[:1], (4, 5)) + 0, np.broadcast_to(h[:1], (4, 5)))


@case("manipulation")
def sets_and_histograms():
    i = np.array([5, 1, 5, 2, 1, 9, 0, 5], np.int32)
    vals, counts = clnp.unique_counts(A(i))
    v, c = np.unique(i, return_counts=True)
    check(vals, v)
    check(counts, c)
    h = rnd(40)
    check(clnp.histogram(A(h), bins=5)[0], np.histogram(h, bins=5)[0])
    check(clnp.isin(A(i), A(np.array([1, 9], np.int32))), np.isin(i, [1, 9]))

# ----------------------------------------------------------------------------- jit
@case("jit")
def fused_and_loops():
    import clnp_grad as cg
    h = rnd(13)
    f = cg.jit(lambda x: clnp.sin(x) * 2 + x * x)
    check(f(A(h)), np.sin(h) * 2 + h * h, 1e-5)
    g = cg.jit(lambda x: clnp.sum(clnp.exp(x) * x, axis=0))
    m = rnd(5, 4)
    check(g(A(m)), (np.exp(m) * m).sum(axis=0), 1e-4)
    loop = cg.jit(lambda x: cg.lax.fori_loop(0, 3, lambda i, c: c * 0.5 + 1.0, x))
    want = h.copy()
    for _ in range(3):
        want = want * 0.5 + 1.0
    check(loop(A(h)), want, 1e-5)
    a, b, bias = rnd(9, 7), rnd(7, 13), rnd(13)        # GEMM with a fused epilogue
    ep = cg.jit(lambda a, b, c: clnp.maximum(a @ b + c, 0.0) * 2)
    check(ep(A(a), A(b), A(bias)), np.maximum(a @ b + bias, 0) * 2, 1e-4)
    res = rnd(9, 13)
    ep2 = cg.jit(lambda a, b, r: a @ b + r)
    check(ep2(A(a), A(b), A(res)), a @ b + res, 1e-4)
    grad = cg.jit(cg.grad(lambda x: clnp.sum(clnp.tanh(x) ** 2)))
    check(grad(A(h)), 2 * np.tanh(h) * (1 - np.tanh(h) ** 2), 1e-4)


@case("jit")
def horizontal_reductions():
    """Independent reductions to one value joined in one kernel: members of several sizes
    (a work-group each in the GPU layout, sharing its local array), sums and ``all``."""
    import clnp_grad as cg
    hs = [rnd(5), rnd(9, 8), rnd(300), rnd(3, 70)]
    f = cg.jit(lambda ts: ([clnp.sum(t * t) for t in ts],
                           [clnp.all(clnp.isfinite(t)) for t in ts]))
    sums, fin = f([A(h) for h in hs])
    for got, h in zip(sums, hs):
        check(got, (h * h).sum(), 1e-4)
    check(clnp.stack(fin), np.ones(len(hs), bool))


@case("jit")
def masks_rows_and_carries():
    """Bools as vector masks, reductions walking rows over several dims, strided kernels
    with carried indices (lengths past a vector with a tail)."""
    import clnp_grad as cg
    x, y = rnd(40), rnd(40)
    b = x > 0.3
    f = cg.jit(lambda x, y, b: (clnp.where(x > y, x, y - x), clnp.logical_and(x < y, b),
                                clnp.astype(b, clnp.float32) * y))
    for got, want in zip(f(A(x), A(y), A(b)), (np.where(x > y, x, y - x), (x < y) & b,
                                                b.astype(np.float32) * y)):
        check(got, want)
    v = rnd(3, 2, 4, 9)
    bn = cg.jit(lambda v: clnp.sum((v - clnp.mean(v, axis=(0, 2, 3), keepdims=True)) ** 2,
                                   axis=(0, 2, 3)))
    check(bn(A(v)), ((v - v.mean(axis=(0, 2, 3), keepdims=True)) ** 2).sum(axis=(0, 2, 3)),
          1e-4)
    t = rnd(5, 3, 7, 3)
    check(clnp.permute_dims(A(t), (2, 0, 3, 1)) * 2.0 + 1.0,
          np.transpose(t, (2, 0, 3, 1)) * 2.0 + 1.0)


@case("rows")
def row_kernels():
    """Reductions over each row with the elementwise code around them in one kernel
    (clnp_grad/_jit/rowcodegen.py): softmax and a layer norm's centring."""
    import clnp_grad as cg
    h = rnd(6, 37)
    sm = cg.jit(lambda x: clnp.exp(x - clnp.max(x, axis=-1, keepdims=True)) /
                clnp.sum(clnp.exp(x - clnp.max(x, axis=-1, keepdims=True)), axis=-1,
                         keepdims=True))
    e = np.exp(h - h.max(-1, keepdims=True))
    check(sm(A(h)), e / e.sum(-1, keepdims=True), 1e-5)
    ln = cg.jit(lambda x: (x - clnp.mean(x, axis=-1, keepdims=True)) * 2.0)
    check(ln(A(h)), (h - h.mean(-1, keepdims=True)) * 2.0, 1e-5)


@case("jit")
def column_sums_on_vectors():
    """CPU column sums walking 16 outputs as one vector (no bool values in the body): a
    ragged output count (the last block overlaps), a per-row operand splatted, a side
    output stored with one vector store. CPU layouts only: in the GPU layouts, column sums
    get findings of the uninitialised-value check that docs/robustness.md ("Not done yet")
    records as unexplained."""
    import clnp_grad as cg
    if dev().is_gpu:
        return
    x, g, sc = rnd(40, 37), rnd(40, 37), rnd(40, 1)
    d = g * np.exp(-x * x) * sc
    got = cg.jit(lambda x, g, s: (g * clnp.exp(-x * x) * s, clnp.sum(g * clnp.exp(-x * x) * s,
                                                                  axis=0)))(A(x), A(g), A(sc))
    check(got[0], d, 1e-5)
    check(got[1], d.sum(axis=0), 1e-4)


@case("jit")
def finished_reductions_epilogues_replay():
    """Column sums split into parts that the kernel finishes (GPU layouts: atomic counts,
    the last part combining the partials), reduction epilogues (a bias update on the sum, a
    full reduction's scaling), and calls replayed from a recording (three calls)."""
    import clnp_grad as cg
    a, g, bias = rnd(256, 48), rnd(256, 48), rnd(48)     # GPU layouts: 16 and 6 parts
    step = cg.jit(lambda a, g, b: (g * (a > 0), b - 0.1 * clnp.sum(g * (a > 0), axis=0),
                                   clnp.sum(a * a) * 0.5 + 1.0))
    d = g * (a > 0)
    for _ in range(3):
        got = step(A(a), A(g), A(bias))
        for x, want in zip(got, (d, bias - np.float32(0.1) * d.sum(axis=0),
                                 (a * a).sum() * 0.5 + 1.0)):
            check(x, want, 1e-4)


@case("jit")
def whole_step_kernels():
    """Small steps as one kernel (clnp_grad/_jit/whole_step.py; the driver turns it off for
    every other case, so they reach the generators they are for): a logistic-regression
    step, reductions over several axes (a NaN through max), products with batch and two
    contracted dims, strided, negative-step and broadcast views, a reshape copy and returned
    views. In the GPU layouts one work-group of 256 items: barriers between blocks, the
    walks of small reductions split over items and combined in local memory."""
    import clnp_grad as cg
    from clnp_grad._jit import whole_step
    whole_step.WHOLE_STEP = True
    try:
        X, y, w = rnd(64, 16), np.sign(rnd(64)), rnd(16)

        def loss(w, b):
            return clnp.mean(clnp.log1p(clnp.exp(-A(y) * (A(X) @ w + b))))
        step = cg.jit(lambda w, b: [p - 0.1 * g for p, g in
                                    zip((w, b), cg.grad(loss, argnums=(0, 1))(w, b))])
        s = -y / (1 + np.exp(y * (X @ w + 0.5))) / 64
        for _ in range(2):
            nw, nb = step(A(w), A(np.float32(0.5)))
            check(nw, w - 0.1 * (X.T @ s), 1e-5)
            check(nb, np.float32(0.5) - 0.1 * s.sum(), 1e-5)
        t, a, b = rnd(3, 4, 5), rnd(2, 3, 4), rnd(2, 4, 5)
        t[1, 2, 3] = np.nan
        f = cg.jit(lambda t, a, b: (clnp.max(t, axis=(0, 2)), clnp.sum(t[:, ::-2, 1:], axis=0),
                                    a @ b, clnp.tensordot(a, t[:, :, :4], axes=([1, 2], [0, 1])),
                                    clnp.reshape(clnp.permute_dims(t, (2, 0, 1)), (-1,)) * 2,
                                    (t * 2)[1].T))
        want = (np.max(t, axis=(0, 2)), np.sum(t[:, ::-2, 1:], axis=0), a @ b,
                np.tensordot(a, t[:, :, :4], axes=([1, 2], [0, 1])),
                np.reshape(np.transpose(t, (2, 0, 1)), (-1,)) * 2, (t * 2)[1].T)
        for got, w in zip(f(A(t), A(a), A(b)), want):
            check(got, w, 1e-4)
    finally:
        whole_step.WHOLE_STEP = False


# ----------------------------------------------------------------------------- clnp_nn
@case("nn")
def erf_vectors():
    """clnp_nn's float32 erf, 8 elements a work-item: whole vectors and a padded tail (no read
    or write past the array), and GELU's gradient through it under jit."""
    import math

    import clnp_grad as cg
    import clnp_nn.functional as F
    for n in (8, 13, 3):
        x = np.linspace(-4, 4, n, dtype=np.float32)
        check(F.erf(A(x)), np.array([math.erf(v) for v in x], np.float32), 1e-6)
    g = cg.jit(cg.grad(lambda v: clnp.sum(F.gelu(v))))(A(np.linspace(-2, 2, 11, dtype=np.float32)))
    assert np.isfinite(N(g)).all()


@case("nn")
def conv_pool_batch_norm():
    """clnp_nn's kernels: convolution in both im2col layouts with the data gradient as a
    convolution and through col2im, max pooling (overlapping and plain windows), a training
    batch norm, forward and backward under jit."""
    import clnp_grad as cg
    import clnp_nn.functional as F
    from clnp_nn.functional import conv
    x, w = rnd(2, 3, 6, 6), rnd(4, 3, 3, 3)
    xp_ = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    want = np.einsum("nchwij,ocij->nohw", np.lib.stride_tricks.sliding_window_view(
        xp_, (3, 3), axis=(2, 3)), w)
    loss = lambda x, w: clnp.sum(F.conv2d(x, w, padding=1) ** 2)    # noqa: E731
    grads = []
    for batch_major, as_conv in ((False, True), (True, True), (False, False)):
        conv.BATCH_MAJOR, conv.DGRAD_AS_CONV = batch_major, as_conv
        try:
            check(F.conv2d(A(x), A(w), padding=1), want, 1e-4)
            grads.append([N(g) for g in cg.jit(cg.grad(loss, argnums=(0, 1)))(A(x), A(w))])
        finally:
            conv.BATCH_MAJOR = conv.DGRAD_AS_CONV = None
    for g in grads[1:]:
        for a, b in zip(g, grads[0]):
            check(a, b, 1e-3)
    p = rnd(2, 3, 7, 7)
    for k, s, pad in ((3, 2, 1), (2, 2, 0)):
        y = F.max_pool2d(A(p), k, s, pad)
        g = cg.jit(cg.grad(lambda v: clnp.sum(F.max_pool2d(v, k, s, pad) ** 2)))(A(p))
        assert np.isfinite(N(g)).all() and N(y).shape[2] == (7 + 2 * pad - k) // s + 1
    ones, zeros = clnp.ones((3,)), clnp.zeros((3,))
    bn = cg.jit(cg.grad(lambda v: clnp.sum(
        F.batch_norm(v, zeros, ones, training=True)[0] * clnp.arange(3.0)[:, None, None])))
    gb = N(bn(A(p)))
    check(gb.sum(axis=(0, 2, 3)), np.zeros(3, np.float32), 1e-3)   # zero-mean per channel


@case("nn")
def element_variants():
    """The one-item-per-element variants of im2col, col2im and the max-pool kernels (the
    GPU default), forced on whatever device runs."""
    import clnp_grad as cg
    import clnp_nn.functional as F
    from clnp_nn.functional import _kernels as K, conv
    x, w = rnd(2, 3, 6, 6), rnd(4, 3, 3, 3)
    saved = K.VARIANT
    outs = []
    try:
        conv.DGRAD_AS_CONV = False           # the data gradient through col2im
        for variant in ("row", "element"):
            K.VARIANT = variant
            y = F.conv2d(A(x), A(w), padding=1)
            g = cg.grad(lambda x, w: clnp.sum(F.conv2d(x, w, padding=1) ** 2),
                        argnums=(0, 1))(A(x), A(w))
            p = F.max_pool2d(A(x), 3, 2, 1)
            gp = cg.grad(lambda v: clnp.sum(F.max_pool2d(v, 3, 2, 1) ** 2))(A(x))
            outs.append([N(y), N(g[0]), N(g[1]), N(p), N(gp)])
    finally:
        K.VARIANT, conv.DGRAD_AS_CONV = saved, None
    for a, b in zip(*outs):
        check(a, b, 1e-3)


# ----------------------------------------------------------------------------- custom kernels
@case("custom")
def elementwise_kernel_fused_into_jit():
    """A one-output ElementwiseKernel inside jit becomes a function of the fused kernel
    (clnp._kernels.custom.render_custom_function)."""
    import clnp_grad as cg
    sq1 = clnp.ElementwiseKernel("T x", "T z", "z = x * x + 1", "sq1")
    h = rnd(3, 7)
    check(cg.jit(lambda x: sq1(x) * 2)(A(h)), (h * h + 1) * 2, 1e-6)


@case("custom")
def elementwise_kernels():
    addsub = clnp.ElementwiseKernel("T x, T y", "T s, T d", "s = x + y; d = x - y", "addsub")
    a, b = rnd(3, 5), rnd(5)
    s, d = addsub(A(a)[::-1], A(b))
    check(s, a[::-1] + b)
    check(d, a[::-1] - b)


# ----------------------------------------------------------------------------- empty shapes
# Every kernel generator on empty and zero-size operands (issue #28): zero rows, zero
# columns, zero reduced lengths with and without ``initial=``, zero batches, zero inner
# products, empty index sets. ``same`` compares with NumPy, or requires an exception where
# NumPy raises one. test_empty_shapes.py runs this family with faulthandler enabled after
# the device is initialised (as pytest does) and with the divisor audit of ``main``.
def same(fn, *hosts, tol=1e-5):
    """``fn(numpy, *hosts)`` against ``fn(clnp, *device copies)``."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            want = fn(np, *hosts)
        except Exception as e:                 # NumPy refuses: clnp must refuse too
            try:
                got = fn(clnp, *[A(h) for h in hosts])
            except Exception:
                return
            raise AssertionError(f"NumPy raised {type(e).__name__}: {e}; clnp returned "
                                 f"{got!r}") from None
        got = fn(clnp, *[A(h) for h in hosts])
    if isinstance(want, tuple):
        for g, w in zip(got, want):
            check(g, w, tol)
    else:
        check(got, want, tol)


EMPTY = [(0,), (0, 5), (5, 0), (2, 0, 3)]


def zeros(shape, dtype=np.float32):
    return np.zeros(shape, dtype)


@case("empty")
def elementwise_empty():
    for shape in EMPTY:
        h = zeros(shape)
        same(lambda xp, x: xp.sin(x) * 2 + 1, h)
        same(lambda xp, x: xp.where(x > 0, x, -x), h)
        same(lambda xp, x: (x.astype(xp.int32) // 3) % 2, h)
        same(lambda xp, x: x.T + 1, h)
    same(lambda xp, a, b: a + b, zeros((0, 1)), zeros((1, 5)))
    same(lambda xp, a, b: a * b, zeros((5, 1)), zeros((1, 0)))
    same(lambda xp, a: a[::2, ::-1] - 1, zeros((0, 6)))
    same(lambda xp, a: a[:, 1:3].T * 3, zeros((6, 0)).T)
    x = A(zeros((0, 5)))
    x += 1
    x[...] = 2.0
    check(x, zeros((0, 5)))


@case("empty")
def reductions_empty():
    for op in ("sum", "prod", "max", "min", "mean", "any", "all"):
        for shape, axis in (((3, 0), 1), ((3, 0), 0), ((0, 5), 0), ((0, 5), 1), ((0,), None),
                            ((2, 0, 3), (0, 2)), ((2, 0, 3), 1), ((9000, 0), 1),
                            ((0, 9000), 0), ((0, 9000), 1)):
            h = zeros(shape) if op not in ("any", "all") else zeros(shape, bool)
            same(lambda xp, x: getattr(xp, op)(x, axis=axis), h)
    for shape, axis in (((3, 0), 1), ((0, 5), 0), ((0,), None)):
        same(lambda xp, x: xp.max(x, axis=axis, initial=-1.0), zeros(shape))
        same(lambda xp, x: xp.sum(x, axis=axis, initial=2.0) if xp is np else
             xp.sum(x, axis=axis) + 2.0, zeros(shape))
        same(lambda xp, x: xp.var(x, axis=axis), zeros(shape))
        same(lambda xp, x: xp.count_nonzero(x, axis=axis), zeros(shape))
    same(lambda xp, x: xp.sum(x.T, axis=1), zeros((0, 7)))
    same(lambda xp, x: xp.prod(x, axis=1), zeros((4, 0), np.complex64))
    for shape, axis in (((3, 0), 1), ((0, 5), 1), ((5, 0), 0), ((0,), None), ((0, 5), 0)):
        same(lambda xp, x: xp.argmax(x, axis=axis), zeros(shape))
        same(lambda xp, x: xp.argmin(x, axis=axis), zeros(shape))


@case("empty")
def scans_empty():
    for shape in ((0,), (0, 5), (5, 0), (0, 5000), (5000, 0)):
        for axis in range(len(shape)):
            same(lambda xp, x: xp.cumsum(x, axis=axis), zeros(shape))
            same(lambda xp, x: xp.cumprod(x, axis=axis), zeros(shape))
    same(lambda xp, x: xp.cumsum(x.astype(xp.int32), axis=1), zeros((3, 0)))


@case("empty")
def sort_search_empty():
    for shape in ((0,), (3, 0), (0, 3), (0, 600)):
        for axis in range(len(shape)):
            same(lambda xp, x: xp.sort(x, axis=axis), zeros(shape))
            same(lambda xp, x: xp.argsort(x, axis=axis), zeros(shape))
    same(lambda xp, s, q: xp.searchsorted(s, q), zeros((0,)), np.arange(5, dtype=np.float32))
    same(lambda xp, s, q: xp.searchsorted(s, q), np.arange(5, dtype=np.float32), zeros((0,)))
    same(lambda xp, s, q: xp.searchsorted(s, q), zeros((0,)), zeros((0, 3)))
    same(lambda xp, x: xp.unique_values(x) if xp is clnp else np.unique(x), zeros((0,)))
    same(lambda xp, x: xp.nonzero(x)[0], zeros((0,)))
    same(lambda xp, x: xp.nonzero(x), zeros((3, 0)))


@case("empty")
def gemm_empty():
    for sa, sb in (((0, 5), (5, 3)), ((3, 0), (0, 4)), ((3, 5), (5, 0)), ((0, 0), (0, 0)),
                   ((2, 0, 4), (4, 3)), ((0,), (0,)), ((4, 0), (0,)), ((300, 0), (0, 300))):
        same(lambda xp, a, b: a @ b, zeros(sa), zeros(sb))
    same(lambda xp, a, b: a @ b, zeros((3, 0), np.float64), zeros((0, 2), np.float64))
    same(lambda xp, a, b: a @ b, zeros((0, 2), np.complex64), zeros((2, 3), np.complex64))
    same(lambda xp, a, b: xp.tensordot(a, b, axes=1), zeros((3, 0)), zeros((0, 2)))


@case("empty")
def linalg_empty():
    f64 = np.float64
    for name in ("inv", "det", "cholesky", "eigvalsh", "slogdet", "matrix_rank", "pinv"):
        for shape in ((0, 0), (0, 3, 3), (2, 0, 0)):
            same(lambda xp, m: getattr(xp.linalg, name)(m), zeros(shape, f64))
    same(lambda xp, m, b: xp.linalg.solve(m, b), zeros((0, 0), f64), zeros((0, 2), f64))
    same(lambda xp, m, b: xp.linalg.solve(m, b), zeros((0, 3, 3), f64), zeros((0, 3, 2), f64))
    same(lambda xp, m: xp.linalg.qr(m)[1].shape, zeros((0, 3), f64))
    for shape in ((0, 3), (3, 0), (0, 0)):
        same(lambda xp, m: xp.linalg.svd(m, compute_uv=False) if xp is np else
             xp.linalg.svdvals(m), zeros(shape, f64))
        same(lambda xp, m: xp.linalg.norm(m), zeros(shape, f64))
    same(lambda xp, m: xp.linalg.eigvals(m) if hasattr(xp.linalg, "eigvals") else
         np.linalg.eigvals(m), zeros((0, 0), f64))


@case("empty")
def fft_empty():
    c = np.complex64
    for fn in ("fft", "ifft"):
        same(lambda xp, x: getattr(xp.fft, fn)(x, axis=-1), zeros((0, 8), c), tol=1e-4)
        same(lambda xp, x: getattr(xp.fft, fn)(x, axis=0), zeros((0, 8), c))
        same(lambda xp, x: getattr(xp.fft, fn)(x), zeros((0,), c))
    same(lambda xp, x: xp.fft.rfft(x), zeros((0, 8)))
    same(lambda xp, x: xp.fft.irfft(x, n=8), zeros((0, 5), c))
    same(lambda xp, x: xp.fft.fftn(x), zeros((0, 4), c))


@case("empty")
def random_empty():
    g = clnp.random.default_rng(3)
    for draw in (lambda: g.normal(size=0), lambda: g.random((0, 5)),
                 lambda: g.integers(0, 9, (3, 0)), lambda: g.standard_exponential((0,)),
                 lambda: g.permutation(0), lambda: g.uniform(0, 1, (2, 0)),
                 lambda: g.standard_gamma(2.0, (0, 3))):
        x = N(draw())
        assert x.size == 0, x.shape
    x = A(zeros((0, 3)))
    g.shuffle(x)
    assert N(x).shape == (0, 3)


@case("empty")
def indexing_empty():
    h = np.arange(15, dtype=np.float32).reshape(5, 3)
    e = np.zeros(0, np.int64)
    same(lambda xp, x, i: x[i], h, e)
    same(lambda xp, x, i: x[i, 1:], h, e)
    same(lambda xp, x, i: xp.take(x, i, axis=1), h, e)
    same(lambda xp, x, i: x[i], zeros((0, 3)), e)
    same(lambda xp, x, m: x[m], zeros((0, 3)), zeros((0, 3), bool))
    same(lambda xp, x, m: x[m], h, zeros((5, 3), bool))
    same(lambda xp, x, i: xp.take_along_axis(x, i, axis=1), h, np.zeros((5, 0), np.int64))
    for host in (h.copy(), zeros((0, 3))):
        x = A(host)
        x[A(e)] = 1.0
        x[A(np.zeros(host.shape, bool))] = 2.0
        x[0:0] = 3.0
        check(x, host)
    x, hx = A(h.copy()), h.copy()
    clnp.put(x, A(e), A(np.zeros(0, np.float32)))
    clnp.add.at(x, A(e), 1.0)
    clnp.multiply.at(x, A(e), 2.0)
    clnp.put_along_axis(x, A(np.zeros((5, 0), np.int64)), 1.0, axis=1)
    check(x, hx)


@case("empty")
def ufunc_methods_empty():
    same(lambda xp, x: xp.add.reduce(x, axis=1), zeros((3, 0)))
    same(lambda xp, x: xp.add.reduce(x, axis=0), zeros((0, 4)))
    same(lambda xp, x: xp.maximum.reduce(x, axis=1), zeros((3, 0)))
    same(lambda xp, x: xp.multiply.accumulate(x, axis=0), zeros((0, 4)))
    same(lambda xp, x: xp.add.accumulate(x, axis=1), zeros((4, 0)))
    same(lambda xp, a, b: xp.multiply.outer(a, b), zeros((0,)), np.ones(3, np.float32))
    same(lambda xp, x, i: xp.add.reduceat(x, i), np.ones(4, np.float32),
         np.zeros(0, np.int64))


@case("empty")
def manipulation_empty():
    h = zeros((0, 3))
    same(lambda xp, a, b: xp.concat([a, b], axis=0) if xp is clnp else
         np.concatenate([a, b], axis=0), h, np.ones((2, 3), np.float32))
    same(lambda xp, a: xp.stack([a, a], axis=1), h)
    same(lambda xp, a: xp.flip(a, axis=1), h)
    same(lambda xp, a: xp.roll(a, 2, axis=1), h)
    same(lambda xp, a: xp.roll(a, 1), zeros((4, 0)))
    same(lambda xp, a: xp.reshape(a.T, (0, 1, 3)), h.T)
    same(lambda xp, a: xp.tile(a, (2, 3)), h)
    same(lambda xp, a: xp.repeat(a, 2, axis=0), h)
    same(lambda xp, a: xp.repeat(a, 0, axis=1), np.ones((2, 3), np.float32))
    same(lambda xp, a: xp.pad(a, ((1, 1), (0, 2))), h)
    same(lambda xp, a: xp.broadcast_to(a, (4, 0, 3)) + 0, h)
    same(lambda xp, a: xp.moveaxis(a, 0, 1) * 1, zeros((0, 2, 3)))
    same(lambda xp, a: xp.unique_counts(a) if xp is clnp else
         np.unique(a, return_counts=True), zeros((0,), np.int32))
    same(lambda xp, a: xp.histogram(a, bins=4, range=(0, 1))[0], zeros((0,)))
    same(lambda xp, a, b: xp.isin(a, b), zeros((0,), np.int32), np.arange(3, dtype=np.int32))
    same(lambda xp, a, b: xp.isin(a, b), np.arange(3, dtype=np.int32), zeros((0,), np.int32))


@case("empty")
def jit_empty():
    import clnp_grad as cg
    for shape in ((0, 5), (3, 0), (0,), (9000, 0), (0, 9000)):
        h = zeros(shape)
        ax = -1
        fused = cg.jit(lambda x: clnp.sum(x, axis=ax) - clnp.max(clnp.exp(x) + 1, axis=ax,
                                                                  initial=0.0))
        check(fused(A(h)), h.sum(ax) - np.max(np.exp(h) + 1, axis=ax, initial=0.0))
        col = cg.jit(lambda x: clnp.sum(x * 2, axis=0) + 1.0)
        check(col(A(h)), (h * 2).sum(0) + 1.0)
        ew = cg.jit(lambda x: clnp.tanh(x) * x + 1)
        check(ew(A(h)), np.tanh(h) * h + 1)
        rows = cg.jit(lambda x: x - clnp.mean(x, axis=-1, keepdims=True))
        with np.errstate(invalid="ignore"):
            want = h - h.mean(-1, keepdims=True) if h.shape[-1] else h
        check(rows(A(h)), want)
        for _ in range(2):                           # the second call records a replay
            check(fused(A(h)), h.sum(ax) - np.max(np.exp(h) + 1, axis=ax, initial=0.0))
    for sa, sb in (((0, 5), (5, 3)), ((3, 0), (0, 4)), ((3, 5), (5, 0))):
        a, b = zeros(sa), zeros(sb)
        bias = np.ones(sb[1], np.float32)
        ep = cg.jit(lambda a, b, c: clnp.maximum(a @ b + c, 0.0) * 2)
        for _ in range(3):
            check(ep(A(a), A(b), A(bias)), np.maximum(a @ b + bias, 0) * 2)
    for shape in ((0, 5), (3, 0)):
        h = zeros(shape)
        sm = cg.jit(lambda x: clnp.exp(x - clnp.max(x, axis=-1, keepdims=True, initial=0.0)) /
                    (clnp.sum(clnp.exp(x), axis=-1, keepdims=True) + 1.0))
        check(sm(A(h)), np.exp(h - np.max(h, axis=-1, keepdims=True, initial=0.0)) /
              (np.exp(h).sum(-1, keepdims=True) + 1.0))
    h = zeros((0, 4))
    loop = cg.jit(lambda x: cg.lax.fori_loop(0, 3, lambda i, c: c * 0.5 + 1.0, x))
    check(loop(A(h)), h)
    scan = cg.jit(lambda x: cg.lax.scan(lambda c, r: (c + r, c * r), clnp.zeros(4), x)[1])
    check(scan(A(h)), h)
    grad = cg.jit(cg.grad(lambda x: clnp.sum(clnp.tanh(x) ** 2)))
    check(grad(A(zeros((3, 0)))), zeros((3, 0)))
    vg = cg.jit(cg.value_and_grad(lambda w, x: clnp.sum((x @ w) ** 2)))
    v, g = vg(A(np.ones((4, 2), np.float32)), A(zeros((0, 4))))
    check(v, np.float32(0))
    check(g, zeros((4, 2)))


@case("empty")
def nn_empty():
    import clnp_grad as cg
    import clnp_nn.functional as F
    x, w = zeros((0, 3, 6, 6)), rnd(4, 3, 3, 3)
    check(F.conv2d(A(x), A(w), padding=1), zeros((0, 4, 6, 6)))
    gx = cg.grad(lambda x, w: clnp.sum(F.conv2d(x, w, padding=1) ** 2), argnums=(0, 1))(
        A(x), A(w))
    check(gx[0], x)
    check(gx[1], zeros(w.shape))
    check(F.max_pool2d(A(x), 2, 2), zeros((0, 3, 3, 3)))
    check(F.avg_pool2d(A(x), 2, 2), zeros((0, 3, 3, 3)))
    check(F.linear(A(zeros((0, 8))), A(rnd(5, 8)), A(rnd(5))), zeros((0, 5)))
    check(F.softmax(A(zeros((0, 7))), axis=-1), zeros((0, 7)))
    check(F.layer_norm(A(zeros((0, 6))), (6,)), zeros((0, 6)))
    check(F.embedding(A(np.zeros((0,), np.int64)), A(rnd(10, 4))), zeros((0, 4)))


@case("empty")
def custom_empty():
    addsub = clnp.ElementwiseKernel("T x, T y", "T s, T d", "s = x + y; d = x - y",
                                    "addsub_empty")
    s, d = addsub(A(zeros((0, 5))), A(zeros((5,))))
    check(s, zeros((0, 5)))
    check(d, zeros((0, 5)))
    import clnp_grad as cg
    sq1 = clnp.ElementwiseKernel("T x", "T z", "z = x * x + 1", "sq1_empty")
    check(cg.jit(lambda x: sq1(x) * 2)(A(zeros((0, 5)))), zeros((0, 5)))
    k = clnp.RawKernel("__kernel void fill7(__global float *x, int n) {"
                       " int i = get_global_id(0); if (i < n) x[i] = 7.0f; }", "fill7")
    x = A(zeros((0,)))
    k((0,), None, (x, 0))
    k((0,), (8,), (x, 0))
    check(x, zeros((0,)))


# ----------------------------------------------------------------------------- canaries
# Deliberately broken kernels (not in the full run): test_oclgrind.py::test_checks_are_on
# asserts that each pass reports them, so a check that is off cannot pass unnoticed. Their
# results are not checked: they are wrong by construction.
@case("canary")
def clean():
    k = clnp.ElementwiseKernel("float32 x", "float32 z", "z = x * 2", "canary_clean")
    k(A(rnd(9)))


@case("canary")
def out_of_bounds_read():
    k = clnp.ElementwiseKernel("raw float32 x", "float32 z", "z = x[i + n]", "canary_oob")
    x = A(rnd(9))
    k(x, clnp.empty((9,), dtype=clnp.float32))


@case("canary")
def write_write_race():
    k = clnp.ElementwiseKernel("float32 x", "raw float32 z", "z[0] = x + i", "canary_race")
    z = clnp.zeros((1,), dtype=clnp.float32)
    k(A(rnd(9)), z)


@case("canary")
def uninitialized_private():
    k = clnp.ElementwiseKernel("float32 x", "float32 z", "float acc; if (x > 1e30f) acc = 1;"
                               " z = x + acc", "canary_uninit")
    k(A(rnd(9)))


# The divisor audit's canary: a kernel that divides by its parameter ``n`` in a branch no
# work-item takes (so that no runtime traps), launched with n = 0 and n = 3;
# test_empty_shapes.py asserts that the audit reports the first launch and only it.
@case("audit_canary")
def divide_by_zero_parameter():
    k = clnp.RawKernel("__kernel void canary_divide(__global int *x, int n, int m) {"
                       " const int i = get_global_id(0);"
                       " if (i > 1 << 30) x[0] = 7 / n + 5 % m; }", "canary_divide")
    x = A(np.zeros(4, np.int32))
    k((4,), None, (x, 0, 3))
    k((4,), None, (x, 3, 3))


# ----------------------------------------------------------------------------- driver
_INT_PARAM = re.compile(r"\b(char|short|int|long|uint|ulong|ushort|uchar|size_t|idx_t)\b")


def _strip_comments(src: str) -> str:
    return re.sub(r"//[^\n]*", "", re.sub(r"/\*.*?\*/", "", src, flags=re.S))


def _params(src: str, name: str) -> list[tuple[str, bool]]:
    """``(name, is_integer)`` of each parameter of kernel ``name`` in ``src``."""
    m = re.search(r"__kernel\s+void\s+" + re.escape(name) + r"\s*\(([^)]*)\)", src)
    if m is None:
        return []
    out = []
    for p in m.group(1).split(","):
        words = re.findall(r"[A-Za-z_]\w*", p)
        if words:
            out.append((words[-1], "*" not in p and bool(_INT_PARAM.search(p))
                        and not re.search(r"\b(float|double|half)\b", p)))
    return out


class Audit:
    """The divisor audit, a check of generated code that runs on any OpenCL device: every
    launch over work-items whose kernel divides (``/``, ``%``, ``/=``, ``%=``) by an
    integer parameter passed as 0 is a finding. Integer division by zero is undefined in
    OpenCL C; x86 CPUs trap on it (SIGFPE), and Oclgrind silently answers 0, so neither a
    run on another CPU runtime nor Oclgrind would report it. Also records which kernel
    generators (``render*`` functions) the cases reached."""

    def __init__(self) -> None:
        import clnp._runtime.launch as B
        import clnp._runtime.device as R
        self.sources: dict[int, str] = {}
        self.findings: list[str] = []
        self.generators: set[str] = set()
        self.launches = 0
        audit = self
        build = R.Device.build

        def recording_build(dev, source, *a, **k):
            prg = build(dev, source, *a, **k)
            audit.sources[prg.int_ptr] = source
            return prg
        R.Device.build = recording_build
        call = B.Kernel.__call__

        def audited_call(k, queue, gsize, lsize, *args, **kw):
            if B.launches_work(gsize):
                audit.check(k, dict(enumerate(args)))
            return call(k, queue, gsize, lsize, *args, **kw)
        B.Kernel.__call__ = audited_call
        set_arg = B.Kernel.set_arg

        def recording_set_arg(k, pos, value):
            k.__dict__.setdefault("_audit_args", {})[pos] = value
            return set_arg(k, pos, value)
        B.Kernel.set_arg = recording_set_arg
        launch = B.Launch.__call__

        def audited_launch(lo, queue):
            if B.launches_work(lo.gsize):
                audit.check(lo.kernel, lo.kernel.__dict__.get("_audit_args", {}))
            return launch(lo, queue)
        B.Launch.__call__ = audited_launch
        self._wrap_generators()

    def _wrap_generators(self) -> None:
        """Replace every ``render*`` function of clnp's packages, in its own module and
        wherever it was imported, with one that records its name."""
        import importlib
        import pkgutil
        import clnp_grad
        import clnp_nn
        from clnp._runtime.deferred import resolve
        # every module first: one imported lazily later would bind the unwrapped function
        for pkg in (clnp, clnp_grad, clnp_nn):
            for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
                if not info.name.endswith("__main__"):
                    resolve(importlib.import_module(info.name))   # deferred ones run
        mods = [m for n, m in list(sys.modules.items())
                if n.split(".")[0] in ("clnp", "clnp_grad", "clnp_nn") and m is not None]
        wrapped = {}
        for m in mods:
            for attr, fn in list(vars(m).items()):
                if not (callable(fn) and attr.lstrip("_").startswith("render")):
                    continue
                if not getattr(fn, "__module__", "").startswith(("clnp", "clnp_grad",
                                                                 "clnp_nn")):
                    continue
                w = wrapped.get(id(fn))
                if w is None:
                    w = wrapped[id(fn)] = self._recorder(fn)
                setattr(m, attr, w)

    def _recorder(self, fn):
        name = f"{fn.__module__}.{fn.__name__}"
        audit = self

        def recorded(*a, **k):
            audit.generators.add(name)
            return fn(*a, **k)
        recorded.__wrapped__ = fn
        return recorded

    def check(self, kernel, args: dict) -> None:
        self.launches += 1
        zero = {pos for pos, v in args.items()
                if isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v == 0}
        if not zero:
            return
        src = self.sources.get(kernel.program.int_ptr)
        if src is None:
            return
        body = _strip_comments(src)
        for pos, (pname, is_int) in enumerate(_params(body, kernel.function_name)):
            if pos in zero and is_int and re.search(
                    r"(?<![/*])[/%]=?\s*\(?\s*" + re.escape(pname) + r"\b", body):
                self.findings.append(f"{kernel.function_name} divides by {pname} = 0")


def main(argv: list[str]) -> int:
    gpu = "--gpu" in argv
    audit = Audit() if "--audit" in argv else None
    names = [a for a in argv if not a.startswith("--")]
    if gpu:
        dev().is_cpu = False       # the generators' switch between CPU and GPU layouts
        dev().is_gpu = True
    # as pytest does: a signal a runtime would otherwise absorb (PoCL's SIGFPE handler,
    # installed when the device starts) is fatal once faulthandler is enabled after the
    # device's initialisation
    clnp.asnumpy(clnp.ones(2, device=dev()) + 1)
    # small jitted steps would all be whole-step kernels: the cases reach the generators
    # they are written for with it off (whole_step_kernels turns it on for itself)
    from clnp_grad._jit import whole_step
    whole_step.WHOLE_STEP = False
    import faulthandler
    faulthandler.enable()
    failed = 0
    for fam in names:
        for name, fn in CASES[fam].items():
            print(f"@@case {fam}.{name}", file=sys.stderr, flush=True)
            try:
                fn()
                clnp.synchronize()
            except Exception as e:  # report every case, not only the first failure
                failed += 1
                print(f"@@fail {fam}.{name}: {type(e).__name__}: {e}", file=sys.stderr,
                      flush=True)
    # coverage figures for docs/robustness.md: the programs built and their kernels' names
    import pyopencl as cl
    progs = list(dev()._programs.values())
    names = sorted({n for p in progs
                    for n in p.get_info(cl.program_info.KERNEL_NAMES).split(";") if n})
    print(f"@@stats {len(progs)} programs, {len(names)} kernel names: {' '.join(names)}",
          file=sys.stderr, flush=True)
    if audit is not None:
        for f in sorted(set(audit.findings)):
            print(f"@@fail divisor audit: {f}", file=sys.stderr, flush=True)
        failed += bool(audit.findings)
        print(f"@@launches {audit.launches}", file=sys.stderr, flush=True)
        print(f"@@generators {' '.join(sorted(audit.generators))}", file=sys.stderr,
              flush=True)
    print("@@done", file=sys.stderr, flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
