"""Structured control flow: ``cond``, ``switch``, ``while_loop``, ``fori_loop``, ``scan``.

Each is a higher-order primitive (``cond``, ``while``, ``scan``) whose parameters are
sub-programs: the user functions are staged to typed Graphs on the flattened operands, values
they close over are hoisted into explicit leading operands (closure conversion, so outer
transformations see them as inputs), and the primitive is bound. Eager impls run the
sub-graphs through :func:`_run_graph` (``eval_graph`` today, compiled executables under jit).

Rules (``HIGHER_ORDER``) rewrite the sub-graphs, never the Python functions: JVP is the
primitive on JVP-transformed graphs, reverse mode records one tape ``Node`` whose backward
rule binds the primitive again on VJP-transformed graphs (the branch / loop body is
recomputed inside the backward graph), vmap is the primitive on batched graphs (a batched
predicate becomes a select, or a masked loop). See docs/control_flow.md.
"""
from __future__ import annotations

import os
from contextvars import ContextVar
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

import clnp as xp
from clnp._core.prims import EVAL, current_interpreter, def_impl, primitive, set_interpreter

from ._ad import JVPInterpreter, JVPTracer, Node, VJPInterpreter, VJPTracer, backward
from ._core import HIGHER_ORDER, Tracer
from ._ir import Aval, Graph, StagingInterpreter, StagingTracer, Var, eval_graph
from ._rules import is_float
from ._args import check_callable
from ._tree import PyTreeDef, leaf_paths, tree_flatten, tree_unflatten
from ._vmap import BatchInterpreter, BatchTracer, _materialize
from clnp._core.dtypes import kind as dkind

__all__ = ["cond", "switch", "while_loop", "fori_loop", "scan"]


class _SubGraph(Graph):
    """A Graph used as a primitive parameter: hashed and compared by identity."""
    __hash__ = object.__hash__
    __eq__ = object.__eq__  # type: ignore[assignment]


class _Branches(tuple):
    """The ``branches`` parameter of ``cond``: a tuple of graphs that prints readably."""

    def __str__(self) -> str:
        return "(" + ", ".join(str(g).replace("\n", "\n  ") for g in self) + ")"


def _run_graph(graph: Graph, *args: Any) -> list[Any]:
    """Execute one sub-graph. Every eager execution of a control-flow body goes through here.

    On concrete arrays the body runs as a compiled executable (``clnp_grad.jit``'s fused
    kernels, replayed on each iteration); under a transformation it is interpreted with
    ``eval_graph`` so that the transformation sees every primitive."""
    from clnp._core.array import Array
    from clnp._core.prims import EVAL, current_interpreter
    if current_interpreter() is EVAL and all(isinstance(a, Array) for a in args):
        from ._jit.api import run_graph
        return run_graph(graph, list(args))
    return eval_graph(graph, *args)


def _loop_kernel(owner: Graph, cond: Graph | None, body: Graph, num_consts: int,
                 args: Sequence[Any]) -> Any:
    """The one-kernel form of a loop on concrete arrays (``_jit.loops``), or None.
    ``CLNP_LOOP_KERNELS=0`` turns it off (for comparisons)."""
    if current_interpreter() is not EVAL or os.environ.get("CLNP_LOOP_KERNELS") == "0":
        return None
    from ._jit.loops import loop_kernel
    return loop_kernel(owner, cond, body, num_consts, args)


# ------------------------------------------------------------------------------ primitives
_COND = primitive("cond", multiple_results=True)
_WHILE = primitive("while", multiple_results=True)
_SCAN = primitive("scan", multiple_results=True)


def _host_index(index: Any, n: int) -> int:
    i = int(bool(index)) if index.dtype == np.bool_ else int(index)
    return min(max(i, 0), n - 1)   # switch clamps, as JAX


@def_impl("cond", multiple_results=True)
def _cond_impl(index: Any, *operands: Any, branches: tuple) -> list[Any]:
    return _run_graph(branches[_host_index(index, len(branches))], *operands)


@def_impl("while", multiple_results=True)
def _while_impl(*args: Any, cond_graph: Graph, body_graph: Graph, num_consts: int) -> list:
    consts, carry = list(args[:num_consts]), list(args[num_consts:])
    lk = _loop_kernel(body_graph, cond_graph, body_graph, num_consts, args)
    if lk is not None:    # elementwise in the carry: one kernel, the loop inside
        return lk.run(args[0].device, consts, carry)
    while bool(_run_graph(cond_graph, *consts, *carry)[0]):
        carry = _run_graph(body_graph, *consts, *carry)
    return carry


@def_impl("scan", multiple_results=True)
def _scan_impl(*args: Any, body: Graph, length: int, reverse: bool, num_consts: int,
               num_carry: int) -> list:
    consts = list(args[:num_consts])
    carry = list(args[num_consts:num_consts + num_carry])
    xs = args[num_consts + num_carry:]
    if not xs and len(body.outs) == num_carry:    # a counted loop (fori_loop)
        lk = _loop_kernel(body, None, body, num_consts, args)
        if lk is not None:
            return lk.run(args[0].device, consts, carry, length)
    steps = []
    for i in (range(length - 1, -1, -1) if reverse else range(length)):
        outs = _run_graph(body, *consts, *carry, *[x[i] for x in xs])
        carry, y = outs[:num_carry], outs[num_carry:]
        steps.append(y)
    if reverse:
        steps.reverse()
    ys = []
    for j, v in enumerate(body.outs[num_carry:]):
        if length == 0:
            ys.append(xp.zeros((0,) + v.aval.shape, dtype=v.aval.dtype,
                               device=_device_of(list(args))))
        else:
            ys.append(xp.stack([s[j] for s in steps]))
    return list(carry) + ys


# ------------------------------------------------------------------------------ staging
def _aval(x: Any) -> Aval:
    return Aval(tuple(x.shape), np.dtype(x.dtype))


def _device_of(leaves: Sequence[Any]) -> Any:
    """The device of the first clnp array or tracer among ``leaves`` (NumPy's are "cpu")."""
    for v in leaves:
        if _is_array(v):
            return v.device
    return None


def _ones(shape: tuple, dtype: Any, device: Any) -> Any:
    with set_interpreter(EVAL):
        return xp.ones(shape, dtype=dtype, device=device)


