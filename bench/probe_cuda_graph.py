"""Can clnp's OpenCL kernels run as CUDA graphs? (issue #26: host-bound steps on NVIDIA)

    python bench/probe_cuda_graph.py        # an NVIDIA device with the cuda extra

On the H200 the digits CNN and character transformer steps are bound by the host: each
OpenCL launch costs ~8-9 us of driver time, and NVIDIA's OpenCL has no command buffers.
This probe checks the other route, with one kernel built by clnp's OpenCL context:

1. NVIDIA's OpenCL program binary is PTX: its version, target, entry parameters (the
   OpenCL arguments in order) and any environment registers it reads;
2. ``cuModuleLoadData`` of that PTX and ``cuLaunchKernel`` of it on arrays in memory both
   APIs see (``Device.set_cuda_memory``): the result read back through OpenCL;
3. host time per launch: PyOpenCL's enqueue, clnp's eventless enqueue, ``cuLaunchKernel``,
   and one ``cuGraphLaunch`` of a graph of 100 captured launches; and the pipelined wall
   time per kernel of 100 launches through OpenCL and as the graph.
"""
import ctypes
import re
import time

import numpy as np

import clnp
from clnp._runtime import cuda_memory as cm
from clnp._runtime.launch import Launch
from clnp._runtime.opencl import cl

dev = clnp.default_device()
print(dev, dev.platform_name)
if not cm.supported(dev):
    raise SystemExit(f"{dev}: this probe needs an NVIDIA device that shares memory with CUDA "
                     f"({cm.why_unsupported(dev)})")
src = r"""
__kernel void axpy(__global float *y, __global const float *x, const float a, const int n)
{
    int i = get_global_id(0);
    if (i < n) y[i] = a * x[i] + y[i];
}
"""
prg = cl.Program(dev.context, src).build()
bins = prg.get_info(cl.program_info.BINARIES)
ptx = bytes(bins[0])
txt = ptx.decode(errors="replace")
print("binary bytes", len(ptx), "is PTX:", ".entry" in txt)
m = re.search(r"\.entry\s+axpy\s*\((.*?)\)", txt, re.S)
print("entry params:", m.group(1).strip() if m else None)
for line in txt.splitlines():
    if any(w in line for w in ("%envreg", ".version", ".target")) or \
            "global_offset" in line.lower():
        print("   ", line.strip())

cu = cm._driver()
ordinal = cm.cuda_ordinal(dev)
ctx = cm._Context(ordinal)
with ctx:
    mod = cm._check(cu, cu.cuModuleLoadData(ptx), "cuModuleLoadData")
    fn = cm._check(cu, cu.cuModuleGetFunction(mod, b"axpy"), "cuModuleGetFunction")
print("loaded PTX into CUDA")

# arrays in memory CUDA sees
dev.set_cuda_memory(True)
n = 1 << 20
xh, yh = np.arange(n, dtype=np.float32), np.ones(n, np.float32)
x, y = clnp.asarray(xh), clnp.asarray(yh)
dev.synchronize()
xa, ya = cm.address_of(dev, x._buf), cm.address_of(dev, y._buf)
print("cuda addresses", hex(xa or 0), hex(ya or 0))


def params(*vals):
    """cuLaunchKernel's kernelParams: an array of pointers to each argument."""
    holders = [v for v in vals]
    arr = (ctypes.c_void_p * len(holders))(*[ctypes.addressof(h) for h in holders])
    return arr, holders


pa, keep = params(ctypes.c_uint64(ya), ctypes.c_uint64(xa), ctypes.c_float(2.0),
                  ctypes.c_int32(n))
with ctx:
    stream = cm._check(cu, cu.cuStreamCreate(0), "cuStreamCreate")
    cm._check(cu, cu.cuLaunchKernel(fn, n // 256, 1, 1, 256, 1, 1, 0, stream,
                                    ctypes.addressof(pa), 0), "cuLaunchKernel")
    cm._check(cu, cu.cuStreamSynchronize(stream), "sync")
got = y.to_numpy()
print("CUDA launch of the OpenCL kernel correct:", np.allclose(got, 2 * xh + 1))

# host cost per launch: OpenCL (PyOpenCL invoker and clnp's no-event path) vs cuLaunchKernel
k = prg.axpy
k.set_args(y._buf, x._buf, np.float32(0.0), np.int32(n))
q = dev.queue


def tm(f, reps=3000):
    """Best of 5 rounds of ``reps`` calls: host microseconds per call."""
    f()
    best = 9e9
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(reps):
            f()
        best = min(best, (time.perf_counter() - t) / reps * 1e6)
    return best


# a = 0 from here on: repeated launches leave y as it is
lk = clnp._runtime.launch.Kernel(prg, "axpy")
lk.set_args(y._buf, x._buf, np.float32(0.0), np.int32(n))
L = Launch(lk, (n,), (256,))
print("OpenCL enqueue (PyOpenCL, event) us: %.2f"
      % tm(lambda: cl.enqueue_nd_range_kernel(q, k, (n,), (256,))))
q.finish()
print("OpenCL enqueue (clnp no-event) us: %.2f" % tm(lambda: L(q)))
q.finish()
pz, keep2 = params(ctypes.c_uint64(ya), ctypes.c_uint64(xa), ctypes.c_float(0.0),
                   ctypes.c_int32(n))
addr = ctypes.addressof(pz)
with ctx:
    print("cuLaunchKernel (cuda-bindings) us: %.2f" % tm(
        lambda: cu.cuLaunchKernel(fn, n // 256, 1, 1, 256, 1, 1, 0, stream, addr, 0)))
    cu.cuStreamSynchronize(stream)
    # a graph of 100 launches: host cost per graph launch
    N = 100
    mode = cu.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_GLOBAL
    cm._check(cu, cu.cuStreamBeginCapture(stream, mode), "begin")
    for _ in range(N):
        cu.cuLaunchKernel(fn, n // 256, 1, 1, 256, 1, 1, 0, stream, addr, 0)
    graph = cm._check(cu, cu.cuStreamEndCapture(stream), "end")
    gexec = cm._check(cu, cu.cuGraphInstantiate(graph, 0), "instantiate")
    cm._check(cu, cu.cuGraphLaunch(gexec, stream), "graph launch")
    cu.cuStreamSynchronize(stream)
    t = tm(lambda: cu.cuGraphLaunch(gexec, stream), reps=200)
    cu.cuStreamSynchronize(stream)
    print("graph of %d launches: %.2f us host per graph launch (%.3f us per kernel)"
          % (N, t, t / N))
    # pipelined wall time per kernel (1 M elements each): 50 graph launches, then a sync
    t0 = time.perf_counter()
    for _ in range(50):
        cu.cuGraphLaunch(gexec, stream)
    cu.cuStreamSynchronize(stream)
    print("graph wall per kernel us: %.2f" % ((time.perf_counter() - t0) / 50 / N * 1e6))
# the same 100 launches through OpenCL, pipelined wall
q.finish()
t0 = time.perf_counter()
for _ in range(50):
    for _ in range(N):
        L(q)
q.finish()
print("OpenCL wall per kernel us: %.2f" % ((time.perf_counter() - t0) / 50 / N * 1e6))
