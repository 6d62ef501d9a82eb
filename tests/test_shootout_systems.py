"""The shoot-out's benchmarks and the formulations and runners added for them."""

from dataclasses import replace

import numpy as np
import pytest

from mbslib.diagnostics import (
    conserved_axes,
    conserved_momentum,
    constraint_rates,
    constraint_residuals,
    energy_error,
    joint_error,
    kinetic_energy,
    momentum_error,
    rotation_defect,
    total_energy,
)
from mbslib.exact import free_body_angular_velocity
from mbslib.formulations import lie_group
from mbslib.methods import METHODS, refusals, solve
from mbslib.model import BodyStates, Gravity, Joint, Model, RigidBody
from mbslib.rotations import exp_so3
from mbslib.systems.benchmarks import FREE_BODY_INERTIA, pendulum_3d, spinning_body, tennis_racket
from mbslib.systems.bricard import CORNERS, bricard, rod
from mbslib.systems.chain import chain
from mbslib.systems.rigid_bodies import heavy_top

from .fd import central_difference


def _perturbed(model, z):
    """The model's initial states moved by ``z`` (6 per body: centre, then a rotation vector applied
    in the world frame)."""
    s = model.initial_states()
    z = z.reshape(-1, 6)
    R = np.array([[exp_so3(dz[3:]) @ r for dz, r in zip(z, s.rotation[0], strict=True)]])
    return replace(s, position=s.position + z[None, :, :3], rotation=R)


def _constraint_jacobian(model):
    """Jacobian of the description's joint residuals in the 6 N body motions, by central differences."""
    return central_difference(lambda z: constraint_residuals(model, _perturbed(model, z))[0],
                              np.zeros(6 * model.n_bodies))


# -- Bricard's mechanism --------------------------------------------------------------------------

def test_bricard_rods_carry_the_benchmark_data():
    model = bricard()
    assert model.n_bodies == 5 and model.n_constraints == 30
    for k, body in enumerate(model.bodies):
        assert body.mass == 1.0
        np.testing.assert_allclose(np.sort(np.diag(body.inertia)), [0.01 / 6, 1.01 / 12, 1.01 / 12], rtol=1e-14)
        np.testing.assert_allclose(body.position, 0.5 * (CORNERS[k] + CORNERS[k + 1]), atol=1e-15)
        np.testing.assert_allclose(body.rotation[:, 0], CORNERS[k + 1] - CORNERS[k], atol=1e-15)  # e1 along the rod
        assert abs(body.rotation[0, 2]) < 1e-15  # no Tait–Bryan gimbal lock (pitch ±90°)
    np.testing.assert_allclose(model.gravity.g, [0.0, -9.81, 0.0])


@pytest.mark.parametrize("redundant", [True, False])
def test_bricard_starts_consistent_and_moves_with_one_degree_of_freedom(redundant):
    model = bricard(redundant=redundant)
    start = model.initial_states()
    assert np.abs(constraint_residuals(model, start)).max() < 1e-15
    assert np.abs(constraint_rates(model, start)).max() == 0.0  # at rest
    D = _constraint_jacobian(model)
    singular = np.linalg.svd(D, compute_uv=False)
    rank = int(np.sum(singular > 1e-8 * singular[0]))
    assert rank == 29  # 30 body coordinates, one degree of freedom
    assert D.shape[0] - rank == (1 if redundant else 0)  # the redundant equation


def test_rod_validates_its_data():
    with pytest.raises(ValueError, match="length"):
        rod("r", [0, 0, 0], [0, 0, 0])
    with pytest.raises(ValueError, match="width"):
        rod("r", [0, 0, 0], [1, 0, 0], width=0.0)


# -- the chain ------------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 3, 8])
def test_chain_starts_consistent_with_the_rigid_rotation_energy(n):
    model = chain(n, spin=1.5)
    start = model.initial_states()
    assert model.n_constraints == 3 * n
    assert np.abs(constraint_residuals(model, start)).max() < 1e-15
    assert np.abs(constraint_rates(model, start)).max() < 1e-14
    # T = ½ ω² Σ (m (k + ½)² + J_across) for rods of 1 m, 1 kg turning about the vertical at the pivot
    across = 1.01 / 12
    expected = 0.5 * 1.5**2 * sum((k + 0.5) ** 2 + across for k in range(n))
    assert kinetic_energy(model, start)[0] == pytest.approx(expected, rel=1e-14)


@pytest.mark.parametrize("n", [0, 2.5, True])
def test_chain_needs_a_positive_whole_number_of_bodies(n):
    with pytest.raises(ValueError, match="n_bodies"):
        chain(n)


# -- the single-body benchmarks -------------------------------------------------------------------

