"""The director formulation (papers 001 and 004) of a coordinate-free model.

Each body is its centre of mass φ and the directors ``d_i = R V e_i`` along its principal axes
(``J = V diag(J_p) Vᵀ``, :func:`mbslib.systems.rigid_bodies.principal_frame`), stacked
``q = [φ; d₁; d₂; d₃]`` per body; the mass matrix is ``diag(m, E₁, E₂, E₃) ⊗ I`` with the
Euler-tensor values ``E_i = ½(J_j + J_k − J_i)`` (:mod:`mbslib.systems.directors`). A body
point ``p`` (body frame) has principal coordinates ``X = Vᵀ p`` and sits at ``φ + X_i d_i``.

Spherical joints (body–body and body–ground) and gravity are linear in q and map onto
:func:`mbslib.systems.directors.assemble`. A spring of zero rest length without damper is
quadratic in q (``½ k |D q + c|²``, ``D`` the difference of the two points' rows, ``c`` a ground
point) and becomes the constant stiffness ``k DᵀD`` and force ``−k Dᵀc`` of the director
system; other springs (their potential is not quadratic in q, the damper not linear in q̇), other
joints and applied loads raise ``NotImplementedError`` naming them. A point's velocity ``D q̇`` is
linear in the director velocities, so a :class:`~mbslib.model.PointDamper` (``D`` the difference of
its two points' rows) is the constant damping matrix ``C = c DᵀD`` (force ``−C q̇``, power
``−c |D q̇|²``), in the 3-D and the planar director systems alike.

:func:`planar_director_system` is the planar director formulation (Betsch & Uhlar 2007; Kinon,
Betsch & Schneider 2023, eqs. 70-74) of a model that moves in the x–y plane: every body turns
about e_z only, so its axis e_z stays along ±e_z and drops out, and the body is ``q = [φ; d₁; d₂]``,
six coordinates, the in-plane components of its centre of mass and of the principal axes
``d_α = R V e_α`` of its in-plane Euler tensor ``∫ X Xᵀ dm`` (``E_1 + E_2 = J_zz``, the moment
about the plane's normal). Revolute joints about e_z become the planar pins, two linear rows each.

:func:`nontwisting_body` is the director rigid body of paper 004 (Gebhardt & Romero 2020): one
free body turning about its centre of mass, ``q = (d₁, d₂, d₃)`` with ``d_i = R e_i`` in the
body's own frame (its inertia need not be diagonal), for the energy–momentum schemes of
:mod:`mbslib.integrators.nonholonomic_em`.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from mbslib.formulations.director_triad import initial_state, rotation_from_q
from mbslib.model import BodyStates, Model, refuse
from mbslib.rotations import vee
from mbslib.systems import nontwisting_body as nt
from mbslib.systems.directors import (
    ConstrainedSystem,
    DirectorBody,
    GroundPivot,
    Joint,
    assemble,
    euler_tensor_values,
    point_matrix,
)
from mbslib.systems.rigid_bodies import principal_frame


def director_system(model: Model) -> ConstrainedSystem:
    """The model as a constrained director system (constraints: each body's six internal ones,
    then the joints in order, three rows each)."""
    refuse(model, "director formulation", "bonds", "contacts")
    if model.loads:
        raise NotImplementedError("director formulation: applied loads are not available yet")
    frames = [principal_frame(b.inertia) for b in model.bodies]
    bodies = [DirectorBody(b.mass, tuple(euler_tensor_values(Jp)), dim=3)
              for b, (Jp, _) in zip(model.bodies, frames, strict=True)]
    for k, joint in enumerate(model.joints):
        if joint.kind != "spherical":
            raise NotImplementedError(f"director formulation: joints[{k}] is {joint.kind}; only spherical joints "
                                      "are available yet (revolute joints about e_z of a planar mechanism: "
                                      "planar_director_system)")
    gravity = np.zeros(3) if model.gravity is None else model.gravity.g
    axes, d = [V for _, V in frames], sum(body.n_coords for body in bodies)
    K, f = _springs(model, axes, d)
    system = assemble(bodies, gravity, _pins(model, axes, 3), K=K, C=_dampers(model, axes, 3, d))
    return replace(system, f=system.f + f)


def _pins(model: Model, axes, dim: int) -> list:
    """The joints as coinciding points, ``dim`` linear rows each: body points in principal coordinates
    ``X = Vᵀ p`` (``axes[i]`` the V of body i), ground points in the world frame, both cut to their first
    ``dim`` components."""
    def material(body, point):
        return tuple(axes[body].T @ point[:dim])

    pins = []
    for k, joint in enumerate(model.joints):
        X_b, label = material(joint.body_b, joint.point_b), f"joint {k + 1}"
        if joint.body_a is None:
            pins.append(GroundPivot(joint.body_b, X_b, tuple(joint.point_a[:dim]), label=label))
        else:
            pins.append(Joint(joint.body_a, material(joint.body_a, joint.point_a), joint.body_b, X_b, label=label))
    return pins


#: Largest out-of-plane component a planar model may have: of a unit vector (a body's axis e_z, a hinge
#: axis) and, relative to their size, of velocities, angular velocities and gravity.
_PLANE_TOL = 1e-12


def _out_of_plane(vector, along_z: bool = False) -> bool:
    """Whether ``vector`` (shape (3,)) leaves the x–y plane (``along_z``: is not along ±e_z)."""
    if along_z:
        return np.linalg.norm(vector[:2]) > _PLANE_TOL * np.linalg.norm(vector)
    return abs(vector[2]) > _PLANE_TOL * np.linalg.norm(vector)


def _planar_frames(model: Model) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per body the principal values ``E`` (2,) and axes ``V`` (2, 2), a rotation, of its in-plane Euler
    tensor ``½ tr(J) I − J`` (its x–y block), once the model is checked to move in the x–y plane."""
    for k, body in enumerate(model.bodies):
        name = f"planar directors: bodies[{k}] ({body.name!r})"
        if _out_of_plane(body.rotation[:, 2], along_z=True):
            raise ValueError(f"{name}: its rotation turns its e_z away from ±e_z; only rotations about e_z "
                             "(and a body face down) keep it in the x-y plane")
        if _out_of_plane(body.velocity):
            raise ValueError(f"{name}: its velocity {body.velocity} leaves the x-y plane")
        if _out_of_plane(body.angular_velocity, along_z=True):
            raise ValueError(f"{name}: its angular_velocity {body.angular_velocity} is not about e_z")
    for k, joint in enumerate(model.joints):
        if joint.kind != "revolute":
            raise ValueError(f"planar directors: joints[{k}] is {joint.kind}; only revolute joints about e_z keep "
                             "bodies in the x-y plane")
        for end, body, axis in (("a", joint.body_a, joint.axis_a), ("b", joint.body_b, joint.axis_b)):
            world = axis if body is None else model.bodies[body].rotation @ axis
            if _out_of_plane(world, along_z=True):
                raise ValueError(f"planar directors: joints[{k}].axis_{end} is {world} in the world frame, not e_z")
    if model.gravity is not None and _out_of_plane(model.gravity.g):
        raise ValueError(f"planar directors: gravity {model.gravity.g} leaves the x-y plane")
    frames = []
    for body in model.bodies:
        E = 0.5 * np.trace(body.inertia) * np.eye(2) - body.inertia[:2, :2]  # ∫ X Xᵀ dm over the plane
        if E[0, 1] == 0.0:
            frames.append((np.diag(E).copy(), np.eye(2)))
            continue
        values, V = np.linalg.eigh(E)
        V[:, 1] *= np.sign(np.linalg.det(V))
        frames.append((values, V))
    return frames


