"""The plate and the wire dish rack of Embedded IPC §IV-B (004's plate-in-rack experiment), as affine bodies.

- plate: Drake's 8-inch dinner plate ``dishes/assets/plate_8in_col.obj`` (RobotLocomotion/models, TRI, BSD-3;
  shipped as ``data/demos/meshes/drake/plate_8in_col.obj``): a closed, consistently wound genus-0 triangle
  surface, 450 vertices, 896 faces, metres, z up from its foot (0.196 m across, 17.8 mm from foot to rim top).
  It encloses 1.7114e-4 m^3 (171.14 cm^3); Drake's model gives it 0.375 kg, hence ``PLATE_DENSITY`` = 0.375 /
  1.7114e-4 = 2191.2 kg/m^3 (a porcelain-like figure). ``plate_mesh`` turns it to ipcsim's y-up frame with
  ``grasp_paper``'s rotation (x, y, z)_ipcsim = (y, z, x)_Drake, its foot on y = 0, its axis on x = z = 0.
- rack: ``ipcsim.geometry.wire_rack`` (steel wires, ``RACK_DENSITY``), slots sized from the plate: the clear
  gap between two dividers is the plate's height (foot to rim top, 17.8 mm) plus ``SLOT_CLEARANCE``.
- both affine bodies with kappa_a = E = 1e7 Pa (004's stiff parts).
"""
from __future__ import annotations

import time
from importlib import resources
from pathlib import Path

import numpy as np

from ..geometry.mesh_io import read_obj_surface
from ..geometry.voxel_cage import enclosed_volume
from ..geometry.wire_rack import WireRack, wire_rack
from ..model import Material
from .grasp_paper import DRAKE_TO_IPCSIM_ROTATION

#: [kg]: the plate's mass in Drake's model (``dishes/plate_8in.sdf``)
PLATE_MASS = 0.375
#: [m^3]: the volume the shipped plate surface encloses (divergence theorem; checked by the tests)
PLATE_VOLUME = 1.7114213436e-4
#: [kg/m^3]: the density that gives the plate Drake's mass
PLATE_DENSITY = PLATE_MASS / PLATE_VOLUME
#: [Pa]: kappa_a of the plate and the rack (004 §IV-B's stiff parts, E = 1e7 Pa)
STIFFNESS = 1e7
#: [kg/m^3]: steel wire
RACK_DENSITY = 7850.0
#: the plate's and the rack's affine-body materials
PLATE_MATERIAL = Material.affine(stiffness=STIFFNESS, density=PLATE_DENSITY)
RACK_MATERIAL = Material.affine(stiffness=STIFFNESS, density=RACK_DENSITY)
#: [m]: slot width minus the plate's height (foot to rim top)
SLOT_CLEARANCE = 0.006


def plate_mesh_path() -> Path:
    """The shipped plate surface (``data/demos/meshes/drake/plate_8in_col.obj``, Drake's, metres, z up)."""
    return Path(str(resources.files("ipcsim").joinpath("data", "demos", "meshes", "drake", "plate_8in_col.obj")))


def plate_mesh() -> tuple[np.ndarray, np.ndarray]:
    """The plate in ipcsim's frame: (vertices (450, 3) [m], outward triangles (896, 3)); y up, its foot's lowest
    point on y = 0, its symmetry axis on x = z = 0 (Drake's file has it on x = y = 0 already)."""
    v, f = read_obj_surface(plate_mesh_path())
    v = v @ DRAKE_TO_IPCSIM_ROTATION.T
    v[:, 1] -= v[:, 1].min()
    return v, f


def plate_height() -> float:
    """[m]: the plate from foot to rim top (its extent along its axis; the width it takes in a slot)."""
    v, _ = plate_mesh()
    return float(np.ptp(v[:, 1]))


def rack_for_plate(n_slots: int = 3, clearance: float = SLOT_CLEARANCE, **kwargs) -> WireRack:
    """A ``wire_rack`` whose slots are the plate's height plus ``clearance`` [m] wide (other arguments as
    ``wire_rack``)."""
    return wire_rack(n_slots=n_slots, slot_width=plate_height() + clearance, **kwargs)


def upright_plate_rotation(yaw: float = 0.0) -> np.ndarray:
    """(3, 3): turns the plate from lying (axis along y) to standing on its rim with its axis along x (its face
    toward +x: the rack's slot direction), then by ``yaw`` [rad] about y."""
    stand = np.array([[0.0, 1.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])  # -90 degrees about z: y -> x
    c, s = np.cos(yaw), np.sin(yaw)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]]) @ stand


