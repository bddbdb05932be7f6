"""``clnp_grad.jit``: staging (``staging``), fusion (``fusion``), code generation
(``codegen``), executables (``executable``) and the user API with its cache (``api``).
docs/jit.md describes what fuses and how calls are replayed."""
from .api import Jitted, Lowered, clear_caches, jit

__all__ = ["jit", "Jitted", "Lowered", "clear_caches"]
