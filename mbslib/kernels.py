"""Small numba kernels shared by the multibody models: dense linear algebra and rotation maps.

Numba versions of pieces of :mod:`mbslib.rotations` and :mod:`mbslib.quaternions` (tested
against them), written as loops: numba compiles loops in a fraction of the time it needs for
``np.cross``, ``np.outer``, ``matmul`` (BLAS) and ``np.linalg.solve`` (LAPACK). The rotation
vector maps carry the Taylor branches of App. A.2 of Holzinger, Arnold & Gerstmayr (2024).
"""

from __future__ import annotations

import numba
import numpy as np

from mbslib.in_place import in_place


@numba.njit(cache=True)
def cross3(a, b):
    """Cross product ``a × b`` of two 3-vectors."""
    return np.array(
        [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
    )


@numba.njit(cache=True)
def outer3(a, b):
    """Outer product ``a bᵀ`` of two 3-vectors."""
    out = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            out[i, j] = a[i] * b[j]
    return out


@numba.njit(cache=True)
def mm(A, B):
    """Matrix product ``A B``."""
    n, k = A.shape
    m = B.shape[1]
    out = np.zeros((n, m))
    for i in range(n):
        for l in range(k):
            a = A[i, l]
            if a != 0.0:
                for j in range(m):
                    out[i, j] += a * B[l, j]
    return out


@numba.njit(cache=True)
def mv(A, x):
    """Matrix–vector product ``A x``."""
    n, k = A.shape
    out = np.zeros(n)
    for i in range(n):
        acc = 0.0
        for l in range(k):
            acc += A[i, l] * x[l]
        out[i] = acc
    return out


@numba.njit(cache=True)
def mtv(A, x):
    """Transposed matrix–vector product ``Aᵀ x`` (no copy of ``A``)."""
    n, k = A.shape
    out = np.zeros(k)
    for i in range(n):
        xi = x[i]
        for l in range(k):
            out[l] += A[i, l] * xi
    return out


@in_place
def _pivot_row(A, k, last, scale):
    """Partial pivoting: the row in ``k..last`` with the largest ``|A[i, k]|``, or −1 if that is
    at most ``1e-15·scale`` (singular to working precision)."""
    p = k
    for i in range(k + 1, last + 1):
        if abs(A[i, k]) > abs(A[p, k]):
            p = i
    return p if abs(A[p, k]) > 1e-15 * scale else -1


@numba.njit(cache=True)
def solve(A, b):
    """Solve ``A x = b`` by Gaussian elimination with partial pivoting (small dense systems).

    Returns a vector of NaN if ``A`` is singular to working precision.
    """
    n = b.size
    M = A.copy()
    x = b.copy()
    scale = 0.0
    for i in range(n):
        for j in range(n):
            scale = max(scale, abs(M[i, j]))
    for k in range(n):
        p = _pivot_row(M, k, n - 1, scale)
        if p < 0:
            return np.full(n, np.nan)
        if p != k:
            for j in range(n):
                M[k, j], M[p, j] = M[p, j], M[k, j]
            x[k], x[p] = x[p], x[k]
        for i in range(k + 1, n):
            f = M[i, k] / M[k, k]
            if f != 0.0:
                for j in range(k, n):
                    M[i, j] -= f * M[k, j]
                x[i] -= f * x[k]
    for k in range(n - 1, -1, -1):
        acc = x[k]
        for j in range(k + 1, n):
            acc -= M[k, j] * x[j]
        x[k] = acc / M[k, k]
    return x


@in_place
def lu_factor(A, piv):
    """LU factorisation with partial pivoting of ``A`` in place (``P A = L U``, unit L below the
    diagonal, U on and above it); the row swaps go to ``piv``. Returns False if ``A`` is singular
    to working precision (the test of :func:`solve`)."""
    n = A.shape[0]
    return _lu_factor_in_band(A, n - 1, n - 1, piv)


@in_place
def inverse(A, out):
    """``out = A⁻¹`` by Gauss–Jordan elimination with partial pivoting (``A`` overwritten),
    skipping the rows with nothing to eliminate (small blocks that are mostly zero). Returns False
    if ``A`` is singular to working precision (the test of :func:`lu_factor`; ``out`` then unset)."""
    n = A.shape[0]
    scale = 0.0
    for i in range(n):
        for j in range(n):
            scale = max(scale, abs(A[i, j]))
            out[i, j] = 1.0 if i == j else 0.0
    for k in range(n):
        p = _pivot_row(A, k, n - 1, scale)
        if p < 0:
            return False
        if p != k:
            for j in range(n):
                A[k, j], A[p, j] = A[p, j], A[k, j]
                out[k, j], out[p, j] = out[p, j], out[k, j]
        pivot = A[k, k]
        for j in range(n):
            A[k, j] /= pivot
            out[k, j] /= pivot
        for i in range(n):
            factor = A[i, k]
            if i != k and factor != 0.0:
                for j in range(n):
                    A[i, j] -= factor * A[k, j]
                    out[i, j] -= factor * out[k, j]
    return True


@in_place
def _lu_factor_in_band(A, kl, ku, piv):
    """:func:`lu_factor` of a dense ``A`` whose nonzeros lie within ``kl`` sub- and ``ku``
    superdiagonals: the pivot search and the eliminations of column ``k`` skip the rows below
    ``k + kl`` and the columns beyond ``k + kl + ku``, which hold zeros (the fill of the row swaps
    stays within them), so the factors are those of :func:`lu_factor` to the last bit."""
    n = A.shape[0]
    scale = 0.0
    for i in range(n):
        for j in range(max(0, i - kl), min(n, i + ku + 1)):  # the zeros outside the band do not count
            scale = max(scale, abs(A[i, j]))
    for k in range(n):
        last, right = min(k + kl, n - 1), min(k + kl + ku, n - 1)
        p = _pivot_row(A, k, last, scale)
        if p < 0:
            return False
        piv[k] = p
        if p != k:
            for j in range(n):
                A[k, j], A[p, j] = A[p, j], A[k, j]
        for i in range(k + 1, last + 1):
            if A[i, k] != 0.0:  # else the multiplier is zero and row i stays as it is
                A[i, k] /= A[k, k]
                f = A[i, k]
                for j in range(k + 1, right + 1):
                    A[i, j] -= f * A[k, j]
    return True


@in_place
def lu_solve_in_place(LU, piv, x):
    """Overwrite ``x`` (the right-hand side) with the solution of ``A x = b``, ``LU, piv`` the
    factors of :func:`lu_factor` (no allocation). The zeros of the factors (a sparse matrix
    keeps many) are skipped: subtracting their products changes no finite value."""
    n = x.size
    for k in range(n):
        p = piv[k]
        if p != k:
            x[k], x[p] = x[p], x[k]
    for k in range(n):
        xk = x[k]
        for i in range(k + 1, n):
            f = LU[i, k]
            if f != 0.0:
                x[i] -= f * xk
    for k in range(n - 1, -1, -1):
        acc = x[k]
        for j in range(k + 1, n):
            u = LU[k, j]
            if u != 0.0:
                acc -= u * x[j]
        x[k] = acc / LU[k, k]


@numba.njit(cache=True)
def band_width(n, kl, ku):
    """Entries stored per row of a band matrix of order ``n`` (:func:`band_lu_factor`)."""
    return min(n, 2 * kl + ku + 1)


@numba.njit(cache=True)
def band_first(i, n, kl, ku):
    """First column stored in row ``i`` of a band matrix (:func:`band_lu_factor`)."""
    return min(max(0, i - kl), n - band_width(n, kl, ku))


@in_place
def band_lu_factor(W, kl, ku, piv):
    """LU factorisation with partial pivoting of a band matrix in place: the same eliminations
    as :func:`lu_factor`, restricted to the band.

    ``A`` (order ``N``, ``kl`` sub- and ``ku`` superdiagonals) is stored in ``W``, shape
    ``(N, min(N, 2 kl + ku + 1))``: ``A[i, c]`` at ``W[i, c − f_i]`` with ``f_i``
    :func:`band_first`, so that row ``i`` holds the columns from ``max(0, i − kl)`` on and the
    ``kl`` extra superdiagonals that receive the fill of the row swaps; a dense matrix
    (``kl = ku = N − 1``) is ``W = A``. Row ``k`` is swapped with the pivot row ``piv[k]`` on
    columns ``k`` on; the multipliers of step ``k`` stay where they are computed (applied in
    order by :func:`band_lu_solve_in_place`). Cost O(N kl (kl + ku)). Returns False if ``A`` is
    singular to working precision (the test of :func:`lu_factor`). When the rows hold all ``N``
    columns, ``W`` is ``A`` and this is :func:`lu_factor`, its loops kept within the band."""
    n = W.shape[0]
    if W.shape[1] == n:
        return _lu_factor_in_band(W, kl, ku, piv)
    scale = 0.0
    for i in range(n):
        for c in range(W.shape[1]):
            scale = max(scale, abs(W[i, c]))
    for k in range(n):
        last, right = min(k + kl, n - 1), min(k + kl + ku, n - 1)
        fk = band_first(k, n, kl, ku)
        p, fp = k, fk
        for i in range(k + 1, last + 1):
            fi = band_first(i, n, kl, ku)
            if abs(W[i, k - fi]) > abs(W[p, k - fp]):
                p, fp = i, fi
        piv[k] = p
        if abs(W[p, k - fp]) <= 1e-15 * scale:
            return False
        if p != k:
            for c in range(k, right + 1):
                W[k, c - fk], W[p, c - fp] = W[p, c - fp], W[k, c - fk]
        d = W[k, k - fk]
        for i in range(k + 1, last + 1):
            fi = band_first(i, n, kl, ku)
            W[i, k - fi] /= d
            f = W[i, k - fi]
            if f != 0.0:
                Wi, Wk = W[i, k + 1 - fi:right + 1 - fi], W[k, k + 1 - fk:right + 1 - fk]
                for c in range(right - k):
                    Wi[c] -= f * Wk[c]
    return True


@in_place
def band_lu_solve_in_place(W, kl, ku, piv, x):
    """Overwrite ``x`` with the solution of ``A x = b``, ``W, piv`` the factors of
    :func:`band_lu_factor` (no allocation; cost O(N (2 kl + ku))); zeros of the factors are
    skipped, as in :func:`lu_solve_in_place`."""
    n = x.size
    if W.shape[1] == n:
        lu_solve_in_place(W, piv, x)
        return
    for k in range(n):
        p = piv[k]
        if p != k:
            x[k], x[p] = x[p], x[k]
        xk = x[k]
        for i in range(k + 1, min(k + kl, n - 1) + 1):
            f = W[i, k - band_first(i, n, kl, ku)]
            if f != 0.0:
                x[i] -= f * xk
    for k in range(n - 1, -1, -1):
        fk = band_first(k, n, kl, ku)
        acc = x[k]
        for c in range(k + 1, min(k + kl + ku, n - 1) + 1):
            u = W[k, c - fk]
            if u != 0.0:
                acc -= u * x[c]
        x[k] = acc / W[k, k - fk]


@numba.njit(cache=True)
def skew(a):
    """``ã`` with ``ã y = a × y``; shape (3, 3)."""
    return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])


