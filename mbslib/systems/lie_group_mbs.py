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

A model is a code and a parameter vector ``P`` (:class:`CompiledModel`). The code names a model family
and a formulation in :data:`REGISTRY`, the one table a new model is added to: the family's
compiled kernels (:mod:`mbslib.formulations.compiled`; the single-body families below,
:mod:`mbslib.systems.multibody_kernels`, :mod:`mbslib.systems.puma560`) are written once for
every formulation (:mod:`mbslib.formulations.rotation_parameters`), carry analytic force and
constraint Jacobians, and are what :mod:`mbslib.integrators.generalized_alpha` runs, compiled once
for all models. The two tops in RV (codes 0 and 3) run on kernels written for ``Ĝ = I``
(:func:`top_dynamics_rv`, :func:`spherical_top_dynamics_rv`, :func:`spherical_constraints_rv`):
the values of the kernels for every formulation, bit for bit, in fewer operations. The models are

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
9     multibody system, RV (xᵢ, ψᵢ)                   6 nb    6 nb    rows
10    multibody system, Rxyz (xᵢ, φᵢ)                 6 nb    6 nb    rows
11    multibody system, EP (xᵢ, pᵢ)                   7 nb    7 nb    rows + nb
12    Puma 560 in joint coordinates (φ)               6       6       0
====  ==============================================  ======  ======  ===========

Codes 9–11 hand over to :mod:`mbslib.systems.multibody` (any number of bodies, joints and
spring–dampers described by ``P``), code 12 to the minimal-coordinate robot of
:mod:`mbslib.systems.puma560` (a vector space: ``uac`` is addition).

The parameter vector ``P`` (length 16) is ``[m, J (row-major 3×3, about the centre of mass),
X (centre of mass in the body frame, relative to the fixed point), g (gravity)]`` for the
heavy tops (:func:`top_params`) and ``[m, J, L_L, k, d, t]`` for the rotor
(:func:`rotor_params`). The paper's top and rotor (:class:`HeavyTop`, :class:`Rotor`) are
coordinate-free descriptions (:mod:`mbslib.model`); the absolute coordinates of
:mod:`mbslib.formulations.lie_group` recognise them and pick these kernels
(:func:`heavy_top_model`, :func:`rotor_model`).

The functions of the section "Evaluation by model code" evaluate a model (mass matrix, forces,
constraints, update map, output point) from Python; they are written independently of the
kernels, with the rotation maps and small dense linear algebra of :mod:`mbslib.kernels`, and the
tests check the two against each other. Every integrator runs the kernels.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numba
import numpy as np

from mbslib import model as md
from mbslib.formulations import rotation_parameters as rp
from mbslib.formulations.compiled import (
    ModelKind,
    bodies_tangent,
    bodies_tangent_inv,
    bodies_uac,
    clear_page,
    normalizations,
    page_mtv,
    page_mv,
    rotation_block,
)
from mbslib.formulations.rotation_parameters import BODY_PAGES
from mbslib.in_place import in_place
from mbslib.kernels import (
    compose_rv,
    cross3,
    drx_dp,
    g_ep,
    g_rxyz,
    gdot_rxyz,
    mm,
    mv,
    outer3,
    rotation_ep,
    rotation_rv,
    rotation_rxyz,
    skew,
)
from mbslib.systems import multibody as mb
from mbslib.systems import multibody_kernels as mbk
from mbslib.systems import puma560 as puma
from mbslib.validation import inertia, positive, vector

# ---------------------------------------------------------------------------------------------
# Evaluation by model code (numba)
# ---------------------------------------------------------------------------------------------

#: Model codes.
TOP_RV, TOP_RXYZ, TOP_EP, SPH_RV, SPH_RXYZ, SPH_EP, ROT_RV, ROT_RXYZ, ROT_EP = range(9)
MB_RV, MB_RXYZ, MB_EP = 9, 10, 11
CHAIN = 12
#: Formulation of each model code.
FORMULATION = {c: ("RV", "Rxyz", "EP")[c % 3] for c in range(12)} | {CHAIN: "Min. Coord."}


@numba.njit(cache=True)
def is_lie(code):
    """True for the Lie group (rotation-vector) models."""
    return code % 3 == 0 and code != CHAIN


@numba.njit(cache=True)
def _is_ep(code):
    return code % 3 == 2


@numba.njit(cache=True)
def _is_rxyz(code):
    return code % 3 == 1 and code != CHAIN


@numba.njit(cache=True)
def _is_top(code):
    """Heavy top about its fixed point (rotation coordinates only)."""
    return code <= TOP_EP


