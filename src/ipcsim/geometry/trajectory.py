"""A rigid frame's recorded trajectory (a robot logger's CSV): sampled poses and gripper widths, interpolated in
time (positions and widths linearly, rotations by slerp), with the analytic velocity of that interpolation.

The math (``Trajectory``) takes arrays and does no file I/O; ``parse_trajectory_csv`` turns CSV text into one
(raising ``TrajectoryError``, one line naming the file, row and column), ``read_trajectory_csv`` reads a file.

File format: CSV, a header row naming the columns ``time, x, y, z, qw, qx, qy, qz, width`` in any order (other
columns are ignored; spaces around names and values are ignored), then one row per sample: time [s] strictly
increasing, position [m], unit quaternion (w first; |q| within 1e-3 of 1, normalised on reading), width [m] >= 0.
Any sampling rate; at least one row. Before the first sample the first pose is held, after the last the last.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np

COLUMNS = ("time", "x", "y", "z", "qw", "qx", "qy", "qz", "width")
UNIT_TOLERANCE = 1e-3  # accepted | |q| - 1 | of a sampled quaternion


class TrajectoryError(ValueError):
    """A trajectory file that cannot be used: one line ``FILE: row R, column C: what is wrong`` (rows numbered
    like the file's lines, as a spreadsheet shows them: the header is row 1)."""


def quaternion_matrix(q) -> np.ndarray:
    """Rotation matrix (3, 3) of a unit quaternion q (4,) = (w, x, y, z)."""
    w, x, y, z = (float(c) for c in q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def _quaternion_product(a, b) -> np.ndarray:
    """Hamilton product a b of quaternions (4,) (w, x, y, z)."""
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2])


def relative_rotation_vector(q0, q1) -> np.ndarray:
    """World-frame rotation vector (3,) [rad] w of the shortest rotation taking unit quaternion q0 to q1
    (R(q1) = exp([w]) R(q0)); the slerp from q0 to q1 is R(u) = exp(u [w]) R(q0), u in [0, 1]."""
    conj = np.array([q0[0], -q0[1], -q0[2], -q0[3]])
    r = _quaternion_product(q1, conj)
    if r[0] < 0.0:  # q and -q are the same rotation: take the short way
        r = -r
    s = float(np.linalg.norm(r[1:]))
    if s == 0.0:
        return np.zeros(3)
    return (2.0 * math.atan2(s, float(r[0])) / s) * r[1:]


def rotation_exp(w) -> np.ndarray:
    """Rodrigues rotation (3, 3) of a rotation vector w (3,) [rad]."""
    theta = float(np.linalg.norm(w))
    if theta == 0.0:
        return np.eye(3)
    k = np.asarray(w, np.float64) / theta
    kx = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + math.sin(theta) * kx + (1.0 - math.cos(theta)) * (kx @ kx)


@dataclass(frozen=True)
class Pose:
    """The frame at one time: rotation (3, 3), position (3,) [m] and gripper width [m]."""

    rotation: np.ndarray
    position: np.ndarray
    width: float


@dataclass(frozen=True)
class Velocity:
    """The frame's velocity at one time: linear (3,) [m/s] of its origin, angular (3,) [rad/s] in world
    coordinates, and the width rate [m/s]."""

    linear: np.ndarray
    angular: np.ndarray
    width_rate: float


class Trajectory:
    """Sampled poses interpolated in time: positions and widths linearly, rotations by slerp (constant angular
    velocity between samples, the short way round).

    Args:
        times: (k,) [s], strictly increasing, finite, k >= 1.
        positions: (k, 3) [m]; quaternions: (k, 4) (w, x, y, z), unit within 1e-3 (normalised here);
        widths: (k,) [m] >= 0.
    Raises ValueError naming the first bad sample (0-based index).
    """

    def __init__(self, times, positions, quaternions, widths):
        self.times = np.asarray(times, np.float64).reshape(-1)
        self.positions = np.asarray(positions, np.float64).reshape(-1, 3)
        q = np.asarray(quaternions, np.float64).reshape(-1, 4)
        self.widths = np.asarray(widths, np.float64).reshape(-1)
        k = len(self.times)
        if k == 0 or len(self.positions) != k or len(q) != k or len(self.widths) != k:
            raise ValueError(f"a trajectory needs k >= 1 samples with (k,) times, (k, 3) positions, (k, 4) "
                             f"quaternions and (k,) widths, got {k}, {len(self.positions)}, {len(q)}, "
                             f"{len(self.widths)}")
        for name, a in (("time", self.times), ("position", self.positions), ("quaternion", q),
                        ("width", self.widths)):
            bad = ~np.isfinite(a.reshape(k, -1)).all(axis=1)
            if bad.any():
                raise ValueError(f"sample {int(np.flatnonzero(bad)[0])}: non-finite {name}")
        step = np.diff(self.times)
        if np.any(step <= 0.0):
            raise ValueError(f"sample {int(np.flatnonzero(step <= 0)[0]) + 1}: time not after the previous one")
        norms = np.linalg.norm(q, axis=1)
        if np.any(np.abs(norms - 1.0) > UNIT_TOLERANCE):
            i = int(np.flatnonzero(np.abs(norms - 1.0) > UNIT_TOLERANCE)[0])
            raise ValueError(f"sample {i}: quaternion norm {norms[i]:.6g}, not 1 within {UNIT_TOLERANCE:g}")
        if np.any(self.widths < 0.0):
            raise ValueError(f"sample {int(np.flatnonzero(self.widths < 0)[0])}: negative width")
        self.quaternions = q / norms[:, None]
        self.rotations = np.stack([quaternion_matrix(r) for r in self.quaternions])
        #: (k - 1, 3) world rotation vectors [rad] of each segment: R_{i+1} = exp([w_i]) R_i
        self.segment_rotations = np.array([relative_rotation_vector(a, b) for a, b in
                                           zip(self.quaternions[:-1], self.quaternions[1:])]).reshape(-1, 3)

    @property
    def time_range(self) -> tuple[float, float]:
        """(first, last) sample time [s]."""
        return float(self.times[0]), float(self.times[-1])

    def _segment(self, t: float) -> tuple[int, float]:
        """(segment i, fraction u in [0, 1]) of time t; i = -1 outside the sampled range (held pose)."""
        ts = self.times
        if len(ts) == 1 or t <= ts[0] or t >= ts[-1]:
            return -1, 0.0
        i = int(np.searchsorted(ts, t, side="right")) - 1
        return i, (t - ts[i]) / (ts[i + 1] - ts[i])

    def pose(self, t: float) -> Pose:
        """The interpolated pose at time t [s]: exact at the samples, held outside [times[0], times[-1]]."""
        i, u = self._segment(float(t))
        if i < 0:
            j = 0 if float(t) <= self.times[0] else len(self.times) - 1
            return Pose(self.rotations[j].copy(), self.positions[j].copy(), float(self.widths[j]))
        rot = rotation_exp(u * self.segment_rotations[i]) @ self.rotations[i]
        pos = (1.0 - u) * self.positions[i] + u * self.positions[i + 1]
        return Pose(rot, pos, float((1.0 - u) * self.widths[i] + u * self.widths[i + 1]))

    def velocity(self, t: float) -> Velocity:
        """The analytic time derivative of ``pose`` at t [s] (piecewise constant: at a sample, the segment that
        starts there; zero outside the sampled range)."""
        i, _ = self._segment(float(t))
        if i < 0 and len(self.times) > 1 and float(t) == self.times[0]:
            i = 0
        if i < 0:
            return Velocity(np.zeros(3), np.zeros(3), 0.0)
        dt = self.times[i + 1] - self.times[i]
        return Velocity((self.positions[i + 1] - self.positions[i]) / dt, self.segment_rotations[i] / dt,
                        float((self.widths[i + 1] - self.widths[i]) / dt))


