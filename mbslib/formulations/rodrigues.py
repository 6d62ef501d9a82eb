"""Rescaled Rodrigues parameters (paper 003) for a coordinate-free model of spherical bodies.

The explicit variational maps of :mod:`mbslib.integrators.rodrigues_vi` hold for bodies whose
inertia is spherical (``J = j I``) and move without joints under forces of their configuration.
A model outside the class a formulation takes raises ``ValueError`` saying what it needs. The
state of each body is its centre of mass, its attitude as a rescaled Rodrigues vector
(``R = cay(α)``) and the spatial angular velocity ``R Ω``. Three classes:

- :class:`RodriguesSystem`: free spherical bodies under gravity and undamped springs, forces in
  Python;
- :class:`PivotedRodriguesSystem`: the 3-D pendulum of the paper (Sect. 3), one body held at a
  ground point, spherical about that point, under gravity
  (:meth:`mbslib.systems.pendulum3d.Pendulum3D.model`);
- :class:`BondedSpheresSystem`: spherical bodies joined by elastic bonds and in Hertz contact with
  each other and a wall, the particle–binder torus of the paper (Sect. 4,
  :meth:`mbslib.systems.binder_torus.BinderTorus.description`), as the arguments of the torus's
  compiled force kernel.
"""
from __future__ import annotations

import numpy as np
from scipy.sparse.linalg import eigsh

from mbslib.integrators import rodrigues_vi as rr
from mbslib.model import BodyStates, Model, bond_rest_poses
from mbslib.rodrigues import rr_compose, rr_from_matrix, rr_matrix
from mbslib.systems.binder_torus import forces_kernel
from mbslib.validation import positive


def _spherical_inertia(body) -> float:
    """``j`` of a body whose inertia is ``j I``, else ``ValueError`` naming the body."""
    j = body.inertia[0, 0]
    if not np.allclose(body.inertia, j * np.eye(3), rtol=1e-12, atol=0):
        raise ValueError(f"rescaled Rodrigues maps need spherical bodies (J = j I); body {body.name!r} has "
                         f"inertia {body.inertia.tolist()}")
    return j


def _initial_conditions(model: Model):
    """``(x, v, α, R Ω)`` of the model's bodies at t = 0, each of shape (n, 3)."""
    b = model.bodies
    return (np.array([x.position for x in b]), np.array([x.velocity for x in b]),
            np.array([rr_from_matrix(x.rotation) for x in b]), np.array([x.rotation @ x.angular_velocity for x in b]))


def _body_states(t, rows) -> BodyStates:
    """Body poses and velocities at times ``t`` of rows of free bodies' states ``(x, v, α, R Ω)``."""
    x, v, alpha, spatial = np.moveaxis(rr.states_of(rows), 1, 0)
    R = rr_matrix(alpha)
    return BodyStates(np.asarray(t, dtype=float), x, R, v, np.einsum("tnji,tnj->tni", R, spatial))


