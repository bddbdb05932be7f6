"""Docstrings: every example in the public API's docstrings runs as a doctest, and the
public functions carry NumPy's sections (Parameters, Returns, Raises, Examples).

The public API is what the public modules list in ``__all__`` (tests/test_namespace.py keeps
those lists honest). Examples import what they use, print through NumPy or with small
integers and exactly representable floats, so their output is the same on every device and
with or without float64 (test_docstring_examples_without_fp64_or_fp16 runs them all again as
on a device without either).
"""
from __future__ import annotations

import doctest
import importlib
import inspect
import os
import pkgutil
import re
import subprocess
import sys
import types

import pytest

from clnp._runtime.deferred import resolve

PACKAGES = ("clnp", "clnp_grad", "clnp_nn")
SECTIONS = ("Parameters", "Returns", "Raises", "Examples")

# Defining modules whose public functions (and the public methods of their public classes)
# have all been written in NumPy's format: here a function without Parameters (when it takes
# any), Returns and Examples fails the test. The modules not listed yet are reported by
# test_docstring_coverage, not enforced.
ENFORCED = {
    "clnp_grad", "clnp_grad._ad", "clnp_grad._derived", "clnp_grad._tree", "clnp_grad._vmap",
    "clnp_grad._ir", "clnp_grad._jit.api", "clnp_grad.lax", "clnp_grad.random",
    "clnp", "clnp._array_api.creation", "clnp._array_api.cumulative",
    "clnp._array_api.data_types", "clnp._array_api.info", "clnp._array_api.manipulation", "clnp._runtime.memory",
    "clnp._array_api.searching", "clnp._array_api.sets", "clnp._array_api.sorting",
    "clnp._array_api.statistical", "clnp._array_api.utility", "clnp.fft", "clnp.random",
    "clnp.emath", "clnp._numpy.emath",
    "clnp._array_api.indexing", "clnp._routines.dot_general", "clnp._routines.autotune", "clnp._numpy.host_io",
    "clnp._core.scalar_types",
    "clnp.linalg", "clnp._array_api.linear_algebra", "clnp._runtime.device",
    "clnp._array_api.elementwise", "clnp._array_api.ufunc",
    "clnp._numpy.array_likes", "clnp._numpy.comparisons", "clnp._numpy.counting",
    "clnp._numpy.creation", "clnp._numpy.diagonals", "clnp._numpy.einsum",
    "clnp._numpy.elementwise", "clnp._numpy.errstate", "clnp._numpy.interpolation",
    "clnp._numpy.manipulation", "clnp._numpy.queries", "clnp._numpy.reductions",
    "clnp._numpy.rounding", "clnp._numpy.statistics",
    "clnp_grad._collectives", "clnp._routines.custom_kernels", "clnp_nn.data",
    "clnp_nn.amp", "clnp_nn.checkpoint", "clnp_nn.functional._conv_algo",
    "clnp_nn.functional._kernels", "clnp_nn.functional.activation",
    "clnp_nn.functional.attention", "clnp_nn.functional.conv", "clnp_nn.functional.dropout",
    "clnp_nn.functional.embedding", "clnp_nn.functional.linear", "clnp_nn.functional.loss",
    "clnp_nn.functional.normalization", "clnp_nn.functional.pooling",
    "clnp_nn.modules._module", "clnp_nn.modules.init", "clnp_nn.optim._alias",
    "clnp_nn.optim._base", "clnp_nn.optim._clipping", "clnp_nn.optim._masking",
    "clnp_nn.optim._schedules", "clnp_nn.optim._transforms", "clnp_nn.parallel.api",
    "clnp_nn.parallel.mpi", "clnp_nn.parallel.sharded", "clnp_nn.parallel.transport",
    "clnp_nn.parallel.nccl",
    "clnp._numpy.index_helpers", "clnp._numpy.math", "clnp._numpy.polynomial", "clnp._numpy.selection", "clnp._numpy.sets",
    "clnp._numpy.shape", "clnp._numpy.windows", "clnp.lib.stride_tricks", "clnp._numpy.misc",
    "clnp.random._distributions",
}


def _public_modules() -> list[types.ModuleType]:
    mods = []
    for package in PACKAGES:
        pkg = importlib.import_module(package)
        mods.append(pkg)
        for info in pkgutil.walk_packages(pkg.__path__, prefix=package + "."):
            if not any(p.startswith("_") for p in info.name.split(".")):
                mods.append(resolve(importlib.import_module(info.name)))
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
# the array type's methods are documented with the array API, not counted here
METHODS_ELSEWHERE = {"clnp._core.array", "clnp._core.operators"}


def _public_methods() -> dict[str, object]:
    """Qualified name -> function: the public methods (no leading underscore, and
    ``__call__``; properties left out) defined in the bodies of the public classes, the array
    type's excepted."""
    found: dict[str, object] = {}
    for qualname, cls in OBJECTS.items():
        if not inspect.isclass(cls) or _home(cls) in METHODS_ELSEWHERE:
            continue
        for name, attr in vars(cls).items():
            fun = attr.__func__ if isinstance(attr, (staticmethod, classmethod)) else attr
            public = not name.startswith("_") or name == "__call__"
            if public and inspect.isfunction(fun) and fun.__module__.split(".")[0] in PACKAGES:
                found[f"{qualname}.{name}"] = fun
    return found


