"""Convergence analysis: time grids, error norms, observed order, reference solutions, quotient of
precision."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.integrate import solve_ivp

from mbslib.validation import nonnegative, positive


def on_grid(h: float, t_end: float) -> float:
    """``t_end`` rounded to a whole number (≥ 1) of steps: ``h · max(1, round(t_end / h))``.

    Runs, widgets and convergence studies use it so that a trajectory ends exactly on a step
    (ties round to even, as Python's :func:`round`).

    Raises
    ------
    ValueError
        If ``h`` is not positive or ``t_end`` is negative or not finite.
    """
    positive(h=h)
    nonnegative(t_end=t_end)
    return h * max(1, round(t_end / h))


def relative_error(x, x_ref) -> float:
    """Relative error ``‖x - x_ref‖ / ‖x_ref‖`` in the Euclidean (Frobenius) norm."""
    x = np.asarray(x, dtype=float)
    x_ref = np.asarray(x_ref, dtype=float)
    norm = np.linalg.norm(x_ref)
    if norm == 0.0:
        raise ValueError("relative error against a zero reference")
    return float(np.linalg.norm(x - x_ref) / norm)


def max_error(x, x_ref) -> float:
    """Maximum over time of the Euclidean error, for time-major arrays of shape (N, n)."""
    diff = np.asarray(x, dtype=float) - np.asarray(x_ref, dtype=float)
    return float(np.max(np.linalg.norm(np.atleast_2d(diff), axis=-1)))


def observed_order(hs, errors) -> float:
    """Least-squares slope of ``log(error)`` against ``log(h)``: the observed order of convergence."""
    hs = np.asarray(hs, dtype=float)
    errors = np.asarray(errors, dtype=float)
    if hs.shape != errors.shape or hs.size < 2:
        raise ValueError("observed_order needs at least two (h, error) pairs of equal length")
    if np.any(hs <= 0) or np.any(errors <= 0) or not np.all(np.isfinite(errors)):
        raise ValueError("step sizes and errors must be positive and finite")
    slope, _ = np.polyfit(np.log(hs), np.log(errors), 1)
    return float(slope)


def local_orders(hs, errors) -> np.ndarray:
    """Slopes between consecutive points of a convergence study, shape (len(hs) - 1,)."""
    hs = np.asarray(hs, dtype=float)
    errors = np.asarray(errors, dtype=float)
    return np.diff(np.log(errors)) / np.diff(np.log(hs))


def quotient_of_precision(x_h, x_h2, x_h4) -> float:
    """Second quotient of precision ``‖x_h - x_{h/2}‖ / ‖x_{h/2} - x_{h/4}‖`` ≈ 2^p.

    The three arrays hold the solutions with steps h, h/2, h/4 at common times. For a method of
    order p the quotient tends to 2^p (4 for second order) without needing an exact solution.
    """
    num = np.linalg.norm(np.asarray(x_h, dtype=float) - np.asarray(x_h2, dtype=float))
    den = np.linalg.norm(np.asarray(x_h2, dtype=float) - np.asarray(x_h4, dtype=float))
    if den == 0.0:
        raise ValueError("the h/2 and h/4 solutions coincide; the quotient is undefined")
    return float(num / den)


def quotient_of_precision_history(x_h, x_h2, x_h4) -> np.ndarray:
    """Second quotient of precision at every coarse node ``t_n = n h``, n ≥ 1.

    ``Q₂(t_n) = ‖x_h(t_n) - x_{h/2}(t_n)‖ / ‖x_{h/2}(t_n) - x_{h/4}(t_n)‖`` ≈ 2^p (paper 004, App. A).

    Parameters
    ----------
    x_h, x_h2, x_h4 : ndarray, shapes (N+1, n), (2N+1, n), (4N+1, n)
        Time-major solutions with steps h, h/2, h/4 on the same interval.

    Returns
    -------
    ndarray, shape (N,)
        Q₂ at t_1 … t_N (undefined at t = 0).
    """
    x_h, x_h2, x_h4 = (np.asarray(a, dtype=float) for a in (x_h, x_h2, x_h4))
    N = x_h.shape[0] - 1
    if x_h2.shape[0] != 2 * N + 1 or x_h4.shape[0] != 4 * N + 1:
        raise ValueError("x_h2 and x_h4 must have 2N+1 and 4N+1 samples for N steps of x_h")
    a, b, c = x_h[1:], x_h2[2::2], x_h4[4::4]
    return np.linalg.norm(a - b, axis=1) / np.linalg.norm(b - c, axis=1)


def reference_solution(
    rhs: Callable[[float, np.ndarray], np.ndarray],
    y0,
    t_eval,
    *,
    rtol: float = 1e-12,
    atol: float = 1e-12,
    method: str = "DOP853",
) -> np.ndarray:
    """High-accuracy reference with scipy's ``solve_ivp``; returns time-major ``y`` of shape (len(t_eval), n)."""
    t_eval = np.asarray(t_eval, dtype=float)
    sol = solve_ivp(rhs, (t_eval[0], t_eval[-1]), np.asarray(y0, dtype=float), method=method,
                    t_eval=t_eval, rtol=rtol, atol=atol)
    if not sol.success:
        raise RuntimeError(f"reference solution failed: {sol.message}")
    return sol.y.T
