"""Tests of :mod:`mbslib.formulations.joint_coordinates`: the DH table, centres of mass and
inertias that :func:`joint_model` reads off a description are the ones it was built from (the
Puma 560 of paper 002 and random chains in random world frames), the chain kernel's dynamics
are the description's, joint angles map to the description's body states and back, and what is
not a serial chain of revolute joints is refused by name."""

import dataclasses

import numpy as np
import pytest

from mbslib import diagnostics
from mbslib import model as md
from mbslib.formulations.joint_coordinates import joint_model
from mbslib.rotations import exp_so3
from mbslib.systems import puma560 as pm

ROBOT = pm.Puma560()
PHI_INIT = np.deg2rad(ROBOT.phi_init_deg)


def _table(robot):
    """The chain entries of the kernel's parameter vector straight from the robot's DH table."""
    f = lambda v: np.asarray(v, dtype=float).ravel()  # noqa: E731
    return np.concatenate([f(robot.dh_d), f(robot.dh_a), f(robot.dh_alpha), f(robot.masses), f(robot.coms),
                           f(robot.inertias), [robot.gravity]])


def _moved(model, Q, b, C):
    """``model`` in a world frame turned by ``Q`` and shifted by ``b``, body k's frame turned by
    ``C[k]`` (so its inertia is ``C[k]ᵀ J C[k]``)."""
    bodies = tuple(dataclasses.replace(x, position=Q @ x.position + b, rotation=Q @ x.rotation @ C[k],
                                       inertia=C[k].T @ x.inertia @ C[k]) for k, x in enumerate(model.bodies))
    joints = []
    for j in model.joints:
        if j.body_a is None:
            a = dict(point_a=Q @ j.point_a + b, axis_a=Q @ j.axis_a)
        else:
            a = dict(point_a=C[j.body_a].T @ j.point_a, axis_a=C[j.body_a].T @ j.axis_a)
        joints.append(dataclasses.replace(j, point_b=C[j.body_b].T @ j.point_b, axis_b=C[j.body_b].T @ j.axis_b, **a))
    return md.Model(bodies, tuple(joints), md.Gravity(Q @ model.gravity.g))


def _random_robot(rng):
    """A six-joint chain with random DH table (skew axes, a₁ > 0, negative a and d allowed),
    centres of mass, principal inertias and initial angles."""
    return pm.Puma560(dh_d=tuple(np.r_[rng.uniform(-0.5, 0.5, 5), 0.0]),
                      dh_a=tuple(np.r_[rng.uniform(0.1, 0.5), rng.uniform(-0.5, 0.5, 4), 0.0]),
                      dh_alpha=tuple(np.r_[rng.choice([-1, 1], 5) * rng.uniform(0.3, 2.8, 5), 0.0]),
                      masses=tuple(rng.uniform(0.5, 5.0, 6)), coms=tuple(map(tuple, rng.uniform(-0.2, 0.2, (6, 3)))),
                      inertias=tuple(map(tuple, rng.uniform(0.01, 0.2, (6, 3)))),
                      phi_init_deg=tuple(rng.uniform(-170, 170, 6)))


def _random_rotation(rng):
    return exp_so3(rng.normal(size=3))


def _angles_of(chain, s):
    """Joint angles read back from body rotations: θ_k from x_{k−1} to x_k about z_{k−1}."""
    frames = np.concatenate([chain.base_rotation[None], s.rotation[0] @ np.transpose(chain.body_rotations, (0, 2, 1))])
    return np.array([np.arctan2(np.cross(frames[k][:, 0], frames[k + 1][:, 0]) @ frames[k][:, 2],
                                frames[k][:, 0] @ frames[k + 1][:, 0]) for k in range(chain.n)])


