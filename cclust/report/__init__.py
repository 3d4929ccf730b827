"""A one-file HTML report of a consensus clustering, and the manifest that replays it.

:func:`build_report` chooses K with :func:`cclust.select_k` (with its reference null), generates
one ensemble at that K, fuses it with several consensus methods, ranks each cluster's markers,
and returns a :class:`Report`. ``Report.to_html(path)`` writes one self-contained page (inline
CSS, figures as embedded PNG, no script, font or image loaded from anywhere) with the data
summary, the ensemble's diversity, the choice of K with its reference null, per-cluster
stability, the consensus heatmap, item consensus, the method comparison, markers and the
reproducibility manifest. The layout follows cola's ``cola_report`` (Gu, Schlesner & Hübschmann
2021).

The manifest (``Report.manifest``, embedded in the page, ``Report.write_manifest(path)`` for a
``.json`` file) records the versions of cclust, Python and its dependencies, every parameter,
the seed, the SHA-256 of the input and of every labelling. :func:`replay` (``cclust run
--from-manifest``) checks the input against it, runs the same work and says whether the labels
are identical.

Choices
-------
* The report, not the :class:`~cclust.selection.SelectKResult`, has ``to_html``: the page needs
  more than select_k measures (an ensemble, the method comparison, markers), and a replay needs
  the parameters of all of it.
* Above 20000 objects select_k runs on a geometric sketch of 2000 objects (Hie et al. 2019) and
  labels the others from it, unless ``select_k_params`` names ``sketch`` (None for every
  object), and the ensemble has 20 basic partitions instead of 50 unless ``n_partitions`` is
  given; the consensus heatmap draws at most 1000 objects (a stratified subsample), and the
  page says both.
* When select_k answers K = 1 (no evidence of cluster structure) the page says so plainly; the
  sections below it show the smallest K above 1 tried, marked as for inspection only.
* ``n_jobs`` and ``verbose`` change neither labels nor figures, so a replay does not need them.
"""
from __future__ import annotations

import dataclasses
import datetime
import os
import secrets
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from cclust.errors import ValidationError
from cclust.report._build import DEFAULT_METHODS, compute, resolve_parameters
from cclust.report._manifest import (
    FORMAT,
    FORMAT_VERSION,
    array_sha256,
    check_data,
    check_manifest,
    labels_sha256,
    read_manifest,
    to_json,
    versions,
)

if TYPE_CHECKING:
    from cclust.selection import SelectKResult

__all__ = ["DEFAULT_METHODS", "FORMAT", "FORMAT_VERSION", "Replay", "Report", "build_report", "read_manifest",
           "replay"]


def _features(data, layer, use_rep):
    """(X float64, feature names or None, description) of an array, DataFrame or AnnData."""
    from cclust._pipeline import validate_X
    from cclust.interop import _anndata

    _anndata.refuse_container(data, "data")
    if _anndata.is_anndata(data):
        values, where = _anndata.features(data, layer=layer, use_rep=use_rep, name="data")
        names = [str(v) for v in data.var_names] if use_rep in (None, "X") else None
        X, _ = validate_X(values, "data")
        return X, names, f"AnnData {where}"
    if layer is not None or use_rep is not None:
        raise ValidationError("layer and use_rep name the features of an AnnData; data is "
                              f"{type(data).__name__}: drop them.")
    X, columns = validate_X(data, "data")
    return X, (None if columns is None else [str(c) for c in columns]), f"an array of shape {X.shape[0]} x {X.shape[1]}"


