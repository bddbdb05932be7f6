"""Losses: ``cross_entropy``, ``nll_loss``, ``mse_loss``, ``l1_loss``,
``binary_cross_entropy_with_logits`` (PyTorch's definitions, reductions and defaults).

Class targets are compared with the class indices (a one-hot mask) instead of gathered, so
the losses are elementwise ops and reductions that ``jit`` fuses and ``vmap`` batches.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import clnp as xp

from . import _checks as chk
from ._precision import narrow
from .activation import _log_softmax_wide
from clnp._core.dtypes import kind as dkind

__all__ = ["cross_entropy", "nll_loss", "mse_loss", "l1_loss",
           "binary_cross_entropy_with_logits"]


def _traced(v: Any) -> bool:
    return bool(getattr(v, "_is_clnp_tracer", False))


def _class_axis(x: Any) -> int:
    return 0 if x.ndim == 1 else 1


def _index_shape(x: Any) -> tuple[int, ...]:
    """The shape of class-index targets for ``x``: its shape without the class axis."""
    cls = _class_axis(x)
    return tuple(x.shape[:cls]) + tuple(x.shape[cls + 1:])


def _target_message(fn: str, name: str, x: Any, target: Any, probabilities: bool) -> str:
    """What ``target`` must be for the input ``name`` (``x``), and what it is: the accepted
    forms with the shapes and dtypes they need here, then the shapes and dtypes received."""
    owner = name + ("'" if name.endswith("s") else "'s")
    forms = (f"integer class indices of shape {_index_shape(x)} ({owner} shape without its "
             f"class axis {_class_axis(x)})")
    if probabilities:
        forms += (f", or class probabilities of {owner} shape {tuple(x.shape)} and dtype "
                  f"{x.dtype}")
    return (f"{fn}: target must be {forms}; got target of shape {tuple(target.shape)} and "
            f"dtype {target.dtype} for {name} of shape {tuple(x.shape)} and dtype {x.dtype}")


def _class_operands(fn: str, name: str, x: Any, target: Any, weight: Any,
                    probabilities: bool = False) -> int:
    """Check ``x`` (N, C, *d) or (C,) against integer ``target`` (N, *d) or (); returns C.
    ``name`` is the input's parameter name; ``probabilities``: the function also takes class
    probabilities (the message names both forms)."""
    chk.array(fn, name, x, ndim=range(1, 33))
    chk.array(fn, "target", target, kinds="biufc")
    shape, integer = tuple(target.shape), dkind(target.dtype) in "iu"
    if not integer or shape != _index_shape(x):
        msg = _target_message(fn, name, x, target, probabilities)
        if shape == _index_shape(x):        # the shape of class indices, another dtype
            raise TypeError(msg + "; class indices need an integer dtype: cast them with "
                                  "astype(clnp.int64)")
        if probabilities and shape == tuple(x.shape):   # probabilities, not floating
            raise TypeError(msg + f"; cast the probabilities with astype({x.dtype})")
        raise ValueError(msg)               # the shape of neither form
    chk.same_device(fn, {name: x, "target": target, "weight": weight})
    C = x.shape[_class_axis(x)]
    if weight is not None:
        chk.array(fn, "weight", weight, ndim=1)
        if weight.shape[0] != C or weight.dtype != x.dtype:
            raise ValueError(f"{fn}: weight must have shape ({C},) and dtype {x.dtype}, got "
                             f"{tuple(weight.shape)} {weight.dtype}")
    return C


def _check_targets(fn: str, target: Any, C: int, ignore_index: int) -> None:
    """Out-of-range class targets raise, as in PyTorch. Only for concrete targets: the check
    reads one flag back from the device (traced targets cannot be inspected)."""
    if _traced(target) or target.size == 0:
        return
    from clnp._core.prims import EVAL, set_interpreter
    # a concrete target is checked eagerly even while a transformation traces the loss
    # (under jit the ops would otherwise be staged, and their result unknown)
    with set_interpreter(EVAL):
        bad = xp.logical_and(xp.logical_or(target < 0, target >= C), target != ignore_index)
        found = bool(xp.any(bad))
    if found:
        t = np.asarray(target.to_numpy()).reshape(-1)
        v = next(int(e) for e in t if not (0 <= e < C or e == ignore_index))
        raise IndexError(f"{fn}: target {v} is out of bounds for {C} classes (and is not "
                         f"ignore_index={ignore_index})")


def _reduce(fn: str, loss: Any, reduction: str, denom: Any = None) -> Any:
    if reduction == "none":
        return loss
    total = xp.sum(loss)
    if reduction == "sum":
        return total
    return total / denom if denom is not None else xp.mean(loss)


def _nll(logp: Any, target: Any, weight: Any, ignore_index: int, reduction: str,
         smoothing: float) -> Any:
    """Weighted NLL of log-probabilities ``logp`` (classes on axis 1, or 0 for 1-D), with
    PyTorch's label smoothing and 'mean' = sum / total weight of the counted targets."""
    cls = 0 if logp.ndim == 1 else 1
    C = logp.shape[cls]
    bshape = [1] * logp.ndim
    bshape[cls] = C
    classes = xp.reshape(xp.arange(C, dtype=target.dtype, device=logp.device), tuple(bshape))
    valid = target != ignore_index
    hot = xp.logical_and(xp.expand_dims(target, axis=cls) == classes,
                         xp.expand_dims(valid, axis=cls))
    zero = xp.zeros((), dtype=logp.dtype, device=logp.device)
    wl = logp if weight is None else logp * xp.reshape(weight, tuple(bshape))
    loss = -xp.sum(xp.where(hot, wl, zero), axis=cls)
    if smoothing:
        smooth = xp.where(valid, -xp.sum(wl, axis=cls), zero)
        loss = (1.0 - smoothing) * loss + (smoothing / C) * smooth
    if reduction != "mean":
        return _reduce("", loss, reduction)
    if weight is None:
        denom = xp.sum(valid.astype(logp.dtype))
    else:
        denom = xp.sum(xp.where(hot, xp.reshape(weight, tuple(bshape)), zero))
    return _reduce("", loss, reduction, denom)


