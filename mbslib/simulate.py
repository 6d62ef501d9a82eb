"""Fixed-step simulation driver.

A scheme is a pure step function ``step(x_n, h, t_n) -> (x_n1, report)`` (bind the system with
:func:`functools.partial`); ``report`` is a :class:`~mbslib.newton.NewtonReport` for implicit
schemes and ``None`` for explicit ones. :func:`simulate` owns the time loop and returns a
time-major :class:`Trajectory`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from mbslib.newton import NewtonError, NewtonReport
from mbslib.validation import positive

Step = Callable[[np.ndarray, float, float], tuple[np.ndarray, NewtonReport | None]]


@dataclass(frozen=True)
class Trajectory:
    """A discrete trajectory.

    Attributes
    ----------
    t : ndarray, shape (N+1,)
        Time grid ``t0 + n h``.
    x : ndarray, shape (N+1, n)
        States, time-major: ``x[k]`` is the state at ``t[k]``.
    reports : tuple
        One Newton report (or None for explicit schemes) per step, ``len == N``.
    wall_time : float
        Seconds spent in the time loop.
    failure : NewtonError or None
        With ``simulate(..., throw=False)``: the Newton failure that ended the run early (the
        trajectory then holds the converged steps before it), else None.
    """

    t: np.ndarray
    x: np.ndarray
    reports: tuple
    wall_time: float
    failure: NewtonError | None = None

    @property
    def h(self) -> float:
        """The step size."""
        return float(self.t[1] - self.t[0])

    @property
    def n_steps(self) -> int:
        return len(self.t) - 1

    @property
    def n_iter(self) -> np.ndarray:
        """Newton iterations per step, shape (N,) (zeros for explicit schemes)."""
        return np.array([0 if r is None else r.n_iter for r in self.reports], dtype=int)

    @property
    def time_per_step(self) -> float:
        """Mean wall time of one step in seconds."""
        return self.wall_time / max(self.n_steps, 1)


def n_steps_for(h: float, t_end: float, t0: float = 0.0) -> int:
    """The number of steps of size ``h`` from ``t0`` to ``t_end``; ``t_end - t0`` must be a multiple of ``h``."""
    positive(h=h)
    span = t_end - t0
    positive(t_end_minus_t0=span)
    n = round(span / h)
    if n < 1 or abs(n * h - span) > 1e-9 * max(1.0, abs(span)):
        raise ValueError(f"t_end - t0 = {span:g} is not a whole multiple of the step size h = {h:g}")
    return n


def progress(iterable: Iterable, total: int | None = None, disable: bool = True, desc: str | None = None):
    """Wrap ``iterable`` in a ``tqdm.auto`` progress bar unless ``disable``.

    ``tqdm.notebook`` ignores ``TQDM_DISABLE``, so the switch is explicit here.
    """
    if disable:
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc, leave=False)


def simulate(
    step: Step,
    x0,
    h: float,
    t_end: float,
    *,
    t0: float = 0.0,
    show_progress: bool = False,
    desc: str | None = None,
    throw: bool = True,
) -> Trajectory:
    """Run ``step`` from ``x0`` at ``t0`` to ``t_end`` with fixed step size ``h``.

    Parameters
    ----------
    step : callable ``(x_n, h, t_n) -> (x_n1, report)``
    x0 : array_like, shape (n,)
    h : float
        Step size, positive; ``t_end - t0`` must be a whole multiple of it.
    t_end, t0 : float
    show_progress : bool
        Show a ``tqdm.auto`` progress bar.
    throw : bool
        If False, a Newton failure ends the run early instead of raising: the trajectory holds
        the converged states before the failing step and ``failure`` holds the error (for
        schemes that are expected to lose their solution, e.g. the DLA scheme of chapter 004).

    Returns
    -------
    Trajectory

    Raises
    ------
    NewtonError
        With the failing step's index and time (unless ``throw=False``); no unconverged state
        is ever recorded.
    FloatingPointError
        If a step returns a non-finite state.
    """
    n = n_steps_for(h, t_end, t0)
    x0 = np.asarray(x0, dtype=float)
    if not np.all(np.isfinite(x0)):
        raise ValueError("x0 must be finite")
    t = t0 + h * np.arange(n + 1)
    x = np.empty((n + 1, x0.size))
    x[0] = x0
    reports = []
    failure = None
    start = time.perf_counter()
    for k in progress(range(n), total=n, disable=not show_progress, desc=desc):
        try:
            x_next, report = step(x[k], h, t[k])
        except NewtonError as err:
            failure = err.at_step(k)
            if throw:
                raise failure from None
            break
        if not np.all(np.isfinite(x_next)):
            raise FloatingPointError(f"step {k} at t = {t[k]:.6g} returned a non-finite state")
        x[k + 1] = x_next
        reports.append(report)
    wall = time.perf_counter() - start
    kept = len(reports) + 1
    return Trajectory(t=t[:kept], x=x[:kept], reports=tuple(reports), wall_time=wall, failure=failure)
