"""The collision mesh: the surface that contact (distances, barrier, CCD, friction) works on.

Contact always acts on collision-vertex positions ``x`` of shape (n_vertices, 3) [m]. The simulator
maps its unknowns to ``x`` (see ``full_vertex_index``); for full-space bodies the map is a selection of
the boundary vertices of the tet meshes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from . import adjacency as adj
from .adjacency import Adjacency
from .surface import boundary_faces, compact_vertices, face_edges


@dataclass(frozen=True)
class Plane:
    """A half-space obstacle {x : dot(x - origin, normal) >= 0}; ``normal`` is unit length."""

    origin: np.ndarray  # (3,) [m]
    normal: np.ndarray  # (3,) unit

    def __post_init__(self):
        o = np.asarray(self.origin, dtype=np.float64).reshape(3)
        n = np.asarray(self.normal, dtype=np.float64).reshape(3)
        norm = np.linalg.norm(n)
        if not np.isfinite(norm) or norm == 0.0:
            raise ValueError("plane normal must be a finite non-zero vector")
        object.__setattr__(self, "origin", o)
        object.__setattr__(self, "normal", n / norm)


@dataclass
class CollisionMesh:
    """Collision surface of a whole scene.

    Attributes:
        rest_positions: (n_vertices, 3) float64 [m], collision-vertex positions at rest.
        faces: (n_faces, 3) int64, triangles (outward, counter-clockwise seen from outside for
            boundaries of tet meshes).
        edges: (n_edges, 2) int64, unique undirected edges, edges[:, 0] < edges[:, 1]: the edges of
            the faces plus codimensional segments.
        face_edges: (n_faces, 3) int64, index into ``edges`` of (f[k], f[(k+1) % 3]).
        full_vertex_index: (n_vertices,) int64, index of each collision vertex in the scene's full
            vertex array (the unknowns-to-surface map for full-space bodies).
        body: (n_vertices,) int64, id of the body each vertex belongs to.
        is_obstacle: (n_vertices,) bool, vertices of obstacles (static or kinematic); pairs whose
            primitives are made only of obstacle vertices are never candidates.
        planes: half-space obstacles.
        self_contact: None (every body's primitives may touch each other) or (n_bodies,) bool indexed by
            ``body``: False drops the pairs of two primitives of that same body from the candidates (no self
            contact; contacts with other bodies, obstacles and planes stay).

    Derived quantities (codimensional primitives, rest areas, adjacencies, obstacle flags of the
    primitives) are computed on first use and cached: treat the arrays above as immutable once the
    mesh is built.
    """

    rest_positions: np.ndarray
    faces: np.ndarray
    edges: np.ndarray
    face_edges: np.ndarray
    full_vertex_index: np.ndarray
    body: np.ndarray
    is_obstacle: np.ndarray
    planes: list[Plane] = field(default_factory=list)
    self_contact: np.ndarray | None = None

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_tet_mesh(cls, vertices, tets, body: int = 0, is_obstacle: bool = False) -> "CollisionMesh":
        """Boundary surface of a tet mesh; ``full_vertex_index`` maps into ``vertices``."""
        v = _as_positions(vertices)
        t = _as_index(tets, 4, len(v), "tets")
        if len(t) == 0:
            raise ValueError("tets: the tet mesh has no tetrahedra")
        faces = boundary_faces(v, t)
        used, (f,) = compact_vertices(len(v), faces)
        return cls._from_simplices(v[used], f, np.zeros((0, 2), np.int64), used, body, is_obstacle)

    @classmethod
    def from_triangle_mesh(cls, vertices, faces, body: int = 0, is_obstacle: bool = False) -> "CollisionMesh":
        """A triangle surface (closed or open, e.g. a codimensional sheet or an obstacle)."""
        v = _as_positions(vertices)
        f = _as_index(faces, 3, len(v), "faces")
        return cls._from_simplices(v, f, np.zeros((0, 2), np.int64), np.arange(len(v)), body, is_obstacle)

    @classmethod
    def from_edges(cls, vertices, edges, body: int = 0, is_obstacle: bool = False) -> "CollisionMesh":
        """A codimensional segment set (rods, cloth edges without faces)."""
        v = _as_positions(vertices)
        e = _as_index(edges, 2, len(v), "edges")
        return cls._from_simplices(v, np.zeros((0, 3), np.int64), e, np.arange(len(v)), body, is_obstacle)

    @classmethod
    def from_points(cls, vertices, body: int = 0, is_obstacle: bool = False) -> "CollisionMesh":
        """A point set (codimensional particles)."""
        v = _as_positions(vertices)
        z3, z2 = np.zeros((0, 3), np.int64), np.zeros((0, 2), np.int64)
        return cls._from_simplices(v, z3, z2, np.arange(len(v)), body, is_obstacle)

    @classmethod
    def from_plane(cls, origin, normal) -> "CollisionMesh":
        """A mesh holding only the half-space obstacle {x : dot(x - origin, normal) >= 0}.

        Args:
            origin: (3,) [m], a point of the plane; normal: (3,), pointing into the free side.
        """
        z3, z2 = np.zeros((0, 3), np.int64), np.zeros((0, 2), np.int64)
        mesh = cls._from_simplices(np.zeros((0, 3)), z3, z2, np.zeros(0, np.int64), 0, True)
        mesh.planes = [Plane(origin, normal)]
        return mesh

    @classmethod
    def _from_simplices(cls, v, faces, extra_edges, full_index, body, is_obstacle) -> "CollisionMesh":
        fe_edges, f2e = face_edges(faces)
        if len(extra_edges):
            all_edges = np.vstack([fe_edges, np.sort(extra_edges, axis=1)])
            edges, inverse = np.unique(all_edges, axis=0, return_inverse=True)
            f2e = inverse.reshape(-1)[: len(fe_edges)][f2e]
        else:
            edges = fe_edges
        n = len(v)
        return cls(
            rest_positions=np.ascontiguousarray(v, dtype=np.float64),
            faces=np.ascontiguousarray(faces, dtype=np.int64).reshape(-1, 3),
            edges=np.ascontiguousarray(edges, dtype=np.int64).reshape(-1, 2),
            face_edges=np.ascontiguousarray(f2e, dtype=np.int64).reshape(-1, 3),
            full_vertex_index=np.asarray(full_index, dtype=np.int64),
            body=np.full(n, body, dtype=np.int64),
            is_obstacle=np.full(n, bool(is_obstacle)),
        )

    @classmethod
    def concatenate(cls, meshes: list["CollisionMesh"], full_offsets=None) -> "CollisionMesh":
        """Join meshes into one scene mesh; vertex, face and edge indices are shifted.

        ``full_offsets[i]`` is added to mesh i's ``full_vertex_index`` (default: cumulative vertex counts).
        """
        if not meshes:
            raise ValueError("concatenate needs at least one mesh")
        voff = np.cumsum([0] + [m.n_vertices for m in meshes])
        eoff = np.cumsum([0] + [m.n_edges for m in meshes])
        if full_offsets is None:
            full_offsets = voff[:-1]
        return cls(
            rest_positions=np.vstack([m.rest_positions for m in meshes]),
            faces=np.vstack([m.faces + o for m, o in zip(meshes, voff)]),
            edges=np.vstack([m.edges + o for m, o in zip(meshes, voff)]),
            face_edges=np.vstack([m.face_edges + o for m, o in zip(meshes, eoff)]),
            full_vertex_index=np.concatenate([m.full_vertex_index + o for m, o in zip(meshes, full_offsets)]),
            body=np.concatenate([m.body for m in meshes]),
            is_obstacle=np.concatenate([m.is_obstacle for m in meshes]),
            planes=[p for m in meshes for p in m.planes],
        )

    # ------------------------------------------------------------------ sizes and maps
    @property
    def n_vertices(self) -> int:
        """Number of collision vertices."""
        return len(self.rest_positions)

    @property
    def n_faces(self) -> int:
        """Number of faces (triangles)."""
        return len(self.faces)

    @property
    def n_edges(self) -> int:
        """Number of edges (face edges and codimensional segments)."""
        return len(self.edges)

    def select_positions(self, full_positions: np.ndarray) -> np.ndarray:
        """Collision-vertex positions (n_vertices, 3) by the selection ``full_vertex_index`` of positions
        (n_full, 3): the map of full-space bodies only. The simulator reads its surface through
        ``Model.surface_map`` (x = J q), which also covers embedded and affine bodies."""
        return np.asarray(full_positions, dtype=np.float64)[self.full_vertex_index]

    def bbox_diagonal(self, x: np.ndarray | None = None) -> float:
        """Length [m] of the diagonal of the axis-aligned bounding box of x (default: rest positions)."""
        x = self.rest_positions if x is None else np.asarray(x)
        if len(x) == 0:
            return 0.0
        return float(np.linalg.norm(x.max(axis=0) - x.min(axis=0)))

    # ------------------------------------------------------------------ derived, cached
    @cached_property
    def codim_vertices(self) -> np.ndarray:
        """(k,) int64, ascending ids of the vertices with no incident edge (isolated points)."""
        used = np.zeros(self.n_vertices, dtype=bool)
        used[self.edges.ravel()] = True
        return np.flatnonzero(~used).astype(np.int64)

    @cached_property
    def codim_edges(self) -> np.ndarray:
        """(k,) int64, ascending ids of the edges with no incident face (segments, rods)."""
        used = np.zeros(self.n_edges, dtype=bool)
        used[self.face_edges.ravel()] = True
        return np.flatnonzero(~used).astype(np.int64)

    @cached_property
    def vertex_areas(self) -> np.ndarray:
        """(n_vertices,) float64 [m^2], rest quadrature weights, ipc-toolkit's rule.

        1/3 of the incident face areas; for vertices of no face 1/2 of the incident edge lengths [m];
        1 for isolated points.
        """
        return adj.vertex_areas(self.rest_positions, self.edges, self.faces)

    @cached_property
    def edge_areas(self) -> np.ndarray:
        """(n_edges,) float64 [m^2], rest quadrature weights, ipc-toolkit's rule.

        1/3 of the incident face areas; the length [m] for codimensional edges.
        """
        return adj.edge_areas(self.rest_positions, self.edges, self.faces, self.face_edges)

    @cached_property
    def vertex_vertex_adjacency(self) -> Adjacency:
        """CSR: the vertices joined to each vertex by an edge."""
        return adj.vertex_vertex_adjacency(self.edges, self.n_vertices)

    @cached_property
    def vertex_edge_adjacency(self) -> Adjacency:
        """CSR: the edges incident to each vertex."""
        return adj.vertex_edge_adjacency(self.edges, self.n_vertices)

    @cached_property
    def vertex_face_adjacency(self) -> Adjacency:
        """CSR: the faces incident to each vertex."""
        return adj.vertex_face_adjacency(self.faces, self.n_vertices)

    @cached_property
    def edge_face_adjacency(self) -> Adjacency:
        """CSR: the faces incident to each edge."""
        return adj.edge_face_adjacency(self.face_edges, self.n_edges)

    @cached_property
    def edge_vertex_adjacency(self) -> Adjacency:
        """CSR: for each edge, the vertices opposite to it in its incident faces."""
        return adj.edge_vertex_adjacency(self.faces, self.face_edges, self.n_edges)

    @cached_property
    def is_vertex_on_boundary(self) -> np.ndarray:
        """(n_vertices,) bool, ipc-toolkit's 3D rule: False iff the vertex is on an interior edge."""
        return adj.is_vertex_on_boundary(self.edges, self.edge_vertex_adjacency, self.n_vertices)

    @cached_property
    def is_interior_edge(self) -> np.ndarray:
        """(n_edges,) bool, edges shared by two or more faces (E_int of the improved max approximator)."""
        return self.edge_vertex_adjacency.counts() >= 2

    @cached_property
    def is_interior_vertex(self) -> np.ndarray:
        """(n_vertices,) bool, the interior surface nodes V_int (``~is_vertex_on_boundary``)."""
        return ~self.is_vertex_on_boundary

    @cached_property
    def edge_is_obstacle(self) -> np.ndarray:
        """(n_edges,) bool, edges made only of obstacle vertices."""
        return np.all(self.is_obstacle[self.edges], axis=1) if self.n_edges else np.zeros(0, bool)

    @cached_property
    def face_is_obstacle(self) -> np.ndarray:
        """(n_faces,) bool, faces made only of obstacle vertices."""
        return np.all(self.is_obstacle[self.faces], axis=1) if self.n_faces else np.zeros(0, bool)

    def planes_array(self) -> tuple[np.ndarray, np.ndarray]:
        """The half-space planes as arrays: (origins (n_planes, 3) [m], unit normals (n_planes, 3)); do not modify.

        Kept while ``planes`` holds the same (frozen) ``Plane`` objects: every barrier, friction and CCD call asks
        for them, several times a Newton iteration (the list comprehension cost 1.9 us a call, the check 1.0 us)."""
        kept = self.__dict__.get("_planes_arrays")
        planes = self.planes
        if kept is not None and len(kept[0]) == len(planes) and all(a is b for a, b in zip(kept[0], planes)):
            return kept[1]
        if planes:
            arrays = (np.ascontiguousarray([p.origin for p in planes], dtype=np.float64),
                      np.ascontiguousarray([p.normal for p in planes], dtype=np.float64))
        else:
            arrays = (np.zeros((0, 3)), np.zeros((0, 3)))
        self.__dict__["_planes_arrays"] = (tuple(planes), arrays)
        return arrays


def _as_positions(vertices) -> np.ndarray:
    v = np.asarray(vertices, dtype=np.float64)
    if v.ndim != 2 or v.shape[1] != 3:
        raise ValueError(f"vertex positions must have shape (n, 3), got {v.shape}")
    if not np.all(np.isfinite(v)):
        bad = int(np.flatnonzero(~np.all(np.isfinite(v), axis=1))[0])
        raise ValueError(f"vertex {bad} has a non-finite coordinate")
    return v


def _as_index(a, width: int, n_vertices: int, what: str) -> np.ndarray:
    a = np.asarray(a, dtype=np.int64)
    if a.size == 0:
        return a.reshape(0, width)
    if a.ndim != 2 or a.shape[1] != width:
        raise ValueError(f"{what} must have shape (n, {width}), got {a.shape}")
    bad = np.flatnonzero((a < 0).any(axis=1) | (a >= n_vertices).any(axis=1))
    if bad.size:
        raise ValueError(f"{what}[{bad[0]}] = {a[bad[0]].tolist()} refers to a vertex outside 0..{n_vertices - 1}")
    return a
