"""Docstrings: every example in the public API's docstrings runs as a doctest, and the
public functions carry NumPy's sections (Parameters, Returns, Raises, Examples).

The public API is what the public modules list in ``__all__`` (tests/test_namespace.py keeps
those lists honest). Examples import what they use, print through NumPy or with small
integers and exactly representable floats, so their output is the same on every device and
with or without float64.
"""
from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil
import re
import types

import pytest

PACKAGES = ("clnp", "clnp_grad", "clnp_nn")
SECTIONS = ("Parameters", "Returns", "Raises", "Examples")

# Defining modules whose public functions have all been written in NumPy's format: here a
# function without Parameters (when it takes any), Returns and Examples fails the test. The
# modules not listed yet are reported by test_docstring_coverage, not enforced.
ENFORCED = {
    "clnp_grad", "clnp_grad._ad", "clnp_grad._derived", "clnp_grad._tree", "clnp_grad._vmap",
    "clnp_grad._ir", "clnp_grad._jit.api", "clnp_grad.lax", "clnp_grad.random",
    "clnp", "clnp._creation_functions", "clnp._cumulative_functions",
    "clnp._data_type_functions", "clnp._info", "clnp._manipulation_functions", "clnp._memory",
    "clnp._searching_functions", "clnp._set_functions", "clnp._sorting_functions",
    "clnp._statistical_functions", "clnp._utility_functions", "clnp.fft", "clnp.random",
    "clnp._indexing", "clnp._eager_linalg", "clnp._autotune",
    "clnp._np_indexing", "clnp._np_math", "clnp._np_poly", "clnp._np_select", "clnp._np_sets",
    "clnp._np_shape", "clnp._np_windows", "clnp.lib.stride_tricks", "clnp._np_misc",
    "clnp._random_dists",
}


def _public_modules() -> list[types.ModuleType]:
    mods = []
    for package in PACKAGES:
        pkg = importlib.import_module(package)
        mods.append(pkg)
        for info in pkgutil.walk_packages(pkg.__path__, prefix=package + "."):
            if not any(p.startswith("_") for p in info.name.split(".")):
                mods.append(importlib.import_module(info.name))
    return mods


def _public_objects() -> dict[str, object]:
    """Qualified public name -> object: functions and classes of every public module's
    ``__all__``, each object once (under the first module that exports it)."""
    found: dict[str, object] = {}
    ids: set[int] = set()
    for mod in _public_modules():
        for name in getattr(mod, "__all__", ()):
            obj = getattr(mod, name)
            if callable(obj) and id(obj) not in ids:
                if _home(obj).split(".")[0] not in PACKAGES:
                    continue  # a re-exported NumPy class (SeedSequence) or dtype
                ids.add(id(obj))
                found[f"{mod.__name__}.{name}"] = obj
    return found


def _home(obj: object) -> str:
    """The defining module: a function's or class's own, a callable object's (a ufunc)
    from its ``__module__`` or its class."""
    home = getattr(obj, "__module__", None)
    return home if isinstance(home, str) else type(obj).__module__


OBJECTS = _public_objects()
# public functions: plain functions and callable objects such as ufuncs; classes are not
# counted (their docstrings' examples still run above)
FUNCTIONS = {k: v for k, v in OBJECTS.items() if not inspect.isclass(v)}


def _sections(doc: str | None) -> set[str]:
    return {s for s in ("Parameters", "Returns", "Yields", "Raises", "Examples", "See Also",
                        "Notes") if doc and re.search(rf"^{s}\n-{{3,}}\s*$", doc, re.M)}


def _takes_parameters(fun: object) -> bool:
    try:
        return bool(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        return True


def _missing_sections(fun: object) -> list[str]:
    """The NumPy sections a function's docstring lacks (Raises is reported, not required:
    a function may have nothing of its own to raise)."""
    have = _sections(inspect.getdoc(fun))
    need = ["Returns", "Examples"] + (["Parameters"] if _takes_parameters(fun) else [])
    if "Yields" in have:
        need.remove("Returns")
    return [s for s in need if s not in have]


def _all_modules() -> list[types.ModuleType]:
    """Every module of the packages, private ones included (``__main__`` runs a workload on
    import, so it is left out)."""
    mods = []
    for package in PACKAGES:
        pkg = importlib.import_module(package)
        mods.append(pkg)
        for info in pkgutil.walk_packages(pkg.__path__, prefix=package + "."):
            if not info.name.endswith("__main__"):
                mods.append(importlib.import_module(info.name))
    return mods


def _doctests() -> list[doctest.DocTest]:
    """Every docstring example: those of the public objects under their public names, then
    any other example in any module (methods of returned objects such as ``Info``)."""
    finder = doctest.DocTestFinder(recurse=True, exclude_empty=True)
    tests, seen_names, seen_docs = [], set(), set()

    def add(test: doctest.DocTest) -> None:
        key = (test.filename, test.lineno, test.docstring)
        if test.examples and test.name not in seen_names and key not in seen_docs:
            seen_names.add(test.name)
            seen_docs.add(key)
            tests.append(test)
    for qualname, obj in OBJECTS.items():
        for test in finder.find(obj, qualname, globs={}):
            add(test)
    for mod in _all_modules():
        for test in finder.find(mod, mod.__name__, globs={}):
            add(test)
    return sorted(tests, key=lambda t: t.name)


DOCTESTS = _doctests()


def _globs() -> dict:
    import numpy

    import clnp
    import clnp_grad
    # ``np`` is clnp, as in the README's ``import clnp as np``; NumPy is ``numpy``
    return {"numpy": numpy, "clnp": clnp, "np": clnp, "cg": clnp_grad, "clnp_grad": clnp_grad}


@pytest.mark.parametrize("test", DOCTESTS, ids=lambda t: t.name)
def test_docstring_examples(test):
    test.globs = _globs()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report: list[str] = []
    result = runner.run(test, out=report.append, clear_globs=True)
    if result.failed:
        pytest.fail("".join(report), pytrace=False)


def test_there_are_doctests():
    assert len(DOCTESTS) >= 50, len(DOCTESTS)


def test_enforced_modules_have_numpy_sections():
    """Every public function defined in an ENFORCED module has NumPy's sections."""
    bad = [f"{name} ({_home(fun)}): missing {', '.join(missing)}"
           for name, fun in FUNCTIONS.items()
           if _home(fun) in ENFORCED and (missing := _missing_sections(fun))]
    assert not bad, "docstrings without NumPy's sections:\n  " + "\n  ".join(bad)


def test_docstring_coverage(capsys):
    """Print how many public functions have NumPy-format docstrings, per defining module.
    Enforced modules are checked above; this reports the rest and keeps a floor."""
    per_module: dict[str, list[int]] = {}
    complete = raises = 0
    for fun in FUNCTIONS.values():
        ok = not _missing_sections(fun)
        complete += ok
        raises += "Raises" in _sections(inspect.getdoc(fun))
        counts = per_module.setdefault(_home(fun), [0, 0])
        counts[0] += ok
        counts[1] += 1
    lines = [f"NumPy-format docstrings (Parameters, Returns, Examples): {complete} of "
             f"{len(FUNCTIONS)} public functions; with a Raises section: {raises}"]
    for mod, (ok, total) in sorted(per_module.items()):
        mark = "enforced" if mod in ENFORCED else ("complete" if ok == total else "todo")
        lines.append(f"  {mod:40s} {ok:3d} / {total:3d}  {mark}")
    with capsys.disabled():
        print("\n" + "\n".join(lines))
    assert complete >= 217, "\n".join(lines)
