"""Tests of the rescaled-Rodrigues integrators, the 3-D pendulum and the binder torus (chapter 003)."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from mbslib import diagnostics
from mbslib import rodrigues as rr
from mbslib.formulations.rodrigues import BondedSpheresSystem, PivotedRodriguesSystem
from mbslib.integrators import rodrigues_vi as rv
from mbslib.studies import binder_torus as ts
from mbslib.systems import binder_torus as bt
from mbslib.systems.pendulum3d import Pendulum3D, initial_conditions, pendulum_model, reference_solution, rotation_angle
from mbslib.trajectory import IntegrationError, Trajectory, Work

RNG = np.random.default_rng(20211203)
PAPER = Pendulum3D()  # the paper's parameters and invariants (41a-c)
PEND = PivotedRodriguesSystem(PAPER.model())  # what the maps run


def pendulum_state(alpha0=None, w0=None):
    a0, w0_ = initial_conditions()
    a0 = a0 if alpha0 is None else alpha0
    w0 = w0_ if w0 is None else w0
    return rv.initial_state(PEND, np.zeros(3), np.zeros(3), a0, w0)


# --- rescaled Rodrigues parameters, eqs. (3)-(5) ----------------------------------------------


def test_rr_matrix_is_rotation_and_matches_exponential():
    direction = RNG.normal(size=(50, 3))
    theta = direction / np.linalg.norm(direction, axis=1)[:, None] * RNG.uniform(0.0, 3.0, size=(50, 1))
    alpha = rr.rr_from_rotvec(theta)
    R = rr.rr_matrix(alpha)
    assert np.abs(np.swapaxes(R, 1, 2) @ R - np.eye(3)).max() <= 1e-15 * 4
    assert np.allclose(np.linalg.det(R), 1.0, atol=1e-14)
    assert np.abs(R - Rotation.from_rotvec(theta).as_matrix()).max() <= 1e-14
    # Cayley identity, inverse, trace, quaternion, equivariance
    S = rr._hat(alpha)
    cay = np.linalg.solve(np.eye(3) - 0.5 * S, np.eye(3) + 0.5 * S)
    assert np.abs(R - cay).max() <= 1e-13
    assert np.abs(rr.rr_matrix(-alpha) - np.swapaxes(R, 1, 2)).max() <= 1e-15 * 4
    a2 = np.sum(alpha**2, axis=1)
    assert np.allclose(np.trace(R, axis1=1, axis2=2), 3 - 4 * a2 / (4 + a2), atol=1e-13)
    quat = np.concatenate([alpha, 2 * np.ones((50, 1))], axis=1) / np.sqrt(4 + a2)[:, None]  # scipy: scalar last
    assert np.abs(Rotation.from_quat(quat).as_matrix() - R).max() <= 1e-14
    Q = Rotation.from_rotvec(RNG.normal(size=3)).as_matrix()
    assert np.abs(rr.rr_matrix(alpha @ Q.T) - Q @ R @ Q.T).max() <= 1e-13
    # round trips
    assert np.abs(rr.rr_from_matrix(R) - alpha).max() <= 1e-12 * (1 + np.abs(alpha).max())
    assert np.abs(rr.rr_to_rotvec(alpha) - theta).max() <= 1e-13
    assert np.allclose(rr.rr_angle(alpha), np.linalg.norm(theta, axis=1), atol=1e-14)


def test_compose_order_is_spatial_left_increment():
    a1, a2 = RNG.normal(size=(2, 100, 3))
    lhs = rr.rr_matrix(rr.rr_compose(a1, a2))
    assert np.abs(lhs - rr.rr_matrix(a2) @ rr.rr_matrix(a1)).max() <= 1e-14
    # the other order is wrong by O(1): this guards against the order mistake
    assert np.abs(lhs - rr.rr_matrix(a1) @ rr.rr_matrix(a2)).max() > 0.1
    with pytest.raises(ZeroDivisionError):
        rr.rr_compose([2.0, 0.0, 0.0], [2.0, 0.0, 0.0])


def test_increment_solves_legendre_equation_and_truncation_is_third_order():
    p = RNG.normal(size=(20, 3))
    for h in (0.3, 0.05):
        d = rv.increment_exact(p, h)
        lhs = 4 * d / (4 + np.sum(d * d, axis=1))[:, None]
        assert np.abs(lhs - h * p).max() <= 1e-15 * 8
    diffs = [np.abs(rv.increment_exact(p, h) - rv.increment_truncated(p, h)).max() for h in (0.02, 0.01)]
    assert 2.9 < np.log2(diffs[0] / diffs[1]) < 3.1
    with pytest.raises(FloatingPointError, match="h|p|"):
        rv.increment_exact([[2.0, 0.0, 0.0]], 0.5)


@pytest.mark.parametrize("name", sorted(rv.STEPS))
@pytest.mark.parametrize("h", [0.0, -0.1, np.nan, np.inf])
def test_every_map_validates_the_step_size(name, h):
    with pytest.raises(ValueError, match="h must be a finite positive number"):
        rv.STEPS[name](PEND, pendulum_state(), h)


def test_increments_driver_and_del_residual_validate_h():
    for f in (rv.increment_exact, rv.increment_truncated):
        with pytest.raises(ValueError, match="h must"):
            f([[0.1, 0.0, 0.0]], -1e-3)
    with pytest.raises(ValueError, match="h must"):
        rv.run(rv.step_25, PEND, pendulum_state(), np.nan, 0.03)
    with pytest.raises(ValueError, match="whole multiple"):
        rv.run(rv.step_25, PEND, pendulum_state(), 0.01, 2.5 * 0.01)
    a = pendulum_state().alpha
    with pytest.raises(ValueError, match="h must"):
        rv.del_residual(PEND, np.zeros((1, 3)), a, a, a, 0.0)


# --- 3-D pendulum ------------------------------------------------------------------------------


def test_pendulum_torque_matches_finite_differences_off_identity():
    alpha = RNG.normal(size=(6, 3))
    _, T = PEND.force_torque(np.zeros((6, 3)), alpha)
    eps = 1e-6
    for c in range(3):
        e = np.zeros(3)
        e[c] = eps
        fd = -(PAPER.potential(rr.rr_compose(alpha, e)) - PAPER.potential(rr.rr_compose(alpha, -e))) / (2 * eps)
        assert np.abs(fd - T[:, c]).max() <= 1e-8


def test_pendulum_initial_conditions_eq42():
    a0, w0 = initial_conditions()
    assert abs(np.linalg.norm(a0) - 4.828427) < 1e-6
    assert abs(PAPER.axis_spin(a0, w0)) <= 1e-16
    assert abs(PAPER.energy(a0, w0) - 0.7471067812) < 1e-10


@pytest.mark.parametrize("bad, name", [(dict(J=-1.0), "J"), (dict(m=0.0), "m"), (dict(g=np.nan), "g"),
                                       (dict(rho0=(0.0, np.inf, 1.0)), "rho0"), (dict(rho0=(1.0, 0.0)), "rho0"),
                                       (dict(rho0=(0.0, 0.0, 0.0)), "rho0")])
def test_pendulum_validates_on_construction(bad, name):
    with pytest.raises(ValueError, match=name):
        Pendulum3D(**bad)


@pytest.mark.parametrize("paper", [PAPER, Pendulum3D(m=2.0, g=1.5, J=0.7, rho0=(0.3, -0.2, 0.5))],
                         ids=["chapter", "tilted arm"])
def test_pendulum_description_is_the_papers_pendulum(paper):
    """The description's maps see the paper's J, torque (40) and initial data (42); its energy,
    angular momentum and pivot distance are the paper's invariants (41a-c) along a run."""
    model = paper.model()
    (body,), (pivot,) = model.bodies, model.joints
    rho0 = np.array(paper.rho0)
    assert body.mass * model.gravity.g[2] == pytest.approx(paper.m * paper.g, rel=1e-15)  # the weight m g
    np.testing.assert_allclose(-pivot.point_b, rho0, rtol=0, atol=0)
    system = PivotedRodriguesSystem(model)
    assert system.J == pytest.approx(paper.J, rel=1e-15)
    a0, w0 = initial_conditions()
    state = system.initial_state()
    np.testing.assert_allclose(state.alpha[0], a0, rtol=1e-15)
    np.testing.assert_allclose(state.w[0], w0, rtol=0, atol=1e-16)
    alpha = RNG.normal(size=(6, 3))
    _, T = system.force_torque(np.zeros((6, 3)), alpha)
    np.testing.assert_allclose(T, paper.m * paper.g * np.cross(rr.rr_matrix(alpha) @ rho0, [0.0, 0.0, 1.0]),
                               rtol=0, atol=1e-15)  # eq. (40), repaired
    run = rv.run(rv.step_23, system, state, 0.05, 10.0)
    _, _, alpha, w = rv.states_of(run.x)[:, :, 0].transpose(1, 0, 2)
    states = system.body_states(run.t, run.x)
    np.testing.assert_allclose(diagnostics.total_energy(model, states), paper.energy(alpha, w), rtol=1e-14)  # (41a)
    axis = np.einsum("tij,j->ti", states.rotation[:, 0], rho0)
    L = diagnostics.angular_momentum(model, states)  # about the pivot: J Ω, J spherical there
    np.testing.assert_allclose(np.einsum("ti,ti->t", axis, L) / paper.J, paper.axis_spin(alpha, w),
                               rtol=0, atol=1e-14)  # (41b)
    np.testing.assert_allclose(np.linalg.norm(states.position[:, 0], axis=1), paper.axis_length(alpha),
                               rtol=1e-15)  # (41c): the centre's distance to the pivot
    assert np.abs(diagnostics.constraint_residuals(model, states)).max() < 1e-15


