"""Parameter validation with errors that name the offending parameter."""

from __future__ import annotations

import numpy as np


def positive(**values: float) -> None:
    """Raise ``ValueError`` naming the first value that is not a finite positive number."""
    for name, value in values.items():
        if not (np.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be a finite positive number, got {value!r}")


def nonnegative(**values: float) -> None:
    """Raise ``ValueError`` naming the first value that is negative or not finite."""
    for name, value in values.items():
        if not (np.isfinite(value) and value >= 0):
            raise ValueError(f"{name} must be a finite non-negative number, got {value!r}")


def in_range(name: str, value: float, low: float, high: float) -> None:
    """Raise ``ValueError`` unless ``low <= value <= high``."""
    if not (np.isfinite(value) and low <= value <= high):
        raise ValueError(f"{name} must lie in [{low:g}, {high:g}], got {value!r}")


def vector(name: str, value, shape: tuple[int, ...]) -> np.ndarray:
    """Return ``value`` as a finite float array of ``shape`` or raise naming ``name``."""
    array = np.asarray(value, dtype=float)
    if array.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite, got {array}")
    return array


def inertia(name: str, J) -> np.ndarray:
    """Validate an inertia tensor: a symmetric positive-definite 3×3 matrix, or 3 principal values.

    Returns the 3×3 matrix.
    """
    J = np.asarray(J, dtype=float)
    if J.shape == (3,):
        J = np.diag(J)
    if J.shape != (3, 3):
        raise ValueError(f"{name} must be 3 principal values or a 3x3 matrix, got shape {J.shape}")
    if not np.all(np.isfinite(J)) or not np.allclose(J, J.T, rtol=0, atol=1e-12 * np.abs(J).max()):
        raise ValueError(f"{name} must be a finite symmetric matrix")
    eig = np.linalg.eigvalsh(J)
    if eig[0] <= 1e-12 * max(eig[-1], 1e-300):
        raise ValueError(f"{name} must be positive definite (eigenvalues {eig})")
    return J


def unit_quaternion(name: str, q, tol: float = 1e-10) -> np.ndarray:
    """Validate a unit quaternion (scalar first) within ``tol`` of unit norm."""
    q = vector(name, q, (4,))
    if abs(np.linalg.norm(q) - 1.0) > tol:
        raise ValueError(f"{name} must be a unit quaternion (|q| = 1 ± {tol:g}), got |q| = {np.linalg.norm(q)!r}")
    return q
