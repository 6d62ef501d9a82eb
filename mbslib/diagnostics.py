"""Diagnostics of discrete trajectories: increments and drifts of (supposedly) conserved quantities."""

from __future__ import annotations

import numpy as np


def increments(values) -> np.ndarray:
    """Per-step increments ``X^{n+1} - X^n`` of a time-major series, shape (N, ...)."""
    return np.diff(np.asarray(values, dtype=float), axis=0)


def max_increment(values) -> float:
    """Largest absolute per-step increment over the whole series (and all components)."""
    return float(np.max(np.abs(increments(values))))


def max_drift(values) -> float:
    """Largest absolute deviation from the initial value, ``max_n |X^n - X^0|``."""
    values = np.asarray(values, dtype=float)
    return float(np.max(np.abs(values - values[0])))


def relative_drift(values) -> float:
    """``max_n |X^n - X^0| / |X^0|`` (the initial value must not vanish)."""
    values = np.asarray(values, dtype=float)
    scale = np.max(np.abs(values[0]))
    if scale == 0.0:
        raise ValueError("relative drift of a quantity that starts at zero")
    return max_drift(values) / float(scale)
