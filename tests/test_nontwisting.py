"""Tests of the director rigid body, the non-twisting body and its EM/DLA schemes (chapter 004)."""

import dataclasses

import numpy as np
import pytest
from scipy.integrate import quad, solve_ivp

from mbslib.formulations import director_triad as dt
from mbslib.integrators.nonholonomic_em import (
    dla_stepper,
    em_stepper,
    enclosed_area,
    frame_defects,
    holonomy_angle,
    jacobian_dla,
    jacobian_em,
    residual_dla,
    residual_em,
    step_dla,
    step_em,
    twist_angle,
)
from mbslib.newton import NewtonError, fd_jacobian
from mbslib.rotations import exp_so3, hat
from mbslib.simulate import simulate
from mbslib.sphere import parallel_transport
from mbslib.systems import nontwisting_body as nb

CASE1 = dict(W0=(6.0, -18.0, 0.0))
CASE3 = dict(alpha=1236.25, beta=537.5)


@pytest.fixture(scope="module")
def rng():
    return np.random.default_rng(4)


def state_dla(body, x):
    return np.concatenate([x[:9], body.director_momenta(x[9:])])


def invariants(body, q, v):
    p = body.director_momenta(v)
    return dt.material_angular_momentum(q, p), dt.spatial_angular_momentum(q, p), body.kinetic_energy(v)


# --- system --------------------------------------------------------------------------------


def test_inertia_relations():
    E = nb.euler_coefficients(nb.J_PAPER)
    np.testing.assert_allclose(E, [[3, 1 / 7, 0], [1 / 7, 2, 0], [0, 0, 1]], atol=1e-15)
    np.testing.assert_allclose(nb.inertia_from_euler(E), nb.J_PAPER, atol=1e-15)


def test_rigid_velocity_invariants(rng):
    """For q̇ = ω × d_i: K = ½ W·JW, π = Λ J Λᵀ ω, Π = J W, w = ω, g = ω·d3 for every a."""
    body = nb.make_body()
    R = exp_so3(rng.standard_normal(3))
    omega = rng.standard_normal(3)
    x = dt.initial_state(omega, R)
    q, v = x[:9], x[9:]
    W = R.T @ omega
    Pi, pi, K = invariants(body, q, v)
    np.testing.assert_allclose(K, 0.5 * W @ nb.J_PAPER @ W, rtol=1e-13)
    np.testing.assert_allclose(pi, R @ nb.J_PAPER @ W, rtol=1e-13)
    np.testing.assert_allclose(Pi, nb.J_PAPER @ W, rtol=1e-13)
    np.testing.assert_allclose(dt.angular_velocity(q, v), omega, rtol=1e-13)
    np.testing.assert_allclose(dt.rotation_from_q(q), R, atol=1e-15)
    for a in (0.0, 0.3, 1.0):
        assert dt.twist_rate(q, v, a) == pytest.approx(omega @ R[:, 2], rel=1e-12)


def test_constraint_jacobian_and_hessian_fd(rng):
    q = rng.standard_normal(9)  # off the manifold
    lam = rng.standard_normal(6)
    np.testing.assert_allclose(dt.constraint_jacobian(q), fd_jacobian(dt.constraint, q), atol=1e-9)
    HtL = fd_jacobian(lambda y: dt.constraint_jacobian(y).T @ lam, q)
    np.testing.assert_allclose(dt.constraint_hessian(lam), HtL, atol=1e-9)
    np.testing.assert_allclose(dt.constraint(dt.q_from_rotation(exp_so3([0.3, -1.0, 2.0]))), 0, atol=1e-15)


def test_constraints_are_the_shared_director_orthonormality(rng):
    """h(q) (order 11, 22, 33, 23, 13, 12 of eq. 63) comes from mbslib.systems.directors."""
    from mbslib.systems.directors import QuadraticConstraints

    q, lam = rng.standard_normal(9), rng.standard_normal(6)
    d1, d2, d3 = dt.directors(q)
    expected = [0.5 * (d1 @ d1 - 1.0), 0.5 * (d2 @ d2 - 1.0), 0.5 * (d3 @ d3 - 1.0), d2 @ d3, d1 @ d3, d1 @ d2]
    np.testing.assert_array_equal(dt.constraint(q), expected)
    shared = QuadraticConstraints.orthonormality(3, dt.ORTHONORMALITY_PAIRS)
    np.testing.assert_allclose(shared.g(q), expected, atol=1e-14)
    assert shared.labels == ("d1.d1", "d2.d2", "d3.d3", "d2.d3", "d1.d3", "d1.d2")
    np.testing.assert_array_equal(dt.constraint_jacobian(q), shared.G(q))
    L = np.array([[lam[0], lam[5], lam[4]], [lam[5], lam[1], lam[3]], [lam[4], lam[3], lam[2]]])
    np.testing.assert_array_equal(dt.constraint_hessian(lam), np.kron(L, np.eye(3)))


