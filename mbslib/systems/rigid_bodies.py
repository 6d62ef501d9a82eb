"""Single rigid bodies as coordinate-free descriptions (:mod:`mbslib.model`).

The free rigid body and the heavy top are defined here once; every formulation of the book
(:mod:`mbslib.formulations`) takes them from here.
"""

from __future__ import annotations

import numpy as np

from mbslib.model import Gravity, Joint, Model, RigidBody
from mbslib.systems.heavy_top import Cone, steady_precession_spin
from mbslib.validation import in_range, positive, vector


def free_body(inertia, angular_velocity, *, mass: float = 1.0, rotation=None) -> Model:
    """A torque-free rigid body at rest at the origin, spinning with body angular velocity
    ``angular_velocity`` [rad/s]; ``inertia`` [kg m²] about its centre of mass, body frame."""
    rotation = np.eye(3) if rotation is None else rotation
    body = RigidBody("body", mass, inertia, rotation=rotation, angular_velocity=angular_velocity)
    return Model((body,))


def heavy_top(cone: Cone | None = None, *, g: float = 9.81, theta0: float = np.pi / 3, omega_p: float = 10.0,
              spin: float | None = None) -> Model:
    """The heavy top: a solid cone (:class:`mbslib.systems.heavy_top.Cone`) on its fixed tip.

    The axis starts in the (e₂, e₃) plane, tilted by ``theta0`` from e₃ (rotation about e₁), and
    the cone turns with ``ω = ω_p e₃ + ω_s d₃`` (precession ``omega_p`` about the vertical and
    spin ``ω_s`` about its axis d₃); ``spin=None`` takes the spin of steady precession
    (:func:`mbslib.systems.heavy_top.steady_precession_spin`; Kinon & Betsch 2024, eqs. 113-118;
    Kinon, Betsch & Schneider 2023, eqs. 62-68). Gravity ``g`` acts along −e₃; the tip is
    held at the origin by a spherical joint.
    """
    cone = Cone() if cone is None else cone
    positive(g=g, omega_p=omega_p)
    in_range("theta0", theta0, 0.0, np.pi)
    l = cone.com_distance
    if spin is None:
        J1, _, J3 = cone.inertia_tip
        spin = steady_precession_spin(cone.mass * g * l, J1, J3, omega_p, theta0)
    c, s = np.cos(theta0), np.sin(theta0)
    R0 = np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])
    axis = R0[:, 2]
    omega = omega_p * np.array([0.0, 0.0, 1.0]) + spin * axis
    body = RigidBody("cone", cone.mass, cone.inertia_com, position=l * axis, rotation=R0,
                     velocity=np.cross(omega, l * axis), angular_velocity=R0.T @ omega)
    tip = Joint("spherical", None, 0, point_a=np.zeros(3), point_b=[0.0, 0.0, -l])
    return Model((body,), (tip,), gravity=Gravity([0.0, 0.0, -g]))


def principal_frame(inertia) -> tuple[np.ndarray, np.ndarray]:
    """Principal values ``J_p`` and a proper rotation ``V`` with ``J = V diag(J_p) Vᵀ``.

    A diagonal tensor keeps its body axes (``V = I``, values in the given order); otherwise the
    values ascend.
    """
    J = vector("inertia", inertia, (3, 3))
    if np.count_nonzero(J - np.diag(np.diag(J))) == 0:
        return np.diag(J).copy(), np.eye(3)
    values, V = np.linalg.eigh(J)
    if np.linalg.det(V) < 0:
        V[:, 2] = -V[:, 2]
    return values, V
