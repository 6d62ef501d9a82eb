"""Cost per step of chapter 002's compiled integrators against Exudyn on the same models.

Run with ``make bench`` (or ``python benchmarks/bench_002.py [--rounds N] [--quick] [--only TEXT]``).
Every row runs our kernel and Exudyn 1.13.6 (the code of Holzinger, Arnold & Gerstmayr) on the
same model, step size and horizon, in this one process, in interleaved rounds
(:func:`mbslib.timing.time_interleaved`: a burst of load on the machine hits both alike), and
prints the median CPU time per step, its spread over the rounds, the ratio ours/Exudyn, the Newton
iterations per step of both, and how far the two final outputs lie apart (a point in m, or the
joint angles in rad of the Puma in joint coordinates: a check that the rows compare the same
computation). Exudyn is timed around its solver only (the model is assembled once).

This is a benchmark, not a test: nothing here passes or fails on a time.

Models (as in the chapter): the heavy top of Sect. 4.1 about its fixed point and with a spherical
joint, the rotor surrogate of Sect. 4.2, the IFToMM slider–crank of Sect. 4.3 and our Puma 560 of
Sect. 4.4 in absolute and in joint coordinates. The Puma runs a step command of 10° on every joint
(the PD springs hold the goal from t = 0): with the chapter's bang–bang reference Exudyn has to
set its spring offsets from a Python pre-step function (as its serial-robot examples do), which
costs milliseconds per step and would time the Python interface, not the integrator. In joint
coordinates Exudyn's counterpart is its ``KinematicTree`` with the built-in joint PD control.
"""


from __future__ import annotations

import argparse
from dataclasses import dataclass

import numpy as np

from mbslib import exudyn_models as ex
from mbslib.integrators import generalized_alpha as ga
from mbslib.integrators import runge_kutta as rk
from mbslib.integrators.tableaux import RK44
from mbslib.systems import lie_group_mbs as lg
from mbslib.systems import multibody as mb
from mbslib.systems import slider_crank as sc
from mbslib.systems.puma560 import Puma560
from mbslib.timing import time_interleaved


@dataclass(frozen=True)
class Row:
    """One comparison: our model and integrator against an Exudyn system and solver."""

    label: str
    model: lg.CompiledModel
    x0: np.ndarray
    exudyn: ex.ExudynSystem
    solver: str  # "RK44" or "GeneralizedAlpha"
    h: float
    t_end: float

    def ours(self):
        if self.solver == "RK44":
            return rk.integrate_explicit(self.model, self.x0, RK44, self.h, self.t_end)
        return ga.integrate_genalpha(self.model, self.x0, self.h, self.t_end)

    def theirs(self):
        return ex.solve(self.exudyn, self.solver, self.h, self.t_end)


def _output(row: Row, run) -> np.ndarray:
    """Our final output (what Exudyn reports first: a point, or the joint angles) from a run."""
    m = row.model
    if m.code == lg.CHAIN:
        return run.q
    if m.code in (lg.MB_RV, lg.MB_RXYZ, lg.MB_EP):  # the last body's centre of mass
        return mb.body_position(m.code - lg.MB_RV, run.q, int(m.P[0]) - 1)
    return lg.com_state(m.code, run.q, run.v, m.P)[:3]


