"""Tests of the Puma 560 in joint coordinates (paper 002, Sect. 4.4): kinematics, RNEA dynamics,
the bang–bang reference, PD tracking and the DOP853 reference solution."""

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from mbslib import diagnostics
from mbslib import model as md
from mbslib.systems import multibody as mb
from mbslib.systems import puma560 as pm
from tests.fd import central_difference

ROBOT = pm.Puma560()
P = ROBOT.params()
PHI_INIT = np.deg2rad(ROBOT.phi_init_deg)
PHI_GOAL = np.deg2rad(ROBOT.phi_goal_deg)


def _rot_x(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def _homogeneous(R=None, p=None):
    """4×4 transform with rotation ``R`` (default identity) and translation ``p`` (default 0)."""
    T = np.eye(4)
    if R is not None:
        T[:3, :3] = R
    if p is not None:
        T[:3, 3] = p
    return T


def _dh(theta, d, a, alpha):
    """``Rot_z(θ) Trans_z(d) Trans_x(a) Rot_x(α)`` as a product of elementary 4×4 transforms."""
    c, s = np.cos(theta), np.sin(theta)
    rot_z = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    return (_homogeneous(rot_z) @ _homogeneous(p=[0.0, 0.0, d]) @ _homogeneous(p=[a, 0.0, 0.0])
            @ _homogeneous(_rot_x(alpha)))


def _states(rng, n):
    return [(rng.uniform(-np.pi, np.pi, 6), rng.normal(scale=2.0, size=6)) for _ in range(n)]


# --- data ------------------------------------------------------------------------------------


def test_parameter_vector_layout():
    assert P.shape == (pm.N_PARAMS,) and P.dtype == np.float64
    # the chain entries are read off the description (tests/test_joint_coordinates.py): the table up to round-off
    assert np.allclose(P[pm.IDX_A:pm.IDX_A + 6], ROBOT.dh_a, rtol=0, atol=1e-15)
    assert np.allclose(P[pm.IDX_COM:pm.IDX_COM + 18].reshape(6, 3), ROBOT.coms, rtol=0, atol=1e-15)
    assert np.allclose(P[pm.IDX_INERTIA:pm.IDX_INERTIA + 18].reshape(6, 3), ROBOT.inertias, rtol=0, atol=1e-15)
    assert np.array_equal(P[pm.IDX_M:pm.IDX_M + 6], ROBOT.masses)
    assert P[pm.IDX_G] == 9.81 and P[pm.IDX_T] == 1.0
    assert np.allclose(P[pm.IDX_PHI1:pm.IDX_PHI1 + 6], PHI_GOAL, rtol=0, atol=0)
    assert np.array_equal(P[pm.IDX_DAMP:], ROBOT.damping)
    assert np.array_equal(ROBOT.initial_state(), np.r_[PHI_INIT, np.zeros(6)])


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"masses": (20.0, -17.4, 4.8, 0.82, 0.34, 0.09)}, r"masses\[1\]"),
        ({"duration": -1.0}, "duration"),
        ({"duration": 0.0}, "duration"),
        ({"stiffness": (4e4, 4e4, 4e4, 100.0, -1.0, 10.0)}, r"stiffness\[4\]"),
        ({"damping": (400.0, 400.0, 100.0, 1.0, 1.0, np.nan)}, "damping"),
        ({"inertias": ((1e-8, 0.0, 1e-8),) + ROBOT.inertias[1:]}, r"inertias\[0\]\[1\]"),
        ({"inertias": ROBOT.inertias[:5] + ((1e-4, -1e-4, 1e-4),)}, r"inertias\[5\]\[1\]"),
        ({"coms": ROBOT.coms[:5]}, "coms"),
        ({"dh_d": (0.0, 0.0, 0.15)}, "dh_d"),
    ],
)
def test_bad_parameters_raise_naming_the_field(kwargs, field):
    with pytest.raises(ValueError, match=field):
        pm.Puma560(**kwargs)


# --- kinematics ------------------------------------------------------------------------------


