"""Energy–momentum (EM) and discrete Lagrange–d'Alembert (DLA) schemes for the director rigid body.

Gebhardt & Romero, J. Nonlinear Sci. (2020), Sect. 5 and 6.4. The configuration is
``q = (d1, d2, d3)`` in R^9 with constant mass matrix ``M = 𝒥 ⊗ I3``, six quadratic
orthonormality constraints ``h(q) = 0`` (eq. 63 completed with the unit lengths) and, for the
non-twisting body, the nonholonomic constraint ``G(q) q̇ = 0`` with ``G(q)ᵀ = B q`` (eq. 80).

Schemes (pure functions of the body record, a :class:`DirectorTriad` such as
:class:`mbslib.systems.nontwisting_body.NontwistingBody`):

- :func:`step_em` — the basic EM scheme (Sect. 5.1, ``nonholonomic=False``, 15 unknowns) and
  the specialized EM scheme (Sect. 5.2, ``nonholonomic=True``, 16 unknowns). State
  ``x = (q, q̇)``, shape (18,). Because ``h`` is quadratic and ``G`` linear, the averaged
  (AVF) constraint Jacobians of eqs. (89), (93) are exactly their midpoint values.
- :func:`step_dla` — the Cortés–Martínez discrete Lagrange–d'Alembert scheme in
  position–momentum form (the paper's Appendix B is missing; our reconstruction from Cortés &
  Martínez, derived in chapter 004).
  State ``x = (q, p)``, shape (18,).

The dynamic residual rows are multiplied by h²/2 (EM) or h (DLA) so that every row is a
position-level quantity; Newton's iterates do not depend on this row scaling, only the stopping
test does, which is relative (1e-10 of the initial residual, the paper's "relative tolerance")
with a round-off floor.

Both schemes solve the same kind of step equations in ``z = (q_{n+1}, λ, μ)``:
``M(q_{n+1} − q_n − h v_n) + (h²/2)(H(q_θ)ᵀλ + μ B q_θ − Q) = 0``, ``h(q_{n+1}) = 0``,
``(B q_{n+½})·(q_{n+1} − q_n) = 0``, with the constraint forces at ``q_θ = q_{n+½}`` (EM, θ = ½)
or at the node ``q_n`` (DLA, θ = 0, ``v_n = M⁻¹p_n``). One compiled kernel evaluates their
residual and Jacobian, and one more assembles, factorises and solves the Newton matrix, so that a
Newton iteration costs two compiled calls; the discrete loads, which depend on the body, stay
Python calls of the body record.
"""

from __future__ import annotations

from functools import lru_cache, partial
from typing import Protocol, runtime_checkable

import numba
import numpy as np

from mbslib.formulations.director_triad import (
    ORTHONORMALITY_PAIRS,
    material_angular_momentum,
    spatial_angular_momentum,
    twist_matrix,
)
from mbslib.kernels import lu_factor, lu_solve_in_place, mm, mtv, solve
from mbslib.newton import NewtonReport, newton_solve
from mbslib.validation import positive

#: Relative Newton tolerance of the paper (Sect. 6) and the absolute round-off floor.
RTOL = 1e-10
ATOL = 1e-13
MAX_ITER = 30

LOAD_RULES = ("midpoint", "endpoint")


@runtime_checkable
class DirectorTriad(Protocol):
    """A rigid body turning about its centre of mass as three directors ``q = (d1, d2, d3)``
    (shape (9,)) under applied director forces, as the EM and DLA schemes use it.

    The triad's kinematics (the constraints ``h``, the twist matrix ``B``, angular momenta) do
    not depend on the body: :mod:`mbslib.formulations.director_triad`. What does is below.

    Attributes
    ----------
    M : ndarray, shape (9, 9)
        Constant director mass matrix 𝒥 ⊗ I₃ (eq. 88).
    a : float
        Weight of the nonholonomic constraint G(q)ᵀ = B q (eq. 80), in [0, 1].
    loaded : bool
        Whether the body is loaded (the schemes skip the forces otherwise).
    """

    M: np.ndarray
    a: float
    loaded: bool

    def director_forces(self, q: np.ndarray, t: float) -> np.ndarray:
        """Generalized director forces ``Q(q, t)``, shape (9,) (eqs. 68, 84)."""
        ...

    def director_forces_jacobian(self, q: np.ndarray, t: float) -> np.ndarray:
        """``∂Q/∂q``, shape (9, 9)."""
        ...

    def director_momenta(self, qdot: np.ndarray) -> np.ndarray:
        """``p = M q̇``, shape (..., 9) (eq. 65), for :func:`invariants`."""
        ...

    def kinetic_energy(self, qdot: np.ndarray) -> np.ndarray:
        """``K = ½ q̇·M q̇``, shape (...), for :func:`invariants`."""
        ...


