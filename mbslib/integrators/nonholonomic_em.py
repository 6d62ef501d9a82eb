"""Energy–momentum (EM) and discrete Lagrange–d'Alembert (DLA) schemes for the director rigid body.

Gebhardt & Romero, J. Nonlinear Sci. (2020), Sect. 5 and 6.4. The configuration is
``q = (d1, d2, d3)`` in R^9 with constant mass matrix ``M = 𝒥 ⊗ I3``, six quadratic
orthonormality constraints ``h(q) = 0`` (eq. 63 completed with the unit lengths) and, for the
non-twisting body, the nonholonomic constraint ``G(q) q̇ = 0`` with ``G(q)ᵀ = B q`` (eq. 80).

Schemes (pure functions of the body record, a :class:`DirectorTriad` such as
:class:`mbslib.systems.nontwisting_body.NontwistingBody`):

- :func:`step_em` — the basic EM scheme (Sect. 5.1, ``nonholonomic=False``, 15 unknowns) and
  the specialized EM scheme (Sect. 5.2, ``nonholonomic=True``, 16 unknowns). State
  ``x = (q, q̇)``, shape (18,). Because ``h`` is quadratic and ``G`` linear, the averaged
  (AVF) constraint Jacobians of eqs. (89), (93) are exactly their midpoint values.
- :func:`step_dla` — the Cortés–Martínez discrete Lagrange–d'Alembert scheme in
  position–momentum form (the paper's Appendix B is missing; our reconstruction from Cortés &
  Martínez, derived in chapter 004).
  State ``x = (q, p)``, shape (18,).

The dynamic residual rows are multiplied by h²/2 (EM) or h (DLA) so that every row is a
position-level quantity; Newton's iterates do not depend on this row scaling, only the stopping
test does, which is relative (1e-10 of the initial residual, the paper's "relative tolerance")
with a round-off floor.
"""

from __future__ import annotations

from functools import partial
from typing import Protocol, runtime_checkable

import numpy as np

from mbslib.formulations.director_triad import (
    constraint,
    constraint_hessian,
    constraint_jacobian,
    material_angular_momentum,
    spatial_angular_momentum,
    twist_matrix,
)
from mbslib.newton import NewtonReport, newton_solve
from mbslib.validation import positive

#: Relative Newton tolerance of the paper (Sect. 6) and the absolute round-off floor.
RTOL = 1e-10
ATOL = 1e-13
MAX_ITER = 30

LOAD_RULES = ("midpoint", "endpoint")


@runtime_checkable
class DirectorTriad(Protocol):
    """A rigid body turning about its centre of mass as three directors ``q = (d1, d2, d3)``
    (shape (9,)) under applied director forces, as the EM and DLA schemes use it.

    The triad's kinematics (the constraints ``h``, the twist matrix ``B``, angular momenta) do
    not depend on the body: :mod:`mbslib.formulations.director_triad`. What does is below.

    Attributes
    ----------
    M : ndarray, shape (9, 9)
        Constant director mass matrix 𝒥 ⊗ I₃ (eq. 88).
    a : float
        Weight of the nonholonomic constraint G(q)ᵀ = B q (eq. 80), in [0, 1].
    loaded : bool
        Whether the body is loaded (the schemes skip the forces otherwise).
    """

    M: np.ndarray
    a: float
    loaded: bool

    def director_forces(self, q: np.ndarray, t: float) -> np.ndarray:
        """Generalized director forces ``Q(q, t)``, shape (9,) (eqs. 68, 84)."""
        ...

    def director_forces_jacobian(self, q: np.ndarray, t: float) -> np.ndarray:
        """``∂Q/∂q``, shape (9, 9)."""
        ...

    def director_momenta(self, qdot: np.ndarray) -> np.ndarray:
        """``p = M q̇``, shape (..., 9) (eq. 65), for :func:`invariants`."""
        ...

    def kinetic_energy(self, qdot: np.ndarray) -> np.ndarray:
        """``K = ½ q̇·M q̇``, shape (...), for :func:`invariants`."""
        ...


