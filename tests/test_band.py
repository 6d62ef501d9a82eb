"""The band factorisation of the generalized-α iteration matrix (40): orders, band widths, solves."""

from types import SimpleNamespace

import numpy as np
import pytest

from mbslib.formulations import lie_group
from mbslib.integrators import generalized_alpha as ga
from mbslib.kernels import (
    band_first,
    band_lu_factor,
    band_lu_solve_in_place,
    band_width,
    inverse,
    lu_factor,
    lu_solve_in_place,
)
from mbslib.systems.chain import chain


def band_solve(A, band, b):
    """Solve ``A x = b`` (model order) through the band storage of ``band``."""
    kl, ku, order = band.kl, band.ku, band.order
    n = len(order)
    Ap = A[np.ix_(order, order)]
    assert not np.any(np.triu(Ap, ku + 1)) and not np.any(np.tril(Ap, -kl - 1)), "A is outside the band"
    W = np.zeros((n, band_width(n, kl, ku)))
    for i in range(n):
        for c in range(max(0, i - kl), min(n, i + ku + 1)):
            W[i, c - band_first(i, n, kl, ku)] = Ap[i, c]
    piv = np.zeros(n, dtype=np.int64)
    assert band_lu_factor(W, kl, ku, piv)
    y = b[order].copy()
    band_lu_solve_in_place(W, kl, ku, piv, y)
    x = np.empty_like(y)
    x[order] = y
    return x


def kkt_chain_pattern(n_links, m, r):
    """Pattern of a chain of ``n_links`` blocks of ``m`` unknowns, ``r`` rows per joint between
    neighbours (the first joint to the ground)."""
    n, j = n_links * m, n_links * r
    N, Bp = np.zeros((n, n), dtype=bool), np.zeros((j, n), dtype=bool)
    for k in range(n_links):
        N[k * m:(k + 1) * m, k * m:(k + 1) * m] = True
        Bp[k * r:(k + 1) * r, k * m:(k + 1) * m] = True
        if k > 0:
            Bp[k * r:(k + 1) * r, (k - 1) * m:k * m] = True
    return N, Bp


@pytest.mark.parametrize("n_links", [1, 3, 12])
def test_band_solve_equals_a_dense_solve_on_kkt_matrices_with_a_zero_block(rng, n_links):
    m, r = 6, 3
    N, Bp = kkt_chain_pattern(n_links, m, r)
    n, j = N.shape[0], Bp.shape[0]
    band = ga.band_structure(n, j, (N, Bp))
    for _ in range(5):
        A = np.zeros((n + j, n + j))
        A[:n, :n] = np.where(N, rng.normal(size=(n, n)), 0.0)
        B = np.where(Bp, rng.normal(size=(j, n)), 0.0)
        A[:n, n:], A[n:, :n] = B.T, B  # zero diagonal block: pivoting is needed
        b = rng.normal(size=n + j)
        x = band_solve(A, band, b)
        np.testing.assert_allclose(A @ x, b, atol=1e-10 * np.abs(A).max() * np.abs(x).max())
        np.testing.assert_allclose(x, np.linalg.solve(A, b), rtol=1e-8, atol=1e-10)


def test_band_loops_equal_the_dense_factorisation_to_the_last_bit(rng):
    """A tridiagonal matrix of order 12 (rows of 4 < 12 entries: the band loops) with a zero
    diagonal: the same eliminations as the dense LU."""
    n = 12
    A = np.diag(rng.normal(size=n - 1), 1) + np.diag(rng.normal(size=n - 1), -1)
    b = rng.normal(size=n)
    band = ga.band_structure(n, 0, (A != 0, np.zeros((0, n), dtype=bool)))
    assert (band.kl, band.ku) == (1, 1) and band_width(n, 1, 1) < n
    LU, piv = A.copy(), np.zeros(n, dtype=np.int64)
    assert lu_factor(LU, piv)
    x = b.copy()
    lu_solve_in_place(LU, piv, x)
    assert np.array_equal(band_solve(A, band, b), x)


def test_a_band_as_wide_as_the_matrix_is_the_dense_factorisation_to_the_last_bit(rng):
    """The slider–crank's iteration matrix: its band rows hold all N columns (kl < N − 1), the
    loops stay within the band and give the factors and solution of the dense LU."""
    from mbslib.systems.slider_crank import SliderCrank

    model, x0 = SliderCrank().model("EP")
    n = model.n
    A = ga.iteration_matrix(model, x0[:n], x0[n:] + rng.normal(size=n), 1e-3 * rng.normal(size=n), 1e-3)
    band, size = ga.model_band(model), A.shape[0]
    assert band.kl < size - 1 and band_width(size, band.kl, band.ku) == size
    b = rng.normal(size=size)
    LU, piv = A[np.ix_(band.order, band.order)], np.zeros(size, dtype=np.int64)
    assert lu_factor(LU, piv)
    y = b[band.order].copy()
    lu_solve_in_place(LU, piv, y)
    x = np.empty_like(y)
    x[band.order] = y
    assert np.array_equal(band_solve(A, band, b), x)


