"""Where clnp's warnings point: the user's line, however many clnp frames are between."""
from __future__ import annotations

import os
import sys

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def user_stacklevel() -> int:
    """The ``stacklevel`` for ``warnings.warn`` called by the caller of this function that
    names the first frame outside the clnp package (public functions are wrapped, so a fixed
    level would name clnp's wrapper: clnp._helpers.names_its_errors)."""
    level, f = 1, sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith(_PACKAGE):
        f, level = f.f_back, level + 1
    return level
