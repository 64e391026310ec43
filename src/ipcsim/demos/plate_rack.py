"""The plate-in-rack demo of Embedded IPC §IV-B (issue 24): two FinRay fingers on a gripper that replays a recorded
trajectory pick the plate from its stand, carry it over the wire dish rack and place it in a slot
(``ipcsim demo plate-rack --trajectory clean|offset``). Geometry and trajectories: ``plate_rack_scene``.

Bodies (body ids in this order): the plate and the rack, affine with kappa_a = E = 1e7 Pa (``plate_rack_parts``; the
rack free on the table), then the two fingers, linear corotated with the TPU 95A material of ``geometry.finray``
(E 26 MPa, nu 0.45, 1220 kg/m^3), embedded in conforming cages (``fingers="embedded"``) or in full space
(``"full"``); every node of a finger's mounting face (finger y = 0) is carried by the gripper. Obstacles: the
stand's two jaws. Contact dhat 1 mm, kappa per contact (ContactParameters' default), friction mu 0.5 (0.8
between the fingers and the plate: ``MU``, ``FINGER_MU``), eps_v 1e-3 m/s; self-contact off for the plate, the
rack (rigid) and the fingers (at dhat = 1 mm the hole corners of a finger would touch at rest, as in
``scene.finray_push``).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from ..geometry.finray import TPU_MATERIAL
from ..geometry.trajectory import read_trajectory_csv
from ..model import Material, ModelBuilder, Transform
from .plate_rack_parts import PLATE_MATERIAL, RACK_MATERIAL
from .plate_rack_scene import (DHAT, FINGER_DAMPING, TRAJECTORIES, finger_meshes, mount_nodes_local, scene_geometry,
                               trajectory_path)
from ..scene.simulation import Simulation
from .scene_parameters import apply_run_options, parameters_from_scene

FINGER_MODES = ("embedded", "full")
#: [1] friction of the plate on the rack's steel wires, the stand and the table (glazed ceramic on steel/wood,
#: typical dry figures 0.3-0.6), and of the TPU fingers on the plate (a rubber-like elastomer on glazed ceramic,
#: typical dry figures 0.6-1.0). Typical values, not measurements: the paper gives none.
MU, FINGER_MU = 0.5, 0.8
BODY_NAMES = ["plate", "rack", "left_finger", "right_finger"]


@dataclass
class PlateRackParameters:
    """trajectory: "clean" or "offset" (``plate_rack_scene``); fingers: "embedded" or "full"; dt [s]; end_time
    [s] (None: the trajectory's end); mu [1]: friction between the plate, the rack, the stand and the table;
    finger_mu [1]: between the fingers and the plate; tol: Newton tolerance; damping_stiffness [s] of the
    fingers (default ``FINGER_DAMPING``, 0.05 s)."""

    trajectory: str = "clean"
    fingers: str = "embedded"
    dt: float = 0.01
    end_time: float | None = None
    mu: float = MU
    finger_mu: float = FINGER_MU
    tol: float = 1e-2
    damping_stiffness: float = FINGER_DAMPING

    def __post_init__(self):
        if self.trajectory not in TRAJECTORIES:
            raise ValueError(f"plate-rack: unknown trajectory {self.trajectory!r}; choose from "
                             f"{', '.join(TRAJECTORIES)}")
        if self.fingers not in FINGER_MODES:
            raise ValueError(f"plate-rack: unknown fingers {self.fingers!r}; choose from {', '.join(FINGER_MODES)}")
        if self.end_time is None:
            self.end_time = read_trajectory_csv(trajectory_path(self.trajectory)).time_range[1]


def _mount_nodes(nodes_world: np.ndarray, rotation: np.ndarray, translation: np.ndarray) -> np.ndarray:
    """Indices of the nodes (k, 3) [m] on a placed finger's mounting face (its own y = 0 plane)."""
    return mount_nodes_local((nodes_world - translation) @ rotation)


def add_fingers(b: ModelBuilder, geo, fingers: str, damping_stiffness: float = 0.0) -> list[tuple[int, np.ndarray]]:
    """Add the two fingers to b; returns [(body id, mounting-face node indices)] for left, right."""
    meshes = finger_meshes()
    tpu = Material(name="LCR", damping_stiffness=damping_stiffness, **TPU_MATERIAL)
    out = []
    for name in ("left", "right"):
        rot, t = geo.fingers[name]
        place = Transform(rotation=rot, translation=t)
        if fingers == "embedded":
            v, tets = meshes["fine"]
            body = b.add_embedded_body(v, tets, coarse=meshes["cage"], transform=place, material=tpu)
        else:
            v, tets = meshes["full"]
            body = b.add_body(v, tets, transform=place, material=tpu)
        nodes = b._bodies[body].vertices
        b.set_self_contact(body, False)
        out.append((body, _mount_nodes(nodes, rot, t)))
    return out


def build_plate_rack(params: PlateRackParameters | None = None):
    """(ModelBuilder, body ids {"plate", "rack", "left_finger", "right_finger"}, SceneGeometry)."""
    p = params or PlateRackParameters()
    geo = scene_geometry()
    b = ModelBuilder(gravity=(0.0, -9.81, 0.0))
    b.add_ground(0.0)
    v, f = geo.plate
    plate = b.add_affine_body(v, f, material=PLATE_MATERIAL, rotation=geo.plate_rotation,
                              translation=geo.plate_translation)
    b.set_self_contact(plate, False)
    rack = b.add_affine_body(geo.rack.vertices, geo.rack.tets, material=RACK_MATERIAL,
                             translation=geo.rack_translation)
    b.set_self_contact(rack, False)
    (left, lmount), (right, rmount) = add_fingers(b, geo, p.fingers, p.damping_stiffness)
    for jv, jt in geo.stand:
        b.add_obstacle(jv, jt)
    b.add_gripper(read_trajectory_csv(trajectory_path(p.trajectory)),
                  [{"body": left, "indices": lmount, "side": -1}, {"body": right, "indices": rmount, "side": 1}],
                  axis=(1.0, 0.0, 0.0))
    return b, {"plate": plate, "rack": rack, "left_finger": left, "right_finger": right}, geo


def plate_rack(params: PlateRackParameters | None = None) -> tuple[Simulation, dict]:
    """The demo as a ``Simulation`` (frames every 0.02 s) and its parameters (the run's scene.json)."""
    from ..solvers.integrator_solvers import ContactParameters, FrictionParameters, ImplicitEulerSolver

    p = params or PlateRackParameters()
    b, ids, _ = build_plate_rack(p)
    model, state = b.finalize()
    pairs = {(ids["plate"], ids[f]): p.finger_mu for f in ("left_finger", "right_finger")}
    solver = ImplicitEulerSolver(model, ContactParameters(dhat=DHAT),
                                 friction=FrictionParameters(mu=p.mu, eps_v=1e-3, pair_mu=pairs), tol=p.tol,
                                 warm_start=True)  # 2.92 -> 1.79 Newton it/step (clean, embedded, h = 0.01 s)
    every = max(1, int(round(0.02 / p.dt)))
    sim = Simulation(model, state, solver, p.dt, p.end_time, {"every": every, "render": True},
                     name=f"plate-rack-{p.trajectory}", body_names=list(ids), obstacle_names=["stand_a", "stand_b"])
    data = asdict(p)
    time = {"end": data.pop("end_time"), "dt": data.pop("dt")}
    return sim, {"name": sim.name, "demo": "plate-rack", "time": time, **data}


def plate_pose(model, x: np.ndarray, plate: int = 0) -> tuple[np.ndarray, float]:
    """The plate's centre (3,) [m] (the middle of its surface's world bounding box) and its tilt [deg]: the
    angle between its axis (``_plate_axis``) and the horizontal x axis it has when standing in a slot; x (n, 3)
    [m] the nodes; plate: its collision body id."""
    mesh = model.collision_mesh
    xs = model.surface_positions(x)[mesh.body == plate]
    geo_axis = _plate_axis(xs)
    centre = 0.5 * (xs.min(axis=0) + xs.max(axis=0))
    tilt = float(np.degrees(np.arccos(min(1.0, abs(geo_axis[0])))))
    return centre, tilt


def _plate_axis(xs: np.ndarray) -> np.ndarray:
    """The unit axis (3,) of a plate's surface points (k, 3) [m]: the direction of least spread (a plate is a
    thin disc), by the smallest principal axis."""
    d = xs - xs.mean(axis=0)
    w, v = np.linalg.eigh(d.T @ d)
    return v[:, 0]


def in_slot(geo, centre: np.ndarray, tilt: float, max_tilt: float = 10.0) -> bool:
    """The plate stands in the slot: centre (3,) [m] inside geo.slot_box and tilt < max_tilt [deg]."""
    lo, hi = geo.slot_box
    return bool(np.all(centre >= lo) and np.all(centre <= hi) and tilt < max_tilt)


# ----------------------------------------------------------------------------------------------- command line
def add_arguments(parser) -> None:
    """This demo's options of ``ipcsim demo plate-rack`` (the command line collects every demo's)."""
    parser.add_argument("--trajectory", choices=tuple(TRAJECTORIES), default=None,
                        help="the gripper trajectory (default clean; offset places the plate 5 mm off the slot's "
                             "centre)")
    parser.add_argument("--mu", type=float, metavar="MU",
                        help=f"friction between the plate, the rack, the stand and the table (default {MU:g})")


def plate_rack_parameters(data: dict) -> PlateRackParameters:
    """The ``PlateRackParameters`` of a plate-rack run's OUT/scene.json (``plate_rack``'s second value); ValueError
    naming a bad key."""
    return parameters_from_scene(PlateRackParameters, data, "plate-rack")


def parameters_from_arguments(args, scene_data: dict | None = None) -> PlateRackParameters:
    """The ``PlateRackParameters`` of parsed command-line options (trajectory, mu, dt, end_time), or of the
    OUT/scene.json of an earlier run (``scene_data``) with args' dt and end time; ValueError for a bad one."""
    if scene_data is None:
        p = PlateRackParameters(trajectory=args.trajectory or "clean", end_time=args.end_time)
    else:
        p = plate_rack_parameters(scene_data)
    return apply_run_options(p, args)
