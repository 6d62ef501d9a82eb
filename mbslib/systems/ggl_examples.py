"""The two examples of Kinon, Betsch & Schneider (MSD 2023), Sect. 5, in director coordinates.

* :func:`heavy_top` — a cone spinning about its fixed tip under gravity, with initial data for
  steady precession (Sect. 5.1, eqs. 58-68): the director system
  (:func:`mbslib.formulations.directors.director_system`) of the description
  :func:`heavy_top_model`.
* :func:`double_four_bar` — five planar bars forming two parallelograms, one degree of freedom,
  singular (horizontal) configurations at θ = 0, π (Sect. 5.2, eqs. 70-80), with the published
  ("P") and the authors' corrected ("C") initial velocities, optionally damped (eqs. 77-80): the
  planar director system (:func:`mbslib.formulations.directors.planar_director_system`) of the
  description :func:`double_four_bar_model`, whose point dampers are the paper's.
* :func:`four_bar_reduced_rhs` / :func:`four_bar_reference` — the exact one-degree-of-freedom
  model of the parallelogram branch, used as reference solution.

Numbers follow the paper; where the text is silent, they are taken from the authors' code (metis).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.integrate import quad, solve_ivp

from mbslib.formulations.directors import (
    director_system,
    initial_coordinates,
    planar_director_system,
    planar_initial_coordinates,
)
from mbslib.model import Gravity, Joint, Model, PointDamper, RigidBody
from mbslib.systems import rigid_bodies
from mbslib.systems.directors import ConstrainedSystem
from mbslib.systems.heavy_top import Cone, steady_precession_spin
from mbslib.validation import in_range, nonnegative, positive


# --------------------------------------------------------------------------------------------
# Example 1: heavy top
# --------------------------------------------------------------------------------------------
class HeavyTopParams(NamedTuple):
    """Gyroscopic top (paper Sect. 5.1)."""

    rho: float = 2700.0  # kg/m³, eq. (62)
    a: float = 0.1  # m, cone height
    g: float = 9.81  # m/s², gravity along −e_3
    alpha0: float = np.pi / 3  # rad, nutation angle, eq. (67)
    omega_p: float = 10.0  # 1/s, precession rate, eq. (65)

    @property
    def cone(self) -> Cone:
        """The cone's physical data (:class:`mbslib.systems.heavy_top.Cone`, radius a/2)."""
        return Cone(density=self.rho, height=self.a)

    r = property(lambda self: self.cone.radius, doc="Radius of the cone's base, r = a/2.")
    mass = property(lambda self: self.cone.mass, doc="m = ⅓ρπr²a (0.225π kg for the paper's data).")
    l = property(lambda self: self.cone.com_distance, doc="Distance tip → centre of mass, 3a/4.")
    J = property(lambda self: self.cone.inertia_com,
                 doc="Principal inertias about the centre of mass, eq. (62a), shape (3,).")

    @property
    def omega_s(self) -> float:
        """Spin rate for steady precession, eq. (66) (Goldstein): 135.6 1/s for the paper's data.

        Uses the inertias about the tip, ``J_1 + m l²`` and ``J_3``
        (:func:`mbslib.systems.heavy_top.steady_precession_spin`).
        """
        cone = self.cone
        J1, _, J3 = cone.inertia_tip
        mgl = cone.mass * self.g * cone.com_distance
        return steady_precession_spin(mgl, J1, J3, self.omega_p, self.alpha0)

    def validate(self):
        positive(rho=self.rho, a=self.a, g=self.g, omega_p=self.omega_p)
        in_range("alpha0", self.alpha0, 0.0, np.pi / 2)
        return self


def heavy_top_model(params: HeavyTopParams = HeavyTopParams()) -> Model:
    """The top as a description (:func:`mbslib.systems.rigid_bodies.heavy_top`): the cone of eq.
    (62) with its tip held at the origin by a spherical joint (eq. 64), gravity along −e_3, and
    the steady-precession initial data of eqs. (65)-(68)."""
    params.validate()
    return rigid_bodies.heavy_top(params.cone, g=params.g, theta0=params.alpha0, omega_p=params.omega_p)