def test_tennis_racket_reference_matches_the_jacobi_solution_over_its_flips():
    """The chapter's references of the flip agree: the tight integration of the description and
    the closed form in Jacobi elliptic functions (both at rtol 1e-12)."""
    from mbslib.reference import reference_states

    model = tennis_racket()
    t = np.linspace(0.0, 30.0, 61)  # two flips of the intermediate-axis spin
    states = reference_states(model, t)
    exact = free_body_angular_velocity(FREE_BODY_INERTIA, model.bodies[0].angular_velocity, t)
    assert np.sign(exact[:, 1]).min() < 0 < np.sign(exact[:, 1]).max()
    assert np.abs(states.angular_velocity[:, 0] - exact).max() < 1e-9


def test_spinning_body_is_the_free_body_of_the_exact_solution():
    model = spinning_body()
    np.testing.assert_array_equal(np.diag(model.bodies[0].inertia), FREE_BODY_INERTIA)
    np.testing.assert_array_equal(model.bodies[0].inertia, np.diag(FREE_BODY_INERTIA))


def test_pendulum_description_is_the_papers_pendulum():
    from mbslib.formulations.rodrigues import PivotedRodriguesSystem
    from mbslib.integrators import rodrigues_vi as rr
    from mbslib.systems.pendulum3d import Pendulum3D, initial_conditions

    model = pendulum_3d()
    paper = Pendulum3D(m=1.0, g=1.0, J=3.0)
    ours = paper.model()  # J = 3 m a²: the paper's pendulum with J = 3 keeps its mass
    for name in ("mass", "inertia", "position", "rotation", "velocity", "angular_velocity"):
        np.testing.assert_array_equal(getattr(model.bodies[0], name), getattr(ours.bodies[0], name))
    np.testing.assert_array_equal(model.gravity.g, ours.gravity.g)
    np.testing.assert_array_equal(model.joints[0].point_b, ours.joints[0].point_b)
    alpha0, w0 = initial_conditions()
    start = model.initial_states()
    assert np.abs(constraint_residuals(model, start)).max() < 1e-15
    assert np.abs(constraint_rates(model, start)).max() < 1e-15
    assert total_energy(model, start)[0] == pytest.approx(paper.energy(alpha0, w0), rel=1e-14)
    system = PivotedRodriguesSystem(model)
    ours = rr.run(rr.step_23, system, system.initial_state(), 0.1, 2.0)
    body = system.body_states(ours.t, ours.x)
    for name in ("position", "rotation", "velocity", "angular_velocity"):
        np.testing.assert_allclose(getattr(body, name)[0], getattr(start, name)[0], atol=1e-15)
    assert np.ptp(total_energy(model, body)) < 1e-2 * abs(total_energy(model, start)[0])


def test_pendulum_needs_a_rigid_body():
    with pytest.raises(ValueError, match="inertia must exceed"):
        pendulum_3d(inertia=1.0)


# -- formulations added for the single-body schemes ----------------------------------------------

def _turned(model, g):
    """The model with gravity ``g`` instead (a world turned against the heavy top's −e₃)."""
    return Model(model.bodies, model.joints, gravity=Gravity(g))


ROTATION_MODELS = [spinning_body(), heavy_top(), pendulum_3d(), _turned(heavy_top(), [3.0, -4.0, 0.0])]
ROTATION_IDS = ["free body", "heavy top", "pendulum (gravity +e3)", "heavy top (gravity sideways)"]


@pytest.mark.parametrize("model", ROTATION_MODELS, ids=ROTATION_IDS)
def test_rotation_system_round_trip_and_energy(model):
    from mbslib.formulations.quaternions import RotationSystem

    rotation = RotationSystem(model)
    x0 = rotation.initial_state()
    q, v = x0[:4], x0[8:12]
    states, start = rotation.body_states([0.0], q[None], v[None]), model.initial_states()
    for name in ("position", "rotation", "velocity", "angular_velocity"):
        np.testing.assert_allclose(getattr(states, name), getattr(start, name), atol=1e-13)
    system = rotation.system  # heights from the pivot, which sits at the description's origin
    assert system.kinetic_energy(q, v) + system.potential(q) == pytest.approx(total_energy(model, start)[0],
                                                                              rel=1e-12, abs=1e-12)


def test_emh_through_the_description_conserves_the_descriptions_energy():
    """EMH's Hamiltonian is the description's energy on the unit sphere: through the entry point
    the description holds to the Newton tolerance."""
    for model in (heavy_top(), pendulum_3d()):
        h = 1e-3 if model.bodies[0].name == "cone" else 0.1
        run = solve(model, "EMH", h, 20 * h)
        energy = total_energy(model, run.states)
        assert np.ptp(energy) < 1e-12 * abs(energy[0])


