"""Forward mode (JVP interpreter) and reverse mode (a tape recorded by the VJP interpreter).

Both interpreters evaluate rules under the interpreter below them (``prev``), and the rules are
written with public clnp functions, so nested transformations trace through each other.
"""
from __future__ import annotations

import itertools
from typing import Any, Callable, NamedTuple, Sequence

import clnp as xp
from clnp._core.prims import Primitive, current_interpreter, set_interpreter, transforming

from . import _rules as R
from ._args import check_argnums, check_callable, check_differentiable, lift
from ._core import HIGHER_ORDER, Interpreter, Tracer, mark_view
from ._tree import structure_difference, tree_flatten, tree_map, tree_unflatten
from clnp._core.dtypes import kind as dkind


def _rule_missing(prim: Primitive, mode: str) -> NotImplementedError:
    return NotImplementedError(f"clnp_grad has no {mode} rule for the primitive "
                               f"'{prim.name}' yet; differentiate around it (stop_gradient) or "
                               f"file an issue")


# ------------------------------------------------------------------------------ forward mode
class JVPTracer(Tracer):
    __slots__ = ("primal", "tangent", "weak_type")   # weak_type: set on Python-scalar inputs

    def __init__(self, interp: "JVPInterpreter", primal: Any, tangent: Any):
        self._interp, self.primal, self.tangent = interp, primal, tangent

    @property
    def _value(self) -> Any:
        return self.primal


class JVPInterpreter(Interpreter):
    name = "jvp"
    kind = "jvp"

    def lift(self, x: Any) -> tuple[Any, Any]:
        if isinstance(x, JVPTracer) and x._interp is self:
            return x.primal, x.tangent
        self.check_foreign(x)
        return x, None

    def process(self, prim: Primitive, args: tuple, params: dict) -> Any:
        hrule = HIGHER_ORDER.get(("jvp", prim.name))
        if hrule is not None:
            return hrule(self, args, params)
        primals, tangents = zip(*(self.lift(a) for a in args)) if args else ((), ())
        with set_interpreter(self.prev):
            out = prim.bind(*primals, **params)
            if all(t is None for t in tangents) and not any(
                    isinstance(a, JVPTracer) and a._interp is self for a in args):
                return out
            if all(t is None for t in tangents) or prim.name in R.NON_DIFFERENTIABLE or \
                    _ZERO_OUTPUT_OPS(prim):
                t_out = (None,) * len(out) if prim.multiple_results else None
            elif prim.name in R.JVP:
                t_out = R.JVP[prim.name](primals, tangents, out, **params)
            elif R.differentiable_op(prim.name):
                t_out = R.ew_jvp(prim.name, primals, tangents, out)
            else:
                raise _rule_missing(prim, "JVP")
        # outputs stay traced (possibly with a zero tangent) so that bool()/float() on values
        # computed from traced inputs raise, whatever the op
        if prim.multiple_results:
            return tuple(None if o is None else JVPTracer(self, o, t)
                         for o, t in zip(out, t_out))
        return mark_view(JVPTracer(self, out, t_out), prim)


def _ZERO_OUTPUT_OPS(prim: Primitive) -> bool:
    """Whether ``prim`` is a table op with bool output (comparisons, isnan, ...) or a bitwise
    one: those never carry derivatives. Asked on every traced op, so kept by name."""
    hit = _ZERO_OUTPUT.get(prim.name)
    if hit is None:
        from clnp._kernels import op_table as _ops
        rec = _ops.OPS.get(prim.name)
        hit = _ZERO_OUTPUT[prim.name] = rec is not None and (rec.out == "bool" or prim.name in (
            "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_invert", "bitwise_left_shift",
            "bitwise_right_shift", "logical_not", "isfinite", "isinf", "isnan", "signbit"))
    return hit


_ZERO_OUTPUT: dict[str, bool] = {}


# ------------------------------------------------------------------------------ reverse mode
_SEQ = itertools.count()



