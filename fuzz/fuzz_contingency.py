"""Fuzz the contingency core: cclust._ext._contingency and the metrics/Ensemble built on it.

Run (from the repository root, extensions built in place)::

    python fuzz/fuzz_contingency.py -max_total_time=600 -rss_limit_mb=2048
"""
import _harness  # noqa: F401 - puts the checkout first on sys.path
import atheris
import numpy as np

with atheris.instrument_imports(include=["cclust"]):
    import cclust
    import cclust.metrics
    from cclust._ext import _contingency
    from cclust._engine import label_table
    from cclust.ensemble import Ensemble

from _harness import call_public, label_matrix, main, offsets_of

METRICS = ("ari", "rand", "nmi", "ami", "vi", "van-dongen", "accuracy")


def test_one_input(data):
    fdp = atheris.FuzzedDataProvider(data)
    mode = fdp.ConsumeIntInRange(0, 3)
    n = fdp.ConsumeIntInRange(0, 40)
    if mode == 0:
        # Raw pair table: arbitrary labels (including < -1 and >= k); the core range-checks.
        ka = fdp.ConsumeIntInRange(0, 6)
        kb = fdp.ConsumeIntInRange(0, 6)
        a = np.array([fdp.ConsumeIntInRange(-3, 8) for _ in range(n)], dtype=np.int64)
        b = np.array([fdp.ConsumeIntInRange(-3, 8) for _ in range(n)], dtype=np.int64)
        threads = fdp.ConsumeIntInRange(-1, 3)
        try:
            table = _contingency.pair_table(a, b, ka, kb, threads)
        except ValueError:
            assert ((a < -1) | (a >= ka) | (b < -1) | (b >= kb)).any()
            return
        both = (a >= 0) & (b >= 0)
        assert table.sum() == both.sum()
        if n:
            low, high = _contingency.label_range(a)
            assert low == a.min() and high == a.max()
    elif mode == 1:
        # Raw ensemble table: a valid ensemble, arbitrary consensus labels.
        r = fdp.ConsumeIntInRange(0, 5)
        labels = label_matrix(fdp, n, r, 5)
        offsets = offsets_of(labels)
        k = fdp.ConsumeIntInRange(1, 6)
        consensus = np.array([fdp.ConsumeIntInRange(-2, 7) for _ in range(n)], dtype=np.int32)
        try:
            table = label_table(labels, offsets, consensus, k, fdp.ConsumeIntInRange(1, 3))
        except ValueError:
            assert ((consensus < -1) | (consensus >= k)).any()
            return
        assert table.shape == (k, offsets[-1])
        assert table.sum() == ((labels >= 0) & (consensus[:, None] >= 0)).sum()
    elif mode == 2:
        # relabel_dense on non-negative values up to a bound (out-of-bound values must raise).
        bound = fdp.ConsumeIntInRange(0, 50)
        values = np.array([fdp.ConsumeIntInRange(-1, 60) for _ in range(max(n, 1))], dtype=np.int64)
        try:
            codes, k = _contingency.relabel_dense(values, bound, 1)
        except ValueError:
            assert ((values < 0) | (values > bound)).any()
            return
        assert k == np.unique(values).shape[0]
        assert np.array_equal(np.unique(values, return_inverse=True)[1].reshape(-1), codes)
    else:
        # Public entry points with loosely typed input: lists, floats, NaN, strings, -1.
        choices = [0, 1, 2, -1, 7, 1.5, float("nan"), "a", None, True, 10**12]
        a = [choices[fdp.ConsumeIntInRange(0, len(choices) - 1)] for _ in range(n)]
        b = [choices[fdp.ConsumeIntInRange(0, len(choices) - 1)] for _ in range(fdp.ConsumeIntInRange(0, n + 1))]
        metric = cclust.get(METRICS[fdp.ConsumeIntInRange(0, len(METRICS) - 1)])
        value = call_public(metric, a, b)
        if value is not None:
            assert isinstance(value, float)
        r = fdp.ConsumeIntInRange(1, 4)
        cols = [[fdp.ConsumeIntInRange(-2, 6) for _ in range(n)] for _ in range(r)]
        ensemble = call_public(Ensemble, cols)
        if ensemble is not None:
            k = fdp.ConsumeIntInRange(-1, 5)
            call_public(ensemble.contingency, np.array(b[:n] + [0] * (n - len(b)), dtype=object), k)
            call_public(ensemble.contingency, np.array([fdp.ConsumeIntInRange(-2, 5) for _ in range(n)]), k)
            call_public(ensemble.coassociation, sparse=fdp.ConsumeBool())


if __name__ == "__main__":
    main(test_one_input)
