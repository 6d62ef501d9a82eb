"""Rescaled Rodrigues parameters of rotations, batched (Baker & Gonzalez 2021, eqs. 3–5).

A rotation by the angle ``|theta|`` about ``theta/|theta|`` is the rescaled Rodrigues vector
``alpha = 2 tan(|theta|/2) theta/|theta|`` (eq. 3); ``R(alpha)`` is the Cayley map (eq. 4) and
rotations compose algebraically with eq. (5). Every function takes arrays of shape ``(..., 3)``
(or ``(..., 3, 3)``): all bodies or all time levels in one call. The explicit maps of
:mod:`mbslib.integrators.rodrigues_vi` and the systems of chapter 003 share them; eqs. (4) and (5)
are written once, in the compiled :func:`matrices` and :func:`compose` that the batched functions,
the maps and the torus's kernels call.

Relation to :mod:`mbslib.rotations`. The rescaled Rodrigues vector is twice the Gibbs vector,
i.e. the Cayley parameters of :func:`mbslib.rotations.cayley_so3`. The ``rr_*`` functions here
are the *batched* (shape ``(..., 3)``) counterparts of the single-vector shared functions, kept
because the maps, the diagnostics and the torus act on all bodies or all time levels at once
(``rr_matrix`` of a 10^4-step trajectory is one vectorised call instead of 10^4 Python calls):

=====================================  =====================================================
here (batched, paper numbering)        :mod:`mbslib.rotations` (one vector)
=====================================  =====================================================
``_hat(a)``                            ``hat(a)``
``rr_matrix(alpha)``  (eq. 4)          ``cayley_so3(alpha)``
``rr_compose(a1, a2)`` (eq. 5)         ``cayley_compose(a2, a1)``  -- **arguments swapped**
``rr_from_rotvec(theta)`` (eq. 3)      ``rotvec_to_cayley(theta)`` (which rejects ``|θ| >= π``)
``rr_from_matrix(R)``                  ``cayley_inv_so3(R)``
=====================================  =====================================================

The swap in the composition is the paper's convention: eq. (5) ``α1 ⊕ α2`` gives
``R(α1 ⊕ α2) = R(α2) R(α1)`` (α1 acts first, α2 is a spatial increment; the paper leaves the order
unstated), while ``cayley_compose(a, b)`` returns the parameters of ``cay(a) cay(b)``. Hence
``rr_compose(a, b) == cayley_compose(b, a)``; ``tests/test_rodrigues_vi.py`` pins every row of
this table.

They are a module of their own rather than part of :mod:`mbslib.rotations`, whose functions take
one vector and follow the composition order ``cay(a) cay(b)``: side by side, two functions for
each map with opposite argument orders would invite the wrong one.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["rr_matrix", "rr_compose", "matrices", "compose", "rr_angle", "rr_from_rotvec", "rr_to_rotvec",
           "rr_from_matrix"]


def _hat(a: np.ndarray) -> np.ndarray:
    """Batched hat map ``S(a)``, shape (..., 3) -> (..., 3, 3); equals :func:`mbslib.rotations.hat` per vector."""
    S = np.zeros(a.shape[:-1] + (3, 3))
    S[..., 0, 1], S[..., 0, 2] = -a[..., 2], a[..., 1]
    S[..., 1, 0], S[..., 1, 2] = a[..., 2], -a[..., 0]
    S[..., 2, 0], S[..., 2, 1] = -a[..., 1], a[..., 0]
    return S


# The formulas of eqs. (4) and (5) exist once, compiled: the batched functions below, the explicit
# maps of mbslib.integrators.rodrigues_vi and the torus kernels call the same two functions.


@numba.njit(cache=True, inline="always")
def matrices(alpha, R):
    """Eq. (4) for the rows of ``alpha`` (shape (N, 3)) into ``R`` (shape (N, 3, 3)):
    ``R = I + c (S + S²/2)`` with ``c = 4/(4+|α|²)`` and ``S² = α αᵀ − |α|² I``."""
    for k in range(alpha.shape[0]):
        a0, a1, a2 = alpha[k, 0], alpha[k, 1], alpha[k, 2]
        c = 4.0 / (4.0 + a0 * a0 + a1 * a1 + a2 * a2)
        aa = a0 * a0 + a1 * a1 + a2 * a2
        R[k, 0, 0] = 1.0 + 0.5 * c * (a0 * a0 - aa)
        R[k, 1, 1] = 1.0 + 0.5 * c * (a1 * a1 - aa)
        R[k, 2, 2] = 1.0 + 0.5 * c * (a2 * a2 - aa)
        R[k, 0, 1] = c * (-a2 + 0.5 * a0 * a1)
        R[k, 1, 0] = c * (a2 + 0.5 * a0 * a1)
        R[k, 0, 2] = c * (a1 + 0.5 * a0 * a2)
        R[k, 2, 0] = c * (-a1 + 0.5 * a0 * a2)
        R[k, 1, 2] = c * (-a0 + 0.5 * a1 * a2)
        R[k, 2, 1] = c * (a0 + 0.5 * a1 * a2)


@numba.njit(cache=True, inline="always")
def compose(a0, a1, a2, b0, b1, b2):
    """Eq. (5) for one pair: ``a ⊕ b = 4/(4 − a·b) [a + b − a×b/2]``, ``R(a ⊕ b) = R(b) R(a)``."""
    den = 4.0 / (4.0 - (a0 * b0 + a1 * b1 + a2 * b2))
    return (den * (a0 + b0 - 0.5 * (a1 * b2 - a2 * b1)),
            den * (a1 + b1 - 0.5 * (a2 * b0 - a0 * b2)),
            den * (a2 + b2 - 0.5 * (a0 * b1 - a1 * b0)))


@numba.njit(cache=True)
def _compose_rows(a, b, out):
    for k in range(a.shape[0]):
        out[k, 0], out[k, 1], out[k, 2] = compose(a[k, 0], a[k, 1], a[k, 2], b[k, 0], b[k, 1], b[k, 2])


def _rows(*arrays):
    """The arrays broadcast against each other, as C-contiguous (N, 3) rows, and their common shape."""
    arrays = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in arrays))
    if arrays[0].shape[-1:] != (3,):
        raise ValueError(f"rescaled Rodrigues vectors must have shape (..., 3), got {arrays[0].shape}")
    return [np.ascontiguousarray(a.reshape(-1, 3)) for a in arrays], arrays[0].shape


def rr_matrix(alpha) -> np.ndarray:
    """Rotation matrix of rescaled Rodrigues vectors, paper eq. (4).

    ``R(alpha) = I + 4/(4+|alpha|^2) [S(alpha) + S(alpha)^2/2]``, identical to the Cayley map
    ``(I - S/2)^{-1}(I + S/2)``: the batched form of :func:`mbslib.rotations.cayley_so3`.

    Parameters
    ----------
    alpha : array_like, shape (..., 3)

    Returns
    -------
    R : ndarray, shape (..., 3, 3)
    """
    (rows,), shape = _rows(alpha)
    R = np.empty((rows.shape[0], 3, 3))
    matrices(rows, R)
    return R.reshape(shape + (3,))


def rr_compose(a1, a2) -> np.ndarray:
    """Composition of rescaled Rodrigues vectors, paper eq. (5), batched.

    ``a1 ⊕ a2 = 4/(4 - a1·a2) [a1 + a2 - a1×a2/2]`` with ``R(a1 ⊕ a2) = R(a2) R(a1)``: ``a1`` acts
    first and ``a2`` is a spatial (left) increment (the paper leaves the order unstated; the other
    order is wrong by O(1)).
    In the map ``α_{k+1} = α_k ⊕ Δα_k`` (eq. 23b) this is ``R_{k+1} = R(Δα_k) R_k``.

    Relation to the shared single-vector function: ``cayley_compose(a, b)`` of
    :mod:`mbslib.rotations` gives the parameters of ``cay(a) cay(b)``, so

        ``rr_compose(a1, a2) == cayley_compose(a2, a1)``

    (the arguments are swapped; pinned by ``tests/test_rodrigues_vi.py``).

    Parameters
    ----------
    a1, a2 : array_like, shape (..., 3)
        Broadcast against each other.

    Returns
    -------
    ndarray, shape (..., 3)

    Raises
    ------
    ZeroDivisionError
        If ``a1·a2 == 4`` exactly (the composed rotation has angle π; measure zero).
    """
    (a, b), shape = _rows(a1, a2)
    if np.any(np.sum(a * b, axis=-1) == 4.0):
        raise ZeroDivisionError("rr_compose: composed rotation has angle exactly pi (a1·a2 = 4)")
    out = np.empty_like(a)
    _compose_rows(a, b, out)
    return out.reshape(shape)


def rr_angle(alpha) -> np.ndarray:
    """Rotation angle ``|theta| = 2 arctan(|alpha|/2) = ||log R||_F / sqrt 2``, shape (...)."""
    return 2.0 * np.arctan(0.5 * np.linalg.norm(np.asarray(alpha, dtype=float), axis=-1))


def rr_from_rotvec(theta) -> np.ndarray:
    """Rotation vector -> rescaled Rodrigues vector, eq. (3): ``alpha = 2 tan(|theta|/2) theta/|theta|``.

    Batched form of :func:`mbslib.rotations.rotvec_to_cayley`; unlike it, angles beyond π are
    accepted (they map to the same rotation). Shapes (..., 3) -> (..., 3).
    """
    theta = np.asarray(theta, dtype=float)
    t = np.linalg.norm(theta, axis=-1)
    safe = np.where(t > 1e-8, t, 1.0)
    factor = np.where(t > 1e-8, 2.0 * np.tan(0.5 * t) / safe, 1.0 + t * t / 12.0)
    return factor[..., None] * theta


def rr_to_rotvec(alpha) -> np.ndarray:
    """Rescaled Rodrigues vector -> rotation vector, ``theta = 2 arctan(|alpha|/2) alpha/|alpha|``."""
    alpha = np.asarray(alpha, dtype=float)
    a = np.linalg.norm(alpha, axis=-1)
    safe = np.where(a > 1e-8, a, 1.0)
    factor = np.where(a > 1e-8, 2.0 * np.arctan(0.5 * a) / safe, 1.0 - a * a / 12.0)
    return factor[..., None] * alpha


def rr_from_matrix(R) -> np.ndarray:
    """Inverse of eq. (4): ``alpha = 2 vee(R - R^T)/(1 + tr R)`` (singular at angle π), shape (..., 3).

    Batched form of :func:`mbslib.rotations.cayley_inv_so3`.
    """
    R = np.asarray(R, dtype=float)
    W = R - np.swapaxes(R, -1, -2)
    w = np.stack([W[..., 2, 1], W[..., 0, 2], W[..., 1, 0]], axis=-1)
    return 2.0 * w / (1.0 + np.trace(R, axis1=-2, axis2=-1))[..., None]
