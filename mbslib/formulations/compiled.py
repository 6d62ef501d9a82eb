"""The compiled model interface of paper 002's integrators, and the helpers every body model shares.

A compiled model is a tuple of six numba functions ``(dynamics, constraints, record, uac,
tangent, tangent_inv)`` (a *kernel bundle*); each takes the formulation bundle of
:mod:`mbslib.formulations.rotation_parameters` and the flat parameter vector ``P`` first:

``dynamics(form, P, q, v, t, jac, work, M, g, K, C)``
    the mass matrix ``M`` and the generalized force ``g`` (paper eqs. 9–14, 23: ``M v̇ = g −
    Bᵀλ``) and, with ``jac``, the analytic ``K = −∂g/∂z`` along the update map and
    ``C = −∂g/∂v`` (eqs. 37/38, 42/43);
``constraints(form, P, q, work, Φ, B)``
    the constraints and their Jacobian ``B = ∂Φ̇/∂v`` (eq. 10);
``record(form, P, q, v, work, out)``
    what a time loop stores per record;
``uac(form, P, q_n, Δq, q)``, ``tangent(form, P, Δq, T)``
    the update of absolute coordinates (Algorithm 1) and ``T_exp(Δq)``;
``tangent_inv(form, P, Δq, v, out)``
    ``T_exp⁻¹(Δq) v`` (eq. 25), the slope of the local coordinates in an RKMK stage.

They write into the arrays they are given and allocate none (the single bodies' and the
multibody assembly's are compiled with :data:`mbslib.in_place.in_place`, without reference
counting); ``work`` is the model's scratch, an array of 4×4 pages made by :func:`workspace` once
per run (a body's pages are those of
:mod:`mbslib.formulations.rotation_parameters`; kernels address elements, never views). The
integrators (:mod:`mbslib.integrators.generalized_alpha`, :mod:`mbslib.integrators.runge_kutta`)
are compiled once for the *types*
:data:`MODEL_T` and :data:`FORM_T` (numba first-class functions), so that a new model needs its
kernels and a :class:`ModelKind`, and no integrator or dispatch is edited.

Bodies are stacked as ``[x₀, ρ₀, x₁, ρ₁, …]`` (positions ``x`` absent for a body turning about
a fixed point); :func:`bodies_uac` and :func:`bodies_tangent` serve every such model,
:func:`rotation_block` writes a body's rotational equations with their analytic derivatives and
:func:`normalizations` the formulation's constraints.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numba
import numpy as np
from numba import types
from numba.experimental.function_type import _get_wrapper_address

from mbslib.formulations.rotation_parameters import DG_, DKAPPA_, G_, RATES_
from mbslib.in_place import in_place

warnings.filterwarnings("ignore", category=numba.NumbaExperimentalFeatureWarning)

_f8, _b1, _i8 = types.float64, types.boolean, types.int64
_V, _M2, _M3 = types.float64[::1], types.float64[:, ::1], types.float64[:, :, ::1]

#: numba type of a formulation bundle ``(l, extra, kin, update, tangent, normalization, tangent_inv)``.
FORM_T = types.Tuple((
    _i8,
    _i8,
    types.FunctionType(types.void(_V, _V, _i8, _b1, _M3, _i8)),
    types.FunctionType(types.void(_V, _V, _V, _i8)),
    types.FunctionType(types.void(_V, _M2, _i8)),
    types.FunctionType(_f8(_V, _i8, _M2, _i8)),
    types.FunctionType(types.void(_V, _V, _V, _i8)),
))
#: numba type of a kernel bundle ``(dynamics, constraints, record, uac, tangent, tangent_inv)``; ``work`` is
#: an array of 4×4 pages (:func:`workspace`).
MODEL_T = types.Tuple((
    types.FunctionType(types.void(FORM_T, _V, _V, _V, _f8, _b1, _M3, _M2, _V, _M2, _M2)),
    types.FunctionType(types.void(FORM_T, _V, _V, _M3, _V, _M2)),
    types.FunctionType(types.void(FORM_T, _V, _V, _V, _M3, _V)),
    types.FunctionType(types.void(FORM_T, _V, _V, _V, _V)),
    types.FunctionType(types.void(FORM_T, _V, _V, _M2)),
    types.FunctionType(types.void(FORM_T, _V, _V, _V, _V)),
))


class BoundKernel(types.WrapperAddressProtocol):
    """A compiled kernel as a first-class function value: the address of its machine code for the
    signature of its slot, looked up once (numba looks it up on every call from Python, which
    costs about a millisecond for the nine kernels of a model)."""

    def __init__(self, dispatcher, signature):
        self._address = _get_wrapper_address(dispatcher, signature)  # compiles on first use
        self._signature = signature

    def __wrapper_address__(self) -> int:
        return self._address

    def signature(self):
        return self._signature


@functools.cache
def bind_form(form: tuple) -> tuple:
    """The formulation bundle with its functions as first-class function values
    (:class:`BoundKernel`; the bundle itself when numba is disabled).

    Call a kernel from Python with this, never with the bundle of dispatchers: numba keys its
    on-disk cache on the argument types, and a dispatcher's type is tied to one process, so with
    the raw bundle every process compiles the kernel again and adds an entry that a later process
    cannot save back (``ReferenceError: underlying object has vanished``).
    """
    if numba.config.DISABLE_JIT:
        return form
    return form[:2] + tuple(BoundKernel(f, slot.signature) for f, slot in zip(form[2:], FORM_T.types[2:],
                                                                              strict=True))


@functools.cache
def bind(kernels: tuple, form: tuple) -> tuple[tuple, tuple]:
    """The kernel and formulation bundles as the first-class function values the integrators take
    (:class:`BoundKernel`; plain Python functions when numba is disabled)."""
    if numba.config.DISABLE_JIT:
        return kernels, form
    return (tuple(BoundKernel(f, slot.signature) for f, slot in zip(kernels, MODEL_T.types, strict=True)),
            bind_form(form))


def machine_code(entry):
    """The machine code of a compiled entry point with its one explicit signature, called without
    numba's type dispatch (the integrators build arguments of exactly those types)."""
    return entry if numba.config.DISABLE_JIT else entry.overloads[entry.signatures[0]].entry_point


