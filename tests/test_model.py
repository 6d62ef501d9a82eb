import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from mbslib.diagnostics import (
    angular_momentum,
    constraint_rates,
    constraint_residuals,
    kinetic_energy,
    linear_momentum,
    nonconservative_power,
    potential_energy,
    total_energy,
)
from mbslib.model import AppliedLoad, BodyStates, Constant, Gravity, Joint, Model, RigidBody, Spring
from mbslib.rotations import exp_so3


def two_bodies(kind, rng):
    R0 = [Rotation.random(random_state=k).as_matrix() for k in (1, 2)]
    bodies = (RigidBody("a", 2.0, [1.0, 2.0, 3.0], position=rng.normal(size=3), rotation=R0[0]),
              RigidBody("b", 3.0, [[2.0, 0.1, 0], [0.1, 1.5, 0], [0, 0, 1.0]], position=rng.normal(size=3),
                        rotation=R0[1]))
    axes = {} if kind == "spherical" else {"axis_a": rng.normal(size=3), "axis_b": rng.normal(size=3)}
    joints = (Joint(kind, 0, 1, rng.normal(size=3), rng.normal(size=3), **axes),
              Joint(kind, None, 0, rng.normal(size=3), rng.normal(size=3), **axes))
    return Model(bodies, joints, gravity=Gravity([0, 0, -9.81]),
                 springs=(Spring(0, 1, [0.1, 0, 0], [0, 0.2, 0], stiffness=50.0, rest_length=0.3),))


def motion(model, t, rng_seed=0):
    """A smooth motion with constant body angular velocities (Ṙ = R Ω̂ exactly)."""
    rng = np.random.default_rng(rng_seed)
    N = model.n_bodies
    x0, v0, a = rng.normal(size=(N, 3)), rng.normal(size=(N, 3)), rng.normal(size=(N, 3))
    Omega = rng.normal(size=(N, 3))
    t = np.atleast_1d(t)
    position = x0 + v0 * t[:, None, None] + 0.5 * a * t[:, None, None] ** 2
    velocity = v0 + a * t[:, None, None]
    rotation = np.array([[b.rotation @ exp_so3(tk * Omega[n]) for n, b in enumerate(model.bodies)] for tk in t])
    return BodyStates(t, position, rotation, velocity, np.broadcast_to(Omega, (len(t), N, 3)).copy())


