"""The compiled model kernels of chapter 002 (mbslib.formulations.compiled and its families).

Every model of the chapter and every formulation: the kernels give the same mass matrix, forces,
constraints and output point as the evaluation functions by model code (written independently),
their analytic Jacobians ``K = −∂g/∂z``, ``C = −∂g/∂v`` and ``B = ∂Φ/∂z`` (along the update map)
match central differences, the formulation bundles' derivatives match differences of their own
values, the generalized-α loop allocates nothing per step, and a new model family runs through the
integrator without any edit to it.
"""

import os
import subprocess
import sys

import numba
import numpy as np
import pytest

from mbslib import kernels as K
from mbslib.formulations import rotation_parameters as rp
from mbslib.formulations.compiled import ModelKind, bind_form, vector_tangent, vector_tangent_inv, vector_uac, workspace
from mbslib.integrators import generalized_alpha as ga
from mbslib.integrators import runge_kutta as rk
from mbslib.integrators.tableaux import RK44
from mbslib.systems import lie_group_mbs as L
from mbslib.systems.puma560 import Puma560
from mbslib.systems.slider_crank import SliderCrank

# numba announces first-class function types (the kernel bundles) as experimental when it compiles
pytestmark = pytest.mark.filterwarnings("ignore::numba.NumbaExperimentalFeatureWarning")


def _models():
    """(name, model, x0) of every model family and formulation of the chapter."""
    out = [(f"heavy top {c}", *L.heavy_top_model(c)) for c in range(L.ROT_RV)]
    out.append(("spherical top EP, tangent Jacobian", *L.heavy_top_model(L.SPH_EP, ep_jacobian="tangent")))
    out += [(f"rotor {c}", *L.rotor_model(c)) for c in (L.ROT_RV, L.ROT_RXYZ, L.ROT_EP)]
    out[-3] = ("rotor 6 (damped)", *L.rotor_model(L.ROT_RV, L.Rotor(damping=3.0)))
    crank, robot = SliderCrank(), Puma560()
    for f in range(3):
        out.append((f"slider-crank {f}", L.CompiledModel(L.MB_RV + f, crank.system().params()), crank.initial_state(f)))
        absolute = L.CompiledModel(L.MB_RV + f, robot.system().params())
        out.append((f"Puma absolute {f}", absolute, robot.absolute_state(f)))
    out.append(("Puma joint coordinates", L.CompiledModel(L.CHAIN, robot.params()), robot.initial_state()))
    return out


MODELS = _models()
IDS = [name for name, _, _ in MODELS]


def _evaluate(model, q, v, t=0.3, kernels=None):
    """``M, g, K, C, Φ, B`` from the model's kernels (or the bundle ``kernels`` in the model's place)."""
    n, j = model.n, model.n_constraints
    work = workspace(model.n_pages)
    M, g, Kt, C = np.zeros((n, n)), np.zeros(n), np.zeros((n, n)), np.zeros((n, n))
    phi, B = np.zeros(j), np.zeros((j, n))
    dynamics, constraints = (model.kernels if kernels is None else kernels)[:2]
    dynamics(bind_form(model.form), model.P, q, v, t, True, work, M, g, Kt, C)
    constraints(bind_form(model.form), model.P, q, work, phi, B)
    return M, g, Kt, C, phi, B


def _uac(model, q, dq):
    out = np.zeros_like(q)
    model.kernels[3](bind_form(model.form), model.P, q, dq, out)
    return out


def _state(model, x0, rng):
    n = model.n
    return x0[:n] + 0.1 * rng.normal(size=n), x0[n:] + rng.normal(size=n)


@pytest.mark.parametrize("name, model, x0", MODELS, ids=IDS)
def test_kernels_agree_with_the_evaluation_by_code(name, model, x0, rng):
    q, v = _state(model, x0, rng)
    M, g, _, _, phi, B = _evaluate(model, q, v)
    scale = max(1.0, np.abs(g).max())
    assert np.abs(M - L.mass_matrix(model.code, q, model.P)).max() < 1e-13 * max(1.0, np.abs(M).max())
    assert np.abs(g - L.force(model.code, q, v, 0.3, model.P)).max() < 1e-13 * scale
    if model.code != L.CHAIN:
        assert np.abs(phi - L.constraint(model.code, q, model.P)).max(initial=0.0) < 1e-14
        assert np.abs(B - L.constraint_jacobian(model.code, q, model.P)).max(initial=0.0) < 1e-14
    assert np.array_equal(_uac(model, q, 0.01 * v), L.uac(model.code, q, 0.01 * v))
    out = np.zeros(model.n_record)
    model.kernels[2](bind_form(model.form), model.P, q, v, workspace(model.n_pages), out)
    expected = L.com_state(model.code, q, v, model.P) if model.code < L.MB_RV else np.concatenate([q, v])
    assert np.abs(out - expected).max() < 1e-14 * max(1.0, np.abs(expected).max())


