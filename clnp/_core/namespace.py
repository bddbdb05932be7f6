"""The public namespace, as the layers below it reach it: handed in, never imported.

The operator surface (``x + y``, ``x.sum()``), the NumPy protocols and NumPy's composed
functions call the namespace's functions at run time, so that a ``clnp_grad`` tracer traces
them exactly as the function calls they spell. The namespace is built on top of the layers
that need it, so none of them may import it (tests/test_layers.py): ``clnp/__init__.py``
hands its module in with :func:`bind` as its first step (its names fill in as it runs, as
they would for a module importing ``clnp`` while it is imported), and :func:`namespace`
returns it.
"""
from __future__ import annotations

from types import ModuleType

_BOUND: ModuleType | None = None


def bind(module: ModuleType) -> None:
    """Hand in the public namespace (``clnp/__init__.py`` does, once, first thing).

    Parameters
    ----------
    module : module
        The ``clnp`` module.

    Returns
    -------
    None

    Examples
    --------
    >>> import clnp
    >>> from clnp._core import namespace
    >>> namespace.bind(clnp)          # what importing clnp already did
    >>> namespace.namespace() is clnp
    True
    """
    global _BOUND
    _BOUND = module


def namespace() -> ModuleType:
    """The public namespace (the ``clnp`` module) handed in by :func:`bind`.

    Returns
    -------
    module
        ``clnp``.

    Raises
    ------
    RuntimeError
        Called while ``clnp`` is still being imported (a module-level call in a layer
        below the namespace: call it inside the function that needs it).

    Examples
    --------
    >>> import clnp
    >>> from clnp._core.namespace import namespace
    >>> float(namespace().sum(clnp.ones(3)))
    3.0
    """
    ns = _BOUND
    if ns is None:
        raise RuntimeError("clnp's namespace is used before 'import clnp' has finished (a "
                           "module-level call below the namespace: make it inside a function)")
    return ns
