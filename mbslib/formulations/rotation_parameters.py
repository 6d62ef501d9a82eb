"""Rotation parameters of one rigid body in paper 002's three formulations, as compiled bundles.

Holzinger, Arnold & Gerstmayr (2024), Sect. 2: a body stores rotation parameters ``ρ`` (``l`` of
them) and velocity coordinates ``ν``; the body angular velocity is ``ω = Ĝ(ρ) ν``.

- **RV** (Lie group, eqs. 15–31): ``ρ = ψ`` rotation vector, ``ν = ω`` (``Ĝ = I``); a
  configuration is changed by ``R exp(z̃)``, so every "derivative with respect to ρ" of this
  formulation is taken along the local increment ``z`` at ``z = 0`` (eqs. 37, 38); the update is
  the LGT map ``ψ ⋄ Δψ`` (eq. 30) and the tangent operator is ``T_exp`` (App. A.1).
- **Rxyz** (classical formulation 2, eqs. 12–14): Tait–Bryan angles, ``ν = φ̇``,
  ``Ĝ = Ĝ_loc(φ)``; update by addition, tangent operator ``I``.
- **EP** (classical formulation 2): Euler parameters ``p``, ``ν = ṗ``, ``Ĝ = 2 Ḡ(p)`` (linear in
  p), the rotation by the quadratic formula (a rotation only on ``|p| = 1``, differentiated
  exactly also off it) and one normalisation constraint ``pᵀp − 1 = 0`` per body.

A formulation is the tuple ``(l, extra, kin, update, tangent, normalization, tangent_inv)``
(``RV``, ``RXYZ``, ``EP``): the number of parameters, of constraints it adds per body, and five
numba functions with one signature for all three, so that a model kernel written once runs every
formulation (the formulation is an argument, see :mod:`mbslib.formulations.compiled`). A body's
parameters sit at offset ``o`` of the coordinate vector ``q`` (its rates at ``o`` of ``v``):

``kin(q, v, o, deriv, work, b)``
    writes into the 4×4 pages ``work[b + …]`` of the body: ``R`` (page :data:`R_`), ``Ĝ`` (3×l,
    :data:`G_`), ``ω = Ĝ ν`` and ``κ = (d/dt Ĝ) ν`` (the term ``Ġ ρ̇`` of eq. 14; rows 0 and 1 of
    :data:`RATES_`) and, with ``deriv``, ``∂R/∂ρ_k`` (pages ``DR_ + k``; RV: ``R ẽ_k``),
    ``∂Ĝ/∂ρ_k`` (``DG_ + k``), ``∂κ/∂ρ`` and ``∂κ/∂ν`` (3×l, ``DKAPPA_`` and ``DKAPPA_ + 1``);
``update(q_n, Δq, q, o)``
    ``ρ = ρ_n ⋄ Δρ`` (RV) or ``ρ_n + Δρ``;
``tangent(Δq, T, o)``
    writes ``T_exp(Δρ)`` (RV) or ``I`` into ``T[o:o+l, o:o+l]``;
``normalization(q, o, B, row)``
    returns the constraint ``pᵀp − 1`` and writes its gradient ``2p`` into ``B[row, o:o+4]`` (EP;
    the other formulations add no constraint and never call it);
``tangent_inv(Δq, v, out, o)``
    writes ``T_exp⁻¹(Δρ) v`` (RV, eq. 25) or ``v`` into ``out[o:o+l]`` (the RKMK stages).

Everything reads and writes elements of the arrays it is given: no allocation and no array
views (a view costs two atomic reference-count updates, which dominated these small kernels).
"""

from __future__ import annotations

import numpy as np

from mbslib.in_place import in_place
from mbslib.kernels import sinc, texp_coefficient, texp_inv_coefficient

#: Pages (4×4) of one body in a work array, by offset from the body's first page.
R_, DR_, G_, DG_, RATES_, DKAPPA_ = 0, 1, 5, 6, 10, 11
BODY_PAGES = 13


# ---------------------------------------------------------------------------------------------
# RV: rotation vector (Lie group)
# ---------------------------------------------------------------------------------------------