def _check(h: float, load_rule: str) -> None:
    positive(h=h)
    if load_rule not in LOAD_RULES:
        raise ValueError(f"load_rule must be one of {LOAD_RULES}, got {load_rule!r}")


def _state(x_n) -> np.ndarray:
    """A contiguous writable float copy of ``x_n``, shape (18,) (the compiled equations read it
    unchecked, and take one type of array)."""
    x_n = np.array(x_n, dtype=float)
    if x_n.shape != (18,):
        raise ValueError(f"x_n must have shape (18,), got {x_n.shape}")
    return x_n


def _solve(equations: _StepEquations, z0, t, rtol=None) -> tuple[np.ndarray, NewtonReport]:
    """Newton with the stopping test max|R| ≤ max(rtol max|R(z0)|, ATOL), rtol = RTOL by default."""
    if rtol is None:
        rtol = RTOL
    else:
        positive(rtol=rtol)
    r0 = equations.residual_and_norm(z0)[1]
    return newton_solve(equations.residual, z0, equations.newton_matrix, tol=max(rtol * r0, ATOL), max_iter=MAX_ITER,
                        t=t)


# --- the step equations shared by the EM and DLA schemes --------------------------------------


@numba.njit(cache=True)
def _step_equations(M, B, pairs, q_n, hv_n, Q, dQ, z, c, theta, nonholonomic, R, K):
    """Residual ``R`` and, if ``K`` has rows, its Jacobian ``K = ∂R/∂z`` at ``z = (q_{n+1}, λ, μ)``
    (μ only if ``nonholonomic``), written into ``R`` and ``K``; returns max|R|:

    - ``R_q = M(Δq − h v_n) + c (H(q_θ)ᵀλ + μ B q_θ − Q)``, ``Δq = q_{n+1} − q_n``,
      ``q_θ = q_n + θ Δq`` (θ = ½ for the EM's midpoint, 0 for the DLA's node q_n)
    - ``R_h = h(q_{n+1})``, the rows (i, j) of ``pairs``: ½(d_i·d_i − 1) or d_i·d_j (eq. 63)
    - ``R_g = (B q_{n+½})·Δq`` (the discrete non-twisting constraint, eq. 94)

    and ``K_qq = M + θc (C(λ) + μB) − c ∂Q/∂q_{n+1}``, ``K_qλ = c H(q_θ)ᵀ``, ``K_qμ = c B q_θ``,
    ``K_hq = H(q_{n+1})``, ``K_gq = B q_{n+½} + ½ Bᵀ Δq``. ``hv_n = h v_n``, ``Q`` and
    ``dQ = ∂Q/∂q_{n+1}`` are the scheme's discrete load and its derivative, ``c = h²/2``.
    """
    n_lam = pairs.shape[0]
    m = 9 + n_lam
    dq, q_th, q_mid, force = np.empty(9), np.empty(9), np.empty(9), np.empty(9)
    for a in range(9):
        dq[a] = z[a] - q_n[a]
        q_th[a] = q_n[a] + theta * dq[a]
        q_mid[a] = q_n[a] + 0.5 * dq[a]
        force[a] = -Q[a]
    jacobian = K.shape[0] > 0
    if jacobian:
        K[:, :] = 0.0
    for r in range(n_lam):  # the constraint rows: values h(q_{n+1}), rows of H, forces H(q_θ)ᵀλ, C(λ)
        i, j, lam = 3 * pairs[r, 0], 3 * pairs[r, 1], z[9 + r]
        d_ij = 0.0
        for s in range(3):
            d_ij += z[i + s] * z[j + s]
            force[i + s] += lam * q_th[j + s]
            if i != j:
                force[j + s] += lam * q_th[i + s]
        R[9 + r] = 0.5 * (d_ij - 1.0) if i == j else d_ij
        if jacobian:
            for s in range(3):
                K[9 + r, i + s] += z[j + s]
                K[i + s, 9 + r] += c * q_th[j + s]
                K[i + s, j + s] += theta * c * lam
                if i != j:
                    K[9 + r, j + s] += z[i + s]
                    K[j + s, 9 + r] += c * q_th[i + s]
                    K[j + s, i + s] += theta * c * lam
    if nonholonomic:
        mu, R[m] = z[m], 0.0
        for a in range(9):
            Bq_th, Bq_mid = 0.0, 0.0
            for b in range(9):
                Bq_th += B[a, b] * q_th[b]
                Bq_mid += B[a, b] * q_mid[b]
            force[a] += mu * Bq_th
            R[m] += Bq_mid * dq[a]
            if jacobian:
                K[a, m] = c * Bq_th
                K[m, a] += Bq_mid
                for b in range(9):
                    K[a, b] += theta * c * mu * B[a, b]
                    K[m, b] += 0.5 * B[a, b] * dq[a]
    for a in range(9):
        acc = 0.0
        for b in range(9):
            acc += M[a, b] * (dq[b] - hv_n[b])
            if jacobian:
                K[a, b] += M[a, b] - c * dQ[a, b]
        R[a] = acc + c * force[a]
    norm = 0.0
    for a in range(R.size):
        if not abs(R[a]) <= norm:  # NaN stays
            norm = abs(R[a])
            if norm != norm:
                break
    return norm


