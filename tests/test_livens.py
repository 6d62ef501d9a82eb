"""Tests of the Livens integrators and systems of chapter 000 (Kinon & Betsch 2024)."""

from functools import partial

import numpy as np
import pytest

from mbslib.integrators import livens as L
from mbslib.newton import NewtonError, fd_jacobian
from mbslib.quaternions import G, quat_dg_kinetic, quat_grad_kinetic
from mbslib.simulate import simulate
from mbslib.systems.four_bar_loop import FourBarLoop, triangle_load
from mbslib.systems.livens_systems import (
    FreeRigidBody,
    HeavyTop,
    MassSpring,
    SpringPendulum,
)

RNG = np.random.default_rng(20240617)


def fd_grad(f, x):
    return fd_jacobian(lambda z: np.atleast_1d(f(z)), x)[0]


def rel(a, b):
    return np.max(np.abs(a - b)) / max(1.0, np.max(np.abs(b)))


# --------------------------------------------------------------------------- quaternion pieces


def test_quaternion_kinetic_gradients_match_finite_differences():
    J = np.array([6.0, 8.0, 3.0])
    q, v = RNG.standard_normal(4), RNG.standard_normal(4)  # off S³ and off q·v = 0

    def T(q, v):  # ½ ωᵀJω with ω = 2G(q)v
        return 0.5 * (2 * G(q) @ v) @ (J * (2 * G(q) @ v))

    k = quat_grad_kinetic(J, q, v)
    assert rel(k.Tq, fd_grad(lambda z: T(z, v), q)) < 1e-9
    assert rel(k.Tv, fd_grad(lambda z: T(q, z), v)) < 1e-9
    assert rel(k.Tq_q, fd_jacobian(lambda z: quat_grad_kinetic(J, z, v).Tq, q)) < 1e-8
    assert rel(k.Tq_v, fd_jacobian(lambda z: quat_grad_kinetic(J, q, z).Tq, v)) < 1e-8
    assert rel(k.Tv_q, fd_jacobian(lambda z: quat_grad_kinetic(J, z, v).Tv, q)) < 1e-8
    assert rel(k.Tv_v, fd_jacobian(lambda z: quat_grad_kinetic(J, q, z).Tv, v)) < 1e-8


def test_quaternion_kinetic_dg_is_directional_consistent_and_has_correct_jacobians():
    J = np.array([6.0, 8.0, 3.0])
    fb = FreeRigidBody(J=tuple(J))
    q0, q1, v0, v1 = (RNG.standard_normal(4) for _ in range(4))
    k = quat_dg_kinetic(J, q0, q1, v0, v1)
    dT = fb.kinetic_energy(q1, v1) - fb.kinetic_energy(q0, v0)
    assert abs(k.Tq @ (q1 - q0) + k.Tv @ (v1 - v0) - dT) < 1e-13 * (1 + abs(dT))  # (89)
    c, kc = quat_dg_kinetic(J, q0, q0, v0, v0), quat_grad_kinetic(J, q0, v0)
    assert np.allclose(c.Tq, kc.Tq, atol=1e-13) and np.allclose(c.Tv, kc.Tv, atol=1e-13)
    assert rel(k.Tq_q, fd_jacobian(lambda z: quat_dg_kinetic(J, q0, z, v0, v1).Tq, q1)) < 1e-8
    assert rel(k.Tq_v, fd_jacobian(lambda z: quat_dg_kinetic(J, q0, q1, v0, z).Tq, v1)) < 1e-8
    assert rel(k.Tv_q, fd_jacobian(lambda z: quat_dg_kinetic(J, q0, z, v0, v1).Tv, q1)) < 1e-8
    assert rel(k.Tv_v, fd_jacobian(lambda z: quat_dg_kinetic(J, q0, q1, v0, z).Tv, v1)) < 1e-8



# --------------------------------------------------------------------------- systems


def _systems():
    return [MassSpring(), MassSpring(c=0.25), SpringPendulum(), FreeRigidBody(), HeavyTop.cone(),
            FourBarLoop()]


