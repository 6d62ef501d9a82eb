"""Forces of the model description (springs, dampers, applied loads) in the formulations.

Unit quaternions (Livens' schemes): every gradient, Hessian, discrete gradient and force Jacobian
against central differences; the spring's discrete gradient keeps EML's generalized energy to
round-off, a damper's and a load's work balance it step by step (evaluated at the midpoint); the
load's generalized force does the virtual work of the force and torque of the description.
Absolute coordinates (compiled kernels): point spring–dampers against the independent evaluation
by model code and their analytic ``K``, ``C`` against central differences. Each family converges
at its order to a tight ``solve_ivp`` reference on a spring model; bad parameters are named.
"""

from functools import partial

import numpy as np
import pytest

from mbslib.convergence import observed_order
from mbslib.diagnostics import nonconservative_power, potential_energy, total_energy
from mbslib.formulations import lie_group
from mbslib.formulations.compiled import bind_form, workspace
from mbslib.formulations.quaternions import QuaternionSystem
from mbslib.integrators import livens
from mbslib.model import AppliedLoad, Gravity, Joint, Model, RigidBody, Spring
from mbslib.reference import reference_states
from mbslib.simulate import simulate
from mbslib.systems import lie_group_mbs as L
from mbslib.systems import multibody as mb

from .fd import central_difference
from .test_formulations import _absolute_error  # position and rotation error against reference_states

pytestmark = pytest.mark.filterwarnings("ignore::numba.NumbaExperimentalFeatureWarning")


def _bodies():
    a = RigidBody("a", 1.0, [[0.4, 0.05, 0.0], [0.05, 0.5, 0.0], [0.0, 0.0, 0.6]],
                  angular_velocity=[0.5, 1.0, -0.3], velocity=[0.2, 0.0, 0.1])
    b = RigidBody("b", 2.0, [0.9, 1.1, 0.7], position=[1.5, 0.2, 0.0], angular_velocity=[-1.0, 0.2, 0.4])
    return a, b


def springs(damping=0.0):
    """Two free bodies on springs: between them (off-centre points, rest length), from a ground
    point to body a, and a zero-length one from the ground to body b."""
    return (Spring(0, 1, [0.3, 0.1, 0.0], [-0.2, 0.0, 0.3], stiffness=40.0, rest_length=1.0, damping=damping),
            Spring(None, 0, [0.0, 0.0, 1.0], [0.1, 0.2, 0.0], stiffness=10.0, rest_length=0.5, damping=0.5 * damping),
            Spring(None, 1, [2.0, 0.0, 0.5], [0.2, 0.0, 0.1], stiffness=5.0))


def push(t, states):
    return np.array([np.sin(3.0 * t), 0.5, -0.2 * t])


def twist(t, states):
    """A torque that depends on the state: proportional to body b's world angular velocity."""
    return -0.1 * states.rotation[0, 1] @ states.angular_velocity[0, 1] + np.array([0.0, 0.3, 0.0])


LOADS = (AppliedLoad(1, force=push, torque=twist, point=[0.1, 0.2, -0.3]),)


def spring_model(damping=0.0, loads=(), gravity=True):
    return Model(_bodies(), springs=springs(damping), loads=loads,
                 gravity=Gravity([0.0, 0.0, -9.81]) if gravity else None)


def _error(A, B):
    return np.abs(A - B).max() / max(1.0, np.abs(B).max())


# --- the description -----------------------------------------------------------------------


def test_bad_forces_are_named():
    a, b = _bodies()
    with pytest.raises(ValueError, match="body_a and body_b must differ"):
        Spring(0, 0, [0, 0, 0], [1, 0, 0], stiffness=1.0)
    with pytest.raises(ValueError, match="stiffness"):
        Spring(0, 1, [0, 0, 0], [1, 0, 0], stiffness=-1.0)
    with pytest.raises(ValueError, match="damping"):
        Spring(0, 1, [0, 0, 0], [1, 0, 0], stiffness=1.0, damping=np.nan)
    with pytest.raises(ValueError, match=r"body_b must be a body index \(an integer\), got None"):
        Spring(0, None, [0, 0, 0], [1, 0, 0], stiffness=1.0)  # the ground is body_a
    with pytest.raises(ValueError, match="force must be a callable"):
        AppliedLoad(0, force=[1.0, 0.0, 0.0])
    bad = Model((a, b), loads=(AppliedLoad(0, torque=lambda t, s: np.zeros(2)),))
    with pytest.raises(ValueError, match=r"loads\[0\].torque"):
        QuaternionSystem(bad).external_force(QuaternionSystem(bad).initial_state()[:14], np.zeros(14), 0.0)
    with pytest.raises(NotImplementedError, match="callables"):
        lie_group.absolute_model(spring_model(loads=LOADS), "RV")
    S = mb.System()
    body = S.body(1.0, (1.0, 1.0, 1.0))
    for kwargs, name in ((dict(stiffness=-1.0), "stiffness"), (dict(stiffness=1.0, rest_length=-0.1), "rest_length"),
                         (dict(stiffness=1.0, damping=np.inf), "damping")):
        with pytest.raises(ValueError, match=name):
            S.point_spring(mb.GROUND, np.zeros(3), body, np.zeros(3), **kwargs)
    with pytest.raises(ValueError, match="body index 2"):
        S.point_spring(mb.GROUND, np.zeros(3), 2, np.zeros(3), 1.0)
    with pytest.raises(ValueError, match="two different bodies"):
        S.point_spring(body, np.zeros(3), body, np.zeros(3), 1.0)
    assert not S.point_springs