@numba.njit(cache=True)
def _newton_update(M, B, pairs, q_n, hv_n, dQ, z, c, theta, nonholonomic, r):
    """Overwrite ``r`` with ``K⁻¹r``, ``K`` the Jacobian of :func:`_step_equations` at ``z`` (LU with
    partial pivoting, :func:`mbslib.kernels.lu_factor`); False if ``K`` is singular."""
    n = r.size
    K, piv = np.empty((n, n)), np.empty(n, dtype=np.int64)
    _step_equations(M, B, pairs, q_n, hv_n, np.zeros(9), dQ, z, c, theta, nonholonomic, np.empty(n), K)
    if not lu_factor(K, piv):
        return False
    lu_solve_in_place(K, piv, r)
    return True


#: The matrix argument of :func:`_step_equations` when only the residual is wanted, and its load
#: arguments Q, ∂Q/∂q_{n+1} for an unloaded body (read, never written).
_NO_MATRIX = np.empty((0, 0))
_NO_LOAD = np.zeros(9), np.zeros((9, 9))


@lru_cache(maxsize=2)
def _pairs(unit_length: bool) -> np.ndarray:
    """The director pairs (i, j), counted from 0, of the constraint rows used (:func:`_constraint_rows`)."""
    return np.array(ORTHONORMALITY_PAIRS[_constraint_rows(unit_length)]) - 1


def _body_arrays(body: DirectorTriad) -> tuple[np.ndarray, np.ndarray]:
    """Writable copies of the body's M and B (the compiled kernels take one type of array)."""
    return np.array(body.M, dtype=float), np.array(twist_matrix(body.a))


