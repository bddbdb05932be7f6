"""Differentiation rules, keyed by primitive name.

Elementwise ops share one generic JVP and one generic VJP built from ``PARTIALS``: for each op,
``PARTIALS[name](*inputs, out)`` returns one partial derivative per input (None where the input
has no derivative). The partials are written with public clnp functions, so they are traced
like any user code and higher-order derivatives come for free. Other primitives have explicit
rules below: ``JVP[name](primals, tangents, out, **params) -> out_tangent`` and
``VJP[name](ct, primals, out, **params) -> tuple of input cotangents`` (None = zero).
"""
from __future__ import annotations

import math
from typing import Any, Callable

import clnp as xp
from clnp._kernels import op_table as _ops
from clnp._core.prims import primitive
from clnp._core.dtypes import kind as dkind

LN2, LN10 = math.log(2.0), math.log(10.0)


def _zero(*_: Any) -> float:
    return 0.0


PARTIALS: dict[str, Callable[..., tuple[Any, ...]]] = {
    # |x| of a complex x is not holomorphic: d|x| = Re(conj(x)/|x| dx); ew_jvp takes the real
    # part, and the VJP is ct * conj(x)/|x| (JAX's convention)
    "abs": lambda x, z: (xp.conj(xp.sign(x)) if dkind(x.dtype) == "c" else xp.sign(x),),
    "acos": lambda x, z: (-1.0 / xp.sqrt(1.0 - x * x),),
    "acosh": lambda x, z: (1.0 / xp.sqrt(x * x - 1.0),),
    "asin": lambda x, z: (1.0 / xp.sqrt(1.0 - x * x),),
    "asinh": lambda x, z: (1.0 / xp.sqrt(x * x + 1.0),),
    "atan": lambda x, z: (1.0 / (1.0 + x * x),),
    "atanh": lambda x, z: (1.0 / (1.0 - x * x),),
    "cos": lambda x, z: (-xp.sin(x),),
    "cosh": lambda x, z: (xp.sinh(x),),
    "exp": lambda x, z: (z,),
    "expm1": lambda x, z: (z + 1.0,),
    "log": lambda x, z: (1.0 / x,),
    "log1p": lambda x, z: (1.0 / (1.0 + x),),
    "log2": lambda x, z: (1.0 / (x * LN2),),
    "log10": lambda x, z: (1.0 / (x * LN10),),
    "sin": lambda x, z: (xp.cos(x),),
    "sinh": lambda x, z: (xp.cosh(x),),
    "tan": lambda x, z: (1.0 + z * z,),
    "tanh": lambda x, z: (1.0 - z * z,),
    "sqrt": lambda x, z: (0.5 / z,),
    "negative": lambda x, z: (-1.0,),
    "positive": lambda x, z: (1.0,),
    "copy": lambda x, z: (1.0,),
    "square": lambda x, z: (2.0 * x,),
    "reciprocal": lambda x, z: (-(z * z),),
    "sign": lambda x, z: (0.0,),
    "ceil": lambda x, z: (0.0,),
    "floor": lambda x, z: (0.0,),
    "trunc": lambda x, z: (0.0,),
    "round": lambda x, z: (0.0,),
    "add": lambda x, y, z: (1.0, 1.0),
    "subtract": lambda x, y, z: (1.0, -1.0),
    "multiply": lambda x, y, z: (y, x),
    "divide": lambda x, y, z: (1.0 / y, -z / y),
    "floor_divide": lambda x, y, z: (0.0, 0.0),
    "remainder": lambda x, y, z: (1.0, -xp.floor_divide(x, y)),
    "pow": lambda x, y, z: (y * xp.pow(x, y - 1.0) if _is_arr(y) else y * xp.pow(x, y - 1),
                            xp.where(x == 0, 0.0, xp.log(xp.where(x == 0, 1.0, x))) * z),
    "atan2": lambda y, x, z: (x / (x * x + y * y), -y / (x * x + y * y)),
    "hypot": lambda x, y, z: (x / z, y / z),
    "copysign": lambda x, y, z: (_flag(xp.signbit(x) == _signbit(y), z) * 2.0 - 1.0, 0.0),
    "logaddexp": lambda x, y, z: (xp.exp(x - z), xp.exp(y - z)),
    "maximum": lambda x, y, z: _split_ties(x > y, x == y, z),
    "minimum": lambda x, y, z: _split_ties(x < y, x == y, z),
    # the result is x moved by one ulp: d/dx is 1 almost everywhere, d/dy 0
    "nextafter": lambda x, y, z: (1.0, 0.0),
    "clip": lambda x, lo, hi, z: _clip_partials(x, lo, hi, z),
}


