"""The package stack (docs/architecture.md): every import, at the top of a module or inside a
function, goes down the stack or stays in its layer, and no import cycle is longer than 3
modules (issue #23).

    clnp._runtime -> clnp._kernels -> clnp._core -> clnp._routines -> clnp._array_api
      -> clnp._numpy -> the public face (clnp, clnp.fft, clnp.linalg, clnp.random, clnp.lib,
      clnp.tune) -> clnp_grad -> clnp_nn

A layer may import the ones before it. Where a lower layer needs an upper operation, the upper
layer hands it in (clnp/_core/namespace.py, clnp/_core/attached.py).
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("clnp", "clnp_grad", "clnp_nn")
STACK = ("clnp._runtime", "clnp._kernels", "clnp._core", "clnp._routines", "clnp._array_api",
         "clnp._numpy", "clnp", "clnp_grad", "clnp_nn")
# the public face: clnp's only modules outside the layer packages
PUBLIC_FACE = {"clnp", "clnp.__main__", "clnp.fft", "clnp.linalg", "clnp.tune", "clnp.prebuild",
               "clnp.emath", "clnp._namespace",
               "clnp.lib", "clnp.lib.stride_tricks", "clnp.random", "clnp.random._distributions"}
MAX_CYCLE = 3
MAX_FLAT_FILES = 12


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules() -> dict[str, Path]:
    return {module_name(p): p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")}


MODULES = all_modules()


def imports_of(source: str, mod: str, is_package: bool, known: set[str]
               ) -> list[tuple[str, int]]:
    """``(module, line)`` of every import in ``source`` (module ``mod``), function bodies
    included, resolved to absolute names of ``known`` modules: ``from pkg import name``
    names ``pkg.name`` when that is a module, else ``pkg``."""
    package = mod.split(".") if is_package else mod.split(".")[:-1]
    found: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for a in node.names:
                name = a.name
                while name and name not in known:
                    name = name.rpartition(".")[0]
                if name:
                    found.append((name, node.lineno))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package[:len(package) - node.level + 1])
                src = f"{base}.{node.module}" if node.module else base
            else:
                src = node.module or ""
            for a in node.names:
                sub = f"{src}.{a.name}"
                target = sub if sub in known else src
                if target in known:
                    found.append((target, node.lineno))
    return found


def layer(mod: str) -> int:
    """Position of ``mod``'s layer in ``STACK`` (its longest matching prefix)."""
    best = -1
    for i, name in enumerate(STACK):
        if (mod == name or mod.startswith(name + ".")) and \
                (best < 0 or len(name) > len(STACK[best])):
            best = i
    return best


def graph() -> dict[str, list[tuple[str, int]]]:
    known = set(MODULES)
    return {m: [(t, ln) for t, ln in imports_of(p.read_text(), m, p.name == "__init__.py", known)
                if t != m]
            for m, p in MODULES.items()}


GRAPH = graph()


def strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components (iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    out.append(sorted(comp))
    return out


def test_every_clnp_module_is_in_a_layer():
    """A module of clnp sits in one of the layer packages or is part of the public face."""
    stray = sorted(m for m in MODULES if m.split(".")[0] == "clnp"
                   and layer(m) == STACK.index("clnp") and m not in PUBLIC_FACE)
    assert not stray, f"modules of clnp outside the layer packages: {stray}"


def test_few_files_directly_in_clnp():
    flat = sorted(p.name for p in (ROOT / "clnp").glob("*.py"))
    assert len(flat) <= MAX_FLAT_FILES, flat


@pytest.mark.parametrize("mod", sorted(MODULES))
def test_no_import_climbs_the_stack(mod):
    bad = [f"{mod} (layer {STACK[layer(mod)]}) imports {t} (layer {STACK[layer(t)]}) at line "
           f"{ln}" for t, ln in GRAPH[mod] if layer(t) > layer(mod)]
    assert not bad, "\n".join(bad)


def test_no_import_cycle_longer_than_three():
    edges = {m: {t for t, _ in GRAPH[m]} for m in GRAPH}
    long = [c for c in strongly_connected(edges) if len(c) > MAX_CYCLE]
    assert not long, f"import cycles over {MAX_CYCLE} modules: {long}"


def test_the_checker_sees_imports_inside_functions():
    src = ("from . import dtypes\n"
           "def f():\n    import clnp\n    from .._array_api.elementwise import add\n"
           "    from clnp.linalg import norm\n")
    found = {t for t, _ in imports_of(src, "clnp._core.probe", False, set(MODULES))}
    assert found == {"clnp._core.dtypes", "clnp", "clnp._array_api.elementwise",
                     "clnp.linalg"}


def test_the_checker_finds_a_climbing_import_and_a_cycle():
    """The checks can fail: a runtime module importing the namespace is reported, naming
    both modules; a cycle of four modules is found."""
    src = "def f():\n    from .._array_api.creation import asarray\n"
    found = imports_of(src, "clnp._runtime.device", False, set(MODULES))
    assert found == [("clnp._array_api.creation", 2)]
    assert layer("clnp._array_api.creation") > layer("clnp._runtime.device")
    ring = {"a": {"b"}, "b": {"c"}, "c": {"d"}, "d": {"a"}, "e": {"a"}}
    assert [c for c in strongly_connected(ring) if len(c) > 1] == [["a", "b", "c", "d"]]


def test_clnp_imports_neither_clnp_grad_nor_clnp_nn():
    bad = [(m, t) for m in GRAPH if m.split(".")[0] == "clnp" for t, _ in GRAPH[m]
           if t.split(".")[0] in ("clnp_grad", "clnp_nn")]
    bad += [(m, t) for m in GRAPH if m.split(".")[0] == "clnp_grad" for t, _ in GRAPH[m]
            if t.split(".")[0] == "clnp_nn"]
    assert not bad, bad


def test_importing_clnp_loads_no_upper_package():
    """At run time too: a fresh ``import clnp`` imports neither clnp_grad nor clnp_nn."""
    import subprocess
    res = subprocess.run([sys.executable, "-c", "import sys, clnp; print(sorted(m for m in "
                          "sys.modules if m.split('.')[0] in ('clnp_grad', 'clnp_nn')))"],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.strip() == "[]", res.stdout


def test_pickles_made_before_the_layout_load():
    """An array and a device pickled by the flat layout (their functions named
    ``clnp._array._unpickle`` and ``clnp._runtime._device_by_index``) still load."""
    import pickle

    import numpy as np

    import clnp
    with open(Path(__file__).parent / "data" / "pickled_before_layout.pkl", "rb") as f:
        data = pickle.load(f)
    np.testing.assert_array_equal(clnp.asnumpy(data["array"]),
                                  np.arange(6, dtype=np.float32).reshape(2, 3))
    assert isinstance(data["device"], clnp.Device)
    again = pickle.loads(pickle.dumps(data["array"]))
    np.testing.assert_array_equal(clnp.asnumpy(again), clnp.asnumpy(data["array"]))
