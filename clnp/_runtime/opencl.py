"""PyOpenCL, imported when clnp first talks to a device rather than at ``import clnp``.

``import pyopencl`` costs about as much as ``import numpy`` (0.15-0.19 s on the 2-core
machine: pytools, asyncio and the vector types of ``pyopencl.cltypes``), and a script that
only imports clnp, or fails on bad arguments before any kernel runs, need not pay it (issue
#27: ``import clnp`` within 2x ``import numpy``). Every clnp module reaches PyOpenCL through
``cl`` below: the ``pyopencl`` module itself, whose code runs on the first attribute any of
them reads (clnp._runtime.deferred).
"""
from __future__ import annotations

import sys
import types

from .deferred import deferred_import


def loaded() -> bool:
    """Whether PyOpenCL's code has run in this process (for clnp or for anyone else).

    Examples
    --------
    >>> import clnp
    >>> from clnp._runtime.opencl import loaded
    >>> _ = clnp.ones(2)                # the first array needs a device, so PyOpenCL
    >>> loaded()
    True
    """
    module = sys.modules.get("pyopencl")
    return module is not None and type(module) is types.ModuleType


#: the ``pyopencl`` module, run on first use (see the module's docstring)
cl: types.ModuleType = deferred_import("pyopencl")
