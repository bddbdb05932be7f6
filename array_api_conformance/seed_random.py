"""pytest plugin loaded by run.sh with ``-p array_api_conformance.seed_random``.

1. The special-case tests (array_api_tests/test_special_cases.py) draw some of
   their inputs through Python's global ``random`` module, so without
   re-seeding the pass/fail counts drift by 1-2 between otherwise identical
   runs. An autouse fixture re-seeds ``random`` before every test.

2. Hypothesis keeps an example database (``.hypothesis/`` in the suite
   checkout) and replays previously failing examples first, which makes a run
   depend on the history of earlier runs. We disable the database after the
   suite's conftest has loaded its "array-api-tests" settings profile, so that
   ``--hypothesis-seed 0`` alone determines the examples. Set
   ``CLNP_CONFORMANCE_HYPOTHESIS_DB=1`` to keep the database (e.g. to replay a
   shrunk failure while debugging).
"""
import os
import random

import pytest

SEED = int(os.environ.get("CLNP_CONFORMANCE_RANDOM_SEED", "0"))


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    if os.environ.get("CLNP_CONFORMANCE_HYPOTHESIS_DB", "") not in ("", "0"):
        return
    try:
        from hypothesis import settings
    except ImportError:  # pragma: no cover - the suite requires hypothesis
        return
    settings.register_profile(
        "clnp-conformance", settings(settings.default, database=None)
    )
    settings.load_profile("clnp-conformance")


def pytest_report_header(config):
    return f"clnp conformance plugin: random.seed({SEED}) before each test"


@pytest.fixture(autouse=True)
def _clnp_conformance_seed_random():
    random.seed(SEED)
    yield


@pytest.hookimpl(optionalhook=True)
def pytest_json_modifyreport(json_report):
    """Record what was run in the --json-report file (read by summarize.py)."""
    import subprocess
    import sys

    info = {
        "module": os.environ.get("ARRAY_API_TESTS_MODULE"),
        "random_seed": SEED,
        "argv": sys.argv[1:],
    }
    xp = sys.modules.get("array_api_tests")
    xp = getattr(xp, "xp", None)
    if xp is not None:
        info["module_version"] = getattr(xp, "__version__", None)
        info["api_version"] = getattr(sys.modules["array_api_tests"], "api_version", None)
    for key, path in (("suite_commit", "."), ("spec_commit", "array-api")):
        try:
            info[key] = subprocess.run(
                ["git", "-C", path, "rev-parse", "HEAD"], capture_output=True,
                text=True, timeout=10).stdout.strip() or None
        except Exception:
            info[key] = None
    json_report["clnp_conformance"] = info
