"""evaluate's peak memory past the dense budget: linear in n on the sparse kNN route.

Measured as tests/test_memory_guards.py measures consensus methods (the growth of the resident
set's high-water mark during the call, in a child process; cclust.testing._memory), at n = 1,000
and 4 times that: quadratic growth would be 16x, the limit is 6x plus the RSS noise.
"""
import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("sklearn")

SMALL, LARGE = 1000, 4000
GROWTH_LIMIT = 6.0
SLACK = 4 * 2**20
BUDGET = 16_000_000   # under the dense route's 20 n^2 bytes (20 MB at n = 1,000), over the kNN graph's 14 MB at 4,000

_CHILD = """
import json, sys
import numpy as np
import cclust
from cclust.evaluation import evaluate
from cclust.testing._memory import _measure
n, budget = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(n)
centres = rng.normal(0.0, 6.0, size=(4, 3))
X = centres[rng.integers(0, 4, size=n)] + rng.normal(size=(n, 3))
E = cclust.generate("heterogeneous", X, 4, generators={"kmeans": 10, "minibatch-kmeans": 10}, random_state=0)
evaluate(X[:80], E.take(objects=np.arange(80)), 4, max_bytes=budget, random_state=0)   # warm-up
box = {}
peak, source = _measure(lambda: box.setdefault("r", evaluate(X, E, 4, max_bytes=budget, random_state=0)))
print(json.dumps({"peak": peak, "source": source, "route": box["r"].route}))
"""


def _peak(n, tmp_path):
    from cclust.testing._memory import _ALLOCATOR_ENV

    out = subprocess.run([sys.executable, "-c", _CHILD, str(n), str(BUDGET)], capture_output=True, text=True,
                         env=dict(os.environ, **_ALLOCATOR_ENV), cwd=tmp_path, check=True, timeout=600)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_evaluate_past_the_budget_takes_the_sparse_route_in_linear_memory(tmp_path):
    small, large = _peak(SMALL, tmp_path), _peak(LARGE, tmp_path)
    assert small["route"] == large["route"] == "sparse"   # chosen automatically under the budget
    if small["source"] != "rss":
        pytest.skip("the resident-set high-water mark cannot be reset here")
    assert large["peak"] <= GROWTH_LIMIT * small["peak"] + SLACK, (small, large)
    # and far below the dense route's n x n at the large size
    assert large["peak"] < 20 * LARGE * LARGE / 4, (small, large)
