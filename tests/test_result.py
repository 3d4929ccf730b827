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


def test_extras_are_read_only():
    res = ConsensusResult.from_labels([0, 1], extras={"objectives": np.array([1.0])})
    with pytest.raises(TypeError):
        res.extras["objectives"] = 2      # type: ignore[index]
    assert dict(res.extras).keys() == {"objectives"} and len(res.extras) == 1


@pytest.mark.parametrize("method, old, new", [("kcc", "gammas", "objectives"), ("bce", "lower_bounds", "objectives"),
                                              ("em-mixture", "log_likelihoods", "objectives"),
                                              ("kcc", "centres", "centers")])
def test_an_extras_key_under_its_former_spelling_reads_the_new_one_with_a_warning(method, old, new):
    value = np.arange(3.0)
    res = ConsensusResult.from_labels([0, 1, 0], extras={new: value}, method=method)
    with pytest.warns(FutureWarning, match=f"extras\\['{old}'\\] was renamed extras\\['{new}'\\]"):
        assert res.extras[old] is value
    with pytest.warns(FutureWarning):
        assert old in res.extras
    with pytest.warns(FutureWarning):
        assert res.extras.get(old) is value
    assert list(res.extras) == [new]            # iteration sees one spelling
    with pytest.raises(KeyError):
        ConsensusResult.from_labels([0, 1], extras={}, method=method).extras[old]   # nothing under either name
    other = ConsensusResult.from_labels([0, 1, 0], extras={new: value}, method="voting")
    with pytest.raises(KeyError):
        other.extras[old]                       # only the method that spelled it so reads the old key
    assert old not in other.extras


def test_kcc_reports_its_restarts_under_the_shared_spelling():
    """KCC's Gamma, BCE's bound and EM's log-likelihood per restart are ``objectives``, as the
    other methods' criteria per restart are (soft KCC's ``centers``:
    tests/consensus_functions/test_kcc_soft.py)."""
    import cclust

    labels = np.array([[0, 0, 1, 1, 2, 2], [0, 0, 1, 1, 1, 2], [1, 1, 0, 0, 2, 2]])
    res = cclust.consensus("kcc", labels.T, 3, n_init=3, random_state=0)
    assert res.extras["objectives"].shape == (3,) and "gammas" not in dict(res.extras)
    assert res.objective == pytest.approx(res.extras["objectives"].max())
    for name, former in (("bce", "lower_bounds"), ("em-mixture", "log_likelihoods")):
        res = cclust.consensus(name, labels.T, 2, n_init=2, random_state=0)
        assert res.extras["objectives"].shape == (2,) and former not in dict(res.extras)


def test_the_former_spelling_warning_names_the_callers_line():
    import warnings

    res = ConsensusResult.from_labels([0, 1], extras={"objectives": np.array([1.0])}, method="kcc")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res.extras["gammas"]
        res.extras.get("gammas")
        "gammas" in res.extras
    assert [w.filename for w in caught] == [__file__] * 3
