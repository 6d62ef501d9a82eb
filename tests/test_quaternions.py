import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from mbslib.quaternions import (
    IDENTITY,
    E,
    G,
    Ql,
    Qr,
    angular_momentum,
    exp_s3,
    exp_s3_with_jacobian,
    from_matrix,
    mass_matrix_4,
    minus,
    omega_body,
    omega_spatial,
    plus,
    qconj,
    qmul,
    quat_dg_kinetic,
    quat_grad_kinetic,
    rotate_jacobian,
    rotation_matrix,
    to_rotvec,
    velocity_from_omega_body,
)
from mbslib.rotations import exp_so3, hat

from .fd import central_difference

quats = st.tuples(*[st.floats(-2, 2)] * 4).map(np.array)
unit_quats = quats.filter(lambda q: np.linalg.norm(q) > 0.1).map(lambda q: q / np.linalg.norm(q))


@given(quats, quats)
def test_product_matrices(a, b):
    np.testing.assert_allclose(Ql(a) @ b, qmul(a, b), atol=1e-13)
    np.testing.assert_allclose(Qr(b) @ a, qmul(a, b), atol=1e-13)
    np.testing.assert_allclose(Ql(a) @ Ql(a).T, (a @ a) * np.eye(4), atol=1e-13)


@given(quats, quats)
def test_G_E_identities(q, v):
    """Paper 000, (135): G q = E q = 0, G Gᵀ = |q|² I, Gᵀ G = |q|² I - q qᵀ, G(q) v = -G(v) q."""
    for M in (G, E):
        np.testing.assert_allclose(M(q) @ q, 0, atol=1e-14)
        np.testing.assert_allclose(M(q) @ M(q).T, (q @ q) * np.eye(3), atol=1e-13)
        np.testing.assert_allclose(M(q).T @ M(q), (q @ q) * np.eye(4) - np.outer(q, q), atol=1e-13)
        np.testing.assert_allclose(M(q) @ v, -M(v) @ q, atol=1e-13)


@given(unit_quats)
def test_rotation_matrix_agrees_with_scipy_and_rotates_like_conjugation(q):
    R = rotation_matrix(q)
    np.testing.assert_allclose(R, Rotation.from_quat(q, scalar_first=True).as_matrix(), atol=1e-14)
    xi = np.array([0.3, -1.0, 2.0])
    rotated = qmul(qmul(q, np.concatenate([[0.0], xi])), qconj(q))
    np.testing.assert_allclose(rotated[1:], R @ xi, atol=1e-13)
    q_back = from_matrix(R)  # equals ±q (both represent R)
    assert min(np.abs(q_back - q).max(), np.abs(q_back + q).max()) < 1e-12


def test_exp_s3_matches_exp_so3_and_identity(rng):
    np.testing.assert_array_equal(exp_s3(np.zeros(3)), IDENTITY)
    for theta in (1e-9, 0.7, 3.0):
        phi = theta * rng.normal(size=3) / np.sqrt(3)
        q = exp_s3(phi)
        assert np.linalg.norm(q) == pytest.approx(1.0, abs=1e-15)
        np.testing.assert_allclose(rotation_matrix(q), exp_so3(phi), atol=1e-14)
        if np.linalg.norm(phi) < np.pi:
            np.testing.assert_allclose(to_rotvec(q), phi, atol=1e-12)


def test_angular_velocities_and_mass_matrix(rng):
    """Paper 000, (43)-(46): Ω = 2Gv, ω = 2Ev = RΩ, Ṙ = R Ω̂, ½Ω·JΩ = ½ v·M v, M q = 0, rank 3."""
    q = exp_s3(rng.normal(size=3))
    Omega = rng.normal(size=3)
    v = velocity_from_omega_body(q, Omega)
    assert q @ v == pytest.approx(0.0, abs=1e-15)
    np.testing.assert_allclose(omega_body(q, v), Omega, atol=1e-14)
    np.testing.assert_allclose(omega_spatial(q, v), rotation_matrix(q) @ Omega, atol=1e-14)
    Rdot = central_difference(lambda s: rotation_matrix(q + s[0] * v), np.zeros(1))[:, :, 0]
    np.testing.assert_allclose(Rdot, rotation_matrix(q) @ hat(Omega), atol=1e-9)
    J = np.array([6.0, 8.0, 3.0])
    M = mass_matrix_4(q, J)
    assert v @ M @ v == pytest.approx(Omega @ (J * Omega), rel=1e-13)
    np.testing.assert_allclose(M @ q, 0, atol=1e-13)
    assert np.linalg.matrix_rank(M) == 3


def test_angular_momentum_map(rng):
    """L = ½ E(q) p with p = M v equals R J Ω (paper 000, (64))."""
    q = exp_s3(rng.normal(size=3))
    Omega = rng.normal(size=3)
    J = np.diag([6.0, 8.0, 3.0])
    p = mass_matrix_4(q, J) @ velocity_from_omega_body(q, Omega)
    np.testing.assert_allclose(angular_momentum(q, p), rotation_matrix(q) @ J @ Omega, atol=1e-13)


@given(quats, st.tuples(*[st.floats(-2, 2)] * 3).map(np.array))
def test_plus_minus_represent_E_and_G_transposes(q, a):
    """Paper 000, (34): E(q)ᵀa = a⁺q, G(q)ᵀa = a⁻q; both skew; a⁺ = Q_l((0, a)), a⁻ = Q_r((0, a))."""
    np.testing.assert_allclose(E(q).T @ a, plus(a) @ q, atol=1e-13)
    np.testing.assert_allclose(G(q).T @ a, minus(a) @ q, atol=1e-13)
    for M in (plus(a), minus(a)):
        np.testing.assert_array_equal(M, -M.T)
    pure = np.concatenate([[0.0], a])
    np.testing.assert_allclose(plus(a), Ql(pure), atol=1e-15)
    np.testing.assert_allclose(minus(a), Qr(pure), atol=1e-15)