def test_frames_at_zero_match_hand_computed_dh_transforms():
    R, o = ROBOT.link_frames(np.zeros(6))
    # link 1: Rot_x(π/2); link 2: Trans_x(a₂); link 3: Trans_z(d₃) Trans_x(a₃) Rot_x(−π/2) ...
    assert np.allclose(R[0], [[1, 0, 0], [0, 0, -1], [0, 1, 0]], atol=1e-15)
    assert np.allclose(o[0], 0.0, atol=0)
    assert np.allclose(R[1], R[0], atol=1e-15) and np.allclose(o[1], [0.4318, 0, 0], atol=1e-15)
    assert np.allclose(R[2], np.eye(3), atol=1e-15)
    assert np.allclose(o[2], [0.4318 + 0.0203, -0.15005, 0.0], atol=1e-15)
    # wrist centre (Corke: p560.fkine(qz) = [0.4521, −0.1500, 0.4318])
    assert np.allclose(o[3:], [0.4521, -0.15005, 0.4318], atol=1e-15)
    assert np.allclose(R[3], [[1, 0, 0], [0, 0, -1], [0, 1, 0]], atol=1e-15)
    assert np.allclose(R[5], np.eye(3), atol=1e-15)


def test_frames_equal_products_of_homogeneous_dh_transforms(rng):
    for phi, _ in _states(rng, 5):
        R, o = ROBOT.link_frames(phi)
        T = np.eye(4)
        for i in range(6):
            T = T @ _dh(phi[i], ROBOT.dh_d[i], ROBOT.dh_a[i], ROBOT.dh_alpha[i])
            assert np.allclose(R[i], T[:3, :3], atol=1e-14)
            assert np.allclose(o[i], T[:3, 3], atol=1e-14)
            assert np.allclose(R[i].T @ R[i], np.eye(3), atol=1e-14)
            assert np.isclose(np.linalg.det(R[i]), 1.0, atol=1e-14)
        coms = ROBOT.link_coms(phi)
        assert np.allclose(coms, o + np.einsum("ijk,ik->ij", R, np.array(ROBOT.coms)), atol=1e-15)


def test_link_velocities_match_finite_differences(rng):
    for phi, dphi in _states(rng, 3):
        v_com, om = ROBOT.link_velocities(phi, dphi)
        def along(s, phi=phi, dphi=dphi):
            return phi + s * dphi

        v_fd = central_difference(lambda s, along=along: ROBOT.link_coms(along(s[0])), np.zeros(1))[..., 0]
        assert np.allclose(v_com, v_fd, rtol=0, atol=1e-8)
        R = ROBOT.link_frames(phi)[0]
        dR = central_difference(lambda s, along=along: ROBOT.link_frames(along(s[0]))[0], np.zeros(1))[..., 0]
        for i in range(6):
            W = R[i].T @ dR[i]  # skew(ω_body)
            assert np.allclose(W, -W.T, atol=1e-8)
            assert np.allclose([W[2, 1], W[0, 2], W[1, 0]], om[i], atol=1e-8)


# --- dynamics --------------------------------------------------------------------------------


def test_mass_matrix_is_symmetric_positive_definite_and_gives_kinetic_energy(rng):
    for phi, dphi in _states(rng, 20):
        M = pm.chain_mass_matrix(P, phi)
        assert np.array_equal(M, M.T)
        assert np.linalg.eigvalsh(M)[0] > 1e-6  # smallest: the hand roll, ~ I_zz,6 = 4e-5
        T_chain = 0.5 * dphi @ M @ dphi
        assert np.isclose(T_chain, ROBOT.kinetic_energy(phi, dphi), rtol=1e-13, atol=0)


def test_gravity_term_is_the_gradient_of_the_potential(rng):
    for phi, _ in _states(rng, 5):
        grad = central_difference(ROBOT.potential_energy, phi, eps=1e-5)
        g = pm.chain_bias(P, phi, np.zeros(6))
        # measured |g − ∇V| ≤ 4e-10 |g|_max over 40 random states (difference error)
        assert np.allclose(g, grad, rtol=0, atol=3e-9 * np.abs(g).max())


