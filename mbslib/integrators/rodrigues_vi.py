"""Explicit integrators on SE(3)^n in rescaled Rodrigues parameters (Baker & Gonzalez 2021).

The attitude of each spherical body is stored as a rescaled Rodrigues vector
``alpha = 2 tan(|theta|/2) theta/|theta|`` (paper eq. 3); ``R(alpha)`` is the Cayley map (eq. 4)
and rotations compose algebraically with eq. (5). The maps implemented here are

* :func:`step_23` — the explicit variational map (23): the exact closed-form solution of the
  discrete Euler–Lagrange equations of the trapezoidal discrete Lagrangian (6), in spatial
  angular velocity;
* :func:`step_21` — the same map in body angular velocity, eq. (21) (a cross-check);
* :func:`step_25` — its O(h^3)-per-step truncation "à la explicit Newmark", eq. (25);
* :func:`step_27` — Campello's explicit phi = 1 scheme, eq. (27), first order;
* :func:`step_27_exact` — (27) with the untruncated increment (30) (a cross-check, not in the
  paper's figures).

All maps are vectorised over the n bodies. A *system* is a :class:`SphericalBodies`: masses
``m`` and scalar inertias ``J`` (scalars or arrays of shape (n,)) and a method
``force_torque(x, alpha) -> (F, T)`` that returns the forces ``F = -dU/dx`` and the **spatial**
torques ``T = R M`` (minus the gradient of U with respect to a left perturbation
``R -> exp(S(zeta)) R``), both of shape (n, 3).

The state is an :class:`RRState`; it carries the force and torque of its own configuration so
that every map costs one force evaluation per step.

The rotation maps of the rescaled Rodrigues parameters (eqs. 3–5: :func:`~mbslib.rodrigues.rr_matrix`,
:func:`~mbslib.rodrigues.rr_compose`, …) are a parametrization of rotations, not part of a scheme:
:mod:`mbslib.rodrigues`.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np

from mbslib.rodrigues import rr_compose, rr_matrix
from mbslib.validation import positive

__all__ = [
    "SphericalBodies",
    "RRState",
    "increment_exact",
    "increment_truncated",
    "initial_state",
    "step_21",
    "step_23",
    "step_25",
    "step_27",
    "step_27_exact",
    "STEPS",
    "run",
    "pack",
    "unpack",
    "as_flat_step",
    "del_residual",
]


# ---------------------------------------------------------------------------------------------
# Attitude increments, eqs. (16), (23b), (25b)
# ---------------------------------------------------------------------------------------------


def increment_exact(p, h: float) -> np.ndarray:
    """Closed-form root of the discrete Legendre equation (15): eq. (16)/(23b).

    ``Δα = 2h/(1 + sqrt(1 - h^2 |p|^2)) p``, the small root of ``4Δα/(4+|Δα|^2) = h p``.

    Parameters
    ----------
    p : array_like, shape (..., 3)
        ``Ω_k + h/(2J) R_k M_k`` (spatial form).
    h : float

    Raises
    ------
    FloatingPointError
        If ``h|p| >= 1`` (the increment would rotate by π/2 or more; validity condition of (16),
        which the paper prints as ``h^2 |p| < 1``).
    """
    positive(h=h)
    p = np.asarray(p, dtype=float)
    s = h * h * np.sum(p * p, axis=-1)
    if np.any(s >= 1.0):
        raise FloatingPointError(f"map (23): h|p| = {np.sqrt(s.max()):.3g} >= 1, eq. (16) has no real root")
    return (2.0 * h / (1.0 + np.sqrt(1.0 - s)))[..., None] * p


def increment_truncated(p, h: float) -> np.ndarray:
    """Second-order truncation of (24): ``Δα = h Ω_k + h^2/(2J) R_k M_k = h p``, eq. (25b)."""
    positive(h=h)
    return h * np.asarray(p, dtype=float)


# ---------------------------------------------------------------------------------------------
# State and maps
# ---------------------------------------------------------------------------------------------


@runtime_checkable
class SphericalBodies(Protocol):
    """n rigid bodies with spherical inertia (``J_i = j_i I``) under forces of their configuration,
    as the maps (21), (23), (25), (27) and the residual (10) use them.

    Attributes
    ----------
    m : float or ndarray, shape (n,)
        Masses: one scalar for all bodies or one per body.
    J : float or ndarray, shape (n,)
        Scalar inertias j (``J = j I``): one scalar or one per body.
    """

    m: float | np.ndarray
    J: float | np.ndarray

    def force_torque(self, x: np.ndarray, alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Forces ``F = −∂U/∂x`` and spatial torques ``T = R M`` at centres ``x`` and attitudes
        ``α`` (rescaled Rodrigues vectors), all of shape (n, 3): ``F_k, T_k`` of (23a–d), (27)."""
        ...