def add_plate(builder, *, translation=(0.0, 0.0, 0.0), rotation=None, velocity=(0.0, 0.0, 0.0),
              angular_velocity=(0.0, 0.0, 0.0), fixed: bool = False) -> int:
    """Add the plate (``plate_mesh``, placed by rotation (3, 3) then translation (3,) [m]) to a ModelBuilder as an
    affine body of Drake's mass and kappa_a = 1e7 Pa; returns its body id."""
    v, f = plate_mesh()
    return builder.add_affine_body(v, f, material=PLATE_MATERIAL, translation=translation,
                                   rotation=rotation, velocity=velocity, angular_velocity=angular_velocity,
                                   fixed=fixed)


def add_rack(builder, rack: WireRack, *, translation=(0.0, 0.0, 0.0), fixed: bool = False) -> int:
    """Add a generated rack (its tets: a 3.5 mm wire is too thin for a surface's voxel volume samples) as one
    steel affine body with kappa_a = 1e7 Pa and no self-contact (its tubes are welded: rigidly placed); returns
    its body id."""
    body = builder.add_affine_body(rack.vertices, rack.tets, material=RACK_MATERIAL, translation=translation,
                                   fixed=fixed)
    builder.set_self_contact(body, False)
    return body


def plate_volume() -> float:
    """[m^3]: the volume the shipped plate surface encloses (recomputed from the file)."""
    v, f = plate_mesh()
    return enclosed_volume(v, f)


def plate_in_slot_scene(slot: int = 1, n_slots: int = 3, drop: float = 0.01, offset: float = 0.0,
                        fixed_rack: bool = False, mu: float = 0.3, dhat: float = 1e-3):
    """The plate standing upright over a slot of a rack that rests on the ground (y = 0), its rim ``drop`` [m]
    above the wires' top and ``offset`` [m] off the slot's centre along x (beyond the 3 mm clearance a side its
    rim lands on a wire's top), falling into the slot under gravity. Returns (model, state, solver, info) with info
    {"plate": body id, "rack": body id, "rack_geometry": WireRack, "slot_center": (3,) [m] in the world}.

    The rack is a free affine body on the table by default (004's rack stands on a table; it can slide and tip
    under the plate's blows); ``fixed_rack`` holds it instead (its 12 dofs fixed). Friction ``mu`` everywhere;
    kappa per contact from the stiffer side's E (ContactParameters' default), dhat [m].
    """
    from ..model import ModelBuilder
    from ..solvers.integrator_solvers import ContactParameters, FrictionParameters, ImplicitEulerSolver

    rack = rack_for_plate(n_slots=n_slots)
    lift = 1.5 * dhat  # the rack starts just out of the ground's barrier band and settles onto it
    b = ModelBuilder()
    b.add_ground(0.0)
    rack_id = add_rack(b, rack, translation=(0.0, lift, 0.0), fixed=fixed_rack)
    v, _ = plate_mesh()
    radius, height = float(np.abs(v[:, 0]).max()), float(np.ptp(v[:, 1]))
    centre = rack.slot_centers[slot] + (0.0, lift, 0.0)
    # upright: the plate's foot-to-rim extent [0, height] lies along x: centre it in the slot
    place = (centre[0] - 0.5 * height + offset, lift + rack.params["wire_height"] + drop + radius, 0.0)
    plate_id = add_plate(b, rotation=upright_plate_rotation(), translation=place)
    b.set_self_contact(plate_id, False)  # rigid: its own features 0.75 mm apart (< dhat) never meet
    model, state = b.finalize()
    solver = ImplicitEulerSolver(model, ContactParameters(dhat=dhat), friction=FrictionParameters(mu=mu), tol=1e-2)
    return model, state, solver, {"plate": plate_id, "rack": rack_id, "rack_geometry": rack, "slot_center": centre}


def run_plate_in_slot(duration: float = 0.5, h: float = 0.01, on_step=None, **scene):
    """Run ``plate_in_slot_scene(**scene)`` for ``duration`` [s] at step ``h`` [s]. on_step(k, state, stats) is
    called after every step. Returns (model, final state, info, per-step wall times (n,) [s], per-step stats)."""
    model, state, solver, info = plate_in_slot_scene(**scene)
    times, all_stats = [], []
    for k in range(int(round(duration / h))):
        new = state.copy()
        t0 = time.perf_counter()
        stats = solver.step(state, new, None, h)
        times.append(time.perf_counter() - t0)
        all_stats.append(stats)
        state = new
        if on_step is not None:
            on_step(k, state, stats)
    return model, state, info, np.array(times), all_stats
