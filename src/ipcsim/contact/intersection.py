"""Exact edge-triangle intersection tests of a collision mesh (are the bodies interpenetrating?).

An edge (closed segment) and a face (closed triangle) that share no vertex intersect when they have
a point in common; touching counts (an endpoint on the triangle, the segment through a triangle
edge, coplanar overlaps). The answer is exact for floating-point input:

1. the broad phase (``ipcsim.contact.broad_phase``, boxes not inflated) lists edge-face pairs with
   overlapping boxes (exact: min/max are exact);
2. a Numba filter evaluates the orientation predicates orient3d in floating point with Shewchuk's
   static error bound (o3derrboundA); a pair whose every needed sign is certain is decided there;
3. a pair left uncertain there (touching, coplanar: flat meshes resting on each other produce
   thousands) is declared disjoint when, seen along a coordinate axis, a triangle edge's line or the
   segment's line certainly separates the two projections (orient2d with Shewchuk's ccwerrboundA):
   a common 3D point would project to a common 2D point;
4. the remaining pairs (touching, coplanar overlaps, degenerate triangles) are decided again
   with exact rational arithmetic (``fractions.Fraction``) in Python.

Unlike ipc-toolkit's ``is_edge_intersecting_triangle`` (which reports every coplanar pair as
intersecting), a coplanar edge far from the triangle in their common plane is not an intersection.
"""
from __future__ import annotations

from fractions import Fraction

import numba as nb
import numpy as np

from .broad_phase.boxes import simplex_boxes, vertex_boxes
from .broad_phase.cell_join import cell_pairs

_EPS = 2.0**-53
_O3D_ERRBOUND = (7.0 + 56.0 * _EPS) * _EPS  # Shewchuk, "Adaptive precision floating-point ..." (1997)
_O2D_ERRBOUND = (3.0 + 16.0 * _EPS) * _EPS  # same paper, ccwerrboundA


class IntersectionError(ValueError):
    """The collision mesh intersects itself; the message names the first pair found."""


# ------------------------------------------------------------------------------------ float filter
@nb.njit(cache=True, inline="always")
def _certain_sign(det, bound):
    """+1 / -1 when |det| exceeds the rounding-error bound, else 2 (uncertain)."""
    if det > bound:
        return 1
    if det < -bound:
        return -1
    return 2


@nb.njit(cache=True)
def orient3d_filtered(a, b, c, d):
    """Sign of det[a - d, b - d, c - d] (+1, -1, 0) when certain in floating point, else 2.

    a, b, c, d: (3,) float64 [m]. Positive when d lies below the plane through a, b, c seen with
    a, b, c counter-clockwise (Shewchuk's convention).
    """
    adx, ady, adz = a[0] - d[0], a[1] - d[1], a[2] - d[2]
    bdx, bdy, bdz = b[0] - d[0], b[1] - d[1], b[2] - d[2]
    cdx, cdy, cdz = c[0] - d[0], c[1] - d[1], c[2] - d[2]
    bdxcdy, cdxbdy = bdx * cdy, cdx * bdy
    cdxady, adxcdy = cdx * ady, adx * cdy
    adxbdy, bdxady = adx * bdy, bdx * ady
    det = adz * (bdxcdy - cdxbdy) + bdz * (cdxady - adxcdy) + cdz * (adxbdy - bdxady)
    permanent = ((abs(bdxcdy) + abs(cdxbdy)) * abs(adz) + (abs(cdxady) + abs(adxcdy)) * abs(bdz)
                 + (abs(adxbdy) + abs(bdxady)) * abs(cdz))
    return _certain_sign(det, _O3D_ERRBOUND * permanent)


