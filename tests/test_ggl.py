"""Tests of director bodies, the GGL examples and the GGL variational integrator (chapter 001)."""

from functools import partial

import numpy as np
import pytest

from mbslib.integrators import ggl
from mbslib.newton import NewtonError, fd_jacobian, newton_solve
from mbslib.simulate import simulate
from mbslib.symplectic import constrained_tangent_basis, symplecticity_defect
from mbslib.systems import directors as dr
from mbslib.systems import ggl_examples as ex

RNG = np.random.default_rng(20230601)
TOP = ex.heavy_top()
TOP_Q0, TOP_QD0 = ex.heavy_top_initial_state()
BAR = ex.double_four_bar()


def top_run(h, t_end, system=TOP, variant="paper"):
    x0 = ggl.initial_vector(system, TOP_Q0, TOP_QD0)
    return simulate(partial(ggl.step_ggl, system, variant=variant), x0, h, t_end)


# --- director bodies and assembly ------------------------------------------------------------


def test_euler_tensor_and_mass_matrix():
    E = dr.euler_tensor_values([2.0, 3.0, 4.0])
    assert np.allclose(E, [2.5, 1.5, 0.5])  # E_1 = (J2 + J3 − J1)/2 ...
    body = dr.DirectorBody(1.5, tuple(E))
    assert np.allclose(body.mass_diag(), np.repeat([1.5, 2.5, 1.5, 0.5], 3))
    # Σ E_i d_i ⊗ d_i reproduces J = tr(E) I − E for principal directors
    assert np.allclose(E.sum() - E, [2.0, 3.0, 4.0])


@pytest.mark.parametrize(
    "make, name",
    [
        (lambda: dr.euler_tensor_values([1.0, 1.0, 3.0]), "triangle"),
        (lambda: dr.euler_tensor_values([-1.0, 1.0, 1.0]), "J1"),
        (lambda: dr.DirectorBody(-1.0, (1.0, 1.0, 1.0)), "mass"),
        (lambda: dr.DirectorBody(1.0, (1.0, 0.0, 1.0)), "E2"),
        (lambda: dr.DirectorBody(1.0, (1.0, 1.0), dim=4), "dim"),
        (lambda: ex.heavy_top(ex.HeavyTopParams(a=-0.1)), "a"),
        (lambda: ex.heavy_top(scaling="other"), "scaling"),
        (lambda: ex.double_four_bar(ex.FourBarParams(eta=-1.0)), "eta"),
        (lambda: ex.four_bar_initial_state(variant="X"), "variant"),
        (lambda: ggl.step_ggl(TOP, ggl.initial_vector(TOP, TOP_Q0, TOP_QD0), -0.1), "h"),
        (lambda: ggl.residual_ggl(TOP, np.zeros(54), np.zeros(54), 0.1, variant="x"), "variant"),
    ],
)
def test_bad_parameters_raise_naming_them(make, name):
    with pytest.raises(ValueError, match=name):
        make()


def test_point_matrix_places_material_points():
    q = RNG.normal(size=12)
    X = np.array([0.3, -0.2, 0.7])
    x = dr.point_matrix(3, X) @ q
    assert np.allclose(x, q[:3] + X[0] * q[3:6] + X[1] * q[6:9] + X[2] * q[9:12])


@pytest.mark.parametrize("dim", [2, 3])
def test_orthonormality_constraints_layouts(dim):
    """One implementation for the body layout [φ; d_1; ...] and for a bare director set."""
    H, c, labels = dr.internal_constraints(dim)
    n = dim * (dim + 1)
    H = H.todense()
    assert H.shape == (len(c), n, n) and np.all(H[:, :dim, :] == 0)  # φ block untouched
    bare = dr.QuadraticConstraints.orthonormality(dim)  # q = (d_1, ..., d_dim)
    np.testing.assert_array_equal(H[:, dim:, dim:], bare.H.todense())
    assert tuple(labels) == bare.labels
    q = RNG.normal(size=n)
    np.testing.assert_allclose(dr.orthonormality_values(q, dim, offset=dim), bare.g(q[dim:]), atol=1e-15)
    body = dr.assemble([dr.DirectorBody(1.0, (1.0,) * dim, dim=dim)], np.zeros(dim))
    np.testing.assert_allclose(body.g(q), dr.orthonormality_values(q, dim, offset=dim), atol=1e-15)
    # a rotation (orthonormal directors) satisfies them
    R = np.linalg.qr(RNG.normal(size=(dim, dim)))[0]
    assert np.abs(bare.g(R.T.ravel())).max() <= 1e-15
    for kwargs, name in [({"dim": 4}, "dim"), ({"offset": -1}, "offset"), ({"n": 2}, "n"),
                         ({"pairs": [(1, dim + 1)]}, "pairs")]:
        with pytest.raises(ValueError, match=name):
            dr.orthonormality_constraints(**{"dim": dim, **kwargs})


