"""Rotations: SO(3), its exponential map and tangent operator, Cayley / rescaled Rodrigues
parameters, and Tait–Bryan angles.

Conventions:

- ``hat(a) @ b == np.cross(a, b)``; ``vee`` is its inverse.
- ``exp_so3(phi)`` is the rotation by the angle ``|phi|`` about ``phi/|phi|`` (Rodrigues' formula).
- The tangent operator is right-trivialised: ``exp(φ + δ) = exp(φ) exp(T(φ) δ) + O(|δ|²)``,
  ``T = dexp_so3(φ)``; equivalently ``d/dt exp(φ) = exp(φ) hat(T(φ) φ̇)``.
- Rescaled Rodrigues parameters ``c = 2 tan(θ/2) n`` (the Cayley map): ``R = (I - ĉ/2)⁻¹ (I + ĉ/2)``.
- Tait–Bryan 1-2-3 angles ``(α, β, γ)``: ``R = R_x(α) R_y(β) R_z(γ)``.

All functions take float arrays of shape (3,) or (3, 3) and are exact up to round-off at every
angle: the small-angle coefficients are evaluated with ``np.sinc`` or Taylor series, never as
0/0.
"""

from __future__ import annotations

import numpy as np

_I3 = np.eye(3)
_E = np.eye(3)


def hat(a) -> np.ndarray:
    """Skew-symmetric matrix ``â`` of ``a``, shape (3, 3), with ``â b = a × b``."""
    a1, a2, a3 = a
    return np.array([[0.0, -a3, a2], [a3, 0.0, -a1], [-a2, a1, 0.0]])


def vee(A) -> np.ndarray:
    """Axial vector of the skew part of ``A``: ``vee(hat(a)) = a``; shape (3,)."""
    A = np.asarray(A, dtype=float)
    return 0.5 * np.array([A[2, 1] - A[1, 2], A[0, 2] - A[2, 0], A[1, 0] - A[0, 1]])


def _sin_over(theta):
    """sin θ / θ, exact at 0."""
    return np.sinc(theta / np.pi)


def _one_minus_cos_over_sq(theta):
    """(1 - cos θ)/θ² = ½ (sin(θ/2)/(θ/2))², free of cancellation."""
    return 0.5 * np.sinc(theta / (2 * np.pi)) ** 2


def _theta_minus_sin_over_cube(theta):
    """(θ - sin θ)/θ³; below θ = 1 the alternating series Σ (-1)^k θ^{2k}/(2k+3)! (9 terms,
    truncation < 1e-19), above it the formula, whose cancellation costs < 2e-15 relative there."""
    if theta < 1.0:
        t2 = theta * theta
        total = 0.0
        for k in range(8, -1, -1):  # Horner in θ²
            total = total * -t2 + 1.0 / _FACTORIALS[2 * k + 3]
        return total
    return (theta - np.sin(theta)) / theta**3


_FACTORIALS = [float(np.prod(np.arange(1, n + 1))) for n in range(22)]


def rotation_coefficients(theta: float) -> tuple[float, float, float]:
    """The coefficients ``(sin θ/θ, (1 - cos θ)/θ², (θ - sin θ)/θ³)`` of Rodrigues' formula and of
    the tangent operator, accurate to round-off at every angle including θ = 0."""
    return float(_sin_over(theta)), float(_one_minus_cos_over_sq(theta)), float(_theta_minus_sin_over_cube(theta))


def exp_so3(phi) -> np.ndarray:
    """Rotation matrix ``exp(φ̂) = I + (sin θ/θ) φ̂ + ((1-cos θ)/θ²) φ̂²``, ``θ = |φ|``; shape (3, 3)."""
    phi = np.asarray(phi, dtype=float)
    theta = np.linalg.norm(phi)
    P = hat(phi)
    return _I3 + _sin_over(theta) * P + _one_minus_cos_over_sq(theta) * (P @ P)


def log_so3(R) -> np.ndarray:
    """Rotation vector φ with ``exp_so3(φ) = R`` and ``|φ| ≤ π``; shape (3,).

    Uses the skew part for θ ≤ π/2 and the symmetric part ``(R + Rᵀ)/2 - cos θ I = (1 - cos θ) n nᵀ``
    for θ > π/2, so the axis is accurate up to θ = π. At θ = π exactly the sign of the axis is
    arbitrary (both choices are the same rotation).
    """
    R = np.asarray(R, dtype=float)
    w = vee(R)  # = sin θ n
    s = np.linalg.norm(w)
    c = 0.5 * (np.trace(R) - 1.0)
    theta = np.arctan2(s, c)
    if c >= 0.0:
        return w / _sin_over(theta)
    B = 0.5 * (R + R.T) - c * _I3
    i = int(np.argmax(np.diag(B)))
    n = B[:, i] / np.sqrt(B[i, i] * (1.0 - c))
    if n @ w < 0.0:
        n = -n
    return theta * n / np.linalg.norm(n)


def dexp_so3(phi) -> np.ndarray:
    """Right-trivialised tangent operator ``T(φ) = I - ((1-cos θ)/θ²) φ̂ + ((θ - sin θ)/θ³) φ̂²``.

    ``exp(φ + δ) = exp(φ) exp(T(φ) δ) + O(|δ|²)``; shape (3, 3). (Paper 002, App. A: T_exp.)
    """
    phi = np.asarray(phi, dtype=float)
    theta = np.linalg.norm(phi)
    P = hat(phi)
    return _I3 - _one_minus_cos_over_sq(theta) * P + _theta_minus_sin_over_cube(theta) * (P @ P)