def _check(h: float, load_rule: str) -> None:
    positive(h=h)
    if load_rule not in LOAD_RULES:
        raise ValueError(f"load_rule must be one of {LOAD_RULES}, got {load_rule!r}")


def _solve(res, jac, z0, t, rtol=None) -> tuple[np.ndarray, NewtonReport]:
    """Newton with the stopping test max|R| ≤ max(rtol max|R(z0)|, ATOL), rtol = RTOL by default."""
    rtol = RTOL if rtol is None else rtol
    positive(rtol=rtol)
    r0 = float(np.max(np.abs(res(z0))))
    return newton_solve(res, z0, jac, tol=max(rtol * r0, ATOL), max_iter=MAX_ITER, t=t)


def _em_load(body: DirectorTriad, q_n, q_n1, t, h, load_rule):
    """Discrete load Q_{n+½} (not specified in the paper): at (q_{n+½}, t_{n+½}) or the endpoint average."""
    if not body.loaded:
        return 0.0
    if load_rule == "midpoint":
        return body.director_forces(0.5 * (q_n + q_n1), t + 0.5 * h)
    return 0.5 * (body.director_forces(q_n, t) + body.director_forces(q_n1, t + h))


def _em_load_jacobian(body: DirectorTriad, q_n, q_n1, t, h, load_rule):
    """∂Q_{n+½}/∂q_{n+1}, shape (9, 9)."""
    if not body.loaded:
        return 0.0
    if load_rule == "midpoint":
        return 0.5 * body.director_forces_jacobian(0.5 * (q_n + q_n1), t + 0.5 * h)
    return 0.5 * body.director_forces_jacobian(q_n1, t + h)


# --- energy–momentum schemes (Sect. 5.1, 5.2) ----------------------------------------------


def _constraint_rows(unit_length: bool) -> slice:
    """Rows of h used: all six, or only the three orthogonality conditions printed in eq. (63)."""
    return slice(0, 6) if unit_length else slice(3, 6)


def residual_em(body: DirectorTriad, x_n, z, h, t=0.0, *, nonholonomic=True, load_rule="midpoint",
                unit_length=True):
    """Residual of one EM step, shape (16,) (or (15,) for the basic scheme).

    Parameters
    ----------
    body : DirectorTriad
    x_n : ndarray, shape (18,)
        State ``(q_n, q̇_n)``.
    z : ndarray, shape (16,) or (15,)
        Unknowns ``(q_{n+1}, λ_{n+½}, μ_{n+½})``; μ only if ``nonholonomic``.
    h, t : float
        Step size and time t_n.
    unit_length : bool
        Use all six constraints (default). ``False`` keeps only the three orthogonality
        conditions printed in eq. (63), λ ∈ R³ (13 or 12 unknowns): a demonstration of why the
        unit lengths are needed.

    Returns
    -------
    R : ndarray
        ``(h²/2) R_q``, ``R_h``, ``R_g`` with (eqs. 87b, 89–94)

        - ``R_q = (2/h²) M(q_{n+1} − q_n − h q̇_n) + H(q_{n+½})ᵀλ + μ B q_{n+½} − Q_{n+½}``
        - ``R_h = h(q_{n+1})``
        - ``R_g = (B q_{n+½})·(q_{n+1} − q_n)`` (the AVF constraint G_d Δq = 0, eq. 94).
    """
    q_n, v_n = x_n[:9], x_n[9:]
    rows = _constraint_rows(unit_length)
    m = 9 + rows.stop - rows.start
    q_n1, lam = z[:9], z[9:m]
    q_mid, dq = 0.5 * (q_n + q_n1), q_n1 - q_n
    Q = _em_load(body, q_n, q_n1, t, h, load_rule)
    force = constraint_jacobian(q_mid)[rows].T @ lam - Q
    parts = [None, constraint(q_n1)[rows]]
    if nonholonomic:
        Bq = twist_matrix(body.a) @ q_mid
        force = force + z[m] * Bq
        parts.append([Bq @ dq])
    parts[0] = body.M @ (dq - h * v_n) + 0.5 * h * h * force
    return np.concatenate(parts)


