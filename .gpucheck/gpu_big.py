import numpy as np, clnp, time
rng = np.random.default_rng(0)
dev = clnp.default_device(); print(dev)
for shape, axis in [((3_000_001,), None), ((5, 200_000), 1), ((200_000, 5), 0), ((64, 70_000), 1), ((3000, 3000), 0), ((3000, 3000), 1)]:
    a = rng.standard_normal(shape).astype(np.float32)
    a.reshape(-1)[-11] = 99; a.reshape(-1)[-5] = 99
    x = clnp.asarray(a)
    for f in ("argmax", "argmin"):
        assert np.array_equal(getattr(clnp, f)(x, axis=axis).to_numpy(), getattr(np, f)(a, axis=axis)), (f, shape)
    a[a > 3.5] = np.nan; x = clnp.asarray(a)
    for f in ("argmax", "argmin"):
        assert np.array_equal(getattr(clnp, f)(x, axis=axis).to_numpy(), getattr(np, f)(a, axis=axis)), (f, shape, 'nan')
print("argmax ok")
for shape, axis in [((3_000_001,), 0), ((5, 200_000), 1), ((200_000, 5), 0), ((64, 70_000), 1), ((3000, 3000), 0), ((3000, 3000), 1), ((7, 9), 1), ((2000, 3), 1)]:
    a = rng.integers(-3, 4, shape).astype(np.float64)
    x = clnp.asarray(a)
    for ii in (False, True):
        assert np.array_equal(clnp.cumulative_sum(x, axis=axis, include_initial=ii).to_numpy(), np.cumulative_sum(a, axis=axis, include_initial=ii)), shape
    b = rng.choice(np.array([1.0, -1.0]), shape)
    assert np.array_equal(clnp.cumulative_prod(clnp.asarray(b), axis=axis).to_numpy(), np.cumulative_prod(b, axis=axis))
print("scan ok")
m = rng.random((1000, 3001)) < 0.3
for u, v in zip(clnp.nonzero(clnp.asarray(m)), np.nonzero(m)): assert np.array_equal(u.to_numpy(), v)
s = np.sort(rng.standard_normal(1_000_000)); q = rng.standard_normal(100_000)
assert np.array_equal(clnp.searchsorted(clnp.asarray(s), clnp.asarray(q)).to_numpy(), np.searchsorted(s, q))
print("nonzero/searchsorted ok")
x = clnp.asarray(rng.standard_normal(2**26).astype(np.float32))
for name, f in [("argmax", lambda: clnp.argmax(x)), ("cumsum", lambda: clnp.cumulative_sum(x)), ("sum", lambda: clnp.sum(x))]:
    f(); clnp.synchronize(); t = time.perf_counter()
    for _ in range(10): f()
    clnp.synchronize(); dt = (time.perf_counter() - t) / 10
    print(f"{name} 2^26 f32: {dt*1e3:.3f} ms, {x.nbytes / dt / 1e9:.0f} GB/s read")
