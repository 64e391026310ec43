"""The improved max approximator of the convergent formulation (002): extra records added to the classified ones.

For the near candidates (squared distance below near2, see ``narrow_phase``) it searches the sub-pairs within dhat
(an edge's endpoint to the other edge, a vertex to a face's edges and corners, a vertex to an edge's endpoints)
and writes their terms: negative edge-vertex terms for interior edges (face-vertex pairs), positive
vertex-vertex terms for interior vertices (face-vertex pairs), negative vertex-vertex terms for edge-vertex
pairs, and negative edge-edge terms replaced by mollified edge-edge or collapsed edge-vertex terms (edge-edge
pairs). Weights: 1 per term, or the area weights of ``build_collisions`` (area_w).

Common arguments: x (n, 3) float64 [m]; dhat2 [m^2]; n the vertex count; rk, ri, rd, rw, re the record arrays
(``records``), written from row r0 on (each writer returns the next free row); CSR adjacencies as
(indptr, indices) int64 pairs (``CollisionMesh``).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ...runtime.jit import generic_njit
from ..collisions_data import EE, VV
from ..distance import types as dt
from ..distance.edge_mollifier import edge_edge_cross_squarednorm, edge_edge_mollifier_threshold
from ..distance.point_edge import point_edge_distance_squared
from ..distance.point_point import point_point_distance_squared
from ..distance.types import point_edge_distance_type
from .records import NONE, put_edge_vertex, put_record


@generic_njit
def _unique_pairs(a, b, n_b, unordered):
    """Unique pairs (a[i], b[i]) as an (m, 2) array sorted by key; unordered pairs are stored (min, max)."""
    m = len(a)
    keys = np.empty(m, np.int64)
    for i in range(m):
        p, q = a[i], b[i]
        if unordered and q < p:
            p, q = q, p
        keys[i] = p * n_b + q
    keys = np.unique(keys)
    out = np.empty((len(keys), 2), np.int64)
    for i in range(len(keys)):
        out[i, 0] = keys[i] // n_b
        out[i, 1] = keys[i] % n_b
    return out


@generic_njit
def _element_vertex_to_vv(x, elements, cand, dhat2, n):
    """Vertex pairs (v, element vertex) within dhat of the element-vertex candidates [elem, v]."""
    k = elements.shape[1]
    a = np.empty(len(cand) * k, np.int64)
    b = np.empty(len(cand) * k, np.int64)
    m = 0
    for c in range(len(cand)):
        el, v = cand[c, 0], cand[c, 1]
        for j in range(k):
            vj = elements[el, j]
            if point_point_distance_squared(x[v], x[vj]) < dhat2:
                a[m] = v
                b[m] = vj
                m += 1
    return _unique_pairs(a[:m], b[:m], n, True)


@njit(cache=True, inline="always")
def _append_if_within(x, edges, e, v, dhat2, a, b, m):
    """Append the pair (edge e, vertex v) at a[m], b[m] when v is within dhat of the segment e; returns the
    new pair count."""
    if point_edge_distance_squared(x[v], x[edges[e, 0]], x[edges[e, 1]], dt.PE_AUTO) < dhat2:
        a[m] = e
        b[m] = v
        return m + 1
    return m


@generic_njit
def _face_vertex_to_ev(x, edges, face_edges, vf, dhat2, n):
    """Edge-vertex pairs [edge, v] within dhat from the face-vertex candidates [v, face]."""
    a = np.empty(len(vf) * 3, np.int64)
    b = np.empty(len(vf) * 3, np.int64)
    m = 0
    for c in range(len(vf)):
        v, f = vf[c, 0], vf[c, 1]
        for j in range(3):
            m = _append_if_within(x, edges, face_edges[f, j], v, dhat2, a, b, m)
    return _unique_pairs(a[:m], b[:m], n, False)


@generic_njit
def _edge_edge_to_ev(x, edges, ee, dhat2, n):
    """Edge-vertex pairs [edge, v] within dhat: each edge against the endpoints of the other edge."""
    a = np.empty(len(ee) * 4, np.int64)
    b = np.empty(len(ee) * 4, np.int64)
    m = 0
    for c in range(len(ee)):
        for side in range(2):
            ei = ee[c, side]
            ej = ee[c, 1 - side]
            for j in range(2):
                m = _append_if_within(x, edges, ei, edges[ej, j], dhat2, a, b, m)
    return _unique_pairs(a[:m], b[:m], n, False)


@njit(cache=True, inline="always")
def _in_row(indptr, indices, row, value):
    for k in range(indptr[row], indptr[row + 1]):
        if indices[k] == value:
            return True
    return False


@generic_njit
def _negative_vv_from_ev(vv_pairs, vv_ptr, vv_idx, vareas, area_w, rk, ri, rd, rw, re, r0):
    """Edge-vertex -> vertex-vertex terms: (1 - #edges at vj other than to vi) per side (002)."""
    r = r0
    for c in range(len(vv_pairs)):
        w = 0.0
        for side in range(2):
            vi = vv_pairs[c, side]
            vj = vv_pairs[c, 1 - side]
            amt = vv_ptr[vj + 1] - vv_ptr[vj] - (1 if _in_row(vv_ptr, vv_idx, vj, vi) else 0)
            if amt > 1:
                w += (1 - amt) * (0.5 * vareas[vi] if area_w else 1.0)
        if w != 0.0:
            put_record(rk, ri, rd, rw, re, r, VV, vv_pairs[c, 0], vv_pairs[c, 1], NONE, w, 0.0)
            r += 1
    return r


@generic_njit
def _positive_vv_from_fv(vv_pairs, vv_ptr, vv_idx, on_boundary, vareas, area_w, rk, ri, rd, rw, re, r0):
    """Face-vertex -> vertex-vertex terms: + for each interior, non-adjacent vertex vj (002)."""
    r = r0
    for c in range(len(vv_pairs)):
        w = 0.0
        for side in range(2):
            vi = vv_pairs[c, side]
            vj = vv_pairs[c, 1 - side]
            if on_boundary[vj] or _in_row(vv_ptr, vv_idx, vj, vi):
                continue
            w += 0.25 * vareas[vi] if area_w else 1.0
        if w != 0.0:
            put_record(rk, ri, rd, rw, re, r, VV, vv_pairs[c, 0], vv_pairs[c, 1], NONE, w, 0.0)
            r += 1
    return r


@generic_njit
def _negative_ev_from_fv(x, edges, ev_pairs, ef_ptr, ef_idx, vareas, area_w, rk, ri, rd, rw, re, r0):
    """Face-vertex -> edge-vertex terms: (1 - #faces at the edge not containing v) (002)."""
    r = r0
    for c in range(len(ev_pairs)):
        e, v = ev_pairs[c, 0], ev_pairs[c, 1]
        amt = ef_ptr[e + 1] - ef_ptr[e] - (1 if _in_row(ef_ptr, ef_idx, e, v) else 0)
        if amt > 1:
            w = (1 - amt) * (0.25 * vareas[v] if area_w else 1.0)
            t = point_edge_distance_type(x[v], x[edges[e, 0]], x[edges[e, 1]])
            put_edge_vertex(rk, ri, rd, rw, re, r, edges, e, v, t, w)
            r += 1
    return r


@generic_njit
def _negative_ev_from_ee(x, rest, edges, ev_pairs, ve_ptr, ve_idx, eareas, area_w, rk, ri, rd, rw, re, r0):
    """Edge-edge -> edge-vertex terms. For (ea, p): -w_ea per edge eb = (p, q) at p; the pairs whose
    edges are nearly parallel stay mollified edge-edge terms with a fixed distance type; the others
    collapse into one (n_nonmollified - 1) * (-w_ea) edge-vertex term."""
    r = r0
    for c in range(len(ev_pairs)):
        ea, p = ev_pairs[c, 0], ev_pairs[c, 1]
        a0, a1 = edges[ea, 0], edges[ea, 1]
        w = -0.25 * eareas[ea] if area_w else -1.0
        t = point_edge_distance_type(x[p], x[a0], x[a1])
        n_plain = 0
        for k in range(ve_ptr[p], ve_ptr[p + 1]):
            eb = ve_idx[k]
            b0, b1 = edges[eb, 0], edges[eb, 1]
            q = b1 if p == b0 else b0
            if q == a0 or q == a1:
                continue
            eps_x = edge_edge_mollifier_threshold(rest[a0], rest[a1], rest[b0], rest[b1])
            if edge_edge_cross_squarednorm(x[a0], x[a1], x[b0], x[b1]) >= eps_x:
                n_plain += 1
                continue
            if t == dt.PE_P_E0:
                ee_t = dt.EA0_EB0 if p == b0 else dt.EA0_EB1
            elif t == dt.PE_P_E1:
                ee_t = dt.EA1_EB0 if p == b0 else dt.EA1_EB1
            else:
                ee_t = dt.EA_EB0 if p == b0 else dt.EA_EB1
            put_record(rk, ri, rd, rw, re, r, EE, ea, eb, ee_t, w, eps_x)
            r += 1
        if n_plain != 1:
            put_edge_vertex(rk, ri, rd, rw, re, r, edges, ea, p, t, (n_plain - 1) * w)
            r += 1
    return r


def with_improved_max_terms(mesh, x, rest, areas, cands, near, dhat2, area_w, records):
    """The classified records (active ones only) followed by the improved max approximator's terms (002).

    mesh: ``CollisionMesh``; rest (n, 3) [m] rest positions; areas: (vertex areas (n,), edge areas (n_edges,))
    [m^2]; cands: the (vv, ev, ee, vf) candidate pairs (m, 2) int64 that were classified; near: (n_records,)
    bool of ``narrow_phase.classify``; records: the (rk, ri, rd, rw, re) it wrote. Returns new record arrays.
    One compiled call (``_with_terms``): the grasp's ~900 calls took ~130 us each as a dozen kernels and NumPy
    operations from Python.
    """
    vv, ev, ee, vf = cands
    topo = (mesh.edges, mesh.faces, mesh.face_edges, mesh.is_vertex_on_boundary)
    vva, vea, eva = mesh.vertex_vertex_adjacency, mesh.vertex_edge_adjacency, mesh.edge_vertex_adjacency
    adjacency = (vva.indptr, vva.indices, vea.indptr, vea.indices, eva.indptr, eva.indices)
    # the record layout of ``narrow_phase.classify``: vv | ev | ee | vf | pv
    offsets = (len(vv), len(vv) + len(ev), len(vv) + len(ev) + len(ee))
    return _with_terms(x, rest, topo, adjacency, areas, (ev, ee, vf), offsets, near, dhat2, area_w,
                       tuple(records), mesh.n_vertices)


@njit(cache=True)
def _near_rows(pairs, near, offset):
    """The rows of pairs (m, 2) whose near flag near[offset + i] is set, in order."""
    keep = np.flatnonzero(near[offset:offset + len(pairs)])
    out = np.empty((len(keep), 2), np.int64)
    for i in range(len(keep)):
        out[i, 0] = pairs[keep[i], 0]
        out[i, 1] = pairs[keep[i], 1]
    return out


@njit(cache=True)
def _with_terms(x, rest, topo, adjacency, areas, cands, offsets, near, dhat2, area_w, records, n):
    """``with_improved_max_terms`` compiled: topo = (edges, faces, face_edges, is_vertex_on_boundary), adjacency =
    the (indptr, indices) of the vertex-vertex, vertex-edge and edge-vertex adjacencies, areas = (vertex, edge)
    areas, cands = the (ev, ee, vf) pairs, offsets = where the ev, ee and vf records start."""
    edges, faces, face_edges, on_boundary = topo
    vv_ptr, vv_idx, ve_ptr, ve_idx, ev_ptr, ev_idx = adjacency
    vareas, eareas = areas
    rk, ri, rd, rw, re = records
    ev_n = _near_rows(cands[0], near, offsets[0])
    ee_n = _near_rows(cands[1], near, offsets[1])
    vf_n = _near_rows(cands[2], near, offsets[2])
    empty = np.zeros((0, 2), np.int64)
    ev_vv = _element_vertex_to_vv(x, edges, ev_n, dhat2, n) if len(ev_n) else empty
    ee_ev = _edge_edge_to_ev(x, edges, ee_n, dhat2, n) if len(ee_n) else empty
    fv_ev = _face_vertex_to_ev(x, edges, face_edges, vf_n, dhat2, n) if len(vf_n) else empty
    fv_vv = _element_vertex_to_vv(x, faces, np.ascontiguousarray(vf_n[:, ::-1]), dhat2, n) if len(vf_n) else empty
    n_extra = len(ev_vv) + len(fv_ev) + len(fv_vv) + len(ee_ev)
    for i in range(len(ee_ev)):
        n_extra += ve_ptr[ee_ev[i, 1] + 1] - ve_ptr[ee_ev[i, 1]]
    keep = np.flatnonzero(rk >= 0)  # the active records, in record order, then the new terms
    m = len(keep)
    rk = np.concatenate((rk[keep], np.full(n_extra, NONE, np.int64)))
    ri = np.concatenate((ri[keep], np.empty((n_extra, 2), np.int64)))
    rd = np.concatenate((rd[keep], np.empty(n_extra, np.int64)))
    rw = np.concatenate((rw[keep], np.empty(n_extra, np.float64)))
    re = np.concatenate((re[keep], np.empty(n_extra, np.float64)))
    r = _negative_vv_from_ev(ev_vv, vv_ptr, vv_idx, vareas, area_w, rk, ri, rd, rw, re, m)
    r = _negative_ev_from_ee(x, rest, edges, ee_ev, ve_ptr, ve_idx, eareas, area_w, rk, ri, rd, rw, re, r)
    r = _negative_ev_from_fv(x, edges, fv_ev, ev_ptr, ev_idx, vareas, area_w, rk, ri, rd, rw, re, r)
    _positive_vv_from_fv(fv_vv, vv_ptr, vv_idx, on_boundary, vareas, area_w, rk, ri, rd, rw, re, r)
    return rk, ri, rd, rw, re
