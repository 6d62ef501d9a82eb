"""Unit quaternions (paper 000) for a coordinate-free model: Livens' equations of any number of
rigid bodies, the interface of :mod:`mbslib.integrators.livens`.

Each body contributes its centre of mass φ and the unit quaternion q of its principal frame
(``R(q) = R V``, ``J = V diag(J_p) Vᵀ``), ``[φ, q]`` (7 coordinates); the mass matrix is the
singular ``diag(m I, M̃₄(q))`` (paper eqs. 46, 123–124). Constraints: one unit constraint
``½(q·q − 1)`` per body (30), then three rows per spherical joint,
``φ_a + R(q_a) X_a − φ_b − R(q_b) X_b`` (``X = Vᵀ p``; a ground point for the ground), all
quadratic in the coordinates, so their Gonzalez discrete gradients are midpoint Jacobians (Sect.
4). Gravity is linear in φ. The matrices (mass matrix, kinetic Jacobians, constraint Jacobian
and Hessian) are assembled from their per-body and per-joint blocks, computed for all bodies
and all joints at once (stacks of blocks, no Python loop over bodies), and come as dense ndarrays
or, for ``sparse=True``, as their entries (:class:`mbslib.newton.Triplets`, duplicates summed
where they are used) whose number grows linearly with the number of bodies (block-diagonal per
body, a few blocks per joint row). Other joints raise
``NotImplementedError`` naming them.

Springs: the vector between a spring's points, ``d(q) = φ_b + R(q_b) X_b − φ_a − R(q_a) X_a``,
is quadratic in q like the joints, with Jacobian ``D(q)`` (linear in q) and constant Hessians.
Its potential ``V = ½ k (ℓ − L₀)²``, ``ℓ = |d|``, has ``∇V = k (1 − L₀/ℓ) Dᵀd``, and the
discrete gradient ``∇̄V = k (1 − L₀/ℓ̄) D(q^{n+1/2})ᵀ d̄`` with ``ℓ̄ = ½(ℓⁿ + ℓⁿ⁺¹)``,
``d̄ = ½(dⁿ + dⁿ⁺¹)``: ``D(q^{n+1/2})(qⁿ⁺¹ − qⁿ) = dⁿ⁺¹ − dⁿ`` (d quadratic) and
``½ k (1 − L₀/ℓ̄)`` is exactly ``(V(s₁) − V(s₀))/(s₁ − s₀)`` with ``s = ℓ²``, also for
``s₁ = s₀``, so that ``∇̄V · (qⁿ⁺¹ − qⁿ) = V(qⁿ⁺¹) − V(qⁿ)`` (Gonzalez's property, Sect. 4).
Dampers and applied loads are the non-conservative generalized force
(:meth:`QuaternionSystem.external_force`): a damper's ``−c (e·ḋ) Dᵀe`` (``ḋ = D v``,
``e = d/ℓ``), a load's virtual work, ``f`` on φ and ``∂(R(q)X)/∂qᵀ f = 2 X̄ᵀE(q)ᵀ f`` on q for
a force at the body point X, ``2 E(q)ᵀ τ`` for a world torque (paper 000, eq. 128).

:class:`RotationSystem` is the rotation of one body alone in one unit quaternion (4 coordinates,
one constraint), the form the single-body schemes Null-EML, EMH and MPH need.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from mbslib.model import BodyStates, Model, refuse
from mbslib.newton import Triplets
from mbslib.quaternions import (
    E,
    G,
    KineticParts,
    _kinetic_blocks,
    _put_E,
    _put_G,
    _put_minus,
    _times,
    _transpose,
    angular_momentum,
    from_matrix,
    minus,
    plus,
    rotate_jacobian,
)
from mbslib.rotations import exp_so3
from mbslib.systems.livens_systems import FreeRigidBody, HeavyTop
from mbslib.systems.rigid_bodies import principal_frame
from mbslib.validation import vector


# -- compiled per-joint-end blocks (tested against mbslib.quaternions) -------------------------------
@numba.njit(cache=True)
def _put_plus(a, out):
    """``out = a⁺ = [[0, -aᵀ], [a, â]]`` (34), (4, 4)."""
    out[0, 0], out[0, 1], out[0, 2], out[0, 3] = 0.0, -a[0], -a[1], -a[2]
    out[1, 0], out[1, 1], out[1, 2], out[1, 3] = a[0], 0.0, -a[2], a[1]
    out[2, 0], out[2, 1], out[2, 2], out[2, 3] = a[1], a[2], 0.0, -a[0]
    out[3, 0], out[3, 1], out[3, 2], out[3, 3] = a[2], -a[1], a[0], 0.0


@numba.njit(cache=True)
def _body_points(q, body, X):
    """Points ``φ + R(q) X`` of body ends (``R(q) = E(q) G(q)ᵀ``, eq. 50) and their Jacobians
    ``∂(R(q)X)/∂q = 2 E(q) X⁻`` (137): (K, 3) and (K, 3, 4), for the bodies ``body`` (K,) of the
    coordinates ``q`` (7 per body) and levers ``X`` (K, 3)."""
    K = body.size
    points, jacobians = np.empty((K, 3)), np.empty((K, 3, 4))
    Eq, Gq, X_minus, GX = np.empty((3, 4)), np.empty((3, 4)), np.empty((4, 4)), np.empty((4, 1))
    for k in range(K):
        at = 7 * body[k]
        _put_E(q[at + 3:at + 7], Eq)
        _put_G(q[at + 3:at + 7], Gq)
        _put_minus(X[k], X_minus)
        for j in range(4):  # G(q)ᵀ X
            GX[j, 0] = Gq[0, j] * X[k, 0] + Gq[1, j] * X[k, 1] + Gq[2, j] * X[k, 2]
        for i in range(3):
            RX = 0.0
            for j in range(4):
                RX += Eq[i, j] * GX[j, 0]
                EX = 0.0
                for l in range(4):
                    EX += Eq[i, l] * X_minus[l, j]
                jacobians[k, i, j] = 2.0 * EX
            points[k, i] = q[at + i] + RX
    return points, jacobians


_EYE4 = np.eye(4)


@numba.njit(cache=True)
def _end_hessians(lever, mu):
    """The Hessian blocks ``L_k μ_k⁺`` of joint ends (K, 4, 4): the constant ``L = ±2 X̄ᵀ`` of each
    end times ``μ⁺`` (34) of its joint's multipliers ``μ`` (K, 3)."""
    K = mu.shape[0]
    out, mu_plus = np.empty((K, 4, 4)), np.empty((4, 4))
    for k in range(K):
        _put_plus(mu[k], mu_plus)
        for i in range(4):
            for j in range(4):
                acc = 0.0
                for l in range(4):
                    acc += lever[k, i, l] * mu_plus[l, j]
                out[k, i, j] = acc
    return out