def heavy_top(params: HeavyTopParams = HeavyTopParams(), scaling: str = "paper") -> ConstrainedSystem:
    """The top as one director body with its tip fixed at the origin, d = 12, m = 9: the director
    system of :func:`heavy_top_model`.

    Constraints: the six internal ones (eq. 61), then the tip constraint φ − l d_3 = 0 (eq. 64).
    ``scaling="metis"`` uses the authors' code normalisation instead (d_i·d_j/2 and φ/l − d_3):
    a constant diagonal scaling, which leaves the trajectory unchanged. It is applied here to the
    director system: how the constraint equations are normalised is a choice of the equations,
    not of the mechanism, so a description does not carry it.
    """
    if scaling not in ("paper", "metis"):
        raise ValueError(f"scaling must be 'paper' or 'metis', got {scaling!r}")
    system = director_system(heavy_top_model(params))
    if scaling == "paper":
        return system
    return system.with_constraint_scaling(np.array([1, 1, 1, 0.5, 0.5, 0.5] + [1 / params.l] * 3))


def heavy_top_initial_state(params: HeavyTopParams = HeavyTopParams()):
    """Steady-precession initial data, eqs. (65)-(68), of :func:`heavy_top_model`.

    Returns
    -------
    q0 : ndarray, shape (12,)
        [φ; d_1; d_2; d_3] with d_i = R_0 e_i, R_0 the rotation about e_1 by α_0, φ = l d_3.
    qdot0 : ndarray, shape (12,)
        Velocities ω_0 × (·) with ω_0 = ω_p e_3 + ω_s d_3(0).
    """
    return initial_coordinates(heavy_top_model(params))


# --------------------------------------------------------------------------------------------
# Example 2: double four-bar linkage
# --------------------------------------------------------------------------------------------
class FourBarParams(NamedTuple):
    """Double four-bar linkage (paper Sect. 5.2)."""

    mass: float = 1.0  # kg, each bar
    l: float = 1.0  # m, each bar
    g: float = 9.81  # m/s², gravity along −e_2
    v0: float = 1.0  # m/s, coupler speed along +e_1 at t = 0 (crank rate −v0/l)
    eta: float = 0.0  # N s/m, the two dampers of Sect. 4.3 (0.5 in Figs. 22-23)

    def validate(self):
        positive(mass=self.mass, l=self.l, g=self.g)
        nonnegative(eta=self.eta)
        if not np.isfinite(self.v0):
            raise ValueError(f"v0 must be finite, got {self.v0!r}")
        return self

    @property
    def inertia(self) -> float:
        """Moment of inertia of a slender bar about its centre, J = m l²/12."""
        return self.mass * self.l**2 / 12


#: Index of the first row of the P1 ground pivot and of the P4 joint in g (after 5×3 internal rows).
ROW_P1, ROW_P4 = 15, 21


def four_bar_damping_matrix(params: FourBarParams, kind: str = "symmetric") -> np.ndarray:
    """Damping matrix C = diag(0, 0, 0, C_4, C_5) of the two dampers at P5 and P6, eqs. (77)-(80).

    ``kind="symmetric"``: C_i = η BᵀB with B = [I, (l/2) I, 0], from the Rayleigh function
    𝒢 = ½η|φ̇ + (l/2)ḋ_1|² (the printed eq. (80) is neither symmetric nor PSD): the matrix of the
    description's point dampers (:func:`double_four_bar_model`), written out as the paper does.
    ``kind="metis"``: the authors' code, block rows [I, l/2 I, 0], [0, 0, 0], [l/2 I, l²/4 I, 0]:
    not symmetric, so not the matrix of any damper (its force on d_1 belongs to d_2's rows).
    Both give the same motion on the parallelogram branch (the couplers translate).
    """
    I2, l, eta = np.eye(2), params.l, params.eta
    Z = np.zeros((2, 2))
    if kind == "symmetric":
        B = np.hstack([I2, l / 2 * I2, Z])
        Ci = eta * B.T @ B
    elif kind == "metis":
        Ci = eta * np.block([[I2, l / 2 * I2, Z], [Z, Z, Z], [l / 2 * I2, l**2 / 4 * I2, Z]])
    else:
        raise ValueError(f"kind must be 'symmetric' or 'metis', got {kind!r}")
    C = np.zeros((30, 30))
    for body in (3, 4):  # couplers B4, B5
        C[6 * body : 6 * body + 6, 6 * body : 6 * body + 6] = Ci
    return C