class Node:
    """One recorded primitive application."""
    __slots__ = ("prim", "params", "parents", "primals", "out", "seq", "rule")

    def __init__(self, prim: Primitive, params: dict, parents: list, primals: tuple, out: Any,
                 rule: Callable[..., tuple] | None = None):
        self.prim, self.params, self.parents = prim, params, parents
        self.primals, self.out = primals, out
        self.rule = rule  # a user-defined backward rule (custom_vjp) replacing the table's
        self.seq = next(_SEQ)


class Ref(NamedTuple):
    """What the tape keeps of a tracer: its identity, producing node and output slot."""
    seq: int
    node: Any
    index: int


class VJPTracer(Tracer):
    __slots__ = ("primal", "node", "index", "seq", "weak_type")

    def __init__(self, interp: "VJPInterpreter", primal: Any, node: Node | None, index: int = 0):
        self._interp, self.primal, self.node, self.index = interp, primal, node, index
        self.seq = next(_SEQ)

    @property
    def _value(self) -> Any:
        return self.primal


class VJPInterpreter(Interpreter):
    name = "grad/vjp"
    kind = "vjp"

    def lift(self, x: Any) -> tuple[Any, Any]:
        if isinstance(x, VJPTracer) and x._interp is self:
            # a snapshot, not the tracer: ``x[i] = v`` later rebinds the tracer object
            return x.primal, Ref(x.seq, x.node, x.index)
        self.check_foreign(x)
        return x, None

    def process(self, prim: Primitive, args: tuple, params: dict) -> Any:
        hrule = HIGHER_ORDER.get(("vjp", prim.name))
        if hrule is not None:
            return hrule(self, args, params)
        primals, parents = zip(*(self.lift(a) for a in args)) if args else ((), ())
        with set_interpreter(self.prev):
            out = prim.bind(*primals, **params)
        if all(p is None for p in parents):
            return out
        if prim.name in R.NON_DIFFERENTIABLE or _ZERO_OUTPUT_OPS(prim):
            # traced but carrying no derivative: a leaf the backward pass never reaches
            if prim.multiple_results:
                return tuple(None if o is None else VJPTracer(self, o, None) for o in out)
            return VJPTracer(self, out, None)
        if not (prim.name in R.VJP or R.differentiable_op(prim.name)):
            raise _rule_missing(prim, "VJP")
        node = Node(prim, params, list(parents), primals, out)
        if prim.multiple_results:
            return tuple(None if o is None else
                         VJPTracer(self, o, node if R.is_float(o) else None, i)
                         for i, o in enumerate(out))
        return mark_view(VJPTracer(self, out, node if R.is_float(out) else None), prim)


def backward(interp: VJPInterpreter, outs: Sequence[Any], cts: Sequence[Any]) -> dict[int, Any]:
    """Propagate output cotangents to every tracer; returns {tracer.seq: cotangent}."""
    acc: dict[int, Any] = {}
    nodes: dict[int, Node] = {}
    stack = []
    outs = [Ref(o.seq, o.node, o.index) if isinstance(o, VJPTracer) and o._interp is interp
            else None for o in outs]
    for o, ct in zip(outs, cts):
        if o is not None and ct is not None:
            acc[o.seq] = R.add_ct(acc.get(o.seq), ct)
            stack.append(o)
    # collect reachable nodes
    seen: set[int] = set()
    while stack:
        t = stack.pop()
        n = t.node
        if n is None or n.seq in seen:
            continue
        seen.add(n.seq)
        nodes[n.seq] = n
        stack.extend(p for p in n.parents if p is not None)
    # tracers by node output slot
    out_tracers: dict[int, dict[int, Any]] = {}

    def note(t: Any) -> None:
        if t.node is not None:  # a tracer used by several nodes is one output slot, once
            out_tracers.setdefault(t.node.seq, {})[t.seq] = t
    for o in outs:
        if o is not None:
            note(o)
    for n in nodes.values():
        for p in n.parents:
            if p is not None:
                note(p)
    for seq in sorted(nodes, reverse=True):
        n = nodes[seq]
        multi = n.prim.multiple_results
        slot_cts: list[Any] = [None] * (len(n.out) if multi else 1)
        for t in out_tracers.get(seq, {}).values():
            c = acc.get(t.seq)
            if c is not None:
                slot_cts[t.index] = R.add_ct(slot_cts[t.index], c)
        if all(c is None for c in slot_cts):
            continue
        ct = slot_cts if multi else slot_cts[0]
        if n.rule is not None:
            in_cts = n.rule(ct, n.primals, n.out)
        elif n.prim.name in R.VJP:
            in_cts = R.VJP[n.prim.name](ct, n.primals, n.out, **n.params)
        else:
            in_cts = R.ew_vjp(n.prim.name, ct, n.primals, n.out)
        for p, c in zip(n.parents, in_cts):
            if p is not None and c is not None:
                acc[p.seq] = R.add_ct(acc.get(p.seq), c)
    return acc


