import pickle

import numpy as np
import pytest

from cclust import ConsensusResult
from cclust.errors import ValidationError


def test_from_labels_numbers_clusters_by_first_member():
    res = ConsensusResult.from_labels([7, 7, 3, 9, 3], objective=1.5, objective_name="gamma", method="x")
    assert res.labels.tolist() == [0, 0, 1, 2, 1]
    assert res.n_clusters == 3 and res.labels.dtype == np.int64
    assert not res.labels.flags.writeable


def test_rejects_gaps_and_wrong_count():
    with pytest.raises(ValidationError, match="every cluster"):
        ConsensusResult(labels=[0, 2], n_clusters=3)
    with pytest.raises(ValidationError, match="n_clusters=3"):
        ConsensusResult(labels=[0, 1], n_clusters=3)


def test_pickles_with_extras_and_is_frozen():
    res = ConsensusResult.from_labels([1, 0, 1], extras={"trace": np.arange(3)}, n_iter=4)
    back = pickle.loads(pickle.dumps(res))
    assert back.labels.tolist() == res.labels.tolist() and back.n_iter == 4
    assert back.extras["trace"].tolist() == [0, 1, 2]
    with pytest.raises(AttributeError):
        res.n_clusters = 5
    with pytest.raises(TypeError):
        res.extras["x"] = 1


def test_float_labels_are_refused_not_truncated():
    with pytest.raises(ValidationError, match="integers"):
        ConsensusResult(labels=np.array([0.7, 1.0]), n_clusters=2)