@pytest.mark.parametrize("system", [TOP, BAR, TOP.with_constraint_scaling(np.arange(1.0, 10.0))],
                         ids=["top", "bar", "scaled"])
def test_constraint_jacobian_and_hessians_match_finite_differences(system):
    q = RNG.normal(size=system.d)  # off the constraint manifold
    assert np.abs(system.G(q) - fd_jacobian(system.g, q)).max() <= 1e-9
    for k in range(system.m):
        Hk = fd_jacobian(lambda x, k=k: system.G(x)[k], q)
        assert np.abs(Hk - system.constraints.H.todense()[k]).max() <= 1e-9
    assert np.abs(system.dV(q) - fd_jacobian(lambda x: np.atleast_1d(system.V(x)), q)[0]).max() <= 1e-9
    # vectorised evaluation over a trajectory agrees with the single-state one
    Q = RNG.normal(size=(4, system.d))
    assert np.allclose(system.g(Q)[2], system.g(Q[2]))
    assert np.allclose(system.G(Q)[3], system.G(Q[3]))


@pytest.mark.parametrize("scaling", ["paper", "metis"])
def test_top_description_gives_the_papers_director_top(scaling):
    """The director system of the description equals the top assembled from eqs. (58)-(64) by
    hand, to the last bit, and its initial coordinates are eqs. (65)-(68): the positions to the last
    bit, the velocities to round-off (the description forms R (Ω × V e_i) by a matrix product,
    whose rounding depends on the CPU's BLAS kernel, the paper ω × (R e_i))."""
    P = ex.HeavyTopParams()
    body = dr.DirectorBody(P.mass, tuple(dr.euler_tensor_values(P.J)))
    paper = dr.assemble([body], (0.0, 0.0, -P.g), [dr.GroundPivot(0, (0.0, 0.0, -P.l), (0.0, 0.0, 0.0))])
    if scaling == "metis":  # d_i·d_j/2 and φ/l − d_3
        paper = paper.with_constraint_scaling([1, 1, 1, 0.5, 0.5, 0.5] + [1 / P.l] * 3)
    ours = ex.heavy_top(P, scaling)
    np.testing.assert_array_equal(ours.M, paper.M)
    np.testing.assert_array_equal(ours.f, paper.f)
    assert ours.K.nnz == paper.K.nnz == ours.C.nnz == paper.C.nnz == 0
    np.testing.assert_array_equal(ours.constraints.H.todense(), paper.constraints.H.todense())
    np.testing.assert_array_equal(ours.constraints.A, paper.constraints.A)
    np.testing.assert_array_equal(ours.constraints.c, paper.constraints.c)
    ca, sa = np.cos(P.alpha0), np.sin(P.alpha0)
    d1, d2, d3 = np.array([[1.0, 0.0, 0.0], [0.0, ca, -sa], [0.0, sa, ca]]).T  # R_0 e_i, eq. (67)
    omega = P.omega_p * np.array([0.0, 0.0, 1.0]) + P.omega_s * d3  # eqs. (65)-(66)
    blocks = (P.l * d3, d1, d2, d3)  # φ = l d_3, eq. (68)
    q0, qdot0 = ex.heavy_top_initial_state(P)
    np.testing.assert_array_equal(q0, np.concatenate(blocks))
    qdot_paper = np.concatenate([np.cross(omega, x) for x in blocks])
    np.testing.assert_allclose(qdot0, qdot_paper, rtol=0, atol=4 * np.finfo(float).eps * np.abs(qdot_paper).max())


