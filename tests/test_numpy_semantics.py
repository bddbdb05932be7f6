"""NumPy's semantics where NumPy code depends on them (issue 14), with NumPy as the oracle:
LinAlgError from eager linalg calls (NaN/inf under transformations instead), same_kind
casting of in-place operators, format() of arrays, round() of 0-d arrays, errors for NumPy
functions clnp lacks, ddof, and the histogram bin estimators."""
from __future__ import annotations

import operator
import warnings

import numpy as np
import pytest

import clnp
import clnp_grad
from clnp._routines import host_lapack

la = clnp.linalg


def _f(device):
    """The widest float dtype of the device."""
    return np.float64 if device.has_fp64 else np.float32


def _np_raises(fn):
    try:
        fn()
    except np.linalg.LinAlgError as e:
        return str(e)
    return None


# ------------------------------------------------------------------------------ LinAlgError
def test_linalg_error_is_numpys():
    assert issubclass(la.LinAlgError, np.linalg.LinAlgError)
    assert issubclass(la.LinAlgError, ValueError)
    assert clnp.linalg.LinAlgError is clnp.linalg.__dict__["LinAlgError"]
    assert "LinAlgError" in la.__all__


@pytest.mark.parametrize("n", [3, 130])       # 130: the blocked (GEMM) LU and Cholesky
def test_singular_and_not_positive_definite_raise(device, rng, n):
    d = _f(device)
    sing = rng.standard_normal((n, n)).astype(d)
    sing[:, 1] = 0.0                          # an exact zero pivot, as LAPACK sees it
    notpd = -np.eye(n, dtype=d)
    b = rng.standard_normal((n, 2)).astype(d)
    cases = [(lambda m: la.inv(m), lambda m: np.linalg.inv(m), sing, "Singular matrix"),
             (lambda m: la.solve(m, clnp.asarray(b, device=device)),
              lambda m: np.linalg.solve(m, b), sing, "Singular matrix"),
             (lambda m: la.matrix_power(m, -2), lambda m: np.linalg.matrix_power(m, -2), sing,
              "Singular matrix"),
             (lambda m: la.cholesky(m), lambda m: np.linalg.cholesky(m), notpd,
              "not positive definite"),
             (lambda m: la.cholesky(m, upper=True), lambda m: np.linalg.cholesky(m, upper=True),
              notpd, "not positive definite")]
    for ours, ref, a, msg in cases:
        assert _np_raises(lambda ref=ref, a=a: ref(a)) is not None   # NumPy raises here
        with pytest.raises(np.linalg.LinAlgError, match=msg) as ei:
            ours(clnp.asarray(a, device=device))
        assert isinstance(ei.value, la.LinAlgError)
    # the same calls on good matrices do not raise and match NumPy
    good = sing + n * np.eye(n, dtype=d)
    np.testing.assert_allclose(la.inv(clnp.asarray(good, device=device)).to_numpy(),
                               np.linalg.inv(good), rtol=1e-4, atol=1e-5)
    spd = good @ good.T
    np.testing.assert_allclose(la.cholesky(clnp.asarray(spd, device=device)).to_numpy(),
                               np.linalg.cholesky(spd), rtol=1e-4, atol=1e-4)


def test_error_names_the_failed_matrix_of_a_batch(device):
    d = _f(device)
    a = np.stack([np.eye(3, dtype=d)] * 6).reshape(2, 3, 3, 3)
    a[1, 2] = 0.0
    with pytest.raises(la.LinAlgError, match=r"linalg.inv: Singular matrix \(matrix \(1, 2\) "
                                             r"of the batch of shape \(2, 3\); 1 of 6"):
        la.inv(clnp.asarray(a, device=device))
    spd = np.stack([np.eye(3, dtype=d), -np.eye(3, dtype=d)])
    with pytest.raises(la.LinAlgError, match=r"cholesky.*matrix \(1,\)"):
        la.cholesky(clnp.asarray(spd, device=device))


def test_numpy_linalg_on_clnp_arrays_raises_numpys_class(device):
    s = clnp.ones((3, 3), dtype=_f(device), device=device)
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        np.linalg.inv(s)
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        np.linalg.cholesky(-s)


