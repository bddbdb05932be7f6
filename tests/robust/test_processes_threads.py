"""Threads, fork, spawn and refused allocations (docs/robustness.md).

The fork tests run in a subprocess with a timeout: a regression there is a hang, which must
fail the test rather than stall the suite.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pyopencl as cl
import pytest
from conftest import run_in_threads

import clnp

ROOT = Path(__file__).resolve().parents[2]


def _script(body: str, timeout: float = 60) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT),
                                                       os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(body)], env=env,
                          capture_output=True, text=True, timeout=timeout)


# ----------------------------------------------------------------------------- threads
def _worker(device, seed: int, iterations: int = 25) -> None:
    rng = np.random.default_rng(seed)
    for i in range(iterations):
        n = int(rng.integers(1, 300))
        h = rng.standard_normal((n, 3)).astype(np.float32)
        x = clnp.asarray(h, device=device)
        got = clnp.sum(x * 2 + 1, axis=0).to_numpy()
        np.testing.assert_allclose(got, (h * 2 + 1).sum(axis=0), rtol=1e-4, atol=1e-4)
        s = clnp.sort(x[:, i % 3]).to_numpy()
        np.testing.assert_array_equal(s, np.sort(h[:, i % 3]))
        m = clnp.asarray(h[:3].T.copy(), device=device)
        np.testing.assert_allclose((m @ x[:3]).to_numpy(), h[:3].T @ h[:3], rtol=1e-4,
                                   atol=1e-4)


def test_eager_ops_from_four_threads(device):
    """Four threads issue eager ops of varying shapes on one device at once (shared queue,
    pool and kernel caches): every result is NumPy's."""
    run_in_threads(lambda s: _worker(device, s))


def test_jitted_calls_from_threads(device):
    """One jitted function (its trace and compiled plan cached once) called from four
    threads with different shapes."""
    import clnp_grad as cg

    f = cg.jit(lambda x, y: clnp.tanh(x) * y + clnp.sum(x, axis=0))

    def run(seed):
        rng = np.random.default_rng(seed)
        for i in range(15):
            n = 2 + (seed + i) % 4
            a = rng.standard_normal((n, 3)).astype(np.float32)
            b = rng.standard_normal((3,)).astype(np.float32)
            got = f(clnp.asarray(a, device=device), clnp.asarray(b, device=device))
            np.testing.assert_allclose(got.to_numpy(), np.tanh(a) * b + a.sum(axis=0),
                                       rtol=1e-5, atol=1e-5)
    run_in_threads(run)


# ----------------------------------------------------------------------------- processes
FORK_PARENT = """
    import os, sys, time
    import numpy as np
    import clnp
    x = clnp.asarray(np.arange(10.0, dtype=np.float32))
    assert float(clnp.sum(x)) == 45.0
    pid = os.fork()
    if pid == 0:
        {child}
    deadline = time.monotonic() + 60
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            print("CHILD HUNG")
            sys.exit(1)
        time.sleep(0.05)
    print("child exit", os.waitstatus_to_exitcode(status))
    print("parent", float(clnp.sum(x * 2)))
"""


# Seen on an H200 (tenth session): a child forked after the parent's first NVIDIA OpenCL call
# exits with SIGSEGV, and the parent's next read fails with CL_OUT_OF_RESOURCES. The child
# shares the driver's open device files, so what its interpreter releases at exit is the
# parent's. Not fixed; docs/robustness.md, "Not done yet".
_FORK_BREAKS_NVIDIA = pytest.mark.xfail(
    "nvidia" in clnp.default_device().platform_name.lower(), strict=False,
    reason="NVIDIA: a forked child's exit releases the parent's OpenCL objects")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
