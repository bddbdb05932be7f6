"""Transformations built from jvp/vjp: Jacobians, Hessians, linearize, custom rules
(``custom_vjp``, ``custom_jvp``), checkpoint.

Jacobians push (jvp) or pull (vjp) the whole basis at once under ``vmap``, as JAX does; if a
primitive on the way has no batching rule they fall back to one jvp/vjp per basis vector.
"""
from __future__ import annotations

import inspect
import math
from typing import Any, Callable, Sequence

import clnp as xp
from clnp._core.prims import Primitive, current_interpreter, set_interpreter

from . import _ad
from ._ad import JVPInterpreter, JVPTracer, Node, VJPInterpreter, VJPTracer, jvp, vjp
from ._core import Tracer
from ._rules import is_float
from ._args import check_argnums, check_callable, check_differentiable, lift_tree
from ._tree import tree_flatten, tree_map, tree_unflatten
from ._vmap import BatchInterpreter, BatchTracer, _materialize, vmap


def _basis(x: Any, k: int) -> Any:
    """The ``k``-th standard basis vector of ``x``'s space, shaped like ``x``."""
    e = xp.astype(xp.arange(x.size, device=x.device) == k, x.dtype)
    return xp.reshape(e, x.shape)


def _select(args: tuple, argnums: int | Sequence[int], what: str
            ) -> tuple[tuple[int, ...], bool, tuple]:
    """(argnums, whether one was given as an int, args with the differentiated ones lifted:
    Python scalars and NumPy values as arrays, checked to be floating point). The jvp/vjp
    calls take the arguments as given, so that Python scalars are weakly typed there."""
    nums = _ad._argnums(argnums, len(args), what)
    args = list(args)
    for i in nums:
        args[i] = lift_tree(args[i])
        check_differentiable(tree_flatten(args[i])[0],
                             lambda i=i: _ad._leaf_names([args[i]], [i], what),
                             what)
    return nums, isinstance(argnums, int), tuple(args)


def _eye_basis(x: Any) -> Any:
    """The standard basis of ``x``'s space, stacked: shape ``(x.size,) + x.shape``."""
    return xp.reshape(xp.eye(x.size, dtype=x.dtype, device=x.device), (x.size,) + x.shape)


def _batched_or_looped(f: Callable[[Any], Any], basis: Any, n: int,
                       unit: Callable[[int], Any]) -> Any:
    """``vmap(f)(basis)``; one call per basis vector (``unit(k)``), stacked, when some
    primitive in ``f`` cannot be batched. Returns a list of stacked results (``f`` may return
    a tuple)."""
    try:
        r = vmap(f)(basis)
        return list(r) if isinstance(r, tuple) else [r]
    except NotImplementedError:
        outs = [f(unit(k)) for k in range(n)]
        outs = [o if isinstance(o, tuple) else (o,) for o in outs]
        return [xp.stack([o[j] for o in outs], axis=0) for j in range(len(outs[0]))]