@numba.njit(cache=True)
def _dense_kinetic(Jp, masses, q0, q1, v0, v1, scale):
    """The kinetic parts of :meth:`QuaternionSystem.dg_kinetic` (7 coordinates per body, Jacobians
    times ``scale``) as dense vectors (n,) and matrices (n, n): ``½ m |v_φ|²`` per body (its
    discrete derivative the midpoint one) and the quaternion blocks of
    :func:`mbslib.quaternions._kinetic_blocks`."""
    N = masses.size
    n = 7 * N
    quat = [x.reshape(N, 7)[:, 3:] for x in (q0, q1, v0, v1)]
    Tq_b, Tv_b, Tq_q_b, Tq_v_b, Tv_q_b, Tv_v_b = _kinetic_blocks(Jp, quat[0], quat[1], quat[2], quat[3])
    Tq, Tv = np.zeros(n), np.zeros(n)
    Tq_q, Tq_v, Tv_q, Tv_v = np.zeros((n, n)), np.zeros((n, n)), np.zeros((n, n)), np.zeros((n, n))
    for a in range(N):
        t, r = 7 * a, 7 * a + 3
        for i in range(3):
            Tv[t + i] = 0.5 * masses[a] * (v0[t + i] + v1[t + i])
            Tv_v[t + i, t + i] = scale * (0.5 * masses[a])
        Tq[r:r + 4], Tv[r:r + 4] = Tq_b[a], Tv_b[a]
        Tq_q[r:r + 4, r:r + 4], Tq_v[r:r + 4, r:r + 4] = scale * Tq_q_b[a], scale * Tq_v_b[a]
        Tv_q[r:r + 4, r:r + 4], Tv_v[r:r + 4, r:r + 4] = scale * Tv_q_b[a], scale * Tv_v_b[a]
    return Tq, Tv, Tq_q, Tq_v, Tv_q, Tv_v


