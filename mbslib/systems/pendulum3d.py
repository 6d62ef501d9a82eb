"""Three-dimensional pendulum on SO(3) with a spherical inertia (Baker & Gonzalez 2021, Sect. 3).

One rigid body with a fixed pivot at the origin: the configuration is the attitude R only
(``x ≡ v ≡ 0``). The potential is paper eq. (39), ``U(R) = -m g e3·R rho0``, so the potential is
lowest at ``R rho0 = +e3`` (e3 points *down*, as in Lee, Leok & McClamroch). The spatial torque
``R M = m g (R rho0) × e3`` is eq. (40) repaired (the print is garbled). The system follows the interface of
:class:`mbslib.integrators.rodrigues_vi.SphericalBodies` (``m``, ``J``, ``force_torque``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp

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

    def force_torque(self, x, alpha):
        """``F = 0`` and the spatial torque ``R M = m g (R rho0) × e3`` (eq. 40, repaired), shape (n, 3)."""
        axis = rr_matrix(alpha) @ np.asarray(self.rho0)
        return np.zeros_like(axis), self.m * self.g * np.cross(axis, E3)

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
