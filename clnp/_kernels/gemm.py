"""Render batched GEMM kernels: ``C[b, m, n] = sum_k A[b, m, k] * B[b, k, n]``.

One kernel serves every shape, transposition and batch layout of a given spec: sizes, element
offsets and strides are kernel arguments, so ``x.T``/``x.mT``/sliced operands are read in place
and a broadcast batch dim is simply stride 0. Layout-dependent fast paths (vector loads along a
unit stride, coalesced tile loads) are chosen by uniform run-time branches inside the kernel
rather than by spec flags, because every distinct source costs a compile (0.3-1.5 s on PoCL)
while a uniform branch costs nothing measurable.

Two ways to map the work onto work-items (``GemmSpec.kind``):

``cpu``
    Register blocking: a work-item owns ``rm`` (a kernel argument, at most ``GemmSpec.rm``)
    sub-tiles of ``tm x tn`` outputs stacked along M and walks K in blocks of ``bk``. For each
    block it copies the B panel (``bk x tn``) to private memory, then accumulates each
    sub-tile in vector registers of ``vec`` lanes along N (complex values take two lanes,
    (re, im)), A values broadcast, B rows read as vectors from the copy. No local memory and
    no barriers: CPU drivers (PoCL) run a work-group's items one after another and emulate
    barriers by splitting that loop, which is slow. When A and B are both contiguous along K
    (``x @ y.T``, matrix times vector) a second loop takes dot products with the vector lanes
    along K instead.
``gpu``
    Local-memory tiling: a ``ly x lx`` work-group stages ``bk``-deep slices of an
    ``(ly*tm) x (lx*tn)`` output tile's A and B panels in local memory (loads coalesced along
    whichever of the operand's dims has unit stride), then each item accumulates ``tm x tn``
    outputs: groups of ``vec`` consecutive rows (columns) spaced ``ly*vec`` (``lx*vec``)
    apart, read from local memory as vectors (real dtypes; conflict-free, coalesced stores).
    Two local buffers, one barrier per slice. Operands with an aligned unit stride (either
    dim) take 16-byte vector loads into registers, the next slice in flight while the current
    one is multiplied; other layouts copy element by element straight into the other buffer
    in rolled loops (unrolled, their hoisted offsets would cost every path registers).

The K range may be split into ``parts`` (split-K, for few outputs and long K): part ``p``
writes its partial tile to ``C + p * scp`` and the caller reduces the partials.

Kernel arguments (``I`` = the spec's index type)::

    int M, int N, int K, int kchunk, int nb1, int parts, int rm,
    A, I a_off, I sam, I sak, I sab0, I sab1,
    B, I b_off, I sbk, I sbn, I sbb0, I sbb1,
    C, I c_off, I scm, I scn, I scb0, I scb1, I scp

The batch index ``b`` (global dim 2, together with the part) is split as ``b0 = b / nb1``,
``b1 = b % nb1``.

**Epilogue** (``GemmSpec.epilogue``, used by ``clnp_grad.jit``; eager products have none): an
SSA program of op-table instructions (``clnp._kernels.elementwise.Instr``) evaluated on every
output value before it is stored, in the store loop (work ``O(M*N)`` against the product's
``O(M*N*K)``). Value 0 is the product's value (the spec dtype), values ``1..`` the extra
operands ``GemmSpec.ep_inputs``, then the instructions' results. ``GemmSpec.ep_outputs`` lists
the values stored: the first to ``C`` (its storage type then follows that value's dtype), the
others to extra arrays ``E1, E2, ...`` of C's layout. Extra operands follow C's parameters::

    scalar:  T es<k>
    array:   __global const T *restrict ep<k>, I eo<k>, I esm<k>, I esn<k>, I esb0<k>, I esb1<k>
    outputs: __global T *restrict E<j>            (j >= 1)

Arrays are addressed by their own strides over (m, n, b0, b1): a bias over N has ``esm = 0``,
a per-row vector ``esn = 0``, a residual or mask the output's strides. Real float dtypes only;
split-K partials are never given an epilogue: ``clnp_grad.jit`` evaluates it in the
elementwise kernel that sums the partials.
CPU kernels evaluate it in a rolled loop over the tile (the tile's lanes read back from the
private sums), so the epilogue's code exists once per kernel (twice with the vector path): in
vectors of up to 32 bytes where C and every array operand are unit-stride or constant along N
and the tile is whole (a uniform branch; ops whose templates are not vector-safe, such as
``maximum``, stay per lane), else one output at a time. GPU kernels evaluate it per output
register (unrolled, like their stores).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import ctypes as C
from .elementwise import Instr, Operand, can_vectorize, instructions, prelude
from .._runtime.dtypes import kind as dkind


# The kernels compute in these dtypes only: narrower integers are widened to 32 bits (the
# wrapped low bits of a product sum do not depend on the width it is computed in) and float16
# to float32 (float32 accumulation). Each supported dtype is one compiled program per device.
GEMM_DTYPES = tuple(np.dtype(n) for n in ("int32", "int64", "float32", "float64",
                                          "complex64", "complex128"))


def gemm_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype a product of ``dtype`` operands is computed in (one of GEMM_DTYPES)."""
    if dkind(dtype) in "iu":
        return np.dtype(np.int64 if dtype.itemsize == 8 else np.int32)
    if dtype.name in ("float16", "bfloat16"):
        return np.dtype(np.float32)
    return dtype


