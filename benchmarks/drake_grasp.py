"""The teddy grasp of Embedded IPC (004 §IV-A) in Drake beside ipcsim (issue #23 item 5): Drake's own bubble-gripper
example rebuilt in pydrake (``_drake_scene``: DeformableModel, SAP, the same meshes, poses, materials, damping,
friction, motion and time step) and ipcsim's low embedding, run back to back on this machine.

Needs the optional ``compare`` extra (``pip install 'ipcsim[compare]'``: drake 1.51.1, BSD-3; ipcsim itself never
imports it). Each side writes ipcsim's run layout (docs/output.md) under OUT:

    OUT/ipcsim-low-h<dt>/   ``ipcsim demo teddy-grasp --mode low --dt <dt>`` (frames, stats.csv, forces.csv)
    OUT/drake-h<dt>/frames/surface_*.ply  the teddy, left and right bubble surfaces (body ids 0, 1, 2, ipcsim's
                                          order), in ipcsim's frame (``_drake_scene.drake_to_ipcsim``)
                    stats.csv             ipcsim's columns: time, wall_seconds (AdvanceTo of one step),
                                          n_contacts (contact polygons, SAP's contact points, ground included),
                                          min_distance = -(deepest penetration) [m]; SAP's iteration counts are
                                          not exposed by pydrake, those columns stay empty
                    forces.csv            per step and body the total contact force on it (normal + friction, in
                                          contact_x/y/z, ipcsim's frame; Drake does not split it: friction_* NaN)
                    drake.csv             per step: penetration into the ground and between the bodies [m],
                                          smallest det F per body, the joints' lift and
                                          gap [m] and their tracking errors, the largest distance of a bubble's
                                          fixed vertex from its finger point [m], the teddy's surface centre
                                          height [m]
                    frames/volume_*.vtu   with --volume: tets with J = det F and body id

so that ``ipcsim plot OUT/ipcsim-low-h0.005 ... OUT/drake-h0.005 --body left_bubble`` overlays them (004 Fig. 4-5;
compare Drake's contact curves with ipcsim's contact + friction), and the frames can be checked like ipcsim's.
Wall times are the summed per-step times of both (no set-up, no output writing), printed with the process's CPU
time of the same steps (less sensitive to a loaded machine; both run on one thread); ipcsim first runs the grasp's
first 0.5 s untimed, into the first contacts, so that every Numba kernel is compiled or loaded from its cache.

Usage: python benchmarks/drake_grasp.py [--dt 0.01] [--end-time 4] [-o OUT] [--skip-ipcsim] [--wsg-gains]
The last line: ``drake over ipcsim wall time: X`` (Drake's wall time over ipcsim low's, same h).
``--plot-totals RUN [RUN...] [--labels a,b] [--png F.png]`` only draws ``ipcsim plot``'s figure with ipcsim's
contact + friction summed, the force Drake reports.
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _drake_run as dr  # noqa: E402
import _drake_scene as ds  # noqa: E402

from ipcsim.io import frames as io_frames
from ipcsim.app import runner  # noqa: E402

WARMUP = 0.5  # [s] of ipcsim's grasp run untimed first (the bubbles touch the teddy at about 0.36 s)
DRAKE_COLUMNS = ("step", "time", "wall_seconds", "n_contacts", "penetration_ground", "penetration_bodies",
                 "min_J_teddy", "min_J_left_bubble", "min_J_right_bubble", "lift", "gap", "lift_error", "gap_error",
                 "fixed_error", "teddy_centre_y")


def surface_frame(xs: list, bodies: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(vertices (n, 3) [m] in ipcsim's frame, faces (f, 3), body id (n,)) of the bodies' surfaces."""
    parts = []
    for x, b in zip(xs, bodies):
        used = np.unique(b.faces)
        remap = np.full(len(x), -1, np.int64)
        remap[used] = np.arange(len(used))
        parts.append((ds.drake_to_ipcsim(x[used]), remap[b.faces]))
    return dr.stack_surfaces(parts)


