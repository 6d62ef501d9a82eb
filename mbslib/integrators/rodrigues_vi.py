"""Explicit integrators on SE(3)^n in rescaled Rodrigues parameters (Baker & Gonzalez 2021).

The attitude of each spherical body is stored as a rescaled Rodrigues vector
``alpha = 2 tan(|theta|/2) theta/|theta|`` (paper eq. 3); ``R(alpha)`` is the Cayley map (eq. 4)
and rotations compose algebraically with eq. (5). The maps implemented here are

* :func:`step_23` — the explicit variational map (23): the exact closed-form solution of the
  discrete Euler–Lagrange equations of the trapezoidal discrete Lagrangian (6), in spatial
  angular velocity;
* :func:`step_21` — the same map in body angular velocity, eq. (21) (a cross-check);
* :func:`step_25` — its O(h^3)-per-step truncation "à la explicit Newmark", eq. (25);
* :func:`step_27` — Campello's explicit phi = 1 scheme, eq. (27), first order;
* :func:`step_27_exact` — (27) with the untruncated increment (30) (a cross-check, not in the
  paper's figures).

All maps are vectorised over the n bodies. A *system* is a :class:`SphericalBodies`: masses
``m`` and scalar inertias ``J`` (scalars or arrays of shape (n,)) and a method
``force_torque(x, alpha) -> (F, T)`` that returns the forces ``F = -dU/dx`` and the **spatial**
torques ``T = R M`` (minus the gradient of U with respect to a left perturbation
``R -> exp(S(zeta)) R``), both of shape (n, 3).

The state is an :class:`RRState`; it carries the force and torque of its own configuration so
that every map costs one force evaluation per step. :func:`run` returns a
:class:`~mbslib.trajectory.Trajectory`.

The formulas of maps (23), (25), (27), (27*) exist once, as compiled pieces of a step on all
bodies: :func:`advance` (the lines before the new forces: (23a, b), (27c, d, a, b)) and
:func:`complete` (those after them: (23c, d)), built from :func:`verlet_drift`, :func:`verlet_kick`,
:func:`euler_kick_drift` and :func:`rotate`. The Python steps here call them around a Python
``force_torque``; the torus's compiled time loop (:mod:`mbslib.studies.binder_torus`) calls them
around its compiled forces. Map (21) shares the kicks and the increment factor.

The rotation maps of the rescaled Rodrigues parameters (eqs. 3–5: :func:`~mbslib.rodrigues.rr_matrix`,
:func:`~mbslib.rodrigues.rr_compose`, …) are a parametrization of rotations, not part of a scheme:
:mod:`mbslib.rodrigues`.
"""

from __future__ import annotations

import time
from typing import NamedTuple, Protocol, runtime_checkable

import numba
import numpy as np
from numba import types
from numba.extending import overload

from mbslib.rodrigues import compose, rr_compose, rr_matrix
from mbslib.simulate import time_grid
from mbslib.trajectory import IntegrationError, Trajectory, Work
from mbslib.validation import positive

__all__ = [
    "SphericalBodies",
    "RRState",
    "increment_exact",
    "increment_truncated",
    "initial_state",
    "step_21",
    "step_23",
    "step_25",
    "step_27",
    "step_27_exact",
    "STEPS",
    "SCHEMES",
    "CAYLEY_INVALID",
    "advance",
    "complete",
    "verlet_drift",
    "verlet_kick",
    "euler_kick_drift",
    "rotate",
    "increment_factor",
    "run",
    "states_of",
    "pack",
    "unpack",
    "as_flat_step",
    "del_residual",
]


# ---------------------------------------------------------------------------------------------
# The maps' formulas, compiled once: the Python steps below and the torus's compiled loop
# (mbslib.studies.binder_torus) call the same functions. Arrays are (n, 3) rows of the n bodies;
# m and J are one value per body, shape (n,), or one float for all.
# ---------------------------------------------------------------------------------------------

