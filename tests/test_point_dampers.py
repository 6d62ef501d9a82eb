"""Point dampers (:class:`mbslib.model.PointDamper`): their records, the power the description
gives them, and what the formulations make of them: the rotor's specialised kernel (absolute
coordinates, paper 002; its energy balance: tests/test_lie_group_descriptions.py) and the constant
damping matrix ``C = c DᵀD`` of the director systems (papers 001 and 004), which dissipates along a
run what the description says."""

from dataclasses import replace

import numpy as np
import pytest
from scipy.integrate import simpson
from scipy.spatial.transform import Rotation

from mbslib.diagnostics import nonconservative_power, total_energy
from mbslib.formulations import directors as fd
from mbslib.formulations import lie_group
from mbslib.formulations.quaternions import QuaternionSystem
from mbslib.formulations.rodrigues import PivotedRodriguesSystem, RodriguesSystem
from mbslib.integrators import ggl
from mbslib.model import Gravity, Joint, Model, PointDamper, RigidBody, Spring
from mbslib.reference import reference_states
from mbslib.simulate import simulate
from mbslib.systems import ggl_examples as ex
from mbslib.systems import lie_group_mbs as L

pytestmark = pytest.mark.filterwarnings("ignore::numba.NumbaExperimentalFeatureWarning")

RNG = np.random.default_rng(20261124)
INERTIA = [[0.3, 0.02, 0.0], [0.02, 0.4, 0.01], [0.0, 0.01, 0.5]]


def _free_pair(rng):
    """Two free bodies in general poses and motions, a damper between them and one to the ground."""
    bodies = tuple(RigidBody(name, mass, INERTIA, position=rng.normal(size=3), rotation=Rotation.random(
        random_state=rng).as_matrix(), velocity=rng.normal(size=3), angular_velocity=rng.normal(size=3))
        for name, mass in (("a", 2.0), ("b", 1.5)))
    dampers = (PointDamper(0, 1, [0.1, -0.2, 0.3], [-0.3, 0.1, 0.2], 0.8),
               PointDamper(None, 1, [1.0, 2.0, 3.0], [0.2, 0.0, -0.1], 0.5))
    return Model(bodies, dampers=dampers)


def _rotation_z(angle):
    return Rotation.from_rotvec([0.0, 0.0, angle]).as_matrix()


def _planar_pair(rng):
    """Two bodies in the x–y plane (principal axes off the body axes), moving in it, damped."""
    inertia = [[0.2, 0.05, 0.0], [0.05, 0.3, 0.0], [0.0, 0.0, 0.45]]
    bodies = tuple(RigidBody(name, 1.0, inertia, position=[*rng.normal(size=2), 0.0],
                             rotation=_rotation_z(rng.normal()), velocity=[*rng.normal(size=2), 0.0],
                             angular_velocity=[0.0, 0.0, rng.normal()]) for name in "ab")
    dampers = (PointDamper(0, 1, [0.4, -0.1, 0.0], [-0.2, 0.3, 0.0], 0.7),
               PointDamper(None, 0, [0.5, 0.5, 0.0], [0.1, 0.2, 0.3], 0.3))
    return Model(bodies, dampers=dampers)


# --- the record ----------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs, name", [
    (dict(damping=-1.0), "damping"),
    (dict(damping=np.nan), "damping"),
    (dict(point_a=[0.0, 0.0]), "point_a"),
    (dict(point_b=[0.0, np.inf, 0.0]), "point_b"),
    (dict(body_a=1), "body_a and body_b"),
])
def test_bad_dampers_are_named(kwargs, name):
    arguments = dict(body_a=None, body_b=1, point_a=[0.0, 0.0, 0.0], point_b=[0.0, 0.0, 0.0], damping=1.0) | kwargs
    with pytest.raises(ValueError, match=name):
        PointDamper(**arguments)