@pytest.mark.parametrize("name, model, x0", MODELS, ids=IDS)
def test_analytic_jacobians_against_central_differences(name, model, x0, rng):
    """``K = −∂g/∂z`` and ``B = ∂Φ/∂z`` along the update map, ``C = −∂g/∂v`` (eqs. 10, 37, 38)."""
    q, v = _state(model, x0, rng)
    _, g, Kt, C, _, B = _evaluate(model, q, v)
    n, d = model.n, 1e-6
    eye = np.eye(n)
    K_fd = np.column_stack([-(_evaluate(model, _uac(model, q, d * e), v)[1]
                              - _evaluate(model, _uac(model, q, -d * e), v)[1]) / (2 * d) for e in eye])
    C_fd = np.column_stack([-(_evaluate(model, q, v + d * e)[1] - _evaluate(model, q, v - d * e)[1]) / (2 * d)
                            for e in eye])
    B_fd = np.column_stack([(_evaluate(model, _uac(model, q, d * e), v)[4]
                             - _evaluate(model, _uac(model, q, -d * e), v)[4]) / (2 * d) for e in eye])
    # central differences: truncation ~ d² |g'''|, round-off ~ ε |g| / d
    assert np.abs(Kt - K_fd).max() < 1e-7 * max(1.0, np.abs(K_fd).max(), np.abs(g).max())
    assert np.abs(C - C_fd).max() < 1e-7 * max(1.0, np.abs(C_fd).max(), np.abs(g).max())
    if name != "spherical top EP, tangent Jacobian":  # R X̃ Ĝ by design (test_002_counters)
        assert np.abs(B - B_fd).max(initial=0.0) < 1e-8


@pytest.mark.parametrize("code, generic", [(L.TOP_RV, L.TOP), (L.SPH_RV, L.SPHERICAL_TOP)], ids=["top", "spherical"])
def test_lie_group_tops_equal_the_kernels_of_every_formulation(code, generic, rng):
    """The RV kernels of the two tops (written for ``Ĝ = I``, ``κ = 0``) give the values of the
    kernels written for every formulation, with the RV bundle, to the last bit."""
    model, x0 = L.heavy_top_model(code)
    assert model.kind is not generic
    for _ in range(3):
        q, v = _state(model, x0, rng)
        for ours, theirs in zip(_evaluate(model, q, v), _evaluate(model, q, v, kernels=generic.kernels), strict=True):
            assert np.array_equal(ours, theirs)


@pytest.mark.parametrize("form", ["RV", "Rxyz", "EP"])
def test_formulation_derivatives_against_differences(form, rng):
    """``∂R/∂ρ_k`` (RV: ``R ẽ_k`` along ``R exp(z̃)``), ``∂Ĝ/∂ρ_k``, ``∂κ/∂ρ``, ``∂κ/∂ν`` from
    differences of ``kin``'s own values; ``ω = Ĝ ν``, the update and the tangent operator."""
    bundle = rp.BY_NAME[form]
    l, kin, update, tangent = bundle[0], bundle[2], bundle[3], bundle[4]
    q, v = 0.4 * rng.normal(size=l), rng.normal(size=l)
    if form == "EP":
        q = np.concatenate([[1.0], q[1:]])  # off the unit sphere: the derivatives hold anyway

    def values(q, v, deriv=False):
        work = workspace(rp.BODY_PAGES)
        kin(q, v, 0, deriv, work, 0)
        return work

    w = values(q, v, True)
    assert np.allclose(w[rp.RATES_, 0, :3], w[rp.G_, :3, :l] @ v, rtol=0, atol=1e-14)
    d = 1e-6
    for k in range(l):
        e = np.eye(l)[k]
        if form == "RV":  # along R exp(z̃): differences through the update map
            plus, minus = np.zeros(3), np.zeros(3)
            update(q, d * e, plus, 0)
            update(q, -d * e, minus, 0)
        else:
            plus, minus = q + d * e, q - d * e
        wp, wm = values(plus, v), values(minus, v)
        dR = (wp[rp.R_, :3, :3] - wm[rp.R_, :3, :3]) / (2 * d)
        assert np.abs(dR - w[rp.DR_ + k, :3, :3]).max() < 1e-9
        if form != "RV":
            dG = (wp[rp.G_, :3, :l] - wm[rp.G_, :3, :l]) / (2 * d)
            dk = (wp[rp.RATES_, 1, :3] - wm[rp.RATES_, 1, :3]) / (2 * d)
            assert np.abs(dG - w[rp.DG_ + k, :3, :l]).max() < 1e-9
            assert np.abs(dk - w[rp.DKAPPA_, :3, k]).max() < 1e-8
        kv = (values(q, v + d * e)[rp.RATES_, 1, :3] - values(q, v - d * e)[rp.RATES_, 1, :3]) / (2 * d)
        assert np.abs(kv - w[rp.DKAPPA_ + 1, :3, k]).max() < 1e-8
    R = w[rp.R_, :3, :3]
    if form == "RV":
        assert np.allclose(R, K.rotation_rv(q), rtol=0, atol=1e-15)
        out = np.zeros(3)
        update(q, 0.3 * v, out, 0)
        assert np.allclose(out, K.compose_rv(q, 0.3 * v), rtol=0, atol=1e-15)
        T = np.zeros((4, 4))
        tangent(np.concatenate([[0.0], 0.3 * v]), T, 1)  # the body's parameters at offset 1
        assert np.allclose(T[1:, 1:], K.texp_so3(0.3 * v), rtol=0, atol=1e-15)
    else:
        assert np.allclose(R, (K.rotation_rxyz if form == "Rxyz" else K.rotation_ep)(q), rtol=0, atol=1e-15)


