"""The API reference pages, docs/reference/*.md, are what tools/reference_docs.py generates
from the docstrings now: a docstring changed, or a public name added, without regenerating
the pages fails here. Every public function and class on the pages has a docstring."""
from __future__ import annotations

import os

import pytest

from conftest import load_tool

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
tool = load_tool("reference_docs")
FIX = f"run: {tool.COMMAND}"


@pytest.mark.parametrize("module", list(tool.PAGES))
def test_reference_page_is_current(module):
    path = tool.page_path(module)
    rel = os.path.relpath(path, ROOT)
    assert os.path.exists(path), f"{rel} is missing; {FIX}"
    current = open(path, encoding="utf-8").read()
    assert tool.MARKER in current, f"{rel} has no generated part; {FIX}"
    assert tool.page(module, current) == current, f"{rel} is stale; {FIX}"


def test_every_page_is_listed():
    """Each file in docs/reference/ is a generated page (none is left behind)."""
    names = sorted(f[:-3] for f in os.listdir(tool.REFERENCE) if f.endswith(".md"))
    assert names == sorted(tool.PAGES)


def test_public_names_have_docstrings():
    """The functions and classes on the pages have docstrings. Methods and properties without
    one are reported (printed, shown with ``-rA`` or ``-s``), not failed: the properties of
    small result classes (``ShardedArray.shape``) say what their name says."""
    missing = [n for m in tool.PAGES for n in tool.undocumented(m)]
    assert not missing, "no docstring: " + ", ".join(missing) + "; write one, then " + FIX
    members = [n for m in tool.PAGES for n in tool.undocumented(m, methods=True)]
    if members:
        print("methods and properties without a docstring: " + ", ".join(members))
