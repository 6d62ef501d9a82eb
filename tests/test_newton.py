import numpy as np
import pytest
import scipy.sparse as sp

from mbslib import newton
from mbslib.newton import NewtonError, Triplets, block_matrix, fd_jacobian, newton_solve


def residual(x):
    return np.array([x[0] ** 2 + x[1] ** 2 - 4.0, np.exp(x[0]) + x[1] - 1.0])


def jacobian(x):
    return np.array([[2 * x[0], 2 * x[1]], [np.exp(x[0]), 1.0]])


def test_converges_quadratically_with_analytic_jacobian():
    x, report = newton_solve(residual, np.array([1.0, -1.0]), jacobian, tol=1e-14)
    assert report.converged and np.max(np.abs(residual(x))) <= 1e-14
    r = np.array(report.residual_history)
    assert len(r) == report.n_iter + 1
    # quadratic convergence: r_{k+1} ≈ C r_k² once close
    ratios = r[2:-1] / r[1:-2] ** 2
    assert np.all(ratios < 10.0)


def test_fd_jacobian_is_accurate_and_keeps_quadratic_convergence():
    x = np.array([0.7, -1.3])
    np.testing.assert_allclose(fd_jacobian(residual, x), jacobian(x), rtol=1e-9, atol=1e-9)
    _, with_fd = newton_solve(residual, np.array([1.0, -1.0]), tol=1e-12)
    _, exact = newton_solve(residual, np.array([1.0, -1.0]), jacobian, tol=1e-12)
    assert with_fd.n_iter == exact.n_iter


def test_zero_iterations_when_initial_guess_solves():
    x0 = np.array([2.0, 0.0])
    x, report = newton_solve(lambda x: x - x0, x0, lambda x: np.eye(2))
    assert report.n_iter == 0 and np.array_equal(x, x0)


def test_non_convergence_raises_with_context():
    with pytest.raises(NewtonError) as info:
        newton_solve(lambda x: np.array([x[0] ** 2 + 1.0]), np.array([0.5]), lambda x: np.array([[2 * x[0]]]),
                     max_iter=5, t=0.25)
    err = info.value
    assert err.t == 0.25 and len(err.residual_history) == 6
    assert "t = 0.25" in str(err) and "did not converge" in str(err)
    assert "step 7" in str(err.at_step(7))


def test_singular_jacobian_and_nan_raise():
    with pytest.raises(NewtonError, match="singular"):
        newton_solve(lambda x: np.array([x[0] ** 2 - 1.0]), np.array([0.0]), lambda x: np.array([[2 * x[0]]]))
    with pytest.raises(NewtonError, match="not finite"):
        newton_solve(lambda x: np.array([np.nan]), np.array([0.0]), lambda x: np.eye(1))


def test_bad_parameters():
    with pytest.raises(ValueError, match="tol"):
        newton_solve(residual, np.zeros(2), jacobian, tol=-1.0)
    with pytest.raises(ValueError, match="max_iter"):
        newton_solve(residual, np.zeros(2), jacobian, max_iter=0)


def test_extra_update_applies_one_more_newton_update_after_convergence():
    x0 = np.array([1.0, -1.0])
    x_plain, plain = newton_solve(residual, x0, jacobian)
    x, report = newton_solve(residual, x0, jacobian, extra_update=True)
    assert report.converged and report.n_iter == plain.n_iter + 1
    assert len(report.residual_history) == report.n_iter + 1
    assert report.residual_history[:-1] == plain.residual_history
    # the same arithmetic as one explicit update from the converged iterate
    np.testing.assert_array_equal(x, x_plain - np.linalg.solve(jacobian(x_plain), residual(x_plain)))
    assert report.residual_history[-1] == np.max(np.abs(residual(x)))
    # the tolerance-level residual is driven down to round-off
    assert plain.residual_history[-1] <= 1e-9
    assert report.residual_history[-1] < 1e-3 * plain.residual_history[-1]
    assert report.residual_history[-1] < 1e-14


