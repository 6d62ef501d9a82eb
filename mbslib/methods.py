"""Every integrator of the book, and the one way to run it: :func:`solve`.

``solve(model, method, h, t_end)`` runs a coordinate-free description (:class:`mbslib.model.Model`)
with one method of :data:`METHODS`: the method builds its coordinates through its formulation
(:mod:`mbslib.formulations`), runs its integrator and maps the result back to body states. It
returns a :class:`~mbslib.trajectory.Trajectory`: the recorded instants ``t`` and the bodies'
poses and velocities there (``states``), the scheme's own coordinates and conserved quantities
(``own``), the counted work, the CPU time of the integration alone (no compilation: each method
compiles on a first, untimed step), the failure that ended it early, if any, and its ``health``:
what it kept of what its method claims (:func:`health`).

Every method takes the same arguments with the same meaning:

``h``
    the step size [s] (for a method with step-size control: the spacing of the recorded grid and
    the initial step);
``t_end``, ``t0``
    the horizon and the start [s]; ``t_end − t0`` must be a whole multiple of ``h``;
``record_every``
    record every so many steps (a positive integer; None: the start and the end only); the last
    state reached is always recorded;
``throw``
    raise the failure (:class:`~mbslib.newton.NewtonError`, :class:`~mbslib.trajectory.IntegrationError`)
    instead of returning the trajectory up to it;
``**options``
    what the method's own scheme takes (``Method.options``), e.g. ``rho_inf`` of
    generalized-α or ``rtol`` of DOPRI5; an option a method does not know is an error.

A method that cannot take a model raises :class:`MethodRefusal` naming the method, the part of the
model it cannot take and why; :func:`applicable` lists the methods that can run a model and
:func:`refusals` the reasons of the others.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial

import numpy as np

from mbslib import diagnostics
from mbslib.consistent import check_consistent
from mbslib.formulations import directors, lie_group
from mbslib.formulations.quaternions import QuaternionSystem, RotationSystem
from mbslib.formulations.rodrigues import BondedSpheresSystem, PivotedRodriguesSystem, RodriguesSystem
from mbslib.integrators import ggl, livens, nonholonomic_em
from mbslib.integrators import rodrigues_vi as rr
from mbslib.integrators.generalized_alpha import GeneralizedAlpha, NewtonSettings, integrate_genalpha
from mbslib.integrators.runge_kutta import integrate_explicit, paper_tolerances
from mbslib.integrators.tableaux import DOPRI5, RK44, RK67
from mbslib.model import Model
from mbslib.simulate import simulate, time_grid
from mbslib.studies.binder_torus import simulate_torus
from mbslib.systems import directors as director_systems
from mbslib.systems.rigid_bodies import principal_frame
from mbslib.trajectory import Health, Trajectory, Work


class MethodRefusal(ValueError):
    """A method that cannot take a model: ``method`` and ``reason`` (which names the body, joint
    or force of the model it cannot take, and why)."""

    def __init__(self, method: str, reason: str):
        self.method, self.reason = method, reason
        super().__init__(f"{method} cannot run this model: {reason}")


@dataclass(frozen=True)
class Method:
    """An integrator of the book with its formulation.

    Attributes
    ----------
    name : str
    chapter : str
        The chapter of its paper ("000" … "004").
    explicit : bool
    order : int
        Its order on a torque-free body (the GGL-VI drops to first order under a potential).
    keeps : frozenset of str, or callable ``model -> frozenset``
        What it claims to keep exactly on a model, of "energy", "momentum" and "joints" (joint
        residuals at position level, to the Newton tolerance): the rules of :func:`health`.
    build : callable ``model -> system``
        The formulation; raises ``ValueError`` or ``NotImplementedError`` with the reason when it
        cannot take the model.
    integrate : callable
        ``(model, system, h, n_steps, t0, record_every, **options) -> Trajectory``.
    options : frozenset of str
        The keyword options of its scheme that :func:`solve` passes on.
    adaptive : bool
        Step-size control.
    singularity : callable ``x -> (T,)``, optional
        The distance of its coordinates (the rows ``x``) from the singularity of their
        parametrisation, for the health rule "singularity".
    """

    name: str
    chapter: str
    explicit: bool
    order: int
    keeps: frozenset
    build: Callable = field(repr=False)
    integrate: Callable = field(repr=False)
    options: frozenset = frozenset()
    adaptive: bool = False
    singularity: Callable | None = field(default=None, repr=False)

    def kept(self, model: Model) -> frozenset:
        """What it claims to keep on ``model`` (``keeps``)."""
        return self.keeps(model) if callable(self.keeps) else self.keeps

    def system(self, model: Model):
        """The method's system for ``model``; :class:`MethodRefusal` if it cannot take it."""
        if not isinstance(model, Model):
            raise TypeError(f"model must be an mbslib.model.Model, got {type(model).__name__}")
        try:
            return self.build(model)
        except (ValueError, NotImplementedError) as reason:
            raise MethodRefusal(self.name, str(reason)) from reason