@numba.njit(cache=True)
def _dense_constraints(q, n_bodies, ground, joint, sign, body, X):
    """``g(q)`` of :meth:`QuaternionSystem.constraint`: ``½(q_a·q_a − 1)`` per body, then per
    joint its ground points ``ground`` (J, 3) plus ``±(φ + R(q)X)`` of its body ends (``joint``,
    ``sign``, ``body``, ``X``: the ends on bodies, joint by joint)."""
    g, ends = np.empty(n_bodies + 3 * ground.shape[0]), np.zeros(ground.shape)
    for a in range(n_bodies):
        quat = q[7 * a + 3:7 * a + 7]
        g[a] = 0.5 * (quat @ quat - 1.0)
    points = _body_points(q, body, X)[0]
    for k in range(body.size):
        ends[joint[k]] += sign[k] * points[k]
    g[n_bodies:] = (ground + ends).ravel()
    return g


@numba.njit(cache=True)
def _dense_constraint_jacobian(q, n_bodies, m, joint, sign, body, X):
    """``∇g(q)`` of :meth:`QuaternionSystem.constraint_jacobian` as a dense (m, n) array."""
    out = np.zeros((m, 7 * n_bodies))
    for a in range(n_bodies):
        out[a, 7 * a + 3:7 * a + 7] = q[7 * a + 3:7 * a + 7]
    turned = _body_points(q, body, X)[1]
    for k in range(body.size):
        row, col = n_bodies + 3 * joint[k], 7 * body[k]
        for i in range(3):
            out[row + i, col + i] += sign[k]
            out[row + i, col + 3:col + 7] += sign[k] * turned[k, i]
    return out


@numba.njit(cache=True)
def _dense_constraint_hessian(lam, n_bodies, joint, body, lever):
    """``Σ λ_k ∇²g_k`` of :meth:`QuaternionSystem.constraint_hessian` as a dense (n, n) array."""
    out = np.zeros((7 * n_bodies, 7 * n_bodies))
    for a in range(n_bodies):
        for i in range(7 * a + 3, 7 * a + 7):
            out[i, i] = lam[a]
    mu = np.empty((body.size, 3))
    for k in range(body.size):
        mu[k] = lam[n_bodies + 3 * joint[k]:n_bodies + 3 * joint[k] + 3]
    hessians = _end_hessians(lever, mu)
    for k in range(body.size):
        at = 7 * body[k] + 3
        out[at:at + 4, at:at + 4] += hessians[k]
    return out


class _Pattern:
    """Where the blocks of a sum of blocks sit in a matrix of ``shape``, indices flattened once:
    each block a row slice and a column slice, or a stack of K blocks at row indices (K, r) and
    column indices (K, c)."""

    def __init__(self, shape, blocks):
        rows, cols = [np.zeros(0, dtype=int)], [np.zeros(0, dtype=int)]
        for r, c in blocks:
            if isinstance(r, slice):
                r, c = np.arange(r.start, r.stop), np.arange(c.start, c.stop)
            at = r.shape + c.shape[-1:]
            rows.append(np.broadcast_to(r[..., :, None], at).ravel())
            cols.append(np.broadcast_to(c[..., None, :], at).ravel())
        self.shape, self.rows, self.cols = shape, np.concatenate(rows), np.concatenate(cols)
        self.flat = self.rows * shape[1] + self.cols

    def matrix(self, values, sparse: bool):
        """The matrix with the blocks' ``values`` (one array per block, of its shape): dense
        (blocks summed in their order), or its entries (:class:`~mbslib.newton.Triplets`)."""
        data = (np.ravel(values[0]) if len(values) == 1
                else np.concatenate([np.zeros(0), *(np.ravel(v) for v in values)]))
        if sparse:
            return Triplets(self.rows, self.cols, data, self.shape)
        return np.bincount(self.flat, data, minlength=self.shape[0] * self.shape[1]).reshape(self.shape)


def _matrix(shape, blocks, sparse: bool):
    """The sum of ``blocks`` (row slice, column slice, values), a matrix of ``shape``
    (:meth:`_Pattern.matrix`); no blocks (no spring, damper or load): the zero matrix."""
    if not blocks:
        return Triplets(_NO_INDEX, _NO_INDEX, np.zeros(0), shape) if sparse else np.zeros(shape)
    return _Pattern(shape, [(r, c) for r, c, _ in blocks]).matrix([v for *_, v in blocks], sparse)


