"""Render elementwise kernels: a small SSA program of table ops over broadcast/strided operands.

Eager clnp renders one-op programs; ``clnp_grad.jit`` renders fused multi-op programs with the
same function, so the C spelling of every op lives only in ``clnp._kernels.op_table``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

import numpy as np

from .._runtime import dtypes as dt
from . import op_table as _ops
from . import ctypes as C

_REAL_OF = {"complex64": np.dtype("float32"), "complex128": np.dtype("float64")}
_HELPER_RE = re.compile(r"clnp_(\w+?)_\{T\}")


@dataclass(frozen=True)
class Operand:
    dtype: np.dtype
    scalar: bool = False          # passed by value, broadcast everywhere


@dataclass(frozen=True)
class Instr:
    op: str                       # key into clnp._kernels.op_table.OPS
    args: tuple[int, ...]         # value ids: inputs first, then instruction results
    arg_dtypes: tuple[np.dtype, ...]   # each argument is converted to this dtype first
    dtype: np.dtype               # the compute dtype ({T} in templates)
    out_dtype: np.dtype           # dtype of the result value


@dataclass(frozen=True)
class EwSpec:
    inputs: tuple[Operand, ...]
    body: tuple[Instr, ...]
    outputs: tuple[tuple[int, np.dtype], ...]   # (value id, storage dtype)
    ndim: int                     # dims after collapsing (0 with contiguous=True)
    contiguous: bool              # every array operand is dense over the same shape
    width: int = 1                # vector width of the contiguous path
    index: str = "long"           # 'int' when every offset fits in 31 bits
    splat: int = 1                # > 1 on devices with a vector path: see _vm_helper
    tile: int = 0                 # 2-D strided, > 0: each work-item walks a tile x tile block
    inner: int = 0                # strided, > 0: each work-item walks this many elements of
                                  # the innermost dim (its outer indices computed once)
    vbytes: int = 32              # widest vector (bytes) the contiguous path computes on
    unit: tuple[int, ...] = ()    # inner > 0 and width > 1: the innermost stride (1 or 0) of
                                  # every array operand (outputs: 1); the stretch is walked
                                  # in vectors (vload, or a splat of one load), a scalar tail
    carry: int = 0                # strided, > 0: each work-item walks this many consecutive
                                  # elements of the whole index space, its indices stepped
                                  # with a carry (innermost dims too short for ``inner``)

    @property
    def name(self) -> str:
        return "clnp_ew_" + "_".join(i.op for i in self.body)[:60]


def value_dtypes(spec: EwSpec) -> list[np.dtype]:
    return [o.dtype for o in spec.inputs] + [i.out_dtype for i in spec.body]


def template(op: str, dtype: np.dtype, width: int = 1) -> str:
    """The C template of ``op`` for compute dtype ``dtype`` (by dtype name, C type, kind);
    on vectors (``width > 1``) the record's mask template first (``_ops``: ``vmask``)."""
    rec = _ops.lookup(op)
    for c in ((rec.vmask, rec.c) if width > 1 else (rec.c,)):
        t = _entry(c, dtype)
        if t is not None:
            return t
    raise TypeError(f"{op} has no kernel for {dtype}")


def _entry(table: Mapping[str, str], dtype: np.dtype) -> str | None:
    """``table``'s template for ``dtype``: by dtype name, then C type, then kind."""
    for key in (dtype.name, C.compute_ctype(dtype), dt.kind(dtype)):
        t = table.get(key)
        if t is not None:
            return t
    return None


# ops whose vector templates take bool masks as they are (-1/0 lanes): copies and bit ops
_MASK_SAFE = frozenset({"copy", "bitwise_and", "bitwise_or", "bitwise_xor"})


def _masked(ins: Instr) -> bool:
    """Whether ``ins`` has a vector template for its compute dtype that makes or takes
    masks (a comparison, ``where``, a logical op)."""
    return _entry(_ops.lookup(ins.op).vmask, ins.dtype) is not None


