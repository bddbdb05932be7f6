"""Transformations built from jvp/vjp: Jacobians, Hessians, linearize, custom rules, checkpoint.

Jacobians loop over basis vectors (one jvp or vjp per input or output element); ``vmap`` will
batch them once it exists.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import clnp as xp
from clnp._prims import Primitive, current_interpreter, set_interpreter

from . import _ad
from ._ad import Node, VJPInterpreter, VJPTracer, jvp, vjp
from ._tree import tree_flatten, tree_map, tree_unflatten


def _basis(x: Any, k: int) -> Any:
    e = xp.zeros((x.size,), dtype=x.dtype, device=x.device)
    e[k] = 1
    return xp.reshape(e, x.shape)


def _select(args: tuple, argnums: int | Sequence[int], what: str) -> tuple[tuple[int, ...], bool]:
    nums = _ad._argnums(argnums, len(args), what)
    return nums, isinstance(argnums, int)


def _stack_rows(rows: list[Any], lead: tuple[int, ...], tail: tuple[int, ...], x: Any) -> Any:
    if not rows:
        return xp.zeros(lead + tail, dtype=x.dtype, device=x.device)
    return xp.reshape(xp.stack(rows, axis=0), lead + tail)


def jacfwd(fun: Callable[..., Any], argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
    """Jacobian of ``fun`` by forward mode: shape ``out.shape + x.shape`` per argument."""
    def jac(*args: Any) -> Any:
        nums, single = _select(args, argnums, "jacfwd")
        res = []
        for i in nums:
            x = args[i]
            cols = []
            out = None
            for k in range(x.size):
                def f_i(v: Any, i: int = i) -> Any:
                    full = list(args)
                    full[i] = v
                    return fun(*full)
                out, t = jvp(f_i, (x,), (_basis(x, k),))
                cols.append(t)
            if out is None:
                out = fun(*args)
            # columns are stacked on axis 0; move the x axes behind the output axes
            j = _stack_rows(cols, x.shape, out.shape, x)
            perm = tuple(range(x.ndim, x.ndim + out.ndim)) + tuple(range(x.ndim))
            res.append(xp.permute_dims(j, perm) if perm != tuple(range(j.ndim)) else j)
        return res[0] if single else tuple(res)
    return jac


def jacrev(fun: Callable[..., Any], argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
    """Jacobian of ``fun`` by reverse mode: shape ``out.shape + x.shape`` per argument."""
    def jac(*args: Any) -> Any:
        nums, single = _select(args, argnums, "jacrev")

        def f_sel(*sel: Any) -> Any:
            full = list(args)
            for i, v in zip(nums, sel):
                full[i] = v
            return fun(*full)
        out, f_vjp = vjp(f_sel, *[args[i] for i in nums])
        rows: list[list[Any]] = [[] for _ in nums]
        for k in range(out.size):
            cts = f_vjp(_basis(out, k))
            for r, c in zip(rows, cts):
                r.append(c)
        res = [_stack_rows(r, out.shape, args[i].shape, args[i]) for r, i in zip(rows, nums)]
        return res[0] if single else tuple(res)
    return jac


def hessian(fun: Callable[..., Any], argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
    """Hessian of scalar ``fun``: ``jacfwd(jacrev(fun))``."""
    return jacfwd(jacrev(fun, argnums), argnums)


def linearize(fun: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """``(fun(*primals), f_jvp)`` where ``f_jvp(*tangents)`` is the JVP at ``primals``.

    The tangent map re-runs the forward pass (no partial evaluation yet)."""
    out = fun(*primals)

    def f_jvp(*tangents: Any) -> Any:
        return jvp(fun, primals, tangents)[1]
    return out, f_jvp


class custom_vjp:
    """A function with a user-defined reverse-mode rule (JAX's ``custom_vjp``).

    ``f = custom_vjp(fun); f.defvjp(fwd, bwd)`` with ``fwd(*args) -> (out, residuals)`` and
    ``bwd(residuals, ct) -> tuple of cotangents, one per argument``. Under forward mode and
    eager evaluation ``fun`` itself runs."""

    def __init__(self, fun: Callable[..., Any]):
        self.fun = fun
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None
        self.__name__ = getattr(fun, "__name__", "custom_vjp")
        self.__doc__ = fun.__doc__

    def defvjp(self, fwd: Callable[..., Any], bwd: Callable[..., Any]) -> "custom_vjp":
        self.fwd, self.bwd = fwd, bwd
        return self

    def __call__(self, *args: Any) -> Any:
        interp = current_interpreter()
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


def checkpoint(fun: Callable[..., Any]) -> Callable[..., Any]:
    """``fun`` whose intermediate values are recomputed in the backward pass instead of being
    kept (rematerialisation): only the inputs are stored."""
    f = custom_vjp(fun)

    def fwd(*args: Any) -> tuple[Any, Any]:
        return fun(*args), args

    def bwd(args: Any, ct: Any) -> tuple:
        _, f_vjp = vjp(fun, *args)
        return f_vjp(ct)
    f.defvjp(fwd, bwd)
    return f
