"""Axis-aligned bounding boxes of collision primitives, static or swept along a linear trajectory.

A box is a pair of arrays (lo, hi), each (n, 3) float64 [m]. Vertex boxes are inflated by the
inflation radius; edge and face boxes are unions of their vertices' boxes (so they are inflated too).
"""
from __future__ import annotations

import numpy as np


def vertex_boxes(x0: np.ndarray, x1: np.ndarray | None, inflation_radius: float) -> tuple[np.ndarray, np.ndarray]:
    """Boxes of the vertices, (lo, hi) each (n_vertices, 3) float64 [m].

    Args:
        x0: (n_vertices, 3) [m], positions at t = 0.
        x1: (n_vertices, 3) [m], positions at t = 1 (the box then holds the segment x0 -> x1), or None.
        inflation_radius: [m] >= 0, added on every side.
    """
    if x1 is None:
        lo, hi = x0 - inflation_radius, x0 + inflation_radius
    else:
        lo = np.minimum(x0, x1) - inflation_radius
        hi = np.maximum(x0, x1) + inflation_radius
    return np.ascontiguousarray(lo), np.ascontiguousarray(hi)


def simplex_boxes(vlo: np.ndarray, vhi: np.ndarray, simplices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Boxes of edges or faces: unions of their vertex boxes, (lo, hi) each (n_simplices, 3) [m].

    Args:
        vlo, vhi: (n_vertices, 3) [m], vertex boxes.
        simplices: (n_simplices, k) int64 vertex ids (k = 2 for edges, 3 for faces).
    """
    if len(simplices) == 0:
        return np.zeros((0, 3)), np.zeros((0, 3))
    lo = vlo[simplices[:, 0]].copy()
    hi = vhi[simplices[:, 0]].copy()
    for k in range(1, simplices.shape[1]):
        np.minimum(lo, vlo[simplices[:, k]], out=lo)
        np.maximum(hi, vhi[simplices[:, k]], out=hi)
    return lo, hi


def plane_vertex_mask(
    vlo: np.ndarray, vhi: np.ndarray, origin: np.ndarray, normal: np.ndarray, inflation_radius: float
) -> np.ndarray:
    """(n_vertices,) bool: vertex boxes that come within ``inflation_radius`` [m] of a plane.

    The box [vlo, vhi] meets the slab {x : |dot(x - origin, normal)| <= inflation_radius}. ``normal`` is
    a unit (3,) vector, ``origin`` (3,) [m].
    """
    center = 0.5 * (vlo + vhi)
    half = 0.5 * (vhi - vlo)
    d_center = (center - origin) @ normal
    spread = half @ np.abs(normal)
    return (d_center - spread <= inflation_radius) & (d_center + spread >= -inflation_radius)
