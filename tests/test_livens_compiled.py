"""The one-call dense evaluations of EML, MPL and REML (``livens._compiled_equations``) against
the path they replace, the residuals and Newton matrices assembled in Python from the system's
evaluations (``livens._livens_equations``, ``livens._reml_equations``): the Newton matrices
bitwise equal (the same element-wise operations in the same order), the residuals to round-off
(their ``(h∇gᵀ)λ`` is a BLAS product, NumPy's in the Python path, which may round differently on
another CPU; bitwise equal on the book's machine), and so are the steps, with the same Newton
iterations."""

from dataclasses import replace

import numpy as np
import pytest

from mbslib.formulations.quaternions import QuaternionSystem
from mbslib.integrators import livens
from mbslib.model import AppliedLoad, Constant, Spring
from mbslib.newton import fd_jacobian
from mbslib.systems.benchmarks import pendulum_3d, tennis_racket
from mbslib.systems.chain import chain
from mbslib.systems.rigid_bodies import heavy_top

RNG = np.random.default_rng(20261124)
MODELS = {"tennis racket": tennis_racket, "3-D pendulum": pendulum_3d, "heavy top": heavy_top,
          "chain of 3": lambda: chain(3)}
STEPS = {"EML": livens.step_eml, "MPL": livens.step_mpl, "REML": livens.step_reml}


def python_path(model):
    """The model's system without its compiled data: every step assembled in Python."""
    system = QuaternionSystem(model)
    system.compiled_data = None
    return system


def round_off(a, b):
    np.testing.assert_allclose(a, b, rtol=0, atol=4 * np.finfo(float).eps * np.abs(b).max())


def states(system):
    """Two states near the initial one with every coordinate, velocity and multiplier nonzero."""
    x = system.initial_state()
    return x + 0.1 * RNG.standard_normal(x.size), x + 0.1 * RNG.standard_normal(x.size)


@pytest.mark.parametrize("make", MODELS.values(), ids=MODELS.keys())
@pytest.mark.parametrize("discrete", [True, False], ids=["EML", "MPL"])
def test_livens_residual_and_matrix_bitwise_equal_to_the_python_assembly(make, discrete):
    system = QuaternionSystem(make())
    x_n, x_n1 = states(system)
    R, K = livens._compiled_equations(system.compiled_data, 0.05, x_n, x_n1, discrete, False)
    R_py, K_py = livens._livens_equations(system, x_n, x_n1, 0.05, 0.0, discrete, sparse=False)
    round_off(R, R_py)
    np.testing.assert_array_equal(K, K_py())


@pytest.mark.parametrize("make", MODELS.values(), ids=MODELS.keys())
def test_reml_residual_and_matrix_bitwise_equal_to_the_python_assembly(make):
    system = QuaternionSystem(make())
    x_n, x_n1 = states(system)
    y = np.concatenate([x_n1[: system.n], x_n1[3 * system.n:]])
    R, K = livens._compiled_equations(system.compiled_data, 0.05, x_n, y, True, True)
    R_py, K_py = livens._reml_equations(system, x_n, y, 0.05, 0.0, sparse=False)
    round_off(R, R_py)
    np.testing.assert_array_equal(K, K_py())


@pytest.mark.parametrize("scheme", ["EML", "MPL", "REML"])
def test_compiled_newton_matrix_is_the_jacobian_of_the_compiled_residual(scheme):
    system = QuaternionSystem(chain(2))
    x_n, x_n1 = states(system)
    if scheme == "REML":
        y = np.concatenate([x_n1[: system.n], x_n1[3 * system.n:]])
        K = livens._compiled_equations(system.compiled_data, 0.05, x_n, y, True, True)[1]
        fd = fd_jacobian(lambda z: livens._compiled_equations(system.compiled_data, 0.05, x_n, z, True, True)[0],
                         y)
    else:
        discrete = scheme == "EML"
        K = livens._compiled_equations(system.compiled_data, 0.05, x_n, x_n1, discrete, False)[1]
        fd = fd_jacobian(lambda z: livens._compiled_equations(system.compiled_data, 0.05, x_n, z, discrete,
                                                              False)[0], x_n1)
    assert np.abs(K - fd).max() < 1e-7 * np.abs(K).max()


@pytest.mark.parametrize("scheme", STEPS, ids=STEPS.keys())
def test_steps_follow_the_python_path_on_the_pendulum(scheme):
    step, model = STEPS[scheme], pendulum_3d()
    compiled, python = QuaternionSystem(model), python_path(model)
    assert compiled.compiled_data is not None
    x = y = compiled.initial_state()
    for k in range(200):
        x, rep = step(compiled, x, 0.1, 0.1 * k)
        y, rep_py = step(python, y, 0.1, 0.1 * k)
        assert (rep.n_iter, rep.n_residual, rep.n_jacobian) == (rep_py.n_iter, rep_py.n_residual, rep_py.n_jacobian)
        np.testing.assert_allclose(x, y, rtol=0, atol=1e-12 * np.abs(y).max())


def test_springs_and_loads_keep_the_python_path():
    pendulum = pendulum_3d()
    spring = Spring(None, 0, [0.0, 0.0, 1.0], [0.5, 0.0, 0.0], stiffness=2.0, rest_length=0.5)
    load = AppliedLoad(0, torque=Constant([0.0, 0.0, 0.1]))
    for model in (replace(pendulum, springs=(spring,)), replace(pendulum, loads=(load,))):
        assert QuaternionSystem(model).compiled_data is None
    assert QuaternionSystem(chain(40)).compiled_data is not None  # a sparse solve ignores it
    assert livens._compiled_data(QuaternionSystem(chain(40)), sparse=True) is None