def _fail(source: str, line: int, column: str | None, message: str) -> TrajectoryError:
    where = f"row {line}" + (f", column {column!r}" if column else "")
    return TrajectoryError(f"{source}: {where}: {message}")


def _header(text_line: str, source: str) -> dict[str, int]:
    names = [c.strip().lower() for c in text_line.split(",")]
    missing = [c for c in COLUMNS if c not in names]
    if missing:
        raise _fail(source, 1, missing[0], f"missing column (the header must name {', '.join(COLUMNS)}; got "
                                           f"{', '.join(n for n in names if n) or 'nothing'})")
    for c in COLUMNS:
        if names.count(c) > 1:
            raise _fail(source, 1, c, "column named twice in the header")
    return {c: names.index(c) for c in COLUMNS}


def _row(fields: list[str], where: dict[str, int], line: int, source: str) -> list[float]:
    out = []
    for c in COLUMNS:
        text = fields[where[c]].strip()
        try:
            value = float(text)
        except ValueError:
            raise _fail(source, line, c, f"not a number: {text!r}") from None
        if not math.isfinite(value):
            raise _fail(source, line, c, f"expected a finite number, got {text!r}")
        out.append(value)
    return out


def parse_trajectory_csv(text: str, source: str = "<trajectory>") -> Trajectory:
    """A Trajectory from CSV text (format in the module docstring). Raises TrajectoryError naming source, the
    row (the file's line number: the header is row 1) and the column of the first problem."""
    lines = text.splitlines()
    if not lines or not lines[0].strip():
        raise _fail(source, 1, None, f"expected a header naming the columns {', '.join(COLUMNS)}")
    where = _header(lines[0], source)
    rows, line_of = [], []
    for n, raw in enumerate(lines[1:], start=2):
        if not raw.strip():
            continue
        fields = raw.split(",")
        if len(fields) < max(where.values()) + 1:
            raise _fail(source, n, None, f"a row that does not parse: {len(fields)} fields, the header has "
                                         f"{len(lines[0].split(','))}")
        rows.append(_row(fields, where, n, source))
        line_of.append(n)
    if not rows:
        raise _fail(source, 2, None, "no sample rows after the header")
    a = np.asarray(rows, np.float64)
    for k in range(1, len(a)):
        if not a[k, 0] > a[k - 1, 0]:
            raise _fail(source, line_of[k], "time", f"time {a[k, 0]:g} s is not after the previous row's "
                                                    f"{a[k - 1, 0]:g} s (times must increase strictly)")
    norms = np.linalg.norm(a[:, 4:8], axis=1)
    for k in np.flatnonzero(np.abs(norms - 1.0) > UNIT_TOLERANCE):
        raise _fail(source, line_of[k], "qw", f"quaternion (qw, qx, qy, qz) has norm {norms[k]:.6g}, not 1 "
                                              f"within {UNIT_TOLERANCE:g}")
    for k in np.flatnonzero(a[:, 8] < 0.0):
        raise _fail(source, line_of[k], "width", f"negative width {a[k, 8]:g} m")
    return Trajectory(a[:, 0], a[:, 1:4], a[:, 4:8], a[:, 8])


def read_trajectory_csv(path) -> Trajectory:
    """Read a trajectory CSV file (see ``parse_trajectory_csv``); the error messages name the path as given."""
    source = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as exc:
        raise TrajectoryError(f"{source}: cannot read trajectory file: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise TrajectoryError(f"{source}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return parse_trajectory_csv(text, source)
