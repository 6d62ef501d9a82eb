"""Explicit Runge–Kutta and Runge–Kutta–Munthe-Kaas (RKMK) methods with step-size control.

Paper 002 (Holzinger, Arnold & Gerstmayr 2024), Sect. 3.2, Algorithms 2 and 3, App. B. The
unconstrained equations of motion are integrated in first-order form: the classical formulation
2 as ``q̇ = w``, ``M̂(q) ẇ = Ĥᵀ ĝ`` (eq. 32); the Lie group formulation in local coordinates
``Δq̇ = T_exp⁻¹(Δq) v``, ``M v̇ = g`` (eqs. 23, 25), mapped back to absolute coordinates by the
UAC/LGT map after every stage (eqs. 29–31). With a vector-space UAC and ``T_exp = I`` the RKMK
step *is* the classical RK step, so one stage loop serves both (the model decides).

A stage costs one force evaluation; the classical models re-assemble and solve with their
configuration-dependent mass matrix at every stage, the Lie group models use the constant mass
matrix inverted once per run. The kernels count the work where it is done (force evaluations,
mass-matrix solves, accepted and rejected steps), so that cost claims can be asserted on counts.
Constrained models are rejected: these methods integrate ODEs only.

A model is an :class:`ExplicitModel` (a :class:`mbslib.systems.lie_group_mbs.Model`). The step and
the time loop are numba-compiled; :func:`step_rk` is the pure function of one step. The tests run
the same source with ``NUMBA_DISABLE_JIT=1`` (plain Python) and compare.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numba
import numpy as np

from mbslib.integrators.tableaux import ButcherTableau
from mbslib.kernels import (
    mv,
    sinc,
    solve,
    texp_inv_coefficient,
)
from mbslib.systems.lie_group_mbs import (
    com_state,
    force,
    is_lie,
    mass_matrix,
    tangent_inv_times,
    uac,
)
from mbslib.validation import positive


@runtime_checkable
class ExplicitModel(Protocol):
    """An unconstrained model of paper 002 as the compiled RK/RKMK stages take it: a model code and
    a flat parameter vector. The stages dispatch on ``code`` to the kernels of
    :mod:`mbslib.systems.lie_group_mbs` (mass matrix and force of eqs. 23, 25 or 32, ``T_exp⁻¹``
    and the update map UAC/LGT of eqs. 29–31), so only the models registered there run.
    A state is ``x = [q; v]``, shape (2 n,).

    Attributes
    ----------
    code : int
        Model code of :mod:`mbslib.systems.lie_group_mbs` (body model and formulation).
    P : ndarray
        Flat parameter vector of the model, float64.
    n : int
        Number of coordinates (= velocities).
    n_constraints : int
        Must be 0: the explicit methods integrate ODEs only.
    formulation : str
        "RV", "Rxyz", "EP" or "Min. Coord." (named in error messages).
    """

    code: int
    P: np.ndarray
    n: int
    n_constraints: int
    formulation: str


@numba.njit(cache=True)
def _rk_stages(code, P, q, v, t, h, A, c, Minv):
    """Stage slopes of one RK/RKMK step (Algorithm 3, lines 1–11).

    Returns ``kq, kv`` of shape (s, n), the number of force evaluations and of mass-matrix
    solves. ``Minv`` is the inverse of the constant mass matrix of a Lie group model (ignored for
    classical models).
    """
    s = c.size
    n = q.size
    kq = np.zeros((s, n))
    kv = np.zeros((s, n))
    n_rhs = 0
    n_solves = 0
    lie = is_lie(code)
    for i in range(s):
        dq = np.zeros(n)
        dv = np.zeros(n)
        for j in range(i):
            dq += (h * A[i, j]) * kq[j]
            dv += (h * A[i, j]) * kv[j]
        q_i = uac(code, q, dq)  # line 7: LGT map of the stage's local coordinates
        v_i = v + dv  # line 8
        kq[i] = tangent_inv_times(code, dq, v_i)  # line 10: eq. (25)
        f = force(code, q_i, v_i, t + c[i] * h, P)
        n_rhs += 1
        if lie:
            kv[i] = mv(Minv, f)  # line 11: constant M, eq. (23)
        else:
            kv[i] = solve(mass_matrix(code, q_i, P), f)  # Algorithm 2, line 10: M̂(q_i) each stage
            n_solves += 1
    return kq, kv, n_rhs, n_solves


@numba.njit(cache=True)
def _rk_step(code, P, q, v, t, h, A, b, b_hat, c, Minv):
    """One step: returns ``q1, v1`` (weights b), ``q1_hat, v1_hat`` (weights b_hat), force
    evaluations and mass-matrix solves."""
    kq, kv, n_rhs, n_solves = _rk_stages(code, P, q, v, t, h, A, c, Minv)
    dq = np.zeros(q.size)
    dv = np.zeros(q.size)
    dq_hat = np.zeros(q.size)
    dv_hat = np.zeros(q.size)
    for i in range(c.size):
        dq += (h * b[i]) * kq[i]
        dv += (h * b[i]) * kv[i]
        dq_hat += (h * b_hat[i]) * kq[i]
        dv_hat += (h * b_hat[i]) * kv[i]
    q1 = uac(code, q, dq)  # Algorithm 3, lines 13–14
    v1 = v + dv
    q1_hat = uac(code, q, dq_hat)  # embedded solution, App. B
    v1_hat = v + dv_hat
    return q1, v1, q1_hat, v1_hat, n_rhs, n_solves


@numba.njit(cache=True)
def _error_norm(q0, v0, q1, v1, q1_hat, v1_hat, rtol, atol):
    """Scaled RMS error of the embedded pair over absolute coordinates and velocities (App. B)."""
    n = q0.size
    acc = 0.0
    for j in range(n):
        s = atol + rtol * max(abs(q0[j]), abs(q1[j]))
        acc += ((q1[j] - q1_hat[j]) / s) ** 2
        s = atol + rtol * max(abs(v0[j]), abs(v1[j]))
        acc += ((v1[j] - v1_hat[j]) / s) ** 2
    return np.sqrt(acc / (2 * n))


@numba.njit(cache=True)
def _run(
    code,
    P,
    q0,
    v0,
    t_end,
    h_max,
    A,
    b,
    b_hat,
    c,
    emb_order,
    adaptive,
    rtol,
    atol,
    h_min,
    max_steps,
    record_every,
    Minv,
):
    """Time loop (fixed step or App. B step-size control); see :func:`integrate_explicit`."""
    q = q0.copy()
    v = v0.copy()
    t = 0.0
    n_steps = 0
    n_rejected = 0
    n_rhs = 0
    n_solves = 0
    status = 0  # 0 ok, 1 step limit, 2 non-finite state
    n_fixed = int(round(t_end / h_max))
    n_rec = n_fixed // record_every + 1 if record_every > 0 else 0
    rec = np.zeros((n_rec, 6))
    if n_rec > 0:
        rec[0] = com_state(code, q, v, P)
    h = h_max
    while True:
        if adaptive:
            if t >= t_end * (1.0 - 1e-14):
                break
            h = min(h, t_end - t)
        elif n_steps == n_fixed:
            break
        if n_steps + n_rejected >= max_steps:
            status = 1
            break
        q1, v1, q1h, v1h, nf, ns = _rk_step(code, P, q, v, t, h, A, b, b_hat, c, Minv)
        n_rhs += nf
        n_solves += ns
        if not (np.all(np.isfinite(q1)) and np.all(np.isfinite(v1))):
            status = 2
            break
        if adaptive:
            err = _error_norm(q, v, q1, v1, q1h, v1h, rtol, atol)
            h_opt = h * (1.0 / max(err, 1e-300)) ** (1.0 / (emb_order + 1))
            if h_opt < h and h > h_min:  # reject and redo with the smaller step
                n_rejected += 1
                h = max(h_min, 0.9 * h_opt)
                continue
            t += h
            h = min(h_max, 2.0 * h, max(h_min, 0.9 * h_opt))
        else:
            t = (n_steps + 1) * h_max
        q = q1
        v = v1
        n_steps += 1
        if record_every > 0 and not adaptive and n_steps % record_every == 0:
            rec[n_steps // record_every] = com_state(code, q, v, P)
    return q, v, t, n_steps, n_rejected, n_rhs, n_solves, status, rec


@dataclass(frozen=True)
class ExplicitResult:
    """Outcome of :func:`integrate_explicit`.

    Attributes
    ----------
    q, v : ndarray, shape (n,)
        Coordinates and velocities at the final time.
    t : float
        Final time reached.
    n_steps, n_rejected : int
        Accepted and rejected steps.
    n_mass_solves : int
        Solves with a configuration-dependent mass matrix (0 for Lie group models).
    status : str
        "ok", "step limit" or "non-finite".
    wall_time : float
        Seconds (the compiled loop only).
    com : ndarray, shape (n_rec, 6)
        Centre-of-mass position and velocity every ``record_every`` steps (fixed step only).
    n_rhs : int
        Force (right-hand side) evaluations: one per stage of every accepted or rejected step.
    cpu_time : float
        CPU seconds of the compiled loop (``time.process_time``).
    """

    q: np.ndarray
    v: np.ndarray
    t: float
    n_steps: int
    n_rejected: int
    n_mass_solves: int
    status: str
    wall_time: float
    com: np.ndarray
    n_rhs: int = 0
    cpu_time: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status == "ok"


_STATUS = {0: "ok", 1: "step limit", 2: "non-finite"}


def paper_tolerances(
    tableau: ButcherTableau, h: float, t_end: float, floor: float = 1e-12
) -> tuple[float, float]:
    """``r_tol = 10⁻² / (t_end/h)^p`` and ``a_tol = 10⁻² r_tol`` (paper Sect. 3.2.1), clamped.

    Taken literally, the formula asks for 1e-22 (DOPRI5, h = 1e-4, t_end = 1 s), far below
    round-off, so ``r_tol`` is clamped from below at ``floor`` (spec §5 A7).
    """
    rtol = max(1e-2 / (t_end / h) ** tableau.order, floor)
    return rtol, 1e-2 * rtol


def integrate_explicit(
    model: ExplicitModel,
    x0,
    tableau: ButcherTableau,
    h: float,
    t_end: float,
    *,
    adaptive: bool | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    h_min: float = 1e-10,
    max_steps: int = 20_000_000,
    record_every: int = 0,
    fast: bool = True,
) -> ExplicitResult:
    """Integrate an unconstrained model from ``x0 = [q0; v0]`` at t = 0 to ``t_end``.

    Parameters
    ----------
    model : ExplicitModel
        A :class:`~mbslib.systems.lie_group_mbs.Model`; must have no constraints (free heavy top,
        rotor: codes 0, 1, 6, 7); a constrained model raises ``ValueError``.
    tableau : ButcherTableau
    h : float
        Fixed step size, or the maximum and initial step size of the controller.
    adaptive : bool, optional
        Step-size control with the embedded pair (default: when the tableau has one).
    rtol, atol : float, optional
        Controller tolerances; default :func:`paper_tolerances`.
    h_min : float
        Smallest step size; the controller accepts a step of this size whatever its error.
    max_steps : int
        Cap on accepted plus rejected steps (status "step limit" when reached).
    record_every : int
        Record the centre of mass every so many (fixed) steps; 0 records nothing.
    fast : bool
        Use the allocation-free kernel for the heavy top about its fixed point (codes 0, 1;
        about 20 times faster, same arithmetic) when nothing is recorded.
    """
    positive(h=h, t_end=t_end)
    if model.n_constraints > 0:
        raise ValueError(
            f"model (code {model.code}, {model.formulation}) has {model.n_constraints} constraint(s); "
            "the explicit RK/RKMK methods integrate unconstrained models only (use integrate_genalpha)"
        )
    n = model.n
    x0 = np.asarray(x0, dtype=float)
    if x0.shape != (2 * n,):
        raise ValueError(f"x0 must have shape ({2 * n},), got {x0.shape}")
    adaptive = tableau.adaptive if adaptive is None else adaptive
    if adaptive and not tableau.adaptive:
        raise ValueError(f"tableau {tableau.name} has no embedded weights for step-size control")
    if not adaptive and abs(round(t_end / h) * h - t_end) > 1e-9 * t_end:
        raise ValueError(f"t_end = {t_end} is not a whole multiple of h = {h}")
    if adaptive:
        prtol, patol = paper_tolerances(tableau, h, t_end)
        rtol = prtol if rtol is None else rtol
        atol = patol if atol is None else atol
        positive(rtol=rtol, atol=atol, h_min=h_min)
    b_hat = tableau.b_hat if tableau.adaptive else tableau.b
    Minv = np.linalg.inv(mass_matrix(model.code, x0[:n], model.P))  # used by Lie group models only
    args = (
        model.code,
        model.P,
        x0[:n].copy(),
        x0[n:].copy(),
        float(t_end),
        float(h),
        tableau.A,
        tableau.b,
        b_hat,
        tableau.c,
        tableau.embedded_order,
        bool(adaptive),
        float(rtol or 0.0),
        float(atol or 0.0),
        float(h_min),
        int(max_steps),
        int(record_every),
        Minv,
    )
    fast = fast and record_every == 0 and model.code in (0, 1)
    if fast:
        m, J, X, g = model.P[0], model.P[1:10].reshape(3, 3), model.P[10:13], model.P[13:16]
        JO = J + m * (X @ X * np.eye(3) - np.outer(X, X))
        top_args = args[2:16] + (JO, np.linalg.inv(JO), X.copy(), m * g)
        start, start_cpu = time.perf_counter(), time.process_time()
        q, v, t, n_steps, n_rej, n_rhs, n_solves, status = _top_run(model.code, *top_args)
        wall, cpu = time.perf_counter() - start, time.process_time() - start_cpu
        rec = np.zeros((0, 6))
    else:
        start, start_cpu = time.perf_counter(), time.process_time()
        q, v, t, n_steps, n_rej, n_rhs, n_solves, status, rec = _run(*args)
        wall, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    return ExplicitResult(
        q, v, float(t), int(n_steps), int(n_rej), int(n_solves), _STATUS[int(status)], wall, rec,
        int(n_rhs), cpu,
    )


def step_rk(
    model: ExplicitModel, x_n, h: float, t: float = 0.0, *, tableau: ButcherTableau
) -> tuple[np.ndarray, None]:
    """One RK (classical models) or RKMK (Lie group models) step of ``x_n = [q_n; v_n]``.

    A pure step function for :func:`mbslib.simulate.simulate` (bind ``model`` and ``tableau``
    with :func:`functools.partial`). Returns ``(x_n1, None)``.
    """
    n = model.n
    x_n = np.asarray(x_n, dtype=float)
    Minv = np.linalg.inv(mass_matrix(model.code, x_n[:n], model.P))
    q1, v1, _, _, _, _ = _rk_step(
        model.code,
        model.P,
        x_n[:n],
        x_n[n:],
        float(t),
        float(h),
        tableau.A,
        tableau.b,
        tableau.b,
        tableau.c,
        Minv,
    )
    return np.concatenate([q1, v1]), None


# ---------------------------------------------------------------------------------------------
# Allocation-free kernel for the heavy top about its fixed point (model codes 0 and 1)
# ---------------------------------------------------------------------------------------------
# The generic stage loop above allocates a dozen small arrays per stage (≈ 10 µs per step); the
# paper's finest grids need millions of steps. The kernel below does the same arithmetic with
# scalars and tuples. It is tested against the generic path to round-off.


@numba.njit(cache=True)
def _cross_s(a0, a1, a2, b0, b1, b2):
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@numba.njit(cache=True)
def _rot_rv_s(p0, p1, p2):
    """Row-major entries of exp(ψ̃) (same formula as ``rotation_rv``)."""
    phi = np.sqrt(p0 * p0 + p1 * p1 + p2 * p2)
    a = sinc(phi)
    s2 = sinc(0.5 * phi)
    b = 0.5 * s2 * s2
    # ψ̃² = ψψᵀ − φ² I
    return (
        1.0 + b * (p0 * p0 - phi * phi),
        -a * p2 + b * p0 * p1,
        a * p1 + b * p0 * p2,
        a * p2 + b * p1 * p0,
        1.0 + b * (p1 * p1 - phi * phi),
        -a * p0 + b * p1 * p2,
        -a * p1 + b * p2 * p0,
        a * p0 + b * p2 * p1,
        1.0 + b * (p2 * p2 - phi * phi),
    )


@numba.njit(cache=True)
def _rot_rxyz_s(f0, f1, f2):
    """Row-major entries of R_x(φ₀) R_y(φ₁) R_z(φ₂)."""
    ca, sa, cb, sb, cg, sg = np.cos(f0), np.sin(f0), np.cos(f1), np.sin(f1), np.cos(f2), np.sin(f2)
    return (
        cb * cg,
        -cb * sg,
        sb,
        ca * sg + sa * sb * cg,
        ca * cg - sa * sb * sg,
        -sa * cb,
        sa * sg - ca * sb * cg,
        sa * cg + ca * sb * sg,
        ca * cb,
    )


@numba.njit(cache=True)
def _compose_s(a0, a1, a2, b0, b1, b2):
    """Scalar version of ``compose_rv``."""
    na = np.sqrt(a0 * a0 + a1 * a1 + a2 * a2)
    nb = np.sqrt(b0 * b0 + b1 * b1 + b2 * b2)
    c0, c1 = np.cos(0.5 * na), np.cos(0.5 * nb)
    s0, s1 = sinc(0.5 * na), sinc(0.5 * nb)
    x = c0 * c1 - 0.25 * s0 * s1 * (a0 * b0 + a1 * b1 + a2 * b2)
    k0, k1, k2 = _cross_s(a0, a1, a2, b0, b1, b2)
    r0 = s0 * c1 * a0 + c0 * s1 * b0 + 0.5 * s0 * s1 * k0
    r1 = s0 * c1 * a1 + c0 * s1 * b1 + 0.5 * s0 * s1 * k1
    r2 = s0 * c1 * a2 + c0 * s1 * b2 + 0.5 * s0 * s1 * k2
    nr = np.sqrt(r0 * r0 + r1 * r1 + r2 * r2)
    if nr == 0.0:
        return 0.0, 0.0, 0.0
    w = 2.0 * np.arctan2(0.5 * nr, x) / nr
    return w * r0, w * r1, w * r2


@numba.njit(cache=True)
def _texp_inv_apply_s(o0, o1, o2, v0, v1, v2):
    """``T⁻¹(Ω) v = v + ½ Ω × v + γ Ω × (Ω × v)`` (scalar version of ``texp_inv_so3``)."""
    phi = np.sqrt(o0 * o0 + o1 * o1 + o2 * o2)
    if phi == 0.0:
        return v0, v1, v2
    g = texp_inv_coefficient(phi)
    k0, k1, k2 = _cross_s(o0, o1, o2, v0, v1, v2)
    l0, l1, l2 = _cross_s(o0, o1, o2, k0, k1, k2)
    return v0 + 0.5 * k0 + g * l0, v1 + 0.5 * k1 + g * l1, v2 + 0.5 * k2 + g * l2


@numba.njit(cache=True)
def _solve3_s(A, b0, b1, b2):
    """Solve a 3×3 system (entries of the row-major 9-tuple ``A``) by Cramer's rule."""
    a, b, c, d, e, f, g, h, i = A
    det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g)
    x0 = (b0 * (e * i - f * h) - b * (b1 * i - f * b2) + c * (b1 * h - e * b2)) / det
    x1 = (a * (b1 * i - f * b2) - b0 * (d * i - f * g) + c * (d * b2 - b1 * g)) / det
    x2 = (a * (e * b2 - b1 * h) - b * (d * b2 - b1 * g) + b0 * (d * h - e * g)) / det
    return x0, x1, x2


