"""clnp_grad: JAX-style function transformations over clnp (grad, vjp, jvp, vmap, jit).

Not implemented yet: this package exists so that the layering is fixed from the start. The
transforms will push interpreters through ``clnp._prims.set_interpreter``.
"""
