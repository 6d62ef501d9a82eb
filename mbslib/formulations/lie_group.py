"""Absolute coordinates of paper 002 for a coordinate-free model: rotation vector (Lie group),
Euler parameters or Tait–Bryan angles per body.

Each body becomes a body of :class:`mbslib.systems.multibody.System` in its principal frame
(``J = V diag(J_p) Vᵀ``, :func:`mbslib.systems.rigid_bodies.principal_frame`): rotation ``R V``,
body points ``Vᵀ p``, angular velocity ``Vᵀ Ω``. Spherical, revolute and universal joints and
prismatic joints to the ground map onto its joint rows, gravity and springs onto its force
elements (a :class:`~mbslib.model.Spring` is a point spring–damper, with analytic Jacobians in the
compiled kernels). Prismatic joints between two bodies raise ``NotImplementedError``, and so do
applied loads (their Python callables of ``(t, states)`` cannot run inside the compiled kernels)
and :class:`~mbslib.model.PointDamper` records (the general kernel has no such force element; the
rotor's supports below excepted). The generalized-α and
Runge–Kutta(–Munthe-Kaas) integrators of :mod:`mbslib.integrators` run the result.

A single body that paper 002's specialised kernels (:mod:`mbslib.systems.lie_group_mbs`) describe
runs on them instead (unless ``specialised=False``), in the same coordinates and with fewer
operations per step; their record is the paper's output point, the general kernel's the whole
state ``[q; v]``:

- one body on a spherical joint at the world origin under gravity alone: the heavy top with a
  spherical joint (codes 3–5);
- one body on two undamped springs of zero rest length from the ground to its principal-frame
  points ``[∓L_L, 0, 0]``, anchored at those same coordinates, without gravity, under constant
  torques (:class:`~mbslib.model.Constant`), and either no dampers or two ground dampers of equal
  ``d`` at those two points (``f = −d (u + R(ω × s))``): the rotor on flexible supports (codes
  6–8), the one case where applied loads and point dampers reach the compiled kernels.

With ``about_pivot=True`` a body on a spherical joint to a ground point (anywhere) under gravity
alone keeps its rotation alone as coordinates: the heavy top about the fixed point (codes 0–2),
without joint constraints, so that the explicit Runge–Kutta–Munthe-Kaas methods take it.
"""

from __future__ import annotations

import numpy as np

from mbslib.diagnostics import constraint_rates, constraint_residuals
from mbslib.model import BodyStates, Constant, Model, refuse
from mbslib.systems import lie_group_mbs as lg
from mbslib.systems import multibody as mb
from mbslib.systems.rigid_bodies import principal_frame

FORMS = {"RV": mb.RV, "Rxyz": mb.RXYZ, "EP": mb.EP}


def _form(form: str) -> int:
    if form not in FORMS:
        raise ValueError(f"form must be one of {list(FORMS)}, got {form!r}")
    return FORMS[form]


def _pivot(model: Model):
    """The joint of one body on a spherical joint to the ground under gravity alone, else None."""
    if model.n_bodies == 1 and len(model.joints) == 1 and not (model.springs or model.loads or model.dampers):
        (joint,) = model.joints
        if joint.kind == "spherical" and joint.body_a is None:
            return joint
    return None


def _about_pivot(model: Model):
    """The pivot joint of a model that turns about it, its initial state on the joint; else raise."""
    joint = _pivot(model)
    if joint is None:
        raise ValueError("about_pivot: the model must be one body on a spherical joint to the ground under gravity "
                         f"alone (it has {model.n_bodies} bodies, {len(model.joints)} joints, {len(model.springs)} "
                         f"springs, {len(model.loads)} loads, {len(model.dampers)} dampers)")
    states = model.initial_states()
    off = max(np.abs(constraint_residuals(model, states)).max(), np.abs(constraint_rates(model, states)).max())
    if off > 1e-9:
        raise ValueError(f"about_pivot: the body's initial position and velocity must follow from its rotation about "
                         f"the pivot (joint residual {off:.1e})")
    return joint


