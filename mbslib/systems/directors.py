"""Rigid bodies in the director formulation and their multibody assembly.

A rigid body is described without rotations: its configuration is the centre of mass φ and
body-fixed orthonormal directors d_i, stacked as q = [φ; d_1; d_2; d_3] in 3-D (12 coordinates)
or q = [φ; d_1; d_2] in the plane (6 coordinates). A material point X = X_i e_i of the body sits
at x = φ + X_i d_i, linear in q. With principal directors the mass matrix is constant and
diagonal, M = diag(m I, E_1 I, E_2 I, E_3 I), E_i the principal values of the Euler tensor, and
rigidity becomes the quadratic *internal constraints* ½(d_i·d_i − 1) = 0, d_i·d_j = 0.
Joints between body points and ground pivots are *linear* in q.

Every constraint of such a model is therefore of the form

    g_k(q) = ½ q·H_k q + a_k·q − c_k,

with constant Hessians H_k; :class:`QuadraticConstraints` stores (H, A, c), the Hessians sparsely
(their nonzeros grow linearly with the number of bodies), and gives g, its Jacobian G(q) and the
Hessian contractions the GGL integrator needs, dense or as sparse matrices.
:class:`ConstrainedSystem` adds the diagonal mass matrix, a potential V(q) = ½ q·K q − f·q
(gravity: K = 0, f = M b) and a constant viscous damping matrix C.

References
----------
.. [1] P. Betsch, P. Steinmann, Constrained integration of rigid body dynamics, CMAME 191 (2001).
.. [2] P. Betsch, S. Uhlar, Energy-momentum conserving integration of multibody dynamics,
       Multibody Syst. Dyn. 17 (2007) (planar directors).
.. [3] P. L. Kinon, P. Betsch, S. Schneider, The GGL variational principle for constrained
       mechanical systems, Multibody Syst. Dyn. (2023), eqs. (58)-(61), (70)-(74).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from mbslib.newton import Triplets
from mbslib.validation import positive, vector


# --------------------------------------------------------------------------------------------
# single bodies
# --------------------------------------------------------------------------------------------
def euler_tensor_values(J) -> np.ndarray:
    """Principal values of the Euler tensor, E_i = ½(J_j + J_k − J_i) (paper eq. 60).

    Parameters
    ----------
    J : array_like, shape (3,)
        Principal moments of inertia about the centre of mass [kg m²].

    Returns
    -------
    E : ndarray, shape (3,)
        Non-negative for a rigid body (the triangle inequalities of the J_i), zero along the
        normal of a flat one; the directors need them positive.
    """
    J = vector("J", J, (3,))
    positive(J1=J[0], J2=J[1], J3=J[2])
    E = 0.5 * (J.sum() - 2.0 * J)
    if np.any(E < -1e-12 * J.sum()):
        raise ValueError(f"J = {J} is no rigid body's: it violates the triangle inequality J_i <= J_j + J_k "
                         f"(E = {E})")
    if np.any(E <= 1e-12 * J.sum()):
        raise ValueError(f"J = {J} is a flat body's (J_i = J_j + J_k, E = {E}): the director formulation needs a "
                         "body with extent along all three axes (its director masses E_i > 0)")
    return E


@dataclass(frozen=True)
class DirectorBody:
    """One rigid body in director coordinates.

    Attributes
    ----------
    mass : float
        Mass m [kg].
    E : tuple of float
        Euler-tensor principal values, length ``dim`` [kg m²] (3-D: from :func:`euler_tensor_values`;
        planar bar of inertia J about the centre: E_1 = E_2 = J/2).
    dim : int
        2 (planar, q = [φ; d_1; d_2]) or 3 (q = [φ; d_1; d_2; d_3]).
    """

    mass: float
    E: tuple
    dim: int = 3

    def __post_init__(self):
        if self.dim not in (2, 3):
            raise ValueError(f"dim must be 2 or 3, got {self.dim!r}")
        positive(mass=self.mass)
        E = vector("E", self.E, (self.dim,))
        for i, e in enumerate(E):
            positive(**{f"E{i + 1}": e})
        object.__setattr__(self, "E", tuple(float(e) for e in E))

    @property
    def n_coords(self) -> int:
        """Number of coordinates, dim·(dim + 1): 12 in 3-D, 6 in the plane."""
        return self.dim * (self.dim + 1)

    def mass_diag(self) -> np.ndarray:
        """Diagonal of M = diag(m I, E_1 I, ..., E_dim I), shape (n_coords,) (paper eqs. 60, 71)."""
        return np.repeat(np.array([self.mass, *self.E]), self.dim)


def point_matrix(dim: int, X) -> np.ndarray:
    """The matrix P(X) with x = φ + Σ X_i d_i = P(X) q for one body (paper eq. 58).

    Parameters
    ----------
    dim : int
    X : array_like, shape (dim,)
        Body-fixed (material) coordinates of the point.

    Returns
    -------
    P : ndarray, shape (dim, dim·(dim+1))
    """
    X = vector("X", X, (dim,))
    return np.hstack([np.eye(dim)] + [Xi * np.eye(dim) for Xi in X])


def orthonormality_constraints(dim: int = 3, pairs=None, offset: int = 0, n: int | None = None):
    """Orthonormality of director vectors as quadratic constraints with constant Hessians.

    Director d_i (i = 1..dim) occupies ``q[offset + dim(i−1) : offset + dim·i]``. Row k is
    ½(d_i·d_i − 1) for a pair (i, i) and d_i·d_j for a pair (i, j), i ≠ j, in the order of
    ``pairs``. One implementation serves the director bodies of chapter 001 (q = [φ; d_1; ...],
    ``offset = dim``, see :func:`internal_constraints`) and the bare triad q = (d_1, d_2, d_3) of
    chapter 004 (``offset = 0``, the order of its eq. 63).

    Parameters
    ----------
    dim : int
        2 or 3 (vector dimension = number of directors).
    pairs : sequence of (int, int), optional
        Director pairs, 1-based. Default: (i, i) for i = 1..dim, then (i, j) for i < j
        (3-D: [11, 22, 33, 12, 13, 23]; planar: [11, 22, 12]).
    offset : int
        Index of the first component of d_1 in q, ≥ 0.
    n : int, optional
        Number of coordinates, ≥ offset + dim² (default offset + dim²).

    Returns
    -------
    H : scipy.sparse.coo_array, shape (k, n, n)
        Constant Hessians (I in block (i, i), or in blocks (i, j) and (j, i)): dim nonzeros per
        normalisation row, 2·dim per orthogonality row.
    c : ndarray, shape (k,)
        Constants (½ for the normalisation rows, 0 for the orthogonality rows).
    labels : list of str
        ``"di.dj"`` per row.

    Raises
    ------
    ValueError
        For a bad ``dim``, ``offset``, ``n`` or pair.
    """
    if dim not in (2, 3):
        raise ValueError(f"dim must be 2 or 3, got {dim!r}")
    if offset < 0:
        raise ValueError(f"offset must be non-negative, got {offset!r}")
    n = offset + dim * dim if n is None else n
    if n < offset + dim * dim:
        raise ValueError(f"n must be at least offset + dim² = {offset + dim * dim}, got {n!r}")
    pairs = [tuple(pair) for pair in (_default_pairs(dim) if pairs is None else pairs)]
    for pair in pairs:
        if len(pair) != 2 or not all(1 <= i <= dim for i in pair):
            raise ValueError(f"pairs must hold director numbers in 1..{dim}, got {pair!r}")

    def block(i):  # indices of director d_i (i = 1..dim) in q
        return range(offset + dim * (i - 1), offset + dim * i)

    k, rows, cols = [], [], []  # the unit entries (k, row, column) of the Hessians H_k
    c = np.zeros(len(pairs))
    labels = []
    for row, (i, j) in enumerate(pairs):
        # ½(d_i·d_i − 1): Hessian I in block (i, i); d_i·d_j: I in blocks (i, j) and (j, i)
        for a, b in [(i, i)] if i == j else [(i, j), (j, i)]:
            k += [row] * dim
            rows += block(a)
            cols += block(b)
        c[row] = 0.5 if i == j else 0.0
        labels.append(f"d{i}.d{j}")
    coords = tuple(np.array(index, dtype=int) for index in (k, rows, cols))
    H = sp.coo_array((np.ones(len(k)), coords), shape=(len(pairs), n, n))
    return H, c, labels


def orthonormality_values(q, dim: int = 3, pairs=None, offset: int = 0) -> np.ndarray:
    """Values of the constraints of :func:`orthonormality_constraints` from director dot products.

    ``½(d_i·d_i − 1)`` for a pair (i, i), ``d_i·d_j`` otherwise; shape (k,) for q of shape (n,).
    Equal to ``½ q·H_k q − c_k`` of :class:`QuadraticConstraints` up to round-off (the dot
    products are summed over one director, not over all of q); chapter 004 evaluates its
    constraints this way.
    """
    q = np.asarray(q, dtype=float)
    if pairs is None:
        pairs = _default_pairs(dim)
    d = [q[offset + dim * i : offset + dim * (i + 1)] for i in range(dim)]
    return np.array(
        [0.5 * (d[i - 1] @ d[i - 1] - 1.0) if i == j else d[i - 1] @ d[j - 1] for i, j in pairs]
    )


def _default_pairs(dim: int) -> list:
    """(i, i) for i = 1..dim, then (i, j) for i < j."""
    return [(i, i) for i in range(1, dim + 1)] + [
        (i, j) for i in range(1, dim + 1) for j in range(i + 1, dim + 1)
    ]


def internal_constraints(dim: int):
    """Orthonormality of the directors as quadratic constraints of one body (paper eqs. 61, 73).

    :func:`orthonormality_constraints` for q = [φ; d_1; ...] (``offset = dim``,
    ``n = dim·(dim+1)``). The rows are ½(d_i·d_i − 1) for i = 1..dim, then d_i·d_j for i < j
    (3-D: [11, 22, 33, 12, 13, 23]; planar: [11, 22, 12]).

    Returns
    -------
    H : scipy.sparse.coo_array, shape (k, n, n)
        Constant Hessians (n = dim·(dim+1), k = 6 in 3-D, 3 in the plane).
    c : ndarray, shape (k,)
        Constants (½ for the normalisation rows, 0 for the orthogonality rows).
    labels : list of str
    """
    return orthonormality_constraints(dim, offset=dim, n=dim * (dim + 1))


# --------------------------------------------------------------------------------------------
# constraints with constant Hessians
# --------------------------------------------------------------------------------------------
def _sum_at(index, values, size: int) -> np.ndarray:
    """out[..., n] = Σ values[..., e] over the entries e with index[e] = n, shape (..., size)."""
    if values.ndim == 1:
        return np.bincount(index, values, minlength=size)
    out = np.zeros(values.shape[:-1] + (size,))
    np.add.at(out, (Ellipsis, index), values)
    return out


def _matrix(rows, cols, values, shape, sparse: bool):
    """The matrix with ``values`` summed at ``(rows, cols)``: its entries
    (:class:`mbslib.newton.Triplets`) or a dense ndarray.

    Dense ``values`` may carry leading batch axes (..., nnz); the result then has shape
    (..., *shape).
    """
    if sparse:
        return Triplets(rows, cols, values, shape)
    return _sum_at(rows * shape[1] + cols, values, shape[0] * shape[1]).reshape(values.shape[:-1] + tuple(shape))


@dataclass(frozen=True)
class QuadraticConstraints:
    """Constraints g_k(q) = ½ q·H_k q + a_k·q − c_k with constant Hessians.

    The Hessians are stored sparsely (an orthonormality row has one or two identity blocks,
    a linear joint row none), so memory and the work of every contraction grow with the number
    of nonzeros, linearly in the number of bodies of a chain; ``H.todense()`` gives the dense
    (m, d, d) array.

    Attributes
    ----------
    H : scipy.sparse.coo_array, shape (m, d, d)
        Symmetric Hessians D²g_k (no entries for linear constraints). Also accepted as a dense
        array_like, converted on construction.
    A : ndarray, shape (m, d)
        Linear parts a_k.
    c : ndarray, shape (m,)
    labels : tuple of str, length m
    """

    H: sp.coo_array
    A: np.ndarray
    c: np.ndarray
    labels: tuple = ()

    def __post_init__(self):
        m, d = self.A.shape
        H = sp.coo_array(self.H if sp.issparse(self.H) else np.asarray(self.H, dtype=float))
        if H.shape != (m, d, d) or self.c.shape != (m,):
            raise ValueError(f"inconsistent shapes H {H.shape}, A {self.A.shape}, c {self.c.shape}")
        H.sum_duplicates()
        k, i, j = H.coords
        asymmetry = H - sp.coo_array((H.data, (k, j, i)), shape=H.shape)
        asymmetry.sum_duplicates()
        if not np.allclose(asymmetry.data, 0.0):
            raise ValueError("H must hold symmetric Hessians")
        object.__setattr__(self, "H", H)
        rows_A, cols_A = np.nonzero(self.A)
        object.__setattr__(self, "_A_entries", (rows_A, cols_A, self.A[rows_A, cols_A]))
        # the index arrays of G's entries, built once: the sparse Newton matrices reuse their layout
        object.__setattr__(self, "_G_index", (np.r_[k, rows_A], np.r_[i, cols_A]))

    @classmethod
    def orthonormality(
        cls, dim: int = 3, pairs=None, offset: int = 0, n: int | None = None
    ) -> QuadraticConstraints:
        """The orthonormality constraints of :func:`orthonormality_constraints` (A = 0)."""
        H, c, labels = orthonormality_constraints(dim, pairs, offset, n)
        return cls(H=H, A=np.zeros(H.shape[:2]), c=c, labels=tuple(labels))

    @property
    def linear_entries(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The nonzero entries ``(rows, cols, values)`` of A."""
        return self._A_entries

    @property
    def m(self) -> int:
        return self.A.shape[0]

    @property
    def d(self) -> int:
        return self.A.shape[1]

    def g(self, q: np.ndarray) -> np.ndarray:
        """Constraint values, shape (m,) for q of shape (d,) or (N, m) for a trajectory (N, d)."""
        q = np.asarray(q, dtype=float)
        k, i, j = self.H.coords
        quadratic = _sum_at(k, 0.5 * self.H.data * q[..., i] * q[..., j], self.m)  # ½ q·H_k q over the nonzeros
        rows_A, cols_A, a = self._A_entries
        return quadratic + _sum_at(rows_A, a * q[..., cols_A], self.m) - self.c  # + a_k·q over the nonzeros

    def G(self, q: np.ndarray, *, sparse: bool = False):
        """Jacobian G(q) = Dg(q), row k = H_k q + a_k; shape (m, d), or (N, m, d) for q of shape (N, d).

        ``sparse=True`` (one q only) returns the entries of the H_k q and of the a_k
        (:class:`mbslib.newton.Triplets`), in work linear in their number.
        """
        q = np.asarray(q, dtype=float)
        if not sparse:
            return self._hessian_times(q, sparse) + self.A
        if q.ndim != 1:
            raise ValueError(f"q must have shape (d,) for sparse=True, got {q.shape}")
        j, a = self.H.coords[2], self._A_entries[2]
        return _matrix(*self._G_index, np.r_[self.H.data * q[j], a], self.A.shape, True)

    def hessian_sum(self, weights: np.ndarray, *, sparse: bool = False):
        """Σ_k w_k H_k, shape (d, d) (the matrix Γ of the GGL scheme for w = γ); its entries if ``sparse``."""
        k, i, j = self.H.coords
        return _matrix(i, j, np.asarray(weights, dtype=float)[k] * self.H.data, (self.d, self.d), sparse)

    def hessian_rows(self, w: np.ndarray, *, sparse: bool = False):
        """Rows (H_k w)ᵀ, shape (m, d) (the matrix T̄ of the GGL tangent for w = M⁻¹p), or
        (N, m, d) for w of shape (N, d); its entries if ``sparse``."""
        return self._hessian_times(w, sparse)

    def _hessian_times(self, w, sparse: bool):
        """Rows (H_k w)ᵀ of the stored Hessians (G builds on it, whatever a subclass does to
        :meth:`hessian_rows`)."""
        k, i, j = self.H.coords
        return _matrix(k, i, self.H.data * np.asarray(w, dtype=float)[..., j], self.A.shape, sparse)

    def scaled(self, S) -> QuadraticConstraints:
        """The constraints S_k g_k for a constant positive scaling vector S, shape (m,)."""
        S = vector("S", S, (self.m,))
        H = sp.coo_array((S[self.H.coords[0]] * self.H.data, self.H.coords), shape=self.H.shape)
        return replace(self, H=H, A=S[:, None] * self.A, c=S * self.c)


