"""The status the linalg kernels write per matrix, and how eager calls turn it into errors.

Each factorization kernel writes one ``int`` per matrix of its batch (LAPACK's ``info``: a
zero pivot, a pivot that is not positive, no convergence). Eager implementations always
write it, into a small scratch array, and hand it to :func:`note` (a context-variable
lookup). Only an *eager* namespace call collects it (:func:`checked`): it reads the statuses
back once and raises :class:`LinAlgError` as NumPy does. While a ``clnp_grad`` transformation
or ``jit`` runs (``clnp._core.prims.in_transformation``: also where its rules evaluate user code
eagerly, as custom rules and the backward pass do) nothing is collected, so no call
synchronizes with the host there and failures stay NaN/inf in the results, as in JAX; a
compiled program replays the kernels with the status array as a kept scratch buffer nobody
reads.
"""
from __future__ import annotations

import functools
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Callable, Iterator

import numpy as np

from .._core.prims import in_transformation

_SINK: ContextVar[list | None] = ContextVar("clnp_linalg_info", default=None)
# the public function the user called, when it is a composition (pinv calls svd): errors
# name it rather than the inner call
_OUTER: ContextVar[str | None] = ContextVar("clnp_linalg_outer", default=None)


class LinAlgError(np.linalg.LinAlgError):
    """Raised by eager ``clnp.linalg`` calls where NumPy raises ``numpy.linalg.LinAlgError``
    (a singular matrix in ``inv``/``solve``, a matrix that is not positive definite in
    ``cholesky``, an SVD or eigensolver that did not converge).

    A subclass of NumPy's class (itself a ``ValueError``), so ``except
    numpy.linalg.LinAlgError`` catches it. Under ``clnp_grad`` transformations and ``jit`` no
    call raises it: failed matrices give NaN/inf, as in JAX."""


def note(info: Any, mask: int = -1) -> None:
    """Called by eager implementations: ``info`` (int32, one per matrix of the batch) holds a
    failure where ``info & mask`` is nonzero. Nothing happens unless an eager namespace call
    is collecting."""
    sink = _SINK.get()
    if sink is not None:
        sink.append((info, mask))


def reports_as(fname: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator of a composite ``linalg`` function: errors raised by the checked calls it
    makes name ``fname``."""
    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if _OUTER.get() is not None:
                return fn(*args, **kwargs)
            token = _OUTER.set(fname)
            try:
                return fn(*args, **kwargs)
            finally:
                _OUTER.reset(token)
        return wrapper
    return deco


def eager() -> bool:
    """Whether namespace calls run eagerly: no transformation or staging is running, not even
    one whose rules evaluate user code (custom rules, checkpoint) one level down."""
    return not in_transformation()


@contextmanager
def _collect() -> Iterator[list]:
    token = _SINK.set([])
    try:
        yield _SINK.get()
    finally:
        _SINK.reset(token)


def checked(fname: str, message: str, batch: tuple[int, ...], run: Callable[[], Any]) -> Any:
    """``run()``; when eager, the statuses its kernels wrote are read back (one read per
    status array, usually one) and a failure raises :class:`LinAlgError` naming ``fname``
    and the first failed matrix of the ``batch`` shape. ``message`` is NumPy's text."""
    if not eager():
        return run()
    with _collect() as infos:
        result = run()
    for info, mask in infos:
        host = info.to_numpy()
        bad = np.flatnonzero(host & mask)
        if bad.size:
            where = ""
            if batch:
                idx = tuple(int(i) for i in np.unravel_index(int(bad[0]), batch))
                where = (f" (matrix {idx} of the batch of shape {batch}; {bad.size} of "
                         f"{host.size} failed)")
            raise LinAlgError(f"linalg.{_OUTER.get() or fname}: {message}{where}")
    return result
