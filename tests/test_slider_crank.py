"""Tests of the spatial slider–crank of paper 002 (Sect. 4.3): RV, Rxyz and EP formulations.

The model is the generic multibody assembly of :meth:`SliderCrank.system` (kernels of
:mod:`mbslib.systems.multibody`, model codes ``MB_RV + form``), integrated by the generic
generalized-α of :mod:`mbslib.integrators.generalized_alpha`.
"""

from dataclasses import replace

import numpy as np
import pytest

from mbslib import diagnostics
from mbslib.exudyn_models import run_slider_crank
from mbslib.formulations import lie_group as absolute
from mbslib.integrators import generalized_alpha as ga
from mbslib.integrators.generalized_alpha import GeneralizedAlpha, NewtonSettings
from mbslib.kernels import g_ep, g_rxyz, gdot_rxyz
from mbslib.studies import slider_crank as scs
from mbslib.systems import lie_group_mbs as lg
from mbslib.systems import multibody as mb
from mbslib.systems import slider_crank as sc
from tests.fd import central_difference

FORMS = {"RV": sc.RV, "Rxyz": sc.RXYZ, "EP": sc.EP}
CRANK = sc.SliderCrank()
EX, EY = np.eye(3)[:2]
P = CRANK.system().params()


def _model(form, params=P):
    return lg.CompiledModel(lg.MB_RV + form, params)


def _split(form, x):
    n = int(mb.n_coordinates(form, P))
    return x[:n].copy(), x[n:].copy()


def _state(form, theta=0.7, seed=0, perturb=0.0):
    """A physical state at crank angle θ (positions and velocities from the minimal kinematics)."""
    x, R = CRANK.configuration(theta)
    dx, om = CRANK.velocity_map(theta)
    q, v = _split(form, mb.body_coordinates(form, x, R, 4.0 * dx, 4.0 * om))
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


def test_system_has_the_bodies_and_joint_rows_of_the_table():
    S = CRANK.system()
    assert len(S.bodies) == 3 and len(S.rows) == sc.N_JOINT and not S.springs
    assert np.allclose(np.array(S.bodies)[:, 0], CRANK.masses())
    assert np.allclose(np.array(S.bodies)[:, 1:], CRANK.inertias())
    assert np.allclose(S.gravity, [0, 0, -CRANK.gravity])
    for form in FORMS.values():
        assert mb.n_coordinates(form, P) == (21 if form == sc.EP else 18)
        assert mb.n_constraints(form, P) == sc.N_JOINT + (3 if form == sc.EP else 0)


@pytest.mark.parametrize("name", FORMS)
def test_joint_rows_are_the_equations_of_the_module_table(name):
    """Each row of the System against the closed form of the module docstring, at a random
    (non-physical) state."""
    form = FORMS[name]
    q, _ = _state(form, 1.1, perturb=0.1)
    x = [mb.body_position(form, q, i) for i in range(3)]
    R = [mb.body_rotation(form, q, i) for i in range(3)]
    _, R0 = CRANK.configuration(0.0)
    Lc, Lr = CRANK.crank_length, CRANK.rod_length
    a1, b1 = np.array([0, 0, -Lc / 2]), np.array([0, 0, Lc / 2])
    b2, c2, u2 = np.array([-Lr / 2, 0, 0]), np.array([Lr / 2, 0, 0]), R0[1].T @ [1.0, 0, 0]
    expected = np.concatenate([
        x[0] + R[0] @ a1 - CRANK.pivot, [R[0][2, 0], -R[0][1, 0]],
        x[0] + R[0] @ b1 - x[1] - R[1] @ b2, x[1] + R[1] @ c2 - x[2], [(R[2] @ EY) @ R[1] @ u2],
        [x[2][2], -x[2][1]], [R[2][1, 2], R[2][2, 0], R[2][0, 1]],
    ])
    assert np.allclose(mb.constraint(form, q, P)[:sc.N_JOINT], expected, atol=1e-15)


