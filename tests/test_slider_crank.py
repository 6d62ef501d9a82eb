"""Tests of the spatial slider–crank of paper 002 (Sect. 4.3): RV, Rxyz and EP formulations."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from mbslib.exudyn_models import run_slider_crank
from mbslib.integrators.generalized_alpha import GeneralizedAlpha
from mbslib.systems import slider_crank as sc
from tests.fd import central_difference

FORMS = {"RV": sc.RV, "Rxyz": sc.RXYZ, "EP": sc.EP}
CRANK = sc.SliderCrank()
P = CRANK.params()


def _state(form, theta=0.7, seed=0, perturb=0.0):
    """A physical state at crank angle θ (positions and velocities from the minimal kinematics)."""
    x, R = CRANK.configuration(theta)
    dx, om = CRANK.velocity_map(theta)
    q, v = [], []

    for i in range(3):
        u, w = 4.0 * dx[i], 4.0 * om[i]
        if form == sc.RV:
            r, rd = Rotation.from_matrix(R[i]).as_rotvec(), w
        elif form == sc.RXYZ:
            r = sc.rxyz_from_matrix(R[i])
            rd = np.linalg.solve(sc.g_rxyz(r), w)
        else:
            xyzw = Rotation.from_matrix(R[i]).as_quat()
            r = np.array([xyzw[3], *xyzw[:3]])
            rd = 0.25 * sc.g_ep(r).T @ w
        q.append(np.concatenate([x[i], r]))
        v.append(np.concatenate([u, rd]))
    q, v = np.concatenate(q), np.concatenate(v)
    if perturb:
        rng = np.random.default_rng(seed)
        q = q + perturb * rng.normal(size=q.size)
        v = v + perturb * rng.normal(size=v.size)
    return q, v


# --- data and kinematics ---------------------------------------------------------------------


def test_initial_configuration_matches_the_benchmark_data():
    x, R = CRANK.configuration(0.0)
    assert np.allclose(x, [[0, 0.1, 0.16], [0.1, 0.05, 0.1], [0.2, 0, 0]], atol=1e-15)
    dx, om = CRANK.velocity_map(0.0)
    assert np.allclose(6 * dx, [[0, -0.24, 0], [0.12, -0.24, 0], [0.24, 0, 0]], atol=1e-12)
    assert np.allclose(6 * om[0], [6, 0, 0], atol=1e-12) and np.allclose(om[2], 0, atol=1e-12)
    for Ri in R:
        assert np.allclose(Ri.T @ Ri, np.eye(3), atol=1e-14) and np.isclose(np.linalg.det(Ri), 1)


@pytest.mark.parametrize("name", FORMS)
def test_initial_state_is_consistent(name):
    form = FORMS[name]
    x0 = CRANK.initial_state(form)
    n = sc.n_coordinates(form)
    q, v = x0[:n], x0[n:]
    assert np.max(np.abs(sc.constraint(form, q, P))) < 1e-14
    assert np.max(np.abs(sc.constraint_jacobian(form, q, P) @ v)) < 1e-11
    assert np.isclose(sc.energy(form, q, v, P), CRANK.energy(), rtol=1e-12)


@pytest.mark.parametrize("theta", [0.3, 2.0, 4.5])
def test_configuration_satisfies_every_joint(theta):
    for name, form in FORMS.items():
        q, v = _state(form, theta)
        assert np.max(np.abs(sc.constraint(form, q, P))) < 1e-13, name
        assert np.max(np.abs(sc.constraint_jacobian(form, q, P) @ v)) < 1e-10, name


def test_slider_stays_within_the_kinematic_bounds():
    th = np.linspace(0, 2 * np.pi, 721)
    s = np.array([CRANK.slider_position(a) for a in th])
    assert 0.1849 <= s.min() and s.max() <= 0.2902  # spec §4.4
    assert s.min() < 0.1850 and s.max() > 0.2901


def test_series_interpolants_match_direct_evaluation():
    for a in (0.1, 1.3, 4.0, 6.2):
        direct = [CRANK.generalized_mass(a), CRANK.potential(a)]
        assert np.allclose(CRANK.mass_and_potential(a), direct, rtol=1e-12, atol=1e-14)


# --- analytic Jacobians against finite differences --------------------------------------------


@pytest.mark.parametrize("name", FORMS)
def test_constraint_jacobian_against_finite_differences(name):
    form = FORMS[name]
    q, _ = _state(form, 1.1, perturb=0.05)  # off the constraint manifold (and off |p| = 1)
    B = sc.constraint_jacobian(form, q, P)
    fd = central_difference(lambda z: sc.constraint(form, sc.uac(form, q, z), P), np.zeros(q.size))
    assert np.allclose(B, fd, atol=1e-8)


@pytest.mark.parametrize("name", ["RV", "Rxyz", "EP"])
@pytest.mark.parametrize("use_texp", [False, True])
def test_iteration_matrix_against_finite_differences(name, use_texp):
    """With v̇ = 0 and λ = 0 the neglected terms vanish: the matrix is the exact Jacobian of
    ``[βh² r; Φ]`` with respect to the Newton increment (T_exp only when kept, RV)."""
    form = FORMS[name]
    q_n, v = _state(form, 2.3, perturb=0.02)
    n = q_n.size
    rng = np.random.default_rng(3)
    dq = 0.05 * rng.normal(size=n)
    h = 1e-3
    m = GeneralizedAlpha()
    beta_p, gamma_p = m.coefficients(h)
    q = sc.uac(form, q_n, dq)
    S = sc.iteration_matrix(form, P, q, v, dq, h, m.beta, beta_p, gamma_p, use_texp)

    def resid(x):
        r, phi = sc.residual(form, P, sc.uac(form, q_n, dq + x), v + gamma_p * x, beta_p * x,
                             np.zeros(sc.n_constraints(form)))
        return np.concatenate([m.beta * h * h * r, phi])

    fd = central_difference(resid, np.zeros(n), eps=1e-7)
    if name == "RV" and not use_texp:  # T_exp ≈ I: only the translational/rate blocks are exact
        assert np.allclose(S[:, :n], fd, atol=0.05 * np.max(np.abs(fd)))
        assert not np.allclose(S[:, :n], fd, atol=1e-6)
    else:
        assert np.allclose(S[:, :n], fd, atol=1e-6 * max(1.0, np.max(np.abs(fd))))
    assert np.allclose(S[:n, n:], sc.constraint_jacobian(form, sc.uac(form, q_n, dq), P).T)


def test_rxyz_force_satisfies_lagrange_equations():
    """``Ĥᵀĝ`` of formulation 2 is ``−(Ṁφ̇ − ½ ∂(φ̇ᵀMφ̇)/∂φ)`` for T = ½ φ̇ᵀM(φ)φ̇ (g = 0)."""
    Pg = P.copy()
    Pg[12:15] = 0.0
    q, v = _state(sc.RXYZ, 1.7, perturb=0.1)
    Mdot = central_difference(lambda s: sc.mass_matrix(sc.RXYZ, q + s * v, Pg), np.array(0.0))
    dT = central_difference(lambda x: 0.5 * v @ sc.mass_matrix(sc.RXYZ, x, Pg) @ v, q)
    assert np.allclose(sc.force(sc.RXYZ, q, v, Pg), -(Mdot @ v - dT), atol=1e-8)


def test_formulations_and_minimal_coordinates_give_the_same_acceleration():
    """Consistent accelerations (mass matrix, forces, B and Ḃv) agree across formulations and
    with the minimal-coordinate equation ``M θ̈ + ½ M' θ̇² + V' = 0``."""
    th0, w0 = 0.0, CRANK.omega0
    dM, dV = central_difference(lambda a: CRANK.mass_and_potential(float(a)), np.array(th0),
                                eps=1e-5)
    M0, _ = CRANK.mass_and_potential(th0)
    thdd = -(dV + 0.5 * dM * w0**2) / M0
    acc = {}
    for name, form in FORMS.items():
        x0 = CRANK.initial_state(form)
        n = sc.n_coordinates(form)
        q, v = x0[:n], x0[n:]
        vd, _ = sc.initial_acceleration(form, P, q, v)
        nb = n // 3
        out = []
        for i in range(3):
            rot = slice(i * nb + 3, (i + 1) * nb)
            r, rd, rdd = q[rot], v[rot], vd[rot]
            if form == sc.RV:
                wd = rdd
            elif form == sc.RXYZ:
                wd = sc.g_rxyz(r) @ rdd + sc.gdot_rxyz(r, rd) @ rd
            else:
                wd = sc.g_ep(r) @ rdd
            out.append(np.concatenate([vd[i * nb:i * nb + 3], wd]))
        acc[name] = np.concatenate(out)
    assert np.allclose(acc["RV"], acc["Rxyz"], atol=1e-8)
    assert np.allclose(acc["RV"], acc["EP"], atol=1e-8)
    assert np.isclose(acc["RV"][3], thdd, rtol=1e-6)  # crank ω̇_x = θ̈


# --- simulations -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", FORMS)
def test_generalized_alpha_converges_to_the_minimal_coordinate_solution(name):
    t_end = 0.4
    _, s_ref = CRANK.reference([t_end])
    err = []
    for h in (2e-3, 1e-3):
        res = sc.simulate(name, h, t_end, record_every=10)
        assert res.ok
        assert np.max(res.record[:, 3]) < 1e-9  # index 3: no drift of the joint equations
        err.append(abs(res.s - s_ref[0]))
    assert err[1] < 2e-5
    assert 3.0 < err[0] / err[1] < 5.0  # second order


def test_energy_loss_is_second_order_and_crank_turns_forward():
    """No friction: the energy changes only by the numerical dissipation of generalized-α,
    which is O(h²) for the (slow) physical motion."""
    loss = []
    for h in (1e-3, 5e-4):
        res = sc.simulate("RV", h, 1.0, record_every=1)
        e = res.record[:, 2]
        loss.append(np.max(np.abs(e - e[0])) / abs(e[0]))
    assert loss[0] < 1e-3 and 3.0 < loss[0] / loss[1] < 5.0
    theta = np.unwrap(res.record[:, 1])
    assert np.all(np.diff(theta) > 0)
    th_ref, _ = CRANK.reference([1.0])
    assert abs(theta[-1] - th_ref[0]) < 1e-3


def test_bad_arguments():
    with pytest.raises(ValueError):
        sc.simulate("Euler", 1e-3, 0.1)
    with pytest.raises(ValueError):
        sc.simulate("RV", 3e-3, 0.1)
    with pytest.raises(ValueError):
        sc.SliderCrank(rod_length=-1.0)


@pytest.mark.parametrize("name", FORMS)
def test_agrees_with_exudyn(name):
    """The same model and method in the authors' code (Exudyn, Brüls–Cardona variant)."""
    s_exu, _ = run_slider_crank(name, 1e-3, 0.3)  # Exudyn is a test dependency: no skip
    assert abs(sc.simulate(name, 1e-3, 0.3).s - s_exu) < 1e-7
