"""Every method of the registry through the one entry point, :func:`mbslib.methods.solve`.

Three mechanisms, each described once (:mod:`mbslib.model`): a free asymmetric body, a heavy top and
a chain of three rods. Every method runs each through ``solve`` or refuses it with its reason; the
attitudes at the end converge to a tight ``solve_ivp`` reference (:func:`mbslib.reference.reference_states`,
rtol 1e-12; index-1 form with multipliers for the chain) at the method's order; a method with
step-size control meets its tolerance instead.
"""

import warnings

import numpy as np
import pytest

from mbslib.convergence import observed_order
from mbslib.methods import METHODS, MethodRefusal, RunHealthWarning, applicable, refusals, solve
from mbslib.model import Gravity, Joint, Model, RigidBody
from mbslib.reference import reference_states
from mbslib.systems.benchmarks import pendulum_3d, spinning_body
from mbslib.systems.chain import chain
from mbslib.systems.rigid_bodies import heavy_top

# mechanism, horizon [s] and step ladder [s]; the heavy top spins fast and needs short steps
MECHANISMS = {"free body": (spinning_body(), 1.0, (0.05, 0.025)),
              "heavy top": (heavy_top(), 0.1, (1e-3, 5e-4)),
              "chain of three": (chain(3), 0.5, (4e-3, 2e-3))}
# what refuses which mechanism, and a phrase of the reason it gives
REFUSALS = {**{(f"RR ({eq})", "free body"): "spherical bodies" for eq in ("23", "25", "27")},
            **{(f"RR ({eq})", "heavy top"): "spherical inertia" for eq in ("23", "25", "27")},
            **{(f"RR ({eq})", "chain of three"): "one body" for eq in ("23", "25", "27")},
            ("EM (004)", "heavy top"): "one free body", ("EM (004)", "chain of three"): "one free body",
            **{(name, "chain of three"): "one rigid body" for name in ("Null-EML", "EMH", "MPH")},
            **{(f"RKMK {tab}", "chain of three"): "unconstrained" for tab in ("RK44", "RK67", "DOPRI5")}}


@pytest.fixture(scope="module")
def references():
    return {name: reference_states(model, [0.0, t_end]).at(-1) for name, (model, t_end, _) in MECHANISMS.items()}


@pytest.mark.parametrize("mechanism", list(MECHANISMS))
@pytest.mark.parametrize("name", list(METHODS))
def test_each_method_converges_at_its_order_or_refuses_with_its_reason(name, mechanism, references):
    method = METHODS[name]
    model, t_end, hs = MECHANISMS[mechanism]
    if (name, mechanism) in REFUSALS:
        with pytest.raises(MethodRefusal, match=REFUSALS[name, mechanism]) as refusal:
            solve(model, name, hs[0], t_end)
        assert refusal.value.method == name and name in str(refusal.value)
        assert refusals(model)[name] == refusal.value.reason and name not in applicable(model)
        return
    assert name in applicable(model)
    exact = references[mechanism].rotation[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RunHealthWarning)  # the coarse steps of the ladder are not the point
        if method.adaptive:  # the controller meets its tolerance: the error shrinks with it
            errors = [np.abs(solve(model, name, t_end, t_end, rtol=rtol).states.rotation[-1] - exact).max()
                      for rtol in (1e-6, 1e-9)]
            assert errors[1] < 1e-7 and errors[1] < 1e-2 * errors[0]
            return
        if method.order > 2:  # the high orders reach the reference's accuracy at the short steps
            hs = tuple(4 * h for h in hs)
        errors = [np.abs(solve(model, name, h, t_end).states.rotation[-1] - exact).max() for h in hs]
    order = observed_order(hs, errors)
    if name == "GGL-VI" and model.gravity is not None:  # first order under a potential (chapter 001); on the
        assert order > 0.7 if mechanism == "heavy top" else order == pytest.approx(1.0, abs=0.3)  # fast top's
        return  # ladder the second-order term of its spin still dominates (2.1 here, 1.8 at h = 6e-5)
    assert order == pytest.approx(method.order, abs=0.3)


def test_every_chapter_has_a_method_and_the_registry_is_complete():
    assert {m.chapter for m in METHODS.values()} == {"000", "001", "002", "003", "004"}
    assert set(applicable(pendulum_3d())) >= {"RR (23)", "RR (25)", "RR (27)"}