@nb.njit(cache=True)
def edge_triangle_filtered(e0, e1, t0, t1, t2):
    """Edge-triangle intersection decided in floating point: 1 yes, 0 no, -1 uncertain.

    The edge (e0, e1) crosses the plane of (t0, t1, t2) strictly and the three volumes of the edge
    with the triangle's edges have one strict sign: intersection. A strict same-side or a strict
    sign change of those volumes: none. Anything touching zero is left to the exact test.
    """
    s0 = orient3d_filtered(t0, t1, t2, e0)
    s1 = orient3d_filtered(t0, t1, t2, e1)
    if s0 != 2 and s1 != 2 and s0 == s1:
        return 0  # both endpoints strictly on one side
    if s0 == 2 or s1 == 2:
        return -1
    u0 = orient3d_filtered(e0, e1, t0, t1)
    u1 = orient3d_filtered(e0, e1, t1, t2)
    u2 = orient3d_filtered(e0, e1, t2, t0)
    if u0 == 2 or u1 == 2 or u2 == 2:
        return -1
    if (u0 == u1) and (u1 == u2):
        return 1
    return 0


@nb.njit(cache=True)
def orient2d_filtered(ax, ay, bx, by, cx, cy):
    """Sign of det[a - c, b - c] for 2D points (+1 counter-clockwise, -1, 0) when certain in floating
    point, else 2. Coordinates float64 [m]."""
    detleft = (ax - cx) * (by - cy)
    detright = (ay - cy) * (bx - cx)
    det = detleft - detright
    return _certain_sign(det, _O2D_ERRBOUND * (abs(detleft) + abs(detright)))


@nb.njit(cache=True)
def _separated_along_axis(e0, e1, t0, t1, t2, k):
    """True when the projections along axis k (onto the other two coordinates) of the segment (e0, e1)
    and the triangle (t0, t1, t2) are certainly disjoint."""
    i = (k + 1) % 3
    j = (k + 2) % 3
    o = orient2d_filtered(t0[i], t0[j], t1[i], t1[j], t2[i], t2[j])
    if o == 1 or o == -1:  # non-degenerate projected triangle: try its three edge lines
        for m in range(3):
            p = t0 if m == 0 else (t1 if m == 1 else t2)
            q = t1 if m == 0 else (t2 if m == 1 else t0)
            if (orient2d_filtered(p[i], p[j], q[i], q[j], e0[i], e0[j]) == -o
                    and orient2d_filtered(p[i], p[j], q[i], q[j], e1[i], e1[j]) == -o):
                return True
    a = orient2d_filtered(e0[i], e0[j], e1[i], e1[j], t0[i], t0[j])
    if a == 1 or a == -1:  # the segment's line with all three triangle vertices strictly on one side
        return (orient2d_filtered(e0[i], e0[j], e1[i], e1[j], t1[i], t1[j]) == a
                and orient2d_filtered(e0[i], e0[j], e1[i], e1[j], t2[i], t2[j]) == a)
    return False


@nb.njit(cache=True)
def separated_in_projection(e0, e1, t0, t1, t2):
    """True when some coordinate-axis projection proves the segment and the triangle disjoint; False
    means undecided (not that they intersect). All arguments (3,) float64 [m]."""
    for k in range(3):
        if _separated_along_axis(e0, e1, t0, t1, t2, k):
            return True
    return False


@nb.njit(cache=True)
def _classify(x, edges, faces, pairs):
    """Float-filtered decision for each [edge, face] row of pairs (k, 2): (k,) int64, 1 intersecting,
    0 disjoint, -1 left to the exact test (``edge_triangle_filtered``, then ``separated_in_projection``)."""
    out = np.empty(pairs.shape[0], np.int64)
    for k in range(pairs.shape[0]):
        e = pairs[k, 0]
        f = pairs[k, 1]
        e0, e1 = x[edges[e, 0]], x[edges[e, 1]]
        t0, t1, t2 = x[faces[f, 0]], x[faces[f, 1]], x[faces[f, 2]]
        r = edge_triangle_filtered(e0, e1, t0, t1, t2)
        if r == -1 and separated_in_projection(e0, e1, t0, t1, t2):
            r = 0
        out[k] = r
    return out


# ------------------------------------------------------------------------------------ exact test
def _sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


def _cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _sign(v) -> int:
    return (v > 0) - (v < 0)


def _orient3d(a, b, c, d) -> int:
    return _sign(_dot(_sub(a, d), _cross(_sub(b, d), _sub(c, d))))