@in_place
def _r_skew_into(work, R, a0, a1, a2, out):
    """Page ``out`` = page ``R`` times ``ã``: column j is ``R (a × e_j)``."""
    for i in range(3):
        r0, r1, r2 = work[R, i, 0], work[R, i, 1], work[R, i, 2]
        work[out, i, 0] = r1 * a2 - r2 * a1
        work[out, i, 1] = r2 * a0 - r0 * a2
        work[out, i, 2] = r0 * a1 - r1 * a0


@in_place
def kin_rv(q, v, o, deriv, work, b):
    """RV: ``R = exp(ψ̃) = I + sinc φ ψ̃ + ½ sinc²(φ/2) ψ̃²``, ``Ĝ = I``, ``κ = 0``,
    ``∂R/∂ρ_k = R ẽ_k`` (derivative along ``R exp(z̃)``)."""
    p = (q[o], q[o + 1], q[o + 2])
    phi = np.sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2])
    a = sinc(phi)
    s2 = sinc(0.5 * phi)
    c = 0.5 * s2 * s2
    R = b + R_
    S = ((0.0, -p[2], p[1]), (p[2], 0.0, -p[0]), (-p[1], p[0], 0.0))
    for i in range(3):  # ψ̃² = ψψᵀ − φ² I
        for j in range(3):
            work[R, i, j] = (1.0 if i == j else 0.0) + a * S[i][j] + c * (
                p[i] * p[j] - (phi * phi if i == j else 0.0))
            work[b + G_, i, j] = 1.0 if i == j else 0.0
        work[b + RATES_, 0, i] = v[o + i]
        work[b + RATES_, 1, i] = 0.0
    if deriv:
        for k in range(3):
            _r_skew_into(work, R, 1.0 if k == 0 else 0.0, 1.0 if k == 1 else 0.0, 1.0 if k == 2 else 0.0,
                         b + DR_ + k)
            for i in range(3):
                for j in range(3):
                    work[b + DG_ + k, i, j] = 0.0
                    work[b + DKAPPA_, i, j] = 0.0
                    work[b + DKAPPA_ + 1, i, j] = 0.0


@in_place
def update_rv(q_n, dq, q, o):
    """LGT map ``ψ = ψ_n ⋄ Δψ`` with ``R(ψ) = R(ψ_n) R(Δψ)`` (eq. 30, App. A.3).

    Through the unit-quaternion product; the angle is ``2 atan2(|ρ|/2, x)`` ∈ [0, 2π] (no flip
    to ``|ψ| ≤ π``, as in Exudyn), as :func:`mbslib.kernels.compose_rv`.
    """
    a0, a1, a2 = q_n[o], q_n[o + 1], q_n[o + 2]
    b0, b1, b2 = dq[o], dq[o + 1], dq[o + 2]
    na = np.sqrt(a0 * a0 + a1 * a1 + a2 * a2)
    nb = np.sqrt(b0 * b0 + b1 * b1 + b2 * b2)
    c0, c1 = np.cos(0.5 * na), np.cos(0.5 * nb)
    s0, s1 = sinc(0.5 * na), sinc(0.5 * nb)
    x = c0 * c1 - 0.25 * s0 * s1 * (a0 * b0 + a1 * b1 + a2 * b2)
    h = 0.5 * s0 * s1
    r0 = s0 * c1 * a0 + c0 * s1 * b0 + h * (a1 * b2 - a2 * b1)
    r1 = s0 * c1 * a1 + c0 * s1 * b1 + h * (a2 * b0 - a0 * b2)
    r2 = s0 * c1 * a2 + c0 * s1 * b2 + h * (a0 * b1 - a1 * b0)
    nr = np.sqrt(r0 * r0 + r1 * r1 + r2 * r2)
    f = 0.0 if nr == 0.0 else 2.0 * np.arctan2(0.5 * nr, x) / nr
    q[o], q[o + 1], q[o + 2] = f * r0, f * r1, f * r2


