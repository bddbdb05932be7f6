"""clnp_grad: JAX-style function transformations over clnp.

Implemented: ``grad``, ``value_and_grad``, ``vjp``, ``jvp``, ``linearize``, ``jacfwd``,
``jacrev``, ``hessian``, ``custom_vjp``, ``custom_jvp``, ``checkpoint``, ``vmap``,
``stop_gradient`` and pytrees (``tree_map``, ``tree_flatten``, ``tree_unflatten``,
``tree_leaves``, ``register_pytree_node``). Differentiation rules cover the elementwise op
table, reductions, views, concatenation, type conversion, indexing, sorting, cumulative sums
and products, fft and linalg; other primitives raise ``NotImplementedError`` naming the primitive.
``jit`` stages a function and fuses it into OpenCL kernels (docs/jit.md). Collectives
(``psum``, ``pmean``, ``pmax``, ``pmin``, ``all_gather``, ``psum_scatter``, ``ppermute``,
``all_to_all``, ``axis_index``) work inside ``vmap(..., axis_name=...)`` and
``clnp_nn.parallel.pmap`` (docs/parallel.md).
"""
from __future__ import annotations

from typing import Any

from clnp._prims import def_impl, primitive

from ._ad import grad, jvp, value_and_grad, vjp
from ._core import ConcretizationError, LeakedTracerError
from ._derived import checkpoint, custom_jvp, custom_vjp, hessian, jacfwd, jacrev, linearize
from ._vmap import vmap
from ._collectives import (all_gather, all_to_all, axis_index, pmax, pmean, pmin, ppermute,
                           psum, psum_scatter)
from . import _rules_linalg  # noqa: F401  (registers the linalg rules)
from . import _rules_kernels  # noqa: F401  (ElementwiseKernel/RawKernel: vmap, no derivative)
from ._ir import Graph, eval_graph, make_ir
from . import lax
from . import random
from ._jit import clear_caches, jit
from ._tree import (register_pytree_node, tree_flatten, tree_leaves, tree_map, tree_structure,
                    tree_unflatten)


@def_impl("stop_gradient")
def _stop_gradient_impl(x: Any) -> Any:
    return x


def stop_gradient(x: Any) -> Any:
    """``x`` unchanged, but treated as a constant by differentiation (zero derivative)."""
    return tree_map(lambda v: primitive("stop_gradient").bind(v) if hasattr(v, "shape") else v, x)


__all__ = ["jit", "clear_caches", "grad", "value_and_grad", "vjp", "jvp", "stop_gradient", "jacfwd", "jacrev",
           "hessian", "linearize", "custom_vjp", "custom_jvp", "checkpoint", "vmap", "make_ir",
           "eval_graph", "Graph", "ConcretizationError",
           "LeakedTracerError", "register_pytree_node", "tree_flatten", "tree_unflatten",
           "tree_map", "tree_leaves", "tree_structure", "random", "lax", "psum", "pmean", "pmax",
           "pmin", "all_gather", "psum_scatter", "ppermute", "all_to_all", "axis_index"]
