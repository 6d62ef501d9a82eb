from functools import partial

import numpy as np
import pytest

from mbslib.convergence import observed_order, reference_solution
from mbslib.integrators.hamiltonian import (
    jacobian_dg,
    jacobian_midpoint,
    residual_dg,
    residual_midpoint,
    step_dg,
    step_midpoint,
)
from mbslib.simulate import simulate
from mbslib.systems.elastic_pendulum import ElasticPendulum

from .fd import central_difference

SYSTEM = ElasticPendulum()
X0 = np.array([0.6, -0.9, 0.5, 0.8])


def test_potential_derivatives(rng):
    q = rng.normal(size=2)
    np.testing.assert_allclose(central_difference(SYSTEM.potential, q), SYSTEM.grad_potential(q), rtol=1e-8)
    np.testing.assert_allclose(central_difference(SYSTEM.grad_potential, q), SYSTEM.hess_potential(q), rtol=1e-7,
                               atol=1e-7)


@pytest.mark.parametrize("residual, jacobian", [(residual_dg, jacobian_dg), (residual_midpoint, jacobian_midpoint)])
def test_jacobians_against_finite_differences(residual, jacobian, rng):
    x1 = X0 + 0.1 * rng.normal(size=4)
    J_fd = central_difference(lambda x: residual(SYSTEM, X0, x, 0.05), x1)
    np.testing.assert_allclose(jacobian(SYSTEM, X0, x1, 0.05), J_fd, atol=1e-7)


def test_dg_conserves_energy_to_round_off_and_midpoint_does_not():
    dg = simulate(partial(step_dg, SYSTEM, tol=1e-13), X0, 0.05, 5.0)
    mp = simulate(partial(step_midpoint, SYSTEM), X0, 0.05, 5.0)
    H_dg = np.array([SYSTEM.energy(x) for x in dg.x])
    H_mp = np.array([SYSTEM.energy(x) for x in mp.x])
    assert np.max(np.abs(np.diff(H_dg))) < 1e-12
    assert np.max(np.abs(np.diff(H_mp))) > 1e-6


@pytest.mark.parametrize("step", [step_dg, step_midpoint])
def test_second_order(step):
    t_end = 1.0
    ref = reference_solution(SYSTEM.rhs, X0, [0.0, t_end])[-1]
    hs = np.array([0.02, 0.01, 0.005])
    errors = [np.linalg.norm(simulate(partial(step, SYSTEM), X0, h, t_end).x[-1] - ref) for h in hs]
    assert observed_order(hs, errors) == pytest.approx(2.0, abs=0.1)


def test_bad_parameters_raise():
    with pytest.raises(ValueError, match="k must be"):
        ElasticPendulum(k=-1.0)
    with pytest.raises(ValueError, match="h must be"):
        step_dg(SYSTEM, X0, -0.1)
