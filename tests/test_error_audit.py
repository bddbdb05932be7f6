"""Issue #13, item 6: precise errors everywhere.

``tools/error_audit.py`` calls every public function of clnp, clnp.linalg, clnp.fft and
clnp.random with systematic bad input and checks the exception class (NumPy's), the message
(the function, the shapes/dtypes/axis involved), and that nothing ran on the device first.
This module runs it over the whole namespace, so a regression in any function fails here,
and checks that the audit itself can fail. Out-of-range axes raise NumPy's AxisError.
"""
from __future__ import annotations

import numpy as np
import pytest
from conftest import load_tool

import clnp

AxisError = np.exceptions.AxisError


@pytest.fixture(scope="module")
def error_audit():
    return load_tool("error_audit")


def _report(results) -> str:
    return "\n".join(f"{r.kind:8} {r.call}\n         {r.detail}" for r in results)


def test_whole_namespace_passes_the_audit(error_audit):
    rep = error_audit.audit()
    assert len(rep.functions) >= 400, len(rep.functions)
    checked = {r.func for r in rep.results}
    assert len(checked) >= 390, len(checked)        # a valid call found, bad calls derived
    kinds = {r.kind for r in rep.results if r.status == "pass"}
    assert {"junk", "complex", "bool", "shape", "axis", "-axis", "ndim"} <= kinds, kinds
    if len(clnp.devices()) > 1:
        assert "device" in kinds
    assert not rep.failures, f"{len(rep.failures)} failures:\n" + _report(rep.failures)


def test_the_audit_catches_a_late_unnamed_error(error_audit, monkeypatch):
    """A function that runs a kernel and then raises an unnamed error of the wrong class
    fails every check that applies."""
    flip = clnp.flip

    def bad_flip(x, /, *, axis=None):
        if isinstance(x, clnp.Array):
            x + 1                                     # a kernel before the error
        raise IndexError("bad")
    bad_flip.__signature__ = __import__("inspect").signature(flip)
    monkeypatch.setattr(clnp, "flip", bad_flip)
    rep = error_audit.audit(only=r"^clnp\.flip$")
    details = " ".join(r.detail for r in rep.failures)
    assert "launches" in details and "does not name the function" in details, details
    assert "raised IndexError (expected AxisError)" in details, details


def test_the_audit_catches_silent_acceptance(error_audit, monkeypatch):
    monkeypatch.setattr(clnp, "flip", lambda x, /, *, axis=None: x)
    rep = error_audit.audit(only=r"^clnp\.flip$")
    assert any("accepted; NumPy raises AxisError" in r.detail for r in rep.failures), \
        _report(rep.results)


# ----------------------------------------------------------------------------- AxisError
def _axis_calls(device):
    x = clnp.asarray(np.arange(12.0, dtype=np.float32).reshape(3, 4), device=device)
    i = clnp.asarray(np.zeros((3, 4), np.int32), device=device)
    sq = clnp.asarray(np.eye(3, dtype=np.float32), device=device)
    return {
        "sum": lambda: clnp.sum(x, axis=2), "max": lambda: clnp.max(x, axis=-3),
        "mean tuple": lambda: clnp.mean(x, axis=(0, 2)), "x.sum": lambda: x.sum(axis=2),
        "argmax": lambda: clnp.argmax(x, axis=2), "x.argmin": lambda: x.argmin(axis=-3),
        "nansum": lambda: clnp.nansum(x, axis=2), "nanargmax": lambda: clnp.nanargmax(x, axis=2),
        "median": lambda: clnp.median(x, axis=2), "count_nonzero": lambda: clnp.count_nonzero(
            x, axis=2),
        "sort": lambda: clnp.sort(x, axis=2), "argsort": lambda: clnp.argsort(x, axis=-3),
        "x.sort": lambda: x.sort(axis=2), "partition": lambda: clnp.partition(x, 1, axis=2),
        "cumsum": lambda: clnp.cumsum(x, axis=2), "cumulative_sum": lambda:
            clnp.cumulative_sum(x, axis=2), "nancumprod": lambda: clnp.nancumprod(x, axis=2),
        "flip": lambda: clnp.flip(x, axis=3), "roll": lambda: clnp.roll(x, 1, axis=3),
        "concat": lambda: clnp.concat([x, x], axis=2), "stack": lambda: clnp.stack([x, x],
                                                                                  axis=4),
        "expand_dims": lambda: clnp.expand_dims(x, axis=4), "squeeze": lambda:
            clnp.squeeze(x, axis=3), "moveaxis": lambda: clnp.moveaxis(x, 3, 0),
        "swapaxes": lambda: clnp.swapaxes(x, 0, 3), "permute_dims": lambda:
            clnp.permute_dims(x, (0, 3)), "repeat": lambda: clnp.repeat(x, 2, axis=3),
        "split": lambda: clnp.split(x, 2, axis=3), "take": lambda: clnp.take(
            x, clnp.asarray([0], device=device), axis=2),
        "take_along_axis": lambda: clnp.take_along_axis(x, i, axis=2),
        "append": lambda: clnp.append(x, x, axis=2), "unique": lambda: clnp.unique(x, axis=2),
        "diff": lambda: clnp.diff(x, axis=2), "trace": lambda: clnp.trace(x, axis1=0, axis2=3),
        "tensordot": lambda: clnp.tensordot(x, x, axes=([2], [0])),
        "vecdot": lambda: clnp.vecdot(x, x, axis=-3),
        "linalg.cross": lambda: clnp.linalg.cross(sq, sq, axis=-3),
        "linalg.vector_norm": lambda: clnp.linalg.vector_norm(x, axis=2),
        "linalg.norm": lambda: clnp.linalg.norm(x, axis=2),
        "fft.fft": lambda: clnp.fft.fft(x, axis=2), "fft.rfft": lambda: clnp.fft.rfft(x, axis=-3),
        "fft.fftn": lambda: clnp.fft.fftn(x, axes=(0, 5)), "fft.fftshift": lambda:
            clnp.fft.fftshift(x, axes=3),
        "add.reduce": lambda: clnp.add.reduce(x, axis=2), "multiply.accumulate": lambda:
            clnp.multiply.accumulate(x, axis=2), "add.reduceat": lambda:
            clnp.add.reduceat(x, [0, 1], axis=2),
    }


