"""Transformation rules of the user-kernel primitives (``clnp.ElementwiseKernel``,
``clnp.RawKernel``): ``elementwise_kernel`` and ``raw_kernel``.

- vmap: an ElementwiseKernel is elementwise, so the batched operands broadcast as the table
  ops' do (one launch for the whole batch) -- unless its body reads ``i``/``n`` or it has
  ``raw`` parameters (their meaning depends on the layout): then NotImplementedError. A
  RawKernel knows nothing of batches: it runs once per batch element and the outputs are
  stacked.
- jvp/grad: neither has a derivative. Differentiating through one raises TypeError naming
  the kernel and pointing at ``clnp_grad.custom_vjp``: jvp when a float input carries a
  tangent, grad/vjp in the backward pass when a cotangent reaches the kernel's result.
  Calls on values that carry no derivative pass through.
- staging/jit: the generic path records them as opaque steps (their params describe them).
"""
from __future__ import annotations

from typing import Any

import clnp as xp
from clnp._routines.custom_kernels import uses_index
from clnp._core.prims import Primitive, set_interpreter

from ._ad import JVPTracer, Node, VJPTracer
from ._core import HIGHER_ORDER
from ._rules import is_float
from ._vmap import BATCH, _batch_elementwise

_WHAT = {"elementwise_kernel": "ElementwiseKernel", "raw_kernel": "RawKernel"}


def _batch_ew_kernel(prim: Primitive, vals: tuple, batched: tuple, size: int,
                     **params: Any) -> Any:
    name = params["name"]
    if any(p.raw for p in params["in_params"] + params["out_params"]):
        raise NotImplementedError(f"vmap: ElementwiseKernel '{name}' has raw parameters, whose "
                                  f"indexing depends on the layout; it cannot be batched")
    if uses_index(params["operation"]) or params["loop_size"] is not None:
        raise NotImplementedError(f"vmap: ElementwiseKernel '{name}' reads the flat index 'i' "
                                  f"or the size 'n', which change meaning under batching; it "
                                  f"cannot be batched")
    return _batch_elementwise(prim, vals, batched, size, **params)


def _batch_raw_kernel(prim: Primitive, vals: tuple, batched: tuple, size: int,
                      **params: Any) -> Any:
    """One launch per batch element, outputs stacked along a new leading axis."""
    per = []
    for k in range(size):
        args = [v[k] if b else v for v, b in zip(vals, batched)]
        per.append(prim.bind(*args, **params))
    return tuple(xp.stack([r[j] for r in per], axis=0) for j in range(len(params["outputs"])))


BATCH["elementwise_kernel"] = _batch_ew_kernel
BATCH["raw_kernel"] = _batch_raw_kernel


def _not_differentiable(prim: Primitive, params: dict) -> TypeError:
    return TypeError(
        f"{_WHAT[prim.name]} '{params['name']}' has no derivative rule: clnp_grad cannot "
        f"differentiate through user-written kernels. Wrap the function that calls it in "
        f"clnp_grad.custom_vjp (fwd runs the kernel, bwd computes the cotangents, with "
        f"another kernel if you like), or apply clnp_grad.stop_gradient to its result")


def _jvp_rule(interp: Any, args: tuple, params: dict, prim: Primitive) -> Any:
    lifted = [interp.lift(a) for a in args]
    if any(t is not None and is_float(p) for p, t in lifted):
        raise _not_differentiable(prim, params)
    owned = any(isinstance(a, JVPTracer) and a._interp is interp for a in args)
    with set_interpreter(interp.prev):
        out = prim.bind(*[p for p, _ in lifted], **params)
    return tuple(JVPTracer(interp, o, None) for o in out) if owned else out


def _vjp_rule(interp: Any, args: tuple, params: dict, prim: Primitive) -> Any:
    """Record the call; the backward pass raises only if a cotangent reaches it (grad
    inputs and stop_gradient results look alike on the tape, so the forward pass cannot
    tell whether a derivative is wanted)."""
    lifted = [interp.lift(a) for a in args]
    primals = tuple(p for p, _ in lifted)
    with set_interpreter(interp.prev):
        out = prim.bind(*primals, **params)
    if all(r is None for _, r in lifted):
        return out

    def rule(ct: Any, _primals: tuple, _out: Any) -> tuple:
        if any(r is not None and is_float(p) for p, r in lifted):
            raise _not_differentiable(prim, params)
        return (None,) * len(lifted)
    node = Node(prim, params, [r for _, r in lifted], primals, list(out), rule)
    return tuple(VJPTracer(interp, o, node if is_float(o) else None, i)
                 for i, o in enumerate(out))


def _register() -> None:
    from clnp._core.prims import primitive
    for name in _WHAT:
        prim = primitive(name, multiple_results=True)
        HIGHER_ORDER[("jvp", name)] = lambda i, a, p, prim=prim: _jvp_rule(i, a, p, prim)
        HIGHER_ORDER[("vjp", name)] = lambda i, a, p, prim=prim: _vjp_rule(i, a, p, prim)


_register()
