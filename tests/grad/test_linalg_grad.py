"""Differentiation and batching of the linalg primitives.

Oracles: central differences for JVPs and gradients, the inner-product identity
``Re <ct, J t> == Re <J^T ct, t>`` (JAX's bilinear convention) for VJPs, NumPy for Hessians,
Jacobians and batched results. Sizes are 3x3 and 4x3 (batches of 2) so kernels are shared."""
from __future__ import annotations

import numpy as np
import pytest

import clnp
import clnp_grad as cg
from clnp._core.prims import primitive

L = clnp.linalg
EPS = 1e-6


@pytest.fixture
def f64(device):
    if not device.has_fp64:
        pytest.skip("float64 finite differences")
    return device


def _rand(rng, shape, cplx=False):
    x = rng.standard_normal(shape)
    return x + 1j * rng.standard_normal(shape) if cplx else x


def _input(kind, rng, cplx):
    if kind == "spd":
        a = _rand(rng, (3, 3), cplx)
        return a @ a.conj().T + 3 * np.eye(3)
    if kind == "sq":
        return _rand(rng, (3, 3), cplx) + 2 * np.eye(3)
    if kind == "bsq":
        return _rand(rng, (2, 3, 3), cplx) + 2 * np.eye(3)
    return _rand(rng, (4, 3), cplx)   # "tall"


def _central(f, X, T, device):
    fp = np.asarray(f(clnp.asarray(X + EPS * T, device=device)))
    fm = np.asarray(f(clnp.asarray(X - EPS * T, device=device)))
    return (fp - fm) / (2 * EPS)


def _check_rules(f, X, device, rng, cplx):
    """The JVP along a random tangent matches central differences; the VJP of a random
    cotangent is its transpose."""
    T = _rand(rng, X.shape, cplx)
    x, t = clnp.asarray(X, device=device), clnp.asarray(T, device=device)
    out, jt = cg.jvp(f, (x,), (t,))
    jt = np.asarray(jt)
    num = _central(f, X, T, device)
    scale = np.max(np.abs(num))
    np.testing.assert_allclose(jt, num, rtol=1e-6, atol=1e-7 * scale)
    out2, f_vjp = cg.vjp(f, x)
    np.testing.assert_allclose(np.asarray(out2), np.asarray(out), rtol=1e-14)
    CT = _rand(rng, jt.shape, np.iscomplexobj(jt))
    (g,) = f_vjp(clnp.asarray(CT, device=device))
    lhs = np.real(np.sum(CT * jt))
    rhs = np.real(np.sum(np.asarray(g) * T))
    np.testing.assert_allclose(rhs, lhs, rtol=1e-10, atol=1e-12 * np.sum(np.abs(CT * jt)))


def _b(device, shape=(3, 2)):
    return clnp.asarray(np.linspace(-1.0, 2.0, int(np.prod(shape))).reshape(shape),
                        device=device)


def _lu_packed(x):
    return primitive("lu").bind(x)[0]


def _outer0(u, vh):
    """``u[:, :1] @ vh[:1]``: invariant under the sign (phase) of the first singular pair."""
    return u[..., :, :1] @ vh[..., :1, :]


def _abs2(z):
    return clnp.real(z * clnp.conj(z))


# name -> (function of one array, input kind); the functions of eigenvectors and singular
# vectors are invariant under their signs (and phases, for the complex cases)
REAL_CASES = {
    "cholesky": (lambda x: L.cholesky(x), "spd"),
    "cholesky_upper": (lambda x: L.cholesky(x, upper=True), "spd"),
    "det": (lambda x: L.det(x), "sq"),
    "slogdet": (lambda x: L.slogdet(x).logabsdet, "sq"),
    "inv": (lambda x: L.inv(x), "sq"),
    "lu": (_lu_packed, "sq"),
    "solve_x1": (lambda x: L.solve(x, _b(x.device)), "sq"),
    "solve_x2": (lambda x: L.solve(clnp.asarray(np.eye(4)[:3, 1:] + np.eye(3), device=x.device),
                                   x[:3, :2]), "tall"),
    "solve_batched": (lambda x: L.solve(x, _b(x.device, (3,))), "bsq"),
    "qr_q": (lambda x: L.qr(x).Q, "tall"),
    "qr_r": (lambda x: L.qr(x).R, "tall"),
    "qr_mode_r": (lambda x: L.qr(x, mode="r"), "tall"),
    "eigh_w": (lambda x: L.eigh(x).eigenvalues, "spd"),
    "eigh_v": (lambda x: L.eigh(x).eigenvectors, "spd"),
    "eigvalsh": (lambda x: L.eigvalsh(x), "spd"),
    "svd_s": (lambda x: L.svd(x, full_matrices=False).S, "tall"),
    "svd_u": (lambda x: L.svd(x, full_matrices=False).U, "tall"),
    "svd_vh": (lambda x: L.svd(x, full_matrices=False).Vh, "tall"),
    "svd_wide": (lambda x: _outer0(*L.svd(x.T, full_matrices=False)[::2]), "tall"),
    "svd_square_full": (lambda x: L.svd(x, full_matrices=True).U, "sq"),
    "svdvals": (lambda x: L.svdvals(x), "tall"),
}