def test_axis_out_of_range_is_numpys_axis_error(device):
    for what, call in _axis_calls(device).items():
        with pytest.raises(AxisError) as ei:
            call()
        e = ei.value
        assert isinstance(e, ValueError) and isinstance(e, IndexError)
        name = what.split(" ")[0].split(".")[-1].replace("x.", "")
        assert name in str(e) or what.startswith("x."), f"{what}: {e}"


def test_axis_error_caught_as_either_parent(device):
    x = clnp.ones((2, 2), device=device)
    with pytest.raises(IndexError):
        clnp.sum(x, axis=2)
    with pytest.raises(ValueError):
        clnp.sum(x, axis=2)
    try:
        clnp.sort(x, axis=-3)
    except AxisError as e:
        assert (e.axis, e.ndim) == (-3, 2)
        assert str(e) == "sort: axis -3 is out of bounds for array of dimension 2"


# ----------------------------------------------------------------------------- messages
def test_inner_errors_name_the_called_function(device):
    x = clnp.ones((3, 4), dtype=clnp.float32, device=device)
    cases = [(lambda: clnp.zeros({"a": 1}), TypeError, "zeros"),
             (lambda: clnp.eye(-1), ValueError, "eye"),
             (lambda: clnp.nanmax(x, axis=2), AxisError, "nanmax"),
             (lambda: clnp.std({"a": 1}), TypeError, "std"),
             (lambda: clnp.fft.rfft2(clnp.ones((2, 2), dtype=clnp.complex64,
                                                device=device)), TypeError, "rfft2"),
             (lambda: clnp.fmax(x, clnp.ones(5, device=device)), ValueError, "fmax"),
             (lambda: clnp.arctan2(x, clnp.ones(5, device=device)), ValueError, "atan2")]
    for call, cls, name in cases:
        with pytest.raises(cls) as ei:
            call()
        assert name in str(ei.value), str(ei.value)


def test_place_and_putmask_follow_numpys_safe_rule(device):
    a = clnp.asarray(np.zeros(4, np.float32), device=device)
    m = clnp.asarray([True, False, True, False], device=device)
    for f in (clnp.place, clnp.putmask):
        with pytest.raises(TypeError, match=r"int32.*float32.*'safe'"):
            f(a, m, clnp.asarray(np.array([1, 2], np.int32), device=device))
        with pytest.raises(ValueError, match=r"\(5,\).*\(4,\)"):
            f(a, clnp.ones(5, dtype=clnp.bool, device=device), 1.0)
        f(a, m, 2.5)                      # Python scalars take the array's dtype
    ref = np.zeros(4, np.float32)
    for f, g in ((clnp.place, np.place), (clnp.putmask, np.putmask)):
        f(a, m, clnp.asarray(np.array([3, 4], np.int16), device=device))   # a safe cast
        g(ref, m.to_numpy(), np.array([3, 4], np.int16))
    np.testing.assert_array_equal(a.to_numpy(), ref)