def _is_arr(v: Any) -> bool:
    return hasattr(v, "shape")


def _flag(mask: Any, z: Any) -> Any:
    """``mask`` as 0/1 in the result's dtype. ``where(mask, 1.0, 0.0)`` of two Python floats
    is a float64 array (the default floating dtype), which made a float32 gradient compute
    in float64 and cast back, a double-precision kernel on every GPU."""
    return xp.astype(mask, z.dtype)


def _signbit(v: Any) -> Any:
    """signbit of an array, or of a Python scalar on the host (not as a float64 constant)."""
    return xp.signbit(v) if _is_arr(v) else math.copysign(1.0, v) < 0


def _split_ties(win: Any, tie: Any, z: Any) -> tuple[Any, Any]:
    """maximum/minimum: the winner takes the derivative, ties share it (as JAX does)."""
    a = _flag(win, z) + _flag(tie, z) * 0.5
    return a, 1.0 - a


def _clip_partials(x: Any, lo: Any, hi: Any, z: Any) -> tuple[Any, Any, Any]:
    below, above = x < lo, x > hi
    inside = xp.logical_not(xp.logical_or(below, above))
    return _flag(inside, z), _flag(below, z), _flag(above, z)


# linear ops whose tangent map is the op itself
LINEAR_UNARY = {"conj", "real", "imag"}


def is_float(v: Any) -> bool:
    return _is_arr(v) and dkind(v.dtype) in "fc"


def differentiable_op(name: str) -> bool:
    rec = _ops.OPS.get(name)
    return rec is not None and rec.out != "bool" and (name in PARTIALS or name in LINEAR_UNARY
                                                      or name == "where")


# ------------------------------------------------------------------------------ helpers
def unbroadcast(ct: Any, shape: tuple[int, ...], dtype: Any) -> Any:
    """Sum ``ct`` down to ``shape`` (undoing broadcasting) and cast it to ``dtype``."""
    if ct.shape != tuple(shape):
        lead = ct.ndim - len(shape)
        axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape)
                                          if n == 1 and ct.shape[lead + i] != 1)
        if axes:
            ct = xp.sum(ct, axis=axes, dtype=ct.dtype)
        if ct.shape != tuple(shape):
            ct = xp.reshape(ct, tuple(shape))
    if ct.dtype != dtype:
        if dkind(dtype) != "c" and dkind(ct.dtype) == "c":
            ct = xp.real(ct)
        ct = xp.astype(ct, dtype)
    return ct


def zeros_like(x: Any) -> Any:
    return xp.zeros(x.shape, dtype=x.dtype, device=x.device)


def add_ct(a: Any, b: Any) -> Any:
    if a is None:
        return b
    if b is None:
        return a
    return a + b


