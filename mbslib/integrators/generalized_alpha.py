"""Index-3 generalized-α (Arnold & Brüls 2007) and Lie group generalized-α (Brüls & Cardona 2010).

Paper 002 (Holzinger, Arnold & Gerstmayr 2024), Sect. 3.3–3.5, Algorithms 4 and 5, eqs. (33)–(43).
One step solves, for the Newton unknowns ``(Δq, λ)``,

    r = M(q) v̇ − g(q, v, t) + Bᵀ(q) λ = 0,   Φ(q) = 0,                         (39)/(34)

with ``q = UAC(q_n, Δq)`` and the generalized-α relations between ``Δq``, ``v`` and ``v̇``. For a
Lie group model ``UAC`` is the LGT map and the iteration matrix (40) carries ``T_exp(Δq)`` on the
stiffness and constraint blocks; the paper replaces it by ``I`` (``use_texp=False``). For a
classical model ``UAC`` is addition, ``T_exp = I`` and Algorithm 5 *is* Algorithm 4: ``Δq`` is
``q_{n+1} − q_n``, ``v = q̇``, ``v̇ = q̈``. So one numba kernel runs both, and every model:
it takes the model's compiled kernels as an argument (:mod:`mbslib.formulations.compiled`) and
is compiled once; its time loop allocates nothing per step, and the evaluations, the iteration
matrix and the solve are inlined into it (calls passing their arrays cost up to a tenth of a step).
What the Python entry points take of a model is :class:`GeneralizedAlphaModel`.

Details (reconstructed in spec §2.10–2.13, following the authors' Exudyn solver):

- ``K_t = −∂g/∂z`` at ``z = 0`` for ``q ∘ exp(z)`` and ``C_t = −∂g/∂v``, analytic, from the
  model's kernels (eqs. 37/42, 38/43: derivatives of ``M v̇`` and of the constraint forces are
  neglected, as in the paper);
- Bottasso scaling: equilibrium rows times ``β h²``, multipliers solved as ``β h² Δλ``;
- convergence: ``|r| ≤ max(r_tol |r⁽⁰⁾|, a_tol)`` with ``r⁽⁰⁾`` the residual of the predictor,
  and ``|Φ| ≤ a_tol``;
- the iteration matrix is assembled and factorised as a band matrix (:func:`band_structure`):
  at bind time the unknowns ``(Δq, λ)`` are ordered by reverse Cuthill–McKee on the model's
  sparsity pattern (``pattern``; dense without it) when that narrows the band, so that a chain
  or tree of bodies costs O(n) per step: its band width does not grow with the number of
  bodies. The factorisation is Gaussian elimination with partial pivoting (the constraint block
  of (40) is zero) restricted to the band, also when the band's rows hold the whole matrix (the
  slider–crank); for a dense model it is that of the whole matrix;
- full Newton re-evaluates and factorises the iteration matrix in every iteration; modified
  Newton keeps its LU factors across steps and re-evaluates it when the error contracts by less
  than the factor ``contractivity`` or after ``max_modified`` iterations without update;
- the work is counted where it is done: Newton iterations, residual evaluations (39),
  iteration-matrix evaluations (40) and LU factorisations (:class:`~mbslib.trajectory.Work`);
- consistent initial accelerations from the constrained equations of motion.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numba
import numpy as np
from numba import types

from mbslib.formulations.compiled import FORM_T, MODEL_T, bind, machine_code, workspace
from mbslib.in_place import in_place
from mbslib.kernels import band_first, band_lu_factor, band_lu_solve_in_place, band_width, mv
from mbslib.newton import NewtonError, NewtonReport, band_order, band_widths
from mbslib.simulate import time_grid
from mbslib.trajectory import Trajectory, Work
from mbslib.validation import in_range, positive


@runtime_checkable
class GeneralizedAlphaModel(Protocol):
    """A model as the generalized-α entry points take it, such as
    :class:`mbslib.systems.lie_group_mbs.CompiledModel`: compiled bundles, not Python methods.

    ``kernels`` is the kernel bundle ``(dynamics, constraints, record, uac, tangent, tangent_inv)`` of numba
    functions with the signatures of :data:`mbslib.formulations.compiled.MODEL_T`: ``M``, ``g``
    and with ``jac`` ``K = −∂g/∂z``, ``C = −∂g/∂v`` (eqs. 9–14, 23, 37/38, 42/43); ``Φ`` and
    ``B`` (eqs. 10, 34); the record of a time loop; the update map UAC (Algorithm 1) and
    ``T_exp(Δq)`` (40). ``form`` is the formulation bundle they take first
    (:data:`~mbslib.formulations.compiled.FORM_T`). A state is ``x = [q; v]``, shape (2 n,).

    Attributes
    ----------
    kernels : tuple
        Kernel bundle (dynamics, constraints, record, uac, tangent, tangent_inv), MODEL_T.
    form : tuple
        Formulation bundle (l, extra, kin, update, tangent, normalization, tangent_inv), FORM_T.
    P : ndarray
        Flat parameter vector, float64.
    n : int
        Number of coordinates (= velocities).
    n_constraints : int
        Number of constraints Φ (multipliers λ).
    n_pages : int
        4×4 scratch pages of the kernels (:func:`mbslib.formulations.compiled.workspace`).
    n_record : int
        Values per record of ``kernels[2]``.
    pattern : tuple or None
        Structural nonzeros ``(N, Bp)`` (boolean, n × n and n_constraints × n) of ``M, K, C,
        K T_exp`` and of ``B, B T_exp``, or None for dense matrices
        (:class:`~mbslib.formulations.compiled.ModelKind`).
    """

    kernels: tuple
    form: tuple
    P: np.ndarray
    n: int
    n_constraints: int
    n_pages: int
    n_record: int
    pattern: tuple | None


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
# numba kernels (compiled once for every model: the model is an argument of type MODEL_T)
# ---------------------------------------------------------------------------------------------

_V, _I8, _F8, _B1 = types.float64[::1], types.int64, types.float64, types.boolean
_M2, _IV = types.float64[:, ::1], types.int64[::1]
#: numba type of a band structure (:class:`BandStructure`, ``arrays``).
_BAND_T = types.Tuple((_IV, _IV, _IV, _IV, _IV, _IV, _IV, _IV, _I8, _I8))
_COEF_T = types.UniTuple(_F8, 4)
_SET_T = types.Tuple((_B1, _F8, _F8, _I8, _F8, _I8, _B1, _I8))


@numba.njit(cache=True, inline="always")
def _norm(x):
    """Euclidean norm (no temporary array)."""
    acc = 0.0
    for i in range(x.size):
        acc += x[i] * x[i]
    return np.sqrt(acc)


@numba.njit(cache=True, inline="always")
def _evaluate(model, form, P, band, q, v, vd, lam, t, jac, work, M, g, K, C, B, phi, r):
    """Residual (39)/(34) ``r = M v̇ − g + Bᵀλ``, ``Φ`` and ``B`` at the iterate; with ``jac``
    also ``K`` and ``C`` for the iteration matrix. The products run over the structural
    nonzeros of ``band`` (rows of ``M`` and of ``B``)."""
    model[0](form, P, q, v, t, jac, work, M, g, K, C)
    model[1](form, P, q, work, phi, B)
    _, row, col, _, brow, bcol, _, _, _, _ = band
    n = q.size
    for i in range(n):
        acc = -g[i]
        for e in range(row[i], row[i + 1]):
            acc += M[i, col[e]] * vd[col[e]]
        r[i] = acc
    for jj in range(lam.size):
        lj = lam[jj]
        for e in range(brow[jj], brow[jj + 1]):
            r[bcol[e]] += B[jj, bcol[e]] * lj


@numba.njit(cache=True, inline="always")
def _iteration_matrix(model, form, P, band, dq, scale, beta_p, gamma_p, use_texp, M, K, C, B, T, S):
    """Scaled iteration matrix (40)/(35) ``[[βh² (M β' + C γ' + K T), Bᵀ], [B T, 0]]`` into the
    band storage ``S`` of ``band`` (``scale = βh²``) from the ``M, K, C, B`` of the last
    :func:`_evaluate` with ``jac``: its structural nonzeros only."""
    _, row, col, at, brow, bcol, b_up, b_low, _, _ = band
    n = M.shape[0]
    j = B.shape[0]
    if use_texp:
        model[4](form, P, dq, T)
    S[:, :] = 0.0
    flat = S.reshape(S.size)
    for i in range(n):
        for e in range(row[i], row[i + 1]):
            k = col[e]
            kt = K[i, k]
            if use_texp:
                kt = 0.0
                for em in range(row[i], row[i + 1]):
                    kt += K[i, col[em]] * T[col[em], k]
            flat[at[e]] = scale * (M[i, k] * beta_p + C[i, k] * gamma_p + kt)
    for jj in range(j):
        for e in range(brow[jj], brow[jj + 1]):
            k = bcol[e]
            flat[b_up[e]] = B[jj, k]
            bt = B[jj, k]
            if use_texp:
                bt = 0.0
                for em in range(brow[jj], brow[jj + 1]):
                    bt += B[jj, bcol[em]] * T[bcol[em], k]
            flat[b_low[e]] = bt


@numba.njit(cache=True, inline="always")
def _band_solve(band, S, piv, b, y, x):
    """``x`` = solution of the system factorised in ``S, piv`` for the right-hand side ``b``, both
    in the model's order of unknowns (``y`` is scratch in the band's order)."""
    pos, kl, ku = band[0], band[8], band[9]
    for i in range(b.size):
        y[pos[i]] = b[i]
    band_lu_solve_in_place(S, kl, ku, piv, y)
    for i in range(b.size):
        x[i] = y[pos[i]]


@numba.njit(cache=True)
def _initial_acceleration(model, form, P, band, q, v, t, n_pages, j):
    """Consistent ``v̇₀, λ₀`` from ``[[M, Bᵀ], [B, 0]] [v̇; λ] = [g; −Ḃ v]`` (Ḃ v by differences
    of B along the update map: once per run, outside Newton), in the band storage of (40)
    (``K = C = 0`` without ``jac``). NaN if the matrix is singular."""
    n = q.size
    kl, ku = band[8], band[9]
    work = workspace(n_pages)
    M, g, K, C = np.zeros((n, n)), np.zeros(n), np.zeros((n, n)), np.zeros((n, n))
    B, phi = np.zeros((j, n)), np.zeros(j)
    model[0](form, P, q, v, t, False, work, M, g, K, C)
    rhs = np.zeros(n + j)
    rhs[:n] = g
    if j > 0:
        model[1](form, P, q, work, phi, B)
        s = 1e-6 / max(1.0, np.max(np.abs(v)))
        qs = np.empty(n)
        for sign in (1.0, -1.0):
            model[3](form, P, q, sign * s * v, qs)
            model[1](form, P, qs, work, phi, B)
            rhs[n:] -= sign * mv(B, v) / (2.0 * s)
        model[1](form, P, q, work, phi, B)
    A, piv = np.zeros((n + j, band_width(n + j, kl, ku))), np.zeros(n + j, dtype=np.int64)
    _iteration_matrix(model, form, P, band, v, 1.0, 1.0, 0.0, False, M, K, C, B, K, A)
    x = np.full(n + j, np.nan)
    if band_lu_factor(A, kl, ku, piv):
        _band_solve(band, A, piv, rhs, np.zeros(n + j), x)
    return x[:n], x[n:]


@numba.njit(cache=True)
def _buffers(n, j, n_pages, kl, ku):
    """The arrays of :func:`_integrate`, zero: ``(work, M, g, K, C, T, B, Φ, r, S, piv, b, y, x,
    q₁, v₁, v̇₁, a₁, Δq, totals)``, ``totals`` = (iterations, residuals, matrices, factorisations)."""
    return (workspace(n_pages), np.zeros((n, n)), np.zeros(n), np.zeros((n, n)), np.zeros((n, n)),
            np.zeros((n, n)), np.zeros((j, n)), np.zeros(j), np.zeros(n),
            np.zeros((n + j, band_width(n + j, kl, ku))), np.zeros(n + j, dtype=np.int64), np.zeros(n + j),
            np.zeros(n + j), np.zeros(n + j), np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n),
            np.zeros(4, dtype=np.int64))


@in_place
def _integrate(model, form, P, band, j, q, v, vd, a, lam, t0, h, n_steps, coefficients, settings, record_every,
               rec, history, buffers):
    """Advance ``q, v, v̇, a`` (in place) by ``n_steps`` Lie group / classical generalized-α steps
    from ``t0`` (Algorithm 5 ≡ Algorithm 4 for addition UAC); ``λ`` of the last step to ``lam``.

    ``coefficients = (α_m, α_f, β, γ)`` and ``settings`` (see :func:`_settings`) come from the
    Python records. Every ``record_every`` steps the model's record goes to the next row of
    ``rec``; ``history[k]`` receives the error of iterate k of the current step (in units of the
    tolerance). A step whose Newton iteration fails ends the loop with the state at its start.
    The arrays it works in are ``buffers`` (:func:`_buffers`, allocated once per run: no
    allocation per step); the totals go to their last one. Returns the largest iteration count,
    the failed step (−1 if none), and the status and iterations of the last step (status 0
    converged, 1 no convergence, 2 singular matrix or non-finite residual). The iteration matrix
    lives in the band storage of ``band`` (:class:`BandStructure`).
    """
    alpha_m, alpha_f, beta, gamma = coefficients
    modified, rtol, atol, max_iter, contractivity, max_modified, use_texp, check_from = settings
    n = q.size
    kl, ku = band[8], band[9]
    work, M, g, K, C, T, B, phi, r, S, piv, b, y, x, q1, v1, vd1, a1, dq, totals = buffers
    beta_p = (1.0 - alpha_m) / (h * h * beta * (1.0 - alpha_f))
    gamma_p = gamma / (h * beta)
    scale = beta * h * h
    have_S = False
    max_it = 0
    failed = -1
    status = 0
    n_iter = 0
    for step in range(n_steps):
        t = t0 + step * h + h
        for i in range(n):
            vd1[i] = 0.0  # line 1
            a1[i] = (alpha_f * vd[i] - alpha_m * a[i]) / (1.0 - alpha_m)  # line 2
            v1[i] = v[i] + h * (1.0 - gamma) * a[i] + h * gamma * a1[i]  # line 3
            dq[i] = h * v[i] + h * h * (0.5 - beta) * a[i] + h * h * beta * a1[i]  # lines 4–5
        lam[:] = 0.0
        model[3](form, P, q, dq, q1)  # line 6
        n_iter = 0
        since = 0
        err_prev = np.inf
        tol_r = atol
        status = 1
        while True:  # line 7
            jac = (not modified) or (not have_S) or since >= max_modified
            _evaluate(model, form, P, band, q1, v1, vd1, lam, t, jac, work, M, g, K, C, B, phi, r)  # lines 8–9
            totals[1] += 1
            norm_r = _norm(r)
            norm_phi = _norm(phi)
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
            if jac or (n_iter >= check_from and err > contractivity * err_prev):
                if not jac:  # the contraction test asks for a new matrix: K and C at this iterate
                    _evaluate(model, form, P, band, q1, v1, vd1, lam, t, True, work, M, g, K, C, B, phi, r)
                _iteration_matrix(model, form, P, band, dq, scale, beta_p, gamma_p, use_texp, M, K, C, B, T, S)  # 12
                totals[2] += 1
                have_S = band_lu_factor(S, kl, ku, piv)
                totals[3] += 1
                since = 0
                if not have_S:
                    status = 2
                    break
            for i in range(n):
                b[i] = -scale * r[i]
            for jj in range(j):
                b[n + jj] = -phi[jj]
            _band_solve(band, S, piv, b, y, x)  # line 13
            if not np.isfinite(_norm(x)):
                status = 2
                break
            for i in range(n):
                dq[i] += x[i]  # line 14
            model[3](form, P, q, dq, q1)  # line 15
            for i in range(n):
                v1[i] += gamma_p * x[i]  # line 16
                vd1[i] += beta_p * x[i]
            for jj in range(j):
                lam[jj] += x[n + jj] / scale
            n_iter += 1
            since += 1
            err_prev = err
        totals[0] += n_iter
        max_it = max(max_it, n_iter)
        if status != 0:  # keep the state at the start of the failing step
            failed = step
            break
        for i in range(n):
            a[i] = a1[i] + (1.0 - alpha_f) / (1.0 - alpha_m) * vd1[i]  # line 17
            q[i], v[i], vd[i] = q1[i], v1[i], vd1[i]
        if record_every > 0 and (step + 1) % record_every == 0:
            model[2](form, P, q, v, work, rec[(step + 1) // record_every])
    return max_it, failed, status, n_iter


@numba.njit((MODEL_T, FORM_T, _V, _BAND_T, _I8, _I8, _I8, _V, _V, _F8, _F8, _I8, _COEF_T, _SET_T, _I8), cache=True)
def _run(model, form, P, band, j, n_pages, width, q0, v0, t0, h, n_steps, coefficients, settings, record_every):
    """Time loop from consistent initial accelerations at ``t0``: final ``q, v``, totals, largest
    iteration count, failed step (−1 if none), record (``width`` values per row), and the status,
    iterations and error history of the last step (see :func:`_integrate`)."""
    vd, lam = _initial_acceleration(model, form, P, band, q0, v0, t0, n_pages, j)
    q, v, a = q0.copy(), v0.copy(), vd.copy()
    n_rec = n_steps // record_every + 1 if record_every > 0 else 0
    rec = np.zeros((n_rec, width))
    if n_rec > 0:
        model[2](form, P, q, v, workspace(n_pages), rec[0])
    history = np.zeros(settings[3] + 1)
    buffers = _buffers(q.size, j, n_pages, band[8], band[9])
    max_it, failed, status, n_iter = _integrate(model, form, P, band, j, q, v, vd, a, lam, t0, h, n_steps,
                                                coefficients, settings, record_every, rec, history, buffers)
    totals = buffers[-1]
    return q, v, totals, max_it, failed, rec, status, n_iter, history


@numba.njit((MODEL_T, FORM_T, _V, _BAND_T, _I8, _I8, _V, _V, _V, _V, _F8, _F8, _COEF_T, _SET_T, _V), cache=True)
def _step_entry(model, form, P, band, j, n_pages, q, v, vd, a, t, h, coefficients, settings, history):
    """One step of :func:`_integrate` from ``t`` (for :func:`step_genalpha`)."""
    lam = np.zeros(j)
    # np.int64: the literals 1 and 0 would make numba compile _integrate a second time (for
    # Literal[int] arguments) instead of reusing the specialization of _run
    buffers = _buffers(q.size, j, n_pages, band[8], band[9])
    _, _, status, n_iter = _integrate(model, form, P, band, j, q, v, vd, a, lam, t, h, np.int64(1),
                                      coefficients, settings, np.int64(0), np.zeros((0, 0)), history, buffers)
    totals = buffers[-1]
    return q, v, vd, a, lam, n_iter, status, totals


@numba.njit((MODEL_T, FORM_T, _V, _BAND_T, _I8, _I8, _V, _V, _F8), cache=True)
def _initial_entry(model, form, P, band, j, n_pages, q, v, t):
    """:func:`_initial_acceleration` (for :func:`initial_state`)."""
    return _initial_acceleration(model, form, P, band, q, v, t, n_pages, j)


@numba.njit((MODEL_T, FORM_T, _V, _BAND_T, _I8, _I8, _V, _V, _V, _V, _F8), cache=True)
def _residual_entry(model, form, P, band, j, n_pages, q, v, vd, lam, t):
    """Residual and constraints of one iterate."""
    n = q.size
    phi, r = np.zeros(j), np.zeros(n)
    _evaluate(model, form, P, band, q, v, vd, lam, t, False, workspace(n_pages), np.zeros((n, n)), np.zeros(n),
              np.zeros((n, n)), np.zeros((n, n)), np.zeros((j, n)), phi, r)
    return r, phi


@numba.njit((MODEL_T, FORM_T, _V, _BAND_T, _I8, _I8, _V, _V, _V, _F8, _F8, _F8, _F8, _F8, _B1), cache=True)
def _matrix_entry(model, form, P, band, j, n_pages, q, v, dq, t, h, beta, beta_p, gamma_p, use_texp):
    """Iteration matrix at ``q, v`` (v̇ and λ do not enter it), dense, in the model's order."""
    n = q.size
    pos, kl, ku = band[0], band[8], band[9]
    M, K, C, B = np.zeros((n, n)), np.zeros((n, n)), np.zeros((n, n)), np.zeros((j, n))
    S = np.zeros((n + j, band_width(n + j, kl, ku)))
    _evaluate(model, form, P, band, q, v, np.zeros(n), np.zeros(j), t, True, workspace(n_pages), M, np.zeros(n),
              K, C, B, np.zeros(j), np.zeros(n))
    _iteration_matrix(model, form, P, band, dq, beta * h * h, beta_p, gamma_p, use_texp, M, K, C, B,
                      np.zeros((n, n)), S)
    dense = np.zeros((n + j, n + j))
    for i in range(n + j):
        for k in range(n + j):
            if -kl <= pos[k] - pos[i] <= ku:
                dense[i, k] = S[pos[i], pos[k] - band_first(pos[i], n + j, kl, ku)]
    return dense