def jacobian_em(body: DirectorTriad, x_n, z, h, t=0.0, *, nonholonomic=True, load_rule="midpoint",
                unit_length=True):
    """Analytic Jacobian ∂R/∂z of :func:`residual_em`, shape (16, 16) or (15, 15).

    ``∂R_q/∂q_{n+1} = M + (h²/4)(C(λ) + μB) − (h²/2) ∂Q_{n+½}/∂q_{n+1}``,
    ``∂R_q/∂λ = (h²/2) H(q_{n+½})ᵀ``, ``∂R_q/∂μ = (h²/2) B q_{n+½}``,
    ``∂R_h/∂q_{n+1} = H(q_{n+1})``, ``∂R_g/∂q_{n+1} = B q_{n+½} + ½ Bᵀ(q_{n+1} − q_n)``.
    """
    q_n = x_n[:9]
    rows = _constraint_rows(unit_length)
    m = 9 + rows.stop - rows.start
    q_n1 = z[:9]
    lam = np.zeros(6)
    lam[rows] = z[9:m]
    q_mid, dq = 0.5 * (q_n + q_n1), q_n1 - q_n
    c = 0.5 * h * h
    dQ = _em_load_jacobian(body, q_n, q_n1, t, h, load_rule)
    n = m + 1 if nonholonomic else m
    K = np.zeros((n, n))
    K[:9, :9] = body.M + c * (0.5 * constraint_hessian(lam) - dQ)
    K[:9, 9:m] = c * constraint_jacobian(q_mid)[rows].T
    K[9:m, :9] = constraint_jacobian(q_n1)[rows]
    if nonholonomic:
        B = twist_matrix(body.a)
        Bq = B @ q_mid
        K[:9, :9] += c * 0.5 * z[m] * B
        K[:9, m] = c * Bq
        K[m, :9] = Bq + 0.5 * B.T @ dq
    return K


def step_em(body: DirectorTriad, x_n, h, t=0.0, *, nonholonomic=True, load_rule="midpoint", unit_length=True,
            rtol=None):
    """One EM step ``(q_n, q̇_n) -> (q_{n+1}, q̇_{n+1})`` (Sect. 5.1/5.2).

    Newton on ``z = (q_{n+1}, λ, μ)`` from the predictor ``(q_n + h q̇_n, 0, 0)``; the velocity
    update is ``q̇_{n+1} = (2/h)(q_{n+1} − q_n) − q̇_n`` (trapezoidal rule, eq. 87). ``rtol`` is
    the relative Newton tolerance (default :data:`RTOL`, the paper's 1e-10).

    Returns
    -------
    x_n1 : ndarray, shape (18,)
    report : NewtonReport

    Raises
    ------
    NewtonError
        If Newton does not converge within ``MAX_ITER`` iterations.
    """
    _check(h, load_rule)
    x_n = np.asarray(x_n, dtype=float)
    q_n, v_n = x_n[:9], x_n[9:]
    n_lam = 6 if unit_length else 3
    z0 = np.zeros(9 + n_lam + (1 if nonholonomic else 0))
    z0[:9] = q_n + h * v_n
    kw = dict(nonholonomic=nonholonomic, load_rule=load_rule, unit_length=unit_length)
    z, report = _solve(
        lambda z: residual_em(body, x_n, z, h, t, **kw),
        lambda z: jacobian_em(body, x_n, z, h, t, **kw),
        z0,
        t,
        rtol,
    )
    q_n1 = z[:9]
    return np.concatenate([q_n1, 2.0 / h * (q_n1 - q_n) - v_n]), report


# --- discrete Lagrange–d'Alembert scheme (Sect. 6.4, Appendix B reconstructed) --------------


