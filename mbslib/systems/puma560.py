"""The Puma 560 robot of paper 002, Sect. 4.4, in minimal (joint) coordinates.

Holzinger, Arnold & Gerstmayr (2024, Multibody Syst. Dyn.), Example 4.4: a six-axis Puma 560
drives point to point from ``φ_init`` to ``φ_goal`` (their eq. 45) under joint PD control. The
paper omits the robot's kinematic and inertia data ("omitted here due to space reasons"), and the
bodies of its Tables 9 (motion profiles) and 10 (PD gains) are lost from the extracted text we
work from (their captions survive), so the data of this example are reconstructed:

- **Kinematics and inertia.** Standard Denavit–Hartenberg Puma 560 of Corke's Robotics Toolbox
  (``mdl_puma560``), whose dynamic data are those of Armstrong, Khatib & Burdick (1986, IEEE ICRA)
  as collected by Corke & Armstrong-Hélouvry (1994, IEEE ICRA): link frames by
  ``ⁱ⁻¹Tᵢ = Rot_z(θᵢ) Trans_z(dᵢ) Trans_x(aᵢ) Rot_x(αᵢ)``, base frame 0 = inertial frame
  (z up, gravity ``[0, 0, −g]``), centres of mass ``r_cᵢ`` and principal inertias about the
  centre of mass in the axes of frame i. No end-effector offset, motor (rotor) inertia or
  friction. Link 1 has mass 0 in Corke's set; here it has 20 kg with ``I_xx = I_zz = 1e-8`` so
  that an absolute-coordinate model of the same robot has a regular mass matrix. Its centre of
  mass lies on the joint-1 axis and it turns only about its own y axis (= z₀), so the joint
  dynamics see only ``I_yy = 0.35`` of it. (These principal values violate the triangle
  inequality of a physical body; that is harmless for the dynamics and is not checked.)
- **Motion.** Per joint a symmetric bang–bang profile of duration ``T`` (1 s): constant
  acceleration ``aᵢ = 4 Δφᵢ / T²`` on ``[0, T/2]``, ``−aᵢ`` on ``(T/2, T]``, zero velocity at
  both ends, ``φ_goal`` held for ``t ≥ T`` (``φ_init`` for ``t < 0``). ``φ_ref`` is C¹,
  ``φ̈_ref`` jumps at ``0, T/2, T``.
- **Control.** A torsional spring–damper per joint whose offset follows the reference,
  ``τᵢ = −kᵢ (φᵢ − φᵢ_ref(t)) − dᵢ (φ̇ᵢ − φ̇ᵢ_ref(t))``, no gravity compensation, with the gains
  labelled "assumed" in the authors' Exudyn serial-robot examples:
  ``k = [4e4, 4e4, 4e4, 100, 100, 10]`` N m/rad, ``d = [400, 400, 100, 1, 1, 0.1]`` N m s/rad.

Equations of motion ``M(φ) φ̈ + c(φ, φ̇) + g(φ) = τ(t, φ, φ̇)``. The numba kernels work on the
flat parameter vector of :meth:`Puma560.params`: the bias ``c + g`` is the recursive
Newton–Euler algorithm (RNEA; Luh, Walker & Paul 1980) with every vector in its own link frame,
written for standard DH frames as in Corke's ``rne_dh``, and the mass matrix is RNEA with unit
joint accelerations and zero velocity and gravity (Walker & Orin 1982, method 1). The
reference solution integrates these ODEs with ``scipy``'s DOP853 piecewise between the kinks of
the right-hand side at ``T/2`` and ``T``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from mbslib.kernels import solve
from mbslib.loads import bang_bang
from mbslib.systems import multibody as mb
from mbslib.validation import nonnegative, positive, vector

# ---------------------------------------------------------------------------------------------
# Layout of the flat parameter vector P (see Puma560.params)
# ---------------------------------------------------------------------------------------------

N_JOINTS = 6
IDX_D, IDX_A, IDX_ALPHA, IDX_M = 0, 6, 12, 18
IDX_COM, IDX_INERTIA = 24, 42  # 6×3 row-major each
IDX_G = 60
IDX_PHI0, IDX_PHI1, IDX_T = 61, 67, 73
IDX_K, IDX_DAMP = 74, 80
N_PARAMS = 86

_PI2 = 0.5 * np.pi


@dataclass(frozen=True)
class Puma560:
    """Data of the Puma 560 (standard DH), its point-to-point motion and joint PD gains.

    Lengths in m, angles of the DH table in rad, joint angles ``phi_*_deg`` in degrees, masses
    in kg, inertias (principal, about the centre of mass, axes of frame i) in kg m², gravity in
    m/s², duration in s, stiffness in N m/rad, damping in N m s/rad. Row i of ``coms`` and
    ``inertias`` belongs to link i + 1.
    """

    dh_d: tuple = (0.0, 0.0, 0.15005, 0.4318, 0.0, 0.0)
    dh_a: tuple = (0.0, 0.4318, 0.0203, 0.0, 0.0, 0.0)
    dh_alpha: tuple = (_PI2, 0.0, -_PI2, _PI2, -_PI2, 0.0)
    masses: tuple = (20.0, 17.4, 4.8, 0.82, 0.34, 0.09)
    coms: tuple = (
        (0.0, 0.0, 0.0),
        (-0.3638, 0.006, 0.2275),
        (-0.0203, -0.0141, 0.070),
        (0.0, 0.019, 0.0),
        (0.0, 0.0, 0.0),
        (0.0, 0.0, 0.032),
    )
    inertias: tuple = (
        (1e-8, 0.35, 1e-8),
        (0.13, 0.524, 0.539),
        (0.066, 0.086, 0.0125),
        (1.8e-3, 1.3e-3, 1.8e-3),
        (0.3e-3, 0.4e-3, 0.3e-3),
        (0.15e-3, 0.15e-3, 0.04e-3),
    )
    gravity: float = 9.81
    phi_init_deg: tuple = (0.0, 22.5, 90.0, 0.0, 22.5, 0.0)
    phi_goal_deg: tuple = (-120.0, 60.0, -200.0, 90.0, 90.0, 45.0)
    duration: float = 1.0
    stiffness: tuple = (4e4, 4e4, 4e4, 100.0, 100.0, 10.0)
    damping: tuple = (400.0, 400.0, 100.0, 1.0, 1.0, 0.1)

    def __post_init__(self):
        for name in ("dh_d", "dh_a", "dh_alpha", "masses", "phi_init_deg", "phi_goal_deg",
                     "stiffness", "damping"):
            vector(name, getattr(self, name), (N_JOINTS,))
        for name in ("coms", "inertias"):
            vector(name, getattr(self, name), (N_JOINTS, 3))
        for i, m in enumerate(np.asarray(self.masses, dtype=float)):
            positive(**{f"masses[{i}]": m})
        for (i, j), v in np.ndenumerate(np.asarray(self.inertias, dtype=float)):
            nonnegative(**{f"inertias[{i}][{j}]": v})
        positive(**{"inertias[0][1]": float(self.inertias[0][1])})
        nonnegative(gravity=self.gravity)
        positive(duration=self.duration)
        for name in ("stiffness", "damping"):
            for i, v in enumerate(np.asarray(getattr(self, name), dtype=float)):
                nonnegative(**{f"{name}[{i}]": v})

    # -- parameters and reference motion -------------------------------------------------------

    def params(self) -> np.ndarray:
        """Flat float64 parameter vector ``P`` of the numba kernels, shape (86,).

        ======  =====================================================
        slice   content
        ======  =====================================================
        0:6     DH ``d`` [m]
        6:12    DH ``a`` [m]
        12:18   DH ``α`` [rad]
        18:24   masses [kg]
        24:42   centres of mass ``r_c`` in frame i, 6×3 row-major [m]
        42:60   principal inertias about the COM, 6×3 row-major [kg m²]
        60      gravity ``g`` [m/s²] (acting along −z₀)
        61:67   ``φ_init`` [rad]
        67:73   ``φ_goal`` [rad]
        73      duration ``T`` of the motion [s]
        74:80   joint stiffness ``k`` [N m/rad]
        80:86   joint damping ``d`` [N m s/rad]
        ======  =====================================================
        """
        f = lambda v: np.asarray(v, dtype=float).ravel()  # noqa: E731
        P = np.concatenate([
            f(self.dh_d), f(self.dh_a), f(self.dh_alpha), f(self.masses), f(self.coms),
            f(self.inertias), [float(self.gravity)], np.deg2rad(f(self.phi_init_deg)),
            np.deg2rad(f(self.phi_goal_deg)), [float(self.duration)], f(self.stiffness),
            f(self.damping),
        ])
        assert P.size == N_PARAMS
        return P

    def reference(self, t):
        """Reference ``(φ_ref, φ̇_ref, φ̈_ref)`` at time(s) ``t``, each of shape ``t.shape + (6,)``.

        The bang–bang profile of :func:`mbslib.loads.bang_bang` per joint: ``φ̈_ref = +a`` on
        ``[0, T/2]``, ``−a`` on ``(T/2, T]``, 0 otherwise, ``a = 4 Δφ / T²``.
        """
        t = np.asarray(t, dtype=float)
        P = self.params()
        out = np.array([reference_numba(P, float(ti)) for ti in t.ravel()])
        return tuple(out[:, k].reshape(t.shape + (N_JOINTS,)) for k in range(3))

    def initial_state(self) -> np.ndarray:
        """``[φ_init (rad); φ̇ = 0]``, shape (12,)."""
        return np.concatenate([np.deg2rad(np.asarray(self.phi_init_deg, dtype=float)),
                               np.zeros(N_JOINTS)])

    # -- kinematics (plain numpy, velocity level: independent of the RNEA kernels) -------------

    def link_frames(self, phi):
        """Rotations ``R`` (6, 3, 3) and origins ``o`` (6, 3) of DH frames 1..6 in frame 0."""
        phi = np.asarray(phi, dtype=float)
        R = np.empty((N_JOINTS, 3, 3))
        o = np.empty((N_JOINTS, 3))
        Rc, oc = np.eye(3), np.zeros(3)
        for i in range(N_JOINTS):
            ct, st = np.cos(phi[i]), np.sin(phi[i])
            ca, sa = np.cos(self.dh_alpha[i]), np.sin(self.dh_alpha[i])
            Ri = np.array([[ct, -st * ca, st * sa], [st, ct * ca, -ct * sa], [0.0, sa, ca]])
            pi = np.array([self.dh_a[i] * ct, self.dh_a[i] * st, self.dh_d[i]])
            oc = oc + Rc @ pi
            Rc = Rc @ Ri
            R[i], o[i] = Rc, oc
        return R, o

    def link_coms(self, phi) -> np.ndarray:
        """Centres of mass of links 1..6 in frame 0, shape (6, 3)."""
        R, o = self.link_frames(phi)
        return o + np.einsum("ijk,ik->ij", R, np.asarray(self.coms, dtype=float))

    def link_velocities(self, phi, dphi):
        """COM velocities ``v_com`` (6, 3; frame 0), body angular velocities ``ω`` (6, 3; frame i).

        Velocity recursion ``ωᵢ = ωᵢ₋₁ + z_{i−1} φ̇ᵢ``, ``v_{o,i} = v_{o,i−1} + ωᵢ × (oᵢ − oᵢ₋₁)``,
        ``v_{c,i} = v_{o,i} + ωᵢ × Rᵢ r_cᵢ``, all in frame 0.
        """
        dphi = np.asarray(dphi, dtype=float)
        R, o = self.link_frames(phi)
        coms = np.asarray(self.coms, dtype=float)
        v_com = np.empty((N_JOINTS, 3))
        om_body = np.empty((N_JOINTS, 3))
        w, v, z, op = np.zeros(3), np.zeros(3), np.array([0.0, 0.0, 1.0]), np.zeros(3)
        for i in range(N_JOINTS):
            w = w + z * dphi[i]
            v = v + np.cross(w, o[i] - op)
            v_com[i] = v + np.cross(w, R[i] @ coms[i])
            om_body[i] = R[i].T @ w
            z, op = R[i][:, 2], o[i]
        return v_com, om_body

    def potential_energy(self, phi) -> float:
        """Gravitational potential ``V = −Σ mᵢ gᵀ x_cᵢ = g Σ mᵢ z_cᵢ``."""
        m = np.asarray(self.masses, dtype=float)
        return float(self.gravity * m @ self.link_coms(phi)[:, 2])

    def kinetic_energy(self, phi, dphi) -> float:
        """``Σ ½ mᵢ |v_cᵢ|² + ½ ωᵢᵀ Iᵢ ωᵢ`` from :meth:`link_velocities`."""
        v, w = self.link_velocities(phi, dphi)
        m = np.asarray(self.masses, dtype=float)
        J = np.asarray(self.inertias, dtype=float)
        return float(0.5 * m @ np.sum(v * v, axis=1) + 0.5 * np.sum(J * w * w))

    # -- the same robot in absolute coordinates ----------------------------------------------

    def system(self) -> mb.System:
        """Six rigid bodies in absolute coordinates (paper: ``6 (3 + l)`` equations of motion and
        ``6 × 5`` joint constraints).

        Body k has its origin at the centre of mass and the axes of DH frame k. Revolute joint k
        joins body k − 1 (the ground for k = 0) at the origin of frame k − 1 about its z axis;
        in body k that point is ``Rx(−α) [−a, 0, −d] − r_c`` and the axis ``[0, sin α, cos α]``.
        The PD controller of joint k is a torsional spring–damper about the same axis that
        measures the angle between the x axes of frames k − 1 and k, which is the DH angle θ_k.
        """
        e = np.eye(3)
        coms = np.asarray(self.coms, dtype=float)
        start = np.deg2rad(np.asarray(self.phi_init_deg, dtype=float))
        change = np.deg2rad(np.asarray(self.phi_goal_deg, dtype=float)) - start
        system = mb.System(gravity=(0.0, 0.0, -float(self.gravity)))
        for k in range(N_JOINTS):
            body = system.body(float(self.masses[k]), self.inertias[k])
            parent = body - 1 if k > 0 else mb.GROUND
            ca, sa = np.cos(self.dh_alpha[k]), np.sin(self.dh_alpha[k])
            Rx = np.array([[1.0, 0.0, 0.0], [0.0, ca, sa], [0.0, -sa, ca]])  # Rx(−α)
            pivot_parent = -coms[k - 1] if k > 0 else np.zeros(3)
            pivot_body = Rx @ [-self.dh_a[k], 0.0, -self.dh_d[k]] - coms[k]
            system.revolute(parent, pivot_parent, e[2], body, pivot_body, Rx @ e[2])
            system.spring(parent, e[0], e[1], body, e[0], float(self.stiffness[k]),
                          float(self.damping[k]), start[k], change[k], float(self.duration))
        return system

    def absolute_state(self, form: int) -> np.ndarray:
        """Initial ``[q; v]`` of :meth:`system` in formulation ``form`` (at rest in φ_init)."""
        phi0 = np.deg2rad(np.asarray(self.phi_init_deg, dtype=float))
        R, _ = self.link_frames(phi0)
        zero = np.zeros((N_JOINTS, 3))
        return mb.body_coordinates(form, self.link_coms(phi0), R, zero, zero)

    def joint_angles(self, form: int, P_system, q, t) -> np.ndarray:
        """Joint angles (6,) of the absolute-coordinate state ``q`` at time ``t``.

        The spring angles lie in (−π, π]; each is unwrapped to the branch nearest the
        reference angle at ``t`` (joint 3 turns by −290°).
        """
        ref, _, _ = reference_numba(self.params(), float(t))
        theta = np.array([mb.spring_angle(form, q, P_system, k)[0] for k in range(N_JOINTS)])
        return ref + np.angle(np.exp(1j * (theta - ref)))

    # -- reference solution --------------------------------------------------------------------

    def reference_solution(self, t_eval, rtol=1e-12, t_end=None):
        """High-accuracy ``φ(t)``, ``φ̇(t)`` at ``t_eval``, arrays of shape (len(t_eval), 6).

        DOP853 with ``rtol`` and ``atol = 1e-2 rtol``, integrated piecewise over ``[0, T/2]``,
        ``[T/2, T]``, ``[T, t_end]`` (the reference acceleration jumps there, so the right-hand
        side has kinks) and evaluated by the dense output. ``t_end`` defaults to ``max(t_eval)``;
        every time must lie in ``[0, t_end]``.
        """
        from scipy.integrate import solve_ivp

        t_eval = np.atleast_1d(np.asarray(t_eval, dtype=float))
        if t_eval.ndim != 1 or t_eval.size == 0:
            raise ValueError("t_eval must be a non-empty 1-D array of times")
        t_end = float(t_eval.max()) if t_end is None else float(t_end)
        if not (np.all(np.isfinite(t_eval)) and t_eval.min() >= 0.0 and t_eval.max() <= t_end):
            raise ValueError(f"t_eval must lie in [0, t_end = {t_end!r}]")
        P = self.params()
        T = float(self.duration)
        edges = [0.0] + [b for b in (0.5 * T, T) if b < t_end] + [t_end]

        def rhs(t, y):
            return np.concatenate([y[6:], chain_rhs(P, t, y[:6], y[6:])])

        phi = np.empty((t_eval.size, N_JOINTS))
        dphi = np.empty((t_eval.size, N_JOINTS))
        piece = np.clip(np.searchsorted(edges, t_eval, side="right") - 1, 0, len(edges) - 2)
        y = self.initial_state()
        for k in range(len(edges) - 1):
            a, b = edges[k], edges[k + 1]
            mask = piece == k
            if b > a:
                sol = solve_ivp(rhs, (a, b), y, method="DOP853", rtol=rtol, atol=1e-2 * rtol,
                                dense_output=True)
                if not sol.success:
                    raise RuntimeError(f"reference solution failed on [{a}, {b}]: {sol.message}")
                if np.any(mask):
                    ys = sol.sol(t_eval[mask])
                    phi[mask], dphi[mask] = ys[:6].T, ys[6:].T
                y = sol.y[:, -1]
            elif np.any(mask):  # t_end = 0
                phi[mask], dphi[mask] = y[:6], y[6:]
        return phi, dphi


# ---------------------------------------------------------------------------------------------
# numba kernels on the flat parameter vector P
# ---------------------------------------------------------------------------------------------


# Small 3-vector kernels writing into preallocated buffers: the RNEA then allocates only a
# handful of arrays per call (allocation, not arithmetic, dominates at this size).


@numba.njit(cache=True)
def _cross_add(a, b, out):
    """``out += a × b``."""
    out[0] += a[1] * b[2] - a[2] * b[1]
    out[1] += a[2] * b[0] - a[0] * b[2]
    out[2] += a[0] * b[1] - a[1] * b[0]


@numba.njit(cache=True)
def _cross_into(a, b, out):
    """``out = a × b``."""
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


@numba.njit(cache=True)
def _rt_into(R, x, out):
    """``out = Rᵀ x``."""
    for j in range(3):
        out[j] = R[0, j] * x[0] + R[1, j] * x[1] + R[2, j] * x[2]


@numba.njit(cache=True)
def _r_into(R, x, out):
    """``out = R x``."""
    for j in range(3):
        out[j] = R[j, 0] * x[0] + R[j, 1] * x[1] + R[j, 2] * x[2]


@numba.njit(cache=True)
def _link_geometry(P, phi):
    """``ⁱ⁻¹Rᵢ = Rot_z(θᵢ) Rot_x(αᵢ)`` (6, 3, 3) and ``p*ᵢ`` = ``oᵢ − oᵢ₋₁`` in frame i (6, 3)."""
    R = np.empty((6, 3, 3))
    ps = np.empty((6, 3))
    for i in range(6):
        ct, st = np.cos(phi[i]), np.sin(phi[i])
        al = P[IDX_ALPHA + i]
        ca, sa = np.cos(al), np.sin(al)
        R[i, 0, 0], R[i, 0, 1], R[i, 0, 2] = ct, -st * ca, st * sa
        R[i, 1, 0], R[i, 1, 1], R[i, 1, 2] = st, ct * ca, -ct * sa
        R[i, 2, 0], R[i, 2, 1], R[i, 2, 2] = 0.0, sa, ca
        d = P[IDX_D + i]
        ps[i, 0], ps[i, 1], ps[i, 2] = P[IDX_A + i], d * sa, d * ca
    return R, ps


@numba.njit(cache=True)
def _rnea(P, R, ps, dq, ddq, g, tau):
    """Joint torques ``τ = M(φ) q̈ + c(φ, q̇) + g(φ)`` by RNEA into ``tau``; vectors in link frames.

    Luh, Walker & Paul (1980), standard DH frames; revolute joint i turns about
    ``z = z_{i−1} = [0, 0, 1]`` of frame i−1, ``Rᵢ = ⁱ⁻¹Rᵢ``. Forward recursion:
    ``ωᵢ = Rᵢᵀ(ωᵢ₋₁ + z q̇ᵢ)``, ``ω̇ᵢ = Rᵢᵀ(ω̇ᵢ₋₁ + z q̈ᵢ + ωᵢ₋₁ × z q̇ᵢ)``,
    ``v̇ᵢ = Rᵢᵀ v̇ᵢ₋₁ + ω̇ᵢ × p*ᵢ + ωᵢ × (ωᵢ × p*ᵢ)`` with ``v̇₀ = [0, 0, g]`` (gravity),
    ``v̇_cᵢ = v̇ᵢ + ω̇ᵢ × r_cᵢ + ωᵢ × (ωᵢ × r_cᵢ)``, ``Fᵢ = mᵢ v̇_cᵢ``,
    ``Nᵢ = Iᵢ ω̇ᵢ + ωᵢ × Iᵢ ωᵢ``.
    Backward recursion, force on link i from link i−1 and moment about ``oᵢ₋₁``:
    ``fᵢ = Fᵢ + Rᵢ₊₁ fᵢ₊₁``, ``nᵢ = Nᵢ + (p*ᵢ + r_cᵢ) × Fᵢ + Rᵢ₊₁ nᵢ₊₁ + p*ᵢ × Rᵢ₊₁ fᵢ₊₁``,
    ``τᵢ = nᵢ · Rᵢᵀ z``.
    """
    F = np.empty((6, 3))
    N = np.empty((6, 3))
    buf = np.zeros((8, 3))
    w, dw, dv, wz, dwz, tmp, u, v = buf[0], buf[1], buf[2], buf[3], buf[4], buf[5], buf[6], buf[7]
    dv[2] = g
    for i in range(6):
        p = ps[i]
        rc = P[IDX_COM + 3 * i:IDX_COM + 3 * i + 3]
        J = P[IDX_INERTIA + 3 * i:IDX_INERTIA + 3 * i + 3]
        # ωᵢ₋₁ + z q̇ᵢ and ω̇ᵢ₋₁ + z q̈ᵢ + ωᵢ₋₁ × z q̇ᵢ (frame i−1), then into frame i
        wz[0], wz[1], wz[2] = w[0], w[1], w[2] + dq[i]
        dwz[0], dwz[1], dwz[2] = dw[0] + w[1] * dq[i], dw[1] - w[0] * dq[i], dw[2] + ddq[i]
        _rt_into(R[i], wz, w)
        _rt_into(R[i], dwz, dw)
        # v̇ᵢ (origin oᵢ), tmp = v̇ᵢ₋₁ in frame i
        _rt_into(R[i], dv, tmp)
        dv[:] = tmp
        _cross_add(dw, p, dv)
        _cross_into(w, p, tmp)
        _cross_add(w, tmp, dv)
        # u = v̇_cᵢ, Fᵢ = mᵢ v̇_cᵢ, Nᵢ = Iᵢ ω̇ᵢ + ωᵢ × Iᵢ ωᵢ
        u[:] = dv
        _cross_add(dw, rc, u)
        _cross_into(w, rc, tmp)
        _cross_add(w, tmp, u)
        for k in range(3):
            F[i, k] = P[IDX_M + i] * u[k]
            tmp[k] = J[k] * w[k]
            N[i, k] = J[k] * dw[k]
        _cross_add(w, tmp, N[i])
    f, n = buf[0], buf[1]  # reuse: forward quantities are no longer needed
    f[:] = 0.0
    n[:] = 0.0
    for i in range(5, -1, -1):
        p = ps[i]
        rc = P[IDX_COM + 3 * i:IDX_COM + 3 * i + 3]
        if i < 5:  # u = Rᵢ₊₁ fᵢ₊₁, v = Rᵢ₊₁ nᵢ₊₁ in frame i
            _r_into(R[i + 1], f, u)
            _r_into(R[i + 1], n, v)
        else:
            u[:] = 0.0
            v[:] = 0.0
        for k in range(3):
            n[k] = N[i, k] + v[k]
            f[k] = F[i, k] + u[k]
            tmp[k] = p[k] + rc[k]
        _cross_add(tmp, F[i], n)
        _cross_add(p, u, n)
        tau[i] = n[1] * R[i, 2, 1] + n[2] * R[i, 2, 2]  # Rᵢᵀ z = third row of Rᵢ = [0, sα, cα]


@numba.njit(cache=True)
def chain_mass_matrix(P, phi):
    """Joint-space mass matrix ``M(φ)`` (6, 6): column j = RNEA(q̈ = e_j, q̇ = 0, g = 0)."""
    R, ps = _link_geometry(P, phi)
    M = np.empty((6, 6))
    zero = np.zeros(6)
    e = np.zeros(6)
    col = np.empty(6)
    for j in range(6):
        e[:] = 0.0
        e[j] = 1.0
        _rnea(P, R, ps, zero, e, 0.0, col)
        M[:, j] = col
    for i in range(6):  # symmetric up to round-off; make it exact
        for j in range(i):
            s = 0.5 * (M[i, j] + M[j, i])
            M[i, j] = s
            M[j, i] = s
    return M


@numba.njit(cache=True)
def chain_bias(P, phi, dphi):
    """``c(φ, φ̇) + g(φ)`` (6,): RNEA with ``φ̈ = 0``; the dynamics read ``M φ̈ + bias = τ``."""
    R, ps = _link_geometry(P, phi)
    tau = np.empty(6)
    _rnea(P, R, ps, dphi, np.zeros(6), P[IDX_G], tau)
    return tau


@numba.njit(cache=True)
def reference_numba(P, t):
    """Bang–bang ``(φ_ref, φ̇_ref, φ̈_ref)`` at scalar ``t`` (as :meth:`Puma560.reference`)."""
    phi = np.empty(6)
    dphi = np.empty(6)
    ddphi = np.empty(6)
    for i in range(6):
        p0 = P[IDX_PHI0 + i]
        phi[i], dphi[i], ddphi[i] = bang_bang(p0, P[IDX_PHI1 + i] - p0, P[IDX_T], t)
    return phi, dphi, ddphi


@numba.njit(cache=True)
def pd_torque(P, t, phi, dphi):
    """``τ = −k (φ − φ_ref(t)) − d (φ̇ − φ̇_ref(t))`` (6,), no gravity compensation."""
    pr, dpr, _ = reference_numba(P, t)
    tau = np.empty(6)
    for i in range(6):
        tau[i] = -P[IDX_K + i] * (phi[i] - pr[i]) - P[IDX_DAMP + i] * (dphi[i] - dpr[i])
    return tau


@numba.njit(cache=True)
def chain_rhs(P, t, phi, dphi):
    """Joint accelerations ``φ̈ = M(φ)⁻¹ (τ(t, φ, φ̇) − c(φ, φ̇) − g(φ))`` (6,)."""
    rhs = pd_torque(P, t, phi, dphi) - chain_bias(P, phi, dphi)
    return solve(chain_mass_matrix(P, phi), rhs)
