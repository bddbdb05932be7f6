"""Printing: ``repr``/``str``/``format`` of clnp arrays are NumPy's strings for the same
values, string for string, for every shape and dtype and under NumPy's print options; and
clnp's print-option functions are NumPy's (issue #12 item 3)."""
from __future__ import annotations

import numpy as np
import pytest

import clnp

RNG = np.random.default_rng(3)

CASES = {
    "0d-float": np.array(3.5),
    "0d-int": np.array(-7, np.int16),
    "0d-bool": np.array(True),
    "0d-complex": np.array(1 - 2j, np.complex64),
    "0d-nan": np.array(np.nan, np.float32),
    "empty-1d": np.array([], np.float32),
    "empty-2d": np.zeros((0, 3)),
    "empty-int": np.zeros((2, 0), np.int8),
    "int64": np.arange(10),
    "int8-2d": np.arange(12, dtype=np.int8).reshape(3, 4) - 6,
    "uint16": np.array([0, 65535], np.uint16),
    "uint64": np.array([2 ** 64 - 1, 3], np.uint64),
    "int32-3d": RNG.integers(-1000, 1000, size=(2, 3, 4)).astype(np.int32),
    "bool": RNG.normal(size=(3, 5)) > 0,
    "float64": RNG.normal(size=(4, 3)),
    "float32": RNG.normal(size=7).astype(np.float32),
    "float16": np.array([0.1, 1.5, 65504], np.float16),
    "float-wide-range": np.array([1e-10, 1.0, 1e10]),
    "float-small": np.array([1e-5, 2e-7]),
    "float-integral": np.array([1.0, 2.0, -3.0]),
    "float-special": np.array([np.nan, np.inf, -np.inf, -0.0, 0.0]),
    "complex128": RNG.normal(size=(2, 3)) + 1j * RNG.normal(size=(2, 3)),
    "complex64": (RNG.normal(size=4) - 2j).astype(np.complex64),
    "long-line": RNG.normal(size=40),
    "summarized-1d": np.arange(5000),
    "summarized-float": RNG.normal(size=1500) * 1e4,
    "summarized-2d": RNG.normal(size=(60, 70)).astype(np.float32),
    "summarized-3d": RNG.integers(0, 9, size=(12, 11, 10)),
    "summarized-bool": RNG.normal(size=(2000,)) > 0,
    "summarized-complex": (RNG.normal(size=1200) + 1j).astype(np.complex64),
    "summarized-narrow": RNG.normal(size=(3000, 2)),
    "summarized-empty-axis": np.zeros((0, 3000)),
    "strided-view": np.arange(3000.0)[::-3],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_repr_str_match_numpy(device, name):
    a = CASES[name]
    x = clnp.asarray(a, device=device)
    assert repr(x) == repr(a)
    assert str(x) == str(a)
    assert f"{x}" == f"{a}"


OPTIONS = [
    {"precision": 3},
    {"precision": 2, "suppress": True},
    {"threshold": 20, "edgeitems": 2},
    {"threshold": 5, "edgeitems": 1, "linewidth": 30},
    {"linewidth": 40},
    {"floatmode": "unique"},
    {"floatmode": "fixed", "precision": 4},
    {"sign": "+"},
    {"sign": " "},
    {"formatter": {"float": lambda v: f"{v:.1f}"}},
    {"nanstr": "NaN", "infstr": "Inf"},
    {"legacy": "1.25"},
    {"threshold": 10 ** 9},
]


@pytest.mark.parametrize("opts", OPTIONS, ids=[str(sorted(o)) for o in OPTIONS])
def test_print_options_apply_to_clnp_arrays(device, opts):
    with clnp.printoptions(**opts):
        for name in ("float64", "float-special", "summarized-2d", "summarized-1d", "int8-2d",
                     "complex128", "0d-float", "long-line", "summarized-narrow"):
            a = CASES[name]
            x = clnp.asarray(a, device=device)
            assert repr(x) == repr(a), name
            assert str(x) == str(a), name


def test_set_get_printoptions_are_numpys():
    before = clnp.get_printoptions()
    assert before == np.get_printoptions()
    try:
        clnp.set_printoptions(precision=2)
        assert np.get_printoptions()["precision"] == 2
        assert str(clnp.asarray([1 / 3])) == "[0.33]"
    finally:
        clnp.set_printoptions(**before)
    assert clnp.get_printoptions() == before


def test_summarized_print_downloads_only_edges(device):
    """A summarized array prints from the items NumPy shows: the text must not depend on the
    elided middle (here the middle holds values that would widen the columns)."""
    a = np.zeros(10000)
    a[5000] = 123456.789
    x = clnp.asarray(a, device=device)
    assert repr(x) == repr(a)
    assert "123456" not in repr(x)


def test_string_functions(device):
    a = CASES["float64"]
    x = clnp.asarray(a, device=device)
    assert clnp.array2string(x, precision=2, separator=", ") == \
        np.array2string(a, precision=2, separator=", ")
    assert clnp.array_repr(x, precision=3) == np.array_repr(a, precision=3)
    assert clnp.array_str(x, max_line_width=30) == np.array_str(a, max_line_width=30)
    assert np.array2string(x) == np.array2string(a)  # through __array_function__
    assert clnp.format_float_positional(np.float32(0.1)) == "0.1"
    assert clnp.binary_repr(5) == "101" and clnp.base_repr(255, 16) == "FF"


def test_format_of_0d(device):
    x = clnp.asarray(2.0 / 3.0, device=device)
    assert f"{x:.3f}" == "0.667"
    assert f"{clnp.sum(clnp.arange(4, device=device))}" == "6"
