"""Integrators for Livens' principle and their Hamiltonian counterparts (paper 000).

Kinon & Betsch, *Multibody System Dynamics* (2024), Sects. 4–5 and App. D. The Livens schemes
work on the state ``x = [q, p, v, λ]`` (length 3n + m) of a system from
:mod:`mbslib.systems.livens_systems`; the Hamiltonian schemes EMH/MPH work on ``x = [q, p, λ]``
of a single quaternion body.

Schemes (one pure ``step_<name>(system, x_n, h, t=0.0) -> (x_n1, StepReport)`` each, with the
residual and its analytic Jacobian beside it):

- ``eml``     energy–momentum scheme (72a–d); quaternion form (86a–d) through the system's DGs;
- ``mpl``     implicit midpoint rule on Livens' equations;
- ``reml``    EML with v and p eliminated, unknowns (q^{n+1}, λ) (101)–(103);
- ``null_eml`` EML projected with G(q^{n+1/2}), unknown rotation increment ϑ (104)–(105);
- ``emh``     Hamiltonian EM scheme with the regular mass matrix M4 (140), invariant π = Q_l(q)ᵀp;
- ``mph``     implicit midpoint rule on Hamilton's equations with M4.

Newton follows the authors' rule (their code's ``Solver``): stop when max|R| ≤ 1e-9, then apply
one more update (:func:`mbslib.newton.newton_solve` with ``extra_update=True``). An
antipodal-branch guard raises :class:`~mbslib.newton.NewtonError` if a quaternion flips sign
within a step. Every ``step_*`` raises ``ValueError`` unless the step size ``h`` is a finite
positive number.

What a scheme needs of its system is one protocol: :class:`LivensSystem` for EML, REML, MPL and
Null-EML (:class:`mbslib.formulations.quaternions.QuaternionSystem` builds one from a model),
:class:`QuaternionBodySystem` for EMH and MPH (the ``system`` of
:class:`mbslib.formulations.quaternions.RotationSystem`).

Each step counts its work where it happens (:class:`StepReport`): residual evaluations (those
inside a finite-difference Jacobian included), Jacobian evaluations, finite-difference columns
and linear solves, so that cost claims (paper Fig. 9) rest on counts, not on measured times.

Large systems (:data:`SPARSE_FROM` unknowns on) assemble the residual and the Newton matrix of
EML, MPL and REML from the system's sparse matrices (``sparse=True`` of
:class:`~mbslib.formulations.quaternions.QuaternionSystem`); EML and MPL eliminate v and p from
their Newton system (``_WithoutVP``), which leaves REML's unknowns, and the sparse matrix
is factored by a banded LU: put straight into band storage in the system's ``band_order``
(:class:`mbslib.newton.BandedBlocks`), or else by :func:`mbslib.newton.sparse_solve`, so that for
a chain of bodies the work of a step grows linearly with the number of bodies; the smaller systems keep
the dense matrices and LAPACK's LU. A Newton matrix is built from the evaluations of the
residual at the same iterate. A dense system of bodies, gravity and spherical joints alone (a
:class:`~mbslib.formulations.quaternions.QuaternionSystem` with ``compiled_data``) evaluates the
residual and Newton matrix of an EML, MPL or REML iteration in one compiled call
(``_compiled_equations``; the same equations in the same order, the
same numbers bitwise), so that a single body's step costs about 0.1 ms.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import Protocol, runtime_checkable

import numba
import numpy as np
import scipy.sparse as sp
from scipy.linalg.lapack import dgesv

from mbslib.formulations.quaternions import (
    _dense_constraint_hessian,
    _dense_constraint_jacobian,
    _dense_constraints,
    _dense_kinetic,
)
from mbslib.newton import (
    BandedBlocks,
    NewtonError,
    NewtonReport,
    Triplets,
    _add_block,
    block_matrix,
    newton_solve,
    sparse_solve,
)
from mbslib.quaternions import (
    KineticParts,
    Ql,
    _exp_s3_with_jacobian,
    _kinetic_blocks,
    _put_G,
    _put_minus,
    _Ql,
    _Qr,
)
from mbslib.validation import positive

# ---------------------------------------------------------------------------------------------
# what the schemes need of a system
# ---------------------------------------------------------------------------------------------


@runtime_checkable
class LivensSystem(Protocol):
    """A mechanical system in Livens' form (paper eqs. 19a–d), as EML, REML, MPL and Null-EML use it.

    Coordinates ``q``, velocities ``v`` and momenta ``p`` have shape (n,), multipliers ``λ``
    shape (m,); the mass matrix ``M(q)`` may be singular. Every constraint is quadratic, so its
    Gonzalez discrete gradient is the midpoint Jacobian ``∇g(q^{n+1/2})`` (Sect. 4). Null-EML
    takes one quaternion body alone (``n = 4``, ``m = 1``, no external force).

    A system solved sparsely (:func:`uses_sparse`) also takes the keyword ``sparse=True`` in
    ``grad_kinetic``, ``dg_kinetic``, ``hess_potential``, ``dg_potential``,
    ``constraint_jacobian`` and ``constraint_hessian`` and returns their matrices as scipy.sparse
    arrays (the values of the dense ones); it may give ``band_order``, the unknowns ``(q, λ)`` of
    its Newton systems in the order of a narrow band for the banded LU
    (:class:`mbslib.newton.BandedBlocks`; without it, :func:`mbslib.newton.sparse_solve` in the
    order of reverse Cuthill–McKee).

    Attributes
    ----------
    n : int
        Number of coordinates q (and of v, p).
    m : int
        Number of holonomic constraints g(q) = 0.
    quaternion_slices : tuple
        Slices of q that are unit quaternions (for the antipodal-branch guard).
    """

    n: int
    m: int
    quaternion_slices: tuple

    def kinetic_energy(self, q: np.ndarray, v: np.ndarray) -> float:
        """``T = ½ v·M(q) v`` (the energies of eqs. 74, 80)."""
        ...

    def potential(self, q: np.ndarray) -> float:
        """``V(q)``."""
        ...

    def grad_kinetic(self, q: np.ndarray, v: np.ndarray) -> KineticParts:
        """Continuous ``∂_qT, ∂_vT`` (n,) and their Jacobians in ``q, v`` (n, n), for MPL."""
        ...

    def dg_kinetic(self, q0: np.ndarray, q1: np.ndarray, v0: np.ndarray, v1: np.ndarray) -> KineticParts:
        """Discrete ``∂̄_qT, ∂̄_vT`` (n,) (App. A, eqs. 87–88) and their Jacobians in the end
        values ``q1, v1`` (n, n): the kinetic terms of (72b, c), (101)–(104)."""
        ...

    def grad_potential(self, q: np.ndarray) -> np.ndarray:
        """``∇V(q)``, shape (n,) (MPL)."""
        ...

    def hess_potential(self, q: np.ndarray) -> np.ndarray:
        """``∇²V(q)``, shape (n, n) (MPL's Jacobian)."""
        ...

    def dg_potential(self, q0: np.ndarray, q1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Discrete gradient ``∇̄V(q0, q1)`` (n,) of (72b) and its Jacobian in ``q1`` (n, n)."""
        ...

    def constraint(self, q: np.ndarray) -> np.ndarray:
        """``g(q)``, shape (m,) (72d)."""
        ...

    def constraint_jacobian(self, q: np.ndarray) -> np.ndarray:
        """``∇g(q)``, shape (m, n) (72b at the midpoint)."""
        ...

    def constraint_hessian(self, q: np.ndarray, lam: np.ndarray) -> np.ndarray:
        """``Σ_k λ_k ∇²g_k(q)``, shape (n, n) (Newton matrix of 72b)."""
        ...

    def external_force(self, q: np.ndarray, v: np.ndarray, t: float) -> tuple | None:
        """Non-conservative force ``f(q, v, t)`` (n,) of (72b) (applied loads, dampers) and
        ``∂f/∂q``, ``∂f/∂v`` (n, n), or ``None`` without one; the schemes evaluate it at
        ``(q^{n+1/2}, v^{n+1/2}, t_{n+1/2})``."""
        ...


@runtime_checkable
class QuaternionBodySystem(Protocol):
    """One rigid body's rotation in one unit quaternion (``n = 4``), as EMH and MPH use it: the
    regular mass matrix ``M₄(q) = 4 Q_l(q) J₄ Q_l(q)ᵀ`` (140) from the principal inertias, and
    the potential. The same object in Livens' form (:class:`LivensSystem`) gives the start.

    Attributes
    ----------
    n : int
        Number of coordinates, 4 (a Livens state [q, p, v, λ] is split with it)
    quaternion_slices : tuple
        ``(slice(0, 4),)``, for the antipodal-branch guard
    Jv : ndarray
        Principal inertias (J₁, J₂, J₃), shape (3,); J₄ = diag(½ tr J, J) (140)
    """

    n: int
    quaternion_slices: tuple
    Jv: np.ndarray

    def potential(self, q: np.ndarray) -> float:
        """``V(q)``."""
        ...

    def grad_potential(self, q: np.ndarray) -> np.ndarray:
        """``∇V(q)``, shape (4,) (MPH)."""
        ...

    def hess_potential(self, q: np.ndarray) -> np.ndarray:
        """``∇²V(q)``, shape (4, 4) (MPH's Jacobian)."""
        ...

    def dg_potential(self, q0: np.ndarray, q1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Discrete gradient ``∇̄V(q0, q1)`` (4,) and its Jacobian in ``q1`` (4, 4) (EMH)."""
        ...


# ---------------------------------------------------------------------------------------------
# state helpers
# ---------------------------------------------------------------------------------------------


def split_state(system: LivensSystem | QuaternionBodySystem, x):
    """``(q, p, v, λ)`` from a Livens state of length 3n + m."""
    n = system.n
    return x[:n], x[n : 2 * n], x[2 * n : 3 * n], x[3 * n :]


JACOBIANS = ("analytic", "fd")
#: Newton systems of at least this many unknowns (3n + m for EML and MPL, n + m for REML) are
#: assembled from sparse matrices and factored sparsely; on the chain the sparse step (then by
#: SuperLU, without eliminating v and p) overtook the dense one between 100 and 180 unknowns (CPU
#: time on the book's 2-core machine).
#: The systems of chapter 000 stay below (the four-bar loop has 100) and keep LAPACK's dense
#: LU, which is faster for the smallest ones (the sparse matrices cost a fixed time to build).
SPARSE_FROM = 120


def uses_sparse(n_unknowns: int, sparse: bool | None = None) -> bool:
    """Whether a Newton system of ``n_unknowns`` unknowns is assembled and factored sparsely:
    ``sparse=None`` decides by size (from :data:`SPARSE_FROM` on), a bool forces it."""
    return n_unknowns >= SPARSE_FROM if sparse is None else bool(sparse)


def _sparse_keyword(sparse: bool) -> dict:
    """The keyword that asks a system for sparse matrices (none for the dense path, which every
    :class:`LivensSystem` serves)."""
    return {"sparse": True} if sparse else {}


@dataclass(frozen=True)
class StepReport(NewtonReport):
    """A :class:`~mbslib.newton.NewtonReport` with the size of the step's Newton system.

    The inherited counts cover the step's whole work: ``n_residual`` includes the two residual
    evaluations per column of a finite-difference Jacobian and Null-EML's evaluation that
    recovers λ.

    Attributes
    ----------
    n_unknowns : int
        Size of the Newton system (13 for EML on one body, 5 for REML, 3 for Null-EML).
    n_fd_columns : int
        Columns built by central differences (``n_unknowns`` per FD Jacobian, 0 if analytic).
    """

    n_unknowns: int = 0
    n_fd_columns: int = 0

    @property
    def n_linear_solves(self) -> int:
        """Linear solves, one per Newton update: of size ``n_unknowns``, or of its ``q, λ`` part
        where sparse EML and MPL eliminate ``v`` and ``p`` first."""
        return self.n_iter


def _solve(residual, x0, analytic, t, kind="analytic"):
    """Newton with the authors' extra update, counting its work; returns ``(x, StepReport)``.

    ``kind="fd"`` builds the Jacobian by central differences, as the authors' code does.
    """
    if kind not in JACOBIANS:
        raise ValueError(f"jacobian must be 'analytic' or 'fd', got {kind!r}")
    x, rep = newton_solve(residual, x0, analytic if kind == "analytic" else None, t=t, extra_update=True)
    n_fd_columns = np.size(x0) * rep.n_jacobian if kind == "fd" else 0
    return x, StepReport(**vars(rep), n_unknowns=np.size(x0), n_fd_columns=n_fd_columns)


@functools.lru_cache(maxsize=16)
def _quaternion_entries(bounds) -> tuple[np.ndarray, np.ndarray]:
    """The entries of the quaternions ``bounds`` (start, stop) of q and where each one starts
    among them (for :func:`numpy.add.reduceat`)."""
    index = np.concatenate([np.zeros(0, dtype=int), *(np.arange(a, b) for a, b in bounds)])
    return index, np.cumsum([0, *(b - a for a, b in bounds[:-1])])


def _guard_antipodal(system: LivensSystem | QuaternionBodySystem, q0, q1, history, t):
    bounds = tuple((s.start, s.stop) for s in system.quaternion_slices)
    if not bounds:
        return
    index, starts = _quaternion_entries(bounds)
    if np.any(np.add.reduceat(q0[index] * q1[index], starts) <= 0.0):  # q^{n+1}·q^n of every quaternion
        reason = "Newton jumped to the antipodal quaternion branch (q^{n+1}·q^n ≤ 0)"
        raise NewtonError(reason, history, t=t)


def _force(system: LivensSystem, qm, vm, t_mid, sparse=False):
    """Generalized load at the midpoint: ``(f, ∂f/∂q1, ∂f/∂v1)`` (the ½ of the chain rule included)."""
    out = system.external_force(qm, vm, t_mid)
    if out is None:
        return None, None, None
    f, f_q, f_v = out
    matrix = sp.csr_array if sparse else np.asarray
    return f, 0.5 * matrix(f_q), 0.5 * matrix(f_v)


def _midpoint_kinetic(system: LivensSystem, q0, q1, v0, v1, sparse=False) -> KineticParts:
    """Continuous ∂T at ``(q^{n+1/2}, v^{n+1/2})``, derivatives with respect to the end values."""
    k = system.grad_kinetic(0.5 * (q0 + q1), 0.5 * (v0 + v1), **_sparse_keyword(sparse))
    return KineticParts(k.Tq, k.Tv, 0.5 * k.Tq_q, 0.5 * k.Tq_v, 0.5 * k.Tv_q, 0.5 * k.Tv_v)


def _pieces(system: LivensSystem, q0, q1, v0, v1, discrete, sparse=False):
    """Kinetic parts and potential (value, q1-Jacobian) of EML (discrete) or MPL (midpoint)."""
    kw = _sparse_keyword(sparse)
    if discrete:
        return system.dg_kinetic(q0, q1, v0, v1, **kw), system.dg_potential(q0, q1, **kw)
    qm = 0.5 * (q0 + q1)
    potential = (system.grad_potential(qm), 0.5 * system.hess_potential(qm, **kw))
    return _midpoint_kinetic(system, q0, q1, v0, v1, sparse), potential


# ---------------------------------------------------------------------------------------------
# EML (72a–d) / (86a–d) and MPL
# ---------------------------------------------------------------------------------------------


#: ``f`` of the residual kernels for a system without a non-conservative force
_NO_FORCE = np.zeros(0)


@numba.njit(cache=True)
def _put_momentum_balance(out, h, p0, p1, Tq, Vb, hDgT_lam, f):
    """``out = p1 - p0 - h ∂̄_qT + h ∇̄V + h ∇gᵀλ - h f`` (72b), (103) (``hDgT_lam = (h ∇gᵀ) λ``;
    ``f`` empty: no force)."""
    for i in range(p0.size):
        out[i] = p1[i] - p0[i] - h * Tq[i] + h * Vb[i] + hDgT_lam[i]
        if f.size:
            out[i] = out[i] - h * f[i]


@numba.njit(cache=True)
def _livens_residual(h, q0, p0, v0, q1, p1, v1, Tq, Tv, Vb, hDgT_lam, f, g1):
    """``[R1, R2, R3, R4]`` of (72a–d) (:func:`_livens_equations`) from the evaluated kinetic
    parts, potential, constraint forces, load ``f`` and ``g(q1)``."""
    n = q0.size
    R = np.empty(3 * n + g1.size)
    for i in range(n):
        R[i] = q1[i] - q0[i] - 0.5 * h * (v0[i] + v1[i])  # (72a)
        R[2 * n + i] = 0.5 * (p0[i] + p1[i]) - Tv[i]  # (72c)
    _put_momentum_balance(R[n:2 * n], h, p0, p1, Tq, Vb, hDgT_lam, f)
    R[3 * n:] = g1  # (72d)
    return R


@numba.njit(cache=True)
def _reml_residual(h, p0, Tq, Tv, Vb, hDgT_lam, f, g1):
    """``[Ra, g(q1)]`` of (103) with ``p1 = 2∂̄_vT - p0`` (102) (:func:`_reml_equations`)."""
    n = p0.size
    R = np.empty(n + g1.size)
    _put_momentum_balance(R[:n], h, p0, 2.0 * Tv - p0, Tq, Vb, hDgT_lam, f)
    R[n:] = g1
    return R


@numba.njit(cache=True)
def _compiled_equations(data, h, x_n, z, discrete, reduced):
    """Residual and dense Newton matrix of an iteration of EML (``discrete``), MPL or REML
    (``reduced``: unknowns ``z = [q1, λ]``, always discrete) in one compiled call, for a system of
    bodies, gravity and spherical joints from its ``compiled_data``
    (:class:`~mbslib.formulations.quaternions.QuaternionSystem`): the equations and blocks of
    :func:`_livens_equations` (72a–d) and :func:`_reml_equations` (103) in their order. Gravity's
    gradient is constant (its Jacobian zero)."""
    Jp, masses, gravity, ground, joint, sign, body, X, lever = data
    N = masses.size
    n, m = 7 * N, N + 3 * ground.shape[0]
    q0, p0, v0 = x_n[:n], x_n[n:2 * n], x_n[2 * n:3 * n]
    q1, lam = z[:n], z[z.size - m:]
    if reduced:
        p1, v1 = p0, 2.0 / h * (q1 - q0) - v0  # p1 unused; v1 (101)
    else:
        p1, v1 = z[n:2 * n], z[2 * n:3 * n]
    qm, vm = 0.5 * (q0 + q1), 0.5 * (v0 + v1)
    # the kinetic parts (_pieces): the DGs (87)–(88), or the continuous ∂T at the midpoint
    # (_midpoint_kinetic, derivatives in the end values)
    if discrete:
        ends, scale = (q0, q1, v0, v1), 1.0
    else:
        ends, scale = (qm, qm, vm, vm), 2.0
    Tq, Tv, Tq_q, Tq_v, Tv_q, Tv_v = _dense_kinetic(Jp, masses, ends[0], ends[1], ends[2], ends[3], scale)
    if not discrete:
        Tq_q, Tq_v, Tv_q, Tv_v = 0.5 * Tq_q, 0.5 * Tq_v, 0.5 * Tv_q, 0.5 * Tv_v
    hDgT = h * _dense_constraint_jacobian(qm, N, m, joint, sign, body, X).T
    H = _dense_constraint_hessian(lam, N, joint, body, lever)
    Dg1 = _dense_constraint_jacobian(q1, N, m, joint, sign, body, X)
    g1 = _dense_constraints(q1, N, ground, joint, sign, body, X)
    if reduced:
        R = _reml_residual(h, p0, Tq, Tv, gravity, hDgT @ lam, np.zeros(0), g1)
        dv = 2.0 / h  # dv1/dq1 = (2/h) I
        K = np.zeros((R.size, R.size))
        _add_block(K, 0, 0, 2.0 * Tv_q)
        _add_block(K, 0, 0, 2.0 * dv * Tv_v)
        _add_block(K, 0, 0, -h * (Tq_q + dv * Tq_v))
        _add_block(K, 0, 0, 0.5 * h * H)
        _add_block(K, 0, n, hDgT)
        _add_block(K, n, 0, Dg1)
        return R, K
    R = _livens_residual(h, q0, p0, v0, q1, p1, v1, Tq, Tv, gravity, hDgT @ lam, np.zeros(0), g1)
    # block rows R1..R4, block columns q1, p1, v1, λ
    K, I = np.zeros((R.size, R.size)), np.eye(n)
    _add_block(K, 0, 0, I)
    _add_block(K, 0, 2 * n, -0.5 * h * I)
    _add_block(K, n, 0, -h * Tq_q)
    _add_block(K, n, 0, 0.5 * h * H)
    _add_block(K, n, n, I)
    _add_block(K, n, 2 * n, -h * Tq_v)
    _add_block(K, n, 3 * n, hDgT)
    _add_block(K, 2 * n, 0, -Tv_q)
    _add_block(K, 2 * n, n, 0.5 * I)
    _add_block(K, 2 * n, 2 * n, -Tv_v)
    _add_block(K, 3 * n, 0, Dg1)
    return R, K


def _compiled_data(system: LivensSystem, sparse: bool):
    """The system's data for the one-call dense evaluations (:func:`_compiled_equations`), or
    None: solved sparsely, or a system without them."""
    return None if sparse else getattr(system, "compiled_data", None)


def precompile_dense(system: LivensSystem) -> None:
    """One EML, MPL and REML step of ``system`` from its initial state, solved densely: compiles
    (or loads from the cache) ``_compiled_equations`` for a system with ``compiled_data``, and
    the kernels around it (for :mod:`mbslib.precompile`)."""
    x = system.initial_state()
    for step in (step_eml, step_mpl, step_reml):
        step(system, x, 1e-3, sparse=False)


def _livens_equations(system: LivensSystem, x_n, x_n1, h, t, discrete, sparse=None, eliminate=False):
    """Residual of EML (``discrete``) or MPL, and a function giving its Jacobian in
    ``[q1, p1, v1, λ]`` from the same evaluations.

    R1 = q1 - q0 - h v^{n+1/2}                                              (72a)
    R2 = p1 - p0 - h ∂̄_qT + h ∇̄V + h ∇g(q^{n+1/2})ᵀλ - h f_ext^{n+1/2}     (72b)
    R3 = p^{n+1/2} - ∂̄_vT                                                   (72c)
    R4 = g(q1)                                                              (72d)

    The Jacobian is a sparse CSC array if the system is solved sparsely (:func:`uses_sparse`),
    with ``eliminate`` the Newton matrix solved with v and p eliminated (``_WithoutVP``).
    """
    n, m = system.n, system.m
    sparse = uses_sparse(3 * n + m, sparse)
    kw = _sparse_keyword(sparse)
    q0, p0, v0, _ = split_state(system, x_n)
    q1, p1, v1, lam = split_state(system, x_n1)
    qm = 0.5 * (q0 + q1)
    k, (Vb, Vb_q) = _pieces(system, q0, q1, v0, v1, discrete, sparse)
    hDgT = h * system.constraint_jacobian(qm, **kw).T  # Gonzalez DG of quadratic g = midpoint Jacobian
    f, f_q, f_v = _force(system, qm, 0.5 * (v0 + v1), t + 0.5 * h, sparse)
    R = _livens_residual(h, q0, p0, v0, q1, p1, v1, k.Tq, k.Tv, Vb, hDgT @ lam, _NO_FORCE if f is None else f,
                         system.constraint(q1))

    def newton_matrix():
        R2_q = [-h * k.Tq_q, h * Vb_q, 0.5 * h * system.constraint_hessian(qm, lam, **kw)]  # a sum
        R2_v = [-h * k.Tq_v]
        if f is not None:
            R2_q.append(-h * f_q)
            R2_v.append(-h * f_v)
        Dg1 = system.constraint_jacobian(q1, **kw)
        if sparse and eliminate:
            return _WithoutVP(h, R2_q, R2_v, k.Tv_q, k.Tv_v, hDgT, Dg1, _band_order(system))
        I = Triplets.identity(n) if sparse else np.eye(n)
        # block rows R1..R4, block columns q1, p1, v1, λ
        return block_matrix([[I, None, -0.5 * h * I, None],
                             [R2_q, I, R2_v, hDgT],
                             [-k.Tv_q, 0.5 * I, -k.Tv_v, None],
                             [Dg1, None, None, None]], (n, n, n, m), sparse)

    return R, newton_matrix


class _WithoutVP:
    """The sparse Newton matrix of EML or MPL, solved with v and p eliminated: its rows (72a) and
    (72c) are linear in them, ``dv = (2/h)(dq − r1)`` and ``dp = 2(r3 + ∂T_v/∂q dq + ∂T_v/∂v dv)``
    (their blocks as in the Jacobian, ``∂T_v`` the derivatives of ``∂̄_vT``), which leaves the
    unknowns ``(q1, λ)`` of REML's size:

        [R2_q + 2 ∂T_v/∂q + (2/h) W] dq + h Dgᵀ dλ = r2 − 2 r3 + (2/h) W r1,   Dg(q1) dq = r4,

    ``W = 2 ∂T_v/∂v + R2_v`` (``R2_q, R2_v``: the blocks of row 72b). The same Newton update as
    the whole matrix's, up to round-off, from a system of n + m unknowns instead of 3n + m.
    """

    def __init__(self, h, R2_q, R2_v, Tv_q, Tv_v, hDgT, Dg1, order=None):
        self.h, self.n, self.Tv_q, self.Tv_v, self.order = h, Tv_q.shape[0], Tv_q, Tv_v, order
        self.W = [2.0 * Tv_v, *R2_v]
        reduced = [*R2_q, 2.0 * Tv_q, *(2.0 / h * w for w in self.W)]
        self.matrix = _sparse_newton_matrix([[reduced, hDgT], [Dg1, None]], (self.n, Dg1.shape[0]), order)

    def solve(self, r):
        h, n = self.h, self.n
        r1, r2, r3, r4 = r[:n], r[n : 2 * n], r[2 * n : 3 * n], r[3 * n :]
        W_r1 = sum(w @ r1 for w in self.W)
        rhs = np.concatenate([r2 - 2.0 * r3 + 2.0 / h * W_r1, r4])
        y = sparse_solve(self.matrix, rhs) if self.order is None else self.matrix.solve(rhs)
        dq = y[:n]
        dv = 2.0 / h * (dq - r1)
        dp = 2.0 * (r3 + self.Tv_q @ dq + self.Tv_v @ dv)
        return np.concatenate([dq, dp, dv, y[n:]])


def residual_eml(system: LivensSystem, x_n, x_n1, h, t=0.0, sparse=None) -> np.ndarray:
    """Residual of the EML scheme (72a–d), shape (3n + m,); ``sparse`` as in :func:`step_eml`."""
    return _livens_equations(system, x_n, x_n1, h, t, True, sparse)[0]


def jacobian_eml(system: LivensSystem, x_n, x_n1, h, t=0.0, sparse=None):
    """Analytic Jacobian of :func:`residual_eml` with respect to ``x_n1``, shape (3n+m, 3n+m)
    (sparse CSC if solved sparsely, :func:`uses_sparse`)."""
    return _livens_equations(system, x_n, x_n1, h, t, True, sparse)[1]()


def residual_mpl(system: LivensSystem, x_n, x_n1, h, t=0.0, sparse=None) -> np.ndarray:
    """Residual of the midpoint rule on Livens' equations (MPL), shape (3n + m,)."""
    return _livens_equations(system, x_n, x_n1, h, t, False, sparse)[0]


def jacobian_mpl(system: LivensSystem, x_n, x_n1, h, t=0.0, sparse=None):
    """Analytic Jacobian of :func:`residual_mpl` with respect to ``x_n1``."""
    return _livens_equations(system, x_n, x_n1, h, t, False, sparse)[1]()


def _band_order(system: LivensSystem):
    """The system's order of the unknowns ``(q, λ)`` for a banded LU, or None (then
    :func:`~mbslib.newton.sparse_solve` orders them by reverse Cuthill–McKee)."""
    return getattr(system, "band_order", None)


def _sparse_newton_matrix(blocks, sizes, order):
    """The sparse block matrix of ``blocks``: put straight into the band storage of the banded LU
    in the system's band ``order`` (:class:`~mbslib.newton.BandedBlocks`), or without one a CSC
    array (:func:`~mbslib.newton.sparse_solve` orders it)."""
    return block_matrix(blocks, sizes, True) if order is None else BandedBlocks(blocks, sizes, order)


class _DenseLU:
    """A dense Newton matrix ``K`` that solves itself by LAPACK's LU (``dgesv``), without the checks
    of :func:`numpy.linalg.solve` on every call (a step of a single body spends its time in them)."""

    def __init__(self, K):
        self.K = K

    def solve(self, r: np.ndarray) -> np.ndarray:
        _, _, dx, info = dgesv(self.K, r)
        if info > 0:  # LAPACK counts the unknowns from 1
            raise np.linalg.LinAlgError(f"LU: zero pivot at unknown {info - 1}")
        return dx


def _solve_shared(equations, x0, t, kind):
    """:func:`_solve` for ``equations(z) -> (R, K)``, ``K`` the Newton matrix or a function
    building it: the Newton matrix at an iterate comes from the evaluation of its residual (Newton
    asks for both at one iterate); a dense one is solved by :class:`_DenseLU`."""
    last = {}

    def residual(z):
        last["z"], (R, last["matrix"]) = z, equations(z)
        return R

    def jacobian(z):
        K = last["matrix"] if last.get("z") is z else equations(z)[1]
        K = K() if callable(K) else K
        return _DenseLU(K) if isinstance(K, np.ndarray) else K

    return _solve(residual, x0, jacobian, t, kind)


def _step_livens(system: LivensSystem, x_n, h, t, discrete, jacobian, sparse):
    positive(h=h)
    x_n = np.asarray(x_n, dtype=float)
    data = _compiled_data(system, uses_sparse(3 * system.n + system.m, sparse))
    if data is None:
        def equations(z):
            return _livens_equations(system, x_n, z, h, t, discrete, sparse, eliminate=True)
    else:
        def equations(z):
            return _compiled_equations(data, h, x_n, z, discrete, False)
    x1, rep = _solve_shared(equations, x_n, t, jacobian)  # initial guess: the previous state, λ^n included
    _guard_antipodal(system, x_n[: system.n], x1[: system.n], rep.residual_history, t)
    return x1, rep


def step_eml(system: LivensSystem, x_n, h, t=0.0, jacobian="analytic", sparse=None):
    """One EML step (72a–d): energy–momentum scheme for Livens' equations.

    Returns ``(x_n1, StepReport)``; ``jacobian`` is ``"analytic"`` or ``"fd"`` (central
    differences, as the authors' code). ``sparse``: assemble the residual and Newton matrix from
    the system's sparse matrices and factor by sparse LU (default by size, :func:`uses_sparse`);
    the steps agree up to round-off.
    """
    return _step_livens(system, x_n, h, t, True, jacobian, sparse)


def step_mpl(system: LivensSystem, x_n, h, t=0.0, jacobian="analytic", sparse=None):
    """One MPL step: implicit midpoint rule on Livens' equations (``sparse`` as in :func:`step_eml`)."""
    return _step_livens(system, x_n, h, t, False, jacobian, sparse)


# ---------------------------------------------------------------------------------------------
# REML (101)–(103): unknowns (q^{n+1}, λ)
# ---------------------------------------------------------------------------------------------


def reml_recover(system: LivensSystem, x_n, q1, h, lam=None, sparse=None):
    """``v^{n+1} = 2(q1 - q0)/h - v0`` (101), ``p^{n+1} = 2∂̄_vT - p0`` (102), full state."""
    q0, p0, v0, lam0 = split_state(system, x_n)
    v1 = 2.0 / h * (q1 - q0) - v0
    kw = _sparse_keyword(uses_sparse(system.n + system.m, sparse))
    p1 = 2.0 * system.dg_kinetic(q0, q1, v0, v1, **kw).Tv - p0
    return np.concatenate([q1, p1, v1, lam0 if lam is None else lam])


def _reml_equations(system: LivensSystem, x_n, y, h, t, sparse=None, order=None):
    """Residual (103) in ``y = [q1, λ]`` (n + m unknowns) and a function giving its Jacobian
    from the same evaluations (if solved sparsely, :func:`uses_sparse`: a CSC array, or with the
    band ``order`` of the system's unknowns the matrix in band storage, ``_sparse_newton_matrix``)."""
    n, m = system.n, system.m
    sparse = uses_sparse(n + m, sparse)
    kw = _sparse_keyword(sparse)
    q0, p0, v0, _ = split_state(system, x_n)
    q1, lam = y[:n], y[n:]
    qm = 0.5 * (q0 + q1)
    v1 = 2.0 / h * (q1 - q0) - v0
    k = system.dg_kinetic(q0, q1, v0, v1, **kw)
    Vb, Vb_q = system.dg_potential(q0, q1, **kw)
    hDgT = h * system.constraint_jacobian(qm, **kw).T
    f, f_q, f_v = _force(system, qm, (q1 - q0) / h, t + 0.5 * h, sparse)  # v^{n+1/2} = Δq/h (101)
    R = _reml_residual(h, p0, k.Tq, k.Tv, Vb, hDgT @ lam, _NO_FORCE if f is None else f, system.constraint(q1))

    def newton_matrix():
        dv = 2.0 / h  # dv1/dq1 = (2/h) I
        Ra_q = [2.0 * k.Tv_q, 2.0 * dv * k.Tv_v, -h * (k.Tq_q + dv * k.Tq_v), h * Vb_q,
                0.5 * h * system.constraint_hessian(qm, lam, **kw)]  # a sum
        if f is not None:
            Ra_q.append(-h * (f_q + dv * f_v))
        blocks = [[Ra_q, hDgT], [system.constraint_jacobian(q1, **kw), None]]
        return _sparse_newton_matrix(blocks, (n, m), order) if sparse else block_matrix(blocks, (n, m), False)

    return R, newton_matrix


def residual_reml(system: LivensSystem, x_n, y, h, t=0.0, sparse=None) -> np.ndarray:
    """Residual of REML (103) in ``y = [q^{n+1}, λ]``, shape (n + m,)."""
    return _reml_equations(system, x_n, y, h, t, sparse)[0]


def jacobian_reml(system: LivensSystem, x_n, y, h, t=0.0, sparse=None):
    """Analytic Jacobian of :func:`residual_reml`, shape (n + m, n + m)."""
    return _reml_equations(system, x_n, y, h, t, sparse)[1]()


def step_reml(system: LivensSystem, x_n, h, t=0.0, jacobian="analytic", sparse=None):
    """One REML step: Newton on (q^{n+1}, λ), then v, p from (101)–(102) (``sparse`` as in
    :func:`step_eml`)."""
    positive(h=h)
    x_n = np.asarray(x_n, dtype=float)
    n = system.n
    q0, _, _, lam0 = split_state(system, x_n)
    data = _compiled_data(system, uses_sparse(n + system.m, sparse))
    if data is None:
        def equations(z):
            return _reml_equations(system, x_n, z, h, t, sparse, _band_order(system))
    else:
        def equations(z):
            return _compiled_equations(data, h, x_n, z, True, True)
    y, rep = _solve_shared(equations, np.concatenate([q0, lam0]), t, jacobian)
    _guard_antipodal(system, q0, y[:n], rep.residual_history, t)
    return reml_recover(system, x_n, y[:n], h, y[n:], sparse), rep


# ---------------------------------------------------------------------------------------------
# Null-EML (104)–(105): unknown ϑ ∈ R³ for one quaternion body
# ---------------------------------------------------------------------------------------------


@numba.njit(cache=True)
def _null_increment(q0, theta):
    """``q^{n+1} = exp(ϑ)∘q^n = Q_r(q^n) e(ϑ)`` (105) and its derivative ``Q_r(q^n) ∂e/∂ϑ`` (4, 3)."""
    e, De = _exp_s3_with_jacobian(theta)
    Rq0 = _Qr(q0)
    return Rq0 @ e, Rq0 @ De


@numba.njit(cache=True)
def _null_kernel(Jp, q0, p0, v0, q1, dq1, h, Vb, Vb_q):
    """Projected residual (104), the bracket ``r`` it projects and the Jacobian in ϑ (``dq1 =
    ∂q^{n+1}/∂ϑ``), for a body of principal inertias ``Jp`` and the potential's DG ``Vb, Vb_q``."""
    qm = 0.5 * (q0 + q1)
    v1 = 2.0 / h * (q1 - q0) - v0  # (101)
    Tq, Tv, Tq_q, Tq_v, Tv_q, Tv_v = _kinetic_blocks(Jp.reshape(1, 3), q0.reshape(1, 4), q1.reshape(1, 4),
                                                     v0.reshape(1, 4), v1.reshape(1, 4))
    r = 2.0 * Tv[0] - 2.0 * p0 - h * Tq[0] + h * Vb
    Gm, Gr = np.empty((3, 4)), np.empty((3, 4))
    _put_G(qm, Gm)
    _put_G(r, Gr)
    dv = 2.0 / h
    dr = 2.0 * (Tv_q[0] + dv * Tv_v[0]) - h * (Tq_q[0] + dv * Tq_v[0]) + h * Vb_q
    # d(G(qm) r)/dq1 = G(qm) dr/dq1 - ½ G(r)  (G(a)b = -G(b)a)
    return Gm @ r, r, (Gm @ dr - 0.5 * Gr) @ dq1


def _null_equations(system: QuaternionBodySystem, x_n, theta, h):
    """Projected residual (104) ``G(q^{n+1/2})[p1 - p0 - h∂̄_qT + h∇̄V]`` with
    ``q^{n+1} = exp(ϑ)∘q^n`` (105) and v, p from (101)–(102); 3 equations. Returns the residual,
    its Jacobian in ϑ, the bracket ``r`` and ``q^{n+1}`` (one compiled evaluation of (87)–(88))."""
    q0, p0, v0, _ = split_state(system, x_n)
    q1, dq1 = _null_increment(q0, theta)
    Vb, Vb_q = system.dg_potential(q0, q1)
    R, r, K = _null_kernel(system.Jv, q0, p0, v0, q1, dq1, h, Vb, Vb_q)
    return R, K, r, q1


def residual_null_eml(system: LivensSystem, x_n, theta, h, t=0.0) -> np.ndarray:
    """Residual of Null-EML (104) in the rotation increment ``ϑ``, shape (3,)."""
    return _null_equations(system, x_n, np.asarray(theta, dtype=float), h)[0]


def jacobian_null_eml(system: LivensSystem, x_n, theta, h, t=0.0) -> np.ndarray:
    """Analytic Jacobian of :func:`residual_null_eml`, shape (3, 3)."""
    return _null_equations(system, x_n, np.asarray(theta, dtype=float), h)[1]


def step_null_eml(system: LivensSystem, x_n, h, t=0.0, jacobian="analytic"):
    """One Null-EML step: Newton on ϑ from ϑ = 0; ``|q^{n+1}| = 1`` holds by construction.

    λ is not needed; it is recovered from the q^{n+1/2}-component of (86b),
    ``λ = -q^{n+1/2}·r / (h |q^{n+1/2}|²)``, so that the returned state matches EML's.
    """
    if (system.n != 4 or system.m != 1 or not hasattr(system, "Jv")
            or system.external_force(np.zeros(4), np.zeros(4), t) is not None):
        raise ValueError("system must be a single unforced quaternion body (n = 4, m = 1, principal inertias Jv)")
    positive(h=h)
    x_n = np.asarray(x_n, dtype=float)
    theta, rep = _solve_shared(lambda z: _null_equations(system, x_n, z, h)[:2], np.zeros(3), t, jacobian)
    _, _, r, q1 = _null_equations(system, x_n, theta, h)
    rep = replace(rep, n_residual=rep.n_residual + 1)  # the evaluation above, which recovers λ
    qm = 0.5 * (x_n[:4] + q1)
    lam = -(qm @ r) / (h * qm @ qm)
    _guard_antipodal(system, x_n[:4], q1, rep.residual_history, t)
    return reml_recover(system, x_n, q1, h, np.array([lam])), rep


# ---------------------------------------------------------------------------------------------
# Hamiltonian schemes with the regular mass matrix M4 (140): state [q, p, λ]
# ---------------------------------------------------------------------------------------------


def _J4(system: QuaternionBodySystem) -> np.ndarray:
    """``J4 = diag(J0, J1, J2, J3)`` with ``J0 = ½ tr J`` (140)."""
    J = system.Jv
    return np.concatenate([[0.5 * J.sum()], J])


def regular_mass_matrix(system: QuaternionBodySystem, q) -> np.ndarray:
    """``M4(q) = 4 Q_l(q) J4 Q_l(q)ᵀ = M̃4(q) + 2 tr(J) q⊗q`` on S³ (140); shape (4, 4)."""
    L = Ql(q)
    return 4.0 * L @ (_J4(system)[:, None] * L.T)


@numba.njit(cache=True)
def _A(x):
    """``∂(Q_l(q)ᵀx)/∂q = [xᵀ; -G(x)]`` (4, 4), since ``Q_l(q)ᵀx = [q·x; G(q)x]``."""
    Gx, out = np.empty((3, 4)), np.empty((4, 4))
    _put_G(x, Gx)
    out[0], out[1:] = x, -Gx
    return out


def hamiltonian(system: QuaternionBodySystem, q, p, inverse="analytic") -> float:
    """``H = ½ p·M4(q)⁻¹p + V(q)``; ``inverse="analytic"`` uses ``⅛ π·J4⁻¹π``, ``π = Q_l(q)ᵀp``."""
    if inverse == "analytic":
        pi = Ql(q).T @ p
        return 0.125 * pi @ (pi / _J4(system)) + system.potential(q)
    return 0.5 * p @ np.linalg.solve(regular_mass_matrix(system, q), p) + system.potential(q)


def velocity_from_momentum(system: QuaternionBodySystem, q, p) -> np.ndarray:
    """``v = M4(q)⁻¹ p = ¼ Q_l(q) J4⁻¹ Q_l(q)ᵀ p`` on S³."""
    L = Ql(q)
    return 0.25 * L @ ((L.T @ p) / _J4(system))


def hamiltonian_initial_state(system: QuaternionBodySystem, x_livens) -> np.ndarray:
    """``[q, p, λ]`` from a Livens state (p = M̃4 v = M4 v because q·v = 0)."""
    q, p, _, lam = split_state(system, x_livens)
    return np.concatenate([q, p, lam])


@numba.njit(cache=True)
def _emh_kernel(J4, q0, p0, q1, p1, lam, h, Vb, Vb_q):
    """EMH residual (App. D, reconstructed; the authors' code `EMS_std`) and its Jacobian in the
    unknowns ``[q1, p1, λ]``, for ``J4`` (140) and the potential's DG ``Vb, Vb_q``.

    ``π^{n+1/2} = ½(Q_l(q0)ᵀp0 + Q_l(q1)ᵀp1)``, ``w = ¼ J4⁻¹ π^{n+1/2}`` (DG of ``T̃* = ⅛ π·J4⁻¹π``)
    R1 = q1 - q0 - h Q_l(q^{n+1/2}) w
    R2 = p1 - p0 + h [p^{n+1/2}, -G(p^{n+1/2})ᵀ] w + h ∇̄V + h λ q^{n+1/2}
    R3 = ½(q1·q1 - 1)
    """
    qm, pm = 0.5 * (q0 + q1), 0.5 * (p0 + p1)
    w = 0.125 * (_Ql(q0).T @ p0 + _Ql(q1).T @ p1) / J4
    Lm, Apm, J4c = _Ql(qm), _A(pm), J4.reshape(4, 1)
    R = np.empty(9)
    R[:4] = q1 - q0 - h * Lm @ w
    R[4:8] = p1 - p0 + h * Apm.T @ w + h * Vb + h * lam * qm
    R[8] = 0.5 * (q1 @ q1 - 1.0)
    dw_q = 0.125 * _A(p1) / J4c
    dw_p = 0.125 * _Ql(q1).T / J4c
    K, I, w_minus = np.zeros((9, 9)), np.eye(4), np.empty((4, 4))
    _put_minus(w[1:], w_minus)
    K[:4, :4] = I - h * (0.5 * _Qr(w) + Lm @ dw_q)
    K[:4, 4:8] = -h * Lm @ dw_p
    # Aᵀ(p) w = w0 p - G(p)ᵀ w_vec = (w0 I - w_vec⁻) p
    K[4:8, :4] = h * Apm.T @ dw_q + h * Vb_q + 0.5 * h * lam * I
    K[4:8, 4:8] = I + h * (0.5 * (w[0] * I - w_minus) + Apm.T @ dw_p)
    K[4:8, 8] = h * qm
    K[8, :4] = q1
    return R, K


def _emh_equations(system: QuaternionBodySystem, x_n, x_n1, h, J4=None):
    """EMH residual and its Jacobian (:func:`_emh_kernel`) at ``x_n1 = [q1, p1, λ]`` (``J4``:
    :func:`_J4` of the system, computed if not given)."""
    q0, p0, q1, p1, lam = x_n[:4], x_n[4:8], x_n1[:4], x_n1[4:8], x_n1[8]
    return _emh_kernel(_J4(system) if J4 is None else J4, q0, p0, q1, p1, lam, h, *system.dg_potential(q0, q1))


@numba.njit(cache=True)
def _mph_kernel(J4, q0, p0, q1, p1, lam, h, gradV, hessV, numerical):
    """MPH residual (the authors' code `MP_std`) and its Jacobian in ``[q1, p1, λ]``, for ``J4``
    and the potential's gradient and Hessian at ``q^{n+1/2}``.

    R1 = q1 - q0 - h M4(q^{n+1/2})⁻¹ p^{n+1/2}
    R2 = p1 - p0 + h ∂_qT*(q^{n+1/2}, p^{n+1/2}) + h ∇V(q^{n+1/2}) + h λ q^{n+1/2},
         ``∂_qT*(q, p) = ¼ Q_l(p) J4⁻¹ Q_l(p)ᵀ q``
    R3 = ½(q1·q1 - 1)
    ``numerical`` solves with M4(q^{n+1/2}) (``|q^{n+1/2}| < 1``, as the authors' code); else
    ``¼ Q_l J4⁻¹ Q_lᵀ``.
    """
    qm, pm = 0.5 * (q0 + q1), 0.5 * (p0 + p1)
    Lq, Lp, J4c = _Ql(qm), _Ql(pm), J4.reshape(4, 1)
    M = 4.0 * Lq @ (J4c * Lq.T)
    vel = np.linalg.solve(M, pm) if numerical else 0.25 * Lq @ ((Lq.T @ pm) / J4)
    Tq = 0.25 * Lp @ ((Lp.T @ qm) / J4)
    R = np.empty(9)
    R[:4] = q1 - q0 - h * vel
    R[4:8] = p1 - p0 + h * Tq + h * gradV + h * lam * qm
    R[8] = 0.5 * (q1 @ q1 - 1.0)
    I = np.eye(4)
    if numerical:
        # d(M x)/dq at fixed x = 4[Q_r(J4 Q_lᵀx) + Q_l J4 A(x)]; dv/dqm = -M⁻¹ that
        dMx = 4.0 * (_Qr(J4 * (Lq.T @ vel)) + Lq @ (J4c * _A(vel)))
        dvel_q = -0.5 * np.linalg.solve(M, dMx)
        dvel_p = 0.5 * np.linalg.inv(M)
    else:
        y = (Lq.T @ pm) / J4
        dvel_q = 0.125 * (_Qr(y) + Lq @ (_A(pm) / J4c))
        dvel_p = 0.125 * Lq @ (Lq.T / J4c)
    z = (Lp.T @ qm) / J4
    dTq_q = 0.125 * Lp @ (Lp.T / J4c)
    dTq_p = 0.125 * (_Qr(z) + Lp @ (_A(qm) / J4c))
    K = np.zeros((9, 9))
    K[:4, :4] = I - h * dvel_q
    K[:4, 4:8] = -h * dvel_p
    K[4:8, :4] = h * dTq_q + 0.5 * h * hessV + 0.5 * h * lam * I
    K[4:8, 4:8] = I + h * dTq_p
    K[4:8, 8] = h * qm
    K[8, :4] = q1
    return R, K


def _mph_equations(system: QuaternionBodySystem, x_n, x_n1, h, inverse, J4=None):
    """MPH residual and its Jacobian (:func:`_mph_kernel`) at ``x_n1 = [q1, p1, λ]`` (``J4`` as in
    :func:`_emh_equations`)."""
    q0, p0, q1, p1, lam = x_n[:4], x_n[4:8], x_n1[:4], x_n1[4:8], x_n1[8]
    qm = 0.5 * (q0 + q1)
    J4 = _J4(system) if J4 is None else J4
    return _mph_kernel(J4, q0, p0, q1, p1, lam, h, system.grad_potential(qm), system.hess_potential(qm),
                       inverse == "numerical")


def residual_emh(system: QuaternionBodySystem, x_n, x_n1, h, t=0.0) -> np.ndarray:
    """Residual of EMH, shape (9,)."""
    return _emh_equations(system, x_n, np.asarray(x_n1, dtype=float), h)[0]


def jacobian_emh(system: QuaternionBodySystem, x_n, x_n1, h, t=0.0) -> np.ndarray:
    """Analytic Jacobian of :func:`residual_emh`, shape (9, 9)."""
    return _emh_equations(system, x_n, np.asarray(x_n1, dtype=float), h)[1]


def residual_mph(system: QuaternionBodySystem, x_n, x_n1, h, t=0.0, inverse="numerical") -> np.ndarray:
    """Residual of MPH, shape (9,)."""
    return _mph_equations(system, x_n, np.asarray(x_n1, dtype=float), h, inverse)[0]


def jacobian_mph(system: QuaternionBodySystem, x_n, x_n1, h, t=0.0, inverse="numerical") -> np.ndarray:
    """Analytic Jacobian of :func:`residual_mph`, shape (9, 9)."""
    return _mph_equations(system, x_n, np.asarray(x_n1, dtype=float), h, inverse)[1]


def _advanced_guess(system: QuaternionBodySystem, x_n, h):
    """Initial guess ``q^{n+1} ≈ q^n + h M4(q^n)⁻¹p^n`` (the authors' advanced guess, needed by EMH/MPH)."""
    x = np.array(x_n, dtype=float)
    x[:4] = x[:4] + h * velocity_from_momentum(system, x[:4], x[4:8])
    return x


def step_emh(system: QuaternionBodySystem, x_n, h, t=0.0):
    """One EMH step (Hamiltonian energy–momentum scheme with M4)."""
    positive(h=h)
    x_n = np.asarray(x_n, dtype=float)
    J4 = _J4(system)
    x1, rep = _solve_shared(lambda z: _emh_equations(system, x_n, z, h, J4), _advanced_guess(system, x_n, h), t,
                            "analytic")
    _guard_antipodal(system, x_n[:4], x1[:4], rep.residual_history, t)
    return x1, rep


def step_mph(system: QuaternionBodySystem, x_n, h, t=0.0, inverse="numerical"):
    """One MPH step (midpoint rule on Hamilton's equations with M4)."""
    if inverse not in ("numerical", "analytic"):
        raise ValueError(f"inverse must be 'numerical' or 'analytic', got {inverse!r}")
    positive(h=h)
    x_n = np.asarray(x_n, dtype=float)
    J4 = _J4(system)
    x1, rep = _solve_shared(lambda z: _mph_equations(system, x_n, z, h, inverse, J4),
                            _advanced_guess(system, x_n, h), t, "analytic")
    _guard_antipodal(system, x_n[:4], x1[:4], rep.residual_history, t)
    return x1, rep


# ---------------------------------------------------------------------------------------------
# diagnostics
# ---------------------------------------------------------------------------------------------


def energies(system: LivensSystem, X) -> dict:
    """Energy quantities along a Livens trajectory ``X`` (N+1, 3n+m).

    Returns a dict of arrays (N+1,): ``T = ½v·M(q)v``, ``V``, ``E_tot = T + V`` (80),
    ``E_kin = p·v - T`` and the generalized energy ``E = p·v - T + V`` (74).
    """
    n = system.n
    Q, P, Vel = X[:, :n], X[:, n : 2 * n], X[:, 2 * n : 3 * n]
    T = np.array([system.kinetic_energy(q, v) for q, v in zip(Q, Vel, strict=True)])
    V = np.array([system.potential(q) for q in Q])
    pv = np.einsum("ij,ij->i", P, Vel)
    return {"T": T, "V": V, "E_tot": T + V, "E_kin": pv - T, "E": pv - T + V}