COMPLEX_CASES = {
    "cholesky": REAL_CASES["cholesky"],
    "cholesky_upper": REAL_CASES["cholesky_upper"],
    "det": REAL_CASES["det"],
    "slogdet_sign": (lambda x: L.slogdet(x).sign, "sq"),
    "slogdet": REAL_CASES["slogdet"],
    "inv": REAL_CASES["inv"],
    "solve_x1": REAL_CASES["solve_x1"],
    "qr_q": REAL_CASES["qr_q"],
    "qr_r": REAL_CASES["qr_r"],
    "eigh_w": REAL_CASES["eigh_w"],
    "eigh_abs2_v": (lambda x: _abs2(L.eigh(x).eigenvectors), "spd"),
    "eigh_recompose": (lambda x: (lambda w, v: (v * w[None, :] ** 2) @ clnp.conj(v.T))(
        *L.eigh(x)), "spd"),
    "svd_s": REAL_CASES["svd_s"],
    "svd_outer": (lambda x: _outer0(*L.svd(x, full_matrices=False)[::2]), "tall"),
    "svd_wide": REAL_CASES["svd_wide"],
    "svd_abs2_u": (lambda x: _abs2(L.svd(x, full_matrices=False).U), "tall"),
    "eigvals": (lambda x: L.eigvals(x), "sq"),
}


@pytest.mark.parametrize("name", sorted(REAL_CASES))
def test_rules_real(name, f64, rng):
    f, kind = REAL_CASES[name]
    _check_rules(f, _input(kind, rng, False), f64, rng, False)


@pytest.mark.parametrize("name", sorted(COMPLEX_CASES))
def test_rules_complex(name, f64, rng):
    f, kind = COMPLEX_CASES[name]
    _check_rules(f, _input(kind, rng, True), f64, rng, True)


def _fd_grad(f, args, i, device, cplx):
    """Central-difference gradient of scalar ``f`` in argument ``i``, in JAX's convention
    (``df/dre - 1j df/dim`` for complex arguments)."""
    X = args[i]
    g = np.zeros(X.shape, dtype=X.dtype)
    for idx in np.ndindex(*X.shape):
        for step in ((1.0, 1j) if cplx else (1.0,)):
            E = np.zeros(X.shape, dtype=X.dtype)
            E[idx] = step

            def fi(v, E=E):
                full = [clnp.asarray(a, device=device) for a in args]
                full[i] = v
                return f(*full)
            d = float(np.real(_central(fi, X, E, device)))
            g[idx] += d if step == 1.0 else -1j * d
    return g