def double_four_bar_model(params: FourBarParams = FourBarParams(), variant: str = "C") -> Model:
    """The linkage as a description, at θ = π/2 (paper Sect. 5.2, Fig. 11; geometry of the authors' code).

    Five bars of mass m and length l in the x–y plane, gravity −g e_2 (eq. 72). B1-B3 are cranks
    hinged on the ground at P1 = (0, 0), P2 = (l, 0), P3 = (2l, 0); the couplers B4 (P4→P5) and B5
    (P5→P6) join them. Revolute joints about e_z, in the order P1 (eq. 74a), P2, P3, P4 (eq. 74b),
    P5 (B4-B2), P5 (B4-B5), P6 (B5-B3): between two bars, the "+" end (+l/2 e_x) of the first and
    the "−" end of the second; at a ground pivot, B1's "−" end and the "+" ends of B2 and B3.

    Each bar is the planar director body of eq. (71), E_1 = E_2 = J/2 with J = m l²/12: a body
    without thickness whose in-plane Euler tensor is (J/2) I, the inertia diag(J/2, J/2, J)
    (J_i = E_j + E_k); a uniform slender rod, diag(0, J, J), would have E_2 = 0. Body axes as in
    the authors' code: e_x along the bar (B1 from P1 to P4, B2 and B3 down to their pivots, the
    couplers along +e_1), e_y = e_x turned by −90°, so every bar lies face down (e_z along −e_z).

    ``variant`` sets the initial velocities (:func:`four_bar_initial_state`): ``"C"`` the rigid
    motion with θ̇ = −v0/l; ``"P"`` its centre-of-mass velocities with the bars not turning.

    With η > 0 the two dampers of eqs. (77)-(80) join P1 to P5 and P2 to P6 (the "+" ends of the
    couplers B4 and B5): :class:`mbslib.model.PointDamper` records, which resist the whole velocity
    of P5 and P6 (the Rayleigh function ½η|φ̇ + (l/2)ḋ_1|² of each coupler).
    """
    params.validate()
    if variant not in ("P", "C"):
        raise ValueError(f"variant must be 'P' or 'C', got {variant!r}")
    l, theta, rate = params.l, np.pi / 2, -params.v0 / params.l
    u = np.array([np.cos(theta), np.sin(theta), 0.0])  # crank direction
    du = np.array([-np.sin(theta), np.cos(theta), 0.0])
    e1, e3 = np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.0, 1.0])
    J = params.inertia

    def bar(name, position, velocity, axis, spin):
        """A bar with e_x along ``axis`` (in the plane), e_y = e_x turned by −90°, turning at ``spin`` about e_z."""
        R = np.column_stack([axis, [axis[1], -axis[0], 0.0], -e3])
        omega = R.T @ (spin * e3) if variant == "C" else np.zeros(3)
        return RigidBody(name, params.mass, [J / 2, J / 2, J], position=position, rotation=R, velocity=velocity,
                         angular_velocity=omega)

    cranks = [bar(f"B{k + 1}", k * l * e1 + l / 2 * u, rate * (l / 2 * du), u if k == 0 else -u, rate)
              for k in range(3)]
    couplers = [bar(f"B{k + 4}", l * u + (k + 0.5) * l * e1, rate * (l * du), e1, 0.0) for k in range(2)]
    up, down = [l / 2, 0.0, 0.0], [-l / 2, 0.0, 0.0]  # "+" and "−" ends along e_x

    def hinge(body_a, point_a, body_b, point_b):
        return Joint("revolute", body_a, body_b, point_a, point_b, axis_a=e3, axis_b=e3)

    joints = (hinge(None, [0.0, 0.0, 0.0], 0, down), hinge(None, [l, 0.0, 0.0], 1, up),
              hinge(None, [2 * l, 0.0, 0.0], 2, up), hinge(0, up, 3, down), hinge(3, up, 1, down),
              hinge(3, up, 4, down), hinge(4, up, 2, down))
    dampers = tuple(PointDamper(None, body, pivot, up, params.eta)
                    for body, pivot in ((3, [0.0, 0.0, 0.0]), (4, [l, 0.0, 0.0]))) if params.eta > 0 else ()
    return Model(tuple(cranks + couplers), joints, gravity=Gravity([0.0, -params.g, 0.0]), dampers=dampers)