def planar_director_system(model: Model) -> ConstrainedSystem:
    """The model of a planar mechanism as a constrained system of planar director bodies.

    Each body is ``q = [φ; d₁; d₂]`` (:class:`mbslib.systems.directors.DirectorBody` with
    ``dim = 2``), its mass matrix ``diag(m, E_1, E_2) ⊗ I₂`` with the principal values of its in-plane
    Euler tensor (``E_1 + E_2 = J_zz``); gravity acts on φ (eq. 72 of Kinon et al. 2023). Constraints:
    each body's three internal ones (eq. 73), then the joints in order, each the planar pin
    ``x_a − x_b = 0`` of its two points (eq. 74), two rows. The z-components of positions and joint
    points are left out: the revolute joints about e_z hold them. Point dampers become the damping
    matrix ``C = Σ c DᵀD`` of the points' in-plane velocities.

    Raises
    ------
    ValueError
        Naming the part that leaves the x–y plane: a body whose rotation tilts its e_z, whose velocity
        has a z-component or whose angular velocity is not about e_z; a joint that is not revolute or
        whose axis is not e_z; gravity with a z-component.
    NotImplementedError
        For springs and applied loads (not available yet), naming the first.
    """
    refuse(model, "planar directors", "bonds", "contacts")
    frames = _planar_frames(model)
    for label, items in (("springs", model.springs), ("loads", model.loads)):
        if items:
            raise NotImplementedError(f"planar directors: {label}[0] and other {label} are not available yet")
    bodies = [DirectorBody(b.mass, tuple(E), dim=2) for b, (E, _) in zip(model.bodies, frames, strict=True)]
    gravity = np.zeros(2) if model.gravity is None else model.gravity.g[:2]
    axes = [V for _, V in frames]
    return assemble(bodies, gravity, _pins(model, axes, 2), C=_dampers(model, axes, 2, 6 * model.n_bodies))


