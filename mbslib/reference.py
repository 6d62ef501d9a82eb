"""Tight reference solutions of a coordinate-free model (:mod:`mbslib.model`).

Supported: bodies without joints (each moves on its own: ``m v̇ = m g``, Euler's equations), and
one body held at a ground point by a spherical joint (Euler's equations about the pivot with the
gravity torque). The rotation ``R`` is integrated as nine components of ``Ṙ = R Ω̂`` with
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
        For springs, applied loads, body–body joints, or more than one joint.
    """
    if model.springs or model.loads:
        raise NotImplementedError("reference_states: springs and applied loads are not supported")
    if len(model.joints) > 1 or any(j.kind != "spherical" or j.body_a is not None for j in model.joints):
        raise NotImplementedError("reference_states: only free bodies or one body on a ground spherical joint")
    t_eval = np.asarray(t_eval, dtype=float)
    g = np.zeros(3) if model.gravity is None else model.gravity.g
    if model.joints:
        return _pinned(model, t_eval, g, rtol, atol)
    N = model.n_bodies
    y0 = np.concatenate([np.concatenate([b.position, b.velocity, b.rotation.ravel(), b.angular_velocity])
                         for b in model.bodies])
    J = [b.inertia for b in model.bodies]
    Jinv = [np.linalg.inv(j) for j in J]

    def rhs(t, y):
        out = np.empty_like(y)
        for n in range(N):
            v, R, W = y[18 * n + 3:18 * n + 6], y[18 * n + 6:18 * n + 15], y[18 * n + 15:18 * n + 18]
            out[18 * n:18 * n + 3] = v
            out[18 * n + 3:18 * n + 6] = g
            out[18 * n + 6:18 * n + 15] = (R.reshape(3, 3) @ hat(W)).ravel()
            out[18 * n + 15:18 * n + 18] = Jinv[n] @ np.cross(J[n] @ W, W)
        return out

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
