"""``clnp.emath``: NumPy's ``numpy.emath`` (``numpy.lib.scimath``), the mathematical
functions whose real inputs outside the real domain give complex results: ``sqrt``, ``log``,
``log2``, ``log10``, ``logn``, ``power``, ``arccos``, ``arcsin``, ``arctanh``.

The output dtype depends on the input's values, as in NumPy: each real input costs one
boolean read back from the device (a synchronisation) to decide between the real and the
complex result. The functions live in clnp/_numpy/emath.py.
"""
from __future__ import annotations

from ._numpy.emath import (arccos, arcsin, arctanh, log, log2, log10, logn,  # noqa: F401
                           power, sqrt)

__all__ = ["sqrt", "log", "log2", "log10", "logn", "power", "arccos", "arcsin", "arctanh"]

from ._namespace import hide_imports as _hide_imports  # noqa: E402
__dir__ = _hide_imports(__name__)
