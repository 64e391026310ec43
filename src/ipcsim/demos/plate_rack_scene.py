"""The plate-in-rack placement of Embedded IPC §IV-B (issue 24, item 5): scene geometry and the two scripted
gripper trajectories (``ipcsim demo plate-rack --trajectory clean|offset``).

Why the plate starts upright in a stand: a two-finger parallel gripper cannot pick a plate lying flat on a table
(the plate is 17.8 mm from foot to rim: the fingers' tips would have to get under a 3 mm rim lip lying on the
table). A dish-loading robot picks plates standing in a drying stand or a rack, pinching the top of the rim lip
between its fingers from above, and keeps the plate upright all the way into the dish rack's slot, so no
re-grasp or turn is needed. Here the plate stands in a groove on the table (a plate stand: two fixed jaws, the
source fixture), leaning a little against one jaw; the gripper comes down over its top, closes its two FinRay
fingers across the rim lip (the fingers wrap the slanted lip), lifts, carries over the rack, lowers the plate
into the middle slot until its rim is ``PLACE_CLEARANCE`` above the rack's rails, opens and retracts.

World frame (y up, metres): the table is y = 0; the rack (``plate_rack.rack_for_plate``, 3 slots) is centred on
x = z = 0 and rests on the table, free (an affine body); its slot ``SLOT`` is centred on x = 0; the stand is at
x = ``STAND_X``. The plate stands with its axis along x (its foot towards -x), its rim's plane y-z.

Gripper: a rigid frame rolled by ``GRIPPER_ROLL`` about z (its pads follow the slant of the rim lip) whose
origin is the pinch point (between the two finger pads, at the height of the pinch); its opening axis is its x.
Each finger (``geometry.finray``, ``FINGER``) hangs tip down, turned by its flank angle so that its contact flank
faces the plate, leaning inwards by ``PAD_TILT``; its mounting face (the finger's base) is fixed to the gripper's
jaw. The trajectory's ``width`` is the jaw separation: the distance between the two mounting faces' centres
along the opening axis (as a gripper's driver reports it, not the pad gap): the pad gap at the
pinch height is ``width - 2 * pad_offset()``.

Trajectories (CSV, ``time, x, y, z, qw, qx, qy, qz, width``, sampled at ``SAMPLE_RATE``): ``trajectory_rows``
makes them (minimum-jerk segments between the waypoints of ``waypoints``), ``write_trajectories`` writes the
shipped files ``data/trajectories/plate_rack_{clean,offset}.csv``; the offset one places the plate
``OFFSET`` [m] off the slot's centre along x (across the slot: the rim lands on a divider's wires).
"""
from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from ..geometry.finray import extrude_prisms, finray_cage, finray_profile, triangulate_profile
from ..model import box_tet_mesh
from .plate_rack_parts import plate_mesh, rack_for_plate, upright_plate_rotation

#: [m] barrier distance of the scene
DHAT = 1e-3
#: the dish rack's slot the plate goes into (the middle one of 3)
SLOT = 1
N_SLOTS = 3
#: [m] x of the stand's groove centre (the rack spans x in about [-0.05, 0.05])
STAND_X = -0.25
#: [m] the stand's jaws: height, length along z, thickness along x, clearance to the plate a side
STAND_HEIGHT, STAND_LENGTH, STAND_JAW, STAND_CLEARANCE = 0.04, 0.12, 0.01, 0.002
#: the FinRay finger (``geometry.finray.finray_finger`` keywords; the generator's defaults: 100 mm long, 45 mm
#: base, 20 mm thick, 1.8 mm flanks, five 1.2 mm ribs tilted -15 degrees towards the contact flank as in
#: ``scene.finray_push``)
FINGER = dict(length=0.1, base_width=0.045, thickness=0.02, flank_thickness=0.0018, rib_thickness=0.0012,
              n_ribs=5, rib_angle=float(np.radians(-15.0)))
