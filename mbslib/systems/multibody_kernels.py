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
a spring couples the rows of its two bodies. The rotational rows of each body are those of
:func:`mbslib.formulations.compiled.rotation_block` (``Ĝᵀ(τ − ω × Jω − Jκ)``).

Constraints: the joint rows ``wᵀ(x_b + R_b p_b − x_a − R_a p_a) − c`` and
``(R_a u_a)ᵀ(R_b u_b) − c`` with ``B`` from ``dR/dρ_k`` (RV: along ``R exp(z̃)``), then the
formulation's normalisations.
"""

from __future__ import annotations

import numba
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
from mbslib.loads import bang_bang
from mbslib.systems import multibody as mb

_HEADER, _BODY, _ROW, _SPRING = 6, 4, 16, 16


def n_pages(P, form) -> int:
    """Scratch: the bodies' pages, per body its inertia ``J`` and ``W = ∂ω/∂ρ``, per pair of
    bodies the torque derivatives ``∂τᵢ/∂ρⱼ`` and ``∂τᵢ/∂ωⱼ`` (4×4 pages)."""
    nb = int(P[0])
    return nb * (BODY_PAGES + 2) + 2 * nb * nb


def pattern(P, form) -> tuple[np.ndarray, np.ndarray]:
    """Structural nonzeros (:class:`~mbslib.formulations.compiled.ModelKind`): each body's
    diagonal block and the blocks coupling the two bodies of a spring in ``M, K, C``; in ``B`` a
    joint row's bodies and a normalisation row's body."""
    nb, n_rows, n_springs = int(P[0]), int(P[1]), int(P[2])
    m = 3 + form[0]
    n = nb * m
    N, Bp = np.zeros((n, n), dtype=bool), np.zeros((n_rows + nb * form[1], n), dtype=bool)
    for i in range(nb):
        N[i * m:(i + 1) * m, i * m:(i + 1) * m] = True
    o_spring = _HEADER + _BODY * nb + _ROW * n_rows
    for ks in range(n_springs):
        bodies = [int(x) for x in P[o_spring + _SPRING * ks:o_spring + _SPRING * ks + 2] if x >= 0]
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


@numba.njit(cache=True)
def _pages(nb):
    """First pages of ``J`` (per body), ``W`` (per body), ``Tr`` and ``Tw`` (per pair i nb + j)."""
    J = nb * BODY_PAGES
    return J, J + nb, J + 2 * nb, J + 2 * nb + nb * nb


@numba.njit(cache=True)
def _rot(work, body, x0, x1, x2):
    """``R x`` of a body (identity for the ground, index −1)."""
    if body < 0:
        return x0, x1, x2
    return page_mv(work, body * BODY_PAGES + R_, x0, x1, x2)


@numba.njit(cache=True)
def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@numba.njit(cache=True)
def _cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@numba.njit(cache=True)
def _inertial_rate(work, body):
    """``R ω`` of a body (zero for the ground)."""
    if body < 0:
        return 0.0, 0.0, 0.0
    b = body * BODY_PAGES
    return page_mv(work, b + R_, work[b + RATES_, 0, 0], work[b + RATES_, 0, 1], work[b + RATES_, 0, 2])


@numba.njit(cache=True)
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


@numba.njit(cache=True)
def multibody_dynamics(form, P, q, v, t, jac, work, M, g, K, C):
    """``blockdiag(mᵢ I, ĜᵢᵀJᵢĜᵢ)``, ``g`` (gravity, springs, gyroscopic terms; eqs. 14, 23) and
    the analytic ``K``, ``C`` (springs couple the rotational rows of their two bodies): the
    blocks of :func:`pattern` only, so the cost is linear in the numbers of bodies and springs."""
    nb = int(P[0])
    l = form[0]
    m = 3 + l
    J, W, TR, TW = _pages(nb)
    o_spring = _HEADER + _BODY * nb + _ROW * int(P[1])
    n_springs = int(P[2])
    for i in range(nb):
        o = i * m
        M[o:o + m, o:o + m] = 0.0
        if jac:
            K[o:o + m, o:o + m] = 0.0
            C[o:o + m, o:o + m] = 0.0
            for p in (TR + i * nb + i, TW + i * nb + i):
                work[p, :, :] = 0.0
    if jac:
        for ks in range(n_springs):
            a, b = int(P[o_spring + _SPRING * ks]), int(P[o_spring + _SPRING * ks + 1])
            if a >= 0 and b >= 0 and a != b:
                for p in (TR + a * nb + b, TW + a * nb + b, TR + b * nb + a, TW + b * nb + a):
                    work[p, :, :] = 0.0
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
    for i in range(nb):
        rotation_block(form, work, i * BODY_PAGES, J + i, TR + i * nb + i, TW + i * nb + i, W + i, v,
                       i * m + 3, jac, M, g, K, C)
    if not jac:
        return
    for ks in range(n_springs):  # coupling of a spring's bodies: i's rotational rows, j's rotation and rates
        sa, sb = int(P[o_spring + _SPRING * ks]), int(P[o_spring + _SPRING * ks + 1])
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


@numba.njit(cache=True)
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


@numba.njit(cache=True)
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
