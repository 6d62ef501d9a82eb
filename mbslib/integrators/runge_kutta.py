"""Explicit Runge–Kutta and Runge–Kutta–Munthe-Kaas (RKMK) methods with step-size control.

Paper 002 (Holzinger, Arnold & Gerstmayr 2024), Sect. 3.2, Algorithms 2 and 3, App. B. The
unconstrained equations of motion are integrated in first-order form: the classical formulation
2 as ``q̇ = w``, ``M̂(q) ẇ = Ĥᵀ ĝ`` (eq. 32); the Lie group formulation in local coordinates
``Δq̇ = T_exp⁻¹(Δq) v``, ``M v̇ = g`` (eqs. 23, 25), mapped back to absolute coordinates by the
UAC/LGT map after every stage (eqs. 29–31). With a vector-space UAC and ``T_exp = I`` the RKMK
step *is* the classical RK step, so one stage loop serves both (the formulation decides).

A stage costs one force evaluation; the classical models re-assemble and solve with their
configuration-dependent mass matrix at every stage, the Lie group models use the constant mass
matrix inverted once per run. The kernels count the work where it is done (force evaluations,
mass-matrix solves, accepted and rejected steps), so that cost claims can be asserted on counts.
Constrained models are rejected: these methods integrate ODEs only.

A model is an :class:`ExplicitModel`: the compiled kernel and formulation bundles of
:mod:`mbslib.formulations.compiled`, the same the generalized-α runs. The time loop is compiled
once for every model (the bundles are arguments of types ``MODEL_T`` and ``FORM_T``) and
allocates nothing per step or stage. The step is inlined into the time loop (a call passing its
two dozen arrays cost a sixth of an RK44 step of the heavy top), and the first stage, whose local
coordinates are zero, calls only the model's forces. The tests run the same source with ``NUMBA_DISABLE_JIT=1``
(plain Python) and compare.
"""

from __future__ import annotations

import time
from typing import Protocol, runtime_checkable

import numba
import numpy as np
from numba import types

from mbslib.formulations.compiled import FORM_T, MODEL_T, bind, machine_code, workspace
from mbslib.formulations.rotation_parameters import LIE_GROUP
from mbslib.in_place import in_place
from mbslib.integrators.tableaux import ButcherTableau
from mbslib.kernels import lu_factor, lu_solve_in_place
from mbslib.simulate import time_grid
from mbslib.trajectory import IntegrationError, Trajectory, Work
from mbslib.validation import positive


@runtime_checkable
class ExplicitModel(Protocol):
    """An unconstrained model as the RK/RKMK entry point takes it, such as
    :class:`mbslib.systems.lie_group_mbs.CompiledModel`: compiled bundles, not Python methods.

    ``kernels`` is the kernel bundle of :data:`mbslib.formulations.compiled.MODEL_T`; a stage
    uses its ``dynamics`` (``M`` and ``g`` of eqs. 23, 25 or 32), ``uac`` (the update map of
    eqs. 29–31) and ``tangent_inv`` (``T_exp⁻¹(Δq) v``, eq. 25), a record its ``record``. ``form``
    is the formulation bundle they take first; the Lie group formulation
    (:data:`~mbslib.formulations.rotation_parameters.LIE_GROUP`) has a constant mass matrix.
    A state is ``x = [q; v]``, shape (2 n,).

    Attributes
    ----------
    kernels : tuple
        Kernel bundle (dynamics, constraints, record, uac, tangent, tangent_inv), MODEL_T.
    form : tuple
        Formulation bundle, FORM_T.
    P : ndarray
        Flat parameter vector, float64.
    n : int
        Number of coordinates (= velocities).
    n_constraints : int
        Must be 0: the explicit methods integrate ODEs only.
    n_pages : int
        4×4 scratch pages of the kernels.
    n_record : int
        Values per record of ``kernels[2]``.
    formulation : str
        "RV", "Rxyz", "EP" or "Min. Coord." (named in error messages).
    """

    kernels: tuple
    form: tuple
    P: np.ndarray
    n: int
    n_constraints: int
    n_pages: int
    n_record: int
    formulation: str


# ---------------------------------------------------------------------------------------------
# numba kernels (compiled once for every model: the model is an argument of type MODEL_T)
# ---------------------------------------------------------------------------------------------

