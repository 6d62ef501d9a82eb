"""The sparse constraint Hessians of the director systems and the sparse Newton solve of the GGL-VI."""

from dataclasses import dataclass, replace
from functools import partial

import numpy as np
import pytest
import scipy.sparse as sp

from mbslib.formulations import directors
from mbslib.integrators import ggl
from mbslib.newton import NewtonError, Triplets, fd_jacobian, newton_solve
from mbslib.simulate import simulate
from mbslib.systems import directors as dr
from mbslib.systems import ggl_examples as ex
from mbslib.systems.chain import chain

RNG = np.random.default_rng(20261123)


def chain_system(n):
    return directors.director_system(chain(n))


@dataclass(frozen=True)
class DenseQuadratic:
    """The constraints as the book stored them before: one dense d × d Hessian per row."""

    H: np.ndarray  # (m, d, d)
    A: np.ndarray
    c: np.ndarray

    @property
    def m(self):
        return self.A.shape[0]

    def g(self, q):
        return 0.5 * np.einsum("kde,d,e->k", self.H, q, q) + self.A @ q - self.c

    def G(self, q, *, sparse=False):
        return np.einsum("kde,e->kd", self.H, q) + self.A

    def hessian_sum(self, w, *, sparse=False):
        return np.einsum("k,kde->de", w, self.H)

    def hessian_rows(self, w, *, sparse=False):
        return self.H @ w


def dense_twin(system):
    con = system.constraints
    return replace(system, constraints=DenseQuadratic(con.H.todense(), con.A, con.c))


@pytest.mark.parametrize("system", [ex.heavy_top(), ex.double_four_bar(), chain_system(3)], ids=["top", "bar", "chain"])
def test_sparse_contractions_match_the_dense_formulas_and_differences(system):
    con, dense = system.constraints, dense_twin(system).constraints
    q, w, gam = RNG.normal(size=system.d), RNG.normal(size=system.d), RNG.normal(size=system.m)
    for sparse in (False, True):
        G, Gamma, T = con.G(q, sparse=sparse), con.hessian_sum(gam, sparse=sparse), con.hessian_rows(w, sparse=sparse)
        assert all(isinstance(a, Triplets) == sparse for a in (G, Gamma, T))
        as_dense = (lambda a: a.toarray()) if sparse else np.asarray
        np.testing.assert_allclose(as_dense(G), dense.G(q), rtol=0, atol=1e-15)
        np.testing.assert_allclose(as_dense(Gamma), dense.hessian_sum(gam), rtol=0, atol=1e-15)
        np.testing.assert_allclose(as_dense(T), dense.hessian_rows(w), rtol=0, atol=1e-15)
    np.testing.assert_allclose(con.g(q), dense.g(q), rtol=1e-14, atol=1e-14)
    # against finite differences: G = Dg, and D(G(q)ᵀγ) = Σ γ_k H_k
    assert np.abs(con.G(q) - fd_jacobian(con.g, q)).max() <= 1e-9
    assert np.abs(con.hessian_sum(gam) - fd_jacobian(lambda x: con.G(x).T @ gam, q)).max() <= 1e-9
    with pytest.raises(ValueError, match="q"):
        con.G(RNG.normal(size=(2, system.d)), sparse=True)


def test_stored_hessians_grow_linearly_with_the_chain():
    """Per rod: three normalisation rows with 3 unit entries, three orthogonality rows with 6."""
    sizes = np.array([1, 2, 4, 8, 16])
    H = [chain_system(n).constraints.H for n in sizes]
    assert [h.nnz for h in H] == list(27 * sizes)
    stored = np.array([h.data.nbytes + sum(c.nbytes for c in h.coords) for h in H])
    np.testing.assert_array_equal(stored, 27 * 32 * sizes)  # a float and three int64 indices per nonzero
    system = chain_system(16)
    assert system.K.nnz == system.C.nnz == 0  # gravity only, undamped: no entries either
    assert system.constraints.H.shape == (9 * 16, 12 * 16, 12 * 16)  # dense: 10368 N³ bytes