def write_frame(out: Path, index: int, xs: list, bodies: list, volume: bool) -> None:
    """OUT/frames/surface_<index>.ply (and volume_<index>.vtu)."""
    v, f, ids = surface_frame(xs, bodies)
    io_frames.write_ply(runner.frame_path(out, "surface", index), v, f, ids)
    if volume:
        offsets = np.cumsum([0] + [len(x) for x in xs])
        tets = np.concatenate([b.tets + o for b, o in zip(bodies, offsets)])
        jac = np.concatenate([io_frames.tet_jacobians(x, b.tets, b.dm_inv) for x, b in zip(xs, bodies)])
        body = np.concatenate([np.full(len(b.tets), k) for k, b in enumerate(bodies)])
        io_frames.write_volume_vtu(runner.frame_path(out, "volume", index),
                                   ds.drake_to_ipcsim(np.concatenate(xs)), tets, {"J": jac, "body": body})


def _record(grasp, step: int, t: float, wall: float, rows: dict) -> list:
    """Measure the state after a step (outside the timing) into rows; returns the positions."""
    xs = grasp.positions()
    count, forces = grasp.contacts()
    pens = ds.penetrations(xs, grasp.bodies)
    rows["stats"].append(dr.stats_row(step, t, wall, count, max(pens)))
    for k, b in enumerate(grasp.bodies):
        f = ds.drake_to_ipcsim_vector(forces[k])
        rows["forces"].append(dr.force_row(step, t, k, b.name, f))
    q = grasp.joint_positions()
    target, _ = ds.gripper_targets(t)
    lift, gap = q[0], q[2] - q[1]
    teddy = xs[0][np.unique(grasp.bodies[0].faces)]
    values = [*pens, *ds.min_jacobians(xs, grasp.bodies), lift, gap, lift - target[0], gap + 2 * target[1],
              grasp.fixed_error(xs), ds.drake_to_ipcsim(teddy)[:, 1].mean()]
    rows["drake"].append([step, repr(t), f"{wall:.6f}", count] + [repr(float(v)) for v in values])
    return xs


