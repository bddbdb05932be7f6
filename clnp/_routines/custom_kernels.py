"""User-written kernels with CuPy's spelling: ``ElementwiseKernel`` and ``RawKernel``.

Both are primitives, so ``clnp_grad`` sees them: ``elementwise_kernel`` (one generated
kernel over broadcast, strided operands; rendered by ``clnp._kernels.custom``) and
``raw_kernel`` (the user's kernel as an opaque, functional step: it copies the arrays the
caller names as outputs, launches on the copies and returns them). Their transformation
rules live in ``clnp_grad._rules_kernels``. See docs/custom_kernels.md.
"""
from __future__ import annotations

import math
import re
from typing import Any, NamedTuple, Sequence

import numpy as np

from .._runtime.deferred import deferred_import
from .._core import dtypes as dt
from .._core.array import Array
from .._runtime import launch as _launch
from .._core.eager import (_I32, _PADDED_NDIM, _dense, _rel_span, broadcast_shapes,
                           broadcast_strides, collapse, contiguous_copy, local_size)
from .._core.prims import EVAL, current_interpreter, def_impl, primitive
from .._runtime.device import Device, default_device, launch
from .._runtime.opencl import cl

# run at first use, not at import clnp (clnp._runtime.deferred)
_custom_kernels = deferred_import("clnp._kernels.custom")

__all__ = ["ElementwiseKernel", "RawKernel"]

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_RESERVED = {"i", "n"}   # the flat index and the size, defined in every generated kernel
_C_KEYWORDS = {
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
    "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch",
    "typedef", "union", "unsigned", "void", "volatile", "while", "half", "bool", "uchar",
    "ushort", "uint", "ulong", "kernel", "global", "local", "constant", "private"}


class Param(NamedTuple):
    """One parsed parameter: ``[raw] <type> <name>``; ``type`` is a NumPy dtype name or a
    one-letter placeholder resolved from the arguments."""
    name: str
    type: str
    raw: bool

    @property
    def placeholder(self) -> bool:
        return len(self.type) == 1


def parse_params(text: str, what: str) -> tuple[Param, ...]:
    """``"float32 x, raw T y"`` -> Params; ValueError quoting the offending text."""
    if not isinstance(text, str):
        raise TypeError(f"{what} must be a string like 'float32 x, T y', got "
                        f"{type(text).__name__}")
    if not text.strip():
        return ()
    out: list[Param] = []
    for piece in text.split(","):
        toks = piece.split()
        if len(toks) < 2:
            raise ValueError(f"cannot parse {what} {text!r}: {piece.strip()!r} is not "
                             f"'[raw] <type> <name>'")
        *quals, typ, name = toks
        for q in quals:
            if q != "raw":
                raise ValueError(f"cannot parse {what} {text!r}: unknown qualifier {q!r} in "
                                 f"{piece.strip()!r} (only 'raw' is supported)")
        if len(quals) > 1:
            raise ValueError(f"cannot parse {what} {text!r}: repeated 'raw' in "
                             f"{piece.strip()!r}")
        if len(typ) == 1:
            if not typ.isalpha():
                raise ValueError(f"cannot parse {what} {text!r}: type placeholder {typ!r} in "
                                 f"{piece.strip()!r} must be a letter")
        else:
            try:
                d = dt.bfloat16 if typ == "bfloat16" else np.dtype(typ)
            except TypeError:
                d = None
            if d is None or d.name != typ or dt.kind(d) not in "biuf":
                raise ValueError(f"cannot parse {what} {text!r}: unknown type {typ!r} in "
                                 f"{piece.strip()!r} (use a NumPy dtype name such as float32, "
                                 f"int64, bool, or a one-letter placeholder; complex types "
                                 f"are not supported)")
        if not _IDENT.match(name) or name in _C_KEYWORDS or name.startswith("_"):
            raise ValueError(f"cannot parse {what} {text!r}: {name!r} is not a usable "
                             f"parameter name (a C identifier, not a keyword, not starting "
                             f"with '_')")
        if name in _RESERVED:
            raise ValueError(f"cannot parse {what} {text!r}: the name {name!r} is reserved "
                             f"(the kernel defines 'i', the flat index, and 'n', the size)")
        out.append(Param(name, typ, bool(quals)))
    return tuple(out)


def uses_index(operation: str) -> bool:
    """Whether the body reads ``i`` or ``n`` (then it is not purely elementwise)."""
    return re.search(r"(?<![\w.])[in](?!\w)", operation) is not None


def _is_array(a: Any) -> bool:
    return hasattr(a, "shape") and hasattr(a, "dtype") and not isinstance(a, np.generic)


def _kind_ok(value: Any, dtype: np.dtype) -> bool:
    """A scalar of this Python/NumPy kind may take ``dtype`` (bool -> any, int -> int/float,
    float -> float)."""
    k = value.dtype.kind if isinstance(value, np.generic) else (
        "b" if isinstance(value, bool) else "i" if isinstance(value, int) else "f")
    return k == "b" or dtype.kind == "f" or (k in "iu" and dtype.kind in "iu")


def _scalar_as(value: Any, dtype: np.dtype, kname: str, pname: str) -> np.generic:
    try:
        with np.errstate(over="raise"):
            v = np.asarray(value).astype(dtype, casting="unsafe")[()]
        if dtype.kind in "iu" and int(v) != int(value):
            raise OverflowError
    except (OverflowError, FloatingPointError):
        raise OverflowError(f"ElementwiseKernel '{kname}': argument '{pname}' = {value!r} does "
                            f"not fit {dtype}") from None
    return v


