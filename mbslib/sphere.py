"""The unit sphere S² (paper 004, Sect. 2): tangent projection, exponential map, parallel transport."""

from __future__ import annotations

import numpy as np

from mbslib.rotations import hat


def _unit(name: str, d, tol: float = 1e-10) -> np.ndarray:
    d = np.asarray(d, dtype=float)
    if d.shape != (3,) or abs(np.linalg.norm(d) - 1.0) > tol:
        raise ValueError(f"{name} must be a unit 3-vector, got {d}")
    return d


def tangent_projector(d) -> np.ndarray:
    """Orthogonal projector ``I - d dᵀ`` onto the tangent plane ``T_d S²``; shape (3, 3)."""
    d = _unit("d", d)
    return np.eye(3) - np.outer(d, d)


def project_tangent(d, v) -> np.ndarray:
    """Tangent part ``v - (d·v) d`` of ``v`` at ``d``."""
    d = _unit("d", d)
    v = np.asarray(v, dtype=float)
    return v - (d @ v) * d


def exp_s2(d, u) -> np.ndarray:
    """Geodesic from ``d`` with initial velocity ``u ∈ T_d S²`` at time 1: ``cos|u| d + sin|u| u/|u|``."""
    d = _unit("d", d)
    u = np.asarray(u, dtype=float)
    if abs(d @ u) > 1e-10 * max(1.0, np.linalg.norm(u)):
        raise ValueError("u must be tangent at d (d·u = 0)")
    angle = np.linalg.norm(u)
    return np.cos(angle) * d + np.sinc(angle / np.pi) * u


def log_s2(d0, d1) -> np.ndarray:
    """Tangent vector ``u`` at ``d0`` with ``exp_s2(d0, u) = d1``, ``|u|`` = geodesic distance < π."""
    d0 = _unit("d0", d0)
    d1 = _unit("d1", d1)
    w = np.cross(d0, d1)
    angle = np.arctan2(np.linalg.norm(w), d0 @ d1)
    if np.pi - angle < 1e-12:
        raise ValueError("log_s2 is undefined for antipodal points")
    direction = d1 - (d0 @ d1) * d0
    return direction / np.sinc(angle / np.pi)


def parallel_transport(d0, d1, v) -> np.ndarray:
    """Parallel transport of ``v ∈ T_{d0} S²`` along the shortest geodesic to ``d1``.

    It is the rotation about ``d0 × d1`` taking ``d0`` to ``d1``:
    ``P = I + ŵ + ŵ²/(1 + d0·d1)``, ``w = d0 × d1``; undefined for antipodal points.
    """
    d0 = _unit("d0", d0)
    d1 = _unit("d1", d1)
    c = d0 @ d1
    if 1.0 + c < 1e-12:
        raise ValueError("parallel transport between antipodal points is not unique")
    W = hat(np.cross(d0, d1))
    return (np.eye(3) + W + W @ W / (1.0 + c)) @ np.asarray(v, dtype=float)
