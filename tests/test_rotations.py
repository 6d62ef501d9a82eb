import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from mbslib.rotations import (
    cayley_compose,
    cayley_inv_so3,
    cayley_so3,
    dexp_so3,
    dexpinv_so3,
    exp_so3,
    hat,
    log_so3,
    rotvec_to_cayley,
    tait_bryan_123,
    tait_bryan_123_body_rates,
    tait_bryan_123_from_matrix,
    tait_bryan_123_spatial_rates,
    vee,
)

from .fd import central_difference

unit_vectors = st.tuples(*[st.floats(-1, 1)] * 3).map(np.array).filter(lambda v: np.linalg.norm(v) > 0.1)
unit_vectors = unit_vectors.map(lambda v: v / np.linalg.norm(v))
# Angles including the delicate ones: 0, 1e-8, just below π.
angles = st.one_of(st.sampled_from([0.0, 1e-8, 1e-4, 0.05, np.pi / 2, np.pi - 1e-8]), st.floats(0, np.pi - 1e-6))
rotation_vectors = st.builds(lambda n, a: a * n, unit_vectors, angles)
vectors = st.tuples(*[st.floats(-3, 3)] * 3).map(np.array)


def test_hat_vee(rng):
    a, b = rng.normal(size=(2, 3))
    np.testing.assert_allclose(hat(a) @ b, np.cross(a, b), atol=1e-15)
    np.testing.assert_array_equal(vee(hat(a)), a)


@given(rotation_vectors)
def test_exp_agrees_with_scipy_and_is_orthogonal(phi):
    R = exp_so3(phi)
    np.testing.assert_allclose(R, Rotation.from_rotvec(phi).as_matrix(), atol=4e-16 * 4)
    np.testing.assert_allclose(R @ R.T, np.eye(3), atol=1e-15 * 4)
    assert np.linalg.det(R) == pytest.approx(1.0, abs=1e-14)


@given(rotation_vectors)
def test_log_inverts_exp(phi):
    np.testing.assert_allclose(log_so3(exp_so3(phi)), phi, atol=1e-14 + 1e-8 * (np.linalg.norm(phi) > np.pi - 1e-7))


@pytest.mark.parametrize("theta", [0.0, 1e-8, 1e-3, 1.0, 3.0, np.pi - 1e-8])
def test_exp_log_at_delicate_angles(theta, rng):
    n = rng.normal(size=3)
    phi = theta * n / np.linalg.norm(n)
    np.testing.assert_allclose(exp_so3(log_so3(exp_so3(phi))), exp_so3(phi), atol=2e-15)
    np.testing.assert_allclose(log_so3(exp_so3(phi)), phi, atol=2e-15 if theta < 3 else 2e-8)


def test_log_at_pi_is_a_valid_rotation_vector():
    R = exp_so3(np.pi * np.array([0.0, 0.6, 0.8]))
    phi = log_so3(R)
    assert np.linalg.norm(phi) == pytest.approx(np.pi)
    np.testing.assert_allclose(exp_so3(phi), R, atol=1e-15)


@given(rotation_vectors)
def test_dexp_times_dexpinv_is_identity(phi):
    np.testing.assert_allclose(dexp_so3(phi) @ dexpinv_so3(phi), np.eye(3), atol=1e-13)


@pytest.mark.parametrize("theta", [0.0, 1e-8, 0.049, 0.051, 1.0, 3.0])
def test_dexp_is_the_right_trivialised_derivative_of_exp(theta, rng):
    n = rng.normal(size=3)
    phi = theta * n / np.linalg.norm(n)
    D = central_difference(exp_so3, phi)  # (3, 3, 3): dR/dphi_k
    T = dexp_so3(phi)
    for k in range(3):
        np.testing.assert_allclose(vee(exp_so3(phi).T @ D[:, :, k]), T[:, k], atol=1e-9)


@pytest.mark.parametrize("theta", [0.0, 1e-6, 0.0499, 0.0501, 2.0])
def test_series_branches_are_continuous(theta):
    phi = np.array([theta, 0.0, 0.0]) + np.array([0.0, 0.3, -0.2]) * theta
    exact_T = dexp_so3(phi)
    np.testing.assert_allclose(dexpinv_so3(phi), np.linalg.inv(exact_T), atol=1e-14)


def test_dexpinv_rejects_2pi():
    with pytest.raises(ValueError, match="2π"):
        dexpinv_so3(np.array([2 * np.pi, 0, 0]))


@given(vectors, vectors)
def test_cayley_composition(a, b):
    if abs(1 - 0.25 * a @ b) < 1e-3:
        return
    np.testing.assert_allclose(cayley_so3(cayley_compose(a, b)), cayley_so3(a) @ cayley_so3(b), atol=1e-13)


@given(vectors)
def test_cayley_inverse_and_agreement_with_exp(c):
    R = cayley_so3(c)
    np.testing.assert_allclose(R @ R.T, np.eye(3), atol=1e-15 * 8)
    np.testing.assert_allclose(cayley_inv_so3(R), c, atol=1e-12 * (1 + c @ c))
    phi = log_so3(R)
    if np.linalg.norm(phi) < np.pi - 1e-3:
        np.testing.assert_allclose(rotvec_to_cayley(phi), c, atol=1e-11 * (1 + c @ c))


def test_cayley_rejects_rotation_by_pi():
    with pytest.raises(ValueError, match="π"):
        cayley_inv_so3(exp_so3(np.array([np.pi, 0, 0])))
    with pytest.raises(ValueError, match="below π"):
        rotvec_to_cayley(np.array([4.0, 0, 0]))


@given(st.tuples(st.floats(-3, 3), st.floats(-1.5, 1.5), st.floats(-3, 3)).map(np.array))
def test_tait_bryan_matches_scipy(angles):
    np.testing.assert_allclose(tait_bryan_123(angles), Rotation.from_euler("XYZ", angles).as_matrix(), atol=1e-15 * 8)
    if abs(np.cos(angles[1])) > 1e-3:
        np.testing.assert_allclose(tait_bryan_123_from_matrix(tait_bryan_123(angles)), angles, atol=1e-12)


def test_tait_bryan_kinematic_matrices(rng):
    angles, rates = rng.normal(size=(2, 3))
    Rdot = central_difference(lambda s: tait_bryan_123(angles + s[0] * rates), np.zeros(1))[:, :, 0]
    R = tait_bryan_123(angles)
    np.testing.assert_allclose(vee(R.T @ Rdot), tait_bryan_123_body_rates(angles) @ rates, atol=1e-9)
    np.testing.assert_allclose(vee(Rdot @ R.T), tait_bryan_123_spatial_rates(angles) @ rates, atol=1e-9)
    assert np.linalg.det(tait_bryan_123_body_rates(angles)) == pytest.approx(np.cos(angles[1]))


def test_gimbal_lock_raises():
    with pytest.raises(ValueError, match="gimbal lock"):
        tait_bryan_123_from_matrix(tait_bryan_123([0.3, np.pi / 2, 0.2]))
