"""Exact solutions used as references.

The torque-free asymmetric rigid body (Euler's equations ``J Ω̇ = JΩ × Ω`` with principal
inertias ``J₁, J₂, J₃``) has a closed-form body angular velocity in Jacobi elliptic functions
(Jacobi 1849; Landau & Lifshitz, *Mechanics*, §37): the component about the intermediate axis
follows ``sn``; of the other two, the one about the axis the motion circles follows ``dn`` and
never changes sign, the remaining one follows ``cn``,

    Ω_cn = a_cn cn(u, m),   Ω₂ = a₂ sn(u, m),   Ω_dn = a_dn dn(u, m),   u = λ t + u₀.

The amplitudes and the parameter ``m`` follow from the two invariants ``2E = Σ Jᵢ Ωᵢ²`` and
``L² = Σ Jᵢ² Ωᵢ²`` at the instants where ``sn = 0`` and ``cn = 0``; the rate ``λ`` from the
intermediate-axis equation ``J₂ Ω̇₂ = (J₃ − J₁) Ω₃ Ω₁``, and ``u₀`` from the initial value.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ellipj, ellipkinc

from mbslib.validation import vector


def free_body_angular_velocity(inertia, Omega0, t) -> np.ndarray:
    """Body angular velocity of the torque-free rigid body, shape ``(len(t), 3)``.

    Parameters
    ----------
    inertia : array_like, shape (3,)
        Three distinct principal inertias [kg m²], in any order (the body axes they belong to).
    Omega0 : array_like, shape (3,)
        Initial body angular velocity [rad/s], not on the separatrix ``L² = 2E J₂``.
    t : array_like, shape (T,)
        Times [s].

    Raises
    ------
    ValueError
        Naming the parameter: inertias not positive and distinct, or a start on the separatrix
        (where the motion is not periodic and ``m = 1``).
    """
    J = vector("inertia", inertia, (3,))
    order = np.argsort(J)
    if not (0 < J[order[0]] < J[order[1]] < J[order[2]]):
        raise ValueError(f"inertia must be three distinct positive principal values, got {J}")
    W0 = vector("Omega0", Omega0, (3,))
    t = np.atleast_1d(np.asarray(t, dtype=float))
    if np.any(order != np.arange(3)):  # in increasing axes; an odd permutation turns J Ω × Ω around: time runs back
        parity = np.linalg.det(np.eye(3)[order])
        out = np.empty((len(t), 3))
        out[:, order] = free_body_angular_velocity(J[order], W0[order], parity * t)
        return out
    two_E, L2 = J @ W0**2, (J**2) @ W0**2
    gap = L2 - two_E * J[1]
    if abs(gap) <= 1e-12 * L2:
        raise ValueError("Omega0 lies on the separatrix L² = 2E J₂: no periodic Jacobi solution")
    cn_axis, dn_axis = (0, 2) if gap > 0 else (2, 0)  # dn about the axis the motion circles
    Jc, Jd, J2 = J[cn_axis], J[dn_axis], J[1]
    # sn = 0: Ω_cn = ±a_cn, Ω_dn = a_dn
    ac2, ad2 = np.linalg.solve([[Jc, Jd], [Jc**2, Jd**2]], [two_E, L2])
    # cn = 0: Ω₂ = ±a₂, Ω_dn = a_dn √(1 − m)
    a22, ad2_low = np.linalg.solve([[J2, Jd], [J2**2, Jd**2]], [two_E, L2])
    m = 1.0 - ad2_low / ad2
    a_c = np.copysign(np.sqrt(ac2), W0[cn_axis] if W0[cn_axis] != 0 else 1.0)
    a_d = np.copysign(np.sqrt(ad2), W0[dn_axis])
    a_2 = np.sqrt(a22)
    lam = (J[2] - J[0]) * a_c * a_d / (J2 * a_2)
    phi0 = np.arctan2(W0[1] / a_2, W0[cn_axis] / a_c)
    u0 = ellipkinc(phi0, m)
    sn, cn, dn, _ = ellipj(lam * t + u0, m)
    Omega = np.empty((len(t), 3))
    Omega[:, cn_axis], Omega[:, 1], Omega[:, dn_axis] = a_c * cn, a_2 * sn, a_d * dn
    return Omega
