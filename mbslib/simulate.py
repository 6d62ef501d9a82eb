"""Fixed-step simulation driver.

A scheme is a pure step function ``step(x_n, h, t_n) -> (x_n1, report)`` (bind the system with
:func:`functools.partial`); ``report`` is a :class:`~mbslib.newton.NewtonReport` for implicit
schemes and ``None`` for explicit ones. :func:`simulate` owns the time loop and returns a
time-major :class:`~mbslib.trajectory.Trajectory` with the counted work of the run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

import numpy as np

from mbslib.newton import NewtonError, NewtonReport
from mbslib.trajectory import Trajectory, Work, total_work
from mbslib.validation import positive

Step = Callable[[np.ndarray, float, float], tuple[np.ndarray, NewtonReport | None]]


#: The most steps one run may take (:func:`time_grid`).
MAX_STEPS = 10**9


def _real(name: str, value) -> float:
    """``value`` as a float if it is a finite real number (not a bool), else ``ValueError`` naming it."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return float(value)


def time_grid(h: float, t_end: float, *, t0: float = 0.0, record_every: int | None = None) -> int:
    """The number of steps of size ``h`` from ``t0`` to ``t_end``, checked as every driver checks it.

    ``h`` must be a positive real number, ``t0 < t_end`` real numbers whose difference is a whole
    multiple of ``h`` (to 10⁻⁹ of the span; no driver rounds a horizon) and at most
    :data:`MAX_STEPS` steps, and ``record_every``
    (where a driver records every so many steps) a positive integer or ``None``. Each rule raises
    ``ValueError`` naming the argument.
    """
    h, t_end, t0 = _real("h", h), _real("t_end", t_end), _real("t0", t0)
    positive(h=h)
    if not t_end > t0:
        raise ValueError(f"t_end must be after t0, got t_end = {t_end:g}, t0 = {t0:g}")
    span = t_end - t0
    if span / h > MAX_STEPS:
        raise ValueError(f"h = {h:g} makes {span / h:.3g} steps from t0 to t_end; more than {MAX_STEPS:.0e} is refused "
                         "(a step size typed wrong?)")
    n = round(span / h)
    if n < 1 or abs(n * h - span) > 1e-9 * max(1.0, span):
        raise ValueError(f"t_end - t0 = {span:g} is not a whole multiple of the step size h = {h:g}")
    if record_every is not None and (isinstance(record_every, (bool, np.bool_))
                                     or not isinstance(record_every, (int, np.integer)) or record_every < 1):
        raise ValueError(f"record_every must be a positive integer (or None: no records), got {record_every!r}")
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
    n = time_grid(h, t_end, t0=t0)
    x0 = np.asarray(x0, dtype=float)
    if not np.all(np.isfinite(x0)):
        raise ValueError("x0 must be finite")
    t = t0 + h * np.arange(n + 1)
    x = np.empty((n + 1, x0.size))
    x[0] = x0
    reports = []
    failure = None
    start, start_cpu = time.perf_counter(), time.process_time()
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
    wall, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    kept = len(reports) + 1
    work = Work(steps=len(reports)) + total_work(reports)
    max_iterations = max((0 if r is None else r.n_iter for r in reports), default=0)
    return Trajectory(t=t[:kept], x=x[:kept], reports=tuple(reports), wall_time=wall, cpu_time=cpu,
                      failure=failure, work=work, h=float(h), max_iterations=int(max_iterations))
