"""The heavy top of paper 002 in Exudyn, the authors' multibody code (independent cross-check).

Holzinger, Arnold & Gerstmayr (2024) ran every example in Exudyn. This module builds the heavy
top of their Sect. 4.1 with Exudyn's rigid-body nodes — ``"RV"`` (rotation vector, Lie group
node), ``"EP"`` (Euler parameters) and ``"Rxyz"`` (Tait–Bryan angles) — and runs one of its
solvers with the paper's settings (spec §2.13, §5 A24: the Brüls–Cardona variant of the Lie
group generalized-α method, ``lieGroupSimplifiedKinematicRelations=True``, and ``T_exp``
neglected unless asked for). Exudyn is imported only when a function here is called; if it is
missing, :class:`ExudynMissing` says how to install it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from mbslib.simulate import n_steps_for
from mbslib.systems.lie_group_mbs import HeavyTop
from mbslib.systems.slider_crank import SliderCrank


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


def _settings(exu, n_steps: int, t_end: float, *, use_texp: bool = False, modified_newton: bool = False):
    """Exudyn settings shared by every run: fixed step, no output files, dense linear solver, and
    the paper's variant of Lie group generalized-α (Brüls–Cardona simplified kinematic
    relations, ρ∞ = 0.9, consistent initial accelerations, ``T_exp`` kept or neglected)."""
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
    s.linearSolver.solverType = exu.LinearSolverType.EXUdense
    return s


_NODE_TYPES = {
    "RV": "RotationRotationVector",
    "EP": "RotationEulerParameters",
    "Rxyz": "RotationRxyz",
}


@dataclass(frozen=True)
class ExudynRun:
    """Outcome of :func:`run_heavy_top`.

    Attributes
    ----------
    com : ndarray, shape (6,)
        Centre-of-mass position and velocity at the final time (inertial frame).
    n_steps : int
    newton_iterations : int
        Total Newton iterations (0 for explicit solvers).
    wall_time : float
        Seconds spent in Exudyn's solver.
    """

    com: np.ndarray
    n_steps: int
    newton_iterations: int
    wall_time: float

    @property
    def time_per_step(self) -> float:
        return self.wall_time / self.n_steps


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
) -> ExudynRun:
    """Simulate the heavy top in Exudyn and return the final centre-of-mass state.

    Parameters
    ----------
    node : {"RV", "EP", "Rxyz"}
        Rotation parametrisation of the rigid-body node.
    solver : str
        An ``exudyn.DynamicSolverType`` name: "GeneralizedAlpha", "RK44", "RK67", ...
    h, t_end : float
        Fixed step size and final time (s).
    constrained : bool
        True: body at its centre of mass with a spherical joint at the origin (Sect. 4.1.2).
        False: body referenced at the fixed point with inertia ``J_O``, weight applied at the
        centre of mass, translations fixed by coordinate constraints that the explicit solvers
        eliminate (Sect. 4.1.1, Exudyn's ``heavyTop.py``).
    use_texp, modified_newton : bool
        Generalized-α only: keep ``T_exp`` in the iteration matrix; modified Newton.
    """
    exu, eu = _exudyn()
    if node not in _NODE_TYPES:
        raise ValueError(f"node must be one of {sorted(_NODE_TYPES)}, got {node!r}")
    if not hasattr(exu.DynamicSolverType, solver):
        raise ValueError(f"solver must be an exudyn.DynamicSolverType name, got {solver!r}")
    top = HeavyTop() if top is None else top
    n_steps = n_steps_for(h, t_end)
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
    s = _settings(exu, n_steps, t_end, use_texp=use_texp, modified_newton=modified_newton)
    solver_type = getattr(exu.DynamicSolverType, solver)
    start = time.perf_counter()
    if solver == "GeneralizedAlpha":
        main = exu.MainSolverImplicitSecondOrder()
        main.SolveSystem(mbs, s)
        iterations = int(main.it.newtonStepsCount)
    else:
        s.timeIntegration.explicit.eliminateConstraints = True
        s.timeIntegration.explicit.useLieGroupIntegration = True
        exu.SolveDynamic(mbs, s, solverType=solver_type)
        iterations = 0
    wall = time.perf_counter() - start
    out = exu.OutputVariableType
    pos = np.asarray(mbs.GetObjectOutputBody(body, out.Position, localPosition=local), dtype=float)
    vel = np.asarray(mbs.GetObjectOutputBody(body, out.Velocity, localPosition=local), dtype=float)
    return ExudynRun(np.concatenate([pos, vel]), n_steps, iterations, wall)


def run_slider_crank(
    node: str = "Rxyz",
    h: float = 1e-3,
    t_end: float = 0.5,
    *,
    crank: SliderCrank | None = None,
    universal_rod_first: bool = True,
    rod_omega=None,
) -> tuple[float, float]:
    """Slider position at ``t_end`` and Newton iterations per step from Exudyn's generalized-α.

    Exudyn ``GenericJoint`` s in the global frame with the masks of the spec (paper Sect. 4.3),
    the paper's Lie group variant with ``T_exp`` neglected, fixed step. ``universal_rod_first``
    puts the rod first in the universal joint (Exudyn's rotation-z condition then crosses the
    rod's x axis with the slider's y axis, as in :mod:`mbslib.systems.slider_crank`); the other
    order crosses the slider's x axis with the rod's y axis, which jams for s > 0.283 m.
    ``rod_omega`` replaces the rod's initial angular velocity (global, rad/s; default: the one of
    the closed-form kinematics, consistent with the joints).
    """
    exu, eu = _exudyn()
    if node not in _NODE_TYPES:
        raise ValueError(f"node must be one of {sorted(_NODE_TYPES)}, got {node!r}")
    crank = SliderCrank() if crank is None else crank
    n_steps = n_steps_for(h, t_end)
    x, R = crank.configuration(0.0)
    dx, om = crank.velocity_map(0.0)
    omegas = [R[i] @ (crank.omega0 * om[i]) for i in range(3)]  # global
    if rod_omega is not None:
        omegas[1] = np.asarray(rod_omega, dtype=float)
        if omegas[1].shape != (3,):
            raise ValueError(f"rod_omega must have shape (3,), got {omegas[1].shape}")
    mbs = exu.SystemContainer().AddSystem()
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
    main = exu.MainSolverImplicitSecondOrder()
    main.SolveSystem(mbs, _settings(exu, n_steps, t_end))
    pos = mbs.GetObjectOutputBody(b_slider, exu.OutputVariableType.Position, localPosition=[0.0, 0.0, 0.0])
    return float(pos[0]), float(main.it.newtonStepsCount) / n_steps