def test_the_trajectory_of_solve():
    """Time-major instants from t0, every record_every steps and the last; body states from the
    model's own start; the scheme's own coordinates and quantities; work, health and CPU time."""
    model = spinning_body()
    run = solve(model, "EML", 0.1, 1.2, t0=0.5, record_every=3)
    np.testing.assert_allclose(run.t, 0.5 + 0.1 * np.array([0, 3, 6, 7]), rtol=1e-12)
    assert run.states.position.shape == (4, 1, 3) and run.own["x"].shape[0] == 4
    assert run.own["energy"].shape == (4,) and run.own["momentum"].shape == (4, 3)
    for field in ("position", "rotation", "velocity", "angular_velocity"):
        np.testing.assert_allclose(getattr(run.states, field)[0], getattr(model.initial_states(), field)[0],
                                   atol=1e-12)
    assert run.work.steps == 7 and run.ok and run.status == "ok" and run.health.ok and run.cpu_time >= 0
    assert abs(run.energy_error()).max() < 1e-2 and run.method == "EML" and run.model is model


@pytest.mark.parametrize("name", ["gen-α RV", "RKMK RK44", "RR (23)", "GGL-VI"])
def test_one_body_compiled_runs_have_body_states(name):
    """The one-body runs of the compiled drivers carry whole body states (the tutorial's
    generalized-α adapter once received the centre of mass alone)."""
    model = pendulum_3d()
    run = solve(model, name, 0.05, 0.55, record_every=2)
    assert run.states.rotation.shape == (len(run.t), 1, 3, 3) and len(run.t) == 7
    assert np.abs(run.joint_error()).max() < 1e-10


def test_options_are_the_methods_own():
    model = spinning_body()
    with pytest.raises(TypeError, match="rtol"):
        solve(model, "RKMK RK44", 0.1, 1.0, rtol=1e-6)
    with pytest.raises(TypeError, match="EML takes no option rho_inf"):
        solve(model, "EML", 0.1, 1.0, rho_inf=0.5)
    damped = solve(model, "gen-α RV", 0.1, 1.0, rho_inf=0.0)
    assert damped.energy_error()[-1] < solve(model, "gen-α RV", 0.1, 1.0).energy_error()[-1]
    with pytest.raises(ValueError, match="method must be one of"):
        solve(model, "RK4", 0.1, 1.0)


def test_adaptive_steps_are_not_capped_by_the_recording_grid():
    """DOPRI5 records on the grid of h, but between records its steps are free: recording only the
    end lets the tolerance decide (the review found rtol 1e-6 to 1e-10 identical at h = 0.04)."""
    model = spinning_body()
    steps = [solve(model, "RKMK DOPRI5", 0.04, 4.0, record_every=100, rtol=rtol).work.steps
             for rtol in (1e-6, 1e-8, 1e-10)]
    assert steps[0] < steps[1] < steps[2]
    capped = solve(model, "RKMK DOPRI5", 0.04, 4.0, record_every=100, rtol=1e-6, h_max=0.04).work.steps
    assert capped == 100


def test_a_failure_is_raised_or_returned():
    """A Newton failure ends the run: raised with its step and time, or returned with the states
    before it (throw=False)."""
    from mbslib.newton import NewtonError

    model = heavy_top()
    with pytest.raises(NewtonError):
        solve(model, "GGL-VI", 0.05, 1.0)
    run = solve(model, "GGL-VI", 0.05, 1.0, throw=False)
    assert run.status == "failed" and not run.ok and run.t[-1] == run.t_final < 1.0


def test_a_method_that_loses_what_it_keeps_says_so():
    """EML keeps its own energy; on a slender pendulum under load its nodal velocities carry a
    growing mode (chapter 000) until the description's energy and the joints' rates are wrong by
    order one: the run is reported unhealthy, with a warning naming the rule and the time."""
    yaw = np.deg2rad(30.0)
    turn = np.array([[np.cos(yaw), -np.sin(yaw), 0.0], [np.sin(yaw), np.cos(yaw), 0.0], [0.0, 0.0, 1.0]])
    R = turn @ np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]])  # the bar's axis e3 horizontal
    bar = RigidBody("bar", 2.0, [2.0 * 1.01 / 12, 2.0 * 1.01 / 12, 2.0 * 0.01 / 6], position=R @ [0, 0, 0.5],
                    rotation=R, angular_velocity=[0.0, 0.0, 3.0])  # 1 × 0.1 × 0.1 m, spinning about its axis
    model = Model((bar,), (Joint("spherical", None, 0, [0, 0, 0], [0, 0, -0.5]),), gravity=Gravity([0, 0, -9.81]))
    early = solve(model, "EML", 2e-3, 1.0, record_every=5)
    assert early.ok  # healthy while the mode is small
    with pytest.warns(RunHealthWarning, match="joint_rates") as caught:
        run = solve(model, "EML", 2e-3, 2.0, throw=False, record_every=5)
    assert run.status == "unhealthy" and np.ptp(run.own["energy"]) < 1e-9 * abs(run.own["energy"][0])
    assert all("first at t =" in str(w.message) for w in caught)
