"""Consistent initial states: the joints hold at t = 0, at position and at velocity level.

A joint violated at the start is not a small error: the first step of a constrained scheme snaps
the bodies onto the constraint and the energy of that impact enters the run (a 1 cm gap injected
+59 J into a pendulum with E₀ = −6 J, reported as a success). :func:`check_consistent` refuses
such a start, naming the joint and the gap; :func:`make_consistent` corrects an approximate start
by the smallest change in the kinetic-energy metric: positions first (Gauss–Newton on the joint
residuals of :func:`mbslib.diagnostics.constraint_residuals`, each step the minimum-norm one), then
velocities (the projection onto the joints' velocity constraints).

Tolerances: a residual is a gap when it exceeds ``tol`` times the mechanism's size (metres; the
largest distance of a body or joint point from the origin, at least 1 m) at position level, and
``tol`` times its speed (the largest point speed ``|v| + |Ω| r`` of a body, ``r`` its radius of
gyration, at least 1 m/s) at velocity level; axis rows are compared with ``tol`` itself.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from mbslib.diagnostics import constraint_rates, constraint_residuals
from mbslib.model import BodyStates, Model
from mbslib.rotations import exp_so3

#: Default relative tolerance of :func:`check_consistent`.
TOLERANCE = 1e-9


class InconsistentStart(ValueError):
    """The model's initial state violates a joint: ``joint`` (its index), ``level`` ("position" or
    "velocity") and ``gap`` (the largest residual of that joint)."""

    def __init__(self, joint: int, kind: str, level: str, gap: float, allowed: float):
        self.joint, self.level, self.gap = joint, level, gap
        unit = "m" if level == "position" else "m/s"
        super().__init__(f"joints[{joint}] ({kind}) is violated at {level} level at t = 0: gap {gap:.3g} {unit} "
                         f"(allowed {allowed:.1g}); mbslib.consistent.make_consistent(model) corrects the start")


def _rows(model: Model) -> list[int]:
    """The joint index of every residual row."""
    return [k for k, joint in enumerate(model.joints) for _ in range(joint.n_equations)]


def _scales(model: Model, s: BodyStates) -> tuple[float, float]:
    points = [b.position for b in model.bodies] + [j.point_a for j in model.joints if j.body_a is None]
    size = max(1.0, float(np.max(np.abs(points))))
    r = np.array([np.sqrt(np.trace(b.inertia) / (2.0 * b.mass)) for b in model.bodies])
    speed = np.linalg.norm(s.velocity[0], axis=-1) + r * np.linalg.norm(s.angular_velocity[0], axis=-1)
    return size, max(1.0, float(speed.max()))


def _axis_rows(model: Model) -> np.ndarray:
    """True for the rows of a joint residual that compare axes (dimensionless), not points."""
    rows = []
    for joint in model.joints:
        points = 0 if joint.kind == "prismatic" else 3
        rows += [False] * points + [True] * (joint.n_equations - points)
        if joint.kind == "prismatic":  # two offsets along the normals (metres), then the rotation (3)
            rows[-5:-3] = [False, False]
    return np.array(rows, dtype=bool)


def gaps(model: Model, tol: float = TOLERANCE) -> list[InconsistentStart]:
    """The joints whose initial residual exceeds the tolerance (module docstring), position level
    first; empty for a consistent start."""
    s = model.initial_states()
    size, speed = _scales(model, s)
    axes = _axis_rows(model)
    found = []
    for level, residual, scale in (("position", constraint_residuals(model, s)[0], size),
                                   ("velocity", constraint_rates(model, s)[0], speed)):
        allowed = np.where(axes, tol, tol * scale)
        rows = np.array(_rows(model), dtype=int)
        for k in sorted(set(rows[np.abs(residual) > allowed])):
            mine = rows == k
            found.append(InconsistentStart(k, model.joints[k].kind, level, float(np.abs(residual[mine]).max()),
                                           float(allowed[mine].max())))
    return found


def check_consistent(model: Model, tol: float = TOLERANCE) -> None:
    """Raise :class:`InconsistentStart` for the first joint violated at t = 0 (:func:`gaps`)."""
    found = gaps(model, tol)
    if found:
        raise found[0]


@dataclass(frozen=True)
class Correction:
    """What :func:`make_consistent` changed, per body: centre positions ``dx`` [m], rotations
    ``dtheta`` (body-frame rotation vectors, ``R → R exp(dθ̂)``) [rad], velocities ``dv`` [m/s] and
    angular velocities ``domega`` [rad/s], each (N, 3); the largest joint residual before and after
    at position and velocity level."""

    dx: np.ndarray
    dtheta: np.ndarray
    dv: np.ndarray
    domega: np.ndarray
    position_residual: tuple[float, float]
    velocity_residual: tuple[float, float]


def _moved(model: Model, z) -> Model:
    z = np.asarray(z).reshape(-1, 6)
    bodies = tuple(replace(b, position=b.position + dz[:3], rotation=b.rotation @ exp_so3(dz[3:]))
                   for b, dz in zip(model.bodies, z, strict=True))
    return replace(model, bodies=bodies)


def _metric(model: Model) -> np.ndarray:
    """The kinetic-energy metric of body increments (dx, dθ) or velocities (v, Ω): diag(m I, J)."""
    M = np.zeros((6 * model.n_bodies, 6 * model.n_bodies))
    for i, b in enumerate(model.bodies):
        M[6 * i:6 * i + 3, 6 * i:6 * i + 3] = b.mass * np.eye(3)
        M[6 * i + 3:6 * i + 6, 6 * i + 3:6 * i + 6] = b.inertia
    return M


def _smallest(M_inv, J, r) -> np.ndarray:
    """The change ``z`` of least ``zᵀ M z`` with ``J z = −r`` (least squares if J is rank deficient)."""
    return -M_inv @ J.T @ np.linalg.lstsq(J @ M_inv @ J.T, r, rcond=1e-12)[0]


def make_consistent(model: Model, *, tol: float = 1e-13, max_iter: int = 30) -> tuple[Model, Correction]:
    """The model with its initial state moved onto the joints, and what changed (:class:`Correction`).

    Positions: Gauss–Newton steps of least kinetic-energy norm on the position residuals (their
    Jacobian by central differences of the residuals), until the largest residual is below
    ``tol`` times the mechanism's size. Velocities: the projection of ``(v, Ω)`` onto the velocity
    constraints in the same metric (the rates are linear in the velocities: their Jacobian is
    exact). The reference of prismatic joints' relative rotation is the corrected start itself.
    Raises ``ValueError`` if the positions do not converge (joints that no pose satisfies).
    """
    if not model.joints:
        zeros = np.zeros((model.n_bodies, 3))
        return model, Correction(zeros, zeros, zeros, zeros, (0.0, 0.0), (0.0, 0.0))
    M_inv = np.linalg.inv(_metric(model))
    n = 6 * model.n_bodies
    size, _ = _scales(model, model.initial_states())

    def residual(z):
        moved = _moved(model, z)
        return constraint_residuals(moved, moved.initial_states(), reference=model.initial_states())[0]

    z, r = np.zeros(n), residual(np.zeros(n))
    before = float(np.abs(r).max())
    for _ in range(max_iter):
        if np.abs(r).max() <= tol * size:
            break
        eps = 1e-7
        J = np.array([(residual(z + eps * e) - residual(z - eps * e)) / (2 * eps) for e in np.eye(n)]).T
        z = z + _smallest(M_inv, J, r)
        r = residual(z)
    else:
        raise ValueError(f"make_consistent: the joints cannot all hold (largest position residual "
                         f"{np.abs(r).max():.3g} m after {max_iter} Gauss-Newton steps)")
    placed = _moved(model, z)
    s = placed.initial_states()
    w = np.concatenate([np.r_[v, o] for v, o in zip(s.velocity[0], s.angular_velocity[0], strict=True)])

    def rates(w):
        w = w.reshape(-1, 6)
        return constraint_rates(placed, replace(s, velocity=w[None, :, :3], angular_velocity=w[None, :, 3:]))[0]

    B = np.array([rates(e) for e in np.eye(n)]).T  # linear in the velocities
    rate_before = float(np.abs(rates(w)).max())
    w_new = w + _smallest(M_inv, B, B @ w)
    dw = (w_new - w).reshape(-1, 6)
    bodies = tuple(replace(b, velocity=b.velocity + d[:3], angular_velocity=b.angular_velocity + d[3:])
                   for b, d in zip(placed.bodies, dw, strict=True))
    result = replace(placed, bodies=bodies)
    final = result.initial_states()
    z = z.reshape(-1, 6)
    return result, Correction(z[:, :3], z[:, 3:], dw[:, :3], dw[:, 3:],
                              (before, float(np.abs(constraint_residuals(result, final)[0]).max())),
                              (rate_before, float(np.abs(constraint_rates(result, final)[0]).max())))