class ElementwiseKernel:
    """A user-written elementwise kernel: ``ElementwiseKernel("float32 x, float32 y",
    "float32 z", "z = x * y + 1", "fma1")``, called as ``k(x, y)`` (CuPy's interface).

    Inputs broadcast (arrays or scalars); outputs are allocated, or given with ``out=`` or as
    extra positional arguments. One OpenCL kernel runs over arbitrary strides. Types are
    NumPy dtype names or one-letter placeholders (``T x``) resolved from the arguments; the
    body sees every non-raw parameter as a scalar variable of its compute type (float16 as
    float, bool as int), ``raw`` parameters as ``__global`` pointers to their (C-contiguous)
    elements, ``i`` (the flat index) and ``n`` (the size). See docs/custom_kernels.md.

    Examples
    --------
    >>> import clnp
    >>> k = clnp.ElementwiseKernel("float32 x, float32 y", "float32 z", "z = x * y + 1", "fma1")
    >>> print(k(clnp.asarray([1.0, 2.0], dtype=clnp.float32),
    ...         clnp.asarray([3.0, 4.0], dtype=clnp.float32)))
    [4. 9.]
    """

    def __init__(self, in_params: str, out_params: str, operation: str, name: str = "kernel",
                 preamble: str = "", **kwargs: Any):
        unknown = set(kwargs) - {"reduce_dims", "options", "loop_prep", "after_loop",
                                 "no_return", "return_tuple"}
        if unknown:
            raise TypeError(f"ElementwiseKernel got unexpected keyword argument(s) "
                            f"{sorted(unknown)}")
        if kwargs.get("loop_prep") or kwargs.get("after_loop"):
            raise ValueError("ElementwiseKernel: loop_prep/after_loop are not supported")
        if not isinstance(name, str) or not _IDENT.match(name):
            raise ValueError(f"ElementwiseKernel: name {name!r} is not a C identifier")
        if not isinstance(operation, str) or not operation.strip():
            raise ValueError(f"ElementwiseKernel '{name}': operation must be non-empty C code")
        self.name = name
        self.in_params = parse_params(in_params, "in_params")
        self.out_params = parse_params(out_params, "out_params")
        if not self.out_params:
            raise ValueError(f"ElementwiseKernel '{name}': out_params declares no output")
        seen: set[str] = set()
        for p in self.in_params + self.out_params:
            if p.name in seen:
                raise ValueError(f"ElementwiseKernel '{name}': parameter name {p.name!r} is "
                                 f"declared twice")
            seen.add(p.name)
        self.operation, self.preamble = operation, preamble
        self.return_tuple = bool(kwargs.get("return_tuple", False))
        self.nin, self.nout = len(self.in_params), len(self.out_params)

    def __repr__(self) -> str:
        return f"<clnp.ElementwiseKernel '{self.name}'>"

    # -------------------------------------------------------------------- argument checks
    def _signature(self) -> str:
        ins = ", ".join(p.name for p in self.in_params) or "no inputs"
        outs = ", ".join(p.name for p in self.out_params)
        return f"{self.nin} input(s) ({ins}) and optionally {self.nout} output(s) ({outs})"

    def _resolve(self, ins: Sequence[Any], outs: Sequence[Any] | None):
        """Check the arguments; return (inputs as Arrays/NumPy scalars, in dtypes, out
        dtypes, device)."""
        k = self.name
        device = None
        first = None
        for p, a in zip(self.in_params + self.out_params, list(ins) + list(outs or ())):
            if _is_array(a):
                if isinstance(a, np.ndarray):
                    raise TypeError(f"ElementwiseKernel '{k}': argument '{p.name}' is a NumPy "
                                    f"array; move it to the device with clnp.asarray")
                if a.dtype.kind == "c":
                    raise TypeError(f"ElementwiseKernel '{k}': argument '{p.name}' is "
                                    f"{a.dtype}; complex arrays are not supported")
                if device is None:
                    device, first = a.device, p.name
                elif a.device != device:
                    raise ValueError(f"ElementwiseKernel '{k}': arguments are on different "
                                     f"devices: '{first}' on {device}, '{p.name}' on "
                                     f"{a.device}; move one with to_device()")
            elif isinstance(a, (bool, int, float, np.bool_, np.integer, np.floating)):
                if p.raw:
                    raise TypeError(f"ElementwiseKernel '{k}': raw argument '{p.name}' must be "
                                    f"an array, got {type(a).__name__}")
                if p in self.out_params:
                    raise TypeError(f"ElementwiseKernel '{k}': output '{p.name}' must be an "
                                    f"array, got {type(a).__name__}")
            else:
                raise TypeError(f"ElementwiseKernel '{k}': argument '{p.name}' must be a clnp "
                                f"array or a real scalar, got {type(a).__name__}")
        device = device or default_device()
        # placeholder dtypes: from typed arguments (arrays, NumPy scalars) first
        types: dict[str, tuple[np.dtype, str]] = {}
        for p, a in zip(self.in_params, ins):
            if not p.placeholder:
                continue
            d = getattr(a, "dtype", None) if (_is_array(a) or isinstance(a, np.generic)) \
                else None
            if d is None:
                continue
            d = np.dtype(d)
            if p.type in types and types[p.type][0] != d:
                raise TypeError(f"ElementwiseKernel '{k}': inconsistent dtypes for type "
                                f"placeholder '{p.type}': '{types[p.type][1]}' is "
                                f"{types[p.type][0]}, '{p.name}' is {d}")
            types.setdefault(p.type, (d, p.name))
        for p, a in zip(self.in_params, ins):   # placeholders fixed by Python scalars only
            if p.placeholder and p.type not in types:
                d = np.dtype(bool) if isinstance(a, bool) else np.dtype(np.int64) \
                    if isinstance(a, int) else device.default_float
                types[p.type] = (d, p.name)
        for p, o in zip(self.out_params, outs or ()):
            if p.placeholder and p.type not in types:
                types[p.type] = (np.dtype(o.dtype), p.name)
        in_dtypes, args = [], []
        for p, a in zip(self.in_params, ins):
            want = types[p.type][0] if p.placeholder else dt.as_dtype(p.type)
            if _is_array(a):
                if a.dtype != want:
                    how = f"placeholder '{p.type}' = {want} (from '{types[p.type][1]}')" \
                        if p.placeholder else str(want)
                    raise TypeError(f"ElementwiseKernel '{k}': argument '{p.name}' expects "
                                    f"{how}, got a {a.dtype} array")
            else:
                if not _kind_ok(a, want):
                    raise TypeError(f"ElementwiseKernel '{k}': argument '{p.name}' expects "
                                    f"{want}, got {type(a).__name__} {a!r}")
                a = _scalar_as(a, want, k, p.name)
            device.check_dtype(want, f"ElementwiseKernel '{k}'")
            in_dtypes.append(want)
            args.append(a)
        out_dtypes = []
        for j, p in enumerate(self.out_params):
            if p.placeholder and p.type not in types:
                raise TypeError(f"ElementwiseKernel '{k}': cannot determine the type "
                                f"'{p.type}' of output '{p.name}': no input has it; pass the "
                                f"output array (out=)")
            want = types[p.type][0] if p.placeholder else dt.as_dtype(p.type)
            if outs is not None and outs[j].dtype != want:
                raise TypeError(f"ElementwiseKernel '{k}': output '{p.name}' expects {want}, "
                                f"got a {outs[j].dtype} array")
            device.check_dtype(want, f"ElementwiseKernel '{k}'")
            out_dtypes.append(want)
        return args, tuple(in_dtypes), tuple(out_dtypes), device

    # -------------------------------------------------------------------- call
    def __call__(self, *args: Any, out: Any = None, size: int | None = None,
                 **kwargs: Any) -> Any:
        """Run the kernel over the broadcast shape of the (non-raw) array arguments.

        Parameters
        ----------
        *args : arrays or scalars
            One per input parameter, optionally followed by one array per output parameter
            (written in place).
        out : array or tuple of arrays, optional
            The output arrays (instead of passing them positionally).
        size : int, optional
            The number of elements to run over when no non-raw array argument fixes the shape.
        **kwargs
            Not accepted: any other keyword raises TypeError.

        Returns
        -------
        array or tuple of arrays
            The outputs (new arrays unless given); a tuple for several outputs.

        Raises
        ------
        TypeError
            A wrong number of arguments, an unknown keyword, outputs given twice or not as clnp
            arrays, an argument whose dtype does not fit its parameter, or ``out=`` under a
            transformation.
        ValueError
            Shapes that do not broadcast, a bad ``size``, or a raw output that is not
            C-contiguous.
        OverflowError
            A scalar argument that does not fit its parameter's dtype.

        Examples
        --------
        >>> import clnp
        >>> k = clnp.ElementwiseKernel("float32 x, float32 a", "float32 y", "y = a * x", "scal")
        >>> x = clnp.asarray([1.0, 2.0], dtype=clnp.float32)
        >>> print(k(x, 3.0))
        [3. 6.]
        >>> y = clnp.zeros(2, dtype=clnp.float32)
        >>> _ = k(x, 0.5, out=y)
        >>> print(y)
        [0.5 1. ]
        """
        if kwargs:
            raise TypeError(f"ElementwiseKernel '{self.name}' got unexpected keyword "
                            f"argument(s) {sorted(kwargs)}")
        if len(args) not in (self.nin, self.nin + self.nout):
            raise TypeError(f"ElementwiseKernel '{self.name}' takes {self._signature()}; "
                            f"got {len(args)} argument(s)")
        ins, outs = list(args[:self.nin]), list(args[self.nin:]) or None
        if out is not None:
            if outs is not None:
                raise TypeError(f"ElementwiseKernel '{self.name}': outputs given both "
                                f"positionally and with out=")
            outs = list(out) if isinstance(out, (tuple, list)) else [out]
            if len(outs) != self.nout:
                raise TypeError(f"ElementwiseKernel '{self.name}': out= has {len(outs)} "
                                f"array(s) for {self.nout} output(s)")
        if outs is not None:
            for p, o in zip(self.out_params, outs):
                if not _is_array(o):
                    raise TypeError(f"ElementwiseKernel '{self.name}': output '{p.name}' must "
                                    f"be a clnp array, got {type(o).__name__}")
        if size is not None and (not isinstance(size, int) or size < 0):
            raise ValueError(f"ElementwiseKernel '{self.name}': size must be a non-negative "
                             f"int, got {size!r}")
        vals, in_dtypes, out_dtypes, device = self._resolve(ins, outs)
        shape = _loop_shape(self.name, self.in_params, vals, size,
                            [o.shape for p, o in zip(self.out_params, outs) if not p.raw]
                            if outs is not None else None)
        params = dict(in_params=self.in_params, out_params=self.out_params,
                      operation=self.operation, name=self.name, preamble=self.preamble,
                      in_dtypes=in_dtypes, out_dtypes=out_dtypes, loop_size=size)
        if outs is not None:
            if current_interpreter() is not EVAL or any(
                    getattr(v, "_is_clnp_tracer", False) for v in list(vals) + outs):
                raise TypeError(f"ElementwiseKernel '{self.name}': out= (or output arrays "
                                f"passed positionally) is not supported under clnp_grad "
                                f"transformations, where arrays are values; use the "
                                f"returned arrays")
            for p, o in zip(self.out_params, outs):
                if p.raw and not o.is_contiguous:
                    raise ValueError(f"ElementwiseKernel '{self.name}': raw output "
                                     f"'{p.name}' must be C-contiguous")
            run_custom_elementwise(vals, outs, shape, load_outputs=True, device=device,
                                   **params)
            res = tuple(outs)
        else:
            res = primitive("elementwise_kernel", multiple_results=True).bind(*vals, **params)
        return res[0] if len(res) == 1 and not self.return_tuple else tuple(res)