# ------------------------------------------------------------------------------ public API
def _leaf_names(trees: Sequence[Any], positions: Sequence[int], what: str) -> list[str]:
    """``argument i`` (``leaf k of argument i`` inside a pytree) for each leaf of ``trees``."""
    names = []
    for tree, i in zip(trees, positions):
        n = len(tree_flatten(tree)[0])
        names += [f"argument {i}" if n == 1 and not isinstance(tree, (list, tuple, dict))
                  else f"leaf {k} of argument {i}" for k in range(n)]
    return names


def _lift_inputs(trees: Sequence[Any], positions: Sequence[int], what: str
                 ) -> tuple[list[Any], list[bool], Any]:
    """Flattened ``trees`` with Python scalars as weak 0-d arrays and NumPy values as arrays
    (``clnp_grad._args``), checked to be differentiable; returns (leaves, weak flags, tree
    definition of the list of trees)."""
    flat, tdef = tree_flatten(list(trees))
    flat, weak = lift(flat)
    check_differentiable(flat, lambda: _leaf_names(trees, positions, what), what)
    return flat, weak, tdef


def _weak(t: Tracer, weak: bool) -> Tracer:
    if weak:
        t.weak_type = True
    return t


def jvp(fun: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any]) -> tuple:
    """Evaluate ``fun(*primals)`` and its directional derivative along ``tangents`` (JAX's ``jvp``).

    Parameters
    ----------
    fun : callable
        Function of the primals.
    primals : sequence
        The positional arguments (arrays, Python scalars -- weakly typed 0-d arrays, as in
        JAX -- or pytrees of them).
    tangents : sequence
        One tangent per primal, with the same structure, shapes and dtypes.

    Returns
    -------
    out : array or pytree
        ``fun(*primals)``.
    out_tangent : array or pytree
        The Jacobian of ``fun`` applied to ``tangents``, with ``out``'s structure (zeros
        where the output does not depend on the inputs).

    Raises
    ------
    TypeError
        ``fun`` is not callable, or ``primals`` or ``tangents`` is not a tuple or list.
    ValueError
        A tangent's structure, shape or dtype does not match its primal.

    Examples
    --------
    >>> import clnp, clnp_grad as cg
    >>> out, tangent = cg.jvp(lambda x: x ** 2, (clnp.asarray([1.0, 2.0]),),
    ...                       (clnp.asarray([1.0, 1.0]),))
    >>> print(out, tangent)
    [1. 4.] [2. 4.]
    """
    check_callable("jvp", fun)
    for name, v in (("primals", primals), ("tangents", tangents)):
        if not isinstance(v, (tuple, list)):
            raise TypeError(f"jvp: {name} must be a tuple or list with one entry per "
                            f"argument of fun; got {type(v).__name__} (write (x,) for one "
                            f"argument)")
    p_flat, weak, p_def = _lift_inputs(list(primals), range(len(primals)), "jvp")
    t_flat, t_def = tree_flatten(list(tangents))
    if p_def != t_def:
        raise ValueError(f"jvp: primals and tangents have different structures: "
                         f"{structure_difference(p_def, t_def, 'primals', 'tangents')}")
    # a Python scalar tangent takes its primal's dtype (JAX's would be weakly typed)
    t_flat = [xp.asarray(t, dtype=p.dtype, device=p.device)
              if isinstance(t, (bool, int, float, complex)) else t
              for p, t in zip(p_flat, t_flat)]
    t_flat = lift(t_flat)[0]
    for p, t in zip(p_flat, t_flat):
        if tuple(t.shape) != tuple(p.shape) or t.dtype != p.dtype:
            raise ValueError(f"jvp: tangent of shape {t.shape} and dtype {t.dtype} does not "
                             f"match primal of shape {p.shape} and dtype {p.dtype}")
    interp = JVPInterpreter(current_interpreter())
    try:
        tracers = [_weak(JVPTracer(interp, p, t), w) for p, t, w in zip(p_flat, t_flat, weak)]
        with set_interpreter(interp):
            out = fun(*tree_unflatten(p_def, tracers))
    finally:
        interp.active = False
    o_flat, o_def = tree_flatten(out)
    primal_out, tangent_out = [], []
    for o in o_flat:
        p, t = interp.lift(o) if isinstance(o, JVPTracer) and o._interp is interp else (o, None)
        primal_out.append(p)
        tangent_out.append(R.zeros_like(p) if t is None and hasattr(p, "shape") else t)
    return tree_unflatten(o_def, primal_out), tree_unflatten(o_def, tangent_out)


