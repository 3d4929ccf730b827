"""The report as one HTML file: inline CSS, figures as PNG data URIs, the manifest as a JSON
block; nothing is loaded from anywhere, so the page opens offline and makes no request.
"""
import base64
import dataclasses
import html
import io
import json
import math

import numpy as np

from cclust.report._manifest import html_block

#: the consensus heatmap is n x n: above this many objects it shows a stratified subsample
#: (every cluster in proportion, each at least once), and the page says so
HEATMAP_OBJECTS = 1000

_CSS = """
body { font-family: sans-serif; max-width: 68em; margin: 1.5em auto; padding: 0 1em; color: #222; line-height: 1.4; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; border-bottom: 1px solid #ccc; margin-top: 1.8em; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.92em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: right; }
th { background: #f2f2f2; } td:first-child, th:first-child, td.text { text-align: left; }
tr.chosen td { font-weight: bold; background: #eef5ff; }
figure { margin: 0.8em 0; } figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { font-size: 0.9em; color: #555; }
.answer { font-size: 1.1em; padding: 0.6em 0.8em; background: #f6f6f6; border-left: 4px solid #4477aa; }
.warning { color: #8a4b00; } pre { background: #f6f6f6; padding: 0.6em; overflow-x: auto; font-size: 0.85em; }
"""


def _e(value):
    return html.escape(str(value), quote=True)


def _num(value, spec=".4f"):
    if value is None or (isinstance(value, (float, np.floating)) and not math.isfinite(value)):
        return "-"
    return format(value, spec)


def _pm(value, se, spec=".4f"):
    """``value ± se``, or the value alone when the error is unknown."""
    if se is None or (isinstance(se, (float, np.floating)) and not math.isfinite(se)):
        return _num(value, spec)
    return f"{_num(value, spec)} ± {_num(se, spec)}"


