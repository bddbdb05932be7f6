"""Empty and zero-size shapes on every kernel generator, on every device (issue #28).

The ``empty`` family of ``_kernel_cases.py`` runs every operation family (elementwise,
reductions with and without ``initial=``, scans, sorting and search, GEMM with zero rows,
columns and inner length, linalg on empty matrices and batches, FFT, random, indexing and
scatter, ufunc methods, manipulation, jit with its fused reductions, products, loops and
replays, clnp_nn's layers, custom kernels) on zero rows, zero columns, zero reduced
lengths and empty index sets, against NumPy. It runs in a subprocess per device and layout
(the device's own, and the GPU layouts forced on a CPU device), because:

- ``faulthandler`` is enabled there after the device's initialisation, as pytest does: a
  SIGFPE that PoCL's handler would absorb (PoCL 3.0, the runtime ``pip install
  clnp[pocl]`` brings, divides by zero in its enqueue of a zero global size) kills the
  process instead, and this test reports it rather than dying with it;
- the divisor audit (``_kernel_cases.Audit``) checks every launch over work-items for a
  kernel that divides by an integer parameter passed as 0. That undefined behaviour traps
  on x86 CPUs and is answered silently with 0 by Oclgrind, so the audit is the check that
  holds the generated code to it on any OpenCL device, CI's included.

The Oclgrind runs (test_oclgrind.py) run the same family, with the audit, on the simulator.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import DEVICES

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CASES = HERE / "_kernel_cases.py"


def run_family(device, families: list[str], gpu: bool, timeout: float = 900
               ) -> subprocess.CompletedProcess:
    env = dict(os.environ, CLNP_DEVICE=device.key,
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    env.pop("CLNP_TEST_DEVICES", None)
    args = [sys.executable, str(CASES), "--audit"] + (["--gpu"] if gpu else []) + families
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=timeout,
                          cwd=str(HERE))


def report(res: subprocess.CompletedProcess, prefix: str) -> list[str]:
    return [ln[len(prefix):].strip() for ln in res.stderr.splitlines() if ln.startswith(prefix)]


@pytest.mark.parametrize("gpu", [False, True], ids=["own-layouts", "gpu-layouts"])
def test_empty_shapes(device, gpu):
    """Every case of the family matches NumPy, nothing traps with faulthandler enabled, and
    no launch divides by a zero parameter."""
    if gpu and not device.is_cpu:
        pytest.skip("a GPU runs its own layouts in the first case")
    res = run_family(device, ["empty"], gpu)
    fails = report(res, "@@fail ")
    assert "Fatal Python error" not in res.stderr, res.stderr[-4000:]
    assert "@@done" in res.stderr and res.returncode == 0 and not fails, \
        "\n".join(fails) or res.stderr[-4000:]
    # the family launches kernels (the audit saw them) and reaches the generators whose
    # kernels run on zero extents: elementwise fills, the fused reductions of empty rows,
    # scans and linalg on empty batches
    assert int(report(res, "@@launches ")[0]) > 100
    reached = set(report(res, "@@generators ")[0].split())
    assert {"clnp._kernels.elementwise.render_elementwise",
            "clnp_grad._jit.codegen.render_fused_reduce"} <= reached, reached


def test_divisor_audit_reports_a_zero_divisor():
    """The audit reports a kernel that divides by an integer parameter passed as 0 (in a
    branch no item takes, so that no runtime traps), naming the kernel and the parameter;
    one passed as 3 is not reported."""
    device = DEVICES[0]
    res = run_family(device, ["audit_canary"], False)
    fails = report(res, "@@fail ")
    assert "@@done" in res.stderr, res.stderr[-4000:]
    assert fails == ["divisor audit: canary_divide divides by n = 0"], fails
