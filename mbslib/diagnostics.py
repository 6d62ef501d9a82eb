"""Diagnostics from body states, the same for every formulation and integrator.

Every trajectory maps back to body poses and velocities (:class:`mbslib.model.BodyStates`); what is
computed here uses those alone and the description (:class:`mbslib.model.Model`): kinetic and
potential energy, the power of dampers and loads, linear and angular momentum and the part of it
the mechanism conserves, joint residuals at position and velocity level, and the errors of a run
measured with them. It is a second, independent check of what each scheme claims to keep: a
scheme's own energy lives in its own coordinates and may differ from the description's at the
nodes. Arrays are time-major: shape (T, ...) for T instants.

The last functions are plain series helpers (increments and drifts of a time-major array).
"""

from __future__ import annotations

import numpy as np

from mbslib.model import BodyStates, Model, Spring, bond_rest_poses
from mbslib.rotations import hat, vee
from mbslib.validation import vector


def _masses(model):
    return np.array([b.mass for b in model.bodies])


def _inertias(model):
    return np.array([b.inertia for b in model.bodies])


def kinetic_energy(model: Model, s: BodyStates) -> np.ndarray:
    """``T = Σ ½ m vᵀv + ½ Ωᵀ J Ω`` [J], shape (T,)."""
    m, J = _masses(model), _inertias(model)
    translation = 0.5 * np.einsum("n,tni,tni->t", m, s.velocity, s.velocity)
    rotation = 0.5 * np.einsum("tni,nij,tnj->t", s.angular_velocity, J, s.angular_velocity)
    return translation + rotation


def _points(s: BodyStates, body, point):
    """World positions of ``point`` (body frame) of ``body`` (None: a ground point), shape (T, 3)."""
    if body is None:
        return np.broadcast_to(point, (len(s.t), 3))
    return s.position[:, body] + np.einsum("tij,j->ti", s.rotation[:, body], point)


def _point_velocities(s: BodyStates, body, point):
    """``v + R (Ω × p)``, shape (T, 3); zero for a ground point."""
    if body is None:
        return np.zeros((len(s.t), 3))
    spin = np.cross(s.angular_velocity[:, body], point)
    return s.velocity[:, body] + np.einsum("tij,tj->ti", s.rotation[:, body], spin)


def potential_energy(model: Model, s: BodyStates) -> np.ndarray:
    """Potential energy of gravity, springs, bonds and contacts [J], shape (T,); applied loads have
    none."""
    V = np.zeros(len(s.t))
    if model.gravity is not None:
        V -= np.einsum("n,tni,i->t", _masses(model), s.position, model.gravity.g)
    for spring in model.springs:
        d = _points(s, spring.body_b, spring.point_b) - _points(s, spring.body_a, spring.point_a)
        V += 0.5 * spring.stiffness * (np.linalg.norm(d, axis=1) - spring.rest_length) ** 2
    return V + _bond_energy(model, s) + _contact_energy(model, s)


def _angle(A):
    """Rotation angle of the rotation matrices ``A`` (..., 3, 3), accurate near 0 and π."""
    w = np.stack([A[..., 2, 1] - A[..., 1, 2], A[..., 0, 2] - A[..., 2, 0], A[..., 1, 0] - A[..., 0, 1]], axis=-1)
    return np.arctan2(0.5 * np.linalg.norm(w, axis=-1), 0.5 * (np.trace(A, axis1=-2, axis2=-1) - 1.0))


def _bond_energy(model: Model, s: BodyStates) -> np.ndarray:
    """Rotation, stretch and shear energy of the bonds (:class:`ElasticBond`), shape (T,)."""
    V = np.zeros(len(s.t))
    for bond, r0, n0, A0 in zip(model.bonds, *bond_rest_poses(model), strict=True):
        Ra, Rb = s.rotation[:, bond.body_a], s.rotation[:, bond.body_b]
        theta = _angle(np.einsum("ji,tkj,tkl->til", A0, Ra, Rb))  # A₀ᵀ R_aᵀ R_b
        d = s.position[:, bond.body_a] - s.position[:, bond.body_b]
        r = np.linalg.norm(d, axis=1)
        e = r / r0 - 1.0 if bond.stretch == "normalized" else r - r0
        c = np.einsum("tij,j,tik,tk->t", Ra, n0, Rb, d / r[:, None])  # (R_a n₀)·(R_b n)
        V += 0.5 * (bond.rotation_stiffness * theta**2 + bond.axial_stiffness * e**2
                    + bond.shear_stiffness * (1.0 - c) ** 2)
    return V


