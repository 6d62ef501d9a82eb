"""A chain of N rigid rods joined by spherical joints and hung from the ground, under gravity.

The benchmark for the growth of cost with the size of a model. Every rod is the rod of the
Bricard benchmark (:func:`mbslib.systems.bricard.rod`: 1 m, 1 kg, square section 0.1 m). The
chain starts straight and horizontal along the world e₁ axis, its first rod's end at the
ground pivot (the origin), and turns as one rigid body about the vertical e₃ axis with angular
velocity ``spin``; that motion respects every joint, so the initial state is consistent at
position and velocity level. Released under gravity along −e₃, the chain falls and swings in
three dimensions.
"""

from __future__ import annotations

import numpy as np

from mbslib.model import Gravity, Joint, Model, RigidBody
from mbslib.systems.bricard import rod
from mbslib.validation import nonnegative, positive


def chain(n_bodies: int, *, spin: float = 1.0, g: float = 9.81) -> Model:
    """The chain of ``n_bodies`` rods (module docstring); ``spin`` [rad/s] about e₃, ``g`` [m/s²]."""
    if isinstance(n_bodies, bool) or int(n_bodies) != n_bodies or n_bodies < 1:
        raise ValueError(f"n_bodies must be a positive integer, got {n_bodies!r}")
    nonnegative(spin=spin)
    positive(g=g)
    omega = np.array([0.0, 0.0, spin])  # world frame
    rods = []
    for k in range(int(n_bodies)):
        straight = rod(f"rod {k + 1}", [k, 0.0, 0.0], [k + 1.0, 0.0, 0.0])
        rods.append(RigidBody(straight.name, straight.mass, straight.inertia, position=straight.position,
                              rotation=straight.rotation, velocity=np.cross(omega, straight.position),
                              angular_velocity=straight.rotation.T @ omega))
    end = np.array([0.5, 0.0, 0.0])  # the rods' ends, ∓ end in their own frames
    joints = [Joint("spherical", None, 0, np.zeros(3), -end)]
    joints += [Joint("spherical", k - 1, k, end, -end) for k in range(1, int(n_bodies))]
    return Model(tuple(rods), tuple(joints), gravity=Gravity([0.0, 0.0, -g]))
