"""``jit``: the user-facing transformation, its cache, and the ``jit`` primitive's rules.

``jit(f)(*args)`` looks its arguments' abstract signature up in a bounded cache (pytree
structure; shape, dtype and device of every array leaf; the type of every Python scalar leaf,
which is traced as a weakly typed 0-d value; the values of static arguments). A miss stages
``f`` (``staging``) and compiles the Graph (``executable``) on the first call's arguments.

Under another transformation, ``jit(f)`` binds the ``jit`` primitive, which carries the staged
Graph (JAX's ``pjit``). Its rules transform the body and jit the result again, so
``grad(jit(f))`` runs compiled code in both passes:

- JVP: ``jit`` of the JVP of the body, on (primals, tangents);
- VJP: the body's forward-and-backward graph is staged once and split by dependency on the
  cotangents (partial evaluation): a compiled forward that also returns the residuals, and a
  compiled backward put on the tape as the node's rule;
- vmap: ``jit`` of the vmapped body;
- staging (``jit`` inside ``jit``, ``make_ir``): the body is inlined, so it fuses with its
  surroundings.
"""
from __future__ import annotations

import functools
import inspect
import os
import sys
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from clnp._core.array import Array
from clnp._routines.dot_general import get_matmul_precision
from clnp._core.prims import EVAL, current_interpreter, def_impl, primitive, set_interpreter
from clnp._runtime.device import default_device

from .._args import check_argnums
from .._core import HIGHER_ORDER, Tracer
from .._ir import Graph, Var, eval_graph
from .._tree import flattener, tree_flatten, tree_unflatten, unflattener
from .staging import stage
from clnp._core.dtypes import kind as dkind
from clnp._runtime.deferred import deferred_import

if TYPE_CHECKING:
    from .executable import Executable

# the code generators and the executable run at the first jit call, not at import clnp_grad
_executable_mod = deferred_import("clnp_grad._jit.executable")

jit_p = primitive("jit", multiple_results=True)
_CACHE_SIZE = 256
_ALL: "list[Any]" = []       # every jitted function's cache, for clear_caches()


def _log(msg: str) -> None:
    if os.environ.get("CLNP_LOG_COMPILES", "") not in ("", "0"):
        print(f"clnp jit: {msg}", file=sys.stderr)


def _leaf_sig(x: Any) -> Any:
    if isinstance(x, (Array, Tracer)) or (hasattr(x, "shape") and hasattr(x, "dtype")):
        return (tuple(x.shape), x.dtype, getattr(x, "device", None),
                getattr(x, "weak_type", False))
    if isinstance(x, (bool, int, float, complex)):
        return type(x)
    if isinstance(x, np.generic):
        return (x.dtype,)
    raise TypeError(f"jit: argument leaves must be arrays or scalars; got {type(x).__name__} "
                    f"(mark it static with static_argnums/static_argnames)")


class _Structures:
    """The argument structures one jitted function has seen, each with a flattener generated
    for it (``_tree.flattener``) and a small integer naming it in call signatures: the
    per-call path flattens a call's arguments with the last structure's code (a training
    state of modules and optimizer states: 87-119 us instead of 214-271 us walked on the
    2-core machine, ``bench/bench_pytree.py``) and keys on the integer instead of hashing
    the structure (6-9 us)."""

    __slots__ = ("by_def", "last", "count")

    def __init__(self) -> None:
        self.by_def: dict[Any, tuple[int, Any]] = {}
        self.last: tuple[int, Any] | None = None
        self.count = 0

    def leaves(self, args: tuple) -> tuple[int, Sequence[Any]]:
        """(the structure's number, the leaves) of ``args``."""
        last = self.last
        if last is not None and last[1] is not None:
            flat = last[1](args)
            if flat is not None:
                return last[0], flat
        flat, tdef = tree_flatten(args)
        entry = self.by_def.get(tdef)
        if entry is None:
            if len(self.by_def) >= _CACHE_SIZE:
                self.by_def.clear()
            self.count += 1           # numbers are never reused: old keys stay distinct
            entry = self.by_def[tdef] = (self.count, flattener(tdef))
        self.last = entry
        return entry[0], flat


