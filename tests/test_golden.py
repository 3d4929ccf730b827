"""Golden outputs: every registered generator and consensus function on fixed inputs.

The labels, objective and iteration count of every consensus function (plugins included) and
the label matrix of every generator, recorded in ``tests/data/golden_outputs.json``. A
restructuring or an optimisation must leave them equal; a deliberate change of a result (a new
default, a fixed bug) re-records them and says why in its commit::

    python tests/test_golden.py --record

Labels and iteration counts must match exactly; objectives to a relative 1e-6: the similarity
methods' objectives (wosp's cut of BLAS-computed similarities) move by about 2e-9 between one
and two BLAS threads, with the same labels.
"""
import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import pytest

import cclust
from cclust.datasets import load_iris, load_wine
from cclust.registry import method_info

GOLDEN = Path(__file__).parent / "data" / "golden_outputs.json"


#: The k-means generator's parameters that the consensus problems were recorded with (its
#: default until it became 5 Lloyd iterations): the consensus goldens check the consensus
#: functions, so their input ensembles stay fixed.
PROBLEM_KMEANS = {"max_iter": 100}

#: Generators pinned with explicit parameters as well as with their defaults: golden key ->
#: (registered name, parameters). The k-means generator's former default stays checked here.
PINNED_GENERATORS = {"kmeans(max_iter=100)": ("kmeans", PROBLEM_KMEANS)}


def _problems():
    """name -> (X, ensemble, n_clusters): a complete and an incomplete ensemble."""
    X, _ = load_iris()
    iris = cclust.generate("kmeans", X, 3, n_partitions=20, random_state=0, **PROBLEM_KMEANS)
    W, _ = load_wine()
    W = (W - W.mean(axis=0)) / W.std(axis=0)
    wine = cclust.generate("kmeans", W, 3, n_partitions=20, random_state=1, **PROBLEM_KMEANS)
    labels = wine.labels.copy()
    labels[np.random.default_rng(2).random(labels.shape) < 0.1] = -1
    labels[:, 0] = wine.labels[:, 0]  # every object labelled by one partition at least
    return {"iris": (X, iris, 3), "wine-missing": (W, cclust.Ensemble(labels), 3)}


def _digest(array):
    return hashlib.sha256(np.ascontiguousarray(array, dtype=np.int64).tobytes()).hexdigest()


def _consensus_names():
    rows = cclust.available(kind="consensus")
    seen, names = set(), []
    for name in sorted(rows):
        if rows[name].target in seen and rows[name].target != "<runtime>":
            continue  # an alias of a name already listed (hac = eac)
        seen.add(rows[name].target)
        names.append(name)
    return names


#: Exact methods with a size limit: recorded on the first objects of each problem only.
SIZE_LIMITED = {"symdiff-median": 30}

#: Methods whose default start changed after their golden outputs were recorded: they keep
#: being checked with R clue's start (one random start), which these parameters give exactly.
PARAMS = {name: {"init": "random", "n_init": 1} for name in ("se", "he", "sm", "hm", "gv1")}


def _run_consensus(name, problem):
    X, ensemble, k = _problems()[problem] if isinstance(problem, str) else problem
    fn = cclust.get(name, kind="consensus")
    info = method_info(fn)
    if ensemble.has_missing and not info.handles_missing:
        return None
    if name in SIZE_LIMITED:
        keep = np.arange(SIZE_LIMITED[name])
        X, ensemble = X[keep], ensemble.take(keep)
    kwargs = {"random_state": 0, **PARAMS.get(name, {})}
    if info.requires_X:
        kwargs["X"] = X
    result = fn(ensemble, k, **kwargs)
    return {"labels": np.asarray(result.labels).tolist(), "n_clusters": int(result.n_clusters),
            "objective": None if result.objective is None else float(result.objective),
            "n_iter": result.n_iter}


def _run_generator(name):
    X, _ = load_iris()
    name, params = PINNED_GENERATORS.get(name, (name, {}))
    ensemble = cclust.get(name, kind="generator")(X, 3, n_partitions=8, random_state=0, **params)
    return {"shape": list(ensemble.labels.shape), "labels_sha256": _digest(ensemble.labels)}


def _sklearn_version():
    try:
        import sklearn
    except ImportError:
        return None
    return sklearn.__version__