def test_hessians_must_be_symmetric():
    H = np.zeros((1, 3, 3))
    H[0, 0, 1] = 1.0
    with pytest.raises(ValueError, match="symmetric"):
        dr.QuadraticConstraints(H=H, A=np.zeros((1, 3)), c=np.zeros(1))


def test_chain_steps_agree_with_the_dense_formulation():
    """N = 2: the sparse assembly and LU against the dense Hessians of the book's first version,
    assembled and factored densely, step by step with the same Newton iterations."""
    model = chain(2)
    system = chain_system(2)
    x0 = ggl.initial_vector(system, *directors.initial_coordinates(model))
    h, t_end = 1e-3, 0.05
    sparse = simulate(partial(ggl.step_ggl, system, sparse=True), x0, h, t_end)
    dense = simulate(partial(ggl.step_ggl, dense_twin(system), sparse=False), x0, h, t_end)
    np.testing.assert_array_equal(sparse.n_iter, dense.n_iter)
    scale = np.abs(dense.x).max(axis=0)
    assert np.max(np.abs(sparse.x - dense.x) / np.maximum(scale, 1.0)) <= 1e-12
    assert sparse.work.factorisations == dense.work.factorisations > 0


def test_sparse_newton_matrix_is_the_dense_one_and_the_default_follows_size():
    system = chain_system(2)
    x_n = ggl.initial_vector(system, *directors.initial_coordinates(chain(2)))
    x = ggl.initial_guess(system, x_n, 1e-3) + 1e-3 * RNG.normal(size=x_n.size)
    for variant in ggl.VARIANTS:
        J = ggl.jacobian_ggl(system, x_n, x, 1e-3, variant, sparse=True)
        assert sp.issparse(J)
        np.testing.assert_allclose(J.toarray(), ggl.jacobian_ggl(system, x_n, x, 1e-3, variant, sparse=False),
                                   rtol=0, atol=1e-15)
        np.testing.assert_allclose(ggl.residual_ggl(system, x_n, x, 1e-3, variant, sparse=True),
                                   ggl.residual_ggl(system, x_n, x, 1e-3, variant, sparse=False), rtol=0, atol=1e-15)
    assert not ggl.uses_sparse(ex.heavy_top()) and not ggl.uses_sparse(ex.double_four_bar())
    assert ggl.uses_sparse(chain_system(4)) and not ggl.uses_sparse(chain_system(4), sparse=False)


def test_damped_system_sparse_and_dense_agree():
    bar = ex.double_four_bar(ex.FourBarParams(eta=0.5))
    x_n = ggl.initial_vector(bar, *ex.four_bar_initial_state())
    x = ggl.initial_guess(bar, x_n, 1e-3) + 1e-3 * RNG.normal(size=x_n.size)
    assert bar.C.nnz > 0
    np.testing.assert_allclose(ggl.jacobian_ggl(bar, x_n, x, 1e-3, sparse=True).toarray(),
                               ggl.jacobian_ggl(bar, x_n, x, 1e-3, sparse=False), rtol=0, atol=1e-15)


def test_sparse_newton_solve_and_its_singular_failure():
    A = sp.csc_array(np.array([[4.0, 1.0], [1.0, 3.0]]))
    b = np.array([1.0, 2.0])
    x, report = newton_solve(lambda x: A @ x - b, np.zeros(2), lambda x: A)
    np.testing.assert_allclose(A @ x, b, atol=1e-14)
    assert report.n_factorisations == report.n_iter == 1
    singular = sp.csc_array(np.array([[1.0, 1.0], [1.0, 1.0]]))
    with pytest.raises(NewtonError, match="singular"):
        newton_solve(lambda x: singular @ x - b, np.zeros(2), lambda x: singular)
    x, _ = newton_solve(lambda x: singular @ x - np.ones(2), np.zeros(2), lambda x: singular, linear_solver="lstsq")
    np.testing.assert_allclose(x, [0.5, 0.5], atol=1e-14)  # the minimum-norm solution