def test_puma_parameters_are_its_dh_table():
    chain = joint_model(ROBOT.description(), PHI_INIT)
    assert np.allclose(chain.params(), _table(ROBOT), rtol=0, atol=1e-15)
    assert np.array_equal(chain.base_rotation, np.eye(3)) and np.array_equal(chain.base_origin, np.zeros(3))
    assert np.allclose(chain.body_rotations, np.eye(3), rtol=0, atol=1e-15)
    assert np.allclose(chain.initial_state(), ROBOT.initial_state(), rtol=0, atol=0)
    P = ROBOT.params()
    assert np.array_equal(P[:61], chain.params())
    assert np.array_equal(ROBOT.params(profile=False)[:61], chain.params())


def test_puma_kernel_dynamics_from_the_description_are_the_tables(rng):
    """Mass matrix and bias (Coriolis, centrifugal, gravity) of the derived parameters against
    those of the DH table, at random joint states."""
    P = ROBOT.params()
    P_table = np.concatenate([_table(ROBOT), P[61:]])
    for _ in range(5):
        phi, dphi = rng.uniform(-np.pi, np.pi, 6), rng.normal(scale=2.0, size=6)
        assert np.allclose(pm.chain_mass_matrix(P, phi), pm.chain_mass_matrix(P_table, phi), rtol=0, atol=1e-14)
        assert np.allclose(pm.chain_bias(P, phi, dphi), pm.chain_bias(P_table, phi, dphi), rtol=1e-13, atol=1e-12)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_chain_in_a_random_world_frame(seed):
    """A random chain, turned and shifted as a whole (gravity with it) and with every body frame
    turned: the DH table, centres of mass and inertias come back, frame 0 is the moved base,
    the body frames the turns; the kernel's kinetic and potential energy are the description's."""
    rng = np.random.default_rng(seed)
    robot = _random_robot(rng)
    Q, b, C = _random_rotation(rng), rng.normal(size=3), [_random_rotation(rng) for _ in range(6)]
    model = _moved(robot.description(), Q, b, C)
    angles = np.deg2rad(robot.phi_init_deg)
    chain = joint_model(model, angles)
    assert np.allclose(chain.params(), _table(robot), rtol=0, atol=1e-12)
    assert np.allclose(chain.base_rotation, Q, rtol=0, atol=1e-12)
    assert np.allclose(chain.base_origin, b, rtol=0, atol=1e-12)
    assert np.allclose(chain.body_rotations, C, rtol=0, atol=1e-12)
    P = np.concatenate([chain.params(), robot.params()[61:]])
    for _ in range(3):
        phi, dphi = rng.uniform(-np.pi, np.pi, 6), rng.normal(size=6)
        s = chain.body_states(0.0, phi[None], dphi[None])
        kinetic = 0.5 * dphi @ pm.chain_mass_matrix(P, phi) @ dphi
        assert np.isclose(diagnostics.kinetic_energy(model, s)[0], kinetic, rtol=1e-12)
        grad = pm.chain_bias(P, phi, np.zeros(6))  # ∂V/∂φ
        e = np.eye(6) * 1e-6
        fd = [(diagnostics.potential_energy(model, chain.body_states(0.0, (phi + e[k])[None], dphi[None]))[0]
               - diagnostics.potential_energy(model, chain.body_states(0.0, (phi - e[k])[None], dphi[None]))[0]) / 2e-6
              for k in range(6)]
        assert np.allclose(grad, fd, rtol=1e-7, atol=1e-7)


