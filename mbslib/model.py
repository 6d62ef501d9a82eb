"""One physical model, independent of coordinates: rigid bodies, joints and forces.

A :class:`Model` says *what* a mechanism is, in physical terms with SI units: each
:class:`RigidBody` has a mass, an inertia tensor about its centre of mass (in its body frame)
and an initial pose and velocity; :class:`Joint` records tie a body to another body or to the
ground; forces are :class:`Gravity`, :class:`Spring` and :class:`PointDamper` records, applied
forces and torques (:class:`AppliedLoad`, functions of time and state or :class:`Constant`),
:class:`ElasticBond` records (potentials of the relative pose of two bodies) and
:class:`HertzContact` records (spherical bodies pressing on each other and on a :class:`PlaneWall`).
*How* the motion is parametrised (unit quaternions, directors, rotation vector, Euler
parameters, Tait–Bryan angles, rescaled Rodrigues parameters, minimal coordinates) is the
business of a formulation, which maps the description to its coordinates and back.

Every trajectory can be mapped back to body poses and velocities, a :class:`BodyStates`; the
diagnostics of :mod:`mbslib.diagnostics` (energy, momenta, joint residuals) are computed from
those alone, the same function for every formulation and integrator.

Conventions: ``R`` maps body-frame vectors to the world frame; the angular velocity ``Ω`` is in
the body frame (``Ṙ = R Ω̂``); positions and velocities are those of the centre of mass, in the
world frame. Records validate themselves and name the offending parameter.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from mbslib.validation import index, nonnegative, positive, vector
from mbslib.validation import inertia as valid_inertia

JOINT_KINDS = ("spherical", "revolute", "universal", "prismatic")
#: How an :class:`ElasticBond` measures stretch and a :class:`HertzContact` overlap: relative to the
#: rest length or reach (``"normalized"``, as paper 003 prints them) or in metres (``"absolute"``).
MEASURES = ("normalized", "absolute")


def _rotation(name: str, R) -> np.ndarray:
    R = vector(name, R, (3, 3))
    if not (np.allclose(R.T @ R, np.eye(3), atol=1e-10) and np.linalg.det(R) > 0):
        raise ValueError(f"{name} must be a rotation matrix (RᵀR = I, det R = 1)")
    return R


def _unit(name: str, a) -> np.ndarray:
    a = vector(name, a, (3,))
    norm = np.linalg.norm(a)
    if not norm > 0:
        raise ValueError(f"{name} must be a non-zero vector")
    return a / norm


def _frozen(instance, **values):
    for key, value in values.items():
        if isinstance(value, np.ndarray):
            value.setflags(write=False)
        object.__setattr__(instance, key, value)


@dataclass(frozen=True, eq=False)
class RigidBody:
    """A rigid body and its initial state.

    Attributes
    ----------
    name : str
    mass : float
        m [kg], positive.
    inertia : ndarray, shape (3, 3)
        Inertia tensor J about the centre of mass, in the body frame [kg m²]; three principal
        values are accepted. Symmetric positive definite, and the inertia of a rigid body: its
        principal values satisfy the triangle inequality ``J₃ ≤ J₁ + J₂`` (equality: a flat body).
    position, velocity : ndarray, shape (3,)
        Initial centre-of-mass position [m] and velocity [m/s], world frame.
    rotation : ndarray, shape (3, 3)
        Initial orientation R (body to world).
    angular_velocity : ndarray, shape (3,)
        Initial angular velocity Ω in the body frame [rad/s].
    inertia_not_rigid : str
        Empty for a rigid body. A reason (e.g. "the paper's data, Corke 1994") accepts principal
        inertias that no rigid body has; the reason stays with the body.
    """

    name: str
    mass: float
    inertia: np.ndarray
    position: np.ndarray = field(default_factory=lambda: np.zeros(3))
    rotation: np.ndarray = field(default_factory=lambda: np.eye(3))
    velocity: np.ndarray = field(default_factory=lambda: np.zeros(3))
    angular_velocity: np.ndarray = field(default_factory=lambda: np.zeros(3))
    inertia_not_rigid: str = ""

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"name must be a non-empty string, got {self.name!r}")
        if not isinstance(self.inertia_not_rigid, str):
            raise ValueError(f"body {self.name!r}: inertia_not_rigid must be a reason (a string), got "
                             f"{self.inertia_not_rigid!r}")
        try:
            positive(mass=self.mass)
            values = dict(mass=float(self.mass),
                          inertia=valid_inertia("inertia", self.inertia, rigid=not self.inertia_not_rigid),
                          position=vector("position", self.position, (3,)).copy(),
                          rotation=_rotation("rotation", self.rotation).copy(),
                          velocity=vector("velocity", self.velocity, (3,)).copy(),
                          angular_velocity=vector("angular_velocity", self.angular_velocity, (3,)).copy())
        except ValueError as error:
            raise ValueError(f"body {self.name!r}: {error}") from None
        _frozen(self, **values)


@dataclass(frozen=True, eq=False)
class Joint:
    """A joint between body ``body_a`` (``None``: the ground) and body ``body_b``.

    The joint point is ``point_a`` in body a's frame (in the world frame for the ground) and
    ``point_b`` in body b's frame; both must coincide (for ``prismatic``: lie on the axis).

    ``kind`` is one of

    - ``spherical``: the points coincide (3 equations);
    - ``revolute``: and ``axis_b`` stays parallel to ``axis_a`` (2 more);
    - ``universal``: and ``axis_b`` stays perpendicular to ``axis_a`` (1 more);
    - ``prismatic``: the relative rotation stays as initially (3) and the points stay on the
      line through ``point_a`` along ``axis_a`` (2).

    Axes are given in the frames of their bodies (world frame for the ground).
    """

    kind: str
    body_a: int | None
    body_b: int
    point_a: np.ndarray
    point_b: np.ndarray
    axis_a: np.ndarray | None = None
    axis_b: np.ndarray | None = None

    def __post_init__(self):
        if self.kind not in JOINT_KINDS:
            raise ValueError(f"kind must be one of {JOINT_KINDS}, got {self.kind!r}")
        _frozen(self, body_a=index("body_a", self.body_a, ground=True), body_b=index("body_b", self.body_b))
        if self.body_a is not None and self.body_a == self.body_b:
            raise ValueError(f"body_a and body_b must differ, got {self.body_a} twice")
        values = dict(point_a=vector("point_a", self.point_a, (3,)).copy(),
                      point_b=vector("point_b", self.point_b, (3,)).copy())
        needs_axes = self.kind != "spherical"
        for name in ("axis_a", "axis_b"):
            axis = getattr(self, name)
            if needs_axes and axis is None and not (self.kind == "prismatic" and name == "axis_b"):
                raise ValueError(f"{name} is required for a {self.kind} joint")
            values[name] = None if axis is None else _unit(name, axis)
        _frozen(self, **values)

    @property
    def n_equations(self) -> int:
        return {"spherical": 3, "revolute": 5, "universal": 4, "prismatic": 5}[self.kind]


@dataclass(frozen=True)
class Gravity:
    """Uniform gravity: acceleration ``g`` [m/s²], world frame (e.g. ``(0, 0, -9.81)``)."""

    g: np.ndarray

    def __post_init__(self):
        _frozen(self, g=vector("g", self.g, (3,)).copy())


@dataclass(frozen=True, eq=False)
class Spring:
    """A linear spring–damper between ``point_a`` on body a (``None``: ground, world frame) and
    ``point_b`` on body b: potential ``½ k (|d| − L₀)²`` with ``d`` the vector between the points,
    damping force ``c ḋ·e`` along the line ``e = d/|d|``."""

    body_a: int | None
    body_b: int
    point_a: np.ndarray
    point_b: np.ndarray
    stiffness: float
    rest_length: float = 0.0
    damping: float = 0.0

    def __post_init__(self):
        nonnegative(stiffness=self.stiffness, rest_length=self.rest_length, damping=self.damping)
        _frozen(self, body_a=index("body_a", self.body_a, ground=True), body_b=index("body_b", self.body_b))
        if self.body_a is not None and self.body_a == self.body_b:
            raise ValueError(f"body_a and body_b must differ, got {self.body_a} twice")
        _frozen(self, point_a=vector("point_a", self.point_a, (3,)).copy(),
                point_b=vector("point_b", self.point_b, (3,)).copy(), stiffness=float(self.stiffness),
                rest_length=float(self.rest_length), damping=float(self.damping))


@dataclass(frozen=True, eq=False)
class PointDamper:
    """A linear damper between ``point_a`` on body a (``None``: ground, world frame) and ``point_b``
    on body b that resists their whole relative velocity: force ``−c (v_b − v_a)`` on b at its
    point, the opposite on a, with ``v = u + R(Ω × p)`` the points' world velocities; power
    ``−c |v_b − v_a|²``. Unlike a :class:`Spring`'s damper it needs no line, so it also acts
    between coinciding points."""

    body_a: int | None
    body_b: int
    point_a: np.ndarray
    point_b: np.ndarray
    damping: float

    def __post_init__(self):
        nonnegative(damping=self.damping)
        _frozen(self, body_a=index("body_a", self.body_a, ground=True), body_b=index("body_b", self.body_b))
        if self.body_a is not None and self.body_a == self.body_b:
            raise ValueError(f"body_a and body_b must differ, got {self.body_a} twice")
        _frozen(self, point_a=vector("point_a", self.point_a, (3,)).copy(),
                point_b=vector("point_b", self.point_b, (3,)).copy(), damping=float(self.damping))


@dataclass(frozen=True, eq=False)
class Constant:
    """A load that changes neither in time nor with the motion: ``Constant(v)(t, states)`` is ``v``
    (a force [N] or torque [N m], world frame). Being a callable of ``(t, states)``, it is an
    :class:`AppliedLoad`'s ``force`` or ``torque`` like any other; formulations whose compiled
    kernels cannot call Python read its ``value`` instead."""

    value: np.ndarray

    def __post_init__(self):
        _frozen(self, value=vector("value", self.value, (3,)).copy())

    def __call__(self, t, states) -> np.ndarray:
        return self.value


@dataclass(frozen=True, eq=False)
class AppliedLoad:
    """A force ``force(t, states)`` [N] (world frame) at ``point`` of ``body`` (body frame) and a
    torque ``torque(t, states)`` [N m] (world frame) on it; either may be ``None``. ``states`` is
    the :class:`BodyStates` of one instant; a :class:`Constant` is a load that does not change."""

    body: int
    force: Callable | None = None
    torque: Callable | None = None
    point: np.ndarray = field(default_factory=lambda: np.zeros(3))

    def __post_init__(self):
        if self.force is None and self.torque is None:
            raise ValueError("an applied load needs force=... or torque=...")
        _frozen(self, body=index("body", self.body))
        for name in ("force", "torque"):
            if getattr(self, name) is not None and not callable(getattr(self, name)):
                raise ValueError(f"{name} must be a callable of (t, states) or None, got {getattr(self, name)!r}")
        _frozen(self, point=vector("point", self.point, (3,)).copy())


def _measure(name: str, value) -> str:
    if value not in MEASURES:
        raise ValueError(f"{name} must be one of {MEASURES}, got {value!r}")
    return value


@dataclass(frozen=True, eq=False)
class ElasticBond:
    """An elastic bond between the centres of bodies ``body_a`` and ``body_b``: the binder bond of
    paper 003 (Baker & Gonzalez, eqs. 43–55), whose potential is the sum of three terms.

    - Rotation (bending and torsion, eqs. 44–47): ``½ k_r θ²``, with θ the angle of the relative
      rotation ``A₀ᵀ R_aᵀ R_b`` (``A₀``: its rest value).
    - Stretch (eqs. 51–52): ``½ k_a e²`` with ``e = r/r₀ − 1`` (``stretch="normalized"``, as
      printed) or ``e = r − r₀`` (``"absolute"``), ``r = |x_a − x_b|``.
    - Shear (eqs. 53–55 in the one reading of the garbled print under which the printed force and
      torque are gradients of the printed energy): ``½ k_s (1 − c)²`` with ``c = (R_a n₀)·(R_b n)``,
      ``n = (x_a − x_b)/r`` and ``n₀`` the rest direction in body a's frame. ``R_b n`` reads the
      world components of ``n`` as body-b components, as printed, so this term is not objective
      (turning the whole system changes it) and rests at ``c = 1`` only where ``R_b n = n``: in the
      paper's torus every body starts at ``R = I``.

    Attributes
    ----------
    body_a, body_b : int
        Body indices (a bond joins two bodies, not the ground).
    rotation_stiffness : float
        k_r [N m per rad²] (paper K^m), non-negative.
    axial_stiffness : float
        k_a [J] for the normalized stretch, [N/m] for the absolute (paper K^a), non-negative.
    shear_stiffness : float
        k_s [J] (paper K^s), non-negative.
    stretch : str
        ``"normalized"`` or ``"absolute"`` (:data:`MEASURES`).
    rest_length : float or None
        r₀ [m], positive; ``None``: the initial distance of the centres.
    rest_direction : ndarray, shape (3,), or None
        n₀ in body a's frame (normalised); ``None``: ``R_aᵀ (x_a − x_b)/r`` initially.
    rest_rotation : ndarray, shape (3, 3), or None
        A₀; ``None``: the initial ``R_aᵀ R_b``.
    """

    body_a: int
    body_b: int
    rotation_stiffness: float = 0.0
    axial_stiffness: float = 0.0
    shear_stiffness: float = 0.0
    stretch: str = "normalized"
    rest_length: float | None = None
    rest_direction: np.ndarray | None = None
    rest_rotation: np.ndarray | None = None

    def __post_init__(self):
        for name in ("body_a", "body_b"):
            index(name, getattr(self, name))  # a bond joins two bodies, not the ground
        if self.body_a == self.body_b:
            raise ValueError(f"body_a and body_b must differ, got {self.body_a} twice")
        nonnegative(rotation_stiffness=self.rotation_stiffness, axial_stiffness=self.axial_stiffness,
                    shear_stiffness=self.shear_stiffness)
        if self.rest_length is not None:
            positive(rest_length=self.rest_length)
        _frozen(self, body_a=int(self.body_a), body_b=int(self.body_b),
                rotation_stiffness=float(self.rotation_stiffness), axial_stiffness=float(self.axial_stiffness),
                shear_stiffness=float(self.shear_stiffness), stretch=_measure("stretch", self.stretch),
                rest_length=None if self.rest_length is None else float(self.rest_length),
                rest_direction=None if self.rest_direction is None else _unit("rest_direction", self.rest_direction),
                rest_rotation=None if self.rest_rotation is None else _rotation("rest_rotation",
                                                                                self.rest_rotation).copy())


@dataclass(frozen=True, eq=False)
class PlaneWall:
    """A fixed plane through ``point`` (world frame) whose unit ``normal`` points to the side of the
    bodies, with the ``stiffness`` of a :class:`HertzContact` against it (same units as the
    contact's own)."""

    point: np.ndarray
    normal: np.ndarray
    stiffness: float

    def __post_init__(self):
        nonnegative(stiffness=self.stiffness)
        _frozen(self, point=vector("point", self.point, (3,)).copy(), normal=_unit("normal", self.normal),
                stiffness=float(self.stiffness))


@dataclass(frozen=True, eq=False)
class HertzContact:
    """Hertz-type contact of spherical bodies (paper 003, eqs. 56–57): a potential
    ``k δ₊^(p+1)/(p+1)`` per overlapping pair, repulsive along the line of centres.

    A pair ``(a, b)`` at distance ``r`` overlaps by ``δ = 1 − r/(ρ_a + ρ_b)``
    (``overlap="normalized"``, as printed) or ``δ = ρ_a + ρ_b − r`` (``"absolute"``). With the
    Hertz exponent ``p = 3/2`` the prefactor is the 2/5 that makes the energy (56) consistent with
    the force (57) (the print says 5/2). A body at distance ``g = (x − point)·normal`` from the
    ``wall`` overlaps it by ``δ = 1 − g/ρ`` or ``δ = ρ − g``, with the wall's own stiffness: the
    normalized form is the pair law against the body's mirror image, which is how the paper names
    the wall contact (it gives no formula).

    Attributes
    ----------
    radius : float or ndarray, shape (n_bodies,)
        ρ [m] of every body, or one for all; positive.
    stiffness : float
        k of the pairs [J] (normalized) or [N/m^p] (absolute) (paper K^pp), non-negative.
    pairs : "all" or sequence of (int, int)
        The pairs that may touch: every pair of bodies, or those listed (none: ``()``).
    wall : PlaneWall or None
    exponent : float
        p, positive (Hertz: 3/2).
    overlap : str
        ``"normalized"`` or ``"absolute"`` (:data:`MEASURES`).
    """

    radius: float | np.ndarray
    stiffness: float
    pairs: str | tuple = "all"
    wall: PlaneWall | None = None
    exponent: float = 1.5
    overlap: str = "normalized"

    def __post_init__(self):
        radius = np.asarray(self.radius, dtype=float)
        if radius.ndim > 1 or not np.all(np.isfinite(radius) & (radius > 0)) or radius.size == 0:
            raise ValueError(f"radius must be one positive number or one per body, got {self.radius!r}")
        nonnegative(stiffness=self.stiffness)
        positive(exponent=self.exponent)
        if isinstance(self.pairs, str):
            if self.pairs != "all":
                raise ValueError(f"pairs must be 'all' or a sequence of (a, b) body index pairs, got {self.pairs!r}")
            pairs = "all"
        else:
            pairs = tuple(self.pairs)
            for k, pair in enumerate(pairs):
                if (len(pair) != 2 or not all(isinstance(i, (int, np.integer)) for i in pair)
                        or pair[0] == pair[1]):
                    raise ValueError(f"pairs[{k}] must be two different body indices, got {pair!r}")
            pairs = tuple((int(a), int(b)) for a, b in pairs)
        if self.wall is not None and not isinstance(self.wall, PlaneWall):
            raise ValueError(f"wall must be a PlaneWall or None, got {type(self.wall).__name__}")
        _frozen(self, radius=radius.copy() if radius.ndim else float(radius), stiffness=float(self.stiffness),
                pairs=pairs, exponent=float(self.exponent), overlap=_measure("overlap", self.overlap))

    def radii(self, n_bodies: int) -> np.ndarray:
        """ρ of each of ``n_bodies`` bodies, shape (n_bodies,)."""
        return np.broadcast_to(self.radius, (n_bodies,))

    def pair_indices(self, n_bodies: int) -> tuple[np.ndarray, np.ndarray]:
        """Bodies a and b of every pair that may touch, two index arrays (all pairs ``a < b`` in
        row order for ``pairs="all"``)."""
        if self.pairs == "all":
            return np.triu_indices(n_bodies, 1)
        pairs = np.array(self.pairs, dtype=int).reshape(-1, 2)
        return pairs[:, 0], pairs[:, 1]


@dataclass(frozen=True, eq=False)
class Model:
    """A mechanism: bodies, joints and forces. Indices in joints and forces refer to ``bodies``."""

    bodies: tuple
    joints: tuple = ()
    gravity: Gravity | None = None
    springs: tuple = ()
    loads: tuple = ()
    dampers: tuple = ()
    bonds: tuple = ()
    contacts: tuple = ()

    def __post_init__(self):
        for name in ("bodies", "joints", "springs", "loads", "dampers", "bonds", "contacts"):
            if isinstance(getattr(self, name), (str, bytes, dict)) or not hasattr(getattr(self, name), "__iter__"):
                raise ValueError(f"{name} must be a sequence of records, got {getattr(self, name)!r}")
        bodies, joints = tuple(self.bodies), tuple(self.joints)
        if not bodies or not all(isinstance(b, RigidBody) for b in bodies):
            raise ValueError("bodies must be a non-empty sequence of RigidBody")
        if self.gravity is not None and not isinstance(self.gravity, Gravity):
            raise ValueError(f"gravity must be a Gravity record, e.g. Gravity([0, 0, -9.81]), or None; got "
                             f"{self.gravity!r}")
        names = [b.name for b in bodies]
        if len(set(names)) != len(names):
            raise ValueError(f"body names must be unique, got {names}")
        n = len(bodies)
        for label, items, kind in (("joints", joints, Joint), ("springs", self.springs, Spring),
                                   ("dampers", self.dampers, PointDamper)):
            for k, item in enumerate(items):
                if not isinstance(item, kind):
                    raise ValueError(f"{label}[{k}] must be a {kind.__name__}, got {type(item).__name__}")
                for end in ("body_a", "body_b"):
                    index = getattr(item, end)
                    if index is None and end == "body_b":
                        raise ValueError(f"{label}[{k}].body_b must be a body index (the ground is body_a=None)")
                    if index is not None and not 0 <= index < n:
                        raise ValueError(f"{label}[{k}].{end} = {index} is not a body index (0..{n - 1})")
        for k, load in enumerate(self.loads):
            if not isinstance(load, AppliedLoad):
                raise ValueError(f"loads[{k}] must be an AppliedLoad, got {type(load).__name__}")
            if not 0 <= load.body < n:
                raise ValueError(f"loads[{k}].body = {load.body} is not a body index (0..{n - 1})")
        for k, bond in enumerate(self.bonds):
            if not isinstance(bond, ElasticBond):
                raise ValueError(f"bonds[{k}] must be an ElasticBond, got {type(bond).__name__}")
            for end in ("body_a", "body_b"):
                if not 0 <= getattr(bond, end) < n:
                    raise ValueError(f"bonds[{k}].{end} = {getattr(bond, end)} is not a body index (0..{n - 1})")
            d = bodies[bond.body_a].position - bodies[bond.body_b].position
            if (bond.rest_length is None or bond.rest_direction is None) and not np.linalg.norm(d) > 0:
                raise ValueError(f"bonds[{k}]: the centres of its bodies coincide initially, so rest_length and "
                                 "rest_direction must be given")
        for k, contact in enumerate(self.contacts):
            if not isinstance(contact, HertzContact):
                raise ValueError(f"contacts[{k}] must be a HertzContact, got {type(contact).__name__}")
            if np.ndim(contact.radius) and len(contact.radius) != n:
                raise ValueError(f"contacts[{k}].radius must be one number or one per body ({n}), "
                                 f"got {len(contact.radius)}")
            for pair in () if contact.pairs == "all" else contact.pairs:
                if not all(0 <= i < n for i in pair):
                    raise ValueError(f"contacts[{k}].pairs has {pair}, not a pair of body indices (0..{n - 1})")
        _frozen(self, bodies=bodies, joints=joints, springs=tuple(self.springs), loads=tuple(self.loads),
                dampers=tuple(self.dampers), bonds=tuple(self.bonds), contacts=tuple(self.contacts))

    @property
    def n_bodies(self) -> int:
        return len(self.bodies)

    @property
    def n_constraints(self) -> int:
        return sum(j.n_equations for j in self.joints)

    def initial_states(self) -> BodyStates:
        """The bodies' initial poses and velocities, one instant at t = 0."""
        b = self.bodies
        return BodyStates(t=np.zeros(1), position=np.array([[x.position for x in b]]),
                          rotation=np.array([[x.rotation for x in b]]), velocity=np.array([[x.velocity for x in b]]),
                          angular_velocity=np.array([[x.angular_velocity for x in b]]))


@dataclass(frozen=True)
class BodyStates:
    """Poses and velocities of every body at every instant, time-major.

    Attributes
    ----------
    t : ndarray, shape (T,)
    position, velocity : ndarray, shape (T, N, 3)
        Centre-of-mass position [m] and velocity [m/s], world frame.
    rotation : ndarray, shape (T, N, 3, 3)
        Orientation R (body to world).
    angular_velocity : ndarray, shape (T, N, 3)
        Ω in the body frame [rad/s].
    """

    t: np.ndarray
    position: np.ndarray
    rotation: np.ndarray
    velocity: np.ndarray
    angular_velocity: np.ndarray

    def __post_init__(self):
        T = np.shape(self.t)[0]
        N = np.shape(self.position)[1] if np.ndim(self.position) == 3 else -1
        for name, shape in (("position", (T, N, 3)), ("rotation", (T, N, 3, 3)), ("velocity", (T, N, 3)),
                            ("angular_velocity", (T, N, 3))):
            if np.shape(getattr(self, name)) != shape:
                raise ValueError(f"{name} must have shape {shape}, got {np.shape(getattr(self, name))}")

    def at(self, k: int) -> BodyStates:
        """The states of instant ``k`` alone."""
        s = slice(k, k + 1) if k != -1 else slice(-1, None)
        return BodyStates(self.t[s], self.position[s], self.rotation[s], self.velocity[s], self.angular_velocity[s])


def refuse(model: Model, formulation: str, *records: str) -> None:
    """Raise a ``ValueError`` naming every kind of force record among ``records`` (names of
    :class:`Model` fields, e.g. ``"bonds"``) that ``model`` has and ``formulation`` cannot express,
    so that no formulation drops a force without a word."""
    present = [f"{len(getattr(model, name))} {name}" for name in records if getattr(model, name)]
    if present:
        raise ValueError(f"{formulation} cannot express the model's {', '.join(present)}")


def bond_rest_poses(model: Model) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rest length r₀ (nb,), rest direction n₀ in body a's frame (nb, 3) and rest relative rotation
    A₀ (nb, 3, 3) of every :class:`ElasticBond`: the values the bond gives, else those of the
    model's initial states."""
    a = np.array([bond.body_a for bond in model.bonds], dtype=int)
    b = np.array([bond.body_b for bond in model.bonds], dtype=int)
    x = np.array([body.position for body in model.bodies])
    R = np.array([body.rotation for body in model.bodies])
    d = x[a] - x[b]
    length = np.linalg.norm(d, axis=1)
    direction = np.einsum("kji,kj->ki", R[a], d) / length[:, None]
    rotation = np.einsum("kji,kjl->kil", R[a], R[b])
    for k, bond in enumerate(model.bonds):
        for given, out in ((bond.rest_length, length), (bond.rest_direction, direction),
                           (bond.rest_rotation, rotation)):
            if given is not None:
                out[k] = given
    return length, direction, rotation
