"""Compiled kernels of the rigid multibody assembly (:mod:`mbslib.systems.multibody`) for the
integrators of paper 002: allocation-free, with analytic force and constraint Jacobians.

Holzinger, Arnold & Gerstmayr (2024), eqs. 9–23, 37–43. The system and its flat parameter
vector ``P`` are those of :class:`mbslib.systems.multibody.System` (layout in that module's
docstring); the formulation (RV, Rxyz, EP) is the bundle of
:mod:`mbslib.formulations.rotation_parameters`, so one set of kernels serves all three.

Forces: gravity on every centre of mass (constant) and the torsional spring–dampers, whose
moment on body b is ``μ n`` with ``n = (R_a e_a) × (R_a f_a)``,
``θ = atan2((R_a f_a)·(R_b e_b), (R_a e_a)·(R_b e_b))``, ``σ = n·(R_b ω_b − R_a ω_a) − θ̇_ref``
and ``μ = −k (θ − θ_ref) − d σ`` (body a receives ``−μ n``). Their derivatives follow from
``dθ = (X dY − Y dX)/(X² + Y²)`` for ``θ = atan2(Y, X)`` and ``dR/dρ_k`` of the formulation;
a spring couples the rows of its two bodies. The point spring–dampers pull body b at its point
with ``F = −k d + k L₀ d/ℓ − (c/ℓ²)(d·ḋ) d`` (``d`` between the points, ``ℓ = |d|``; the terms
with ``L₀`` or ``c`` only where those are non-zero, so that a zero-length spring with neither is
smooth everywhere) and body a with ``−F``; body torques ``τᵢ = sᵢ p̃ᵢ Rᵢᵀ F`` (``s = −1`` for a,
``+1`` for b). With ``A = ∂F/∂d`` and ``B = ∂F/∂ḋ = −(c/ℓ²) d dᵀ``, body j moves d by
``sⱼ dxⱼ + sⱼ (∂Rⱼ/∂ρ_k) pⱼ`` and ḋ by ``sⱼ duⱼ + sⱼ (∂Rⱼ/∂ρ_k)(ωⱼ × pⱼ) + sⱼ Rⱼ (dωⱼ × pⱼ)``;
the torque derivatives go to the pages of the rotational rows as those of the torsional springs,
the rows and columns of the positions are written directly. The rotational rows of each body are
those of :func:`mbslib.formulations.compiled.rotation_block` (``Ĝᵀ(τ − ω × Jω − Jκ)``).

Constraints: the joint rows ``wᵀ(x_b + R_b p_b − x_a − R_a p_a) − c`` and
``(R_a u_a)ᵀ(R_b u_b) − c`` with ``B`` from ``dR/dρ_k`` (RV: along ``R exp(z̃)``), then the
formulation's normalisations.
"""

from __future__ import annotations

import numpy as np

from mbslib.formulations.compiled import (
    ModelKind,
    bodies_tangent,
    bodies_tangent_inv,
    bodies_uac,
    normalizations,
    page_mtv,
    page_mv,
    rotation_block,
)
from mbslib.formulations.rotation_parameters import BODY_PAGES, DR_, G_, R_, RATES_
from mbslib.in_place import in_place
from mbslib.loads import bang_bang
from mbslib.systems import multibody as mb

_HEADER, _BODY, _ROW, _SPRING, _POINT = mb._HEADER, mb._BODY, mb._ROW, mb._SPRING, mb._POINT


def n_pages(P, form) -> int:
    """Scratch: the bodies' pages, per body its inertia ``J`` and ``W = ∂ω/∂ρ``, per pair of
    bodies the torque derivatives ``∂τᵢ/∂ρⱼ`` and ``∂τᵢ/∂ωⱼ`` (4×4 pages)."""
    nb = int(P[0])
    return nb * (BODY_PAGES + 2) + 2 * nb * nb


