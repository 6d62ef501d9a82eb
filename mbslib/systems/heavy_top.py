"""The heavy top's physical data, shared by every formulation of the book.

The heavy top of chapters 000 (unit quaternions, :class:`mbslib.systems.livens_systems.HeavyTop`)
and 001 (directors, :func:`mbslib.systems.ggl_examples.heavy_top`) is a solid circular cone
spinning about its fixed tip under gravity. Both formulations take the cone's mass, centre-of-mass
distance and principal inertias from :class:`Cone`, and the spin rate of steady precession from
:func:`steady_precession_spin`.

Closed-form data of a solid cone of density ρ, base radius r and height a (axis e_3, tip at the
origin, base at height a):

- mass ``m = ρπr²a/3``;
- centre of mass on the axis at ``l = 3a/4`` from the tip;
- principal inertias about the centre of mass ``J_0^{1,2} = 3/80 m(4r² + a²)``,
  ``J_0^3 = 3/10 m r²``;
- about the tip (parallel-axis theorem along the axis) ``J^{1,2} = J_0^{1,2} + m l²``,
  ``J^3 = J_0^3``.

The papers' cone (Kinon & Betsch 2024, eqs. 113-114; Kinon, Betsch & Schneider 2023, eq. 62)
has ρ = 2700 kg/m³, a = 0.1 m and r = a/2.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mbslib.validation import in_range, positive


@dataclass(frozen=True)
class Cone:
    """Solid circular cone spinning on its tip; validated on construction.

    Attributes
    ----------
    density : float
        ρ [kg/m³], positive.
    height : float
        a [m], positive: distance from the tip to the base.
    radius : float or None
        r [m] of the base, positive; ``None`` (default) gives the papers' r = a/2.

    Raises
    ------
    ValueError
        Naming the offending parameter.
    """

    density: float = 2700.0
    height: float = 0.1
    radius: float | None = None

    def __post_init__(self):
        positive(density=self.density, height=self.height)
        radius = self.height / 2 if self.radius is None else self.radius
        positive(radius=radius)
        object.__setattr__(self, "density", float(self.density))
        object.__setattr__(self, "height", float(self.height))
        object.__setattr__(self, "radius", float(radius))

    @property
    def mass(self) -> float:
        """m = ρπr²a/3 [kg] (0.225π kg for the papers' cone)."""
        return self.density * np.pi * self.radius**2 * self.height / 3

    @property
    def com_distance(self) -> float:
        """l = 3a/4 [m]: distance from the tip to the centre of mass, along the axis."""
        return 3 * self.height / 4

    @property
    def inertia_com(self) -> np.ndarray:
        """Principal inertias about the centre of mass ``(J_0^1, J_0^2, J_0^3)`` [kg m²], (3,)."""
        m, r, a = self.mass, self.radius, self.height
        J01 = 3 / 80 * m * (4 * r**2 + a**2)
        return np.array([J01, J01, 3 / 10 * m * r**2])

    @property
    def inertia_tip(self) -> np.ndarray:
        """Principal inertias about the tip ``(J_0^1 + m l², J_0^2 + m l², J_0^3)`` [kg m²], (3,).

        The parallel-axis term ``m l²`` enters only the transverse inertias, since the tip lies
        on the symmetry axis (Kinon & Betsch 2024, eq. 114 as corrected in chapter 000).
        """
        J = self.inertia_com
        shift = self.mass * self.com_distance**2
        return np.array([J[0] + shift, J[1] + shift, J[2]])


def steady_precession_spin(mgl, J1, J3, omega_p, theta0) -> float:
    """Spin rate ω_s of steady precession of a symmetric heavy top (Goldstein).

    ``ω_s = mgl/(J3 ω_p) + (J1 − J3)/J3 · ω_p cos θ0`` (Kinon & Betsch 2024, eq. 118; Kinon,
    Betsch & Schneider 2023, eq. 66), 135.6 1/s for the papers' cone with ω_p = 10 1/s and
    θ0 = π/3.

    Parameters
    ----------
    mgl : float
        Product of mass, gravitational acceleration and tip-to-centre distance [N m], ≥ 0.
    J1, J3 : float
        Transverse and axial principal inertias *about the tip* [kg m²], positive.
    omega_p : float
        Precession rate [1/s], positive.
    theta0 : float
        Nutation angle between the axis and e_3 [rad], in [0, π].

    Raises
    ------
    ValueError
        Naming the offending argument.
    """
    in_range("mgl", mgl, 0.0, np.inf)
    positive(J1=J1, J3=J3, omega_p=omega_p)
    in_range("theta0", theta0, 0.0, np.pi)
    return mgl / (J3 * omega_p) + (J1 - J3) / J3 * omega_p * np.cos(theta0)
