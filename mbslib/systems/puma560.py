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
  dynamics see only ``I_yy = 0.35`` of it. (The principal values of links 1 and 3 violate the
  triangle inequality of a rigid body; the description says so (:data:`NOT_RIGID`), and the
  dynamics do not mind.)
- **Motion.** Per joint a symmetric bang–bang profile of duration ``T`` (1 s): constant
  acceleration ``aᵢ = 4 Δφᵢ / T²`` on ``[0, T/2]``, ``−aᵢ`` on ``(T/2, T]``, zero velocity at
  both ends, ``φ_goal`` held for ``t ≥ T`` (``φ_init`` for ``t < 0``). ``φ_ref`` is C¹,
  ``φ̈_ref`` jumps at ``0, T/2, T``.
- **Control.** A torsional spring–damper per joint whose offset follows the reference,
  ``τᵢ = −kᵢ (φᵢ − φᵢ_ref(t)) − dᵢ (φ̇ᵢ − φ̇ᵢ_ref(t))``, no gravity compensation, with the gains
  labelled "assumed" in the authors' Exudyn serial-robot examples:
  ``k = [4e4, 4e4, 4e4, 100, 100, 10]`` N m/rad, ``d = [400, 400, 100, 1, 1, 0.1]`` N m s/rad.

The robot is described once, free of coordinates, by :meth:`Puma560.description` (a
:class:`mbslib.model.Model`: links, revolute joints, gravity); :meth:`Puma560.system` is that
description in absolute coordinates plus the PD drives, which a description cannot express (a
drive whose offset follows the profile would be an applied load, a Python callable that compiled
kernels cannot call). The joint-coordinate kernels below take the same description in minimal
coordinates: :meth:`Puma560.params` is what
:func:`mbslib.formulations.joint_coordinates.joint_model` reads off its joint axes, joint points
and link inertias (the DH table, centres of mass and principal inertias in the DH frames), plus
the motion profile and the PD gains. The class's DH table builds the description (and the plain
numpy kinematics that the tests check the kernels with).

Equations of motion ``M(φ) φ̈ + c(φ, φ̇) + g(φ) = τ(t, φ, φ̇)``. The numba kernels work on the
flat parameter vector of :meth:`Puma560.params`: the bias ``c + g`` is the recursive
Newton–Euler algorithm (RNEA; Luh, Walker & Paul 1980) with every vector in its own link frame,
written for standard DH frames as in Corke's ``rne_dh``, and the mass matrix is RNEA with unit
joint accelerations and zero velocity and gravity (Walker & Orin 1982, method 1). The
generalized-α iteration matrix takes the derivatives of the bias from the same recursion
differentiated in forward mode (:func:`chain_dynamics`, the model's compiled kernels of
:mod:`mbslib.formulations.compiled`). The reference solution integrates these ODEs with
``scipy``'s DOP853 piecewise between the kinks of the right-hand side at ``T/2`` and ``T``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numba
import numpy as np

from mbslib.formulations.compiled import ModelKind, vector_tangent, vector_tangent_inv, vector_uac
from mbslib.formulations.joint_coordinates import JointChain, joint_model
from mbslib.kernels import solve
from mbslib.loads import bang_bang
from mbslib.model import Gravity, Joint, Model, RigidBody
from mbslib.systems import multibody as mb
from mbslib.validation import nonnegative, positive, vector

# ---------------------------------------------------------------------------------------------
# Layout of the flat parameter vector P (see Puma560.params)
# ---------------------------------------------------------------------------------------------

