"""Two-device tests: they need two OpenCL devices in this process. With fewer (the usual
PoCL set-up), ``test_launch.py`` runs this directory again in a subprocess with
``POCL_DEVICES="pthread pthread"`` (two PoCL CPU devices), so the default test command covers
them."""
from __future__ import annotations

import pytest

import clnp


def two_devices():
    """The first two devices of the default device's platform, or a skip."""
    d0 = clnp.default_device()
    devs = [d for d in clnp.devices() if d.platform_name == d0.platform_name]
    if len(devs) < 2:
        pytest.skip("needs two OpenCL devices of one platform (tests/parallel/test_launch.py "
                    "runs these with POCL_DEVICES='pthread pthread')")
    return devs[:2]


@pytest.fixture
def devs():
    return two_devices()
