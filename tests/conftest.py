"""Shared fixtures and the hypothesis profile of the unit tests."""

import numpy as np
import pytest
from hypothesis import settings

settings.register_profile("mbsbook", max_examples=60, deadline=None, derandomize=True)
settings.load_profile("mbsbook")


@pytest.fixture
def rng():
    return np.random.default_rng(20261123)