def test_a_model_names_its_bad_dampers():
    body = RigidBody("b", 1.0, [1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match=r"dampers\[0\]\.body_b = 3"):
        Model((body,), dampers=(PointDamper(None, 3, [0, 0, 0], [0, 0, 0], 1.0),))
    with pytest.raises(ValueError, match=r"body_b must be a body index"):
        PointDamper(0, None, [0, 0, 0], [0, 0, 0], 1.0)  # the ground is body_a
    with pytest.raises(ValueError, match=r"dampers\[0\] must be a PointDamper, got Spring"):
        Model((body,), dampers=(Spring(None, 0, [0, 0, 0], [0, 0, 0], 1.0),))


def test_the_description_gives_a_damper_its_power():
    """``−c |v_b − v_a|²`` with the points' velocities ``u + R(Ω × p)`` (a ground point at rest)."""
    model = _free_pair(RNG)
    a, b = model.bodies
    (inner, ground) = model.dampers

    def velocity(body, point):
        return body.velocity + body.rotation @ np.cross(body.angular_velocity, point)

    slip = velocity(b, inner.point_b) - velocity(a, inner.point_a)
    expected = -inner.damping * slip @ slip - ground.damping * velocity(b, ground.point_b) @ velocity(b, ground.point_b)
    assert nonconservative_power(model, model.initial_states())[0] == pytest.approx(expected, rel=1e-14)


# --- director formulations: C = c DᵀD ---------------------------------------------------


@pytest.mark.parametrize("planar", [False, True], ids=["3-D", "planar"])
def test_the_director_damping_matrix_is_the_descriptions_damper(planar):
    """``−q̇ᵀC q̇`` is the description's power at any rigid motion (both computed independently:
    directors ``D q̇``, the description ``u + R(Ω × p)``); C is symmetric (to round-off) positive semi-definite and
    is the derivative of the damping force ``−c Dᵀ(v_b − v_a)`` by central differences of the
    body velocities (the force is linear in them)."""
    for _ in range(4):
        model = _planar_pair(RNG) if planar else _free_pair(RNG)
        system = fd.planar_director_system(model) if planar else fd.director_system(model)
        _, qdot = (fd.planar_initial_coordinates if planar else fd.initial_coordinates)(model)
        C = system.C.toarray()
        power = nonconservative_power(model, model.initial_states())[0]
        assert -qdot @ C @ qdot == pytest.approx(power, rel=1e-12)
        assert np.abs(C - C.T).max() <= 1e-15 * np.abs(C).max()
        assert np.linalg.eigvalsh(C).min() > -1e-14 * np.abs(C).max()
    # the Rayleigh function ½ Σ c |v_b − v_a|² = −½ power: its Hessian in the body velocities ξ is TᵀCT,
    # T = ∂q̇/∂ξ; central differences of its gradient
    def rates(xi):
        bodies = tuple(replace(body, velocity=[*x[:2], 0.0] if planar else x[:3],
                               angular_velocity=[0.0, 0.0, x[2]] if planar else x[3:])
                       for body, x in zip(model.bodies, np.split(xi, 2), strict=True))
        m = Model(bodies, dampers=model.dampers)
        return (fd.planar_initial_coordinates if planar else fd.initial_coordinates)(m)[1], m

    n, h = (6 if planar else 12), 1e-3
    xi = RNG.normal(size=n)
    rayleigh = lambda x: -0.5 * nonconservative_power(rates(x)[1], rates(x)[1].initial_states())[0]  # noqa: E731
    eye = np.eye(n)
    hessian = np.array([[(rayleigh(xi + h * (e + f)) - rayleigh(xi + h * (e - f)) - rayleigh(xi - h * (e - f))
                          + rayleigh(xi - h * (e + f))) / (4 * h * h) for f in eye] for e in eye])
    T = np.column_stack([(rates(xi + h * e)[0] - rates(xi - h * e)[0]) / (2 * h) for e in eye])
    assert np.abs(T.T @ C @ T - hessian).max() < 1e-8 * np.abs(hessian).max()


def _damped_double_pendulum():
    """Two bodies at rest on a ground spherical joint and one between them, under gravity, with a
    damper between them and one from the ground to the second body's far end."""
    R0, R1 = Rotation.from_rotvec([0.6, 0.2, 0.0]).as_matrix(), Rotation.from_rotvec([-0.3, 0.5, 0.1]).as_matrix()
    top, low = np.array([0.0, 0.0, 0.5]), np.array([0.0, 0.0, -0.5])  # joint points of each body
    x0 = -R0 @ top
    x1 = x0 + R0 @ low - R1 @ top
    bodies = (RigidBody("upper", 2.0, INERTIA, position=x0, rotation=R0),
              RigidBody("lower", 1.5, INERTIA, position=x1, rotation=R1))
    joints = (Joint("spherical", None, 0, [0.0, 0.0, 0.0], top), Joint("spherical", 0, 1, low, top))
    dampers = (PointDamper(0, 1, [0.2, 0.0, 0.0], [0.0, 0.3, 0.0], 0.6),
               PointDamper(None, 1, [0.0, 0.0, 0.0], low, 0.4))
    return Model(bodies, joints, Gravity([0.0, 0.0, -9.81]), dampers=dampers)


def test_the_director_system_dissipates_the_descriptions_damper_work():
    """Along damped GGL runs of a double pendulum in directors, the description's energy falls by
    the dampers' work ``∫ P dt`` (Simpson's rule on the nodes' velocities ``p/M``) up to an error of
    first order in h, which halves with h (the scheme's damping term ``−h C vⁿ`` of eq. 57b takes
    the step's velocity ``vⁿ``)."""
    model = _damped_double_pendulum()
    system = fd.director_system(model)
    mismatch = []
    for h in (1e-3, 5e-4):
        traj = simulate(lambda x, step, t: ggl.step_ggl(system, x, step, t), ggl.initial_vector(
            system, *fd.initial_coordinates(model)), h, 0.4)
        nodes = ggl.split_trajectory(system, traj)
        states = fd.body_states(model, nodes.t, nodes.q, nodes.p / system.M)
        E, work = total_energy(model, states), simpson(nonconservative_power(model, states), x=states.t)
        assert work < -0.05  # the dampers take a good part of the energy
        mismatch.append(abs(E[-1] - E[0] - work))
    assert mismatch[0] < 1e-3 * abs(work)
    assert 1.8 < mismatch[0] / mismatch[1] < 2.2  # first order: a wrong C would leave a gap as h → 0


def test_the_four_bar_dampers_are_the_papers_symmetric_matrix():
    """The point dampers of the linkage's description (P1–P5, P2–P6) give exactly the matrix
    η BᵀB of eqs. (77)-(80) (kind "symmetric"); the authors' "metis" matrix is no damper's: it is
    not symmetric."""
    params = ex.FourBarParams(eta=0.5, l=0.7)
    model = ex.double_four_bar_model(params)
    assert [(d.body_a, d.body_b, tuple(d.point_a), tuple(d.point_b), d.damping) for d in model.dampers] == [
        (None, 3, (0.0, 0.0, 0.0), (0.35, 0.0, 0.0), 0.5), (None, 4, (0.7, 0.0, 0.0), (0.35, 0.0, 0.0), 0.5)]
    C = fd.planar_director_system(model).C.toarray()
    np.testing.assert_array_equal(C, ex.four_bar_damping_matrix(params, "symmetric"))
    metis = ex.four_bar_damping_matrix(params, "metis")
    assert not np.array_equal(metis, metis.T)
    np.testing.assert_array_equal(ex.double_four_bar(params, "metis").C.toarray(), metis)
    assert not ex.double_four_bar_model(params._replace(eta=0.0)).dampers
    with pytest.raises(ValueError, match="damping"):
        ex.double_four_bar(params, "printed")


# --- absolute coordinates: the rotor's damped supports ----------------------------------


@pytest.mark.parametrize("code", [L.ROT_RV, L.ROT_RXYZ, L.ROT_EP])
def test_the_damped_rotor_description_reaches_its_kernel(code):
    """``P`` of the damped rotor's description is the kernel's hand-made vector with ``d``."""
    rotor = L.Rotor(damping=3.0)
    model, _ = L.rotor_model(code, rotor)
    assert model.code == code
    np.testing.assert_array_equal(model.P, L.rotor_params(rotor.mass, rotor.inertia, rotor.support, rotor.stiffness,
                                                          3.0, rotor.torque))


def test_point_dampers_elsewhere_are_refused_by_name():
    """The general multibody kernel has no point damper; rotor dampers off the supports or of
    unequal d are not the rotor's kernel."""
    with pytest.raises(NotImplementedError, match=r"dampers\[0\]"):
        lie_group.absolute_model(_free_pair(RNG), "RV")
    damped = L.Rotor(damping=3.0).description()
    first, second = damped.dampers
    for dampers in ((first,), (first, replace(second, damping=2.0)), (first, replace(second, point_b=[0.1, 0.0, 0.0]))):
        with pytest.raises(NotImplementedError, match="applied loads"):  # not the rotor: the general kernel
            lie_group.absolute_model(replace(damped, dampers=dampers), "RV")
    with pytest.raises(NotImplementedError, match="applied loads"):
        lie_group.absolute_model(damped, "RV", specialised=False)
    pendulum = Model((RigidBody("b", 1.0, INERTIA, position=[0.0, 0.0, -0.5]),),
                     (Joint("spherical", None, 0, [0.0, 0.0, 0.0], [0.0, 0.0, 0.5]),), Gravity([0.0, 0.0, -9.81]),
                     dampers=(PointDamper(None, 0, [0.0, 0.0, 0.0], [0.1, 0.0, 0.0], 1.0),))
    with pytest.raises(ValueError, match="1 dampers"):
        lie_group.absolute_model(pendulum, "RV", about_pivot=True)
    with pytest.raises(NotImplementedError, match="dampers"):
        QuaternionSystem(pendulum)
    with pytest.raises(NotImplementedError, match="dampers"):
        reference_states(pendulum, [0.0, 0.1])
    with pytest.raises(ValueError, match="dampers"):
        PivotedRodriguesSystem(pendulum)
    with pytest.raises(ValueError, match="dampers"):
        RodriguesSystem(replace(pendulum, joints=()))
    with pytest.raises(ValueError, match="dampers"):
        fd.nontwisting_body(replace(pendulum, joints=(), gravity=None))
