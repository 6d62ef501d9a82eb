"""Index-3 generalized-α (Arnold & Brüls 2007) and Lie group generalized-α (Brüls & Cardona 2010).

Paper 002 (Holzinger, Arnold & Gerstmayr 2024), Sect. 3.3–3.5, Algorithms 4 and 5, eqs. (33)–(43).
One step solves, for the Newton unknowns ``(Δq, λ)``,

    r = M(q) v̇ − g(q, v, t) + Bᵀ(q) λ = 0,   Φ(q) = 0,                         (39)/(34)

with ``q = UAC(q_n, Δq)`` and the generalized-α relations between ``Δq``, ``v`` and ``v̇``. For a
Lie group model ``UAC`` is the LGT map and the iteration matrix (40) carries ``T_exp(Δq)`` on the
stiffness and constraint blocks; the paper replaces it by ``I`` (``use_texp=False``). For a
classical model ``UAC`` is addition, ``T_exp = I`` and Algorithm 5 *is* Algorithm 4: ``Δq`` is
``q_{n+1} − q_n``, ``v = q̇``, ``v̇ = q̈``. So one numba kernel runs both.

Details (reconstructed in spec §2.10–2.13, following the authors' Exudyn solver):

- ``K_t = −∂g/∂z`` at ``z = 0`` for ``q ∘ exp(z)`` and ``C_t = −∂g/∂v`` by central differences
  (:func:`~mbslib.systems.lie_group_mbs.force_jacobians`; eqs. 37/42, 38/43: derivatives of
  ``M v̇`` and of the constraint forces are neglected);
- Bottasso scaling: equilibrium rows times ``β h²``, multipliers solved as ``β h² Δλ``;
- convergence: ``|r| ≤ max(r_tol |r⁽⁰⁾|, a_tol)`` with ``r⁽⁰⁾`` the residual of the predictor,
  and ``|Φ| ≤ a_tol``;
- full Newton re-evaluates and factorises the iteration matrix in every iteration; modified
  Newton keeps its LU factors across steps and re-evaluates it when the error contracts by less
  than the factor ``contractivity`` or after ``max_modified`` iterations without update;
- the work is counted where it is done: Newton iterations, residual evaluations (39),
  iteration-matrix evaluations (40) and LU factorisations (:class:`ImplicitResult`);
- consistent initial accelerations from the constrained equations of motion.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numba
import numpy as np

from mbslib.kernels import (
    lu_factor,
    lu_solve,
    mm,
    mtv,
    mv,
    solve,
)
from mbslib.newton import NewtonError, NewtonReport
from mbslib.systems.lie_group_mbs import (
    Model,
    constraint,
    constraint_jacobian,
    force,
    force_jacobians,
    mass_matrix,
    n_constraints,
    n_record,
    record,
    tangent,
    uac,
)
from mbslib.validation import in_range, positive


@dataclass(frozen=True)
class GeneralizedAlpha:
    """Generalized-α coefficients from the spectral radius at infinity (Chung–Hulbert).

    ``α_m = (2ρ∞ − 1)/(ρ∞ + 1)``, ``α_f = ρ∞/(ρ∞ + 1)``, ``γ = ½ + α_f − α_m``,
    ``β = ¼ (γ + ½)²``. The paper uses ρ∞ = 0.9 throughout.
    """

    rho_inf: float = 0.9
    alpha_m: float = field(init=False)
    alpha_f: float = field(init=False)
    gamma: float = field(init=False)
    beta: float = field(init=False)

    def __post_init__(self):
        in_range("rho_inf", self.rho_inf, 0.0, 1.0)
        r = self.rho_inf
        object.__setattr__(self, "alpha_m", (2 * r - 1) / (r + 1))
        object.__setattr__(self, "alpha_f", r / (r + 1))
        object.__setattr__(self, "gamma", 0.5 + self.alpha_f - self.alpha_m)
        object.__setattr__(self, "beta", 0.25 * (self.gamma + 0.5) ** 2)
        # second order and unconditional stability for linear problems
        assert abs(self.gamma - (0.5 + self.alpha_f - self.alpha_m)) < 1e-15
        assert (
            self.alpha_m <= self.alpha_f <= 0.5
            and self.beta >= 0.25 + 0.5 * (self.alpha_f - self.alpha_m) - 1e-15
        )

    def coefficients(self, h: float) -> tuple[float, float]:
        """``β' = (1 − α_m)/(h² β (1 − α_f))`` and ``γ' = γ/(h β)`` (eq. 33)."""
        positive(h=h)
        return (1 - self.alpha_m) / (h * h * self.beta * (1 - self.alpha_f)), self.gamma / (
            h * self.beta
        )


@dataclass(frozen=True)
class NewtonSettings:
    """Newton settings (Exudyn's defaults; the paper states none).

    Modified Newton re-evaluates the iteration matrix when the error of iterate k (k ≥
    ``contraction_check_from``) contracts by less than ``contractivity`` against iterate k − 1,
    or after ``max_modified`` iterations of one step. Ours checks from the first update on;
    Exudyn checks "only at the third step" (``contraction_check_from=3``).
    """

    modified: bool = False
    rtol: float = 1e-8
    atol: float = 1e-10
    max_iter: int = 25
    contractivity: float = 0.5
    max_modified: int = 8
    use_texp: bool = False
    contraction_check_from: int = 1

    def __post_init__(self):
        positive(rtol=self.rtol, atol=self.atol, contractivity=self.contractivity)
        if self.max_iter < 1 or self.max_modified < 1:
            raise ValueError("max_iter and max_modified must be at least 1")
        if self.contraction_check_from < 1:
            raise ValueError(f"contraction_check_from must be at least 1, got {self.contraction_check_from}")


# ---------------------------------------------------------------------------------------------
# numba kernels
# ---------------------------------------------------------------------------------------------


@numba.njit(cache=True)
def _residual(code, P, q, v, vd, lam, t, B):
    """Equilibrium residual (39)/(34) and constraints Φ at the current iterate; ``B`` is the
    constraint Jacobian at ``q`` (shared with the iteration matrix)."""
    r = mv(mass_matrix(code, q, P), vd) - force(code, q, v, t, P)
    if lam.size > 0:
        r += mtv(B, lam)
    return r, constraint(code, q, P)


@numba.njit(cache=True)
def _iteration_matrix(code, P, q, v, dq, t, h, beta, beta_p, gamma_p, use_texp, B):
    """Scaled iteration matrix (40)/(35): ``[[βh² (M β' + C γ' + K T), Bᵀ], [B T, 0]]``; ``B`` is
    the constraint Jacobian at ``q``."""
    n = q.size
    j = n_constraints(code, P)
    K, C = force_jacobians(code, q, v, t, P)
    T = tangent(code, dq) if use_texp else np.eye(n)
    S = np.zeros((n + j, n + j))
    S[:n, :n] = (beta * h * h) * (mass_matrix(code, q, P) * beta_p + C * gamma_p + mm(K, T))
    if j > 0:
        S[:n, n:] = B.T
        S[n:, :n] = mm(B, T)
    return S


@numba.njit(cache=True)
def _initial_acceleration(code, P, q, v, t):
    """Consistent ``v̇₀, λ₀`` from ``[[M, Bᵀ], [B, 0]] [v̇; λ] = [g; −Ḃ v]`` (Ḃ v by differences)."""
    n = q.size
    j = n_constraints(code, P)
    A = np.zeros((n + j, n + j))
    rhs = np.zeros(n + j)
    A[:n, :n] = mass_matrix(code, q, P)
    rhs[:n] = force(code, q, v, t, P)
    if j > 0:
        B = constraint_jacobian(code, q, P)
        A[:n, n:] = B.T
        A[n:, :n] = B
        s = 1e-6 / max(1.0, np.max(np.abs(v)))
        Bp = constraint_jacobian(code, uac(code, q, s * v), P)
        Bm = constraint_jacobian(code, uac(code, q, -s * v), P)
        rhs[n:] = -(mv(Bp, v) - mv(Bm, v)) / (2.0 * s)
    x = solve(A, rhs)
    return x[:n], x[n:]


@numba.njit(cache=True)
def _step(code, P, q_n, v_n, vd_n, a_n, t_n, h, coefficients, settings, S, piv, have_S, history):
    """One Lie group / classical generalized-α step (Algorithm 5 ≡ Algorithm 4 for addition UAC).

    ``coefficients = (α_m, α_f, β, γ)`` and ``settings`` (see :func:`_settings`) come from the
    Python records. Returns ``q, v, v̇, a, λ, n_iter, n_res, n_jac, n_lu, have_S, status``:
    Newton iterations, residual evaluations, iteration-matrix evaluations, LU factorisations
    (status 0 converged, 1 no convergence, 2 singular matrix or non-finite residual). ``S, piv``
    hold the LU factors of the iteration matrix (updated in place, kept across steps by modified
    Newton) and ``history[k]`` receives the error of iterate k (in units of the tolerance).
    """
    alpha_m, alpha_f, beta, gamma = coefficients
    modified, rtol, atol, max_iter, contractivity, max_modified, use_texp, check_from = settings
    n = q_n.size
    j = n_constraints(code, P)
    t = t_n + h
    beta_p = (1.0 - alpha_m) / (h * h * beta * (1.0 - alpha_f))
    gamma_p = gamma / (h * beta)
    scale = beta * h * h
    vd = np.zeros(n)  # line 1
    lam = np.zeros(j)
    a = (alpha_f * vd_n - alpha_m * a_n) / (1.0 - alpha_m)  # line 2
    v = v_n + h * (1.0 - gamma) * a_n + h * gamma * a  # line 3
    dq = h * v_n + h * h * (0.5 - beta) * a_n + h * h * beta * a  # lines 4–5
    q = uac(code, q_n, dq)  # line 6
    n_iter = 0
    n_res = 0
    n_jac = 0
    n_lu = 0
    since = 0
    err_prev = np.inf
    tol_r = atol
    status = 1
    rhs = np.zeros(n + j)
    while True:  # line 7
        B = constraint_jacobian(code, q, P) if j > 0 else np.zeros((0, n))
        r, phi = _residual(code, P, q, v, vd, lam, t, B)  # lines 8–9
        n_res += 1
        norm_r = np.sqrt(np.sum(r * r))
        norm_phi = np.sqrt(np.sum(phi * phi)) if j > 0 else 0.0
        if not (np.isfinite(norm_r) and np.isfinite(norm_phi)):
            status = 2
            break
        if n_iter == 0:
            tol_r = max(rtol * norm_r, atol)
        err = max(norm_r / tol_r, norm_phi / atol)
        history[min(n_iter, history.size - 1)] = err
        if err <= 1.0:  # line 10
            status = 0
            break
        if n_iter >= max_iter:
            break
        if (
            (not modified)
            or (not have_S)
            or (n_iter >= check_from and err > contractivity * err_prev)
            or since >= max_modified
        ):
            S[:, :] = _iteration_matrix(
                code, P, q, v, dq, t, h, beta, beta_p, gamma_p, use_texp, B
            )  # line 12
            n_jac += 1
            have_S = lu_factor(S, piv)
            n_lu += 1
            since = 0
            if not have_S:
                status = 2
                break
        rhs[:n] = -scale * r
        rhs[n:] = -phi
        x = lu_solve(S, piv, rhs)  # line 13
        if not np.all(np.isfinite(x)):
            status = 2
            break
        ddq = x[:n]
        dq = dq + ddq  # line 14
        q = uac(code, q_n, dq)  # line 15
        v = v + gamma_p * ddq  # line 16
        vd = vd + beta_p * ddq
        lam = lam + x[n:] / scale
        n_iter += 1
        since += 1
        err_prev = err
    a = a + (1.0 - alpha_f) / (1.0 - alpha_m) * vd  # line 17
    return q, v, vd, a, lam, n_iter, n_res, n_jac, n_lu, have_S, status


@numba.njit(cache=True)
def _run(code, P, q0, v0, h, n_steps, coefficients, settings, record_every):
    """Time loop: final ``q, v``, totals ``(iterations, residuals, matrices, LU factorisations)``,
    largest iteration count, failed step (−1 if none), record."""
    n = q0.size
    j = n_constraints(code, P)
    vd, lam = _initial_acceleration(code, P, q0, v0, 0.0)
    q = q0.copy()
    v = v0.copy()
    a = vd.copy()
    S = np.zeros((n + j, n + j))
    piv = np.zeros(n + j, dtype=np.int64)
    have_S = False
    max_iter = settings[3]
    history = np.zeros(max_iter + 1)
    totals = np.zeros(4, dtype=np.int64)  # iterations, residuals, matrices, factorisations
    max_it = 0
    failed = -1
    n_rec = n_steps // record_every + 1 if record_every > 0 else 0
    rec = np.zeros((n_rec, n_record(code, P)))
    if n_rec > 0:
        rec[0] = record(code, q, v, P)
    for k in range(n_steps):
        q_new, v_new, vd_new, a_new, lam, it, nr, nj, nlu, have_S, status = _step(
            code, P, q, v, vd, a, k * h, h, coefficients, settings, S, piv, have_S, history
        )
        totals[0] += it
        totals[1] += nr
        totals[2] += nj
        totals[3] += nlu
        max_it = max(max_it, it)
        if status != 0:  # keep the state at the start of the failing step
            failed = k
            break
        q, v, vd, a = q_new, v_new, vd_new, a_new
        if record_every > 0 and (k + 1) % record_every == 0:
            rec[(k + 1) // record_every] = record(code, q, v, P)
    return q, v, totals, max_it, failed, rec


# ---------------------------------------------------------------------------------------------
# Python interface
# ---------------------------------------------------------------------------------------------


def _coefficients(method: GeneralizedAlpha) -> tuple:
    """``(α_m, α_f, β, γ)`` for the compiled kernels."""
    return float(method.alpha_m), float(method.alpha_f), float(method.beta), float(method.gamma)


def _settings(newton: NewtonSettings) -> tuple:
    """The Newton settings as one typed tuple for the compiled kernels (one signature)."""
    return (
        bool(newton.modified),
        float(newton.rtol),
        float(newton.atol),
        int(newton.max_iter),
        float(newton.contractivity),
        int(newton.max_modified),
        bool(newton.use_texp),
        int(newton.contraction_check_from),
    )


@dataclass(frozen=True)
class ImplicitResult:
    """Outcome of :func:`integrate_genalpha`.

    Attributes
    ----------
    q, v : ndarray, shape (n,)
        Final coordinates and velocities (at the failing step's start if ``failed``).
    n_steps : int
    iterations_per_step : float
        Total Newton iterations / number of steps (the initial-acceleration solve excluded).
    jacobians : int
        Number of iteration-matrix evaluations (40).
    max_iterations : int
    failed_step : int
        Index of the step whose Newton iteration failed, −1 if none.
    wall_time : float
        Seconds of the compiled loop (wall clock).
    newton_iterations : int
        Total Newton iterations (the failing step's included).
    residual_evaluations : int
        Evaluations of the residual (39): one per iterate, the predictor included.
    factorisations : int
        LU factorisations of the iteration matrix (one per evaluation of it).
    cpu_time : float
        CPU seconds of the compiled loop (``time.process_time``).
    com : ndarray, shape (n_rec, 6) or (n_rec, 2 n)
        Every ``record_every`` steps: centre-of-mass position and velocity (single bodies,
        :func:`~mbslib.systems.lie_group_mbs.record`), the whole state ``[q; v]`` (systems).
    """

    q: np.ndarray
    v: np.ndarray
    n_steps: int
    iterations_per_step: float
    jacobians: int
    max_iterations: int
    failed_step: int
    wall_time: float
    com: np.ndarray
    newton_iterations: int = 0
    residual_evaluations: int = 0
    factorisations: int = 0
    cpu_time: float = 0.0

    @property
    def ok(self) -> bool:
        return self.failed_step < 0


def integrate_genalpha(
    model: Model,
    x0,
    h: float,
    t_end: float,
    *,
    method: GeneralizedAlpha = GeneralizedAlpha(),
    newton: NewtonSettings = NewtonSettings(),
    record_every: int = 0,
) -> ImplicitResult:
    """Integrate ``model`` from ``x0 = [q0; v0]`` at t = 0 to ``t_end`` with fixed step ``h``.

    A step whose Newton iteration fails ends the run (``failed_step``): the paper counts such
    a step size as "cannot simulate"; there is no step-size reduction.
    """
    positive(h=h, t_end=t_end)
    n_steps = round(t_end / h)
    if abs(n_steps * h - t_end) > 1e-9 * t_end:
        raise ValueError(f"t_end = {t_end} is not a whole multiple of h = {h}")
    n = model.n
    x0 = np.asarray(x0, dtype=float)
    if x0.shape != (2 * n,):
        raise ValueError(f"x0 must have shape ({2 * n},), got {x0.shape}")
    start, start_cpu = time.perf_counter(), time.process_time()
    q, v, totals, max_it, failed, rec = _run(
        model.code,
        model.P,
        x0[:n].copy(),
        x0[n:].copy(),
        float(h),
        int(n_steps),
        _coefficients(method),
        _settings(newton),
        int(record_every),
    )
    wall, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    done = n_steps if failed < 0 else max(failed, 1)
    n_iter, n_res, n_jac, n_lu = (int(x) for x in totals)
    return ImplicitResult(
        q, v, int(n_steps), n_iter / done, n_jac, int(max_it), int(failed), wall, rec,
        n_iter, n_res, n_lu, cpu,
    )


def initial_state(model: Model, x0) -> np.ndarray:
    """Extended generalized-α state ``[q; v; v̇; a]`` with consistent initial accelerations."""
    n = model.n
    x0 = np.asarray(x0, dtype=float)
    vd, _ = _initial_acceleration(model.code, model.P, x0[:n].copy(), x0[n:].copy(), 0.0)
    return np.concatenate([x0, vd, vd])


def residual_genalpha(model: Model, q, v, vd, lam, t: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Residual (39)/(34) ``M v̇ − g + Bᵀ λ`` and constraints ``Φ(q)`` of one iterate."""
    q = np.asarray(q, float)
    B = constraint_jacobian(model.code, q, model.P)
    return _residual(
        model.code,
        model.P,
        q,
        np.asarray(v, float),
        np.asarray(vd, float),
        np.asarray(lam, float),
        float(t),
        B,
    )


def iteration_matrix(
    model: Model,
    q,
    v,
    dq,
    h: float,
    *,
    method: GeneralizedAlpha = GeneralizedAlpha(),
    use_texp: bool = False,
    t: float = 0.0,
) -> np.ndarray:
    """Scaled iteration matrix (40)/(35), shape (n + j, n + j)."""
    beta_p, gamma_p = method.coefficients(h)
    q = np.asarray(q, float)
    return _iteration_matrix(
        model.code,
        model.P,
        q,
        np.asarray(v, float),
        np.asarray(dq, float),
        float(t),
        float(h),
        method.beta,
        beta_p,
        gamma_p,
        use_texp,
        constraint_jacobian(model.code, q, model.P),
    )


def step_genalpha(
    model: Model,
    x_n,
    h: float,
    t: float = 0.0,
    *,
    method: GeneralizedAlpha = GeneralizedAlpha(),
    newton: NewtonSettings = NewtonSettings(),
) -> tuple[np.ndarray, NewtonReport]:
    """One full-Newton step of the extended state ``x = [q; v; v̇; a]`` (see :func:`initial_state`).

    A pure step function for :func:`mbslib.simulate.simulate`. Raises :class:`NewtonError` if
    the iteration fails; the report's history holds the error of every iterate in units of the
    tolerance (converged when ≤ 1).
    """
    if newton.modified:
        raise ValueError(
            "step_genalpha runs full Newton; modified Newton keeps the matrix across steps"
        )
    n = model.n
    x_n = np.asarray(x_n, dtype=float)
    j = model.n_constraints
    S = np.zeros((n + j, n + j))
    piv = np.zeros(n + j, dtype=np.int64)
    history = np.zeros(newton.max_iter + 1)
    q, v, vd, a, lam, it, _, _, _, _, status = _step(
        model.code,
        model.P,
        x_n[:n].copy(),
        x_n[n : 2 * n].copy(),
        x_n[2 * n : 3 * n].copy(),
        x_n[3 * n :].copy(),
        float(t),
        float(h),
        _coefficients(method),
        _settings(newton),
        S,
        piv,
        False,
        history,
    )
    errors = tuple(float(e) for e in history[: it + 1])
    if status != 0:
        raise NewtonError(f"generalized-α Newton failed (status {status})", errors, t=t)
    return np.concatenate([q, v, vd, a]), NewtonReport(True, int(it), errors)