# --------------------------------------------------------------------------------------------
# multibody assembly
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GroundPivot:
    """Body point ``X`` of body ``body`` fixed at the ground point ``point`` (dim rows, linear)."""

    body: int
    X: tuple
    point: tuple
    label: str = "pivot"


@dataclass(frozen=True)
class Joint:
    """Spherical joint (3-D) or revolute joint (planar): x_a(X_a) − x_b(X_b) = 0 (dim rows, linear)."""

    body_a: int
    X_a: tuple
    body_b: int
    X_b: tuple
    label: str = "joint"


@dataclass(frozen=True)
class ConstrainedSystem:
    """A holonomically constrained system with constant diagonal mass matrix.

    L(q, v) = ½ v·M v − V(q),  V(q) = ½ q·K q − f·q,  g(q) = 0 (quadratic, constant Hessians),
    viscous force F = −C v (paper eqs. 3, 20, 53).

    Attributes
    ----------
    M : ndarray, shape (d,)
        Diagonal of the mass matrix.
    f : ndarray, shape (d,)
        Constant generalised force (gravity: f = M b on the centre-of-mass blocks).
    constraints : QuadraticConstraints
    K : scipy.sparse.csr_array, shape (d, d)
        Constant stiffness (no entries for gravity only); also accepted dense, converted on
        construction, as C.
    C : scipy.sparse.csr_array, shape (d, d)
        Constant damping matrix (no entries if undamped).
    dim : int
        Dimension of the vector blocks (for momentum maps): 3 or 2.
    offsets : tuple of int
        Start index of each body in q.
    """

    M: np.ndarray
    f: np.ndarray
    constraints: QuadraticConstraints
    K: sp.csr_array = None
    C: sp.csr_array = None
    dim: int = 3
    offsets: tuple = (0,)

    def __post_init__(self):
        d = self.M.shape[0]
        if np.any(self.M <= 0):
            raise ValueError("M must have positive diagonal entries")
        for name in ("K", "C"):  # sparse: a chain's zero matrices cost no memory and no work
            value = getattr(self, name)
            matrix = sp.csr_array((d, d)) if value is None else sp.csr_array(value, dtype=float)
            if matrix.shape != (d, d):
                raise ValueError(f"{name} must have shape {(d, d)}, got {matrix.shape}")
            object.__setattr__(self, name, matrix)
        vector("f", self.f, (d,))
        if self.constraints.A.shape[1] != d:
            raise ValueError("constraints and M have different numbers of coordinates")

    @property
    def d(self) -> int:
        return self.M.shape[0]

    @property
    def m(self) -> int:
        return self.constraints.m

    @cached_property
    def Minv(self) -> np.ndarray:
        """Diagonal of M⁻¹ (read-only), computed once."""
        Minv = 1.0 / self.M
        Minv.setflags(write=False)
        return Minv

    def V(self, q):
        """Potential V(q) = ½ q·K q − f·q; q shape (d,) or (N, d)."""
        q = np.asarray(q, dtype=float)
        return 0.5 * np.sum(q * (self.K @ q.T).T, axis=-1) - q @ self.f

    def dV(self, q: np.ndarray) -> np.ndarray:
        """∇V(q) = K q − f, shape (d,) (−f without the sparse product if K has no entries)."""
        return self.K @ q - self.f if self.K.nnz else -self.f

    def g(self, q):
        return self.constraints.g(q)

    def G(self, q):
        return self.constraints.G(q)

    def kinetic_from_p(self, p):
        """T = ½ p·M⁻¹p; p shape (d,) or (N, d)."""
        return 0.5 * np.sum(np.asarray(p) ** 2 * self.Minv, axis=-1)

    def kinetic_from_v(self, v):
        """T = ½ v·M v; v shape (d,) or (N, d)."""
        return 0.5 * np.sum(np.asarray(v) ** 2 * self.M, axis=-1)

    def velocity_constraints(self, q, p):
        """Secondary constraints g^v = G(q) M⁻¹ p; shape (m,) or (N, m)."""
        return np.einsum("...kd,...d->...k", self.G(q), np.asarray(p) * self.Minv)

    def dissipated_power(self, v):
        """P_v = v·C v (paper eq. 55 with the sign fixed); v shape (d,) or (N, d)."""
        v = np.asarray(v, dtype=float)
        return np.sum(v * (self.C @ v.T).T, axis=-1)

    def with_constraint_scaling(self, S) -> ConstrainedSystem:
        """The same system with g replaced by S·g (S constant, positive, shape (m,))."""
        return replace(self, constraints=self.constraints.scaled(S))

    def with_damping(self, C) -> ConstrainedSystem:
        """The same system with the damping matrix C, shape (d, d) (dense or sparse)."""
        return replace(self, C=C)