def vjp(fun: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple:
    """Evaluate ``fun(*primals)`` and return its vector-Jacobian product function (JAX's ``vjp``).

    Parameters
    ----------
    fun : callable
        Function of the primals (arrays, Python scalars, NumPy values or pytrees of them;
        Python scalars are weakly typed 0-d arrays, as in JAX).
    *primals : array or pytree
        The point at which to linearise ``fun``.
    has_aux : bool, default False
        ``fun`` returns ``(out, aux)``; ``aux`` is then returned third, undifferentiated.

    Returns
    -------
    out : array or pytree
        ``fun(*primals)``.
    f_vjp : callable
        ``f_vjp(ct)`` maps a cotangent with ``out``'s structure, shapes and dtypes to a tuple of
        cotangents, one per primal.
    aux : object
        Only with ``has_aux``.

    Raises
    ------
    TypeError
        ``fun`` is not callable; a primal is not an array or pytree of arrays, or has an
        integer dtype; with ``has_aux``, ``fun`` does not return a pair.
    ValueError
        When ``f_vjp`` is called: the cotangent's structure or shapes do not match ``out``.

    Examples
    --------
    >>> import clnp, clnp_grad as cg
    >>> out, f_vjp = cg.vjp(lambda x: x * 3.0, clnp.asarray([1.0, 2.0]))
    >>> print(out)
    [3. 6.]
    >>> (ct,) = f_vjp(clnp.asarray([1.0, 1.0]))
    >>> print(ct)
    [3. 3.]
    """
    check_callable("vjp", fun)
    return _vjp(fun, primals, range(len(primals)), "vjp", has_aux)


def _vjp(fun: Callable[..., Any], primals: Sequence[Any], positions: Sequence[int], what: str,
         has_aux: bool) -> tuple:
    p_flat, weak, p_def = _lift_inputs(list(primals), positions, what)
    interp = VJPInterpreter(current_interpreter())
    try:
        tracers = [_weak(VJPTracer(interp, p, None), w) for p, w in zip(p_flat, weak)]
        in_seqs = [t.seq for t in tracers]   # before fun can rebind them with x[i] = v
        with set_interpreter(interp):
            res = fun(*tree_unflatten(p_def, tracers))
    finally:
        interp.active = False
    if has_aux:
        if not (isinstance(res, tuple) and len(res) == 2):
            got = ("an array" if hasattr(res, "shape") else
                   f"a tuple of {len(res)}" if isinstance(res, tuple) else
                   f"a {type(res).__name__}")
            raise TypeError(f"{what}(has_aux=True): the function must return a pair (out, "
                            f"aux); got {got}")
        res, aux = res
        aux = tree_map(lambda v: v.primal if isinstance(v, VJPTracer) else v, aux)
    o_flat, o_def = tree_flatten(res)
    primal_out = [o.primal if isinstance(o, VJPTracer) and o._interp is interp else o
                  for o in o_flat]

    def f_vjp(ct: Any) -> tuple:
        c_flat, c_def = tree_flatten(ct)
        if c_def != o_def:
            raise ValueError(f"vjp: cotangent structure does not match output structure: "
                             f"{structure_difference(c_def, o_def, 'cotangent', 'output')}")
        for c, o in zip(c_flat, primal_out):
            if not hasattr(c, "shape"):
                raise TypeError(f"vjp: the cotangent must be an array (or pytree of arrays) "
                                f"like the output; got {type(c).__name__}")
            if tuple(c.shape) != tuple(o.shape):
                raise ValueError(f"vjp: cotangent of shape {c.shape} for output of shape "
                                 f"{o.shape}")
        with transforming():      # user bwd rules run here: still inside the transformation
            acc = backward(interp, o_flat, c_flat)
        cts = [acc.get(q) for q in in_seqs]
        cts = [R.zeros_like(p) if c is None else c for c, p in zip(cts, p_flat)]
        return tuple(tree_unflatten(p_def, cts))

    out = tree_unflatten(o_def, primal_out)
    return (out, f_vjp, aux) if has_aux else (out, f_vjp)


def _argnums(argnums: int | Sequence[int], n: int, what: str) -> tuple[int, ...]:
    if isinstance(argnums, int):
        nums: tuple = (argnums,)
    elif isinstance(argnums, (tuple, list)):
        nums = tuple(argnums)
    else:
        raise TypeError(f"{what}: argnums must be an int or a sequence of ints; got "
                        f"{argnums!r}")
    for a in nums:
        if not isinstance(a, int) or isinstance(a, bool):
            raise TypeError(f"{what}: argnums must be ints; got {a!r}")
        if not -n <= a < n:
            raise ValueError(f"{what}: argnums {a} is out of range for {n} positional "
                             f"arguments")
    return tuple(a % n for a in nums)


def value_and_grad(fun: Callable[..., Any], argnums: int | Sequence[int] = 0,
                   has_aux: bool = False) -> Callable[..., Any]:
    """Return a function computing ``fun``'s value and its gradient (JAX's ``value_and_grad``).

    Parameters
    ----------
    fun : callable
        Function returning a real 0-d array (with ``has_aux``, a pair ``(scalar, aux)``).
    argnums : int or sequence of int, default 0
        The positional arguments (arrays or pytrees of floating-point arrays) to
        differentiate with respect to.
    has_aux : bool, default False
        ``fun`` returns ``(value, aux)``; the result is then ``((value, aux), grad)``.

    Returns
    -------
    callable
        ``vg(*args)`` returning ``(value, grad)``; ``grad`` is a tuple when ``argnums`` is a
        sequence.

    Raises
    ------
    TypeError
        ``fun`` is not callable or ``argnums`` not an int or ints; when called: the output
        is not a real scalar, or a differentiated argument is not a floating-point array.
    ValueError
        When called: ``argnums`` is out of range for the arguments given.

    Examples
    --------
    >>> import clnp, clnp_grad as cg
    >>> loss = lambda w, x: clnp.sum(w * x)
    >>> value, (gw, gx) = cg.value_and_grad(loss, argnums=(0, 1))(
    ...     clnp.asarray([1.0, 2.0]), clnp.asarray([3.0, 4.0]))
    >>> float(value)
    11.0
    >>> print(gw, gx)
    [3. 4.] [1. 2.]
    >>> (value, aux), g = cg.value_and_grad(lambda x: (clnp.sum(x), "aux"), has_aux=True)(
    ...     clnp.asarray([1.0]))
    >>> aux
    'aux'
    """
    return _value_and_grad(fun, argnums, has_aux, "value_and_grad")


def _value_and_grad(fun: Callable[..., Any], argnums: int | Sequence[int], has_aux: bool,
                    what: str) -> Callable[..., Any]:
    """``value_and_grad``, its errors naming ``what`` (the function the user called:
    ``grad`` or ``value_and_grad``)."""
    check_callable(what, fun)
    check_argnums(what, argnums)

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        nums = _argnums(argnums, len(args), what)

        def f_diff(*diff_args: Any) -> Any:
            full = list(args)
            for i, a in zip(nums, diff_args):
                full[i] = a
            return fun(*full, **kwargs)
        res = _vjp(f_diff, [args[i] for i in nums], nums, what, has_aux)
        out, f_vjp = res[0], res[1]
        if not (hasattr(out, "shape") and hasattr(out, "dtype")):
            raise TypeError(f"{what} requires the function to return a scalar array; got "
                            f"{type(out).__name__}")
        if out.shape != ():
            raise TypeError(f"{what} requires a scalar (shape ()) output; got shape "
                            f"{out.shape}. Use vjp or jacrev for non-scalar outputs")
        if dkind(out.dtype) != "f":
            raise TypeError(f"{what} requires a real floating-point output; got {out.dtype}")
        g = f_vjp(xp.ones((), dtype=out.dtype, device=out.device))
        g = g[0] if isinstance(argnums, int) else tuple(g)
        return ((out, res[2]), g) if has_aux else (out, g)
    wrapped.__name__ = f"value_and_grad({getattr(fun, '__name__', 'f')})"
    wrapped.__doc__ = fun.__doc__
    return wrapped


def grad(fun: Callable[..., Any], argnums: int | Sequence[int] = 0,
         has_aux: bool = False) -> Callable[..., Any]:
    """Return a function computing the gradient of scalar-valued ``fun`` (JAX's ``grad``).

    Parameters
    ----------
    fun : callable
        Function of arrays (or pytrees of arrays) returning a real 0-d array; with
        ``has_aux``, a pair ``(scalar, aux)``.
    argnums : int or sequence of int, default 0
        The positional arguments to differentiate with respect to. They must hold
        floating-point arrays.
    has_aux : bool, default False
        ``fun`` returns ``(value, aux)``; the gradient function then returns ``(grad, aux)``.

    Returns
    -------
    callable
        ``g(*args)`` returning the gradient, with the structure, shapes and dtypes of the
        selected arguments (a tuple of them when ``argnums`` is a sequence).

    Raises
    ------
    TypeError
        ``fun`` is not callable or ``argnums`` not an int or ints; when called: the output
        is not a scalar, or a differentiated argument is not a floating-point array.
    ValueError
        When called: ``argnums`` is out of range for the arguments given.

    See Also
    --------
    value_and_grad : the value and the gradient in one pass.
    vjp : reverse mode for non-scalar outputs.

    Examples
    --------
    >>> import clnp, clnp_grad as cg
    >>> f = lambda x: clnp.sum(x ** 2)
    >>> print(cg.grad(f)(clnp.asarray([1.0, 2.0, 3.0])))
    [2. 4. 6.]
    >>> float(cg.grad(lambda x: x * x)(clnp.asarray(3.0)))
    6.0
    """
    vg = _value_and_grad(fun, argnums, has_aux, "grad")

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        (value, g) = vg(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    wrapped.__name__ = f"grad({getattr(fun, '__name__', 'f')})"
    wrapped.__doc__ = fun.__doc__
    return wrapped
