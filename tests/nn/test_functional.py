"""clnp_nn.functional against PyTorch CPU (values and gradients, float64 where the device has
it), NumPy for what PyTorch lacks, plus vmap, jit, forward-mode and argument errors.

Shapes are few and shared so that the kernels compiled for one test serve the others."""
from __future__ import annotations

import math

import numpy as np
import pytest

import clnp
import clnp_grad as cg
import clnp_nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional
pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same':UserWarning")

X4 = (2, 4, 6, 6)      # the NCHW activation shape most tests share


def _dtype(device):
    """float32, the dtype models train in: the module tests compile the same kernels, which
    keeps the suite's compile time down (PoCL builds each program in 0.5-2 s)."""
    return np.float32


def _tol(dtype):
    return dict(rtol=1e-9, atol=1e-10) if dtype == np.float64 else dict(rtol=2e-4, atol=2e-5)


def _c(a, device):
    return clnp.asarray(a, device=device) if isinstance(a, np.ndarray) else a


def check(f, tf, args, device, rng, diff=None, tol=None):
    """``f(*clnp args)`` == ``tf(*torch args)``, and the gradients of ``sum(out * ct)`` with
    respect to the float arguments listed in ``diff`` (default: every float ndarray) agree."""
    dtype = args[0].dtype if isinstance(args[0], np.ndarray) else np.float64
    tol = tol or _tol(dtype)
    if diff is None:
        diff = [i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
    targs = [torch.tensor(a, requires_grad=i in diff) if isinstance(a, np.ndarray) else a
             for i, a in enumerate(args)]
    ref = tf(*targs)
    out = f(*[_c(a, device) for a in args])
    np.testing.assert_allclose(np.asarray(out), ref.detach().numpy(), **tol)
    if not diff:
        return
    ct = rng.standard_normal(tuple(ref.shape)).astype(dtype)
    (ref * torch.tensor(ct)).sum().backward()

    def loss(*dargs):
        full = [_c(a, device) for a in args]
        for i, d in zip(diff, dargs):
            full[i] = d
        return clnp.sum(f(*full) * clnp.asarray(ct, device=device))
    grads = cg.grad(loss, argnums=tuple(range(len(diff))))(*[_c(args[i], device) for i in diff])
    for i, g in zip(diff, grads):
        np.testing.assert_allclose(np.asarray(g), targs[i].grad.numpy(), **tol,
                                   err_msg=f"gradient of argument {i}")


# ------------------------------------------------------------------------------ activations
@pytest.mark.parametrize("name,tname,kw", [
    ("relu", "relu", {}), ("gelu", "gelu", {}), ("gelu", "gelu", {"approximate": "tanh"}),
    ("silu", "silu", {}), ("sigmoid", "sigmoid", {}), ("softplus", "softplus", {}),
    ("tanh", "tanh", {}), ("softplus", "softplus", {"beta": 2.0, "threshold": 3.0})])
def test_activations(device, rng, name, tname, kw):
    x = (rng.standard_normal(X4) * 4).astype(_dtype(device))
    x[0, 0, 0, :3] = [0.0, 120.0, -120.0]     # kink, and far tails (no overflow, no NaN)
    tf = getattr(torch, tname) if tname == "tanh" else getattr(TF, tname)
    check(lambda a: getattr(F, name)(a, **kw), lambda a: tf(a, **kw), [x], device, rng)


@pytest.mark.parametrize("axis", [1, -1])
def test_softmax_log_softmax(device, rng, axis):
    x = (rng.standard_normal(X4) * 3).astype(_dtype(device))
    check(lambda a: F.softmax(a, axis=axis), lambda a: TF.softmax(a, dim=axis), [x], device, rng)
    check(lambda a: F.log_softmax(a, axis=axis), lambda a: TF.log_softmax(a, dim=axis), [x],
          device, rng)


def test_erf_against_math(device):
    v = np.linspace(-3, 3, 13).astype(_dtype(device))
    np.testing.assert_allclose(np.asarray(F.erf(clnp.asarray(v, device=device))),
                               [math.erf(e) for e in v], rtol=1e-6, atol=1e-7)


def test_erf_float32_ulp(device):
    """float32 erf is clnp_nn's own (polynomials on float8 vectors, not the driver's erf):
    within 4 ulp of the exact value (2.4 measured on PoCL over 2,000,001 points), the same
    values for an array's tail as for its body, and IEEE's special cases."""
    from scipy.special import erf as exact
    x = np.linspace(-5, 5, 200_003, dtype=np.float32)      # not a multiple of 8: a tail
    y = np.asarray(F.erf(clnp.asarray(x, device=device)))
    ref = exact(x.astype(np.float64))
    nz = ref != 0
    ulp = np.abs(y[nz] - ref[nz]) / np.spacing(np.abs(ref[nz]).astype(np.float32))
    assert ulp.max() <= 4, f"{ulp.max():.2f} ulp at x={x[nz][ulp.argmax()]}"
    tail = np.asarray(F.erf(clnp.asarray(x[-5:], device=device)))
    np.testing.assert_array_equal(tail, y[-5:])
    special = np.float32([0.0, -0.0, 1e-40, np.inf, -np.inf, np.nan, 3.92, -7.0])
    got = np.asarray(F.erf(clnp.asarray(special, device=device)))
    np.testing.assert_array_equal(got[:5], [0.0, -0.0, got[2], 1.0, -1.0])
    assert np.signbit(got[1]) and 0 < got[2] < 2e-40 and np.isnan(got[5])
    np.testing.assert_array_equal(got[6:], [1.0, -1.0])
    strided = clnp.asarray(x[:1000].reshape(100, 10), device=device)[:, ::3]
    np.testing.assert_array_equal(np.asarray(F.erf(strided)), y[:1000].reshape(100, 10)[:, ::3])


# ------------------------------------------------------------------------------ linear, conv
def test_linear(device, rng):
    dt = _dtype(device)
    w, b = rng.standard_normal((5, 6)).astype(dt), rng.standard_normal(5).astype(dt)
    check(F.linear, TF.linear, [rng.standard_normal((2, 3, 6)).astype(dt), w, b], device, rng)
    check(lambda x, w: F.linear(x, w), lambda x, w: TF.linear(x, w),
          [rng.standard_normal(6).astype(dt), w], device, rng)


CONV2D = [dict(), dict(stride=2, padding=1), dict(padding="same", dilation=(2, 1)),
          dict(groups=2, stride=(1, 2), padding=(0, 1)), dict(padding="valid")]


@pytest.mark.parametrize("kw", CONV2D, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()))
def test_conv2d(device, rng, kw):
    dt = _dtype(device)
    cin = 4 // kw.get("groups", 1)
    args = [rng.standard_normal(X4).astype(dt), rng.standard_normal((6, cin, 3, 2)).astype(dt),
            rng.standard_normal(6).astype(dt)]
    check(lambda x, w, b: F.conv2d(x, w, b, **kw), lambda x, w, b: TF.conv2d(x, w, b, **kw),
          args, device, rng)