#: The maps of :func:`advance` and :func:`complete` by the paper's equation number.
SCHEMES = {"23": 0, "25": 1, "27": 2, "27*": 3}
#: Failure reason of a run: eq. (16) has no solution (the step is not taken).
CAYLEY_INVALID = "eq. (16) invalid (h|p| >= 1)"


@numba.njit(cache=True, inline="always")
def increment_factor(p0, p1, p2, h, exact):
    """``c`` of the attitude increment ``Δα_k = c p``: ``c = 2h/(1 + sqrt(1 − h²|p|²))`` (eqs. 16,
    23b, 30) if ``exact``, else ``c = h`` (25b, 27b); ``−1`` where ``h|p| ≥ 1`` (16 has no real root)."""
    if not exact:
        return h
    s = h * h * (p0 * p0 + p1 * p1 + p2 * p2)
    if s >= 1.0:
        return -1.0
    return 2.0 * h / (1.0 + np.sqrt(1.0 - s))


@numba.njit(cache=True)
def _increment_factors(p, h, exact, c):
    """:func:`increment_factor` of every row of ``p`` into ``c``; the first row without a root, or −1."""
    for k in range(p.shape[0]):
        c[k] = increment_factor(p[k, 0], p[k, 1], p[k, 2], h, exact)
        if c[k] < 0.0:
            return k
    return -1


def _of_body(a, k):
    """``a[k]`` for one value per body, ``a`` for one value for all (compiled code only)."""


@overload(_of_body, inline="always")
def _of_body_impl(a, k):
    if isinstance(a, types.Float):
        return lambda a, k: a
    return lambda a, k: a[k]


@numba.njit(cache=True, inline="always")
def verlet_drift(x, v, w, F, T, m, J, h):
    """(23a) ``x_{k+1} = x_k + h v_k + h²/(2m) F_k`` and ``p_k = Ω_k + h/(2J) R_k M_k`` of (23b) into
    ``w``, in place; in the body frame, (21a) and ``q = ω_k + h/(2J) M_k`` of (21b)."""
    for k in range(x.shape[0]):
        for d in range(3):
            x[k, d] += h * v[k, d] + h * h / (2.0 * _of_body(m, k)) * F[k, d]
            w[k, d] += h / (2.0 * _of_body(J, k)) * T[k, d]


@numba.njit(cache=True, inline="always")
def verlet_kick(v, w, F0, F1, T1, m, J, h):
    """(23c) ``v_{k+1} = v_k + h/(2m) (F_k + F_{k+1})`` and (23d) ``Ω_{k+1} = p_k + h/(2J) R_{k+1} M_{k+1}``
    (``w`` holds ``p_k``), in place; in the body frame (21c, d)."""
    for k in range(v.shape[0]):
        for d in range(3):
            v[k, d] += h / (2.0 * _of_body(m, k)) * (F0[k, d] + F1[k, d])
            w[k, d] += h / (2.0 * _of_body(J, k)) * T1[k, d]


@numba.njit(cache=True, inline="always")
def euler_kick_drift(x, v, w, F, T, m, J, h):
    """(27c) ``v_{k+1} = v_k + h/m F_k``, (27d) ``Ω_{k+1} = Ω_k + h/J R_k M_k`` and (27a)
    ``x_{k+1} = x_k + h v_{k+1}``, in place."""
    for k in range(x.shape[0]):
        for d in range(3):
            v[k, d] += h / _of_body(m, k) * F[k, d]
            w[k, d] += h / _of_body(J, k) * T[k, d]
            x[k, d] += h * v[k, d]


