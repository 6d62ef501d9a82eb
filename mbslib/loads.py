"""Time histories of applied loads shared by the chapters.

:func:`triangular_pulse` is the load history of the four-bar loop of chapter 000 (Kinon & Betsch
2024, eq. 128, peak ``f_m`` at t = ½, end at t = 1) and of the follower moment of chapter 004
(Gebhardt & Romero 2020, eq. 116, peak 1 at T/2, end at T). :func:`bang_bang` is the
point-to-point motion profile of the Puma 560 joint controllers of chapter 002.
"""

from __future__ import annotations

import numba
import numpy as np

from mbslib.validation import positive


def triangular_pulse(t, peak: float = 1.0, t_peak: float = 0.5, t_end: float = 1.0):
    """Triangular pulse: 0 → ``peak`` linearly on [0, t_peak], back to 0 on [t_peak, t_end].

    ``f(t) = peak · t/t_peak`` on ``[0, t_peak)``, ``peak · (t_end − t)/(t_end − t_peak)`` on
    ``[t_peak, t_end)`` and 0 for ``t < 0`` and ``t ≥ t_end``.

    The pulse is continuous, so the boundary convention (half-open intervals, closed on the left)
    does not change its value at the kinks: both branches give exactly ``peak`` at ``t_peak``
    and exactly 0 at ``t_end`` (``x/x = 1`` and ``0 · x = 0`` in floating point). The branches
    are evaluated in the normalised time ``s = t/t_end``, which makes the result bitwise equal to
    the former ``2 f_m t``, ``2 f_m (1 − t)`` (eq. 128) and ``2s``, ``2 − 2s`` (eq. 116) when
    ``t_peak = t_end/2``.

    Parameters
    ----------
    t : float or array_like
        Time(s).
    peak : float
        Value at ``t_peak`` (finite, any sign).
    t_peak, t_end : float
        Time of the peak and end of the pulse, ``0 < t_peak < t_end``.

    Returns
    -------
    float for a scalar ``t``, else an ndarray of the shape of ``t``.

    Raises
    ------
    ValueError
        Naming the offending parameter.
    """
    if not np.isfinite(peak):
        raise ValueError(f"peak must be finite, got {peak!r}")
    positive(t_peak=t_peak, t_end=t_end)
    if not t_peak < t_end:
        raise ValueError(f"t_peak must be smaller than t_end, got {t_peak!r} >= {t_end!r}")
    sp = t_peak / t_end
    if np.ndim(t) == 0:
        s = float(t) / t_end
        if 0.0 <= s < sp:
            return peak * (s / sp)
        if sp <= s < 1.0:
            return peak * ((1.0 - s) / (1.0 - sp))
        return 0.0
    s = np.asarray(t, dtype=float) / t_end
    rising, falling = peak * (s / sp), peak * ((1.0 - s) / (1.0 - sp))
    return np.where(s < sp, rising, np.where(s < 1.0, falling, 0.0)) * (s >= 0)


@numba.njit(cache=True)
def bang_bang(start, change, duration, t):
    """Constant-acceleration ("bang–bang") profile from ``start`` to ``start + change``.

    Acceleration ``a = 4 change / duration²`` on ``[0, duration/2]``, ``−a`` on
    ``(duration/2, duration]``, rest before and after: position and velocity are continuous,
    zero velocity at both ends. Returns ``(position, velocity, acceleration)`` at scalar ``t``.
    """
    a = 4.0 * change / (duration * duration)
    if t < 0.0:
        return start, 0.0, 0.0
    if t <= 0.5 * duration:
        return start + 0.5 * a * t * t, a * t, a
    if t <= duration:
        s = duration - t
        return start + change - 0.5 * a * s * s, a * s, -a
    return start + change, 0.0, 0.0