# Helpers this module defines itself (float16 support); the rest come from ``.helpers``.
_LOCAL_HELPERS = {
    # round to the nearest float16 value (ties to even) and back, exactly like a half store
    ("round16", "float"): """inline float clnp_round16_float(float x) {
    return clnp_h2f(clnp_f2h(x));
}""",
    # the same from double, rounding once (double -> float -> half could round twice)
    ("round16", "double"): """inline float clnp_round16_double(double x) {
    ushort h;
    vstore_half_rte(x, 0, (__private half *)&h);
    return vload_half(0, (__private const half *)&h);
}""",
    # round to the nearest bfloat16 value (ties to even) and back, exactly like a bfloat16
    # store
    ("roundbf", "float"): """inline float clnp_roundbf_float(float x) {
    return clnp_bf2f(clnp_f2bf(x));
}""",
    # nextafter in bfloat16 for bfloat16 values held in float: a step of the 16-bit pattern
    ("nextafterbf", "float"): """inline float clnp_nextafterbf_float(float x, float y) {
    if (isnan(x) || isnan(y)) return x + y;
    if (x == y) return y;
    if (x == 0) return copysign(as_float(0x10000u), y);
    uint u = as_uint(x);
    return as_float((y > x) == (x > 0) ? u + 0x10000u : u - 0x10000u);
}""",
    # nextafter in float16 for float16 values held in float
    ("nextafter16", "float"): """inline float clnp_nextafter16_float(float x, float y) {
    if (isnan(x) || isnan(y)) return x + y;
    if (x == y) return y;
    if (x == 0) return copysign(0x1p-24f, y);
    if (isinf(x)) return copysign(65504.0f, x);
    float ax = fabs(x);
    int e;
    frexp(ax, &e);                          /* ax = m * 2^e, 0.5 <= m < 1 */
    float ulp = ax < 0x1p-14f ? 0x1p-24f : ldexp(1.0f, e - 11);
    if ((y > x) == (x > 0)) ax += ulp;      /* away from zero */
    else ax -= (ax == ldexp(0.5f, e) && ax > 0x1p-14f) ? 0.5f * ulp : ulp;
    return copysign(ax > 65504.0f ? INFINITY : ax, x);
}""",
}
_LOCAL_RE = re.compile(r"clnp_(" + "|".join(sorted({n for n, _ in _LOCAL_HELPERS})) +
                       r")_(float|double)\(")

# NaN-propagating float maximum/minimum on vectors (``.helpers`` defines the scalar ones):
# the same comparisons lane by lane (selects in place of branches), so results are
# bit-identical to the scalar code of a tail (ties such as (0.0, -0.0) give the second).
_MINMAX_RE = re.compile(r"clnp_(maximum|minimum)_(float|double)(2|3|4|8|16)\(")


def _minmax_helper(fn: str, base: str, width: str) -> str:
    t, cmp = f"{base}{width}", ">" if fn == "maximum" else "<"
    return (f"inline {t} clnp_{fn}_{t}({t} a, {t} b) {{\n"
            f"    return select(select(b, a, a {cmp} b), a + b, (a != a) | (b != b));\n}}")