def test_compiled_integrators_allocate_nothing_per_step():
    """NRT allocations of a generalized-α or RK44 run do not grow with the number of steps
    (numba's allocation statistics, on in a subprocess: they are switched on before numba starts)."""
    script = """
import numpy as np
from numba.core.runtime import rtsys
from mbslib.integrators import generalized_alpha as ga
from mbslib.integrators import runge_kutta as rk
from mbslib.integrators.tableaux import RK44
from mbslib.systems import lie_group_mbs as L
from mbslib.systems.puma560 import Puma560
from mbslib.systems.slider_crank import SliderCrank
crank, robot = SliderCrank(), Puma560()
cases = [L.heavy_top_model(L.SPH_EP), L.rotor_model(L.ROT_RV), (L.CompiledModel(L.MB_RV, crank.system().params()),
         crank.initial_state(0)), (L.CompiledModel(L.CHAIN, robot.params()), robot.initial_state())]
for model, x0 in cases:
    counts = []
    for n_steps in (5, 50):
        for modified in (False, True):
            start = rtsys.get_allocation_stats().alloc
            ga.integrate_genalpha(model, x0, 1e-4, n_steps * 1e-4, newton=ga.NewtonSettings(modified=modified))
            counts.append(rtsys.get_allocation_stats().alloc - start)
    print(counts[0] == counts[2] and counts[1] == counts[3], counts)
for model, x0 in [L.heavy_top_model(L.TOP_RV), L.heavy_top_model(L.TOP_RXYZ), L.rotor_model(L.ROT_RXYZ),
                  (L.CompiledModel(L.CHAIN, robot.params()), robot.initial_state())]:
    counts = []
    for n_steps in (5, 50):
        start = rtsys.get_allocation_stats().alloc
        rk.integrate_explicit(model, x0, RK44, 1e-4, n_steps * 1e-4)
        counts.append(rtsys.get_allocation_stats().alloc - start)
    print(counts[0] == counts[1], counts)
"""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-c", script], env=dict(os.environ, NUMBA_NRT_STATS="1"), cwd=root,
                         capture_output=True, text=True, check=True).stdout.split("\n")
    assert [line.split()[0] for line in out if line] == ["True"] * 8, out


# --- a model family added without touching the integrator ---------------------------------------

@numba.njit
def _oscillator_dynamics(form, P, q, v, t, jac, work, M, g, Kt, C):
    """``m ẍ = −k x − d ẋ`` with ``P = [m, k, d]``."""
    M[0, 0] = P[0]
    g[0] = -P[1] * q[0] - P[2] * v[0]
    if jac:
        Kt[0, 0] = P[1]
        C[0, 0] = P[2]


@numba.njit
def _no_constraints(form, P, q, work, phi, B):
    pass


@numba.njit
def _state_record(form, P, q, v, work, out):
    out[0] = q[0]
    out[1] = v[0]


def test_a_new_model_family_needs_no_edit_of_the_integrator(monkeypatch):
    """A damped oscillator registered under a new code runs through generalized-α (second order,
    the paper's settings) and RK44 (fourth order) against its closed-form solution."""
    oscillator = ModelKind("oscillator", (_oscillator_dynamics, _no_constraints, _state_record, vector_uac,
                                          vector_tangent, vector_tangent_inv),
                           n=lambda P, form: 1, n_constraints=lambda P, form: 0, n_pages=lambda P, form: 1,
                           n_record=lambda P, form: 2, check=lambda P, form: np.asarray(P, dtype=float))
    monkeypatch.setitem(L.REGISTRY, 99, (oscillator, rp.VECTOR))
    monkeypatch.setitem(L.FORMULATION, 99, "vector")
    m, k, d = 2.0, 50.0, 0.4
    model = L.CompiledModel(99, np.array([m, k, d]))
    w0, zeta = np.sqrt(k / m), d / (2 * np.sqrt(k * m))
    wd = w0 * np.sqrt(1 - zeta**2)
    exact = np.exp(-zeta * w0 * 1.0) * (np.cos(wd) + zeta * w0 / wd * np.sin(wd))  # x(0) = 1, ẋ(0) = 0
    errors = [abs(ga.integrate_genalpha(model, np.array([1.0, 0.0]), h, 1.0).q[0] - exact) for h in (0.01, 0.005)]
    assert 3.5 < errors[0] / errors[1] < 4.5
    # the same bundles run the explicit RK44 (fourth order), no edit of that integrator either
    errors = [abs(rk.integrate_explicit(model, np.array([1.0, 0.0]), RK44, h, 1.0).q[0] - exact) for h in (0.02, 0.01)]
    assert 14.0 < errors[0] / errors[1] < 18.0