@in_place
def tangent_rv(dq, T, o):
    """``T_exp(Ω) = I − ½ sinc²(φ/2) Ω̃ + (1 − sin φ/φ)/φ² Ω̃²`` (App. A.1) into ``T[o:o+3, o:o+3]``."""
    w = (dq[o], dq[o + 1], dq[o + 2])
    phi = np.sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2])
    s2 = sinc(0.5 * phi)
    a = -0.5 * s2 * s2
    c = texp_coefficient(phi)
    S = ((0.0, -w[2], w[1]), (w[2], 0.0, -w[0]), (-w[1], w[0], 0.0))
    for i in range(3):
        for j in range(3):
            T[o + i, o + j] = (1.0 if i == j else 0.0) + a * S[i][j] + c * (
                w[i] * w[j] - (phi * phi if i == j else 0.0))


@in_place
def tangent_inv_rv(dq, v, out, o):
    """``T_exp⁻¹(Ω) v = v + ½ Ω × v + γ Ω × (Ω × v)`` (eq. 25, App. A.1) into ``out[o:o+3]``."""
    w0, w1, w2 = dq[o], dq[o + 1], dq[o + 2]
    x0, x1, x2 = v[o], v[o + 1], v[o + 2]
    phi = np.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
    if phi == 0.0:
        out[o], out[o + 1], out[o + 2] = x0, x1, x2
        return
    g = texp_inv_coefficient(phi)
    k0, k1, k2 = w1 * x2 - w2 * x1, w2 * x0 - w0 * x2, w0 * x1 - w1 * x0  # Ω × v
    l0, l1, l2 = w1 * k2 - w2 * k1, w2 * k0 - w0 * k2, w0 * k1 - w1 * k0  # Ω × (Ω × v)
    out[o], out[o + 1], out[o + 2] = x0 + 0.5 * k0 + g * l0, x1 + 0.5 * k1 + g * l1, x2 + 0.5 * k2 + g * l2


@in_place
def no_normalization(q, o, B, row):
    """RV and Rxyz add no constraint (never called)."""
    return 0.0


# ---------------------------------------------------------------------------------------------
# Rxyz: Tait–Bryan angles
# ---------------------------------------------------------------------------------------------


@in_place
def kin_rxyz(q, v, o, deriv, work, b):
    """Rxyz: ``R = R_x(φ₀) R_y(φ₁) R_z(φ₂)``, ``Ĝ_loc = [[cβcγ, sγ, 0], [−cβsγ, cγ, 0], [sβ, 0, 1]]``,
    ``κ = Ġ φ̇`` with ``Ġ = ∂Ĝ/∂β β̇ + ∂Ĝ/∂γ γ̇``; ``∂R/∂φ_k = R (Ĝ e_k)~`` (Ṙ = R ω̃)."""
    ca, sa = np.cos(q[o]), np.sin(q[o])
    cb, sb = np.cos(q[o + 1]), np.sin(q[o + 1])
    cg, sg = np.cos(q[o + 2]), np.sin(q[o + 2])
    R, G, rates = b + R_, b + G_, b + RATES_
    work[R, 0, 0], work[R, 0, 1], work[R, 0, 2] = cb * cg, -cb * sg, sb
    work[R, 1, 0], work[R, 1, 1], work[R, 1, 2] = ca * sg + sa * sb * cg, ca * cg - sa * sb * sg, -sa * cb
    work[R, 2, 0], work[R, 2, 1], work[R, 2, 2] = sa * sg - ca * sb * cg, sa * cg + ca * sb * sg, ca * cb
    g = ((cb * cg, sg, 0.0), (-cb * sg, cg, 0.0), (sb, 0.0, 1.0))
    n0, n1, n2 = v[o], v[o + 1], v[o + 2]
    # Ġ (only its first two columns are non-zero)
    gd = ((-sb * cg * n1 - cb * sg * n2, cg * n2, 0.0), (sb * sg * n1 - cb * cg * n2, -sg * n2, 0.0),
          (cb * n1, 0.0, 0.0))
    for i in range(3):
        for j in range(3):
            work[G, i, j] = g[i][j]
        work[rates, 0, i] = g[i][0] * n0 + g[i][1] * n1 + g[i][2] * n2
        work[rates, 1, i] = gd[i][0] * n0 + gd[i][1] * n1
    if not deriv:
        return
    # ∂Ĝ/∂α = 0, ∂Ĝ/∂β, ∂Ĝ/∂γ
    dg = (((0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)),
          ((-sb * cg, 0.0, 0.0), (sb * sg, 0.0, 0.0), (cb, 0.0, 0.0)),
          ((-cb * sg, cg, 0.0), (-cb * cg, -sg, 0.0), (0.0, 0.0, 0.0)))
    # ∂κ/∂φ: Σ_k ν_k ∂²Ĝ/∂φ_j∂φ_k ν (columns β, γ; α: 0)
    dk = ((0.0, -cb * cg * n1 * n0 + sb * sg * n2 * n0, sb * sg * n1 * n0 - cb * cg * n2 * n0 - sg * n2 * n1),
          (0.0, cb * sg * n1 * n0 + sb * cg * n2 * n0, sb * cg * n1 * n0 + cb * sg * n2 * n0 - cg * n2 * n1),
          (0.0, -sb * n1 * n0, 0.0))
    for k in range(3):
        _r_skew_into(work, R, g[0][k], g[1][k], g[2][k], b + DR_ + k)
        for i in range(3):
            for j in range(3):
                work[b + DG_ + k, i, j] = dg[k][i][j]
            work[b + DKAPPA_, i, k] = dk[i][k]
            # ∂κ/∂ν_k = Ġ e_k + (∂Ĝ/∂φ_k) ν
            work[b + DKAPPA_ + 1, i, k] = gd[i][k] + dg[k][i][0] * n0 + dg[k][i][1] * n1 + dg[k][i][2] * n2


