"""The particle–binder torus of paper 003 from its description: the records ElasticBond and
HertzContact of mbslib.model, their energies in the coordinate-free diagnostics, and the rescaled
Rodrigues formulation that turns such a description into the arguments of the torus's compiled
kernel (BondedSpheresSystem)."""

from dataclasses import replace

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from mbslib import diagnostics
from mbslib import model as md
from mbslib import rodrigues as rr
from mbslib.formulations import directors, joint_coordinates, lie_group, quaternions
from mbslib.formulations.rodrigues import BondedSpheresSystem, PivotedRodriguesSystem, RodriguesSystem
from mbslib.integrators.rodrigues_vi import SphericalBodies
from mbslib.model import ElasticBond, Gravity, HertzContact, Model, PlaneWall, RigidBody
from mbslib.systems import binder_torus as bt
from mbslib.systems.pendulum3d import Pendulum3D

RNG = np.random.default_rng(43)
VARIANTS = {"paper": {}, "absolute": dict(law="absolute"), "24 particles": dict(n_p=24, x_c=1.6),
            "softer contact": dict(K_pp=210.0, K_pw=210.0), "no pair contact": dict(contact=False),
            "no wall": dict(wall=False), "free ring": dict(wall=False, contact=False),
            "other values": dict(n_p=17, D_t=2.5, m=0.7, J=0.3, K_m=3.0, K_a=50.0, K_s=70.0, v0=0.4, x_c=3.0,
                                 x_w=-0.5)}


def paper_kernel_args(torus):
    """The kernel's arguments as the torus module built them from the parameters before the
    description existed (bonds (i, i+1), reference directions and lengths, the paper's values)."""
    p = torus.params
    return (torus.bonds[:, 0].copy(), torus.bonds[:, 1].copy(), torus.n0, torus.r0, float(torus.D), float(p.m),
            float(p.J), float(p.K_m), float(p.K_a), float(p.K_s), float(p.K_pp), float(p.K_pw), float(p.x_w),
            p.law == "absolute", bool(p.wall), bool(p.contact))


def system_of(params):
    return BondedSpheresSystem(bt.make_torus(params).description())