def _fast_key(args: tuple, structures: _Structures) -> tuple[tuple, Sequence[Any]] | None:
    """The signature of a call whose positional arguments are pytrees of concrete Arrays
    only (none weakly typed), with the leaves; or None: the per-call path of
    ``jit(f)(x, y)`` and ``jit(step)(params, x, y)``."""
    # the matmul precision picks the product kernels an executable launches (as
    # jax_default_matmul_precision is part of JAX's cache key)
    key: list = [get_matmul_precision()]
    flat: Sequence[Any] = args
    if not all(type(a) is Array for a in args):
        number, flat = structures.leaves(args)
        key.append(number)
    for a in flat:
        if type(a) is not Array:
            return None
        key.append((a._shape, a._dtype, a._device))
    return tuple(key), flat


def _bottom(x: Any) -> Any:
    """A concrete value of ``x``'s shape and dtype under any tracers (staging runs the eager
    implementations on it): the value below, with batch axes of ``vmap`` levels indexed
    away (an example of the batch), or zeros where that does not give the shape."""
    if not isinstance(x, Tracer):
        return x
    shape, dtype = tuple(x.shape), x.dtype
    while isinstance(x, Tracer):
        x = x._value
    with set_interpreter(EVAL):
        while isinstance(x, Array) and x.ndim > len(shape):
            x = x[0]
        if not isinstance(x, Array) or tuple(x.shape) != shape:
            import clnp
            x = clnp.zeros(shape, dtype=dtype)
    return x


