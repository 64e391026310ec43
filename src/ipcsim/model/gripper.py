"""A gripper: a rigid frame following a recorded ``Trajectory`` (``ipcsim.geometry.trajectory``) that carries
attachments (Dirichlet vertex sets of bodies, whole bodies, kinematic obstacles) and opens its fingers along its
axis by the trajectory's width.

An attached node with world rest position x_rest (at the scene's start, t = 0) and finger side s (-1 or +1 for
the two fingers, 0 for the frame itself) follows

    x(t) = R(t) (X + s w(t) / 2 a) + p(t),    X = R(0)^T (x_rest - p(0)) - s w(0) / 2 a,

with (R, p, w) the trajectory's interpolated pose and width and a the unit opening axis in the gripper frame. At
t = 0 every node stays where it was placed. The solver moves prescribed nodes along straight lines from their
start-of-step to their end-of-step positions, and the integrator's velocity of a prescribed node is
(x(t1) - x(t0)) / h: the finite difference of the interpolated pose over the step. ``GripperMotion.velocities``
gives the analytic derivative (used for the initial velocity of the attached nodes).
"""
from __future__ import annotations

import numpy as np

from ..geometry.trajectory import Trajectory

SIDES = (-1, 0, 1)


def _unit_axis(axis) -> np.ndarray:
    a = np.asarray(axis, np.float64).reshape(-1)
    n = float(np.linalg.norm(a)) if a.shape == (3,) and np.all(np.isfinite(a)) else 0.0
    if n == 0.0:
        raise ValueError(f"gripper axis must be a finite nonzero 3-vector, got {axis!r}")
    return a / n


class GripperMotion:
    """Nodes carried by a gripper frame (same interface as ``control.KeyframedMotion`` for ``Control``).

    Args:
        vertices: (k,) int, full-node indices.
        rest: (k, 3) [m], their world positions at t = 0.
        trajectory: the gripper frame's ``Trajectory``.
        side: -1 / +1 (a finger moving by -w/2 / +w/2 along the axis) or 0 (the frame itself).
        axis: (3,) the opening axis in the gripper frame (normalised).
    Always prescribed (``obstacle`` True): before the first sample the first pose holds, after the last the last.
    """

    obstacle = True

    def __init__(self, vertices, rest, trajectory: Trajectory, side: int = 0, axis=(1.0, 0.0, 0.0)):
        if side not in SIDES:
            raise ValueError(f"gripper attachment side must be -1, 0 or +1, got {side!r}")
        self.vertices = np.asarray(vertices, np.int64).reshape(-1)
        rest = np.asarray(rest, np.float64).reshape(-1, 3)
        if len(rest) != len(self.vertices):
            raise ValueError(f"gripper attachment: {len(rest)} rest positions for {len(self.vertices)} vertices")
        self.trajectory, self.side, self.axis = trajectory, int(side), _unit_axis(axis)
        p0 = trajectory.pose(0.0)
        #: (k, 3) [m], the nodes in the gripper frame with the fingers closed (width 0)
        self.local = (rest - p0.position) @ p0.rotation - self.side * 0.5 * p0.width * self.axis

    @property
    def time_range(self) -> tuple[float, float]:
        """The trajectory's sampled range [s]: the nodes move only inside it."""
        return self.trajectory.time_range

    def is_active(self, t0: float, t1: float) -> bool:
        """Always True: the nodes are prescribed in every step."""
        return True

    def positions_at(self, t: float) -> np.ndarray:
        """World positions (k, 3) [m] at time t [s]."""
        pose = self.trajectory.pose(t)
        return (self.local + self.side * 0.5 * pose.width * self.axis) @ pose.rotation.T + pose.position

    def velocities(self, t: float) -> np.ndarray:
        """Analytic velocities (k, 3) [m/s] at time t [s]: v = p' + omega x (x - p) + R s w' / 2 a."""
        pose, vel = self.trajectory.pose(t), self.trajectory.velocity(t)
        x = self.positions_at(t)
        return (vel.linear + np.cross(vel.angular, x - pose.position)
                + pose.rotation @ (self.side * 0.5 * vel.width_rate * self.axis))

    def advance(self, x: np.ndarray, t0: float, t1: float) -> np.ndarray:
        """Positions (k, 3) [m] at t1 (the trajectory decides; x (k, 3) at t0 is ignored)."""
        return self.positions_at(t1)


def gripper_motions(gripper: dict, node_offsets, obstacle_offsets, x: np.ndarray) -> list[GripperMotion]:
    """The motions of one gripper added by ``ModelBuilder.add_gripper`` (its resolved dict: trajectory, axis,
    attachments as (kind "body"/"obstacle", index, local node indices (m,) or None for all, side)); node_offsets
    / obstacle_offsets: (n_bodies + 1,) / (n_obstacles + 1,) full-node offsets; x (n, 3) [m] the rest nodes."""
    out = []
    for kind, index, local, side in gripper["attachments"]:
        offsets = node_offsets if kind == "body" else obstacle_offsets
        start, stop = int(offsets[index]), int(offsets[index + 1])
        idx = np.arange(start, stop) if local is None else start + np.asarray(local, np.int64)
        out.append(GripperMotion(idx, x[idx], gripper["trajectory"], side, gripper["axis"]))
    return out


def check_disjoint(motions_of: list[list[GripperMotion]]) -> None:
    """Raise ValueError when a node is carried by two attachments (of one gripper or of two): its motion would be
    ambiguous. motions_of[g][j]: attachment j of gripper g."""
    owner: dict[int, tuple[int, int]] = {}
    for g, motions in enumerate(motions_of):
        for j, m in enumerate(motions):
            for v in m.vertices.tolist():
                if v in owner and owner[v] != (g, j):
                    a, b = owner[v]
                    raise ValueError(f"add_gripper: gripper {g}, attachment {j}: node {v} is also carried by "
                                     f"gripper {a}, attachment {b}")
                owner[v] = (g, j)
