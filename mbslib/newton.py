"""Newton's method for the implicit one-step schemes.

Every implicit scheme of the book is a residual ``R(x) = 0`` in the unknowns of one step.
:func:`newton_solve` solves it with an analytic Jacobian (a central finite-difference Jacobian
is available as a fallback and for tests) and returns the solution together with a
:class:`NewtonReport`. It never returns an unconverged iterate: failure raises
:class:`NewtonError`, which carries the time, the step index and the residual history.
Two options serve particular chapters: ``extra_update=True`` (one more update after convergence,
the authors' rule in papers 000/001) and ``linear_solver="lstsq"`` (minimum-norm updates for
nearly singular Newton matrices, used as a fallback by :mod:`mbslib.integrators.ggl`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numba
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.linalg.lapack import dgbtrf, dgbtrs
from scipy.sparse.csgraph import reverse_cuthill_mckee

from mbslib.trajectory import Work

Residual = Callable[[np.ndarray], np.ndarray]
Jacobian = Callable[[np.ndarray], np.ndarray]

#: Default stopping tolerance on the max-norm of the residual (the papers use 1e-9).
TOL = 1e-9
#: Default iteration cap.
MAX_ITER = 40


@dataclass(frozen=True)
class NewtonReport:
    """Outcome of one Newton solve.

    Attributes
    ----------
    converged : bool
        Always True for a returned report (failures raise :class:`NewtonError`).
    n_iter : int
        Number of Newton updates performed (0 if the initial guess already satisfied the tolerance).
    residual_history : tuple of float
        Max-norm of the residual before each update and after the last one,
        ``len == n_iter + 1``.
    n_residual : int
        Evaluations of the residual: one per iterate, plus two per column of a
        finite-difference Jacobian.
    n_jacobian : int
        Jacobian evaluations (analytic or by finite differences).
    n_factorisations : int
        Factorisations of the Newton matrix, one per update here.
    fallback_iter : int
        Updates of a fallback solve that replaced a failed first attempt (0: no fallback ran);
        ``n_iter`` counts the updates of both attempts.
    """

    converged: bool
    n_iter: int
    residual_history: tuple[float, ...]
    n_residual: int = 0
    n_jacobian: int = 0
    n_factorisations: int = 0
    fallback_iter: int = 0

    @property
    def work(self) -> Work:
        """The solve's counted work (no steps: the driver counts those)."""
        return Work(rhs_evaluations=self.n_residual, newton_iterations=self.n_iter,
                    jacobian_evaluations=self.n_jacobian, factorisations=self.n_factorisations)


class NewtonError(RuntimeError):
    """A Newton solve did not converge.

    Attributes
    ----------
    t : float or None
        Time at the start of the step.
    step : int or None
        Index of the step (filled in by :func:`mbslib.simulate.simulate`).
    residual_history : tuple of float
        Max-norm of the residual at every iterate.
    reason : str
        Why the solve stopped.
    """

    def __init__(self, reason: str, residual_history, t=None, step=None):
        self.reason = reason
        self.residual_history = tuple(float(r) for r in residual_history)
        self.t = t
        self.step = step
        super().__init__(self._message())

    def _message(self) -> str:
        where = []
        if self.t is not None:
            where.append(f"t = {self.t:.6g}")
        if self.step is not None:
            where.append(f"step {self.step}")
        history = ", ".join(f"{r:.3e}" for r in self.residual_history[-8:])
        at = f" at {', '.join(where)}" if where else ""
        return f"Newton did not converge{at}: {self.reason}; residual history [... {history}]"

    def at_step(self, step: int) -> NewtonError:
        """The same error with the step index filled in."""
        return NewtonError(self.reason, self.residual_history, t=self.t, step=step)


def fd_jacobian(residual: Residual, x: np.ndarray, r0: np.ndarray | None = None) -> np.ndarray:
    """Central finite-difference Jacobian of ``residual`` at ``x``, shape (m, n).

    The step ``δ_j = ε^{1/3} max(1, |x_j|)`` balances truncation and round-off, so the
    Jacobian is accurate to about ε^{2/3} ≈ 4e-11 relative; this keeps Newton quadratic
    (a forward difference with δ = 1e-10 would not). ``r0`` is unused and only accepted for
    call compatibility.
    """
    x = np.asarray(x, dtype=float)
    delta = np.finfo(float).eps ** (1.0 / 3.0) * np.maximum(1.0, np.abs(x))
    columns = []
    for j in range(x.size):
        e = np.zeros_like(x)
        e[j] = delta[j]
        columns.append((residual(x + e) - residual(x - e)) / (2.0 * delta[j]))
    return np.column_stack(columns)


