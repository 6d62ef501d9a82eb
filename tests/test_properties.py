"""Property-based tests (hypothesis) of the model API and the entry point: whatever a user passes,
the answer is a valid object or a ``ValueError``/``TypeError`` that names the parameter, never an
error from deep inside NumPy or numba, a NaN trajectory or ``ok=True`` on an invalid model."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mbslib.methods import solve
from mbslib.model import Gravity, Joint, Model, RigidBody, Spring
from mbslib.systems.benchmarks import spinning_body

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# anything a user might type where a number or a vector belongs
junk = st.one_of(st.none(), st.booleans(), st.text(max_size=3), st.integers(-3, 3),
                 st.floats(allow_nan=True, allow_infinity=True), st.lists(st.floats(-10, 10), max_size=4),
                 st.lists(st.text(max_size=2), min_size=3, max_size=3),
                 st.dictionaries(st.text(max_size=1), st.integers()))


def _named(error: Exception, *names: str) -> bool:
    return any(name in str(error) for name in names)


@SETTINGS
@given(field=st.sampled_from(["mass", "inertia", "position", "rotation", "velocity", "angular_velocity"]), value=junk)
def test_a_body_is_valid_or_the_error_names_the_field(field, value):
    args = dict(name="b", mass=1.0, inertia=[1.0, 2.0, 2.5]) | {field: value}
    try:
        body = RigidBody(**args)
    except ValueError as error:
        assert _named(error, field) and "body 'b'" in str(error)
        return
    assert np.all(np.isfinite(body.inertia)) and body.mass > 0


@SETTINGS
@given(J=st.tuples(*[st.floats(-1.0, 10.0, allow_nan=False)] * 3))
def test_principal_inertias_are_accepted_exactly_when_a_rigid_body_has_them(J):
    s = np.sort(J)
    rigid = s[0] > 1e-9 * max(s[2], 1e-300) and s[2] <= (s[0] + s[1]) * (1 + 1e-12)
    try:
        RigidBody("b", 1.0, J)
    except ValueError as error:
        assert not rigid or abs(s[2] - s[0] - s[1]) < 1e-9 * s[2] or s[0] < 1e-9, (J, error)
        assert _named(error, "inertia")
        return
    assert rigid or abs(s[2] - s[0] - s[1]) < 1e-9 * max(s[2], 1.0), J


@SETTINGS
@given(end=st.sampled_from(["body_a", "body_b"]), value=junk)
def test_a_joint_end_is_a_body_index_or_the_error_names_it(end, value):
    body = RigidBody("b", 1.0, [1.0, 2.0, 2.5])
    args = dict(kind="spherical", body_a=None, body_b=0, point_a=[0, 0, 0], point_b=[0, 0, 0]) | {end: value}
    try:
        Model((body,), (Joint(**args),))
    except ValueError as error:
        assert _named(error, end)
        return
    assert isinstance(value, int) and not isinstance(value, bool) or value is None


@SETTINGS
@given(value=junk)
def test_model_fields_are_records(value):
    body = RigidBody("b", 1.0, [1.0, 2.0, 2.5])
    for field in ("gravity", "springs"):
        try:
            model = Model((body,), **{field: value})
        except ValueError as error:
            assert _named(error, field)
            continue
        assert getattr(model, field) in (None, ()) or isinstance(getattr(model, field), (Gravity, tuple))


@SETTINGS
@given(stiffness=junk, damping=junk)
def test_spring_coefficients_are_numbers(stiffness, damping):
    try:
        Spring(None, 0, [0, 0, 0], [0, 0, 1.0], stiffness, damping=damping)
    except ValueError as error:
        assert _named(error, "stiffness", "damping")


MODEL = spinning_body()


@settings(max_examples=40, deadline=None)
@given(h=st.one_of(junk, st.floats(1e-3, 0.5)), t_end=st.one_of(junk, st.floats(0.0, 1.0)),
       every=st.one_of(junk, st.integers(-2, 5)))
def test_solve_runs_or_names_the_argument(h, t_end, every):
    try:
        run = solve(MODEL, "RKMK RK44", h, t_end, record_every=every, throw=False)
    except (ValueError, TypeError) as error:
        assert _named(error, "h", "t_end", "record_every"), error
        return
    assert np.all(np.isfinite(run.states.position))  # a blown-up step is a failure, never a NaN state
    assert run.status == "failed" or (run.t[-1] == pytest.approx(t_end) and run.health is not None)
