"""Ordinary NumPy scripts run unchanged with ``import clnp as np`` (issue #12, "Must show").

Each file in tests/numpy_scripts/ is a script written for NumPy (``import numpy as np``,
then printing its results). It runs twice: as written, and with that one line changed to
``import clnp as np``. The printed text must match: identical, or identical up to the last
digits of printed floats (a device's ``sin`` or summation order may differ from NumPy's in
the last bit; a float printed with all its digits then differs there). Print options a script
sets are restored afterwards.

Together with the two programs in tests/test_numpy_programs.py these make 24 NumPy programs.
"""
from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import numpy
import pytest

import clnp

SCRIPTS = sorted((Path(__file__).parent / "numpy_scripts").glob("*.py"))
NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:e[-+]?\d+)?|\bnan\b|\binf\b")


def run_script(source: str, name: str) -> str:
    out = io.StringIO()
    options = numpy.get_printoptions()
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(source, name, "exec"), {"__name__": "__main__"})
    finally:
        numpy.set_printoptions(**options)
    return out.getvalue()


def split_numbers(text: str) -> tuple[str, list[float]]:
    """The text with every number replaced by '#' (whitespace collapsed: column padding
    follows the printed digits), and the numbers."""
    numbers = [float(m) for m in NUMBER.findall(text)]
    skeleton = re.sub(r"\s+", " ", NUMBER.sub("#", text))
    return skeleton, numbers


def assert_same_output(got: str, ref: str) -> None:
    if got == ref:
        return
    gs, gn = split_numbers(got)
    rs, rn = split_numbers(ref)
    assert gs == rs, f"printed text differs:\n--- numpy\n{ref}\n--- clnp\n{got}"
    assert len(gn) == len(rn)
    numpy.testing.assert_allclose(gn, rn, rtol=1e-6, atol=1e-9,
                                  err_msg=f"--- numpy\n{ref}\n--- clnp\n{got}")


def test_there_are_twenty_scripts():
    assert len(SCRIPTS) >= 20


@pytest.mark.parametrize("path", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_numpy_script_runs_unchanged(device, path):
    source = path.read_text()
    assert source.count("import numpy as np") == 1, "a script imports NumPy once, as np"
    ref = run_script(source, str(path))
    assert ref.strip(), "the script prints its results"
    prev = clnp.default_device()
    clnp.set_default_device(device)
    try:
        got = run_script(source.replace("import numpy as np", "import clnp as np"), str(path))
    finally:
        clnp.set_default_device(prev)
    assert_same_output(got, ref)


def test_comparison_is_strict():
    """The comparison fails on a different word or a different number."""
    assert_same_output("x = 1.00000001\n", "x = 1.0\n")
    with pytest.raises(AssertionError):
        assert_same_output("x = 1.1\n", "x = 1.0\n")
    with pytest.raises(AssertionError):
        assert_same_output("y = 1.0\n", "x = 1.0\n")
    with pytest.raises(AssertionError):
        assert_same_output("[1 2]\n", "[1 2 3]\n")
