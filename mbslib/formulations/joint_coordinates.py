"""Minimal (joint) coordinates of a serial chain of revolute joints, from a description.

A :class:`mbslib.model.Model` whose joint k (k = 1..n) is revolute and joins body k − 1 (the
ground for k = 1) to body k is an open chain; its joint angles ``φ`` are minimal coordinates.
:func:`joint_model` reads the chain's standard Denavit–Hartenberg (DH) table off the joint axes
and points of the description's initial pose, together with each link's mass, centre of mass
and inertia in its DH frame, the data of a recursive Newton–Euler kernel such as
:mod:`mbslib.systems.puma560`; :meth:`JointChain.body_states` maps joint angles and rates back to
the description's body poses and velocities.

DH frames (``ⁱ⁻¹Tᵢ = Rot_z(θᵢ) Trans_z(dᵢ) Trans_x(aᵢ) Rot_x(αᵢ)``): ``z_{k−1}`` is the axis of
joint k; for k < n, ``x_k`` lies on the common normal of ``z_{k−1}`` and ``z_k`` and the origin
``o_k`` at its foot on ``z_k`` (parallel axes: the normal through ``o_{k−1}``, so ``d_k = 0``;
intersecting axes: ``x_k ∥ z_{k−1} × z_k``), ``a_k = x_k · (o_k − f_k)`` with ``f_k`` the foot on
``z_{k−1}``, ``d_k = z_{k−1} · (f_k − o_{k−1})``, ``α_k`` the angle from ``z_{k−1}`` to ``z_k``
about ``x_k`` and ``θ_k`` from ``x_{k−1}`` to ``x_k`` about ``z_{k−1}``. The joint angles of the
initial pose, an input (a description fixes no zero angle), decide what the geometry leaves
open: the sign of ``x_k`` (k ≥ 2) makes ``θ_k`` the given angle, frame 0 (origin at the point of
joint 1) is frame 1 turned back by ``θ_1``, and the last frame is frame n − 1 turned by ``θ_n``
(``a_n = d_n = α_n = 0``). Gravity must act along ``−z₀``, the kernel's convention. Messages
and arguments count joints and bodies as the model does, from 0 (DH frame k follows joint k − 1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mbslib import diagnostics
from mbslib.model import BodyStates, Model, refuse
from mbslib.rotations import exp_so3
from mbslib.validation import vector

#: Geometric tolerance (relative to the chain's size) for parallel and intersecting axes.
_TOL = 1e-12


def _angle(u, w, axis):
    """Angle from ``u`` to ``w`` (both perpendicular to ``axis``) about ``axis``."""
    return float(np.arctan2(np.cross(u, w) @ axis, u @ w))


@dataclass(frozen=True)
class JointChain:
    """A serial chain of n revolute joints in joint coordinates (see :func:`joint_model`).

    Attributes
    ----------
    dh_d, dh_a, dh_alpha : ndarray, shape (n,)
        Standard DH ``d`` [m], ``a`` [m], ``α`` [rad] of links 1..n.
    masses : ndarray, shape (n,)
    coms : ndarray, shape (n, 3)
        Centre of mass of link k in DH frame k [m].
    inertias : ndarray, shape (n, 3)
        Principal inertias about the centre of mass, in the axes of DH frame k [kg m²].
    gravity : float
        ``g`` [m/s²]; gravity is ``−g z₀``.
    base_rotation, base_origin : ndarray, shapes (3, 3), (3,)
        DH frame 0 in the world frame.
    body_rotations : ndarray, shape (n, 3, 3)
        Body frame k in DH frame k (constant).
    angles, rates : ndarray, shape (n,)
        Joint angles [rad] and rates [rad/s] of the description's initial state.
    """

    dh_d: np.ndarray
    dh_a: np.ndarray
    dh_alpha: np.ndarray
    masses: np.ndarray
    coms: np.ndarray
    inertias: np.ndarray
    gravity: float
    base_rotation: np.ndarray
    base_origin: np.ndarray
    body_rotations: np.ndarray
    angles: np.ndarray
    rates: np.ndarray

    def __post_init__(self):
        for value in vars(self).values():
            if isinstance(value, np.ndarray):
                value.setflags(write=False)  # shared: Puma560.joint_chain keeps one per robot

    @property
    def n(self) -> int:
        return self.dh_d.size

    def params(self) -> np.ndarray:
        """``[d; a; α; m; r_c (row-major); J (row-major); g]``, shape (6 n + 1,): the layout of
        the first entries of :meth:`mbslib.systems.puma560.Puma560.params`."""
        return np.concatenate([self.dh_d, self.dh_a, self.dh_alpha, self.masses, self.coms.ravel(),
                               self.inertias.ravel(), [self.gravity]])

    def initial_state(self) -> np.ndarray:
        """``[φ; φ̇]`` of the description's initial state, shape (2 n,)."""
        return np.concatenate([self.angles, self.rates])

    def frames(self, phi):
        """DH frames 1..n in the world frame at joint angles ``phi`` (..., n): rotations
        (..., n, 3, 3) and origins (..., n, 3)."""
        phi = np.asarray(phi, dtype=float)
        R = np.broadcast_to(self.base_rotation, phi.shape[:-1] + (3, 3))
        o = np.broadcast_to(self.base_origin, phi.shape[:-1] + (3,))
        Rs, os = [], []
        for k in range(self.n):
            ct, st = np.cos(phi[..., k]), np.sin(phi[..., k])
            ca, sa = np.cos(self.dh_alpha[k]), np.sin(self.dh_alpha[k])
            zero, one = np.zeros_like(ct), np.ones_like(ct)
            Rk = np.stack([np.stack([ct, -st * ca, st * sa], -1), np.stack([st, ct * ca, -ct * sa], -1),
                           np.stack([zero, sa * one, ca * one], -1)], -2)
            pk = np.stack([self.dh_a[k] * ct, self.dh_a[k] * st, self.dh_d[k] * one], -1)
            o = o + np.einsum("...ij,...j->...i", R, pk)
            R = R @ Rk
            Rs.append(R)
            os.append(o)
        return np.stack(Rs, -3), np.stack(os, -2)

    def body_states(self, t, phi, dphi) -> BodyStates:
        """The description's body poses and velocities at times ``t`` (T,) of the joint angles
        and rates ``phi``, ``dphi`` (T, n): ``ω_k = ω_{k−1} + z_{k−1} φ̇_k``,
        ``v_{c,k} = v_{c,k−1} + ω_{k−1} × (o_{k−1} − c_{k−1}) + ω_k × (c_k − o_{k−1})``."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        phi = vector("phi", phi, (t.size, self.n))
        dphi = vector("dphi", dphi, (t.size, self.n))
        R, o = self.frames(phi)
        c = o + np.einsum("tkij,kj->tki", R, self.coms)
        z_prev = np.concatenate([np.broadcast_to(self.base_rotation[:, 2], (t.size, 1, 3)), R[:, :-1, :, 2]], 1)
        o_prev = np.concatenate([np.broadcast_to(self.base_origin, (t.size, 1, 3)), o[:, :-1]], 1)
        w = np.cumsum(z_prev * dphi[..., None], axis=1)
        w_prev = np.concatenate([np.zeros((t.size, 1, 3)), w[:, :-1]], 1)
        c_prev = np.concatenate([np.broadcast_to(self.base_origin, (t.size, 1, 3)), c[:, :-1]], 1)
        dv = np.cross(w_prev, o_prev - c_prev) + np.cross(w, c - o_prev)
        rotation = R @ self.body_rotations
        return BodyStates(t, c, rotation, np.cumsum(dv, axis=1), np.einsum("tkji,tkj->tki", rotation, w))


def _chain(model: Model) -> None:
    """Raise unless ``model`` is a serial open chain of revolute joints from the ground."""
    refuse(model, "joint coordinates (bodies, revolute joints and gravity only)",
           "springs", "loads", "dampers", "bonds", "contacts")
    if len(model.joints) != model.n_bodies:
        raise ValueError(f"a serial chain has one joint per body: {len(model.joints)} joints, {model.n_bodies} bodies")
    for k, joint in enumerate(model.joints):
        parent = k - 1 if k > 0 else None
        if joint.kind != "revolute":
            raise ValueError(f"joint {k} is {joint.kind!r}; joint coordinates take revolute joints only")
        if (joint.body_a, joint.body_b) != (parent, k):
            raise ValueError(f"joint {k} joins body {joint.body_a} to body {joint.body_b}; a serial chain's "
                             f"joint {k} joins {'the ground' if parent is None else f'body {parent}'} to body {k}")


def joint_model(model: Model, angles) -> JointChain:
    """The serial chain ``model`` in joint coordinates, its initial pose at joint ``angles`` [rad].

    Refused (``ValueError`` naming the joint or body): anything but revolute joint k from body
    k − 1 (the ground for k = 0) to body k, springs, applied loads, gravity not along joint 0's
    axis, a link whose inertia is not diagonal in its DH frame (the kernel takes principal
    inertias), angles that the pose cannot have (mod π for k ≥ 1), and a joint that does not
    hold in the initial state.
    """
    _chain(model)
    _holds(model)
    n = model.n_bodies
    angles = vector("angles", angles, (n,))
    bodies, joints = model.bodies, model.joints
    # joint axes z_{k−1} and points p_k in the world frame, initial pose
    z = np.array([j.axis_a if j.body_a is None else bodies[j.body_a].rotation @ j.axis_a for j in joints])
    p = np.array([j.point_a if j.body_a is None else bodies[j.body_a].position + bodies[j.body_a].rotation @ j.point_a
                  for j in joints])
    scale = _TOL * (1.0 + np.abs(p).max())
    g = np.zeros(3) if model.gravity is None else model.gravity.g
    if np.linalg.norm(np.cross(g, z[0])) > _TOL * (1.0 + np.linalg.norm(g)):
        raise ValueError(f"gravity {g.tolist()} is not along the axis {z[0].tolist()} of joint 0; the chain kernel "
                         "takes gravity along −z₀")
    d, a, alpha = np.zeros(n), np.zeros(n), np.zeros(n)
    x = np.zeros((n + 1, 3))
    o = np.zeros((n + 1, 3))
    o[0] = p[0]
    for k in range(1, n):  # frame k from the axes of joints k (z_{k−1}) and k + 1 (z_k)
        zp, zk = z[k - 1], z[k]
        normal = np.cross(zp, zk)
        if np.linalg.norm(normal) > _TOL:  # feet of the common normal: o[k−1] + s zp, p[k] + u zk
            A = np.array([[zp @ zp, -zp @ zk], [zp @ zk, -zk @ zk]])
            s, u = np.linalg.solve(A, [zp @ (p[k] - o[k - 1]), zk @ (p[k] - o[k - 1])])
            foot, o[k] = o[k - 1] + s * zp, p[k] + u * zk
        else:  # parallel: the normal through o[k−1]
            foot = o[k - 1]
            o[k] = p[k] + zk * (zk @ (foot - p[k]))
        gap = o[k] - foot
        if np.linalg.norm(gap) > scale:
            direction = gap / np.linalg.norm(gap)
        elif np.linalg.norm(normal) > _TOL:
            direction = normal / np.linalg.norm(normal)
        else:  # one axis: x_k is x_{k−1} turned by θ_k
            direction = exp_so3(angles[k - 1] * zp) @ x[k - 1] if k > 1 else _perpendicular(zp)
        if k == 1:
            x[1] = direction
        else:
            theta = _angle(x[k - 1], direction, zp)
            miss = abs(np.angle(np.exp(1j * (angles[k - 1] - theta))))  # 0: x_k = direction; π: x_k = −direction
            if min(miss, np.pi - miss) > 1e-9:
                raise ValueError(f"joint {k - 1}: the initial pose has DH angle {theta!r} (mod π), not "
                                 f"angles[{k - 1}] = {angles[k - 1]!r}")
            x[k] = direction if miss < 0.5 * np.pi else -direction
        d[k - 1] = zp @ (foot - o[k - 1])
        a[k - 1] = x[k] @ gap
        alpha[k - 1] = _angle(zp, zk, x[k])
    x[n] = exp_so3(angles[n - 1] * z[n - 1]) @ x[n - 1] if n > 1 else _perpendicular(z[0])
    o[n] = o[n - 1]
    x[0] = exp_so3(-angles[0] * z[0]) @ x[1]
    zs = np.vstack([z, z[n - 1]])
    frames = np.stack([x, np.cross(zs, x), zs], -1)  # columns x, y, z of DH frames 0..n
    coms, inertias, body_rotations = np.zeros((n, 3)), np.zeros((n, 3)), np.zeros((n, 3, 3))
    for k, body in enumerate(bodies):
        F = frames[k + 1]
        coms[k] = F.T @ (body.position - o[k + 1])
        body_rotations[k] = F.T @ body.rotation
        J = body_rotations[k] @ body.inertia @ body_rotations[k].T
        off = np.abs(J - np.diag(np.diag(J))).max()
        if off > _TOL * np.trace(J):
            raise ValueError(f"body {k} ({body.name!r}): its inertia has products of inertia up to {off!r} kg m² "
                             f"in DH frame {k + 1}; the chain kernel takes principal inertias in the DH axes")
        inertias[k] = np.diag(J)
    w = np.array([b.rotation @ b.angular_velocity for b in bodies])
    rates = np.einsum("ki,ki->k", z, w - np.vstack([np.zeros(3), w[:-1]]))
    return JointChain(d, a, alpha, np.array([b.mass for b in bodies]), coms, inertias, float(-g @ z[0]), frames[0],
                       o[0], body_rotations, angles, rates)


def _perpendicular(axis):
    """A unit vector perpendicular to ``axis``: the x axis of a lone joint's frame."""
    helper = np.eye(3)[np.argmin(np.abs(axis))]
    u = np.cross(axis, helper)
    return u / np.linalg.norm(u)


def _holds(model: Model) -> None:
    """Raise unless every joint holds in the description's initial state (positions and rates)."""
    s = model.initial_states()
    size = 1.0 + np.abs(s.position).max()
    levels = (("position", diagnostics.constraint_residuals), ("velocity", diagnostics.constraint_rates))
    for level, residuals in levels:
        r = np.abs(residuals(model, s)[0]).reshape(-1, 5).max(axis=1)  # five rows per revolute joint
        for k in np.flatnonzero(r > _TOL * 1e3 * size):
            raise ValueError(f"joint {k} does not hold in the initial state: {level} residual {r[k]:.3g}")
