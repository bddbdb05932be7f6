"""``dir()`` of a public module lists its API (``__all__``), not the names it imports.

A public module lists its public names in ``__all__`` and gets a module ``__dir__`` (PEP 562)
from :func:`hide_imports`, so ``dir(clnp_grad)`` or tab completion shows ``grad`` but not
``Any``, ``np`` or ``annotations``. Attribute access is unchanged: this only filters what
``dir()`` reports. A new public function appears in ``dir()`` once its name is added to its
module's ``__all__``; tests/test_namespace.py fails, naming the module and the name, for a
public definition that was not added.
"""
from __future__ import annotations

import sys as _sys
import types as _types
from typing import Callable as _Callable

__all__: list[str] = []


def public_names(module: _types.ModuleType) -> list[str]:
    """What ``dir(module)`` reports: ``__all__``, the public submodules already imported,
    and the underscore names (which tab completion hides anyway)."""
    namespace = vars(module)
    exported = set(namespace.get("__all__", ()))
    submodules = {name for name, value in namespace.items()
                  if isinstance(value, _types.ModuleType) and not name.startswith("_")
                  and value.__name__ == f"{module.__name__}.{name}"}
    private = {name for name in namespace if name.startswith("_")}
    return sorted(exported | submodules | private)


def hide_imports(module_name: str) -> _Callable[[], list[str]]:
    """A module ``__dir__`` for ``module_name``: ``__dir__ = hide_imports(__name__)`` at the
    end of the module, or ``module.__dir__ = hide_imports(module.__name__)`` from its
    package."""
    def __dir__() -> list[str]:
        return public_names(_sys.modules[module_name])
    return __dir__


def hide_imports_below(package_name: str) -> None:
    """Give ``package_name`` and every submodule of it imported so far that defines
    ``__all__`` the ``__dir__`` of :func:`hide_imports`: one call at the end of a package's
    ``__init__.py`` instead of one line per module. Modules imported later need their own
    ``__dir__ = hide_imports(__name__)``."""
    prefix = package_name + "."
    for name, module in list(_sys.modules.items()):
        if (name == package_name or name.startswith(prefix)) and module is not None \
                and hasattr(module, "__all__") and "__dir__" not in vars(module):
            module.__dir__ = hide_imports(name)  # type: ignore[method-assign]