def test_conv2d_unbatched_and_no_bias(device, rng):
    dt = _dtype(device)
    x, w = rng.standard_normal(X4[1:]).astype(dt), rng.standard_normal((6, 4, 3, 2)).astype(dt)
    check(lambda x, w: F.conv2d(x, w, padding=1), lambda x, w: TF.conv2d(x, w, padding=1),
          [x, w], device, rng)


@pytest.mark.parametrize("variant", ["row", "element"])
def test_kernel_variants(device, rng, monkeypatch, variant):
    """Both kernel shapes (CPU rows, GPU elements) on this device: a strided, padded,
    dilated convolution and its gradients, and a transposed convolution."""
    from clnp_nn.functional import _kernels
    monkeypatch.setattr(_kernels, "VARIANT", variant)
    dt = _dtype(device)
    kw = dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2))
    args = [rng.standard_normal(X4).astype(dt), rng.standard_normal((6, 4, 3, 2)).astype(dt)]
    check(lambda x, w: F.conv2d(x, w, **kw), lambda x, w: TF.conv2d(x, w, **kw), args,
          device, rng)
    args = [rng.standard_normal(X4).astype(dt), rng.standard_normal((4, 6, 3, 3)).astype(dt)]
    check(lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1),
          lambda x, w: TF.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1), args,
          device, rng)


@pytest.mark.parametrize("variant", ["row", "element"])
@pytest.mark.parametrize("batch_major", [True, False])
def test_conv_layouts(device, rng, monkeypatch, variant, batch_major):
    """Both im2col layouts (batch-major columns and a batched GEMM, as CPUs run them; the
    whole batch in one GEMM, as GPUs do) with both kernel shapes on this device: values and
    gradients against PyTorch, under jit and vmap."""
    from clnp_nn.functional import _kernels, conv
    monkeypatch.setattr(_kernels, "VARIANT", variant)
    monkeypatch.setattr(conv, "BATCH_MAJOR", batch_major)
    dt = _dtype(device)
    kw = dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2))
    args = [rng.standard_normal(X4).astype(dt), rng.standard_normal((6, 4, 3, 2)).astype(dt),
            rng.standard_normal(6).astype(dt)]
    check(lambda x, w, b: F.conv2d(x, w, b, **kw), lambda x, w, b: TF.conv2d(x, w, b, **kw),
          args, device, rng)
    xs = rng.standard_normal((3,) + X4).astype(dt)
    w = clnp.asarray(args[1], device=device)
    f = lambda a: 0.5 * clnp.sum(F.conv2d(a, w, padding=1) ** 2)   # noqa: E731
    per = np.asarray(cg.vmap(cg.jit(cg.grad(f)))(clnp.asarray(xs, device=device)))
    for i in range(3):
        xt = torch.tensor(xs[i], requires_grad=True)
        (0.5 * TF.conv2d(xt, torch.tensor(args[1]), padding=1).pow(2).sum()).backward()
        np.testing.assert_allclose(per[i], xt.grad.numpy(), **_tol(dt))


@pytest.mark.parametrize("kw", [dict(padding=1), dict(padding=(2, 1), dilation=(2, 1)),
                                dict(), dict(padding=(1, 0))],
                         ids=["pad1", "dilated", "valid", "pad10"])
