"""Each integrator family states what it needs of a system as one ``typing.Protocol``; what the
chapters pass to that family, and what the formulations build from a description, satisfy it.

``isinstance`` against a runtime-checkable protocol checks that every member is present, not its
signature: the unit tests of each family check the behaviour.
"""

import pytest

from mbslib.formulations import directors, lie_group
from mbslib.formulations.quaternions import QuaternionSystem, RotationSystem
from mbslib.formulations.rodrigues import PivotedRodriguesSystem, RodriguesSystem
from mbslib.integrators.generalized_alpha import GeneralizedAlphaModel
from mbslib.integrators.ggl import GGLConstraints, GGLSystem
from mbslib.integrators.hamiltonian import CanonicalSystem
from mbslib.integrators.livens import LivensSystem, QuaternionBodySystem
from mbslib.integrators.nonholonomic_em import DirectorTriad
from mbslib.integrators.rodrigues_vi import SphericalBodies
from mbslib.integrators.runge_kutta import ExplicitModel
from mbslib.methods import METHODS
from mbslib.model import Gravity, Model, RigidBody, Spring
from mbslib.systems import ggl_examples
from mbslib.systems import lie_group_mbs as lg
from mbslib.systems import livens_systems as ls
from mbslib.systems import nontwisting_body as nt
from mbslib.systems.benchmarks import pendulum_3d
from mbslib.systems.binder_torus import make_torus
from mbslib.systems.elastic_pendulum import ElasticPendulum
from mbslib.systems.four_bar_loop import FourBarLoop
from mbslib.systems.pendulum3d import Pendulum3D
from mbslib.systems.rigid_bodies import free_body, heavy_top

# the two bodies of the issue, each described once: a free asymmetric body (inertia not diagonal
# in its body frame) and the heavy top
FREE_BODY = free_body([[2.0, 0.3, 0.0], [0.3, 3.0, 0.1], [0.0, 0.1, 4.5]], [1.0, -2.0, 0.5])
DESCRIPTIONS = {"free asymmetric body": FREE_BODY, "heavy top": heavy_top()}
FORMS = ("RV", "EP", "Rxyz")


def _lie_group_models():
    top = [lg.heavy_top_model(code)[0] for code in (lg.TOP_RV, lg.TOP_RXYZ, lg.TOP_EP, lg.SPH_RV, lg.SPH_RXYZ,
                                                    lg.SPH_EP)]
    return top + [lg.rotor_model(code)[0] for code in (lg.ROT_RV, lg.ROT_RXYZ, lg.ROT_EP)]


# --- the paper systems the chapters pass to each family ----------------------------------------

@pytest.mark.parametrize("system", [ls.MassSpring(), ls.SpringPendulum(), ls.FreeRigidBody(), ls.HeavyTop(),
                                    FourBarLoop()], ids=lambda s: type(s).__name__)
def test_livens_systems_of_chapter_000(system):
    assert isinstance(system, LivensSystem)


@pytest.mark.parametrize("system", [ls.FreeRigidBody(), ls.HeavyTop()], ids=lambda s: type(s).__name__)
def test_quaternion_bodies_of_chapter_000(system):
    assert isinstance(system, QuaternionBodySystem)


def test_canonical_system_of_the_preliminaries():
    assert isinstance(ElasticPendulum(), CanonicalSystem)


@pytest.mark.parametrize("system", [ggl_examples.heavy_top(), ggl_examples.double_four_bar(),
                                    ggl_examples.double_four_bar(ggl_examples.FourBarParams(eta=0.5))],
                         ids=["heavy top", "double four-bar", "damped double four-bar"])
def test_ggl_systems_of_chapter_001(system):
    assert isinstance(system, GGLSystem)
    assert isinstance(system.constraints, GGLConstraints)


@pytest.mark.parametrize("model", _lie_group_models(), ids=lambda m: f"code {m.code}")
def test_compiled_models_of_chapter_002(model):
    assert isinstance(model, ExplicitModel)
    assert isinstance(model, GeneralizedAlphaModel)


@pytest.mark.parametrize("system", [PivotedRodriguesSystem(Pendulum3D().model()), make_torus()],
                         ids=lambda s: type(s).__name__)