@dataclasses.dataclass(frozen=True, eq=False)
class Report:
    """What :func:`build_report` computed, ready to write as one HTML page.

    Attributes
    ----------
    select : SelectKResult
        The choice of K (:func:`cclust.select_k`).
    k : int
        The K of the sections below the choice: ``select.best_k``, or the smallest K above 1
        tried when the choice is K = 1.
    labels : dict
        {name: int64 labels}: ``"select_k K=<best K>"`` (the chosen labels) and one entry per
        consensus method that ran.
    methods : list of dict
        The comparison rows (method, n_clusters, agreement, ari_chosen, ari_true, seconds, note).
    markers : dict of lists or None
        :func:`cclust.markers` of the chosen labels, every feature in every cluster (the page
        shows the ``n_top_markers`` best of each); None for a single cluster.
    diversity : dict
        Mean and standard deviation of the NMI between pairs of basic partitions.
    manifest : dict
        The reproducibility manifest (see the module docstring).
    """

    select: SelectKResult
    k: int
    labels: dict
    methods: list
    markers: object
    diversity: dict
    manifest: dict
    _parts: dict | None = dataclasses.field(repr=False, default=None)
    _info: dict | None = dataclasses.field(repr=False, default=None)
    _feature_names: list | None = dataclasses.field(repr=False, default=None)

    @property
    def labels_(self) -> npt.NDArray[np.int64]:
        """The chosen labels: select_k's at its recommended K (int64)."""
        return self.labels[f"select_k K={self.select.best_k}"]

    def to_html(self, path: str | os.PathLike[str] | None = None) -> str | os.PathLike[str]:
        """The report as one self-contained HTML page.

        Parameters
        ----------
        path : str or os.PathLike, optional
            Write the page there (through a temporary file in the same folder, renamed when
            complete, so a failure never leaves half a page under the name) and return the path;
            None: return the page as a string.
        """
        from cclust.report._html import render

        if path is not None:
            _check_target(path, "path")  # before the page is rendered, which takes seconds
        page = render(self._parts, self.manifest, self._info, self._feature_names)
        if path is None:
            return page
        _write_text(path, page, "path")
        return path

    def write_manifest(self, path: str | os.PathLike[str]) -> str | os.PathLike[str]:
        """Write :attr:`manifest` as a ``.json`` file (``cclust run --from-manifest FILE`` reads it)."""
        _write_text(path, to_json(self.manifest), "path")
        return path

    def __repr__(self) -> str:
        return (f"Report(best_k={self.select.best_k}, k={self.k}, methods={[r['method'] for r in self.methods]}, "
                f"objects={len(self.labels_)})")


