"""One-step schemes for canonical Hamiltonian systems ``H(q, p) = ½ p·p/m + V(q)``.

The state is ``x = (q, p)``. Both schemes are implicit and share the kinematic equation
``q^{n+1} - q^n = h p^{n+½}/m``; they differ only in the force:

- **midpoint rule**: ``p^{n+1} - p^n = -h ∇V(q^{n+½})`` — symplectic, second order, energy
  error bounded but not zero for non-quadratic V;
- **discrete-gradient (Gonzalez) scheme**: ``p^{n+1} - p^n = -h ∇̄V(q^n, q^{n+1})`` — second
  order and energy-conserving: ``H^{n+1} - H^n = 0`` by directionality of ∇̄V, up to the
  residual left by Newton's method (``tol``), so round-off needs ``tol`` near round-off.

The system is a :class:`CanonicalSystem` (for example
:class:`mbslib.systems.elastic_pendulum.ElasticPendulum`).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from mbslib.discrete_gradients import dg_gonzalez, dg_gonzalez_jacobian
from mbslib.newton import TOL, NewtonReport, newton_solve
from mbslib.validation import positive


@runtime_checkable
class CanonicalSystem(Protocol):
    """A point mass ``m`` in ``dof`` Cartesian coordinates under a potential ``V(q)``:
    ``H(q, p) = ½ p·p/m + V(q)``, state ``x = (q, p)`` of shape (2 dof,).

    Attributes
    ----------
    m : float
        The mass, the same in every coordinate.
    dof : int
        Number of coordinates q.
    """

    m: float
    dof: int

    def potential(self, q: np.ndarray) -> float:
        """``V(q)`` (the discrete gradient's difference quotient)."""
        ...

    def grad_potential(self, q: np.ndarray) -> np.ndarray:
        """``∇V(q)``, shape (dof,)."""
        ...

    def hess_potential(self, q: np.ndarray) -> np.ndarray:
        """``∇²V(q)``, shape (dof, dof) (the Newton matrices)."""
        ...


def _split(system: CanonicalSystem, x):
    return x[: system.dof], x[system.dof :]


def _residual(system: CanonicalSystem, x0, x1, h, force):
    q0, p0 = _split(system, x0)
    q1, p1 = _split(system, x1)
    return np.concatenate([q1 - q0 - h * 0.5 * (p0 + p1) / system.m, p1 - p0 + h * force])


def _jacobian(system: CanonicalSystem, h, dforce_dq1):
    n = system.dof
    eye = np.eye(n)
    return np.block([[eye, -0.5 * h / system.m * eye], [h * dforce_dq1, eye]])


def residual_dg(system: CanonicalSystem, x0, x1, h) -> np.ndarray:
    """Residual of the discrete-gradient scheme, shape (2 dof,)."""
    q0, q1 = x0[: system.dof], x1[: system.dof]
    return _residual(system, x0, x1, h, dg_gonzalez(system.potential, system.grad_potential, q0, q1))


def jacobian_dg(system: CanonicalSystem, x0, x1, h) -> np.ndarray:
    """∂(residual_dg)/∂x1, with the analytic derivative of the Gonzalez gradient."""
    q0, q1 = x0[: system.dof], x1[: system.dof]
    dforce = dg_gonzalez_jacobian(system.potential, system.grad_potential, system.hess_potential, q0, q1)
    return _jacobian(system, h, dforce)


def residual_midpoint(system: CanonicalSystem, x0, x1, h) -> np.ndarray:
    """Residual of the implicit midpoint rule, shape (2 dof,)."""
    q_mid = 0.5 * (x0[: system.dof] + x1[: system.dof])
    return _residual(system, x0, x1, h, system.grad_potential(q_mid))


def jacobian_midpoint(system: CanonicalSystem, x0, x1, h) -> np.ndarray:
    """∂(residual_midpoint)/∂x1."""
    q_mid = 0.5 * (x0[: system.dof] + x1[: system.dof])
    return _jacobian(system, h, 0.5 * system.hess_potential(q_mid))


def step_dg(system: CanonicalSystem, x0, h, t=0.0, tol=TOL) -> tuple[np.ndarray, NewtonReport]:
    """One step of the energy-conserving discrete-gradient scheme from ``x0`` (Newton from ``x0``)."""
    positive(h=h)
    return newton_solve(lambda x1: residual_dg(system, x0, x1, h), x0,
                        lambda x1: jacobian_dg(system, x0, x1, h), tol=tol, t=t)


def step_midpoint(system: CanonicalSystem, x0, h, t=0.0, tol=TOL) -> tuple[np.ndarray, NewtonReport]:
    """One step of the implicit midpoint rule from ``x0``."""
    positive(h=h)
    return newton_solve(lambda x1: residual_midpoint(system, x0, x1, h), x0,
                        lambda x1: jacobian_midpoint(system, x0, x1, h), tol=tol, t=t)
