"""Particle–binder torus hitting a rigid wall on SE(3)^n (Baker & Gonzalez 2021, Sect. 4).

A ring of ``n_p`` equal spheres (diameter ``D_p = D_t sin(π/n_p)``, neighbours in point contact)
joined by binder bonds between ring neighbours. The potential is paper eq. (43) plus a wall:

* binder torsion + bending (44)–(47): ``U^m = Σ K^m |theta_ij|^2 / 2`` with
  ``alpha_ij = (-alpha_i) ⊕ alpha_j``;
* binder axial (51)–(52): ``U^a = Σ K^a (r/r0 - 1)^2 / 2`` (normalized strain, as printed);
* binder shear (53)–(55), our reading of the garbled print, the only
  one for which the printed force and torque are gradients of the printed energy:
  ``U^s = Σ K^s (1 - c)^2 / 2`` with ``c = (R_i n0_ij)·(R_j n_ij)``;
* particle–particle Hertz contact (56)–(57) with the prefactor 2/5 that makes (56) consistent
  with the force (57) (the print says 5/2), over all pairs;
* particle–wall contact: the same law against the particle's mirror image
  (the paper calls it a special case of particle–particle contact and gives no formula).

``law="absolute"`` switches the axial and contact laws to absolute overlaps (our variant,
under which the paper's Fig. 5 step is stable).

:func:`make_torus` builds the ring from the paper's values (:class:`TorusParams`);
:meth:`BinderTorus.description` is the torus as a :class:`mbslib.model.Model`: spherical bodies,
one :class:`~mbslib.model.ElasticBond` per binder bond and one :class:`~mbslib.model.HertzContact`
(pairs and wall). What the maps run is what the rescaled Rodrigues formulation makes of that
description, :class:`mbslib.formulations.rodrigues.BondedSpheresSystem`: the arguments of the
compiled kernels below.
All torques are **spatial** (``R M``). Two implementations: :func:`forces_numpy` (pure NumPy,
the reference, from the parameters) and a compiled numba kernel, :func:`forces_kernel`, with
:func:`record_kernel` the diagnostics of one state: the compiled time loop of maps (23), (25),
(27), (27*), :func:`mbslib.studies.binder_torus.simulate_torus`, calls them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numba
import numpy as np

from mbslib.model import MEASURES, ElasticBond, HertzContact, Model, PlaneWall, RigidBody
from mbslib.rodrigues import compose, matrices, rr_angle, rr_compose, rr_matrix
from mbslib.trajectory import Trajectory
from mbslib.validation import nonnegative, positive, vector

#: Columns of the diagnostics record (:func:`record_kernel`) of a torus run
#: (:func:`mbslib.studies.binder_torus.simulate_torus`).
COLUMNS = ("t", "K_t", "K_r", "U_m", "U_s", "U_a", "U_pp", "U_pw", "E",
           "P_x", "P_y", "P_z", "Ls_x", "Ls_y", "Ls_z", "L_x", "L_y", "L_z", "I_w", "q2")
ENERGY_TERMS = ("K_t", "K_r", "U_m", "U_s", "U_a", "U_pp", "U_pw")


@dataclass(frozen=True)
class TorusParams:
    """Torus model parameters (paper Sect. 4.1; [D] = our default where the paper is silent).

    Validated on construction: ``ValueError`` names the offending parameter. Use
    :meth:`replace` (or :func:`dataclasses.replace`) for a modified copy; it validates again.

    Attributes
    ----------
    n_p : int
        Number of particles (paper 80), integer >= 3.
    D_t : float
        Ring diameter (paper 3), > 0.
    m, J : float
        Particle mass and scalar inertia (paper 1, 1), > 0.
    K_m, K_a, K_s : float
        Binder bending/torsion, axial, shear stiffness (paper 10, 200, 200), >= 0.
    K_pp : float
        Particle stiffness (paper 2100), >= 0.
    K_pw : float
        Wall stiffness [D] = K_pp, >= 0.
    v0 : float
        Initial speed towards the wall (paper 1), finite.
    x_c : float
        Initial ring-centre x [D] = 2 (first contact at t ≈ 0.441), finite.
    x_w : float
        Wall position (paper 0), finite; the ring must start right of it.
    law : str
        "normalized" (as printed) or "absolute" (absolute overlaps): :data:`mbslib.model.MEASURES`.
    wall : bool
        Include the wall.
    contact : bool
        Include particle–particle contact.
    """

    n_p: int = 80
    D_t: float = 3.0
    m: float = 1.0
    J: float = 1.0
    K_m: float = 10.0
    K_a: float = 200.0
    K_s: float = 200.0
    K_pp: float = 2100.0
    K_pw: float = 2100.0
    v0: float = 1.0
    x_c: float = 2.0
    x_w: float = 0.0
    law: str = "normalized"
    wall: bool = True
    contact: bool = True

    def __post_init__(self):
        try:
            integral = int(self.n_p) == self.n_p
        except (TypeError, ValueError, OverflowError):
            integral = False
        if not integral or self.n_p < 3:
            raise ValueError(f"n_p must be an integer >= 3, got {self.n_p!r}")
        object.__setattr__(self, "n_p", int(self.n_p))
        positive(D_t=self.D_t, m=self.m, J=self.J)
        nonnegative(K_m=self.K_m, K_a=self.K_a, K_s=self.K_s, K_pp=self.K_pp, K_pw=self.K_pw)
        vector("v0", self.v0, ())
        vector("x_c", self.x_c, ())
        vector("x_w", self.x_w, ())
        if self.law not in MEASURES:
            raise ValueError(f"law must be one of {MEASURES}, got {self.law!r}")
        for name in ("wall", "contact"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ValueError(f"{name} must be a bool, got {getattr(self, name)!r}")
        if self.x_c - self.D_t / 2 <= self.x_w:
            raise ValueError(f"x_c must place the ring right of the wall (x_c - D_t/2 > x_w), got x_c = {self.x_c!r}")

    def replace(self, **changes) -> TorusParams:
        """A validated copy with ``changes`` applied."""
        return replace(self, **changes)


@dataclass(frozen=True)
class BinderTorus:
    """The torus system: parameters plus the reference geometry (build with :func:`make_torus`).

    Attributes
    ----------
    params : TorusParams
    D : float
        Particle diameter ``D_t sin(π/n_p)``.
    x0 : ndarray (n, 3)
        Reference (= initial) positions.
    bonds : ndarray (nb, 2)
        Bonded pairs (i, i+1 mod n), each once.
    n0 : ndarray (nb, 3)
        Reference bond directions ``(x_i0 - x_j0)/r0``.
    r0 : ndarray (nb,)
        Reference bond lengths (= D).
    """

    params: TorusParams
    D: float
    x0: np.ndarray
    bonds: np.ndarray
    n0: np.ndarray
    r0: np.ndarray

    @property
    def m(self) -> float:
        return self.params.m

    @property
    def J(self) -> float:
        return self.params.J

    @property
    def n(self) -> int:
        return self.params.n_p

    def force_torque(self, x, alpha):
        """Forces and spatial torques, shape (n, 3) each (pure NumPy path)."""
        F, T, _, _ = forces_numpy(self, x, alpha)
        return F, T

    def initial_conditions(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Paper Sect. 4.1: reference positions, ``v = (-v0, 0, 0)``, ``R = I``, ``Ω = 0``.

        Returns ``(x, v, alpha, w)``, each of shape (n, 3); the state of the maps is
        :func:`mbslib.integrators.rodrigues_vi.initial_state` of the torus and these arrays.
        """
        n = self.n
        v = np.tile([-self.params.v0, 0.0, 0.0], (n, 1))
        return self.x0.copy(), v, np.zeros((n, 3)), np.zeros((n, 3))

    def description(self) -> Model:
        """The torus as a description: particle ``i`` a sphere of mass m and inertia J I at its
        reference position with the initial state of :meth:`initial_conditions`; one
        :class:`~mbslib.model.ElasticBond` (K^m, K^a, K^s, the stretch of ``law``, rest pose from the
        initial states) per bond ``(i, i+1)``; one :class:`~mbslib.model.HertzContact` of radius
        ``D/2``, stiffness K^pp and the overlap of ``law`` over all pairs (none without
        ``contact``), with the wall ``x = x_w`` of stiffness K^pw (none without ``wall``)."""
        p = self.params
        bodies = tuple(RigidBody(f"particle {i}", p.m, np.full(3, p.J), position=self.x0[i],
                                 velocity=[-p.v0, 0.0, 0.0]) for i in range(self.n))
        bonds = tuple(ElasticBond(int(i), int(j), rotation_stiffness=p.K_m, axial_stiffness=p.K_a,
                                  shear_stiffness=p.K_s, stretch=p.law) for i, j in self.bonds)
        wall = PlaneWall([p.x_w, 0.0, 0.0], [1.0, 0.0, 0.0], p.K_pw) if p.wall else None
        contact = HertzContact(0.5 * self.D, p.K_pp, pairs="all" if p.contact else (), wall=wall, overlap=p.law)
        return Model(bodies, bonds=bonds, contacts=(contact,))


