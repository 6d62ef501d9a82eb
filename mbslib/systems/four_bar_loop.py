"""The closed loop of four rigid bars of paper 000 (Sect. 5.5), in the quaternion formulation.

Four bars of square cross-section, joined at their ends by spherical joints into a square in the
e1–e2 plane, at rest; bar 1 is pushed by a force and a torque that rise and fall within the first
second (127)–(128). The bars, joints and the load (an :class:`~mbslib.model.AppliedLoad`) are
a :class:`~mbslib.model.Model`; its unit-quaternion form (122)–(126), the load's generalized
force ``[8f e1; 2E(q¹)ᵀ(6f e1); 0]`` included, is
:class:`~mbslib.formulations.quaternions.QuaternionSystem`.
"""

from __future__ import annotations

import numpy as np

from mbslib.formulations.quaternions import QuaternionSystem
from mbslib.loads import triangular_pulse
from mbslib.model import AppliedLoad, Joint, Model, RigidBody
from mbslib.validation import in_range, positive

#: The joints (a, b) of the loop: bar a's end meets bar b's.
JOINTS = ((0, 1), (1, 2), (2, 3), (3, 0))


def triangle_load(t, f_max):
    """Load history (128): ``2 f_m t`` up to ``f_m`` at t = ½, ``2 f_m (1 - t)`` down to 0 at
    t = 1, 0 before and afterwards: :func:`mbslib.loads.triangular_pulse` with peak ``f_max``."""
    return triangular_pulse(t, peak=f_max, t_peak=0.5, t_end=1.0)


class FourBarLoop(QuaternionSystem):
    """Four rigid bars joined in a closed loop by spherical joints (Sect. 5.5).

    Coordinates (122): ``q = (φ¹, q¹, …, φ⁴, q⁴)``, n = 28; constraints (125), m = 16: four unit
    constraints, then the three components of each joint (a, b) of :data:`JOINTS`. Bars 1 and 3
    lie along e2, bars 2 and 4 along e1, so each bar's body frame is principal and the quaternions
    start at the identity. The load on bar 1 for t ∈ [0, 1] (127)–(128): force ``8 f(t) e1`` at its
    centre of mass and spatial torque ``6 f(t) e1``. Parameters (authors' code): ``length = 10``,
    unit square cross-section, ``rho = 1``, ``f_max = 100``.
    """

    def __init__(self, length: float = 10.0, rho: float = 1.0, f_max: float = 100.0):
        positive(length=length, rho=rho)
        in_range("f_max", f_max, 0.0, np.inf)
        self.length, self.rho, self.f_max = float(length), float(rho), float(f_max)
        bars = [RigidBody(f"bar {a + 1}", self.bar_mass, self.inertia(a), position=x)
                for a, x in enumerate(self.initial_positions())]
        joints = [Joint("spherical", a, b, self.lever(a, b), self.lever(b, a)) for a, b in JOINTS]
        push = AppliedLoad(0, force=lambda t, states: 8 * self.load(t) * np.array([1.0, 0, 0]),
                           torque=lambda t, states: 6 * self.load(t) * np.array([1.0, 0, 0]))
        super().__init__(Model(tuple(bars), tuple(joints), loads=(push,)))

    def load(self, t) -> float:
        """``f(t)`` of (128) with this loop's ``f_max``."""
        return float(triangle_load(t, self.f_max))

    @property
    def bar_mass(self) -> float:
        return self.rho * self.length  # unit cross-section

    def inertia(self, a) -> np.ndarray:
        """Principal inertia of bar ``a``: ``m(1+1)/12`` about its axis, ``m(l²+1)/12`` across."""
        m, l = self.bar_mass, self.length
        long, short = m * 2 / 12, m * (l**2 + 1) / 12
        return np.array([short, long, short]) if a % 2 == 0 else np.array([long, short, short])

    def lever(self, a, b) -> np.ndarray:
        """Body vector ``X^{(a,b)}`` from the centre of bar a to its joint with bar b."""
        axis = 1 if a % 2 == 0 else 0  # bars 1, 3 along e2; 2, 4 along e1
        centre = self.initial_positions()  # the neighbour's centre lies on the joint's side
        X = np.zeros(3)
        X[axis] = 0.5 * self.length * np.sign(centre[b][axis] - centre[a][axis])
        return X

    def initial_positions(self) -> np.ndarray:
        h = self.length / 2
        return np.array([[h, 0, 0], [0, h, 0], [-h, 0, 0], [0, -h, 0]], dtype=float)

    def split(self, q):
        """``(φ, quaternions)`` of shape (4, 3), (4, 4) from q (28,)."""
        Q = np.asarray(q).reshape(4, 7)
        return Q[:, :3], Q[:, 3:]

    def joint_gaps(self, q) -> np.ndarray:
        """The four joint constraint vectors ``g^{(a,b)}(q)``, shape (4, 3)."""
        return self.constraint(q)[4:].reshape(4, 3)

    def linear_momentum(self, p) -> np.ndarray:
        return np.asarray(p).reshape(4, 7)[:, :3].sum(axis=0)
