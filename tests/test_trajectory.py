"""One trajectory type from every driver: the compiled RK/RKMK and generalized-α loops and the
slider–crank study return a :class:`~mbslib.trajectory.Trajectory` whose :class:`Work` is what
the loop did, and a run that ends early names the step and time and keeps the steps before it."""

import numpy as np
import pytest

from mbslib.integrators import generalized_alpha as ga
from mbslib.integrators import runge_kutta as rk
from mbslib.integrators.tableaux import DOPRI5, RK44
from mbslib.newton import NewtonError
from mbslib.studies import slider_crank as scs
from mbslib.systems import lie_group_mbs as L
from mbslib.systems import slider_crank as sc
from mbslib.trajectory import IntegrationError, Trajectory, Work


def test_rk44_records_every_few_steps_and_counts_four_forces_per_step():
    model, x0 = L.heavy_top_model(L.TOP_RV)
    h = 1e-3
    run = rk.integrate_explicit(model, x0, RK44, h, 10 * h, record_every=3)
    assert isinstance(run, Trajectory) and run.ok and run.failed_step == -1 and run.reports == ()
    assert run.work == Work(steps=10, rhs_evaluations=4 * 10)
    assert run.n_steps == 10 and run.h == h and run.t_final == 10 * h
    np.testing.assert_array_equal(run.t, h * np.array([0, 3, 6, 9]))
    assert run.x.shape == (4, model.n_record)
    np.testing.assert_array_equal(run.x[0], L.com_state(model.code, x0[:model.n], x0[model.n:], model.P))
    nine = rk.integrate_explicit(model, x0, RK44, h, 9 * h)  # the same steps: the same state
    np.testing.assert_allclose(run.x[-1], L.com_state(model.code, nine.q, nine.v, model.P), rtol=0, atol=1e-15)
    assert nine.t.size == 0 and nine.x.shape == (0, model.n_record)


def test_dopri5_counts_its_rejected_steps_and_records_nothing():
    model, x0 = L.heavy_top_model(L.TOP_RV)
    run = rk.integrate_explicit(model, x0, DOPRI5, 1e-2, 0.02, rtol=1e-10, atol=1e-12)
    w = run.work
    assert run.ok and w.rejected_steps > 0 and w.steps > 2
    assert w.rhs_evaluations == DOPRI5.stages * (w.steps + w.rejected_steps)
    assert (w.newton_iterations, w.jacobian_evaluations, w.factorisations) == (0, 0, 0)  # Lie group: constant M
    assert run.t.size == 0 and abs(run.t_final - 0.02) < 1e-15 and run.h == 1e-2
    with pytest.raises(ValueError, match="record_every"):
        rk.integrate_explicit(model, x0, DOPRI5, 1e-2, 0.02, record_every=1)


def test_explicit_failures_name_the_step_and_keep_the_last_state():
    model, x0 = L.heavy_top_model(L.TOP_RV)
    limited = rk.integrate_explicit(model, x0, DOPRI5, 1e-2, 0.02, rtol=1e-10, atol=1e-12, max_steps=3)
    assert not limited.ok and isinstance(limited.failure, IntegrationError)
    assert "step limit" in str(limited.failure)
    assert limited.work.steps + limited.work.rejected_steps == 3
    assert limited.failed_step == limited.n_steps and limited.failure.t == limited.t_final < 0.02
    # a huge step: the state leaves the finite numbers; the last finite one is kept
    blown = rk.integrate_explicit(model, x0, RK44, 50.0, 5e4, record_every=1)
    k = blown.failed_step
    assert isinstance(blown.failure, IntegrationError) and "non-finite" in str(blown.failure)
    assert 0 < k == blown.n_steps and blown.failure.t == blown.t_final == k * 50.0
    assert blown.work == Work(steps=k, rhs_evaluations=4 * (k + 1))
    assert blown.x.shape == (k + 1, model.n_record) and np.all(np.isfinite(blown.x))
    assert np.all(np.isfinite(blown.q)) and np.all(np.isfinite(blown.v))
    before = rk.integrate_explicit(model, x0, RK44, 50.0, k * 50.0)
    np.testing.assert_array_equal(np.r_[blown.q, blown.v], np.r_[before.q, before.v])


def test_genalpha_counts_newton_work():
    model, x0 = L.heavy_top_model(L.SPH_RV)
    run = ga.integrate_genalpha(model, x0, 1e-3, 0.02, record_every=5)
    w = run.work
    assert isinstance(run, Trajectory) and run.ok and w.steps == run.n_steps == 20 and w.rejected_steps == 0
    assert w.factorisations == w.jacobian_evaluations == w.newton_iterations >= w.steps  # full Newton
    assert w.rhs_evaluations == w.newton_iterations + w.steps  # one residual per iterate, predictor included
    assert run.iterations_per_step == w.newton_iterations / w.steps and 1 <= run.max_iterations
    np.testing.assert_array_equal(run.t, 1e-3 * np.array([0, 5, 10, 15, 20]))
    assert run.x.shape == (5, model.n_record) and run.t_final == 20 * 1e-3


def test_a_failed_genalpha_run_names_the_step_and_keeps_the_steps_before_it():
    crank = sc.SliderCrank()
    model, x0 = crank.model(sc.RXYZ)
    h, newton = 2e-2, ga.NewtonSettings(max_iter=4)  # too few iterations for this step: a late step fails
    run = ga.integrate_genalpha(model, x0, h, 1.0, newton=newton, record_every=1)
    k = run.failed_step
    assert not run.ok and isinstance(run.failure, NewtonError) and k > 0
    assert run.failure.step == k and run.failure.t == run.t_final == k * h
    assert f"step {k}" in str(run.failure) and len(run.failure.residual_history) == newton.max_iter + 1
    assert run.n_steps == k and run.x.shape == (k + 1, 2 * model.n)
    np.testing.assert_array_equal(run.t, h * np.arange(k + 1))
    before = ga.integrate_genalpha(model, x0, h, k * h, newton=newton, record_every=1)
    assert before.ok and before.work.steps == k
    np.testing.assert_array_equal(run.x, before.x)
    np.testing.assert_array_equal(np.r_[run.q, run.v], before.x[-1])
    # the failing step's Newton work counts, its step does not
    w, b = run.work, before.work
    assert w.newton_iterations == b.newton_iterations + newton.max_iter
    study = scs.simulate(sc.RXYZ, h, 1.0, newton=newton, record_every=1)
    assert study.failed_step == k and study.work == w and study.x.shape == (k + 1, 4)
