"""The binder torus of paper 003 (Sect. 4) run by the explicit maps: a study, not a system.

:func:`simulate_torus` runs a whole trajectory of map (23), (25), (27) or (27*) in one compiled
loop, on what the rescaled Rodrigues formulation makes of a description of bonded spheres
(:class:`~mbslib.formulations.rodrigues.BondedSpheresSystem`; the paper's torus:
``BondedSpheresSystem(make_torus(params).description())``). The loop holds no formula of a map:
each step is :func:`~mbslib.integrators.rodrigues_vi.advance`, the torus's forces
(:func:`mbslib.systems.binder_torus.forces_kernel`) and
:func:`~mbslib.integrators.rodrigues_vi.complete`, the same compiled functions the Python steps of
:mod:`mbslib.integrators.rodrigues_vi` call; the loop adds the record of each state
(:func:`mbslib.systems.binder_torus.record_kernel`), the wall impulse and the time integrals of
the error measures (35), (36).
"""

from __future__ import annotations

import time

import numba
import numpy as np

from mbslib.formulations.rodrigues import BondedSpheresSystem
from mbslib.integrators.rodrigues_vi import CAYLEY_INVALID, SCHEMES, advance, complete
from mbslib.simulate import time_grid
from mbslib.systems.binder_torus import COLUMNS, forces_kernel, record_kernel
from mbslib.trajectory import IntegrationError, Trajectory, Work

__all__ = ["simulate_torus", "BLOW_UP"]

#: Failure reason of :func:`simulate_torus`: the energy left its bound.
BLOW_UP = "energy blow-up"


@numba.njit(cache=True)
def _run_nb(x, v, alpha, w, h, n_steps, scheme, stride, E_ref, blowup,
            bi, bj, n0, r0, D, m, J, Km, Ka, Ks, Kpp, Kpw, x_w, absolute, wall, contact,
            rec, states):
    """Run ``n_steps`` of a map in place; return (steps done, status, force evaluations,
    ∫(E-E_ref)^2 dt, ∫q2 dt).

    status: 0 ok, 1 energy blow-up (``|E - E_ref| > blowup |E_ref|`` or non-finite), 2 eq. (16)
    invalid (h|p| >= 1). Records every ``stride`` steps into ``rec`` and ``states`` (if non-empty).
    """
    n = x.shape[0]
    F = np.zeros((n, 3))
    T = np.zeros((n, 3))
    F1 = np.zeros((n, 3))
    T1 = np.zeros((n, 3))
    R = np.zeros((n, 3, 3))
    U = np.zeros(5)
    buf = np.zeros(20)
    Fw = forces_kernel(x, alpha, bi, bj, n0, r0, D, Km, Ka, Ks, Kpp, Kpw, x_w, absolute, wall, contact, F, T, R, U)
    n_forces = 1
    Iw = 0.0
    E, q2 = record_kernel(0.0, x, v, alpha, w, m, J, U, Iw, buf)
    rec[0, :] = buf
    store = states.shape[0] > 0
    if store:
        _store(states[0], x, v, alpha, w)
    e_prev = (E - E_ref) ** 2
    q_prev = q2
    int_e = 0.0
    int_q = 0.0
    for step in range(n_steps):
        if advance(x, v, alpha, w, F, T, m, J, h, scheme) >= 0:
            return step, 2, n_forces, int_e, int_q
        Fw1 = forces_kernel(x, alpha, bi, bj, n0, r0, D, Km, Ka, Ks, Kpp, Kpw, x_w, absolute, wall, contact,
                            F1, T1, R, U)
        n_forces += 1
        complete(v, w, F, F1, T1, m, J, h, scheme)
        Iw += 0.5 * h * (Fw + Fw1) if scheme <= 1 else h * Fw  # wall impulse: the force as the map uses it
        Fw = Fw1
        F, F1, T, T1 = F1, F, T1, T  # the new forces are the old ones of the next step
        t = (step + 1) * h
        E, q2 = record_kernel(t, x, v, alpha, w, m, J, U, Iw, buf)
        e_new = (E - E_ref) ** 2
        int_e += 0.5 * h * (e_prev + e_new)  # trapezoidal rule for (36)
        int_q += 0.5 * h * (q_prev + q2)
        e_prev = e_new
        q_prev = q2
        if (step + 1) % stride == 0:
            r = (step + 1) // stride
            rec[r, :] = buf
            if store:
                _store(states[r], x, v, alpha, w)
        if not np.isfinite(E) or abs(E - E_ref) > blowup * abs(E_ref):
            return step + 1, 1, n_forces, int_e, int_q
    return n_steps, 0, n_forces, int_e, int_q