class RodriguesSystem:
    """A model of spherical bodies as the maps of :mod:`mbslib.integrators.rodrigues_vi` see it:
    masses ``m``, scalar inertias ``J`` and ``force_torque(x, alpha)``."""

    def __init__(self, model: Model):
        if model.joints:
            raise ValueError("rescaled Rodrigues maps: the explicit scheme takes no joints (constraints); "
                             f"the model has {len(model.joints)}")
        if model.loads:
            raise ValueError("rescaled Rodrigues maps: applied loads are not available")
        if model.dampers:
            raise ValueError("rescaled Rodrigues maps: point dampers (dampers[0]) are not available")
        if model.bonds or model.contacts:
            raise ValueError("rescaled Rodrigues maps: bonds and contacts are run by BondedSpheresSystem, not "
                             "RodriguesSystem")
        for spring in model.springs:
            if spring.damping:
                raise ValueError("rescaled Rodrigues maps: forces must depend on the configuration only "
                                 "(a spring has damping)")
        self.model = model
        self.m = np.array([b.mass for b in model.bodies])
        self.J = np.array([_spherical_inertia(b) for b in model.bodies])
        self.g = np.zeros(3) if model.gravity is None else model.gravity.g

    def force_torque(self, x, alpha):
        """Forces ``−∂U/∂x`` and spatial torques on every body, shape (n, 3) each."""
        R = rr_matrix(alpha)
        force, torque = self.m[:, None] * self.g, np.zeros_like(x)
        for spring in self.model.springs:
            arms, points = [], []
            for body, point in ((spring.body_a, spring.point_a), (spring.body_b, spring.point_b)):
                arm = np.zeros(3) if body is None else R[body] @ point
                arms.append(arm)
                points.append(point if body is None else x[body] + arm)
            d = points[1] - points[0]
            length = np.linalg.norm(d)
            f = -spring.stiffness * (length - spring.rest_length) * d / length  # on b
            for body, arm, sign in ((spring.body_a, arms[0], -1.0), (spring.body_b, arms[1], 1.0)):
                if body is not None:
                    force[body] += sign * f
                    torque[body] += np.cross(arm, sign * f)
        return force, torque

    def initial_state(self) -> rr.RRState:
        return rr.initial_state(self, *_initial_conditions(self.model))

    def body_states(self, t, rows) -> BodyStates:
        """Body poses and velocities at times ``t`` of the rows of a
        :func:`~mbslib.integrators.rodrigues_vi.run` of the spatial-velocity maps (23), (25), (27)."""
        return _body_states(t, rows)


class PivotedRodriguesSystem:
    """One body held at a ground point by a spherical joint, under gravity, whose inertia about
    that point is spherical (``J_O = j I``): the 3-D pendulum of paper 003 (Sect. 3).

    The maps see the attitude alone (``x ≡ v ≡ 0``), the scalar inertia ``j`` about the pivot and
    the spatial torque of gravity about it, ``(R a) × m g`` with ``a`` the pivot → centre-of-mass
    arm in the body frame; ``m`` and ``J`` are the one body's mass and ``j``, scalars. A model
    outside this class raises ``ValueError`` saying what the method needs.
    """

    def __init__(self, model: Model):
        if (model.n_bodies != 1 or model.springs or model.loads or model.dampers or model.bonds or model.contacts
                or len(model.joints) != 1):
            raise ValueError("pivoted rescaled Rodrigues maps: one body, one joint, no springs, applied loads, "
                             "dampers, bonds or contacts")
        (body,), (joint,) = model.bodies, model.joints
        if joint.kind != "spherical" or joint.body_a is not None:
            raise ValueError(f"pivoted rescaled Rodrigues maps: the joint must be a ground spherical joint, got a "
                             f"{joint.kind} joint")
        self.arm = -joint.point_b
        J_pivot = body.inertia + body.mass * (self.arm @ self.arm * np.eye(3) - np.outer(self.arm, self.arm))
        j = J_pivot[0, 0]
        if not np.allclose(J_pivot, j * np.eye(3), rtol=1e-12, atol=0):
            raise ValueError("pivoted rescaled Rodrigues maps need a spherical inertia about the pivot (J_O = j I); "
                             f"body {body.name!r} has J_O = {J_pivot.tolist()}")
        self.model, self.joint = model, joint
        self.m, self.J = body.mass, float(j)
        self.g = np.zeros(3) if model.gravity is None else model.gravity.g

    def force_torque(self, x, alpha):
        """No force on the (frozen) centre, and the spatial torque ``(R a) × m g`` about the pivot."""
        arm = rr_matrix(alpha) @ self.arm
        return np.zeros_like(x), np.cross(arm, self.m * self.g)

    def initial_state(self) -> rr.RRState:
        body = self.model.bodies[0]
        return rr.initial_state(self, np.zeros((1, 3)), np.zeros((1, 3)), [rr_from_matrix(body.rotation)],
                                [body.rotation @ body.angular_velocity])

    def body_states(self, t, rows) -> BodyStates:
        """Body poses and velocities at times ``t`` of the rows of a
        :func:`~mbslib.integrators.rodrigues_vi.run` of the spatial-velocity maps: the centre at
        ``c + R a`` moving with ``ω × R a``."""
        alpha, spatial = np.moveaxis(rr.states_of(rows), 1, 0)[2:]
        R = rr_matrix(alpha)
        arm = np.einsum("tnij,j->tni", R, self.arm)
        return BodyStates(np.asarray(t, dtype=float), self.joint.point_a + arm, R, np.cross(spatial, arm),
                          np.einsum("tnji,tnj->tni", R, spatial))


