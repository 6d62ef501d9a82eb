"""Tests of paper 002's building blocks: tableaux, SO(3) maps, models, RK/RKMK and generalized-α."""

import math
import os
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

from mbslib import kernels as K
from mbslib import rotations as rot
from mbslib.integrators import generalized_alpha as ga
from mbslib.integrators import runge_kutta as rk
from mbslib.integrators.tableaux import (
    DOPRI5,
    ODE23,
    RK44,
    RK67,
    TABLEAUX,
    ButcherTableau,
    order_defects,
)
from mbslib.systems import lie_group_mbs as L
from mbslib.trajectory import Trajectory, Work

ANGLES = [1e-10, 1e-4, 1e-2, 0.5, 2.0, 3.0]


def _random_unit(rng):
    a = rng.normal(size=3)
    return a / np.linalg.norm(a)


# --- tableaux ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(TABLEAUX))
def test_tableau_orders_are_exact(name):
    t = TABLEAUX[name]
    assert np.allclose(t.A.sum(axis=1), t.c, atol=1e-15)
    assert order_defects(t.A, t.b, t.c, t.order).max() < 1e-14
    # the next order fails, so the order check can fail
    assert order_defects(t.A, t.b, t.c, t.order + 1).max() > 1e-5


def test_embedded_pairs():
    assert order_defects(DOPRI5.A, DOPRI5.b_hat, DOPRI5.c, 4).max() < 1e-14
    assert order_defects(ODE23.A, ODE23.b_hat, ODE23.c, 2).max() < 1e-14
    assert order_defects(ODE23.A, ODE23.b_hat, ODE23.c, 3).max() > 1e-5


def test_bad_tableau_is_rejected():
    with pytest.raises(ValueError, match="order condition"):
        ButcherTableau("bad", RK44.A, RK44.b + [0.01, -0.01, 0, 0], RK44.c, order=4)
    with pytest.raises(ValueError, match="row sums"):
        ButcherTableau("bad", RK44.A, RK44.b, RK44.c + 0.1, order=4)


# --- SO(3) primitives -----------------------------------------------------------------------


@pytest.mark.parametrize("angle", ANGLES)
def test_tangent_operator_and_inverse(rng, angle):
    om = angle * _random_unit(rng)
    T = K.texp_so3(om)
    assert np.abs(T @ K.texp_inv_so3(om) - np.eye(3)).max() < 1e-13
    assert np.abs(T - rot.dexp_so3(om)).max() < 1e-14
    assert np.abs(K.rotation_rv(om) - rot.exp_so3(om)).max() < 1e-15


def test_tangent_operator_is_the_kinematics_of_eq25(rng):
    """vee(Rᵀ Ṙ) = T(Ω) Ω̇ for R(t) = R_n exp(Ω(t)), by central differences."""
    Rn = rot.exp_so3(rng.normal(size=3))
    om, omd = rng.normal(size=3), rng.normal(size=3)
    d = 1e-6
    Rdot = (Rn @ K.rotation_rv(om + d * omd) - Rn @ K.rotation_rv(om - d * omd)) / (2 * d)
    w = rot.vee((Rn @ K.rotation_rv(om)).T @ Rdot)
    assert np.allclose(w, K.texp_so3(om) @ omd, rtol=1e-8, atol=1e-9)


def _series_c2(phi):
    """(φ − sin φ)/φ³ summed from its power series in exact rational arithmetic."""
    x = Fraction(phi) ** 2
    return float(sum((-1) ** k * x**k / math.factorial(2 * k + 3) for k in range(30)))


def _series_gamma(phi):
    """(1 − (φ/2) cot(φ/2))/φ² = Σ |B₂ₖ| φ^(2k−2)/(2k)!, summed in exact rational arithmetic."""
    bernoulli = [
        Fraction(1, 6),
        Fraction(1, 30),
        Fraction(1, 42),
        Fraction(1, 30),
        Fraction(5, 66),
        Fraction(691, 2730),
        Fraction(7, 6),
        Fraction(3617, 510),
        Fraction(43867, 798),
        Fraction(174611, 330),
        Fraction(854513, 138),
        Fraction(236364091, 2730),
    ]
    x = Fraction(phi) ** 2
    return float(sum(b * x**k / math.factorial(2 * k + 2) for k, b in enumerate(bernoulli)))