@pytest.mark.parametrize("model, match", [
    (chain(2), "one rigid body"),
    (bricard(), "one rigid body"),
    (Model((RigidBody("b", 1.0, [1.0, 2.0, 2.5]),),
                                 (Joint("spherical", None, 0, [0, 0, 0], [0.3, 0.0, -0.4]),),
                                 gravity=Gravity([0, 0, -9.81])), "principal axis"),
    (Model((RigidBody("b", 1.0, [1.0, 2.0, 2.5]),), gravity=Gravity([0, 0, -9.81])), "free of gravity"),
], ids=["chain", "Bricard", "centre off the principal axes", "free body under gravity"])
def test_rotation_system_says_what_it_needs(model, match):
    from mbslib.formulations.quaternions import RotationSystem

    with pytest.raises(ValueError, match=match):
        RotationSystem(model)


def test_nontwisting_body_round_trip_and_energy_conservation():
    from mbslib.formulations.directors import nontwisting_body, nontwisting_body_states

    model = Model((RigidBody("b", 2.0, [[2.0, 0.3, 0.0], [0.3, 3.0, 0.1], [0.0, 0.1, 4.5]],
                                                rotation=exp_so3([0.3, -0.2, 0.5]), velocity=[0.1, 0.0, 0.2],
                                                angular_velocity=[1.0, -2.0, 0.5]),))
    _, x0 = nontwisting_body(model)
    start = nontwisting_body_states(model, [0.0], x0[None])
    for name in ("position", "rotation", "velocity", "angular_velocity"):
        np.testing.assert_allclose(getattr(start, name), getattr(model.initial_states(), name), atol=1e-14)
    run = solve(model, "EM (004)", 0.05, 1.0)
    assert np.ptp(run.own["energy"]) < 1e-12 * run.own["energy"][0]  # ½ q̇·M q̇, conserved by the scheme
    assert run.own["energy"][0] == pytest.approx(total_energy(model, model.initial_states())[0] - 0.5 * 2.0 * 0.05,
                                              rel=1e-14)  # the rotational part of the description's energy
    np.testing.assert_allclose(run.states.position[-1, 0], [0.1, 0.0, 0.2], atol=1e-15)
    with pytest.raises(ValueError, match="free body"):
        nontwisting_body(heavy_top())


# -- the runners ------------------------------------------------------------------------------------

BENCHMARKS = {"free body": spinning_body(), "heavy top": heavy_top(), "pendulum": pendulum_3d(),
              "Bricard": bricard(redundant=False), "chain": chain(2)}


@pytest.mark.parametrize("name", list(METHODS))
@pytest.mark.parametrize("benchmark", list(BENCHMARKS))
def test_every_method_runs_or_says_why(name, benchmark):
    """Each method either refuses a benchmark with a reason or runs it from the model's own initial
    state, counts its work and records the start, every ``record_every``-th step and the end."""
    model = BENCHMARKS[benchmark]
    reason = refusals(model).get(name, "")
    if reason:
        assert len(reason) > 20
        return
    h = 1e-4 if benchmark == "heavy top" else 1e-3
    run = solve(model, name, h, 5 * h, record_every=2)
    assert run.ok, run.failure
    np.testing.assert_allclose(run.states.t, h * np.array([0, 2, 4, 5]), rtol=1e-12)
    start = model.initial_states()
    for field in ("position", "rotation", "velocity", "angular_velocity"):
        np.testing.assert_allclose(getattr(run.states, field)[0], getattr(start, field)[0], atol=1e-10)
    assert run.work.steps >= 5 and run.work.rhs_evaluations >= 5
    assert np.abs(constraint_residuals(model, run.states)).max(initial=0.0) < 1e-8


def test_refusals_of_the_benchmarks():
    expected = {("RR (23)", "free body"): "spherical bodies", ("RR (23)", "heavy top"): "spherical inertia about",
                ("RKMK RK44", "chain"): "unconstrained", ("EML", "Bricard"): "revolute",
                ("GGL-VI", "Bricard"): "revolute", ("EMH", "chain"): "one rigid body",
                ("EM (004)", "pendulum"): "free body"}
    for (name, benchmark), match in expected.items():
        assert match in refusals(BENCHMARKS[benchmark])[name]


def test_explicit_work_is_counted_per_stage_and_segments_are_whole():
    from mbslib.integrators.runge_kutta import integrate_explicit
    from mbslib.integrators.tableaux import RK44
    from mbslib.methods import _rkmk_system

    model = pendulum_3d()
    run = solve(model, "RKMK RK44", 0.05, 1.0, record_every=7)
    assert run.work.steps == 20 and run.work.rhs_evaluations == 4 * 20
    whole = integrate_explicit(_rkmk_system(model), lie_group.initial_state(model, "RV", about_pivot=True), RK44, 0.05,
                               1.0)
    np.testing.assert_allclose(run.states.angular_velocity[-1, 0], whole.v, rtol=1e-14)


