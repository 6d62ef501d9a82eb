"""Kinematics of a director triad: a rotation as three directors ``q = (d1, d2, d3)`` in R⁹.

Papers 001 and 004 (Gebhardt & Romero 2020, Sect. 3.5). ``q[0:3] = d1``, ``q[3:6] = d2``,
``q[6:9] = d3``; the rotation is ``Λ = [d1 d2 d3]`` (directors as columns), ``Λ = d_i ⊗ E_i``.
Rigidity is the six quadratic orthonormality constraints ``h(q) = 0`` (eq. 63 completed with the
unit lengths); the non-twisting condition ``w · d3 = 0`` is the velocity constraint
``g = G(q) q̇ = (1 − a) ḋ1·d2 − a ḋ2·d1 = 0`` with ``G(q)ᵀ = B q`` (eq. 80). A state of the
energy–momentum scheme is ``x = (q, q̇)``, shape (18,).

Nothing here depends on a body's inertia or loads: those are members of the body record
(:class:`mbslib.systems.nontwisting_body.NontwistingBody`, see
:class:`mbslib.integrators.nonholonomic_em.DirectorTriad`).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from mbslib.systems.directors import QuadraticConstraints, orthonormality_values
from mbslib.validation import vector

I3 = np.eye(3)


# --- configuration --------------------------------------------------------------------------


def directors(q) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Split ``q`` (..., 9) into (d1, d2, d3), each (..., 3)."""
    q = np.asarray(q)
    return q[..., 0:3], q[..., 3:6], q[..., 6:9]


def q_from_rotation(R) -> np.ndarray:
    """Directors of Λ (columns d_i = Λ E_i) stacked as q, shape (9,) or (N, 9) for (N, 3, 3)."""
    R = np.asarray(R, dtype=float)
    return np.swapaxes(R, -1, -2).reshape(R.shape[:-2] + (9,))


def rotation_from_q(q) -> np.ndarray:
    """Λ = d_i ⊗ E_i = [d1 d2 d3], shape (3, 3) or (N, 3, 3)."""
    q = np.asarray(q, dtype=float)
    return np.swapaxes(q.reshape(q.shape[:-1] + (3, 3)), -1, -2)


def rigid_velocity(omega, q) -> np.ndarray:
    """Director velocities ḋ_i = ω × d_i of a rigid rotation, shape (9,) (eq. 57 / ICs 67)."""
    d1, d2, d3 = directors(q)
    return np.concatenate([np.cross(omega, d1), np.cross(omega, d2), np.cross(omega, d3)])


def initial_state(omega0, R0=None) -> np.ndarray:
    """EM state x0 = (q0, q̇0) for Λ(0) = R0 (identity by default) and spatial ω(0), shape (18,)."""
    omega0 = vector("omega0", omega0, (3,))
    q0 = q_from_rotation(I3 if R0 is None else np.asarray(R0, dtype=float))
    return np.concatenate([q0, rigid_velocity(omega0, q0)])


# --- constraints (eqs. 63 with the unit lengths added, and 80) -------------------------------

#: The six orthonormality constraints in the order of eq. (63) completed with the unit lengths,
#: ``(11, 22, 33, 23, 13, 12)``, built by
#: :func:`mbslib.systems.directors.orthonormality_constraints` for the triad stored from index 0
#: (no centre-of-mass block).
ORTHONORMALITY_PAIRS = ((1, 1), (2, 2), (3, 3), (2, 3), (1, 3), (1, 2))
ORTHONORMALITY = QuadraticConstraints.orthonormality(dim=3, pairs=ORTHONORMALITY_PAIRS, offset=0)


def constraint(q) -> np.ndarray:
    """Orthonormality constraints h(q), shape (6,) (eq. 63 completed with the unit lengths).

    ``h = (½(d1·d1−1), ½(d2·d2−1), ½(d3·d3−1), d2·d3, d1·d3, d1·d2)``.
    """
    return orthonormality_values(q, 3, ORTHONORMALITY_PAIRS)


def constraint_jacobian(q) -> np.ndarray:
    """H(q) = ∂h/∂q, shape (6, 9)."""
    return ORTHONORMALITY.G(q)


def constraint_hessian(lam) -> np.ndarray:
    """C(λ) = ∇²(λ·h), the constant symmetric 9×9 block matrix (diag λ1..3, off-diag λ4..6)."""
    return ORTHONORMALITY.hessian_sum(np.asarray(lam, dtype=float))


@lru_cache(maxsize=16)
def twist_matrix(a: float) -> np.ndarray:
    """B with G(q)ᵀ = B q, i.e. G(q) = [(1−a) d2ᵀ | −a d1ᵀ | 0] (eq. 80), shape (9, 9); read-only."""
    B = np.zeros((9, 9))
    B[0:3, 3:6] = (1.0 - a) * I3
    B[3:6, 0:3] = -a * I3
    B.flags.writeable = False
    return B


def twist_rate(q, qdot, a: float = 0.5) -> float:
    """Nonholonomic constraint g = G(q) q̇ = (1−a) ḋ1·d2 − a ḋ2·d1 (eq. 80)."""
    return float((twist_matrix(a) @ q) @ qdot)


# --- angular momentum and velocity (eqs. 65, 109) ---------------------------------------------


def spatial_angular_momentum(q, p) -> np.ndarray:
    """π = Σ_i d_i × π^i of the director momenta p = (π¹, π², π³), shape (..., 3)."""
    d, P = np.asarray(q), np.asarray(p)
    return sum(np.cross(d[..., 3 * i : 3 * i + 3], P[..., 3 * i : 3 * i + 3]) for i in range(3))


def material_angular_momentum(q, p) -> np.ndarray:
    """Π^k = d_k · π, shape (..., 3) (eq. 109: Π¹ = d3·π² − d2·π³, ...)."""
    q = np.asarray(q)
    pi = spatial_angular_momentum(q, p)
    return np.stack([np.sum(q[..., 3 * k : 3 * k + 3] * pi, axis=-1) for k in range(3)], axis=-1)


def angular_velocity(q, qdot) -> np.ndarray:
    """w = ½ Σ_i d_i × ḋ_i (exact for a rigid velocity field), shape (..., 3)."""
    return 0.5 * spatial_angular_momentum(q, qdot)
