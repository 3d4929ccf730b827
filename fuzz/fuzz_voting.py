"""Fuzz the voting lookup core: cclust._ext._voting and IVC/IPVC/IPC/voting/EM built on it.

Run (from the repository root, extensions built in place)::

    python fuzz/fuzz_voting.py -max_total_time=600 -rss_limit_mb=2048
"""
import _harness  # noqa: F401 - puts the checkout first on sys.path
import atheris
import numpy as np

with atheris.instrument_imports(include=["cclust"]):
    import cclust
    import cclust.consensus_functions.mixture
    import cclust.consensus_functions.voting
    from cclust._ext import _voting

from _harness import call_public, floats, label_matrix, main, offsets_of

METHODS = ("ivc", "ipvc", "ipc", "voting", "em-mixture")


def test_one_input(data):
    fdp = atheris.FuzzedDataProvider(data)
    mode = fdp.ConsumeIntInRange(0, 4)
    n = fdp.ConsumeIntInRange(0, 25)
    r = fdp.ConsumeIntInRange(1, 4)
    labels = label_matrix(fdp, n, r, 4, missing=fdp.ConsumeBool())
    offsets = offsets_of(labels)
    k = fdp.ConsumeIntInRange(1, 5)
    allowed = np.array([fdp.ConsumeIntInRange(0, 1) for _ in range(k)], dtype=np.uint8)
    threads = fdp.ConsumeIntInRange(1, 3)
    try:
        if mode == 0:
            table = floats(fdp, int(offsets[-1]) * k).reshape(int(offsets[-1]), k)
            scores = _voting.scores(labels, offsets, table, threads)
            assignment, best = _voting.argmax(labels, offsets, table, allowed, threads)
            if n and allowed.any():
                assert allowed[assignment].all()
                finite = np.isfinite(scores).all(axis=1)
                assert np.array_equal(best[finite], scores[finite, assignment[finite]])
        elif mode == 1:
            width = int(offsets[-1])
            counts = [fdp.ConsumeIntInRange(0, k) for _ in range(width)]
            indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
            indices = np.array([fdp.ConsumeIntInRange(0, k - 1) for _ in range(int(indptr[-1]))], dtype=np.int32)
            values = floats(fdp, int(indptr[-1]), finite=True)
            _voting.argmax_sparse(labels, offsets, indptr, indices, values, k, allowed, threads)
        elif mode == 2:
            modes = np.array([fdp.ConsumeIntInRange(-2, 4) for _ in range(k * r)], dtype=np.int32).reshape(k, r)
            assignment, matches = _voting.mode_argmax(labels, modes, allowed, threads)
            assert ((matches >= 0) & (matches <= r)).all()
        elif mode == 3:
            out = _voting.first_appearance(labels, offsets)
            assert np.array_equal(out < 0, labels < 0)
        else:
            method = METHODS[fdp.ConsumeIntInRange(0, len(METHODS) - 1)]
            weights = floats(fdp, r) if fdp.ConsumeBool() else None
            kk = fdp.ConsumeIntInRange(-1, 6)
            ensemble = call_public(cclust.Ensemble, labels, weights=weights)
            result = call_public(cclust.consensus, method, ensemble if ensemble is not None else labels, kk,
                                 random_state=fdp.ConsumeIntInRange(0, 3))
            if result is not None:
                assert result.labels.shape == (n,)
                assert result.labels.min(initial=0) >= 0 and result.labels.max(initial=0) < max(result.n_clusters, 1)
    except ValueError:
        # No allowed cluster, a label outside its partition's range: the core refuses.
        if mode == 4:
            raise
        return


if __name__ == "__main__":
    main(test_one_input)