class _StepEquations:
    """The equations of one EM (θ = ½) or DLA (θ = 0) step from ``q_n`` with ``hv_n = h v_n``
    and the body's ``(M, B)`` (:func:`_step_equations`); ``load(q_{n+1})`` and ``load_jacobian(q_{n+1})`` give the
    discrete load Q and ∂Q/∂q_{n+1} (``None`` for none). :meth:`residual` and
    :meth:`newton_matrix` are what :func:`newton_solve` calls (its iterates are float arrays of
    shape (n,)); :meth:`checked` validates another ``z``."""

    def __init__(self, body_arrays, q_n, hv_n, h, theta, *, nonholonomic, unit_length, load=None,
                 load_jacobian=None):
        pairs = _pairs(unit_length)
        self.n = 9 + len(pairs) + (1 if nonholonomic else 0)
        self.load, self.load_jacobian = load, load_jacobian
        self.body_arrays, self.q_n, self.hv_n = body_arrays, q_n, hv_n
        self.fixed = (*body_arrays, pairs, q_n, hv_n)
        self.scalars = (0.5 * h * h, float(theta), bool(nonholonomic))

    def checked(self, z) -> np.ndarray:
        z = np.array(z, dtype=float)
        if z.shape != (self.n,):
            raise ValueError(f"z must have shape ({self.n},), got {z.shape}")
        return z

    def _load_jacobian(self, z):
        return _NO_LOAD[1] if self.load_jacobian is None else self.load_jacobian(z[:9])

    def residual_and_norm(self, z) -> tuple[np.ndarray, float]:
        R = np.empty(self.n)
        Q = _NO_LOAD[0] if self.load is None else self.load(z[:9])
        return R, _step_equations(*self.fixed, Q, _NO_LOAD[1], z, *self.scalars, R, _NO_MATRIX)

    def residual(self, z) -> np.ndarray:
        return self.residual_and_norm(z)[0]

    def jacobian(self, z) -> np.ndarray:
        K = np.empty((self.n, self.n))  # (the residual, evaluated without the load, is not used)
        _step_equations(*self.fixed, _NO_LOAD[0], self._load_jacobian(z), z, *self.scalars, np.empty(self.n), K)
        return K

    def newton_matrix(self, z) -> _NewtonMatrix:
        return _NewtonMatrix(self, z)


class _NewtonMatrix:
    """The Jacobian of :class:`_StepEquations` at ``z`` as :func:`newton_solve` takes it: an object
    whose ``solve(r)`` returns ``K⁻¹r`` (assembly, LU and solve in one compiled call,
    :func:`_newton_update`)."""

    def __init__(self, equations: _StepEquations, z):
        self.equations, self.z = equations, z

    def solve(self, r) -> np.ndarray:
        e = self.equations
        dx = np.array(r, dtype=float)
        if not _newton_update(*e.fixed, e._load_jacobian(self.z), self.z, *e.scalars, dx):
            raise np.linalg.LinAlgError("singular Newton matrix")
        return dx


# --- energy–momentum schemes (Sect. 5.1, 5.2) ----------------------------------------------


def _constraint_rows(unit_length: bool) -> slice:
    """Rows of h used: all six, or only the three orthogonality conditions printed in eq. (63)."""
    return slice(0, 6) if unit_length else slice(3, 6)


def _em_equations(body: DirectorTriad, x_n, h, t, nonholonomic, load_rule, unit_length) -> _StepEquations:
    """The EM equations of the step from ``x_n = (q_n, q̇_n)`` (from :func:`_state`) at ``t``: θ = ½,
    ``hv_n = h q̇_n`` and the discrete load Q_{n+½} (not specified in the paper) at (q_{n+½}, t_{n+½})
    or the endpoint average."""
    _check(h, load_rule)
    q_n = x_n[:9]
    load = load_jacobian = None
    if body.loaded and load_rule == "midpoint":
        def load(q_n1):
            return body.director_forces(0.5 * (q_n + q_n1), t + 0.5 * h)

        def load_jacobian(q_n1):
            return 0.5 * body.director_forces_jacobian(0.5 * (q_n + q_n1), t + 0.5 * h)
    elif body.loaded:
        Q_n = body.director_forces(q_n, t)

        def load(q_n1):
            return 0.5 * (Q_n + body.director_forces(q_n1, t + h))

        def load_jacobian(q_n1):
            return 0.5 * body.director_forces_jacobian(q_n1, t + h)
    return _StepEquations(_body_arrays(body), q_n, h * x_n[9:], h, 0.5, nonholonomic=nonholonomic,
                          unit_length=unit_length, load=load, load_jacobian=load_jacobian)


