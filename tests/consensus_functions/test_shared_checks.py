"""The argument checks that several families share (cclust.validation): one rule, one message."""
import re

import numpy as np
import pytest

import cclust
from cclust import Ensemble
from cclust.errors import ValidationError
from cclust.validation import check_distinct_label_vectors, check_init_name, check_n_clusters

#: Four objects, two of them labelled alike by every partition: three distinct label vectors.
TWINS = np.array([[0, 0, 1], [0, 0, 1], [1, 1, 0], [1, 2, 0], [2, 1, 0]])[:4]

TOO_MANY = re.escape(
    "n_clusters=4 is larger than the number of distinct label vectors in the ensemble (3): objects that "
    "every partition labels alike cannot be told apart, so at most 3 clusters are meaningful; ask for "
    "n_clusters <= 3.")

#: Every method that refuses K above the number of distinct label vectors.
REFUSING = ["ivc", "ipvc", "ipc", "voting", "em-mixture", "bce", "nmf", "eac", "fc", "ecpcs-hc", "ecpcs-mc",
            "lwea", "lwgp", "weac", "gp-mgla", "lce", "pta", "ptgp", "tcut", "symdiff-median"]


@pytest.mark.parametrize("name", REFUSING)
def test_every_family_refuses_more_clusters_than_label_vectors_in_the_same_words(name):
    with pytest.raises(ValidationError, match=f"^{TOO_MANY}$"):
        cclust.consensus(name, TWINS, 4, random_state=0)


def test_check_n_clusters_counts_label_vectors_only_above_every_k_i():
    E = Ensemble(TWINS)
    assert check_n_clusters(3, E) == 3
    assert "distinct_rows" not in E._cache       # K <= max K_i: nothing to count
    with pytest.raises(ValidationError, match=TOO_MANY):
        check_n_clusters(4, E)
    with pytest.raises(ValidationError, match=r"n_clusters must be an int in the range \[2, 4\], got 1"):
        check_n_clusters(1, E)
    with pytest.raises(ValidationError, match="^k=5 is larger .* ask for k <= 2.$"):
        check_distinct_label_vectors(5, 2, "k")


@pytest.mark.parametrize("name", ["voting", "em-mixture"])
def test_methods_without_label_starts_refuse_an_array_init_by_name(name):
    """An array init used to reach a tuple membership test and fail with NumPy's 'truth value of
    an array is ambiguous'; these methods take only named starts."""
    with pytest.raises(ValidationError, match=r"^init must be one of \['k-means\+\+', 'partitions'\], got array"):
        cclust.consensus(name, TWINS, 2, init=np.array([0, 0, 1, 1]))


def test_check_init_name_lists_the_choices():
    assert check_init_name("a", ("a", "b")) == "a"
    with pytest.raises(ValidationError, match=r"^init must be one of \['a', 'b'\] or an array of labels, got 'c'.$"):
        check_init_name("c", ("a", "b"), or_labels=True)
    with pytest.raises(ValidationError, match=r"^init must be one of \['a', 'b'\], got 3.$"):
        check_init_name(3, ("a", "b"))