_V, _M2, _I8, _F8, _B1 = types.float64[::1], types.float64[:, ::1], types.int64, types.float64, types.boolean


@numba.njit(cache=True, inline="always")
def _step(model, form, P, lie, q, v, t, h, A, b, b_hat, c, embedded, Minv, work, M, g, K, C, piv, dq, qi, vi, w,
          kq, kv, q1, v1, q1h, v1h):
    """One step (Algorithm 3): the stage slopes ``kq, kv`` (s, n) and ``q1, v1`` (weights b), with
    ``embedded`` also ``q1h, v1h`` (weights b_hat), all in the given arrays. Returns the
    mass-matrix solves."""
    n = q.size
    n_solves = 0
    for i in range(c.size):
        for k in range(n):
            dk = 0.0
            ek = 0.0
            for j in range(i):
                dk += (h * A[i, j]) * kq[j, k]
                ek += (h * A[i, j]) * kv[j, k]
            dq[k] = dk
            vi[k] = v[k] + ek  # line 8
        if i == 0:  # Δq₁ = 0: the stage starts at q_n, and T_exp⁻¹(0) = I
            for k in range(n):
                qi[k] = q[k]
                w[k] = vi[k]
        else:
            model[3](form, P, q, dq, qi)  # line 7: UAC/LGT map of the stage's local coordinates
            if lie:
                model[5](form, P, dq, vi, w)  # line 10: T_exp⁻¹(Δq) v, eq. (25)
            else:  # classical: T_exp = I, the slope of q is v (Algorithm 2)
                for k in range(n):
                    w[k] = vi[k]
        model[0](form, P, qi, vi, t + c[i] * h, False, work, M, g, K, C)  # M and g at the stage
        if not lie:  # Algorithm 2, line 10: a solve with M̂(q_i) at every stage
            if lu_factor(M, piv):
                lu_solve_in_place(M, piv, g)
            else:  # singular M̂ (a singularity of the parameters): a non-finite state
                g[:] = np.nan
            n_solves += 1
        for k in range(n):
            kq[i, k] = w[k]
            if lie:  # line 11: the constant M of eq. (23), inverted once per run
                acc = 0.0
                for m in range(n):
                    acc += Minv[k, m] * g[m]
                kv[i, k] = acc
            else:
                kv[i, k] = g[k]
    for k in range(n):  # lines 13–14 and the embedded solution (App. B)
        d = 0.0
        e = 0.0
        dh = 0.0
        eh = 0.0
        for i in range(c.size):
            d += (h * b[i]) * kq[i, k]
            e += (h * b[i]) * kv[i, k]
            dh += (h * b_hat[i]) * kq[i, k]
            eh += (h * b_hat[i]) * kv[i, k]
        dq[k] = d
        vi[k] = dh
        v1[k] = v[k] + e
        v1h[k] = v[k] + eh
    model[3](form, P, q, dq, q1)
    if embedded:  # the embedded solution serves the step-size control only
        model[3](form, P, q, vi, q1h)
    return n_solves


@in_place
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


@in_place
def _finite(x):
    for i in range(x.size):
        if not np.isfinite(x[i]):
            return False
    return True


