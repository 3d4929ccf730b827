"""Fuzz the mixed-rows K-means engine: cclust._ext._kmeans and the generators/KCC built on it.

Run (from the repository root, extensions built in place)::

    python fuzz/fuzz_kmeans.py -max_total_time=600 -rss_limit_mb=2048
"""
import _harness  # noqa: F401 - puts the checkout first on sys.path
import atheris
import numpy as np

with atheris.instrument_imports(include=["cclust"]):
    import cclust
    import cclust._engine
    import cclust.consensus_functions.kcc
    import cclust.generators
    from cclust._ext import _kmeans

from _harness import call_public, floats, label_matrix, main, offsets_of


def rows(fdp, n, finite):
    """The leading (X, dense_weight, labels, offsets, weights, distance, p) arguments."""
    d = fdp.ConsumeIntInRange(0, 3)
    r = fdp.ConsumeIntInRange(0 if d else 1, 3)
    X = floats(fdp, n * d, finite=finite).reshape(n, d)
    labels = label_matrix(fdp, n, r, 4, missing=fdp.ConsumeBool())
    offsets = offsets_of(labels)
    weights = np.abs(floats(fdp, r, finite=True)) + 0.01
    weights /= weights.sum() if r else 1.0
    distance = fdp.ConsumeIntInRange(0, 3)
    p = fdp.ConsumeFloatInRange(1.1, 4.0)
    return X, 1.0, labels, offsets, weights, distance, p


def test_one_input(data):
    fdp = atheris.FuzzedDataProvider(data)
    mode = fdp.ConsumeIntInRange(0, 4)
    n = fdp.ConsumeIntInRange(1, 25)
    if mode <= 2:
        finite = fdp.ConsumeBool()
        args = rows(fdp, n, finite)
        k = fdp.ConsumeIntInRange(-1, min(n, 6))
        threads = fdp.ConsumeIntInRange(1, 3)
        try:
            if mode == 0:
                start = np.array([fdp.ConsumeIntInRange(-1, max(k - 1, 0)) for _ in range(n)], dtype=np.int32)
                out = _kmeans.lloyd(*args, start, k, fdp.ConsumeIntInRange(0, 20), 1e-9, threads)
                assert out[0].shape == (n,) and (out[0] >= 0).all() and (out[0] < k).all()
            elif mode == 1:
                first = fdp.ConsumeIntInRange(0, n - 1)
                uniforms = np.array([fdp.ConsumeFloatInRange(0.0, 1.0) for _ in range(max(k - 1, 0) * 2)])
                seeds = _kmeans.kmeanspp(*args, k, first, uniforms.reshape(max(k - 1, 0), 2), threads)
                assert ((seeds >= 0) & (seeds < n)).all()
            else:
                assignment = np.array([fdp.ConsumeIntInRange(-2, max(k, 1)) for _ in range(n)], dtype=np.int32)
                dense, cat = _kmeans.centroids(*args, assignment, k, threads)
                _kmeans.assign(*args, dense, cat, threads)
        except ValueError:
            # The wrappers and core may refuse k < 1, non-finite values and labels out of range.
            return
    elif mode == 3:
        X = floats(fdp, n * 2, finite=fdp.ConsumeBool()).reshape(n, 2)
        name = ("kmeans", "subspace", "subsample", "projection")[fdp.ConsumeIntInRange(0, 3)]
        k = fdp.ConsumeIntInRange(-1, 6)
        ens = call_public(cclust.generate, name, X, k, n_partitions=fdp.ConsumeIntInRange(0, 3),
                          random_state=fdp.ConsumeIntInRange(0, 5))
        if ens is not None:
            assert ens.n_samples == n
    else:
        r = fdp.ConsumeIntInRange(1, 4)
        labels = label_matrix(fdp, n, r, 4, missing=fdp.ConsumeBool())
        k = fdp.ConsumeIntInRange(-1, 6)
        utility = ("uc", "uh", "ucos", "ulp", "nuc", "nuh", "nucos", "nulp")[fdp.ConsumeIntInRange(0, 7)]
        weights = floats(fdp, r) if fdp.ConsumeBool() else None
        result = call_public(cclust.consensus, "kcc", call_public(cclust.Ensemble, labels, weights=weights) or labels,
                             k, utility=utility, random_state=1)
        if result is not None:
            assert result.labels.shape == (n,) and result.labels.min() >= 0


if __name__ == "__main__":
    main(test_one_input)
