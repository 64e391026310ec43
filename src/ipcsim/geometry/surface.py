"""Boundary extraction and edge topology of simplicial meshes.

All index arrays are int64. Orientation convention: a boundary triangle (a, b, c) of a tet mesh is
ordered so that its normal (b - a) x (c - a) points out of the tet it bounds.
"""
from __future__ import annotations

import numpy as np

# Faces of a tet (v0, v1, v2, v3) opposite to vertex 3, 2, 1, 0, ordered so that their normals point
# outward for a positively oriented tet (det[v1-v0, v2-v0, v3-v0] > 0).
_TET_FACES = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]], dtype=np.int64)
_TET_OPPOSITE = np.array([3, 2, 1, 0], dtype=np.int64)


def tet_signed_volumes(vertices: np.ndarray, tets: np.ndarray) -> np.ndarray:
    """Signed volumes [m^3] of tets, shape (n_tets,); positive for positively oriented tets."""
    v = np.asarray(vertices, dtype=np.float64)
    t = np.asarray(tets, dtype=np.int64)
    a, b, c, d = (v[t[:, i]] for i in range(4))
    return np.einsum("ij,ij->i", np.cross(b - a, c - a), d - a) / 6.0


def boundary_faces(vertices: np.ndarray, tets: np.ndarray) -> np.ndarray:
    """Boundary triangles of a tet mesh, shape (n_faces, 3), oriented outward.

    A face is on the boundary when exactly one tet holds it. Orientation is decided geometrically
    (normal pointing away from the opposite vertex of its tet), so negatively oriented input tets
    still give outward faces.
    """
    t = np.asarray(tets, dtype=np.int64)
    if t.ndim != 2 or t.shape[1] != 4:
        raise ValueError(f"tets must have shape (n, 4), got {t.shape}")
    v = np.asarray(vertices, dtype=np.float64)
    faces = t[:, _TET_FACES].reshape(-1, 3)
    opposite = t[:, _TET_OPPOSITE].reshape(-1)
    key = np.sort(faces, axis=1)
    _, inverse, counts = np.unique(key, axis=0, return_inverse=True, return_counts=True)
    on_boundary = counts[inverse.reshape(-1)] == 1
    faces = faces[on_boundary]
    opposite = opposite[on_boundary]
    a, b, c = v[faces[:, 0]], v[faces[:, 1]], v[faces[:, 2]]
    outward = np.einsum("ij,ij->i", np.cross(b - a, c - a), v[opposite] - a) < 0.0
    faces[~outward] = faces[~outward][:, [0, 2, 1]]
    return faces


def face_edges(faces: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unique undirected edges of a triangle set.

    Returns (edges, face_to_edge): edges (n_edges, 2) with edges[:, 0] < edges[:, 1], sorted
    lexicographically; face_to_edge (n_faces, 3) where entry k is the edge (f[k], f[(k+1)%3]).
    """
    f = np.asarray(faces, dtype=np.int64).reshape(-1, 3)
    half = np.stack([f, np.roll(f, -1, axis=1)], axis=2).reshape(-1, 2)
    edges, inverse = np.unique(np.sort(half, axis=1), axis=0, return_inverse=True)
    return edges.astype(np.int64), inverse.reshape(-1, 3).astype(np.int64)


def compact_vertices(n_vertices: int, *index_arrays: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """Renumber the vertices used by index arrays to 0..k-1.

    Returns (used, remapped): used (k,) holds the original index of each kept vertex (ascending), and
    remapped holds each input array in the new numbering.
    """
    used_mask = np.zeros(n_vertices, dtype=bool)
    for a in index_arrays:
        used_mask[np.asarray(a, dtype=np.int64).ravel()] = True
    used = np.flatnonzero(used_mask).astype(np.int64)
    new_index = np.full(n_vertices, -1, dtype=np.int64)
    new_index[used] = np.arange(used.size, dtype=np.int64)
    return used, [new_index[np.asarray(a, dtype=np.int64)] for a in index_arrays]


def closed_surface_problem(faces: np.ndarray) -> str | None:
    """Why a triangle set (f, 3) is not a closed, consistently wound 2-manifold, or None when it is: every
    undirected edge held by exactly two faces that run it in opposite directions, no degenerate face. (Vertex
    manifoldness, e.g. two solids touching at one vertex, is not checked.)"""
    f = np.asarray(faces, dtype=np.int64).reshape(-1, 3)
    bad = np.flatnonzero((f[:, 0] == f[:, 1]) | (f[:, 1] == f[:, 2]) | (f[:, 2] == f[:, 0]))
    if bad.size:
        return f"face {bad[0]} repeats a vertex ({bad.size} such faces)"
    half = np.stack([f, np.roll(f, -1, axis=1)], axis=2).reshape(-1, 2)
    edges, counts = np.unique(np.sort(half, axis=1), axis=0, return_counts=True)
    if np.any(counts != 2):
        k = int(np.flatnonzero(counts != 2)[0])
        return (f"edge {tuple(edges[k])} is held by {counts[k]} faces ({int(np.sum(counts == 1))} open edges, "
                f"{int(np.sum(counts > 2))} non-manifold)")
    directed, dcounts = np.unique(half, axis=0, return_counts=True)
    if np.any(dcounts > 1):
        k = int(np.flatnonzero(dcounts > 1)[0])
        return f"edge {tuple(directed[k])} is run the same way by two faces (inconsistent winding)"
    return None
