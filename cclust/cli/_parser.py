"""The argument parser of the ``cclust`` command and :func:`main`, its entry point."""
from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from cclust.cli._commands import _SCALE_RATIO, evaluate, fuse, methods, run, select_k, show_config
from cclust.cli._markers import markers
from cclust.cli._messages import Terminated, UserError, terminate_as_interrupt
from cclust.cli._csv import NA_VALUES
from cclust.cli._html_report import add_report_parser, replay_manifest


class _ArgumentParser(argparse.ArgumentParser):
    """argparse that reports usage mistakes as one ``cclust: error:`` line (via UserError)."""

    def error(self, message):
        raise UserError(f"{message} (see `{self.prog} --help`)")


_OUT_HELP = ("write the labels, one per data row, in the format the extension names: .csv or .tsv (header "
             "'label', or one column per method), .json ({method: [labels]}) or .npy; with .h5ad DATA also "
             ".h5ad (a copy of the AnnData with the labels in obs['cclust'])")

_EPILOG_RUN = """\
examples:
  cclust run iris                              compare every consensus method on iris
  cclust run iris --method kcc --plot iris.png one method, consensus-matrix heatmap
  cclust run data.csv --labels-column class    CSV with the true classes in column 'class'
  cclust run wine --standardize --utilities    KCC under the ten utilities of Wu et al. 2015
  cclust run iris --method kcc --method-param utility=uc --method-param n_init=20
  cclust run iris --generator kmeans:50,hierarchical:25,gmm:25 --generator-param hierarchical:linkage=ward
                                               a heterogeneous ensemble (the summary counts each generator)
  cclust run iris --generator pam --generator-param p_item=0.8 --save-ensemble parts.csv

DATA: a bundled dataset (iris, wine), a CSV (.csv/.tsv/.txt, numeric feature columns, header row
detected), an .npy file with X, or an .npz file with X and optionally y. Files are never unpickled.
Every data row is one object: an empty feature cell or row (`,`) is refused with its line, unless
--missing-features mean; empty lines after the last row are not rows.
--method-param values: none/null, true/false, ints, floats, commas for tuples (k_range=2,6),
otherwise text; METHOD:KEY=VALUE targets one method, KEY=VALUE every method that takes KEY.
output: one row per method. K = clusters in the method's consensus; ARI/NMI against the true
labels (when DATA has them); agreement = average NMI of the consensus with the basic partitions
(ANMI, Strehl & Ghosh 2002; higher is better, no true labels needed); without true labels also
the method's own criterion, which is not comparable across methods.
"""

_EPILOG_EVALUATE = """\
Each algorithm of the ensemble (what made each partition: the generator names, or the header of an
--ensemble file written by `cclust run --save-ensemble`) is fused into one K-cluster labelling (--method,
default eac) and scored on internal validity indices: silhouette, Calinski-Harabasz, Davies-Bouldin,
compactness, connectivity (Handl, Knowles & Kell 2005) and the average NMI with the whole ensemble
(plus ARI/NMI against the true labels when DATA has them; never used for ranking). The algorithms are ranked on each index and the rankings
aggregated (footrule-optimal, the objective of diceR's RankAggreg; Chiu & Talhouk 2018).
--trim N keeps the N best algorithms, --reweigh weights them by rank (Borda points); --fuse M
fuses what is left with consensus method M. With several K (-k 3,4,5) each K gets its own ensemble,
every (algorithm, K) is scored and ranked, the best K by the internal indices is reported, and
trimming keeps the best algorithms at the K chosen by --k-method (diceR's multi-K mode).
examples:
  cclust evaluate iris -k 3                                   kmeans, hierarchical, pam and gmm, 25 each
  cclust evaluate wine --standardize --generator kmeans:20,pam:20,spectral:20 --trim 2 --reweigh
  cclust evaluate iris -k 3 --ensemble parts.csv --trim 2 --fuse kcc
  cclust evaluate iris -k 2,3,4,5 --trim 2 --reweigh --fuse kcc
"""