def test_velocity_terms_match_the_lagrangian_coriolis_vector(rng):
    """``c = Ṁ φ̇ − ½ ∂(φ̇ᵀ M φ̇)/∂φ`` (Lagrange's equations), derivatives of M by differences."""
    eps = 1e-5  # truncation ~ round-off ~ 1e-9 relative (measured ≤ 2.4e-9 over 40 states)
    for phi, dphi in _states(rng, 5):
        Mdot = (pm.chain_mass_matrix(P, phi + eps * dphi)
                - pm.chain_mass_matrix(P, phi - eps * dphi)) / (2 * eps)
        dT = central_difference(lambda q, dphi=dphi: dphi @ pm.chain_mass_matrix(P, q) @ dphi, phi, eps)
        c_lagrange = Mdot @ dphi - 0.5 * dT
        c_rnea = pm.chain_bias(P, phi, dphi) - pm.chain_bias(P, phi, np.zeros(6))
        assert np.allclose(c_rnea, c_lagrange, rtol=0, atol=1e-8 * np.abs(c_lagrange).max())


def test_rhs_solves_the_equations_of_motion(rng):
    for (phi, dphi), t in zip(_states(rng, 5), (-0.1, 0.2, 0.5, 0.9, 1.3), strict=True):
        acc = pm.chain_rhs(P, t, phi, dphi)
        tau = pm.pd_torque(P, t, phi, dphi)
        M = pm.chain_mass_matrix(P, phi)
        assert np.allclose(M @ acc + pm.chain_bias(P, phi, dphi), tau, rtol=0,
                           atol=1e-12 * np.abs(tau).max())
        ref, dref, _ = ROBOT.reference(t)
        k, d = np.array(ROBOT.stiffness), np.array(ROBOT.damping)
        assert np.allclose(tau, -k * (phi - ref) - d * (dphi - dref), rtol=1e-14, atol=1e-9)


def test_energy_is_conserved_without_control():
    """Zero gains: the free robot under gravity conserves T + V."""
    free = pm.Puma560(stiffness=(0.0,) * 6, damping=(0.0,) * 6)
    Pf = free.params()
    y0 = np.r_[PHI_INIT, [1.0, -0.5, 0.8, 2.0, -1.5, 3.0]]
    sol = solve_ivp(lambda t, y: np.r_[y[6:], pm.chain_rhs(Pf, t, y[:6], y[6:])], (0.0, 0.5), y0,
                    method="DOP853", rtol=1e-12, atol=1e-14, t_eval=np.linspace(0.0, 0.5, 26))
    assert sol.success
    E = np.array([free.kinetic_energy(y[:6], y[6:]) + free.potential_energy(y[:6])
                  for y in sol.y.T])
    kinetic = E - np.array([free.potential_energy(y[:6]) for y in sol.y.T])
    drift = np.abs(E - E[0]).max() / kinetic.max()
    assert drift < 1e-11  # measured 3.8e-13 (relative to max T = 60 J); the robot really moves:
    assert np.abs(sol.y[:6, -1] - PHI_INIT).max() > 0.5


# --- reference motion and control ------------------------------------------------------------


def test_description_is_the_robot_of_the_joint_coordinates(rng):
    """The description (:mod:`mbslib.model`) and the joint-space model are one robot: the link
    poses and velocities of any joint state satisfy the description's joints (positions and
    rates), and its kinetic and potential energies are ``½ φ̇ᵀ M(φ) φ̇`` (RNEA) and ``V(φ)``."""
    description = ROBOT.description()
    assert description.n_constraints == 30
    for phi, dphi in _states(rng, 4):
        R, _ = ROBOT.link_frames(phi)
        v, w = ROBOT.link_velocities(phi, dphi)
        states = md.BodyStates(np.zeros(1), ROBOT.link_coms(phi)[None], R[None], v[None], w[None])
        assert np.max(np.abs(diagnostics.constraint_residuals(description, states))) < 1e-14
        assert np.max(np.abs(diagnostics.constraint_rates(description, states))) < 1e-13
        T = 0.5 * dphi @ pm.chain_mass_matrix(P, phi) @ dphi
        assert np.isclose(diagnostics.kinetic_energy(description, states)[0], T, rtol=1e-12)
        assert np.isclose(diagnostics.potential_energy(description, states)[0], ROBOT.potential_energy(phi), rtol=1e-13)