class RRState(NamedTuple):
    """State of n spherical bodies at one time level.

    Attributes
    ----------
    x, v : ndarray, shape (n, 3)
        Centre-of-mass positions and velocities (inertial frame).
    alpha : ndarray, shape (n, 3)
        Rescaled Rodrigues vectors of the attitudes ``R_i = R(alpha_i)`` (body -> inertial).
    w : ndarray, shape (n, 3)
        Angular velocities: spatial ``Ω = R ω`` for maps (23), (25), (27); body ``ω`` for map (21).
    F, T : ndarray, shape (n, 3)
        Force ``-dU/dx`` and spatial torque ``R M`` at ``(x, alpha)``.
    """

    x: np.ndarray
    v: np.ndarray
    alpha: np.ndarray
    w: np.ndarray
    F: np.ndarray
    T: np.ndarray


def initial_state(system: SphericalBodies, x, v, alpha, w) -> RRState:
    """Build an :class:`RRState` (arrays of shape (n, 3)) and evaluate its force and torque."""
    x, v, alpha, w = (np.atleast_2d(np.asarray(a, dtype=float)).copy() for a in (x, v, alpha, w))
    shapes = {a.shape for a in (x, v, alpha, w)}
    if len(shapes) != 1 or x.shape[1] != 3:
        raise ValueError(f"x, v, alpha, w must all have shape (n, 3), got {[a.shape for a in (x, v, alpha, w)]}")
    F, T = system.force_torque(x, alpha)
    return RRState(x, v, alpha, w, F, T)


def _mass(system: SphericalBodies, n: int):
    """Mass and scalar inertia of the n spherical bodies as broadcastable arrays.

    ``system.m`` and ``system.J`` are each one scalar (all bodies alike) or one positive scalar
    per body, shape (n,); anything else (e.g. three principal moments for one body) raises
    ``ValueError`` naming the attribute: these maps hold only for spherical inertia.
    """
    out = []
    for name in ("m", "J"):
        a = np.asarray(getattr(system, name), dtype=float)
        if a.shape not in ((), (n,)):
            raise ValueError(f"{name} must be one scalar or one scalar per body, shape ({n},) for the {n} "
                             f"bodies of the state (spherical inertia), got shape {a.shape}")
        if not (np.all(np.isfinite(a)) and np.all(a > 0)):
            raise ValueError(f"{name} must be finite and positive, got {a!r}")
        out.append(a[:, None] if a.ndim else a)
    return tuple(out)


def _step_trapezoidal(system: SphericalBodies, s: RRState, h: float, increment) -> RRState:
    """Maps (23) and (25) with one force evaluation per step (the force and torque of the new
    configuration are reused as those of the next step)."""
    positive(h=h)
    m, J = _mass(system, s.x.shape[0])
    x1 = s.x + h * s.v + (h * h / (2.0 * m)) * s.F  # (23a)
    p = s.w + (h / (2.0 * J)) * s.T  # Ω_k + h/(2J) R_k M_k
    alpha1 = rr_compose(s.alpha, increment(p, h))  # (23b)/(25b), α_{k+1} = α_k ⊕ Δα_k
    F1, T1 = system.force_torque(x1, alpha1)
    v1 = s.v + (h / (2.0 * m)) * (s.F + F1)  # (23c)
    w1 = p + (h / (2.0 * J)) * T1  # (23d)
    return RRState(x1, v1, alpha1, w1, F1, T1)


def step_23(system: SphericalBodies, state: RRState, h: float, t: float = 0.0) -> tuple[RRState, None]:
    """Explicit variational map (23) (spatial angular velocity), one step of size ``h``.

    Returns ``(state_{k+1}, None)``; raises ``FloatingPointError`` if ``h|p| >= 1`` (eq. 16).
    """
    return _step_trapezoidal(system, state, h, increment_exact), None


def step_25(system: SphericalBodies, state: RRState, h: float, t: float = 0.0) -> tuple[RRState, None]:
    """Second-order explicit map (25) ("à la explicit Newmark / velocity Verlet"), one step."""
    return _step_trapezoidal(system, state, h, increment_truncated), None


def step_21(system: SphericalBodies, state: RRState, h: float, t: float = 0.0) -> tuple[RRState, None]:
    """Explicit variational map (21) in **body** angular velocity (``state.w`` is ω), one step.

    (21b) ``Δα = 2h/(1+sqrt(1-h^2|q|^2)) R_k q`` with ``q = ω_k + h/(2J) M_k``;
    (21d) ``ω_{k+1} = R_{k+1}^T R_k q + h/(2J) M_{k+1}``, with body torques ``M = R^T T``.
    """
    positive(h=h)
    s = state
    m, J = _mass(system, s.x.shape[0])
    R = rr_matrix(s.alpha)
    M = np.einsum("nji,nj->ni", R, s.T)  # M_k = R_k^T (R_k M_k)
    x1 = s.x + h * s.v + (h * h / (2.0 * m)) * s.F  # (21a)
    q = s.w + (h / (2.0 * J)) * M
    sq = h * h * np.sum(q * q, axis=-1)
    if np.any(sq >= 1.0):
        raise FloatingPointError("map (21): h|q| >= 1, eq. (16) has no real root")
    Rq = np.einsum("nij,nj->ni", R, q)
    alpha1 = rr_compose(s.alpha, (2.0 * h / (1.0 + np.sqrt(1.0 - sq)))[:, None] * Rq)  # (21b)
    F1, T1 = system.force_torque(x1, alpha1)
    R1 = rr_matrix(alpha1)
    M1 = np.einsum("nji,nj->ni", R1, T1)
    v1 = s.v + (h / (2.0 * m)) * (s.F + F1)  # (21c)
    w1 = np.einsum("nji,nj->ni", R1, Rq) + (h / (2.0 * J)) * M1  # (21d)
    return RRState(x1, v1, alpha1, w1, F1, T1), None


