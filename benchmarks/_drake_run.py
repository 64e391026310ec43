"""What the Drake baselines (``drake_grasp.py``, ``drake_plate_rack.py``) share: ipcsim's run layout
(docs/output.md: frames/surface_*.ply with body ids, stats.csv, forces.csv) written from a Drake run, and reading
it back. No pydrake here."""
from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from ipcsim.io import frames as io_frames
from ipcsim.app import runner


def stack_surfaces(parts: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(vertices (n, 3) [m], faces (f, 3), body id (n,)) of surfaces parts [(vertices (n_k, 3), faces (f_k, 3))],
    part k getting body id k."""
    verts, faces, ids, offset = [], [], [], 0
    for k, (v, f) in enumerate(parts):
        verts.append(np.asarray(v, float))
        faces.append(np.asarray(f, np.int64) + offset)
        ids.append(np.full(len(v), k, np.int64))
        offset += len(v)
    return np.concatenate(verts), np.concatenate(faces), np.concatenate(ids)


def write_surface_frame(out: Path, index: int, parts: list) -> None:
    """OUT/frames/surface_<index>.ply of ``stack_surfaces(parts)`` (the frames folder made if missing)."""
    path = runner.frame_path(out, "surface", index)
    path.parent.mkdir(parents=True, exist_ok=True)
    io_frames.write_ply(path, *stack_surfaces(parts))


def stats_row(step: int, t: float, wall: float, n_contacts: int, penetration: float) -> list:
    """A stats.csv row in ipcsim's columns: step, time [s], wall_seconds (the step's AdvanceTo), n_contacts and
    min_distance = -(deepest penetration) [m]; the solver's columns Drake does not expose stay empty."""
    row = dict.fromkeys(runner.STATS_COLUMNS, "")
    row.update(step=step, time=repr(float(t)), wall_seconds=f"{wall:.6f}", n_contacts=n_contacts,
               min_distance=repr(-float(penetration)))
    return [row[c] for c in runner.STATS_COLUMNS]


def force_row(step: int, t: float, body: int, name: str, force: np.ndarray) -> list:
    """A forces.csv row: the total contact force [N] (Drake does not split off friction: friction_* NaN)."""
    return [step, repr(float(t)), body, name] + [repr(float(c)) for c in force] + ["nan"] * 3


def read_table(path: Path) -> dict:
    """{column: (k,) float64} of a CSV written here (columns that are not numbers as str arrays)."""
    with open(path, newline="") as fh:
        reader = csv.reader(fh)
        header = next(reader)
        rows = list(reader)
    out = {}
    for i, c in enumerate(header):
        try:
            out[c] = np.array([float(r[i]) if r[i] != "" else np.nan for r in rows])
        except ValueError:
            out[c] = np.array([r[i] for r in rows])
    return out


def intersecting_frames(out: Path) -> tuple[int, int] | None:
    """(frames whose surfaces intersect by ipctk's judgement, frames) of a run; None without ipctk."""
    try:
        import ipctk
    except ImportError:
        return None
    frames = runner.list_frames(out)
    v, f = io_frames.read_ply(frames[0])
    faces = f.astype(np.int32)
    mesh = ipctk.CollisionMesh(v, ipctk.edges(faces), faces)
    return sum(bool(ipctk.has_intersections(mesh, io_frames.read_ply(p)[0])) for p in frames), len(frames)
