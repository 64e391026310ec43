"""The teddy grasp of Embedded IPC (004 §IV-A) in Drake (pydrake), for ``benchmarks/drake_grasp.py``.

The scene is Drake's own example (``examples/multibody/deformable/bubble_gripper.cc`` with ``models/bubbles.sdf``,
``models/deformable_teddy.sdf`` and ``parallel_gripper_controller.cc`` in RobotLocomotion/drake, and the gripper of
RobotLocomotion/models ``wsg_50_description/sdf/schunk_wsg_50_deformable_bubble.sdf``), rebuilt here without any
model package (the example fetches the WSG-50 package from the internet at run time):

- Drake's world is z up. The gripper's model frame M sits at (0, 0, 0.06) m, pitched by 1.5708 about y; the gripper
  body (0.988882 kg) slides on a prismatic joint along -x of M (world +z: the lift); each finger (0.05 kg) hangs
  0.0725 m below the gripper body along z of M and slides along y of M (the squeeze). The fingers are coupled
  (q_right = -q_left, the SDF's mimic tag: a coupler constraint) and the lift and the left finger are
  PD-controlled through the plant's desired-state port (SAP's implicit PD).
- The bubbles: ``bubble.vtk`` (67 vertices, 212 tets) at X_WB = (RPY(+-1.5707, 3.1416, 0), (-0.185, -+0.09, 0.06))
  (left: roll +1.5707, y = -0.09), fixed to their fingers at X_FB = (RPY(+-pi/2, pi/2, 0), (0, -+0.03, -0.1125)):
  every vertex inside Box(0.1, 0.004, 0.15) at (0, -+0.03, -0.1) in the finger's frame follows the finger
  (``DeformableModel.AddFixedConstraint``), i.e. the bubble's flat base.
- The teddy: Drake's ``teddy.vtk`` scaled by 0.15 (the shared ``teddy.vtk`` is that mesh already scaled), at
  (RPY(1.5707, 0, -1.5707), (-0.17, 0, 0)). The angles are the SDF files' rounded ones, as Drake's example reads
  them (the bubbles' initial vertices differ from finger pose x X_FB by up to 3.9e-6 m).
- Ground: Box(1, 1, 1) centred at z = -0.505 (top face z = -0.005 m), resolution hint 0.01 m.
- Materials (the paper's and the example's): linear corotated, bubbles E 1e4 Pa, nu 0.45, rho 10 kg/m^3,
  teddy E 5e4 Pa, nu 0.45, rho 1e3 kg/m^3, stiffness (Rayleigh) damping 0.05 s on both; Coulomb mu = 1 on every
  geometry (the paper's; Drake's teddy SDF has 0.9), Hunt-Crossley dissipation 5 s/m on the bubbles
  (bubbles.sdf); gravity 9.81 m/s^2; the SAP solver (``MultibodyPlantConfig`` default ``lagged``
  approximation, as the example).
- Motion (``ParallelGripperController`` cut to the paper's 4 s): the finger gap closes 0.12 -> 0.04 m over
  1.5 s, the gripper lifts 0.12 m over 1.5 s, then holds. Two deliberate differences from the example, both so
  that Drake's fingers follow the same prescribed motion as ipcsim's position-controlled bubbles: (1) the desired
  state is the motion at the end of the step (t + h) with its velocity (the example: at t, velocity 0), (2) the
  PD gains default to ``STIFF_GAINS`` (tracking error under 0.2 mm at h = 0.01 s, see drake.csv) where the
  SDF's p = 1e4 N/m, d = 1 N s/m (``WSG_GAINS``, ``--wsg-gains``) leave the gap 9.9 mm wider than commanded at
  the end of the squeeze (5.7 mm at t = 3 s) and the lift 1.8 mm low under the gripper's weight. The WSG's
  finger limits (|q| <= 0.055 m) are left out: the commanded open gap of 0.12 m is outside them, so the
  example's fingers start at 0.11 m.

Everything is in Drake's frame until ``drake_to_ipcsim`` maps points into ipcsim's (y up), the one place where
the frame change is defined.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

SQUEEZE, LIFT, HOLD = 1.5, 1.5, 1.0  # [s]
GAP_OPEN, GAP_CLOSED, LIFT_HEIGHT = 0.12, 0.04, 0.12  # [m]
BUBBLE = dict(youngs_modulus=1e4, poissons_ratio=0.45, mass_density=10.0)  # [Pa], [1], [kg/m^3]
TEDDY = dict(youngs_modulus=5e4, poissons_ratio=0.45, mass_density=1e3)
STIFFNESS_DAMPING = 0.05  # [s]
MU = 1.0
BUBBLE_DISSIPATION = 5.0  # [s/m], Hunt-Crossley (bubbles.sdf)
WSG_GAINS = (1e4, 1.0)  # (p [N/m], d [N s/m]) of the SDF's joints
STIFF_GAINS = (1e7, 1e4)
BODY_NAMES = ("teddy", "left_bubble", "right_bubble")  # ipcsim's body order (demo_grasp)
GROUND_TOP = -0.005  # [m], z of the ground's top face in Drake's frame

# Drake -> ipcsim: ipcsim (x, y, z) = (y_D, z_D - GROUND_TOP, x_D + 0.17): squeeze along x, lift along y, the
# ground's top at y = 0, the teddy's Drake x (-0.17) at z = 0. A proper rotation (a cyclic permutation, det +1).
# ipcsim's paper set-up of the grasp defines the same map (``ipcsim.demos.grasp_paper``): where it exists, it is used.
try:
    from ipcsim.demos.grasp_paper import DRAKE_TO_IPCSIM_ROTATION as _R_DRAKE_TO_IPCSIM
    from ipcsim.demos.grasp_paper import DRAKE_TO_IPCSIM_TRANSLATION as _T_DRAKE_TO_IPCSIM
except ImportError:
    _R_DRAKE_TO_IPCSIM = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
    _T_DRAKE_TO_IPCSIM = np.array([0.0, -GROUND_TOP, 0.17])


def drake_to_ipcsim(points: np.ndarray) -> np.ndarray:
    """(n, 3) [m] points from Drake's frame (z up) into ipcsim's (y up); ``drake_to_ipcsim_vector`` for forces."""
    return np.asarray(points, float) @ _R_DRAKE_TO_IPCSIM.T + _T_DRAKE_TO_IPCSIM


def drake_to_ipcsim_vector(vectors: np.ndarray) -> np.ndarray:
    """(..., 3) free vectors (forces [N], velocities) from Drake's frame into ipcsim's (rotation only)."""
    return np.asarray(vectors, float) @ _R_DRAKE_TO_IPCSIM.T


def gripper_targets(t: float) -> tuple[np.ndarray, np.ndarray]:
    """(positions (2,) [m], velocities (2,) [m/s]) of (lift joint, left finger joint) at time t [s]: the left finger
    at -gap/2, the gap closing 0.12 -> 0.04 m over SQUEEZE, then the lift 0 -> 0.12 m over LIFT, then hold."""
    if t < SQUEEZE:
        s = t / SQUEEZE
        return (np.array([0.0, -0.5 * ((1 - s) * GAP_OPEN + s * GAP_CLOSED)]),
                np.array([0.0, 0.5 * (GAP_OPEN - GAP_CLOSED) / SQUEEZE]))
    if t < SQUEEZE + LIFT:
        s = (t - SQUEEZE) / LIFT
        return np.array([s * LIFT_HEIGHT, -0.5 * GAP_CLOSED]), np.array([LIFT_HEIGHT / LIFT, 0.0])
    return np.array([LIFT_HEIGHT, -0.5 * GAP_CLOSED]), np.zeros(2)


def find_mesh(name: str) -> Path:
    """Path of a mesh of the grasp: ``teddy.vtk`` or ``bubble.vtk``. Looked up in ipcsim's shipped demo data
    (``data/demos/meshes/{teddy,drake}``), then in $IPCSIM_SHARED_DATA/meshes/{teddy,drake}, then in a
    ``shared/data/meshes`` folder beside the repository or one of its parents. FileNotFoundError otherwise."""
    sub = "teddy" if name.startswith("teddy") else "drake"
    roots = []
    try:
        from importlib import resources
        roots.append(Path(str(resources.files("ipcsim") / "data" / "demos" / "meshes")))
    except ModuleNotFoundError:
        pass
    if os.environ.get("IPCSIM_SHARED_DATA"):
        roots.append(Path(os.environ["IPCSIM_SHARED_DATA"]) / "meshes")
    here = Path(__file__).resolve().parent
    roots += [p / "shared" / "data" / "meshes" for p in here.parents]
    for root in roots:
        if (root / sub / name).is_file():
            return root / sub / name
    raise FileNotFoundError(f"{name}: not found under {', '.join(str(r / sub) for r in roots)}")


def boundary_faces(tets: np.ndarray) -> np.ndarray:
    """(f, 3) int64 boundary triangles of a tet mesh (tets (m, 4), positively oriented), wound outward."""
    t = np.asarray(tets, np.int64)
    faces = np.concatenate([t[:, [1, 2, 3]], t[:, [0, 3, 2]], t[:, [0, 1, 3]], t[:, [0, 2, 1]]])
    key = np.sort(faces, axis=1)
    _, inverse, counts = np.unique(key, axis=0, return_inverse=True, return_counts=True)
    return faces[counts[inverse.ravel()] == 1]


def orient_tets(x: np.ndarray, tets: np.ndarray) -> np.ndarray:
    """tets (m, 4) with the last two vertices swapped where the signed volume at x (n, 3) is negative."""
    t = np.array(tets, np.int64)
    p = x[t]
    vol = np.einsum("ij,ij->i", np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0]), p[:, 3] - p[:, 0])
    t[vol < 0] = t[vol < 0][:, [0, 1, 3, 2]]
    return t


def rest_inverse(x: np.ndarray, tets: np.ndarray) -> np.ndarray:
    """(m, 3, 3) [1/m] inverse rest edge matrices Dm^-1 of tets (m, 4) at rest positions x (n, 3) [m]."""
    p = x[tets]
    return np.linalg.inv(np.stack([p[:, 1] - p[:, 0], p[:, 2] - p[:, 0], p[:, 3] - p[:, 0]], axis=2))


@dataclass
class GraspConfig:
    """The Drake run's knobs: time step dt [s], PD gains (p [N/m], d [N s/m]) of the lift and finger joints, the
    discrete contact approximation solved by SAP ("lagged" is the plant's default, "sap" the other), mu [1]."""

    dt: float = 0.01
    gains: tuple = STIFF_GAINS
    approximation: str = "lagged"
    mu: float = MU


@dataclass
class Body:
    """One deformable body: name, Drake id, geometry id, rest tets (m, 4), surface faces (f, 3), Dm^-1; for a
    bubble its finger (a RigidBody), the indices of its fixed vertices and their positions in the finger's frame."""

    name: str
    body_id: object
    geometry_id: object
    tets: np.ndarray
    faces: np.ndarray
    dm_inv: np.ndarray = field(repr=False)
    finger: object = None
    fixed: np.ndarray = field(default=None, repr=False)
    fixed_in_finger: np.ndarray = field(default=None, repr=False)


@dataclass
class DrakeGrasp:
    """The built scene: diagram, simulator, plant and its context, deformable model, bodies (in
    ``BODY_NAMES`` order), the gripper's joints (lift, left finger, right finger)."""

    config: GraspConfig
    diagram: object
    simulator: object
    plant: object
    plant_context: object
    deformable: object
    bodies: list
    joints: tuple

    def positions(self) -> list[np.ndarray]:
        """Per body (n_i, 3) [m] vertex positions in Drake's frame."""
        return [np.asarray(self.deformable.GetPositions(self.plant_context, b.body_id)).T.copy()
                for b in self.bodies]

    def joint_positions(self) -> np.ndarray:
        """(3,) [m] lift, left finger, right finger joint positions."""
        return np.array([j.get_translation(self.plant_context) for j in self.joints])

    def contacts(self) -> tuple[int, np.ndarray]:
        """(contact count, per-body forces (n_bodies, 3) [N] in Drake's frame) at the current state: the count is
        the number of contact polygons (SAP's contact points) of every deformable contact, the ground's included;
        the force on a body is the total (normal + friction) contact force the others exert on it."""
        results = self.plant.get_contact_results_output_port().Eval(self.plant_context)
        index = {b.geometry_id: k for k, b in enumerate(self.bodies)}
        forces = np.zeros((len(self.bodies), 3))
        count = 0
        for i in range(results.num_deformable_contacts()):
            info = results.deformable_contact_info(i)
            count += info.contact_mesh().num_faces()
            f = np.asarray(info.F_Ac_W().translational())
            if info.id_A() in index:
                forces[index[info.id_A()]] += f
            if info.id_B() in index:
                forces[index[info.id_B()]] -= f
        return count, forces

    def fixed_error(self, xs: list) -> float:
        """Largest distance [m] between a bubble's fixed vertex (positions xs, per body) and its point on the
        finger (SAP regularizes the fixed constraint: the vertices trail the finger a little)."""
        err = 0.0
        for x, b in zip(xs, self.bodies):
            if b.finger is not None:
                pose = self.plant.EvalBodyPoseInWorld(self.plant_context, b.finger)
                target = b.fixed_in_finger @ pose.rotation().matrix().T + pose.translation()
                err = max(err, float(np.linalg.norm(x[b.fixed] - target, axis=1).max()))
        return err

    def advance(self, t: float) -> None:
        """Step the simulator to time t [s]."""
        self.simulator.AdvanceTo(t)


def _deformable_config(material: dict):
    from pydrake.multibody.fem import DeformableBodyConfig, MaterialModel

    c = DeformableBodyConfig()
    c.set_youngs_modulus(material["youngs_modulus"])
    c.set_poissons_ratio(material["poissons_ratio"])
    c.set_mass_density(material["mass_density"])
    c.set_stiffness_damping_coefficient(STIFFNESS_DAMPING)
    c.set_material_model(MaterialModel.kLinearCorotated)
    return c


def _add_gripper(plant, gains):
    """The WSG-50 as the SDF defines it, without meshes: returns (model instance, (lift, left, right) joints)."""
    from pydrake.math import RigidTransform, RollPitchYaw
    from pydrake.multibody.tree import (FixedOffsetFrame, PdControllerGains, PrismaticJoint, RotationalInertia,
                                        SpatialInertia)

    inst = plant.AddModelInstance("gripper")

    def body(name, mass, inertia):
        return plant.AddRigidBody(name, inst, SpatialInertia.MakeFromCentralInertia(
            mass, np.zeros(3), RotationalInertia(*inertia)))

    gripper = body("gripper", 0.988882, (0.162992, 0.162992, 0.164814))
    fingers = [body(n, 0.05, (0.16, 0.16, 0.16)) for n in ("left_finger", "right_finger")]
    model = plant.AddFrame(FixedOffsetFrame("gripper_model", plant.world_frame(),
                                            RigidTransform(RollPitchYaw(0.0, 1.5708, 0.0), [0.0, 0.0, 0.06])))
    lift = plant.AddJoint(PrismaticJoint("translate_joint", model, gripper.body_frame(), [-1.0, 0.0, 0.0]))
    joints = [lift]
    for finger in fingers:
        parent = plant.AddFrame(FixedOffsetFrame(finger.name() + "_parent", gripper.body_frame(),
                                                 RigidTransform([0.0, 0.0, -0.0725])))
        joints.append(plant.AddJoint(PrismaticJoint(finger.name() + "_sliding_joint", parent,
                                                    finger.body_frame(), [0.0, 1.0, 0.0])))
    for j in joints[:2]:
        plant.AddJointActuator(j.name(), j).set_controller_gains(PdControllerGains(p=gains[0], d=gains[1]))
    plant.AddCouplerConstraint(joints[2], joints[1], -1.0, 0.0)  # q_right = -q_left
    return inst, fingers, tuple(joints)


def _add_ground(plant, mu: float) -> None:
    from pydrake.geometry import AddContactMaterial, Box, ProximityProperties
    from pydrake.math import RigidTransform
    from pydrake.multibody.plant import CoulombFriction

    props = ProximityProperties()
    AddContactMaterial(friction=CoulombFriction(mu, mu), properties=props)
    props.AddProperty("hydroelastic", "resolution_hint", 0.01)
    plant.RegisterCollisionGeometry(plant.world_body(), RigidTransform([0.0, 0.0, GROUND_TOP - 0.5]),
                                    Box(1.0, 1.0, 1.0), "ground", props)


def _register(plant, name, path, pose, material, mu, dissipation=None):
    """Register one deformable body (Mesh at ``path``, world pose ``pose``); returns its DeformableBodyId."""
    from pydrake.geometry import AddContactMaterial, GeometryInstance, Mesh, ProximityProperties
    from pydrake.multibody.plant import CoulombFriction

    props = ProximityProperties()
    kw = {} if dissipation is None else {"dissipation": dissipation}
    AddContactMaterial(friction=CoulombFriction(mu, mu), properties=props, **kw)
    instance = GeometryInstance(pose, Mesh(str(path)), name)
    instance.set_proximity_properties(props)
    return plant.mutable_deformable_model().RegisterDeformableBody(instance, _deformable_config(material), 1.0)


def _add_deformables(plant, fingers, mu: float) -> list:
    """Register the teddy and the two bubbles (fixed to their fingers); returns their ids in BODY_NAMES order."""
    from pydrake.geometry import Box
    from pydrake.math import RigidTransform, RollPitchYaw

    teddy = _register(plant, "teddy", find_mesh("teddy.vtk"),
                      RigidTransform(RollPitchYaw(1.5707, 0.0, -1.5707), [-0.17, 0.0, 0.0]), TEDDY, mu)
    ids = [teddy]
    for finger, side in zip(fingers, (-1.0, 1.0)):  # left: y < 0
        pose = RigidTransform(RollPitchYaw(-side * 1.5707, 3.1416, 0.0), [-0.185, side * 0.09, 0.06])
        bid = _register(plant, ("left" if side < 0 else "right") + "_bubble", find_mesh("bubble.vtk"), pose,
                        BUBBLE, mu, BUBBLE_DISSIPATION)
        x_fb = RigidTransform(RollPitchYaw(-side * np.pi / 2, np.pi / 2, 0.0), [0.0, side * 0.03, -0.1125])
        plant.mutable_deformable_model().AddFixedConstraint(
            bid, finger, x_fb, Box(0.1, 0.004, 0.15), RigidTransform([0.0, side * 0.03, -0.1]))
        ids.append(bid)
    return ids


def _controller(dt: float):
    """A LeafSystem whose output is the gripper's desired state (lift, left finger, their velocities) at t + dt."""
    from pydrake.systems.framework import LeafSystem

    class GripperMotion(LeafSystem):
        def __init__(self):
            super().__init__()
            self.DeclareVectorOutputPort("desired_state", 4, self._calc)

        def _calc(self, context, output):
            q, v = gripper_targets(context.get_time() + dt)
            output.SetFromVector(np.concatenate([q, v]))

    return GripperMotion()


def build_grasp(config: GraspConfig | None = None) -> DrakeGrasp:
    """The grasp as a ready-to-step ``DrakeGrasp`` (fingers at the open gap, simulator initialized)."""
    from pydrake.multibody.plant import AddMultibodyPlant, MultibodyPlantConfig
    from pydrake.systems.analysis import Simulator
    from pydrake.systems.framework import DiagramBuilder

    cfg = config or GraspConfig()
    builder = DiagramBuilder()
    plant, scene_graph = AddMultibodyPlant(MultibodyPlantConfig(time_step=cfg.dt,
                                                      discrete_contact_approximation=cfg.approximation), builder)
    _add_ground(plant, cfg.mu)
    inst, fingers, joints = _add_gripper(plant, cfg.gains)
    ids = _add_deformables(plant, fingers, cfg.mu)
    plant.Finalize()
    motion = builder.AddSystem(_controller(cfg.dt))
    builder.Connect(motion.get_output_port(), plant.get_desired_state_input_port(inst))
    diagram = builder.Build()
    simulator = Simulator(diagram)
    context = plant.GetMyMutableContextFromRoot(simulator.get_mutable_context())
    q0, _ = gripper_targets(0.0)
    joints[1].set_translation(context, q0[1])
    joints[2].set_translation(context, -q0[1])
    simulator.Initialize()
    dm = plant.deformable_model()
    bodies = []
    for name, bid, finger, side in zip(BODY_NAMES, ids, (None, *fingers), (0.0, -1.0, 1.0)):
        gid = dm.GetGeometryId(bid)
        x, tets = _volume_tets(scene_graph, gid)
        tets = orient_tets(x, tets)
        body = Body(name, bid, gid, tets, boundary_faces(tets), rest_inverse(x, tets))
        if finger is not None:
            body.finger = finger
            x_world = np.asarray(dm.GetPositions(context, bid)).T
            body.fixed, body.fixed_in_finger = _fixed_vertices(x_world, plant.EvalBodyPoseInWorld(context, finger),
                                                                side)
        bodies.append(body)
    return DrakeGrasp(cfg, diagram, simulator, plant, context, dm, bodies, joints)


def _fixed_vertices(x: np.ndarray, finger_pose, side: float) -> tuple[np.ndarray, np.ndarray]:
    """(indices, positions (k, 3) [m] in the finger's frame) of a bubble's vertices (x (n, 3), world) inside the
    fixed-constraint box Box(0.1, 0.004, 0.15) at (0, side 0.03, -0.1) in the finger's frame (side -1: left)."""
    local = (x - finger_pose.translation()) @ finger_pose.rotation().matrix()
    centre = np.array([0.0, side * 0.03, -0.1])
    inside = np.all(np.abs(local - centre) <= 0.5 * np.array([0.1, 0.004, 0.15]) + 1e-12, axis=1)
    return np.flatnonzero(inside), local[inside]


def _volume_tets(scene_graph, geometry_id) -> tuple[np.ndarray, np.ndarray]:
    """(rest vertices (n, 3) [m] in the geometry's frame, tets (m, 4) int64) of a deformable geometry's reference
    volume mesh (SceneGraph's inspector; same vertex order as ``DeformableModel.GetPositions``)."""
    mesh = scene_graph.model_inspector().GetReferenceMesh(geometry_id)
    x = np.array([np.asarray(v) for v in mesh.vertices()], float).reshape(-1, 3)
    tets = np.array([[e.vertex(i) for i in range(4)] for e in mesh.tetrahedra()], np.int64)
    return x, tets


def _point_triangle_distance(p: np.ndarray, tri: np.ndarray) -> np.ndarray:
    """(k, f) [m] distances from points p (k, 3) to triangles tri (f, 3, 3)."""
    a, b, c = tri[:, 0], tri[:, 1], tri[:, 2]
    n = np.cross(b - a, c - a)
    n /= np.linalg.norm(n, axis=1, keepdims=True)
    d = p[:, None, :] - a[None]  # (k, f, 3)
    height = np.einsum("kfi,fi->kf", d, n)
    q = p[:, None, :] - height[..., None] * n[None]  # projection on the plane
    inside = np.ones(height.shape, bool)
    for u, v in ((a, b), (b, c), (c, a)):
        inside &= np.einsum("kfi,fi->kf", np.cross(v - u, q - u[None]), n) >= 0.0
    best = np.where(inside, np.abs(height), np.inf)
    for u, v in ((a, b), (b, c), (c, a)):
        e = v - u
        s = np.clip(np.einsum("kfi,fi->kf", p[:, None, :] - u[None], e) / np.einsum("fi,fi->f", e, e), 0.0, 1.0)
        best = np.minimum(best, np.linalg.norm(p[:, None, :] - (u[None] + s[..., None] * e[None]), axis=2))
    return best


def _inside_tets(p: np.ndarray, x: np.ndarray, tets: np.ndarray, tol: float = 1e-12) -> np.ndarray:
    """(k,) bool: whether each point of p (k, 3) [m] lies in some tet (m, 4) of the mesh at positions x (n, 3)."""
    if len(p) == 0:
        return np.zeros(0, bool)
    v = x[tets]
    ds = np.stack([v[:, 1] - v[:, 0], v[:, 2] - v[:, 0], v[:, 3] - v[:, 0]], axis=2)  # (m, 3, 3)
    ok = np.abs(np.linalg.det(ds)) > 1e-30
    inv = np.linalg.inv(ds[ok])
    lam = np.einsum("mij,kmj->kmi", inv, p[:, None, :] - v[ok, 0][None])  # (k, m, 3)
    return np.any((lam >= -tol).all(axis=2) & (lam.sum(axis=2) <= 1.0 + tol), axis=1)


def penetration_depth(p: np.ndarray, x: np.ndarray, tets: np.ndarray, faces: np.ndarray) -> float:
    """Deepest penetration [m] of the points p (k, 3) into the tet mesh (x (n, 3), tets (m, 4), boundary faces
    (f, 3)): the largest distance to the boundary surface among the points inside the mesh; 0 if none is."""
    lo, hi = x.min(axis=0), x.max(axis=0)
    cand = p[np.all((p >= lo) & (p <= hi), axis=1)]
    inside = cand[_inside_tets(cand, x, tets)]
    if len(inside) == 0:
        return 0.0
    return float(_point_triangle_distance(inside, x[faces]).min(axis=1).max())


def penetrations(xs: list, bodies: list, ground: float = GROUND_TOP) -> tuple[float, float]:
    """(into the ground, between the bodies) [m]: the deepest penetration at one state, vertex-based. Ground: the
    lowest vertex below the ground's top (ground - z). Bodies: over the ordered pairs (A, B), the surface vertices
    of A inside B's tets, at their distance to B's surface. xs: per body (n_i, 3) [m] in Drake's frame; bodies: the
    ``Body`` records. An edge crossing a face with both ends outside is not seen (vertices bound the depth from
    below)."""
    into_ground = max(0.0, max(float(np.max(ground - x[:, 2])) for x in xs))
    between = 0.0
    for i, (xa, a) in enumerate(zip(xs, bodies)):
        surf = xa[np.unique(a.faces)]
        for j, (xb, b) in enumerate(zip(xs, bodies)):
            if i != j:
                between = max(between, penetration_depth(surf, xb, b.tets, b.faces))
    return into_ground, between


def deepest_penetration(xs: list, bodies: list, ground: float = GROUND_TOP) -> float:
    """The larger of ``penetrations`` [m]."""
    return max(penetrations(xs, bodies, ground))


def min_jacobians(xs: list, bodies: list) -> np.ndarray:
    """(n_bodies,) smallest det F over each body's tets at positions xs (linear tets, F = Ds Dm^-1)."""
    out = []
    for x, b in zip(xs, bodies):
        p = x[b.tets]
        ds = np.stack([p[:, 1] - p[:, 0], p[:, 2] - p[:, 0], p[:, 3] - p[:, 0]], axis=2)
        out.append(float(np.min(np.linalg.det(ds) * np.linalg.det(b.dm_inv))))
    return np.array(out)
