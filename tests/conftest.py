"""Test configuration: every test that takes ``device`` runs on every OpenCL device present.

``CLNP_TEST_DEVICES`` (comma-separated device specs, e.g. ``pocl:0,nvidia:0``) narrows the set.
Kernels compiled in this process are shared between tests (the per-device program cache).
"""
from __future__ import annotations

import importlib.util
import os
import sys
from types import ModuleType

import numpy as np
import pytest

# no background filler of the disk cache after each test process exits (clnp/_runtime/
# program_fill.py; tests/test_program_cache.py starts one on purpose)
os.environ.setdefault("CLNP_CACHE_FILL", "0")
# programs prebuilt into this environment (python -m clnp.prebuild, the README's first
# command) would answer builds the tests count; tests/test_prebuild.py uses its own stores
os.environ.setdefault("CLNP_PREBUILT_DIR", "")
# JAX, an oracle here, on the CPU: with a GPU present every test worker's JAX would otherwise
# take 75 % of its memory and the others fail with CUDA_ERROR_OUT_OF_MEMORY (16 workers on an
# H200 host)
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import clnp  # noqa: E402


def _test_devices():
    spec = os.environ.get("CLNP_TEST_DEVICES")
    if spec:
        return [clnp._runtime.device.select_device(s) for s in spec.split(",") if s.strip()]
    return list(clnp.devices())


DEVICES = _test_devices()


def _usable_memory_bytes() -> int | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def pytest_xdist_auto_num_workers(config) -> int:
    """``-n auto`` (the README's test command): one worker per core, as many as memory allows
    (a worker with the oracles imported and its programs built holds about 1.5 GiB); on one
    core the suite runs in this process. Much of the suite waits on single-threaded kernel
    builds and child processes, so even 2 cores gain: the whole suite on the 2-core machine took
    10 min 41 s with two workers, and one process had done 47 % of it after 13 min 30 s."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    cores = cores or 1
    if cores < 2:
        return 0
    memory = _usable_memory_bytes()
    by_memory = cores if memory is None else max(1, int(memory // (1.5 * 2**30)))
    return min(cores, by_memory)


def env_importing_this_checkout(**extra: str) -> dict[str, str]:
    """The environment for a child Python that must import the clnp these tests run (this
    checkout first on ``PYTHONPATH``), wherever its script and working folder are and whether
    or not clnp is installed."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.environ.get("PYTHONPATH", "")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([root, path]) if path else root,
            **extra}


def run_in_threads(work, n: int = 4, timeout: float = 300) -> None:
    """Run ``work(i)`` on ``n`` threads at once and fail on a hung thread or the first
    exception one of them raised (re-raised here, in the test's thread)."""
    import threading
    errors: list = []

    def guarded(i: int) -> None:
        try:
            work(i)
        except BaseException as e:  # reported by the main thread
            errors.append(e)
    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=timeout)
    assert not any(t.is_alive() for t in threads), "a thread did not finish"
    if errors:
        raise errors[0]


def load_tool(name: str) -> ModuleType:
    """The script ``tools/<name>.py`` as a module (registered under ``name``, which its
    dataclasses look up; loaded once per process)."""
    mod = sys.modules.get(name)
    if mod is None:
        path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                            "tools", f"{name}.py")
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return mod


@pytest.fixture(params=DEVICES, ids=[d.key for d in DEVICES])
def device(request):
    return request.param


@pytest.fixture
def general_path(monkeypatch):
    """``clnp_grad.jit`` without whole-step kernels: the tests of the fusion groups' own
    kernels (their counts and layouts), which small steps would otherwise not reach."""
    from clnp_grad._jit import whole_step
    monkeypatch.setattr(whole_step, "WHOLE_STEP", False)


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def float_dtypes(device):
    """Real floating dtypes the device supports (float16 is storage-only but supported)."""
    return [d for d in (clnp.float16, clnp.float32, clnp.float64) if device.supports(d)]
