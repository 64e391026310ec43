"""Placing meshes in the world (scale, rotate, translate) and resolving vertex selections of scenes."""
from __future__ import annotations

import math

import numpy as np


def rotation_from_degrees(angles) -> np.ndarray:
    """Rotation matrix (3, 3) for angles (3,) [deg] about x, y, z: R = Rz(rz) @ Ry(ry) @ Rx(rx)
    (x first, then y, then z, all about the fixed world axes)."""
    rx, ry, rz = (math.radians(float(a)) for a in angles)
    cx, sx, cy, sy, cz, sz = math.cos(rx), math.sin(rx), math.cos(ry), math.sin(ry), math.cos(rz), math.sin(rz)
    r_x = np.array([[1.0, 0.0, 0.0], [0.0, cx, -sx], [0.0, sx, cx]])
    r_y = np.array([[cy, 0.0, sy], [0.0, 1.0, 0.0], [-sy, 0.0, cy]])
    r_z = np.array([[cz, -sz, 0.0], [sz, cz, 0.0], [0.0, 0.0, 1.0]])
    return r_z @ r_y @ r_x


def transform_parts(transform: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(scale (3,), rotation (3, 3), translation (3,) [m]) of a scene transform dict (keys scale: number or
    3-list, rotation: 3 angles [deg] or a 3x3 matrix, translation: 3-list; missing keys are the identity)."""
    scale = transform.get("scale", 1.0)
    s = np.full(3, float(scale)) if isinstance(scale, (int, float)) else np.asarray(scale, np.float64)
    rot = transform.get("rotation", [0.0, 0.0, 0.0])
    r = np.asarray(rot, np.float64) if isinstance(rot[0], list) else rotation_from_degrees(rot)
    t = np.asarray(transform.get("translation", [0.0, 0.0, 0.0]), np.float64)
    return s, r, t


def place(vertices: np.ndarray, transform: dict) -> np.ndarray:
    """World positions (n, 3) [m] of model-space vertices (n, 3): scaled per axis, rotated, then translated,
    x = R (S v) + t."""
    s, r, t = transform_parts(transform)
    return (np.asarray(vertices, np.float64) * s) @ r.T + t


def world_box(box: dict, placed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(min (3,), max (3,)) [m] of a selection box dict {min, max, relative} on a placed body (n, 3) [m].

    relative: min/max are fractions of the body's axis-aligned bounding box (0 = its min corner, 1 = its max
    corner, values outside [0, 1] reach beyond it); otherwise they are world coordinates [m].
    """
    lo, hi = np.asarray(box["min"], np.float64), np.asarray(box["max"], np.float64)
    if box.get("relative", True):
        bmin, bmax = placed.min(axis=0), placed.max(axis=0)
        lo, hi = bmin + lo * (bmax - bmin), bmin + hi * (bmax - bmin)
    return lo, hi


def select_in_box(placed: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Indices (k,) int64 of the vertices of placed (n, 3) [m] inside the closed box [lo, hi]."""
    return np.flatnonzero(np.all((placed >= lo) & (placed <= hi), axis=1))


def bbox_diagonal(point_sets) -> float:
    """Diagonal length [m] of the axis-aligned bounding box of several (n_i, 3) point arrays together."""
    pts = [p for p in point_sets if len(p)]
    if not pts:
        return 0.0
    lo = np.min([p.min(axis=0) for p in pts], axis=0)
    hi = np.max([p.max(axis=0) for p in pts], axis=0)
    return float(np.linalg.norm(hi - lo))
