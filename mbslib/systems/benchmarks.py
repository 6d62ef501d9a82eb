"""The single-body benchmarks of the shoot-out chapter, each defined once as a coordinate-free
description (:mod:`mbslib.model`). The heavy top is :func:`mbslib.systems.rigid_bodies.heavy_top`
(the cone of chapters 000 and 001), the closed loop :func:`mbslib.systems.bricard.bricard` and
the chain :func:`mbslib.systems.chain.chain`.
"""

from __future__ import annotations

from mbslib.model import Model
from mbslib.systems.pendulum3d import pendulum_model
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
    """The 3-D pendulum of paper 003 (Baker & Gonzalez 2021, Sect. 3) as a description
    (:func:`mbslib.systems.pendulum3d.pendulum_model`).

    A body of ``mass`` hangs from a ground point (the origin) by a spherical joint, its centre of
    mass ``arm`` from the pivot along its body e₃ axis, under gravity ``g`` along +e₃ (the paper's
    e₃ points down), with the paper's initial attitude and spatial angular velocity (eq. 42).
    Its inertia about the pivot is spherical, ``inertia`` I, as the explicit maps of paper 003
    require. A rigid body needs ``J > 2 m a²``; the default ``J = 3 kg m²`` keeps the paper's
    m = g = 1 and a = 1 m.
    """
    positive(arm=arm)
    return pendulum_model(inertia=inertia, mass=mass, g=g, rho0=(0.0, 0.0, arm))
