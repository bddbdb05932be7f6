"""Render GEMM kernels that use NVIDIA tensor cores through inline PTX ``mma.sync``.

NVIDIA's OpenCL compiler accepts ``asm volatile(...)`` with PTX, so on devices of compute
capability 8.0 and newer a warp can issue

* ``mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32`` (float16 operands, float32 sums) and
* ``mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32`` (float32 operands rounded to TF32 by
  ``cvt.rna.tf32.f32``: 10 mantissa bits, float32 sums; opt-in, see
  ``clnp.set_matmul_precision``).

The kernels take exactly the arguments of ``clnp._codegen.gemm`` (sizes, element offsets,
strides, two batch dims, split-K ``parts``), so they read transposed, sliced and broadcast
operands in place. A work-group of ``(bm / wm) * (bn / wn)`` warps computes a ``bm x bn`` tile
of C; each warp owns a ``wm x wn`` part of it, i.e. ``wm/16 x wn/8`` MMA tiles whose
accumulators live in registers. K is walked in ``bk``-deep steps staged in local memory,
A as ``[m][k]`` rows and B as ``[k][n]`` rows, the layouts of row-major operands, so that
16-byte vectors loaded along their unit stride are stored whole (other layouts store element
by element). An A fragment register (two halves, or one TF32 value) is one 32-bit local
read; a float16 B register packs two 16-bit reads ((k, n) and (k + 1, n)). Rows are padded so
that the 32 lanes of a fragment read hit 32 different banks. Two local buffers and a register
copy of the next step's tile: one barrier per step, the next tile's global loads in flight
during the MMAs. Global loads are 16-byte vectors along whichever dim of an operand has unit
stride when the offsets and strides are aligned (a uniform run-time branch), single elements
otherwise.

Launch: global ``(ceil(N/bn) * nt, ceil(M/bm), batch * parts)``, local ``(nt, 1, 1)`` with
``nt = 32 * warps``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import ctypes as C
from .gemm import _prologue, _signature

F16 = np.dtype(np.float16)
F32 = np.dtype(np.float32)


@dataclass(frozen=True)
class MmaSpec:
    dtype: np.dtype          # operands: float16 (f16 MMA) or float32 (TF32 MMA)
    out: np.dtype            # C: float32, or float16 rounded from the float32 sums
    bm: int = 128            # work-group tile along M
    bn: int = 128            # work-group tile along N
    bk: int = 32             # K step staged in local memory
    wm: int = 64             # warp tile along M (multiple of 16)
    wn: int = 32             # warp tile along N (multiple of 8)
    index: str = "int"       # "int" when every offset fits in 31 bits

    kind = "mma"

    @property
    def threads(self) -> int:
        return 32 * (self.bm // self.wm) * (self.bn // self.wn)

    @property
    def ks(self) -> int:
        """K of one MMA instruction."""
        return 16 if self.dtype == F16 else 8

    @property
    def lv(self) -> int:
        """Elements per 16-byte global vector load."""
        return 16 // self.dtype.itemsize

    @property
    def sa(self) -> int:
        """Row stride of A's local ``[m][k]`` tile: +8 halves / +4 words puts the 32 lanes of
        a fragment read on 32 different banks and keeps rows 16-byte aligned."""
        return self.bk + (8 if self.dtype == F16 else 4)

    @property
    def sb(self) -> int:
        """Row stride of B's local ``[k][n]`` tile (+8 elements, for the same reasons)."""
        return self.bn + 8

    def local_bytes(self) -> int:
        return 2 * (self.bm * self.sa + self.bk * self.sb) * self.dtype.itemsize

    def check(self) -> None:
        """Raise ValueError unless the tile shapes fit together."""
        nt = self.threads
        ok = (self.dtype in (F16, F32) and self.out in (F16, F32)
              and self.bm % self.wm == 0 and self.bn % self.wn == 0
              and self.wm % 16 == 0 and self.wn % 8 == 0 and self.bk % self.ks == 0
              and self.bn % 32 == 0
              and (self.bm * self.bk) % (nt * self.lv) == 0
              and (self.bn * self.bk) % (nt * self.lv) == 0 and nt <= 1024)
        if not ok:
            raise ValueError(f"inconsistent MMA tile shape {self}")


def render_mma(spec: MmaSpec) -> tuple[str, str, list]:
    """Return ``(source, kernel_name, scalar_arg_dtypes)`` for ``spec`` (see the module
    docstring for the launch geometry)."""
    spec.check()
    f16 = spec.dtype == F16
    et = "ushort" if f16 else "float"        # a global element as the kernel reads it
    ot = C.storage_ctype(spec.out)
    params, argtypes = _signature(spec, ti=et, to=ot)
    nt = spec.threads
    head = [f"// clnp mma gemm {spec}"]
    if not f16:
        head += ["inline uint clnp_tf32(const float x)", "{",
                 "  uint r;",
                 '  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));',
                 "  return r;", "}"]
    lines = head + [f"__kernel __attribute__((reqd_work_group_size({nt}, 1, 1))) "
                    "void clnp_gemm(" + ",\n    ".join(params) + ")\n{"]
    lines += _body(spec, et) + ["}"]
    return "\n".join(lines), "clnp_gemm", argtypes


