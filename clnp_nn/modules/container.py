"""Containers and shape layers: ``Sequential``, ``Lambda``, ``Flatten``."""
from __future__ import annotations

from typing import Any, Callable

import clnp as xp

from ._module import Module, static
from ._util import split

__all__ = ["Sequential", "Lambda", "Flatten"]


class Lambda(Module):
    """A parameter-free function as a layer (its function is a static field, so the layer is
    an empty pytree).

    Parameters
    ----------
    fn : callable
        ``fn(x) -> y``.

    Raises
    ------
    TypeError
        If ``fn`` is not callable.

    Examples
    --------
    >>> import clnp_nn as nn
    >>> nn.Lambda(lambda x: x * 2)(clnp.asarray([1.0])).tolist()
    [2.0]
    """

    fn: Callable = static()

    def __init__(self, fn: Callable[[Any], Any]):
        if not callable(fn):
            raise TypeError(f"Lambda: fn must be callable, got {type(fn).__name__}")
        self.fn = fn

    def __call__(self, x: Any, *, key: Any = None, training: bool = True) -> Any:
        """``fn(x)``.

        Parameters
        ----------
        x : array
            The input of ``fn``.
        key : clnp_grad.random key, optional
            Not used: the layer draws no random numbers (every layer takes ``key`` so that
            containers can pass keys to all of them).
        training : bool, default True
            Not used: the layer computes the same in training and in evaluation.

        Returns
        -------
        array
            Whatever ``fn`` returns.

        Raises
        ------
        Exception
            Whatever ``fn`` raises.

        Examples
        --------
        >>> import clnp
        >>> import clnp_nn as nn
        >>> print(nn.Lambda(lambda x: x + 1)(clnp.asarray([1, 2])))
        [2 3]
        """
        return self.fn(x)


class Flatten(Module):
    """Merge dims ``start_dim`` .. ``end_dim`` into one (PyTorch's ``Flatten``).

    Parameters
    ----------
    start_dim, end_dim : int

    Raises
    ------
    ValueError
        When called, if the dims are out of range or ``start_dim > end_dim``.

    Examples
    --------
    >>> import clnp_nn as nn
    >>> nn.Flatten()(clnp.zeros((2, 3, 4))).shape
    (2, 12)
    """

    start_dim: int = static()
    end_dim: int = static()

    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        self.start_dim, self.end_dim = int(start_dim), int(end_dim)

    def __call__(self, x: Any, *, key: Any = None, training: bool = True) -> Any:
        """``x`` with the dimensions ``start_dim`` to ``end_dim`` merged into one (a 0-d input becomes shape ``(1,)``).

        Parameters
        ----------
        x : array
            Input of any shape.
        key : clnp_grad.random key, optional
            Not used: the layer draws no random numbers (every layer takes ``key`` so that
            containers can pass keys to all of them).
        training : bool, default True
            Not used: the layer computes the same in training and in evaluation.

        Returns
        -------
        array
            A reshaped view of ``x``.

        Raises
        ------
        TypeError
            ``x`` is not an array.
        ValueError
            ``start_dim`` and ``end_dim`` do not fit ``x``'s dimensions.

        Examples
        --------
        >>> import clnp
        >>> import clnp_nn as nn
        >>> nn.Flatten()(clnp.zeros((2, 3, 4))).shape
        (2, 12)
        >>> nn.Flatten(0, 1)(clnp.zeros((2, 3, 4))).shape
        (6, 4)
        """
        if not (hasattr(x, "ndim") and hasattr(x, "shape")):
            raise TypeError(f"Flatten: argument 'x' must be a clnp array, got "
                            f"{type(x).__name__}")
        nd = x.ndim
        s = self.start_dim + nd if self.start_dim < 0 else self.start_dim
        e = self.end_dim + nd if self.end_dim < 0 else self.end_dim
        if not (0 <= s < max(nd, 1) and 0 <= e < max(nd, 1)) or s > e:
            raise ValueError(f"Flatten: start_dim={self.start_dim}, end_dim={self.end_dim} do "
                             f"not fit an input of shape {tuple(x.shape)}")
        if nd == 0:
            return xp.reshape(x, (1,))
        shape = tuple(x.shape)
        n = 1
        for d in shape[s:e + 1]:
            n *= d
        return xp.reshape(x, shape[:s] + (n,) + shape[e + 1:])


