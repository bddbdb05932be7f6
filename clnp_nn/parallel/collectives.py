"""The collectives, valid inside ``pmap`` and ``vmap(..., axis_name=...)``.

They are ``clnp_grad`` primitives (``clnp_grad._collectives``: meaning, differentiation and
batching rules live beside the other transformation rules, and ``clnp_grad`` never imports
``clnp_nn``); this module is their home in the parallel API.
"""
from clnp_grad._collectives import (all_gather, all_to_all, axis_index, axis_size, pmax, pmean,
                                    pmin, ppermute, psum, psum_scatter)

__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter", "ppermute",
           "all_to_all", "axis_index", "axis_size"]
