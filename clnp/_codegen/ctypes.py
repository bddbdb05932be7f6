"""OpenCL C spellings of clnp dtypes: storage types, compute types, loads, stores, conversions.

Storage and compute types differ for three dtypes: ``bool`` is stored as ``uchar`` and computed
as ``int`` (C truth values), ``float16`` is stored as ``half`` and computed as ``float`` (the
device need not support half arithmetic; ``vload_half``/``vstore_half`` are core OpenCL), and
``bfloat16`` is stored as ``ushort`` (the top half of a float's bits) and computed as
``float``: a load shifts the bits up, a store rounds to nearest even (NaNs stay quiet NaNs of
the same sign). These spellings are the only bfloat16 conversions in clnp: eager kernels and
``clnp_grad.jit``'s fused kernels both get them from here.
"""
from __future__ import annotations

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


def bf16_load(bits: str) -> str:
    """Expression: the float value of bfloat16 bits (a ``ushort`` expression)."""
    return f"as_float((uint)({bits}) << 16)"


def bf16_bits(value: str, var: str = "clnp_bf") -> tuple[str, str]:
    """``(declaration, expression)``: the bfloat16 bits of float ``value`` rounded to nearest
    even, as a statement declaring ``var`` (so ``value`` is evaluated once) and a ``ushort``
    expression of it. NaN keeps its sign and becomes quiet (ml_dtypes' conversion)."""
    decl = f"uint {var} = as_uint((float)({value}));"
    expr = (f"(ushort)((({var} & 0x7fffffffu) > 0x7f800000u ? ({var} | 0x400000u) : "
            f"({var} + 0x7fffu + (({var} >> 16) & 1u))) >> 16)")
    return decl, expr


_UNSIGNED = {"char": "uchar", "short": "ushort", "int": "uint", "long": "ulong"}


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
    """Expression loading element(s) ``ptr[idx]`` as the compute type."""
    if dtype.name == "float16":
        return f"vload_half({idx}, {ptr})" if width == 1 else f"vload_half{width}(0, {ptr} + {idx})"
    if dtype.name == "bfloat16":
        if width != 1:
            raise ValueError("bfloat16 values are not vectorised")
        return bf16_load(f"{ptr}[{idx}]")
    if width > 1:
        return f"vload{width}(0, {ptr} + {idx})"
    if dtype.kind == "b":
        return f"(int){ptr}[{idx}]"
    return f"{ptr}[{idx}]"


def store(dtype: np.dtype, ptr: str, idx: str, value: str, width: int = 1) -> str:
    """Statement storing a compute-type value to ``ptr[idx]``."""
    if dtype.name == "float16":
        if width == 1:
            return f"vstore_half_rte({value}, {idx}, {ptr});"
        return f"vstore_half{width}_rte({value}, 0, {ptr} + {idx});"
    if dtype.name == "bfloat16":
        if width != 1:
            raise ValueError("bfloat16 values are not vectorised")
        decl, bits = bf16_bits(value)
        return f"{{ {decl} {ptr}[{idx}] = {bits}; }}"
    if width > 1:
        return f"vstore{width}({value}, 0, {ptr} + {idx});"
    if dtype.kind == "b":
        return f"{ptr}[{idx}] = (uchar)({value});"
    return f"{ptr}[{idx}] = {value};"


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
    if dst.name == "bfloat16":
        # float64 rounds through float32 as ml_dtypes does (so results match its casts)
        if width != 1:
            raise ValueError("bfloat16 values are not vectorised")
        if src.kind == "b":
            return f"((float)({expr}))"
        x = f"({expr}).x" if sc else expr
        if to_storage:       # the store rounds
            return f"((float)({x}))"
        return f"clnp_roundbf_float((float)({x}))"
    if dst.name == "float16":
        if width != 1:
            raise ValueError("float16 values are not vectorised")
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
        return f"(({expr}) != 0)" if width == 1 else f"convert_int{width}(({expr}) != 0)"
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