def test_top_initial_data_match_spec_values():
    P = ex.HeavyTopParams()
    assert P.mass == pytest.approx(0.225 * np.pi, rel=1e-14)
    assert np.allclose(P.J, 5.301437602933e-4, rtol=1e-12)
    assert P.omega_s == pytest.approx(135.6, rel=1e-13)
    assert np.abs(TOP.g(TOP_Q0)).max() <= 1e-15
    assert np.abs(TOP.G(TOP_Q0) @ TOP_QD0).max() <= 1e-15
    p0 = TOP.M * TOP_QD0
    assert TOP.kinetic_from_p(p0) + TOP.V(TOP_Q0) == pytest.approx(5.669055191, abs=1e-8)
    assert np.allclose(dr.angular_momentum(TOP_Q0, p0, 3), [0.0, -0.0450394723, 0.0710657711], atol=1e-10)
    assert np.allclose(TOP_Q0[:3], [0.0, -0.0649519053, 0.0375], atol=1e-10)
    assert np.arccos(TOP_Q0[11]) == pytest.approx(np.pi / 3, abs=1e-12)  # angle(d3(0), e3) = α0
    assert TOP_Q0[2] == pytest.approx(P.l * np.cos(np.pi / 3), abs=1e-15)  # φ3(0) = l cos α0


@pytest.mark.parametrize("variant, rate, T0", [("P", -11 / 12, 1.375), ("C", -1.0, 1.5)])
def test_four_bar_initial_data(variant, rate, T0):
    q0, qd0 = ex.four_bar_initial_state(variant=variant)
    assert np.abs(BAR.g(q0)).max() <= 1e-15
    assert np.linalg.matrix_rank(BAR.G(q0)) == 29
    assert BAR.kinetic_from_v(qd0) == pytest.approx(T0, rel=1e-14)
    assert ex.four_bar_crank_rate_after_projection(variant=variant) == pytest.approx(rate, rel=1e-14)
    consistent = np.abs(BAR.G(q0) @ qd0).max()
    assert (consistent <= 1e-15) if variant == "C" else (consistent == pytest.approx(0.5))
    assert dr.angular_momentum(q0, BAR.M * qd0, 2) == pytest.approx(-2.75 if variant == "P" else -3.0)


def test_four_bar_configuration_stays_on_constraints_and_reduced_periods():
    for theta in np.linspace(-np.pi, np.pi, 7):
        q, dq = ex.four_bar_configuration(theta)
        assert np.abs(BAR.g(q)).max() <= 1e-15
        assert np.abs(BAR.G(q) @ dq).max() <= 1e-15
    assert ex.four_bar_period(-1.0) == pytest.approx(1.94251, abs=1e-5)
    assert ex.four_bar_period(-11 / 12) == pytest.approx(1.99488, abs=1e-5)


def test_damping_matrices_are_psd_and_agree_on_translating_couplers():
    P = ex.FourBarParams(eta=0.5)
    Cs, Cm = ex.four_bar_damping_matrix(P, "symmetric"), ex.four_bar_damping_matrix(P, "metis")
    assert np.allclose(Cs, Cs.T) and np.linalg.eigvalsh(Cs).min() >= -1e-14
    _, dq = ex.four_bar_configuration(0.3)
    # the forces differ in the director rows, but their work on the 1-DOF motion agrees
    assert not np.allclose(Cs @ dq, Cm @ dq)
    assert dq @ Cs @ dq == pytest.approx(dq @ Cm @ dq, rel=1e-14)
    # dissipated power = 2 x Rayleigh function = 2 η (l θ̇)² for θ̇ = 1
    assert ex.double_four_bar(P).dissipated_power(dq) == pytest.approx(2 * 0.5 * 1.0)