@pytest.mark.parametrize(
    "phi", [1e-12, 1e-6, 1e-3, 0.01, 0.0100001, 0.02, 0.3, 0.5, 0.9999999, 1.0, 1.0000001, 1.5]
)
def test_taylor_branches_match_high_precision_series(phi):
    assert abs(K.texp_coefficient(phi) - _series_c2(phi)) < 1e-14 * _series_c2(phi)
    assert abs(K.texp_inv_coefficient(phi) - _series_gamma(phi)) < 1e-14 * _series_gamma(phi)


@pytest.mark.parametrize("threshold", [1.0])
def test_taylor_branches_are_continuous(threshold):
    for f in (K.texp_coefficient, K.texp_inv_coefficient):
        jump = abs(f(threshold) - f(np.nextafter(threshold, 0.0)))
        assert jump < 1e-15


@pytest.mark.parametrize("a0", [0.0, 1e-9, 0.3, np.pi - 1e-7, np.pi, 2 * np.pi - 1e-3])
@pytest.mark.parametrize("b", [0.0, 1e-6, 0.7])
def test_composition_of_rotation_vectors(rng, a0, b):
    psi0 = a0 * _random_unit(rng)
    om = b * _random_unit(rng)
    psi = K.compose_rv(psi0, om)
    assert np.abs(K.rotation_rv(psi) - K.rotation_rv(psi0) @ K.rotation_rv(om)).max() < 1e-14
    assert np.linalg.norm(psi) <= 2 * np.pi + 1e-12


def test_tait_bryan_and_euler_parameter_kinematics(rng):
    phi, phid = rng.normal(size=3), rng.normal(size=3)
    assert np.abs(K.rotation_rxyz(phi) - rot.tait_bryan_123(phi)).max() < 1e-15
    assert np.abs(K.g_rxyz(phi) - rot.tait_bryan_123_body_rates(phi)).max() < 1e-15
    d = 1e-6
    Gd = (K.g_rxyz(phi + d * phid) - K.g_rxyz(phi - d * phid)) / (2 * d)
    assert np.abs(Gd - K.gdot_rxyz(phi, phid)).max() < 1e-8
    p = rng.normal(size=4)
    p /= np.linalg.norm(p)
    pd = rng.normal(size=4)
    pd -= (pd @ p) * p
    Rd = (K.rotation_ep(p + d * pd) - K.rotation_ep(p - d * pd)) / (2 * d)
    w = rot.vee(K.rotation_ep(p).T @ Rd)
    assert np.allclose(w, K.g_ep(p) @ pd, atol=1e-8)
    assert np.abs(K.rotation_ep(p).T @ K.rotation_ep(p) - np.eye(3)).max() < 1e-14


def test_small_dense_kernels(rng):
    A = rng.normal(size=(7, 7))
    b = rng.normal(size=7)
    assert np.allclose(K.solve(A, b), np.linalg.solve(A, b), rtol=1e-12, atol=1e-12)
    assert np.isnan(K.solve(np.zeros((3, 3)), np.ones(3))).all()
    B = rng.normal(size=(7, 3))
    assert np.allclose(K.mm(A, B), A @ B) and np.allclose(K.mv(A, b), A @ b)


# --- models ---------------------------------------------------------------------------------


def _perturbed_state(code, rng):
    model, x0 = L.heavy_top_model(code)
    q, v = np.split(x0, 2)
    return q + 0.3 * rng.normal(size=q.size), v + rng.normal(size=v.size), model.P


@pytest.mark.parametrize("code", range(6))
def test_constraint_jacobian_by_differences_off_the_manifold(rng, code):
    """B e_k = d/ds Φ(UAC(q, s e_k)) at s = 0, also where Φ(q) ≠ 0."""
    q, _, P = _perturbed_state(code, rng)
    B = L.constraint_jacobian(code, q, P)
    n = q.size
    d = 1e-6
    fd = np.column_stack(
        [
            (
                L.constraint(code, L.uac(code, q, d * e), P)
                - L.constraint(code, L.uac(code, q, -d * e), P)
            )
            / (2 * d)
            for e in np.eye(n)
        ]
    )
    assert B.shape == (L.n_constraints(code, np.zeros(16)), n)
    assert np.abs(fd - B).max(initial=0.0) < 1e-8