@numba.njit(cache=True)
def _is_spherical(code):
    return SPH_RV <= code <= SPH_EP


@numba.njit(cache=True)
def _is_multibody(code):
    return MB_RV <= code <= MB_EP


@numba.njit(cache=True)
def n_coordinates(code, P):
    """Number of coordinates n_q (= number of velocity coordinates n_v)."""
    if _is_multibody(code):
        return mb.n_coordinates(code - MB_RV, P)
    if code == CHAIN:
        return puma.N_JOINTS
    l = 4 if _is_ep(code) else 3
    return l if _is_top(code) else 3 + l


@numba.njit(cache=True)
def n_constraints(code, P):
    """Number of holonomic constraints j."""
    if _is_multibody(code):
        return mb.n_constraints(code - MB_RV, P)
    if code == CHAIN:
        return 0
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
    if _is_multibody(code):
        return mb.mass_matrix(code - MB_RV, q, P)
    if code == CHAIN:
        return puma.chain_mass_matrix(P, q)
    m, J, X, g = _unpack(P)
    n = n_coordinates(code, P)
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
    if _is_multibody(code):
        return mb.force(code - MB_RV, q, v, t, P)
    if code == CHAIN:
        return puma.pd_torque(P, t, q, v) - puma.chain_bias(P, q, v)
    m, J, X, grav = _unpack(P)
    n = n_coordinates(code, P)
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
    if _is_multibody(code):
        return mb.constraint(code - MB_RV, q, P)
    if code == CHAIN:
        return np.zeros(0)
    m, J, X, g = _unpack(P)
    phi = np.zeros(n_constraints(code, P))
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
    equals ``R X̃ Ĝ`` on tangent directions of the unit sphere and is also right off it. With
    ``P[16] = 1`` (:func:`heavy_top_model` with ``ep_jacobian="tangent"``) the block is
    ``R X̃ Ĝ`` itself, as in Exudyn's rigid-body markers: it misses the radial part
    ``∂(R X)/∂p · p = 2 R X`` that a Newton step off the unit sphere needs.
    """
    if _is_multibody(code):
        return mb.constraint_jacobian(code - MB_RV, q, P)
    if code == CHAIN:
        return np.zeros((0, q.size))
    m, J, X, g = _unpack(P)
    n = n_coordinates(code, P)
    B = np.zeros((n_constraints(code, P), n))
    if _is_spherical(code):
        B[:3, :3] = np.eye(3)
        if code == SPH_EP and not (P.size > 16 and P[16] != 0.0):
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
    if _is_multibody(code):
        return mb.uac(code - MB_RV, q_n, dq)
    q = q_n + dq
    if is_lie(code):
        n = q_n.size
        q[n - 3 :] = compose_rv(q_n[n - 3 :], dq[n - 3 :])
    return q


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
# Compiled kernels of the single-body models (mbslib.formulations.compiled interface)
# ---------------------------------------------------------------------------------------------
# One kernel bundle per model family, written once for every formulation: the rotation
# parameters enter through the formulation bundle (R, Ĝ, κ = Ġν and their derivatives), the
# analytic Jacobians follow from the chain rule of formulations.compiled.rotation_block. The body's
# pages come first in the work array (rotation_parameters), then the scratch pages below.
#
# Pages, offsets and flags reach the kernels called below as np.int64 / np.bool_ values, never as
# Python int or bool literals: numba compiles a callee once more for each literal value it is
# called with (Literal[int], Literal[bool]), the same machine code again.

R_, DR_, G_, RATES_ = (np.int64(page) for page in (rp.R_, rp.DR_, rp.G_, rp.RATES_))
_J, _TR, _TW, _W, _TX, _TU, _FW, _FR = (np.int64(BODY_PAGES + k) for k in range(8))
_FIRST = np.int64(0)  # the body's first page; ρ (and its rows) of a top about its fixed point
_AFTER_X = np.int64(3)  # ρ (and its rows) after the position x; the normalisation after 3 joint rows
_ABOUT_PIVOT, _ABOUT_COM = np.bool_(True), np.bool_(False)  # shift of _inertia: J_O or J
_NO_JAC = np.bool_(False)
_SINGLE_PAGES = BODY_PAGES + 8


@in_place
def _inertia(P, work, shift):
    """``J`` (``P[1:10]``, about the centre of mass) into page ``_J``; with ``shift`` the inertia
    about the fixed point ``J_O = J + m (XᵀX I − X Xᵀ)`` (parallel-axis theorem)."""
    m, X = P[0], (P[10], P[11], P[12])
    xx = X[0] * X[0] + X[1] * X[1] + X[2] * X[2]
    for i in range(3):
        for j in range(3):
            work[_J, i, j] = P[1 + 3 * i + j] + (m * ((xx if i == j else 0.0) - X[i] * X[j]) if shift else 0.0)


@in_place
def top_dynamics(form, P, q, v, t, jac, work, M, g, K, C):
    """Heavy top about its fixed point: ``J_O`` and the gravity torque ``τ = X × Rᵀ m g`` with
    ``∂τ/∂ρ_k = X × (∂R/∂ρ_k)ᵀ m g``."""
    m, X = P[0], (P[10], P[11], P[12])
    form[2](q, v, 0, jac, work, 0)
    _inertia(P, work, _ABOUT_PIVOT)
    f0, f1, f2 = m * P[13], m * P[14], m * P[15]
    c = page_mtv(work, R_, f0, f1, f2)  # Rᵀ m g
    g[0] = X[1] * c[2] - X[2] * c[1]
    g[1] = X[2] * c[0] - X[0] * c[2]
    g[2] = X[0] * c[1] - X[1] * c[0]
    if jac:
        clear_page(work, _TW)
        for k in range(form[0]):
            d = page_mtv(work, DR_ + k, f0, f1, f2)
            work[_TR, 0, k] = X[1] * d[2] - X[2] * d[1]
            work[_TR, 1, k] = X[2] * d[0] - X[0] * d[2]
            work[_TR, 2, k] = X[0] * d[1] - X[1] * d[0]
    rotation_block(form, work, _FIRST, _J, _TR, _TW, _W, v, _FIRST, jac, M, g, K, C)


@in_place
def _position_rows(P, work, jac, M, g, K, C):
    """The top at its centre of mass, before its rotation block: ``J`` into page ``_J``, ``m I``
    and the weight ``m g`` on the position rows, zero torque, ``M`` (and ``K, C``) zero elsewhere."""
    m = P[0]
    _inertia(P, work, _ABOUT_COM)
    M[:, :] = 0.0
    for i in range(3):
        M[i, i] = m
        g[i] = m * P[13 + i]
        g[3 + i] = 0.0
    if jac:
        K[:, :] = 0.0
        C[:, :] = 0.0


@in_place
def spherical_top_dynamics(form, P, q, v, t, jac, work, M, g, K, C):
    """Heavy top at its centre of mass: ``m I`` and the weight ``m g`` on the position rows,
    no torque (the joint acts through Bᵀλ)."""
    form[2](q, v, 3, jac, work, 0)
    _position_rows(P, work, jac, M, g, K, C)
    if jac:
        clear_page(work, _TR)
        clear_page(work, _TW)
    rotation_block(form, work, _FIRST, _J, _TR, _TW, _W, v, _AFTER_X, jac, M, g, K, C)


# The Lie group formulation (RV) of the two tops: ``Ĝ = I`` and ``κ = 0``, so the rotation block
# of rotation_block reduces to a constant mass matrix and ``ω̃ J ω`` (eq. 23). These kernels write
# it so, with the same products in the same order: the same values as the kernels above with
# the RV bundle (test), at a fraction of the operations per evaluation.


@in_place
def _gyroscopic_rv(work, v, o, jac, M, g, C):
    """Rows and columns ``o:o+3`` of a body in RV with the inertia in page ``_J``: ``M = J``,
    ``g += −ω × Jω`` (the torque is in ``g[o:o+3]`` on entry) and, with ``jac``,
    ``C = ω̃J − (Jω)~`` (eqs. 11, 23, 38)."""
    w0, w1, w2 = v[o], v[o + 1], v[o + 2]
    L0 = work[_J, 0, 0] * w0 + work[_J, 0, 1] * w1 + work[_J, 0, 2] * w2
    L1 = work[_J, 1, 0] * w0 + work[_J, 1, 1] * w1 + work[_J, 1, 2] * w2
    L2 = work[_J, 2, 0] * w0 + work[_J, 2, 1] * w1 + work[_J, 2, 2] * w2
    g[o] -= w1 * L2 - w2 * L1
    g[o + 1] -= w2 * L0 - w0 * L2
    g[o + 2] -= w0 * L1 - w1 * L0
    for a in range(3):
        for c in range(3):
            M[o + a, o + c] = work[_J, a, c]
    if jac:
        for c in range(3):
            C[o, o + c] = w1 * work[_J, 2, c] - w2 * work[_J, 1, c]
            C[o + 1, o + c] = w2 * work[_J, 0, c] - w0 * work[_J, 2, c]
            C[o + 2, o + c] = w0 * work[_J, 1, c] - w1 * work[_J, 0, c]
        C[o, o + 1] += L2
        C[o, o + 2] -= L1
        C[o + 1, o] -= L2
        C[o + 1, o + 2] += L0
        C[o + 2, o] += L1
        C[o + 2, o + 1] -= L0


@in_place
def top_dynamics_rv(form, P, q, v, t, jac, work, M, g, K, C):
    """:func:`top_dynamics` in RV: ``M = J_O``, ``g = X × Rᵀ m g − ω × J_O ω``, ``K = −X̃ (Rᵀ m g)~``
    (``∂(Rᵀ f)/∂z_k = (Rᵀ f) × e_k`` along ``R exp(z̃)``), ``C = ω̃ J_O − (J_O ω)~``."""
    m, X = P[0], (P[10], P[11], P[12])
    rp.kin_rv(q, v, _FIRST, _NO_JAC, work, _FIRST)
    _inertia(P, work, _ABOUT_PIVOT)
    c = page_mtv(work, R_, m * P[13], m * P[14], m * P[15])  # Rᵀ m g
    g[0] = X[1] * c[2] - X[2] * c[1]
    g[1] = X[2] * c[0] - X[0] * c[2]
    g[2] = X[0] * c[1] - X[1] * c[0]
    _gyroscopic_rv(work, v, _FIRST, jac, M, g, C)
    if jac:
        for k in range(3):
            d = (c[1] if k == 2 else -c[2] if k == 1 else 0.0,  # c × e_k
                 c[2] if k == 0 else -c[0] if k == 2 else 0.0,
                 c[0] if k == 1 else -c[1] if k == 0 else 0.0)
            K[0, k] = -(X[1] * d[2] - X[2] * d[1])
            K[1, k] = -(X[2] * d[0] - X[0] * d[2])
            K[2, k] = -(X[0] * d[1] - X[1] * d[0])


@in_place
def spherical_top_dynamics_rv(form, P, q, v, t, jac, work, M, g, K, C):
    """:func:`spherical_top_dynamics` in RV: ``M = diag(m I, J)``, ``g = [m g; −ω × Jω]``, ``K = 0``
    (no force turns with the body), ``C = [0; ω̃J − (Jω)~]``."""
    _position_rows(P, work, jac, M, g, K, C)
    _gyroscopic_rv(work, v, _AFTER_X, jac, M, g, C)


@in_place
def spherical_constraints_rv(form, P, q, work, phi, B):
    """:func:`spherical_constraints` in RV: ``Φ = x − R X``, ``B = [I, R X̃]``."""
    X = (P[10], P[11], P[12])
    rp.kin_rv(q, q, _AFTER_X, _NO_JAC, work, _FIRST)
    B[:, :] = 0.0
    RX = page_mv(work, R_, X[0], X[1], X[2])
    for k in range(3):  # R (X × e_k)
        col = page_mv(work, R_, X[1] if k == 2 else -X[2] if k == 1 else 0.0,
                      X[2] if k == 0 else -X[0] if k == 2 else 0.0,
                      X[0] if k == 1 else -X[1] if k == 0 else 0.0)
        for i in range(3):
            B[i, 3 + k] = col[i]
    for i in range(3):
        phi[i] = q[i] - RX[i]
        B[i, i] = 1.0


@in_place
def rotor_dynamics(form, P, q, v, t, jac, work, M, g, K, C):
    """Rotor on two isotropic spring–dampers (surrogate of spec §3.2) and the inertial torque
    ``t`` of eq. (44), ``P = [m, J (9), L_L, k, d, t (3)]``.

    Support ``s = [±L_L, 0, 0]``: ``fᵢ = −k (x + R s − s) − d (u + R (ω × s))`` on the position
    rows, ``τ = Rᵀ t + Σ s × Rᵀ fᵢ``. Derivatives (ρ at fixed ω): ``∂fᵢ/∂x = −k I``,
    ``∂fᵢ/∂u = −d I``, ``∂fᵢ/∂ω = d R s̃``, ``∂fᵢ/∂ρ_k = −(∂R/∂ρ_k)(k s + d ω × s)``;
    ``∂τ/∂· = Σ s̃ (∂Rᵀ/∂· fᵢ + Rᵀ ∂fᵢ/∂·)`` plus ``(∂R/∂ρ_k)ᵀ t``.
    """
    m, LL, k, d = P[0], P[10], P[11], P[12]
    tq = (P[13], P[14], P[15])
    l = form[0]
    form[2](q, v, 3, jac, work, 0)
    _inertia(P, work, _ABOUT_COM)
    w1, w2 = work[RATES_, 0, 1], work[RATES_, 0, 2]
    M[:, :] = 0.0
    rt = page_mtv(work, R_, tq[0], tq[1], tq[2])  # Rᵀ t
    for i in range(3):
        M[i, i] = m
        g[i] = 0.0
        g[3 + i] = rt[i]
    if jac:
        for page in (_TX, _TU, _FW, _TW, _FR):
            clear_page(work, page)
        for kk in range(l):
            dt = page_mtv(work, DR_ + kk, tq[0], tq[1], tq[2])
            for i in range(3):
                work[_TR, i, kk] = dt[i]
    for sign in (-1.0, 1.0):
        s0 = sign * LL  # s = [s0, 0, 0], ω × s = [0, c1, c2]
        c1, c2 = w2 * s0, -w1 * s0
        Rs = page_mv(work, R_, s0, 0.0, 0.0)
        Rc = page_mv(work, R_, 0.0, c1, c2)
        f0 = -k * (q[0] + Rs[0] - s0) - d * (v[0] + Rc[0])
        f1 = -k * (q[1] + Rs[1]) - d * (v[1] + Rc[1])
        f2 = -k * (q[2] + Rs[2]) - d * (v[2] + Rc[2])
        ft = page_mtv(work, R_, f0, f1, f2)
        g[0] += f0
        g[1] += f1
        g[2] += f2
        g[4] += -s0 * ft[2]  # s × a = [0, −s0 a₂, s0 a₁]
        g[5] += s0 * ft[1]
        if not jac:
            continue
        # ∂f/∂ω = d R s̃ (s̃ e₁ = s0 e₂, s̃ e₂ = −s0 e₁); ∂τ/∂ω = s̃ Rᵀ d R s̃
        n1 = page_mtv(work, R_, work[R_, 0, 2], work[R_, 1, 2], work[R_, 2, 2])
        n2 = page_mtv(work, R_, work[R_, 0, 1], work[R_, 1, 1], work[R_, 2, 1])
        for i in range(3):
            work[_FW, i, 1] += d * s0 * work[R_, i, 2]
            work[_FW, i, 2] -= d * s0 * work[R_, i, 1]
            # ∂τ/∂x = −k s̃ Rᵀ, ∂τ/∂u = −d s̃ Rᵀ
            work[_TX, 1, i] += s0 * k * work[R_, i, 2]
            work[_TX, 2, i] -= s0 * k * work[R_, i, 1]
            work[_TU, 1, i] += s0 * d * work[R_, i, 2]
            work[_TU, 2, i] -= s0 * d * work[R_, i, 1]
        work[_TW, 1, 1] -= s0 * d * s0 * n1[2]
        work[_TW, 2, 1] += s0 * d * s0 * n1[1]
        work[_TW, 1, 2] += s0 * d * s0 * n2[2]
        work[_TW, 2, 2] -= s0 * d * s0 * n2[1]
        # ∂f/∂ρ_kk = −(∂R/∂ρ_kk) a with a = k s + d ω × s; ∂τ/∂ρ_kk = s̃ ((∂R/∂ρ_kk)ᵀ f + Rᵀ ∂f/∂ρ_kk)
        for kk in range(l):
            da = page_mv(work, DR_ + kk, k * s0, d * c1, d * c2)
            for i in range(3):
                work[_FR, i, kk] -= da[i]
            df = page_mtv(work, DR_ + kk, f0, f1, f2)
            ra = page_mtv(work, R_, da[0], da[1], da[2])
            work[_TR, 1, kk] -= s0 * (df[2] - ra[2])
            work[_TR, 2, kk] += s0 * (df[1] - ra[1])
    if jac:
        K[:, :] = 0.0
        C[:, :] = 0.0
    rotation_block(form, work, _FIRST, _J, _TR, _TW, _W, v, _AFTER_X, jac, M, g, K, C)
    if not jac:
        return
    for i in range(3):
        K[i, i] = 2.0 * k
        C[i, i] = 2.0 * d
        for kk in range(l):
            K[i, 3 + kk] = -(work[_FR, i, kk] + work[_FW, i, 0] * work[_W, 0, kk]
                             + work[_FW, i, 1] * work[_W, 1, kk] + work[_FW, i, 2] * work[_W, 2, kk])
            C[i, 3 + kk] = -(work[_FW, i, 0] * work[G_, 0, kk] + work[_FW, i, 1] * work[G_, 1, kk]
                             + work[_FW, i, 2] * work[G_, 2, kk])
    for a in range(l):
        for j in range(3):
            K[3 + a, j] = -(work[G_, 0, a] * work[_TX, 0, j] + work[G_, 1, a] * work[_TX, 1, j]
                            + work[G_, 2, a] * work[_TX, 2, j])
            C[3 + a, j] = -(work[G_, 0, a] * work[_TU, 0, j] + work[G_, 1, a] * work[_TU, 1, j]
                            + work[G_, 2, a] * work[_TU, 2, j])


@in_place
def free_constraints(form, P, q, work, phi, B):
    """A body without joints: only the formulation's normalisation."""
    B[:, :] = 0.0
    normalizations(form, q, _FIRST, phi, B)