def test_extra_update_also_happens_when_the_initial_guess_solves():
    x0 = np.array([2.0, 0.0])
    x, report = newton_solve(lambda x: x - x0, x0, lambda x: np.eye(2), extra_update=True)
    assert report.n_iter == 1 and report.residual_history == (0.0, 0.0)
    assert np.array_equal(x, x0)


# rank-deficient consistent linear system: b in the range of A, minimum-norm solution (1, 1)
A_SINGULAR = np.array([[1.0, 1.0], [2.0, 2.0]])
B_CONSISTENT = np.array([2.0, 4.0])


def test_lstsq_updates_solve_rank_deficient_consistent_systems_where_lu_fails():
    res = lambda x: A_SINGULAR @ x - B_CONSISTENT  # noqa: E731
    jac = lambda x: A_SINGULAR  # noqa: E731
    with pytest.raises(NewtonError, match="singular"):
        newton_solve(res, np.zeros(2), jac)
    x, report = newton_solve(res, np.zeros(2), jac, linear_solver="lstsq")
    assert np.allclose(x, [1.0, 1.0]) and report.n_iter == 1  # the minimum-norm solution
    assert len(report.residual_history) == 2 and report.residual_history[-1] <= 1e-9
    # with the extra update the minimum-norm correction is ~0 and the solution stays put
    x2, report2 = newton_solve(res, np.zeros(2), jac, linear_solver="lstsq", extra_update=True)
    assert report2.n_iter == 2 and np.allclose(x2, [1.0, 1.0], atol=1e-15)


def test_lstsq_on_an_inconsistent_system_raises_newton_error():
    with pytest.raises(NewtonError, match="no convergence"):
        newton_solve(lambda x: A_SINGULAR @ x - [1.0, 0.0], np.zeros(2), lambda x: A_SINGULAR,
                     linear_solver="lstsq", max_iter=5)


def test_lstsq_agrees_with_lu_on_regular_problems():
    x_lu, rep_lu = newton_solve(residual, np.array([1.0, -1.0]), jacobian)
    x_ls, rep_ls = newton_solve(residual, np.array([1.0, -1.0]), jacobian, linear_solver="lstsq")
    assert rep_ls.n_iter == rep_lu.n_iter
    np.testing.assert_allclose(x_ls, x_lu, rtol=1e-12)


def test_bad_option_names_raise():
    with pytest.raises(ValueError, match="linear_solver"):
        newton_solve(residual, np.zeros(2), jacobian, linear_solver="svd")
    with pytest.raises(ValueError, match="linear_solver"):
        newton_solve(residual, np.zeros(2), jacobian, linear_solver="LU")
    with pytest.raises(ValueError, match="rcond"):
        newton_solve(residual, np.zeros(2), jacobian, linear_solver="lstsq", rcond=-1.0)


def test_report_counts_every_evaluation_of_the_solve():
    calls = {"residual": 0, "jacobian": 0}

    def counted_residual(x):
        calls["residual"] += 1
        return residual(x)

    def counted_jacobian(x):
        calls["jacobian"] += 1
        return jacobian(x)

    _, report = newton_solve(counted_residual, np.array([1.0, -1.0]), counted_jacobian, tol=1e-12)
    assert (report.n_residual, report.n_jacobian) == (calls["residual"], calls["jacobian"])
    assert report.n_jacobian == report.n_factorisations == report.n_iter
    calls["residual"] = 0
    _, fd = newton_solve(counted_residual, np.array([1.0, -1.0]), tol=1e-12)
    assert fd.n_residual == calls["residual"] == fd.n_iter + 1 + 2 * 2 * fd.n_jacobian  # 2 columns, ± each
    work = fd.work
    assert (work.steps, work.newton_iterations, work.rhs_evaluations) == (0, fd.n_iter, fd.n_residual)