@dataclass(frozen=True)
class GemmSpec:
    dtype: np.dtype          # A, B, C and the accumulators (one of GEMM_DTYPES)
    kind: str                # "cpu" | "gpu"
    tm: int                  # outputs per work-item (sub-tile) along M
    tn: int                  # outputs per work-item along N
    vec: int = 1             # cpu: lanes per vector along N (complex: vec / 2 values);
                             # gpu: consecutive rows/columns per item group
    rm: int = 1              # cpu: most sub-tiles (of tm rows) per item, sharing B panels
    bk: int = 16             # depth of a K block (gpu: staged in local memory; cpu: in L1)
    lx: int = 16             # gpu: work-group size along N
    ly: int = 16             # gpu: work-group size along M
    index: str = "long"      # "int" when every offset fits in 31 bits
    # epilogue (module docstring): not in the repr, so an eager kernel's source (whose first
    # line is the repr) is the same as before epilogues existed
    epilogue: tuple[Instr, ...] = field(default=(), repr=False)
    ep_inputs: tuple[Operand, ...] = field(default=(), repr=False)
    ep_outputs: tuple[tuple[int, np.dtype], ...] = field(default=(), repr=False)


def _acc_ctype(spec: GemmSpec, width: int = 1) -> str:
    # Integers accumulate in unsigned types: wraparound is defined there (signed overflow is
    # undefined in C) and gives the same bits as two's complement arithmetic.
    if dkind(spec.dtype) in "iu":
        return C.unsigned_ctype(spec.dtype, width)
    return C.compute_ctype(spec.dtype, width)


def _to_acc(spec: GemmSpec, expr: str, width: int = 1) -> str:
    """A loaded value (or vector) as the accumulator type."""
    if dkind(spec.dtype) not in "iu":
        return expr
    return f"(({_acc_ctype(spec)})({expr}))" if width == 1 else \
        f"as_{_acc_ctype(spec, width)}({expr})"


def _store(spec: GemmSpec, ptr: str, idx: str, value: str) -> str:
    """Statement storing an accumulator value to C."""
    if dkind(spec.dtype) in "iu":
        value = f"({C.compute_ctype(spec.dtype)})({value})"
    return C.store(spec.dtype, ptr, idx, value)


def _mad(spec: GemmSpec, acc: str, a: str, b: str) -> str:
    """Statement ``acc += a * b`` (complex product without conjugation)."""
    if dkind(spec.dtype) == "c":
        return (f"{acc} += ({_acc_ctype(spec)})({a}.x * {b}.x - {a}.y * {b}.y, "
                f"{a}.x * {b}.y + {a}.y * {b}.x);")
    return f"{acc} += {a} * {b};"


def _signature(spec, ti: str = "", to: str = "") -> tuple[list[str], list]:
    """Kernel parameters (see the module docstring); ``ti``/``to`` override the element types
    of A and B / of C (default: the spec dtype's storage type)."""
    I = spec.index
    ti = ti or C.storage_ctype(spec.dtype)
    to = to or C.storage_ctype(spec.dtype)
    it = np.int32 if I == "int" else np.int64
    params = ["const int M", "const int N", "const int K", "const int kchunk", "const int nb1",
              "const int parts", "const int rm"]
    argtypes: list = [np.int32] * 7
    for name, t, const, strides in (("A", ti, "const ", ("sam", "sak", "sab0", "sab1")),
                                    ("B", ti, "const ", ("sbk", "sbn", "sbb0", "sbb1")),
                                    ("C", to, "", ("scm", "scn", "scb0", "scb1", "scp"))):
        params.append(f"__global {const}{t} *restrict {name}")
        params.append(f"const {I} {name.lower()}_off")
        params += [f"const {I} {s}" for s in strides]
        argtypes += [None, it] + [it] * len(strides)
    for k, op in enumerate(getattr(spec, "ep_inputs", ()), start=1):
        if op.scalar:
            params.append(f"const {C.compute_ctype(op.dtype)} es{k}")
            argtypes.append(C.scalar_arg_dtype(op.dtype))
            continue
        params.append(f"__global const {C.storage_ctype(op.dtype)} *restrict ep{k}")
        params += [f"const {I} {s}{k}" for s in ("eo", "esm", "esn", "esb0", "esb1")]
        argtypes += [None] + [it] * 5
    for j, (_, odt) in enumerate(getattr(spec, "ep_outputs", ())[1:], start=1):
        params.append(f"__global {C.storage_ctype(odt)} *restrict E{j}")
        argtypes.append(None)
    return params, argtypes


def _has_epilogue(spec) -> bool:
    return bool(getattr(spec, "ep_outputs", ()))


def _out_ctype(spec) -> str:
    """Storage type of C: the first epilogue output's, else the spec dtype's."""
    if _has_epilogue(spec):
        return C.storage_ctype(spec.ep_outputs[0][1])
    return C.storage_ctype(spec.dtype)


def _ep_dtypes(spec: GemmSpec) -> list[np.dtype]:
    """Dtypes of the epilogue's values: the product's, the extra operands', the results'."""
    return [spec.dtype] + [o.dtype for o in spec.ep_inputs] + \
        [i.out_dtype for i in spec.epilogue]