def make_torus(params: TorusParams = TorusParams()) -> BinderTorus:
    """Build the ring geometry from validated ``params`` (our defaults: x–y plane, φ_i = 2πi/n_p,
    bonds (i, i+1))."""
    if not isinstance(params, TorusParams):
        raise ValueError(f"params must be a TorusParams, got {type(params).__name__}")
    p = params
    n = int(p.n_p)
    phi = 2.0 * np.pi * np.arange(n) / n
    x0 = np.stack([p.x_c + 0.5 * p.D_t * np.cos(phi), 0.5 * p.D_t * np.sin(phi), np.zeros(n)], axis=1)
    bonds = np.stack([np.arange(n), (np.arange(n) + 1) % n], axis=1)
    d = x0[bonds[:, 0]] - x0[bonds[:, 1]]
    r0 = np.linalg.norm(d, axis=1)
    return BinderTorus(params=p, D=p.D_t * np.sin(np.pi / n), x0=x0, bonds=bonds, n0=d / r0[:, None], r0=r0)


# ---------------------------------------------------------------------------------------------
# Pure-NumPy reference
# ---------------------------------------------------------------------------------------------


def forces_numpy(torus: BinderTorus, x, alpha):
    """Forces, spatial torques, potential terms and wall force, vectorised NumPy.

    Parameters
    ----------
    x, alpha : array_like, shape (n, 3)

    Returns
    -------
    F, T : ndarray, shape (n, 3)
        ``-dU/dx`` and the spatial torques ``R M``.
    U : ndarray, shape (5,)
        ``(U^m, U^s, U^a, U^pp, U^pw)``.
    F_wall : float
        Total wall force (x component).
    """
    p = torus.params
    x = np.asarray(x, dtype=float)
    alpha = np.asarray(alpha, dtype=float)
    absolute = p.law == "absolute"
    F = np.zeros_like(x)
    T = np.zeros_like(x)
    i, j = torus.bonds[:, 0], torus.bonds[:, 1]
    R = rr_matrix(alpha)

    # binder torsion + bending, (44)-(47): τ_i = K^m θ_ij α_ij/|α_ij|, τ_j = -τ_i
    a_ij = rr_compose(-alpha[i], alpha[j])
    a_norm = np.linalg.norm(a_ij, axis=1)
    theta = 2.0 * np.arctan(0.5 * a_norm)
    ratio = np.where(a_norm > 1e-8, theta / np.where(a_norm > 1e-8, a_norm, 1.0), 1.0 - a_norm**2 / 12.0)
    tau = p.K_m * ratio[:, None] * a_ij
    np.add.at(T, i, tau)
    np.add.at(T, j, -tau)
    U_m = 0.5 * p.K_m * np.sum(theta**2)

    # binder axial, (51)-(52)
    d = x[i] - x[j]
    r = np.linalg.norm(d, axis=1)
    n = d / r[:, None]
    if absolute:
        strain, stiff = r - torus.r0, p.K_a
    else:
        strain, stiff = r / torus.r0 - 1.0, p.K_a / torus.r0
    f = -(stiff * strain)[:, None] * n
    U_a = 0.5 * p.K_a * np.sum(strain**2)

    # binder shear, (53)-(55): c = (R_i n0)·(R_j n)
    a = np.einsum("bkl,bl->bk", R[i], torus.n0)
    b = np.einsum("bkl,bl->bk", R[j], n)
    g = 1.0 - np.sum(a * b, axis=1)
    u = np.einsum("blk,bl->bk", R[j], a)  # R_j^T a
    proj = u - np.sum(n * u, axis=1)[:, None] * n
    f += (p.K_s * g / r)[:, None] * proj
    tau = (p.K_s * g)[:, None] * np.cross(a, b)
    np.add.at(T, i, tau)
    np.add.at(T, j, -tau)
    U_s = 0.5 * p.K_s * np.sum(g**2)
    np.add.at(F, i, f)
    np.add.at(F, j, -f)

    # particle-particle Hertz contact, (56)-(57) with prefactor 2/5, all pairs i < j
    U_pp = 0.0
    if p.contact:
        ii, jj = np.triu_indices(torus.n, 1)
        d = x[ii] - x[jj]
        r = np.linalg.norm(d, axis=1)
        hit = r < torus.D
        ii, jj, d, r = ii[hit], jj[hit], d[hit], r[hit]
        delta = torus.D - r if absolute else 1.0 - r / torus.D
        scale = p.K_pp if absolute else p.K_pp / torus.D
        f = (scale * delta**1.5 / r)[:, None] * d
        np.add.at(F, ii, f)
        np.add.at(F, jj, -f)
        U_pp = 0.4 * p.K_pp * np.sum(delta**2.5)

    # particle-wall contact: mirror-image Hertz law
    U_pw, F_wall = 0.0, 0.0
    if p.wall:
        half = 0.5 * torus.D
        gap = x[:, 0] - p.x_w
        delta = np.where(gap < half, (half - gap) if absolute else (1.0 - gap / half), 0.0)
        fw = (p.K_pw if absolute else p.K_pw / half) * delta**1.5
        F[:, 0] += fw
        U_pw = 0.4 * p.K_pw * np.sum(delta**2.5)
        F_wall = float(np.sum(fw))
    return F, T, np.array([U_m, U_s, U_a, U_pp, U_pw]), F_wall


