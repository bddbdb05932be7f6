"""Modules imported at their first use rather than at ``import clnp``.

``deferred_import(name)`` returns the module object ``name`` at once, registered in
``sys.modules`` as an import would, but runs its code only when an attribute of it is first
read. It is the same object before and after, so ``import name`` elsewhere, ``from name import
x`` and monkeypatching in tests all see one module; after the first read it is an ordinary
module and reading an attribute costs what it always does.

clnp uses it for PyOpenCL (0.15-0.19 s, about one ``import numpy``) and for the kernel
generators of op families a script may never call (sorting, scans, FFT, random bits, linear
algebra, custom kernels, tensor-core products): they are read when their first kernel is
built, on a path that then waits for ``clBuildProgram``. Issue #27 asks for ``import clnp``
within 2x ``import numpy``.

Unlike ``importlib.util.LazyLoader`` (Python 3.11), the first read holds a lock while the
module runs, so a second thread waits for a complete module instead of reading a half-made
one.
"""
from __future__ import annotations

import importlib.util
import sys
import threading
import types

_LOCK = threading.RLock()      # reentrant: one deferred module's code may read another


class _Deferred(types.ModuleType):
    """A module whose code has not run yet; see :func:`deferred_import`."""

    def __getattr__(self, attr: str) -> object:
        # only for names the module does not have yet: before its first run, all but the
        # import system's own (__name__, __spec__, __file__...)
        with _LOCK:
            if type(self) is _Deferred and not self.__dict__.get("_deferred_running"):
                self.__dict__["_deferred_running"] = True
                try:
                    self.__spec__.loader.exec_module(self)      # type: ignore[union-attr]
                    self.__class__ = types.ModuleType
                finally:
                    self.__dict__.pop("_deferred_running", None)
        return types.ModuleType.__getattribute__(self, attr)


def deferred_import(name: str) -> types.ModuleType:
    """The module ``name``, whose code runs when one of its attributes is first read (at
    once when it is already imported). Its parent package is imported now.

    Parameters
    ----------
    name : str
        An absolute module name.

    Returns
    -------
    module
        The module object, also in ``sys.modules[name]`` and bound in its parent package.

    Raises
    ------
    ModuleNotFoundError
        When no module ``name`` exists (checked now, not at the first read).

    Examples
    --------
    >>> import sys
    >>> from clnp._runtime.deferred import deferred_import
    >>> m = deferred_import("json.tool")
    >>> callable(m.main), sys.modules["json.tool"] is m
    (True, True)
    """
    module = sys.modules.get(name)
    if module is not None:
        return module
    parent, _, child = name.rpartition(".")
    if parent:
        importlib.import_module(parent)
    with _LOCK:
        module = sys.modules.get(name)
        if module is not None:
            return module
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        module = importlib.util.module_from_spec(spec)
        module.__class__ = _Deferred
        sys.modules[name] = module
        if parent:
            setattr(sys.modules[parent], child, module)
    return module


def resolve(module: types.ModuleType) -> types.ModuleType:
    """``module`` with its code run, if it was deferred: for code that reads a module's
    namespace directly (``vars(module)``, docstring and API checks), which sees a deferred
    module's as empty.

    Examples
    --------
    >>> from clnp._runtime.deferred import deferred_import, resolve
    >>> m = resolve(deferred_import("json.tool"))
    >>> "main" in vars(m)
    True
    """
    if type(module) is _Deferred:
        getattr(module, "__deferred_run__", None)      # any missing name runs it
    return module