@dataclass(frozen=True)
class ModelKind:
    """A model family: its kernel bundle and its sizes as functions of ``(P, form)``.

    ``n(P, form)`` coordinates (= velocities), ``n_constraints(P, form)``, ``n_pages(P, form)``
    4×4 pages of scratch (:func:`workspace`), ``n_record(P, form)`` values per record;
    ``check(P, form)`` returns ``P`` as a validated float vector or raises ``ValueError`` naming
    the parameter. ``pattern(P, form)``, if given, returns the structural nonzeros of the model's
    matrices as boolean arrays ``(N, Bp)``: ``N`` (n × n) holds those of ``M``, ``K``, ``C`` and
    ``K T_exp``, ``Bp`` (n_constraints × n) those of ``B``; its kernels then write only these
    entries (the rest of the arrays they are given stays as it is: zero). Without it the
    matrices count as dense.
    """

    name: str
    kernels: tuple
    n: Callable
    n_constraints: Callable
    n_pages: Callable
    n_record: Callable
    check: Callable
    pattern: Callable | None = None


@numba.njit(cache=True)
def workspace(n_pages):
    """Zero scratch of a model: ``n_pages`` pages of 4×4."""
    return np.zeros((n_pages, 4, 4))


@in_place
def clear_page(work, page):
    """Zero page ``page`` of ``work``."""
    for i in range(4):
        for j in range(4):
            work[page, i, j] = 0.0


@in_place
def page_mv(work, A, x0, x1, x2):
    """Page ``A`` (its 3×3 block) times ``[x0, x1, x2]``, as a tuple."""
    return (work[A, 0, 0] * x0 + work[A, 0, 1] * x1 + work[A, 0, 2] * x2,
            work[A, 1, 0] * x0 + work[A, 1, 1] * x1 + work[A, 1, 2] * x2,
            work[A, 2, 0] * x0 + work[A, 2, 1] * x1 + work[A, 2, 2] * x2)


@in_place
def page_mtv(work, A, x0, x1, x2):
    """Page ``A`` (its 3×3 block) transposed times ``[x0, x1, x2]``, as a tuple."""
    return (work[A, 0, 0] * x0 + work[A, 1, 0] * x1 + work[A, 2, 0] * x2,
            work[A, 0, 1] * x0 + work[A, 1, 1] * x1 + work[A, 2, 1] * x2,
            work[A, 0, 2] * x0 + work[A, 1, 2] * x1 + work[A, 2, 2] * x2)


@in_place
def layout(form, n):
    """``(number of bodies, coordinates per body, offset of ρ in a body)`` of ``n`` coordinates:
    one body about a fixed point (``n = l``) or bodies with positions (``n = nb (3 + l)``)."""
    l = form[0]
    if n == l:
        return 1, l, 0
    return n // (3 + l), 3 + l, 3


@in_place
def bodies_uac(form, P, q_n, dq, q):
    """Update absolute coordinates (Algorithm 1): ``x = x_n + Δx`` (eq. 29) and the formulation's
    update of each body's rotation parameters (eq. 30 for RV, eq. 31 otherwise)."""
    nb, m, off = layout(form, q.size)
    for i in range(nb):
        o = i * m
        for k in range(off):
            q[o + k] = q_n[o + k] + dq[o + k]
        form[3](q_n, dq, q, o + off)