@pytest.mark.parametrize("name", ["RV", "Rxyz", "EP"])
def test_absolute_system_is_the_description_with_the_drives(name, rng):
    """:meth:`Puma560.system` (the description in absolute coordinates plus one spring–damper
    per joint): the absolute state of a joint state satisfies its joints, the springs read back
    the joint angles, and the initial state is the description's."""
    form = mb.FORMULATIONS[name]
    S = ROBOT.system()
    assert (len(S.bodies), len(S.rows), len(S.springs)) == (6, 30, 6)
    P_abs = S.params()
    n = mb.n_coordinates(form, P_abs)
    for phi, dphi in _states(rng, 3):
        R, _ = ROBOT.link_frames(phi)
        x = mb.body_coordinates(form, ROBOT.link_coms(phi), R, *ROBOT.link_velocities(phi, dphi))
        assert np.max(np.abs(mb.constraint(form, x[:n], P_abs))) < 1e-14
        assert np.max(np.abs(mb.constraint_jacobian(form, x[:n], P_abs) @ x[n:])) < 1e-12
        assert np.allclose(np.angle(np.exp(1j * (ROBOT.joint_angles(form, P_abs, x[:n], 0.0) - phi))), 0, atol=1e-12)
    x0 = ROBOT.absolute_state(form)
    R, _ = ROBOT.link_frames(PHI_INIT)
    rest = np.zeros((6, 3))
    assert np.array_equal(x0, mb.body_coordinates(form, ROBOT.link_coms(PHI_INIT), R, rest, rest))


def test_bang_bang_reference_profile():
    T = ROBOT.duration
    acc = 4.0 * (PHI_GOAL - PHI_INIT) / T**2
    phi0, dphi0, dd0 = ROBOT.reference(0.0)
    assert np.allclose(phi0, PHI_INIT, atol=0) and np.all(dphi0 == 0) and np.allclose(dd0, acc)
    for tb in (0.5 * T, T):
        lo, hi = ROBOT.reference(tb - 1e-9), ROBOT.reference(tb + 1e-9)
        assert np.allclose(lo[0], hi[0], atol=1e-12)  # φ_ref continuous
        assert np.allclose(lo[1], hi[1], atol=2.1e-9 * np.abs(acc).max())  # φ̇_ref continuous
    assert np.allclose(ROBOT.reference(0.5 * T)[0], 0.5 * (PHI_INIT + PHI_GOAL), atol=1e-15)
    assert np.allclose(ROBOT.reference(0.25 * T)[2], acc, rtol=1e-15)
    assert np.allclose(ROBOT.reference(0.75 * T)[2], -acc, rtol=1e-15)
    phiT, dphiT, _ = ROBOT.reference(T)
    assert np.allclose(phiT, PHI_GOAL, atol=1e-15) and np.allclose(dphiT, 0.0, atol=1e-15)
    late = ROBOT.reference(1.7 * T)
    assert np.allclose(late[0], PHI_GOAL, rtol=0, atol=1e-15) and not late[1].any() and not late[2].any()
    # vectorised evaluation and the numba twin agree everywhere, breakpoints included
    ts = np.r_[-0.5, np.linspace(0.0, 1.5, 31), 0.5 * T, T]
    vec = ROBOT.reference(ts)
    assert vec[0].shape == (ts.size, 6)
    for k, t in enumerate(ts):
        nb = pm.reference_numba(P, t)
        for a, b in zip(nb, vec, strict=True):
            assert np.allclose(a, b[k], rtol=1e-15, atol=1e-15)