def pattern(P, form) -> tuple[np.ndarray, np.ndarray]:
    """Structural nonzeros (:class:`~mbslib.formulations.compiled.ModelKind`): each body's
    diagonal block and the blocks coupling the two bodies of a spring (torsional or point) in
    ``M, K, C``; in ``B`` a joint row's bodies and a normalisation row's body."""
    nb, n_rows, n_springs = int(P[0]), int(P[1]), int(P[2])
    m = 3 + form[0]
    n = nb * m
    N, Bp = np.zeros((n, n), dtype=bool), np.zeros((n_rows + nb * form[1], n), dtype=bool)
    for i in range(nb):
        N[i * m:(i + 1) * m, i * m:(i + 1) * m] = True
    o_spring = _HEADER + _BODY * nb + _ROW * n_rows
    o_point, n_points = o_spring + _SPRING * n_springs, int(P[6])
    for ks in range(n_springs + n_points):
        bodies = [x for x in _pair(P, o_spring, o_point, n_springs, ks) if x >= 0]
        for a in bodies:
            for b in bodies:
                N[a * m:(a + 1) * m, b * m:(b + 1) * m] = True
    for k in range(n_rows):
        r = _HEADER + _BODY * nb + _ROW * k
        for body in (int(P[r + 1]), int(P[r + 2])):
            if body >= 0:
                Bp[k, body * m:(body + 1) * m] = True
    for i in range(nb * form[1]):
        Bp[n_rows + i, i * m:(i + 1) * m] = True
    return N, Bp


@in_place
def _pair(P, o_spring, o_point, n_springs, ks):
    """Bodies (a, b) of spring ``ks``: the torsional springs, then the point springs."""
    o = o_spring + _SPRING * ks if ks < n_springs else o_point + _POINT * (ks - n_springs)
    return int(P[o]), int(P[o + 1])


@in_place
def _pages(nb):
    """First pages of ``J`` (per body), ``W`` (per body), ``Tr`` and ``Tw`` (per pair i nb + j)."""
    J = nb * BODY_PAGES
    return J, J + nb, J + 2 * nb, J + 2 * nb + nb * nb


@in_place
def _rot(work, body, x0, x1, x2):
    """``R x`` of a body (identity for the ground, index −1)."""
    if body < 0:
        return x0, x1, x2
    return page_mv(work, body * BODY_PAGES + R_, x0, x1, x2)


@in_place
def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@in_place
def _cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@in_place
def _inertial_rate(work, body):
    """``R ω`` of a body (zero for the ground)."""
    if body < 0:
        return 0.0, 0.0, 0.0
    b = body * BODY_PAGES
    return page_mv(work, b + R_, work[b + RATES_, 0, 0], work[b + RATES_, 0, 1], work[b + RATES_, 0, 2])


