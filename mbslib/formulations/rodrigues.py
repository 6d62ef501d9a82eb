"""Rescaled Rodrigues parameters (paper 003) for a coordinate-free model of spherical bodies.

The explicit variational maps of :mod:`mbslib.integrators.rodrigues_vi` hold for bodies whose
inertia is spherical (``J = j I``) and move without joints under forces of their configuration:
gravity and undamped springs here. A model outside this class raises ``ValueError`` saying what
the method needs. The state of each body is its centre of mass, its attitude as a rescaled
Rodrigues vector (``R = cay(α)``) and the spatial angular velocity ``R Ω``.

:class:`PivotedRodriguesSystem` is the other class the paper runs, the 3-D pendulum (Sect. 3):
one body held at a ground point, spherical about that point, under gravity
(:meth:`mbslib.systems.pendulum3d.Pendulum3D.model`). The paper's particle–binder torus (Sect. 4,
:mod:`mbslib.systems.binder_torus`) has no description: its binder bonds are potentials of the
relative rotation of neighbouring particles and its contacts are Hertz laws between every pair and
against the wall, forces that a :class:`~mbslib.model.Model` (gravity, point springs, applied
loads) does not have.
"""

from __future__ import annotations

import numpy as np

from mbslib.integrators import rodrigues_vi as rr
from mbslib.model import BodyStates, Model
from mbslib.rodrigues import rr_from_matrix, rr_matrix


class RodriguesSystem:
    """A model of spherical bodies as the maps of :mod:`mbslib.integrators.rodrigues_vi` see it:
    masses ``m``, scalar inertias ``J`` and ``force_torque(x, alpha)``."""

    def __init__(self, model: Model):
        if model.joints:
            raise ValueError("rescaled Rodrigues maps: the explicit scheme takes no joints (constraints); "
                             f"the model has {len(model.joints)}")
        if model.loads:
            raise ValueError("rescaled Rodrigues maps: applied loads are not available")
        if model.dampers:
            raise ValueError("rescaled Rodrigues maps: point dampers (dampers[0]) are not available")
        for spring in model.springs:
            if spring.damping:
                raise ValueError("rescaled Rodrigues maps: forces must depend on the configuration only "
                                 "(a spring has damping)")
        J = []
        for body in model.bodies:
            j = body.inertia[0, 0]
            if not np.allclose(body.inertia, j * np.eye(3), rtol=1e-12, atol=0):
                raise ValueError(f"rescaled Rodrigues maps need spherical bodies (J = j I); body {body.name!r} has "
                                 f"inertia {body.inertia.tolist()}")
            J.append(j)
        self.model = model
        self.m = np.array([b.mass for b in model.bodies])
        self.J = np.array(J)
        self.g = np.zeros(3) if model.gravity is None else model.gravity.g

    def force_torque(self, x, alpha):
        """Forces ``−∂U/∂x`` and spatial torques on every body, shape (n, 3) each."""
        R = rr_matrix(alpha)
        force, torque = self.m[:, None] * self.g, np.zeros_like(x)
        for spring in self.model.springs:
            arms, points = [], []
            for body, point in ((spring.body_a, spring.point_a), (spring.body_b, spring.point_b)):
                arm = np.zeros(3) if body is None else R[body] @ point
                arms.append(arm)
                points.append(point if body is None else x[body] + arm)
            d = points[1] - points[0]
            length = np.linalg.norm(d)
            f = -spring.stiffness * (length - spring.rest_length) * d / length  # on b
            for body, arm, sign in ((spring.body_a, arms[0], -1.0), (spring.body_b, arms[1], 1.0)):
                if body is not None:
                    force[body] += sign * f
                    torque[body] += np.cross(arm, sign * f)
        return force, torque

    def initial_state(self) -> rr.RRState:
        b = self.model.bodies
        attitudes = [rr_from_matrix(x.rotation) for x in b]
        spatial = [x.rotation @ x.angular_velocity for x in b]
        return rr.initial_state(self, [x.position for x in b], [x.velocity for x in b], attitudes, spatial)

    def body_states(self, t, rows) -> BodyStates:
        """Body poses and velocities at times ``t`` of the rows of a
        :func:`~mbslib.integrators.rodrigues_vi.run` of the spatial-velocity maps (23), (25), (27)."""
        x, v, alpha, spatial = np.moveaxis(rr.states_of(rows), 1, 0)
        R = rr_matrix(alpha)
        return BodyStates(np.asarray(t, dtype=float), x, R, v, np.einsum("tnji,tnj->tni", R, spatial))


class PivotedRodriguesSystem:
    """One body held at a ground point by a spherical joint, under gravity, whose inertia about
    that point is spherical (``J_O = j I``): the 3-D pendulum of paper 003 (Sect. 3).

    The maps see the attitude alone (``x ≡ v ≡ 0``), the scalar inertia ``j`` about the pivot and
    the spatial torque of gravity about it, ``(R a) × m g`` with ``a`` the pivot → centre-of-mass
    arm in the body frame; ``m`` and ``J`` are the one body's mass and ``j``, scalars. A model
    outside this class raises ``ValueError`` saying what the method needs.
    """

    def __init__(self, model: Model):
        if model.n_bodies != 1 or model.springs or model.loads or model.dampers or len(model.joints) != 1:
            raise ValueError("pivoted rescaled Rodrigues maps: one body, one joint, no springs, applied loads or "
                             "dampers")
        (body,), (joint,) = model.bodies, model.joints
        if joint.kind != "spherical" or joint.body_a is not None:
            raise ValueError(f"pivoted rescaled Rodrigues maps: the joint must be a ground spherical joint, got a "
                             f"{joint.kind} joint")
        self.arm = -joint.point_b
        J_pivot = body.inertia + body.mass * (self.arm @ self.arm * np.eye(3) - np.outer(self.arm, self.arm))
        j = J_pivot[0, 0]
        if not np.allclose(J_pivot, j * np.eye(3), rtol=1e-12, atol=0):
            raise ValueError("pivoted rescaled Rodrigues maps need a spherical inertia about the pivot (J_O = j I); "
                             f"body {body.name!r} has J_O = {J_pivot.tolist()}")
        self.model, self.joint = model, joint
        self.m, self.J = body.mass, float(j)
        self.g = np.zeros(3) if model.gravity is None else model.gravity.g

    def force_torque(self, x, alpha):
        """No force on the (frozen) centre, and the spatial torque ``(R a) × m g`` about the pivot."""
        arm = rr_matrix(alpha) @ self.arm
        return np.zeros_like(x), np.cross(arm, self.m * self.g)

    def initial_state(self) -> rr.RRState:
        body = self.model.bodies[0]
        return rr.initial_state(self, np.zeros((1, 3)), np.zeros((1, 3)), [rr_from_matrix(body.rotation)],
                                [body.rotation @ body.angular_velocity])

    def body_states(self, t, rows) -> BodyStates:
        """Body poses and velocities at times ``t`` of the rows of a
        :func:`~mbslib.integrators.rodrigues_vi.run` of the spatial-velocity maps: the centre at
        ``c + R a`` moving with ``ω × R a``."""
        alpha, spatial = np.moveaxis(rr.states_of(rows), 1, 0)[2:]
        R = rr_matrix(alpha)
        arm = np.einsum("tnij,j->tni", R, self.arm)
        return BodyStates(np.asarray(t, dtype=float), self.joint.point_a + arm, R, np.cross(spatial, arm),
                          np.einsum("tnji,tnj->tni", R, spatial))
