"""Studies that run independent configurations: convergence ladders, work–precision diagrams and
the largest usable step of a method, through :func:`mbslib.methods.solve`.

Every study maps one function over its configurations with :func:`sweep`, serially by default or
on any ``concurrent.futures.Executor`` the caller passes: local processes
(``ProcessPoolExecutor``) or a cluster (dask.distributed: ``Client(...).get_executor()``). Each
configuration is a run of its own, so the results are bitwise those of the serial study. A process
pool pickles the function with ``pickle`` (module-level functions, :func:`functools.partial`
of them); dask pickles closures too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import Executor
from dataclasses import dataclass
from functools import partial

import numpy as np

from mbslib.convergence import local_orders, observed_order
from mbslib.diagnostics import energy_error
from mbslib.methods import method_named, solve
from mbslib.model import Model
from mbslib.simulate import time_grid
from mbslib.trajectory import Trajectory, Work


def sweep(function: Callable, settings: Iterable, *, executor: Executor | None = None) -> list:
    """``[function(s) for s in settings]``, on ``executor`` if one is given (in the order of ``settings``)."""
    settings = list(settings)
    if executor is None:
        return [function(s) for s in settings]
    if not isinstance(executor, Executor):
        raise TypeError(f"executor must be a concurrent.futures.Executor (or None), got {type(executor).__name__}")
    return list(executor.map(function, settings))


@dataclass(frozen=True)
class Convergence:
    """A convergence ladder: step sizes, errors and the work of each run.

    ``order`` is the least-squares slope of ``log error`` against ``log h`` over the points whose
    error lies above ``floor`` (the asymptotic range: below it round-off or the reference's own
    error decides), ``local`` the slopes between neighbours.
    """

    hs: np.ndarray
    errors: np.ndarray
    work: tuple
    floor: float = 0.0

    @property
    def fitted(self) -> np.ndarray:
        """The points the order is fitted on (errors above ``floor``)."""
        return np.flatnonzero(np.isfinite(self.errors) & (self.errors > self.floor))

    @property
    def order(self) -> float:
        keep = self.fitted
        return observed_order(self.hs[keep], self.errors[keep])

    @property
    def local(self) -> np.ndarray:
        return local_orders(self.hs, self.errors)


def _measured(run: Callable[[float], tuple[float, Work]], h: float):
    return run(h)


def convergence(run: Callable[[float], tuple[float, Work]], hs, *, floor: float = 0.0,
                executor: Executor | None = None) -> Convergence:
    """The errors of ``run(h) -> (error, work)`` over the ladder ``hs`` (:class:`Convergence`)."""
    results = sweep(partial(_measured, run), hs, executor=executor)
    return Convergence(np.asarray(hs, dtype=float), np.array([e for e, _ in results], dtype=float),
                       tuple(w for _, w in results), floor)


@dataclass(frozen=True)
class Point:
    """One run of a work–precision diagram: its step size (and tolerance), error, counted work
    and CPU seconds (compilation excluded); ``ok`` is False if it did not reach the end."""

    h: float
    rtol: float | None
    error: float
    work: Work
    cpu_time: float
    ok: bool

    @property
    def evaluations(self) -> int:
        """Force or residual evaluations."""
        return self.work.rhs_evaluations


def _point(method: str, model: Model, t_end: float, error: Callable[[Trajectory], float], setting) -> Point:
    h, rtol = setting
    options = {} if rtol is None else {"rtol": rtol}
    run = solve(model, method, h, t_end, record_every=time_grid(h, t_end), throw=False, **options)
    reached = run.failure is None
    return Point(h, rtol, error(run) if reached else float("nan"), run.work, run.cpu_time, reached)


def work_precision(method: str, model: Model, hs, t_end: float, error: Callable[[Trajectory], float], *,
                   rtols=None, executor: Executor | None = None) -> list[Point]:
    """Run ``method`` at every step size of ``hs`` (or, with ``rtols``, at every tolerance with the
    largest step ``hs[0]``), recording the start and the end, and measure ``error(run)``."""
    settings = [(hs[0], rtol) for rtol in rtols] if rtols is not None else [(h, None) for h in hs]
    return sweep(partial(_point, method, model, t_end, error), settings, executor=executor)


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