@pytest.mark.parametrize("system", _systems(), ids=lambda s: type(s).__name__)
def test_system_derivatives_match_finite_differences(system):
    n, m = system.n, system.m
    # keep the pendulum away from its coordinate singularities r = 0, sin θ = 0
    shift = np.array([1.2, 1.0, 0.3]) if isinstance(system, SpringPendulum) else 0.0
    q0 = RNG.standard_normal(n) + shift
    q1 = q0 + 0.3 * RNG.standard_normal(n)
    v0, v1, lam = RNG.standard_normal(n), RNG.standard_normal(n), RNG.standard_normal(m)
    # continuous gradients
    k = system.grad_kinetic(q0, v0)
    assert rel(k.Tq, fd_grad(lambda z: system.kinetic_energy(z, v0), q0)) < 1e-8
    assert rel(k.Tv, fd_grad(lambda z: system.kinetic_energy(q0, z), v0)) < 1e-8
    assert rel(k.Tv, system.mass_matrix(q0) @ v0) < 1e-12
    assert rel(k.Tq_q, fd_jacobian(lambda z: system.grad_kinetic(z, v0).Tq, q0)) < 1e-7
    assert rel(k.Tq_v, fd_jacobian(lambda z: system.grad_kinetic(q0, z).Tq, v0)) < 1e-7
    assert rel(k.Tv_q, fd_jacobian(lambda z: system.grad_kinetic(z, v0).Tv, q0)) < 1e-7
    assert rel(system.grad_potential(q0), fd_grad(system.potential, q0)) < 1e-8
    assert rel(system.hess_potential(q0), fd_jacobian(system.grad_potential, q0)) < 1e-7
    if m:
        assert rel(system.constraint_jacobian(q0), fd_jacobian(system.constraint, q0)) < 1e-8
        H = fd_jacobian(lambda z: system.constraint_jacobian(z).T @ lam, q0)
        assert rel(system.constraint_hessian(q0, lam), H) < 1e-7
    # discrete gradients: directionality (73) and Jacobians in the end values
    k = system.dg_kinetic(q0, q1, v0, v1)
    dT = system.kinetic_energy(q1, v1) - system.kinetic_energy(q0, v0)
    assert abs(k.Tq @ (q1 - q0) + k.Tv @ (v1 - v0) - dT) < 1e-12 * (1 + abs(dT))
    assert rel(k.Tq_q, fd_jacobian(lambda z: system.dg_kinetic(q0, z, v0, v1).Tq, q1)) < 1e-7
    assert rel(k.Tq_v, fd_jacobian(lambda z: system.dg_kinetic(q0, q1, v0, z).Tq, v1)) < 1e-7
    assert rel(k.Tv_q, fd_jacobian(lambda z: system.dg_kinetic(q0, z, v0, v1).Tv, q1)) < 1e-7
    assert rel(k.Tv_v, fd_jacobian(lambda z: system.dg_kinetic(q0, q1, v0, z).Tv, v1)) < 1e-7
    Vb, Vb_q = system.dg_potential(q0, q1)
    dV = system.potential(q1) - system.potential(q0)
    assert abs(Vb @ (q1 - q0) - dV) < 1e-12 * (1 + abs(dV))
    assert rel(Vb_q, fd_jacobian(lambda z: system.dg_potential(q0, z)[0], q1)) < 1e-7


