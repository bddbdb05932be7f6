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

import clnp


def _test_devices():
    spec = os.environ.get("CLNP_TEST_DEVICES")
    if spec:
        return [clnp._runtime.select_device(s) for s in spec.split(",") if s.strip()]
    return list(clnp.devices())


DEVICES = _test_devices()


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
def rng():
    return np.random.default_rng(1234)


def float_dtypes(device):
    """Real floating dtypes the device supports (float16 is storage-only but supported)."""
    return [d for d in (clnp.float16, clnp.float32, clnp.float64) if device.supports(d)]