def double_four_bar(params: FourBarParams = FourBarParams(), damping: str = "symmetric") -> ConstrainedSystem:
    """Five planar bars B1..B5 (d = 30) with 15 internal and 14 joint constraints (m = 29): the
    planar director system of :func:`double_four_bar_model`.

    Each bar is q = [φ; d_1; d_2] (eq. 70) with d_1 and d_2 its body axes e_x and e_y: d_1 of B1
    points from P1 to P4, d_1 of B2, B3 down to the ground pivot, d_1 of the couplers along +e_1.
    With η > 0, ``damping="symmetric"`` damps with the description's point dampers, whose matrix
    is :func:`four_bar_damping_matrix` of kind "symmetric"; ``damping="metis"`` replaces it by the
    authors' matrix, which is no damper's (see :func:`four_bar_damping_matrix`), so no description
    carries it: it is applied to the formulated system.
    """
    if damping not in ("symmetric", "metis"):
        raise ValueError(f"damping must be 'symmetric' or 'metis', got {damping!r}")
    system = planar_director_system(double_four_bar_model(params))
    if damping == "metis" and params.eta > 0:
        return system.with_damping(four_bar_damping_matrix(params, "metis"))
    return system


def four_bar_configuration(theta: float, params: FourBarParams = FourBarParams()):
    """Configuration q(θ) on the parallelogram branch and its derivative dq/dθ, both shape (30,).

    θ is the angle of the cranks from e_1 (θ = π/2: upright, paper Fig. 11).
    """
    l = params.l
    u = np.array([np.cos(theta), np.sin(theta)])  # crank direction
    du = np.array([-np.sin(theta), np.cos(theta)])
    n = np.array([np.sin(theta), -np.cos(theta)])  # d_2 of B1
    dn = np.array([np.cos(theta), np.sin(theta)])
    e1, e2 = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    zero = np.zeros(2)
    q, dq = [], []
    for k in range(3):  # cranks; B1 directors (u, n), B2 and B3 (−u, −n)
        s = 1.0 if k == 0 else -1.0
        q += [k * l * e1 + l / 2 * u, s * u, s * n]
        dq += [l / 2 * du, s * du, s * dn]
    for k in range(2):  # couplers translate with P4 = l u
        q += [l * u + (k + 0.5) * l * e1, e1, -e2]
        dq += [l * du, zero, zero]
    return np.concatenate(q), np.concatenate(dq)