def residual_em(body: DirectorTriad, x_n, z, h, t=0.0, *, nonholonomic=True, load_rule="midpoint",
                unit_length=True):
    """Residual of one EM step, shape (16,) (or (15,) for the basic scheme).

    Parameters
    ----------
    body : DirectorTriad
    x_n : ndarray, shape (18,)
        State ``(q_n, q̇_n)``.
    z : ndarray, shape (16,) or (15,)
        Unknowns ``(q_{n+1}, λ_{n+½}, μ_{n+½})``; μ only if ``nonholonomic``.
    h, t : float
        Step size and time t_n.
    unit_length : bool
        Use all six constraints (default). ``False`` keeps only the three orthogonality
        conditions printed in eq. (63), λ ∈ R³ (13 or 12 unknowns): a demonstration of why the
        unit lengths are needed.

    Returns
    -------
    R : ndarray
        ``(h²/2) R_q``, ``R_h``, ``R_g`` with (eqs. 87b, 89–94)

        - ``R_q = (2/h²) M(q_{n+1} − q_n − h q̇_n) + H(q_{n+½})ᵀλ + μ B q_{n+½} − Q_{n+½}``
        - ``R_h = h(q_{n+1})``
        - ``R_g = (B q_{n+½})·(q_{n+1} − q_n)`` (the AVF constraint G_d Δq = 0, eq. 94).

        One compiled evaluation of the step equations the EM shares with the DLA (module docstring).
    """
    equations = _em_equations(body, _state(x_n), h, t, nonholonomic, load_rule, unit_length)
    return equations.residual(equations.checked(z))


def jacobian_em(body: DirectorTriad, x_n, z, h, t=0.0, *, nonholonomic=True, load_rule="midpoint",
                unit_length=True):
    """Analytic Jacobian ∂R/∂z of :func:`residual_em`, shape (16, 16) or (15, 15).

    ``∂R_q/∂q_{n+1} = M + (h²/4)(C(λ) + μB) − (h²/2) ∂Q_{n+½}/∂q_{n+1}``,
    ``∂R_q/∂λ = (h²/2) H(q_{n+½})ᵀ``, ``∂R_q/∂μ = (h²/2) B q_{n+½}``,
    ``∂R_h/∂q_{n+1} = H(q_{n+1})``, ``∂R_g/∂q_{n+1} = B q_{n+½} + ½ Bᵀ(q_{n+1} − q_n)``.
    """
    equations = _em_equations(body, _state(x_n), h, t, nonholonomic, load_rule, unit_length)
    return equations.jacobian(equations.checked(z))


def step_em(body: DirectorTriad, x_n, h, t=0.0, *, nonholonomic=True, load_rule="midpoint", unit_length=True,
            rtol=None):
    """One EM step ``(q_n, q̇_n) -> (q_{n+1}, q̇_{n+1})`` (Sect. 5.1/5.2).

    Newton on ``z = (q_{n+1}, λ, μ)`` from the predictor ``(q_n + h q̇_n, 0, 0)``; the velocity
    update is ``q̇_{n+1} = (2/h)(q_{n+1} − q_n) − q̇_n`` (trapezoidal rule, eq. 87). ``rtol`` is
    the relative Newton tolerance (default :data:`RTOL`, the paper's 1e-10).

    Returns
    -------
    x_n1 : ndarray, shape (18,)
    report : NewtonReport

    Raises
    ------
    NewtonError
        If Newton does not converge within ``MAX_ITER`` iterations.
    """
    x_n = _state(x_n)
    q_n, v_n = x_n[:9], x_n[9:]
    equations = _em_equations(body, x_n, h, t, nonholonomic, load_rule, unit_length)
    z0 = np.zeros(equations.n)
    z0[:9] = q_n + h * v_n
    z, report = _solve(equations, z0, t, rtol)
    q_n1 = z[:9]
    return np.concatenate([q_n1, 2.0 / h * (q_n1 - q_n) - v_n]), report


# --- discrete Lagrange–d'Alembert scheme (Sect. 6.4, Appendix B reconstructed) --------------


def _dla_equations(body: DirectorTriad, x_n, h, t) -> _StepEquations:
    """The DLA equations of the step from ``x_n = (q_k, p_k)`` at ``t``: θ = 0, ``hv_n = h M⁻¹p_k``
    and the node force Q(q_k, t_k)."""
    positive(h=h)
    x_n = _state(x_n)
    q_n = x_n[:9]
    load = None
    if body.loaded:
        Q_n = body.director_forces(q_n, t)

        def load(q_n1):
            return Q_n
    M, B = _body_arrays(body)
    return _StepEquations((M, B), q_n, h * solve(M, x_n[9:]), h, 0.0, nonholonomic=True,
                          unit_length=True, load=load)


