"""Generated Python: source text compiled once, naming the objects it uses as globals.

Per-call paths that would otherwise walk a description of their work (a pytree structure, a
recorded call's launches) are written out as straight-line Python once and compiled: no
loops over descriptors, no tuple unpacking per item, every object a global of the function.
"""
from __future__ import annotations

from typing import Any, Callable


class GeneratedSource:
    """The objects a generated function names (``const``), fresh local names, and the
    compiled function.

    Examples
    --------
    >>> from clnp._runtime.generated import GeneratedSource
    >>> code = GeneratedSource()
    >>> k = code.const(10)
    >>> f = code.function(f"def add(x):\\n    return x + {k}\\n", "add", "example")
    >>> f(5)
    15
    """

    def __init__(self) -> None:
        self.ns: dict[str, Any] = {}
        self.count = iter(range(1 << 30))

    def const(self, v: Any) -> str:
        """A name bound to ``v`` in the generated function's globals."""
        name = f"_c{next(self.count)}"
        self.ns[name] = v
        return name

    def fresh(self, prefix: str) -> str:
        """A local name not used before in this source."""
        return f"{prefix}{next(self.count)}"

    def function(self, src: str, name: str, what: str) -> Callable:
        """Compile ``src`` and return its function ``name``; tracebacks show ``what``."""
        exec(compile(src, f"<generated {what}>", "exec"), self.ns)
        return self.ns[name]
