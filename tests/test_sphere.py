import numpy as np
import pytest

from mbslib.sphere import exp_s2, log_s2, parallel_transport, project_tangent, tangent_projector


def unit(v):
    v = np.asarray(v, dtype=float)
    return v / np.linalg.norm(v)


def test_projection(rng):
    d = unit(rng.normal(size=3))
    v = rng.normal(size=3)
    P = tangent_projector(d)
    np.testing.assert_allclose(P @ P, P, atol=1e-15)
    assert project_tangent(d, v) @ d == pytest.approx(0.0, abs=1e-15)


def test_exp_log_and_geodesic_speed(rng):
    d = unit(rng.normal(size=3))
    u = project_tangent(d, rng.normal(size=3))
    d1 = exp_s2(d, u)
    assert np.linalg.norm(d1) == pytest.approx(1.0, abs=1e-15)
    assert np.arccos(np.clip(d @ d1, -1, 1)) == pytest.approx(np.linalg.norm(u) % (2 * np.pi), abs=1e-12)
    if np.linalg.norm(u) < np.pi:
        np.testing.assert_allclose(log_s2(d, d1), u, atol=1e-12)
    np.testing.assert_array_equal(exp_s2(d, np.zeros(3)), d)


def test_parallel_transport_is_an_isometry_onto_the_new_tangent_plane(rng):
    d0, d1 = unit(rng.normal(size=3)), unit(rng.normal(size=3))
    a, b = project_tangent(d0, rng.normal(size=3)), project_tangent(d0, rng.normal(size=3))
    Pa, Pb = parallel_transport(d0, d1, a), parallel_transport(d0, d1, b)
    assert Pa @ d1 == pytest.approx(0.0, abs=1e-14)
    assert Pa @ Pb == pytest.approx(a @ b, abs=1e-14)
    # the geodesic direction is transported into the geodesic direction
    u = log_s2(d0, d1)
    np.testing.assert_allclose(parallel_transport(d0, d1, u), -log_s2(d1, d0), atol=1e-12)


def test_bad_input_names_the_parameter():
    with pytest.raises(ValueError, match="d must be a unit"):
        project_tangent(np.array([1.0, 1.0, 0.0]), np.zeros(3))
    with pytest.raises(ValueError, match="tangent"):
        exp_s2(np.array([0.0, 0.0, 1.0]), np.array([0.0, 0.0, 1.0]))
    with pytest.raises(ValueError, match="antipodal"):
        parallel_transport(np.array([0, 0, 1.0]), np.array([0, 0, -1.0]), np.array([1.0, 0, 0]))