@in_place
def _r_skew_row(r, a0, a1, a2, X):
    """Row ``r`` of ``R`` (a row of page ``R_``) times ``ã``, times ``−X``."""
    r0, r1, r2 = r[0], r[1], r[2]
    return (r1 * a2 - r2 * a1) * -X[0] + (r2 * a0 - r0 * a2) * -X[1] + (r0 * a1 - r1 * a0) * -X[2]


@in_place
def spherical_constraints(form, P, q, work, phi, B):
    """Spherical joint at the origin ``Φ = x − R X`` with ``B = [I, −∂(R X)/∂ρ]`` (RV: along
    ``R exp(z̃)``, ``= R X̃``), or, with ``P[16] = 1``, ``[I, R X̃ Ĝ]`` as in Exudyn's markers (for
    EP this misses the radial part of the exact derivative); then the normalisation.

    Only the exact EP block needs the formulation's ``∂R/∂ρ_k``: for RV and Rxyz it is
    ``R (Ĝ e_k)~`` (``Ṙ = R ω̃``), formed here from ``R`` and ``Ĝ`` as ``kin`` forms it."""
    X = (P[10], P[11], P[12])
    tangent_block = P.size > 16 and P[16] != 0.0
    exact_ep = form[1] != 0 and not tangent_block
    form[2](q, q, 3, exact_ep, work, 0)  # the rates are not used: the velocities do not enter Φ
    B[:, :] = 0.0
    RX = page_mv(work, R_, X[0], X[1], X[2])
    for k in range(form[0]):
        a0, a1, a2 = work[G_, 0, k], work[G_, 1, k], work[G_, 2, k]
        if tangent_block:  # R (X × Ĝ e_k)
            col = page_mv(work, R_, X[1] * a2 - X[2] * a1, X[2] * a0 - X[0] * a2, X[0] * a1 - X[1] * a0)
        elif exact_ep:
            col = page_mv(work, DR_ + k, -X[0], -X[1], -X[2])
        else:  # R (Ĝ e_k)~ (−X), row by row
            col = (_r_skew_row(work[R_, 0], a0, a1, a2, X), _r_skew_row(work[R_, 1], a0, a1, a2, X),
                   _r_skew_row(work[R_, 2], a0, a1, a2, X))
        for i in range(3):
            B[i, 3 + k] = col[i]
    for i in range(3):
        phi[i] = q[i] - RX[i]
        B[i, i] = 1.0
    normalizations(form, q, _AFTER_X, phi, B)


