import numpy as np
import pytest

from mbslib.newton import NewtonError, fd_jacobian, newton_solve


def residual(x):
    return np.array([x[0] ** 2 + x[1] ** 2 - 4.0, np.exp(x[0]) + x[1] - 1.0])


def jacobian(x):
    return np.array([[2 * x[0], 2 * x[1]], [np.exp(x[0]), 1.0]])


def test_converges_quadratically_with_analytic_jacobian():
    x, report = newton_solve(residual, np.array([1.0, -1.0]), jacobian, tol=1e-14)
    assert report.converged and np.max(np.abs(residual(x))) <= 1e-14
    r = np.array(report.residual_history)
    assert len(r) == report.n_iter + 1
    # quadratic convergence: r_{k+1} ≈ C r_k² once close
    ratios = r[2:-1] / r[1:-2] ** 2
    assert np.all(ratios < 10.0)


def test_fd_jacobian_is_accurate_and_keeps_quadratic_convergence():
    x = np.array([0.7, -1.3])
    np.testing.assert_allclose(fd_jacobian(residual, x), jacobian(x), rtol=1e-9, atol=1e-9)
    _, with_fd = newton_solve(residual, np.array([1.0, -1.0]), tol=1e-12)
    _, exact = newton_solve(residual, np.array([1.0, -1.0]), jacobian, tol=1e-12)
    assert with_fd.n_iter == exact.n_iter


def test_zero_iterations_when_initial_guess_solves():
    x0 = np.array([2.0, 0.0])
    x, report = newton_solve(lambda x: x - x0, x0, lambda x: np.eye(2))
    assert report.n_iter == 0 and np.array_equal(x, x0)


def test_non_convergence_raises_with_context():
    with pytest.raises(NewtonError) as info:
        newton_solve(lambda x: np.array([x[0] ** 2 + 1.0]), np.array([0.5]), lambda x: np.array([[2 * x[0]]]),
                     max_iter=5, t=0.25)
    err = info.value
    assert err.t == 0.25 and len(err.residual_history) == 6
    assert "t = 0.25" in str(err) and "did not converge" in str(err)
    assert "step 7" in str(err.at_step(7))


def test_singular_jacobian_and_nan_raise():
    with pytest.raises(NewtonError, match="singular"):
        newton_solve(lambda x: np.array([x[0] ** 2 - 1.0]), np.array([0.0]), lambda x: np.array([[2 * x[0]]]))
    with pytest.raises(NewtonError, match="not finite"):
        newton_solve(lambda x: np.array([np.nan]), np.array([0.0]), lambda x: np.eye(1))


def test_bad_parameters():
    with pytest.raises(ValueError, match="tol"):
        newton_solve(residual, np.zeros(2), jacobian, tol=-1.0)
    with pytest.raises(ValueError, match="max_iter"):
        newton_solve(residual, np.zeros(2), jacobian, max_iter=0)
