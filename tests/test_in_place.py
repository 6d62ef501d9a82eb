"""mbslib.in_place: compiled without reference counting, and checked for it when compiled."""

import numpy as np
import pytest
from numba.core.errors import TypingError

from mbslib.in_place import in_place


@in_place
def _scale_into(x, a, out):
    for i in range(x.size):
        out[i] = a * x[i]
    return out[0], x.size


@in_place
def _returns_its_argument(x):
    return x


@in_place
def _returns_an_array_in_a_tuple(x):
    return 1.0, (x[0], x)


@in_place
def _allocates(n):
    return np.zeros(n)[0]


def test_works_in_the_arrays_it_is_given():
    x, out = np.arange(3.0), np.zeros(3)
    assert _scale_into(x, 2.0, out) == (0.0, 3)
    np.testing.assert_array_equal(out, [0.0, 2.0, 4.0])


@pytest.mark.parametrize("fn", [_returns_its_argument, _returns_an_array_in_a_tuple])
def test_returning_an_array_is_a_compile_error(fn):
    with pytest.raises(TypingError, match=f"{fn.__name__} is compiled in_place and returns"):
        fn(np.zeros(2))


def test_allocating_is_a_compile_error():
    with pytest.raises(TypingError, match="zeros"):
        _allocates(3)