def _runs_scikit_learn(name):
    """Generators that call scikit-learn's estimators (cclust.clusterers): their labels are
    scikit-learn's, so their golden digests hold only for the scikit-learn they were recorded
    with (PAM is ours, but ``heterogeneous`` and ``estimator`` reach scikit-learn too)."""
    target = cclust.available(kind="generator")[PINNED_GENERATORS.get(name, (name,))[0]].target
    return (target.startswith("cclust.clusterers:") and name != "pam") or target == "cclust.soft_generators:gmm_proba"


def _graph_versions():
    """The leidenalg and igraph that the leiden and louvain generators call, or None."""
    try:
        import igraph
        import leidenalg
    except ImportError:
        return None
    return f"leidenalg {leidenalg.__version__}, igraph {igraph.__version__}"


def _runs_graph_libraries(name):
    """Generators whose partitions are leidenalg's and igraph's (cclust.graph_generators): their
    golden digests hold only for the versions they were recorded with."""
    target = cclust.available(kind="generator")[PINNED_GENERATORS.get(name, (name,))[0]].target
    return target.startswith("cclust.graph_generators:")


def record():
    problems = _problems()
    out = {"consensus": {}, "generator": {}, "scikit-learn": _sklearn_version(), "graph-libraries": _graph_versions()}
    for name in _consensus_names():
        for problem, spec in problems.items():
            got = _run_consensus(name, spec)
            if got is not None:
                out["consensus"][f"{name}/{problem}"] = got
    for name in sorted(cclust.available(kind="generator")) + sorted(PINNED_GENERATORS):
        out["generator"][name] = _run_generator(name)
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(f"recorded {len(out['consensus'])} consensus and {len(out['generator'])} generator outputs in {GOLDEN}")


def _golden():
    if not GOLDEN.exists():  # before the first recording: the completeness test says what to do
        return {"consensus": {}, "generator": {}}
    return json.loads(GOLDEN.read_text())


def test_every_registered_function_has_a_golden_output():
    golden = _golden()
    recorded = {key.split("/")[0] for key in golden["consensus"]}
    missing = sorted(set(_consensus_names()) - recorded)
    assert not missing, f"no golden output for {missing}: run `python tests/test_golden.py --record`"
    missing = sorted((set(cclust.available(kind="generator")) | set(PINNED_GENERATORS)) - set(golden["generator"]))
    assert not missing, f"no golden output for the generators {missing}: record them"


@pytest.fixture(scope="module")
def problems():
    return _problems()


@pytest.mark.parametrize("key", sorted(_golden()["consensus"]))
def test_consensus_output_is_unchanged(key, problems):
    name, problem = key.split("/")
    if name not in cclust.available(kind="consensus"):
        pytest.fail(f"{name!r} has a golden output but is no longer registered")
    expected = _golden()["consensus"][key]
    got = _run_consensus(name, problems[problem])
    assert got is not None, f"{key}: the method no longer accepts this input"
    np.testing.assert_array_equal(got["labels"], expected["labels"], err_msg=f"{key}: labels changed")
    assert got["n_clusters"] == expected["n_clusters"]
    assert got["n_iter"] == expected["n_iter"], f"{key}: n_iter {got['n_iter']} != {expected['n_iter']}"
    if expected["objective"] is None:
        assert got["objective"] is None
    else:
        assert got["objective"] == pytest.approx(expected["objective"], rel=1e-6, abs=1e-12)


@pytest.mark.parametrize("name", sorted(_golden()["generator"]))
def test_generator_output_is_unchanged(name):
    recorded = _golden().get("scikit-learn")
    if _runs_scikit_learn(name) and _sklearn_version() != recorded:
        pytest.skip(f"{name} runs scikit-learn {_sklearn_version()}; its golden output was recorded "
                    f"with scikit-learn {recorded}")
    recorded = _golden().get("graph-libraries")
    if _runs_graph_libraries(name) and _graph_versions() != recorded:
        pytest.skip(f"{name} runs {_graph_versions() or 'no leidenalg or igraph'}; its golden output was recorded "
                    f"with {recorded}")
    assert _run_generator(name) == _golden()["generator"][name], f"{name}: the generated ensemble changed"


if __name__ == "__main__":
    if sys.argv[1:] != ["--record"]:
        sys.exit("usage: python tests/test_golden.py --record")
    record()
