"""000 Table 1 over the three expression sequences (issue #25 item 6): every configuration of
``bench_face.py`` (o, triangle, square, diamond, triangle and diamond at kappa x10) and the standard-PD penalty
baseline of 000 Fig. 3, per sequence, with the count of intersecting frames.

For each sequence (``face.expressions``: press_roll, pucker_funnel, jaw; 50 frames each) the frames
``--first``, ``--first + --stride``, ... (``--count`` of them; default all 50) are run by every configuration, frame
by frame and back to back (``bench_face``'s interleaving: a change of the machine's load hits them alike), all
from the same state: the sequence's frames before the window (same stride) solved once by 'woodbury'. square (a
dense 3 n2 Cholesky per global step) runs only the window's first ``--square-frames`` frames.

Printed after each frame: every configuration's time, global steps and, where the proxy crosses itself at the
frame's end, its crossing pairs (so a run stopped early can still be summed). Printed per sequence: the table (ms per frame, 000 Table 1's split), the ratios of ``bench_face.print_ratios``, the
intersecting frames of o (no collision handling), of penalty and of each IPC configuration (the proxy checked
with ``contact.intersection.find_intersections``, exact), and ``woodbury speedup (SEQ): X`` (total frame time of
triangle over diamond); at the end one line per sequence and an estimate of the full table's time (every
configuration, all 50 frames, square included) from the measured per-frame times.

    python benchmarks/bench_face_table.py [--size large|small] [--sequences press_roll,pucker_funnel,jaw]
        [--first 0] [--count 50] [--stride 1] [--square-frames 1] [--configs o,triangle,...] [--model face.npz]
        [--states states.npz]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_face  # noqa: E402  (the Table 1 configurations, summary and printing)

PENALTY = ("penalty", "penalty", 1.0, "cpu")
ALL_CONFIGS = bench_face.CONFIGS + (PENALTY,)


def make_solver(model, name: str, scale: float, pcg_rtol: float):
    """(solver, seconds to build): 'penalty' (``PenaltyFacePDSolver`` with the woodbury global step) or any name
    ``bench_face.make_solver`` takes."""
    if name != "penalty":
        return bench_face.make_solver(model, name, scale, pcg_rtol)
    from ipcsim.face.penalty import PenaltyFacePDSolver

    t0 = time.perf_counter()
    return PenaltyFacePDSolver(model, "woodbury"), time.perf_counter() - t0


def intersecting(model, mesh, x) -> int:
    """Intersecting edge-triangle pairs of the proxy at simulation positions x (n, 3) [m]."""
    from ipcsim.contact.intersection import find_intersections

    return len(find_intersections(mesh, model.proxy_map.apply(x)))


def build_all(model, configs, pcg_rtol: float) -> dict:
    """Every configuration's solver, built once and reused by every sequence: {label: solver}."""
    solvers = {}
    for label, name, scale, _device in configs:
        solvers[label], t_build = make_solver(model, name, scale, pcg_rtol)
        print(f"  {label}: built in {t_build:.1f} s", flush=True)
    return solvers


def run_sequence(model, weights, frames, solvers: dict, square_frames: int) -> dict:
    """Run the window frames (indices into weights (50, K)) by every solver ({label: solver}), back to back per
    frame, all from the state after the earlier frames of the same stride (solved once by woodbury). Returns
    {label: (FrameStats list, solver, per-frame intersecting pair counts)}."""
    stride = frames[1] - frames[0] if len(frames) > 1 else 1
    prep = solvers["diamond"] if "diamond" in solvers else bench_face.make_solver(model, "woodbury")[0]
    prep.start_from(model.rest)
    t0 = time.perf_counter()
    for f in range(frames[0] % stride, frames[0], stride):
        prep.frame(weights[f])
    x0 = prep.x.copy()
    print(f"  start state: {len(range(frames[0] % stride, frames[0], stride))} earlier frames by woodbury "
          f"({time.perf_counter() - t0:.1f} s)", flush=True)
    runs = {}
    for label, solver in solvers.items():
        solver.start_from(x0)
        runs[label] = ([], solver, [])
    for i, f in enumerate(frames):
        line = []
        for label in solvers:
            if label == "square" and i >= square_frames:
                continue
            stats, solver, hits = runs[label]
            stats.append(solver.frame(weights[f]))
            hits.append(intersecting(model, solver.mesh, solver.x))
            crossing = f" ({hits[-1]} crossing pairs)" if hits[-1] else ""
            line.append(f"{label} {stats[-1].time_total:.1f} s/{stats[-1].iterations}{crossing}")
        print(f"  frame {f}: " + ", ".join(line), flush=True)  # a partial run can be summed from these lines
    return runs