def _orient2d(a, b, c) -> int:
    return _sign((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]))


def _on_segment_2d(p, q, r) -> bool:
    """r collinear with p, q lies in their bounding box (so on the closed segment pq)."""
    return min(p[0], q[0]) <= r[0] <= max(p[0], q[0]) and min(p[1], q[1]) <= r[1] <= max(p[1], q[1])


def _segments_intersect_2d(p1, p2, q1, q2) -> bool:
    o1, o2 = _orient2d(p1, p2, q1), _orient2d(p1, p2, q2)
    o3, o4 = _orient2d(q1, q2, p1), _orient2d(q1, q2, p2)
    if o1 * o2 < 0 and o3 * o4 < 0:
        return True
    return ((o1 == 0 and _on_segment_2d(p1, p2, q1)) or (o2 == 0 and _on_segment_2d(p1, p2, q2))
            or (o3 == 0 and _on_segment_2d(q1, q2, p1)) or (o4 == 0 and _on_segment_2d(q1, q2, p2)))


def _segments_intersect_3d(a, b, c, d) -> bool:
    """Closed segments ab and cd (possibly points) have a common point; exact input."""
    if _orient3d(a, b, c, d) != 0:
        return False
    # coplanar (or degenerate): project along an axis where the points are not all collinear
    # in the projection; if all four are collinear in 3D, compare parameters along the line
    n = _cross(_sub(b, a), _sub(d, c))
    if n == (0, 0, 0):
        n = _cross(_sub(b, a), _sub(c, a))
    if n == (0, 0, 0):
        n = _cross(_sub(d, c), _sub(a, c))
    if n == (0, 0, 0):  # all collinear (or points): overlap of the 1D intervals on the line
        direction = next((_sub(p, q) for p, q in ((b, a), (d, c), (c, a)) if _sub(p, q) != (0, 0, 0)), None)
        if direction is None:
            return True  # all four points coincide
        s = [_dot(p, direction) for p in (a, b, c, d)]
        return max(min(s[0], s[1]), min(s[2], s[3])) <= min(max(s[0], s[1]), max(s[2], s[3]))
    k = max(range(3), key=lambda i: abs(n[i]))
    keep = [i for i in range(3) if i != k]
    pr = [(p[keep[0]], p[keep[1]]) for p in (a, b, c, d)]
    return _segments_intersect_2d(*pr)


def edge_triangle_exact(e0, e1, t0, t1, t2) -> bool:
    """Exact test: the closed segment e0-e1 and the closed triangle t0-t1-t2 share a point.

    Arguments: (3,) float coordinates [m], taken as exact binary values (converted to Fraction).
    Handles touching, coplanar and degenerate (zero-length edge, zero-area triangle) configurations.
    """
    e0, e1, t0, t1, t2 = (tuple(Fraction(float(c)) for c in p) for p in (e0, e1, t0, t1, t2))
    s0, s1 = _orient3d(t0, t1, t2, e0), _orient3d(t0, t1, t2, e1)
    if s0 * s1 > 0:
        return False
    n = _cross(_sub(t1, t0), _sub(t2, t0))
    if n == (0, 0, 0):  # degenerate triangle: the segment between its two farthest vertices
        pairs = ((t0, t1), (t1, t2), (t2, t0))
        c, d = max(pairs, key=lambda p: _dot(_sub(p[0], p[1]), _sub(p[0], p[1])))
        return _segments_intersect_3d(e0, e1, c, d)
    if s0 == 0 and s1 == 0:  # coplanar: 2D test in the projection along the normal's largest axis
        k = max(range(3), key=lambda i: abs(n[i]))
        keep = [i for i in range(3) if i != k]
        a, b, p, q, r = ((v[keep[0]], v[keep[1]]) for v in (e0, e1, t0, t1, t2))
        for point in (a, b):
            o = (_orient2d(p, q, point), _orient2d(q, r, point), _orient2d(r, p, point))
            if min(o) >= 0 or max(o) <= 0:
                return True
        return any(_segments_intersect_2d(a, b, u, v) for u, v in ((p, q), (q, r), (r, p)))
    # the segment's line crosses the plane at one point: inside the closed triangle iff the
    # volumes of the segment with the triangle's edges do not take both strict signs
    u = (_orient3d(e0, e1, t0, t1), _orient3d(e0, e1, t1, t2), _orient3d(e0, e1, t2, t0))
    return not (min(u) < 0 < max(u))