@in_place
def top_record(form, P, q, v, work, out):
    """Centre of mass ``R X`` and its velocity ``R (ω × X)``."""
    X = (P[10], P[11], P[12])
    form[2](q, v, 0, False, work, 0)
    w = (work[RATES_, 0, 0], work[RATES_, 0, 1], work[RATES_, 0, 2])
    x = page_mv(work, R_, X[0], X[1], X[2])
    u = page_mv(work, R_, w[1] * X[2] - w[2] * X[1], w[2] * X[0] - w[0] * X[2], w[0] * X[1] - w[1] * X[0])
    for i in range(3):
        out[i] = x[i]
        out[3 + i] = u[i]


@in_place
def position_record(form, P, q, v, work, out):
    """Position and velocity of the body's reference point (the centre of mass)."""
    for i in range(3):
        out[i] = q[i]
        out[3 + i] = v[i]


@in_place
def rotor_record(form, P, q, v, work, out):
    """Left support point ``p₁ = x + R s``, ``s = [−L_L, 0, 0]``, and its velocity (Sect. 4.2)."""
    form[2](q, v, 3, False, work, 0)
    s0 = -P[10]
    x = page_mv(work, R_, s0, 0.0, 0.0)
    u = page_mv(work, R_, 0.0, work[RATES_, 0, 2] * s0, -work[RATES_, 0, 1] * s0)
    for i in range(3):
        out[i] = q[i] + x[i]
        out[3 + i] = v[i] + u[i]


