"""The single-body benchmarks of the shoot-out chapter, each defined once as a coordinate-free
description (:mod:`mbslib.model`). The heavy top is :func:`mbslib.systems.rigid_bodies.heavy_top`
(the cone of chapters 000 and 001), the closed loop :func:`mbslib.systems.bricard.bricard` and
the chain :func:`mbslib.systems.chain.chain`.
"""

from __future__ import annotations

import numpy as np

from mbslib.model import Gravity, Joint, Model, RigidBody
from mbslib.rodrigues import rr_matrix
from mbslib.systems.pendulum3d import initial_conditions
from mbslib.systems.rigid_bodies import free_body
from mbslib.validation import positive

#: Principal inertias of the free asymmetric body [kg m²] (strictly increasing: the second is the
#: intermediate axis).
FREE_BODY_INERTIA = (2.0, 3.0, 4.5)


def spinning_body(Omega0=(1.0, 0.5, 2.0)) -> Model:
    """The free asymmetric body of :data:`FREE_BODY_INERTIA` (principal axes = body axes, 1 kg,
    at rest at the origin) turning with body angular velocity ``Omega0`` [rad/s]; by default it
    circles the major axis."""
    return free_body(FREE_BODY_INERTIA, Omega0)


def tennis_racket(tilt: float = 1e-2, rate: float = 2.0) -> Model:
    """The free body of :data:`FREE_BODY_INERTIA` started near its intermediate axis,
    ``Ω₀ = (tilt, rate, tilt)`` rad/s: the tennis-racket (Dzhanibekov) flip, the intermediate-axis
    spin reversing periodically."""
    positive(tilt=tilt, rate=rate)
    return free_body(FREE_BODY_INERTIA, [tilt, rate, tilt])


def pendulum_3d(*, inertia: float = 3.0, mass: float = 1.0, g: float = 1.0, arm: float = 1.0) -> Model:
    """The 3-D pendulum of paper 003 (Baker & Gonzalez 2021, Sect. 3) as a description.

    A body of ``mass`` hangs from a ground point (the origin) by a spherical joint, its centre of
    mass ``arm`` from the pivot along its body e₃ axis, under gravity ``g`` along +e₃ (the paper's
    e₃ points down), with the paper's initial attitude and spatial angular velocity (eq. 42,
    :func:`mbslib.systems.pendulum3d.initial_conditions`). Its inertia about the pivot is
    spherical, ``inertia`` I, as the explicit maps of paper 003 require. The paper takes
    ``m = g = J = 1`` with the centre of mass 1 m from the pivot; no rigid body has that: the
    inertia about the centre, ``J − m a²`` across and ``J`` along the axis, obeys the triangle
    inequality only for ``J ≥ 2 m a²``. The default ``J = 3 kg m²`` keeps the rest of the data.
    """
    positive(inertia=inertia, mass=mass, g=g, arm=arm)
    across = inertia - mass * arm**2
    if not 2 * across > inertia:
        raise ValueError(f"inertia must exceed 2 m a² = {2 * mass * arm**2:g} kg m² (a rigid body with its centre "
                         f"of mass {arm:g} m from the pivot), got {inertia!r}")
    alpha0, w0 = initial_conditions()
    R0 = rr_matrix(alpha0)
    centre = R0 @ [0.0, 0.0, arm]
    body = RigidBody("pendulum", mass, [across, across, inertia], position=centre, rotation=R0,
                     velocity=np.cross(w0, centre), angular_velocity=R0.T @ w0)
    pivot = Joint("spherical", None, 0, point_a=np.zeros(3), point_b=[0.0, 0.0, -arm])
    return Model((body,), (pivot,), gravity=Gravity([0.0, 0.0, g]))