# --- unit quaternions ------------------------------------------------------------------------


def _off_manifold(system, rng):
    n = system.n
    x0 = system.initial_state()
    return x0[:n] + 0.1 * rng.normal(size=n), rng.normal(size=n)


def test_quaternion_spring_derivatives_against_finite_differences(rng):
    system = QuaternionSystem(spring_model())
    q, _ = _off_manifold(system, rng)
    q1 = q + 0.05 * rng.normal(size=system.n)
    assert _error(system.grad_potential(q), central_difference(system.potential, q)) < 1e-8
    assert _error(system.hess_potential(q), central_difference(system.grad_potential, q)) < 1e-8
    assert _error(system.hess_potential(q, sparse=True).toarray(), system.hess_potential(q)) == 0.0
    grad, jac = system.dg_potential(q, q1)
    assert abs(grad @ (q1 - q) - (system.potential(q1) - system.potential(q))) < 1e-13 * system.potential(q1)
    assert _error(jac, central_difference(lambda x: system.dg_potential(q, x)[0], q1)) < 1e-8
    assert _error(system.dg_potential(q, q1, sparse=True)[1].toarray(), jac) == 0.0
    assert _error(system.dg_potential(q, q)[0], system.grad_potential(q)) < 1e-15  # s₁ = s₀


def test_quaternion_damper_and_load_jacobians_against_finite_differences(rng):
    system = QuaternionSystem(spring_model(damping=3.0, loads=LOADS))
    q, v = _off_manifold(system, rng)
    f, f_q, f_v = system.external_force(q, v, 0.3)
    # the damper's derivatives are exact; the loads' cover the lever and the quaternion, the
    # state dependence of their callables is left out (the torque's here), so differentiate the
    # loads at frozen callables
    torque = twist(0.3, system.body_states(0.3, q[None], v[None]))
    frozen = QuaternionSystem(spring_model(damping=3.0, loads=(AppliedLoad(
        1, force=lambda t, s: push(0.3, None), torque=lambda t, s: torque, point=[0.1, 0.2, -0.3]),)))
    assert _error(frozen.external_force(q, v, 0.3)[0], f) < 1e-15
    assert _error(f_q, central_difference(lambda x: frozen.external_force(x, v, 0.3)[0], q)) < 1e-8
    assert _error(f_v, central_difference(lambda x: frozen.external_force(q, x, 0.3)[0], v)) < 1e-8
    assert QuaternionSystem(spring_model()).external_force(q, v, 0.3) is None  # no damper, no load


def test_quaternion_forces_do_the_work_of_the_description():
    """On the manifold, ``f·v`` is the power of the dampers and loads of the description."""
    model = spring_model(damping=3.0, loads=LOADS)
    system = QuaternionSystem(model)
    x0 = system.initial_state()
    n = system.n
    q, v = x0[:n], x0[2 * n:3 * n]
    states = system.body_states(0.7, q[None], v[None])
    assert system.external_force(q, v, 0.7)[0] @ v == pytest.approx(nonconservative_power(model, states)[0],
                                                                     rel=1e-13)
    assert system.potential(q) == pytest.approx(potential_energy(model, states)[0], rel=1e-13)


@pytest.mark.parametrize("scheme", ["eml", "mpl", "reml"])
def test_newton_matrices_with_dampers_and_loads_against_differences(scheme, rng):
    """The schemes' analytic Jacobians with the midpoint force (loads of time alone: exact)."""
    load = AppliedLoad(1, force=push, torque=lambda t, s: np.array([0.0, 0.3, t]), point=[0.1, 0.2, -0.3])
    system = QuaternionSystem(spring_model(damping=3.0, loads=(load,)))
    x0, h = system.initial_state(), 0.01
    residual, jacobian = getattr(livens, f"residual_{scheme}"), getattr(livens, f"jacobian_{scheme}")
    z = np.concatenate([x0[:system.n], x0[3 * system.n:]]) if scheme == "reml" else x0
    z = z + 0.01 * rng.normal(size=z.size)
    J_fd = central_difference(lambda y: residual(system, x0, y, h, 0.3), z)
    assert _error(jacobian(system, x0, z, h, 0.3), J_fd) < 1e-8


