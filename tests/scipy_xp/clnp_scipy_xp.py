"""A pytest plugin that adds clnp to SciPy's ``xp`` fixture, so that SciPy's own array-API
tests run with clnp arrays beside NumPy and array_api_strict (issue #25).

    SCIPY_ARRAY_API=1 python -m pytest -p clnp_scipy_xp --pyargs scipy.integrate -k clnp

(with this folder on ``PYTHONPATH``). SciPy's ``conftest.py`` builds the fixture's parameters
from the libraries it knows when it is imported; this plugin, loaded first with ``-p``, edits
that module as pytest registers it and before pytest reads its fixtures:

- ``clnp`` joins ``xp_known_backends``, so SciPy's markers treat it as they treat every
  backend but NumPy: ``np_only`` tests are skipped for it, ``cpu_only`` ones skipped when
  clnp's default device is not a CPU, backend-specific skips of other libraries do not apply.
- the ``xp`` fixture gets a ``clnp`` parameter (its id, for ``-k clnp``); SciPy's fixture body
  is reused unchanged (``array_namespace``, ``default_xp``, the lazy-backend patches).

clnp is an eager library, so SciPy's eager-only tests run for it, and a test SciPy skips
for every eager backend it knows (NumPy, array_api_strict, PyTorch and CuPy: "lazy backends
only") is skipped for clnp too.
"""
from __future__ import annotations

from typing import Any

import pytest

BACKEND = "clnp"


def _add_clnp(conftest: Any) -> None:
    import clnp

    conftest.xp_known_backends.add(BACKEND)
    if not clnp.default_device().is_cpu:
        conftest.xp_skip_cpu_only_backends.add(BACKEND)
    params = list(conftest.xp_available_backends)
    params.append(pytest.param(clnp, id=BACKEND, marks=pytest.mark.array_api_backends))
    conftest.xp_available_backends = params
    original = conftest.xp
    body = getattr(original, "_fixture_function", None) or original.__wrapped__
    conftest.xp = pytest.fixture(params=params)(body)


@pytest.hookimpl(tryfirst=True)
def pytest_plugin_registered(plugin: Any, manager: Any) -> None:
    # before pytest's own hook reads the module's fixtures
    if getattr(plugin, "__name__", None) == "scipy.conftest" and \
            BACKEND not in getattr(plugin, "xp_known_backends", {BACKEND}):
        _add_clnp(plugin)


_EAGER = {"numpy", "array_api_strict", "torch", "cupy"}


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: Any) -> None:
    callspec = getattr(item, "callspec", None)
    if callspec is None or getattr(callspec.params.get("xp"), "__name__", None) != BACKEND:
        return
    skipped = {m.args[0] for m in item.iter_markers("skip_xp_backends") if len(m.args) == 1}
    if _EAGER <= skipped:
        pytest.skip("a test for lazy backends only (SciPy skips every eager one): clnp is eager")