def random_state(torus):
    """Positions off the ring, a wall penetration, a non-bonded overlap, random attitudes and rates."""
    x = torus.x0 + 0.02 * RNG.normal(size=torus.x0.shape)
    x[torus.n // 2, 0] = torus.params.x_w + 0.02
    x[3] = x[5] + 0.9 * torus.D * np.array([1.0, 0.0, 0.0])
    return x, RNG.normal(size=x.shape), 0.6 * RNG.normal(size=x.shape), RNG.normal(size=x.shape)


def body_states(x, v, alpha, w):
    """One instant of model.BodyStates from the maps' (x, v, α, spatial Ω)."""
    R = rr.rr_matrix(alpha)
    return md.BodyStates(np.zeros(1), x[None], R[None], v[None], np.einsum("nji,nj->ni", R, w)[None])


@pytest.mark.parametrize("changes", VARIANTS.values(), ids=VARIANTS.keys())
def test_description_gives_the_kernel_arguments_of_the_paper_constructor(changes):
    torus = bt.make_torus(bt.TorusParams(**changes))
    system = system_of(torus.params)
    old, new = paper_kernel_args(torus), system.kernel_args
    assert len(new) == len(old) == 16
    unused = {11, 12} if not torus.params.wall else set()  # K_pw and x_w: the kernel reads them only with a wall
    for k, (a, b) in enumerate(zip(old, new, strict=True)):
        if k not in unused:
            assert type(a) is type(b) and np.array_equal(a, b), f"argument {k}: {a!r} != {b!r}"
            assert np.asarray(a).dtype == np.asarray(b).dtype
    for a, b in zip(torus.initial_conditions(), system.initial_conditions(), strict=True):
        np.testing.assert_array_equal(a, b)
    assert (system.m, system.J, system.n, system.diameter) == (torus.m, torus.J, torus.n, torus.D)
    assert isinstance(system, SphericalBodies)


@pytest.mark.parametrize("changes", VARIANTS.values(), ids=VARIANTS.keys())
def test_description_energy_is_the_kernel_energy(changes):
    """model.total_energy (coordinate-free, from body poses) against the compiled kernel's terms at
    random states, and each term alone (the other stiffnesses zero)."""
    params = bt.TorusParams(**changes)
    torus = bt.make_torus(params)
    for _ in range(3):
        x, v, alpha, w = random_state(torus)
        states = body_states(x, v, alpha, w)
        system = system_of(params)
        _, _, U, _ = system.forces(x, alpha)
        assert diagnostics.potential_energy(system.model, states)[0] == pytest.approx(U.sum(), rel=1e-13, abs=1e-13)
        energy = diagnostics.total_energy(system.model, states)[0]
        assert energy == pytest.approx(system.energy(x, v, alpha, w), rel=1e-13)
        assert energy == pytest.approx(bt.energy_terms(torus, x, v, alpha, w).sum(), rel=1e-13)
        zero = dict(K_m=0.0, K_a=0.0, K_s=0.0, K_pp=0.0, K_pw=0.0)
        for k, name in enumerate(("K_m", "K_s", "K_a", "K_pp", "K_pw")):
            alone = params.replace(**{**zero, name: getattr(params, name)})
            single = system_of(alone)
            assert np.count_nonzero(single.forces(x, alpha)[2]) <= 1
            assert diagnostics.potential_energy(single.model, states)[0] == pytest.approx(U[k], rel=1e-13, abs=1e-14)


@pytest.mark.parametrize("law", ["normalized", "absolute"])
def test_kernel_forces_are_minus_the_gradient_of_the_description_potential(law):
    torus = bt.make_torus(bt.TorusParams(n_p=12, x_c=1.6, law=law))
    system = system_of(torus.params)
    x, v, alpha, w = random_state(torus)
    F, T, U, _ = system.forces(x, alpha)
    assert np.all(U > 0)  # every term active

    def V(x_, a_):
        return diagnostics.potential_energy(system.model, body_states(x_, v, a_, w))[0]

    eps = 1e-6
    for i in range(torus.n):
        for c in range(3):
            e = np.zeros(3)
            e[c] = eps
            fd = -(V(x + np.where(np.arange(torus.n)[:, None] == i, e, 0.0), alpha)
                   - V(x - np.where(np.arange(torus.n)[:, None] == i, e, 0.0), alpha)) / (2 * eps)
            assert abs(fd - F[i, c]) <= 1e-6 * np.abs(F).max()
            ap, am = alpha.copy(), alpha.copy()
            ap[i] = rr.rr_compose(alpha[i], e)  # spatial (left) perturbation: T = -dV/dζ
            am[i] = rr.rr_compose(alpha[i], -e)
            assert abs(-(V(x, ap) - V(x, am)) / (2 * eps) - T[i, c]) <= 1e-6 * np.abs(T).max()


def two_spheres(**bond):
    """Two unit spheres at random poses with a bond whose rest pose comes from these states."""
    R = Rotation.random(2, random_state=5).as_matrix()
    bodies = (RigidBody("a", 1.0, [1.0, 1.0, 1.0], position=[0.0, 0.0, 0.0], rotation=R[0]),
              RigidBody("b", 1.0, [1.0, 1.0, 1.0], position=[0.3, -0.4, 1.2], rotation=R[1]))
    return Model(bodies, bonds=(ElasticBond(0, 1, **bond),))


def test_bond_rest_pose_and_its_rotation_and_stretch_energies():
    model = two_spheres(rotation_stiffness=3.0, axial_stiffness=5.0, stretch="absolute")
    start = model.initial_states()
    r0, n0, A0 = md.bond_rest_poses(model)
    a, b = model.bodies
    assert r0[0] == pytest.approx(1.3) and np.allclose(a.rotation @ n0[0], (a.position - b.position) / 1.3)
    assert np.allclose(A0[0], a.rotation.T @ b.rotation)
    assert diagnostics.potential_energy(model, start)[0] == pytest.approx(0.0, abs=1e-28)  # at rest (no shear term)
    # body b turned by 0.7 rad about a world axis and moved 0.1 m along the bond: ½ 3 0.7² + ½ 5 0.1²
    Q = Rotation.from_rotvec(0.7 * np.array([0.0, 0.6, 0.8])).as_matrix()
    moved = replace(start, rotation=start.rotation.copy(), position=start.position.copy())
    moved.rotation[0, 1] = Q @ b.rotation
    moved.position[0, 1] = b.position + 0.1 * (b.position - a.position) / 1.3
    expected = 0.5 * 3.0 * 0.7**2 + 0.5 * 5.0 * 0.1**2
    assert diagnostics.potential_energy(model, moved)[0] == pytest.approx(expected, rel=1e-13)
    # turning the whole pair leaves rotation and stretch at rest (objective); the shear law is not
    whole = replace(start, rotation=np.einsum("ij,tnjk->tnik", Q, start.rotation),
                    position=np.einsum("ij,tnj->tni", Q, start.position))
    assert diagnostics.potential_energy(model, whole)[0] == pytest.approx(0.0, abs=1e-26)
    sheared = Model(model.bodies, bonds=(replace(model.bonds[0], shear_stiffness=2.0),))
    assert diagnostics.potential_energy(sheared, whole)[0] > 1e-3
    # given rest values win over the initial states
    given = Model(model.bodies, bonds=(replace(model.bonds[0], rest_length=1.0, rest_rotation=np.eye(3)),))
    r0g, _, A0g = md.bond_rest_poses(given)
    assert r0g[0] == 1.0 and np.array_equal(A0g[0], np.eye(3))


def test_hertz_contact_energies_pairs_radii_and_wall():
    bodies = tuple(RigidBody(f"s{k}", 1.0, [1.0, 1.0, 1.0], position=p)
                   for k, p in enumerate(([0.0, 0.0, 0.5], [0.9, 0.0, 0.5], [0.0, 0.0, 3.0])))
    wall = PlaneWall([0.0, 0.0, 0.0], [0.0, 0.0, 2.0], 7.0)  # the floor z = 0, normal normalised
    contact = HertzContact([0.5, 0.6, 0.2], 4.0, pairs="all", wall=wall, exponent=1.0, overlap="absolute")
    model = Model(bodies, contacts=(contact,))
    # pair (0, 1) overlaps 1.1 - 0.9 = 0.2, body 0 the floor by 0.5 - 0.5 = 0, body 1 by 0.6 - 0.5 = 0.1
    expected = 4.0 * 0.2**2 / 2 + 7.0 * 0.1**2 / 2
    assert diagnostics.potential_energy(model, model.initial_states())[0] == pytest.approx(expected, rel=1e-13)
    listed = Model(bodies, contacts=(replace(contact, pairs=((1, 2),), wall=None),))
    assert diagnostics.potential_energy(listed, listed.initial_states())[0] == 0.0
    normalized = Model(bodies, contacts=(replace(contact, overlap="normalized", exponent=1.5, wall=None),))
    assert diagnostics.potential_energy(normalized, normalized.initial_states())[0] == pytest.approx(
        0.4 * 4.0 * (1 - 0.9 / 1.1) ** 2.5, rel=1e-13)


@pytest.mark.parametrize("build, name", [
    (lambda: ElasticBond(0, 0), "body_a and body_b"), (lambda: ElasticBond(None, 1), "body_a"),
    (lambda: ElasticBond(0, 1, axial_stiffness=-1.0), "axial_stiffness"),
    (lambda: ElasticBond(0, 1, stretch="relative"), "stretch"),
    (lambda: ElasticBond(0, 1, rest_length=0.0), "rest_length"),
    (lambda: ElasticBond(0, 1, rest_direction=[0, 0, 0]), "rest_direction"),
    (lambda: ElasticBond(0, 1, rest_rotation=2 * np.eye(3)), "rest_rotation"),
    (lambda: HertzContact(-1.0, 1.0), "radius"), (lambda: HertzContact(1.0, -1.0), "stiffness"),
    (lambda: HertzContact(1.0, 1.0, exponent=0.0), "exponent"),
    (lambda: HertzContact(1.0, 1.0, pairs="some"), "pairs"),
    (lambda: HertzContact(1.0, 1.0, pairs=((0, 0),)), r"pairs\[0\]"),
    (lambda: HertzContact(1.0, 1.0, overlap="relative"), "overlap"), (lambda: HertzContact(1.0, 1.0, wall=3), "wall"),
    (lambda: PlaneWall([0, 0, 0], [0, 0, 0], 1.0), "normal"),
    (lambda: PlaneWall([0, 0, 0], [1, 0, 0], -1.0), "stiffness"),
    (lambda: Model(two_spheres().bodies, bonds=(ElasticBond(0, 2),)), r"bonds\[0\].body_b = 2"),
    (lambda: Model(two_spheres().bodies, bonds=(Gravity([0, 0, 1]),)), r"bonds\[0\] must be an ElasticBond"),
    (lambda: Model(two_spheres().bodies, contacts=(HertzContact([1.0, 1.0, 1.0], 1.0),)), r"contacts\[0\].radius"),
    (lambda: Model(two_spheres().bodies, contacts=(HertzContact(1.0, 1.0, pairs=((0, 5),)),)), r"contacts\[0\].pairs"),
    (lambda: Model((RigidBody("a", 1.0, [1, 1, 1]), RigidBody("b", 1.0, [1, 1, 1])), bonds=(ElasticBond(0, 1),)),
     r"bonds\[0\]: the centres"),
])
def test_records_name_their_bad_parameters(build, name):
    with pytest.raises(ValueError, match=name):
        build()


def _paper():
    return bt.make_torus(bt.TorusParams(n_p=6, D_t=1.0, x_c=1.0)).description()


def _one_bond(model, k=2, **changes):
    return replace(model, bonds=tuple(replace(b, **changes) if i == k else b for i, b in enumerate(model.bonds)))


def _contact(model, **changes):
    return replace(model, contacts=(replace(model.contacts[0], **changes),))


@pytest.mark.parametrize("change, name", [
    (lambda m: replace(m, gravity=Gravity([0, 0, -1])), "gravity"),
    (lambda m: replace(m, joints=(md.Joint("spherical", 0, 1, np.zeros(3), np.zeros(3)),)), "joints"),
    (lambda m: replace(m, springs=(md.Spring(0, 1, np.zeros(3), np.zeros(3), 1.0),)), "springs"),
    (lambda m: replace(m, loads=(md.AppliedLoad(0, torque=md.Constant([0, 0, 1])),)), "loads"),
    (lambda m: replace(m, dampers=(md.PointDamper(0, 1, np.zeros(3), np.zeros(3), 1.0),)), "dampers"),
    (lambda m: replace(m, bodies=(replace(m.bodies[0], mass=2.0), *m.bodies[1:])), "mass and inertia"),
    (lambda m: replace(m, bodies=(*m.bodies[:-1], replace(m.bodies[-1], inertia=np.diag([1.0, 1.0, 2.0])))),
     "spherical bodies"),
    (lambda m: _one_bond(m, shear_stiffness=1.0), r"bonds\[2\] has the stiffnesses"),
    (lambda m: _one_bond(m, stretch="absolute"), "one measure"),
    (lambda m: _one_bond(m, rest_rotation=Rotation.from_rotvec([0, 0, 0.1]).as_matrix()), r"bonds\[2\].rest_rotation"),
    (lambda m: replace(m, contacts=m.contacts * 2), "one contact record"),
    (lambda m: _contact(m, pairs=((0, 3),)), r"contacts\[0\].pairs"),
    (lambda m: _contact(m, radius=np.linspace(0.1, 0.2, 6)), r"contacts\[0\].radius"),
    (lambda m: _contact(m, exponent=1.0), r"contacts\[0\].exponent"),
    (lambda m: _contact(m, overlap="absolute"), "one measure"),
    (lambda m: _contact(m, wall=PlaneWall([0, 0, 0], [0, 1, 0], 1.0)), r"contacts\[0\].wall.normal"),
])
def test_bonded_spheres_refuse_what_the_kernel_cannot_do(change, name):
    assert BondedSpheresSystem(_paper()).n == 6
    with pytest.raises(ValueError, match=name):
        BondedSpheresSystem(change(_paper()))


def test_the_other_rodrigues_formulations_refuse_bonds_and_contacts():
    with pytest.raises(ValueError, match="bonds and contacts"):
        RodriguesSystem(_paper())
    pendulum = Pendulum3D().model()
    with pytest.raises(ValueError, match="bonds or contacts"):
        PivotedRodriguesSystem(replace(pendulum, contacts=(HertzContact(0.1, 1.0),)))


@pytest.mark.parametrize("formulation", [directors.director_system, directors.planar_director_system,
                                         directors.nontwisting_body, quaternions.QuaternionSystem,
                                         quaternions.RotationSystem,
                                         lambda model: lie_group.absolute_model(model, "RV"),
                                         lambda model: joint_coordinates.joint_model(model, np.zeros(2))])
def test_formulations_without_bonds_and_contacts_refuse_them_by_name(formulation):
    bonded = two_spheres(rotation_stiffness=1.0)
    touching = replace(bonded, bonds=(), contacts=(HertzContact(0.1, 1.0),))
    for model in (bonded, touching):
        with pytest.raises(ValueError, match="bonds" if model.bonds else "contacts"):
            formulation(model)


def test_description_diagnostics_of_a_compiled_run_match_its_record():
    """A reader's own bonded spheres (a zigzag of four, all turned alike, spinning, one touching a
    wall) through the torus's compiled loop: the description's energy and momentum of the stored
    states, computed from body poses alone, equal the loop's own record."""
    from mbslib.studies import binder_torus as ts

    Q = Rotation.random(random_state=11).as_matrix()
    rng = np.random.default_rng(2)
    bodies = tuple(RigidBody(f"s{k}", 0.5, [0.02, 0.02, 0.02], position=[0.2 * k + 0.1, 0.15 * (k % 2), 0.0],
                             rotation=Q, velocity=0.3 * rng.normal(size=3), angular_velocity=rng.normal(size=3))
                   for k in range(4))
    model = Model(bodies, bonds=tuple(ElasticBond(k, k + 1, rotation_stiffness=0.5, axial_stiffness=8.0,
                                                  shear_stiffness=3.0) for k in range(3)),
                  contacts=(HertzContact(0.15, 40.0, wall=PlaneWall([0.0, 0.0, 0.0], [1.0, 0.0, 0.0], 60.0)),))
    system = BondedSpheresSystem(model)
    run = ts.simulate_torus(system, "23", 1e-3, 0.5, record_every=25, store_states=True)
    assert run.ok and bt.column(run, "U_pw")[0] > 0 and bt.column(run, "U_pp")[0] > 0  # every term acts
    states = system.body_states(run.t, run.extras["states"])
    np.testing.assert_allclose(diagnostics.total_energy(model, states), bt.column(run, "E"), rtol=1e-12)
    momentum = np.stack([bt.column(run, c) for c in ("P_x", "P_y", "P_z")], axis=1)
    np.testing.assert_allclose(diagnostics.linear_momentum(model, states), momentum, rtol=1e-12, atol=1e-14)
    assert diagnostics.total_energy(model, model.initial_states())[0] == pytest.approx(system.energy(
        *system.initial_conditions()), rel=1e-13)
