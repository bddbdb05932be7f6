"""Operations the core calls but does not implement: attached by the layers that do.

The array and its operator surface live in the core, but a few of their methods are
implemented above it: indexing (``clnp._array_api.indexing``), in-place operators
(``clnp._array_api.inplace``), ``@=`` (``clnp._array_api.linear_algebra``), NumPy's dispatch
protocols (``clnp._numpy.protocols``) and some ndarray methods
(``clnp._numpy.ndarray_methods``). Each of those modules attaches its functions here when it
is imported, as JAX's ``array_methods`` attaches the array's methods, so the core never
imports a layer above it (tests/test_layers.py).
"""
from __future__ import annotations

from typing import Any, Callable

_ATTACHED: dict[str, Callable[..., Any]] = {}


def attach(**functions: Callable[..., Any]) -> None:
    """Attach the implementations of core methods, by name.

    Parameters
    ----------
    **functions : callable
        Name -> implementation, e.g. ``getitem=getitem``.

    Returns
    -------
    None

    Examples
    --------
    >>> from clnp._core import attached
    >>> attached.attach(example_double=lambda x: 2 * x)
    >>> attached.implementation("example_double")(21)
    42
    """
    _ATTACHED.update(functions)


def implementation(name: str) -> Callable[..., Any]:
    """The implementation attached under ``name``.

    Parameters
    ----------
    name : str
        The name it was attached under.

    Returns
    -------
    callable

    Raises
    ------
    RuntimeError
        Nothing is attached under ``name`` (its module was not imported: ``import clnp``
        imports every one).

    Examples
    --------
    >>> import clnp
    >>> from clnp._core.attached import implementation
    >>> implementation("getitem").__module__
    'clnp._array_api.indexing'
    """
    fn = _ATTACHED.get(name)
    if fn is None:
        raise RuntimeError(f"clnp: no implementation of {name!r} is attached to the core "
                           f"(import clnp first)")
    return fn