def _run(system, step, h, t_end):
    return simulate(partial(step, system), system.initial_state(), h, t_end)


@pytest.mark.parametrize("step", [livens.step_eml, livens.step_reml], ids=["EML", "REML"])
def test_eml_keeps_the_energy_with_a_spring_to_round_off(step):
    system = QuaternionSystem(spring_model())
    run = _run(system, step, 0.02, 1.0)
    E = livens.energies(system, run.x)["E"]
    assert np.abs(E - E[0]).max() < 1e-12 * np.abs(E).max()
    assert np.ptp(livens.energies(system, run.x)["V"]) > 1.0  # the springs work


@pytest.mark.parametrize("step", [livens.step_eml, livens.step_reml], ids=["EML", "REML"])
def test_eml_energy_balance_with_dampers_and_loads(step):
    """``Eⁿ⁺¹ − Eⁿ = f(q^{n+1/2}, v^{n+1/2}, t_{n+1/2})·(qⁿ⁺¹ − qⁿ)`` per step, to round-off; with
    dampers alone the energy decays."""
    h = 0.02
    for loads in ((), LOADS):
        system = QuaternionSystem(spring_model(damping=3.0, loads=loads))
        run = _run(system, step, h, 1.0)
        n = system.n
        E = livens.energies(system, run.x)["E"]
        Q, Vel = run.x[:, :n], run.x[:, 2 * n:3 * n]
        work = np.array([system.external_force(0.5 * (Q[k] + Q[k + 1]), 0.5 * (Vel[k] + Vel[k + 1]),
                                               run.t[k] + 0.5 * h)[0] @ (Q[k + 1] - Q[k]) for k in range(run.n_steps)])
        assert np.abs(np.diff(E) - work).max() < 1e-12 * np.abs(E).max()
        if not loads:
            assert np.all(work < 0) and E[-1] < 0.9 * E[0] + 0.1 * abs(E[0])


def test_eml_converges_at_second_order_with_springs_dampers_and_loads():
    model = spring_model(damping=3.0, loads=LOADS)
    system = QuaternionSystem(model)
    t_end, hs = 0.2, 1e-2 / np.array([1, 2, 4])
    exact = reference_states(model, [0.0, t_end]).at(-1)
    errors = []
    for h in hs:
        run = _run(system, livens.step_eml, h, t_end)
        n = system.n
        states = system.body_states(run.t[-1:], run.x[-1:, :n], run.x[-1:, 2 * n:3 * n])
        errors.append(np.abs(states.position - exact.position).max() + np.abs(states.rotation - exact.rotation).max())
    assert observed_order(hs, errors) == pytest.approx(2.0, abs=0.2)


def test_four_bar_load_is_an_applied_load_of_its_description(rng):
    """The paper's generalized load (128): ``[8f e1; 2E(q¹)ᵀ(6f e1); 0]``."""
    from mbslib.quaternions import E
    from mbslib.systems.four_bar_loop import FourBarLoop, triangle_load

    loop = FourBarLoop()
    (load,) = loop.model.loads
    assert load.body == 0 and not np.any(load.point)
    q = loop.initial_state()[:28] + 0.1 * rng.normal(size=28)
    for t in (0.25, 0.5, 0.8, 1.5):
        f, _, f_v = loop.external_force(q, np.zeros(28), t)
        push_t = float(triangle_load(t, 100.0)) * np.array([1.0, 0.0, 0.0])
        assert np.array_equal(f[:3], 8 * push_t) and not np.any(f[7:]) and not np.any(f_v)
        np.testing.assert_allclose(f[3:7], 2.0 * E(q[3:7]).T @ (6 * push_t), rtol=1e-14, atol=1e-14)


# --- absolute coordinates: compiled kernels ---------------------------------------------------


def _jointed():
    """The spring model with body b also held by a spherical joint at a ground point."""
    model = spring_model(damping=2.0)
    return Model(model.bodies, (Joint("spherical", None, 1, [1.5, 0.2, 0.5], [0.0, 0.0, 0.5]),), model.gravity,
                 model.springs)


KERNEL_MODELS = {"free, undamped": spring_model(), "free, damped": spring_model(damping=2.0), "jointed": _jointed()}


def _evaluate(model, q, v, t=0.3):
    n = model.n
    work = workspace(model.n_pages)
    M, g, K, C = np.zeros((n, n)), np.zeros(n), np.zeros((n, n)), np.zeros((n, n))
    model.kernels[0](bind_form(model.form), model.P, q, v, t, True, work, M, g, K, C)
    return g, K, C


