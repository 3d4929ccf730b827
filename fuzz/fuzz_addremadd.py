"""Fuzz the least-squares core: cclust._ext._addremadd and addremadd/ls-agglomerative.

Run (from the repository root, extensions built in place)::

    python fuzz/fuzz_addremadd.py -max_total_time=600 -rss_limit_mb=2048
"""
import _harness  # noqa: F401 - puts the checkout first on sys.path
import atheris
import numpy as np

with atheris.instrument_imports(include=["cclust"]):
    import cclust
    import cclust.consensus_functions.least_squares
    from cclust._ext import _addremadd

from _harness import call_public, floats, label_matrix, main


def test_one_input(data):
    fdp = atheris.FuzzedDataProvider(data)
    mode = fdp.ConsumeIntInRange(0, 3)
    n = fdp.ConsumeIntInRange(1, 20)
    if mode < 3:
        values = floats(fdp, n * n).reshape(n, n)
        symmetric = (values + values.T) / 2 if fdp.ConsumeBool() else values
        try:
            if mode == 0:
                seed = fdp.ConsumeIntInRange(0, n - 1)
                max_trace = fdp.ConsumeIntInRange(0, 10)
                member, _, _, _, trace = _addremadd.cluster(
                    symmetric.astype(np.float32), seed, 1e-9, fdp.ConsumeIntInRange(0, 100), max_trace)
                assert member.shape == (n,) and trace.shape[0] <= max(max_trace, 1)
            elif mode == 1:
                labels, contributions, _, _, _ = _addremadd.partition(
                    symmetric.astype(np.float32), 1e-9, fdp.ConsumeIntInRange(1, 100), fdp.ConsumeIntInRange(1, 3))
                assert labels.shape == (n,) and labels.min() >= 0 and labels.max() < max(contributions.shape[0], 1)
            else:
                target = fdp.ConsumeIntInRange(0, n)
                labels, merges, _ = _addremadd.agglomerate(symmetric, target)
                assert labels.shape == (n,) and merges.shape[0] <= n - 1
        except ValueError:
            return
    else:
        r = fdp.ConsumeIntInRange(1, 4)
        labels = label_matrix(fdp, n, r, 4, missing=fdp.ConsumeBool())
        method = ("addremadd", "ls-agglomerative")[fdp.ConsumeIntInRange(0, 1)]
        k = (None, -1, 0, 1, 2, 3, 30)[fdp.ConsumeIntInRange(0, 6)]
        weights = floats(fdp, r) if fdp.ConsumeBool() else None
        ensemble = call_public(cclust.Ensemble, labels, weights=weights)
        result = call_public(cclust.consensus, method, ensemble if ensemble is not None else labels, k,
                             random_state=0)
        if result is not None:
            assert result.labels.shape == (n,) and result.labels.min() >= 0


if __name__ == "__main__":
    main(test_one_input)
