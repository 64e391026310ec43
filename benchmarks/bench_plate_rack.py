"""Plate-rack benchmark (issue 24, Embedded IPC 004 §IV-B): two FinRay fingers replay the clean gripper trajectory
(``ipcsim demo plate-rack``: pick the plate from its stand, carry it over the wire rack, place it in a slot, release,
retract; 6 s) at h = 0.01 s, with the fingers embedded in conforming cages and, side by side, in full space.

For each mode: the scene build timed (``plate_rack``: meshes, cages, embedding, model, solver), one untimed step
(Numba cache loading), then the run from t = 0 timed step by step; printed: nodes, tets, surface vertices, wall
time, Newton iterations, the per-step time split (StepStats: contact, linear solve, CCD, line search, other), the
largest step, the build time, and where the plate ended (centre, tilt, in its slot or not).

The full-space fingers (0.8 mm triangles, two across a rib, ``plate_rack_scene.FULL_RESOLUTION``) are slow on a
2-core machine: by default they run the trajectory's first ``--full-end-time`` seconds only (descend, close on the
plate's rim: the contact-heavy grasp), and the embedded speedup compares the two modes over that same segment
(the embedded run's per-step times up to it). The last lines are

    embedded speedup: X                 full-space wall / embedded wall over the common segment
    plate-rack real-time factor: X      simulated time / wall time of the embedded run (target 1.0)

Usage: python benchmarks/bench_plate_rack.py [--dt 0.01] [--end-time 6] [--full-end-time 1.3] [--modes embedded,full]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from ipcsim.demos.plate_rack import PlateRackParameters, build_plate_rack, in_slot, plate_pose, plate_rack

SPLIT = ("contact", "linear_solve", "ccd", "line_search", "other")


def run(fingers: str, dt: float, end_time: float) -> dict:
    """Simulate one mode; returns per-step wall times (n,) [s], iterations, the split and the plate's end."""
    params = PlateRackParameters(fingers=fingers, dt=dt, end_time=end_time)
    t0 = time.perf_counter()
    warm, _ = plate_rack(params)
    build = time.perf_counter() - t0
    warm.solver.step(warm.state, warm.state.copy(), None, dt)  # untimed: loads the Numba cache
    sim, _ = plate_rack(params)
    m, state = sim.model, sim.state
    n = int(round(end_time / dt))
    split = dict.fromkeys(SPLIT, 0.0)
    walls, iterations, unconverged, inverted = [], 0, 0, 0
    for _ in range(n):
        new = state.copy()
        t0 = time.perf_counter()
        st = sim.solver.step(state, new, None, dt)
        walls.append(time.perf_counter() - t0)
        state = new
        iterations += st.newton_iterations
        unconverged += not st.converged
        inverted = max(inverted, st.n_inverted)
        for k in SPLIT:
            split[k] += getattr(st, f"time_{k}")
    walls = np.array(walls)
    centre, tilt = plate_pose(m, state.x)
    _, _, geo = build_plate_rack(params)
    print(f"{fingers:>9}: {m.n_vertices} nodes, {len(m.tets)} tets, {m.collision_mesh.n_vertices} surface vertices; "
          f"{n} steps in {walls.sum():.2f} s ({1e3 * walls.mean():.1f} ms/step, max {1e3 * walls.max():.0f} ms, "
          f"{iterations / n:.2f} Newton it/step, {unconverged} unconverged, {inverted} inverted tets at most)")
    print(f"           scene build (plate_rack(), solver included): {build:.2f} s")
    print("           per step [ms]: " + ", ".join(f"{k} {1e3 * v / n:.2f}" for k, v in split.items()))
    print(f"           plate at t = {end_time:g} s: centre {np.round(centre, 4).tolist()} m, tilt {tilt:.1f} deg, "
          f"in its slot: {in_slot(geo, centre, tilt)}")
    return {"walls": walls, "iterations": iterations}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dt", type=float, default=0.01)
    ap.add_argument("--end-time", type=float, default=None, help="embedded run [s] (default: the whole trajectory)")
    ap.add_argument("--full-end-time", type=float, default=1.3, help="full-space run [s] (default 1.3: the grasp)")
    ap.add_argument("--modes", default="embedded,full")
    args = ap.parse_args()
    if args.end_time is None:
        args.end_time = PlateRackParameters().end_time  # the clean trajectory's end (6 s)
    modes = args.modes.split(",")
    print(f"plate-rack, clean trajectory, h = {args.dt} s")
    res = {}
    if "embedded" in modes:
        res["embedded"] = run("embedded", args.dt, args.end_time)
    if "full" in modes:
        res["full"] = run("full", args.dt, args.full_end_time)
    if len(res) == 2:
        k = min(len(res["full"]["walls"]), len(res["embedded"]["walls"]))
        print(f"embedded speedup: {res['full']['walls'][:k].sum() / res['embedded']['walls'][:k].sum():.2f} "
              f"(over the first {k * args.dt:g} s)")
    if "embedded" in res:
        print(f"plate-rack real-time factor: {args.end_time / res['embedded']['walls'].sum():.2f}")


if __name__ == "__main__":
    main()