def _recorded(n_states: int, every: int) -> np.ndarray:
    """Indices of the recorded instants among ``n_states`` states: every ``every``-th and the last."""
    return np.unique(np.r_[np.arange(0, n_states, every), n_states - 1])


def _run(method, model, traj, states, own=None, x=None) -> Trajectory:
    """The trajectory of ``method`` on ``model`` from a driver's ``traj`` (its work, failure, CPU
    time and step size), with body ``states`` and the scheme's ``own`` quantities at ``states.t``."""
    x = traj.x if x is None else x
    return Trajectory(states.t, x, wall_time=traj.wall_time, cpu_time=traj.cpu_time, failure=traj.failure,
                      work=traj.work, h=traj.h, t_final=traj.t_final, max_iterations=traj.max_iterations,
                      method=method, model=model, states=states, own={"x": x, **(own or {})})


# -- implicit schemes driven by mbslib.simulate --------------------------------------------------

def _simulated(name, model, step, x0, h, n_steps, t0, every, states_of, own=None) -> Trajectory:
    """Run ``step`` with :func:`mbslib.simulate.simulate`; ``own(x, states)`` gives the scheme's own
    energy and momentum at the recorded states."""
    traj = simulate(step, x0, h, t0 + n_steps * h, t0=t0, throw=False)
    keep = _recorded(len(traj.t), every)
    x = traj.x[keep]
    states = states_of(traj.t[keep], x)
    return _run(name, model, traj, states, {} if own is None else own(x, states), x)


def _livens(step, model, system, h, n_steps, t0, every, name, **options):
    n = system.n

    def own(x, states):  # Livens' generalized energy (000, eq. 74) and Σ φ × p_φ + ½ E(q) p_q
        return {"energy": livens.energies(system, x)["E"],
                "momentum": np.array([system.angular_momentum(y[:n], y[n:2 * n]) for y in x])}

    return _simulated(name, model, partial(step, system, **options), system.initial_state(), h, n_steps, t0, every,
                      lambda t, x: system.body_states(t, x[:, :n], x[:, 2 * n:3 * n]), own)


def _about_origin(rotation, L, states):
    """A :class:`RotationSystem`'s ``½ E(q) p`` (about its pivot, turned world) about the world
    origin: ``Wᵀ L + c × m v`` (``c`` the pivot; a free body turns about its centre ``x``)."""
    body = rotation.model.bodies[0]
    point = states.position[:, 0] if rotation.pivot is None else rotation.pivot.point_a
    return L @ rotation.W + np.cross(point, body.mass * states.velocity[:, 0])


def _null_eml(model, rotation, h, n_steps, t0, every, name, **options):
    system = rotation.system

    def own(x, states):
        L = np.array([system.angular_momentum(y[:4], y[4:8]) for y in x])
        return {"energy": livens.energies(system, x)["E"], "momentum": _about_origin(rotation, L, states)}

    return _simulated(name, model, partial(livens.step_null_eml, system, **options), rotation.initial_state(), h,
                      n_steps, t0, every, lambda t, x: rotation.body_states(t, x[:, :4], x[:, 8:12]), own)