def test_linalg_wrong_ndim_is_linalg_error(device):
    v = clnp.ones(3, dtype=clnp.float32, device=device)
    for f in (clnp.linalg.inv, clnp.linalg.det, clnp.linalg.cholesky, clnp.linalg.eigh):
        with pytest.raises(clnp.linalg.LinAlgError, match=r"at least two dimensions.*\(3,\)"):
            f(v)
        with pytest.raises(np.linalg.LinAlgError):
            f(v)


def test_composite_ufuncs_check_dtypes_before_building(device, monkeypatch):
    c = clnp.ones((2, 2), dtype=clnp.complex64, device=device)
    x = clnp.ones((2, 2), dtype=clnp.float32, device=device)

    def refuse(source, options=()):
        raise AssertionError("a kernel was built before the error")
    monkeypatch.setattr(device, "build", refuse)
    for call, dtype in [(lambda: clnp.deg2rad(c), "complex64"),
                        (lambda: clnp.heaviside(x, c), "complex64"),
                        (lambda: clnp.ldexp(c, 1), "complex64"),
                        (lambda: clnp.fmod(c, x), "complex64")]:
        with pytest.raises(TypeError, match=dtype):
            call()


def test_warnings_point_at_the_callers_line(device):
    """Public functions are wrapped (names_its_errors): clnp's warnings still name the
    user's line, not the wrapper's."""
    x = clnp.ones((2, 2), device=device)
    with pytest.warns(DeprecationWarning) as rec:
        clnp.cross(x, x)
    assert rec[0].filename == __file__, rec[0].filename
    with pytest.warns(DeprecationWarning) as rec:
        clnp.random.random_integers(3, size=2)
    assert rec[0].filename == __file__, rec[0].filename


def test_functions_added_to_the_audit(error_audit, device):
    """The functions the audit first had no valid call for (found by giving it one): junk
    values fail before any kernel, NumPy's classes for float indices, a dict and operands of
    the wrong number of dimensions."""
    a = clnp.asarray(np.zeros((3, 4), np.float32), device=device)
    idx = clnp.asarray(np.array([[0], [1], [2]], np.int32), device=device)
    ind = clnp.asarray(np.array([0, 2], np.int32), device=device)
    clnp.synchronize()
    with error_audit.Watch() as w:
        with pytest.raises(TypeError, match="put"):
            clnp.put(a, ind, {"j": 1})
        with pytest.raises(TypeError, match="put_along_axis"):
            clnp.put_along_axis(a, idx, {"j": 1}, axis=1)
    assert (w.launches, w.builds) == (0, 0)
    with pytest.raises(IndexError, match=r"put_along_axis.*float32"):
        clnp.put_along_axis(a, clnp.asarray(np.zeros((3, 1), np.float32), device=device), 1.0,
                            axis=1)
    with pytest.raises(TypeError, match="ravel_multi_index.*dict"):
        clnp.ravel_multi_index({"a": 1}, (3, 4))
    s = clnp.asarray(np.eye(3, dtype=np.float32), device=device)
    v = clnp.asarray(np.ones(5, np.float32), device=device)
    with pytest.raises(np.linalg.LinAlgError, match=r"multi_dot.*\(5,\).*two-dimensional"):
        clnp.linalg.multi_dot([s, v, s])
    np.testing.assert_array_equal(a.to_numpy(), 0)          # nothing written


def test_multi_dot_out(device):
    """multi_dot's out= (NumPy's): the exact shape and dtype, filled and returned."""
    h = np.arange(9, dtype=np.float32).reshape(3, 3)
    a = clnp.asarray(h, device=device)
    v = clnp.asarray(np.ones(3, np.float32), device=device)
    out = clnp.zeros((3,), dtype=clnp.float32, device=device)
    assert clnp.linalg.multi_dot([a, a, v], out=out) is out
    np.testing.assert_allclose(out.to_numpy(), h @ h @ np.ones(3, np.float32))
    for bad in (clnp.zeros((3, 3), dtype=clnp.float32, device=device),
                clnp.zeros((3,), dtype=clnp.int32, device=device)):
        with pytest.raises(ValueError, match=r"multi_dot.*\(3,\) and dtype float32"):
            clnp.linalg.multi_dot([a, a, v], out=bad)