@pytest.mark.parametrize("name, order", [("RKMK RK44", 4), ("RKMK RK67", 6), ("gen-α RV", 2), ("RR (23)", 2)])
def test_pendulum_orders_through_the_runners(name, order):
    from mbslib.convergence import observed_order
    from mbslib.reference import reference_states

    model, t_end = pendulum_3d(), 2.0
    exact = reference_states(model, [0.0, t_end]).at(-1)
    hs = (0.2 if order < 4 else 0.5) / np.array([1, 2, 4])
    errors = [np.abs(solve(model, name, h, t_end).states.rotation[-1] - exact.rotation[0]).max() for h in hs]
    assert observed_order(hs, errors) == pytest.approx(order, abs=0.3)


@pytest.mark.parametrize("every", [0, -1, 2.7, True])
def test_record_every_is_validated(every):
    with pytest.raises(ValueError, match="record_every"):
        solve(spinning_body(), "EML", 0.1, 0.2, record_every=every)
    assert isinstance(solve(spinning_body(), "EML", 0.1, 0.2).states, BodyStates)


def test_own_invariants_of_the_schemes_that_claim_them():
    """Each scheme's own energy and momentum map, as the runners report them, hold to round-off on
    the pendulum where its paper says so (the chapter's table checks the long runs)."""
    model = pendulum_3d()
    for name, energy_kept, momentum_kept in [("EML", True, False), ("Null-EML", True, True), ("EMH", True, True),
                                             ("MPH", False, True), ("GGL-VI", False, True)]:
        run = solve(model, name, 0.1, 5.0)
        energy = np.abs(run.own["energy"] / run.own["energy"][0] - 1.0).max()
        momentum = momentum_error(model, run.states, run.own["momentum"]).max()
        assert (energy < 1e-12) == energy_kept, (name, energy)
        assert (momentum < 1e-12) == momentum_kept, (name, momentum)


def test_diagnostics_of_the_description():
    from mbslib.reference import reference_states

    model = heavy_top()
    states = reference_states(model, np.linspace(0.0, 0.05, 6))
    assert np.abs(energy_error(model, states)).max() < 1e-10
    assert momentum_error(model, states).max() < 1e-10  # vertical angular momentum about the tip
    assert joint_error(model, states).max() < 1e-12 and rotation_defect(states).max() < 1e-10
    s = spinning_body().initial_states()
    assert conserved_momentum(bricard(), s) is None  # two ground joints: nothing conserved
    assert conserved_momentum(spinning_body(), s).shape == (1, 3)  # the whole vector


def test_conserved_axes_of_ground_joints_and_gravity():
    """The conserved components: the whole vector of a free mechanism, the vertical under gravity
    (also without ground joints), the hinge axis of a revolute joint to the ground (if gravity
    lies along it), nothing for a hinge across gravity (the review's revolute pendulum)."""
    body = RigidBody("b", 1.0, [1.0, 2.0, 2.5], position=[0.0, 0.0, -1.0])
    g = Gravity([0.0, 0.0, -9.81])
    hinge = Joint("revolute", None, 0, [0, 0, 0], [0, 0, 1.0], axis_a=[1.0, 0, 0], axis_b=[1.0, 0, 0])
    spin = Joint("revolute", None, 0, [0, 0, 0], [0, 0, 1.0], axis_a=[0, 0, 1.0], axis_b=[0, 0, 1.0])
    np.testing.assert_allclose(conserved_axes(Model((body,), gravity=g))[1], [[0, 0, 1.0]], atol=1e-15)
    assert conserved_axes(Model((body,), (hinge,), gravity=g)) is None
    np.testing.assert_allclose(np.abs(conserved_axes(Model((body,), (spin,), gravity=g))[1]), [[0, 0, 1.0]],
                               atol=1e-15)
    np.testing.assert_allclose(np.abs(conserved_axes(Model((body,), (hinge,)))[1]), [[1.0, 0, 0]], atol=1e-15)


def test_work_precision_and_largest_stable_step():
    from mbslib.studies.sweeps import largest_stable_step, work_precision

    model = pendulum_3d()
    points = work_precision("RKMK RK44", model, [0.5, 0.25], 2.0, lambda run: 1.0)
    assert [p.evaluations for p in points] == [4 * 4, 4 * 8] and all(p.ok for p in points)
    tolerances = work_precision("RKMK DOPRI5", model, [0.5], 2.0, lambda run: 1.0, rtols=[1e-4, 1e-8])
    assert tolerances[0].evaluations < tolerances[1].evaluations
    h, run = largest_stable_step("RR (23)", model, [4.0, 2.0, 0.5], 8.0)
    assert h == 0.5 and run.failure is None  # the increment of (23) exists only for h|p| < 1
    assert largest_stable_step("RR (27)", model, [4.0], 8.0, energy_tolerance=1e-6) == (
        pytest.approx(np.nan, nan_ok=True), None)
