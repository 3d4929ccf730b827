"""Multi-view ensembles (the multiview generator), their scores per view and the log-rank test."""
import numpy as np
import pytest

import cclust
from cclust.base import method_info
from cclust.errors import ValidationError
from cclust.metrics import ari
from cclust.multiview import logrank_test, multiview, multiview_scores, silhouette, view_of


def _blobs(n_per=30, k=3, seed=0):
    """Two views of the same planted clusters: view a in 4 features, view b in 3."""
    rng = np.random.default_rng(seed)
    truth = np.repeat(np.arange(k), n_per)
    a = rng.normal(size=(truth.size, 4)) + 5.0 * np.eye(k, 4)[truth]
    b = rng.normal(size=(truth.size, 3)) + 5.0 * np.eye(k, 3)[truth][:, ::-1]
    return truth, a, b


# -- the ensemble -------------------------------------------------------------------------------------

def test_views_side_by_side_with_their_provenance():
    truth, a, b = _blobs()
    E = cclust.generate("multiview", {"rna": a, "methylation": b}, 3, n_partitions=4, params={"k_range": (2, 5)},
                        random_state=0)
    assert isinstance(E, cclust.Ensemble) and E.shape == (90, 8)
    assert view_of(E) == ("rna",) * 4 + ("methylation",) * 4
    assert not E.has_missing and E.index is None
    for text, k in zip(E.provenance, E.n_clusters.tolist()):
        view, maker, k_text, seed_text = text.split()
        assert maker == "kmeans" and k_text == f"K={k}" and seed_text.startswith("random_state=")
        assert 2 <= k <= 5
    # the recorded random_state gives the view's partitions again
    seed = int(E.provenance[4].rsplit("=", 1)[1])
    again = cclust.generate("kmeans", b, 3, n_partitions=4, k_range=(2, 5), random_state=seed)
    np.testing.assert_array_equal(again.labels, E.labels[:, 4:])


def test_deterministic_and_independent_of_n_jobs():
    _, a, b = _blobs()
    run = [multiview([a, b], 3, n_partitions=5, random_state=7, n_jobs=jobs) for jobs in (1, 2)]
    assert run[0] == run[1]
    assert multiview([a, b], 3, n_partitions=5, random_state=8) != run[0]
    assert view_of(run[0]) == ("view0",) * 5 + ("view1",) * 5


def test_a_view_keeps_its_partitions_when_another_view_changes():
    _, a, b = _blobs()
    E1 = multiview({"a": a, "b": b}, 3, n_partitions=3, random_state=1)
    E2 = multiview({"a": a, "b": b}, 3, n_partitions=3, random_state=1, per_view={"b": {"n_partitions": 6}})
    np.testing.assert_array_equal(E1.labels[:, :3], E2.labels[:, :3])
    assert E2.shape == (90, 9)


def test_per_view_clusterer_partitions_and_parameters():
    _, a, b = _blobs()
    E = multiview({"a": a, "b": b}, 3, n_partitions=2, random_state=0,
                  per_view={"a": ("pam", {"k_range": (3, 4)}), "b": {"n_partitions": 3, "k_range": (2, 2)}})
    assert E.shape == (90, 5)
    assert [p.split()[1] for p in E.provenance] == ["pam", "pam", "kmeans", "kmeans", "kmeans"]
    assert set(E.n_clusters[:2].tolist()) <= {3, 4} and E.n_clusters[2:].tolist() == [2, 2, 2]


def test_a_view_may_run_a_generator_that_finds_k_itself():
    pytest.importorskip("leidenalg")
    _, a, b = _blobs()
    settings = {"a": {"clusterer": "leiden", "resolutions": (0.5, 1.0)}, "b": ("kmeans", {"k_range": (3, 3)})}
    E = multiview({"a": a, "b": b}, n_partitions=3, random_state=0, per_view=settings)
    assert [p.split()[1] for p in E.provenance] == ["leiden"] * 3 + ["kmeans"] * 3
    assert E.provenance[0].startswith("a: leiden resolution=0.5 seed=")      # the generator's own provenance kept
    assert E == multiview({"a": a, "b": b}, n_partitions=3, random_state=0, n_jobs=2, per_view=settings)


