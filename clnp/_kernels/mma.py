"""Render GEMM kernels that use NVIDIA tensor cores through inline PTX ``mma.sync``.

NVIDIA's OpenCL compiler accepts ``asm volatile(...)`` with PTX, so on devices of compute
capability 8.0 and newer a warp can issue

* ``mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32`` (float16 operands, float32 sums), the
  same with ``.bf16`` (bfloat16 operands: the same 16-bit data movement, only the MMA's type
  differs), and
* ``mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32`` (float32 operands rounded to TF32 by
  ``cvt.rna.tf32.f32``: 10 mantissa bits, float32 sums; opt-in, see
  ``clnp.set_matmul_precision``).

The kernels take exactly the arguments of ``clnp._kernels.gemm`` (sizes, element offsets,
strides, two batch dims, split-K ``parts``), so they read transposed, sliced and broadcast
operands in place. A work-group of ``(bm / wm) * (bn / wn)`` warps computes a ``bm x bn`` tile
of C; each warp owns a ``wm x wn`` part of it, i.e. ``wm/16 x wn/8`` MMA tiles whose
accumulators live in registers, so every A fragment serves ``wn/8`` MMAs and every B fragment
``wm/16``. K is walked in ``bk``-deep tiles staged in a ring of ``stages`` local buffers,
A as ``[m][k]`` rows and B as ``[k][n]`` rows (the layouts of row-major operands):

* global -> local: row-major, 16-byte aligned operands are copied by ``cp.async`` (16 bytes
  per instruction, zero-filled past the edges, no registers), ``stages - 1`` tiles ahead of
  the MMAs, one barrier per tile. Other layouts (uniform run-time branches) are loaded into
  registers, as 16-byte vectors along a unit stride when aligned, else element by element,
  and stored to the same local layout.
* local -> registers: ``ldmatrix`` loads four 8x8 16-bit matrices per instruction: an A
  fragment (for TF32, a 16x8 block of 32-bit values read as 16-bit pairs) and, with
  ``.trans``, two float16 B fragments; TF32 B values are single 32-bit reads. Those reads hit
  distinct banks either with rows padded by 16 bytes (A) and 8 elements (B), or (``swz``)
  with unpadded rows whose 16-byte chunks are permuted: chunk ``c`` of row ``r`` is stored at
  ``c ^ f(r)`` (XOR swizzle), which leaves local memory for a deeper copy ring.

``ldmatrix`` and ``cp.async`` take 32-bit shared-window addresses: a ``__local`` pointer cast
to an integer is one.

Launch: global ``(ceil(N/bn) * nt, ceil(M/bm), batch * parts)``, local ``(nt, 1, 1)`` with
``nt = 32 * warps``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._runtime import dtypes as dt
from . import ctypes as C
from .gemm import _prologue, _signature

F16 = np.dtype(np.float16)
BF16 = dt.bfloat16
F32 = np.dtype(np.float32)
HALVES = (F16, BF16)         # 16-bit operands: m16n8k16 MMAs, ldmatrix of 16-bit rows


@dataclass(frozen=True)
class MmaSpec:
    dtype: np.dtype          # operands: float16/bfloat16 (16-bit MMA) or float32 (TF32 MMA)
    out: np.dtype            # C: float32, or the operands' 16-bit dtype rounded from the sums
    bm: int = 128            # work-group tile along M
    bn: int = 128            # work-group tile along N
    bk: int = 32             # K tile staged in local memory
    wm: int = 64             # warp tile along M (multiple of 16)
    wn: int = 32             # warp tile along N (multiple of 16)
    stages: int = 2          # local buffers in the copy ring (tiles in flight + 1)
    swz: bool = False        # XOR-swizzled local rows instead of padded ones
    index: str = "int"       # "int" when every offset fits in 31 bits

    kind = "mma"

    @property
    def threads(self) -> int:
        return 32 * (self.bm // self.wm) * (self.bn // self.wn)

    @property
    def ks(self) -> int:
        """K of one MMA instruction."""
        return 16 if self.dtype in HALVES else 8

    @property
    def lv(self) -> int:
        """Elements per 16-byte copy."""
        return 16 // self.dtype.itemsize

    @property
    def sa(self) -> int:
        """Row stride of A's local ``[m][k]`` tile: 16 bytes of padding make it an odd number
        of 16-byte units, so the 8 rows an ``ldmatrix`` phase reads hit distinct banks."""
        return self.bk if self.swz else self.bk + self.lv

    @property
    def sb(self) -> int:
        """Row stride of B's local ``[k][n]`` tile: +8 elements (an odd number of 16-byte
        units for float16 rows; 8 banks apart for the TF32 reads of rows k..k+3)."""
        return self.bn if self.swz else self.bn + 8

    def local_bytes(self) -> int:
        return self.stages * (self.bm * self.sa + self.bk * self.sb) * self.dtype.itemsize

    def check(self) -> None:
        """Raise ValueError unless the tile shapes fit together."""
        nt = self.threads
        ok = (self.dtype in (F16, BF16, F32) and self.out in (F16, BF16, F32)
              and self.bm % self.wm == 0 and self.bn % self.wn == 0
              and self.wm % 16 == 0 and self.wn % 16 == 0 and self.bk % self.ks == 0
              and self.bn % 32 == 0 and self.stages >= 2
              and (self.bm * self.bk) % (nt * self.lv) == 0
              and (self.bn * self.bk) % (nt * self.lv) == 0 and nt <= 1024
              # swizzled rows: a power-of-two number of 16-byte chunks
              and (not self.swz or (self.bk // self.lv) & (self.bk // self.lv - 1) == 0))
        if not ok:
            raise ValueError(f"inconsistent MMA tile shape {self}")


def render_mma(spec: MmaSpec) -> tuple[str, str, list]:
    """Return ``(source, kernel_name, scalar_arg_dtypes)`` for ``spec`` (see the module
    docstring for the launch geometry)."""
    spec.check()
    f16 = spec.dtype in HALVES
    et = "ushort" if f16 else "float"        # a global element as the kernel reads it
    ot = C.storage_ctype(spec.out)
    params, argtypes = _signature(spec, ti=et, to=ot)
    nt = spec.threads
    head = [f"// clnp mma gemm {spec}"]
    if not f16:
        head += ["inline uint clnp_tf32(const uint x)", "{",
                 "  uint r;",
                 '  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(as_float(x)));',
                 "  return r;", "}"]
    lines = head + [f"__kernel __attribute__((reqd_work_group_size({nt}, 1, 1))) "
                    "void clnp_gemm(" + ",\n    ".join(params) + ")\n{"]
    lines += _body(spec, et) + ["}"]
    return "\n".join(lines), "clnp_gemm", argtypes


def _mma(spec: MmaSpec, acc: str, a: str, b: str) -> str:
    """One MMA statement: ``acc<q>`` (4 floats) += A fragment ``a<q>`` x B fragment ``b<q>``."""
    if spec.dtype in HALVES:
        t = "bf16" if spec.dtype == BF16 else "f16"
        op = f"mma.sync.aligned.m16n8k16.row.col.f32.{t}.{t}.f32"
    else:
        op = "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"
    outs = ", ".join(f'"+f"({acc}_{q})' for q in range(4))
    ins = ", ".join([f'"r"({a}_{q})' for q in range(4)] + [f'"r"({b}_{q})' for q in range(2)])
    # not volatile: the outputs order it, and the compiler may schedule it among the loads
    return (f'asm("{op} {{%0, %1, %2, %3}}, {{%4, %5, %6, %7}}, {{%8, %9}}, '
            f'{{%0, %1, %2, %3}};" : {outs} : {ins});')


def _ldmatrix(regs: list[str], addr: str, trans: bool = False) -> str:
    op = "ldmatrix.sync.aligned.m8n8.x4" + (".trans" if trans else "") + ".shared.b16"
    outs = ", ".join(f'"=r"({r})' for r in regs)
    return (f'asm volatile("{op} {{%0, %1, %2, %3}}, [%4];" : {outs} : "r"({addr}) '
            f': "memory");')


def _body(spec: MmaSpec, et: str) -> list[str]:
    I, bm, bn, bk, wm, wn, S = (spec.index, spec.bm, spec.bn, spec.bk, spec.wm, spec.wn,
                                spec.stages)
    f16 = spec.dtype in HALVES                 # 16-bit operands (float16 or bfloat16)
    nt, SA, SB, LV, KS = spec.threads, spec.sa, spec.sb, spec.lv, spec.ks
    esz = spec.dtype.itemsize
    lt = "ushort" if f16 else "uint"           # a local element: half bits / float bits
    na, nb = bm * bk // nt // LV, bn * bk // nt // LV    # 16-byte chunks of each tile per item
    mt, ntl = wm // 16, wn // 8                  # MMA tiles per warp along M and N
    vt = "uint4"                                 # a 16-byte chunk in registers
    swz, lg = spec.swz, LV.bit_length() - 1

    def xor(chunks: int, row: str) -> str:
        """The swizzle ``f(row)`` of a tile with ``chunks`` 16-byte chunks per row: the 8
        rows read together (at one logical chunk) land in 8 distinct 16-byte bank groups."""
        cm = min(chunks, 8)
        return f"((({row}) >> {(8 // cm).bit_length() - 1}) & {cm - 1})"

    def fb(row: str) -> str:
        # TF32 B is read 4 rows x 2 chunks at a time: rows 2 chunks apart
        return xor(bn // LV, row) if f16 else f"((({row}) << 1) & 7)"

    def a_at(row: str, kk: str) -> str:
        """Element index of A(row, kk) in a local stage."""
        if not swz:
            return f"({row}) * {SA} + ({kk})"
        return (f"({row}) * {SA} + (((({kk}) >> {lg}) ^ {xor(bk // LV, row)}) << {lg}) + "
                f"(({kk}) & {LV - 1})")

    def b_at(kk: str, col: str) -> str:
        """Element index of B(kk, col) in a local stage."""
        if not swz:
            return f"({kk}) * {SB} + ({col})"
        return (f"({kk}) * {SB} + (((({col}) >> {lg}) ^ {fb(kk)}) << {lg}) + "
                f"(({col}) & {LV - 1})")

    def bits(x: str) -> str:                     # a global element as local bits
        return x if f16 else f"as_uint({x})"

    L = [
        f"  __local {lt} As[{S}][{bm * SA}] __attribute__((aligned(16)));",
        f"  __local {lt} Bs[{S}][{bk * SB}] __attribute__((aligned(16)));",
        "  const int tid = get_local_id(0), lane = tid & 31, warp = tid >> 5;",
        "  const int g = lane >> 2, t = lane & 3;",
        f"  const int wm0 = (warp / {bn // wn}) * {wm}, wn0 = (warp % {bn // wn}) * {wn};",
        f"  const int bm0 = get_group_id(1) * {bm}, bn0 = get_group_id(0) * {bn};",
        "  const uint sa = (uint)(size_t)(&As[0][0]), sb = (uint)(size_t)(&Bs[0][0]);",
    ] + _prologue(spec, "get_group_id(2)", ti=et, to=C.storage_ctype(spec.out))
    m = LV - 1
    L += [
        "  // 16-byte copies along a unit stride when every offset is aligned to them",
        f"  const int va = sak == 1 && ((a_off | sam | sab0 | sab1 | K | kchunk) & {m}) == 0;",
        f"  const int vbn = sbn == 1 && ((b_off | sbk | sbb0 | sbb1 | N) & {m}) == 0;",
        f"  const int vbk = !vbn && sbk == 1 && "
        f"((b_off | sbn | sbb0 | sbb1 | K | kchunk) & {m}) == 0;",
        "  const int a_along_k = sak == 1, b_along_n = sbn == 1 || sbk != 1;",
        f"  const int nk = (k1 - k0 + {bk - 1}) / {bk};",
    ]
    for i in range(mt):
        for j in range(ntl):
            L.append("  " + " ".join(f"float c{i}_{j}_{q} = 0.0f;" for q in range(4)))

    def copy_async(dst: str, src: str, ok: str) -> list[str]:
        return [f'  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: '
                f'"r"({dst}), "l"({src}), "r"({ok} ? 16 : 0) : "memory");']

    def fill(stage: str, kt: str) -> list[str]:
        """Statements that copy the K tile starting at ``kt`` into local buffer ``stage``."""
        out = [f"const int kt = {kt};"]
        # A: [m][k] rows; chunks of LV elements along K
        out.append("if (va) {")
        for r in range(na):
            e = f"(tid + {r * nt})"
            out += [f"  {{ const int rr = {e} / {bk // LV}, kk = ({e} % {bk // LV}) * {LV};",
                    "    const int gr = bm0 + rr, gk = kt + kk, ok = gr < M && gk < k1;",
                    f"    __global const {et} *src = a + (ok ? ({I})gr * sam + gk : 0);"]
            out += ["  " + x for x in copy_async(
                f"sa + (uint)(({stage} * {bm * SA} + {a_at('rr', 'kk')}) * {esz})",
                "(ulong)src", "ok")]
            out.append("  }")
        # the slow paths are loops kept rolled: unrolled, their loop-invariant addresses
        # would be hoisted into registers that the whole kernel then pays for
        out += ["} else {", "  #pragma unroll 1",
                f"  for (int e = tid; e < {bm * bk}; e += {nt}) {{",
                f"    const int rr = a_along_k ? e / {bk} : e % {bm};",
                f"    const int kk = a_along_k ? e % {bk} : e / {bm};",
                "    const int gr = bm0 + rr, gk = kt + kk;",
                f"    As[{stage}][{a_at('rr', 'kk')}] = (gr < M && gk < k1) ? "
                f"{bits(f'a[({I})gr * sam + ({I})gk * sak]')} : 0;",
                "  }", "}"]
        # B: [k][n] rows; chunks along N (row-major B) or K (scattered to the rows)
        out.append("if (vbn) {")
        for r in range(nb):
            e = f"(tid + {r * nt})"
            out += [f"  {{ const int kk = {e} / {bn // LV}, rr = ({e} % {bn // LV}) * {LV};",
                    "    const int gk = kt + kk, gn = bn0 + rr, ok = gn < N && gk < k1;",
                    f"    __global const {et} *src = bb + (ok ? ({I})gk * sbk + gn : 0);"]
            out += ["  " + x for x in copy_async(
                f"sb + (uint)(({stage} * {bk * SB} + {b_at('kk', 'rr')}) * {esz})",
                "(ulong)src", "ok")]
            out.append("  }")
        out += ["} else if (vbk) {", "  #pragma unroll 1",
                f"  for (int e = tid; e < {bn * bk // LV}; e += {nt}) {{",
                f"    const int rr = e / {bk // LV}, kk = (e % {bk // LV}) * {LV};",
                "    const int gn = bn0 + rr, gk = kt + kk;",
                f"    const {vt} x = (gn < N && gk < k1) ? *(__global const {vt} *)"
                f"(bb + ({I})gn * sbn + gk) : ({vt})(0);"]
        xs = [f"x.s{q}" for q in range(4)]
        if f16:        # two halves per 32-bit lane, the lower k first
            xs = [f"(ushort)(x.s{q // 2}{' >> 16' if q % 2 else ''})" for q in range(8)]
        for q in range(LV):
            out.append(f"    Bs[{stage}][{b_at(f'kk + {q}', 'rr')}] = {xs[q]};")
        out += ["  }", "} else {", "  #pragma unroll 1",
                f"  for (int e = tid; e < {bn * bk}; e += {nt}) {{",
                f"    const int rr = b_along_n ? e % {bn} : e / {bk};",
                f"    const int kk = b_along_n ? e / {bn} : e % {bk};",
                "    const int gn = bn0 + rr, gk = kt + kk;",
                f"    Bs[{stage}][{b_at('kk', 'rr')}] = (gn < N && gk < k1) ? "
                f"{bits(f'bb[({I})gk * sbk + ({I})gn * sbn]')} : 0;",
                "  }", "}"]
        return out

    commit = '  asm volatile("cp.async.commit_group;" ::: "memory");'
    L += [f"  for (int j = 0; j < {S - 1}; ++j) {{", "    if (j < nk) {"]
    L += ["      " + x for x in fill("j", f"k0 + j * {bk}")]
    L += ["    }", "  " + commit, "  }"]
    if swz:
        # per-lane byte offsets of the fragments' rows and (permuted) chunks in a stage: A
        # rows wm0 + (lane & 15), chunk 2 s + (lane >> 4) of K step s (the XOR of a row
        # repeats every 16 rows); float16 B rows lane & 15, chunks of columns
        # wn0 + 16 jj + (lane >> 4) * 8; TF32 B columns wn0 + 8 j + g of rows t (+ 4 q)
        L.append("  const int arow = wm0 + (lane & 15);")
        for s in range(bk // KS):
            L.append(f"  const uint la{s} = sa + (uint)((arow * {SA} + ((({2 * s} + (lane >> 4)) "
                     f"^ {xor(bk // LV, 'arow')}) << {lg})) * {esz});")
        if f16:
            for jj in range(ntl // 2):
                L.append(f"  const uint lb{jj} = sb + (uint)(((lane & 15) * {SB} + "
                         f"((((wn0 >> 3) + (lane >> 4) + {2 * jj}) ^ {fb('lane & 15')}) << 3)) "
                         f"* 2);")
        else:
            for j in range(ntl):
                L.append(f"  const int bc{j} = ((((wn0 + {8 * j} + g) >> 2) ^ (t << 1)) << 2) "
                         f"+ (g & 3);")
    L += [f"  int rs = 0, ws = {S - 1};", "  for (int i = 0; i < nk; ++i) {",
          f'    asm volatile("cp.async.wait_group {S - 2};" ::: "memory");',
          "    barrier(CLK_LOCAL_MEM_FENCE);",
          f"    if (i + {S - 1} < nk) {{"]
    L += ["      " + x for x in fill("ws", f"k0 + (i + {S - 1}) * {bk}")]
    L += ["    }", "  " + commit]
    if swz:
        L.append(f"    const uint ra = (uint)(rs * {bm * SA * esz});")
        if f16:
            L.append(f"    const uint rb = (uint)(rs * {bk * SB * esz});")
        else:
            L.append(f"    __local const uint *lb = &Bs[rs][t * {SB}];")
    else:
        # per-lane ldmatrix row addresses: A rows wm0 + (lane & 15), K half (lane >> 4);
        # float16 B rows k = lane & 15, columns wn0 + (lane >> 4) * 8
        L.append(f"    const uint la = sa + (uint)((rs * {bm * SA} + (wm0 + (lane & 15)) * "
                 f"{SA} + (lane >> 4) * {KS // 2}) * {esz});")
        if f16:
            L.append(f"    const uint lb = sb + (uint)((rs * {bk * SB} + (lane & 15) * {SB} + "
                     f"wn0 + (lane >> 4) * 8) * {esz});")
        else:
            L.append(f"    __local const uint *lb = &Bs[rs][t * {SB} + wn0 + g];")
    for s in range(bk // KS):
        k = s * KS
        for i in range(mt):
            regs = [f"a{s}_{i}_{q}" for q in range(4)]
            L.append("    uint " + ", ".join(regs) + ";")
            addr = (f"la{s} + ra + {i * 16 * SA * esz}" if swz else
                    f"la + {(i * 16 * SA + k) * esz}")
            L.append("    " + _ldmatrix(regs, addr))
            if not f16:
                L += [f"    {r} = clnp_tf32({r});" for r in regs]
        if f16:
            for jj in range(ntl // 2):
                regs = [f"b{s}_{2 * jj + p}_{q}" for p in range(2) for q in range(2)]
                L.append("    uint " + ", ".join(regs) + ";")
                addr = (f"lb{jj} + rb + {k * SB * esz}" if swz else
                        f"lb + {(k * SB + jj * 16) * esz}")
                L.append("    " + _ldmatrix(regs, addr, True))
        else:
            for j in range(ntl):
                for q in range(2):
                    idx = (f"{(k + 4 * q) * SB} + bc{j}" if swz else
                           f"{(k + 4 * q) * SB + j * 8}")
                    L.append(f"    const uint b{s}_{j}_{q} = clnp_tf32(lb[{idx}]);")
        for i in range(mt):
            for j in range(ntl):
                L.append("    " + _mma(spec, f"c{i}_{j}", f"a{s}_{i}", f"b{s}_{j}"))
    L += [f"    rs = rs == {S - 1} ? 0 : rs + 1;", f"    ws = ws == {S - 1} ? 0 : ws + 1;",
          "  }"]
    for i in range(mt):
        for j in range(ntl):
            for q in range(4):
                r = f"bm0 + wm0 + {i * 16 + (8 if q >= 2 else 0)} + g"
                col = f"bn0 + wn0 + {j * 8} + t * 2 + {q & 1}"
                L.append(f"  if ({r} < M && {col} < N) " + C.store(
                    spec.out, "c", f"({I})({r}) * scm + ({I})({col}) * scn", f"c{i}_{j}_{q}"))
    return L