def run_drake(config: ds.GraspConfig, end_time: float, out: Path, every: int, volume: bool = False) -> dict:
    """Simulate the grasp in Drake and write the run layout into out; returns the summary (``summarize``)."""
    grasp = ds.build_grasp(config)
    runner.prepare_output(out, None, resume=False)
    io_frames.write_json(out / "drake_scene.json", {"name": out.name, "simulator": "drake 1.51.1 (pydrake)",
                                                    "time": {"end": end_time, "dt": config.dt},
                                                    **dataclasses.asdict(config)})
    write_frame(out, 0, grasp.positions(), grasp.bodies, volume)
    rows = {"stats": [], "forces": [], "drake": []}
    n = runner.step_count(end_time, config.dt)
    cpu = 0.0
    try:
        for k in range(1, n + 1):
            t0, c0 = time.perf_counter(), time.process_time()
            grasp.advance(k * config.dt)
            wall = time.perf_counter() - t0
            cpu += time.process_time() - c0
            xs = _record(grasp, k, k * config.dt, wall, rows)
            if k % every == 0:
                write_frame(out, k // every, xs, grasp.bodies, volume)
    finally:
        io_frames.write_csv(out / "stats.csv", runner.STATS_COLUMNS, rows["stats"])
        io_frames.write_csv(out / "forces.csv", runner.FORCES_COLUMNS, rows["forces"])
        io_frames.write_csv(out / "drake.csv", DRAKE_COLUMNS, rows["drake"])
    return {**summarize(out), "cpu": cpu}


def summarize(out: Path, at: float = 3.0) -> dict:
    """Figures of a run directory (Drake's or ipcsim's): summed step wall time [s], simulated time [s], steps,
    the left bubble's total contact force at time ``at`` (contact + friction, ipcsim's frame) [N], the contact
    count there, the teddy's surface-centre rise from the first to the last frame [m], and for Drake's runs the
    deepest penetration [m] and the smallest det F per body over the run."""
    stats, forces = dr.read_table(out / "stats.csv"), dr.read_table(out / "forces.csv")
    k = int(np.argmin(np.abs(stats["time"] - at)))
    left = (forces["name"] == "left_bubble") & (np.abs(forces["time"] - stats["time"][k]) < 1e-12)
    f = np.array([forces[c][left][0] for c in ("contact_x", "contact_y", "contact_z")])
    fr = np.array([forces[c][left][0] for c in ("friction_x", "friction_y", "friction_z")])
    frames = runner.list_frames(out)
    centre = [io_frames.read_ply(p, with_body=True) for p in (frames[0], frames[-1])]
    y = [v[ids == 0, 1].mean() for v, _, ids in centre]
    s = {"wall": float(np.nansum(stats["wall_seconds"])), "time": float(stats["time"][-1]),
         "steps": len(stats["time"]), "force_at": float(stats["time"][k]),
         "left_force": f + np.nan_to_num(fr), "contacts_at": int(stats["n_contacts"][k]), "rise": y[1] - y[0]}
    if (out / "drake.csv").is_file():
        d = dr.read_table(out / "drake.csv")
        s.update(penetration=(float(np.max(d["penetration_ground"])), float(np.max(d["penetration_bodies"]))),
                 min_j={b: float(np.min(d[f"min_J_{b}"])) for b in ds.BODY_NAMES},
                 tracking=float(np.max(np.abs(np.concatenate([d["lift_error"], d["gap_error"]])))),
                 fixed_error=float(np.max(d["fixed_error"])))
    return s


def run_ipcsim_low(dt: float, end_time: float, out: Path) -> tuple[dict, str]:
    """``ipcsim demo teddy-grasp --mode low --dt dt`` into out, after WARMUP s untimed; (summary, set-up name):
    the paper set-up where the demo has one (``setup="paper"``), else the demo's default."""
    from ipcsim.demos.teddy_grasp import GraspParameters, teddy_grasp

    setup = {"setup": "paper"} if "setup" in GraspParameters.__dataclass_fields__ else {}
    params = GraspParameters(mode="low", dt=dt, end_time=end_time, **setup)
    warm, _ = teddy_grasp(params)  # untimed warm-up into the first contacts: every kernel compiled or loaded
    state = warm.state
    for _ in range(runner.step_count(min(WARMUP, end_time), dt)):
        new = state.copy()
        warm.solver.step(state, new, None, dt)
        state = new
    sim, data = teddy_grasp(params)
    cpu, step = [0.0], sim.solver.step

    def timed_step(*args, **kwargs):  # the process's CPU time of the steps (load-independent, unlike wall time)
        c0 = time.process_time()
        result = step(*args, **kwargs)
        cpu[0] += time.process_time() - c0
        return result

    sim.solver.step = timed_step
    opts = runner.RunOptions.from_output(out, sim.output, progress=False,
                                         fingerprint=runner.scene_fingerprint(data))
    runner.run(sim, opts, data)
    name = setup.get("setup", "today's default") + f" (bubbles {getattr(params, 'bubble_material', '?')})"
    return {**summarize(out), "cpu": cpu[0]}, name


def report(label: str, s: dict) -> None:
    f = s["left_force"]
    print(f"{label}: {s['steps']} steps, {s['wall']:.2f} s wall ({s['wall'] / s['time']:.2f} s per simulated s), "
          f"{s['cpu']:.2f} s CPU; "
          f"left bubble force at t = {s['force_at']:.3f} s: ({f[0]:.3f}, {f[1]:.3f}, {f[2]:.3f}) N, "
          f"|F| {np.linalg.norm(f):.3f} N, {s['contacts_at']} contacts; teddy rose {s['rise']:.4f} m")
    if "penetration" in s:
        print(f"{label}: deepest penetration {1e3 * s['penetration'][0]:.3f} mm into the ground, "
              f"{1e3 * s['penetration'][1]:.3f} mm between the bodies; smallest det F: "
              + ", ".join(f"{b} {j:.3f}" for b, j in s["min_j"].items())
              + f"; worst joint tracking error {1e3 * s['tracking']:.3f} mm, fixed vertices off their finger by "
              f"up to {1e3 * s['fixed_error']:.3f} mm")


def plot_totals(out_dirs: list, labels: list | None, output: Path, body: str = "left_bubble") -> Path:
    """One figure of the runs' total contact force on ``body`` (contact + friction, the only force Drake reports)
    and contact counts (``ipcsim.app.plots.draw``'s four panels); returns the PNG's path."""
    from ipcsim.app import plots

    runs = []
    for k, d in enumerate(out_dirs):
        r = plots.load_run(d, body, None if labels is None else labels[k])
        total = r.contact + np.nan_to_num(r.friction)
        runs.append(dataclasses.replace(r, contact=total, friction=np.full_like(total, np.nan)))
    fig = plots.draw(runs)
    fig.suptitle(f"total contact force (contact + friction) on {body}")
    with io_frames.atomic_path(output) as tmp:
        fig.savefig(tmp, format="png")
    return output


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dt", type=float, default=0.01, help="time step [s] of both (default 0.01)")
    ap.add_argument("--end-time", type=float, default=4.0, help="simulated time [s] (default 4)")
    ap.add_argument("-o", "--output", default="ipcsim-out/drake-grasp", help="folder of the two runs")
    ap.add_argument("--every", type=int, default=None, help="a frame every N steps (default: 50 frames/s)")
    ap.add_argument("--volume", action="store_true", help="also write Drake's frames/volume_*.vtu")
    ap.add_argument("--skip-ipcsim", action="store_true", help="run Drake only (no ratio)")
    ap.add_argument("--wsg-gains", action="store_true",
                    help="the WSG SDF's PD gains (p 1e4 N/m, d 1 N s/m) instead of near-exact tracking")
    ap.add_argument("--approximation", choices=("lagged", "sap"), default="lagged",
                    help="SAP's discrete contact approximation (default lagged: the plant's default)")
    ap.add_argument("--plot-totals", nargs="+", metavar="RUN", help="only plot the total contact force on the left "
                    "bubble of these run directories (ipcsim's or Drake's) into --png")
    ap.add_argument("--labels", help="with --plot-totals: legend names, comma separated")
    ap.add_argument("--png", default="forces-total.png", help="with --plot-totals: the figure (default %(default)s)")
    args = ap.parse_args(argv)
    if args.plot_totals:
        labels = args.labels.split(",") if args.labels else None
        print(f"plot: {plot_totals(args.plot_totals, labels, Path(args.png))}")
        return 0
    runner.step_count(args.end_time, args.dt)  # RunError unless both are positive
    if args.every is not None and args.every < 1:
        raise ValueError(f"--every must be >= 1, got {args.every}")
    root, tag = Path(args.output), f"h{args.dt:g}"
    every = args.every or max(1, int(round(0.02 / args.dt)))
    ipc = None
    if not args.skip_ipcsim:
        ipc, setup = run_ipcsim_low(args.dt, args.end_time, root / f"ipcsim-low-{tag}")
        print(f"ipcsim low, set-up: {setup}")
        report("ipcsim low", ipc)
    config = ds.GraspConfig(dt=args.dt, approximation=args.approximation,
                            gains=ds.WSG_GAINS if args.wsg_gains else ds.STIFF_GAINS)
    drake = run_drake(config, args.end_time, root / f"drake-{tag}", every, args.volume)
    report("drake", drake)
    hits = dr.intersecting_frames(root / f"drake-{tag}")
    if hits is not None:
        print(f"drake: {hits[0]} of {hits[1]} frames intersect (ipctk)")
    if ipc is not None:
        print(f"drake over ipcsim CPU time: {drake['cpu'] / ipc['cpu']:.2f}")
        print(f"drake over ipcsim wall time: {drake['wall'] / ipc['wall']:.2f}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (ValueError, OSError) as exc:  # RunError and PlotError are ValueErrors: bad input, one line
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
