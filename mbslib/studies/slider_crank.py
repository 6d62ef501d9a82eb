"""The slider–crank of paper 002 (Sect. 4.3) run by the generalized-α: a study, not a system.

:func:`simulate` runs :func:`mbslib.integrators.generalized_alpha.integrate_genalpha`
(Algorithms 4/5, eqs. 33–43, Bottasso scaling, full or modified Newton) on the model of
:meth:`mbslib.systems.slider_crank.SliderCrank.model` and evaluates the slider position, crank
angle, energy and joint residual from the recorded states (:func:`mbslib.systems.slider_crank.outputs`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mbslib.integrators.generalized_alpha import GeneralizedAlpha, NewtonSettings, integrate_genalpha
from mbslib.systems import slider_crank as sc


@dataclass(frozen=True)
class SliderCrankResult:
    """Outcome of :func:`simulate`.

    ``record`` has rows ``[s, θ mod 2π, energy, |Φ_joints|]`` (:func:`mbslib.systems.slider_crank.outputs`) at
    ``t = k·record_every·h`` (only the final state when ``record_every = 0``). If a step fails,
    ``q, v`` are the state at its start, the record rows from there on are zero (or, with
    ``record_every = 0``, the one row holds the state at the failing step's start).
    """

    q: np.ndarray
    v: np.ndarray
    n_steps: int
    iterations_per_step: float
    jacobians: int
    failed_step: int
    wall_time: float
    record: np.ndarray
    cpu_time: float = 0.0  # CPU seconds of the compiled loop (time.process_time)

    @property
    def ok(self) -> bool:
        return self.failed_step < 0

    @property
    def s(self) -> float:
        """Final slider position."""
        return float(self.record[-1, 0])


def simulate(form, h: float, t_end: float, *, crank: sc.SliderCrank | None = None,
             method: GeneralizedAlpha = GeneralizedAlpha(),
             newton: NewtonSettings = NewtonSettings(), record_every: int = 0) -> SliderCrankResult:
    """Integrate the slider–crank in formulation ``form`` ("RV", "Rxyz", "EP" or its code) with
    generalized-α at fixed step ``h`` up to ``t_end``. A failed Newton iteration ends the run."""
    form = sc.formulation_code(form)
    if not (h > 0 and t_end > 0):
        raise ValueError("h and t_end must be positive")
    n_steps = round(t_end / h)
    if abs(n_steps * h - t_end) > 1e-9 * t_end:
        raise ValueError(f"t_end = {t_end} is not a whole multiple of h = {h}")
    record_every = max(int(record_every), 0)  # ≤ 0: only the final state
    crank = sc.SliderCrank() if crank is None else crank
    model, x0 = crank.model(form)
    n = model.n
    res = integrate_genalpha(model, x0, h, t_end, method=method, newton=newton,
                             record_every=record_every)
    q, v = res.q, res.v
    if record_every > 0:
        states = res.com
        rec = np.zeros((states.shape[0], 4))
        n_done = n_steps if res.ok else res.failed_step
        for k in range(n_done // record_every + 1):  # rows after a failure stay zero
            rec[k] = sc.outputs(form, states[k, :n], states[k, n:], model.P)
    else:
        rec = sc.outputs(form, q, v, model.P)[None, :]
    return SliderCrankResult(q, v, int(res.n_steps), float(res.iterations_per_step),
                             int(res.jacobians), int(res.failed_step), float(res.wall_time), rec,
                             float(res.cpu_time))