def test_spherical_bodies_of_chapter_003(system):
    assert isinstance(system, SphericalBodies)


@pytest.mark.parametrize("body", [nt.make_body(), nt.make_body(alpha=2472.5, beta=1075.0)],
                         ids=["unloaded", "loaded"])
def test_director_bodies_of_chapter_004(body):
    assert isinstance(body, DirectorTriad)


def test_the_protocols_tell_the_families_apart():
    """A member check that passed everything would prove nothing."""
    assert not isinstance(ggl_examples.heavy_top(), LivensSystem)
    assert not isinstance(ls.HeavyTop(), GGLSystem)
    assert not isinstance(ls.MassSpring(), QuaternionBodySystem)  # no principal inertias Jv
    assert not isinstance(nt.make_body(), SphericalBodies)
    assert not isinstance(Pendulum3D(), DirectorTriad)
    assert not isinstance(ElasticPendulum(), LivensSystem)
    assert not isinstance(lg.heavy_top_model(lg.TOP_RV)[0], GGLSystem)


# --- one description, every family through its formulation -----------------------------------

@pytest.mark.parametrize("model", DESCRIPTIONS.values(), ids=DESCRIPTIONS.keys())
def test_quaternion_formulations_satisfy_the_livens_protocols(model):
    assert isinstance(QuaternionSystem(model), LivensSystem)
    single = RotationSystem(model).system  # Null-EML, EMH, MPH
    assert isinstance(single, LivensSystem)
    assert isinstance(single, QuaternionBodySystem)


@pytest.mark.parametrize("model", DESCRIPTIONS.values(), ids=DESCRIPTIONS.keys())
def test_director_formulation_satisfies_the_ggl_protocol(model):
    system = directors.director_system(model)
    assert isinstance(system, GGLSystem)
    assert isinstance(system.constraints, GGLConstraints)


@pytest.mark.parametrize("model", DESCRIPTIONS.values(), ids=DESCRIPTIONS.keys())
def test_absolute_coordinates_satisfy_the_compiled_protocols(model):
    for form in FORMS:
        assert isinstance(lie_group.absolute_model(model, form), GeneralizedAlphaModel)
    # the explicit methods take unconstrained coordinates: the free body's absolute ones, the
    # top's rotation vector about its pivot (the shoot-out's formulation of RKMK)
    explicit = METHODS["RKMK RK44"].build(model)
    assert isinstance(explicit, ExplicitModel)
    assert explicit.n_constraints == 0


def test_the_free_body_is_a_director_triad_and_the_top_is_refused():
    body, x0 = directors.nontwisting_body(FREE_BODY)
    assert isinstance(body, DirectorTriad)
    assert x0.shape == (18,)
    with pytest.raises(ValueError, match="one free body"):
        directors.nontwisting_body(DESCRIPTIONS["heavy top"])


@pytest.mark.parametrize("model, match", [(FREE_BODY, "spherical bodies"), (heavy_top(), "joints")],
                         ids=DESCRIPTIONS.keys())
def test_rodrigues_maps_refuse_both_bodies(model, match):
    """The explicit maps of paper 003 hold for spherical inertia only: neither body qualifies."""
    with pytest.raises(ValueError, match=match):
        RodriguesSystem(model)


def test_rodrigues_formulations_of_spherical_descriptions_satisfy_the_protocol():
    a = RigidBody("a", 1.0, [0.4, 0.4, 0.4], angular_velocity=[0.5, 1.0, -0.3])
    b = RigidBody("b", 2.0, [0.9, 0.9, 0.9], position=[1.5, 0.2, 0.0])
    spheres = Model((a, b), springs=(Spring(0, 1, [0.3, 0.1, 0.0], [-0.2, 0.0, 0.3], stiffness=40.0),),
                    gravity=Gravity([0, 0, -9.81]))
    assert isinstance(RodriguesSystem(spheres), SphericalBodies)
    assert isinstance(PivotedRodriguesSystem(pendulum_3d()), SphericalBodies)
    with pytest.raises(ValueError, match="spherical inertia about the pivot"):
        PivotedRodriguesSystem(heavy_top())
