"""The models of paper 002 in Exudyn, the authors' multibody code (independent cross-check).

Holzinger, Arnold & Gerstmayr (2024) ran every example in Exudyn. This module builds the heavy
top of their Sect. 4.1 (free and with a spherical joint), our rotor surrogate (Sect. 4.2), the
slider–crank (Sect. 4.3) and our Puma 560 in absolute coordinates (Sect. 4.4) with Exudyn's
rigid-body nodes — ``"RV"`` (rotation vector, Lie group node), ``"EP"`` (Euler parameters) and
``"Rxyz"`` (Tait–Bryan angles) — and runs one of its solvers with the paper's settings (spec
§2.13, §5 A24: the Brüls–Cardona variant of the Lie group generalized-α method,
``lieGroupSimplifiedKinematicRelations=True``, and ``T_exp`` neglected unless asked for). The
builders return an assembled :class:`ExudynSystem` that :func:`solve` runs (again and again, from
its initial state: the benchmarks time the solver alone). Exudyn is imported only when a function
here is called; if it is missing, :class:`ExudynMissing` says how to install it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from mbslib.model import Model
from mbslib.simulate import time_grid
from mbslib.systems.lie_group_mbs import HeavyTop, Rotor
from mbslib.systems.puma560 import Puma560, reference_numba
from mbslib.systems.slider_crank import SliderCrank
from mbslib.trajectory import Trajectory, Work


class ExudynMissing(ImportError):
    """Exudyn is not installed."""


def _exudyn():
    try:
        import exudyn
        import exudyn.utilities as eu
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ExudynMissing(
            "this cross-check needs Exudyn (the paper's code): pip install exudyn==1.13.6"
        ) from exc
    return exudyn, eu


def exudyn_available() -> tuple[bool, str]:
    """``(True, version)`` when Exudyn can be imported, else ``(False, how to install it)``."""
    try:
        exudyn, _ = _exudyn()
    except ExudynMissing as err:
        return False, str(err)
    return True, exudyn.__version__


def _settings(exu, n_steps: int, t_end: float, *, use_texp: bool = False, modified_newton: bool = False,
              sparse: bool = False):
    """Exudyn settings shared by every run: fixed step, no output files, dense (or ``sparse``)
    linear solver, and the paper's variant of Lie group generalized-α (Brüls–Cardona simplified
    kinematic relations, ρ∞ = 0.9, consistent initial accelerations, ``T_exp`` kept or
    neglected)."""
    s = exu.SimulationSettings()
    s.timeIntegration.numberOfSteps = n_steps
    s.timeIntegration.endTime = t_end
    s.timeIntegration.verboseMode = 0
    s.timeIntegration.adaptiveStep = False
    s.solution.file.write = False
    s.solution.sensors.writePeriod = t_end
    ga = s.timeIntegration.generalizedAlpha
    ga.spectralRadius = 0.9
    ga.computeInitialAccelerations = True
    ga.lieGroupSimplifiedKinematicRelations = True
    ga.lieGroupAddTangentOperator = use_texp
    s.timeIntegration.newton.useModifiedNewton = modified_newton
    s.linearSolver.solverType = exu.LinearSolverType.EigenSparse if sparse else exu.LinearSolverType.EXUdense
    return s


_NODE_TYPES = {
    "RV": "RotationRotationVector",
    "EP": "RotationEulerParameters",
    "Rxyz": "RotationRxyz",
}


@dataclass(frozen=True)
class ExudynSystem:
    """An assembled Exudyn model: its system container (kept alive with it), the system, and
    ``output(mbs)``, the values :func:`solve` reports (position and velocity of a body point, or
    joint coordinates and rates)."""

    container: object
    mbs: object
    output: Callable
    sparse: bool = False


def _body_point(exu, body: int, local) -> Callable:
    """``output`` of a body-fixed point: inertial position and velocity, shape (6,)."""
    local = np.asarray(local, dtype=float)
    out = exu.OutputVariableType

    def output(mbs):
        pos = mbs.GetObjectOutputBody(body, out.Position, localPosition=local)
        vel = mbs.GetObjectOutputBody(body, out.Velocity, localPosition=local)
        return np.concatenate([np.asarray(pos, dtype=float), np.asarray(vel, dtype=float)])

    return output


def _check_node(node: str) -> None:
    if node not in _NODE_TYPES:
        raise ValueError(f"node must be one of {sorted(_NODE_TYPES)}, got {node!r}")


def solve(system: ExudynSystem, solver: str = "GeneralizedAlpha", h: float = 1e-4, t_end: float = 1.0, *,
          use_texp: bool = False, modified_newton: bool = False) -> Trajectory:
    """Run an Exudyn solver on ``system`` from its initial state with fixed step ``h``.

    ``solver`` is an ``exudyn.DynamicSolverType`` name ("GeneralizedAlpha", "RK44", "RK67", ...);
    the explicit solvers eliminate the constraints and use the Lie group (RKMK) update.
    ``use_texp``, ``modified_newton``: generalized-α only, keep ``T_exp`` in the iteration
    matrix; modified Newton.

    Returns a :class:`~mbslib.trajectory.Trajectory` of one row: ``t = [t_end]``, ``x[0]`` the
    system's output there (:class:`ExudynSystem`: for the heavy top the position and velocity of
    its centre of mass, inertial frame), ``wall_time`` the seconds in Exudyn's solver, and the work
    Exudyn reports: ``work.steps`` and ``work.newton_iterations`` (0 for the explicit solvers).
    Exudyn reports no residual, iteration-matrix or factorisation counts: those fields of
    ``work`` are 0, meaning *not reported*, not *none done*.
    """
    exu, _ = _exudyn()
    if not hasattr(exu.DynamicSolverType, solver):
        raise ValueError(f"solver must be an exudyn.DynamicSolverType name, got {solver!r}")
    n_steps = time_grid(h, t_end)
    mbs = system.mbs
    s = _settings(exu, n_steps, t_end, use_texp=use_texp, modified_newton=modified_newton, sparse=system.sparse)
    start, start_cpu = time.perf_counter(), time.process_time()
    if solver == "GeneralizedAlpha":
        main = exu.MainSolverImplicitSecondOrder()
        main.SolveSystem(mbs, s)
        iterations = int(main.it.newtonStepsCount)
    else:
        s.timeIntegration.explicit.eliminateConstraints = True
        s.timeIntegration.explicit.useLieGroupIntegration = True
        exu.SolveDynamic(mbs, s, solverType=getattr(exu.DynamicSolverType, solver))
        iterations = 0
    wall, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    return Trajectory(np.array([float(t_end)]), system.output(mbs)[None, :], wall_time=wall, cpu_time=cpu,
                      work=Work(steps=n_steps, newton_iterations=iterations), h=float(h))


def heavy_top_system(node: str = "RV", *, constrained: bool = True, top: HeavyTop | None = None) -> ExudynSystem:
    """The heavy top with rotation parameters ``node`` ("RV", "EP" or "Rxyz"); the output point is
    its centre of mass.

    ``constrained``: True, body at its centre of mass with a spherical joint at the origin
    (Sect. 4.1.2). False: body referenced at the fixed point with inertia ``J_O``, weight applied
    at the centre of mass, translations fixed by coordinate constraints that the explicit
    solvers eliminate (Sect. 4.1.1, Exudyn's ``heavyTop.py``).
    """
    exu, eu = _exudyn()
    _check_node(node)
    top = HeavyTop() if top is None else top
    X, w0 = top.com, top.omega0
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    node_type = getattr(exu.NodeType, _NODE_TYPES[node])
    if constrained:
        inertia = eu.RigidBodyInertia(
            top.mass, top.inertia, com=np.zeros(3), inertiaTensorAtCOM=True
        )
        body = mbs.CreateRigidBody(
            inertia=inertia,
            referencePosition=X,
            initialVelocity=np.cross(w0, X),
            initialAngularVelocity=w0,
            gravity=top.gravity,
            nodeType=node_type,
        )
        ground = mbs.CreateGround()
        mbs.CreateSphericalJoint(itemNumbers=[ground, body], position=[0.0, 0.0, 0.0])
        local = np.zeros(3)
    else:
        # reference point at O with the inertia J_O about it and the weight applied at X, so the
        # mass matrix stays block diagonal (Exudyn's heavyTop.py; the explicit solver mishandles a
        # body whose centre of mass is offset from its reference point)
        J_O = top.inertia + top.mass * (X @ X * np.eye(3) - np.outer(X, X))
        inertia = eu.RigidBodyInertia(top.mass, J_O, com=np.zeros(3))
        body = mbs.CreateRigidBody(
            inertia=inertia,
            referencePosition=[0.0, 0.0, 0.0],
            initialAngularVelocity=w0,
            nodeType=node_type,
        )
        mbs.CreateForce(itemNumber=body, loadVector=top.mass * top.gravity, localPosition=X)
        node_number = mbs.GetObject(body)["nodeNumber"]
        ground_node = mbs.AddNode(eu.NodePointGround())
        m_ground = mbs.AddMarker(eu.MarkerNodeCoordinate(nodeNumber=ground_node, coordinate=0))
        for k in range(3):
            m_k = mbs.AddMarker(eu.MarkerNodeCoordinate(nodeNumber=node_number, coordinate=k))
            mbs.AddObject(eu.CoordinateConstraint(markerNumbers=[m_ground, m_k]))
        local = X
    mbs.Assemble()
    return ExudynSystem(SC, mbs, _body_point(exu, body, local))


def spherical_system(model: Model, node: str = "RV") -> ExudynSystem:
    """A :class:`mbslib.model.Model` of rigid bodies and spherical joints under gravity (such as
    the chain of :mod:`mbslib.systems.chain`) with Exudyn's sparse linear solver; the output point
    is the last body's centre of mass."""
    exu, eu = _exudyn()
    _check_node(node)
    if model.springs or model.loads or model.dampers or any(j.kind != "spherical" for j in model.joints):
        raise ValueError("model must have spherical joints only, and no springs, loads or dampers")
    gravity = np.zeros(3) if model.gravity is None else np.asarray(model.gravity.g, dtype=float)
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    ground = mbs.CreateGround()
    bodies = [mbs.CreateRigidBody(
        inertia=eu.RigidBodyInertia(b.mass, b.inertia, com=np.zeros(3), inertiaTensorAtCOM=True),
        referencePosition=b.position, referenceRotationMatrix=b.rotation, initialVelocity=b.velocity,
        initialAngularVelocity=b.rotation @ b.angular_velocity,  # global
        gravity=gravity, nodeType=getattr(exu.NodeType, _NODE_TYPES[node])) for b in model.bodies]
    for joint in model.joints:
        a, b = ground if joint.body_a is None else bodies[joint.body_a], model.bodies[joint.body_b]
        mbs.CreateSphericalJoint(itemNumbers=[a, bodies[joint.body_b]],
                                 position=b.position + b.rotation @ joint.point_b)
    mbs.Assemble()
    return ExudynSystem(SC, mbs, _body_point(exu, bodies[-1], np.zeros(3)), sparse=True)


def run_heavy_top(
    node: str = "RV",
    solver: str = "GeneralizedAlpha",
    h: float = 1e-4,
    t_end: float = 1.0,
    *,
    constrained: bool = True,
    use_texp: bool = False,
    modified_newton: bool = False,
    top: HeavyTop | None = None,
) -> Trajectory:
    """Simulate the heavy top in Exudyn; the trajectory's one row is the final centre-of-mass state
    (:func:`solve`).

    Parameters
    ----------
    node : {"RV", "EP", "Rxyz"}
        Rotation parametrisation of the rigid-body node.
    solver : str
        An ``exudyn.DynamicSolverType`` name: "GeneralizedAlpha", "RK44", "RK67", ...
    h, t_end : float
        Fixed step size and final time (s).
    constrained : bool
        With a spherical joint or about the fixed point (:func:`heavy_top_system`).
    use_texp, modified_newton : bool
        Generalized-α only: keep ``T_exp`` in the iteration matrix; modified Newton.
    """
    _exudyn()
    _check_node(node)
    return solve(heavy_top_system(node, constrained=constrained, top=top), solver, h, t_end,
                 use_texp=use_texp, modified_newton=modified_newton)


def rotor_system(node: str = "RV", rotor: Rotor | None = None) -> ExudynSystem:
    """The rotor surrogate (:class:`~mbslib.systems.lie_group_mbs.Rotor`): a rigid body at the
    origin spinning about its x axis, two ``CartesianSpringDamper`` s from the support points
    ``[∓L_L, 0, 0]`` to the same points on the ground and the inertial torque of eq. (44); the
    output point is the left support."""
    exu, eu = _exudyn()
    _check_node(node)
    rotor = Rotor() if rotor is None else rotor
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    body = mbs.CreateRigidBody(
        inertia=eu.RigidBodyInertia(rotor.mass, rotor.inertia, com=np.zeros(3), inertiaTensorAtCOM=True),
        referencePosition=[0.0, 0.0, 0.0],
        initialAngularVelocity=[rotor.spin, 0.0, 0.0],
        nodeType=getattr(exu.NodeType, _NODE_TYPES[node]),
    )
    ground = mbs.CreateGround()
    for sign in (-1.0, 1.0):
        s = [sign * rotor.support, 0.0, 0.0]
        mbs.CreateCartesianSpringDamper(itemNumbers=[ground, body], localPosition0=s, localPosition1=s,
                                        stiffness=[rotor.stiffness] * 3, damping=[rotor.damping] * 3)
    mbs.CreateTorque(itemNumber=body, loadVector=rotor.torque, bodyFixed=False)
    mbs.Assemble()
    return ExudynSystem(SC, mbs, _body_point(exu, body, [-rotor.support, 0.0, 0.0]))


def slider_crank_system(node: str = "Rxyz", crank: SliderCrank | None = None, *,
                        universal_rod_first: bool = True, rod_omega=None) -> ExudynSystem:
    """The slider–crank with Exudyn ``GenericJoint`` s in the global frame with the masks of the
    spec (paper Sect. 4.3); the output point is the slider's centre.

    ``universal_rod_first`` puts the rod first in the universal joint (Exudyn's rotation-z
    condition then crosses the rod's x axis with the slider's y axis, as in
    :mod:`mbslib.systems.slider_crank`); the other order crosses the slider's x axis with the
    rod's y axis, which jams for s > 0.283 m. ``rod_omega`` replaces the rod's initial angular
    velocity (global, rad/s; default: the one of the closed-form kinematics, consistent with the
    joints).
    """
    exu, eu = _exudyn()
    _check_node(node)
    crank = SliderCrank() if crank is None else crank
    x, R = crank.configuration(0.0)
    dx, om = crank.velocity_map(0.0)
    omegas = [R[i] @ (crank.omega0 * om[i]) for i in range(3)]  # global
    if rod_omega is not None:
        omegas[1] = np.asarray(rod_omega, dtype=float)
        if omegas[1].shape != (3,):
            raise ValueError(f"rod_omega must have shape (3,), got {omegas[1].shape}")
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    ground = mbs.CreateGround()
    bodies = []
    for i in range(3):
        inertia = eu.RigidBodyInertia(crank.masses()[i], np.diag(crank.inertias()[i]),
                                      com=np.zeros(3), inertiaTensorAtCOM=True)
        bodies.append(mbs.CreateRigidBody(
            inertia=inertia, referencePosition=x[i], referenceRotationMatrix=R[i],
            initialVelocity=crank.omega0 * dx[i],
            initialAngularVelocity=omegas[i],
            gravity=[0.0, 0.0, -crank.gravity], nodeType=getattr(exu.NodeType, _NODE_TYPES[node])))
    b_crank, b_rod, b_slider = bodies
    joints = [([ground, b_crank], np.asarray(crank.pivot), [1, 1, 1, 0, 1, 1]),
              ([b_crank, b_rod], crank.crank_point(0.0), [1, 1, 1, 0, 0, 0]),
              ([b_rod, b_slider] if universal_rod_first else [b_slider, b_rod], x[2],
               [1, 1, 1, 0, 0, 1]),
              ([ground, b_slider], x[2], [0, 1, 1, 1, 1, 1])]
    for items, pos, mask in joints:
        mbs.CreateGenericJoint(itemNumbers=items, position=pos, constrainedAxes=mask,
                               useGlobalFrame=True)
    mbs.Assemble()
    return ExudynSystem(SC, mbs, _body_point(exu, b_slider, np.zeros(3)))


def run_slider_crank(
    node: str = "Rxyz",
    h: float = 1e-3,
    t_end: float = 0.5,
    *,
    crank: SliderCrank | None = None,
    universal_rod_first: bool = True,
    rod_omega=None,
) -> tuple[float, float]:
    """Slider position at ``t_end`` and Newton iterations per step from Exudyn's generalized-α
    (the paper's Lie group variant with ``T_exp`` neglected, fixed step) on
    :func:`slider_crank_system`."""
    run = solve(slider_crank_system(node, crank, universal_rod_first=universal_rod_first, rod_omega=rod_omega),
                "GeneralizedAlpha", h, t_end)
    return float(run.x[-1, 0]), run.iterations_per_step


def puma_system(node: str = "RV", robot: Puma560 | None = None, *, profile: bool = True) -> ExudynSystem:
    """Our Puma 560 in absolute coordinates (:meth:`~mbslib.systems.puma560.Puma560.system`):
    six rigid bodies in their DH frames, a ``RevoluteJoint`` and a ``TorsionalSpringDamper`` (the
    PD controller) per joint about ``z_{k−1}`` at ``o_{k−1}``; the output point is the centre of
    mass of link 6.

    Exudyn measures a spring's angle from the initial pose, so its offset is ``φ_ref(t) − φ_init``
    and its velocity offset ``φ̇_ref(t)``. With ``profile`` they follow the bang–bang reference,
    set before every step by a Python pre-step function (as in Exudyn's serial-robot examples);
    without, the springs hold ``φ_goal`` from the start (constant offsets, no user function;
    :meth:`~mbslib.systems.puma560.Puma560.system` with ``profile=False``).
    """
    exu, eu = _exudyn()
    _check_node(node)
    robot = Puma560() if robot is None else robot
    phi0 = np.deg2rad(np.asarray(robot.phi_init_deg, dtype=float))
    goal = np.deg2rad(np.asarray(robot.phi_goal_deg, dtype=float))
    R, o = robot.link_frames(phi0)
    coms = robot.link_coms(phi0)
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    ground = mbs.CreateGround()
    parent, springs = ground, []
    for k in range(6):
        body = mbs.CreateRigidBody(
            inertia=eu.RigidBodyInertia(float(robot.masses[k]), np.diag(robot.inertias[k]), com=np.zeros(3),
                                        inertiaTensorAtCOM=True),
            referencePosition=coms[k], referenceRotationMatrix=R[k],
            gravity=[0.0, 0.0, -float(robot.gravity)], nodeType=getattr(exu.NodeType, _NODE_TYPES[node]))
        pivot = o[k - 1] if k > 0 else np.zeros(3)
        axis = R[k - 1][:, 2] if k > 0 else np.array([0.0, 0.0, 1.0])
        mbs.CreateRevoluteJoint(itemNumbers=[parent, body], position=pivot, axis=axis, useGlobalFrame=True)
        springs.append(mbs.CreateTorsionalSpringDamper(
            itemNumbers=[parent, body], position=pivot, axis=axis, stiffness=float(robot.stiffness[k]),
            damping=float(robot.damping[k]), offset=0.0 if profile else float(goal[k] - phi0[k]),
            useGlobalFrame=True))
        parent = body
    if profile:
        P = robot.params()

        def pre_step(mbs, t):
            ref, rate, _ = reference_numba(P, t)
            for k, spring in enumerate(springs):
                mbs.SetObjectParameter(spring, "offset", float(ref[k] - phi0[k]))
                mbs.SetObjectParameter(spring, "velocityOffset", float(rate[k]))
            return True

        mbs.SetPreStepUserFunction(pre_step)
    mbs.Assemble()
    return ExudynSystem(SC, mbs, _body_point(exu, parent, np.zeros(3)))


def puma_tree_system(robot: Puma560 | None = None) -> ExudynSystem:
    """Our Puma 560 in joint coordinates as an Exudyn ``KinematicTree`` (built by
    ``exudyn.robotics.Robot`` from the standard DH table, link masses, centres of mass and
    inertias) with its joint PD control holding ``φ_goal`` from the start (the step command of
    :func:`puma_system` with ``profile=False``); the output is ``[φ; φ̇]``, shape (12,)."""
    exu, eu = _exudyn()
    from exudyn import robotics

    robot = Puma560() if robot is None else robot
    model = robotics.Robot(gravity=[0.0, 0.0, -float(robot.gravity)])
    for k in range(6):
        model.AddLink(robotics.RobotLink(
            mass=float(robot.masses[k]), COM=np.asarray(robot.coms[k], dtype=float),
            inertia=np.diag(robot.inertias[k]), jointType="Rz",
            localHT=robotics.StdDH2HT([0.0, robot.dh_d[k], robot.dh_a[k], robot.dh_alpha[k]]),
            PDcontrol=(float(robot.stiffness[k]), float(robot.damping[k]))))
    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    tree = model.CreateKinematicTree(mbs)
    node, obj = tree["nodeGeneric"], tree["objectKinematicTree"]
    mbs.SetNodeParameter(node, "initialCoordinates", np.deg2rad(np.asarray(robot.phi_init_deg, dtype=float)))
    mbs.SetObjectParameter(obj, "jointPositionOffsetVector", np.deg2rad(np.asarray(robot.phi_goal_deg, dtype=float)))
    mbs.Assemble()
    out = exu.OutputVariableType

    def output(mbs):
        return np.concatenate([np.asarray(mbs.GetNodeOutput(node, out.Coordinates), dtype=float),
                               np.asarray(mbs.GetNodeOutput(node, out.Coordinates_t), dtype=float)])

    return ExudynSystem(SC, mbs, output)