def test_rotate_jacobian_137_matches_finite_differences_off_the_sphere(rng):
    """∂(R(q)X)/∂q = 2E(q)X̄ (137), for any q ∈ R⁴ (R(q) = E(q)G(q)ᵀ is quadratic in q)."""
    for q in (1.3 * rng.normal(size=4), exp_s3(rng.normal(size=3))):
        X = rng.normal(size=3)
        D = rotate_jacobian(q, X)
        assert D.shape == (3, 4)
        fd = central_difference(lambda z, X=X: rotation_matrix(z) @ X, q)
        np.testing.assert_allclose(D, fd, atol=1e-8 * max(1.0, np.abs(fd).max()))


@pytest.mark.parametrize("scale", [0.0, 1e-9, 3e-5, 0.5, 2.0, 3.0])
def test_exp_s3_with_jacobian_matches_exp_s3_and_finite_differences(rng, scale):
    """Value is exp_s3 (40) to round-off (NumPy's and numba's |ϑ| may differ in the last bit,
    which sin(|ϑ|/2)/|ϑ| amplifies near |ϑ| = 2π); the 4×3 derivative matches central
    differences on both sides of the series threshold |ϑ| = 1e-4."""
    theta = scale * rng.normal(size=3) / np.sqrt(3)
    e, D = exp_s3_with_jacobian(theta)
    np.testing.assert_allclose(e, exp_s3(theta), rtol=1e-13, atol=0)
    assert D.shape == (4, 3)
    fd = central_difference(exp_s3, theta)
    np.testing.assert_allclose(D, fd, atol=1e-9)
    # unit norm is preserved to first order: e·∂e/∂ϑ = 0
    np.testing.assert_allclose(e @ D, 0.0, atol=1e-15)


def test_stacks_of_quaternions_give_the_matrices_of_each_to_the_last_bit(rng):
    """G, E, Q_l, Q_r, a⁺, b⁻, the mass matrix and the kinetic parts of a stack of bodies equal
    those of every body alone, bit for bit (the quaternion formulation assembles all bodies at once)."""
    q0, q1, v0, v1 = rng.normal(size=(4, 5, 4))
    J, a = rng.uniform(1.0, 3.0, (5, 3)), rng.normal(size=(5, 3))
    stacked = {"G": G(q1), "E": E(q1), "Ql": Ql(q1), "Qr": Qr(q1), "plus": plus(a), "minus": minus(a),
               "M4": mass_matrix_4(q1, J), "rotate": rotate_jacobian(q1, a)}
    dg, grad = quat_dg_kinetic(J, q0, q1, v0, v1), quat_grad_kinetic(J, q1, v1)
    for k in range(5):
        alone = {"G": G(q1[k]), "E": E(q1[k]), "Ql": Ql(q1[k]), "Qr": Qr(q1[k]), "plus": plus(a[k]),
                 "minus": minus(a[k]), "M4": mass_matrix_4(q1[k], J[k]), "rotate": rotate_jacobian(q1[k], a[k])}
        for name, value in alone.items():
            np.testing.assert_array_equal(stacked[name][k], value, err_msg=name)
        for whole, one in zip(dg, quat_dg_kinetic(J[k], q0[k], q1[k], v0[k], v1[k]), strict=True):
            np.testing.assert_array_equal(whole[k], one)
        for whole, one in zip(grad, quat_grad_kinetic(J[k], q1[k], v1[k]), strict=True):
            np.testing.assert_array_equal(whole[k], one)


def test_compiled_kinetic_parts_are_the_matrix_formulas_87_88(rng):
    """The compiled discrete derivatives against (87)–(88) written with the 3×4 matrices, and the
    continuous ones (48) against their own formulas: a few units in the last place."""
    q0, q1, v0, v1 = rng.normal(size=(4, 4))
    J = rng.uniform(1.0, 3.0, 3)
    qm, vm = 0.5 * (q0 + q1), 0.5 * (v0 + v1)
    y = J * (G(q0) @ v0 + G(q1) @ v1)  # J Ω^{n+1/2}
    JGq1, JGv1 = J[:, None] * G(q1), J[:, None] * G(v1)
    dg = {"Tq": -2.0 * G(vm).T @ y, "Tv": 2.0 * G(qm).T @ y,
          "Tq_q": 2.0 * G(vm).T @ JGv1, "Tq_v": -minus(y) - 2.0 * G(vm).T @ JGq1,
          "Tv_q": minus(y) - 2.0 * G(qm).T @ JGv1, "Tv_v": 2.0 * G(qm).T @ JGq1}
    Y, JGq, JGv = J * (2.0 * G(q1) @ v1), J[:, None] * G(q1), J[:, None] * G(v1)
    grad = {"Tq": -2.0 * G(v1).T @ Y, "Tv": 2.0 * G(q1).T @ Y, "Tq_q": 4.0 * G(v1).T @ JGv,
            "Tq_v": -2.0 * minus(Y) - 4.0 * G(v1).T @ JGq, "Tv_q": 2.0 * minus(Y) - 4.0 * G(q1).T @ JGv,
            "Tv_v": 4.0 * G(q1).T @ JGq}
    for parts, formulas in ((quat_dg_kinetic(J, q0, q1, v0, v1), dg), (quat_grad_kinetic(J, q1, v1), grad)):
        for name, value in formulas.items():
            np.testing.assert_allclose(getattr(parts, name), value, rtol=0, atol=4e-15 * np.abs(value).max(),
                                       err_msg=name)
