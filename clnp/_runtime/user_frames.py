"""Where clnp's warnings and error messages point: the user's line, however many library
frames are between."""
from __future__ import annotations

import os
import sys

# the clnp package's folder (this module is clnp/_runtime/user_frames.py)
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# The folders of the library's packages: clnp's own, and those that clnp_grad and clnp_nn
# add when they are imported (clnp never imports them). Compared with a frame's real path,
# never a name: a clone folder named 'clnp' holds the user's own scripts and tests too.
_LIBRARY_DIRS: tuple[str, ...] = (_PACKAGE,)


def register_library_package(init_file: str) -> None:
    """Count the package whose ``__init__.py`` is ``init_file`` as library code, whose frames
    ``user_stacklevel`` and ``is_library_frame`` skip.

    Examples
    --------
    >>> import clnp_grad                       # registers itself on import
    >>> from clnp._runtime.user_frames import is_library_frame
    >>> is_library_frame(clnp_grad.__file__), is_library_frame("/home/me/clnp/train.py")
    (True, False)
    """
    global _LIBRARY_DIRS
    folder = os.path.dirname(os.path.abspath(init_file)) + os.sep
    if folder not in _LIBRARY_DIRS:
        _LIBRARY_DIRS = _LIBRARY_DIRS + (folder,)


def is_library_frame(filename: str) -> bool:
    """Whether code at ``filename`` belongs to clnp, clnp_grad or clnp_nn (or is Python's
    frozen import machinery).

    Examples
    --------
    >>> import clnp
    >>> from clnp._runtime.user_frames import is_library_frame
    >>> is_library_frame(clnp.__file__), is_library_frame("<stdin>")
    (True, False)
    """
    return filename.startswith(_LIBRARY_DIRS) or filename.startswith("<frozen")


def user_stacklevel() -> int:
    """The ``stacklevel`` for ``warnings.warn`` called by the caller of this function that
    names the first frame outside the library's packages (public functions are wrapped, so a
    fixed level would name clnp's wrapper: clnp._core.checks.names_its_errors)."""
    level, f = 1, sys._getframe(1)
    while f is not None and is_library_frame(f.f_code.co_filename):
        f, level = f.f_back, level + 1
    return level


def names_its_source(exc: BaseException) -> BaseException:
    """Mark ``exc`` as an error of a setting, not of the call that met it, and return it.

    An error such as a bad ``CLNP_DEVICE`` surfaces in whichever public function first needs
    a device; its message names the setting, so the wrapper that puts the called function's
    name before a message (``clnp._core.checks.names_its_errors``) leaves it as it is.

    Examples
    --------
    >>> from clnp._runtime.user_frames import names_its_source, is_named_at_source
    >>> is_named_at_source(names_its_source(ValueError("CLNP_DEVICE='foo' ...")))
    True
    >>> is_named_at_source(ValueError("bad"))
    False
    """
    exc.__dict__["_clnp_named_at_source"] = True
    return exc


def is_named_at_source(exc: BaseException) -> bool:
    """Whether ``names_its_source`` marked ``exc``."""
    return bool(exc.__dict__.get("_clnp_named_at_source", False))