@pytest.mark.parametrize("classical", [L.TOP_RXYZ, L.TOP_EP, L.SPH_RXYZ, L.SPH_EP])
def test_formulation_2_gives_the_euler_equations(rng, classical):
    """ω̇ = Ĝ ρ̈ + Ġ ρ̇ of formulation 2 equals ω̇ of the Lie group model at the same state."""
    P = L.heavy_top_model(L.TOP_RV)[0].P
    n = L.n_coordinates(classical, np.zeros(16))
    l = 4 if L.FORMULATION[classical] == "EP" else 3
    rho = rng.normal(size=l)
    if l == 4:
        rho /= np.linalg.norm(rho)
    rhod = rng.normal(size=l)
    if l == 4:
        rhod -= (rhod @ rho) * rho
    q = np.concatenate([np.zeros(n - l), rho])
    v = np.concatenate([np.zeros(n - l), rhod])
    lie = L.TOP_RV if classical <= L.TOP_EP else L.SPH_RV
    R = L.rotation(classical, q)
    w = L.angular_velocity(classical, q, v)
    q_lie = np.concatenate([np.zeros(n - l), rot.log_so3(R)])
    v_lie = np.concatenate([np.zeros(n - l), w])
    wd_lie = np.linalg.solve(L.mass_matrix(lie, q_lie, P), L.force(lie, q_lie, v_lie, 0.0, P))[-3:]
    M = L.mass_matrix(classical, q, P)
    f = L.force(classical, q, v, 0.0, P)
    if l == 4:  # the EP mass matrix is singular: add the second derivative of pᵀp = 1
        A = np.block([[M[-4:, -4:], 2 * rho[:, None]], [2 * rho[None, :], np.zeros((1, 1))]])
        rhodd = np.linalg.solve(A, np.concatenate([f[-4:], [-2 * rhod @ rhod]]))[:4]
        Gd = K.g_ep(rhod)
    else:
        rhodd = np.linalg.solve(M[-3:, -3:], f[-3:])
        Gd = K.gdot_rxyz(rho, rhod)
    wd = L.kinematic_matrix(classical, q) @ rhodd + Gd @ rhod
    assert np.allclose(wd, wd_lie, rtol=1e-10, atol=1e-9)


def test_parameter_validation():
    with pytest.raises(ValueError, match="mass"):
        L.HeavyTop(mass=-1.0)
    with pytest.raises(ValueError, match="inertia"):
        L.HeavyTop(inertia=[1.0, -1.0, 1.0])
    P = L.heavy_top_model(L.TOP_RV)[0].P
    with pytest.raises(ValueError, match="code"):
        L.CompiledModel(13, P)
    with pytest.raises(ValueError, match="header"):
        L.CompiledModel(L.MB_RV, P)
    with pytest.raises(ValueError, match="P"):
        L.CompiledModel(L.CHAIN, P)
    with pytest.raises(ValueError, match="rho_inf"):
        ga.GeneralizedAlpha(1.5)
    m, x0 = L.heavy_top_model(0)
    with pytest.raises(ValueError, match="h"):
        rk.integrate_explicit(m, x0, RK44, -1e-3, 1.0)
    with pytest.raises(ValueError, match="embedded"):
        rk.integrate_explicit(m, x0, RK44, 1e-3, 1.0, adaptive=True)


# --- explicit RK / RKMK ---------------------------------------------------------------------

T_SHORT = 0.05


def _com_error(model, res, ref):
    return np.linalg.norm(L.com_state(model.code, res.q, res.v, model.P)[:3] - ref)


def test_rkmk_orders_and_orthogonality():
    m, x0 = L.heavy_top_model(L.TOP_RV)
    ref = rk.integrate_explicit(m, x0, RK67, 2.5e-4, T_SHORT)
    x_ref = L.com_state(m.code, ref.q, ref.v, m.P)[:3]
    for tab, p, hs in [(RK44, 4, [5e-3, 2.5e-3, 1.25e-3]), (RK67, 6, [1e-2, 5e-3, 2.5e-3])]:
        errs = [_com_error(m, rk.integrate_explicit(m, x0, tab, h, T_SHORT), x_ref) for h in hs]
        slope = np.polyfit(np.log(hs), np.log(errs), 1)[0]
        assert abs(slope - p) < 0.3, (tab.name, slope, errs)
    R = K.rotation_rv(ref.q)
    assert np.abs(R.T @ R - np.eye(3)).max() < 1e-13


