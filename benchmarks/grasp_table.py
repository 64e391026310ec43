"""The teddy grasp's per-method, per-h table (issue #23 item 6; Embedded IPC 004 Fig. 6-8) from finished runs.

Each RUN is a run directory in ipcsim's layout: an ``ipcsim demo teddy-grasp --mode M --dt H -o RUN`` run, or a
Drake run of ``benchmarks/drake_grasp.py`` (``OUT/drake-h<H>``, recognised by its ``drake.csv``). One row per run:

    wall per simulated second [s]   summed ``wall_seconds`` of stats.csv over the simulated time
    iterations per step             Newton iterations (ipcsim; Drake's SAP iterations are not exposed: '-')
    contacts at t                   stats.csv ``n_contacts`` at the step ending at --at (default 3 s)
    force at t [N]                  the left bubble's total contact force (contact + friction; Drake reports the
                                    sum only) at --at, its norm and its squeeze (x) component
    rise [m]                        the teddy's surface centroid (body 0 of the frames) from frame 0 to the last
    distance [m]                    ipcsim: the smallest contact distance of the run (stats.csv min_distance);
                                    Drake: minus its deepest penetration (drake.csv, ground and between bodies)
    E(h) [m]                        with --reference REF: the time-averaged RMS distance of the teddy's surface
                                    vertices to REF's at the frames both have (50 frames per second), as
                                    ``benchmarks/convergence_grasp.py``'s E(h) (every run against its own
                                    method's reference)

Usage: python benchmarks/grasp_table.py RUN [RUN ...] [--reference REF] [--at 3.0]
"""
from __future__ import annotations

import argparse
import csv
from pathlib import Path

import numpy as np

from ipcsim.io.frames import read_ply


def _rows(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _at(rows: list[dict], t: float) -> dict:
    """The row whose time is closest to t [s]."""
    return min(rows, key=lambda r: abs(float(r["time"]) - t))


def teddy_frames(run: Path) -> dict:
    """{frame time [s] rounded to 1e-6: teddy surface vertices (k, 3) [m]} from run/frames (body 0)."""
    stats = _rows(run / "stats.csv")
    end = float(stats[-1]["time"])
    files = sorted((run / "frames").glob("surface_*.ply"))
    step = end / (len(files) - 1)
    out = {}
    for k, f in enumerate(files):
        v, _, body = read_ply(f, with_body=True)
        out[round(k * step, 6)] = v[body == 0]
    return out


def error(run: dict, ref: dict) -> float:
    """Time-averaged RMS distance [m] between two {time: (k, 3)} frame sets at their common times after 0."""
    common = sorted(t for t in run if t in ref and t > 0)
    return float(np.mean([np.sqrt(((run[t] - ref[t]) ** 2).sum(axis=1).mean()) for t in common]))


def row(run: Path, at: float, ref: dict | None) -> dict:
    stats = _rows(run / "stats.csv")
    end = float(stats[-1]["time"])
    drake = (run / "drake.csv").is_file()
    left = [r for r in _rows(run / "forces.csv") if r["name"] == "left_bubble"]
    f = _at(left, at)
    force = np.array([float(f[f"contact_{a}"]) for a in "xyz"])
    if not drake:
        force += np.array([float(f[f"friction_{a}"]) for a in "xyz"])
    frames = teddy_frames(run)
    times = sorted(frames)
    rise = frames[times[-1]][:, 1].mean() - frames[times[0]][:, 1].mean()
    if drake:
        d = _rows(run / "drake.csv")
        distance = -max(max(float(r["penetration_ground"]), float(r["penetration_bodies"])) for r in d)
        iterations = "-"
    else:
        distance = min(float(r["min_distance"]) for r in stats)
        iterations = f"{sum(int(r['newton_iterations']) for r in stats) / len(stats):.2f}"
    h = float(stats[0]["time"])
    return {"run": run.name, "h": h, "wall/s": sum(float(r["wall_seconds"]) for r in stats) / end,
            "it/step": iterations, "contacts": int(_at(stats, at)["n_contacts"]), "|F|": float(np.linalg.norm(force)),
            "F_x": float(force[0]), "rise": float(rise), "distance": distance,
            "E": error(frames, ref) if ref is not None else float("nan")}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--reference", type=Path, help="the reference run for E(h)")
    ap.add_argument("--at", type=float, default=3.0, help="time of the contact count and force [s] (default 3)")
    args = ap.parse_args(argv)
    ref = teddy_frames(args.reference) if args.reference else None
    print(f"| run | h [s] | wall per sim. s [s] | it. per step | contacts at {args.at:g} s | "
          f"force at {args.at:g} s: norm, x [N] | rise [m] | distance [m] | E(h) [m] |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for run in args.runs:
        r = row(run, args.at, ref)
        print(f"| {r['run']} | {r['h']:g} | {r['wall/s']:.2f} | {r['it/step']} | {r['contacts']} | "
              f"{r['|F|']:.2f}, {r['F_x']:.2f} | {r['rise']:.4f} | {r['distance']:.2e} | {r['E']:.2e} |")


if __name__ == "__main__":
    main()