@in_place
def _spring_terms(form, P, o_s, t, jac, work, g, nb, m):
    """Add the spring at ``P[o_s:]`` to the torques (``g`` rows of the rotations) and, with
    ``jac``, to the torque derivatives of the pairs of its bodies (``Tr`` along ρ_j at fixed ω,
    ``Tw`` along ω_j)."""
    _, _, TR, TW = _pages(nb)
    a, b = int(P[o_s]), int(P[o_s + 1])
    k, d = P[o_s + 11], P[o_s + 12]
    ref, ref_rate, _ = bang_bang(P[o_s + 13], P[o_s + 14], P[o_s + 15], t)
    ea = _rot(work, a, P[o_s + 2], P[o_s + 3], P[o_s + 4])
    fa = _rot(work, a, P[o_s + 5], P[o_s + 6], P[o_s + 7])
    eb = _rot(work, b, P[o_s + 8], P[o_s + 9], P[o_s + 10])
    X, Y = _dot(ea, eb), _dot(fa, eb)
    n = _cross(ea, fa)
    wa, wb = _inertial_rate(work, a), _inertial_rate(work, b)
    rel = (wb[0] - wa[0], wb[1] - wa[1], wb[2] - wa[2])
    e = np.arctan2(Y, X) - ref
    e -= 2.0 * np.pi * np.round(e / (2.0 * np.pi))
    mu = -k * e - d * (_dot(n, rel) - ref_rate)
    for body, sign in ((a, -1.0), (b, 1.0)):
        if body >= 0:
            tb = page_mtv(work, body * BODY_PAGES + R_, sign * mu * n[0], sign * mu * n[1], sign * mu * n[2])
            for i in range(3):
                g[body * m + 3 + i] += tb[i]
    if not jac:
        return
    h2 = X * X + Y * Y
    for j, sj in ((a, -1.0), (b, 1.0)):  # derivatives along ρ_j (fixed ω) and ω_j of body j
        if j < 0:
            continue
        bj = j * BODY_PAGES
        wj = (work[bj + RATES_, 0, 0], work[bj + RATES_, 0, 1], work[bj + RATES_, 0, 2])
        for kk in range(form[0]):
            dR = bj + DR_ + kk
            if j == a:
                dea = page_mv(work, dR, P[o_s + 2], P[o_s + 3], P[o_s + 4])
                dfa = page_mv(work, dR, P[o_s + 5], P[o_s + 6], P[o_s + 7])
                dX, dY = _dot(dea, eb), _dot(dfa, eb)
                c1, c2 = _cross(dea, fa), _cross(ea, dfa)
                dn = (c1[0] + c2[0], c1[1] + c2[1], c1[2] + c2[2])
            else:
                deb = page_mv(work, dR, P[o_s + 8], P[o_s + 9], P[o_s + 10])
                dX, dY = _dot(ea, deb), _dot(fa, deb)
                dn = (0.0, 0.0, 0.0)
            dw = page_mv(work, dR, wj[0], wj[1], wj[2])  # d(R_j ω_j)
            dmu = -k * (X * dY - Y * dX) / h2 - d * (_dot(dn, rel) + sj * _dot(n, dw))
            dm = (dmu * n[0] + mu * dn[0], dmu * n[1] + mu * dn[1], dmu * n[2] + mu * dn[2])
            for i, si in ((a, -1.0), (b, 1.0)):  # τ_i = s_i R_iᵀ (μ n)
                if i < 0:
                    continue
                pair = TR + i * nb + j
                tv = page_mtv(work, i * BODY_PAGES + R_, si * dm[0], si * dm[1], si * dm[2])
                if i == j:
                    tj = page_mtv(work, dR, si * mu * n[0], si * mu * n[1], si * mu * n[2])
                    tv = (tv[0] + tj[0], tv[1] + tj[1], tv[2] + tj[2])
                for r in range(3):
                    work[pair, r, kk] += tv[r]
        # ∂μ/∂ω_j = −d s_j (R_jᵀ n)ᵀ
        rn = page_mtv(work, bj + R_, n[0], n[1], n[2])
        for i, si in ((a, -1.0), (b, 1.0)):
            if i < 0:
                continue
            pair = TW + i * nb + j
            tn = page_mtv(work, i * BODY_PAGES + R_, si * n[0], si * n[1], si * n[2])
            for r in range(3):
                for c in range(3):
                    work[pair, r, c] += tn[r] * (-d * sj * rn[c])


@in_place
def _end_point(work, q, v, body, p0, p1, p2, m):
    """World position and velocity of the point ``p`` of a body: ``x + R p``, ``u + R (ω × p)``
    (the ground: ``p`` at rest)."""
    if body < 0:
        return (p0, p1, p2), (0.0, 0.0, 0.0)
    b, o = body * BODY_PAGES, body * m
    Rp = page_mv(work, b + R_, p0, p1, p2)
    c = _cross((work[b + RATES_, 0, 0], work[b + RATES_, 0, 1], work[b + RATES_, 0, 2]), (p0, p1, p2))
    Rc = page_mv(work, b + R_, c[0], c[1], c[2])
    return (q[o] + Rp[0], q[o + 1] + Rp[1], q[o + 2] + Rp[2]), (v[o] + Rc[0], v[o + 1] + Rc[1], v[o + 2] + Rc[2])