class Jitted:
    """A function compiled by ``clnp_grad.jit``: call it like the original."""

    def __init__(self, fun: Callable[..., Any], static_argnums: Sequence[int],
                 static_argnames: Sequence[str], donate_argnums: Sequence[int]):
        self.fun = fun
        self.static_argnums = tuple(static_argnums)
        self.static_argnames = tuple(static_argnames)
        self.donate_argnums = tuple(donate_argnums)
        self._cache: OrderedDict[Any, tuple[Graph, Any, Any]] = OrderedDict()
        # calls whose arguments are all positional Arrays skip flattening and the full
        # signature: (shape, dtype, device) per argument -> (executable, output structure)
        self._fast: dict[tuple, tuple[Executable, Any]] = {}
        self._structures = _Structures()
        self._last: Any = None
        # name and docstring only: copying ``fun.__dict__`` would let a callable object's
        # attributes (a pmap's ``fun``, ``_cache``) replace this object's own
        functools.update_wrapper(self, fun, updated=())
        _ALL.append(self)

    def __repr__(self) -> str:
        return f"<jit {getattr(self.fun, '__name__', 'function')}>"

    def __get__(self, obj: Any, objtype: Any = None) -> Any:   # jit on methods
        return self if obj is None else functools.partial(self, obj)

    def clear_cache(self) -> None:
        """Forget every traced and compiled version of this function."""
        self._cache.clear()
        self._fast.clear()
        self._structures = _Structures()
        self._last = None

    # -- signature
    def _split(self, args: tuple, kwargs: dict) -> tuple[list, Any, tuple, Callable]:
        n = len(args)
        snums = set()
        for i in self.static_argnums:
            if not -n <= i < n:
                raise ValueError(f"jit({self.__name__}): static_argnums {i} is out of range "
                                 f"for {n} positional arguments")
            snums.add(i % n)
        static = []
        for i in sorted(snums):
            static.append(("pos", i, _hashable(args[i], f"positional argument {i}", self)))
        for k in self.static_argnames:
            if k in kwargs:
                static.append(("kw", k, _hashable(kwargs[k], f"argument '{k}'", self)))
        dyn_args = [a for i, a in enumerate(args) if i not in snums]
        dyn_kw = {k: v for k, v in kwargs.items() if k not in self.static_argnames}
        flat, tdef = tree_flatten((dyn_args, dyn_kw))

        def rebuild(leaves: list) -> tuple[tuple, dict]:
            da, dk = tree_unflatten(tdef, leaves)
            it = iter(da)
            full = [args[i] if i in snums else next(it) for i in range(n)]
            kw = dict(dk)
            for k in self.static_argnames:
                if k in kwargs:
                    kw[k] = kwargs[k]
            return tuple(full), kw
        return flat, tdef, tuple(static), rebuild

    # -- calls
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not kwargs and current_interpreter() is EVAL:
            fast = _fast_key(args, self._structures)
            hit = self._fast.get(fast[0]) if fast is not None else None
            if hit is not None:
                exe, build = hit
                return build(exe.run(fast[1]))
        flat, tdef, static, rebuild = self._split(args, kwargs)
        sig = (tdef, static, tuple(_leaf_sig(x) for x in flat))
        entry = self._cache.get(sig)
        if entry is None:
            entry = self._trace(sig, flat, rebuild)
        else:
            self._cache.move_to_end(sig)
        graph, out_def, exe = entry
        if exe.precision != get_matmul_precision():
            exe = _executable(graph, flat)
        if self.donate_argnums and not exe.built:
            exe.donated = self._donated_leaves(args, static)
        if current_interpreter() is EVAL and not any(isinstance(x, Tracer) for x in flat):
            if not kwargs and not static:
                fast = _fast_key(args, self._structures)
                if fast is not None:
                    if len(self._fast) >= _CACHE_SIZE:
                        self._fast.clear()
                    self._fast[fast[0]] = (exe, unflattener(out_def))
            outs = exe.run(flat)
        else:   # Python scalars enter the primitive as the 0-d arrays they were traced as
            device = exe.device
            outs = jit_p.bind(*[_weak_array(x, device) if isinstance(
                x, (bool, int, float, complex)) else x for x in flat], graph=graph,
                name=self.__name__)
        return tree_unflatten(out_def, list(outs))

    def _donated_leaves(self, args: tuple, static: tuple) -> frozenset[int]:
        """Flat argument indices of the leaves of the donated positional arguments."""
        n = len(args)
        snums = {i for kind, i, _ in static if kind == "pos"}
        donated = set()
        for i in self.donate_argnums:
            if not -n <= i < n:
                raise ValueError(f"jit({self.__name__}): donate_argnums {i} is out of range "
                                 f"for {n} positional arguments")
            if i % n in snums:
                raise ValueError(f"jit({self.__name__}): argument {i % n} is both static "
                                 f"(static_argnums) and donated (donate_argnums)")
            donated.add(i % n)
        out: set[int] = set()
        first = 0
        for i, a in enumerate(args):
            if i in snums:
                continue
            k = len(tree_flatten(a)[0])
            if i in donated:
                out.update(range(first, first + k))
            first += k
        return frozenset(out)

    def _trace(self, sig: Any, flat: list, rebuild: Callable) -> tuple:
        why = _why(self._last, sig)
        _log(f"tracing {self.__name__} for {_describe(sig)}{why}")
        values = [_bottom(x) for x in flat]
        weak = [isinstance(x, (bool, int, float, complex)) for x in values]
        device = next((v.device for v, w in zip(values, weak) if not w and
                       hasattr(v, "device")), None)
        traced = [_weak_array(v, device) if w else v for v, w in zip(values, weak)]
        with set_interpreter(EVAL):
            graph, out_def = stage(self.fun, traced, weak, rebuild)
        exe = _executable(graph, traced)
        entry = (graph, out_def, exe)
        if len(self._cache) >= _CACHE_SIZE:
            self._cache.popitem(last=False)
        self._cache[sig] = entry
        self._last = sig
        return entry

    def lower(self, *args: Any, **kwargs: Any) -> "Lowered":
        """The staged and compiled form of this function for ``args``: ``.as_text()`` gives
        the typed IR, ``.kernel_sources()`` the OpenCL C sources one call launches, in order
        (compiling, and running the function once, if that has not happened yet)."""
        flat, tdef, static, rebuild = self._split(args, kwargs)
        sig = (tdef, static, tuple(_leaf_sig(x) for x in flat))
        entry = self._cache.get(sig) or self._trace(sig, flat, rebuild)
        graph, _, exe = entry
        if not exe.built:
            exe.run([_bottom(x) for x in flat])
        return Lowered(graph, exe)