def test_duration_is_a_parameter():
    slow = pm.Puma560(duration=2.0)
    _, dphi, ddphi = slow.reference(1.0)
    assert np.allclose(dphi, (PHI_GOAL - PHI_INIT), rtol=1e-15)  # peak velocity 2Δφ/T
    assert np.allclose(ddphi, 4.0 * (PHI_GOAL - PHI_INIT) / 4.0, rtol=1e-15)


TIMES = np.array([0.0, 0.25, 0.5, 0.75, 1.0, 2.0])


@pytest.fixture(scope="module")
def solution():
    return ROBOT.reference_solution(TIMES, rtol=1e-12)


def test_pd_control_tracks_the_reference(solution):
    phi, dphi = solution
    assert np.array_equal(phi[0], PHI_INIT) and not dphi[0].any()
    err = phi[4] - PHI_GOAL
    # measured φ(1) − φ_goal [mrad]: −0.573, −0.466, −0.326, 0.673, −0.088, −0.058
    assert np.allclose(err * 1e3, [-0.5731, -0.4657, -0.3262, 0.6732, -0.0879, -0.0578], atol=2e-4)
    assert np.abs(err[:3]).max() < 0.6e-3 and np.abs(err).max() < 0.7e-3
    track = np.abs(phi[:5] - ROBOT.reference(TIMES[:5])[0]).max()
    assert track < 1.3e-3  # measured 1.21 mrad (joint 5 at t = T/2)
    assert np.abs(dphi[4]).max() < 2e-4  # nearly at rest at t = T (measured 1.5e-4 rad/s)


def test_solution_settles_to_the_static_equilibrium(solution):
    """No gravity compensation: at rest ``k (φ − φ_goal) = −g(φ)`` (joint 2 sags by 0.58 mrad)."""
    phi, dphi = solution
    k = np.array(ROBOT.stiffness)
    assert np.abs(dphi[-1]).max() < 1e-12  # measured 4e-14 rad/s at t = 2 s
    residual = k * (phi[-1] - PHI_GOAL) + pm.chain_bias(P, phi[-1], np.zeros(6))
    assert np.abs(residual).max() < 1e-9  # measured 1.8e-11 N m
    assert -0.6e-3 < phi[-1, 1] - PHI_GOAL[1] < -0.55e-3


def test_reference_solution_is_converged(solution):
    phi12, dphi12 = solution
    phi10, dphi10 = ROBOT.reference_solution(TIMES, rtol=1e-10)
    # measured 3e-15 rad and 6e-12 rad/s (rtol 1e-13 vs 1e-12: 2e-15 rad, 2e-13 rad/s)
    assert np.abs(phi10 - phi12).max() < 1e-12
    assert np.abs(dphi10 - dphi12).max() < 1e-10


def test_reference_solution_is_one_integration_for_any_times(solution):
    """Calls with other times up to the same ``t_end`` evaluate the same (cached) integration:
    their values agree bit for bit, and a fresh integration gives them too."""
    phi, dphi = solution
    some = ROBOT.reference_solution(TIMES[[4, 1]], rtol=1e-12, t_end=TIMES[-1])
    assert np.array_equal(some[0], phi[[4, 1]]) and np.array_equal(some[1], dphi[[4, 1]])
    pm._reference_pieces.cache_clear()
    again = ROBOT.reference_solution(TIMES, rtol=1e-12)
    assert np.array_equal(again[0], phi) and np.array_equal(again[1], dphi)


def test_reference_solution_checks_its_times():
    with pytest.raises(ValueError, match="t_eval"):
        ROBOT.reference_solution([-0.1, 0.5])
    with pytest.raises(ValueError, match="t_eval"):
        ROBOT.reference_solution([0.5, 1.2], t_end=1.0)
    phi, dphi = ROBOT.reference_solution([0.0], rtol=1e-8)
    assert np.array_equal(phi[0], PHI_INIT) and not dphi[0].any()