@pytest.mark.parametrize("batch_major", [True, False])
def test_conv_data_gradient_as_convolution(device, rng, monkeypatch, kw, batch_major):
    """Stride-1 convolutions compute the data gradient as a convolution of the output
    gradient with the flipped, channel-swapped weights (no col2im), in both im2col layouts:
    values and both gradients against PyTorch, under jit (no col2im step in its program),
    forward mode against reverse mode, a second derivative against PyTorch's, and vmap."""
    from clnp_nn.functional import conv
    monkeypatch.setattr(conv, "BATCH_MAJOR", batch_major)
    monkeypatch.setattr(conv, "DGRAD_AS_CONV", True)
    dt = _dtype(device)
    x = rng.standard_normal(X4).astype(dt)
    w = rng.standard_normal((6, 4, 3, 2)).astype(dt)
    check(lambda x, w: F.conv2d(x, w, **kw), lambda x, w: TF.conv2d(x, w, **kw), [x, w],
          device, rng)
    xc, wc = clnp.asarray(x, device=device), clnp.asarray(w, device=device)

    def loss(x, w):
        return 0.5 * clnp.sum(F.conv2d(x, w, **kw) ** 2)
    g = cg.jit(cg.grad(loss, argnums=(0, 1)))
    assert "nn_col2im" not in g.lower(xc, wc).as_text()
    xt, wt = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    (0.5 * TF.conv2d(xt, wt, **kw).pow(2).sum()).backward()
    gx, gw = g(xc, wc)
    np.testing.assert_allclose(np.asarray(gx), xt.grad.numpy(), **_tol(dt))
    np.testing.assert_allclose(np.asarray(gw), wt.grad.numpy(), **_tol(dt))
    _adjoint_check(lambda a: F.conv2d(a, wc, **kw), x, device, rng)
    # second order: the gradient of |d loss / dx|^2 with respect to w, through the rule
    xt, wt = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    (tgx,) = torch.autograd.grad(0.5 * TF.conv2d(xt, wt, **kw).pow(2).sum(), xt,
                                 create_graph=True)
    tgx.pow(2).sum().backward()
    g2 = cg.grad(lambda w: clnp.sum(cg.grad(loss)(xc, w) ** 2))(wc)
    np.testing.assert_allclose(np.asarray(g2), wt.grad.numpy(), **_tol(dt))
    xs = rng.standard_normal((2,) + X4).astype(dt)
    per = np.asarray(cg.vmap(lambda a: F.conv2d(a, wc, **kw))(clnp.asarray(xs, device=device)))
    for i in range(2):
        np.testing.assert_allclose(per[i], TF.conv2d(torch.tensor(xs[i]), torch.tensor(w),
                                                     **kw).numpy(), **_tol(dt))


@pytest.mark.parametrize("batch_major", [True, False])
def test_conv_many_planes(device, rng, monkeypatch, batch_major):
    """Enough (image, channel) planes that the CPU row kernels of im2col and col2im loop
    over the rows of each plane in one work-item: values and gradients."""
    from clnp_nn.functional import conv
    monkeypatch.setattr(conv, "BATCH_MAJOR", batch_major)
    dt = _dtype(device)
    args = [rng.standard_normal((16, 16, 9, 7)).astype(dt),
            rng.standard_normal((5, 16, 3, 3)).astype(dt)]
    kw = dict(stride=(2, 1), padding=1)
    check(lambda x, w: F.conv2d(x, w, **kw), lambda x, w: TF.conv2d(x, w, **kw), args,
          device, rng)


@pytest.mark.parametrize("variant", ["row", "element"])
def test_im2col_batch_major_layout(device, rng, monkeypatch, variant):
    """Batch-major columns hold the same values as the (C*KH*KW, N*OH*OW) matrix, and col2im
    of either layout (transposed views included) gives the same image."""
    from clnp_nn.functional import _kernels
    monkeypatch.setattr(_kernels, "VARIANT", variant)
    x = clnp.asarray(rng.standard_normal((3, 2, 7, 6)).astype(_dtype(device)), device=device)
    geo = dict(kernel=(3, 2), stride=(2, 1), padding=(1, 1), dilation=(1, 2), out_hw=(4, 5))
    flat = np.asarray(_kernels.im2col(x, fill=-1.5, **geo))
    bm = _kernels.im2col(x, fill=-1.5, batch_major=True, **geo)
    assert bm.shape == (3, 12, 20)
    np.testing.assert_array_equal(np.asarray(bm),
                                  flat.reshape(12, 3, 20).transpose(1, 0, 2))
    ref = np.asarray(_kernels.col2im(_kernels.im2col(x, **geo), in_hw=(7, 6), **geo))
    # the padding's fill values have no pixel to go to
    np.testing.assert_allclose(np.asarray(_kernels.col2im(bm, in_hw=(7, 6), **geo)), ref,
                               rtol=1e-6)
    # a batch-major column array stored (N, L, R) and viewed as (N, R, L)
    t = clnp.asarray(np.ascontiguousarray(np.asarray(_kernels.im2col(
        x, batch_major=True, **geo)).transpose(0, 2, 1)), device=device)
    np.testing.assert_allclose(np.asarray(_kernels.col2im(clnp.matrix_transpose(t), in_hw=(7, 6),
                                                          **geo)), ref, rtol=1e-6)


@pytest.fixture
def winograd():
    prev = F.set_conv_algorithm("winograd")
    yield
    F.set_conv_algorithm(prev)


