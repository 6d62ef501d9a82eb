"""Butcher tableaux of the explicit Runge–Kutta methods used with Runge–Kutta–Munthe-Kaas.

Each tableau is a frozen dataclass that checks itself on construction: the nodes are the row
sums of ``A`` (``c_i = Σ_j a_ij``), ``A`` is strictly lower triangular (explicit), the weights
sum to one, and the classical order conditions hold up to the stated order (for the embedded
weights ``b_hat`` up to ``embedded_order``). The coefficients are the standard ones (Butcher
1964 for the seven-stage sixth-order method, Bogacki–Shampine 1989 for ODE23, Dormand–Prince
1980 for DOPRI5); the paper (Holzinger, Arnold & Gerstmayr 2024, Sect. 3.2) uses exactly this
set, through the Exudyn solver.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import product

import numpy as np


def _trees(order: int):
    """Elementary weights and densities of all rooted trees with at most ``order`` nodes.

    A tree is represented recursively as a sorted tuple of its children. Returns a list of
    ``(tree, n_nodes, gamma)``, where ``gamma`` is the tree's density γ(t); the order
    condition of the tree is ``b · Φ(t) = 1/γ(t)``.
    """
    by_size: dict[int, list] = {1: [()]}
    for n in range(2, order + 1):
        found = set()

        # a tree with n nodes = root + a multiset of subtrees whose sizes sum to n - 1
        def partitions(remaining, max_part):
            if remaining == 0:
                yield ()
                return
            for part in range(min(remaining, max_part), 0, -1):
                for rest in partitions(remaining - part, part):
                    yield (part,) + rest

        for sizes in partitions(n - 1, n - 1):
            for children in product(*(by_size[s] for s in sizes)):
                found.add(tuple(sorted(children)))
        by_size[n] = sorted(found)

    def size(t):
        return 1 + sum(size(ch) for ch in t)

    def density(t):
        g = size(t)
        for ch in t:
            g *= density(ch)
        return g

    return [(t, n, density(t)) for n in range(1, order + 1) for t in by_size[n]]


def _stage_weights(A: np.ndarray, c: np.ndarray, tree) -> np.ndarray:
    """The vector Φ_i(t) of the tree below the root: Π over children of (A Φ(child))_i."""
    phi = np.ones_like(c)
    for child in tree:
        phi = phi * (A @ _stage_weights(A, c, child))
    return phi


def order_defects(A, b, c, order: int) -> np.ndarray:
    """``|b·Φ(t) − 1/γ(t)|`` for every rooted tree t with at most ``order`` nodes."""
    A, b, c = (np.asarray(v, dtype=float) for v in (A, b, c))
    return np.array([abs(b @ _stage_weights(A, c, t) - 1.0 / g) for t, _, g in _trees(order)])


@dataclass(frozen=True)
class ButcherTableau:
    """An explicit Runge–Kutta method ``(A, b, c)`` with optional embedded weights.

    Attributes
    ----------
    name : str
    A : ndarray, shape (s, s)
        Strictly lower-triangular coefficient matrix.
    b : ndarray, shape (s,)
        Weights of the propagated solution.
    c : ndarray, shape (s,)
        Nodes.
    order : int
        Classical order of ``b``.
    b_hat : ndarray, shape (s,) or None
        Embedded weights for the error estimate (paper Sect. 3.2.1).
    embedded_order : int
        Order of ``b_hat`` (0 when there is none).
    """

    name: str
    A: np.ndarray
    b: np.ndarray
    c: np.ndarray
    order: int
    b_hat: np.ndarray | None = None
    embedded_order: int = 0
    tol: float = field(default=1e-14, repr=False)

    def __post_init__(self):
        A = np.asarray(self.A, dtype=float)
        b = np.asarray(self.b, dtype=float)
        c = np.asarray(self.c, dtype=float)
        s = b.size
        if A.shape != (s, s) or c.shape != (s,):
            raise ValueError(f"{self.name}: A must be {s}x{s} and c of length {s}")
        if np.any(np.triu(A) != 0.0):
            raise ValueError(f"{self.name}: A must be strictly lower triangular (explicit method)")
        if not np.allclose(A.sum(axis=1), c, rtol=0, atol=self.tol):
            raise ValueError(f"{self.name}: the nodes c must be the row sums of A")
        if np.max(order_defects(A, b, c, self.order)) > self.tol:
            raise ValueError(f"{self.name}: b violates an order condition up to order {self.order}")
        object.__setattr__(self, "A", A)
        object.__setattr__(self, "b", b)
        object.__setattr__(self, "c", c)
        if self.b_hat is not None:
            b_hat = np.asarray(self.b_hat, dtype=float)
            if b_hat.shape != (s,):
                raise ValueError(f"{self.name}: b_hat must have length {s}")
            if (
                self.embedded_order < 1
                or np.max(order_defects(A, b_hat, c, self.embedded_order)) > self.tol
            ):
                raise ValueError(
                    f"{self.name}: b_hat violates an order condition "
                    f"up to order {self.embedded_order}"
                )
            object.__setattr__(self, "b_hat", b_hat)

    @property
    def stages(self) -> int:
        return self.b.size

    @property
    def adaptive(self) -> bool:
        """True when the tableau has embedded weights for step-size control."""
        return self.b_hat is not None


def _lower(rows) -> np.ndarray:
    """Build a strictly lower-triangular matrix from its rows below the diagonal."""
    s = len(rows) + 1
    A = np.zeros((s, s))
    for i, row in enumerate(rows, start=1):
        A[i, : len(row)] = row
    return A


_R5 = np.sqrt(5.0)

EXPLICIT_EULER = ButcherTableau("ExplicitEuler", _lower([]), [1.0], [0.0], order=1)
EXPLICIT_MIDPOINT = ButcherTableau(
    "ExplicitMidpoint", _lower([[0.5]]), [0.0, 1.0], [0.0, 0.5], order=2
)
RK33 = ButcherTableau(
    "RK33", _lower([[1 / 3], [0.0, 2 / 3]]), [0.25, 0.0, 0.75], [0.0, 1 / 3, 2 / 3], order=3
)
RK44 = ButcherTableau(
    "RK44",
    _lower([[0.5], [0.0, 0.5], [0.0, 0.0, 1.0]]),
    [1 / 6, 1 / 3, 1 / 3, 1 / 6],
    [0.0, 0.5, 0.5, 1.0],
    order=4,
)
#: Butcher's seven-stage method of order six (nodes at the Lobatto points 1/2 ± √5/10).
RK67 = ButcherTableau(
    "RK67",
    _lower(
        [
            [0.5 - _R5 / 10],
            [-_R5 / 10, 0.5 + _R5 / 5],
            [7 * _R5 / 20 - 0.75, _R5 / 4 - 0.25, 1.5 - 7 * _R5 / 10],
            [1 / 12 - _R5 / 60, 0.0, 1 / 6, 7 * _R5 / 60 + 0.25],
            [_R5 / 60 + 1 / 12, 0.0, 0.75 - 5 * _R5 / 12, 1 / 6, -0.5 + 3 * _R5 / 10],
            [
                1 / 6,
                0.0,
                -55 / 12 + 25 * _R5 / 12,
                -7 * _R5 / 12 - 25 / 12,
                5 - 2 * _R5,
                2.5 + _R5 / 2,
            ],
        ]
    ),
    [1 / 12, 0.0, 0.0, 0.0, 5 / 12, 5 / 12, 1 / 12],
    [0.0, 0.5 - _R5 / 10, 0.5 + _R5 / 10, 0.5 - _R5 / 10, 0.5 + _R5 / 10, 0.5 - _R5 / 10, 1.0],
    order=6,
)
#: Bogacki–Shampine 3(2) pair (MATLAB's ode23), first same as last.
ODE23 = ButcherTableau(
    "ODE23",
    _lower([[0.5], [0.0, 0.75], [2 / 9, 1 / 3, 4 / 9]]),
    [2 / 9, 1 / 3, 4 / 9, 0.0],
    [0.0, 0.5, 0.75, 1.0],
    order=3,
    b_hat=[7 / 24, 1 / 4, 1 / 3, 1 / 8],
    embedded_order=2,
)
#: Dormand–Prince 5(4) pair.
DOPRI5 = ButcherTableau(
    "DOPRI5",
    _lower(
        [
            [1 / 5],
            [3 / 40, 9 / 40],
            [44 / 45, -56 / 15, 32 / 9],
            [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729],
            [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656],
            [35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84],
        ]
    ),
    [35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0.0],
    [0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0],
    order=5,
    b_hat=[5179 / 57600, 0.0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100, 1 / 40],
    embedded_order=4,
)

#: All tableaux by name.
TABLEAUX = {t.name: t for t in (EXPLICIT_EULER, EXPLICIT_MIDPOINT, RK33, RK44, RK67, ODE23, DOPRI5)}
