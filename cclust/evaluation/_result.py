"""What :func:`cclust.evaluation.evaluate` returns: :class:`EvaluationResult` at one K and
:class:`MultiKEvaluation` at several K."""
from dataclasses import dataclass, field

import numpy as np

from cclust.errors import ValidationError
from cclust.evaluation._indices import INDICES


_UNNAMED = "ensemble"


@dataclass(frozen=True)
class EvaluationResult:
    """What :func:`evaluate` measured for each algorithm of an ensemble.

    Attributes
    ----------
    algorithms : tuple of str
        The distinct provenance values, in order of first appearance (the table's rows).
    n_partitions : ndarray of shape (n_algorithms,), int64
        Partitions each algorithm contributed.
    labels : ndarray of shape (n_algorithms, n_samples), int64
        Each algorithm's consensus labelling (``method`` applied to its partitions).
    indices : dict of str -> ndarray of shape (n_algorithms,)
        The internal indices of :data:`INDICES` (NaN where undefined, e.g. one cluster).
    external : dict of str -> ndarray of shape (n_algorithms,)
        ARI and NMI against ``labels_true``; empty without it.
    ranked_indices : tuple of str
        The indices used for ranking (those finite for every algorithm).
    ranks : ndarray of shape (n_algorithms, len(ranked_indices)), float64
        Rank of each algorithm on each ranked index, 1 = best, ties at their mean rank.
    order : tuple of str
        The algorithms best first: the footrule-optimal aggregate of ``ranks``.
    n_clusters : int
    method : str
    route : str
        How each algorithm's partitions were fused: ``"dense"`` (eac's average linkage of the
        n x n ``1 - co-association``), ``"sparse"`` (eac's single linkage of the kNN
        co-association graph) or ``"method"`` (another consensus method, on its own route).
    """

    algorithms: tuple
    n_partitions: np.ndarray
    labels: np.ndarray
    indices: dict
    external: dict
    ranked_indices: tuple
    ranks: np.ndarray
    order: tuple
    n_clusters: int
    method: str = "eac"
    higher_is_better: dict = field(default_factory=lambda: dict(INDICES))
    route: str = "dense"

    def rank_of(self, algorithm):
        """Position (1 = best) of ``algorithm`` in :attr:`order`."""
        if algorithm not in self.order:
            raise ValidationError(f"algorithm {algorithm!r} was not evaluated; evaluated: {list(self.order)}.")
        return self.order.index(algorithm) + 1

    def as_table(self):
        """The per-algorithm numbers as a dict of equal-length lists (``pandas.DataFrame(...)``-ready).

        Rows follow :attr:`algorithms`; ``rank`` is the aggregated position (1 = best).

        Examples
        --------
        >>> import numpy as np
        >>> from cclust import Ensemble
        >>> from cclust.evaluation import evaluate
        >>> X = np.array([[0.0], [0.1], [0.2], [5.0], [5.1], [5.2]])
        >>> E = Ensemble(np.array([[0, 0, 0], [0, 0, 1], [0, 0, 0], [1, 1, 1], [1, 1, 0], [1, 1, 1]]),
        ...              provenance=["good", "good", "noisy"])
        >>> table = evaluate(X, E, 2).as_table()
        >>> table["algorithm"], table["n_partitions"], table["rank"]
        (['good', 'noisy'], [2, 1], [1, 2])
        """
        table = {"algorithm": list(self.algorithms), "n_partitions": self.n_partitions.tolist()}
        for name, values in self.indices.items():
            table[name] = values.tolist()
        for name, values in self.external.items():
            table[name] = values.tolist()
        table["rank"] = [self.rank_of(a) for a in self.algorithms]
        return table

    def summary(self):
        """A text table, one row per algorithm, best first."""
        names = list(self.indices) + list(self.external)
        head = f"{'rank':>4}  {'algorithm':<24}  {'R':>4}  " + "  ".join(f"{n[:12]:>12}" for n in names)
        lines = [f"evaluation of {len(self.algorithms)} algorithms at K = {self.n_clusters} "
                 f"(each fused by {self.method}); ranked on {', '.join(self.ranked_indices) or 'nothing'}", head]
        for algorithm in self.order:
            i = self.algorithms.index(algorithm)
            values = [self.indices[n][i] if n in self.indices else self.external[n][i] for n in names]
            lines.append(f"{self.rank_of(algorithm):>4}  {algorithm:<24}  {int(self.n_partitions[i]):>4}  "
                         + "  ".join(f"{v:>12.4g}" for v in values))
        return "\n".join(lines)

    def __repr__(self):
        return f"EvaluationResult(n_clusters={self.n_clusters}, order={list(self.order)})"


def _groups(ensemble):
    """(algorithm names in order of first appearance, partition indices of each)."""
    provenance = ensemble.provenance or (_UNNAMED,) * ensemble.n_partitions
    names = list(dict.fromkeys(provenance))
    return names, [np.flatnonzero([p == name for p in provenance]) for name in names]


