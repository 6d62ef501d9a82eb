"""The director formulation (papers 001 and 004) of a coordinate-free model.

Each body is its centre of mass φ and the directors ``d_i = R V e_i`` along its principal axes
(``J = V diag(J_p) Vᵀ``, :func:`mbslib.systems.rigid_bodies.principal_frame`), stacked
``q = [φ; d₁; d₂; d₃]`` per body; the mass matrix is ``diag(m, E₁, E₂, E₃) ⊗ I`` with the
Euler-tensor values ``E_i = ½(J_j + J_k − J_i)`` (:mod:`mbslib.systems.directors`). A body
point ``p`` (body frame) has principal coordinates ``X = Vᵀ p`` and sits at ``φ + X_i d_i``.

Spherical joints (body–body and body–ground) and gravity are linear in q and map onto
:func:`mbslib.systems.directors.assemble`; other joints and springs are not available in this
formulation yet and raise ``NotImplementedError`` naming them.
"""

from __future__ import annotations

import numpy as np

from mbslib.model import BodyStates, Model
from mbslib.rotations import vee
from mbslib.systems.directors import ConstrainedSystem, DirectorBody, GroundPivot, Joint, assemble, euler_tensor_values
from mbslib.systems.rigid_bodies import principal_frame


def director_system(model: Model) -> ConstrainedSystem:
    """The model as a constrained director system (constraints: each body's six internal ones,
    then the joints in order, three rows each)."""
    if model.springs or model.loads:
        raise NotImplementedError("director formulation: springs and applied loads are not available yet")
    frames = [principal_frame(b.inertia) for b in model.bodies]
    bodies = [DirectorBody(b.mass, tuple(euler_tensor_values(Jp)), dim=3)
              for b, (Jp, _) in zip(model.bodies, frames, strict=True)]
    joints = []
    for k, joint in enumerate(model.joints):
        if joint.kind != "spherical":
            raise NotImplementedError(f"director formulation: joints[{k}] is {joint.kind}; only spherical joints "
                                      "are available yet")
        X_b = frames[joint.body_b][1].T @ joint.point_b
        if joint.body_a is None:
            joints.append(GroundPivot(joint.body_b, tuple(X_b), tuple(joint.point_a), label=f"joint {k + 1}"))
        else:
            X_a = frames[joint.body_a][1].T @ joint.point_a
            joints.append(Joint(joint.body_a, tuple(X_a), joint.body_b, tuple(X_b), label=f"joint {k + 1}"))
    gravity = np.zeros(3) if model.gravity is None else model.gravity.g
    return assemble(bodies, gravity, joints)


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