def cross_entropy(logits: Any, target: Any, label_smoothing: float = 0.0,
                  reduction: str = "mean", *, weight: Any = None,
                  ignore_index: int = -100) -> Any:
    """Cross entropy between ``softmax(logits)`` over axis 1 and class targets (or class
    probabilities).

    Parameters
    ----------
    logits : Array
        ``(N, C)``, ``(N, C, *d)`` or ``(C,)``, real floating.
    target : Array
        Integer class indices of shape ``(N,)``, ``(N, *d)`` or ``()``; or real floating
        class probabilities of the logits' shape.
    label_smoothing : float
        In [0, 1]: the target becomes ``(1 - s) * onehot + s / C``.
    reduction : {"mean", "sum", "none"}
        "mean" divides by the total ``weight`` of the targets that are not ``ignore_index``
        (their count without weights); for probability targets, by ``N``.
    weight : Array, optional
        Per-class weights ``(C,)``.
    ignore_index : int
        Class targets equal to it contribute nothing.

    Returns
    -------
    Array
        A scalar, or per-element losses for ``reduction="none"``.

    Raises
    ------
    TypeError
        If an argument is not a clnp array of the right kind.
    ValueError
        If shapes do not fit, ``reduction`` is unknown, or ``label_smoothing`` is outside
        [0, 1].
    IndexError
        If a concrete class target is out of range and is not ``ignore_index``.

    Examples
    --------
    >>> import clnp_nn.functional as F
    >>> logits, labels = clnp.zeros((2, 4)), clnp.asarray([1, 3])
    >>> round(float(F.cross_entropy(logits, labels)), 4)
    1.3863
    """
    fn = "cross_entropy"
    reduction = chk.reduction(fn, reduction)
    smoothing = chk.probability(fn, "label_smoothing", label_smoothing)
    chk.array(fn, "logits", logits, ndim=range(1, 33))
    if chk.is_array(target) and dkind(target.dtype) == "f" and \
            tuple(target.shape) == tuple(logits.shape):
        return _soft_cross_entropy(fn, logits, target, smoothing, reduction, weight)
    C = _class_operands(fn, "logits", logits, target, weight, probabilities=True)
    _check_targets(fn, target, C, ignore_index)
    # float16/bfloat16 logits: the log-probabilities and the loss are computed in float32,
    # the result rounded to the logits' dtype
    logp = _log_softmax_wide(logits, 0 if logits.ndim == 1 else 1)
    if weight is not None:
        weight = narrow(weight, logp.dtype)
    return narrow(_nll(logp, target, weight, ignore_index, reduction, smoothing), logits.dtype)