def _single_kind(name, dynamics, constraints, record, *, position: bool, joint_rows: int, check):
    return ModelKind(
        name,
        (dynamics, constraints, record, bodies_uac, bodies_tangent, bodies_tangent_inv),
        n=lambda P, form: form[0] + (3 if position else 0),
        n_constraints=lambda P, form: joint_rows + form[1],
        n_pages=lambda P, form: _SINGLE_PAGES,
        n_record=lambda P, form: 6,
        check=check,
    )


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

    def description(self) -> md.Model:
        """The top as a :class:`mbslib.model.Model`: one body with its centre of mass at ``X``
        (``R₀ = I``), turning with ``ω₀`` about a spherical joint at the origin, under gravity."""
        body = md.RigidBody("top", self.mass, self.inertia, position=self.com, velocity=np.cross(self.omega0, self.com),
                            angular_velocity=self.omega0)
        pivot = md.Joint("spherical", None, 0, point_a=np.zeros(3), point_b=-self.com)
        return md.Model((body,), (pivot,), gravity=md.Gravity(self.gravity))


def top_params(mass: float, inertia, com, gravity) -> np.ndarray:
    """The parameter vector ``P = [m, J (9), X, g]`` of the heavy-top kernels, shape (16,)."""
    return np.concatenate([[mass], np.ravel(inertia), com, gravity])


