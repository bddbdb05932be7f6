"""Generated pytree code (clnp_grad._tree.flattener / unflattener): the leaves and trees
equal the general walk's, every change of structure is refused, and jit's per-call path
(which flattens with the last structure's code) retraces on a structure change."""
from __future__ import annotations

import collections
import dataclasses

import numpy as np
import pytest

import clnp
import clnp_grad as cg
import clnp_nn as nn
from clnp_grad._tree import flattener, tree_flatten, tree_unflatten, unflattener

Pair = collections.namedtuple("Pair", "a b")


@dataclasses.dataclass
class Box:
    x: object
    tag: str = dataclasses.field(default="t", metadata={"static": True})


cg.register_pytree_node(Box, lambda b: ((b.x,), b.tag), lambda tag, ch: Box(ch[0], tag))


def _trees():
    lin = nn.Linear(3, 2, key=cg.random.key(0))
    return [
        {"b": [1, (2, 3)], "a": None, "c": {"x": 4, "y": [5]}},
        (Pair(1, [2, 3]), [], (), {}),
        [lin, {"opt": (lin.weight, None)}],
        {"box": Box([1, 2], "u"), "k": 3},
        ([[[[1]]]], 2),
    ]


@pytest.mark.parametrize("i", range(5))
def test_generated_code_equals_the_walk(i):
    tree = _trees()[i]
    leaves, tdef = tree_flatten(tree)
    flat = flattener(tdef)
    assert flat is not None and flat(tree) == leaves
    built = unflattener(tdef)(leaves)
    again, tdef2 = tree_flatten(built)
    assert tdef2 == tdef and again == leaves
    assert type(built) is type(tree_unflatten(tdef, leaves))


def test_dataclass_nodes_and_their_static_fields():
    @dataclasses.dataclass
    class Plain:
        v: object
        s: int = dataclasses.field(default=0, metadata={"static": True})
    tree = {"p": Plain([1, 2], 7)}
    leaves, tdef = tree_flatten(tree)
    assert flattener(tdef)(tree) == [1, 2]
    assert flattener(tdef)({"p": Plain([1, 2], 8)}) is None       # a static field changed
    built = unflattener(tdef)([5, 6])
    assert isinstance(built["p"], Plain) and built["p"].v == [5, 6] and built["p"].s == 7


def test_every_change_of_structure_is_refused():
    lin = nn.Linear(3, 2, key=cg.random.key(0))
    base = {"a": [1, 2], "b": (3, None), "m": lin, "p": Pair(4, 5), "x": Box(6, "u")}
    flat = flattener(tree_flatten(base)[1])
    assert flat(base) == tree_flatten(base)[0]
    changed = [
        {**base, "a": [1, 2, 3]},                       # a list grew
        {**base, "a": (1, 2)},                          # list -> tuple
        {**base, "b": (3, 4)},                          # None -> a value
        {k: v for k, v in base.items() if k != "p"},    # a key less
        {**{k: v for k, v in base.items() if k != "p"}, "q": Pair(4, 5)},   # same size
        {**base, "m": nn.Linear(3, 2, key=cg.random.key(0)).replace(in_features=4)},
        {**base, "p": (4, 5)},                          # namedtuple -> tuple
        {**base, "x": Box(6, "v")},                     # registered node's aux
        [base],
    ]
    for tree in changed:
        assert flat(tree) is None, tree


def test_a_container_in_a_leaf_position_comes_back_as_a_leaf():
    """The caller checks the leaves' types (jit's per-call path takes Arrays only)."""
    flat = flattener(tree_flatten({"a": 1, "b": [2]})[1])
    assert flat({"a": {"deep": 1}, "b": [2]}) == [{"deep": 1}, 2]
    assert flat({"a": None, "b": [2]}) == [None, 2]


def test_jit_sees_a_module_whose_parameter_became_none():
    @cg.jit
    def f(m, x):
        return m(x)
    x = clnp.asarray(np.ones((2, 3), np.float32))
    with_bias = nn.Linear(3, 2, key=cg.random.key(0))
    no_bias = with_bias.replace(bias=None)
    for m in (with_bias, no_bias, with_bias, no_bias):
        want = x.to_numpy() @ m.weight.to_numpy().T + (0 if m.bias is None else
                                                         m.bias.to_numpy())
        np.testing.assert_allclose(f(m, x).to_numpy(), want, rtol=1e-6)


def test_jit_retraces_when_the_structure_changes():
    traces = []

    @cg.jit
    def f(state):
        traces.append(1)
        return cg.tree_map(lambda v: v * 2.0, state)
    a = clnp.asarray([1.0, 2.0])
    s1 = {"w": a, "opt": (a, None)}
    for _ in range(3):
        out = f(s1)
    assert len(traces) == 1
    np.testing.assert_array_equal(out["opt"][0].to_numpy(), [2.0, 4.0])
    assert out["opt"][1] is None
    s2 = {"w": a, "opt": (None, a)}                 # same leaves and keys, other structure
    out = f(s2)
    assert len(traces) == 2 and out["opt"][0] is None
    np.testing.assert_array_equal(out["opt"][1].to_numpy(), [2.0, 4.0])
    out = f(s1)                                     # back to the first: no new trace
    assert len(traces) == 2 and out["opt"][1] is None


def test_jit_of_a_training_state_of_modules():
    model = nn.Sequential([nn.Linear(4, 3, key=cg.random.key(0)), nn.Linear(3, 2,
                                                                          key=cg.random.key(1))])
    x = clnp.asarray(np.ones((5, 4), np.float32))

    @cg.jit
    def step(m, x):
        g = cg.grad(lambda m: clnp.sum(m(x) ** 2))(m)
        return cg.tree_map(lambda p, q: p - 0.1 * q, m, g)
    m = model
    for _ in range(3):
        m = step(m, x)
    ref = model
    for _ in range(3):
        g = cg.grad(lambda m: clnp.sum(m(x) ** 2))(ref)
        ref = cg.tree_map(lambda p, q: p - 0.1 * q, ref, g)
    for a, b in zip(tree_flatten(m)[0], tree_flatten(ref)[0]):
        np.testing.assert_allclose(a.to_numpy(), b.to_numpy(), rtol=1e-5, atol=1e-6)
    assert type(m) is nn.Sequential
