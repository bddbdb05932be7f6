"""Private memory over a PoCL worker's stack is a ValueError, not a segmentation fault.

PoCL keeps one copy of a kernel's private arrays per work-item of a group on the worker
thread's stack (docs/robustness.md, "Kernels over a device's limits"). The launches run in a
child process with a 2 MiB stack (``ulimit -s 2048``): a regression kills the child, not the
test run, and the limit must follow the stack the process really has.
"""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import numpy as np
import pytest

import clnp
from clnp._routines import custom_kernels as ck
from clnp._runtime import private_memory as pm

ROOT = Path(__file__).resolve().parents[2]
STACK = 2 * 1024 * 1024
ITEMS = 512                     # floats of private array per work-item: 2 KiB

# The private array is indexed with run-time values, so no optimiser can keep it in
# registers: PoCL keeps a 2 KiB context slot per work-item of the group.
SOURCE = f"""
__kernel void deep(__global float *x, int m) {{
    float buf[{ITEMS}];
    int i = get_global_id(0);
    for (int j = 0; j < {ITEMS}; j++) buf[j] = x[i] + j;
    float s = 0;
    for (int j = 0; j < {ITEMS}; j += 1 + (m & 3)) s += buf[(j * 7 + i) % {ITEMS}];
    x[i] = s;
}}"""


def _expected(x: np.ndarray) -> np.ndarray:
    i = np.arange(x.size)
    j = np.arange(ITEMS)
    buf = x[:, None] + j[None, :]
    return buf[i[:, None], (j[None, :] * 7 + i[:, None]) % ITEMS].sum(1).astype(np.float32)


CHILD = """
import json, sys
import numpy as np
import clnp
device = clnp.devices()[int(sys.argv[1])]
source, most = sys.argv[2], int(sys.argv[3])
k = clnp.RawKernel(source, "deep")
out = {}
x = clnp.asarray(np.arange(most + 1, dtype=np.float32), device=device)
try:
    k((1,), (most + 1,), (x, 0))
    out["over"] = "ran"
except ValueError as e:
    out["over"] = str(e)
out["untouched"] = np.asarray(x).tolist() == list(range(most + 1))
x = clnp.asarray(np.arange(most, dtype=np.float32), device=device)
k((1,), (most,), (x, 0))                        # just inside the limit
out["inside"] = np.asarray(x).tolist()
x = clnp.asarray(np.arange(8192, dtype=np.float32) % 97, device=device)
k((8192,), None, (x, 0))                        # PoCL alone would pick 4096 items
out["none"] = np.asarray(x).tolist()
print(json.dumps(out))
"""


def _pocl(device):
    if not pm.is_pocl_cpu(device):
        pytest.skip(f"{device.key}: not a PoCL CPU device (its driver reports its limits)")


def test_private_arrays_over_the_worker_stack_are_refused(device):
    """Refused at one work-item over the limit (message names the kernel, the block, the
    bytes and the fix), argument untouched; the limit itself runs and gives NumPy's result,
    and ``block=None`` gets a block that fits."""
    _pocl(device)
    per_item = pm.private_bytes(device, SOURCE, "deep", ())
    if per_item is None:
        pytest.skip("no clang of PoCL's LLVM: private arrays cannot be measured here")
    assert per_item == ITEMS * 4
    most = (STACK - pm.STACK_RESERVE) // per_item
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT),
                                                       os.environ.get("PYTHONPATH", "")]))

    def small_stack():
        resource.setrlimit(resource.RLIMIT_STACK, (STACK, resource.getrlimit(
            resource.RLIMIT_STACK)[1]))

    r = subprocess.run([sys.executable, "-c", textwrap.dedent(CHILD), str(device.index),
                        SOURCE, str(most)], env=env, capture_output=True, text=True,
                       timeout=300, preexec_fn=small_stack)
    assert r.returncode == 0, f"child died with {r.returncode}: {r.stderr[-2000:]}"
    out = json.loads(r.stdout.strip().splitlines()[-1])
    msg = out["over"]
    for part in (f"RawKernel 'deep': block ({most + 1},) ({most + 1} work-items)",
                 f"{per_item} bytes of private arrays per work-item",
                 f"which has {STACK} bytes", f"at most {most} work-items",
                 "__local or __global memory", "crash"):
        assert part in msg, (part, msg)
    assert out["untouched"]
    np.testing.assert_array_equal(out["inside"], _expected(np.arange(most, dtype=np.float32)))
    np.testing.assert_array_equal(
        out["none"], _expected(np.arange(8192, dtype=np.float32) % 97))