# Math builtins called as ``clnp_vm_<fn>_{T}``: PoCL's vector implementations differ from its
# scalar ones in the last bit (exp, atan, tanh, asin, ...), so on a device that runs the
# vector path (``splat > 1``) scalar code evaluates them on a splat vector, making results
# independent of layout and of an element's position (vector part or tail). Widths 4..16 share
# one implementation. Float sin/cos/tan vectors with a lane beyond ~2^23 (or inf) take a slow
# path that corrupts the *other* lanes (sin(1e-30) == 0.0099): such vectors go lane by lane.
# On CPUs the test for such a lane is a tree of unsigned max over |a|'s bits (NaN and inf
# above every finite value) ending in one branch: PoCL expands any() on a 16-lane mask into
# eight branches with shuffles, which cost 10% of the ew_chain kernel (sin and cos test).
_VM_RE = re.compile(r"clnp_vm_([a-z0-9]+)_(float|double)(\d*)\(")
_VM_BINARY = {"atan2", "hypot", "pow"}
_VM_LANEWISE = {("sin", "float"), ("cos", "float"), ("tan", "float"), ("sincos", "float")}
# PoCL's double sinh and cosh return NaN for |x| in [710.4758586, 710.4758601), just below
# their overflow threshold (sinh(710.4758589527944) is 1.797e308): there e^-|x| is negligible
# and e^|x| / 2 = (e^(|x|/2) / 2) * e^(|x|/2) does not overflow first (<= 2.5 ulp). Scalar
# code takes the guard; a vector with such a lane goes lane by lane (tests/test_accuracy_ulp.py).
_VM_GUARD = {
    ("sinh", "double"): ("fabs(a) > 710.0",
                         "{ double h = exp(0.5 * fabs(a)); return copysign((h * 0.5) * h, a); }"),
    ("cosh", "double"): ("fabs(a) > 710.0",
                         "{ double h = exp(0.5 * fabs(a)); return (h * 0.5) * h; }"),
}
# PoCL's double exp overflows to inf for x in [709.7827111564, 709.782712893384), where e^x is
# still finite (up to 1.797e308): there e^x = e^(x - 1) * e (x - 1 exact; 1.63 ulp at most
# measured), taken without a branch: exp of 2^22 doubles on PoCL, best of 60 on a shared
# machine, 1.44 ms unguarded, 1.64 ms so, 2.39 ms with an any() branch to lane-wise code
_VM_SHIFT = {("exp", "double"): ("709.78", "1.0", "M_E")}
_LANES = "0123456789abcdef"
_HUGE = "1e5f"         # below PoCL's slow-path threshold (~2^23) with a margin
_HUGE_BITS = int(np.float32(1e5).view(np.uint32))


def _vm_helper(fn: str, base: str, width: int, splat: int) -> str:
    """Definition of ``clnp_vm_<fn>_<base><width>`` (width 0: scalar)."""
    if fn == "sincos":
        return _sincos_helper(base, width, splat)
    t = f"{base}{width or ''}"
    params = ", ".join(f"{t} {a}" for a in ("a", "b")[:2 if fn in _VM_BINARY else 1])
    args = ("a", "b")[:2 if fn in _VM_BINARY else 1]
    head = f"inline {t} clnp_vm_{fn}_{t}({params}) {{"
    shift = _VM_SHIFT.get((fn, base))
    if shift:
        return _shift_helper(head, fn, base, width, splat, *shift)
    guard = _VM_GUARD.get((fn, base))
    if not width:
        pre = f" if ({guard[0]}) {guard[1]}" if guard else ""
        if splat > 1:
            sp = ", ".join(f"({base}{splat})({a})" for a in args)
            return f"{head}{pre} return {fn}({sp}).s0; }}"
        return f"{head}{pre} return {fn}({', '.join(args)}); }}"
    body = f"return {fn}({', '.join(args)});"
    lanes = _lanewise(fn, base, width)
    if (fn, base) in _VM_LANEWISE:
        body = f"{_huge_test(width, splat)} return ({t})({lanes});\n    {body}"
    elif guard:
        body = f"if (any({guard[0]})) return ({t})({lanes});\n    {body}"
    return f"{head}\n    {body}\n}}"


def _lanewise(fn: str, base: str, width: int) -> str:
    """The lanes of vector ``a``, each through the scalar ``clnp_vm_<fn>_<base>``."""
    return ", ".join(f"clnp_vm_{fn}_{base}(a.s{_LANES[i]})" for i in range(width))


def _sincos_helper(base: str, width: int, splat: int) -> str:
    """``clnp_vm_sincos_<base><width>(a, &c)``: returns sin(a), stores cos(a) to ``c``,
    computed as ``clnp_vm_sin``/``clnp_vm_cos`` would compute them (scalars on a splat vector,
    float vectors with a huge lane lane by lane)."""
    t = f"{base}{width or ''}"
    head = f"inline {t} clnp_vm_sincos_{t}({t} a, __private {t} *c) {{"
    if not width:
        if splat > 1:
            v = f"{base}{splat}"
            return (f"{head} {v} cv; {v} sv = sincos(({v})(a), &cv); *c = cv.s0; "
                    f"return sv.s0; }}")
        return f"{head} return sincos(a, c); }}"
    body = "return sincos(a, c);"
    if ("sincos", base) in _VM_LANEWISE:
        lanes = {fn: _lanewise(fn, base, width) for fn in ("sin", "cos")}
        body = (f"{_huge_test(width, splat)} {{ *c = ({t})({lanes['cos']}); "
                f"return ({t})({lanes['sin']}); }}\n    {body}")
    return f"{head}\n    {body}\n}}"