def planar_initial_coordinates(model: Model) -> tuple[np.ndarray, np.ndarray]:
    """``(q₀, q̇₀)`` of :func:`planar_director_system` from the model's initial states, shape (6 N,) each:
    the in-plane components of ``φ``, ``d_α = R V e_α`` and ``ḋ_α = R (Ω × V e_α)``."""
    q, qdot = [], []
    for body, (_, V) in zip(model.bodies, _planar_frames(model), strict=True):
        axes = np.vstack([V, np.zeros(2)])  # V e_α in the body frame, shape (3, 2)
        D = body.rotation @ axes
        D_dot = body.rotation @ np.cross(body.angular_velocity, axes.T).T
        q += [body.position[:2], *D[:2].T]
        qdot += [body.velocity[:2], *D_dot[:2].T]
    return np.concatenate(q), np.concatenate(qdot)


def _difference(axes, dim: int, d: int, ends) -> tuple[np.ndarray, np.ndarray]:
    """``D`` (dim, d) and ``c`` (dim,) with ``D q + c`` the vector from point a to point b, ``ends`` the
    pairs (body or None, point) of a and b: body points in principal coordinates ``X = Vᵀ p`` (``axes[i]``
    the V of body i), ground points in the world frame, both cut to their first ``dim`` components."""
    n = dim * (dim + 1)
    D, c = np.zeros((dim, d)), np.zeros(dim)
    for sign, (body, point) in zip((-1.0, 1.0), ends, strict=True):
        if body is None:
            c += sign * point[:dim]
        else:
            D[:, n * body:n * body + n] += sign * point_matrix(dim, axes[body].T @ point[:dim])
    return D, c


def _springs(model: Model, axes, d: int) -> tuple[np.ndarray | None, np.ndarray]:
    """Stiffness ``K = Σ k DᵀD`` and force ``f = −Σ k Dᵀc`` of the springs, ``D q + c`` the vector
    from point a to point b (``V = ½ qᵀK q − fᵀq`` up to a constant); K None without springs (no
    d × d zeros to scan: the system's sparse K has no entries)."""
    if not model.springs:
        return None, np.zeros(d)
    K, f = np.zeros((d, d)), np.zeros(d)
    for k, spring in enumerate(model.springs):
        if spring.rest_length != 0.0 or spring.damping != 0.0:
            raise NotImplementedError(f"director formulation: springs[{k}] has a rest length or a damper; only "
                                      "undamped springs of zero rest length are quadratic in the directors")
        D, c = _difference(axes, 3, d, ((spring.body_a, spring.point_a), (spring.body_b, spring.point_b)))
        K += spring.stiffness * D.T @ D
        f -= spring.stiffness * D.T @ c
    return K, f


