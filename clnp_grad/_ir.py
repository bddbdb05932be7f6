"""A small typed IR (ANF, JAX's jaxpr shape): ``Graph(in_binders, eqns, outs)``.

``make_ir(f)(*args)`` stages ``f`` into a Graph by running it under a staging interpreter; each
primitive application becomes an ``Eqn`` whose output variables carry their abstract values
(shape, dtype). Staging evaluates every primitive on the values one level down as it records
it, so shapes come from the eager implementations (no separate shape rules yet); ``jit`` will
replace that with abstract evaluation. ``eval_graph`` replays a Graph through ``bind``, so a
staged function can itself be transformed.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from clnp._core.prims import Primitive, current_interpreter, set_interpreter

from ._core import HIGHER_ORDER, Interpreter, Tracer, mark_view
from ._tree import tree_flatten, tree_unflatten


@dataclass(frozen=True)
class Aval:
    shape: tuple[int, ...]
    dtype: np.dtype

    def __str__(self) -> str:
        return f"{self.dtype.name}[{','.join(map(str, self.shape))}]"


# the type of a primitive's absent result (None at run time, never read)
_ABSENT = Aval((0,), np.dtype(np.bool_))


class Var:
    """A value of the graph, typed by its Aval."""
    _names = itertools.count()

    def __init__(self, aval: Aval):
        self.aval = aval
        self.n = next(Var._names)

    def __repr__(self) -> str:
        return f"v{self.n}"


@dataclass(frozen=True)
class Lit:
    """A Python scalar operand."""
    value: Any

    def __repr__(self) -> str:
        return repr(self.value)


@dataclass
class Eqn:
    prim: Primitive
    inputs: list[Any]            # Var | Lit
    params: dict[str, Any]
    out_binders: list[Var]


@dataclass
class Graph:
    """A staged, typed program: what :func:`make_ir` returns and what ``jit`` compiles.

    Attributes
    ----------
    in_binders : list of Var
        The typed inputs.
    eqns : list of Eqn
        The primitive applications, in order.
    outs : list
        The outputs (variables or literals).
    consts : dict
        Arrays the function closed over, by variable number.

    Examples
    --------
    >>> import clnp, clnp_grad as cg
    >>> g = cg.make_ir(lambda x: x * 2.0)(clnp.asarray([1.0, 2.0]))
    >>> len(g.in_binders), len(g.eqns), len(g.outs)
    (1, 1, 1)
    """
    in_binders: list[Var]
    eqns: list[Eqn]
    outs: list[Any]              # Var | Lit
    consts: dict[int, Any] = field(default_factory=dict)   # Var.n -> captured array

    def __str__(self) -> str:
        names: dict[int, str] = {}

        def nm(v: Any) -> str:
            if isinstance(v, Lit):
                return repr(v)
            if v.n not in names:
                names[v.n] = _letters(len(names))
            return names[v.n]

        def typed(v: Var) -> str:
            return f"{nm(v)}:{v.aval}"
        head = f"{{ lambda {', '.join(typed(v) for v in self.in_binders)} ."
        lines = [head]
        consts = [v for e in self.eqns for v in e.inputs
                  if isinstance(v, Var) and v.n in self.consts]
        seen: set[int] = set()
        for v in consts:
            if v.n not in seen:
                seen.add(v.n)
                lines.append(f"    {typed(v)} = <const>")
        for e in self.eqns:
            params = " ".join(f"{k}={_short(p)}" for k, p in e.params.items()
                              if k not in ("arg_dtypes",))
            outs = " ".join(typed(v) for v in e.out_binders)
            args = " ".join(nm(v) for v in e.inputs)
            lines.append(f"    {outs} = {e.prim.name}{'[' + params + ']' if params else ''} "
                         f"{args}")
        lines.append(f"  in ( {', '.join(nm(v) for v in self.outs)} ) }}")
        return "\n".join(lines)

    def typecheck(self) -> None:
        """Every variable is defined before use and defined once.

        Returns
        -------
        None
            The graph is well formed.

        Raises
        ------
        TypeError
            A variable is used before its definition, defined twice, or an output is never
            defined; the message names it.

        Examples
        --------
        >>> import clnp, clnp_grad as cg
        >>> g = cg.make_ir(lambda x: clnp.sin(x) * 2.0)(clnp.asarray([1.0, 2.0]))
        >>> g.typecheck()
        >>> len(g.eqns) >= 2
        True
        """
        env: set[int] = {v.n for v in self.in_binders} | set(self.consts)
        for e in self.eqns:
            for v in e.inputs:
                if isinstance(v, Var) and v.n not in env:
                    raise TypeError(f"IR: {v} used before definition in {e.prim.name}")
            for v in e.out_binders:
                if v.n in env:
                    raise TypeError(f"IR: {v} defined twice")
                env.add(v.n)
        for v in self.outs:
            if isinstance(v, Var) and v.n not in env:
                raise TypeError(f"IR: output {v} is never defined")


def _letters(i: int) -> str:
    s = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        s = chr(97 + r) + s
    return s


def _short(p: Any) -> str:
    if isinstance(p, np.dtype):
        return p.name
    return str(p)


class StagingTracer(Tracer):
    __slots__ = ("var", "value")

    def __init__(self, interp: "StagingInterpreter", var: Var, value: Any):
        self._interp, self.var, self.value = interp, var, value

    @property
    def _value(self) -> Any:
        return self.value


class StagingInterpreter(Interpreter):
    name = "make_ir"
    kind = "stage"

    def __init__(self, prev: Any):
        super().__init__(prev)
        self.eqns: list[Eqn] = []
        self.consts: dict[int, Any] = {}
        self._const_vars: dict[int, Var] = {}

    def operand(self, x: Any) -> tuple[Any, Any]:
        if isinstance(x, StagingTracer) and x._interp is self:
            return x.var, x.value
        self.check_foreign(x)
        if hasattr(x, "shape") and hasattr(x, "dtype"):
            key = id(x)  # identity of a captured constant within one staging run only
            v = self._const_vars.get(key)
            if v is None:
                v = self._const_vars[key] = Var(Aval(tuple(x.shape), x.dtype))
                self.consts[v.n] = x
            return v, x
        return Lit(x), x

    def process(self, prim: Primitive, args: tuple, params: dict) -> Any:
        hrule = HIGHER_ORDER.get(("stage", prim.name))
        if hrule is not None:
            return hrule(self, args, params)
        ins, vals = zip(*(self.operand(a) for a in args)) if args else ((), ())
        with set_interpreter(self.prev):
            out = prim.bind(*vals, **params)
        outs = list(out) if prim.multiple_results else [out]
        # an absent result (eigh without vectors, qr(mode="r")'s Q) keeps a placeholder
        # binder, so the equation's outputs stay positional, and stays None for the caller
        binders = [Var(Aval(tuple(o.shape), o.dtype) if o is not None else _ABSENT)
                   for o in outs]
        self.eqns.append(Eqn(prim, list(ins), dict(params), binders))
        tracers = [StagingTracer(self, b, o) if o is not None else None
                   for b, o in zip(binders, outs)]
        return tuple(tracers) if prim.multiple_results else mark_view(tracers[0], prim)


def make_ir(fun: Callable[..., Any]) -> Callable[..., Graph]:
    """Stage ``fun`` to clnp_grad's typed IR (JAX's ``make_jaxpr``).

    Parameters
    ----------
    fun : callable
        Function of arrays (or pytrees of arrays).

    Returns
    -------
    callable
        ``make_ir(fun)(*args)`` returning a :class:`Graph`, printable, that
        :func:`eval_graph` runs and the transformations accept.

    Raises
    ------
    TypeError
        When staged: Python control flow on a traced value (``ConcretizationError``).

    Examples
    --------
    >>> import clnp, clnp_grad as cg
    >>> x = clnp.asarray([1.0, 2.0], dtype=clnp.float32)
    >>> print(cg.make_ir(lambda x: clnp.sin(x) * 2.0)(x))
    { lambda a:float32[2] .
        b:float32[2] = sin[dtype=float32 out_dtype=float32] a
        c:float32[2] = multiply[dtype=float32 out_dtype=float32] b 2.0
      in ( c ) }
    """
    def staged(*args: Any) -> Graph:
        flat, tdef = tree_flatten(list(args))
        interp = StagingInterpreter(current_interpreter())
        try:
            binders = [Var(Aval(tuple(a.shape), a.dtype)) for a in flat]
            tracers = [StagingTracer(interp, b, a) for b, a in zip(binders, flat)]
            with set_interpreter(interp):
                out = fun(*tree_unflatten(tdef, tracers))
        finally:
            interp.active = False
        o_flat, _ = tree_flatten(out)
        outs = [interp.operand(o)[0] for o in o_flat]
        g = Graph(binders, interp.eqns, outs, interp.consts)
        g.typecheck()
        return g
    return staged


def eval_graph(graph: Graph, *args: Any) -> list[Any]:
    """Run ``graph`` on ``args`` by binding each equation, so the run can be transformed again.

    Parameters
    ----------
    graph : Graph
        A graph from :func:`make_ir`.
    *args : array
        One array per input of the graph, of the staged shapes and dtypes.

    Returns
    -------
    list of array
        The graph's outputs.

    Raises
    ------
    TypeError
        Arguments that do not match the graph's inputs.

    Examples
    --------
    >>> import clnp, clnp_grad as cg
    >>> g = cg.make_ir(lambda x: x * 2.0)(clnp.asarray([1.0, 2.0]))
    >>> (y,) = cg.eval_graph(g, clnp.asarray([3.0, 4.0]))
    >>> print(y)
    [6. 8.]
    """
    env: dict[int, Any] = dict(graph.consts)
    if len(args) != len(graph.in_binders):
        raise TypeError(f"eval_graph: expected {len(graph.in_binders)} arguments, got "
                        f"{len(args)}")
    for v, a in zip(graph.in_binders, args):
        if tuple(a.shape) != v.aval.shape or a.dtype != v.aval.dtype:
            raise TypeError(f"eval_graph: argument of type {a.dtype.name}{list(a.shape)} for "
                            f"a binder of type {v.aval}")
        env[v.n] = a

    def read(x: Any) -> Any:
        return x.value if isinstance(x, Lit) else env[x.n]
    for e in graph.eqns:
        out = e.prim.bind(*[read(x) for x in e.inputs], **e.params)
        outs = list(out) if e.prim.multiple_results else [out]
        for b, o in zip(e.out_binders, outs):
            env[b.n] = o
    return [read(x) for x in graph.outs]
