"""Rescaled Rodrigues parameters of rotations, batched (Baker & Gonzalez 2021, eqs. 3–5).

A rotation by the angle ``|theta|`` about ``theta/|theta|`` is the rescaled Rodrigues vector
``alpha = 2 tan(|theta|/2) theta/|theta|`` (eq. 3); ``R(alpha)`` is the Cayley map (eq. 4) and
rotations compose algebraically with eq. (5). Every function takes arrays of shape ``(..., 3)``
(or ``(..., 3, 3)``): all bodies or all time levels in one call. The explicit maps of
:mod:`mbslib.integrators.rodrigues_vi` and the systems of chapter 003 share them.

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

import numpy as np

__all__ = ["rr_matrix", "rr_compose", "rr_angle", "rr_from_rotvec", "rr_to_rotvec", "rr_from_matrix"]


def _hat(a: np.ndarray) -> np.ndarray:
    """Batched hat map ``S(a)``, shape (..., 3) -> (..., 3, 3); equals :func:`mbslib.rotations.hat` per vector."""
    S = np.zeros(a.shape[:-1] + (3, 3))
    S[..., 0, 1], S[..., 0, 2] = -a[..., 2], a[..., 1]
    S[..., 1, 0], S[..., 1, 2] = a[..., 2], -a[..., 0]
    S[..., 2, 0], S[..., 2, 1] = -a[..., 1], a[..., 0]
    return S


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
    alpha = np.asarray(alpha, dtype=float)
    S = _hat(alpha)
    c = 4.0 / (4.0 + np.sum(alpha * alpha, axis=-1))
    return np.eye(3) + c[..., None, None] * (S + 0.5 * S @ S)


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

    Returns
    -------
    ndarray, shape (..., 3)

    Raises
    ------
    ZeroDivisionError
        If ``a1·a2 == 4`` exactly (the composed rotation has angle π; measure zero).
    """
    a1 = np.asarray(a1, dtype=float)
    a2 = np.asarray(a2, dtype=float)
    den = 4.0 - np.sum(a1 * a2, axis=-1)
    if np.any(den == 0.0):
        raise ZeroDivisionError("rr_compose: composed rotation has angle exactly pi (a1·a2 = 4)")
    return (4.0 / den)[..., None] * (a1 + a2 - 0.5 * np.cross(a1, a2))


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