def _check_single(P, form):
    return vector("P", P, (16,))


def _check_spherical(P, form):
    """16 values; EP may add the Jacobian flag ``P[16]`` (see :func:`spherical_constraints`)."""
    if form is rp.EP and np.size(P) == 17:
        P = vector("P", P, (17,))
        if P[16] not in (0.0, 1.0):
            raise ValueError(f"P[16] (EP Jacobian flag) must be 0 or 1, got {P[16]}")
        return P
    return vector("P", P, (16,))


#: The single-body model families (kernels above).
TOP = _single_kind("heavy top about the fixed point", top_dynamics, free_constraints, top_record,
                   position=False, joint_rows=0, check=_check_single)
SPHERICAL_TOP = _single_kind("heavy top with spherical joint", spherical_top_dynamics,
                             spherical_constraints, position_record, position=True, joint_rows=3,
                             check=_check_spherical)
ROTOR = _single_kind("rotor on flexible supports", rotor_dynamics, free_constraints, rotor_record,
                     position=True, joint_rows=0, check=_check_single)
#: The two tops in RV, on the kernels written for ``Ĝ = I`` (same names: the same families).
TOP_LIE = _single_kind(TOP.name, top_dynamics_rv, free_constraints, top_record, position=False, joint_rows=0,
                       check=_check_single)
