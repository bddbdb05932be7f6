"""SciPy's own array-API tests with clnp as a backend (issue #25).

A selection of SciPy's test modules (``scipy.integrate``, ``scipy.cluster``,
``scipy.differentiate``, ``scipy.signal``'s filter design, and ``scipy._lib``'s array-API
helpers) runs in a child pytest with
``SCIPY_ARRAY_API=1`` and the plugin ``tests/scipy_xp/clnp_scipy_xp.py``, which adds clnp to
SciPy's ``xp`` fixture; ``-k clnp`` keeps the clnp cases. No clnp case may fail: SciPy's own
skips (``np_only``, slow tests) stay skips, and an expected failure SciPy marks for every
non-NumPy backend stays one.

They ran with three failures before clnp's SVD and eigensolvers used LAPACK on host memory
(clnp._routines.host_lapack): ``test_krandinit`` (SVD signs), ``TestSos2Zpk::test_basic``
and ``TestIIRComb::test_iir_symmetry`` (roots and exact conjugate pairs).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

import clnp

pytest.importorskip("scipy", minversion="1.17")

HERE = os.path.dirname(os.path.abspath(__file__))
PLUGIN_DIR = os.path.join(HERE, "scipy_xp")
ROOT = os.path.dirname(HERE)

SELECTION = {
    "integrate": ["scipy.integrate"],
    "cluster": ["scipy.cluster"],
    "differentiate": ["scipy.differentiate"],
    "filter design": ["scipy.signal.tests.test_filter_design"],
    # SciPy's array-API helpers: result_type, devices, NaN policies (its messages matched)
    "array-api helpers": ["scipy._lib.tests.test_array_api", "scipy._lib.tests.test__util"],
}


def _run(targets: list[str], tmp_path) -> subprocess.CompletedProcess:
    env = {**os.environ, "SCIPY_ARRAY_API": "1",
           "PYTHONPATH": os.pathsep.join([PLUGIN_DIR, ROOT, os.environ.get("PYTHONPATH", "")])}
    env.pop("PYTEST_XDIST_WORKER", None)
    cmd = [sys.executable, "-m", "pytest", "-p", "clnp_scipy_xp", "-p", "no:cacheprovider",
           "-q", "-k", "clnp", "-W", "ignore::pytest.PytestUnknownMarkWarning",
           "-o", "addopts=", "--pyargs", *targets]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path,
                          timeout=1500)


def _counts(summary: str) -> dict[str, int]:
    return {kind: int(n) for n, kind in re.findall(r"(\d+) (passed|failed|error|errors|"
                                                   r"skipped|xfailed|xpassed)", summary)}


@pytest.mark.skipif(not clnp.default_device().is_cpu,
                    reason="the run is sized for CI's CPU device")
@pytest.mark.parametrize("area", list(SELECTION))
def test_scipy_array_api_tests_pass_with_clnp(area, tmp_path):
    r = _run(SELECTION[area], tmp_path)
    tail = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
    counts = _counts(tail)
    failures = [ln for ln in r.stdout.splitlines() if ln.startswith(("FAILED", "ERROR"))]
    assert r.returncode == 0 and not failures, (
        f"SciPy's {area} tests with clnp: {tail}\n" + "\n".join(failures[:20]) +
        f"\n{r.stderr[-2000:]}")
    # -k clnp selects only the cases of the plugin's parameter (none without it: pytest
    # would exit 5), so these passes are clnp's
    assert counts.get("passed", 0) > 10, tail