def _table(header, rows, chosen=None):
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = []
    for i, row in enumerate(rows):
        mark = ' class="chosen"' if chosen is not None and i == chosen else ""
        body.append(f"<tr{mark}>" + "".join(f'<td class="text">{_e(c)}</td>' if h == "note" else f"<td>{_e(c)}</td>"
                                            for h, c in zip(header, row)) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def png_data_uri(figure, dpi=90):
    """A matplotlib Figure as a ``data:image/png;base64,...`` URI."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _figure(figure, caption, alt):
    return (f'<figure><img src="{png_data_uri(figure)}" alt="{_e(alt)}">'
            f"<figcaption>{_e(caption)}</figcaption></figure>")


# -- sections ----------------------------------------------------------------------------------
def _data_section(info, X, feature_names, params):
    n, d = X.shape
    lines = [f"<p>{_e(info['description'])}: {n} objects, {d} features"
             + (f", {info['classes']} true classes (used only to score the methods, never to choose)"
                if info.get("classes") else "") + ".</p>"]
    if params["standardize"]:
        lines.append("<p>Every feature was z-scored before clustering; the numbers below are after it.</p>")
    names = feature_names if feature_names is not None else [str(j) for j in range(d)]
    shown = min(d, 20)
    rows = [[names[j], _num(float(X[:, j].mean()), ".4g"), _num(float(X[:, j].std()), ".4g"),
             _num(float(X[:, j].min()), ".4g"), _num(float(X[:, j].max()), ".4g")] for j in range(shown)]
    lines.append(_table(["feature", "mean", "standard deviation", "min", "max"], rows))
    if shown < d:
        lines.append(f"<p>The first {shown} of {d} features are shown.</p>")
    return "<h2>Data</h2>" + "".join(lines)


def _diversity_section(parts, params):
    ensemble, div = parts["ensemble"], parts["diversity"]
    kis = np.asarray(ensemble.n_clusters)
    return ("<h2>Ensemble and its diversity</h2>"
            f"<p>{ensemble.n_partitions} basic partitions made by the generator {_e(params['generator'])} at "
            f"K = {parts['k']} (seed {params['random_state']}; clusters per partition {kis.min()} to {kis.max()}).</p>"
            f"<p>Agreement between basic partitions: each partition's mean NMI with the others is "
            f"{_pm(div['nmi_mean'], div['nmi_sd'])} (mean ± standard deviation over the {div['partitions']} "
            "partitions; 1 would mean every partition is the same, so the ensemble would add nothing to one "
            "clustering). The chosen labels agree with the partitions at ANMI "
            f"{_num(div['anmi_chosen'])} (average NMI with the basic partitions, Strehl &amp; Ghosh 2002).</p>")


def _choice_section(select, plotting, figures):
    table = select.as_table()
    ks = table["k"]
    estimated = "pac_se" in table
    header = ["K", "area", "delta area", "PAC"]
    if "pac_reference_mean" in table:
        header += ["reference PAC (mean ± sd)", "RCSI ± se", "p-value"]
    if "gap" in table:
        header += ["gap ± se"]
    rows = []
    from cclust.selection import format_p

    for i, k in enumerate(ks):
        row = [k, _pm(table["area"][i], table["area_se"][i] if estimated else None), _num(table["delta_area"][i]),
               _pm(table["pac"][i], table["pac_se"][i] if estimated else None)]
        if "pac_reference_mean" in table:
            row += [_pm(table["pac_reference_mean"][i], table["pac_reference_sd"][i]),
                    _pm(table["rcsi"][i], table["rcsi_se"][i], ".3f"), format_p(table["p_value"][i])]
        if "gap" in table:
            row += [_pm(table["gap"][i], table["gap_se"][i])]
        rows.append(row)
    chosen = ks.index(select.best_k) if select.best_k in ks else None
    how = f"monti ({select.inner})" if select.method == "monti" else select.method
    parts = ["<h2>Choosing K</h2>",
             f"<p>select_k with {_e(how)}: {select.n_resamples} resamples per K, {_e(select.route)} consensus matrix"
             + (f", a reference null of {select.n_references} {_e(select.null)} data sets of the data's shape "
                f"(John et al. 2020), alpha {select.alpha:g} with Bonferroni's correction over the K tried"
                if select.null is not None else ", no reference null (Monti et al. 2003; Senbabaoglu et al. 2014)")
             + ".</p>"]
    if select.sketch is not None:
        parts.append(f"<p>Run on a {_e(select.sketch_method)} sketch of {select.sketch.shape[0]} of the "
                     f"{len(select.labels[select.best_k])} objects (Hie et al. 2019); the other objects are labelled "
                     f"from it ({_e(select.sketch_propagation)}). The consensus matrices, and so the heatmap and the "
                     "item consensus below, are those of the sketch's objects.</p>")
    if select.best_k == 1:
        parts.append(f'<p class="answer">Answer: K = 1 ({_e(select.criterion)}), {_e(select.reason)}</p>')
    else:
        parts.append(f'<p class="answer">Chosen K = {select.best_k} ({_e(select.criterion)}): {_e(select.reason)}</p>')
    parts.extend(f'<p class="warning">Warning: {_e(text)}</p>' for text in select.warnings)
    parts.append(_table(header, rows, chosen))
    parts.append("<p>area: area under the consensus CDF; PAC: proportion of ambiguous clustering, the share of "
                 "object pairs with consensus between 0.1 and 0.9 (lower is more stable); RCSI: relative cluster "
                 "stability index against the references; p-value: the chance that data without clusters is at "
                 "least as stable." + (" ± values are standard errors of the estimate from sampled object pairs."
                                        if estimated else "") + "</p>")
    if figures:
        parts.append(_figure(plotting.plot_select_k(select),
                             "Consensus CDF, delta area and PAC per K"
                             + (", and the data's PAC against its reference data sets." if select.null is not None
                                else "."), "consensus CDF, delta area and PAC"))
    return "".join(parts)


def _stability_section(select, k, plotting, figures):
    table = select.cluster_table(k)
    n_res = select.cluster_stability[k].n_resamples
    rows = [[c, table["size"][c], _num(table["cluster_consensus"][c], ".3f"), _num(table["mean_jaccard"][c], ".3f"),
             table["dissolved"][c], table["recovered"][c]] for c in table["cluster"]]
    parts = [f"<h2>Per-cluster stability at K = {k}</h2>",
             f"<p>Cluster consensus: the mean consensus of the pairs of a cluster's members (Monti et al. 2003). "
             f"Jaccard: each cluster's best Jaccard similarity with a cluster of each resample's own clustering, "
             f"averaged over the {n_res} resamples (Hennig 2007: below 0.6 not stable, above 0.85 highly stable); "
             "dissolved and recovered count the resamples with a Jaccard of at most 0.5 and above 0.75.</p>",
             _table(["cluster", "size", "cluster consensus", "mean Jaccard", "dissolved", "recovered"], rows)]
    if figures:
        parts.append(_figure(plotting.plot_cluster_stability(select, k=k).figure,
                             "Cluster consensus and mean Jaccard of every cluster.", "cluster stability"))
    return "".join(parts)


def _heatmap_section(select, k, plotting, figures):
    matrix = (select.consensus_matrices or {}).get(k)
    n = matrix.shape[0] if matrix is not None else 0
    parts = [f"<h2>Consensus heatmap at K = {k}</h2>"]
    if matrix is None:
        return parts[0] + "<p>No consensus matrix was kept at this K.</p>"
    if select.route == "sparse":
        parts.append("<p>On the sparse route select_k keeps each object's strongest consensus entries only (a "
                     "sparse graph); the entries it did not keep are drawn as 0.</p>")
    if n > HEATMAP_OBJECTS:
        parts.append(f"<p>The consensus matrix has {n} x {n} entries: the heatmap draws a stratified subsample of "
                     f"{HEATMAP_OBJECTS} objects (every cluster in proportion, each at least once; seed 0), ordered by "
                     "the average-linkage tree of the subsample.</p>")
    if figures:
        # on a sketch the matrices are the sketch's objects': the heatmap reads their labels only
        sketched = select if select.sketch is None else dataclasses.replace(
            select, labels={key: np.asarray(v)[np.asarray(select.sketch)] for key, v in select.labels.items()})
        parts.append(_figure(plotting.plot_consensus_heatmap(sketched, k=k, max_objects=HEATMAP_OBJECTS),
                             "Consensus matrix with its dendrogram and clusters: dark blocks on the diagonal are "
                             "clusters whose members are clustered together in most resamples.", "consensus heatmap"))
        parts.append(_figure(plotting.plot_tracking(select).figure,
                             "Tracking plot: each object's cluster at each K (Wilkerson & Hayes 2010).",
                             "tracking plot"))
    return "".join(parts)


def _item_section(select, k, figures):
    item = np.asarray(select.item_consensus[k])
    labels = np.asarray(select.labels[k], dtype=np.int64)
    if labels.shape[0] != item.shape[0] and select.sketch is not None:
        labels = labels[np.asarray(select.sketch)]
    own = item[np.arange(item.shape[0]), labels]
    rows, groups = [], []
    for c in range(item.shape[1]):
        values = own[labels == c]
        values = values[np.isfinite(values)]
        groups.append(values)
        if values.size:
            q1, median = np.quantile(values, [0.25, 0.5])
            rows.append([c, values.size, _num(float(values.min()), ".3f"), _num(float(q1), ".3f"),
                         _num(float(median), ".3f"), int((values < 0.5).sum())])
        else:
            rows.append([c, 0, "-", "-", "-", 0])
    parts = [f"<h2>Item consensus at K = {k}</h2>",
             "<p>Each object's item consensus is its mean consensus with the other members of its cluster "
             "(Monti et al. 2003; ConsensusClusterPlus's item consensus): near 1, the object always clusters with "
             "them; below 0.5, more often apart than together.</p>",
             _table(["cluster", "objects", "min", "lower quartile", "median", "below 0.5"], rows)]
    if figures and any(g.size for g in groups):
        from matplotlib.figure import Figure

        figure = Figure(figsize=(6.4, 3.2), layout="constrained")
        ax = figure.add_subplot()
        ax.boxplot([g if g.size else [np.nan] for g in groups])
        ax.set_xticks(range(1, len(groups) + 1), [str(c) for c in range(len(groups))])
        ax.set_xlabel("cluster")
        ax.set_ylabel("item consensus with own cluster")
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(f"Item consensus at K = {k}")
        parts.append(_figure(figure, "Distribution of each cluster's members' item consensus.", "item consensus"))
    return "".join(parts)


def _methods_section(parts_, params, plotting, figures):
    rows, k = parts_["methods"], parts_["k"]
    y_known = any("ari_true" in r for r in rows)
    header = ["method", "K", "agreement (ANMI)", "ARI with the chosen labels"]
    header += ["ARI with the true classes"] if y_known else []
    header += ["seconds", "note"]
    table = []
    for r in rows:
        line = [r["method"], r.get("n_clusters", "-"), _num(r.get("agreement")), _num(r.get("ari_chosen"))]
        line += [_num(r.get("ari_true"))] if y_known else []
        line += [_num(r["seconds"], ".2f"), r["note"] or ""]
        table.append(line)
    out = [f"<h2>Method comparison at K = {k}</h2>",
           f"<p>Every method fuses the same {parts_['ensemble'].n_partitions} basic partitions (seed "
           f"{params['random_state']}). Agreement: the average NMI of the consensus with the basic partitions "
           "(ANMI, Strehl &amp; Ghosh 2002; higher is better, needs no true labels). Seconds depend on the machine "
           "and its load; they are not part of the manifest.</p>", _table(header, table)]
    scores = {r["method"]: {"agreement": r["agreement"]} for r in rows if r.get("agreement") is not None}
    if figures and scores:
        out.append(_figure(plotting.plot_method_comparison(scores, metric="agreement").figure,
                           "Agreement (ANMI) of each method's consensus.", "method comparison"))
    return "".join(out)


def _markers_section(parts_, n_top, plotting, figures):
    table, k = parts_["markers"], parts_["k"]
    if table is None:
        return "<h2>Markers</h2><p>The chosen labels have a single cluster: there is nothing to compare.</p>"
    from cclust.selection import format_p

    # the table is sorted by cluster, then by score: the first n_top rows of each cluster are its best
    rank = {}
    shown = []
    for i, cluster in enumerate(table["cluster"]):
        rank[cluster] = rank.get(cluster, 0) + 1
        if rank[cluster] <= n_top:
            shown.append(i)
    rows = [[table["cluster"][i], table["feature"][i], _num(table["score"][i], ".3g"), _num(table["auroc"][i], ".3f"),
             format_p(table["p_value_adjusted"][i])] for i in shown]
    out = [f"<h2>Markers per cluster at K = {k}</h2>",
           f"<p>The {n_top} best-ranked features of each cluster against the other objects: Wilcoxon rank-sum z-score, "
           "AUROC (0.5: no separation) and the p-value adjusted over the features by Benjamini &amp; Hochberg "
           "(1995). The clusters were found on these same features, so the p-values are optimistic: read them as "
           "a ranking, not as a test.</p>",
           _table(["cluster", "feature", "score", "AUROC", "adjusted p-value"], rows)]
    if figures:
        out.append(_figure(plotting.plot_markers(table, n_top=min(3, n_top)).figure,
                           "Dot plot of the markers: score (colour) and AUROC (size) in every cluster.", "markers"))
    return "".join(out)


def _manifest_section(manifest):
    replay = ("cclust run --from-manifest REPORT.html" if manifest.get("command")
              else "cclust run DATA --from-manifest REPORT.html (DATA: the same features)")
    text = json.dumps(manifest, indent=2)
    return ("<h2>Reproducibility manifest</h2>"
            f"<p>Versions, every parameter, the seed and the SHA-256 of the input. <code>{_e(replay)}</code> "
            "replays the run from this page (or from the manifest's .json file), checks the input and says whether "
            "the labels are identical to the recorded ones.</p>"
            f"<details><summary>manifest (JSON)</summary><pre>{_e(text)}</pre></details>" + html_block(manifest))


def render(parts, manifest, info, feature_names=None, figures=True):
    """The whole page as a string. ``parts`` from :func:`cclust.report._build.compute`."""
    import cclust.plotting as plotting

    select, k, params = parts["select"], parts["k"], manifest["parameters"]
    title = f"cclust report: {info['description']}"
    body = [f"<h1>{_e(title)}</h1>",
            f"<p>cclust {_e(manifest['versions']['cclust'])}; seed {params['random_state']}; K tried "
            f"{params['k_range'][0]} to {params['k_range'][1]}. Consensus clustering as in Monti et al. (2003), "
            "the report's layout after cola's cola_report (Gu, Schlesner &amp; Hübschmann 2021).</p>",
            _data_section(info, parts["X"], feature_names, params),
            _choice_section(select, plotting, figures)]
    if select.best_k == 1:
        body.append(f"<p class=\"answer\">The sections below show K = {k}, the smallest K tried above 1, for "
                    "inspection only: the evidence above does not support clusters.</p>")
    body += [_stability_section(select, k, plotting, figures), _heatmap_section(select, k, plotting, figures),
             _item_section(select, k, figures), _diversity_section(parts, params),
             _methods_section(parts, params, plotting, figures), _markers_section(parts, params["n_top_markers"], plotting, figures),
             _manifest_section(manifest)]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")