SPHERICAL_TOP_LIE = _single_kind(SPHERICAL_TOP.name, spherical_top_dynamics_rv, spherical_constraints_rv,
                                 position_record, position=True, joint_rows=3, check=_check_spherical)

#: Model code → (family, formulation bundle): the one table a new model is added to.
REGISTRY = {
    TOP_RV: (TOP_LIE, rp.RV), TOP_RXYZ: (TOP, rp.RXYZ), TOP_EP: (TOP, rp.EP),
    SPH_RV: (SPHERICAL_TOP_LIE, rp.RV), SPH_RXYZ: (SPHERICAL_TOP, rp.RXYZ), SPH_EP: (SPHERICAL_TOP, rp.EP),
    ROT_RV: (ROTOR, rp.RV), ROT_RXYZ: (ROTOR, rp.RXYZ), ROT_EP: (ROTOR, rp.EP),
    MB_RV: (mbk.MULTIBODY, rp.RV), MB_RXYZ: (mbk.MULTIBODY, rp.RXYZ), MB_EP: (mbk.MULTIBODY, rp.EP),
    CHAIN: (puma.CHAIN, rp.VECTOR),
}


@dataclass(frozen=True)
class CompiledModel:
    """One model of this module: its code (see the module table) and parameter vector ``P``.

    A state ``x`` of a model is ``[q; v]`` with shape (2 n,). The compiled integrators run it
    through :attr:`kernels` and :attr:`form` (:mod:`mbslib.formulations.compiled`).
    """

    code: int
    P: np.ndarray

    def __post_init__(self):
        if self.code not in REGISTRY:
            raise ValueError(f"code must be one of {sorted(REGISTRY)}, got {self.code!r}")
        object.__setattr__(self, "P", self.kind.check(self.P, self.form))

    @property
    def kind(self) -> ModelKind:
        """The model family."""
        return REGISTRY[self.code][0]

    @property
    def form(self) -> tuple:
        """The formulation bundle (:mod:`mbslib.formulations.rotation_parameters`)."""
        return REGISTRY[self.code][1]

    @property
    def kernels(self) -> tuple:
        """The kernel bundle ``(dynamics, constraints, record, uac, tangent, tangent_inv)``."""
        return self.kind.kernels

    @property
    def n(self) -> int:
        """Number of coordinates (= velocities)."""
        return int(self.kind.n(self.P, self.form))

    @property
    def n_constraints(self) -> int:
        return int(self.kind.n_constraints(self.P, self.form))

    @property
    def n_pages(self) -> int:
        """4×4 pages of scratch of the kernels (:func:`mbslib.formulations.compiled.workspace`)."""
        return int(self.kind.n_pages(self.P, self.form))

    @property
    def n_record(self) -> int:
        """Values per record of the kernels' ``record``."""
        return int(self.kind.n_record(self.P, self.form))

    @property
    def pattern(self) -> tuple[np.ndarray, np.ndarray] | None:
        """Structural nonzeros ``(N, Bp)`` of ``M, K, C`` and of ``B`` (boolean), None if dense
        (:class:`~mbslib.formulations.compiled.ModelKind`)."""
        return None if self.kind.pattern is None else self.kind.pattern(self.P, self.form)

    @property
    def formulation(self) -> str:
        """ "RV", "Rxyz", "EP" or "Min. Coord."."""
        return FORMULATION[self.code]