def _support_damping(model: Model, V: np.ndarray, supports: list) -> float | None:
    """``d`` of the rotor's dampers: 0 without dampers, that of two ground dampers of equal ``d`` at
    the principal-frame ``supports``; else None."""
    if not model.dampers:
        return 0.0
    if len(model.dampers) != 2 or model.dampers[0].damping != model.dampers[1].damping:
        return None
    points = sorted(tuple(V.T @ d.point_b) for d in model.dampers)
    if not all(d.body_a is None for d in model.dampers) or points != supports:
        return None
    return model.dampers[0].damping


def _rotor(model: Model, V: np.ndarray):
    """``(L_L, k, d, t)`` of a body on the rotor's supports (see the module docstring), else None."""
    if (model.n_bodies != 1 or model.joints or len(model.springs) != 2
            or (model.gravity is not None and np.any(model.gravity.g))
            or not all(load.force is None and isinstance(load.torque, Constant) for load in model.loads)):
        return None
    a, b = model.springs
    support = max(abs((V.T @ s.point_b)[0]) for s in model.springs)
    supports = sorted(tuple(V.T @ s.point_b) for s in model.springs)
    if not (supports == [(-support, 0.0, 0.0), (support, 0.0, 0.0)] and support > 0
            and a.stiffness == b.stiffness and a.damping == b.damping == 0.0 and a.rest_length == b.rest_length == 0.0
            and all(s.body_a is None and np.array_equal(s.point_a, V.T @ s.point_b) for s in model.springs)):
        return None
    damping = _support_damping(model, V, supports)
    if damping is None:
        return None
    return support, a.stiffness, damping, sum((load.torque.value for load in model.loads), np.zeros(3))


def _specialised(model: Model, about_pivot: bool):
    """Code offset (0 heavy top about the pivot, 3 with a spherical joint, 6 rotor) and ``P`` of a
    single body that a specialised kernel describes, else None."""
    body = model.bodies[0]
    Jp, V = principal_frame(body.inertia)
    gravity = np.zeros(3) if model.gravity is None else model.gravity.g
    joint = _about_pivot(model) if about_pivot else _pivot(model)
    if joint is not None and (about_pivot or not np.any(joint.point_a)):
        return (lg.TOP_RV if about_pivot else lg.SPH_RV), lg.top_params(body.mass, np.diag(Jp), V.T @ -joint.point_b,
                                                                          gravity)
    rotor = _rotor(model, V)
    if rotor is not None:
        return lg.ROT_RV, lg.rotor_params(body.mass, np.diag(Jp), *rotor)
    return None


def absolute_model(model: Model, form: str, *, about_pivot: bool = False, ep_jacobian: str = "exact",
                   specialised: bool = True) -> lg.CompiledModel:
    """The model in absolute coordinates ``form`` ("RV", "Rxyz" or "EP") for the integrators.

    A single body that a specialised kernel describes runs on it (see the module docstring),
    unless ``specialised`` is False: then the general multibody kernel, whose record is the whole
    state. ``about_pivot``: one body on a ground spherical joint in its rotation coordinates
    alone (the heavy top about the fixed point). ``ep_jacobian`` ("exact" or "tangent"; "tangent"
    for the EP heavy top with a spherical joint only): the joint Jacobian ``R X̃ Ĝ`` of Exudyn's
    markers instead of the exact derivative
    (:func:`mbslib.systems.lie_group_mbs.spherical_constraints`).
    """
    offset = _form(form)
    refuse(model, "absolute coordinates", "bonds", "contacts")
    if ep_jacobian not in ("exact", "tangent"):
        raise ValueError(f"ep_jacobian must be 'exact' or 'tangent', got {ep_jacobian!r}")
    if about_pivot and not specialised:
        raise ValueError("about_pivot: the rotation coordinates about the pivot are those of a specialised kernel "
                         "(specialised=False)")
    kernel = _specialised(model, about_pivot) if specialised else None
    if ep_jacobian == "tangent" and (kernel is None or kernel[0] + offset != lg.SPH_EP):
        raise ValueError(f"ep_jacobian='tangent' applies to the EP heavy top with a spherical joint (SPH_EP) only, "
                         f"got form {form!r}" + (" about the pivot" if about_pivot else ""))
    if kernel is not None:
        code, P = kernel
        return lg.CompiledModel(code + offset, np.r_[P, 1.0] if ep_jacobian == "tangent" else P)
    if model.loads:
        raise NotImplementedError("absolute coordinates: applied loads are Python callables of (t, states), which "
                                  "cannot run inside the compiled kernels of the integrators (constant torques on "
                                  "the rotor's supports excepted)")
    if model.dampers:
        raise NotImplementedError("absolute coordinates: dampers[0] is a point damper, a force element the general "
                                  "multibody kernel does not have (the rotor's damped supports excepted)")
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
        elif joint.body_a is None:  # prismatic to the ground: the body keeps its initial orientation
            body = model.bodies[joint.body_b]
            system.prismatic(joint.point_a, joint.axis_a, joint.body_b, pb, body.rotation @ frames[joint.body_b][1])
        else:
            raise NotImplementedError(f"absolute coordinates: joints[{k}] is prismatic between two bodies; "
                                      "only prismatic joints to the ground are available")
    for s in model.springs:
        a = mb.GROUND if s.body_a is None else s.body_a
        system.point_spring(a, local(s.body_a, s.point_a), s.body_b, local(s.body_b, s.point_b), s.stiffness,
                            s.rest_length, s.damping)
    return lg.CompiledModel(lg.MB_RV + offset, system.params())


