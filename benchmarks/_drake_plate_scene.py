"""The plate-in-rack placement of Embedded IPC (004 §IV-B) in Drake (pydrake), for ``benchmarks/drake_plate_rack.py``.

As the paper ran Drake: rigid bodies everywhere, the gripper's fingers with a compliant contact surface
(hydroelastic), the plate and the rack rigid. Built in ipcsim's own frame (y up, gravity (0, -9.81, 0) m/s^2), so
the frames need no change of frame:

- Gripper: a rigid frame G following the trajectory (``ipcsim.geometry.trajectory``: positions linear, rotations
  slerp). Drake has no kinematic ("mocap") body, so G hangs on the world by the chain Drake users build for a
  floating end effector: three prismatic joints along the world axes (the position p(t)), then three revolute
  joints (the rotation R(t) R(0)^T as Euler angles in the axis order whose middle angle stays farthest from the
  gimbal lock, chosen from the trajectory's samples), then G, fixed at R(0). Every joint is PD-controlled through
  the plant's desired-state port (SAP's implicit PD, stiff gains: tracking to a few micrometres); the desired
  state of a step is the trajectory at the step's end with the step's mean velocity (the motion ipcsim's
  prescribed nodes make in the same step).
- Fingers: two rigid bodies on prismatic joints of G along its opening axis a; finger s (-1, +1) is driven
  towards s w(t) / 2 a from its closed place (ipcsim's gripper rule ``model.gripper``) by a force-limited PD,
  ``FINGER_GAINS`` capped at ``DrakePlateConfig.finger_force`` (default ``GRIP_FORCE``, 40 N: Drake's WSG-50
  driver's default limit), as a parallel gripper with rigid fingers grips: the width column is its set point,
  the effort limit its grip force. ``finger_force=inf`` makes each finger follow the width column with the
  chain's stiff PD instead (as ipcsim prescribes the FinRay's mounting face): the column closes the jaws 5 mm
  past first contact a side, which the FinRay takes up by bending its ribs around the rim lip, a rigid hull
  only by going about 5 mm into a 4.2 mm lip from each side (the two hulls then overlap each other), and Drake
  squeezes the immersed lip out within 0.15 s at every modulus, gain, dissipation and friction tried
  (docs/drake_plate_rack.md).
  Contact geometry: the convex hull of the FinRay finger (its triangular prism, the pads leaning inward as
  placed: a rigid finger cannot bend into its ribs) as a compliant hydroelastic Convex, ``FINGER_MODULUS``,
  Hunt-Crossley dissipation ``FINGER_DISSIPATION``; the two fingers do not collide with each other (a robot
  model's usual filter).
- Plate: the shipped ``plate_8in_col.obj`` as a free rigid body of Drake's 0.375 kg (inertia of the uniformly
  filled closed surface), rigid hydroelastic Mesh (its real non-convex surface against compliant geometry).
- Rack: one free rigid body of steel resting on the table, as ipcsim's (``fixed_rack``: welded to the world).
  Each tube of the generated ``WireRack`` is a Drake Cylinder of the wire's diameter (the tube's circumscribed
  circle: the polygonal tubes ipcsim simulates and the frames show lie inside it). ``rack_contact`` "rigid"
  (default, 004's "rigid bodies"): rigid hydroelastic cylinders, so plate against wire is a rigid-rigid pair
  that Drake's ``hydroelastic_with_fallback`` model resolves with point contact (penalty, the plant's default
  penetration allowance 1 mm; Drake's point contact takes a Mesh as its convex hull: the plate's dished face
  filled, pydrake's ``Mesh`` documentation); fingers against wires stay hydroelastic. "compliant": compliant
  hydroelastic cylinders of modulus ``RACK_MODULUS``, so plate against wire is hydroelastic with the plate's
  real surface.
- Stand: the plate's source stand, its two jaws as Boxes welded to the world.
- Table: a half-space, its top at y = ``ground``. Table and stand are compliant hydroelastic (``TABLE_MODULUS``,
  the table a ``TABLE_SLAB`` thick layer): with them rigid, every rigid body resting on them is a rigid-rigid
  pair, one penalty point per pair, and the free rack rocked on its four rungs (one contact point each) from
  t = 2.4 s without anything touching it, its rungs up to 5 mm into the table by 3 s (clean trajectory,
  dt = 0.01 s); compliant, they give the rack and the plate contact patches (Drake's advice for the ground).
- Friction: Coulomb (static = dynamic) as ipcsim's demo: mu between plate, rack, stand and table, finger_mu
  between fingers and plate; Drake takes a pair's coefficient as the harmonic mean of its two geometries', so the
  fingers get ``finger_geometry_mu`` (2.0 for 0.5 and 0.8) and meet the rack and the table with finger_mu too
  (ipcsim: mu). The SAP solver (``lagged``, the plant's default).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy.spatial import ConvexHull
from scipy.spatial.transform import Rotation

STIFF_GAINS = (1e7, 1e4)  # (p [N/m or N m/rad], d [N s/m or N m s/rad]) of the gripper's 6 pose joints
#: with ``DrakePlateConfig.finger_force`` finite (a force-limited driver): gains (p [N/m], d [N s/m]) of each
#: finger's joint (about critical for 0.05 kg)
FINGER_GAINS = (1e4, 50.0)
#: [N], the default effort limit of each finger's driver: Drake's WSG-50 driver's default force limit (the robot
#: gripper of UMI, whose FinRay fingers 004 models). Measured on the clean trajectory at dt = 0.01 s: a limit of
#: 8 N or less drops the plate while it is lifted (ipcsim's FinRay holds it with about 5 N by wrapping the lip),
#: 9 N and more carry it
GRIP_FORCE = 40.0
#: [Pa], hydroelastic modulus of the fingers' contact surface: the printed TPU's Young's modulus
#: (``geometry.finray.TPU_MATERIAL``, 26 MPa, the material of ipcsim's FinRay fingers)
FINGER_MODULUS = 26e6
FINGER_DISSIPATION = 5.0  # [s/m], Hunt-Crossley
RACK_MODULUS = 1e7  # [Pa], with rack_contact "compliant": 004's E of the stiff parts
TABLE_MODULUS, TABLE_SLAB = 1e7, 0.05  # [Pa], [m]: the table's and the stand's compliant hydroelastic layer
PLATE_MASS = 0.375  # [kg], Drake's model (dishes/plate_8in.sdf)
BODY_NAMES = ("plate", "rack", "left_finger", "right_finger", "stand")  # body ids of the frames, in this order
EULER_ORDERS = ("XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX")


@dataclass
class Finger:
    """One finger at t = 0: its tet-mesh (or surface) vertices (n, 3) [m] in the world and its side (-1 / +1)."""

    vertices: np.ndarray
    side: int


@dataclass
class PlateRackSetup:
    """The scene at t = 0 in ipcsim's frame (y up, metres).

    trajectory: the gripper frame's ``Trajectory``; axis (3,): the opening axis in the gripper frame; fingers:
    ``Finger`` records (placed in the world at t = 0, as ipcsim's gripper attachments); plate_rotation (3, 3) and
    plate_translation (3,) [m]: the pose of ``plate_rack.plate_mesh``; rack: a ``WireRack`` placed by
    rack_translation (3,) [m] (a free body unless fixed_rack); stand: fixed boxes [(vertices (n, 3) [m] in the
    world, tets)] (the plate's source stand; their bounding boxes are used); slot_box: (min (3,), max (3,)) [m],
    the box the placed plate's centre must end in; ground [m]: the table's top; mu: friction between plate, rack,
    stand and table; finger_mu: between the fingers and the plate (ipcsim's demo: 0.5 and 0.8).
    """

    trajectory: object
    axis: np.ndarray
    fingers: list
    plate_rotation: np.ndarray
    plate_translation: np.ndarray
    rack: object
    rack_translation: np.ndarray
    stand: list = field(default_factory=list)
    slot_box: tuple | None = None
    fixed_rack: bool = False
    ground: float = 0.0
    mu: float = 0.5
    finger_mu: float = 0.8


@dataclass
class DrakePlateConfig:
    """The Drake run's knobs: time step dt [s], gains of the gripper's joints, the fingers' effort limit [N]
    (finite, default ``GRIP_FORCE``: a force-limited driver with ``FINGER_GAINS`` whose set point is the width
    column; inf: the fingers follow the width column with the pose joints' gains, as ipcsim's prescribed mounting
    faces, and squeeze the plate out), the rack's contact ("rigid": point contact with the
    plate, or "compliant" hydroelastic), the fingers' hydroelastic modulus [Pa]."""

    dt: float = 0.01
    gains: tuple = STIFF_GAINS
    finger_force: float = GRIP_FORCE
    rack_contact: str = "rigid"
    finger_modulus: float = FINGER_MODULUS


def euler_order(rotations: np.ndarray) -> str:
    """The intrinsic Euler order (of ``EULER_ORDERS``) whose middle angle stays farthest from +-90 degrees over the
    relative rotations (k, 3, 3)."""
    rot = Rotation.from_matrix(rotations)
    with warnings.catch_warnings():  # a locked order warns: it is the one not taken
        warnings.simplefilter("ignore", UserWarning)
        return min(EULER_ORDERS, key=lambda o: float(np.max(np.abs(rot.as_euler(o)[:, 1]))))


class GripperPlan:
    """The gripper's joint targets along the trajectory: q(t) (8,) = (p (3,) [m], Euler angles (3,) [rad] of
    R(t) R(0)^T in ``order``, left and right finger offsets -w/2, +w/2 [m]), sampled at the steps k dt and
    unwrapped (angles continuous)."""

    def __init__(self, trajectory, dt: float, n_steps: int, order: str | None = None):
        self.dt = float(dt)
        times = np.arange(n_steps + 2) * self.dt
        poses = [trajectory.pose(t) for t in times]
        r0 = poses[0].rotation
        rel = np.stack([p.rotation @ r0.T for p in poses])
        self.order = order or euler_order(rel)
        angles = np.unwrap(Rotation.from_matrix(rel).as_euler(self.order), axis=0)
        widths = np.array([p.width for p in poses])
        self.q = np.column_stack([np.stack([p.position for p in poses]), angles, -0.5 * widths, 0.5 * widths])
        self.rotation0 = r0

    def axes(self) -> list[np.ndarray]:
        """The three revolute joints' unit axes (in their parent frames), outermost first."""
        return [np.eye(3)["XYZ".index(c)] for c in self.order]

    def desired(self, t: float) -> np.ndarray:
        """(16,) desired state at the end of the step starting at t [s]: q(t + dt) and (q(t + dt) - q(t)) / dt."""
        k = min(int(round(t / self.dt)), len(self.q) - 2)
        return np.concatenate([self.q[k + 1], (self.q[k + 1] - self.q[k]) / self.dt])

    def rotation(self, angles: np.ndarray) -> np.ndarray:
        """(3, 3) gripper rotation R = R_rel(angles) R(0)."""
        return Rotation.from_euler(self.order, angles).as_matrix() @ self.rotation0


def convex_surface(local: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(vertices (h, 3) [m], outward triangles (f, 3)) of the convex hull of points local (n, 3) [m]."""
    hull = ConvexHull(local)
    used = np.unique(hull.simplices)
    remap = np.full(len(local), -1, np.int64)
    remap[used] = np.arange(len(used))
    v, f = local[used], remap[hull.simplices]
    centre = v.mean(axis=0)
    n = np.cross(v[f[:, 1]] - v[f[:, 0]], v[f[:, 2]] - v[f[:, 0]])
    flip = np.einsum("ij,ij->i", n, v[f].mean(axis=1) - centre) < 0
    f[flip] = f[flip][:, [0, 2, 1]]
    return v, f


def rack_tubes(rack) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """Per tube of a ``WireRack``: (start (3,), end (3,) [m] of its centre line, radius [m] of its circumscribed
    circle), recovered from its vertices (the axis by principal components, the ends by projection)."""
    out = []
    for i in range(int(rack.tube.max()) + 1):
        v = rack.vertices[np.unique(rack.tets[rack.tube == i])]
        c = v.mean(axis=0)
        axis = np.linalg.svd(v - c)[2][0]
        s = (v - c) @ axis
        radial = v - c - s[:, None] * axis
        out.append((c + s.min() * axis, c + s.max() * axis, float(np.linalg.norm(radial, axis=1).max())))
    return out


@dataclass
class DrakePlateRack:
    """The built scene: config, setup, diagram, simulator, plant and its context, the plan, the bodies (per name
    of ``BODY_NAMES``: a RigidBody, or None for geometry fixed to the world), the gripper's joints (in
    ``GripperPlan.q`` order), the body name of every collision geometry id, and the surfaces the frames show
    (per body name: vertices (n, 3) [m] in the body's frame, faces (f, 3))."""

    config: DrakePlateConfig
    setup: PlateRackSetup
    diagram: object
    simulator: object
    plant: object
    plant_context: object
    plan: GripperPlan
    bodies: dict
    joints: list
    geometry_body: dict = field(default_factory=dict)
    surfaces: dict = field(default_factory=dict)

    def pose(self, body) -> tuple[np.ndarray, np.ndarray]:
        """(rotation (3, 3), translation (3,) [m]) of a body in the world."""
        x = self.plant.EvalBodyPoseInWorld(self.plant_context, body)
        return x.rotation().matrix(), x.translation()

    def positions(self) -> list[np.ndarray]:
        """Per body of ``names()``: (n_i, 3) [m] world positions of its surface vertices."""
        out = []
        for name in self.names():
            v, _ = self.surfaces[name]
            if self.bodies[name] is None:
                out.append(v)
            else:
                r, p = self.pose(self.bodies[name])
                out.append(v @ r.T + p)
        return out

    def names(self) -> list[str]:
        """The bodies the frames show, in ``BODY_NAMES`` order (the stand only where the setup has one)."""
        return [n for n in BODY_NAMES if n in self.surfaces]

    def joint_positions(self) -> np.ndarray:
        """(8,) the gripper chain's joint positions (as ``GripperPlan.q``)."""
        return np.array([j.GetOnePosition(self.plant_context) for j in self.joints])

    def advance(self, t: float) -> None:
        """Step the simulator to time t [s]."""
        self.simulator.AdvanceTo(t)

    def contacts(self) -> dict:
        """The contacts at the current state: {"count": contact points (point pairs plus the polygons of the
        hydroelastic contact surfaces: SAP's contact points), "forces": (4, 3) [N] total contact force on each body
        of ``BODY_NAMES``, "plate_rack_depth": the deepest plate-wire point-pair penetration Drake reports [m]
        (0 with none; hydroelastic pairs have none)}."""
        results = self.plant.get_contact_results_output_port().Eval(self.plant_context)
        index = {n: k for k, n in enumerate(BODY_NAMES)}
        forces = np.zeros((len(BODY_NAMES), 3))
        count, depth = 0, 0.0
        for i in range(results.num_point_pair_contacts()):
            info = results.point_pair_contact_info(i)
            pair = info.point_pair()
            a, b = self.geometry_body.get(pair.id_A), self.geometry_body.get(pair.id_B)
            f = np.asarray(info.contact_force())  # on B
            if b in index:
                forces[index[b]] += f
            if a in index:
                forces[index[a]] -= f
            if {a, b} == {"plate", "rack"}:
                depth = max(depth, float(pair.depth))
            count += 1
        for i in range(results.num_hydroelastic_contacts()):
            info = results.hydroelastic_contact_info(i)
            surface = info.contact_surface()
            m, n = self.geometry_body.get(surface.id_M()), self.geometry_body.get(surface.id_N())
            f = np.asarray(info.F_Ac_W().translational())  # on M's body
            if m in index:
                forces[index[m]] += f
            if n in index:
                forces[index[n]] -= f
            count += surface.num_faces()
        return {"count": count, "forces": forces, "plate_rack_depth": depth}


def _proximity(mu: float, hydro: str | None, resolution: float = 0.0, modulus: float = 0.0,
               dissipation: float | None = None):
    """ProximityProperties with Coulomb mu and hydro None / "rigid" / "compliant" (resolution hint [m], modulus
    [Pa]) / "slab" (a compliant half-space: slab thickness ``resolution`` [m]) and an optional Hunt-Crossley
    dissipation [s/m]."""
    from pydrake.geometry import (AddCompliantHydroelasticProperties, AddCompliantHydroelasticPropertiesForHalfSpace,
                                  AddContactMaterial, AddRigidHydroelasticProperties, ProximityProperties)
    from pydrake.multibody.plant import CoulombFriction

    props = ProximityProperties()
    kw = {} if dissipation is None else {"dissipation": dissipation}
    AddContactMaterial(friction=CoulombFriction(mu, mu), properties=props, **kw)
    if hydro == "rigid":
        AddRigidHydroelasticProperties(resolution, props) if resolution else AddRigidHydroelasticProperties(props)
    elif hydro == "compliant":
        AddCompliantHydroelasticProperties(resolution, modulus, props)
    elif hydro == "slab":
        AddCompliantHydroelasticPropertiesForHalfSpace(resolution, modulus, props)
    return props


def _add_gripper(plant, plan: GripperPlan, setup: PlateRackSetup, cfg: DrakePlateConfig) -> tuple:
    """The chain world -> 3 prismatic -> 3 revolute -> G, and two finger bodies on prismatic joints of G;
    returns (model instance, fingers, joints in ``GripperPlan.q`` order)."""
    from pydrake.math import RigidTransform, RotationMatrix
    from pydrake.multibody.tree import (FixedOffsetFrame, PdControllerGains, PrismaticJoint, RevoluteJoint,
                                        RotationalInertia, SpatialInertia)

    inst = plant.AddModelInstance("gripper")

    def body(name, mass=1.0, inertia=1e-3):
        return plant.AddRigidBody(name, inst, SpatialInertia.MakeFromCentralInertia(
            mass, np.zeros(3), RotationalInertia(inertia, inertia, inertia)))

    joints, parent = [], plant.world_frame()
    for k, axis in enumerate(np.eye(3)):
        child = body(f"slide_{'xyz'[k]}")
        joints.append(plant.AddJoint(PrismaticJoint(f"slide_{'xyz'[k]}", parent, child.body_frame(), axis)))
        parent = child.body_frame()
    for k, axis in enumerate(plan.axes()):
        child = body(f"turn_{k}")
        joints.append(plant.AddJoint(RevoluteJoint(f"turn_{k}_{plan.order[k]}", parent, child.body_frame(), axis)))
        parent = child.body_frame()
    g = plant.AddFrame(FixedOffsetFrame("gripper", parent, RigidTransform(RotationMatrix(plan.rotation0),
                                                                          np.zeros(3))))
    axis = np.asarray(setup.axis, float) / np.linalg.norm(setup.axis)
    fingers = []
    for name in ("left_finger", "right_finger"):
        finger = body(name, mass=0.05, inertia=1e-4)
        joints.append(plant.AddJoint(PrismaticJoint(name + "_slide", g, finger.body_frame(), axis)))
        fingers.append(finger)
    for k, j in enumerate(joints):
        limited = k >= 6 and np.isfinite(cfg.finger_force)  # a force-limited finger driver
        actuator = plant.AddJointActuator(j.name(), j, cfg.finger_force if limited else float("inf"))
        p, d = FINGER_GAINS if limited else cfg.gains
        actuator.set_controller_gains(PdControllerGains(p=p, d=d))
    return inst, fingers, joints


def _finger_locals(setup: PlateRackSetup, plan: GripperPlan) -> list[np.ndarray]:
    """Per finger (left: side -1, right: +1) its vertices (n, 3) [m] in its body frame (the gripper frame with the
    fingers closed: X = R(0)^T (x - p(0)) - s w(0) / 2 a, ipcsim's gripper rule)."""
    pose = setup.trajectory.pose(0.0)
    axis = np.asarray(setup.axis, float) / np.linalg.norm(setup.axis)
    by_side = {f.side: f for f in setup.fingers}
    if sorted(by_side) != [-1, 1]:
        raise ValueError(f"the Drake plate scene needs one finger per side -1 and +1, got sides {sorted(by_side)}")
    return [(by_side[s].vertices - pose.position) @ pose.rotation - s * 0.5 * pose.width * axis for s in (-1, 1)]


def _plate_in_file_frame(setup: PlateRackSetup) -> tuple[np.ndarray, np.ndarray, object]:
    """(vertices (450, 3) [m] of the plate's OBJ file in its own frame (Drake's, z up), faces (896, 3), the
    RigidTransform of that frame in the world at t = 0): ``plate_rack.plate_mesh`` (turned y up, foot on y = 0)
    placed by the setup's plate pose."""
    from pydrake.math import RigidTransform, RotationMatrix

    from ipcsim.geometry.mesh_io import read_obj_surface
    from ipcsim.demos.grasp_paper import DRAKE_TO_IPCSIM_ROTATION
    from ipcsim.demos.plate_rack_parts import plate_mesh_path

    v, f = read_obj_surface(plate_mesh_path())
    foot = float((v @ DRAKE_TO_IPCSIM_ROTATION.T)[:, 1].min())
    rp, tp = np.asarray(setup.plate_rotation, float), np.asarray(setup.plate_translation, float)
    pose = RigidTransform(RotationMatrix(rp @ DRAKE_TO_IPCSIM_ROTATION), rp @ [0.0, -foot, 0.0] + tp)
    return v, f, pose


def _add_plate(plant, setup: PlateRackSetup, mu: float, names: dict):
    """The plate as a free rigid body (Drake's mass) with a rigid hydroelastic Mesh; returns (body, surface,
    initial pose)."""
    from pydrake.geometry import Mesh
    from pydrake.math import RigidTransform
    from pydrake.multibody.tree import CalcSpatialInertia

    from ipcsim.demos.plate_rack_parts import plate_mesh_path, plate_volume

    v, f, pose = _plate_in_file_frame(setup)
    mesh = Mesh(str(plate_mesh_path()))
    plate = plant.AddRigidBody("plate", CalcSpatialInertia(mesh, PLATE_MASS / plate_volume()))
    gid = plant.RegisterCollisionGeometry(plate, RigidTransform(), mesh, "plate", _proximity(mu, "rigid"))
    names[gid] = "plate"
    return plate, (v, f), pose


def _add_rack(plant, setup: PlateRackSetup, config: DrakePlateConfig, names: dict):
    """The rack's tubes as Cylinders of one rigid body (steel, free on the table unless setup.fixed_rack: then
    the world's); returns (body, its surface (vertices (n, 3) [m] in the body frame = the world at t = 0,
    triangles))."""
    from pydrake.geometry import Cylinder
    from pydrake.math import RigidTransform, RotationMatrix
    from pydrake.multibody.tree import CalcSpatialInertia, SpatialInertia

    from ipcsim.demos.plate_rack_parts import RACK_DENSITY

    rack, shift = setup.rack, np.asarray(setup.rack_translation, float)
    hydro = "compliant" if config.rack_contact == "compliant" else "rigid"
    tubes = []
    for a, b, radius in rack_tubes(rack):
        axis = b - a
        pose = RigidTransform(RotationMatrix.MakeFromOneVector(axis, 2), 0.5 * (a + b) + shift)
        tubes.append((pose, Cylinder(radius, float(np.linalg.norm(axis))), radius))
    if setup.fixed_rack:
        body = plant.world_body()
    else:
        inertia = SpatialInertia.Zero()
        for pose, shape, _ in tubes:
            inertia += CalcSpatialInertia(shape, RACK_DENSITY).ReExpress(pose.rotation()).Shift(-pose.translation())
        body = plant.AddRigidBody("rack", inertia)
    for k, (pose, shape, radius) in enumerate(tubes):
        props = _proximity(setup.mu, hydro, resolution=radius, modulus=RACK_MODULUS)
        names[plant.RegisterCollisionGeometry(body, pose, shape, f"rack_tube_{k}", props)] = "rack"
    used = np.unique(rack.triangles)
    remap = np.full(len(rack.vertices), -1, np.int64)
    remap[used] = np.arange(len(used))
    return body, (rack.vertices[used] + shift, remap[rack.triangles])


def _add_stand(plant, setup: PlateRackSetup, names: dict):
    """The stand's jaws as Boxes (their bounding boxes) welded to the world; returns their surface (world
    vertices, triangles) or None without a stand."""
    from pydrake.geometry import Box
    from pydrake.math import RigidTransform

    verts, faces = [], []
    for k, (v, _) in enumerate(setup.stand):
        lo, hi = np.min(v, axis=0), np.max(v, axis=0)
        names[plant.RegisterCollisionGeometry(plant.world_body(), RigidTransform(0.5 * (lo + hi)), Box(*(hi - lo)),
                                              f"stand_{k}", _proximity(setup.mu, "compliant", 0.005, TABLE_MODULUS))
              ] = "stand"
        corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])
        hv, hf = convex_surface(corners)
        faces.append(hf + sum(len(x) for x in verts))
        verts.append(hv)
    return (np.concatenate(verts), np.concatenate(faces)) if verts else None


def finger_geometry_mu(mu: float, finger_mu: float) -> float:
    """The fingers' own friction coefficient that Drake's rule for a pair (the harmonic mean 2 a b / (a + b) of
    the two geometries' coefficients) turns into finger_mu against a geometry of coefficient mu (the plate; the
    fingers then meet the rack and the table with finger_mu too). ValueError when no coefficient can (the pair's
    friction stays under 2 mu)."""
    if not 0.0 < finger_mu < 2.0 * mu:
        raise ValueError(f"finger-plate friction {finger_mu} is out of reach of Drake's pair rule with mu = {mu} "
                         f"(it must lie in (0, {2.0 * mu}))")
    return finger_mu * mu / (2.0 * mu - finger_mu)


def _add_fingers_geometry(plant, fingers, locals_, config: DrakePlateConfig, mu: float, names: dict) -> dict:
    """Each finger's convex hull as a compliant hydroelastic Convex of friction mu; returns {name: (vertices,
    faces)}."""
    from pydrake.geometry import Convex
    from pydrake.math import RigidTransform

    out = {}
    for finger, local, name in zip(fingers, locals_, ("left_finger", "right_finger")):
        v, f = convex_surface(local)
        props = _proximity(mu, "compliant", resolution=0.005, modulus=config.finger_modulus,
                           dissipation=FINGER_DISSIPATION)
        gid = plant.RegisterCollisionGeometry(finger, RigidTransform(), Convex(v.T.copy(), name), name, props)
        names[gid] = name
        out[name] = (v, f)
    return out


def _controller(plan: GripperPlan):
    """A LeafSystem whose output is the gripper's desired state ``GripperPlan.desired(t)``."""
    from pydrake.systems.framework import LeafSystem

    class GripperMotion(LeafSystem):
        def __init__(self):
            super().__init__()
            self.DeclareVectorOutputPort("desired_state", 2 * len(plan.q[0]), self._calc)

        def _calc(self, context, output):
            output.SetFromVector(plan.desired(context.get_time()))

    return GripperMotion()


def build_plate_rack(setup: PlateRackSetup, n_steps: int, config: DrakePlateConfig | None = None) -> DrakePlateRack:
    """The placement as a ready-to-step ``DrakePlateRack`` for n_steps steps of config.dt (the gripper at its
    first pose, the plate at rest)."""
    from pydrake.geometry import CollisionFilterDeclaration, HalfSpace
    from pydrake.math import RigidTransform, RotationMatrix
    from pydrake.multibody.plant import AddMultibodyPlant, MultibodyPlantConfig
    from pydrake.systems.analysis import Simulator
    from pydrake.systems.framework import DiagramBuilder

    cfg = config or DrakePlateConfig()
    if cfg.rack_contact not in ("rigid", "compliant"):
        raise ValueError(f"rack_contact must be 'rigid' or 'compliant', got {cfg.rack_contact!r}")
    plan = GripperPlan(setup.trajectory, cfg.dt, n_steps)
    builder = DiagramBuilder()
    plant_config = MultibodyPlantConfig(time_step=cfg.dt, discrete_contact_approximation="lagged",
                                        contact_model="hydroelastic_with_fallback")
    plant, scene_graph = AddMultibodyPlant(plant_config, builder)
    plant.mutable_gravity_field().set_gravity_vector([0.0, -9.81, 0.0])
    names: dict = {}
    gid = plant.RegisterCollisionGeometry(
        plant.world_body(), RigidTransform(RotationMatrix.MakeXRotation(-0.5 * np.pi), [0.0, setup.ground, 0.0]),
        HalfSpace(), "table", _proximity(setup.mu, "slab", TABLE_SLAB, TABLE_MODULUS))
    names[gid] = "table"
    plate, plate_surface, plate_pose = _add_plate(plant, setup, setup.mu, names)
    rack, rack_surface = _add_rack(plant, setup, cfg, names)
    inst, fingers, joints = _add_gripper(plant, plan, setup, cfg)
    surfaces = {"plate": plate_surface, "rack": rack_surface,
                **_add_fingers_geometry(plant, fingers, _finger_locals(setup, plan), cfg,
                                        finger_geometry_mu(setup.mu, setup.finger_mu), names)}
    bodies = {"plate": plate, "rack": None if setup.fixed_rack else rack, "left_finger": fingers[0],
              "right_finger": fingers[1], "stand": None}
    stand = _add_stand(plant, setup, names)
    if stand is not None:
        surfaces["stand"] = stand
    plant.Finalize()
    # the gripper's own parts do not collide (a robot model's usual filter): the pads meet below the rim lip
    scene_graph.collision_filter_manager().Apply(
        CollisionFilterDeclaration().ExcludeWithin(plant.CollectRegisteredGeometries(fingers)))
    motion = builder.AddSystem(_controller(plan))
    builder.Connect(motion.get_output_port(), plant.get_desired_state_input_port(inst))
    diagram = builder.Build()
    simulator = Simulator(diagram)
    context = plant.GetMyMutableContextFromRoot(simulator.get_mutable_context())
    plant.SetFreeBodyPose(context, plate, plate_pose)
    start = plan.desired(0.0)
    q, v = plant.GetPositions(context), plant.GetVelocities(context)
    for j, qj, vj in zip(joints, plan.q[0], start[len(joints):]):
        q[j.position_start()], v[j.velocity_start()] = qj, vj
    plant.SetPositions(context, q)
    plant.SetVelocities(context, v)
    simulator.Initialize()
    return DrakePlateRack(cfg, setup, diagram, simulator, plant, context, plan, bodies, joints, names, surfaces)


def setup_from_scene(kind: str = "clean", mu: float = 0.5, finger_mu: float = 0.8,
                     fixed_rack: bool = False) -> PlateRackSetup:
    """ipcsim's placement (``ipcsim.demos.plate_rack_scene``: geometry and the shipped trajectory ``kind``) as a
    ``PlateRackSetup``: the fine FinRay meshes placed as at t = 0, the gripper's opening axis x."""
    from ipcsim.geometry.trajectory import read_trajectory_csv
    from ipcsim.demos import plate_rack_scene as prs

    geo = prs.scene_geometry()
    fine_v, _ = prs.finger_meshes()["fine"]
    fingers = [Finger(fine_v @ rot.T + t, side) for side, (rot, t) in ((-1, geo.fingers["left"]),
                                                                       (1, geo.fingers["right"]))]
    return PlateRackSetup(read_trajectory_csv(prs.trajectory_path(kind)), np.array([1.0, 0.0, 0.0]), fingers,
                          geo.plate_rotation, geo.plate_translation, geo.rack, geo.rack_translation,
                          stand=list(geo.stand), slot_box=geo.slot_box, fixed_rack=fixed_rack, mu=mu,
                          finger_mu=finger_mu)
