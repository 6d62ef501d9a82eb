"""Rigid multibody systems in absolute coordinates: bodies, joint equations and force elements.

The assembly of paper 002 (Holzinger, Arnold & Gerstmayr 2024, eqs. 9–23) for any number of
rigid bodies. Body ``i`` carries its centre of mass ``xᵢ`` and rotation parameters ``ρᵢ`` in one
of three formulations (see :mod:`mbslib.systems.lie_group_mbs`):

- ``RV`` (Lie group, eqs. 15–23): ``ρ = ψ`` rotation vector, velocity ``[uᵢ; ωᵢ]`` with ``ωᵢ`` in
  the body frame, constant mass matrix, LGT update ``ψ ⋄ Δψ`` (eq. 30);
- ``RXYZ`` (classical formulation 2, eqs. 12–14) with Tait–Bryan xyz angles;
- ``EP`` (classical formulation 2) with Euler parameters and one normalisation per body.

The coordinates are stacked body by body: ``q = [x₀, ρ₀, x₁, ρ₁, …]``, and so are velocities.

Joints are written as rows of two kinds, which together give Exudyn's generic joint with a
constrained-axes mask (spherical, revolute, universal, prismatic joints, ground constraints):

- ``POSITION``: ``wᵀ (x_b + R_b p_b − x_a − R_a p_a) − c`` with a fixed inertial direction ``w``;
- ``ALIGN``: ``(R_a u_a)ᵀ (R_b u_b) − c`` for body-fixed directions ``u_a``, ``u_b``.

Body index −1 is the ground (``x = 0``, ``R = I``); a prismatic joint to the ground is two
``POSITION`` and three ``ALIGN`` rows (:meth:`System.prismatic`). Force elements are gravity, torsional
spring–dampers about a joint axis whose offset follows a symmetric constant-acceleration
("bang–bang") profile (the PD joint controllers of the Puma 560, Sect. 4.4) and point-to-point
spring–dampers between two body points.

Everything the numba kernels need sits in one flat parameter vector ``P``
(:meth:`System.params`)::

    header   [n_bodies, n_rows, n_springs, g (3), n_points]                     7
    bodies   n_bodies × [m, J₁, J₂, J₃]  (principal inertia about the COM)      4 each
    rows     n_rows × [kind, a, b, w or u_a (3), u_b (3), p_a (3), p_b (3), c]  16 each
    springs  n_springs × [a, b, e_a (3), f_a (3), e_b (3), k, d, φ₀, Δφ, T]     16 each
    points   n_points × [a, b, p_a (3), p_b (3), k, L₀, c]                      11 each

A spring measures the angle ``θ = atan2((R_a f_a)ᵀ R_b e_b, (R_a e_a)ᵀ R_b e_b)`` about the axis
``R_a (e_a × f_a)`` and applies ``τ = −k (θ − θ_ref(t)) − d (θ̇ − θ̇_ref(t))`` (the difference taken
modulo 2π) to body b, and ``−τ`` to body a. It derives from the energy ``½ k (θ − θ_ref)²`` when
``e_b`` stays in the plane of ``e_a`` and ``f_a``, as a revolute joint about the spring axis
keeps it; without such a joint it still acts about its axis only. A point spring–damper between
``x_a + R_a p_a`` and ``x_b + R_b p_b`` (``d`` from the first to the second, ``ℓ = |d|``,
``e = d/ℓ``) pulls body b with ``F = −(k (ℓ − L₀) + c e·ḋ) e`` at its point and body a with
``−F``; it derives from ``½ k (ℓ − L₀)²`` and dissipates ``c (e·ḋ)²``. For EP the kernels evaluate
rotations by the quadratic formula, which is a rotation only on the unit sphere ``|p| = 1``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numba
import numpy as np

from mbslib.kernels import (
    compose_rv,
    cross3,
    drx_dp,
    g_ep,
    g_rxyz,
    gdot_rxyz,
    mm,
    mtv,
    mv,
    rotation_ep,
    rotation_rv,
    rotation_rxyz,
    texp_so3,
)
from mbslib.loads import bang_bang

#: Formulations.
RV, RXYZ, EP = 0, 1, 2
FORMULATIONS = {"RV": RV, "Rxyz": RXYZ, "EP": EP}
#: Joint row kinds.
POSITION, ALIGN = 0, 1
#: Body index of the ground in the joints and springs of a :class:`System`.
GROUND = -1
_HEADER, _BODY, _ROW, _SPRING, _POINT = 7, 4, 16, 16, 11


# ---------------------------------------------------------------------------------------------
# Layout of P and q
# ---------------------------------------------------------------------------------------------


@numba.njit(cache=True)
def n_bodies(P):
    return int(P[0])


@numba.njit(cache=True)
def n_rot(form):
    """Rotation parameters per body: 4 (EP) or 3."""
    return 4 if form == EP else 3


@numba.njit(cache=True)
def n_coordinates(form, P):
    return n_bodies(P) * (3 + n_rot(form))


@numba.njit(cache=True)
def n_constraints(form, P):
    """Joint rows plus one normalisation per body (EP)."""
    return int(P[1]) + (n_bodies(P) if form == EP else 0)


@numba.njit(cache=True)
def _row(P, k):
    o = _HEADER + _BODY * n_bodies(P) + _ROW * k
    return P[o:o + _ROW]


@numba.njit(cache=True)
def _spring(P, k):
    o = _HEADER + _BODY * n_bodies(P) + _ROW * int(P[1]) + _SPRING * k
    return P[o:o + _SPRING]


@numba.njit(cache=True)
def _point_spring(P, k):
    o = _HEADER + _BODY * n_bodies(P) + _ROW * int(P[1]) + _SPRING * int(P[2]) + _POINT * k
    return P[o:o + _POINT]


# ---------------------------------------------------------------------------------------------
# Kinematics of one body
# ---------------------------------------------------------------------------------------------


@numba.njit(cache=True)
def _rotation(form, r):
    if form == RV:
        return rotation_rv(r)
    if form == RXYZ:
        return rotation_rxyz(r)
    return rotation_ep(r)


@numba.njit(cache=True)
def _kinematic(form, r):
    """``Ĝ`` with ``ω = Ĝ ρ̇`` (identity for RV, whose velocity is ω); (3, l)."""
    if form == RV:
        return np.eye(3)
    if form == RXYZ:
        return g_rxyz(r)
    return g_ep(r)


@numba.njit(cache=True)
def _frames(form, q, P):
    """Centres ``X`` (nb + 1, 3) and rotations ``R`` (nb + 1, 3, 3) of all bodies; the last
    entry is the ground, so that body index −1 picks it."""
    nb = n_bodies(P)
    m = 3 + n_rot(form)
    X = np.zeros((nb + 1, 3))
    R = np.zeros((nb + 1, 3, 3))
    for i in range(nb):
        X[i] = q[i * m:i * m + 3]
        R[i] = _rotation(form, q[i * m + 3:(i + 1) * m])
    R[nb] = np.eye(3)
    return X, R


@numba.njit(cache=True)
def _d_rotate_t(form, r, R, a, w):
    """``Dᵀw`` with ``D = ∂(R a)/∂ρ`` (Rxyz, EP exact) or ``∂(R exp(z̃) a)/∂z`` at z = 0 (RV).

    For RV and Rxyz ``D = −R ã Ĝ`` (``Ĝ = I`` for RV), so ``Dᵀw = Ĝᵀ (a × Rᵀw)``; ``R`` is the
    rotation of ``r``; shape (l,).
    """
    if form == EP:
        return mtv(drx_dp(r, a), w)
    d = cross3(a, mtv(R, w))
    if form == RV:
        return d
    return mtv(g_rxyz(r), d)


@numba.njit(cache=True)
def body_position(form, q, i):
    """Centre of mass of body i (zero for the ground)."""
    if i < 0:
        return np.zeros(3)
    o = i * (3 + n_rot(form))
    return q[o:o + 3].copy()


@numba.njit(cache=True)
def body_rotation(form, q, i):
    """Rotation matrix of body i (identity for the ground)."""
    if i < 0:
        return np.eye(3)
    nb = 3 + n_rot(form)
    return _rotation(form, q[i * nb + 3:(i + 1) * nb])


@numba.njit(cache=True)
def body_angular_velocity(form, q, v, i):
    """Angular velocity of body i in its body frame (zero for the ground)."""
    if i < 0:
        return np.zeros(3)
    nb = 3 + n_rot(form)
    return mv(_kinematic(form, q[i * nb + 3:(i + 1) * nb]), v[i * nb + 3:(i + 1) * nb])


# ---------------------------------------------------------------------------------------------
# Equations of motion (eqs. 9–14, 23)
# ---------------------------------------------------------------------------------------------


@numba.njit(cache=True)
def mass_matrix(form, q, P):
    """``blockdiag(mᵢ I, Jᵢ)`` (RV, constant) or ``blockdiag(mᵢ I, ĜᵢᵀJᵢĜᵢ)`` (eq. 14)."""
    l = n_rot(form)
    nb = 3 + l
    n = n_coordinates(form, P)
    M = np.zeros((n, n))
    for i in range(n_bodies(P)):
        o = i * nb
        b = _HEADER + _BODY * i
        for k in range(3):
            M[o + k, o + k] = P[b]
        G = _kinematic(form, q[o + 3:o + nb])
        J = np.diag(P[b + 1:b + 4].copy())
        M[o + 3:o + nb, o + 3:o + nb] = mm(mm(G.T.copy(), J), G)
    return M


@numba.njit(cache=True)
def spring_angle(form, q, P, k):
    """Angle θ ∈ (−π, π] of spring k and its axis in the inertial frame."""
    s = _spring(P, k)
    X, R = _frames(form, q, P)
    return _angle(R[int(s[0])], R[int(s[1])], s)


@numba.njit(cache=True)
def _angle(Ra, Rb, s):
    ea, fa, eb = mv(Ra, s[2:5]), mv(Ra, s[5:8]), mv(Rb, s[8:11])
    return np.arctan2(np.sum(fa * eb), np.sum(ea * eb)), cross3(ea, fa)


@numba.njit(cache=True)
def _spring_moment(Ra, Rb, wa, wb, s, t):
    """Inertial moment ``τ axis`` of spring ``s`` on body b (body a gets the opposite);
    ``wa``, ``wb`` are inertial angular velocities."""
    theta, axis = _angle(Ra, Rb, s)
    ref, ref_rate, _ = bang_bang(s[13], s[14], s[15], t)
    e = theta - ref
    e -= 2.0 * np.pi * np.round(e / (2.0 * np.pi))
    return (-s[11] * e - s[12] * (np.sum(axis * (wb - wa)) - ref_rate)) * axis


@numba.njit(cache=True)
def _inertial_rates(form, q, v, R, P):
    """Inertial angular velocities ``Rᵢ ωᵢ`` (nb + 1, 3); the last row is the ground."""
    W = np.zeros((R.shape[0], 3))
    for i in range(n_bodies(P)):
        W[i] = mv(R[i], body_angular_velocity(form, q, v, i))
    return W


@numba.njit(cache=True)
def body_torques(form, q, v, t, P):
    """Torques of the spring–dampers on every body, in the body frames; (n_bodies, 3)."""
    X, R = _frames(form, q, P)
    W = _inertial_rates(form, q, v, R, P)
    tau = np.zeros((n_bodies(P), 3))
    for k in range(int(P[2])):
        s = _spring(P, k)
        a, b = int(s[0]), int(s[1])
        m = _spring_moment(R[a], R[b], W[a], W[b], s, t)
        if b >= 0:
            tau[b] += mtv(R[b], m)
        if a >= 0:
            tau[a] -= mtv(R[a], m)
    return tau


@numba.njit(cache=True)
def point_spring_loads(form, q, v, P):
    """Forces (world frame) and torques (body frames) of the point spring–dampers on every body;
    two arrays (n_bodies, 3)."""
    X, R = _frames(form, q, P)
    nb = n_bodies(P)
    force, tau = np.zeros((nb + 1, 3)), np.zeros((nb + 1, 3))  # the last row: the ground
    for k in range(int(P[6])):
        s = _point_spring(P, k)
        ends = ((int(s[0]), s[2:5]), (int(s[1]), s[5:8]))
        x, u = np.zeros((2, 3)), np.zeros((2, 3))
        for e, (i, p) in enumerate(ends):
            x[e] = X[i] + mv(R[i], p)
            if i >= 0:
                o = i * (3 + n_rot(form))
                u[e] = v[o:o + 3] + mv(R[i], cross3(body_angular_velocity(form, q, v, i), p))
        d, d_dot = x[1] - x[0], u[1] - u[0]
        stiffness, rest, damping = s[8], s[9], s[10]
        if rest == 0.0 and damping == 0.0:
            F = -stiffness * d
        else:
            length = np.sqrt(np.sum(d * d))
            e_ = d / length
            F = -(stiffness * (length - rest) + damping * np.sum(e_ * d_dot)) * e_
        for e, (i, p) in enumerate(ends):
            sign = 2.0 * e - 1.0  # a: −F, b: +F
            force[i] += sign * F
            tau[i] += cross3(p, mtv(R[i], sign * F))
    return force[:nb], tau[:nb]


@numba.njit(cache=True)
def _rotational_force(form, r, rd, J, tau):
    """Rotational force of one body: ``τ − ω̃Jω`` (RV) or ``Ĝᵀ(τ − ω̃Jω − J Ġ ρ̇)``; (l,)."""
    G = _kinematic(form, r)
    w = mv(G, rd)
    rhs = tau - cross3(w, J * w)
    if form == RV:
        return rhs
    Gd = gdot_rxyz(r, rd) if form == RXYZ else g_ep(rd)  # Ĝ(p) is linear: d/dt Ĝ(p) = Ĝ(ṗ)
    return mv(G.T.copy(), rhs - J * mv(Gd, rd))


@numba.njit(cache=True)
def force(form, q, v, t, P):
    """``g`` (RV, eq. 23) or ``Ĥᵀĝ`` (eqs. 12, 14): gravity, springs, point springs, gyroscopic terms."""
    nb = 3 + n_rot(form)
    f = np.zeros(n_coordinates(form, P))
    point_force, point_tau = point_spring_loads(form, q, v, P)
    tau = body_torques(form, q, v, t, P) + point_tau
    for i in range(n_bodies(P)):
        o = i * nb
        b = _HEADER + _BODY * i
        f[o:o + 3] = P[b] * P[3:6] + point_force[i]
        f[o + 3:o + nb] = _rotational_force(form, q[o + 3:o + nb], v[o + 3:o + nb],
                                            P[b + 1:b + 4], tau[i])
    return f


@numba.njit(cache=True)
def constraint(form, q, P):
    """Joint rows (module docstring) and ``pᵢᵀpᵢ − 1`` (EP); shape (n_constraints,)."""
    n_rows = int(P[1])
    phi = np.zeros(n_constraints(form, P))
    X, R = _frames(form, q, P)
    for k in range(n_rows):
        r = _row(P, k)
        a, b = int(r[1]), int(r[2])
        if int(r[0]) == POSITION:
            d = X[b] + mv(R[b], r[12:15]) - X[a] - mv(R[a], r[9:12])
            phi[k] = np.sum(r[3:6] * d) - r[15]
        else:
            phi[k] = np.sum(mv(R[a], r[3:6]) * mv(R[b], r[6:9])) - r[15]
    if form == EP:
        for i in range(n_bodies(P)):
            p = q[7 * i + 3:7 * i + 7]
            phi[n_rows + i] = np.sum(p * p) - 1.0
    return phi


@numba.njit(cache=True)
def constraint_jacobian(form, q, P):
    """``B = ∂Φ̇/∂v`` (RV: along ``R exp(z̃)``, eq. 10) or ``Φ_q`` (Rxyz, EP); (j, n)."""
    l = n_rot(form)
    nb = 3 + l
    n_rows = int(P[1])
    B = np.zeros((n_constraints(form, P), n_coordinates(form, P)))
    X, R = _frames(form, q, P)
    for k in range(n_rows):
        r = _row(P, k)
        a, b = int(r[1]), int(r[2])
        if int(r[0]) == POSITION:
            w = r[3:6]
            for body, p, sign in ((a, r[9:12], -1.0), (b, r[12:15], 1.0)):
                if body >= 0:
                    o = body * nb
                    B[k, o:o + 3] += sign * w
                    B[k, o + 3:o + nb] += sign * _d_rotate_t(form, q[o + 3:o + nb], R[body], p, w)
        else:
            for body, u, other in ((a, r[3:6], mv(R[b], r[6:9])), (b, r[6:9], mv(R[a], r[3:6]))):
                if body >= 0:
                    o = body * nb
                    B[k, o + 3:o + nb] += _d_rotate_t(form, q[o + 3:o + nb], R[body], u, other)
    if form == EP:
        for i in range(n_bodies(P)):
            o = 7 * i + 3
            B[n_rows + i, o:o + 4] = 2.0 * q[o:o + 4]
    return B


# ---------------------------------------------------------------------------------------------
# Lie group update (Algorithm 1) and the tangent operator
# ---------------------------------------------------------------------------------------------


@numba.njit(cache=True)
def uac(form, q_n, dq):
    """Update absolute coordinates: ``ψᵢ ⋄ Δψᵢ`` per body (RV, eq. 30), addition otherwise."""
    q = q_n + dq
    if form == RV:
        for o in range(3, q.size, 6):
            q[o:o + 3] = compose_rv(q_n[o:o + 3], dq[o:o + 3])
    return q


@numba.njit(cache=True)
def tangent(form, dq):
    """``T_exp(Δq)``: blockdiag(I, T_SO(3)(Δψᵢ), …) for RV, identity otherwise."""
    T = np.eye(dq.size)
    if form == RV:
        for o in range(3, dq.size, 6):
            T[o:o + 3, o:o + 3] = texp_so3(dq[o:o + 3])
    return T


@numba.njit(cache=True)
def energy(form, q, v, P):
    """Kinetic, gravitational and point-spring energy ``½ vᵀMv − Σ mᵢ gᵀxᵢ + Σ ½ k (ℓ − L₀)²``
    (torsional springs excluded)."""
    e = 0.5 * np.sum(v * mv(mass_matrix(form, q, P), v))
    for i in range(n_bodies(P)):
        e -= P[_HEADER + _BODY * i] * np.sum(P[3:6] * body_position(form, q, i))
    X, R = _frames(form, q, P)
    for k in range(int(P[6])):
        s = _point_spring(P, k)
        a, b = int(s[0]), int(s[1])
        d = X[b] + mv(R[b], s[5:8]) - X[a] - mv(R[a], s[2:5])
        e += 0.5 * s[8] * (np.sqrt(np.sum(d * d)) - s[9]) ** 2
    return e


# ---------------------------------------------------------------------------------------------
# Building a system
# ---------------------------------------------------------------------------------------------


def check_params(P) -> np.ndarray:
    """``P`` as a float array, or ValueError if its length does not match its header."""
    P = np.ascontiguousarray(P, dtype=float)
    if P.ndim != 1 or P.size < _HEADER:
        raise ValueError(f"P must be a flat multibody parameter vector, got shape {P.shape}")
    n_b, n_r, n_s, n_p = *P[:3], P[6]
    expected = _HEADER + _BODY * n_b + _ROW * n_r + _SPRING * n_s + _POINT * n_p
    if min(n_b, n_r, n_s, n_p) < 0 or P.size != expected or n_b < 1:
        raise ValueError(f"P (length {P.size}) does not match its header [{n_b:g} bodies, {n_r:g} rows, "
                         f"{n_s:g} springs, {n_p:g} point springs]; use System.params()")
    return P


def rxyz_from_matrix(R) -> np.ndarray:
    """Tait–Bryan xyz angles ``φ`` with ``R = R_x(φ₀) R_y(φ₁) R_z(φ₂)``, ``|φ₁| < π/2``."""
    return np.array([np.arctan2(-R[1, 2], R[2, 2]), np.arcsin(np.clip(R[0, 2], -1, 1)),
                     np.arctan2(-R[0, 1], R[0, 0])])


def body_coordinates(form: int, x, R, u, omega) -> np.ndarray:
    """``[q; v]`` of bodies with centres ``x``, rotations ``R``, COM velocities ``u`` and body
    angular velocities ``omega`` (arrays over bodies) in formulation ``form``."""
    from scipy.spatial.transform import Rotation

    qs, vs = [], []
    for xi, Ri, ui, wi in zip(x, R, u, omega, strict=True):
        if form == RV:
            rot, rate = Rotation.from_matrix(Ri).as_rotvec(), np.asarray(wi, float)
        elif form == RXYZ:
            rot = rxyz_from_matrix(Ri)
            rate = np.linalg.solve(g_rxyz(rot), wi)
        else:
            xyzw = Rotation.from_matrix(Ri).as_quat()
            rot = np.array([xyzw[3], *xyzw[:3]])
            rate = 0.25 * g_ep(rot).T @ wi  # ṗ = ½ p ∘ [0, ω], and Ĝ Ĝᵀ = 4 I
        qs.append(np.concatenate([xi, rot]))
        vs.append(np.concatenate([ui, rate]))
    return np.concatenate(qs + vs)


@dataclass
class System:
    """A rigid multibody system under construction: bodies, joint rows, torsional and point
    spring–dampers.

    Bodies are numbered in the order of :meth:`body`; use :data:`GROUND` (−1) for the ground.
    Points and directions are given in the body frames (centre of mass as origin).
    """

    gravity: tuple = (0.0, 0.0, -9.81)
    bodies: list = field(default_factory=list)
    rows: list = field(default_factory=list)
    springs: list = field(default_factory=list)
    point_springs: list = field(default_factory=list)

    def body(self, mass: float, inertia) -> int:
        """Add a body with principal inertia ``inertia`` (3,) about its centre of mass."""
        inertia = np.asarray(inertia, dtype=float)
        if not mass > 0:
            raise ValueError(f"mass must be positive, got {mass!r}")
        if inertia.shape != (3,) or not np.all(inertia > 0):
            raise ValueError(f"inertia must be three positive principal values, got {inertia!r}")
        self.bodies.append([mass, *inertia])
        return len(self.bodies) - 1

    def _check(self, *indices):
        for i in indices:
            if not GROUND <= i < len(self.bodies):
                raise ValueError(f"body index {i} out of range (ground = -1, {len(self.bodies)} bodies)")

    def position(self, a, pa, b, pb, direction, value=0.0):
        """One row ``wᵀ (x_b + R_b p_b − x_a − R_a p_a) = value``, ``w`` inertial."""
        self._check(a, b)
        self.rows.append([POSITION, a, b, *direction, 0, 0, 0, *pa, *pb, value])

    def align(self, a, ua, b, ub, value=0.0):
        """One row ``(R_a u_a)ᵀ (R_b u_b) = value``."""
        self._check(a, b)
        self.rows.append([ALIGN, a, b, *ua, *ub, 0, 0, 0, 0, 0, 0, value])

    def spherical(self, a, pa, b, pb):
        """Points ``p_a`` of body a and ``p_b`` of body b coincide (3 rows)."""
        for w in np.eye(3):
            self.position(a, pa, b, pb, w)

    def revolute(self, a, pa, axis_a, b, pb, axis_b):
        """Spherical joint plus the axes ``axis_a`` (body a) and ``axis_b`` (body b) parallel."""
        self.spherical(a, pa, b, pb)
        for u in _perpendiculars(axis_a):
            self.align(a, u, b, axis_b)

    def spring(self, a, ea, fa, b, eb, stiffness, damping, start=0.0, change=0.0, duration=1.0):
        """Torsional spring–damper about ``e_a × f_a`` (body a) with the bang–bang offset
        ``start → start + change`` over ``duration``; ``e_b`` is the zero direction of body b."""
        self._check(a, b)
        if not (stiffness >= 0 and damping >= 0 and duration > 0):
            raise ValueError("stiffness and damping must be non-negative, duration positive")
        self.springs.append([a, b, *ea, *fa, *eb, stiffness, damping, start, change, duration])

    def prismatic(self, pa, axis, b, pb, rotation=None):
        """Body b slides along the ground line through ``p_a`` (world frame) with direction
        ``axis`` and keeps the orientation ``rotation`` (default: the identity) (5 rows).

        Its point ``p_b`` stays on the line (rows along the two normals of :meth:`revolute`), and
        the entries ``A[1,2], A[2,0], A[0,1]`` of ``A = rotationᵀ R_b`` vanish, which near
        ``A = I`` (their derivative there is the rotation vector of ``A``) leaves only ``A = I``.
        """
        rotation = np.eye(3) if rotation is None else np.asarray(rotation, dtype=float)
        for w in _perpendiculars(axis):
            self.position(GROUND, pa, b, pb, w)
        for i, j in ((1, 2), (2, 0), (0, 1)):
            self.align(GROUND, rotation[:, i], b, np.eye(3)[j])

    def point_spring(self, a, pa, b, pb, stiffness, rest_length=0.0, damping=0.0):
        """Point spring–damper from ``p_a`` (body a) to ``p_b`` (body b): ``½ k (ℓ − L₀)²`` and
        ``c (e·ḋ)²`` dissipated. With ``L₀ > 0`` or ``c > 0`` its length must stay positive."""
        self._check(a, b)
        if a == b:
            raise ValueError(f"a point spring needs two different bodies, got {a} twice")
        for name, value in (("stiffness", stiffness), ("rest_length", rest_length), ("damping", damping)):
            if not (np.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be a finite non-negative number, got {value!r}")
        self.point_springs.append([a, b, *pa, *pb, stiffness, rest_length, damping])

    @classmethod
    def from_params(cls, P) -> System:
        """The system of a parameter vector ``P``, the inverse of :meth:`params`: to add rows or
        force elements to a system that a formulation built from a description
        (:func:`mbslib.formulations.lie_group.absolute_model`)."""
        P = check_params(P)
        blocks, o = [], _HEADER
        for count, width in ((P[0], _BODY), (P[1], _ROW), (P[2], _SPRING), (P[6], _POINT)):
            blocks.append(P[o:o + int(count) * width].reshape(int(count), width).tolist())
            o += int(count) * width
        return cls(tuple(P[3:6].tolist()), *blocks)

    def params(self) -> np.ndarray:
        """The flat parameter vector ``P`` of the kernels (layout in the module docstring)."""
        return np.concatenate([
            [len(self.bodies), len(self.rows), len(self.springs), *self.gravity, len(self.point_springs)],
            np.ravel(self.bodies), np.ravel(self.rows), np.ravel(self.springs), np.ravel(self.point_springs),
        ]).astype(float)


def _perpendiculars(axis):
    """Two unit vectors perpendicular to ``axis`` and to each other."""
    axis = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    helper = np.eye(3)[np.argmin(np.abs(axis))]
    e1 = np.cross(axis, helper)
    e1 /= np.linalg.norm(e1)
    return e1, np.cross(axis, e1)
