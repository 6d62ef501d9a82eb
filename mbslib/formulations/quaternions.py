"""Unit quaternions (paper 000) for a coordinate-free model: Livens' equations of any number of
rigid bodies, the interface of :mod:`mbslib.integrators.livens`.

Each body contributes its centre of mass φ and the unit quaternion q of its principal frame
(``R(q) = R V``, ``J = V diag(J_p) Vᵀ``), ``[φ, q]`` (7 coordinates); the mass matrix is the
singular ``diag(m I, M̃₄(q))`` (paper eqs. 46, 123–124). Constraints: one unit constraint
``½(q·q − 1)`` per body (30), then three rows per spherical joint,
``φ_a + R(q_a) X_a − φ_b − R(q_b) X_b`` (``X = Vᵀ p``; a ground point for the ground), all
quadratic in the coordinates, so their Gonzalez discrete gradients are midpoint Jacobians (Sect.
4). Gravity is linear in φ. The matrices (mass matrix, kinetic Jacobians, constraint Jacobian
and Hessian) are assembled once from their per-body and per-joint blocks, and come as dense
ndarrays or, for ``sparse=True``, as scipy.sparse CSR arrays whose nonzeros grow linearly with
the number of bodies (block-diagonal per body, a few blocks per joint row). Other joints,
springs and applied loads are not available in this formulation yet and raise
``NotImplementedError`` naming them.

:class:`RotationSystem` is the rotation of one body alone in one unit quaternion (4 coordinates,
one constraint), the form the single-body schemes Null-EML, EMH and MPH need.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from mbslib.model import BodyStates, Model
from mbslib.quaternions import (
    E,
    G,
    KineticParts,
    angular_momentum,
    from_matrix,
    mass_matrix_4,
    minus,
    plus,
    quat_dg_kinetic,
    quat_grad_kinetic,
    rotate_jacobian,
)
from mbslib.rotations import exp_so3
from mbslib.systems.livens_systems import FreeRigidBody, HeavyTop
from mbslib.systems.rigid_bodies import principal_frame


def _matrix(shape, blocks, sparse: bool):
    """The sum of ``blocks`` (row slice, column slice, values), a matrix of ``shape``: dense, or
    sparse CSR (duplicates summed) if ``sparse``."""
    if not sparse:
        out = np.zeros(shape)
        for rows, cols, values in blocks:
            out[rows, cols] += values
        return out
    if not blocks:
        return sp.csr_array(shape)
    i = [np.repeat(np.arange(r.start, r.stop), c.stop - c.start) for r, c, _ in blocks]
    j = [np.tile(np.arange(c.start, c.stop), r.stop - r.start) for r, c, _ in blocks]
    values = [np.broadcast_to(v, (r.stop - r.start, c.stop - c.start)).ravel() for r, c, v in blocks]
    return sp.coo_array((np.concatenate(values), (np.concatenate(i), np.concatenate(j))), shape=shape).tocsr()


class QuaternionSystem:
    """Livens' form of ``model`` in centre-of-mass positions and unit quaternions (7 per body)."""

    def __init__(self, model: Model):
        if model.springs or model.loads:
            raise NotImplementedError("quaternion formulation: springs and applied loads are not available yet")
        for k, joint in enumerate(model.joints):
            if joint.kind != "spherical":
                raise NotImplementedError(f"quaternion formulation: joints[{k}] is {joint.kind}; only spherical "
                                          "joints are available yet")
        self.model = model
        frames = [principal_frame(b.inertia) for b in model.bodies]
        self.J = [Jp for Jp, _ in frames]
        self.V = [V for _, V in frames]
        self.masses = np.array([b.mass for b in model.bodies])
        self.N = model.n_bodies
        self.n = 7 * self.N
        self.m = self.N + 3 * len(model.joints)
        self.quaternion_slices = tuple(slice(7 * a + 3, 7 * a + 7) for a in range(self.N))
        self.g_vector = np.zeros(3) if model.gravity is None else model.gravity.g
        # joints as (body or None, lever X in the principal frame or ground point) for both ends
        self.joints = [((j.body_a, j.point_a if j.body_a is None else self.V[j.body_a].T @ j.point_a),
                        (j.body_b, self.V[j.body_b].T @ j.point_b)) for j in model.joints]

    # -- layout ---------------------------------------------------------------------------------
    def _t(self, a):
        return slice(7 * a, 7 * a + 3)

    def _r(self, a):
        return slice(7 * a + 3, 7 * a + 7)

    # -- kinetic energy -------------------------------------------------------------------------
    def mass_matrix(self, q, *, sparse: bool = False):
        """``diag(m_a I, M̃₄(q_a))`` per body (46), shape (n, n); sparse CSR if ``sparse``."""
        blocks = []
        for a in range(self.N):
            blocks += [(self._t(a), self._t(a), self.masses[a] * np.eye(3)),
                       (self._r(a), self._r(a), mass_matrix_4(q[self._r(a)], self.J[a]))]
        return _matrix((self.n, self.n), blocks, sparse)

    def kinetic_energy(self, q, v) -> float:
        return 0.5 * v @ self.mass_matrix(q) @ v

    def _assemble(self, per_body, q0, q1, v0, v1, sparse) -> KineticParts:
        """The kinetic parts of all bodies: vectors (n,) and four block-diagonal (n, n) Jacobians."""
        Tq, Tv = np.zeros(self.n), np.zeros(self.n)
        Tq_q, Tq_v, Tv_q, Tv_v = [], [], [], []
        for a in range(self.N):
            t, r, m = self._t(a), self._r(a), self.masses[a]
            if v0 is None:  # continuous derivatives at (q1, v1)
                Tv[t] = m * v1[t]
                Tv_v.append((t, t, m * np.eye(3)))
                k = per_body(self.J[a], q1[r], v1[r])
            else:  # discrete: ½ m |v_φ|² is quadratic, its discrete derivative the midpoint one
                Tv[t] = 0.5 * m * (v0[t] + v1[t])
                Tv_v.append((t, t, 0.5 * m * np.eye(3)))
                k = per_body(self.J[a], q0[r], q1[r], v0[r], v1[r])
            Tq[r], Tv[r] = k.Tq, k.Tv
            for blocks, block in zip((Tq_q, Tq_v, Tv_q, Tv_v), (k.Tq_q, k.Tq_v, k.Tv_q, k.Tv_v), strict=True):
                blocks.append((r, r, block))
        shape = (self.n, self.n)
        return KineticParts(Tq, Tv, *(_matrix(shape, blocks, sparse) for blocks in (Tq_q, Tq_v, Tv_q, Tv_v)))

    def grad_kinetic(self, q, v, *, sparse: bool = False) -> KineticParts:
        return self._assemble(quat_grad_kinetic, None, q, None, v, sparse)

    def dg_kinetic(self, q0, q1, v0, v1, *, sparse: bool = False) -> KineticParts:
        return self._assemble(quat_dg_kinetic, q0, q1, v0, v1, sparse)

    # -- potential: gravity, V = −Σ m g·φ ----------------------------------------------------------
    def potential(self, q) -> float:
        return float(-sum(self.masses[a] * self.g_vector @ q[self._t(a)] for a in range(self.N)))

    def grad_potential(self, q) -> np.ndarray:
        grad = np.zeros(self.n)
        for a in range(self.N):
            grad[self._t(a)] = -self.masses[a] * self.g_vector
        return grad

    def hess_potential(self, q, *, sparse: bool = False):
        return _matrix((self.n, self.n), [], sparse)

    def dg_potential(self, q0, q1, *, sparse: bool = False):
        return self.grad_potential(q1), _matrix((self.n, self.n), [], sparse)

    # -- constraints ------------------------------------------------------------------------------
    def _point(self, q, end):
        body, X = end
        if body is None:
            return X
        quat = q[self._r(body)]
        return q[self._t(body)] + E(quat) @ (G(quat).T @ X)

    def constraint(self, q) -> np.ndarray:
        unit = [0.5 * (q[self._r(a)] @ q[self._r(a)] - 1.0) for a in range(self.N)]
        joints = [self._point(q, a) - self._point(q, b) for a, b in self.joints]
        return np.concatenate([unit, *joints]) if joints else np.array(unit)

    def constraint_jacobian(self, q, *, sparse: bool = False):
        """``∇g(q)``, shape (m, n): ``q_aᵀ`` per unit constraint, ``±[I, ∂(R(q)X)/∂q]`` per joint end."""
        blocks = [(slice(a, a + 1), self._r(a), q[self._r(a)]) for a in range(self.N)]
        for j, ends in enumerate(self.joints):
            rows = slice(self.N + 3 * j, self.N + 3 * j + 3)
            for sign, (body, X) in zip((1.0, -1.0), ends, strict=True):
                if body is not None:
                    blocks += [(rows, self._t(body), sign * np.eye(3)),
                               (rows, self._r(body), sign * rotate_jacobian(q[self._r(body)], X))]
        return _matrix((self.m, self.n), blocks, sparse)

    def constraint_hessian(self, q, lam, *, sparse: bool = False):
        """``Σ λ_k ∇²g_k``: ``λ_a I₄`` per unit constraint, ``±2 X̄ᵀ μ⁺`` per joint end (constant)."""
        blocks = [(self._r(a), self._r(a), lam[a] * np.eye(4)) for a in range(self.N)]
        for j, ends in enumerate(self.joints):
            mu = lam[self.N + 3 * j:self.N + 3 * j + 3]
            for sign, (body, X) in zip((1.0, -1.0), ends, strict=True):
                if body is not None:
                    blocks.append((self._r(body), self._r(body), sign * 2.0 * minus(X).T @ plus(mu)))
        return _matrix((self.n, self.n), blocks, sparse)

    def external_force(self, q, t):
        return None

    # -- states -----------------------------------------------------------------------------------
    def initial_state(self) -> np.ndarray:
        """Livens state ``[q, p, v, λ]`` of the model's initial states (``v_q = ½ G(q)ᵀ Ω``, eq. 44)."""
        q, v = np.zeros(self.n), np.zeros(self.n)
        for a, body in enumerate(self.model.bodies):
            quat = from_matrix(body.rotation @ self.V[a])
            q[self._t(a)], q[self._r(a)] = body.position, quat
            v[self._t(a)] = body.velocity
            v[self._r(a)] = 0.5 * G(quat).T @ (self.V[a].T @ body.angular_velocity)
        return np.concatenate([q, self.mass_matrix(q) @ v, v, np.zeros(self.m)])

    def body_states(self, t, q, v) -> BodyStates:
        """Body poses and velocities of coordinates ``q`` and velocities ``v`` (shape (T, n)):
        ``R = R(q) Vᵀ`` (the quadratic formula, so a unit-constraint drift shows), ``Ω = V (2 G(q) v)``."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        q, v = np.atleast_2d(q), np.atleast_2d(v)
        shape = (len(t), self.N)
        x, R, u, W = np.empty(shape + (3,)), np.empty(shape + (3, 3)), np.empty(shape + (3,)), np.empty(shape + (3,))
        for k in range(len(t)):
            for a in range(self.N):
                quat = q[k, self._r(a)]
                x[k, a], u[k, a] = q[k, self._t(a)], v[k, self._t(a)]
                R[k, a] = E(quat) @ G(quat).T @ self.V[a].T
                W[k, a] = self.V[a] @ (2.0 * G(quat) @ v[k, self._r(a)])
        return BodyStates(t, x, R, u, W)

    def angular_momentum(self, q, p) -> np.ndarray:
        """``Σ φ_a × p_φa + ½ E(q_a) p_qa`` about the origin."""
        return sum(np.cross(q[self._t(a)], p[self._t(a)]) + angular_momentum(q[self._r(a)], p[self._r(a)])
                   for a in range(self.N))


def _down(g) -> np.ndarray:
    """The rotation ``W`` about ``ĝ × (−e₃)`` that turns the direction of ``g`` into −e₃."""
    u, down = g / np.linalg.norm(g), np.array([0.0, 0.0, -1.0])
    axis = np.cross(u, down)
    if np.linalg.norm(axis) < 1e-12:
        return np.eye(3) if u @ down > 0 else np.diag([1.0, -1.0, -1.0])
    return exp_so3(np.arctan2(np.linalg.norm(axis), u @ down) * axis / np.linalg.norm(axis))


class RotationSystem:
    """The rotation of one rigid body alone in one unit quaternion (paper 000, Sects. 5.3–5.4).

    Two models qualify, each as a system of :mod:`mbslib.systems.livens_systems` (``n = 4``,
    ``m = 1``):

    - a **free body** without gravity: :class:`~mbslib.systems.livens_systems.FreeRigidBody`
      in the principal frame of its inertia (``R(q) = R V``); its centre moves uniformly,
      ``x = x₀ + v₀ t``, and :meth:`body_states` adds it back;
    - a body held at a ground point by one spherical joint, under gravity, with its centre of
      mass on a principal axis of its inertia about that point (the **heavy top**):
      :class:`~mbslib.systems.livens_systems.HeavyTop`, which takes gravity along −e₃ and the
      centre of mass on the body's third axis. The world is turned by ``W`` (``W g = −|g| e₃``,
      origin at the pivot) and the body frame by ``V`` (principal axes of the inertia about the
      pivot, the third towards the centre of mass): ``R(q) = W R V``.

    Anything else raises ``ValueError`` saying what the single-body schemes need.
    """

    def __init__(self, model: Model):
        if model.n_bodies != 1 or model.springs or model.loads:
            raise ValueError("single-body quaternion schemes: the model must be one rigid body without springs or "
                             f"applied loads (it has {model.n_bodies} bodies, {len(model.springs)} springs, "
                             f"{len(model.loads)} loads)")
        (body,) = model.bodies
        gravity = np.zeros(3) if model.gravity is None else model.gravity.g
        self.model, self.pivot = model, None
        if not model.joints:
            if np.any(gravity):
                raise ValueError("single-body quaternion schemes: a free body must be free of gravity")
            J, self.V = principal_frame(body.inertia)
            self.W = np.eye(3)
            self.system = FreeRigidBody(J=tuple(J))
            return
        (joint,) = model.joints if len(model.joints) == 1 else (None,)
        if joint is None or joint.kind != "spherical" or joint.body_a is not None or not np.any(gravity):
            raise ValueError("single-body quaternion schemes: a jointed body must hang from one ground spherical "
                             "joint under gravity (the heavy top)")
        arm = -joint.point_b  # pivot → centre of mass, body frame
        l = np.linalg.norm(arm)
        if not l > 0:
            raise ValueError("single-body quaternion schemes: the centre of mass must not sit at the pivot")
        J_pivot = body.inertia + body.mass * (arm @ arm * np.eye(3) - np.outer(arm, arm))  # Steiner
        e3 = arm / l
        if np.linalg.norm(J_pivot @ e3 - (e3 @ J_pivot @ e3) * e3) > 1e-12 * np.abs(J_pivot).max():
            raise ValueError("single-body quaternion schemes: the centre of mass must lie on a principal axis of "
                             "the inertia about the pivot")
        n1 = np.cross(e3, np.eye(3)[np.argmin(np.abs(e3))])
        n1 /= np.linalg.norm(n1)
        plane = np.column_stack([n1, np.cross(e3, n1)])
        values, turn = np.linalg.eigh(plane.T @ J_pivot @ plane)  # principal axes across e3
        e1 = plane @ turn[:, 0]
        self.V = np.column_stack([e1, np.cross(e3, e1), e3])
        self.W = _down(gravity)
        self.pivot = joint
        self.system = HeavyTop(J=(values[0], values[1], e3 @ J_pivot @ e3), mass=body.mass,
                               gravity=float(np.linalg.norm(gravity)), l=float(l))

    def initial_state(self) -> np.ndarray:
        """Livens state ``[q, p, v, λ]`` of the model's initial state."""
        body = self.model.bodies[0]
        return self.system.initial_state(from_matrix(self.W @ body.rotation @ self.V), self.V.T @ body.angular_velocity)

    def body_states(self, t, q, v) -> BodyStates:
        """Body poses and velocities of quaternions ``q`` and their rates ``v`` (shape (T, 4)):
        ``R = Wᵀ R(q) Vᵀ`` by the quadratic formula (a unit-constraint drift shows), ``Ω = V (2 G(q) v)``;
        the centre moves uniformly (free body) or sits at ``c − R p`` (pivot ``c``, joint point ``p``)."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        q, v = np.atleast_2d(q), np.atleast_2d(v)
        R = np.array([self.W.T @ E(x) @ G(x).T @ self.V.T for x in q])
        Omega = np.array([self.V @ (2.0 * G(x) @ y) for x, y in zip(q, v, strict=True)])
        body = self.model.bodies[0]
        if self.pivot is None:
            x, u = body.position + np.outer(t, body.velocity), np.tile(body.velocity, (len(t), 1))
        else:
            p = self.pivot.point_b
            x = self.pivot.point_a - R @ p
            u = -np.einsum("tij,tj->ti", R, np.cross(Omega, p))
        return BodyStates(t, x[:, None], R[:, None], u[:, None], Omega[:, None])