# ------------------------------------------------------------------------------ elementwise
def ew_jvp(name: str, primals: tuple, tangents: tuple, out: Any) -> Any:
    rec = _ops.OPS[name]
    if rec.out == "bool" or dkind(out.dtype) not in "fc":
        return None
    if name in LINEAR_UNARY:
        t = tangents[0]
        return None if t is None else getattr(xp, name)(t)
    if name == "where":
        c, tx, ty = primals[0], tangents[1], tangents[2]
        if tx is None and ty is None:
            return None
        tx = 0.0 if tx is None else tx
        ty = 0.0 if ty is None else ty
        return xp.astype(xp.where(c, tx, ty), out.dtype) if (_is_arr(tx) or _is_arr(ty)) \
            else None
    parts = PARTIALS[name](*primals, out)
    acc = None
    for p, t in zip(parts, tangents):
        if t is None or (not _is_arr(p) and p == 0.0):
            continue
        term = t if (not _is_arr(p) and p == 1.0) else t * p
        acc = add_ct(acc, term)
    if acc is None:
        return None
    if acc.shape != out.shape:
        acc = xp.broadcast_to(acc, out.shape)
    if dkind(acc.dtype) == "c" and dkind(out.dtype) != "c":
        acc = xp.real(acc)           # a real function of complex inputs (abs)
    return acc if acc.dtype == out.dtype else xp.astype(acc, out.dtype)


def ew_vjp(name: str, ct: Any, primals: tuple, out: Any) -> tuple:
    n = len(primals)
    if ct is None:
        return (None,) * n
    wants = [is_float(p) for p in primals]
    if name in LINEAR_UNARY:
        x = primals[0]
        if not wants[0]:
            return (None,)
        if name == "conj":
            return (xp.conj(ct),)
        if name == "real":
            return (xp.astype(ct, x.dtype),)
        # imag: d imag(x) = imag(dx); its transpose maps ct to -1j * ct (JAX's convention)
        return (xp.astype(ct, x.dtype) * -1j,)
    if name == "where":
        c = primals[0]
        res: list[Any] = [None]
        for k in (1, 2):
            if wants[k]:
                g = xp.where(c, ct, 0.0) if k == 1 else xp.where(c, 0.0, ct)
                res.append(unbroadcast(g, primals[k].shape, primals[k].dtype))
            else:
                res.append(None)
        return tuple(res)
    parts = PARTIALS[name](*primals, out)
    res = []
    for p, x, w in zip(parts, primals, wants):
        if not w or (not _is_arr(p) and p == 0.0):
            res.append(None)
            continue
        g = ct if (not _is_arr(p) and p == 1.0) else ct * p
        if not _is_arr(g):
            res.append(None)
            continue
        res.append(unbroadcast(xp.broadcast_to(g, out.shape) if g.shape != out.shape else g,
                               x.shape, x.dtype))
    return tuple(res)


# ------------------------------------------------------------------------------ structural
JVP: dict[str, Callable[..., Any]] = {}
VJP: dict[str, Callable[..., Any]] = {}


def _bind(name: str, *args: Any, **params: Any) -> Any:
    return primitive(name).bind(*args, **params)


def _jvp_same(name: str) -> Callable[..., Any]:
    """Linear primitives: the tangent goes through the same primitive."""
    def rule(primals: tuple, tangents: tuple, out: Any, **params: Any) -> Any:
        t = tangents[0]
        return None if t is None else _bind(name, t, **params)
    return rule


for _n in ("reshape", "transpose", "broadcast_to", "slice", "copy"):
    JVP[_n] = _jvp_same(_n)


def _jvp_convert(primals: tuple, tangents: tuple, out: Any, *, dtype: Any) -> Any:
    t = tangents[0]
    if t is None or dkind(dtype) not in "fc":
        return None
    return _bind("convert_element_type", t, dtype=dtype)


JVP["convert_element_type"] = _jvp_convert
VJP["convert_element_type"] = lambda ct, primals, out, *, dtype: (
    None if not is_float(primals[0]) else unbroadcast(ct, primals[0].shape, primals[0].dtype),)
VJP["copy"] = lambda ct, primals, out: (ct,)
VJP["reshape"] = lambda ct, primals, out, *, shape: (xp.reshape(ct, primals[0].shape),)


def _inverse_perm(perm: tuple[int, ...]) -> tuple[int, ...]:
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return tuple(inv)


VJP["transpose"] = lambda ct, primals, out, *, perm: (xp.permute_dims(ct, _inverse_perm(perm)),)
VJP["broadcast_to"] = lambda ct, primals, out, *, shape: (
    unbroadcast(ct, primals[0].shape, primals[0].dtype),)