#: [m] the embedded finger's fine (collision and mass) mesh: triangle size and z layers (its outline is exact at
#: any size: the profile's corners are mesh vertices; the elasticity lives on the cage)
FINE_RESOLUTION, FINE_LAYERS = 0.003, 2
#: [m] the conforming cage (``finray_cage``, margin 0): triangle size (one to two triangles across a wall) and z
#: layers: one (20 mm prisms; the fin-ray bending is in the profile's plane). Measured with
#: ``scene.finray_push`` on this 20 mm finger (10 mm push at mid-flank, 4 quasi-static steps, docs/finray.md):
#: full space tip +1.29 mm towards the pusher, 3.86 N; 1 layer (1,386 nodes) +0.77 mm, 5.97 N; 2 layers (2,079
#: nodes) +0.70 mm, 6.12 N: both keep the mode, and the demo's step takes about 0.6 of the 2-layer time
CAGE_RESOLUTION, CAGE_LAYERS = 0.0012, 1
#: [m] the full-space finger: triangle size (two triangles across a 1.2 mm rib: ``finray_finger``'s advice of at
#: most rib / 1.4, else linear tets lock the ribs' hinges) and z layers (5 mm)
FULL_RESOLUTION, FULL_LAYERS = 0.0008, 4
#: [m] the fingers' tips go GRASP_DEPTH below the plate's top; the pinch point (the gripper's origin, where the
#: trajectory's pad gap is measured) is PINCH_DEPTH below it
GRASP_DEPTH, PINCH_DEPTH = 0.015, 0.01
#: [m] the pinch point's x from the plate's foot plane: the middle of the rim lip at PINCH_DEPTH (the lip's
#: section at 10 mm below the top spans 10.6 to 14.8 mm from the foot plane, ``plate_section``)
PINCH_X = 0.0127
#: [rad] the pads lean inwards by this angle (the tips closest): closing on the 4 mm lip the pads' upper parts
#: stay apart (vertical pads squeezing past the lip would meet above the plate's top)
PAD_TILT = float(np.radians(8.0))
#: [rad] the gripper's roll about z: its pads follow the rim lip, which slants by about 20 degrees (its top towards
#: +x: ``plate_section`` moves 3.2-4.1 mm in x over 10 mm of depth). With the gripper upright the fingers align
#: the lip with their pads and the held plate hangs tilted by about the slant (measured: 12-16 degrees while
#: carried, 27 degrees after landing on the wires).
GRIPPER_ROLL = float(np.radians(-20.0))
#: [m] pad gap at the pinch height: open; at first contact (the lip's section there, 4.2 mm); how far past
#: first contact each pad is driven when closing
PAD_GAP_OPEN, PAD_GAP_CONTACT, SQUEEZE = 0.05, 0.0042, 0.005
#: [m] lift of the plate's lowest point above the rack's wire tops while carrying
CARRY_CLEARANCE = 0.03
#: [m] the placed plate's lowest point above the rack's rails when the fingers open
PLACE_CLEARANCE = 0.004
#: [m] the offset trajectory's lateral (x) offset of the place pose from the slot's centre
OFFSET = 0.005
#: [s] Rayleigh stiffness damping of the fingers: the paper's teddy set-up's 0.05 s (``teddy_grasp``); without it
#: the plate held at its rim kept swinging 4-5 degrees after the carry (a pendulum on the fingers' compliance)
FINGER_DAMPING = 0.05
#: [1/s] the trajectories' sampling rate
SAMPLE_RATE = 100.0
TRAJECTORIES = ("clean", "offset")