METHODS = _public_methods()


def _sections(doc: str | None) -> set[str]:
    return {s for s in ("Parameters", "Returns", "Yields", "Raises", "Examples", "See Also",
                        "Notes") if doc and re.search(rf"^{s}\n-{{3,}}\s*$", doc, re.M)}


def _takes_parameters(fun: object) -> bool:
    try:
        params = list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        return True
    return bool(params[1:] if params[:1] in (["self"], ["cls"]) else params)


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
                mods.append(resolve(importlib.import_module(info.name)))
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


_WITHOUT_FP64 = """
import doctest, sys
sys.path[:0] = [{tests!r}, {root!r}]
import clnp
for d in clnp.devices():
    d.has_fp64 = d.has_fp16 = False
import test_docstrings as t
failed = []
for test in t.DOCTESTS:
    test.globs = t._globs()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report = []
    if runner.run(test, out=report.append, clear_globs=True).failed:
        failed.append("".join(report))
print(f"{{len(failed)}} of {{len(t.DOCTESTS)}} failed")
print("\\n".join(failed)[-8000:])
sys.exit(1 if failed else 0)
"""


def test_docstring_examples_without_fp64_or_fp16():
    """Every example gives the same output on a device without ``cl_khr_fp64`` and
    ``cl_khr_fp16``: all of them run again in a fresh process whose devices report neither,
    so clnp's default dtypes and dtype checks are those of such a device (the kernels still
    compile here)."""
    tests_dir = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(tests_dir)
    code = _WITHOUT_FP64.format(tests=tests_dir, root=root)
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True,
                         text=True, timeout=1200)
    assert out.returncode == 0, out.stdout[-8000:] + out.stderr[-4000:]
    assert out.stdout.startswith("0 of "), out.stdout[:200]


def test_enforced_modules_have_numpy_sections():
    """Every public function defined in an ENFORCED module has NumPy's sections."""
    bad = [f"{name} ({_home(fun)}): missing {', '.join(missing)}"
           for name, fun in FUNCTIONS.items()
           if _home(fun) in ENFORCED and (missing := _missing_sections(fun))]
    assert not bad, "docstrings without NumPy's sections:\n  " + "\n  ".join(bad)


def test_enforced_classes_have_numpy_method_docstrings():
    """Every public method of a public class defined in an ENFORCED module has NumPy's
    sections (the array type's methods are documented with the array API)."""
    bad = [f"{name} ({_home(fun)}): missing {', '.join(missing)}"
           for name, fun in METHODS.items()
           if _home(fun) in ENFORCED and (missing := _missing_sections(fun))]
    assert not bad, "method docstrings without NumPy's sections:\n  " + "\n  ".join(bad)


def _parameter_entries(doc: str) -> list[tuple[list[str], bool]]:
    """The entries of a docstring's Parameters section: (names, has a description)."""
    m = re.search(r"^Parameters\n-{3,}\n(.*?)(?:\n\n(?=\S[^\n]*\n-{3,}\s*$)|\Z)", doc,
                  re.M | re.S)
    if not m:
        return []
    lines = m.group(1).splitlines()
    entries = []
    for i, line in enumerate(lines):
        if line and not line[0].isspace():
            names = [n.strip().lstrip("*") for n in line.split(" : ")[0].split(",")]
            described = i + 1 < len(lines) and lines[i + 1][:1].isspace()
            entries.append((names, described))
    return entries


def test_parameters_sections_match_the_signatures():
    """In the enforced modules the Parameters section lists every parameter of the
    signature (NumPy's extra keywords of the namespace functions included), each with a
    description, and nothing else (so the docs follow renames)."""
    bad = []
    for name, fun in {**FUNCTIONS, **METHODS}.items():
        if _home(fun) not in ENFORCED:
            continue
        try:
            params = list(inspect.signature(fun).parameters)
        except (TypeError, ValueError):
            continue
        if name in METHODS and params[:1] in (["self"], ["cls"]):
            params = params[1:]
        documented = []
        for names, described in _parameter_entries(inspect.getdoc(fun) or ""):
            documented += names
            if not described:
                bad.append(f"{name}: parameter {', '.join(names)} has no description")
            unknown = [n for n in names if n not in params]
            if unknown:
                bad.append(f"{name}: documents {unknown}, not in the signature {params}")
        missing = [p for p in params if p not in documented]
        if missing:
            bad.append(f"{name}: parameters {missing} are not documented")
    assert not bad, "\n  ".join(["Parameters sections:"] + bad)


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
    methods_ok = sum(not _missing_sections(fun) for fun in METHODS.values())
    lines.append(f"Public methods of public classes (the array type's excepted): {methods_ok} "
                 f"of {len(METHODS)} with NumPy's sections")
    with capsys.disabled():
        print("\n" + "\n".join(lines))
    assert methods_ok >= 82, "\n".join(lines)
    assert complete >= 454, "\n".join(lines)
