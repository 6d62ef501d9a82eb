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

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

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


#: Linear solvers for the Newton update, see :func:`newton_solve`.
def block_matrix(blocks, sizes, sparse: bool):
    """The square block matrix of ``blocks`` (a list of block rows; None: a zero block; block row
    and column i have size ``sizes[i]``): a sparse CSC array if ``sparse``, else a dense ndarray
    (sparse blocks densified)."""
    if sparse:
        return sp.block_array(blocks, format="csc")
    start = np.cumsum([0, *sizes])
    J = np.zeros((start[-1], start[-1]))
    for a, row in enumerate(blocks):
        for b, block in enumerate(row):
            if block is not None:
                J[start[a] : start[a + 1], start[b] : start[b + 1]] = block.toarray() if sp.issparse(block) else block
    return J


LINEAR_SOLVERS = ("lu", "lstsq")


def _newton_update(J, r: np.ndarray, linear_solver: str, rcond: float) -> np.ndarray:
    """The Newton update ``dx`` with ``J dx = r`` (LU) or its minimum-norm least-squares solution.

    A sparse ``J`` (scipy.sparse) is factored by the sparse LU of SuperLU; the minimum-norm
    update needs its SVD and takes it densely.
    """
    if linear_solver == "lstsq":
        return np.linalg.lstsq(J.toarray() if sp.issparse(J) else J, r, rcond=rcond)[0]
    if sp.issparse(J):
        try:
            return spla.splu(sp.csc_array(J)).solve(r)
        except RuntimeError as exc:  # SuperLU: "Factor is exactly singular"
            raise np.linalg.LinAlgError(str(exc)) from None
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
        Analytic Jacobian ∂R/∂x, a dense or a scipy.sparse matrix. If omitted,
        :func:`fd_jacobian` is used.
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
        ``"lu"``: ``dx = J⁻¹R`` (:func:`numpy.linalg.solve`, or
        :func:`scipy.sparse.linalg.splu` for a sparse ``J``). ``"lstsq"``: minimum-norm
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
        return residual(x)

    def update(x, r, history):
        count["jacobian"] += 1
        J = jacobian(x) if jacobian is not None else fd_jacobian(counted_residual, x)
        try:
            return x - _newton_update(J, r, linear_solver, rcond)
        except np.linalg.LinAlgError as exc:
            what = "singular Jacobian" if linear_solver == "lu" else "least-squares update failed"
            raise NewtonError(f"{what} ({exc})", history, t=t) from None

    def max_norm(x):
        r = np.asarray(counted_residual(x), dtype=float)
        return r, (float(np.max(np.abs(r))) if r.size else 0.0)

    x = np.array(x0, dtype=float)
    history: list[float] = []
    for n_iter in range(max_iter + 1):
        r, norm = max_norm(x)
        history.append(norm)
        if not np.isfinite(norm):
            raise NewtonError("residual is not finite", history, t=t)
        if norm <= tol:
            if extra_update:
                x = update(x, r, history)
                history.append(max_norm(x)[1])
                n_iter += 1
            return x, NewtonReport(True, n_iter, tuple(history), n_residual=count["residual"],
                                   n_jacobian=count["jacobian"], n_factorisations=count["jacobian"])
        if n_iter == max_iter:
            break
        x = update(x, r, history)
    raise NewtonError(f"no convergence to tol = {tol:g} in {max_iter} iterations", history, t=t)
