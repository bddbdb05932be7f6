"""Staging for ``jit``: trace a function on its arguments into a typed Graph, then simplify it.

Tracing reuses the staging interpreter of ``clnp_grad._ir`` (each primitive is recorded and also
evaluated one level down, so shapes come from the eager implementations). On top of it:

- Python scalars among the arguments become *weakly typed* 0-d traced values: a new value does
  not retrace, and ``x * s`` keeps ``x``'s dtype as with a Python scalar (NEP 50).
- Primitives whose result shape depends on the data (``nonzero``, ``unique``: boolean-mask
  indexing, ``unique_values``) are refused with a ``ConcretizationError`` naming the user's line.
- ``simplify`` folds constants, removes dead equations and shares common subexpressions before
  fusion.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from clnp._kernels import op_table as _ops
from clnp._core.prims import Primitive, current_interpreter, set_interpreter

from .._core import ConcretizationError, user_line
from .._ir import Aval, Eqn, Graph, Lit, StagingInterpreter, StagingTracer, Var
from .._tree import tree_flatten

# result shapes that depend on values: not expressible in a compiled program
DATA_DEPENDENT = {"nonzero": "clnp.where(mask, x, 0) (or pass the mask's count as a static "
                             "argument)",
                  "unique": "a fixed-size formulation, or compute it outside jit"}


class JitTracer(StagingTracer):
    __slots__ = ("weak_type",)

    def __init__(self, interp: "JitStaging", var: Var, value: Any, weak_type: bool = False):
        super().__init__(interp, var, value)
        self.weak_type = weak_type


class JitStaging(StagingInterpreter):
    name = "jit"

    def process(self, prim: Primitive, args: tuple, params: dict) -> Any:
        hint = DATA_DEPENDENT.get(prim.name)
        if hint is not None:
            raise ConcretizationError(
                f"jit: '{prim.name}' gives a result whose shape depends on the values of a "
                f"traced array{user_line()}; compiled functions need static shapes. Use {hint}")
        return super().process(prim, args, params)


def stage(fun: Callable[..., Any], flat: Sequence[Any], weak: Sequence[bool],
          rebuild: Callable[[list], tuple[tuple, dict]]) -> tuple[Graph, Any]:
    """Trace ``fun`` on the flat argument values ``flat`` (arrays, outer tracers); ``rebuild``
    turns the list of traced leaves back into ``(args, kwargs)``. Returns the Graph and the
    output tree definition."""
    interp = JitStaging(current_interpreter())
    try:
        binders = [Var(Aval(tuple(a.shape), a.dtype)) for a in flat]
        tracers = [JitTracer(interp, b, a, w) for b, a, w in zip(binders, flat, weak)]
        args, kwargs = rebuild(tracers)
        with set_interpreter(interp):
            out = fun(*args, **kwargs)
    finally:
        interp.active = False
    o_flat, o_def = tree_flatten(out)
    for o in o_flat:
        if not (hasattr(o, "shape") and hasattr(o, "dtype")) and \
                not isinstance(o, (bool, int, float, complex)):
            raise TypeError(f"jit: the function returned a {type(o).__name__} leaf; results "
                            f"must be arrays, Python scalars or pytrees of them")
    outs = [interp.operand(o)[0] for o in o_flat]
    g = Graph(binders, interp.eqns, outs, interp.consts)
    g.typecheck()
    return simplify(g), o_def


def _param_key(v: Any) -> Any:
    hash(v)
    return v


# Constant folding: arithmetic that NumPy rounds as IEEE 754 prescribes (and as the device's
# float32/float64 kernels do; a device division may be less exact than the folded one), and
# the views and conversions that keep a uniform array uniform
_FOLD_OPS = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
             "divide": np.divide, "negative": np.negative}
_UNIFORM_VIEWS = frozenset({"reshape", "broadcast_to", "transpose", "stop_gradient"})


def _foldable(d: np.dtype) -> bool:
    return d.kind == "f" and d.itemsize >= 4


def fold_constants(g: Graph) -> Graph:
    """Uniform constants folded into the elementwise equations that read them.

    Differentiation seeds its cotangents with ``full`` arrays that later equations scale
    (``mean``'s ``1 / n``) and broadcast. Each would otherwise be a kernel of its own, and
    every group reading its result would wait for that kernel: the constant splits fusion
    groups that nothing else splits. Here a float32/float64 value known to be uniform
    (a ``full``, arithmetic of constants, a view or conversion of one) becomes a literal
    operand of each op-table equation reading it; the equations that computed it then die
    unless something else (a product, an output) reads the array itself."""
    const: dict[int, Any] = {}        # Var id -> the uniform value, a NumPy scalar

    def value(x: Any, d: np.dtype) -> Any:
        v = x.value if isinstance(x, Lit) else const.get(x.n)
        return None if v is None else np.asarray(v).astype(d)[()]
    eqns: list[Eqn] = []
    for e in g.eqns:
        name, p = e.prim.name, e.params
        out = e.out_binders[0] if len(e.out_binders) == 1 else None
        if name in _ops.OPS and "arg_dtypes" in p:
            ins = [Lit(const[x.n].item()) if isinstance(x, Var) and x.n in const else x
                   for x in e.inputs]
            e = Eqn(e.prim, ins, p, e.out_binders)
            fn = _FOLD_OPS.get(name)
            if fn is not None and _foldable(p["dtype"]) and _foldable(p["out_dtype"]):
                vals = [value(x, d) for x, d in zip(ins, p["arg_dtypes"])]
                if all(v is not None for v in vals) and len(vals) == len(ins):
                    with np.errstate(all="ignore"):
                        r = fn(*[np.asarray(v).astype(p["dtype"]) for v in vals])
                    const[out.n] = np.asarray(r).astype(p["out_dtype"])[()]
        elif out is None:
            pass
        elif name == "full" and _foldable(np.dtype(p["dtype"])) and \
                isinstance(p["value"], (int, float, np.floating, np.integer)):
            const[out.n] = np.asarray(p["value"]).astype(p["dtype"])[()]
        elif name in _UNIFORM_VIEWS and isinstance(e.inputs[0], Var) and e.inputs[0].n in const:
            const[out.n] = const[e.inputs[0].n]
        elif name in ("convert_element_type", "copy") and len(e.inputs) == 1 and \
                isinstance(e.inputs[0], Var) and e.inputs[0].n in const and \
                _foldable(out.aval.dtype):
            const[out.n] = np.asarray(const[e.inputs[0].n]).astype(out.aval.dtype)[()]
        eqns.append(e)
    return Graph(g.in_binders, eqns, g.outs, g.consts)


def simplify(g: Graph) -> Graph:
    """Constants folded, common subexpressions shared, then dead equations removed (every
    primitive is pure)."""
    g = fold_constants(g)
    rename: dict[int, Any] = {}
    seen: dict[tuple, list[Var]] = {}
    eqns: list[Eqn] = []

    def read(x: Any) -> Any:
        return rename.get(x.n, x) if isinstance(x, Var) else x
    for e in g.eqns:
        ins = [read(x) for x in e.inputs]
        try:
            key = (e.prim.name,
                   tuple(("v", x.n) if isinstance(x, Var) else ("l", type(x.value), x.value)
                         for x in ins),
                   tuple(sorted((k, _param_key(v)) for k, v in e.params.items())))
        except TypeError:
            key = None
        prev = seen.get(key) if key is not None else None
        if prev is not None and len(prev) == len(e.out_binders):
            for b, p in zip(e.out_binders, prev):
                rename[b.n] = p
            continue
        if key is not None:
            seen[key] = e.out_binders
        eqns.append(Eqn(e.prim, ins, e.params, e.out_binders))
    outs = [read(x) for x in g.outs]
    live = {x.n for x in outs if isinstance(x, Var)}
    kept: list[Eqn] = []
    for e in reversed(eqns):
        if any(b.n in live for b in e.out_binders):
            kept.append(e)
            live.update(x.n for x in e.inputs if isinstance(x, Var))
    kept.reverse()
    consts = {n: c for n, c in g.consts.items() if n in live}
    out = Graph(g.in_binders, kept, outs, consts)
    out.typecheck()
    return out