def _hand_assembled_four_bar(params, damping="symmetric"):
    """The linkage as the paper writes it (eqs. 70-74, 77-80), planar director bodies put together by hand."""
    l, J = params.l, params.inertia
    bodies = [dr.DirectorBody(params.mass, (J / 2, J / 2), dim=2) for _ in range(5)]
    up, down = (l / 2, 0.0), (-l / 2, 0.0)
    joints = [dr.GroundPivot(0, down, (0.0, 0.0)), dr.GroundPivot(1, up, (l, 0.0)), dr.GroundPivot(2, up, (2 * l, 0.0)),
              dr.Joint(0, up, 3, down), dr.Joint(3, up, 1, down), dr.Joint(3, up, 4, down), dr.Joint(4, up, 2, down)]
    C = ex.four_bar_damping_matrix(params, damping) if params.eta > 0 else None
    return dr.assemble(bodies, (0.0, -params.g), joints, C=C)


def _hand_initial_state(params, variant):
    """θ = π/2, θ̇ = −v0/l on the parallelogram branch; "P" keeps only the centre-of-mass velocities."""
    q0, dq = ex.four_bar_configuration(np.pi / 2, params)
    qdot0 = -params.v0 / params.l * dq
    if variant == "P":
        for body in range(5):
            qdot0[6 * body + 2:6 * body + 6] = 0.0
    return q0, qdot0


@pytest.mark.parametrize("params, damping", [
    (ex.FourBarParams(), "symmetric"),
    (ex.FourBarParams(eta=0.5), "symmetric"),
    (ex.FourBarParams(eta=0.5), "metis"),
    (ex.FourBarParams(mass=1.7, l=0.6, g=3.0, v0=-2.5, eta=0.2), "symmetric"),
], ids=["paper", "damped", "damped-metis", "other-values"])
def test_four_bar_from_its_description_is_the_hand_assembled_linkage(params, damping):
    system, hand = ex.double_four_bar(params, damping), _hand_assembled_four_bar(params, damping)
    np.testing.assert_array_equal(system.M, hand.M)
    np.testing.assert_array_equal(system.f, hand.f)
    for name in ("K", "C"):
        np.testing.assert_array_equal(getattr(system, name).toarray(), getattr(hand, name).toarray())
    assert (system.dim, system.offsets) == (hand.dim, hand.offsets)
    np.testing.assert_array_equal(system.constraints.H.todense(), hand.constraints.H.todense())
    np.testing.assert_array_equal(system.constraints.A, hand.constraints.A)
    np.testing.assert_array_equal(system.constraints.c, hand.constraints.c)
    assert system.constraints.labels[:15] == hand.constraints.labels[:15]  # "B1 d1.d2": the chapter reads them
    for q in RNG.normal(size=(3, 30)):
        np.testing.assert_array_equal(system.g(q), hand.g(q))
        np.testing.assert_array_equal(system.G(q), hand.G(q))
    for variant in "PC":
        for mine, theirs in zip(ex.four_bar_initial_state(params, variant), _hand_initial_state(params, variant),
                                strict=True):
            np.testing.assert_array_equal(mine, theirs)


# --- the GGL-VI: residual, tangent, one step -----------------------------------------------


@pytest.mark.parametrize("variant", ggl.VARIANTS)
@pytest.mark.parametrize(
    "system",
    [TOP, ex.double_four_bar(ex.FourBarParams(eta=0.5)),
     ex.double_four_bar(ex.FourBarParams(eta=0.5), damping="metis")],
    ids=["top", "damped-bar", "damped-bar-metis"],
)
def test_newton_matrix_and_start_jacobian_match_finite_differences(system, variant):
    n = 3 * system.d + 2 * system.m
    x_n, x_n1 = RNG.normal(size=n), RNG.normal(size=n)  # far from any solution
    h = 0.05
    J = ggl.jacobian_ggl(system, x_n, x_n1, h, variant)
    J_fd = fd_jacobian(lambda x: ggl.residual_ggl(system, x_n, x, h, variant), x_n1)
    assert np.abs(J - J_fd).max() <= 1e-8 * max(1.0, np.abs(J).max())

    def res_start(z):
        x = x_n.copy()
        x[: 2 * system.d] = z
        return ggl.residual_ggl(system, x, x_n1, h, variant)

    J_z = ggl.jacobian_ggl_start(system, x_n, x_n1, h, variant)
    J_z_fd = fd_jacobian(res_start, x_n[: 2 * system.d])
    assert np.abs(J_z - J_z_fd).max() <= 1e-8 * max(1.0, np.abs(J_z).max())