def _dampers(model: Model, axes, dim: int, d: int) -> np.ndarray | None:
    """Damping matrix ``C = Σ c DᵀD`` of the point dampers: ``D q̇`` is the velocity of point b relative
    to point a, the force ``−c DᵀD q̇`` (shape (d, d), ``dim`` 3 or 2: see :func:`_difference`); None
    without dampers."""
    if not model.dampers:
        return None
    C = np.zeros((d, d))
    for damper in model.dampers:
        D, _ = _difference(axes, dim, d, ((damper.body_a, damper.point_a), (damper.body_b, damper.point_b)))
        C += damper.damping * D.T @ D
    return C


def initial_coordinates(model: Model) -> tuple[np.ndarray, np.ndarray]:
    """``(q₀, q̇₀)`` of the model's initial states: ``d_i = R V e_i``, ``ḋ_i = R (Ω × V e_i)``."""
    q, qdot = [], []
    for body in model.bodies:
        _, V = principal_frame(body.inertia)
        D = body.rotation @ V
        D_dot = body.rotation @ np.cross(body.angular_velocity, V.T).T
        q += [body.position, *D.T]
        qdot += [body.velocity, *D_dot.T]
    return np.concatenate(q), np.concatenate(qdot)


def body_states(model: Model, t, q, qdot) -> BodyStates:
    """Body poses and velocities of a director trajectory ``q, q̇`` (shape (T, 12 N)).

    ``R = [d₁ d₂ d₃] Vᵀ`` and ``Ω = vee(skew(Rᵀ Ṙ))``: exact on the constraint manifold, and
    the director coordinates as they are off it (no projection hides a constraint drift).
    """
    t = np.atleast_1d(np.asarray(t, dtype=float))
    q, qdot = np.atleast_2d(q), np.atleast_2d(qdot)
    N = model.n_bodies
    blocks, rates = q.reshape(len(t), N, 4, 3), qdot.reshape(len(t), N, 4, 3)
    V = np.array([principal_frame(b.inertia)[1] for b in model.bodies])
    R = np.einsum("tnki,nlk->tnil", blocks[:, :, 1:], V)  # columns d_k, times Vᵀ
    R_dot = np.einsum("tnki,nlk->tnil", rates[:, :, 1:], V)
    W = np.einsum("tnji,tnjk->tnik", R, R_dot)
    Omega = np.array([[vee(0.5 * (w - w.T)) for w in row] for row in W])
    return BodyStates(t, blocks[:, :, 0].copy(), R, rates[:, :, 0].copy(), Omega)


def nontwisting_body(model: Model) -> tuple[nt.NontwistingBody, np.ndarray]:
    """The model's free body as the director body of paper 004 and its state ``x₀ = (q₀, q̇₀)``.

    Raises ``ValueError`` unless the model is one body without joints, gravity, springs, applied
    loads or dampers (the body of paper 004 turns about its fixed centre of mass under follower
    moments only; none are taken from a description).
    """
    if model.n_bodies != 1 or model.joints or model.springs or model.loads or model.dampers or (
            model.gravity is not None and np.any(model.gravity.g)) or model.bonds or model.contacts:
        raise ValueError("paper 004's director body: one free body without joints, gravity, springs, loads, "
                         "dampers, bonds or contacts")
    (body,) = model.bodies
    return nt.make_body(J=body.inertia), initial_state(body.rotation @ body.angular_velocity, body.rotation)


def nontwisting_body_states(model: Model, t, x) -> BodyStates:
    """Body poses and velocities of states ``x = (q, q̇)`` (shape (T, 18)) of :func:`nontwisting_body`:
    ``R = [d₁ d₂ d₃]``, ``Ω = vee(skew(Rᵀ Ṙ))`` (no projection), the centre moving uniformly."""
    t = np.atleast_1d(np.asarray(t, dtype=float))
    x = np.atleast_2d(x)
    R, R_dot = rotation_from_q(x[:, :9]), rotation_from_q(x[:, 9:])
    W = np.einsum("tji,tjk->tik", R, R_dot)
    Omega = np.array([vee(0.5 * (w - w.T)) for w in W])
    (body,) = model.bodies
    position = body.position + np.outer(t, body.velocity)
    return BodyStates(t, position[:, None], R[:, None], np.tile(body.velocity, (len(t), 1, 1)), Omega[:, None])