_EPILOG_FUSE = """\
The file holds one column per partition (CSV with or without a header; labels may be numbers or
words; an empty cell, or the --missing value, marks an object missing from that partition), or an
.npy array (n_samples, n_partitions), or an .npz archive with an array 'labels'. A header row names
the partitions; names that repeat (as `cclust run --save-ensemble` writes them: kmeans, kmeans, gmm,
...) are counted in the summary as what made them. Every data row is
one object: a row of empty cells (`,`, or an empty line between rows) is an object missing from
every partition; empty lines after the last row are not rows.
output: one row per method. K = clusters in the method's consensus; agreement = average NMI of
the consensus with the partitions (ANMI, Strehl & Ghosh 2002; higher is better); the criterion is
the method's own and not comparable across methods.
examples:
  cclust fuse partitions.csv -k 3
  cclust fuse partitions.csv -k 3 --method cspa --method mcla
  cclust fuse partitions.csv --method addremadd          (chooses K itself)
"""

_EPILOG_MARKERS = """\
examples:
  cclust markers iris                                    the species of iris, DATA's own classes
  cclust run data.csv --method kcc -k 4 -o labels.csv && cclust markers data.csv --labels labels.csv
  cclust markers pbmc.h5ad --labels-column louvain --top 10 -o markers.csv --plot markers.png

output: per cluster, its highest-scoring features: score (z of the Wilcoxon rank-sum test, or Welch's t;
> 0: higher in the cluster), AUROC (0.5: no separation, 1: every member higher), p and the p adjusted
for the false discovery rate over the cluster's features (Benjamini & Hochberg 1995).
"""


def _add_generation_options(p, *, partitions, what, generator="kmeans"):
    """The options of commands that generate the basic partitions themselves (run, select-k, evaluate)."""
    p.add_argument("--generator", default=generator, metavar="G",
                   help=f"basic-partition generator (default {generator}); for a heterogeneous ensemble, several with "
                        "counts, G:R,G:R (kmeans:50,hierarchical:25,gmm:25), or without counts (they share "
                        "--partitions)")
    p.add_argument("--partitions", type=_positive_int, default=partitions, metavar="R", action=_Given,
                   help=f"{what} (default {partitions})")
    p.set_defaults(partitions_given=False)
    p.add_argument("--generator-param", action="append", metavar="KEY=VALUE",
                   help="parameter for the generator (G:KEY=VALUE for one of several)")
    p.add_argument("--seed", type=_seed, default=0, metavar="S", help="random seed (default 0)")


class _Given(argparse.Action):
    """Store the value and remember that the option was given (``partitions_given``)."""

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, values)
        setattr(namespace, f"{self.dest}_given", True)


def _add_common_output(p, comparison=True, labels=True):
    if comparison:
        p.add_argument("-x", "--exclude", action="append", metavar="M",
                       help="leave method M out of the comparison (repeat or comma-separate)")
    p.add_argument("--format", choices=("table", "csv", "json"), default="table",
                   help="output format (default table)")
    if comparison and labels:
        p.add_argument("--sort", choices=("name", "agreement", "ari", "nmi", "seconds"), default="name",
                       help="order of the comparison rows (default name; agreement, ari and nmi put the best "
                            "first; ari/nmi need true labels and fall back to agreement, with a note, without)")
    elif comparison:
        p.add_argument("--sort", choices=("name", "agreement", "seconds"), default="name",
                       help="order of the comparison rows (default name; agreement puts the best first)")
    p.add_argument("--jobs", type=_jobs, default=None, metavar="N",
                   help="threads (default: every core; results do not depend on it)")
    p.add_argument("-v", "--verbose", action="count", default=0, help="progress bars on a terminal")