_KERNEL = "bonded spheres (the torus's compiled kernel)"


def _kernel_bonds(model: Model):
    """``(bi, bj, n0, r0, K_m, K_a, K_s)`` of the bonds for the kernel, and their common stretch
    measure (``None`` without bonds); ``ValueError`` for what the kernel cannot do."""
    stiffness, stretch = (0.0, 0.0, 0.0), None
    for k, bond in enumerate(model.bonds):
        values = (bond.rotation_stiffness, bond.axial_stiffness, bond.shear_stiffness)
        if k == 0:
            stiffness, stretch = values, bond.stretch
        elif values != stiffness:
            raise ValueError(f"{_KERNEL}: bonds[{k}] has the stiffnesses {values}, bonds[0] {stiffness}; the kernel "
                             "takes one set for all bonds")
        elif bond.stretch != stretch:
            raise ValueError(f"{_KERNEL}: one measure for every stretch and overlap, bonds[{k}] has the stretch "
                             f"{bond.stretch!r}, bonds[0] {stretch!r}")
    r0, n0, A0 = bond_rest_poses(model)
    for k, A in enumerate(A0):
        if np.abs(A - np.eye(3)).max() > 1e-12:  # bodies that start turned alike: the identity to round-off
            raise ValueError(f"{_KERNEL}: bonds[{k}].rest_rotation must be the identity (the kernel bends and twists "
                             f"against the absolute attitudes), got {A.tolist()}")
    bi = np.array([bond.body_a for bond in model.bonds], dtype=np.int64)
    bj = np.array([bond.body_b for bond in model.bonds], dtype=np.int64)
    return (bi, bj, np.ascontiguousarray(n0), r0, *stiffness), stretch


def _kernel_contact(model: Model):
    """``(D, K_pp, K_pw, x_w, wall, pairs)`` of the contact record for the kernel (zeros and
    ``False`` without one), and its overlap measure (``None`` without one); ``ValueError`` for what
    the kernel cannot do."""
    if not model.contacts:
        return (0.0, 0.0, 0.0, 0.0, False, False), None
    if len(model.contacts) > 1:
        raise ValueError(f"{_KERNEL}: one contact record at most, the model has {len(model.contacts)}")
    (contact,) = model.contacts
    rho = contact.radii(model.n_bodies)
    if np.any(rho != rho[0]):
        raise ValueError(f"{_KERNEL}: contacts[0].radius must be one for all bodies, got {contact.radius!r}")
    if contact.exponent != 1.5:
        raise ValueError(f"{_KERNEL}: contacts[0].exponent must be 1.5 (Hertz), got {contact.exponent!r}")
    if contact.pairs not in ("all", ()):
        raise ValueError(f"{_KERNEL}: contacts[0].pairs must be 'all' or none (the kernel tries every pair), got "
                         f"{len(contact.pairs)} listed pairs")
    wall = contact.wall
    if wall is not None and not np.array_equal(wall.normal, [1.0, 0.0, 0.0]):
        raise ValueError(f"{_KERNEL}: contacts[0].wall.normal must be +x, got {wall.normal.tolist()}")
    walled = (wall.stiffness, float(wall.point @ wall.normal), True) if wall is not None else (0.0, 0.0, False)
    return (float(2.0 * rho[0]), contact.stiffness, *walled, contact.pairs == "all"), contact.overlap