def _loop_shape(kname: str, in_params: Sequence[Param], vals: Sequence[Any],
                size: int | None, out_shapes: Sequence[tuple] | None) -> tuple[int, ...]:
    """The broadcast shape the kernel walks (ValueError naming shapes on a mismatch)."""
    shapes = [tuple(v.shape) for p, v in zip(in_params, vals) if not p.raw and _is_array(v)]
    if size is not None:
        if shapes or out_shapes:
            raise ValueError(f"ElementwiseKernel '{kname}': size= is only allowed when no "
                             f"non-raw array argument fixes the shape")
        return (size,)
    shape = broadcast_shapes(*shapes) if shapes else ()
    if out_shapes:
        oshape = tuple(out_shapes[0])
        for s in out_shapes:
            if tuple(s) != oshape:
                raise ValueError(f"ElementwiseKernel '{kname}': output arrays have different "
                                 f"shapes {tuple(out_shapes[0])} and {tuple(s)}")
        try:
            fits = broadcast_shapes(shape, oshape) == oshape
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(f"ElementwiseKernel '{kname}': inputs of broadcast shape {shape} "
                             f"cannot be written to an output of shape {oshape}")
        return oshape
    return shape


@def_impl("elementwise_kernel", multiple_results=True)
def _elementwise_kernel_impl(*args: Any, in_params: tuple[Param, ...],
                             out_params: tuple[Param, ...], operation: str, name: str,
                             preamble: str, in_dtypes: tuple[np.dtype, ...],
                             out_dtypes: tuple[np.dtype, ...], loop_size: int | None) -> tuple:
    """Eager: allocate the outputs (raw ones too, with the loop's shape) and run."""
    arrays = [a for a in args if isinstance(a, Array)]
    device = arrays[0].device if arrays else default_device()
    shape = _loop_shape(name, in_params, args, loop_size, None)
    outs = [Array.empty(shape, d, device) for d in out_dtypes]
    run_custom_elementwise(args, outs, shape, in_params=in_params, out_params=out_params,
                           operation=operation, name=name, preamble=preamble,
                           in_dtypes=in_dtypes, out_dtypes=out_dtypes, loop_size=loop_size,
                           load_outputs=False, device=device)
    return tuple(outs)