_NO_INDEX = np.zeros(0, dtype=int)


class _Ends(NamedTuple):
    """One end of every joint, or the body ends of all joints: the joint's index, the end's sign
    in ``g = p_a − p_b``, its body (0 for the ground), its lever ``X`` (principal frame), the
    ground point (zero for a body end) and whether the end is on a body."""

    joint: np.ndarray
    sign: np.ndarray
    body: np.ndarray
    X: np.ndarray
    ground: np.ndarray
    on_body: np.ndarray


class _JointEnds:
    """The ends ``a`` and ``b`` of the joints of a :class:`QuaternionSystem` as stacks
    (:class:`_Ends`), and the ends on bodies in the order joint by joint, a before b."""

    def __init__(self, joints, n_bodies):
        def ends(which, sign):
            on_body = np.array([j[which][0] is not None for j in joints], dtype=bool)
            body = np.array([j[which][0] or 0 for j in joints], dtype=int)
            X = np.array([j[which][1] if j[which][0] is not None else np.zeros(3) for j in joints]).reshape(-1, 3)
            ground = np.array([np.zeros(3) if j[which][0] is not None else j[which][1] for j in joints]).reshape(-1, 3)
            return _Ends(np.arange(len(joints)), np.full(len(joints), sign), body, X, ground, on_body)

        self.a, self.b = ends(0, 1.0), ends(1, -1.0)
        order = np.argsort(np.r_[2 * np.arange(len(joints)), 2 * np.arange(len(joints)) + 1], kind="stable")
        both = _Ends(*(np.concatenate([x, y])[order] for x, y in zip(self.a, self.b, strict=True)))
        self.on_bodies = _Ends(*(x[both.on_body] for x in both))