def report(name: str, runs: dict, frames) -> float | None:
    """Print the sequence's tables, ratios and intersecting frames; return the woodbury speedup (None when
    triangle or diamond did not run)."""
    any_run = next(iter(runs.values()))[1]
    rows = {k: bench_face.summary(v[0]) for k, v in runs.items()}
    print(f"\n== {name}: frames {frames[0]}-{frames[-1]} every {frames[1] - frames[0] if len(frames) > 1 else 1}")
    bench_face.print_table(rows, any_run.n1, any_run.n2)
    if "square" in runs:
        ns = len(runs["square"][0])
        first = {k: bench_face.summary(v[0][:ns]) for k, v in runs.items()}
        print(f"\nthe first {ns} window frame(s) only (square's frames):")
        bench_face.print_table(first, any_run.n1, any_run.n2)
        if all(k in rows for k in ("triangle", "diamond", "triangle k x10", "diamond k x10")):
            bench_face.print_ratios(rows, first, {k: v[:2] for k, v in runs.items()})
    print("intersecting frames (proxy crosses itself at the frame's end): " + ", ".join(
        f"{k} {sum(1 for h in v[2] if h)}/{len(v[2])}" for k, v in runs.items()))
    if "triangle" in rows and "diamond" in rows:
        speedup = rows["triangle"]["total"] / rows["diamond"]["total"]
        print(f"woodbury speedup ({name}): {speedup:.2f}", flush=True)
        return speedup
    return None


def full_estimate(all_rows: list, n_frames: int = 50) -> float:
    """Seconds for the full table: every configuration on all n_frames frames of every sequence, from the mean
    per-frame totals measured (list of {label: summary row})."""
    per_frame = {}
    for rows in all_rows:
        for k, r in rows.items():
            per_frame.setdefault(k, []).append(r["total"] / 1e3)
    return n_frames * len(all_rows) * sum(np.mean(v) for v in per_frame.values())


def main() -> None:
    from ipcsim.face.expressions import SEQUENCES, expressions

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", default="large", choices=("small", "large"))
    ap.add_argument("--model", help="read the face from this .npz (face_data.save_face) instead of building it")
    ap.add_argument("--save", help="write the built face to this .npz")
    ap.add_argument("--sequences", default=",".join(SEQUENCES), help="comma-separated sequence names")
    ap.add_argument("--first", type=int, default=0, help="first frame of the window (the same for every sequence "
                    "unless --firsts)")
    ap.add_argument("--firsts", help="comma-separated first frames, one per sequence")
    ap.add_argument("--count", type=int, default=50, help="frames in the window")
    ap.add_argument("--stride", type=int, default=1, help="run every k-th frame")
    ap.add_argument("--square-frames", type=int, default=1, help="window frames run by square (dense Schur)")
    ap.add_argument("--configs", default=",".join(c[0] for c in ALL_CONFIGS),
                    help="comma-separated labels of " + ", ".join(c[0] for c in ALL_CONFIGS))
    ap.add_argument("--pcg-rtol", type=float, default=1e-12)
    ap.add_argument("--states", help="write each configuration's state at the end of each sequence's window to "
                    "this .npz (keys SEQUENCE/LABEL, (n, 3) [m]), to compare two runs' equilibria")
    args = ap.parse_args()
    names = args.sequences.split(",")
    want = args.configs.split(",")
    configs = tuple(c for c in ALL_CONFIGS if c[0] in want)
    firsts = [int(v) for v in args.firsts.split(",")] if args.firsts else [args.first] * len(names)
    model = bench_face.load_model(args.size, args.model, args.save)
    t_all = time.perf_counter()
    solvers = build_all(model, configs, args.pcg_rtol)
    results, all_rows, states = {}, [], {}
    for name, first in zip(names, firsts):
        weights = expressions(name, model.names)
        frames = list(range(first, len(weights), args.stride))[:args.count]
        print(f"\n{name}: frames {frames}", flush=True)
        runs = run_sequence(model, weights, frames, solvers, args.square_frames)
        results[name] = report(name, runs, frames)
        all_rows.append({k: bench_face.summary(v[0]) for k, v in runs.items()})
        states.update({f"{name}/{k}": v[1].x.copy() for k, v in runs.items()})
    print(f"\nall sequences in {time.perf_counter() - t_all:.0f} s; load average {os.getloadavg()[0]:.1f}")
    for name, s in results.items():
        print(f"woodbury speedup ({name}): {s:.2f}" if s is not None else f"{name}: no triangle/diamond run")
    if args.states:
        np.savez(args.states, **states)
    print(f"estimated time of the full table (these configurations, 50 frames x {len(all_rows)} sequences): "
          f"{full_estimate(all_rows) / 60:.0f} min")


if __name__ == "__main__":
    main()