def _hamiltonian(step, model, rotation, h, n_steps, t0, every, name, **options):
    system = rotation.system

    def states_of(t, x):
        v = np.array([livens.velocity_from_momentum(system, y[:4], y[4:8]) for y in x])
        return rotation.body_states(t, x[:, :4], v)

    def own(x, states):  # H = ½ p·M₄⁻¹p + V and ½ E(q) p
        L = np.array([system.angular_momentum(y[:4], y[4:8]) for y in x])
        return {"energy": np.array([livens.hamiltonian(system, y[:4], y[4:8]) for y in x]),
                "momentum": _about_origin(rotation, L, states)}

    x0 = livens.hamiltonian_initial_state(system, rotation.initial_state())
    return _simulated(name, model, partial(step, system, **options), x0, h, n_steps, t0, every, states_of, own)


def _ggl(model, system, h, n_steps, t0, every, name, **options):
    q0, qdot0 = directors.initial_coordinates(model)

    def states_of(t, x):
        parts = ggl.split(system, x)
        return directors.body_states(model, t, parts.q, parts.p / system.M)

    def own(x, states):  # ½ p·M⁻¹p + V and Σ q_A × p_A
        parts = ggl.split(system, x)
        return {"energy": system.kinetic_from_p(parts.p) + system.V(parts.q),
                "momentum": director_systems.angular_momentum(parts.q, parts.p, 3)}

    # sparse: the Newton update eliminates q, p, v body by body in compiled code (ggl.WithoutQPV), also
    # for the single bodies, where it is about twice as fast as the dense LU of all unknowns
    step = partial(ggl.step_ggl, system, **{"sparse": True, **options})
    return _simulated(name, model, step, ggl.initial_vector(system, q0, qdot0), h, n_steps, t0, every, states_of, own)


def _em(model, built, h, n_steps, t0, every, name, **options):
    body, x0 = built

    def own(x, states):  # ½ q̇·M q̇ and Σ d_i × π^i, about the centre: shifted to the origin
        kept = nonholonomic_em.invariants(body, x)
        mv = model.bodies[0].mass * states.velocity[:, 0]
        return {"energy": kept["K"], "momentum": kept["pi"] + np.cross(states.position[:, 0], mv)}

    step = partial(nonholonomic_em.step_em, body, **{"nonholonomic": False, **options})
    return _simulated(name, model, step, x0, h, n_steps, t0, every,
                      lambda t, x: directors.nontwisting_body_states(model, t, x), own)


# -- compiled schemes of paper 002 ----------------------------------------------------------------

def _genalpha(form, model, absolute, h, n_steps, t0, every, name, rho_inf=0.9, newton=NewtonSettings()):
    x0 = lie_group.initial_state(model, form)
    traj = integrate_genalpha(absolute, x0, h, t0 + n_steps * h, t0=t0, record_every=every,
                              method=GeneralizedAlpha(rho_inf), newton=newton)
    rows, t = traj.x, traj.t
    if traj.work.steps % every:  # the last state reached
        rows, t = np.vstack([rows, np.r_[traj.q, traj.v]]), np.r_[t, traj.t_final]
    n = absolute.n
    return _run(name, model, traj, lie_group.body_states(model, form, t, rows[:, :n], rows[:, n:]), x=rows)


def _absolute(form: str, model: Model):
    """The model in absolute coordinates ``form`` (the general kernel: it records whole states);
    Tait–Bryan angles refuse a body that starts at their singularity (gimbal lock)."""
    if form == "Rxyz":
        for body in model.bodies:
            R = body.rotation @ principal_frame(body.inertia)[1]  # the attitude the angles describe
            if np.sqrt(max(0.0, 1.0 - R[0, 2] ** 2)) < 1e-6:
                raise ValueError(f"body {body.name!r} starts at the singularity of its Tait–Bryan angles (gimbal "
                                 "lock: the second angle is ±90°); turn it, or use rotation vectors or Euler "
                                 "parameters")
    return lie_group.absolute_model(model, form, specialised=False)


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


