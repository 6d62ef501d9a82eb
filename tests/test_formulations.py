"""Every formulation builds its system from one description and maps its trajectories back."""

import numpy as np
import pytest

from mbslib.diagnostics import angular_momentum, kinetic_energy, total_energy
from mbslib.formulations import directors
from mbslib.model import Gravity, Joint, Model, RigidBody, Spring
from mbslib.systems import ggl_examples
from mbslib.systems.rigid_bodies import free_body, heavy_top

# an asymmetric body whose inertia tensor is not diagonal in its body frame, turned upside down
ASYMMETRIC = free_body([[2.0, 0.3, 0.0], [0.3, 3.0, 0.1], [0.0, 0.1, 4.5]], [1.0, -2.0, 0.5],
                       rotation=np.diag([1.0, -1.0, -1.0]))
MODELS, MODEL_IDS = [heavy_top(), ASYMMETRIC], ["heavy top", "free body, non-principal axes"]


def test_heavy_top_description_is_the_papers_director_top():
    model = heavy_top()
    system = directors.director_system(model)
    reference = ggl_examples.heavy_top()
    q0, qdot0 = directors.initial_coordinates(model)
    q_ref, qdot_ref = ggl_examples.heavy_top_initial_state()
    np.testing.assert_allclose(system.M, reference.M, rtol=1e-15)
    np.testing.assert_allclose(system.f, reference.f, rtol=1e-15)
    np.testing.assert_allclose(q0, q_ref, atol=1e-15)
    np.testing.assert_allclose(qdot0, qdot_ref, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(system.g(q0), reference.g(q0), atol=1e-15)
    np.testing.assert_allclose(system.G(q0), reference.G(q0), atol=1e-15)


@pytest.mark.parametrize("model", MODELS, ids=MODEL_IDS)
def test_round_trip_to_body_states(model):
    q0, qdot0 = directors.initial_coordinates(model)
    system = directors.director_system(model)
    states = directors.body_states(model, [0.0], q0[None], qdot0[None])
    start = model.initial_states()
    for name in ("position", "rotation", "velocity", "angular_velocity"):
        np.testing.assert_allclose(getattr(states, name), getattr(start, name), atol=1e-13)
    # the director energy and momentum equal the description's
    assert system.kinetic_from_v(qdot0) == pytest.approx(kinetic_energy(model, start)[0], rel=1e-13)
    assert system.kinetic_from_v(qdot0) + system.V(q0) == pytest.approx(total_energy(model, start)[0], rel=1e-13)
    from mbslib.systems.directors import angular_momentum as director_momentum

    np.testing.assert_allclose(director_momentum(q0, system.M * qdot0, 3), angular_momentum(model, start)[0],
                               rtol=1e-13, atol=1e-13)
    assert np.abs(system.g(q0)).max() < 1e-15


def test_unavailable_parts_are_named():
    a = RigidBody("a", 1.0, [1.0, 2.0, 2.5])
    hinge = Joint("revolute", None, 0, [0, 0, 0], [0, 0, 0], axis_a=[0, 0, 1], axis_b=[0, 0, 1])
    with pytest.raises(NotImplementedError, match="revolute"):
        directors.director_system(Model((a,), (hinge,)))
    with pytest.raises(NotImplementedError, match=r"springs\[0\] has a rest length"):
        directors.director_system(Model((a,), springs=(Spring(None, 0, [0, 0, 0], [1, 0, 0], stiffness=1.0,
                                                              rest_length=0.5),)))


def _planar_pair():
    """Two bodies in the x-y plane: a, turned about e_z, with a product of inertia in the plane, pinned to the
    ground at its point (0.3, 0.1, 0); b, lying face down (its e_z along −e_z), pinned to a; both moving."""
    c, s = np.cos(0.4), np.sin(0.4)
    R_a, R_b = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]), np.diag([1.0, -1.0, -1.0])
    p_a, q_a, p_b = np.array([0.3, 0.1, 0.0]), np.array([-0.4, 0.2, 0.0]), np.array([0.5, 0.0, 0.0])
    w_a, w_b, e_z = 1.5, -0.7, np.array([0.0, 0.0, 1.0])
    x_a = np.array([0.2, -0.1, 0.0]) - R_a @ p_a  # the ground pivot at (0.2, -0.1)
    v_a = np.cross(w_a * e_z, x_a - (x_a + R_a @ p_a))
    joint_ab = x_a + R_a @ q_a
    x_b = joint_ab - R_b @ p_b
    v_b = v_a + np.cross(w_a * e_z, R_a @ q_a) - np.cross(w_b * e_z, R_b @ p_b)
    a = RigidBody("a", 2.0, [[0.3, 0.05, 0.02], [0.05, 0.5, 0.01], [0.02, 0.01, 0.7]], position=x_a, rotation=R_a,
                  velocity=v_a, angular_velocity=R_a.T @ (w_a * e_z))
    b = RigidBody("b", 0.5, [0.01, 0.2, 0.2], position=x_b, rotation=R_b, velocity=v_b,
                  angular_velocity=R_b.T @ (w_b * e_z))
    joints = (Joint("revolute", None, 0, [0.2, -0.1, 0.0], p_a, axis_a=e_z, axis_b=e_z),
              Joint("revolute", 0, 1, q_a, p_b, axis_a=e_z, axis_b=-e_z))
    return Model((a, b), joints, gravity=Gravity([1.0, -9.81, 0.0]))