def _reference_rk(model, x0, tab, h, n_steps):
    """RK (classical) / RKMK (Lie group) steps of Algorithms 2 and 3 in NumPy from the evaluations
    by model code (mass matrix, force, update map): an implementation independent of the kernels."""
    code, P, n = model.code, model.P, model.n
    lie = model.formulation == "RV"
    q, v = x0[:n].copy(), x0[n:].copy()
    Minv = np.linalg.inv(L.mass_matrix(code, q, P))
    for step in range(n_steps):
        kq, kv = [], []
        for i in range(tab.stages):
            dq = sum(((h * tab.A[i, j]) * kq[j] for j in range(i)), np.zeros(n))
            vi = v + sum(((h * tab.A[i, j]) * kv[j] for j in range(i)), np.zeros(n))
            qi = L.uac(code, q, dq)
            kq.append(np.concatenate([vi[:-3], K.texp_inv_so3(dq[-3:]) @ vi[-3:]]) if lie else vi)
            f = L.force(code, qi, vi, step * h + tab.c[i] * h, P)
            kv.append(Minv @ f if lie else np.linalg.solve(L.mass_matrix(code, qi, P), f))
        q = L.uac(code, q, sum((h * tab.b[i]) * kq[i] for i in range(tab.stages)))
        v = v + sum((h * tab.b[i]) * kv[i] for i in range(tab.stages))
    return q, v


def test_compiled_stages_agree_with_an_independent_implementation():
    """The RK/RKMK kernel on the compiled bundles against NumPy steps from the evaluations by model
    code, on the heavy top and the rotor, Lie group and classical."""
    for model, x0 in (L.heavy_top_model(L.TOP_RV), L.heavy_top_model(L.TOP_RXYZ), L.rotor_model(L.ROT_RV),
                      L.rotor_model(L.ROT_RXYZ)):
        for tab in (RK44, RK67):
            res = rk.integrate_explicit(model, x0, tab, 2e-4, 0.002)
            q, v = _reference_rk(model, x0, tab, 2e-4, 10)
            assert res.ok and res.n_steps == 10
            assert np.abs(res.q - q).max() < 1e-12 * max(1.0, np.abs(q).max()), (model.code, tab.name)
            assert np.abs(res.v - v).max() < 1e-12 * max(1.0, np.abs(v).max()), (model.code, tab.name)
    # the Lie group path never solves with a configuration-dependent mass matrix
    assert rk.integrate_explicit(*L.heavy_top_model(L.TOP_RV), RK44, 1e-3, 0.02).work.factorisations == 0
    assert rk.integrate_explicit(*L.heavy_top_model(L.TOP_RXYZ), RK44, 2e-4, 0.002).work.factorisations == 40


@pytest.mark.parametrize("build, codes, hs, T", [
    (L.heavy_top_model, (L.TOP_RV, L.TOP_RXYZ), (1e-3, 5e-4, 2.5e-4), 0.008),
    (L.rotor_model, (L.ROT_RV, L.ROT_RXYZ), (2e-3, 1e-3, 5e-4), 0.04),
], ids=["heavy top", "rotor"])
def test_rk44_converges_at_order_4_against_solve_ivp(build, codes, hs, T):
    """RK44 (RV: RKMK) on the compiled heavy top and rotor against a DOP853 reference at
    r_tol = 1e-13 of the classical equations (32) from the evaluations by model code. The top's
    horizon ends before its Tait–Bryan angle φ₁ reaches the singularity π/2 (ω ≈ 150 rad/s)."""
    from scipy.integrate import solve_ivp

    classical, x0 = build(codes[1])
    n, P = classical.n, classical.P

    def rhs(t, x):
        q, v = x[:n], x[n:]
        return np.concatenate([v, np.linalg.solve(L.mass_matrix(classical.code, q, P),
                                                  L.force(classical.code, q, v, t, P))])

    ref = solve_ivp(rhs, (0.0, T), x0, method="DOP853", rtol=1e-13, atol=1e-13).y[:, -1]
    x_ref = L.com_state(classical.code, ref[:n], ref[n:], P)[:3]
    for code in codes:
        model, x0 = build(code)  # R₀ = I: the same initial state in both formulations
        errs = [np.linalg.norm(L.com_state(code, r.q, r.v, P)[:3] - x_ref)
                for r in (rk.integrate_explicit(model, x0, RK44, h, T) for h in hs)]
        slope = np.polyfit(np.log(hs), np.log(errs), 1)[0]
        assert abs(slope - 4) < 0.3, (code, slope, errs)