GRAD_CASES = {
    "solve": (lambda a, b: clnp.sum(L.solve(a, b) ** 2), ("sq", (3, 2))),
    "inv_det": (lambda a: clnp.sum(L.inv(a)) * L.det(a), ("sq",)),
    "logdet_cholesky": (lambda a: clnp.sum(clnp.log(L.diagonal(L.cholesky(a)))), ("spd",)),
    "qr": (lambda a: clnp.sum(L.qr(a).Q[:, 0] ** 2 * clnp.arange(4.0, device=a.device))
           + clnp.sum(clnp.abs(L.qr(a).R)), ("tall",)),
    "eigh": (lambda a: L.eigh(a).eigenvalues[-1]
             + clnp.sum(L.eigh(a).eigenvectors[:, 0] ** 2 * clnp.arange(3.0, device=a.device)),
             ("spd",)),
    "svd": (lambda a: L.svdvals(a)[0] + clnp.sum(_outer0(*L.svd(a, full_matrices=False)[::2])),
            ("tall",)),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_grad_finite_differences(name, f64, rng):
    f, kinds = GRAD_CASES[name]
    args = [_input(k, rng, False) if isinstance(k, str) else _rand(rng, k) for k in kinds]
    nums = tuple(range(len(args)))
    gs = cg.grad(f, argnums=nums)(*[clnp.asarray(a, device=f64) for a in args])
    for i, g in enumerate(gs):
        np.testing.assert_allclose(np.asarray(g), _fd_grad(f, args, i, f64, False), rtol=1e-6,
                                   atol=1e-8)


@pytest.mark.parametrize("name", ["solve", "logdet"])
def test_grad_complex(name, f64, rng):
    if name == "solve":
        def f(a, b):
            return clnp.sum(_abs2(L.solve(a, b)))
        args = [_input("sq", rng, True), _rand(rng, (3, 2), True)]
    else:
        def f(a, b):
            return L.slogdet(a @ b).logabsdet
        args = [_input("sq", rng, True), _input("sq", rng, True)]
    gs = cg.grad(f, argnums=(0, 1))(*[clnp.asarray(a, device=f64) for a in args])
    for i, g in enumerate(gs):
        np.testing.assert_allclose(np.asarray(g), _fd_grad(f, args, i, f64, True), rtol=1e-6,
                                   atol=1e-8)


def test_hessian_logdet(f64, rng):
    S = _input("spd", rng, False)
    H = cg.hessian(lambda a: L.slogdet(a).logabsdet)(clnp.asarray(S, device=f64))
    Si = np.linalg.inv(S)
    # d/dA_kl of (A^-T)_ij = -(A^-1)_li (A^-1)_jk
    np.testing.assert_allclose(np.asarray(H), -np.einsum("li,jk->ijkl", Si, Si), rtol=1e-9,
                               atol=1e-12)


def test_hessian_through_cholesky_and_solve(f64, rng):
    S = _input("spd", rng, False)
    b = _b(f64)

    def f(a):
        return clnp.sum(clnp.log(L.diagonal(L.cholesky(a)))) + clnp.sum(L.solve(a, b))
    x = clnp.asarray(S, device=f64)
    h_fwd = np.asarray(cg.hessian(f)(x))
    h_rev = np.asarray(cg.jacrev(cg.grad(f))(x))
    np.testing.assert_allclose(h_fwd, h_rev, rtol=1e-9, atol=1e-12)
    # second-order central differences of the gradient along one direction
    T = _rand(rng, S.shape)
    num = _central(cg.grad(f), S, T, f64)
    np.testing.assert_allclose(np.einsum("ijkl,kl->ij", h_fwd, T), num, rtol=1e-6, atol=1e-7)


def test_jacobians_of_inv(f64, rng):
    A = _input("sq", rng, False)
    x = clnp.asarray(A, device=f64)
    Ai = np.linalg.inv(A)
    ref = -np.einsum("ik,lj->ijkl", Ai, Ai)
    np.testing.assert_allclose(np.asarray(cg.jacfwd(L.inv)(x)), ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(cg.jacrev(L.inv)(x)), ref, rtol=1e-10, atol=1e-12)


def test_vmap_of_grad(f64, rng):
    X = _input("bsq", rng, False)
    b = _b(f64)

    def f(a):
        s = a @ a.T + 3 * clnp.eye(3, dtype=a.dtype, device=a.device)
        return (L.slogdet(a).logabsdet + clnp.sum(L.solve(a, b) ** 2) + L.det(a)
                + clnp.sum(L.inv(a)) + clnp.sum(L.cholesky(s)) + clnp.sum(L.qr(a).R)
                + L.eigvalsh(s)[-1] + clnp.sum(L.eigh(s).eigenvectors[:, 0] ** 2)
                + L.svdvals(a)[0] + clnp.sum(_outer0(*L.svd(a, full_matrices=False)[::2])))
    g = cg.vmap(cg.grad(f))(clnp.asarray(X, device=f64))
    loop = np.stack([np.asarray(cg.grad(f)(clnp.asarray(X[i], device=f64))) for i in range(2)])
    np.testing.assert_allclose(np.asarray(g), loop, rtol=1e-12, atol=1e-12)


def test_vmap_primitives(f64, rng):
    X = _input("bsq", rng, False)
    B = _rand(rng, (2, 3, 2))
    x, b = clnp.asarray(X, device=f64), clnp.asarray(B, device=f64)
    np.testing.assert_allclose(np.asarray(cg.vmap(L.solve)(x, b)), np.linalg.solve(X, B),
                               rtol=1e-12)
    # one operand unbatched: lu_solve materialises it along the batch
    np.testing.assert_allclose(np.asarray(cg.vmap(L.solve, in_axes=(0, None))(x, b[0])),
                               np.linalg.solve(X, np.broadcast_to(B[0], (2, 3, 2))),
                               rtol=1e-12)
    np.testing.assert_allclose(np.asarray(cg.vmap(L.solve, in_axes=(None, 0))(x[0], b)),
                               np.linalg.solve(np.broadcast_to(X[0], (2, 3, 3)), B),
                               rtol=1e-12)
    sign, lad = cg.vmap(L.slogdet)(x)
    ref_sign, ref_lad = np.linalg.slogdet(X)
    np.testing.assert_allclose(np.asarray(sign), ref_sign)
    np.testing.assert_allclose(np.asarray(lad), ref_lad, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(cg.vmap(L.svdvals)(x)),
                               np.linalg.svd(X, compute_uv=False), rtol=1e-12)


def test_vmap_of_jvp(f64, rng):
    X, T = _input("bsq", rng, False), _rand(rng, (2, 3, 3))

    def tangent(a, t):
        return cg.jvp(lambda v: L.inv(v) @ L.solve(v, _b(f64)), (a,), (t,))[1]
    res = cg.vmap(tangent)(clnp.asarray(X, device=f64), clnp.asarray(T, device=f64))
    loop = np.stack([np.asarray(tangent(clnp.asarray(X[i], device=f64),
                                        clnp.asarray(T[i], device=f64))) for i in range(2)])
    np.testing.assert_allclose(np.asarray(res), loop, rtol=1e-12, atol=1e-12)


def test_pivots_carry_no_tangent(f64, rng):
    x = clnp.asarray(_input("sq", rng, False), device=f64)
    t = clnp.asarray(_rand(rng, (3, 3)), device=f64)
    (lu, piv), (t_lu, t_piv) = cg.jvp(lambda a: tuple(primitive("lu").bind(a)), (x,), (t,))
    assert t_piv.dtype == piv.dtype and not np.any(np.asarray(t_piv))
    assert np.any(np.asarray(t_lu))


def test_unsupported_cases_raise(f64, rng):
    degenerate = clnp.asarray(np.diag([1.0, 1.0, 2.0]), device=f64)
    with pytest.raises(NotImplementedError, match="degenerate"):
        cg.grad(lambda a: clnp.sum(L.eigh(a).eigenvectors[:, 0] ** 2))(degenerate)
    # eigenvalues alone are fine there
    g = cg.grad(lambda a: L.eigvalsh(a)[-1])(degenerate)
    np.testing.assert_allclose(np.asarray(g), np.diag([0.0, 0.0, 1.0]), atol=1e-12)
    tall = clnp.asarray(_input("tall", rng, False), device=f64)
    with pytest.raises(NotImplementedError, match="full_matrices"):
        cg.grad(lambda a: clnp.sum(L.svd(a).U))(tall)
    # but the singular values of a full svd are
    g = cg.grad(lambda a: clnp.sum(L.svd(a).S))(tall)
    U, _, Vh = np.linalg.svd(np.asarray(tall), full_matrices=False)
    np.testing.assert_allclose(np.asarray(g), U @ Vh, rtol=1e-10)
    with pytest.raises(NotImplementedError, match="QR"):
        cg.grad(lambda a: clnp.sum(L.qr(a).R))(tall.T)
    with pytest.raises(NotImplementedError, match="eigenvectors of eig"):
        cg.grad(lambda a: clnp.sum(clnp.real(L.eig(a).eigenvectors)))(tall[:3])
