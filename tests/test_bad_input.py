"""Nothing wrong passes silently: the cases of the outside review (2026-12-02), each with its
documented error or health report."""

import warnings

import numpy as np
import pytest

from mbslib.consistent import InconsistentStart, gaps, make_consistent
from mbslib.diagnostics import constraint_rates, constraint_residuals, total_energy
from mbslib.exact import free_body_angular_velocity
from mbslib.methods import MethodRefusal, RunHealthWarning, solve
from mbslib.model import Gravity, Joint, Model, RigidBody
from mbslib.rotations import exp_so3
from mbslib.systems.benchmarks import FREE_BODY_INERTIA, tennis_racket


def _bar(name="bar", length=1.0, mass=2.0, **state):
    across, along = mass * (length**2 + 0.01) / 12, mass * 0.01 / 6
    return RigidBody(name, mass, [across, across, along], **state)


def _pendulum(gap=0.0, **state):
    """A bar hanging from the ground by a spherical joint at its top, ``gap`` [m] off the joint."""
    bar = _bar(position=[0.0, 0.0, -0.5 - gap], **state)
    return Model((bar,), (Joint("spherical", None, 0, [0, 0, 0], [0, 0, 0.5]),), gravity=Gravity([0, 0, -9.81]))


# -- physical validity at the description ------------------------------------------------------------

@pytest.mark.parametrize("inertia", [(1.0, 1.0, 5.0), (2.0, 3.0, 7.0)])
def test_an_inertia_no_rigid_body_has_is_refused_naming_the_body(inertia):
    with pytest.raises(ValueError, match=r"body 'b': inertia .* triangle inequality"):
        RigidBody("b", 1.0, inertia)


def test_a_flat_body_is_a_rigid_body_but_not_a_director_body():
    lamina = RigidBody("lamina", 1.0, (1.0, 2.0, 3.0), angular_velocity=[0.1, 1.0, 0.1])  # J3 = J1 + J2
    with pytest.raises(MethodRefusal, match="flat body"):
        solve(Model((lamina,)), "GGL-VI", 0.1, 1.0)
    assert solve(Model((lamina,)), "EML", 0.1, 1.0).ok


def test_a_papers_non_rigid_data_is_accepted_with_its_reason():
    body = RigidBody("link", 1.0, (1e-8, 1e-8, 0.35), inertia_not_rigid="the paper's data")
    assert body.inertia_not_rigid == "the paper's data"


@pytest.mark.parametrize("value", [0.5, True, "a", None])
def test_a_body_index_is_an_integer(value):
    with pytest.raises(ValueError, match="body_b must be a body index"):
        Joint("spherical", None, value, [0, 0, 0], [0, 0, 0])


def test_ground_must_be_none_not_false():
    with pytest.raises(ValueError, match="body_a must be a body index"):
        Joint("spherical", False, 0, [0, 0, 0], [0, 0, 0])


@pytest.mark.parametrize("field, value, match", [("mass", "2", "mass must be a finite positive number"),
                                                 ("mass", True, "mass must be a finite positive number"),
                                                 ("inertia", ["1", 2, 3], "inertia must hold real numbers"),
                                                 ("position", [0, 0], "position must have shape")])
def test_loose_types_give_an_error_naming_the_parameter(field, value, match):
    args = dict(name="b", mass=1.0, inertia=[1.0, 2.0, 2.5]) | {field: value}
    with pytest.raises(ValueError, match=match):
        RigidBody(**args)


def test_gravity_as_a_list_is_refused_with_the_record_to_use():
    with pytest.raises(ValueError, match=r"gravity must be a Gravity record, e.g. Gravity\(\[0, 0, -9.81\]\)"):
        Model((_bar(),), gravity=[0.0, 0.0, -9.81])


# -- consistent starts --------------------------------------------------------------------------------

def test_a_joint_violated_at_the_start_is_refused_and_can_be_made_consistent():
    """A 1 cm gap: every method refuses to snap it shut; make_consistent closes it by the smallest
    change and the run then conserves the description's energy."""
    model = _pendulum(gap=0.01, angular_velocity=[2.0, 0.0, 0.0])
    with pytest.raises(InconsistentStart, match=r"joints\[0\] \(spherical\) is violated at position level.*0\.01 m"):
        solve(model, "EML", 1e-3, 0.1)
    fixed, correction = make_consistent(model)
    assert correction.position_residual[0] == pytest.approx(0.01) and correction.position_residual[1] < 1e-13
    assert correction.velocity_residual[1] < 1e-13 and not gaps(fixed)
    run = solve(fixed, "EML", 1e-3, 0.1)
    energy = total_energy(fixed, run.states)
    assert np.ptp(energy) < 1e-4 * abs(energy[0])


def test_a_joint_violated_at_velocity_level_is_refused():
    model = _pendulum(velocity=[0.0, 1.0, 0.0])
    (gap,) = gaps(model)
    assert (gap.joint, gap.level, gap.gap) == (0, "velocity", pytest.approx(1.0))
    fixed, _ = make_consistent(model)
    assert np.abs(constraint_rates(fixed, fixed.initial_states())).max() < 1e-12


