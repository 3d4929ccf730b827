"""ConsensusClustering: a scikit-learn compatible estimator around generate + consensus.

The estimator follows scikit-learn's conventions without importing scikit-learn, so it works
where scikit-learn is not installed and still passes ``sklearn.utils.estimator_checks`` where it
is:

* ``__init__`` stores its arguments unchanged and validates nothing (``clone`` rebuilds an
  estimator from ``get_params()`` and checks that every value is the very object it passed);
  every check happens in ``fit``.
* ``get_params``/``set_params`` read the parameter names from the ``__init__`` signature.
  ``set_params`` also accepts ``method_params__<key>`` and ``generator_params__<key>``: it
  builds a new dict with that key changed (the caller's dict is never written to), so
  ``GridSearchCV(param_grid={"method_params__utility": ["uc", "uh"]})`` works. ``get_params(
  deep=True)`` lists those nested keys too, as scikit-learn does for nested estimators.
* Fitted attributes end in ``_``; ``__sklearn_is_fitted__`` says whether ``fit`` ran.
* ``__sklearn_tags__`` imports scikit-learn, but only scikit-learn itself ever calls it.

The generate-then-fuse steps (validating X and the parameter dicts, seed derivation, calling a
method with the keywords it accepts) live in ``cclust._pipeline``, shared with
:mod:`cclust.selection` and the ``cclust`` command.
"""
from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from cclust._pipeline import (
    check_counted_partitions,
    object_index,
    RESERVED_GENERATOR,
    RESERVED_METHOD,
    call_method,
    check_name,
    check_params_dict,
    check_sampling_weights,
    child_seeds,
    generate_ensemble,
    validate_X,
)
from cclust.ensemble import EnsembleLike
from cclust.validation import RandomStateLike, check_distinct_rows, check_int, check_n_jobs
from cclust.errors import CclustError, ValidationError

__all__ = ["ConsensusClustering"]

#: partitions the estimator generates unless told otherwise
_DEFAULT_PARTITIONS = 100