def heavy_top_samples() -> np.ndarray:
    """Short RK44 and generalized-α runs of the heavy top, flattened."""
    out = []
    for c in (0, 1):
        m, x0 = L.heavy_top_model(c)
        r = rk.integrate_explicit(m, x0, RK44, 1e-3, 0.005)
        out.append(np.concatenate([r.q, r.v]))
    m, x0 = L.heavy_top_model(5)
    r = ga.integrate_genalpha(m, x0, 1e-3, 0.005)
    out.append(np.concatenate([r.q, r.v]))
    return np.concatenate(out)


@pytest.mark.slow
def test_compiled_and_plain_python_agree():
    """The same source run as plain Python (NUMBA_DISABLE_JIT=1) gives the compiled numbers."""
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    script = "from tests.test_lie_group import heavy_top_samples; print(repr(heavy_top_samples().tolist()))"
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    result = subprocess.run([sys.executable, "-c", script], env=env, cwd=root, capture_output=True, text=True,
                            check=True)
    plain = np.array(eval(result.stdout))
    assert np.allclose(plain, heavy_top_samples(), rtol=1e-11, atol=1e-11)


def test_step_size_control_meets_the_tolerance():
    m, x0 = L.heavy_top_model(L.TOP_RV)
    ref = rk.integrate_explicit(m, x0, RK67, 2.5e-4, T_SHORT)
    x_ref = L.com_state(m.code, ref.q, ref.v, m.P)[:3]
    errs = []
    for rtol in (1e-6, 1e-9):
        r = rk.integrate_explicit(m, x0, DOPRI5, 1e-2, T_SHORT, rtol=rtol, atol=1e-2 * rtol)
        assert r.ok and abs(r.t_final - T_SHORT) < 1e-14 and r.work.rejected_steps >= 0
        errs.append(_com_error(m, r, x_ref))
    assert errs[1] < 1e-2 * errs[0] and errs[1] < 1e-7
    rtol, atol = rk.paper_tolerances(DOPRI5, 1e-4, 1.0)
    assert rtol == 1e-12 and atol == 1e-14


# --- generalized-α --------------------------------------------------------------------------


def test_generalized_alpha_coefficients():
    m = ga.GeneralizedAlpha(0.9)
    assert np.allclose(
        [m.alpha_m, m.alpha_f, m.gamma, m.beta],
        [0.4210526, 0.4736842, 0.5526316, 0.2770083],
        atol=5e-8,
    )


def test_lie_iteration_matrix_is_the_derivative_of_the_residual(rng):
    """Free top: S/(βh²) = ∂r/∂Δq exactly when T_exp is kept (eq. 40), not when it is dropped."""
    m, x0 = L.heavy_top_model(L.TOP_RV)
    method = ga.GeneralizedAlpha()
    h = 2e-3
    bp, gp = method.coefficients(h)
    q_n = np.array([0.3, -0.2, 0.5])
    v0, vd0 = x0[3:], rng.normal(size=3)
    dq0 = h * v0 * 2.0  # a large increment (0.6 rad) makes T_exp matter

    def r(dq):
        v = v0 + gp * (dq - dq0)
        vd = vd0 + bp * (dq - dq0)
        return ga.residual_genalpha(m, L.uac(0, q_n, dq), v, vd, np.zeros(0))[0]

    d = 1e-6
    fd = np.column_stack([(r(dq0 + d * e) - r(dq0 - d * e)) / (2 * d) for e in np.eye(3)])
    q1 = L.uac(0, q_n, dq0)
    S_t = ga.iteration_matrix(m, q1, v0, dq0, h, use_texp=True) / (method.beta * h * h)
    S_i = ga.iteration_matrix(m, q1, v0, dq0, h, use_texp=False) / (method.beta * h * h)
    err_t, err_i = np.abs(S_t - fd).max(), np.abs(S_i - fd).max()
    print(err_t, err_i, np.abs(fd).max())
    assert err_t < 1e-9 * np.abs(fd).max() and err_t < 1e-3 * err_i