def _shift_helper(head: str, fn: str, base: str, width: int, splat: int, above: str,
                  by: str, factor: str) -> str:
    """Body computing ``fn(a - by) * factor`` where ``a > above``, else ``fn(a)``: no branch,
    and scalars splat to the vector width so that each element is computed alike."""
    t = f"{base}{width or ''}"
    if width:
        m = f"isgreater(a, ({t})({above}))"
        return (f"{head}\n    long{width} m = {m};\n"
                f"    return {fn}(a - select(({t})(0), ({t})({by}), m)) * "
                f"select(({t})(1), ({t})({factor}), m);\n}}")
    call = f"{fn}(({base}{splat})(s)).s0" if splat > 1 else f"{fn}(s)"
    return (f"{head} int m = a > {above}; {base} s = m ? a - {by} : a; "
            f"return {call} * (m ? ({base})({factor}) : ({base})(1)); }}")


def _huge_test(width: int, splat: int) -> str:
    """``if (...)`` true when a lane of float vector ``a`` has ``|a| > _HUGE`` (CPUs: also
    NaN; see the note above ``_VM_RE``)."""
    if splat == 1 or width not in (2, 4, 8, 16):
        return f"if (any(fabs(a) > {_HUGE}))"
    lines = [f"uint{width} u{width} = as_uint{width}(a) & 0x7fffffffu;"]
    w = width
    while w > 2:
        lines.append(f"uint{w // 2} u{w // 2} = max(u{w}.lo, u{w}.hi);")
        w //= 2
    return "\n    ".join(lines + [f"if (max(u2.x, u2.y) > {_HUGE_BITS:#x}u)"])


def can_vectorize(spec_body: tuple[Instr, ...], dtypes: list[np.dtype]) -> bool:
    """Vector types only where every template is vector-safe for its real/int dtype.

    ``dtypes`` lists the value dtypes (inputs, then instruction results) first, as
    :func:`value_dtypes` does. float16 and bfloat16 values are float lanes, rounded by the
    vector conversions, except where an op has a float16-/bfloat16-only template, or a body
    holds float16 and float64 (a double -> half cast rounds once only in scalar code;
    float64 -> bfloat16 rounds through float32 in both, as ml_dtypes does); float ->
    uint32/uint64 casts (scalar-only formulas) stay scalar."""
    every = list(dtypes) + [d for ins in spec_body for d in ins.arg_dtypes]
    if any(d.name == "float16" for d in every) and any(d.name == "float64" for d in every):
        return False
    for ins in spec_body:
        rec = _ops.lookup(ins.op)
        masked = _masked(ins)
        # bools are masks in vectors: only ops whose vector form makes or takes masks may
        # compute in, return or read them (a mask converts to and from numbers anywhere)
        bools = masked or (rec.vec and ins.op in _MASK_SAFE)
        kinds = "fiub" if bools else "fiu"
        if not (rec.vec or masked) or dt.kind(ins.dtype) not in kinds:
            return False
        if ins.dtype.name in ("float16", "bfloat16") and ins.dtype.name in rec.c:
            return False
        if dt.kind(ins.out_dtype) not in "fiub" or \
                any(dt.kind(d) not in kinds for d in ins.arg_dtypes):
            return False
        for a, ad in zip(ins.args, ins.arg_dtypes):
            if a < len(dtypes) and dt.kind(dtypes[a]) == "f" and ad.name in ("uint32", "uint64"):
                return False
    return all(dt.kind(d) in "fiub" for d in dtypes)


def carry_step(index: str, extent: str, ndim: int) -> str:
    """Statement stepping the C-order indices ``{index}0 .. {index}{ndim-1}`` (extents
    ``{extent}0 ..``) to the next element: the last index steps, each wrap carries into the
    index before it (the carried walks of strided elementwise kernels and of ``jit``'s fused
    reductions)."""
    stmt = "".join(f"if (++{index}{d} == {extent}{d}) {{ {index}{d} = 0; "
                   for d in range(ndim - 1, 0, -1))
    return stmt + f"++{index}0;" + " }" * (ndim - 1)


