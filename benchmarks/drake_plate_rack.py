"""The plate-in-rack placement of Embedded IPC (004 §IV-B, Fig. 11) in Drake (issue #24 item 6): ipcsim's scene
(``ipcsim.demos.plate_rack_scene``: plate in its stand, free wire rack, FinRay fingers, the shipped trajectory CSVs) with
Drake's modelling as the paper ran it (``_drake_plate_scene``: rigid fingers with a compliant hydroelastic contact
surface, rigid plate and rack), its frames judged by ipcsim's own exact intersection check.

Needs the optional ``compare`` extra (pydrake). Writes ipcsim's run layout (docs/output.md) into OUT:

    frames/surface_*.ply  plate, rack, left finger, right finger, stand (body ids 0-4), ipcsim's frame (y up);
                          the fingers as Drake sees them (their convex hulls), the rack's polygonal tubes (inside
                          Drake's cylinders: an intersection in a frame is one with Drake's geometry too)
    stats.csv             ipcsim's columns: time, wall_seconds (AdvanceTo of one step), n_contacts (point pairs
                          plus hydroelastic contact polygons: SAP's contact points), min_distance = -(Drake's
                          deepest plate-wire point-contact depth) [m]
    forces.csv            per step and body the total contact force on it [N] (friction not split off: NaN)
    drake_plate.csv       per frame: plate-wire intersecting edge-face pairs (ipcsim's exact check), plate
                          vertices inside a wire (deepest, [m]), a wire's surface inside the plate (deepest, [m]),
                          the plate's centre (3,) [m] and tilt [deg], the gripper's worst tracking error [m]

Usage: python benchmarks/drake_plate_rack.py [--trajectory clean|offset] [--dt 0.01] [--out OUT]
       [--rack-contact rigid|compliant] [--end-time T] [--every N] [--fixed-rack] [--mu 0.5] [--finger-mu 0.8]
       [--finger-force 40 (N a finger; inf: follow the width column)]
The last line: ``drake plate-wire intersecting frames: K of F`` (ipcsim's frames of the same scene: 0).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _drake_plate_scene as dps  # noqa: E402
import _drake_run as dr  # noqa: E402
from _drake_scene import _point_triangle_distance  # noqa: E402

from ipcsim.io import frames as io_frames
from ipcsim.app import runner  # noqa: E402
from ipcsim.demos.plate_rack_scene import SLOT  # noqa: E402

PLATE, RACK = dps.BODY_NAMES.index("plate"), dps.BODY_NAMES.index("rack")
FRAME_COLUMNS = ("frame", "time", "plate_wire_pairs", "plate_in_wire", "wire_in_plate", "centre_x", "centre_y",
                 "centre_z", "tilt_deg", "tracking_error")


class FrameJudge:
    """ipcsim's exact edge-face intersection check (``contact.intersection.find_intersections``) on a run's
    frames, its hits sorted by the pair of bodies they join, and the geometric depths between plate and wires.

    Built from frame 0 (body ids of ``_drake_plate_scene.BODY_NAMES``) and the rack's tubes at t = 0 (start,
    end, radius in the world); later frames move the rack rigidly (recovered by a least-squares fit)."""

    def __init__(self, frame0: Path, tubes: list):
        from ipcsim.geometry.collision_mesh import CollisionMesh

        v, f, body = io_frames.read_ply(frame0, with_body=True)
        self.sel = {k: np.flatnonzero(body == k) for k in np.unique(body)}
        self.order = np.concatenate(list(self.sel.values()))
        parts = []
        for k, idx in self.sel.items():
            remap = np.full(len(v), -1, np.int64)
            remap[idx] = np.arange(len(idx))
            parts.append(CollisionMesh.from_triangle_mesh(v[idx], remap[f[np.all(body[f] == k, axis=1)]], body=k))
            if k == PLATE:
                self.plate_faces = parts[-1].faces
        self.mesh = CollisionMesh.concatenate(parts)
        self.rack0 = v[self.sel[RACK]]
        self.tubes = tubes
        self.oracle = _ipctk_mesh(parts[list(self.sel).index(PLATE)], parts[list(self.sel).index(RACK)])

    def oracle_hit(self, v: np.ndarray) -> bool | None:
        """Whether ipctk (the test oracle) finds the plate and the rack intersecting in a frame's vertices v;
        None without ipctk."""
        if self.oracle is None:
            return None
        import ipctk

        return bool(ipctk.has_intersections(self.oracle, np.concatenate([v[self.sel[PLATE]], v[self.sel[RACK]]])))

    def pairs(self, v: np.ndarray) -> dict:
        """{(body a, body b) with a < b: intersecting edge-face pairs} in a frame's vertices v (n, 3) [m]; pairs
        within one body are left out (the rack's tubes are separate closed tubes that never touch at rest)."""
        from ipcsim.contact.intersection import find_intersections

        hits = find_intersections(self.mesh, v[self.order])
        body = self.mesh.body
        a, b = body[self.mesh.edges[hits[:, 0], 0]], body[self.mesh.faces[hits[:, 1], 0]]
        out: dict = {}
        for x, y in zip(a, b):
            if x != y:
                key = (int(min(x, y)), int(max(x, y)))
                out[key] = out.get(key, 0) + 1
        return out

    def depths(self, v: np.ndarray, spacing: float = 5e-4, around: int = 12) -> tuple[float, float]:
        """(deepest plate vertex inside a wire: radius - its distance to the wire's axis, deepest point of a wire's
        surface inside the plate: its distance to the plate's surface) [m] in a frame's vertices v (n, 3) (0 where
        none). The wires' surfaces are their cylinders sampled every ``spacing`` [m] along and ``around`` times
        around (only the samples in the plate's bounding box are tested)."""
        plate = v[self.sel[PLATE]]
        tri = plate[self.plate_faces]
        r, t = rigid_fit(self.rack0, v[self.sel[RACK]])
        in_wire, in_plate = 0.0, 0.0
        lo, hi = plate.min(axis=0), plate.max(axis=0)
        angles = 2.0 * np.pi * np.arange(around) / around
        for a0, b0, radius in self.tubes:
            a, b = r @ a0 + t, r @ b0 + t
            axis = b - a
            s = np.clip((plate - a) @ axis / (axis @ axis), 0.0, 1.0)
            d = np.linalg.norm(plate - a - s[:, None] * axis, axis=1)
            in_wire = max(in_wire, float(np.max(radius - d, initial=0.0)))
            n = max(2, int(np.ceil(np.linalg.norm(axis) / spacing)) + 1)
            e1, e2 = _perpendiculars(axis)
            ring = radius * (np.cos(angles)[:, None] * e1 + np.sin(angles)[:, None] * e2)
            pts = (a + np.linspace(0.0, 1.0, n)[:, None, None] * axis + ring[None]).reshape(-1, 3)
            pts = pts[np.all((pts >= lo) & (pts <= hi), axis=1)]
            for chunk in np.array_split(pts, max(1, len(pts) // 256)):
                inside = chunk[winding_numbers(chunk, tri) > 0.5]
                if len(inside):
                    in_plate = max(in_plate, float(_point_triangle_distance(inside, tri).min(axis=1).max()))
        return in_wire, in_plate


def _perpendiculars(axis: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two unit vectors (3,) perpendicular to axis (3,) and to each other."""
    u = axis / np.linalg.norm(axis)
    e1 = np.cross(u, np.eye(3)[int(np.argmin(np.abs(u)))])
    e1 /= np.linalg.norm(e1)
    return e1, np.cross(u, e1)


def _ipctk_mesh(plate, rack):
    """ipctk's CollisionMesh of the plate's and the rack's surfaces (ipcsim CollisionMeshes), None without ipctk
    (each alone is free of intersections: the rack's tubes never touch)."""
    try:
        import ipctk
    except ImportError:
        return None
    v = np.concatenate([plate.rest_positions, rack.rest_positions])
    faces = np.concatenate([plate.faces, rack.faces + plate.n_vertices]).astype(np.int32)
    return ipctk.CollisionMesh(v, ipctk.edges(faces), faces)


def rigid_fit(x0: np.ndarray, x1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(R (3, 3), t (3,) [m]) minimising |R x0 + t - x1| over the points x0, x1 (n, 3) (Kabsch)."""
    c0, c1 = x0.mean(axis=0), x1.mean(axis=0)
    u, _, vt = np.linalg.svd((x1 - c1).T @ (x0 - c0))
    d = np.sign(np.linalg.det(u @ vt))
    r = u @ np.diag([1.0, 1.0, d]) @ vt
    return r, c1 - r @ c0


def winding_numbers(p: np.ndarray, tri: np.ndarray) -> np.ndarray:
    """(k,) winding numbers of points p (k, 3) [m] about the closed outward triangle surface tri (f, 3, 3) [m]
    (the solid angles' sum over 4 pi: 1 inside, 0 outside)."""
    if len(p) == 0:
        return np.zeros(0)
    a, b, c = (tri[None, :, i] - p[:, None] for i in range(3))
    la, lb, lc = (np.linalg.norm(x, axis=2) for x in (a, b, c))
    num = np.einsum("kfi,kfi->kf", a, np.cross(b, c))
    den = (la * lb * lc + np.einsum("kfi,kfi->kf", a, b) * lc + np.einsum("kfi,kfi->kf", b, c) * la
           + np.einsum("kfi,kfi->kf", c, a) * lb)
    return np.sum(2.0 * np.arctan2(num, den), axis=1) / (4.0 * np.pi)


def plate_state(scene) -> tuple[np.ndarray, float]:
    """(the plate's centre (3,) [m]: the middle of its surface's bounding box, tilt [deg]: the angle of its
    symmetry axis from the slot direction x, which the upright plate's axis follows), as ipcsim's demo judges
    its plate."""
    body = scene.bodies["plate"]
    r, _ = scene.pose(body)
    x = scene.positions()[scene.names().index("plate")]
    centre = 0.5 * (x.min(axis=0) + x.max(axis=0))
    axis = r[:, 2]  # the OBJ file's z: the plate's axis
    return centre, float(np.degrees(np.arccos(min(1.0, abs(axis[0])))))


def _record(scene, step: int, t: float, wall: float, rows: dict) -> None:
    """The state after a step (outside the timing) into rows."""
    c = scene.contacts()
    rows["stats"].append(dr.stats_row(step, t, wall, c["count"], c["plate_rack_depth"]))
    for k, name in enumerate(scene.names()):
        rows["forces"].append(dr.force_row(step, t, k, name, c["forces"][dps.BODY_NAMES.index(name)]))
    error = np.abs(scene.joint_positions() - scene.plan.q[step])
    rows["tracking"].append(float(np.max(error[:6])))  # the pose joints (the fingers stop on the plate)


def run_drake(setup, config, end_time: float, out: Path, every: int) -> dict:
    """Simulate the placement and write the run layout into out; returns ``judge``'s summary plus the wall and
    CPU time of the steps [s]."""
    n = runner.step_count(end_time, config.dt)
    scene = dps.build_plate_rack(setup, n, config)
    runner.prepare_output(out, None, resume=False)
    io_frames.write_json(out / "drake_scene.json", {
        "name": out.name, "simulator": "drake 1.51.1 (pydrake)", "time": {"end": end_time, "dt": config.dt},
        "rack_contact": config.rack_contact, "finger_modulus": config.finger_modulus, "mu": setup.mu,
        "finger_mu": setup.finger_mu,
        "fixed_rack": setup.fixed_rack, "euler_order": scene.plan.order, "bodies": scene.names(),
        "finger_force": config.finger_force if np.isfinite(config.finger_force) else None})
    parts = lambda: list(zip(scene.positions(), [scene.surfaces[k][1] for k in scene.names()]))  # noqa: E731
    dr.write_surface_frame(out, 0, parts())
    rows = {"stats": [], "forces": [], "tracking": [], "plate": [(0.0, *plate_state(scene))]}
    wall = cpu = 0.0
    try:
        for k in range(1, n + 1):
            t0, c0 = time.perf_counter(), time.process_time()
            scene.advance(k * config.dt)
            step_wall = time.perf_counter() - t0
            cpu += time.process_time() - c0
            wall += step_wall
            _record(scene, k, k * config.dt, step_wall, rows)
            if k % every == 0:
                dr.write_surface_frame(out, k // every, parts())
                rows["plate"].append((k * config.dt, *plate_state(scene)))
    finally:
        io_frames.write_csv(out / "stats.csv", runner.STATS_COLUMNS, rows["stats"])
        io_frames.write_csv(out / "forces.csv", runner.FORCES_COLUMNS, rows["forces"])
    track = np.array(rows["tracking"])
    frame_tracking = [0.0] + [float(track[(i + 1) * every - 1]) for i in range(len(rows["plate"]) - 1)]
    summary = judge(out, scene, rows["plate"], frame_tracking)
    return {**summary, "wall": wall, "cpu": cpu, "steps": n, "time": n * config.dt,
            "tracking": float(track.max()), "drake_depth": float(-np.min(
                dr.read_table(out / "stats.csv")["min_distance"]))}


def judge(out: Path, scene, plate_rows: list, tracking: list) -> dict:
    """Judge every frame of out: plate-wire intersections and depths (``FrameJudge``); writes drake_plate.csv
    and returns {"frames", "hit_frames", "first_hit", "plate_in_wire", "wire_in_plate", "centre", "tilt",
    "in_slot", "oracle_hit_frames", "by_pair"} and ``where_it_ends``'s keys (in_slot: the final centre inside the
    setup's slot box and the tilt under 10 degrees; oracle_hit_frames: ipctk's count of the plate-wire frames or
    None; by_pair: frames with an intersection per pair of bodies)."""
    frames = runner.list_frames(out)
    tubes = [(a + scene.setup.rack_translation, b + scene.setup.rack_translation, r)
             for a, b, r in dps.rack_tubes(scene.setup.rack)]
    fj = FrameJudge(frames[0], tubes)
    rows, hits, by_pair, oracle = [], [], {}, []
    for i, (path, (t, centre, tilt), track) in enumerate(zip(frames, plate_rows, tracking)):
        v, _ = io_frames.read_ply(path)
        found = fj.pairs(v)
        for key in found:
            by_pair[key] = by_pair.get(key, 0) + 1
        pairs = found.get((PLATE, RACK), 0)
        oracle.append(fj.oracle_hit(v))
        depth = fj.depths(v) if pairs else (0.0, 0.0)  # disjoint surfaces: no wire can be inside the plate
        hits.append(pairs > 0)
        rows.append([i, repr(t), pairs, *(repr(d) for d in depth), *(repr(float(c)) for c in centre), repr(tilt),
                     repr(track)])
    io_frames.write_csv(out / "drake_plate.csv", FRAME_COLUMNS, rows)
    table = dr.read_table(out / "drake_plate.csv")
    centre, tilt = plate_rows[-1][1], plate_rows[-1][2]
    box = scene.setup.slot_box
    inside = box is not None and bool(np.all(centre >= box[0]) and np.all(centre <= box[1]))
    first = int(np.flatnonzero(hits)[0]) if any(hits) else None
    names = scene.names()
    ends = where_it_ends(io_frames.read_ply(frames[-1])[0], fj, scene.setup)
    return {**ends, "frames": len(frames), "hit_frames": int(np.sum(hits)),
            "oracle_hit_frames": None if oracle[0] is None else int(np.sum(oracle)),
            "by_pair": {f"{names[a]}-{names[b]}": n for (a, b), n in sorted(by_pair.items())},
            "first_hit": None if first is None else float(table["time"][first]),
            "plate_in_wire": float(table["plate_in_wire"].max()), "wire_in_plate": float(table["wire_in_plate"].max()),
            "centre": centre, "tilt": tilt, "in_slot": inside and tilt < 10.0}


def where_it_ends(v: np.ndarray, fj: FrameJudge, setup) -> dict:
    """Where the last frame's vertices v (n, 3) [m] leave plate and rack: {"rack_shift": (3,) [m] the move of the
    rack's vertex centroid and "rack_turn" [deg] its rotation angle from the start, "foot_slot": the slot
    (0-based, across x) that holds the plate's lowest point, in the rack's own frame, between the surfaces of two
    dividers' wires (None: in none), "foot_height" [m]: that point's height above the table}."""
    r, t = rigid_fit(fj.rack0, v[fj.sel[RACK]])
    plate = v[fj.sel[PLATE]]
    foot = plate[np.argmin(plate[:, 1])]
    local_x = (r.T @ (foot - t))[0] - setup.rack_translation[0]
    half = 0.5 * setup.rack.params["wire_diameter"]
    dx = setup.rack.divider_x
    slot = [k for k in range(len(dx) - 1) if dx[k] + half < local_x < dx[k + 1] - half]
    return {"rack_shift": v[fj.sel[RACK]].mean(axis=0) - fj.rack0.mean(axis=0),
            "rack_turn": float(np.degrees(np.arccos(np.clip(0.5 * (np.trace(r) - 1.0), -1.0, 1.0)))),
            "foot_slot": slot[0] if slot else None, "foot_height": float(foot[1] - setup.ground)}


def report(label: str, s: dict) -> None:
    print(f"{label}: {s['steps']} steps, {s['wall']:.2f} s wall, {s['cpu']:.2f} s CPU "
          f"(real-time factor {s['time'] / s['wall']:.2f}); gripper pose tracking error up to "
          f"{1e3 * s['tracking']:.3f} mm")
    first = "" if s["first_hit"] is None else f", the first at t = {s['first_hit']:.2f} s"
    print(f"{label}: plate-wire intersection in {s['hit_frames']} of {s['frames']} frames{first}; deepest: "
          f"Drake's point-contact depth {1e3 * s['drake_depth']:.3f} mm, a plate vertex {1e3 * s['plate_in_wire']:.3f}"
          f" mm inside a wire, a wire's surface {1e3 * s['wire_in_plate']:.3f} mm inside the plate")
    pairs = ", ".join(f"{k} {n}" for k, n in s["by_pair"].items()) or "none"
    print(f"{label}: frames with an intersection, per pair of bodies: {pairs}")
    c = s["centre"]
    print(f"{label}: plate ends at ({c[0]:.4f}, {c[1]:.4f}, {c[2]:.4f}) m, tilt {s['tilt']:.1f} deg: "
          f"{'in' if s['in_slot'] else 'NOT in'} the slot (ipcsim demo's test); its lowest point "
          f"{1e3 * s['foot_height']:.1f} mm above the table, "
          + ("in no slot" if s["foot_slot"] is None else f"in slot {s['foot_slot']} (target {SLOT})")
          + f"; the rack moved by {np.round(1e3 * s['rack_shift'], 1)} mm, turned {s['rack_turn']:.1f} deg")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trajectory", choices=("clean", "offset"), default="clean")
    ap.add_argument("--dt", type=float, default=0.01, help="time step [s] (default 0.01)")
    ap.add_argument("--out", default=None, help="run folder (default ipcsim-out/drake-plate-rack-<trajectory>)")
    ap.add_argument("--end-time", type=float, default=None,
                    help="simulated time [s] (default: the trajectory's end, as ipcsim's demo)")
    ap.add_argument("--every", type=int, default=None, help="a frame every N steps (default: 50 frames/s)")
    ap.add_argument("--rack-contact", choices=("rigid", "compliant"), default="rigid",
                    help="rigid (default): plate-wire point contact; compliant: hydroelastic wires")
    ap.add_argument("--mu", type=float, default=0.5, help="friction between plate, rack, stand, table (default 0.5)")
    ap.add_argument("--finger-mu", type=float, default=0.8, help="friction between fingers and plate (default 0.8)")
    ap.add_argument("--fixed-rack", action="store_true", help="weld the rack to the world")
    ap.add_argument("--finger-force", type=float, default=dps.GRIP_FORCE,
                    help=f"effort limit [N] of each finger's force-limited driver (default {dps.GRIP_FORCE:g}, Drake's "
                    "WSG-50 default; inf: the fingers follow the width column and squeeze the plate out)")
    args = ap.parse_args(argv)
    if args.every is not None and args.every < 1:
        raise ValueError(f"--every must be >= 1, got {args.every}")
    setup = dps.setup_from_scene(args.trajectory, mu=args.mu, finger_mu=args.finger_mu, fixed_rack=args.fixed_rack)
    end = args.end_time if args.end_time is not None else setup.trajectory.time_range[1]
    runner.step_count(end, args.dt)  # RunError unless both are positive
    out = Path(args.out or f"ipcsim-out/drake-plate-rack-{args.trajectory}")
    every = args.every or max(1, int(round(0.02 / args.dt)))
    config = dps.DrakePlateConfig(dt=args.dt, rack_contact=args.rack_contact, finger_force=args.finger_force)
    s = run_drake(setup, config, end, out, every)
    report(f"drake {args.trajectory}", s)
    hits = dr.intersecting_frames(out)
    if hits is not None:
        print(f"drake {args.trajectory}: {hits[0]} of {hits[1]} frames intersect anywhere (ipctk; the compliant "
              f"fingers' hulls overlap the plate by design)")
    if s["oracle_hit_frames"] is not None:
        print(f"drake {args.trajectory}: ipctk finds plate and rack intersecting in {s['oracle_hit_frames']} frames")
    print(f"drake plate-wire intersecting frames: {s['hit_frames']} of {s['frames']}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (ValueError, OSError) as exc:  # RunError and TrajectoryError are ValueErrors: bad input, one line
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
