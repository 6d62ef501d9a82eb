"""The rotating rigid body in director form, with and without the non-twisting constraint.

Gebhardt & Romero, *The rotating rigid body model based on a non-twisting frame*,
J. Nonlinear Sci. (2020). The body has a fixed point; its configuration is the stack of the
three directors ``q = (d1, d2, d3)`` in R^9 (Sect. 3.5), subject to six holonomic
orthonormality constraints ``h(q) = 0``. The *non-twisting* body adds the nonholonomic
constraint ``w · d3 = 0`` (zero spin about d3), written in director velocities as
``g = (1 - a) ḋ1·d2 - a ḋ2·d1 = 0`` (eq. 80).

Conventions:

- ``q`` has shape (9,), ``q[0:3] = d1``, ``q[3:6] = d2``, ``q[6:9] = d3``; the rotation is
  ``Λ = [d1 d2 d3]`` (directors as columns), ``Λ = d_i ⊗ D_i`` with ``D_i = E_i``.
- The convected inertia ``J`` and the Euler coefficients ``𝒥`` are related by
  ``J = tr(𝒥) I - 𝒥`` and ``𝒥 = ½ tr(J) I - J``; the mass matrix is ``M = 𝒥 ⊗ I3`` (eq. 88).
- A state for the energy–momentum scheme is ``x = (q, q̇)`` of shape (18,).
- Material follower moment of Cases 2–3 (eqs. 115, 118): ``m = -s f(t) (α d1 + β d2)``, with
  the triangular time function ``f`` of eq. (116), stretched to a duration ``T``; its
  director forces are ``f_i = ½ m × d_i`` (eq. 68).

The kinematics of the triad, independent of the body (splitting ``q``, the maps to and from
``Λ``, rigid velocities, the constraints ``h`` and ``g``, angular momenta), are
:mod:`mbslib.formulations.director_triad`; the record :class:`NontwistingBody` adds what depends
on the body's inertia and load: the mass matrix, the director forces and their Jacobian, the
momenta and the kinetic energy, as its methods.

The exact reduced dynamics used as reference (derived from eqs. 77–79) is
``J⊥ Ẇ⊥ = M⊥(t)``, ``Λ̇ = Λ Ŵ`` with ``W = (W1, W2, 0)``: the material angular momentum
evolves independently of the rotation.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
from scipy.integrate import solve_ivp

from mbslib.formulations.director_triad import directors
from mbslib.loads import triangular_pulse
from mbslib.rotations import exp_so3, hat
from mbslib.validation import in_range, inertia, positive, vector

#: Convected inertia of the paper's numerical examples, kg m² (eq. 111).
J_PAPER = np.array([[3.0, -1.0 / 7.0, 0.0], [-1.0 / 7.0, 4.0, 0.0], [0.0, 0.0, 5.0]])

I3 = np.eye(3)

#: [a]× = Σ_l a_l [E_l]×: row l holds [E_l]× flattened, so ``a @ _HAT_BASIS`` is [a]× flattened
#: (for the rows d_i of a (3, 3) array at once).
_HAT_BASIS = np.array([hat(e).ravel() for e in I3])
_DIAGONAL = np.arange(3)


@dataclass(frozen=True, eq=False)
class NontwistingBody:
    """Parameters of the (non-twisting) rigid body in director form; validated on construction.

    The record is immutable: build it with :func:`make_body` or the constructor, derive variants
    with :func:`dataclasses.replace`; both run the validation of ``__post_init__``, so an invalid
    body cannot exist. ``J`` is stored as a read-only float array.

    Attributes
    ----------
    J : ndarray, shape (3, 3)
        Convected inertia tensor, kg m² (eq. 111 for the paper's examples); symmetric positive
        definite with positive-definite Euler coefficients (triangle inequalities).
    alpha, beta : float
        Amplitudes of the material moment ``m = -s f(t)(α d1 + β d2)``, N m (eqs. 115, 118).
    load_scale : float
        The factor ``s`` (1 = the printed loads), non-negative.
    duration : float
        Duration ``T`` of the triangular time function (1 s in eq. 116), positive.
    a : float
        Weight in the nonholonomic constraint (80), in [0, 1]; it does not change the motion.

    Raises
    ------
    ValueError
        Naming the offending parameter.
    """

    J: np.ndarray = field(default_factory=lambda: J_PAPER.copy())
    alpha: float = 0.0
    beta: float = 0.0
    load_scale: float = 1.0
    duration: float = 1.0
    a: float = 0.5

    def __post_init__(self):
        J = inertia("J", self.J).copy()
        if np.linalg.eigvalsh(euler_coefficients(J))[0] <= 1e-12 * np.trace(J):
            raise ValueError(f"J = {J.tolist()} gives Euler coefficients that are not positive definite: a rigid "
                             "body's are non-negative (triangle inequalities), and the director formulation needs "
                             "them positive (a flat body has a zero one)")
        J.flags.writeable = False
        values = {}
        for name in ("alpha", "beta", "load_scale", "duration", "a"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise ValueError(f"{name} must be a real number, got {value!r}")
            value = float(value)
            if not np.isfinite(value):
                raise ValueError(f"{name} must be finite, got {value!r}")
            values[name] = value
        if values["load_scale"] < 0:
            raise ValueError(f"load_scale must be non-negative, got {self.load_scale!r}")
        positive(duration=values["duration"])
        in_range("a", values["a"], 0.0, 1.0)
        object.__setattr__(self, "J", J)
        for name, value in values.items():
            object.__setattr__(self, name, value)

    @property
    def euler(self) -> np.ndarray:
        """Euler inertia coefficients 𝒥 = ½ tr(J) I − J, shape (3, 3)."""
        return euler_coefficients(self.J)

    @property
    def M(self) -> np.ndarray:
        """Constant director mass matrix M = 𝒥 ⊗ I3, shape (9, 9) (eq. 88); read-only."""
        return _mass_matrix(self.J.tobytes())

    @property
    def loaded(self) -> bool:
        return self.load_scale * (abs(self.alpha) + abs(self.beta)) > 0.0

    # --- load (eqs. 68, 84, 115, 116, 118) and momenta (eq. 65) ---------------------------------

    def _load_factor(self, t: float) -> float:
        """s f(t) for a scalar time (eq. 116 stretched to the duration T)."""
        return self.load_scale * ramp(t, self.duration)

    def material_load(self, t) -> np.ndarray:
        """Body-frame moment M⊥(t) = −s f(t) (α, β, 0), shape (3,)."""
        return -self._load_factor(float(t)) * np.array([self.alpha, self.beta, 0.0])

    def load_moment(self, q, t) -> np.ndarray:
        """Spatial follower moment m = −s f(t)(α d1 + β d2), shape (3,) (eqs. 115, 118)."""
        d1, d2, _ = directors(q)
        return -self._load_factor(float(t)) * (self.alpha * d1 + self.beta * d2)

    def director_forces(self, q, t) -> np.ndarray:
        """Generalized director forces Q = (½ m × d1, ½ m × d2, ½ m × d3), shape (9,) (eqs. 68, 84)."""
        m = self.load_moment(q, t)
        D = np.asarray(q, dtype=float).reshape(3, 3)  # rows d_i
        return 0.5 * (D @ hat(m).T).ravel()  # row i: m × d_i

    def director_forces_jacobian(self, q, t) -> np.ndarray:
        """∂Q/∂q, shape (9, 9): ∂f_i/∂d_j = ½(−[d_i]× ∂m/∂d_j + δ_ij [m]×), ∂m/∂d1 = −sfα I,
        ∂m/∂d2 = −sfβ I."""
        f = self._load_factor(float(t))
        D = np.asarray(q, dtype=float).reshape(3, 3)  # rows d_i
        d_hats = (D @ _HAT_BASIS).reshape(9, 3)  # rows 3i..3i+2: [d_i]×
        K = np.zeros((9, 9))
        K[:, 0:3] = 0.5 * f * self.alpha * d_hats
        K[:, 3:6] = 0.5 * f * self.beta * d_hats
        blocks = K.reshape(3, 3, 3, 3)  # blocks[i, :, j, :] = ∂f_i/∂d_j
        blocks[_DIAGONAL, :, _DIAGONAL, :] += 0.5 * hat(-f * (self.alpha * D[0] + self.beta * D[1]))  # ½[m]×
        return K

    def director_momenta(self, qdot) -> np.ndarray:
        """p = M q̇ = (π¹, π², π³), shape (..., 9) (eq. 65)."""
        return np.asarray(qdot) @ self.M.T

    def kinetic_energy(self, qdot) -> np.ndarray:
        """K = ½ q̇ · M q̇, shape (...)."""
        qdot = np.asarray(qdot)
        return 0.5 * np.sum(qdot * (qdot @ self.M.T), axis=-1)


def make_body(J=J_PAPER, alpha=0.0, beta=0.0, load_scale=1.0, duration=1.0, a=0.5) -> NontwistingBody:
    """Validated :class:`NontwistingBody` (the paper's inertia by default).

    Raises ValueError naming a bad parameter (the checks live in ``__post_init__``).
    """
    return NontwistingBody(J, alpha, beta, load_scale, duration, a)


@lru_cache(maxsize=64)
def _mass_matrix(J_bytes: bytes) -> np.ndarray:
    M = np.kron(euler_coefficients(np.frombuffer(J_bytes).reshape(3, 3)), I3)
    M.flags.writeable = False
    return M


def euler_coefficients(J) -> np.ndarray:
    """Euler inertia coefficients 𝒥 = ½ tr(J) I − J (inverse of J = tr(𝒥) I − 𝒥), shape (3, 3)."""
    J = np.asarray(J, dtype=float)
    return 0.5 * np.trace(J) * I3 - J


def inertia_from_euler(E) -> np.ndarray:
    """Convected inertia J = tr(𝒥) I − 𝒥 from the Euler coefficients, shape (3, 3)."""
    E = np.asarray(E, dtype=float)
    return np.trace(E) * I3 - E


# --- time function of the load (eq. 116) -----------------------------------------------------


def ramp(t, duration: float = 1.0):
    """Triangular time function f(t) of eq. (116) stretched to ``duration``: peak 1 at T/2, 0 for t ≥ T.

    :func:`mbslib.loads.triangular_pulse` with ``peak = 1``, ``t_peak = T/2``, ``t_end = T``.
    """
    return triangular_pulse(t, 1.0, 0.5 * duration, duration)


def ramp_integral(t, duration: float = 1.0):
    """F(t) = ∫₀ᵗ f: T s² for s < ½, T(2s − s² − ½) for ½ ≤ s < 1, T/2 afterwards (s = t/T)."""
    s = np.clip(np.asarray(t, dtype=float) / duration, 0.0, None)
    return duration * np.where(s < 0.5, s**2, np.where(s < 1.0, 2.0 * s - s**2 - 0.5, 0.5))


def ramp_double_integral(t, duration: float = 1.0):
    """∫₀ᵗ F, with ∫₀ᵀ F = T²/4."""
    s = np.clip(np.asarray(t, dtype=float) / duration, 0.0, None)
    rising = s**3 / 3.0
    falling = 1.0 / 12.0 + s**2 - s**3 / 3.0 - 0.5 * s
    after = 0.25 + 0.5 * (s - 1.0)
    return duration**2 * np.where(s < 0.5, rising, np.where(s < 1.0, falling, after))


# --- exact reduced solutions (J⊥ Ẇ⊥ = M⊥(t), Λ̇ = Λ Ŵ) -----------------------------------------


def _split_inertia(body: NontwistingBody) -> np.ndarray:
    J = np.asarray(body.J)
    if abs(J[0, 2]) > 1e-14 or abs(J[1, 2]) > 1e-14:
        raise ValueError("J must split as J⊥ + J∥ D3⊗D3 (J13 = J23 = 0) for the reduced reference")
    return J[:2, :2]


def body_angular_velocity(body: NontwistingBody, W0, t) -> np.ndarray:
    """Exact W(t) = (J⊥⁻¹(J⊥W0⊥ − s F(t)(α, β)), 0), shape (..., 3) for t of shape (...)."""
    Jp = _split_inertia(body)
    W0 = vector("W0", W0, (3,))
    F = body.load_scale * ramp_integral(t, body.duration)
    Pi = Jp @ W0[:2] - np.multiply.outer(F, [body.alpha, body.beta])
    W = np.linalg.solve(Jp, Pi[..., None])[..., 0] if Pi.ndim > 1 else np.linalg.solve(Jp, Pi)
    return np.concatenate([W, np.zeros(W.shape[:-1] + (1,))], axis=-1)


def exact_rotation(body: NontwistingBody, W0, t, R0=None, rtol=1e-13, atol=1e-14) -> np.ndarray:
    """Exact Λ(t) of the non-twisting body, shape (N, 3, 3) for t of shape (N,).

    During the load (t < T) Λ̇ = Λ Ŵ(t) is integrated with DOP853, split at the kink t = T/2
    (skipped when the body-frame axis of W is fixed, where Λ = R0 exp(Φ(t) n̂) in closed form);
    afterwards Λ(t) = Λ(T) exp((t − T) Ŵ(T)).
    """
    t = np.atleast_1d(np.asarray(t, dtype=float))
    R0 = I3 if R0 is None else np.asarray(R0, dtype=float)
    W0 = vector("W0", W0, (3,))
    T = body.duration
    out = np.empty((t.size, 3, 3))
    Jp = _split_inertia(body)
    Pi0 = Jp @ W0[:2]
    load = body.load_scale * np.array([body.alpha, body.beta])
    fixed_axis = not body.loaded or abs(Pi0[0] * load[1] - Pi0[1] * load[0]) <= 1e-14 * (
        np.linalg.norm(Pi0) * np.linalg.norm(load)
    )
    if fixed_axis:
        # W(t) = c(t) u with a fixed body-frame direction u: Λ = R0 exp(∫c dt û).
        u = W0 if np.linalg.norm(W0) > 0 else np.append(-np.linalg.solve(Jp, load), 0.0)
        u = u / np.linalg.norm(u)
        c0 = W0 @ u
        v = np.linalg.solve(Jp, load) @ u[:2]
        phi = c0 * t - v * ramp_double_integral(t, T)
        for k in range(t.size):
            out[k] = R0 @ exp_so3(phi[k] * u)
        return out

    def rhs(s, y):
        W = body_angular_velocity(body, W0, s)
        return (y.reshape(3, 3) @ hat(W)).ravel()

    R_half = solve_ivp(rhs, (0.0, T / 2), R0.ravel(), method="DOP853", rtol=rtol, atol=atol,
                       dense_output=True)
    R_end = solve_ivp(rhs, (T / 2, T), R_half.y[:, -1], method="DOP853", rtol=rtol, atol=atol,
                      dense_output=True)
    RT = R_end.y[:, -1].reshape(3, 3)
    WT = body_angular_velocity(body, W0, T)
    for k, s in enumerate(t):
        if s < T / 2:
            out[k] = R_half.sol(s).reshape(3, 3)
        elif s < T:
            out[k] = R_end.sol(s).reshape(3, 3)
        else:
            out[k] = RT @ exp_so3((s - T) * WT)
    return out


def post_load_invariants(body: NontwistingBody, W0) -> tuple[np.ndarray, float]:
    """Exact (Π¹, Π²) and K after the load: Π = J⊥W0⊥ − s (T/2)(α, β), K = ½ Π·J⊥⁻¹Π."""
    Jp = _split_inertia(body)
    W0 = vector("W0", W0, (3,))
    Pi = Jp @ W0[:2] - body.load_scale * 0.5 * body.duration * np.array([body.alpha, body.beta])
    return Pi, float(0.5 * Pi @ np.linalg.solve(Jp, Pi))