@pytest.mark.parametrize("kwargs, match", [(dict(inertia=1.0, mass=1.0, g=1.0), "inertia must exceed"),
                                           (dict(inertia=1.0, mass=0.25, g=1.0, rho0=(0.0, 0.0, 0.0)), "rho0"),
                                           (dict(inertia=1.0, mass=0.25, g=-1.0), "g")])
def test_pendulum_model_names_what_is_not_a_rigid_body(kwargs, match):
    with pytest.raises(ValueError, match=match):
        pendulum_model(**kwargs)


@pytest.mark.parametrize("name", ["23", "25", "27", "27*"])
def test_pendulum_invariants_to_round_off(name):
    run = rv.run(rv.STEPS[name], PEND, pendulum_state(), 0.01, 10.0)
    alpha, w = rv.states_of(run.x)[:, 2:, 0].transpose(1, 0, 2)
    assert np.abs(PAPER.axis_spin(alpha, w)).max() <= 1e-13  # (41b)
    assert np.abs(w[:, 2] - w[0, 2]).max() <= 1e-13  # e3·Ω
    assert np.abs(PAPER.axis_length(alpha) - 1).max() <= 1e-14 * 2  # (41c)


def test_map23_satisfies_del_equation_and_equals_map21():
    a0, w0 = initial_conditions()
    h = 0.01
    s23 = rv.states_of(rv.run(rv.step_23, PEND, pendulum_state(), h, 300 * h).x)
    s21 = rv.states_of(rv.run(rv.step_21, PEND, pendulum_state(w0=rr.rr_matrix(a0).T @ w0), h, 300 * h).x)
    res = max(np.abs(rv.del_residual(PEND, s23[k, 0], s23[k - 1, 2], s23[k, 2], s23[k + 1, 2], h)).max()
              for k in range(1, 300))
    assert res <= 1e-12
    # the same residual with the time levels passed as rows (one call for the whole trajectory)
    alpha = s23[:, 2, 0]
    res_rows = rv.del_residual(PEND, np.zeros((len(alpha) - 2, 3)), alpha[:-2], alpha[1:-1], alpha[2:], h)
    assert np.abs(res_rows).max() <= 1e-12
    one = rv.del_residual(PEND, s23[11, 0], s23[10, 2], s23[11, 2], s23[12, 2], h)[0]
    assert np.allclose(res_rows[10], one, rtol=0, atol=1e-15)
    dw = np.abs(np.einsum("kij,kj->ki", rr.rr_matrix(s21[:, 2, 0]), s21[:, 3, 0]) - s23[:, 3, 0]).max()
    assert dw <= 1e-10
    # map (25) is not an exact DEL solution: its residual is O(h^2), far above round-off
    s25 = rv.states_of(rv.run(rv.step_25, PEND, pendulum_state(), h, 3 * h).x)
    assert np.abs(rv.del_residual(PEND, s25[1, 0], s25[0, 2], s25[1, 2], s25[2, 2], h)).max() > 1e-8