def _paper_rows(form, q):
    """The joint equations as the paper's model writes them (Exudyn's generic joints, the
    universal cross and the prismatic joint in the global frame: the slider never rotates)."""
    x = [mb.body_position(form, q, i) for i in range(3)]
    R = [mb.body_rotation(form, q, i) for i in range(3)]
    _, R0 = CRANK.configuration(0.0)
    Lc, Lr = CRANK.crank_length, CRANK.rod_length
    return np.concatenate([
        x[0] + R[0] @ [0, 0, -Lc / 2] - CRANK.pivot, [R[0][1, 0], R[0][2, 0]],
        x[0] + R[0] @ [0, 0, Lc / 2] - x[1] - R[1] @ [-Lr / 2, 0, 0], x[1] + R[1] @ [Lr / 2, 0, 0] - x[2],
        [(R[1] @ R0[1].T @ EX)[1]], x[2][1:], [R[2][1, 2], R[2][2, 0], R[2][0, 1]],
    ])


@pytest.mark.parametrize("name", FORMS)
def test_system_description_and_paper_equations_are_one_mechanism(name):
    """The system is the description in absolute coordinates: at random states the description's
    energies (:mod:`mbslib.model`, from the body states alone) are the system's; on poses
    projected onto the system's manifold (Φ = 0, velocities onto B v = 0) the description's own
    joint residuals and rates and the paper's joint equations vanish."""
    form = FORMS[name]
    description = CRANK.description()
    for k, theta in enumerate((0.4, 2.5, 5.0)):
        q, v = _state(form, theta, seed=k, perturb=0.05)
        states = absolute.body_states(description, name, 0.0, q, v)
        assert np.isclose(diagnostics.total_energy(description, states)[0], mb.energy(form, q, v, P), rtol=1e-13)
        for _ in range(12):  # Gauss–Newton onto Φ = 0, minimal-norm steps
            B = mb.constraint_jacobian(form, q, P)
            q = mb.uac(form, q, -np.linalg.lstsq(B, mb.constraint(form, q, P), rcond=None)[0])
        B = mb.constraint_jacobian(form, q, P)
        v = v - np.linalg.lstsq(B, B @ v, rcond=None)[0]
        states = absolute.body_states(description, name, 0.0, q, v)
        assert np.max(np.abs(mb.constraint(form, q, P))) < 1e-14
        assert np.max(np.abs(diagnostics.constraint_residuals(description, states))) < 1e-14
        assert np.max(np.abs(diagnostics.constraint_rates(description, states))) < 1e-12
        assert np.max(np.abs(_paper_rows(form, q))) < 1e-14


@pytest.mark.parametrize("name", FORMS)
def test_initial_state_is_consistent(name):
    form = FORMS[name]
    q, v = _split(form, CRANK.initial_state(form))
    assert np.array_equal(CRANK.initial_state(name), CRANK.initial_state(form))
    x, R = CRANK.configuration(0.0)
    dx, om = CRANK.velocity_map(0.0)
    assert np.array_equal(CRANK.initial_state(form), mb.body_coordinates(form, x, R, CRANK.omega0 * dx,
                                                                            CRANK.omega0 * om))
    assert np.max(np.abs(mb.constraint(form, q, P))) < 1e-14
    assert np.max(np.abs(mb.constraint_jacobian(form, q, P) @ v)) < 1e-11
    assert np.isclose(mb.energy(form, q, v, P), CRANK.energy(), rtol=1e-12)
    out = sc.outputs(form, q, v, P)
    assert np.allclose(out, [CRANK.slider_position(0.0), 0.0, CRANK.energy(), 0.0], atol=1e-14)


@pytest.mark.parametrize("theta", [0.3, 2.0, 4.5])
def test_configuration_satisfies_every_joint(theta):
    for name, form in FORMS.items():
        q, v = _state(form, theta)
        assert np.max(np.abs(mb.constraint(form, q, P))) < 1e-13, name
        assert np.max(np.abs(mb.constraint_jacobian(form, q, P) @ v)) < 1e-10, name
        s, th, _, phi = sc.outputs(form, q, v, P)
        assert abs(s - CRANK.slider_position(theta)) < 1e-14 and phi < 1e-13, name
        assert abs(np.angle(np.exp(1j * (th - theta)))) < 1e-13, name


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
    B = mb.constraint_jacobian(form, q, P)
    fd = central_difference(lambda z: mb.constraint(form, mb.uac(form, q, z), P), np.zeros(q.size))
    assert np.allclose(B, fd, atol=1e-8)