def test_anndata_views_in_a_mapping_read_their_layer_or_embedding():
    ad = pytest.importorskip("anndata")
    _, a, b = _blobs()
    rna = ad.AnnData(np.zeros((90, 4)), layers={"scaled": a})
    rna.obs_names = [f"c{i}" for i in range(90)]
    prot = ad.AnnData(np.zeros((60, 2)), obsm={"X_pca": b[30:]})
    prot.obs_names = [f"c{i}" for i in range(30, 90)]
    E = cclust.generate("multiview", {"rna": rna, "prot": prot}, 3, n_partitions=2, layer={"rna": "scaled"},
                        use_rep={"prot": "X_pca"}, random_state=0)
    assert list(E.index) == list(rna.obs_names) and (E.labels[:30, 2:] == -1).all()
    assert len(set(E.labels[:, 0].tolist())) > 1                   # clustered the layer, not the zeros of X
    with pytest.raises(ValidationError, match="layer='counts' is not a layer"):
        multiview({"rna": rna, "prot": prot}, 3, layer="counts")
    # one name applies to the AnnData views only; a mapping entry for an array view is refused
    E2 = multiview({"rna": rna, "plain": b}, 3, n_partitions=2, layer="scaled", obs_names={"plain": rna.obs_names},
                   random_state=0)
    assert E2.shape == (90, 4)
    with pytest.raises(ValidationError, match=r"views\['plain'\] is not one"):
        multiview({"rna": rna, "plain": b}, 3, layer={"plain": "scaled"}, obs_names={"plain": rna.obs_names})


def test_n_clusters_may_be_left_out_given_a_k_range():
    _, a, b = _blobs()
    E = multiview([a, b], n_partitions=3, params={"k_range": (2, 3)}, random_state=0)
    assert set(E.n_clusters.tolist()) <= {2, 3}
    with pytest.raises(ValidationError, match="n_clusters"):
        multiview([a, b], n_partitions=3, random_state=0)


def test_views_with_ids_align_on_the_union_in_order_of_first_appearance():
    pd = pytest.importorskip("pandas")
    _, a, b = _blobs(n_per=4)
    ids = [f"s{i}" for i in range(12)]
    rna = pd.DataFrame(a, index=ids)
    # methylation lacks s0 and s1, holds its objects in another order, and adds s12
    extra = np.vstack([b[2:][::-1], [[9.0, 9.0, 9.0]]])
    methylation = pd.DataFrame(extra, index=ids[2:][::-1] + ["s12"])
    E = cclust.generate("multiview", {"rna": rna, "methylation": methylation}, 2, n_partitions=2, random_state=0)
    assert list(E.index) == ids + ["s12"]
    labels = E.labels
    assert (labels[:2, 2:] == -1).all() and (labels[2:, 2:] >= 0).all()       # s0, s1: not in methylation
    assert (labels[12, :2] == -1).all() and (labels[:12, :2] >= 0).all()      # s12: not in rna
    # the methylation partitions are those of its rows, put back in the union's order
    alone = multiview(extra, 2, n_partitions=2, random_state=0)
    seed = int(E.provenance[2].rsplit("=", 1)[1])
    direct = cclust.generate("kmeans", extra, 2, n_partitions=2, random_state=seed).labels
    order = [ids.index(s) if s in ids else 12 for s in ids[2:][::-1] + ["s12"]]
    np.testing.assert_array_equal(labels[order, 2:], direct)
    assert alone.shape == (11, 2)


def test_obs_names_align_plain_arrays():
    _, a, b = _blobs(n_per=4)
    E = multiview({"x": a, "y": b[:8]}, 2, n_partitions=2, random_state=0,
                  obs_names={"x": list(range(12)), "y": list(range(4, 12))})
    assert E.index == tuple(range(12))
    assert (E.labels[:4, 2:] == -1).all() and (E.labels[4:, 2:] >= 0).all()


