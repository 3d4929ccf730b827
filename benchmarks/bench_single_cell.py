"""The single-cell path on scanpy's pbmc68k_reduced (700 cells, 765 genes, shipped inside scanpy):
from the AnnData to a chosen K (select_k on obsm["X_pca"]), the labels in obs and the markers of
every cluster, in the five lines of the user guide's single-cell page; and choose_resolution
(chooseR's rule over Leiden resolutions) on the same AnnData's graph.

Each step is timed on its own (the imports and the data's loading are not counted), with the
load average beside the times: on a machine shared with other work the times grow with it.

    python benchmarks/bench_single_cell.py [--resolution] [--resamples 100] [--out report.md]
"""
import argparse
import os
import warnings

from _common import cpu_model, timed, write_report


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resolution", action="store_true", help="also time choose_resolution")
    parser.add_argument("--resamples", type=int, default=100, help="choose_resolution's subsamples (default 100)")
    parser.add_argument("--out", default=None, help="also write the report to this Markdown file")
    args = parser.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import scanpy as sc

        import cclust

        adata = sc.datasets.pbmc68k_reduced()
    load_before = os.getloadavg()
    _, select_wall, select_cpu = timed(lambda: cclust.select_k(adata, range(2, 11), use_rep="X_pca",
                                                               random_state=0))
    key = adata.uns["cclust_select_k"]["labels_key"]
    table, markers_wall, markers_cpu = timed(lambda: cclust.markers(adata.X, adata.obs[key],
                                                                    feature_names=adata.var_names))
    load_after = os.getloadavg()
    best = table.groupby("cluster").head(1)
    lines = [f"# The single-cell path on pbmc68k_reduced ({adata.n_obs} cells, {adata.n_vars} genes)", "",
             f"{cpu_model()}, {os.cpu_count()} logical cores; load average (1, 5, 15 min) "
             f"{', '.join(f'{v:.2f}' for v in load_before)} before and "
             f"{', '.join(f'{v:.2f}' for v in load_after)} after the timed steps.", "",
             "CPU seconds are this process's (all its threads): on an idle machine the wall time is at most "
             "that.", "",
             "| step | wall s | CPU s |", "| --- | ---: | ---: |",
             f"| select_k(adata, range(2, 11), use_rep='X_pca') -> obs[{key!r}] | {select_wall:.2f} | "
             f"{select_cpu:.2f} |",
             f"| markers of the {len(best)} clusters ({adata.n_vars} genes, Wilcoxon) | {markers_wall:.2f} | "
             f"{markers_cpu:.2f} |",
             f"| the five lines, data loaded | {select_wall + markers_wall:.2f} | {select_cpu + markers_cpu:.2f} |",
             "",
             "Best marker of each cluster: " + ", ".join(f"{c}: {f}" for c, f in zip(best["cluster"], best["feature"]))
             + "."]
    if args.resolution:
        result, seconds, cpu = timed(lambda: cclust.choose_resolution(adata, n_resamples=args.resamples,
                                                                      random_state=0))
        lines += ["", f"choose_resolution (Leiden on obsp['connectivities'], {len(result.resolutions)} resolutions, "
                      f"{args.resamples} subsamples): {seconds:.2f} s wall, {cpu:.2f} s CPU, load average "
                      f"{os.getloadavg()[0]:.2f}; recommended resolution {result.recommended:g} "
                      f"({int(result.n_clusters[list(result.resolutions).index(result.recommended)])} clusters).",
                  "", "```", result.summary(), "```"]
    write_report("\n".join(lines), args.out)


if __name__ == "__main__":
    main()