def test_load_jacobian_fd(rng):
    body = nb.make_body(**CASE3)
    q = rng.standard_normal(9)
    for t in (0.2, 0.7):
        dQ = fd_jacobian(lambda y, t=t: body.director_forces(y, t), q)
        np.testing.assert_allclose(body.director_forces_jacobian(q, t), dQ, atol=1e-8)
    # the director forces do the virtual work of the moment: Σ f_i·(δθ × d_i) = m·δθ
    dtheta = rng.standard_normal(3)
    q = dt.q_from_rotation(exp_so3(rng.standard_normal(3)))
    dq = dt.rigid_velocity(dtheta, q)
    assert body.director_forces(q, 0.3) @ dq == pytest.approx(body.load_moment(q, 0.3) @ dtheta)


def test_ramp_integrals():
    for T in (1.0, 0.4):
        for t in (0.1, 0.3, 0.5, 0.77, 1.0, 1.6):
            F = quad(lambda s, T=T: float(nb.ramp(s, T)), 0, t, points=[T / 2, T], limit=200)[0]
            assert nb.ramp_integral(t, T) == pytest.approx(F, abs=1e-13)
            G = quad(lambda s, T=T: float(nb.ramp_integral(s, T)), 0, t, points=[T / 2, T], limit=200)[0]
            assert nb.ramp_double_integral(t, T) == pytest.approx(G, abs=1e-13)


def test_post_load_analytic_values():
    Pi, K = nb.post_load_invariants(nb.make_body(alpha=2472.5, beta=1075.0), [0, 0, 0])
    np.testing.assert_allclose(Pi, [-1236.25, -537.5])
    assert K == pytest.approx(1405286225 / 4696, rel=1e-14)
    Pi, K = nb.post_load_invariants(nb.make_body(**CASE3), [1.5, 4.5, 0])
    assert K == pytest.approx(9561713489 / 131488, rel=1e-14)


def test_exact_rotation_against_independent_integration():
    """Case 3 reference (split DOP853) vs one unsplit solve at another tolerance; Case 2 closed form vs an
    ODE solve."""
    cases = ((nb.make_body(**CASE3), [1.5, 4.5, 0]),
             (nb.make_body(alpha=2472.5, beta=1075.0, load_scale=0.01), [0, 0, 0]))
    for body, W0 in cases:
        t = np.array([0.3, 0.8, 1.0, 1.7])
        R = nb.exact_rotation(body, W0, t)

        def rhs(s, y, body=body, W0=W0):
            return (y.reshape(3, 3) @ hat(nb.body_angular_velocity(body, W0, s))).ravel()

        sol = solve_ivp(rhs, (0, 1.7), np.eye(3).ravel(), method="RK45", rtol=1e-11, atol=1e-12, t_eval=t)
        np.testing.assert_allclose(R.reshape(4, 9), sol.y.T, atol=1e-8)


