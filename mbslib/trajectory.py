"""The trajectory every driver returns, and the work it counted.

Cost claims in the book are asserted on :class:`Work`: deterministic counts of what a run did,
taken where the work happens (the Newton solver, the step functions, the compiled loops). Times
swing with the machine's load; counts do not. A :class:`Trajectory` carries both, and the
Newton failure that ended a run early, if any.
"""

from __future__ import annotations

from dataclasses import astuple, dataclass, fields

import numpy as np


@dataclass(frozen=True)
class Work:
    """Work of a run (or of one step) in deterministic units.

    Attributes
    ----------
    steps : int
        Accepted steps.
    rejected_steps : int
        Steps rejected by a step-size controller.
    rhs_evaluations : int
        Evaluations of the right-hand side (explicit schemes: forces per stage) or of the step's
        residual (implicit schemes: one per Newton iterate, plus two per finite-difference
        Jacobian column).
    newton_iterations : int
        Newton updates.
    jacobian_evaluations : int
        Evaluations of the Newton (iteration) matrix, analytic or by finite differences.
    factorisations : int
        Factorisations of the Newton matrix (fewer than the updates when a factorisation is reused).
    """

    steps: int = 0
    rejected_steps: int = 0
    rhs_evaluations: int = 0
    newton_iterations: int = 0
    jacobian_evaluations: int = 0
    factorisations: int = 0

    def __post_init__(self):
        for f in fields(self):
            value = getattr(self, f.name)
            if int(value) != value or value < 0:
                raise ValueError(f"{f.name} must be a non-negative integer, got {value!r}")

    def __add__(self, other: Work) -> Work:
        return Work(*(a + b for a, b in zip(astuple(self), astuple(other), strict=True)))

    def per_step(self) -> dict[str, float]:
        """Every count divided by the accepted steps."""
        n = max(self.steps, 1)
        return {f.name: getattr(self, f.name) / n for f in fields(self) if f.name != "steps"}


def total_work(reports) -> Work:
    """The summed :attr:`~mbslib.newton.NewtonReport.work` of step reports.

    ``None`` reports, from explicit steps, count nothing.
    """
    total = Work()
    for report in reports:
        if report is not None:
            total = total + report.work
    return total


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
        One report per step, ``len == N``: a :class:`~mbslib.newton.NewtonReport` for implicit
        schemes (it carries the step's work), ``None`` for explicit ones.
    wall_time, cpu_time : float
        Seconds spent in the time loop (wall clock and ``time.process_time``); shown, never a verdict.
    failure : NewtonError or None
        The Newton failure that ended the run early (the trajectory then holds the converged
        steps before it), else None.
    work : Work
        The counted work of the run: the steps plus the work of every report.
    """

    t: np.ndarray
    x: np.ndarray
    reports: tuple
    wall_time: float
    cpu_time: float = 0.0
    failure: Exception | None = None
    work: Work = Work()

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
