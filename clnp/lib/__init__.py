"""``clnp.lib``: NumPy's ``numpy.lib`` names that make sense on a device
(:mod:`clnp.lib.stride_tricks`)."""
from __future__ import annotations

from . import stride_tricks  # noqa: F401

__all__: list[str] = []

from .._namespace import hide_imports as _hide_imports  # noqa: E402
__dir__ = _hide_imports(__name__)