@pytest.mark.parametrize("name", ["RV", "Rxyz", "EP"])
@pytest.mark.parametrize("use_texp", [False, True])
def test_iteration_matrix_against_finite_differences(name, use_texp):
    """With v̇ = 0 and λ = 0 the neglected terms vanish: the matrix is the exact Jacobian of
    ``[βh² r; Φ]`` with respect to the Newton increment (T_exp only when kept, RV)."""
    form = FORMS[name]
    model = _model(form)
    q_n, v = _state(form, 2.3, perturb=0.02)
    n = q_n.size
    rng = np.random.default_rng(3)
    dq = 0.05 * rng.normal(size=n)
    h = 1e-3
    m = GeneralizedAlpha()
    beta_p, gamma_p = m.coefficients(h)
    q = mb.uac(form, q_n, dq)
    S = ga.iteration_matrix(model, q, v, dq, h, method=m, use_texp=use_texp)

    def resid(x):
        r, phi = ga.residual_genalpha(model, mb.uac(form, q_n, dq + x), v + gamma_p * x,
                                      beta_p * x, np.zeros(model.n_constraints))
        return np.concatenate([m.beta * h * h * r, phi])

    fd = central_difference(resid, np.zeros(n), eps=1e-7)
    if name == "RV" and not use_texp:  # T_exp ≈ I: only the translational/rate blocks are exact
        assert np.allclose(S[:, :n], fd, atol=0.05 * np.max(np.abs(fd)))
        assert not np.allclose(S[:, :n], fd, atol=1e-6)
    else:
        assert np.allclose(S[:, :n], fd, atol=1e-6 * max(1.0, np.max(np.abs(fd))))
    assert np.allclose(S[:n, n:], mb.constraint_jacobian(form, mb.uac(form, q_n, dq), P).T)


def test_rxyz_force_satisfies_lagrange_equations():
    """``Ĥᵀĝ`` of formulation 2 is ``−(Ṁφ̇ − ½ ∂(φ̇ᵀMφ̇)/∂φ)`` for T = ½ φ̇ᵀM(φ)φ̇ (g = 0)."""
    Pg = replace(CRANK, gravity=0.0).system().params()
    q, v = _state(sc.RXYZ, 1.7, perturb=0.1)
    Mdot = central_difference(lambda s: mb.mass_matrix(sc.RXYZ, q + s * v, Pg), np.array(0.0))
    dT = central_difference(lambda x: 0.5 * v @ mb.mass_matrix(sc.RXYZ, x, Pg) @ v, q)
    assert np.allclose(mb.force(sc.RXYZ, q, v, 0.0, Pg), -(Mdot @ v - dT), atol=1e-8)


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
        n = int(mb.n_coordinates(form, P))
        q, v = x0[:n], x0[n:]
        vd = ga.initial_state(_model(form), x0)[2 * n:3 * n]
        nb = n // 3
        out = []
        for i in range(3):
            rot = slice(i * nb + 3, (i + 1) * nb)
            r, rd, rdd = q[rot], v[rot], vd[rot]
            if form == sc.RV:
                wd = rdd
            elif form == sc.RXYZ:
                wd = g_rxyz(r) @ rdd + gdot_rxyz(r, rd) @ rd
            else:
                wd = g_ep(r) @ rdd
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
        res = scs.simulate(name, h, t_end, record_every=10)
        assert res.ok
        assert np.max(res.x[:, 3]) < 1e-9  # index 3: no drift of the joint equations
        err.append(abs(scs.slider_position(res) - s_ref[0]))
    assert err[1] < 2e-5
    assert 3.0 < err[0] / err[1] < 5.0  # second order


def test_energy_loss_is_second_order_and_crank_turns_forward():
    """No friction: the energy changes only by the numerical dissipation of generalized-α,
    which is O(h²) for the (slow) physical motion."""
    loss = []
    for h in (1e-3, 5e-4):
        res = scs.simulate("RV", h, 1.0, record_every=1)
        e = res.x[:, 2]
        loss.append(np.max(np.abs(e - e[0])) / abs(e[0]))
    assert loss[0] < 1e-3 and 3.0 < loss[0] / loss[1] < 5.0
    theta = np.unwrap(res.x[:, 1])
    assert np.all(np.diff(theta) > 0)
    th_ref, _ = CRANK.reference([1.0])
    assert abs(theta[-1] - th_ref[0]) < 1e-3


