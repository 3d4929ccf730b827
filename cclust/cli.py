"""The ``cclust`` command.

``cclust run DATA`` generates basic partitions of DATA (a bundled dataset name such as ``iris``
or ``wine``, or an ``.npz`` file holding ``X`` and optionally ``y``), fuses them with KCC under
every utility of 001 (U and NU forms; ULp with p = 5 and 8) and prints ARI, NMI (when true
labels are known), Gamma and the time of each. User errors print one line and exit 2.
"""
import argparse
import sys
import time

import numpy as np

#: (label, utility, p) rows of the comparison: 001 Tables 4 and 5
KCC_UTILITIES = (
    ("Uc", "uc", None), ("UH", "uh", None), ("Ucos", "ucos", None),
    ("UL5", "ulp", 5.0), ("UL8", "ulp", 8.0),
    ("NUc", "nuc", None), ("NUH", "nuh", None), ("NUcos", "nucos", None),
    ("NUL5", "nulp", 5.0), ("NUL8", "nulp", 8.0),
)


class UserError(Exception):
    """A problem with what the user asked for: reported in one line, no traceback."""


def load_data(source):
    """(X, y or None, description) from a bundled dataset name or an .npz file."""
    from cclust import datasets

    if source in datasets.names():
        X, y = datasets.load(source)
        return X, y, f"bundled dataset {source!r}"
    if source.endswith(".npz"):
        try:
            with np.load(source, allow_pickle=False) as data:
                if "X" not in data.files:
                    raise UserError(f"{source}: the .npz file has no array named 'X' (it has {data.files}).")
                X = np.asarray(data["X"], dtype=np.float64)
                y = np.asarray(data["y"]) if "y" in data.files else None
        except OSError as exc:
            raise UserError(f"{source}: cannot read it ({exc}).") from None
        except ValueError as exc:
            raise UserError(f"{source}: {exc}") from None
        return X, y, source
    raise UserError(
        f"DATA must be a bundled dataset ({', '.join(datasets.names())}) or an .npz file with X "
        f"(and y), got {source!r}."
    )


def _table(rows, header):
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    line = "  ".join(f"{h:>{w}}" for h, w in zip(header, widths))
    out = [line, "-" * len(line)]
    out += ["  ".join(f"{c:>{w}}" for c, w in zip(row, widths)) for row in rows]
    return "\n".join(out)


def run(args, out=None):
    import cclust

    out = sys.stdout if out is None else out

    X, y, what = load_data(args.data)
    k = args.k if args.k is not None else (len(np.unique(y)) if y is not None else None)
    if k is None:
        raise UserError("give the number of clusters with -k (DATA has no true labels to take it from).")
    if not 2 <= k <= X.shape[0]:
        raise UserError(f"-k must be between 2 and the number of objects ({X.shape[0]}), got {k}.")
    start = time.perf_counter()
    ensemble = cclust.generate(args.generator, X, k, n_partitions=args.partitions, random_state=args.seed)
    gen_time = time.perf_counter() - start
    print(f"{what}: {X.shape[0]} objects, {X.shape[1]} features; {args.partitions} {args.generator} "
          f"partitions in {gen_time:.3f} s; K = {k}", file=out)
    ari, nmi = cclust.get("ari"), cclust.get("nmi")
    rows = []
    for label, name, p in KCC_UTILITIES:
        start = time.perf_counter()
        res = cclust.consensus("kcc", ensemble, k, utility=name, p=p, random_state=args.seed)
        took = time.perf_counter() - start
        scores = [f"{ari(y, res.labels):.4f}", f"{nmi(y, res.labels):.4f}"] if y is not None else ["-", "-"]
        rows.append([label] + scores + [f"{res.objective:.5f}", f"{took * 1000:.1f}"])
    print(_table(rows, ["utility", "ARI", "NMI", "Gamma", "ms"]), file=out)
    return 0


def build_parser():
    parser = argparse.ArgumentParser(prog="cclust", description="Consensus clustering from the command line.")
    sub = parser.add_subparsers(dest="command", required=True)
    p_run = sub.add_parser("run", help="generate basic partitions and fuse them with KCC under every utility")
    p_run.add_argument("data", help="bundled dataset name (iris, wine) or an .npz file with X (and y)")
    p_run.add_argument("-k", type=int, default=None, help="number of consensus clusters (default: classes of y)")
    p_run.add_argument("--generator", default="kmeans", help="basic-partition generator (default kmeans)")
    p_run.add_argument("--partitions", type=int, default=100, help="number of basic partitions (default 100)")
    p_run.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p_run.set_defaults(func=run)
    return parser


def main(argv=None):
    from cclust.errors import CclustError

    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (UserError, CclustError) as exc:
        print(f"cclust: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