def test_planar_directors_carry_the_descriptions_energy_momentum_and_joints():
    from mbslib.systems.directors import angular_momentum as director_momentum

    model = _planar_pair()
    system = directors.planar_director_system(model)
    q0, qdot0 = directors.planar_initial_coordinates(model)
    start = model.initial_states()
    assert (system.d, system.m, system.dim) == (12, 2 * 3 + 2 * 2, 2)
    assert np.abs(system.g(q0)).max() < 1e-15 and np.abs(system.G(q0) @ qdot0).max() < 1e-15
    assert system.kinetic_from_v(qdot0) == pytest.approx(kinetic_energy(model, start)[0], rel=1e-14)
    assert system.kinetic_from_v(qdot0) + system.V(q0) == pytest.approx(total_energy(model, start)[0], rel=1e-14)
    L = director_momentum(q0, system.M * qdot0, 2)
    assert L == pytest.approx(angular_momentum(model, start)[0, 2], rel=1e-14)
    # E_1 + E_2 = J_zz for each body: the rotational inertia of a planar motion
    assert system.M[2] + system.M[4] == pytest.approx(model.bodies[0].inertia[2, 2], rel=1e-15)
    assert system.M[8] + system.M[10] == pytest.approx(model.bodies[1].inertia[2, 2], rel=1e-15)


def _changed(model, body=None, joint=None, **changes):
    from dataclasses import replace

    bodies, joints = list(model.bodies), list(model.joints)
    if body is not None:
        bodies[body] = replace(bodies[body], **changes)
    if joint is not None:
        joints[joint] = replace(joints[joint], **changes)
    return replace(model, bodies=tuple(bodies), joints=tuple(joints))


@pytest.mark.parametrize("change, name", [
    (lambda m: _changed(m, joint=1, kind="spherical"), r"joints\[1\] is spherical"),
    (lambda m: _changed(m, joint=0, axis_a=np.array([1.0, 0.0, 0.0])), r"joints\[0\].*axis_a"),
    (lambda m: _changed(m, joint=1, axis_b=np.array([0.0, 1.0, 1.0])), r"joints\[1\].*axis_b"),
    (lambda m: _changed(m, body=1, velocity=np.array([0.0, 0.0, 0.1])), r"bodies\[1\] \('b'\).*velocity"),
    (lambda m: _changed(m, body=0, angular_velocity=np.array([0.1, 0.0, 1.0])),
     r"bodies\[0\] \('a'\).*angular_velocity"),
    (lambda m: _changed(m, body=0, rotation=np.array([[1.0, 0.0, 0.0], [0.0, 0.8, -0.6], [0.0, 0.6, 0.8]])),
     r"bodies\[0\] \('a'\).*rotation"),
    (lambda m: Model(m.bodies, m.joints, gravity=Gravity([0.0, -9.81, 1.0])), "gravity"),
], ids=["spherical joint", "hinge axis in the plane", "tilted hinge axis", "velocity out of the plane",
        "spin about an axis in the plane", "body tilted out of the plane", "gravity out of the plane"])
