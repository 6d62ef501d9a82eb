"""Numerical tests of symplecticity and momentum conservation for implicit one-step maps.

For an implicit scheme R(x_{n+1}; z_n) = 0 with start point z_n = (q_n, p_n), the Jacobian of
the one-step map Φ: z_n ↦ z_{n+1} = (q_{n+1}, p_{n+1}) follows by implicit differentiation,

    DΦ = −[∂R/∂x]⁻¹ ∂R/∂z_n   (the rows of q_{n+1}, p_{n+1}).

A constrained map can only preserve the canonical two-form dq∧dp on variations compatible with
the constraint, G(q_n) dq = 0 (Kinon, Betsch & Schneider 2023, eqs. (42)-(49)): with B an
orthonormal basis of {(dq, dp): G(q_n) dq = 0}, the defect D = (DΦ B)ᵀ 𝕁 (DΦ B) − Bᵀ 𝕁 B must vanish.
Its size is measured by the spectral norm ‖D‖₂, which does not depend on the basis: another
orthonormal basis is B Q with Q orthogonal, turning D into Qᵀ D Q, whose singular values are those
of D. (The largest entry of D does change with Q, and the null space of G has no preferred basis.)
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import null_space


def canonical_matrix(d: int) -> np.ndarray:
    """𝕁 = [[0, I], [−I, 0]] of size 2d (paper eq. 5)."""
    I = np.eye(d)
    Z = np.zeros((d, d))
    return np.block([[Z, I], [-I, Z]])


def step_map_jacobian(J_x: np.ndarray, J_z: np.ndarray, n_out: int) -> np.ndarray:
    """DΦ = −J_x⁻¹ J_z restricted to the first ``n_out`` unknowns.

    Parameters
    ----------
    J_x : ndarray, shape (n, n)
        ∂R/∂x at the converged step.
    J_z : ndarray, shape (n, k)
        ∂R/∂z_n, z_n the k start variables.
    n_out : int
        Number of leading unknowns that form z_{n+1} (2d when x = [q; p; ...]).

    Returns
    -------
    ndarray, shape (n_out, k)
    """
    return -np.linalg.solve(J_x, J_z)[:n_out]


def constrained_tangent_basis(G: np.ndarray) -> np.ndarray:
    """Orthonormal basis of {(dq, dp): G dq = 0} ⊂ R^{2d}, shape (2d, 2d − rank G).

    Parameters
    ----------
    G : ndarray, shape (m, d)
        Constraint Jacobian at q_n (m = 0 allowed: the whole space).
    """
    d = G.shape[1]
    Nq = null_space(G) if G.shape[0] else np.eye(d)
    B = np.zeros((2 * d, Nq.shape[1] + d))
    B[:d, : Nq.shape[1]] = Nq
    B[d:, Nq.shape[1] :] = np.eye(d)
    return B


def symplecticity_defect(DPhi: np.ndarray, B: np.ndarray | None = None) -> float:
    """``‖(DΦ B)ᵀ 𝕁 (DΦ B) − Bᵀ 𝕁 B‖₂``, the spectral norm of the defect of the symplectic form on
    the span of ``B`` (B = identity if omitted: the unrestricted defect).

    For an orthonormal ``B`` the value depends on the subspace only, not on the basis chosen in it
    (module docstring).

    Parameters
    ----------
    DPhi : ndarray, shape (2d, 2d)
    B : ndarray, shape (2d, k), optional
        Orthonormal columns (:func:`constrained_tangent_basis`).
    """
    n = DPhi.shape[0]
    if B is None:
        B = np.eye(n)
    Jc = canonical_matrix(n // 2)
    A = DPhi @ B
    return float(np.linalg.norm(A.T @ Jc @ A - B.T @ Jc @ B, 2))
