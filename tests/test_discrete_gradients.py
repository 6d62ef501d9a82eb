import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mbslib.discrete_gradients import dg_avf, dg_gonzalez, dg_gonzalez_jacobian, dg_invariant, dg_partitioned

from .fd import central_difference


def f(x):
    """A non-quadratic test energy."""
    return np.sin(x[0]) * x[1] ** 2 + np.exp(0.3 * x[2]) + x[0] ** 4


def grad_f(x):
    return np.array([np.cos(x[0]) * x[1] ** 2 + 4 * x[0] ** 3, 2 * np.sin(x[0]) * x[1], 0.3 * np.exp(0.3 * x[2])])


points = st.tuples(*[st.floats(-2, 2)] * 3).map(np.array)


@given(points, points)
def test_gonzalez_directionality(x, y):
    g = dg_gonzalez(f, grad_f, x, y)
    assert g @ (y - x) == pytest.approx(f(y) - f(x), abs=1e-12 * (1 + abs(f(x))))


def test_gonzalez_consistency_and_small_increment_branch(rng):
    x = rng.normal(size=3)
    np.testing.assert_allclose(dg_gonzalez(f, grad_f, x, x), grad_f(x), atol=1e-15)
    y = x + 1e-9 * rng.normal(size=3)
    np.testing.assert_allclose(dg_gonzalez(f, grad_f, x, y), grad_f(0.5 * (x + y)), atol=1e-15)
    # the branch switch does not break directionality beyond round-off
    assert dg_gonzalez(f, grad_f, x, y) @ (y - x) == pytest.approx(f(y) - f(x), abs=1e-15)


def test_gonzalez_is_midpoint_gradient_for_quadratics(rng):
    A = rng.normal(size=(3, 3))
    A = A + A.T
    x, y = rng.normal(size=(2, 3))
    g = dg_gonzalez(lambda z: 0.5 * z @ A @ z, lambda z: A @ z, x, y)
    np.testing.assert_allclose(g, A @ (0.5 * (x + y)), atol=1e-13)


@given(points, points)
def test_avf_directional_for_polynomials(x, y):
    def p(z):
        return z[0] ** 4 * z[1] + z[2] ** 3 - z[0] * z[1] * z[2]

    def grad_p(z):
        return np.array([4 * z[0] ** 3 * z[1] - z[1] * z[2], z[0] ** 4 - z[0] * z[2], 3 * z[2] ** 2 - z[0] * z[1]])

    assert dg_avf(grad_p, x, y) @ (y - x) == pytest.approx(p(y) - p(x), abs=1e-11)


def test_avf_consistency(rng):
    x = rng.normal(size=3)
    np.testing.assert_allclose(dg_avf(grad_f, x, x), grad_f(x), atol=1e-14)


@given(points, points, points, points)
def test_partitioned_directionality(x1, x2, y1, y2):
    def T(q, v):  # kinetic-energy-like: configuration-dependent mass
        return 0.5 * (1 + q[0] ** 2 + np.sin(q[1])) * (v @ v) + q[2] * v[0] * v[1]

    def dT_dq(q, v):
        return np.array([q[0] * (v @ v), 0.5 * np.cos(q[1]) * (v @ v), v[0] * v[1]])

    def dT_dv(q, v):
        return (1 + q[0] ** 2 + np.sin(q[1])) * v + q[2] * np.array([v[1], v[0], 0.0])

    g1, g2 = dg_partitioned(T, dT_dq, dT_dv, x1, x2, y1, y2)
    assert g1 @ (y1 - x1) + g2 @ (y2 - x2) == pytest.approx(T(y1, y2) - T(x1, x2), abs=1e-11)


@given(points, points)
def test_invariant_dg_directional_and_equivariant(x, y):
    """f(x) = f̃(|x|²): the invariant DG is parallel to the midpoint and directional."""

    def f_tilde(s):
        return np.sin(s[0]) + s[0] ** 2

    def grad_f_tilde(s):
        return np.array([np.cos(s[0]) + 2 * s[0]])

    g = dg_invariant(f_tilde, grad_f_tilde, lambda z: z @ z, lambda z: 2 * z, x, y)
    assert g @ (y - x) == pytest.approx(f_tilde([y @ y]) - f_tilde([x @ x]), abs=1e-11)
    mid = 0.5 * (x + y)
    np.testing.assert_allclose(np.cross(g, mid), 0, atol=1e-12 * (1 + np.linalg.norm(g)))


def hess_f(x):
    return np.array([
        [-np.sin(x[0]) * x[1] ** 2 + 12 * x[0] ** 2, 2 * np.cos(x[0]) * x[1], 0.0],
        [2 * np.cos(x[0]) * x[1], 2 * np.sin(x[0]), 0.0],
        [0.0, 0.0, 0.09 * np.exp(0.3 * x[2])],
    ])


def test_hessian_of_test_energy():
    x = np.array([0.3, -0.7, 1.1])
    np.testing.assert_allclose(central_difference(grad_f, x), hess_f(x), atol=1e-8)


@pytest.mark.parametrize("scale", [1.0, 1e-3, 1e-9])
def test_gonzalez_jacobian_against_finite_differences(scale, rng):
    x = rng.normal(size=3)
    y = x + scale * rng.normal(size=3)
    J = dg_gonzalez_jacobian(f, grad_f, hess_f, x, y)
    if scale < 1e-8:  # small-increment branch: half the Hessian at the midpoint
        np.testing.assert_allclose(J, 0.5 * hess_f(0.5 * (x + y)), atol=1e-12)
    else:
        # the correction term is a difference quotient of size |Δ|; keep the FD step well above round-off
        J_fd = central_difference(lambda z: dg_gonzalez(f, grad_f, x, z), y, eps=1e-6)
        np.testing.assert_allclose(J, J_fd, atol=1e-6 * max(1.0, np.abs(J).max()))
