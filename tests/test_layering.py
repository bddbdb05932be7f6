"""Layering: implementation modules (eager implementations, dispatch, autotuning, the runtime,
the kernel generators) never import a namespace module (issue #12, item 5)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "clnp"

# the public namespace: modules defining user-facing functions, and the package itself
NAMESPACE = {
    "clnp", "clnp.fft", "clnp.linalg", "clnp.random", "clnp._array_api.creation",
    "clnp._array_api.data_types", "clnp._array_api.elementwise", "clnp._array_api.indexing",
    "clnp._array_api.manipulation", "clnp._array_api.statistical",
    "clnp._array_api.searching", "clnp._array_api.cumulative", "clnp._array_api.utility",
    "clnp._array_api.sorting", "clnp._array_api.sets", "clnp._array_api.linear_algebra",
    "clnp._numpy.functions", "clnp._array_api.ufunc", "clnp._numpy.signatures",
}

IMPLEMENTATION = sorted([*ROOT.glob("_eager*.py"), ROOT / "_dispatch.py",
                         ROOT / "_autotune.py", ROOT / "_runtime.py",
                         ROOT / "_promotion.py", *(ROOT / "_codegen").glob("*.py")])


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(path: Path) -> set[str]:
    return imports_of(path.read_text(), _module_name(path), path.name == "__init__.py")


def imports_of(source: str, mod: str, is_package: bool = False) -> set[str]:
    """Every module an ``import``/``from ... import`` anywhere in ``source`` (module ``mod``)
    names, function bodies included, resolved to absolute names; ``from pkg import name``
    counts as ``pkg.name`` too, since ``name`` may be a submodule, and as ``pkg`` unless it
    is ``from . import name`` (which runs the package's ``__init__`` but binds only name)."""
    package = mod.split(".") if is_package else mod.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package[:len(package) - node.level + 1])
                src = f"{base}.{node.module}" if node.module else base
            else:
                src = node.module or ""
            if node.module:
                found.add(src)
            found.update(f"{src}.{a.name}" for a in node.names)
    return found


def test_the_checked_modules_exist():
    names = {p.name for p in IMPLEMENTATION}
    assert {"_eager.py", "_eager_search.py", "_dispatch.py", "_autotune.py", "_runtime.py",
            "elementwise.py", "reduction.py"} <= names


@pytest.mark.parametrize("path", IMPLEMENTATION, ids=lambda p: _module_name(p))
def test_implementation_never_imports_the_namespace(path):
    bad = sorted(imported_modules(path) & NAMESPACE)
    assert not bad, f"{_module_name(path)} imports namespace module(s) {bad}"


def test_the_checker_sees_imports_inside_functions():
    # function-level imports of the namespace are what _autotune.py and _dispatch.py used to do
    src = ("from . import _dtypes\n"
           "def f():\n    import clnp\n    from ._elementwise_functions import add\n"
           "    from clnp.linalg import norm\n")
    found = imports_of(src, "clnp._probe")
    assert found & NAMESPACE == {"clnp", "clnp._array_api.elementwise", "clnp.linalg"}
    assert "clnp._runtime.dtypes" in found