def _example(x: Any) -> Any:
    """A concrete array with ``x``'s shape and dtype to stage with: ``x``'s own value when it
    can be read through the tracers, ones otherwise (under vmap the value has another shape)."""
    v = x
    while isinstance(v, Tracer):
        nv = v._value
        if not hasattr(nv, "shape") or tuple(nv.shape) != tuple(v.shape) or nv.dtype != v.dtype:
            return _ones(tuple(x.shape), x.dtype, x.device)
        v = nv
    return v


def _example_row(x: Any) -> Any:
    """An example of one slice ``x[i]`` along the leading axis."""
    if x.shape[0] == 0:
        return _ones(tuple(x.shape[1:]), x.dtype, x.device)
    v = _example(x)
    with set_interpreter(EVAL):
        return v[0]


class _Stager(StagingInterpreter):
    """Stages a control-flow body on concrete example values (at the bottom of the stack), so
    it is independent of the transformations around the call. Values the body closes over
    (arrays, and tracers of any enclosing transformation) become graph constants, staged with
    an example of their value; ``_close`` turns them into explicit inputs."""

    def __init__(self, what: str):
        super().__init__(EVAL)
        self.name = what
        self._examples: dict[int, Any] = {}

    def operand(self, x: Any) -> tuple[Any, Any]:
        if isinstance(x, StagingTracer) and x._interp is self:
            return x.var, x.value
        if hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, np.ndarray):
            _check_scalar_devices(x.device if _is_array(x) else None)
            var, _ = super().operand(x)
            ex = self._examples.get(id(x))
            if ex is None:
                ex = self._examples[id(x)] = _example(x)
            return var, ex
        return super().operand(x)


# Python scalars entering a call (carries, operands, a predicate) have no device. They are
# placed on the device of the call's arrays; a call without any ("uncommitted", as JAX's
# weak-typed scalars) starts on the default device and, when a body is seen to close over an
# array of another device, is staged again from the start with its scalars there.
class _ScalarDevice:
    """Where one call's Python scalars go: ``device``, fixed when ``committed``."""

    def __init__(self, leaves: Sequence[Any]):
        dev = _device_of(leaves)
        self.committed = dev is not None
        self.device = dev if dev is not None else xp.default_device()


class _Restage(Exception):
    """Raised while staging: the uncommitted call ``scope`` must start over on ``device``."""

    def __init__(self, scope: _ScalarDevice, device: Any):
        super().__init__(f"lax: Python scalars move to {device}")
        self.scope, self.device = scope, device


_UNCOMMITTED: ContextVar[tuple[_ScalarDevice, ...]] = ContextVar("clnp_lax_uncommitted",
                                                                   default=())


def _check_scalar_devices(device: Any) -> None:
    """A body reads an array on ``device``: the outermost enclosing uncommitted call whose
    scalars sit elsewhere starts over there (its nested calls then see its new operands)."""
    if device is None:
        return
    for scope in _UNCOMMITTED.get():
        if device is not scope.device:
            raise _Restage(scope, device)


def _on_operands_device(leaves: Sequence[Any], run: Callable[[Any], Any]) -> Any:
    """``run(device)``, with ``device`` the one ``leaves``' arrays are on; with no arrays
    among them, the device of the first array of another device that a body closes over
    (``run`` is then called a second time), else the default device."""
    scope = _ScalarDevice(leaves)
    if scope.committed:
        return run(scope.device)
    token = _UNCOMMITTED.set(_UNCOMMITTED.get() + (scope,))
    try:
        return run(scope.device)
    except _Restage as r:
        if r.scope is not scope:
            raise
        device = r.device
    finally:
        _UNCOMMITTED.reset(token)
    return run(device)


class _Staged(NamedTuple):
    in_binders: list
    eqns: list
    outs: list
    consts: list          # [(Var, captured value)]
    out_tree: PyTreeDef

    @property
    def out_avals(self) -> list[Aval]:
        return [v.aval for v in self.outs]


def _is_array(x: Any) -> bool:
    return isinstance(x, (Tracer, xp.Array))


def _as_array(x: Any, what: str, device: Any = None, dtype: Any = None) -> Any:
    if _is_array(x):
        return x
    if isinstance(x, (bool, int, float, complex, np.generic, np.ndarray)):
        with set_interpreter(EVAL):
            return xp.asarray(x, dtype=dtype, device=device)
    raise TypeError(f"{what}: operands, carries and outputs must be arrays, Python scalars "
                    f"or pytrees of them; got a leaf of type {type(x).__name__}")


def _stage(fun: Callable[..., Any], examples: Sequence[Any], in_tree: PyTreeDef,
           what: str, device: Any) -> _Staged:
    """Stage ``fun(*tree_unflatten(in_tree, leaves))`` to a graph (consts not yet hoisted);
    Python scalars it returns become arrays on ``device``."""
    interp = _Stager(what)
    binders = [Var(_aval(e)) for e in examples]
    tracers = [StagingTracer(interp, b, e) for b, e in zip(binders, examples)]
    try:
        with set_interpreter(interp):
            out = fun(*tree_unflatten(in_tree, tracers))
        o_flat, o_tree = tree_flatten(out)
        o_flat = [_as_array(o, what, device) for o in o_flat]
        outs = [interp.operand(o)[0] for o in o_flat]
    finally:
        interp.active = False
    consts = [(v, interp.consts[v.n]) for v in interp._const_vars.values()]
    return _Staged(binders, interp.eqns, outs, consts, o_tree)


def _close(staged: Sequence[_Staged]) -> tuple[list[_SubGraph], list[Any]]:
    """Closure conversion: the constants captured by any of ``staged`` (by identity) become
    leading inputs shared by all the graphs, in one order."""
    order: dict[int, Any] = {}
    for s in staged:
        for _, val in s.consts:
            order.setdefault(id(val), val)
    graphs = []
    for s in staged:
        mine = {id(val): v for v, val in s.consts}
        cb = [mine[i] if i in mine else Var(_aval(val)) for i, val in order.items()]
        g = _SubGraph(cb + list(s.in_binders), s.eqns, list(s.outs))
        g.typecheck()
        graphs.append(g)
    return graphs, list(order.values())


# ------------------------------------------------------------------------------ messages
_paths = leaf_paths     # a readable path per leaf: carry[0]['w']


def _typ(a: Aval) -> str:
    return f"shape {a.shape} dtype {a.dtype.name}"


