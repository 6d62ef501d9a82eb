"""The trajectory every driver returns, and the work it counted.

Cost claims in the book are asserted on :class:`Work`: deterministic counts of what a run did,
taken where the work happens (the Newton solver, the step functions, the compiled loops). Times
swing with the machine's load; counts do not. A :class:`Trajectory` carries both, and the
failure that ended a run early, if any. Every driver returns one: :func:`mbslib.simulate.simulate`
(a state and a step report per step) and the compiled time loops
(:func:`~mbslib.integrators.runge_kutta.integrate_explicit`,
:func:`~mbslib.integrators.generalized_alpha.integrate_genalpha`,
:func:`~mbslib.studies.binder_torus.simulate_torus`), which record the model's record every so many
steps and keep the final state, and the Exudyn cross-check (:func:`mbslib.exudyn_models.solve`),
which reports the final output and the work Exudyn counts.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

import numpy as np

from mbslib import diagnostics
from mbslib.model import BodyStates, Model


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
        Factorisations of the Newton matrix (fewer than the updates when a factorisation is reused);
        for explicit schemes, of a configuration-dependent mass matrix (one per stage).
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
        return Work(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))

    def per_step(self) -> dict[str, float]:
        """Every count divided by the accepted steps."""
        n = max(self.steps, 1)
        return {f.name: getattr(self, f.name) / n for f in fields(self) if f.name != "steps"}


def total_work(reports) -> Work:
    """The summed :attr:`~mbslib.newton.NewtonReport.work` of step reports.

    ``None`` reports, from explicit steps, count nothing.
    """
    works = [report.work for report in reports if report is not None]
    return Work(*(sum(getattr(work, f.name) for work in works) for f in fields(Work)))


class IntegrationError(RuntimeError):
    """A run ended before its horizon for a reason other than Newton's
    (:class:`~mbslib.newton.NewtonError`): a non-finite state, or the step limit of a controller.

    Attributes
    ----------
    reason : str
    step : int
        Index of the step that was not taken.
    t : float
        Time at its start.
    """

    def __init__(self, reason: str, step: int, t: float):
        self.reason, self.step, self.t = reason, step, t
        super().__init__(f"{reason} at step {step} (t = {t:.6g})")


@dataclass(frozen=True)
class Health:
    """What a run kept of what its method claims, measured on the description's body states
    (:mod:`mbslib.diagnostics`), and the warnings it earned (:func:`mbslib.methods.solve`).

    Attributes
    ----------
    energy_error : float
        ``max |E − E₀| / scale`` over the recorded instants (:func:`~mbslib.diagnostics.energy_error`);
        for a model with dampers or loads, of ``E − E₀ − ∫ P dt`` (the energy balance, trapezoid).
    momentum_error : float or None
        Largest relative change of the conserved part of the angular momentum
        (:func:`~mbslib.diagnostics.momentum_error`); None if the model conserves none.
    joint_error, joint_rate_error : float
        Largest joint residual at position and at velocity level at the recorded instants.
    rotation_defect : float
        Largest ``|RᵀR − I|``.
    warnings : tuple of str
        One sentence per rule broken (:data:`mbslib.methods.HEALTH_RULES`), naming the step and
        time where it was first broken; empty for a healthy run.
    """

    energy_error: float
    momentum_error: float | None
    joint_error: float
    joint_rate_error: float
    rotation_defect: float
    warnings: tuple = ()

    @property
    def ok(self) -> bool:
        return not self.warnings


@dataclass(frozen=True)
class Trajectory:
    """A discrete trajectory.

    Attributes
    ----------
    t : ndarray, shape (K,)
        The recorded instants: every step's ``t0 + n h`` (:func:`mbslib.simulate.simulate`), every
        ``record_every``-th step's of a compiled loop (empty if it records nothing).
    x : ndarray, shape (K, m)
        The recorded rows, time-major: ``x[k]`` at ``t[k]``. The state for
        :func:`~mbslib.simulate.simulate`; the model's record for the compiled loops (the state
        ``[q; v]`` of a system, the centre of mass of a heavy top, ...).
    reports : tuple
        One report per step (``simulate``): a :class:`~mbslib.newton.NewtonReport` for implicit
        schemes (it carries the step's work), ``None`` for explicit ones. Empty for compiled loops.
    wall_time, cpu_time : float
        Seconds spent in the time loop (wall clock and ``time.process_time``); shown, never a verdict.
    failure : Exception or None
        What ended the run early (:class:`~mbslib.newton.NewtonError` or :class:`IntegrationError`,
        with the step and its time; the trajectory then holds the steps before it), else None.
    work : Work
        The counted work of the run; ``work.steps`` are the steps taken.
    h : float or None
        The step size (the largest and initial one under step-size control).
    q, v : ndarray or None
        Coordinates and velocities at ``t_final`` (compiled loops, whose ``x`` need not be the
        state); None when ``x`` holds the states.
    t_final : float
        The last instant reached: the horizon, or the start of the step that failed (default ``t[-1]``).
    max_iterations : int
        The most Newton iterations of one step.
    extras : dict
        Results of one driver that fit no field above, by name (documented by the driver: the
        torus loop's recorded states and its time integrals); empty for the others.
    method : str
        The method's name in :data:`mbslib.methods.METHODS` (runs of :func:`mbslib.methods.solve`).
    model : Model or None
        The description that was run (:func:`~mbslib.methods.solve`); None for a driver run on
        a formulation's system.
    states : BodyStates or None
        The bodies' poses and velocities at ``t`` (:func:`~mbslib.methods.solve`).
    own : dict
        The scheme's own side (:func:`~mbslib.methods.solve`): ``"x"``, its coordinates at ``t``
        (the rows ``x``), and the quantities it conserves in them, ``"energy"`` (T,) and
        ``"momentum"`` (T, 3) (about the world origin), where it has them. They may differ from
        the description's at the nodes.
    health : Health or None
        What the run kept (:func:`~mbslib.methods.solve`); None for a driver run.
    """

    t: np.ndarray
    x: np.ndarray
    reports: tuple = ()
    wall_time: float = 0.0
    cpu_time: float = 0.0
    failure: Exception | None = None
    work: Work = Work()
    h: float | None = None
    q: np.ndarray | None = None
    v: np.ndarray | None = None
    t_final: float | None = None
    max_iterations: int = 0
    extras: dict = field(default_factory=dict)
    method: str = ""
    model: Model | None = None
    states: BodyStates | None = None
    own: dict = field(default_factory=dict)
    health: Health | None = None

    def __post_init__(self):
        if self.t_final is None:
            object.__setattr__(self, "t_final", float(self.t[-1]))

    @property
    def status(self) -> str:
        """``"failed"`` (it ended early: ``failure``), ``"unhealthy"`` (it reached its horizon
        but broke a rule of ``health``) or ``"ok"``."""
        if self.failure is not None:
            return "failed"
        return "unhealthy" if self.health is not None and not self.health.ok else "ok"

    @property
    def ok(self) -> bool:
        """Whether the run reached its horizon and kept what its method claims (``health``)."""
        return self.status == "ok"

    @property
    def failed_step(self) -> int:
        """Index of the step that ended the run, −1 if none did."""
        return -1 if self.failure is None else int(self.failure.step)

    @property
    def n_steps(self) -> int:
        """Steps taken (accepted)."""
        return self.work.steps

    @property
    def iterations_per_step(self) -> float:
        """Newton iterations (the failing step's included) per step taken."""
        return self.work.newton_iterations / max(self.work.steps, 1)

    @property
    def n_iter(self) -> np.ndarray:
        """Newton iterations per step, shape (N,) (zeros for explicit schemes; ``simulate`` only)."""
        return np.array([0 if r is None else r.n_iter for r in self.reports], dtype=int)

    @property
    def time_per_step(self) -> float:
        """Mean wall time of one step in seconds."""
        return self.wall_time / max(self.n_steps, 1)

    # -- the description's diagnostics of the body states (mbslib.diagnostics) --

    def _bodies(self):
        if self.model is None or self.states is None:
            raise ValueError("this trajectory has no body states: run the model with mbslib.solve")
        return self.model, self.states

    def energy(self) -> np.ndarray:
        """The description's total energy ``T + V`` at ``t`` [J]."""
        return diagnostics.total_energy(*self._bodies())

    def energy_error(self) -> np.ndarray:
        """``(E − E₀)/scale`` at ``t`` (:func:`~mbslib.diagnostics.energy_error`)."""
        return diagnostics.energy_error(*self._bodies())

    def momentum_error(self) -> np.ndarray | None:
        """Relative change of the conserved angular momentum at ``t``, None if none is conserved."""
        return diagnostics.momentum_error(*self._bodies())

    def joint_error(self) -> np.ndarray:
        """Largest joint residual at position level at ``t``."""
        return diagnostics.joint_error(*self._bodies())

    def joint_rate_error(self) -> np.ndarray:
        """Largest joint residual at velocity level at ``t``."""
        return diagnostics.joint_rate_error(*self._bodies())
