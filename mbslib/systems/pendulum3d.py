"""Three-dimensional pendulum on SO(3) with a spherical inertia (Baker & Gonzalez 2021, Sect. 3).

One rigid body with a fixed pivot at the origin: the configuration is the attitude R only
(``x ≡ v ≡ 0``). The potential is paper eq. (39), ``U(R) = -m g e3·R rho0``, so the potential is
lowest at ``R rho0 = +e3`` (e3 points *down*, as in Lee, Leok & McClamroch). The spatial torque
``R M = m g (R rho0) × e3`` is eq. (40) repaired (the print is garbled).

:class:`Pendulum3D` holds the parameters and the paper's invariants (41a–c); its description,
:meth:`Pendulum3D.model` (:func:`pendulum_model`, a :class:`mbslib.model.Model`), is what the
explicit maps run, through :class:`mbslib.formulations.rodrigues.PivotedRodriguesSystem`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp

from mbslib.model import Gravity, Joint, Model, RigidBody
from mbslib.rodrigues import rr_angle, rr_matrix
from mbslib.validation import positive, vector

E3 = np.array([0.0, 0.0, 1.0])


@dataclass(frozen=True)
class Pendulum3D:
    """Parameters of the 3-D pendulum (defaults 1, 1, 1: the paper gives none).

    Validated on construction: ``ValueError`` names the offending parameter.

    Attributes
    ----------
    m, g, J : float
        Mass, gravity, scalar moment of inertia about the pivot (finite, positive).
    rho0 : tuple of 3 floats
        Pivot -> centre of mass in the body frame (paper: [0, 0, 1]); finite and nonzero.
    """

    m: float = 1.0
    g: float = 1.0
    J: float = 1.0
    rho0: tuple = (0.0, 0.0, 1.0)

    def __post_init__(self):
        positive(m=self.m, g=self.g, J=self.J)
        rho0 = vector("rho0", self.rho0, (3,))
        if not np.any(rho0):
            raise ValueError("rho0 must be a nonzero vector (pivot -> centre of mass)")
        object.__setattr__(self, "rho0", tuple(float(c) for c in rho0))

    def potential(self, alpha) -> np.ndarray:
        """Eq. (39): ``U = -m g e3·R(alpha) rho0``; ``alpha`` shape (..., 3) -> (...)."""
        return -self.m * self.g * (rr_matrix(alpha) @ np.asarray(self.rho0))[..., 2]

    def model(self) -> Model:
        """The pendulum as a description, with the initial data of eq. (42).

        No rigid body of mass ``m`` has the inertia ``J I`` about a pivot ``a = |rho0|`` from its
        centre of mass unless ``J > 2 m a²`` (:func:`pendulum_model`), and ``m = g = J = a = 1``
        does not pass. The pendulum feels m and g only through its weight m g (the pivot ties the
        centre's motion to the rotation, eqs. 39-41), so the description takes the mass
        ``J/(3 a²)`` and the gravity ``3 m g a²/J``: the same J, weight, motion and invariants
        (41a–c).
        """
        arm2 = float(np.dot(self.rho0, self.rho0))
        return pendulum_model(inertia=self.J, mass=self.J / (3 * arm2), g=3 * self.m * self.g * arm2 / self.J,
                              rho0=self.rho0)

    def energy(self, alpha, w) -> np.ndarray:
        """Eq. (41a): ``E = J|Ω|^2/2 - m g e3·R rho0`` (spatial ``w = Ω``), shape (...)."""
        w = np.asarray(w, dtype=float)
        return 0.5 * self.J * np.sum(w * w, axis=-1) + self.potential(alpha)

    def axis_spin(self, alpha, w) -> np.ndarray:
        """Eq. (41b): ``R rho0 · Ω`` (conserved because J is spherical)."""
        return np.sum((rr_matrix(alpha) @ np.asarray(self.rho0)) * w, axis=-1)

    def axis_length(self, alpha) -> np.ndarray:
        """Eq. (41c): ``|R rho0|`` (equal to ``|rho0|`` while R stays orthogonal)."""
        return np.linalg.norm(rr_matrix(alpha) @ np.asarray(self.rho0), axis=-1)


def initial_conditions() -> tuple[np.ndarray, np.ndarray]:
    """Paper eq. (42): ``alpha0 = [0,1,0] 2 tan(3π/8)`` (135° about e2), ``Ω0 = [1,0,1] 0.4 sin²(π/4)``."""
    alpha0 = np.array([0.0, 1.0, 0.0]) * 2.0 * np.tan(3.0 * np.pi / 8.0)
    w0 = np.array([1.0, 0.0, 1.0]) * 0.4 * np.sin(np.pi / 4.0) ** 2
    return alpha0, w0


def pendulum_model(*, inertia: float, mass: float, g: float, rho0=(0.0, 0.0, 1.0)) -> Model:
    """The 3-D pendulum as a description (:mod:`mbslib.model`).

    A body of ``mass`` [kg] hangs from the origin by a spherical joint, its centre of mass at
    ``rho0`` [m] from the pivot (body frame), under gravity ``g`` [m/s²] along +e3 (eq. 39: e3
    points down), with the attitude and spatial angular velocity of eq. (42)
    (:func:`initial_conditions`). Its inertia about the pivot is ``inertia`` I [kg m²], spherical,
    as the explicit maps require; about the centre of mass it is ``inertia I − mass (|rho0|² I −
    rho0 rho0ᵀ)``.

    Raises
    ------
    ValueError
        Naming the parameter: unless ``inertia``, ``mass`` and ``g`` are positive, ``rho0`` is a
        nonzero 3-vector and ``inertia > 2 mass |rho0|²`` (the inertia about the centre, ``inertia
        − mass |rho0|²`` across the arm and ``inertia`` along it, must obey the triangle
        inequality of a rigid body).
    """
    positive(inertia=inertia, mass=mass, g=g)
    rho0 = vector("rho0", rho0, (3,))
    arm2 = rho0 @ rho0
    if not arm2 > 0:
        raise ValueError("rho0 must be a nonzero vector (pivot -> centre of mass)")
    if not inertia > 2 * mass * arm2:
        raise ValueError(f"inertia must exceed 2 m |rho0|² = {2 * mass * arm2:g} kg m² (a rigid body of mass "
                         f"{mass:g} kg with its centre of mass {np.sqrt(arm2):g} m from the pivot), got {inertia!r}")
    alpha0, w0 = initial_conditions()
    R0 = rr_matrix(alpha0)
    centre = R0 @ rho0
    body = RigidBody("pendulum", mass, inertia * np.eye(3) - mass * (arm2 * np.eye(3) - np.outer(rho0, rho0)),
                     position=centre, rotation=R0, velocity=np.cross(w0, centre), angular_velocity=R0.T @ w0)
    pivot = Joint("spherical", None, 0, point_a=np.zeros(3), point_b=-rho0)
    return Model((body,), (pivot,), gravity=Gravity(g * E3))


def h1_integrand(alpha, w) -> np.ndarray:
    """Integrand of the H¹ norm (35) for the pivoted body (x ≡ v ≡ 0): ``|theta|^2 + |Ω|^2``."""
    w = np.asarray(w, dtype=float)
    return rr_angle(alpha) ** 2 + np.sum(w * w, axis=-1)


def reference_solution(system: Pendulum3D, alpha0, w0, t_eval, *, rtol: float = 1e-13, atol: float = 1e-13):
    """High-accuracy solution of ``Ṙ = S(Ω) R``, ``J Ω̇ = m g (R rho0) × e3`` (scipy DOP853).

    Parameters
    ----------
    t_eval : ndarray, shape (N,)
        Output times (starting at 0).

    Returns
    -------
    R : ndarray, shape (N, 3, 3)
    w : ndarray, shape (N, 3)
        Spatial angular velocity.
    """
    rho0 = np.asarray(system.rho0, dtype=float)

    def rhs(t, y):
        R = y[:9].reshape(3, 3)
        w = y[9:]
        S = np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])
        wdot = system.m * system.g * np.cross(R @ rho0, E3) / system.J
        return np.concatenate([(S @ R).ravel(), wdot])

    y0 = np.concatenate([rr_matrix(alpha0).ravel(), np.asarray(w0, dtype=float)])
    sol = solve_ivp(rhs, (t_eval[0], t_eval[-1]), y0, method="DOP853", t_eval=t_eval, rtol=rtol, atol=atol)
    if not sol.success:  # pragma: no cover
        raise RuntimeError(sol.message)
    return sol.y[:9].T.reshape(-1, 3, 3), sol.y[9:].T


def rotation_angle(R) -> np.ndarray:
    """Angle of rotation matrices, robust near π: ``atan2(|vee(R - R^T)|, tr R - 1)``, shape (...)."""
    R = np.asarray(R, dtype=float)
    W = R - np.swapaxes(R, -1, -2)
    s = np.sqrt(W[..., 2, 1] ** 2 + W[..., 0, 2] ** 2 + W[..., 1, 0] ** 2)
    return np.arctan2(s, np.trace(R, axis1=-2, axis2=-1) - 1.0)