_FUSABLE: dict[tuple, str | None] = {}


def fusable_op(params: dict) -> str | None:
    """The name of an op record (``clnp._kernels.op_table.CUSTOM``) through which ``clnp_grad.jit`` fuses
    an ``elementwise_kernel`` equation with these parameters into its neighbours' kernel, or
    None when the kernel must run by itself: more than one output, a raw argument, a body
    that reads the index ``i`` or the size ``n``, a preamble (its definitions could clash
    with another kernel's in one program), or ``size=``.

    The record's template calls an inline function holding the user's body (one per kernel
    and dtypes), registered with the C helpers, so the fused kernel is rendered by the same
    code as every op of the table."""
    key = (params["operation"], params["preamble"], params["in_params"],
           params["out_params"], params["in_dtypes"], params["out_dtypes"],
           params["loop_size"])
    if key in _FUSABLE:
        return _FUSABLE[key]
    ins, outs = params["in_params"], params["out_params"]
    ok = (len(outs) == 1 and not any(p.raw for p in ins + outs) and params["loop_size"] is None
          and not params["preamble"].strip() and not uses_index(params["operation"]))
    name = None
    if ok:
        import hashlib

        from .._kernels import op_table as _ops
        from .._kernels import ctypes as C
        from .._kernels import helpers
        from .._kernels.custom import render_custom_function
        digest = hashlib.sha1(repr(key).encode()).hexdigest()[:12]
        name = f"ck_{params['name']}_{digest}"
        typedefs = {}
        for p, d in zip(ins + outs, params["in_dtypes"] + params["out_dtypes"]):
            if p.placeholder:
                typedefs[p.type] = d
        in_args = tuple(_custom_kernels.CustomArg(p.name, d, "array") for p, d in
                        zip(ins, params["in_dtypes"]))
        out_arg = _custom_kernels.CustomArg(outs[0].name, params["out_dtypes"][0], "array")
        ctype = C.compute_ctype(out_arg.dtype)
        text = render_custom_function(helpers.helper_name(name, ctype), params["operation"],
                                      in_args, out_arg, tuple(sorted(typedefs.items())))
        helpers._register(name, (ctype,), lambda _ct, _names, text=text: text)
        call = f"clnp_{name}_{{T}}(" + ", ".join(f"{{{k}}}" for k in range(len(ins))) + ")"
        _ops.CUSTOM[name] = _ops.EwOp(name, len(ins), "custom", {k: call for k in "biufc"},
                                      lambda *a: None)
    _FUSABLE[key] = name
    return name