def test_planar_directors_refuse_what_leaves_the_plane(change, name):
    model = change(_planar_pair())
    with pytest.raises(ValueError, match=name):
        directors.planar_director_system(model)
    with pytest.raises(ValueError, match=name):
        directors.planar_initial_coordinates(model)


def test_planar_directors_name_the_forces_they_lack():
    from mbslib.model import AppliedLoad, Constant

    model = _planar_pair()
    spring = Spring(None, 0, [0, 0, 0], [0, 0, 0], stiffness=1.0)
    with pytest.raises(NotImplementedError, match=r"springs\[0\]"):
        directors.planar_director_system(Model(model.bodies, model.joints, springs=(spring,)))
    load = AppliedLoad(1, force=Constant([1.0, 0.0, 0.0]))
    with pytest.raises(NotImplementedError, match=r"loads\[0\]"):
        directors.planar_director_system(Model(model.bodies, model.joints, loads=(load,)))


def test_reference_conserves_what_the_description_says():
    from mbslib.reference import reference_states

    for model in (heavy_top(), free_body([2.0, 3.0, 4.5], [1.0, 0.5, 2.0])):
        states = reference_states(model, np.linspace(0.0, 1.0, 11))
        E = total_energy(model, states)
        assert np.ptp(E) < 1e-10 * abs(E).max()
        assert np.abs(model.initial_states().rotation[0] - states.rotation[0]).max() < 1e-15
    L = angular_momentum(model, states)
    assert np.ptp(L, axis=0).max() < 1e-10 * np.abs(L).max()


def test_reference_of_the_free_body_matches_the_jacobi_solution():
    from mbslib.exact import free_body_angular_velocity
    from mbslib.reference import reference_states

    t = np.linspace(0.0, 5.0, 51)
    states = reference_states(free_body([2.0, 3.0, 4.5], [1e-3, 2.0, 1e-3]), t)
    exact = free_body_angular_velocity([2.0, 3.0, 4.5], [1e-3, 2.0, 1e-3], t)
    assert np.abs(states.angular_velocity[:, 0] - exact).max() < 1e-9


def _ggl_error(model, h, t_end, measure):
    from functools import partial

    from mbslib.integrators import ggl
    from mbslib.reference import reference_states
    from mbslib.simulate import simulate

    system = directors.director_system(model)
    q0, qdot0 = directors.initial_coordinates(model)
    run = simulate(partial(ggl.step_ggl, system), ggl.initial_vector(system, q0, qdot0), h, t_end)
    parts = ggl.split(system, run.x[-1])
    states = directors.body_states(model, [t_end], parts.q[None], (parts.p / system.M)[None])
    exact = reference_states(model, [0.0, t_end]).at(-1)
    return np.abs(getattr(states, measure) - getattr(exact, measure)).max()


@pytest.mark.parametrize("model, h, measure, order", [
    (heavy_top(), 5e-4, "position", 1.0),
    (free_body([2.0, 3.0, 4.5], [1.0, 0.5, 2.0]), 4e-3, "rotation", 2.0),
], ids=["heavy top: first order with a potential", "free body: second order"])
def test_ggl_through_the_description_converges_at_its_order(model, h, measure, order):
    from mbslib.convergence import observed_order

    hs = h / np.array([1, 2, 4])
    errors = [_ggl_error(model, h, 0.2, measure) for h in hs]
    assert observed_order(hs, errors) == pytest.approx(order, abs=0.2)  # style guide: ±0.2 of theory


@pytest.mark.parametrize("form", ["RV", "Rxyz", "EP"])
@pytest.mark.parametrize("model", MODELS, ids=MODEL_IDS)
def test_absolute_coordinates_round_trip_and_energy(model, form):
    from mbslib.formulations import lie_group
    from mbslib.systems import lie_group_mbs as lg

    absolute = lie_group.absolute_model(model, form)  # the heavy top: the specialised kernel
    x0 = lie_group.initial_state(model, form)
    n = absolute.n
    states = lie_group.body_states(model, form, [0.0], x0[:n][None], x0[n:][None])
    start = model.initial_states()
    for name in ("position", "rotation", "velocity", "angular_velocity"):
        np.testing.assert_allclose(getattr(states, name), getattr(start, name), atol=1e-12)
    q, v, (body,) = x0[:n], x0[n:], model.bodies  # one body: q starts with its centre of mass
    gravity = np.zeros(3) if model.gravity is None else model.gravity.g
    energy = 0.5 * v @ lg.mass_matrix(absolute.code, q, absolute.P) @ v - body.mass * gravity @ q[:3]
    assert energy == pytest.approx(total_energy(model, start)[0], rel=1e-12)


