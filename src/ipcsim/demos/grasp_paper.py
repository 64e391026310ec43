"""The teddy grasp as the Embedded IPC paper ran it (004 §IV-A) and as Drake's ``bubble_gripper`` example sets it up:
Drake's poses, Drake's z-up frame mapped into ipcsim's y-up frame, and the paper set-up's model builder.

Every figure below comes from RobotLocomotion/drake (``examples/multibody/deformable/``) and RobotLocomotion/models
(``wsg_50_description/sdf/schunk_wsg_50_deformable_bubble.sdf``), or from the paper (004 §IV-A):

- bubbles (``models/bubbles.sdf``): mesh ``wsg_50_description/meshes/bubble.vtk`` (67 vertices, 212 tets, a half
  ellipsoid: base 0.114 x 0.081 m in its z = 0 plane, dome to z = -0.037 m; shipped in ``data/demos/meshes/drake``),
  initial poses (x y z roll pitch yaw, [m, rad], Drake's RPY: R = Rz(yaw) Ry(pitch) Rx(roll)):
  left ``-0.185 -0.09 0.06 1.5707 3.1416 0``, right ``-0.185 0.09 0.06 -1.5707 3.1416 0``; E 1e4 Pa, nu 0.45,
  rho 10 kg/m^3, stiffness damping 0.05 s (the same in the paper);
- teddy (``models/deformable_teddy.sdf``): ``teddy.vtk`` scaled by 0.15 (the shipped ``teddy/teddy.vtk`` is that
  mesh already scaled: 410 vertices, 1,207 tets), pose ``-0.17 0 0 1.5707 0 -1.5707``; E 5e4 Pa, nu 0.45,
  rho 1e3 kg/m^3, stiffness damping 0.05 s (the same in the paper);
- ground (``bubble_gripper.cc``): a 1 m box centred at z = -0.505 m, so its top is the plane z = -0.005 m;
- gripper (``schunk_wsg_50_deformable_bubble.sdf``): model pose ``0 0 0.06 0 1.5708 0``; the fingers' frames sit at
  (0, q, -0.0725) m in the model frame, q the sliding joint (left q, right -q, along model y = world y); the wrist
  ``translate_joint`` moves the gripper along model -x (world +z: the lift);
- the bubbles on the fingers (``bubble_gripper.cc``): bubble pose in the finger frame RPY(+-pi/2, pi/2, 0) at
  (0, -+0.03, -0.1125) m (left -, right +); every bubble vertex inside ``Box(0.1, 0.004, 0.15)`` centred at
  (0, -+0.03, -0.1) m in the finger frame is fixed to the finger (position control); these are the bubble's flat
  base (``fixed_bubble_vertices``). The bubbles.sdf poses equal finger pose x bubble-in-finger pose up to the
  sdf's rounded angles (1.5707, 3.1416, 1.5708: the vertices differ by 3.9e-6 m at most); frame 0 uses the sdf
  poses, as Drake does;
- motion (``parallel_gripper_controller.{h,cc}`` with ``open_width 0.12, closed_width 0.04, lifted_height 0.12``):
  the left finger goes linearly from q = -0.06 to -0.02 m over [0, 1.5] s, the wrist from 0 to 0.12 m over
  [1.5, 3] s, then holds (until 5.5 s in Drake; the paper stops at 4 s);
- contact (the paper): mu 1 (Drake's sdf: bubbles 1.0, teddy 0.9, ground 1.0), dhat 1e-3 m, eps_v 1e-3 m/s,
  kappa 1e4 kg/s^2 for the original barrier (ipcsim's is the convergent barrier, kappa in Pa: ``teddy_grasp``);
  g 9.81 m/s^2; linear corotated elasticity for both bodies.

Frames: Drake is z up with the squeeze along y and the lift along z; ipcsim is y up. ``drake_to_ipcsim`` maps
p_ipcsim = R p_drake + t with R the cyclic permutation (x, y, z)_ipcsim = (y, z, x)_drake (a proper rotation:
Drake's squeeze axis y becomes our x, its lift axis z our y) and t = (0, 0.005, 0.17) m, which puts Drake's ground
(z = -0.005 m) at our y = 0 and the teddy's frame origin (x = -0.17 m) at our z = 0.
"""
from __future__ import annotations

