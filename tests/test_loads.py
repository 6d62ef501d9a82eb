"""Tests of the shared load histories (mbslib.loads)."""

import numpy as np
import pytest
from scipy.integrate import quad

from mbslib.loads import triangular_pulse
from mbslib.systems import nontwisting_body as nb
from mbslib.systems.four_bar_loop import triangle_load


def test_triangular_pulse_values_and_kinks():
    t = [-0.5, 0.0, 0.25, 0.5, 0.75, 1.0, 1.5]
    np.testing.assert_array_equal(triangular_pulse(t, peak=100.0), [0, 0, 50, 100, 50, 0, 0])
    # asymmetric pulse, negative peak
    f = triangular_pulse([0.0, 0.5, 2.0, 3.0, 4.0, 5.0], peak=-3.0, t_peak=2.0, t_end=4.0)
    np.testing.assert_allclose(f, [0.0, -0.75, -3.0, -1.5, 0.0, 0.0], rtol=1e-15)


@pytest.mark.parametrize("peak, t_peak, t_end", [(1.0, 0.5, 1.0), (100.0, 0.5, 1.0), (2.5, 0.35, 0.7),
                                                 (-7.0, 0.2, 1.3), (1.0, 1.1, 3.3)])
def test_kinks_are_exact_under_either_boundary_convention(peak, t_peak, t_end):
    """Both branches give exactly `peak` at t_peak and exactly 0 at t_end, so ≤ versus < is moot."""
    sp = t_peak / t_end
    s = t_peak / t_end
    assert peak * (s / sp) == peak * ((1.0 - s) / (1.0 - sp)) == peak
    assert peak * ((1.0 - t_end / t_end) / (1.0 - sp)) == 0.0
    assert triangular_pulse(t_peak, peak, t_peak, t_end) == peak
    assert triangular_pulse(t_end, peak, t_peak, t_end) == 0.0
    assert triangular_pulse(np.array([t_peak, t_end]), peak, t_peak, t_end).tolist() == [peak, 0.0]


def test_scalar_and_array_evaluations_agree_and_integral_is_half_base_times_height():
    t = np.linspace(-0.2, 1.6, 1801)
    f = triangular_pulse(t, 3.0, 0.4, 1.2)
    assert f.shape == t.shape
    assert isinstance(triangular_pulse(0.3, 3.0, 0.4, 1.2), float)
    np.testing.assert_array_equal(f, [triangular_pulse(s, 3.0, 0.4, 1.2) for s in t])
    area = quad(lambda s: triangular_pulse(s, 3.0, 0.4, 1.2), -1, 2, points=[0, 0.4, 1.2])[0]
    assert area == pytest.approx(0.5 * 1.2 * 3.0, rel=1e-12)
    assert np.all(np.diff(f[(t >= 0) & (t <= 0.4)]) > 0) and np.all(np.diff(f[(t >= 0.4) & (t <= 1.2)]) < 0)


def test_chapters_use_the_shared_pulse():
    """Chapter 000's load (128) and chapter 004's time function (116) are the same pulse."""
    t = np.linspace(-0.5, 2.5, 601)
    np.testing.assert_array_equal(triangle_load(t, 100.0), triangular_pulse(t, 100.0, 0.5, 1.0))
    for T in (1.0, 0.7):
        np.testing.assert_array_equal(nb.ramp(t, T), triangular_pulse(t, 1.0, T / 2, T))
        np.testing.assert_allclose(nb.ramp(t, T), triangle_load(t / T, 1.0), rtol=0, atol=1e-15)  # stretched


@pytest.mark.parametrize("kwargs, name", [({"peak": np.nan}, "peak"), ({"t_peak": 0.0}, "t_peak"),
                                          ({"t_end": -1.0}, "t_end"), ({"t_peak": 1.0, "t_end": 1.0}, "t_peak")])
def test_bad_parameters_raise_naming_them(kwargs, name):
    with pytest.raises(ValueError, match=name):
        triangular_pulse(0.3, **kwargs)