# Two functions, not one with the length as an argument: numba would compile that one twice
# (for the literals 3 and 4).
@in_place
def update_add3(q_n, dq, q, o):
    """Rxyz: ``φ = φ_n + Δφ`` (eq. 31)."""
    for i in range(o, o + 3):
        q[i] = q_n[i] + dq[i]


@in_place
def update_add4(q_n, dq, q, o):
    """EP: ``p = p_n + Δp`` (eq. 31)."""
    for i in range(o, o + 4):
        q[i] = q_n[i] + dq[i]


@in_place
def tangent_identity3(dq, T, o):
    """Rxyz: ``T_exp = I`` (the caller has zeroed ``T``)."""
    for i in range(o, o + 3):
        T[i, i] = 1.0


@in_place
def tangent_identity4(dq, T, o):
    """EP: ``T_exp = I`` (the caller has zeroed ``T``)."""
    for i in range(o, o + 4):
        T[i, i] = 1.0


@in_place
def tangent_inv_identity3(dq, v, out, o):
    """Rxyz: ``T_exp⁻¹ v = v``."""
    for i in range(o, o + 3):
        out[i] = v[i]


@in_place
def tangent_inv_identity4(dq, v, out, o):
    """EP: ``T_exp⁻¹ v = v``."""
    for i in range(o, o + 4):
        out[i] = v[i]


# ---------------------------------------------------------------------------------------------
# EP: Euler parameters
# ---------------------------------------------------------------------------------------------


@in_place
def _gbar_into(work, page, p0, p1, p2, p3):
    """``2 Ḡ(p)`` with rows ``[−p₁, p₀, p₃, −p₂]``, ``[−p₂, −p₃, p₀, p₁]``, ``[−p₃, p₂, −p₁, p₀]``."""
    work[page, 0, 0], work[page, 0, 1], work[page, 0, 2], work[page, 0, 3] = -2 * p1, 2 * p0, 2 * p3, -2 * p2
    work[page, 1, 0], work[page, 1, 1], work[page, 1, 2], work[page, 1, 3] = -2 * p2, -2 * p3, 2 * p0, 2 * p1
    work[page, 2, 0], work[page, 2, 1], work[page, 2, 2], work[page, 2, 3] = -2 * p3, 2 * p2, -2 * p1, 2 * p0


