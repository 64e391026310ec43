"""A picture of a sweep: one boolean metric (e.g. ``lifted_teddy``) over two swept parameters, from
OUT/summary.csv (matplotlib, Agg backend)."""
from __future__ import annotations

from pathlib import Path

from .table import read_table


def plot_success(table, x: str, y: str, column: str, output=None, value: str | None = None,
                 log_x: bool = False, log_y: bool = False) -> Path:
    """Scatter the runs of ``table`` (a summary.csv) at (x, y) parameter values: filled green where ``column``
    is True, red crosses where False, grey rings for runs that failed (status other than "ok"); with ``value``
    (a numeric column, e.g. ``rise_teddy`` [m]) its value is written next to each run. Returns the PNG path
    (default: summary.csv's directory / ``<column>.png``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    table = Path(table)
    rows = read_table(table)
    fig, ax = plt.subplots(figsize=(6.4, 4.8))
    groups = {"yes": ([], [], dict(marker="o", color="tab:green", s=90, label=f"{column}")),
              "no": ([], [], dict(marker="x", color="tab:red", s=90, label=f"not {column}")),
              "failed": ([], [], dict(marker="o", facecolors="none", edgecolors="grey", s=90, label="run failed"))}
    for r in rows:
        key = "failed" if r["status"] != "ok" else ("yes" if r[column] == "True" else "no")
        xs, ys, _ = groups[key]
        xs.append(float(r[x]))
        ys.append(float(r[y]))
        if value and r["status"] == "ok" and r.get(value, "") != "":
            ax.annotate(f"{float(r[value]):.3g}", (xs[-1], ys[-1]), textcoords="offset points", xytext=(6, 6),
                        fontsize=8)
    for xs, ys, style in groups.values():
        if xs:
            ax.scatter(xs, ys, **style)
    ax.set_xscale("log" if log_x else "linear")
    ax.set_yscale("log" if log_y else "linear")
    ax.margins(0.12)
    for axis, key in ((ax.xaxis, x), (ax.yaxis, y)):  # ticks at the swept values
        values = sorted({float(r[key]) for r in rows})
        if len(values) <= 12:
            axis.set_ticks(values, [f"{v:g}" for v in values])
            axis.set_minor_locator(matplotlib.ticker.NullLocator())
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    title = f"{column} over {len(rows)} runs"
    ax.set_title(title + (f" (labels: {value})" if value else ""))
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=3, fontsize=8, frameon=False)
    ax.grid(True, alpha=0.3)
    out = Path(output) if output else table.parent / f"{column}.png"
    fig.tight_layout()
    tmp = out.with_name(".tmp-" + out.name)
    fig.savefig(tmp, dpi=110, format="png")
    plt.close(fig)
    tmp.replace(out)
    return out