@functools.lru_cache(maxsize=32)
def _diagonal_index(n: int) -> np.ndarray:
    """``0, …, n−1``, one read-only array per n (the same index arrays for every identity block,
    so that :func:`block_matrix` recognises their layout)."""
    index = np.arange(n)
    index.flags.writeable = False
    return index


@dataclass(frozen=True)
class Triplets:
    """A sparse matrix of ``shape`` as the list of its entries ``(rows, cols, values)``, duplicates
    summed wherever it is used: the form in which the systems hand their sparse matrices to the
    Newton assembly (:func:`block_matrix`), which builds one CSC matrix from the entries of all
    blocks. Scaling, transposing, adding (concatenating the entries, or adding the values of
    entries on the same index arrays) and the product with a vector are plain NumPy operations,
    with no sparse-format conversion on the way.
    """

    rows: np.ndarray
    cols: np.ndarray
    values: np.ndarray
    shape: tuple[int, int]
    __array_ufunc__ = None  # NumPy scalars and arrays leave ``x * A`` to :meth:`__rmul__`

    @classmethod
    def identity(cls, n: int, diagonal=1.0) -> Triplets:
        """``diag(diagonal)`` of size n (the identity by default)."""
        index = _diagonal_index(n)
        return cls(index, index, np.broadcast_to(np.asarray(diagonal, dtype=float), (n,)), (n, n))

    @property
    def nnz(self) -> int:
        """Stored entries (duplicates counted)."""
        return self.rows.size

    @property
    def T(self) -> Triplets:
        return Triplets(self.cols, self.rows, self.values, self.shape[::-1])

    def __mul__(self, scalar) -> Triplets:
        return Triplets(self.rows, self.cols, scalar * self.values, self.shape)

    __rmul__ = __mul__

    def __neg__(self) -> Triplets:
        return Triplets(self.rows, self.cols, -self.values, self.shape)

    def __add__(self, other: Triplets) -> Triplets:
        """The entries of both; on the same index arrays, their values added entry by entry."""
        if other.shape != self.shape:
            raise ValueError(f"shapes {self.shape} and {other.shape} differ")
        if self.rows is other.rows and self.cols is other.cols:
            return Triplets(self.rows, self.cols, self.values + other.values, self.shape)
        values = np.concatenate([np.broadcast_to(a.values, a.rows.shape) for a in (self, other)])
        return Triplets(np.concatenate([self.rows, other.rows]), np.concatenate([self.cols, other.cols]), values,
                        self.shape)

    def __matmul__(self, x: np.ndarray) -> np.ndarray:
        return np.bincount(self.rows, self.values * x[self.cols], minlength=self.shape[0])

    def scaled(self, rows=None, cols=None) -> Triplets:
        """``diag(rows) A diag(cols)`` (either omitted: the identity), entry by entry."""
        values = self.values if rows is None else rows[self.rows] * self.values
        return Triplets(self.rows, self.cols, values if cols is None else values * cols[self.cols], self.shape)

    def toarray(self) -> np.ndarray:
        """The dense matrix (duplicates summed in their order)."""
        flat = np.bincount(self.rows * self.shape[1] + self.cols, self.values, minlength=self.shape[0] * self.shape[1])
        return flat.reshape(self.shape)