def _step_phi1(system: SphericalBodies, s: RRState, h: float, increment) -> RRState:
    """Campello's phi = 1 scheme (26) evaluated in the order c, d, a, b."""
    positive(h=h)
    m, J = _mass(system, s.x.shape[0])
    v1 = s.v + (h / m) * s.F  # (27c)
    w1 = s.w + (h / J) * s.T  # (27d)
    x1 = s.x + h * v1  # (27a)
    alpha1 = rr_compose(s.alpha, increment(w1, h))  # (27b)
    F1, T1 = system.force_torque(x1, alpha1)
    return RRState(x1, v1, alpha1, w1, F1, T1)


def step_27(system: SphericalBodies, state: RRState, h: float, t: float = 0.0) -> tuple[RRState, None]:
    """Explicit first-order map (27) (Campello, phi = 1): ``Δα_k = h Ω_{k+1}``."""
    return _step_phi1(system, state, h, increment_truncated), None


def step_27_exact(system: SphericalBodies, state: RRState, h: float, t: float = 0.0) -> tuple[RRState, None]:
    """Map (27) with the exact increment (30) of the one-sided discrete Lagrangian (28)."""
    return _step_phi1(system, state, h, increment_exact), None


#: The maps by the paper's equation number.
STEPS = {"21": step_21, "23": step_23, "25": step_25, "27": step_27, "27*": step_27_exact}


def run(step, system: SphericalBodies, state: RRState, h: float, n_steps: int) -> list[RRState]:
    """Apply ``step`` ``n_steps`` times; return the ``n_steps + 1`` states (a small driver for
    the vectorised n-body state; the torus has its own compiled loop).

    Raises ``ValueError`` if ``h`` is not a finite positive number or ``n_steps`` is not a
    non-negative integer.
    """
    positive(h=h)
    if int(n_steps) != n_steps or n_steps < 0:
        raise ValueError(f"n_steps must be a non-negative integer, got {n_steps!r}")
    states = [state]
    for k in range(n_steps):
        state, _ = step(system, state, h, k * h)
        states.append(state)
    return states


# ---------------------------------------------------------------------------------------------
# Flat-vector adapters for mbslib.simulate, and the DEL residual (10)
# ---------------------------------------------------------------------------------------------


def pack(state: RRState) -> np.ndarray:
    """Flatten an :class:`RRState` to shape (18 n,) (order x, v, alpha, w, F, T)."""
    return np.concatenate([np.ravel(a) for a in state])


def unpack(z: np.ndarray) -> RRState:
    """Inverse of :func:`pack`."""
    z = np.asarray(z, dtype=float)
    if z.size % 18:
        raise ValueError(f"z must have 18 n entries, got {z.size}")
    n = z.size // 18
    return RRState(*(a.reshape(n, 3) for a in np.split(z, 6)))


def as_flat_step(step, system: SphericalBodies):
    """Wrap a map for :func:`mbslib.simulate.simulate`: ``(z_n, h, t) -> (z_n1, None)``."""

    def flat_step(z, h, t):
        s1, report = step(system, unpack(z), h, t)
        return pack(s1), report

    return flat_step


def del_residual(system: SphericalBodies, x, alpha_prev, alpha, alpha_next, h: float) -> np.ndarray:
    """Residual of the attitude discrete Euler–Lagrange equation (10) for scalar J, shape (n, 3).

    ``(J/2h) vee[(F_k - F_k^T) - (F_{k-1} - F_{k-1}^T)] - h M_k`` with ``F_k = R_k^T R_{k+1}``
    and the body torque ``M_k = R_k^T T_k`` evaluated at ``(x, alpha)``; zero along a
    trajectory of map (23). All arrays have shape (n, 3); the n rows may be n bodies or n time
    levels of one body (the residual of a whole trajectory in one call).
    """
    positive(h=h)
    _, J = _mass(system, np.shape(alpha)[0] if np.ndim(alpha) > 1 else 1)
    R0, R1, R2 = rr_matrix(alpha_prev), rr_matrix(alpha), rr_matrix(alpha_next)
    Fk = np.swapaxes(R1, -1, -2) @ R2
    Fkm = np.swapaxes(R0, -1, -2) @ R1
    W = (Fk - np.swapaxes(Fk, -1, -2)) - (Fkm - np.swapaxes(Fkm, -1, -2))
    w = np.stack([W[..., 2, 1], W[..., 0, 2], W[..., 1, 0]], axis=-1)
    _, T = system.force_torque(np.atleast_2d(x), np.atleast_2d(alpha))
    M = np.einsum("nji,nj->ni", R1, T)
    return (J / (2.0 * h)) * w - h * M