@numba.njit(cache=True)
def _top_accel_s(code, q0, q1, q2, v0, v1, v2, JO, JOinv, X, F):
    """Acceleration of the heavy top about its fixed point (codes 0: ω̇, 1: φ̈) and the number
    of mass-matrix solves it took (0 or 1).

    ``JO`` inertia about the fixed point, ``X`` centre of mass (body), ``F = m g`` (inertial).
    """
    if code == 0:
        R = _rot_rv_s(q0, q1, q2)
        w0, w1, w2 = v0, v1, v2
    else:
        R = _rot_rxyz_s(q0, q1, q2)
        cb, sb, cg, sg = np.cos(q1), np.sin(q1), np.cos(q2), np.sin(q2)
        G = (cb * cg, sg, 0.0, -cb * sg, cg, 0.0, sb, 0.0, 1.0)
        w0 = G[0] * v0 + G[1] * v1
        w1 = G[3] * v0 + G[4] * v1
        w2 = G[6] * v0 + v2
    # gravity torque X × (Rᵀ F)
    f0 = R[0] * F[0] + R[3] * F[1] + R[6] * F[2]
    f1 = R[1] * F[0] + R[4] * F[1] + R[7] * F[2]
    f2 = R[2] * F[0] + R[5] * F[1] + R[8] * F[2]
    t0, t1, t2 = _cross_s(X[0], X[1], X[2], f0, f1, f2)
    L0 = JO[0, 0] * w0 + JO[0, 1] * w1 + JO[0, 2] * w2
    L1 = JO[1, 0] * w0 + JO[1, 1] * w1 + JO[1, 2] * w2
    L2 = JO[2, 0] * w0 + JO[2, 1] * w1 + JO[2, 2] * w2
    g0, g1, g2 = _cross_s(w0, w1, w2, L0, L1, L2)
    r0, r1, r2 = t0 - g0, t1 - g1, t2 - g2
    if code == 0:  # J_O ω̇ = τ − ω × J_O ω (eqs. 11, 23): constant J_O, no solve
        return (
            JOinv[0, 0] * r0 + JOinv[0, 1] * r1 + JOinv[0, 2] * r2,
            JOinv[1, 0] * r0 + JOinv[1, 1] * r1 + JOinv[1, 2] * r2,
            JOinv[2, 0] * r0 + JOinv[2, 1] * r1 + JOinv[2, 2] * r2,
            0,
        )
    # formulation 2 (eqs. 12–14): Ĝᵀ J_O Ĝ φ̈ = Ĝᵀ (τ − ω × J_O ω − J_O Ġ φ̇)
    b, g = v1, v2
    s0 = (-sb * cg * b - cb * sg * g) * v0 + cg * g * v1
    s1 = (sb * sg * b - cb * cg * g) * v0 - sg * g * v1
    s2 = cb * b * v0
    r0 -= JO[0, 0] * s0 + JO[0, 1] * s1 + JO[0, 2] * s2
    r1 -= JO[1, 0] * s0 + JO[1, 1] * s1 + JO[1, 2] * s2
    r2 -= JO[2, 0] * s0 + JO[2, 1] * s1 + JO[2, 2] * s2
    # assemble M̂ = Gᵀ J_O G and the right-hand side Gᵀ r
    JG = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            JG[i, j] = JO[i, 0] * G[j] + JO[i, 1] * G[3 + j] + JO[i, 2] * G[6 + j]
    M = (
        G[0] * JG[0, 0] + G[3] * JG[1, 0] + G[6] * JG[2, 0],
        G[0] * JG[0, 1] + G[3] * JG[1, 1] + G[6] * JG[2, 1],
        G[0] * JG[0, 2] + G[3] * JG[1, 2] + G[6] * JG[2, 2],
        G[1] * JG[0, 0] + G[4] * JG[1, 0] + G[7] * JG[2, 0],
        G[1] * JG[0, 1] + G[4] * JG[1, 1] + G[7] * JG[2, 1],
        G[1] * JG[0, 2] + G[4] * JG[1, 2] + G[7] * JG[2, 2],
        G[2] * JG[0, 0] + G[5] * JG[1, 0] + G[8] * JG[2, 0],
        G[2] * JG[0, 1] + G[5] * JG[1, 1] + G[8] * JG[2, 1],
        G[2] * JG[0, 2] + G[5] * JG[1, 2] + G[8] * JG[2, 2],
    )
    a0, a1, a2 = _solve3_s(
        M,
        G[0] * r0 + G[3] * r1 + G[6] * r2,
        G[1] * r0 + G[4] * r1 + G[7] * r2,
        G[2] * r0 + G[5] * r1 + G[8] * r2,
    )
    return a0, a1, a2, 1  # one solve with M̂(φ)