@numba.njit(cache=True)
def _store(out, x, v, alpha, w):
    """One recorded state, ``out`` of shape (4, n, 3) (element loops: an array assignment compiles
    its shape check and error message too)."""
    for k in range(x.shape[0]):
        for d in range(3):
            out[0, k, d] = x[k, d]
            out[1, k, d] = v[k, d]
            out[2, k, d] = alpha[k, d]
            out[3, k, d] = w[k, d]


def simulate_torus(system: BondedSpheresSystem, scheme: str, h: float, t_end: float, *, t0: float = 0.0,
                   record_every: int = 1, state0=None, store_states: bool = False,
                   E_ref: float | None = None, blowup: float = 10.0) -> Trajectory:
    """Integrate bonded spheres (the torus) with map ``scheme`` ("23", "25", "27", "27*") in one
    compiled loop.

    Parameters
    ----------
    system : BondedSpheresSystem
        The description as the compiled kernels take it.
    h, t_end, t0 : float
        Step size, horizon and start (:func:`mbslib.simulate.time_grid`: ``t_end − t0`` a whole
        multiple of ``h``); the forces do not depend on time.
    record_every : int
        Record every so many steps.
    state0 : sequence of arrays, shape (n, 3)
        Initial ``(x, v, alpha, w)``, or a state of :mod:`mbslib.integrators.rodrigues_vi` (its
        first four fields); default: the description's initial states,
        :meth:`~mbslib.formulations.rodrigues.BondedSpheresSystem.initial_conditions`.
    store_states : bool
        Also record the full states at the record times.
    E_ref : float
        Energy reference of the H⁰ error integral (default: initial energy,
        :meth:`~mbslib.formulations.rodrigues.BondedSpheresSystem.energy`).
    blowup : float
        Stop when ``|E - E_ref| > blowup |E_ref|`` or E is not finite (:data:`BLOW_UP`).

    Returns
    -------
    Trajectory
        ``t`` the record times (every ``record_every`` steps), ``x`` the diagnostics rows there, columns
        :data:`~mbslib.systems.binder_torus.COLUMNS` (:func:`~mbslib.systems.binder_torus.column`
        picks one by name); ``work``: the steps taken and the force evaluations (one per step,
        plus the initial one); ``t_final`` the time reached. ``failure``: an
        :class:`~mbslib.trajectory.IntegrationError` with reason :data:`BLOW_UP` (the step that
        blew up is taken and recorded) or :data:`~mbslib.integrators.rodrigues_vi.CAYLEY_INVALID`
        (eq. (16) has no solution, ``h |p| >= 1``: the step is not taken), naming the step that
        was not taken and its start time. ``extras``: ``"int_e2"``, ``∫ (E - E_ref)^2 dt`` over
        the steps taken (trapezoid), ``"int_q2"``, ``∫ ||q||^2 dt``, the H¹ integrand (35) summed
        over bodies, and with ``store_states`` ``"states"``, shape (n_rec, 4, n, 3):
        ``(x, v, alpha, R Ω)`` at the record times, and ``"final_state"``, shape (4, n, 3), the
        last state reached (not after a failure of eq. (16)).
    """
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {sorted(SCHEMES)}, got {scheme!r}")
    n_steps = time_grid(h, t_end, t0=t0, record_every=record_every)
    stride = int(record_every)
    start_state = system.initial_conditions() if state0 is None else tuple(state0)[:4]
    x, v, alpha, w = (np.array(a, dtype=float, order="C") for a in start_state)
    if E_ref is None:
        E_ref = system.energy(x, v, alpha, w)
    n_rec = n_steps // stride + 1
    rec = np.full((n_rec, len(COLUMNS)), np.nan)
    states = np.full((n_rec if store_states else 0, 4, system.n, 3), np.nan)
    start = time.perf_counter()
    start_cpu = time.process_time()
    done, status, n_forces, int_e, int_q = _run_nb(x, v, alpha, w, float(h), n_steps, SCHEMES[scheme], int(stride),
                                                  float(E_ref), float(blowup), *system.kernel_args, rec, states)
    wall, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    done, t_final = int(done), t0 + int(done) * float(h)
    failure = None if status == 0 else IntegrationError(BLOW_UP if status == 1 else CAYLEY_INVALID, done, t_final)
    keep = done // stride + 1
    rec = rec[:keep]
    rec[:, 0] += t0  # the kernel counts time from the start
    extras = {"int_e2": float(int_e), "int_q2": float(int_q)}
    if store_states:
        extras["states"] = states[:keep]
        if status != 2:  # a map that found no root of eq. (16) has moved part of the state
            extras["final_state"] = np.array([x, v, alpha, w])
    return Trajectory(rec[:, 0], rec, wall_time=wall, cpu_time=cpu, failure=failure,
                      work=Work(steps=done, rhs_evaluations=int(n_forces)), h=float(h), t_final=t_final,
                      extras=extras)