def _add_data_options(p):
    p.add_argument("--labels-column", default=None, metavar="NAME|INDEX",
                   help="CSV column holding the true classes (name from the header, or 0-based index; "
                        "negative counts from the end); refused, unless --force, when its values are all different "
                        "or fractional. Default: none, every column is a feature")
    p.add_argument("--header", choices=("auto", "yes", "no"), default="auto",
                   help="whether the CSV's first row names the columns (default: detect)")
    p.add_argument("--standardize", action="store_true",
                   help="z-score every feature before clustering. Off by default: it lowers ARI where the "
                        "features share a scale (iris: kcc 0.73 -> 0.68); a warning suggests it when their standard "
                        f"deviations differ more than {_SCALE_RATIO:g}-fold, where it mostly helps (wine: kcc "
                        "0.37 -> 0.85; breast cancer, dermatology, australian)")
    p.add_argument("--missing-features", choices=("error", "mean"), default="error",
                   help="a missing feature value (empty, NA, NaN, ...; see --na-values): refuse it, naming its line "
                        "and column (default), or fill it with its feature's mean (the output counts the cells "
                        "filled per feature)")
    _add_reading_options(p, "a feature")
    p.add_argument("--decimal", choices=(".", ","), default=".", metavar="MARK",
                   help="decimal mark of the numbers: '.' (default) or ',' (reads 0,173 in a ';'- or tab-separated "
                        "file)")
    p.add_argument("--thousands", choices=(",", ".", " ", "'"), default=None, metavar="SEP",
                   help="thousands separator to remove from numbers grouped by threes: ',' (-1,355.6), '.' (with "
                        "--decimal , : -1.355,6), ' ' or \"'\"; default none")
    p.add_argument("--samples-in-columns", "--transpose", dest="samples_in_columns", action="store_true",
                   help="the objects are the columns (genes x samples): the header row holds their IDs, each "
                        "line is a feature (name it with --id-column)")
    p.add_argument("--force", action="store_true",
                   help="use --labels-column even when its values are all different (an ID column?) or "
                        "fractional numbers (a measurement?), which are refused otherwise")
    p.add_argument("--layer", default=None, metavar="NAME",
                   help=".h5ad DATA: cluster the AnnData's layer NAME instead of its X (needs cclust[scverse])")
    p.add_argument("--use-rep", default=None, metavar="KEY",
                   help=".h5ad DATA: cluster the AnnData's obsm[KEY] (e.g. X_pca) instead of its X")


def _na_values(text):
    """``--na-values``: comma-separated cell values that mean "missing" (an empty cell always does)."""
    return tuple(token.strip() for token in text.split(",") if token.strip())


def _add_reading_options(p, what):
    """The CSV options that run, select-k, evaluate and fuse share."""
    p.add_argument("--na-values", type=_na_values, default=None, metavar="TOKENS",
                   help="comma-separated cell values that mean 'missing', replacing the default list "
                        f"({', '.join(NA_VALUES)}); an empty cell is always missing")
    p.add_argument("--id-column", default=None, metavar="NAME|INDEX",
                   help="CSV column of row IDs (name or 0-based index), kept out of the data and written beside "
                        "the labels (an 'id' column, or 'ids' in JSON)")
    p.add_argument("--index-column", choices=("auto", "no"), default="auto",
                   help="auto (default): a first column with an empty header cell holding 0..n-1 or 1..n in order "
                        "(pandas' to_csv index) is left out, one holding a different word on every row (R's row "
                        f"names) is read as the row IDs; no: read it as {what}")


def _int_option(low, what):
    """An argparse type: an int >= ``low`` (``what`` describes the allowed values)."""

    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be {what}, got {value}")
        return value

    return parse


_positive_int = _int_option(1, "a positive integer")
_seed = _int_option(0, "a non-negative integer")


def _k_list(text):
    """``-k`` of ``cclust evaluate``: one K, or several comma-separated (3,4,5) or a range (2-6)."""
    values = []
    for item in (v.strip() for v in text.split(",")):
        low, sep, high = item.partition("-")
        try:
            values += list(range(int(low), int(high) + 1)) if sep else [int(item)]
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer or comma-separated integers (3,4,5), got "
                                             f"{text!r}") from None
    if not values:
        raise argparse.ArgumentTypeError(f"must name at least one K, got {text!r}")
    return sorted(set(values))


def _k_method(text):
    if text.strip() == "all":
        return "all"
    return _int_option(2, "'all' or one of the K given with -k")(text)


def _jobs(text):
    if text.strip() == "-1":
        return -1
    return _int_option(1, "a positive integer or -1 (every core)")(text)


