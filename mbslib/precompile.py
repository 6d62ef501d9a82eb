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

On an empty cache the machine has more cores than the compiler uses (numba compiles in one
thread): two processes compile two halves at once: the generalized-α driver with the single
bodies and then the shoot-out's GGL-VI, chapter 004's director body and chapter 003's torus;
and everything that does not need the driver first (the Runge–Kutta driver, the shoot-out's EML,
MPL and REML, the model evaluations) with the systems after it. The halves share a few functions, which
both may compile;
numba writes each cache file whole, but two processes adding signatures to one index at once can
lose one, so this process then runs every call once more: it loads what is cached and compiles
whatever is missing. ``python -m mbslib.precompile --serial`` compiles in this process only.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from pathlib import Path

import numpy as np

import mbslib  # noqa: F401  (sets NUMBA_CACHE_DIR)


def _single_bodies(driver_ready=None) -> None:
    """Heavy tops (free and with a spherical joint) and the rotor: both integrator families, the
    one-step functions and the evaluations the chapter calls from Python. ``driver_ready`` (an
    event) is set once the generalized-α driver is compiled."""
    from mbslib.integrators import generalized_alpha as ga  # compiles its entry points on import
    from mbslib.systems import lie_group_mbs as lg

    if driver_ready is not None:
        driver_ready.set()

    top = lg.HeavyTop()
    models = [lg.heavy_top_model(code, top) for code in range(lg.ROT_RV)]
    models += [lg.rotor_model(code) for code in (lg.ROT_RV, lg.ROT_RXYZ, lg.ROT_EP)]
    for model, x0 in models:  # each model family's kernels with each formulation
        ga.integrate_genalpha(model, x0, 1e-4, 2e-4, record_every=1)
    for model, x0 in models[lg.TOP_RV], models[lg.SPH_EP], models[lg.ROT_RV]:
        n = model.n
        run = ga.integrate_genalpha(model, x0, 1e-4, 2e-4, record_every=1)
        lg.com_state(model.code, run.q, run.v, model.P)
        lg.uac(model.code, run.q, run.v * 1e-4)
        state = ga.initial_state(model, x0)
        ga.step_genalpha(model, state, 1e-4)
        q, v = state[:n], state[n : 2 * n]
        ga.residual_genalpha(model, q, v, state[2 * n : 3 * n], np.zeros(model.n_constraints))
        ga.iteration_matrix(model, q, v, 1e-4 * v, 1e-4)
    from mbslib.integrators import runge_kutta as rk
    from mbslib.integrators.tableaux import DOPRI5, RK44

    rk.integrate_explicit(*models[lg.TOP_RV], RK44, 1e-4, 2e-4)  # one driver: the kernels are arguments
    rk.integrate_explicit(*models[lg.TOP_RV], DOPRI5, 1e-4, 2e-4, rtol=1e-6, atol=1e-8)
    rk.integrate_explicit(*models[lg.ROT_RV], RK44, 1e-4, 2e-4, record_every=1)


def _systems(driver_ready=None) -> None:
    """The slider–crank and the Puma 560 in absolute and minimal coordinates; what needs the
    generalized-α driver waits for ``driver_ready`` (an event), if given."""
    from mbslib.systems import lie_group_mbs as lg
    from mbslib.systems import multibody as mb
    from mbslib.systems.puma560 import Puma560

    robot = Puma560()
    system = robot.system().params()
    x0 = robot.absolute_state(mb.RV)
    n = x0.size // 2
    mb.mass_matrix(mb.RV, x0[:n], system)
    mb.constraint(mb.RV, x0[:n], system)
    mb.constraint_jacobian(mb.RV, x0[:n], system)
    robot.joint_angles(mb.RV, system, x0[:n], 0.0)
    robot.reference_solution(np.array([0.0, 1e-3]), t_end=1e-3)
    if driver_ready is not None:
        driver_ready.wait()
    from mbslib.integrators import generalized_alpha as ga
    from mbslib.studies import slider_crank as scs
    from mbslib.systems import slider_crank as sc

    for form in (sc.RV, sc.RXYZ, sc.EP):
        scs.simulate(form, 1e-3, 2e-3, record_every=1)
    ga.integrate_genalpha(lg.CompiledModel(lg.CHAIN, robot.params()), robot.initial_state(), 1e-3, 2e-3)


