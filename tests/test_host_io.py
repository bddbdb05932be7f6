"""Host-side conveniences (issue #12 item 3): files (save/load/savez/loadtxt/savetxt/
genfromtxt/fromfile), construction from host data (frombuffer/fromiter/fromfunction) and
host iteration (ndenumerate/ndindex/nditer), against NumPy."""
from __future__ import annotations

import io

import numpy as np
import pytest

import clnp


def same(got, ref):
    assert isinstance(got, clnp.ndarray), type(got)
    ref = np.asarray(ref)
    assert got.shape == ref.shape and got.dtype == ref.dtype, (got.shape, got.dtype, ref.dtype)
    np.testing.assert_array_equal(got.to_numpy(), ref)


def test_save_load_npy_npz(tmp_path):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = clnp.asarray(a)
    clnp.save(tmp_path / "x.npy", x)
    np.testing.assert_array_equal(np.load(tmp_path / "x.npy"), a)  # NumPy reads it
    same(clnp.load(tmp_path / "x.npy"), a)
    np.save(tmp_path / "n.npy", a.T)
    same(clnp.load(tmp_path / "n.npy"), a.T)
    np.save(tmp_path / "x.npy", x)  # numpy.save on a clnp array dispatches to clnp
    same(clnp.load(tmp_path / "x.npy"), a)
    for saver in (clnp.savez, clnp.savez_compressed):
        saver(tmp_path / "d.npz", x, w=clnp.ones(2, dtype=clnp.int8))
        with clnp.load(tmp_path / "d.npz") as d:
            assert sorted(d.files) == ["arr_0", "w"] and "w" in d and len(d) == 2
            same(d["arr_0"], a)
            same(d["w"], np.ones(2, np.int8))
            assert sorted(k for k, _ in d.items()) == ["arr_0", "w"]
    with pytest.raises(ValueError, match="mmap_mode"):
        clnp.load(tmp_path / "x.npy", mmap_mode="r")


def test_text_files(tmp_path):
    text = "# header\n1,2,3\n4,5,6\n"
    ref = np.loadtxt(io.StringIO(text), delimiter=",")
    same(clnp.loadtxt(io.StringIO(text), delimiter=","), ref)
    same(clnp.loadtxt(io.StringIO(text), delimiter=",", dtype=int), ref.astype(int))
    cols = clnp.loadtxt(io.StringIO(text), delimiter=",", unpack=True)
    for g, r in zip(cols, np.loadtxt(io.StringIO(text), delimiter=",", unpack=True)):
        same(g, r)
    missing = "1,2\n3,\n,6\n"
    same(clnp.genfromtxt(io.StringIO(missing), delimiter=","),
         np.genfromtxt(io.StringIO(missing), delimiter=","))
    same(clnp.genfromtxt(io.StringIO(missing), delimiter=",", filling_values=-1),
         np.genfromtxt(io.StringIO(missing), delimiter=",", filling_values=-1))
    with pytest.raises(TypeError, match="masked"):
        clnp.genfromtxt(io.StringIO(missing), delimiter=",", usemask=True)
    with pytest.raises(TypeError, match="structured"):
        clnp.genfromtxt(io.StringIO("a,b\n1,2\n"), delimiter=",", names=True)
    a = np.array([[1.5, -2.0], [3.25, 4.0]])
    f1, f2 = io.StringIO(), io.StringIO()
    clnp.savetxt(f1, clnp.asarray(a), fmt="%.3f", delimiter=";", header="h")
    np.savetxt(f2, a, fmt="%.3f", delimiter=";", header="h")
    assert f1.getvalue() == f2.getvalue()
    a.tofile(tmp_path / "a.bin")
    same(clnp.fromfile(tmp_path / "a.bin"), a.ravel())
    same(clnp.fromfile(tmp_path / "a.bin", count=2, offset=8), a.ravel()[1:3])


def test_frombuffer_fromiter_fromfunction(device):
    buf = np.arange(6, dtype=np.int16).tobytes()
    same(clnp.frombuffer(buf, dtype=np.int16), np.frombuffer(buf, dtype=np.int16))
    same(clnp.frombuffer(buf, dtype=np.int16, count=2, offset=4),
         np.frombuffer(buf, dtype=np.int16, count=2, offset=4))
    x = clnp.frombuffer(buf, dtype=np.uint8, device=device)
    assert x.device is device
    same(clnp.fromiter((i * i for i in range(5)), dtype=np.float32),
         np.fromiter((i * i for i in range(5)), dtype=np.float32))
    same(clnp.fromiter(iter(range(10)), dtype=int, count=3), np.arange(3))
    f = lambda i, j: (i - j) ** 2 + 0.5 * i
    same(clnp.fromfunction(f, (3, 4)), np.fromfunction(f, (3, 4)))
    same(clnp.fromfunction(lambda i, j, k: i * 100 + j * 10 + k, (2, 3, 2), dtype=int),
         np.fromfunction(lambda i, j, k: i * 100 + j * 10 + k, (2, 3, 2), dtype=int))
    same(clnp.fromfunction(lambda i, j, s: s * (i == j), (3, 3), s=2.0),
         np.fromfunction(lambda i, j, s: s * (i == j), (3, 3), s=2.0))


def test_host_iteration(device):
    a = np.arange(6).reshape(2, 3)
    x = clnp.asarray(a, device=device)
    assert list(clnp.ndenumerate(x)) == list(np.ndenumerate(a))
    assert list(clnp.ndindex(2, 3)) == list(np.ndindex(2, 3))
    assert list(clnp.ndindex((2, 1))) == list(np.ndindex((2, 1)))
    assert [int(v) for v in clnp.nditer(x)] == [int(v) for v in np.nditer(a)]
    assert [int(v) for v in clnp.nditer(x.T, order="C")] == \
        [int(v) for v in np.nditer(a.T, order="C")]
    with clnp.nditer(x, op_flags=[["readwrite"]]) as it:
        for v in it:
            v[...] = v * 3
    same(x, a * 3)
    y = clnp.zeros(3, device=device)
    with clnp.nditer([clnp.arange(3.0, device=device), y],
                     op_flags=[["readonly"], ["writeonly"]]) as it:
        for src, dst in it:
            dst[...] = src + 1
    same(y, np.arange(1.0, 4.0))
    with clnp.nditer([x, None]) as it:
        for src, dst in it:
            dst[...] = src * src
        res = it.operands[1]
    same(res, (a * 3) ** 2)
    it = clnp.nditer(x, flags=["multi_index"])
    got = [(it.multi_index, int(v)) for v in it]
    it2 = np.nditer(a * 3, flags=["multi_index"])
    assert got == [(it2.multi_index, int(v)) for v in it2]