@in_place
def _point_vectors(P, o_p, q, v, work, m):
    """``d`` and ``ḋ`` of the point spring at ``P[o_p:]``."""
    xa, ua = _end_point(work, q, v, int(P[o_p]), P[o_p + 2], P[o_p + 3], P[o_p + 4], m)
    xb, ub = _end_point(work, q, v, int(P[o_p + 1]), P[o_p + 5], P[o_p + 6], P[o_p + 7], m)
    return (xb[0] - xa[0], xb[1] - xa[1], xb[2] - xa[2]), (ub[0] - ua[0], ub[1] - ua[1], ub[2] - ua[2])


@in_place
def _point_force(d, dd, k, L0, c):
    """``F = −k d + k L₀ d/ℓ − (c/ℓ²)(d·ḋ) d`` on body b."""
    if L0 == 0.0 and c == 0.0:
        return -k * d[0], -k * d[1], -k * d[2]
    ll = _dot(d, d)
    f = -k + k * L0 / np.sqrt(ll) - c * _dot(d, dd) / ll
    return f * d[0], f * d[1], f * d[2]


@in_place
def _a_times(d, dd, k, L0, c, x):
    """``A x`` with ``A = ∂F/∂d = −k I + k L₀ (I/ℓ − d dᵀ/ℓ³) − (c/ℓ²)((d·ḋ) I + d ḋᵀ − 2 (d·ḋ) d dᵀ/ℓ²)``."""
    if L0 == 0.0 and c == 0.0:
        return -k * x[0], -k * x[1], -k * x[2]
    ll = _dot(d, d)
    l = np.sqrt(ll)
    dx, r = _dot(d, x), _dot(d, dd)
    along_x = -k + k * L0 / l - c * r / ll
    along_d = -k * L0 * dx / (ll * l) - c * _dot(dd, x) / ll + 2.0 * c * r * dx / (ll * ll)
    return (along_x * x[0] + along_d * d[0], along_x * x[1] + along_d * d[1], along_x * x[2] + along_d * d[2])


@in_place
def _b_times(d, c, x):
    """``B x = −(c/ℓ²) d (d·x)`` with ``B = ∂F/∂ḋ``."""
    if c == 0.0:
        return 0.0, 0.0, 0.0
    f = -c * _dot(d, x) / _dot(d, d)
    return f * d[0], f * d[1], f * d[2]


@in_place
def _unit(i):
    return 1.0 if i == 0 else 0.0, 1.0 if i == 1 else 0.0, 1.0 if i == 2 else 0.0


@in_place
def _end(P, o_p, e):
    """Body, sign (−1 for a, +1 for b) and point of end ``e`` of the point spring at ``P[o_p:]``."""
    o = o_p + 2 + 3 * e
    return int(P[o_p + e]), 2.0 * e - 1.0, (P[o], P[o + 1], P[o + 2])


