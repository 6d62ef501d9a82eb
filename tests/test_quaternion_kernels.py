"""The compiled per-body and per-joint-end blocks of the quaternion formulation
(:class:`mbslib.formulations.quaternions.QuaternionSystem`) against the NumPy definitions of
:mod:`mbslib.quaternions`, their Jacobians against finite differences, and the band order of its
Newton systems."""

from dataclasses import replace

import numpy as np
import pytest
import scipy.sparse as sp

from mbslib import newton
from mbslib.formulations import quaternions as fq
from mbslib.integrators import livens
from mbslib.model import AppliedLoad, Constant, Spring
from mbslib.newton import NewtonError, fd_jacobian
from mbslib.quaternions import (
    E,
    G,
    Ql,
    Qr,
    _put_G,
    _put_minus,
    _Ql,
    _Qr,
    angular_momentum,
    mass_matrix_4,
    minus,
    plus,
    quat_grad_kinetic,
    rotate_jacobian,
    rotation_matrix,
)
from mbslib.systems.chain import chain

RNG = np.random.default_rng(20261124)
ROUND_OFF = 4e-16  # relative to the largest entry: a few units in the last place


def close(actual, desired):
    np.testing.assert_allclose(actual, desired, rtol=0, atol=ROUND_OFF * np.abs(desired).max())


def rel(a, b):
    return np.max(np.abs(a - b)) / max(1.0, np.max(np.abs(b)))


def forced_chain(n_bodies):
    """A chain with a damped spring to its last rod and a torque on its first."""
    spring = Spring(None, n_bodies - 1, [n_bodies + 0.5, 0.0, 1.0], [0.5, 0.0, 0.0], stiffness=40.0,
                    rest_length=0.8, damping=3.0)
    return replace(chain(n_bodies), springs=(spring,), loads=(AppliedLoad(0, torque=Constant([0.2, -0.1, 0.3])),))


def test_the_quaternion_matrices_of_the_kernels_are_those_of_mbslib_quaternions():
    for q in RNG.standard_normal((5, 4)):
        for put, reference, shape in ((_put_G, G(q), (3, 4)), (fq._put_E, E(q), (3, 4)),
                                      (_put_minus, minus(q[1:]), (4, 4)), (fq._put_plus, plus(q[1:]), (4, 4))):
            out = np.empty(shape)
            put(q if shape == (3, 4) else q[1:], out)
            np.testing.assert_array_equal(out, reference)


def test_compiled_quaternion_products_are_those_of_mbslib_quaternions():
    for q in RNG.standard_normal((5, 4)):
        np.testing.assert_array_equal(_Ql(q), Ql(q))
        np.testing.assert_array_equal(_Qr(q), Qr(q))
        np.testing.assert_array_equal(livens._A(q), np.vstack([q, -G(q)]))  # ∂(Q_l(q)ᵀx)/∂q at x = q


def test_body_points_and_their_jacobians():
    q = RNG.standard_normal(7 * 3)
    body, X = np.array([2, 0, 1, 2]), RNG.standard_normal((4, 3))
    points, jacobians = fq._body_points(q, body, X)
    for k, b in enumerate(body):
        quat = q[7 * b + 3:7 * b + 7]  # not a unit quaternion: R(q) = E(q)G(q)ᵀ is quadratic in q
        close(points[k], q[7 * b:7 * b + 3] + rotation_matrix(quat) @ X[k])
        close(jacobians[k], rotate_jacobian(quat, X[k]))
        assert rel(jacobians[k], fd_jacobian(lambda z, k=k: rotation_matrix(z) @ X[k], quat)) < 1e-8


def test_end_hessians_are_the_levers_times_the_multipliers():
    lever, mu = RNG.standard_normal((5, 4, 4)), RNG.standard_normal((5, 3))
    close(fq._end_hessians(lever, mu), lever @ plus(mu))


def test_joint_residuals_are_the_differences_of_the_joint_points():
    system = fq.QuaternionSystem(forced_chain(4))
    q = perturbed(system)[:system.n]
    g = system.constraint(q)
    for k, ((body_a, Xa), (body_b, Xb)) in enumerate(system.joints):
        point_a = Xa if body_a is None else q[system._t(body_a)] + rotation_matrix(q[system._r(body_a)]) @ Xa
        point_b = q[system._t(body_b)] + rotation_matrix(q[system._r(body_b)]) @ Xb
        scale = max(np.abs(point_a).max(), np.abs(point_b).max())  # round-off of the points, not of their gap
        np.testing.assert_allclose(g[system.N + 3 * k:system.N + 3 * k + 3], point_a - point_b, rtol=0,
                                   atol=ROUND_OFF * scale)


def perturbed(system):
    x = system.initial_state()
    return x + 0.1 * RNG.standard_normal(x.size)


def test_system_matrices_are_the_per_body_definitions():
    system = fq.QuaternionSystem(chain(3))
    q, _, v, _ = livens.split_state(system, perturbed(system))
    M = system.mass_matrix(q)
    k = system.grad_kinetic(q, v)
    L = system.angular_momentum(q, M @ v)
    states = system.body_states(0.0, q, v)
    expected_L = np.zeros(3)
    for a in range(system.N):
        t, r = system._t(a), system._r(a)
        close(M[r, r], mass_matrix_4(q[r], system.J[a]))
        for whole, block in zip(k[2:], quat_grad_kinetic(system.J[a], q[r], v[r])[2:], strict=True):
            close(whole[r, r], block)
        expected_L += np.cross(q[t], M[t, t] @ v[t]) + angular_momentum(q[r], M[r, r] @ v[r])
        close(states.rotation[0, a], rotation_matrix(q[r]) @ system.V[a].T)
        close(states.angular_velocity[0, a], system.V[a] @ (2.0 * G(q[r]) @ v[r]))
    close(L, expected_L)