def test_hinge_axes_that_are_not_parallel_are_a_gap_at_the_start():
    bar = _bar(position=[0.0, 0.0, -0.5])
    tilted = [np.cos(0.5), np.sin(0.5), 0.0]  # 29° off the ground's axis
    hinge = Joint("revolute", None, 0, [0, 0, 0], [0, 0, 0.5], axis_a=[1.0, 0, 0], axis_b=tilted)
    model = Model((bar,), (hinge,), gravity=Gravity([0, 0, -9.81]))
    with pytest.raises(InconsistentStart, match="revolute"):
        solve(model, "gen-α RV", 1e-3, 0.01)
    fixed, correction = make_consistent(model)
    assert np.abs(constraint_residuals(fixed, fixed.initial_states())).max() < 1e-12
    assert abs(np.linalg.norm(correction.dtheta[0]) - 0.5) < 1e-9  # the body turns its axis onto the hinge


# -- run health ---------------------------------------------------------------------------------------

def test_tait_bryan_angles_through_gimbal_lock_are_reported():
    """The tennis racket turns through the attitude where Tait–Bryan angles are singular (at
    t ≈ 0.79 s): at h = 5 ms the run reaches its end with an attitude error of order one and says
    it went near the singularity, with the time (at h = 10 ms Newton fails there)."""
    racket = Model((RigidBody("racket", 1.0, (1.0, 2.0, 2.5), angular_velocity=[0.01, 2.0, 0.01]),))
    with pytest.warns(RunHealthWarning, match=r"singularity.*first at t = 0\.7"):
        run = solve(racket, "gen-α Rxyz", 5e-3, 20.0, throw=False)
    assert run.status == "unhealthy" and solve(racket, "gen-α Rxyz", 1e-2, 20.0, throw=False).status == "failed"


def test_reml_on_the_slender_pendulum_is_not_ok():
    """REML keeps its own energy while its nodal velocities carry the mode of chapter 000: the
    description's energy and the joints' rates say so."""
    yaw = np.deg2rad(30.0)
    R = exp_so3([0, 0, yaw]) @ np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]])
    bar = _bar(position=R @ [0, 0, 0.5], rotation=R, angular_velocity=[0.0, 0.0, 3.0])
    model = Model((bar,), (Joint("spherical", None, 0, [0, 0, 0], [0, 0, -0.5]),), gravity=Gravity([0, 0, -9.81]))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RunHealthWarning)
        run = solve(model, "REML", 2e-3, 3.0, throw=False, record_every=5)
    assert not run.ok and any("REML" in str(w.message) for w in caught)


# -- the same argument rules in every driver ---------------------------------------------------------

@pytest.mark.parametrize("every", [0, -1, 2.7, True])
def test_record_every_is_a_positive_integer_everywhere(every):
    from mbslib.formulations import lie_group
    from mbslib.integrators.generalized_alpha import integrate_genalpha

    model = tennis_racket()
    with pytest.raises(ValueError, match="record_every"):
        solve(model, "gen-α RV", 0.1, 1.0, record_every=every)
    absolute = lie_group.absolute_model(model, "RV")
    with pytest.raises(ValueError, match="record_every"):
        integrate_genalpha(absolute, lie_group.initial_state(model, "RV"), 0.1, 1.0, record_every=every)


def test_the_torus_horizon_is_a_whole_number_of_steps():
    from mbslib.formulations.rodrigues import BondedSpheresSystem
    from mbslib.studies.binder_torus import simulate_torus
    from mbslib.systems.binder_torus import TorusParams, make_torus

    torus = BondedSpheresSystem(make_torus(TorusParams()).description())
    with pytest.raises(ValueError, match="whole multiple"):
        simulate_torus(torus, "25", 0.003, 0.01)


def test_the_explicit_driver_names_its_arguments():
    from mbslib.formulations import lie_group
    from mbslib.integrators.runge_kutta import integrate_explicit

    model = tennis_racket()
    absolute, x0 = lie_group.absolute_model(model, "RV"), lie_group.initial_state(model, "RV")
    with pytest.raises(TypeError, match="tableau must be a ButcherTableau"):
        integrate_explicit(absolute, x0, 0.1, 1.0, 2.0)  # simulate's argument order


def test_the_exact_free_body_takes_inertias_in_any_order():
    t = np.linspace(0.0, 3.0, 7)
    sorted_axes = free_body_angular_velocity(FREE_BODY_INERTIA, [0.3, 1.0, -0.4], t)
    order = [2, 0, 1]  # the same body with its axes renamed (an even permutation)
    renamed = free_body_angular_velocity(np.array(FREE_BODY_INERTIA)[order], np.array([0.3, 1.0, -0.4])[order], t)
    np.testing.assert_allclose(renamed, sorted_axes[:, order], atol=1e-12)
    odd = [1, 0, 2]  # an odd permutation: a reflected frame
    J, W0 = np.array(FREE_BODY_INERTIA)[odd], np.array([0.3, 1.0, -0.4])[odd]
    dt = 1e-6
    Omega = free_body_angular_velocity(J, W0, [1.0 - dt, 1.0, 1.0 + dt])
    rate = (Omega[2] - Omega[0]) / (2 * dt)  # Euler's equations J Ω̇ = JΩ × Ω in these axes
    np.testing.assert_allclose(J * rate, np.cross(J * Omega[1], Omega[1]), rtol=1e-6)
