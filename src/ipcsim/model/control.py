"""Control: prescribed motions (kinematic obstacles, Dirichlet sets) and Neumann loads of a scene.

Every node of a scene lives in one position array q (n, 3) [m]: simulated nodes and obstacle vertices alike.
A node is *prescribed* during a step when it belongs to an obstacle (static or kinematic), is held fixed, or
belongs to a Dirichlet set active during the step; all other node coordinates are the unknowns. Prescribed
nodes move from their start-of-step positions to their targets along straight lines together with the unknowns
(``ipcsim.solvers.newton``), so CCD sees every trajectory as linear. The map from nodes to the collision
surface is ``Model.surface_map`` (``ipcsim.geometry.surface_map``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np


def rotation_matrix(rotation_vector) -> np.ndarray:
    """Rodrigues rotation (3, 3) for a rotation vector (3,) [rad] (axis times angle)."""
    w = np.asarray(rotation_vector, dtype=np.float64).reshape(3)
    theta = float(np.linalg.norm(w))
    if theta == 0.0:
        return np.eye(3)
    k = w / theta
    kx = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + math.sin(theta) * kx + (1.0 - math.cos(theta)) * (kx @ kx)


def _time_range(time_range) -> tuple[float, float]:
    t0, t1 = (float(t) for t in time_range)
    if not (t0 <= t1) or math.isnan(t0) or math.isnan(t1):
        raise ValueError(f"time_range must be (start, end) with start <= end [s], got {time_range}")
    return t0, t1


@dataclass
class PrescribedMotion:
    """A rigid motion imposed on a vertex set during a time range.

    Attributes:
        vertices: (k,) int64, full-vertex indices.
        linear_velocity: (3,) [m/s], velocity of the rotation center.
        angular_velocity: (3,) [rad/s], about the moving center.
        center: (3,) [m], rotation center at time time_range[0].
        time_range: (start, end) [s]; outside it the vertices are not moved by this motion.
        obstacle: True for obstacle vertices (always prescribed, static outside the range); False for
            Dirichlet sets of simulated bodies (free outside the range).
    """

    vertices: np.ndarray
    linear_velocity: np.ndarray
    angular_velocity: np.ndarray
    center: np.ndarray
    time_range: tuple[float, float] = (0.0, math.inf)
    obstacle: bool = False

    def active_time(self, t0: float, t1: float) -> float:
        """Length [s] of [t0, t1] inside the time range."""
        a, b = self.time_range
        return max(0.0, min(t1, b) - max(t0, a))

    def is_active(self, t0: float, t1: float) -> bool:
        """True when the motion prescribes its vertices during the step [t0, t1] [s]."""
        a, b = self.time_range
        # both ends with a round-off tolerance: the solver accumulates t += h, which drifts off the step grid
        return self.obstacle or (a <= t0 + 1e-12 * max(1.0, abs(a)) and t1 <= b + 1e-12 * max(1.0, abs(b)))

    def center_at(self, t: float) -> np.ndarray:
        """Rotation center (3,) [m] at time t [s]."""
        a, _ = self.time_range
        return self.center + self.linear_velocity * self.active_time(a, t) if t > a else self.center.copy()

    def advance(self, x: np.ndarray, t0: float, t1: float) -> np.ndarray:
        """Positions (k, 3) [m] at t1 of the vertices that are at x (k, 3) at t0."""
        tau = self.active_time(t0, t1)
        if tau == 0.0:
            return x.copy()
        c0 = self.center_at(t0)
        r = rotation_matrix(self.angular_velocity * tau)
        return c0 + self.linear_velocity * tau + (x - c0) @ r.T


def rotation_xyz(angles) -> np.ndarray:
    """IPC's rotation (3, 3) for angles (3,) [rad]: Rx(ax) @ Ry(ay) @ Rz(az) (Eigen AngleAxis product)."""
    ax, ay, az = (float(a) for a in np.asarray(angles, dtype=np.float64).reshape(3))
    cx, sx, cy, sy, cz, sz = math.cos(ax), math.sin(ax), math.cos(ay), math.sin(ay), math.cos(az), math.sin(az)
    r_x = np.array([[1.0, 0.0, 0.0], [0.0, cx, -sx], [0.0, sx, cx]])
    r_y = np.array([[cy, 0.0, sy], [0.0, 1.0, 0.0], [-sy, 0.0, cy]])
    r_z = np.array([[cz, -sz, 0.0], [sz, cz, 0.0], [0.0, 0.0, 1.0]])
    return r_x @ r_y @ r_z