def _contact_energy(model: Model, s: BodyStates) -> np.ndarray:
    """Energy of the Hertz contacts (:class:`HertzContact`) between bodies and with walls, (T,)."""
    V = np.zeros(len(s.t))
    for contact in model.contacts:
        rho, p = contact.radii(model.n_bodies), contact.exponent
        a, b = contact.pair_indices(model.n_bodies)
        reach = rho[a] + rho[b]
        r = np.linalg.norm(s.position[:, a] - s.position[:, b], axis=-1)
        delta = 1.0 - r / reach if contact.overlap == "normalized" else reach - r
        V += contact.stiffness / (p + 1.0) * np.sum(np.maximum(delta, 0.0) ** (p + 1.0), axis=-1)
        if contact.wall is not None:
            gap = (s.position - contact.wall.point) @ contact.wall.normal
            delta = 1.0 - gap / rho if contact.overlap == "normalized" else rho - gap
            V += contact.wall.stiffness / (p + 1.0) * np.sum(np.maximum(delta, 0.0) ** (p + 1.0), axis=-1)
    return V


def _spring_rates(s: BodyStates, spring: Spring):
    """The spring's vector ``d`` (world frame) and its rate ``ḋ``, each (T, 3)."""
    d = _points(s, spring.body_b, spring.point_b) - _points(s, spring.body_a, spring.point_a)
    return d, _point_velocities(s, spring.body_b, spring.point_b) - _point_velocities(s, spring.body_a, spring.point_a)