def _soft_cross_entropy(fn: str, logits: Any, target: Any, smoothing: float, reduction: str,
                        weight: Any) -> Any:
    if target.dtype != logits.dtype:
        raise TypeError(_target_message(fn, "logits", logits, target, True) +
                        f"; cast the probabilities with astype({logits.dtype})")
    chk.same_device(fn, {"logits": logits, "target": target, "weight": weight})
    cls = 0 if logits.ndim == 1 else 1
    C = logits.shape[cls]
    bshape = [1] * logits.ndim
    bshape[cls] = C
    if weight is not None:
        chk.array(fn, "weight", weight, ndim=1)
        if weight.shape[0] != C:
            raise ValueError(f"{fn}: weight must have shape ({C},), got {tuple(weight.shape)}")
    logp = _log_softmax_wide(logits, cls)
    target = narrow(target, logp.dtype)
    if weight is not None:
        weight = narrow(weight, logp.dtype)
    p = target if not smoothing else target * (1.0 - smoothing) + smoothing / C
    terms = p * logp
    if weight is not None:
        terms = terms * xp.reshape(weight, tuple(bshape))
    loss = -xp.sum(terms, axis=cls)
    if reduction == "mean":
        n = logits.shape[0] if logits.ndim > 1 else 1
        return narrow(xp.sum(loss) / float(n), logits.dtype)
    return narrow(_reduce(fn, loss, reduction), logits.dtype)


def nll_loss(log_probs: Any, target: Any, weight: Any = None, ignore_index: int = -100,
             reduction: str = "mean") -> Any:
    """Negative log-likelihood of class targets given log-probabilities.

    Parameters
    ----------
    log_probs : Array
        ``(N, C)``, ``(N, C, *d)`` or ``(C,)``, real floating.
    target : Array
        Integer class indices ``(N,)``, ``(N, *d)`` or ``()``.
    weight : Array, optional
        Per-class weights ``(C,)``.
    ignore_index : int
        A target value that contributes nothing (neither loss nor weight).
    reduction : {"mean", "sum", "none"}
        "mean" divides by the total weight of the counted targets.

    Returns
    -------
    Array
        A scalar, or per-element losses for ``reduction="none"``.

    Raises
    ------
    TypeError, ValueError, IndexError
        As :func:`cross_entropy`.

    Examples
    --------
    >>> import clnp_nn.functional as F
    >>> logp = clnp.log(clnp.asarray([[0.5, 0.5]]))
    >>> round(float(F.nll_loss(logp, clnp.asarray([0]))), 4)
    0.6931
    """
    fn = "nll_loss"
    reduction = chk.reduction(fn, reduction)
    C = _class_operands(fn, "log_probs", log_probs, target, weight)
    _check_targets(fn, target, C, ignore_index)
    return _nll(log_probs, target, weight, ignore_index, reduction, 0.0)


def _pair(fn: str, name: str, x: Any, target: Any) -> None:
    """``x`` (the parameter ``name``) and ``target``: real floating arrays of one shape,
    dtype and device."""
    chk.array(fn, name, x)
    chk.array(fn, "target", target)
    if tuple(x.shape) != tuple(target.shape):
        raise ValueError(f"{fn}: {name} of shape {tuple(x.shape)} and target of shape "
                         f"{tuple(target.shape)} differ (broadcasting here is almost always a "
                         f"bug; broadcast explicitly if it is meant)")
    chk.same_dtype(fn, {name: x, "target": target})
    chk.same_device(fn, {name: x, "target": target})


