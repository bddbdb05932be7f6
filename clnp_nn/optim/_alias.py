"""Optimizers with optax's names, signatures and defaults, each a :func:`chain` of the
transformations in ``_transforms`` (so each equals optax's to the formula)."""
from __future__ import annotations

from typing import Any, Optional

from ._base import (GradientTransformation, ScalarOrSchedule, chain, check_scalar_or_schedule,
                    identity, names_its_errors)
from ._transforms import (add_decayed_weights, scale_by_adam, scale_by_learning_rate,
                          scale_by_rms, scale_by_rss, scale_by_stddev, scale_by_trust_ratio,
                          trace)

__all__ = ["sgd", "adam", "adamw", "rmsprop", "adagrad", "lamb"]


def _lr(fname: str, learning_rate: Any) -> None:
    if learning_rate is None:
        raise TypeError(f"{fname}: learning_rate is required (a float or a schedule)")
    check_scalar_or_schedule(fname, "learning_rate", learning_rate)


@names_its_errors
def sgd(learning_rate: ScalarOrSchedule, momentum: Optional[float] = None,
        nesterov: bool = False, accumulator_dtype: Any = None) -> GradientTransformation:
    """Stochastic gradient descent, with optional (Nesterov) momentum.

    ``u = -lr * g``; with momentum ``m = g + momentum * m`` and ``u = -lr * m``
    (``-lr * (g + momentum * m)`` with ``nesterov``).

    Parameters
    ----------
    learning_rate : float or schedule
        The step size: a number, or a schedule (a callable of the step count).
    momentum : float, optional
        None: no momentum (and no state).
    nesterov : bool
        Nesterov momentum (with ``momentum``).
    accumulator_dtype : dtype, optional
        The dtype of the momentum buffer.

    Returns
    -------
    GradientTransformation

    Raises
    ------
    TypeError
        If ``learning_rate`` or ``momentum`` is not a number (or a schedule).
        From ``init``/``update``: a leaf of ``params``/``updates`` is not an array or a
        number, or the state is another optimizer's; the message names this optimizer
        (``adam.init``) and the leaf's path.
    ValueError
        From ``update``: the updates' structure or a leaf's shape differs from the
        parameters' or the state's.

    Examples
    --------
    >>> import numpy, clnp
    >>> from clnp_nn import optim
    >>> params = {"w": clnp.asarray([1.0, 2.0])}
    >>> grads = {"w": clnp.asarray([0.5, -0.5])}
    >>> opt = optim.sgd(0.5, momentum=0.5)
    >>> state = opt.init(params)
    >>> for _ in range(2):      # steps of 0.5 * 0.5, then 0.5 * (0.5 * 0.5 + 0.5)
    ...     updates, state = opt.update(grads, state)
    ...     params = optim.apply_updates(params, updates)
    >>> print(numpy.asarray(params["w"]))
    [0.375 2.625]
    """
    _lr("sgd", learning_rate)
    if momentum is not None:
        check_scalar_or_schedule("sgd", "momentum", momentum)
        first = trace(decay=momentum, nesterov=nesterov, accumulator_dtype=accumulator_dtype)
    else:
        first = identity()
    return chain(first, scale_by_learning_rate(learning_rate))


@names_its_errors
def adam(learning_rate: ScalarOrSchedule, b1: float = 0.9, b2: float = 0.999,
         eps: float = 1e-8, eps_root: float = 0.0, mu_dtype: Any = None, *,
         nesterov: bool = False) -> GradientTransformation:
    """Adam: ``u = -lr * m_hat / (sqrt(v_hat + eps_root) + eps)``.

    Parameters
    ----------
    learning_rate : float or schedule
        The step size: a number, or a schedule (a callable of the step count).
    b1, b2 : float
        Decay rates of the first and second moment estimates.
    eps, eps_root : float
        Stabilisers outside and inside the square root.
    mu_dtype : dtype, optional
        The dtype of the first moment buffer.
    nesterov : bool
        Nadam.

    Returns
    -------
    GradientTransformation
        State: ``(ScaleByAdamState(count, mu, nu), EmptyState() or ScaleByScheduleState)``.

    Raises
    ------
    TypeError
        ``learning_rate`` is missing, or neither a number (or 0-d array) nor a schedule.
        From ``init``/``update``: a leaf of ``params``/``updates`` is not an array or a
        number, or the state is another optimizer's; the message names this optimizer
        (``adam.init``) and the leaf's path.
    ValueError
        From ``update``: the updates' structure or a leaf's shape differs from the state's
        or the parameters' (the optimizer was initialised with other parameters).

    Examples
    --------
    >>> import numpy, clnp
    >>> from clnp_nn import optim
    >>> params = {"w": clnp.asarray([1.0, 2.0])}
    >>> grads = {"w": clnp.asarray([0.5, -0.5])}
    >>> opt = optim.adam(0.5)
    >>> updates, state = opt.update(grads, opt.init(params))
    >>> print(numpy.round(numpy.asarray(updates["w"]), 4))   # first step: -lr * sign(g)
    [-0.5  0.5]
    >>> print(numpy.round(numpy.asarray(optim.apply_updates(params, updates)["w"]), 4))
    [0.5 2.5]
    """
    _lr("adam", learning_rate)
    return chain(scale_by_adam(b1=b1, b2=b2, eps=eps, eps_root=eps_root, mu_dtype=mu_dtype,
                               nesterov=nesterov),
                 scale_by_learning_rate(learning_rate))