@in_place
def _point_terms(form, P, o_p, q, v, jac, work, g, nb, m):
    """Add the point spring at ``P[o_p:]`` to the forces and body torques (``g``) and, with
    ``jac``, its torque derivatives to the pages ``Tr`` (along ρ_j at fixed ω) and ``Tw``."""
    _, _, TR, TW = _pages(nb)
    k, L0, c = P[o_p + 8], P[o_p + 9], P[o_p + 10]
    d, dd = _point_vectors(P, o_p, q, v, work, m)
    F = _point_force(d, dd, k, L0, c)
    for e in range(2):
        i, si, p = _end(P, o_p, e)
        if i < 0:
            continue
        t = _cross(p, page_mtv(work, i * BODY_PAGES + R_, si * F[0], si * F[1], si * F[2]))
        for r in range(3):
            g[i * m + r] += si * F[r]
            g[i * m + 3 + r] += t[r]
    if not jac:
        return
    for ej in range(2):
        j, sj, pj = _end(P, o_p, ej)
        if j < 0:
            continue
        bj = j * BODY_PAGES
        wp = _cross((work[bj + RATES_, 0, 0], work[bj + RATES_, 0, 1], work[bj + RATES_, 0, 2]), pj)
        for kk in range(form[0]):
            Ap = _a_times(d, dd, k, L0, c, page_mv(work, bj + DR_ + kk, pj[0], pj[1], pj[2]))
            Bw = _b_times(d, c, page_mv(work, bj + DR_ + kk, wp[0], wp[1], wp[2]))
            Fr = (sj * (Ap[0] + Bw[0]), sj * (Ap[1] + Bw[1]), sj * (Ap[2] + Bw[2]))  # ∂F/∂ρ_jk at fixed ω
            for ei in range(2):
                i, si, pi = _end(P, o_p, ei)
                if i < 0:
                    continue
                tv = _cross(pi, page_mtv(work, i * BODY_PAGES + R_, si * Fr[0], si * Fr[1], si * Fr[2]))
                if i == j:  # and ∂Rᵢᵀ/∂ρ_k F
                    tD = _cross(pi, page_mtv(work, bj + DR_ + kk, si * F[0], si * F[1], si * F[2]))
                    tv = (tv[0] + tD[0], tv[1] + tD[1], tv[2] + tD[2])
                for r in range(3):
                    work[TR + i * nb + j, r, kk] += tv[r]
        if c == 0.0:
            continue
        for cc in range(3):  # ∂F/∂ω_j e_cc = s_j B R_j (e_cc × p_j)
            ep = _cross(_unit(cc), pj)
            Bc = _b_times(d, c, page_mv(work, bj + R_, ep[0], ep[1], ep[2]))
            for ei in range(2):
                i, si, pi = _end(P, o_p, ei)
                if i < 0:
                    continue
                s = si * sj
                tw = _cross(pi, page_mtv(work, i * BODY_PAGES + R_, s * Bc[0], s * Bc[1], s * Bc[2]))
                for r in range(3):
                    work[TW + i * nb + j, r, cc] += tw[r]


@in_place
def _point_jacobian(form, P, o_p, q, v, work, nb, m, K, C):
    """The entries of ``K``, ``C`` of the point spring at ``P[o_p:]`` in the position rows or
    columns (after :func:`~mbslib.formulations.compiled.rotation_block`, which wrote the pages
    ``W = ∂ω/∂ρ``): ``∂F/∂x_j = s_j A``, ``∂F/∂u_j = s_j B``, ``∂F/∂ρ_jk = s_j (A ∂R_j/∂ρ_k p_j
    + B (∂R_j/∂ρ_k (ω_j × p_j) + R_j (W_k × p_j)))``, ``∂F/∂ν_jk = s_j B R_j (Ĝ_k × p_j)``; the
    rotational rows take ``Ĝᵢᵀ p̃ᵢ Rᵢᵀ`` of these (position columns)."""
    _, W, _, _ = _pages(nb)
    l = form[0]
    k, L0, c = P[o_p + 8], P[o_p + 9], P[o_p + 10]
    d, dd = _point_vectors(P, o_p, q, v, work, m)
    for ei in range(2):
        i, si, pi = _end(P, o_p, ei)
        if i < 0:
            continue
        Gi, Ri = i * BODY_PAGES + G_, i * BODY_PAGES + R_
        for ej in range(2):
            j, sj, pj = _end(P, o_p, ej)
            if j < 0:
                continue
            s, bj = si * sj, j * BODY_PAGES
            for cc in range(3):
                Ae = _a_times(d, dd, k, L0, c, _unit(cc))
                Be = _b_times(d, c, _unit(cc))
                tA = _cross(pi, page_mtv(work, Ri, Ae[0], Ae[1], Ae[2]))
                tB = _cross(pi, page_mtv(work, Ri, Be[0], Be[1], Be[2]))
                for r in range(3):
                    K[i * m + r, j * m + cc] -= s * Ae[r]
                    C[i * m + r, j * m + cc] -= s * Be[r]
                for a in range(l):
                    K[i * m + 3 + a, j * m + cc] -= s * (work[Gi, 0, a] * tA[0] + work[Gi, 1, a] * tA[1]
                                                         + work[Gi, 2, a] * tA[2])
                    C[i * m + 3 + a, j * m + cc] -= s * (work[Gi, 0, a] * tB[0] + work[Gi, 1, a] * tB[1]
                                                         + work[Gi, 2, a] * tB[2])
            wp = _cross((work[bj + RATES_, 0, 0], work[bj + RATES_, 0, 1], work[bj + RATES_, 0, 2]), pj)
            for kk in range(l):
                Ap = _a_times(d, dd, k, L0, c, page_mv(work, bj + DR_ + kk, pj[0], pj[1], pj[2]))
                dRw = page_mv(work, bj + DR_ + kk, wp[0], wp[1], wp[2])
                Wp = _cross((work[W + j, 0, kk], work[W + j, 1, kk], work[W + j, 2, kk]), pj)
                RWp = page_mv(work, bj + R_, Wp[0], Wp[1], Wp[2])
                Gp = _cross((work[bj + G_, 0, kk], work[bj + G_, 1, kk], work[bj + G_, 2, kk]), pj)
                Bw = _b_times(d, c, (dRw[0] + RWp[0], dRw[1] + RWp[1], dRw[2] + RWp[2]))
                Bg = _b_times(d, c, page_mv(work, bj + R_, Gp[0], Gp[1], Gp[2]))
                for r in range(3):
                    K[i * m + r, j * m + 3 + kk] -= s * (Ap[r] + Bw[r])
                    C[i * m + r, j * m + 3 + kk] -= s * Bg[r]