# ---------------------------------------------------------------------------------------------
# Python interface
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BandStructure:
    """Order and band of the unknowns ``(Δq, λ)`` of the iteration matrix (40) of one model.

    ``order[p]`` is the unknown at position ``p`` of the band (the model's order is that of
    ``(Δq, λ)``); ``kl`` and ``ku`` are the sub- and superdiagonals of the reordered matrix,
    so a factorisation costs O((n + j) kl (kl + ku)). ``arrays`` is what the compiled kernels
    take: the position of each unknown, the rows of ``M, K, C`` (start of each row, column of
    each entry, its index in the flattened band storage of :func:`mbslib.kernels.band_lu_factor`), the
    rows of ``B`` (start, column, places of ``Bᵀ`` and of ``B``), ``kl``, ``ku``.
    """

    order: np.ndarray
    kl: int
    ku: int
    arrays: tuple


def band_structure(n: int, n_constraints: int, pattern: tuple | None = None) -> BandStructure:
    """The band of the iteration matrix (40) for the sparsity ``pattern = (N, Bp)`` of ``M, K, C``
    and of ``B`` (:class:`GeneralizedAlphaModel`; None: dense).

    Reverse Cuthill–McKee on the symmetric pattern of (40) (:func:`mbslib.newton.band_order`)
    replaces the model's own order if it at least halves the cost ``kl (kl + ku)`` of the
    factorisation (a dense model keeps its order, and its factorisation is that of the whole
    matrix). For a chain or a tree the band
    width then depends on the bodies of a joint, not on their number.
    """
    j = n_constraints
    if pattern is None:
        N, Bp = np.ones((n, n), dtype=bool), np.ones((j, n), dtype=bool)
    else:
        N, Bp = (np.asarray(a, dtype=bool) for a in pattern)
        if N.shape != (n, n) or Bp.shape != (j, n):
            raise ValueError(f"pattern must be boolean arrays of shapes ({n}, {n}) and ({j}, {n}), "
                             f"got {N.shape} and {Bp.shape}")
    S = np.zeros((n + j, n + j), dtype=bool)
    S[:n, :n], S[:n, n:], S[n:, :n] = N, Bp.T, Bp
    S[np.arange(n + j), np.arange(n + j)] = True  # the pivots
    rows, cols = np.nonzero(S)
    candidates = []
    for order, pos in ((np.arange(n + j), np.arange(n + j)), band_order(S)):
        candidates.append((order, *band_widths(rows, cols, pos), pos))
    (order, kl, ku, pos), (_, kl_r, ku_r, _) = candidates
    if 2 * kl_r * (kl_r + ku_r) <= kl * (kl + ku):
        order, kl, ku, pos = candidates[1]
    w = min(n + j, 2 * kl + ku + 1)

    def place(r, c):  # entry (r, c) of (40), model order: its index in the flattened band storage
        return pos[r] * w + pos[c] - np.minimum(np.maximum(0, pos[r] - kl), n + j - w)

    rows, cols = np.nonzero(N)
    brows, bcols = np.nonzero(Bp)
    arrays = (pos, np.searchsorted(rows, np.arange(n + 1)).astype(np.int64), cols.astype(np.int64),
              place(rows, cols).astype(np.int64), np.searchsorted(brows, np.arange(j + 1)).astype(np.int64),
              bcols.astype(np.int64), place(bcols, n + brows).astype(np.int64),
              place(n + brows, bcols).astype(np.int64), kl, ku)
    return BandStructure(order, kl, ku, arrays)


