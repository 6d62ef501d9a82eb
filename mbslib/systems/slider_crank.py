"""The spatial rigid slider–crank (IFToMM benchmark) of paper 002, Sect. 4.3, in three formulations.

Holzinger, Arnold & Gerstmayr (2024), Example 4.3, Fig. 14; Table 8 is lost and the data follow
the spec's reconstruction (§3.3) of the IFToMM problem as set up in the authors' Exudyn test model:
crank AB (revolute joint A about the global x axis), connecting rod BC (spherical joint B,
universal joint C), slider (prismatic joint D along the global x axis), gravity along −z, one
degree of freedom, no friction.

Three rigid bodies (crank, rod, slider) carry absolute coordinates ``[x, ρ]`` each, in one of the
formulations of :mod:`mbslib.systems.lie_group_mbs`: ``RV`` (rotation vector, Lie group, velocity
``[u, ω]``), ``RXYZ`` (Tait–Bryan xyz, classical formulation 2) or ``EP`` (Euler parameters and
the normalisation constraints). The 17 joint equations are

====  ==============================================================
rows  equation
====  ==============================================================
0–2   revolute A, position: ``x₁ + R₁ a₁ − A``
3–4   revolute A, axis: ``e_yᵀ R₁ e_x``, ``e_zᵀ R₁ e_x``
5–7   spherical B: ``x₁ + R₁ b₁ − x₂ − R₂ b₂``
8–10  universal C, position: ``x₂ + R₂ c₂ − x₃`` (slider centre at C)
11    universal C, cross: ``e_yᵀ R₂ u₂`` (slider y axis ⊥ rod axis ``u₂``)
12–13 prismatic D: ``e_yᵀ x₃``, ``e_zᵀ x₃``
14–16 prismatic D, no rotation: ``R₃[1,2]``, ``R₃[2,0]``, ``R₃[0,1]``
====  ==============================================================

plus ``pᵢᵀpᵢ − 1`` (EP). ``u₂`` is the rod direction that is global x in the initial
configuration, so the cross of the universal joint blocks the relative rotation about global z
(spec §3.3, Exudyn ``GenericJoint`` mask ``[1,1,1,0,0,1]``). The other assignment of the cross
(slider x ⊥ rod's initial y) jams: it admits no configuration once ``s > 0.283`` m.

The generalized-α kernel here is the one of :mod:`mbslib.integrators.generalized_alpha`
(Algorithms 4/5, eqs. 33–43, Bottasso scaling, full or modified Newton) for this multi-body
assembly: the chapter's kernel dispatches on the single-body model codes. A minimal-coordinate
reference (energy integral in the crank angle, solved with ``scipy``) serves as the exact
solution.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numba
import numpy as np

from mbslib.integrators.generalized_alpha import GeneralizedAlpha, NewtonSettings
from mbslib.systems.lie_group_mbs import (
    compose_rv,
    cross3,
    drx_dp,
    g_ep,
    g_rxyz,
    gdot_rxyz,
    mm,
    mv,
    rotation_ep,
    rotation_rv,
    rotation_rxyz,
    skew,
    solve,
    texp_so3,
)

#: Formulation codes.
RV, RXYZ, EP = 0, 1, 2
FORMULATIONS = {"RV": RV, "Rxyz": RXYZ, "EP": EP}
N_JOINT = 17

# ---------------------------------------------------------------------------------------------
# Parameters
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SliderCrank:
    """Data of the IFToMM spatial slider–crank (spec §3.3, reconstructed Table 8).

    Lengths in m, masses in kg, inertias (principal, body frame, about the centre of mass) in
    kg m², angular velocity in rad/s. The rod's body x axis points from B to C (axial inertia
    ``rod_inertia[0]``).
    """

    pivot: tuple = (0.0, 0.1, 0.12)
    crank_length: float = 0.08
    rod_length: float = 0.3
    crank_mass: float = 0.12
    rod_mass: float = 0.5
    slider_mass: float = 2.0
    crank_inertia: tuple = (1e-4, 1e-4, 1e-5)
    rod_inertia: tuple = (4e-4, 4e-3, 4e-3)
    slider_inertia: tuple = (1e-4, 1e-4, 1e-4)
    gravity: float = 9.81
    omega0: float = 6.0

    def __post_init__(self):
        for name in ("crank_length", "rod_length", "crank_mass", "rod_mass", "slider_mass"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)!r}")

    # -- minimal-coordinate kinematics ------------------------------------------------------

    def _rod_frame0(self):
        B = np.asarray(self.pivot) + [0.0, 0.0, self.crank_length]
        C = np.array([self.slider_position(0.0), 0.0, 0.0])
        x = (C - B) / self.rod_length
        z = B - (B @ x) * x
        z /= np.linalg.norm(z)
        return np.column_stack([x, np.cross(z, x), z])

    def crank_point(self, theta):
        """Point B for crank angle θ (rotation about global x, θ = 0: crank along +z)."""
        L = self.crank_length
        return np.asarray(self.pivot) + np.array([0.0, -L * np.sin(theta), L * np.cos(theta)])

    def slider_position(self, theta):
        """Slider coordinate s(θ) (positive-x assembly branch)."""
        B = self.crank_point(theta)
        return B[0] + np.sqrt(self.rod_length**2 - B[1] ** 2 - B[2] ** 2)

    def configuration(self, theta):
        """Centres of mass ``x`` (3, 3) and rotations ``R`` (3, 3, 3) of crank, rod and slider."""
        th = float(theta)
        c, s = np.cos(th), np.sin(th)
        R1 = np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])
        B = self.crank_point(th)
        C = np.array([self.slider_position(th), 0.0, 0.0])
        x1 = np.asarray(self.pivot) + R1 @ [0.0, 0.0, 0.5 * self.crank_length]
        # rod: direction d = (C − B)/L and the universal cross w = R₂ u₂ ⊥ e_y with w·d = const
        R0 = self._rod_frame0()
        d0, w0 = R0[:, 0], np.array([1.0, 0.0, 0.0])
        c0 = d0 @ w0
        d = (C - B) / self.rod_length
        r = np.hypot(d[0], d[2])
        gam = np.arctan2(d[2], d[0]) + np.arccos(c0 / r)
        w = np.array([np.cos(gam), 0.0, np.sin(gam)])

        def frame(a, b):
            e2 = b - (b @ a) * a
            e2 /= np.linalg.norm(e2)
            return np.column_stack([a, e2, np.cross(a, e2)])

        R2 = frame(d, w) @ frame(d0, w0).T @ R0
        return np.array([x1, 0.5 * (B + C), C]), np.array([R1, R2, np.eye(3)])

    def velocity_map(self, theta, step=1e-3):
        """Velocities per unit θ̇: centre-of-mass and body angular velocities, (3, 3) each.

        Sixth-order central differences of :meth:`configuration` (truncation error below 1e-15
        for these smooth functions, round-off about 1e-13).
        """
        w6 = ((1, 3.0 / 4.0), (2, -3.0 / 20.0), (3, 1.0 / 60.0))
        x, R = self.configuration(theta)
        dx = np.zeros_like(x)
        dR = np.zeros_like(R)
        for k, c in w6:
            xp, Rp = self.configuration(theta + k * step)
            xm, Rm = self.configuration(theta - k * step)
            dx += c * (xp - xm) / step
            dR += c * (Rp - Rm) / step
        om = np.array([_vee(R[i].T @ dR[i]) for i in range(3)])
        return dx, om

    def masses(self):
        return np.array([self.crank_mass, self.rod_mass, self.slider_mass])

    def inertias(self):
        return np.array([self.crank_inertia, self.rod_inertia, self.slider_inertia], dtype=float)

    def generalized_mass(self, theta):
        """``M(θ)`` with kinetic energy ``½ M(θ) θ̇²``."""
        dx, om = self.velocity_map(theta)
        return float(self.masses() @ np.sum(dx * dx, axis=1) + np.sum(self.inertias() * om * om))

    def potential(self, theta):
        x, _ = self.configuration(theta)
        return float(self.gravity * self.masses() @ x[:, 2])

    def energy(self):
        """Total energy of the initial state."""
        return 0.5 * self.generalized_mass(0.0) * self.omega0**2 + self.potential(0.0)

    def _series(self, n=128):
        """Fourier coefficients of the 2π-periodic ``M(θ)`` and ``V(θ)`` (n samples, cached)."""
        cache = self.__dict__.get("_series_cache")
        if cache is None or cache[0] != n:
            th = 2 * np.pi * np.arange(n) / n
            samples = [[self.generalized_mass(a), self.potential(a)] for a in th]
            coef = np.fft.rfft(samples, axis=0) / n
            coef[1:] *= 2.0
            if n % 2 == 0:
                coef[-1] /= 2.0
            object.__setattr__(self, "_series_cache", (n, coef))
            cache = self.__dict__["_series_cache"]
        return cache[1]

    def mass_and_potential(self, theta, n=128):
        """``M(θ)`` and ``V(θ)`` from their trigonometric interpolants (spectrally accurate)."""
        coef = self._series(n)
        e = np.exp(1j * np.arange(coef.shape[0]) * theta)
        return (e @ coef).real

    def reference(self, t_eval, rtol=1e-13):
        """Minimal-coordinate solution ``θ(t), s(t)`` from the energy integral.

        ``θ̇ = sqrt(2 (E − V(θ)) / M(θ))`` (θ̇ > 0: θ = 0 is the top of the potential and the
        crank starts at 6 rad/s), integrated with DOP853; ``M`` and ``V`` are evaluated through
        their trigonometric interpolants.
        """
        from scipy.integrate import solve_ivp

        M0, V0 = self.mass_and_potential(0.0)
        E = 0.5 * M0 * self.omega0**2 + V0
        t_eval = np.atleast_1d(np.asarray(t_eval, dtype=float))

        def rhs(t, y):
            M, V = self.mass_and_potential(y[0])
            return [np.sqrt(2.0 * (E - V) / M)]

        sol = solve_ivp(rhs, (0.0, float(t_eval[-1])), [0.0], method="DOP853", t_eval=t_eval,
                        rtol=rtol, atol=rtol * 1e-2)
        theta = sol.y[0]
        return theta, np.array([self.slider_position(th) for th in theta])

    # -- absolute coordinates ---------------------------------------------------------------

    def params(self) -> np.ndarray:
        """Parameter vector of the numba kernels, shape (31,).

        ``[m (3), J diag (9), g (3), A (3), a₁, b₁, b₂, c₂ (12, body frames), u₂ (3)]``.
        """
        x, R = self.configuration(0.0)
        R0 = R[1]
        Lc, Lr = self.crank_length, self.rod_length
        return np.concatenate([
            self.masses(), self.inertias().ravel(), [0.0, 0.0, -self.gravity], self.pivot,
            [0.0, 0.0, -0.5 * Lc], [0.0, 0.0, 0.5 * Lc],
            [-0.5 * Lr, 0.0, 0.0], [0.5 * Lr, 0.0, 0.0],
            R0.T @ [1.0, 0.0, 0.0],
        ])

    def initial_state(self, form: int) -> np.ndarray:
        """Consistent ``[q0; v0]`` in formulation ``form`` (θ = 0, θ̇ = ω₀)."""
        from scipy.spatial.transform import Rotation

        x, R = self.configuration(0.0)
        dx, om = self.velocity_map(0.0)
        qs, vs = [], []
        for i in range(3):
            u, w = dx[i] * self.omega0, om[i] * self.omega0
            if form == RV:
                rot, rate = Rotation.from_matrix(R[i]).as_rotvec(), w
            elif form == RXYZ:
                rot = rxyz_from_matrix(R[i])
                rate = np.linalg.solve(g_rxyz(rot), w)
            else:
                xyzw = Rotation.from_matrix(R[i]).as_quat()
                rot = np.array([xyzw[3], *xyzw[:3]])
                rate = 0.25 * g_ep(rot).T @ w
            qs.append(np.concatenate([x[i], rot]))
            vs.append(np.concatenate([u, rate]))
        return np.concatenate(qs + vs)


def _vee(A):
    return 0.5 * np.array([A[2, 1] - A[1, 2], A[0, 2] - A[2, 0], A[1, 0] - A[0, 1]])


def rxyz_from_matrix(R) -> np.ndarray:
    """Tait–Bryan xyz angles ``φ`` with ``R = R_x(φ₀) R_y(φ₁) R_z(φ₂)``, |φ₁| < π/2."""
    return np.array([np.arctan2(-R[1, 2], R[2, 2]), np.arcsin(np.clip(R[0, 2], -1, 1)),
                     np.arctan2(-R[0, 1], R[0, 0])])


# ---------------------------------------------------------------------------------------------
# numba model kernels
# ---------------------------------------------------------------------------------------------


@numba.njit(cache=True)
def n_rot(form):
    """Rotation parameters per body l."""
    return 4 if form == EP else 3


@numba.njit(cache=True)
def n_coordinates(form):
    return 3 * (3 + n_rot(form))


@numba.njit(cache=True)
def n_constraints(form):
    return N_JOINT + (3 if form == EP else 0)


@numba.njit(cache=True)
def _rot(form, r):
    if form == RV:
        return rotation_rv(r)
    if form == RXYZ:
        return rotation_rxyz(r)
    return rotation_ep(r)


@numba.njit(cache=True)
def _kin(form, r):
    """``Ĝ`` with ``ω = Ĝ ρ̇`` (identity for RV); (3, l)."""
    if form == RV:
        return np.eye(3)
    if form == RXYZ:
        return g_rxyz(r)
    return g_ep(r)


@numba.njit(cache=True)
def _d_rot_a(form, r, a):
    """``∂(R a)/∂ρ`` (classical) or ``∂(R exp(z̃) a)/∂z`` at z = 0 (RV); shape (3, l)."""
    if form == EP:
        return drx_dp(r, a)
    return -mm(mm(_rot(form, r), skew(a)), _kin(form, r))


@numba.njit(cache=True)
def body_rotation(form, q, i):
    """Rotation matrix of body i (0 crank, 1 rod, 2 slider)."""
    nb = 3 + n_rot(form)
    return _rot(form, q[i * nb + 3:(i + 1) * nb])


@numba.njit(cache=True)
def mass_matrix(form, q, P):
    """``blockdiag(mᵢ I, Jᵢ)`` (RV, constant) or ``blockdiag(mᵢ I, ĜᵢᵀJᵢĜᵢ)`` (eq. 14)."""
    l = n_rot(form)
    nb = 3 + l
    M = np.zeros((3 * nb, 3 * nb))
    for i in range(3):
        o = i * nb
        for k in range(3):
            M[o + k, o + k] = P[i]
        G = _kin(form, q[o + 3:o + nb])
        J = np.diag(P[3 + 3 * i:6 + 3 * i].copy())
        M[o + 3:o + nb, o + 3:o + nb] = mm(mm(G.T.copy(), J), G)
    return M


@numba.njit(cache=True)
def _rot_force(form, r, rd, Jd):
    """Rotational part of the force of one body: ``−ω̃Jω`` (RV) or ``Ĝᵀ(−ω̃Jω − J Ġ ρ̇)``; (l,)."""
    G = _kin(form, r)
    w = mv(G, rd)
    Jw = Jd * w
    rhs = -cross3(w, Jw)
    if form == RV:
        return rhs
    Gd = gdot_rxyz(r, rd) if form == RXYZ else g_ep(rd)  # Ĝ(p) is linear: d/dt Ĝ(p) = Ĝ(ṗ)
    return mv(G.T.copy(), rhs - Jd * mv(Gd, rd))


@numba.njit(cache=True)
def force(form, q, v, P):
    """Gravity and gyroscopic terms: ``g`` (RV, eq. 11) or ``Ĥᵀĝ`` (eqs. 12, 14)."""
    nb = 3 + n_rot(form)
    f = np.zeros(3 * nb)
    for i in range(3):
        o = i * nb
        f[o:o + 3] = P[i] * P[12:15]
        f[o + 3:o + nb] = _rot_force(form, q[o + 3:o + nb], v[o + 3:o + nb], P[3 + 3 * i:6 + 3 * i])
    return f


@numba.njit(cache=True)
def constraint(form, q, P):
    """Joint equations (module table) and EP normalisation; shape (n_constraints,)."""
    l = n_rot(form)
    nb = 3 + l
    x1, x2, x3 = q[0:3], q[nb:nb + 3], q[2 * nb:2 * nb + 3]
    R1, R2, R3 = body_rotation(form, q, 0), body_rotation(form, q, 1), body_rotation(form, q, 2)
    A, a1, b1, b2, c2, u2 = P[15:18], P[18:21], P[21:24], P[24:27], P[27:30], P[30:33]
    phi = np.zeros(n_constraints(form))
    phi[0:3] = x1 + mv(R1, a1) - A
    phi[3] = R1[1, 0]
    phi[4] = R1[2, 0]
    phi[5:8] = x1 + mv(R1, b1) - x2 - mv(R2, b2)
    phi[8:11] = x2 + mv(R2, c2) - x3
    phi[11] = mv(R2, u2)[1]
    phi[12] = x3[1]
    phi[13] = x3[2]
    phi[14] = R3[1, 2]
    phi[15] = R3[2, 0]
    phi[16] = R3[0, 1]
    if form == EP:
        for i in range(3):
            p = q[i * nb + 3:(i + 1) * nb]
            phi[N_JOINT + i] = np.sum(p * p) - 1.0
    return phi


@numba.njit(cache=True)
def constraint_jacobian(form, q, P):
    """``B = ∂Φ̇/∂v`` (RV: derivative along ``R exp(z̃)``) or ``Φ_q`` (Rxyz, EP); (j, n)."""
    l = n_rot(form)
    nb = 3 + l
    r1, r2, r3 = q[3:nb], q[nb + 3:2 * nb], q[2 * nb + 3:3 * nb]
    a1, b1, b2, c2, u2 = P[18:21], P[21:24], P[24:27], P[27:30], P[30:33]
    ex, ey, ez = np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0]), np.array([0.0, 0.0, 1.0])
    B = np.zeros((n_constraints(form), 3 * nb))
    o1, o2, o3 = 3, nb + 3, 2 * nb + 3
    for k in range(3):
        B[k, k] = 1.0
        B[5 + k, k] = 1.0
        B[5 + k, nb + k] = -1.0
        B[8 + k, nb + k] = 1.0
        B[8 + k, 2 * nb + k] = -1.0
    B[0:3, o1:o1 + l] = _d_rot_a(form, r1, a1)
    D = _d_rot_a(form, r1, ex)
    B[3, o1:o1 + l] = D[1]
    B[4, o1:o1 + l] = D[2]
    B[5:8, o1:o1 + l] = _d_rot_a(form, r1, b1)
    B[5:8, o2:o2 + l] = -_d_rot_a(form, r2, b2)
    B[8:11, o2:o2 + l] = _d_rot_a(form, r2, c2)
    B[11, o2:o2 + l] = _d_rot_a(form, r2, u2)[1]
    B[12, 2 * nb + 1] = 1.0
    B[13, 2 * nb + 2] = 1.0
    B[14, o3:o3 + l] = _d_rot_a(form, r3, ez)[1]
    B[15, o3:o3 + l] = _d_rot_a(form, r3, ex)[2]
    B[16, o3:o3 + l] = _d_rot_a(form, r3, ey)[0]
    if form == EP:
        for i in range(3):
            o = i * nb + 3
            B[N_JOINT + i, o:o + 4] = 2.0 * q[o:o + 4]
    return B


@numba.njit(cache=True)
def uac(form, q_n, dq):
    """Update absolute coordinates (Algorithm 1): ``ψ_n ⋄ Δψ`` per body for RV, else addition."""
    q = q_n + dq
    if form == RV:
        for i in range(3):
            o = 6 * i + 3
            q[o:o + 3] = compose_rv(q_n[o:o + 3], dq[o:o + 3])
    return q


@numba.njit(cache=True)
def tangent(form, dq):
    """``T_exp(Δq)`` (block diagonal, RV) or identity."""
    n = dq.size
    T = np.eye(n)
    if form == RV:
        for i in range(3):
            o = 6 * i + 3
            T[o:o + 3, o:o + 3] = texp_so3(dq[o:o + 3])
    return T


@numba.njit(cache=True)
def energy(form, q, v, P):
    """Kinetic plus potential energy ``½ vᵀ M v − Σ mᵢ gᵀ xᵢ``."""
    nb = 3 + n_rot(form)
    e = 0.5 * np.sum(v * mv(mass_matrix(form, q, P), v))
    for i in range(3):
        e -= P[i] * np.sum(P[12:15] * q[i * nb:i * nb + 3])
    return e


@numba.njit(cache=True)
def outputs(form, q, v, P):
    """``[s, θ mod 2π, energy, |Φ|]``: slider position, crank angle (wrapped), energy, drift."""
    nb = 3 + n_rot(form)
    R1 = body_rotation(form, q, 0)
    phi = constraint(form, q, P)
    return np.array([q[2 * nb], np.arctan2(R1[2, 1], R1[1, 1]), energy(form, q, v, P),
                     np.sqrt(np.sum(phi[:N_JOINT] ** 2))])


# ---------------------------------------------------------------------------------------------
# generalized-α (Algorithms 4 and 5) for the assembly
# ---------------------------------------------------------------------------------------------


@numba.njit(cache=True)
def residual(form, P, q, v, vd, lam):
    """``r = M v̇ − g + Bᵀ λ`` (eqs. 34/39) and ``Φ``."""
    r = mv(mass_matrix(form, q, P), vd) - force(form, q, v, P) + mv(
        constraint_jacobian(form, q, P).T.copy(), lam)
    return r, constraint(form, q, P)


@numba.njit(cache=True)
def iteration_matrix(form, P, q, v, dq, h, beta, beta_p, gamma_p, use_texp):
    """Scaled ``[[βh² (M β' + C γ' + K T), Bᵀ], [B T, 0]]`` (eqs. 35/40).

    ``K = −∂g/∂z`` and ``C = −∂g/∂v`` by central differences of the gyroscopic forces, body by
    body (gravity is constant; eqs. 37/38, 42/43: derivatives of ``M v̇`` and ``Bᵀλ`` neglected).
    """
    n = q.size
    l = n_rot(form)
    nb = 3 + l
    j = n_constraints(form)
    KT = np.zeros((n, n))
    C = np.zeros((n, n))
    for i in range(3):
        o = i * nb + 3
        r = q[o:o + l].copy()
        rd = v[o:o + l].copy()
        Jd = P[3 + 3 * i:6 + 3 * i]
        for k in range(l):
            if form != RV:  # the RV forces do not depend on the configuration: K = 0
                z = np.zeros(l)
                z[k] = 1e-6
                fp = _rot_force(form, r + z, rd, Jd)
                KT[o:o + l, o + k] = -(fp - _rot_force(form, r - z, rd, Jd)) / 2e-6
            dv = 1e-6 * max(1.0, abs(rd[k]))
            z = np.zeros(l)
            z[k] = dv
            fp = _rot_force(form, r, rd + z, Jd)
            C[o:o + l, o + k] = -(fp - _rot_force(form, r, rd - z, Jd)) / (2.0 * dv)
    B = constraint_jacobian(form, q, P)
    S = np.zeros((n + j, n + j))
    S[:n, :n] = (beta * h * h) * (mass_matrix(form, q, P) * beta_p + C * gamma_p + KT)
    S[:n, n:] = B.T
    if use_texp and form == RV:
        S[n:, :n] = mm(B, tangent(form, dq))
    else:
        S[n:, :n] = B
    return S


@numba.njit(cache=True)
def initial_acceleration(form, P, q, v):
    """Consistent ``v̇₀, λ₀`` from ``[[M, Bᵀ], [B, 0]] [v̇; λ] = [g; −Ḃv]`` (Ḃv by differences)."""
    n = q.size
    j = n_constraints(form)
    A = np.zeros((n + j, n + j))
    rhs = np.zeros(n + j)
    B = constraint_jacobian(form, q, P)
    A[:n, :n] = mass_matrix(form, q, P)
    A[:n, n:] = B.T
    A[n:, :n] = B
    rhs[:n] = force(form, q, v, P)
    s = 1e-5 / max(1.0, np.max(np.abs(v)))
    Bp = constraint_jacobian(form, uac(form, q, s * v), P)
    Bm = constraint_jacobian(form, uac(form, q, -s * v), P)
    rhs[n:] = -(mv(Bp, v) - mv(Bm, v)) / (2.0 * s)
    x = solve(A, rhs)
    return x[:n], x[n:]


@numba.njit(cache=True)
def _run(form, P, q0, v0, h, n_steps, am, af, beta, gamma, modified, rtol, atol, max_iter,
         contractivity, max_modified, use_texp, record_every):
    n = q0.size
    j = n_constraints(form)
    beta_p = (1.0 - am) / (h * h * beta * (1.0 - af))
    gamma_p = gamma / (h * beta)
    scale = beta * h * h
    vd_n, lam = initial_acceleration(form, P, q0, v0)
    q_n, v_n, a_n = q0.copy(), v0.copy(), vd_n.copy()
    S = np.zeros((n + j, n + j))
    have_S = False
    n_rec = n_steps // record_every + 1 if record_every > 0 else 1
    rec = np.zeros((n_rec, 4))
    rec[0] = outputs(form, q_n, v_n, P)
    total, n_jac, failed = 0, 0, -1
    rhs = np.zeros(n + j)
    for step in range(n_steps):
        vd = np.zeros(n)
        lam = np.zeros(j)
        a = (af * vd_n - am * a_n) / (1.0 - am)
        v = v_n + h * (1.0 - gamma) * a_n + h * gamma * a
        dq = h * v_n + h * h * (0.5 - beta) * a_n + h * h * beta * a
        q = uac(form, q_n, dq)
        it, since, err_prev, tol_r, ok = 0, 0, np.inf, atol, False
        while True:
            r, phi = residual(form, P, q, v, vd, lam)
            nr = np.sqrt(np.sum(r * r))
            nphi = np.sqrt(np.sum(phi * phi))
            if not (np.isfinite(nr) and np.isfinite(nphi)):
                break
            if it == 0:
                tol_r = max(rtol * nr, atol)
            err = max(nr / tol_r, nphi / atol)
            if err <= 1.0:
                ok = True
                break
            if it >= max_iter:
                break
            if (not modified) or (not have_S) or (it > 0 and err > contractivity * err_prev) \
                    or since >= max_modified:
                S[:, :] = iteration_matrix(form, P, q, v, dq, h, beta, beta_p, gamma_p, use_texp)
                have_S = True
                n_jac += 1
                since = 0
            rhs[:n] = -scale * r
            rhs[n:] = -phi
            x = solve(S, rhs)
            if not np.all(np.isfinite(x)):
                break
            ddq = x[:n]
            dq = dq + ddq
            q = uac(form, q_n, dq)
            v = v + gamma_p * ddq
            vd = vd + beta_p * ddq
            lam = lam + x[n:] / scale
            it += 1
            since += 1
            err_prev = err
        total += it
        if not ok:
            failed = step
            break
        a_n = a + (1.0 - af) / (1.0 - am) * vd
        q_n, v_n, vd_n = q, v, vd
        if record_every > 0 and (step + 1) % record_every == 0:
            rec[(step + 1) // record_every] = outputs(form, q_n, v_n, P)
    if record_every <= 0:
        rec[0] = outputs(form, q_n, v_n, P)
    return q_n, v_n, total, n_jac, failed, rec


@dataclass(frozen=True)
class SliderCrankResult:
    """Outcome of :func:`simulate`.

    ``record`` has rows ``[s, θ mod 2π, energy, |Φ_joints|]`` at ``t = k·record_every·h``
    (only the final state when ``record_every = 0``).
    """

    q: np.ndarray
    v: np.ndarray
    n_steps: int
    iterations_per_step: float
    jacobians: int
    failed_step: int
    wall_time: float
    record: np.ndarray

    @property
    def ok(self) -> bool:
        return self.failed_step < 0

    @property
    def s(self) -> float:
        """Final slider position."""
        return float(self.record[-1, 0])


def simulate(form, h: float, t_end: float, *, crank: SliderCrank | None = None,
             method: GeneralizedAlpha = GeneralizedAlpha(),
             newton: NewtonSettings = NewtonSettings(), record_every: int = 0) -> SliderCrankResult:
    """Integrate the slider–crank in formulation ``form`` ("RV", "Rxyz", "EP" or its code) with
    generalized-α at fixed step ``h`` up to ``t_end``. A failed Newton iteration ends the run."""
    form = FORMULATIONS.get(form, form)
    if form not in (RV, RXYZ, EP):
        raise ValueError(f"unknown formulation {form!r}")
    if not (h > 0 and t_end > 0):
        raise ValueError("h and t_end must be positive")
    n_steps = round(t_end / h)
    if abs(n_steps * h - t_end) > 1e-9 * t_end:
        raise ValueError(f"t_end = {t_end} is not a whole multiple of h = {h}")
    crank = SliderCrank() if crank is None else crank
    P = crank.params()
    x0 = crank.initial_state(form)
    n = int(n_coordinates(form))
    start = time.perf_counter()
    q, v, total, n_jac, failed, rec = _run(
        form, P, x0[:n].copy(), x0[n:].copy(), float(h), int(n_steps), method.alpha_m,
        method.alpha_f, method.beta, method.gamma, newton.modified, newton.rtol, newton.atol,
        newton.max_iter, newton.contractivity, newton.max_modified, newton.use_texp,
        int(record_every))
    wall = time.perf_counter() - start
    done = n_steps if failed < 0 else max(failed, 1)
    return SliderCrankResult(q, v, int(n_steps), total / done, int(n_jac), int(failed), wall, rec)
