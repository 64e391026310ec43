"""Adjacency (CSR) and rest-shape integration weights of a collision mesh.

Everything here is plain NumPy on index arrays, computed once per mesh (see the cached properties of
``CollisionMesh``). A CSR relation ``(indptr, indices)`` lists for row ``i`` the ids
``indices[indptr[i]:indptr[i + 1]]`` in ascending order without repeats.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Adjacency(NamedTuple):
    """A sparse relation row -> ids in CSR form (Numba-friendly: two int64 arrays).

    Attributes:
        indptr: (n_rows + 1,) int64, row i's ids are ``indices[indptr[i]:indptr[i + 1]]``.
        indices: (nnz,) int64, ascending and unique within each row.
    """

    indptr: np.ndarray
    indices: np.ndarray

    @property
    def n_rows(self) -> int:
        """Number of rows."""
        return len(self.indptr) - 1

    def row(self, i: int) -> np.ndarray:
        """The ids related to row ``i``, shape (k,) int64."""
        return self.indices[self.indptr[i] : self.indptr[i + 1]]

    def counts(self) -> np.ndarray:
        """Number of ids in each row, shape (n_rows,) int64."""
        return np.diff(self.indptr)


def csr_from_pairs(rows: np.ndarray, cols: np.ndarray, n_rows: int) -> Adjacency:
    """CSR relation from (row, col) pairs; duplicate pairs are merged, columns sorted per row.

    Args:
        rows, cols: (m,) int, the pairs.
        n_rows: number of rows (rows must lie in 0..n_rows-1).
    """
    rows = np.asarray(rows, dtype=np.int64).ravel()
    cols = np.asarray(cols, dtype=np.int64).ravel()
    if rows.size:
        order = np.lexsort((cols, rows))
        rows, cols = rows[order], cols[order]
        keep = np.ones(rows.size, dtype=bool)
        keep[1:] = (rows[1:] != rows[:-1]) | (cols[1:] != cols[:-1])
        rows, cols = rows[keep], cols[keep]
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n_rows), out=indptr[1:])
    return Adjacency(indptr, np.ascontiguousarray(cols))


def vertex_vertex_adjacency(edges: np.ndarray, n_vertices: int) -> Adjacency:
    """Vertices joined to each vertex by an edge (face edges and codimensional segments)."""
    e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    return csr_from_pairs(np.concatenate([e[:, 0], e[:, 1]]), np.concatenate([e[:, 1], e[:, 0]]), n_vertices)


def vertex_edge_adjacency(edges: np.ndarray, n_vertices: int) -> Adjacency:
    """Edges incident to each vertex."""
    e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    ids = np.arange(len(e), dtype=np.int64)
    return csr_from_pairs(e.T.ravel(), np.concatenate([ids, ids]), n_vertices)


def vertex_face_adjacency(faces: np.ndarray, n_vertices: int) -> Adjacency:
    """Faces incident to each vertex."""
    f = np.asarray(faces, dtype=np.int64).reshape(-1, 3)
    return csr_from_pairs(f.ravel(), np.repeat(np.arange(len(f), dtype=np.int64), 3), n_vertices)


def edge_face_adjacency(face_edges: np.ndarray, n_edges: int) -> Adjacency:
    """Faces incident to each edge (two for an edge inside a closed manifold surface)."""
    fe = np.asarray(face_edges, dtype=np.int64).reshape(-1, 3)
    return csr_from_pairs(fe.ravel(), np.repeat(np.arange(len(fe), dtype=np.int64), 3), n_edges)


def edge_vertex_adjacency(faces: np.ndarray, face_edges: np.ndarray, n_edges: int) -> Adjacency:
    """For each edge, the vertices opposite to it in its incident faces (the "wing" vertices)."""
    f = np.asarray(faces, dtype=np.int64).reshape(-1, 3)
    fe = np.asarray(face_edges, dtype=np.int64).reshape(-1, 3)
    # face_edges[:, k] is the edge (f[k], f[k+1]); its opposite vertex is f[k+2].
    return csr_from_pairs(fe.ravel(), np.roll(f, -2, axis=1).ravel(), n_edges)


def is_vertex_on_boundary(edges: np.ndarray, edge_vertices: Adjacency, n_vertices: int) -> np.ndarray:
    """(n_vertices,) bool: True unless the vertex lies on an edge shared by two or more faces.

    ``edge_vertices`` is ``edge_vertex_adjacency`` (an edge is shared by two faces when it has two
    distinct opposite vertices).

    This is the 3D rule of ipc-toolkit's ``CollisionMesh::is_vertex_on_boundary``: vertices of
    codimensional edges, isolated points and vertices all of whose edges are open-boundary edges
    are "on the boundary"; the others are the interior surface nodes V_int of the improved max
    approximator (002).
    """
    e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    on_boundary = np.ones(n_vertices, dtype=bool)
    interior_edges = edge_vertices.counts() >= 2
    on_boundary[e[interior_edges].ravel()] = False
    return on_boundary


def face_areas(x: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """Triangle areas [m^2], shape (n_faces,), of positions x (n, 3) [m]."""
    f = np.asarray(faces, dtype=np.int64).reshape(-1, 3)
    a, b, c = x[f[:, 0]], x[f[:, 1]], x[f[:, 2]]
    return 0.5 * np.linalg.norm(np.cross(b - a, c - a), axis=1)


def edge_lengths(x: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Edge lengths [m], shape (n_edges,)."""
    e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    return np.linalg.norm(x[e[:, 1]] - x[e[:, 0]], axis=1)


def vertex_areas(x: np.ndarray, edges: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """Quadrature weights of the vertices, shape (n_vertices,) [m^2] (ipc-toolkit's definition).

    A vertex of a face gets 1/3 of the area of each incident face; otherwise a vertex of an edge
    gets 1/2 of the length of each incident edge [m]; an isolated point gets 1. (The units differ
    per case, exactly as in ipc-toolkit; they only scale the barrier of that primitive.)
    """
    n = len(x)
    f = np.asarray(faces, dtype=np.int64).reshape(-1, 3)
    e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    from_faces = np.bincount(f.ravel(), weights=np.repeat(face_areas(x, f) / 3.0, 3), minlength=n)
    in_face = np.bincount(f.ravel(), minlength=n) > 0
    from_edges = np.bincount(e.ravel(), weights=np.repeat(edge_lengths(x, e) / 2.0, 2), minlength=n)
    in_edge = np.bincount(e.ravel(), minlength=n) > 0
    return np.where(in_face, from_faces, np.where(in_edge, from_edges, 1.0))


def edge_areas(x: np.ndarray, edges: np.ndarray, faces: np.ndarray, face_edges: np.ndarray) -> np.ndarray:
    """Quadrature weights of the edges, shape (n_edges,) [m^2] (ipc-toolkit's definition).

    An edge of a face gets 1/3 of the area of each incident face; a codimensional edge gets its
    length [m].
    """
    e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    fe = np.asarray(face_edges, dtype=np.int64).reshape(-1, 3)
    m = len(e)
    from_faces = np.bincount(fe.ravel(), weights=np.repeat(face_areas(x, faces) / 3.0, 3), minlength=m)
    in_face = np.bincount(fe.ravel(), minlength=m) > 0
    return np.where(in_face, from_faces, edge_lengths(x, e))