def test_one_step_satisfies_scheme_and_constraints():
    x0 = ggl.initial_vector(TOP, TOP_Q0, TOP_QD0)
    h = 0.002
    x1, report = ggl.step_ggl(TOP, x0, h)
    assert report.n_iter <= 6
    assert np.abs(ggl.residual_ggl(TOP, x0, x1, h)).max() <= 1e-9
    u = ggl.split(TOP, x1)
    assert np.abs(TOP.g(u.q)).max() <= 1e-12  # (41d)
    qbar = TOP_Q0 + h * u.v
    assert np.abs(TOP.G(qbar) @ (u.p / TOP.M)).max() <= 1e-12  # (41e)
    # the nonlinear velocity constraints are violated at the node, the linear ones are not
    gv = TOP.velocity_constraints(u.q, u.p)
    assert np.abs(gv[:6]).max() > 1e-4 and np.abs(gv[6:]).max() <= 1e-12


def test_step_applies_the_extra_update_of_the_authors_code():
    """One update past max|R| <= 1e-9: the accepted residual is at round-off, as in the authors' loop."""
    x_n = ggl.initial_vector(BAR, *ex.four_bar_initial_state(variant="P"))
    for _ in range(5):
        x_n, report = ggl.step_ggl(BAR, x_n, 1e-3)
        assert report.residual_history[-2] <= 1e-9  # the stopping test was met before the last update
        assert report.residual_history[-1] <= 1e-13
    plain, _ = newton_solve(lambda x: ggl.residual_ggl(BAR, x_n, x, 1e-3), ggl.initial_guess(BAR, x_n, 1e-3),
                            lambda x: ggl.jacobian_ggl(BAR, x_n, x, 1e-3))
    x_n1, _ = ggl.step_ggl(BAR, x_n, 1e-3)
    np.testing.assert_array_equal(
        x_n1, plain - np.linalg.solve(ggl.jacobian_ggl(BAR, x_n, plain, 1e-3), ggl.residual_ggl(BAR, x_n, plain, 1e-3)))


def test_velocity_constraints_at_nodes_follow_from_41a_and_41e():
    """g^v_k(q^n, p^n) = h (M⁻¹ G(q̄^{n−1})ᵀ γ^n)·D²g_k M⁻¹p^n for n ≥ 1 (quadratic constraints)."""
    h = 0.002
    n = ggl.split_trajectory(TOP, top_run(h, 0.1))
    qbar = n.q[:-1] + h * n.v[:-1]
    shift = h * TOP.Minv * np.einsum("nkd,nk->nd", TOP.G(qbar), n.gam[1:])
    closed = np.einsum("kde,ne,nd->nk", TOP.constraints.H.todense(), shift, n.p[1:] * TOP.Minv)
    gv = TOP.velocity_constraints(n.q, n.p)[1:]
    assert np.abs(gv - closed).max() <= 1e-12
    assert np.abs(gv[:, :6]).max() > 1e-2 and np.abs(gv[:, 6:]).max() <= 1e-15


def _free_body_director_error(gravity, hs, t_end=1.0):
    """Max error of d_i(t_end) (or of φ in gravity) of a free body, J = diag(2, 3, 4.5), ω0 = (1, 2, 3)."""
    from scipy.integrate import solve_ivp

    J, w0 = np.array([2.0, 3.0, 4.5]), np.array([1.0, 2.0, 3.0])
    system = dr.assemble([dr.DirectorBody(1.0, tuple(dr.euler_tensor_values(J)))], gravity)

    def euler(t, y):
        R, W = y[:9].reshape(3, 3), y[9:]
        return np.concatenate([(R @ np.cross(W, -np.eye(3))).ravel(), np.cross(J * W, W) / J])

    R_end = solve_ivp(euler, (0, t_end), np.concatenate([np.eye(3).ravel(), w0]), method="DOP853",
                      rtol=1e-13, atol=1e-13).y[:9, -1].reshape(3, 3)
    phi_end = 0.5 * np.asarray(gravity) * t_end**2
    q0 = np.concatenate([np.zeros(3), np.eye(3).ravel()])
    qd0 = np.concatenate([np.zeros(3), np.cross(w0, np.eye(3)).ravel()])
    errors = []
    for h in hs:
        x = simulate(partial(ggl.step_ggl, system), ggl.initial_vector(system, q0, qd0), h, t_end).x[-1]
        errors.append(max(np.abs(x[3:12].reshape(3, 3) - R_end.T).max(), np.abs(x[:3] - phi_end).max()))
    return np.polyfit(np.log(hs), np.log(errors), 1)[0]


