"""What a sweep records about a finished run, read back from its output directory (docs/output.md):
step statistics from OUT/stats.csv and metrics from the first and last surface frames."""
from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np

from ..io import frames as io_frames
from ..io.output import list_frames


def run_statistics(out_dir) -> dict:
    """{"steps", "newton_iterations" (summed), "unconverged_steps", "min_distance" [m] (smallest over the steps;
    inf without contact)} from OUT/stats.csv (zeros / inf when it is missing or empty)."""
    path = Path(out_dir) / "stats.csv"
    rows = []
    if path.is_file():
        with open(path, newline="") as fh:
            rows = list(csv.DictReader(fh))
    dist = [float(r["min_distance"]) for r in rows if r.get("min_distance") not in (None, "")]
    return {"steps": len(rows),
            "newton_iterations": int(sum(int(r["newton_iterations"]) for r in rows)),
            "unconverged_steps": int(sum(1 for r in rows if r.get("converged") in ("0", "False"))),
            "min_distance": min(dist) if dist else math.inf}


def body_centre(frame: Path, body: int) -> np.ndarray:
    """(3,) mean position [m] of the surface vertices of collision body ``body`` in a surface PLY frame (the
    centre of its surface vertices, not its centre of mass); NaN if the frame has none."""
    v, _, ids = io_frames.read_ply(frame, with_body=True)
    sel = ids == body
    return v[sel].mean(axis=0) if sel.any() else np.full(3, np.nan)


def compute_metrics(out_dir, metrics: list) -> dict:
    """The spec's metrics of a finished run, as flat {column: value}:

    - {"kind": "centre", "body": B, "index": i} -> ``centre_B_x``, ``_y``, ``_z``: final centre [m];
    - {"kind": "lifted", "body": B, "index": i, "min_rise": m, "axis": a} -> ``rise_B`` [m]: the centre's rise
      along axis a from the first to the last frame, and ``lifted_B``: rise >= m (bool).
    """
    frames = list_frames(out_dir)
    out = {}
    if not frames:
        return out
    for m in metrics:
        last = body_centre(frames[-1], m["index"])
        if m["kind"] == "centre":
            for axis, c in zip("xyz", last):
                out[f"centre_{m['body']}_{axis}"] = float(c)
        else:
            rise = float(last[m["axis"]] - body_centre(frames[0], m["index"])[m["axis"]])
            out[f"rise_{m['body']}"] = rise
            out[f"lifted_{m['body']}"] = bool(rise >= m["min_rise"])
    return out


def metric_columns(metrics: list) -> list[str]:
    """The table columns of the spec's metrics, in order (see ``compute_metrics``)."""
    cols = []
    for m in metrics:
        if m["kind"] == "centre":
            cols += [f"centre_{m['body']}_{a}" for a in "xyz"]
        else:
            cols += [f"rise_{m['body']}", f"lifted_{m['body']}"]
    return cols