_BANDS: dict = {}


def model_band(model: GeneralizedAlphaModel) -> BandStructure:
    """:func:`band_structure` of ``model`` (computed once per model and parameter vector)."""
    key = (type(model), model.kernels, model.form, np.asarray(model.P, dtype=float).tobytes())
    if key not in _BANDS:
        if len(_BANDS) >= 64:
            _BANDS.clear()
        _BANDS[key] = band_structure(model.n, model.n_constraints, model.pattern)
    return _BANDS[key]


def factorisation_work(model: GeneralizedAlphaModel) -> float:
    """Multiply–adds of one factorisation of the iteration matrix (40) of ``model`` as the
    kernels perform it (:func:`model_band`, :func:`mbslib.kernels.band_lu_factor`): ``N³/3`` for
    a dense matrix (``N = n + j`` unknowns, ``kl = ku = N − 1``), else ``N kl (kl + ku)``."""
    band, size = model_band(model), model.n + model.n_constraints
    if band.kl == band.ku == size - 1:
        return size**3 / 3
    return float(size * band.kl * (band.kl + band.ku))


def _coefficients(method: GeneralizedAlpha) -> tuple:
    """``(α_m, α_f, β, γ)`` for the compiled kernels."""
    return float(method.alpha_m), float(method.alpha_f), float(method.beta), float(method.gamma)