def residual_dla(body: DirectorTriad, x_n, z, h, t=0.0):
    """Residual (B1)–(B3) of one DLA step, shape (16,).

    ``h·(B1) = M(q_{k+1} − q_k) − h p_k − (h²/2) Q(q_k, t_k) + (h²/2)(H(q_k)ᵀλ + μ B q_k)``,
    ``(B2) = h(q_{k+1})``, ``(B3) = (B q_{k+½})·(q_{k+1} − q_k)``.
    The forces are node forces (trapezoidal discrete forces F_d^± = (h/2) Q). One compiled
    evaluation of the step equations the DLA shares with the EM (module docstring), with
    ``M(q_{k+1} − q_k − h M⁻¹p_k)`` for the first two terms.
    """
    equations = _dla_equations(body, x_n, h, t)
    return equations.residual(equations.checked(z))


def jacobian_dla(body: DirectorTriad, x_n, z, h, t=0.0):
    """Analytic Jacobian of :func:`residual_dla`, shape (16, 16): ``∂/∂q_{k+1} = M`` (B1),
    ``H(q_{k+1})`` (B2), ``B q_{k+½} + ½ Bᵀ(q_{k+1} − q_k)`` (B3); ``∂(B1)/∂λ = (h²/2) H(q_k)ᵀ``,
    ``∂(B1)/∂μ = (h²/2) B q_k``."""
    equations = _dla_equations(body, x_n, h, t)
    return equations.jacobian(equations.checked(z))


@numba.njit(cache=True)
def _project_momentum(M, B, pairs, q, p_star):
    """:func:`project_momentum` with ``C`` the constraint rows of :func:`_step_equations`' Jacobian
    at ``q_{n+1} = q_n = q``, where they are ``H(q)`` and ``G(q) = (Bq)ᵀ``; NaN if ``C M⁻¹ Cᵀ`` is
    singular."""
    n = 10 + pairs.shape[0]
    z = np.zeros(n)
    z[:9] = q
    K = np.empty((n, n))
    _step_equations(M, B, pairs, q, np.zeros(9), np.zeros(9), np.zeros((9, 9)), z, 0.0, 0.0, True, np.empty(n), K)
    C = K[9:, :9].copy()
    M_lu, piv = M.copy(), np.empty(9, dtype=np.int64)
    lu_factor(M_lu, piv)  # M is positive definite
    Minv_Ct = C.T.copy()
    for k in range(n - 9):
        column = Minv_Ct[:, k].copy()
        lu_solve_in_place(M_lu, piv, column)
        Minv_Ct[:, k] = column
    nu = solve(mm(C, Minv_Ct), mtv(Minv_Ct, p_star))
    return p_star - mtv(C, nu)


def project_momentum(body: DirectorTriad, q, p_star):
    """(B4)–(B5): p = p* − Cᵀν with C = [H; G](q) chosen so that C M⁻¹ p = 0, shape (9,).

    Raises ``numpy.linalg.LinAlgError`` if ``C M⁻¹ Cᵀ`` is singular."""
    return _projected(_body_arrays(body), np.array(q, dtype=float), np.array(p_star, dtype=float))


def _projected(body_arrays, q, p_star) -> np.ndarray:
    p = _project_momentum(*body_arrays, _pairs(True), q, p_star)
    if np.isnan(p[0]):
        raise np.linalg.LinAlgError("singular C M⁻¹ Cᵀ in the momentum projection")
    return p


def step_dla(body: DirectorTriad, x_n, h, t=0.0):
    """One DLA step ``(q_k, p_k) -> (q_{k+1}, p_{k+1})`` (one-step form (B1)–(B5) of our reconstruction).

    Newton on ``(q_{k+1}, λ_k, μ_k)`` from ``(q_k + h M⁻¹p_k, 0, 0)``, then
    ``p_{k+1} = M(q_{k+1} − q_k)/h + (h/2) Q(q_{k+1}, t_{k+1})`` projected onto the constraint
    velocities. There is no solution once the rotation per step reaches ``|ω| h = 1``.

    Raises
    ------
    NewtonError
        When Newton fails (in particular beyond the existence limit ``|ω| h ≥ 1``).
    """
    equations = _dla_equations(body, x_n, h, t)
    q_n = equations.q_n
    z0 = np.zeros(16)
    z0[:9] = q_n + equations.hv_n
    z, report = _solve(equations, z0, t)
    q_n1 = z[:9]
    p_star = body.M @ (q_n1 - q_n) / h
    if body.loaded:
        p_star = p_star + 0.5 * h * body.director_forces(q_n1, t + h)
    return np.concatenate([q_n1, _projected(equations.body_arrays, q_n1, p_star)]), report