def _check_same(what: str, ref_name: str, ref_tree: PyTreeDef, ref_avals: Sequence[Aval],
                got_name: str, got_tree: PyTreeDef, got_avals: Sequence[Aval],
                root: str) -> None:
    """Raise naming the first leaf whose structure, shape or dtype differs."""
    if ref_tree != got_tree:
        raise TypeError(f"{what}: {got_name} must have the same structure as {ref_name}; "
                        f"{ref_name} is {ref_tree!r} but {got_name} is {got_tree!r}")
    for path, a, b in zip(_paths(ref_tree, root), ref_avals, got_avals):
        if a != b:
            err = TypeError if a.shape == b.shape else ValueError
            raise err(f"{what}: {path} has {_typ(a)} in {ref_name} but {_typ(b)} in "
                      f"{got_name}; both must match (cast with astype, or reshape)")


# ------------------------------------------------------------------------------ calls
def _cond_call(index: Any, fns: Sequence[Callable[..., Any]], operands: list, what: str,
               names: Sequence[str], ref: int = 0) -> Any:
    """``index`` is an array or a NumPy scalar of its dtype (a Python pred or index)."""
    leaves, tree = tree_flatten(operands)
    return _on_operands_device(leaves + [index], lambda dev: _cond_on(
        _as_array(index, what, dev), fns, [_as_array(o, what, dev) for o in leaves], tree,
        what, names, ref, dev))


def _cond_on(index: Any, fns: Sequence[Callable[..., Any]], ops: list, tree: PyTreeDef,
             what: str, names: Sequence[str], ref: int, dev: Any) -> Any:
    examples = [_example(o) for o in ops]
    staged = [_stage(f, examples, tree, what, dev) for f in fns]
    for k, (s, nm) in enumerate(zip(staged, names)):
        if k != ref:
            _check_same(what, f"the output of {names[ref]}", staged[ref].out_tree,
                        staged[ref].out_avals, f"the output of {nm}", s.out_tree,
                        s.out_avals, "output")
    graphs, consts = _close(staged)
    outs = _COND.bind(index, *consts, *ops, branches=_Branches(graphs))
    return tree_unflatten(staged[0].out_tree, list(outs))


def _check_carry(what: str, fname: str, init_tree: PyTreeDef, init_avals: list,
                 got_tree: PyTreeDef, got_avals: list) -> None:
    _check_same(what, "the initial carry", init_tree, init_avals,
                f"the carry returned by {fname}", got_tree, got_avals, "carry")


def _cast_scalars(out: Any, ref: list, tree: PyTreeDef) -> Any:
    """Python scalars returned for a carry take the carry's dtype (JAX's weak types)."""
    leaves, t = tree_flatten(out)
    if t != tree:
        return out
    return tree_unflatten(t, [o if _is_array(o) else _as_array(o, "", r.device, r.dtype)
                              for o, r in zip(leaves, ref)])


def _while_call(cond_fun: Callable, body_fun: Callable, init: Any, what: str) -> Any:
    leaves, tree = tree_flatten(init)
    return _on_operands_device(leaves, lambda dev: _while_on(
        cond_fun, body_fun, [_as_array(v, what, dev) for v in leaves], tree,
        tree_flatten([init])[1], what, dev))


def _while_on(cond_fun: Callable, body_fun: Callable, leaves: list, tree: PyTreeDef,
              in_tree: PyTreeDef, what: str, dev: Any) -> Any:
    examples = [_example(v) for v in leaves]
    s_cond = _stage(cond_fun, examples, in_tree, what, dev)
    p = s_cond.out_avals
    if s_cond.out_tree.kind != "leaf" or p[0].shape != () or p[0].dtype != np.bool_:
        got = (_typ(p[0]) if s_cond.out_tree.kind == "leaf" else
               f"a pytree {s_cond.out_tree!r}")
        raise TypeError(f"{what}: cond_fun must return a boolean scalar (shape (), dtype "
                        f"bool); got {got}")
    s_body = _stage(lambda c: _cast_scalars(body_fun(c), leaves, tree), examples, in_tree, what,
                    dev)
    _check_carry(what, "body_fun", tree, [_aval(v) for v in leaves], s_body.out_tree,
                 s_body.out_avals)
    (gc, gb), consts = _close([s_cond, s_body])
    outs = _WHILE.bind(*consts, *leaves, cond_graph=gc, body_graph=gb,
                       num_consts=len(consts))
    return tree_unflatten(tree, list(outs))


def _scan_call(f: Callable, init: Any, xs: Any, length: int | None, reverse: bool,
               what: str) -> tuple[Any, Any]:
    c_leaves, c_tree = tree_flatten(init)
    x_leaves, x_tree = tree_flatten(xs)
    return _on_operands_device(c_leaves + x_leaves, lambda dev: _scan_on(
        f, init, [_as_array(v, what, dev) for v in c_leaves], c_tree,
        [_as_array(v, what, dev) for v in x_leaves], x_tree, length, reverse, what, dev))


def _scan_on(f: Callable, init: Any, c_leaves: list, c_tree: PyTreeDef, x_leaves: list,
             x_tree: PyTreeDef, length: int | None, reverse: bool, what: str,
             dev: Any) -> tuple[Any, Any]:
    x_paths = _paths(x_tree, "xs")
    for pth, x in zip(x_paths, x_leaves):
        if x.ndim == 0:
            raise ValueError(f"{what}: {pth} is a scalar (shape ()); every leaf of xs needs a "
                             f"leading axis to scan over")
    lengths = {pth: x.shape[0] for pth, x in zip(x_paths, x_leaves)}
    if len(set(lengths.values())) > 1:
        listed = ", ".join(f"{pth} has length {n}" for pth, n in lengths.items())
        raise ValueError(f"{what}: all leaves of xs must have the same leading length; "
                         f"{listed}")
    if length is not None:
        if isinstance(length, bool) or not isinstance(length, (int, np.integer)) or length < 0:
            raise TypeError(f"{what}: length must be a non-negative Python int; got "
                            f"{length!r}")
        length = int(length)
        if lengths and length != next(iter(lengths.values())):
            pth, n = next(iter(lengths.items()))
            raise ValueError(f"{what}: length={length} but {pth} has leading length {n}")
    elif lengths:
        length = next(iter(lengths.values()))
    else:
        raise ValueError(f"{what}: xs is None (or has no leaves), so the number of steps is "
                         f"unknown; pass length=")
    examples = [_example(v) for v in c_leaves] + [_example_row(x) for x in x_leaves]
    in_tree = tree_flatten([init, tree_unflatten(x_tree, x_leaves)])[1]
    y_tree: dict[str, PyTreeDef] = {}

    def body(c: Any, x: Any) -> Any:
        r = f(c, x)
        if not (isinstance(r, (tuple, list)) and len(r) == 2):
            raise TypeError(f"{what}: f must return a pair (carry, y); got "
                            f"{type(r).__name__}"
                            + (f" of length {len(r)}" if isinstance(r, (tuple, list)) else ""))
        c_out = _cast_scalars(r[0], c_leaves, c_tree)
        ys, y_tree["t"] = tree_flatten(r[1])
        y_tree["c"] = tree_flatten(c_out)[1]
        return list(tree_flatten(c_out)[0]) + list(ys)
    s = _stage(body, examples, in_tree, what, dev)
    nc = y_tree["c"].num_leaves
    _check_carry(what, "f", c_tree, [_aval(v) for v in c_leaves], y_tree["c"],
                 s.out_avals[:nc])
    (g,), consts = _close([s])
    outs = list(_SCAN.bind(*consts, *c_leaves, *x_leaves, body=g, length=length,
                           reverse=bool(reverse), num_consts=len(consts),
                           num_carry=len(c_leaves)))
    n = len(c_leaves)
    return tree_unflatten(c_tree, outs[:n]), tree_unflatten(y_tree["t"], outs[n:])