def four_bar_initial_state(params: FourBarParams = FourBarParams(), variant: str = "P"):
    """Initial data at θ = π/2 with the couplers moving at v0 along +e_1 (θ̇(0) = −v0/l).

    ``variant="C"`` (corrected by the authors, 2023): the consistent rigid motion, T_0 = 1.5 J for
    v0 = 1. ``variant="P"`` (published): only the centre-of-mass velocities, all director velocities
    zero; kinematically inconsistent, G(q_0) q̇_0 ≠ 0 (the authors corrected them in 2023). These are
    the planar director coordinates
    (:func:`mbslib.formulations.directors.planar_initial_coordinates`) of
    :func:`double_four_bar_model` with the initial velocities of ``variant``.

    Returns
    -------
    q0, qdot0 : ndarray, shape (30,)
    """
    return planar_initial_coordinates(double_four_bar_model(params, variant))


def four_bar_crank_rate_after_projection(params: FourBarParams = FourBarParams(), variant: str = "P") -> float:
    """θ̇ of the M-orthogonal projection of q̇_0 onto the tangent u = dq/dθ: (u·M q̇_0)/(u·M u).

    For the published data this is −(11/12) v0/l (the momentum the first GGL step keeps).
    """
    system = double_four_bar(params._replace(eta=0.0))
    _, u = four_bar_configuration(np.pi / 2, params)
    _, qdot0 = four_bar_initial_state(params, variant)
    return float(u @ (system.M * qdot0) / (u @ (system.M * u)))


def four_bar_reduced_rhs(t, y, params: FourBarParams = FourBarParams()):
    """Exact 1-DOF model: 3 m l² θ̈ = −3.5 m g l cos θ − 2 η l² θ̇, y = (θ, θ̇).

    Three cranks (m l²/3 about their pivots) plus two translating couplers (m l² each); the
    potential 3.5 m g l sin θ; the dampers at P5, P6 move with speed l|θ̇|.
    """
    theta, omega = y
    m, l = params.mass, params.l
    acc = (-3.5 * m * params.g * l * np.cos(theta) - 2 * params.eta * l**2 * omega) / (3 * m * l**2)
    return np.array([omega, acc])


class FourBarReference(NamedTuple):
    t: np.ndarray
    theta: np.ndarray
    omega: np.ndarray
    x4: np.ndarray  # 1-coordinate of P4, l cos θ
    v4: np.ndarray  # its velocity, −l θ̇ sin θ
    H: np.ndarray  # 1.5 m l² θ̇² + 3.5 m g l sin θ


def four_bar_reference(t_eval, omega0: float, params: FourBarParams = FourBarParams()) -> FourBarReference:
    """Solve the reduced model from θ = π/2, θ̇ = omega0 with ``solve_ivp`` (DOP853, rtol = atol = 1e-12)."""
    t_eval = np.asarray(t_eval, dtype=float)
    sol = solve_ivp(
        four_bar_reduced_rhs,
        (t_eval[0], t_eval[-1]),
        [np.pi / 2, omega0],
        method="DOP853",
        t_eval=t_eval,
        rtol=1e-12,
        atol=1e-12,
        args=(params,),
    )
    if not sol.success:
        raise RuntimeError(f"reference solution failed: {sol.message}")
    theta, omega = sol.y
    m, l = params.mass, params.l
    H = 1.5 * m * l**2 * omega**2 + 3.5 * m * params.g * l * np.sin(theta)
    return FourBarReference(t_eval, theta, omega, l * np.cos(theta), -l * omega * np.sin(theta), H)


def four_bar_period(omega0: float, params: FourBarParams = FourBarParams()) -> float:
    """Period of one full revolution of the undamped reduced model, ``∮ dθ/|θ̇|`` by quadrature."""
    m, l = params.mass, params.l
    H = 1.5 * m * l**2 * omega0**2 + 3.5 * m * params.g * l
    rate = lambda th: np.sqrt((H - 3.5 * m * params.g * l * np.sin(th)) / (1.5 * m * l**2))  # noqa: E731
    value, _ = quad(lambda th: 1.0 / rate(th), 0.0, 2 * np.pi, limit=200, epsabs=1e-13, epsrel=1e-13)
    return value
