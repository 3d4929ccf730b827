import numpy as np
import pytest


@pytest.fixture(params=[0, 1, 42], ids=lambda s: f"seed{s}")
def seed(request):
    """Checks that take this fixture must pass for any seed."""
    return request.param


@pytest.fixture
def rng(seed):
    return np.random.default_rng(seed)