@numba.njit(cache=True)
def sinc(x):
    """sin x / x, Taylor series below ``|x| = 1e-4``."""
    if abs(x) < 1e-4:
        return 1.0 - x * x / 6.0 + x**4 / 120.0
    return np.sin(x) / x


@numba.njit(cache=True)
def rotation_rv(psi):
    """Rotation matrix ``exp(ψ̃) = I + sinc φ ψ̃ + ½ sinc²(φ/2) ψ̃²`` of a rotation vector; (3, 3)."""
    phi = np.sqrt(psi[0] ** 2 + psi[1] ** 2 + psi[2] ** 2)
    P = skew(psi)
    s2 = sinc(0.5 * phi)
    return np.eye(3) + sinc(phi) * P + 0.5 * s2 * s2 * mm(P, P)


#: (−1)^k / (2k + 3)! for k = 0 … 10, the series of (φ − sin φ)/φ³.
_TEXP_SERIES = np.array(
    [(-1.0) ** k / float(np.prod(np.arange(1, 2 * k + 4, dtype=float))) for k in range(11)]
)


@numba.njit(cache=True)
def texp_coefficient(phi):
    """``(1 − sin φ/φ)/φ² = (φ − sin φ)/φ³``, with its Taylor polynomial below φ = 1.

    The closed form loses about ``6ε/φ²`` relative to cancellation (7e-13 at φ = 0.01, the
    threshold Exudyn uses); the polynomial up to φ²⁰ is exact to 1e-25 below 1 (App. A.2).
    """
    if phi < 1.0:
        x = phi * phi
        acc = 0.0
        for k in range(10, -1, -1):
            acc = _TEXP_SERIES[k] + x * acc
        return acc
    return (1.0 - np.sin(phi) / phi) / (phi * phi)


