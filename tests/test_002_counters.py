"""Work counters of the RK/RKMK and generalized-α drivers (chapter 002 asserts cost claims on them),
the rejection of constrained models by the explicit driver, the LU kernels and the EP Jacobian
variants."""

import numpy as np
import pytest

from mbslib import kernels as K
from mbslib.integrators import generalized_alpha as ga
from mbslib.integrators import runge_kutta as rk
from mbslib.integrators.tableaux import DOPRI5, ODE23, RK44, RK67
from mbslib.systems import lie_group_mbs as L
from mbslib.systems import multibody as mb
from mbslib.trajectory import Work

# --- explicit: one force evaluation per stage, one mass-matrix solve per classical stage ------


@pytest.mark.parametrize("tab", [RK44, RK67])
def test_fixed_step_counts_are_stages_times_steps(tab):
    n_steps = 7
    for code, solves_per_stage in ((L.TOP_RV, 0), (L.TOP_RXYZ, 1)):
        res = rk.integrate_explicit(*L.heavy_top_model(code), tab, 1e-4, n_steps * 1e-4)
        assert res.n_steps == n_steps and res.work.rejected_steps == 0
        assert res.work.rhs_evaluations == tab.stages * n_steps
        assert res.work.factorisations == solves_per_stage * tab.stages * n_steps  # mass-matrix solves


def test_rotor_counts():
    for code, solves_per_stage in ((L.ROT_RV, 0), (L.ROT_RXYZ, 1)):
        res = rk.integrate_explicit(*L.rotor_model(code), RK44, 1e-4, 5e-4)
        assert res.work.rhs_evaluations == 20 and res.work.factorisations == 20 * solves_per_stage


@pytest.mark.parametrize("tab", [DOPRI5, ODE23])
def test_adaptive_counts_include_rejected_steps(tab):
    """A large first step at a tight tolerance is rejected: every attempt costs all its stages."""
    for code in (L.TOP_RV, L.TOP_RXYZ):
        res = rk.integrate_explicit(*L.heavy_top_model(code), tab, 1e-2, 0.02, rtol=1e-10, atol=1e-12)
        w = res.work
        assert res.ok and w.rejected_steps > 0
        assert w.rhs_evaluations == tab.stages * (w.steps + w.rejected_steps)
        assert w.factorisations == (code == L.TOP_RXYZ) * w.rhs_evaluations


def test_explicit_driver_rejects_constrained_models():
    for code in (L.SPH_RV, L.SPH_EP, L.TOP_EP, L.ROT_EP):
        model, x0 = L.heavy_top_model(code) if code != L.ROT_EP else L.rotor_model(code)
        with pytest.raises(ValueError, match="constraint"):
            rk.integrate_explicit(model, x0, RK44, 1e-3, 0.01)
    # a two-body chain hanging from spherical joints (the case of the review: it used to run "ok")
    chain = mb.System()
    b0, b1 = chain.body(1.0, (0.01, 0.01, 0.002)), chain.body(1.0, (0.01, 0.01, 0.002))
    chain.spherical(mb.GROUND, np.zeros(3), b0, [0.0, 0.0, 0.5])
    chain.spherical(b0, [0.0, 0.0, -0.5], b1, [0.0, 0.0, 0.5])
    model = L.CompiledModel(L.MB_RV, chain.params())
    x0 = mb.body_coordinates(mb.RV, [[0.0, 0.0, -0.5], [0.0, 0.0, -1.5]], [np.eye(3)] * 2,
                             [[0.0, 0.0, 0.0], [0.3, 0.0, 0.0]], [np.zeros(3)] * 2)
    with pytest.raises(ValueError, match="6 constraint"):
        rk.integrate_explicit(model, x0, RK44, 1e-3, 0.5)


# --- generalized-α: iterations, residuals, matrices, factorisations --------------------------


def test_counts_of_a_step_that_cannot_converge():
    """max_iter = 1 and an unreachable tolerance: one update, two residuals, one matrix, one LU."""
    model, x0 = L.heavy_top_model(L.SPH_RV)
    newton = ga.NewtonSettings(max_iter=1, rtol=1e-30, atol=1e-30)
    res = ga.integrate_genalpha(model, x0, 1e-3, 5e-3, newton=newton)
    assert res.failed_step == 0
    w = res.work
    assert w == Work(steps=0, newton_iterations=1, rhs_evaluations=2, jacobian_evaluations=1, factorisations=1)


@pytest.mark.parametrize("code", [L.TOP_RV, L.SPH_RV, L.SPH_RXYZ, L.SPH_EP])
def test_full_newton_counts(code):
    """Full Newton: a matrix and an LU per iteration; a residual per iterate (predictor included)."""
    model, x0 = L.heavy_top_model(code)
    res = ga.integrate_genalpha(model, x0, 1e-4, 2e-3)
    w = res.work
    assert res.ok and w.steps == 20 and w.newton_iterations >= w.steps
    assert res.iterations_per_step == w.newton_iterations / w.steps
    assert w.jacobian_evaluations == w.factorisations == w.newton_iterations
    assert w.rhs_evaluations == w.newton_iterations + w.steps