def test_flat_step_adapter_with_simulate():
    from mbslib.simulate import simulate

    s0 = pendulum_state()
    traj = simulate(rv.as_flat_step(rv.step_25, PEND), rv.pack(s0), 0.01, 0.5)
    last = rv.states_of(rv.run(rv.step_25, PEND, s0, 0.01, 0.5).x)[-1]
    assert np.array_equal(rv.unpack(traj.x[-1]).alpha, last[2])


@pytest.mark.parametrize("name, order", [("23", 2), ("25", 2), ("27", 1)])
def test_pendulum_observed_order(name, order):
    a0, w0 = initial_conditions()
    t_end, hs = 1.0, [0.02, 0.01, 0.005]
    R_ref, w_ref = reference_solution(PAPER, a0, w0, np.array([0.0, t_end]))
    errs = []
    for h in hs:
        _, _, alpha, w = rv.states_of(rv.run(rv.STEPS[name], PEND, pendulum_state(), h, round(t_end / h) * h).x)[-1]
        dR = rotation_angle(rr.rr_matrix(alpha[0]).T @ R_ref[-1])
        errs.append(dR + np.linalg.norm(w[0] - w_ref[-1]))
    slope = np.polyfit(np.log(hs), np.log(errs), 1)[0]
    assert abs(slope - order) <= 0.2


