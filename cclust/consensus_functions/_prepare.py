"""What several families check and build before they fuse: complete ensembles and their
microclusters (objects that every partition labels alike), and the partition weights, which
are the ensemble's own.

WEAC and GP-MGLA (Huang, Lai & Wang 2015) and LCE (Iam-On et al. 2011) compare the partitions
of a complete ensemble and work on its microclusters; the transfer cut they may end with needs
as many eigenvectors as clusters. No family is imported here.
"""
import functools

import numpy as np

from cclust.ensemble import as_ensemble
from cclust.errors import ValidationError
from cclust.validation import check_n_clusters, warn_deprecated

#: n x n matrices (the weighted co-association, the MGLA graph, LCE's similarities) go into
#: ``extras`` only up to this n.
EXTRAS_MAX_SAMPLES = 1000


def complete_ensemble(ensemble, method, alternative="lwea, lwgp or kcc, which handle missing labels"):
    """The Ensemble of ``ensemble``, refused unless it is complete and has something to fuse:
    at least two partitions, one of them with two clusters or more."""
    E = as_ensemble(ensemble)
    if E.has_missing:
        raise ValidationError(
            f"ensemble: {method} needs every object labelled by every partition, but the ensemble has "
            f"missing labels (-1); drop the incomplete partitions or objects, or use {alternative}.")
    if E.n_partitions < 2:
        raise ValidationError(
            f"ensemble: {method} compares partitions with each other and needs at least two, got "
            f"{E.n_partitions}; generate more partitions.")
    if (E.n_clusters <= 1).all():
        raise ValidationError(
            "ensemble: every partition puts all objects in one cluster, so there is nothing to fuse; "
            "generate partitions with at least two clusters.")
    return E


def complete_microclusters(ensemble, n_clusters, method, alternative="lwea, lwgp or kcc, which handle missing labels"):
    """What WEAC, GP-MGLA and LCE start from: the checked input Ensemble, its canonical form
    (clusters numbered by first appearance, partitions sorted), the input column of each canonical
    partition, the checked n_clusters and the groups of identical label rows ``(first, inverse,
    counts)`` of the canonical ensemble (one group per object when all rows differ)."""
    E0 = complete_ensemble(ensemble, method, alternative)
    E, columns = E0.canonical(return_columns=True)
    n_clusters = check_n_clusters(n_clusters, E)
    groups = E.distinct_rows()
    if groups is None:
        n = E.n_samples
        groups = (np.arange(n), np.arange(n), np.ones(n, dtype=np.int64))
    return E0, E, columns, n_clusters, groups


def check_eigenvectors(n_clusters, E, hint):
    """The transfer cut needs K eigenvectors of the cluster graph: K <= sum K_i."""
    n_c = int(E.offsets[-1])
    if n_clusters > n_c:
        raise ValidationError(
            f"n_clusters={n_clusters} is larger than the number of clusters in the ensemble ({n_c}): the "
            f"transfer cut needs as many eigenvectors of the cluster graph; ask for fewer clusters{hint}.")
    return n_c


def weights_on_the_ensemble(fn):
    """Decorate a consensus function that took the partition weights as ``weights=`` beside its
    ensemble. Partition weights are the ensemble's (``cclust.Ensemble(labels, weights=w)`` or
    ``ensemble.with_weights(w)``, a SoftEnsemble's or a DaskEnsemble's alike), which every method
    reads; for one release ``fn(ensemble, ..., weights=w)`` still runs, as
    ``fn(ensemble.with_weights(w), ...)``, with a FutureWarning naming the caller's line."""
    name = getattr(fn, "__name__", "the function")

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if "weights" in kwargs:
            weights = kwargs.pop("weights")
            warn_deprecated(
                f"{name}: weights= is deprecated and will be removed in the next release; partition weights "
                f"belong to the ensemble: pass cclust.Ensemble(labels, weights=w) or ensemble.with_weights(w) "
                f"instead (the same result).")
            if weights is not None:
                if args:
                    args = (_with_weights(args[0], weights), *args[1:])
                elif "ensemble" in kwargs:
                    kwargs["ensemble"] = _with_weights(kwargs["ensemble"], weights)
        return fn(*args, **kwargs)

    return wrapper


def _with_weights(ensemble, weights):
    if hasattr(ensemble, "with_weights"):      # an Ensemble, a SoftEnsemble or a DaskEnsemble
        return ensemble.with_weights(weights)
    return as_ensemble(ensemble).with_weights(weights)