@pytest.mark.parametrize("padding", [1, 0, (1, 0), "same"])
def test_conv2d_winograd(device, rng, winograd, padding):
    """Winograd F(2x2, 3x3): values and both gradients against PyTorch, odd output sizes
    included (X4 is 6x6: padding 0 gives 4x4, (1, 0) gives 6x4; the 7x5 input odd ones)."""
    dt = _dtype(device)
    for shape in (X4, (2, 4, 7, 5)):
        args = [rng.standard_normal(shape).astype(dt), rng.standard_normal((6, 4, 3, 3)).astype(dt),
                rng.standard_normal(6).astype(dt)]
        check(lambda x, w, b: F.conv2d(x, w, b, padding=padding),
              lambda x, w, b: TF.conv2d(x, w, b, padding=padding), args, device, rng)


def test_conv2d_winograd_transforms(device, rng, winograd):
    dt = _dtype(device)
    w = clnp.asarray(rng.standard_normal((6, 4, 3, 3)).astype(dt), device=device)
    x = rng.standard_normal(X4).astype(dt)
    _adjoint_check(lambda a: F.conv2d(a, w, padding=1), x, device, rng)
    xs = rng.standard_normal((3,) + X4).astype(dt)
    f = lambda a: F.conv2d(a, w, padding=1)   # noqa: E731
    batched = np.asarray(cg.vmap(f)(clnp.asarray(xs, device=device)))
    jitted = cg.jit(f)
    for i in range(3):
        ref = TF.conv2d(torch.tensor(xs[i]), torch.tensor(np.asarray(w)), padding=1).numpy()
        np.testing.assert_allclose(batched[i], ref, **_tol(dt))
        np.testing.assert_allclose(np.asarray(jitted(clnp.asarray(xs[i], device=device))), ref,
                                   **_tol(dt))
    # strided convolutions never take the Winograd path, even when forced
    check(lambda x, w: F.conv2d(x, w, stride=2), lambda x, w: TF.conv2d(x, w, stride=2),
          [x, np.asarray(w)], device, rng)