def _vjp_slice(ct: Any, primals: tuple, out: Any, *, starts: tuple, steps: tuple,
               shape: tuple) -> tuple:
    """Scatter ``ct`` back into zeros of x's shape, one axis at a time with concat/reshape."""
    x = primals[0]
    g = ct
    for ax, (start, step, n) in enumerate(zip(starts, steps, shape)):
        size = x.shape[ax]
        if step == 1 and n == size:
            continue
        g = _embed_axis(g, ax, start, step, n, size)
    return (g,)


def _embed_axis(g: Any, ax: int, start: int, step: int, n: int, size: int) -> Any:
    """Place the n entries of ``g`` along ``ax`` at start, start+step, ... of a length-size
    axis, zeros elsewhere (the transpose of a strided slice)."""
    if n == 0:
        shp = list(g.shape)
        shp[ax] = size
        return xp.zeros(tuple(shp), dtype=g.dtype, device=g.device)
    if step < 0:
        g = xp.flip(g, axis=ax)
        start = start + (n - 1) * step
        step = -step
    if step > 1:  # interleave zeros: (.., n, 1) padded to (.., n, step) then trimmed
        g = xp.expand_dims(g, axis=ax + 1)
        pad_shape = list(g.shape)
        pad_shape[ax + 1] = step - 1
        g = xp.concat([g, xp.zeros(tuple(pad_shape), dtype=g.dtype, device=g.device)],
                      axis=ax + 1)
        shp = list(g.shape)
        shp[ax] = n * step
        del shp[ax + 1]
        g = xp.reshape(g, tuple(shp))
        idx = [slice(None)] * g.ndim
        idx[ax] = slice(0, (n - 1) * step + 1)
        g = g[tuple(idx)]
    parts = []
    length = g.shape[ax]
    for width in (start, size - start - length):
        if width > 0:
            shp = list(g.shape)
            shp[ax] = width
            parts.append(xp.zeros(tuple(shp), dtype=g.dtype, device=g.device))
        else:
            parts.append(None)
    seq = [p for p in (parts[0], g, parts[1]) if p is not None]
    return seq[0] if len(seq) == 1 else xp.concat(seq, axis=ax)


VJP["slice"] = _vjp_slice


def _jvp_concat(primals: tuple, tangents: tuple, out: Any, *, axis: int, dtype: Any) -> Any:
    if all(t is None for t in tangents):
        return None
    ts = [zeros_like(p) if t is None else t for p, t in zip(primals, tangents)]
    return _bind("concatenate", *ts, axis=axis, dtype=dtype)


def _vjp_concat(ct: Any, primals: tuple, out: Any, *, axis: int, dtype: Any) -> tuple:
    res, pos = [], 0
    for p in primals:
        n = p.shape[axis]
        idx = [slice(None)] * ct.ndim
        idx[axis] = slice(pos, pos + n)
        res.append(unbroadcast(ct[tuple(idx)], p.shape, p.dtype) if is_float(p) else None)
        pos += n
    return tuple(res)


JVP["concatenate"] = _jvp_concat
VJP["concatenate"] = _vjp_concat


def _expand_reduced(g: Any, x_shape: tuple[int, ...], axes: tuple[int, ...]) -> Any:
    """Reshape a reduced result to keep the reduced axes as size 1, then broadcast."""
    kept = tuple(1 if i in axes else n for i, n in enumerate(x_shape))
    return xp.broadcast_to(xp.reshape(g, kept), x_shape)


def _jvp_reduce(primals: tuple, tangents: tuple, out: Any, *, op: str, axes: tuple,
                acc_dtype: Any, out_dtype: Any) -> Any:
    t = tangents[0]
    x = primals[0]
    if t is None or op in ("any", "all") or dkind(out_dtype) not in "fc":
        return None
    if op == "sum":
        return _bind("reduce", t, op="sum", axes=axes, acc_dtype=acc_dtype, out_dtype=out_dtype)
    w = _reduce_weights(x, out, op, axes)
    return _bind("reduce", t * w, op="sum", axes=axes, acc_dtype=acc_dtype, out_dtype=out_dtype)


