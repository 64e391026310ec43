"""Plots of finished (or interrupted) runs, behind ``ipcsim plot OUT [OUT...]``: the contact force on one
body and the number of contact pairs over time, several runs overlaid (as the Embedded IPC paper's Fig. 4-5
compare a full, a medium and a low resolution run).

The figure (a PNG through matplotlib's Agg canvas, no display needed) has four panels sharing the time axis
[s]: the x, y and z components of the force [N] on the chosen collision body, from OUT/forces.csv (contact:
solid line; friction: dashed line of the same colour, drawn for the runs with some friction), then the
active contact pairs from OUT/stats.csv (``n_contacts``). Each run has one colour. Contact and friction share
the force panels because they share units and scale, and the dashed friction next to the solid contact force
of the same axis shows at a glance how much of the load is tangential; four panels stay readable where six
would not.

Bad input (a missing directory, file or column, an unknown body, a value that is no number) raises
``PlotError`` with a one-line message naming the file; the PNG is written atomically (temporary file, then
rename), so a failed plot leaves no partial file.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..io import frames as io_frames

#: colours of the runs, in order (then repeated)
COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf")
_FORCE = ("contact_x", "contact_y", "contact_z", "friction_x", "friction_y", "friction_z")


class PlotError(ValueError):
    """Input that cannot be plotted; one-line message naming the file, column or body."""


@dataclass
class RunCurves:
    """What is plotted of one run.

    Attributes:
        label: legend name; body: "<index> <name>" of the plotted body;
        time: (k,) [s] step end times of the force rows; contact, friction: (k, 3) [N] forces on the body;
        stats_time: (m,) [s] step end times of stats.csv; n_contacts: (m,) active contact pairs.
    """

    label: str
    body: str
    time: np.ndarray
    contact: np.ndarray
    friction: np.ndarray
    stats_time: np.ndarray
    n_contacts: np.ndarray


def read_columns(path: Path, columns: tuple) -> dict[str, list[str]]:
    """{column: values as str} of a CSV file with a header line, for the given columns; PlotError naming the
    file when it is absent or unreadable, or the first missing column."""
    if not path.is_file():
        raise PlotError(f"{path}: no such file (is {path.parent} the output directory of a run?)")
    try:
        with open(path, newline="") as fh:
            reader = csv.reader(fh)
            header = next(reader, None)
            if header is None:
                raise PlotError(f"{path}: empty file (no header line)")
            missing = [c for c in columns if c not in header]
            if missing:
                raise PlotError(f"{path}: no column {missing[0]!r} (has {', '.join(header)})")
            index = [header.index(c) for c in columns]
            rows = [r for r in reader if r]
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise PlotError(f"{path}: unreadable ({exc})") from None
    for line, r in enumerate(rows, start=2):
        if len(r) != len(header):
            raise PlotError(f"{path}: line {line} has {len(r)} fields, the header {len(header)}")
    return {c: [r[i] for r in rows] for c, i in zip(columns, index)}


def _numbers(values: list[str], path: Path, column: str, rows=None) -> np.ndarray:
    """(k,) float64 of a column's values at the data rows ``rows`` (None: all); PlotError naming the file,
    column and line of a bad value."""
    rows = range(len(values)) if rows is None else rows
    out = np.empty(len(rows))
    for k, r in enumerate(rows):
        try:
            out[k] = float(values[r])
        except ValueError:
            raise PlotError(f"{path}: column {column!r} line {r + 2}: {values[r]!r} is not a number") from None
    return out


def _pick_body(ids: list[str], names: list[str], body, path: Path) -> tuple[str, str]:
    """(id, name) of the body a ``--body`` value picks among forces.csv's rows: a name of the file, else an
    index; None: body 0. PlotError listing the bodies when none matches."""
    bodies = dict(zip(ids, names))  # id -> name, in file order
    spec = "0" if body is None else str(body).strip()
    named = [i for i, n in bodies.items() if n == spec]
    if len(named) > 1:
        raise PlotError(f"{path}: several bodies are named {spec!r} (ids {', '.join(named)}): give the index")
    if named:
        return named[0], spec
    try:
        key = str(int(spec))
    except ValueError:
        key = None
    if key is None or key not in bodies:
        listing = ", ".join(f"{i} {n}" for i, n in bodies.items()) or "none: no steps yet"
        raise PlotError(f"{path}: no body {spec!r} (bodies: {listing})")
    return key, bodies[key]


def load_run(out_dir, body=None, label: str | None = None) -> RunCurves:
    """The curves of the run in out_dir for the collision body ``body`` (name or index, None: 0); label:
    legend name (None: the directory's name). PlotError on bad input."""
    out = Path(out_dir)
    if not out.is_dir():
        raise PlotError(f"{str(out)!r} is not a directory (give the output directories of runs)")
    stats_path, forces_path = out / "stats.csv", out / "forces.csv"
    stats = read_columns(stats_path, ("time", "n_contacts"))
    if not stats["time"]:
        raise PlotError(f"{stats_path}: no steps yet")
    forces = read_columns(forces_path, ("time", "body", "name") + _FORCE)
    key, name = _pick_body(forces["body"], forces["name"], body, forces_path)
    rows = [k for k, b in enumerate(forces["body"]) if b == key]
    values = {c: _numbers(forces[c], forces_path, c, rows) for c in ("time",) + _FORCE}
    return RunCurves(label=label if label is not None else (out.resolve().name or str(out)),
                     body=f"{key} {name}", time=values["time"],
                     contact=np.stack([values[c] for c in _FORCE[:3]], axis=1),
                     friction=np.stack([values[c] for c in _FORCE[3:]], axis=1),
                     stats_time=_numbers(stats["time"], stats_path, "time"),
                     n_contacts=_numbers(stats["n_contacts"], stats_path, "n_contacts"))


def default_output(out_dirs) -> Path:
    """OUT/forces.png for one run, ./forces.png (the working directory) for several."""
    return Path(out_dirs[0]) / "forces.png" if len(out_dirs) == 1 else Path("forces.png")


def check_output(path) -> Path:
    """path as a Path, or PlotError unless it names a .png file in an existing directory."""
    p = Path(path)
    if p.suffix.lower() != ".png":
        raise PlotError(f"--output {str(p)!r}: the plot is a PNG, give a file name ending in .png")
    if not p.parent.is_dir():
        raise PlotError(f"--output {str(p)!r}: no directory {str(p.parent)!r}")
    if p.is_dir():
        raise PlotError(f"--output {str(p)!r} is a directory")
    return p


def draw(runs: list[RunCurves], size=(8.0, 9.0), dpi: int = 110):
    """The matplotlib Figure (Agg canvas) of the runs' curves (module docstring)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    fig = Figure(figsize=size, dpi=dpi, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(4, 1, sharex=True)
    rubbed = [bool(np.any(np.nan_to_num(r.friction))) for r in runs]
    for k, run in enumerate(runs):
        color = COLORS[k % len(COLORS)]
        for a in range(3):
            axes[a].plot(run.time, run.contact[:, a], color=color, lw=1.2)
            if rubbed[k]:
                axes[a].plot(run.time, run.friction[:, a], color=color, lw=1.0, ls="--")
        axes[3].plot(run.stats_time, run.n_contacts, color=color, lw=1.2)
    bodies = sorted({r.body for r in runs})
    fig.suptitle(f"forces on body {' / '.join(bodies)}")
    for a, axis in enumerate("xyz"):
        axes[a].set_ylabel(f"$F_{axis}$ [N]")
        axes[a].axhline(0.0, color="0.6", lw=0.6)
    axes[3].set_ylabel("contact pairs")
    axes[3].set_xlabel("time [s]")
    for ax in axes:
        ax.grid(True, alpha=0.3)
    handles = [Line2D([], [], color=COLORS[k % len(COLORS)], lw=1.5) for k in range(len(runs))]
    labels = [r.label for r in runs]
    if any(rubbed):
        handles += [Line2D([], [], color="0.3", lw=1.2), Line2D([], [], color="0.3", lw=1.0, ls="--")]
        labels += ["contact", "friction"]
    axes[0].legend(handles, labels, fontsize=8, ncol=min(len(labels), 5), loc="best")
    return fig


def plot_runs(out_dirs, body=None, output=None, labels=None) -> Path:
    """Plot the runs in out_dirs (list of directories) into ``output`` (None: ``default_output``) for the
    collision body ``body`` (name or index; None: 0) with legend ``labels`` (list of str, one per run; None:
    the directory names); returns the PNG's path. PlotError on bad input, before anything is written."""
    if not out_dirs:
        raise PlotError("give at least one output directory")
    if labels is not None and len(labels) != len(out_dirs):
        raise PlotError(f"--labels has {len(labels)} names for {len(out_dirs)} runs")
    runs = [load_run(d, body, None if labels is None else labels[k]) for k, d in enumerate(out_dirs)]
    path = check_output(default_output(out_dirs) if output is None else output)
    fig = draw(runs)
    with io_frames.atomic_path(path) as tmp:
        fig.savefig(tmp, format="png")
    return path


def parse_labels(text: str | None) -> list[str] | None:
    """The names of ``--labels a,b,c`` (None when not given); PlotError for an empty name."""
    if text is None:
        return None
    names = [n.strip() for n in text.split(",")]
    if any(not n for n in names):
        raise PlotError(f"--labels {text!r}: empty name (give comma-separated names, one per run)")
    return names