def _ep_statement(spec: GemmSpec, row: str, col: str, value: str) -> str:
    """One statement storing output (``row``, ``col``) of value ``value`` (an accumulator
    expression): the epilogue evaluated on it when the spec has one, then every store. ``ci``
    points to the row in C."""
    I = spec.index
    if not _has_epilogue(spec):
        return _store(spec, "ci", f"({I})({col}) * scn", value)
    dtypes = _ep_dtypes(spec)
    lines = [f"const {C.compute_ctype(spec.dtype)} v0 = {value};"]
    for k, op in enumerate(spec.ep_inputs, start=1):
        if op.scalar:
            expr = f"es{k}"
        else:
            expr = C.load(op.dtype, f"epb{k}", f"({I})({row}) * esm{k} + ({I})({col}) * esn{k}")
        lines.append(f"const {C.compute_ctype(op.dtype)} v{k} = {expr};")
    lines += instructions(spec.epilogue, dtypes, 1 + len(spec.ep_inputs), 1)
    for j, (vid, odt) in enumerate(spec.ep_outputs):
        val = C.convert(f"v{vid}", dtypes[vid], odt, to_storage=True)
        if j == 0:
            lines.append(C.store(odt, "ci", f"({I})({col}) * scn", val))
        else:
            lines.append(C.store(odt, f"cE{j}", f"({I})({row}) * scm + ({I})({col}) * scn",
                                 val))
    return "{ " + " ".join(lines) + " }"