def test_bad_parameters_raise_value_errors_naming_them():
    with pytest.raises(ValueError, match="J2"):
        FreeRigidBody(J=(1.0, -1.0, 1.0))
    with pytest.raises(ValueError, match="mass"):
        HeavyTop(J=(1.0, 1.0, 0.5), mass=0.0)
    with pytest.raises(ValueError, match="c "):
        MassSpring(c=0.0)
    with pytest.raises(ValueError, match="EA"):
        SpringPendulum(EA=-1.0)
    with pytest.raises(ValueError, match="f_max"):
        FourBarLoop(f_max=-1.0)
    with pytest.raises(ValueError, match="q0"):
        FreeRigidBody().initial_state([1.0, 1.0, 0.0, 0.0], [1.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="system"):
        L.step_null_eml(MassSpring(), np.zeros(10), 0.1)
    with pytest.raises(ValueError, match="inverse"):
        L.step_mph(HeavyTop.cone(), np.zeros(9), 0.1, inverse="typo")


@pytest.mark.parametrize("h", [0.0, -0.01, np.nan, np.inf])
@pytest.mark.parametrize("scheme", ["eml", "mpl", "reml", "null_eml", "emh", "mph"])
def test_steps_reject_a_bad_step_size(scheme, h):
    top = HeavyTop.cone()
    _, x0 = top.steady_precession(np.pi / 3, 10.0)
    if scheme in ("emh", "mph"):
        x0 = L.hamiltonian_initial_state(top, x0)
    with pytest.raises(ValueError, match="h must be"):
        getattr(L, f"step_{scheme}")(top, x0, h)


def test_paper_data_of_the_heavy_top():
    top = HeavyTop.cone()
    assert top.mass == pytest.approx(0.7068583471, rel=1e-10)
    assert top.J[0] == pytest.approx(4.5062220e-3, rel=1e-7)
    assert top.J[2] == pytest.approx(5.3014376e-4, rel=1e-7)
    omega_s, x0 = top.steady_precession(np.pi / 3, 10.0)
    assert omega_s == pytest.approx(135.6, abs=1e-10)
    assert L.energies(top, x0[None])["E"][0] == pytest.approx(5.6690551906, abs=1e-9)
    L0 = top.angular_momentum(x0[:4], x0[4:8])
    assert np.allclose(L0, [0.0, -0.04503947, 0.07106577], atol=1e-8)


def test_triangle_load_shape():
    f = triangle_load([0.0, 0.25, 0.5, 0.75, 1.0, 1.5], 100.0)
    assert np.allclose(f, [0, 50, 100, 50, 0, 0])


# --------------------------------------------------------------------------- scheme Jacobians

SCHEME_CASES = [
    ("eml", MassSpring()),
    ("eml", SpringPendulum()),
    ("eml", HeavyTop.cone()),
    ("mpl", HeavyTop.cone()),
    ("mpl", SpringPendulum()),
    ("eml", FreeRigidBody()),
    ("mpl", FreeRigidBody()),   # widget path of Figs. 5-8
    ("eml", FourBarLoop()),
    ("mpl", FourBarLoop()),     # same code path as the widgets' scheme switch
]


@pytest.mark.parametrize(
    "name,system", SCHEME_CASES, ids=lambda c: c if isinstance(c, str) else type(c).__name__
)
def test_livens_residual_jacobians_match_finite_differences(name, system):
    size = 3 * system.n + system.m
    shift = np.r_[1.2, 1.0, 0.3, np.zeros(size - 3)] if isinstance(system, SpringPendulum) else 0.0
    xn = RNG.standard_normal(size) + shift
    x1 = xn + 0.1 * RNG.standard_normal(size)
    R = getattr(L, f"residual_{name}")
    K = getattr(L, f"jacobian_{name}")(system, xn, x1, 0.1, 0.3)  # t = 0.3: the loop is loaded
    assert rel(K, fd_jacobian(lambda z: R(system, xn, z, 0.1, 0.3), x1)) < 1e-7


@pytest.mark.parametrize("system", [HeavyTop.cone(), FourBarLoop()], ids=["top", "loop"])
def test_reml_jacobian_matches_finite_differences(system):
    xn = RNG.standard_normal(3 * system.n + system.m)
    y = RNG.standard_normal(system.n + system.m)
    K = L.jacobian_reml(system, xn, y, 0.1, 0.3)
    assert rel(K, fd_jacobian(lambda z: L.residual_reml(system, xn, z, 0.1, 0.3), y)) < 1e-7


def test_null_eml_emh_mph_jacobians_match_finite_differences():
    top = HeavyTop.cone()
    xn = RNG.standard_normal(13)
    th = np.array([0.2, -0.4, 0.3])
    K = L.jacobian_null_eml(top, xn, th, 0.05)
    assert rel(K, fd_jacobian(lambda z: L.residual_null_eml(top, xn, z, 0.05), th)) < 1e-7
    zn, z1 = RNG.standard_normal(9), RNG.standard_normal(9)
    fd = fd_jacobian(lambda z: L.residual_emh(top, zn, z, 0.05), z1)
    assert rel(L.jacobian_emh(top, zn, z1, 0.05), fd) < 1e-7
    for inverse in ("numerical", "analytic"):
        K = L.jacobian_mph(top, zn, z1, 0.05, inverse=inverse)
        fd = fd_jacobian(lambda z, inverse=inverse: L.residual_mph(top, zn, z, 0.05, inverse=inverse), z1)
        assert rel(K, fd) < 1e-7


# --------------------------------------------------------------------------- conservation


def _momenta(system, X):
    return np.array([system.angular_momentum(x[: system.n], x[system.n : 2 * system.n]) for x in X])


def test_eml_free_body_conserves_energy_momentum_constraint_and_reductions_agree():
    fb = FreeRigidBody()
    x0 = fb.initial_state([1, 0, 0, 0], [10, 20, 20])
    trajectories = {
        s: simulate(partial(getattr(L, f"step_{s}"), fb), x0, 0.05, 1.0) for s in ("eml", "reml", "null_eml")
    }
    runs = {s: tr.x for s, tr in trajectories.items()}
    for tr in trajectories.values():  # Newton stays cheap at the paper's coarse step
        assert tr.n_iter.max() <= 10
    for X in runs.values():
        en = L.energies(fb, X)
        assert en["E"][0] == pytest.approx(2500.0, abs=1e-12)
        assert np.max(np.abs(np.diff(en["E"]))) / 2500 < 1e-13
        assert np.max(np.abs(np.diff(_momenta(fb, X), axis=0))) < 1e-10
        assert np.allclose(_momenta(fb, X), [60, 160, 60], atol=1e-9)
        assert np.max(np.abs(0.5 * (np.sum(X[:, :4] ** 2, axis=1) - 1))) < 1e-12
        assert np.max(np.abs(np.diff(en["E_tot"]))) > 1e-8 * 2500  # M depends on q
    assert np.max(np.abs(runs["reml"][:, :12] - runs["eml"][:, :12])) < 1e-10
    assert np.max(np.abs(runs["null_eml"][:, :12] - runs["eml"][:, :12])) < 1e-10


def test_heavy_top_energy_conservation_separates_em_from_midpoint_schemes():
    top = HeavyTop.cone()
    _, x0 = top.steady_precession(np.pi / 3, 10.0)
    xh = L.hamiltonian_initial_state(top, x0)
    dE = {}
    for s in ("eml", "mpl"):
        X = simulate(partial(getattr(L, f"step_{s}"), top), x0, 0.01, 0.2).x
        dE[s] = np.max(np.abs(np.diff(L.energies(top, X)["E"])))
        assert np.max(np.abs(np.diff(_momenta(top, X)[:, 2]))) < 1e-14
    for s in ("emh", "mph"):
        X = simulate(partial(getattr(L, f"step_{s}"), top), xh, 0.01, 0.2).x
        dE[s] = np.max(np.abs(np.diff([L.hamiltonian(top, x[:4], x[4:8]) for x in X])))
        assert np.max(np.abs(0.5 * (np.sum(X[:, :4] ** 2, axis=1) - 1))) < 1e-12
    assert dE["eml"] < 1e-12 and dE["emh"] < 1e-12
    assert dE["mpl"] > 1e-8 * 5.67 and dE["mph"] > 1e-8 * 5.67


@pytest.mark.parametrize("scheme", ["eml", "mpl", "emh", "mph"])
def test_second_order_on_steady_precession(scheme):
    top = HeavyTop.cone()
    _, x0 = top.steady_precession(np.pi / 3, 10.0)
    if scheme in ("emh", "mph"):
        x0 = L.hamiltonian_initial_state(top, x0)
    hs = np.array([0.004, 0.002, 0.001])
    ref = top.reference_centre_of_mass(0.04, np.pi / 3, 10.0)[0]
    step = partial(getattr(L, f"step_{scheme}"), top)
    errors = [np.linalg.norm(top.centre_of_mass(simulate(step, x0, h, 0.04).x[-1, :4])[0] - ref) for h in hs]
    order = np.polyfit(np.log(hs), np.log(errors), 1)[0]
    assert 1.8 < order < 2.2, order


def test_mass_spring_and_spring_pendulum_conserve_generalized_energy():
    ms = MassSpring()
    x0 = np.r_[0, 1.1, 0, ms.mass_matrix(None) @ [1, 1, -1], 1, 1, -1, 0]
    X = simulate(partial(L.step_eml, ms), x0, 0.1, 2.0).x
    en = L.energies(ms, X)
    assert en["E"][0] == pytest.approx(1.0) and np.max(np.abs(np.diff(en["E"]))) < 1e-12
    assert np.max(np.abs(en["E"] - en["E_tot"])) < 1e-12
    assert np.max(np.abs([ms.constraint(q) for q in X[:, :3]])) < 1e-12
    sp = SpringPendulum()
    q0, v0 = np.array([1.05, np.pi / 2, 0.0]), np.array([0.0, 1.0, 1.0])
    X = simulate(partial(L.step_eml, sp), np.r_[q0, sp.mass_matrix(q0) @ v0, v0], 0.01, 0.3).x
    en = L.energies(sp, X)
    assert en["E"][0] == pytest.approx(1.496484375, abs=1e-12)
    assert np.max(np.abs(np.diff(en["E"]))) < 1e-12
    assert 1e-6 < np.max(np.abs(np.diff(en["E_tot"]))) < 1e-3


def test_four_bar_loop_power_balance_constraints_and_momentum():
    loop = FourBarLoop()
    x0 = loop.initial_state()
    assert np.max(np.abs(loop.constraint(x0[:28]))) == 0.0
    tr = simulate(partial(L.step_reml, loop), x0, 0.1, 1.3)
    X, n = tr.x, 28
    assert np.max(np.abs([loop.constraint(x[:n]) for x in X])) < 1e-12
    E = L.energies(loop, X)["E"]
    for k in range(len(X) - 1):
        q0, q1 = X[k, :n], X[k + 1, :n]
        out = loop.external_force(0.5 * (q0 + q1), 0.5 * (X[k, 2 * n:3 * n] + X[k + 1, 2 * n:3 * n]), tr.t[k] + 0.05)
        work = 0.0 if out is None else out[0] @ (q1 - q0)
        assert abs(E[k + 1] - E[k] - work) < 1e-10 * max(E[-1], 1.0)
    # after the load: ΔL = -h Σ_joints g(q^{n+1/2}) × λ^{(a,b)} (joints are equivariant, not invariant)
    Lm = np.array([loop.angular_momentum(x[:n], x[n : 2 * n]) for x in X])
    for k in range(10, len(X) - 1):
        qm, mu = 0.5 * (X[k, :n] + X[k + 1, :n]), X[k + 1, 3 * n + 4 :].reshape(4, 3)
        predicted = -0.1 * sum(np.cross(g, m) for g, m in zip(loop.joint_gaps(qm), mu, strict=True))
        assert np.max(np.abs(Lm[k + 1] - Lm[k] - predicted)) < 1e-9
        assert np.max(np.abs(Lm[k + 1] - Lm[k])) > 1e-9  # not conserved exactly
    P = np.array([loop.linear_momentum(x[n : 2 * n]) for x in X])
    assert np.allclose(P[-1], [400.0, 0.0, 0.0], atol=1e-9)
    # EML and REML coincide
    X_eml = simulate(partial(L.step_eml, loop), x0, 0.1, 0.3).x
    assert np.max(np.abs(X_eml[:, : 3 * n] - X[:4, : 3 * n])) < 1e-9


def test_antipodal_guard_raises():
    fb = FreeRigidBody()
    with pytest.raises(NewtonError, match="antipodal"):
        L._guard_antipodal(fb, np.array([1.0, 0, 0, 0]), np.array([-1.0, 0, 0, 0]), (1.0,), 0.0)


# --------------------------------------------------------------------------- counted work (Fig. 9)


@pytest.mark.parametrize("scheme, unknowns", [("eml", 13), ("reml", 5), ("null_eml", 3)])
@pytest.mark.parametrize("jacobian", ["analytic", "fd"])
def test_step_reports_count_the_work_of_each_step(scheme, unknowns, jacobian):
    fb = FreeRigidBody()
    x0 = fb.initial_state([1, 0, 0, 0], [10, 20, 20])
    calls = {"n": 0}
    residual = getattr(L, f"residual_{scheme}")

    def counting(*args, **kwargs):
        calls["n"] += 1
        return residual(*args, **kwargs)

    _, rep = getattr(L, f"step_{scheme}")(fb, x0, 0.01, jacobian=jacobian)
    assert rep.n_unknowns == unknowns and rep.n_jacobian == rep.n_iter == rep.n_linear_solves
    fd = jacobian == "fd"
    assert rep.n_fd_columns == (unknowns * rep.n_iter if fd else 0)
    recover = 1 if scheme == "null_eml" else 0  # Null-EML evaluates its residual once more to recover λ
    assert rep.n_residual == len(rep.residual_history) + 2 * rep.n_fd_columns + recover
    # the count equals the calls an instrumented residual sees in a hand-made Newton loop of the same kind
    z0 = {"eml": x0, "reml": np.r_[x0[:4], x0[12:]], "null_eml": np.zeros(3)}[scheme]
    f = lambda z: counting(fb, x0, z, 0.01)  # noqa: E731
    jac = getattr(L, f"jacobian_{scheme}")
    _, rep2 = L._solve(f, z0, lambda z: jac(fb, x0, z, 0.01), 0.0, jacobian)
    assert calls["n"] == rep2.n_residual == rep.n_residual - recover


def test_unknown_jacobian_kind_is_rejected():
    fb = FreeRigidBody()
    with pytest.raises(ValueError, match="jacobian"):
        L.step_eml(fb, fb.initial_state([1, 0, 0, 0], [10, 20, 20]), 0.01, jacobian="typo")


# --------------------------------------------------------------------------- initial data of the chapter's runs


@pytest.mark.parametrize("c", [0.5, 0.25])
def test_initial_energies_of_the_papers_examples(c):
    ms = MassSpring(c=c)  # E^0 = 1 for the text's c = 1/4 and the code's c = 1/2 (V^0 = 0)
    x0 = np.r_[0, 1.1, 0, ms.mass_matrix(None) @ [1, 1, -1], 1, 1, -1, 0]
    assert L.energies(ms, x0[None])["E"][0] == pytest.approx(1.0, abs=1e-14)
    sp = SpringPendulum()
    q0, v0 = np.array([1.05, np.pi / 2, 0.0]), np.array([0.0, 1.0, 1.0])
    assert L.energies(sp, np.r_[q0, sp.mass_matrix(q0) @ v0, v0][None])["E"][0] == pytest.approx(1.496484375, abs=1e-14)
    fb = FreeRigidBody()
    x0 = fb.initial_state([1, 0, 0, 0], [10, 20, 20])
    assert L.energies(fb, x0[None])["E"][0] == pytest.approx(2500.0, abs=1e-11)


def test_kinetic_energy_is_blind_to_the_velocity_along_q():
    """M̃4(q) q = 0: a component of v along q changes neither T nor Ω (chapter 000, Fig. 7)."""
    fb = FreeRigidBody()
    q = RNG.standard_normal(4)
    q /= np.linalg.norm(q)
    v = RNG.standard_normal(4)
    for a in (0.0, 1.0, -7.5):
        assert fb.kinetic_energy(q, v + a * q) == pytest.approx(fb.kinetic_energy(q, v), rel=1e-13)
        assert np.allclose(G(q) @ (v + a * q), G(q) @ v, atol=1e-13)


def test_dense_newton_matrices_solve_by_lapack_and_name_a_zero_pivot():
    """The dense Newton matrices of the schemes are solved by LAPACK's LU (the update of
    numpy.linalg.solve to round-off); an exactly singular one raises, naming the unknown."""
    K, r = RNG.standard_normal((9, 9)) + 5.0 * np.eye(9), RNG.standard_normal(9)
    np.testing.assert_allclose(L._DenseLU(K).solve(r), np.linalg.solve(K, r), rtol=1e-13)
    singular = K.copy()
    singular[:, 4] = 0.0
    with pytest.raises(np.linalg.LinAlgError, match="zero pivot at unknown 4"):
        L._DenseLU(singular).solve(r)
