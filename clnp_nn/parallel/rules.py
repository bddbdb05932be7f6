"""The transformation rules of the ``pmap`` primitive: ``grad``, ``jvp``, ``vmap`` and ``jit``
of a pmapped function (JAX's ``xla_pmap`` rules).

``pmap`` called under a transformation binds ``pmap_p`` (``api``), which carries the staged
per-device Graph and the mapping (``in_axes``/``out_axes`` per flat argument and result, the
axis name, the global devices). Each rule transforms the per-device program, stages the
result once per (Graph, rule, flags) under the same axis binding, and binds ``pmap_p`` again
one level down, so the transformed program runs on every device at once:

- JVP: pmap of the JVP of the body; tangents are mapped like their primals (``in_axes``) and
  come out like the outputs (``out_axes``).
- VJP: the body's forward-and-backward program, staged once and split at the cotangents
  (as ``jit``'s): a forward pmap returning the outputs and the per-device residuals (kept on
  their devices as ShardedArray when the forward runs eagerly) and a backward pmap put on the
  tape. The cotangent of an ``in_axes=None`` argument comes back per device and is summed
  over this process's devices (as JAX's ``sum(0)``: the forward's mapped outputs hold this
  process's shards only, so across processes each process differentiates its own part); the
  cotangent of an ``out_axes=None`` output goes to the first local device only (the forward
  took that output from it), the others get zeros.
- vmap: pmap of the vmapped body; the batch axis, first in a batched value, moves every
  mapped axis (``in_axes``, ``out_axes``) one place to the right.
- staging (``jit``, ``make_ir``): no rule; the primitive is recorded as one equation and
  evaluated once while tracing, and a compiled function calls it as a host-driven step (it
  waits inside collectives and runs on several queues, so its launches are never replayed).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import clnp
from clnp._core.prims import EVAL, set_interpreter
from clnp._core.dtypes import kind as dkind
from clnp_grad._collectives import axis_index
from clnp_grad._core import HIGHER_ORDER
from clnp_grad._ir import Graph, eval_graph
from clnp_grad._jit.api import _body_of_diff, _derived, _lift_diff, split_at_cotangents

from .api import _aval, _participants_of, _stage_body, pmap_p


def _stage_derived(fn: Callable[..., Any], avals: Sequence[Any], params: dict) -> Graph:
    """Stage the per-device function ``fn`` on zeros of ``avals`` under the pmap's axis."""
    who = _participants_of(params["devices"])
    dev0 = who.local[0]
    with set_interpreter(EVAL):      # concrete, whatever interpreter is current
        examples = [clnp.zeros(a.shape, dtype=a.dtype, device=dev0) for a in avals]
    g, _ = _stage_body(fn, examples, [False] * len(examples),
                      lambda leaves: (tuple(leaves), {}), params["axis_name"], who,
                      params["name"])
    return g


def _bind(args: Sequence[Any], params: dict, **changes: Any) -> list[Any]:
    p = dict(params)
    p.update(changes)
    return list(pmap_p.bind(*args, **p))


# ------------------------------------------------------------------------------------ JVP
def _jvp_rule(interp: Any, args: tuple, params: dict) -> Any:
    from clnp_grad._ad import JVPTracer, jvp
    from clnp_grad._rules import zeros_like
    graph = params["graph"]
    primals, tangents, diff = _lift_diff(interp, args)
    n = len(primals)

    def body(*pt: Any) -> list:
        ps, ts = list(pt[:n]), list(pt[n:])
        dp = [p for d, p in zip(diff, ps) if d]
        outs, touts = jvp(_body_of_diff(graph, diff, ps), dp, ts)
        return list(outs) + [t if t is not None else zeros_like(o)
                             for o, t in zip(outs, touts)]
    in_avals = [v.aval for v in graph.in_binders]
    g = _derived(graph, ("pmap-jvp", diff), lambda: _stage_derived(
        body, in_avals + [a for a, d in zip(in_avals, diff) if d], params))
    in_axes = params["in_axes"]
    with set_interpreter(interp.prev):
        res = _bind(list(primals) + [t for t, d in zip(tangents, diff) if d], params, graph=g,
                    in_axes=in_axes + tuple(a for a, d in zip(in_axes, diff) if d),
                    out_axes=params["out_axes"] * 2, name=f"jvp({params['name']})", keep=())
    m = len(res) // 2
    return tuple(JVPTracer(interp, o, t if dkind(o.dtype) in "fc" else None)
                 for o, t in zip(res[:m], res[m:]))


