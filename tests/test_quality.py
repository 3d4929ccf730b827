"""Every registered consensus function, with its defaults, on data whose answer is obvious.

``cclust.testing.check_consensus_recovers_easy_structure`` on well-separated blobs (balanced,
or one cluster five times the others) with k-means ensembles, for every name that
``cclust.available(kind="consensus")`` lists (plugins included). A method must reach ARI >= 0.95
in 4 of 5 seeds, or be listed in ``EXCEPTIONS`` with the measured reason. Every listed cell is
a strict xfail: an entry for a cell that passes fails the run, so stale entries are caught.

The grid is a fraction of methods x 2 sizes x 3 K x 2 balances x 2 K_i ranges x 5 seeds, chosen
to keep the run to a few minutes on 2 cores: at n = 2,000 six cells cover every K, both balances
and both K_i ranges (each pair of K and balance once, each K with both ranges across the
balances); methods taking over a second per call at n = 2,000 (``COSTLY``) run the two
hardest of them; n = 20,000 is one cell (K = 5, one cluster 5x, default K_i range) for the
fast methods of ``LARGE_N``, whose time and memory are linear in n. Ensembles are built once
per cell and seed and shared by all methods (``easy_ensemble`` caches them), and a cell stops
after 4 passing or 2 failing seeds.
"""
import pytest

import cclust
from cclust.testing import check_consensus_recovers_easy_structure

#: (n_samples, n_clusters, ratio, k_range, n_partitions): the cells every method runs.
CELLS = {
    "n2000-k3-balanced-Kdefault": (2000, 3, 1, None, 30),
    "n2000-k3-x5-KiK": (2000, 3, 5, "K", 30),
    "n2000-k5-x5-Kdefault": (2000, 5, 5, None, 30),
    "n2000-k5-balanced-KiK": (2000, 5, 1, "K", 30),
    "n2000-k10-balanced-Kdefault": (2000, 10, 1, None, 30),
    "n2000-k10-x5-KiK": (2000, 10, 5, "K", 30),
}

#: The cell run at n = 20,000, for the methods of LARGE_N only.
LARGE_CELL = {"n20000-k5-x5-Kdefault": (20000, 5, 5, None, 20)}

#: Fast methods whose time and memory grow linearly with n (no n x n co-association). The
#: others refuse n = 20,000 under the default memory budget (cspa, wosp, eac/hac, fc,
#: ls-agglomerative), take minutes there (addremadd: O(n^3); ccpivot: the dense
#: co-association), or take several seconds per call (gkcc, hgpa, em-mixture, womc, wohb).
LARGE_N = {"kcc", "hbgf", "mcla", "ivc", "ipvc", "best", "wokmeans"}

#: Methods over a second per call at n = 2,000 on 2 cores (addremadd about 7 s: O(n^2) per
#: extraction step): run on the two cells with a cluster five times the others only.
COSTLY = {"addremadd", "wosp", "wohb", "gkcc", "em-mixture", "eac", "hgpa"}
COSTLY_CELLS = ("n2000-k5-x5-Kdefault", "n2000-k10-x5-KiK")

_INIT = "initialisation: fixed by the new default seeding (restarts from base partitions keep their merges)"

#: method -> {cell id: measured reason}; the cell is an expected failure (strict xfail). Methods
#: whose failures come from their initialisation are expected to pass once the seeding work
#: lands; delete their entries then (a passing listed cell fails the run).
EXCEPTIONS = {
}


def _params():
    rows = cclust.available(kind="consensus")
    seen = {}
    params = []
    for name in sorted(rows):
        target = rows[name].target
        if target in seen and target != "<runtime>":
            continue  # an alias (hac = eac): the same function
        seen[target] = name
        cells = {c: CELLS[c] for c in COSTLY_CELLS} if name in COSTLY else dict(CELLS)
        if name in LARGE_N:
            cells.update(LARGE_CELL)
        for cell, spec in cells.items():
            reason = EXCEPTIONS.get(name, {}).get(cell)
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            if spec[0] > 2000:
                marks.append(pytest.mark.slow)
            params.append(pytest.param(name, spec, id=f"{name}-{cell}", marks=marks))
    return params


def test_exceptions_name_known_cells():
    """Every exception names a registered method and one of its cells."""
    rows = cclust.available(kind="consensus")
    for name, cells in EXCEPTIONS.items():
        assert name in rows, f"EXCEPTIONS lists {name!r}, which is not registered"
        known = (set(COSTLY_CELLS) if name in COSTLY else set(CELLS)) | (set(LARGE_CELL) if name in LARGE_N else set())
        assert set(cells) <= known, f"EXCEPTIONS[{name!r}] names unknown cells {sorted(set(cells) - known)}"
        assert all(isinstance(r, str) and r for r in cells.values()), f"EXCEPTIONS[{name!r}] needs reasons"


@pytest.mark.parametrize("name, spec", _params())
def test_recovers_easy_structure(name, spec):
    n_samples, n_clusters, ratio, k_range, n_partitions = spec
    check_consensus_recovers_easy_structure(name, n_samples=n_samples, n_clusters=n_clusters, ratio=ratio,
                                            k_range=k_range, n_partitions=n_partitions)
