import numpy as np, clnp, time
rng = np.random.default_rng(0)
x = clnp.asarray(rng.standard_normal(2**26).astype(np.float32))
m = clnp.asarray(rng.standard_normal((4096, 4096)).astype(np.float32))
def bench(name, f, nbytes):
    f(); clnp.synchronize(); t = time.perf_counter()
    for _ in range(20): f()
    clnp.synchronize(); dt = (time.perf_counter() - t) / 20
    print(f"{name}: {dt*1e3:.3f} ms, {nbytes / dt / 1e9:.0f} GB/s")
bench("argmax flat", lambda: clnp.argmax(x), x.nbytes)
bench("argmax rows", lambda: clnp.argmax(m, axis=1), m.nbytes)
bench("argmax cols", lambda: clnp.argmax(m, axis=0), m.nbytes)
bench("sum rows", lambda: clnp.sum(m, axis=1), m.nbytes)
bench("cumsum flat", lambda: clnp.cumulative_sum(x), 2 * x.nbytes)
bench("cumsum rows", lambda: clnp.cumulative_sum(m, axis=1), 2 * m.nbytes)
bench("cumsum cols", lambda: clnp.cumulative_sum(m, axis=0), 2 * m.nbytes)
