"""Narrow phase of ``build_collisions``: classify each broad-phase candidate into one record.

A candidate whose squared distance d2 is below dhat2 becomes the record of the primitive pair that realises
the distance (``records``): its Voronoi-region distance type decides, e.g. a vertex-face candidate whose
closest point is a triangle corner becomes a VV record. One parallel kernel per candidate kind; the records
are laid out vv | ev | ee | vf | pv (record r of candidate c of a kind is the kind's offset + c), inactive
candidates get kind NONE.

Common arguments: x (n, 3) float64 [m] positions; dhat2 [m^2] squared activation distance; area_w: area
weights (``build_collisions`` docstring) or 1; rk, ri, rd, rw, re: the record arrays; o: the record offset
of the candidate kind. near (n_records,) bool: squared distance below near2 (>= dhat2) for ev, ee and vf
candidates (the improved max approximator searches its sub-pairs among those).
"""
from __future__ import annotations

from numba import njit, prange

from ...runtime.jit import twin
from ..collisions_data import EE, EV, FV, PV, VV
from ..distance import types as dt
from ..distance.edge_edge import edge_edge_distance_squared
from ..distance.edge_mollifier import edge_edge_cross_squarednorm, edge_edge_mollifier_threshold
from ..distance.point_line import point_line_distance_squared
from ..distance.point_point import point_point_distance_squared
from ..distance.point_triangle import point_triangle_distance_squared
from ..distance.types import edge_edge_distance_type, point_edge_distance_type, point_triangle_distance_type
from .records import NONE, put_edge_vertex, put_record


@njit(cache=True, inline="always")
def _gap2(x, a0, a1, a2, b0, b1, b2):
    """Squared distance [m^2] between the bounding boxes of points {a0, a1, a2} and {b0, b1, b2} (repeat an id for
    fewer points): a lower bound of every distance between the two simplices, read from x without views."""
    s = 0.0
    for k in range(3):
        alo = min(x[a0, k], x[a1, k], x[a2, k])
        ahi = max(x[a0, k], x[a1, k], x[a2, k])
        blo = min(x[b0, k], x[b1, k], x[b2, k])
        bhi = max(x[b0, k], x[b1, k], x[b2, k])
        g = max(blo - ahi, alo - bhi, 0.0)
        s += g * g
    return s


@njit(cache=True, inline="always")
def _clear(rk, near, r):
    """Record r starts inactive and not near."""
    rk[r] = NONE
    near[r] = False


@twin
def _classify_vv(x, vareas, vv, dhat2, area_w, rk, ri, rd, rw, re, o):
    """Vertex-vertex candidates vv (m, 2) [v0, v1]."""
    for c in prange(len(vv)):
        v0, v1 = vv[c, 0], vv[c, 1]
        r = o + c
        rk[r] = NONE
        if point_point_distance_squared(x[v0], x[v1]) < dhat2:
            w = 0.5 * (vareas[v0] + vareas[v1]) if area_w else 1.0
            put_record(rk, ri, rd, rw, re, r, VV, v0, v1, NONE, w, 0.0)


@twin
def _classify_ev(x, edges, vareas, ev, dhat2, near2, area_w, rk, ri, rd, rw, re, near, o):
    """Edge-vertex candidates ev (m, 2) [edge, v]."""
    for c in prange(len(ev)):
        e, v = ev[c, 0], ev[c, 1]
        r = o + c
        _clear(rk, near, r)
        if _gap2(x, v, v, v, edges[e, 0], edges[e, 1], edges[e, 1]) >= near2:
            continue  # boxes apart: most candidates of a trajectory broad phase, skipped cheaply
        t = point_edge_distance_type(x[v], x[edges[e, 0]], x[edges[e, 1]])
        if t == dt.PE_P_E0:
            d2 = point_point_distance_squared(x[v], x[edges[e, 0]])
        elif t == dt.PE_P_E1:
            d2 = point_point_distance_squared(x[v], x[edges[e, 1]])
        else:
            d2 = point_line_distance_squared(x[v], x[edges[e, 0]], x[edges[e, 1]])
        near[r] = d2 < near2
        if d2 < dhat2:
            w = 0.5 * vareas[v] if area_w else 1.0
            put_edge_vertex(rk, ri, rd, rw, re, r, edges, e, v, t, w)


