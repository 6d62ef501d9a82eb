"""The sparse matrices of the quaternion formulation and the sparse Newton solve of EML, MPL and REML."""

from dataclasses import replace

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from mbslib.formulations.quaternions import QuaternionSystem
from mbslib.integrators import livens
from mbslib.model import AppliedLoad, Constant, Spring
from mbslib.newton import Triplets
from mbslib.quaternions import minus, plus, quat_dg_kinetic, rotate_jacobian
from mbslib.systems.chain import chain
from mbslib.systems.four_bar_loop import FourBarLoop
from mbslib.systems.rigid_bodies import heavy_top

RNG = np.random.default_rng(20261123)
SYSTEMS = {"chain of 3": lambda: QuaternionSystem(chain(3)), "heavy top": lambda: QuaternionSystem(heavy_top())}
SCHEMES = {"EML": (livens.step_eml, livens.residual_eml, livens.jacobian_eml),
           "MPL": (livens.step_mpl, livens.residual_mpl, livens.jacobian_mpl),
           "REML": (livens.step_reml, livens.residual_reml, livens.jacobian_reml)}


def same(sparse_matrix, dense, kind=Triplets):
    """A sparse result (a system's entries, or the Newton matrix as a scipy.sparse array) equal to
    the dense one up to the order of summing duplicate blocks."""
    assert sp.issparse(sparse_matrix) if kind == "scipy" else isinstance(sparse_matrix, kind)
    np.testing.assert_allclose(sparse_matrix.toarray(), dense, rtol=0, atol=1e-14 * max(1.0, np.abs(dense).max()))


def perturbed_state(system):
    """A state near the initial one with every coordinate, velocity and multiplier nonzero."""
    x = system.initial_state()
    return x + 0.1 * RNG.standard_normal(x.size)


@pytest.mark.parametrize("make", SYSTEMS.values(), ids=SYSTEMS.keys())
def test_sparse_matrices_equal_the_dense_ones(make):
    system = make()
    q0, _, v0, lam = livens.split_state(system, perturbed_state(system))
    q1, _, v1, _ = livens.split_state(system, perturbed_state(system))
    same(system.mass_matrix(q1, sparse=True), system.mass_matrix(q1))
    same(system.constraint_jacobian(q1, sparse=True), system.constraint_jacobian(q1))
    same(system.constraint_hessian(q1, lam, sparse=True), system.constraint_hessian(q1, lam))
    same(system.hess_potential(q1, sparse=True), system.hess_potential(q1))
    Vb, Vb_q = system.dg_potential(q0, q1, sparse=True)
    np.testing.assert_array_equal(Vb, system.dg_potential(q0, q1)[0])
    same(Vb_q, system.dg_potential(q0, q1)[1])
    for sparse_parts, dense_parts in ((system.grad_kinetic(q1, v1, sparse=True), system.grad_kinetic(q1, v1)),
                                      (system.dg_kinetic(q0, q1, v0, v1, sparse=True),
                                       system.dg_kinetic(q0, q1, v0, v1))):
        np.testing.assert_array_equal(sparse_parts.Tq, dense_parts.Tq)
        np.testing.assert_array_equal(sparse_parts.Tv, dense_parts.Tv)
        for a, b in zip(sparse_parts[2:], dense_parts[2:], strict=True):
            same(a, b)


@pytest.mark.parametrize("scheme", SCHEMES, ids=SCHEMES.keys())
def test_sparse_residual_and_newton_matrix_equal_the_dense_ones(scheme):
    _, residual, jacobian = SCHEMES[scheme]
    system = QuaternionSystem(chain(4))
    x_n, x_n1 = perturbed_state(system), perturbed_state(system)
    z = np.concatenate([x_n1[: system.n], x_n1[3 * system.n :]]) if scheme == "REML" else x_n1
    r_dense, r_sparse = residual(system, x_n, z, 1e-3, sparse=False), residual(system, x_n, z, 1e-3, sparse=True)
    np.testing.assert_allclose(r_sparse, r_dense, rtol=0, atol=1e-14 * np.abs(r_dense).max())
    same(jacobian(system, x_n, z, 1e-3, sparse=True), jacobian(system, x_n, z, 1e-3, sparse=False), "scipy")


@pytest.mark.parametrize("n_bodies", [4, 8])
@pytest.mark.parametrize("scheme", SCHEMES, ids=SCHEMES.keys())
def test_sparse_newton_path_follows_the_dense_one_on_a_chain(scheme, n_bodies):
    step = SCHEMES[scheme][0]
    system = QuaternionSystem(chain(n_bodies))
    x_dense = x_sparse = system.initial_state()
    for k in range(5):
        x_dense, rep_dense = step(system, x_dense, 1e-3, k * 1e-3, sparse=False)
        x_sparse, rep_sparse = step(system, x_sparse, 1e-3, k * 1e-3, sparse=True)
        assert rep_sparse.n_iter == rep_dense.n_iter
        assert rep_sparse.n_residual == rep_dense.n_residual
        n3 = 3 * system.n  # q, p, v; then λ
        np.testing.assert_allclose(x_sparse[:n3], x_dense[:n3], rtol=0, atol=1e-12 * np.abs(x_dense[:n3]).max())
        np.testing.assert_allclose(x_sparse[n3:], x_dense[n3:], rtol=0,
                                   atol=LAMBDA_RTOL[scheme] * np.abs(x_dense[n3:]).max())


# λ enters the residuals multiplied by h. REML's residual (103) stops at a round-off floor of about
# 1e-13 (v^{n+1} = 2(q1 − q0)/h amplifies the round-off of q1), so its λ is fixed only to about
# 1e-10 relative, by either path; it does not feed back into q, p, v (REML takes λⁿ only as a guess).
LAMBDA_RTOL = {"EML": 1e-12, "MPL": 1e-12, "REML": 1e-9}


