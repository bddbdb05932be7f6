"""OpenCL C spellings of clnp dtypes: storage types, compute types, loads, stores, conversions.

Storage and compute types differ for three dtypes: ``bool`` is stored as ``uchar`` and computed
as ``int`` (C truth values), ``float16`` is stored as ``half`` and computed as ``float`` (the
device need not support half arithmetic), and ``bfloat16`` is stored as ``ushort`` (the top
half of a float's bits) and computed as ``float``. float16 loads and stores convert with
integer operations (``clnp_h2f``/``clnp_f2h``, :func:`half_helpers`), exact and rounding to
nearest even like ``vload_half``/``vstore_half_rte``: PoCL calls a library routine per element
for those, which also keeps it from vectorising the kernel (3x slower than the integer form on
a plain scaled copy, measured on PoCL 3.1, AVX-512). bfloat16 loads and stores go through
``clnp_bf2f``/``clnp_f2bf`` (:func:`bfloat16_helpers`): a load shifts the bits up, a store
rounds to nearest even (a NaN becomes the quiet NaN of its sign, as ml_dtypes converts). Both
pairs are defined once, by source filters of :meth:`clnp.Device.build` that put them before
any source calling them, so eager kernels and ``clnp_grad.jit``'s fused kernels share them.
"""
from __future__ import annotations

import re

import numpy as np

_STORAGE = {
    "b": "uchar", "int8": "char", "int16": "short", "int32": "int", "int64": "long",
    "uint8": "uchar", "uint16": "ushort", "uint32": "uint", "uint64": "ulong",
    "float16": "half", "bfloat16": "ushort", "float32": "float", "float64": "double",
    "complex64": "float2", "complex128": "double2",
}


def storage_ctype(dtype: np.dtype) -> str:
    return _STORAGE["b" if dtype.kind == "b" else dtype.name]


def compute_ctype(dtype: np.dtype, width: int = 1) -> str:
    """C type used for arithmetic on values of ``dtype`` (vectorised when ``width > 1``)."""
    if dtype.kind == "b":
        base = "int"
    elif dtype.name in _HALVES:
        base = "float"
    else:
        base = _STORAGE[dtype.name]
    return base if width == 1 else f"{base}{width}"


_HALVES = ("float16", "bfloat16")   # 16-bit storage, float arithmetic


def bits_ctype(dtype: np.dtype) -> str:
    """C type that moves ``dtype``'s stored bits unchanged: the storage type, except
    ``ushort`` for float16 (dereferencing ``half`` needs ``cl_khr_fp16``)."""
    return "ushort" if dtype.name == "float16" else storage_ctype(dtype)


_UNSIGNED = {"char": "uchar", "short": "ushort", "int": "uint", "long": "ulong"}


def compute_itemsize(dtype: np.dtype) -> int:
    """Bytes of one lane of :func:`compute_ctype` (float16 and bfloat16 are computed in
    float)."""
    return 4 if dtype.name in _HALVES or dtype.kind == "b" else dtype.itemsize


def unsigned_ctype(dtype: np.dtype, width: int = 1) -> str:
    """Unsigned C type of the same width as an integer compute type ('' for other kinds)."""
    base = compute_ctype(dtype)
    u = _UNSIGNED.get(base, base if base in _UNSIGNED.values() else "")
    return u if width == 1 or not u else f"{u}{width}"


def real_ctype(dtype: np.dtype) -> str:
    """The real component type of a complex dtype (its own compute type otherwise)."""
    return {"complex64": "float", "complex128": "double"}.get(dtype.name, compute_ctype(dtype))


def scalar_arg_dtype(dtype: np.dtype) -> np.dtype:
    """NumPy dtype used to pass a scalar operand of ``dtype`` as a kernel argument."""
    if dtype.kind == "b":
        return np.dtype(np.int32)
    if dtype.name in _HALVES:
        return np.dtype(np.float32)
    return dtype


def uses_fp64(dtypes) -> bool:
    return any(d.name in ("float64", "complex128") for d in dtypes)


