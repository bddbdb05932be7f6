"""clnp_nn.functional.max_pool2d and its primitives (nn_max_pool2d, nn_max_pool2d_weight,
nn_max_pool2d_grad, nn_max_pool2d_tangent).

Oracles: PyTorch CPU for values and gradients where no window has ties; for ties, NaN and
-inf, a NumPy implementation of the tie-split rule (a window's cotangent shared evenly by
the elements equal to its maximum, padding counting as -inf) and the composition that
max_pool2d was before it had kernels of its own (im2col with -inf padding, clnp.max over the
window, differentiated by the max reduction's rules and col2im), whose gradients the kernels
reproduce bit for bit. Both kernel shapes ("row" for CPUs, "element" for GPUs) run on every
device; the element shape only in float32 and float16, to keep the suite's compile time down.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import clnp
import clnp_grad as cg
import clnp_nn.functional as F
from clnp_nn.functional import _kernels as K
from clnp_nn.functional.pooling import _window, _windows

torch = pytest.importorskip("torch")
TF = torch.nn.functional

BF16 = np.dtype(clnp.bfloat16)
X4 = (2, 3, 7, 6)
# (kernel_size, stride, padding, dilation): plain, overlapping windows with padding,
# rectangular, dilated, overlapping and dilated with padding
CONFIGS = [(2, None, 0, 1), (3, 2, 1, 1), ((3, 2), (1, 2), (1, 0), 1), (2, 1, 0, 2),
           ((3, 2), 1, 1, (2, 1))]


@pytest.fixture(params=["row", "element"])
def variant(request, monkeypatch):
    monkeypatch.setattr(K, "VARIANT", request.param)
    return request.param


def _dtypes(device, variant):
    if variant == "element":
        return [np.float32, np.float16]
    return [np.float32, np.float16, BF16] + ([np.float64] if device.has_fp64 else [])


def _c(a, device):
    return clnp.asarray(a, device=device)


def _np(a):
    return np.asarray(clnp.astype(a, clnp.float64) if a.dtype in (clnp.float16, clnp.bfloat16)
                      else a).astype(np.float64)


def _composition(x, kernel_size, stride=None, padding=0, dilation=1):
    """max_pool2d as it was: the windows by im2col (-inf padding) and clnp.max."""
    x4, k, s, p, d, out_hw = _window("max_pool2d", x, kernel_size, stride, padding, dilation)
    y = clnp.permute_dims(clnp.max(_windows(x4, k, s, p, d, out_hw, -math.inf), axis=1),
                          (1, 0, 2, 3))
    return y if x.ndim == 4 else y[0]


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def _np_taps(x, kernel_size, stride, padding, dilation):
    """The windows of x (N, C, H, W) float64 as (N, C, KH*KW, OH, OW), padding -inf, and
    the slices of the padded input each tap reads."""
    k, p, d = _pair(kernel_size), _pair(padding), _pair(dilation)
    s = k if stride is None else _pair(stride)
    N, C, H, W = x.shape
    oh = [(n + 2 * pi - di * (ki - 1) - 1) // si + 1 for n, ki, si, pi, di in
          zip((H, W), k, s, p, d)]
    xp = np.full((N, C, H + 2 * p[0], W + 2 * p[1]), -np.inf)
    xp[:, :, p[0]:p[0] + H, p[1]:p[1] + W] = x
    slices = [(slice(i * d[0], i * d[0] + s[0] * (oh[0] - 1) + 1, s[0]),
               slice(j * d[1], j * d[1] + s[1] * (oh[1] - 1) + 1, s[1]))
              for i in range(k[0]) for j in range(k[1])]
    taps = np.stack([xp[:, :, a, b] for a, b in slices], axis=2)
    return taps, slices, p


def _np_max_pool2d(x, *args):
    taps, _, _ = _np_taps(x, *args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.max(taps, axis=2)          # NaN propagates


def _np_grad(x, ct, *args):
    """The tie-split rule: each window's ct, times (tap == max) / count, summed into the
    input over overlapping windows; padding taps are -inf, and count 0 (a NaN window)
    gives NaN for its every element."""
    taps, slices, p = _np_taps(x, *args)
    y = _np_max_pool2d(x, *args)
    hit = taps == y[:, :, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        w = hit / hit.sum(axis=2, keepdims=True)
    N, C, H, W = x.shape
    g = np.zeros((N, C, H + 2 * p[0], W + 2 * p[1]))
    for t, (a, b) in enumerate(slices):
        g[:, :, a, b] += ct * w[:, :, t]
    return g[:, :, p[0]:p[0] + H, p[1]:p[1] + W]


def _grad(f, x, ct):
    return cg.grad(lambda a: clnp.sum(f(a) * ct))(x)


# ------------------------------------------------------------------------------ PyTorch
@pytest.mark.parametrize("args", CONFIGS)
def test_max_pool2d_matches_torch(device, rng, variant, args):
    """Values and gradients of distinct-valued inputs (no ties) in every dtype: float16 and
    bfloat16 against PyTorch in float32 on the same rounded values (the max is exact, and
    each gradient element is one window's cotangent or a sum of a few)."""
    for dt in _dtypes(device, variant):
        x = rng.standard_normal(X4).astype(dt)
        xt = torch.tensor(x.astype(np.float64), requires_grad=True)
        ref = TF.max_pool2d(xt, *args[:1], stride=args[1] or None, padding=args[2],
                            dilation=args[3])
        ct = rng.standard_normal(tuple(ref.shape)).astype(dt)
        (ref * torch.tensor(ct.astype(np.float64))).sum().backward()
        xc = _c(x, device)
        y = F.max_pool2d(xc, *args)
        assert y.dtype == xc.dtype and y.shape == tuple(ref.shape)
        np.testing.assert_array_equal(_np(y), ref.detach().numpy(), err_msg=str(dt))
        g = _grad(lambda a: F.max_pool2d(a, *args), xc, _c(ct, device))
        assert g.dtype == xc.dtype
        tol = dict(rtol=1e-12, atol=0) if dt == np.float64 else \
            dict(rtol=1e-6, atol=1e-6) if dt == np.float32 else dict(rtol=2e-2, atol=2e-2)
        np.testing.assert_allclose(_np(g), xt.grad.numpy(), **tol, err_msg=str(dt))


def test_max_pool2d_views_and_3d(device, rng, variant):
    """Permuted, sliced and strided inputs are read through their strides; a broadcast
    cotangent (what the VJP of a sum passes) too; a 3-D (C, H, W) input is one image."""
    base = rng.standard_normal((4, 2, 9, 14)).astype(np.float32)
    view = clnp.permute_dims(_c(base, device), (1, 0, 2, 3))[:, :, 1:, ::2]
    ref_in = torch.tensor(base.transpose(1, 0, 2, 3)[:, :, 1:, ::2].copy(), requires_grad=True)
    ref = TF.max_pool2d(ref_in, 3, 2, 1)
    ref.sum().backward()
    np.testing.assert_array_equal(np.asarray(F.max_pool2d(view, 3, 2, 1)),
                                  ref.detach().numpy())
    g = cg.grad(lambda a: clnp.sum(F.max_pool2d(a, 3, 2, 1)))(view)
    np.testing.assert_allclose(np.asarray(g), ref_in.grad.numpy(), rtol=1e-6, atol=1e-6)
    x3 = rng.standard_normal((3, 7, 6)).astype(np.float32)
    x3t = torch.tensor(x3, requires_grad=True)
    ref3 = TF.max_pool2d(x3t, 2, 1, 1)
    ct = rng.standard_normal(tuple(ref3.shape)).astype(np.float32)
    (ref3 * torch.tensor(ct)).sum().backward()
    y3 = F.max_pool2d(_c(x3, device), 2, 1, 1)
    assert y3.shape == tuple(ref3.shape)
    np.testing.assert_array_equal(np.asarray(y3), ref3.detach().numpy())
    g3 = _grad(lambda a: F.max_pool2d(a, 2, 1, 1), _c(x3, device), _c(ct, device))
    np.testing.assert_allclose(np.asarray(g3), x3t.grad.numpy(), rtol=1e-6, atol=1e-6)


# ------------------------------------------------------------------------------ ties, NaN
def _special_input(rng, dt):
    """Few distinct values (ties in most windows, whole windows of equal values), a NaN,
    a corner of -inf (its padded windows' maximum is -inf, so the padding ties with it),
    and zeros of both signs."""
    x = rng.integers(-1, 2, X4).astype(np.float64)
    x[0, 0, :3, :3] = -np.inf
    x[0, 1, 2, 3] = np.nan
    x[1, 2, 4:, :2] = 0.0
    x[1, 2, 5, 0] = -0.0
    x[1, 1] = 1.0
    return x.astype(dt)


@pytest.mark.parametrize("args", CONFIGS)
def test_max_pool2d_ties_nan_match_composition(device, rng, variant, args):
    """With ties, NaN and -inf, values and gradients equal the old composition's bit for
    bit (float16/bfloat16 included: the weight 1/count and ct * weight round to the dtype
    as its separate operations did) and the NumPy tie-split rule; a cotangent with inf and
    NaN gives the losers of its window ct * 0 = NaN there, as the composition did."""
    for dt in _dtypes(device, variant):
        x = _special_input(rng, dt)
        xc = _c(x, device)
        y = F.max_pool2d(xc, *args)
        np.testing.assert_array_equal(_np(y), _np(_composition(xc, *args)), err_msg=str(dt))
        np.testing.assert_array_equal(_np(y), _np_max_pool2d(_np(xc), *args), err_msg=str(dt))
        ct = rng.standard_normal(y.shape).astype(dt)
        g = _grad(lambda a: F.max_pool2d(a, *args), xc, _c(ct, device))
        g_old = _grad(lambda a: _composition(a, *args), xc, _c(ct, device))
        np.testing.assert_array_equal(_np(g), _np(g_old), err_msg=str(dt))
        tol = dict(rtol=1e-6, atol=1e-6) if dt in (np.float32, np.float64) else \
            dict(rtol=2e-2, atol=2e-2)
        np.testing.assert_allclose(_np(g), _np_grad(_np(xc), _np(_c(ct, device)), *args),
                                   **tol, err_msg=str(dt))
        assert np.isnan(_np(g)[0, 1]).any() and not np.isnan(_np(g)[1]).any()
        ct[0, 2, 0, 0], ct[1, 0, 1, 1] = np.inf, np.nan
        g = _grad(lambda a: F.max_pool2d(a, *args), xc, _c(ct, device))
        g_old = _grad(lambda a: _composition(a, *args), xc, _c(ct, device))
        np.testing.assert_array_equal(_np(g), _np(g_old), err_msg=str(dt))


def test_max_pool2d_ties_split_evenly(device):
    """A window of four equal maxima gives each a quarter of its cotangent, one of two a
    half; of a padded
    window of -inf inputs, the padding takes its share (the input keeps 2 of 4 taps')."""
    x = _c(np.array([[[[3.0, 3.0, 1.0, 2.0], [3.0, 3.0, 2.0, 0.0]]]], np.float32), device)
    ct = _c(np.array([[[[4.0, 8.0]]]], np.float32), device)
    g = _grad(lambda a: F.max_pool2d(a, 2), x, ct)
    np.testing.assert_array_equal(np.asarray(g), [[[[1, 1, 0, 4], [1, 1, 4, 0]]]])
    x = _c(np.full((1, 1, 1, 2), -np.inf, np.float32), device)
    g = _grad(lambda a: F.max_pool2d(a, (1, 2), 2, (0, 1)), x, _c(np.ones((1, 1, 1, 2),
                                                                         np.float32), device))
    np.testing.assert_array_equal(np.asarray(g), [[[[0.5, 0.5]]]])


# ------------------------------------------------------------------------------ transforms
def test_max_pool2d_jvp(device, rng, variant):
    """Forward mode: <ct, J t> == <J^T ct, t>, and the tangent equals the composition's
    (ties averaged), NaN windows included."""
    args = (3, 2, 1)
    x = rng.standard_normal(X4).astype(np.float32)
    xc, t = _c(x, device), _c(rng.standard_normal(X4).astype(np.float32), device)
    y, jt = cg.jvp(lambda a: F.max_pool2d(a, *args), [xc], [t])
    ct = rng.standard_normal(y.shape).astype(np.float32)
    (g,) = cg.vjp(lambda a: F.max_pool2d(a, *args), xc)[1](_c(ct, device))
    np.testing.assert_allclose(float(np.sum(ct * np.asarray(jt))),
                               float(np.sum(np.asarray(g) * np.asarray(t))), rtol=1e-5)
    xs = _c(_special_input(rng, np.float32), device)
    _, jt = cg.jvp(lambda a: F.max_pool2d(a, *args), [xs], [t])
    _, jt_old = cg.jvp(lambda a: _composition(a, *args), [xs], [t])
    np.testing.assert_allclose(np.asarray(jt), np.asarray(jt_old), rtol=1e-6, atol=1e-6)
    assert np.isnan(np.asarray(jt)[0, 1]).any()


def test_max_pool2d_vmap_matches_loop(device, rng, variant):
    """vmap folds the batch axis into N: values, per-example gradients (a cotangent shared
    by the batch, unbatched) and forward mode equal a loop."""
    xs = _c(rng.integers(0, 3, (3,) + X4).astype(np.float32), device)     # ties
    ct = _c(rng.standard_normal((2, 3, 4, 3)).astype(np.float32), device)
    f = lambda a: F.max_pool2d(a, 3, 2, 1)                                   # noqa: E731
    loss = lambda a, c: clnp.sum(f(a) * c)                                   # noqa: E731
    ys = np.asarray(cg.vmap(f)(xs))
    gs = np.asarray(cg.vmap(cg.grad(loss), in_axes=(0, None))(xs, ct))
    ts = np.asarray(cg.vmap(lambda a: cg.jvp(f, [a], [a * 0.5 + 1.0])[1])(xs))
    for i in range(3):
        np.testing.assert_array_equal(ys[i], np.asarray(f(xs[i])))
        np.testing.assert_array_equal(gs[i], np.asarray(cg.grad(loss)(xs[i], ct)))
        np.testing.assert_allclose(ts[i], np.asarray(cg.jvp(f, [xs[i]], [xs[i] * 0.5 + 1.0])[1]),
                                   rtol=1e-6)


def test_max_pool2d_jit(device, rng):
    """Under jit the primitives run as opaque steps (no im2col/col2im left) and give the
    eager results."""
    x = _c(rng.integers(0, 3, X4).astype(np.float32), device)
    ct = _c(rng.standard_normal((2, 3, 3, 3)).astype(np.float32), device)
    loss = lambda a: clnp.sum(F.max_pool2d(a, 2) * ct)                      # noqa: E731
    g = cg.jit(cg.grad(loss))
    text = g.lower(x).as_text()
    assert "nn_max_pool2d_grad" in text and "nn_col2im" not in text and "nn_im2col" not in text
    np.testing.assert_array_equal(np.asarray(g(x)), np.asarray(cg.grad(loss)(x)))
    np.testing.assert_array_equal(np.asarray(cg.jit(lambda a: F.max_pool2d(a, 2))(x)),
                                  np.asarray(F.max_pool2d(x, 2)))


def test_max_pool2d_second_order(device, rng):
    """Hessian-vector products (jvp of grad) and the gradient of a function of the gradient
    (vjp of the grad primitive) equal the composition's; the Hessian of a max-pool of a
    smooth function is the smooth part's, routed through the winners."""
    args = (3, 2, 1)
    x = _c(rng.integers(0, 4, (1, 2, 5, 5)).astype(np.float64 if device.has_fp64
                                                     else np.float32), device)
    res = []
    for pool in (lambda a: F.max_pool2d(a, *args), lambda a: _composition(a, *args)):
        f = lambda a: clnp.sum(pool(a * a) ** 2)                             # noqa: B023, E731
        hv = cg.jvp(cg.grad(f), [x], [clnp.ones_like(x)])[1]
        gg = cg.grad(lambda a: clnp.sum(cg.grad(f)(a) ** 2))(x)              # noqa: B023
        h = cg.hessian(f)(x[:, :1])
        res.append([np.asarray(hv), np.asarray(gg), np.asarray(h)])
    for new, old, what in zip(res[0], res[1], ("jvp of grad", "grad of grad", "hessian")):
        assert np.abs(new).max() > 0, what
        np.testing.assert_allclose(new, old, rtol=1e-6, atol=1e-6, err_msg=what)


# ------------------------------------------------------------------------------ errors
def test_max_pool2d_errors(device):
    """Bad arguments raise before any kernel, naming the function and the argument."""
    x = clnp.zeros((1, 2, 4, 4), device=device)
    with pytest.raises(ValueError, match=r"max_pool2d: padding \(2, 2\) must be at most half"):
        F.max_pool2d(x, 3, padding=2)
    with pytest.raises(ValueError, match=r"max_pool2d: the input's height 4 .* smaller than"):
        F.max_pool2d(x, 5)
    with pytest.raises(ValueError, match="max_pool2d"):
        F.max_pool2d(clnp.zeros((4, 4), device=device), 2)
    with pytest.raises(TypeError, match="max_pool2d"):
        F.max_pool2d(clnp.zeros((1, 1, 4, 4), dtype=clnp.int32, device=device), 2)