def test_rows_entirely_nan_are_absent_objects():
    _, a, b = _blobs()
    b = b.copy()
    b[[0, 5, 40]] = np.nan
    E = multiview({"a": a, "b": b}, 3, n_partitions=3, random_state=0)
    missing = np.flatnonzero((E.labels[:, 3:] == -1).all(axis=1))
    assert missing.tolist() == [0, 5, 40] and not (E.labels[:, :3] == -1).any()


def test_a_single_table_is_one_view_named_X():
    from cclust.datasets import load_iris

    X, _ = load_iris()
    E = cclust.generate("multiview", X, 3, n_partitions=3, random_state=0)
    assert E.shape == (150, 3) and view_of(E) == ("X",) * 3


def test_mudata_modalities_are_the_views_and_absent_observations_are_missing():
    ad = pytest.importorskip("anndata")
    md = pytest.importorskip("mudata")
    truth, a, b = _blobs(n_per=20)
    names = [f"cell{i}" for i in range(60)]
    rna = ad.AnnData(a, obs=None)
    rna.obs_names, rna.var_names = names, [f"gene{i}" for i in range(4)]
    held = np.arange(60) % 5 != 0                                   # every fifth cell has no protein panel
    prot = ad.AnnData(b[held])
    prot.obs_names, prot.var_names = [n for n, h in zip(names, held) if h], [f"protein{i}" for i in range(3)]
    prot.obsm["X_pca"] = b[held][:, :2].copy()
    with md.set_options(pull_on_update=False):
        mdata = md.MuData({"rna": rna, "prot": prot})
    before = {name: mod.X.copy() for name, mod in mdata.mod.items()}
    columns, obs_names = list(mdata.obs.columns), list(mdata.obs_names)
    E = cclust.generate("multiview", mdata, 3, n_partitions=4, random_state=0)
    assert E.shape == (60, 8) and list(E.index) == list(mdata.obs_names)
    for name, mod in mdata.mod.items():                    # only read
        np.testing.assert_array_equal(mod.X, before[name])
    assert list(mdata.obs.columns) == columns and list(mdata.obs_names) == obs_names and not mdata.uns
    order = [list(mdata.obs_names).index(n) for n in names]
    absent = np.asarray(order)[~held]
    assert (E.labels[absent][:, 4:] == -1).all()
    assert (np.delete(E.labels, absent, axis=0) >= 0).all()
    assert view_of(E) == ("rna",) * 4 + ("prot",) * 4
    result = cclust.consensus("kcc", E, 3, random_state=0)
    assert ari(result.labels, truth[order]) == 1.0
    # use_rep per view reads an obsm entry of that modality
    E2 = cclust.generate("multiview", mdata, 3, n_partitions=2, use_rep={"prot": "X_pca"}, random_state=0)
    assert E2.shape == (60, 4)
    with pytest.raises(ValidationError, match="use_rep"):
        cclust.generate("multiview", mdata, 3, n_partitions=2, use_rep={"atac": "X_pca"})
    # other generators still refuse a MuData, naming what to pass instead
    with pytest.raises(ValidationError, match="MuData"):
        cclust.generate("kmeans", mdata, 3)


def test_partial_views_nemo_style_missing_labels_recover_the_planted_clusters():
    """One view lacks 30% of the objects (Rappoport & Shamir 2019's partial data): those objects
    have the missing label in every partition of that view, and a consensus function that
    declares it handles missing labels puts every object, present or not, in its cluster."""
    rng = np.random.default_rng(5)
    truth = np.repeat(np.arange(3), 40)
    centres_a, centres_b = rng.normal(scale=4, size=(3, 6)), rng.normal(scale=4, size=(3, 5))
    a = centres_a[truth] + rng.normal(size=(120, 6))
    b = centres_b[truth] + rng.normal(size=(120, 5))
    absent = rng.choice(120, size=36, replace=False)
    b[absent] = np.nan
    E = multiview({"a": a, "b": b}, 3, n_partitions=20, params={"k_range": (3, 6)}, random_state=0)
    b_columns = np.flatnonzero(np.asarray(view_of(E)) == "b")
    assert (E.labels[absent][:, b_columns] == -1).all()
    assert (np.delete(E.labels, absent, axis=0) >= 0).all()
    handles = [name for name in ("kcc", "eac", "mcla") if method_info(cclust.get(name)).handles_missing]
    assert handles == ["kcc", "eac", "mcla"]
    for name in handles:
        labels = cclust.consensus(name, E, 3, random_state=0).labels
        assert ari(labels, truth) > 0.95, name
        assert ari(labels[absent], truth[absent]) > 0.9, name


