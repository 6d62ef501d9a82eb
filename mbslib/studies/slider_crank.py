"""The slider–crank of paper 002 (Sect. 4.3) run by the generalized-α: a study, not a system.

:func:`simulate` runs :func:`mbslib.integrators.generalized_alpha.integrate_genalpha`
(Algorithms 4/5, eqs. 33–43, Bottasso scaling, full or modified Newton) on the model of
:meth:`mbslib.systems.slider_crank.SliderCrank.model` and evaluates the slider position, crank
angle, energy and joint residual from the recorded states (:func:`mbslib.systems.slider_crank.outputs`)
into the rows of its :class:`~mbslib.trajectory.Trajectory`.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from mbslib.integrators.generalized_alpha import GeneralizedAlpha, NewtonSettings, integrate_genalpha
from mbslib.systems import slider_crank as sc
from mbslib.trajectory import Trajectory


def simulate(form, h: float, t_end: float, *, crank: sc.SliderCrank | None = None,
             method: GeneralizedAlpha = GeneralizedAlpha(),
             newton: NewtonSettings = NewtonSettings(), record_every: int | None = None) -> Trajectory:
    """Integrate the slider–crank in formulation ``form`` ("RV", "Rxyz", "EP" or its code) with
    generalized-α at fixed step ``h`` up to ``t_end``. A failed Newton iteration ends the run.

    The trajectory's rows ``x`` are ``[s, θ mod 2π, energy, |Φ_joints|]``
    (:func:`mbslib.systems.slider_crank.outputs`) at ``t = k·record_every·h`` up to the failing
    step, if any; with ``record_every = None`` the one row of the final state reached (at ``t_final``).
    """
    form = sc.formulation_code(form)
    crank = sc.SliderCrank() if crank is None else crank
    model, x0 = crank.model(form)
    n = model.n
    run = integrate_genalpha(model, x0, h, t_end, method=method, newton=newton, record_every=record_every)
    if record_every is not None:
        t, states = run.t, run.x
    else:
        t, states = np.array([run.t_final]), np.r_[run.q, run.v][None, :]
    rows = np.array([sc.outputs(form, x[:n], x[n:], model.P) for x in states])
    return replace(run, t=t, x=rows)


def slider_position(run: Trajectory) -> float:
    """The slider position ``s`` at the last row of a :func:`simulate` run."""
    return float(run.x[-1, 0])