@pytest.mark.parametrize("model", [chain(3), forced_chain(3)], ids=["chain", "spring-damper and torque"])
def test_system_jacobians_match_finite_differences(model):
    system = fq.QuaternionSystem(model)
    q0, _, v0, lam = livens.split_state(system, perturbed(system))
    q1, _, v1, _ = livens.split_state(system, perturbed(system))
    k = system.dg_kinetic(q0, q1, v0, v1)
    assert rel(k.Tq_q, fd_jacobian(lambda z: system.dg_kinetic(q0, z, v0, v1).Tq, q1)) < 1e-8
    assert rel(k.Tq_v, fd_jacobian(lambda z: system.dg_kinetic(q0, q1, v0, z).Tq, v1)) < 1e-8
    assert rel(k.Tv_q, fd_jacobian(lambda z: system.dg_kinetic(q0, z, v0, v1).Tv, q1)) < 1e-8
    assert rel(k.Tv_v, fd_jacobian(lambda z: system.dg_kinetic(q0, q1, v0, z).Tv, v1)) < 1e-8
    k = system.grad_kinetic(q1, v1)
    assert rel(k.Tq_q, fd_jacobian(lambda z: system.grad_kinetic(z, v1).Tq, q1)) < 1e-8
    assert rel(k.Tq_v, fd_jacobian(lambda z: system.grad_kinetic(q1, z).Tq, v1)) < 1e-8
    assert rel(k.Tv_q, fd_jacobian(lambda z: system.grad_kinetic(z, v1).Tv, q1)) < 1e-8
    assert rel(k.Tv_v, fd_jacobian(lambda z: system.grad_kinetic(q1, z).Tv, v1)) < 1e-8
    np.testing.assert_array_equal(system.mass_matrix(q1), k.Tv_v)
    assert rel(system.constraint_jacobian(q1), fd_jacobian(system.constraint, q1)) < 1e-8
    hessian = fd_jacobian(lambda z: system.constraint_jacobian(z).T @ lam, q1)
    assert rel(system.constraint_hessian(q1, lam), hessian) < 1e-8
    x_n, x_n1 = perturbed(system), perturbed(system)
    for residual, jacobian in ((livens.residual_eml, livens.jacobian_eml), (livens.residual_mpl, livens.jacobian_mpl)):
        K = jacobian(system, x_n, x_n1, 1e-2, 0.3, sparse=True).toarray()
        assert rel(K, fd_jacobian(lambda z, residual=residual: residual(system, x_n, z, 1e-2, 0.3), x_n1)) < 1e-7


@pytest.mark.parametrize("model", [chain(3), forced_chain(4)], ids=["chain", "spring-damper and torque"])
def test_dense_system_matrices_are_the_sparse_ones_bit_for_bit(model):
    """The compiled dense evaluations (one call each) give the values of the sparse assembly."""
    system = fq.QuaternionSystem(model)
    q0, _, v0, lam = livens.split_state(system, perturbed(system))
    q1, _, v1, _ = livens.split_state(system, perturbed(system))
    pairs = [*zip(system.dg_kinetic(q0, q1, v0, v1), system.dg_kinetic(q0, q1, v0, v1, sparse=True), strict=True),
             *zip(system.grad_kinetic(q1, v1), system.grad_kinetic(q1, v1, sparse=True), strict=True),
             (system.constraint_jacobian(q1), system.constraint_jacobian(q1, sparse=True)),
             (system.constraint_hessian(q1, lam), system.constraint_hessian(q1, lam, sparse=True))]
    for dense, sparse in pairs:
        assert isinstance(dense, np.ndarray)
        np.testing.assert_array_equal(dense, sparse if isinstance(sparse, np.ndarray) else sparse.toarray())


def test_a_chain_newton_matrix_lies_in_a_band_of_ten_in_the_systems_order():
    system = fq.QuaternionSystem(chain(16))
    size = system.n + system.m
    np.testing.assert_array_equal(np.sort(system.band_order), np.arange(size))  # a permutation of (q, λ)
    x = perturbed(system)
    y = np.concatenate([x[:system.n], x[3 * system.n:]])
    K = sp.csc_array(livens.jacobian_reml(system, x, y, 1e-3))
    r = RNG.standard_normal(size)
    dy = newton.sparse_solve(K, r, system.band_order)
    band, rcm = newton._BANDS[(size, K.nnz, False)], newton._Band.of(K)
    assert (band.kl, band.ku) == (10, 10) and band.kl < rcm.kl
    np.testing.assert_allclose(dy, sp.linalg.spsolve(K, r), rtol=0, atol=1e-12 * np.abs(dy).max())


def test_a_flipped_quaternion_of_any_body_trips_the_antipodal_guard():
    system = fq.QuaternionSystem(chain(5))
    q = system.initial_state()[:system.n]
    livens._guard_antipodal(system, q, q, [0.0], 0.0)
    for a in range(system.N):
        flipped = q.copy()
        flipped[system._r(a)] *= -1.0
        with pytest.raises(NewtonError, match="antipodal"):
            livens._guard_antipodal(system, q, flipped, [0.0], 0.0)
