"""NumPy meaning of each collective, written per participant (independent of clnp's
stacked formulation): ``xs`` is the list of every participant's input, the result the list
of every participant's output."""
from __future__ import annotations

import numpy as np


def psum(xs):
    s = xs[0].copy()
    for x in xs[1:]:
        s = s + x
    return [s] * len(xs)


def pmean(xs):
    return [s / len(xs) for s in psum(xs)]


def pmax(xs):
    return [np.maximum.reduce(xs)] * len(xs)


def pmin(xs):
    return [np.minimum.reduce(xs)] * len(xs)


def all_gather(xs, axis=0, tiled=False):
    g = np.concatenate(xs, axis=axis) if tiled else np.stack(xs, axis=axis)
    return [g] * len(xs)


def psum_scatter(xs, scatter_dimension=0, tiled=False):
    s, n = psum(xs)[0], len(xs)
    if tiled:
        return np.split(s, n, axis=scatter_dimension)
    return [np.take(s, i, axis=scatter_dimension) for i in range(n)]


def ppermute(xs, perm):
    out = [np.zeros_like(x) for x in xs]
    for s, d in perm:
        out[d] = xs[s]
    return out


def all_to_all(xs, split_axis, concat_axis, tiled=False):
    n = len(xs)
    if tiled:
        return [np.concatenate([np.split(xs[j], n, axis=split_axis)[i] for j in range(n)],
                               axis=concat_axis) for i in range(n)]
    return [np.stack([np.take(xs[j], i, axis=split_axis) for j in range(n)], axis=concat_axis)
            for i in range(n)]


def cases(n):
    """(name, clnp call on one participant's value, oracle on all participants) for a
    per-participant input of shape (n, 2 * n)."""
    from clnp_nn import parallel as P
    c = [("psum", lambda v: P.psum(v, "i"), psum),
         ("pmean", lambda v: P.pmean(v, "i"), pmean),
         ("pmax", lambda v: P.pmax(v, "i"), pmax),
         ("pmin", lambda v: P.pmin(v, "i"), pmin)]
    for ax in (0, 1, -1):
        c.append((f"all_gather_axis{ax}", lambda v, ax=ax: P.all_gather(v, "i", axis=ax),
                  lambda xs, ax=ax: all_gather(xs, ax % 3)))
    c.append(("all_gather_tiled1", lambda v: P.all_gather(v, "i", axis=1, tiled=True),
              lambda xs: all_gather(xs, 1, True)))
    c.append(("psum_scatter0", lambda v: P.psum_scatter(v, "i"), psum_scatter))
    c.append(("psum_scatter_tiled1",
              lambda v: P.psum_scatter(v, "i", scatter_dimension=1, tiled=True),
              lambda xs: psum_scatter(xs, 1, True)))
    ring = [(i, (i + 1) % n) for i in range(n)]
    c.append(("ppermute_ring", lambda v: P.ppermute(v, "i", ring), lambda xs: ppermute(xs, ring)))
    part = [(0, n - 1)]
    c.append(("ppermute_partial", lambda v: P.ppermute(v, "i", part),
              lambda xs: ppermute(xs, part)))
    for sa, ca in ((0, 1), (0, 0)):
        c.append((f"all_to_all_{sa}{ca}", lambda v, sa=sa, ca=ca: P.all_to_all(v, "i", sa, ca),
                  lambda xs, sa=sa, ca=ca: all_to_all(xs, sa, ca)))
    c.append(("all_to_all_tiled10", lambda v: P.all_to_all(v, "i", 1, 0, tiled=True),
              lambda xs: all_to_all(xs, 1, 0, True)))
    c.append(("axis_index", lambda v: P.axis_index("i"), lambda xs: list(range(len(xs)))))
    return c
