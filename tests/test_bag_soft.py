"""The bag generator's soft output (clue's cl_bag result as memberships, Dudoit & Fridlyand 2003)."""
import numpy as np
import pytest

import cclust
from cclust.datasets import load_iris
from cclust.errors import ValidationError
from cclust.generators import bag, bagged_memberships
from cclust.soft import SoftEnsemble
from cclust.validation import spawn_seed_sequences


def test_bag_memberships_are_bagclust1_vote_fractions_of_the_same_seeds():
    X, _ = load_iris()
    S = bag(X, 3, n_partitions=3, n_bootstrap=4, memberships=True, random_state=5)
    assert isinstance(S, SoftEnsemble) and S.provenance == ("bag",) * 3
    for j, seq in enumerate(spawn_seed_sequences(5, 3)):
        expected = bagged_memberships(X, 3, n_bootstrap=4, random_state=np.random.default_rng(seq))
        np.testing.assert_allclose(S.memberships[j], expected, rtol=0, atol=1e-15)
        # vote fractions of B = 4 bootstrap partitions
        assert np.allclose(S.memberships[j] * 4, np.round(S.memberships[j] * 4))
    hard = bag(X, 3, n_partitions=3, n_bootstrap=4, random_state=5)
    np.testing.assert_array_equal(S.harden().labels, hard.labels)
    assert bag(X, 3, n_partitions=3, n_bootstrap=4, memberships=True, random_state=5, n_jobs=2) == S


def test_bag_memberships_fuse_softly():
    X, y = load_iris()
    S = bag(X, 3, n_partitions=5, n_bootstrap=5, memberships=True, random_state=0)
    res = cclust.consensus("kcc", S, 3, random_state=0)
    assert cclust.get("ari")(res.labels, y) > 0.6


@pytest.mark.parametrize("kwargs, match", [
    ({"memberships": "yes"}, "memberships must be True or False"),
    ({"memberships": True, "backend": "dask"}, "threads only"),
    ({"memberships": True, "chunks": 10}, "threads only"),
])
def test_bag_memberships_bad_input(kwargs, match):
    X, _ = load_iris()
    with pytest.raises(ValidationError, match=match):
        bag(X, 3, n_partitions=2, n_bootstrap=2, **kwargs)