def test_triplets_behave_as_the_dense_matrix_of_their_entries():
    rng = np.random.default_rng(7)
    rows, cols = rng.integers(0, 4, 12), rng.integers(0, 3, 12)  # duplicates among them
    A = Triplets(rows, cols, rng.normal(size=12), (4, 3))
    dense = np.zeros((4, 3))
    np.add.at(dense, (rows, cols), A.values)
    np.testing.assert_allclose(A.toarray(), dense, rtol=0, atol=1e-15)
    x, s, r = rng.normal(size=3), rng.normal(size=4), rng.normal(size=3)
    np.testing.assert_allclose(A @ x, dense @ x, rtol=0, atol=1e-14)
    np.testing.assert_array_equal(A.T.toarray(), A.toarray().T)
    for scalar in (-2.5, np.float64(0.3)):
        np.testing.assert_array_equal((scalar * A).toarray(), (A * scalar).toarray())
        np.testing.assert_allclose((scalar * A).toarray(), scalar * dense, rtol=1e-15)
    np.testing.assert_array_equal((-A).toarray(), -A.toarray())
    np.testing.assert_allclose((A + 2.0 * A).toarray(), 3.0 * dense, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(A.scaled(rows=s, cols=r).toarray(), s[:, None] * dense * r, rtol=1e-14, atol=1e-15)
    np.testing.assert_array_equal(Triplets.identity(3, [1.0, 2.0, 3.0]).toarray(), np.diag([1.0, 2.0, 3.0]))
    assert A.nnz == 12 and A.T.shape == (3, 4)
    with pytest.raises(ValueError, match="shapes"):
        A + A.T
    # a block matrix of Triplets, scipy and dense blocks and a sum: sparse and dense agree
    blocks = [[[Triplets.identity(4), rng.normal(size=(4, 4))], A],
              [sp.csr_array(A.T.toarray()), None]]
    K_sparse, K_dense = block_matrix(blocks, (4, 3), True), block_matrix(blocks, (4, 3), False)
    assert sp.issparse(K_sparse) and isinstance(K_dense, np.ndarray)
    np.testing.assert_allclose(K_sparse.toarray(), K_dense, rtol=0, atol=1e-14)
    np.testing.assert_array_equal(K_dense[4:, 4:], 0.0)
    np.testing.assert_allclose(K_dense[:4, 4:], dense, rtol=0, atol=1e-15)


def test_dense_block_matrix_adds_the_terms_of_a_sum_in_their_order():
    rng = np.random.default_rng(5)
    A, B, C = rng.normal(size=(3, 3)), rng.normal(size=(3, 3)), rng.normal(size=(2, 3))
    K = block_matrix([[[A, 1e-9 * B, -A], C.T], [C, None]], (3, 2), False)
    np.testing.assert_array_equal(K[:3, :3], A + 1e-9 * B - A)  # bitwise: NumPy's sum in the same order
    np.testing.assert_array_equal(K[:3, 3:], C.T)  # a transposed (F-ordered) block
    np.testing.assert_array_equal(K[3:], np.hstack([C, np.zeros((2, 2))]))


def test_sparse_newton_matrices_of_one_structure_reuse_its_layout_and_stay_exact():
    rng = np.random.default_rng(11)
    rows, cols = rng.integers(0, 6, 20), rng.integers(0, 6, 20)
    for pattern in ((rows, cols), (rows, cols), (cols, rows)):  # the same entries twice, then others as many
        A = Triplets(*pattern, rng.normal(size=20), (6, 6))
        K = block_matrix([[A]], (6,), True)
        assert isinstance(K, sp.csc_array) and K.has_sorted_indices
        reference = sp.csc_array((A.values, pattern), shape=(6, 6))
        np.testing.assert_allclose(K.toarray(), reference.toarray(), rtol=0, atol=1e-15)
        assert K.nnz == reference.nnz  # duplicates summed into one slot


def test_sparse_solve_takes_a_narrow_band_by_banded_lu_and_a_wide_one_by_superlu():
    rng = np.random.default_rng(3)
    n = 300
    # a chain-like matrix: tridiagonal blocks of 3 × 3, rows and columns shuffled (the band order
    # is found by reverse Cuthill–McKee), with a zero diagonal entry that needs a row swap
    dense = np.zeros((n, n))
    for i in range(0, n - 3, 3):
        dense[i:i + 6, i:i + 6] += rng.normal(size=(6, 6))
    dense[0, 0] = 0.0
    shuffle = rng.permutation(n)
    narrow = sp.csc_array(dense[np.ix_(shuffle, shuffle)])
    wide = sp.csc_array(narrow + sp.random_array((n, n), density=0.02, rng=rng) + 10.0 * sp.eye_array(n))
    b = rng.normal(size=n)
    for A, banded in ((narrow, True), (wide, False)):
        x = newton.sparse_solve(A, b)
        band = newton._BANDS[(n, A.nnz, True)]
        assert (band.kl + band.ku <= newton.BAND_WIDTH_MAX) == banded
        np.testing.assert_allclose(x, np.linalg.solve(A.toarray(), b), rtol=1e-10, atol=1e-10 * np.abs(x).max())
    with pytest.raises(np.linalg.LinAlgError, match="zero pivot at unknown 299"):  # the unknown, not the band column
        newton.sparse_solve(sp.csc_array(np.diag(np.r_[np.ones(n - 1), 0.0]) + sp.eye_array(n, k=1)), b)
    arrow = wide.tolil()
    arrow[0, :], arrow[:, 0], arrow[:, 50] = 1.0, 1.0, 0.0  # full first row and column: no narrow band
    arrow = sp.csc_array(arrow)
    arrow.eliminate_zeros()  # column 50 empty: exactly singular
    with pytest.raises(NewtonError, match=r"t = 0\.25: singular Jacobian \(Factor is exactly singular"):
        newton_solve(lambda x: arrow @ x - b, np.zeros(n), lambda x: arrow, t=0.25)
    assert newton._BANDS[(n, arrow.nnz, True)].kl + newton._BANDS[(n, arrow.nnz, True)].ku > newton.BAND_WIDTH_MAX


def test_sparse_solve_takes_the_band_order_it_is_given():
    rng = np.random.default_rng(5)
    n = 300
    dense = np.zeros((n, n))
    for i in range(0, n - 3, 3):  # tridiagonal blocks of 3 × 3: 5 sub- and 5 superdiagonals in this order
        dense[i:i + 6, i:i + 6] += rng.normal(size=(6, 6))
    shuffle = rng.permutation(n)
    A = sp.csc_array(dense[np.ix_(shuffle, shuffle)])
    order = np.argsort(shuffle)  # the unknowns of A in the order of ``dense``
    b = rng.normal(size=n)
    x = newton.sparse_solve(A, b, order)
    band = newton._BANDS[(n, A.nnz, False)]
    assert (band.kl, band.ku) == (5, 5) and band.order is order
    np.testing.assert_allclose(x, np.linalg.solve(A.toarray(), b), rtol=0, atol=1e-12 * np.abs(x).max())
    np.testing.assert_array_equal(newton.sparse_solve(A, b, order[::-1]), newton.sparse_solve(A, b, order[::-1]))
    assert newton._BANDS[(n, A.nnz, False)].order[0] == order[-1]  # another order: its own band


def test_sparse_block_matrices_from_the_same_index_arrays_reuse_their_structure():
    rng = np.random.default_rng(5)
    rows, cols = rng.integers(0, 6, 20), rng.integers(0, 6, 20)
    assert Triplets.identity(6).rows is Triplets.identity(6).cols is Triplets.identity(6, 2.0).rows
    for _ in range(2):
        A = Triplets(rows, cols, rng.normal(size=20), (6, 6))
        empty = Triplets(np.zeros(0, dtype=int), np.zeros(0, dtype=int), np.zeros(0), (6, 6))
        K = block_matrix([[[A, Triplets.identity(6), empty]]], (6,), True)
        np.testing.assert_allclose(K.toarray(), A.toarray() + np.eye(6), rtol=0, atol=1e-15)
    assert any(layout[0][0][0] is rows for layout in newton._LAYOUTS.values())


def test_newton_takes_a_jacobian_that_solves_itself():
    class Scaled:
        def solve(self, r):
            return r / 2.0

    x, report = newton_solve(lambda x: 2.0 * x - 4.0, np.zeros(3), lambda x: Scaled())
    np.testing.assert_array_equal(x, np.full(3, 2.0))
    assert report.n_iter == 1


def test_triplets_on_the_same_index_arrays_add_their_values():
    rows, cols = np.array([0, 1, 1]), np.array([1, 0, 1])
    A = Triplets(rows, cols, np.array([1.0, 2.0, 3.0]), (2, 2))
    B = Triplets(rows, cols, np.array([4.0, 5.0, 6.0]), (2, 2))
    S = A + B
    assert S.rows is rows and S.nnz == 3
    np.testing.assert_array_equal(S.toarray(), A.toarray() + B.toarray())


def test_sparse_solve_sums_duplicate_entries():
    indices, indptr = np.r_[0, np.arange(150)], np.r_[0, np.arange(2, 152)]  # the diagonal, (0, 0) twice
    A = sp.csc_array((np.ones(151), indices, indptr), shape=(150, 150))
    assert not A.has_canonical_format
    np.testing.assert_allclose(newton.sparse_solve(A, np.ones(150)), np.r_[0.5, np.ones(149)])
    np.testing.assert_array_equal(A.indices, indices)  # the caller's matrix is left as it was
    assert not A.has_canonical_format


def test_a_jacobian_that_only_solves_cannot_give_least_squares_updates():
    class Scaled:
        def solve(self, r):
            return r / 2.0

    with pytest.raises(ValueError, match="lstsq"):
        newton_solve(lambda x: 2.0 * x - 4.0, np.zeros(3), lambda x: Scaled(), linear_solver="lstsq")


def _band_storage(dense, kl, ku):
    """LAPACK's band storage of ``dense`` (2 kl + ku + 1 rows, the first kl zero)."""
    n = dense.shape[0]
    band = np.zeros((2 * kl + ku + 1, n), order="F")
    for j in range(n):
        for i in range(max(0, j - ku), min(n, j + kl + 1)):
            band[kl + ku + i - j, j] = dense[i, j]
    return band


@pytest.mark.parametrize("kl, ku", [(3, 2), (10, 10), (33, 31)])
def test_the_band_lu_solves_with_row_exchanges_and_names_a_zero_pivot(kl, ku):
    rng = np.random.default_rng(kl)
    n = 120
    dense = np.triu(np.tril(rng.normal(size=(n, n)), ku), -kl)
    dense[np.arange(0, n, 4), np.arange(0, n, 4)] = 0.0  # zero diagonal entries: row exchanges
    b = rng.normal(size=n)
    band = newton._Band(None, None, np.arange(n), kl, ku, None)
    x = band.solve_factorised(*band.factorise(_band_storage(dense, kl, ku)), b)
    np.testing.assert_allclose(dense @ x, b, rtol=0, atol=1e-10 * np.abs(b).max())
    singular = dense.copy()
    singular[:, 7] = 0.0
    with pytest.raises(np.linalg.LinAlgError, match="zero pivot at unknown 7"):
        band.factorise(_band_storage(singular, kl, ku))


def test_block_matrices_put_straight_into_band_storage_solve_as_sparse_solve_bitwise():
    rng = np.random.default_rng(9)
    n, m = 60, 20
    index = np.arange(n)
    order = np.concatenate([np.r_[3 * j : 3 * j + 3, n + j] for j in range(m)])
    layouts = []
    for _ in range(2):  # the same pattern twice: the second reuses the band layout
        tri = Triplets(np.r_[index, index[1:], index[:-1]], np.r_[index, index[:-1], index[1:]],
                       rng.normal(size=3 * n - 2), (n, n))
        coupling = Triplets(np.repeat(np.arange(m), 3), 3 * np.repeat(np.arange(m), 3) + np.tile([0, 1, 2], m),
                            rng.normal(size=3 * m), (m, n))
        blocks = [[[tri, Triplets.identity(n, 2.0), tri], coupling.T], [coupling, None]]
        r = rng.normal(size=n + m)
        x = newton.BandedBlocks(blocks, (n, m), order.copy()).solve(r)
        np.testing.assert_array_equal(x, newton.sparse_solve(block_matrix(blocks, (n, m), True), r, order))
        layouts += [layout for layout in newton._BAND_LAYOUTS.values() if np.array_equal(layout[1], order)]
    assert len(layouts) == 2 and layouts[0] is layouts[1]