def _absolute_error(model, form, run, h, t_end):
    from mbslib.formulations import lie_group
    from mbslib.reference import reference_states

    absolute = lie_group.absolute_model(model, form)
    result = run(absolute, lie_group.initial_state(model, form), h, t_end)
    states = lie_group.body_states(model, form, [t_end], result.q[None], result.v[None])
    exact = reference_states(model, [0.0, t_end]).at(-1)
    return np.abs(states.position - exact.position).max() + np.abs(states.rotation - exact.rotation).max()


@pytest.mark.parametrize("form", ["RV", "Rxyz", "EP"])
def test_generalized_alpha_through_the_description_is_second_order(form):
    from mbslib.convergence import observed_order
    from mbslib.integrators.generalized_alpha import integrate_genalpha

    hs = 2e-3 / np.array([1, 2, 4])
    errors = [_absolute_error(heavy_top(), form, integrate_genalpha, h, 0.1) for h in hs]
    assert observed_order(hs, errors) == pytest.approx(2.0, abs=0.2)


def test_rkmk_through_the_description_is_fourth_order():
    from mbslib.convergence import observed_order
    from mbslib.integrators.runge_kutta import integrate_explicit
    from mbslib.integrators.tableaux import RK44

    model = ASYMMETRIC
    hs = 4e-2 / np.array([1, 2, 4])
    errors = [_absolute_error(model, "RV", lambda m, x0, h, t: integrate_explicit(m, x0, RK44, h, t), h, 1.0)
              for h in hs]
    assert observed_order(hs, errors) == pytest.approx(4.0, abs=0.2)




def _chain():
    """Two bars on spherical joints, hanging from the ground, moving (off-equilibrium)."""
    from mbslib.model import Gravity

    bar = dict(mass=1.5, inertia=[0.2, 0.2, 0.02])
    a = RigidBody("a", position=[0, 0, -0.5], angular_velocity=[1.0, 0.0, 0.0], velocity=[0, 0.5, 0], **bar)
    b = RigidBody("b", position=[0, 0, -1.5], angular_velocity=[0.0, 2.0, 0.5], velocity=[-1.0, 1.0, 0], **bar)
    joints = (Joint("spherical", None, 0, [0, 0, 0], [0, 0, 0.5]), Joint("spherical", 0, 1, [0, 0, -0.5], [0, 0, 0.5]))
    return Model((a, b), joints, gravity=Gravity([0, 0, -9.81]))


def test_quaternion_derivatives_against_finite_differences():
    from mbslib.formulations.quaternions import QuaternionSystem

    from .fd import central_difference

    system = QuaternionSystem(_chain())
    rng = np.random.default_rng(0)
    q = system.initial_state()[: system.n] + 0.1 * rng.normal(size=system.n)  # off the manifold
    v = rng.normal(size=system.n)
    lam = rng.normal(size=system.m)
    np.testing.assert_allclose(system.constraint_jacobian(q), central_difference(system.constraint, q), atol=1e-8)
    np.testing.assert_allclose(system.constraint_hessian(q, lam),
                               central_difference(lambda x: system.constraint_jacobian(x).T @ lam, q), atol=1e-8)
    parts = system.grad_kinetic(q, v)
    np.testing.assert_allclose(parts.Tv, system.mass_matrix(q) @ v, rtol=1e-12)
    np.testing.assert_allclose(parts.Tq, central_difference(lambda x: system.kinetic_energy(x, v), q), atol=1e-8)
    np.testing.assert_allclose(system.grad_potential(q), central_difference(system.potential, q), atol=1e-8)