# -- scores ---------------------------------------------------------------------------------------------

def test_silhouette_equals_scikit_learns_in_blocks():
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 3))
    labels = rng.integers(0, 4, 300)
    labels[7] = 9                                     # a singleton cluster scores 0
    from cclust.metrics import _criteria

    expected = metrics.silhouette_score(X, labels)
    assert silhouette(X, labels) == pytest.approx(expected, abs=1e-12)
    old = _criteria.SILHOUETTE_BLOCK_ELEMENTS
    try:
        _criteria.SILHOUETTE_BLOCK_ELEMENTS = 1000     # 3 rows per block
        assert silhouette(X, labels) == pytest.approx(expected, abs=1e-12)
    finally:
        _criteria.SILHOUETTE_BLOCK_ELEMENTS = old
    assert np.isnan(silhouette(X, np.zeros(300, dtype=int)))


def test_scores_per_view_use_the_objects_each_view_holds():
    truth, a, b = _blobs()
    noise = np.random.default_rng(9).normal(size=(90, 2))
    noise[:30] = np.nan                             # cluster 0 is absent from the noise view
    scores = multiview_scores(truth, {"a": a, "noise": noise})
    assert scores.views == ("a", "noise")
    assert scores.n_objects == {"a": 90, "noise": 60} and scores.n_clusters == {"a": 3, "noise": 2}
    assert scores.silhouette["a"] == pytest.approx(silhouette(a, truth))
    assert scores.silhouette["noise"] == pytest.approx(silhouette(noise[30:], truth[30:]))
    assert scores.silhouette["a"] > 0.5 > abs(scores.silhouette["noise"])
    assert scores.logrank is None
    assert "silhouette" in scores.summary() and "noise" in scores.summary()


def test_logrank_by_hand():
    # group 0: events at 1 and 2, censored at 3; group 1: events at 2 and 4.
    # t=1: 5 at risk (3 in group 0), 1 event: E0 = 3/5, V = 1 * 4/4 * 3/5 * 2/5 = 0.24
    # t=2: 4 at risk (2 and 2), 2 events: E0 = 1, V = 2 * 2/3 * 1/2 * 1/2 = 1/3
    # t=4: 1 at risk (group 1), 1 event: E0 = 0, V = 0
    # U0 = 2 - 1.6 = 0.4; statistic = 0.4^2 / (0.24 + 1/3) = 0.27907
    result = logrank_test([1, 2, 3, 2, 4], [1, 1, 0, 1, 1], [0, 0, 0, 1, 1])
    assert result.observed.tolist() == [2.0, 2.0]
    assert result.expected.tolist() == pytest.approx([1.6, 2.4])
    assert result.statistic == pytest.approx(0.16 / (0.24 + 1 / 3))
    assert result.df == 1 and result.n_objects.tolist() == [3, 2] and result.groups == (0, 1)
    from scipy.stats import chi2

    assert result.p_value == pytest.approx(chi2.sf(0.16 / (0.24 + 1 / 3), 1))
    # NaN times are objects without an outcome: left out
    same = logrank_test([1, 2, 3, np.nan, 2, 4], [1, 1, 0, 1, 1, 1], [0, 0, 0, 2, 1, 1])
    assert same.statistic == pytest.approx(result.statistic) and same.groups == (0, 1)


def test_logrank_equals_lifelines():
    statistics = pytest.importorskip("lifelines.statistics")
    rng = np.random.default_rng(11)
    for k in (2, 3, 5):
        groups = rng.integers(0, k, 150)
        time = np.round(rng.exponential(4.0 + 2.0 * groups), 0)   # rounded: many tied times
        event = rng.random(150) < 0.7
        ours = logrank_test(time, event, groups)
        theirs = statistics.multivariate_logrank_test(time, groups, event)
        assert ours.statistic == pytest.approx(theirs.test_statistic, rel=1e-10)
        assert ours.p_value == pytest.approx(theirs.p_value, rel=1e-8)
        assert ours.df == theirs.degrees_of_freedom == k - 1


