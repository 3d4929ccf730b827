"""The HTML of a select_k result: the page building blocks (inline CSS, tables, figures as PNG
data URIs) and its sections (the choice of K with its reference null, per-cluster stability, the
consensus heatmap, item consensus), which :meth:`SelectKResult.to_html` puts on a page of its own
and the report (:mod:`cclust.report`) puts on its page. Nothing is loaded from anywhere, so a page
opens offline and makes no request.
"""
import base64
import dataclasses
import html
import io
import math

import numpy as np

from cclust._reference import format_p
from cclust.errors import ValidationError


CSS = """
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


#: the consensus heatmap is n x n: above this many objects it shows a stratified subsample
#: (every cluster in proportion, each at least once), and the page says so
HEATMAP_OBJECTS = 1000


def escape(value):
    return html.escape(str(value), quote=True)


def num(value, spec=".4f"):
    if value is None or (isinstance(value, (float, np.floating)) and not math.isfinite(value)):
        return "-"
    return format(value, spec)


def plus_minus(value, se, spec=".4f"):
    """``value ± se``, or the value alone when the error is unknown."""
    if se is None or (isinstance(se, (float, np.floating)) and not math.isfinite(se)):
        return num(value, spec)
    return f"{num(value, spec)} ± {num(se, spec)}"


def html_table(header, rows, chosen=None):
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = []
    for i, row in enumerate(rows):
        mark = ' class="chosen"' if chosen is not None and i == chosen else ""
        body.append(f"<tr{mark}>" + "".join(f'<td class="text">{escape(c)}</td>' if h == "note" else f"<td>{escape(c)}</td>"
                                            for h, c in zip(header, row)) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def png_data_uri(figure, dpi=90):
    """A matplotlib Figure as a ``data:image/png;base64,...`` URI."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def html_figure(figure, caption, alt):
    return (f'<figure><img src="{png_data_uri(figure)}" alt="{escape(alt)}">'
            f"<figcaption>{escape(caption)}</figcaption></figure>")


def choice_section(select, plotting, figures):
    table = select.as_table()
    ks = table["k"]
    estimated = "pac_se" in table
    header = ["K", "area", "delta area", "PAC"]
    if "pac_reference_mean" in table:
        header += ["reference PAC (mean ± sd)", "RCSI ± se", "p-value"]
    if "gap" in table:
        header += ["gap ± se"]
    rows = []

    for i, k in enumerate(ks):
        row = [k, plus_minus(table["area"][i], table["area_se"][i] if estimated else None), num(table["delta_area"][i]),
               plus_minus(table["pac"][i], table["pac_se"][i] if estimated else None)]
        if "pac_reference_mean" in table:
            row += [plus_minus(table["pac_reference_mean"][i], table["pac_reference_sd"][i]),
                    plus_minus(table["rcsi"][i], table["rcsi_se"][i], ".3f"), format_p(table["p_value"][i])]
        if "gap" in table:
            row += [plus_minus(table["gap"][i], table["gap_se"][i])]
        rows.append(row)
    chosen = ks.index(select.best_k) if select.best_k in ks else None
    how = f"monti ({select.inner})" if select.method == "monti" else select.method
    parts = ["<h2>Choosing K</h2>",
             f"<p>select_k with {escape(how)}: {select.n_resamples} resamples per K, {escape(select.route)} consensus matrix"
             + (f", a reference null of {select.n_references} {escape(select.null)} data sets of the data's shape "
                f"(John et al. 2020), alpha {select.alpha:g} with Bonferroni's correction over the K tried"
                if select.null is not None else ", no reference null (Monti et al. 2003; Senbabaoglu et al. 2014)")
             + ".</p>"]
    if select.sketch is not None:
        parts.append(f"<p>Run on a {escape(select.sketch_method)} sketch of {select.sketch.shape[0]} of the "
                     f"{len(select.labels[select.best_k])} objects (Hie et al. 2019); the other objects are labelled "
                     f"from it ({escape(select.sketch_propagation)}). The consensus matrices, and so the heatmap and the "
                     "item consensus below, are those of the sketch's objects.</p>")
    if select.best_k == 1:
        parts.append(f'<p class="answer">Answer: K = 1 ({escape(select.criterion)}), {escape(select.reason)}</p>')
    else:
        parts.append(f'<p class="answer">Chosen K = {select.best_k} ({escape(select.criterion)}): {escape(select.reason)}</p>')
    parts.extend(f'<p class="warning">Warning: {escape(text)}</p>' for text in select.warnings)
    parts.append(html_table(header, rows, chosen))
    parts.append("<p>area: area under the consensus CDF; PAC: proportion of ambiguous clustering, the share of "
                 "object pairs with consensus between 0.1 and 0.9 (lower is more stable); RCSI: relative cluster "
                 "stability index against the references; p-value: the chance that data without clusters is at "
                 "least as stable." + (" ± values are standard errors of the estimate from sampled object pairs."
                                        if estimated else "") + "</p>")
    if figures:
        parts.append(html_figure(plotting.plot_select_k(select),
                             "Consensus CDF, delta area and PAC per K"
                             + (", and the data's PAC against its reference data sets." if select.null is not None
                                else "."), "consensus CDF, delta area and PAC"))
    return "".join(parts)


