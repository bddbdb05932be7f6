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

from clnp._namespace import hide_imports as _hide_imports
from clnp._runtime.user_frames import register_library_package as _register_library_package

from clnp._core.prims import def_impl, primitive

from ._ad import grad, jvp, value_and_grad, vjp
from ._core import ConcretizationError, LeakedTracerError
from ._derived import checkpoint, custom_jvp, custom_vjp, hessian, jacfwd, jacrev, linearize
from ._vmap import vmap
from ._collectives import (all_gather, all_to_all, axis_index, pmax, pmean, pmin, ppermute,
                           psum, psum_scatter)
from . import _rules_extra  # noqa: F401  (sorting, cumprod, real FFTs, unique: JVP/VJP/batching rules)
from . import _rules_linalg  # noqa: F401  (registers the linalg rules)
from . import _rules_kernels  # noqa: F401  (ElementwiseKernel/RawKernel: vmap, no derivative)
from ._ir import Graph, eval_graph, make_ir
from . import lax
from . import random
from ._jit import clear_caches, jit
from ._tree import (register_pytree_node, tree_flatten, tree_leaves, tree_map, tree_structure,
                    tree_unflatten)

# dir() lists __all__ (defined below), not the imports (clnp/_namespace.py)
__dir__ = _hide_imports(__name__)
lax.__dir__ = _hide_imports(lax.__name__)  # type: ignore[method-assign]
random.__dir__ = _hide_imports(random.__name__)  # type: ignore[method-assign]


@def_impl("stop_gradient")
def _stop_gradient_impl(x: Any) -> Any:
    return x


def stop_gradient(x: Any) -> Any:
    """Return ``x`` unchanged, treated as a constant by differentiation (zero derivative).

    Parameters
    ----------
    x : array or pytree
        Value to stop gradients at; leaves that are not arrays pass through.

    Returns
    -------
    array or pytree
        ``x``, with the same structure and values.

    Examples
    --------
    >>> import clnp, clnp_grad as cg
    >>> f = lambda x: clnp.sum(x * cg.stop_gradient(x))
    >>> print(cg.grad(f)(clnp.asarray([3.0])))
    [3.]
    """
    return tree_map(lambda v: primitive("stop_gradient").bind(v) if hasattr(v, "shape") else v, x)


__all__ = ["jit", "clear_caches", "grad", "value_and_grad", "vjp", "jvp", "stop_gradient", "jacfwd", "jacrev",
           "hessian", "linearize", "custom_vjp", "custom_jvp", "checkpoint", "vmap", "make_ir",
           "eval_graph", "Graph", "ConcretizationError",
           "LeakedTracerError", "register_pytree_node", "tree_flatten", "tree_unflatten",
           "tree_map", "tree_leaves", "tree_structure", "random", "lax", "psum", "pmean", "pmax",
           "pmin", "all_gather", "psum_scatter", "ppermute", "all_to_all", "axis_index"]

# frames in clnp_grad are library code for error messages (user_line) and warnings
_register_library_package(__file__)