#: |B₂ₖ| / (2k)! for k = 1 … 12 (Bernoulli numbers), the series of γ(φ).
_GAMMA_SERIES = np.array(
    [
        1 / 6,
        1 / 30,
        1 / 42,
        1 / 30,
        5 / 66,
        691 / 2730,
        7 / 6,
        3617 / 510,
        43867 / 798,
        174611 / 330,
        854513 / 138,
        236364091 / 2730,
    ]
)
for _k in range(12):
    _GAMMA_SERIES[_k] /= float(np.prod(np.arange(1, 2 * _k + 3, dtype=float)))


@numba.njit(cache=True)
def texp_inv_coefficient(phi):
    """``γ = (1 − (φ/2) cot(φ/2))/φ² = Σ |B₂ₖ| φ^(2k−2)/(2k)!``, series below φ = 1.

    The closed form loses about ``12ε/φ²`` relative to cancellation; twelve terms of the
    series are exact to 1e-20 below 1 (App. A.2).
    """
    if phi < 1.0:
        x = phi * phi
        acc = 0.0
        for k in range(11, -1, -1):
            acc = _GAMMA_SERIES[k] + x * acc
        return acc
    return (1.0 - 0.5 * phi / np.tan(0.5 * phi)) / (phi * phi)


@numba.njit(cache=True)
def texp_so3(omega):
    """Tangent operator ``T(Ω) = I + (cos φ − 1)/φ² Ω̃ + (1 − sin φ/φ)/φ² Ω̃²`` (App. A.1).

    ``R = R_n exp(Ω̃)`` gives the body angular velocity ``ω = T(Ω) Ω̇``. Shape (3, 3).
    """
    phi = np.sqrt(omega[0] ** 2 + omega[1] ** 2 + omega[2] ** 2)
    if phi == 0.0:
        return np.eye(3)
    P = skew(omega)
    s2 = sinc(0.5 * phi)
    return np.eye(3) - 0.5 * s2 * s2 * P + texp_coefficient(phi) * mm(P, P)