@names_its_errors
def adamw(learning_rate: ScalarOrSchedule, b1: float = 0.9, b2: float = 0.999,
          eps: float = 1e-8, eps_root: float = 0.0, mu_dtype: Any = None,
          weight_decay: ScalarOrSchedule = 1e-4, mask: Any = None, *,
          nesterov: bool = False) -> GradientTransformation:
    """Adam with decoupled weight decay: ``u = -lr * (adam_update + weight_decay * p)``.

    Parameters
    ----------
    learning_rate : float or schedule
        The step size: a number, or a schedule (a callable of the step count).
    b1, b2, eps, eps_root, mu_dtype, nesterov
        As :func:`adam`.
    weight_decay : float or schedule
        Coefficient of the decoupled weight decay (``weight_decay * p`` added to the update
        before the learning rate).
    mask : pytree of bool or callable, optional
        Which parameters are decayed (commonly: not biases and norms).

    Returns
    -------
    GradientTransformation

    Raises
    ------
    TypeError
        ``learning_rate`` or ``weight_decay`` is missing, or neither a number (or 0-d array)
        nor a schedule.
        From ``init``/``update``: a leaf of ``params``/``updates`` is not an array or a
        number, or the state is another optimizer's; the message names this optimizer
        (``adam.init``) and the leaf's path.
    ValueError
        From ``update``: the updates' structure or a leaf's shape differs from the state's
        or the parameters', or the parameters are not passed (the weight decay needs them).

    Examples
    --------
    >>> import numpy, clnp, clnp_grad as cg
    >>> from clnp_nn import optim
    >>> params = {"w": clnp.ones((2, 2)), "b": clnp.ones(2)}
    >>> grads = {"w": clnp.zeros((2, 2)), "b": clnp.zeros(2)}
    >>> opt = optim.adamw(0.5, weight_decay=0.5,     # decay the matrices only
    ...                   mask=lambda p: cg.tree_map(lambda x: x.ndim > 1, p))
    >>> updates, state = opt.update(grads, opt.init(params), params)
    >>> new = optim.apply_updates(params, updates)
    >>> print(numpy.asarray(new["w"]), numpy.asarray(new["b"]))
    [[0.75 0.75]
     [0.75 0.75]] [1. 1.]
    """
    _lr("adamw", learning_rate)
    return chain(scale_by_adam(b1=b1, b2=b2, eps=eps, eps_root=eps_root, mu_dtype=mu_dtype,
                               nesterov=nesterov),
                 add_decayed_weights(weight_decay, mask),
                 scale_by_learning_rate(learning_rate))


@names_its_errors
def rmsprop(learning_rate: ScalarOrSchedule, decay: float = 0.9, eps: float = 1e-8,
            initial_scale: float = 0.0, eps_in_sqrt: bool = True, centered: bool = False,
            momentum: Optional[float] = None, nesterov: bool = False,
            bias_correction: bool = False) -> GradientTransformation:
    """RMSProp: ``u = -lr * g / sqrt(nu + eps)`` (optax's default puts ``eps`` inside the
    root; PyTorch's is ``eps_in_sqrt=False``), optionally centred and with momentum.

    Parameters
    ----------
    learning_rate : float or schedule
        The step size: a number, or a schedule (a callable of the step count).
    decay : float
        Decay of the moving average of the squared gradients.
    eps : float
        Stabiliser.
    initial_scale : float
        Initial value of the moving average (PyTorch uses 0, TF1 1).
    eps_in_sqrt : bool
        Add ``eps`` inside the square root (optax) or outside it (False: PyTorch).
    centered : bool
        Divide by the running standard deviation instead of the RMS.
    momentum : float, optional
        A :func:`trace` applied after the learning rate.
    nesterov : bool
        Nesterov momentum (with ``momentum``).
    bias_correction : bool
        Divide the moving average by ``1 - decay**count``.

    Returns
    -------
    GradientTransformation

    Raises
    ------
    TypeError
        ``learning_rate`` is missing, or neither a number (or 0-d array) nor a schedule.
        From ``init``/``update``: a leaf of ``params``/``updates`` is not an array or a
        number, or the state is another optimizer's; the message names this optimizer
        (``adam.init``) and the leaf's path.
    ValueError
        From ``update``: the updates' structure or a leaf's shape differs from the state's
        or the parameters' (the optimizer was initialised with other parameters).

    Examples
    --------
    >>> import numpy, clnp
    >>> from clnp_nn import optim
    >>> params = {"w": clnp.asarray([1.0, 2.0])}
    >>> grads = {"w": clnp.asarray([0.5, -0.5])}
    >>> opt = optim.rmsprop(0.25, decay=0.75)     # nu = 0.25 * g**2, so g / sqrt(nu) = 2
    >>> updates, state = opt.update(grads, opt.init(params))
    >>> print(numpy.round(numpy.asarray(updates["w"]), 4))
    [-0.5  0.5]
    >>> opt = optim.rmsprop(0.25, decay=0.75, momentum=0.9)   # with a momentum trace
    >>> updates, state = opt.update(grads, opt.init(params))
    >>> print(numpy.round(numpy.asarray(updates["w"]), 4))
    [-0.5  0.5]
    """
    _lr("rmsprop", learning_rate)
    scaler = scale_by_stddev if centered else scale_by_rms
    return chain(scaler(decay=decay, eps=eps, initial_scale=initial_scale,
                        eps_in_sqrt=eps_in_sqrt, bias_correction=bias_correction),
                 scale_by_learning_rate(learning_rate),
                 trace(decay=momentum, nesterov=nesterov) if momentum is not None
                 else identity())


