"""Discrete gradients.

A discrete gradient ``∇̄f(x, y)`` of ``f: Rⁿ → R`` satisfies

- directionality: ``∇̄f(x, y)·(y - x) = f(y) - f(x)`` (paper 000, eq. 69), and
- consistency: ``∇̄f(x, x) = ∇f(x)`` (eq. 70).

Replacing ∇f by ∇̄f in a midpoint-type scheme makes the energy balance exact, which is the
mechanism of every energy–momentum scheme in this book.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

Scalar = Callable[[np.ndarray], float]
Gradient = Callable[[np.ndarray], np.ndarray]


def _is_tiny(dx: np.ndarray, x: np.ndarray) -> bool:
    """True when the increment is so small that the Gonzalez correction is round-off."""
    return bool(dx @ dx <= 1e-14 * (1.0 + x @ x))


def dg_gonzalez(f: Scalar, grad_f: Gradient, x, y) -> np.ndarray:
    """Gonzalez' midpoint discrete gradient (paper 000, eq. 71).

    ``∇̄f(x, y) = ∇f(x̄) + [f(y) - f(x) - ∇f(x̄)·Δ] / |Δ|² Δ``, with ``x̄ = (x + y)/2``, ``Δ = y - x``.
    For ``|Δ|² ≤ 1e-14 (1 + |x|²)`` the correction is below round-off and ``∇f(x̄)`` is returned.
    For quadratic ``f`` the correction vanishes identically.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    dx = y - x
    g = np.asarray(grad_f(0.5 * (x + y)), dtype=float)
    if _is_tiny(dx, x):
        return g
    return g + (f(y) - f(x) - g @ dx) / (dx @ dx) * dx


def dg_gonzalez_jacobian(f: Scalar, grad_f: Gradient, hess_f: Callable, x, y) -> np.ndarray:
    """Derivative ``∂∇̄f(x, y)/∂y`` of the Gonzalez discrete gradient; shape (n, n).

    With ``g = ∇f(x̄)``, ``Δ = y - x``, ``N = f(y) - f(x) - g·Δ`` and ``c = N/|Δ|²``:
    ``∂∇̄f/∂y = ½ H(x̄) + c I + Δ ⊗ [(∇f(y) - g - ½ H(x̄) Δ)/|Δ|² - 2 c Δ/|Δ|²]``,
    and ``½ H(x̄)`` on the small-increment branch of :func:`dg_gonzalez`. This is the block an
    implicit discrete-gradient scheme needs for its analytic Newton Jacobian.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    dx = y - x
    mid = 0.5 * (x + y)
    half_H = 0.5 * np.asarray(hess_f(mid), dtype=float)
    if _is_tiny(dx, x):
        return half_H
    g = np.asarray(grad_f(mid), dtype=float)
    d2 = dx @ dx
    c = (f(y) - f(x) - g @ dx) / d2
    dc_dy = (np.asarray(grad_f(y), dtype=float) - g - half_H @ dx) / d2 - 2.0 * c * dx / d2
    return half_H + c * np.eye(dx.size) + np.outer(dx, dc_dy)


_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(4)


def dg_avf(grad_f: Gradient, x, y, nodes: int = 4) -> np.ndarray:
    """Average-vector-field discrete gradient ``∫₀¹ ∇f(x + s(y - x)) ds``.

    Gauss–Legendre quadrature with ``nodes`` points: exact (directional) for polynomial ``f``
    of degree ≤ 2·nodes; for other ``f`` directionality holds to quadrature accuracy.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if nodes == 4:
        s, w = _GL_NODES, _GL_WEIGHTS
    else:
        s, w = np.polynomial.legendre.leggauss(nodes)
    s = 0.5 * (s + 1.0)
    return 0.5 * sum(wi * np.asarray(grad_f(x + si * (y - x)), dtype=float) for si, wi in zip(s, w, strict=True))


def dg_partitioned(f: Callable, grad_1: Callable, grad_2: Callable, x1, x2, y1, y2):
    """Partitioned discrete gradient of ``f(x1, x2)`` between ``(x1, x2)`` and ``(y1, y2)``.

    Each block is the mean of two Gonzalez discrete gradients with the other block frozen at
    either end (paper 000, App. A as rebuilt in the spec):
    ``∇̄₁ = ½[∇̄₁f(·, x2)(x1, y1) + ∇̄₁f(·, y2)(x1, y1)]`` and likewise ``∇̄₂``. Together they satisfy
    ``∇̄₁·(y1 - x1) + ∇̄₂·(y2 - x2) = f(y1, y2) - f(x1, x2)``.

    ``grad_1(a, b)`` and ``grad_2(a, b)`` are the partial gradients of ``f(a, b)``.
    Returns ``(g1, g2)``.
    """

    def block_1(b):
        return dg_gonzalez(lambda a: f(a, b), lambda a: grad_1(a, b), x1, y1)

    def block_2(a):
        return dg_gonzalez(lambda b: f(a, b), lambda b: grad_2(a, b), x2, y2)

    return 0.5 * (block_1(x2) + block_1(y2)), 0.5 * (block_2(x1) + block_2(y1))


def dg_invariant(f_tilde: Callable, grad_f_tilde: Callable, pi: Callable, jac_pi: Callable, x, y) -> np.ndarray:
    """Invariant-based (G-equivariant) discrete gradient of ``f(x) = f̃(π(x))`` (Gonzalez 1996).

    For a quadratic invariant map ``π: Rⁿ → Rᵏ``, ``π(y) - π(x) = Dπ(x̄)(y - x)`` exactly, so
    ``∇̄f(x, y) = Dπ(x̄)ᵀ ∇̄f̃(π(x), π(y))`` is directional; it inherits every symmetry of π.
    ``jac_pi(x)`` returns ``Dπ(x)`` with shape (k, n).
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    pi_x, pi_y = np.atleast_1d(pi(x)), np.atleast_1d(pi(y))
    g_tilde = dg_gonzalez(
        lambda s: f_tilde(s), lambda s: np.atleast_1d(grad_f_tilde(s)), pi_x, pi_y
    )
    return np.atleast_2d(jac_pi(0.5 * (x + y))).T @ g_tilde