def test_order_two_on_a_free_body_and_one_with_a_potential():
    hs = np.array([0.02, 0.01, 0.005])
    assert _free_body_director_error(np.zeros(3), hs) == pytest.approx(2.0, abs=0.1)
    assert _free_body_director_error(np.array([0.0, 0.0, -9.81]), hs) == pytest.approx(1.0, abs=0.1)


def test_unconstrained_limit_is_symplectic_euler():
    rng = np.random.default_rng(7)
    K = rng.normal(size=(4, 4))
    K = K @ K.T + np.eye(4)
    empty = dr.QuadraticConstraints(H=np.zeros((0, 4, 4)), A=np.zeros((0, 4)), c=np.zeros(0))
    system = dr.ConstrainedSystem(M=np.array([1.0, 2.0, 3.0, 4.0]), f=rng.normal(size=4), constraints=empty, K=K)
    q, p = rng.normal(size=4), rng.normal(size=4)
    x = ggl.initial_vector(system, q, p / system.M)
    h = 0.01
    for _ in range(20):
        x, _ = ggl.step_ggl(system, x, h)
        p = p - h * system.dV(q)  # Euler-B: kick, then drift
        q = q + h * p / system.M
    u = ggl.split(system, x)
    assert np.abs(u.q - q).max() <= 1e-12 and np.abs(u.p - p).max() <= 1e-12


def test_constraint_scaling_leaves_trajectory_unchanged():
    a = top_run(0.002, 0.04)
    b = top_run(0.002, 0.04, system=ex.heavy_top(scaling="metis"))
    d = TOP.d
    assert np.abs(a.x[:, : 3 * d] - b.x[:, : 3 * d]).max() <= 1e-12


# --- structure preservation and accuracy -----------------------------------------------------


def test_top_conserves_L3_and_constraints_over_many_steps():
    tr = ggl.split_trajectory(TOP, top_run(0.002, 0.4))
    L = dr.angular_momentum(tr.q, tr.p, 3)
    assert np.abs(np.diff(L[:, 2])).max() <= 1e-13
    assert abs(L[0, 2] - 0.0710657711) <= 1e-9
    assert np.abs(np.diff(L[:, 0])).max() > 1e-5  # gravity torque acts on L1, L2
    assert np.abs(TOP.g(tr.q)).max() <= 1e-12


def test_printed_variant_loses_momentum_conservation():
    tr = ggl.split_trajectory(TOP, top_run(0.002, 0.1, variant="printed"))
    L3 = dr.angular_momentum(tr.q, tr.p, 3)[:, 2]
    assert np.abs(L3 - L3[0]).max() > 1e-6


def test_dropping_the_hessian_term_loses_momentum_and_the_solution():
    x = ggl.initial_vector(TOP, TOP_Q0, TOP_QD0)
    L3, H, phi3 = [dr.angular_momentum(TOP_Q0, x[12:24], 3)[2]], [TOP.kinetic_from_p(x[12:24]) + TOP.V(TOP_Q0)], []
    with pytest.raises(ggl.NewtonError):
        for _ in range(50):  # the energy runs away within a few steps, then Newton fails
            x, _ = ggl.step_ggl(TOP, x, 0.002, variant="no_hessian")
            L3.append(dr.angular_momentum(x[:12], x[12:24], 3)[2])
            H.append(TOP.kinetic_from_p(x[12:24]) + TOP.V(x[:12]))
            phi3.append(x[2])
    assert len(L3) > 2 and abs(L3[-1] - L3[0]) > 1e-3
    assert H[-1] > 3 * H[0]  # an energy blow-up ...
    assert np.abs(np.array(phi3) - 0.0375).max() < 1e-3  # ... while the top stays at its height (no collapse)


