"""The host never runs more than ``run_ahead.limit()`` launches ahead of a device (issue #27,
"bounded run-ahead"; clnp/_runtime/run_ahead.py).

A loop of kernels slower than their enqueue checks the backlog after every launch, with the
bound on (it holds) and off (the same loop then runs far ahead: the check can fail). The time
a result takes after an interrupted loop is measured in bench/bench_run_ahead.py, not here.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import clnp
from clnp._runtime import run_ahead
from clnp_grad import jit

ROOT = Path(__file__).resolve().parents[2]
BOUND = 64


@pytest.fixture
def bound():
    old = run_ahead.set_limit(BOUND)
    yield BOUND
    run_ahead.set_limit(old)


def _slow_operand(device) -> clnp.ndarray:
    # 160x160 products: well over the enqueue's few microseconds on every device we run on
    rng = np.random.default_rng(0)
    return clnp.asarray(rng.standard_normal((160, 160)).astype(np.float32), device=device)


def _most_queued(device, step, n: int) -> int:
    device.synchronize()
    a = _slow_operand(device)
    most = 0
    for _ in range(n):
        a = step(a)
        most = max(most, run_ahead.queued_ahead(device.queue))
    np.testing.assert_array_equal(np.isfinite(np.asarray(a)), True)
    return most


def _eager_step(a):
    return (a @ a) * 1e-3 + 1


@pytest.mark.parametrize("path", ["eager", "jit"])
def test_backlog_never_exceeds_the_bound(device, bound, path):
    step = _eager_step if path == "eager" else jit(_eager_step)
    step(_slow_operand(device))              # compiled before the count starts
    most = _most_queued(device, step, 12 * bound)
    assert most <= bound + run_ahead.MARK_EVERY, most


def test_without_the_bound_the_same_loop_runs_ahead(device):
    """The check above can fail: the unbounded loop queues more than the bound allows. Devices
    whose kernels here finish faster than they are enqueued (a GPU) never fall behind; then
    there is nothing to bound and the test says so."""
    old = run_ahead.set_limit(10**9)     # markers placed (so counted), never waited for
    try:
        _eager_step(_slow_operand(device))
        most = _most_queued(device, _eager_step, 12 * BOUND)
    finally:
        run_ahead.set_limit(old)
    if most <= BOUND + run_ahead.MARK_EVERY:
        pytest.skip(f"{device}: the device kept up with the host ({most} queued at most)")
    assert most > BOUND + run_ahead.MARK_EVERY


def test_results_are_the_same_with_and_without_the_bound(device):
    rng = np.random.default_rng(1)
    h = rng.standard_normal((48, 48)).astype(np.float32)
    outs = []
    for launches in (0, 32):
        old = run_ahead.set_limit(launches)
        try:
            a = clnp.asarray(h, device=device)
            for _ in range(100):
                a = clnp.tanh(a @ a * 0.01) + a * 0.5
            outs.append(np.asarray(a))
        finally:
            run_ahead.set_limit(old)
    np.testing.assert_array_equal(outs[0], outs[1])


@pytest.mark.parametrize("value, message", [("lots", "whole number"), ("-3", "0 \\(no bound\\)")])
def test_a_bad_environment_value_is_named(value, message):
    code = ("from clnp._runtime import run_ahead\n"
            "try:\n    run_ahead.limit()\nexcept ValueError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, env={**os.environ, "CLNP_RUN_AHEAD": value},
                         timeout=120).stdout
    assert "CLNP_RUN_AHEAD" in out and value in out
    assert re.search(message, out), out


def test_set_limit_rejects_a_negative_bound():
    with pytest.raises(ValueError, match="set_limit: launches must be None or an int >= 0"):
        run_ahead.set_limit(-1)