# ------------------------------------------------------------------------------ public API
def _check_pred(pred: Any, what: str) -> Any:
    if isinstance(pred, (bool, np.bool_)):
        return np.bool_(pred)     # placed with the operands by _cond_call
    if not hasattr(pred, "dtype") or not hasattr(pred, "shape"):
        raise TypeError(f"{what}: pred must be a boolean scalar (a Python bool or a bool array "
                        f"of shape ()); got {type(pred).__name__}")
    if pred.dtype != np.bool_:
        raise TypeError(f"{what}: pred must be a boolean scalar; got dtype {pred.dtype} "
                        f"(compare explicitly, e.g. x != 0)")
    if tuple(pred.shape) != ():
        raise ValueError(f"{what}: pred must be a scalar (shape ()); got shape "
                         f"{tuple(pred.shape)} (reduce it with any()/all(), or use "
                         f"clnp.where for an elementwise choice)")
    return pred if _is_array(pred) else np.bool_(pred)    # a NumPy 0-d array


def cond(pred: Any, true_fun: Callable[..., Any], false_fun: Callable[..., Any],
         *operands: Any) -> Any:
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)`` (JAX's ``lax.cond``).

    Only the chosen branch runs, except under ``vmap`` with a batched ``pred``, where both
    run and the results are selected elementwise. Differentiable in both modes.

    Parameters
    ----------
    pred : bool or 0-d array
        The predicate; it may be traced.
    true_fun, false_fun : callable
        Functions of ``*operands`` returning the same pytree structure, shapes and dtypes.
    *operands : array or pytree
        The branches' arguments.

    Returns
    -------
    array or pytree
        The chosen branch's result.

    Raises
    ------
    ValueError
        ``pred`` is not a scalar, or the branches' outputs differ in shape.
    TypeError
        The branches' outputs differ in structure or dtype.

    Examples
    --------
    >>> import clnp
    >>> from clnp_grad import lax
    >>> print(lax.cond(clnp.asarray(True), lambda x: x + 1.0, lambda x: x - 1.0,
    ...                clnp.asarray([1.0])))
    [2.]
    """
    pred = _check_pred(pred, "lax.cond")
    for nm, fn in (("true_fun", true_fun), ("false_fun", false_fun)):
        if not callable(fn):
            raise TypeError(f"lax.cond: {nm} must be callable; got {type(fn).__name__}")
    return _cond_call(pred, [false_fun, true_fun], list(operands), "lax.cond",
                      ["false_fun", "true_fun"], ref=1)


def switch(index: Any, branches: Sequence[Callable[..., Any]], *operands: Any) -> Any:
    """``branches[index](*operands)`` (JAX's ``lax.switch``).

    Parameters
    ----------
    index : int or 0-d integer array
        Which branch; it may be traced, and is clamped to ``[0, len(branches) - 1]`` as in JAX.
    branches : sequence of callable
        Functions of ``*operands`` returning the same structure, shapes and dtypes.
    *operands : array or pytree
        The branches' arguments.

    Returns
    -------
    array or pytree
        The chosen branch's result.

    Raises
    ------
    TypeError
        ``branches`` is not a non-empty sequence of callables, or the outputs differ in
        structure or dtype.
    ValueError
        ``index`` is not a scalar, or the branches' outputs differ in shape.

    Examples
    --------
    >>> import clnp
    >>> from clnp_grad import lax
    >>> branches = [lambda x: x, lambda x: x * 2.0, lambda x: x * 3.0]
    >>> print(lax.switch(clnp.asarray(1), branches, clnp.asarray([1.0])))
    [2.]
    >>> print(lax.switch(clnp.asarray(5), branches, clnp.asarray([1.0])))  # clamped
    [3.]
    """
    if not isinstance(branches, (list, tuple)) or not branches or \
            not all(callable(b) for b in branches):
        raise TypeError("lax.switch: branches must be a non-empty sequence of callables")
    if isinstance(index, (bool, np.bool_)) or not (
            isinstance(index, (int, np.integer)) or (hasattr(index, "dtype") and
                                                     dkind(index.dtype) in "iu")):
        got = f"dtype {index.dtype}" if hasattr(index, "dtype") else type(index).__name__
        raise TypeError(f"lax.switch: index must be an integer scalar; got {got}")
    if not hasattr(index, "shape") or isinstance(index, np.generic):
        index = np.int32(min(max(int(index), -1), 2 ** 31 - 1))   # clamped again by the impl
    elif tuple(index.shape) != ():
        raise ValueError(f"lax.switch: index must be a scalar (shape ()); got shape "
                         f"{tuple(index.shape)}")
    return _cond_call(index, list(branches), list(operands), "lax.switch",
                      [f"branches[{i}]" for i in range(len(branches))])


def while_loop(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any],
               init_val: Any) -> Any:
    """``val = init_val; while cond_fun(val): val = body_fun(val)`` (JAX's ``lax.while_loop``).

    Forward-mode differentiable and batchable; not reverse-mode differentiable (use
    ``fori_loop`` with Python int bounds, or ``scan``).

    Parameters
    ----------
    cond_fun : callable
        ``cond_fun(val)`` returning a boolean scalar.
    body_fun : callable
        ``body_fun(val)`` returning a carry of ``init_val``'s structure, shapes and dtypes.
    init_val : array or pytree
        The initial carry.

    Returns
    -------
    array or pytree
        The final carry.

    Raises
    ------
    TypeError
        ``cond_fun`` or ``body_fun`` is not callable, ``cond_fun`` does not return a boolean
        scalar, or ``body_fun`` changes the carry's structure or dtype.
    ValueError
        ``body_fun`` changes the carry's shape.

    Examples
    --------
    >>> import clnp
    >>> from clnp_grad import lax
    >>> int(lax.while_loop(lambda v: v < 10, lambda v: v * 2, clnp.asarray(1)))
    16
    """
    for nm, fn in (("cond_fun", cond_fun), ("body_fun", body_fun)):
        check_callable("lax.while_loop", fn, nm)
    return _while_call(cond_fun, body_fun, init_val, "lax.while_loop")


def fori_loop(lower: Any, upper: Any, body_fun: Callable[[Any, Any], Any],
              init_val: Any) -> Any:
    """``val = init_val; for i in range(lower, upper): val = body_fun(i, val)``.

    JAX's ``lax.fori_loop``. With Python int bounds this is a ``scan`` (reverse-mode
    differentiable); with traced bounds a ``while_loop``.

    Parameters
    ----------
    lower, upper : int or 0-d integer array
        The bounds.
    body_fun : callable
        ``body_fun(i, val)`` returning a carry of ``init_val``'s structure, shapes and dtypes;
        ``i`` is an int32 array (the bounds' dtype when they are arrays).
    init_val : array or pytree
        The initial carry.

    Returns
    -------
    array or pytree
        The final carry.

    Raises
    ------
    TypeError
        ``body_fun`` is not callable, the bounds are not integers, or ``body_fun`` changes
        the carry's structure or dtype.
    ValueError
        ``body_fun`` changes the carry's shape.

    Examples
    --------
    >>> import clnp
    >>> from clnp_grad import lax
    >>> int(lax.fori_loop(0, 4, lambda i, v: v + i, clnp.asarray(0)))
    6
    """
    what = "lax.fori_loop"
    check_callable(what, body_fun, "body_fun")
    i_leaves, i_tree = tree_flatten(init_val)
    ref_avals = [_aval(_as_array(v, what, _device_of(i_leaves))) for v in i_leaves]

    def step(i: Any, x: Any) -> Any:
        out = body_fun(i, x)
        out = _cast_scalars(out, tree_flatten(x)[0], i_tree)
        o_leaves, o_tree = tree_flatten(out)
        _check_same(what, "the initial carry", i_tree, ref_avals,
                    "the carry returned by body_fun", o_tree,
                    [_aval(_as_array(v, what)) for v in o_leaves], "carry")
        return out
    static = all(isinstance(b, (int, np.integer)) and not isinstance(b, (bool, np.bool_))
                 for b in (lower, upper))
    if static:
        i0 = np.int32(lower)    # a scalar: placed with the carry by _scan_call

        def f(c: Any, _: Any) -> Any:
            i, x = c
            return (i + 1, step(i, x)), None
        (_, out), _ = _scan_call(f, (i0, init_val), None, max(int(upper) - int(lower), 0),
                                 False, what)
        return out
    for nm, b in (("lower", lower), ("upper", upper)):
        if not (isinstance(b, (int, np.integer)) or (hasattr(b, "dtype") and
                                                     dkind(b.dtype) in "iu")) or \
                isinstance(b, (bool, np.bool_)) or tuple(getattr(b, "shape", ())) != ():
            raise TypeError(f"{what}: {nm} must be an integer scalar; got "
                            f"{getattr(b, 'dtype', type(b).__name__)} "
                            f"{tuple(getattr(b, 'shape', ()))}")
    dt = next((b.dtype for b in (upper, lower) if hasattr(b, "dtype")), np.dtype(np.int32))
    # Python bounds stay NumPy scalars of dt, placed with the carry by _while_call
    lo = lower if hasattr(lower, "shape") else dt.type(int(lower))
    hi = upper if hasattr(upper, "shape") else dt.type(int(upper))
    if lo.dtype != dt:
        lo = xp.astype(lo, dt) if _is_array(lo) else dt.type(lo)
    if hi.dtype != dt:
        hi = xp.astype(hi, dt) if _is_array(hi) else dt.type(hi)
    _, _, out = _while_call(lambda c: c[0] < c[1],
                            lambda c: (c[0] + 1, c[1], step(c[0], c[2])),
                            (lo, hi, init_val), what)
    return out


def scan(f: Callable[[Any, Any], Any], init: Any, xs: Any = None, length: int | None = None,
         reverse: bool = False) -> tuple[Any, Any]:
    """Loop ``f`` over the leading axis of ``xs``, carrying state (JAX's ``lax.scan``).

    ``carry = init; for x in xs: carry, y = f(carry, x)``; returns ``(carry, stacked ys)``.
    Differentiable in both modes and batchable.

    Parameters
    ----------
    f : callable
        ``f(carry, x) -> (carry, y)``; the carry keeps its structure, shapes and dtypes.
    init : array or pytree
        The initial carry.
    xs : array or pytree, optional
        Arrays sharing a leading length; None to loop ``length`` times with ``x = None``.
    length : int, optional
        The number of steps; required when ``xs`` is None.
    reverse : bool, default False
        Walk from the end (the ys stay in ``xs`` order).

    Returns
    -------
    carry : array or pytree
        The final carry.
    ys : array or pytree
        The ``y`` of every step, stacked along a new leading axis.

    Raises
    ------
    ValueError
        ``xs`` is None without ``length``, the leading lengths differ, or ``f`` changes the
        carry's shape.
    TypeError
        ``f`` is not callable, or changes the carry's structure or dtype.

    Examples
    --------
    >>> import clnp
    >>> from clnp_grad import lax
    >>> carry, ys = lax.scan(lambda c, x: (c + x, c * x), clnp.asarray(0.0),
    ...                      clnp.asarray([1.0, 2.0, 3.0]))
    >>> print(carry, ys)
    6.0 [0. 2. 9.]
    """
    check_callable("lax.scan", f, "f")
    return _scan_call(f, init, xs, length, reverse, "lax.scan")


# ------------------------------------------------------------------------------ helpers for rules
def _zeros(p: Any) -> Any:
    return xp.zeros(tuple(p.shape), dtype=p.dtype, device=p.device)


def _jvp_of(graph: Graph, primals: list, tangents: list) -> tuple[list, list]:
    """Push ``tangents`` (None = zero) through ``graph`` at ``primals``, traced at the current
    level. Output tangents: zeros materialised for float outputs, None for the others."""
    interp = JVPInterpreter(current_interpreter())
    try:
        args = [p if t is None else JVPTracer(interp, p, t) for p, t in zip(primals, tangents)]
        with set_interpreter(interp):
            outs = eval_graph(graph, *args)
    finally:
        interp.active = False
    ps, ts = [], []
    for o in outs:
        p, t = (o.primal, o.tangent) if isinstance(o, JVPTracer) and o._interp is interp \
            else (o, None)
        ps.append(p)
        ts.append((_zeros(p) if t is None else t) if is_float(p) else None)
    return ps, ts


def _vjp_of(graph: Graph, primals: list, diff: list, out_cts: list) -> list:
    """Cotangents of ``graph``'s inputs marked in ``diff`` (zeros where none flows; None for
    the others), for output cotangents ``out_cts`` (None = zero), traced at the current
    level. The forward values are recomputed here."""
    interp = VJPInterpreter(current_interpreter())
    try:
        args = [VJPTracer(interp, p, None) if d else p for p, d in zip(primals, diff)]
        seqs = [a.seq if d else None for a, d in zip(args, diff)]
        with set_interpreter(interp):
            outs = eval_graph(graph, *args)
    finally:
        interp.active = False
    acc = backward(interp, outs, out_cts)
    res = []
    for s, p in zip(seqs, primals):
        c = acc.get(s) if s is not None else None
        res.append(None if s is None else (_zeros(p) if c is None else c))
    return res


def _batch_of(graph: Graph, vals: list, batched: Sequence[bool], size: int,
              out_batched: Sequence[bool], axis_name: Any = None) -> list:
    """Run ``graph`` batched (batch axis first on the ``batched`` inputs), traced at the
    current level; outputs marked in ``out_batched`` are materialised along the batch.
    ``axis_name``: the enclosing vmap's, so collectives in the body act across its batch."""
    interp = BatchInterpreter(current_interpreter(), size, axis_name)
    try:
        args = [BatchTracer(interp, v) if b else v for v, b in zip(vals, batched)]
        with set_interpreter(interp):
            outs = eval_graph(graph, *args)
    finally:
        interp.active = False
    res = []
    for o, want in zip(outs, out_batched):
        owned = isinstance(o, BatchTracer) and o._interp is interp
        v = o.value if owned else o
        if owned and not want:   # pragma: no cover (the dependence analysis is conservative)
            raise AssertionError("lax vmap: an output became batched unexpectedly")
        res.append(_materialize(v, owned, size) if want else v)
    return res


def _deps(graph: Graph, flags: Sequence[bool]) -> list[bool]:
    """Which outputs depend on the flagged inputs (a conservative data-flow pass)."""
    dep = {v.n for v, f in zip(graph.in_binders, flags) if f}
    for e in graph.eqns:
        if any(isinstance(x, Var) and x.n in dep for x in e.inputs):
            dep.update(b.n for b in e.out_binders)
    return [isinstance(o, Var) and o.n in dep for o in graph.outs]


def _traced_outs(interp: Any, cls: type, outs: Sequence[Any], owned: bool) -> Any:
    """Results of a call that carries no derivative: still traced when an input was, so that
    bool()/float() on them keep raising inside the transformation."""
    if not owned:
        return tuple(outs)
    return tuple(cls(interp, o, None) for o in outs)


def _owns(interp: Any, args: Sequence[Any]) -> bool:
    return any(isinstance(a, Tracer) and a._interp is interp for a in args)


# ------------------------------------------------------------------------------ JVP rules
def _cond_jvp(interp: JVPInterpreter, args: tuple, params: dict) -> Any:
    lifted = [interp.lift(a) for a in args]
    primals = [p for p, _ in lifted]
    index, ops, t_ops = primals[0], primals[1:], [t for _, t in lifted[1:]]
    has_t = [t is not None and is_float(p) for p, t in zip(ops, t_ops)]
    with set_interpreter(interp.prev):
        if not any(has_t):
            return _traced_outs(interp, JVPTracer, _COND.bind(*primals, **params),
                                _owns(interp, args))
        n = len(ops)

        def make(g: Graph) -> Callable:
            def f(*a: Any) -> Any:
                it = iter(a[n:])
                ps, ts = _jvp_of(g, list(a[:n]), [next(it) if h else None for h in has_t])
                return ps, [t for t in ts if t is not None]
            return f
        ps, ts = _cond_call(index, [make(g) for g in params["branches"]],
                            list(ops) + [t for t, h in zip(t_ops, has_t) if h], "lax.cond",
                            ["branch"] * len(params["branches"]))
    it = iter(ts)
    return tuple(JVPTracer(interp, p, next(it) if is_float(p) else None) for p in ps)


def _while_jvp(interp: JVPInterpreter, args: tuple, params: dict) -> Any:
    nc, cg, bg = params["num_consts"], params["cond_graph"], params["body_graph"]
    lifted = [interp.lift(a) for a in args]
    primals = [p for p, _ in lifted]
    tangents = [t if is_float(p) else None for p, t in lifted]
    consts, carry = primals[:nc], primals[nc:]
    with set_interpreter(interp.prev):
        if all(t is None for t in tangents):
            return _traced_outs(interp, JVPTracer, _WHILE.bind(*primals, **params),
                                _owns(interp, args))
        c_t = tangents[:nc]
        carry_f = [is_float(p) for p in carry]
        carry_t = [(_zeros(p) if t is None else t) for p, t in zip(carry, tangents[nc:])
                   if is_float(p)]

        def body(state: Any) -> Any:
            ps, ts = state
            it = iter(ts)
            outs, touts = _jvp_of(bg, list(consts) + list(ps),
                                  list(c_t) + [next(it) if f else None for f in carry_f])
            return outs, [t for t in touts if t is not None]
        ps, ts = _while_call(lambda s: eval_graph(cg, *consts, *s[0])[0], body,
                             (list(carry), carry_t), "lax.while_loop")
    it = iter(ts)
    return tuple(JVPTracer(interp, p, next(it) if f else None) for p, f in zip(ps, carry_f))


def _split_scan(vals: Sequence[Any], params: dict) -> tuple[list, list, list]:
    nc, ncar = params["num_consts"], params["num_carry"]
    return list(vals[:nc]), list(vals[nc:nc + ncar]), list(vals[nc + ncar:])


def _scan_jvp(interp: JVPInterpreter, args: tuple, params: dict) -> Any:
    body, ncar = params["body"], params["num_carry"]
    lifted = [interp.lift(a) for a in args]
    primals = [p for p, _ in lifted]
    tangents = [t if is_float(p) else None for p, t in lifted]
    with set_interpreter(interp.prev):
        if all(t is None for t in tangents):
            return _traced_outs(interp, JVPTracer, _SCAN.bind(*primals, **params),
                                _owns(interp, args))
        consts, carry, xs = _split_scan(primals, params)
        c_t, _, x_t = _split_scan(tangents, params)
        carry_f = [is_float(p) for p in carry]
        carry_t = [(_zeros(p) if t is None else t)
                   for p, t in zip(carry, _split_scan(tangents, params)[1]) if is_float(p)]
        x_has = [t is not None for t in x_t]

        def f(c: Any, x: Any) -> Any:
            (ps, ts), (xps, xts) = c, x
            itc, itx = iter(ts), iter(xts)
            outs, touts = _jvp_of(body, consts + list(ps) + list(xps),
                                  c_t + [next(itc) if fl else None for fl in carry_f]
                                  + [next(itx) if h else None for h in x_has])
            return ((outs[:ncar], [t for t in touts[:ncar] if t is not None]),
                    (outs[ncar:], [t for t in touts[ncar:] if t is not None]))
        (cp, ct), (yp, yt) = _scan_call(f, (carry, carry_t),
                                        (xs, [t for t in x_t if t is not None]),
                                        params["length"], params["reverse"], "lax.scan")
    itc, ity = iter(ct), iter(yt)
    return (tuple(JVPTracer(interp, p, next(itc) if is_float(p) else None) for p in cp)
            + tuple(JVPTracer(interp, p, next(ity) if is_float(p) else None) for p in yp))


# ------------------------------------------------------------------------------ VJP rules
def _cond_vjp(interp: VJPInterpreter, args: tuple, params: dict) -> Any:
    lifted = [interp.lift(a) for a in args]
    primals = [p for p, _ in lifted]
    parents = [r for _, r in lifted]
    with set_interpreter(interp.prev):
        outs = list(_COND.bind(*primals, **params))
    index, ops = primals[0], primals[1:]
    diff = [r is not None and is_float(p) for p, r in zip(ops, parents[1:])]
    if not any(diff):
        return _traced_outs(interp, VJPTracer, outs, _owns(interp, args))
    out_f = [is_float(o) for o in outs]
    n = len(ops)

    def rule(ct: Any, _primals: tuple, _out: Any) -> tuple:
        cts = [(_zeros(o) if c is None else c) for c, o, f in zip(ct, outs, out_f) if f]

        def make(g: Graph) -> Callable:
            def f(*a: Any) -> Any:
                it = iter(a[n:])
                got = _vjp_of(g, list(a[:n]), diff, [next(it) if fl else None for fl in out_f])
                return [c for c, d in zip(got, diff) if d]
            return f
        res = iter(_cond_call(index, [make(g) for g in params["branches"]], list(ops) + cts,
                              "lax.cond", ["branch"] * len(params["branches"])))
        return (None,) + tuple(next(res) if d else None for d in diff)
    node = Node(_COND, params, parents, tuple(primals), outs, rule)
    return tuple(VJPTracer(interp, o, node if f else None, i)
                 for i, (o, f) in enumerate(zip(outs, out_f)))


def _while_vjp(interp: VJPInterpreter, args: tuple, params: dict) -> Any:
    lifted = [interp.lift(a) for a in args]
    if any(r is not None and is_float(p) for p, r in lifted):
        raise TypeError(
            "lax.while_loop is not reverse-mode differentiable: its trip count is only known "
            "when it runs, so the values of each iteration cannot be kept for the backward "
            "pass. Use lax.fori_loop with Python int bounds or lax.scan (both support grad), "
            "or forward mode (jvp, jacfwd), which while_loop supports")
    with set_interpreter(interp.prev):
        outs = _WHILE.bind(*[p for p, _ in lifted], **params)
    return _traced_outs(interp, VJPTracer, outs, _owns(interp, args))


def _scan_vjp(interp: VJPInterpreter, args: tuple, params: dict) -> Any:
    body, ncar, nc = params["body"], params["num_carry"], params["num_consts"]
    lifted = [interp.lift(a) for a in args]
    primals = [p for p, _ in lifted]
    parents = [r for _, r in lifted]
    consts, init, xs = _split_scan(primals, params)
    p_c, _, p_x = _split_scan(parents, params)
    c_diff = [r is not None and is_float(p) for p, r in zip(consts, p_c)]
    x_diff = [r is not None and is_float(p) for p, r in zip(xs, p_x)]
    carry_f = [is_float(p) for p in init]
    if not (any(c_diff) or any(x_diff) or any(
            r is not None and f for r, f in zip(_split_scan(parents, params)[1], carry_f))):
        with set_interpreter(interp.prev):
            outs = _SCAN.bind(*primals, **params)
        return _traced_outs(interp, VJPTracer, outs, _owns(interp, args))
    # forward pass that also stacks the carry entering each step (the residuals)
    fwd = _SubGraph(body.in_binders, body.eqns,
                   list(body.outs) + list(body.in_binders[nc:nc + ncar]))
    with set_interpreter(interp.prev):
        allout = list(_SCAN.bind(*primals, **{**params, "body": fwd}))
    outs, carries_in = allout[:len(body.outs)], allout[len(body.outs):]
    out_f = [is_float(o) for o in outs]
    y_f = out_f[ncar:]
    diff = c_diff + carry_f + x_diff

    def rule(ct: Any, _primals: tuple, _out: Any) -> tuple:
        cts = [(_zeros(o) if c is None else c) if f else None for c, o, f in zip(ct, outs, out_f)]

        def bwd(c: Any, x: Any) -> Any:
            acc, ct_c = c
            c_in, x_i, ct_y = x
            itc, ity = iter(ct_c), iter(ct_y)
            got = _vjp_of(body, consts + list(c_in) + list(x_i), diff,
                          [next(itc) if f else None for f in carry_f]
                          + [next(ity) if f else None for f in y_f])
            g_c = [g for g, d in zip(got[:nc], c_diff) if d]
            g_car = [g for g, f in zip(got[nc:nc + ncar], carry_f) if f]
            g_x = [g for g, d in zip(got[nc + ncar:], x_diff) if d]
            return ([a + g for a, g in zip(acc, g_c)], g_car), g_x
        acc0 = [_zeros(p) for p, d in zip(consts, c_diff) if d]
        (acc, ct_init), ct_xs = _scan_call(
            bwd, (acc0, [c for c in cts[:ncar] if c is not None]),
            (carries_in, xs, [c for c in cts[ncar:] if c is not None]),
            params["length"], not params["reverse"], "lax.scan")
        ia, ii, ix = iter(acc), iter(ct_init), iter(ct_xs)
        return (tuple(next(ia) if d else None for d in c_diff)
                + tuple(next(ii) if f else None for f in carry_f)
                + tuple(next(ix) if d else None for d in x_diff))
    node = Node(_SCAN, params, parents, tuple(primals), outs, rule)
    return tuple(VJPTracer(interp, o, node if f else None, i)
                 for i, (o, f) in enumerate(zip(outs, out_f)))


# ------------------------------------------------------------------------------ vmap rules
def _lift_batch(interp: BatchInterpreter, args: tuple) -> tuple[list, list]:
    vals, batched = zip(*(interp.lift(a) for a in args)) if args else ((), ())
    return list(vals), list(batched)


def _bcast_pred(p: Any, ndim: int) -> Any:
    return xp.reshape(p, (p.shape[0],) + (1,) * (ndim - 1)) if ndim > 1 else p


def _cond_vmap(interp: BatchInterpreter, args: tuple, params: dict) -> Any:
    vals, batched = _lift_batch(interp, args)
    branches = params["branches"]
    if not any(batched):
        with set_interpreter(interp.prev):
            return _COND.bind(*vals, **params)
    if batched[0]:
        # a batched predicate: every branch runs on the whole batch, then a select per example
        results = [eval_graph(g, *args[1:]) for g in branches]
        index = args[0]
        if index.dtype == np.bool_:
            return tuple(xp.where(index, b, a) for a, b in zip(results[0], results[1]))
        index = xp.clip(index, 0, len(branches) - 1)
        out = list(results[0])
        for k, r in enumerate(results[1:], start=1):
            out = [xp.where(index == k, b, a) for a, b in zip(out, r)]
        return tuple(out)
    ob = batched[1:]
    out_b = [any(fl) for fl in zip(*(_deps(g, ob) for g in branches))]
    size, an = interp.size, interp.axis_name   # an: collectives in the body

    def make(g: Graph) -> Callable:
        return lambda *a: _batch_of(g, list(a), ob, size, out_b, an)
    with set_interpreter(interp.prev):
        outs = _cond_call(vals[0], [make(g) for g in branches], vals[1:], "lax.cond",
                          ["branch"] * len(branches))
    return tuple(BatchTracer(interp, o) if b else o for o, b in zip(outs, out_b))


def _carry_fixpoint(body: Graph, const_b: list, carry_b: list, xs_b: list,
                    ncar: int) -> list[bool]:
    """Carries that are batched on entry, or become batched by the body, stay batched."""
    while True:
        out = _deps(body, const_b + carry_b + xs_b)[:ncar]
        new = [a or b for a, b in zip(carry_b, out)]
        if new == carry_b:
            return carry_b
        carry_b = new


def _while_vmap(interp: BatchInterpreter, args: tuple, params: dict) -> Any:
    vals, batched = _lift_batch(interp, args)
    nc, cg, bg = params["num_consts"], params["cond_graph"], params["body_graph"]
    if not any(batched):
        with set_interpreter(interp.prev):
            return _WHILE.bind(*vals, **params)
    consts, carry = vals[:nc], vals[nc:]
    cb = batched[:nc]
    carry_b = _carry_fixpoint(bg, cb, batched[nc:], [], len(carry))
    pred_b = _deps(cg, cb + carry_b)[0]
    if pred_b:   # examples finish at different steps: every carry is masked per example
        carry_b = [True] * len(carry)
    size, flags = interp.size, cb + carry_b
    an = interp.axis_name
    with set_interpreter(interp.prev):
        init = [_materialize(v, b, size) if want else v
                for v, b, want in zip(carry, batched[nc:], carry_b)]
        if not pred_b:
            out = _while_call(
                lambda c: _batch_of(cg, consts + list(c), flags, size, [False], an)[0],
                lambda c: _batch_of(bg, consts + list(c), flags, size, carry_b, an),
                init, "lax.while_loop")
        else:
            def body(c: Any) -> Any:
                p = _batch_of(cg, consts + list(c), flags, size, [True], an)[0]
                new = _batch_of(bg, consts + list(c), flags, size, carry_b, an)
                return [xp.where(_bcast_pred(p, n.ndim), n, o) for n, o in zip(new, c)]
            out = _while_call(
                lambda c: xp.any(_batch_of(cg, consts + list(c), flags, size, [True], an)[0]),
                body, init, "lax.while_loop")
    return tuple(BatchTracer(interp, o) if b else o for o, b in zip(out, carry_b))


def _scan_vmap(interp: BatchInterpreter, args: tuple, params: dict) -> Any:
    vals, batched = _lift_batch(interp, args)
    body, ncar = params["body"], params["num_carry"]
    if not any(batched):
        with set_interpreter(interp.prev):
            return _SCAN.bind(*vals, **params)
    consts, carry, xs = _split_scan(vals, params)
    cb, carb, xb = _split_scan(batched, params)
    carb = _carry_fixpoint(body, cb, carb, xb, ncar)
    yb = _deps(body, cb + carb + xb)[ncar:]
    size, flags = interp.size, cb + carb + xb
    an = interp.axis_name
    with set_interpreter(interp.prev):
        init = [_materialize(v, b, size) if want else v
                for v, b, want in zip(carry, _split_scan(batched, params)[1], carb)]
        xs_t = [xp.moveaxis(v, 0, 1) if b else v for v, b in zip(xs, xb)]

        def f(c: Any, x: Any) -> Any:
            outs = _batch_of(body, consts + list(c) + list(x), flags, size, carb + yb, an)
            return outs[:ncar], outs[ncar:]
        c_out, ys = _scan_call(f, init, xs_t, params["length"], params["reverse"],
                               "lax.scan")
        ys = [xp.moveaxis(y, 1, 0) if b else y for y, b in zip(ys, yb)]
    return (tuple(BatchTracer(interp, o) if b else o for o, b in zip(c_out, carb))
            + tuple(BatchTracer(interp, o) if b else o for o, b in zip(ys, yb)))


HIGHER_ORDER.update({
    ("jvp", "cond"): _cond_jvp, ("jvp", "while"): _while_jvp, ("jvp", "scan"): _scan_jvp,
    ("vjp", "cond"): _cond_vjp, ("vjp", "while"): _while_vjp, ("vjp", "scan"): _scan_vjp,
    ("vmap", "cond"): _cond_vmap, ("vmap", "while"): _while_vmap, ("vmap", "scan"): _scan_vmap,
})