def _rot_z(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def flank_angle(finger: dict = FINGER) -> float:
    """[rad] the angle between a flank and the finger's axis (atan(base_width / 2 / length))."""
    return float(np.arctan2(0.5 * finger["base_width"], finger["length"]))


def finger_meshes(finger: dict = FINGER) -> dict:
    """The finger in its own frame (``geometry.finray``: base on y = 0, tip at (0, length), z in [0, thickness]):
    {"fine": (vertices (n, 3) [m], tets (m, 4)) the collision/mass mesh, "cage": (vertices, tets) the conforming
    cage (``finray_cage``), "full": the full-space finger's mesh (``FULL_RESOLUTION``)}."""
    outer, holes = finray_profile(finger["length"], finger["base_width"], finger["flank_thickness"],
                                  finger["rib_thickness"], finger["n_ribs"], finger["rib_angle"])
    pts, tri = triangulate_profile(outer, holes, FINE_RESOLUTION)
    fine = extrude_prisms(pts, tri, np.linspace(0.0, finger["thickness"], FINE_LAYERS + 1))
    cage = finray_cage(resolution=CAGE_RESOLUTION, layers=CAGE_LAYERS, **finger)
    pts, tri = triangulate_profile(outer, holes, FULL_RESOLUTION)
    full = extrude_prisms(pts, tri, np.linspace(0.0, finger["thickness"], FULL_LAYERS + 1))
    return {"fine": fine, "cage": cage, "full": full}


def finger_placement(side: int, pinch, pad_gap: float, finger: dict = FINGER) -> tuple[np.ndarray, np.ndarray]:
    """(rotation (3, 3), translation (3,) [m]) placing a finger (own frame) in the world for side -1 (at -x of the
    pinch point (3,) [m], its +x flank the pad) or +1: tip down, turned by ``flank_angle`` (the pad vertical)
    then leaning by ``PAD_TILT`` (the tip inwards); the pad crosses the pinch height at x = pinch_x + side
    pad_gap / 2 [m], the tip is GRASP_DEPTH - PINCH_DEPTH below the pinch point, z centred on it."""
    a = flank_angle(finger)
    # own frame: the +x flank runs from (w/2, 0) to (0, L); turn it vertical, flip tip-down (diag(1, -1, -1):
    # pad facing +x, or diag(-1, -1, 1): facing -x), then lean the tip inwards
    flip = np.diag([1.0, -1.0, -1.0]) if side < 0 else np.diag([-1.0, -1.0, 1.0])
    rot = _rot_z(-side * PAD_TILT) @ flip @ _rot_z(-a)
    corner = rot @ np.array([0.5 * finger["base_width"], 0.0, 0.5 * finger["thickness"]])
    tip = rot @ np.array([0.0, finger["length"], 0.5 * finger["thickness"]])
    ty = pinch[1] - (GRASP_DEPTH - PINCH_DEPTH) - tip[1]
    s = (pinch[1] - (corner[1] + ty)) / (tip[1] - corner[1])  # where the pad crosses the pinch height
    pad_x = corner[0] + s * (tip[0] - corner[0])
    t = np.array([pinch[0] + side * 0.5 * pad_gap - pad_x, ty, pinch[2] - tip[2]])
    return rot, t


def mount_nodes_local(nodes: np.ndarray) -> np.ndarray:
    """Indices of the nodes (k, 3) [m] (in the finger's own frame) on its mounting face (its base, y = min y)."""
    return np.flatnonzero(nodes[:, 1] <= nodes[:, 1].min() + 1e-9)


def plate_section(depth: float) -> tuple[float, float]:
    """[m] the upright plate's section along x at ``depth`` [m] below its top, in its symmetry plane (z = 0): the
    x of its back and front surfaces, measured from the foot plane (the rim lip is a shell slanting towards +x
    upwards: 10.6 to 14.8 mm at 10 mm depth, 15.5 to 17.7 mm at 1 mm)."""
    v, f = plate_mesh()
    u = v @ upright_plate_rotation().T
    y = u[:, 1].max() - depth
    hits = []
    for tri in u[f]:
        e1, e2 = tri[1] - tri[0], tri[2] - tri[0]
        a = np.array([[e1[1], e2[1]], [e1[2], e2[2]]])
        if abs(np.linalg.det(a)) < 1e-18:
            continue
        l1, l2 = np.linalg.solve(a, [y - tri[0, 1], -tri[0, 2]])
        if l1 >= 0 and l2 >= 0 and l1 + l2 <= 1:
            hits.append(tri[0, 0] + l1 * e1[0] + l2 * e2[0])
    return float(min(hits)), float(max(hits))


def pad_offset(finger: dict = FINGER) -> float:
    """[m] x distance from a finger's pad (contact flank, at the pinch height) to its mounting face's centre."""
    rot, t = finger_placement(-1, np.zeros(3), 0.0, finger)
    base_centre = rot @ np.array([0.0, 0.0, 0.5 * finger["thickness"]]) + t
    return float(abs(base_centre[0]))


@dataclass
class SceneGeometry:
    """The placement's geometry at t = 0 (world frame of the module docstring, metres).

    plate: (vertices (450, 3), triangles) in the plate's own frame (``plate_rack.plate_mesh``); plate_rotation
    (3, 3), plate_translation (3,): its pose (x_world = R x + t); rack: the ``WireRack`` (own frame) and
    rack_translation (3,); stand: list of the two jaws (vertices (8.., 3) world, tets) fixed; slot_box: (min (3,),
    max (3,)) the box the placed plate's centre must lie in; slot_center (3,); fingers: {"left"/"right":
    (rotation (3, 3), translation (3,))} placing ``finger_meshes`` at the start; pinch_start (3,): the gripper
    origin at t = 0; plate_top (3,) the plate's top point (on its rim); plate_radius, plate_height [m]: the
    rim's radius and the foot-to-rim height."""

    plate: tuple
    plate_rotation: np.ndarray
    plate_translation: np.ndarray
    rack: object
    rack_translation: np.ndarray
    stand: list
    slot_box: tuple
    slot_center: np.ndarray
    fingers: dict
    pinch_start: np.ndarray
    plate_top: np.ndarray
    plate_radius: float
    plate_height: float


def scene_geometry() -> SceneGeometry:
    """The scene's geometry at t = 0 (see ``SceneGeometry``)."""
    rack = rack_for_plate(n_slots=N_SLOTS)
    lift = 1.5 * DHAT  # rack and plate start just out of the table's barrier band and settle onto it
    rack_t = np.array([0.0, lift, 0.0])
    v, f = plate_mesh()
    rot = upright_plate_rotation()
    radius, height = float(np.abs(v[:, 0]).max()), float(np.ptp(v[:, 1]))
    plate_t = np.array([STAND_X - 0.5 * height, lift + radius, 0.0])  # its foot plane at STAND_X - h / 2
    jaw_v, jaw_t = box_tet_mesh((STAND_JAW, STAND_HEIGHT, STAND_LENGTH), (1, 2, 2))
    stand = []
    for x0 in (STAND_X - 0.5 * height - STAND_CLEARANCE - STAND_JAW, STAND_X + 0.5 * height + STAND_CLEARANCE):
        stand.append((jaw_v + [x0, 0.0, -0.5 * STAND_LENGTH], jaw_t))
    wire = rack.params["wire_diameter"]
    dx = rack.divider_x
    c = rack.slot_centers[SLOT] + rack_t
    lo = np.array([dx[SLOT] + 0.5 * wire, c[1], -0.5 * rack.params["wire_spacing"]])
    hi = np.array([dx[SLOT + 1] - 0.5 * wire, c[1] + 2.0 * radius, 0.5 * rack.params["wire_spacing"]])
    top = np.array([0.0, plate_t[1] + radius, 0.0])
    pinch = np.array([plate_t[0] + PINCH_X, top[1] - PINCH_DEPTH, 0.0])
    start = pinch + [0.0, 0.08, 0.0]  # the gripper starts 8 cm above the pinch
    roll = gripper_rotation()
    fingers = {}
    for name, side in (("left", -1), ("right", 1)):
        f_rot, f_t = finger_placement(side, np.zeros(3), PAD_GAP_OPEN)  # in the gripper's frame
        fingers[name] = (roll @ f_rot, roll @ f_t + start)
    return SceneGeometry((v, f), rot, plate_t, rack, rack_t, stand, (lo, hi), c, fingers, start,
                         top + [plate_t[0] + height, 0.0, 0.0], radius, height)


def gripper_rotation() -> np.ndarray:
    """(3, 3) the gripper frame's constant rotation: ``GRIPPER_ROLL`` about z."""
    return _rot_z(GRIPPER_ROLL)


def waypoints(kind: str = "clean", geo: SceneGeometry | None = None) -> list[tuple[float, np.ndarray, float]]:
    """The trajectory's waypoints [(time [s], gripper origin (3,) [m], jaw width [m])], the gripper's rotation
    ``gripper_rotation`` throughout; between waypoints the motion is a minimum-jerk blend
    (``trajectory_rows``)."""
    if kind not in TRAJECTORIES:
        raise ValueError(f"plate-rack trajectory must be one of {', '.join(TRAJECTORIES)}, got {kind!r}")
    geo = geo or scene_geometry()
    off = pad_offset()
    w_open = PAD_GAP_OPEN + 2 * off
    w_closed = PAD_GAP_CONTACT - 2 * SQUEEZE + 2 * off
    start = geo.pinch_start
    pinch = start - [0.0, 0.08, 0.0]
    rack = geo.rack
    wire_top = geo.rack_translation[1] + rack.params["wire_height"]
    bottom = geo.plate_translation[1] - geo.plate_radius  # the plate's lowest point at the start
    lift = wire_top + CARRY_CLEARANCE - bottom
    up = pinch + [0.0, lift, 0.0]
    # over the slot: the plate's foot-to-rim extent centred on the slot's centre (+ offset)
    dx = geo.slot_center[0] - (geo.plate_translation[0] + 0.5 * geo.plate_height)
    dx += OFFSET if kind == "offset" else 0.0
    over = up + [dx, 0.0, 0.0]
    place = over - [0.0, (bottom + lift) - (geo.slot_center[1] + PLACE_CLEARANCE), 0.0]
    retract = place + [0.0, 0.06, 0.0]
    # holds after the carry and before opening let the hanging plate's swing settle (a pinch at the rim is a
    # pivot: it swings 4-5 degrees after the carry; entering the slot tilted 3.5 degrees, it wedged 10 degrees
    # tilted on the +x divider, 40 mm above the rails)
    return [(0.0, start, w_open), (0.6, pinch, w_open), (1.1, pinch, w_closed), (1.3, pinch, w_closed),
            (2.0, up, w_closed), (3.2, over, w_closed), (3.6, over, w_closed), (4.8, place, w_closed),
            (5.0, place, w_closed), (5.4, place, w_open), (5.9, retract, w_open), (6.0, retract, w_open)]


def trajectory_rows(kind: str = "clean", rate: float = SAMPLE_RATE) -> np.ndarray:
    """(n, 9) rows ``time, x, y, z, qw, qx, qy, qz, width`` [s, m, 1, m] sampled at ``rate`` [1/s] from
    ``waypoints(kind)``: each segment a minimum-jerk blend s(u) = 10 u^3 - 15 u^4 + 6 u^5 (zero velocity and
    acceleration at the waypoints, like a robot's point-to-point moves)."""
    wp = waypoints(kind)
    t_end = wp[-1][0]
    times = np.round(np.arange(0.0, t_end + 0.5 / rate, 1.0 / rate), 6)
    rows = []
    for t in times:
        k = min(max(np.searchsorted([w[0] for w in wp], t, side="right") - 1, 0), len(wp) - 2)
        (t0, p0, w0), (t1, p1, w1) = wp[k], wp[k + 1]
        u = min(max((t - t0) / (t1 - t0), 0.0), 1.0)
        s = u ** 3 * (10.0 - 15.0 * u + 6.0 * u * u)
        p, w = p0 + s * (p1 - p0), w0 + s * (w1 - w0)
        rows.append([t, *p, np.cos(0.5 * GRIPPER_ROLL), 0.0, 0.0, np.sin(0.5 * GRIPPER_ROLL), w])
    return np.array(rows)


def trajectory_path(kind: str) -> Path:
    """The shipped CSV of trajectory ``kind`` (``data/trajectories/plate_rack_<kind>.csv``)."""
    if kind not in TRAJECTORIES:
        raise ValueError(f"plate-rack trajectory must be one of {', '.join(TRAJECTORIES)}, got {kind!r}")
    return Path(str(resources.files("ipcsim").joinpath("data", "trajectories", f"plate_rack_{kind}.csv")))


def format_csv(rows: np.ndarray) -> str:
    """The CSV text (header and rows, 6-decimal times and 7-decimal values) of trajectory rows (n, 9)."""
    lines = ["time,x,y,z,qw,qx,qy,qz,width"]
    for r in rows:
        lines.append(f"{r[0]:.6f}," + ",".join(f"{x:.7f}" for x in r[1:]))
    return "\n".join(lines) + "\n"


def write_trajectories(directory) -> list[Path]:
    """Write plate_rack_{clean,offset}.csv into directory; returns their paths."""
    out = []
    for kind in TRAJECTORIES:
        p = Path(directory) / f"plate_rack_{kind}.csv"
        p.write_text(format_csv(trajectory_rows(kind)))
        out.append(p)
    return out


def _write_msh(path: Path, vertices: np.ndarray, tets: np.ndarray) -> None:
    """A Gmsh 2.2 ASCII tet mesh (vertices (n, 3) [m], tets (m, 4), 1-based in the file)."""
    lines = ["$MeshFormat", "2.2 0 8", "$EndMeshFormat", "$Nodes", str(len(vertices))]
    lines += [f"{i + 1} {x:.9g} {y:.9g} {z:.9g}" for i, (x, y, z) in enumerate(vertices)]
    lines += ["$EndNodes", "$Elements", str(len(tets))]
    lines += [f"{i + 1} 4 0 {a + 1} {b + 1} {c + 1} {d + 1}" for i, (a, b, c, d) in enumerate(tets)]
    lines += ["$EndElements"]
    path.write_text("\n".join(lines) + "\n")


def scene_json(trajectory: str, mesh_dir: str, mu: float = 0.5, finger_mu: float = 0.8, dt: float = 0.01) -> dict:
    """The scene (embedded fingers, as ``demo_plate_rack.build_plate_rack``) as a JSON scene dict (docs/scenes.md).
    Paths relative to the scene file: trajectory (the CSV), mesh_dir (plate.obj, finger_fine.msh,
    finger_cage.msh, rack.msh, written by ``write_example``)."""
    from ..geometry.finray import TPU_MATERIAL
    from .plate_rack_parts import PLATE_DENSITY, RACK_DENSITY, STIFFNESS

    geo = scene_geometry()
    mount = mount_nodes_local(finger_meshes()["cage"][0]).tolist()
    finger_mat = {"model": "LCR", **{k: TPU_MATERIAL[k] for k in ("density", "youngs_modulus", "poisson_ratio")}}
    def placed(rot, t):
        return {"rotation": np.round(rot, 15).tolist(), "translation": [float(c) for c in t]}

    bodies = [
        {"name": "plate", "mesh": f"{mesh_dir}/plate.obj", "transform": placed(geo.plate_rotation,
                                                                              geo.plate_translation),
         "material": {"density": PLATE_DENSITY}, "affine": {"stiffness": STIFFNESS}, "self_contact": False},
        {"name": "rack", "mesh": f"{mesh_dir}/rack.msh", "transform": {"translation": geo.rack_translation.tolist()},
         "material": {"density": RACK_DENSITY}, "affine": {"stiffness": STIFFNESS}, "self_contact": False}]
    for name in ("left", "right"):
        bodies.append({"name": f"{name}_finger", "mesh": f"{mesh_dir}/finger_fine.msh",
                       "transform": placed(*geo.fingers[name]), "material": finger_mat,
                       "embedding": {"mesh": f"{mesh_dir}/finger_cage.msh"}, "self_contact": False,
                       "damping": {"stiffness": FINGER_DAMPING}})
    obstacles = [{"name": f"stand_{i}", "mesh": {"box": {"size": [STAND_JAW, STAND_HEIGHT, STAND_LENGTH],
                                                          "resolution": [1, 2, 2]}},
                  "transform": {"translation": jv.min(axis=0).tolist()}} for i, (jv, _) in enumerate(geo.stand)]
    kind = "offset" if "offset" in Path(trajectory).stem else "clean"
    return {"format": "ipcsim-scene/1", "name": f"plate-rack-{kind}",
            "time": {"end": float(waypoints(kind, geo)[-1][0]), "dt": dt},
            "contact": {"dhat": DHAT},
            "friction": {"mu": mu, "eps_v": 1e-3, "pairs": [{"bodies": ["plate", f"{side}_finger"], "mu": finger_mu}
                                                           for side in ("left", "right")]},
            "solver": {"tol": 1e-2, "warm_start": True},
            "bodies": bodies, "obstacles": obstacles,
            "half_spaces": [{"origin": [0, 0, 0], "normal": [0, 1, 0], "friction": mu}],
            "grippers": [{"name": "gripper", "trajectory": trajectory, "axis": [1, 0, 0], "attachments": [
                {"body": "left_finger", "indices": mount, "side": -1},
                {"body": "right_finger", "indices": mount, "side": 1}]}],
            "output": {"every": 2, "render": True}}


def write_example(examples: Path) -> list[Path]:
    """Write examples/meshes/plate_rack/{plate.obj, finger_fine.msh, finger_cage.msh, rack.msh} and
    examples/scenes/plate_rack_{clean,offset}.json (the trajectories referenced in the package's data); returns
    the paths. plate.obj: ``plate_rack.plate_mesh`` (Drake's plate, BSD-3, turned y up, foot on y = 0)."""
    import json
    import re

    meshes = examples / "meshes" / "plate_rack"
    meshes.mkdir(parents=True, exist_ok=True)
    fm = finger_meshes()
    rack = scene_geometry().rack
    v, f = plate_mesh()
    lines = [f"v {x:.9g} {y:.9g} {z:.9g}" for x, y, z in v] + [f"f {a + 1} {b + 1} {c + 1}" for a, b, c in f]
    (meshes / "plate.obj").write_text("# Drake's plate_8in_col.obj (TRI, BSD-3), y up, foot on y = 0 (ipcsim)\n"
                                      + "\n".join(lines) + "\n")
    out = [meshes / "plate.obj"]
    for name, (v, t) in (("finger_fine", fm["fine"]), ("finger_cage", fm["cage"]), ("rack", (rack.vertices,
                                                                                             rack.tets))):
        _write_msh(meshes / f"{name}.msh", v, t)
        out.append(meshes / f"{name}.msh")
    for kind in TRAJECTORIES:
        data = scene_json(f"../../src/ipcsim/data/trajectories/plate_rack_{kind}.csv", "../meshes/plate_rack")
        path = examples / "scenes" / f"plate_rack_{kind}.json"
        text = json.dumps(data, indent=1)
        text = re.sub(r"\[\s+([-0-9.e, \n]+?)\s+\]", lambda m: "[" + " ".join(m.group(1).split()) + "]", text)
        path.write_text(text + "\n")
        out.append(path)
    return out