def test_scores_against_survival():
    truth, a, b = _blobs()
    rng = np.random.default_rng(4)
    time = rng.exponential(np.array([2.0, 8.0, 30.0])[truth])
    event = rng.random(90) < 0.8
    time[:5] = np.nan                                       # no follow-up for five objects
    scores = multiview_scores(truth, [a, b], time=time, event=event)
    expected = logrank_test(time[5:], event[5:], truth[5:])
    assert scores.logrank.statistic == pytest.approx(expected.statistic)
    assert scores.logrank.df == 2 and scores.logrank.p_value < 1e-6
    assert "log-rank" in scores.summary()


def test_scores_against_a_categorical_outcome():
    truth, a, b = _blobs()
    outcome = np.where(truth == 2, "responder", "non-responder").astype(object)
    outcome[[0, 50]] = None                                 # unknown for two objects
    scores = multiview_scores(truth, [a, b], outcome=outcome)
    test = scores.outcome
    assert test.categories == ("non-responder", "responder")
    assert test.table.tolist() == [[29, 0], [29, 0], [0, 30]]
    # Pearson's chi-square by hand: sum (O - E)^2 / E with E = row total * column total / n
    table = test.table.astype(float)
    expected = table.sum(axis=1, keepdims=True) * table.sum(axis=0, keepdims=True) / table.sum()
    assert test.statistic == pytest.approx(((table - expected) ** 2 / expected).sum())
    assert test.df == 2 and test.p_value < 1e-12
    assert test.ari == pytest.approx(ari(truth[outcome != None], (truth == 2)[outcome != None]))  # noqa: E711
    assert "outcome (2 categories, 88 objects)" in scores.summary()
    integers = multiview_scores(truth, [a, b], outcome=(truth == 2).astype(int)).outcome
    assert integers.categories == (0, 1) and integers.table.tolist() == [[30, 0], [30, 0], [0, 30]]
    floats = np.where(truth == 2, 1.0, 0.0)
    floats[:3] = np.nan                                     # NaN: unknown
    assert multiview_scores(truth, [a, b], outcome=floats).outcome.table.tolist() == [[27, 0], [30, 0], [0, 30]]


def test_coca_recipe_runs_on_public_api():
    """Per-view k-means at several K, Monti's consensus of the matrix of clusters, scores."""
    rng = np.random.default_rng(0)
    truth = np.repeat([0, 1, 2], 30)
    centres = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 4.0]])
    rna = rng.normal(size=(90, 6))
    rna[:, :2] += centres[truth]
    methylation = rng.normal(size=(90, 4))
    methylation[:, 2:] += centres[truth][:, ::-1]
    views = {"rna": rna, "methylation": methylation}
    E = cclust.generate("multiview", views, n_partitions=10, params={"k_range": (2, 6)}, random_state=0)
    moc = E.one_hot().toarray()
    assert moc.shape == (90, int(E.n_clusters.sum())) and (moc.sum(axis=1) == 20).all()
    choice = cclust.select_k(moc, range(2, 7), null=None, n_resamples=50, random_state=0)
    assert choice.best_k == 3
    assert ari(choice.labels[3], truth) == 1.0
    scores = multiview_scores(choice.labels[3], views)
    assert min(scores.silhouette.values()) > 0.3


# -- bad input -------------------------------------------------------------------------------------------

def test_a_view_with_no_object_in_common_is_refused():
    pd = pytest.importorskip("pandas")
    _, a, b = _blobs(n_per=4)
    rna = pd.DataFrame(a, index=[f"s{i}" for i in range(12)])
    other = pd.DataFrame(b, index=[f"S{i}" for i in range(12)])       # IDs spelled differently
    with pytest.raises(ValidationError, match=r"views\['rna'\] and views\['other'\] have no object in common"):
        multiview({"rna": rna, "other": other}, 2, n_partitions=2)
    with pytest.raises(ValidationError, match=r"views\['rna'\] and views\['other'\] have no object in common"):
        multiview_scores(np.zeros(24, dtype=int), {"rna": rna, "other": other})
    third = pd.DataFrame(b[:5], index=[f"s{i}" for i in range(5)])
    with pytest.raises(ValidationError, match=r"^views\['other'\] has no object in common"):
        multiview({"rna": rna, "other": other, "third": third}, 2, n_partitions=2)


