"""Eager implementation of the ``fft`` primitive: a one-dimensional DFT along one axis.

``fft(x, axis, n, kind, inverse, norm)`` transforms ``n`` points along ``axis`` of ``x``
(zero-padded or truncated) for every index of the other axes:

``kind="c2c"``  complex (or real) input, ``n`` complex outputs;
``kind="r2c"``  real input, the ``n // 2 + 1`` non-negative frequencies;
``kind="c2r"``  a half spectrum (``n // 2 + 1`` values used), ``n`` real outputs.

``inverse`` picks the exponent sign (+1 when True) and, with ``norm``, the scale: forward
transforms scale by 1, ``1/sqrt(n)``, ``1/n`` for ``backward``/``ortho``/``forward``, inverse
ones by ``1/n``, ``1/sqrt(n)``, 1. (``hfft`` is c2r forward, ``ihfft`` r2c inverse.)

Plan: lengths whose prime factors are 2, 3, 5, 7 run Stockham passes of radix 8/4/2/3/5/7;
other lengths use Bluestein's chirp-z algorithm (a convolution through power-of-two FFTs of
length >= 2n - 1). Real transforms of even length pack pairs of reals into one complex
value and run a half-length complex FFT. The gather/scatter kernels read and write the
transformed axis in place (any strides), so no axis is ever moved by a copy.
Constant tables (twiddles, chirps) are computed once per (device, length, dtype) in double
precision on the host and kept on the device; Bluestein's filter is transformed on the
device.
"""
from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._runtime.deferred import deferred_import
from .._core import dtypes as dt
from .._core.array import Array
from .._core.eager import collapse, contiguous_copy, convert_element_type, local_size
from .._core.prims import def_impl
from .._runtime.device import Device, launch

# run at first use, not at import clnp (clnp._runtime.deferred)
_fft_kernels = deferred_import("clnp._kernels.fft")

_G_PLAIN, _G_HERM, _G_RPACK, _G_HPACK = 0, 1, 2, 3      # gather modes
_S_CPLX, _S_REAL, _S_RPOST, _S_UNPACK = 0, 1, 2, 3      # scatter modes


def _kernel(device: Device, spec: _fft_kernels.FftSpec, kind: str):
    return device.kernel((spec, kind), lambda: _fft_kernels.render_fft(spec, kind))


