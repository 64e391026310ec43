"""``ipcsim plot OUT...``: plot forces and contact pairs of finished runs (PNG)."""
from __future__ import annotations


def add_parser(sub, debug) -> None:
    plot = sub.add_parser("plot", parents=[debug], help="plot forces and contact pairs of finished runs (PNG)",
                          description="Plot the contact force (x, y, z; friction dashed) on one body and the "
                                      "number of contact pairs over time from OUT/forces.csv and OUT/stats.csv, "
                                      "one colour per run, into a PNG.")
    plot.add_argument("out", nargs="+", metavar="OUT", help="output directories of runs (overlaid)")
    plot.add_argument("--body", metavar="NAME_OR_INDEX",
                      help="collision body whose force is plotted: its name or index (default 0)")
    plot.add_argument("-o", "--output", metavar="FILE.png",
                      help="the PNG (default OUT/forces.png for one run, ./forces.png for several)")
    plot.add_argument("--labels", metavar="A,B,...", help="legend names, one per run (default the directory names)")
    plot.set_defaults(func=command)


def command(args) -> int:
    from ..app.plots import parse_labels, plot_runs

    path = plot_runs(args.out, body=args.body, output=args.output, labels=parse_labels(args.labels))
    print(f"plot: {path}")
    return 0