def _uac(model, q, dq):
    out = np.zeros_like(q)
    model.kernels[3](bind_form(model.form), model.P, q, dq, out)
    return out


@pytest.mark.parametrize("form", ["RV", "Rxyz", "EP"])
@pytest.mark.parametrize("name", list(KERNEL_MODELS))
def test_point_spring_kernels_against_evaluation_and_differences(name, form, rng):
    description = KERNEL_MODELS[name]
    model = lie_group.absolute_model(description, form)
    x0 = lie_group.initial_state(description, form)
    n = model.n
    q, v = x0[:n] + 0.1 * rng.normal(size=n), x0[n:] + rng.normal(size=n)
    g, K, C = _evaluate(model, q, v)
    assert np.abs(g - L.force(model.code, q, v, 0.3, model.P)).max() < 1e-13 * max(1.0, np.abs(g).max())
    d, eye = 1e-6, np.eye(n)
    K_fd = np.column_stack([-(_evaluate(model, _uac(model, q, d * e), v)[0]
                              - _evaluate(model, _uac(model, q, -d * e), v)[0]) / (2 * d) for e in eye])
    C_fd = np.column_stack([-(_evaluate(model, q, v + d * e)[0] - _evaluate(model, q, v - d * e)[0]) / (2 * d)
                            for e in eye])
    scale = max(1.0, np.abs(K_fd).max(), np.abs(g).max())
    assert np.abs(K - K_fd).max() < 1e-7 * scale
    assert np.abs(C - C_fd).max() < 1e-7 * max(1.0, np.abs(C_fd).max(), np.abs(g).max())
    N, _ = model.pattern
    assert not np.any(K[~N]) and not np.any(C[~N])


@pytest.mark.parametrize("form", ["RV", "Rxyz", "EP"])
def test_point_spring_energy_of_the_absolute_model(form):
    description = spring_model()
    model = lie_group.absolute_model(description, form)
    x0 = lie_group.initial_state(description, form)
    assert mb.energy(lie_group.FORMS[form], x0[:model.n], x0[model.n:], model.P) == pytest.approx(
        total_energy(description, description.initial_states())[0], rel=1e-13)


@pytest.mark.parametrize("form", ["RV", "Rxyz", "EP"])
def test_generalized_alpha_with_spring_dampers_is_second_order(form):
    from mbslib.integrators.generalized_alpha import integrate_genalpha

    hs = 1e-2 / np.array([1, 2, 4])
    errors = [_absolute_error(spring_model(damping=2.0), form, integrate_genalpha, h, 0.2) for h in hs]
    assert observed_order(hs, errors) == pytest.approx(2.0, abs=0.2)


@pytest.mark.parametrize("form", ["RV", "Rxyz"])
def test_rkmk_with_spring_dampers_is_fourth_order(form):
    from mbslib.integrators.runge_kutta import integrate_explicit
    from mbslib.integrators.tableaux import RK44

    hs = 2e-2 / np.array([1, 2, 4])
    errors = [_absolute_error(spring_model(damping=2.0), form,
                              lambda m, x0, h, t: integrate_explicit(m, x0, RK44, h, t), h, 0.4) for h in hs]
    assert observed_order(hs, errors) == pytest.approx(4.0, abs=0.2)


# --- directors --------------------------------------------------------------------------------


def test_zero_length_springs_are_the_director_systems_quadratic_potential(rng):
    """``½ qᵀK q − fᵀq`` of the director system differs from the description's potential (gravity
    and springs) by one constant, at any poses; springs it cannot carry are named."""
    from dataclasses import replace

    from mbslib.formulations import directors
    from mbslib.rotations import exp_so3

    zero_length = tuple(replace(s, rest_length=0.0) for s in springs())
    model = Model(_bodies(), springs=zero_length, gravity=Gravity([0.0, 0.0, -9.81]))
    system = directors.director_system(model)
    offsets = []
    for _ in range(4):
        moved = Model(tuple(replace(b, position=rng.normal(size=3), rotation=exp_so3(rng.normal(size=3)))
                            for b in model.bodies), springs=zero_length, gravity=model.gravity)
        q, qdot = directors.initial_coordinates(moved)
        states = directors.body_states(moved, [0.0], q[None], qdot[None])
        offsets.append(system.V(q) - potential_energy(moved, states)[0])
    np.testing.assert_allclose(offsets, offsets[0], atol=1e-12 * np.abs(offsets).max())
    for bad in (springs(), springs(damping=1.0)):
        with pytest.raises(NotImplementedError, match=r"springs\[0\] has a rest length or a damper"):
            directors.director_system(Model(_bodies(), springs=bad))
    with pytest.raises(NotImplementedError, match="applied loads"):
        directors.director_system(spring_model(loads=LOADS))
