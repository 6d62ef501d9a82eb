"""Finite-difference helpers for testing analytic derivatives."""

import numpy as np


def central_difference(f, x, eps=1e-6):
    """Central-difference derivative of ``f`` at ``x``: shape ``f(x).shape + x.shape``."""
    x = np.asarray(x, dtype=float)
    f0 = np.asarray(f(x))
    out = np.empty(f0.shape + x.shape)
    for idx in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[idx] = eps
        out[(...,) + idx] = (np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * eps)
    return out
