"""NumPy's ``einsum``: subscripts parsed on the host, contracted with ``tensordot`` and
elementwise products on the device.
"""
from __future__ import annotations

import builtins
import math
from typing import Any

from .._core import dtypes as dt
from .._core.dtypes import kind as dkind
from .._core.namespace import namespace as _xp
from .array_likes import _arr, _device_of, _finish
from .diagonals import diagonal
from .interpolation import _matmul
from .queries import shape

__all__ = ["einsum"]


def _einsum_parse(subscripts: str, shapes: list) -> tuple[list[list[str]], list[str]]:
    """Per-operand label lists and output labels. Ellipsis dims get private labels
    ``"\0NNNN"`` (the N-th dim from the right), so they broadcast right-aligned."""
    sub = subscripts.replace(" ", "")
    explicit = "->" in sub
    lhs, rhs = sub.split("->", 1) if explicit else (sub, "")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(f"einsum: {len(terms)} operand terms in {subscripts!r} but "
                         f"{len(shapes)} operands")
    for ch in lhs.replace(",", "").replace(".", "") + rhs.replace(".", ""):
        if not ch.isalpha():
            raise ValueError(f"einsum: invalid subscript {ch!r} in {subscripts!r}")
    ell_n = 0
    labels: list[list[str]] = []
    for term, shp in zip(terms, shapes):
        pre, post, k = term, "", 0
        if "..." in term:
            pre, post = term.split("...", 1)
            k = len(shp) - len(pre) - len(post)
        if "." in pre or "." in post:
            raise ValueError(f"einsum: invalid ellipsis in {term!r}")
        if k < 0 or ("..." not in term and len(term) != len(shp)):
            raise ValueError(f"einsum: term {term!r} does not match an operand of "
                             f"{len(shp)} dimensions")
        ell_n = builtins.max(ell_n, k)
        labels.append(list(pre) + [f"\0{j:04d}" for j in builtins.range(k, 0, -1)]
                      + list(post))
    ell = [f"\0{j:04d}" for j in builtins.range(ell_n, 0, -1)]
    if explicit:
        if "..." in rhs:
            pre, post = rhs.split("...", 1)
            if "." in pre or "." in post:
                raise ValueError(f"einsum: invalid ellipsis in {rhs!r}")
            out = list(pre) + ell + list(post)
        elif ell_n:
            raise ValueError("output has more dimensions than subscripts given in einstein "
                             "sum, but no '...' ellipsis provided to broadcast the extra "
                             "dimensions.")
        else:
            out = list(rhs)
        for s in out:
            if not s.startswith("\0") and not any(s in lab for lab in labels):
                raise ValueError(f"einsum: output subscript {s!r} does not appear in the "
                                 f"inputs")
        if len(set(out)) != len(out):
            raise ValueError(f"einsum: output subscript repeated in {subscripts!r}")
    else:
        counts: dict[str, int] = {}
        for lab in labels:
            for s in lab:
                counts[s] = counts.get(s, 0) + 1
        out = ell + sorted(s for s, c in counts.items() if c == 1 and not s.startswith("\0"))
    return labels, out


