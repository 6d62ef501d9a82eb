"""Paper 002's heavy top and rotor as coordinate-free descriptions (:mod:`mbslib.model`), and what
the absolute coordinates (:mod:`mbslib.formulations.lie_group`) make of them: the specialised
kernels with the paper's parameters, moving as the general multibody kernel, the reference
solution and the energy balance of the description say."""

from dataclasses import replace

import numpy as np
import pytest
from scipy.integrate import simpson
from scipy.spatial.transform import Rotation

from mbslib.diagnostics import nonconservative_power, total_energy
from mbslib.formulations import lie_group
from mbslib.integrators import generalized_alpha as ga
from mbslib.integrators import runge_kutta as rk
from mbslib.integrators.tableaux import RK67
from mbslib.model import Gravity, Joint, Model, RigidBody
from mbslib.reference import reference_states
from mbslib.systems import lie_group_mbs as L

# numba announces first-class function types (the kernel bundles) as experimental when it compiles
pytestmark = pytest.mark.filterwarnings("ignore::numba.NumbaExperimentalFeatureWarning")

FORMS = ("RV", "Rxyz", "EP")
TOP, ROTOR = L.HeavyTop(), L.Rotor()


def test_the_paper_values_reach_the_kernels():
    """``P`` and ``x₀`` of the descriptions are the paper's values in the kernels' layout (R₀ = I:
    Rxyz ``φ̇₀ = ω₀``, EP ``ṗ₀ = ½ [0; ω₀]``; with the joint ``x₀ = X``, ``u₀ = ω₀ × X``)."""
    P_top = np.r_[15.0, np.diag([0.234375, 0.46875, 0.234375]).ravel(), 0.0, 1.0, 0.0, 0.0, 0.0, -9.81]
    w = TOP.omega0
    rotations = {"RV": (np.zeros(3), w), "Rxyz": (np.zeros(3), w), "EP": (np.r_[1.0, 0, 0, 0], np.r_[0.0, 0.5 * w])}
    for code in range(L.ROT_RV):
        model, x0 = L.heavy_top_model(code, TOP)
        (rot, rate), X = rotations[L.FORMULATION[code]], TOP.com
        expected = np.r_[rot, rate] if code <= L.TOP_EP else np.r_[X, rot, np.cross(w, X), rate]
        assert model.code == code and np.array_equal(model.P, P_top) and np.array_equal(x0, expected)
    assert np.array_equal(L.heavy_top_model(L.SPH_EP, TOP, ep_jacobian="tangent")[0].P, np.r_[P_top, 1.0])
    r = ROTOR
    P_rotor = np.r_[r.mass, r.inertia.ravel(), r.support, r.stiffness, 0.0, 0.0, 0.0, (r.length / 2 - r.support)
                    * r.mass * r.gravity]
    for code in (L.ROT_RV, L.ROT_RXYZ, L.ROT_EP):
        model, x0 = L.rotor_model(code, r)
        spin = np.r_[r.spin, 0.0, 0.0]  # at rest at the origin, R₀ = I, spinning about body x
        rot, rate = {"RV": (np.zeros(3), spin), "Rxyz": (np.zeros(3), spin),
                     "EP": (np.r_[1.0, 0, 0, 0], np.r_[0.0, 0.5 * spin])}[L.FORMULATION[code]]
        assert model.code == code and np.array_equal(model.P, P_rotor)
        assert np.array_equal(x0, np.r_[np.zeros(3), rot, np.zeros(3), rate])


def _moved(model, shift):
    """The model moved by ``shift``: its ground points and bodies."""
    bodies = tuple(replace(b, position=b.position + shift) for b in model.bodies)
    joints = tuple(replace(j, point_a=j.point_a + shift) for j in model.joints)
    springs = tuple(replace(s, point_a=s.point_a + shift) for s in model.springs)
    return Model(bodies, joints, model.gravity, springs)


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("paper", ["top", "rotor"])
def test_the_specialised_kernels_move_as_the_general_one(paper, form):
    """At the origin the description runs on the specialised kernel, moved away on the general
    multibody kernel; the motions agree (shifted). The rotor without its torque: the general
    kernel takes no applied loads, and off its steady spin."""
    model = TOP.description()
    if paper == "rotor":
        (body,) = ROTOR.description().bodies
        body = replace(body, position=[1e-3, 2e-3, -1e-3], velocity=[0.01, -0.02, 0.03],
                       angular_velocity=body.angular_velocity + [0.0, 3.0, -2.0])
        model = replace(ROTOR.description(), bodies=(body,), loads=())
    shift = np.array([0.3, -0.2, 0.5])
    moved = _moved(model, shift)
    special, general = lie_group.absolute_model(model, form), lie_group.absolute_model(moved, form)
    offset = lie_group.FORMS[form]
    assert special.code == (L.SPH_RV if paper == "top" else L.ROT_RV) + offset and general.code == L.MB_RV + offset
    h, t_end = (1e-3, 0.05) if paper == "top" else (1e-4, 0.01)
    a = ga.integrate_genalpha(special, lie_group.initial_state(model, form), h, t_end)
    b = ga.integrate_genalpha(general, lie_group.initial_state(moved, form), h, t_end)
    sa = lie_group.body_states(model, form, a.t_final, a.q, a.v)
    sb = lie_group.body_states(moved, form, b.t_final, b.q, b.v)
    assert np.allclose(sa.position + shift, sb.position, rtol=0.0, atol=1e-11)
    assert np.allclose(sa.rotation, sb.rotation, rtol=0.0, atol=1e-11)
    assert np.allclose(sa.angular_velocity, sb.angular_velocity, rtol=1e-11, atol=1e-9)