class Lowered:
    """What ``Jitted.lower`` returns."""

    def __init__(self, graph: Graph, exe: Executable):
        self.graph, self.executable = graph, exe

    def as_text(self) -> str:
        """The staged, typed IR (after common-subexpression and dead-code elimination)."""
        return str(self.graph)

    def kernel_sources(self) -> list[str]:
        """OpenCL C source of every kernel one call launches, in launch order."""
        return self.executable.kernel_sources()


def _weak_array(v: Any, device: Any) -> Any:
    """A Python scalar argument as the 0-d array it is traced with (next to the arrays)."""
    import clnp
    return clnp.asarray(v, dtype=_executable_mod.weak_dtype(v), device=device)


def _hashable(v: Any, what: str, f: Jitted) -> Any:
    try:
        hash(v)
    except TypeError:
        raise TypeError(f"jit({f.__name__}): static {what} must be hashable; got "
                        f"{type(v).__name__} {v!r:.80} (use a tuple instead of a list, or pass "
                        f"arrays as non-static arguments)") from None
    return v


def _describe(sig: Any) -> str:
    leaves = sig[2]
    parts = []
    for s in leaves:
        if isinstance(s, tuple) and len(s) == 4:
            parts.append(f"{s[1]}{list(s[0])}" + ("(weak)" if s[3] else ""))
        elif isinstance(s, type):
            parts.append(f"{s.__name__}(weak)")
        else:
            parts.append(str(s))
    st = ", ".join(f"{k}={v!r}" for _, k, v in sig[1])
    return "(" + ", ".join(parts) + (f"; static {st}" if st else "") + ")"


def _why(prev: Any, sig: Any) -> str:
    """Why a new trace was needed, compared with the previous signature."""
    if prev is None:
        return " (first call)"
    if prev[0] != sig[0]:
        return " (new argument structure)"
    if prev[1] != sig[1]:
        return " (new static value)"
    for a, b in zip(prev[2], sig[2]):
        if a != b:
            if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) == 4:
                if a[0] != b[0]:
                    return f" (new shape: {list(a[0])} -> {list(b[0])})"
                if a[1] != b[1]:
                    return f" (new dtype: {a[1]} -> {b[1]})"
                if a[2] != b[2]:
                    return " (new device)"
            return " (new argument type)"
    return ""


def _executable(graph: Graph, args: Sequence[Any]) -> Executable:
    """The executable of ``graph`` for arguments like ``args``: one per device, the device
    of the first array argument (else of the constants, else the default device)."""
    device = next((a.device for a in args if isinstance(a, Array)), None)
    if device is None:
        device = next((c.device for c in graph.consts.values() if isinstance(c, Array)),
                      None) or default_device()
    exes = graph.__dict__.setdefault("_executables", {})
    # one executable per device and matmul precision: the products' kernels are chosen when
    # it is built
    precision = get_matmul_precision()
    exe = exes.get((device, precision))
    if exe is None:
        from .staging import simplify
        exe = exes[(device, precision)] = _executable_mod.Executable(simplify(graph), device)
        _log(f"compiling a graph of {len(graph.eqns)} equations on {device} "
             f"(matmul precision {precision})")
    return exe


def run_graph(graph: Graph, args: list) -> list:
    """Run ``graph`` on concrete arrays through its (cached) compiled executable: how control
    flow bodies run, once per iteration, without per-primitive Python."""
    return _executable(graph, args).run(args)


# ------------------------------------------------------------------ the jit primitive
@def_impl("jit")
def _jit_impl(*args: Any, graph: Graph, name: str) -> list[Any]:
    return run_graph(graph, list(args))


def _stage_rule(interp: Any, args: tuple, params: dict) -> Any:
    """jit inside a staging interpreter (jit of jit, make_ir): inline the body."""
    with set_interpreter(interp):
        return tuple(eval_graph(params["graph"], *args))


def _stage_fn(fn: Callable[..., Any], values: list, name: str) -> Graph:
    """Stage ``fn(*values)`` on concrete values (a rule's transformed body)."""
    weak = [False] * len(values)
    with set_interpreter(EVAL):
        g, _ = stage(fn, values, weak, lambda leaves: (tuple(leaves), {}))
    return g


def _derived(graph: Graph, key: Any, make: Callable[[], Any]) -> Any:
    cache = graph.__dict__.setdefault("_derived", {})
    r = cache.get(key)
    if r is None:
        r = cache[key] = make()
    return r