@_FORK_BREAKS_NVIDIA
def test_forked_child_without_opencl():
    """A child that does not use clnp runs and exits normally (its interpreter exit releases
    nothing OpenCL owns); the parent keeps working."""
    child = ("print('child', int(np.arange(4).sum()), flush=True); sys.exit(0)")
    res = _script(FORK_PARENT.format(child=child))
    assert res.returncode == 0, res.stdout + res.stderr
    assert "child 6" in res.stdout and "child exit 0" in res.stdout
    assert "parent 90.0" in res.stdout


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
@_FORK_BREAKS_NVIDIA
def test_forked_child_using_clnp_gets_an_error():
    """The child's first clnp operation raises RuntimeError naming fork and the remedy,
    instead of waiting forever in the driver (PoCL hangs there)."""
    child = textwrap.indent(textwrap.dedent("""
        try:
            (x + 1).to_numpy()
        except RuntimeError as e:
            print("child error:", e, flush=True)
            try:
                clnp.ones(3)
            except RuntimeError:
                os._exit(3)
        os._exit(0)
    """), " " * 8).strip()
    res = _script(FORK_PARENT.format(child=child))
    assert res.returncode == 0 and "CHILD HUNG" not in res.stdout, res.stdout + res.stderr
    assert "child error:" in res.stdout and "forked" in res.stdout and "spawn" in res.stdout
    assert "child exit 3" in res.stdout and "parent 90.0" in res.stdout


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_fork_before_first_operation_is_fine():
    """Forking after ``import clnp`` but before any OpenCL call leaves the child free to use
    OpenCL itself; forking after the devices were listed (PoCL's threads exist from then on)
    gives the child the error, not a hang."""
    body = """
        import os, numpy as np, clnp
        {before}
        pid = os.fork()
        if pid == 0:
            try:
                ok = float(clnp.sum(clnp.ones(5))) == 5.0
            except RuntimeError:
                os._exit(3)
            os._exit(0 if ok else 1)
        _, status = os.waitpid(pid, 0)
        print("child exit", os.waitstatus_to_exitcode(status))
    """
    res = _script(body.format(before="pass"), timeout=60)
    assert "child exit 0" in res.stdout, res.stdout + res.stderr
    res = _script(body.format(before="clnp.devices()"), timeout=60)
    assert "child exit 3" in res.stdout, res.stdout + res.stderr


def _spawned_sum(n: int) -> float:
    import clnp as c
    return float(c.sum(c.arange(n, dtype=c.float32)))


def test_multiprocessing_spawn():
    """Workers started with the 'spawn' method use clnp (the parent has a context)."""
    float(clnp.sum(clnp.ones(3)))
    ctx = mp.get_context("spawn")
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), old or ""])
    try:
        with ctx.Pool(2) as pool:
            assert pool.map(_spawned_sum, [4, 10]) == [6.0, 45.0]
    finally:
        if old is None:
            os.environ.pop("PYTHONPATH")
        else:
            os.environ["PYTHONPATH"] = old


# ----------------------------------------------------------------------------- memory
class _RefusingPool:
    """The device's pool, refusing the next ``refusals`` allocations as a full device
    does (CL_MEM_OBJECT_ALLOCATION_FAILURE). PoCL and Oclgrind never refuse: their
    memory limits (POCL_MEMORY_LIMIT, OCLGRIND_GLOBAL_MEM_SIZE) only change what they report."""

    def __init__(self, pool, refusals: int):
        self._pool, self.refusals, self.freed = pool, refusals, 0

    def allocate(self, nbytes):
        if self.refusals:
            self.refusals -= 1
            raise cl.MemoryError("clCreateBuffer", cl.status_code.MEM_OBJECT_ALLOCATION_FAILURE,
                                 "refused by the test")
        return self._pool.allocate(nbytes)

    def free_held(self):
        self.freed += 1
        self._pool.free_held()

    def __getattr__(self, name):
        return getattr(self._pool, name)


@pytest.mark.parametrize("refusals", [1, 2])
def test_refused_allocation(device, monkeypatch, refusals):
    """One refusal: the pool is freed and the retry succeeds. Two: DeviceMemoryError naming
    the bytes, the device and the pool state; existing arrays intact, the device usable."""
    keep_h = np.arange(100, dtype=np.float32)
    keep = clnp.asarray(keep_h, device=device)
    spare = clnp.ones((1000,), dtype=clnp.float32, device=device)
    del spare                                   # pooled: free_held gives it back
    pool = _RefusingPool(device.pool, refusals)
    monkeypatch.setitem(device.__dict__, "pool", pool)
    if refusals == 1:
        y = clnp.zeros((50,), dtype=clnp.float32, device=device)
        assert pool.freed == 1 and float(clnp.sum(y)) == 0.0
    else:
        with pytest.raises(clnp.DeviceMemoryError) as ei:
            clnp.zeros((50,), dtype=clnp.float32, device=device)
        msg = str(ei.value)
        assert pool.freed == 1 and ei.value.nbytes == 200 and ei.value.device is device
        assert "200 bytes" in msg and str(device) in msg and "pool in use" in msg
    monkeypatch.undo()
    np.testing.assert_array_equal(keep.to_numpy(), keep_h)
    np.testing.assert_array_equal((keep + 1).to_numpy(), keep_h + 1)