def test_size_decides_the_path():
    # the largest Livens system of chapter 000 keeps its dense path; EML on a chain of 8 is sparse
    four_bar = FourBarLoop()
    assert not livens.uses_sparse(3 * four_bar.n + four_bar.m)
    assert isinstance(livens.jacobian_eml(four_bar, four_bar.initial_state(), four_bar.initial_state(), 1e-3),
                      np.ndarray)
    system = QuaternionSystem(chain(8))
    x = system.initial_state()
    assert livens.uses_sparse(3 * system.n + system.m)
    assert sp.issparse(livens.jacobian_eml(system, x, x, 1e-3))
    assert livens.uses_sparse(10, sparse=True) and not livens.uses_sparse(10**6, sparse=False)


def test_stored_nonzeros_grow_linearly_with_the_chain():
    sizes = (4, 8, 16, 32)
    nnz, lu_nnz = [], []
    for n_bodies in sizes:
        system = QuaternionSystem(chain(n_bodies))
        x = perturbed_state(system)
        K = livens.jacobian_eml(system, x, x, 1e-3, sparse=True)
        nnz.append(K.nnz)
        lu = spla.splu(sp.csc_array(K))
        lu_nnz.append(lu.L.nnz + lu.U.nnz)
        # per body: M̃₄ and the kinetic blocks 4 × 4, the Hessian 4 × 4; per joint row 3 + 4 per end
        assert system.constraint_jacobian(x[: system.n], sparse=True).nnz == 4 * n_bodies + 3 * 7 * (2 * n_bodies - 1)
        assert system.constraint_hessian(x[: system.n], x[3 * system.n :], sparse=True).nnz == 16 * (3 * n_bodies - 1)
    per_body = np.diff(nnz) / np.diff(sizes)
    np.testing.assert_array_equal(per_body, per_body[0])  # nnz = a N + b exactly
    lu_per_body = np.array(lu_nnz) / np.array(sizes)
    assert lu_per_body.max() < 1.5 * lu_per_body.min()  # the fill of the sparse LU stays linear


def test_the_dense_matrices_are_the_per_body_blocks_summed_in_order():
    """The assembly of all bodies and joints at once gives the blocks of one body or joint end
    computed alone and added in the order body, joint a, joint b: the Hessian exactly, to the last
    bit; the kinetic and constraint blocks, which compiled kernels compute, to round-off (a few
    units in the last place of the largest entry)."""
    system = QuaternionSystem(chain(3))
    q0, _, v0, lam = livens.split_state(system, perturbed_state(system))
    q1, _, v1, _ = livens.split_state(system, perturbed_state(system))
    k = system.dg_kinetic(q0, q1, v0, v1)
    H, Dg = system.constraint_hessian(q1, lam), system.constraint_jacobian(q1)
    for a in range(system.N):
        t, r = system._t(a), system._r(a)
        one = quat_dg_kinetic(system.J[a], q0[r], q1[r], v0[r], v1[r])
        for whole, block in zip(k[2:], one[2:], strict=True):
            np.testing.assert_allclose(whole[r, r], block, rtol=0, atol=4e-16 * np.abs(block).max())
        np.testing.assert_array_equal(k.Tv[t], 0.5 * system.masses[a] * (v0[t] + v1[t]))
        np.testing.assert_array_equal(Dg[a, r], q1[r])
        # body a hangs at joint a (end b) and holds joint a + 1 (end a)
        hessian = lam[a] * np.eye(4) - 2.0 * minus(system.joints[a][1][1]).T @ plus(lam[system.N + 3 * a:][:3])
        if a + 1 < system.N:
            hessian = hessian + 2.0 * minus(system.joints[a + 1][0][1]).T @ plus(lam[system.N + 3 * (a + 1):][:3])
        np.testing.assert_array_equal(H[r, r], hessian)
        block = -rotate_jacobian(q1[r], system.joints[a][1][1])
        np.testing.assert_allclose(Dg[system.N + 3 * a:system.N + 3 * a + 3, r], block, rtol=0,
                                   atol=4e-16 * np.abs(block).max())


def forced_chain(n_bodies):
    """The chain with a damped spring from the ground to its last rod and a torque on its first:
    forces that depend on the velocities (the eliminated rows carry ``∂f/∂v``)."""
    spring = Spring(None, n_bodies - 1, [n_bodies + 0.5, 0.0, 1.0], [0.5, 0.0, 0.0], stiffness=40.0,
                    rest_length=0.8, damping=3.0)
    return replace(chain(n_bodies), springs=(spring,), loads=(AppliedLoad(0, torque=Constant([0.2, -0.1, 0.3])),))


@pytest.mark.parametrize("forces", [False, True], ids=["gravity", "spring-damper and torque"])
@pytest.mark.parametrize("scheme", ["EML", "MPL"])
def test_eliminating_v_and_p_gives_the_newton_update_of_the_whole_matrix(scheme, forces):
    system = QuaternionSystem(forced_chain(6) if forces else chain(6))
    x_n, x_n1 = perturbed_state(system), perturbed_state(system)
    R, newton_matrix = livens._livens_equations(system, x_n, x_n1, 1e-3, 0.0, scheme == "EML", True, eliminate=True)
    K = SCHEMES[scheme][2](system, x_n, x_n1, 1e-3, sparse=True)
    whole = spla.splu(sp.csc_array(K)).solve(R)
    np.testing.assert_allclose(newton_matrix().solve(R), whole, rtol=0, atol=1e-12 * np.abs(whole).max())