def _check_target(path, name):
    """The folder a file is to be written in (ValidationError naming ``name`` if ``path`` is a
    directory or its folder does not exist)."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise ValidationError(f"{name} {path} is a directory; give a file name.")
    if not os.path.isdir(folder):
        raise ValidationError(f"{name} {path}: the folder {folder} does not exist.")
    return folder


def _write_text(path, text, name):
    path = os.fspath(path)
    folder = _check_target(path, name)
    temporary = os.path.join(folder, f".{os.path.basename(path)}.{os.getpid()}-{secrets.token_hex(6)}.part")
    try:
        # mode 0666 less the umask, as any new file; O_EXCL: never open someone else's file
        handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as exc:
        raise ValidationError(f"{name} {path}: cannot write in {folder} ({exc.strerror or exc}); choose a folder "
                              "you can write to.") from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, path)
    except BaseException as exc:
        if os.path.exists(temporary):
            os.unlink(temporary)
        if isinstance(exc, OSError):
            raise ValidationError(f"{name} {path}: cannot write it ({exc.strerror or exc}).") from None
        raise


def build_report(data: Any, k_range: tuple[int, int] = (2, 6), *, methods: Sequence[str] | None = None,
                 generator: str = "kmeans", n_partitions: int | None = None, standardize: bool = False,
                 n_top_markers: int = 5, select_k_params: dict[str, Any] | None = None, layer: str | None = None,
                 use_rep: str | None = None, y: npt.ArrayLike | None = None, random_state: int = 0,
                 n_jobs: int | None = None, verbose: int = 0, provenance: dict[str, Any] | None = None) -> Report:
    """Choose K, fuse an ensemble with several methods, rank markers: a :class:`Report`.

    Parameters
    ----------
    data : array-like of shape (n_samples, n_features), DataFrame or AnnData
        The features (only read; an AnnData is not written into).
    k_range : (int, int), default=(2, 6)
        The inclusive range of K given to :func:`cclust.select_k` (LOW may be 1).
    methods : list of str, optional
        Consensus methods compared at the chosen K; default :data:`DEFAULT_METHODS` (kcc, mcla,
        hbgf: none of them builds an n x n matrix).
    generator : str, default="kmeans"
        The generator of the ensemble the methods fuse.
    n_partitions : int, optional
        Basic partitions of the ensemble; default 50, 20 above 20000 objects.
    standardize : bool, default=False
        z-score every feature first.
    n_top_markers : int, default=5
        Markers shown per cluster (:func:`cclust.markers`, Wilcoxon).
    select_k_params : dict, optional
        More keywords of :func:`cclust.select_k` (``null``, ``n_resamples``, ``n_references``,
        ``criterion``, ``matrix``, ``sketch``, ...; JSON values only, so that the manifest holds
        them).
    layer, use_rep : str, optional
        AnnData ``data`` only: the features are ``data.layers[layer]`` or ``data.obsm[use_rep]``.
    y : array-like of shape (n_samples,), optional
        True classes: only scored against (ARI), never used to choose.
    random_state : int, default=0
        The one seed of the whole report; recorded in the manifest.
    n_jobs : int, optional
        Threads (the labels do not depend on it).
    verbose : int, default=0
        A progress bar over the steps, and select_k's over the K (on a terminal only).
    provenance : dict, optional
        What the caller knows of where ``data`` came from, recorded under the manifest's
        ``inputs`` (the command line gives the file, its SHA-256 and the reading options) and,
        under the key ``command``, the command line itself.

    Returns
    -------
    Report

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(c, 0.5, (30, 2)) for c in ((0, 0), (6, 0), (0, 6))])
    >>> report = build_report(X, (2, 4), methods=["kcc"], n_partitions=10,
    ...                       select_k_params={"n_resamples": 5, "n_references": 3})
    >>> report.select.best_k, report.manifest["parameters"]["random_state"]
    (3, 0)
    >>> page = report.to_html()
    >>> page.startswith("<!DOCTYPE html>"), "http" in page
    (True, False)
    """
    X, names, description = _features(data, layer, use_rep)
    n = X.shape[0]
    if y is not None:
        y = np.asarray(y)
        if y.shape != (n,):
            raise ValidationError(f"y must have one true class per object ({n}), got shape {y.shape}.")
    params = resolve_parameters(n, k_range, methods=methods, generator=generator, n_partitions=n_partitions,
                                standardize=standardize, n_top_markers=n_top_markers, random_state=random_state,
                                select_k_params=select_k_params)
    parts = compute(X, params, y=y, feature_names=names, n_jobs=n_jobs, verbose=verbose)
    provenance = dict(provenance or {})
    command = provenance.pop("command", None)
    inputs = {"description": provenance.pop("description", description), "data_sha256": array_sha256(X),
              "shape": list(X.shape), "dtype": "float64", "layer": layer, "use_rep": use_rep, **provenance}
    manifest = {
        "format": FORMAT, "format_version": FORMAT_VERSION,
        "created": datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat(),
        "versions": versions(), "command": command,
        "call": "cclust report" if command else "cclust.report.build_report",
        "inputs": inputs, "parameters": params,
        "results": {"best_k": int(parts["select"].best_k), "k_shown": parts["k"],
                    "labels_sha256": {name: labels_sha256(v) for name, v in parts["labels"].items()}},
    }
    info = {"description": inputs["description"],
            "classes": int(np.unique(y).shape[0]) if y is not None else None}
    return Report(select=parts["select"], k=parts["k"], labels=parts["labels"], methods=parts["methods"],
                  markers=parts["markers"], diversity=parts["diversity"], manifest=manifest, _parts=parts,
                  _info=info, _feature_names=names)


@dataclasses.dataclass(frozen=True)
class Replay:
    """What :func:`replay` found.

    Attributes
    ----------
    labels : dict
        {name: int64 labels} of the replayed run, named as in the manifest.
    best_k : int
    identical : bool
        Whether every labelling has the SHA-256 the manifest records.
    differing : tuple of str
        The labellings whose digest differs (empty when ``identical``).
    """

    labels: dict
    best_k: int
    identical: bool
    differing: tuple


def replay(manifest: dict[str, Any] | str | os.PathLike[str], data: Any, *, n_jobs: int | None = None,
           verbose: int = 0) -> Replay:
    """Run again what a manifest records, on ``data``, and compare the labels.

    Parameters
    ----------
    manifest : dict, str or os.PathLike
        The manifest, its ``.json`` file, or the HTML report holding it.
    data : array-like, DataFrame or AnnData
        The features: an AnnData's ``X``, layer or obsm entry as the manifest records, or those
        features as an array. Refused, naming both digests, when their SHA-256 is not the
        recorded one.

    Returns
    -------
    Replay
    """
    if not isinstance(manifest, dict):
        manifest = read_manifest(manifest)
    else:
        check_manifest(manifest)
    from cclust.interop._anndata import is_anndata

    inputs = manifest["inputs"]
    # an AnnData gives the features the manifest names; an array is taken as those features
    where = (inputs.get("layer"), inputs.get("use_rep")) if is_anndata(data) else (None, None)
    X, names, _ = _features(data, *where)
    check_data(manifest, X)
    recorded = manifest["parameters"]
    params = resolve_parameters(X.shape[0], recorded["k_range"], methods=recorded["methods"],
                                generator=recorded["generator"], n_partitions=recorded["n_partitions"],
                                standardize=recorded["standardize"], n_top_markers=recorded["n_top_markers"],
                                random_state=recorded["random_state"], select_k_params=recorded["select_k"])
    parts = compute(X, params, feature_names=names, n_jobs=n_jobs, verbose=verbose, markers=False)
    expected = manifest["results"].get("labels_sha256") or {}
    differing = tuple(name for name in expected
                      if name not in parts["labels"] or labels_sha256(parts["labels"][name]) != expected[name])
    return Replay(labels=parts["labels"], best_k=int(parts["select"].best_k), identical=not differing,
                  differing=differing)