def test_band_order_is_a_permutation_and_narrows_the_chain_band():
    """Body by body, the chain's Newton matrix lies within 40 + 41 diagonals, whatever N (reverse
    Cuthill–McKee: 50 + 49 at N = 8), the multipliers' matrix of :class:`~mbslib.integrators.ggl.WithoutQPV`
    within 23 + 23; a system without bodies is left to reverse Cuthill–McKee."""
    for n in (4, 8):
        system = chain_system(n)
        order = ggl.band_order(system)
        size = 3 * system.d + 2 * system.m
        np.testing.assert_array_equal(np.sort(order), np.arange(size))
        assert ggl.band_order(system) is order  # computed once per system
        x_n = ggl.initial_vector(system, *directors.initial_coordinates(chain(n)))
        x = ggl.initial_guess(system, x_n, 1e-3) + 1e-3 * RNG.normal(size=size)
        J = sp.coo_array(ggl.jacobian_ggl(system, x_n, x, 1e-3, sparse=True))
        position = np.empty(size, dtype=int)
        position[order] = np.arange(size)
        offset = position[J.row] - position[J.col]
        assert (offset.max(), -offset.min()) == (40, 41)
        blocks = ggl.WithoutQPV(system, x_n, x, 1e-3).blocks
        assert np.diff(blocks.start).max() == 24 and blocks.n_elim.max() == 18
    assert ggl.band_order(replace(system, offsets=None)) is None


def test_chain_steps_in_band_order_agree_with_the_dense_formulation():
    """N = 4 (216 unknowns, sparse by default): q, p, v eliminated and the multipliers' banded LU
    in band order (:class:`~mbslib.integrators.ggl.WithoutQPV`) against the dense Hessians,
    assembled and factored densely, step by step with the same Newton iterations: the
    coordinates, momenta and velocities to 2e-14, the multipliers to 1.3e-12, as close as the
    sparse LU in reverse Cuthill–McKee order comes (the system without bodies)."""
    model = chain(4)
    system = chain_system(4)
    x0 = ggl.initial_vector(system, *directors.initial_coordinates(model))
    h, t_end = 1e-3, 0.03
    dense = simulate(partial(ggl.step_ggl, dense_twin(system), sparse=False), x0, h, t_end)
    scale = np.maximum(np.abs(dense.x).max(axis=0), 1.0)
    states = slice(0, 3 * system.d)
    for run in (simulate(partial(ggl.step_ggl, s), x0, h, t_end) for s in (system, replace(system, offsets=None))):
        np.testing.assert_array_equal(run.n_iter, dense.n_iter)
        error = np.abs(run.x - dense.x) / scale
        assert np.max(error[:, states]) <= 2e-14 and np.max(error) <= 1.5e-12


def test_update_without_q_p_v_is_the_whole_newton_matrix_update():
    """The elimination of q, p, v leaves the Newton update of the whole matrix (41a–e), to 1e-12 of
    its largest entry, at an iterate with multipliers of order one (Γ far from zero)."""
    for n in (1, 4):
        system = chain_system(n)
        x_n = ggl.initial_vector(system, *directors.initial_coordinates(chain(n)))
        x = ggl.initial_guess(system, x_n, 1e-3) + 1e-3 * RNG.normal(size=x_n.size)
        x[3 * system.d :] = RNG.normal(size=2 * system.m)
        r = RNG.normal(size=x.size)
        update = ggl.WithoutQPV(system, x_n, x, 1e-3).solve(r)
        whole = np.linalg.solve(ggl.jacobian_ggl(system, x_n, x, 1e-3, sparse=False), r)
        assert np.abs(update - whole).max() <= 1e-12 * np.abs(whole).max()