@numba.njit(cache=True)
def _top_run(
    code,
    q0,
    v0,
    t_end,
    h_max,
    A,
    b,
    b_hat,
    c,
    emb_order,
    adaptive,
    rtol,
    atol,
    h_min,
    max_steps,
    JO,
    JOinv,
    X,
    F,
):
    """Time loop of :func:`_run` specialised to the heavy top about its fixed point."""
    s = c.size
    kq = np.zeros((s, 3))
    kv = np.zeros((s, 3))
    q = q0.copy()
    v = v0.copy()
    q1 = np.zeros(3)
    v1 = np.zeros(3)
    q1h = np.zeros(3)
    v1h = np.zeros(3)
    t = 0.0
    n_steps = 0
    n_rejected = 0
    n_rhs = 0
    n_solves = 0
    status = 0
    n_fixed = int(round(t_end / h_max))
    h = h_max
    while True:
        if adaptive:
            if t >= t_end * (1.0 - 1e-14):
                break
            h = min(h, t_end - t)
        elif n_steps == n_fixed:
            break
        if n_steps + n_rejected >= max_steps:
            status = 1
            break
        for i in range(s):
            d0 = d1 = d2 = e0 = e1 = e2 = 0.0
            for j in range(i):
                a = h * A[i, j]
                d0 += a * kq[j, 0]
                d1 += a * kq[j, 1]
                d2 += a * kq[j, 2]
                e0 += a * kv[j, 0]
                e1 += a * kv[j, 1]
                e2 += a * kv[j, 2]
            w0, w1, w2 = v[0] + e0, v[1] + e1, v[2] + e2
            if code == 0:
                p0, p1, p2 = _compose_s(q[0], q[1], q[2], d0, d1, d2)
                kq[i, 0], kq[i, 1], kq[i, 2] = _texp_inv_apply_s(d0, d1, d2, w0, w1, w2)
            else:
                p0, p1, p2 = q[0] + d0, q[1] + d1, q[2] + d2
                kq[i, 0], kq[i, 1], kq[i, 2] = w0, w1, w2
            kv[i, 0], kv[i, 1], kv[i, 2], ns = _top_accel_s(
                code, p0, p1, p2, w0, w1, w2, JO, JOinv, X, F
            )
            n_rhs += 1
            n_solves += ns
        d0 = d1 = d2 = e0 = e1 = e2 = 0.0
        dh0 = dh1 = dh2 = eh0 = eh1 = eh2 = 0.0
        for i in range(s):
            hb = h * b[i]
            d0 += hb * kq[i, 0]
            d1 += hb * kq[i, 1]
            d2 += hb * kq[i, 2]
            e0 += hb * kv[i, 0]
            e1 += hb * kv[i, 1]
            e2 += hb * kv[i, 2]
            hb = h * b_hat[i]
            dh0 += hb * kq[i, 0]
            dh1 += hb * kq[i, 1]
            dh2 += hb * kq[i, 2]
            eh0 += hb * kv[i, 0]
            eh1 += hb * kv[i, 1]
            eh2 += hb * kv[i, 2]
        if code == 0:
            q1[0], q1[1], q1[2] = _compose_s(q[0], q[1], q[2], d0, d1, d2)
            q1h[0], q1h[1], q1h[2] = _compose_s(q[0], q[1], q[2], dh0, dh1, dh2)
        else:
            q1[0], q1[1], q1[2] = q[0] + d0, q[1] + d1, q[2] + d2
            q1h[0], q1h[1], q1h[2] = q[0] + dh0, q[1] + dh1, q[2] + dh2
        v1[0], v1[1], v1[2] = v[0] + e0, v[1] + e1, v[2] + e2
        v1h[0], v1h[1], v1h[2] = v[0] + eh0, v[1] + eh1, v[2] + eh2
        if not (np.all(np.isfinite(q1)) and np.all(np.isfinite(v1))):
            status = 2
            break
        if adaptive:
            err = _error_norm(q, v, q1, v1, q1h, v1h, rtol, atol)
            h_opt = h * (1.0 / max(err, 1e-300)) ** (1.0 / (emb_order + 1))
            if h_opt < h and h > h_min:
                n_rejected += 1
                h = max(h_min, 0.9 * h_opt)
                continue
            t += h
            h = min(h_max, 2.0 * h, max(h_min, 0.9 * h_opt))
        else:
            t = (n_steps + 1) * h_max
        q[:] = q1
        v[:] = v1
        n_steps += 1
    return q, v, t, n_steps, n_rejected, n_rhs, n_solves, status