@numba.njit(cache=True, inline="always")
def rotate(alpha, p, h, exact):
    """(23b)/(25b)/(27b): ``α_{k+1} = α_k ⊕ Δα_k`` (eq. 5), ``Δα_k = c p`` (:func:`increment_factor`),
    in place. Returns the first body whose eq. (16) has no root (its attitude and those after it
    not updated), or −1."""
    for k in range(alpha.shape[0]):
        c = increment_factor(p[k, 0], p[k, 1], p[k, 2], h, exact)
        if c < 0.0:
            return k
        alpha[k, 0], alpha[k, 1], alpha[k, 2] = compose(alpha[k, 0], alpha[k, 1], alpha[k, 2],
                                                        c * p[k, 0], c * p[k, 1], c * p[k, 2])
    return -1


@numba.njit(cache=True, inline="always")
def advance(x, v, alpha, w, F, T, m, J, h, scheme):
    """The part of one step of map ``scheme`` (:data:`SCHEMES`) before the new forces, in place:
    (23a, b) for maps (23), (25) (``w`` then holds ``p_k``); (27c, d, a, b) for (27), (27*).
    Returns the first body whose eq. (16) has no root, or −1 (:func:`rotate`)."""
    if scheme <= 1:
        verlet_drift(x, v, w, F, T, m, J, h)  # (23a), p_k
    else:
        euler_kick_drift(x, v, w, F, T, m, J, h)  # (27c, d, a)
    return rotate(alpha, w, h, scheme == 0 or scheme == 3)  # (23b), (25b), (27b), (30)


@numba.njit(cache=True, inline="always")
def complete(v, w, F, F1, T1, m, J, h, scheme):
    """The part of one step after the new forces ``F1, T1``, in place: (23c, d) for maps (23), (25);
    nothing for (27), (27*), whose velocities were updated first."""
    if scheme <= 1:
        verlet_kick(v, w, F, F1, T1, m, J, h)  # (23c, d)


# ---------------------------------------------------------------------------------------------
# Attitude increments, eqs. (16), (23b), (25b)
# ---------------------------------------------------------------------------------------------


def _increment(p, h: float, exact: bool) -> np.ndarray:
    positive(h=h)
    p = np.asarray(p, dtype=float)
    rows = np.ascontiguousarray(p.reshape(-1, 3))
    c = np.empty(rows.shape[0])
    bad = _increment_factors(rows, float(h), exact, c)
    if bad >= 0:
        raise FloatingPointError(f"h|p| = {h * np.linalg.norm(rows[bad]):.3g} >= 1, eq. (16) has no real root")
    return (c[:, None] * rows).reshape(p.shape)


def increment_exact(p, h: float) -> np.ndarray:
    """Closed-form root of the discrete Legendre equation (15): eq. (16)/(23b).

    ``Δα = 2h/(1 + sqrt(1 - h^2 |p|^2)) p``, the small root of ``4Δα/(4+|Δα|^2) = h p``.

    Parameters
    ----------
    p : array_like, shape (..., 3)
        ``Ω_k + h/(2J) R_k M_k`` (spatial form).
    h : float

    Raises
    ------
    FloatingPointError
        If ``h|p| >= 1`` (the increment would rotate by π/2 or more; validity condition of (16),
        which the paper prints as ``h^2 |p| < 1``).
    """
    return _increment(p, h, True)


def increment_truncated(p, h: float) -> np.ndarray:
    """Second-order truncation of (24): ``Δα = h Ω_k + h^2/(2J) R_k M_k = h p``, eq. (25b)."""
    return _increment(p, h, False)


# ---------------------------------------------------------------------------------------------
# State and maps
# ---------------------------------------------------------------------------------------------


