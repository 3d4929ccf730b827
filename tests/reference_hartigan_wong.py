"""Slow, literal reference of Hartigan & Wong's (1979) k-means, algorithm AS 136.

Written from the paper's description of its two stages, in plain Python over 1-based steps:

* Step 1-2: each point goes to its closest centre IC1, IC2 is the second closest; centres are
  the cluster means; every cluster is in the live set.
* Optimal-transfer stage (OPTRA): for point I in cluster L1 (not a singleton), R1 = n_L1 /
  (n_L1 - 1) * D(I, L1)^2 is the decrease of the within sum of squares W if I leaves L1; the
  increase of joining L is R2 = n_L / (n_L + 1) * D(I, L)^2. Over IC2(I) and, if L1 is live, all
  clusters, else only live ones, take the smallest R2; if it is >= R1, that cluster becomes
  IC2(I); otherwise I moves there, both means are updated and both clusters become live. A
  cluster stays live for the m steps after its last update. Stop when m steps in a row move
  nothing.
* Quick-transfer stage (QTRAN): for each point, move it from IC1 to IC2 when R2 < R1 (only if one
  of the two changed in the last m steps), swapping IC1 and IC2; loop until m steps in a row
  change nothing.
* Alternate the stages until the optimal-transfer stage moves nothing (with two clusters one
  quick-transfer stage ends it), at most max_iter times.

Bookkeeping whose exact form decides ties follows R's AS 136 (double precision, the quick-transfer
bound of 50 m steps): the "last updated" step per cluster, live-set limits m + step, the early
stopping of distance sums (only when the partial sum already reaches the bound). Distances are
summed feature by feature in order, as the compiled core does, so the labels agree exactly.
"""
import numpy as np

BIG = float(np.float32(1.0e30))


def _d2(x, c):
    s = 0.0
    for a, b in zip(x, c):
        s += (a - b) * (a - b)
    return s


def _partial_below(x, c, bound):
    s = 0.0
    for a, b in zip(x, c):
        s += (a - b) * (a - b)
        if s >= bound:
            return None
    return s


def hartigan_wong(X, centres, max_iter=10, max_qtran=None):
    """Returns (labels 0-based, centres, wss, n_iter, status) like the compiled core."""
    X = [list(map(float, row)) for row in np.asarray(X, dtype=np.float64)]
    C = [list(map(float, row)) for row in np.asarray(centres, dtype=np.float64)]
    m, k = len(X), len(C)
    n = len(X[0])
    if max_qtran is None:
        max_qtran = 50 * m
    if k <= 1 or k >= m:
        return None, None, None, 0, 3
    ic1, ic2 = [0] * m, [0] * m
    for i in range(m):
        d = [_d2(X[i], C[l]) for l in range(k)]
        # closest, then second closest; ties keep the earlier centre first
        b, s = (0, 1) if not d[0] > d[1] else (1, 0)
        for l in range(2, k):
            if d[l] >= d[s]:
                continue
            if d[l] >= d[b]:
                s = l
            else:
                s, b = b, l
        ic1[i], ic2[i] = b, s
    nc = [0] * k
    C = [[0.0] * n for _ in range(k)]
    for i in range(m):
        nc[ic1[i]] += 1
        for j in range(n):
            C[ic1[i]][j] += X[i][j]
    if min(nc) == 0:
        return None, None, None, 0, 1
    an1, an2 = [0.0] * k, [0.0] * k
    for l in range(k):
        C[l] = [v / float(nc[l]) for v in C[l]]
        an2[l] = nc[l] / (nc[l] + 1.0)
        an1[l] = nc[l] / (nc[l] - 1.0) if nc[l] > 1 else BIG
    itran = [1] * k
    ncp = [-1] * k
    live = [0] * k
    D = [0.0] * m
    state = {"indx": 0}

    def transfer(i, l1, l2):
        a1, a2 = float(nc[l1]), float(nc[l2])
        for j in range(n):
            C[l1][j] = (C[l1][j] * a1 - X[i][j]) / (a1 - 1.0)
            C[l2][j] = (C[l2][j] * a2 + X[i][j]) / (a2 + 1.0)
        nc[l1] -= 1
        nc[l2] += 1
        an2[l1] = (a1 - 1.0) / a1
        an1[l1] = (a1 - 1.0) / (a1 - 2.0) if a1 - 1.0 > 1.0 else BIG
        an1[l2] = (a2 + 1.0) / a2
        an2[l2] = (a2 + 1.0) / (a2 + 2.0)
        ic1[i], ic2[i] = l2, l1

    def optra():
        for l in range(k):
            if itran[l] == 1:
                live[l] = m + 1
        for i in range(m):
            step = i + 1
            state["indx"] += 1
            l1 = ic1[i]
            if nc[l1] != 1:
                if ncp[l1] != 0:
                    D[i] = _d2(X[i], C[l1]) * an1[l1]
                ll = l2 = ic2[i]
                r2 = _d2(X[i], C[l2]) * an2[l2]
                for l in range(k):
                    in_live = not (step >= live[l1] and step >= live[l])
                    if not in_live or l == l1 or l == ll:
                        continue
                    dc = _partial_below(X[i], C[l], r2 / an2[l])
                    if dc is not None:
                        r2, l2 = dc * an2[l], l
                if r2 >= D[i]:
                    ic2[i] = l2
                else:
                    state["indx"] = 0
                    live[l1] = live[l2] = m + step
                    ncp[l1] = ncp[l2] = step
                    transfer(i, l1, l2)
            if state["indx"] == m:
                return
        for l in range(k):
            itran[l] = 0
            live[l] -= m

    def qtran():
        icoun = istep = 0
        while True:
            for i in range(m):
                icoun += 1
                istep += 1
                if istep >= max_qtran:
                    return False
                l1, l2 = ic1[i], ic2[i]
                if nc[l1] != 1:
                    if istep <= ncp[l1]:
                        D[i] = _d2(X[i], C[l1]) * an1[l1]
                    if istep < ncp[l1] or istep < ncp[l2]:
                        if _partial_below(X[i], C[l2], D[i] / an2[l2]) is not None:
                            icoun = 0
                            state["indx"] = 0
                            itran[l1] = itran[l2] = 1
                            ncp[l1] = ncp[l2] = istep + m
                            transfer(i, l1, l2)
                if icoun == m:
                    return True

    status, it = 2, 1
    while it <= max_iter:
        optra()
        if state["indx"] == m:
            status = 0
            break
        if not qtran():
            status = 4
            break
        if k == 2:
            status = 0
            break
        for l in range(k):
            ncp[l] = 0
        it += 1
    labels = np.array(ic1, dtype=np.int32)
    centres = np.array([X_mean for X_mean in
                        (np.mean([X[i] for i in range(m) if ic1[i] == l], axis=0) for l in range(k))])
    wss = np.array([sum(_d2(X[i], centres[l]) for i in range(m) if ic1[i] == l) for l in range(k)])
    return labels, centres, wss, it, status