def build_parser() -> argparse.ArgumentParser:
    """The :class:`argparse.ArgumentParser` of the ``cclust`` command (also used by the docs).

    Returns
    -------
    parser : argparse.ArgumentParser
        Its ``error()`` raises :class:`UserError` instead of exiting, so :func:`main` reports
        every mistake in one line.
    """
    import cclust

    parser = _ArgumentParser(
        prog="cclust", description="Consensus clustering: generate basic partitions, fuse them, compare methods.",
        epilog="Run `cclust COMMAND --help` for the options of a command.")
    parser.add_argument("--version", action="version", version=f"cclust {cclust.__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("run", help="cluster DATA: compare every consensus method, or run one",
                       description="Generate basic partitions of DATA and fuse them with consensus methods.",
                       epilog=_EPILOG_RUN, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("data", metavar="DATA", nargs="?", default=None,
                   help="iris, wine, or a .csv/.tsv/.txt/.npy/.npz/.h5ad file (with --from-manifest: the data to "
                        "replay on, default the file the manifest records)")
    p.add_argument("--from-manifest", metavar="FILE", default=None,
                   help="replay the run a manifest records (the .json of `cclust report --manifest`, or the .html "
                        "report itself): check DATA's SHA-256, rerun with the recorded parameters and seed, and say "
                        "whether the labels are identical to the recorded ones (exit status 1 if not); --out writes "
                        "them")
    p.add_argument("-m", "--method", action="append", metavar="M",
                   help="consensus method (repeat or comma-separate for several; default: every registered one)")
    p.add_argument("-k", "--n-clusters", dest="k", type=int, default=None, metavar="K",
                   help="clusters in the consensus (default: the number of true classes)")
    _add_generation_options(p, partitions=100, what="basic partitions")
    p.add_argument("--method-param", action="append", metavar="KEY=VALUE", help="parameter for the method(s)")
    p.add_argument("--save-ensemble", metavar="FILE",
                   help="also write the basic partitions: .csv/.tsv (a header row naming what made each "
                        "partition, then one line per object, -1 = missing) or .npz (labels, provenance); "
                        "`cclust fuse FILE` reads them back")
    p.add_argument("--utilities", action="store_true",
                   help="compare KCC under every utility (Uc, UH, Ucos, UL5, UL8 and normalised forms); "
                        "KCC++ starts by default, --method-param init=random for Wu et al.'s random objects")
    p.add_argument("-o", "--out", metavar="FILE", help=_OUT_HELP)
    p.add_argument("--plot", metavar="FILE.png", help="one method: consensus matrix ordered by the labels; "
                                                      "several: a bar chart of each method's ARI against the "
                                                      "true labels, or of its agreement (ANMI) without them "
                                                      "(needs cclust[plot])")
    _add_data_options(p)
    _add_common_output(p)
    p.set_defaults(func=_run_or_replay)

    p = sub.add_parser("fuse", help="fuse partitions you already have (one column per partition)",
                       description="Fuse the partitions in ENSEMBLE into one consensus partition.",
                       epilog=_EPILOG_FUSE, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("ensemble", metavar="ENSEMBLE", help=".csv/.tsv/.txt, .npy or .npz file; soft partitions as "
                                                        "an .npz of arrays membership_0, membership_1, ...")
    p.add_argument("-k", "--n-clusters", dest="k", type=int, default=None, metavar="K",
                   help="clusters in the consensus (required unless the method chooses K)")
    p.add_argument("-m", "--method", action="append", metavar="M", help="consensus method (default kcc; "
                                                                      "repeat for a comparison)")
    p.add_argument("--seed", type=_seed, default=0, metavar="S", help="random seed (default 0)")
    p.add_argument("--missing", default="-1", metavar="VALUE",
                   help="label that marks a missing object, besides empty cells (default -1; '' for none)")
    p.add_argument("--header", choices=("auto", "yes", "no"), default="auto",
                   help="whether the CSV's first row names the partitions (default: detect)")
    _add_reading_options(p, "a partition")
    p.add_argument("--method-param", action="append", metavar="KEY=VALUE", help="parameter for the method(s)")
    p.add_argument("-o", "--out", metavar="FILE", help=_OUT_HELP)
    p.add_argument("--plot", metavar="FILE.png", help="one method: consensus-matrix heatmap ordered by the labels; "
                                                      "several: a bar chart of each method's agreement with the "
                                                      "partitions, ANMI (needs cclust[plot])")
    _add_common_output(p, labels=False)
    p.set_defaults(func=fuse)

    p = sub.add_parser("select-k", help="choose K: consensus CDF, delta area, PAC and item consensus per K",
                       description="For each K in a range, cluster many random subsamples of DATA at K and "
                                   "build Monti et al.'s consensus matrix; report its CDF area, delta area and "
                                   "PAC, the recommended K, and each cluster's consensus. By default each "
                                   "subsample is clustered once by k-means (Monti et al.'s protocol, as "
                                   "ConsensusClusterPlus runs it); --method KCC etc. fuses generated "
                                   "partitions of each subsample instead.")
    p.add_argument("data", metavar="DATA", help="iris, wine, or a .csv/.tsv/.txt/.npy/.npz/.h5ad file")
    p.add_argument("--k-range", nargs=2, type=int, required=True, metavar=("LOW", "HIGH"),
                   help="inclusive range of K to try")
    p.add_argument("-m", "--method", default="monti", metavar="M",
                   help="monti (default: each subsample clustered once by --inner) or a consensus method "
                        "fusing --partitions generated partitions of each subsample (e.g. kcc)")
    p.add_argument("--inner", choices=("kmeans", "hierarchical"), default="kmeans",
                   help="clusterer of the monti method: k-means at exactly K, or average linkage of the "
                        "Euclidean distances cut at K (default kmeans)")
    p.add_argument("--distance", choices=("euclidean", "pearson", "spearman", "maximum", "manhattan", "canberra",
                                          "binary", "minkowski"), default="euclidean",
                   help="distance of --inner hierarchical (ConsensusClusterPlus's distance; its default run is "
                        "--inner hierarchical --distance pearson on the columns: add --samples-in-columns for a "
                        "features x samples file)")
    p.add_argument("--inner-linkage", choices=("average", "complete", "single", "mcquitty", "ward.D2"),
                   default="average", help="linkage of --inner hierarchical (innerLinkage; default average)")
    p.add_argument("--final-linkage", choices=("average", "complete", "single", "mcquitty", "ward.D2"),
                   default="average",
                   help="linkage of the final clusters cut from the consensus matrix (finalLinkage; default average)")
    p.add_argument("--kmeans-algorithm", choices=("lloyd", "hartigan-wong"), default=None,
                   help="k-means of --inner kmeans: lloyd (default) or hartigan-wong, the algorithm of "
                        "Hartigan & Wong (1979) that R's kmeans and so ConsensusClusterPlus run")
    p.add_argument("--kmeans-init", choices=("random", "k-means++"), default=None,
                   help="starting centres of --inner kmeans (default: k-means++ for lloyd, random objects "
                        "for hartigan-wong, as R)")
    p.add_argument("--resamples", type=_positive_int, default=None, metavar="N",
                   help="subsamples per K (Monti et al.'s H; default 10 for monti with a --null, each the best of "
                        "three k-means runs, 100 with --null none, 50 for a consensus method)")
    p.add_argument("--subsample", type=float, default=0.8, metavar="F",
                   help="fraction of the objects in each subsample (default 0.8)")
    p.add_argument("--feature-subsample", type=float, default=1.0, metavar="F",
                   help="fraction of the features each subsample clusters on (ConsensusClusterPlus's pFeature; "
                        "default 1)")
    p.add_argument("--item-weights", metavar="FILE", default=None,
                   help="sampling weight of every object, one number per line (.txt/.csv) or an .npy vector "
                        "(ConsensusClusterPlus's weightsItem: each subsample is R's sample(..., prob = w))")
    p.add_argument("--feature-weights", metavar="FILE", default=None,
                   help="sampling weight of every feature, as --item-weights (weightsFeature; used with "
                        "--feature-subsample below 1)")
    p.add_argument("--null", choices=("auto", "gaussian", "uniform", "none"), default="auto",
                   help="reference data sets without clusters but with the data's principal axes and spread, "
                        "run through the same protocol, so that K = 1 (no cluster structure) can be the answer "
                        "(John et al. 2020, M3C): uniform (along the data's principal axes) or gaussian; none for "
                        "ConsensusClusterPlus's plain protocol; auto (default): uniform for the monti method, none "
                        "for a consensus method (each of its reference runs generates and fuses partitions) and "
                        "with --criterion gap")
    p.add_argument("--references", type=_positive_int, default=None, metavar="B",
                   help="reference data sets of --null (default 10; at least 2)")
    p.add_argument("--alpha", type=float, default=0.05, metavar="A",
                   help="significance level of the reference null, Bonferroni over the K tried (default 0.05)")
    p.add_argument("--criterion", choices=("rcsi", "pac", "delta_area", "objective", "gap"), default=None,
                   help="how the recommended K is chosen (default rcsi with a --null: the most stable K "
                        "relative to the references among the significant ones, else K = 1; pac, the lowest "
                        "PAC, with --null none; gap: the gap statistic of k-means against --references "
                        "reference data sets (Tibshirani, Walther & Hastie 2001), which can also answer K = 1)")
    p.add_argument("--gap-rule", default="Tibs2001SEmax",
                   choices=("Tibs2001SEmax", "firstSEmax", "globalSEmax", "firstmax", "globalmax"),
                   help="the rule of --criterion gap (R's cluster::maxSE): Tibs2001SEmax (default, the paper's "
                        "smallest K whose gap is within one standard error of the next K's), firstSEmax "
                        "(clusGap's default), globalSEmax, firstmax, globalmax")
    p.add_argument("--matrix", choices=("auto", "dense", "sparse"), default="auto",
                   help="consensus matrices: exact n x n (dense), estimated in linear memory (sparse), or "
                        "dense while it fits the memory budget (default auto)")
    p.add_argument("--pair-tolerance", type=float, default=None, metavar="SE",
                   help="sparse route: the largest standard error of PAC and area; 0.25 / SE^2 random object "
                        "pairs are read (default 0.0005: a million pairs), every pair when that is all of them")
    p.add_argument("--sketch", type=_positive_int, default=None, metavar="S",
                   help="run on S objects of the data (a geometric sketch, Hie et al. 2019) and label every other "
                        "object by the nearest consensus centroid (default: two sketches of 2000 objects above "
                        "20000 objects with --method monti; --matrix dense or sparse runs on every object)")
    p.add_argument("--sketch-method", choices=("geometric", "uniform"), default="geometric",
                   help="geometric (default: covers the data's principal subspace, keeps rare regions) or uniform "
                        "(a simple random sample)")
    p.add_argument("--propagation", choices=("centroid", "knn"), default="centroid",
                   help="with --sketch: label every other object by the nearest consensus centroid (default) or by "
                        "a vote of its 15 nearest sketch objects (knn)")
    p.add_argument("--sketches", type=_positive_int, default=None, metavar="N",
                   help="with a sketch: N independent sketches, reporting the K each chose and how far their labels "
                        "agree (default 1 with --sketch, 2 with the automatic sketch)")
    _add_generation_options(p, partitions=50, what="basic partitions per subsample (consensus methods only)")
    p.add_argument("--method-param", action="append", metavar="KEY=VALUE", help="parameter for the method")
    p.add_argument("-o", "--out", metavar="FILE",
                   help=_OUT_HELP.replace("the labels", "the labels at the recommended K", 1)
                   .replace("obs['cclust']", "obs['cclust_k<K>'], the table in uns['cclust_select_k']"))
    p.add_argument("--plot", metavar="FILE.png",
                   help="consensus CDF, delta area and PAC curves; FILE-heatmap.png (the consensus matrix at the "
                        "recommended K with its dendrogram and clusters), FILE-tracking.png (each object's "
                        "cluster across K) and FILE-clusters.png (each cluster's consensus and stability) beside it "
                        "(needs cclust[plot])")
    _add_data_options(p)
    _add_common_output(p, comparison=False)
    p.set_defaults(func=select_k)

    add_report_parser(sub, _add_data_options, _positive_int, _seed, _jobs)

    p = sub.add_parser("evaluate", help="rank the algorithms of a heterogeneous ensemble; trim and reweigh (diceR)",
                       description="Score every algorithm of a heterogeneous ensemble of DATA on internal validity "
                                   "indices, rank them, and optionally keep the best (trim) and weight them by rank "
                                   "(reweigh), as diceR's consensus_evaluate does (Chiu & Talhouk 2018).",
                       epilog=_EPILOG_EVALUATE, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("data", metavar="DATA", help="iris, wine, or a .csv/.tsv/.txt/.npy/.npz/.h5ad file")
    p.add_argument("-k", "--k", "--n-clusters", dest="k", type=_k_list, default=None, metavar="K",
                   help="clusters of each algorithm's labelling (default: the number of true classes); several "
                        "K, comma-separated (3,4,5), evaluate every (algorithm, K) as diceR's multi-K mode does, "
                        "each K on its own generated ensemble")
    p.add_argument("--k-method", type=_k_method, default=None, metavar="RULE",
                   help="with several K, the K that --trim/--reweigh/--fuse use: by default the number of true "
                        "classes, else the K most algorithms find least ambiguous (PAC), as diceR's k.method; "
                        "a K, or 'all'")
    p.add_argument("--matrix", choices=("auto", "dense", "sparse"), default="auto",
                   help="eac's route: dense n x n average linkage, or single linkage of the sparse kNN "
                        "co-association (linear memory); auto: dense within the memory budget (default)")
    _add_generation_options(p, partitions=100, what="basic partitions, shared by the generators without counts",
                            generator="kmeans,hierarchical,pam,gmm")
    p.add_argument("--ensemble", metavar="FILE", default=None,
                   help="evaluate the partitions in FILE (as `cclust fuse` reads them; its header names the "
                        "algorithms) instead of generating them")
    p.add_argument("-m", "--method", default="eac", metavar="M",
                   help="consensus method fusing each algorithm's partitions for scoring (default eac)")
    p.add_argument("--trim", type=_positive_int, default=None, metavar="N",
                   help="keep the partitions of the N best-ranked algorithms (diceR's trim; no trimming when there "
                        "are N or fewer)")
    p.add_argument("--reweigh", action="store_true",
                   help="weight each kept algorithm's partitions by its rank (Borda points)")
    p.add_argument("--fuse", metavar="M", default=None,
                   help="fuse the trimmed/reweighed ensemble with consensus method M and report it")
    p.add_argument("--save-ensemble", metavar="FILE",
                   help="write the (trimmed) partitions, as `cclust run --save-ensemble` does")
    p.add_argument("--plot", metavar="FILE.png",
                   help="each algorithm's rank (colour) and value (text) on every index, one panel per K "
                        "(needs cclust[plot])")
    _add_data_options(p)
    _add_common_output(p, comparison=False)
    p.set_defaults(func=evaluate)

    p = sub.add_parser("markers", help="which features set each cluster apart (Wilcoxon or t-test, AUROC, FDR)",
                       description="Test every feature of DATA in every cluster against all the other objects "
                                   "(cclust.markers) and print each cluster's highest-scoring features.",
                       epilog=_EPILOG_MARKERS, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("data", metavar="DATA", help="iris, wine, or a .csv/.tsv/.txt/.npy/.npz/.h5ad file")
    p.add_argument("--labels", metavar="FILE", default=None,
                   help="the clusters: one label per object of DATA, in its order (.csv/.tsv/.txt with one column, "
                        "or a column named 'label' as `cclust run -o` writes it; or an .npy vector)")
    p.add_argument("--labels-column", default=None, metavar="NAME|INDEX",
                   help="the clusters are a column of DATA (CSV: header name or 0-based index) or an obs column "
                        "(.h5ad), e.g. louvain; refused, unless --force, when its values are all different or "
                        "fractional")
    p.add_argument("--method", choices=("wilcoxon", "t-test"), default="wilcoxon",
                   help="wilcoxon (default: the rank-sum test with tie correction) or t-test (Welch's)")
    p.add_argument("--top", type=_positive_int, default=None, metavar="N",
                   help="features printed per cluster (default 5); with -o, also the rows written per cluster "
                        "(default: every feature)")
    p.add_argument("-o", "--out", metavar="FILE", help="write the table (cluster, feature, score, auroc, p_value, "
                                                       "p_value_adjusted) to a .csv or .tsv file")
    p.add_argument("--plot", metavar="FILE.png", help="dot plot of each cluster's best features (the --top best, "
                                                      "3 by default) in every cluster (needs cclust[plot])")
    p.add_argument("--header", choices=("auto", "yes", "no"), default="auto",
                   help="whether the CSV's first row names the columns (default: detect)")
    _add_reading_options(p, "a feature")
    p.add_argument("--decimal", choices=(".", ","), default=".", metavar="MARK",
                   help="decimal mark of the numbers: '.' (default) or ','")
    p.add_argument("--samples-in-columns", "--transpose", dest="samples_in_columns", action="store_true",
                   help="the objects are the columns (genes x samples); --id-column names the features")
    p.add_argument("--force", action="store_true",
                   help="use --labels-column even when its values are all different or fractional numbers")
    p.add_argument("--layer", default=None, metavar="NAME", help=".h5ad DATA: test the AnnData's layer NAME")
    p.add_argument("--use-rep", default=None, metavar="KEY", help=".h5ad DATA: test the AnnData's obsm[KEY]")
    p.set_defaults(func=markers, missing_features="error", thousands=None, standardize=False, save_ensemble=None)

    p = sub.add_parser("methods", help="list the registry (consensus methods, generators, metrics, utilities)",
                       description="List registered names with kind, providing distribution and description.")
    p.add_argument("--kind", choices=("consensus", "generator", "metric", "utility", "all"), default="all",
                   help="only this kind (default all)")
    p.add_argument("--format", choices=("table", "csv", "json"), default="table", help="output format")
    p.set_defaults(func=methods)

    p = sub.add_parser("show-config", help="versions, OpenMP, threads, extras and plugins",
                       description="Print versions, OpenMP support, threads, optional extras and plugins.")
    p.set_defaults(func=show_config)
    return parser


def _run_or_replay(args, out=None):
    """``cclust run``, or with ``--from-manifest`` the replay of a report's run."""
    if args.from_manifest:
        defaults = vars(build_parser().parse_args(["run", "iris"]))
        return replay_manifest(args, defaults, out)
    if args.data is None:
        raise UserError("run needs DATA, or --from-manifest FILE to replay a report (see `cclust run --help`).")
    return run(args, out)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``cclust`` command.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after the program name; default ``sys.argv[1:]``.

    Returns
    -------
    status : int
        0 on success; 2 for a user error, reported as one line ``cclust: error: ...`` on
        standard error; 130 when interrupted (Ctrl-C), 143 when terminated (SIGTERM: ``kill PID``,
        a batch scheduler's time limit), either after removing any file half-written. Unexpected
        internal errors propagate.

    Examples
    --------
    >>> main(["methods", "--kind", "utility", "--format", "csv"])  # doctest: +ELLIPSIS
    name,kind,provider,description
    nuc,utility,cclust,...
    0
    """
    from cclust.errors import CclustError

    try:
        with terminate_as_interrupt():
            args = build_parser().parse_args(argv)
            args.argv = list(sys.argv[1:] if argv is None else argv)  # the command line a report's manifest records
            return args.func(args)
    except SystemExit as exc:  # --help and --version
        return exc.code if isinstance(exc.code, int) else 0
    except (UserError, CclustError) as exc:
        _error(str(exc))
    except Terminated:  # kill PID, a scheduler's time limit: cleaned up as for Ctrl-C
        print("cclust: terminated", file=sys.stderr)
        return 143
    except KeyboardInterrupt:
        print("cclust: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `cclust methods | head`: the reader left; exit quietly
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):  # stdout without a file descriptor (captured)
            pass
        return 0
    return 2


def _error(message):
    print(f"cclust: error: {' '.join(message.split())}", file=sys.stderr)