@in_place
def _loop(model, form, P, lie, q, v, t0, span, h_max, h0, n_fixed, A, b, b_hat, c, emb_order, adaptive, rtol,
          atol, h_min, max_steps, record_every, rec, buffers):
    """The steps of :func:`_run` from ``q, v`` at ``t0`` (advanced in place) over ``span`` in the
    arrays of ``buffers``; ``n_fixed`` steps of ``h_max`` unless ``adaptive`` (then from ``h0``).
    Returns the time elapsed, the accepted and rejected steps, force evaluations, mass-matrix
    solves and the status (0 ok, 1 step limit, 2 non-finite state)."""
    Minv, work, M, g, K, C, piv, dq, qi, vi, w, kq, kv, q1, v1, q1h, v1h = buffers
    n = q.size
    s = c.size
    t = 0.0
    n_steps = 0
    n_rejected = 0
    n_rhs = 0
    n_solves = 0
    status = 0
    h = h0
    while True:
        if adaptive:
            if t >= span * (1.0 - 1e-14):
                break
            h = min(h, span - t)
        elif n_steps == n_fixed:
            break
        if n_steps + n_rejected >= max_steps:
            status = 1
            break
        n_solves += _step(model, form, P, lie, q, v, t0 + t, h, A, b, b_hat, c, adaptive, Minv, work, M, g, K, C,
                          piv, dq, qi, vi, w, kq, kv, q1, v1, q1h, v1h)
        n_rhs += s
        if not (_finite(q1) and _finite(v1)):
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
        for k in range(n):
            q[k] = q1[k]
            v[k] = v1[k]
        n_steps += 1
        if record_every > 0 and not adaptive and n_steps % record_every == 0:
            model[2](form, P, q, v, work, rec[n_steps // record_every])
    return t, n_steps, n_rejected, n_rhs, n_solves, status


@numba.njit((MODEL_T, FORM_T, _V, _I8, _I8, _B1, _V, _V, _F8, _F8, _F8, _F8, _M2, _V, _V, _V, _I8, _B1, _F8, _F8,
             _F8, _I8, _I8), cache=True)
def _run(model, form, P, n_pages, width, lie, q0, v0, t0, span, h_max, h0, A, b, b_hat, c, emb_order, adaptive,
         rtol, atol, h_min, max_steps, record_every):
    """Time loop (fixed step or App. B step-size control); see :func:`integrate_explicit`. Every
    buffer is allocated here, once, for :func:`_loop`: no allocation per step or stage."""
    n = q0.size
    s = c.size
    work = workspace(n_pages)
    M, g, K, C, Minv = np.zeros((n, n)), np.zeros(n), np.zeros((n, n)), np.zeros((n, n)), np.zeros((n, n))
    piv = np.zeros(n, dtype=np.int64)
    dq, qi, vi, w = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)
    kq, kv = np.zeros((s, n)), np.zeros((s, n))
    q1, v1, q1h, v1h = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)
    q = q0.copy()
    v = v0.copy()
    if lie:  # the constant mass matrix (eq. 23), inverted once per run
        model[0](form, P, q, v, t0, False, work, M, g, K, C)
        lu_factor(M, piv)
        for k in range(n):
            for i in range(n):
                w[i] = 1.0 if i == k else 0.0
            lu_solve_in_place(M, piv, w)
            for i in range(n):
                Minv[i, k] = w[i]
    n_fixed = int(round(span / h_max))
    n_rec = n_fixed // record_every + 1 if record_every > 0 else 0
    rec = np.zeros((n_rec, width))
    if n_rec > 0:
        model[2](form, P, q, v, work, rec[0])
    t, n_steps, n_rejected, n_rhs, n_solves, status = _loop(
        model, form, P, lie, q, v, t0, span, h_max, h0, n_fixed, A, b, b_hat, c, emb_order, adaptive, rtol, atol,
        h_min, max_steps, record_every, rec, (Minv, work, M, g, K, C, piv, dq, qi, vi, w, kq, kv, q1, v1, q1h, v1h))
    return q, v, t, n_steps, n_rejected, n_rhs, n_solves, status, rec


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
    t0: float = 0.0,
    adaptive: bool | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    h_max: float | None = None,
    h_min: float = 1e-10,
    max_steps: int = 20_000_000,
    record_every: int | None = None,
) -> Trajectory:
    """Integrate an unconstrained model from ``x0 = [q0; v0]`` at ``t0`` to ``t_end``.

    Parameters
    ----------
    model : ExplicitModel
        Compiled bundles without constraints (free heavy top and rotor in RV and Rxyz, the Puma 560
        in joint coordinates, any unconstrained system); a constrained model raises ``ValueError``.
    tableau : ButcherTableau
    h : float
        Fixed step size, or the initial step size of the controller.
    t_end, t0 : float
        Horizon and start; with fixed steps ``t_end − t0`` is a whole multiple of ``h``
        (:func:`mbslib.simulate.time_grid`).
    adaptive : bool, optional
        Step-size control with the embedded pair (default: when the tableau has one).
    rtol, atol : float, optional
        Controller tolerances; default :func:`paper_tolerances`.
    h_max : float, optional
        Largest step size of the controller; default ``h``, as in paper 002 (its steps never grow
        beyond the initial one: pass ``h_max`` to let them).
    h_min : float
        Smallest step size; the controller accepts a step of this size whatever its error.
    max_steps : int
        Cap on accepted plus rejected steps (the run ends with an :class:`~mbslib.trajectory.IntegrationError`).
    record_every : int, optional
        Store the model's record (``kernels[2]``: the centre of mass of the heavy tops, the support
        point of the rotor, the state of a system) every so many fixed steps; None records nothing.

    Returns
    -------
    Trajectory
        The records and their instants, the final ``q, v`` and time reached, the work (steps,
        rejected steps, one force evaluation per stage, the solves with a configuration-dependent
        mass matrix as factorisations: none for Lie group models) and the failure, if any: a
        non-finite state or the step limit (the state is then the last accepted one).
    """
    if not isinstance(model, ExplicitModel):
        raise TypeError(f"model must be a compiled model (ExplicitModel), got {type(model).__name__}; the "
                        "arguments are integrate_explicit(model, x0, tableau, h, t_end)")
    if not isinstance(tableau, ButcherTableau):
        raise TypeError(f"tableau must be a ButcherTableau (e.g. tableaux.RK44), got {tableau!r}; the arguments "
                        "are integrate_explicit(model, x0, tableau, h, t_end)")
    if model.n_constraints > 0:
        raise ValueError(
            f"model ({model.formulation}) has {model.n_constraints} constraint(s); "
            "the explicit RK/RKMK methods integrate unconstrained models only (use integrate_genalpha)"
        )
    n = model.n
    x0 = np.asarray(x0, dtype=float)
    if x0.shape != (2 * n,):
        raise ValueError(f"x0 must have shape ({2 * n},), got {x0.shape}")
    adaptive = tableau.adaptive if adaptive is None else adaptive
    if adaptive and not tableau.adaptive:
        raise ValueError(f"tableau {tableau.name} has no embedded weights for step-size control")
    if adaptive and record_every is not None:
        raise ValueError("record_every: a run with step-size control records nothing (fixed steps only)")
    if adaptive:
        positive(h=h, t_end_minus_t0=t_end - t0)
        h_max = h if h_max is None else h_max
        prtol, patol = paper_tolerances(tableau, h, t_end - t0)
        rtol = prtol if rtol is None else rtol
        atol = patol if atol is None else atol
        positive(rtol=rtol, atol=atol, h_min=h_min, h_max=h_max)
    else:
        time_grid(h, t_end, t0=t0, record_every=record_every)
        if (rtol, atol, h_max) != (None, None, None):
            raise ValueError("rtol, atol, h_max: fixed steps have no step-size control")
        h_max = h
    every = 0 if record_every is None else int(record_every)
    b_hat = tableau.b_hat if tableau.adaptive else tableau.b
    run = machine_code(_run)
    kernels, form = bind(model.kernels, model.form)  # loads or compiles the kernels, untimed
    start, start_cpu = time.perf_counter(), time.process_time()
    q, v, t, n_steps, n_rej, n_rhs, n_solves, status, rec = run(
        kernels, form, np.ascontiguousarray(model.P, dtype=float), int(model.n_pages), int(model.n_record),
        model.form is LIE_GROUP, x0[:n].copy(), x0[n:].copy(), float(t0), float(t_end - t0), float(h_max), float(h),
        *(np.ascontiguousarray(a, dtype=float) for a in (tableau.A, tableau.b, b_hat, tableau.c)),
        int(tableau.embedded_order), bool(adaptive), float(rtol or 0.0), float(atol or 0.0), float(h_min),
        int(max_steps), every,
    )
    wall, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    n_steps, t = int(n_steps), t0 + float(t)
    failure = None
    if status == 1:
        failure = IntegrationError(f"step limit ({max_steps} accepted and rejected steps)", n_steps, t)
    elif status == 2:
        failure = IntegrationError("non-finite state", n_steps, t)
    rows = rec[: n_steps // every + 1] if every > 0 else rec
    work = Work(steps=n_steps, rejected_steps=int(n_rej), rhs_evaluations=int(n_rhs), factorisations=int(n_solves))
    return Trajectory(t0 + h * (every * np.arange(len(rows))), rows, wall_time=wall, cpu_time=cpu, failure=failure,
                      work=work, h=float(h), q=q, v=v, t_final=t)