@pytest.mark.parametrize("variant", ["printed", "no_hessian"])
def test_sparse_steps_of_the_negative_controls_keep_the_whole_matrix(variant):
    """The negative controls (and damped systems) factorise the whole Newton matrix in band order
    (:class:`~mbslib.newton.BandedBlocks`): a step of N = 4 as the dense one."""
    system = chain_system(4)
    x0 = ggl.initial_vector(system, *directors.initial_coordinates(chain(4)))
    sparse, report = ggl.step_ggl(system, x0, 1e-3, variant=variant)
    dense, dense_report = ggl.step_ggl(system, x0, 1e-3, variant=variant, sparse=False)
    assert report.n_iter == dense_report.n_iter
    assert np.abs(sparse - dense).max() <= 1e-12 * np.abs(dense).max()


def test_elimination_needs_bodies_of_one_size():
    system = chain_system(4)
    x0 = ggl.initial_vector(system, *directors.initial_coordinates(chain(4)))
    with pytest.raises(ValueError, match="equally many coordinates"):
        ggl.step_ggl(replace(system, offsets=(0, 6, 24, 36)), x0, 1e-3)


def test_body_rows_reassemble_the_constraint_matrices():
    """The compiled per-body blocks of :class:`~mbslib.integrators.ggl.WithoutQPV` are the rows of
    G(q) (also against finite differences of g), of (H_k w)ᵀ and the diagonal blocks of Σ γ_k H_k,
    each entry once (no entry lost to a padded slot), to round-off."""
    system = chain_system(5)
    con = system.constraints
    blocks = ggl.WithoutQPV(system, *(2 * [ggl.initial_vector(system, *directors.initial_coordinates(chain(5)))]),
                            1e-3).blocks
    q, w, gam = RNG.normal(size=system.d), RNG.normal(size=system.d), RNG.normal(size=system.m)
    n, r, size = blocks.n, blocks.cons.shape[1], blocks.size

    def whole(rows):  # the (m, d) matrix of the per-body rows, each constraint from one body's slot
        out = np.zeros((system.m, system.d))
        for b in range(n):
            for s in range(blocks.count[b]):
                out[blocks.cons[b, s], b * size : (b + 1) * size] = rows[b, s]
        return out

    np.testing.assert_allclose(whole(blocks.rows(q)), con.G(q), rtol=0, atol=1e-15)
    assert np.abs(whole(blocks.rows(q)) - fd_jacobian(con.g, q)).max() <= 1e-9  # G = Dg
    np.testing.assert_allclose(whole(blocks.rows(w, linear=False)), con.hessian_rows(w), rtol=0, atol=1e-15)
    Gamma = ggl._hessian_blocks(gam, blocks.h_body, blocks.h_row, blocks.h_col, blocks.h_con, blocks.h_value, n, size)
    np.testing.assert_allclose(sp.block_diag(list(Gamma)).toarray(), con.hessian_sum(gam), rtol=0, atol=1e-15)
    assert r == 12 and list(blocks.count) == [12, 12, 12, 12, 9]  # joints to both neighbours and its own six


def test_eliminated_steps_agree_with_the_whole_newton_matrix_over_hundreds_of_steps():
    """N = 8, 300 steps: the compiled elimination (fronts of the multipliers) against the sparse LU
    of the whole Newton matrix (the system without bodies), the same Newton iterations in every
    step and the states to round-off."""
    model, system = chain(8), chain_system(8)
    x0 = ggl.initial_vector(system, *directors.initial_coordinates(model))
    h, t_end = 1e-3, 0.3
    ours = simulate(partial(ggl.step_ggl, system), x0, h, t_end)
    whole = simulate(partial(ggl.step_ggl, replace(system, offsets=None)), x0, h, t_end)
    np.testing.assert_array_equal(ours.n_iter, whole.n_iter)
    scale = np.maximum(np.abs(whole.x).max(axis=0), 1.0)
    error = np.abs(ours.x - whole.x) / scale
    assert np.max(error[:, : 3 * system.d]) <= 1e-13 and np.max(error) <= 1e-11