def test_a_single_work_item_over_the_stack_is_refused(device, monkeypatch):
    """Private arrays larger than the whole stack: no block can run them."""
    _pocl(device)
    monkeypatch.setattr(pm, "worker_stack_bytes", lambda: pm.STACK_RESERVE + 1000)
    if pm.private_bytes(device, SOURCE, "deep", ()) is None:
        pytest.skip("no clang of PoCL's LLVM: private arrays cannot be measured here")
    x = clnp.zeros(4, dtype=clnp.float32, device=device)
    with pytest.raises(ValueError, match=r"'deep': its private arrays take 2048 bytes per "
                                         r"work-item.*even one work-item"):
        clnp.RawKernel(SOURCE, "deep")((4,), None, (x, 0))


def test_other_devices_are_left_to_their_driver():
    """Only PoCL CPU devices (asked of the platform) get the stack check: on others the block
    is passed through without compiling anything."""
    gpu = types.SimpleNamespace(is_cpu=False, platform_name="NVIDIA CUDA")
    other_cpu = types.SimpleNamespace(is_cpu=True, platform_name="Intel(R) OpenCL")
    for dev in (gpu, other_cpu):
        assert not pm.is_pocl_cpu(dev)
        assert ck._stack_safe_block(dev, "not even C", "k", (), (4,), (1024,)) == (1024,)
        assert ck._stack_safe_block(dev, "not even C", "k", (), (4,), None) is None


def test_alloca_sizes_follow_the_x86_64_layout():
    """The IR reader: arrays, vectors (padded to a power of two), structs (padded to their
    alignment), packed structs, named types, callees of the kernel (counted: PoCL inlines
    them) and functions it does not call (not counted)."""
    ir = textwrap.dedent("""\
        %struct.S = type { float, i8 }
        %struct.P = type <{ i8, double }>
        define dso_local spir_kernel void @k(ptr %0) #0 {
          %2 = alloca [10 x float], align 16
          %3 = alloca <3 x float>, align 16
          %4 = alloca [4 x %struct.S], align 4
          %5 = alloca %struct.P, align 1
          call void @helper(ptr %2)
          ret void
        }
        define internal void @helper(ptr %0) {
          %2 = alloca [3 x double], align 8
          ret void
        }
        define internal void @unused(ptr %0) {
          %2 = alloca [1000 x i32], align 4
          ret void
        }
        """)
    assert pm._ir_private_bytes(ir, "k") == 48 + 16 + 32 + 9 + 24
    assert pm._ir_private_bytes(ir, "missing") == 0


def test_fitting_block_divides_the_grid():
    assert ck._fitting_block((8192,), 992, (4096, 4096, 4096)) == (512,)
    assert ck._fitting_block((1000,), 992, (4096,)) == (500,)
    assert ck._fitting_block((97,), 50, (4096,)) == (1,)
    assert ck._fitting_block((64, 64), 992, (4096, 4096)) == (64, 8)   # 64 * 15 -> 8


def test_worker_stack_follows_ulimit():
    """The stack PoCL's workers get is the process's default thread stack (ulimit -s)."""
    code = "from clnp._runtime.private_memory import worker_stack_bytes as w; print(w())"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT),
                                                       os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run(["bash", "-c", f'ulimit -s 3072 && "{sys.executable}" -c "{code}"'],
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert int(r.stdout.split()[-1]) == 3072 * 1024
