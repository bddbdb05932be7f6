"""Render sequential folds of a table op: the kernels behind ufunc ``reduce``, ``accumulate``,
``reduceat`` and ``at`` for ops without a dedicated reduction or scan.

The combine step is the op's own C template from ``clnp._kernels.op_table`` (one source of truth), applied
left to right exactly as NumPy's loops apply it, so non-associative ops (``subtract``,
``divide``, ``power``, ``arctan2``, ...) give NumPy's results. Parallelism comes from the
independent folds: one work-item per (kept position, segment).

``clnp_fold_reduce``
    Item ``g`` folds ``x[row, starts[s]:ends[s]]`` (``s = g % nseg``, ``row = g / nseg``)
    into ``y[row, s]``. The kept dims (collapsed; sizes and strides are arguments) select a
    row, ``sx`` steps along the folded axis. With ``init`` the fold starts from the scalar
    argument ``init`` (NumPy's ``initial`` or the identity), else from the first element;
    with ``masked`` only elements whose mask byte is non-zero take part (``where=``). With
    ``refold`` (complex ``prod``), ``y`` already holds the parallel reduction's result and
    only outputs that are not finite are folded again, left to right as NumPy's loop.
``clnp_fold_accumulate``
    The same over ``[starts[0], ends[0])`` (the whole axis), storing every running value
    to ``y[row, i]``.
``clnp_fold_at``
    ``ufunc.at`` after sort-and-segment: ``off`` holds element offsets into ``a`` sorted
    stably, ``perm[j]`` the position of the ``j``-th one in the original order (the ``b``
    value it takes). The first item of each run of equal offsets applies the op for the
    whole run in the original order (NumPy's unbuffered semantics for repeated indices),
    converting to ``a``'s dtype after every step as NumPy's loop stores it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import ctypes as C
from .elementwise import Instr, prelude, template
from . import op_table as _ops

_REAL_OF = {"complex64": np.dtype("float32"), "complex128": np.dtype("float64")}


@dataclass(frozen=True)
class FoldSpec:
    op: str                  # key into clnp._kernels.op_table.OPS (a binary op)
    dtype: np.dtype          # compute dtype = input and output storage dtype
    mode: str                # reduce | accumulate
    ndim: int                # collapsed kept dims (at least 1)
    init: bool = False       # start from the ``init`` argument
    masked: bool = False     # ``where=``: a uchar mask laid out like x
    splat: int = 1           # see clnp._kernels.elementwise._vm_helper
    refold: bool = False     # y holds a result: fold only where it is not finite (complex)


@dataclass(frozen=True)
class AtSpec:
    op: str                  # key into clnp._kernels.op_table.OPS (unary or binary)
    a_dtype: np.dtype        # storage dtype of the array updated in place
    dtype: np.dtype          # compute dtype (b is stored in it)
    splat: int = 1


def _natural(op: str, dtype: np.dtype) -> np.dtype:
    return {"same": dtype, "bool": np.dtype(bool),
            "real": _REAL_OF.get(dtype.name, dtype)}[_ops.OPS[op].out]


def apply_op(op: str, dtype: np.dtype, *args: str) -> str:
    """C expression of ``op`` on compute-type expressions ``args``, in the compute type."""
    t = template(op, dtype).format(*args, T=C.compute_ctype(dtype), R=C.real_ctype(dtype),
                                   U=C.unsigned_ctype(dtype))
    return C.convert(t, _natural(op, dtype), dtype)


def _head(title: str, op: str, dtype: np.dtype, nin: int, text: str, splat: int) -> str:
    body = (Instr(op, tuple(range(nin)), (dtype,) * nin, dtype, dtype),)
    return "\n".join(prelude(title, body, [dtype], text, splat))


def render_fold(spec: FoldSpec) -> tuple[str, str, list]:
    """``(source, kernel name, scalar_arg_dtypes)`` of the fold kernel of ``spec``."""
    d, nd = spec.dtype, spec.ndim
    S, T = C.storage_ctype(d), C.compute_ctype(d)
    L = np.dtype(np.int64)
    params = ["const long n", "const long nseg"] + [f"const long d{k}" for k in range(nd)]
    params += [f"__global const {S} *restrict x", "const long xo"]
    params += [f"const long xs{k}" for k in range(nd)] + ["const long sx"]
    params += ["__global const long *restrict starts", "__global const long *restrict ends"]
    params += [f"__global {S} *y", "const long yo"]
    params += [f"const long ys{k}" for k in range(nd)] + ["const long sy"]
    argtypes: list = [L, L] + [L] * nd + [None, L] + [L] * nd + [L, None, None, None, L] + \
        [L] * nd + [L]
    if spec.masked:
        params += ["__global const uchar *restrict m", "const long mo"]
        params += [f"const long ms{k}" for k in range(nd)] + ["const long sm"]
        argtypes += [None, L] + [L] * nd + [L]
    if spec.init:
        params.append(f"const {C.storage_ctype(np.dtype(C.scalar_arg_dtype(d)))} init")
        argtypes.append(C.scalar_arg_dtype(d))
    step = apply_op(spec.op, d, "acc", "v")
    if d.name == "float16":       # NumPy rounds every float16 result
        step = f"clnp_round16_float({step})"
    elif d.name == "bfloat16":    # and ml_dtypes every bfloat16 result
        step = f"clnp_roundbf_float({step})"
    acc_mode = spec.mode == "accumulate"
    lines = [f"__kernel void clnp_fold_{spec.mode}({', '.join(params)}) {{",
             "  const long g = get_global_id(0);",
             "  if (g >= n * nseg) return;",
             "  const long seg = g % nseg;",
             "  long rem = g / nseg, xb = xo, yb = yo" + (", mb = mo;" if spec.masked else ";")]
    for k in reversed(range(nd)):
        q = f"rem % d{k}" if k else "rem"
        lines.append(f"  {{ const long q = {q}; xb += q * xs{k}; yb += q * ys{k};" +
                     (f" mb += q * ms{k};" if spec.masked else "") +
                     (f" rem /= d{k}; }}" if k else " }"))
    if spec.refold:
        # a parallel product (a tree) of complex values with infinities or NaN puts NaN in
        # other components than NumPy's left-to-right loop: redo just those outputs
        lines += [f"  {{ const {T} cur = {C.load(d, 'y', 'yb + seg * sy')};",
                  "    if (isfinite(cur.x) && isfinite(cur.y)) return; }"]
    lines += ["  long i = starts[seg];", "  const long e = ends[seg];"]
    store_i = C.store(d, "y", "yb + i * sy", "acc")
    if spec.init:
        lines.append(f"  {T} acc = ({T})init;")
    else:
        lines.append(f"  {T} acc = {C.load(d, 'x', 'xb + i * sx')};")
        if acc_mode:
            lines.append(f"  {store_i}")
        lines.append("  ++i;")
    lines.append("  for (; i < e; ++i) {")
    if spec.masked:
        lines.append("    if (!m[mb + i * sm]) continue;")
    lines += [f"    const {T} v = {C.load(d, 'x', 'xb + i * sx')};",
              f"    acc = {step};"]
    if acc_mode:
        lines.append(f"    {store_i}")
    lines.append("  }")
    if not acc_mode:
        lines.append(f"  {C.store(d, 'y', 'yb + seg * sy', 'acc')}")
    lines.append("}")
    text = "\n".join(lines)
    head = _head(f"// clnp fold: {spec.mode} of {spec.op} over {d}", spec.op, d, 2, text,
                 spec.splat)
    return head + "\n" + text, f"clnp_fold_{spec.mode}", argtypes


def render_at(spec: AtSpec) -> tuple[str, str, list]:
    """``(source, kernel name, scalar_arg_dtypes)`` of ``ufunc.at``'s segment kernel."""
    a, d = spec.a_dtype, spec.dtype
    nin = _ops.OPS[spec.op].nin
    T = C.compute_ctype(d)
    params = ["const long n", "__global const long *restrict off",
              "__global const long *restrict perm", f"__global {C.storage_ctype(a)} *a"]
    argtypes: list = [np.dtype(np.int64), None, None, None]
    if nin == 2:
        params.append(f"__global const {C.storage_ctype(d)} *restrict b")
        argtypes.append(None)
    args = ("acc",) if nin == 1 else ("acc", "v")
    step = C.convert(apply_op(spec.op, d, *args), d, a)
    lines = [f"__kernel void clnp_fold_at({', '.join(params)}) {{",
             "  const long g = get_global_id(0);",
             "  if (g >= n) return;",
             "  const long o = off[g];",
             "  if (g > 0 && off[g - 1] == o) return;",
             f"  {C.compute_ctype(a)} cur = {C.load(a, 'a', 'o')};",
             "  for (long j = g; j < n && off[j] == o; ++j) {",
             f"    const {T} acc = {C.convert('cur', a, d)};"]
    if nin == 2:
        lines.append(f"    const {T} v = {C.load(d, 'b', 'perm[j]')};")
    lines += [f"    cur = {step};", "  }", f"  {C.store(a, 'a', 'o', 'cur')}", "}"]
    text = "\n".join(lines)
    head = _head(f"// clnp ufunc.at: {spec.op} into {a} (compute {d})", spec.op, d, nin, text,
                 spec.splat)
    return head + "\n" + text, "clnp_fold_at", argtypes
