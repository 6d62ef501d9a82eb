"""The shoot-out: every integrator of the book run from one coordinate-free description
(:mod:`mbslib.model`) and judged by one set of diagnostics.

A :class:`Method` takes a model, a step size ``h`` and a horizon, builds its own coordinates
through a formulation (:mod:`mbslib.formulations`), runs its integrator and maps the trajectory
back to body states. It returns a :class:`Run`: the body states every ``every`` steps (and at the
end), the scheme's own conserved quantity where it has one, the counted work
(:class:`mbslib.trajectory.Work`), the CPU seconds of the integrator alone, and the failure that
ended it early, if any. A method that cannot take a model says why (:meth:`Method.refusal`: the
formulation's own refusal).

The diagnostics below are functions of body states only, the same for every method.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from mbslib.formulations import directors, lie_group
from mbslib.formulations.quaternions import QuaternionSystem, RotationSystem
from mbslib.formulations.rodrigues import PivotedRodriguesSystem, RodriguesSystem
from mbslib.integrators import ggl, livens, nonholonomic_em
from mbslib.integrators import rodrigues_vi as rr
from mbslib.integrators.generalized_alpha import integrate_genalpha
from mbslib.integrators.runge_kutta import integrate_explicit, paper_tolerances
from mbslib.integrators.tableaux import DOPRI5, RK44, RK67
from mbslib.model import (
    BodyStates,
    Model,
    angular_momentum,
    constraint_rates,
    constraint_residuals,
    kinetic_energy,
    total_energy,
)
from mbslib.simulate import n_steps_for, simulate
from mbslib.systems import directors as director_systems
from mbslib.trajectory import Work


@dataclass(frozen=True)
class Run:
    """One run of one method on one model.

    Attributes
    ----------
    method : str
    h : float
        Step size (the largest and initial one for an adaptive method).
    states : BodyStates
        Every ``every`` steps from t = 0, and the last state reached.
    work : Work
    cpu_time : float
        CPU seconds of the integrator (formulation and mapping back excluded).
    own_energy, own_momentum : ndarray or None, shapes (T,) and (T, 3)
        The scheme's own energy and angular momentum (about the world origin) at the recorded
        instants, for the schemes whose variables carry their own: Livens' generalized energy and
        ``Σ φ × p_φ + ½ E(q) p_q`` (EML, REML, MPL, Null-EML), the Hamiltonian and ``½ E(q) p``
        (EMH, MPH), ``½ p·M⁻¹p + V`` and ``Σ q_A × p_A`` (GGL-VI), ``½ q̇·M q̇`` and
        ``Σ d_i × π^i`` (EM of paper 004). They may differ from the description's at the nodes.
    failure : str
        Why the run ended before the horizon; empty if it did not.
    """

    method: str
    h: float
    states: BodyStates
    work: Work
    cpu_time: float
    own_energy: np.ndarray | None = None
    own_momentum: np.ndarray | None = None
    failure: str = ""

    @property
    def ok(self) -> bool:
        return not self.failure


@dataclass(frozen=True)
class Method:
    """An integrator of the book with its formulation: ``run(model, h, t_end, every)``.

    ``build(model)`` builds the formulation (raising ``ValueError`` or ``NotImplementedError``
    with the reason when the method cannot take the model); ``integrate(model, system, h, t_end,
    every, name)`` returns a :class:`Run`. ``order`` is the method's order on a torque-free body
    (the GGL-VI drops to first order under a potential, chapter 001).
    """

    name: str
    chapter: str
    explicit: bool
    order: int
    build: Callable = field(repr=False)
    integrate: Callable = field(repr=False)
    adaptive: bool = False

    def refusal(self, model: Model) -> str:
        """Why this method cannot run ``model`` (empty if it can)."""
        try:
            self.build(model)
        except (ValueError, NotImplementedError) as reason:
            return str(reason)
        return ""

    def run(self, model: Model, h: float, t_end: float, every: int = 1, *, rtol: float | None = None) -> Run:
        """Run ``model`` with step ``h`` to ``t_end`` (a whole number of steps), recording every
        ``every`` steps (0: the start and the end only). ``rtol`` is the tolerance of a method
        with step-size control (``h`` is then its largest and initial step; ``atol = 10⁻² rtol``
        as in paper 002); the other methods refuse it."""
        n = n_steps_for(h, t_end)
        if isinstance(every, bool) or int(every) != every or every < 0:
            raise ValueError(f"every must be a non-negative integer, got {every!r}")
        options = {}
        if rtol is not None:
            if not self.adaptive:
                raise ValueError(f"rtol: {self.name} has no step-size control")
            options["rtol"] = rtol
        return self.integrate(model, self.build(model), h, t_end, int(every) or n, self.name, **options)


def _kept(n_states: int, every: int) -> np.ndarray:
    """Indices of the recorded instants among ``n_states`` states: every ``every``-th and the last."""
    return np.unique(np.r_[np.arange(0, n_states, every), n_states - 1])


def _timed(call):
    start = time.process_time()
    out = call()
    return out, time.process_time() - start


# -- implicit schemes driven by mbslib.simulate --------------------------------------------------

def _simulated(name, h, t_end, every, step, x0, states_of, own=None) -> Run:
    """Run ``step`` with :func:`mbslib.simulate.simulate`; ``own(x, states)`` gives the scheme's own
    energy and momentum at the recorded states."""
    traj, cpu = _timed(lambda: simulate(step, x0, h, t_end, throw=False))
    keep = _kept(len(traj.t), every)
    x = traj.x[keep]
    states = states_of(traj.t[keep], x)
    energy, momentum = (None, None) if own is None else own(x, states)
    failure = "" if traj.failure is None else str(traj.failure)
    return Run(name, h, states, traj.work, cpu, energy, momentum, failure)


def _livens_run(step, model, system, h, t_end, every, name):
    n = system.n

    def own(x, states):  # Livens' generalized energy (74) and Σ φ × p_φ + ½ E(q) p_q
        return livens.energies(system, x)["E"], np.array([system.angular_momentum(y[:n], y[n:2 * n]) for y in x])

    return _simulated(name, h, t_end, every, partial(step, system), system.initial_state(),
                      lambda t, x: system.body_states(t, x[:, :n], x[:, 2 * n:3 * n]), own)


def _about_origin(rotation, L, states):
    """A :class:`RotationSystem`'s ``½ E(q) p`` (about its pivot, turned world) about the world
    origin: ``Wᵀ L + c × m v`` (``c`` the pivot; a free body turns about its centre ``x``)."""
    body = rotation.model.bodies[0]
    point = states.position[:, 0] if rotation.pivot is None else rotation.pivot.point_a
    return L @ rotation.W + np.cross(point, body.mass * states.velocity[:, 0])


def _null_eml_run(model, rotation, h, t_end, every, name):
    system = rotation.system

    def own(x, states):
        L = np.array([system.angular_momentum(y[:4], y[4:8]) for y in x])
        return livens.energies(system, x)["E"], _about_origin(rotation, L, states)

    return _simulated(name, h, t_end, every, partial(livens.step_null_eml, system), rotation.initial_state(),
                      lambda t, x: rotation.body_states(t, x[:, :4], x[:, 8:12]), own)


def _hamiltonian_run(step, model, rotation, h, t_end, every, name):
    system = rotation.system

    def states_of(t, x):
        v = np.array([livens.velocity_from_momentum(system, y[:4], y[4:8]) for y in x])
        return rotation.body_states(t, x[:, :4], v)

    def own(x, states):  # H = ½ p·M₄⁻¹p + V and ½ E(q) p
        L = np.array([system.angular_momentum(y[:4], y[4:8]) for y in x])
        return np.array([livens.hamiltonian(system, y[:4], y[4:8]) for y in x]), _about_origin(rotation, L, states)

    x0 = livens.hamiltonian_initial_state(system, rotation.initial_state())
    return _simulated(name, h, t_end, every, partial(step, system), x0, states_of, own)


def _ggl_run(model, system, h, t_end, every, name):
    q0, qdot0 = directors.initial_coordinates(model)

    def states_of(t, x):
        parts = ggl.split(system, x)
        return directors.body_states(model, t, parts.q, parts.p / system.M)

    def own(x, states):  # ½ p·M⁻¹p + V and Σ q_A × p_A
        parts = ggl.split(system, x)
        return (system.kinetic_from_p(parts.p) + system.V(parts.q),
                director_systems.angular_momentum(parts.q, parts.p, 3))

    # sparse: the Newton update eliminates q, p, v body by body in compiled code (ggl.WithoutQPV), also
    # for the single bodies, where it is about twice as fast as the dense LU of all unknowns
    step = partial(ggl.step_ggl, system, sparse=True)
    return _simulated(name, h, t_end, every, step, ggl.initial_vector(system, q0, qdot0), states_of, own)


def _em_run(model, built, h, t_end, every, name):
    body, x0 = built

    def own(x, states):  # ½ q̇·M q̇ and Σ d_i × π^i, about the centre: shifted to the origin
        kept = nonholonomic_em.invariants(body, x)
        return kept["K"], kept["pi"] + np.cross(states.position[:, 0], model.bodies[0].mass * states.velocity[:, 0])

    return _simulated(name, h, t_end, every, partial(nonholonomic_em.step_em, body, nonholonomic=False), x0,
                      lambda t, x: directors.nontwisting_body_states(model, t, x), own)


# -- compiled schemes of paper 002 ----------------------------------------------------------------

def _genalpha_run(form, model, absolute, h, t_end, every, name):
    traj, cpu = _timed(lambda: integrate_genalpha(absolute, lie_group.initial_state(model, form), h, t_end,
                                                  record_every=every))
    n, rows, t = absolute.n, traj.x, traj.t
    if traj.n_steps % every:  # the last state reached
        rows, t = np.vstack([rows, np.r_[traj.q, traj.v]]), np.r_[t, traj.t_final]
    failure = "" if traj.ok else str(traj.failure)
    return Run(name, h, lie_group.body_states(model, form, t, rows[:, :n], rows[:, n:]), traj.work, cpu,
               failure=failure)


def _rkmk_system(model: Model):
    """Rotation vectors of paper 002 without constraints: the model in absolute coordinates if it
    has no joints, one body turning about a ground pivot in its rotation vector alone (the heavy
    top about the fixed point, :func:`~mbslib.formulations.lie_group.absolute_model`)."""
    if not model.joints:
        return lie_group.absolute_model(model, "RV")
    pivoted = (model.n_bodies == 1 and len(model.joints) == 1 and model.joints[0].kind == "spherical"
               and model.joints[0].body_a is None and not model.springs and not model.loads)
    if not pivoted:
        raise ValueError("explicit RK/RKMK integrate unconstrained models only: the joints of this model are "
                         "constraints (only a single body on a ground pivot has unconstrained rotation coordinates)")
    return lie_group.absolute_model(model, "RV", about_pivot=True)


def _rkmk_run(tableau, model, system, h, t_end, every, name, rtol=None):
    """Fixed steps (RK44, RK67) or step-size control (DOPRI5) with tolerance ``rtol`` (default:
    paper 002's for ``h``, :func:`~mbslib.integrators.runge_kutta.paper_tolerances`), run in
    segments of ``every`` steps of size ``h`` so that every recorded state is whole."""
    about_pivot = bool(model.joints)  # see _rkmk_system
    x, n, n_steps = lie_group.initial_state(model, "RV", about_pivot=about_pivot), system.n, n_steps_for(h, t_end)
    if tableau.adaptive:
        rtol, atol = paper_tolerances(tableau, h, t_end) if rtol is None else (rtol, 1e-2 * rtol)
    else:
        atol = None
    rows, times, work, cpu, failure = [x], [0.0], Work(), 0.0, ""
    for start in range(0, n_steps, every):
        span = min(every, n_steps - start) * h
        result, seconds = _timed(lambda x=x, span=span: integrate_explicit(system, x, tableau, h, span, rtol=rtol,
                                                                            atol=atol))
        cpu += seconds
        work = work + result.work
        if not result.ok:
            failure = f"{result.failure.reason} at t = {times[-1] + result.t_final:g} s"
            break
        x = np.r_[result.q, result.v]
        rows.append(x)
        times.append(times[-1] + span)
    rows = np.array(rows)
    states = lie_group.body_states(model, "RV", times, rows[:, :n], rows[:, n:], about_pivot=about_pivot)
    return Run(name, h, states, work, cpu, failure=failure)


# -- explicit variational maps of paper 003 --------------------------------------------------------

def _rodrigues_system(model: Model):
    return PivotedRodriguesSystem(model) if model.joints else RodriguesSystem(model)


def _rodrigues_run(step, model, system, h, t_end, every, name):
    state = system.initial_state()
    traj, cpu = _timed(lambda: rr.run(step, system, state, h, n_steps_for(h, t_end)))
    keep = _kept(len(traj.t), every)
    failure = "" if traj.failure is None else str(traj.failure)  # h|p| ≥ 1: the increment (16) does not exist
    return Run(name, h, system.body_states(traj.t[keep], traj.x[keep]), traj.work, cpu, failure=failure)


def _methods() -> dict[str, Method]:
    livens_steps = {"EML": livens.step_eml, "REML": livens.step_reml, "MPL": livens.step_mpl}
    methods = [Method(name, "000", False, 2, QuaternionSystem, partial(_livens_run, step)) for name, step in
               livens_steps.items()]
    methods += [Method("Null-EML", "000", False, 2, RotationSystem, _null_eml_run),
                Method("EMH", "000", False, 2, RotationSystem, partial(_hamiltonian_run, livens.step_emh)),
                Method("MPH", "000", False, 2, RotationSystem, partial(_hamiltonian_run, livens.step_mph)),
                Method("GGL-VI", "001", False, 2, directors.director_system, _ggl_run)]
    methods += [Method(f"RKMK {tableau.name}", "002", True, tableau.order, _rkmk_system, partial(_rkmk_run, tableau),
                       adaptive=tableau.adaptive) for tableau in (RK44, RK67, DOPRI5)]
    methods += [Method(f"gen-α {form}", "002", False, 2, partial(lie_group.absolute_model, form=form,
                                                                  specialised=False),  # it records whole states
                       partial(_genalpha_run, form)) for form in ("RV", "EP", "Rxyz")]
    methods += [Method(f"RR ({eq})", "003", True, order, _rodrigues_system, partial(_rodrigues_run, rr.STEPS[eq]))
                for eq, order in (("23", 2), ("25", 2), ("27", 1))]
    methods.append(Method("EM (004)", "004", False, 2, directors.nontwisting_body, _em_run))
    return {m.name: m for m in methods}


#: Every method of the shoot-out by name, in the order of the book's chapters.
METHODS = _methods()


# -- diagnostics from body states ---------------------------------------------------------------------

def energy_scale(model: Model, states: BodyStates) -> float:
    """The scale of relative energy errors: ``max(|E₀|, max T)`` (a mechanism starting with
    ``E₀ = 0`` is measured against its kinetic energy)."""
    return max(abs(total_energy(model, states.at(0))[0]), kinetic_energy(model, states).max())


def energy_error(model: Model, states: BodyStates) -> np.ndarray:
    """``(E − E₀)/scale`` at every recorded instant (:func:`energy_scale`)."""
    energy = total_energy(model, states)
    return (energy - energy[0]) / energy_scale(model, states)


def conserved_momentum(model: Model, L) -> np.ndarray | None:
    """The part of the angular momentum ``L`` (shape (T, 3), about the world origin) that the model
    conserves: the whole vector without ground joints and gravity; with ground joints all at one
    point ``c``, about ``c`` (``L`` then must be about ``c``: the benchmarks' pivots sit at the
    origin), the whole vector without gravity and its component along gravity with it; ``None``
    for ground joints at different points (nothing conserved) or a free body under gravity."""
    grounds = {tuple(j.point_a) for j in model.joints if j.body_a is None}
    gravity = None if model.gravity is None or not np.any(model.gravity.g) else model.gravity.g
    if len(grounds) > 1 or (not grounds and gravity is not None):
        return None
    if grounds and np.any(grounds.pop()):
        raise NotImplementedError("conserved_momentum: ground joints away from the origin")
    L = np.asarray(L)
    return L if gravity is None else (L @ gravity / np.linalg.norm(gravity))[:, None]


def momentum_error(model: Model, states: BodyStates, L=None) -> np.ndarray | None:
    """Change of the conserved part (:func:`conserved_momentum`) of the description's angular
    momentum of ``states`` (or of ``L``, a scheme's own, shape (T, 3)) relative to its initial
    size (a momentum that starts at zero is measured against ``1 kg m²/s``), at every instant;
    ``None`` if the model conserves none."""
    part = conserved_momentum(model, angular_momentum(model, states) if L is None else L)
    if part is None:
        return None
    return np.abs(part - part[0]).max(axis=1) / max(np.abs(part[0]).max(), 1.0)


def rotation_defect(states: BodyStates) -> np.ndarray:
    """Largest ``|RᵀR − I|`` (entries) over the bodies at every instant: how far an attitude left SO(3)."""
    RtR = np.einsum("tnji,tnjk->tnik", states.rotation, states.rotation)
    return np.abs(RtR - np.eye(3)).max(axis=(1, 2, 3))


def joint_error(model: Model, states: BodyStates) -> np.ndarray:
    """Largest joint residual at position level at every instant (m or, for axes, dimensionless);
    zeros without joints."""
    return np.abs(constraint_residuals(model, states)).max(axis=1, initial=0.0)


def joint_rate_error(model: Model, states: BodyStates) -> np.ndarray:
    """Largest joint residual at velocity level at every instant; zeros without joints."""
    return np.abs(constraint_rates(model, states)).max(axis=1, initial=0.0)


def attitude_error(states: BodyStates, reference: BodyStates) -> float:
    """Largest entry of ``R − R_ref`` over the bodies at the last instant of both."""
    return float(np.abs(states.rotation[-1] - reference.rotation[-1]).max())


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


def work_precision(method: Method, model: Model, hs, t_end: float, error: Callable[[Run], float], *,
                   rtols=None) -> list[Point]:
    """Run ``method`` at every step size of ``hs`` (or, with ``rtols``, at every tolerance with the
    largest step ``hs[0]``) and measure ``error(run)`` at the end. One step is run first and not
    measured, so that no point pays for loading compiled kernels."""
    settings = [(hs[0], rtol) for rtol in rtols] if rtols is not None else [(h, None) for h in hs]
    method.run(model, hs[0], hs[0])
    points = []
    for h, rtol in settings:
        run = method.run(model, h, t_end, 0, rtol=rtol)
        points.append(Point(h, rtol, error(run) if run.ok else float("nan"), run.work.rhs_evaluations,
                            run.cpu_time, run.ok))
    return points


def largest_stable_step(method: Method, model: Model, hs, t_end: float, *,
                        energy_tolerance: float = 0.1) -> tuple[float, Run | None]:
    """The largest step of ``hs`` (tried from the largest down) with which ``method`` reaches
    ``t_end`` with the relative energy error (:func:`energy_error`) below ``energy_tolerance`` at
    every step, and that run; ``(nan, None)`` if none does."""
    for h in sorted(hs, reverse=True):
        run = method.run(model, h, t_end)
        if run.ok and np.abs(energy_error(model, run.states)).max() < energy_tolerance:
            return float(h), run
    return float("nan"), None