def residual_dla(body: DirectorTriad, x_n, z, h, t=0.0):
    """Residual (B1)–(B3) of one DLA step, shape (16,).

    ``h·(B1) = M(q_{k+1} − q_k) − h p_k − (h²/2) Q(q_k, t_k) + (h²/2)(H(q_k)ᵀλ + μ B q_k)``,
    ``(B2) = h(q_{k+1})``, ``(B3) = (B q_{k+½})·(q_{k+1} − q_k)``.
    The forces are node forces (trapezoidal discrete forces F_d^± = (h/2) Q).
    """
    q_n, p_n = x_n[:9], x_n[9:]
    q_n1, lam, mu = z[:9], z[9:15], z[15]
    B = twist_matrix(body.a)
    Q = body.director_forces(q_n, t) if body.loaded else 0.0
    c = 0.5 * h * h
    R1 = body.M @ (q_n1 - q_n) - h * p_n - c * Q + c * (constraint_jacobian(q_n).T @ lam + mu * (B @ q_n))
    R3 = (B @ (0.5 * (q_n + q_n1))) @ (q_n1 - q_n)
    return np.concatenate([R1, constraint(q_n1), [R3]])


def jacobian_dla(body: DirectorTriad, x_n, z, h, t=0.0):
    """Analytic Jacobian of :func:`residual_dla`, shape (16, 16)."""
    q_n = x_n[:9]
    q_n1 = z[:9]
    B = twist_matrix(body.a)
    c = 0.5 * h * h
    K = np.zeros((16, 16))
    K[:9, :9] = body.M
    K[:9, 9:15] = c * constraint_jacobian(q_n).T
    K[:9, 15] = c * (B @ q_n)
    K[9:15, :9] = constraint_jacobian(q_n1)
    K[15, :9] = B @ (0.5 * (q_n + q_n1)) + 0.5 * B.T @ (q_n1 - q_n)
    return K


def project_momentum(body: DirectorTriad, q, p_star):
    """(B4)–(B5): p = p* − Cᵀν with C = [H; G](q) chosen so that C M⁻¹ p = 0, shape (9,)."""
    C = np.vstack([constraint_jacobian(q), twist_matrix(body.a) @ q])
    Minv_Ct = np.linalg.solve(body.M, C.T)
    nu = np.linalg.solve(C @ Minv_Ct, Minv_Ct.T @ p_star)
    return p_star - C.T @ nu


def step_dla(body: DirectorTriad, x_n, h, t=0.0):
    """One DLA step ``(q_k, p_k) -> (q_{k+1}, p_{k+1})`` (one-step form (B1)–(B5) of our reconstruction).

    Newton on ``(q_{k+1}, λ_k, μ_k)`` from ``(q_k + h M⁻¹p_k, 0, 0)``, then
    ``p_{k+1} = M(q_{k+1} − q_k)/h + (h/2) Q(q_{k+1}, t_{k+1})`` projected onto the constraint
    velocities. There is no solution once the rotation per step reaches ``|ω| h = 1``.

    Raises
    ------
    NewtonError
        When Newton fails (in particular beyond the existence limit ``|ω| h ≥ 1``).
    """
    positive(h=h)
    x_n = np.asarray(x_n, dtype=float)
    q_n, p_n = x_n[:9], x_n[9:]
    z0 = np.zeros(16)
    z0[:9] = q_n + h * np.linalg.solve(body.M, p_n)
    z, report = _solve(
        lambda z: residual_dla(body, x_n, z, h, t),
        lambda z: jacobian_dla(body, x_n, z, h, t),
        z0,
        t,
    )
    q_n1 = z[:9]
    p_star = body.M @ (q_n1 - q_n) / h
    if body.loaded:
        p_star = p_star + 0.5 * h * body.director_forces(q_n1, t + h)
    return np.concatenate([q_n1, project_momentum(body, q_n1, p_star)]), report


def em_stepper(body: DirectorTriad, *, nonholonomic=True, load_rule="midpoint", unit_length=True, rtol=None):
    """``step(x, h, t)`` for :func:`mbslib.simulate.simulate`."""
    return partial(step_em, body, nonholonomic=nonholonomic, load_rule=load_rule, unit_length=unit_length,
                   rtol=rtol)