def _reduce_weights(x: Any, out: Any, op: str, axes: tuple) -> Any:
    """d out / d x for prod (the product of the other elements), max and min (the extreme
    elements share the derivative equally)."""
    if op == "prod":
        return _product_of_others(x, axes)
    ob = _expand_reduced(out, x.shape, axes)
    hit = xp.astype(x == ob, x.dtype)
    count = _expand_reduced(xp.sum(hit, axis=axes), x.shape, axes)
    return hit / count


def _product_of_others(x: Any, axes: tuple) -> Any:
    """For each element, the product of the other elements of its reduction group: exclusive
    cumulative products from both ends, so zeros in ``x`` give exact values (``out / x``
    would divide by them) and the result is differentiable again."""
    rest = [i for i in range(x.ndim) if i not in axes]
    perm = tuple(rest) + tuple(axes)
    xt = xp.permute_dims(x, perm)
    lead = tuple(xt.shape[:len(rest)])
    flat = xp.reshape(xt, lead + (math.prod(xt.shape[len(rest):]),))
    left = xp.cumulative_prod(flat, axis=-1, include_initial=True)[..., :-1]
    right = xp.flip(xp.cumulative_prod(xp.flip(flat, axis=-1), axis=-1,
                                       include_initial=True)[..., :-1], axis=-1)
    w = xp.reshape(left * right, tuple(xt.shape))
    return xp.permute_dims(w, tuple(perm.index(i) for i in range(x.ndim)))


def _vjp_reduce(ct: Any, primals: tuple, out: Any, *, op: str, axes: tuple, acc_dtype: Any,
                out_dtype: Any) -> tuple:
    x = primals[0]
    if not is_float(x) or op in ("any", "all"):
        return (None,)
    g = _expand_reduced(ct, x.shape, axes)
    if op != "sum":
        g = g * _reduce_weights(x, out, op, axes)
    return (unbroadcast(g, x.shape, x.dtype),)


JVP["reduce"] = _jvp_reduce
VJP["reduce"] = _vjp_reduce


def _jvp_cumsum(primals: tuple, tangents: tuple, out: Any, **params: Any) -> Any:
    t = tangents[0]
    return None if t is None else _bind("cumsum", t, **params)


JVP["cumsum"] = _jvp_cumsum     # cumprod's rules (and cumsum's VJP) are in _rules_extra


# non-differentiable primitives: integer/bool outputs or data-dependent indices
# (unique's values output is differentiable: its rules are in _rules_extra)
NON_DIFFERENTIABLE = {"argmax", "argmin", "argsort", "nonzero", "searchsorted", "isin",
                      "iota", "full", "rng_bits", "random_bits", "stop_gradient"}


# ------------------------------------------------------------------------------ dot_general
def _dg(a: Any, b: Any, dn: Any, pet: Any) -> Any:
    return _bind("dot_general", a, b, dimension_numbers=dn, preferred_element_type=pet)


def _jvp_dot_general(primals: tuple, tangents: tuple, out: Any, *, dimension_numbers: Any,
                     preferred_element_type: Any = None) -> Any:
    a, b = primals
    ta, tb = tangents
    res = None
    if ta is not None:
        res = _dg(ta, b, dimension_numbers, out.dtype)
    if tb is not None:
        res = add_ct(res, _dg(a, tb, dimension_numbers, out.dtype))
    return res