def em_stepper(body: DirectorTriad, *, nonholonomic=True, load_rule="midpoint", unit_length=True, rtol=None):
    """``step(x, h, t)`` for :func:`mbslib.simulate.simulate`."""
    return partial(step_em, body, nonholonomic=nonholonomic, load_rule=load_rule, unit_length=unit_length,
                   rtol=rtol)


def dla_stepper(body: DirectorTriad):
    """``step(x, h, t)`` for :func:`mbslib.simulate.simulate`."""
    return partial(step_dla, body)



# --- post-processing (Hamiltonian and energy of Tables 7–9, undefined in the paper) ----------


def invariants(body: DirectorTriad, x, *, scheme="em", h=None) -> dict:
    """Motion invariants along a time-major trajectory ``x`` of shape (N+1, 18).

    Returns a dict with ``q`` (N+1, 9), ``v`` = q̇ (N+1, 9), ``p`` (N+1, 9), ``pi`` (SAM,
    (N+1, 3)), ``Pi`` (MAM components Π¹, Π², Π³, (N+1, 3)), ``K`` = ½ q̇·Mq̇ and the
    "Hamiltonian" ``H`` = ½ p·M⁻¹p at the nodes (N+1,), and the "energy" ``E``: for the EM
    ``E_n = ½ q̇_n·Mq̇_n`` (= H), for the DLA (state (q, p), needs ``h``) the midpoint value
    ``E_{k+½} = ½ |Δq/h|²_M``, shape (N,).
    """
    x = np.asarray(x, dtype=float)
    q = x[:, :9]
    if scheme == "em":
        v = x[:, 9:]
        p = body.director_momenta(v)
    elif scheme == "dla":
        p = x[:, 9:]
        v = np.linalg.solve(body.M, p.T).T
        positive(h=h)
    else:
        raise ValueError(f"scheme must be 'em' or 'dla', got {scheme!r}")
    K = body.kinetic_energy(v)
    H = 0.5 * np.sum(p * v, axis=1)
    E = K if scheme == "em" else body.kinetic_energy(np.diff(q, axis=0) / h)
    return dict(q=q, v=v, p=p, pi=spatial_angular_momentum(q, p), Pi=material_angular_momentum(q, p), K=K, H=H, E=E)


def frame_defects(q) -> tuple[float, float, float]:
    """Largest defects of the discrete non-twisting frame along ``q`` of shape (N+1, 9).

    Returns
    -------
    ortho : float
        ``max_n |h(q_n)|∞`` (orthonormality).
    twist : float
        ``max_n |d_{1,n+1}·d_{2,n} − d_{1,n}·d_{2,n+1}|`` (the discrete constraint (94)).
    transport : float
        ``max_n,α ‖d_{α,n+1} − P(d_{α,n})‖`` with P the parallel transport along the great arc
        from d_{3,n} to d_{3,n+1} (eq. 10), the rotation ``I + ŵ + ŵ²/(1 + c)`` with
        ``w = d_{3,n} × d_{3,n+1}``, ``c = d_{3,n}·d_{3,n+1}`` (unit d3 assumed).
        ``inf`` if consecutive d3 are antipodal (transport undefined). 0 for a single state.
    """
    q = np.asarray(q, dtype=float)
    if q.ndim != 2 or q.shape[1] != 9 or len(q) == 0:
        raise ValueError(f"q must have shape (N+1, 9), got {q.shape}")
    d1, d2, d3 = q[:, 0:3], q[:, 3:6], q[:, 6:9]
    ortho = float(np.max(np.abs(np.column_stack([
        0.5 * (np.sum(d1 * d1, axis=1) - 1.0), 0.5 * (np.sum(d2 * d2, axis=1) - 1.0),
        0.5 * (np.sum(d3 * d3, axis=1) - 1.0), np.sum(d2 * d3, axis=1), np.sum(d1 * d3, axis=1),
        np.sum(d1 * d2, axis=1)]))))
    if len(q) == 1:
        return ortho, 0.0, 0.0
    twist = float(np.max(np.abs(np.sum(d1[1:] * d2[:-1] - d1[:-1] * d2[1:], axis=1))))
    u = d3 / np.linalg.norm(d3, axis=1, keepdims=True)
    if np.any(1.0 + np.sum(u[:-1] * u[1:], axis=1) < 1e-12):
        return ortho, twist, float("inf")
    transport = max(float(np.max(np.linalg.norm(d[1:] - _transport(u[:-1], u[1:], d[:-1]), axis=1))) for d in (d1, d2))
    return ortho, twist, transport


