"""make_ir: staged graphs are typed, printable, checked and replayable (and transformable)."""
from __future__ import annotations

import numpy as np
import pytest

import clnp
import clnp_grad as cg
from clnp_grad._ir import Aval, Eqn, Graph, Var


def test_make_ir_prints_and_replays(device):
    w = clnp.asarray([[1.0, 2.0], [3.0, 4.0]], dtype=clnp.float32, device=device)

    def f(x):
        return clnp.sum(clnp.tanh(x @ w + 1.0) ** 2)
    x = clnp.ones((3, 2), dtype=clnp.float32, device=device)
    g = cg.make_ir(f)(x)
    text = str(g)
    assert text.splitlines()[0] == "{ lambda a:float32[3,2] ."
    assert "b:float32[2,2] = <const>" in text
    assert "= dot_general[" in text and "= tanh[" in text
    assert "= reduce[op=sum axes=(0, 1)" in text and text.strip().endswith("}")
    names = [e.prim.name for e in g.eqns]
    assert names[:3] == ["dot_general", "add", "tanh"] and names[-1] == "reduce"
    assert len(names) == 5 and len(g.in_binders) == 1 and len(g.outs) == 1
    (out,) = cg.eval_graph(g, x)
    np.testing.assert_allclose(float(out), float(f(x)), rtol=1e-6)
    # a replayed graph is differentiable like the function it came from
    gx = cg.grad(lambda z: cg.eval_graph(g, z)[0])(x)
    np.testing.assert_allclose(np.asarray(gx), np.asarray(cg.grad(f)(x)), rtol=1e-6)


def test_ir_of_grad_contains_backward_pass(device):
    x = clnp.ones((4,), dtype=clnp.float32, device=device)
    g = cg.make_ir(cg.grad(lambda v: clnp.sum(clnp.sin(v) * v)))(x)
    names = [e.prim.name for e in g.eqns]
    assert "cos" in names and names.count("multiply") >= 2
    g.typecheck()


def test_typecheck_and_eval_errors(device):
    a = Var(Aval((2,), np.dtype("float32")))
    b = Var(Aval((2,), np.dtype("float32")))
    from clnp._core.prims import primitive
    bad = Graph([a], [Eqn(primitive("add"), [a, b], {}, [Var(Aval((2,), a.aval.dtype))])], [a])
    with pytest.raises(TypeError, match="used before definition"):
        bad.typecheck()
    g = cg.make_ir(lambda v: v * 2.0)(clnp.ones((2,), dtype=clnp.float32, device=device))
    with pytest.raises(TypeError, match="float32\\[3\\]"):
        cg.eval_graph(g, clnp.ones((3,), dtype=clnp.float32, device=device))
    with pytest.raises(TypeError, match="expected 1 arguments"):
        cg.eval_graph(g)
