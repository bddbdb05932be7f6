"""Comparing clnp results with NumPy's in the NumPy-compatibility tests."""
from __future__ import annotations

import numpy as np

import clnp


def check(got, expected, rtol=1e-12, atol=1e-14, dtype=True):
    """``got`` (clnp arrays, possibly nested in tuples/lists) equals NumPy's ``expected``."""
    if isinstance(expected, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(expected)
        for g, e in zip(got, expected):
            check(g, e, rtol, atol, dtype)
        return
    assert isinstance(got, clnp.ndarray), type(got)
    e = np.asarray(expected)
    g = got.to_numpy()
    assert g.shape == e.shape, (g.shape, e.shape)
    if dtype:
        assert g.dtype == e.dtype, (g.dtype, e.dtype)
    np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, equal_nan=True)