@pytest.mark.parametrize("variant, holds", [("paper", True), ("printed", False)])
def test_step_map_is_symplectic_on_constraint_tangent_space(variant, holds):
    tr = top_run(0.002, 0.014, variant=variant)  # 7 steps
    x_n = tr.x[-1]
    x_n1, _ = ggl.step_ggl(TOP, x_n, 0.002, variant=variant)
    DPhi = ggl.step_map_jacobian_ggl(TOP, x_n, x_n1, 0.002, variant)
    B = constrained_tangent_basis(TOP.G(x_n[: TOP.d]))
    defect = symplecticity_defect(DPhi, B)
    if holds:
        assert defect <= 1e-8
        assert symplecticity_defect(DPhi) > 1e-3  # not symplectic on all of R^{2d}
    else:
        assert defect > 1e-4


def test_symplecticity_defect_does_not_depend_on_the_orthonormal_basis():
    """The null space of G has no preferred basis: two orthonormal bases B and B Q (Q a random
    orthogonal matrix) give the same defect to round-off, for a map that is not symplectic."""
    tr = top_run(0.002, 0.014, variant="printed")
    x_n = tr.x[-1]
    x_n1, _ = ggl.step_ggl(TOP, x_n, 0.002, variant="printed")
    DPhi = ggl.step_map_jacobian_ggl(TOP, x_n, x_n1, 0.002, "printed")
    B = constrained_tangent_basis(TOP.G(x_n[: TOP.d]))
    assert np.allclose(B.T @ B, np.eye(B.shape[1]), atol=1e-14)
    reference = symplecticity_defect(DPhi, B)
    Jc = np.block([[np.zeros((TOP.d, TOP.d)), np.eye(TOP.d)], [-np.eye(TOP.d), np.zeros((TOP.d, TOP.d))]])
    largest_entry = []
    for seed in range(3):
        Q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(B.shape[1], B.shape[1])))
        assert symplecticity_defect(DPhi, B @ Q) == pytest.approx(reference, rel=1e-12)
        A = DPhi @ B @ Q
        largest_entry.append(np.abs(A.T @ Jc @ A - (B @ Q).T @ Jc @ (B @ Q)).max())
    assert np.ptp(largest_entry) > 1e-3 * reference  # the largest entry, the old measure, is not invariant


def test_step_map_jacobian_matches_finite_differences_of_the_solver():
    h = 0.002
    x_n = top_run(h, 0.01).x[-1]
    x_n1, _ = ggl.step_ggl(TOP, x_n, h)
    DPhi = ggl.step_map_jacobian_ggl(TOP, x_n, x_n1, h)
    d = TOP.d

    def phi(z):
        x = x_n.copy()
        x[: 2 * d] = z
        return ggl.step_ggl(TOP, x, h, tol=1e-13)[0][: 2 * d]

    D_fd = fd_jacobian(phi, x_n[: 2 * d])
    assert np.abs(DPhi - D_fd).max() <= 1e-6 * np.abs(DPhi).max()


def test_first_order_convergence_of_height():
    hs = np.array([1e-4, 5e-5, 1e-5, 5e-6])
    err = [abs(top_run(h, 1e-3).x[-1, 2] - 0.0375) / 0.0375 for h in hs]
    slope = np.polyfit(np.log(hs), np.log(err), 1)[0]
    assert 0.95 <= slope <= 1.05


