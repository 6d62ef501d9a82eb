"""The GGL variational integrator (GGL-VI) of Kinon, Betsch & Schneider (MSD 2023), eqs. (41a-e).

Discretising the GGL action (paper eq. 39) with a left-point rule for L, the position constraint
at t_{n+1}, the velocity constraint at q̄ = q_n + h v_n and an explicit-Euler velocity gives,
with Γ = Σ_k γ_k D²g_k(q̄) and Ḡ = G(q̄):

    (41a)  q_{n+1} − q_n = h v_n + h M⁻¹ Ḡᵀ γ
    (41b)  p_{n+1} − p_n = −h ∇V(q_n) − h G(q_n)ᵀ λ − h Γ M⁻¹ p_{n+1}   [− h C v_n, eq. 57b]
    (41c)  M v_n = (I + h Γ M⁻¹) p_{n+1}
    (41d)  g(q_{n+1}) = 0
    (41e)  Ḡ M⁻¹ p_{n+1} = 0

The printed (41b)/(57b) has M⁻¹p_n in the Hessian term; the derivation (40b), the
differential (42b) of the paper's proof and the authors' code give p_{n+1}.
Two negative controls (not in the paper): ``variant="printed"`` keeps the misprint, and
``variant="no_hessian"`` drops the Hessian terms of (41b, c), i.e. discretises the classical GGL
equations the same way.

State layout: a step maps the unknown vector of the previous step to the next one,
``x = [q_{n+1}; p_{n+1}; v_n; λ_n; γ_{n+1}]`` of length 3d + 2m. Only (q, p) of the incoming
vector define the step; its v, λ, γ are the warm start of Newton's method. Row n+1 of a
trajectory therefore stores q_{n+1}, p_{n+1} and the velocity v_n of the step *into* it
(use :func:`split_trajectory`). Start from :func:`initial_vector`.

The system is a :class:`GGLSystem`: a constant diagonal mass matrix, a quadratic potential and
quadratic constraints (constant Hessians), for which the Newton matrix below is exact, as for
:class:`~mbslib.systems.directors.ConstrainedSystem` (which
:func:`mbslib.formulations.directors.director_system` builds from a model). Large systems
(:data:`SPARSE_FROM` unknowns on) assemble the residual and the Newton matrix from sparse
constraint matrices and factor it by a banded LU with the unknowns body by body
(:func:`band_order`), so that for a chain of bodies the work of a step grows linearly with the
number of bodies. Undamped, the Newton system of (41a–e) is solved with q, p and v eliminated
body by body (:class:`WithoutQPV`): a banded LU in the multipliers (λ, γ) alone.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np
import scipy.sparse as sp

from mbslib.newton import BandedBlocks, NewtonError, NewtonReport, Triplets, block_matrix, newton_solve
from mbslib.symplectic import step_map_jacobian
from mbslib.validation import positive

VARIANTS = ("paper", "printed", "no_hessian")
#: Singular-value cut-off of the minimum-norm Newton fallback of :func:`step_ggl`.
MIN_NORM_RCOND = 1e-12
#: Newton systems of at least this many unknowns (3d + 2m) are assembled and factored sparsely
#: (banded LU, :func:`band_order`). The systems of chapter 001 stay below (the top 54, the four-bar linkage 148) and
#: keep LAPACK's dense LU, which is faster for the smallest ones (the sparse matrices cost a
#: fixed time to build).
SPARSE_FROM = 200


def _check_variant(variant: str) -> None:
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")


@runtime_checkable
class GGLConstraints(Protocol):
    """Quadratic constraints ``g_k(q) = ½ q·H_k q + a_k·q − c_k`` (constant Hessians ``H_k``).

    The matrices come as dense ndarrays, or as scipy.sparse matrices for ``sparse=True``.
    """

    def g(self, q: np.ndarray) -> np.ndarray:
        """``g(q)``, shape (m,) (41d)."""
        ...

    def G(self, q: np.ndarray, *, sparse: bool = False):
        """Jacobian ``G(q) = ∂g/∂q``, shape (m, d): at ``q_n`` in (41b), at ``q̄`` in (41a, e)."""
        ...

    def hessian_sum(self, w: np.ndarray, *, sparse: bool = False):
        """``Σ_k w_k H_k``, shape (d, d): ``Γ`` of (41a–c) for ``w = γ``."""
        ...

    def hessian_rows(self, w: np.ndarray, *, sparse: bool = False):
        """Rows ``(H_k w)ᵀ``, shape (m, d): ``∂(Ḡ M⁻¹p)/∂q̄`` in the Newton matrix of (41e)."""
        ...


@runtime_checkable
class GGLSystem(Protocol):
    """A constrained system as the GGL-VI uses it: ``L = ½ v·M v − V(q)`` with constant diagonal
    ``M`` and ``V(q) = ½ q·K q − f·q``, quadratic constraints, viscous force ``−C v`` (paper
    eqs. 3, 20, 53). Coordinates have shape (d,), multipliers (m,).

    Attributes
    ----------
    d : int
        Number of coordinates q.
    m : int
        Number of constraints.
    M : ndarray, shape (d,)
        Diagonal of the constant mass matrix (p₀ = M q̇₀; 41c).
    Minv : ndarray, shape (d,)
        Its inverse (41a, b, e).
    C : scipy.sparse array, shape (d, d)
        Constant damping matrix (57b; zero for 41b).
    K : scipy.sparse array, shape (d, d)
        Constant Hessian ∇²V (the step map's dependence on q_n).
    constraints : GGLConstraints
        The constraints g and their derivatives (41a, b, d, e).
    """

    d: int
    m: int
    M: np.ndarray
    Minv: np.ndarray
    C: sp.sparray
    K: sp.sparray
    constraints: GGLConstraints

    def dV(self, q: np.ndarray) -> np.ndarray:
        """``∇V(q)``, shape (d,) (41b at ``q_n``)."""
        ...


class Unknowns(NamedTuple):
    """Views into the unknown vector of one step (or a trajectory of them)."""

    q: np.ndarray  # (..., d) q_{n+1}
    p: np.ndarray  # (..., d) p_{n+1}
    v: np.ndarray  # (..., d) v_n
    lam: np.ndarray  # (..., m) λ_n
    gam: np.ndarray  # (..., m) γ_{n+1}


def split(system: GGLSystem, x) -> Unknowns:
    """Split ``x`` (shape (..., 3d + 2m)) into its blocks."""
    d, m = system.d, system.m
    x = np.asarray(x)
    if x.shape[-1] != 3 * d + 2 * m:
        raise ValueError(f"x must have length 3d + 2m = {3 * d + 2 * m}, got {x.shape[-1]}")
    return Unknowns(x[..., :d], x[..., d : 2 * d], x[..., 2 * d : 3 * d],
                    x[..., 3 * d : 3 * d + m], x[..., 3 * d + m :])


def initial_vector(system: GGLSystem, q0, qdot0) -> np.ndarray:
    """x_0 = [q_0; M q̇_0; q̇_0; 0; 0] (p_0 = M q̇_0, as in the authors' code)."""
    q0 = np.asarray(q0, dtype=float)
    qdot0 = np.asarray(qdot0, dtype=float)
    return np.concatenate([q0, system.M * qdot0, qdot0, np.zeros(2 * system.m)])


def uses_sparse(system: GGLSystem, sparse: bool | None = None) -> bool:
    """Whether a step of ``system`` assembles and factors its Newton system sparsely.

    ``sparse=None`` decides by size: from :data:`SPARSE_FROM` unknowns on (the shoot-out's chain
    of N ≥ 4 rods; the top and the four-bar linkage of chapter 001 stay dense).
    """
    return 3 * system.d + 2 * system.m >= SPARSE_FROM if sparse is None else bool(sparse)


#: What the sparse steps of a system compute once (its band order, its :class:`_BodyBlocks`), by
#: the system's identity (each kept with its system, so that no other system takes its identity over).
_PER_SYSTEM: dict[int, tuple[GGLSystem, dict]] = {}


def _once(system: GGLSystem, name: str, build):
    """``build(system)``, computed once per system."""
    known = _PER_SYSTEM.get(id(system))
    if known is None or known[0] is not system:
        if len(_PER_SYSTEM) >= 16:
            _PER_SYSTEM.clear()
        known = _PER_SYSTEM[id(system)] = (system, {})
    if name not in known[1]:
        known[1][name] = build(system)
    return known[1][name]


def band_order(system: GGLSystem) -> np.ndarray | None:
    """The unknowns ``x = [q; p; v; λ; γ]`` of a step in the order of a narrow band of the Newton
    matrix, body by body, for its banded LU (:class:`mbslib.newton.BandedBlocks`; its multipliers
    ``(λ, γ)`` in this order for the banded LU that :class:`WithoutQPV` leaves); None for a
    system without bodies (without ``offsets``, the start of each body's coordinates in q, as in
    :class:`~mbslib.systems.directors.ConstrainedSystem`): reverse Cuthill–McKee orders those.

    A constraint belongs to the last body whose coordinates it holds. A body's block: the
    multipliers ``(λ_k, γ_k)`` of its linear constraints (the joints to the bodies before it);
    then ``(q_i, p_i)`` of the coordinates that linear constraints hold, which both joints of a
    body in a chain couple to (41b, d, e), in the middle of the body's other unknowns: half of
    them before, half after, namely ``(q_i, p_i, v_i)`` of half of the other coordinates, the
    multipliers of the body's quadratic constraints (its orthonormality, 41a–c, e), ``v_i`` of the
    held coordinates, ``(q_i, p_i, v_i)`` of the other half. The chain of 64 rods: a band of
    40 + 41 diagonals (reverse Cuthill–McKee: 102 + 100); its multipliers alone: 23 + 23.
    """
    offsets = getattr(system, "offsets", None)
    return _once(system, "order", lambda s: None if offsets is None else _body_by_body(s, np.asarray(offsets)))


def _body_by_body(system: GGLSystem, offsets: np.ndarray) -> np.ndarray:
    """:func:`band_order` of a system with bodies starting at ``offsets`` in q."""
    d, m, con = system.d, system.m, system.constraints
    entries = con.G(np.ones(d), sparse=True)  # every entry of G, whatever q
    quadratic = np.zeros(m, dtype=bool)
    quadratic[con.hessian_rows(np.ones(d), sparse=True).rows] = True
    body = np.searchsorted(offsets, np.arange(d), side="right") - 1  # of each coordinate
    last = np.full(m, -1)
    np.maximum.at(last, entries.rows, body[entries.cols])  # of each constraint
    held = np.zeros(d, dtype=bool)
    held[entries.cols[~quadratic[entries.rows]]] = True
    q, p, v, lam, gam = 0, d, 2 * d, 3 * d, 3 * d + m  # where the blocks of x start

    def interleaved(*blocks):
        return np.stack(blocks, axis=1).ravel()

    order = []
    for a in range(offsets.size):
        coords, rows = np.flatnonzero(body == a), np.flatnonzero(last == a)
        other, joints, own = coords[~held[coords]], rows[~quadratic[rows]], rows[quadratic[rows]]
        half = other.size // 2
        rest = np.concatenate([interleaved(q + other[:half], p + other[:half], v + other[:half]),
                               interleaved(lam + own, gam + own), v + coords[held[coords]],
                               interleaved(q + other[half:], p + other[half:], v + other[half:])])
        middle = coords[held[coords]]
        order += [interleaved(lam + joints, gam + joints), rest[: rest.size // 2],
                  interleaved(q + middle, p + middle), rest[rest.size // 2 :]]
    return np.concatenate(order)


class _BodyBlocks:
    """Where the entries of a system's matrices go in per-body blocks (:class:`WithoutQPV`): the
    bodies hold ``size`` coordinates each, body b's constraints (those whose rows hold its
    coordinates) are ``cons[b]``, padded with its first one (the padded rows of its blocks stay
    zero), and the multipliers' matrix has the entries ``(rows, cols)``: every pair of constraints
    of a body, for each of its blocks λλ, λγ, γλ, γγ; ``order`` is the multipliers (λ, γ) in the
    order of :func:`band_order`."""

    def __init__(self, system: GGLSystem):
        d, m, con = system.d, system.m, system.constraints
        offsets = np.asarray(system.offsets)
        size = d // offsets.size
        if not np.array_equal(offsets, size * np.arange(offsets.size)) or size * offsets.size != d:
            raise ValueError(f"the bodies must hold equally many coordinates each, got offsets {tuple(offsets)} "
                             f"for d = {d}")
        entries = con.G(np.ones(d), sparse=True)  # every entry of G, whatever q
        pairs = np.unique(entries.cols // size * m + entries.rows)  # (body, constraint), body by body
        body, constraint = np.divmod(pairs, m)
        count = np.bincount(body, minlength=offsets.size)
        if not count.all():
            raise ValueError(f"every body must hold a constraint; body {np.argmin(count)} holds none")
        slot = np.arange(pairs.size) - np.repeat(np.cumsum(count) - count, count)
        self.size, self.m, self.pairs, self.slot = size, m, pairs, slot
        self.cons = np.repeat(constraint[slot == 0][:, None], count.max(), axis=1)
        self.cons[body, slot] = constraint
        k, l = (np.broadcast_to(index, (*self.cons.shape, self.cons.shape[1])).ravel()
                for index in (self.cons[:, :, None], self.cons[:, None, :]))
        self.rows = np.concatenate([k, k, m + k, m + k])  # blocks λλ, λγ, γλ, γγ
        self.cols = np.concatenate([l, m + l, l, m + l])
        full = band_order(system)
        self.order = full[full >= 3 * d] - 3 * d
        self._at: dict[tuple[int, int], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def local(self, A: Triplets) -> np.ndarray:
        """The rows of body b's constraints of the (m, d) matrix ``A``, over its coordinates: shape (N, R, size)."""
        n, r = self.cons.shape

        def where():
            body, column = np.divmod(A.cols, self.size)
            at = self.slot[np.searchsorted(self.pairs, body * self.m + A.rows)]
            return (body * r + at) * self.size + column

        return np.bincount(self._index(A, where), A.values, minlength=n * r * self.size).reshape(n, r, self.size)

    def diagonal(self, A: Triplets) -> np.ndarray:
        """The diagonal blocks of the (d, d) matrix ``A`` with no entries between bodies: shape (N, size, size)."""

        def where():
            (bi, i), (bj, j) = np.divmod(A.rows, self.size), np.divmod(A.cols, self.size)
            if np.any(bi != bj):
                raise ValueError("the constraint Hessians must not couple two bodies")
            return (bi * self.size + i) * self.size + j

        n = self.cons.shape[0]
        return np.bincount(self._index(A, where), A.values, minlength=n * self.size**2).reshape(
            n, self.size, self.size)

    def _index(self, A: Triplets, where) -> np.ndarray:
        """``where()``, computed once for the index arrays of ``A`` (kept with them: a system hands
        the same index arrays to every step)."""
        key = id(A.rows), id(A.cols)
        known = self._at.get(key)
        if known is None or known[0] is not A.rows or known[1] is not A.cols:
            known = self._at[key] = (A.rows, A.cols, where())
        return known[2]

    def per_body(self, blocks: np.ndarray, x: np.ndarray) -> np.ndarray:
        """``diag(blocks) x`` for per-body blocks (N, size, size) and x of shape (d,)."""
        return np.einsum("bij,bj->bi", blocks, x.reshape(-1, self.size)).ravel()


class WithoutQPV:
    """The sparse Newton system of (41a–e), undamped, solved with q, p and v eliminated: with
    ``r = [r_q, r_p, r_v, r_λ, r_γ]`` and the update ``dx`` (``J dx = r``), the sum of the rows of
    (41b) and (41c), ``M dv + h G(q_n)ᵀ dλ = r_p + r_v``, gives ``dv = u − h M⁻¹ G(q_n)ᵀ dλ``,
    ``u = M⁻¹(r_p + r_v)``; (41c) then gives ``dp = M P (M dv − h T̄ᵀ dγ − r_v)`` with the per-body
    blocks ``P = (M + h Γ)⁻¹``, and (41a) ``dq = r_q + B dv + h M⁻¹ Ḡᵀ dγ``, ``B = h I + h² M⁻¹ Γ``.
    What is left of (41d, e) are the multipliers' equations

        −h G₁ B M⁻¹ G₀ᵀ dλ + h G₁ M⁻¹ Ḡᵀ dγ = r_λ − G₁ (r_q + B u),
        −h (Ḡ P + h T̄ M⁻¹) G₀ᵀ dλ − h Ḡ P T̄ᵀ dγ = r_γ − Ḡ P r_p − h T̄ u,

    (``G₁ = G(q_{n+1})``, ``G₀ = G(q_n)``, ``T̄`` the rows ``(D²g_k M⁻¹ p_{n+1})ᵀ``), whose entries are
    sums over the bodies of products of per-body blocks, put into the band storage of a banded LU
    in :func:`band_order` (:class:`~mbslib.newton.BandedBlocks`): 2m unknowns instead of 3d + 2m,
    the same Newton update up to round-off. What the Jacobian of :func:`step_ggl` hands to
    :func:`~mbslib.newton.newton_solve` for a system with bodies of equally many coordinates
    (``offsets``), constraint Hessians within the bodies and no damping (C = 0).

    Parameters
    ----------
    system : GGLSystem
    x_n, x_n1 : ndarray, shape (3d + 2m,)
        As in :func:`jacobian_ggl`: the previous unknowns (q_n) and the iterate.
    h : float
    G0 : Triplets
        ``G(q_n)`` as entries (``system.constraints.G(q_n, sparse=True)``), the same for every
        iterate of a step.

    Raises
    ------
    ValueError
        If the bodies hold different numbers of coordinates, a body holds no constraint or a
        constraint Hessian couples two bodies.
    """

    def __init__(self, system: GGLSystem, x_n, x_n1, h: float, G0: Triplets):
        con, self.system, self.h, self.G0 = system.constraints, system, h, G0
        self.blocks = blocks = _once(system, "blocks", _BodyBlocks)
        q0 = split(system, x_n)[0]
        q1, p1, v, _, gam = split(system, x_n1)
        Minv = system.Minv
        self.G1, self.Gbar = con.G(q1, sparse=True), con.G(q0 + h * v, sparse=True)
        self.T = con.hessian_rows(Minv * p1, sparse=True)
        self.Gamma = blocks.diagonal(con.hessian_sum(gam, sparse=True))
        n, size = blocks.cons.shape[0], blocks.size
        Mib = Minv.reshape(n, 1, size)
        eye = np.eye(size)
        self.P = np.linalg.inv(eye * system.M.reshape(n, 1, size) + h * self.Gamma)
        G1, Gbar, G0, T = (blocks.local(A) for A in (self.G1, self.Gbar, G0, self.T))
        GbarP = Gbar @ self.P
        BMinv = h * (eye * Mib + h * Mib.transpose(0, 2, 1) * self.Gamma * Mib)  # B M⁻¹
        to_lam = np.concatenate([G1 @ BMinv, GbarP + h * T * Mib], axis=1) @ G0.transpose(0, 2, 1)
        r = G1.shape[1]
        values = np.stack([to_lam[:, :r], -((G1 * Mib) @ Gbar.transpose(0, 2, 1)), to_lam[:, r:],
                           GbarP @ T.transpose(0, 2, 1)])  # blocks λλ, λγ, γλ, γγ, times −h
        matrix = Triplets(blocks.rows, blocks.cols, -h * values.ravel(), (2 * system.m,) * 2)
        self.matrix = BandedBlocks([[matrix]], (2 * system.m,), blocks.order)

    def solve(self, r: np.ndarray) -> np.ndarray:
        """The Newton update ``dx`` with ``J dx = r``, ``J`` the whole matrix of :func:`jacobian_ggl`."""
        system, h, blocks = self.system, self.h, self.blocks
        d, m, M, Minv = system.d, system.m, system.M, system.Minv
        r_q, r_p, r_v, r_lam, r_gam = np.split(r, [d, 2 * d, 3 * d, 3 * d + m])
        u = Minv * (r_p + r_v)
        Bu = h * u + h**2 * Minv * blocks.per_body(self.Gamma, u)
        rhs = np.concatenate([r_lam - self.G1 @ (r_q + Bu),
                              r_gam - self.Gbar @ blocks.per_body(self.P, r_p) - h * (self.T @ u)])
        y = self.matrix.solve(rhs)
        d_lam, d_gam = y[:m], y[m:]
        dv = u - h * Minv * (self.G0.T @ d_lam)
        dp = M * blocks.per_body(self.P, M * dv - h * (self.T.T @ d_gam) - r_v)
        dq = r_q + h * dv + h * Minv * (h * blocks.per_body(self.Gamma, dv) + self.Gbar.T @ d_gam)
        return np.concatenate([dq, dp, dv, y])


def residual_ggl(system: GGLSystem, x_n, x_n1, h: float, variant: str = "paper",
                 sparse: bool | None = None) -> np.ndarray:
    """Residual of eqs. (41a-e) / (57a-e), ordered [R_q, R_p, R_v, R_λ, R_γ], shape (3d + 2m,).

    Parameters
    ----------
    system : GGLSystem
    x_n, x_n1 : ndarray, shape (3d + 2m,)
        Only q_n, p_n are read from ``x_n``; ``x_n1`` holds the unknowns of the step.
    h : float
    variant : {"paper", "printed", "no_hessian"}
        "printed": M⁻¹p_n instead of M⁻¹p_{n+1} in the Hessian term of (41b); "no_hessian": no
        Hessian terms in (41b, c) (negative controls).
    sparse : bool, optional
        Form Ḡ, G(q_n) and Γ as sparse matrices (work linear in their nonzeros); default by
        size, :func:`uses_sparse`. The value is the same up to round-off.
    """
    _check_variant(variant)
    sparse = uses_sparse(system, sparse)
    con, Minv = system.constraints, system.Minv
    q0, p0 = split(system, x_n)[:2]
    q1, p1, v, lam, gam = split(system, x_n1)
    qbar = q0 + h * v
    Gbar = con.G(qbar, sparse=sparse)
    Gamma = con.hessian_sum(gam, sparse=sparse)
    p_hess = p0 if variant == "printed" else p1
    Gamma_pv = 0.0 * Gamma if variant == "no_hessian" else Gamma  # Γ in (41b, c)
    R_q = q1 - q0 - h * v - h * Minv * (Gbar.T @ gam)  # (41a)
    R_p = (p1 - p0 + h * system.dV(q0) + h * con.G(q0, sparse=sparse).T @ lam + h * Gamma_pv @ (Minv * p_hess)
           + h * (system.C @ v))  # (41b)/(57b)
    R_v = system.M * v - p1 - h * Gamma_pv @ (Minv * p1)  # (41c)
    R_lam = con.g(q1)  # (41d)
    R_gam = Gbar @ (Minv * p1)  # (41e)
    return np.concatenate([R_q, R_p, R_v, R_lam, R_gam])


def jacobian_ggl(system: GGLSystem, x_n, x_n1, h: float, variant: str = "paper", sparse: bool | None = None):
    """Newton matrix ∂R/∂x_{n+1} of :func:`residual_ggl`, shape (3d + 2m, 3d + 2m).

    Exact for constraints with constant Hessians (otherwise third derivatives of g would enter).
    Assembled from its blocks as a sparse CSC matrix if ``sparse`` (default by size,
    :func:`uses_sparse`): its nonzeros, and for a chain of bodies the work of its sparse LU,
    grow linearly with the number of bodies. Otherwise a dense ndarray.
    """
    sparse = uses_sparse(system, sparse)
    return block_matrix(*_newton_blocks(system, x_n, x_n1, h, variant, sparse), sparse)


def _newton_blocks(system: GGLSystem, x_n, x_n1, h: float, variant: str, sparse: bool) -> tuple[list, tuple]:
    """The blocks and block sizes of :func:`jacobian_ggl` (as :func:`mbslib.newton.block_matrix` takes them)."""
    _check_variant(variant)
    con, M, Minv = system.constraints, system.M, system.Minv
    d = system.d
    q0, p0 = split(system, x_n)[:2]
    q1, p1, v, lam, gam = split(system, x_n1)
    qbar = q0 + h * v
    Gbar = con.G(qbar, sparse=sparse)
    Gamma = con.hessian_sum(gam, sparse=sparse)
    GammaMinv = _scaled(Gamma, cols=Minv)  # Γ M⁻¹
    Tbar = con.hessian_rows(Minv * p1, sparse=sparse)  # rows (D²g_k M⁻¹ p_{n+1})ᵀ, (m, d)
    I = Triplets.identity(d) if sparse else np.eye(d)
    no_hess = variant == "no_hessian"
    T_p = con.hessian_rows(Minv * p0, sparse=sparse) if variant == "printed" else Tbar  # ∂(Γ M⁻¹ p)/∂γ in (41b)
    # block rows R_q, R_p, R_v (the Hessian terms Γ M⁻¹ p of 41b, c), R_λ, R_γ; block columns q, p, v, λ, γ;
    # a list is a sum
    blocks = [
        [I, None, [-h * I, _scaled(Gamma, rows=-(h**2 * Minv))], None, _scaled(Gbar.T, rows=-h * Minv)],
        [None, I if variant != "paper" else [I, h * GammaMinv], h * system.C if system.C.nnz else None,
         h * con.G(q0, sparse=sparse).T, None if no_hess else h * T_p.T],
        [None, -I if no_hess else [-I, -(h * GammaMinv)], Triplets.identity(d, M) if sparse else np.diag(M), None,
         None if no_hess else -h * Tbar.T],
        [con.G(q1, sparse=sparse), None, None, None, None],
        [None, _scaled(Gbar, cols=Minv), h * Tbar, None, None],
    ]
    return blocks, (d, d, d, system.m, system.m)


def _scaled(A, rows=None, cols=None):
    """``diag(rows) A diag(cols)`` (either omitted: the identity) of a dense ``A`` or of its
    entries (:meth:`~mbslib.newton.Triplets.scaled`), entry by entry."""
    if isinstance(A, Triplets):
        return A.scaled(rows, cols)
    return (A if rows is None else rows[:, None] * A) * (1.0 if cols is None else cols)


def jacobian_ggl_start(system: GGLSystem, x_n, x_n1, h: float, variant: str = "paper") -> np.ndarray:
    """∂R/∂(q_n, p_n) of :func:`residual_ggl`, shape (3d + 2m, 2d) (for the step-map Jacobian)."""
    _check_variant(variant)
    con, Minv = system.constraints, system.Minv
    d, m = system.d, system.m
    _, p1, _, lam, gam = split(system, x_n1)  # V, g quadratic: q_n enters via K and constant Hessians
    Gamma = con.hessian_sum(gam)
    J = np.zeros((3 * d + 2 * m, 2 * d))
    J[:d, :d] = -np.eye(d) - h * Minv[:, None] * Gamma  # q̄ depends on q_n through Ḡᵀγ
    J[d : 2 * d, :d] = h * system.K.toarray() + h * con.hessian_sum(lam)  # ∇V(q_n) and G(q_n)ᵀλ
    J[d : 2 * d, d:] = -np.eye(d) + (h * Gamma * Minv if variant == "printed" else 0.0)
    J[3 * d + m :, :d] = con.hessian_rows(Minv * p1)  # Ḡ M⁻¹ p_{n+1}
    return J


def initial_guess(system: GGLSystem, x_n, h: float) -> np.ndarray:
    """Warm start: the previous unknowns with q_{n+1} ← q_n + h v_{n−1} (authors' code)."""
    x = np.array(x_n, dtype=float)
    d = system.d
    x[:d] = x_n[:d] + h * x_n[2 * d : 3 * d]
    return x


def step_ggl(system: GGLSystem, x_n, h: float, t: float = 0.0, *, variant: str = "paper", tol: float = 1e-9,
             max_iter: int = 40, sparse: bool | None = None) -> tuple[np.ndarray, NewtonReport]:
    """One step of the GGL-VI (41a-e), or of the damped scheme (57a-e) if ``system.C`` ≠ 0.

    Parameters
    ----------
    system : GGLSystem
    x_n : ndarray, shape (3d + 2m,)
        Unknown vector of the previous step (or :func:`initial_vector`).
    h : float
        Step size.
    t : float
        Time t_n (only reported on failure).
    variant : {"paper", "printed", "no_hessian"}
        "paper": eqs. (41a-e) with p_{n+1} in the Hessian term; "printed" and "no_hessian" are
        the negative controls of :func:`residual_ggl`.
    tol, max_iter : float, int
        Newton settings (paper: 1e-9 on max|R|).
    sparse : bool, optional
        Assemble the residual and the Newton matrix sparsely and factor it by a banded LU in
        :func:`band_order` (undamped, for ``variant="paper"``: the banded LU of the multipliers'
        system that :class:`WithoutQPV` leaves), or by a sparse LU for a system without bodies
        (:func:`mbslib.newton.sparse_solve`); default by size, :func:`uses_sparse`. The steps
        agree up to round-off.

    Returns
    -------
    x_n1 : ndarray, shape (3d + 2m,)
    report : NewtonReport
        Newton stops at ``max|R| <= tol`` and then applies one more update, as the authors' code
        does (its loop tests the residual *before* each update, so the accepted iterate is one
        update past the test); the final residual is then at round-off rather than at ``tol``.
        The step is accepted only if the residual after that update is still ``<= tol``.
        If plain Newton fails (nearly singular Newton matrix at a singular configuration), the
        step is solved again from the same guess with minimum-norm updates
        (:func:`mbslib.newton.newton_solve` with ``linear_solver="lstsq"``, ``rcond = 1e-12``);
        the report then counts the updates of both attempts (the abandoned one's up to its
        failure) and the fallback's alone (``fallback_iter``), joins both residual histories and
        counts every residual and Jacobian evaluation.

    Raises
    ------
    NewtonError
        If the minimum-norm fallback does not converge either.

    Notes
    -----
    Why the fallback is needed: near the singular configurations of a closed-loop mechanism
    (the four-bar linkage with its bars aligned) the constraint Jacobian loses rank, the
    multipliers λ, γ are no longer unique and the Newton matrix has condition numbers of
    1e13-1e14. Plain LU updates then wander along the almost-null multiplier directions and the
    residual stalls near 1e-6; minimum-norm (truncated-SVD) updates, which drop singular values
    below ``rcond``·σ_max, converge in a few iterations. Away from such configurations the
    fallback never runs, so regular steps are plain Newton with LU updates.
    """
    positive(h=h)
    x_n = np.asarray(x_n, dtype=float)
    calls = {"residual": 0, "jacobian": 0}  # the work of an abandoned LU attempt is counted too

    def residual(x):
        calls["residual"] += 1
        return residual_ggl(system, x_n, x, h, variant, sparse)

    order = band_order(system) if uses_sparse(system, sparse) else None
    G0 = system.constraints.G(x_n[: system.d], sparse=True) if order is not None else None  # G(q_n) of the step

    def jacobian(x, linear_solver):
        calls["jacobian"] += 1
        if order is None or linear_solver != "lu":
            return jacobian_ggl(system, x_n, x, h, variant, sparse)
        if variant == "paper" and not system.C.nnz:
            return WithoutQPV(system, x_n, x, h, G0)
        return BandedBlocks(*_newton_blocks(system, x_n, x, h, variant, True), order)

    guess = initial_guess(system, x_n, h)

    def solve(linear_solver):
        x, report = newton_solve(residual, guess, partial(jacobian, linear_solver=linear_solver), tol=tol,
                                 max_iter=max_iter, t=t, extra_update=True, linear_solver=linear_solver,
                                 rcond=MIN_NORM_RCOND)
        if not report.residual_history[-1] <= tol:
            reason = f"the extra update raised max|R| to {report.residual_history[-1]:.1e}"
            raise NewtonError(reason, report.residual_history, t=t)
        return x, report

    try:
        return solve("lu")
    except NewtonError as failure:
        # nearly singular Newton matrix (see Notes): minimum-norm updates from the same guess
        try:
            x, report = solve("lstsq")
        except NewtonError as second:
            reason = f"no convergence with minimum-norm updates either ({second.reason})"
            raise NewtonError(reason, second.residual_history, t=t) from None
        history = failure.residual_history + report.residual_history
        failed = len(failure.residual_history) - 1  # updates of the abandoned LU attempt
        return x, replace(report, n_iter=failed + report.n_iter, residual_history=history,
                          fallback_iter=report.n_iter,
                          n_residual=calls["residual"], n_jacobian=calls["jacobian"],
                          n_factorisations=calls["jacobian"])


class GGLTrajectory(NamedTuple):
    """A GGL-VI trajectory in node form (time-major, N + 1 rows).

    ``v[n]`` is v_n (the velocity of step n → n+1, NaN in the last row), ``lam[n]`` is λ_n
    (NaN in the last row), ``gam[n]`` is γ_n (NaN in row 0).
    """

    t: np.ndarray
    q: np.ndarray
    p: np.ndarray
    v: np.ndarray
    lam: np.ndarray
    gam: np.ndarray


def split_trajectory(system: GGLSystem, traj) -> GGLTrajectory:
    """Re-index a :class:`~mbslib.trajectory.Trajectory` of unknown vectors to node quantities."""
    u = split(system, traj.x)
    nan_row = lambda a: np.full((1, a.shape[1]), np.nan)  # noqa: E731
    v = np.vstack([u.v[1:], nan_row(u.v)])
    lam = np.vstack([u.lam[1:], nan_row(u.lam)])
    gam = np.vstack([nan_row(u.gam), u.gam[1:]])
    return GGLTrajectory(traj.t, u.q, u.p, v, lam, gam)



def step_map_jacobian_ggl(system: GGLSystem, x_n, x_n1, h: float, variant: str = "paper") -> np.ndarray:
    """Jacobian of the one-step map (q_n, p_n) ↦ (q_{n+1}, p_{n+1}) at a converged step, shape (2d, 2d).

    Implicit differentiation of R(x_{n+1}; q_n, p_n) = 0 (see :mod:`mbslib.symplectic`).
    """
    return step_map_jacobian(
        jacobian_ggl(system, x_n, x_n1, h, variant, sparse=False), jacobian_ggl_start(system, x_n, x_n1, h, variant),
        2 * system.d
    )
