"""Default starts of the iterative methods against the papers' starts.

The defaults (k-means++ seeding) differ from the papers' starts, which stay available as
options; the options must reproduce, label for label, what the defaults gave before they
changed (``data/paper_inits_golden.json``, recorded on iris and wine ensembles).
"""
import json
import os

import numpy as np
import pytest
from sklearn.datasets import make_blobs

import cclust
from cclust.datasets import load_iris, load_wine
from cclust.metrics import ari

GOLDEN = os.path.join(os.path.dirname(__file__), "data", "paper_inits_golden.json")
PAPER = {"kcc": {"init": "random"}, "ivc": {"init": "partitions"}, "ipvc": {"init": "partitions"},
         "ipc": {"init": "partitions"}, "em-mixture": {"init": "partitions"},
         "voting": {"init": "partitions"}, "wokmeans": {"init": "random"}}


@pytest.fixture(scope="module")
def golden():
    with open(GOLDEN) as f:
        return json.load(f)


def _features(data):
    if data == "iris":
        return load_iris()[0]
    X = load_wine()[0]
    return (X - X.mean(0)) / X.std(0)


@pytest.mark.parametrize("name", sorted(PAPER))
def test_paper_start_reproduces_former_default(golden, name):
    for key, expected in golden["labels"].items():
        method, data, k = key.split("/")
        if method != name:
            continue
        E = cclust.Ensemble(np.array(golden["inputs"][data]))
        extra = {"X": _features(data.split("_")[0])} if name == "wokmeans" else {}
        res = cclust.consensus(name, E, int(k[1:]), random_state=0, **PAPER[name], **extra)
        assert "".join(map(str, res.labels.tolist())) == expected, key


# Ten well-separated blobs (n = 2000) and a converged kmeans ensemble (K_i in [10, 45], the
# generator's former default max_iter=100): every default reaches ARI 1.0; each paper start named
# in PAPER_MISSES keeps merged blobs here. (On the generator's 5-iteration default ensemble those
# starts happen to find the blobs too, which would leave the test of the defaults vacuous.)
BLOB_SEED = {"wokmeans": 2}
PAPER_MISSES = {"kcc": 0.87, "ivc": 0.87, "ipvc": 0.87, "ipc": 0.87, "em-mixture": 0.87,
                "voting": 0.88, "wokmeans": 0.87}


@pytest.fixture(scope="module")
def blobs():
    cache = {}

    def get(seed):
        if seed not in cache:
            X, y = make_blobs(2000, n_features=8, centers=10, random_state=seed)
            cache[seed] = X, y, cclust.generate("kmeans", X, 10, n_partitions=100, max_iter=100, random_state=0)
        return cache[seed]
    return get


def _ari(blobs, name, **params):
    X, y, E = blobs(BLOB_SEED.get(name, 1))
    extra = {"X": X} if name == "wokmeans" else {}
    return ari(y, cclust.consensus(name, E, 10, random_state=0, **params, **extra).labels)


@pytest.mark.parametrize("name", sorted(PAPER))
def test_default_start_finds_well_separated_blobs(blobs, name):
    assert _ari(blobs, name) > 0.99


@pytest.mark.parametrize("name", sorted(PAPER_MISSES))
def test_paper_start_misses_them(blobs, name):
    """The papers' starts fail on these blobs, so the test of the defaults above is not vacuous."""
    assert _ari(blobs, name, **PAPER[name]) == pytest.approx(PAPER_MISSES[name], abs=0.01)