def test_complex_singular_raises(device):
    a = np.array([[1 + 1j, 2 + 2j], [1 + 1j, 2 + 2j]], dtype=np.complex64)
    assert _np_raises(lambda: np.linalg.inv(a)) is not None
    with pytest.raises(np.linalg.LinAlgError, match="Singular"):
        la.inv(clnp.asarray(a, device=device))


def test_nan_input_raises_where_numpy_raises(device):
    d = _f(device)
    nan = np.array([[np.nan, 0.0], [0.0, 1.0]], dtype=d)
    inf = np.array([[np.inf, 0.0], [0.0, 1.0]], dtype=d)
    x = clnp.asarray(nan, device=device)
    one = clnp.ones(2, dtype=d, device=device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raising = {
            "svd": (lambda: la.svd(x), lambda: np.linalg.svd(nan)),
            "svdvals": (lambda: la.svdvals(x), lambda: np.linalg.svd(nan, compute_uv=False)),
            "pinv": (lambda: la.pinv(x), lambda: np.linalg.pinv(nan)),
            "matrix_rank": (lambda: la.matrix_rank(x), lambda: np.linalg.matrix_rank(nan)),
            "cond": (lambda: la.cond(x), lambda: np.linalg.cond(nan)),
            "lstsq": (lambda: la.lstsq(x, one), lambda: np.linalg.lstsq(nan, np.ones(2, d))),
            "eigvals": (lambda: la.eigvals(x), lambda: np.linalg.eigvals(nan)),
            "eig_inf": (lambda: la.eig(clnp.asarray(inf, device=device)),
                        lambda: np.linalg.eig(inf)),
        }
        for name, (ours, ref) in raising.items():
            msg = _np_raises(ref)
            assert msg is not None, name
            with pytest.raises(la.LinAlgError) as ei:
                ours()
            assert msg in str(ei.value), (name, msg, str(ei.value))
        # NumPy gives NaN here, and so does clnp
        for ours, ref in [(lambda: la.inv(x), lambda: np.linalg.inv(nan)),
                          (lambda: la.det(x), lambda: np.linalg.det(nan)),
                          (lambda: la.solve(x, one), lambda: np.linalg.solve(nan, np.ones(2)))]:
            assert _np_raises(ref) is None
            assert np.isnan(np.asarray(ours().to_numpy())).any()
        # eigvalsh does not raise either; where LAPACK itself runs (docs/linalg.md) the
        # result is NumPy's own (no NaN for this matrix), else the kernels' NaN
        assert _np_raises(lambda: np.linalg.eigvalsh(nan)) is None
        got = la.eigvalsh(x).to_numpy()
        if host_lapack.applies(x):
            assert np.array_equal(got, np.linalg.eigvalsh(nan), equal_nan=True)
        else:
            assert np.isnan(got).any()


def test_compositions_name_the_called_function(device):
    d = _f(device)
    x = clnp.asarray(np.array([[np.nan, 0.0], [0.0, 1.0]], dtype=d), device=device)
    for name, call in [("pinv", la.pinv), ("matrix_rank", la.matrix_rank), ("cond", la.cond),
                       ("norm", lambda v: la.norm(v, 2)),
                       ("matrix_norm", lambda v: la.matrix_norm(v, ord="nuc"))]:
        with pytest.raises(la.LinAlgError, match=rf"^linalg\.{name}: SVD did not converge"):
            call(x)
    with pytest.raises(la.LinAlgError, match=r"^linalg\.matrix_power: Singular matrix"):
        la.matrix_power(clnp.ones((2, 2), dtype=d, device=device), -1)
    with pytest.raises(la.LinAlgError, match=r"^linalg\.svd: SVD"):     # the name resets
        la.svd(x)


def test_what_numpy_does_not_raise_for_does_not_raise(device):
    d = _f(device)
    s = np.ones((3, 3), dtype=d)
    x = clnp.asarray(s, device=device)
    assert float(la.det(x)) == np.linalg.det(s) == 0.0
    sign, logdet = la.slogdet(x)
    assert (float(sign), float(logdet)) == tuple(map(float, np.linalg.slogdet(s)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert float(la.cond(x, 1)) == np.linalg.cond(s, 1) == np.inf
    assert int(la.matrix_rank(x)) == np.linalg.matrix_rank(s)
    np.testing.assert_allclose(la.pinv(x).to_numpy(), np.linalg.pinv(s), rtol=1e-4, atol=1e-6)


def test_transforms_keep_nan_and_do_not_raise(device):
    d = _f(device)
    s = clnp.asarray(np.ones((3, 3), dtype=d), device=device)
    notpd = clnp.asarray(-np.eye(3, dtype=d), device=device)
    inv = clnp_grad.jit(la.inv)(s)
    assert not np.isfinite(inv.to_numpy()).all()
    assert np.isnan(clnp_grad.jit(la.cholesky)(notpd).to_numpy()).all()
    g = clnp_grad.grad(lambda m: clnp.sum(la.inv(m)))(s)
    assert np.isnan(g.to_numpy()).all()
    batch = clnp.asarray(np.stack([np.ones((3, 3)), np.eye(3)]).astype(d), device=device)
    v = clnp_grad.vmap(la.inv)(batch).to_numpy()
    assert not np.isfinite(v[0]).all() and np.allclose(v[1], np.eye(3))
    _, t = clnp_grad.jvp(la.cholesky, (notpd,), (notpd,))
    assert np.isnan(t.to_numpy()).all()
    sol = clnp_grad.jit(lambda m: la.solve(m, clnp.ones(3, dtype=d, device=device)))(s)
    assert not np.isfinite(sol.to_numpy()).all()
    # user code that a transformation runs eagerly one level down (custom rules, the
    # backward pass, checkpoint) is still inside it: NaN, no error
    @clnp_grad.custom_vjp
    def f(m):
        return clnp.sum(la.inv(m))
    f.defvjp(lambda m: (clnp.sum(la.inv(m)), m), lambda m, ct: (la.inv(m) * ct,))
    assert not np.isfinite(clnp_grad.grad(f)(s).to_numpy()).all()
    ck = clnp_grad.grad(clnp_grad.checkpoint(lambda m: clnp.sum(la.inv(m))))(s)
    assert np.isnan(ck.to_numpy()).all()
    # after the traced calls, eager ones raise again
    with pytest.raises(la.LinAlgError):
        la.inv(s)


# ------------------------------------------------------------------------------ in-place
_INPLACE = {"+=": operator.iadd, "-=": operator.isub, "*=": operator.imul,
            "/=": operator.itruediv, "//=": operator.ifloordiv, "%=": operator.imod,
            "**=": operator.ipow, "&=": operator.iand, "|=": operator.ior,
            "^=": operator.ixor, "<<=": operator.ilshift, ">>=": operator.irshift}
_BINARY = {"+=": operator.add, "-=": operator.sub, "*=": operator.mul,
           "/=": operator.truediv, "//=": operator.floordiv, "%=": operator.mod,
           "**=": operator.pow, "&=": operator.and_, "|=": operator.or_, "^=": operator.xor,
           "<<=": operator.lshift, ">>=": operator.rshift}
# (left dtype, right operand): arrays of a dtype, or Python scalars
_PAIRS = [("float32", "float64"), ("float32", "int64"), ("float32", float), ("float32", int),
          ("int32", "int64"), ("int32", "float64"), ("int32", float), ("int32", int),
          ("int64", "uint8"), ("uint8", "int64"), ("int8", "int16"), ("bool", "bool"),
          ("bool", int), ("float64", "complex128"), ("complex64", "complex128"),
          ("complex64", float), ("float32", complex), ("float16", "float32"),
          ("float16", float), ("uint8", int)]


def _computes(sym, x, y):
    """Whether clnp computes ``x op y`` out of place (its op category accepts the dtypes)."""
    try:
        _BINARY[sym](x, y)
    except TypeError:
        return False
    return True


def _operand(kind, device):
    if isinstance(kind, type):
        return kind(2) if kind is not bool else True
    return np.array([2, 1, 3, 1], dtype=kind)


@pytest.mark.parametrize("sym", list(_INPLACE))
def test_inplace_same_kind_casting_matches_numpy(device, sym):
    op = _INPLACE[sym]
    for left, right in _PAIRS:
        dts = [left] + ([] if isinstance(right, type) else [right])
        if not all(device.supports(np.dtype(t)) for t in dts):
            continue
        a = np.array([5, 7, 2, 9], dtype=left)
        b = _operand(right, device)
        x = clnp.asarray(a, device=device)
        y = clnp.asarray(b, device=device) if isinstance(b, np.ndarray) else b
        before = a.copy()
        try:
            with np.errstate(all="ignore"):
                ref = op(a, b)
            err = None
        except TypeError as e:
            err = e
        if err is not None:
            with pytest.raises(TypeError) as ei:
                op(x, y)
            msg = str(ei.value)
            if "same_kind" in str(err) and _computes(sym, x, y):
                # the operation runs, its result's cast is refused: named like NumPy's
                assert sym in msg and str(np.dtype(left)) in msg and "same_kind" in msg, msg
            np.testing.assert_array_equal(x.to_numpy(), before)   # nothing was written
            continue
        r = op(x, y)
        assert r is x, (sym, left, right)
        assert x.dtype == ref.dtype, (sym, left, right, x.dtype, ref.dtype)
        got = x.to_numpy()
        if ref.dtype.kind in "fc":
            np.testing.assert_allclose(got, ref, rtol=1e-6, err_msg=f"{sym} {left} {right}")
        else:
            np.testing.assert_array_equal(got, ref, err_msg=f"{sym} {left} {right}")


def test_inplace_computes_in_the_promoted_dtype(device):
    if not device.has_fp64:
        pytest.skip("needs float64")
    # float32 += float64: the sum is rounded once (computed in float64), as NumPy does
    a = np.array([1.0, 16777216.0], dtype=np.float32)
    b = np.array([1e-8, 1.0], dtype=np.float64)
    x = clnp.asarray(a, device=device)
    x += clnp.asarray(b, device=device)
    a += b
    np.testing.assert_array_equal(x.to_numpy(), a)
    # into a strided view: only the view's elements change
    v = np.arange(8, dtype=np.float32)
    xv = clnp.asarray(v, device=device)
    w = xv[1::3]
    w *= clnp.asarray(np.array([0.1, 0.2, 0.3]), device=device)
    view = v[1::3]
    view *= np.array([0.1, 0.2, 0.3])
    np.testing.assert_array_equal(xv.to_numpy(), v)
    # int32 += int64 wraps as NumPy's cast back does
    i = np.array([2 ** 31 - 1], dtype=np.int32)
    xi = clnp.asarray(i, device=device)
    xi += clnp.asarray(np.array([5], dtype=np.int64), device=device)
    i += np.array([5], dtype=np.int64)
    np.testing.assert_array_equal(xi.to_numpy(), i)


def test_inplace_matmul_casting(device):
    d = _f(device)
    a = np.arange(4, dtype=np.float32).reshape(2, 2)
    b = np.full((2, 2), 1 / 3, dtype=d)
    x = clnp.asarray(a, device=device)
    x @= clnp.asarray(b, device=device)
    a @= b
    assert x.dtype == np.float32
    np.testing.assert_allclose(x.to_numpy(), a, rtol=1e-6)
    i = np.ones((2, 2), dtype=np.int32)
    xi = clnp.asarray(i, device=device)
    with pytest.raises(TypeError) as ei:
        i @= b
    with pytest.raises(TypeError, match=r"@=.*int32.*same_kind"):
        xi @= clnp.asarray(b, device=device)
    np.testing.assert_array_equal(xi.to_numpy(), np.ones((2, 2)))
    assert "same_kind" in str(ei.value)


def test_inplace_under_transforms_casts_back(device):
    def f(x):
        y = x * 1
        y += clnp.ones(3, dtype=_f(device), device=device) * 0.5
        return clnp.sum(y * y)
    x = clnp.asarray(np.arange(3, dtype=np.float32), device=device)
    g = clnp_grad.grad(f)(x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g.to_numpy(), 2 * (np.arange(3) + 0.5), rtol=1e-6)
    assert clnp_grad.jit(f)(x).dtype == np.float32


# ------------------------------------------------------------------------------ format
@pytest.mark.parametrize("value, specs", [
    (np.float32(3.14159), ["", ".2f", ">10.3f", "e", "g", "%"]),
    (np.float64(-2.5), ["", ".0f", "+.3e", "^12"]),
    (np.int32(42), ["", "d", "05d", "x", ",", ">6"]),
    (np.uint8(7), ["", "b", "03"]),
    (np.bool_(True), ["", ">6"]),
    (np.complex64(1 - 2j), ["", ".1f"]),
])
def test_format_0d_matches_numpy(device, value, specs):
    if not device.supports(np.asarray(value).dtype):
        pytest.skip("dtype not supported")
    x = clnp.asarray(np.asarray(value), device=device)
    n = np.asarray(value)
    for spec in specs:
        assert format(x, spec) == format(n, spec), spec
    assert f"{x:{specs[-1]}}" == f"{n:{specs[-1]}}"


def test_format_nd_as_numpy(device):
    a = np.array([[1.5, 2.25], [3.0, 4.125]])
    x = clnp.asarray(a.astype(_f(device)), device=device)
    assert format(x, "") == str(x) == str(a.astype(_f(device)))
    assert f"{x}" == str(x)
    with pytest.raises(TypeError):
        format(a, ".2f")                      # NumPy refuses a spec on an n-d array
    with pytest.raises(TypeError, match=r"'\.2f'.*shape \(2, 2\)"):
        format(x, ".2f")
    with pytest.raises(TypeError):
        f"{x[0]:.1f}"


# ------------------------------------------------------------------------------ round()
def test_round_of_0d_is_numpy_scalar_round(device):
    d = _f(device)
    for v in (2.5, 3.5, -1.25, 2.675):
        n = np.asarray(v, dtype=d)[()]
        x = clnp.asarray(n, device=device)
        assert round(x) == round(n) and type(round(x)) is type(round(n))
        assert round(x, 1) == round(n, 1)
    m = clnp.mean(clnp.asarray(np.array([1.0, 2.0, 4.5], dtype=d), device=device))
    assert round(m, 2) == round(np.mean(np.array([1.0, 2.0, 4.5], dtype=d)), 2)
    assert round(clnp.asarray(np.int64(7), device=device), -1) == round(np.int64(7), -1)


def test_round_of_nd_names_the_clnp_spelling(device):
    with pytest.raises(TypeError):
        round(np.ones(3), 1)                  # NumPy arrays do not support round() either
    with pytest.raises(TypeError, match=r"clnp.round\(x\).*x.round\(decimals\)"):
        round(clnp.ones(3, device=device), 1)


# ------------------------------------------------------------------------------ NumPy functions
def test_unimplemented_numpy_function_names_what_to_do(device):
    x = clnp.asarray(np.arange(4.0), device=device)
    with pytest.raises(TypeError, match=r"numpy.isnat is not implemented by clnp.*"
                                        r"numpy.isnat\(numpy.asarray\(x\), ...\)"):
        np.isnat(x)
    # names of issue #12 item 3 are clnp functions: NumPy's calls run them on the device
    h = np.arange(4.0)
    np.testing.assert_allclose(np.asarray(np.polyfit(x, x, 1)), np.polyfit(h, h, 1),
                               atol=1e-6)
    np.testing.assert_array_equal(np.asarray(np.kron(x, x)), np.kron(h, h))
    np.testing.assert_array_equal(np.asarray(np.fliplr(clnp.reshape(x, (2, 2)))),
                                  np.fliplr(h.reshape(2, 2)))
    np.testing.assert_array_equal(np.asarray(np.cross(x[:3], x[1:])), np.cross(h[:3], h[1:]))
    # ufunc methods clnp has run on the device
    np.testing.assert_array_equal(np.asarray(np.multiply.reduceat(x, [0, 2])),
                                  np.multiply.reduceat(np.arange(4.0), [0, 2]))
    # numpy.linalg.tensorinv is clnp.linalg.tensorinv now (issue #12)
    e = clnp.reshape(clnp.eye(4, device=device) * 2.0, (4, 2, 2))
    np.testing.assert_allclose(np.asarray(np.linalg.tensorinv(e, ind=1)),
                               np.linalg.tensorinv(np.eye(4).reshape(4, 2, 2) * 2.0, ind=1))
    # what the message says to do works
    np.testing.assert_allclose(np.kron(np.asarray(x), np.asarray(x)),
                               np.kron(np.arange(4.0), np.arange(4.0)))


def test_lists_are_arrays_in_the_namespace_and_linalg_says_asarray(device):
    """The namespace takes lists as NumPy does (NumPy signatures, #12); ``clnp.linalg``
    still wants arrays and says how to make one."""
    x = clnp.ones(2, device=device)
    np.testing.assert_allclose(np.asarray(clnp.exp([1.0, 2.0])), np.exp([1.0, 2.0]))
    np.testing.assert_array_equal(np.asarray(clnp.add(x, [1.0, 2.0])), [2.0, 3.0])
    np.testing.assert_array_equal(np.asarray(clnp.where([True, False], x, 2 * x)), [1.0, 2.0])
    assert float(clnp.sum([1.0, 2.0])) == 3.0
    with pytest.raises(TypeError, match=r"clnp\.asarray"):
        la.inv([[1.0, 0.0], [0.0, 1.0]])


# ------------------------------------------------------------------------------ ddof
def test_ddof_is_correction(device, rng):
    a = rng.standard_normal((4, 5)).astype(_f(device))
    x = clnp.asarray(a, device=device)
    for ddof in (0, 1, 2.5):
        np.testing.assert_allclose(clnp.var(x, ddof=ddof, axis=1).to_numpy(),
                                   np.var(a, ddof=ddof, axis=1), rtol=1e-5)
        np.testing.assert_allclose(clnp.std(x, ddof=ddof).to_numpy(), np.std(a, ddof=ddof),
                                   rtol=1e-5)
        np.testing.assert_allclose(np.std(x, ddof=ddof, axis=0).to_numpy(),
                                   np.std(a, ddof=ddof, axis=0), rtol=1e-5)
    with pytest.raises(TypeError, match="got both 'ddof' and 'correction'"):
        clnp.var(x, ddof=1, correction=1)


# ------------------------------------------------------------------------------ histogram bins
_ESTIMATORS = ["auto", "fd", "doane", "scott", "stone", "rice", "sturges", "sqrt"]


@pytest.mark.parametrize("data", ["normal", "normal32", "skewed", "ints", "tiny", "const",
                                  "one"])
def test_histogram_bin_estimators_match_numpy(device, data):
    r = np.random.default_rng(7)
    a = {"normal": lambda: r.standard_normal(1000).astype(_f(device)),
         "normal32": lambda: r.standard_normal(777).astype(np.float32),
         "skewed": lambda: r.exponential(size=300).astype(_f(device)),
         "ints": lambda: r.integers(-40, 60, 500),
         "tiny": lambda: np.array([1.0, 2.0, 2.0, 3.0], dtype=_f(device)),
         "const": lambda: np.full(10, 3.0, dtype=_f(device)),
         "one": lambda: np.array([5.0], dtype=_f(device))}[data]()
    if not device.supports(a.dtype):
        pytest.skip("dtype not supported")
    x = clnp.asarray(a, device=device)
    for est in _ESTIMATORS:
        for rng_ in (None, (-0.5, 1.5)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                ref = np.histogram_bin_edges(a, est, range=rng_)
                got = clnp.histogram_bin_edges(x, est, range=rng_).to_numpy()
                h_ref = np.histogram(a, est, range=rng_)[0]
                h_got = clnp.histogram(x, est, range=rng_)[0].to_numpy()
            assert got.shape == ref.shape, (est, rng_, got.shape, ref.shape)
            if device.supports(ref.dtype):
                assert got.dtype == ref.dtype
            np.testing.assert_allclose(got, ref, rtol=1e-6, err_msg=f"{est} {rng_}")
            np.testing.assert_array_equal(h_got, h_ref, err_msg=f"{est} {rng_}")


def test_histogram_estimator_errors(device):
    x = clnp.asarray(np.arange(10.0).astype(_f(device)), device=device)
    with pytest.raises(ValueError, match="'bogus' is not a valid estimator.*'auto'"):
        clnp.histogram_bin_edges(x, "bogus")
    with pytest.raises(TypeError, match="weighted data"):
        clnp.histogram(x, "fd", weights=x)
    with pytest.raises(TypeError, match="weighted data"):
        np.histogram(np.arange(10.0), "fd", weights=np.arange(10.0))
