"""Tight reference solutions of a coordinate-free model (:mod:`mbslib.model`).

Supported: bodies without joints under gravity, spring–dampers and applied loads (Newton's and
Euler's equations of each body), and one body held at a ground point by a spherical joint under gravity
(Euler's equations about the pivot). The rotation ``R`` is integrated as nine components of ``Ṙ = R Ω̂`` with
DOP853 at ``rtol = atol = 1e-12`` by default; its departure from orthogonality stays at the
tolerance and is reported.
"""

from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp

from mbslib.model import BodyStates, Model
from mbslib.rotations import hat


def reference_states(model: Model, t_eval, *, rtol: float = 1e-12, atol: float = 1e-12) -> BodyStates:
    """Body states of ``model`` at ``t_eval`` (from ``t = 0``), integrated tightly.

    Raises
    ------
    NotImplementedError
        For body–body joints, more than one joint, springs or applied loads on a jointed body, or
        point dampers.
    """
    if len(model.joints) > 1 or any(j.kind != "spherical" or j.body_a is not None for j in model.joints):
        raise NotImplementedError("reference_states: only free bodies or one body on a ground spherical joint")
    if model.dampers:
        raise NotImplementedError("reference_states: point dampers (dampers[0]) are not supported")
    if model.joints and (model.springs or model.loads):
        raise NotImplementedError("reference_states: springs and applied loads on a jointed body are not supported")
    t_eval = np.asarray(t_eval, dtype=float)
    g = np.zeros(3) if model.gravity is None else model.gravity.g
    if model.joints:
        return _pinned(model, t_eval, g, rtol, atol)
    N = model.n_bodies
    y0 = np.concatenate([np.concatenate([b.position, b.velocity, b.rotation.ravel(), b.angular_velocity])
                         for b in model.bodies])
    J = [b.inertia for b in model.bodies]
    Jinv = [np.linalg.inv(j) for j in J]

    masses = np.array([b.mass for b in model.bodies])

    def rhs(t, y):
        Y = y.reshape(N, 18)
        x, v, R, W = Y[:, 0:3], Y[:, 3:6], Y[:, 6:15].reshape(N, 3, 3), Y[:, 15:18]
        force, torque = masses[:, None] * g, np.zeros((N, 3))  # torque in the world frame
        for spring in model.springs:
            ends = []
            for body, point in ((spring.body_a, spring.point_a), (spring.body_b, spring.point_b)):
                if body is None:
                    ends.append((None, point, np.zeros(3), np.zeros(3)))
                else:
                    arm = R[body] @ point
                    ends.append((body, x[body] + arm, v[body] + R[body] @ np.cross(W[body], point), arm))
            d, d_dot = ends[1][1] - ends[0][1], ends[1][2] - ends[0][2]
            length = np.linalg.norm(d)
            e = d / length
            f = -(spring.stiffness * (length - spring.rest_length) + spring.damping * (d_dot @ e)) * e  # on b
            for (body, _, _, arm), sign in zip(ends, (-1.0, 1.0), strict=True):
                if body is not None:
                    force[body] += sign * f
                    torque[body] += np.cross(arm, sign * f)
        if model.loads:
            states = BodyStates(np.array([t]), x[None], R[None], v[None], W[None])
            for load in model.loads:
                if load.force is not None:
                    f = load.force(t, states)
                    force[load.body] += f
                    torque[load.body] += np.cross(R[load.body] @ load.point, f)
                if load.torque is not None:
                    torque[load.body] += load.torque(t, states)
        out = np.empty((N, 18))
        out[:, 0:3], out[:, 3:6] = v, force / masses[:, None]
        for n in range(N):
            out[n, 6:15] = (R[n] @ hat(W[n])).ravel()
            out[n, 15:18] = Jinv[n] @ (np.cross(J[n] @ W[n], W[n]) + R[n].T @ torque[n])
        return out.ravel()

    y = solve_ivp(rhs, (0.0, t_eval[-1]), y0, method="DOP853", rtol=rtol, atol=atol, t_eval=t_eval).y.T.reshape(
        len(t_eval), N, 18)
    return BodyStates(t_eval, y[..., 0:3], y[..., 6:15].reshape(len(t_eval), N, 3, 3), y[..., 3:6], y[..., 15:18])


def _pinned(model, t_eval, g, rtol, atol):
    """One body, its point ``p`` (body frame) held at the ground point ``c``."""
    (body,), (joint,) = model.bodies, model.joints
    m, p, c = body.mass, joint.point_b, joint.point_a
    J = body.inertia + m * (p @ p * np.eye(3) - np.outer(p, p))  # about the pivot
    Jinv = np.linalg.inv(J)

    def rhs(t, y):
        R, W = y[:9].reshape(3, 3), y[9:]
        torque = np.cross(-p, R.T @ (m * g))  # gravity at the centre of mass, about the pivot
        return np.concatenate([(R @ hat(W)).ravel(), Jinv @ (np.cross(J @ W, W) + torque)])

    y0 = np.concatenate([body.rotation.ravel(), body.angular_velocity])
    y = solve_ivp(rhs, (0.0, t_eval[-1]), y0, method="DOP853", rtol=rtol, atol=atol, t_eval=t_eval).y.T
    R, W = y[:, :9].reshape(-1, 3, 3), y[:, 9:]
    x = c - R @ p
    v = -np.einsum("tij,tj->ti", R, np.cross(W, p))
    return BodyStates(t_eval, x[:, None], R[:, None], v[:, None], W[:, None])