def _dot_transpose(ct: Any, other: Any, x: Any, mine: tuple, theirs: tuple, first: bool) -> Any:
    """Cotangent of one operand ``x`` of ``dot_general``: contract ``ct`` with the other operand
    over the other operand's free dims, then permute back to x's dim order. ``mine``/``theirs``
    are ((contracting, batch) of x, (contracting, batch) of the other operand)."""
    (xc, xb), (oc, ob) = mine, theirs
    nb = len(xb)
    x_free = [d for d in range(x.ndim) if d not in xc and d not in xb]
    o_free = [d for d in range(other.ndim) if d not in oc and d not in ob]
    # in ct: batch dims, then lhs free, then rhs free
    if first:
        ct_free_x = list(range(nb, nb + len(x_free)))
        ct_free_o = list(range(nb + len(x_free), ct.ndim))
    else:
        ct_free_o = list(range(nb, nb + len(o_free)))
        ct_free_x = list(range(nb + len(o_free), ct.ndim))
    dn = ((tuple(ct_free_o), tuple(o_free)), (tuple(range(nb)), tuple(ob)))
    r = _dg(ct, other, dn, ct.dtype)
    # r dims: batch, ct's x-free dims, then other's remaining dims (its contracting dims in
    # ascending order), which pair with x's contracting dims
    remaining = sorted(oc)
    src = list(xb) + x_free + [xc[oc.index(d)] for d in remaining]
    del ct_free_x
    perm = tuple(src.index(d) for d in range(x.ndim))
    if perm != tuple(range(x.ndim)):
        r = xp.permute_dims(r, perm)
    return unbroadcast(r, x.shape, x.dtype)


def _vjp_dot_general(ct: Any, primals: tuple, out: Any, *, dimension_numbers: Any,
                     preferred_element_type: Any = None) -> tuple:
    a, b = primals
    (lc, rc), (lb, rb) = dimension_numbers
    lc, rc, lb, rb = tuple(lc), tuple(rc), tuple(lb), tuple(rb)
    ca = _dot_transpose(ct, b, a, (lc, lb), (rc, rb), True) if is_float(a) else None
    cb = _dot_transpose(ct, a, b, (rc, rb), (lc, lb), False) if is_float(b) else None
    return (ca, cb)


JVP["dot_general"] = _jvp_dot_general
VJP["dot_general"] = _vjp_dot_general


# ------------------------------------------------------------------------------ fft
def _jvp_fft(primals: tuple, tangents: tuple, out: Any, **params: Any) -> Any:
    t = tangents[0]
    if t is None:
        return None
    if params["kind"] == "r2c" and dkind(t.dtype) == "c":
        raise NotImplementedError("jvp of rfft with a complex tangent")
    return _bind("fft", t, **params)


JVP["fft"] = _jvp_fft


# ------------------------------------------------------------------------------ gather/scatter
def _jvp_gather(primals: tuple, tangents: tuple, out: Any, **params: Any) -> Any:
    t = tangents[0]
    return None if t is None else _bind("gather", t, *primals[1:], **params)


def _vjp_gather(ct: Any, primals: tuple, out: Any, **params: Any) -> tuple:
    """The transpose of gathering is scatter-adding into zeros (repeated indices add up)."""
    x, idx = primals[0], primals[1:]
    if not is_float(x):
        return (None,) * len(primals)
    g = _bind("scatter_add", zeros_like(x), ct, *idx, in_bounds=True)
    return (g,) + (None,) * len(idx)


def _jvp_scatter_add(primals: tuple, tangents: tuple, out: Any, **params: Any) -> Any:
    tx, tv = tangents[0], tangents[1]
    if tx is None and tv is None:
        return None
    x, v, idx = primals[0], primals[1], primals[2:]
    tx = zeros_like(x) if tx is None else tx
    tv = xp.zeros(v.shape, dtype=x.dtype, device=x.device) if tv is None else tv
    return _bind("scatter_add", tx, tv, *idx, **params)


def _vjp_scatter_add(ct: Any, primals: tuple, out: Any, **params: Any) -> tuple:
    x, v, idx = primals[0], primals[1], primals[2:]
    cx = ct if is_float(x) else None
    cv = None
    if is_float(v):
        g = _bind("gather", ct, *idx, in_bounds=True)
        cv = unbroadcast(g, v.shape, v.dtype)
    return (cx, cv) + (None,) * len(idx)


JVP["gather"] = _jvp_gather
VJP["gather"] = _vjp_gather
JVP["scatter_add"] = _jvp_scatter_add
VJP["scatter_add"] = _vjp_scatter_add

