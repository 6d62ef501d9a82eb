"""Planar elastic pendulum: a point mass on a linear spring in gravity, Cartesian coordinates.

A canonical Hamiltonian system ``H(q, p) = |p|²/(2m) + V(q)`` with the non-quadratic potential
``V(q) = ½ k (|q| - l0)² + m g q₂`` (q₂ points up). It is the book's smallest non-trivial test
of discrete-gradient schemes (preliminaries chapter).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mbslib.validation import nonnegative, positive


@dataclass(frozen=True)
class ElasticPendulum:
    """Parameters: mass ``m`` [kg], stiffness ``k`` [N/m], rest length ``l0`` [m], gravity ``g`` [m/s²]."""

    m: float = 1.0
    k: float = 50.0
    l0: float = 1.0
    g: float = 9.81

    dof = 2

    def __post_init__(self):
        positive(m=self.m, k=self.k, l0=self.l0)
        nonnegative(g=self.g)

    def potential(self, q) -> float:
        r = np.linalg.norm(q)
        return 0.5 * self.k * (r - self.l0) ** 2 + self.m * self.g * q[1]

    def grad_potential(self, q) -> np.ndarray:
        r = np.linalg.norm(q)
        return self.k * (r - self.l0) * np.asarray(q) / r + np.array([0.0, self.m * self.g])

    def hess_potential(self, q) -> np.ndarray:
        q = np.asarray(q, dtype=float)
        r = np.linalg.norm(q)
        return self.k * ((1.0 - self.l0 / r) * np.eye(2) + self.l0 * np.outer(q, q) / r**3)

    def energy(self, x) -> float:
        """Total energy ``H(q, p)`` of the state ``x = (q, p)``, shape (4,)."""
        q, p = x[:2], x[2:]
        return p @ p / (2 * self.m) + self.potential(q)

    def rhs(self, t, x) -> np.ndarray:
        """Hamilton's equations ``(q̇, ṗ) = (p/m, -∇V(q))`` (for reference solutions)."""
        q, p = x[:2], x[2:]
        return np.concatenate([p / self.m, -self.grad_potential(q)])
