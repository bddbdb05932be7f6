"""KeyboardInterrupt (Ctrl-C) while a long queue of kernels runs leaves the runtime usable
(issue #13, item 5; docs/robustness.md).

A child process enqueues eager ops and jitted calls in a loop, with a blocking read now and
then; the test sends it SIGINT at varied moments, several rounds. After each interrupt the
child checks that new eager and jitted computations are NumPy's, that arrays it held are
intact, and that the device synchronises; it then exits normally. Everything is bounded by
timeouts: a regression shows up as a failure, not a stalled suite.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import clnp

ROOT = Path(__file__).resolve().parents[2]

CHILD = r"""
import sys, time
import numpy as np
import clnp
from clnp_grad import jit

@jit
def step(a, b):
    return clnp.tanh(a * b + 1.0) - a

h = np.linspace(-1, 1, 1 << 16, dtype=np.float32)
x = clnp.asarray(h)
keep = clnp.asarray(h[::-1].copy())


def check():
    clnp.synchronize()
    np.testing.assert_array_equal(x.to_numpy(), h)
    np.testing.assert_array_equal(keep.to_numpy(), h[::-1])
    np.testing.assert_allclose(float(clnp.sum(x * 2.0 + 1.0)), float((h * 2 + 1).sum()),
                               rtol=1e-4)
    np.testing.assert_allclose(step(x, keep).to_numpy(), np.tanh(h * h[::-1] + 1) - h,
                               rtol=1e-5, atol=1e-6)
    y = clnp.sort(keep)
    np.testing.assert_array_equal(y.to_numpy(), h)


check()
where = []
for rnd in range(ROUNDS):
    print(f"armed {rnd}", flush=True)
    try:
        t0 = time.time()
        y = x
        i = 0
        while time.time() - t0 < 30:
            y = y * 1.0001 + 0.5          # eager kernels, queued without waiting
            z = step(x, y)                # jitted call
            i += 1
            if i % 50 == 0:
                float(clnp.sum(z))        # a blocking read: an interrupt may land in a wait
        print("never interrupted", flush=True)
        sys.exit(3)
    except KeyboardInterrupt:
        where.append(i)
    check()
    print(f"usable {rnd}", flush=True)
print("ok", where, flush=True)
"""


def test_interrupt_during_long_queue_leaves_runtime_usable():
    rounds = 4
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT),
                                                       os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen([sys.executable, "-c", CHILD.replace("ROUNDS", str(rounds))],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    killer = threading.Timer(240, proc.kill)      # a hang fails the test, bounded
    killer.start()
    lines = []
    try:
        delays = [0.3, 1.1, 0.05, 2.0]            # early (building kernels) to deep in the loop
        for rnd in range(rounds):
            line = proc.stdout.readline()
            lines.append(line)
            assert line.startswith(f"armed {rnd}"), (lines, proc.stderr.read())
            time.sleep(delays[rnd])
            proc.send_signal(signal.SIGINT)
            line = proc.stdout.readline()
            lines.append(line)
            assert line.startswith(f"usable {rnd}"), (lines, proc.stderr.read())
        # (not communicate(): it would lose what readline has buffered already)
        lines.append(proc.stdout.read())
        err = proc.stderr.read()
        proc.wait(timeout=120)
    finally:
        killer.cancel()
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, (lines, err)
    assert lines[-1].startswith("ok"), lines


def test_interrupted_bound_kernel_rebinds_its_scalars(device):
    """A KeyboardInterrupt between a bound kernel's ``set_arg`` and its record of the value
    (simulated with a trace function) must not let a later call skip setting the scalar."""
    from clnp._runtime import launch as _bound
    src = ("__kernel void fill(__global float *o, float v) "
           "{ o[get_global_id(0)] = v; }")
    k = device.kernel(("test-interrupt", "fill"), lambda: (src, "fill", [None, np.float32]))
    out = clnp.empty((4,), dtype=clnp.float32, device=device)
    bk = _bound.bind(k, (4,), None, [out._buf, 1.0], bufpos=[0], valpos=[1])
    assert bk is not None
    bk(device.queue, [out._buf], [2.0])
    np.testing.assert_array_equal(out.to_numpy(), 2.0)

    code = _bound.BoundKernel.__call__.__code__
    target = next(i for i, line in enumerate(
        Path(_bound.__file__).read_text().splitlines(), 1)
        if "last[i] = v" in line)

    def tracer(frame, event, arg):
        if frame.f_code is code:
            def local(frame, event, arg):
                if event == "line" and frame.f_lineno == target:
                    raise KeyboardInterrupt
                return local
            return local
        return None
    sys.settrace(tracer)
    try:
        with pytest.raises(KeyboardInterrupt):
            bk(device.queue, [out._buf], [3.0])      # set_arg(3.0) done, record not made
    finally:
        sys.settrace(None)
    bk(device.queue, [out._buf], [2.0])            # must set 2.0 again
    np.testing.assert_array_equal(out.to_numpy(), 2.0)