@dataclass(frozen=True, eq=False)
class MultiKEvaluation:
    """What :func:`evaluate` measured for every (algorithm, K) combination (diceR's multi-K mode).

    Attributes
    ----------
    k_values : tuple of int
        The K evaluated, increasing.
    algorithms : tuple of str
        Every algorithm seen, in order of first appearance.
    per_k : dict of int -> EvaluationResult
        Each K's evaluation: indices of each algorithm and their ranking within that K
        (diceR's ``ii[[k]]`` and the rank aggregation its trim runs at K).
    pac : ndarray of shape (n_algorithms, n_k)
        PAC of each algorithm's consensus (co-association) matrix at each K: the share of the
        pairs i < j whose entry lies strictly inside ``pac_interval`` (diceR's ``PAC``), over
        every pair up to 10^6 pairs and over 10^6 random pairs beyond; NaN where the algorithm
        is absent at that K.
    pac_interval : tuple of float
    chosen_k : tuple of int
        The K trim and reweigh use, chosen by ``k_method`` as diceR's ``choose_k`` does: the
        number of classes of ``labels_true``; else, each algorithm voting for its K of lowest
        PAC (the smaller K on ties), the K with most votes (the smallest on ties); an int
        ``k_method``; or every K for ``"all"`` (also when only one K is evaluated).
    k_rule : str
        How ``chosen_k`` was found: "labels_true", "pac", "given" or "all".
    ranked_indices : tuple of str
        Indices finite for every combination, used for the joint ranking.
    combinations : tuple of (str, int)
        The (algorithm, K) rows of ``ranks``.
    ranks : ndarray of shape (n_combinations, len(ranked_indices))
        Rank of each combination on each index over all combinations (1 = best).
    order : tuple of (str, int)
        Every combination, best first: the footrule-optimal aggregate of ``ranks``.
    best_k : int
        The K of the best combination: the K the internal indices favour. diceR does not report
        this (it chooses K by PAC); it is given beside ``chosen_k``. Many indices drift with K
        (compactness falls and connectivity grows as K grows), so read it with the table.
    """

    k_values: tuple
    algorithms: tuple
    per_k: dict
    pac: np.ndarray
    pac_interval: tuple
    chosen_k: tuple
    k_rule: str
    ranked_indices: tuple
    combinations: tuple
    ranks: np.ndarray
    order: tuple
    best_k: int
    method: str = "eac"

    def rank_of(self, algorithm, k):
        """Position (1 = best) of ``(algorithm, k)`` in the joint :attr:`order`."""
        if (algorithm, k) not in self.order:
            raise ValidationError(f"({algorithm!r}, {k}) was not evaluated; evaluated: {list(self.order)}.")
        return self.order.index((algorithm, k)) + 1

    def as_table(self):
        """One row per (algorithm, K) as a dict of equal-length lists (``pandas.DataFrame(...)``-ready).

        ``rank_in_k`` is the algorithm's place among the algorithms at that K (what trim uses),
        ``rank`` its place among all combinations, ``chosen`` whether K is in :attr:`chosen_k`.
        """
        table = {"algorithm": [], "k": [], "n_partitions": []}
        first = self.per_k[self.k_values[0]]
        names = list(first.indices) + list(first.external)
        for name in names + ["pac", "rank_in_k", "rank", "chosen"]:
            table[name] = []
        for k in self.k_values:
            one = self.per_k[k]
            for i, algorithm in enumerate(one.algorithms):
                table["algorithm"].append(algorithm)
                table["k"].append(int(k))
                table["n_partitions"].append(int(one.n_partitions[i]))
                for name in names:
                    source = one.indices if name in one.indices else one.external
                    table[name].append(float(source[name][i]))
                table["pac"].append(float(self.pac[self.algorithms.index(algorithm), self.k_values.index(k)]))
                table["rank_in_k"].append(one.rank_of(algorithm))
                table["rank"].append(self.rank_of(algorithm, k))
                table["chosen"].append(k in self.chosen_k)
        return table

    def summary(self):
        """A text table, one row per (algorithm, K), best first, with the K chosen and the best K."""
        first = self.per_k[self.k_values[0]]
        names = list(first.indices) + list(first.external)
        table = self.as_table()
        rows = sorted(range(len(table["rank"])), key=lambda r: table["rank"][r])
        lines = [f"evaluation of {len(self.algorithms)} algorithms at K = {list(self.k_values)} (each fused by "
                 f"{self.method}); ranked jointly on {', '.join(self.ranked_indices) or 'nothing'}",
                 f"{'rank':>4}  {'algorithm':<24}  {'K':>3}  {'in K':>4}  {'PAC':>6}  "
                 + "  ".join(f"{n[:12]:>12}" for n in names)]
        for r in rows:
            lines.append(f"{table['rank'][r]:>4}  {table['algorithm'][r]:<24}  {table['k'][r]:>3}  "
                         f"{table['rank_in_k'][r]:>4}  {table['pac'][r]:>6.3f}  "
                         + "  ".join(f"{table[n][r]:>12.4g}" for n in names))
        lines.append(f"best K by the internal indices: {self.best_k} (of {self.order[0][0]}); K used for trimming "
                     f"({self.k_rule}): {', '.join(map(str, self.chosen_k))}")
        return "\n".join(lines)

    def __repr__(self):
        return (f"MultiKEvaluation(k_values={list(self.k_values)}, chosen_k={list(self.chosen_k)}, "
                f"best_k={self.best_k})")