def dla_stepper(body: DirectorTriad):
    """``step(x, h, t)`` for :func:`mbslib.simulate.simulate`."""
    return partial(step_dla, body)



# --- post-processing (Hamiltonian and energy of Tables 7–9, undefined in the paper) ----------


def invariants(body: DirectorTriad, x, *, scheme="em", h=None) -> dict:
    """Motion invariants along a time-major trajectory ``x`` of shape (N+1, 18).

    Returns a dict with ``q`` (N+1, 9), ``v`` = q̇ (N+1, 9), ``p`` (N+1, 9), ``pi`` (SAM,
    (N+1, 3)), ``Pi`` (MAM components Π¹, Π², Π³, (N+1, 3)), ``K`` = ½ q̇·Mq̇ and the
    "Hamiltonian" ``H`` = ½ p·M⁻¹p at the nodes (N+1,), and the "energy" ``E``: for the EM
    ``E_n = ½ q̇_n·Mq̇_n`` (= H), for the DLA (state (q, p), needs ``h``) the midpoint value
    ``E_{k+½} = ½ |Δq/h|²_M``, shape (N,).
    """
    x = np.asarray(x, dtype=float)
    q = x[:, :9]
    if scheme == "em":
        v = x[:, 9:]
        p = body.director_momenta(v)
    elif scheme == "dla":
        p = x[:, 9:]
        v = np.linalg.solve(body.M, p.T).T
        positive(h=h)
    else:
        raise ValueError(f"scheme must be 'em' or 'dla', got {scheme!r}")
    K = body.kinetic_energy(v)
    H = 0.5 * np.sum(p * v, axis=1)
    E = K if scheme == "em" else body.kinetic_energy(np.diff(q, axis=0) / h)
    return dict(q=q, v=v, p=p, pi=spatial_angular_momentum(q, p), Pi=material_angular_momentum(q, p), K=K, H=H, E=E)


def frame_defects(q) -> tuple[float, float, float]:
    """Largest defects of the discrete non-twisting frame along ``q`` of shape (N+1, 9).

    Returns
    -------
    ortho : float
        ``max_n |h(q_n)|∞`` (orthonormality).
    twist : float
        ``max_n |d_{1,n+1}·d_{2,n} − d_{1,n}·d_{2,n+1}|`` (the discrete constraint (94)).
    transport : float
        ``max_n,α ‖d_{α,n+1} − P(d_{α,n})‖`` with P the parallel transport along the great arc
        from d_{3,n} to d_{3,n+1} (eq. 10), the rotation ``I + ŵ + ŵ²/(1 + c)`` with
        ``w = d_{3,n} × d_{3,n+1}``, ``c = d_{3,n}·d_{3,n+1}`` (unit d3 assumed).
        ``inf`` if consecutive d3 are antipodal (transport undefined). 0 for a single state.
    """
    q = np.asarray(q, dtype=float)
    if q.ndim != 2 or q.shape[1] != 9 or len(q) == 0:
        raise ValueError(f"q must have shape (N+1, 9), got {q.shape}")
    d1, d2, d3 = q[:, 0:3], q[:, 3:6], q[:, 6:9]
    ortho = float(np.max(np.abs(np.column_stack([
        0.5 * (np.sum(d1 * d1, axis=1) - 1.0), 0.5 * (np.sum(d2 * d2, axis=1) - 1.0),
        0.5 * (np.sum(d3 * d3, axis=1) - 1.0), np.sum(d2 * d3, axis=1), np.sum(d1 * d3, axis=1),
        np.sum(d1 * d2, axis=1)]))))
    if len(q) == 1:
        return ortho, 0.0, 0.0
    twist = float(np.max(np.abs(np.sum(d1[1:] * d2[:-1] - d1[:-1] * d2[1:], axis=1))))
    u = d3 / np.linalg.norm(d3, axis=1, keepdims=True)
    if np.any(1.0 + np.sum(u[:-1] * u[1:], axis=1) < 1e-12):
        return ortho, twist, float("inf")
    transport = max(float(np.max(np.linalg.norm(d[1:] - _transport(u[:-1], u[1:], d[:-1]), axis=1))) for d in (d1, d2))
    return ortho, twist, transport