def _torus() -> None:
    """The binder torus of chapter 003 (all-pairs contact, one compiled time loop), and the compiled
    pieces of the maps as the Python steps call them."""
    from mbslib.formulations.rodrigues import BondedSpheresSystem
    from mbslib.integrators import rodrigues_vi as rv
    from mbslib.studies import binder_torus as bts
    from mbslib.systems import binder_torus as bt

    torus = BondedSpheresSystem(bt.make_torus().description())
    bts.simulate_torus(torus, "25", 1e-3, 2e-3)
    for step in rv.STEPS.values():
        rv.run(step, torus, rv.initial_state(torus, *torus.initial_conditions()), 1e-3, 1e-3)


def _director_body() -> None:
    """The step equations of the EM and DLA schemes of chapter 004 (one signature serves both)."""
    from mbslib.formulations.director_triad import initial_state
    from mbslib.integrators.nonholonomic_em import step_em
    from mbslib.systems.nontwisting_body import make_body

    step_em(make_body(), initial_state([1.0, 2.0, 0.0]), 1e-3)


def _livens_schemes() -> None:
    """The compiled Newton iteration of EML, MPL and REML on a dense system, as the shoot-out runs
    them from Python (one signature serves every body system without springs or loads)."""
    from mbslib.formulations.quaternions import QuaternionSystem
    from mbslib.integrators import livens
    from mbslib.systems.chain import chain

    livens.precompile_dense(QuaternionSystem(chain(2)))


def _ggl_chain() -> None:
    """The compiled Newton update of the GGL-VI on the shoot-out's chain (sparse from N = 4 on)."""
    from mbslib.formulations.directors import director_system, initial_coordinates
    from mbslib.integrators import ggl
    from mbslib.systems.chain import chain

    system = director_system(chain(2))
    ggl.step_ggl(system, ggl.initial_vector(system, *initial_coordinates(chain(2))), 1e-3, sparse=True)


def _first_half(driver_ready) -> None:
    """The single bodies (the generalized-α driver first), then the GGL-VI on the chain, the
    director body of chapter 004 and the torus of chapter 003."""
    _single_bodies(driver_ready)
    _ggl_chain()
    _director_body()
    _torus()


def _second_half(driver_ready) -> None:
    """The Runge–Kutta driver, the Livens schemes and the systems; the systems' generalized-α
    runs wait until the first half has compiled (and cached) the driver."""
    from mbslib.integrators import runge_kutta  # noqa: F401  (compiles its entry points on import)

    _livens_schemes()
    _systems(driver_ready)


def _cache_is_empty() -> bool:
    """True on the first use of this library version (no compiled kernel cached yet)."""
    return not any(Path(os.environ["NUMBA_CACHE_DIR"]).rglob("*.nbi"))


def main(parallel: bool = True) -> float:
    """Compile (or load) the kernels; on an empty cache and if ``parallel``, two processes
    compile the two halves at once first. Return the wall time in seconds."""
    start = time.perf_counter()
    if parallel and _cache_is_empty():
        context = multiprocessing.get_context("spawn")
        driver_ready = context.Event()
        halves = [context.Process(target=_first_half, args=(driver_ready,), name="single bodies and implicit schemes"),
                  context.Process(target=_second_half, args=(driver_ready,), name="torus and systems")]
        for half in halves:
            half.start()
        halves[0].join()
        driver_ready.set()  # the second half never waits for a first half that failed
        halves[1].join()
        failed = [half.name for half in halves if half.exitcode != 0]
        if failed:
            raise RuntimeError(f"precompilation failed in the half {' and '.join(failed)} (traceback above)")
    _single_bodies()  # loads what the halves cached and compiles whatever is missing
    _systems()
    _torus()
    _director_body()
    _livens_schemes()
    _ggl_chain()
    return time.perf_counter() - start


if __name__ == "__main__":
    import sys

    print(f"mbslib: numba kernels ready ({main(parallel='--serial' not in sys.argv[1:]):.1f} s)")