def test_autotune_conv2d_stores_and_applies_its_choice(device, rng, tmp_path, monkeypatch):
    from clnp_nn.functional import _conv_algo
    monkeypatch.setenv("CLNP_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(_conv_algo, "_loaded", {})
    best = F.autotune_conv2d(X4, (6, 4, 3, 3), padding=1, device=device, reps=1)
    assert best in ("im2col", "winograd")
    files = list(tmp_path.glob("nn-conv2d-*.json"))
    assert len(files) == 1 and best in files[0].read_text()
    key = _conv_algo.problem_key(np.float32, X4, (6, 4, 3, 3), ((1, 1), (1, 1)))
    assert _conv_algo.choose(device, np.float32, X4, (6, 4, 3, 3), ((1, 1), (1, 1)),
                             True) == best
    monkeypatch.setattr(_conv_algo, "_loaded", {})                  # a new process reads it
    assert _conv_algo._table(device)[key] == best
    assert F.autotune_conv2d(X4, (6, 4, 3, 2), device=device) == "im2col"   # not 3x3
    with pytest.raises(ValueError, match="set_conv_algorithm: mode must be one of"):
        F.set_conv_algorithm("fft")


def test_conv2d_strided_views(device, rng):
    """Inputs that are views (permuted, sliced) are read through their strides."""
    dt = _dtype(device)
    base = rng.standard_normal((4, 2, 7, 6)).astype(dt)
    w = rng.standard_normal((6, 4, 3, 2)).astype(dt)
    xv = clnp.permute_dims(clnp.asarray(base, device=device), (1, 0, 2, 3))[:, :, 1:, :]
    ref = TF.conv2d(torch.tensor(base.transpose(1, 0, 2, 3)[:, :, 1:, :].copy()),
                    torch.tensor(w), stride=(1, 2), padding=1).numpy()
    y = F.conv2d(xv, clnp.asarray(w, device=device), stride=(1, 2), padding=1)
    np.testing.assert_allclose(np.asarray(y), ref, **_tol(dt))
    y = F.max_pool2d(xv[:, :, :, ::2], 2, 1)
    ref = TF.max_pool2d(torch.tensor(base.transpose(1, 0, 2, 3)[:, :, 1:, ::2].copy()), 2, 1)
    np.testing.assert_allclose(np.asarray(y), ref.numpy(), **_tol(dt))


@pytest.mark.parametrize("kw", [dict(), dict(stride=2, padding=2, dilation=2),
                                dict(padding="same"), dict(groups=2)])
def test_conv1d(device, rng, kw):
    dt = _dtype(device)
    cin = 4 // kw.get("groups", 1)
    args = [rng.standard_normal((2, 4, 9)).astype(dt), rng.standard_normal((6, cin, 3)).astype(dt),
            rng.standard_normal(6).astype(dt)]
    check(lambda x, w, b: F.conv1d(x, w, b, **kw), lambda x, w, b: TF.conv1d(x, w, b, **kw),
          args, device, rng)


@pytest.mark.parametrize("kw", [dict(), dict(stride=2, padding=1, output_padding=1),
                                dict(groups=2, dilation=2, stride=(2, 1))])
def test_conv_transpose2d(device, rng, kw):
    dt = _dtype(device)
    g = kw.get("groups", 1)
    args = [rng.standard_normal(X4).astype(dt), rng.standard_normal((4, 6 // g, 3, 3)).astype(dt),
            rng.standard_normal(6).astype(dt)]
    check(lambda x, w, b: F.conv_transpose2d(x, w, b, **kw),
          lambda x, w, b: TF.conv_transpose2d(x, w, b, **kw), args, device, rng)


def test_conv2d_float32_and_float16(device, rng):
    x = rng.standard_normal(X4).astype(np.float32)
    w = rng.standard_normal((6, 4, 3, 2)).astype(np.float32)
    check(lambda x, w: F.conv2d(x, w, padding=1), lambda x, w: TF.conv2d(x, w, padding=1),
          [x, w], device, rng, tol=dict(rtol=1e-4, atol=1e-4))
    ref = TF.conv2d(torch.tensor(x.astype(np.float16).astype(np.float32)),
                    torch.tensor(w.astype(np.float16).astype(np.float32)), padding=1).numpy()
    y = F.conv2d(clnp.asarray(x.astype(np.float16), device=device),
                 clnp.asarray(w.astype(np.float16), device=device), padding=1)
    assert y.dtype == clnp.float16
    np.testing.assert_allclose(np.asarray(y).astype(np.float32), ref, rtol=2e-2, atol=5e-2)


# ------------------------------------------------------------------------------ pooling
@pytest.mark.parametrize("args", [(2,), (3, 2, 1), ((3, 2), (1, 2), (1, 0))])
def test_max_pool2d(device, rng, args):
    x = rng.standard_normal(X4).astype(_dtype(device))
    check(lambda a: F.max_pool2d(a, *args), lambda a: TF.max_pool2d(a, *args), [x], device, rng)


def test_max_pool2d_dilation(device, rng):
    x = rng.standard_normal(X4).astype(_dtype(device))
    check(lambda a: F.max_pool2d(a, 2, 1, 0, 2), lambda a: TF.max_pool2d(a, 2, 1, 0, 2), [x],
          device, rng)


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                dict(kernel_size=3, stride=2, padding=1,
                                     count_include_pad=False),
                                dict(kernel_size=2, divisor_override=3)])
def test_avg_pool2d(device, rng, kw):
    x = rng.standard_normal(X4).astype(_dtype(device))
    check(lambda a: F.avg_pool2d(a, **kw), lambda a: TF.avg_pool2d(a, **kw), [x], device, rng)


@pytest.mark.parametrize("size", [1, (4, 3), (None, 5), 6])
def test_adaptive_avg_pool2d(device, rng, size):
    x = rng.standard_normal(X4).astype(_dtype(device))
    check(lambda a: F.adaptive_avg_pool2d(a, size), lambda a: TF.adaptive_avg_pool2d(a, size),
          [x], device, rng)


# ------------------------------------------------------------------------------ normalisation
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm(device, rng, training):
    dt = _dtype(device)
    x = rng.standard_normal(X4).astype(dt)
    rm, rv = rng.standard_normal(4).astype(dt), rng.uniform(0.5, 2, 4).astype(dt)
    w, b = rng.standard_normal(4).astype(dt), rng.standard_normal(4).astype(dt)
    trm, trv = torch.tensor(rm), torch.tensor(rv)
    check(lambda x, w, b: F.batch_norm(x, clnp.asarray(rm, device=device),
                                       clnp.asarray(rv, device=device), w, b, training,
                                       0.3, 1e-3)[0],
          lambda x, w, b: TF.batch_norm(x, trm.clone(), trv.clone(), w, b, training, 0.3, 1e-3),
          [x, w, b], device, rng)
    _, m, v = F.batch_norm(*[clnp.asarray(a, device=device) for a in (x, rm, rv, w, b)],
                           training=training, momentum=0.3, eps=1e-3)
    TF.batch_norm(torch.tensor(x), trm, trv, None, None, training, 0.3, 1e-3)
    np.testing.assert_allclose(np.asarray(m), trm.numpy(), **_tol(dt))
    np.testing.assert_allclose(np.asarray(v), trv.numpy(), **_tol(dt))


def test_batch_norm_without_running_stats(device, rng):
    dt = _dtype(device)
    x = rng.standard_normal((5, 3)).astype(dt)
    check(lambda a: F.batch_norm(a, None, None, training=True)[0],
          lambda a: TF.batch_norm(a, None, None, training=True), [x], device, rng)
    y, m, v = F.batch_norm(clnp.asarray(x, device=device), None, None, training=True)
    assert m is None and v is None
    with pytest.raises(ValueError, match="batch_norm: running_mean and running_var are required"):
        F.batch_norm(clnp.asarray(x, device=device), None, None)


def test_layer_norm(device, rng):
    dt = _dtype(device)
    x = rng.standard_normal(X4).astype(dt)
    w, b = rng.standard_normal((6, 6)).astype(dt), rng.standard_normal((6, 6)).astype(dt)
    check(lambda x, w, b: F.layer_norm(x, (6, 6), w, b, 1e-3),
          lambda x, w, b: TF.layer_norm(x, (6, 6), w, b, 1e-3), [x, w, b], device, rng)
    check(lambda x: F.layer_norm(x, 6), lambda x: TF.layer_norm(x, (6,)), [x], device, rng)


def test_group_norm(device, rng):
    dt = _dtype(device)
    x = rng.standard_normal(X4).astype(dt)
    w, b = rng.standard_normal(4).astype(dt), rng.standard_normal(4).astype(dt)
    check(lambda x, w, b: F.group_norm(x, 2, w, b), lambda x, w, b: TF.group_norm(x, 2, w, b),
          [x, w, b], device, rng)


def test_rms_norm(device, rng):
    dt = _dtype(device)
    x = rng.standard_normal(X4).astype(dt)
    w = rng.standard_normal(6).astype(dt)
    check(lambda x, w: F.rms_norm(x, 6, w), lambda x, w: TF.rms_norm(x, (6,), w), [x, w],
          device, rng)
    check(lambda x: F.rms_norm(x, (6, 6), eps=1e-2), lambda x: TF.rms_norm(x, (6, 6), eps=1e-2),
          [x], device, rng)


def test_norms_of_float16_compute_in_float32(device, rng):
    x = rng.standard_normal(X4).astype(np.float16)
    y = F.layer_norm(clnp.asarray(x, device=device), 6)
    assert y.dtype == clnp.float16
    ref = TF.layer_norm(torch.tensor(x.astype(np.float32)), (6,)).numpy()
    np.testing.assert_allclose(np.asarray(y).astype(np.float32), ref, rtol=1e-2, atol=4e-3)


# ------------------------------------------------------------------------------ dropout
def test_dropout(device, rng):
    x = clnp.ones((64, 64), dtype=clnp.float32, device=device)
    k = cg.random.key(7, device=device)
    y = np.asarray(F.dropout(x, 0.25, key=k))
    assert set(np.unique(y)) <= {0.0, np.float32(1 / 0.75)}
    assert abs((y == 0).mean() - 0.25) < 0.03            # 4096 draws: 5 sigma is ~0.034
    np.testing.assert_array_equal(y, np.asarray(F.dropout(x, 0.25, key=k)))  # same key, same mask
    assert not np.array_equal(y, np.asarray(F.dropout(x, 0.25, key=cg.random.key(8,
                                                                               device=device))))
    assert F.dropout(x, 0.25, training=False) is x
    np.testing.assert_array_equal(np.asarray(F.dropout(x, 1.0, key=k)), 0)
    g = cg.grad(lambda a: clnp.sum(F.dropout(a, 0.25, key=k)))(x)
    np.testing.assert_allclose(np.asarray(g), y)          # the gradient is the scaled mask
    with pytest.raises(ValueError, match="dropout: training with p=0.25 needs a random key"):
        F.dropout(x, 0.25)
    with pytest.raises(ValueError, match=r"dropout: 'p' must be in \[0, 1\]"):
        F.dropout(x, 1.5, key=k)


# ------------------------------------------------------------------------------ embedding
@pytest.mark.parametrize("padding_idx", [None, 2])
def test_embedding(device, rng, padding_idx):
    dt = _dtype(device)
    ids = np.array([[0, 2, 4], [2, 1, 0]])
    w = rng.standard_normal((5, 3)).astype(dt)
    check(lambda w: F.embedding(clnp.asarray(ids, device=device), w, padding_idx),
          lambda w: TF.embedding(torch.tensor(ids), w, padding_idx), [w], device, rng)
    with pytest.raises(IndexError, match="embedding: an id is out of range for a table of 5"):
        F.embedding(clnp.asarray(np.array([5]), device=device), clnp.asarray(w, device=device))


# ------------------------------------------------------------------------------ attention
@pytest.mark.parametrize("mode", ["plain", "causal", "bool_mask", "float_mask", "scale"])
def test_scaled_dot_product_attention(device, rng, mode):
    dt = _dtype(device)
    q, k, v = (rng.standard_normal(s).astype(dt) for s in ((2, 3, 4, 8), (2, 3, 6, 8),
                                                          (2, 3, 6, 5)))
    mask = rng.uniform(size=(4, 6)) > 0.3
    mask[:, 0] = True
    kw, tkw = {}, {}
    if mode == "causal":
        kw = tkw = {"is_causal": True}
    elif mode == "bool_mask":
        kw, tkw = {"attn_mask": clnp.asarray(mask, device=device)}, {"attn_mask": torch.tensor(mask)}
    elif mode == "float_mask":
        fm = rng.standard_normal((4, 6)).astype(dt)
        kw, tkw = {"attn_mask": clnp.asarray(fm, device=device)}, {"attn_mask": torch.tensor(fm)}
    elif mode == "scale":
        kw = tkw = {"scale": 0.3}
    check(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, **kw),
          lambda q, k, v: TF.scaled_dot_product_attention(q, k, v, **tkw), [q, k, v], device,
          rng)