def load(dtype: np.dtype, ptr: str, idx: str, width: int = 1) -> str:
    """Expression loading element(s) ``ptr[idx]`` as the compute type (``ptr`` a global
    pointer)."""
    if dtype.name == "float16":
        bits = f"((__global const ushort *)({ptr}))"
        if width == 1:
            return f"clnp_h2f({bits}[{idx}])"
        return f"clnp_h2f{width}(vload{width}(0, {bits} + {idx}))"
    if dtype.name == "bfloat16":     # stored as ushort already: any address space
        if width == 1:
            return f"clnp_bf2f({ptr}[{idx}])"
        return f"clnp_bf2f{width}(vload{width}(0, {ptr} + {idx}))"
    if width > 1:
        if dtype.kind == "b":       # stored 0/1, computed as masks (_ops: vmask)
            return f"(-convert_int{width}(vload{width}(0, {ptr} + {idx})))"
        return f"vload{width}(0, {ptr} + {idx})"
    if dtype.kind == "b":
        return f"(int){ptr}[{idx}]"
    return f"{ptr}[{idx}]"


def store(dtype: np.dtype, ptr: str, idx: str, value: str, width: int = 1) -> str:
    """Statement storing a compute-type value to ``ptr[idx]``."""
    if dtype.name == "float16":
        bits = f"((__global ushort *)({ptr}))"
        if width == 1:
            return f"{bits}[{idx}] = clnp_f2h({value});"
        return f"vstore{width}(clnp_f2h{width}({value}), 0, {bits} + {idx});"
    if dtype.name == "bfloat16":
        if width == 1:
            return f"{ptr}[{idx}] = clnp_f2bf({value});"
        return f"vstore{width}(clnp_f2bf{width}({value}), 0, {ptr} + {idx});"
    if width > 1:
        if dtype.kind == "b":
            return f"vstore{width}(convert_uchar{width}(-({value})), 0, {ptr} + {idx});"
        return f"vstore{width}({value}, 0, {ptr} + {idx});"
    if dtype.kind == "b":
        return f"{ptr}[{idx}] = (uchar)({value});"
    return f"{ptr}[{idx}] = {value};"


def splat(dtype: np.dtype, expr: str, width: int = 1) -> str:
    """A scalar compute-type expression as a vector of ``width`` lanes (a bool, 0 or 1, as
    the mask vector code computes with: -1 or 0)."""
    if width == 1:
        return expr
    ct = compute_ctype(dtype, width)
    return f"(-(({ct})({expr})))" if dtype.kind == "b" else f"(({ct})({expr}))"


def mask_cast(dtype: np.dtype, width: int) -> str:
    """The conversion of an int mask vector to the signed lanes of ``dtype``'s compute type,
    as ``select`` on its values needs ('' where they are 32-bit already)."""
    size = compute_itemsize(dtype)
    return "" if width == 1 or size == 4 or size not in _SIGNED else \
        f"convert_{_SIGNED[size]}{width}"


_SIGNED = {1: "char", 2: "short", 4: "int", 8: "long"}


def round16(expr: str, width: int = 1) -> str:
    """A float (or float``width``) expression rounded to the nearest float16 value, ties to
    even, and held as float again: what NumPy does to every float16 result."""
    if width == 1:
        return f"clnp_round16_float({expr})"
    return f"clnp_h2f{width}(clnp_f2h{width}({expr}))"


def roundbf(expr: str, width: int = 1) -> str:
    """A float (or float``width``) expression rounded to the nearest bfloat16 value, ties to
    even, and held as float again: what ml_dtypes does to every bfloat16 result."""
    if width == 1:
        return f"clnp_roundbf_float({expr})"
    return f"clnp_bf2f{width}(clnp_f2bf{width}({expr}))"