def einsum(subscripts: Any, *operands: Any, out: Any = None, dtype: Any = None,
           order: str = "K", casting: str = "safe", optimize: Any = False) -> Any:
    """Einstein summation over a subscript string such as ``'ij,jk->ik'`` (``numpy.einsum``).

    Parameters
    ----------
    subscripts : str
        Labels per operand, optionally ``->`` and the output labels; ``...`` broadcasts;
        repeated labels in one operand take diagonals.
    *operands : array_like
        The operands.
    out : array, optional
        A clnp array that receives the result.
    dtype : dtype, optional
        The computation dtype.
    order, casting, optimize
        Accepted for NumPy compatibility.

    Returns
    -------
    array
        The result; operands are contracted pairwise with ``matmul`` after summing
        labels needed by no one else, so no intermediate is larger than an operand or a
        pairwise product.

    Raises
    ------
    ValueError
        Malformed subscripts, or labels whose sizes disagree.

    Examples
    --------
    >>> import clnp
    >>> a = clnp.asarray([[1.0, 2.0], [3.0, 4.0]])
    >>> print(clnp.einsum("ij,jk->ik", a, a))
    [[ 7. 10.]
     [15. 22.]]
    >>> float(clnp.einsum("ii", a))
    5.0
    """
    xp = _xp()
    if not isinstance(subscripts, str):
        raise TypeError("einsum: clnp supports only the subscript-string form "
                        "einsum('ij,jk->ik', a, b)")
    if not operands:
        raise ValueError("No input operands")
    dev = _device_of(*operands)
    ops = [_arr(o, dev) for o in operands]
    if dtype is not None:
        ops = [xp.astype(o, dt.as_dtype(dtype)) for o in ops]
    labels, out_labels = _einsum_parse(subscripts, [o.shape for o in ops])
    sizes: dict[str, int] = {}
    for o, lab in zip(ops, labels):
        for s, n in zip(lab, o.shape):
            if sizes.get(s, 1) not in (1, n) and n != 1:
                raise ValueError(f"einsum: operands could not be broadcast: label "
                                 f"{s.replace(chr(0), '...')!r} has sizes {sizes[s]} and "
                                 f"{n}")
            sizes[s] = builtins.max(sizes.get(s, 1), n)
    rd = ops[0].dtype
    for o in ops[1:]:
        rd = dt.promote(rd, o.dtype)
    terms = []
    for o, lab in zip(ops, labels):
        o = xp.astype(o, rd) if o.dtype != rd else o
        lab = list(lab)
        while len(set(lab)) != len(lab):          # repeated label: take the diagonal
            s = next(c for c in lab if lab.count(c) > 1)
            i = lab.index(s)
            j = lab.index(s, i + 1)
            o = diagonal(o, 0, i, j)
            lab = [c for k, c in enumerate(lab) if k not in (i, j)] + [s]
        terms.append((o, lab))

    def needed(exclude: list[int]) -> set[str]:
        need = set(out_labels)
        for k, (_, lab) in enumerate(terms):
            if k not in exclude:
                need.update(lab)
        return need

    # sum labels that only one operand has and the output does not need
    for k in builtins.range(len(terms)):
        o, lab = terms[k]
        need = needed([k])
        axes = tuple(i for i, s in enumerate(lab) if s not in need)
        if axes:
            o = xp.sum(o, axis=axes) if dkind(o.dtype) != "b" else xp.any(o, axis=axes)
            lab = [s for i, s in enumerate(lab) if i not in axes]
        terms[k] = (o, lab)
    a, la = terms[0]
    for k in builtins.range(1, len(terms)):
        b, lb = terms[k]
        need = set(out_labels)
        for _, lab in terms[k + 1:]:
            need.update(lab)
        a, la = _contract(a, la, b, lb, need, sizes)
    # labels left over (needed by nobody) are summed; then order as the output
    extra = tuple(i for i, s in enumerate(la) if s not in out_labels)
    if extra:
        a = xp.sum(a, axis=extra) if dkind(a.dtype) != "b" else xp.any(a, axis=extra)
        la = [s for i, s in enumerate(la) if i not in extra]
    missing = [s for s in out_labels if s not in la]
    if missing:
        raise ValueError(f"einsum: output labels {missing} are not in the inputs")
    a = xp.permute_dims(a, tuple(la.index(s) for s in out_labels))
    a = xp.broadcast_to(a, tuple(sizes[s] for s in out_labels))
    return _finish(a if a.dtype == rd else xp.astype(a, rd), out, "einsum")


def _contract(a: Any, la: list, b: Any, lb: list, need: set, sizes: dict) -> tuple[Any, list]:
    """Contract two labelled operands: shared labels still needed are batch dimensions,
    shared labels no longer needed are summed (through matmul)."""
    xp = _xp()
    batch = [s for s in la if s in lb and s in need]
    contr = [s for s in la if s in lb and s not in need]
    fa = [s for s in la if s not in lb]
    fb = [s for s in lb if s not in la]

    def arrange(x: Any, lab: list, order: list) -> Any:
        x = xp.permute_dims(x, tuple(lab.index(s) for s in order))
        return xp.broadcast_to(x, tuple(sizes[s] if s in batch or s in contr else n
                                        for s, n in zip(order, x.shape)))

    A = arrange(a, la, batch + fa + contr)
    B = arrange(b, lb, batch + contr + fb)
    nb = math.prod(sizes[s] for s in batch)
    nfa = math.prod(A.shape[len(batch):len(batch) + len(fa)])
    nfb = math.prod(B.shape[len(batch) + len(contr):])
    nc = math.prod(sizes[s] for s in contr)
    A2 = xp.reshape(A, (nb, nfa, nc))
    B2 = xp.reshape(B, (nb, nc, nfb))
    if dkind(A2.dtype) == "b":
        C = xp.any(xp.logical_and(xp.expand_dims(A2, axis=3), xp.expand_dims(B2, axis=1)),
                   axis=2)
    else:
        C = _matmul(A2, B2)
    shape = tuple(sizes[s] for s in batch) + tuple(A.shape[len(batch):len(batch) + len(fa)]) \
        + tuple(B.shape[len(batch) + len(contr):])
    return xp.reshape(C, shape), batch + fa + fb
