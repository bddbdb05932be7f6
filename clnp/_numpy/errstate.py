"""NumPy's floating-point error settings: ``seterr``, ``geterr`` and ``errstate``.
"""
from __future__ import annotations

from typing import Any

__all__ = ["errstate", "seterr", "geterr"]


_ERR = {"divide": "warn", "over": "warn", "under": "ignore", "invalid": "warn"}


def seterr(all: Any = None, divide: Any = None, over: Any = None, under: Any = None,
           invalid: Any = None) -> dict[str, str]:
    """Record floating-point error settings and return the previous ones (``numpy.seterr``).

    A no-op for computation: device kernels follow IEEE 754 silently and never warn or raise
    on division by zero, overflow, underflow or invalid operations.

    Parameters
    ----------
    all, divide, over, under, invalid : str, optional
        NumPy's modes (``ignore``, ``warn``, ``raise``, ``call``, ``print``, ``log``).

    Returns
    -------
    dict
        The previous settings.

    Raises
    ------
    ValueError
        An unknown mode.

    Examples
    --------
    >>> import clnp
    >>> old = clnp.seterr(divide="ignore")
    >>> clnp.geterr()["divide"]
    'ignore'
    >>> _ = clnp.seterr(**old)
    """
    old = dict(_ERR)
    for k, v in (("divide", divide), ("over", over), ("under", under), ("invalid", invalid)):
        v = v if v is not None else all
        if v is not None:
            if v not in ("ignore", "warn", "raise", "call", "print", "log"):
                raise ValueError(f"seterr: invalid setting {v!r} for {k}")
            _ERR[k] = v
    return old


def geterr() -> dict[str, str]:
    """The settings recorded by :func:`seterr` (``numpy.geterr``).

    Returns
    -------
    dict
        Mode per error kind; they do not affect device computation.

    Examples
    --------
    >>> import clnp
    >>> sorted(clnp.geterr())
    ['divide', 'invalid', 'over', 'under']
    """
    return dict(_ERR)


class errstate:
    """Context manager and decorator setting floating-point error handling for a block
    (``numpy.errstate``). A no-op for computation: clnp device kernels never raise or warn
    on floating-point errors; the settings are only recorded (see :func:`seterr`)."""

    def __init__(self, *, call: Any = None, all: Any = None, divide: Any = None,
                 over: Any = None, under: Any = None, invalid: Any = None):
        self._kw = dict(all=all, divide=divide, over=over, under=under, invalid=invalid)
        self._old: list[dict[str, str]] = []

    def __enter__(self) -> "errstate":
        self._old.append(seterr(**self._kw))
        return self

    def __exit__(self, *exc: Any) -> None:
        _ERR.update(self._old.pop())

    def __call__(self, func: Any) -> Any:
        """Use the error settings as a decorator: ``func`` runs with them in force.

        Parameters
        ----------
        func : callable
            The function to wrap.

        Returns
        -------
        callable
            A wrapper with ``func``'s name and docstring.

        Examples
        --------
        >>> import clnp
        >>> @clnp.errstate(divide="ignore")
        ... def inverse(x):
        ...     return clnp.geterr()["divide"], 1 / x
        >>> setting, y = inverse(clnp.asarray([0.0]))
        >>> setting, y.tolist()
        ('ignore', [inf])
        """
        import functools

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)
        return wrapper