def jacfwd(fun: Callable[..., Any], argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
    """Jacobian of ``fun`` by forward mode (JAX's ``jacfwd``).

    One JVP per input element, batched with ``vmap``: the better choice when inputs are smaller
    than outputs.

    Parameters
    ----------
    fun : callable
        Function of arrays returning an array or pytree of arrays.
    argnums : int or sequence of int, default 0
        The positional arguments to differentiate with respect to.

    Returns
    -------
    callable
        ``jac(*args)`` returning, per output leaf, an array of shape ``out.shape + x.shape``
        (a tuple over ``argnums`` when it is a sequence).

    Raises
    ------
    TypeError
        ``fun`` is not callable or ``argnums`` not an int or ints; when called: a
        differentiated argument is not a floating-point array.

    See Also
    --------
    jacrev : the same by reverse mode.

    Examples
    --------
    >>> import clnp, clnp_grad as cg
    >>> print(cg.jacfwd(lambda x: x * x)(clnp.asarray([1.0, 2.0])))
    [[2. 0.]
     [0. 4.]]
    """
    check_callable("jacfwd", fun)
    check_argnums("jacfwd", argnums)

    def jac(*args: Any) -> Any:
        given = args
        nums, single, args = _select(args, argnums, "jacfwd")
        res = []
        for i in nums:
            x = args[i]

            def f_i(v: Any, i: int = i) -> Any:
                full = list(args)
                full[i] = v
                return fun(*full)
            outs, out_def = tree_flatten(f_i(x))
            if x.size == 0:
                res.append([xp.zeros(o.shape + x.shape, dtype=x.dtype, device=x.device)
                            for o in outs])
                continue
            xg = given[i]
            cols = _batched_or_looped(
                lambda e, xg=xg, f_i=f_i: tuple(tree_flatten(jvp(f_i, (xg,), (e,))[1])[0]),
                _eye_basis(x), x.size, lambda k, x=x: _basis(x, k))
            leaves = []
            for o, c in zip(outs, cols):
                # columns are stacked on axis 0; move the x axes behind the output axes
                j = xp.reshape(c, x.shape + tuple(o.shape))
                perm = tuple(range(x.ndim, x.ndim + o.ndim)) + tuple(range(x.ndim))
                leaves.append(xp.permute_dims(j, perm) if perm != tuple(range(j.ndim)) else j)
            res.append(leaves)
        return _jacobian_tree(out_def, res, single)
    return jac


def _jacobian_tree(out_def: Any, per_arg: list[list[Any]], single: bool) -> Any:
    """JAX's layout of a Jacobian: the output's tree, each leaf the Jacobian of that output
    leaf (a tuple over the arguments when ``argnums`` is a sequence)."""
    if single:
        return tree_unflatten(out_def, per_arg[0])
    return tree_unflatten(out_def, [tuple(leaves) for leaves in zip(*per_arg)])


def jacrev(fun: Callable[..., Any], argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
    """Jacobian of ``fun`` by reverse mode (JAX's ``jacrev``).

    One VJP per output element, batched with ``vmap``: the better choice when outputs are
    smaller than inputs.

    Parameters
    ----------
    fun : callable
        Function of arrays returning an array or pytree of arrays.
    argnums : int or sequence of int, default 0
        The positional arguments to differentiate with respect to.

    Returns
    -------
    callable
        ``jac(*args)`` returning arrays of shape ``out.shape + x.shape``.

    Raises
    ------
    TypeError
        ``fun`` is not callable or ``argnums`` not an int or ints; when called: a
        differentiated argument is not a floating-point array.

    Examples
    --------
    >>> import clnp, clnp_grad as cg
    >>> print(cg.jacrev(lambda x: clnp.sum(x) * x)(clnp.asarray([1.0, 2.0])))
    [[4. 1.]
     [2. 5.]]
    """
    check_callable("jacrev", fun)
    check_argnums("jacrev", argnums)

    def jac(*args: Any) -> Any:
        given = args
        nums, single, args = _select(args, argnums, "jacrev")

        def f_sel(*sel: Any) -> Any:
            full = list(args)
            for i, v in zip(nums, sel):
                full[i] = v
            return fun(*full)
        out, f_vjp = vjp(f_sel, *[given[i] for i in nums])
        outs, out_def = tree_flatten(out)
        sizes = [o.size for o in outs]
        n = sum(sizes)
        if n == 0:
            return _jacobian_tree(out_def, [[xp.zeros(o.shape + args[i].shape,
                                                      dtype=args[i].dtype,
                                                      device=args[i].device) for o in outs]
                                            for i in nums], single)
        starts = [sum(sizes[:k]) for k in range(len(sizes))]

        def pull(e: Any) -> tuple:
            # one row of the identity over all output elements: each leaf's cotangent is
            # its stretch of the row
            cts = [xp.astype(xp.reshape(e[s:s + o.size], o.shape), o.dtype)
                   for s, o in zip(starts, outs)]
            return tuple(f_vjp(tree_unflatten(out_def, cts)))
        dtype = xp.result_type(*[o.dtype for o in outs])
        flat = xp.zeros((n,), dtype=dtype, device=outs[0].device)
        rows = _batched_or_looped(pull, _eye_basis(flat), n, lambda k: _basis(flat, k))
        res = [[xp.reshape(r[s:s + o.size], o.shape + args[i].shape)
                for s, o in zip(starts, outs)] for r, i in zip(rows, nums)]
        return _jacobian_tree(out_def, res, single)
    return jac


def hessian(fun: Callable[..., Any], argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
    """Hessian of scalar-valued ``fun``: ``jacfwd(jacrev(fun))`` (JAX's ``hessian``).

    Parameters
    ----------
    fun : callable
        Function returning a real 0-d array.
    argnums : int or sequence of int, default 0
        The positional arguments to differentiate with respect to.

    Returns
    -------
    callable
        ``h(*args)`` returning an array of shape ``x.shape + x.shape``.

    Raises
    ------
    TypeError
        ``fun`` is not callable or ``argnums`` not an int or ints; when called: a
        differentiated argument is not a floating-point array.

    Examples
    --------
    >>> import clnp, clnp_grad as cg
    >>> print(cg.hessian(lambda x: clnp.sum(x ** 3))(clnp.asarray([1.0, 2.0])))
    [[ 6.  0.]
     [ 0. 12.]]
    """
    check_callable("hessian", fun)
    check_argnums("hessian", argnums)
    return jacfwd(jacrev(fun, argnums), argnums)


def linearize(fun: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """Return ``fun(*primals)`` and its JVP at ``primals`` as a function (JAX's ``linearize``).

    The tangent map re-runs the forward pass (no partial evaluation yet). Python scalar
    primals are taken as arrays, as by ``jvp``.

    Parameters
    ----------
    fun : callable
        Function of the primals.
    *primals : array or pytree
        The point of linearisation.

    Returns
    -------
    out : array or pytree
        ``fun(*primals)``.
    f_jvp : callable
        ``f_jvp(*tangents)`` returning the output tangent.

    Raises
    ------
    TypeError
        ``fun`` is not callable.
    ValueError
        When ``f_jvp`` is called with tangents that do not match the primals.

    Examples
    --------
    >>> import clnp, clnp_grad as cg
    >>> y, f_jvp = cg.linearize(lambda x: x ** 2, clnp.asarray([1.0, 3.0]))
    >>> print(y, f_jvp(clnp.asarray([1.0, 1.0])))
    [1. 9.] [2. 6.]
    """
    check_callable("linearize", fun)
    primals = tuple(lift_tree(p) for p in primals)
    out = fun(*primals)

    def f_jvp(*tangents: Any) -> Any:
        return jvp(fun, primals, tangents)[1]
    return out, f_jvp


class custom_vjp:
    """A function with a user-defined reverse-mode rule (JAX's ``custom_vjp``).

    ``f = custom_vjp(fun); f.defvjp(fwd, bwd)`` with ``fwd(*args) -> (out, residuals)`` and
    ``bwd(residuals, ct) -> tuple of cotangents, one per argument``. Under forward mode and
    eager evaluation ``fun`` itself runs; under ``vmap`` the rule is batched too (``fun``,
    ``fwd`` and ``bwd`` are vmapped), so ``grad(vmap(f))`` still uses it.

    Parameters
    ----------
    fun : callable
        The primal function.

    Raises
    ------
    TypeError
        ``fun`` is not callable; differentiating before ``defvjp`` was called, or ``fwd``
        not returning a pair.
    ValueError
        ``bwd`` returning the wrong number of cotangents, or one of the wrong shape.

    Examples
    --------
    >>> import clnp, clnp_grad as cg
    >>> @cg.custom_vjp
    ... def clip_gradient(x):
    ...     return x
    >>> def fwd(x):
    ...     return x, None
    >>> def bwd(residuals, ct):
    ...     return (clnp.clip(ct, -1.0, 1.0),)
    >>> _ = clip_gradient.defvjp(fwd, bwd)
    >>> print(cg.grad(lambda x: clnp.sum(clip_gradient(x) * 5.0))(clnp.asarray([1.0, 2.0])))
    [1. 1.]
    """

    def __init__(self, fun: Callable[..., Any]):
        check_callable("custom_vjp", fun)
        self.fun = fun
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None
        self.__name__ = getattr(fun, "__name__", "custom_vjp")
        self.__doc__ = fun.__doc__

    def defvjp(self, fwd: Callable[..., Any], bwd: Callable[..., Any]) -> "custom_vjp":
        """Register the reverse-mode rule: ``fwd(*args) -> (out, residuals)`` and
        ``bwd(residuals, ct) -> tuple of cotangents, one per argument``.

        Parameters
        ----------
        fwd : callable
            Takes the function's arguments; returns its output and whatever ``bwd`` needs.
        bwd : callable
            Takes the residuals and the output's cotangent; returns one cotangent per positional
            argument (of the argument's structure and shapes).

        Returns
        -------
        custom_vjp
            ``self``, so the call can be chained.

        Raises
        ------
        TypeError
            ``fwd`` or ``bwd`` is not callable; raised later, when differentiating, if
            ``fwd`` does not return a pair.
        ValueError
            Raised later, when differentiating, if ``bwd`` returns the wrong number of
            cotangents or one of the wrong shape.

        Examples
        --------
        >>> import clnp, clnp_grad as cg
        >>> f = cg.custom_vjp(lambda x: x * x)
        >>> f = f.defvjp(lambda x: (x * x, x), lambda x, ct: (2.0 * x * ct,))
        >>> print(cg.grad(lambda x: clnp.sum(f(x)))(clnp.asarray([1.0, 3.0])))
        [2. 6.]
        """
        check_callable(f"custom_vjp({self.__name__}).defvjp", fwd, "fwd")
        check_callable(f"custom_vjp({self.__name__}).defvjp", bwd, "bwd")
        self.fwd, self.bwd = fwd, bwd
        return self

    def __call__(self, *args: Any) -> Any:
        """Call the function: ``fun(*args)``, differentiated in reverse mode through the
        registered ``fwd``/``bwd`` rule.

        Parameters
        ----------
        *args : pytrees of arrays
            The function's positional arguments.

        Returns
        -------
        pytree
            ``fun(*args)``.

        Raises
        ------
        TypeError
            Differentiating before ``defvjp`` was called, or ``fwd`` not returning a pair.
        ValueError
            ``bwd`` returning the wrong number of cotangents, or one of the wrong shape.

        Examples
        --------
        >>> import clnp, clnp_grad as cg
        >>> f = cg.custom_vjp(lambda x: x * 3.0)
        >>> f = f.defvjp(lambda x: (x * 3.0, None), lambda res, ct: (ct * 3.0,))
        >>> print(f(clnp.asarray([1.0, 2.0])))
        [3. 6.]
        """
        interp = current_interpreter()
        if isinstance(interp, BatchInterpreter) and self.fwd is not None and \
                _owned(interp, tree_flatten(list(args))[0]):
            return self._batched(interp, args)
        if not isinstance(interp, VJPInterpreter) or not any(
                isinstance(a, VJPTracer) and a._interp is interp for a in tree_flatten(args)[0]):
            return self.fun(*args)
        if self.fwd is None or self.bwd is None:
            raise TypeError(f"custom_vjp {self.__name__}: call defvjp(fwd, bwd) before "
                            f"differentiating it")
        flat, tdef = tree_flatten(list(args))
        lifted = [interp.lift(a) for a in flat]
        primals = [p for p, _ in lifted]
        with set_interpreter(interp.prev):
            res = self.fwd(*tree_unflatten(tdef, primals))
        if not (isinstance(res, tuple) and len(res) == 2):
            raise TypeError(f"custom_vjp {self.__name__}: fwd must return (out, residuals)")
        out, residuals = res
        o_flat, o_def = tree_flatten(out)
        bwd, name, n_in = self.bwd, self.__name__, len(flat)

        def rule(ct: Any, _primals: tuple, _out: Any) -> tuple:
            cts = ct if isinstance(ct, list) else [ct]
            cts = [xp.zeros(o.shape, dtype=o.dtype, device=o.device) if c is None else c
                   for c, o in zip(cts, o_flat)]
            got = bwd(residuals, tree_unflatten(o_def, cts))
            got_flat = tree_flatten(list(got) if isinstance(got, tuple) else [got])[0]
            if len(got_flat) != n_in:
                raise ValueError(f"custom_vjp {name}: bwd returned {len(got_flat)} cotangents "
                                 f"for {n_in} inputs")
            for g, p in zip(got_flat, primals):
                if g is not None and hasattr(p, "shape") and tuple(g.shape) != tuple(p.shape):
                    raise ValueError(f"custom_vjp {name}: cotangent of shape {g.shape} for an "
                                     f"input of shape {p.shape}")
            return tuple(got_flat)
        prim = Primitive(f"custom_vjp[{name}]", None, multiple_results=True)
        node = Node(prim, {}, [t for _, t in lifted], tuple(primals), list(o_flat), rule)
        wrapped = [VJPTracer(interp, o, node, i) for i, o in enumerate(o_flat)]
        return tree_unflatten(o_def, wrapped)


    def _batched(self, interp: BatchInterpreter, args: tuple) -> Any:
        """This call under ``vmap``: a custom_vjp of the vmapped function whose rule is the
        vmapped rule, applied to the batched values one interpreter down (so a transform
        below ``vmap`` sees the custom rule). Unbatched array arguments are broadcast along
        the batch axis first (their cotangents sum back over it); other leaves stay as
        they are."""
        flat, tdef = tree_flatten(list(args))
        lifted = [interp.lift(a) for a in flat]
        axes = tuple(0 if hasattr(v, "shape") else None for v, _ in lifted)
        fun, fwd, bwd = self.fun, self.fwd, self.bwd
        assert fwd is not None and bwd is not None

        def unflat(leaves: tuple) -> list:
            return tree_unflatten(tdef, list(leaves))
        inner = custom_vjp(vmap(lambda *ls: fun(*unflat(ls)), in_axes=axes))
        inner.__name__ = f"vmap({self.__name__})"

        def bwd_flat(res: Any, ct: Any) -> tuple:
            got = bwd(res, ct)
            leaves = tree_flatten(list(got) if isinstance(got, tuple) else [got])[0]
            return tuple(leaves)
        inner.defvjp(vmap(lambda *ls: fwd(*unflat(ls)), in_axes=axes), vmap(bwd_flat))
        with set_interpreter(interp.prev):
            vals = [_materialize(v, b, interp.size) if ax == 0 else v
                    for (v, b), ax in zip(lifted, axes)]
            out = inner(*vals)
        return tree_map(lambda o: BatchTracer(interp, o), out)


def checkpoint(fun: Callable[..., Any]) -> Callable[..., Any]:
    """Recompute ``fun``'s intermediate values in the backward pass instead of storing them.

    Rematerialisation (JAX's ``checkpoint``/``remat``): only the inputs are kept for reverse
    mode, trading compute for memory.

    Parameters
    ----------
    fun : callable
        The function to rematerialise.

    Returns
    -------
    callable
        A function with ``fun``'s signature and values.

    Raises
    ------
    TypeError
        ``fun`` is not callable.

    Examples
    --------
    >>> import clnp, clnp_grad as cg
    >>> f = cg.checkpoint(lambda x: clnp.sum(clnp.sin(x) ** 2))
    >>> print(cg.grad(f)(clnp.asarray([0.0])))
    [0.]
    """
    check_callable("checkpoint", fun)
    f = custom_vjp(fun)

    def fwd(*args: Any) -> tuple[Any, Any]:
        return fun(*args), args

    def bwd(args: Any, ct: Any) -> tuple:
        _, f_vjp = vjp(fun, *args)
        return f_vjp(ct)
    f.defvjp(fwd, bwd)
    return f


# ------------------------------------------------------------------------------ custom_jvp
def _zero_tangent(p: Any) -> Any:
    if hasattr(p, "shape"):
        return xp.zeros(p.shape, dtype=p.dtype, device=p.device)
    return 0.0


def _owned(interp: Any, flat: Sequence[Any]) -> bool:
    return any(isinstance(a, Tracer) and a._interp is interp for a in flat)


class custom_jvp:
    """A function with a user-defined forward-mode rule (JAX's ``custom_jvp``).

    ``f = custom_jvp(fun, nondiff_argnums=())`` and ``@f.defjvp`` on ``rule(*nondiff_args,
    primals, tangents) -> (out, out_tangent)``, where ``primals`` and ``tangents`` are tuples
    of the other positional arguments (integer arguments get zero tangents of their own
    dtype) and ``out_tangent`` has ``out``'s structure, shapes and dtypes. The rule must be
    linear in ``tangents``: reverse mode (``grad``, ``vjp``) transposes it by differentiating
    it with respect to the tangents. Under ``vmap`` both ``fun`` and the rule are batched;
    eager calls run ``fun``. Values traced by the transformations that differentiate or
    batch the call must reach ``fun`` and the rule as arguments: a closure over one raises
    TypeError (the rule runs below the transformation that traces them).

    Parameters
    ----------
    fun : callable
        The primal function.
    nondiff_argnums : sequence of int, default ()
        Positional arguments that are not differentiated (passed first to the rule).

    Raises
    ------
    TypeError
        ``fun`` is not callable or ``nondiff_argnums`` not ints; differentiating before
        ``defjvp``, keyword-only parameters, a rule that does not return a pair or returns a
        tangent of the wrong dtype, or a closure over a traced value.
    ValueError
        ``nondiff_argnums`` out of range, or a rule's output of the wrong shape.

    Examples
    --------
    >>> import clnp, clnp_grad as cg
    >>> @cg.custom_jvp
    ... def f(x):
    ...     return clnp.sin(x)
    >>> @f.defjvp
    ... def f_jvp(primals, tangents):
    ...     (x,), (t,) = primals, tangents
    ...     return f(x), clnp.cos(x) * t
    >>> print(cg.grad(lambda x: clnp.sum(f(x)))(clnp.asarray([0.0])))
    [1.]
    """

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = ()):
        check_callable("custom_jvp", fun)
        check_argnums("custom_jvp", nondiff_argnums, "nondiff_argnums")
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp: Callable[..., Any] | None = None
        self.__name__ = getattr(fun, "__name__", "custom_jvp")
        self.__doc__ = fun.__doc__

    def defjvp(self, jvp: Callable[..., Any]) -> Callable[..., Any]:
        """Register ``jvp(*nondiff_args, primals, tangents) -> (out, out_tangent)``; returns
        it (so it works as a decorator).

        Parameters
        ----------
        jvp : callable
            The forward-mode rule; ``primals`` and ``tangents`` are tuples of the differentiable
            positional arguments, and ``out_tangent`` must be linear in ``tangents``.

        Returns
        -------
        callable
            ``jvp`` itself.

        Raises
        ------
        TypeError
            ``jvp`` is not callable; raised later, when differentiating, if the rule does not
            return a pair or returns a tangent of the wrong dtype.
        ValueError
            Raised later, when differentiating, if the rule's output has the wrong shape.

        Examples
        --------
        >>> import clnp, clnp_grad as cg
        >>> f = cg.custom_jvp(lambda x: clnp.exp(x))
        >>> @f.defjvp
        ... def f_jvp(primals, tangents):
        ...     (x,), (t,) = primals, tangents
        ...     y = f(x)
        ...     return y, y * t
        >>> out, tangent = cg.jvp(f, (clnp.asarray([0.0]),), (clnp.asarray([2.0]),))
        >>> print(out, tangent)
        [1.] [2.]
        """
        check_callable(f"custom_jvp({self.__name__}).defjvp", jvp, "jvp")
        self.jvp = jvp
        return jvp

    def defjvps(self, *jvps: Callable[..., Any] | None) -> None:
        """Register one rule per differentiable argument, ``jvp_i(tangent_i, out, *primals)
        -> its contribution to the output tangent`` (None: no dependence); the contributions
        add up. Only for array outputs.

        Parameters
        ----------
        *jvps : callable or None
            One per differentiable positional argument, in order.

        Returns
        -------
        None

        Raises
        ------
        TypeError
            Raised later, when differentiating, if a contribution has the wrong dtype.

        Examples
        --------
        >>> import clnp, clnp_grad as cg
        >>> f = cg.custom_jvp(lambda x, y: x * y)
        >>> f.defjvps(lambda tx, out, x, y: tx * y, lambda ty, out, x, y: x * ty)
        >>> x, y = clnp.asarray([2.0]), clnp.asarray([5.0])
        >>> gx, gy = cg.grad(lambda a, b: clnp.sum(f(a, b)), argnums=(0, 1))(x, y)
        >>> print(gx, gy)
        [5.] [2.]
        """
        def rule(*a: Any) -> tuple[Any, Any]:
            primals, tangents = a[-2], a[-1]
            out = self(*_merge(a[:-2], primals, self._nondiff(len(a) - 2 + len(primals))))
            acc = None
            for fn, t in zip(jvps, tangents):
                if fn is not None:
                    c = fn(t, out, *primals)
                    acc = c if acc is None else acc + c
            return out, _zero_tangent(out) if acc is None else acc
        self.jvp = rule

    # -------------------------------------------------------------- calling
    def _nondiff(self, nargs: int) -> set[int]:
        for a in self.nondiff_argnums:
            if not -nargs <= a < nargs:
                raise ValueError(f"custom_jvp {self.__name__}: nondiff_argnums {a} is out of "
                                 f"range for {nargs} positional arguments")
        return {a % nargs for a in self.nondiff_argnums}

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the function: ``fun(*args, **kwargs)`` (keyword arguments become positional, as
        in JAX), differentiated through the registered rule.

        Parameters
        ----------
        *args : pytrees of arrays
            The function's positional arguments (those in ``nondiff_argnums`` must not be
            traced).
        **kwargs
            Keyword arguments that bind to positional parameters of ``fun``.

        Returns
        -------
        pytree
            ``fun(*args)``.

        Raises
        ------
        TypeError
            Keyword-only parameters, a traced argument in ``nondiff_argnums``, differentiating
            before ``defjvp``, or a rule with a wrong output.
        ValueError
            ``nondiff_argnums`` out of range, or a rule's output of the wrong shape.

        Examples
        --------
        >>> import clnp, clnp_grad as cg
        >>> f = cg.custom_jvp(lambda x, y: x * y)
        >>> f.defjvps(lambda tx, out, x, y: tx * y, lambda ty, out, x, y: x * ty)
        >>> print(f(clnp.asarray([2.0]), y=clnp.asarray([5.0])))
        [10.]
        """
        if kwargs:   # keyword arguments become positional, as in JAX
            bound = inspect.signature(self.fun).bind(*args, **kwargs)
            if bound.kwargs:
                raise TypeError(f"custom_jvp {self.__name__}: keyword-only parameters are not "
                                f"supported; got {sorted(bound.kwargs)}")
            args = tuple(bound.args)
        nd = self._nondiff(len(args))
        static = [a for i, a in enumerate(args) if i in nd]
        for v in static:
            if any(isinstance(leaf, Tracer) for leaf in tree_flatten(v)[0]):
                raise TypeError(f"custom_jvp {self.__name__}: an argument in nondiff_argnums "
                                f"is a traced array; pass it as a differentiable argument")
        dyn = [a for i, a in enumerate(args) if i not in nd]
        flat, tdef = tree_flatten(dyn)
        name = self.__name__

        def fun_flat(leaves: list[Any]) -> Any:
            return self.fun(*_merge(static, tree_unflatten(tdef, leaves), nd))

        def rule_flat(primals: list[Any], tangents: list[Any]) -> tuple[list, list, Any]:
            if self.jvp is None:
                raise TypeError(f"custom_jvp {name}: call defjvp(rule) before differentiating "
                                f"it")
            res = self.jvp(*static, tuple(tree_unflatten(tdef, primals)),
                           tuple(tree_unflatten(tdef, tangents)))
            return _check_jvp_output(res, name)
        return _apply(fun_flat, rule_flat, flat, _captured(self.fun, self.jvp), name)


def _merge(static: Sequence[Any], dyn: Sequence[Any], nd: set[int]) -> list[Any]:
    """Positional arguments from the non-differentiable (positions ``nd``) and the others."""
    args, s, d = [], iter(static), iter(dyn)
    for i in range(len(static) + len(dyn)):
        args.append(next(s) if i in nd else next(d))
    return args


def _check_jvp_output(res: Any, name: str) -> tuple[list, list, Any]:
    """``(out leaves, tangent leaves, out structure)``; tangents of non-float outputs are
    None, missing tangents of float outputs zeros."""
    if not (isinstance(res, (tuple, list)) and len(res) == 2):
        raise TypeError(f"custom_jvp {name}: the JVP rule must return a pair (primal_out, "
                        f"tangent_out); got {type(res).__name__}"
                        + (f" of length {len(res)}" if isinstance(res, (tuple, list)) else ""))
    o_flat, o_def = tree_flatten(res[0])
    t_flat, t_def = tree_flatten(res[1])
    if o_def != t_def:
        # None may stand for the tangent of an integer or boolean output
        f_def = tree_flatten(tree_map(lambda o: o if is_float(o) else None, res[0]))[1]
        if t_def != f_def:
            raise ValueError(f"custom_jvp {name}: the JVP rule returned a primal output of "
                             f"structure {o_def} but a tangent output of structure {t_def}")
        it = iter(t_flat)
        t_flat = [next(it) if is_float(o) else None for o in o_flat]
    tangents = []
    for o, t in zip(o_flat, t_flat):
        if not is_float(o):
            tangents.append(None)
            continue
        if t is None:
            tangents.append(_zero_tangent(o))
            continue
        if not hasattr(t, "shape") or tuple(t.shape) != tuple(o.shape):
            raise ValueError(f"custom_jvp {name}: the JVP rule returned a tangent of shape "
                             f"{getattr(t, 'shape', type(t).__name__)} for a primal output of "
                             f"shape {o.shape}")
        if t.dtype != o.dtype:
            raise TypeError(f"custom_jvp {name}: the JVP rule returned a tangent of dtype "
                            f"{t.dtype} for a primal output of dtype {o.dtype}")
        tangents.append(t)
    return o_flat, tangents, o_def


def _captured(*fns: Any) -> list[Tracer]:
    """Traced values the functions hold in their closures (or partial arguments)."""
    found = []
    for fn in fns:
        held = list(getattr(fn, "args", ())) + list(getattr(fn, "keywords", {}).values())
        for cell in getattr(fn, "__closure__", None) or ():
            try:
                held.append(cell.cell_contents)
            except ValueError:   # a cell not yet assigned
                continue
        found += [v for v in tree_flatten(held)[0] if isinstance(v, Tracer)]
    return found


def _apply(fun_flat: Callable[[list], Any],
           rule_flat: Callable[[list, list], tuple[list, list, Any]], flat: list[Any],
           captured: list[Tracer], name: str, above: tuple = ()) -> Any:
    """Evaluate a custom_jvp function at the interpreter that owns its arguments; the
    transformations above it never see them, the ones below see a (batched) custom call."""
    interp = current_interpreter()
    known = (JVPInterpreter, VJPInterpreter, BatchInterpreter)
    closed = next((t for t in captured for i in above + (interp,) if t._interp is i), None)
    if not isinstance(interp, known):   # eager evaluation, or staging into an IR
        if closed is not None:
            # only values the function closes over are traced, not its arguments: the rule
            # has no tangent to map, and the function's body is differentiated instead
            with set_interpreter(above[0]):
                return fun_flat(flat)
        return fun_flat(flat)
    if not _owned(interp, flat):
        with set_interpreter(interp.prev):
            return _apply(fun_flat, rule_flat, flat, captured, name, above + (interp,))
    if closed is not None:
        if isinstance(interp, BatchInterpreter):
            # a batched closure cannot reach a batched copy of the rule: batch the body
            with set_interpreter((above + (interp,))[0]):
                return fun_flat(flat)
        raise TypeError(f"custom_jvp {name}: the function or its JVP rule closes over a "
                        f"value traced by {closed._interp.name} (shape {closed.shape}, "
                        f"dtype {closed.dtype}); pass it as an argument instead")
    if isinstance(interp, JVPInterpreter):
        return _apply_jvp(interp, rule_flat, flat)
    if isinstance(interp, VJPInterpreter):
        return _apply_vjp(interp, fun_flat, rule_flat, flat)
    return _apply_batched(interp, fun_flat, rule_flat, flat, captured, name, above)


def _apply_jvp(interp: JVPInterpreter, rule_flat: Callable, flat: list[Any]) -> Any:
    lifted = [interp.lift(a) for a in flat]
    primals = [p for p, _ in lifted]
    tangents = [_zero_tangent(p) if t is None else t for p, t in lifted]
    with set_interpreter(interp.prev):
        o_flat, t_flat, o_def = rule_flat(primals, tangents)
    return tree_unflatten(o_def, [JVPTracer(interp, o, t) if hasattr(o, "shape") else o
                                  for o, t in zip(o_flat, t_flat)])


def _apply_vjp(interp: VJPInterpreter, fun_flat: Callable, rule_flat: Callable,
               flat: list[Any]) -> Any:
    """Record one tape node whose backward rule is the transpose of the (linear) tangent
    map ``t -> rule(primals, t)[1]``, obtained by reverse-differentiating it with respect to
    ``t``; that pass is traced here, once, and replayed by the backward rule."""
    lifted = [interp.lift(a) for a in flat]
    primals = [p for p, _ in lifted]
    diff = [i for i, (p, r) in enumerate(lifted) if r is not None and is_float(p)]
    if not diff:
        with set_interpreter(interp.prev):
            return fun_flat(primals)
    seen: dict[str, Any] = {}

    def tangent_map(*ts: Any) -> tuple:
        full = [_zero_tangent(p) for p in primals]
        for i, t in zip(diff, ts):
            full[i] = t
        o_flat, t_flat, o_def = rule_flat(primals, full)
        seen["o_def"], seen["float"] = o_def, [t is not None for t in t_flat]
        return tuple(o_flat), tuple(t for t in t_flat if t is not None)

    with set_interpreter(interp.prev):
        (o_flat, _), pullback = vjp(tangent_map, *[_zero_tangent(primals[i]) for i in diff])
    o_flat = list(o_flat)
    floats = seen["float"]

    def rule(ct: Any, _primals: tuple, _out: Any) -> tuple:
        cts = ct if isinstance(ct, list) else [ct]
        t_cts = tuple(_zero_tangent(o) if c is None else c
                      for c, o, f in zip(cts, o_flat, floats) if f)
        got = pullback((tuple(_zero_tangent(o) for o in o_flat), t_cts))
        res: list[Any] = [None] * len(primals)
        for i, g in zip(diff, got):
            res[i] = g
        return tuple(res)
    prim = Primitive("custom_jvp_call", None, multiple_results=True)
    node = Node(prim, {}, [r for _, r in lifted], tuple(primals), o_flat, rule)
    return tree_unflatten(seen["o_def"], [VJPTracer(interp, o, node if f else None, i)
                                          for i, (o, f) in enumerate(zip(o_flat, floats))])


def _apply_batched(interp: BatchInterpreter, fun_flat: Callable, rule_flat: Callable,
                   flat: list[Any], captured: list[Tracer], name: str, above: tuple) -> Any:
    """Hand the call down as a custom function of batched values: ``vmap`` of ``fun`` and of
    the rule, so that transformations below still use the rule."""
    vals, batched = zip(*(interp.lift(a) for a in flat))
    axes = tuple(0 if b else None for b in batched)
    n, size = len(vals), interp.size

    def bfun(leaves: list[Any]) -> Any:
        return vmap(lambda *a: fun_flat(list(a)), in_axes=axes, axis_size=size)(*leaves)

    def brule(primals: list[Any], tangents: list[Any]) -> tuple[list, list, Any]:
        def per_example(*a: Any) -> tuple:
            o_flat, t_flat, o_def = rule_flat(list(a[:n]), list(a[n:]))
            out_def["o_def"] = o_def
            return tuple(o_flat), tuple(t_flat)
        out_def: dict[str, Any] = {}
        o_flat, t_flat = vmap(per_example, in_axes=axes + axes, axis_size=size)(*primals,
                                                                                *tangents)
        return list(o_flat), list(t_flat), out_def["o_def"]
    with set_interpreter(interp.prev):
        out = _apply(bfun, brule, list(vals), captured, name, above + (interp,))
    o_flat, o_def = tree_flatten(out)
    return tree_unflatten(o_def, [BatchTracer(interp, o) for o in o_flat])