def render_elementwise(spec: EwSpec) -> tuple[str, str, list]:
    """Return ``(source, kernel_name, scalar_arg_dtypes)`` for ``spec``.

    Sample (one ``add`` of two float32 arrays, contiguous, width 8)::

        __kernel void clnp_ew_add(const long n, __global const float *a0, const long o0, ...)
        {  const long base = (long)get_global_id(0) * 8;
           if (base + 8 <= n) { float8 v0 = vload8(0, a0 + o0 + base); ... }
           else for (long k = base; k < n; ++k) { float v0 = a0[o0 + k]; ... } }
    """
    idx, w = spec.index, spec.width
    dtypes = value_dtypes(spec)
    params: list[str] = [f"const {idx} n"]
    argtypes: list = [np.dtype(np.int64 if idx == "long" else np.int32)]
    itype = argtypes[0]
    if not spec.contiguous:
        for d in range(spec.ndim):
            params.append(f"const {idx} d{d}")
            argtypes.append(itype)
    for k, op in enumerate(spec.inputs):
        if op.scalar:
            params.append(f"const {C.compute_ctype(op.dtype)} a{k}")
            argtypes.append(C.scalar_arg_dtype(op.dtype))
            continue
        params.append(f"__global const {C.storage_ctype(op.dtype)} *restrict a{k}")
        argtypes.append(None)
        params += [f"const {idx} o{k}"] + ([f"const {idx} s{k}_{d}" for d in range(spec.ndim)]
                                           if not spec.contiguous else [])
        argtypes += [itype] * (1 + (0 if spec.contiguous else spec.ndim))
    for j, (_, odt) in enumerate(spec.outputs):
        params.append(f"__global {C.storage_ctype(odt)} *r{j}")
        argtypes.append(None)
        params += [f"const {idx} ro{j}"] + ([f"const {idx} rs{j}_{d}" for d in range(spec.ndim)]
                                            if not spec.contiguous else [])
        argtypes += [itype] * (1 + (0 if spec.contiguous else spec.ndim))

    lines: list[str] = []
    lines.append(f"__kernel void {spec.name}(" + ",\n    ".join(params) + ")\n{")
    if spec.contiguous:
        lines.append(f"  const {idx} base = ({idx})get_global_id(0) * {w};")
        if w > 1:
            lines.append(f"  if (base + {w} <= n) {{")
            part = _vector_part(spec, dtypes)
            if part == w:
                lines += ["    " + s for s in _body(spec, dtypes, "base", w)]
            else:
                for j in range(0, w, part):
                    lines.append("    {")
                    lines += ["      " + s for s in _body(spec, dtypes, f"base + {j}", part)]
                    lines.append("    }")
            lines.append("  } else {")
            lines.append(f"    for ({idx} k = base; k < n; ++k) {{")
            lines += ["      " + s for s in _body(spec, dtypes, "k", 1)]
            lines.append("    }\n  }")
        else:
            lines.append("  if (base >= n) return;")
            lines += ["  " + s for s in _body(spec, dtypes, "base", 1)]
    elif spec.tile:
        # a block per work-item: a transposed operand's reads stay within ``tile`` rows (a
        # few cache lines and pages) instead of striding across the whole array per element
        t = spec.tile
        lines += [f"  const {idx} gid = ({idx})get_global_id(0);",
                  f"  const {idx} tc = (d1 + {t - 1}) / {t};",
                  f"  if (gid >= ((d0 + {t - 1}) / {t}) * tc) return;",
                  f"  const {idx} b0 = (gid / tc) * {t}, b1 = (gid % tc) * {t};",
                  f"  const {idx} e0 = min(b0 + {t}, d0), e1 = min(b1 + {t}, d1);",
                  f"  for ({idx} i0 = b0; i0 < e0; ++i0)",
                  f"  for ({idx} i1 = b1; i1 < e1; ++i1) {{"]
        lines += ["    " + s for s in _body(spec, dtypes, None, 1)]
        lines.append("  }")
    elif spec.carry:
        # consecutive elements across all dims per work-item: the div/mod of the indices once
        # per item, then a carry per step (a max-pool window's 4x4 or 2x2 innermost dims made
        # every element pay one div/mod per dim: 6 ns per element on PoCL)
        last, t = spec.ndim - 1, spec.carry
        lines += [f"  const {idx} e0 = ({idx})get_global_id(0) * {t};",
                  "  if (e0 >= n) return;",
                  f"  const {idx} e1 = min(e0 + {t}, n);",
                  f"  {idx} rem = e0;"]
        for d in reversed(range(spec.ndim)):
            lines.append(f"  {idx} i{d} = " + ("rem;" if d == 0 else f"rem % d{d}; rem /= d{d};"))
        lines.append(f"  for ({idx} e = e0; e < e1; ++e) {{")
        lines += ["    " + s for s in _body(spec, dtypes, None, 1)]
        lines.append("    " + carry_step("i", "d", last + 1))
        lines.append("  }")
    elif spec.inner:
        # a stretch of the innermost dim per work-item: the div/mod of the outer indices
        # once per stretch instead of per element (CPUs: broadcasts such as x * scale[c])
        last, t = spec.ndim - 1, spec.inner
        lines += [f"  const {idx} gid = ({idx})get_global_id(0);",
                  f"  const {idx} nc = (d{last} + {t - 1}) / {t};",
                  f"  if (gid >= (n / d{last}) * nc) return;",
                  f"  {idx} rem = gid / nc;",
                  f"  const {idx} c0 = (gid % nc) * {t}, c1 = min(c0 + {t}, d{last});"]
        for d in reversed(range(last)):
            lines.append(f"  const {idx} i{d} = " + ("rem;" if d == 0 else
                                                    f"rem % d{d}; rem /= d{d};"))
        if spec.unit:
            lines += ["  " + s for s in _unit_stretch(spec, dtypes)]
        else:
            lines.append(f"  for ({idx} i{last} = c0; i{last} < c1; ++i{last}) {{")
            lines += ["    " + s for s in _body(spec, dtypes, None, 1)]
            lines.append("  }")
    else:
        lines.append(f"  const {idx} gid = ({idx})get_global_id(0);")
        lines.append("  if (gid >= n) return;")
        lines.append(f"  {idx} rem = gid;")
        for d in reversed(range(spec.ndim)):
            if d == 0:
                lines.append(f"  const {idx} i0 = rem;")
            else:
                lines.append(f"  const {idx} i{d} = rem % d{d}; rem /= d{d};")
        lines += ["  " + s for s in _body(spec, dtypes, None, 1)]
    lines.append("}")
    head = prelude("// clnp elementwise: " + ", ".join(i.op for i in spec.body), spec.body,
                   dtypes, "\n".join(lines), spec.splat)
    return "\n".join(head + lines), spec.name, argtypes