def _rkmk(tableau, model, system, h, n_steps, t0, every, name, rtol=None, atol=None, h_max=None):
    """Fixed steps (RK44, RK67) or step-size control (DOPRI5), run in segments of ``every`` steps
    of size ``h`` so that every recorded state is whole. With step-size control the controller's
    steps are at most ``h_max`` (default: the segment), start at ``h``, and meet the tolerances
    ``rtol`` and ``atol`` (default paper 002's for ``h``,
    :func:`~mbslib.integrators.runge_kutta.paper_tolerances`; ``atol = 10⁻² rtol`` with ``rtol``
    alone)."""
    about_pivot = bool(model.joints)  # see _rkmk_system
    x, n = lie_group.initial_state(model, "RV", about_pivot=about_pivot), system.n
    options = {}
    if tableau.adaptive:
        if rtol is None:
            rtol, atol = paper_tolerances(tableau, h, n_steps * h)
        options = dict(rtol=rtol, atol=1e-2 * rtol if atol is None else atol)
    elif (rtol, atol, h_max) != (None, None, None):
        raise ValueError(f"rtol, atol, h_max: {name} has no step-size control")
    rows, times, work, cpu, wall, failure = [x], [t0], Work(), 0.0, 0.0, None
    for start in range(0, n_steps, every):
        span = min(every, n_steps - start) * h
        if tableau.adaptive:
            options["h_max"] = span if h_max is None else min(h_max, span)
        result = integrate_explicit(system, x, tableau, h, times[-1] + span, t0=times[-1], **options)
        cpu, wall, work = cpu + result.cpu_time, wall + result.wall_time, work + result.work
        if result.failure is not None:
            failure = result.failure
            break
        x = np.r_[result.q, result.v]
        rows.append(x)
        times.append(times[-1] + span)
    rows = np.array(rows)
    states = lie_group.body_states(model, "RV", times, rows[:, :n], rows[:, n:], about_pivot=about_pivot)
    traj = Trajectory(states.t, rows, wall_time=wall, cpu_time=cpu, failure=failure, work=work, h=float(h))
    return _run(name, model, traj, states)


# -- explicit variational maps of paper 003 --------------------------------------------------------

def _rodrigues_system(model: Model):
    """Bonded spheres (the torus's compiled loop) with bonds or contacts, one body on a pivot with
    joints, else free spherical bodies."""
    if model.bonds or model.contacts:
        return BondedSpheresSystem(model)
    return PivotedRodriguesSystem(model) if model.joints else RodriguesSystem(model)


def _rodrigues(equation, model, system, h, n_steps, t0, every, name):
    if isinstance(system, BondedSpheresSystem):  # one compiled loop, the torus's
        traj = simulate_torus(system, equation, h, t0 + n_steps * h, t0=t0, record_every=every, store_states=True)
        stored, t = traj.extras["states"], traj.t
        if traj.work.steps % every and "final_state" in traj.extras:  # the last state reached, off the grid
            stored, t = np.concatenate([stored, traj.extras["final_state"][None]]), np.r_[t, traj.t_final]
        x = stored.reshape(len(stored), -1)
        return _run(name, model, traj, system.body_states(t, x), x=x)
    traj = rr.run(rr.STEPS[equation], system, system.initial_state(), h, t0 + n_steps * h, t0=t0)
    keep = _recorded(len(traj.t), every)  # a failure: h|p| ≥ 1, the increment (16) does not exist
    return _run(name, model, traj, system.body_states(traj.t[keep], traj.x[keep]), x=traj.x[keep])