def rows(quick: bool) -> list[Row]:
    scale = 0.2 if quick else 1.0
    out = []
    forms = {"RV": 0, "Rxyz": 1, "EP": 2}
    for f in ("RV", "Rxyz"):
        model, x0 = lg.heavy_top_model(lg.TOP_RV + forms[f])
        out.append(Row(f"RK44 free heavy top, {f}", model, x0, ex.heavy_top_system(f, constrained=False),
                       "RK44", 1e-4, 1.0 * scale))
    for f in ("RV", "Rxyz"):
        model, x0 = lg.rotor_model(lg.ROT_RV + forms[f])
        out.append(Row(f"RK44 rotor, {f}", model, x0, ex.rotor_system(f), "RK44", 1e-4, 0.5 * scale))
    for f in ("RV", "Rxyz", "EP"):
        model, x0 = lg.heavy_top_model(lg.TOP_RV + forms[f])
        t_end = 0.9 if f == "Rxyz" else 1.0  # Rxyz: our Newton fails at 0.918 s (φ₁ → π/2, Ĝ singular)
        out.append(Row(f"gen-α free heavy top, {f}", model, x0, ex.heavy_top_system(f, constrained=False),
                       "GeneralizedAlpha", 1e-4, t_end * scale))
    for f in ("RV", "Rxyz", "EP"):
        model, x0 = lg.heavy_top_model(lg.SPH_RV + forms[f])
        out.append(Row(f"gen-α heavy top, spherical joint, {f}", model, x0,
                       ex.heavy_top_system(f, constrained=True), "GeneralizedAlpha", 1e-4, 1.0 * scale))
    for f in ("RV", "Rxyz", "EP"):
        model, x0 = lg.rotor_model(lg.ROT_RV + forms[f])
        out.append(Row(f"gen-α rotor, {f}", model, x0, ex.rotor_system(f), "GeneralizedAlpha", 1e-4,
                       0.5 * scale))
    crank = sc.SliderCrank()
    for f in ("RV", "Rxyz", "EP"):
        model = lg.CompiledModel(lg.MB_RV + forms[f], crank.system().params())
        out.append(Row(f"gen-α slider–crank, {f}", model, crank.initial_state(forms[f]),
                       ex.slider_crank_system(f, crank), "GeneralizedAlpha", 1e-4, 0.5 * scale))
    home = Puma560()
    robot = Puma560(phi_goal_deg=tuple(np.asarray(home.phi_init_deg) + 10.0))  # 10° on every joint
    P = robot.system(profile=False).params()
    for f in ("RV", "Rxyz", "EP"):
        model = lg.CompiledModel(lg.MB_RV + forms[f], P)
        out.append(Row(f"gen-α Puma 560 (step command), {f}", model, robot.absolute_state(forms[f]),
                       ex.puma_system(f, robot, profile=False), "GeneralizedAlpha", 1e-3, 1.0 * scale))
    chain = lg.CompiledModel(lg.CHAIN, robot.params(profile=False))
    out.append(Row("gen-α Puma 560 (step command), joint coord.", chain,
                   robot.initial_state(), ex.puma_tree_system(robot), "GeneralizedAlpha", 1e-3, 1.0 * scale))
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--quick", action="store_true", help="a fifth of the horizons (a smoke run)")
    parser.add_argument("--only", default="", help="run the rows whose label contains this text")
    args = parser.parse_args(argv)
    ok, info = ex.exudyn_available()
    if not ok:
        raise SystemExit(info)
    print(f"Exudyn {info}; {args.rounds} interleaved rounds; CPU time per step, median (spread)\n")
    head = (f"{'row':44} {'h':>7} {'ours µs':>14} {'Exudyn µs':>15} {'ratio':>6} "
            f"{'it/step ours':>12} {'Exudyn':>7} {'|Δ out|':>9}")
    print(head)
    print("-" * len(head))
    for row in rows(args.quick):
        if args.only not in row.label:
            continue
        mine, theirs = row.ours(), row.theirs()  # compile, and the counts of one run
        t = time_interleaved({"ours": row.ours, "exudyn": row.theirs}, rounds=args.rounds)
        n = mine.n_steps
        us = {k: 1e6 * v.median / n for k, v in t.items()}
        spread = {k: f"({100 * v.spread:.0f}%)" for k, v in t.items()}
        it_ours = mine.iterations_per_step
        it_exu = theirs.iterations_per_step
        ours = _output(row, mine)
        dx = np.linalg.norm(ours - theirs.x[-1, :ours.size])
        failed = "" if mine.ok else "  (ours failed)"
        print(f"{row.label:44} {row.h:7.0e} {us['ours']:8.2f} {spread['ours']:>5} {us['exudyn']:9.2f} "
              f"{spread['exudyn']:>5} {us['ours'] / us['exudyn']:6.2f} {it_ours:12.2f} {it_exu:7.2f} "
              f"{dx:9.1e}{failed}", flush=True)


if __name__ == "__main__":
    main()