# ------------------------------------------------------------------------------ losses
CE = [dict(), dict(label_smoothing=0.2), dict(reduction="sum"), dict(reduction="none"),
      dict(weight=True), dict(weight=True, label_smoothing=0.1),
      dict(weight=True, reduction="none"), dict(ignore_index=1)]


@pytest.mark.parametrize("kw", CE, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()))
def test_cross_entropy(device, rng, kw):
    dt = _dtype(device)
    logits = rng.standard_normal((6, 5)).astype(dt)
    tgt = np.array([0, 4, 2, -100 if "ignore_index" not in kw else 3, 1, 1])
    w = rng.uniform(0.5, 2, 5).astype(dt)
    ckw, tkw = dict(kw), dict(kw)
    if kw.get("weight"):
        ckw["weight"], tkw["weight"] = clnp.asarray(w, device=device), torch.tensor(w)
    check(lambda a: F.cross_entropy(a, clnp.asarray(tgt, device=device), **ckw),
          lambda a: TF.cross_entropy(a, torch.tensor(tgt), **tkw), [logits], device, rng)


def test_cross_entropy_spatial_and_probabilities(device, rng):
    dt = _dtype(device)
    logits = rng.standard_normal((2, 5, 3)).astype(dt)
    tgt = rng.integers(0, 5, (2, 3))
    check(lambda a: F.cross_entropy(a, clnp.asarray(tgt, device=device), 0.1),
          lambda a: TF.cross_entropy(a, torch.tensor(tgt), label_smoothing=0.1), [logits],
          device, rng)
    p = rng.uniform(size=(6, 5)).astype(dt)
    p /= p.sum(1, keepdims=True)
    check(lambda a, p: F.cross_entropy(a, p, 0.1), lambda a, p: TF.cross_entropy(
        a, p, label_smoothing=0.1), [rng.standard_normal((6, 5)).astype(dt), p], device, rng,
          diff=[0])
    one = rng.standard_normal(5).astype(dt)
    check(lambda a: F.cross_entropy(a, clnp.asarray(np.array(3), device=device)),
          lambda a: TF.cross_entropy(a, torch.tensor(3)), [one], device, rng)