def _model_args(model: GeneralizedAlphaModel) -> tuple:
    """The kernel and formulation bundles, parameters, band structure, number of constraints and
    scratch pages."""
    return *bind(model.kernels, model.form), np.ascontiguousarray(model.P, dtype=float), model_band(model).arrays, \
        model.n_constraints, model.n_pages


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


def _newton_error(status: int, history, n_iter: int, t: float, step: int | None = None) -> NewtonError:
    """The failure of a step that ended with ``status`` (:func:`_integrate`): its errors of the
    iterates in units of the tolerance."""
    reason = "no convergence" if status == 1 else "singular iteration matrix or non-finite residual"
    return NewtonError(f"generalized-α: {reason}", tuple(float(e) for e in history[: n_iter + 1]), t=t, step=step)


def integrate_genalpha(
    model: GeneralizedAlphaModel,
    x0,
    h: float,
    t_end: float,
    *,
    t0: float = 0.0,
    method: GeneralizedAlpha = GeneralizedAlpha(),
    newton: NewtonSettings = NewtonSettings(),
    record_every: int | None = None,
) -> Trajectory:
    """Integrate ``model`` from ``x0 = [q0; v0]`` at ``t0`` to ``t_end`` with fixed step ``h``.

    Returns a :class:`~mbslib.trajectory.Trajectory`: every ``record_every`` steps (None: none) the
    model's record (centre-of-mass position and velocity of the heavy tops, support point of the
    rotor, the state ``[q; v]`` of a system), the final ``q, v``, the work (steps taken, one
    residual evaluation (39) per iterate with the predictor, Newton iterations with the failing
    step's, iteration-matrix evaluations (40) and their LU factorisations) and the largest
    iteration count. A step whose Newton iteration fails ends the run with a
    :class:`~mbslib.newton.NewtonError` naming it (``failed_step``; ``q, v`` are the state at its
    start): the paper counts such a step size as "cannot simulate"; there is no step-size reduction.
    ``h``, ``t_end``, ``t0`` and ``record_every`` follow :func:`mbslib.simulate.time_grid`.
    """
    if not isinstance(model, GeneralizedAlphaModel):
        raise TypeError(f"model must be a compiled model (GeneralizedAlphaModel), got {type(model).__name__}")
    n_steps = time_grid(h, t_end, t0=t0, record_every=record_every)
    every = 0 if record_every is None else int(record_every)
    n = model.n
    x0 = np.asarray(x0, dtype=float)
    if x0.shape != (2 * n,):
        raise ValueError(f"x0 must have shape ({2 * n},), got {x0.shape}")
    run, model_args = machine_code(_run), _model_args(model)  # loads or compiles the kernels, untimed
    start, start_cpu = time.perf_counter(), time.process_time()
    q, v, totals, max_it, failed, rec, status, last_iter, history = run(
        *model_args,
        model.n_record,
        x0[:n].copy(),
        x0[n:].copy(),
        float(t0),
        float(h),
        int(n_steps),
        _coefficients(method),
        _settings(newton),
        every,
    )
    wall, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    done = n_steps if failed < 0 else int(failed)
    failure = None if failed < 0 else _newton_error(status, history, last_iter, t0 + done * h, done)
    rows = rec[: done // every + 1] if every > 0 else rec
    n_iter, n_res, n_jac, n_lu = (int(x) for x in totals)
    work = Work(steps=done, rhs_evaluations=n_res, newton_iterations=n_iter, jacobian_evaluations=n_jac,
                factorisations=n_lu)
    return Trajectory(t0 + h * (every * np.arange(len(rows))), rows, wall_time=wall, cpu_time=cpu,
                      failure=failure, work=work, h=float(h), q=q, v=v, t_final=t0 + done * h,
                      max_iterations=int(max_it))


def initial_state(model: GeneralizedAlphaModel, x0) -> np.ndarray:
    """Extended generalized-α state ``[q; v; v̇; a]`` with consistent initial accelerations."""
    n = model.n
    x0 = np.asarray(x0, dtype=float)
    vd, _ = machine_code(_initial_entry)(*_model_args(model), x0[:n].copy(), x0[n:].copy(), 0.0)
    return np.concatenate([x0, vd, vd])


def residual_genalpha(model: GeneralizedAlphaModel, q, v, vd, lam, t: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Residual (39)/(34) ``M v̇ − g + Bᵀ λ`` and constraints ``Φ(q)`` of one iterate."""
    arrays = (np.ascontiguousarray(a, dtype=float) for a in (q, v, vd, lam))
    return machine_code(_residual_entry)(*_model_args(model), *arrays, float(t))


def iteration_matrix(
    model: GeneralizedAlphaModel,
    q,
    v,
    dq,
    h: float,
    *,
    method: GeneralizedAlpha = GeneralizedAlpha(),
    use_texp: bool = False,
    t: float = 0.0,
) -> np.ndarray:
    """Scaled iteration matrix (40)/(35), shape (n + j, n + j), with the analytic ``K`` and ``C``."""
    beta_p, gamma_p = method.coefficients(h)
    return machine_code(_matrix_entry)(*_model_args(model), *(np.ascontiguousarray(a, dtype=float) for a in (q, v, dq)),
                         float(t), float(h), float(method.beta), float(beta_p), float(gamma_p), bool(use_texp))


def step_genalpha(
    model: GeneralizedAlphaModel,
    x_n,
    h: float,
    t: float = 0.0,
    *,
    method: GeneralizedAlpha = GeneralizedAlpha(),
    newton: NewtonSettings = NewtonSettings(),
) -> tuple[np.ndarray, NewtonReport]:
    """One full-Newton step of the extended state ``x = [q; v; v̇; a]`` (see :func:`initial_state`).

    A pure step function for :func:`mbslib.simulate.simulate`. Raises :class:`~mbslib.newton.NewtonError` if
    the iteration fails; the report's history holds the error of every iterate in units of the
    tolerance (converged when ≤ 1).
    """
    if newton.modified:
        raise ValueError(
            "step_genalpha runs full Newton; modified Newton keeps the matrix across steps"
        )
    n = model.n
    x_n = np.asarray(x_n, dtype=float)
    history = np.zeros(newton.max_iter + 1)
    q, v, vd, a, lam, it, status, totals = machine_code(_step_entry)(
        *_model_args(model),
        *(x_n[k * n:(k + 1) * n].copy() for k in range(4)),
        float(t),
        float(h),
        _coefficients(method),
        _settings(newton),
        history,
    )
    if status != 0:
        raise _newton_error(status, history, it, t)
    errors = tuple(float(e) for e in history[: it + 1])
    _, n_residual, n_jacobian, n_factorisations = (int(c) for c in totals)
    return np.concatenate([q, v, vd, a]), NewtonReport(True, int(it), errors, n_residual, n_jacobian,
                                                       n_factorisations)