def test_dense_band_is_the_dense_factorisation_to_the_last_bit(rng):
    n = 9
    band = ga.band_structure(n, 0)
    assert band.kl == band.ku == n - 1 and np.array_equal(band.order, np.arange(n))
    A, b = rng.normal(size=(n, n)), rng.normal(size=n)
    A[0, 0] = 0.0
    LU, piv = A.copy(), np.zeros(n, dtype=np.int64)
    assert lu_factor(LU, piv)
    x = b.copy()
    lu_solve_in_place(LU, piv, x)
    assert np.array_equal(band_solve(A, band, b), x)


def test_band_factor_reports_a_singular_matrix():
    assert not band_lu_factor(np.array([[1.0], [0.0], [0.0]]), 0, 0, np.zeros(3, dtype=np.int64))  # diag(1, 0, 0)


def test_band_structure_validates_the_pattern():
    with pytest.raises(ValueError, match="pattern"):
        ga.band_structure(6, 3, (np.ones((6, 6), dtype=bool), np.ones((2, 6), dtype=bool)))


def chain_model(n_bodies):
    return lie_group.absolute_model(chain(n_bodies), "RV")


def test_band_width_of_the_chain_does_not_grow_with_its_length():
    """The work of a factorisation, O((n + j) kl (kl + ku)), is linear in the number of bodies."""
    widths = {n_bodies: (ga.model_band(chain_model(n_bodies)).kl, ga.model_band(chain_model(n_bodies)).ku)
              for n_bodies in (2, 4, 16, 64)}
    assert len(set(widths.values())) == 1, widths
    kl, ku = widths[64]
    assert kl + ku < 2 * (6 + 3 + 6)  # two bodies and a joint


def test_band_solve_of_the_chains_iteration_matrix(rng):
    model = chain(8)
    absolute = chain_model(8)
    x0 = lie_group.initial_state(model, "RV")
    n = absolute.n
    q, v = x0[:n], x0[n:] + 0.1 * rng.normal(size=n)
    S = ga.iteration_matrix(absolute, q, v, 1e-3 * v, 1e-3, use_texp=True)
    band = ga.model_band(absolute)
    assert band.kl < 20 and not np.array_equal(band.order, np.arange(len(band.order)))
    b = rng.normal(size=S.shape[0])
    np.testing.assert_allclose(band_solve(S, band, b), np.linalg.solve(S, b), rtol=1e-9, atol=1e-12)


def test_chain_runs_as_a_dense_model_up_to_round_off():
    """The band order changes the iterates by round-off only: the same model without its pattern
    is dense and keeps its own order."""
    absolute, x0 = chain_model(6), lie_group.initial_state(chain(6), "RV")
    dense = SimpleNamespace(**{name: getattr(absolute, name) for name in
                               ("kernels", "form", "P", "n", "n_constraints", "n_pages", "n_record")}, pattern=None)
    assert ga.model_band(dense).kl == absolute.n + absolute.n_constraints - 1
    runs = [ga.integrate_genalpha(m, x0, 1e-3, 0.05) for m in (absolute, dense)]
    assert all(run.ok for run in runs)
    np.testing.assert_allclose(np.r_[runs[0].q, runs[0].v], np.r_[runs[1].q, runs[1].v], rtol=0, atol=1e-10)


def test_factorisation_work_is_that_of_the_lu_the_kernels_use():
    from mbslib.systems import lie_group_mbs as lg

    top, _ = lg.heavy_top_model(lg.TOP_RV)
    size = top.n + top.n_constraints
    assert ga.factorisation_work(top) == pytest.approx(size**3 / 3)  # dense: no pattern
    for n_bodies in (16, 32):
        model = chain_model(n_bodies)
        band, size = ga.model_band(model), model.n + model.n_constraints
        assert ga.factorisation_work(model) == size * band.kl * (band.kl + band.ku) < size**3 / 3
    # linear in the number of bodies
    ratio = ga.factorisation_work(chain_model(32)) / ga.factorisation_work(chain_model(16))
    assert ratio == pytest.approx(2.0, rel=0.05)


def test_inverse_by_gauss_jordan_and_its_singularity_test(rng):
    """kernels.inverse agrees with LAPACK's inverse (a mostly-zero block as the GGL-VI's, and a
    full one), leaves A's rows swapped as needed, and reports a singular matrix instead of
    dividing by a zero pivot, like lu_factor."""
    block = np.diag(rng.uniform(1.0, 2.0, 12))
    block[3:6, 3:6] += 0.1 * rng.normal(size=(3, 3))
    for A in (block, rng.normal(size=(7, 7))):
        out = np.empty_like(A)
        assert inverse(A.copy(), out)
        np.testing.assert_allclose(out, np.linalg.inv(A), rtol=1e-12, atol=1e-12)
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert not inverse(singular.copy(), np.empty((2, 2)))
    assert not lu_factor(singular.copy(), np.zeros(2, dtype=np.int64))