def prelude(title: str, body: tuple[Instr, ...], dtypes: list[np.dtype], text: str,
            splat: int, extra_helpers: tuple[tuple[str, str], ...] = ()) -> list[str]:
    """The lines before a kernel whose code is ``text`` and whose ops are ``body``: a title,
    the fp64 pragma, and the helper functions the templates call (shared with the fused
    kernels of ``clnp_grad.jit``, so every op's C comes from the table the same way)."""
    head = [title]
    if C.uses_fp64(dtypes) or C.uses_fp64(d for i in body for d in i.arg_dtypes):
        head.append("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
    helpers: list[tuple[str, str]] = list(extra_helpers)
    for ins in body:
        for h in _HELPER_RE.findall(template(ins.op, ins.dtype)):
            key = (h, C.compute_ctype(ins.dtype))
            if key not in _LOCAL_HELPERS and not h.startswith("vm_"):
                helpers.append(key)
    if helpers:
        from .helpers import render_helpers
        head.append(render_helpers(helpers))
    head += [_LOCAL_HELPERS[k] for k in sorted(set(_LOCAL_RE.findall(text)))]
    head += [_minmax_helper(*m) for m in sorted(set(_MINMAX_RE.findall(text)))]
    vms = set(_VM_RE.findall(text))
    vms |= {(fn, base, "") for fn, base, w in vms
            if w and ((fn, base) in _VM_LANEWISE or (fn, base) in _VM_GUARD)}
    vms |= {(fn, base, "") for fn in ("sin", "cos") for f, base, w in list(vms)
            if f == "sincos" and w and (f, base) in _VM_LANEWISE}
    head += [_vm_helper(fn, base, int(w or 0), splat)
             for fn, base, w in sorted(vms, key=lambda v: (v[0], v[1], int(v[2] or 0)))]
    return head


def _offset(prefix: str, k: int | str, ndim: int) -> str:
    terms = [f"{prefix}o{k}" if prefix else f"o{k}"]
    terms += [f"i{d} * {prefix}s{k}_{d}" if prefix else f"i{d} * s{k}_{d}" for d in range(ndim)]
    return " + ".join(terms)


def _body(spec: EwSpec, dtypes: list[np.dtype], lin: str | None, w: int) -> list[str]:
    out: list[str] = []
    for k, op in enumerate(spec.inputs):
        ct = C.compute_ctype(op.dtype, w)
        if op.scalar:
            expr = C.splat(op.dtype, f"a{k}", w)
        else:
            pos = f"o{k} + {lin}" if lin is not None else _offset("", k, spec.ndim)
            expr = C.load(op.dtype, f"a{k}", pos if w == 1 else f"o{k} + {lin}", w)
        out.append(f"const {ct} v{k} = {expr};")
    out += instructions(spec.body, dtypes, len(spec.inputs), w)
    for j, (vid, odt) in enumerate(spec.outputs):
        val = C.convert(f"v{vid}", dtypes[vid], odt, w, to_storage=True)
        pos = f"ro{j} + {lin}" if lin is not None else _offset("r", j, spec.ndim)
        out.append(C.store(odt, f"r{j}", pos, val, w))
    return out


def _vector_part(spec: EwSpec, dtypes: list[np.dtype]) -> int:
    """Lanes of the vectors a ``spec.width`` step is computed in: at most ``spec.vbytes``,
    the device's register width. Wider OpenCL vectors change the calling convention of
    builtins on AVX2 CPUs (PoCL then prints ABI warnings on every build), while on AVX-512
    PoCL's float16 math builtins run twice as fast as two float8 calls."""
    widest = max(C.compute_itemsize(d) for d in dtypes + [o for _, o in spec.outputs])
    return max(1, min(spec.width, spec.vbytes // widest))


def _unit_stretch(spec: EwSpec, dtypes: list[np.dtype]) -> list[str]:
    """The stretch ``[c0, c1)`` of the innermost dim (outer indices ``i0 ...`` known) where
    every array operand has innermost stride 1 or 0 (``spec.unit``) and every output 1: each view's
    address at ``c0`` once, stride-0 operands loaded once, then vectors of ``spec.width``
    (vload/vstore at stride 1, a splat at stride 0) and a scalar tail."""
    idx, w, last = spec.index, spec.width, spec.ndim - 1
    arrays = [k for k, op in enumerate(spec.inputs) if not op.scalar]
    unit = dict(zip(arrays, spec.unit))
    lines: list[str] = []
    outer = lambda p, k: " + ".join([f"{p}o{k}"] + [f"i{d} * {p}s{k}_{d}" for d in range(last)])
    for k in arrays:
        lines.append(f"const {idx} p{k} = {outer('', k)} + c0 * s{k}_{last};")
        if not unit[k]:
            ct = C.compute_ctype(spec.inputs[k].dtype)
            lines.append(f"const {ct} z{k} = {C.load(spec.inputs[k].dtype, f'a{k}', f'p{k}')};")
    for j in range(len(spec.outputs)):
        lines.append(f"const {idx} q{j} = {outer('r', j)} + c0 * rs{j}_{last};")

    def body(pos: str, width: int) -> list[str]:
        out: list[str] = []
        for k, op in enumerate(spec.inputs):
            ct = C.compute_ctype(op.dtype, width)
            if op.scalar or not unit[k]:
                expr = C.splat(op.dtype, f"a{k}" if op.scalar else f"z{k}", width)
            else:
                expr = C.load(op.dtype, f"a{k}", f"p{k} + {pos}", width)
            out.append(f"const {ct} v{k} = {expr};")
        out += instructions(spec.body, dtypes, len(spec.inputs), width)
        for j, (vid, odt) in enumerate(spec.outputs):
            val = C.convert(f"v{vid}", dtypes[vid], odt, width, to_storage=True)
            out.append(C.store(odt, f"r{j}", f"q{j} + {pos}", val, width))
        return out

    part = _vector_part(spec, dtypes)
    lines += [f"const {idx} m = c1 - c0;", f"{idx} j = 0;",
              f"for (; j + {w} <= m; j += {w}) {{"]
    for p in range(0, w, part):
        lines.append("  {")
        lines += ["    " + s for s in body(f"j + {p}" if p else "j", part)]
        lines.append("  }")
    lines += ["}", "for (; j < m; ++j) {"]
    lines += ["  " + s for s in body("j", 1)]
    lines.append("}")
    return lines


_ROUND = {"float16": C.round16, "bfloat16": C.roundbf}


def sincos_pairs(body: tuple[Instr, ...]) -> dict[int, int]:
    """``sin`` and ``cos`` instructions of one value, each mapped to its partner: computed
    together by ``sincos``, which shares the argument reduction (the ew_chain kernel on PoCL:
    38 -> 28 ms at 2^24 float32; PoCL's sincos is bit-identical to its sin and cos at every
    vector width, float and double). Only float32/float64 results that need no rounding."""
    first: dict[tuple, int] = {}
    pairs: dict[int, int] = {}
    for j, ins in enumerate(body):
        if ins.op not in ("sin", "cos") or ins.dtype.name not in ("float32", "float64") or \
                ins.out_dtype != ins.dtype or \
                template(ins.op, ins.dtype) != f"clnp_vm_{ins.op}_{{T}}({{0}})":
            continue
        key = (ins.args[0], ins.arg_dtypes[0], ins.dtype)
        other = first.get(key + ("cos" if ins.op == "sin" else "sin",))
        if other is not None and other not in pairs:
            pairs[other], pairs[j] = j, other
        else:
            first.setdefault(key + (ins.op,), j)
    return pairs


def instructions(body: tuple[Instr, ...], dtypes: list[np.dtype], n_in: int,
                 w: int) -> list[str]:
    """SSA lines ``const T v<k> = <template>;`` for ``body``, whose arguments ``v0 ...``
    (the ``n_in`` inputs, then earlier results) are already defined; ``w`` is the vector
    width (1: scalars)."""
    out: list[str] = []
    pairs = sincos_pairs(body)
    for j, ins in enumerate(body):
        args = [C.convert(f"v{a}", dtypes[a], ad, w) for a, ad in zip(ins.args, ins.arg_dtypes)]
        if j in pairs:
            partner = pairs[j]
            if partner > j:   # the first of the two computes both; the second is already set
                sin_id, cos_id = (n_in + j, n_in + partner) if ins.op == "sin" else \
                    (n_in + partner, n_in + j)
                ct = C.compute_ctype(ins.dtype, w)
                out.append(f"{ct} v{cos_id};")
                out.append(f"const {ct} v{sin_id} = clnp_vm_sincos_{ct}({args[0]}, &v{cos_id});")
            continue
        t = template(ins.op, ins.dtype, w)
        expr = t.format(*args, T=C.compute_ctype(ins.dtype, w), R=C.real_ctype(ins.dtype),
                        U=C.unsigned_ctype(ins.dtype, w), M=C.mask_cast(ins.dtype, w))
        # the template yields the compute type, or bool/real per the record; cast from there
        rec = _ops.lookup(ins.op)
        natural = {"same": ins.dtype, "bool": np.dtype(bool),
                   "real": _REAL_OF.get(ins.dtype.name, ins.dtype)}[rec.out]
        if w > 1 and rec.out == "bool" and C.compute_itemsize(ins.dtype) != 4:
            # a vector comparison's mask has its operands' lane size: bools compute as int
            expr = f"convert_int{w}({expr})"
        expr = C.convert(expr, natural, ins.out_dtype, w)
        vid = n_in + j
        if ins.out_dtype.name in _ROUND and any(vid in later.args for later in body[j + 1:]):
            # a float16/bfloat16 value computed in float is rounded before the next op uses
            # it, as NumPy (ml_dtypes) rounds every such result (the final store rounds itself)
            expr = _ROUND[ins.out_dtype.name](expr, w)
        out.append(f"const {C.compute_ctype(ins.out_dtype, w)} v{vid} = {expr};")
    return out