def test_views_of_different_lengths_without_ids_are_refused():
    _, a, b = _blobs()
    with pytest.raises(ValidationError, match="same number of rows.*obs_names"):
        multiview({"a": a, "b": b[:80]}, 3)
    with pytest.raises(ValidationError, match="views\\[1\\] carries no object IDs"):
        multiview([a, b], 3, obs_names={"view0": list(range(90))})


@pytest.mark.parametrize("option", ["per_view", "obs_names", "layer", "use_rep"])
def test_an_unknown_view_name_in_per_view_settings_is_refused(option):
    _, a, b = _blobs()
    value = {"per_view": {"n_partitions": 2}, "obs_names": {"rna": list(range(90))}, "layer": {"rna": "counts"},
             "use_rep": {"rna": "X_pca"}}
    bad = {"rna": value[option]} if option != "obs_names" else value[option]
    with pytest.raises(ValidationError, match=f"{option} names 'rna', which is not a view.*'a', 'b'"):
        multiview({"a": a, "b": b}, 3, **{option: bad})


def test_parameters_a_views_generator_does_not_take_are_refused():
    _, a, b = _blobs()
    with pytest.raises(ValidationError, match="params: resolutions=.* not a parameter of 'kmeans'"):
        multiview({"a": a, "b": b}, 3, params={"resolutions": (1.0,)})
    with pytest.raises(ValidationError, match=r"per_view\['b'\]: random_state=... is set by multiview itself"):
        multiview({"a": a, "b": b}, 3, per_view={"b": {"random_state": 3}})
    with pytest.raises(ValidationError, match="params: n_partitions=... is set by multiview itself"):
        multiview({"a": a, "b": b}, 3, params={"n_partitions": 4})
    with pytest.raises(ValidationError, match=r"per_view\['b'\]\['n_partitions'\]"):
        multiview({"a": a, "b": b}, 3, per_view={"b": {"n_partitions": 0}})
    with pytest.raises(ValidationError, match="per_view must be a mapping"):
        multiview({"a": a, "b": b}, 3, per_view=["b"])


def test_an_outcome_with_fewer_than_two_groups_is_refused():
    truth, a, b = _blobs()
    time = np.where(truth == 0, 5.0, np.nan)               # only cluster 0 has follow-up
    with pytest.raises(ValidationError, match="labels: the objects with an outcome .* fall in 1 group"):
        multiview_scores(truth, [a, b], time=time, event=np.ones(90))
    with pytest.raises(ValidationError, match="groups: the objects with an outcome"):
        logrank_test([1.0, 2.0], [1, 1], [0, 0])
    with pytest.raises(ValidationError, match="event marks no event"):
        logrank_test([1.0, 2.0], [0, 0], [0, 1])


def test_a_categorical_outcome_with_fewer_than_two_groups_is_refused():
    truth, a, b = _blobs()
    with pytest.raises(ValidationError, match="outcome has 1 category"):
        multiview_scores(truth, [a, b], outcome=["stage I"] * 90)
    with pytest.raises(ValidationError, match="outcome has 1 category"):
        multiview_scores(truth, [a, b], outcome=[1] * 45 + [None] * 45)
    with pytest.raises(ValidationError, match="labels: the objects with a known outcome fall in 1 cluster"):
        multiview_scores(truth, [a, b], outcome=[0, 1] * 15 + [np.nan] * 60)
    with pytest.raises(ValidationError, match=r"outcome must be 1-D with one category per object \(90\)"):
        multiview_scores(truth, [a, b], outcome=[0, 1] * 40)
    with pytest.raises(ValidationError, match="outcome mixes strings and numbers"):
        multiview_scores(truth, [a, b], outcome=[0, "1"] * 45)


