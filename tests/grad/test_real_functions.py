"""clnp_grad on real programs written as plain ``import clnp as xp`` code.

Each program is checked in float64 three ways: the gradient against central finite differences
of the program itself, Hessian-vector products (forward-over-reverse and reverse-over-reverse)
against finite differences of the gradient, and per-example gradients
(``vmap(grad(loss), in_axes=(None, 0, ...))``) against a Python loop over the examples.
Sizes are small and shared between programs so that kernels are compiled once.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np
import pytest

import clnp as xp
import clnp_grad as cg

H = 1e-5          # central-difference step: truncation ~H**2, rounding ~1e-16 / H
RTOL = 1e-6


# ------------------------------------------------------------------------------ the programs
def logistic_loss(w, X, y):
    """Mean log-loss of a logistic regression (bias last in ``w``) plus an L2 penalty."""
    z = X @ w[:-1] + w[-1]
    # -y log(sigmoid(z)) - (1 - y) log(1 - sigmoid(z)) == softplus(z) - y z, stably
    return xp.mean(xp.logaddexp(0.0, z) - y * z) + 0.05 * xp.sum(w[:-1] ** 2)


def mlp_loss(params, X, Y):
    """Two hidden layers (tanh, relu) and softmax cross-entropy against one-hot ``Y``."""
    h = xp.tanh(X @ params["w1"] + params["b1"])
    h = xp.maximum(h @ params["w2"] + params["b2"], 0.0)
    logits = h @ params["w3"] + params["b3"]
    m = xp.max(logits, axis=-1, keepdims=True)
    lse = m[..., 0] + xp.log(xp.sum(xp.exp(logits - m), axis=-1))
    return xp.mean(lse - xp.sum(logits * Y, axis=-1))


def _scatter_matrices(X, mu):
    """Regularised scatter matrices of the rows of ``X`` about each centre in ``mu``
    (a stack of them when ``mu`` holds several centres)."""
    Z = X - mu[..., None, :]
    n, d = X.shape
    return Z.mT @ Z / n + 0.1 * xp.eye(d, dtype=X.dtype, device=X.device)


def logdet_slogdet(X, mu):
    """Summed log-determinants of the scatter matrices."""
    return xp.sum(xp.linalg.slogdet(_scatter_matrices(X, mu))[1])


def logdet_cholesky(X, mu):
    """The same log-determinants through Cholesky factors: 2 sum(log(diag(L)))."""
    L = xp.linalg.cholesky(_scatter_matrices(X, mu))
    return 2.0 * xp.sum(xp.log(xp.linalg.diagonal(L)))


def _oscillator(theta, s):
    """A damped pendulum: q' = p, p' = -c p - k sin(q), with ``theta = (c, k)``."""
    q, p = s[..., 0], s[..., 1]
    return xp.stack([p, -theta[0] * p - theta[1] * xp.sin(q)], axis=-1)


def rk4_step(theta, s, dt=0.1):
    """One classical Runge-Kutta step of the pendulum."""
    k1 = _oscillator(theta, s)
    k2 = _oscillator(theta, s + dt / 2 * k1)
    k3 = _oscillator(theta, s + dt / 2 * k2)
    k4 = _oscillator(theta, s + dt * k3)
    return s + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def rk4_one_step_loss(theta, s0, target):
    return xp.sum((rk4_step(theta, s0) - target) ** 2)


def rk4_trajectory_loss(theta, s0, target):
    """Squared distance to ``target`` after several steps."""
    s = s0
    for _ in range(4):
        s = rk4_step(theta, s)
    return xp.sum((s - target) ** 2)


def rfft_conv_loss(kernel, x, target):
    """Circular convolution through the real FFT, then a smooth misfit."""
    n = x.shape[-1]
    y = xp.fft.irfft(xp.fft.rfft(x) * xp.fft.rfft(kernel), n=n)
    return xp.sum(xp.tanh(y - target) ** 2)


def fft_conv_loss(kernel, x, target):
    """The same convolution through the complex FFT."""
    y = xp.real(xp.fft.ifft(xp.fft.fft(x) * xp.fft.fft(kernel)))
    return xp.sum(xp.tanh(y - target) ** 2)


ROWS = [2, 0, 3]
GATHER_ROWS = [3, 3, 1, 0]       # repeated on purpose: the gradient must add them up
GATHER_COLS = [4, 0, 2]


def indexing_loss(M, s, target):
    """Integer-array gathers, a strided slice assignment and a fancy-index assignment."""
    rows = xp.asarray(ROWS, device=M.device)
    y = xp.asarray(M, copy=True)
    y[:, 1:4:2] = xp.sin(M[:, 0:2])
    y[rows] = y[rows] * y[rows] + M[xp.asarray([0, 1, 2], device=M.device)]
    z = y[xp.asarray(GATHER_ROWS, device=M.device)][:, xp.asarray(GATHER_COLS, device=M.device)]
    # ``s`` is one scale or one per example (then ``target`` has a leading example axis)
    return xp.sum((z * s[..., None, None] - target) ** 2)


# ------------------------------------------------------------------------------ cases
class Case(NamedTuple):
    f: Callable[..., Any]
    params: Any                 # a pytree of NumPy arrays (the differentiated argument)
    data: tuple                 # NumPy arrays; axis 0 indexes the examples


def _case(name: str, rng: np.random.Generator) -> Case:
    n = 5
    if name == "logistic":
        X = rng.standard_normal((n, 3))
        return Case(logistic_loss, rng.standard_normal(4),
                    (X, (rng.uniform(size=n) < 0.5).astype(np.float64)))
    if name == "mlp":
        shapes = {"w1": (3, 6), "b1": (6,), "w2": (6, 6), "b2": (6,), "w3": (6, 4), "b3": (4,)}
        params = {k: rng.standard_normal(s) * 0.8 for k, s in shapes.items()}
        return Case(mlp_loss, params, (rng.standard_normal((n, 3)),
                                       np.eye(4)[rng.integers(0, 4, n)]))
    if name in ("logdet_slogdet", "logdet_cholesky"):
        f = logdet_slogdet if name == "logdet_slogdet" else logdet_cholesky
        return Case(f, rng.standard_normal((6, 3)), (rng.standard_normal((n, 3)) * 0.3,))
    if name in ("rk4_one_step", "rk4_trajectory"):
        f = rk4_one_step_loss if name == "rk4_one_step" else rk4_trajectory_loss
        return Case(f, np.array([0.3, 2.0]), (rng.standard_normal((n, 2)),
                                              rng.standard_normal((n, 2))))
    if name in ("rfft_conv", "fft_conv"):
        f = rfft_conv_loss if name == "rfft_conv" else fft_conv_loss
        return Case(f, rng.standard_normal(8), (rng.standard_normal((n, 8)),
                                                rng.standard_normal((n, 8))))
    if name == "indexing":
        return Case(indexing_loss, rng.standard_normal((4, 5)),
                    (rng.uniform(0.5, 1.5, size=n), rng.standard_normal((n, 4, 3))))
    raise KeyError(name)


NAMES = ["logistic", "mlp", "logdet_slogdet", "logdet_cholesky", "rk4_one_step",
         "rk4_trajectory", "rfft_conv", "fft_conv", "indexing"]


# ------------------------------------------------------------------------------ helpers
def _f64(device):
    if not device.has_fp64:
        pytest.skip("finite-difference checks need float64")


def _dev(tree: Any, device) -> Any:
    return cg.tree_map(lambda a: xp.asarray(a, device=device), tree)


def _host(tree: Any) -> Any:
    return cg.tree_map(lambda a: np.asarray(a), tree)


def _perturbed(params: Any, direction: Any, step: float) -> Any:
    return cg.tree_map(lambda p, v: p + step * v, params, direction)


def _assert_tree_close(got: Any, want: Any, rtol: float = RTOL) -> None:
    g_leaves, g_def = cg.tree_flatten(_host(got))
    w_leaves, w_def = cg.tree_flatten(want)
    assert g_def == w_def
    scale = max(float(np.max(np.abs(w))) for w in w_leaves)
    for g, w in zip(g_leaves, w_leaves):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * scale)


def _fd_gradient(f: Callable[..., Any], params: Any, data: tuple, device) -> Any:
    """Central differences of ``f`` along every element of every leaf of ``params``."""
    leaves, tdef = cg.tree_flatten(params)
    dd = _dev(data, device)
    grads = []
    for i, leaf in enumerate(leaves):
        g = np.zeros_like(leaf)
        for k in range(leaf.size):
            e = np.zeros_like(leaf)
            e.flat[k] = H
            vals = []
            for sign in (1, -1):
                moved = [x + sign * e if j == i else x for j, x in enumerate(leaves)]
                vals.append(float(f(_dev(cg.tree_unflatten(tdef, moved), device), *dd)))
            g.flat[k] = (vals[0] - vals[1]) / (2 * H)
        grads.append(g)
    return cg.tree_unflatten(tdef, grads)


def _direction(params: Any, rng: np.random.Generator) -> Any:
    return cg.tree_map(lambda p: rng.standard_normal(np.shape(p)), params)


def _fd_hvp(grad_f: Callable[[Any], Any], params: Any, v: Any, device) -> Any:
    plus = _host(grad_f(_dev(_perturbed(params, v, H), device)))
    minus = _host(grad_f(_dev(_perturbed(params, v, -H), device)))
    return cg.tree_map(lambda a, b: (a - b) / (2 * H), plus, minus)


# ------------------------------------------------------------------------------ tests
@pytest.mark.parametrize("name", NAMES)
def test_gradient_matches_finite_differences(name, device):
    _f64(device)
    case = _case(name, np.random.default_rng(7))
    params, data = _dev(case.params, device), _dev(case.data, device)
    value, g = cg.value_and_grad(case.f)(params, *data)
    np.testing.assert_allclose(float(value), float(case.f(params, *data)), rtol=1e-13)
    _assert_tree_close(g, _fd_gradient(case.f, case.params, case.data, device))


@pytest.mark.parametrize("name", NAMES)
def test_hessian_vector_products_match_finite_differences(name, device):
    _f64(device)
    rng = np.random.default_rng(11)
    case = _case(name, rng)
    data = _dev(case.data, device)

    def grad_f(p):
        return cg.grad(case.f)(p, *data)

    v_h = _direction(case.params, rng)
    params, v = _dev(case.params, device), _dev(v_h, device)
    want = _fd_hvp(grad_f, case.params, v_h, device)
    g, hvp_fwd = cg.jvp(grad_f, (params,), (v,))
    _assert_tree_close(g, _host(grad_f(params)), rtol=1e-12)
    _assert_tree_close(hvp_fwd, want)

    def g_dot_v(p):
        return sum(xp.sum(a * b) for a, b in zip(cg.tree_leaves(grad_f(p)), cg.tree_leaves(v)))
    _assert_tree_close(cg.grad(g_dot_v)(params), want)


@pytest.mark.parametrize("name", NAMES)
def test_per_example_gradients_match_a_loop(name, device):
    _f64(device)
    case = _case(name, np.random.default_rng(3))
    params, data = _dev(case.params, device), _dev(case.data, device)
    in_axes = (None,) + (0,) * len(data)
    got = cg.vmap(cg.grad(case.f), in_axes=in_axes)(params, *data)
    n = case.data[0].shape[0]
    loop = [_host(cg.grad(case.f)(params, *[d[i] for d in data])) for i in range(n)]
    want = cg.tree_map(lambda *per: np.stack(per), *loop)
    _assert_tree_close(got, want, rtol=1e-12)


def test_indexing_program_leaves_its_input_unchanged(device):
    _f64(device)
    case = _case("indexing", np.random.default_rng(5))
    M, data = _dev(case.params, device), _dev(case.data, device)
    cg.grad(indexing_loss)(M, *data)
    cg.jvp(lambda m: indexing_loss(m, *data), (M,), (M,))
    np.testing.assert_array_equal(np.asarray(M), case.params)


def test_traced_setitem_with_repeated_indices_keeps_the_last_write(device):
    _f64(device)
    x_h = np.array([5.0, 3.0, 4.0])

    def f(x):
        y = xp.asarray(x, copy=True)
        y[xp.asarray([0, 0], device=x.device)] = xp.asarray([1.0, 2.0], device=x.device) * x[1]
        return y
    want = x_h.copy()
    want[[0, 0]] = np.array([1.0, 2.0]) * x_h[1]
    x = xp.asarray(x_h, device=device)
    # eager writes of repeated indices run in parallel: which one lands is unspecified (as
    # NumPy's docs say); under a transformation the last one does, on every device
    assert float(np.asarray(f(x))[0]) in (3.0, 6.0)
    out, t = cg.jvp(f, (x,), (xp.asarray([0.0, 1.0, 0.0], device=device),))
    np.testing.assert_array_equal(np.asarray(out), want)
    np.testing.assert_array_equal(np.asarray(t), [2.0, 1.0, 0.0])