@in_place
def kin_ep(q, v, o, deriv, work, b):
    """EP: ``R(p) = (p₀² − eᵀe) I + 2 e eᵀ + 2 p₀ ẽ``, ``Ĝ = 2 Ḡ(p)``, ``κ = Ĝ(ṗ) ṗ = 0``
    (``Ḡ(a) b = −Ḡ(b) a``); ``∂R/∂p`` is the exact derivative of the quadratic formula and
    ``∂Ĝ/∂p_k = 2 Ḡ(e_k)``."""
    p0, e = q[o], (q[o + 1], q[o + 2], q[o + 3])
    c = p0 * p0 - (e[0] * e[0] + e[1] * e[1] + e[2] * e[2])
    S = ((0.0, -e[2], e[1]), (e[2], 0.0, -e[0]), (-e[1], e[0], 0.0))
    R, G, rates = b + R_, b + G_, b + RATES_
    for i in range(3):
        for j in range(3):
            work[R, i, j] = (c if i == j else 0.0) + 2.0 * e[i] * e[j] + 2.0 * p0 * S[i][j]
    _gbar_into(work, G, p0, e[0], e[1], e[2])
    for i in range(3):
        work[rates, 0, i] = (work[G, i, 0] * v[o] + work[G, i, 1] * v[o + 1] + work[G, i, 2] * v[o + 2]
                             + work[G, i, 3] * v[o + 3])
        work[rates, 1, i] = 0.0
    if not deriv:
        return
    # ∂R/∂p₀ = 2 p₀ I + 2 ẽ;  ∂R/∂e_k = −2 e_k I + 2 (ε_k eᵀ + e ε_kᵀ) + 2 p₀ ε̃_k
    for i in range(3):
        for j in range(3):
            work[b + DR_, i, j] = (2.0 * p0 if i == j else 0.0) + 2.0 * S[i][j]
            for k in range(3):
                eps = ((0.0, -1.0 if k == 2 else 0.0, 1.0 if k == 1 else 0.0),
                       (1.0 if k == 2 else 0.0, 0.0, -1.0 if k == 0 else 0.0),
                       (-1.0 if k == 1 else 0.0, 1.0 if k == 0 else 0.0, 0.0))[i][j]
                work[b + DR_ + 1 + k, i, j] = ((-2.0 * e[k] if i == j else 0.0)
                                               + 2.0 * ((e[j] if i == k else 0.0) + (e[i] if j == k else 0.0))
                                               + 2.0 * p0 * eps)
    for k in range(4):
        _gbar_into(work, b + DG_ + k, 1.0 if k == 0 else 0.0, 1.0 if k == 1 else 0.0, 1.0 if k == 2 else 0.0,
                   1.0 if k == 3 else 0.0)
        for i in range(3):
            work[b + DKAPPA_, i, k] = 0.0
            work[b + DKAPPA_ + 1, i, k] = 0.0


@in_place
def normalization_ep(q, o, B, row):
    """``pᵀp − 1`` and its gradient ``2p`` (into ``B[row, o:o+4]``)."""
    s = 0.0
    for i in range(4):
        s += q[o + i] * q[o + i]
        B[row, o + i] = 2.0 * q[o + i]
    return s - 1.0


#: The formulation bundles ``(l, extra, kin, update, tangent, normalization, tangent_inv)``.
RV = (3, 0, kin_rv, update_rv, tangent_rv, no_normalization, tangent_inv_rv)
RXYZ = (3, 0, kin_rxyz, update_add3, tangent_identity3, no_normalization, tangent_inv_identity3)
EP = (4, 1, kin_ep, update_add4, tangent_identity4, normalization_ep, tangent_inv_identity4)
#: Minimal coordinates (a vector space, no rotation parameters, l = 0): the bundle's functions
#: are never called; it fills the formulation argument of the kernels.
VECTOR = (0, 0, kin_rv, update_add3, tangent_identity3, no_normalization, tangent_inv_identity3)
#: The Lie group formulation: its velocities are body twists, so the mass matrix is constant
#: (eq. 23) and the update is the LGT map with ``T_exp ≠ I``.
LIE_GROUP = RV
#: By name, as the chapters spell them.
BY_NAME = {"RV": RV, "Rxyz": RXYZ, "EP": EP}
