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
body by body (:class:`WithoutQPV`), the multipliers (λ, γ) left factorised front by front, all in
compiled code.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import NamedTuple, Protocol, runtime_checkable

import numba
import numpy as np
import scipy.sparse as sp

from mbslib.kernels import inverse
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
    matrix, body by body, for its banded LU (:class:`mbslib.newton.BandedBlocks`); None for a
    system without bodies (without ``offsets``, the start of each body's coordinates in q, as in
    :class:`~mbslib.systems.directors.ConstrainedSystem`): reverse Cuthill–McKee orders those.

    A constraint belongs to the last body whose coordinates it holds. A body's block: the
    multipliers ``(λ_k, γ_k)`` of its linear constraints (the joints to the bodies before it);
    then ``(q_i, p_i)`` of the coordinates that linear constraints hold, which both joints of a
    body in a chain couple to (41b, d, e), in the middle of the body's other unknowns: half of
    them before, half after, namely ``(q_i, p_i, v_i)`` of half of the other coordinates, the
    multipliers of the body's quadratic constraints (its orthonormality, 41a–c, e), ``v_i`` of the
    held coordinates, ``(q_i, p_i, v_i)`` of the other half. The chain of 64 rods: a band of
    40 + 41 diagonals (reverse Cuthill–McKee: 102 + 100).
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
    """Where the entries of a system's matrices go in per-body blocks and the fronts of the
    multipliers' elimination (:class:`WithoutQPV`).

    The bodies hold ``size`` coordinates each; body b's constraints (those whose rows hold its
    coordinates) are ``cons[b, :count[b]]`` (the rest of the row padding). Its blocks are the
    rows of those constraints over its coordinates, shape (N, R, size), built from the entries
    of the constraint Hessians (``h_*``: body, slot, local row and column, constraint, value;
    within one body) and of the linear parts (``a_*``: body, slot, local column, value). Body b's
    local multipliers are ``(λ_k, γ_k)`` of its R slots, λ first.

    Fronts: the multipliers' matrix is the sum over the bodies of their local matrices, so that
    after bodies 0..b every multiplier whose constraints hold no later body is fully summed and is
    eliminated; front b holds the multipliers passed on from front b−1 and body b's, those
    eliminated at b first (``n_elim[b]``), the rest after. ``front[start[b]:start[b+1]]`` are its
    multipliers (indices into (λ, γ)), ``local_at[b, l]`` the place of local multiplier l in it
    (−1: padding), ``carry[e]`` the place in front b+1 of a passed-on entry e (−1: eliminated).
    For a chain of rods: 24 multipliers per front (the joints to both neighbours and the rod's own
    six constraints), 18 eliminated, about 4300 multiply-adds each, against the banded LU of the
    whole multipliers' matrix (23 + 23 diagonals in :func:`band_order`) with 23 · 46 per multiplier.
    """

    def __init__(self, system: GGLSystem):
        d, m = system.d, system.m
        offsets = np.asarray(system.offsets)
        n = offsets.size
        size = d // n
        if not np.array_equal(offsets, size * np.arange(n)) or size * n != d:
            raise ValueError(f"the bodies must hold equally many coordinates each, got offsets {tuple(offsets)} "
                             f"for d = {d}")
        k, i, j, value, rows_A, cols_A, a = _once(system, "entries", _entries_of)
        if np.any(i // size != j // size):
            raise ValueError("the constraint Hessians must not couple two bodies")
        pairs = np.unique(np.r_[i // size * m + k, cols_A // size * m + rows_A])  # (body, constraint), body by body
        body, constraint = np.divmod(pairs, m)
        count = np.bincount(body, minlength=n)
        if not count.all():
            raise ValueError(f"every body must hold a constraint; body {np.argmin(count)} holds none")
        slot = np.arange(pairs.size) - np.repeat(np.cumsum(count) - count, count)
        self.size, self.n, self.count = size, n, count
        self.cons = np.repeat(constraint[slot == 0][:, None], count.max(), axis=1)
        self.cons[body, slot] = constraint

        def slot_of(b, c):
            return slot[np.searchsorted(pairs, b * m + c)]

        self.h_body, self.h_row, self.h_col, self.h_con = i // size, i % size, j % size, k
        self.h_slot, self.h_value = slot_of(i // size, k), value
        self.a_body, self.a_col, self.a_value = cols_A // size, cols_A % size, a
        self.a_slot = slot_of(cols_A // size, rows_A)
        self._fronts(m)

    def _fronts(self, m: int) -> None:
        """The fronts of the elimination (class docstring)."""
        n, r = self.cons.shape
        last = np.zeros(m, dtype=int)
        for b in range(n):
            last[self.cons[b, : self.count[b]]] = b
        local = np.concatenate([self.cons, m + self.cons], axis=1)  # (λ, γ) of the slots
        real = np.tile(np.arange(r) < self.count[:, None], 2)
        fronts, n_elim, self.local_at = [], [], np.full((n, 2 * r), -1)
        passed: list[int] = []
        for b in range(n):
            members = passed + [x for x in local[b][real[b]] if x not in passed]
            done = [x for x in members if last[x % m] == b]
            front = done + [x for x in members if last[x % m] != b]
            place = {x: e for e, x in enumerate(front)}
            self.local_at[b, real[b]] = [place[x] for x in local[b][real[b]]]
            fronts.append(front)
            n_elim.append(len(done))
            passed = front[len(done) :]
        self.start = np.cumsum([0] + [len(f) for f in fronts])
        self.front = np.concatenate([np.asarray(f, dtype=np.int64) for f in fronts])
        self.n_elim = np.asarray(n_elim)
        self.carry = np.full(self.front.size, -1)
        for b in range(n - 1):
            place = {x: e for e, x in enumerate(fronts[b + 1])}
            kept = range(self.start[b] + n_elim[b], self.start[b + 1])
            self.carry[kept] = [place[x] for x in self.front[kept]]
        self.storage = np.cumsum([0] + [len(f) ** 2 for f in fronts])  # of each front's matrix

    def rows(self, w: np.ndarray, linear: bool = True) -> np.ndarray:
        """Body b's rows of ``G(w)`` (``linear``) or of ``(H_k w)ᵀ``, shape (N, R, size)."""
        empty = np.zeros(0)
        return _local_rows(np.ascontiguousarray(w, dtype=float), self.h_body, self.h_slot, self.h_row, self.h_col,
                           self.h_value, self.a_body if linear else empty.astype(int),
                           self.a_slot if linear else empty.astype(int),
                           self.a_col if linear else empty.astype(int), self.a_value if linear else empty,
                           self.cons.shape[1], self.size)


@numba.njit(cache=True)
def _local_rows(w, h_body, h_slot, h_row, h_col, h_value, a_body, a_slot, a_col, a_value, r, size):
    """Rows ``H_k w + a_k`` of every body's constraints over its coordinates, shape (N, R, size)
    (:meth:`_BodyBlocks.rows`)."""
    n = w.size // size
    out = np.zeros((n, r, size))
    for e in range(h_value.size):
        b = h_body[e]
        out[b, h_slot[e], h_row[e]] += h_value[e] * w[b * size + h_col[e]]
    for e in range(a_value.size):
        out[a_body[e], a_slot[e], a_col[e]] += a_value[e]
    return out


@numba.njit(cache=True)
def _times_transposed(A, B, out, scale):
    """``out += scale · A Bᵀ`` (A: rows × n, B: columns × n), skipping the zeros of B."""
    for j in range(B.shape[0]):
        for k in range(B.shape[1]):
            b = B[j, k]
            if b != 0.0:
                for i in range(A.shape[0]):
                    out[i, j] += scale * A[i, k] * b


@numba.njit(cache=True)
def _times(A, B, out):
    """``out += A B``, skipping the zeros of A."""
    for i in range(A.shape[0]):
        for k in range(A.shape[1]):
            a = A[i, k]
            if a != 0.0:
                for j in range(B.shape[1]):
                    out[i, j] += a * B[k, j]


@numba.njit(cache=True)
def _local_matrices(h, M, Minv, G1, Gbar, G0, T, Gamma):
    """Every body's ``P = (M + h Γ)⁻¹`` and its local multipliers' matrix, the blocks λλ, λγ, γλ, γγ
    of :class:`WithoutQPV`'s equations, shape (N, 2R, 2R), and the first body whose ``M + h Γ``
    is singular to working precision (−1: none; the blocks from it on are then left unset)."""
    n, r, size = G1.shape
    P = np.empty((n, size, size))
    local = np.zeros((n, 2 * r, 2 * r))
    A, BMinv = np.empty((size, size)), np.empty((size, size))
    G1B, GbarP, Y, G1Mi = np.empty((r, size)), np.empty((r, size)), np.empty((r, size)), np.empty((r, size))
    for b in range(n):
        Mi = Minv[b * size : (b + 1) * size]
        for i in range(size):
            for j in range(size):
                A[i, j] = h * Gamma[b, i, j]
                BMinv[i, j] = h * h * Mi[i] * Gamma[b, i, j] * Mi[j]  # B M⁻¹ = h M⁻¹ + h² M⁻¹ Γ M⁻¹
            A[i, i] += M[b * size + i]
            BMinv[i, i] += h * Mi[i]
        if not inverse(A, P[b]):
            return P, local, b
        for s in range(r):
            for i in range(size):
                G1B[s, i], GbarP[s, i] = 0.0, 0.0
        _times(G1[b], BMinv, G1B)
        _times(Gbar[b], P[b], GbarP)
        for s in range(r):
            for i in range(size):
                Y[s, i] = GbarP[s, i] + h * T[b, s, i] * Mi[i]  # Ḡ P + h T̄ M⁻¹
                G1Mi[s, i] = G1[b, s, i] * Mi[i]
        block = local[b]
        _times_transposed(G1B, G0[b], block[:r, :r], -h)  # λλ: −h G₁ B M⁻¹ G₀ᵀ
        _times_transposed(G1Mi, Gbar[b], block[:r, r:], h)  # λγ: h G₁ M⁻¹ Ḡᵀ
        _times_transposed(Y, G0[b], block[r:, :r], -h)  # γλ
        _times_transposed(GbarP, T[b], block[r:, r:], -h)  # γγ: −h Ḡ P T̄ᵀ
    return P, local, -1


@numba.njit(cache=True)
def _factorise_fronts(local, local_at, front, start, n_elim, carry, storage):
    """LU factors of the fronts (:class:`_BodyBlocks`) with partial pivoting among each front's
    eliminated rows: ``(F, pivots, failed)``, F every front's matrix (row-major, at ``storage[b]``)
    with its L and U factors and ``failed`` the multiplier of a zero pivot (−1: none)."""
    F = np.zeros(storage[-1])
    pivots = np.zeros(front.size, dtype=np.int64)
    for b in range(start.size - 1):
        nf, ne = start[b + 1] - start[b], n_elim[b]
        A = F[storage[b] : storage[b + 1]].reshape(nf, nf)  # holds what front b − 1 passed on
        for l1 in range(local_at.shape[1]):
            e1 = local_at[b, l1]
            if e1 >= 0:
                for l2 in range(local_at.shape[1]):
                    e2 = local_at[b, l2]
                    if e2 >= 0:
                        A[e1, e2] += local[b, l1, l2]
        for k in range(ne):
            p = k
            for i in range(k + 1, ne):
                if abs(A[i, k]) > abs(A[p, k]):
                    p = i
            if A[p, k] == 0.0:
                return F, pivots, front[start[b] + k]
            pivots[start[b] + k] = p
            if p != k:
                for j in range(nf):
                    A[k, j], A[p, j] = A[p, j], A[k, j]
            for i in range(k + 1, nf):
                factor = A[i, k] / A[k, k]
                A[i, k] = factor
                if factor != 0.0:
                    for j in range(k + 1, nf):
                        A[i, j] -= factor * A[k, j]
        if b + 1 < start.size - 1:  # the Schur complement of the rest goes on to front b + 1
            nn = start[b + 2] - start[b + 1]
            following = F[storage[b + 1] : storage[b + 2]].reshape(nn, nn)
            for i in range(ne, nf):
                for j in range(ne, nf):
                    following[carry[start[b] + i], carry[start[b] + j]] += A[i, j]
    return F, pivots, -1


@numba.njit(cache=True)
def _solve_fronts(F, pivots, front, start, n_elim, storage, rhs):
    """The solution of the multipliers' equations for the right-hand side ``rhs`` from the factors
    of :func:`_factorise_fronts` (forward through the fronts, then back)."""
    x = rhs.copy()  # forward: each front's eliminated entries take their L-solved values
    for b in range(start.size - 1):
        nf, ne, s = start[b + 1] - start[b], n_elim[b], start[b]
        A = F[storage[b] : storage[b + 1]].reshape(nf, nf)
        y = np.empty(nf)
        for e in range(nf):
            y[e] = x[front[s + e]]
        for k in range(ne):
            p = pivots[s + k]
            y[k], y[p] = y[p], y[k]
        for k in range(ne):
            for i in range(k + 1, nf):
                y[i] -= A[i, k] * y[k]
        for e in range(nf):
            x[front[s + e]] = y[e]
    for b in range(start.size - 2, -1, -1):  # back: the passed-on entries are solved already
        nf, ne, s = start[b + 1] - start[b], n_elim[b], start[b]
        A = F[storage[b] : storage[b + 1]].reshape(nf, nf)
        for k in range(ne - 1, -1, -1):
            total = x[front[s + k]]
            for j in range(k + 1, nf):
                total -= A[k, j] * x[front[s + j]]
            x[front[s + k]] = total / A[k, k]
    return x


@numba.njit(cache=True)
def _rows_times(A, cons, count, x, out, scale):
    """``out[cons[b, s]] += scale · A[b, s] · x_b`` over every body's real slots (``A`` per-body
    rows (N, R, size) of an (m, d) matrix, times x of shape (d,))."""
    size = A.shape[2]
    for b in range(A.shape[0]):
        for s in range(count[b]):
            total = 0.0
            for i in range(size):
                total += A[b, s, i] * x[b * size + i]
            out[cons[b, s]] += scale * total


@numba.njit(cache=True)
def _transposed_times(A, cons, count, y, out, scale):
    """``out_b += scale · Σ_s A[b, s] y[cons[b, s]]``: the per-body rows' transpose times y (m,)."""
    size = A.shape[2]
    for b in range(A.shape[0]):
        for s in range(count[b]):
            c = scale * y[cons[b, s]]
            for i in range(size):
                out[b * size + i] += c * A[b, s, i]


@numba.njit(cache=True)
def _per_body(blocks, x, out, scale):
    """``out += scale · diag(blocks) x`` for per-body blocks (N, size, size)."""
    size = blocks.shape[1]
    for b in range(blocks.shape[0]):
        for i in range(size):
            total = 0.0
            for j in range(size):
                total += blocks[b, i, j] * x[b * size + j]
            out[b * size + i] += scale * total


@numba.njit(cache=True)
def _update(h, r, M, Minv, G1, Gbar, G0, T, Gamma, P, cons, count, F, pivots, front, start, n_elim, storage):
    """The Newton update ``dx = [dq, dp, dv, dλ, dγ]`` of :class:`WithoutQPV` for the residual ``r``."""
    d, m = M.size, (r.size - 3 * M.size) // 2
    dx = np.empty(r.size)
    u, a, b, c = np.empty(d), np.zeros(d), np.zeros(d), np.zeros(d)
    for i in range(d):
        u[i] = Minv[i] * (r[d + i] + r[2 * d + i])  # u = M⁻¹(r_p + r_v)
    _per_body(Gamma, u, a, 1.0)
    for i in range(d):
        a[i] = r[i] + h * u[i] + h * h * Minv[i] * a[i]  # r_q + B u
    _per_body(P, r[d : 2 * d], b, 1.0)  # P r_p
    rhs = np.empty(2 * m)
    for i in range(2 * m):
        rhs[i] = r[3 * d + i]
    _rows_times(G1, cons, count, a, rhs[:m], -1.0)  # r_λ − G₁ (r_q + B u)
    _rows_times(Gbar, cons, count, b, rhs[m:], -1.0)  # r_γ − Ḡ P r_p − h T̄ u
    _rows_times(T, cons, count, u, rhs[m:], -h)
    y = _solve_fronts(F, pivots, front, start, n_elim, storage, rhs)
    for i in range(2 * m):
        dx[3 * d + i] = y[i]
    _transposed_times(G0, cons, count, y[:m], c, 1.0)
    dp, dv = dx[d : 2 * d], dx[2 * d : 3 * d]
    for i in range(d):
        dv[i] = u[i] - h * Minv[i] * c[i]  # dv = u − h M⁻¹ G₀ᵀ dλ
        b[i] = M[i] * dv[i] - r[2 * d + i]
    _transposed_times(T, cons, count, y[m:], b, -h)  # M dv − h T̄ᵀ dγ − r_v
    for i in range(d):  # (loops, not slice assignments: numba compiles those slowly)
        dp[i], a[i] = 0.0, 0.0
    _per_body(P, b, dp, 1.0)
    _per_body(Gamma, dv, a, h)
    _transposed_times(Gbar, cons, count, y[m:], a, 1.0)  # h Γ dv + Ḡᵀ dγ
    for i in range(d):
        dp[i] *= M[i]  # dp = M P (M dv − h T̄ᵀ dγ − r_v)
        dx[i] = r[i] + h * dv[i] + h * Minv[i] * a[i]  # dq = r_q + h dv + h M⁻¹(h Γ dv + Ḡᵀ dγ)
    return dx


class WithoutQPV:
    """The sparse Newton system of (41a–e), undamped, solved with q, p and v eliminated: with
    ``r = [r_q, r_p, r_v, r_λ, r_γ]`` and the update ``dx`` (``J dx = r``), the sum of the rows of
    (41b) and (41c), ``M dv + h G(q_n)ᵀ dλ = r_p + r_v``, gives ``dv = u − h M⁻¹ G(q_n)ᵀ dλ``,
    ``u = M⁻¹(r_p + r_v)``; (41c) then gives ``dp = M P (M dv − h T̄ᵀ dγ − r_v)`` with the per-body
    blocks ``P = (M + h Γ)⁻¹``, and (41a) ``dq = r_q + B dv + h M⁻¹ Ḡᵀ dγ``, ``B = h I + h² M⁻¹ Γ``.
    What is left of (41d, e) are the multipliers' equations

        −h G₁ B M⁻¹ G₀ᵀ dλ + h G₁ M⁻¹ Ḡᵀ dγ = r_λ − G₁ (r_q + B u),
        −h (Ḡ P + h T̄ M⁻¹) G₀ᵀ dλ − h Ḡ P T̄ᵀ dγ = r_γ − Ḡ P r_p − h T̄ u,

    (``G₁ = G(q_{n+1})``, ``G₀ = G(q_n)``, ``T̄`` the rows ``(D²g_k M⁻¹ p_{n+1})ᵀ``), whose matrix is
    a sum over the bodies of products of per-body blocks (the rows of each body's constraints over
    its coordinates, ``_BodyBlocks``). Compiled, body by body: the local matrices, their sum
    factorised front by front (the multipliers of body b's constraints that no later body holds
    are eliminated at body b, with partial pivoting among them) and the update; 2m unknowns
    instead of 3d + 2m, the same Newton update up to round-off. What the Jacobian of
    :func:`step_ggl` hands to :func:`~mbslib.newton.newton_solve` for a system with bodies of
    equally many coordinates (``offsets``), quadratic constraints whose Hessians stay within the
    bodies (:class:`~mbslib.systems.directors.QuadraticConstraints`) and no damping (C = 0).

    Parameters
    ----------
    system : GGLSystem
    x_n, x_n1 : ndarray, shape (3d + 2m,)
        As in :func:`jacobian_ggl`: the previous unknowns (q_n) and the iterate.
    h : float
    G0 : ndarray, shape (N, R, size), optional
        The bodies' rows of ``G(q_n)`` (``_BodyBlocks.rows(q_n)``), the same for every iterate of a
        step; computed if omitted.

    Raises
    ------
    ValueError
        If the bodies hold different numbers of coordinates, a body holds no constraint or a
        constraint Hessian couples two bodies.
    """

    def __init__(self, system: GGLSystem, x_n, x_n1, h: float, G0: np.ndarray | None = None):
        self.system, self.h = system, h
        self.blocks = blocks = _once(system, "blocks", _BodyBlocks)
        q0 = split(system, x_n)[0]
        q1, p1, v, _, gam = split(system, x_n1)
        self.G0 = blocks.rows(q0) if G0 is None else G0
        self.G1, self.Gbar, self.T = blocks.rows(q1), blocks.rows(q0 + h * v), blocks.rows(system.Minv * p1, False)
        self.Gamma = _hessian_blocks(np.asarray(gam, dtype=float), blocks.h_body, blocks.h_row, blocks.h_col,
                                     blocks.h_con, blocks.h_value, blocks.n, blocks.size)
        self.P, self.local, self.singular_body = _local_matrices(h, system.M, system.Minv, self.G1, self.Gbar,
                                                                 self.G0, self.T, self.Gamma)
        self.factors = None

    def solve(self, r: np.ndarray) -> np.ndarray:
        """The Newton update ``dx`` with ``J dx = r``, ``J`` the whole matrix of :func:`jacobian_ggl`.

        Raises ``numpy.linalg.LinAlgError`` for a zero pivot (an exactly singular matrix) or a body
        whose ``M + h Γ`` is singular."""
        b = self.blocks
        if self.singular_body >= 0:
            raise np.linalg.LinAlgError(f"M + h Γ of body {self.singular_body} is singular")
        if self.factors is None:
            F, pivots, failed = _factorise_fronts(self.local, b.local_at, b.front, b.start, b.n_elim, b.carry,
                                                  b.storage)
            if failed >= 0:
                raise np.linalg.LinAlgError(f"zero pivot at multiplier {failed} of (λ, γ)")
            self.factors = F, pivots
        return _update(self.h, np.asarray(r, dtype=float), self.system.M, self.system.Minv, self.G1, self.Gbar,
                       self.G0, self.T, self.Gamma, self.P, b.cons, b.count, *self.factors, b.front, b.start,
                       b.n_elim, b.storage)


@numba.njit(cache=True)
def _hessian_blocks(w, h_body, h_row, h_col, h_con, h_value, n, size):
    """The diagonal blocks of ``Σ_k w_k H_k`` (Γ for w = γ), shape (N, size, size)."""
    out = np.zeros((n, size, size))
    for e in range(h_value.size):
        out[h_body[e], h_row[e], h_col[e]] += w[h_con[e]] * h_value[e]
    return out


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
    Minv = system.Minv
    q0, p0 = split(system, x_n)[:2]
    q1, p1, v, lam, gam = split(system, x_n1)
    p_hess = p0 if variant == "printed" else p1
    Gbar_gam, G0_lam, Gamma_p, Gamma_p1, g1, Gbar_p1 = _constraint_terms(system, sparse, q0, q0 + h * v, q1,
                                                                         Minv * p_hess, Minv * p1, lam, gam)
    hess = 0.0 if variant == "no_hessian" else 1.0  # Γ in (41b, c)
    R_q = q1 - q0 - h * v - h * Minv * Gbar_gam  # (41a)
    R_p = p1 - p0 + h * system.dV(q0) + h * G0_lam + h * hess * Gamma_p  # (41b)
    if system.C.nnz:
        R_p += h * (system.C @ v)  # (57b)
    R_v = system.M * v - p1 - h * hess * Gamma_p1  # (41c)
    R_lam = g1  # (41d)
    R_gam = Gbar_p1  # (41e)
    return np.concatenate([R_q, R_p, R_v, R_lam, R_gam])


def _constraint_terms(system: GGLSystem, sparse: bool, q0, qbar, q1, w, w1, lam, gam) -> tuple:
    """``Ḡᵀγ, G(q_n)ᵀλ, Γ w, Γ w₁, g(q_{n+1}), Ḡ w₁`` of (41a–e) (``Γ = Σ γ_k H_k``): for sparse
    quadratic constraints (:class:`~mbslib.systems.directors.QuadraticConstraints`) one compiled
    pass over the entries of their Hessians and linear parts, otherwise from their matrices."""
    con = system.constraints
    if sparse and hasattr(con, "linear_entries"):
        return _sparse_terms(q0, qbar, q1, w, w1, lam, gam, *_once(system, "entries", _entries_of), con.c)
    Gbar, Gamma = con.G(qbar, sparse=sparse), con.hessian_sum(gam, sparse=sparse)
    return Gbar.T @ gam, con.G(q0, sparse=sparse).T @ lam, Gamma @ w, Gamma @ w1, con.g(q1), Gbar @ w1


def _entries_of(system: GGLSystem) -> tuple:
    """The entries ``(k, i, j, value)`` of quadratic constraints' Hessians and ``(row, col, value)`` of their
    linear parts."""
    con = system.constraints
    rows_A, cols_A, a = con.linear_entries
    k, i, j, rows_A, cols_A = (np.asarray(index, dtype=np.int64) for index in (*con.H.coords, rows_A, cols_A))
    return k, i, j, np.asarray(con.H.data, dtype=float), rows_A, cols_A, np.asarray(a, dtype=float)


@numba.njit(cache=True)
def _sparse_terms(q0, qbar, q1, w, w1, lam, gam, k, i, j, value, rows_A, cols_A, a, c):
    """:func:`_constraint_terms` from the entries: ``G(q)`` has the entries ``(k, i, H_k[i, j] q_j)``
    and ``(row, col, a)``, ``Γ`` the entries ``(i, j, γ_k H_k[i, j])``."""
    d, m = q0.size, c.size
    Gbar_gam, G0_lam, Gamma_w, Gamma_w1 = np.zeros(d), np.zeros(d), np.zeros(d), np.zeros(d)
    quadratic, linear, Gbar_w1 = np.zeros(m), np.zeros(m), np.zeros(m)
    for e in range(value.size):
        kk, ii, jj, v = k[e], i[e], j[e], value[e]
        Gbar_gam[ii] += v * qbar[jj] * gam[kk]
        G0_lam[ii] += v * q0[jj] * lam[kk]
        Gamma_w[ii] += gam[kk] * v * w[jj]
        Gamma_w1[ii] += gam[kk] * v * w1[jj]
        quadratic[kk] += 0.5 * v * q1[ii] * q1[jj]
        Gbar_w1[kk] += v * qbar[jj] * w1[ii]
    for e in range(a.size):
        r, col = rows_A[e], cols_A[e]
        Gbar_gam[col] += a[e] * gam[r]
        G0_lam[col] += a[e] * lam[r]
        linear[r] += a[e] * q1[col]
        Gbar_w1[r] += a[e] * w1[col]
    g = np.empty(m)
    for kk in range(m):
        g[kk] = quadratic[kk] + linear[kk] - c[kk]
    return Gbar_gam, G0_lam, Gamma_w, Gamma_w1, g, Gbar_w1


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
        :func:`band_order` (undamped, for ``variant="paper"``: q, p, v eliminated and the
        multipliers' fronts factorised, :class:`WithoutQPV`), or by a sparse LU for a system without bodies
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
    eliminate = order is not None and variant == "paper" and not system.C.nnz  # WithoutQPV
    G0 = _once(system, "blocks", _BodyBlocks).rows(x_n[: system.d]) if eliminate else None  # G(q_n) of the step

    def jacobian(x, linear_solver):
        calls["jacobian"] += 1
        if order is None or linear_solver != "lu":
            return jacobian_ggl(system, x_n, x, h, variant, sparse)
        if eliminate:
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