def test_generalized_alpha_second_order_and_constraints():
    t_end = 0.02
    m0, x00 = L.heavy_top_model(L.TOP_RV)
    ref = rk.integrate_explicit(m0, x00, RK67, 1e-4, t_end)
    x_ref = L.com_state(0, ref.q, ref.v, m0.P)[:3]
    for code in (L.TOP_RV, L.SPH_RV, L.SPH_EP):
        m, x0 = L.heavy_top_model(code)
        hs = [1e-3, 5e-4, 2.5e-4]
        errs = []
        for h in hs:
            r = ga.integrate_genalpha(m, x0, h, t_end)
            assert r.ok and r.max_iterations <= 6
            errs.append(_com_error(m, r, x_ref))
        slope = np.polyfit(np.log(hs), np.log(errs), 1)[0]
        assert abs(slope - 2) < 0.2, (code, slope)
        assert np.abs(L.constraint(code, r.q, m.P)).max(initial=0.0) < 1e-10
    # modified Newton: same solution, more iterations, fewer matrices
    m, x0 = L.heavy_top_model(L.SPH_RV)
    full = ga.integrate_genalpha(m, x0, 5e-4, t_end)
    mod = ga.integrate_genalpha(m, x0, 5e-4, t_end, newton=ga.NewtonSettings(modified=True))
    assert np.abs(full.q - mod.q).max() < 1e-8
    assert mod.iterations_per_step > full.iterations_per_step
    assert mod.work.jacobian_evaluations < full.work.jacobian_evaluations


def test_step_function_matches_the_run():
    m, x0 = L.heavy_top_model(L.SPH_EP)
    x = ga.initial_state(m, x0)
    for k in range(5):
        x, rep = ga.step_genalpha(m, x, 1e-3, k * 1e-3)
        assert (
            rep.converged
            and len(rep.residual_history) == rep.n_iter + 1
            and rep.residual_history[-1] <= 1
        )
    run = ga.integrate_genalpha(m, x0, 1e-3, 5e-3)
    assert np.abs(x[: m.n] - run.q).max() < 1e-14


# --- Exudyn cross-check ---------------------------------------------------------------------


def test_exudyn_rkmk_matches_ours():
    from mbslib import exudyn_models  # Exudyn is a test dependency: no skip
    m, x0 = L.heavy_top_model(L.TOP_RV)
    ours = rk.integrate_explicit(m, x0, RK44, 1e-4, 0.01)
    theirs = exudyn_models.run_heavy_top("RV", "RK44", 1e-4, 0.01, constrained=False)
    assert np.abs(L.com_state(0, ours.q, ours.v, m.P) - theirs.x[-1]).max() < 1e-11
    ga_run = exudyn_models.run_heavy_top("RV", "GeneralizedAlpha", 1e-4, 0.01, constrained=True)
    m, x0 = L.heavy_top_model(L.SPH_RV)
    mine = ga.integrate_genalpha(m, x0, 1e-4, 0.01)
    assert np.abs(mine.q[:3] - ga_run.x[-1, :3]).max() < 1e-8
    with pytest.raises(ValueError, match="node"):
        exudyn_models.run_heavy_top("quaternion")


def test_exudyn_solve_returns_a_trajectory_with_the_work_exudyn_reports():
    from mbslib import exudyn_models as ex

    run = ex.solve(ex.heavy_top_system("RV", constrained=True), "GeneralizedAlpha", 1e-3, 0.02)
    assert isinstance(run, Trajectory) and run.ok and run.h == 1e-3
    assert run.t.tolist() == [0.02] and run.t_final == 0.02 and run.x.shape == (1, 6)
    w = run.work
    assert w.steps == run.n_steps == 20 and w.newton_iterations >= w.steps
    assert run.iterations_per_step == w.newton_iterations / 20
    # Exudyn reports no residual, matrix or factorisation counts: 0, not reported
    assert (w.rejected_steps, w.rhs_evaluations, w.jacobian_evaluations, w.factorisations) == (0, 0, 0, 0)
    explicit = ex.solve(ex.heavy_top_system("RV", constrained=False), "RK44", 1e-3, 0.02)
    assert explicit.work == Work(steps=20)