# ---------------------------------------------------------------------------------------------
# Compiled kernel (scalar loops, fixed summation order: bitwise reproducible)
# ---------------------------------------------------------------------------------------------


@numba.njit(cache=True, inline="always")
def _pair(A, i, j, a0, a1, a2):
    """Action and reaction on the pair (i, j): ``A[i] += a``, ``A[j] -= a``."""
    A[i, 0] += a0
    A[i, 1] += a1
    A[i, 2] += a2
    A[j, 0] -= a0
    A[j, 1] -= a1
    A[j, 2] -= a2


@numba.njit(cache=True, fastmath=False)
def forces_kernel(x, alpha, bi, bj, n0, r0, D, Km, Ka, Ks, Kpp, Kpw, x_w, absolute, wall, contact, F, T, R, U):
    """Fill F, T (n, 3), R (n, 3, 3) and U (5,) = (U^m, U^s, U^a, U^pp, U^pw); return the wall force."""
    n = x.shape[0]
    matrices(alpha, R)  # (4)
    for k in range(n):
        for d in range(3):
            F[k, d] = 0.0
            T[k, d] = 0.0
    for q in range(5):
        U[q] = 0.0
    for b in range(bi.shape[0]):
        i, j = bi[b], bj[b]
        # bending/torsion (45)-(47): α_ij = (-α_i) ⊕ α_j
        s0, s1, s2 = compose(-alpha[i, 0], -alpha[i, 1], -alpha[i, 2], alpha[j, 0], alpha[j, 1], alpha[j, 2])
        an = np.sqrt(s0 * s0 + s1 * s1 + s2 * s2)
        th = 2.0 * np.arctan(0.5 * an)
        ratio = th / an if an > 1e-8 else 1.0 - an * an / 12.0
        U[0] += 0.5 * Km * th * th
        _pair(T, i, j, Km * ratio * s0, Km * ratio * s1, Km * ratio * s2)
        # axial (51)-(52)
        dx0, dx1, dx2 = x[i, 0] - x[j, 0], x[i, 1] - x[j, 1], x[i, 2] - x[j, 2]
        r = np.sqrt(dx0 * dx0 + dx1 * dx1 + dx2 * dx2)
        m0, m1, m2 = dx0 / r, dx1 / r, dx2 / r
        if absolute:
            e = r - r0[b]
            fa = -Ka * e
        else:
            e = r / r0[b] - 1.0
            fa = -Ka / r0[b] * e
        U[2] += 0.5 * Ka * e * e
        # shear (53)-(55): a = R_i n0, bb = R_j n, c = a·bb
        u0 = R[i, 0, 0] * n0[b, 0] + R[i, 0, 1] * n0[b, 1] + R[i, 0, 2] * n0[b, 2]
        u1 = R[i, 1, 0] * n0[b, 0] + R[i, 1, 1] * n0[b, 1] + R[i, 1, 2] * n0[b, 2]
        u2 = R[i, 2, 0] * n0[b, 0] + R[i, 2, 1] * n0[b, 1] + R[i, 2, 2] * n0[b, 2]
        w0 = R[j, 0, 0] * m0 + R[j, 0, 1] * m1 + R[j, 0, 2] * m2
        w1 = R[j, 1, 0] * m0 + R[j, 1, 1] * m1 + R[j, 1, 2] * m2
        w2 = R[j, 2, 0] * m0 + R[j, 2, 1] * m1 + R[j, 2, 2] * m2
        g = 1.0 - (u0 * w0 + u1 * w1 + u2 * w2)
        U[1] += 0.5 * Ks * g * g
        z0 = R[j, 0, 0] * u0 + R[j, 1, 0] * u1 + R[j, 2, 0] * u2  # R_j^T a
        z1 = R[j, 0, 1] * u0 + R[j, 1, 1] * u1 + R[j, 2, 1] * u2
        z2 = R[j, 0, 2] * u0 + R[j, 1, 2] * u1 + R[j, 2, 2] * u2
        nz = m0 * z0 + m1 * z1 + m2 * z2
        fs = Ks * g / r
        f0 = fa * m0 + fs * (z0 - nz * m0)
        f1 = fa * m1 + fs * (z1 - nz * m1)
        f2 = fa * m2 + fs * (z2 - nz * m2)
        _pair(F, i, j, f0, f1, f2)
        t0 = Ks * g * (u1 * w2 - u2 * w1)
        t1 = Ks * g * (u2 * w0 - u0 * w2)
        t2 = Ks * g * (u0 * w1 - u1 * w0)
        _pair(T, i, j, t0, t1, t2)
    if contact:
        D2 = D * D
        for i in range(n):
            for j in range(i + 1, n):
                dx0, dx1, dx2 = x[i, 0] - x[j, 0], x[i, 1] - x[j, 1], x[i, 2] - x[j, 2]
                r2 = dx0 * dx0 + dx1 * dx1 + dx2 * dx2
                if r2 < D2:
                    r = np.sqrt(r2)
                    if absolute:
                        delta = D - r
                        fc = Kpp * delta * np.sqrt(delta) / r
                    else:
                        delta = 1.0 - r / D
                        fc = Kpp / D * delta * np.sqrt(delta) / r
                    U[3] += 0.4 * Kpp * delta * delta * np.sqrt(delta)
                    _pair(F, i, j, fc * dx0, fc * dx1, fc * dx2)
    Fw = 0.0
    if wall:
        half = 0.5 * D
        for i in range(n):
            gap = x[i, 0] - x_w
            if gap < half:
                if absolute:
                    delta = half - gap
                    fw = Kpw * delta * np.sqrt(delta)
                else:
                    delta = 1.0 - gap / half
                    fw = Kpw / half * delta * np.sqrt(delta)
                U[4] += 0.4 * Kpw * delta * delta * np.sqrt(delta)
                F[i, 0] += fw
                Fw += fw
    return Fw