@dataclass(frozen=True)
class _Layout:
    bodies: tuple
    offsets: tuple = field(init=False)

    def __post_init__(self):
        offsets = np.cumsum([0] + [b.n_coords for b in self.bodies])
        object.__setattr__(self, "offsets", tuple(int(o) for o in offsets))

    def coordinates(self, body: int) -> slice:
        """Where the coordinates of ``body`` lie in the global q."""
        return slice(self.offsets[body], self.offsets[body + 1])


def assemble(bodies, gravity, joints=(), *, K=None, C=None) -> ConstrainedSystem:
    """Assemble a multibody system from director bodies, gravity and joints.

    Constraint order: the internal constraints of every body (in body order, see
    :func:`internal_constraints`), then the joints in the given order (dim rows each).

    Parameters
    ----------
    bodies : sequence of DirectorBody
        All of the same ``dim``.
    gravity : array_like, shape (dim,)
        Gravitational acceleration b; V = −Σ m b·φ (paper eqs. 63, 72).
    joints : sequence of GroundPivot | Joint
    K, C : ndarray, shape (d, d), optional
        Stiffness and damping matrices.

    Returns
    -------
    ConstrainedSystem
    """
    bodies = tuple(bodies)
    if not bodies:
        raise ValueError("bodies must not be empty")
    dim = bodies[0].dim
    if any(b.dim != dim for b in bodies):
        raise ValueError("all bodies must have the same dim")
    b = vector("gravity", gravity, (dim,))
    layout = _Layout(bodies)
    d = layout.offsets[-1]
    M = np.concatenate([body.mass_diag() for body in bodies])
    f = np.zeros(d)
    H_coords, H_data, c_rows, labels = [], [], [], []
    Hi, ci, li = internal_constraints(dim)  # the same for every body
    for i, body in enumerate(bodies):
        o = layout.offsets[i]
        f[o : o + dim] = body.mass * b
        k, r, s = Hi.coords  # body i's rows come after those of the bodies before it, its block at o
        H_coords.append(np.stack([k + i * len(ci), r + o, s + o]))
        H_data.append(Hi.data)
        c_rows.append(ci)
        labels += [f"B{i + 1} {name}" for name in li]
    A = np.zeros((len(bodies) * len(ci) + dim * len(joints), d))  # the internal constraints' rows stay zero
    for t, joint in enumerate(joints):
        rows = A[len(bodies) * len(ci) + dim * t :][:dim]
        if isinstance(joint, GroundPivot):
            rows[:, layout.coordinates(joint.body)] = point_matrix(dim, joint.X)
            c = vector("point", joint.point, (dim,))
        elif isinstance(joint, Joint):
            rows[:, layout.coordinates(joint.body_a)] += point_matrix(dim, joint.X_a)
            rows[:, layout.coordinates(joint.body_b)] -= point_matrix(dim, joint.X_b)
            c = np.zeros(dim)
        else:
            raise ValueError(f"joints must be GroundPivot or Joint, got {type(joint).__name__}")
        c_rows.append(c)
        labels += [f"{joint.label} {axis}" for axis in "xyz"[:dim]]
    c = np.concatenate(c_rows)
    coords = np.concatenate(H_coords, axis=1)
    H = sp.coo_array((np.concatenate(H_data), tuple(coords)), shape=(c.size, d, d))  # joints are linear
    constraints = QuadraticConstraints(H=H, A=A, c=c, labels=tuple(labels))
    return ConstrainedSystem(M=M, f=f, constraints=constraints, K=K, C=C, dim=dim, offsets=layout.offsets[:-1])


def angular_momentum(q, p, dim: int):
    """Angular momentum about the origin, Σ_A q_A × p_A over the dim-vector blocks of q.

    3-D: J = Σ q_A × p_A (blocks φ, d_1, d_2, d_3 of every body), shape (..., 3).
    Planar: L = Σ (q_A,1 p_A,2 − q_A,2 p_A,1) (paper eq. 75 with p = M q̇), shape (...).
    This is the momentum map of the rotational symmetry q_A ↦ R q_A (Sect. 4.2).
    """
    q = np.asarray(q, dtype=float)
    p = np.asarray(p, dtype=float)
    qb = q.reshape(q.shape[:-1] + (-1, dim))
    pb = p.reshape(p.shape[:-1] + (-1, dim))
    if dim == 3:
        return np.cross(qb, pb).sum(axis=-2)
    if dim == 2:
        return (qb[..., 0] * pb[..., 1] - qb[..., 1] * pb[..., 0]).sum(axis=-1)
    raise ValueError(f"dim must be 2 or 3, got {dim!r}")