def mse_loss(x: Any, target: Any, reduction: str = "mean") -> Any:
    """Squared error ``(x - target)**2``, reduced.

    Parameters
    ----------
    x, target : Array
        Same shape and real floating dtype.
    reduction : {"mean", "sum", "none"}
        How the elementwise losses are combined: their mean, their sum, or none (the unreduced
        losses).

    Returns
    -------
    Array
        A scalar, or the elementwise losses for ``reduction="none"``.

    Raises
    ------
    TypeError
        If an argument is not a real floating clnp array or dtypes differ.
    ValueError
        If the shapes differ or ``reduction`` is unknown.

    Examples
    --------
    >>> import clnp_nn.functional as F
    >>> float(F.mse_loss(clnp.asarray([1.0, 2.0]), clnp.asarray([1.0, 4.0])))
    2.0
    """
    fn = "mse_loss"
    reduction = chk.reduction(fn, reduction)
    _pair(fn, "x", x, target)
    d = x - target
    return _reduce(fn, d * d, reduction)


def l1_loss(x: Any, target: Any, reduction: str = "mean") -> Any:
    """Absolute error ``|x - target|``, reduced.

    Parameters
    ----------
    x, target : Array
        Same shape and real floating dtype.
    reduction : {"mean", "sum", "none"}
        How the elementwise losses are combined: their mean, their sum, or none (the unreduced
        losses).

    Returns
    -------
    Array
        A scalar, or the elementwise losses for ``reduction="none"``.

    Raises
    ------
    TypeError
        If an argument is not a real floating clnp array or dtypes differ.
    ValueError
        If the shapes differ or ``reduction`` is unknown.

    Examples
    --------
    >>> import clnp_nn.functional as F
    >>> float(F.l1_loss(clnp.asarray([1.0, 2.0]), clnp.asarray([1.0, 4.0])))
    1.0
    """
    fn = "l1_loss"
    reduction = chk.reduction(fn, reduction)
    _pair(fn, "x", x, target)
    return _reduce(fn, xp.abs(x - target), reduction)


def binary_cross_entropy_with_logits(logits: Any, target: Any, weight: Any = None,
                                     reduction: str = "mean", pos_weight: Any = None) -> Any:
    """Binary cross entropy of ``sigmoid(logits)`` against targets in [0, 1], computed
    from the logits without overflow: ``(1 - y) * x + (1 + (pw - 1) * y) *
    (log1p(exp(-|x|)) + max(-x, 0))``.

    Parameters
    ----------
    logits, target : Array
        Same shape and real floating dtype.
    weight : Array, optional
        Broadcast to the input: rescales each element's loss.
    reduction : {"mean", "sum", "none"}
        How the elementwise losses are combined: their mean, their sum, or none (the unreduced
        losses).
    pos_weight : Array, optional
        Broadcast to the input (typically ``(C,)`` for the last axis): weight of the
        positive term.

    Returns
    -------
    Array
        A scalar, or the elementwise losses for ``reduction="none"``.

    Raises
    ------
    TypeError
        If an argument is not a real floating clnp array or dtypes differ.
    ValueError
        If shapes do not fit or ``reduction`` is unknown.

    Examples
    --------
    >>> import clnp_nn.functional as F
    >>> round(float(F.binary_cross_entropy_with_logits(clnp.zeros(2), clnp.ones(2))), 4)
    0.6931
    """
    fn = "binary_cross_entropy_with_logits"
    reduction = chk.reduction(fn, reduction)
    _pair(fn, "logits", logits, target)
    for name, v in (("weight", weight), ("pos_weight", pos_weight)):
        if v is not None:
            chk.array(fn, name, v)
            try:
                if np.broadcast_shapes(tuple(v.shape), tuple(logits.shape)) != \
                        tuple(logits.shape):
                    raise ValueError
            except ValueError:
                raise ValueError(f"{fn}: {name} of shape {tuple(v.shape)} does not broadcast "
                                 f"to the shape {tuple(logits.shape)} of logits") from None
    chk.same_dtype(fn, {"logits": logits, "weight": weight, "pos_weight": pos_weight})
    x, y = logits, target
    softplus_neg = xp.log1p(xp.exp(-xp.abs(x))) + xp.maximum(-x, 0.0)   # log(1 + exp(-x))
    if pos_weight is None:
        loss = (1.0 - y) * x + softplus_neg
    else:
        loss = (1.0 - y) * x + (1.0 + (pos_weight - 1.0) * y) * softplus_neg
    if weight is not None:
        loss = loss * weight
    return _reduce(fn, loss, reduction)
