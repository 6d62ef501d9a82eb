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

from mbslib.systems.lie_group_mbs import HeavyTop


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
    n_steps = round(t_end / h)
    if n_steps < 1 or abs(n_steps * h - t_end) > 1e-9 * t_end:
        raise ValueError(f"t_end = {t_end} is not a whole multiple of h = {h}")
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
    ga.lieGroupSimplifiedKinematicRelations = True  # the paper's Brüls–Cardona method
    ga.lieGroupAddTangentOperator = use_texp
    s.timeIntegration.newton.useModifiedNewton = modified_newton
    s.linearSolver.solverType = exu.LinearSolverType.EXUdense
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