class BoundingBoxStepMotion(PrescribedMotion):
    """IPC 2020's scripted rigid motion (``angularVelocity``/``linearVelocity`` shapes, DBC sets), step by step:
    each step of length tau [s] rotates the vertices by Rx(wx tau) Ry(wy tau) Rz(wz tau) about the center of
    their axis-aligned bounding box at the step start, then translates them by linear_velocity * tau. The
    center therefore follows the box (it drifts for shapes without central symmetry) and the motion depends on
    the step size, exactly as in IPC's AnimScripter. ``center`` holds the box center at construction (info)."""

    def advance(self, x: np.ndarray, t0: float, t1: float) -> np.ndarray:
        """Positions (k, 3) [m] at t1 of the vertices that are at x (k, 3) at t0."""
        tau = self.active_time(t0, t1)
        if tau == 0.0:
            return x.copy()
        c = 0.5 * (x.min(axis=0) + x.max(axis=0))
        r = rotation_xyz(self.angular_velocity * tau)
        return c + self.linear_velocity * tau + (x - c) @ r.T


class KeyframedMotion:
    """Vertices following per-frame positions, linearly interpolated in time (a kinematic obstacle whose shape
    may change, e.g. IPC's ``meshSeq``). Same interface as ``PrescribedMotion`` for ``Control``.

    Args:
        vertices: (k,) int, full-vertex indices.
        times: (K,) [s], strictly increasing frame times, K >= 1.
        positions: (K, k, 3) [m], the vertices' world positions at each frame time.
    Before times[0] the vertices hold frame 0, after times[-1] the last frame. ``obstacle`` is always True
    (the vertices are prescribed in every step).
    """

    obstacle = True

    def __init__(self, vertices, times, positions):
        self.vertices = np.asarray(vertices, np.int64).reshape(-1)
        self.times = np.asarray(times, np.float64).reshape(-1)
        self.positions = np.asarray(positions, np.float64)
        k, n_frames = len(self.vertices), len(self.times)
        if n_frames == 0 or not np.all(np.isfinite(self.times)) or np.any(np.diff(self.times) <= 0):
            raise ValueError(f"keyframe times must be a non-empty, finite, strictly increasing (K,) array [s], "
                             f"got {self.times.tolist()}")
        if self.positions.shape != (n_frames, k, 3) or not np.all(np.isfinite(self.positions)):
            raise ValueError(f"keyframe positions must be a finite ({n_frames}, {k}, 3) array [m], "
                             f"got shape {self.positions.shape}")

    @property
    def time_range(self) -> tuple[float, float]:
        """(first frame time, last frame time) [s]: the vertices move only inside it."""
        return float(self.times[0]), float(self.times[-1])

    def is_active(self, t0: float, t1: float) -> bool:
        """Always True: keyframed vertices are prescribed in every step (held outside the frame range)."""
        return True

    def positions_at(self, t: float) -> np.ndarray:
        """World positions (k, 3) [m] at time t [s] (linear between frames, held outside)."""
        ts = self.times
        if t <= ts[0]:
            return self.positions[0].copy()
        if t >= ts[-1]:
            return self.positions[-1].copy()
        i = int(np.searchsorted(ts, t, side="right")) - 1
        w = (t - ts[i]) / (ts[i + 1] - ts[i])
        return (1.0 - w) * self.positions[i] + w * self.positions[i + 1]

    def advance(self, x: np.ndarray, t0: float, t1: float) -> np.ndarray:
        """Positions (k, 3) [m] at t1 (the keyframes decide; x (k, 3) at t0 is ignored)."""
        return self.positions_at(t1)


@dataclass
class NeumannLoad:
    """A force [N] applied to each vertex of a set during a time range [s]: ``force`` is (3,) (the same on
    every vertex) or (k, 3) (one row per vertex, e.g. lumped mass x acceleration)."""

    vertices: np.ndarray
    force: np.ndarray
    time_range: tuple[float, float] = (0.0, math.inf)

    def is_active(self, t: float) -> bool:
        """True when the load acts at time t [s] (the end of the step, implicit Euler)."""
        a, b = self.time_range
        return a <= t <= b


@dataclass
class Control:
    """Prescribed motions and loads of a scene (built by ``ModelBuilder``)."""

    motions: list[PrescribedMotion] = field(default_factory=list)
    loads: list[NeumannLoad] = field(default_factory=list)

    def prescribed_mask(self, base: np.ndarray, t0: float, t1: float) -> np.ndarray:
        """(n,) bool: base (fixed and obstacle vertices) plus the Dirichlet sets active during [t0, t1]."""
        mask = np.asarray(base, bool).copy()
        for m in self.motions:
            if m.is_active(t0, t1):
                mask[m.vertices] = True
        return mask

    def targets(self, x: np.ndarray, t0: float, t1: float) -> np.ndarray:
        """Full positions (n, 3) [m] at t1: prescribed vertices moved by their motions, the rest copied."""
        out = np.array(x, dtype=np.float64, copy=True)
        for m in self.motions:
            if m.is_active(t0, t1):
                out[m.vertices] = m.advance(out[m.vertices], t0, t1)
        return out

    def external_forces(self, n_vertices: int, t: float) -> np.ndarray:
        """(n, 3) [N] Neumann forces acting at time t [s]."""
        f = np.zeros((n_vertices, 3))
        for load in self.loads:
            if load.is_active(t):
                f[load.vertices] += load.force
        return f
