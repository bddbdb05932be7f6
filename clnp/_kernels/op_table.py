"""The elementwise op table: one record per operation.

From a record the library generates the public function, the operator dunders, the kernel
body (``c`` templates), and the tests (``ref`` + ``domain``); ``clnp_grad`` adds derivatives
keyed by the same names. Template fields: ``{0}``, ``{1}``, ``{2}`` are operands already
converted to the compute type, ``{T}`` is the compute C type, ``{R}`` its real component type,
``{U}`` the unsigned integer type of the same width (wrap-around arithmetic without C's undefined
signed overflow). Helpers are referenced as ``clnp_<helper>_{T}`` and emitted by
``_codegen.helpers`` (or by ``_codegen.elementwise`` for the few it keeps locally).

``c`` is looked up by the compute dtype's name (``"float16"``), then by its scalar C type
(``"float"``, ``"double"``), then by its kind (``'b'``, ``'i'``, ``'u'``, ``'f'``, ``'c'``).
``vec`` marks templates that may run on OpenCL vector types with results bit-identical to the
scalar code: exact operations, and math builtins called through ``clnp_vm_<fn>_{T}`` (which
``_codegen.elementwise`` defines so that scalar and vector code use one implementation).
``vmask`` holds the vector templates of ops that make or take bools: in vector code a bool
lane is a mask, -1 (true) or 0 (false), as OpenCL's vector comparisons yield and ``select``
reads (``{M}`` converts a mask to the signed lanes of the compute type); conversions,
loads and stores turn masks into NumPy's 0/1 (``_codegen.ctypes``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping

import numpy as np

from .._runtime.dtypes import CATEGORIES


@dataclass(frozen=True)
class EwOp:
    name: str
    nin: int
    category: str                 # the standard's wording for allowed input dtypes
    c: Mapping[str, str]          # dtype name / C type / kind -> C expression template
    ref: Callable                 # NumPy reference
    out: str = "same"             # 'same' | 'bool' | 'real' (real part type for complex)
    vec: bool = False             # exact templates for kinds 'f','i','u', valid on vector types
    vmask: Mapping[str, str] = field(default_factory=dict)   # vector templates, bools as masks
    float_only: bool = False      # integer/bool inputs are computed in floating point (NumPy)
    float_default: bool = False   # ... in the default float, not the smallest that fits (divide)
    domain: tuple[float, float] = (-10.0, 10.0)
    dunder: tuple[str, ...] = ()  # operator names mapped to this op
    identity: object = None       # NumPy's ufunc identity (None: the op has none)
    reorderable: bool = False     # associative and commutative: reduce over several axes
    extra: Mapping[str, object] = field(default_factory=dict)

    def accepts(self, dtype: np.dtype) -> bool:
        """Whether ``dtype`` is a valid input: the standard's category, plus booleans and
        integers for the functions NumPy evaluates in floating point (``sin(int8)``)."""
        return dtype in CATEGORIES[self.category] or (self.float_only and dtype.kind in "biu")


OPS: dict[str, EwOp] = {}
# Records made at run time for user elementwise kernels that jit fuses
# (``clnp._routines.custom_kernels.fusable_op``): codegen finds them through ``lookup``; they are kept
# apart so that the namespace, operators and rules generated from OPS never see them.
CUSTOM: dict[str, EwOp] = {}


def lookup(name: str) -> EwOp:
    """The record of op ``name``: the table's, or a fused user kernel's."""
    rec = OPS.get(name)
    return rec if rec is not None else CUSTOM[name]


def ew(name: str, nin: int, category: str, c: Mapping[str, str], ref: Callable, **kw) -> None:
    OPS[name] = EwOp(name, nin, category, dict(c), ref, **kw)


def _fl(fn: str) -> dict[str, str]:
    """Real float builtin ``fn`` (through the layout-independent ``clnp_vm_`` wrapper, see
    ``_codegen.elementwise``) plus its complex helper."""
    return {"f": f"clnp_vm_{fn}_{{T}}({{0}})", "c": f"clnp_c{fn}_{{T}}({{0}})"}


# ---- unary floating-point functions (integers compute in floating point, like NumPy)
for _n, _dom in (("acos", (-1, 1)), ("acosh", (1, 10)), ("asin", (-1, 1)), ("asinh", (-10, 10)),
                 ("atan", (-10, 10)), ("atanh", (-0.99, 0.99)), ("cos", (-10, 10)),
                 ("cosh", (-10, 10)), ("exp", (-10, 10)), ("expm1", (-3, 3)),
                 ("log", (0.01, 10)), ("log1p", (-0.99, 10)), ("log2", (0.01, 10)),
                 ("log10", (0.01, 10)), ("sin", (-10, 10)), ("sinh", (-10, 10)),
                 ("tan", (-1.5, 1.5)), ("tanh", (-10, 10)), ("sqrt", (0, 10))):
    ew(_n, 1, "floating-point", _fl(_n), getattr(np, {"acos": "arccos", "acosh": "arccosh",
       "asin": "arcsin", "asinh": "arcsinh", "atan": "arctan", "atanh": "arctanh"}.get(_n, _n)),
       vec=True, float_only=True, domain=_dom)
OPS["sqrt"].c["f"] = "sqrt({0})"    # correctly rounded: the same in every implementation
# PoCL's single-precision tanh never reaches 1 (tanh(inf) == 0.99999994); for |x| > 9.1 the
# float result rounds to +-1 (and for |x| > 19.1 the double result does).
OPS["tanh"].c["float"] = "(fabs({0}) > 9.1f ? copysign(({T})1, {0}) : clnp_vm_tanh_{T}({0}))"
OPS["tanh"].c["double"] = "(fabs({0}) > 19.1 ? copysign(({T})1, {0}) : clnp_vm_tanh_{T}({0}))"
# PoCL's log1p flushes subnormal arguments to zero; below 1e-18 log1p(x) rounds to x
OPS["log1p"].c["f"] = "(fabs({0}) < 1e-18f ? ({0}) : clnp_vm_log1p_{T}({0}))"

# Signed integer arithmetic goes through the unsigned type: NumPy wraps around, C leaves signed
# overflow undefined (and LLVM exploits that once ops are fused).
_WRAP1 = "as_{T}(({U})(({U})0 - as_{U}({0})))"
ew("abs", 1, "numeric", {"i": "(({0}) < ({T})0 ? " + _WRAP1 + " : ({0}))", "u": "{0}",
                         "f": "fabs({0})", "c": "clnp_cabs_{T}({0})"}, np.abs, out="real",
   vec=True, dunder=("__abs__",))
ew("negative", 1, "numeric", {"i": _WRAP1, "u": "(({T})(({T})0 - ({0})))", "f": "-({0})",
                              "c": "-({0})"},
   np.negative, vec=True, dunder=("__neg__",))
ew("positive", 1, "numeric", {"i": "{0}", "u": "{0}", "f": "{0}", "c": "{0}"}, np.positive,
   vec=True, dunder=("__pos__",))
ew("square", 1, "numeric", {"i": "as_{T}(({U})(as_{U}({0}) * as_{U}({0})))",
                            "u": "(({T})(({0}) * ({0})))", "f": "({0}) * ({0})",
                            "c": "clnp_csquare_{T}({0})"}, np.square, vec=True)
# integer reciprocal (NumPy: integer 1 // x) is a footgun the standard does not have: TypeError
ew("reciprocal", 1, "floating-point", {"f": "(({T})1 / ({0}))", "c": "clnp_creciprocal_{T}({0})"},
   np.reciprocal, vec=True, domain=(0.1, 10))
ew("sign", 1, "numeric", {"i": "clnp_sign_{T}({0})", "u": "clnp_sign_{T}({0})",
                          "f": "clnp_sign_{T}({0})", "c": "clnp_csign_{T}({0})"}, np.sign)
ew("signbit", 1, "real floating-point", {"f": "signbit({0})"}, np.signbit, out="bool")
ew("conj", 1, "numeric", {"i": "{0}", "u": "{0}", "f": "{0}", "c": "(({T})(({0}).x, -({0}).y))"},
   np.conj)
ew("real", 1, "numeric", {"i": "{0}", "u": "{0}", "f": "{0}", "c": "({0}).x"}, np.real,
   out="real")
ew("imag", 1, "numeric", {"i": "(({T})0)", "u": "(({T})0)", "f": "(({T})0)", "c": "({0}).y"},
   np.imag, out="real")
for _n in ("ceil", "floor", "trunc"):
    ew(_n, 1, "real numeric", {"i": "{0}", "u": "{0}", "f": f"{_n}({{0}})"}, getattr(np, _n),
       vec=True)
ew("round", 1, "numeric", {"i": "{0}", "u": "{0}", "f": "rint({0})",
                           "c": "(({T})(rint(({0}).x), rint(({0}).y)))"}, np.round, vec=True)
ew("isfinite", 1, "numeric", {"b": "1", "i": "1", "u": "1", "f": "isfinite({0})",
                              "c": "(isfinite(({0}).x) && isfinite(({0}).y))"}, np.isfinite,
   out="bool")
ew("isinf", 1, "numeric", {"b": "0", "i": "0", "u": "0", "f": "isinf({0})",
                           "c": "(isinf(({0}).x) || isinf(({0}).y))"}, np.isinf, out="bool")
ew("isnan", 1, "numeric", {"b": "0", "i": "0", "u": "0", "f": "isnan({0})",
                           "c": "(isnan(({0}).x) || isnan(({0}).y))"}, np.isnan, out="bool")
# logical ops take any dtype as NumPy does: non-zero is true (``extra["truthy"]``)
ew("logical_not", 1, "boolean", {"b": "(!({0}))"}, np.logical_not, extra={"truthy": True},
   vmask={"b": "(~({0}))"})
ew("bitwise_invert", 1, "integer or boolean", {"b": "(!({0}))", "i": "(~({0}))", "u": "(~({0}))"},
   np.invert, dunder=("__invert__",))

# ---- binary arithmetic
_ARITH = {"i": "as_{T}(({U})(as_{U}({0}) {op} as_{U}({1})))", "u": "(({T})(({0}) {op} ({1})))",
          "f": "({0}) {op} ({1})"}
for _n, _op, _d in (("add", "+", "__add__"), ("subtract", "-", "__sub__")):
    ew(_n, 2, "numeric", {**{k: v.replace("{op}", _op) for k, v in _ARITH.items()},
                          "c": f"({{0}}) {_op} ({{1}})"}, getattr(np, _n), vec=True, dunder=(_d,),
       identity=0 if _n == "add" else None, reorderable=_n == "add")
ew("multiply", 2, "numeric", {**{k: v.replace("{op}", "*") for k, v in _ARITH.items()},
                              "c": "clnp_cmul_{T}({0}, {1})"}, np.multiply, vec=True,
   dunder=("__mul__",), identity=1, reorderable=True)
ew("divide", 2, "floating-point", {"f": "({0}) / ({1})", "c": "clnp_cdiv_{T}({0}, {1})"},
   np.divide, vec=True, float_only=True, float_default=True, dunder=("__truediv__",))
ew("floor_divide", 2, "real numeric", {"i": "clnp_floordiv_{T}({0}, {1})",
                                       "u": "clnp_floordiv_{T}({0}, {1})",
                                       "f": "clnp_floordiv_{T}({0}, {1})"},
   np.floor_divide, dunder=("__floordiv__",))
ew("remainder", 2, "real numeric", {"i": "clnp_remainder_{T}({0}, {1})",
                                    "u": "clnp_remainder_{T}({0}, {1})",
                                    "f": "clnp_remainder_{T}({0}, {1})"},
   np.remainder, dunder=("__mod__",))
ew("pow", 2, "numeric", {"i": "clnp_ipow_{T}({0}, {1})", "u": "clnp_ipow_{T}({0}, {1})",
                         # x ** 2 as x * x, as NumPy computes it: exactly rounded, where
                         # OpenCL's pow may be 16 ulp off, and PoCL's pow is slow scalar code
                         "f": "(({1}) == ({T})2 ? ({0}) * ({0}) : pow({0}, {1}))",
                         "c": "clnp_cpow_{T}({0}, {1})"}, np.power,
   domain=(0.1, 3), dunder=("__pow__",))
ew("atan2", 2, "real floating-point", {"f": "clnp_vm_atan2_{T}({0}, {1})"}, np.arctan2,
   vec=True, float_only=True)
ew("copysign", 2, "real floating-point", {"f": "copysign({0}, {1})"}, np.copysign, vec=True,
   float_only=True)
ew("hypot", 2, "real floating-point", {"f": "clnp_vm_hypot_{T}({0}, {1})"}, np.hypot,
   vec=True, float_only=True, identity=0, reorderable=True)
# float16 and bfloat16 compute in float, so their neighbours need their own helpers
ew("nextafter", 2, "real floating-point", {"f": "nextafter({0}, {1})",
                                           "float16": "clnp_nextafter16_{T}({0}, {1})",
                                           "bfloat16": "clnp_nextafterbf_{T}({0}, {1})"},
   np.nextafter)
ew("logaddexp", 2, "real floating-point", {"f": "clnp_logaddexp_{T}({0}, {1})"}, np.logaddexp,
   float_only=True, identity=-float("inf"), reorderable=True)
ew("maximum", 2, "real numeric", {"i": "max({0}, {1})", "u": "max({0}, {1})",
                                  "f": "clnp_maximum_{T}({0}, {1})"}, np.maximum,
   vec=True, reorderable=True)
ew("minimum", 2, "real numeric", {"i": "min({0}, {1})", "u": "min({0}, {1})",
                                  "f": "clnp_minimum_{T}({0}, {1})"}, np.minimum,
   vec=True, reorderable=True)

# ---- comparisons (bool results)
_CMP = {"b": "(({0}) {op} ({1}))", "i": "(({0}) {op} ({1}))", "u": "(({0}) {op} ({1}))",
        "f": "(({0}) {op} ({1}))"}
# on vectors the same operators give masks (codegen widens lanes of other sizes to int)
ew("equal", 2, "any", {**{k: v.replace("{op}", "==") for k, v in _CMP.items()},
                       "c": "((({0}).x == ({1}).x) && (({0}).y == ({1}).y))"},
   np.equal, out="bool", dunder=("__eq__",),
   vmask={k: v.replace("{op}", "==") for k, v in _CMP.items()})
ew("not_equal", 2, "any", {**{k: v.replace("{op}", "!=") for k, v in _CMP.items()},
                           "c": "((({0}).x != ({1}).x) || (({0}).y != ({1}).y))"},
   np.not_equal, out="bool", dunder=("__ne__",),
   vmask={k: v.replace("{op}", "!=") for k, v in _CMP.items()})
for _n, _op, _d in (("greater", ">", "__gt__"), ("greater_equal", ">=", "__ge__"),
                    ("less", "<", "__lt__"), ("less_equal", "<=", "__le__")):
    _t = {k: v.replace("{op}", _op) for k, v in _CMP.items() if k != "b"}
    ew(_n, 2, "real numeric", _t, getattr(np, _n), out="bool", dunder=(_d,), vmask=_t)

# ---- logical and bitwise
ew("logical_and", 2, "boolean", {"b": "(({0}) && ({1}))"}, np.logical_and, identity=True,
   reorderable=True, extra={"truthy": True}, vmask={"b": "(({0}) & ({1}))"})
ew("logical_or", 2, "boolean", {"b": "(({0}) || ({1}))"}, np.logical_or, identity=False,
   reorderable=True, extra={"truthy": True}, vmask={"b": "(({0}) | ({1}))"})
ew("logical_xor", 2, "boolean", {"b": "((!({0})) != (!({1})))"}, np.logical_xor,
   identity=False, reorderable=True, extra={"truthy": True}, vmask={"b": "(({0}) ^ ({1}))"})
for _n, _op, _d, _id in (("bitwise_and", "&", "__and__", -1), ("bitwise_or", "|", "__or__", 0),
                         ("bitwise_xor", "^", "__xor__", 0)):
    ew(_n, 2, "integer or boolean", {k: f"(({{0}}) {_op} ({{1}}))" for k in "biu"},
       getattr(np, _n), vec=True, dunder=(_d,), identity=_id, reorderable=True)
ew("bitwise_left_shift", 2, "integer", {"i": "clnp_shl_{T}({0}, {1})",
                                        "u": "clnp_shl_{T}({0}, {1})"}, np.left_shift,
   domain=(0, 8), dunder=("__lshift__",))
ew("bitwise_right_shift", 2, "integer", {"i": "clnp_shr_{T}({0}, {1})",
                                         "u": "clnp_shr_{T}({0}, {1})"}, np.right_shift,
   domain=(0, 8), dunder=("__rshift__",))

# ---- ternary
ew("where", 3, "any", {k: "(({0}) ? ({1}) : ({2}))" for k in "biufc"}, np.where,
   vmask={k: "select({2}, {1}, {M}({0}))" for k in "biuf"})
ew("clip", 3, "real numeric", {"i": "min(max({0}, {1}), {2})", "u": "min(max({0}, {1}), {2})",
                               "f": "clnp_minimum_{T}(clnp_maximum_{T}({0}, {1}), {2})"},
   np.clip)

# identity conversion: the copy / astype kernel
ew("copy", 1, "any", {k: "{0}" for k in "biufc"}, np.copy, vec=True)


# NumPy's loops for boolean operands, where the standard leaves an op undefined on bool: some
# ops have a bool loop that is a logical op (``True + True`` is True), others run in int8
BOOL_LOGICAL = {"add": "logical_or", "maximum": "logical_or", "fmax": "logical_or",
                "multiply": "logical_and", "minimum": "logical_and", "fmin": "logical_and"}
BOOL_INT8 = frozenset({"less", "less_equal", "greater", "greater_equal", "floor_divide",
                       "remainder", "mod", "fmod", "power", "pow", "left_shift",
                       "right_shift", "bitwise_left_shift", "bitwise_right_shift", "divmod"})
