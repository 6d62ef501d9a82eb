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

import numba
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


@numba.njit(cache=True)
def _exp_s3_with_jacobian(theta):
    """:func:`exp_s3_with_jacobian` compiled, the value by :func:`exp_s3`'s formula."""
    a = np.linalg.norm(theta)
    e = np.empty(4)
    e[0] = np.cos(a / 2)
    e[1:] = 0.5 * np.sinc(a / (2 * np.pi)) * theta
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
    return e, D


def exp_s3_with_jacobian(theta) -> tuple[np.ndarray, np.ndarray]:
    """:func:`exp_s3` and its derivative with respect to the rotation vector (40).

    With ``θ = |ϑ|`` and ``s(θ) = sin(θ/2)/θ``: ``e(ϑ) = (cos(θ/2), s ϑ)``,
    ``∂e0/∂ϑ = -½ sin(θ/2) ϑᵀ/θ`` and ``∂e_vec/∂ϑ = s I + (s'/θ) ϑϑᵀ`` with
    ``s'/θ = (½θ cos(θ/2) - sin(θ/2))/θ³``; Taylor series are used for ``θ < 1e-4``.
    Used to parametrize ``q^{n+1} = e(ϑ)∘q^n`` (105) by an unconstrained ϑ; compiled, so that
    Null-EML's compiled residual calls it.

    Parameters
    ----------
    theta : array_like, shape (3,)
        Rotation vector ϑ.

    Returns
    -------
    e : ndarray, shape (4,)
        ``exp_s3(theta)`` (by its formula).
    D : ndarray, shape (4, 3)
        ``∂e/∂ϑ``.
    """
    return _exp_s3_with_jacobian(np.asarray(theta, dtype=float))


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


@numba.njit(cache=True)
def _put_G(q, out):
    """``out = G(q) = [-q_vec, q0 I - q̂]`` (35a), (3, 4): :func:`G` inside compiled loops."""
    out[0, 0], out[0, 1], out[0, 2], out[0, 3] = -q[1], q[0], q[3], -q[2]
    out[1, 0], out[1, 1], out[1, 2], out[1, 3] = -q[2], -q[3], q[0], q[1]
    out[2, 0], out[2, 1], out[2, 2], out[2, 3] = -q[3], q[2], -q[1], q[0]


@numba.njit(cache=True)
def _put_E(q, out):
    """``out = E(q) = [-q_vec, q0 I + q̂]`` (35b), (3, 4): :func:`E` inside compiled loops."""
    out[0, 0], out[0, 1], out[0, 2], out[0, 3] = -q[1], q[0], -q[3], q[2]
    out[1, 0], out[1, 1], out[1, 2], out[1, 3] = -q[2], q[3], q[0], -q[1]
    out[2, 0], out[2, 1], out[2, 2], out[2, 3] = -q[3], -q[2], q[1], q[0]


@numba.njit(cache=True)
def _Ql(a):
    """``Q_l(a) = [a, G(a)ᵀ]`` (33a), (4, 4): :func:`Ql` inside compiled code."""
    Ga, out = np.empty((3, 4)), np.empty((4, 4))
    _put_G(a, Ga)
    out[:, 0], out[:, 1:] = a, Ga.T
    return out


@numba.njit(cache=True)
def _Qr(b):
    """``Q_r(b) = [b, E(b)ᵀ]`` (33b), (4, 4): :func:`Qr` inside compiled code."""
    Eb, out = np.empty((3, 4)), np.empty((4, 4))
    _put_E(b, Eb)
    out[:, 0], out[:, 1:] = b, Eb.T
    return out


@numba.njit(cache=True)
def _put_minus(b, out):
    """``out = b⁻ = [[0, -bᵀ], [b, -b̂]]`` (34), (4, 4): :func:`minus` inside compiled loops."""
    out[0, 0], out[0, 1], out[0, 2], out[0, 3] = 0.0, -b[0], -b[1], -b[2]
    out[1, 0], out[1, 1], out[1, 2], out[1, 3] = b[0], 0.0, b[2], -b[1]
    out[2, 0], out[2, 1], out[2, 2], out[2, 3] = b[1], -b[2], 0.0, b[0]
    out[3, 0], out[3, 1], out[3, 2], out[3, 3] = b[2], b[1], -b[0], 0.0


@numba.njit(cache=True)
def _dot(A, i, B, j):
    """``Σ_k A[k, i] B[k, j]``: column i of A against column j of B (a column of Aᵀ B)."""
    acc = 0.0
    for k in range(A.shape[0]):
        acc += A[k, i] * B[k, j]
    return acc