# ------------------------------------------------------------------------------------ mesh queries
def _check_positions(mesh, x) -> np.ndarray:
    a = np.asarray(x, dtype=np.float64)
    if a.shape != (mesh.n_vertices, 3):
        raise ValueError(f"x must have shape ({mesh.n_vertices}, 3) (one row per collision vertex), got {a.shape}")
    if not np.all(np.isfinite(a)):
        bad = int(np.flatnonzero(~np.all(np.isfinite(a), axis=1))[0])
        raise ValueError(f"x: vertex {bad} has a non-finite coordinate")
    return np.ascontiguousarray(a)


def find_intersections(mesh, x, max_count: int | None = None) -> np.ndarray:
    """Edge-face pairs of ``mesh`` at positions x that intersect (exactly, touching included).

    Args:
        mesh: ``ipcsim.geometry.CollisionMesh``.
        x: (n_vertices, 3) float64 [m], collision-vertex positions.
        max_count: stop after this many pairs (the first ones in sorted order), None for all.

    Returns:
        (k, 2) int64 rows [edge, face], sorted; pairs sharing a vertex and pairs of two obstacle
        primitives are never reported.
    """
    x = _check_positions(mesh, x)
    if max_count is not None and max_count < 1:
        raise ValueError(f"max_count must be >= 1 or None, got {max_count}")
    if mesh.n_edges == 0 or mesh.n_faces == 0:
        return np.zeros((0, 2), np.int64)
    vlo, vhi = vertex_boxes(x, None, 0.0)
    elo, ehi = simplex_boxes(vlo, vhi, mesh.edges)
    flo, fhi = simplex_boxes(vlo, vhi, mesh.faces)
    pairs = cell_pairs((elo, ehi, mesh.edges, mesh.edge_is_obstacle), (flo, fhi, mesh.faces, mesh.face_is_obstacle),
                       False)
    if len(pairs) == 0:
        return pairs
    status = _classify(x, mesh.edges, mesh.faces, pairs)
    hits = []
    for k in np.flatnonzero(status != 0):
        if status[k] == -1:
            e, f = pairs[k]
            ok = edge_triangle_exact(x[mesh.edges[e, 0]], x[mesh.edges[e, 1]], *x[mesh.faces[f]])
        else:
            ok = True
        if ok:
            hits.append(k)
            if max_count is not None and len(hits) >= max_count:
                break
    return pairs[np.asarray(hits, dtype=np.int64)].reshape(-1, 2)


def has_intersections(mesh, x) -> bool:
    """True when some edge of ``mesh`` intersects a face at positions x (n_vertices, 3) [m]."""
    return len(find_intersections(mesh, x, max_count=1)) > 0


def describe_intersection(mesh, edge: int, face: int) -> str:
    """One-line description of an intersecting pair, with collision-vertex ids and body ids, e.g.
    "edge 12 (vertices 3, 7) of body 0 intersects face 40 (vertices 1, 2, 9) of body 1"."""
    ev = mesh.edges[edge]
    fv = mesh.faces[face]
    return (f"edge {edge} (vertices {ev[0]}, {ev[1]}) of body {mesh.body[ev[0]]} intersects "
            f"face {face} (vertices {fv[0]}, {fv[1]}, {fv[2]}) of body {mesh.body[fv[0]]}")


def check_no_intersections(mesh, x) -> None:
    """Raise IntersectionError naming the first intersecting edge-face pair, if there is one."""
    found = find_intersections(mesh, x, max_count=1)
    if len(found):
        raise IntersectionError(describe_intersection(mesh, int(found[0, 0]), int(found[0, 1])))