def run_custom_elementwise(args: Sequence[Any], outs: Sequence[Array], shape: tuple[int, ...],
                           *, in_params: tuple[Param, ...], out_params: tuple[Param, ...],
                           operation: str, name: str, preamble: str,
                           in_dtypes: tuple[np.dtype, ...], out_dtypes: tuple[np.dtype, ...],
                           loop_size: int | None, load_outputs: bool, device: Device) -> None:
    """Render (once per spec and device) and launch the kernel writing ``outs``."""
    n = math.prod(shape)
    if n == 0:
        return
    args = [contiguous_copy(a) if p.raw and not a.is_contiguous else a
            for p, a in zip(in_params, args)]
    walked = [(p, a) for p, a in zip(in_params, args) if not p.raw and isinstance(a, Array)]
    walked_out = [(p, o) for p, o in zip(out_params, outs) if not p.raw]
    views = [a for _, a in walked] + [o for _, o in walked_out]
    contiguous = all(tuple(v.shape) == shape and _dense(shape, v._strides) for v in views)
    if contiguous:
        cshape: list[int] = []
        cstr: list[list[int]] = [[] for _ in views]
    else:
        strides = [broadcast_strides(a, shape) for _, a in walked] + \
                  [o._strides for _, o in walked_out]
        cshape, cstr = collapse(shape, strides)
        pad = _PADDED_NDIM.get(len(cshape), len(cshape)) - len(cshape)
        if pad:
            cshape = [1] * pad + cshape
            cstr = [[0] * pad + st for st in cstr]
    spans = [(0, n) if contiguous else _rel_span(v.shape, v._strides) for v in views]
    small = n <= _I32 and all(v._offset + lo >= 0 and v._offset + hi <= _I32
                              for v, (lo, hi) in zip(views, spans))
    typedefs = {}
    for p, d in zip(in_params + out_params, in_dtypes + out_dtypes):
        if p.placeholder:
            typedefs[p.type] = d
    spec = _custom_kernels.CustomSpec(
        name, operation, preamble,
        tuple(_custom_kernels.CustomArg(p.name, d, "raw" if p.raw else
                        "array" if isinstance(a, Array) else "scalar")
              for p, a, d in zip(in_params, args, in_dtypes)),
        tuple(_custom_kernels.CustomArg(p.name, d, "raw" if p.raw else "array")
              for p, d in zip(out_params, out_dtypes)),
        tuple(sorted(typedefs.items())), len(cshape), "int" if small else "long",
        load_outputs)
    kernel = device.kernel(("elementwise_kernel", spec),
                           lambda: _custom_kernels.render_custom_elementwise(spec))
    kargs: list[Any] = [n] + cshape
    k = 0
    for p, a, d in zip(in_params, args, in_dtypes):
        if p.raw:
            kargs += [a._buf, a._offset]
        elif isinstance(a, Array):
            kargs += [a._buf, a._offset] + list(cstr[k])
            k += 1
        else:
            kargs.append(a)
    for p, o in zip(out_params, outs):
        if p.raw:
            kargs += [o._buf, o._offset]
        else:
            kargs += [o._buf, o._offset] + list(cstr[k])
            k += 1
    L = local_size(device)
    launch(device, kernel, (-(-n // L) * L,), (L,), *kargs)


# ================================================================================ RawKernel
def _dims(v: Any, what: str, kname: str) -> tuple[int, ...]:
    t = (v,) if isinstance(v, (int, np.integer)) else v
    if not isinstance(t, (tuple, list)) or not 1 <= len(t) <= 3 or not all(
            isinstance(x, (int, np.integer)) and not isinstance(x, bool) and x >= 0
            for x in t):
        raise ValueError(f"RawKernel '{kname}': {what} must be an int or a tuple of 1 to 3 "
                         f"non-negative ints, got {v!r}")
    return tuple(int(x) for x in t)


def _raw_scalar(a: Any, pos: int, kname: str) -> np.generic:
    """A kernel scalar argument: NumPy scalars as they are, Python int -> int32, float ->
    float32 (as CuPy does)."""
    if isinstance(a, np.generic):
        if a.dtype.kind == "b":
            return np.int32(a)
        if a.dtype == np.float16:
            raise TypeError(f"RawKernel '{kname}': argument {pos} is a float16 scalar; OpenCL "
                            f"half arguments need cl_khr_fp16: pass np.float32")
        if a.dtype.kind not in "iufc":
            raise TypeError(f"RawKernel '{kname}': argument {pos} has dtype {a.dtype}")
        return a
    if isinstance(a, (bool, int)):
        if not -2 ** 31 <= a < 2 ** 31:
            raise OverflowError(f"RawKernel '{kname}': argument {pos} = {a} does not fit the "
                                f"int32 a Python int is passed as; pass np.int64({a})")
        return np.int32(a)
    if isinstance(a, float):
        return np.float32(a)
    raise TypeError(f"RawKernel '{kname}': argument {pos} must be a clnp array, a NumPy "
                    f"scalar or a Python int/float, got {type(a).__name__}")


class RawKernel:
    """A user-written OpenCL kernel, launched as ``k(grid, block, args)`` (CuPy's spelling).

    ``grid`` and ``block`` are tuples of up to 3 ints: the global size is ``grid * block``
    per dimension, the work-group size ``block`` (``block=None``: the driver chooses, and
    the global size is ``grid``). ``args`` holds clnp arrays (passed as their buffer: they
    must start at element 0 of it and be C-contiguous), NumPy scalars, Python ints (int32)
    and floats (float32). Eagerly the kernel writes its arrays in place and returns None.

    ``outputs=`` (an index or a tuple of indices into ``args``) calls it functionally, the
    way transformations need it: the listed arrays are copied, the kernel writes the copies
    and they are returned; the arguments are left untouched. Under ``clnp_grad``
    transformations ``outputs=`` is required (``raw_kernel`` primitive).

    Examples
    --------
    >>> import clnp
    >>> k = clnp.RawKernel('''
    ... __kernel void twice(__global float *x, int n) {
    ...     int i = get_global_id(0);
    ...     if (i < n) x[i] *= 2.0f;
    ... }''', "twice")
    >>> x = clnp.asarray([1.0, 2.0, 3.0], dtype=clnp.float32)
    >>> k((3,), None, (x, 3))
    >>> print(x)
    [2. 4. 6.]
    """

    def __init__(self, code: str, name: str, options: Sequence[str] = (), **kwargs: Any):
        if kwargs.get("backend", "opencl") not in ("opencl",):
            raise ValueError(f"RawKernel: backend {kwargs['backend']!r} is not supported "
                             f"(the source is OpenCL C)")
        if not isinstance(code, str) or not isinstance(name, str) or not _IDENT.match(name):
            raise ValueError(f"RawKernel: need OpenCL C source and a kernel name, got name "
                             f"{name!r}")
        self.code, self.name = code, name
        self.options = tuple(options)

    def __repr__(self) -> str:
        return f"<clnp.RawKernel '{self.name}'>"

    def compile(self, device: Device | None = None) -> Any:
        """Build (once per device) and return the PyOpenCL kernel.

        Parameters
        ----------
        device : clnp.Device, optional
            The device to build for (default: the default device).

        Returns
        -------
        pyopencl.Kernel
            The compiled kernel, cached per device, source and options.

        Raises
        ------
        KernelBuildError
            The OpenCL compiler rejected the source; the error shows the source and the
            compiler log.

        Examples
        --------
        >>> import clnp
        >>> k = clnp.RawKernel("__kernel void fill(__global int *x) { x[get_global_id(0)] = 7; }",
        ...                    "fill")
        >>> kern = k.compile()
        >>> kern.num_args
        1
        >>> k.compile() is kern                   # built once per device
        True
        """
        return raw_kernel_object(device or default_device(), self.code, self.name,
                                 self.options)

    @property
    def num_args(self) -> int:
        return int(self.compile().num_args)

    def __call__(self, grid: Any, block: Any, args: Sequence[Any], *,
                 outputs: Any = None, shared_mem: int = 0) -> Any:
        """Launch the kernel on ``grid * block`` work-items (``grid`` alone with ``block=None``).

        Parameters
        ----------
        grid : tuple of int
            Up to 3 dimensions.
        block : tuple of int or None
            The work-group size (as many dimensions as ``grid``), or None for the driver's
            choice.
        args : tuple
            The kernel's arguments: clnp arrays (C-contiguous, from their buffer's start), NumPy
            scalars, Python ints (int32) and floats (float32).
        outputs : int or tuple of int, optional
            Indices of the array arguments the kernel writes: they are copied, the copies written
            and returned, and the arguments left untouched (required under transformations).
        shared_mem : int, default 0
            CuPy's dynamic shared memory; not supported (declare ``__local`` arrays instead).

        Returns
        -------
        None, array or tuple of arrays
            None eagerly (arrays written in place); with ``outputs=`` the written copies.

        Raises
        ------
        TypeError
            ``args`` is not a tuple, an argument has an unsupported type, or no ``outputs=``
            under a transformation.
        ValueError
            ``shared_mem``, mismatched ``grid``/``block``, a geometry the device cannot run
            (its work-group limits, the kernel's own limit, ``__local`` arrays over its
            local memory, or on PoCL private arrays over its worker thread's stack), an
            array view that does not start its buffer, arrays on different devices, or
            ``outputs`` not indexing arrays.
        OverflowError
            A Python int that does not fit int32.

        Examples
        --------
        >>> import clnp
        >>> k = clnp.RawKernel("__kernel void inc(__global float *x) { x[get_global_id(0)] += 1; }",
        ...                    "inc")
        >>> x = clnp.asarray([1.0, 2.0], dtype=clnp.float32)
        >>> print(k((2,), None, (x,), outputs=0))      # functional: a written copy
        [2. 3.]
        >>> k((2,), None, (x,))                        # eager: in place
        >>> print(x)
        [2. 3.]
        """
        kname = self.name
        if shared_mem:
            raise ValueError(f"RawKernel '{kname}': shared_mem is not supported; declare "
                             f"__local arrays in the kernel instead")
        g = _dims(grid, "grid", kname)
        b = None if block is None else _dims(block, "block", kname)
        if b is not None and len(b) != len(g):
            raise ValueError(f"RawKernel '{kname}': grid {g} and block {b} have different "
                             f"numbers of dimensions")
        if not isinstance(args, (tuple, list)):
            raise TypeError(f"RawKernel '{kname}': args must be a tuple of arguments, got "
                            f"{type(args).__name__}")
        args = tuple(args)
        traced = current_interpreter() is not EVAL or any(
            getattr(a, "_is_clnp_tracer", False) for a in args)
        single = isinstance(outputs, (int, np.integer))
        if outputs is None:
            if traced:
                raise TypeError(f"RawKernel '{kname}' writes its arguments in place, which "
                                f"clnp_grad transformations cannot see: pass outputs=(indices "
                                f"of the arrays it writes) to call it functionally")
            device = _raw_device(args, kname)
            _check_geometry(device, g, b, kname)
            kargs = []
            for pos, a in enumerate(args):
                if _is_array(a):
                    if a._offset != 0 or not a.is_contiguous:
                        raise ValueError(
                            f"RawKernel '{kname}': argument {pos} (shape {a.shape}) is a view "
                            f"that does not start at its buffer's first element or is not "
                            f"C-contiguous; the kernel gets the buffer only. Pass a fresh "
                            f"copy (x.copy()), or call with outputs=(...) to work on copies")
                    kargs.append(a._buf)
                else:
                    kargs.append(_raw_scalar(a, pos, kname))
            _launch_raw(device, self, g, b, kargs)
            return None
        idx = (int(outputs),) if single else tuple(int(i) for i in outputs)
        for i in idx:
            if not -len(args) <= i < len(args) or not _is_array(args[i]):
                raise ValueError(f"RawKernel '{kname}': outputs={outputs!r} must index array "
                                 f"arguments (args has {len(args)} entries)")
        idx = tuple(i % len(args) for i in idx)
        device = _raw_device(args, kname)
        _check_geometry(device, g, b, kname)
        # scalars travel as a static parameter (``scalars``: None where an array goes), so
        # staging sees only the arrays as operands
        scalars = tuple(None if _is_array(a) else _raw_scalar(a, pos, kname)
                        for pos, a in enumerate(args))
        res = primitive("raw_kernel", multiple_results=True).bind(
            *[a for a in args if _is_array(a)], code=self.code, name=kname,
            options=self.options, grid=g, block=b, scalars=scalars,
            outputs=tuple(sum(1 for a in args[:i] if _is_array(a)) for i in idx))
        return res[0] if single else tuple(res)


def _raw_device(args: Sequence[Any], kname: str) -> Device:
    device = None
    for pos, a in enumerate(args):
        if _is_array(a):
            if isinstance(a, np.ndarray):
                raise TypeError(f"RawKernel '{kname}': argument {pos} is a NumPy array; move "
                                f"it to the device with clnp.asarray")
            if device is None:
                device, first = a.device, pos
            elif a.device != device:
                raise ValueError(f"RawKernel '{kname}': arguments are on different devices: "
                                 f"argument {first} on {device}, argument {pos} on "
                                 f"{a.device}")
    return device or default_device()


def _check_geometry(device: Device, g: tuple[int, ...], b: tuple[int, ...] | None,
                    kname: str) -> None:
    if b is None:
        return
    if math.prod(b) > device.max_work_group_size or any(
            x > m for x, m in zip(b, device.max_work_item_sizes)):
        raise ValueError(f"RawKernel '{kname}': block {b} exceeds {device}'s limits (work-group "
                         f"size {device.max_work_group_size}, per dimension "
                         f"{device.max_work_item_sizes[:len(b)]})")
    if 0 in b:
        raise ValueError(f"RawKernel '{kname}': block {b} has a zero dimension")


_RAW: dict[tuple, Any] = {}


def raw_kernel_object(device: Device, code: str, name: str, options: tuple[str, ...]) -> Any:
    key = (device.index, code, name, options)
    k = _RAW.get(key)
    if k is None:
        prg = device.build(code, options)
        try:
            k = _launch.Kernel(prg, name)
        except cl.Error:
            names = sorted(kk.function_name for kk in prg.all_kernels())
            raise ValueError(f"RawKernel: the source defines no kernel named {name!r} "
                             f"(it defines {', '.join(names) or 'none'})") from None
        _RAW[key] = k
    return k


def _launch_raw(device: Device, rk: Any, g: tuple[int, ...], b: tuple[int, ...] | None,
                kargs: list[Any], code: str | None = None, name: str | None = None,
                options: tuple[str, ...] | None = None) -> None:
    code = rk.code if rk is not None else code
    name = rk.name if rk is not None else name
    options = rk.options if rk is not None else options
    kernel = raw_kernel_object(device, code, name, options)
    if kernel.num_args != len(kargs):
        raise TypeError(f"RawKernel '{name}' takes {kernel.num_args} arguments, got "
                        f"{len(kargs)}")
    _check_local_memory(device, kernel, name)
    if b is not None:
        _check_kernel_group_size(device, kernel, b, name)
    gsize = g if b is None else tuple(x * y for x, y in zip(g, b))
    if b is None and 0 in gsize:
        return
    b = _stack_safe_block(device, code, name, options, g, b)
    if 0 in gsize:
        return
    launch(device, kernel, gsize, b, *kargs)


def _stack_safe_block(device: Device, code: str, name: str, options: tuple[str, ...],
                      g: tuple[int, ...], b: tuple[int, ...] | None) -> tuple[int, ...] | None:
    """The block to launch with on a PoCL CPU device, whose work-group keeps one copy of the
    kernel's private arrays per work-item on a worker thread's stack: a block over that stack
    raises ValueError (the launch would kill the process with a segmentation fault), and
    ``block=None`` gets a block that fits where PoCL could choose one that does not (it
    picks up to its 4096-item limit). Other devices report their limits and refuse such
    launches themselves (NVIDIA: a smaller CL_KERNEL_WORK_GROUP_SIZE, checked above)."""
    from .._runtime import private_memory as pm   # only PoCL launches pay for its imports
    if not pm.is_pocl_cpu(device):
        return b
    per_item = pm.private_bytes(device, code, name, options)
    if not per_item:
        return b
    stack = pm.worker_stack_bytes()
    most = (stack - pm.STACK_RESERVE) // per_item
    items = device.max_work_group_size if b is None else math.prod(b)
    if items <= most:
        return b
    what = "block=None" if b is None else f"block {b} ({items} work-items)"
    fix = ("move the arrays to __local or __global memory, or start Python with a larger "
           "stack (ulimit -s)")
    if most < 1:
        raise ValueError(
            f"RawKernel '{name}': its private arrays take {per_item} bytes per work-item, more "
            f"than {device}'s PoCL worker stack allows ({stack} bytes less a "
            f"{pm.STACK_RESERVE}-byte reserve): even one work-item would crash the process. "
            f"{fix[0].upper()}{fix[1:]}")
    if b is not None:
        raise ValueError(
            f"RawKernel '{name}': {what} needs {items} x {per_item} bytes of private arrays "
            f"per work-item = {items * per_item} bytes of PoCL's worker stack on {device}, "
            f"which has {stack} bytes ({stack - pm.STACK_RESERVE} usable after a "
            f"{pm.STACK_RESERVE}-byte reserve): the launch would crash the process. Use a block "
            f"of at most {most} work-items, or {fix}")
    return _fitting_block(g, most, device.max_work_item_sizes)


def _fitting_block(g: tuple[int, ...], most: int, per_dim: Sequence[int]) -> tuple[int, ...]:
    """The block a ``block=None`` launch of global size ``g`` gets on PoCL when the driver's
    choice could overflow the stack: per dimension the largest divisor of ``g`` within what
    is left of ``most`` work-items (as a driver's choice, it must divide the global size)."""
    out, left = [], most
    for x, cap in zip(g, per_dim):
        d = next(d for d in range(min(x, left, cap), 0, -1) if x % d == 0)
        out.append(d)
        left //= d
    return tuple(out)


def _check_kernel_group_size(device: Device, kernel: Any, b: tuple[int, ...],
                             name: str) -> None:
    """Refuse a block over this kernel's own work-group limit (registers and private memory
    can make it smaller than the device's: 256 on an H200 for a kernel with 2 KiB of private
    memory per item, whose launch at 1024 NVIDIA's driver accepted without an error)."""
    most = int(kernel.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE,
                                          device.cl_device))
    if math.prod(b) > most:
        raise ValueError(f"RawKernel '{name}': block {b} ({math.prod(b)} work-items) exceeds "
                         f"this kernel's work-group limit on {device}: {most} (its registers "
                         f"or private memory)")


def _check_local_memory(device: Device, kernel: Any, name: str) -> None:
    """Refuse a kernel whose ``__local`` arrays exceed the device's local memory: PoCL runs
    such a kernel without any error (measured: 1 MiB + 4 KiB of ``__local`` floats on a
    1 MiB device), writing past its local area."""
    used = int(kernel.get_work_group_info(cl.kernel_work_group_info.LOCAL_MEM_SIZE,
                                          device.cl_device))
    if used > device.local_mem:
        raise ValueError(f"RawKernel '{name}': its __local arrays take {used} bytes, more than "
                         f"{device}'s local memory ({device.local_mem} bytes)")


@def_impl("raw_kernel", multiple_results=True)
def _raw_kernel_impl(*arrays: Array, code: str, name: str, options: tuple[str, ...],
                     grid: tuple[int, ...], block: tuple[int, ...] | None,
                     scalars: tuple[Any, ...], outputs: tuple[int, ...]) -> tuple:
    """Functional RawKernel: the kernel's arguments are ``scalars`` with the ``arrays`` in
    its None slots; copy the arrays numbered in ``outputs``, launch on the copies, return
    them. Offset or strided input views are copied too (the kernel gets buffers)."""
    device = _raw_device(arrays, name)
    bufs, res = [], {}
    for j, a in enumerate(arrays):
        if j in outputs or a._offset != 0 or not a.is_contiguous:
            a = contiguous_copy(a)   # a fresh buffer, element 0 at its start
        if j in outputs:
            res[j] = a
        bufs.append(a._buf)
    it = iter(bufs)
    kargs = [next(it) if s is None else s for s in scalars]
    _launch_raw(device, None, grid, block, kargs, code, name, options)
    return tuple(res[j] for j in outputs)
