"""Rigid multibody models in absolute coordinates for the Lie group study of paper 002.

Holzinger, Arnold & Gerstmayr (2024), *Evaluation and implementation of Lie group integration
methods for rigid multibody systems*, Multibody Syst. Dyn. A rigid body stores three position
coordinates ``x`` and rotation parameters ``ρ``; three formulations are compared:

- **RV** (Lie group formulation on R³×SO(3), paper eqs. 15–31): ``ρ = ψ`` is the rotation vector,
  velocities are ``v = [u; ω]`` (inertial translational velocity, body angular velocity), the mass
  matrix ``diag(m I, J)`` is constant and the configuration is updated by the local–global
  transition (LGT) map ``ψ = ψ_n ⋄ Δψ`` (eq. 30, App. A.3);
- **Rxyz** (classical formulation 2, eqs. 12–14) with Tait–Bryan xyz angles ``φ``: the unknowns are
  the coordinates and their time derivatives, the mass matrix ``Ĝᵀ J Ĝ`` depends on ``φ``;
- **EP** (classical formulation 2) with Euler parameters ``p`` and the normalisation constraint
  ``pᵀp − 1 = 0``.

Every model is a numba-compiled set of pure functions dispatched on an integer model code, so
the integrators in :mod:`mbslib.integrators.runge_kutta` and
:mod:`mbslib.integrators.generalized_alpha` compile once for all models. The models are

====  ==============================================  ======  ======  ===========
code  model                                           n_q     n_v     constraints
====  ==============================================  ======  ======  ===========
0     heavy top about the fixed point, RV (ψ)         3       3       0
1     heavy top about the fixed point, Rxyz (φ)       3       3       0
2     heavy top about the fixed point, EP (p)         4       4       1
3     heavy top with spherical joint, RV (x, ψ)       6       6       3
4     heavy top with spherical joint, Rxyz (x, φ)     6       6       3
5     heavy top with spherical joint, EP (x, p)       7       7       4
6     rotor on flexible supports, RV (x, ψ)           6       6       0
7     rotor on flexible supports, Rxyz (x, φ)         6       6       0
8     rotor on flexible supports, EP (x, p)           7       7       1
====  ==============================================  ======  ======  ===========

The parameter vector ``P`` (length 16) is ``[m, J (row-major 3×3, about the centre of mass),
X (centre of mass in the body frame, relative to the fixed point), g (gravity)]`` for the
heavy tops (:meth:`HeavyTop.params`) and ``[m, J, L_L, k, d, t]`` for the rotor
(:meth:`Rotor.params`).

The SO(3) primitives at the top of this module are numba versions of those in
:mod:`mbslib.rotations` (tested against them), written with the Taylor branches of the
paper's App. A.2.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numba
import numpy as np

from mbslib.validation import inertia, positive, vector

# ---------------------------------------------------------------------------------------------
# SO(3) primitives (numba)
# ---------------------------------------------------------------------------------------------


# Small dense kernels written as loops: numba compiles them in a fraction of the time it needs
# for np.cross, np.outer, matmul (BLAS) and np.linalg.solve (LAPACK).


@numba.njit(cache=True)
def cross3(a, b):
    """Cross product ``a × b`` of two 3-vectors."""
    return np.array(
        [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
    )


@numba.njit(cache=True)
def outer3(a, b):
    """Outer product ``a bᵀ`` of two 3-vectors."""
    out = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            out[i, j] = a[i] * b[j]
    return out


@numba.njit(cache=True)
def mm(A, B):
    """Matrix product ``A B``."""
    n, k = A.shape
    m = B.shape[1]
    out = np.zeros((n, m))
    for i in range(n):
        for l in range(k):
            a = A[i, l]
            if a != 0.0:
                for j in range(m):
                    out[i, j] += a * B[l, j]
    return out


@numba.njit(cache=True)
def mv(A, x):
    """Matrix–vector product ``A x``."""
    n, k = A.shape
    out = np.zeros(n)
    for i in range(n):
        acc = 0.0
        for l in range(k):
            acc += A[i, l] * x[l]
        out[i] = acc
    return out


@numba.njit(cache=True)
def solve(A, b):
    """Solve ``A x = b`` by Gaussian elimination with partial pivoting (small dense systems).

    Returns a vector of NaN if ``A`` is singular to working precision.
    """
    n = b.size
    M = A.copy()
    x = b.copy()
    scale = 0.0
    for i in range(n):
        for j in range(n):
            scale = max(scale, abs(M[i, j]))
    for k in range(n):
        p = k
        for i in range(k + 1, n):
            if abs(M[i, k]) > abs(M[p, k]):
                p = i
        if abs(M[p, k]) <= 1e-15 * scale:
            return np.full(n, np.nan)
        if p != k:
            for j in range(n):
                M[k, j], M[p, j] = M[p, j], M[k, j]
            x[k], x[p] = x[p], x[k]
        for i in range(k + 1, n):
            f = M[i, k] / M[k, k]
            if f != 0.0:
                for j in range(k, n):
                    M[i, j] -= f * M[k, j]
                x[i] -= f * x[k]
    for k in range(n - 1, -1, -1):
        acc = x[k]
        for j in range(k + 1, n):
            acc -= M[k, j] * x[j]
        x[k] = acc / M[k, k]
    return x


@numba.njit(cache=True)
def skew(a):
    """``ã`` with ``ã y = a × y``; shape (3, 3)."""
    return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])


@numba.njit(cache=True)
def sinc(x):
    """sin x / x, Taylor series below |x| = 1e-4."""
    if abs(x) < 1e-4:
        return 1.0 - x * x / 6.0 + x**4 / 120.0
    return np.sin(x) / x


@numba.njit(cache=True)
def rotation_rv(psi):
    """Rotation matrix ``exp(ψ̃) = I + sinc φ ψ̃ + ½ sinc²(φ/2) ψ̃²`` of a rotation vector; (3, 3)."""
    phi = np.sqrt(psi[0] ** 2 + psi[1] ** 2 + psi[2] ** 2)
    P = skew(psi)
    s2 = sinc(0.5 * phi)
    return np.eye(3) + sinc(phi) * P + 0.5 * s2 * s2 * mm(P, P)


#: (−1)^k / (2k + 3)! for k = 0 … 10, the series of (φ − sin φ)/φ³.
_TEXP_SERIES = np.array(
    [(-1.0) ** k / float(np.prod(np.arange(1, 2 * k + 4, dtype=float))) for k in range(11)]
)


@numba.njit(cache=True)
def texp_coefficient(phi):
    """``(1 − sin φ/φ)/φ² = (φ − sin φ)/φ³``, with its Taylor polynomial below φ = 1.

    The closed form loses about ``6ε/φ²`` relative to cancellation (7e-13 at φ = 0.01, the
    threshold Exudyn uses); the polynomial up to φ²⁰ is exact to 1e-25 below 1 (App. A.2).
    """
    if phi < 1.0:
        x = phi * phi
        acc = 0.0
        for k in range(10, -1, -1):
            acc = _TEXP_SERIES[k] + x * acc
        return acc
    return (1.0 - np.sin(phi) / phi) / (phi * phi)


#: |B₂ₖ| / (2k)! for k = 1 … 12 (Bernoulli numbers), the series of γ(φ).
_GAMMA_SERIES = np.array(
    [
        1 / 6,
        1 / 30,
        1 / 42,
        1 / 30,
        5 / 66,
        691 / 2730,
        7 / 6,
        3617 / 510,
        43867 / 798,
        174611 / 330,
        854513 / 138,
        236364091 / 2730,
    ]
)
for _k in range(12):
    _GAMMA_SERIES[_k] /= float(np.prod(np.arange(1, 2 * _k + 3, dtype=float)))


@numba.njit(cache=True)
def texp_inv_coefficient(phi):
    """``γ = (1 − (φ/2) cot(φ/2))/φ² = Σ |B₂ₖ| φ^(2k−2)/(2k)!``, series below φ = 1.

    The closed form loses about ``12ε/φ²`` relative to cancellation; twelve terms of the
    series are exact to 1e-20 below 1 (App. A.2).
    """
    if phi < 1.0:
        x = phi * phi
        acc = 0.0
        for k in range(11, -1, -1):
            acc = _GAMMA_SERIES[k] + x * acc
        return acc
    return (1.0 - 0.5 * phi / np.tan(0.5 * phi)) / (phi * phi)


@numba.njit(cache=True)
def texp_so3(omega):
    """Tangent operator ``T(Ω) = I + (cos φ − 1)/φ² Ω̃ + (1 − sin φ/φ)/φ² Ω̃²`` (App. A.1).

    ``R = R_n exp(Ω̃)`` gives the body angular velocity ``ω = T(Ω) Ω̇``. Shape (3, 3).
    """
    phi = np.sqrt(omega[0] ** 2 + omega[1] ** 2 + omega[2] ** 2)
    if phi == 0.0:
        return np.eye(3)
    P = skew(omega)
    s2 = sinc(0.5 * phi)
    return np.eye(3) - 0.5 * s2 * s2 * P + texp_coefficient(phi) * mm(P, P)


@numba.njit(cache=True)
def texp_inv_so3(omega):
    """Inverse tangent operator ``T⁻¹(Ω) = I + ½ Ω̃ + γ Ω̃²`` (App. A.1); valid for φ < 2π; (3, 3)."""
    phi = np.sqrt(omega[0] ** 2 + omega[1] ** 2 + omega[2] ** 2)
    if phi == 0.0:
        return np.eye(3)
    P = skew(omega)
    return np.eye(3) + 0.5 * P + texp_inv_coefficient(phi) * mm(P, P)


@numba.njit(cache=True)
def compose_rv(psi0, omega):
    """Rotation vector ``ψ = ψ₀ ⋄ Ω`` with ``R(ψ) = R(ψ₀) R(Ω)`` (eq. 30, App. A.3).

    Computed through the unit-quaternion product; the angle is ``2 atan2(|ρ|/2, x)`` ∈ [0, 2π]
    (no flip to |ψ| ≤ π, as in Exudyn), which stays accurate for small angles. Shape (3,).
    """
    a0 = np.sqrt(psi0[0] ** 2 + psi0[1] ** 2 + psi0[2] ** 2)
    a1 = np.sqrt(omega[0] ** 2 + omega[1] ** 2 + omega[2] ** 2)
    c0, c1 = np.cos(0.5 * a0), np.cos(0.5 * a1)
    s0, s1 = sinc(0.5 * a0), sinc(0.5 * a1)
    x = c0 * c1 - 0.25 * s0 * s1 * (psi0[0] * omega[0] + psi0[1] * omega[1] + psi0[2] * omega[2])
    rho = s0 * c1 * psi0 + c0 * s1 * omega + 0.5 * s0 * s1 * cross3(psi0, omega)
    nrho = np.sqrt(rho[0] ** 2 + rho[1] ** 2 + rho[2] ** 2)
    if nrho == 0.0:
        return np.zeros(3)
    w = 2.0 * np.arctan2(0.5 * nrho, x)
    return (w / nrho) * rho


@numba.njit(cache=True)
def rotation_rxyz(phi):
    """``R = R_x(φ₀) R_y(φ₁) R_z(φ₂)`` (Tait–Bryan xyz); shape (3, 3)."""
    ca, sa = np.cos(phi[0]), np.sin(phi[0])
    cb, sb = np.cos(phi[1]), np.sin(phi[1])
    cg, sg = np.cos(phi[2]), np.sin(phi[2])
    Rx = np.array([[1.0, 0.0, 0.0], [0.0, ca, -sa], [0.0, sa, ca]])
    Ry = np.array([[cb, 0.0, sb], [0.0, 1.0, 0.0], [-sb, 0.0, cb]])
    Rz = np.array([[cg, -sg, 0.0], [sg, cg, 0.0], [0.0, 0.0, 1.0]])
    return mm(mm(Rx, Ry), Rz)


@numba.njit(cache=True)
def g_rxyz(phi):
    """Local kinematic matrix ``Ĝ_loc(φ)`` with ``ω = Ĝ_loc φ̇``; det = cos φ₁; shape (3, 3)."""
    cb, sb = np.cos(phi[1]), np.sin(phi[1])
    cg, sg = np.cos(phi[2]), np.sin(phi[2])
    return np.array([[cb * cg, sg, 0.0], [-cb * sg, cg, 0.0], [sb, 0.0, 1.0]])


@numba.njit(cache=True)
def gdot_rxyz(phi, phid):
    """Time derivative ``d/dt Ĝ_loc(φ)`` along ``φ̇``; shape (3, 3)."""
    cb, sb = np.cos(phi[1]), np.sin(phi[1])
    cg, sg = np.cos(phi[2]), np.sin(phi[2])
    b, g = phid[1], phid[2]
    return np.array(
        [
            [-sb * cg * b - cb * sg * g, cg * g, 0.0],
            [sb * sg * b - cb * cg * g, -sg * g, 0.0],
            [cb * b, 0.0, 0.0],
        ]
    )


@numba.njit(cache=True)
def rotation_ep(p):
    """``R(p) = (p₀² − eᵀe) I + 2 e eᵀ + 2 p₀ ẽ`` for Euler parameters ``p = [p₀, e]``; (3, 3)."""
    e = p[1:4]
    return (p[0] ** 2 - np.sum(e * e)) * np.eye(3) + 2.0 * outer3(e, e) + 2.0 * p[0] * skew(e)


@numba.njit(cache=True)
def drx_dp(p, X):
    """``∂(R(p) X)/∂p`` of the quadratic Euler-parameter rotation, exact for any p; (3, 4)."""
    e = p[1:4]
    out = np.empty((3, 4))
    out[:, 0] = 2.0 * p[0] * X + 2.0 * cross3(e, X)
    ex = np.sum(e * X)
    for k in range(3):
        ek = np.zeros(3)
        ek[k] = 1.0
        out[:, k + 1] = -2.0 * e[k] * X + 2.0 * (X[k] * e + ex * ek) + 2.0 * p[0] * cross3(ek, X)
    return out


@numba.njit(cache=True)
def g_ep(p):
    """``Ĝ = 2 Ḡ(p)`` with body angular velocity ``ω = Ĝ ṗ``; shape (3, 4)."""
    return 2.0 * np.array(
        [
            [-p[1], p[0], p[3], -p[2]],
            [-p[2], -p[3], p[0], p[1]],
            [-p[3], p[2], -p[1], p[0]],
        ]
    )


# ---------------------------------------------------------------------------------------------
# Model dispatch (numba)
# ---------------------------------------------------------------------------------------------

#: Model codes.
TOP_RV, TOP_RXYZ, TOP_EP, SPH_RV, SPH_RXYZ, SPH_EP, ROT_RV, ROT_RXYZ, ROT_EP = range(9)
#: Formulation of each model code.
FORMULATION = {c: ("RV", "Rxyz", "EP")[c % 3] for c in range(9)}


@numba.njit(cache=True)
def is_lie(code):
    """True for the Lie group (rotation-vector) models."""
    return code % 3 == 0


@numba.njit(cache=True)
def _is_ep(code):
    return code % 3 == 2


@numba.njit(cache=True)
def _is_rxyz(code):
    return code % 3 == 1


@numba.njit(cache=True)
def _is_top(code):
    """Heavy top about its fixed point (rotation coordinates only)."""
    return code <= TOP_EP


@numba.njit(cache=True)
def _is_spherical(code):
    return SPH_RV <= code <= SPH_EP


@numba.njit(cache=True)
def n_coordinates(code):
    """Number of coordinates n_q (= number of velocity coordinates n_v)."""
    l = 4 if _is_ep(code) else 3
    return l if _is_top(code) else 3 + l


@numba.njit(cache=True)
def n_constraints(code):
    """Number of holonomic constraints j."""
    return (3 if _is_spherical(code) else 0) + (1 if _is_ep(code) else 0)


@numba.njit(cache=True)
def _unpack(P):
    return P[0], P[1:10].copy().reshape(3, 3), P[10:13].copy(), P[13:16].copy()


@numba.njit(cache=True)
def _inertia_about_point(m, J, X):
    """Parallel-axis theorem: ``J_O = J + m (XᵀX I − X Xᵀ)``."""
    return J + m * (np.sum(X * X) * np.eye(3) - outer3(X, X))


@numba.njit(cache=True)
def _rotation_part(code, q):
    """Rotation parameters of the body: the last 3 (RV, Rxyz) or 4 (EP) coordinates."""
    if _is_ep(code):
        return q[q.size - 4 :]
    return q[q.size - 3 :]


@numba.njit(cache=True)
def rotation(code, q):
    """Rotation matrix of the body (body → inertial frame); shape (3, 3)."""
    r = _rotation_part(code, q)
    if is_lie(code):
        return rotation_rv(r)
    if _is_rxyz(code):
        return rotation_rxyz(r)
    return rotation_ep(r)


@numba.njit(cache=True)
def kinematic_matrix(code, q):
    """``Ĝ`` with ``ω = Ĝ ρ̇`` (identity for RV, where the velocity *is* ω); shape (3, l)."""
    r = _rotation_part(code, q)
    if is_lie(code):
        return np.eye(3)
    if _is_rxyz(code):
        return g_rxyz(r)
    return g_ep(r)


@numba.njit(cache=True)
def angular_velocity(code, q, v):
    """Body angular velocity ω; shape (3,)."""
    l = 4 if _is_ep(code) else 3
    return mv(kinematic_matrix(code, q), v[v.size - l :])


@numba.njit(cache=True)
def _rotor_loads(R, x, u, w, P):
    """Body torque and inertial force on the rotor (surrogate of spec §3.2).

    Two isotropic spring–dampers (stiffness ``k``, damping ``d``) join the body points
    ``s = [∓L_L, 0, 0]`` to their initial positions; the constant torque ``t`` of eq. (44) acts
    in the inertial frame. ``P = [m, J (9), L_L, k, d, t (3)]``.
    """
    LL, k, d, t = P[10], P[11], P[12], P[13:16]
    force = np.zeros(3)
    torque = mv(R.T, t)
    for sign in (-1.0, 1.0):
        s = np.array([sign * LL, 0.0, 0.0])
        Rs = mv(R, s)
        f_i = -k * (x + Rs - s) - d * (u + mv(R, cross3(w, s)))
        force += f_i
        torque += cross3(s, mv(R.T, f_i))
    return torque, force


@numba.njit(cache=True)
def mass_matrix(code, q, P):
    """Mass matrix: ``J_O`` / ``diag(m I, J)`` (RV, eqs. 11, 23) or ``Ĝᵀ J Ĝ`` blocks (eq. 14)."""
    m, J, X, g = _unpack(P)
    n = n_coordinates(code)
    M = np.zeros((n, n))
    if _is_top(code):
        Jr = _inertia_about_point(m, J, X)
        off = 0
    else:
        Jr = J
        M[:3, :3] = m * np.eye(3)
        off = 3
    G = kinematic_matrix(code, q)
    M[off:, off:] = mm(mm(G.T, Jr), G)
    return M


@numba.njit(cache=True)
def force(code, q, v, t, P):
    """Right-hand side ``g`` (RV, eqs. 9, 11) or ``Ĥᵀ ĝ`` (classical formulation 2, eqs. 12, 14).

    Heavy top about the fixed point: gravity torque ``X × Rᵀ m g`` and gyroscopic term with
    ``J_O``. Spherical-joint top: gravity force ``m g`` at the centre of mass and gyroscopic
    term with ``J``. Rotor: spring–dampers from the support points to ground, the inertial
    torque of eq. (44) and the gyroscopic term. Formulation 2 adds ``−J Ġ ρ̇`` and premultiplies
    by ``Ĝᵀ``. Shape (n_v,).
    """
    m, J, X, grav = _unpack(P)
    n = n_coordinates(code)
    f = np.zeros(n)
    R = rotation(code, q)
    w = angular_velocity(code, q, v)
    if _is_top(code):
        Jr = _inertia_about_point(m, J, X)
        torque = cross3(X, mv(R.T, m * grav))
        off = 0
    elif code >= ROT_RV:
        Jr = J
        torque, f[:3] = _rotor_loads(R, q[:3], v[:3], w, P)
        off = 3
    else:
        Jr = J
        torque = np.zeros(3)
        f[:3] = m * grav
        off = 3
    rhs = torque - cross3(w, mv(Jr, w))
    if is_lie(code):
        f[off:] = rhs
        return f
    r = _rotation_part(code, q)
    rd = v[off:]
    if _is_rxyz(code):
        Gd = gdot_rxyz(r, rd)
    else:
        Gd = g_ep(rd)  # Ĝ is linear in p, so d/dt Ĝ(p) = Ĝ(ṗ)
    G = kinematic_matrix(code, q)
    f[off:] = mv(G.T, rhs - mv(Jr, mv(Gd, rd)))
    return f


@numba.njit(cache=True)
def constraint(code, q, P):
    """Holonomic constraints Φ(q): spherical joint ``x − R X`` and/or EP normalisation; (j,)."""
    m, J, X, g = _unpack(P)
    phi = np.zeros(n_constraints(code))
    if _is_spherical(code):
        phi[:3] = q[:3] - mv(rotation(code, q), X)
    if _is_ep(code):
        p = q[q.size - 4 :]
        phi[phi.size - 1] = np.sum(p * p) - 1.0
    return phi


@numba.njit(cache=True)
def constraint_jacobian(code, q, P):
    """``B = ∂Φ̇/∂v`` (eq. 10): ``[I, R X̃]`` for RV, ``Φ_q = [I, R X̃ Ĝ]`` for Rxyz/EP; (j, n_v).

    For EP the block is the exact ``−∂(R(p) X)/∂p`` of the quadratic rotation formula, which
    equals ``R X̃ Ĝ`` on tangent directions of the unit sphere and is also right off it.
    """
    m, J, X, g = _unpack(P)
    n = n_coordinates(code)
    B = np.zeros((n_constraints(code), n))
    if _is_spherical(code):
        B[:3, :3] = np.eye(3)
        if code == SPH_EP:
            B[:3, 3:] = -drx_dp(q[3:], X)  # = R X̃ Ĝ on tangent directions, exact for all ṗ
        else:
            B[:3, 3:] = mm(mm(rotation(code, q), skew(X)), kinematic_matrix(code, q))
    if _is_ep(code):
        B[B.shape[0] - 1, n - 4 :] = 2.0 * q[n - 4 :]
    return B


@numba.njit(cache=True)
def uac(code, q_n, dq):
    """Update absolute coordinates (Algorithm 1): LGT map for RV nodes, addition otherwise.

    RV: ``x = x_n + Δx`` (eq. 29), ``ψ = ψ_n ⋄ Δψ`` (eq. 30); Rxyz/EP: ``q = q_n + Δq`` (eq. 31).
    """
    q = q_n + dq
    if is_lie(code):
        n = q_n.size
        q[n - 3 :] = compose_rv(q_n[n - 3 :], dq[n - 3 :])
    return q


@numba.njit(cache=True)
def tangent(code, dq):
    """``T_exp(Δq)`` = blockdiag(I, T_SO(3)(Δψ)) for RV, identity otherwise; (n_v, n_v)."""
    n = dq.size
    T = np.eye(n)
    if is_lie(code):
        T[n - 3 :, n - 3 :] = texp_so3(dq[n - 3 :])
    return T


@numba.njit(cache=True)
def tangent_inv_times(code, dq, v):
    """``T_exp⁻¹(Δq) v`` (eq. 25) for RV, ``v`` otherwise; shape (n_v,)."""
    if not is_lie(code):
        return v.copy()
    n = dq.size
    out = v.copy()
    out[n - 3 :] = mv(texp_inv_so3(dq[n - 3 :]), v[n - 3 :])
    return out


@numba.njit(cache=True)
def com_state(code, q, v, P):
    """Position and velocity of the output point in the inertial frame, shape (6,).

    The centre of mass for the heavy tops; the left support point ``p₁ = [−L_L, 0, 0]`` (body)
    for the rotor (paper Sect. 4.2).
    """
    m, J, X, g = _unpack(P)
    out = np.zeros(6)
    if code >= ROT_RV:
        R = rotation(code, q)
        s = np.array([-P[10], 0.0, 0.0])
        out[:3] = q[:3] + mv(R, s)
        out[3:] = v[:3] + mv(R, cross3(angular_velocity(code, q, v), s))
    elif _is_top(code):
        R = rotation(code, q)
        out[:3] = mv(R, X)
        out[3:] = mv(R, cross3(angular_velocity(code, q, v), X))
    else:
        out[:3] = q[:3]
        out[3:] = v[:3]
    return out


# ---------------------------------------------------------------------------------------------
# Parameter record
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HeavyTop:
    """The heavy top benchmark (paper Sect. 4.1, Table 3; values reconstructed, spec §3.1).

    Attributes
    ----------
    mass : float
        kg.
    inertia : ndarray, shape (3, 3)
        About the centre of mass, body frame, kg m².
    com : ndarray, shape (3,)
        Centre of mass relative to the fixed point, body frame, m.
    gravity : ndarray, shape (3,)
        m/s².
    omega0 : ndarray, shape (3,)
        Initial body angular velocity, rad/s.
    """

    mass: float = 15.0
    inertia: np.ndarray = field(default_factory=lambda: np.diag([0.234375, 0.46875, 0.234375]))
    com: np.ndarray = field(default_factory=lambda: np.array([0.0, 1.0, 0.0]))
    gravity: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, -9.81]))
    omega0: np.ndarray = field(default_factory=lambda: np.array([0.0, 150.0, -4.61538]))

    def __post_init__(self):
        positive(mass=self.mass)
        object.__setattr__(self, "inertia", inertia("inertia", self.inertia))
        object.__setattr__(self, "com", vector("com", self.com, (3,)))
        object.__setattr__(self, "gravity", vector("gravity", self.gravity, (3,)))
        object.__setattr__(self, "omega0", vector("omega0", self.omega0, (3,)))

    def params(self) -> np.ndarray:
        """The parameter vector ``P`` of the numba model functions, shape (16,)."""
        return np.concatenate([[self.mass], self.inertia.ravel(), self.com, self.gravity])

    def initial_state(self, code: int) -> tuple[np.ndarray, np.ndarray]:
        """Initial coordinates and velocities ``(q0, v0)`` of model ``code`` (R₀ = I).

        Rxyz: ``φ̇₀ = ω₀`` since ``Ĝ_loc(0) = I``; EP: ``ṗ₀ = ½ [0; ω₀]``; the spherical-joint
        models start at ``x₀ = X`` with ``u₀ = ω₀ × X``.
        """
        w = self.omega0
        if FORMULATION[code] == "EP":
            rot, rate = np.array([1.0, 0.0, 0.0, 0.0]), np.concatenate([[0.0], 0.5 * w])
        else:
            rot, rate = np.zeros(3), w.copy()
        if code <= TOP_EP:
            return rot, rate
        return np.concatenate([self.com, rot]), np.concatenate([cross3(w, self.com), rate])


@dataclass(frozen=True)
class Model:
    """One model of this module: its code (see the module table) and parameter vector ``P``.

    A state ``x`` of a model is ``[q; v]`` with shape (2 n,), n = :func:`n_coordinates`.
    """

    code: int
    P: np.ndarray

    def __post_init__(self):
        if self.code not in FORMULATION:
            raise ValueError(f"code must be one of {sorted(FORMULATION)}, got {self.code!r}")
        object.__setattr__(self, "P", vector("P", self.P, (16,)))

    @property
    def n(self) -> int:
        """Number of coordinates (= velocities)."""
        return int(n_coordinates(self.code))

    @property
    def formulation(self) -> str:
        """ "RV", "Rxyz" or "EP"."""
        return FORMULATION[self.code]


def heavy_top_model(code: int, top: HeavyTop | None = None) -> tuple[Model, np.ndarray]:
    """The heavy-top model ``code`` and its initial state ``x0 = [q0; v0]``."""
    top = HeavyTop() if top is None else top
    q0, v0 = top.initial_state(code)
    return Model(code, top.params()), np.concatenate([q0, v0])


@dataclass(frozen=True)
class Rotor:
    """Surrogate of the high-speed rotor on flexible supports (paper Sect. 4.2; spec §3.2).

    Table 6 of the paper is lost. The surrogate is an axisymmetric cylinder spinning about its
    body x axis, held by two isotropic springs at ``[∓L_L, 0, 0]`` and loaded by the constant
    inertial torque ``[0, 0, (L/2 − L_L) m g]`` of eq. (44); the spring stiffness is chosen so that
    the precession period is about 2.5 s, as the paper reports.

    Attributes
    ----------
    mass : float
        kg.
    radius, length : float
        m, of the cylinder.
    support : float
        ``L_L``, distance of the supports from the centre of mass, m.
    stiffness, damping : float
        Of each support, N/m and N s/m.
    spin : float
        Initial spin rate about body x, rad/s.
    gravity : float
        m/s², enters only the torque (44).
    """

    mass: float = 20.0
    radius: float = 0.1
    length: float = 0.4
    support: float = 0.15
    stiffness: float = 1755.0
    damping: float = 0.0
    spin: float = 2 * np.pi * 50
    gravity: float = 9.81

    def __post_init__(self):
        positive(mass=self.mass, radius=self.radius, length=self.length, support=self.support,
                 stiffness=self.stiffness, gravity=self.gravity)
        if not self.damping >= 0:
            raise ValueError(f"damping must be non-negative, got {self.damping!r}")

    @property
    def inertia(self) -> np.ndarray:
        """Principal inertia of the cylinder about its centre of mass, (3, 3)."""
        m, r, L = self.mass, self.radius, self.length
        return np.diag([m * r * r / 2, m * (3 * r * r + L * L) / 12, m * (3 * r * r + L * L) / 12])

    @property
    def torque(self) -> np.ndarray:
        """Eq. (44): ``[0, 0, (L/2 − L_L) m g]`` in the inertial frame, N m."""
        return np.array([0.0, 0.0, (self.length / 2 - self.support) * self.mass * self.gravity])

    def params(self) -> np.ndarray:
        """``P = [m, J (9), L_L, k, d, t (3)]`` of the numba model functions, shape (16,)."""
        return np.concatenate([[self.mass], self.inertia.ravel(),
                               [self.support, self.stiffness, self.damping], self.torque])

    def initial_state(self, code: int) -> np.ndarray:
        """``x0 = [q0; v0]``: at rest in position, spinning about body x."""
        w = np.array([self.spin, 0.0, 0.0])
        if FORMULATION[code] == "EP":
            rot, rate = np.array([1.0, 0.0, 0.0, 0.0]), np.concatenate([[0.0], 0.5 * w])
        else:
            rot, rate = np.zeros(3), w
        return np.concatenate([np.zeros(3), rot, np.zeros(3), rate])


def rotor_model(code: int, rotor: Rotor | None = None) -> tuple[Model, np.ndarray]:
    """The rotor model ``code`` (6, 7, 8) and its initial state."""
    if code not in (ROT_RV, ROT_RXYZ, ROT_EP):
        raise ValueError(f"code must be a rotor model (6, 7 or 8), got {code!r}")
    rotor = Rotor() if rotor is None else rotor
    return Model(code, rotor.params()), rotor.initial_state(code)