@numba.njit(cache=True)
def texp_inv_so3(omega):
    """Inverse tangent operator ``T⁻¹(Ω) = I + ½ Ω̃ + γ Ω̃²`` (App. A.1); valid for φ < 2π; (3, 3)."""
    phi = np.sqrt(omega[0] ** 2 + omega[1] ** 2 + omega[2] ** 2)
    if phi == 0.0:
        return np.eye(3)
    P = skew(omega)
    return np.eye(3) + 0.5 * P + texp_inv_coefficient(phi) * mm(P, P)


@numba.njit(cache=True)
def compose_rv(psi0, omega):
    """Rotation vector ``ψ = ψ₀ ⋄ Ω`` with ``R(ψ) = R(ψ₀) R(Ω)`` (eq. 30, App. A.3).

    Computed through the unit-quaternion product; the angle is ``2 atan2(|ρ|/2, x)`` ∈ [0, 2π]
    (no flip to ``|ψ| ≤ π``, as in Exudyn), which stays accurate for small angles. Shape (3,).
    """
    a0 = np.sqrt(psi0[0] ** 2 + psi0[1] ** 2 + psi0[2] ** 2)
    a1 = np.sqrt(omega[0] ** 2 + omega[1] ** 2 + omega[2] ** 2)
    c0, c1 = np.cos(0.5 * a0), np.cos(0.5 * a1)
    s0, s1 = sinc(0.5 * a0), sinc(0.5 * a1)
    x = c0 * c1 - 0.25 * s0 * s1 * (psi0[0] * omega[0] + psi0[1] * omega[1] + psi0[2] * omega[2])
    rho = s0 * c1 * psi0 + c0 * s1 * omega + 0.5 * s0 * s1 * cross3(psi0, omega)
    nrho = np.sqrt(rho[0] ** 2 + rho[1] ** 2 + rho[2] ** 2)
    if nrho == 0.0:
        return np.zeros(3)
    w = 2.0 * np.arctan2(0.5 * nrho, x)
    return (w / nrho) * rho