class QuaternionSystem:
    """Livens' form of ``model`` in centre-of-mass positions and unit quaternions (7 per body).

    ``band_order`` orders the unknowns ``(q, λ)`` of a Newton system (n + m) body by body, for
    a banded LU (:func:`mbslib.newton.sparse_solve`): the three multipliers of every joint whose
    later body it is, the body's seven coordinates, its unit constraint; a chain's Newton matrix
    then lies within 10 sub- and 10 superdiagonals, half the band of reverse Cuthill–McKee.
    ``compiled_data`` (a model without springs and loads; else None) holds the arrays from which
    :mod:`mbslib.integrators.livens` evaluates a dense Newton iteration in one compiled call.
    """

    def __init__(self, model: Model):
        refuse(model, "quaternion formulation", "bonds", "contacts")
        if model.dampers:
            raise NotImplementedError("quaternion formulation: dampers[0] is a point damper; point dampers are not "
                                      "available yet")
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
        self.joints = [(self._end(j.body_a, j.point_a), self._end(j.body_b, j.point_b)) for j in model.joints]
        # springs as their records and their ends (sign, body or None, lever or ground point): d = end b − end a
        self.springs = [(s, ((-1.0, *self._end(s.body_a, s.point_a)), (1.0, *self._end(s.body_b, s.point_b))))
                        for s in model.springs]
        self.loads = [(load, self.V[load.body].T @ load.point) for load in model.loads]
        # every body and joint at once: index stacks of the blocks, principal inertias (N, 3)
        self._T = 7 * np.arange(self.N)[:, None] + np.arange(3)
        self._R = self._T[:, :1] + 3 + np.arange(4)
        self._Jp = np.array(self.J, dtype=float).reshape(self.N, 3)
        self._gravity = np.zeros(self.n)
        self._gravity[self._T] = -self.masses[:, None] * self.g_vector  # every body at once
        self._ends = _JointEnds(self.joints, self.N)
        ends, T, R, n = self._ends.on_bodies, self._T, self._R, self.n
        joint_rows = self.N + 3 * ends.joint[:, None] + np.arange(3)
        self._patterns = {"rotation": _Pattern((n, n), [(R, R)]), "body": _Pattern((n, n), [(T, T), (R, R)]),
                          "jacobian": _Pattern((self.m, n), [(np.arange(self.N)[:, None], R),
                                                             (joint_rows, T[ends.body]), (joint_rows, R[ends.body])]),
                          "hessian": _Pattern((n, n), [(R, R), (R[ends.body], R[ends.body])])}
        # constant blocks: ±I of the joint ends, their ±2 X̄ᵀ (Hessian), the bodies' translational masses
        self._end_identity = ends.sign[:, None, None] * np.eye(3)
        self._end_lever = (ends.sign * 2.0)[:, None, None] * _transpose(minus(ends.X))
        self._mass_identity = self.masses[:, None, None] * np.eye(3)
        # g of the joints: the ground points' part (J, 3)
        self._ground_points = (self._ends.a.ground - self._ends.b.ground).reshape(-1, 3)
        # the unknowns (q, λ) of a Newton system body by body: the rows of the joints whose later
        # body it is, its coordinates, its unit constraint (a chain's matrix: a band of 10 + 10)
        later = np.maximum(*(np.where(e.on_body, e.body, -1) for e in (self._ends.a, self._ends.b)))
        multipliers = n + self.N + 3 * np.arange(len(self.joints))[:, None] + np.arange(3)
        self.band_order = np.concatenate([np.zeros(0, dtype=int)] + [
            np.concatenate([multipliers[later == a].ravel(), 7 * a + np.arange(7), [n + a]]) for a in range(self.N)])
        # bodies, gravity and spherical joints alone: the arrays from which one compiled call
        # evaluates all of a dense Newton iteration's pieces (mbslib.integrators.livens); springs
        # and loads are evaluated in Python (None)
        self.compiled_data = None if self.springs or self.loads else (
            self._Jp, self.masses, self._gravity, self._ground_points, ends.joint, ends.sign, ends.body, ends.X,
            self._end_lever)

    def _end(self, body, point):
        """``(body, X)``: the lever ``X = Vᵀ p`` in the principal frame, or a ground point as it is."""
        return body, point if body is None else self.V[body].T @ point

    # -- layout ---------------------------------------------------------------------------------
    def _t(self, a):
        return slice(7 * a, 7 * a + 3)

    def _r(self, a):
        return slice(7 * a + 3, 7 * a + 7)

    # -- kinetic energy -------------------------------------------------------------------------
    def mass_matrix(self, q, *, sparse: bool = False):
        """``diag(m_a I, M̃₄(q_a))`` per body (46), shape (n, n); sparse CSR if ``sparse``:
        ``M̃₄(q) = 4 G(q)ᵀ J G(q)`` is the Jacobian ``∂_vT_v`` of :meth:`grad_kinetic`."""
        quat = q[self._R]
        rotation = 2.0 * _kinetic_blocks(self._Jp, quat, quat, np.zeros_like(quat), np.zeros_like(quat))[5]
        return self._patterns["body"].matrix([self._mass_identity, rotation], sparse)

    def kinetic_energy(self, q, v) -> float:
        return 0.5 * v @ (self.mass_matrix(q, sparse=True) @ v)

    def _assemble(self, q0, q1, v0, v1, scale, sparse) -> KineticParts:
        """The kinetic parts of all bodies from their discrete derivatives (87)–(88) (the compiled
        kernel of :func:`mbslib.quaternions.quat_dg_kinetic`), the Jacobians times ``scale``:
        vectors (n,) and four block-diagonal (n, n) Jacobians (dense: one compiled call)."""
        if not sparse:
            return KineticParts(*_dense_kinetic(self._Jp, self.masses, q0, q1, v0, v1, scale))
        T, R, m = self._T, self._R, self.masses[:, None]
        Tq, Tv = np.zeros(self.n), np.zeros(self.n)
        Tv[T] = 0.5 * m * (v0[T] + v1[T])  # ½ m |v_φ|² is quadratic: its discrete derivative the midpoint one
        Tq[R], Tv[R], *jacobians = _kinetic_blocks(self._Jp, q0[R], q1[R], v0[R], v1[R])
        Tq_q, Tq_v, Tv_q, Tv_v = (scale * block for block in jacobians)
        rotation = self._patterns["rotation"]
        return KineticParts(Tq, Tv, *(rotation.matrix([block], sparse) for block in (Tq_q, Tq_v, Tv_q)),
                            self._patterns["body"].matrix([scale * 0.5 * self._mass_identity, Tv_v], sparse))

    def grad_kinetic(self, q, v, *, sparse: bool = False) -> KineticParts:
        """Continuous ``∂_qT, ∂_vT`` (48) and their Jacobians: the discrete ones at ``q0 = q1``,
        ``v0 = v1``, whose Jacobians in the end values are half of those in ``q, v``."""
        return self._assemble(q, q, v, v, 2.0, sparse)

    def dg_kinetic(self, q0, q1, v0, v1, *, sparse: bool = False) -> KineticParts:
        return self._assemble(q0, q1, v0, v1, 1.0, sparse)

    # -- springs: d(q) and its derivatives on the columns of the spring's bodies -------------------
    def _spring_vector(self, ends, q):
        """``d(q)`` (3,), ``D(q) = ∂d/∂q`` on the spring's columns (3, w) and those columns (slices).

        ``∂(R(q)X)/∂q = 2[q₀X + v × X, v Xᵀ − X vᵀ + (v·X) I − q₀ X̂]`` (``q = (q₀, v)``, eq. 137
        written out) and ``R(q)X = ½ ∂(R(q)X)/∂q q`` (R is quadratic in q)."""
        bodies = [(sign, body, X) for sign, body, X in ends if body is not None]
        d, D = np.zeros(3), np.zeros((3, 7 * len(bodies)))
        for sign, body, X in ends:
            if body is None:
                d += sign * X
        for j, (sign, body, X) in enumerate(bodies):
            q0, u = q[7 * body + 3], q[7 * body + 4:7 * body + 7]
            J = np.empty((3, 4))
            J[:, 0] = 2.0 * (q0 * X + _cross(u, X))
            J[:, 1:] = 2.0 * (np.outer(u, X) - np.outer(X, u) + (u @ X) * np.eye(3) - q0 * _hat(X))
            d += sign * (q[7 * body:7 * body + 3] + 0.5 * J @ q[7 * body + 3:7 * body + 7])
            D[:, 7 * j:7 * j + 3], D[:, 7 * j + 3:7 * j + 7] = sign * np.eye(3), sign * J
        return d, D, [c for _, body, _ in bodies for c in (self._t(body), self._r(body))]

    @staticmethod
    def _spring_hessian(ends, c) -> np.ndarray:
        """``H(c) = Σᵢ cᵢ ∇²dᵢ`` on the spring's columns (constant in q): ``±2 X̄ᵀ c⁺`` per body."""
        bodies = [(sign, X) for sign, body, X in ends if body is not None]
        H = np.zeros((7 * len(bodies), 7 * len(bodies)))
        c_plus = np.zeros((4, 4))
        c_plus[0, 1:], c_plus[1:, 0], c_plus[1:, 1:] = -c, c, _hat(c)
        for j, (sign, X) in enumerate(bodies):
            H[7 * j + 3:7 * j + 7, 7 * j + 3:7 * j + 7] = sign * 2.0 * minus(X).T @ c_plus
        return H

    @staticmethod
    def _scatter(cols, A):
        """Blocks ``(rows, cols, values)`` of a matrix A on the columns ``cols`` of one spring."""
        edges = np.cumsum([0] + [c.stop - c.start for c in cols])
        return [(ci, cj, A[edges[i]:edges[i + 1], edges[j]:edges[j + 1]])
                for i, ci in enumerate(cols) for j, cj in enumerate(cols)]

    @staticmethod
    def _add(out, cols, a):
        edges = np.cumsum([0] + [c.stop - c.start for c in cols])
        for i, c in enumerate(cols):
            out[c] += a[edges[i]:edges[i + 1]]

    # -- potential: gravity, V = −Σ m g·φ, and springs, V = ½ k (ℓ − L₀)² -----------------------
    def potential(self, q) -> float:
        V = float(-sum(self.masses[a] * self.g_vector @ q[self._t(a)] for a in range(self.N)))
        for spring, ends in self.springs:
            V += 0.5 * spring.stiffness * (np.linalg.norm(self._spring_vector(ends, q)[0]) - spring.rest_length) ** 2
        return V

    def _gravity_gradient(self) -> np.ndarray:
        """``∇V`` of gravity (constant; a copy, to which springs add)."""
        return self._gravity.copy()

    def grad_potential(self, q) -> np.ndarray:
        """Gravity and ``k (1 − L₀/ℓ) Dᵀd`` per spring."""
        grad = self._gravity_gradient()
        for spring, ends in self.springs:
            d, D, cols = self._spring_vector(ends, q)
            self._add(grad, cols, _tension(spring, np.linalg.norm(d)) * D.T @ d)
        return grad

    def hess_potential(self, q, *, sparse: bool = False):
        """``∇²V = Σ k (1 − L₀/ℓ)(DᵀD + H(d)) + (k L₀/ℓ³) Dᵀd (Dᵀd)ᵀ`` over the springs."""
        blocks = []
        for spring, ends in self.springs:
            d, D, cols = self._spring_vector(ends, q)
            length, a = np.linalg.norm(d), D.T @ d
            hess = _tension(spring, length) * (D.T @ D + self._spring_hessian(ends, d))
            if spring.rest_length > 0:
                hess = hess + spring.stiffness * spring.rest_length / length**3 * np.outer(a, a)
            blocks += self._scatter(cols, hess)
        return _matrix((self.n, self.n), blocks, sparse)

    def dg_potential(self, q0, q1, *, sparse: bool = False):
        """Discrete gradient (module docstring): gravity's gradient (V linear in φ) and per spring
        ``k (1 − L₀/ℓ̄) D(q^{n+1/2})ᵀ d̄``; with its Jacobian in ``q1``."""
        grad, blocks = self._gravity_gradient(), []
        for spring, ends in self.springs:
            d0 = self._spring_vector(ends, q0)[0]
            d1, D1, cols = self._spring_vector(ends, q1)
            _, Dm, _ = self._spring_vector(ends, 0.5 * (q0 + q1))
            l0, l1 = np.linalg.norm(d0), np.linalg.norm(d1)
            mean_length, d_bar = 0.5 * (l0 + l1), 0.5 * (d0 + d1)
            tension, w = _tension(spring, mean_length), Dm.T @ d_bar
            self._add(grad, cols, tension * w)
            jac = 0.5 * tension * (self._spring_hessian(ends, d_bar) + Dm.T @ D1)
            if spring.rest_length > 0:  # ∂ℓ̄/∂q1 = ½ D1ᵀd1/ℓ1
                jac = jac + 0.5 * spring.stiffness * spring.rest_length / mean_length**2 * np.outer(w, D1.T @ d1 / l1)
            blocks += self._scatter(cols, jac)
        return grad, _matrix((self.n, self.n), blocks, sparse)

    # -- constraints ------------------------------------------------------------------------------
    def constraint(self, q) -> np.ndarray:
        """``g(q)``: ``½(q_a·q_a − 1)`` per body (30), ``p_a − p_b`` per joint (one compiled call)."""
        ends = self._ends.on_bodies
        return _dense_constraints(q, self.N, self._ground_points, ends.joint, ends.sign, ends.body, ends.X)

    def constraint_jacobian(self, q, *, sparse: bool = False):
        """``∇g(q)``, shape (m, n): ``q_aᵀ`` per unit constraint, ``±[I, ∂(R(q)X)/∂q]`` per joint end
        (dense: one compiled call)."""
        ends = self._ends.on_bodies
        if not sparse:
            return _dense_constraint_jacobian(q, self.N, self.m, ends.joint, ends.sign, ends.body, ends.X)
        turned = ends.sign[:, None, None] * _body_points(q, ends.body, ends.X)[1]
        return self._patterns["jacobian"].matrix([q[self._R][:, None, :], self._end_identity, turned], sparse)

    def constraint_hessian(self, q, lam, *, sparse: bool = False):
        """``Σ λ_k ∇²g_k``: ``λ_a I₄`` per unit constraint, ``±2 X̄ᵀ μ⁺`` per joint end (constant;
        dense: one compiled call)."""
        ends = self._ends.on_bodies
        if not sparse:
            return _dense_constraint_hessian(lam, self.N, ends.joint, ends.body, self._end_lever)
        mu = lam[self.N:].reshape(-1, 3)[ends.joint]
        return self._patterns["hessian"].matrix([lam[: self.N, None, None] * _EYE4, _end_hessians(self._end_lever, mu)],
                                                sparse)

    def external_force(self, q, v, t):
        """Dampers and applied loads at ``(q, v, t)``: ``(f, ∂f/∂q, ∂f/∂v)``, or ``None`` if the
        model has neither (module docstring).

        A damper's ``f = −(c/ℓ²)(dᵀD v) Dᵀd`` with its exact derivatives. A load's callables get the
        body states of ``(q, v)`` at time ``t``; the derivatives cover the lever and the quaternion
        (``2 X̄ᵀ f⁺``, ``2 τ⁺``), not the callables' own dependence on the state (unknown to the
        formulation: a state-dependent load makes Newton converge linearly, to the same solution).
        """
        dampers = [(spring, ends) for spring, ends in self.springs if spring.damping > 0]
        if not dampers and not self.loads:
            return None
        f, f_q, f_v = np.zeros(self.n), [], []
        for spring, ends in dampers:
            d, D, cols = self._spring_vector(ends, q)
            a = D.T @ d
            vl = np.concatenate([v[c] for c in cols])
            r, ll = a @ vl, d @ d  # ℓ ℓ̇ and ℓ²
            c = spring.damping
            A = D.T @ D + self._spring_hessian(ends, d)  # ∂a/∂q
            self._add(f, cols, -c * r / ll * a)
            f_q += self._scatter(cols, -c * (np.outer(a, A @ vl) / ll + r / ll * A - 2.0 * r / ll**2 * np.outer(a, a)))
            f_v += self._scatter(cols, -c / ll * np.outer(a, a))
        states = self.body_states(t, q[None], v[None]) if self.loads else None
        for k, (load, X) in enumerate(self.loads):
            t_, r = self._t(load.body), self._r(load.body)
            quat = q[r]
            if load.force is not None:
                force = vector(f"loads[{k}].force(t, states)", load.force(t, states), (3,))
                f[t_] += force
                f[r] += rotate_jacobian(quat, X).T @ force
                f_q.append((r, r, 2.0 * minus(X).T @ plus(force)))
            if load.torque is not None:
                torque = vector(f"loads[{k}].torque(t, states)", load.torque(t, states), (3,))
                f[r] += 2.0 * plus(torque) @ quat  # 2E(q)ᵀτ = 2τ⁺q
                f_q.append((r, r, 2.0 * plus(torque)))
        shape = (self.n, self.n)
        return f, _matrix(shape, f_q, False), _matrix(shape, f_v, False)

    # -- states -----------------------------------------------------------------------------------
    def initial_state(self) -> np.ndarray:
        """Livens state ``[q, p, v, λ]`` of the model's initial states (``v_q = ½ G(q)ᵀ Ω``, eq. 44)."""
        q, v = np.zeros(self.n), np.zeros(self.n)
        for a, body in enumerate(self.model.bodies):
            quat = from_matrix(body.rotation @ self.V[a])
            q[self._t(a)], q[self._r(a)] = body.position, quat
            v[self._t(a)] = body.velocity
            v[self._r(a)] = 0.5 * G(quat).T @ (self.V[a].T @ body.angular_velocity)
        return np.concatenate([q, self.mass_matrix(q, sparse=True) @ v, v, np.zeros(self.m)])

    def body_states(self, t, q, v) -> BodyStates:
        """Body poses and velocities of coordinates ``q`` and velocities ``v`` (shape (T, n)):
        ``R = R(q) Vᵀ`` (the quadratic formula, so a unit-constraint drift shows), ``Ω = V (2 G(q) v)``."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        q, v = np.atleast_2d(q), np.atleast_2d(v)
        quat, V = q[:, self._R], np.array(self.V).reshape(self.N, 3, 3)  # every instant and body at once
        R = E(quat) @ _transpose(G(quat)) @ _transpose(V)
        W = _times(V, 2.0 * _times(G(quat), v[:, self._R]))
        return BodyStates(t, q[:, self._T], R, v[:, self._T], W)

    def angular_momentum(self, q, p) -> np.ndarray:
        """``Σ φ_a × p_φa + ½ E(q_a) p_qa`` about the origin."""
        T, R = self._T, self._R
        return np.sum(np.cross(q[T], p[T]) + angular_momentum(q[R], p[R][..., None])[..., 0], axis=0)


def _cross(a, b) -> np.ndarray:
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def _hat(a) -> np.ndarray:
    return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])


def _tension(spring, length) -> float:
    """``k (1 − L₀/ℓ)``: the spring force per unit length of d (no division for L₀ = 0)."""
    if spring.rest_length == 0:
        return spring.stiffness
    return spring.stiffness * (1.0 - spring.rest_length / length)


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
        refuse(model, "single-body quaternion schemes", "springs", "loads", "dampers", "bonds", "contacts")
        if model.n_bodies != 1:
            raise ValueError(f"single-body quaternion schemes: the model must be one rigid body (it has "
                             f"{model.n_bodies} bodies)")
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