def _transport(a, b, v):
    """Parallel transport of the rows of v along the great arcs from the unit rows of a to those of b
    (eq. 10): the rotation ``I + ŵ + ŵ²/(1 + c)`` with ``w = a × b``, ``c = a·b``; NaN for antipodal a, b."""
    w = np.cross(a, b)
    c = np.sum(a * b, axis=-1)
    wv = np.cross(w, v)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = v + wv + np.cross(w, wv) / (1.0 + c)[..., None]
    out[1.0 + c < 1e-12] = np.nan
    return out


def _signed_angle(u, v, axis):
    """Angle from u to v about axis (rows), in (−π, π]."""
    return np.arctan2(np.sum(np.cross(u, v) * axis, axis=-1), np.sum(u * v, axis=-1))


def _unit_directors(q):
    q = np.asarray(q, dtype=float)
    if q.ndim != 2 or q.shape[1] != 9 or len(q) == 0:
        raise ValueError(f"q must have shape (N+1, 9), got {q.shape}")
    return [d / np.linalg.norm(d, axis=1, keepdims=True) for d in (q[:, 0:3], q[:, 3:6], q[:, 6:9])]


def twist_angle(q) -> np.ndarray:
    """Accumulated twist of the frame along ``q`` of shape (N+1, 9), shape (N+1,).

    Per step, the angle about d_{3,n+1} from the parallel transport of d_{1,n} along the arc
    d_{3,n} → d_{3,n+1} (eq. 10) to d_{1,n+1}; summed. Zero for a non-twisting frame, about
    ∫ w·d3 dt for a body that spins about d3 (eq. 25: ψ̇ = w·d3).
    """
    d1, _, d3 = _unit_directors(q)
    steps = _signed_angle(_transport(d3[:-1], d3[1:], d1[:-1]), d1[1:], d3[1:])
    return np.concatenate([[0.0], np.cumsum(steps)])


def holonomy_angle(q) -> np.ndarray:
    """Angle about d_{3,n} from the transport of d_{1,0} along the single great arc d_{3,0} → d_{3,n}
    to d_{1,n}, shape (N+1,), in (−π, π]; NaN where d_{3,n} = −d_{3,0}.

    For a frame transported along the path of d3 this is the holonomy of the loop "path, then the
    arc back to d_{3,0}": by Gauss–Bonnet it equals the loop's enclosed area (:func:`enclosed_area`)
    modulo 2π.
    """
    d1, _, d3 = _unit_directors(q)
    start = np.broadcast_to(d3[0], d3.shape)
    return _signed_angle(_transport(start, d3, np.broadcast_to(d1[0], d1.shape).copy()), d1, d3)


def enclosed_area(d3) -> np.ndarray:
    """Signed area of the spherical polygon d_{3,0}, …, d_{3,n} (great arcs between the points)
    closed by the arc back to d_{3,0}, for every n, shape (N+1,).

    Fan triangulation from d_{3,0}; each triangle (a, b, c) has the signed area
    ``2 atan2(a·(b × c), 1 + a·b + b·c + c·a)`` (positive when a, b, c run anticlockwise seen from
    outside the sphere).
    """
    d3 = np.asarray(d3, dtype=float)
    if d3.ndim != 2 or d3.shape[1] != 3:
        raise ValueError(f"d3 must have shape (N+1, 3), got {d3.shape}")
    u = d3 / np.linalg.norm(d3, axis=1, keepdims=True)
    a, b, c = u[0], u[1:-1], u[2:]
    E = 2.0 * np.arctan2(np.cross(b, c) @ a, 1.0 + b @ a + np.sum(b * c, axis=1) + c @ a)
    return np.concatenate([np.zeros(min(len(u), 2)), np.cumsum(E)])
