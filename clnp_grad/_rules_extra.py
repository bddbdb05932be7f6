"""Differentiation and batching rules for sorting, cumulative sums and products, real FFTs
and ``unique``.

Rules follow the conventions of :mod:`clnp_grad._rules` (``JVP[name](primals, tangents, out,
**params)``, ``VJP[name](ct, primals, out, **params)``) and are written with clnp functions
and primitives, so they are differentiated again by nested transformations. Complex
cotangents follow JAX: the VJP of ``f`` is the transpose of its tangent map under the real
pairing ``Re(sum(ct * v))`` (no conjugation), so ``Re<ct, J t> == Re<J^T ct, t>``.
Primitives with integer or boolean outputs (argsort, argmax, ..., comparisons, logical and
bitwise ops) have zero derivatives: they are listed in ``_rules.NON_DIFFERENTIABLE``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import clnp as xp
from clnp._kernels import op_table as _ops
from clnp._core.prims import Primitive, primitive

from ._rules import JVP, NON_DIFFERENTIABLE, VJP, is_float, unbroadcast
from ._vmap import BATCH, _materialize
from clnp._core.dtypes import kind as dkind


def _bind(name: str, *args: Any, **params: Any) -> Any:
    return primitive(name).bind(*args, **params)


# ------------------------------------------------------------------------------ zero rules
# Table ops that return booleans or take no floating-point input (logical, bitwise) carry no
# derivative; listing them also keeps reverse mode from looking for a rule when their inputs
# are traced booleans (logical_and of two comparisons).
NON_DIFFERENTIABLE.update(n for n, rec in _ops.OPS.items()
                          if rec.out == "bool" or not rec.accepts(np.dtype(np.float64)))


# ------------------------------------------------------------------------------ helpers
def _axis_slice(x: Any, axis: int, start: int, stop: int) -> Any:
    idx = [slice(None)] * x.ndim
    idx[axis] = slice(start, stop)
    return x[tuple(idx)]


def _axis_fill(x: Any, axis: int, width: int, value: float) -> Any:
    """A block of ``value`` shaped like ``x`` but ``width`` long along ``axis``."""
    shape = list(x.shape)
    shape[axis] = width
    return xp.full(tuple(shape), value, dtype=x.dtype, device=x.device)


def _shift(x: Any, axis: int, d: int, fill: float) -> Any:
    """``x`` moved ``d`` places towards higher indices along ``axis``; ``fill`` enters."""
    n = x.shape[axis]
    if d >= n:
        return _axis_fill(x, axis, n, fill)
    return xp.concat([_axis_fill(x, axis, d, fill), _axis_slice(x, axis, 0, n - d)], axis=axis)


def _resize(x: Any, axis: int, m: int) -> Any:
    """Truncate or zero-pad ``x`` along ``axis`` to length ``m``."""
    n = x.shape[axis]
    if m < n:
        return _axis_slice(x, axis, 0, m)
    if m > n:
        return xp.concat([x, _axis_fill(x, axis, m - n, 0)], axis=axis)
    return x


def _take_along(x: Any, idx: Any, axis: int) -> Any:
    """``x`` gathered along ``axis`` at ``idx`` (shaped like ``x``). The indices come from a
    sort, so no bounds check (and no read-back) is needed."""
    arrays = []
    for d in range(x.ndim):
        if d == axis:
            arrays.append(idx)
        else:
            shape = [1] * x.ndim
            shape[d] = x.shape[d]
            arrays.append(xp.reshape(xp.arange(x.shape[d], device=x.device), tuple(shape)))
    return _bind("gather", x, *arrays, in_bounds=True)


# ------------------------------------------------------------------------------ sort
def _perm(x: Any, axis: int, descending: bool) -> Any:
    # argsort runs the same stable sorter as sort, so ties resolve identically
    return _bind("argsort", x, axis=axis, descending=descending, stable=True)


def _jvp_sort(primals: tuple, tangents: tuple, out: Any, *, axis: int, descending: bool,
              stable: bool = True) -> Any:
    t = tangents[0]
    return None if t is None else _take_along(t, _perm(primals[0], axis, descending), axis)


def _vjp_sort(ct: Any, primals: tuple, out: Any, *, axis: int, descending: bool,
              stable: bool = True) -> tuple:
    """Route each cotangent back to the position its element came from: a gather by the
    inverse permutation (itself an argsort), which needs no atomic adds."""
    x = primals[0]
    if not is_float(x):
        return (None,)
    inv = _perm(_perm(x, axis, descending), axis, False)
    return (unbroadcast(_take_along(ct, inv, axis), x.shape, x.dtype),)


JVP["sort"] = _jvp_sort
VJP["sort"] = _vjp_sort


# ------------------------------------------------------------------------------ cumsum
def _vjp_cumsum(ct: Any, primals: tuple, out: Any, *, axis: int,
                include_initial: bool = False) -> tuple:
    """The transpose of a cumulative sum is the reversed cumulative sum; the leading zero
    of ``include_initial`` depends on nothing."""
    x = primals[0]
    if not is_float(x):
        return (None,)
    if include_initial:
        ct = _axis_slice(ct, axis, 1, ct.shape[axis])
    g = xp.flip(_bind("cumsum", xp.flip(ct, axis=axis), axis=axis, include_initial=False),
                axis=axis)
    return (unbroadcast(g, x.shape, x.dtype),)


VJP["cumsum"] = _vjp_cumsum


# ------------------------------------------------------------------------------ cumprod
def _affine_scan(a: Any, b: Any, axis: int) -> Any:
    """``y[k] = a[k] * y[k-1] + b[k]`` along ``axis`` (``y[-1] = 0``) by recursive doubling:
    each round composes every affine map with the one ``d`` places before it, log2(n)
    rounds of clnp operations (so the scan is differentiable again)."""
    n, d = a.shape[axis], 1
    while d < n:
        b = b + a * _shift(b, axis, d, 0)
        if 2 * d < n:
            a = a * _shift(a, axis, d, 1)
        d *= 2
    return b


def _exclusive(out: Any, axis: int, include_initial: bool) -> Any:
    """``E[k] = prod(x[:k])`` from the primal output: products of the other factors are then
    ``E`` times a scan, never ``out / x``, so zeros in ``x`` are exact."""
    n = out.shape[axis]
    if include_initial:
        return _axis_slice(out, axis, 0, n - 1)
    return _shift(out, axis, 1, 1)


def _jvp_cumprod(primals: tuple, tangents: tuple, out: Any, *, axis: int,
                 include_initial: bool = False) -> Any:
    """``dout[k] = dout[k-1] * x[k] + out[k-1] * dx[k]``: an affine scan."""
    x, t = primals[0], tangents[0]
    if t is None:
        return None
    dy = _affine_scan(x, _exclusive(out, axis, include_initial) * t, axis)
    return xp.concat([_axis_fill(dy, axis, 1, 0), dy], axis=axis) if include_initial else dy


def _vjp_cumprod(ct: Any, primals: tuple, out: Any, *, axis: int,
                 include_initial: bool = False) -> tuple:
    """``g[j] = E[j] * h[j]`` with ``h[j] = ct[j] + x[j+1] * h[j+1]``: the same affine scan
    run backwards."""
    x = primals[0]
    if not is_float(x):
        return (None,)
    if include_initial:
        ct = _axis_slice(ct, axis, 1, ct.shape[axis])
    a = _shift(xp.flip(x, axis=axis), axis, 1, 0)
    h = xp.flip(_affine_scan(a, xp.flip(ct, axis=axis), axis), axis=axis)
    g = _exclusive(out, axis, include_initial) * h
    return (unbroadcast(g, x.shape, x.dtype),)


JVP["cumprod"] = _jvp_cumprod
VJP["cumprod"] = _vjp_cumprod


# ------------------------------------------------------------------------------ real FFTs
def _hermitian_weights(ct: Any, axis: int, n: int) -> Any:
    """1 for the zero frequency (and the Nyquist one when ``n`` is even), 2 for the others:
    each of those stands for itself and its conjugate mirror in the full spectrum."""
    h = n // 2 + 1
    w = np.full(h, 2.0)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    shape = [1] * ct.ndim
    shape[axis] = h
    return xp.asarray(w.reshape(shape), dtype=ct.dtype, device=ct.device)


def vjp_real_fft(ct: Any, x: Any, *, axis: int, n: int, kind: str, inverse: bool,
                 norm: str) -> Any:
    """Cotangent of the input of an ``r2c`` or ``c2r`` transform (JAX's conventions).

    ``r2c`` keeps the first ``n // 2 + 1`` outputs of a complex DFT of real input: its
    transpose zero-pads ``ct`` to ``n``, applies the (symmetric) DFT and keeps the real part.
    ``c2r`` sums each retained frequency with its conjugate mirror and ignores the imaginary
    parts of the self-mirrored ones: its transpose is the ``r2c`` transform of ``ct`` with the
    same sign and scale, the mirrored frequencies weighted twice."""
    if kind == "r2c":
        g = _bind("fft", _resize(ct, axis, n), axis=axis, n=n, kind="c2c", inverse=inverse,
                  norm=norm)
    else:
        g = _bind("fft", ct, axis=axis, n=n, kind="r2c", inverse=inverse, norm=norm)
        g = g * _hermitian_weights(ct, axis, n)
    g = _resize(g, axis, x.shape[axis])
    return unbroadcast(g, x.shape, x.dtype) if is_float(x) else None


# ------------------------------------------------------------------------------ unique
def _unique_maps(x: Any, out: tuple, params: dict) -> tuple[Any, Any]:
    """First index of each unique value and the inverse map (flat), recomputed when the call
    did not ask for them."""
    index, inverse = out[1], out[2]
    if index is None or inverse is None:
        res = _bind("unique", x, return_index=True, return_inverse=True, return_counts=False,
                    equal_nan=params["equal_nan"])
        index, inverse = res[1], res[2]
    return index, xp.reshape(inverse, (x.size,))


def _jvp_unique(primals: tuple, tangents: tuple, out: tuple, **params: Any) -> tuple:
    """Each unique value moves with its first occurrence (a stable sort's choice, as in
    JAX); the index outputs have no derivative."""
    t = tangents[0]
    if t is None:
        return (None,) * 4
    x = primals[0]
    index, _ = _unique_maps(x, out, params)
    tv = _bind("gather", xp.reshape(t, (x.size,)), index, in_bounds=True)
    return (tv, None, None, None)


def _vjp_unique(ct: Any, primals: tuple, out: tuple, **params: Any) -> tuple:
    x = primals[0]
    cv = ct[0]
    if cv is None or not is_float(x):
        return (None,)
    index, inverse = _unique_maps(x, out, params)
    first = _bind("gather", index, inverse, in_bounds=True) == xp.arange(x.size, device=x.device)
    g = xp.where(first, _bind("gather", cv, inverse, in_bounds=True), 0.0)
    return (unbroadcast(xp.reshape(g, x.shape), x.shape, x.dtype),)


JVP["unique"] = _jvp_unique
VJP["unique"] = _vjp_unique


# ------------------------------------------------------------------------------ batching
def _batch_axis_param(prim: Primitive, vals: tuple, b: tuple, size: int, *, axis: int,
                      **p: Any) -> Any:
    return prim.bind(vals[0], axis=axis + 1, **p)


for _name in ("sort", "argsort", "fft"):
    BATCH[_name] = _batch_axis_param


def _batch_argsearch(prim: Primitive, vals: tuple, b: tuple, size: int, *,
                     axis: int | None) -> Any:
    x = vals[0]
    if axis is None:   # an index into each flattened example
        return prim.bind(xp.reshape(x, (size, -1)), axis=1)
    return prim.bind(x, axis=axis + 1)


BATCH["argmax"] = _batch_argsearch
BATCH["argmin"] = _batch_argsearch
# random_bits draws one row per leading key dim: a batch of keys is already its batched form
BATCH["random_bits"] = lambda prim, vals, b, size, **p: prim.bind(vals[0], **p)


def _batch_scatter_add(prim: Primitive, vals: tuple, b: tuple, size: int, **p: Any) -> Any:
    """Scatter into the batched ``x`` with a batch iota joining the index arrays; batched
    values get unit dims so they broadcast against the per-example index shape."""
    x = _materialize(vals[0], b[0], size)
    v, idx = vals[1], vals[2:]
    nd = max(len(i.shape) - (1 if bb else 0) for i, bb in zip(idx, b[2:]))
    idx = [xp.reshape(i, (size,) + (1,) * (nd + 1 - len(i.shape)) + tuple(i.shape[1:]))
           if bb else i for i, bb in zip(idx, b[2:])]
    bidx = xp.reshape(xp.arange(size, device=x.device), (size,) + (1,) * nd)
    if b[1]:
        rank = nd + x.ndim - 1 - len(idx)
        v = xp.reshape(v, (size,) + (1,) * (rank - v.ndim + 1) + tuple(v.shape[1:]))
    return prim.bind(x, v, bidx, *idx, **p)


BATCH["scatter_add"] = _batch_scatter_add


def _batch_isin(prim: Primitive, vals: tuple, b: tuple, size: int, *, invert: bool) -> Any:
    """A batched test set compares every element with every member of its example's set."""
    if not b[1]:
        return prim.bind(*vals, invert=invert)
    x1 = _materialize(vals[0], b[0], size)
    x2 = xp.reshape(vals[1], (size, -1))
    eq = xp.reshape(x1, tuple(x1.shape) + (1,)) == xp.reshape(
        x2, (size,) + (1,) * (x1.ndim - 1) + (x2.shape[1],))
    hit = xp.any(eq, axis=-1)
    return xp.logical_not(hit) if invert else hit


BATCH["isin"] = _batch_isin


def _batch_searchsorted(prim: Primitive, vals: tuple, b: tuple, size: int, *,
                        side: str) -> Any:
    """Unbatched sorted arrays search directly. Batched ones count, per example, the sorted
    values that precede each query (NaNs sort last): O(len(x1)) work per query."""
    x1, x2 = vals[0], vals[1]
    if not b[0] and not (len(vals) > 2 and b[2]):
        return prim.bind(*vals, side=side)
    x1 = _materialize(x1, b[0], size)
    if len(vals) > 2:   # sorter values are clamped, as the eager implementation does
        srt = xp.clip(_materialize(vals[2], b[2], size), 0, x1.shape[1] - 1)
        x1 = _take_along(x1, srt, 1)
    x2 = _materialize(x2, b[1], size)
    q = xp.reshape(x2, (size, -1, 1))
    s = xp.reshape(x1, (size, 1, x1.shape[1]))
    before = s < q if side == "left" else s <= q
    if dkind(q.dtype) == "f":
        qnan = xp.isnan(q)
        if side == "left":
            qnan = xp.logical_and(qnan, xp.logical_not(xp.isnan(s)))
        before = xp.logical_or(before, qnan)
    count = xp.sum(xp.astype(before, xp.int64), axis=2)
    return xp.reshape(count, x2.shape)


BATCH["searchsorted"] = _batch_searchsorted


def _data_dependent(prim: Primitive, vals: tuple, b: tuple, size: int, **p: Any) -> Any:
    raise NotImplementedError(f"vmap cannot batch {prim.name}: its output shape depends on "
                              f"the values of each example; compute it outside vmap")


BATCH["nonzero"] = _data_dependent
BATCH["unique"] = _data_dependent


def _vjp_fft(ct: Any, primals: tuple, out: Any, *, axis: int, n: int, kind: str,
             inverse: bool, norm: str) -> tuple:
    """Complex-to-complex: the DFT matrix is symmetric, so the transpose of
    ``resize -> DFT_n`` is ``DFT_n -> resize back`` (zero padding and truncation swap).
    Real transforms: :func:`vjp_real_fft`."""
    x = primals[0]
    if kind != "c2c":
        return (vjp_real_fft(ct, x, axis=axis, n=n, kind=kind, inverse=inverse,
                             norm=norm),)
    g = _bind("fft", ct, axis=axis, n=n, kind="c2c", inverse=inverse, norm=norm)
    m = x.shape[axis]
    if m < n:
        idx = [slice(None)] * g.ndim
        idx[axis] = slice(0, m)
        g = g[tuple(idx)]
    elif m > n:
        shp = list(g.shape)
        shp[axis] = m - n
        g = xp.concat([g, xp.zeros(tuple(shp), dtype=g.dtype, device=g.device)], axis=axis)
    return (unbroadcast(g, x.shape, x.dtype) if is_float(x) else None,)


VJP["fft"] = _vjp_fft