@pytest.mark.parametrize("bad", ["time", "event"])
def test_time_or_event_of_the_wrong_length_is_refused(bad):
    truth, a, b = _blobs()
    survival = {"time": np.ones(90), "event": np.ones(90)}
    survival[bad] = survival[bad][:-1]
    with pytest.raises(ValidationError, match=f"{bad} must be 1-D with one value per object \\(90\\)"):
        multiview_scores(truth, [a, b], **survival)
    with pytest.raises(ValidationError, match=f"{bad} must be 1-D with one value per object \\(90\\)"):
        logrank_test(survival["time"], survival["event"], truth)


def test_bad_survival_values_and_labels_are_refused():
    truth, a, b = _blobs()
    with pytest.raises(ValidationError, match="event must hold 0/1"):
        logrank_test(np.ones(90), np.full(90, 2), truth)
    with pytest.raises(ValidationError, match="time must be finite and >= 0"):
        logrank_test(-np.ones(90), np.ones(90), truth)
    with pytest.raises(ValidationError, match="event must be given with time"):
        logrank_test(np.ones(90), None, truth)
    with pytest.raises(ValidationError, match="event is given without time"):
        multiview_scores(truth, [a, b], event=np.ones(90))
    with pytest.raises(ValidationError, match=r"labels must be 1-D with one label per object of the views \(90\)"):
        multiview_scores(truth[:-1], [a, b])


def test_other_bad_views_are_refused_naming_them():
    _, a, b = _blobs()
    partial = b.copy()
    partial[3, 1] = np.nan
    with pytest.raises(ValidationError, match=r"views\['b'\] contains NaN in row 3 \(column 1\)"):
        multiview({"a": a, "b": partial}, 3)
    with pytest.raises(ValidationError, match=r"views\['b'\] holds no object"):
        multiview({"a": a, "b": np.full_like(b, np.nan)}, 3)
    with pytest.raises(ValidationError, match="held by no view"):
        multiview({"a": np.where(np.arange(90)[:, None] == 4, np.nan, a), "b": np.where(
            np.arange(90)[:, None] == 4, np.nan, b)}, 3)
    with pytest.raises(ValidationError, match="views must hold at least one view"):
        multiview({}, 3)
    with pytest.raises(ValidationError, match="view's name must be a non-empty str without ':'"):
        multiview({"a:b": a}, 3)
    with pytest.raises(ValidationError, match="X"):
        multiview(None, 3)
    with pytest.raises(ValidationError, match=r"views\['b'\] \(90 objects, clusterer 'kmeans'\): k_range"):
        multiview({"a": a, "b": b}, 3, per_view={"b": {"k_range": (2, 200)}})
    with pytest.raises(ValidationError, match="provenance does not say which view"):
        view_of(cclust.Ensemble(np.zeros((4, 2), dtype=int)))


def test_the_callers_arrays_are_never_written_into():
    pd = pytest.importorskip("pandas")
    truth, a, b = _blobs()
    b = b.copy()
    b[:7] = np.nan
    frame = pd.DataFrame(a, index=[f"s{i}" for i in range(90)])
    other = b[10:]
    copies = [x.copy() for x in (a, b, other, truth)]
    frame_copy = frame.copy()
    ids = {"b": [f"s{i}" for i in range(10, 90)]}
    E = multiview({"a": frame, "b": other}, 3, n_partitions=3, obs_names=ids, random_state=0)
    multiview({"a": a, "b": b}, 3, n_partitions=3, random_state=0)
    time, event = np.linspace(1, 9, 90), np.ones(90, dtype=bool)
    time_copy, event_copy = time.copy(), event.copy()
    multiview_scores(truth, {"a": a, "b": b}, time=time, event=event)
    for before, after in zip(copies, (a, b, other, truth)):
        np.testing.assert_array_equal(before, after)
    pd.testing.assert_frame_equal(frame, frame_copy)
    np.testing.assert_array_equal(time, time_copy)
    np.testing.assert_array_equal(event, event_copy)
    assert ids == {"b": [f"s{i}" for i in range(10, 90)]} and E.shape == (90, 6)
