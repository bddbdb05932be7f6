"""Namespace hygiene: every public module defines ``__all__``, its ``dir()`` lists that API and
not the module's imports, and every public function or class it defines is exported.

The modules are discovered, not listed, so a public module added later (``clnp_nn.optim``...)
is checked too. A failure names the module, the name, and the file to edit.
"""
from __future__ import annotations

import importlib
import inspect
import pkgutil
import types

import pytest

from clnp._runtime.deferred import resolve

PACKAGES = ("clnp", "clnp_grad", "clnp_nn")


def _public_modules() -> list[str]:
    names = []
    for package in PACKAGES:
        names.append(package)
        pkg = importlib.import_module(package)
        for info in pkgutil.walk_packages(pkg.__path__, prefix=package + "."):
            if not any(part.startswith("_") for part in info.name.split(".")):
                names.append(info.name)
    return sorted(names)


MODULES = _public_modules()
HOW = ("list it in __all__ of {file} if it is public API, else import it under a private name "
       "(`import x as _x`) or end the module with "
       "`from clnp._namespace import hide_imports as _hide_imports; "
       "__dir__ = _hide_imports(__name__)` (for a whole package: "
       "`clnp._namespace.hide_imports_below(__name__)` at the end of its __init__.py)")


def _module(name: str) -> types.ModuleType:
    return resolve(importlib.import_module(name))


def _public_submodules(mod: types.ModuleType) -> set[str]:
    return {n for n, v in vars(mod).items() if isinstance(v, types.ModuleType)
            and v.__name__ == f"{mod.__name__}.{n}" and not n.startswith("_")}


def test_discovers_the_public_modules():
    for name in ("clnp", "clnp.linalg", "clnp.fft", "clnp.random", "clnp_grad",
                 "clnp_grad.lax", "clnp_grad.random", "clnp_nn"):
        assert name in MODULES
    assert not any("._" in name for name in MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_all_is_defined_and_resolves(name):
    mod = _module(name)
    public = [n for n in dir(mod) if not n.startswith("_")]
    if not hasattr(mod, "__all__") and not public:
        return  # an empty package (clnp_nn before its layers) has nothing to list
    assert hasattr(mod, "__all__"), (
        f"{name} ({mod.__file__}) has no __all__ but shows {public} in dir(): list its "
        f"public names in __all__")
    exported = list(mod.__all__)
    assert all(isinstance(n, str) for n in exported), f"{name}.__all__ holds a non-string"
    duplicates = sorted({n for n in exported if exported.count(n) > 1})
    assert not duplicates, f"{name}.__all__ lists {duplicates} twice"
    unresolved = [n for n in exported if not hasattr(mod, n)]
    assert not unresolved, (
        f"{name}.__all__ lists {unresolved}, which {name} does not define ({mod.__file__})")


@pytest.mark.parametrize("name", MODULES)
def test_dir_lists_no_private_names(name):
    mod = _module(name)
    allowed = set(getattr(mod, "__all__", ())) | _public_submodules(mod)
    leaked = [n for n in dir(mod) if not n.startswith("_") and n not in allowed]
    assert not leaked, (f"dir({name}) shows {leaked}, which are not in {name}.__all__: "
                        + HOW.format(file=mod.__file__))


@pytest.mark.parametrize("name", MODULES)
def test_public_definitions_are_exported(name):
    """A public function or class defined in the module is in its __all__, so it shows in
    dir() and in the API reference (the site documents __all__)."""
    mod = _module(name)
    exported = set(getattr(mod, "__all__", ()))
    unexported = [n for n, v in vars(mod).items()
                  if not n.startswith("_") and (inspect.isfunction(v) or inspect.isclass(v))
                  and v.__module__ == name and n not in exported]
    assert not unexported, (
        f"{name} defines {unexported} but its __all__ does not list them: add them to __all__ "
        f"in {mod.__file__}, or rename them with a leading '_' if they are internal")


@pytest.mark.parametrize("name", MODULES)
def test_issue_examples_do_not_leak(name):
    """The names issue #14 found in dir(clnp_grad) and dir(clnp.random)."""
    shown = set(dir(_module(name))) - set(getattr(_module(name), "__all__", ()))
    leaked = shown & {"Any", "annotations", "np", "math", "dt", "normalize_axis", "operator",
                      "primitive", "Sequence", "Callable"}
    assert not leaked, f"dir({name}) shows {sorted(leaked)}"


def test_dir_keeps_the_api_and_submodules():
    import clnp
    import clnp_grad
    shown = dir(clnp)
    assert set(clnp.__all__) <= set(shown)
    assert {"linalg", "fft", "random"} <= set(shown)
    assert "__version__" in shown and "__array_namespace_info__" in shown
    assert {"grad", "jit", "lax", "random", "tree_map"} <= set(dir(clnp_grad))


def test_star_import_gives_all():
    import clnp
    ns: dict = {}
    exec("from clnp import *", ns)
    assert set(ns) - {"__builtins__"} == set(clnp.__all__)
    ns = {}
    exec("from clnp_grad import *", ns)
    assert {"grad", "vmap", "jit", "lax", "random"} <= set(ns)


def test_array_api_compat_detects_clnp():
    array_api_compat = pytest.importorskip("array_api_compat")
    import clnp
    x = clnp.asarray([1.0, 2.0])
    assert array_api_compat.array_namespace(x) is clnp
    assert array_api_compat.is_array_api_obj(x)


def test_hide_imports_below_covers_a_package(tmp_path, monkeypatch):
    """The one-call form for packages: the package and its imported submodules list only
    their __all__ in dir(); a module without __all__ is left alone."""
    pkg = tmp_path / "hygiene_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "import math\nfrom . import sub\nfrom .sub import f\n__all__ = ['f', 'sub']\n"
        "from clnp._namespace import hide_imports_below\nhide_imports_below(__name__)\n")
    (pkg / "sub.py").write_text("import os\n__all__ = ['f']\ndef f():\n    return 1\n")
    (pkg / "plain.py").write_text("import os\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import hygiene_pkg
    assert [n for n in dir(hygiene_pkg) if not n.startswith("_")] == ["f", "sub"]
    assert [n for n in dir(hygiene_pkg.sub) if not n.startswith("_")] == ["f"]
    import hygiene_pkg.plain  # imported later, without __all__: untouched, listed as submodule
    assert "os" in dir(hygiene_pkg.plain)
    assert [n for n in dir(hygiene_pkg) if not n.startswith("_")] == ["f", "plain", "sub"]