def _transport(a, b, v):
    """Parallel transport of the rows of v along the great arcs from the unit rows of a to those of b
    (eq. 10): the rotation ``I + ŵ + ŵ²/(1 + c)`` with ``w = a × b``, ``c = a·b``; NaN for antipodal a, b."""
    w = np.cross(a, b)
    c = np.sum(a * b, axis=-1)
    wv = np.cross(w, v)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = v + wv + np.cross(w, wv) / (1.0 + c)[..., None]
    out[1.0 + c < 1e-12] = np.nan
    return out


def _signed_angle(u, v, axis):
    """Angle from u to v about axis (rows), in (−π, π]."""
    return np.arctan2(np.sum(np.cross(u, v) * axis, axis=-1), np.sum(u * v, axis=-1))


def _unit_directors(q):
    q = np.asarray(q, dtype=float)
    if q.ndim != 2 or q.shape[1] != 9 or len(q) == 0:
        raise ValueError(f"q must have shape (N+1, 9), got {q.shape}")
    return [d / np.linalg.norm(d, axis=1, keepdims=True) for d in (q[:, 0:3], q[:, 3:6], q[:, 6:9])]


def twist_angle(q) -> np.ndarray:
    """Accumulated twist of the frame along ``q`` of shape (N+1, 9), shape (N+1,).

    Per step, the angle about d_{3,n+1} from the parallel transport of d_{1,n} along the arc
    d_{3,n} → d_{3,n+1} (eq. 10) to d_{1,n+1}; summed. Zero for a non-twisting frame, about
    ∫ w·d3 dt for a body that spins about d3 (eq. 25: ψ̇ = w·d3).
    """
    d1, _, d3 = _unit_directors(q)
    steps = _signed_angle(_transport(d3[:-1], d3[1:], d1[:-1]), d1[1:], d3[1:])
    return np.concatenate([[0.0], np.cumsum(steps)])


def holonomy_angle(q) -> np.ndarray:
    """Angle about d_{3,n} from the transport of d_{1,0} along the single great arc d_{3,0} → d_{3,n}
    to d_{1,n}, shape (N+1,), in (−π, π]; NaN where d_{3,n} = −d_{3,0}.

    For a frame transported along the path of d3 this is the holonomy of the loop "path, then the
    arc back to d_{3,0}": by Gauss–Bonnet it equals the loop's enclosed area (:func:`enclosed_area`)
    modulo 2π.
    """
    d1, _, d3 = _unit_directors(q)
    start = np.broadcast_to(d3[0], d3.shape)
    return _signed_angle(_transport(start, d3, np.broadcast_to(d1[0], d1.shape).copy()), d1, d3)


def enclosed_area(d3) -> np.ndarray:
    """Signed area of the spherical polygon d_{3,0}, …, d_{3,n} (great arcs between the points)
    closed by the arc back to d_{3,0}, for every n, shape (N+1,).

    Fan triangulation from d_{3,0}; each triangle (a, b, c) has the signed area
    ``2 atan2(a·(b × c), 1 + a·b + b·c + c·a)`` (positive when a, b, c run anticlockwise seen from
    outside the sphere).
    """
    d3 = np.asarray(d3, dtype=float)
    if d3.ndim != 2 or d3.shape[1] != 3:
        raise ValueError(f"d3 must have shape (N+1, 3), got {d3.shape}")
    u = d3 / np.linalg.norm(d3, axis=1, keepdims=True)
    a, b, c = u[0], u[1:-1], u[2:]
    E = 2.0 * np.arctan2(np.cross(b, c) @ a, 1.0 + b @ a + np.sum(b * c, axis=1) + c @ a)
    return np.concatenate([np.zeros(min(len(u), 2)), np.cumsum(E)])
