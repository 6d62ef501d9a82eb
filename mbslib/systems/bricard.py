"""Bricard's mechanism: a closed loop of five rods and six revolute joints with a redundant
constraint (benchmark A04 of the IFToMM library of computational benchmark problems).

Data of the benchmark (González, *MBS benchmark A04: Bricard mechanism*, Laboratorio de
Ingeniería Mecánica, Universidade da Coruña, 2005; as documented by the OpenSim port of the
library, RehabEngGroup/MBSbenchmarksInOpenSim, and built identically in Exudyn's test model
``bricardMechanism.py``): five rods of length 1 m, mass 1 kg and square section 0.1 m; gravity
along −y; ten seconds of simulated time; the measure of accuracy is the drift of the total
mechanical energy. The joint points are the corners

    P₀ = (0, 0, 0), P₁ = (1, 0, 0), P₂ = (1, −1, 0), P₃ = (1, −1, 1), P₄ = (0, −1, 1), P₅ = (0, 0, 1) m,

rod k runs from P_k to P_{k+1}, the ground closes the loop from P₅ to P₀, and the joint axes at
P₀ … P₅ are e_y, e_z, e_x, e_y, e_z, e_x. The mechanism starts at rest in this configuration
(as in Exudyn's model; the specification's own initial-value page was not accessible to us).

Six revolute joints impose 30 equations on the 30 coordinates of five rods, yet the loop moves
with one degree of freedom: one equation is redundant and the constraint Jacobian has rank 29.
``redundant=False`` replaces the last revolute joint by the four equations that remain
independent (coincident points and one of the two axis-alignment rows), the way the Exudyn model
frees one rotation of its last joint; the motion is the same.
"""

from __future__ import annotations

import numpy as np

from mbslib.model import Gravity, Joint, Model, RigidBody
from mbslib.validation import positive, vector

CORNERS = np.array([[0, 0, 0], [1, 0, 0], [1, -1, 0], [1, -1, 1], [0, -1, 1], [0, 0, 1]], dtype=float)
AXES = np.eye(3)[[1, 2, 0, 1, 2, 0]]  # world joint axes at P₀ … P₅


def rod(name: str, start, end, *, mass: float = 1.0, width: float = 0.1) -> RigidBody:
    """A rod of square section ``width`` from ``start`` to ``end`` (world points), at rest.

    Its body e₁ axis runs along the rod and its body e₃ axis is perpendicular to the world e₁
    axis (so that no rod of a model built from them starts at the gimbal lock of the Tait–Bryan
    angles, pitch ±90°); the inertia about its centre is ``m w²/6`` along and ``m (l² + w²)/12``
    across.
    """
    positive(mass=mass, width=width)
    start, end = vector("start", start, (3,)), vector("end", end, (3,))
    length = np.linalg.norm(end - start)
    positive(length=length)
    along = (end - start) / length
    third = np.cross([1.0, 0.0, 0.0], along)
    third = third / np.linalg.norm(third) if np.linalg.norm(third) > 1e-12 else np.array([0.0, 0.0, 1.0])
    rotation = np.column_stack([along, np.cross(third, along), third])
    J_across, J_along = mass * (length**2 + width**2) / 12, mass * width**2 / 6
    return RigidBody(name, mass, [J_along, J_across, J_across], position=0.5 * (start + end), rotation=rotation)


def bricard(*, redundant: bool = True, g: float = 9.81) -> Model:
    """Bricard's mechanism of benchmark A04 at rest in its initial configuration (module docstring)."""
    positive(g=g)
    rods = tuple(rod(f"rod {k + 1}", CORNERS[k], CORNERS[k + 1]) for k in range(5))
    end = np.array([0.5, 0.0, 0.0])  # rod k starts at −end and ends at +end (its own frame)
    # corner k joins (body a, point a) to (body b, point b); the ground (None) holds P₀ and P₅
    ends = [(None, CORNERS[0], 0, -end)] + [(k - 1, end, k, -end) for k in range(1, 5)] + [(None, CORNERS[5], 4, end)]
    joints = []
    for k, (a, point_a, b, point_b) in enumerate(ends):
        axis_a = AXES[k] if a is None else rods[a].rotation.T @ AXES[k]
        axis_b = rods[b].rotation.T @ AXES[k]
        if k == 5 and not redundant:  # one alignment row only: axis_b ⟂ a normal of the hinge axis
            joints.append(Joint("universal", a, b, point_a, point_b, axis_a=np.cross(AXES[5], AXES[0]), axis_b=axis_b))
        else:
            joints.append(Joint("revolute", a, b, point_a, point_b, axis_a=axis_a, axis_b=axis_b))
    return Model(rods, tuple(joints), gravity=Gravity([0.0, -g, 0.0]))