def _lift_diff(interp: Any, args: tuple) -> tuple[list, list, tuple[bool, ...]]:
    """Primals, per-argument derivative data (tangent or tape reference, None for
    constants) and which arguments are differentiated (floating and traced here)."""
    lifted = [interp.lift(a) for a in args]
    diff = tuple(d is not None and hasattr(p, "dtype") and dkind(p.dtype) in "fc"
                 for p, d in lifted)
    return [p for p, _ in lifted], [d for _, d in lifted], diff


def _body_of_diff(graph: Graph, diff: tuple[bool, ...], ps: Sequence[Any]
                  ) -> Callable[..., list]:
    """``graph`` as a function of its differentiated arguments only, the others fixed."""
    def f(*dps: Any) -> list:
        it = iter(dps)
        return list(eval_graph(graph, *[next(it) if d else p for d, p in zip(diff, ps)]))
    return f


def _jvp_rule(interp: Any, args: tuple, params: dict) -> Any:
    from .._ad import JVPTracer, jvp
    from .._rules import zeros_like
    graph = params["graph"]
    primals, tangents, diff = _lift_diff(interp, args)
    n = len(primals)

    def body(*pt: Any) -> Any:
        ps, ts = list(pt[:n]), pt[n:]
        it = iter(ts)
        tans = [next(it) if d else None for d in diff]
        dp = [p for d, p in zip(diff, ps) if d]
        dt_ = [t for t in tans if t is not None]
        outs, touts = jvp(_body_of_diff(graph, diff, ps), dp, dt_)
        return list(outs) + [t if t is not None else zeros_like(o)
                             for o, t in zip(outs, touts)]

    with set_interpreter(interp.prev):
        concrete = [_bottom(p) for p in primals] + \
            [_bottom(t) for t, d in zip(tangents, diff) if d]
        g = _derived(graph, ("jvp", diff), lambda: _stage_fn(body, concrete, params["name"]))
        res = jit_p.bind(*primals, *[t for t, d in zip(tangents, diff) if d], graph=g,
                         name=f"jvp({params['name']})")
    m = len(res) // 2
    outs = []
    for o, t in zip(res[:m], res[m:]):
        outs.append(JVPTracer(interp, o, t if dkind(o.dtype) in "fc" else None))
    return tuple(outs)


def _vmap_rule(interp: Any, args: tuple, params: dict) -> Any:
    from .._vmap import BatchTracer, vmap
    graph = params["graph"]
    lifted = [interp.lift(a) for a in args]
    axes = tuple(0 if b else None for _, b in lifted)

    def body(*vals: Any) -> Any:
        return list(vmap(lambda *xs: list(eval_graph(graph, *xs)), in_axes=axes,
                         axis_name=interp.axis_name)(*vals))
    vals = [v for v, _ in lifted]
    with set_interpreter(interp.prev):
        g = _derived(graph, ("vmap", axes, interp.size, interp.axis_name),
                     lambda: _stage_fn(body, [_bottom(v) for v in vals], params["name"]))
        res = jit_p.bind(*vals, graph=g, name=f"vmap({params['name']})")
    return tuple(BatchTracer(interp, o) for o in res)


def _vjp_rule(interp: Any, args: tuple, params: dict) -> Any:
    from .._ad import Node, VJPTracer
    from .._rules import is_float
    graph = params["graph"]
    primals, parents, diff = _lift_diff(interp, args)
    with set_interpreter(interp.prev):
        split = _derived(graph, ("vjp", diff), lambda: _split_vjp(graph, diff, primals))
        fwd, bwd, n_out, out_float = split
        res = jit_p.bind(*primals, graph=fwd, name=f"fwd({params['name']})")
    outs, residuals = list(res[:n_out]), list(res[n_out:])

    def rule(ct: Any, _primals: tuple, _out: Any) -> tuple:
        import clnp as xp
        cts = ct if isinstance(ct, list) else [ct]
        cts = [c for c, fl in zip(cts, out_float) if fl]
        cts = [xp.zeros(o.shape, dtype=o.dtype, device=o.device) if c is None else c
               for c, o in zip(cts, [o for o, fl in zip(outs, out_float) if fl])]
        got = list(jit_p.bind(*residuals, *cts, graph=bwd, name=f"bwd({params['name']})"))
        it = iter(got)
        return tuple(next(it) if d else None for d in diff)
    prim = jit_p
    node = Node(prim, {}, parents, tuple(primals), outs, rule)
    return tuple(VJPTracer(interp, o, node if is_float(o) else None, i)
                 for i, o in enumerate(outs))