def test_four_bar_follows_reduced_model_and_stays_on_branch():
    for variant in "PC":
        q0, qd0 = ex.four_bar_initial_state(variant=variant)
        tr = simulate(partial(ggl.step_ggl, BAR), ggl.initial_vector(BAR, q0, qd0), 1e-3, 0.4)
        nodes = ggl.split_trajectory(BAR, tr)
        x4 = nodes.q[:, 0] + 0.5 * nodes.q[:, 2]
        ref = ex.four_bar_reference(tr.t, ex.four_bar_crank_rate_after_projection(variant=variant))
        assert np.abs(x4 - ref.x4).max() <= 2e-3
        assert np.abs(nodes.q[:, 20:22] - [1.0, 0.0]).max() <= 1e-8  # coupler B4 stays horizontal
        gv_ext = BAR.velocity_constraints(nodes.q, nodes.p)[1:, 15:]
        assert np.abs(gv_ext).max() <= 1e-12


def test_damped_scheme_dissipates_the_discrete_power():
    P = ex.FourBarParams(eta=0.5)
    system = ex.double_four_bar(P)
    q0, qd0 = ex.four_bar_initial_state(P, "C")
    h = 1e-3
    run = simulate(partial(ggl.step_ggl, system), ggl.initial_vector(system, q0, qd0), h, 0.3)
    nodes = ggl.split_trajectory(system, run)
    Hv = system.kinetic_from_v(nodes.v) + system.V(nodes.q)
    Pv = system.dissipated_power(nodes.v)
    dH = np.diff(Hv[:-1])
    assert np.all(Pv[:-1] > 0)
    assert np.abs(dH + h * Pv[:-2]).max() <= 1e-3
    undamped = ggl.split_trajectory(BAR, simulate(partial(ggl.step_ggl, BAR), ggl.initial_vector(BAR, q0, qd0), h, 0.3))
    H_und = BAR.kinetic_from_p(undamped.p) + BAR.V(undamped.q)
    H_dam = system.kinetic_from_p(nodes.p) + system.V(nodes.q)
    assert H_dam[-1] < H_und[-1] - 0.1


def test_step_at_singular_configuration_falls_back_and_keeps_the_branch():
    q, dq = ex.four_bar_configuration(0.0)  # all bars horizontal: rank G < 29
    assert np.linalg.matrix_rank(BAR.G(q)) < 29
    x_n = ggl.initial_vector(BAR, q, -2.0 * dq)
    x1, report = ggl.step_ggl(BAR, x_n, 1e-3)
    assert len(report.residual_history) > report.n_iter + 1  # plain Newton failed, minimum-norm updates converged
    assert report.residual_history[-1] <= 1e-9
    # the fallback is the shared solver with minimum-norm updates from the same guess
    x_min, min_norm = newton_solve(
        lambda x: ggl.residual_ggl(BAR, x_n, x, 1e-3), ggl.initial_guess(BAR, x_n, 1e-3),
        lambda x: ggl.jacobian_ggl(BAR, x_n, x, 1e-3), linear_solver="lstsq", extra_update=True,
    )
    np.testing.assert_array_equal(x1, x_min)
    abandoned = report.residual_history[: -len(min_norm.residual_history)]
    assert report.residual_history[-len(min_norm.residual_history):] == min_norm.residual_history
    assert report.n_iter == len(abandoned) - 1 + min_norm.n_iter
    # every evaluation of the abandoned LU attempt is counted: it ends at max_iter or at a
    # singular factorisation (which one depends on round-off, i.e. on the CPU), so count its own
    lu_calls = {"residual": 0, "jacobian": 0}

    def counted(kind, f):
        def call(x):
            lu_calls[kind] += 1
            return f(x)
        return call

    with pytest.raises(NewtonError):
        newton_solve(counted("residual", lambda x: ggl.residual_ggl(BAR, x_n, x, 1e-3)),
                     ggl.initial_guess(BAR, x_n, 1e-3),
                     counted("jacobian", lambda x: ggl.jacobian_ggl(BAR, x_n, x, 1e-3)), extra_update=True)
    assert report.n_jacobian == lu_calls["jacobian"] + min_norm.n_jacobian
    assert report.n_residual == lu_calls["residual"] + min_norm.n_residual
    # exactly at the bifurcation point only round-off selects the branch; the coupler stays horizontal to 1e-5
    assert np.abs(x1[20:22] - [1.0, 0.0]).max() <= 1e-5