@runtime_checkable
class SphericalBodies(Protocol):
    """n rigid bodies with spherical inertia (``J_i = j_i I``) under forces of their configuration,
    as the maps (21), (23), (25), (27) and the residual (10) use them.

    Attributes
    ----------
    m : float or ndarray, shape (n,)
        Masses: one scalar for all bodies or one per body.
    J : float or ndarray, shape (n,)
        Scalar inertias j (``J = j I``): one scalar or one per body.
    """

    m: float | np.ndarray
    J: float | np.ndarray

    def force_torque(self, x: np.ndarray, alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Forces ``F = −∂U/∂x`` and spatial torques ``T = R M`` at centres ``x`` and attitudes
        ``α`` (rescaled Rodrigues vectors), all of shape (n, 3): ``F_k, T_k`` of (23a–d), (27)."""
        ...


class RRState(NamedTuple):
    """State of n spherical bodies at one time level.

    Attributes
    ----------
    x, v : ndarray, shape (n, 3)
        Centre-of-mass positions and velocities (inertial frame).
    alpha : ndarray, shape (n, 3)
        Rescaled Rodrigues vectors of the attitudes ``R_i = R(alpha_i)`` (body -> inertial).
    w : ndarray, shape (n, 3)
        Angular velocities: spatial ``Ω = R ω`` for maps (23), (25), (27); body ``ω`` for map (21).
    F, T : ndarray, shape (n, 3)
        Force ``-dU/dx`` and spatial torque ``R M`` at ``(x, alpha)``.
    """

    x: np.ndarray
    v: np.ndarray
    alpha: np.ndarray
    w: np.ndarray
    F: np.ndarray
    T: np.ndarray


def _rows(*arrays):
    """Fresh C-contiguous float copies of (n, 3) arrays, as the compiled pieces take and change them."""
    return tuple(np.array(a, dtype=float, order="C") for a in arrays)


def initial_state(system: SphericalBodies, x, v, alpha, w) -> RRState:
    """Build an :class:`RRState` (arrays of shape (n, 3)) and evaluate its force and torque."""
    x, v, alpha, w = (np.atleast_2d(a) for a in _rows(x, v, alpha, w))
    shapes = {a.shape for a in (x, v, alpha, w)}
    if len(shapes) != 1 or x.shape[1] != 3:
        raise ValueError(f"x, v, alpha, w must all have shape (n, 3), got {[a.shape for a in (x, v, alpha, w)]}")
    return RRState(x, v, alpha, w, *_rows(*system.force_torque(x, alpha)))


def _mass(system: SphericalBodies, n: int):
    """Mass and scalar inertia of the n spherical bodies, shape (n,) each.

    ``system.m`` and ``system.J`` are each one scalar (all bodies alike) or one positive scalar
    per body, shape (n,); anything else (e.g. three principal moments for one body) raises
    ``ValueError`` naming the attribute: these maps hold only for spherical inertia.
    """
    out = []
    for name in ("m", "J"):
        a = np.asarray(getattr(system, name), dtype=float)
        if a.shape not in ((), (n,)):
            raise ValueError(f"{name} must be one scalar or one scalar per body, shape ({n},) for the {n} "
                             f"bodies of the state (spherical inertia), got shape {a.shape}")
        if not (np.all(np.isfinite(a)) and np.all(a > 0)):
            raise ValueError(f"{name} must be finite and positive, got {a!r}")
        out.append(np.full(n, a) if a.ndim == 0 else a.copy())
    return tuple(out)


def _step(system: SphericalBodies, s: RRState, h: float, name: str) -> RRState:
    """One step of map ``name`` of :data:`SCHEMES`, one force evaluation: :func:`advance`, the
    forces of the new configuration (reused by the next step), :func:`complete`."""
    positive(h=h)
    m, J = _mass(system, s.x.shape[0])
    x, v, alpha, w, F, T = _rows(*s)
    bad = advance(x, v, alpha, w, F, T, m, J, float(h), SCHEMES[name])
    if bad >= 0:
        raise FloatingPointError(f"map ({name}): h|p| = {h * np.linalg.norm(w[bad]):.3g} >= 1, "
                                 "eq. (16) has no real root")
    F1, T1 = _rows(*system.force_torque(x, alpha))
    complete(v, w, F, F1, T1, m, J, float(h), SCHEMES[name])
    return RRState(x, v, alpha, w, F1, T1)


def step_23(system: SphericalBodies, state: RRState, h: float, t: float = 0.0) -> tuple[RRState, None]:
    """Explicit variational map (23) (spatial angular velocity), one step of size ``h``.

    Returns ``(state_{k+1}, None)``; raises ``FloatingPointError`` if ``h|p| >= 1`` (eq. 16).
    """
    return _step(system, state, h, "23"), None


def step_25(system: SphericalBodies, state: RRState, h: float, t: float = 0.0) -> tuple[RRState, None]:
    """Second-order explicit map (25) ("à la explicit Newmark / velocity Verlet"), one step."""
    return _step(system, state, h, "25"), None


def step_27(system: SphericalBodies, state: RRState, h: float, t: float = 0.0) -> tuple[RRState, None]:
    """Explicit first-order map (27) (Campello, phi = 1): ``Δα_k = h Ω_{k+1}``."""
    return _step(system, state, h, "27"), None


def step_27_exact(system: SphericalBodies, state: RRState, h: float, t: float = 0.0) -> tuple[RRState, None]:
    """Map (27) with the exact increment (30) of the one-sided discrete Lagrangian (28)."""
    return _step(system, state, h, "27*"), None


def step_21(system: SphericalBodies, state: RRState, h: float, t: float = 0.0) -> tuple[RRState, None]:
    """Explicit variational map (21) in **body** angular velocity (``state.w`` is ω), one step.

    (21b) ``Δα = 2h/(1+sqrt(1-h^2|q|^2)) R_k q`` with ``q = ω_k + h/(2J) M_k``;
    (21d) ``ω_{k+1} = R_{k+1}^T R_k q + h/(2J) M_{k+1}``, with body torques ``M = R^T T``.
    The translation and the kicks are those of map (23).
    """
    positive(h=h)
    m, J = _mass(system, state.x.shape[0])
    x, v, alpha, q, F, T = _rows(*state)
    R = rr_matrix(alpha)
    verlet_drift(x, v, q, F, np.einsum("nji,nj->ni", R, T), m, J, float(h))  # (21a), q; M_k = R_k^T (R_k M_k)
    c = np.empty(len(q))
    if _increment_factors(q, float(h), True, c) >= 0:
        raise FloatingPointError("map (21): h|q| >= 1, eq. (16) has no real root")
    Rq = np.einsum("nij,nj->ni", R, q)
    alpha = rr_compose(alpha, c[:, None] * Rq)  # (21b)
    F1, T1 = _rows(*system.force_torque(x, alpha))
    R1 = rr_matrix(alpha)
    w1 = np.einsum("nji,nj->ni", R1, Rq)  # R_{k+1}^T R_k q
    verlet_kick(v, w1, F, F1, np.einsum("nji,nj->ni", R1, T1), m, J, float(h))  # (21c, d)
    return RRState(x, v, alpha, w1, F1, T1), None


#: The maps by the paper's equation number.
STEPS = {"21": step_21, "23": step_23, "25": step_25, "27": step_27, "27*": step_27_exact}


def run(step, system: SphericalBodies, state: RRState, h: float, t_end: float, *, t0: float = 0.0) -> Trajectory:
    """Apply ``step`` from ``state`` at ``t0`` to ``t_end`` with step ``h`` (a small driver for systems
    whose ``force_torque`` is Python; the torus has a compiled loop, :mod:`mbslib.studies.binder_torus`).

    Returns
    -------
    Trajectory
        ``t = k h`` and the rows ``x[k]`` of every state, ``(x, v, α, w)`` flattened
        (``states_of(run.x)`` gives them shape (K, 4, n, 3)); ``work``: the steps taken and the force
        evaluations (one per step plus the initial one). When eq. (16) has no root (``h|p| ≥ 1``,
        maps (21), (23), (27*)) the run ends there: ``failure`` is an
        :class:`~mbslib.trajectory.IntegrationError` with reason :data:`CAYLEY_INVALID` naming the
        step that was not taken and its start time.

    ``h``, ``t_end`` and ``t0`` follow :func:`mbslib.simulate.time_grid`.
    """
    n_steps = time_grid(h, t_end, t0=t0)
    rows, failure = [np.concatenate([np.ravel(a) for a in state[:4]])], None
    start, start_cpu = time.perf_counter(), time.process_time()
    for k in range(n_steps):
        try:
            state, _ = step(system, state, h, t0 + k * h)
        except FloatingPointError:
            failure = IntegrationError(CAYLEY_INVALID, k, t0 + k * h)
            break
        rows.append(np.concatenate([np.ravel(a) for a in state[:4]]))
    wall, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    done = len(rows) - 1
    return Trajectory(t0 + h * np.arange(done + 1), np.array(rows), wall_time=wall, cpu_time=cpu, failure=failure,
                      work=Work(steps=done, rhs_evaluations=done + 1), h=float(h), t_final=t0 + done * h)


def states_of(rows) -> np.ndarray:
    """The states in rows ``x`` of a :func:`run` (or some of them), shape (K, 4, n, 3): ``(x, v, α, w)``."""
    rows = np.asarray(rows, dtype=float)
    return rows.reshape(len(rows), 4, -1, 3)


# ---------------------------------------------------------------------------------------------
# Flat-vector adapters for mbslib.simulate, and the DEL residual (10)
# ---------------------------------------------------------------------------------------------


def pack(state: RRState) -> np.ndarray:
    """Flatten an :class:`RRState` to shape (18 n,) (order x, v, alpha, w, F, T)."""
    return np.concatenate([np.ravel(a) for a in state])


def unpack(z: np.ndarray) -> RRState:
    """Inverse of :func:`pack`."""
    z = np.asarray(z, dtype=float)
    if z.size % 18:
        raise ValueError(f"z must have 18 n entries, got {z.size}")
    n = z.size // 18
    return RRState(*(a.reshape(n, 3) for a in np.split(z, 6)))


def as_flat_step(step, system: SphericalBodies):
    """Wrap a map for :func:`mbslib.simulate.simulate`: ``(z_n, h, t) -> (z_n1, None)``."""

    def flat_step(z, h, t):
        s1, report = step(system, unpack(z), h, t)
        return pack(s1), report

    return flat_step


def del_residual(system: SphericalBodies, x, alpha_prev, alpha, alpha_next, h: float) -> np.ndarray:
    """Residual of the attitude discrete Euler–Lagrange equation (10) for scalar J, shape (n, 3).

    ``(J/2h) vee[(F_k - F_k^T) - (F_{k-1} - F_{k-1}^T)] - h M_k`` with ``F_k = R_k^T R_{k+1}``
    and the body torque ``M_k = R_k^T T_k`` evaluated at ``(x, alpha)``; zero along a
    trajectory of map (23). All arrays have shape (n, 3); the n rows may be n bodies or n time
    levels of one body (the residual of a whole trajectory in one call).
    """
    positive(h=h)
    _, J = _mass(system, np.shape(alpha)[0] if np.ndim(alpha) > 1 else 1)
    R0, R1, R2 = rr_matrix(alpha_prev), rr_matrix(alpha), rr_matrix(alpha_next)
    Fk = np.swapaxes(R1, -1, -2) @ R2
    Fkm = np.swapaxes(R0, -1, -2) @ R1
    W = (Fk - np.swapaxes(Fk, -1, -2)) - (Fkm - np.swapaxes(Fkm, -1, -2))
    w = np.stack([W[..., 2, 1], W[..., 0, 2], W[..., 1, 0]], axis=-1)
    _, T = system.force_torque(np.atleast_2d(x), np.atleast_2d(alpha))
    M = np.einsum("nji,nj->ni", R1, T)
    return (J[:, None] / (2.0 * h)) * w - h * M