def _split_vjp(graph: Graph, diff: tuple, primals: list) -> tuple:
    """Stage forward+backward of ``graph`` once and split it at the cotangents: a forward
    graph (primals -> outputs + residuals) and a backward graph (residuals + cotangents ->
    cotangents of the differentiated inputs)."""
    from .._ad import vjp
    from .._rules import zeros_like
    concrete = [_bottom(p) for p in primals]
    with set_interpreter(EVAL):
        outs0 = eval_graph(graph, *concrete)
        out_float = tuple(dkind(o.dtype) in "fc" for o in outs0)
        # example cotangents made here, not under the caller's interpreter: under an outer
        # jit that would stage them into the outer graph, and the inner staging below would
        # then meet the outer tracers (jit(grad(jit(f))), issue #26)
        ct_vals = [zeros_like(o) for o, fl in zip(outs0, out_float) if fl]
    n = len(concrete)

    def joint(*vals: Any) -> Any:
        ps, cts = vals[:n], list(vals[n:])
        dp = [p for d, p in zip(diff, ps) if d]
        outs, f_vjp = vjp(_body_of_diff(graph, diff, ps), *dp)
        it = iter(cts)
        full_ct = [next(it) if fl else zeros_like(o) for o, fl in zip(outs, out_float)]
        in_cts = f_vjp(full_ct)
        return list(outs) + list(in_cts)
    g = _stage_fn(joint, concrete + ct_vals, "vjp")
    fwd, bwd = split_at_cotangents(g, n, len(ct_vals), len(outs0))
    return fwd, bwd, len(outs0), out_float


def split_at_cotangents(g: Graph, n: int, n_ct: int, n_out: int) -> tuple[Graph, Graph]:
    """Split a staged forward-and-backward graph ``g`` (inputs: ``n`` primals then ``n_ct``
    cotangents; outputs: ``n_out`` primal outputs then the input cotangents) by dependency on
    the cotangents: a forward graph (primals -> primal outputs + residuals) and a backward
    graph (residuals + cotangents -> input cotangents). ``pmap``'s VJP rule splits its
    per-device body the same way."""
    ct_ids = {v.n for v in g.in_binders[n:n + n_ct]}
    unknown: set[int] = set(ct_ids)
    for e in g.eqns:
        if any(isinstance(x, Var) and x.n in unknown for x in e.inputs):
            unknown.update(b.n for b in e.out_binders)
    known_eqns = [e for e in g.eqns if not any(b.n in unknown for b in e.out_binders)]
    bwd_eqns = [e for e in g.eqns if any(b.n in unknown for b in e.out_binders)]
    fwd_outs = g.outs[:n_out]
    bwd_outs = g.outs[n_out:]
    defined_known = {v.n for v in g.in_binders[:n]} | set(g.consts) | \
        {b.n for e in known_eqns for b in e.out_binders}
    res_vars: list[Var] = []
    seen: set[int] = set()
    for e in bwd_eqns:
        for x in e.inputs:
            if isinstance(x, Var) and x.n in defined_known and x.n not in seen and \
                    x.n not in g.consts:
                seen.add(x.n)
                res_vars.append(x)
    for x in bwd_outs:
        if isinstance(x, Var) and x.n in defined_known and x.n not in seen and \
                x.n not in g.consts:
            seen.add(x.n)
            res_vars.append(x)
    from .staging import simplify
    fwd = simplify(Graph(list(g.in_binders[:n]), known_eqns, list(fwd_outs) + res_vars,
                         dict(g.consts)))
    bwd = simplify(Graph(res_vars + list(g.in_binders[n:n + n_ct]), bwd_eqns, list(bwd_outs),
                         dict(g.consts)))
    return fwd, bwd