# --- binder torus ------------------------------------------------------------------------------


def torus_system(params):
    """The torus of ``params`` as the maps run it: its description, through the rescaled Rodrigues
    formulation."""
    return BondedSpheresSystem(bt.make_torus(params).description())


def random_torus_config(torus):
    x = torus.x0 + 0.02 * RNG.normal(size=torus.x0.shape)
    x[torus.n // 2, 0] = 0.02  # wall penetration
    x[3] = x[5] + 0.9 * torus.D * np.array([1.0, 0.0, 0.0])  # a non-bonded overlap
    alpha = 0.6 * RNG.normal(size=x.shape)
    return x, alpha


@pytest.fixture(scope="module", params=["normalized", "absolute"])
def torus(request):
    return bt.make_torus(bt.TorusParams(n_p=24, law=request.param))


def test_torus_forces_and_torques_match_finite_differences(torus):
    x, alpha = random_torus_config(torus)
    F, T, U, _ = bt.forces_numpy(torus, x, alpha)
    assert np.all(U > 0)  # every term active in this configuration
    pot = lambda x_, a_: bt.forces_numpy(torus, x_, a_)[2].sum()  # noqa: E731
    eps = 1e-6
    for i in range(torus.n):
        for c in range(3):
            e = np.zeros(3)
            e[c] = eps
            xp, xm = x.copy(), x.copy()
            xp[i] += e
            xm[i] -= e
            fd = -(pot(xp, alpha) - pot(xm, alpha)) / (2 * eps)
            assert abs(fd - F[i, c]) <= 1e-5 * np.abs(F).max()
            ap, am = alpha.copy(), alpha.copy()
            ap[i] = rr.rr_compose(alpha[i], e)  # spatial left perturbation
            am[i] = rr.rr_compose(alpha[i], -e)
            fd = -(pot(x, ap) - pot(x, am)) / (2 * eps)
            assert abs(fd - T[i, c]) <= 1e-5 * np.abs(T).max()


def test_torus_invariances_and_balance(torus):
    x, alpha = random_torus_config(torus)
    torus_nowall = bt.make_torus(torus.params.replace(wall=False))
    F, T, U, _ = bt.forces_numpy(torus_nowall, x, alpha)
    assert np.abs(F.sum(axis=0)).max() <= 1e-12 * np.abs(F).sum()
    assert np.abs(T.sum(axis=0)).max() <= 1e-12 * np.abs(T).sum()
    Q = Rotation.from_rotvec(RNG.normal(size=3)).as_matrix()
    aq = rr.rr_compose(alpha, np.tile(rr.rr_from_rotvec(Rotation.from_matrix(Q).as_rotvec()), (torus.n, 1)))
    assert np.abs(rr.rr_matrix(aq) - Q @ rr.rr_matrix(alpha)).max() < 1e-12
    U_rot = bt.forces_numpy(torus_nowall, x, aq)[2]  # attitudes only, symmetry (33)
    U_shift = bt.forces_numpy(torus_nowall, x + [0.3, -1.0, 2.0], alpha)[2]
    assert np.abs(U_rot - U).max() <= 1e-10 and np.abs(U_shift - U).max() <= 1e-10
    U_rigid = bt.forces_numpy(torus_nowall, x @ Q.T, aq)[2]  # positions and attitudes
    assert abs(U_rigid[1] - U[1]) > 1e-3  # the shear law is not objective


def test_compiled_kernel_matches_numpy(torus):
    x, alpha = random_torus_config(torus)
    F, T, U, Fw = bt.forces_numpy(torus, x, alpha)
    F2, T2, U2, Fw2 = torus_system(torus.params).forces(x, alpha)
    assert np.abs(F2 - F).max() <= 1e-13 * np.abs(F).max()
    assert np.abs(T2 - T).max() <= 1e-13 * np.abs(T).max()
    assert np.allclose(U2, U, rtol=1e-13) and abs(Fw2 - Fw) <= 1e-13 * abs(Fw)


@pytest.mark.parametrize("name", ["23", "25", "27", "27*"])
def test_compiled_loop_matches_python_maps(name):
    torus = bt.make_torus(bt.TorusParams(n_p=16, x_c=1.6))  # in wall contact quickly
    x0, v0, alpha0, w0 = torus.initial_conditions()
    s0 = rv.initial_state(torus, x0, v0, alpha0, 0.5 * RNG.normal(size=w0.shape))
    h, n = 2e-3, 120
    ref = rv.states_of(rv.run(rv.STEPS[name], torus, s0, h, n * h).x)[-1]
    out = ts.simulate_torus(torus_system(torus.params), name, h, n * h, record_every=n, state0=s0, store_states=True)
    assert out.ok and out.n_steps == n
    # the compiled loop and the Python steps call the same compiled pieces: only the forces differ
    # (compiled kernel against NumPy), at round-off
    for a, b in zip(out.extras["states"][-1], ref, strict=True):
        assert np.abs(a - b).max() <= 1e-11 * (1 + np.abs(b).max())
    E_np = bt.energy_terms(torus, *ref).sum()
    assert abs(bt.column(out, "E")[-1] - E_np) <= 1e-11 * abs(E_np)
    q2 = bt.h1_integrand(*ref)
    assert abs(bt.column(out, "q2")[-1] - q2) <= 1e-11 * q2


@pytest.mark.parametrize("name", ["23", "25", "27", "27*"])
def test_python_steps_and_compiled_loop_are_one_implementation(name):
    """With the same forces, the Python steps and the torus's compiled loop agree to the last bit:
    both step with rv.advance and rv.complete."""
    system = torus_system(bt.TorusParams(n_p=16, x_c=1.6))
    x0, v0, alpha0, w0 = system.initial_conditions()
    s0 = rv.initial_state(system, x0, v0, alpha0, 0.5 * RNG.normal(size=w0.shape))
    h, n = 2e-3, 60
    python = rv.run(rv.STEPS[name], system, s0, h, n * h)
    compiled = ts.simulate_torus(system, name, h, n * h, record_every=1, state0=s0, store_states=True)
    np.testing.assert_array_equal(rv.states_of(python.x), compiled.extras["states"])
    np.testing.assert_array_equal(python.t, compiled.t)
    assert python.work == compiled.work == Work(steps=n, rhs_evaluations=n + 1)


def test_run_returns_a_trajectory_and_ends_where_eq16_has_no_root():
    h, n = 0.01, 40
    run = rv.run(rv.step_25, PEND, pendulum_state(), h, n * h)
    assert isinstance(run, Trajectory) and run.ok and run.failed_step == -1
    assert run.work == Work(steps=n, rhs_evaluations=n + 1) and run.t_final == n * h and run.h == h
    np.testing.assert_array_equal(run.t, h * np.arange(n + 1))
    assert run.x.shape == (n + 1, 12) and rv.states_of(run.x).shape == (n + 1, 4, 1, 3)
    x, v, alpha, w = rv.states_of(run.x)[0]
    s0 = pendulum_state()
    for a, b in ((x, s0.x), (v, s0.v), (alpha, s0.alpha), (w, s0.w)):
        np.testing.assert_array_equal(a, b)
    # a fast spin: h|p| >= 1 from the start, the first step is not taken; map (25) has no such limit
    spun = pendulum_state(w0=np.array([0.0, 0.0, 12.0]))
    for name in ("23", "27*"):
        failed = rv.run(rv.STEPS[name], PEND, spun, 0.1, 1.0)
        assert isinstance(failed.failure, IntegrationError) and failed.failure.reason == rv.CAYLEY_INVALID
        assert failed.failed_step == 0 and failed.failure.t == failed.t_final == 0.0
        assert failed.work == Work(steps=0, rhs_evaluations=1) and len(failed.t) == 1
    assert rv.run(rv.step_25, PEND, spun, 0.1, 1.0).ok
    # a strong pendulum swinging down speeds up until h|p| reaches 1 in a later step: the steps
    # before it are kept
    strong = PivotedRodriguesSystem(Pendulum3D(g=10.0).model())
    late = rv.run(rv.step_23, strong, rv.initial_state(strong, np.zeros(3), np.zeros(3), initial_conditions()[0],
                                                       [0.0, 9.0, 0.0]), 0.1, 1.0)
    k = late.failed_step
    assert 0 < k == late.n_steps and late.failure.t == late.t_final == pytest.approx(k * 0.1)
    assert late.work == Work(steps=k, rhs_evaluations=k + 1) and len(late.t) == k + 1


def test_torus_trajectory_counts_steps_and_force_evaluations():
    torus = torus_system(bt.TorusParams(n_p=16, x_c=1.6))
    h, n, stride = 2e-3, 30, 4
    run = ts.simulate_torus(torus, "27", h, n * h, record_every=stride)
    assert isinstance(run, Trajectory) and run.ok and run.failed_step == -1
    assert run.work == Work(steps=n, rhs_evaluations=n + 1)  # one force evaluation per step, plus the initial one
    assert run.t_final == n * h and run.h == h and run.x.shape == (n // stride + 1, len(bt.COLUMNS))
    np.testing.assert_array_equal(run.t, bt.column(run, "t"))
    np.testing.assert_allclose(run.t, h * stride * np.arange(n // stride + 1), rtol=1e-14)
    assert set(run.extras) == {"int_e2", "int_q2"} and run.extras["int_q2"] > 0.0
    with pytest.raises(ValueError, match="name"):
        bt.column(run, "E_total")


def test_torus_failures_name_the_step_and_its_time():
    torus = torus_system(bt.TorusParams(n_p=16))
    # a huge step: the energy leaves its bound; the step that blew up is taken and recorded
    blown = ts.simulate_torus(torus, "25", 0.2, 20.0)
    k = blown.failed_step
    assert isinstance(blown.failure, IntegrationError) and blown.failure.reason == ts.BLOW_UP
    assert 0 < k == blown.n_steps < 100 and blown.failure.t == blown.t_final == k * 0.2
    assert blown.work == Work(steps=k, rhs_evaluations=k + 1) and len(blown.t) == k + 1
    E = bt.column(blown, "E")
    assert abs(E[-1] - E[0]) > 10.0 * abs(E[0]) and np.all(np.abs(E[:-1] - E[0]) <= 10.0 * abs(E[0]))
    # eq. (16) has no solution when h |p| >= 1: the first step is not taken
    x0, v0, alpha0, w0 = torus.initial_conditions()
    spun = ts.simulate_torus(torus, "23", 0.1, 1.0, state0=(x0, v0, alpha0, w0 + [0.0, 0.0, 20.0]))
    assert spun.failure.reason == ts.CAYLEY_INVALID and spun.failed_step == 0 and spun.failure.t == spun.t_final == 0.0
    assert spun.work == Work(steps=0, rhs_evaluations=1) and len(spun.t) == 1


@pytest.mark.parametrize("name", ["23", "25", "27"])
def test_torus_free_flight_momenta_conserved(name):
    torus = torus_system(bt.TorusParams(wall=False))
    x0, v0, alpha0, w0 = torus.initial_conditions()
    s0 = (x0, v0 + 0.05 * RNG.normal(size=v0.shape), 0.02 * RNG.normal(size=w0.shape), 0.5 * RNG.normal(size=w0.shape))
    out = ts.simulate_torus(torus, name, 1e-3, 0.5, state0=s0)
    E = bt.column(out, "E")
    cols = ["P_x", "P_y", "P_z", "Ls_x", "Ls_y", "Ls_z"]
    drift = max(np.abs(bt.column(out, c) - bt.column(out, c)[0]).max() for c in cols)
    assert drift <= 1e-12 * 80
    assert np.abs(E - E[0]).max() / E[0] <= (1e-3 if name != "27" else 2e-2)


@pytest.mark.parametrize("bad, name", [
    (dict(n_p=2), "n_p"), (dict(n_p=80.5), "n_p"), (dict(n_p=np.nan), "n_p"), (dict(K_a=-1.0), "K_a"),
    (dict(K_pw=np.inf), "K_pw"), (dict(law="x"), "law"), (dict(x_c=1.0), "x_c"), (dict(x_c=np.nan), "x_c"),
    (dict(J=0.0), "J"), (dict(D_t=-3.0), "D_t"), (dict(v0=np.nan), "v0"), (dict(v0=np.inf), "v0"),
    (dict(x_w=np.nan), "x_w"), (dict(x_w=-np.inf), "x_w"), (dict(wall="yes"), "wall")])
def test_torus_params_validate_on_construction(bad, name):
    with pytest.raises(ValueError, match=name):
        bt.TorusParams(**bad)
    with pytest.raises(ValueError, match=name):  # a modified copy is validated as well
        bt.TorusParams().replace(**bad)


def test_torus_parameter_validation():
    assert bt.TorusParams(n_p=24.0).n_p == 24 and isinstance(bt.TorusParams(n_p=24.0).n_p, int)
    with pytest.raises(ValueError, match="params"):
        bt.make_torus(dict(n_p=24))
    with pytest.raises(ValueError, match="scheme"):
        ts.simulate_torus(torus_system(bt.TorusParams()), "24", 1e-3, 0.01)
    with pytest.raises(ValueError, match="h must"):
        ts.simulate_torus(torus_system(bt.TorusParams()), "25", -1e-3, 0.01)


def test_torus_geometry():
    torus = bt.make_torus()
    assert abs(torus.D - 0.1177794473) < 1e-9
    assert np.allclose(torus.r0, torus.D, rtol=1e-12)
    F, T, U, _ = bt.forces_numpy(torus, torus.x0, np.zeros((80, 3)))
    assert np.abs(U).max() <= 1e-12 and np.abs(F).max() <= 1e-9


def test_batched_maps_agree_with_shared_cayley_functions():
    """Pins the table in the module docstring, including rr_compose(a, b) == cayley_compose(b, a)."""
    from mbslib.rotations import cayley_compose, cayley_inv_so3, cayley_so3, hat, rotvec_to_cayley

    a1, a2 = RNG.normal(size=(2, 10, 3))
    S = rr._hat(a1)
    for k, (p, q) in enumerate(zip(a1, a2, strict=True)):
        assert np.array_equal(S[k], hat(p))
        assert np.abs(rr.rr_matrix(p) - cayley_so3(p)).max() <= 1e-15 * 4
        # paper (5): α1 ⊕ α2 has R(α2) R(α1), i.e. cay(α2) cay(α1): the arguments are swapped
        assert np.abs(rr.rr_compose(p, q) - cayley_compose(q, p)).max() <= 1e-12 * np.abs(q).max()
        assert np.abs(rr.rr_matrix(rr.rr_compose(p, q)) - cayley_so3(q) @ cayley_so3(p)).max() <= 1e-14
        # the unswapped call is a different rotation (guards the documented order)
        assert np.abs(rr.rr_compose(p, q) - cayley_compose(p, q)).max() > 1e-3
        assert np.abs(rr.rr_from_matrix(cayley_so3(p)) - cayley_inv_so3(cayley_so3(p))).max() <= 1e-13
    theta = RNG.normal(size=(10, 3))
    theta *= RNG.uniform(0.0, 3.0, size=(10, 1)) / np.linalg.norm(theta, axis=1)[:, None]
    batched = rr.rr_from_rotvec(theta)
    for k, t in enumerate(theta):
        assert np.abs(batched[k] - rotvec_to_cayley(t)).max() <= 1e-13 * (1 + np.abs(batched[k]).max())


# --- parameter validation, wall bookkeeping, stiffness ------------------------------------------


class _OneBody:
    """A free spherical body with a configurable inertia (no forces)."""

    def __init__(self, m=1.0, J=1.0):
        self.m, self.J = m, J

    def force_torque(self, x, alpha):
        return np.zeros_like(x), np.zeros_like(alpha)


@pytest.mark.parametrize("name", sorted(rv.STEPS))
def test_maps_reject_inertia_that_is_not_one_scalar_per_body(name):
    s0 = rv.initial_state(_OneBody(), np.zeros(3), [1.0, 0.0, 0.0], np.zeros(3), [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match=r"J must be one scalar or one scalar per body, shape \(1,\)"):
        rv.STEPS[name](_OneBody(J=[2.0, 3.0, 7.0]), s0, 0.01)  # principal moments: not a sphere
    with pytest.raises(ValueError, match="m must be"):
        rv.STEPS[name](_OneBody(m=[1.0, 1.0]), s0, 0.01)
    with pytest.raises(ValueError, match="J must be finite and positive"):
        rv.STEPS[name](_OneBody(J=-1.0), s0, 0.01)
    # one scalar per body is accepted and gives the same step as the scalar
    a, _ = rv.STEPS[name](_OneBody(J=[2.0]), s0, 0.01)
    b, _ = rv.STEPS[name](_OneBody(J=2.0), s0, 0.01)
    assert np.array_equal(a.alpha, b.alpha) and np.array_equal(a.w, b.w)
    with pytest.raises(ValueError, match="J must be one scalar"):
        rv.del_residual(_OneBody(J=[2.0, 3.0, 7.0]), np.zeros((1, 3)), s0.alpha, s0.alpha, s0.alpha, 0.01)


def test_torus_initial_state_has_only_translational_energy_and_no_wall_contact():
    """At t = 0 (paper Sect. 4.1): K_t = 40, every other term exactly 0; the wall term is exactly 0
    (and pushes with exactly 0 force) for every gap of at least one radius, so U_pw = 0 until the
    first contact at t = gap/v0."""
    for law in ("normalized", "absolute"):
        torus = bt.make_torus(bt.TorusParams(law=law))
        terms = bt.energy_terms(torus, *torus.initial_conditions())
        assert terms[0] == 40.0 and np.abs(terms[1:]).max() <= 1e-12
        for gap in (torus.D / 2 + 1e-12, torus.D, 0.4411):
            x = torus.x0 - [torus.x0[:, 0].min() - gap, 0.0, 0.0]
            _, _, U, Fw = torus_system(torus.params).forces(x, np.zeros((torus.n, 3)))
            assert U[4] == 0.0 and Fw == 0.0
        run = ts.simulate_torus(torus_system(torus.params), "25", 1e-3, 0.44)
        assert np.all(bt.column(run, "U_pw") == 0.0) and np.all(bt.column(run, "I_w") == 0.0)


def test_stiffness_matrix_and_max_frequency():
    paper = bt.make_torus(bt.TorusParams(n_p=24))
    torus = torus_system(paper.params)
    # at rest without contact the fastest mode is axial: the stiffness of the springs k = K_a/r0^2
    # along the bonds, assembled here by hand (shear is quartic, bending acts on rotations only)
    ring = bt.make_torus(paper.params.replace(contact=False, wall=False))
    free = torus_system(ring.params)
    k = ring.params.K_a / ring.D**2
    K_axial = np.zeros((3 * ring.n, 3 * ring.n))
    for (i, j), n0 in zip(ring.bonds, ring.n0, strict=True):
        block = k * np.outer(n0, n0)
        for a, b, sign in ((i, i, 1), (j, j, 1), (i, j, -1), (j, i, -1)):
            K_axial[3 * a:3 * a + 3, 3 * b:3 * b + 3] += sign * block
    omega = free.max_frequency(ring.x0, np.zeros((ring.n, 3)))
    assert abs(omega - np.sqrt(np.linalg.eigvalsh(K_axial)[-1] / ring.params.m)) <= 1e-6 * omega
    assert abs(omega - 2 * np.sqrt(k) * np.cos(np.pi / ring.n)) <= 1e-6 * omega  # alternating ring mode
    # at a random deformed state: the Hessian of U is symmetric, and K dq predicts the force change
    x, alpha = random_torus_config(paper)
    K = torus.stiffness_matrix(x, alpha)
    _, T, _, _ = torus.forces(x, alpha)
    # symmetric up to the left-trivialisation term: K - K^T = S(T_i) in the rotation block of body i
    connection = np.zeros_like(K)
    for i in range(torus.n):
        r = 3 * torus.n + 3 * i
        connection[r:r + 3, r:r + 3] = rr._hat(T[i])
    assert np.abs(K - K.T - connection).max() <= 1e-5 * np.abs(K).max()
    dq = 1e-6 * RNG.normal(size=6 * torus.n)
    dx, dz = dq[: 3 * torus.n].reshape(-1, 3), dq[3 * torus.n:].reshape(-1, 3)
    F0, T0, _, _ = torus.forces(x, alpha)
    F1, T1, _, _ = torus.forces(x + dx, rr.rr_compose(alpha, dz))
    change = np.concatenate([(F1 - F0).ravel(), (T1 - T0).ravel()])
    assert np.abs(change + K @ dq).max() <= 1e-3 * np.abs(K @ dq).max()
    # stiffer contacts give a higher frequency at the same configuration
    stiff = torus_system(paper.params.replace(K_pp=10 * paper.params.K_pp, K_pw=10 * paper.params.K_pw))
    assert stiff.max_frequency(x, alpha) > torus.max_frequency(x, alpha)
    with pytest.raises(ValueError, match="eps"):
        torus.stiffness_matrix(x, alpha, eps=0.0)
