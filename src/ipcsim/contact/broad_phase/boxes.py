"""Axis-aligned bounding boxes of collision primitives, static or swept along a linear trajectory.

A box is a pair of arrays (lo, hi), each (n, 3) float64 [m]. Vertex boxes are inflated by the
inflation radius; edge and face boxes are unions of their vertices' boxes (so they are inflated too).
"""
from __future__ import annotations

import numba as nb
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


@nb.njit(cache=True)
def vertex_boxes6(x0, x1, inflation_radius):
    """Vertex boxes as one (n, 6) float64 array [lo_x, lo_y, lo_z, hi_x, hi_y, hi_z] [m] (the same
    numbers as ``vertex_boxes``).

    Args:
        x0, x1: (n, 3) float64 [m], positions at t = 0 and t = 1 (pass x0 twice for static boxes).
        inflation_radius: [m], added on every side.
    """
    n = x0.shape[0]
    box = np.empty((n, 6), np.float64)
    for i in range(n):
        for a in range(3):
            box[i, a] = min(x0[i, a], x1[i, a]) - inflation_radius
            box[i, 3 + a] = max(x0[i, a], x1[i, a]) + inflation_radius
    return box


@nb.njit(cache=True)
def boxes_inside(inner, outer) -> bool:
    """Whether every (n, 6) box of ``inner`` lies inside the box of the same row of ``outer`` [m] (both as
    ``vertex_boxes6`` writes them): lo >= outer lo and hi <= outer hi on every axis; False on a NaN."""
    for i in range(inner.shape[0]):
        for a in range(3):
            if not (inner[i, a] >= outer[i, a] and inner[i, 3 + a] <= outer[i, 3 + a]):
                return False
    return True


@nb.njit(cache=True)
def boxes_inside_shifted(inner, outer) -> bool:
    """Whether one translation d (3,) [m] moves every (n, 6) box of ``inner`` inside the box of the same row of
    ``outer`` (both as ``vertex_boxes6`` writes them): per axis a, d_a must lie in [inner hi - outer hi, inner lo -
    outer lo] for every row, and these intervals must meet. d = 0 fitting is ``boxes_inside``. False on a NaN.

    Why: box overlap is invariant under a common translation, so where one exists, every pair of ``inner`` boxes
    that overlap also overlaps in ``outer`` (a face's or edge's box, the union of its vertices', moves with them):
    pairs found in ``outer`` then hold those of ``inner`` (planes excepted: they do not move)."""
    for a in range(3):
        lo, hi = -np.inf, np.inf
        for i in range(inner.shape[0]):
            lo = max(lo, inner[i, 3 + a] - outer[i, 3 + a])
            hi = min(hi, inner[i, a] - outer[i, a])
        if not lo <= hi:
            return False
    return True


@nb.njit(cache=True)
def simplex_boxes6(vbox, simplices):
    """Edge or face boxes, (m, 6) float64 [m]: unions of the (n, 6) vertex boxes ``vbox`` of each row
    of ``simplices`` ((m, k) int64 vertex ids); the same numbers as ``simplex_boxes``."""
    m, k = simplices.shape
    box = np.empty((m, 6), np.float64)
    for i in range(m):
        v = simplices[i, 0]
        for a in range(6):
            box[i, a] = vbox[v, a]
        for c in range(1, k):
            v = simplices[i, c]
            for a in range(3):
                box[i, a] = min(box[i, a], vbox[v, a])
                box[i, 3 + a] = max(box[i, 3 + a], vbox[v, 3 + a])
    return box


@nb.njit(cache=True, inline="always")
def boxes_meet(a, i, b, j) -> bool:
    """Whether box a[i] and box b[j] ((n, 6) rows [lo_x, lo_y, lo_z, hi_x, hi_y, hi_z] [m]) overlap or touch."""
    return (a[i, 0] <= b[j, 3] and b[j, 0] <= a[i, 3] and a[i, 1] <= b[j, 4] and b[j, 1] <= a[i, 4]
            and a[i, 2] <= b[j, 5] and b[j, 2] <= a[i, 5])


@nb.njit(cache=True)
def body_boxes6(vbox, body, n_bodies):
    """(n_bodies, 6) float64 [m]: the union of the (n, 6) vertex boxes ``vbox`` of each body (``body`` (n,) int64
    ids in [0, n_bodies)); a body without vertices gets an empty box (lo = +inf, hi = -inf)."""
    out = np.empty((n_bodies, 6), np.float64)
    out[:, :3] = np.inf
    out[:, 3:] = -np.inf
    for i in range(vbox.shape[0]):
        b = body[i]
        for a in range(3):
            out[b, a] = min(out[b, a], vbox[i, a])
            out[b, 3 + a] = max(out[b, 3 + a], vbox[i, 3 + a])
    return out


@nb.njit(cache=True)
def near_other_bodies(box, owner, keep, bbox):
    """(m,) bool: primitive boxes ``box`` (m, 6) [m] of bodies ``owner`` (m,) int64 that are kept (``keep``
    (n_bodies,) bool: all of that body's primitives) or overlap the box ``bbox`` (n_bodies, 6) of another body.
    A primitive of a body without self contact can pair only with another body's primitive, whose box lies in
    that body's box: the others can be left out of a join without losing a pair."""
    m, nb_ = box.shape[0], bbox.shape[0]
    out = np.zeros(m, np.bool_)
    for i in range(m):
        a = owner[i]
        if keep[a]:
            out[i] = True
            continue
        for b in range(nb_):
            if b != a and boxes_meet(box, i, bbox, b):
                out[i] = True
                break
    return out
