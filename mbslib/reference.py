"""Tight reference solutions of a coordinate-free model (:mod:`mbslib.model`).

Newton's and Euler's equations of each body under gravity, spring–dampers and applied loads; one
body held at a ground point by a spherical joint under gravity alone by Euler's equations about the
pivot; any other spherical, revolute and universal joints by Lagrange multipliers at acceleration
level (the index-1 form: ``[M Bᵀ; B 0] [ẇ; λ] = [f; −γ]`` with ``w = (v, Ω)`` per body, ``B`` the
joints' velocity Jacobian and ``γ = Ḃ w``; redundant joints by the least-squares solution of that
system). The rotation ``R`` is integrated as nine components of ``Ṙ = R Ω̂`` with DOP853 at
``rtol = atol = 1e-12`` by default; its departure from orthogonality, and the joints' drift in the
index-1 form, stay at the tolerance over the book's horizons.
"""

from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp

from mbslib.diagnostics import axis_normals
from mbslib.model import BodyStates, Model
from mbslib.rotations import hat


def reference_states(model: Model, t_eval, *, rtol: float = 1e-12, atol: float = 1e-12) -> BodyStates:
    """Body states of ``model`` at ``t_eval`` (from ``t = 0``), integrated tightly.

    Raises
    ------
    NotImplementedError
        For prismatic joints, point dampers, bonds and contacts.
    """
    if any(j.kind == "prismatic" for j in model.joints):
        raise NotImplementedError("reference_states: prismatic joints are not supported")
    for name in ("dampers", "bonds", "contacts"):
        if getattr(model, name):
            raise NotImplementedError(f"reference_states: {name} are not supported")
    t_eval = np.asarray(t_eval, dtype=float)
    g = np.zeros(3) if model.gravity is None else model.gravity.g
    pinned = (model.n_bodies == 1 and len(model.joints) == 1 and model.joints[0].kind == "spherical"
              and model.joints[0].body_a is None and not (model.springs or model.loads))
    if pinned:
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
        if model.joints:  # the constraint forces: the accelerations that keep B w = 0
            out[:, 3:6], out[:, 15:18] = _constrained(model, masses, J, x, R, v, W, out[:, 3:6], out[:, 15:18])
        return out.ravel()

    y = solve_ivp(rhs, (0.0, t_eval[-1]), y0, method="DOP853", rtol=rtol, atol=atol, t_eval=t_eval).y.T.reshape(
        len(t_eval), N, 18)
    return BodyStates(t_eval, y[..., 0:3], y[..., 6:15].reshape(len(t_eval), N, 3, 3), y[..., 3:6], y[..., 15:18])


def _joint_rows(model, R, W):
    """The joints' velocity Jacobian: rows ``(body, A, C)`` blocks with ``Σ A v + C Ω`` the rate of
    each residual of :func:`mbslib.diagnostics.constraint_residuals`, and ``γ``, the part of its
    second derivative without accelerations."""
    blocks, gamma = [], []

    def frame(body):
        return (np.eye(3), np.zeros(3)) if body is None else (R[body], W[body])

    for joint in model.joints:
        (Ra, Wa), (Rb, Wb) = frame(joint.body_a), frame(joint.body_b)
        pa, pb = joint.point_a, joint.point_b
        for k in range(3):  # the points coincide: v_b + R_b(Ω_b × p_b) − v_a − R_a(Ω_a × p_a)
            row = [(joint.body_b, np.eye(3)[k], -(Rb @ hat(pb))[k])]
            if joint.body_a is not None:
                row.append((joint.body_a, -np.eye(3)[k], (Ra @ hat(pa))[k]))
            blocks.append(row)
        gamma.extend(Rb @ np.cross(Wb, np.cross(Wb, pb)) - Ra @ np.cross(Wa, np.cross(Wa, pa)))
        if joint.kind == "revolute":
            pairs = [(n, joint.axis_b) for n in axis_normals(joint.axis_a)]  # (R_a n)·(R_b e) = 0
        elif joint.kind == "universal":
            pairs = [(joint.axis_a, joint.axis_b)]
        else:
            pairs = []
        for n, e in pairs:  # rate Ω_a·(n × R_aᵀR_b e) + Ω_b·(e × R_bᵀR_a n)
            na, eb = Ra @ n, Rb @ e
            row = [(joint.body_b, np.zeros(3), np.cross(e, Rb.T @ na))]
            if joint.body_a is not None:
                row.append((joint.body_a, np.zeros(3), np.cross(n, Ra.T @ eb)))
            blocks.append(row)
            na_dot, eb_dot = Ra @ np.cross(Wa, n), Rb @ np.cross(Wb, e)
            gamma.append(Ra @ np.cross(Wa, np.cross(Wa, n)) @ eb + 2.0 * na_dot @ eb_dot
                         + na @ (Rb @ np.cross(Wb, np.cross(Wb, e))))
    B = np.zeros((len(blocks), 6 * model.n_bodies))
    for k, row in enumerate(blocks):
        for body, A, C in row:
            B[k, 6 * body:6 * body + 3] += A
            B[k, 6 * body + 3:6 * body + 6] += C
    return B, np.array(gamma)


def _constrained(model, masses, J, x, R, v, W, a_free, dW_free):
    """Accelerations ``(a, Ω̇)`` of the bodies with the joints' forces: the least-squares solution of
    ``[M Bᵀ; B 0] [ẇ; λ] = [M ẇ_free; −γ]`` (redundant joints give a singular but consistent system)."""
    N = model.n_bodies
    M = np.zeros((6 * N, 6 * N))
    for n in range(N):
        M[6 * n:6 * n + 3, 6 * n:6 * n + 3] = masses[n] * np.eye(3)
        M[6 * n + 3:6 * n + 6, 6 * n + 3:6 * n + 6] = J[n]
    B, gamma = _joint_rows(model, R, W)
    m = len(gamma)
    K = np.block([[M, B.T], [B, np.zeros((m, m))]])
    rhs = np.concatenate([M @ np.concatenate([np.r_[a, dw] for a, dw in zip(a_free, dW_free, strict=True)]), -gamma])
    w_dot = np.linalg.lstsq(K, rhs, rcond=1e-13)[0][:6 * N].reshape(N, 6)
    return w_dot[:, :3], w_dot[:, 3:]


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
