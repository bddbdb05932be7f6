"""frompyfunc, vectorize, broadcast, nested_iters, fromstring and fromregex (clnp._numpy.host_functions)
against NumPy: Python functions and text parsing run on the host, numeric results are
uploaded."""
from __future__ import annotations

import io

import numpy as np
import pytest

import clnp
from npcheck import check


def test_frompyfunc_is_a_ufunc_with_every_method(device):
    f = clnp.frompyfunc(lambda a, b: a * 10 + b, 2, 1)
    g = np.frompyfunc(lambda a, b: a * 10 + b, 2, 1)
    assert isinstance(f, clnp.ufunc) and (f.nin, f.nout, f.nargs) == (2, 1, 3)
    a, b = np.array([1, 2, 3]), np.array([[4], [5]])
    x, y = clnp.asarray(a, device=device), clnp.asarray(b, device=device)
    r = f(x, y)
    assert isinstance(r, clnp.ndarray) and r.device == device
    check(r, np.array(g(a, b).tolist()))
    assert f.reduce(x) == g.reduce(a) == 123   # a 0-d result: the Python object, as NumPy
    check(f.accumulate(x), np.array(g.accumulate(a).tolist()))
    check(f.outer(x, x), np.array(g.outer(a, a).tolist()))
    check(f.reduceat(x, [0, 2]), np.array(g.reduceat(a, [0, 2]).tolist()))
    f.at(x, [0, 0], 7)
    host = a.astype(object)
    g.at(host, [0, 0], 7)
    check(x, np.array(host.tolist()))
    assert f(2, 3) == 23                       # scalars in, a Python scalar out (NumPy too)


def test_frompyfunc_outputs_and_objects(device):
    q, r = clnp.frompyfunc(divmod, 2, 2)(clnp.asarray([7, 8], device=device), 3)
    check(q, np.array([2, 2]))
    check(r, np.array([1, 2]))
    s = clnp.frompyfunc(oct, 1, 1)(clnp.asarray([8, 9], device=device))
    assert isinstance(s, np.ndarray) and s.dtype == object and s.tolist() == ["0o10", "0o11"]
    plus = clnp.frompyfunc(lambda a, b: a + b, 2, 1, identity=0)
    assert plus.identity == 0
    empty = np.zeros(0, np.int32)
    assert plus.reduce(clnp.asarray(empty, device=device)) == \
        np.frompyfunc(lambda a, b: a + b, 2, 1, identity=0).reduce(empty) == 0
    with pytest.raises(TypeError, match="callable"):
        clnp.frompyfunc(3, 1, 1)
    with pytest.raises(TypeError, match="out="):
        clnp.frompyfunc(abs, 1, 1)(clnp.asarray([1]), out=clnp.zeros(1))


def test_vectorize(device):
    def fn(a, b):
        return a - b if a > b else a + b
    x = clnp.asarray([1, 2, 3, 4], device=device)
    check(clnp.vectorize(fn)(x, 2), np.vectorize(fn)(np.array([1, 2, 3, 4]), 2))

    @clnp.vectorize(otypes=[float])
    def half(v):
        return v / 2
    check(half(x), np.array([0.5, 1.0, 1.5, 2.0]))
    dot = clnp.vectorize(np.dot, signature="(n),(n)->()")
    check(dot(clnp.ones((2, 3), device=device), clnp.ones(3, device=device)),
          np.array([3.0, 3.0]))
    names = clnp.vectorize(lambda v: "ab"[v])(clnp.asarray([1, 0], device=device))
    assert isinstance(names, np.ndarray) and names.tolist() == ["b", "a"]
    with pytest.raises(TypeError, match="callable"):
        clnp.vectorize(5)


def test_broadcast_object(device):
    a, b = np.array([[1], [2]]), np.array([4, 5, 6])
    cb = clnp.broadcast(clnp.asarray(a, device=device), clnp.asarray(b, device=device))
    nb = np.broadcast(a, b)
    assert (cb.shape, cb.size, cb.ndim, cb.nd, cb.numiter) == \
        (nb.shape, nb.size, nb.ndim, nb.nd, nb.numiter)
    assert [tuple(map(int, t)) for t in cb] == [tuple(map(int, t)) for t in nb]
    cb.reset()
    assert cb.index == 0 and tuple(map(int, next(cb))) == (1, 4) and cb.index == 1
    with pytest.raises(ValueError):
        clnp.broadcast(clnp.zeros(2, device=device), clnp.zeros(3, device=device))


def test_nested_iters(device):
    a = np.arange(24).reshape(2, 3, 4)
    for axes in ([[0], [1, 2]], [[0, 1], [2]], [[2], [0, 1]]):
        got = clnp.nested_iters(clnp.asarray(a, device=device), axes)
        want = np.nested_iters(a, axes)
        assert [[int(v) for v in got[1]] for _ in got[0]] == \
            [[int(v) for v in want[1]] for _ in want[0]]
    with pytest.raises(TypeError, match="nditer"):
        clnp.nested_iters(clnp.asarray(a, device=device), [[0], [1, 2]],
                          op_flags=["readwrite"])


def test_fromstring_and_fromregex(device, tmp_path):
    check(clnp.fromstring("1 2 3.5", sep=" ", device=device),
          np.fromstring("1 2 3.5", sep=" "))
    check(clnp.fromstring("1, 2, 3", dtype=clnp.int32, sep=",", count=2),
          np.fromstring("1, 2, 3", dtype=np.int32, sep=",", count=2))
    with pytest.raises(ValueError, match="unmatched"):
        clnp.fromstring("1 2 x", sep=" ")
    with pytest.raises(ValueError, match="frombuffer"):
        clnp.fromstring(b"\x00\x01", sep="")
    text = "a=1 b=22 c=333"
    path = tmp_path / "log.txt"
    path.write_text(text)
    want = np.fromregex(io.StringIO(text), r"=(\d+)", np.dtype([("v", np.int64)]))["v"]
    check(clnp.fromregex(str(path), r"=(\d+)", clnp.int64, device=device), want)
    check(clnp.fromregex(io.StringIO(text), r"=(\d+)", clnp.float32),
          want.astype(np.float32))
    with pytest.raises(TypeError, match="structured"):
        clnp.fromregex(io.StringIO(text), r"(\w)=(\d+)", [("k", "U1"), ("v", int)])


def test_fromstring_count_beyond_the_text(device):
    # NumPy returns count items and leaves the unread ones uninitialised (numpy/numpy#1481);
    # clnp returns as many, the ones read equal to NumPy's and the rest zeros
    for text, count in (("41,-19,", 3), ("41,-19", 5), ("41,-19,", 2), ("", 2), ("7", 1)):
        want = np.fromstring(text, sep=",", count=count)
        got = np.asarray(clnp.fromstring(text, sep=",", count=count, device=device))
        n = len(np.fromstring(text, sep=","))
        assert got.shape == want.shape and got.dtype.kind == want.dtype.kind
        np.testing.assert_array_equal(got[:n], want[:n])
        assert not got[n:].any()
    got = clnp.fromstring("1, 2, x", dtype=np.int32, sep=",", count=2, device=device)
    np.testing.assert_array_equal(np.asarray(got), np.fromstring("1, 2, x", np.int32, 2, sep=","))
