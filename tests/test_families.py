"""Every integrator family of the book on one free asymmetric body and one heavy top.

Each mechanism is described once (:mod:`mbslib.model`); every method runs it through the one call
of its family (:meth:`mbslib.shootout.Method.run`), which builds the family's coordinates from the
description and maps the trajectory back to body states. The attitude at the end converges to a
tight ``solve_ivp`` reference (:func:`mbslib.reference.reference_states`, rtol 1e-12) at the
method's order. A method that cannot take a mechanism says why.
"""

import numpy as np
import pytest

from mbslib.convergence import observed_order
from mbslib.reference import reference_states
from mbslib.shootout import METHODS
from mbslib.systems.benchmarks import spinning_body
from mbslib.systems.rigid_bodies import heavy_top

# mechanism, horizon [s] and step ladder [s]; the heavy top spins fast and needs short steps
MECHANISMS = {"free body": (spinning_body(), 1.0, (0.05, 0.025)),
              "heavy top": (heavy_top(), 0.1, (1e-3, 5e-4))}
# what refuses which mechanism, and the reason it gives
REFUSALS = {("RR (23)", "free body"): "spherical bodies", ("RR (25)", "free body"): "spherical bodies",
            ("RR (27)", "free body"): "spherical bodies", ("RR (23)", "heavy top"): "spherical inertia",
            ("RR (25)", "heavy top"): "spherical inertia", ("RR (27)", "heavy top"): "spherical inertia",
            ("EM (004)", "heavy top"): "one free body"}
# methods with step-size control take h as their largest step: no fixed-step order to observe
FIXED_STEP = [name for name, method in METHODS.items() if not method.adaptive]


@pytest.fixture(scope="module")
def references():
    return {name: reference_states(model, [0.0, t_end]).at(-1) for name, (model, t_end, _) in MECHANISMS.items()}


@pytest.mark.parametrize("mechanism", list(MECHANISMS))
@pytest.mark.parametrize("name", FIXED_STEP)
def test_each_method_converges_at_its_order_or_says_why(name, mechanism, references):
    method = METHODS[name]
    model, t_end, hs = MECHANISMS[mechanism]
    reason = method.refusal(model)
    if (name, mechanism) in REFUSALS:
        assert REFUSALS[name, mechanism] in reason
        return
    assert reason == ""
    if method.order > 2:  # the high orders reach the reference's accuracy at the short steps
        hs = tuple(4 * h for h in hs)
    exact = references[mechanism].rotation[0]
    errors = [np.abs(method.run(model, h, t_end).states.rotation[-1] - exact).max() for h in hs]
    assert observed_order(hs, errors) == pytest.approx(method.order, abs=0.3)


def test_every_family_is_covered():
    """One family per chapter, each on at least one of the two mechanisms."""
    runs_somewhere = {METHODS[name].chapter for name in FIXED_STEP
                      if any((name, m) not in REFUSALS for m in MECHANISMS)}
    assert runs_somewhere == {"000", "001", "002", "004"}
    assert {METHODS[name].chapter for name, _ in REFUSALS} == {"003", "004"}