@pytest.mark.parametrize("model", MODELS + [_chain()], ids=MODEL_IDS + ["chain"])
def test_quaternion_round_trip(model):
    from mbslib.formulations.quaternions import QuaternionSystem

    system = QuaternionSystem(model)
    x0 = system.initial_state()
    q, p, v = x0[: system.n], x0[system.n: 2 * system.n], x0[2 * system.n: 3 * system.n]
    states, start = system.body_states([0.0], q[None], v[None]), model.initial_states()
    for name in ("position", "rotation", "velocity", "angular_velocity"):
        np.testing.assert_allclose(getattr(states, name), getattr(start, name), atol=1e-12)
    assert system.kinetic_energy(q, v) + system.potential(q) == pytest.approx(total_energy(model, start)[0], rel=1e-12)
    np.testing.assert_allclose(system.angular_momentum(q, p), angular_momentum(model, start)[0], rtol=1e-12,
                               atol=1e-12)
    assert np.abs(system.constraint(q)).max() < 1e-14


@pytest.mark.parametrize("model", MODELS, ids=MODEL_IDS)
def test_eml_through_the_description_is_second_order(model):
    """EML conserves Livens' generalized energy exactly (tests/test_livens.py); the energy of the
    description, from the nodal velocities, is not conserved (the undamped (−1)ⁿ mode of
    ``v^{n+1} = 2Δq/h − vⁿ``, chapter 000, Fig. 7): its spread falls at second order in h."""
    from functools import partial

    from mbslib.convergence import observed_order
    from mbslib.formulations.quaternions import QuaternionSystem
    from mbslib.integrators import livens
    from mbslib.reference import reference_states
    from mbslib.simulate import simulate

    system = QuaternionSystem(model)
    t_end, hs = 0.1, 1e-3 / np.array([1, 2, 4])
    exact = reference_states(model, [0.0, t_end]).at(-1)
    errors, spreads = [], []
    for h in hs:
        run = simulate(partial(livens.step_eml, system), system.initial_state(), h, t_end)
        n = system.n
        states = system.body_states(run.t, run.x[:, :n], run.x[:, 2 * n: 3 * n])
        spreads.append(np.ptp(total_energy(model, states)))
        errors.append(np.abs(states.rotation[-1] - exact.rotation[0]).max()
                      + np.abs(states.position[-1] - exact.position[0]).max())
    assert observed_order(hs, errors) == pytest.approx(2.0, abs=0.2)
    assert observed_order(hs, spreads) == pytest.approx(2.0, abs=0.2)


def _spheres():
    """Two spherical bodies on a spring, off-centre attachment points, under gravity."""
    from mbslib.model import Gravity

    a = RigidBody("a", 1.0, [0.4, 0.4, 0.4], angular_velocity=[0.5, 1.0, -0.3], velocity=[0.2, 0, 0.1])
    b = RigidBody("b", 2.0, [0.9, 0.9, 0.9], position=[1.5, 0.2, 0.0], angular_velocity=[-1.0, 0.2, 0.4])
    spring = Spring(0, 1, [0.3, 0.1, 0.0], [-0.2, 0.0, 0.3], stiffness=40.0, rest_length=1.0)
    return Model((a, b), springs=(spring,), gravity=Gravity([0, 0, -9.81]))


def test_rodrigues_map_through_the_description_is_second_order():
    from mbslib.convergence import observed_order
    from mbslib.formulations.rodrigues import RodriguesSystem
    from mbslib.integrators import rodrigues_vi as rr
    from mbslib.reference import reference_states

    model = _spheres()
    system = RodriguesSystem(model)
    start = system.body_states([0.0], rr.run(rr.step_23, system, system.initial_state(), 1e-2, 1e-2).x[:1])
    for name in ("position", "rotation", "velocity", "angular_velocity"):
        np.testing.assert_allclose(getattr(start, name), getattr(model.initial_states(), name), atol=1e-14)
    t_end, hs = 1.0, 1e-2 / np.array([1, 2, 4])
    exact = reference_states(model, [0.0, t_end]).at(-1)
    errors, energy_spread = [], []
    for h in hs:
        run = rr.run(rr.step_23, system, system.initial_state(), h, round(t_end / h) * h)
        body = system.body_states(run.t, run.x)
        errors.append(np.abs(body.position[-1] - exact.position[0]).max()
                      + np.abs(body.rotation[-1] - exact.rotation[0]).max())
        energy_spread.append(np.ptp(total_energy(model, body)))
    assert observed_order(hs, errors) == pytest.approx(2.0, abs=0.2)
    assert observed_order(hs, energy_spread) == pytest.approx(2.0, abs=0.3)  # bounded, O(h²) (variational)