def test_body_states_round_trip(rng):
    """Joint angles and rates → body states (the Puma's plain-numpy kinematics, the description's
    joints hold at position and velocity level) → joint angles again; at the initial state the
    description's initial states."""
    description = ROBOT.description()
    chain = joint_model(description, PHI_INIT)
    s0 = chain.body_states(0.0, PHI_INIT[None], np.zeros((1, 6)))
    i0 = description.initial_states()
    for name in ("position", "rotation", "velocity", "angular_velocity"):
        assert np.allclose(getattr(s0, name), getattr(i0, name), rtol=0, atol=1e-15)
    phi = rng.uniform(-np.pi, np.pi, (4, 6))
    dphi = rng.normal(size=(4, 6))
    s = chain.body_states(np.arange(4.0), phi, dphi)
    for k in range(4):
        R, _ = ROBOT.link_frames(phi[k])
        v, w = ROBOT.link_velocities(phi[k], dphi[k])
        assert np.allclose(s.position[k], ROBOT.link_coms(phi[k]), rtol=0, atol=1e-14)
        assert np.allclose(s.rotation[k], R, rtol=0, atol=1e-14)
        assert np.allclose(s.velocity[k], v, rtol=0, atol=1e-13)
        assert np.allclose(s.angular_velocity[k], w, rtol=0, atol=1e-13)
        assert np.allclose(np.angle(np.exp(1j * (_angles_of(chain, s.at(k)) - phi[k]))), 0.0, atol=1e-13)
    assert np.max(np.abs(diagnostics.constraint_residuals(description, s))) < 1e-14
    assert np.max(np.abs(diagnostics.constraint_rates(description, s))) < 1e-13


def test_initial_rates_are_read_from_the_bodies():
    dphi = np.array([0.3, -0.2, 0.5, 1.0, -0.7, 0.4])
    description = ROBOT.description()
    s = joint_model(description, PHI_INIT).body_states(0.0, PHI_INIT[None], dphi[None])
    moving = md.Model(tuple(dataclasses.replace(x, velocity=s.velocity[0, k], angular_velocity=s.angular_velocity[0, k])
                            for k, x in enumerate(description.bodies)), description.joints, description.gravity)
    assert np.allclose(joint_model(moving, PHI_INIT).rates, dphi, rtol=0, atol=1e-14)


def _with(model, k=None, body=None, joint=None, **changes):
    bodies, joints = list(model.bodies), list(model.joints)
    if body is not None:
        bodies[k] = body
    if joint is not None:
        joints[k] = joint
    return dataclasses.replace(md.Model(tuple(bodies), tuple(joints), model.gravity), **changes)


@pytest.mark.parametrize("change, message", [
    (lambda m: _with(m, 2, joint=dataclasses.replace(m.joints[2], kind="spherical", axis_a=None, axis_b=None)),
     "joint 2 is 'spherical'"),
    (lambda m: _with(m, 3, joint=dataclasses.replace(m.joints[3], body_a=1)), "joint 3 joins body 1 to body 3"),
    (lambda m: _with(m, joints=m.joints[:5]), "5 joints, 6 bodies"),
    (lambda m: _with(m, springs=(md.Spring(0, 1, np.zeros(3), np.zeros(3), 1.0),)), "1 springs"),
    (lambda m: _with(m, dampers=(md.PointDamper(0, 1, np.zeros(3), np.zeros(3), 1.0),)), "1 dampers"),
    (lambda m: _with(m, gravity=md.Gravity((1.0, 0.0, -9.81))), "gravity"),
    (lambda m: _with(m, 1, body=dataclasses.replace(m.bodies[1], inertia=m.bodies[1].inertia + 0.01 * (1 - np.eye(3)))),
     "body 1 ('link 2')"),
    (lambda m: _with(m, 4, body=dataclasses.replace(m.bodies[4], position=m.bodies[4].position + 0.01)),
     "joint 4 does not hold in the initial state: position"),
])
def test_what_is_not_a_serial_revolute_chain_is_refused_by_name(change, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        joint_model(change(ROBOT.description()), PHI_INIT)


def test_angles_the_pose_cannot_have_are_refused():
    with pytest.raises(ValueError, match=r"joint 2: the initial pose has DH angle"):
        joint_model(ROBOT.description(), PHI_INIT + np.r_[0, 0, 0.3, 0, 0, 0])
    with pytest.raises(ValueError, match="angles"):
        joint_model(ROBOT.description(), PHI_INIT[:5])