HIGHER_ORDER[("stage", "jit")] = _stage_rule
HIGHER_ORDER[("jvp", "jit")] = _jvp_rule
HIGHER_ORDER[("vmap", "jit")] = _vmap_rule
HIGHER_ORDER[("vjp", "jit")] = _vjp_rule


def jit(fun: Callable[..., Any] | None = None, *, static_argnums: int | Sequence[int] = (),
        static_argnames: str | Sequence[str] = (),
        donate_argnums: int | Sequence[int] = ()) -> Any:
    """Compile ``fun`` into fused OpenCL kernels (JAX's ``jax.jit``).

    The function is traced once per abstract signature of its arguments (pytree structure,
    shapes, dtypes, devices, weak types and static values) and compiled; later calls with the
    same signature replay the prepared launches. Usable as a decorator, with or without
    arguments. See docs/jit.md.

    Parameters
    ----------
    fun : callable, optional
        A pure function of arrays (or pytrees of arrays). Omitted: returns a decorator.
    static_argnums : int or sequence of int, default ()
        Positional arguments whose (hashable) values are baked into the trace; a new value
        retraces.
    static_argnames : str or sequence of str, default ()
        The same, by keyword.
    donate_argnums : int or sequence of int, default ()
        Arguments whose buffers the caller gives up: from the second call on, an output
        computed elementwise from a donated array of its shape and dtype is written into
        that array's buffer, and the donated Array then raises on any use (when a view of
        it exists elsewhere, or it is passed twice, its buffer is left alone).

    Returns
    -------
    callable
        The compiled function, with ``clear_cache()`` and ``lower(*args)`` (``.as_text()``
        for the staged IR, ``.kernel_sources()`` for the OpenCL sources one call launches).

    Raises
    ------
    TypeError
        ``fun`` is not callable, or ``static_argnums``/``donate_argnums`` are not ints
        (``static_argnames`` not strs); when called: a static argument is not hashable;
        Python control flow or ``float()`` on a traced value raises ``ConcretizationError``
        (a TypeError) naming the line.

    Examples
    --------
    >>> import clnp, clnp_grad as cg
    >>> @cg.jit
    ... def f(x, y):
    ...     return clnp.sum(clnp.exp(x) * y)
    >>> float(f(clnp.asarray([0.0, 0.0]), clnp.asarray([1.0, 2.0])))
    3.0
    >>> scale = cg.jit(lambda x, n: x * n, static_argnums=1)
    >>> print(scale(clnp.asarray([1.0, 2.0]), 3))
    [3. 6.]
    """
    def norm(v: Any) -> tuple:
        return (v,) if isinstance(v, (int, str)) else tuple(v)
    if fun is None:
        return lambda f: jit(f, static_argnums=static_argnums, static_argnames=static_argnames,
                             donate_argnums=donate_argnums)
    if not callable(fun):
        raise TypeError(f"jit: expected a function; got {type(fun).__name__}")
    check_argnums("jit", static_argnums, "static_argnums")
    check_argnums("jit", donate_argnums, "donate_argnums")
    snames = norm(static_argnames)
    if not all(isinstance(n, str) for n in snames):
        raise TypeError(f"jit: static_argnames must be a str or a sequence of str; got "
                        f"{static_argnames!r}")
    snums = norm(static_argnums)
    try:
        sig = inspect.signature(fun)
        params = list(sig.parameters)
        for name in snames:
            if name in params and params.index(name) not in snums and \
                    sig.parameters[name].kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD,):
                snums = snums + (params.index(name),)
    except (TypeError, ValueError):
        pass
    return Jitted(fun, snums, snames, norm(donate_argnums))


def clear_caches() -> None:
    """Forget every jitted function's traces and executables.

    Compiled programs stay in the per-device program cache and on disk, so a later call
    retraces but usually does not recompile.

    Returns
    -------
    None

    Examples
    --------
    >>> import clnp, clnp_grad as cg
    >>> f = cg.jit(lambda x: x + 1.0)
    >>> print(f(clnp.asarray([1.0])))
    [2.]
    >>> cg.clear_caches()
    >>> print(f(clnp.asarray([1.0])))
    [2.]
    """
    for j in _ALL:
        j.clear_cache()