def dexpinv_so3(phi) -> np.ndarray:
    """Inverse tangent operator ``T(φ)⁻¹ = I + ½ φ̂ + (1/θ² - (1 + cos θ)/(2 θ sin θ)) φ̂²``.

    Valid for θ < 2π; the coefficient uses its Taylor series ``1/12 + θ²/720 + θ⁴/30240 + θ⁶/1209600``
    below θ = 0.05. Shape (3, 3).
    """
    phi = np.asarray(phi, dtype=float)
    theta = np.linalg.norm(phi)
    if theta >= 2 * np.pi - 1e-6:
        raise ValueError(f"dexpinv_so3 is singular at |phi| = 2π; got |phi| = {theta}")
    if theta < 0.05:
        t2 = theta * theta
        coeff = 1 / 12 + t2 / 720 + t2 * t2 / 30240 + t2**3 / 1209600
    else:
        # (1 + cos θ)/sin θ = cot(θ/2), which stays accurate up to θ = π
        coeff = (1.0 - 0.5 * theta / np.tan(0.5 * theta)) / theta**2
    P = hat(phi)
    return _I3 + 0.5 * P + coeff * (P @ P)


def cayley_so3(c) -> np.ndarray:
    """Cayley map of rescaled Rodrigues parameters ``c = 2 tan(θ/2) n``.

    ``R = (I - ĉ/2)⁻¹ (I + ĉ/2) = I + 4/(4 + |c|²) (ĉ + ĉ²/2)``; shape (3, 3).
    """
    c = np.asarray(c, dtype=float)
    C = hat(c)
    return _I3 + 4.0 / (4.0 + c @ c) * (C + 0.5 * C @ C)


def cayley_inv_so3(R) -> np.ndarray:
    """Rescaled Rodrigues parameters of ``R``: ``c = 2 vee(R - Rᵀ)/(1 + tr R)``; undefined at θ = π."""
    R = np.asarray(R, dtype=float)
    denom = 1.0 + np.trace(R)
    if denom <= 1e-12:
        raise ValueError("cayley_inv_so3 is undefined for a rotation by π (1 + tr R = 0)")
    return 4.0 * vee(R) / denom


def cayley_compose(a, b) -> np.ndarray:
    """Parameters of ``cay(a) cay(b)``: ``(a + b + ½ a × b) / (1 - ¼ a·b)``.

    The result is undefined (a rotation by π) when ``a·b = 4``.
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    denom = 1.0 - 0.25 * (a @ b)
    if abs(denom) < 1e-14:
        raise ValueError("cayley_compose: the composition is a rotation by π (a·b = 4)")
    return (a + b + 0.5 * np.cross(a, b)) / denom


def rotvec_to_cayley(phi) -> np.ndarray:
    """Rescaled Rodrigues parameters ``2 tan(θ/2) n`` of the rotation vector ``θ n`` (``|θ| < π``)."""
    phi = np.asarray(phi, dtype=float)
    theta = np.linalg.norm(phi)
    if theta >= np.pi:
        raise ValueError(f"rotation angle must be below π for Cayley parameters, got {theta}")
    # 2 tan(θ/2)/θ = (sin(θ/2)/(θ/2)) / cos(θ/2)
    return phi * np.sinc(theta / (2 * np.pi)) / np.cos(theta / 2)


def _axis_rotation(axis: int, angle: float) -> np.ndarray:
    return exp_so3(angle * _E[axis])


def tait_bryan_123(angles) -> np.ndarray:
    """``R = R_x(α) R_y(β) R_z(γ)`` for Tait–Bryan angles ``(α, β, γ)``; shape (3, 3)."""
    alpha, beta, gamma = angles
    return _axis_rotation(0, alpha) @ _axis_rotation(1, beta) @ _axis_rotation(2, gamma)


def tait_bryan_123_from_matrix(R) -> np.ndarray:
    """Angles ``(α, β, γ)`` of ``R = R_x(α) R_y(β) R_z(γ)`` with β ∈ [-π/2, π/2].

    Raises at gimbal lock (``|cos β| < 1e-12``), where α and γ are not separately defined.
    """
    R = np.asarray(R, dtype=float)
    beta = np.arcsin(np.clip(R[0, 2], -1.0, 1.0))
    if abs(np.cos(beta)) < 1e-12:
        raise ValueError("Tait–Bryan angles are singular at β = ±π/2 (gimbal lock)")
    alpha = np.arctan2(-R[1, 2], R[2, 2])
    gamma = np.arctan2(-R[0, 1], R[0, 0])
    return np.array([alpha, beta, gamma])


def tait_bryan_123_body_rates(angles) -> np.ndarray:
    """Kinematic matrix ``G`` with body angular velocity ``Ω = G(α, β, γ) (α̇, β̇, γ̇)``.

    ``Ω = R_zᵀ R_yᵀ e₁ α̇ + R_zᵀ e₂ β̇ + e₃ γ̇``; ``det G = cos β`` vanishes at gimbal lock.
    Shape (3, 3).
    """
    _, beta, gamma = angles
    cb, sb, cg, sg = np.cos(beta), np.sin(beta), np.cos(gamma), np.sin(gamma)
    return np.array([[cb * cg, sg, 0.0], [-cb * sg, cg, 0.0], [sb, 0.0, 1.0]])


def tait_bryan_123_spatial_rates(angles) -> np.ndarray:
    """Kinematic matrix with spatial angular velocity ``ω = R Ω = G_s (α̇, β̇, γ̇)``.

    ``ω = e₁ α̇ + R_x e₂ β̇ + R_x R_y e₃ γ̇``; shape (3, 3).
    """
    alpha, beta, _ = angles
    ca, sa, cb, sb = np.cos(alpha), np.sin(alpha), np.cos(beta), np.sin(beta)
    return np.array([[1.0, 0.0, sb], [0.0, ca, -sa * cb], [0.0, sa, ca * cb]])