def convert(expr: str, src: np.dtype, dst: np.dtype, width: int = 1,
            to_storage: bool = False) -> str:
    """Convert a compute-type expression from ``src`` to ``dst`` semantics (NumPy casting).

    float16 values are computed in float: a conversion to float16 rounds to half precision
    (``clnp_round16_*``, defined by the elementwise renderer) unless ``to_storage`` says the
    value goes straight to a half store, which rounds by itself (from float; a double source
    is still rounded once, directly, to avoid rounding twice through float)."""
    if src == dst:
        return expr
    if src.name == "bfloat16":     # computed as float: convert like a float32 value
        src = np.dtype(np.float32)
    sc, dc = src.kind == "c", dst.kind == "c"
    if width > 1 and src.kind == "b" and dst.kind != "b":
        # a mask's -1 lanes are NumPy's 1 (0 and 1 are exact in every dtype: no rounding)
        base = "float" if dst.name in _HALVES else compute_ctype(dst)
        return f"convert_{base}{width}(-({expr}))"
    if dst.name == "bfloat16":
        # float64 rounds through float32 as ml_dtypes does (so results match its casts)
        if width != 1:
            if src.kind not in "fiu":
                raise ValueError(f"{src} -> bfloat16 casts are not vectorised")
            x = expr if src.name == "float32" else f"convert_float{width}({expr})"
            return x if to_storage else roundbf(x, width)
        if src.kind == "b":
            return f"((float)({expr}))"
        x = f"({expr}).x" if sc else expr
        if to_storage:       # the store rounds
            return f"((float)({x}))"
        return f"clnp_roundbf_float((float)({x}))"
    if dst.name == "float16":
        if width != 1:
            # vectors hold float16 values as float lanes; a double lane would round twice
            # through float, so such bodies stay scalar (see can_vectorize)
            if src.kind not in "fiu" or src.itemsize > 4 and src.kind == "f":
                raise ValueError(f"{src} -> float16 casts are not vectorised")
            x = expr if src.name == "float32" else f"convert_float{width}({expr})"
            return x if to_storage and src.kind == "f" else round16(x, width)
        if src.kind == "b":
            return f"((float)({expr}))"
        x = f"({expr}).x" if sc else expr
        if src.name in ("float64", "complex128"):
            return f"clnp_round16_double({x})"
        if to_storage and src.kind in "fc":
            return f"((float)({x}))"
        return f"clnp_round16_float((float)({x}))"
    if compute_ctype(src) == compute_ctype(dst) and src.kind == dst.kind:
        return expr
    if dst.kind == "b":
        if sc:
            return f"(({expr}).x != 0 || ({expr}).y != 0)"
        if width == 1:
            return f"(({expr}) != 0)"
        # a zero of the lanes' own type: OpenCL refuses an int scalar beside char/short lanes
        zero = f"({compute_ctype(src, width)})(0)"
        return f"convert_int{width}(({expr}) != {zero})"
    if dc:
        r = real_ctype(dst)
        if sc:
            return f"convert_{compute_ctype(dst)}({expr})"
        return f"(({compute_ctype(dst)})(({r})({expr}), ({r})0))"
    if sc:  # complex -> real discards the imaginary part, as NumPy does
        expr, src = f"(({expr}).x)", np.dtype("float32" if src.name == "complex64" else "float64")
    ct = compute_ctype(dst, width)
    if src.kind == "f" and dst.kind == "u":
        # C leaves negative -> unsigned undefined; NumPy (x86) goes through a signed integer,
        # so -1.0 -> 255 for uint8. Values beyond the target's range stay unspecified.
        if dst.itemsize < 4:
            return (f"(({ct})((int)({expr})))" if width == 1
                    else f"convert_{ct}(convert_int{width}({expr}))")
        if width == 1:
            return (f"(({ct})((long)({expr})))" if dst.itemsize == 4 else
                    f"(({expr}) < 0 ? (ulong)(long)({expr}) : (ulong)({expr}))")
        raise ValueError("float -> uint32/uint64 casts are not vectorised")
    if width == 1:
        return f"(({ct})({expr}))"
    return f"convert_{ct}({expr})"


_HALF_RE = re.compile(r"\bclnp_(h2f|f2h)(2|3|4|8|16)?\(")


def _half_helper(fn: str, w: str) -> str:
    """``clnp_h2f<w>`` (float16 bits to float) or ``clnp_f2h<w>`` (float to float16 bits,
    ties to even), on scalars or vectors of ``w`` lanes, in integer operations and selects
    only, so that drivers vectorise them (and no subnormal float is ever an intermediate:
    devices that flush float denormals still convert float16 subnormals exactly)."""
    u, f, h, i = f"uint{w}", f"float{w}", f"ushort{w}", f"int{w}"
    # with CLNP_NATIVE_HALF=1 (GPUs: Device.default_build_options) the core vload_half /
    # vstore_half_rte, one conversion instruction each on NVIDIA where the integer form
    # costs a dozen: float16 relu(x * p + 0.5) at 2^24 on the H100 took 0.092 ms, float32
    # 0.062 ms
    vw = w if w else ""
    if fn == "h2f":
        native = (f"inline {f} clnp_h2f{w}({h} b) {{\n"
                  f"    return vload_half{vw}(0, (__private const half *)&b);\n}}")
    else:
        native = (f"inline {h} clnp_f2h{w}({f} x) {{\n    {h} o;\n"
                  f"    vstore_half{vw}_rte(x, 0, (__private half *)&o);\n    return o;\n}}")
    return f"#if CLNP_NATIVE_HALF\n{native}\n#else\n{_integer_half(fn, w)}\n#endif"