@in_place
def multibody_dynamics(form, P, q, v, t, jac, work, M, g, K, C):
    """``blockdiag(mᵢ I, ĜᵢᵀJᵢĜᵢ)``, ``g`` (gravity, springs, point springs, gyroscopic terms;
    eqs. 14, 23) and the analytic ``K``, ``C`` (springs couple the rows of their two bodies): the
    blocks of :func:`pattern` only, so the cost is linear in the numbers of bodies and springs."""
    nb = int(P[0])
    l = form[0]
    m = 3 + l
    J, W, TR, TW = _pages(nb)
    o_spring = _HEADER + _BODY * nb + _ROW * int(P[1])
    n_springs = int(P[2])
    o_point, n_points = o_spring + _SPRING * n_springs, int(P[6])
    for i in range(nb):
        o = i * m
        M[o:o + m, o:o + m] = 0.0
        if jac:
            K[o:o + m, o:o + m] = 0.0
            C[o:o + m, o:o + m] = 0.0
            for p in (TR + i * nb + i, TW + i * nb + i):
                work[p, :, :] = 0.0
    if jac:
        for ks in range(n_springs + n_points):
            a, b = _pair(P, o_spring, o_point, n_springs, ks)
            if a >= 0 and b >= 0 and a != b:
                for p in (TR + a * nb + b, TW + a * nb + b, TR + b * nb + a, TW + b * nb + a):
                    work[p, :, :] = 0.0
                for i, j in ((a, b), (b, a)):
                    K[i * m:(i + 1) * m, j * m:(j + 1) * m] = 0.0
                    C[i * m:(i + 1) * m, j * m:(j + 1) * m] = 0.0
    for i in range(nb):
        o = i * m
        b = _HEADER + _BODY * i
        form[2](q, v, o + 3, jac, work, i * BODY_PAGES)
        for r in range(3):
            M[o + r, o + r] = P[b]
            g[o + r] = P[b] * P[3 + r]
            for c in range(3):
                work[J + i, r, c] = P[b + 1 + r] if r == c else 0.0
        for r in range(l):
            g[o + 3 + r] = 0.0
    for ks in range(n_springs):
        _spring_terms(form, P, o_spring + _SPRING * ks, t, jac, work, g, nb, m)
    for ks in range(n_points):
        _point_terms(form, P, o_point + _POINT * ks, q, v, jac, work, g, nb, m)
    for i in range(nb):
        rotation_block(form, work, i * BODY_PAGES, J + i, TR + i * nb + i, TW + i * nb + i, W + i, v,
                       i * m + 3, jac, M, g, K, C)
    if not jac:
        return
    for ks in range(n_points):
        _point_jacobian(form, P, o_point + _POINT * ks, q, v, work, nb, m, K, C)
    for ks in range(n_springs + n_points):  # coupling of a spring's bodies: i's rotational rows, j's rotation and rates
        sa, sb = _pair(P, o_spring, o_point, n_springs, ks)
        if sa < 0 or sb < 0 or sa == sb:
            continue
        for i, j in ((sa, sb), (sb, sa)):
            Gi, Gj, tr, tw = i * BODY_PAGES + G_, j * BODY_PAGES + G_, TR + i * nb + j, TW + i * nb + j
            for kk in range(l):
                for a in range(l):
                    kr = 0.0
                    cr = 0.0
                    for r in range(3):
                        dr = work[tr, r, kk]
                        dv = 0.0
                        for c in range(3):
                            dr += work[tw, r, c] * work[W + j, c, kk]
                            dv += work[tw, r, c] * work[Gj, c, kk]
                        kr += work[Gi, r, a] * dr
                        cr += work[Gi, r, a] * dv
                    K[i * m + 3 + a, j * m + 3 + kk] = -kr
                    C[i * m + 3 + a, j * m + 3 + kk] = -cr