def test_nll_loss(device, rng):
    dt = _dtype(device)
    lp = np.log(rng.uniform(0.1, 1, (6, 5))).astype(dt)
    tgt = np.array([0, 4, 2, 3, 1, 1])
    w = rng.uniform(0.5, 2, 5).astype(dt)
    check(lambda a: F.nll_loss(a, clnp.asarray(tgt, device=device),
                               clnp.asarray(w, device=device)),
          lambda a: TF.nll_loss(a, torch.tensor(tgt), torch.tensor(w)), [lp], device, rng)
    with pytest.raises(IndexError, match="nll_loss: target 5 is out of bounds for 5 classes"):
        F.nll_loss(clnp.asarray(lp, device=device), clnp.asarray(tgt + 1, device=device))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_regression_losses(device, rng, reduction):
    dt = _dtype(device)
    a, b = rng.standard_normal((6, 5)).astype(dt), rng.standard_normal((6, 5)).astype(dt)
    check(lambda a, b: F.mse_loss(a, b, reduction), lambda a, b: TF.mse_loss(
        a, b, reduction=reduction), [a, b], device, rng)
    check(lambda a, b: F.l1_loss(a, b, reduction), lambda a, b: TF.l1_loss(
        a, b, reduction=reduction), [a, b], device, rng)


@pytest.mark.parametrize("weights", [False, True])
def test_binary_cross_entropy_with_logits(device, rng, weights):
    dt = _dtype(device)
    x = (rng.standard_normal((6, 5)) * 30).astype(dt)     # large logits: no overflow
    y = rng.uniform(size=(6, 5)).astype(dt)
    w, pw = rng.uniform(0.5, 2, (6, 5)).astype(dt), rng.uniform(0.5, 2, 5).astype(dt)
    if weights:
        check(lambda x, w, pw: F.binary_cross_entropy_with_logits(
                  x, clnp.asarray(y, device=device), w, "mean", pw),
              lambda x, w, pw: TF.binary_cross_entropy_with_logits(
                  x, torch.tensor(y), w, reduction="mean", pos_weight=pw), [x, w, pw], device,
              rng, diff=[0])
    else:
        check(lambda x, y: F.binary_cross_entropy_with_logits(x, y),
              lambda x, y: TF.binary_cross_entropy_with_logits(x, y), [x, y], device, rng)


# ------------------------------------------------------------------------------ transforms
def _adjoint_check(f, x, device, rng):
    """Forward mode agrees with reverse mode: <ct, J t> == <J^T ct, t>."""
    xs = clnp.asarray(x, device=device)
    t = rng.standard_normal(x.shape).astype(x.dtype)
    out, jt = cg.jvp(f, [xs], [clnp.asarray(t, device=device)])
    ct = rng.standard_normal(out.shape).astype(x.dtype)
    (g,) = cg.vjp(f, xs)[1](clnp.asarray(ct, device=device))
    np.testing.assert_allclose(float(np.sum(ct * np.asarray(jt))),
                               float(np.sum(np.asarray(g) * t)), rtol=1e-4)


def test_forward_mode(device, rng):
    dt = _dtype(device)
    x = rng.standard_normal(X4).astype(dt)
    w = clnp.asarray(rng.standard_normal((6, 4, 3, 2)).astype(dt), device=device)
    wt = clnp.asarray(rng.standard_normal((4, 6, 3, 3)).astype(dt), device=device)
    _adjoint_check(lambda a: F.conv2d(a, w, stride=2, padding=1), x, device, rng)
    _adjoint_check(lambda a: F.conv_transpose2d(a, wt, stride=2, padding=1), x, device, rng)
    _adjoint_check(lambda a: F.max_pool2d(a, 3, 2, 1), x, device, rng)
    _adjoint_check(lambda a: F.gelu(a), x, device, rng)


