"""The spatial rigid slider–crank (IFToMM benchmark) of paper 002, Sect. 4.3, in three formulations.

Holzinger, Arnold & Gerstmayr (2024), Example 4.3, Fig. 14; Table 8 is lost and the data follow
the spec's reconstruction (§3.3) of the IFToMM problem as set up in the authors' Exudyn test model:
crank AB (revolute joint A about the global x axis), connecting rod BC (spherical joint B,
universal joint C), slider (prismatic joint D along the global x axis), gravity along −z, one
degree of freedom, no friction.

The mechanism is described once, coordinate-free, by :meth:`SliderCrank.description` (a
:class:`mbslib.model.Model`: three rigid bodies, crank 0, rod 1, slider 2, four joints and
gravity), and :meth:`SliderCrank.system` is what the absolute coordinates make of it: the generic
rigid multibody kernels of :mod:`mbslib.systems.multibody`, where every body carries ``[x, ρ]`` in
one of the formulations ``RV`` (rotation vector, Lie group, velocity ``[u, ω]``), ``RXYZ``
(Tait–Bryan xyz, classical formulation 2) or ``EP`` (Euler parameters and the normalisation
constraints). :func:`mbslib.formulations.lie_group.absolute_model` maps the bodies, gravity and
the four joints (the prismatic joint D to the ground as the rows of
:meth:`mbslib.systems.multibody.System.prismatic`). The 17 joint equations are

=====  ==============================================================
rows   equation
=====  ==============================================================
0–2    revolute A, position: ``x₁ + R₁ a₁ − A``
3–4    revolute A, axis: ``e_zᵀ R₁ e_x``, ``−e_yᵀ R₁ e_x``
5–7    spherical B: ``x₁ + R₁ b₁ − x₂ − R₂ b₂``
8–10   universal C, position: ``x₂ + R₂ c₂ − x₃`` (slider centre at C)
11     universal C, cross: ``(R₃ e_y)ᵀ R₂ u₂`` (slider y axis ⊥ rod axis ``u₂``)
12–13  prismatic D: ``e_zᵀ x₃``, ``−e_yᵀ x₃``
14–16  prismatic D, no rotation: ``R₃[1,2]``, ``R₃[2,0]``, ``R₃[0,1]``
=====  ==============================================================

(bodies numbered 1–3 here, 0–2 in the code) plus ``pᵢᵀpᵢ − 1`` (EP). ``u₂`` is the rod
direction that is global x in the initial configuration, so the cross of the universal joint
blocks the relative rotation about global z (spec §3.3, Exudyn ``GenericJoint`` mask
``[1,1,1,0,0,1]``). The other assignment of the cross (slider x ⊥ rod's initial y) jams: it
admits no configuration once ``s > 0.283`` m.

:meth:`SliderCrank.model` is the multibody model of :mod:`mbslib.systems.lie_group_mbs` that any
compiled integrator runs (:func:`mbslib.studies.slider_crank.simulate` runs the generalized-α);
:func:`outputs` evaluates the slider position, crank angle, energy and joint residual of a state.
A minimal-coordinate reference (energy integral in the crank angle, solved with ``scipy``)
serves as the exact solution.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mbslib.formulations import lie_group as absolute
from mbslib.model import Gravity, Joint, Model, RigidBody
from mbslib.systems import lie_group_mbs as lg
from mbslib.systems import multibody as mb

#: Formulation codes (those of :mod:`mbslib.systems.multibody`).
RV, RXYZ, EP = mb.RV, mb.RXYZ, mb.EP
FORMULATIONS = mb.FORMULATIONS
_NAMES = {code: name for name, code in FORMULATIONS.items()}
#: Joint equations (rows of the module table); the EP normalisations follow them.
N_JOINT = 17
#: Bodies of :meth:`SliderCrank.system`.
CRANK_BODY, ROD_BODY, SLIDER_BODY = 0, 1, 2

# ---------------------------------------------------------------------------------------------
# Parameters
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SliderCrank:
    """Data of the IFToMM spatial slider–crank (spec §3.3, reconstructed Table 8).

    Lengths in m, masses in kg, inertias (principal, body frame, about the centre of mass) in
    kg m², angular velocity in rad/s. The rod's body x axis points from B to C (axial inertia
    ``rod_inertia[0]``).
    """

    pivot: tuple = (0.0, 0.1, 0.12)
    crank_length: float = 0.08
    rod_length: float = 0.3
    crank_mass: float = 0.12
    rod_mass: float = 0.5
    slider_mass: float = 2.0
    crank_inertia: tuple = (1e-4, 1e-4, 1e-5)
    rod_inertia: tuple = (4e-4, 4e-3, 4e-3)
    slider_inertia: tuple = (1e-4, 1e-4, 1e-4)
    gravity: float = 9.81
    omega0: float = 6.0

    def __post_init__(self):
        for name in ("crank_length", "rod_length", "crank_mass", "rod_mass", "slider_mass"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)!r}")

    # -- minimal-coordinate kinematics ------------------------------------------------------

    def _rod_frame0(self):
        B = np.asarray(self.pivot) + [0.0, 0.0, self.crank_length]
        C = np.array([self.slider_position(0.0), 0.0, 0.0])
        x = (C - B) / self.rod_length
        z = B - (B @ x) * x
        z /= np.linalg.norm(z)
        return np.column_stack([x, np.cross(z, x), z])

    def crank_point(self, theta):
        """Point B for crank angle θ (rotation about global x, θ = 0: crank along +z)."""
        L = self.crank_length
        return np.asarray(self.pivot) + np.array([0.0, -L * np.sin(theta), L * np.cos(theta)])

    def slider_position(self, theta):
        """Slider coordinate s(θ) (positive-x assembly branch)."""
        B = self.crank_point(theta)
        return B[0] + np.sqrt(self.rod_length**2 - B[1] ** 2 - B[2] ** 2)

    def configuration(self, theta):
        """Centres of mass ``x`` (3, 3) and rotations ``R`` (3, 3, 3) of crank, rod and slider."""
        th = float(theta)
        c, s = np.cos(th), np.sin(th)
        R1 = np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])
        B = self.crank_point(th)
        C = np.array([self.slider_position(th), 0.0, 0.0])
        x1 = np.asarray(self.pivot) + R1 @ [0.0, 0.0, 0.5 * self.crank_length]
        # rod: direction d = (C − B)/L and the universal cross w = R₂ u₂ ⊥ e_y with w·d = const
        R0 = self._rod_frame0()
        d0, w0 = R0[:, 0], np.array([1.0, 0.0, 0.0])
        c0 = d0 @ w0
        d = (C - B) / self.rod_length
        r = np.hypot(d[0], d[2])
        gam = np.arctan2(d[2], d[0]) + np.arccos(c0 / r)
        w = np.array([np.cos(gam), 0.0, np.sin(gam)])

        def frame(a, b):
            e2 = b - (b @ a) * a
            e2 /= np.linalg.norm(e2)
            return np.column_stack([a, e2, np.cross(a, e2)])

        R2 = frame(d, w) @ frame(d0, w0).T @ R0
        return np.array([x1, 0.5 * (B + C), C]), np.array([R1, R2, np.eye(3)])

    def velocity_map(self, theta, step=1e-3):
        """Velocities per unit θ̇: centre-of-mass and body angular velocities, (3, 3) each.

        Sixth-order central differences of :meth:`configuration` (truncation error below 1e-15
        for these smooth functions, round-off about 1e-13).
        """
        w6 = ((1, 3.0 / 4.0), (2, -3.0 / 20.0), (3, 1.0 / 60.0))
        x, R = self.configuration(theta)
        dx = np.zeros_like(x)
        dR = np.zeros_like(R)
        for k, c in w6:
            xp, Rp = self.configuration(theta + k * step)
            xm, Rm = self.configuration(theta - k * step)
            dx += c * (xp - xm) / step
            dR += c * (Rp - Rm) / step
        om = np.array([_vee(R[i].T @ dR[i]) for i in range(3)])
        return dx, om

    def masses(self):
        return np.array([self.crank_mass, self.rod_mass, self.slider_mass])

    def inertias(self):
        return np.array([self.crank_inertia, self.rod_inertia, self.slider_inertia], dtype=float)

    def generalized_mass(self, theta):
        """``M(θ)`` with kinetic energy ``½ M(θ) θ̇²``."""
        dx, om = self.velocity_map(theta)
        return float(self.masses() @ np.sum(dx * dx, axis=1) + np.sum(self.inertias() * om * om))

    def potential(self, theta):
        x, _ = self.configuration(theta)
        return float(self.gravity * self.masses() @ x[:, 2])

    def energy(self):
        """Total energy of the initial state."""
        return 0.5 * self.generalized_mass(0.0) * self.omega0**2 + self.potential(0.0)

    def _series(self, n=128):
        """Fourier coefficients of the 2π-periodic ``M(θ)`` and ``V(θ)`` (n samples, cached)."""
        cache = self.__dict__.get("_series_cache")
        if cache is None or cache[0] != n:
            th = 2 * np.pi * np.arange(n) / n
            samples = [[self.generalized_mass(a), self.potential(a)] for a in th]
            coef = np.fft.rfft(samples, axis=0) / n
            coef[1:] *= 2.0
            if n % 2 == 0:
                coef[-1] /= 2.0
            object.__setattr__(self, "_series_cache", (n, coef))
            cache = self.__dict__["_series_cache"]
        return cache[1]

    def mass_and_potential(self, theta, n=128):
        """``M(θ)`` and ``V(θ)`` from their trigonometric interpolants (spectrally accurate)."""
        coef = self._series(n)
        e = np.exp(1j * np.arange(coef.shape[0]) * theta)
        return (e @ coef).real

    def reference(self, t_eval, rtol=1e-13):
        """Minimal-coordinate solution ``θ(t), s(t)`` from the energy integral.

        ``θ̇ = sqrt(2 (E − V(θ)) / M(θ))`` (θ̇ > 0: θ = 0 is the top of the potential and the
        crank starts at 6 rad/s), integrated with DOP853; ``M`` and ``V`` are evaluated through
        their trigonometric interpolants.
        """
        from scipy.integrate import solve_ivp

        M0, V0 = self.mass_and_potential(0.0)
        E = 0.5 * M0 * self.omega0**2 + V0
        t_eval = np.atleast_1d(np.asarray(t_eval, dtype=float))

        def rhs(t, y):
            M, V = self.mass_and_potential(y[0])
            return [np.sqrt(2.0 * (E - V) / M)]

        sol = solve_ivp(rhs, (0.0, float(t_eval[-1])), [0.0], method="DOP853", t_eval=t_eval,
                        rtol=rtol, atol=rtol * 1e-2)
        theta = sol.y[0]
        return theta, np.array([self.slider_position(th) for th in theta])

    # -- absolute coordinates ---------------------------------------------------------------

    def description(self) -> Model:
        """The mechanism, coordinate-free: crank (0), rod (1) and slider (2) at θ = 0, θ̇ = ω₀
        (:meth:`configuration`, :meth:`velocity_map`), the revolute joint A about the global x
        axis, the spherical joint B, the universal joint C, the prismatic joint D along the global
        x axis, and gravity."""
        x, R = self.configuration(0.0)
        dx, om = self.velocity_map(0.0)
        half_crank, half_rod = 0.5 * self.crank_length, 0.5 * self.rod_length
        ex, ey, _ = np.eye(3)
        origin = np.zeros(3)
        bodies = tuple(RigidBody(name, m, J, x[i], R[i], self.omega0 * dx[i], self.omega0 * om[i])
                       for i, (name, m, J) in enumerate(zip(("crank", "rod", "slider"), self.masses(),
                                                            self.inertias(), strict=True)))
        u2 = R[ROD_BODY].T @ ex  # rod: the direction that is global x at θ = 0
        joints = (
            # A: the crank's lower end (body frame [0, 0, −L/2]) on the pivot, about the global x axis
            Joint("revolute", None, CRANK_BODY, self.pivot, [0.0, 0.0, -half_crank], ex, ex),
            # B: the rod's start (body x from B to C) at the crank's upper end
            Joint("spherical", ROD_BODY, CRANK_BODY, [-half_rod, 0.0, 0.0], [0.0, 0.0, half_crank]),
            # C: the slider's centre at the rod's end; the slider's y axis ⊥ u₂
            Joint("universal", SLIDER_BODY, ROD_BODY, origin, [half_rod, 0.0, 0.0], ey, u2),
            # D: the slider's centre on the global x axis, no rotation
            Joint("prismatic", None, SLIDER_BODY, origin, origin, ex),
        )
        return Model(bodies, joints, Gravity((0.0, 0.0, -self.gravity)))

    def system(self) -> mb.System:
        """:meth:`description` in absolute coordinates: bodies crank (0), rod (1), slider (2) and
        the 17 joint rows of the module table, in its order."""
        return mb.System.from_params(absolute.absolute_model(self.description(), "RV").P)

    def model(self, form) -> tuple[lg.CompiledModel, np.ndarray]:
        """The compiled multibody model in formulation ``form`` ("RV", "Rxyz", "EP" or its code)
        and its initial state ``x0 = [q0; v0]``."""
        form = formulation_code(form)
        return lg.CompiledModel(lg.MB_RV + form, self.system().params()), self.initial_state(form)

    def initial_state(self, form) -> np.ndarray:
        """Consistent ``[q0; v0]`` in formulation ``form`` (name or code; θ = 0, θ̇ = ω₀)."""
        return absolute.initial_state(self.description(), _NAMES[formulation_code(form)])


def _vee(A):
    return 0.5 * np.array([A[2, 1] - A[1, 2], A[0, 2] - A[2, 0], A[1, 0] - A[0, 1]])


def formulation_code(form) -> int:
    """Code of a formulation given by name ("RV", "Rxyz", "EP") or code (0, 1, 2)."""
    code = FORMULATIONS.get(form, form) if isinstance(form, str) else form
    if code not in (RV, RXYZ, EP):
        raise ValueError(
            f"unknown formulation {form!r}: use one of {list(FORMULATIONS)} or 0, 1, 2")
    return int(code)


# ---------------------------------------------------------------------------------------------
# Outputs
# ---------------------------------------------------------------------------------------------


def outputs(form: int, q, v, P) -> np.ndarray:
    """``[s, θ mod 2π, energy, |Φ_joints|]`` of the state ``(q, v)`` of :meth:`SliderCrank.system`.

    Slider position ``s`` (global x of the slider), crank angle ``atan2(R₁[2,1], R₁[1,1])``,
    kinetic plus gravitational energy, and the norm of the 17 joint equations (the EP
    normalisations excluded).
    """
    q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
    R1 = mb.body_rotation(form, q, CRANK_BODY)
    phi = mb.constraint(form, q, P)[:N_JOINT]
    return np.array([mb.body_position(form, q, SLIDER_BODY)[0], np.arctan2(R1[2, 1], R1[1, 1]),
                     mb.energy(form, q, v, P), np.sqrt(np.sum(phi * phi))])