from importlib import resources
from pathlib import Path

import numpy as np

from ..geometry import load_tet_mesh

#: (3, 3): Drake's frame -> ipcsim's frame (rows: ipcsim x, y, z in Drake's axes)
DRAKE_TO_IPCSIM_ROTATION = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
#: (3,) [m]: the translation after the rotation (Drake's ground z = -0.005 m -> y = 0, teddy x = -0.17 m -> z = 0)
DRAKE_TO_IPCSIM_TRANSLATION = np.array([0.0, 0.005, 0.17])
DRAKE_GROUND_Z = -0.005  # [m], the top of Drake's ground box

TEDDY_POSE = ((1.5707, 0.0, -1.5707), (-0.17, 0.0, 0.0))  # (roll, pitch, yaw) [rad], position [m]
BUBBLE_POSES = {"left_bubble": ((1.5707, 3.1416, 0.0), (-0.185, -0.09, 0.06)),
                "right_bubble": ((-1.5707, 3.1416, 0.0), (-0.185, 0.09, 0.06))}
GRIPPER_POSE = ((0.0, 1.5708, 0.0), (0.0, 0.0, 0.06))  # the WSG-50 model frame in the world
FINGER_OFFSET = -0.0725  # [m], the fingers' frames along model z
#: bubble pose in its finger's frame ((roll, pitch, yaw) [rad], position [m]) and the fixed box's centre there [m]
BUBBLE_IN_FINGER = {"left_bubble": ((np.pi / 2, np.pi / 2, 0.0), (0.0, -0.03, -0.1125)),
                    "right_bubble": ((-np.pi / 2, np.pi / 2, 0.0), (0.0, 0.03, -0.1125))}
FIXED_BOX_CENTRE = {"left_bubble": (0.0, -0.03, -0.1), "right_bubble": (0.0, 0.03, -0.1)}
FIXED_BOX_SIZE = (0.1, 0.004, 0.15)  # [m]
OPEN_WIDTH, CLOSED_WIDTH, LIFTED_HEIGHT = 0.12, 0.04, 0.12  # [m]
CLOSED_TIME, LIFTED_TIME, END_TIME = 1.5, 3.0, 4.0  # [s]; Drake holds until 5.5 s, the paper stops at 4 s
SIDES = {"left_bubble": -1, "right_bubble": 1}


def _mesh_path(*parts) -> Path:
    return Path(str(resources.files("ipcsim").joinpath("data", "demos", "meshes", *parts)))


def teddy_mesh_path() -> Path:
    """The shipped teddy tet mesh (``data/demos/meshes/teddy/teddy.vtk``: Drake's teddy.vtk scaled by 0.15) [m]."""
    return _mesh_path("teddy", "teddy.vtk")


def bubble_mesh_path() -> Path:
    """The shipped bubble tet mesh (``data/demos/meshes/drake/bubble.vtk``, Drake's WSG-50 bubble) [m]."""
    return _mesh_path("drake", "bubble.vtk")