@numba.njit(cache=True)
def record_kernel(t, x, v, alpha, w, m, J, U, Iw, out):
    """Fill one record (see COLUMNS); return (E, q2)."""
    n = x.shape[0]
    Kt = 0.0
    Kr = 0.0
    q2 = 0.0
    for c in range(9, 18):
        out[c] = 0.0
    for k in range(n):
        vv = v[k, 0] ** 2 + v[k, 1] ** 2 + v[k, 2] ** 2
        ww = w[k, 0] ** 2 + w[k, 1] ** 2 + w[k, 2] ** 2
        an = np.sqrt(alpha[k, 0] ** 2 + alpha[k, 1] ** 2 + alpha[k, 2] ** 2)
        th = 2.0 * np.arctan(0.5 * an)
        Kt += 0.5 * m * vv
        Kr += 0.5 * J * ww
        q2 += x[k, 0] ** 2 + x[k, 1] ** 2 + x[k, 2] ** 2 + vv + th * th + ww
        for d in range(3):
            out[9 + d] += m * v[k, d]
            out[12 + d] += J * w[k, d]
            out[15 + d] += J * w[k, d]
        out[15] += m * (x[k, 1] * v[k, 2] - x[k, 2] * v[k, 1])
        out[16] += m * (x[k, 2] * v[k, 0] - x[k, 0] * v[k, 2])
        out[17] += m * (x[k, 0] * v[k, 1] - x[k, 1] * v[k, 0])
    E = Kt + Kr + U[0] + U[1] + U[2] + U[3] + U[4]
    out[0] = t
    out[1] = Kt
    out[2] = Kr
    for q in range(5):
        out[3 + q] = U[q]
    out[8] = E
    out[18] = Iw
    out[19] = q2
    return E, q2