class Sequential(Module):
    """Layers applied in order.

    ``Sequential(a, b, c)`` or ``Sequential([a, b, c])``; plain functions are wrapped in
    :class:`Lambda`. ``key`` (split into one key per layer) and ``training`` reach every
    layer. If a layer is stateful the Sequential is too: it returns ``(y, new_sequential)``
    with every stateful layer replaced by its new state.

    Parameters
    ----------
    *layers : Module or callable

    Attributes
    ----------
    layers : tuple of Module
        Pytree paths read ``layers.0.weight``.

    Raises
    ------
    TypeError
        If a layer is not callable.

    Examples
    --------
    >>> import clnp_nn as nn
    >>> k1, k2 = cg.random.split(cg.random.key(0))
    >>> net = nn.Sequential(nn.Linear(4, 8, key=k1), nn.ReLU(), nn.Linear(8, 2, key=k2))
    >>> net(clnp.ones((3, 4), dtype=clnp.float32)).shape
    (3, 2)
    >>> [path for path, _ in nn.named_leaves(net)]
    ['layers.0.weight', 'layers.0.bias', 'layers.2.weight', 'layers.2.bias']
    """

    layers: tuple

    def __init__(self, *layers: Any):
        if len(layers) == 1 and isinstance(layers[0], (list, tuple)):
            layers = tuple(layers[0])
        out = []
        for i, l in enumerate(layers):
            if isinstance(l, Module):
                out.append(l)
            elif callable(l):
                out.append(Lambda(l))
            else:
                raise TypeError(f"Sequential: layer {i} is a {type(l).__name__}, not a Module "
                                f"or a callable")
        self.layers = tuple(out)

    @property
    def stateful(self) -> bool:  # type: ignore[override]
        return any(getattr(l, "stateful", False) for l in self.layers)

    def __len__(self) -> int:
        return len(self.layers)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return Sequential(self.layers[i])
        return self.layers[i]

    def __iter__(self):
        return iter(self.layers)

    def __call__(self, x: Any, *, key: Any = None, training: bool = True) -> Any:
        """The layers applied in order; a stateful layer (``BatchNorm``) returns ``(y, new_layer)``, and then so does the Sequential, with the new layers.

        Parameters
        ----------
        x : array
            The first layer's input.
        key : clnp_grad.random key, optional
            Split into one key per layer (for ``Dropout`` and other random layers).
        training : bool, default True
            Passed to every layer.

        Returns
        -------
        array
            The last layer's output, or ``(output, new_sequential)`` when a layer is stateful.

        Raises
        ------
        Exception
            Whatever a layer raises (e.g. ValueError for a shape it does not take).

        Examples
        --------
        >>> import clnp, clnp_grad as cg
        >>> import clnp_nn as nn
        >>> net = nn.Sequential(nn.Lambda(lambda x: x * 2), nn.ReLU())
        >>> print(net(clnp.asarray([-1.0, 3.0], dtype=clnp.float32)))
        [0. 6.]
        >>> net = nn.Sequential(nn.BatchNorm1d(2), nn.ReLU())
        >>> y, net = net(clnp.ones((4, 2), dtype=clnp.float32))      # stateful: a new net
        >>> y.shape
        (4, 2)
        """
        keys = split(key, len(self.layers)) if key is not None and self.layers else \
            [None] * len(self.layers)
        new = []
        for layer, k in zip(self.layers, keys):
            out = layer(x, key=k, training=training)
            if getattr(layer, "stateful", False):
                x, layer = out
            else:
                x = out
            new.append(layer)
        if self.stateful:
            return x, self.replace(layers=tuple(new))
        return x
