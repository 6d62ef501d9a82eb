"""Compile the numba kernels before the chapters run: ``python -m mbslib.precompile``.

Numba compiles a kernel on its first call and keeps the machine code in an on-disk cache (one
per version of the library sources, see :mod:`mbslib`). The generalized-α kernels of chapter 002
and Runge–Kutta kernels are compiled once for every model (the model's kernels are an argument)
and each model family's kernels once for every formulation; the binder torus of chapter 003
takes a few seconds. ``make book``, ``make lab``, ``make bench`` and Binder's ``postBuild`` run
this module after the installation, so that no chapter waits for the compiler; with a warm cache
it only loads the machine code (a few seconds).

Every call below is a tiny run with the argument types the chapters use, so that the cached
signatures are the ones the chapters look up.
"""

from __future__ import annotations

import time

import numpy as np

from mbslib.integrators import generalized_alpha as ga
from mbslib.integrators import rodrigues_vi as rv
from mbslib.integrators import runge_kutta as rk
from mbslib.integrators.tableaux import DOPRI5, RK44
from mbslib.studies import binder_torus as bts
from mbslib.studies import slider_crank as scs
from mbslib.systems import binder_torus as bt
from mbslib.systems import lie_group_mbs as lg
from mbslib.systems import multibody as mb
from mbslib.systems import slider_crank as sc
from mbslib.systems.puma560 import Puma560


def _single_bodies() -> None:
    """Heavy tops (free and with a spherical joint) and the rotor: both integrator families, the
    one-step functions and the evaluations the chapter calls from Python."""
    top = lg.HeavyTop()
    models = [lg.heavy_top_model(code, top) for code in range(lg.ROT_RV)]
    models += [lg.rotor_model(code) for code in (lg.ROT_RV, lg.ROT_RXYZ, lg.ROT_EP)]
    for model, x0 in models:  # each model family's kernels with each formulation
        ga.integrate_genalpha(model, x0, 1e-4, 2e-4, record_every=1)
    for model, x0 in models[lg.TOP_RV], models[lg.SPH_EP], models[lg.ROT_RV]:
        n = model.n
        run = ga.integrate_genalpha(model, x0, 1e-4, 2e-4, record_every=1)
        lg.com_state(model.code, run.q, run.v, model.P)
        lg.mass_matrix(model.code, run.q, model.P)
        lg.uac(model.code, run.q, run.v * 1e-4)
        state = ga.initial_state(model, x0)
        ga.step_genalpha(model, state, 1e-4)
        q, v = state[:n], state[n : 2 * n]
        ga.residual_genalpha(model, q, v, state[2 * n : 3 * n], np.zeros(model.n_constraints))
        ga.iteration_matrix(model, q, v, 1e-4 * v, 1e-4)
    rk.integrate_explicit(*models[lg.TOP_RV], RK44, 1e-4, 2e-4)  # one driver: the kernels are arguments
    rk.integrate_explicit(*models[lg.TOP_RV], DOPRI5, 1e-4, 2e-4, rtol=1e-6, atol=1e-8)
    rk.integrate_explicit(*models[lg.ROT_RV], RK44, 1e-4, 2e-4, record_every=1)


def _systems() -> None:
    """The slider–crank and the Puma 560 in absolute and minimal coordinates."""
    for form in (sc.RV, sc.RXYZ, sc.EP):
        scs.simulate(form, 1e-3, 2e-3, record_every=1)
    robot = Puma560()
    system = robot.system().params()
    x0 = robot.absolute_state(mb.RV)
    n = x0.size // 2
    mb.mass_matrix(mb.RV, x0[:n], system)
    mb.constraint(mb.RV, x0[:n], system)
    mb.constraint_jacobian(mb.RV, x0[:n], system)
    robot.joint_angles(mb.RV, system, x0[:n], 0.0)
    ga.integrate_genalpha(lg.Model(lg.CHAIN, robot.params()), robot.initial_state(), 1e-3, 2e-3)
    robot.reference_solution(np.array([0.0, 1e-3]), t_end=1e-3)


def _torus() -> None:
    """The binder torus of chapter 003 (all-pairs contact, one compiled time loop), and the compiled
    pieces of the maps as the Python steps call them."""
    torus = bt.make_torus()
    bts.simulate_torus(torus, "25", 1e-3, 2e-3)
    for step in rv.STEPS.values():
        rv.run(step, torus, rv.initial_state(torus, *torus.initial_conditions()), 1e-3, 1)


def main() -> float:
    """Compile (or load) the kernels; return the wall time in seconds."""
    start = time.perf_counter()
    _single_bodies()
    _systems()
    _torus()
    return time.perf_counter() - start


if __name__ == "__main__":
    print(f"mbslib: numba kernels ready ({main():.1f} s)")