class ConsensusClustering:
    """Consensus clustering as a scikit-learn clusterer: generate partitions, then fuse them.

    ``fit(X)`` generates ``n_partitions`` basic partitions of ``X`` with the registered
    generator ``generator`` and fuses them with the registered consensus function ``method``.
    ``fit(ensemble=E)`` fuses partitions you already have. A method that makes its own
    partitions of X (its metadata declares ``generates_ensemble``: ``usenc``, Huang et al.
    2020) is fed no generated ensemble: ``fit(X)`` runs it on X alone, as the paper does, and
    ``fit(X, ensemble=E)`` joins E to its own partitions. After ``fit(X)``, :meth:`predict`
    places new objects in the consensus partition. scikit-learn is not needed at run
    time; when it is installed the estimator works in ``Pipeline``, ``GridSearchCV`` and
    ``clone`` and passes ``sklearn.utils.estimator_checks``.

    Parameters
    ----------
    method : str, default="kcc"
        Name of a registered consensus function (``cclust.available(kind="consensus")``).
    n_clusters : int or None, default=8
        Number of consensus clusters, in ``[1, n_samples]`` (1 puts every object in one
        cluster without running anything). None only for methods that choose the number
        themselves (``addremadd``, ``ls-agglomerative``, ``best``, ...).
    generator : str or None, default="kmeans"
        Name of a registered partition generator (``cclust.available(kind="generator")``).
        Unused by ``fit(ensemble=...)`` and by methods that make their own partitions of X
        (``usenc``), for which it must stay at its default or be None; None generates
        nothing, which other methods refuse (they need partitions to fuse). When ``n_clusters`` is None the generator is asked
        for ``n_clusters=2`` and, if it takes ``k_range`` and none is given, ``k_range=(2,
        ceil(sqrt(n_samples)))`` so that the partitions vary in K.
        Above 20000 objects the default ``"kmeans"`` generator fits each partition's k-means
        on 10000 objects drawn at random and gives every other object the nearest of its
        centres (its default ``fit_rows="auto"``): at 100000 objects that cuts the
        time of ``fit`` about three times with the same ARI on the blobs of docs/benchmarks.md
        ("select_k's default at scale, and SC3s"). ``generator_params={"fit_rows": None}``
        fits every partition on every object, as before.
    n_partitions : int, default=100
        Number of basic partitions to generate; 0, like ``generator=None``, generates none.
        Not used by methods that make their own partitions: set their count through
        ``method_params`` (``{"n_partitions": 20}`` for usenc). With a heterogeneous generator whose
        ``generator_params["generators"]`` carry counts, pass their sum.
    method_params : dict or None, default=None
        Extra keyword arguments of the consensus function (e.g. ``{"utility": "uc"}`` for kcc).
    generator_params : dict or None, default=None
        Extra keyword arguments of the generator (e.g. ``{"k_range": (2, 10)}``).
    random_state : int, numpy.random.Generator, numpy.random.RandomState or None, default=None
        Seeds both the generator and the consensus function (two independent streams spawned
        from one ``numpy.random.SeedSequence``), so the same int gives the same labels on every
        fit, for any ``n_jobs``. A Generator or RandomState is drawn from once per fit.
    n_jobs : int or None, default=None
        Threads: passed as ``n_jobs`` to the generator and to the consensus function when it
        takes it (a third party's function that still says ``n_threads`` gets it under that
        name). None uses every core
        (:func:`cclust.validation.default_threads`), -1 every core whatever the environment says. Labels do not
        depend on it.
    verbose : int, default=0
        Progress bars (shown only on a terminal) in the generator and the consensus function,
        for those that accept ``verbose``.
    trim : int, bool or None, default=None
        diceR's trim (Chiu & Talhouk 2018): before fusing, score every algorithm of the
        ensemble (its ``provenance``) with :func:`cclust.evaluation.evaluate` and keep the
        partitions of the ``trim`` best-ranked algorithms (True: 5, diceR's default). Needs
        ``X`` and ``n_clusters``. None or False: no trimming.
    reweigh : bool, default=False
        diceR's reweigh: weight each (kept) algorithm's partitions by its aggregated rank
        (:func:`cclust.evaluation.reweigh`). Needs ``X`` and ``n_clusters``.
    subsample : float in (0, 1], default=1.0
        Fraction of the objects each basic partition clusters (ConsensusClusterPlus's
        ``pItem``; Monti et al. 2003): below 1, partition h is the generator's one partition of
        ``floor(subsample * n)`` objects drawn without replacement, the others missing (-1)
        from it, so the consensus method must handle missing labels (most do; those that do
        not refuse with a clear error). 1: no resampling, the generator makes all
        ``n_partitions`` partitions of X in one call.
    feature_subsample : float in (0, 1], default=1.0
        Fraction of the features each partition uses (``pFeature``), ``floor(feature_subsample
        * n_features)`` of them (which must be at least one), drawn without replacement per
        partition.
    item_weights : array-like of shape (n_samples,), default=None
        Sampling weights of the objects (ConsensusClusterPlus's ``weightsItem``), drawn exactly
        as :func:`cclust.select_k` draws them (R's ``sample(..., prob = item_weights)``):
        non-negative, finite, at least ``floor(subsample * n)`` positive; only the ratios
        matter. They act through ``subsample < 1``: with every object drawn they are checked
        and change nothing, as in ConsensusClusterPlus. ``fit(X, sample_weight=w)`` is the same,
        given per fit as scikit-learn passes per-sample weights (``Pipeline``, ``GridSearchCV``).
    feature_weights : array-like of shape (n_features,), default=None
        Sampling weights of the features (``weightsFeature``); they act through
        ``feature_subsample < 1``.
    missing_features : {"error", "mean"}, default="error"
        What ``fit`` does with NaN cells of X: refuse them, naming the first one's row and
        column (their labels for a DataFrame), or fill each with the mean of its column, as the
        command line's ``--missing-features mean`` does. Infinite values are always refused.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,), int64
        Consensus cluster of every object, ``0..n_clusters_-1``.
    n_clusters_ : int
        Number of clusters found (differs from ``n_clusters`` only for methods choosing it).
    ensemble_ : cclust.Ensemble or None
        The basic partitions that were fused; None when the method made its own from X
        (``usenc`` without ``fit(X, ensemble=...)``).
    result_ : cclust.ConsensusResult
        The consensus function's full result (objective, iterations, extras).
    evaluation_ : cclust.evaluation.EvaluationResult
        The per-algorithm evaluation, set only when ``trim`` or ``reweigh`` is used;
        ``ensemble_`` is then the trimmed/reweighed ensemble that was fused.
    n_features_in_ : int
        Number of features of ``X`` (0 when fitted from an ensemble alone).
    feature_names_in_ : ndarray of shape (``n_features_in_``,), object
        Column names of ``X``, set only when ``X`` is a DataFrame with string column names.
    index_ : pandas.Index
        The row labels of ``X``, set only when ``X`` is a pandas DataFrame (``labels_`` stays a
        NumPy array, as scikit-learn requires).
    labels_series_ : pandas.Series
        ``labels_`` indexed by ``index_`` (name ``"cluster"``), set with ``index_``:
        ``df.assign(cluster=model.labels_series_)`` lines up by label.

    Examples
    --------
    >>> from cclust import ConsensusClustering
    >>> from cclust.datasets import load_iris
    >>> X, y = load_iris()
    >>> model = ConsensusClustering("kcc", n_clusters=3, n_partitions=20, random_state=0)
    >>> labels = model.fit_predict(X)
    >>> labels.shape, model.n_clusters_, model.ensemble_.shape
    ((150,), 3, (150, 20))
    >>> model
    ConsensusClustering(n_clusters=3, n_partitions=20, random_state=0)
    """

    def __init__(self, method: str = "kcc", n_clusters: int | None = 8, generator: str | None = "kmeans",
                 n_partitions: int = _DEFAULT_PARTITIONS, method_params: Mapping[str, Any] | None = None,
                 generator_params: Mapping[str, Any] | None = None, random_state: RandomStateLike = None,
                 n_jobs: int | None = None, verbose: int = 0, trim: int | bool | None = None, reweigh: bool = False,
                 subsample: float = 1.0, feature_subsample: float = 1.0, item_weights: npt.ArrayLike | None = None,
                 feature_weights: npt.ArrayLike | None = None, missing_features: str = "error") -> None:
        self.method = method
        self.n_clusters = n_clusters
        self.generator = generator
        self.n_partitions = n_partitions
        self.method_params = method_params
        self.generator_params = generator_params
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.trim = trim
        self.reweigh = reweigh
        self.subsample = subsample
        self.feature_subsample = feature_subsample
        self.item_weights = item_weights
        self.missing_features = missing_features
        self.feature_weights = feature_weights

    # -- scikit-learn's parameter protocol --------------------------------------------------
    @classmethod
    def _get_param_names(cls):
        return [p.name for p in inspect.signature(cls.__init__).parameters.values()
                if p.name != "self" and p.kind is not inspect.Parameter.VAR_KEYWORD]

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """Parameters of this estimator, read from the ``__init__`` signature.

        Parameters
        ----------
        deep : bool, default=True
            Also list every key of ``method_params`` and ``generator_params`` as
            ``method_params__<key>`` / ``generator_params__<key>``.

        Returns
        -------
        dict
            Parameter name -> value (the stored objects themselves, not copies).

        Examples
        --------
        >>> ConsensusClustering(method_params={"utility": "uc"}).get_params()["method_params__utility"]
        'uc'
        """
        params = {name: getattr(self, name) for name in self._get_param_names()}
        if deep:
            for name in ("method_params", "generator_params"):
                value = params[name]
                if isinstance(value, Mapping):
                    for key, item in value.items():
                        params[f"{name}__{key}"] = item
        return params

    def set_params(self, **params: Any) -> ConsensusClustering:
        """Set parameters; ``method_params__key=v`` changes one key of ``method_params``.

        Nested keys build a new dict (the dict given earlier is not modified). Values are not
        validated here, only in :meth:`fit`, as scikit-learn requires.

        Returns
        -------
        self

        Examples
        --------
        >>> model = ConsensusClustering().set_params(n_clusters=3, method_params__utility="uc")
        >>> model.n_clusters, model.method_params
        (3, {'utility': 'uc'})
        """
        valid = self._get_param_names()
        nested: dict[str, dict[str, Any]] = {}
        for key, value in params.items():
            name, sep, sub = key.partition("__")
            if name not in valid or (sep and name not in ("method_params", "generator_params")) \
                    or (sep and not sub):
                raise ValidationError(
                    f"invalid parameter {key!r} for estimator {type(self).__name__}; valid "
                    f"parameters are {valid}, plus method_params__<key> and generator_params__<key>."
                )
            if sep:
                nested.setdefault(name, {})[sub] = value
            else:
                setattr(self, name, value)
        for name, items in nested.items():
            current = getattr(self, name)
            if current is None:
                current = {}
            if not isinstance(current, Mapping):
                raise ValidationError(
                    f"cannot set {name}__{next(iter(items))}: {name} must be a dict or None, got "
                    f"{type(current).__name__}."
                )
            setattr(self, name, {**current, **items})
        return self

    def __repr__(self):
        defaults = {p.name: p.default for p in inspect.signature(type(self).__init__).parameters.values()
                    if p.name != "self"}
        changed = []
        for name in self._get_param_names():
            value = getattr(self, name, None)
            default = defaults.get(name, inspect.Parameter.empty)
            if value is default or (type(value) is type(default) and repr(value) == repr(default)):
                continue
            changed.append(f"{name}={value!r}")
        return f"{type(self).__name__}({', '.join(changed)})"

    def __sklearn_is_fitted__(self):
        return hasattr(self, "labels_")

    def __sklearn_tags__(self):
        # Only scikit-learn calls this, so importing it here keeps it optional at run time.
        from sklearn.utils import InputTags, Tags, TargetTags

        return Tags(
            estimator_type="clusterer",
            target_tags=TargetTags(required=False),
            transformer_tags=None,
            regressor_tags=None,
            classifier_tags=None,
            input_tags=InputTags(allow_nan=self.missing_features == "mean", sparse=False, two_d_array=True),
            requires_fit=True,
            non_deterministic=False,
        )

    # -- fitting ----------------------------------------------------------------------------
    def fit(self, X: Any = None, y: Any = None, *, ensemble: EnsembleLike | None = None,
            sample_weight: npt.ArrayLike | None = None, layer: str | None = None, use_rep: str | None = None,
            key_added: str = "cclust") -> ConsensusClustering:
        """Generate basic partitions of ``X`` (or take ``ensemble``) and fuse them.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), AnnData, or None
            The data. May be None when ``ensemble`` is given, unless the method needs the
            features (``wosp``, ``wohb``, ``wokmeans``, ``gkcc``). An ``anndata.AnnData``
            (``pip install 'cclust[scverse]'``) gives its features (``X``, ``layer`` or
            ``use_rep``) and receives the results, as scanpy's clustering tools write theirs:
            the labels in ``X.obs[key_added]`` (categorical, categories ``"0".."K-1"``), each
            object's item consensus (Monti et al. 2003; with complete partitions its mean
            co-association with the other members of its cluster, with resampled ones the
            pooled ratio over them) in
            ``X.obs[key_added + "_item_consensus"]``, and the cluster consensus, objective and
            parameters in ``X.uns[key_added]``. Nothing else of it changes; a view
            (``adata[...]``) is refused, pass ``adata[...].copy()``.
        y : ignored
            Present for scikit-learn's API.
        ensemble : cclust.Ensemble or array-like of shape (n_samples, n_partitions), optional
            Ready basic partitions to fuse instead of generating them.
        sample_weight : array-like of shape (n_samples,), default=None
            The objects' sampling weights for this fit: ``item_weights`` given per fit (not with
            ``item_weights`` as well). As in scikit-learn's resampling ensembles, a weight
            changes how often an object is drawn into a resample, and a weight of 0 keeps it out
            of every resample (it is then missing from every partition, and its consensus label
            rests on the method alone). They act through ``subsample < 1``; with every object
            drawn they change nothing (so ``sample_weight=np.ones(n)`` is the same fit as None).
        layer : str, optional
            AnnData ``X`` only: cluster ``X.layers[layer]`` instead of ``X.X``.
        use_rep : str, optional
            AnnData ``X`` only: cluster ``X.obsm[use_rep]`` (e.g. ``"X_pca"``) instead of ``X.X``.
        key_added : str, default="cclust"
            AnnData ``X`` only: the ``obs`` and ``uns`` key the results are written under.

        Returns
        -------
        self

        Examples
        --------
        >>> import numpy as np
        >>> from cclust import ConsensusClustering, Ensemble
        >>> E = Ensemble(np.array([[0, 0, 1], [0, 0, 1], [1, 1, 0], [1, 2, 0]]))
        >>> ConsensusClustering("kcc", n_clusters=2, random_state=0).fit(ensemble=E).labels_.tolist()
        [0, 0, 1, 1]
        """
        from cclust.interop import _anndata

        if _anndata.is_anndata(X):
            return self._fit_anndata(X, ensemble, sample_weight, layer, use_rep, key_added)
        if X is not None:
            _anndata.check_array_options(X, "X", layer=layer is not None, use_rep=use_rep is not None,
                                         key_added=key_added != "cclust")
        elif layer is not None or use_rep is not None or key_added != "cclust":
            raise ValidationError("layer, use_rep and key_added are for an AnnData X; with fit(ensemble=...) alone "
                                  "drop them.")
        return self._fit(X, ensemble, sample_weight)

    def _fit_anndata(self, adata, ensemble, sample_weight, layer, use_rep, key_added):
        """fit on the features of an AnnData, then write the results into it (see :meth:`fit`)."""
        from cclust.interop import _anndata

        key = _anndata.check_key(key_added)
        _anndata.check_target(adata, "X", offers_copy=False)
        values, where = _anndata.features(adata, layer, use_rep, "X")
        features, _ = validate_X(values, where, missing_features=self.missing_features)
        self._fit(features, ensemble, sample_weight)
        stats = {
            "params": {**{name: value for name, value in self.get_params(deep=False).items()
                          if name not in ("item_weights", "feature_weights", "verbose", "n_jobs")},
                       "layer": layer, "use_rep": use_rep},
            "n_clusters": self.n_clusters_,
            "objective": self.result_.objective,
            "objective_name": self.result_.objective_name,
            "n_iter": self.result_.n_iter,
            "converged": self.result_.converged,
            "cluster_sizes": np.bincount(self.labels_, minlength=self.n_clusters_),
        }
        _anndata.write_clustering(adata, key, self.labels_, self.n_clusters_, stats, self.ensemble_)
        return self

    def _fit(self, X, ensemble, sample_weight):
        from cclust.ensemble import as_ensemble
        from cclust.registry import get
        from cclust.base import method_info
        from cclust.result import ConsensusResult

        fn = get(check_name(self.method, "method"), kind="consensus")
        info = method_info(fn)
        method_params = check_params_dict(self.method_params, "method_params", RESERVED_METHOD,
                                          "ConsensusClustering")
        generator_params = check_params_dict(self.generator_params, "generator_params",
                                             RESERVED_GENERATOR, "ConsensusClustering")
        verbose = check_int(self.verbose, "verbose", low=0)
        check_n_jobs(self.n_jobs, "n_jobs")  # validated here; passed on as given

        features = None
        feature_names = None
        if X is not None:
            features, feature_names = validate_X(X, missing_features=self.missing_features)
        if ensemble is not None:
            ensemble = as_ensemble(ensemble)
            if features is not None and features.shape[0] != ensemble.n_samples:
                raise ValidationError(
                    f"X and ensemble must describe the same objects: X has {features.shape[0]} rows, "
                    f"the ensemble {ensemble.n_samples}."
                )
        elif features is None:
            raise ValidationError(
                "fit needs data: pass X (n_samples, n_features), or ensemble= with ready partitions."
            )
        if info.requires_X and features is None:
            raise ValidationError(
                f"method {self.method!r} needs the original features as well as the partitions: pass "
                "X to fit(X, ensemble=...), or choose a method that uses the ensemble alone (e.g. kcc)."
            )
        n = features.shape[0] if features is not None else ensemble.n_samples

        if self.n_clusters is None and not info.chooses_n_clusters:
            raise ValidationError(
                f"n_clusters=None is only allowed for methods that choose the number of clusters "
                f"({', '.join(_choosing_methods())}); method {self.method!r} needs an int in [1, {n}]."
            )
        n_clusters = check_int(self.n_clusters, "n_clusters", low=1, high=n, allow_none=True)

        resampling = self._check_resampling(features, ensemble, n_clusters, sample_weight)
        generator_seed, method_seed = child_seeds(self.random_state, 2)
        if ensemble is None and n_clusters is not None and n_clusters >= 2:
            check_distinct_rows(features, n_clusters)
        n_keep, reweigh = _check_trim(self.trim, self.reweigh)
        if ensemble is None:
            n_partitions = check_int(self.n_partitions, "n_partitions", low=0)
            if info.generates_ensemble:
                # the method makes its own partitions of X: another generator's would only dilute them
                self._check_own_generation(generator_params, resampling, n_keep, reweigh)
            elif self.generator is None or n_partitions == 0:
                nothing = "generator=None" if self.generator is None else "n_partitions=0"
                raise ValidationError(
                    f"{nothing} generates no partitions, and method {self.method!r} fuses partitions without making "
                    "any: give a generator and n_partitions >= 1, "
                    "fit(ensemble=...) with partitions you have, or choose a method that makes its own from X "
                    f"({', '.join(_self_generating_methods())}).")
            elif resampling is None:
                check_counted_partitions(self.generator, generator_params, n_partitions, "ConsensusClustering")
                ensemble = generate_ensemble(
                    check_name(self.generator, "generator"), features, n_clusters, n_partitions,
                    generator_params, generator_seed, self.n_jobs, verbose)
            else:
                ensemble = _resampled_ensemble(check_name(self.generator, "generator"), features, n_clusters,
                                               n_partitions, generator_params, generator_seed, self.n_jobs,
                                               resampling)

        evaluation = None
        if n_keep is not None or reweigh:
            evaluation, ensemble = _trim_and_reweigh(features, ensemble, n_clusters, n_keep, reweigh,
                                                     method_seed, self.n_jobs)

        if n_clusters == 1:
            # One cluster is the only answer; consensus functions are not asked for it (most
            # partition into K >= 2 parts by construction).
            result = ConsensusResult.from_labels(
                np.zeros(n, dtype=np.int64), objective=float("nan"),
                objective_name="none (a single cluster)", method=self.method)
        else:
            result = call_method(fn, ensemble, n_clusters, method_params, method_seed,
                                 features, self.n_jobs, verbose)

        self.result_ = result
        self.ensemble_ = ensemble
        if evaluation is not None:
            self.evaluation_ = evaluation
        elif hasattr(self, "evaluation_"):
            del self.evaluation_
        self.labels_ = np.array(result.labels, dtype=np.int64)
        index = object_index(X) if X is not None else None
        if index is not None:
            import pandas as pd  # X is a pandas object, so pandas is there

            self.index_ = index
            self.labels_series_ = pd.Series(self.labels_, index=index, name="cluster")
        else:
            for name in ("index_", "labels_series_"):
                if hasattr(self, name):
                    delattr(self, name)
        self.n_clusters_ = int(result.n_clusters)
        self.n_features_in_ = int(features.shape[1]) if features is not None else 0
        # predict places new objects among the fitted ones: keep X, as our own copy when the
        # validated array is the caller's (a later change to theirs must not move our clusters)
        if features is not None and X is not None and np.may_share_memory(features, np.asarray(X)):
            features = features.copy()
        self._fit_X = features
        if feature_names is not None:
            self.feature_names_in_ = feature_names
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        return self

    def predict(self, X: Any, *, method: str | None = None, n_neighbors: int | None = None) -> npt.NDArray[np.int64]:
        """The consensus cluster of new objects, placed among the fitted ones (:func:`cclust.predict`).

        ``"centroid"`` (default) gives each row of X the cluster whose centroid (the mean of its
        fitted members) is nearest; ``"knn"`` the cluster most of its ``n_neighbors`` nearest
        fitted objects are in. :func:`cclust.predict` states the rules for ties and how the
        default was chosen. No supervised classifier is trained (as SC3 does, Kiselev et al.
        2017): scikit-learn is optional in cclust; train one on ``labels_`` if you want it.

        Parameters
        ----------
        X : array-like of shape (n_new, n_features)
            The new objects, in the columns the estimator was fitted on (by name when it was
            fitted on a DataFrame with string column names). With
            ``missing_features="mean"`` a NaN cell is filled with its column's mean over the
            fitted objects; otherwise NaN is refused.
        method : {"centroid", "knn"}, default=None
            None: ``"centroid"``.
        n_neighbors : int, default=None
            Voters of ``"knn"``, in ``[1, n_samples]``; None: 15 (or n_samples if fewer).

        Returns
        -------
        labels : ndarray of shape (n_new,), int64

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before :meth:`fit` (``cclust.errors.NotFittedError``, a ValueError and an
            AttributeError, when scikit-learn is not installed; the class raised is both).
        cclust.errors.ValidationError
            When the estimator was fitted on an ensemble alone (no features to place new
            objects by), or X has other columns than the fitted data.

        Examples
        --------
        >>> from cclust.datasets import load_iris
        >>> X, _ = load_iris()
        >>> model = ConsensusClustering(n_clusters=3, n_partitions=10, random_state=0).fit(X[::2])
        >>> bool((model.predict(X[::2]) == model.labels_).mean() > 0.9), model.predict(X[1::2]).shape
        (True, (75,))
        """
        from cclust import _assign

        if not self.__sklearn_is_fitted__():
            raise _not_fitted_error()(
                f"This {type(self).__name__} instance is not fitted yet: call fit(X) before predict.")
        fitted = getattr(self, "_fit_X", None)
        if fitted is None:
            raise ValidationError(
                f"{type(self).__name__} was fitted on an ensemble alone (fit(ensemble=...)), so it has no features to "
                "place new objects by: fit(X, ensemble=...) with the objects' features, or cclust.predict(labels, "
                "X, X_new) with them.")
        _check_feature_names(self, X)
        rows = np.asarray(X)
        if rows.ndim != 2:
            raise ValidationError(
                f"X must be 2-D (n_new, n_features), got an array of shape {rows.shape}. Reshape your data: "
                "X.reshape(1, -1) for a single object, X.reshape(-1, 1) for a single feature.")
        if rows.shape[1] != self.n_features_in_:
            raise ValidationError(
                f"X has {rows.shape[1]} features, but {type(self).__name__} is expecting {self.n_features_in_} "
                "features as input: give X the columns the estimator was fitted on, in the same order.")
        if self.missing_features == "mean" and rows.dtype.kind == "f" and np.isnan(rows).any():
            rows = np.where(np.isnan(rows), fitted.mean(axis=0), rows)
        rows = _assign.features(rows, "X")
        method = _assign.check_method(_assign.DEFAULT_METHOD if method is None else method)
        if method != "knn" and n_neighbors is not None:
            raise ValidationError(f"n_neighbors={n_neighbors!r} is the vote of method='knn'; method={method!r} "
                                  "uses no neighbours: drop n_neighbors or pass method='knn'.")
        k = _assign.check_neighbors(n_neighbors, fitted.shape[0])
        return _assign.assign(fitted, self.labels_, rows, method, k, check_n_jobs(self.n_jobs, "n_jobs"))

    def _check_own_generation(self, generator_params, resampling, n_keep, reweigh):
        """Refuse the settings of generation for a method that makes its own partitions of X."""
        owner = f"method {self.method!r} makes its own partitions of X"
        if self.generator not in (None, "kmeans") or generator_params:
            what = f"generator={self.generator!r}" if self.generator not in (None, "kmeans") else "generator_params"
            raise ValidationError(
                f"{owner}, so {what} would not be used: leave generator and generator_params at their defaults "
                f"(or generator=None). To fuse another generator's partitions with its own, pass them: "
                f"fit(X, ensemble=cclust.generate(name, X, n_clusters, ...)).")
        if resampling is not None:
            raise ValidationError(f"{owner}; subsample, feature_subsample and the sampling weights resample X for "
                                  "a generator: leave them at their defaults.")
        if n_keep is not None or reweigh:
            raise ValidationError(f"{owner} and returns none of them, so trim and reweigh have no ensemble to "
                                  "rank: leave them unset, or fit(X, ensemble=...) with partitions to trim.")

    def _check_resampling(self, features, ensemble, n_clusters, sample_weight):
        """None without resampling, else (subsample, feature_subsample, item weights, feature weights)."""
        from cclust import _monti
        from cclust.validation import check_float

        subsample = check_float(self.subsample, "subsample", low=0, high=1, low_open=True)
        feature_subsample = check_float(self.feature_subsample, "feature_subsample", low=0, high=1, low_open=True)
        item_weights = self.item_weights
        if sample_weight is not None:
            if item_weights is not None:
                raise ValidationError("sample_weight and item_weights are the same objects' sampling weights; give "
                                      "one of them (sample_weight per fit, or item_weights on the estimator).")
            item_weights, item_name = sample_weight, "sample_weight"
        else:
            item_name = "item_weights"
        n, d = features.shape if features is not None else (ensemble.n_samples, 0)
        if subsample == 1 and feature_subsample == 1:
            # every object and feature is drawn: the weights are checked but change nothing, as in
            # ConsensusClusterPlus and select_k (and sample_weight=ones is the same fit as None)
            checked = [(check_sampling_weights(item_weights, item_name, n, 0, "objects", "subsample"), item_name)]
            if features is not None:
                checked.append((check_sampling_weights(self.feature_weights, "feature_weights", d, 0, "features",
                                                        "feature_subsample"), "feature_weights"))
            for w, name in checked:
                if w is not None and not w.any():
                    raise ValidationError(f"{name} are all zero; at least one needs a positive weight.")
            return None
        if ensemble is not None:
            raise ValidationError("subsample, feature_subsample and the sampling weights resample X for the "
                                  "generator; with fit(ensemble=...) nothing is generated: leave them at their "
                                  "defaults, or fit(X) alone.")
        if self.generator == "heterogeneous":
            raise ValidationError("subsample/feature_subsample give each partition its own resample of X, one "
                                  "partition per generator call; the 'heterogeneous' generator makes several "
                                  "algorithms' partitions per call. Resample inside it instead (the 'estimator' "
                                  "presets take p_item and p_feature), or use one generator here.")
        size = _monti.sample_size(n, subsample)
        need = max(2, n_clusters or 2)
        if size < need:
            raise ValidationError(f"subsample={subsample} keeps {size} of the {n} objects, fewer than the {need} "
                                  "a partition needs; raise subsample.")
        weights = check_sampling_weights(item_weights, item_name, n, size, "objects", "subsample")
        d_size = _monti.sample_size(d, feature_subsample)
        if d_size < 1:
            raise ValidationError(f"feature_subsample={feature_subsample} keeps none of the {d} features; give at "
                                  f"least 1/{d}.")
        f_weights = check_sampling_weights(self.feature_weights, "feature_weights", d, d_size, "features",
                                            "feature_subsample")
        return subsample, feature_subsample, weights, f_weights

    def fit_predict(self, X: Any = None, y: Any = None, *, ensemble: EnsembleLike | None = None,
                    sample_weight: npt.ArrayLike | None = None, layer: str | None = None, use_rep: str | None = None,
                    key_added: str = "cclust") -> npt.NDArray[np.int64]:
        """Fit and return ``labels_`` (see :meth:`fit`; an AnnData ``X`` receives the results too).

        Returns
        -------
        labels : ndarray of shape (n_samples,), int64

        Examples
        --------
        >>> from cclust.datasets import load_iris
        >>> X, _ = load_iris()
        >>> labels = ConsensusClustering(n_clusters=3, n_partitions=10, random_state=1).fit_predict(X)
        >>> sorted(set(labels.tolist()))
        [0, 1, 2]
        """
        return self.fit(X, y, ensemble=ensemble, sample_weight=sample_weight, layer=layer, use_rep=use_rep,
                        key_added=key_added).labels_