@twin
def _classify_ee(x, rest, edges, eareas, ee, dhat2, near2, area_w, rk, ri, rd, rw, re, near, o):
    """Edge-edge candidates ee (m, 2) [edge_a, edge_b]; rest (n, 3) [m] rest positions (mollifier threshold)."""
    for c in prange(len(ee)):
        ea, eb = ee[c, 0], ee[c, 1]
        r = o + c
        _clear(rk, near, r)
        a0, a1, b0, b1 = edges[ea, 0], edges[ea, 1], edges[eb, 0], edges[eb, 1]
        if _gap2(x, a0, a1, a1, b0, b1, b1) >= near2:
            continue
        t = edge_edge_distance_type(x[a0], x[a1], x[b0], x[b1])
        d2 = edge_edge_distance_squared(x[a0], x[a1], x[b0], x[b1], t)
        near[r] = d2 < near2
        if not d2 < dhat2:
            continue
        eps_x = edge_edge_mollifier_threshold(rest[a0], rest[a1], rest[b0], rest[b1])
        mollified = edge_edge_cross_squarednorm(x[a0], x[a1], x[b0], x[b1]) < eps_x
        w = 0.25 * (eareas[ea] + eareas[eb]) if area_w else 1.0
        if mollified or t == dt.EA_EB:
            put_record(rk, ri, rd, rw, re, r, EE, ea, eb, t, w, eps_x)
        elif t <= dt.EA1_EB1:  # point-point: (a_i, b_j) with i = t >> 1, j = t & 1
            put_record(rk, ri, rd, rw, re, r, VV, edges[ea, t >> 1], edges[eb, t & 1], NONE, w, 0.0)
        elif t == dt.EA_EB0:
            put_record(rk, ri, rd, rw, re, r, EV, ea, b0, NONE, w, 0.0)
        elif t == dt.EA_EB1:
            put_record(rk, ri, rd, rw, re, r, EV, ea, b1, NONE, w, 0.0)
        elif t == dt.EA0_EB:
            put_record(rk, ri, rd, rw, re, r, EV, eb, a0, NONE, w, 0.0)
        else:  # EA1_EB
            put_record(rk, ri, rd, rw, re, r, EV, eb, a1, NONE, w, 0.0)


@twin
def _classify_fv(x, faces, face_edges, vareas, vf, dhat2, near2, area_w, rk, ri, rd, rw, re, near, o):
    """Vertex-face candidates vf (m, 2) [v, face]; face_edges (n_faces, 3) the edge ids of each face."""
    for c in prange(len(vf)):
        v, f = vf[c, 0], vf[c, 1]
        r = o + c
        _clear(rk, near, r)
        f0, f1, f2 = faces[f, 0], faces[f, 1], faces[f, 2]
        if _gap2(x, v, v, v, f0, f1, f2) >= near2:
            continue
        t = point_triangle_distance_type(x[v], x[f0], x[f1], x[f2])
        d2 = point_triangle_distance_squared(x[v], x[f0], x[f1], x[f2], t)
        near[r] = d2 < near2
        if not d2 < dhat2:
            continue
        w = 0.25 * vareas[v] if area_w else 1.0
        if t <= dt.P_T2:
            put_record(rk, ri, rd, rw, re, r, VV, v, faces[f, t], NONE, w, 0.0)
        elif t <= dt.P_E2:
            put_record(rk, ri, rd, rw, re, r, EV, face_edges[f, t - dt.P_E0], v, NONE, w, 0.0)
        else:
            put_record(rk, ri, rd, rw, re, r, FV, f, v, NONE, w, 0.0)


@twin
def _classify_pv(x, plane_o, plane_n, vareas, pv, dhat2, area_w, rk, ri, rd, rw, re, o):
    """Plane-vertex candidates pv (m, 2) [plane, v]; plane_o, plane_n (n_planes, 3) origins [m], unit normals."""
    for c in prange(len(pv)):
        p, v = pv[c, 0], pv[c, 1]
        r = o + c
        rk[r] = NONE
        s = 0.0  # signed distance [m]
        for k in range(3):
            s += plane_n[p, k] * (x[v, k] - plane_o[p, k])
        if s * s < dhat2:
            w = vareas[v] if area_w else 1.0
            put_record(rk, ri, rd, rw, re, r, PV, p, v, NONE, w, 0.0)


@twin  # its serial variant calls the serial kernels: ``classify(...)`` under one Numba thread runs it
def classify(x, rest, edges, faces, face_edges, vareas, eareas, vv, ev, ee, vf, pv, plane_o, plane_n,
             dhat2, area_w, rk, ri, rd, rw, re, near, near2):
    """One record per candidate, laid out vv | ev | ee | vf | pv (module docstring). Mesh arrays: edges
    (n_edges, 2), faces (n_faces, 3), face_edges (n_faces, 3) int64; vareas (n,), eareas (n_edges,) [m^2]."""
    o_ev = len(vv)
    o_ee = o_ev + len(ev)
    o_vf = o_ee + len(ee)
    o_pv = o_vf + len(vf)
    _classify_vv(x, vareas, vv, dhat2, area_w, rk, ri, rd, rw, re, 0)
    _classify_ev(x, edges, vareas, ev, dhat2, near2, area_w, rk, ri, rd, rw, re, near, o_ev)
    _classify_ee(x, rest, edges, eareas, ee, dhat2, near2, area_w, rk, ri, rd, rw, re, near, o_ee)
    _classify_fv(x, faces, face_edges, vareas, vf, dhat2, near2, area_w, rk, ri, rd, rw, re, near, o_vf)
    _classify_pv(x, plane_o, plane_n, vareas, pv, dhat2, area_w, rk, ri, rd, rw, re, o_pv)
