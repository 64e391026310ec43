"""The sweep's summary table: one row per run, rebuilt from the runs' result.json files and written atomically
(CSV always, Parquet as well when pyarrow is importable), so an interrupted sweep never leaves a half row."""
from __future__ import annotations

import os
from pathlib import Path

from ..io import frames as io_frames
from .metrics import metric_columns

STAT_COLUMNS = ("wall_seconds", "steps", "newton_iterations", "unconverged_steps", "min_distance")


def columns(param_keys: list[str], metrics: list) -> list[str]:
    """run, status, the parameter key paths, STAT_COLUMNS, the metric columns, attempts, error, directory."""
    return ["run", "status", *param_keys, *STAT_COLUMNS, *metric_columns(metrics), "attempts", "error", "directory"]


def row(run, result: dict | None, metrics: list, directory: str) -> dict:
    """The table row of a ``RunSpec`` and its result (None: not run yet, status "pending")."""
    out = {"run": run.name, "status": "pending", **run.params, "directory": directory}
    if result is not None:
        out.update({k: result.get(k, "") for k in ("status", "error", "attempts", *STAT_COLUMNS)})
        out.update(result.get("metrics") or {})
        out["directory"] = directory
    for col in metric_columns(metrics):
        out.setdefault(col, "")
    return out


def _cell(value) -> str:
    """A CSV cell: floats by repr (round-trip), None empty."""
    if isinstance(value, float):
        return repr(value)
    if value is None:
        return ""
    return str(value)


def write_table(out_dir: Path, cols: list[str], rows: list[dict]) -> list[Path]:
    """Write OUT/summary.csv (and OUT/summary.parquet with pyarrow) atomically; returns the files written."""
    out_dir = Path(out_dir)
    csv_path = out_dir / "summary.csv"
    io_frames.write_csv(csv_path, cols, [[_cell(r.get(c, "")) for c in cols] for r in rows])
    written = [csv_path]
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        return written
    data = {}
    for c in cols:
        values = [None if r.get(c, "") == "" else r.get(c) for r in rows]
        numeric = all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in values)
        flags = all(v is None or isinstance(v, bool) for v in values)
        data[c] = values if (numeric or flags) else [None if v is None else _cell(v) for v in values]
    table = pa.table(data)
    path = out_dir / "summary.parquet"
    with io_frames.atomic_path(path) as tmp:
        pq.write_table(table, tmp)
    written.append(path)
    return written


def read_table(path) -> list[dict]:
    """The rows of a summary.csv as dicts of strings."""
    import csv

    with open(os.fspath(path), newline="") as fh:
        return list(csv.DictReader(fh))
