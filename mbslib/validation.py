"""Parameter validation with errors that name the offending parameter.

Numbers must be numbers: a string (``"2"``) or a boolean (``True``) is refused where a real number
or an index is expected, instead of being converted on the way and failing deep inside NumPy or
numba later.
"""

from __future__ import annotations

import numpy as np

_REAL = (int, float, np.integer, np.floating)


def _is_real(value) -> bool:
    return isinstance(value, _REAL) and not isinstance(value, (bool, np.bool_))


def real(name: str, value) -> float:
    """``value`` as a float if it is a real number (not a bool or a string), else ``ValueError``."""
    if not _is_real(value):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    return float(value)


def index(name: str, value, n: int | None = None, *, ground: bool = False) -> int | None:
    """``value`` as an int if it is an integer (not a bool, not a float such as 0.5), in ``0..n−1``
    when ``n`` is given; ``None`` passes if ``ground`` (the ground of a joint or force)."""
    if value is None and ground:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        kind = "a body index (an integer" + (", or None for the ground)" if ground else ")")
        raise ValueError(f"{name} must be {kind}, got {value!r}")
    if n is not None and not 0 <= value < n:
        raise ValueError(f"{name} = {value} is not a body index (0..{n - 1})")
    return int(value)


def positive(**values: float) -> None:
    """Raise ``ValueError`` naming the first value that is not a finite positive number."""
    for name, value in values.items():
        if not (_is_real(value) and np.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be a finite positive number, got {value!r}")


def nonnegative(**values: float) -> None:
    """Raise ``ValueError`` naming the first value that is negative or not finite."""
    for name, value in values.items():
        if not (_is_real(value) and np.isfinite(value) and value >= 0):
            raise ValueError(f"{name} must be a finite non-negative number, got {value!r}")


def in_range(name: str, value: float, low: float, high: float) -> None:
    """Raise ``ValueError`` unless ``low <= value <= high``."""
    if not (_is_real(value) and np.isfinite(value) and low <= value <= high):
        raise ValueError(f"{name} must lie in [{low:g}, {high:g}], got {value!r}")


def _numbers(name: str, value) -> np.ndarray:
    """``value`` as a float array if it holds real numbers only (no strings, no None)."""
    raw = np.asarray(value)
    if raw.dtype.kind not in "iuf":
        raise ValueError(f"{name} must hold real numbers, got {value!r}")
    return raw.astype(float)


def vector(name: str, value, shape: tuple[int, ...]) -> np.ndarray:
    """Return ``value`` as a finite float array of ``shape`` or raise naming ``name``."""
    array = _numbers(name, value)
    if array.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite, got {array}")
    return array


def inertia(name: str, J, *, rigid: bool = True) -> np.ndarray:
    """Validate an inertia tensor: a symmetric positive-definite 3×3 matrix, or 3 principal values,
    whose principal values, if ``rigid``, satisfy the triangle inequality ``J₃ ≤ J₁ + J₂`` that the
    inertia of every rigid body satisfies (equality: a flat body; to 10⁻¹² relative).

    Returns the 3×3 matrix.
    """
    J = _numbers(name, J)
    if J.shape == (3,):
        J = np.diag(J)
    if J.shape != (3, 3):
        raise ValueError(f"{name} must be 3 principal values or a 3x3 matrix, got shape {J.shape}")
    if not np.all(np.isfinite(J)) or not np.allclose(J, J.T, rtol=0, atol=1e-12 * np.abs(J).max()):
        raise ValueError(f"{name} must be a finite symmetric matrix")
    eig = np.linalg.eigvalsh(J)
    if eig[0] <= 1e-12 * max(eig[-1], 1e-300):
        raise ValueError(f"{name} must be positive definite (eigenvalues {eig})")
    if rigid and eig[2] > (eig[0] + eig[1]) * (1.0 + 1e-12):
        raise ValueError(f"{name} has principal values {eig}, which no rigid body has: they violate the triangle "
                         f"inequality J3 <= J1 + J2 ({eig[2]:.6g} > {eig[0] + eig[1]:.6g}; equality is a flat body)")
    return J


def unit_quaternion(name: str, q, tol: float = 1e-10) -> np.ndarray:
    """Validate a unit quaternion (scalar first) within ``tol`` of unit norm."""
    q = vector(name, q, (4,))
    if abs(np.linalg.norm(q) - 1.0) > tol:
        raise ValueError(f"{name} must be a unit quaternion (|q| = 1 ± {tol:g}), got |q| = {np.linalg.norm(q)!r}")
    return q