def _resampled_ensemble(generator, X, n_clusters, n_partitions, params, seed, n_jobs, resampling):
    """Monti et al.'s resampling around any generator: partition h is the generator's one partition
    of resample h (objects and features drawn as select_k draws them), -1 for the objects not drawn.

    The draws come from their own streams of ``seed`` (objects, then features), the generator's
    seeds from a third, so the objects drawn do not depend on the feature settings.
    """
    from cclust import _monti
    from cclust.ensemble import Ensemble

    subsample, feature_subsample, item_weights, feature_weights = resampling
    n, d = X.shape
    items, features, calls = (np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(i,))) for i in range(3))
    samples = _monti.draw_resamples(n, n_partitions, subsample, items, item_weights)
    columns = _monti.draw_features(d, n_partitions, feature_subsample, features, feature_weights)
    seeds = calls.integers(0, 2**32, size=n_partitions, dtype=np.uint64).tolist()
    labels = np.full((n, n_partitions), -1, dtype=np.int64)
    provenance = []
    for h in range(n_partitions):
        rows = np.ascontiguousarray(_monti.resample_rows(X, samples[h], None if columns is None else columns[h]))
        part = generate_ensemble(generator, rows, n_clusters, 1, params, int(seeds[h]), n_jobs, 0)
        labels[samples[h], h] = part.labels[:, 0]
        provenance.append(part.provenance[0] if part.provenance else generator)
    return Ensemble(labels, provenance=provenance)