def _mma(spec: MmaSpec, acc: str, a: str, b: str) -> str:
    """One MMA statement: ``acc<q>`` (4 floats) += A fragment ``a<q>`` x B fragment ``b<q>``."""
    if spec.dtype == F16:
        op = "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
    else:
        op = "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"
    outs = ", ".join(f'"+f"({acc}_{q})' for q in range(4))
    ins = ", ".join([f'"r"({a}_{q})' for q in range(4)] + [f'"r"({b}_{q})' for q in range(2)])
    return (f'asm volatile("{op} {{%0, %1, %2, %3}}, {{%4, %5, %6, %7}}, {{%8, %9}}, '
            f'{{%0, %1, %2, %3}};" : {outs} : {ins});')


def _body(spec: MmaSpec, et: str) -> list[str]:
    I, bm, bn, bk, wm, wn = spec.index, spec.bm, spec.bn, spec.bk, spec.wm, spec.wn
    f16 = spec.dtype == F16
    nt, SA, SB, LV, KS = spec.threads, spec.sa, spec.sb, spec.lv, spec.ks
    lt = "ushort" if f16 else "uint"           # a local element: half bits / TF32 bits
    rt = f"{et}{LV}"                           # registers: one 16-byte vector each
    lv = f"{lt}{LV}"
    na, nb = bm * bk // nt // LV, bn * bk // nt // LV    # vectors of each tile per item
    mt, ntl = wm // 16, wn // 8                  # MMA tiles per warp along M and N

    def cv(x: str) -> str:                       # a register vector as local elements
        if f16:
            return x
        return f"(uint4)(" + ", ".join(f"clnp_tf32({x}.s{q})" for q in range(4)) + ")"

    def cv1(x: str) -> str:
        return x if f16 else f"clnp_tf32({x})"

    L = [
        f"  __local {lt} As[2][{bm * SA}] __attribute__((aligned(16)));",
        f"  __local {lt} Bs[2][{bk * SB}] __attribute__((aligned(16)));",
        "  const int tid = get_local_id(0), lane = tid & 31, warp = tid >> 5;",
        "  const int g = lane >> 2, t = lane & 3;",
        f"  const int wm0 = (warp / {bn // wn}) * {wm}, wn0 = (warp % {bn // wn}) * {wn};",
        f"  const int bm0 = get_group_id(1) * {bm}, bn0 = get_group_id(0) * {bn};",
    ] + _prologue(spec, "get_group_id(2)", ti=et, to=C.storage_ctype(spec.out))
    m = LV - 1
    L += [
        "  // 16-byte vector loads along a unit stride when every offset is aligned to them",
        f"  const int va = sak == 1 && ((a_off | sam | sab0 | sab1 | K | kchunk) & {m}) == 0;",
        f"  const int vbn = sbn == 1 && ((b_off | sbk | sbb0 | sbb1 | N) & {m}) == 0;",
        f"  const int vbk = !vbn && sbk == 1 && "
        f"((b_off | sbn | sbb0 | sbb1 | K | kchunk) & {m}) == 0;",
        "  const int a_along_k = sak == 1, b_along_n = sbn == 1 || sbk != 1;",
    ]
    L += [f"  {rt} ax{r};" for r in range(na)] + [f"  {rt} bx{r};" for r in range(nb)]
    for i in range(mt):
        for j in range(ntl):
            L.append("  " + " ".join(f"float c{i}_{j}_{q} = 0.0f;" for q in range(4)))

    def tile(name: str, cnt: int, outer: int, g0: str, G: str, ptr: str, sg: str, sk: str,
             local_at, contiguous: str, vec_cases: list[tuple[str, bool]], along_k: str,
             kt: str, fetch: bool) -> list[str]:
        """Statements that fetch (global -> registers) or put (registers -> local) one
        operand's tile: one branch per vector layout, then the element-wise fallback.
        ``local_at(row, k)`` is a local index; ``contiguous`` names the local tile's
        contiguous dim ("k" or "row"), along which a register vector is stored whole."""
        X, local = f"{name}x", ("As" if name == "a" else "Bs")
        out: list[str] = []
        for n, (cond, inner_k) in enumerate(vec_cases):
            out.append(("if" if n == 0 else "} else if") + f" ({cond}) {{")
            for r in range(cnt):
                e = f"(tid + {r * nt})"
                if inner_k:
                    rr, kk = f"{e} / {bk // LV}", f"({e} % {bk // LV}) * {LV}"
                else:
                    rr, kk = f"({e} % {outer // LV}) * {LV}", f"{e} / {outer // LV}"
                out.append(f"  {{ const int rr = {rr}, kk = {kk};")
                if fetch:
                    out.append(f"    const int gr = {g0} + rr, gk = {kt} + kk;")
                    vec = f"*(__global const {'uint4' if f16 else 'float4'} *)" \
                          f"({ptr} + ({I})gr * {sg} + ({I})gk * {sk})"
                    if f16:
                        vec = f"as_ushort8({vec})"
                    out.append(f"    {X}{r} = (gr < {G} && gk < k1) ? {vec} : ({rt})(0);")
                elif (contiguous == "k") == inner_k:
                    out.append(f"    *(__local {lv} *)(&{local}[buf][{local_at('rr', 'kk')}]) "
                               f"= {'as_ushort8' if f16 else ''}({cv(f'{X}{r}')});")
                else:
                    for q in range(LV):
                        at = local_at("rr", f"kk + {q}") if inner_k else \
                            local_at(f"rr + {q}", "kk")
                        out.append(f"    {local}[buf][{at}] = {cv1(f'{X}{r}.s{q:x}')};")
                out.append("  }")
        out.append("} else {" if vec_cases else "{")
        for r in range(cnt * LV):
            e = f"(tid + {r * nt})"
            rr = f"({along_k} ? {e} / {bk} : {e} % {outer})"
            kk = f"({along_k} ? {e} % {bk} : {e} / {outer})"
            reg = f"{X}{r // LV}.s{r % LV:x}"
            out.append(f"  {{ const int rr = {rr}, kk = {kk};")
            if fetch:
                out.append(f"    const int gr = {g0} + rr, gk = {kt} + kk;")
                out.append(f"    {reg} = (gr < {G} && gk < k1) ? "
                           f"{ptr}[({I})gr * {sg} + ({I})gk * {sk}] : 0;")
            else:
                out.append(f"    {local}[buf][{local_at('rr', 'kk')}] = {cv1(reg)};")
            out.append("  }")
        return out + ["}"]

    def both(kt: str, fetch: bool) -> list[str]:
        return (tile("a", na, bm, "bm0", "M", "a", "sam", "sak",
                     lambda r, k: f"({r}) * {SA} + {k}", "k", [("va", True)], "a_along_k",
                     kt, fetch) +
                tile("b", nb, bn, "bn0", "N", "bb", "sbn", "sbk",
                     lambda r, k: f"({k}) * {SB} + {r}", "row",
                     [("vbn", False), ("vbk", True)], "!b_along_n", kt, fetch))

    L += ["  int buf = 0;"] + ["  " + x for x in both("k0", True)]
    L += [f"  for (int kt = k0; kt < k1; kt += {bk}) {{"]
    L += ["    " + x for x in both("kt", False)]
    L += ["    barrier(CLK_LOCAL_MEM_FENCE);", f"    if (kt + {bk} < k1) {{"]
    L += ["      " + x for x in both(f"kt + {bk}", True)] + ["    }"]
    # A fragment registers: 32-bit words of A's [m][k] rows (two halves or one TF32 value);
    # B's: (k, n) and (k + 1, n) halves packed, or one TF32 value, from its [k][n] rows
    ko = 8 if f16 else 4                         # K offset of a fragment's second half
    tk = "t * 2" if f16 else "t"
    L.append(f"    __local const {lt} *la = As[buf], *lb = Bs[buf];")
    for s in range(bk // KS):
        k = s * KS
        for i in range(mt):
            r0 = f"(wm0 + {i * 16} + g)"
            for q, (dr, dk) in enumerate(((0, 0), (8, 0), (0, ko), (8, ko))):
                idx = f"({r0} + {dr}) * {SA} + {k + dk} + {tk}"
                L.append(f"    const uint a{s}_{i}_{q} = " +
                         (f"*(__local const uint *)(&la[{idx}]);" if f16 else f"la[{idx}];"))
        for j in range(ntl):
            n0 = f"(wn0 + {j * 8} + g)"
            for q, dk in enumerate((0, ko)):
                idx = f"({k + dk} + {tk}) * {SB} + {n0}"
                L.append(f"    const uint b{s}_{j}_{q} = " +
                         (f"(uint)lb[{idx}] | ((uint)lb[{idx} + {SB}] << 16);" if f16
                          else f"lb[{idx}];"))
        for i in range(mt):
            for j in range(ntl):
                L.append("    " + _mma(spec, f"c{i}_{j}", f"a{s}_{i}", f"b{s}_{j}"))
    L += ["    buf ^= 1;", "  }"]
    for i in range(mt):
        for j in range(ntl):
            for q in range(4):
                r = f"bm0 + wm0 + {i * 16 + (8 if q >= 2 else 0)} + g"
                col = f"bn0 + wn0 + {j * 8} + t * 2 + {q & 1}"
                L.append(f"  if ({r} < M && {col} < N) " + C.store(
                    spec.out, "c", f"({I})({r}) * scm + ({I})({col}) * scn", f"c{i}_{j}_{q}"))
    return L
