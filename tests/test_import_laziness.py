"""What ``import clnp`` leaves for later (issue #27: ``import clnp`` within 2x ``import
numpy``; bench/bench_import.py measures the time, these tests the structure).

PyOpenCL, the kernel generators of the op families (clnp._runtime.deferred), clnp.random
(with numpy.random) and the generated NumPy-signature wrappers are checked in a fresh
interpreter: a module that comes back at import would be import time again.
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from clnp._runtime.deferred import deferred_import, resolve
from conftest import env_importing_this_checkout

# run in a child: what one import clnp (or clnp_grad) ran, and what it deferred
PROBE = textwrap.dedent("""
    import json, sys, types
    import {module}
    def ran(name):
        m = sys.modules.get(name)
        return None if m is None else type(m) is types.ModuleType
    from clnp._numpy.signatures import installed_from
    report = {{"pyopencl": ran("pyopencl"), "numpy.random": ran("numpy.random"),
              "clnp.random": ran("clnp.random"), "signatures": installed_from(),
              "kernels": {{n: ran(n) for n in sys.modules if n.startswith("clnp._kernels.")}},
              "jit backend": ran("clnp_grad._jit.executable")}}
    {after}
    print(json.dumps(report))
""")


def _probe(module: str, after: str = "") -> dict:
    code = PROBE.format(module=module, after=after)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=env_importing_this_checkout(), check=True, timeout=120)
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_import_clnp_runs_no_opencl_and_no_family_kernels():
    got = _probe("clnp")
    assert got["pyopencl"] is False          # registered, its code not run
    assert got["numpy.random"] is None and got["clnp.random"] is None
    assert got["signatures"] == "generated", \
        "signatures_generated.py is stale: run python tools/signature_wrappers.py"
    deferred = {n for n, ran in got["kernels"].items() if ran is False}
    assert {"clnp._kernels.sort", "clnp._kernels.fft", "clnp._kernels.linalg",
            "clnp._kernels.random", "clnp._kernels.scan", "clnp._kernels.gemm"} <= deferred


def test_first_use_runs_what_was_deferred():
    after = ("import clnp\n"
             "x = clnp.sort(clnp.asarray([3.0, 1.0, 2.0]))\n"
             "report['sorted'] = x.tolist()\n"
             "report['pyopencl'] = ran('pyopencl')\n"
             "report['sort kernels'] = ran('clnp._kernels.sort')\n"
             "report['random'] = float(clnp.random.default_rng(0).random()) < 1\n")
    got = _probe("clnp", after)
    assert got["sorted"] == [1.0, 2.0, 3.0]
    assert got["pyopencl"] is True and got["sort kernels"] is True and got["random"] is True


def test_import_clnp_grad_defers_the_jit_backend():
    got = _probe("clnp_grad", "import clnp, clnp_grad\n"
                              "report['jit'] = float(clnp_grad.jit(lambda v: v * 2)("
                              "clnp.asarray(1.5)))\n"
                              "report['jit backend after'] = ran('clnp_grad._jit.executable')\n")
    assert got["jit backend"] is False
    assert got["jit"] == 3.0 and got["jit backend after"] is True


def test_clnp_random_is_listed_before_its_import():
    r = subprocess.run([sys.executable, "-c", "import clnp, sys; "
                        "print('random' in dir(clnp), 'clnp.random' in sys.modules)"],
                       capture_output=True, text=True, env=env_importing_this_checkout(),
                       check=True, timeout=120)
    assert r.stdout.split() == ["True", "False"]


def _write_module(folder, name: str, body: str) -> None:
    (folder / f"{name}.py").write_text(textwrap.dedent(body))


def test_deferred_module_runs_once_on_first_read(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    _write_module(tmp_path, "clnp_probe_once", """
        import builtins
        builtins.clnp_probe_runs = getattr(builtins, "clnp_probe_runs", 0) + 1
        VALUE = 41 + 1
    """)
    import builtins
    m = deferred_import("clnp_probe_once")
    try:
        assert sys.modules["clnp_probe_once"] is m
        assert not hasattr(builtins, "clnp_probe_runs") or builtins.clnp_probe_runs == 0
        assert m.VALUE == 42 and m.VALUE == 42
        assert builtins.clnp_probe_runs == 1
        import clnp_probe_once                      # the same object, not run again
        assert clnp_probe_once is m and builtins.clnp_probe_runs == 1
    finally:
        sys.modules.pop("clnp_probe_once", None)
        if hasattr(builtins, "clnp_probe_runs"):
            del builtins.clnp_probe_runs


def test_deferred_module_second_thread_waits_for_the_whole_module(tmp_path, monkeypatch):
    """A thread reading while another thread runs the module waits, then sees all of it."""
    monkeypatch.syspath_prepend(str(tmp_path))
    _write_module(tmp_path, "clnp_probe_slow", """
        import time
        FIRST = 1
        time.sleep(0.3)
        LAST = 2
    """)
    m = deferred_import("clnp_probe_slow")
    seen = {}
    try:
        t = threading.Thread(target=lambda: seen.setdefault("a", m.FIRST))
        t.start()
        time.sleep(0.05)                 # the first thread is inside the module's body
        seen["b"] = m.LAST               # read during the run: waits, never AttributeError
        t.join()
        assert seen == {"a": 1, "b": 2}
    finally:
        sys.modules.pop("clnp_probe_slow", None)


def test_deferred_import_of_a_missing_module_raises_at_once():
    with pytest.raises(ModuleNotFoundError, match="clnp_no_such_module"):
        deferred_import("clnp_no_such_module")


def test_resolve_runs_a_deferred_module_for_vars(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    _write_module(tmp_path, "clnp_probe_vars", "NAME = 'x'\n")
    m = deferred_import("clnp_probe_vars")
    try:
        assert "NAME" not in vars(m)          # what a namespace walker would see
        assert "NAME" in vars(resolve(m))
    finally:
        sys.modules.pop("clnp_probe_vars", None)
