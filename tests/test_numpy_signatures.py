"""NumPy's signatures on the namespace (issue #12, item 1): positional parameters where NumPy
has them, array-likes wherever NumPy takes them, and NumPy's extra keywords, against NumPy."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import clnp
from clnp._numpy.signatures import SIGNATURES


def check(got, expected, rtol=1e-6, atol=1e-9):
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected)
        for g, e in zip(got, expected):
            check(g, e, rtol, atol)
        return
    assert isinstance(got, clnp.ndarray), type(got)
    e = np.asarray(expected)
    g = got.to_numpy()
    assert g.shape == e.shape, (g.shape, e.shape)
    assert g.dtype == e.dtype, (g.dtype, e.dtype)
    np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)


@pytest.fixture
def xa(device):
    a = np.arange(12.0).reshape(3, 4) - 5.5
    if not device.has_fp64:
        pytest.skip("compares float64 results with NumPy's")
    return clnp.asarray(a, device=device), a


def test_positional_parameters(xa):
    x, a = xa
    check(clnp.roll(x, 1, 0), np.roll(a, 1, 0))
    check(clnp.sum(x, 0), np.sum(a, 0))
    check(clnp.sum(x, 1, None, None, True), np.sum(a, 1, None, None, True))
    check(clnp.mean(x, 1), np.mean(a, 1))
    check(clnp.std(x, 0, None, None, 1), np.std(a, 0, None, None, 1))
    check(clnp.var(x, None, None, None, 2, True), np.var(a, None, None, None, 2, True))
    check(clnp.max(x, 1), np.max(a, 1))
    check(clnp.argmax(x, 1), np.argmax(a, 1))
    check(clnp.argsort(x[0], kind="stable"), np.argsort(a[0], kind="stable"))
    check(clnp.sort(x, 0), np.sort(a, 0))
    check(clnp.concatenate((x, x), 0), np.concatenate((a, a), 0))
    check(clnp.stack((x, x), 1), np.stack((a, a), 1))
    check(clnp.flip(x, 1), np.flip(a, 1))
    check(clnp.diff(x, 2, 0), np.diff(a, 2, 0))
    check(clnp.tril(x, 1), np.tril(a, 1))
    check(clnp.repeat(x, 2, 1), np.repeat(a, 2, 1))
    check(clnp.take(x, [0, 2], 1), np.take(a, [0, 2], 1))
    check(clnp.cumsum(x, 1), np.cumsum(a, 1))
    check(clnp.count_nonzero(x, 0), np.count_nonzero(a, 0))
    check(clnp.searchsorted(clnp.sort(x[0]), x[1], "right"),
          np.searchsorted(np.sort(a[0]), a[1], "right"))
    check(clnp.tensordot(x, x.T, 1), np.tensordot(a, a.T, 1))
    check(clnp.zeros((3, 3), int), np.zeros((3, 3), int))
    check(clnp.ones(4, float), np.ones(4, float))
    check(clnp.full((2,), 7, bool), np.full((2,), 7, bool))
    check(clnp.eye(3, 4, 1), np.eye(3, 4, 1))
    check(clnp.zeros_like(x, int), np.zeros_like(a, int))
    check(clnp.linspace(0, 1, 5), np.linspace(0, 1, 5))
    check(clnp.linspace(0, 1), np.linspace(0, 1))          # NumPy's num=50
    check(clnp.arange(0, 10, 3, float), np.arange(0, 10, 3, float))
    check(clnp.reshape(x, (4, 3)), np.reshape(a, (4, 3)))
    check(clnp.broadcast_to(x[0], (2, 4)), np.broadcast_to(a[0], (2, 4)))


def test_array_likes(xa):
    x, a = xa
    check(clnp.sqrt(2), np.sqrt(2))
    check(clnp.maximum([1, 2], 0), np.maximum([1, 2], 0))
    check(clnp.linspace(0, x.max(), 5), np.linspace(0, a.max(), 5))
    check(clnp.arange(0, x.max()), np.arange(0, a.max()))
    check(clnp.sum([1, 2, 3]), np.sum([1, 2, 3]))
    check(clnp.mean(np.arange(4.0)), np.mean(np.arange(4.0)))
    check(clnp.concatenate([x, a, [[1, 2, 3, 4]]]), np.concatenate([a, a, [[1, 2, 3, 4]]]))
    check(clnp.where(a > 0, x, 0), np.where(a > 0, a, 0))
    check(clnp.where(x > 0), np.where(a > 0))
    check(clnp.where([[True, False]]), np.where([[True, False]]))
    check(clnp.isin(x, [0.5, 1.5]), np.isin(a, [0.5, 1.5]))
    check(clnp.full((2,), x.max()), np.full((2,), a.max()))
    check(clnp.full((2,), np.array(3, np.float32)), np.full((2,), np.array(3, np.float32)))
    check(clnp.zeros_like([[1, 2]]), np.zeros_like([[1, 2]]))


def test_out_where_initial(xa):
    x, a = xa
    o = clnp.zeros((4,), dtype=clnp.float64, device=x.device)
    assert clnp.sum(x, 0, out=o) is o
    check(o, np.sum(a, 0))
    y, b = clnp.asarray(a.copy(), device=x.device), a.copy()
    clnp.add(y, 1, out=y)
    np.add(b, 1, out=b)
    check(y, b)
    check(clnp.sum(x, where=x > 0), np.sum(a, where=a > 0))
    check(clnp.sum(x, 1, initial=10.0), np.sum(a, 1, initial=10.0))
    check(clnp.prod(x, 0, where=x > 0), np.prod(a, 0, where=a > 0))
    check(clnp.max(x, 1, initial=3.0), np.max(a, 1, initial=3.0))
    check(clnp.min(x, 0, where=x > 0, initial=100.0), np.min(a, 0, where=a > 0, initial=100.0))
    check(clnp.all(x, 1, where=x > 0), np.all(a, 1, where=a > 0))
    check(clnp.any(x > 5, 0, keepdims=True), np.any(a > 5, 0, keepdims=True))
    check(clnp.mean(x, 1, where=x > -5), np.mean(a, 1, where=a > -5))
    check(clnp.var(x, ddof=1), np.var(a, ddof=1))
    check(clnp.mean(x, dtype=np.float32), np.mean(a, dtype=np.float32), rtol=1e-5)
    check(clnp.clip(x, -1, 1), np.clip(a, -1, 1))
    o2 = clnp.zeros((3, 4), dtype=clnp.float64, device=x.device)
    clnp.clip(x, -1, 1, out=o2)
    check(o2, np.clip(a, -1, 1))
    check(clnp.round(x / 7, 2), np.round(a / 7, 2))
    check(clnp.take(x, [13, -20], mode="wrap"), np.take(a, [13, -20], mode="wrap"))
    check(clnp.take(x, [13, -20], mode="clip"), np.take(a, [13, -20], mode="clip"))
    check(clnp.zeros_like(x, shape=(2, 5)), np.zeros_like(a, shape=(2, 5)))
    check(clnp.full_like(x, 3, shape=(2,)), np.full_like(a, 3, shape=(2,)))
    check(clnp.concatenate((x, x), 1, dtype=np.float32), np.concatenate((a, a), 1,
                                                                         dtype=np.float32))
    s, step = clnp.linspace(0, 1, 5, retstep=True)
    s0, step0 = np.linspace(0, 1, 5, retstep=True)
    check(s, s0)
    assert step == step0
    assert clnp.can_cast(clnp.float64, clnp.float32, "same_kind") == \
        np.can_cast(np.float64, np.float32, "same_kind")


def test_transpose_attribute(device):
    for h in (np.float32(2.0), np.arange(3.0, dtype=np.float32),
              np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)):
        x = clnp.asarray(np.asarray(h), device=device)
        assert x.T.shape == np.asarray(h).T.shape
        np.testing.assert_array_equal(x.T.to_numpy(), np.asarray(h).T)


def test_refusals_are_clear(device):
    x = clnp.ones((2, 3), dtype=clnp.float32, device=device)
    with pytest.raises(ValueError, match="order='F' is not supported"):
        clnp.zeros((2, 2), order="F")
    np.testing.assert_array_equal(clnp.reshape(x, (3, 2), order="F").to_numpy(),
                                  np.ones((2, 3), np.float32).reshape((3, 2), order="F"))
    with pytest.raises(ValueError, match="order='F' is not supported"):
        clnp.exp(x, order="F")
    assert clnp.zeros(3, order="F").shape == (3,)          # 1-d: C and F agree
    with pytest.raises(ValueError, match="kind must be one of"):
        clnp.sort(x, kind="fast")
    with pytest.raises(TypeError, match="structured"):
        clnp.sort(x, order="f0")
    with pytest.raises(TypeError, match="like="):
        clnp.zeros(3, like=np.ones(3))
    with pytest.raises(TypeError, match="got both 'ddof' and 'correction'"):
        clnp.var(x, ddof=1, correction=1)
    with pytest.raises(TypeError, match="where= is not supported"):
        clnp.std(x, where=x > 0)
    with pytest.raises(ValueError, match="take: mode"):
        clnp.take(x, [0], mode="bogus")
    # an array stop is NumPy's (issue #25: tests/test_array_arguments.py); an object is not
    with pytest.raises(TypeError, match="linspace: stop must be a number or an array of "
                                        "numbers; got object"):
        clnp.linspace(0, object(), 3)


def test_signatures_keep_the_standards_names():
    """Every declared signature keeps the standard function's parameters under their names
    (keyword-only may become positional-or-keyword, never the reverse), so the Array API
    conformance suite accepts it."""
    P = inspect.Parameter
    for name in SIGNATURES:
        f = getattr(clnp, name, None)
        if f is None:
            continue
        std = inspect.signature(f.__wrapped_standard__).parameters
        new = inspect.signature(f).parameters
        for n, p in std.items():
            if p.kind is P.VAR_KEYWORD:
                continue
            assert n in new, (name, n)
            q = new[n]
            if p.kind is P.POSITIONAL_ONLY:
                assert q.kind is P.POSITIONAL_ONLY, (name, n)
            if p.kind is P.POSITIONAL_OR_KEYWORD:
                assert q.kind is P.POSITIONAL_OR_KEYWORD, (name, n)
            if p.default is not P.empty and q.default is not P.empty and \
                    n not in ("num", "correction"):
                assert q.default == p.default, (name, n, p.default, q.default)


def test_numpy_program_runs_unchanged(device):
    """A NumPy user's script with ``import clnp as np`` (only the import differs)."""
    if not device.has_fp64:
        pytest.skip("float64 script")

    def script(np, dev):
        kw = {} if np is __import__("numpy") else {"device": dev}
        x = np.linspace(-2, 2, 9, **kw)
        y = np.where(x > 0, np.sqrt(np.abs(x)), 0.0)
        acc = np.zeros(3, **kw)
        np.add.at(acc, [0, 1, 1, 2, 2, 2], 1.0)
        z = np.maximum.accumulate(np.roll(x, 2, 0))
        m = np.multiply.outer(x[:3], acc)
        s = np.add.reduceat(x, [0, 3, 6])
        return (y, acc, z, m, s, np.sum(m, 1), np.argsort(x, kind="stable"))

    got = script(clnp, device)
    exp = script(np, None)
    for g, e in zip(got, exp):
        check(g, e)


def test_generated_wrappers_are_current():
    """clnp/_numpy/signatures_generated.py is what the generator writes today, and import
    used it (a stale module is rebuilt at import: correct, but 0.03 s slower)."""
    from pathlib import Path

    from clnp._numpy import signatures
    path = Path(signatures.__file__).with_name("signatures_generated.py")
    assert path.read_text() == signatures.generated_module_source(), \
        "stale: run python tools/signature_wrappers.py"
    assert signatures.installed_from() == "generated"


def test_built_wrappers_equal_the_generated_ones():
    """The fallback (a stale or missing generated module) builds the same wrappers."""
    from clnp._numpy import signatures
    entries = signatures._installed["entries"]
    built = signatures._build(entries)
    for (name, orig), f in zip(entries, built):
        assert inspect.signature(f) == inspect.signature(getattr(clnp, name)), name
        assert f.__wrapped_standard__ is orig and f.__doc__ == orig.__doc__