@in_place
def multibody_constraints(form, P, q, work, phi, B):
    """Joint rows and normalisations (module docstring) with ``B = ∂Φ̇/∂v`` (the entries of
    :func:`pattern` only)."""
    nb = int(P[0])
    n_rows = int(P[1])
    l = form[0]
    m = 3 + l
    for i in range(nb):
        form[2](q, q, i * m + 3, True, work, i * BODY_PAGES)  # the rates are not used
    for k in range(n_rows):
        r = _HEADER + _BODY * nb + _ROW * k
        a, b = int(P[r + 1]), int(P[r + 2])
        for body in (a, b):
            if body >= 0:
                B[k, body * m:(body + 1) * m] = 0.0
        if int(P[r]) == mb.POSITION:
            w = (P[r + 3], P[r + 4], P[r + 5])
            acc = -P[r + 15]
            for body, p, sign in ((a, r + 9, -1.0), (b, r + 12, 1.0)):
                Rp = _rot(work, body, P[p], P[p + 1], P[p + 2])
                acc += sign * _dot(w, Rp)
                if body < 0:  # the ground: x = 0, R = I
                    continue
                o = body * m
                for c in range(3):
                    acc += sign * w[c] * q[o + c]
                    B[k, o + c] += sign * w[c]
                for kk in range(l):
                    dRp = page_mv(work, body * BODY_PAGES + DR_ + kk, P[p], P[p + 1], P[p + 2])
                    B[k, o + 3 + kk] += sign * _dot(w, dRp)
            phi[k] = acc
        else:
            ua = _rot(work, a, P[r + 3], P[r + 4], P[r + 5])
            ub = _rot(work, b, P[r + 6], P[r + 7], P[r + 8])
            phi[k] = _dot(ua, ub) - P[r + 15]
            for body, u, other in ((a, r + 3, ub), (b, r + 6, ua)):
                if body < 0:
                    continue
                for kk in range(l):
                    dRu = page_mv(work, body * BODY_PAGES + DR_ + kk, P[u], P[u + 1], P[u + 2])
                    B[k, body * m + 3 + kk] += _dot(other, dRu)
    normalizations(form, q, n_rows, phi, B)


@in_place
def state_record(form, P, q, v, work, out):
    """The whole state ``[q; v]``."""
    n = q.size
    for i in range(n):
        out[i] = q[i]
        out[n + i] = v[i]


#: The multibody model family (any :class:`mbslib.systems.multibody.System`).
MULTIBODY = ModelKind(
    "rigid multibody system",
    (multibody_dynamics, multibody_constraints, state_record, bodies_uac, bodies_tangent,
     bodies_tangent_inv),
    n=lambda P, form: int(P[0]) * (3 + form[0]),
    n_constraints=lambda P, form: int(P[1]) + int(P[0]) * form[1],
    n_pages=n_pages,
    n_record=lambda P, form: 2 * int(P[0]) * (3 + form[0]),
    check=lambda P, form: mb.check_params(P),
    pattern=pattern,
)