def _not_fitted_error():
    """cclust's NotFittedError, made a subclass of scikit-learn's too when scikit-learn is
    installed (its checks and users catch that one); imported only once predict needs it."""
    from cclust.errors import NotFittedError

    try:
        from sklearn.exceptions import NotFittedError as SklearnNotFitted
    except ImportError:
        return NotFittedError
    global _BOTH_NOT_FITTED
    if _BOTH_NOT_FITTED is None:
        _BOTH_NOT_FITTED = type("NotFittedError", (NotFittedError, SklearnNotFitted), {"__module__": "cclust.errors"})
    return _BOTH_NOT_FITTED


_BOTH_NOT_FITTED = None


def _check_feature_names(estimator, X):
    """Refuse a DataFrame whose string column names differ from those of the fit, in scikit-learn's
    words (its estimator checks match the first line and the list of names)."""
    fitted = getattr(estimator, "feature_names_in_", None)
    columns = getattr(X, "columns", None)
    if fitted is None or columns is None or not len(columns) or not all(isinstance(c, str) for c in columns):
        return
    given = [str(c) for c in columns]
    expected = [str(c) for c in fitted]
    if given == expected:
        return
    unseen = [c for c in given if c not in set(expected)]
    missing = [c for c in expected if c not in set(given)]
    lines = ["The feature names should match those that were passed during fit."]
    if unseen:
        lines.append("Feature names unseen at fit time:\n" + "".join(f"- {c}\n" for c in unseen[:5]).rstrip("\n"))
    if missing:
        lines.append("Feature names seen at fit time, yet now missing:\n"
                     + "".join(f"- {c}\n" for c in missing[:5]).rstrip("\n"))
    if not unseen and not missing:
        lines.append("Feature names must be in the same order as they were in fit.")
    raise ValidationError("\n".join(lines) + f"\nGive X the columns {type(estimator).__name__} was fitted on.")


