"""GPU probes for jit tuning (not committed): per-step device time of the jitted MLP step,
host time per call, and ew_chain kernel variants."""
import sys, time, os, statistics
sys.path.insert(0, "bench")
import numpy as np
import pyopencl as cl
import clnp
import clnp_grad
from bench_grad import make_problem, mlp_loss

dev = clnp.default_device()
print("device", dev)

def step(p, x, y):
    loss, g = clnp_grad.value_and_grad(lambda p: mlp_loss(clnp, p, x, y))(p)
    return loss, {k: p[k] - 0.01 * g[k] for k in p}

ph, xh, yh = make_problem(256)
p = {k: clnp.asarray(v) for k, v in ph.items()}
x, y = clnp.asarray(xh), clnp.asarray(yh)
js = clnp_grad.jit(step)
for _ in range(3): js(p, x, y)
clnp.synchronize()
exe = js._cache[next(iter(js._cache))][2]
# host time per call: enqueue only
ts = []
for _ in range(50):
    clnp.synchronize(); t = time.perf_counter(); js(p, x, y); ts.append(time.perf_counter() - t)
clnp.synchronize()
print(f"host enqueue per call: median {1e6*statistics.median(ts):.0f} us")
ts = []
for _ in range(50):
    t = time.perf_counter(); js(p, x, y); clnp.synchronize(); ts.append(time.perf_counter() - t)
print(f"call+sync: median {1e6*statistics.median(ts):.0f} us")
# per-step device time: run steps one by one with a finish after each
from clnp_grad._jit import executable as E
flat = None
import clnp_grad._tree as T
flat, _ = T.tree_flatten(((p, x, y), {}))
env = [None] * exe.n_slots
for s, a in zip(exe.in_slots, flat): env[s] = a
for s, c in exe.consts: env[s] = c
times = [[] for _ in exe.steps]
for rep in range(20):
    env2 = list(env)
    for i, st in enumerate(exe.steps):
        dev.queue.finish(); t = time.perf_counter(); st.run(env2); dev.queue.finish()
        times[i].append(time.perf_counter() - t)
tot = 0
for st, tt in zip(exe.steps, times):
    m = 1e6 * statistics.median(tt); tot += m
    srcs = st.sources()
    name = type(st).__name__ + " " + " | ".join(s.split("\n")[0][:90] for s in srcs)
    print(f"  {m:8.1f} us  {name}")
print(f"  sum {tot:.0f} us")

# ew chain variants
n = 1 << 24
xh = np.random.default_rng(0).uniform(-3, 3, n).astype(np.float32)
xc = clnp.asarray(xh)
f = clnp_grad.jit(lambda x: clnp.exp(clnp.sin(x) * 2 + clnp.cos(x)) / (1 + x * x) - 0.5 * clnp.tanh(x))
f(xc)
src = f.lower(xc).kernel_sources()[0]
st = f._cache[next(iter(f._cache))][2].steps[0]
print(src[:3000]); print("gsize", st.plan.gsize, "lsize", st.plan.lsize)
def tm(fn, reps=30):
    fn(); dev.queue.finish(); ts=[]
    for _ in range(reps):
        t=time.perf_counter(); fn(); dev.queue.finish(); ts.append(time.perf_counter()-t)
    return 1e6*statistics.median(ts)
print(f"jit chain: {tm(lambda: f(xc)):.1f} us")
V = """
__kernel void c1(__global const float *x, __global float *y, int n) {
  int i = get_global_id(0); if (i < n) { float v = x[i];
  y[i] = exp(sin(v) * 2.0f + cos(v)) / (1.0f + v * v) - 0.5f * tanh(v); } }
__kernel void c1g(__global const float *x, __global float *y, int n) {
  int i = get_global_id(0); if (i < n) { float v = x[i];
  y[i] = exp(sin(v) * 2.0f + cos(v)) / (1.0f + v * v) - 0.5f * (fabs(v) > 9.1f ? copysign(1.0f, v) : tanh(v)); } }
__kernel void c4(__global const float4 *x, __global float4 *y) {
  int i = get_global_id(0); float4 v = x[i];
  y[i] = exp(sin(v) * 2.0f + cos(v)) / (1.0f + v * v) - 0.5f * tanh(v); }
__kernel void c8(__global const float8 *x, __global float8 *y) {
  int i = get_global_id(0); float8 v = x[i];
  y[i] = exp(sin(v) * 2.0f + cos(v)) / (1.0f + v * v) - 0.5f * tanh(v); }
__kernel void c2s(__global const float *x, __global float *y, int n) {
  int i = get_global_id(0); int s = get_global_size(0);
  float v = x[i], w = x[i + s];
  y[i] = exp(sin(v) * 2.0f + cos(v)) / (1.0f + v * v) - 0.5f * tanh(v);
  y[i + s] = exp(sin(w) * 2.0f + cos(w)) / (1.0f + w * w) - 0.5f * tanh(w); }
"""
by = cl.Buffer(dev.context, cl.mem_flags.READ_WRITE, 4 * n)
for opts in ([], ["-cl-fp32-correctly-rounded-divide-sqrt"]):
    prg = cl.Program(dev.context, V).build(options=opts)
    for name, g, l, extra in (("c1", (n,), (256,), [np.int32(n)]), ("c1g", (n,), (256,), [np.int32(n)]),
                              ("c1-l64", (n,), (64,), [np.int32(n)]),
                              ("c4", (n // 4,), (256,), []), ("c8", (n // 8,), (256,), []),
                              ("c8-null", (n // 8,), None, []), ("c2s", (n // 2,), (256,), [np.int32(n)])):
        k = getattr(prg, name.split("-")[0])
        run = lambda: k(dev.queue, g, l, xc._buf, by, *extra)
        print(f"  {name:8s} {' '.join(opts) or 'default':40s} {tm(run):8.1f} us")