@pytest.mark.parametrize("kind", ["spherical", "revolute", "universal", "prismatic"])
def test_constraint_rates_are_the_time_derivatives_of_the_residuals(kind):
    model = two_bodies(kind, np.random.default_rng(3))
    t, eps = 0.37, 1e-6
    fd = (constraint_residuals(model, motion(model, t + eps)) - constraint_residuals(model, motion(model, t - eps))) / (
        2 * eps)
    rates = constraint_rates(model, motion(model, t))
    assert rates.shape == (1, model.n_constraints) == (1, 2 * {"spherical": 3, "revolute": 5, "universal": 4,
                                                              "prismatic": 5}[kind])
    np.testing.assert_allclose(rates[0], fd[0], rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize("kind", ["spherical", "revolute", "universal", "prismatic"])
def test_a_consistent_assembly_has_zero_residuals(kind):
    """Body b placed so that the joint holds: residuals vanish to round-off."""
    R_a = Rotation.from_rotvec([0.3, -0.2, 0.5]).as_matrix()
    axis = np.array([0.0, 0.0, 1.0])
    a = RigidBody("a", 1.0, [1, 1, 1], position=[0.5, 0, 0], rotation=R_a)
    p_a, p_b = np.array([0.2, 0.1, 0.0]), np.array([-0.3, 0.0, 0.1])
    axis_b = axis if kind != "universal" else np.array([1.0, 0.0, 0.0])
    b_rotation = R_a
    b = RigidBody("b", 1.0, [1, 2, 3], position=a.position + R_a @ p_a - b_rotation @ p_b, rotation=b_rotation)
    joint = Joint(kind, 0, 1, p_a, p_b, **({} if kind == "spherical" else {"axis_a": axis, "axis_b": axis_b}))
    model = Model((a, b), (joint,))
    assert np.abs(constraint_residuals(model, model.initial_states())).max() < 1e-15


def test_energies_and_momenta_of_one_body_by_hand():
    R = Rotation.from_rotvec([0.1, 0.4, -0.3]).as_matrix()
    J = np.array([[2.0, 0.1, 0.0], [0.1, 3.0, 0.2], [0.0, 0.2, 4.0]])
    body = RigidBody("top", 1.5, J, position=[0.1, 0.2, 0.3], rotation=R, velocity=[1.0, -2.0, 0.5],
                     angular_velocity=[3.0, 1.0, -2.0])
    model = Model((body,), gravity=Gravity([0, 0, -9.81]))
    s = model.initial_states()
    v, W, x = body.velocity, body.angular_velocity, body.position
    assert kinetic_energy(model, s)[0] == pytest.approx(0.5 * 1.5 * v @ v + 0.5 * W @ J @ W, rel=1e-15)
    assert potential_energy(model, s)[0] == pytest.approx(1.5 * 9.81 * 0.3, rel=1e-15)
    assert total_energy(model, s)[0] == pytest.approx(kinetic_energy(model, s)[0] + potential_energy(model, s)[0])
    np.testing.assert_allclose(linear_momentum(model, s)[0], 1.5 * v, rtol=1e-15)
    np.testing.assert_allclose(angular_momentum(model, s)[0], np.cross(x, 1.5 * v) + R @ J @ W, rtol=1e-14)
    np.testing.assert_allclose(angular_momentum(model, s, about=x)[0], R @ J @ W, rtol=1e-14)


def test_spring_potential():
    a = RigidBody("a", 1.0, [1, 1, 1])
    b = RigidBody("b", 1.0, [1, 1, 1], position=[2.0, 0, 0])
    spring = Spring(0, 1, [0.5, 0, 0], [-0.5, 0, 0], stiffness=10.0, rest_length=0.25)
    model = Model((a, b), springs=(spring,))
    assert potential_energy(model, model.initial_states())[0] == pytest.approx(0.5 * 10.0 * 0.75**2)


@pytest.mark.parametrize("make, match", [
    (lambda: RigidBody("a", -1.0, [1, 1, 1]), "mass"),
    (lambda: RigidBody("a", 1.0, [1, -1, 1]), "inertia"),
    (lambda: RigidBody("a", 1.0, [1, 1, 1], rotation=2 * np.eye(3)), "rotation"),
    (lambda: RigidBody("a", 1.0, [1, 1, 1], velocity=[1, 2]), "velocity"),
    (lambda: RigidBody("", 1.0, [1, 1, 1]), "name"),
    (lambda: Joint("hinge", None, 0, [0, 0, 0], [0, 0, 0]), "kind"),
    (lambda: Joint("revolute", None, 0, [0, 0, 0], [0, 0, 0]), "axis_a"),
    (lambda: Joint("revolute", None, 0, [0, 0, 0], [0, 0, 0], axis_a=[0, 0, 1], axis_b=[0, 0, 0]), "axis_b"),
    (lambda: Joint("spherical", 1, 1, [0, 0, 0], [0, 0, 0]), "body_a and body_b"),
    (lambda: Spring(None, 0, [0, 0, 0], [0, 0, 0], stiffness=-1.0), "stiffness"),
    (lambda: Model((RigidBody("a", 1.0, [1, 1, 1]),), (Joint("spherical", None, 1, [0, 0, 0], [0, 0, 0]),)),
     r"joints\[0\].body_b"),
    (lambda: Model((RigidBody("a", 1.0, [1, 1, 1]), RigidBody("a", 1.0, [1, 1, 1]))), "unique"),
    (lambda: Model(()), "bodies"),
    (lambda: Constant([1.0, 2.0]), "value"),
    (lambda: Constant([1.0, np.nan, 0.0]), "value"),
])
def test_bad_parameters_are_named(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_body_states_check_shapes():
    with pytest.raises(ValueError, match="rotation"):
        BodyStates(np.zeros(2), np.zeros((2, 1, 3)), np.zeros((2, 1, 3)), np.zeros((2, 1, 3)), np.zeros((2, 1, 3)))


def test_a_constant_torque_is_a_load_whose_power_is_its_work_rate():
    """``Constant(τ)`` returns ``τ`` at every instant; its power is ``τ · R Ω`` (world frame)."""
    torque = np.array([0.3, -1.0, 2.0])
    body = RigidBody("a", 2.0, [1.0, 2.0, 3.0], rotation=Rotation.random(random_state=3).as_matrix(),
                     angular_velocity=[0.5, -2.0, 1.5])
    model = Model((body,), loads=(AppliedLoad(0, torque=Constant(torque)),))
    states = motion(model, np.linspace(0.0, 1.0, 5))
    spin = np.einsum("tij,tj->ti", states.rotation[:, 0], states.angular_velocity[:, 0])
    assert np.allclose(nonconservative_power(model, states), spin @ torque, rtol=1e-14, atol=0.0)
    assert Constant(torque)(0.7, states.at(2)) is not torque and np.array_equal(Constant(torque)(0.7, None), torque)