def _check_trim(trim, reweigh):
    if not isinstance(reweigh, (bool, np.bool_)):
        raise ValidationError(f"reweigh must be True or False, got {reweigh!r}.")
    if trim is None or trim is False:
        return None, bool(reweigh)
    if trim is True:
        return 5, bool(reweigh)
    return check_int(trim, "trim", low=1), bool(reweigh)


def _trim_and_reweigh(features, ensemble, n_clusters, n_keep, reweigh, seed, n_jobs):
    from cclust import evaluation as ev

    what = "trim" if n_keep is not None else "reweigh"
    if features is None:
        raise ValidationError(f"{what} scores each algorithm on the data (Chiu & Talhouk 2018): pass X to "
                              "fit(X, ensemble=...) as well.")
    if n_clusters is None or n_clusters < 2:
        raise ValidationError(f"{what} needs n_clusters >= 2 (each algorithm is scored at K = n_clusters), "
                              f"got n_clusters={n_clusters!r}.")
    evaluation = ev.evaluate(features, ensemble, n_clusters, random_state=seed, n_jobs=n_jobs)
    if n_keep is not None:
        ensemble = ev.trim(ensemble, evaluation, n_keep)
    if reweigh:
        ensemble = ev.reweigh(ensemble, evaluation)
    return evaluation, ensemble


def _self_generating_methods():
    """Registered consensus functions that declare ``generates_ensemble`` (imports each one)."""
    from cclust.base import method_info
    from cclust.registry import available, get

    names = []
    for name in available(kind="consensus"):
        try:
            if method_info(get(name, kind="consensus")).generates_ensemble:
                names.append(name)
        except Exception:  # a broken plugin is reported when its own name is asked for
            continue
    return names or ["none registered"]


def _choosing_methods():
    from cclust.registry import available, get
    from cclust.base import method_info

    names = []
    for name in available(kind="consensus"):
        try:
            if method_info(get(name)).chooses_n_clusters:
                names.append(name)
        except CclustError:  # a broken plugin must not hide the message being built
            pass
    return names