def stability_section(select, k, plotting, figures):
    table = select.cluster_table(k)
    n_res = select.cluster_stability[k].n_resamples
    rows = [[c, table["size"][c], num(table["cluster_consensus"][c], ".3f"), num(table["mean_jaccard"][c], ".3f"),
             table["dissolved"][c], table["recovered"][c]] for c in table["cluster"]]
    parts = [f"<h2>Per-cluster stability at K = {k}</h2>",
             f"<p>Cluster consensus: the mean consensus of the pairs of a cluster's members (Monti et al. 2003). "
             f"Jaccard: each cluster's best Jaccard similarity with a cluster of each resample's own clustering, "
             f"averaged over the {n_res} resamples (Hennig 2007: below 0.6 not stable, above 0.85 highly stable); "
             "dissolved and recovered count the resamples with a Jaccard of at most 0.5 and above 0.75.</p>",
             html_table(["cluster", "size", "cluster consensus", "mean Jaccard", "dissolved", "recovered"], rows)]
    if figures:
        parts.append(html_figure(plotting.plot_cluster_stability(select, k=k).figure,
                             "Cluster consensus and mean Jaccard of every cluster.", "cluster stability"))
    return "".join(parts)


def heatmap_section(select, k, plotting, figures):
    matrix = (select.consensus_matrices or {}).get(k)
    n = matrix.shape[0] if matrix is not None else 0
    parts = [f"<h2>Consensus heatmap at K = {k}</h2>"]
    if matrix is None:
        return parts[0] + ("<p>No consensus matrix was kept at this K (select_k(..., keep_matrices=True) keeps "
                           "them).</p>")
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
        parts.append(html_figure(plotting.plot_consensus_heatmap(sketched, k=k, max_objects=HEATMAP_OBJECTS),
                             "Consensus matrix with its dendrogram and clusters: dark blocks on the diagonal are "
                             "clusters whose members are clustered together in most resamples.", "consensus heatmap"))
        parts.append(html_figure(plotting.plot_tracking(select).figure,
                             "Tracking plot: each object's cluster at each K (Wilkerson & Hayes 2010).",
                             "tracking plot"))
    return "".join(parts)


def item_section(select, k, figures):
    labels = np.asarray(select.labels[k], dtype=np.int64)
    if k in (select.sketch_item_consensus or {}):   # the sketch objects' rows, the others' are NaN
        item, labels = np.asarray(select.sketch_item_consensus[k]), labels[np.asarray(select.sketch)]
    else:
        item = np.asarray(select.item_consensus[k])
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
            rows.append([c, values.size, num(float(values.min()), ".3f"), num(float(q1), ".3f"),
                         num(float(median), ".3f"), int((values < 0.5).sum())])
        else:
            rows.append([c, 0, "-", "-", "-", 0])
    parts = [f"<h2>Item consensus at K = {k}</h2>",
             "<p>Each object's item consensus is its mean consensus with the other members of its cluster "
             "(Monti et al. 2003; ConsensusClusterPlus's item consensus): near 1, the object always clusters with "
             "them; below 0.5, more often apart than together.</p>",
             html_table(["cluster", "objects", "min", "lower quartile", "median", "below 0.5"], rows)]
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
        parts.append(html_figure(figure, "Distribution of each cluster's members' item consensus.", "item consensus"))
    return "".join(parts)


def page(select, k=None, figures=True):
    """One self-contained HTML page of a select_k result at K = ``k`` (default its best K; the
    smallest K above 1 when that is 1): the choice of K, per-cluster stability, the consensus
    heatmap (when the matrices were kept) and item consensus."""
    import cclust.plotting as plotting

    if k is None:
        k = select.best_k if select.best_k > 1 else next((int(v) for v in select.k_values if v > 1), None)
    if k is None or k not in select.labels:
        raise ValidationError(f"k={k!r} is not a K of this result (K tried: {[int(v) for v in select.k_values]}).")
    title = "cclust select_k"
    body = [f"<h1>{escape(title)}</h1>", choice_section(select, plotting, figures)]
    if select.best_k == 1:
        body.append(f"<p class=\"answer\">The sections below show K = {k}, for inspection only: the evidence above "
                    "does not support clusters.</p>")
    body += [stability_section(select, k, plotting, figures), heatmap_section(select, k, plotting, figures),
             item_section(select, k, figures)]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{escape(title)}</title><style>{CSS}</style></head><body>\n" + "\n".join(body)
            + "\n</body></html>\n")
