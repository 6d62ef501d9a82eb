"""Cost per step of our implicit methods on the chain of N rods against Exudyn's sparse solver.

Run with ``make bench`` (or ``python benchmarks/bench_chain.py [--rounds N] [--quick]``). The
chain is the shoot-out's (:mod:`mbslib.systems.chain`: N rods joined by spherical joints, hung
from the ground, under gravity). Ours is the compiled Lie group generalized-α in rotation
vectors, whose iteration matrix is ordered into a band and factorised by a banded LU
(:func:`mbslib.integrators.generalized_alpha.band_structure`); Exudyn 1.13.6 runs the same chain
with rotation-vector nodes and its sparse linear solver (``EigenSparse``), the same step, horizon,
ρ∞ = 0.9, ``T_exp`` neglected and full Newton with the same tolerances (Exudyn's defaults).
Both run in this one process in interleaved rounds (:func:`mbslib.timing.time_interleaved`);
the table gives the median CPU time per step, its spread, the ratio ours/Exudyn, the Newton
iterations per step of both, how far the last rod's centre of mass lies apart at the end (a
check that both compute the same motion), and the power law fitted to our cost and to Exudyn's.
A second table times the plain-Python implicit schemes of the shoot-out (EML, MPL and REML in
unit quaternions, the GGL-VI in directors; :func:`mbslib.solve`; sparse Newton matrices with
the unknowns body by body, by banded LU, :class:`mbslib.newton.BandedBlocks`, the GGL-VI's with
q, p, v eliminated, :class:`mbslib.integrators.ggl.WithoutQPV`; the quaternion
formulation's per-body blocks compiled) over the same horizon, interleaved with Exudyn likewise,
with their ratio to it and their fitted exponents. Each timed call builds the formulation and
runs the whole horizon, as Exudyn's does. They record the start and the end state only
(``every=0``), so that the time is the integrator's, not that of mapping every step back to
body states.

One BLAS thread, as in the book's kernels (``OMP_NUM_THREADS=1`` unless set): with two
OpenBLAS threads the dense LU of the smaller Python systems (N = 4, 100 unknowns) spends more on
their synchronisation than on the solve, on a loaded 2-core machine up to fifty times the step.

This is a benchmark, not a test: nothing here passes or fails on a time.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # before NumPy loads OpenBLAS

import argparse  # noqa: E402

import numpy as np  # noqa: E402

from mbslib import exudyn_models as ex  # noqa: E402
from mbslib.formulations import lie_group  # noqa: E402
from mbslib.integrators import generalized_alpha as ga  # noqa: E402
from mbslib.methods import solve  # noqa: E402
from mbslib.systems import multibody as mb  # noqa: E402
from mbslib.systems.chain import chain  # noqa: E402
from mbslib.timing import time_interleaved  # noqa: E402

SIZES = (4, 16, 64)
H = 1e-3
PYTHON_IMPLICIT = ("EML", "MPL", "REML", "GGL-VI")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--quick", action="store_true", help="a fifth of the horizon (a smoke run)")
    args = parser.parse_args(argv)
    ok, info = ex.exudyn_available()
    if not ok:
        raise SystemExit(info)
    t_end = 0.02 if args.quick else 0.1
    print(f"Exudyn {info} (sparse solver); chain of N rods, h = {H:g} s, {round(t_end / H)} steps; "
          f"{args.rounds} interleaved rounds; CPU time per step, median (spread); "
          f"OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']}\n")
    head = (f"{'N':>3} {'band kl/ku':>10} {'ours µs':>14} {'Exudyn µs':>15} {'ratio':>6} "
            f"{'it/step ours':>12} {'Exudyn':>7} {'|Δ end| m':>10}")
    print(head)
    print("-" * len(head))
    us = {"ours": [], "exudyn": []}
    for n in SIZES:
        description = chain(n)
        model, x0 = lie_group.absolute_model(description, "RV"), lie_group.initial_state(description, "RV")
        system = ex.spherical_system(description, "RV")

        def ours(model=model, x0=x0):
            return ga.integrate_genalpha(model, x0, H, t_end)

        def theirs(system=system):
            return ex.solve(system, "GeneralizedAlpha", H, t_end)

        mine, exu = ours(), theirs()  # compile, and the counts of one run
        t = time_interleaved({"ours": ours, "exudyn": theirs}, rounds=args.rounds)
        for k in us:
            us[k].append(1e6 * t[k].median / mine.n_steps)
        spread = {k: f"({100 * v.spread:.0f}%)" for k, v in t.items()}
        end = mb.body_position(0, mine.q, n - 1)
        band = ga.model_band(model)
        failed = "" if mine.ok else "  (ours failed)"
        print(f"{n:3d} {f'{band.kl}/{band.ku}':>10} {us['ours'][-1]:8.1f} {spread['ours']:>5} "
              f"{us['exudyn'][-1]:9.1f} {spread['exudyn']:>5} {us['ours'][-1] / us['exudyn'][-1]:6.2f} "
              f"{mine.iterations_per_step:12.2f} {exu.iterations_per_step:7.2f} "
              f"{np.linalg.norm(end - exu.x[-1, :3]):10.1e}{failed}", flush=True)
    slopes = {k: np.polyfit(np.log(SIZES), np.log(v), 1)[0] for k, v in us.items()}
    print(f"\nfitted exponent of the cost per step in N: ours {slopes['ours']:.2f}, Exudyn {slopes['exudyn']:.2f}")
    python_implicit(t_end, args.rounds)


def python_implicit(t_end: float, rounds: int) -> None:
    """The plain-Python implicit schemes against Exudyn: ms per step, ratio, Newton iterations."""
    end_only = round(t_end / H)  # record the start and the end
    print(f"\nplain-Python implicit schemes, {round(t_end / H)} steps; ms per step, median (ratio to Exudyn), "
          "Newton iterations per step\n")
    head = f"{'N':>3} {'Exudyn':>8} " + " ".join(f"{name:>21}" for name in PYTHON_IMPLICIT)
    print(head)
    print("-" * len(head))
    ms = {name: [] for name in ("exudyn", *PYTHON_IMPLICIT)}
    for n in SIZES:
        description = chain(n)
        system = ex.spherical_system(description, "RV")
        calls = {"exudyn": lambda system=system: ex.solve(system, "GeneralizedAlpha", H, t_end)}
        calls |= {name: (lambda name=name, model=description: solve(model, name, H, t_end, record_every=end_only))
                  for name in PYTHON_IMPLICIT}
        t = time_interleaved(calls, rounds=rounds)
        for name in ms:
            ms[name].append(1e3 * t[name].median / end_only)
        cells = []
        for name in PYTHON_IMPLICIT:
            run = solve(description, name, H, t_end, record_every=end_only)
            its = run.work.newton_iterations / run.work.steps
            cells.append(f"{ms[name][-1]:7.2f} ({ms[name][-1] / ms['exudyn'][-1]:5.1f}×) {its:4.2f}")
        print(f"{n:3d} {ms['exudyn'][-1]:8.2f} " + " ".join(f"{c:>21}" for c in cells), flush=True)
    slopes = {k: np.polyfit(np.log(SIZES), np.log(v), 1)[0] for k, v in ms.items()}
    print("\nfitted exponent in N: " + ", ".join(f"{k} {v:.2f}" for k, v in slopes.items()))


if __name__ == "__main__":
    main()