def _entries(term) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows, columns and values of a :class:`Triplets`, a scipy.sparse or a dense matrix."""
    if isinstance(term, Triplets):
        values = term.values
        if np.shape(values) != term.rows.shape:  # a scalar for all entries (an identity's diagonal)
            values = np.broadcast_to(values, term.rows.shape)
        return term.rows, term.cols, values
    coo = sp.coo_array(term)
    return coo.coords[0], coo.coords[1], coo.data


@dataclass(frozen=True)
class _Structure:
    """Where the entries ``(rows, cols)`` of a square matrix of ``size`` go in its CSC form: the
    slot of every entry (``slot``), and the CSC ``indices`` and ``indptr``."""

    rows: np.ndarray
    cols: np.ndarray
    slot: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray

    @classmethod
    def of(cls, rows, cols, size: int) -> _Structure:
        positions, slot = np.unique(cols * size + rows, return_inverse=True)  # column-major order
        indptr = np.searchsorted(positions // size, np.arange(size + 1))
        indices = positions % size
        for shared in (indices, indptr):  # every matrix of this structure shares them: no in-place change
            shared.setflags(write=False)
        return cls(rows, cols, slot, indices, indptr)


#: The structure of the last sparse Newton matrix of each size and number of entries: a Newton
#: iteration builds the same structure as the one before it, so its CSC layout is reused.
_STRUCTURES: dict[tuple[int, int], _Structure] = {}


def _structure(rows, cols, size: int) -> _Structure:
    """The structure of the entries ``(rows, cols)`` of a size × size matrix."""
    key = (size, rows.size)
    known = _STRUCTURES.get(key)
    if known is None or not (np.array_equal(known.rows, rows) and np.array_equal(known.cols, cols)):
        known = _STRUCTURES[key] = _Structure.of(rows, cols, size)
    return known


#: The structures of sparse block matrices assembled before, keyed by the size, the blocks'
#: offsets and the identities of the blocks' index arrays, which are kept here (so that no other
#: array takes an identity over while it is a key): a system hands the same index arrays to every
#: Newton iteration, whose structure is then found without comparing its entries.
_LAYOUTS: dict[tuple, tuple[list, _Structure]] = {}


def _sparse_entries(blocks, sizes) -> tuple[int, _Structure, np.ndarray]:
    """Size, structure and values (in the structure's entry order) of the sparse block matrix of
    ``blocks`` (as in :func:`block_matrix`)."""
    start = np.cumsum([0, *sizes])
    entries = [(start[a], start[b], *_entries(term)) for a, row in enumerate(blocks) for b, block in enumerate(row)
               if block is not None for term in (block if isinstance(block, list) else [block])]
    entries = [e for e in entries if e[2].size]
    size = int(start[-1])
    key = (size, *((r0, c0, id(rows), id(cols)) for r0, c0, rows, cols, _ in entries))
    known = _LAYOUTS.get(key)
    if known is None:
        rows = np.concatenate([np.zeros(0, dtype=int), *(rows + r0 for r0, _, rows, _, _ in entries)])
        cols = np.concatenate([np.zeros(0, dtype=int), *(cols + c0 for _, c0, _, cols, _ in entries)])
        if len(_LAYOUTS) >= 64:
            _LAYOUTS.clear()
        known = _LAYOUTS[key] = ([e[2:4] for e in entries], _structure(rows, cols, size))
    return size, known[1], np.concatenate([np.zeros(0), *(e[4] for e in entries)])


def block_matrix(blocks, sizes, sparse: bool):
    """The square block matrix of ``blocks`` (a list of block rows; None: a zero block; a list of
    matrices: their sum; block row and column i have size ``sizes[i]``).

    Sparse (``sparse``): a CSC array built from one list of the entries of every block and term
    (:class:`Triplets`, scipy.sparse or dense), duplicates summed, so that no sparse operation runs
    per block. Dense: an ndarray, sparse blocks densified, the terms of a sum added in their order.
    """
    if sparse:
        size, structure, values = _sparse_entries(blocks, sizes)
        data = np.bincount(structure.slot, values, minlength=structure.indices.size)
        return sp.csc_array((data, structure.indices, structure.indptr), shape=(size, size))
    start = [0]
    for size in sizes:
        start.append(start[-1] + int(size))
    J = np.zeros((start[-1], start[-1]))
    for row_start, row in zip(start[:-1], blocks, strict=True):
        for col_start, block in zip(start[:-1], row, strict=True):
            if block is None:
                continue
            for term in block if isinstance(block, list) else (block,):
                _add_block(J, row_start, col_start, term if isinstance(term, np.ndarray) else term.toarray())
    return J


@numba.njit(cache=True)
def _add_block(J, row_start, col_start, term):
    """``J[row_start:, col_start:] += term`` on the term's rows and columns (a small dense block
    matrix is assembled faster in compiled code than by NumPy's slices)."""
    for i in range(term.shape[0]):
        for j in range(term.shape[1]):
            J[row_start + i, col_start + j] += term[i, j]


#: A sparse Newton matrix is factorised as a band matrix (LAPACK's banded LU with partial
#: pivoting) if reverse Cuthill–McKee orders it into a band of at most this many sub-
#: and superdiagonals together; a wider one goes to SuperLU. On the chain of 64 bodies (one
#: Newton matrix of a step, the book's 2-core machine): REML's 704 unknowns, band 19 + 19,
#: 0.4 ms against SuperLU's 1.7 ms; the GGL-VI's 3456 unknowns, band 102 + 100, 23 ms against 12 ms.
BAND_WIDTH_MAX = 48


def band_order(pattern) -> tuple[np.ndarray, np.ndarray]:
    """Reverse Cuthill–McKee order of the unknowns of a square sparsity ``pattern`` (its nonzeros,
    dense or scipy.sparse; taken symmetric): ``order[p]`` is the unknown at band position ``p``,
    ``position`` its inverse."""
    S = sp.csr_array(pattern).astype(bool)
    order = reverse_cuthill_mckee(sp.csr_array(S + S.T), symmetric_mode=True).astype(np.int64)
    position = np.empty(order.size, dtype=np.int64)
    position[order] = np.arange(order.size)
    return order, position


def band_widths(rows: np.ndarray, cols: np.ndarray, position: np.ndarray) -> tuple[int, int]:
    """Sub- and superdiagonals ``kl, ku`` of the entries ``(rows, cols)`` with unknown ``i`` at band
    position ``position[i]``."""
    d = position[cols] - position[rows]
    return int(max(0, -d.min(initial=0))), int(max(0, d.max(initial=0)))


@dataclass(frozen=True)
class _Band:
    """A square CSC pattern in band order: the unknowns in band order (``order``: given, or
    reverse Cuthill–McKee), the numbers of sub- and superdiagonals ``kl, ku`` and, for every
    stored entry, its flat index in LAPACK's band storage of shape (2 kl + ku + 1, n), column by
    column (``at``). ``indptr`` and ``indices`` identify the pattern."""

    indptr: np.ndarray
    indices: np.ndarray
    order: np.ndarray
    kl: int
    ku: int
    at: np.ndarray

    @classmethod
    def of(cls, J, order=None) -> _Band:
        size = J.shape[0]
        if order is None:
            order, position = band_order(sp.csr_array((np.ones(J.nnz), J.indices, J.indptr), shape=J.shape))  # Jᵀ
        else:
            position = np.empty(size, dtype=np.int64)
            position[order] = np.arange(size)
        rows, cols = J.indices, np.repeat(np.arange(size), np.diff(J.indptr))
        kl, ku = band_widths(rows, cols, position)
        rows, cols = position[rows], position[cols]
        at = kl + ku + rows - cols + (2 * kl + ku + 1) * cols  # row kl + ku + i − j of column j, column-major
        shared = not J.indices.flags.writeable  # the read-only arrays of a block matrix's structure stay
        indptr, indices = (J.indptr, J.indices) if shared else (J.indptr.copy(), J.indices.copy())
        return cls(indptr, indices, order, kl, ku, at)

    def fits(self, J, order=None) -> bool:
        return ((self.indices is J.indices or np.array_equal(self.indptr, J.indptr)
                 and np.array_equal(self.indices, J.indices))
                and (order is None or self.order is order or np.array_equal(self.order, order)))

    @property
    def storage_shape(self) -> tuple[int, int]:
        """Shape of LAPACK's band storage of the factorisation, room for the fill of the pivoting included."""
        return 2 * self.kl + self.ku + 1, self.indptr.size - 1

    def solve(self, J, r: np.ndarray) -> np.ndarray:
        """``J⁻¹ r`` by the banded LU of ``J`` in band order."""
        band = np.zeros(self.storage_shape, order="F")  # LAPACK's layout
        band.ravel(order="F")[self.at] = J.data
        return self.solve_factorised(*self.factorise(band), r)

    def factorise(self, band: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The banded LU ``(lu, pivots)`` (LAPACK's ``dgbtrf``) of the matrix in band storage
        ``band`` (overwritten; its first kl rows, room for the fill, zero)."""
        lu, pivots, info = dgbtrf(band, self.kl, self.ku, overwrite_ab=True)
        if info > 0:  # LAPACK counts the columns from 1 (SciPy's pivots from 0)
            raise np.linalg.LinAlgError(f"band LU: zero pivot at unknown {self.order[info - 1]}")
        return lu, pivots

    def solve_factorised(self, lu: np.ndarray, pivots: np.ndarray, r: np.ndarray) -> np.ndarray:
        """``J⁻¹ r`` from the banded LU of :meth:`factorise`."""
        x, _ = dgbtrs(lu, self.kl, self.ku, r[self.order], pivots, overwrite_b=True)
        dx = np.empty(x.size)
        dx[self.order] = x
        return dx


#: The band order of the last sparse Newton matrix of each size, number of entries and kind of
#: order (a Newton iteration factorises a matrix of the same pattern as the one before it).
_BANDS: dict[tuple[int, int, bool], _Band] = {}


def sparse_solve(J, r: np.ndarray, order=None) -> np.ndarray:
    """``J⁻¹ r`` for a sparse square ``J``: banded LU in the band order ``order`` (the unknowns in
    band order, a permutation, from a system that knows its structure: its band is taken whatever
    its width), or else in the order of reverse Cuthill–McKee, computed once per pattern, if that
    band is narrow (:data:`BAND_WIDTH_MAX`); SuperLU otherwise.

    Raises ``numpy.linalg.LinAlgError`` for an exactly singular ``J``.
    """
    J = J if isinstance(J, sp.csc_array) else sp.csc_array(J)
    if not J.has_canonical_format:  # one stored entry per position (the band takes each once)
        J = J.copy()  # the caller's arrays stay as they are
        J.sum_duplicates()
    key = J.shape[0], J.nnz, order is None
    band = _BANDS.get(key)
    if band is None or not band.fits(J, order):
        band = _BANDS[key] = _Band.of(J, order)
    if order is not None or band.kl + band.ku <= BAND_WIDTH_MAX:
        return band.solve(J, r)
    try:
        return spla.splu(J).solve(r)
    except RuntimeError as exc:  # SuperLU: "Factor is exactly singular"
        raise np.linalg.LinAlgError(str(exc)) from None


#: The band layout of the last block matrix of each size and number of entries solved in a given
#: band order: its structure, the order, the band and where each entry goes in the band storage.
_BAND_LAYOUTS: dict[tuple[int, int], tuple[_Structure, np.ndarray, _Band, np.ndarray]] = {}


class BandedBlocks:
    """The sparse square block matrix of ``blocks`` (as in :func:`block_matrix`) with its unknowns
    in the band order ``order`` (a permutation, as in :func:`sparse_solve`), put straight into
    LAPACK's band storage: every entry goes to its place in the band, duplicates summed, with no
    CSC matrix on the way; the same solution as ``sparse_solve(block_matrix(blocks, sizes, True),
    r, order)``, bitwise. What a Jacobian hands to :func:`newton_solve` for the banded LU of a
    system that knows its band order. Factorised at the first :meth:`solve`.
    """

    def __init__(self, blocks, sizes, order):
        size, structure, values = _sparse_entries(blocks, sizes)
        key = size, structure.slot.size
        known = _BAND_LAYOUTS.get(key)
        if known is None or known[0] is not structure or not (known[1] is order or np.array_equal(known[1], order)):
            pattern = sp.csc_array((np.ones(structure.indices.size), structure.indices, structure.indptr),
                                   shape=(size, size))
            band = _Band.of(pattern, np.asarray(order))
            known = _BAND_LAYOUTS[key] = (structure, order, band, band.at[structure.slot])
        self.band, at = known[2], known[3]
        shape = self.band.storage_shape
        self.storage = np.bincount(at, values, minlength=shape[0] * shape[1]).reshape(shape, order="F")
        self.lu = None

    def solve(self, r: np.ndarray) -> np.ndarray:
        """The solution of the matrix times it equal to ``r``, by the banded LU."""
        if self.lu is None:
            self.lu = self.band.factorise(self.storage)
        return self.band.solve_factorised(*self.lu, r)


#: Linear solvers for the Newton update, see :func:`newton_solve`.
LINEAR_SOLVERS = ("lu", "lstsq")


def _newton_update(J, r: np.ndarray, linear_solver: str, rcond: float) -> np.ndarray:
    """The Newton update ``dx`` with ``J dx = r`` (LU) or its minimum-norm least-squares solution.

    A sparse ``J`` (scipy.sparse) is factored by :func:`sparse_solve`, a ``J`` with a ``solve``
    method (a scheme's own elimination) solves itself; the minimum-norm update needs the SVD of
    the matrix and takes it densely.
    """
    if linear_solver == "lstsq":
        if hasattr(J, "solve") and not sp.issparse(J):
            raise ValueError("linear_solver='lstsq' needs the Newton matrix; the jacobian returned an object that "
                             "only solves (a scheme's own elimination)")
        return np.linalg.lstsq(J.toarray() if sp.issparse(J) else J, r, rcond=rcond)[0]
    if hasattr(J, "solve"):  # before the check for scipy.sparse, the commonest case of the schemes' steps
        return J.solve(r)
    if sp.issparse(J):
        return sparse_solve(J, r)
    return np.linalg.solve(J, r)


def newton_solve(
    residual: Residual,
    x0: np.ndarray,
    jacobian: Jacobian | None = None,
    *,
    tol: float = TOL,
    max_iter: int = MAX_ITER,
    t: float | None = None,
    extra_update: bool = False,
    linear_solver: str = "lu",
    rcond: float = 1e-12,
) -> tuple[np.ndarray, NewtonReport]:
    """Solve ``residual(x) = 0`` by Newton's method.

    Parameters
    ----------
    residual : callable, (n,) -> (n,)
        The residual of one step.
    x0 : ndarray, shape (n,)
        Initial guess (usually the state at the start of the step).
    jacobian : callable, (n,) -> (n, n), optional
        Analytic Jacobian ∂R/∂x, a dense or a scipy.sparse matrix, or for ``"lu"`` an object whose
        ``solve(r)`` returns ``(∂R/∂x)⁻¹ r`` (a scheme that eliminates unknowns from its Newton
        system). If omitted, :func:`fd_jacobian` is used.
    tol : float
        Converged when ``max|R(x)| <= tol``.
    max_iter : int
        Maximum number of updates (the extra update of ``extra_update`` is not capped by it).
    t : float, optional
        Time of the step, reported in a :class:`NewtonError`.
    extra_update : bool
        If True, apply one more Newton update after the stopping test is met and record the
        residual after it. This is the authors' rule in papers 000/001: their loop checks
        ``max|R| <= tol`` *before* updating, so one more update always happens and the final
        residual (hence energy and momentum conservation) reaches round-off rather than ``tol``.
        The report's ``n_iter`` counts this update and ``residual_history`` ends with its residual.
    linear_solver : {"lu", "lstsq"}
        ``"lu"``: ``dx = J⁻¹R`` (:func:`numpy.linalg.solve`, or :func:`sparse_solve` for a
        sparse ``J``). ``"lstsq"``: minimum-norm
        (truncated-SVD) update ``np.linalg.lstsq(J, R, rcond=rcond)``, which drops singular
        values below ``rcond``·σ_max; it also works for rank-deficient or non-square Jacobians.
    rcond : float
        Relative singular-value cut-off of ``"lstsq"`` (ignored by ``"lu"``).

    Returns
    -------
    x : ndarray, shape (n,)
    report : NewtonReport

    Raises
    ------
    ValueError
        For a non-positive ``tol``, ``max_iter < 1`` or an unknown ``linear_solver``.
    NewtonError
        If the residual is not below ``tol`` after ``max_iter`` updates, becomes non-finite,
        or the Jacobian is singular (``"lu"``) or its SVD fails (``"lstsq"``).
    """
    if not tol > 0:
        raise ValueError(f"tol must be positive, got {tol}")
    if max_iter < 1:
        raise ValueError(f"max_iter must be at least 1, got {max_iter}")
    if linear_solver not in LINEAR_SOLVERS:
        raise ValueError(f"linear_solver must be one of {LINEAR_SOLVERS}, got {linear_solver!r}")
    if linear_solver == "lstsq" and not rcond >= 0:
        raise ValueError(f"rcond must be non-negative, got {rcond}")

    count = {"residual": 0, "jacobian": 0}

    def counted_residual(x):
        count["residual"] += 1
        return np.asarray(residual(x), dtype=float)

    def update(x, r, history):
        count["jacobian"] += 1
        J = jacobian(x) if jacobian is not None else fd_jacobian(counted_residual, x)
        try:
            return x - _newton_update(J, r, linear_solver, rcond)
        except np.linalg.LinAlgError as exc:
            what = "singular Jacobian" if linear_solver == "lu" else "least-squares update failed"
            raise NewtonError(f"{what} ({exc})", history, t=t) from None

    def max_norm(r):
        return float(np.abs(r).max()) if r.size else 0.0

    x = np.array(x0, dtype=float)
    history: list[float] = []
    for n_iter in range(max_iter + 1):
        r = counted_residual(x)
        norm = max_norm(r)
        history.append(norm)
        if not np.isfinite(norm):
            raise NewtonError("residual is not finite", history, t=t)
        if norm <= tol:
            if extra_update:
                x = update(x, r, history)
                history.append(max_norm(counted_residual(x)))
                n_iter += 1
            return x, NewtonReport(True, n_iter, tuple(history), n_residual=count["residual"],
                                   n_jacobian=count["jacobian"], n_factorisations=count["jacobian"])
        if n_iter == max_iter:
            break
        x = update(x, r, history)
    raise NewtonError(f"no convergence to tol = {tol:g} in {max_iter} iterations", history, t=t)
