import numpy as np
import pytest

from mbslib.convergence import (
    local_orders,
    max_error,
    observed_order,
    quotient_of_precision,
    quotient_of_precision_history,
    reference_solution,
    relative_error,
)
from mbslib.diagnostics import increments, max_drift, max_increment, relative_drift


def test_observed_order_of_exact_power_law():
    hs = np.array([0.1, 0.05, 0.025])
    assert observed_order(hs, 3.0 * hs**2) == pytest.approx(2.0)
    np.testing.assert_allclose(local_orders(hs, 3.0 * hs**2), 2.0)
    with pytest.raises(ValueError):
        observed_order(hs, np.array([1.0, 0.0, 1.0]))


def test_quotient_of_precision_of_a_second_order_sequence():
    exact = np.linspace(0, 1, 5)
    sols = [exact + c * h**2 for c, h in [(1.0, 0.1), (1.0, 0.05), (1.0, 0.025)]]
    assert quotient_of_precision(*sols) == pytest.approx(4.0)


def test_reference_solution_of_harmonic_oscillator():
    t = np.linspace(0, 10, 11)
    y = reference_solution(lambda t, y: np.array([y[1], -y[0]]), [1.0, 0.0], t)
    assert y.shape == (11, 2)
    assert max_error(y[:, 0], np.cos(t)[:, None].T[0]) < 1e-10
    assert relative_error(y[:, 0], np.cos(t)) < 1e-10


def test_diagnostics():
    eps = np.finfo(float).eps
    e = np.array([1.0, 1.0 + eps, 1.0, 1.5])
    np.testing.assert_array_equal(increments(e), [eps, -eps, 0.5])
    assert max_increment(e) == 0.5 and max_drift(e) == 0.5 and relative_drift(e) == 0.5


def test_symlog_ticks_are_symmetric_and_sparse():
    from mbslib.plotting import symlog_ticks

    ticks = symlog_ticks(1e-16, 3e-4)
    assert ticks == sorted(ticks) and 0.0 in ticks and len(ticks) <= 9
    assert all(-t in ticks for t in ticks)


def test_quotient_of_precision_history():
    N = 4
    x = [np.sin(np.linspace(0, 1, k * N + 1))[:, None] + (0.1 / k) ** 2 for k in (1, 2, 4)]
    np.testing.assert_allclose(quotient_of_precision_history(*x), 4.0, rtol=1e-12)
    with pytest.raises(ValueError, match="4N"):
        quotient_of_precision_history(x[0], x[1], x[1])