@pytest.mark.parametrize("node", ["RV", "Rxyz", "EP"])
def test_exudyn_models_of_the_benchmark_match_ours(node):
    """The rotor and the Puma 560 (absolute and joint coordinates, step command) of
    ``benchmarks/bench_002.py`` compute what our models compute."""
    from mbslib import exudyn_models as ex
    from mbslib.systems.puma560 import Puma560

    code = {"RV": 0, "Rxyz": 1, "EP": 2}[node]
    m, x0 = L.rotor_model(L.ROT_RV + code)
    ours = ga.integrate_genalpha(m, x0, 1e-4, 0.01)
    theirs = ex.solve(ex.rotor_system(node), "GeneralizedAlpha", 1e-4, 0.01)
    assert np.abs(L.com_state(m.code, ours.q, ours.v, m.P) - theirs.x[-1]).max() < 1e-8
    robot = Puma560(phi_goal_deg=tuple(np.asarray(Puma560().phi_init_deg) + 10.0))
    m = L.CompiledModel(L.MB_RV + code, robot.system(profile=False).params())
    ours = ga.integrate_genalpha(m, robot.absolute_state(code), 1e-3, 0.05)
    theirs = ex.solve(ex.puma_system(node, robot, profile=False), "GeneralizedAlpha", 1e-3, 0.05)
    assert np.abs(ours.q[-3 - m.form[0]:-m.form[0]] - theirs.x[-1, :3]).max() < 1e-9  # link 6's centre of mass
    if node == "RV":
        joints = L.CompiledModel(L.CHAIN, robot.params(profile=False))
        chain = ga.integrate_genalpha(joints, robot.initial_state(), 1e-3, 0.05)
        tree = ex.solve(ex.puma_tree_system(robot), "GeneralizedAlpha", 1e-3, 0.05)
        assert np.abs(np.concatenate([chain.q, chain.v]) - tree.x[-1]).max() < 1e-9


# --- rotor surrogate ------------------------------------------------------------------------


def test_rotor_formulations_agree_and_precess(rng):
    """The three rotor models give the same accelerations at the same state; the surrogate
    precesses with a period of about 2.5 s (spec §3.2)."""
    P = L.rotor_model(L.ROT_RV)[0].P
    phi, phid = 0.3 * rng.normal(size=3), rng.normal(size=3)
    x, u = 0.01 * rng.normal(size=3), rng.normal(size=3)
    R = K.rotation_rxyz(phi)
    w = K.g_rxyz(phi) @ phid
    acc = {}
    q, v = np.concatenate([x, phi]), np.concatenate([u, phid])
    M, f = L.mass_matrix(L.ROT_RXYZ, q, P), L.force(L.ROT_RXYZ, q, v, 0.0, P)
    a = np.linalg.solve(M, f)
    acc["Rxyz"] = np.concatenate([a[:3], K.g_rxyz(phi) @ a[3:] + K.gdot_rxyz(phi, phid) @ phid])
    q, v = np.concatenate([x, rot.log_so3(R)]), np.concatenate([u, w])
    acc["RV"] = np.linalg.solve(L.mass_matrix(L.ROT_RV, q, P), L.force(L.ROT_RV, q, v, 0.0, P))
    assert np.allclose(acc["RV"], acc["Rxyz"], rtol=1e-10, atol=1e-8)
    assert L.n_constraints(L.ROT_EP, np.zeros(16)) == 1 and L.n_coordinates(L.ROT_EP, np.zeros(16)) == 7
    with pytest.raises(ValueError, match="rotor"):
        L.rotor_model(L.TOP_RV)
    with pytest.raises(ValueError, match="stiffness"):
        L.Rotor(stiffness=0.0)
    m, x0 = L.rotor_model(L.ROT_RV)
    res = rk.integrate_explicit(m, x0, RK44, 2e-4, 3.0, record_every=50)
    y, z = res.x[:, 1], res.x[:, 2]
    turns = np.unwrap(np.arctan2(z - z.mean(), y - y.mean()))
    period = 2 * np.pi * 3.0 / abs(turns[-1] - turns[0])
    assert 2.2 < period < 2.8


def test_exudyn_availability_is_reported_clearly(monkeypatch):
    from mbslib.exudyn_models import ExudynMissing, exudyn_available, run_heavy_top

    assert exudyn_available()[0]  # installed by `make test`
    monkeypatch.setitem(sys.modules, "exudyn", None)  # as if it were not installed
    ok, message = exudyn_available()
    assert not ok and "pip install exudyn" in message
    with pytest.raises(ExudynMissing, match="needs Exudyn"):
        run_heavy_top("RV", "RK44", 1e-4, 0.01, constrained=False)