def column(run: Trajectory, name: str) -> np.ndarray:
    """One diagnostics column of a run of :func:`mbslib.studies.binder_torus.simulate_torus` by name
    (see :data:`COLUMNS`)."""
    if name not in COLUMNS:
        raise ValueError(f"name must be one of {COLUMNS}, got {name!r}")
    return run.x[:, COLUMNS.index(name)]


def energy_terms(torus: BinderTorus, x, v, alpha, w) -> np.ndarray:
    """``(K_t, K_r, U^m, U^s, U^a, U^pp, U^pw)`` of one state (NumPy), shape (7,)."""
    p = torus.params
    _, _, U, _ = forces_numpy(torus, x, alpha)
    K_t = 0.5 * p.m * np.sum(np.asarray(v) ** 2)
    K_r = 0.5 * p.J * np.sum(np.asarray(w) ** 2)
    return np.concatenate([[K_t, K_r], U])


def h1_integrand(x, v, alpha, w) -> np.ndarray:
    """Integrand of the H¹ norm (35) summed over bodies, ``Σ |x|^2 + |v|^2 + θ^2 + |Ω|^2``; inputs (..., n, 3)."""
    sq = lambda a: np.sum(np.asarray(a) ** 2, axis=(-1, -2))  # noqa: E731
    return sq(x) + sq(v) + np.sum(rr_angle(alpha) ** 2, axis=-1) + sq(w)