def _tait_bryan_distance(x) -> np.ndarray:
    """``min |cos φ₂|`` over the bodies of Tait–Bryan coordinates ``x = [q; v]`` (6 per body in
    ``q``: centre, then the angles φ₁, φ₂, φ₃): 0 at gimbal lock."""
    return np.abs(np.cos(x[:, 4:x.shape[1] // 2:6])).min(axis=1)


def _livens_keeps(energy: bool, model: Model) -> frozenset:
    """EML and REML keep energy, MPL does not; all three hold the joints, and keep angular momentum
    on free bodies only: a joint's midpoint constraint force changes it by a term that vanishes with
    the constraint residual at the midpoint, O(h²) (chapter 000, Fig. 16; the tutorial's exercise)."""
    return frozenset({"joints"} | ({"energy"} if energy else set()) | (set() if model.joints else {"momentum"}))


def _methods() -> dict[str, Method]:
    energy, momentum, joints = "energy", "momentum", "joints"
    newton_options = frozenset({"jacobian"})
    methods = [Method(name, "000", False, 2, partial(_livens_keeps, keeps_energy), QuaternionSystem,
                      partial(_livens, step), newton_options | {"sparse"})
               for name, step, keeps_energy in (("EML", livens.step_eml, True), ("REML", livens.step_reml, True),
                                                ("MPL", livens.step_mpl, False))]
    methods += [Method("Null-EML", "000", False, 2, frozenset({energy, momentum}), RotationSystem, _null_eml,
                       newton_options),
                Method("EMH", "000", False, 2, frozenset({energy, momentum}), RotationSystem,
                       partial(_hamiltonian, livens.step_emh)),
                Method("MPH", "000", False, 2, frozenset(), RotationSystem,  # on the sphere: not the midpoint rule

                       partial(_hamiltonian, livens.step_mph), frozenset({"inverse"})),
                Method("GGL-VI", "001", False, 2, frozenset({momentum, joints}), directors.director_system, _ggl,
                       frozenset({"variant", "tol", "sparse"}))]
    methods += [Method(f"RKMK {tableau.name}", "002", True, tableau.order, frozenset(), _rkmk_system,
                       partial(_rkmk, tableau), frozenset({"rtol", "atol", "h_max"}) if tableau.adaptive
                       else frozenset(), adaptive=tableau.adaptive) for tableau in (RK44, RK67, DOPRI5)]
    methods += [Method(f"gen-α {form}", "002", False, 2, frozenset({joints}),
                       partial(_absolute, form), partial(_genalpha, form), frozenset({"rho_inf", "newton"}),
                       singularity=_tait_bryan_distance if form == "Rxyz" else None)
                for form in ("RV", "EP", "Rxyz")]
    methods += [Method(f"RR ({eq})", "003", True, order, frozenset({momentum}), _rodrigues_system,
                       partial(_rodrigues, eq)) for eq, order in (("23", 2), ("25", 2), ("27", 1))]
    methods.append(Method("EM (004)", "004", False, 2, frozenset({energy, momentum}), directors.nontwisting_body,
                          _em, frozenset({"load_rule", "unit_length", "rtol"})))
    return {m.name: m for m in methods}


#: Every method of the book by name, in the order of the book's chapters.
METHODS = _methods()


def method_named(name: str) -> Method:
    """The method ``name`` of :data:`METHODS`; ``ValueError`` listing the names otherwise."""
    if isinstance(name, Method):
        return name
    if name not in METHODS:
        raise ValueError(f"method must be one of {list(METHODS)}, got {name!r}")
    return METHODS[name]


def refusals(model: Model) -> dict[str, str]:
    """Why each method of :data:`METHODS` that cannot run ``model`` refuses it, by name."""
    out = {}
    for name, method in METHODS.items():
        try:
            method.system(model)
        except MethodRefusal as refusal:
            out[name] = refusal.reason
    return out


def applicable(model: Model) -> list[str]:
    """The names of the methods that can run ``model``, in the order of :data:`METHODS`."""
    refused = refusals(model)
    return [name for name in METHODS if name not in refused]


# -- health ---------------------------------------------------------------------------------------

#: The rules of :func:`health` and their thresholds (``solve(..., health_thresholds=...)`` replaces them).
HEALTH_RULES = {
    # the quantities a scheme keeps in its own coordinates (Method.keeps), exactly up to its Newton
    # tolerance: relative drift of its own energy (against the description's energy scale) and momentum
    "own": 1e-6,
    # the description's energy of the body states, for a method that keeps energy, on a conservative
    # model: max |E − E₀|/scale (diagnostics.energy_error); O(h²) on a healthy run
    "energy": 1e-2,
    # the description's conserved angular momentum, for a method that keeps momentum: relative change
    "momentum": 1e-2,
    # joint residuals at position level, for a method that holds the joints: metres (axes: radians)
    "joints": 1e-6,
    # joint residuals at velocity level at the nodes, for every method on a jointed model, relative to
    # the bodies' typical point speed (_speed_scale): a scheme that holds the velocity constraint only between
    # the nodes (EML, REML: chapter 000, "the nodal-velocity mode") or at position level only
    # (index-3 generalized-α) keeps it O(h²) when healthy
    "joint_rates": 1e-2,
    # every method: max |RᵀR − I| (an attitude left SO(3))
    "rotation": 1e-6,
    # a parametrisation near its singularity: |cos φ₂| of Tait–Bryan angles (gimbal lock at 0; 0.05 is
    # 2.9° from it). Seen at the recorded instants only: record every step to see a pass through it
    "singularity": 5e-2,
}


def _first(values, threshold, t, below: bool = False) -> str:
    k = int(np.argmax(values < threshold if below else values > threshold))
    return f"first at t = {t[k]:.6g} s (record {k})"


def _speed_scale(model: Model, states) -> float:
    """A velocity scale of the run [m/s]: the median over the recorded instants of the largest
    point speed ``|v| + |Ω| r`` of the bodies, ``r`` the radius of gyration ``√(tr J / 2m)`` (the
    median, so that a growing mode does not raise the scale it is measured against)."""
    r = np.array([np.sqrt(np.trace(b.inertia) / (2.0 * b.mass)) for b in model.bodies])
    speed = np.linalg.norm(states.velocity, axis=-1) + r * np.linalg.norm(states.angular_velocity, axis=-1)
    return float(np.median(speed.max(axis=1)))


def health(traj: Trajectory, method: Method, thresholds: dict | None = None) -> Health:
    """What ``traj`` kept of what ``method`` claims (``Method.keeps``), with a warning for each
    rule of :data:`HEALTH_RULES` it broke, naming the rule, the value, the threshold and the first
    recorded instant past it.

    The description's quantities come from the body states (:mod:`mbslib.diagnostics`): the energy
    rule applies to conservative models (no dampers or applied loads), the momentum rules to models
    that conserve a component (:func:`~mbslib.diagnostics.conserved_axes`). Only the recorded
    instants are seen: a rule broken between two records is not.
    """
    rules = {**HEALTH_RULES, **(thresholds or {})}
    unknown = set(rules) - set(HEALTH_RULES)
    if unknown:
        raise ValueError(f"health_thresholds: no rule {', '.join(sorted(unknown))} (rules: {', '.join(HEALTH_RULES)})")
    model, states, t, name = traj.model, traj.states, traj.t, method.name
    energy = np.abs(diagnostics.energy_error(model, states))
    momentum = diagnostics.momentum_error(model, states)
    joint, rate = diagnostics.joint_error(model, states), diagnostics.joint_rate_error(model, states)
    rotation = diagnostics.rotation_defect(states)
    conservative = not (model.dampers or model.loads or any(s.damping for s in model.springs))
    found = []

    def rule(key, values, what, below=False):
        limit = rules[key]
        worst = values.min() if below else values.max()
        if (worst < limit) if below else (worst > limit):
            found.append(f"{key}: {what} {worst:.2g} ({'<' if below else '>'} {limit:g}), "
                         f"{_first(values, limit, t, below)}")

    keeps = method.kept(model)
    if "energy" in keeps and conservative:
        rule("energy", energy, f"{name} keeps energy, but the description's energy changed by")
        if "energy" in traj.own:
            own = np.abs(traj.own["energy"] - traj.own["energy"][0]) / diagnostics.energy_scale(model, states)
            rule("own", own, f"{name}'s own energy drifted by")
    if "momentum" in keeps and momentum is not None:
        rule("momentum", momentum, f"{name} keeps angular momentum, but its conserved part changed by")
        if "momentum" in traj.own:
            rule("own", diagnostics.momentum_error(model, states, traj.own["momentum"]),
                 f"{name}'s own angular momentum drifted by")
    if "joints" in keeps:
        rule("joints", joint, f"{name} holds the joints, but a residual reached")
    if model.joints:
        rule("joint_rates", rate / max(_speed_scale(model, states), 1e-300),
             "the nodal velocities violate the joints (relative to the bodies' typical speed) by")
    rule("rotation", rotation, "an attitude left SO(3) by")
    if method.singularity is not None:
        rule("singularity", method.singularity(traj.x), f"{name}'s coordinates near their singularity:",
             below=True)
    return Health(float(energy.max()), None if momentum is None else float(momentum.max()), float(joint.max()),
                  float(rate.max()), float(rotation.max()), tuple(found))


# -- the entry point --------------------------------------------------------------------------------

_COMPILED: set = set()  # (method, model structure) pairs whose kernels this process has compiled


def _structure(model: Model) -> tuple:
    """What decides which kernels a method compiles: the numbers and kinds of the model's parts."""
    return (model.n_bodies, tuple(j.kind for j in model.joints), model.gravity is None,
            *(len(getattr(model, name)) for name in ("springs", "loads", "dampers", "bonds", "contacts")))


def solve(model: Model, method: str, h: float, t_end: float, *, t0: float = 0.0, record_every: int | None = 1,
          throw: bool = True, health_thresholds: dict | None = None, **options) -> Trajectory:
    """Run ``model`` with ``method`` (a name of :data:`METHODS`) from ``t0`` to ``t_end`` with step ``h``.

    Parameters
    ----------
    model : Model
    method : str
    h : float
        Step size [s], positive; ``t_end − t0`` a whole multiple of it. For a method with step-size
        control: the spacing of the recorded grid and the initial step (its steps stay within one
        grid interval, or ``h_max``: it has no dense output).
    t_end, t0 : float
        Horizon and start [s].
    record_every : int or None
        Record the state every so many steps (the last state reached is always recorded); None:
        the start and the end only.
    throw : bool
        Raise the failure that ends a run early instead of returning the trajectory up to it.
    health_thresholds : dict, optional
        Thresholds that replace those of :data:`HEALTH_RULES`.
    **options
        Options of the method's scheme (``Method.options``).

    Returns
    -------
    Trajectory
        With ``states``, ``own``, ``work``, ``cpu_time`` (integration alone), ``failure`` and
        ``health``; a run that breaks a health rule also issues a :class:`RunHealthWarning`.

    Raises
    ------
    MethodRefusal
        If the method cannot take the model.
    InconsistentStart
        If the model's initial state violates a joint (:func:`mbslib.consistent.check_consistent`;
        :func:`~mbslib.consistent.make_consistent` corrects it).
    NewtonError, IntegrationError
        With ``throw=True``, the failure that ended the run early (step, time, residual history).
    """
    m = method_named(method)
    n_steps = time_grid(h, t_end, t0=t0, record_every=record_every)
    record_every = n_steps if record_every is None else int(record_every)
    unknown = set(options) - m.options
    if unknown:
        raise TypeError(f"{m.name} takes no option {', '.join(sorted(unknown))} (its options: "
                        f"{', '.join(sorted(m.options)) or 'none'})")
    system = m.system(model)
    check_consistent(model)
    h, t0 = float(h), float(t0)
    key = (m.name, _structure(model))
    if key not in _COMPILED:  # one untimed step compiles (or loads) the kernels
        m.integrate(model, system, h, 1, t0, 1, m.name, **options)
        _COMPILED.add(key)
    traj = m.integrate(model, system, h, n_steps, t0, record_every, m.name, **options)
    traj = replace(traj, health=health(traj, m, health_thresholds))
    if throw and traj.failure is not None:
        raise traj.failure
    for warning in traj.health.warnings:
        warnings.warn(RunHealthWarning(f"{m.name}: {warning}"), stacklevel=2)
    return traj


class RunHealthWarning(UserWarning):
    """A run that reached its horizon but lost what its method claims to keep (:func:`health`)."""

