"""Render user-written elementwise kernels (``clnp.ElementwiseKernel``, CuPy's spelling).

The user gives the loop body in OpenCL C; this module wraps it in a kernel that walks the
broadcast shape over arbitrary strides, loads every non-raw input into a local variable of
its compute type (``float16`` through ``clnp_h2f``, ``bool`` as ``int``: the same loads,
stores and C types as the table kernels, from ``clnp._kernels.ctypes``), runs the body, and
stores the outputs. Pure: spec in, ``(source, kernel_name, scalar_arg_dtypes)`` out.

Sample (``float32 x, float32 y -> float32 z``, ``z = x * y + 1``, contiguous, int indices)::

    __kernel void clnp_ck_fma1(const int _n, __global const float *_p_x,
        const int _o_x, __global const float *_p_y, const int _o_y,
        __global float *_p_z, const int _o_z)
    {   const int _gid = (int)get_global_id(0); if (_gid >= _n) return;
        const long i = (long)_gid; const long n = (long)_n;
        const float x = _p_x[_o_x + _gid]; const float y = _p_y[_o_y + _gid]; float z = 0;
        { z = x * y + 1; }
        _p_z[_o_z + _gid] = z; }
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import ctypes as C


@dataclass(frozen=True)
class CustomArg:
    name: str                     # the user's parameter name (a C identifier)
    dtype: np.dtype
    kind: str                     # "array" (loaded per element), "scalar" (by value), "raw"


@dataclass(frozen=True)
class CustomSpec:
    name: str                     # the user's kernel name (the C name gets a prefix)
    operation: str                # C statements; ``;`` is appended
    preamble: str                 # C text placed before the kernel
    inputs: tuple[CustomArg, ...]
    outputs: tuple[CustomArg, ...]   # kind "array" or "raw"
    typedefs: tuple[tuple[str, np.dtype], ...]   # one-letter placeholders and their dtypes
    ndim: int                     # collapsed dims of the strided walk (0: contiguous)
    index: str = "long"           # C type of element indices ('int' when every offset fits)
    load_outputs: bool = False    # outputs start from the ``out=`` arrays' values (else 0)

    @property
    def kernel_name(self) -> str:
        # ``kernel`` (CuPy's default name) is an OpenCL keyword: always prefix
        return "clnp_ck_" + self.name


def _pos(prefix: str, name: str, ndim: int) -> str:
    if ndim == 0:
        return f"_o{prefix}_{name} + _gid"
    return " + ".join([f"_o{prefix}_{name}"] +
                      [f"_i{d} * _s{prefix}_{name}_{d}" for d in range(ndim)])


def _store(dtype: np.dtype, ptr: str, pos: str, value: str) -> str:
    if dtype.kind == "b":   # any nonzero value is True, stored as 1
        return f"{ptr}[{pos}] = (uchar)(({value}) != 0);"
    return C.store(dtype, ptr, pos, value)


def render_custom_elementwise(spec: CustomSpec) -> tuple[str, str, list]:
    """Return ``(source, kernel_name, scalar_arg_dtypes)`` for ``spec``."""
    idx, nd = spec.index, spec.ndim
    itype = np.dtype(np.int64 if idx == "long" else np.int32)
    params: list[str] = [f"const {idx} _n"] + [f"const {idx} _d{d}" for d in range(nd)]
    argtypes: list = [itype] * (1 + nd)

    def array_params(prefix: str, a: CustomArg, const: bool) -> None:
        # no ``restrict``: ``out=`` may name an input (``k(x, out=x)`` updates in place)
        q = "const " if const else ""
        params.append(f"__global {q}{C.storage_ctype(a.dtype)} *_p{prefix}_{a.name}")
        argtypes.append(None)
        if a.kind == "raw":
            params.append(f"const long _o{prefix}_{a.name}")
            argtypes.append(np.dtype(np.int64))
            return
        params.extend([f"const {idx} _o{prefix}_{a.name}"] +
                      [f"const {idx} _s{prefix}_{a.name}_{d}" for d in range(nd)])
        argtypes.extend([itype] * (1 + nd))

    for a in spec.inputs:
        if a.kind == "scalar":
            params.append(f"const {C.compute_ctype(a.dtype)} {a.name}")
            argtypes.append(C.scalar_arg_dtype(a.dtype))
        else:
            array_params("", a, True)
    for a in spec.outputs:
        array_params("r", a, False)

    body: list[str] = [f"const {idx} _gid = ({idx})get_global_id(0);",
                       "if (_gid >= _n) return;"]
    body += [f"typedef {C.compute_ctype(d)} {t};" for t, d in spec.typedefs]
    body += ["const long i = (long)_gid;   /* flat C-order index over the broadcast shape */",
             "const long n = (long)_n;     /* number of elements */"]
    if nd:
        body.append(f"{idx} _rem = _gid;")
        for d in reversed(range(nd)):
            body.append(f"const {idx} _i0 = _rem;" if d == 0 else
                        f"const {idx} _i{d} = _rem % _d{d}; _rem /= _d{d};")
    for a in spec.inputs:
        if a.kind == "array":
            load = C.load(a.dtype, f"_p_{a.name}", _pos("", a.name, nd))
            body.append(f"const {C.compute_ctype(a.dtype)} {a.name} = {load};")
        elif a.kind == "raw":
            body.append(f"__global const {C.storage_ctype(a.dtype)} *{a.name} = "
                        f"_p_{a.name} + _o_{a.name};")
    for a in spec.outputs:
        if a.kind == "raw":
            body.append(f"__global {C.storage_ctype(a.dtype)} *{a.name} = "
                        f"_pr_{a.name} + _or_{a.name};")
            continue
        init = C.load(a.dtype, f"_pr_{a.name}", _pos("r", a.name, nd)) \
            if spec.load_outputs else "0"
        body.append(f"{C.compute_ctype(a.dtype)} {a.name} = {init};")
    body += ["{", "  " + spec.operation.strip() + ";", "}"]
    for a in spec.outputs:
        if a.kind == "array":
            body.append(_store(a.dtype, f"_pr_{a.name}", _pos("r", a.name, nd), a.name))

    dtypes = [a.dtype for a in spec.inputs + spec.outputs]
    head = [f"// clnp ElementwiseKernel '{spec.name}'"]
    if C.uses_fp64(dtypes):
        head.append("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
    if spec.preamble.strip():
        head.append(spec.preamble.rstrip())
    src = "\n".join(head + [f"__kernel void {spec.kernel_name}(" + ",\n    ".join(params) +
                            ")", "{"] + ["  " + s for s in body] + ["}", ""])
    return src, spec.kernel_name, argtypes


def render_custom_function(fn: str, operation: str, inputs: tuple[CustomArg, ...],
                           output: CustomArg, typedefs: tuple[tuple[str, np.dtype], ...]
                           ) -> str:
    """A user kernel's body as an inline C function of its inputs returning its one output:
    how ``clnp_grad.jit`` fuses an ``ElementwiseKernel`` into a kernel of the op table's
    templates. The parameters carry the user's names and compute types, so the body reads
    exactly as in the kernel ``render_custom_elementwise`` makes."""
    params = ", ".join(f"const {C.compute_ctype(a.dtype)} {a.name}" for a in inputs)
    ot = C.compute_ctype(output.dtype)
    body = [f"typedef {C.compute_ctype(d)} {t};" for t, d in typedefs]
    body += [f"{ot} {output.name} = 0;", "{", "  " + operation.strip() + ";", "}"]
    ret = f"({ot})(({output.name}) != 0)" if output.dtype.kind == "b" else output.name
    body.append(f"return {ret};")
    return f"inline {ot} {fn}({params}) {{\n" + "\n".join("  " + ln for ln in body) + "\n}"