@in_place
def bodies_tangent(form, P, dq, T):
    """``T_exp(Δq) = blockdiag(I, T_SO(3)(Δψᵢ), …)`` (RV) or ``I`` (classical); only the
    diagonal blocks are written."""
    nb, m, off = layout(form, dq.size)
    for i in range(nb):
        o = i * m
        T[o:o + m, o:o + m] = 0.0
        for k in range(off):
            T[o + k, o + k] = 1.0
        form[4](dq, T, o + off)


@in_place
def bodies_tangent_inv(form, P, dq, v, out):
    """``T_exp⁻¹(Δq) v`` (eq. 25) body by body: positions unchanged, rotations by the formulation."""
    nb, m, off = layout(form, dq.size)
    for i in range(nb):
        o = i * m
        for k in range(off):
            out[o + k] = v[o + k]
        form[6](dq, v, out, o + off)


@in_place
def vector_uac(form, P, q_n, dq, q):
    """A vector space (minimal coordinates): ``q = q_n + Δq``."""
    for i in range(q.size):
        q[i] = q_n[i] + dq[i]


@in_place
def vector_tangent(form, P, dq, T):
    """A vector space: ``T_exp = I``."""
    T[:, :] = 0.0
    for i in range(dq.size):
        T[i, i] = 1.0


@in_place
def vector_tangent_inv(form, P, dq, v, out):
    """A vector space: ``T_exp⁻¹ v = v``."""
    for i in range(v.size):
        out[i] = v[i]


# One call per column, not per row: numba would compile a row function once for every literal
# row index 0, 1, 2 (and caller signature).
@in_place
def _dy_drho(work, D, J, Tr, W, dk, k):
    """Column k of ``∂y/∂ρ = Tr + D W − J ∂κ/∂ρ``, its three rows as a tuple."""
    return (work[Tr, 0, k] + D[0][0] * work[W, 0, k] + D[0][1] * work[W, 1, k] + D[0][2] * work[W, 2, k]
            - (work[J, 0, 0] * work[dk, 0, k] + work[J, 0, 1] * work[dk, 1, k] + work[J, 0, 2] * work[dk, 2, k]),
            work[Tr, 1, k] + D[1][0] * work[W, 0, k] + D[1][1] * work[W, 1, k] + D[1][2] * work[W, 2, k]
            - (work[J, 1, 0] * work[dk, 0, k] + work[J, 1, 1] * work[dk, 1, k] + work[J, 1, 2] * work[dk, 2, k]),
            work[Tr, 2, k] + D[2][0] * work[W, 0, k] + D[2][1] * work[W, 1, k] + D[2][2] * work[W, 2, k]
            - (work[J, 2, 0] * work[dk, 0, k] + work[J, 2, 1] * work[dk, 1, k] + work[J, 2, 2] * work[dk, 2, k]))


@in_place
def _dy_dnu(work, D, J, G, dkn, k):
    """Column k of ``∂y/∂ν = D Ĝ − J ∂κ/∂ν``, its three rows as a tuple."""
    return (D[0][0] * work[G, 0, k] + D[0][1] * work[G, 1, k] + D[0][2] * work[G, 2, k]
            - (work[J, 0, 0] * work[dkn, 0, k] + work[J, 0, 1] * work[dkn, 1, k] + work[J, 0, 2] * work[dkn, 2, k]),
            D[1][0] * work[G, 0, k] + D[1][1] * work[G, 1, k] + D[1][2] * work[G, 2, k]
            - (work[J, 1, 0] * work[dkn, 0, k] + work[J, 1, 1] * work[dkn, 1, k] + work[J, 1, 2] * work[dkn, 2, k]),
            D[2][0] * work[G, 0, k] + D[2][1] * work[G, 1, k] + D[2][2] * work[G, 2, k]
            - (work[J, 2, 0] * work[dkn, 0, k] + work[J, 2, 1] * work[dkn, 1, k] + work[J, 2, 2] * work[dkn, 2, k]))