def _ep_vector_width(spec: GemmSpec) -> int:
    """Lanes of the CPU kernel's vector epilogue (0: none): at most 32 bytes, as the
    elementwise kernels (wider vectors change the calling convention of builtins on AVX2)."""
    dtypes = _ep_dtypes(spec)
    if not can_vectorize(spec.epilogue, dtypes) or \
            any(dkind(d) not in "fiu" or d.itemsize == 2 and dkind(d) == "f"
                for _, d in spec.ep_outputs):
        return 0
    widest = max(C.compute_itemsize(d) for d in dtypes + [d for _, d in spec.ep_outputs])
    w = min(spec.vec, 32 // widest)
    return w if w > 1 and spec.tn % w == 0 else 0


def _ep_vector(spec: GemmSpec, w: int, row: str, col: str, pr: str) -> list[str]:
    """The epilogue on ``w`` consecutive outputs of one row (``ci`` points to the row, C
    and every array operand unit-stride or constant along N): vector loads, the op table's
    templates at width ``w``, vector stores."""
    I = spec.index
    dtypes = _ep_dtypes(spec)
    lines = [f"const {C.compute_ctype(spec.dtype, w)} v0 = vload{w}(0, {pr});"]
    for k, op in enumerate(spec.ep_inputs, start=1):
        ct = C.compute_ctype(op.dtype, w)
        if op.scalar:
            lines.append(f"const {ct} v{k} = ({ct})(es{k});")
            continue
        pos = f"({I})({row}) * esm{k} + ({I})({col}) * esn{k}"
        lines.append(f"const {ct} v{k} = esn{k} ? {C.load(op.dtype, f'epb{k}', pos, w)} : "
                     f"({ct})({C.load(op.dtype, f'epb{k}', pos)});")
    lines += instructions(spec.epilogue, dtypes, 1 + len(spec.ep_inputs), w)
    for j, (vid, odt) in enumerate(spec.ep_outputs):
        val = C.convert(f"v{vid}", dtypes[vid], odt, w, to_storage=True)
        ptr = "ci" if j == 0 else f"cE{j}"
        pos = f"({I})({col})" if j == 0 else f"({I})({row}) * scm + ({I})({col})"
        lines.append(C.store(odt, ptr, pos, val, w))
    return lines


def _prologue(spec, z: str, ti: str = "", to: str = "") -> list[str]:
    I = spec.index
    ti = ti or C.storage_ctype(spec.dtype)
    to = to or C.storage_ctype(spec.dtype)
    return [
        f"  const int z = {z};",
        "  const int p = z % parts, b = z / parts;",
        "  const int b0 = b / nb1, b1 = b - b0 * nb1;",
        "  const int k0 = p * kchunk;",
        "  const int k1 = min(K, k0 + kchunk);",
        f"  __global const {ti} *a = A + a_off + ({I})b0 * sab0 + ({I})b1 * sab1;",
        f"  __global const {ti} *bb = B + b_off + ({I})b0 * sbb0 + ({I})b1 * sbb1;",
        f"  __global {to} *c = C + c_off + ({I})b0 * scb0 + "
        f"({I})b1 * scb1 + ({I})p * scp;",
    ] + _ep_prologue(spec)


def _ep_prologue(spec) -> list[str]:
    """Each epilogue array operand's and extra output's pointer at this batch index."""
    I = spec.index
    out = []
    for k, op in enumerate(getattr(spec, "ep_inputs", ()), start=1):
        if not op.scalar:
            out.append(f"  __global const {C.storage_ctype(op.dtype)} *epb{k} = ep{k} + eo{k} "
                       f"+ ({I})b0 * esb0{k} + ({I})b1 * esb1{k};")
    for j, (_, odt) in enumerate(getattr(spec, "ep_outputs", ())[1:], start=1):
        out.append(f"  __global {C.storage_ctype(odt)} *cE{j} = E{j} + c_off + "
                   f"({I})b0 * scb0 + ({I})b1 * scb1;")
    return out


def _header(spec: GemmSpec) -> list[str]:
    lines = [f"// clnp gemm {spec}"]
    if C.uses_fp64([spec.dtype]):
        lines.append("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
    return lines


def check_epilogue(spec: GemmSpec) -> None:
    """Raise ``ValueError`` unless ``spec``'s epilogue is one the kernels can evaluate."""
    if not spec.ep_outputs:
        if spec.epilogue or spec.ep_inputs:
            raise ValueError("GemmSpec: an epilogue needs at least one output (ep_outputs)")
        return
    if dkind(spec.dtype) != "f":
        raise ValueError(f"GemmSpec: epilogues need a real float dtype, not {spec.dtype}")
    n = 1 + len(spec.ep_inputs) + len(spec.epilogue)
    for j, ins in enumerate(spec.epilogue):
        if any(not 0 <= a < 1 + len(spec.ep_inputs) + j for a in ins.args):
            raise ValueError(f"GemmSpec: epilogue instruction {j} ({ins.op}) reads a value "
                             f"not defined before it: {ins.args}")
    if any(not 0 <= v < n for v, _ in spec.ep_outputs):
        raise ValueError(f"GemmSpec: epilogue outputs {spec.ep_outputs} name values outside "
                         f"0..{n - 1}")


def render_gemm(spec: GemmSpec, splat: int = 1) -> tuple[str, str, list]:
    """Return ``(source, kernel_name, scalar_arg_dtypes)`` for ``spec``.

    Launch geometry: ``cpu``: global ``(ceil(N/tn), ceil(M/(rm*tm)), batch*parts)`` with the
    argument ``rm <= spec.rm`` (any local
    size; clnp uses 1); ``gpu``: global ``(ceil(N/(lx*tn))*lx, ceil(M/(ly*tm))*ly,
    batch*parts)`` with local ``(lx, ly, 1)``. ``splat``: as for elementwise kernels
    (``EwSpec.splat``): the width scalar math builtins of an epilogue are evaluated in, so
    that results match the vector code of fused elementwise kernels bit for bit."""
    check_epilogue(spec)
    params, argtypes = _signature(spec, to=_out_ctype(spec))
    body = _render_cpu(spec) if spec.kind == "cpu" else _render_gpu(spec)
    head = "__kernel "
    if spec.kind == "gpu":
        head += f"__attribute__((reqd_work_group_size({spec.lx}, {spec.ly}, 1))) "
    lines = [head + "void clnp_gemm(" + ",\n    ".join(params) + ")\n{"]
    lines += body + ["}"]
    top = _header(spec)
    if _has_epilogue(spec):
        # helpers and fp64 pragma of the epilogue's ops, from the op table like every
        # elementwise kernel
        top += prelude("// epilogue: " + ", ".join(i.op for i in spec.epilogue),
                       spec.epilogue, _ep_dtypes(spec) + [d for _, d in spec.ep_outputs],
                       "\n".join(lines), splat)
    return "\n".join(top + lines), "clnp_gemm", argtypes


def _hsum(v: str, width: int) -> str:
    if width == 1:
        return v
    h = width // 2
    lo = "(" + v + ").s" + "".join(f"{q:x}" for q in range(h))
    hi = "(" + v + ").s" + "".join(f"{q:x}" for q in range(h, width))
    return _hsum(f"({lo} + {hi})", h) if h > 1 else f"({lo} + {hi})"


def _render_cpu(spec: GemmSpec) -> list[str]:
    I, tm, tn, V, R, KB = spec.index, spec.tm, spec.tn, spec.vec, spec.rm, spec.bk
    d = spec.dtype
    cplx = dkind(d) == "c"
    # Complex values are pairs of real lanes in the vectors: a vector of V lanes holds W = V/2
    # columns, and a*b = a.re * b + a.im * (-b.im, b.re) is two real vector FMAs.
    W = V // 2 if cplx else V
    nv = tn // W
    ts = C.storage_ctype(d)
    to = _out_ctype(spec)
    ep = _has_epilogue(spec)
    acc1 = _acc_ctype(spec)
    accv = f"{C.real_ctype(d)}{V}" if cplx else _acc_ctype(spec, V)
    zero = f"({accv})(0)"
    nb_vec = 2 * nv if cplx else nv          # B vectors per K step in the private panel
    L = [
        # consecutive items walk along N: they share the A rows of their block (in L2)
        f"  const int mb = get_global_id(1) * rm * {tm};",
        f"  int n0 = get_global_id(0) * {tn};",
        "  if (mb >= M || n0 >= N) return;",
        "  // a tile past the far edge moves back inside C: the overlap is computed twice,",
        "  // identically, so full tiles serve every column of a wide enough C",
        f"  if (N >= {tn}) n0 = min(n0, N - {tn});",
    ] + _prologue(spec, "get_global_id(2)", to=_out_ctype(spec))

    def subtiles(body: list[str], indent: str, rows: bool = True) -> list[str]:
        """``body`` once per ``tm``-row sub-tile of this item's ``rm * tm`` rows, with ``m0``
        and (``rows``) the row offsets ``ra<i>`` defined."""
        out = [f"{indent}for (int r = 0; r < rm; ++r) {{",
               f"{indent}  int m0 = mb + r * {tm};",
               f"{indent}  if (m0 >= M) break;",
               f"{indent}  if (M >= {tm}) m0 = min(m0, M - {tm});"]
        # rows past the edge (M < tm) repeat the last row: loads stay in bounds, nothing is
        # stored from them
        for i in range(tm if rows else 0):
            out.append(f"{indent}  const {I} ra{i} = ({I})(m0 + {i} < M ? m0 + {i} : M - 1) "
                       f"* sam;")
        return out + [indent + "  " + line for line in body] + [f"{indent}}}"]

    def vec(lanes: list[str]) -> str:
        # lanes loaded one by one from constant offsets: the compiler fuses them into one
        # vector load, while PoCL's vloadN is an out-of-line call that spills every
        # accumulator around it
        if cplx:
            return f"({accv})(" + ", ".join(lanes) + ")"
        if V == 1:
            return _to_acc(spec, lanes[0])
        return _to_acc(spec, f"({C.compute_ctype(d, V)})(" + ", ".join(lanes) + ")", V)

    def column(ptr: str, idx: str) -> list[str]:
        """The real lanes of one column value."""
        if cplx:
            return [f"{ptr}[{idx}].x", f"{ptr}[{idx}].y"]
        return [C.load(d, ptr, idx)]

    def store(i: int, col: str, value: str) -> str:
        return f"if ({col} < N) " + _ep_statement(spec, f"m0 + {i}", col, value)

    def lane(v: str, q: int) -> str:
        """Column ``q`` of the vector ``v`` as a value of the dtype."""
        if cplx:
            return f"({acc1})({v}.s{2 * q:x}, {v}.s{2 * q + 1:x})"
        return v + (f".s{q:x}" if V > 1 else "")

    nt_path = V > 1 and not cplx
    # Register tile tm x tn: A values broadcast, B rows as vectors along N. K is walked in
    # blocks of KB; each block's B panel is first copied to private memory (converted to the
    # accumulator type), where all rm sub-tiles read it, their sums parked in private memory
    # between blocks. The copy keeps the panel in L1 whatever B's strides (rows of a
    # power-of-two leading dimension would all share one cache set) and costs 1/rm of the
    # loads; columns past the edge (N < tn) repeat the last one. Products with both operands
    # contiguous along K take the dot-product loop below, unless K is shorter than two of
    # its vectors (dz @ w.T of a 10-class layer: its lanes would all go to the scalar tail)
    L.append("  if (!(sak == 1 && sbk == 1) || (sbn == 1 && N >= " + str(tn) + ") || "
             f"k1 - k0 < {2 * V}) {{" if nt_path else "  {")
    L.append(f"    {accv} part[{R * tm * nv}];")
    L.append(f"    {accv} bp[{KB * nb_vec}];")
    L.append(f"    for (int q = 0; q < rm * {tm * nv}; ++q) part[q] = {zero};")
    L.append(f"    const int vec_b = sbn == 1 && N >= {tn};")
    for q in range(tn):
        L.append(f"    const {I} rb{q} = ({I})(n0 + {q} < N ? n0 + {q} : N - 1) * sbn;")
    L.append(f"    for (int kb = k0; kb < k1; kb += {KB}) {{")
    L.append(f"      const int ke = min(kb + {KB}, k1);")
    L.append(f"      __global const {ts} *bn = bb + ({I})kb * sbk;")
    for branch, idx in (("if (vec_b) {", lambda q: f"n0 + {q}"), ("} else {", lambda q: f"rb{q}")):
        L.append("      " + branch)
        L.append("        for (int k = 0; k < ke - kb; ++k, bn += sbk) {")
        for j in range(nv):
            lanes = [x for q in range(W) for x in column("bn", idx(j * W + q))]
            L.append(f"          bp[k * {nb_vec} + {j}] = {vec(lanes)};")
            if cplx:
                v = f"bp[k * {nb_vec} + {j}]"
                sw = [f"-{v}.s{2 * q + 1:x}, {v}.s{2 * q:x}" for q in range(W)]
                L.append(f"          bp[k * {nb_vec} + {nv + j}] = ({accv})({', '.join(sw)});")
        L.append("        }")
    L.append("      }")
    body = []
    for i in range(tm):
        body.append(" ".join(f"{accv} acc{i}_{j} = part[(r * {tm} + {i}) * {nv} + {j}];"
                             for j in range(nv)))
    body += [f"__global const {ts} *ak = a + ({I})kb * sak;",
             "for (int k = 0; k < ke - kb; ++k, ak += sak) {"]
    for j in range(nb_vec):
        body.append(f"  const {accv} bv{j} = bp[k * {nb_vec} + {j}];")
    for i in range(tm):
        body.append(f"  const {acc1} av{i} = {_to_acc(spec, C.load(d, 'ak', f'ra{i}'))};")
        for j in range(nv):
            if cplx:
                body.append(f"  acc{i}_{j} += av{i}.x * bv{j} + av{i}.y * bv{nv + j};")
            else:
                body.append("  " + _mad(spec, f"acc{i}_{j}", f"av{i}", f"bv{j}"))
    body.append("}")
    for i in range(tm):
        body.append(" ".join(f"part[(r * {tm} + {i}) * {nv} + {j}] = acc{i}_{j};"
                             for j in range(nv)))
    L += subtiles(body, "      ")
    L.append("    }")
    # A C with unit stride along M (a swapped product's C^T: the NCHW output of a
    # convolution batched over its images, C^T = cols^T W^T) is stored a column at a time,
    # each column's rm * tm rows in order (the sums read back as scalars: part is a
    # row-major rm*tm x tn matrix). Row by row, each row's tn values went to tn lines a
    # column stride apart (4 KiB for 32x32 maps: tn lines of one cache set), tm times over:
    # the ResNet block's (64x576 @ 576x1024) x 64 product took 26.5 ms that way, 15.1 ms
    # column by column (PoCL, AVX-512, kernel times in one sitting)
    body = [f"__global {to} *ci = c + ({I})(m0 + i);",
            _ep_statement(spec, "m0 + i", "n0 + q", f"pf[(r * {tm} + i) * {tn} + q]")]
    L += ["    if (scm == 1 && scn != 1) {",
          f"      const {acc1} *pf = (const {acc1} *)part;",
          f"      for (int q = 0; q < {tn} && n0 + q < N; ++q) {{"]
    L += subtiles([f"for (int i = 0; i < {tm} && m0 + i < M; ++i) {{"] +
                  ["  " + x for x in body] + ["}"], "        ", rows=False)
    L += ["      }", "    } else {"]
    body = []
    if ep and not cplx:
        # the epilogue once, in a rolled loop over the tile: its lanes read back from the
        # private sums (one copy of its code instead of tm * tn). Where C and every array
        # operand are unit-stride or constant along N and the tile is whole, in vectors
        ew = _ep_vector_width(spec)
        loop = [f"for (int i = 0; i < {tm} && m0 + i < M; ++i) {{",
                f"  __global {to} *ci = c + ({I})(m0 + i) * scm;",
                f"  const {acc1} *pr = (const {acc1} *)(part + (r * {tm} + i) * {nv});"]
        scalar = ["  for (int q = 0; q < " + str(tn) + "; ++q)",
                  "    if (n0 + q < N) " + _ep_statement(spec, "m0 + i", "n0 + q", "pr[q]")]
        if ew:
            vec_ok = " && ".join([f"scn == 1 && N >= {tn}"] + [
                f"(esn{k} == 0 || esn{k} == 1)" for k, op in enumerate(spec.ep_inputs, 1)
                if not op.scalar])
            body += [f"if ({vec_ok}) {{"] + ["  " + x for x in loop]
            body += [f"    for (int q = 0; q < {tn}; q += {ew}) {{"]
            body += ["      " + x for x in _ep_vector(spec, ew, "m0 + i", "n0 + q", "pr + q")]
            body += ["    }", "  }", "} else {"] + ["  " + x for x in loop + scalar]
            body += ["  }", "}"]
        else:
            body += loop + scalar + ["}"]
    else:
        for i in range(tm):
            body.append(f"if (m0 + {i} < M) {{")
            body.append(f"  __global {to} *ci = c + ({I})(m0 + {i}) * scm;")
            for j in range(nv):
                for q in range(W):
                    body.append("  " + store(i, f"n0 + {j * W + q}",
                                             lane(f"part[(r * {tm} + {i}) * {nv} + {j}]", q)))
            body.append("}")
    L += subtiles(body, "      ")
    L.append("    }")
    if nt_path:
        # A and B both contiguous along K (x @ y.T, matrix @ vector): dot products with the
        # vector lanes along K, two columns of the tile at a time (12 accumulators)
        L.append("  } else {")
        body = [f"for (int j0 = 0; j0 < {tn} && n0 + j0 < N; j0 += 2) {{"]
        for j in range(2):
            body.append(f"  __global const {ts} *bc{j} = bb + ({I})(n0 + j0 + {j} < N ? "
                        f"n0 + j0 + {j} : N - 1) * sbn;")
        for i in range(tm):
            body.append("  " + " ".join(f"{accv} acc{i}_{j} = {zero};" for j in range(2)))
        body += ["  int k = k0;", f"  for (; k + {V} <= k1; k += {V}) {{"]
        for j in range(2):
            body.append(f"    __global const {ts} *bk{j} = bc{j} + k;")
            body.append(f"    const {accv} bv{j} = "
                        + vec([C.load(d, f"bk{j}", str(q)) for q in range(V)]) + ";")
        for i in range(tm):
            body.append(f"    __global const {ts} *ak{i} = a + ra{i} + k;")
            body.append(f"    const {accv} av{i} = "
                        + vec([C.load(d, f"ak{i}", str(q)) for q in range(V)]) + ";")
            for j in range(2):
                body.append("    " + _mad(spec, f"acc{i}_{j}", f"av{i}", f"bv{j}"))
        body += ["  }", "  for (; k < k1; ++k) {"]
        for j in range(2):
            body.append(f"    const {acc1} bs{j} = {_to_acc(spec, C.load(d, f'bc{j}', 'k'))};")
        for i in range(tm):
            body.append(f"    const {acc1} as{i} = "
                        f"{_to_acc(spec, C.load(d, 'a', f'ra{i} + k'))};")
            for j in range(2):
                body.append("    " + _mad(spec, f"acc{i}_{j}.s0", f"as{i}", f"bs{j}"))
        body.append("  }")
        if ep:
            # sums parked in private memory, then the epilogue once in a rolled loop
            body.append(f"  {acc1} res[{2 * tm}];")
            for i in range(tm):
                for j in range(2):
                    body.append(f"  res[{2 * i + j}] = {_hsum(f'acc{i}_{j}', V)};")
            body += [f"  for (int i = 0; i < {tm} && m0 + i < M; ++i) {{",
                     f"    __global {to} *ci = c + ({I})(m0 + i) * scm;",
                     "    for (int j = 0; j < 2; ++j)",
                     "      if (n0 + j0 + j < N) " + _ep_statement(
                         spec, "m0 + i", "n0 + j0 + j", "res[2 * i + j]"),
                     "  }"]
        else:
            for i in range(tm):
                body.append(f"  if (m0 + {i} < M) {{")
                body.append(f"    __global {to} *ci = c + ({I})(m0 + {i}) * scm;")
                for j in range(2):
                    body.append("    " + store(i, f"n0 + j0 + {j}", _hsum(f"acc{i}_{j}", V)))
                body.append("  }")
        body.append("}")
        L += subtiles(body, "    ")
    L.append("  }")
    return L


def _render_gpu(spec: GemmSpec) -> list[str]:
    I, tm, tn, bk, lx, ly = spec.index, spec.tm, spec.tn, spec.bk, spec.lx, spec.ly
    V = spec.vec
    bm, bn, nt = ly * tm, lx * tn, lx * ly
    d = spec.dtype
    acc = _acc_ctype(spec)
    zero = f"({acc})(0)" if dkind(spec.dtype) != "c" else f"({acc})(0, 0)"
    if (bm * bk) % nt or (bn * bk) % nt or tm % V or tn % V:
        raise ValueError(f"inconsistent GEMM tile shape {spec}")
    na, nb = bm * bk // nt, bn * bk // nt        # tile elements each item loads
    # Local reads as vectors of V values (real dtypes): an item's rows are V consecutive ones
    # in each of tm/V groups spaced ly*V apart (likewise columns), so a warp reads a few
    # broadcast A vectors and consecutive B vectors. V == 1 pads rows by one element (loads
    # along K would otherwise hit one bank); V > 1 pads by V to keep the vectors aligned.
    pad = V
    vl = V > 1 and dkind(d) != "c"
    L = [
        f"  __local {acc} As[2][{bk}][{bm + pad}] __attribute__((aligned(16)));",
        f"  __local {acc} Bs[2][{bk}][{bn + pad}] __attribute__((aligned(16)));",
        "  const int tx = get_local_id(0), ty = get_local_id(1);",
        f"  const int tid = ty * {lx} + tx;",
        f"  const int bm0 = get_group_id(1) * {bm}, bn0 = get_group_id(0) * {bn};",
    ] + _prologue(spec, "get_group_id(2)", to=_out_ctype(spec))
    for i in range(tm):
        L.append("  " + " ".join(f"{acc} acc{i}_{j} = {zero};" for j in range(tn)))
    # 16-byte vectors along each operand's unit stride when every offset is aligned to them
    # (a uniform branch to a second copy of the main loop): A along K (row-major, scattered
    # to the [k][m] tile) or along M (stored whole), B along N (stored whole) or along K
    LV = 16 // d.itemsize if dkind(d) != "c" else 1
    fast = (LV > 1 and (bm * bk) % (nt * LV) == 0 and (bn * bk) % (nt * LV) == 0
            and (bm + pad) % LV == 0 and (bn + pad) % LV == 0)
    m = LV - 1
    L += [
        "  // consecutive items load consecutive addresses: along K when that is A's unit",
        "  // stride (row-major A), along M otherwise; likewise along N or K for B",
        "  const int a_along_k = sak == 1, b_along_n = sbn == 1 || sbk != 1;",
    ]
    if fast:
        L += [f"  const int a_k4 = sak == 1 && "
              f"((a_off | sam | sab0 | sab1 | K | kchunk) & {m}) == 0;",
              f"  const int a_m4 = !a_k4 && sam == 1 && "
              f"((a_off | sak | sab0 | sab1 | M) & {m}) == 0;",
              f"  const int b_n4 = sbn == 1 && ((b_off | sbk | sbb0 | sbb1 | N) & {m}) == 0;",
              f"  const int b_k4 = !b_n4 && sbk == 1 && "
              f"((b_off | sbn | sbb0 | sbb1 | K | kchunk) & {m}) == 0;"]

    def row(i: int, l: int) -> str:
        return f"{(i // V) * l * V + i % V}"

    def compute() -> list[str]:
        out = ["  #pragma unroll", f"  for (int kk = 0; kk < {bk}; ++kk) {{"]
        if vl:
            vt = f"{acc}{V}"
            for g in range(tm // V):
                out.append(f"    const {vt} avv{g} = *(__local const {vt} *)"
                           f"(&As[buf][kk][ty * {V} + {g * ly * V}]);")
            for g in range(tn // V):
                out.append(f"    const {vt} bvv{g} = *(__local const {vt} *)"
                           f"(&Bs[buf][kk][tx * {V} + {g * lx * V}]);")
            for i in range(tm):
                out.append(f"    const {acc} av{i} = avv{i // V}.s{i % V:x};")
            for j in range(tn):
                out.append(f"    const {acc} bv{j} = bvv{j // V}.s{j % V:x};")
        else:
            for i in range(tm):
                out.append(f"    const {acc} av{i} = As[buf][kk][ty * {V} + {row(i, ly)}];")
            for j in range(tn):
                out.append(f"    const {acc} bv{j} = Bs[buf][kk][tx * {V} + {row(j, lx)}];")
        for i in range(tm):
            for j in range(tn):
                out.append("    " + _mad(spec, f"acc{i}_{j}", f"av{i}", f"bv{j}"))
        return out + ["  }"]

    def mainloop(setup, fetch, put) -> list[str]:
        out = setup + ["int buf = 0;"] + fetch("k0")
        # one barrier per K step: two local buffers, the next step's tile is fetched into
        # registers while this one is being multiplied
        out += [f"for (int kt = k0; kt < k1; kt += {bk}) {{"] + ["  " + x for x in put()]
        out += ["  barrier(CLK_LOCAL_MEM_FENCE);", f"  if (kt + {bk} < k1) {{"]
        out += ["    " + x for x in fetch(f"kt + {bk}")] + ["  }"]
        return out + compute() + ["  buf ^= 1;", "}"]

    # Element path (layouts without aligned unit strides): copied straight to the other local
    # buffer, in loops kept rolled: unrolled, their loop-invariant offsets would be hoisted
    # into registers that the whole kernel (both paths) then pays for. Rows (columns) past
    # the edge read the last one (never stored); only the K edge reads zeros.
    def copy(kt: str, dst: str) -> list[str]:
        out = []
        for name, big, along, g0, G, sg, sk, ptr, T in (
                ("a", bm, "a_along_k", "bm0", "M", "sam", "sak", "a", "As"),
                ("b", bn, "!b_along_n", "bn0", "N", "sbn", "sbk", "bb", "Bs")):
            ld = _to_acc(spec, C.load(d, ptr, f"({I})min({g0} + r, {G} - 1) * {sg} + "
                                              f"({I})(kc + k) * {sk}"))
            out += ["#pragma unroll 1", f"for (int e = tid; e < {big * bk}; e += {nt}) {{",
                    f"  const int r = {along} ? e / {bk} : e % {big};",
                    f"  const int k = {along} ? e % {bk} : e / {big};",
                    f"  {T}[{dst}][k][r] = kc + k < k1 ? {ld} : {zero};", "}"]
        return [f"{{ const int kc = {kt};"] + ["  " + x for x in out] + ["}"]

    general = (["int buf = 0;"] + copy("k0", "0") +
               [f"for (int kt = k0; kt < k1; kt += {bk}) {{",
                "  barrier(CLK_LOCAL_MEM_FENCE);",
                f"  if (kt + {bk} < k1) {{"] + ["    " + x for x in copy(f"kt + {bk}", "buf ^ 1")]
               + ["  }"] + compute() + ["  buf ^= 1;", "}"])
    if fast:
        vt = f"{acc}{LV}"
        fa, fb = na // LV, nb // LV
        vops = (("a", fa, bm, "a_k4", "bm0", "M", "sam", "sak", "a", "As"),
                ("b", fb, bn, "b_k4", "bn0", "N", "sbn", "sbk", "bb", "Bs"))
        vsetup = []
        for name, cnt, big, along, g0, G, sg, sk, ptr, _ in vops:
            for r in range(cnt):
                e = f"(tid + {r * nt})"
                # along K: a row (column) per item, LV consecutive k; else LV rows at one k
                vsetup += [f"const int {name}r{r} = {along} ? {e} / {bk // LV} : "
                           f"({e} % {big // LV}) * {LV};",
                           f"const int {name}k{r} = {along} ? ({e} % {bk // LV}) * {LV} : "
                           f"{e} / {big // LV};",
                           f"const {I} {name}o{r} = ({I})min({g0} + {name}r{r}, {G} - "
                           f"({along} ? 1 : {LV})) * {sg} + ({I}){name}k{r} * {sk};",
                           f"{vt} {name}x{r};"]

        def vfetch(kt: str) -> list[str]:
            out = []
            for name, cnt, _, _, _, _, _, sk, ptr, _ in vops:
                for r in range(cnt):
                    ld = _to_acc(spec, f"*(__global const {C.compute_ctype(d, LV)} *)"
                                       f"({ptr} + {name}o{r} + ({I})({kt}) * {sk})", LV)
                    out.append(f"{name}x{r} = {kt} + {name}k{r} < k1 ? {ld} : ({vt})(0);")
            return out

        def vput() -> list[str]:
            out = []
            for name, cnt, _, along, _, _, _, _, _, T in vops:
                for r in range(cnt):
                    out.append(f"if ({along}) {{ " + " ".join(
                        f"{T}[buf][{name}k{r} + {q}][{name}r{r}] = {name}x{r}.s{q:x};"
                        for q in range(LV)) + f" }} else *(__local {vt} *)"
                        f"(&{T}[buf][{name}k{r}][{name}r{r}]) = {name}x{r};")
            return out

        L += ["  if ((a_k4 || a_m4) && (b_n4 || b_k4)) {"]
        L += ["    " + x for x in mainloop(vsetup, vfetch, vput)]
        L += ["  } else {"] + ["    " + x for x in general] + ["  }"]
    else:
        L += ["  {"] + ["    " + x for x in general] + ["  }"]
    for i in range(tm):
        r = f"bm0 + ty * {V} + {row(i, ly)}"
        L.append(f"  if ({r} < M) {{")
        L.append(f"    __global {_out_ctype(spec)} *ci = c + ({I})({r}) * scm;")
        for j in range(tn):
            cc = f"bn0 + tx * {V} + {row(j, lx)}"
            L.append(f"    if ({cc} < N) " + _ep_statement(spec, r, cc, f"acc{i}_{j}"))
        L.append("  }")
    return L