@numba.njit(cache=True)
def rotation_rxyz(phi):
    """``R = R_x(φ₀) R_y(φ₁) R_z(φ₂)`` (Tait–Bryan xyz); shape (3, 3)."""
    ca, sa = np.cos(phi[0]), np.sin(phi[0])
    cb, sb = np.cos(phi[1]), np.sin(phi[1])
    cg, sg = np.cos(phi[2]), np.sin(phi[2])
    Rx = np.array([[1.0, 0.0, 0.0], [0.0, ca, -sa], [0.0, sa, ca]])
    Ry = np.array([[cb, 0.0, sb], [0.0, 1.0, 0.0], [-sb, 0.0, cb]])
    Rz = np.array([[cg, -sg, 0.0], [sg, cg, 0.0], [0.0, 0.0, 1.0]])
    return mm(mm(Rx, Ry), Rz)


@numba.njit(cache=True)
def g_rxyz(phi):
    """Local kinematic matrix ``Ĝ_loc(φ)`` with ``ω = Ĝ_loc φ̇``; det = cos φ₁; shape (3, 3)."""
    cb, sb = np.cos(phi[1]), np.sin(phi[1])
    cg, sg = np.cos(phi[2]), np.sin(phi[2])
    return np.array([[cb * cg, sg, 0.0], [-cb * sg, cg, 0.0], [sb, 0.0, 1.0]])


@numba.njit(cache=True)
def gdot_rxyz(phi, phid):
    """Time derivative ``d/dt Ĝ_loc(φ)`` along ``φ̇``; shape (3, 3)."""
    cb, sb = np.cos(phi[1]), np.sin(phi[1])
    cg, sg = np.cos(phi[2]), np.sin(phi[2])
    b, g = phid[1], phid[2]
    return np.array(
        [
            [-sb * cg * b - cb * sg * g, cg * g, 0.0],
            [sb * sg * b - cb * cg * g, -sg * g, 0.0],
            [cb * b, 0.0, 0.0],
        ]
    )


@numba.njit(cache=True)
def rotation_ep(p):
    """``R(p) = (p₀² − eᵀe) I + 2 e eᵀ + 2 p₀ ẽ`` for Euler parameters ``p = [p₀, e]``; (3, 3)."""
    e = p[1:4]
    return (p[0] ** 2 - np.sum(e * e)) * np.eye(3) + 2.0 * outer3(e, e) + 2.0 * p[0] * skew(e)


@numba.njit(cache=True)
def drx_dp(p, X):
    """``∂(R(p) X)/∂p`` of the quadratic Euler-parameter rotation, exact for any p; (3, 4)."""
    e = p[1:4]
    out = np.empty((3, 4))
    out[:, 0] = 2.0 * p[0] * X + 2.0 * cross3(e, X)
    ex = np.sum(e * X)
    for k in range(3):
        ek = np.zeros(3)
        ek[k] = 1.0
        out[:, k + 1] = -2.0 * e[k] * X + 2.0 * (X[k] * e + ex * ek) + 2.0 * p[0] * cross3(ek, X)
    return out


@numba.njit(cache=True)
def g_ep(p):
    """``Ĝ = 2 Ḡ(p)`` with body angular velocity ``ω = Ĝ ṗ``; shape (3, 4)."""
    return 2.0 * np.array(
        [
            [-p[1], p[0], p[3], -p[2]],
            [-p[2], -p[3], p[0], p[1]],
            [-p[3], p[2], -p[1], p[0]],
        ]
    )