# ------------------------------------------------------------------------------------ VJP
def _split(graph: Graph, diff: tuple, params: dict) -> tuple:
    """Forward and backward per-device Graphs of the body (see the module docstring)."""
    from clnp_grad._ad import vjp
    from clnp_grad._rules import zeros_like
    name, in_axes, out_axes = params["axis_name"], params["in_axes"], params["out_axes"]
    first = _participants_of(params["devices"]).local_ids[0]   # global index of local device 0
    out_avals = [_aval(o) for o in graph.outs]
    out_float = tuple(dkind(a.dtype) in "fc" for a in out_avals)
    n = len(graph.in_binders)
    diff_idx = [i for i, d in enumerate(diff) if d]

    def joint(*vals: Any) -> list:
        ps, cts = vals[:n], list(vals[n:])
        dp = [ps[i] for i in diff_idx]
        outs, f_vjp = vjp(_body_of_diff(graph, diff, ps), *dp)
        it = iter(cts)
        full = []
        for o, fl, ax in zip(outs, out_float, out_axes):
            if not fl:
                full.append(zeros_like(o))
                continue
            c = next(it)
            if ax is None:      # the forward took this output from the first local device
                c = clnp.where(axis_index(name) == first, c, zeros_like(c))
            full.append(c)
        in_cts = list(f_vjp(full))
        return list(outs) + [zeros_like(ps[i]) if c is None else c
                             for i, c in zip(diff_idx, in_cts)]
    in_avals = [v.aval for v in graph.in_binders]
    ct_avals = [a for a, fl in zip(out_avals, out_float) if fl]
    g = _stage_derived(joint, in_avals + ct_avals, params)
    fwd, bwd = split_at_cotangents(g, n, len(ct_avals), len(out_avals))
    return fwd, bwd, len(out_avals), out_float, len(fwd.outs) - len(out_avals)


def _vjp_rule(interp: Any, args: tuple, params: dict) -> Any:
    from clnp_grad._ad import Node, VJPTracer
    from clnp_grad._rules import is_float
    graph = params["graph"]
    primals, parents, diff = _lift_diff(interp, args)
    fwd, bwd, n_out, out_float, n_res = _derived(graph, ("pmap-vjp", diff),
                                                 lambda: _split(graph, diff, params))
    # residuals stay on their devices when the forward runs eagerly; a staged or traced
    # forward below this level holds plain arrays only
    keep = tuple(range(n_out, n_out + n_res)) if interp.prev is EVAL else ()
    with set_interpreter(interp.prev):
        res = _bind(primals, params, graph=fwd, out_axes=params["out_axes"] + (0,) * n_res,
                    name=f"fwd({params['name']})", keep=keep)
    outs, residuals = res[:n_out], res[n_out:]
    ct_axes = tuple(a for a, fl in zip(params["out_axes"], out_float) if fl)
    # a broadcast argument's cotangent comes back per device (axis 0) and is summed here
    in_ct_axes = tuple(0 if a is None else a for a, d in zip(params["in_axes"], diff) if d)
    summed = [a is None for a, d in zip(params["in_axes"], diff) if d]

    def rule(ct: Any, _primals: tuple, _out: Any) -> tuple:
        cts = ct if isinstance(ct, list) else [ct]
        floats = [(c, o) for c, o, fl in zip(cts, outs, out_float) if fl]
        cts = [clnp.zeros(o.shape, dtype=o.dtype, device=o.device) if c is None else c
               for c, o in floats]
        got = _bind(list(residuals) + cts, params, graph=bwd, in_axes=(0,) * n_res + ct_axes,
                    out_axes=in_ct_axes, name=f"bwd({params['name']})", keep=())
        it = iter(clnp.sum(g, axis=0) if s else g for g, s in zip(got, summed))
        return tuple(next(it) if d else None for d in diff)
    node = Node(pmap_p, {}, parents, tuple(primals), outs, rule)
    return tuple(VJPTracer(interp, o, node if is_float(o) else None, i)
                 for i, o in enumerate(outs))


# ----------------------------------------------------------------------------------- vmap
def _vmap_rule(interp: Any, args: tuple, params: dict) -> Any:
    from clnp_grad._vmap import BatchTracer, vmap
    graph = params["graph"]
    lifted = [interp.lift(a) for a in args]
    batched = tuple(b for _, b in lifted)
    vals = [v for v, _ in lifted]
    if not any(batched):
        with set_interpreter(interp.prev):
            return tuple(pmap_p.bind(*vals, **params))
    axes = tuple(0 if b else None for b in batched)

    def body(*xs: Any) -> list:
        return list(vmap(lambda *ys: list(eval_graph(graph, *ys)), in_axes=axes,
                         axis_name=interp.axis_name)(*xs))
    in_avals = [v.aval for v in graph.in_binders]
    avals = [type(a)((interp.size,) + tuple(a.shape), a.dtype) if b else a
             for a, b in zip(in_avals, batched)]
    g = _derived(graph, ("pmap-vmap", batched, interp.size, interp.axis_name),
                 lambda: _stage_derived(body, avals, params))
    in_axes = tuple(None if a is None else a + (1 if b else 0)
                    for a, b in zip(params["in_axes"], batched))
    out_axes = tuple(None if a is None else a + 1 for a in params["out_axes"])
    with set_interpreter(interp.prev):
        res = _bind(vals, params, graph=g, in_axes=in_axes, out_axes=out_axes,
                    name=f"vmap({params['name']})", keep=())
    return tuple(BatchTracer(interp, o) for o in res)


HIGHER_ORDER[("jvp", "pmap")] = _jvp_rule
HIGHER_ORDER[("vjp", "pmap")] = _vjp_rule
HIGHER_ORDER[("vmap", "pmap")] = _vmap_rule

__all__: list[str] = []    # registers rules only; the primitive is api.pmap_p