@pytest.mark.parametrize("name", FORMS)
def test_simulate_is_the_generic_generalized_alpha(name):
    """``simulate`` runs ``integrate_genalpha`` on the multibody model code: same final state and
    counts; the record rows are :func:`outputs` of the recorded states, and with
    ``record_every = None`` the one row is that of the final state."""
    form = FORMS[name]
    h, t_end, every = 2e-3, 0.1, 5
    res = scs.simulate(name, h, t_end, record_every=every)
    ref = ga.integrate_genalpha(_model(form), CRANK.initial_state(form), h, t_end,
                                record_every=every)
    n = ref.q.size
    assert np.array_equal(res.q, ref.q) and np.array_equal(res.v, ref.v)
    assert (res.n_steps, res.failed_step) == (50, -1) and res.work == ref.work
    assert res.iterations_per_step == ref.iterations_per_step
    assert res.x.shape == (11, 4) and np.array_equal(res.t, ref.t)
    for row, x in zip(res.x, ref.x, strict=True):
        assert np.array_equal(row, sc.outputs(form, x[:n], x[n:], P))
    final = scs.simulate(form, h, t_end)
    assert final.x.shape == (1, 4) and np.array_equal(final.x[0], res.x[-1]) and final.t[0] == final.t_final
    assert scs.slider_position(final) == scs.slider_position(res) == res.q[2 * (n // 3)]


@pytest.mark.parametrize("name", FORMS)
def test_modified_newton_agrees_with_full_newton(name):
    full = scs.simulate(name, 2e-3, 0.2)
    mod = scs.simulate(name, 2e-3, 0.2, newton=NewtonSettings(modified=True))
    assert mod.ok and abs(scs.slider_position(mod) - scs.slider_position(full)) < 1e-8
    assert mod.work.jacobian_evaluations < full.work.jacobian_evaluations


@pytest.mark.parametrize("name", FORMS)
def test_failed_run_keeps_the_state_at_the_failing_step(name):
    """A Newton failure ends the run; ``q, v`` and the final-state record are those at the start
    of the failing step, the record holds the rows up to it."""
    newton = NewtonSettings(max_iter=2)
    res = scs.simulate(name, 1e-2, 0.4, newton=newton)
    assert not res.ok and res.failed_step >= 0
    k = res.failed_step
    if k > 0:
        before = scs.simulate(name, 1e-2, k * 1e-2, newton=newton)
        assert before.ok
        assert np.array_equal(res.q, before.q) and np.array_equal(res.x, before.x)
    else:
        q0, v0 = _split(FORMS[name], CRANK.initial_state(name))
        assert np.array_equal(res.q, q0) and np.array_equal(res.v, v0)
    assert res.x[0, 3] < 1e-9
    rec = scs.simulate(name, 1e-2, 0.4, newton=newton, record_every=1)
    assert rec.failed_step == k and rec.x.shape == (k + 1, 4) and rec.t_final == res.t_final == k * 1e-2
    assert np.all(rec.x[:k + 1, 3] < 1e-9)
    assert np.allclose(rec.x[k], res.x[0], rtol=0, atol=1e-15)


def test_bad_arguments():
    with pytest.raises(ValueError):
        scs.simulate("Euler", 1e-3, 0.1)
    with pytest.raises(ValueError):
        scs.simulate(3, 1e-3, 0.1)
    with pytest.raises(ValueError):
        scs.simulate("RV", 3e-3, 0.1)
    with pytest.raises(ValueError):
        scs.simulate("RV", -1e-3, 0.1)
    with pytest.raises(ValueError):
        sc.SliderCrank(rod_length=-1.0)


@pytest.mark.parametrize("name", FORMS)
def test_agrees_with_exudyn(name):
    """The same model and method in the authors' code (Exudyn, Brüls–Cardona variant)."""
    s_exu, _ = run_slider_crank(name, 1e-3, 0.3)  # Exudyn is a test dependency: no skip
    assert abs(scs.slider_position(scs.simulate(name, 1e-3, 0.3)) - s_exu) < 1e-7