@in_place
def rotation_block(form, work, b, J, Tr, Tw, W, v, o, jac, M, g, K, C):
    """Rows and columns ``o:o+l`` of the rotational equations of the body with pages ``b``
    (eqs. 11, 14, 23), after the formulation's ``kin``.

    Mass block ``Ĝᵀ J Ĝ`` and ``g = Ĝᵀ y`` with ``y = τ − ω × Jω − J κ``; the body torque ``τ``
    (body frame) is in ``g[o:o+3]`` on entry (overwritten), its derivatives along ρ at fixed ω in
    page ``Tr`` (3×l) and along ω in page ``Tw``; ``J`` is the page of the inertia. With ``jac``:
    ``∂y/∂ρ = Tr + (Tw − A) W − J ∂κ/∂ρ``, ``∂y/∂ν = (Tw − A) Ĝ − J ∂κ/∂ν`` with
    ``A = ∂(ω × Jω)/∂ω = ω̃J − (Jω)~`` and ``W = ∂ω/∂ρ`` (column k: ``∂Ĝ/∂ρ_k ν``, written to
    page ``W``), and ``K = −∂(Ĝᵀy)/∂ρ``, ``C = −∂(Ĝᵀy)/∂ν`` on the block.
    """
    l = form[0]
    G, rates = b + G_, b + RATES_
    w0, w1, w2 = work[rates, 0, 0], work[rates, 0, 1], work[rates, 0, 2]
    k0, k1, k2 = work[rates, 1, 0], work[rates, 1, 1], work[rates, 1, 2]
    L0 = work[J, 0, 0] * w0 + work[J, 0, 1] * w1 + work[J, 0, 2] * w2
    L1 = work[J, 1, 0] * w0 + work[J, 1, 1] * w1 + work[J, 1, 2] * w2
    L2 = work[J, 2, 0] * w0 + work[J, 2, 1] * w1 + work[J, 2, 2] * w2
    y = (
        g[o] - (w1 * L2 - w2 * L1) - (work[J, 0, 0] * k0 + work[J, 0, 1] * k1 + work[J, 0, 2] * k2),
        g[o + 1] - (w2 * L0 - w0 * L2) - (work[J, 1, 0] * k0 + work[J, 1, 1] * k1 + work[J, 1, 2] * k2),
        g[o + 2] - (w0 * L1 - w1 * L0) - (work[J, 2, 0] * k0 + work[J, 2, 1] * k1 + work[J, 2, 2] * k2),
    )
    for a in range(l):
        g[o + a] = work[G, 0, a] * y[0] + work[G, 1, a] * y[1] + work[G, 2, a] * y[2]
        for c in range(l):
            acc = 0.0
            for m in range(3):
                acc += work[G, m, a] * (work[J, m, 0] * work[G, 0, c] + work[J, m, 1] * work[G, 1, c]
                                        + work[J, m, 2] * work[G, 2, c])
            M[o + a, o + c] = acc
    if not jac:
        return
    # D = Tw − A with A = ω̃ J − (Jω)~
    D = ((work[Tw, 0, 0] - (w1 * work[J, 2, 0] - w2 * work[J, 1, 0]),
          work[Tw, 0, 1] - (w1 * work[J, 2, 1] - w2 * work[J, 1, 1]) - L2,
          work[Tw, 0, 2] - (w1 * work[J, 2, 2] - w2 * work[J, 1, 2]) + L1),
         (work[Tw, 1, 0] - (w2 * work[J, 0, 0] - w0 * work[J, 2, 0]) + L2,
          work[Tw, 1, 1] - (w2 * work[J, 0, 1] - w0 * work[J, 2, 1]),
          work[Tw, 1, 2] - (w2 * work[J, 0, 2] - w0 * work[J, 2, 2]) - L0),
         (work[Tw, 2, 0] - (w0 * work[J, 1, 0] - w1 * work[J, 0, 0]) - L1,
          work[Tw, 2, 1] - (w0 * work[J, 1, 1] - w1 * work[J, 0, 1]) + L0,
          work[Tw, 2, 2] - (w0 * work[J, 1, 2] - w1 * work[J, 0, 2])))
    dk, dkn = b + DKAPPA_, b + DKAPPA_ + 1
    for k in range(l):
        dG = b + DG_ + k
        for i in range(3):
            acc = 0.0
            for j in range(l):
                acc += work[dG, i, j] * v[o + j]
            work[W, i, k] = acc
        dyr = _dy_drho(work, D, J, Tr, W, dk, k)
        dyn = _dy_dnu(work, D, J, G, dkn, k)
        for a in range(l):
            K[o + a, o + k] = -(work[dG, 0, a] * y[0] + work[dG, 1, a] * y[1] + work[dG, 2, a] * y[2]
                                + work[G, 0, a] * dyr[0] + work[G, 1, a] * dyr[1] + work[G, 2, a] * dyr[2])
            C[o + a, o + k] = -(work[G, 0, a] * dyn[0] + work[G, 1, a] * dyn[1] + work[G, 2, a] * dyn[2])


@in_place
def normalizations(form, q, first, phi, B):
    """The formulation's constraints per body (EP: ``pᵢᵀpᵢ − 1``) from row ``first`` on."""
    if form[1] == 0:
        return
    nb, m, off = layout(form, q.size)
    for i in range(nb):
        phi[first + i] = form[5](q, i * m + off, B, first + i)