@names_its_errors
def adagrad(learning_rate: ScalarOrSchedule, initial_accumulator_value: float = 0.1,
            eps: float = 1e-7) -> GradientTransformation:
    """Adagrad: ``u = -lr * g / sqrt(sum of squared gradients + eps)``.

    Parameters
    ----------
    learning_rate : float or schedule
        The step size: a number, or a schedule (a callable of the step count).
    initial_accumulator_value : float
        Initial value of the sum of squared gradients.
    eps : float
        Stabiliser added inside the square root.

    Returns
    -------
    GradientTransformation

    Raises
    ------
    TypeError
        ``learning_rate`` is missing, or neither a number (or 0-d array) nor a schedule.
        From ``init``/``update``: a leaf of ``params``/``updates`` is not an array or a
        number, or the state is another optimizer's; the message names this optimizer
        (``adam.init``) and the leaf's path.
    ValueError
        From ``update``: the updates' structure or a leaf's shape differs from the state's
        or the parameters' (the optimizer was initialised with other parameters).

    Examples
    --------
    >>> import numpy, clnp
    >>> from clnp_nn import optim
    >>> params = {"w": clnp.asarray([1.0, 2.0])}
    >>> grads = {"w": clnp.asarray([0.5, -0.5])}
    >>> opt = optim.adagrad(0.5, initial_accumulator_value=0.0)
    >>> state = opt.init(params)
    >>> for _ in range(2):      # steps of 0.5 * g / sqrt(sum of g**2): 0.5, then 0.3536
    ...     updates, state = opt.update(grads, state)
    ...     params = optim.apply_updates(params, updates)
    >>> print(numpy.round(numpy.asarray(params["w"]), 4))
    [0.1464 2.8536]
    """
    _lr("adagrad", learning_rate)
    return chain(scale_by_rss(initial_accumulator_value=initial_accumulator_value, eps=eps),
                 scale_by_learning_rate(learning_rate))


@names_its_errors
def lamb(learning_rate: ScalarOrSchedule, b1: float = 0.9, b2: float = 0.999,
         eps: float = 1e-6, eps_root: float = 0.0, weight_decay: ScalarOrSchedule = 0.0,
         mask: Any = None) -> GradientTransformation:
    """LAMB: the Adam update plus weight decay, rescaled per leaf by the trust ratio
    ``||p|| / ||u||``.

    Parameters
    ----------
    learning_rate : float or schedule
        The step size: a number, or a schedule (a callable of the step count).
    b1, b2, eps, eps_root : float
        As :func:`adam` (note ``eps=1e-6``).
    weight_decay : float or schedule
        Coefficient of the weight decay added to the Adam update before the trust ratio.
    mask : pytree of bool or callable, optional
        Which parameters are decayed.

    Returns
    -------
    GradientTransformation

    Raises
    ------
    TypeError
        ``learning_rate`` or ``weight_decay`` is missing, or neither a number (or 0-d array)
        nor a schedule.
        From ``init``/``update``: a leaf of ``params``/``updates`` is not an array or a
        number, or the state is another optimizer's; the message names this optimizer
        (``adam.init``) and the leaf's path.
    ValueError
        From ``update``: the updates' structure or a leaf's shape differs from the state's
        or the parameters', or the parameters are not passed (the weight decay needs them).

    Examples
    --------
    >>> import numpy, clnp
    >>> from clnp_nn import optim
    >>> params = {"w": clnp.asarray([3.0, 4.0])}
    >>> grads = {"w": clnp.asarray([0.5, -0.5])}
    >>> opt = optim.lamb(0.1, weight_decay=0.0)
    >>> updates, state = opt.update(grads, opt.init(params), params)
    >>> # adam's direction (+-1, norm sqrt(2)) rescaled to the norm of params (5)
    >>> print(numpy.round(numpy.asarray(updates["w"]), 4))
    [-0.3536  0.3536]
    """
    _lr("lamb", learning_rate)
    return chain(scale_by_adam(b1=b1, b2=b2, eps=eps, eps_root=eps_root),
                 add_decayed_weights(weight_decay=weight_decay, mask=mask),
                 scale_by_trust_ratio(),
                 scale_by_learning_rate(learning_rate))