def _launch(device: Device, kern, width: int, d1: int, d0: int, *args: Any) -> None:
    """Launch ``width`` items per row over ``d0 x d1`` rows (a 3-D range, so no item divides
    its index; ``d1`` is the kernel's first argument). Short rows share a work-group with
    neighbouring rows."""
    L = local_size(device)
    if device.is_cpu:
        # PoCL compiles a kernel once per work-group shape: three shapes serve every width
        L0 = L if width > 8 else 8 if width > 1 else 1
    else:
        L0 = min(L, 1 << max(width - 1, 0).bit_length())
    L1 = L // L0
    launch(device, kern, (-(-width // L0) * L0, -(-d1 // L1) * L1, d0), (L0, L1, 1), d1,
           *args)


# ------------------------------------------------------------------------------ plans
def _factor(n: int) -> tuple[list[int], int]:
    """Radices (8s first, then 4/2, 3, 5, 7) whose product is the 7-smooth part of ``n``,
    and the rest of ``n``."""
    e = {}
    for p in (2, 3, 5, 7):
        e[p] = 0
        while n % p == 0:
            n //= p
            e[p] += 1
    n8, r2 = divmod(e[2], 3)
    radices = [8] * n8
    if r2 == 2:
        radices.append(4)
    elif r2 == 1:
        if n8:       # 8 * 2 as 4 * 4: radix 2 passes do the least work per memory pass
            radices[-1:] = [4, 4]
        else:
            radices.append(2)
    radices += [3] * e[3] + [5] * e[5] + [7] * e[7]
    return radices, n


def _smooth(n: int) -> bool:
    return _factor(n)[1] == 1


@dataclass
class _Passes:
    """Stockham passes over rows of ``P`` points with the twiddle table of ``TN`` points."""
    P: int
    steps: list[tuple[int, int, int]]     # (radix, Ns, tstep)
    table: Array


@dataclass
class _Bluestein:
    n: int
    M: int
    passes: _Passes      # length M
    chirp: Array         # exp(-i pi j^2 / n), j < n
    filt: Array          # FFT_M(conj(chirp) arranged circularly) / M


_CACHE: OrderedDict = OrderedDict()
_CACHE_BYTES = 64 << 20      # tables beyond this are dropped, least recently used first


def _cached(key: tuple, make) -> Any:
    hit = _CACHE.get(key)
    if hit is not None:
        _CACHE.move_to_end(key)
        return hit[0]
    value = make()
    size = _nbytes(value)
    _CACHE[key] = (value, size)
    total = sum(s for _, s in _CACHE.values())
    while total > _CACHE_BYTES and len(_CACHE) > 1:
        _, (_, s) = _CACHE.popitem(last=False)
        total -= s
    return value


def _nbytes(v: Any) -> int:
    if isinstance(v, Array):
        return v.nbytes
    if isinstance(v, _Passes):
        return 0         # its table is cached (and counted) under its own key
    if isinstance(v, _Bluestein):
        return v.chirp.nbytes + v.filt.nbytes
    return 0


def _roots(m: np.ndarray, N: int) -> np.ndarray:
    """``exp(-2 pi i m / N)`` in double precision for integers ``0 <= m < N``: the angle is
    reduced exactly (integer arithmetic) to at most pi/4 within its quadrant, so values at
    multiples of pi/2 are exact (as NumPy's pocketfft gives them) and the rest are accurate
    to an ulp or so."""
    a = 4 * m
    q = a // N
    r = a - q * N
    flip = 2 * r > N
    th = (np.pi / 2) * (np.where(flip, N - r, r) / N)
    c, s = np.cos(th), np.sin(th)
    c, s = np.where(flip, s, c), np.where(flip, c, s)          # the angle within its quadrant
    re = np.choose(q % 4, [c, -s, -c, s])
    im = np.choose(q % 4, [s, c, -s, -c])
    return re - 1j * im


def _twiddles(device: Device, TN: int, cdt: np.dtype) -> Array:
    """``exp(-2 pi i m / TN)`` for ``m < TN``."""
    def make() -> Array:
        host = _roots(np.arange(TN, dtype=np.int64), TN)
        return Array.from_numpy(host.astype(cdt), device)
    return _cached(("tw", device.index, TN, cdt), make)


def _passes(device: Device, P: int, TN: int, cdt: np.dtype) -> _Passes:
    def make() -> _Passes:
        radices, rest = _factor(P)
        assert rest == 1 and TN % P == 0
        steps, Ns = [], 1
        for R in radices:
            steps.append((R, Ns, TN // (Ns * R)))
            Ns *= R
        return _Passes(P, steps, _twiddles(device, TN, cdt))
    return _cached(("passes", device.index, P, TN, cdt), make)


def _bluestein(device: Device, n: int, cdt: np.dtype) -> _Bluestein:
    def make() -> _Bluestein:
        M = 1 << (2 * n - 2).bit_length()          # the least power of two >= 2n - 1
        j = np.arange(n, dtype=np.int64)
        c = _roots((j * j) % (2 * n), 2 * n)
        b = np.zeros(M, np.complex128)
        b[:n] = np.conj(c)
        b[M - n + 1:] = np.conj(c[1:])[::-1]
        passes = _passes(device, M, M, cdt)
        spec = _fft_kernels.FftSpec(dt.float64 if cdt == dt.complex128 else dt.float32)
        work = Array.from_numpy(b.astype(cdt), device)
        res = _run_passes(device, spec, passes, work, 1, 1)
        filt = Array.empty((M,), cdt, device)
        _launch(device, _kernel(device, spec, "scatter0"), M, 1, 1, M, M, 0, 0, 1, res._buf,
                res._buf, 0, 1, 1.0 / M, filt._buf, 0)
        return _Bluestein(n, M, passes, Array.from_numpy(c.astype(cdt), device), filt)
    return _cached(("bluestein", device.index, n, cdt), make)


def _run_passes(device: Device, spec: _fft_kernels.FftSpec, plan: _Passes, work: Array, rows: int,
                direction: int, spare: Array | None = None) -> Array:
    """Transform every row of ``work`` (``rows`` x ``plan.P``); returns the buffer holding
    the result (``work`` or ``spare``: passes ping-pong between the two)."""
    P = plan.P
    if not plan.steps:
        return work
    src = work
    dst = spare if spare is not None else Array.empty(work.shape, work.dtype, device)
    tab = plan.table._buf
    for R, Ns, tstep in plan.steps:
        Q = P // R
        _launch(device, _kernel(device, spec, f"r{R}"), Q, rows, 1, Q, Ns, tstep, direction,
                src._buf, dst._buf, tab)
        src, dst = dst, src
    return src


# ------------------------------------------------------------------------------ primitive
def _scale(n: int, inverse: bool, norm: str) -> float:
    if norm == "ortho":
        return 1.0 / math.sqrt(n)
    if (norm == "backward") == inverse:
        return 1.0 / n
    return 1.0


def _batch_layout(x: Array, out: Array, axis: int):
    """Collapsed batch dims padded to two: sizes ``(d0, d1)`` and the input/output strides,
    or None when the input's batch dims do not collapse to two."""
    kept = [i for i in range(x.ndim) if i != axis]
    shape, (xs, ys) = collapse([x.shape[i] for i in kept],
                               [[x._strides[i] for i in kept], [out._strides[i] for i in kept]])
    if len(shape) > 2:
        return None
    pad = 2 - len(shape)
    shape, xs, ys = [1] * pad + shape, [0] * pad + xs, [0] * pad + ys
    if shape[0] > shape[1]:
        # the larger dim goes to the range's dim 1 (work-groups span it; GPUs limit dim 2)
        shape, xs, ys = shape[::-1], xs[::-1], ys[::-1]
    return shape[0], shape[1], xs, ys


@def_impl("fft")
def fft(x: Array, *, axis: int, n: int, kind: str, inverse: bool, norm: str) -> Array:
    """DFT of ``n`` points along ``axis`` (see the module docstring); ``x`` is float32,
    float64, complex64 or complex128 (real input for r2c)."""
    device = x.device
    real = dt.float64 if x.dtype in (dt.float64, dt.complex128) else dt.float32
    cdt = dt.complex128 if real == dt.float64 else dt.complex64
    spec = _fft_kernels.FftSpec(real)
    nout = n // 2 + 1 if kind == "r2c" else n
    out_shape = x.shape[:axis] + (nout,) + x.shape[axis + 1:]
    out = Array.empty(out_shape, real if kind == "c2r" else cdt, device)
    if out.size == 0:
        return out
    if kind == "c2r" and x.dtype.kind == "f":     # rare: no real-input variant of the kernels
        x = convert_element_type(x, dtype=cdt)
    layout = _batch_layout(x, out, axis)
    if layout is None:       # batch dims too scattered to address with two strides
        x = contiguous_copy(x)
        layout = _batch_layout(x, out, axis)
    d0, d1, xs, ys = layout
    rows = out.size // nout
    m = min(x.shape[axis], n // 2 + 1 if kind == "c2r" else n)
    direction = -1 if inverse else 1
    scale = _scale(n, inverse, norm)
    packed = kind != "c2c" and n % 2 == 0 and _smooth(n // 2)
    if packed:
        P = n // 2
        plan = _passes(device, P, n, cdt)
        gmode, smode = (_G_RPACK, _S_RPOST) if kind == "r2c" else (_G_HPACK, _S_UNPACK)
        Pw, tab, chirp, blue = P, plan.table, 0, None
    else:
        gmode = _G_HERM if kind == "c2r" else _G_PLAIN
        smode = _S_REAL if kind == "c2r" else _S_CPLX
        if _smooth(n):
            plan = _passes(device, n, n, cdt)
            Pw, tab, chirp, blue = n, plan.table, 0, None
        else:
            blue = _bluestein(device, n, cdt)
            plan = blue.passes
            Pw, tab, chirp = blue.M, blue.chirp, 1
    work = Array.empty((rows * Pw,), cdt, device)
    spare = Array.empty((rows * Pw,), cdt, device) if plan.steps else None
    gather = f"gather{gmode}{'c' if x.dtype.kind == 'c' else 'r'}"
    _launch(device, _kernel(device, spec, gather), Pw, d1, d0, Pw, n, m, *xs, x._strides[axis],
            x._buf, x._offset, tab._buf, chirp, direction, work._buf)
    if blue is None:
        res = _run_passes(device, spec, plan, work, rows, direction, spare)
    else:
        # the convolution: forward FFT, times the filter (conjugated for inverse transforms),
        # inverse FFT; the chirps carry the transform's direction
        res = _run_passes(device, spec, plan, work, rows, 1, spare)
        _launch(device, _kernel(device, spec, "cmul"), Pw, rows, 1, Pw, direction, res._buf,
                blue.filt._buf)
        res = _run_passes(device, spec, plan, res, rows, -1, spare if res is work else work)
    _launch(device, _kernel(device, spec, f"scatter{smode}"), nout, d1, d0, Pw, nout, *ys,
            out._strides[axis], res._buf, tab._buf, chirp, direction, scale, out._buf,
            out._offset)
    return out