def rpy_matrix(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """(3, 3): Drake's RollPitchYaw rotation Rz(yaw) Ry(pitch) Rx(roll) (angles [rad])."""
    def axis(k, a):
        c, s = np.cos(a), np.sin(a)
        i, j = [(1, 2), (2, 0), (0, 1)][k]
        m = np.eye(3)
        m[i, i], m[i, j], m[j, i], m[j, j] = c, -s, s, c
        return m
    return axis(2, yaw) @ axis(1, pitch) @ axis(0, roll)


def _posed(points, pose) -> np.ndarray:
    """points (n, 3) [m] in a frame whose pose ((roll, pitch, yaw), position) is given: (n, 3) [m] outside it."""
    return np.asarray(points, np.float64) @ rpy_matrix(*pose[0]).T + np.asarray(pose[1], np.float64)


def drake_to_ipcsim(points) -> np.ndarray:
    """Points (n, 3) or (3,) [m] in Drake's z-up world frame -> ipcsim's y-up frame (module docstring)."""
    return np.asarray(points, np.float64) @ DRAKE_TO_IPCSIM_ROTATION.T + DRAKE_TO_IPCSIM_TRANSLATION


def drake_vectors_to_ipcsim(vectors) -> np.ndarray:
    """Vectors (n, 3) or (3,) (forces [N], velocities [m/s], ...) in Drake's frame -> ipcsim's (rotation only)."""
    return np.asarray(vectors, np.float64) @ DRAKE_TO_IPCSIM_ROTATION.T


def drake_grasp_geometry() -> dict:
    """Drake's grasp at t = 0 in Drake's world frame, from the shipped meshes and Drake's poses (no pydrake).

    Returns {"teddy": (vertices (410, 3) [m], tets (1207, 4)), "left_bubble"/"right_bubble": (vertices (67, 3) [m],
    tets (212, 4)), "fixed": {"left_bubble"/"right_bubble": vertex indices (k,) fixed to the finger},
    "ground_z": DRAKE_GROUND_Z [m]}.
    """
    tv, tt = load_tet_mesh(teddy_mesh_path())
    bv, bt = load_tet_mesh(bubble_mesh_path())
    out = {"teddy": (_posed(tv, TEDDY_POSE), tt)}
    for name, pose in BUBBLE_POSES.items():
        out[name] = (_posed(bv, pose), bt.copy())
    out["fixed"] = {name: fixed_bubble_vertices(bv, name) for name in BUBBLE_POSES}
    out["ground_z"] = DRAKE_GROUND_Z
    return out


def fixed_bubble_vertices(bubble_vertices, name: str) -> np.ndarray:
    """Indices (k,) of the bubble mesh's vertices (67, 3) [m, its own frame] that Drake fixes to the finger: those
    inside ``Box(0.1, 0.004, 0.15)`` at ``FIXED_BOX_CENTRE`` once posed in the finger frame by ``BUBBLE_IN_FINGER``
    (the box's faces count as inside)."""
    p = _posed(bubble_vertices, BUBBLE_IN_FINGER[name]) - np.asarray(FIXED_BOX_CENTRE[name])
    return np.flatnonzero(np.all(np.abs(p) <= 0.5 * np.asarray(FIXED_BOX_SIZE) + 1e-12, axis=1))


def finger_translation(name: str, t) -> np.ndarray:
    """(len(t), 3) [m]: the finger's (and its fixed bubble vertices') displacement from t = 0 in Drake's frame at
    times t (k,) [s] (``ParallelGripperController``: close, lift, hold)."""
    t = np.atleast_1d(np.asarray(t, np.float64))
    close = np.clip(t / CLOSED_TIME, 0.0, 1.0) * 0.5 * (OPEN_WIDTH - CLOSED_WIDTH)  # the finger's inward travel
    lift = np.clip((t - CLOSED_TIME) / (LIFTED_TIME - CLOSED_TIME), 0.0, 1.0) * LIFTED_HEIGHT
    model = rpy_matrix(*GRIPPER_POSE[0])
    inward = model @ np.array([0.0, -SIDES[name], 0.0])  # model y: the left finger moves to +y
    up = model @ np.array([-1.0, 0.0, 0.0])  # the wrist joint's axis, expressed in the model frame
    return close[:, None] * inward + lift[:, None] * up


def finger_keyframes(name: str, end_time: float = END_TIME):
    """(times (K,) [s], translations (K, 3) [m] in ipcsim's frame) of a bubble's fixed vertices: the breakpoints of
    the piecewise-linear gripper motion up to end_time."""
    times = np.array([s for s in (0.0, CLOSED_TIME, LIFTED_TIME) if s < end_time] + [end_time])
    return times, drake_vectors_to_ipcsim(finger_translation(name, times))