def initial_state(model: Model, form: str, *, about_pivot: bool = False) -> np.ndarray:
    """``x₀ = [q₀; v₀]`` of the model's initial states in coordinates ``form`` (``about_pivot``:
    the rotation coordinates alone, see :func:`absolute_model`)."""
    pairs = [(b, principal_frame(b.inertia)[1]) for b in model.bodies]
    x = mb.body_coordinates(_form(form), [b.position for b, _ in pairs], [b.rotation @ V for b, V in pairs],
                            [b.velocity for b, _ in pairs], [V.T @ b.angular_velocity for b, V in pairs])
    if not about_pivot:
        return x
    _about_pivot(model)
    n = x.size // 2
    return np.r_[x[3:n], x[n + 3:]]


def body_states(model: Model, form: str, t, q, v, *, about_pivot: bool = False) -> BodyStates:
    """Body poses and velocities of states ``q, v`` (shape (T, n)) in coordinates ``form``
    (``about_pivot``: the rotation coordinates alone, see :func:`absolute_model`)."""
    code = _form(form)
    t = np.atleast_1d(np.asarray(t, dtype=float))
    q, v = np.atleast_2d(q), np.atleast_2d(v)
    frames = [principal_frame(b.inertia)[1] for b in model.bodies]
    shape = (len(t), model.n_bodies)
    x, R, u, W = np.empty(shape + (3,)), np.empty(shape + (3, 3)), np.empty(shape + (3,)), np.empty(shape + (3,))
    if about_pivot:  # x = a + R X, u = R (ω × X) with X = Vᵀ (−p_b), the centre of mass from the pivot
        joint, (V,) = _about_pivot(model), frames
        X = V.T @ -joint.point_b
        for k in range(len(t)):
            Rk, w = lg.rotation(lg.TOP_RV + code, q[k]), lg.angular_velocity(lg.TOP_RV + code, q[k], v[k])
            x[k, 0], u[k, 0] = joint.point_a + Rk @ X, Rk @ np.cross(w, X)
            R[k, 0], W[k, 0] = Rk @ V.T, V @ w
        return BodyStates(t, x, R, u, W)
    nb = 3 + (4 if code == mb.EP else 3)
    for k in range(len(t)):
        for i, V in enumerate(frames):
            x[k, i] = mb.body_position(code, q[k], i)
            R[k, i] = mb.body_rotation(code, q[k], i) @ V.T
            u[k, i] = v[k, i * nb:i * nb + 3]
            W[k, i] = V @ mb.body_angular_velocity(code, q[k], v[k], i)
    return BodyStates(t, x, R, u, W)