def test_validation_names_parameter():
    with pytest.raises(ValueError, match="a must"):
        nb.make_body(a=1.5)
    with pytest.raises(ValueError, match="duration"):
        nb.make_body(duration=0.0)
    with pytest.raises(ValueError, match="load_scale"):
        nb.make_body(load_scale=-1.0)
    with pytest.raises(ValueError, match="J"):
        nb.make_body(J=np.diag([1.0, 1.0, 5.0]))  # violates the triangle inequality
    body = nb.make_body()
    x0 = dt.initial_state([1.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="h must"):
        step_em(body, x0, -0.1)
    with pytest.raises(ValueError, match="load_rule"):
        step_em(body, x0, 0.1, load_rule="trapezoid")
    with pytest.raises(ValueError, match="omega0"):
        dt.initial_state([1.0, 2.0])


def test_body_record_cannot_be_invalid():
    """The record validates in __post_init__: direct construction and dataclasses.replace too."""
    body = nb.make_body(alpha=1.0)
    for bad, match in ((dict(a=-0.1), "a must"), (dict(duration=-1.0), "duration"),
                       (dict(load_scale=-2.0), "load_scale"),
                       (dict(alpha=np.nan), "alpha"), (dict(beta="1"), "beta"), (dict(J=np.eye(2)), "J"),
                       (dict(J=np.diag([1.0, 1.0, 5.0])), "J")):
        with pytest.raises(ValueError, match=match):
            dataclasses.replace(body, **bad)
        with pytest.raises(ValueError, match=match):
            nb.NontwistingBody(**{**dict(J=nb.J_PAPER), **bad})
    with pytest.raises(dataclasses.FrozenInstanceError):
        body.a = 0.3
    with pytest.raises(ValueError):
        body.J[0, 0] = 10.0  # J is stored read-only
    J = nb.J_PAPER.copy()
    body = nb.NontwistingBody(J, alpha=2)
    J[0, 0] = 10.0  # the record keeps its own copy
    assert body.J[0, 0] == 3.0 and isinstance(body.alpha, float)
    assert dataclasses.replace(body, load_scale=0.5).load_scale == 0.5
    np.testing.assert_array_equal(nb.NontwistingBody().J, nb.J_PAPER)


def test_frame_defects_vectorised_against_sphere_transport(rng):
    """frame_defects (G1–G3) agrees with a loop over mbslib.sphere.parallel_transport and detects each defect."""
    body = nb.make_body(**CASE3, load_scale=0.01)
    q = simulate(em_stepper(body), dt.initial_state([1.5, 4.5, 0.0]), 0.01, 0.5).x[:, :9]
    ortho, twist, transport = frame_defects(q)
    d1, d2, d3 = dt.directors(q)
    loop = max(np.linalg.norm(d[n + 1] - parallel_transport(d3[n], d3[n + 1], d[n]))
               for n in range(len(q) - 1) for d in (d1, d2))
    assert transport == pytest.approx(loop, abs=1e-15)
    assert max(ortho, twist, transport) <= 1e-10
    # a twisting run (the standard body, basic EM) violates G2 and G3 but not G1
    q_std = simulate(em_stepper(body, nonholonomic=False), dt.initial_state([1.5, 4.5, 2.0]), 0.01, 0.2).x[:, :9]
    o, tw, tr = frame_defects(q_std)
    assert o <= 1e-10 and tw > 1e-3 and tr > 1e-3
    q_bad = q.copy()
    q_bad[3, 0] += 1e-6
    assert frame_defects(q_bad)[0] >= 5e-7
    assert frame_defects(q[:1]) == (frame_defects(q[:1])[0], 0.0, 0.0)
    with pytest.raises(ValueError, match="q must"):
        frame_defects(q[:, :6])


# --- schemes: Jacobians ----------------------------------------------------------------------


@pytest.mark.parametrize("unit_length", [True, False])
@pytest.mark.parametrize("nonholonomic", [True, False])
@pytest.mark.parametrize("load_rule", ["midpoint", "endpoint"])
def test_em_jacobian_fd(rng, nonholonomic, load_rule, unit_length):
    body = nb.make_body(**CASE3, a=0.3)
    x = rng.standard_normal(18)
    z = rng.standard_normal((15 if unit_length else 12) + (1 if nonholonomic else 0))
    kw = dict(nonholonomic=nonholonomic, load_rule=load_rule, unit_length=unit_length)
    K = jacobian_em(body, x, z, 0.02, 0.3, **kw)
    Kfd = fd_jacobian(lambda y: residual_em(body, x, y, 0.02, 0.3, **kw), z)
    np.testing.assert_allclose(K, Kfd, atol=1e-9)


@pytest.mark.parametrize("unit_length", [True, False])
@pytest.mark.parametrize("nonholonomic", [True, False])
@pytest.mark.parametrize("load_rule", ["midpoint", "endpoint"])
def test_em_residual_is_the_printed_equations(rng, nonholonomic, load_rule, unit_length):
    """The compiled residual against eqs. (87b), (89)–(94) written with the triad's NumPy pieces."""
    body, h, t = nb.make_body(**CASE3, a=0.3), 0.02, 0.3
    x = rng.standard_normal(18)
    rows = slice(0, 6) if unit_length else slice(3, 6)
    z = rng.standard_normal(9 + rows.stop - rows.start + (1 if nonholonomic else 0))
    q_n, v_n, q_n1, lam = x[:9], x[9:], z[:9], z[9 : 9 + rows.stop - rows.start]
    q_mid, B = 0.5 * (q_n + q_n1), dt.twist_matrix(body.a)
    if load_rule == "midpoint":
        Q = body.director_forces(q_mid, t + 0.5 * h)
    else:
        Q = 0.5 * (body.director_forces(q_n, t) + body.director_forces(q_n1, t + h))
    force = dt.constraint_jacobian(q_mid)[rows].T @ lam + (z[-1] * B @ q_mid if nonholonomic else 0.0) - Q
    expected = [body.M @ (q_n1 - q_n - h * v_n) + 0.5 * h * h * force, dt.constraint(q_n1)[rows]]
    if nonholonomic:
        expected.append([(B @ q_mid) @ (q_n1 - q_n)])
    R = residual_em(body, x, z, h, t, nonholonomic=nonholonomic, load_rule=load_rule, unit_length=unit_length)
    np.testing.assert_allclose(R, np.concatenate(expected), rtol=1e-12, atol=1e-13)


def test_dla_residual_is_the_printed_equations(rng):
    """The compiled residual against h·(B1), (B2), (B3) written with the triad's NumPy pieces."""
    body, h, t = nb.make_body(**CASE3, a=0.7), 0.02, 0.3
    x, z = rng.standard_normal(18), rng.standard_normal(16)
    q_n, p_n, q_n1 = x[:9], x[9:], z[:9]
    B = dt.twist_matrix(body.a)
    force = dt.constraint_jacobian(q_n).T @ z[9:15] + z[15] * B @ q_n - body.director_forces(q_n, t)
    expected = np.concatenate([body.M @ (q_n1 - q_n) - h * p_n + 0.5 * h * h * force, dt.constraint(q_n1),
                               [(B @ (0.5 * (q_n + q_n1))) @ (q_n1 - q_n)]])
    np.testing.assert_allclose(residual_dla(body, x, z, h, t), expected, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("nonholonomic", [True, False])
def test_newton_update_solves_with_the_jacobian(rng, nonholonomic):
    """The Newton matrix handed to newton_solve (compiled assembly and LU) solves with jacobian_em's
    matrix; a singular one (q_{n+1} = 0: H(q_{n+1}) = 0) raises LinAlgError."""
    from mbslib.integrators.nonholonomic_em import _em_equations

    body, h = nb.make_body(**CASE3), 0.02
    x, r = rng.standard_normal(18), rng.standard_normal(16 if nonholonomic else 15)
    equations = _em_equations(body, x, h, 0.3, nonholonomic, "midpoint", True)
    z = rng.standard_normal(equations.n)
    K = jacobian_em(body, x, z, h, 0.3, nonholonomic=nonholonomic)
    np.testing.assert_allclose(equations.newton_matrix(z).solve(r), np.linalg.solve(K, r), rtol=1e-12)
    z[:9] = 0.0
    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        equations.newton_matrix(z).solve(r)


def test_momentum_projection(rng):
    """(B4)–(B5): C M⁻¹ p = 0 for C = [H; (Bq)ᵀ](q), and p − p* = −Cᵀν (the NumPy solve of the same ν)."""
    from mbslib.integrators.nonholonomic_em import project_momentum

    body = nb.make_body(a=0.3)
    q, p_star = rng.standard_normal(9), rng.standard_normal(9)
    C = np.vstack([dt.constraint_jacobian(q), dt.twist_matrix(body.a) @ q])
    Minv_Ct = np.linalg.solve(body.M, C.T)
    expected = p_star - C.T @ np.linalg.solve(C @ Minv_Ct, Minv_Ct.T @ p_star)
    p = project_momentum(body, q, p_star)
    np.testing.assert_allclose(p, expected, rtol=1e-12)
    np.testing.assert_allclose(C @ np.linalg.solve(body.M, p), 0.0, atol=1e-13)
    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        project_momentum(body, np.zeros(9), p_star)


def test_step_equations_name_bad_shapes():
    body, x = nb.make_body(), dt.initial_state(CASE1["W0"])
    with pytest.raises(ValueError, match="z must have shape"):
        residual_em(body, x, np.zeros(15), 0.01)
    with pytest.raises(ValueError, match="z must have shape"):
        jacobian_dla(body, x, np.zeros(17), 0.01)
    with pytest.raises(ValueError, match="x_n must have shape"):
        step_em(body, x[:17], 0.01)
    with pytest.raises(ValueError, match="x_n must have shape"):
        step_dla(body, np.zeros(19), 0.01)


def test_dla_jacobian_fd(rng):
    body = nb.make_body(**CASE3, a=0.7)
    x, z = rng.standard_normal(18), rng.standard_normal(16)
    fd = fd_jacobian(lambda y: residual_dla(body, x, y, 0.02, 0.3), z)
    np.testing.assert_allclose(jacobian_dla(body, x, z, 0.02, 0.3), fd, atol=1e-9)


# --- schemes: invariants and geometry ------------------------------------------------------


def test_basic_em_conserves_energy_and_spatial_momentum():
    """Theorem 8 (G6): the standard body, 1000 steps of Case 1 data, K and π to round-off."""
    body = nb.make_body()
    x0 = dt.initial_state(CASE1["W0"])
    tr = simulate(em_stepper(body, nonholonomic=False), x0, 0.005, 5.0)
    _, pi, K = invariants(body, tr.x[:, :9], tr.x[:, 9:])
    assert np.max(np.abs(pi - pi[0])) <= 1e-9 * np.linalg.norm(pi[0])
    assert np.max(np.abs(K - K[0])) <= 1e-9 * K[0]
    # the standard body does twist: w·d3 is not zero
    assert np.max(np.abs([dt.twist_rate(x[:9], x[9:]) for x in tr.x])) > 1.0


def test_em_case1_invariants_constraints_and_transport():
    """Case 1 (200 steps): Π, K to round-off, G1, G2, G3, Newton ≤ 4 iterations on average."""
    body = nb.make_body()
    tr = simulate(em_stepper(body), dt.initial_state(CASE1["W0"]), 0.005, 1.0)
    q = tr.x[:, :9]
    Pi, _, K = invariants(body, q, tr.x[:, 9:])
    np.testing.assert_allclose(Pi, np.tile([144 / 7, -510 / 7, 0.0], (len(q), 1)), atol=1e-9)
    assert np.max(np.abs(K - 5022 / 7)) <= 1e-8
    assert max(np.max(np.abs(dt.constraint(x))) for x in q) <= 1e-10
    d1, d2, d3 = dt.directors(q)
    g = np.sum(d1[1:] * d2[:-1], axis=1) - np.sum(d1[:-1] * d2[1:], axis=1)
    assert np.max(np.abs(g)) <= 1e-10
    for n in range(len(q) - 1):
        for d in (d1, d2):
            assert np.linalg.norm(d[n + 1] - parallel_transport(d3[n], d3[n + 1], d[n])) <= 1e-8
    assert tr.n_iter.mean() <= 4


@pytest.mark.parametrize("scheme", ["em", "dla"])
def test_case1_uniform_rotation_with_discrete_angle(scheme):
    """Case 1: both schemes rotate uniformly about the exact axis; per-step angle 2 arctan(ωh/2) (EM),
    arcsin(ωh) (DLA)."""
    body = nb.make_body()
    h, W0 = 0.005, np.array(CASE1["W0"])
    w = np.linalg.norm(W0)
    x0 = dt.initial_state(W0)
    if scheme == "em":
        tr, phi = simulate(em_stepper(body), x0, h, 0.5), 2 * np.arctan(w * h / 2)
    else:
        tr, phi = simulate(dla_stepper(body), state_dla(body, x0), h, 0.5), np.arcsin(w * h)
    n = np.arange(len(tr.t))
    R = np.array([exp_so3(k * phi * W0 / w) for k in n])
    np.testing.assert_allclose(tr.x[:, :9], dt.q_from_rotation(R), atol=1e-10)


def test_parameter_a_does_not_change_motion():
    """G4: loaded Case 3, a ∈ {0, ½, 1} give the same trajectory."""
    x0 = dt.initial_state([1.5, 4.5, 0.0])
    runs = [simulate(em_stepper(nb.make_body(**CASE3, a=a)), x0, 0.005, 0.3).x for a in (0.0, 0.5, 1.0)]
    assert np.max(np.abs(runs[0] - runs[1])) <= 1e-10
    assert np.max(np.abs(runs[2] - runs[1])) <= 1e-10


def test_newton_tolerance_option():
    """rtol tightens the EM stopping test: smaller final residuals, and a = 0 vs ½ differences shrink to round-off."""
    x0 = dt.initial_state([1.5, 4.5, 0.0])
    body = nb.make_body(**CASE3)
    _, loose = step_em(body, x0, 0.005, 0.0)
    _, tight = step_em(body, x0, 0.005, 0.0, rtol=1e-15)
    assert tight.n_iter >= loose.n_iter and tight.residual_history[-1] <= 1e-15 * tight.residual_history[0] + 1e-13
    with pytest.raises(ValueError, match="rtol"):
        step_em(body, x0, 0.005, rtol=0.0)
    runs = [simulate(em_stepper(nb.make_body(**CASE3, a=a), rtol=1e-14), x0, 0.005, 0.3).x for a in (0.0, 0.5)]
    assert np.max(np.abs(runs[0] - runs[1])) <= 1e-11


def test_dla_invariants_case1():
    body = nb.make_body()
    tr = simulate(dla_stepper(body), state_dla(body, dt.initial_state(CASE1["W0"])), 0.005, 0.5)
    q, p = tr.x[:, :9], tr.x[:, 9:]
    np.testing.assert_allclose(dt.material_angular_momentum(q, p)[:, :2], np.tile([144 / 7, -510 / 7], (len(q), 1)),
                               atol=1e-9)
    H = 0.5 * np.sum(p * np.linalg.solve(body.M, p.T).T, axis=1)
    assert np.max(np.abs(H - 5022 / 7)) <= 1e-8
    E = body.kinetic_energy(np.diff(q, axis=0) / 0.005)
    assert E.mean() == pytest.approx(719.0500907975, abs=1e-7)


def test_dla_has_no_solution_beyond_unit_rotation():
    body = nb.make_body()
    w = np.linalg.norm(CASE1["W0"])
    x0 = state_dla(body, dt.initial_state(CASE1["W0"]))
    step_dla(body, x0, 0.9 / w)  # |ω|h = 0.9: solvable
    with pytest.raises(NewtonError):
        step_dla(body, x0, 1.2 / w)


# --- accuracy -------------------------------------------------------------------------------


@pytest.mark.parametrize("scheme", ["em", "dla"])
def test_second_order_against_exact_solution(scheme):
    """Case 3 with load scale 0.01 on [0, 1.2] s: director error at second order."""
    body = nb.make_body(**CASE3, load_scale=0.01)
    x0 = dt.initial_state([1.5, 4.5, 0.0])
    q_exact = dt.q_from_rotation(nb.exact_rotation(body, [1.5, 4.5, 0.0], [1.2])[0])
    errors = []
    hs = (0.02, 0.01, 0.005)
    for h in hs:
        if scheme == "em":
            q = simulate(em_stepper(body), x0, h, 1.2).x[-1, :9]
        else:
            q = simulate(dla_stepper(body), state_dla(body, x0), h, 1.2).x[-1, :9]
        errors.append(np.linalg.norm(q - q_exact))
    order = np.polyfit(np.log(hs), np.log(errors), 1)[0]
    assert order == pytest.approx(2.0, abs=0.1)


def test_nodal_twist_momentum_is_second_order():
    """Π³ at the nodes is O(h²) while the load acts (the constraint holds at midpoints only)."""
    body = nb.make_body(**CASE3, load_scale=0.01)
    x0 = dt.initial_state([1.5, 4.5, 0.0])
    peaks = []
    for h in (0.01, 0.005):
        tr = simulate(em_stepper(body), x0, h, 0.6)
        Pi, _, _ = invariants(body, tr.x[:, :9], tr.x[:, 9:])
        peaks.append(np.max(np.abs(Pi[:, 2])))
    assert peaks[0] > 1e-8
    assert peaks[0] / peaks[1] == pytest.approx(4.0, rel=0.1)


def test_invariants_and_failure_tolerant_driver():
    """EM: E = H = K; DLA: midpoint energy; the driver returns the run up to a Newton failure."""
    from mbslib.integrators.nonholonomic_em import invariants

    body = nb.make_body()
    x0 = dt.initial_state(CASE1["W0"])
    traj = simulate(em_stepper(body), x0, 0.005, 0.05, throw=False)
    assert traj.failure is None
    inv = invariants(body, traj.x)
    np.testing.assert_allclose(inv["H"], inv["K"], rtol=1e-14)
    np.testing.assert_allclose(inv["Pi"][:, :2], np.tile([144 / 7, -510 / 7], (11, 1)), atol=1e-10)
    w = np.linalg.norm(CASE1["W0"])
    h = 1.2 / w  # |ω|h > 1: the DLA has no solution at the first step
    with pytest.raises(NewtonError):
        simulate(dla_stepper(body), state_dla(body, x0), h, 3 * h)
    assert simulate(dla_stepper(body), state_dla(body, x0), h, 3 * h, throw=False).n_steps == 0
    loaded = nb.make_body(alpha=2472.5, beta=1075.0)
    xs = state_dla(loaded, dt.initial_state([0.0, 0.0, 0.0]))
    traj = simulate(dla_stepper(loaded), xs, 0.005, 0.6, throw=False)
    err = traj.failure
    assert err is not None and traj.t[-1] == pytest.approx(err.t)
    assert 0.46 <= err.t <= 0.49  # exact |ω|h reaches 1 at t ≈ 0.474 s
    inv = invariants(loaded, traj.x, scheme="dla", h=0.005)
    assert inv["E"].shape == (len(traj.t) - 1,)
    with pytest.raises(ValueError, match="scheme"):
        invariants(body, traj.x, scheme="rk4")


def test_printed_constraint_set_lets_directors_grow():
    """With only the three orthogonality constraints of eq. (63) the director lengths drift."""
    body = nb.make_body()
    x0 = dt.initial_state(CASE1["W0"])
    q = simulate(em_stepper(body, unit_length=False), x0, 0.005, 0.5).x[:, :9]
    assert np.linalg.norm(q[-1, 6:9]) > 2.0
    assert np.max(np.abs([dt.constraint(x)[3:] for x in q])) <= 1e-10  # orthogonality still holds


# --- chapter 004 identities (moved from the scorecard: they hold by construction) -----------


@pytest.mark.parametrize(
    "scheme, kw, W0, t_end",
    [
        ("em", dict(), CASE1["W0"], 0.5),  # Case 1
        ("em", dict(alpha=2472.5, beta=1075.0), (0.0, 0.0, 0.0), 1.2),  # Case 2 [F], through the load
        ("em", dict(**CASE3), (1.5, 4.5, 0.0), 1.2),  # Case 3 [F]
        ("em", dict(**CASE3, load_scale=0.01, a=0.0), (1.5, 4.5, 0.0), 1.2),  # Case 3 [R], a = 0
        ("em-endpoint", dict(**CASE3, a=1.0), (1.5, 4.5, 0.0), 1.2),  # endpoint load rule, a = 1
        ("dla", dict(), CASE1["W0"], 0.5),
        ("dla", dict(alpha=2472.5, beta=1075.0), (0.0, 0.0, 0.0), 1.0),  # [F]: up to the Newton failure
        ("dla", dict(**CASE3, load_scale=0.01), (1.5, 4.5, 0.0), 1.2),
    ],
)
def test_converged_steps_keep_the_discrete_non_twisting_frame(scheme, kw, W0, t_end):
    """The discrete frame of chapter 004 for every scheme and case: converged Newton residuals R_h, R_g give
    orthonormal directors (≤ 1e-10), the discrete twist constraint d1'·d2 = d1·d2' (≤ 1e-10) and
    hence d1, d2 parallel transported along the arcs of d3 (≤ 1e-8)."""
    body = nb.make_body(**kw)
    x0 = dt.initial_state(W0)
    if scheme == "dla":
        q = simulate(dla_stepper(body), state_dla(body, x0), 0.005, t_end, throw=False).x[:, :9]
    else:
        rule = "endpoint" if scheme == "em-endpoint" else "midpoint"
        q = simulate(em_stepper(body, load_rule=rule), x0, 0.005, t_end).x[:, :9]
    assert len(q) > 50
    ortho, twist, transport = frame_defects(q)
    assert ortho <= 1e-10 and twist <= 1e-10 and transport <= 1e-8


def test_case3_initial_data():
    """Case 3 (eq. 117): Π(0) = J⊥(1.5, 4.5) = (27/7, 249/14), K(0) = 2403/56, Π³(0) = 0."""
    from mbslib.integrators.nonholonomic_em import invariants as inv_of

    body = nb.make_body(**CASE3)
    inv = inv_of(body, dt.initial_state([1.5, 4.5, 0.0])[None, :])
    np.testing.assert_allclose(inv["Pi"][0], [27 / 7, 249 / 14, 0.0], atol=1e-13)
    assert inv["K"][0] == pytest.approx(2403 / 56, rel=1e-14)


def test_twist_angle_of_spin_transported_and_standard_frames():
    """twist_angle: n·α for a pure spin α per step about d3, zero for the non-twisting EM,
    ∫ w·d3 dt for the standard body (basic EM)."""
    alpha = 0.01
    q_spin = dt.q_from_rotation(np.array([exp_so3([0.0, 0.0, k * alpha]) for k in range(50)]))
    np.testing.assert_allclose(twist_angle(q_spin), alpha * np.arange(50), atol=1e-13)
    body = nb.make_body(**CASE3, load_scale=0.01)
    q = simulate(em_stepper(body), dt.initial_state([1.5, 4.5, 0.0]), 0.005, 1.2).x[:, :9]
    assert np.max(np.abs(twist_angle(q))) <= 1e-12
    x = simulate(em_stepper(nb.make_body(), nonholonomic=False), dt.initial_state(CASE1["W0"]), 0.005, 1.0).x
    spin = [dt.angular_velocity(s[:9], s[9:]) @ s[6:9] for s in x]
    assert twist_angle(x[:, :9])[-1] == pytest.approx(np.trapezoid(spin, dx=0.005), rel=1e-3)
    with pytest.raises(ValueError, match="q must"):
        twist_angle(q[:, :6])


def test_holonomy_equals_enclosed_area():
    """Gauss–Bonnet for the discrete frame: the holonomy of 'path of d3, then the arc back' equals the
    signed enclosed area mod 2π; the area of a fine polygon on a circle of colatitude θ is the cap 2π(1 − cos θ)."""
    body = nb.make_body(**CASE3, load_scale=0.01)
    q = simulate(em_stepper(body), dt.initial_state([1.5, 4.5, 0.0]), 0.005, 2.0).x[:, :9]
    difference = np.angle(np.exp(1j * (holonomy_angle(q) - enclosed_area(q[:, 6:9]))))
    assert np.max(np.abs(difference)) <= 1e-10
    assert np.ptp(enclosed_area(q[:, 6:9])) > 1.0  # a loop that encloses area: the check is not vacuous
    theta, s = 0.7, np.linspace(0.0, 2 * np.pi, 4001)
    ring = np.column_stack([np.sin(theta) * np.cos(s), np.sin(theta) * np.sin(s), np.full_like(s, np.cos(theta))])
    assert enclosed_area(ring)[-1] == pytest.approx(2 * np.pi * (1 - np.cos(theta)), rel=1e-5)
    assert enclosed_area(ring[::-1])[-1] == pytest.approx(-2 * np.pi * (1 - np.cos(theta)), rel=1e-5)
    # the transported frame after one turn around the ring is rotated by the cap area
    frames = [np.concatenate([[np.cos(theta), 0.0, -np.sin(theta)], [0.0, 1.0, 0.0], ring[0]])]
    for n in range(1, len(ring)):
        d1, d2 = (dt.directors(frames[-1])[i] for i in (0, 1))
        w = np.cross(ring[n - 1], ring[n])
        c = ring[n - 1] @ ring[n]
        rot = np.eye(3) + hat(w) + hat(w) @ hat(w) / (1 + c)
        frames.append(np.concatenate([rot @ d1, rot @ d2, ring[n]]))
    assert holonomy_angle(np.array(frames))[-1] == pytest.approx(2 * np.pi * (1 - np.cos(theta)), rel=1e-5)
    with pytest.raises(ValueError, match="d3 must"):
        enclosed_area(q)


def test_theorem9_momenta_are_not_exactly_conserved_after_a_load():
    """Theorem 9 (95b–c) as printed: after the Case 2 load the EM's Π¹, Π² vary well above round-off,
    by the same amount at Newton rtol 1e-10 and 1e-14 (a property of the scheme), and the test vectors
    (98), (110) of the paper's proof are not annihilated by the discrete holonomic constraint forces."""
    body = nb.make_body(alpha=2472.5, beta=1075.0, a=1.0)
    spreads = []
    for rtol in (1e-10, 1e-14):
        x = simulate(em_stepper(body, rtol=rtol), dt.initial_state([0.0, 0.0, 0.0]), 0.005, 1.3).x
        Pi = dt.material_angular_momentum(x[:, :9], body.director_momenta(x[:, 9:]))[200:, :2]
        spreads.append(np.max(np.ptp(Pi, axis=0)) / np.max(np.linalg.norm(Pi, axis=1)))
    assert spreads[0] > 1e-10
    assert spreads[1] == pytest.approx(spreads[0], rel=1e-2)
    q_n, q_n1 = x[250, :9], x[251, :9]
    d1, d2, d3 = (q_n[i:i + 3] + q_n1[i:i + 3] for i in (0, 3, 6))
    zero = np.zeros(3)
    H_mid = dt.constraint_jacobian(0.5 * (q_n + q_n1))
    for test_vector in (np.concatenate([zero, d3, -d2]),  # eq. (98), rotation about d1
                        np.concatenate([-d3, zero, d1])):  # eq. (110) read as the rotation about d2
        assert np.max(np.abs((H_mid @ test_vector)[3:5])) > 1e-3  # rows d2·d3 and d1·d3


def test_dla_one_step_form_is_the_two_step_lagrange_dalembert_scheme():
    """Eliminating p from (B1)–(B5): M(q_{k+1} − 2q_k + q_{k−1})/h² − Q(q_k, t_k) lies in the span of
    the rows of H(q_k) and of B q_k (the node constraint forces of the two-step DLA scheme)."""
    body = nb.make_body(**CASE3, load_scale=0.01)
    h = 0.005
    tr = simulate(dla_stepper(body), state_dla(body, dt.initial_state([1.5, 4.5, 0.0])), h, 0.8)
    q = tr.x[:, :9]
    B = dt.twist_matrix(body.a)
    worst = 0.0
    for k in range(1, len(q) - 1):
        r = body.M @ (q[k + 1] - 2 * q[k] + q[k - 1]) / h**2 - body.director_forces(q[k], tr.t[k])
        C = np.vstack([dt.constraint_jacobian(q[k]), B @ q[k]]).T
        coef = np.linalg.lstsq(C, r, rcond=None)[0]
        worst = max(worst, np.linalg.norm(r - C @ coef) / np.linalg.norm(r))
    assert worst <= 1e-10