def heavy_top_model(code: int, top: HeavyTop | None = None, *, ep_jacobian: str = "exact"
                    ) -> tuple[CompiledModel, np.ndarray]:
    """The heavy-top model ``code`` (0–5) and its initial state ``x0 = [q0; v0]``: what the
    absolute coordinates (:func:`mbslib.formulations.lie_group.absolute_model`) make of the top's
    description, about the pivot for codes 0–2.

    ``ep_jacobian`` (``SPH_EP`` only): ``"exact"``, the derivative of the quadratic rotation
    formula, or ``"tangent"``, ``R X̃ Ĝ`` as in Exudyn (see :func:`constraint_jacobian`).
    """
    from mbslib.formulations import lie_group  # which imports this module

    if code not in range(ROT_RV):
        raise ValueError(f"code must be a heavy-top model (0–5), got {code!r}")
    description = (HeavyTop() if top is None else top).description()
    form, about_pivot = FORMULATION[code], code <= TOP_EP
    return (lie_group.absolute_model(description, form, about_pivot=about_pivot, ep_jacobian=ep_jacobian),
            lie_group.initial_state(description, form, about_pivot=about_pivot))


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

    def description(self) -> md.Model:
        """The rotor as a :class:`mbslib.model.Model`: one body at rest at the origin spinning about
        its x axis, two springs of zero rest length from the support points ``[∓L_L, 0, 0]`` to
        the same points on the ground, the torque (44) as a constant applied load and, for
        ``damping > 0``, two ground dampers (:class:`~mbslib.model.PointDamper`) at the support
        points, which resist their whole velocity.
        """
        body = md.RigidBody("rotor", self.mass, self.inertia, angular_velocity=[self.spin, 0.0, 0.0])
        points = ([-self.support, 0.0, 0.0], [self.support, 0.0, 0.0])
        supports = tuple(md.Spring(None, 0, point, point, self.stiffness) for point in points)
        dampers = tuple(md.PointDamper(None, 0, point, point, self.damping) for point in points if self.damping > 0)
        return md.Model((body,), springs=supports, loads=(md.AppliedLoad(0, torque=md.Constant(self.torque)),),
                        dampers=dampers)


def rotor_params(mass: float, inertia, support: float, stiffness: float, damping: float, torque) -> np.ndarray:
    """The parameter vector ``P = [m, J (9), L_L, k, d, t (3)]`` of the rotor kernels, shape (16,)."""
    return np.concatenate([[mass], np.ravel(inertia), [support, stiffness, damping], torque])


def rotor_model(code: int, rotor: Rotor | None = None) -> tuple[CompiledModel, np.ndarray]:
    """The rotor model ``code`` (6, 7, 8) and its initial state: what the absolute coordinates
    (:func:`mbslib.formulations.lie_group.absolute_model`) make of the rotor's description."""
    from mbslib.formulations import lie_group  # which imports this module

    if code not in (ROT_RV, ROT_RXYZ, ROT_EP):
        raise ValueError(f"code must be a rotor model (6, 7 or 8), got {code!r}")
    description = (Rotor() if rotor is None else rotor).description()
    return (lie_group.absolute_model(description, FORMULATION[code]),
            lie_group.initial_state(description, FORMULATION[code]))