def test_vmap_matches_loop(device, rng):
    dt = _dtype(device)
    xs = rng.standard_normal((3,) + X4).astype(dt)
    w = clnp.asarray(rng.standard_normal((6, 4, 3, 2)).astype(dt), device=device)
    f = lambda a: F.max_pool2d(F.relu(F.conv2d(a, w, padding=1)), 2)   # noqa: E731
    batched = np.asarray(cg.vmap(f)(clnp.asarray(xs, device=device)))
    for i in range(3):
        np.testing.assert_allclose(batched[i], np.asarray(f(clnp.asarray(xs[i], device=device))),
                                   **_tol(dt))
    # per-example gradients of a loss: vmap of grad through conv and its col2im adjoint
    y = clnp.asarray(np.array([[1, 0], [2, 2], [0, 1]]), device=device)
    loss = lambda w, a, t: F.cross_entropy(F.adaptive_avg_pool2d(F.conv2d(a, w), 1)[:, :, 0, 0],
                                           t)   # noqa: E731
    per = cg.vmap(cg.grad(loss), in_axes=(None, 0, 0))(w, clnp.asarray(xs, device=device), y)
    for i in range(3):
        gi = cg.grad(loss)(w, clnp.asarray(xs[i], device=device), y[i])
        np.testing.assert_allclose(np.asarray(per)[i], np.asarray(gi), **_tol(dt))


def test_vmap_attention_dropout_embedding(device, rng):
    dt = _dtype(device)
    q = clnp.asarray(rng.standard_normal((3, 2, 4, 8)).astype(dt), device=device)
    f = lambda a: F.scaled_dot_product_attention(a, a, a, is_causal=True)   # noqa: E731
    out = np.asarray(cg.vmap(f)(q))
    for i in range(3):
        np.testing.assert_allclose(out[i], np.asarray(f(q[i])), **_tol(dt))
    keys = cg.random.split(cg.random.key(3, device=device), 3)
    x = clnp.ones((3, 64), dtype=clnp.float32, device=device)
    masks = np.asarray(cg.vmap(lambda k, a: F.dropout(a, 0.5, key=k))(keys, x))
    for i in range(3):          # each batch element uses its own key, as an unbatched call
        np.testing.assert_array_equal(masks[i], np.asarray(F.dropout(x[i], 0.5, key=keys[i])))
    assert not np.array_equal(masks[0], masks[1])
    w = clnp.asarray(rng.standard_normal((5, 3)).astype(dt), device=device)
    ids = clnp.asarray(np.array([[0, 4], [3, 3], [1, 2]]), device=device)
    np.testing.assert_allclose(np.asarray(cg.vmap(lambda i: F.embedding(i, w))(ids)),
                               np.asarray(w)[np.asarray(ids)])


def test_jit_matches_eager(device, rng):
    dt = _dtype(device)
    x = clnp.asarray(rng.standard_normal(X4).astype(dt), device=device)
    w = clnp.asarray(rng.standard_normal((6, 4, 3, 2)).astype(dt), device=device)
    t = clnp.asarray(np.array([1, 4]), device=device)

    def loss(w, x):
        h = F.gelu(F.conv2d(x, w, stride=2, padding=1))
        h = F.layer_norm(F.avg_pool2d(h, (3, 4))[:, :, 0, 0], 6)          # (2, 6)
        return F.cross_entropy(h, t, label_smoothing=0.1)
    eager = cg.value_and_grad(loss)(w, x)
    jitted = cg.jit(cg.value_and_grad(loss))(w, x)
    for a, b in zip(eager, jitted):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), **_tol(dt))


# ------------------------------------------------------------------------------ errors
def test_errors_name_function_argument_and_shapes(device, rng):
    x = clnp.asarray(rng.standard_normal(X4).astype(np.float32), device=device)
    w = clnp.asarray(rng.standard_normal((6, 3, 3, 3)).astype(np.float32), device=device)
    with pytest.raises(ValueError, match=r"conv2d: weight of shape \(6, 3, 3, 3\) expects 3 "
                                         r"input channels .* has 4"):
        F.conv2d(x, w)
    with pytest.raises(ValueError, match="conv2d: padding='same' is not supported for strided"):
        F.conv2d(x, w, stride=2, padding="same")
    with pytest.raises(TypeError, match="conv2d: argument 'x' is a NumPy array"):
        F.conv2d(np.zeros(X4), w)
    with pytest.raises(TypeError, match="conv2d: 'stride' must be an int or a tuple of 2 ints"):
        F.conv2d(x, w, stride=(1, 2, 3))
    with pytest.raises(ValueError, match=r"linear: x's last dim 6 \(shape \(2, 4, 6, 6\)\) does "
                                         r"not match weight's in_features 5"):
        F.linear(x, clnp.zeros((3, 5), device=device))
    with pytest.raises(ValueError, match=r"max_pool2d: padding \(2, 2\) must be at most half"):
        F.max_pool2d(x, 3, padding=2)
    with pytest.raises(ValueError, match=r"layer_norm: normalized_shape \(5,\) must be the "
                                         r"trailing dims"):
        F.layer_norm(x, 5)
    with pytest.raises(ValueError, match=r"cross_entropy: target must be integer class indices "
                                         r"of shape \(2,\) .* got target of shape \(3,\)"):
        F.cross_entropy(clnp.zeros((2, 5), device=device),
                        clnp.asarray(np.array([0, 1, 2]), device=device))
    with pytest.raises(ValueError, match="mse_loss: x of shape .* and target of shape"):
        F.mse_loss(x, x[0])
    with pytest.raises(ValueError, match="gelu: approximate must be 'none' or 'tanh'"):
        F.gelu(x, "erf")
    with pytest.raises(ValueError, match="group_norm: num_groups=3 must divide the 4 channels"):
        F.group_norm(x, 3)
    with pytest.raises(ValueError, match="scaled_dot_product_attention: pass either attn_mask"):
        F.scaled_dot_product_attention(x, x, x, clnp.ones((6, 6), dtype=clnp.bool,
                                                          device=device), True)