class BondedSpheresSystem:
    """Spherical bodies joined by elastic bonds (:class:`~mbslib.model.ElasticBond`) and in Hertz
    contact (:class:`~mbslib.model.HertzContact`), as the compiled force kernel of the torus,
    :func:`mbslib.systems.binder_torus.forces_kernel`, takes them: the arguments
    ``kernel_args`` of the kernel and of the torus's compiled time loop
    (:func:`mbslib.studies.binder_torus.simulate_torus`), and the Python interface of the maps
    (``m``, ``J``, ``force_torque``).

    The kernel was written for the paper's torus and takes one value where the description could
    hold many. A description it cannot run raises ``ValueError`` naming what it has: joints,
    gravity, springs, applied loads or dampers; bodies of different masses or inertias, or not
    spherical; bonds with different stiffnesses or stretch measures, or a rest rotation other
    than the identity, to round-off (the kernel bends and twists against the absolute attitudes,
    so bonded bodies must start turned alike); more than one
    contact record, listed pairs (the kernel tries every pair), bodies of different radii, an
    exponent other than 3/2, an overlap measure other than the bonds' stretch measure, or a wall
    whose normal is not +x.

    Attributes
    ----------
    model : mbslib.model.Model
    n : int
        Number of bodies.
    m, J : float
        The common mass and scalar inertia.
    diameter : float
        The common contact diameter ``2ρ`` (0 without a contact record).
    kernel_args : tuple
        ``(bi, bj, n0, r0, D, m, J, K_m, K_a, K_s, K_pp, K_pw, x_w, absolute, wall, contact)``:
        bond ends, rest directions (body a's frame) and lengths, diameter, mass, inertia, the
        stiffnesses of rotation, stretch, shear, pairs and wall, the wall's x, absolute measures,
        wall on, pairs on (unused entries 0).
    """

    def __init__(self, model: Model):
        for label in ("joints", "springs", "loads", "dampers"):
            if getattr(model, label):
                raise ValueError(f"{_KERNEL}: {label} are not available (the model has {len(getattr(model, label))})")
        if model.gravity is not None:
            raise ValueError(f"{_KERNEL}: gravity is not available")
        first = model.bodies[0]
        m, J = first.mass, _spherical_inertia(first)
        for body in model.bodies:
            if body.mass != m or _spherical_inertia(body) != J:
                raise ValueError(f"{_KERNEL}: every body needs the mass and inertia of body {first.name!r} ({m:g}, "
                                 f"{J:g}); body {body.name!r} has {body.mass:g}, {body.inertia.tolist()}")
        bonds, stretch = _kernel_bonds(model)
        contact, overlap = _kernel_contact(model)
        measures = {measure for measure in (stretch, overlap) if measure is not None}
        if len(measures) > 1:
            raise ValueError(f"{_KERNEL}: one measure for every stretch and overlap, got the bonds' stretch "
                             f"{stretch!r} and contacts[0].overlap {overlap!r}")
        self.model, self.n, self.m, self.J, self.diameter = model, model.n_bodies, float(m), float(J), contact[0]
        bi, bj, n0, r0, K_m, K_a, K_s = bonds
        D, K_pp, K_pw, x_w, wall, pairs = contact
        self.kernel_args = (bi, bj, n0, r0, D, self.m, self.J, K_m, K_a, K_s, K_pp, K_pw, x_w,
                            measures == {"absolute"}, wall, pairs)

    def forces(self, x, alpha):
        """Forces ``−∂U/∂x`` and spatial torques (n, 3) each, the potential terms
        ``(U^m, U^s, U^a, U^pp, U^pw)`` and the total wall force (x component), from the kernel."""
        bi, bj, n0, r0, D, _, _, Km, Ka, Ks, Kpp, Kpw, x_w, absolute, wall, contact = self.kernel_args
        x = np.ascontiguousarray(x, dtype=float)
        alpha = np.ascontiguousarray(alpha, dtype=float)
        F, T, R, U = np.zeros((self.n, 3)), np.zeros((self.n, 3)), np.zeros((self.n, 3, 3)), np.zeros(5)
        Fw = forces_kernel(x, alpha, bi, bj, n0, r0, D, Km, Ka, Ks, Kpp, Kpw, x_w, absolute, wall, contact, F, T, R, U)
        return F, T, U, Fw

    def force_torque(self, x, alpha):
        """Forces and spatial torques, shape (n, 3) each (the compiled kernel)."""
        F, T, _, _ = self.forces(x, alpha)
        return F, T

    def energy(self, x, v, alpha, w) -> float:
        """Total energy ``½ m Σ|v|² + ½ J Σ|R Ω|² + U`` of one state, U from the kernel."""
        _, _, U, _ = self.forces(x, alpha)
        kinetic = [0.5 * self.m * np.sum(np.asarray(v) ** 2), 0.5 * self.J * np.sum(np.asarray(w) ** 2)]
        return float(np.concatenate([kinetic, U]).sum())

    def initial_conditions(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(x, v, α, R Ω)`` of the description's bodies at t = 0, each of shape (n, 3)."""
        return _initial_conditions(self.model)

    def initial_state(self) -> rr.RRState:
        return rr.initial_state(self, *self.initial_conditions())

    def body_states(self, t, rows) -> BodyStates:
        """Body poses and velocities at times ``t`` of the rows of a
        :func:`~mbslib.integrators.rodrigues_vi.run` of the spatial-velocity maps (23), (25), (27)."""
        return _body_states(t, rows)

    def stiffness_matrix(self, x, alpha, eps: float = 1e-7) -> np.ndarray:
        """Tangent stiffness ``K = −d(F, T)/d(x, ζ)`` at one configuration, shape (6n, 6n).

        Central differences of the compiled forces and spatial torques, with positions perturbed
        by ``eps`` and attitudes by the spatial (left) increment ``α → α ⊕ eps e_c``, the
        perturbation for which ``T = −∂U/∂ζ``; columns ordered (x_0, …, x_{n-1}, ζ_0, …).
        Its symmetric part is the Hessian of ``U(x, exp(S(ζ)) R)`` at ζ = 0 (up to O(eps²));
        the rotation block of body i adds the antisymmetric ``S(T_i)/2`` of the left
        trivialisation (zero at equilibrium). :meth:`max_frequency` uses the symmetric part.
        """
        positive(eps=eps)
        x = np.asarray(x, dtype=float)
        alpha = np.asarray(alpha, dtype=float)
        n = self.n
        K = np.empty((6 * n, 6 * n))

        def generalized_force(xp, ap):
            F, T, _, _ = self.forces(xp, ap)
            return np.concatenate([F.ravel(), T.ravel()])

        for col in range(6 * n):
            body, c = divmod(col % (3 * n), 3)
            e = np.zeros(3)
            e[c] = eps
            if col < 3 * n:
                xp, xm = x.copy(), x.copy()
                xp[body] += e
                xm[body] -= e
                K[:, col] = -(generalized_force(xp, alpha) - generalized_force(xm, alpha)) / (2.0 * eps)
            else:
                ap, am = alpha.copy(), alpha.copy()
                ap[body] = rr_compose(alpha[body], e)
                am[body] = rr_compose(alpha[body], -e)
                K[:, col] = -(generalized_force(x, ap) - generalized_force(x, am)) / (2.0 * eps)
        return K

    def max_frequency(self, x, alpha) -> float:
        """Highest frequency ``ω_max`` of the motion linearised at (x, α), contacts included.

        ``sqrt(max eig(M^{-1/2} K M^{-1/2}))`` with ``K`` the symmetric part of
        :meth:`stiffness_matrix` and ``M = diag(m I, J I)``: the quantity that bounds the stable
        step of maps (23), (25), (27), ``h < 2/ω_max`` (Verlet and symplectic Euler on a linear
        oscillator).
        """
        K = self.stiffness_matrix(x, alpha)
        scale = np.concatenate([np.full(3 * self.n, self.m), np.full(3 * self.n, self.J)]) ** -0.5
        Ks = scale[:, None] * (0.5 * (K + K.T)) * scale[None, :]
        # Lanczos for the largest eigenvalue, from a fixed start vector (deterministic)
        top = eigsh(Ks, k=1, which="LA", v0=np.ones(len(Ks)), return_eigenvectors=False)[0]
        return float(np.sqrt(max(top, 0.0)))
