"""Mechanical systems for Livens' principle with singular, configuration-dependent mass matrices.

Paper 000 (Kinon & Betsch, *Multibody System Dynamics* 2024), Sect. 5. Every system is a frozen
dataclass, validated on construction, whose methods are pure functions of the state. Coordinates
``q`` (n,), velocities ``v`` (n,), momenta ``p`` (n,) and multipliers ``lam`` (m,) are independent
(Livens / Hamilton–Pontryagin form, paper eqs. 19a–d).

Interface used by :mod:`mbslib.integrators.livens` (all arrays float64):

``n, m``
    Number of coordinates and of holonomic constraints.
``mass_matrix(q)``, ``kinetic_energy(q, v)``, ``potential(q)``
    The mass matrix (n, n) and the two energies.
``grad_kinetic(q, v)`` -> ``KineticParts``
    Continuous ``∂_qT, ∂_vT`` and their derivatives with respect to ``q`` and ``v``.
``dg_kinetic(q0, q1, v0, v1)`` -> ``KineticParts``
    Discrete partial derivatives ``∂̄_qT, ∂̄_vT`` (App. A / eq. 87) and their derivatives with
    respect to the end values ``q1, v1``.
``grad_potential(q)``, ``hess_potential(q)``, ``dg_potential(q0, q1)``
    ∇V, ∇²V, and the discrete gradient with its derivative, ``(∇̄V, ∂∇̄V/∂q1)``.
``constraint(q)`` (m,), ``constraint_jacobian(q)`` (m, n), ``constraint_hessian(q, lam)`` (n, n)
    ``Σ_k lam_k ∇²g_k``. All constraints of the paper are quadratic, so their Gonzalez discrete
    gradient is the midpoint Jacobian ``∇g(q^{n+1/2})`` exactly (Sect. 4).
``external_force(q, v, t)``
    The applied force and its derivatives ``(f, ∂f/∂q, ∂f/∂v)``, or ``None`` when there is none.
``quaternion_slices``
    Slices of ``q`` that are unit quaternions (for the antipodal-branch guard).

The kinetic-energy derivatives of one quaternion rigid body,
:func:`mbslib.quaternions.quat_grad_kinetic` and :func:`~mbslib.quaternions.quat_dg_kinetic`
(returning :class:`~mbslib.quaternions.KineticParts`), are summed by the multibody loop. The
quaternion matrices ``a⁺, b⁻`` (34) and ``∂(R(q)X)/∂q`` (137) are :func:`mbslib.quaternions.plus`,
:func:`~mbslib.quaternions.minus` and :func:`~mbslib.quaternions.rotate_jacobian`; the Gonzalez
discrete gradient and its Jacobian are :func:`mbslib.discrete_gradients.dg_gonzalez` and
:func:`~mbslib.discrete_gradients.dg_gonzalez_jacobian`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from mbslib.discrete_gradients import dg_gonzalez, dg_gonzalez_jacobian
from mbslib.quaternions import (
    E,
    G,
    KineticParts,
    angular_momentum,
    mass_matrix_4,
    quat_dg_kinetic,
    quat_grad_kinetic,
)
from mbslib.systems.heavy_top import Cone, steady_precession_spin
from mbslib.validation import in_range, positive, unit_quaternion, vector


def _unit_constraint_parts(q):
    """Unit-norm constraint ``g = ½(q·q - 1)`` (30) and its gradient ``qᵀ``."""
    return 0.5 * (q @ q - 1.0), q


# ---------------------------------------------------------------------------------------------
# 5.1 mass–spring system with redundant coordinates
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MassSpring:
    """Two masses and two nonlinear springs in redundant coordinates ``q = [x1, q2, x2]`` (106).

    Constant singular mass matrix (108), potential ``V = c k_i (x_i² + x_i⁴)`` summed over both
    springs (109; the text has c = ¼, the authors' code ½), constraint
    ``g = ½[(q2 - x1)² - (l10 + w)²]`` (107).

    Parameters (paper Sect. 5.1, Table 2 values from the authors' code): ``m1 = 2, m2 = 1,
    k1 = 1, k2 = 3, l10 = 1, w = 0.1, c = 0.5``.
    """

    m1: float = 2.0
    m2: float = 1.0
    k1: float = 1.0
    k2: float = 3.0
    l10: float = 1.0
    w: float = 0.1
    c: float = 0.5
    n: int = field(default=3, init=False)
    m: int = field(default=1, init=False)
    quaternion_slices: tuple = field(default=(), init=False)

    def __post_init__(self):
        positive(m1=self.m1, m2=self.m2, k1=self.k1, k2=self.k2, l10=self.l10, c=self.c)
        in_range("w", self.w, 0.0, np.inf)

    def mass_matrix(self, q) -> np.ndarray:
        """``M = [[m1,0,0],[0,m2,m2],[0,m2,m2]]`` (108), singular."""
        m1, m2 = self.m1, self.m2
        return np.array([[m1, 0, 0], [0, m2, m2], [0, m2, m2]], dtype=float)

    def kinetic_energy(self, q, v) -> float:
        return 0.5 * v @ self.mass_matrix(q) @ v

    def grad_kinetic(self, q, v) -> KineticParts:
        M, Z = self.mass_matrix(q), np.zeros((3, 3))
        return KineticParts(np.zeros(3), M @ v, Z, Z, Z, M)

    def dg_kinetic(self, q0, q1, v0, v1) -> KineticParts:
        """Constant M: ``∂̄_qT = 0``, ``∂̄_vT = M v^{n+1/2}`` (84)."""
        M, Z = self.mass_matrix(q0), np.zeros((3, 3))
        return KineticParts(np.zeros(3), 0.5 * M @ (v0 + v1), Z, Z, Z, 0.5 * M)

    def _springs(self):
        return np.array([0, 2]), np.array([self.k1, self.k2])

    def potential(self, q) -> float:
        idx, k = self._springs()
        x = q[idx]
        return float(self.c * k @ (x**2 + x**4))

    def grad_potential(self, q) -> np.ndarray:
        idx, k = self._springs()
        out = np.zeros(3)
        out[idx] = self.c * k * (2 * q[idx] + 4 * q[idx] ** 3)
        return out

    def hess_potential(self, q) -> np.ndarray:
        idx, k = self._springs()
        out = np.zeros((3, 3))
        out[idx, idx] = self.c * k * (2 + 12 * q[idx] ** 2)
        return out

    def dg_potential(self, q0, q1):
        """Invariant-based DG with ``π_i = x_i²``: ``Ṽ_i(π) = c k_i (π + π²)`` is quadratic, so
        ``[Ṽ(π1) - Ṽ(π0)]/(π1 - π0) = c k_i (1 + π0 + π1)`` exactly; ``∇̄V_i = that · (x0 + x1)``.
        """
        idx, k = self._springs()
        x0, x1 = q0[idx], q1[idx]
        quotient = self.c * k * (1 + x0**2 + x1**2)
        dg, jac = np.zeros(3), np.zeros((3, 3))
        dg[idx] = quotient * (x0 + x1)
        jac[idx, idx] = quotient + self.c * k * 2 * x1 * (x0 + x1)
        return dg, jac

    def constraint(self, q) -> np.ndarray:
        return np.array([0.5 * ((q[1] - q[0]) ** 2 - (self.l10 + self.w) ** 2)])

    def constraint_jacobian(self, q) -> np.ndarray:
        return (q[1] - q[0]) * np.array([[-1.0, 1.0, 0.0]])

    def constraint_hessian(self, q, lam) -> np.ndarray:
        return lam[0] * np.array([[1.0, -1.0, 0.0], [-1.0, 1.0, 0.0], [0.0, 0.0, 0.0]])

    def external_force(self, q, v, t):
        return None


# ---------------------------------------------------------------------------------------------
# 5.2 nonlinear spring pendulum in spherical coordinates
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SpringPendulum:
    """Point mass on a nonlinear spring, spherical coordinates ``q = [r, θ, φ]`` (110).

    ``x = [r sinθ cosφ, r sinθ sinφ, -r cosθ]`` (θ measured from -e3); ``M(q) = m diag(1, r²,
    r² sin²θ)`` (111); ``V = ½ EA ε²`` with ``ε = (r² - l0²)/(2 l0²)`` (112); no gravity, no
    constraint. Parameters (Table 3, from the authors' code): ``m = 1, l0 = 1, EA = 300``.
    """

    mass: float = 1.0
    l0: float = 1.0
    EA: float = 300.0
    n: int = field(default=3, init=False)
    m: int = field(default=0, init=False)
    quaternion_slices: tuple = field(default=(), init=False)

    def __post_init__(self):
        positive(mass=self.mass, l0=self.l0, EA=self.EA)

    # diagonal mass matrix entries m_i(q) with gradients and Hessians
    def _m(self, q):
        r, th = q[0], q[1]
        return self.mass * np.array([1.0, r**2, r**2 * np.sin(th) ** 2])

    def _m_grad(self, i):
        def grad(q):
            r, th = q[0], q[1]
            s, c = np.sin(th), np.cos(th)
            grads = (np.zeros(3), np.array([2 * r, 0, 0]),
                     np.array([2 * r * s**2, 2 * r**2 * s * c, 0]))
            return self.mass * grads[i]

        return grad

    def _m_hess(self, i):
        def hess(q):
            r, th = q[0], q[1]
            s, c = np.sin(th), np.cos(th)
            H = np.zeros((3, 3))
            if i == 1:
                H[0, 0] = 2.0
            elif i == 2:
                H[0, 0] = 2 * s**2
                H[0, 1] = H[1, 0] = 4 * r * s * c
                H[1, 1] = 2 * r**2 * (c**2 - s**2)
            return self.mass * H

        return hess

    def mass_matrix(self, q) -> np.ndarray:
        return np.diag(self._m(q))

    def kinetic_energy(self, q, v) -> float:
        return 0.5 * self._m(q) @ v**2

    def position(self, q) -> np.ndarray:
        r, th, ph = q
        return np.array([r * np.sin(th) * np.cos(ph), r * np.sin(th) * np.sin(ph), -r * np.cos(th)])

    def grad_kinetic(self, q, v) -> KineticParts:
        """``∂_qT = ½ Σ_i v_i² ∇m_i = [m r θ̇² + m r sin²θ φ̇², m r² sinθ cosθ φ̇², 0]`` (correct
        form; the authors' code, SpringPendulumPolar.m, has ``m r² θ̇²`` in the first entry)."""
        w = v**2
        grads = np.array([self._m_grad(i)(q) for i in range(3)])  # (3 masses, 3 coords)
        hess = sum(0.5 * w[i] * self._m_hess(i)(q) for i in range(3))
        mq = self._m(q)
        return KineticParts(
            Tq=0.5 * grads.T @ w,
            Tv=mq * v,
            Tq_q=hess,
            Tq_v=grads.T * v,
            Tv_q=grads * v[:, None],
            Tv_v=np.diag(mq),
        )

    def dg_kinetic(self, q0, q1, v0, v1) -> KineticParts:
        """Partitioned discrete derivatives (App. A, reconstructed).

        ``∂̄_qT = ½[∇̄_q T(·, v0) + ∇̄_q T(·, v1)]`` (Gonzalez in q with v frozen) and
        ``∂̄_vT = ½(M(q0) + M(q1)) v^{n+1/2}`` (84). Because ``T = ½ Σ m_i(q) v_i²`` is linear
        in ``w_i = v_i²``, ``∇̄_q T(·, v) = ½ Σ_i v_i² ∇̄m_i``.
        """
        m_i = [lambda q, i=i: self._m(q)[i] for i in range(3)]
        D = np.array([dg_gonzalez(m_i[i], self._m_grad(i), q0, q1)
                      for i in range(3)])  # (3, 3): row i = ∇̄m_i
        D_q = [dg_gonzalez_jacobian(m_i[i], self._m_grad(i), self._m_hess(i), q0, q1)
               for i in range(3)]  # ∂∇̄m_i/∂q1
        w = 0.5 * (v0**2 + v1**2)
        m0, m1 = self._m(q0), self._m(q1)
        vm = 0.5 * (v0 + v1)
        grad_m1 = np.array([self._m_grad(i)(q1) for i in range(3)])
        return KineticParts(
            Tq=0.5 * D.T @ w,
            Tv=0.5 * (m0 + m1) * vm,
            Tq_q=sum(0.5 * w[i] * D_q[i] for i in range(3)),
            Tq_v=0.5 * D.T * v1,
            Tv_q=0.5 * grad_m1 * vm[:, None],
            Tv_v=np.diag(0.25 * (m0 + m1)),
        )

    def strain(self, r):
        return (r**2 - self.l0**2) / (2 * self.l0**2)

    def potential(self, q) -> float:
        return 0.5 * self.EA * self.strain(q[0]) ** 2

    def grad_potential(self, q) -> np.ndarray:
        return np.array([self.EA * self.strain(q[0]) * q[0] / self.l0**2, 0.0, 0.0])

    def hess_potential(self, q) -> np.ndarray:
        r = q[0]
        H = np.zeros((3, 3))
        H[0, 0] = self.EA * (self.strain(r) + r**2 / self.l0**2) / self.l0**2
        return H

    def dg_potential(self, q0, q1):
        """Invariant ``π = r²``: ``Ṽ(π) = EA (π - l0²)²/(8 l0⁴)`` is quadratic, so
        ``∇̄V = EA (π0 + π1 - 2 l0²)/(8 l0⁴) · 2 r^{n+1/2} e_r`` exactly (a DG in r only)."""
        r0, r1 = q0[0], q1[0]
        a = self.EA / (8 * self.l0**4)
        quotient = a * (r0**2 + r1**2 - 2 * self.l0**2)
        dg, jac = np.zeros(3), np.zeros((3, 3))
        dg[0] = quotient * (r0 + r1)
        jac[0, 0] = quotient + a * 2 * r1 * (r0 + r1)
        return dg, jac

    def constraint(self, q) -> np.ndarray:
        return np.zeros(0)

    def constraint_jacobian(self, q) -> np.ndarray:
        return np.zeros((0, 3))

    def constraint_hessian(self, q, lam) -> np.ndarray:
        return np.zeros((3, 3))

    def external_force(self, q, v, t):
        return None


# ---------------------------------------------------------------------------------------------
# 5.3 / 5.4 rigid bodies in unit quaternions
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FreeRigidBody:
    """Free rotation of a rigid body in unit quaternions (Sect. 5.3).

    ``q ∈ S³`` (n = 4), one constraint ``g = ½(q·q - 1)`` (30), singular mass matrix
    ``M̃4(q) = 4G(q)ᵀJG(q)`` (46), ``V = 0``. ``J`` are the principal inertias (paper: 6, 8, 3).
    """

    J: tuple = (6.0, 8.0, 3.0)
    n: int = field(default=4, init=False)
    m: int = field(default=1, init=False)
    quaternion_slices: tuple = field(default=(slice(0, 4),), init=False)

    def __post_init__(self):
        J = vector("J", self.J, (3,))
        positive(J1=J[0], J2=J[1], J3=J[2])
        object.__setattr__(self, "J", tuple(float(j) for j in J))

    @property
    def Jv(self) -> np.ndarray:
        return np.array(self.J)

    def mass_matrix(self, q) -> np.ndarray:
        return mass_matrix_4(q, self.Jv)

    def kinetic_energy(self, q, v) -> float:
        Om = 2.0 * G(q) @ v
        return 0.5 * Om @ (self.Jv * Om)

    def grad_kinetic(self, q, v) -> KineticParts:
        return quat_grad_kinetic(self.Jv, q, v)

    def dg_kinetic(self, q0, q1, v0, v1) -> KineticParts:
        return quat_dg_kinetic(self.Jv, q0, q1, v0, v1)

    def potential(self, q) -> float:
        return 0.0

    def grad_potential(self, q) -> np.ndarray:
        return np.zeros(4)

    def hess_potential(self, q) -> np.ndarray:
        return np.zeros((4, 4))

    def dg_potential(self, q0, q1):
        return np.zeros(4), np.zeros((4, 4))

    def constraint(self, q) -> np.ndarray:
        return np.array([0.5 * (q @ q - 1.0)])

    def constraint_jacobian(self, q) -> np.ndarray:
        return np.asarray(q, dtype=float)[None, :]

    def constraint_hessian(self, q, lam) -> np.ndarray:
        return lam[0] * np.eye(4)

    def external_force(self, q, v, t):
        return None

    def angular_momentum(self, q, p) -> np.ndarray:
        """Spatial angular momentum ``L = ½E(q)p`` (64)."""
        return angular_momentum(q, p)

    def initial_state(self, q0, Omega0) -> np.ndarray:
        """Livens state ``[q, p, v, λ]`` with ``v = ½G(q)ᵀΩ`` (44), ``p = M̃4(q)v``, ``λ = 0``."""
        q0 = unit_quaternion("q0", q0)
        Omega0 = vector("Omega0", Omega0, (3,))
        v = 0.5 * G(q0).T @ Omega0
        return np.concatenate([q0, self.mass_matrix(q0) @ v, v, [0.0]])


_E3_SIGNS = np.array([1.0, -1.0, -1.0, 1.0])
_E3_DIAG = np.diag(_E3_SIGNS)


@dataclass(frozen=True)
class HeavyTop(FreeRigidBody):
    """Heavy top with a fixed tip, in unit quaternions (Sect. 5.4).

    ``J`` are the principal inertias about the tip; the centre of mass sits at ``l d3``.
    ``V = m g l e3·R(q)e3 = m g l (q0² - q1² - q2² + q3²)`` (115), quadratic in q, so its
    Gonzalez DG is the midpoint gradient ``∇V(q^{n+1/2})`` with ``∇V = 2mgl[q0, -q1, -q2, q3]``
    (116). Use :meth:`cone` for the paper's data.
    """

    mass: float = 1.0
    gravity: float = 9.81
    l: float = 1.0

    def __post_init__(self):
        super().__post_init__()
        positive(mass=self.mass, l=self.l)
        in_range("gravity", self.gravity, 0.0, np.inf)

    @classmethod
    def cone(cls, rho=2700.0, a=0.1, gravity=9.81) -> HeavyTop:
        """Solid cone of height ``a``, radius ``a/2``, density ``rho`` spinning on its tip.

        The data come from :class:`mbslib.systems.heavy_top.Cone`: ``m = ρπr²a/3``, ``l = 3a/4``,
        ``J_0^{1,2} = 3/80 m(4r² + a²)``, ``J_0^3 = 3/10 m r²`` (113); about the tip
        ``J1 = J2 = J_0^1 + m l²``, ``J3 = J_0^3`` (114, corrected as in the authors' code: the
        text adds ``m l²`` to J3).
        """
        positive(rho=rho, a=a)
        body = Cone(density=rho, height=a)
        return cls(J=tuple(body.inertia_tip), mass=body.mass, gravity=gravity, l=body.com_distance)

    @property
    def mgl(self) -> float:
        return self.mass * self.gravity * self.l

    def potential(self, q) -> float:
        return float(self.mgl * _E3_SIGNS @ q**2)

    def grad_potential(self, q) -> np.ndarray:
        return 2.0 * self.mgl * _E3_SIGNS * q

    def hess_potential(self, q) -> np.ndarray:
        return 2.0 * self.mgl * _E3_DIAG

    def dg_potential(self, q0, q1):
        return self.grad_potential(0.5 * (q0 + q1)), self.mgl * _E3_DIAG

    def centre_of_mass(self, q) -> np.ndarray:
        """``x = l R(q) e3`` for one q (4,) or a time series (N, 4) -> (N, 3)."""
        q = np.atleast_2d(q)
        q0, q1, q2, q3 = q.T
        return self.l * np.column_stack(
            [2 * (q1 * q3 + q0 * q2), 2 * (q2 * q3 - q0 * q1), q0**2 - q1**2 - q2**2 + q3**2]
        )

    def steady_precession(self, theta0, omega_p):
        """Spin rate (118) and initial state (117, 119) of steady precession at nutation θ0.

        ``ω_s = mgl/(J3 ω_p) + (J1 - J3)/J3 ω_p cos θ0``; ``q0 = (cos θ0/2, sin θ0/2, 0, 0)``;
        ``ω0 = ω_p e3 + ω_s R(q0)e3``. Returns ``(omega_s, state)`` with the Livens state.
        """
        in_range("theta0", theta0, 1e-6, np.pi - 1e-6)
        positive(omega_p=omega_p)
        J1, _, J3 = self.J
        omega_s = steady_precession_spin(self.mgl, J1, J3, omega_p, theta0)
        q0 = np.array([np.cos(theta0 / 2), np.sin(theta0 / 2), 0.0, 0.0])
        d3 = np.array([0.0, -np.sin(theta0), np.cos(theta0)])
        omega = omega_p * np.array([0.0, 0.0, 1.0]) + omega_s * d3
        v = 0.5 * E(q0).T @ omega
        return omega_s, np.concatenate([q0, self.mass_matrix(q0) @ v, v, [0.0]])

    def reference_centre_of_mass(self, t, theta0, omega_p) -> np.ndarray:
        """Exact steady precession (120): ``l sinθ0 (sin ω_p t, -cos ω_p t, 0) + l cosθ0 e3``; (N, 3)."""
        t = np.atleast_1d(t)
        s, c = self.l * np.sin(theta0), self.l * np.cos(theta0)
        wt = omega_p * t
        return np.column_stack([s * np.sin(wt), -s * np.cos(wt), np.full_like(t, c)])


