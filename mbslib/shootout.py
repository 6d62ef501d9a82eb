"""The shoot-out's measurements: every integrator of the book (:data:`mbslib.methods.METHODS`) run
from one coordinate-free description through :func:`mbslib.methods.solve` and judged by the
diagnostics of :mod:`mbslib.diagnostics`, the same for every method.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from mbslib.diagnostics import energy_error
from mbslib.methods import method_named, solve
from mbslib.model import Model
from mbslib.simulate import time_grid
from mbslib.trajectory import Trajectory

# -- measurements ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Point:
    """One run of a work–precision diagram: its step size (and tolerance), error, counted work
    (force or residual evaluations) and CPU seconds; ``ok`` is False if it did not reach the end."""

    h: float
    rtol: float | None
    error: float
    evaluations: int
    cpu_time: float
    ok: bool


def work_precision(method: str, model: Model, hs, t_end: float, error: Callable[[Trajectory], float], *,
                   rtols=None) -> list[Point]:
    """Run ``method`` at every step size of ``hs`` (or, with ``rtols``, at every tolerance with the
    largest step ``hs[0]``), recording the start and the end, and measure ``error(run)``; ``ok``
    is whether the run reached the end (its CPU time excludes compilation, :func:`~mbslib.methods.solve`)."""
    settings = [(hs[0], rtol) for rtol in rtols] if rtols is not None else [(h, None) for h in hs]
    points = []
    for h, rtol in settings:
        options = {} if rtol is None else {"rtol": rtol}
        run = solve(model, method, h, t_end, record_every=time_grid(h, t_end), throw=False, **options)
        reached = run.failure is None
        points.append(Point(h, rtol, error(run) if reached else float("nan"), run.work.rhs_evaluations,
                            run.cpu_time, reached))
    return points


def largest_stable_step(method: str, model: Model, hs, t_end: float, *,
                        energy_tolerance: float = 0.1) -> tuple[float, Trajectory | None]:
    """The largest step of ``hs`` (tried from the largest down) with which ``method`` reaches
    ``t_end`` with the relative energy error (:func:`~mbslib.diagnostics.energy_error`) below
    ``energy_tolerance`` at every step, and that run; ``(nan, None)`` if none does."""
    method_named(method)
    for h in sorted(hs, reverse=True):
        run = solve(model, method, h, t_end, throw=False)
        if run.failure is None and np.abs(energy_error(model, run.states)).max() < energy_tolerance:
            return float(h), run
    return float("nan"), None