def applied_wrenches(model: Model, s: BodyStates) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per applied load, its force and torque (world frame) at every instant, each (T, 3)."""
    out = []
    for k, load in enumerate(model.loads):
        wrench = []
        for name, value in (("force", load.force), ("torque", load.torque)):
            wrench.append(np.zeros((len(s.t), 3)) if value is None else np.array(
                [vector(f"loads[{k}].{name}(t, states)", value(t, s.at(i)), (3,)) for i, t in enumerate(s.t)]))
        out.append(tuple(wrench))
    return out


def nonconservative_power(model: Model, s: BodyStates) -> np.ndarray:
    """Power of the dampers and applied loads [W], shape (T,): ``dE/dt`` of the total energy.

    A spring's damper adds ``−c (ḋ·e)²``, a :class:`~mbslib.model.PointDamper` ``−c |v_b − v_a|²``; a load
    ``f · (v + R(Ω × p)) + τ · (R Ω)`` (force at its point, torque on its body's world angular
    velocity).
    """
    P = np.zeros(len(s.t))
    for spring in model.springs:
        if spring.damping > 0:
            d, d_dot = _spring_rates(s, spring)
            P -= spring.damping * np.einsum("ti,ti->t", d, d_dot) ** 2 / np.einsum("ti,ti->t", d, d)
    for damper in model.dampers:
        slip = _point_velocities(s, damper.body_b, damper.point_b) - _point_velocities(s, damper.body_a, damper.point_a)
        P -= damper.damping * np.einsum("ti,ti->t", slip, slip)
    for load, (force, torque) in zip(model.loads, applied_wrenches(model, s), strict=True):
        spin = np.einsum("tij,tj->ti", s.rotation[:, load.body], s.angular_velocity[:, load.body])
        P += np.einsum("ti,ti->t", force, _point_velocities(s, load.body, load.point))
        P += np.einsum("ti,ti->t", torque, spin)
    return P


def total_energy(model: Model, s: BodyStates) -> np.ndarray:
    """``T + V`` [J], shape (T,)."""
    return kinetic_energy(model, s) + potential_energy(model, s)


def linear_momentum(model: Model, s: BodyStates) -> np.ndarray:
    """``Σ m v`` [kg m/s], world frame, shape (T, 3)."""
    return np.einsum("n,tni->ti", _masses(model), s.velocity)


def angular_momentum(model: Model, s: BodyStates, about=(0.0, 0.0, 0.0)) -> np.ndarray:
    """``Σ (x − a) × m v + R J Ω`` about the fixed point ``a`` [kg m²/s], world frame, (T, 3)."""
    a = vector("about", about, (3,))
    m, J = _masses(model), _inertias(model)
    orbital = np.einsum("n,tni->tni", m, np.cross(s.position - a, s.velocity))
    spin = np.einsum("tnij,njk,tnk->tni", s.rotation, J, s.angular_velocity)
    return (orbital + spin).sum(axis=1)


def _frame_axis(s, body, axis):
    """World direction of ``axis`` fixed in ``body`` (world axis for the ground), (T, 3)."""
    if body is None:
        return np.broadcast_to(axis, (len(s.t), 3))
    return np.einsum("tij,j->ti", s.rotation[:, body], axis)


def _frame_axis_rate(s, body, axis):
    """Time derivative ``R (Ω × a)`` of :func:`_frame_axis`, (T, 3)."""
    if body is None:
        return np.zeros((len(s.t), 3))
    return np.einsum("tij,tj->ti", s.rotation[:, body], np.cross(s.angular_velocity[:, body], axis))


def axis_normals(axis):
    """Two unit vectors completing ``axis`` to an orthonormal frame: the two rows that hold a
    revolute joint's axes parallel (and a prismatic joint's offset) are along them."""
    helper = np.eye(3)[np.argmin(np.abs(axis))]
    n1 = np.cross(axis, helper)
    n1 /= np.linalg.norm(n1)
    return n1, np.cross(axis, n1)


def _relative_rotation(s, joint):
    Ra = np.eye(3) if joint.body_a is None else s.rotation[:, joint.body_a]
    return np.einsum("...ji,...jk->...ik", Ra, s.rotation[:, joint.body_b])


def constraint_residuals(model: Model, s: BodyStates, reference: BodyStates | None = None) -> np.ndarray:
    """Position-level joint residuals, shape (T, m) with ``m = model.n_constraints``.

    Point coincidence (spherical part): world joint point of b minus that of a. Revolute:
    ``axis_b`` against the two normals of ``axis_a``. Universal: ``axis_a · axis_b``. Prismatic:
    the offset between the points along the two normals of ``axis_a``, and the relative rotation
    ``A = A₀ᵀ R_aᵀ R_b`` through ``½ vee(A − Aᵀ)``, with ``A₀`` from ``reference`` (default: the
    model's initial states).
    """
    reference = model.initial_states() if reference is None else reference
    rows = []
    for joint in model.joints:
        xa, xb = _points(s, joint.body_a, joint.point_a), _points(s, joint.body_b, joint.point_b)
        if joint.kind != "prismatic":
            rows.append(xb - xa)
        if joint.kind == "revolute":
            ea = _frame_axis(s, joint.body_b, joint.axis_b)
            rows.append(np.stack([np.einsum("ti,ti->t", ea, _frame_axis(s, joint.body_a, n))
                                  for n in axis_normals(joint.axis_a)], axis=1))
        elif joint.kind == "universal":
            rows.append(np.einsum("ti,ti->t", _frame_axis(s, joint.body_a, joint.axis_a),
                                  _frame_axis(s, joint.body_b, joint.axis_b))[:, None])
        elif joint.kind == "prismatic":
            d = xb - xa
            rows.append(np.stack([np.einsum("ti,ti->t", d, _frame_axis(s, joint.body_a, n))
                                  for n in axis_normals(joint.axis_a)], axis=1))
            A0 = _relative_rotation(reference, joint)[0]
            A = np.einsum("ji,tjk->tik", A0, _relative_rotation(s, joint))
            rows.append(0.5 * np.array([vee(a - a.T) for a in A]))
    return np.concatenate(rows, axis=1) if rows else np.zeros((len(s.t), 0))


def constraint_rates(model: Model, s: BodyStates, reference: BodyStates | None = None) -> np.ndarray:
    """Velocity-level residuals: the exact time derivatives of :func:`constraint_residuals`, (T, m)."""
    reference = model.initial_states() if reference is None else reference
    rows = []
    for joint in model.joints:
        va = _point_velocities(s, joint.body_a, joint.point_a)
        vb = _point_velocities(s, joint.body_b, joint.point_b)
        if joint.kind != "prismatic":
            rows.append(vb - va)
        if joint.kind == "revolute":
            eb, eb_dot = _frame_axis(s, joint.body_b, joint.axis_b), _frame_axis_rate(s, joint.body_b, joint.axis_b)
            rows.append(np.stack([np.einsum("ti,ti->t", eb_dot, _frame_axis(s, joint.body_a, n))
                                  + np.einsum("ti,ti->t", eb, _frame_axis_rate(s, joint.body_a, n))
                                  for n in axis_normals(joint.axis_a)], axis=1))
        elif joint.kind == "universal":
            ea, ea_dot = _frame_axis(s, joint.body_a, joint.axis_a), _frame_axis_rate(s, joint.body_a, joint.axis_a)
            eb, eb_dot = _frame_axis(s, joint.body_b, joint.axis_b), _frame_axis_rate(s, joint.body_b, joint.axis_b)
            rows.append((np.einsum("ti,ti->t", ea_dot, eb) + np.einsum("ti,ti->t", ea, eb_dot))[:, None])
        elif joint.kind == "prismatic":
            d = _points(s, joint.body_b, joint.point_b) - _points(s, joint.body_a, joint.point_a)
            d_dot = vb - va
            rows.append(np.stack([np.einsum("ti,ti->t", d_dot, _frame_axis(s, joint.body_a, n))
                                  + np.einsum("ti,ti->t", d, _frame_axis_rate(s, joint.body_a, n))
                                  for n in axis_normals(joint.axis_a)], axis=1))
            A0 = _relative_rotation(reference, joint)[0]
            Rb, Omega_b = s.rotation[:, joint.body_b], s.angular_velocity[:, joint.body_b]
            if joint.body_a is None:
                A_dot = np.einsum("ji,tjk,tkl->til", A0, Rb, np.array([hat(w) for w in Omega_b]))
            else:
                Ra, Omega_a = s.rotation[:, joint.body_a], s.angular_velocity[:, joint.body_a]
                RaT_Rb = np.einsum("tji,tjk->tik", Ra, Rb)
                spin_b = np.einsum("tij,tjk->tik", RaT_Rb, np.array([hat(w) for w in Omega_b]))
                spin_a = np.einsum("tij,tjk->tik", np.array([hat(w) for w in Omega_a]), RaT_Rb)
                A_dot = np.einsum("ji,tjk->tik", A0, spin_b - spin_a)
            rows.append(0.5 * np.array([vee(a - a.T) for a in A_dot]))
    return np.concatenate(rows, axis=1) if rows else np.zeros((len(s.t), 0))


def energy_scale(model: Model, states: BodyStates) -> float:
    """The scale of relative energy errors: ``max(|E₀|, max T)`` (a mechanism starting with
    ``E₀ = 0`` is measured against its kinetic energy; one at rest with ``E₀ = 0`` against 1 J)."""
    return max(abs(total_energy(model, states.at(0))[0]), kinetic_energy(model, states).max()) or 1.0


def energy_error(model: Model, states: BodyStates) -> np.ndarray:
    """``(E − E₀)/scale`` at every recorded instant (:func:`energy_scale`)."""
    energy = total_energy(model, states)
    return (energy - energy[0]) / energy_scale(model, states)


def _null_space(rows: list) -> np.ndarray:
    """Orthonormal basis (k, 3) of the directions orthogonal to every vector of ``rows``."""
    if not rows:
        return np.eye(3)
    _, s, vt = np.linalg.svd(np.array(rows, dtype=float))
    rank = int(np.sum(s > 1e-12 * max(s.max(), 1.0)))
    return vt[rank:]


def conserved_axes(model: Model) -> tuple[np.ndarray, np.ndarray] | None:
    """The point ``c`` and the world directions (k, 3), k ≥ 1, along which the angular momentum
    about ``c`` is conserved; ``None`` if no component is.

    Internal forces (joints, springs, dampers, bonds, contacts between bodies) conserve angular
    momentum. A torque comes from outside: gravity, ``Σ (x − c) × m g``, has no component along
    ``g``; a ground joint at ``c`` reacts with a force through ``c`` and a torque that a spherical
    joint does not have, a revolute or universal joint has only across its ground axis, a
    prismatic joint in every direction. Ground joints at different points, springs or dampers to
    the ground, applied loads and walls leave nothing conserved.
    """
    grounds = [j for j in model.joints if j.body_a is None]
    if (len({tuple(j.point_a) for j in grounds}) > 1 or model.loads
            or any(f.body_a is None for f in model.springs + model.dampers)
            or any(c.wall is not None for c in model.contacts)):
        return None
    c = grounds[0].point_a if grounds else np.zeros(3)
    normals = []  # directions along which a torque may act
    if model.gravity is not None and np.any(model.gravity.g):
        normals += list(_null_space([model.gravity.g]))
    for joint in grounds:
        if joint.kind in ("revolute", "universal"):
            normals += list(_null_space([joint.axis_a]))
        elif joint.kind == "prismatic":
            normals += list(np.eye(3))
    axes = _null_space(normals)
    return (c, axes) if len(axes) else None


def conserved_momentum(model: Model, states: BodyStates, L=None) -> np.ndarray | None:
    """The conserved components (:func:`conserved_axes`) of the angular momentum of ``states``
    (or of ``L``, a scheme's own about the world origin, shape (T, 3)), about the point ``c``,
    shape (T, k); ``None`` if the model conserves none."""
    found = conserved_axes(model)
    if found is None:
        return None
    c, axes = found
    if L is None:
        L = angular_momentum(model, states, about=c)
    else:  # about c: L₀ − c × P
        L = np.asarray(L, dtype=float) - np.cross(c, linear_momentum(model, states))
    return L @ axes.T


def momentum_error(model: Model, states: BodyStates, L=None) -> np.ndarray | None:
    """Change of the conserved components (:func:`conserved_momentum`) of the angular momentum of
    ``states`` (or of ``L``, a scheme's own about the world origin, (T, 3)) relative to its initial
    size (a momentum that starts at zero is measured against ``1 kg m²/s``), at every instant;
    ``None`` if the model conserves none."""
    part = conserved_momentum(model, states, L)
    if part is None:
        return None
    return np.abs(part - part[0]).max(axis=1) / max(np.abs(part[0]).max(), 1.0)


def rotation_defect(states: BodyStates) -> np.ndarray:
    """Largest ``|RᵀR − I|`` (entries) over the bodies at every instant: how far an attitude left SO(3)."""
    RtR = np.einsum("tnji,tnjk->tnik", states.rotation, states.rotation)
    return np.abs(RtR - np.eye(3)).max(axis=(1, 2, 3))


def joint_error(model: Model, states: BodyStates) -> np.ndarray:
    """Largest joint residual at position level at every instant (m or, for axes, dimensionless);
    zeros without joints."""
    return np.abs(constraint_residuals(model, states)).max(axis=1, initial=0.0)


def joint_rate_error(model: Model, states: BodyStates) -> np.ndarray:
    """Largest joint residual at velocity level at every instant; zeros without joints."""
    return np.abs(constraint_rates(model, states)).max(axis=1, initial=0.0)


def attitude_error(states: BodyStates, reference: BodyStates) -> float:
    """Largest entry of ``R − R_ref`` over the bodies at the last instant of both."""
    return float(np.abs(states.rotation[-1] - reference.rotation[-1]).max())


# -- series helpers -------------------------------------------------------------------------------

def increments(values) -> np.ndarray:
    """Per-step increments ``X^{n+1} - X^n`` of a time-major series, shape (N, ...)."""
    return np.diff(np.asarray(values, dtype=float), axis=0)


def max_increment(values) -> float:
    """Largest absolute per-step increment over the whole series (and all components)."""
    return float(np.max(np.abs(increments(values))))


def max_drift(values) -> float:
    """Largest absolute deviation from the initial value, ``max_n |X^n - X^0|``."""
    values = np.asarray(values, dtype=float)
    return float(np.max(np.abs(values - values[0])))


def relative_drift(values) -> float:
    """``max_n |X^n - X^0| / |X^0|`` (the initial value must not vanish)."""
    values = np.asarray(values, dtype=float)
    scale = np.max(np.abs(values[0]))
    if scale == 0.0:
        raise ValueError("relative drift of a quantity that starts at zero")
    return max_drift(values) / float(scale)