def test_rodrigues_forces_and_torques_are_minus_the_potential_gradient():
    """``F = −∂U/∂x``; spatial torque ``T·ζ = −d/dε U(exp(εζ̂) R)`` (left perturbation)."""
    from dataclasses import replace

    from mbslib.diagnostics import potential_energy
    from mbslib.formulations.rodrigues import RodriguesSystem
    from mbslib.rodrigues import rr_from_matrix
    from mbslib.rotations import exp_so3

    model = _spheres()
    system = RodriguesSystem(model)
    start = model.initial_states()
    x, R = start.position[0], start.rotation[0]
    F, T = system.force_torque(x, np.array([rr_from_matrix(r) for r in R]))
    eps = 1e-6

    def U(x_, R_):
        return potential_energy(model, replace(start, position=x_[None], rotation=R_[None]))[0]

    for body in range(2):
        for i, e in enumerate(np.eye(3)):
            dx = np.zeros((2, 3))
            dx[body] = eps * e
            assert -(U(x + dx, R) - U(x - dx, R)) / (2 * eps) == pytest.approx(F[body, i], abs=1e-6)
            turn = [exp_so3(eps * e) if k == body else np.eye(3) for k in range(2)]
            back = [exp_so3(-eps * e) if k == body else np.eye(3) for k in range(2)]
            dU = U(x, np.einsum("nij,njk->nik", turn, R)) - U(x, np.einsum("nij,njk->nik", back, R))
            assert -dU / (2 * eps) == pytest.approx(T[body, i], abs=1e-6)


@pytest.mark.parametrize("model, match", [(heavy_top(), "joints"), (ASYMMETRIC, "spherical bodies")])
def test_rodrigues_maps_refuse_what_they_cannot_run(model, match):
    from mbslib.formulations.rodrigues import RodriguesSystem

    with pytest.raises(ValueError, match=match):
        RodriguesSystem(model)


@pytest.mark.parametrize("form", ["RV", "Rxyz", "EP"])
def test_a_block_on_an_inclined_prismatic_joint_slides_as_the_exact_solution(form):
    """A body, turned and not in its principal frame, slides along a ground line inclined at 45°
    under gravity: its centre moves by ½ g sin 45° t² along the line (generalized-α integrates a
    constant acceleration exactly), its orientation and the joint hold. Between two bodies the
    joint is refused by name."""
    from mbslib.diagnostics import constraint_residuals
    from mbslib.formulations import lie_group
    from mbslib.integrators.generalized_alpha import integrate_genalpha
    from mbslib.model import Gravity

    turned = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    block = RigidBody("block", 2.0, [[2.0, 0.3, 0.0], [0.3, 3.0, 0.1], [0.0, 0.1, 4.5]],
                      position=[1.0, 0.0, 1.0], rotation=turned)
    axis = np.array([1.0, 0.0, -1.0]) / np.sqrt(2.0)
    slide = Joint("prismatic", None, 0, [0.0, 0.0, 2.0], [0.0, 0.0, 0.0], axis_a=axis)
    model = Model((block,), (slide,), gravity=Gravity([0.0, 0.0, -9.81]))
    t_end = 0.3
    run = integrate_genalpha(lie_group.absolute_model(model, form), lie_group.initial_state(model, form), 1e-2, t_end)
    states = lie_group.body_states(model, form, [t_end], run.q[None], run.v[None])
    travel = 0.5 * 9.81 * np.sqrt(0.5) * t_end**2
    np.testing.assert_allclose(states.position[0, 0], block.position + travel * axis, atol=1e-9)
    np.testing.assert_allclose(states.rotation[0, 0], turned, atol=1e-9)
    assert np.abs(constraint_residuals(model, states, model.initial_states())).max() < 1e-9
    pair = Model((block, RigidBody("other", 1.0, [1.0, 1.0, 1.0])),
                 (Joint("prismatic", 0, 1, [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], axis_a=axis),))
    with pytest.raises(NotImplementedError, match=r"joints\[0\] is prismatic between two bodies"):
        lie_group.absolute_model(pair, form)