def _integer_half(fn: str, w: str) -> str:
    """The integer-only body of :func:`_half_helper`'s conversions."""
    u, f, h, i = f"uint{w}", f"float{w}", f"ushort{w}", f"int{w}"
    if fn == "h2f":
        return f"""inline {f} clnp_h2f{w}({h} b) {{
    const {u} v = convert_{u}(b), e = v & 0x7c00u;
    /* normal: the exponent re-biased by 112; inf/nan: all ones; subnormal: m * 2^-24 */
    {u} r = ((v & 0x7fffu) << 13) + 0x38000000u;
    r = select(r, r | 0x7f800000u, e == 0x7c00u);
    r = select(r, as_{u}(convert_{f}(v & 0x3ffu) * 0x1p-24f), e == 0);
    return as_{f}(r | ((v & 0x8000u) << 16));
}}"""
    return f"""inline {h} clnp_f2h{w}({f} x) {{
    const {u} a = as_{u}(x) & 0x7fffffffu, sign = (as_{u}(x) >> 16) & 0x8000u;
    /* below 2^-14 adding 0.5 rounds to a multiple of 2^-24 (ties to even): the subnormal */
    const {u} sub = as_{u}(as_{f}(a) + 0.5f) - 0x3f000000u;
    /* normal: re-bias, round the 13 dropped bits to nearest even (a carry may reach inf) */
    const {u} nrm = (a + 0xc8000fffu + ((a >> 13) & 1u)) >> 13;
    const {u} big = select(({u})(0x7c00u), ({u})(0x7e00u), ({i})(a > 0x7f800000u));
    {u} o = select(nrm, sub, ({i})(a < 0x38800000u));
    o = select(o, big, ({i})(a >= 0x47800000u));
    return convert_{h}(o | sign);
}}"""


def _prepend_used(source: str, names: tuple[str, str], pattern: re.Pattern,
                  render) -> str:
    """``source`` with ``render(fn, width)`` put before it for every conversion ``pattern``
    finds called (each name and vector width once)."""
    if names[0] not in source and names[1] not in source:
        return source
    used = sorted(set(pattern.findall(source)), key=lambda t: (t[0], int(t[1] or 1)))
    return "\n".join(render(fn, w) for fn, w in used) + "\n" + source


def half_helpers(source: str) -> str:
    """``source`` with the definitions of the float16 conversions it calls put before it
    (a source filter of :meth:`clnp.Device.build`, so every generator's loads and stores,
    and jit's fused kernels, use the same two functions)."""
    return _prepend_used(source, ("clnp_h2f", "clnp_f2h"), _HALF_RE, _half_helper)


_BF16_RE = re.compile(r"\bclnp_(bf2f|f2bf)(2|3|4|8|16)?\(")


def _bf16_helper(fn: str, w: str) -> str:
    """``clnp_bf2f<w>`` (bfloat16 bits to float: the top half of its bits) or ``clnp_f2bf<w>``
    (float to bfloat16 bits, ties to even; a NaN becomes the quiet NaN of its sign, as
    ml_dtypes converts), on scalars or vectors of ``w`` lanes, in integer operations and
    selects only."""
    u, f, h, i = f"uint{w}", f"float{w}", f"ushort{w}", f"int{w}"
    if fn == "bf2f":
        return f"""inline {f} clnp_bf2f{w}({h} b) {{
    return as_{f}(convert_{u}(b) << 16);
}}"""
    return f"""inline {h} clnp_f2bf{w}({f} x) {{
    const {u} v = as_{u}(x);
    /* round the 16 dropped bits to nearest even (a carry may reach inf) */
    const {u} r = select(v + 0x7fffu + ((v >> 16) & 1u), (v & 0x80000000u) | 0x7fc00000u,
                         ({i})((v & 0x7fffffffu) > 0x7f800000u));
    return convert_{h}(r >> 16);
}}"""


def bfloat16_helpers(source: str) -> str:
    """``source`` with the definitions of the bfloat16 conversions it calls put before it
    (a source filter of :meth:`clnp.Device.build`, like :func:`half_helpers`)."""
    return _prepend_used(source, ("clnp_bf2f", "clnp_f2bf"), _BF16_RE, _bf16_helper)


def _register() -> None:
    from .._runtime.device import add_source_filter
    add_source_filter(half_helpers)
    add_source_filter(bfloat16_helpers)


_register()