@numba.njit(cache=True)
def _kinetic_blocks(Jp, q0, q1, v0, v1):
    """The discrete derivatives (87)–(88) of the kinetic energy of N bodies and their Jacobians in
    ``q1, v1`` (:func:`quat_dg_kinetic`): ``Tq, Tv`` (N, 4) and ``Tq_q, Tq_v, Tv_q, Tv_v``
    (N, 4, 4), for principal inertias ``Jp`` (N, 3) and quaternions and their rates (N, 4)."""
    N = Jp.shape[0]
    Tq, Tv = np.empty((N, 4)), np.empty((N, 4))
    Tq_q, Tq_v, Tv_q, Tv_v = np.empty((N, 4, 4)), np.empty((N, 4, 4)), np.empty((N, 4, 4)), np.empty((N, 4, 4))
    G0, G1q, G1v, Gqm, Gvm = np.empty((3, 4)), np.empty((3, 4)), np.empty((3, 4)), np.empty((3, 4)), np.empty((3, 4))
    JG1q, JG1v = np.empty((3, 4)), np.empty((3, 4))  # J dΩ/dv1 = J G(q1), -J dΩ/dq1 = J G(v1)
    qm, vm, y, y_minus = np.empty(4), np.empty(4), np.empty((3, 1)), np.empty((4, 4))
    for a in range(N):
        for j in range(4):
            qm[j], vm[j] = 0.5 * (q0[a, j] + q1[a, j]), 0.5 * (v0[a, j] + v1[a, j])
        _put_G(q0[a], G0)
        _put_G(q1[a], G1q)
        _put_G(v1[a], G1v)
        _put_G(qm, Gqm)
        _put_G(vm, Gvm)
        for k in range(3):
            Om = 0.0  # ½(Ω^n + Ω^{n+1}) = G(q0)v0 + G(q1)v1, v the quaternion rates
            for j in range(4):
                Om += G0[k, j] * v0[a, j] + G1q[k, j] * v1[a, j]
                JG1q[k, j], JG1v[k, j] = Jp[a, k] * G1q[k, j], Jp[a, k] * G1v[k, j]
            y[k, 0] = Jp[a, k] * Om
        _put_minus(y[:, 0], y_minus)
        for i in range(4):
            Tq[a, i] = -2.0 * _dot(Gvm, i, y, 0)  # ∂̄_qT = -2 G(v^{n+1/2})ᵀ J Ω^{n+1/2}
            Tv[a, i] = 2.0 * _dot(Gqm, i, y, 0)  # ∂̄_vT = 2 G(q^{n+1/2})ᵀ J Ω^{n+1/2}
            for j in range(4):
                Tq_q[a, i, j] = 2.0 * _dot(Gvm, i, JG1v, j)
                Tq_v[a, i, j] = -y_minus[i, j] - 2.0 * _dot(Gvm, i, JG1q, j)
                Tv_q[a, i, j] = y_minus[i, j] - 2.0 * _dot(Gqm, i, JG1v, j)
                Tv_v[a, i, j] = 2.0 * _dot(Gqm, i, JG1q, j)
    return Tq, Tv, Tq_q, Tq_v, Tv_q, Tv_v


def _kinetic_parts(J, q0, q1, v0, v1, scale) -> KineticParts:
    """:func:`_kinetic_blocks` of one body or a stack (leading axes kept), Jacobians times ``scale``."""
    J, q0, q1, v0, v1 = (np.asarray(x, dtype=float) for x in (J, q0, q1, v0, v1))
    if J.ndim == q0.ndim == q1.ndim == v0.ndim == v1.ndim == 1:  # one body: no broadcasting
        Tq, Tv, *jacobians = _kinetic_blocks(*(x.reshape(1, -1) for x in (J, q0, q1, v0, v1)))
        return KineticParts(Tq[0], Tv[0], *(scale * A[0] for A in jacobians))
    lead = np.broadcast_shapes(J.shape[:-1], *(np.shape(x)[:-1] for x in (q0, q1, v0, v1)))
    stack = [np.ascontiguousarray(np.broadcast_to(x, lead + x.shape[-1:])).reshape(-1, x.shape[-1])
             for x in (J, q0, q1, v0, v1)]
    Tq, Tv, *jacobians = _kinetic_blocks(*stack)
    return KineticParts(Tq.reshape(lead + (4,)), Tv.reshape(lead + (4,)),
                        *(scale * A.reshape(lead + (4, 4)) for A in jacobians))


def quat_grad_kinetic(J, q, v) -> KineticParts:
    """Continuous ``∂_qT, ∂_vT`` of ``T = ½ Ω·JΩ``, ``Ω = 2G(q)v`` (48a,b), with Jacobians.

    ``∂_qT = -2 G(v)ᵀ J Ω`` and ``∂_vT = 2 G(q)ᵀ J Ω = M̃4(q) v``. ``J`` holds the 3 principal
    inertias. Shapes (4,) and (4, 4); for stacks of bodies (J (..., 3), q and v (..., 4)) every
    part gains the leading axes. These are the discrete derivatives of :func:`quat_dg_kinetic`
    with equal ends, whose Jacobians in one end are half the continuous ones.
    """
    return _kinetic_parts(J, q, q, v, v, 2.0)


def quat_dg_kinetic(J, q0, q1, v0, v1) -> KineticParts:
    """G-equivariant discrete derivatives of the quaternion kinetic energy (87)–(88).

    With the bilinear invariant ``Ω^k = 2G(q^k)v^k`` and ``Ω^{n+1/2} = ½(Ω^n + Ω^{n+1})``:
    ``∂̄_qT = -2 G(v^{n+1/2})ᵀ J Ω^{n+1/2}`` and ``∂̄_vT = 2 G(q^{n+1/2})ᵀ J Ω^{n+1/2}``
    (exact discrete gradient because ``T̃(Ω) = ½ Ω·JΩ`` is quadratic). Jacobians are with
    respect to ``q1, v1`` (``dΩ^{n+1/2}/dq1 = -G(v1)``, ``dΩ^{n+1/2}/dv1 = G(q1)``). Stacks of
    bodies as in :func:`quat_grad_kinetic`; compiled, body by body.
    """
    return _kinetic_parts(J, q0, q1, v0, v1, 1.0)