def test_modified_newton_reuses_the_factorisation():
    model, x0 = L.heavy_top_model(L.SPH_RV)
    res = ga.integrate_genalpha(model, x0, 5e-4, 0.02, newton=ga.NewtonSettings(modified=True))
    w = res.work
    assert res.ok and w.rhs_evaluations == w.newton_iterations + w.steps
    assert w.factorisations == w.jacobian_evaluations and 1 <= w.jacobian_evaluations < w.steps < w.newton_iterations
    # max_modified = 1: the first iteration of a step reuses the last matrix, every later one makes
    # a new one, and the first step starts without a matrix
    every = ga.integrate_genalpha(model, x0, 5e-4, 0.02, newton=ga.NewtonSettings(modified=True, max_modified=1))
    assert every.ok and every.max_iterations >= 2
    w = every.work
    assert w.jacobian_evaluations == w.factorisations == w.newton_iterations - w.steps + 1
    with pytest.raises(ValueError, match="contraction_check_from"):
        ga.NewtonSettings(contraction_check_from=0)


def test_lu_kernels_match_numpy_and_detect_singular_matrices():
    rng = np.random.default_rng(3)
    for n in (1, 4, 11):
        A, b = rng.normal(size=(n, n)), rng.normal(size=n)
        LU, piv = A.copy(), np.zeros(n, dtype=np.int64)
        assert K.lu_factor(LU, piv)
        x = b.copy()
        K.lu_solve_in_place(LU, piv, x)
        assert np.allclose(x, np.linalg.solve(A, b), rtol=1e-12, atol=1e-12)
        assert np.allclose(x, K.solve(A, b), rtol=1e-12, atol=1e-12)
    S = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert not K.lu_factor(S, np.zeros(2, dtype=np.int64))


# --- the EP spherical-joint Jacobian: exact and Exudyn's tangent form ------------------------


def test_ep_tangent_jacobian_differs_only_radially():
    exact, x0 = L.heavy_top_model(L.SPH_EP)
    tangent, _ = L.heavy_top_model(L.SPH_EP, ep_jacobian="tangent")
    rng = np.random.default_rng(5)
    p = rng.normal(size=4)
    p /= np.linalg.norm(p)
    q = np.concatenate([rng.normal(size=3), 1.01 * p])  # off the unit sphere, as in a Newton step
    Be = L.constraint_jacobian(L.SPH_EP, q, exact.P)
    Bt = L.constraint_jacobian(L.SPH_EP, q, tangent.P)
    X = exact.P[10:13]
    R = K.rotation_ep(q[3:])
    # R X̃ Ĝ: the tangent form; its radial column product vanishes (Ĝ p = 0)
    assert np.allclose(Bt[:3, 3:], R @ K.skew(X) @ K.g_ep(q[3:]), atol=1e-14)
    assert np.allclose(Bt[:3, 3:] @ q[3:], 0.0, atol=1e-13)
    # the exact block is −∂(R X)/∂p (finite differences) and has the radial part −2 R X
    eps = 1e-7
    fd = np.column_stack([-(K.rotation_ep(q[3:] + eps * e) @ X - K.rotation_ep(q[3:] - eps * e) @ X) / (2 * eps)
                          for e in np.eye(4)])
    assert np.allclose(Be[:3, 3:], fd, atol=1e-7)
    assert np.allclose(Be[:3, 3:] @ q[3:], -2.0 * R @ X, atol=1e-12)
    # on the unit sphere both agree on tangent directions (pᵀδp = 0)
    q1 = np.concatenate([q[:3], p])
    d = rng.normal(size=4)
    d -= (d @ p) * p
    assert np.allclose(L.constraint_jacobian(L.SPH_EP, q1, exact.P)[:3, 3:] @ d,
                       L.constraint_jacobian(L.SPH_EP, q1, tangent.P)[:3, 3:] @ d, atol=1e-12)
    assert np.array_equal(Be[3], Bt[3]) and np.array_equal(Be[:3, :3], Bt[:3, :3])
    with pytest.raises(ValueError, match="ep_jacobian"):
        L.heavy_top_model(L.SPH_EP, ep_jacobian="approximate")
    with pytest.raises(ValueError, match="SPH_EP"):
        L.heavy_top_model(L.SPH_RV, ep_jacobian="tangent")
    with pytest.raises(ValueError, match="P\\[16\\]"):
        L.CompiledModel(L.SPH_EP, np.concatenate([exact.P, [0.5]]))
