"""The report as one HTML file: the sections of a select_k result (cclust.selection._html) with the
data, the ensemble, the method comparison, the markers and the manifest as a JSON block; nothing is
loaded from anywhere, so the page opens offline and makes no request.
"""
import json

import numpy as np

from cclust.report._manifest import html_block
from cclust.selection._html import (CSS, choice_section, escape, heatmap_section, html_figure, html_table,
                                     item_section, num, plus_minus, stability_section)


# -- sections ----------------------------------------------------------------------------------
def _data_section(info, X, feature_names, params):
    n, d = X.shape
    lines = [f"<p>{escape(info['description'])}: {n} objects, {d} features"
             + (f", {info['classes']} true classes (used only to score the methods, never to choose)"
                if info.get("classes") else "") + ".</p>"]
    if params["standardize"]:
        lines.append("<p>Every feature was z-scored before clustering; the numbers below are after it.</p>")
    names = feature_names if feature_names is not None else [str(j) for j in range(d)]
    shown = min(d, 20)
    rows = [[names[j], num(float(X[:, j].mean()), ".4g"), num(float(X[:, j].std()), ".4g"),
             num(float(X[:, j].min()), ".4g"), num(float(X[:, j].max()), ".4g")] for j in range(shown)]
    lines.append(html_table(["feature", "mean", "standard deviation", "min", "max"], rows))
    if shown < d:
        lines.append(f"<p>The first {shown} of {d} features are shown.</p>")
    return "<h2>Data</h2>" + "".join(lines)


def _diversity_section(parts, params):
    ensemble, div = parts["ensemble"], parts["diversity"]
    kis = np.asarray(ensemble.n_clusters)
    return ("<h2>Ensemble and its diversity</h2>"
            f"<p>{ensemble.n_partitions} basic partitions made by the generator {escape(params['generator'])} at "
            f"K = {parts['k']} (seed {params['random_state']}; clusters per partition {kis.min()} to {kis.max()}).</p>"
            f"<p>Agreement between basic partitions: each partition's mean NMI with the others is "
            f"{plus_minus(div['nmi_mean'], div['nmi_sd'])} (mean ± standard deviation over the {div['partitions']} "
            "partitions; 1 would mean every partition is the same, so the ensemble would add nothing to one "
            "clustering). The chosen labels agree with the partitions at ANMI "
            f"{num(div['anmi_chosen'])} (average NMI with the basic partitions, Strehl &amp; Ghosh 2002).</p>")


def _methods_section(parts_, params, plotting, figures):
    rows, k = parts_["methods"], parts_["k"]
    y_known = any("ari_true" in r for r in rows)
    header = ["method", "K", "agreement (ANMI)", "ARI with the chosen labels"]
    header += ["ARI with the true classes"] if y_known else []
    header += ["seconds", "note"]
    table = []
    for r in rows:
        line = [r["method"], r.get("n_clusters", "-"), num(r.get("agreement")), num(r.get("ari_chosen"))]
        line += [num(r.get("ari_true"))] if y_known else []
        line += [num(r["seconds"], ".2f"), r["note"] or ""]
        table.append(line)
    out = [f"<h2>Method comparison at K = {k}</h2>",
           f"<p>Every method fuses the same {parts_['ensemble'].n_partitions} basic partitions (seed "
           f"{params['random_state']}). Agreement: the average NMI of the consensus with the basic partitions "
           "(ANMI, Strehl &amp; Ghosh 2002; higher is better, needs no true labels). Seconds depend on the machine "
           "and its load; they are not part of the manifest.</p>", html_table(header, table)]
    scores = {r["method"]: {"agreement": r["agreement"]} for r in rows if r.get("agreement") is not None}
    if figures and scores:
        out.append(html_figure(plotting.plot_method_comparison(scores, metric="agreement").figure,
                           "Agreement (ANMI) of each method's consensus.", "method comparison"))
    return "".join(out)


def _markers_section(parts_, n_top, plotting, figures):
    table, k = parts_["markers"], parts_["k"]
    if table is None:
        return "<h2>Markers</h2><p>The chosen labels have a single cluster: there is nothing to compare.</p>"
    from cclust._reference import format_p

    # the table is sorted by cluster, then by score: the first n_top rows of each cluster are its best
    rank = {}
    shown = []
    for i, cluster in enumerate(table["cluster"]):
        rank[cluster] = rank.get(cluster, 0) + 1
        if rank[cluster] <= n_top:
            shown.append(i)
    rows = [[table["cluster"][i], table["feature"][i], num(table["score"][i], ".3g"), num(table["auroc"][i], ".3f"),
             format_p(table["p_value_adjusted"][i])] for i in shown]
    out = [f"<h2>Markers per cluster at K = {k}</h2>",
           f"<p>The {n_top} best-ranked features of each cluster against the other objects: Wilcoxon rank-sum z-score, "
           "AUROC (0.5: no separation) and the p-value adjusted over the features by Benjamini &amp; Hochberg "
           "(1995). The clusters were found on these same features, so the p-values are optimistic: read them as "
           "a ranking, not as a test.</p>",
           html_table(["cluster", "feature", "score", "AUROC", "adjusted p-value"], rows)]
    if figures:
        out.append(html_figure(plotting.plot_markers(table, n_top=min(3, n_top)).figure,
                           "Dot plot of the markers: score (colour) and AUROC (size) in every cluster.", "markers"))
    return "".join(out)


def _manifest_section(manifest):
    replay = ("cclust run --from-manifest REPORT.html" if manifest.get("command")
              else "cclust run DATA --from-manifest REPORT.html (DATA: the same features)")
    text = json.dumps(manifest, indent=2)
    return ("<h2>Reproducibility manifest</h2>"
            f"<p>Versions, every parameter, the seed and the SHA-256 of the input. <code>{escape(replay)}</code> "
            "replays the run from this page (or from the manifest's .json file), checks the input and says whether "
            "the labels are identical to the recorded ones.</p>"
            f"<details><summary>manifest (JSON)</summary><pre>{escape(text)}</pre></details>" + html_block(manifest))


def render(parts, manifest, info, feature_names=None, figures=True):
    """The whole page as a string. ``parts`` from :func:`cclust.report._build.compute`."""
    import cclust.plotting as plotting

    select, k, params = parts["select"], parts["k"], manifest["parameters"]
    title = f"cclust report: {info['description']}"
    body = [f"<h1>{escape(title)}</h1>",
            f"<p>cclust {escape(manifest['versions']['cclust'])}; seed {params['random_state']}; K tried "
            f"{params['k_range'][0]} to {params['k_range'][1]}. Consensus clustering as in Monti et al. (2003), "
            "the report's layout after cola's cola_report (Gu, Schlesner &amp; Hübschmann 2021).</p>",
            _data_section(info, parts["X"], feature_names, params),
            choice_section(select, plotting, figures)]
    if select.best_k == 1:
        body.append(f"<p class=\"answer\">The sections below show K = {k}, the smallest K tried above 1, for "
                    "inspection only: the evidence above does not support clusters.</p>")
    body += [stability_section(select, k, plotting, figures), heatmap_section(select, k, plotting, figures),
             item_section(select, k, figures), _diversity_section(parts, params),
             _methods_section(parts, params, plotting, figures), _markers_section(parts, params["n_top_markers"], plotting, figures),
             _manifest_section(manifest)]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{escape(title)}</title><style>{CSS}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")
