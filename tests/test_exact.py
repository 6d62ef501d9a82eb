import numpy as np
import pytest
from scipy.integrate import solve_ivp

from mbslib.exact import free_body_angular_velocity

J = np.array([2.0, 3.0, 4.5])


def euler(t, W):
    return np.cross(J * W, W) / J


@pytest.mark.parametrize("Omega0", [
    [1.0, 0.5, 2.0],            # circles the major axis (L² > 2E J₂)
    [3.0, 0.4, -0.5],           # circles the minor axis (L² < 2E J₂)
    [-0.7, 1.2, 0.9],
    [1e-3, 2.0, 1e-3],          # tennis racket: near the intermediate axis
    [0.0, 1.0, 0.3],            # a zero component at t = 0
])
def test_jacobi_solution_matches_a_tight_numerical_solution(Omega0):
    t = np.linspace(0.0, 20.0, 401)
    reference = solve_ivp(euler, (0, 20.0), Omega0, method="DOP853", rtol=1e-12, atol=1e-12, t_eval=t).y.T
    exact = free_body_angular_velocity(J, Omega0, t)
    np.testing.assert_allclose(exact[0], Omega0, atol=1e-14)
    assert np.abs(exact - reference).max() < 1e-9 * np.abs(reference).max()


def test_invariants_are_exact_along_the_solution():
    W = free_body_angular_velocity(J, [0.3, -1.1, 0.8], np.linspace(0, 50, 1000))
    for invariant in (W**2 @ J, W**2 @ J**2):  # 2E and L²
        assert np.ptp(invariant) < 1e-13 * invariant.mean()


@pytest.mark.parametrize("inertia, Omega0, match", [
    ([3.0, 2.0, 3.0], [1, 1, 1], "inertia"),  # any order, but distinct
    ([2.0, 3.0, 4.5], [0.0, 1.0, 0.0], "separatrix"),
    ([2.0, 3.0, 4.5], [1.0, 2.0], "Omega0"),
])
def test_bad_input(inertia, Omega0, match):
    with pytest.raises(ValueError, match=match):
        free_body_angular_velocity(inertia, Omega0, [0.0])