#: Why the links' principal inertias may violate the triangle inequality (links 1 and 3 do).
NOT_RIGID = "the paper's data (Corke & Armstrong-Hélouvry 1994, link 1 as in the authors' Exudyn model)"
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

    def params(self, profile: bool = True) -> np.ndarray:
        """Flat float64 parameter vector ``P`` of the numba kernels, shape (86,).

        Entries 0:61 are :meth:`joint_chain`'s (derived from :meth:`description`; equal to the
        class's DH table and inertia data up to round-off), the rest the motion and the drives.
        ``profile=False``: ``φ_init`` (61:67) is replaced by ``φ_goal``, so that the reference
        holds the goal from t = 0 (a step command, as :meth:`system` with ``profile=False``);
        the initial state is still :meth:`initial_state`.

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
        start = self.phi_init_deg if profile else self.phi_goal_deg
        P = np.concatenate([
            self.joint_chain().params(), np.deg2rad(f(start)), np.deg2rad(f(self.phi_goal_deg)),
            [float(self.duration)], f(self.stiffness), f(self.damping),
        ])
        assert P.size == N_PARAMS
        return P

    def joint_chain(self) -> JointChain:
        """:meth:`description` in joint coordinates, the initial pose at ``φ_init``
        (:func:`mbslib.formulations.joint_coordinates.joint_model`; computed once per robot)."""
        return _joint_chain(self)

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

    def description(self) -> Model:
        """The robot, coordinate-free, at rest in ``φ_init``: six links and six revolute joints
        under gravity (paper: ``6 × 5`` joint constraints).

        Link k has its origin at the centre of mass and the axes of DH frame k. Revolute joint k
        joins link k − 1 (the ground for k = 0) at the origin of frame k − 1 about its z axis; in
        link k that point is ``Rx(−α) [−a, 0, −d] − r_c`` and the axis ``[0, sin α, cos α]``.
        The PD drives are not part of it: a description's forces are gravity, springs and
        applied loads, and a joint drive whose offset follows the motion profile could only be
        an applied load, a Python callable that the compiled kernels cannot run; :meth:`system`
        adds the drives to what the absolute coordinates make of the description.
        """
        e_z = np.array([0.0, 0.0, 1.0])
        coms = np.asarray(self.coms, dtype=float)
        phi0 = np.deg2rad(np.asarray(self.phi_init_deg, dtype=float))
        R, _ = self.link_frames(phi0)
        x = self.link_coms(phi0)
        bodies, joints = [], []
        for k in range(N_JOINTS):
            bodies.append(RigidBody(f"link {k + 1}", float(self.masses[k]), self.inertias[k], x[k], R[k],
                                    inertia_not_rigid=NOT_RIGID))
            ca, sa = np.cos(self.dh_alpha[k]), np.sin(self.dh_alpha[k])
            Rx = np.array([[1.0, 0.0, 0.0], [0.0, ca, sa], [0.0, -sa, ca]])  # Rx(−α)
            pivot_parent = -coms[k - 1] if k > 0 else np.zeros(3)
            pivot_body = Rx @ [-self.dh_a[k], 0.0, -self.dh_d[k]] - coms[k]
            joints.append(Joint("revolute", k - 1 if k > 0 else None, k, pivot_parent, pivot_body, e_z, Rx @ e_z))
        return Model(tuple(bodies), tuple(joints), Gravity((0.0, 0.0, -float(self.gravity))))

    def system(self, profile: bool = True) -> mb.System:
        """Six rigid bodies in absolute coordinates (paper: ``6 (3 + l)`` equations of motion and
        ``6 × 5`` joint constraints): :meth:`description` as
        :func:`mbslib.formulations.lie_group.absolute_model` maps it, plus the PD drives.

        The PD controller of joint k is a torsional spring–damper about the joint axis that
        measures the angle between the x axes of frames k − 1 and k, which is the DH angle θ_k.
        ``profile=False`` replaces the motion profile by a step command: the springs hold
        ``φ_goal`` from t = 0 (the benchmarks' variant without a time-dependent reference).
        """
        from mbslib.formulations.lie_group import absolute_model  # it imports this module

        ex, ey, _ = np.eye(3)
        start = np.deg2rad(np.asarray(self.phi_init_deg, dtype=float))
        change = np.deg2rad(np.asarray(self.phi_goal_deg, dtype=float)) - start
        if not profile:
            start, change = start + change, 0.0 * change
        system = mb.System.from_params(absolute_model(self.description(), "RV").P)
        for k in range(N_JOINTS):
            parent = k - 1 if k > 0 else mb.GROUND
            system.spring(parent, ex, ey, k, ex, float(self.stiffness[k]), float(self.damping[k]), start[k],
                          change[k], float(self.duration))
        return system

    def absolute_state(self, form: int) -> np.ndarray:
        """Initial ``[q; v]`` of :meth:`system` in formulation ``form`` (at rest in φ_init)."""
        from mbslib.formulations.lie_group import initial_state  # it imports this module

        return initial_state(self.description(), {code: name for name, code in mb.FORMULATIONS.items()}[form])

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
        every time must lie in ``[0, t_end]``. The integration is done once per robot, ``rtol``
        and ``t_end`` and kept (``_reference_pieces``).
        """
        t_eval = np.atleast_1d(np.asarray(t_eval, dtype=float))
        if t_eval.ndim != 1 or t_eval.size == 0:
            raise ValueError("t_eval must be a non-empty 1-D array of times")
        t_end = float(t_eval.max()) if t_end is None else float(t_end)
        if not (np.all(np.isfinite(t_eval)) and t_eval.min() >= 0.0 and t_eval.max() <= t_end):
            raise ValueError(f"t_eval must lie in [0, t_end = {t_end!r}]")
        edges, pieces = _reference_pieces(self, float(rtol), t_end)
        phi = np.empty((t_eval.size, N_JOINTS))
        dphi = np.empty((t_eval.size, N_JOINTS))
        piece = np.clip(np.searchsorted(edges, t_eval, side="right") - 1, 0, len(edges) - 2)
        for k, (sol, y) in enumerate(pieces):
            mask = piece == k
            if not np.any(mask):
                continue
            ys = sol.sol(t_eval[mask]) if sol is not None else np.repeat(y[:, None], mask.sum(), axis=1)
            phi[mask], dphi[mask] = ys[:6].T, ys[6:].T
        return phi, dphi


@functools.lru_cache(maxsize=8)
def _joint_chain(robot: Puma560) -> JointChain:
    return joint_model(robot.description(), np.deg2rad(np.asarray(robot.phi_init_deg, dtype=float)))


@functools.lru_cache(maxsize=8)
def _reference_pieces(robot: Puma560, rtol: float, t_end: float) -> tuple[list, list]:
    """The piece boundaries of :meth:`Puma560.reference_solution` and, per piece, the DOP853
    solution with its dense output and the state at its start (the solution is None for an
    empty piece, ``t_end = 0``)."""
    from scipy.integrate import solve_ivp

    P = robot.params()
    T = float(robot.duration)
    edges = [0.0] + [b for b in (0.5 * T, T) if b < t_end] + [t_end]

    def rhs(t, y):
        return np.concatenate([y[6:], chain_rhs(P, t, y[:6], y[6:])])

    pieces = []
    y = robot.initial_state()
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        sol = None
        if b > a:
            sol = solve_ivp(rhs, (a, b), y, method="DOP853", rtol=rtol, atol=1e-2 * rtol, dense_output=True)
            if not sol.success:
                raise RuntimeError(f"reference solution failed on [{a}, {b}]: {sol.message}")
        pieces.append((sol, y))
        if sol is not None:
            y = sol.y[:, -1]
    return edges, pieces


# ---------------------------------------------------------------------------------------------
# numba kernels on the flat parameter vector P
# ---------------------------------------------------------------------------------------------


@numba.njit(cache=True)
def _cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@numba.njit(cache=True)
def _add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@numba.njit(cache=True)
def _rt(R, x):
    """``Rᵀ x``."""
    return (R[0, 0] * x[0] + R[1, 0] * x[1] + R[2, 0] * x[2],
            R[0, 1] * x[0] + R[1, 1] * x[1] + R[2, 1] * x[2],
            R[0, 2] * x[0] + R[1, 2] * x[1] + R[2, 2] * x[2])


@numba.njit(cache=True)
def _r(R, x):
    """``R x``."""
    return (R[0, 0] * x[0] + R[0, 1] * x[1] + R[0, 2] * x[2],
            R[1, 0] * x[0] + R[1, 1] * x[1] + R[1, 2] * x[2],
            R[2, 0] * x[0] + R[2, 1] * x[1] + R[2, 2] * x[2])


@numba.njit(cache=True)
def _rt_tangent(R, x, dx, dth):
    """Directional derivative of ``Rᵢᵀ x`` with ``δRᵢ = δθᵢ ẑ Rᵢ``: ``Rᵀ (δx − δθ z × x)``."""
    return _rt(R, (dx[0] + dth * x[1], dx[1] - dth * x[0], dx[2]))


@numba.njit(cache=True)
def _r_tangent(R, x, dx, dth):
    """Directional derivative of ``Rᵢ x``: ``R δx + δθ z × (R x)``."""
    a, b = _r(R, dx), _r(R, x)
    return (a[0] - dth * b[1], a[1] + dth * b[0], a[2])


@numba.njit(cache=True)
def _link_geometry(P, phi, R, ps):
    """``ⁱ⁻¹Rᵢ = Rot_z(θᵢ) Rot_x(αᵢ)`` into ``R`` (6, 3, 3) and ``p*ᵢ = oᵢ − oᵢ₋₁`` in frame i into
    ``ps`` (6, 3)."""
    for i in range(6):
        ct, st = np.cos(phi[i]), np.sin(phi[i])
        al = P[IDX_ALPHA + i]
        ca, sa = np.cos(al), np.sin(al)
        R[i, 0, 0], R[i, 0, 1], R[i, 0, 2] = ct, -st * ca, st * sa
        R[i, 1, 0], R[i, 1, 1], R[i, 1, 2] = st, ct * ca, -ct * sa
        R[i, 2, 0], R[i, 2, 1], R[i, 2, 2] = 0.0, sa, ca
        d = P[IDX_D + i]
        ps[i, 0], ps[i, 1], ps[i, 2] = P[IDX_A + i], d * sa, d * ca


@numba.njit(cache=True)
def _rnea(P, R, ps, dq, ddq, g, dth, ddq_dir, tau, dtau, store):
    """Joint torques ``τ = M(φ) q̈ + c(φ, q̇) + g(φ)`` by RNEA into ``tau`` and their directional
    derivative along ``δφ = dth``, ``δq̇ = ddq_dir`` (q̈ fixed) into ``dtau``; vectors in link frames.

    Luh, Walker & Paul (1980), standard DH frames; revolute joint i turns about
    ``z = z_{i−1} = [0, 0, 1]`` of frame i−1, ``Rᵢ = ⁱ⁻¹Rᵢ``. Forward recursion:
    ``ωᵢ = Rᵢᵀ(ωᵢ₋₁ + z q̇ᵢ)``, ``ω̇ᵢ = Rᵢᵀ(ω̇ᵢ₋₁ + z q̈ᵢ + ωᵢ₋₁ × z q̇ᵢ)``,
    ``v̇ᵢ = Rᵢᵀ v̇ᵢ₋₁ + ω̇ᵢ × p*ᵢ + ωᵢ × (ωᵢ × p*ᵢ)`` with ``v̇₀ = [0, 0, g]`` (gravity),
    ``v̇_cᵢ = v̇ᵢ + ω̇ᵢ × r_cᵢ + ωᵢ × (ωᵢ × r_cᵢ)``, ``Fᵢ = mᵢ v̇_cᵢ``,
    ``Nᵢ = Iᵢ ω̇ᵢ + ωᵢ × Iᵢ ωᵢ``.
    Backward recursion, force on link i from link i−1 and moment about ``oᵢ₋₁``:
    ``fᵢ = Fᵢ + Rᵢ₊₁ fᵢ₊₁``, ``nᵢ = Nᵢ + (p*ᵢ + r_cᵢ) × Fᵢ + Rᵢ₊₁ nᵢ₊₁ + p*ᵢ × Rᵢ₊₁ fᵢ₊₁``,
    ``τᵢ = nᵢ · Rᵢᵀ z``. The derivative is the same recursion differentiated term by term
    (forward mode) with ``δRᵢ = δθᵢ ẑ Rᵢ``; ``p*ᵢ`` and ``Rᵢᵀ z`` do not depend on θᵢ.
    ``store`` (4, 6, 3) keeps ``F, N, δF, δN`` between the passes. No allocation.
    """
    w, dw, dv = (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (0.0, 0.0, g)
    tw, tdw, tdv = (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
    for i in range(6):
        p = (ps[i, 0], ps[i, 1], ps[i, 2])
        o = IDX_COM + 3 * i
        rc = (P[o], P[o + 1], P[o + 2])
        o = IDX_INERTIA + 3 * i
        J = (P[o], P[o + 1], P[o + 2])
        m = P[IDX_M + i]
        qd, dqd = dq[i], ddq_dir[i]
        wz = (w[0], w[1], w[2] + qd)
        dwz = (dw[0] + w[1] * qd, dw[1] - w[0] * qd, dw[2] + ddq[i])
        twz = (tw[0], tw[1], tw[2] + dqd)
        tdwz = (tdw[0] + tw[1] * qd + w[1] * dqd, tdw[1] - tw[0] * qd - w[0] * dqd, tdw[2])
        w, tw = _rt(R[i], wz), _rt_tangent(R[i], wz, twz, dth[i])
        dw, tdw = _rt(R[i], dwz), _rt_tangent(R[i], dwz, tdwz, dth[i])
        dv, tdv = _rt(R[i], dv), _rt_tangent(R[i], dv, tdv, dth[i])
        wp = _cross(w, p)
        twp = _cross(tw, p)
        dv = _add(_add(dv, _cross(dw, p)), _cross(w, wp))
        tdv = _add(_add(tdv, _cross(tdw, p)), _add(_cross(tw, wp), _cross(w, twp)))
        wr = _cross(w, rc)
        twr = _cross(tw, rc)
        u = _add(_add(dv, _cross(dw, rc)), _cross(w, wr))
        tu = _add(_add(tdv, _cross(tdw, rc)), _add(_cross(tw, wr), _cross(w, twr)))
        Jw = (J[0] * w[0], J[1] * w[1], J[2] * w[2])
        tJw = (J[0] * tw[0], J[1] * tw[1], J[2] * tw[2])
        N = _add((J[0] * dw[0], J[1] * dw[1], J[2] * dw[2]), _cross(w, Jw))
        tN = _add(_add((J[0] * tdw[0], J[1] * tdw[1], J[2] * tdw[2]), _cross(tw, Jw)), _cross(w, tJw))
        for k in range(3):
            store[0, i, k] = m * u[k]
            store[1, i, k] = N[k]
            store[2, i, k] = m * tu[k]
            store[3, i, k] = tN[k]
    f, n, tf, tn = (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
    for i in range(5, -1, -1):
        p = (ps[i, 0], ps[i, 1], ps[i, 2])
        o = IDX_COM + 3 * i
        pc = (p[0] + P[o], p[1] + P[o + 1], p[2] + P[o + 2])
        F = (store[0, i, 0], store[0, i, 1], store[0, i, 2])
        tF = (store[2, i, 0], store[2, i, 1], store[2, i, 2])
        if i < 5:  # uf = Rᵢ₊₁ fᵢ₊₁, un = Rᵢ₊₁ nᵢ₊₁ in frame i
            uf, tuf = _r(R[i + 1], f), _r_tangent(R[i + 1], f, tf, dth[i + 1])
            un, tun = _r(R[i + 1], n), _r_tangent(R[i + 1], n, tn, dth[i + 1])
        else:
            uf, tuf = (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
            un, tun = (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
        N = (store[1, i, 0], store[1, i, 1], store[1, i, 2])
        tN = (store[3, i, 0], store[3, i, 1], store[3, i, 2])
        n = _add(_add(_add(N, un), _cross(pc, F)), _cross(p, uf))
        tn = _add(_add(_add(tN, tun), _cross(pc, tF)), _cross(p, tuf))
        f, tf = _add(F, uf), _add(tF, tuf)
        tau[i] = n[1] * R[i, 2, 1] + n[2] * R[i, 2, 2]  # Rᵢᵀ z = third row of Rᵢ = [0, sα, cα]
        dtau[i] = tn[1] * R[i, 2, 1] + tn[2] * R[i, 2, 2]


#: Scratch doubles of the chain kernels: R (54), p* (18), RNEA store (72), six vectors of 6.
_CHAIN_WORK = 54 + 18 + 72 + 36


@numba.njit(cache=True)
def _chain_views(work):
    R = work[:54].reshape((6, 3, 3))
    ps = work[54:72].reshape((6, 3))
    store = work[72:144].reshape((4, 6, 3))
    vecs = work[144:180].reshape((6, 6))
    return R, ps, store, vecs


@numba.njit(cache=True)
def _mass_matrix_into(P, R, ps, store, vecs, M):
    """``M(φ)``: column j = RNEA(q̈ = e_j, q̇ = 0, g = 0), symmetrised (exact up to round-off)."""
    zero, e, col, dcol = vecs[0], vecs[1], vecs[2], vecs[3]
    zero[:] = 0.0
    for j in range(6):
        e[:] = 0.0
        e[j] = 1.0
        _rnea(P, R, ps, zero, e, 0.0, zero, zero, col, dcol, store)
        for i in range(6):
            M[i, j] = col[i]
    for i in range(6):
        for j in range(i):
            s = 0.5 * (M[i, j] + M[j, i])
            M[i, j] = s
            M[j, i] = s


@numba.njit(cache=True)
def chain_mass_matrix(P, phi):
    """Joint-space mass matrix ``M(φ)`` (6, 6): column j = RNEA(q̈ = e_j, q̇ = 0, g = 0)."""
    work = np.zeros(_CHAIN_WORK)
    R, ps, store, vecs = _chain_views(work)
    _link_geometry(P, phi, R, ps)
    M = np.empty((6, 6))
    _mass_matrix_into(P, R, ps, store, vecs, M)
    return M


@numba.njit(cache=True)
def chain_bias(P, phi, dphi):
    """``c(φ, φ̇) + g(φ)`` (6,): RNEA with ``φ̈ = 0``; the dynamics read ``M φ̈ + bias = τ``."""
    work = np.zeros(_CHAIN_WORK)
    R, ps, store, vecs = _chain_views(work)
    _link_geometry(P, phi, R, ps)
    tau = np.empty(6)
    _rnea(P, R, ps, dphi, vecs[0], P[IDX_G], vecs[0], vecs[0], tau, vecs[1], store)
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


@numba.njit(cache=True)
def chain_dynamics(form, P, q, v, t, jac, work, M, g, K, C):
    """Kernel of the compiled model interface (:mod:`mbslib.formulations.compiled`):
    ``M(φ)``, ``g = τ_PD(t, φ, φ̇) − c(φ, φ̇) − g(φ)`` and, with ``jac``, the analytic
    ``K = −∂g/∂φ = diag(k) + ∂(c + g)/∂φ``, ``C = −∂g/∂φ̇ = diag(d) + ∂c/∂φ̇`` (the RNEA
    differentiated in forward mode, one direction per column)."""
    R, ps, store, vecs = _chain_views(work.reshape(work.size))
    zero, e, bias, dbias = vecs[0], vecs[1], vecs[4], vecs[5]
    _link_geometry(P, q, R, ps)
    _mass_matrix_into(P, R, ps, store, vecs, M)
    zero[:] = 0.0
    _rnea(P, R, ps, v, zero, P[IDX_G], zero, zero, bias, dbias, store)
    for i in range(6):
        p0 = P[IDX_PHI0 + i]
        ref, ref_rate, _ = bang_bang(p0, P[IDX_PHI1 + i] - p0, P[IDX_T], t)
        g[i] = -P[IDX_K + i] * (q[i] - ref) - P[IDX_DAMP + i] * (v[i] - ref_rate) - bias[i]
    if not jac:
        return
    for j in range(6):
        e[:] = 0.0
        e[j] = 1.0
        _rnea(P, R, ps, v, zero, P[IDX_G], e, zero, bias, dbias, store)
        for i in range(6):
            K[i, j] = dbias[i] + (P[IDX_K + i] if i == j else 0.0)
        _rnea(P, R, ps, v, zero, P[IDX_G], zero, e, bias, dbias, store)
        for i in range(6):
            C[i, j] = dbias[i] + (P[IDX_DAMP + i] if i == j else 0.0)


@numba.njit(cache=True)
def chain_constraints(form, P, q, work, phi, B):
    """No constraints (minimal coordinates)."""


@numba.njit(cache=True)
def chain_record(form, P, q, v, work, out):
    """The whole state ``[φ; φ̇]``."""
    for i in range(6):
        out[i] = q[i]
        out[6 + i] = v[i]


#: The Puma in joint coordinates as a model family of :mod:`mbslib.formulations.compiled`.
CHAIN = ModelKind(
    "Puma 560 in joint coordinates",
    (chain_dynamics, chain_constraints, chain_record, vector_uac, vector_tangent, vector_tangent_inv),
    n=lambda P, form: N_JOINTS,
    n_constraints=lambda P, form: 0,
    n_pages=lambda P, form: -(-_CHAIN_WORK // 16),
    n_record=lambda P, form: 2 * N_JOINTS,
    check=lambda P, form: vector("P", P, (N_PARAMS,)),
)