def _pinned_body():
    """A tilted body with a full inertia tensor (principal frame V ≠ I) on a pivot off the origin."""
    R0 = Rotation.random(random_state=7).as_matrix()
    pivot, point, Omega = np.array([0.1, 0.2, 0.3]), np.array([0.05, -0.02, -0.4]), np.array([1.0, -2.0, 6.0])
    inertia = [[0.3, 0.02, 0.01], [0.02, 0.25, -0.03], [0.01, -0.03, 0.1]]
    body = RigidBody("b", 2.0, inertia, position=pivot - R0 @ point, rotation=R0,
                     velocity=-R0 @ np.cross(Omega, point), angular_velocity=Omega)
    return Model((body,), (Joint("spherical", None, 0, pivot, point),), gravity=Gravity([0.0, -3.0, -9.81]))


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("about_pivot", [False, True])
def test_initial_states_map_back_to_the_description(form, about_pivot):
    """``body_states`` of ``initial_state`` is the description's initial state, about the pivot or
    not, with a principal frame V ≠ I (the general kernel: the pivot is off the origin)."""
    model = _pinned_body()
    x0 = lie_group.initial_state(model, form, about_pivot=about_pivot)
    n = lie_group.absolute_model(model, form, about_pivot=about_pivot).n
    assert x0.size == 2 * n
    states, expected = lie_group.body_states(model, form, 0.0, x0[:n], x0[n:], about_pivot=about_pivot), \
        model.initial_states()
    for name in ("position", "rotation", "velocity", "angular_velocity"):
        assert np.allclose(getattr(states, name), getattr(expected, name), rtol=0.0, atol=1e-13), name


@pytest.mark.parametrize("form", ["RV", "Rxyz"])
def test_the_top_about_its_pivot_follows_the_reference(form):
    """RK67 on the rotation coordinates about the pivot (the heavy-top kernel about the fixed point)
    gives the reference motion of the description."""
    model = _pinned_body()
    absolute = lie_group.absolute_model(model, form, about_pivot=True)
    assert absolute.code == L.TOP_RV + lie_group.FORMS[form] and absolute.n_constraints == 0
    res = rk.integrate_explicit(absolute, lie_group.initial_state(model, form, about_pivot=True), RK67, 1e-3, 0.2)
    ours = lie_group.body_states(model, form, res.t_final, res.q, res.v, about_pivot=True)
    ref = reference_states(model, [0.0, 0.2]).at(-1)
    for name in ("position", "rotation", "velocity", "angular_velocity"):
        assert np.allclose(getattr(ours, name), getattr(ref, name), rtol=0.0, atol=1e-9), name


@pytest.mark.parametrize("damping", [0.0, 20.0], ids=["undamped", "damped"])
def test_the_rotor_torque_does_the_work_of_the_description(damping):
    """The energy of the rotor's description changes by the work of its constant torque (eq. 44,
    inertial frame), ``∫ t · R Ω dt``, and of its point dampers (``−d |v|²`` at each support),
    along an RK67 run of the rotor kernel."""
    model = replace(ROTOR, damping=damping).description()
    absolute, h = lie_group.absolute_model(model, "RV"), 1e-4
    x = [lie_group.initial_state(model, "RV")]
    for _ in range(1000):  # step by step: the compiled loop records the support point, not the state
        res = rk.integrate_explicit(absolute, x[-1], RK67, h, h)
        x.append(np.r_[res.q, res.v])
    x = np.array(x)
    states = lie_group.body_states(model, "RV", h * np.arange(len(x)), x[:, :6], x[:, 6:])
    E, power = total_energy(model, states), nonconservative_power(model, states)
    work = simpson(power, x=states.t)
    assert abs(work) > 1e-3  # the torque does work
    if damping:  # and the dampers take some
        assert simpson(nonconservative_power(replace(model, loads=()), states), x=states.t) < -1e-4
    assert abs(E[-1] - E[0] - work) < 1e-6 * abs(work)


def test_what_the_specialised_kernels_do_not_take_is_named():
    assert lie_group.absolute_model(TOP.description(), "EP", specialised=False).code == L.MB_EP
    with pytest.raises(ValueError, match="specialised"):
        lie_group.absolute_model(TOP.description(), "RV", about_pivot=True, specialised=False)
    free = Model((RigidBody("b", 1.0, [1.0, 2.0, 3.0]),))
    with pytest.raises(ValueError, match="about_pivot"):
        lie_group.absolute_model(free, "RV", about_pivot=True)
    model = _pinned_body()
    (body,) = model.bodies
    with pytest.raises(ValueError, match="about_pivot.*initial position and velocity"):
        lie_group.initial_state(Model((replace(body, velocity=body.velocity + 0.1),), model.joints,
                                      model.gravity), "RV", about_pivot=True)
    with pytest.raises(ValueError, match="SPH_EP"):
        lie_group.absolute_model(TOP.description(), "RV", ep_jacobian="tangent")
    with pytest.raises(ValueError, match="SPH_EP"):
        L.heavy_top_model(L.TOP_EP, ep_jacobian="tangent")
    with pytest.raises(ValueError, match="ep_jacobian"):
        lie_group.absolute_model(TOP.description(), "EP", ep_jacobian="approximate")
    with pytest.raises(NotImplementedError, match="applied loads"):  # gravity: not the rotor's kernel
        lie_group.absolute_model(replace(ROTOR.description(), gravity=Gravity([0.0, 0.0, -9.81])), "RV")
    with pytest.raises(ValueError, match="heavy-top"):
        L.heavy_top_model(L.ROT_RV)
