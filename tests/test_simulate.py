import numpy as np
import pytest

from mbslib.newton import NewtonError, newton_solve
from mbslib.simulate import simulate, time_grid
from mbslib.trajectory import Work


def step_implicit_euler(lam, x, h, t):
    """Implicit Euler for ẋ = λx, solved with Newton (one update: linear)."""
    return newton_solve(lambda y: y - x - h * lam * y, x, lambda y: np.eye(1) * (1 - h * lam), t=t)


def test_trajectory_is_time_major_and_correct():
    traj = simulate(lambda x, h, t: step_implicit_euler(-2.0, x, h, t), [1.0], 0.1, 1.0)
    assert traj.x.shape == (11, 1) and traj.t.shape == (11,)
    np.testing.assert_allclose(traj.t[-1], 1.0)
    np.testing.assert_allclose(traj.x[-1, 0], (1 / 1.2) ** 10, rtol=1e-12)
    assert len(traj.reports) == 10 and traj.n_iter.tolist() == [1] * 10
    assert traj.h == pytest.approx(0.1)


def test_newton_failure_reports_the_step():
    def failing(x, h, t):
        if t > 0.25:
            return newton_solve(lambda y: y**2 + 1.0, x, lambda y: np.diag(2 * y), max_iter=3, t=t)
        return x, None

    with pytest.raises(NewtonError) as info:
        simulate(failing, [1.0], 0.1, 1.0)
    assert info.value.step == 3 and info.value.t == pytest.approx(0.3)


def test_failure_can_end_the_run_early_instead_of_raising():
    def failing(x, h, t):
        if t > 0.25:
            return newton_solve(lambda y: y**2 + 1.0, x, lambda y: np.diag(2 * y), max_iter=3, t=t)
        return x + h, None

    traj = simulate(failing, [1.0], 0.1, 1.0, throw=False)
    assert traj.n_steps == 3 and traj.failure.step == 3
    np.testing.assert_allclose(traj.x[:, 0], [1.0, 1.1, 1.2, 1.3])
    assert simulate(lambda x, h, t: (x, None), [1.0], 0.1, 1.0, throw=False).failure is None


def test_non_finite_state_raises():
    with pytest.raises(FloatingPointError, match="step 0"):
        simulate(lambda x, h, t: (x * np.inf, None), [1.0], 0.1, 1.0)


@pytest.mark.parametrize("h, t_end, match", [(-0.1, 1.0, "h must be"), (0.0, 1.0, "h must be"),
                                             (0.3, 1.0, "multiple"), (0.1, -1.0, "t_end"), (True, 1.0, "h must be"),
                                             ("0.1", 1.0, "h must be"), (0.1, np.inf, "t_end must be finite")])
def test_bad_step_sizes(h, t_end, match):
    with pytest.raises(ValueError, match=match):
        time_grid(h, t_end)


@pytest.mark.parametrize("every", [0, -1, 2.7, 2.0, True, "2"])
def test_record_every_must_be_a_positive_integer(every):
    with pytest.raises(ValueError, match="record_every must be a positive integer"):
        time_grid(0.1, 1.0, record_every=every)


def test_time_grid_counts_steps_from_t0():
    assert time_grid(0.1, 1.0) == 10 and time_grid(0.1, 1.5, t0=0.5) == 10 and time_grid(0.25, 1.0, record_every=3) == 4


def test_progress_bar_runs():
    traj = simulate(lambda x, h, t: (x, None), [0.0], 0.5, 1.0, show_progress=True)
    assert traj.n_steps == 2


def test_trajectory_carries_the_counted_work():
    traj = simulate(lambda x, h, t: step_implicit_euler(-2.0, x, h, t), [1.0], 0.1, 1.0)
    w = traj.work
    assert (w.steps, w.newton_iterations, w.jacobian_evaluations, w.factorisations) == (10, 10, 10, 10)
    assert w.rhs_evaluations == sum(len(r.residual_history) for r in traj.reports) == 20
    assert w.per_step()["newton_iterations"] == 1.0 and isinstance(traj.cpu_time, float)
    explicit = simulate(lambda x, h, t: (x + h, None), [0.0], 0.1, 1.0)
    assert explicit.work == Work(steps=10)


def test_work_adds_and_validates():
    assert Work(steps=1, rhs_evaluations=2) + Work(steps=3, factorisations=1) == Work(4, 0, 2, 0, 0, 1)
    with pytest.raises(ValueError, match="rejected_steps"):
        Work(rejected_steps=-1)
