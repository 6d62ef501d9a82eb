"""Quaternions, scalar first: ``q = (q0, q_vec)`` (paper 000, Sect. 3).

The matrices follow paper 000: ``q∘p = Q_l(q) p = Q_r(p) q`` (33), ``G(q) = [-q_vec, q0 I - q̂]``
and ``E(q) = [-q_vec, q0 I + q̂]`` (35), ``R(q) = E(q) G(q)ᵀ`` (50). On the unit sphere S³ the
convective and spatial angular velocities are ``Ω = 2 G(q) q̇`` and ``ω = 2 E(q) q̇`` (43), and the
kinetic energy ``½ Ω·JΩ = ½ q̇·M(q) q̇`` has the singular 4×4 mass matrix ``M(q) = 4 G(q)ᵀ J G(q)``
(46), whose null space is spanned by ``q`` itself. :func:`quat_grad_kinetic` and
:func:`quat_dg_kinetic` give the partial derivatives of that kinetic energy of one rigid body,
continuous (48) and discrete (87)–(88), with their Jacobians, as :class:`KineticParts`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from mbslib.rotations import log_so3

IDENTITY = np.array([1.0, 0.0, 0.0, 0.0])


def qmul(a, b) -> np.ndarray:
    """Quaternion product ``a∘b = (a0 b0 - a·b, a0 b + b0 a + a × b)`` (28); shape (4,)."""
    a0, av = a[0], np.asarray(a[1:])
    b0, bv = b[0], np.asarray(b[1:])
    return np.concatenate([[a0 * b0 - av @ bv], a0 * bv + b0 * av + np.cross(av, bv)])


def qconj(q) -> np.ndarray:
    """Conjugate ``q̄ = (q0, -q_vec)``."""
    return np.array([q[0], -q[1], -q[2], -q[3]])


def _transpose(A) -> np.ndarray:
    """The transposes of a stack of matrices (..., r, c) -> (..., c, r)."""
    return np.swapaxes(A, -1, -2)


def _times(A, x) -> np.ndarray:
    """Matrix–vector products of stacks: ``A (..., r, c)`` times ``x (..., c)``, shape (..., r)."""
    return (A @ x[..., None])[..., 0]


#: ``G(q)`` and ``E(q)`` (35) pick the entries ``q[_INDEX]`` of q with the signs ``_G_SIGN``, ``_E_SIGN``.
_INDEX = np.array([[1, 0, 3, 2], [2, 3, 0, 1], [3, 2, 1, 0]])
_G_SIGN = np.array([[-1.0, 1.0, 1.0, -1.0], [-1.0, -1.0, 1.0, 1.0], [-1.0, 1.0, -1.0, 1.0]])
_E_SIGN = np.array([[-1.0, 1.0, -1.0, 1.0], [-1.0, 1.0, 1.0, -1.0], [-1.0, -1.0, 1.0, 1.0]])
#: ``Q_l(a) = [a, G(a)ᵀ]`` and ``Q_r(b) = [b, E(b)ᵀ]`` (33) likewise.
_Q_INDEX = np.column_stack([np.arange(4), _INDEX.T])
_QL_SIGN, _QR_SIGN = (np.column_stack([np.ones(4), sign.T]) for sign in (_G_SIGN, _E_SIGN))


def Ql(a) -> np.ndarray:
    """Left multiplication matrix, ``a∘b = Q_l(a) b`` (33a); shape (4, 4), or (..., 4, 4) for a
    stack of quaternions (..., 4)."""
    return np.take(np.asarray(a, dtype=float), _Q_INDEX, axis=-1) * _QL_SIGN


def Qr(b) -> np.ndarray:
    """Right multiplication matrix, ``a∘b = Q_r(b) a`` (33b); shape (4, 4), or (..., 4, 4)."""
    return np.take(np.asarray(b, dtype=float), _Q_INDEX, axis=-1) * _QR_SIGN


def G(q) -> np.ndarray:
    """``G(q) = [-q_vec, q0 I - q̂]`` (35a); shape (3, 4), or (..., 3, 4) for q of shape (..., 4)."""
    return np.take(np.asarray(q, dtype=float), _INDEX, axis=-1) * _G_SIGN


def E(q) -> np.ndarray:
    """``E(q) = [-q_vec, q0 I + q̂]`` (35b); shape (3, 4), or (..., 3, 4) for q of shape (..., 4)."""
    return np.take(np.asarray(q, dtype=float), _INDEX, axis=-1) * _E_SIGN


def _pure(a) -> np.ndarray:
    """The pure quaternions ``(0, a)`` of 3-vectors ``a`` (..., 3)."""
    a = np.asarray(a, dtype=float)
    return np.concatenate([np.zeros(a.shape[:-1] + (1,)), a], axis=-1)


def plus(a) -> np.ndarray:
    """``a⁺ = [[0, -aᵀ], [a, â]]`` (34) of a 3-vector ``a``; shape (4, 4) (or (..., 4, 4)).

    Skew-symmetric, with ``E(q)ᵀ a = a⁺ q`` for every ``q ∈ R⁴``, i.e. ``a⁺ = Q_l((0, a))``.

    Parameters
    ----------
    a : array_like, shape (3,) or (..., 3)
    """
    return Ql(_pure(a))


def minus(b) -> np.ndarray:
    """``b⁻ = [[0, -bᵀ], [b, -b̂]]`` (34) of a 3-vector ``b``; shape (4, 4) (or (..., 4, 4)).

    Skew-symmetric, with ``G(q)ᵀ b = b⁻ q`` for every ``q ∈ R⁴``, i.e. ``b⁻ = Q_r((0, b))``;
    paper 000 also writes it ``b̄`` (137).

    Parameters
    ----------
    b : array_like, shape (3,) or (..., 3)
    """
    return Qr(_pure(b))


def rotation_matrix(q) -> np.ndarray:
    """``R(q) = E(q) G(q)ᵀ`` (50); orthogonal for unit ``q``; shape (3, 3)."""
    return E(q) @ G(q).T


def rotate_jacobian(q, X) -> np.ndarray:
    """``∂(R(q)X)/∂q = 2 E(q) X̄`` with ``X̄ = X⁻`` (137); shape (3, 4).

    Valid for any ``q ∈ R⁴`` (``R(q) = E(q)G(q)ᵀ`` is quadratic in q), not only on S³.

    Parameters
    ----------
    q : array_like, shape (4,) or (..., 4)
        Quaternion (need not be unit).
    X : array_like, shape (3,) or (..., 3)
        Body-fixed vector.
    """
    return 2.0 * E(q) @ minus(X)


def exp_s3(theta) -> np.ndarray:
    """Unit quaternion of the rotation vector θ: ``(cos(|θ|/2), sin(|θ|/2) θ/|θ|)`` (40)."""
    theta = np.asarray(theta, dtype=float)
    angle = np.linalg.norm(theta)
    # sin(|θ|/2)/|θ| = ½ sinc(|θ|/(2π)) in numpy's normalised sinc
    return np.concatenate([[np.cos(angle / 2)], 0.5 * np.sinc(angle / (2 * np.pi)) * theta])


def exp_s3_with_jacobian(theta) -> tuple[np.ndarray, np.ndarray]:
    """:func:`exp_s3` and its derivative with respect to the rotation vector (40).

    With ``θ = |ϑ|`` and ``s(θ) = sin(θ/2)/θ``: ``e(ϑ) = (cos(θ/2), s ϑ)``,
    ``∂e0/∂ϑ = -½ sin(θ/2) ϑᵀ/θ`` and ``∂e_vec/∂ϑ = s I + (s'/θ) ϑϑᵀ`` with
    ``s'/θ = (½θ cos(θ/2) - sin(θ/2))/θ³``; Taylor series are used for ``θ < 1e-4``.
    Used to parametrize ``q^{n+1} = e(ϑ)∘q^n`` (105) by an unconstrained ϑ.

    Parameters
    ----------
    theta : array_like, shape (3,)
        Rotation vector ϑ.

    Returns
    -------
    e : ndarray, shape (4,)
        ``exp_s3(theta)`` (the value is computed by :func:`exp_s3` itself).
    D : ndarray, shape (4, 3)
        ``∂e/∂ϑ``.
    """
    theta = np.asarray(theta, dtype=float)
    a = np.linalg.norm(theta)
    if a < 1e-4:
        s = 0.5 - a**2 / 48.0
        ds_over = -1.0 / 24.0 + a**2 / 960.0
        half_sin_over = 0.25 - a**2 / 96.0  # ½ sin(a/2)/a
    else:
        s = np.sin(a / 2) / a
        ds_over = (0.5 * a * np.cos(a / 2) - np.sin(a / 2)) / a**3
        half_sin_over = 0.5 * np.sin(a / 2) / a
    D = np.empty((4, 3))
    D[0] = -half_sin_over * theta
    D[1:] = s * np.eye(3) + ds_over * np.outer(theta, theta)
    return exp_s3(theta), D


def from_rotvec(theta) -> np.ndarray:
    """Alias of :func:`exp_s3`: the unit quaternion with ``R(q) = exp(θ̂)``."""
    return exp_s3(theta)


def to_rotvec(q) -> np.ndarray:
    """Rotation vector (``|θ| ≤ π``) of the unit quaternion ``q``."""
    return log_so3(rotation_matrix(q))


def from_matrix(R) -> np.ndarray:
    """Unit quaternion with ``rotation_matrix(q) = R`` and ``q0 ≥ 0``."""
    return exp_s3(log_so3(R))


def omega_body(q, v) -> np.ndarray:
    """Convective angular velocity ``Ω = 2 G(q) v`` (43)."""
    return 2.0 * G(q) @ v


def omega_spatial(q, v) -> np.ndarray:
    """Spatial angular velocity ``ω = 2 E(q) v`` (43)."""
    return 2.0 * E(q) @ v


def velocity_from_omega_body(q, Omega) -> np.ndarray:
    """Quaternion velocity ``v = ½ G(q)ᵀ Ω`` (44); satisfies ``q·v = 0``."""
    return 0.5 * G(q).T @ Omega


def mass_matrix_4(q, J) -> np.ndarray:
    """Singular mass matrix ``M(q) = 4 G(q)ᵀ J G(q)`` (46), rank 3, ``M(q) q = 0``; shape (4, 4).

    ``J`` is the 3×3 convective inertia tensor (or its three principal values); for a stack of
    bodies, q (..., 4) and principal values J (..., 3), shape (..., 4, 4).
    """
    J = np.asarray(J, dtype=float)
    if J.shape[-1:] == (3,) and J.shape != (3, 3):
        J = J[..., :, None] * np.eye(3)
    Gq = G(q)
    return 4.0 * _transpose(Gq) @ J @ Gq


def angular_momentum(q, p) -> np.ndarray:
    """Spatial angular momentum ``L = ½ E(q) p`` of the quaternion momentum ``p`` (64)."""
    return 0.5 * E(q) @ p


class KineticParts(NamedTuple):
    """Partial derivatives of the kinetic energy (continuous or discrete) and their Jacobians.

    ``Tq, Tv`` have shape (n,); ``Tq_q, Tq_v, Tv_q, Tv_v`` shape (n, n). For the discrete
    version the derivatives are with respect to the end values ``q^{n+1}, v^{n+1}``. Returned by
    :func:`quat_grad_kinetic` and :func:`quat_dg_kinetic` for one body (n = 4) and by the
    ``grad_kinetic`` / ``dg_kinetic`` methods of every system of the Livens integrator.
    """

    Tq: np.ndarray
    Tv: np.ndarray
    Tq_q: np.ndarray
    Tq_v: np.ndarray
    Tv_q: np.ndarray
    Tv_v: np.ndarray


def quat_grad_kinetic(J, q, v) -> KineticParts:
    """Continuous ``∂_qT, ∂_vT`` of ``T = ½ Ω·JΩ``, ``Ω = 2G(q)v`` (48a,b), with Jacobians.

    ``∂_qT = -2 G(v)ᵀ J Ω`` and ``∂_vT = 2 G(q)ᵀ J Ω = M̃4(q) v``. ``J`` holds the 3 principal
    inertias. Shapes (4,) and (4, 4); for stacks of bodies (J (..., 3), q and v (..., 4)) every
    part gains the leading axes.
    """
    Gq, Gv = G(q), G(v)
    J = np.asarray(J, dtype=float)
    JGq, JGv = J[..., :, None] * Gq, J[..., :, None] * Gv
    GqT, GvT = _transpose(Gq), _transpose(Gv)
    y = J * (2.0 * _times(Gq, v))  # J Ω
    return KineticParts(
        Tq=-2.0 * _times(GvT, y),
        Tv=2.0 * _times(GqT, y),
        Tq_q=4.0 * GvT @ JGv,
        Tq_v=-2.0 * minus(y) - 4.0 * GvT @ JGq,
        Tv_q=2.0 * minus(y) - 4.0 * GqT @ JGv,
        Tv_v=4.0 * GqT @ JGq,
    )


def quat_dg_kinetic(J, q0, q1, v0, v1) -> KineticParts:
    """G-equivariant discrete derivatives of the quaternion kinetic energy (87)–(88).

    With the bilinear invariant ``Ω^k = 2G(q^k)v^k`` and ``Ω^{n+1/2} = ½(Ω^n + Ω^{n+1})``:
    ``∂̄_qT = -2 G(v^{n+1/2})ᵀ J Ω^{n+1/2}`` and ``∂̄_vT = 2 G(q^{n+1/2})ᵀ J Ω^{n+1/2}``
    (exact discrete gradient because ``T̃(Ω) = ½ Ω·JΩ`` is quadratic). Jacobians are with
    respect to ``q1, v1``. Stacks of bodies as in :func:`quat_grad_kinetic`.
    """
    qm, vm = 0.5 * (q0 + q1), 0.5 * (v0 + v1)
    G1q, G1v = G(q1), G(v1)
    Om = _times(G(q0), v0) + _times(G1q, v1)  # ½(Ω^n + Ω^{n+1})
    J = np.asarray(J, dtype=float)
    y = J * Om
    GqmT, GvmT = _transpose(G(qm)), _transpose(G(vm))
    # dΩm/dq1 = -G(v1), dΩm/dv1 = G(q1)
    JdOq, JdOv = -J[..., :, None] * G1v, J[..., :, None] * G1q
    return KineticParts(
        Tq=-2.0 * _times(GvmT, y),
        Tv=2.0 * _times(GqmT, y),
        Tq_q=-2.0 * GvmT @ JdOq,
        Tq_v=-minus(y) - 2.0 * GvmT @ JdOv,
        Tv_q=minus(y) + 2.0 * GqmT @ JdOq,
        Tv_v=2.0 * GqmT @ JdOv,
    )
