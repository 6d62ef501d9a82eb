"""Tests of the heavy top's shared physical data (mbslib.systems.heavy_top)."""

import numpy as np
import pytest
from scipy.integrate import dblquad

from mbslib.systems import ggl_examples as ex
from mbslib.systems.heavy_top import Cone, steady_precession_spin
from mbslib.systems.livens_systems import HeavyTop


def test_papers_cone_closed_form_values():
    cone = Cone()  # ρ = 2700 kg/m³, a = 0.1 m, r = a/2
    assert cone.radius == 0.05
    assert cone.mass == pytest.approx(0.225 * np.pi, rel=1e-15)
    assert cone.com_distance == pytest.approx(0.075, rel=1e-15)
    m, r, a, l = cone.mass, 0.05, 0.1, 0.075
    J0 = 3 / 80 * m * (4 * r**2 + a**2)
    np.testing.assert_allclose(cone.inertia_com, [J0, J0, 3 / 10 * m * r**2], rtol=1e-15)
    np.testing.assert_allclose(cone.inertia_tip, [J0 + m * l**2, J0 + m * l**2, 3 / 10 * m * r**2], rtol=1e-15)
    np.testing.assert_allclose(cone.inertia_tip, [4.5062220e-3, 4.5062220e-3, 5.3014376e-4], rtol=1e-7)


def test_cone_data_by_quadrature():
    """Mass, centre of mass and inertias of a cone with r ≠ a/2, integrated over slices z ∈ [0, a]."""
    rho, r, a = 1300.0, 0.07, 0.2
    cone = Cone(density=rho, height=a, radius=r)
    R = lambda z: r * z / a  # noqa: E731 (radius of the slice at height z above the tip)
    mass = dblquad(lambda s, z: rho * 2 * np.pi * s, 0, a, 0, R)[0]
    mz = dblquad(lambda s, z: rho * 2 * np.pi * s * z, 0, a, 0, R)[0]
    J3 = dblquad(lambda s, z: rho * 2 * np.pi * s**3, 0, a, 0, R)[0]
    # about a transverse axis through the tip: ∫ (x² + z²) dm with ∫ x² dm = ½ ∫ s² dm
    J1_tip = dblquad(lambda s, z: rho * 2 * np.pi * s * (0.5 * s**2 + z**2), 0, a, 0, R)[0]
    assert cone.mass == pytest.approx(mass, rel=1e-12)
    assert cone.com_distance == pytest.approx(mz / mass, rel=1e-12)
    np.testing.assert_allclose(cone.inertia_tip, [J1_tip, J1_tip, J3], rtol=1e-12)
    l = cone.com_distance  # parallel-axis theorem between tip and centre of mass
    np.testing.assert_allclose(cone.inertia_com[:2], J1_tip - cone.mass * l**2, rtol=1e-12)


def test_cone_record_is_frozen_and_validated():
    cone = Cone()
    with pytest.raises(AttributeError):
        cone.density = 1.0
    for kwargs, name in [({"density": 0.0}, "density"), ({"height": -0.1}, "height"),
                         ({"radius": 0.0}, "radius"), ({"height": np.nan}, "height")]:
        with pytest.raises(ValueError, match=name):
            Cone(**kwargs)


def test_steady_precession_spin_rate():
    cone = Cone()
    J1, _, J3 = cone.inertia_tip
    mgl = cone.mass * 9.81 * cone.com_distance
    assert steady_precession_spin(mgl, J1, J3, 10.0, np.pi / 3) == pytest.approx(135.6, abs=1e-10)
    # without gravity only the gyroscopic term remains
    assert steady_precession_spin(0.0, 2.0, 1.0, 3.0, 0.0) == pytest.approx(3.0)
    for args, name in [((-1.0, J1, J3, 10.0, 1.0), "mgl"), ((mgl, J1, J3, 0.0, 1.0), "omega_p"),
                       ((mgl, J1, 0.0, 10.0, 1.0), "J3"), ((mgl, J1, J3, 10.0, 4.0), "theta0")]:
        with pytest.raises(ValueError, match=name):
            steady_precession_spin(*args)


def test_both_formulations_use_the_same_cone():
    """Chapter 000 (quaternions, inertias about the tip) and 001 (directors, about the centre)."""
    cone = Cone()
    quat = HeavyTop.cone()
    directors = ex.HeavyTopParams()
    assert quat.mass == cone.mass == directors.mass
    assert quat.l == cone.com_distance == directors.l
    np.testing.assert_array_equal(quat.J, cone.inertia_tip)
    np.testing.assert_array_equal(directors.J, cone.inertia_com)
    omega_s, _ = quat.steady_precession(directors.alpha0, directors.omega_p)
    assert omega_s == directors.omega_s
