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
heavy tops (:meth:`HeavyTop.params`) and ``[m, J, L_L, k, d, t]`` for the rotor
(:meth:`Rotor.params`).

The rotation maps and small dense linear algebra the models use are the numba kernels of
:mod:`mbslib.kernels`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numba
import numpy as np

from mbslib.kernels import (
    cross3,
    outer3,
    mm,
    mv,
    skew,
    rotation_rv,
    texp_so3,
    texp_inv_so3,
    compose_rv,
    rotation_rxyz,
    g_rxyz,
    gdot_rxyz,
    rotation_ep,
    drx_dp,
    g_ep,
)
from mbslib.systems import multibody as mb
from mbslib.systems import puma560 as puma
from mbslib.validation import inertia, positive, vector

# ---------------------------------------------------------------------------------------------
# Model dispatch (numba)
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
def force_jacobians(code, q, v, t, P):
    """``K = −∂g/∂z`` (along :func:`uac`) and ``C = −∂g/∂v`` by central differences (eqs. 37/38).

    The single-body forces depend on the position only for the rotor (its supports); for the
    heavy tops only the rotation columns are differenced.
    """
    if _is_multibody(code):
        return mb.force_jacobians(code - MB_RV, q, v, t, P)
    n = q.size
    K = np.zeros((n, n))
    C = np.zeros((n, n))
    first = 0 if code >= ROT_RV else n - (4 if _is_ep(code) else 3)
    for k in range(first, n):
        z = np.zeros(n)
        z[k] = 1e-6
        K[:, k] = (
            -(force(code, uac(code, q, z), v, t, P) - force(code, uac(code, q, -z), v, t, P)) / 2e-6
        )
        dv = 1e-6 * max(1.0, abs(v[k]))
        vp = v.copy()
        vm = v.copy()
        vp[k] += dv
        vm[k] -= dv
        C[:, k] = -(force(code, q, vp, t, P) - force(code, q, vm, t, P)) / (2.0 * dv)
    return K, C


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
def tangent(code, dq):
    """``T_exp(Δq)`` = blockdiag(I, T_SO(3)(Δψ)) for RV, identity otherwise; (n_v, n_v)."""
    if _is_multibody(code):
        return mb.tangent(code - MB_RV, dq)
    n = dq.size
    T = np.eye(n)
    if is_lie(code):
        T[n - 3 :, n - 3 :] = texp_so3(dq[n - 3 :])
    return T


@numba.njit(cache=True)
def tangent_inv_times(code, dq, v):
    """``T_exp⁻¹(Δq) v`` (eq. 25) for RV, ``v`` otherwise; shape (n_v,)."""
    if _is_multibody(code):
        return mb.tangent_inv_times(code - MB_RV, dq, v)
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


@numba.njit(cache=True)
def n_record(code, P):
    """Width of :func:`record`."""
    return 2 * n_coordinates(code, P) if code >= MB_RV else 6


@numba.njit(cache=True)
def record(code, q, v, P):
    """What a time loop stores: :func:`com_state` of a single body, ``[q; v]`` of a system."""
    if code >= MB_RV:
        return np.concatenate((q, v))
    return com_state(code, q, v, P)


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
        if self.code == SPH_EP and np.size(self.P) == 17:  # flag P[16]: see constraint_jacobian
            object.__setattr__(self, "P", vector("P", self.P, (17,)))
            if self.P[16] not in (0.0, 1.0):
                raise ValueError(f"P[16] (EP Jacobian flag) must be 0 or 1, got {self.P[16]}")
        elif self.code < MB_RV:
            object.__setattr__(self, "P", vector("P", self.P, (16,)))
        elif self.code == CHAIN:
            object.__setattr__(self, "P", vector("P", self.P, (puma.N_PARAMS,)))
        else:
            object.__setattr__(self, "P", mb.check_params(self.P))

    @property
    def n(self) -> int:
        """Number of coordinates (= velocities)."""
        return int(n_coordinates(self.code, self.P))

    @property
    def n_constraints(self) -> int:
        return int(n_constraints(self.code, self.P))

    @property
    def formulation(self) -> str:
        """ "RV", "Rxyz" or "EP"."""
        return FORMULATION[self.code]


def heavy_top_model(code: int, top: HeavyTop | None = None, *, ep_jacobian: str = "exact"
                    ) -> tuple[Model, np.ndarray]:
    """The heavy-top model ``code`` and its initial state ``x0 = [q0; v0]``.

    ``ep_jacobian`` (``SPH_EP`` only): ``"exact"``, the derivative of the quadratic rotation
    formula, or ``"tangent"``, ``R X̃ Ĝ`` as in Exudyn (see :func:`constraint_jacobian`).
    """
    if ep_jacobian not in ("exact", "tangent"):
        raise ValueError(f"ep_jacobian must be 'exact' or 'tangent', got {ep_jacobian!r}")
    if ep_jacobian == "tangent" and code != SPH_EP:
        raise ValueError(f"ep_jacobian='tangent' applies to SPH_EP ({SPH_EP}) only, got code {code}")
    top = HeavyTop() if top is None else top
    q0, v0 = top.initial_state(code)
    P = top.params()
    if ep_jacobian == "tangent":
        P = np.concatenate([P, [1.0]])
    return Model(code, P), np.concatenate([q0, v0])


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
