"""Absolute coordinates of paper 002 for a coordinate-free model: rotation vector (Lie group),
Euler parameters or Tait–Bryan angles per body.

Each body becomes a body of :class:`mbslib.systems.multibody.System` in its principal frame
(``J = V diag(J_p) Vᵀ``, :func:`mbslib.systems.rigid_bodies.principal_frame`): rotation ``R V``,
body points ``Vᵀ p``, angular velocity ``Vᵀ Ω``. Spherical, revolute and universal joints map
onto its joint rows, gravity and springs onto its force elements (a :class:`~mbslib.model.Spring`
is a point spring–damper, with analytic Jacobians in the compiled kernels). Prismatic joints
raise ``NotImplementedError``, and so do applied loads: their Python callables of
``(t, states)`` cannot run inside the compiled kernels. The generalized-α and
Runge–Kutta(–Munthe-Kaas) integrators of :mod:`mbslib.integrators` run the result.
"""

from __future__ import annotations

import numpy as np

from mbslib.model import BodyStates, Model
from mbslib.systems import lie_group_mbs as lg
from mbslib.systems import multibody as mb
from mbslib.systems.rigid_bodies import principal_frame

FORMS = {"RV": mb.RV, "Rxyz": mb.RXYZ, "EP": mb.EP}


def _form(form: str) -> int:
    if form not in FORMS:
        raise ValueError(f"form must be one of {list(FORMS)}, got {form!r}")
    return FORMS[form]


def absolute_model(model: Model, form: str) -> lg.Model:
    """The model in absolute coordinates ``form`` ("RV", "Rxyz" or "EP") for the integrators."""
    code = lg.MB_RV + _form(form)
    if model.loads:
        raise NotImplementedError("absolute coordinates: applied loads are Python callables of (t, states), which "
                                  "cannot run inside the compiled kernels of the integrators")
    frames = [principal_frame(b.inertia) for b in model.bodies]
    gravity = (0.0, 0.0, 0.0) if model.gravity is None else tuple(model.gravity.g)
    system = mb.System(gravity=gravity)
    for body, (Jp, _) in zip(model.bodies, frames, strict=True):
        system.body(body.mass, Jp)

    def local(index, vector):  # a body-frame vector in the principal frame; ground: world
        return vector if index is None else frames[index][1].T @ vector

    for k, joint in enumerate(model.joints):
        a = mb.GROUND if joint.body_a is None else joint.body_a
        pa, pb = local(joint.body_a, joint.point_a), local(joint.body_b, joint.point_b)
        if joint.kind == "spherical":
            system.spherical(a, pa, joint.body_b, pb)
        elif joint.kind == "revolute":
            axis_a, axis_b = local(joint.body_a, joint.axis_a), local(joint.body_b, joint.axis_b)
            system.revolute(a, pa, axis_a, joint.body_b, pb, axis_b)
        elif joint.kind == "universal":
            system.spherical(a, pa, joint.body_b, pb)
            system.align(a, local(joint.body_a, joint.axis_a), joint.body_b, local(joint.body_b, joint.axis_b))
        else:
            raise NotImplementedError(f"absolute coordinates: joints[{k}] is {joint.kind}; not available yet")
    for s in model.springs:
        a = mb.GROUND if s.body_a is None else s.body_a
        system.point_spring(a, local(s.body_a, s.point_a), s.body_b, local(s.body_b, s.point_b), s.stiffness,
                            s.rest_length, s.damping)
    return lg.Model(code, system.params())


def initial_state(model: Model, form: str) -> np.ndarray:
    """``x₀ = [q₀; v₀]`` of the model's initial states in coordinates ``form``."""
    pairs = [(b, principal_frame(b.inertia)[1]) for b in model.bodies]
    return mb.body_coordinates(_form(form), [b.position for b, _ in pairs], [b.rotation @ V for b, V in pairs],
                               [b.velocity for b, _ in pairs], [V.T @ b.angular_velocity for b, V in pairs])


def body_states(model: Model, form: str, t, q, v) -> BodyStates:
    """Body poses and velocities of states ``q, v`` (shape (T, n)) in coordinates ``form``."""
    code = _form(form)
    t = np.atleast_1d(np.asarray(t, dtype=float))
    q, v = np.atleast_2d(q), np.atleast_2d(v)
    frames = [principal_frame(b.inertia)[1] for b in model.bodies]
    shape = (len(t), model.n_bodies)
    x, R, u, W = np.empty(shape + (3,)), np.empty(shape + (3, 3)), np.empty(shape + (3,)), np.empty(shape + (3,))
    nb = 3 + (4 if code == mb.EP else 3)
    for k in range(len(t)):
        for i, V in enumerate(frames):
            x[k, i] = mb.body_position(code, q[k], i)
            R[k, i] = mb.body_rotation(code, q[k], i) @ V.T
            u[k, i] = v[k, i * nb:i * nb + 3]
            W[k, i] = V @ mb.body_angular_velocity(code, q[k], v[k], i)
    return BodyStates(t, x, R, u, W)
