"""Collision candidates of a collision mesh: primitive pairs whose bounding boxes overlap.

Which pairs (the same split as ipc-toolkit's ``Candidates``):

- ``vf``: every vertex against every face not containing it (point-triangle distance also covers the
  face's edges and corners);
- ``ee``: every pair of edges not sharing a vertex;
- ``vv``: pairs of codimensional vertices (points with no edge), which no face or edge covers;
- ``ev``: codimensional vertices against codimensional edges (edges with no face). A codimensional
  vertex near a face edge is already a ``vf`` candidate;
- ``pv``: half-space planes against vertices whose box comes within the inflation radius of the plane.

Pairs whose both primitives are made only of obstacle vertices (``mesh.is_obstacle``) are left out;
planes are obstacles, so obstacle vertices never pair with planes. Pairs of two primitives of one body whose
``mesh.self_contact`` is False are left out too (a primitive's body: that of its first vertex).
The joins never see the primitives of such a body whose boxes meet no other body's box (``_near_others``): they
could only pair within their body.

Boxes: each vertex box is inflated by ``inflation_radius`` (r) and edge/face boxes are unions of their
vertex boxes, so two primitives closer than 2 r (trajectories, for CCD) are always candidates. For
an active set with activation distance dhat, r = dhat / 2 is enough.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numba as nb
import numpy as np

from . import cell_join
from .boxes import body_boxes6, near_other_bodies, plane_vertex_mask, simplex_boxes6, vertex_boxes6
from .brute_force import brute_force_pairs
from .cell_join import cell_pairs6
from .mesh_join import mesh_pairs
from ...runtime.threads import beside

METHODS = ("auto", "cell_join", "brute_force")


def _empty_pairs() -> np.ndarray:
    return np.zeros((0, 2), np.int64)


@dataclass
class Candidates:
    """Candidate primitive pairs; every array is (n, 2) int64 with rows sorted lexicographically.

    Attributes:
        vf: [vertex, face].
        ee: [edge_a, edge_b], edge_a < edge_b.
        ev: [edge, vertex], codimensional edge against codimensional vertex.
        vv: [v0, v1], v0 < v1, codimensional vertex pairs.
        pv: [plane, vertex], plane index into ``mesh.planes``.
    """

    vf: np.ndarray = field(default_factory=_empty_pairs)
    ee: np.ndarray = field(default_factory=_empty_pairs)
    ev: np.ndarray = field(default_factory=_empty_pairs)
    vv: np.ndarray = field(default_factory=_empty_pairs)
    pv: np.ndarray = field(default_factory=_empty_pairs)

    def __len__(self) -> int:
        return len(self.vf) + len(self.ee) + len(self.ev) + len(self.vv) + len(self.pv)

    def as_sets(self) -> dict[str, set[tuple[int, int]]]:
        """The pairs of each kind as Python sets of tuples (for tests and debugging)."""
        return {k: set(map(tuple, getattr(self, k).tolist())) for k in ("vf", "ee", "ev", "vv", "pv")}


def _check_positions(x, n: int, name: str) -> np.ndarray:
    a = np.asarray(x, dtype=np.float64)
    if a.shape != (n, 3):
        raise ValueError(f"{name} must have shape ({n}, 3) (one row per collision vertex), got {a.shape}")
    if not np.all(np.isfinite(a)):
        bad = int(np.flatnonzero(~np.all(np.isfinite(a), axis=1))[0])
        raise ValueError(f"{name}: vertex {bad} has a non-finite coordinate")
    return np.ascontiguousarray(a)


def _pairs(method: str, queries: tuple, elements: tuple, self_query: bool) -> np.ndarray:
    """(query, element) pairs; queries/elements = (box (n, 6) [lo, hi], vertex ids, obstacle flags)."""
    if method in ("auto", "cell_join"):
        return cell_pairs6(queries, elements, self_query)
    q = (queries[0][:, :3], queries[0][:, 3:], queries[1], queries[2])
    e = (elements[0][:, :3], elements[0][:, 3:], elements[1], elements[2])
    return brute_force_pairs(q, e, self_query)


#: Fewest faces + edges for which the vertex-face and edge-edge joins run side by side (``_side_by_side``).
SIDE_BY_SIDE_MIN_BOXES = 4_000

def _side_by_side(method: str, n_boxes: int) -> bool:
    """Run the vf and ee joins concurrently: the cell join of each runs on one thread (machines with fewer than
    4 cores, see ``cell_join.n_threads``) while Numba may use two, and the mesh is big enough to pay for the
    hand-over (~0.1 ms). Each join is the same serial computation either way: the same pairs, in the same order."""
    return (method in ("auto", "cell_join") and n_boxes >= SIDE_BY_SIDE_MIN_BOXES and cell_join.n_threads() == 1
            and nb.get_num_threads() >= 2)


def build_candidates(mesh, x0, x1=None, inflation_radius: float = 0.0, method: str = "auto") -> Candidates:
    """Candidate pairs of ``mesh`` at positions x0 (static) or along the linear motion x0 -> x1.

    Args:
        mesh: ``ipcsim.geometry.CollisionMesh``.
        x0: (n_vertices, 3) float64 [m], collision-vertex positions (at t = 0).
        x1: (n_vertices, 3) float64 [m], positions at t = 1 for continuous collision detection, or None.
        inflation_radius: [m] >= 0, added to every vertex box (see the module docstring).
        method: "auto" (= "cell_join"), "cell_join" (Numba: ``mesh_join.py`` for the vertex-face and edge-edge
            pairs of small meshes, ``cell_join.py`` otherwise) or "brute_force" (O(n^2), the reference).

    Returns:
        Candidates with deterministic, sorted rows (identical for every method).
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    r = float(inflation_radius)
    if not np.isfinite(r) or r < 0.0:
        raise ValueError(f"inflation_radius must be finite and >= 0, got {inflation_radius!r}")
    n = mesh.n_vertices
    x0 = _check_positions(x0, n, "x0")
    x1 = None if x1 is None else _check_positions(x1, n, "x1")

    vbox = vertex_boxes6(x0, x0 if x1 is None else x1, r)
    v_obst = np.ascontiguousarray(mesh.is_obstacle, dtype=bool)
    edges_ = np.ascontiguousarray(mesh.edges, dtype=np.int64).reshape(-1, 2)
    out = Candidates()
    _surface_pairs(out, method, mesh, vbox, v_obst, edges_)
    cv, ce = mesh.codim_vertices, mesh.codim_edges
    if len(cv):
        codim_vertices = (vbox[cv], cv.astype(np.int64).reshape(-1, 1), v_obst[cv])
    if len(cv) > 1:
        out.vv = cv[_pairs(method, codim_vertices, codim_vertices, True)]  # cv ascending: rows stay sorted
    if len(cv) and len(ce):
        codim_edges = (simplex_boxes6(vbox, edges_[ce]), edges_[ce], mesh.edge_is_obstacle[ce].astype(bool))
        p = _pairs(method, codim_edges, codim_vertices, False)
        out.ev = np.stack([ce[p[:, 0]], cv[p[:, 1]]], axis=1) if len(p) else _empty_pairs()

    out.pv = plane_candidates(mesh, vbox, r, v_obst)
    if mesh.self_contact is not None and not np.all(mesh.self_contact):
        _drop_self_pairs(out, mesh)
    return out


def plane_candidates(mesh, vbox: np.ndarray, inflation_radius: float, v_obst: np.ndarray | None = None) -> np.ndarray:
    """(k, 2) int64 [plane, vertex] rows, sorted: the vertices of ``mesh`` whose boxes vbox (n, 6) [m] (inflated
    by inflation_radius [m], as ``vertex_boxes6`` writes them) come within inflation_radius of a plane of
    ``mesh.planes``, obstacle vertices (v_obst (n,) bool, default ``mesh.is_obstacle``) left out."""
    if v_obst is None:
        v_obst = np.ascontiguousarray(mesh.is_obstacle, dtype=bool)
    origins, normals = mesh.planes_array()
    rows = []
    for k in range(len(origins)):
        hit = np.flatnonzero(plane_vertex_mask(vbox[:, :3], vbox[:, 3:], origins[k], normals[k], inflation_radius)
                             & ~v_obst)
        rows.append(np.stack([np.full(hit.size, k, np.int64), hit.astype(np.int64)], axis=1))
    return np.concatenate(rows, axis=0) if rows else _empty_pairs()


def _surface_pairs(out: Candidates, method: str, mesh, vbox: np.ndarray, v_obst: np.ndarray,
                   edges: np.ndarray) -> None:
    """out.vf and out.ee of ``build_candidates``, given the (n, 6) vertex boxes [m], the vertex obstacle flags and
    the (ne, 2) int64 edges: small meshes by ``mesh_join.mesh_pairs`` (both joins in one call), larger ones
    (or what that cannot take) by two joins, side by side where ``_side_by_side``."""
    faces = np.ascontiguousarray(mesh.faces, dtype=np.int64).reshape(-1, 3)
    e_obst = np.ascontiguousarray(mesh.edge_is_obstacle, dtype=bool)
    f_obst = np.ascontiguousarray(mesh.face_is_obstacle, dtype=bool)
    nv, nf, ne = len(vbox), len(faces), len(edges)
    joins = method in ("auto", "cell_join")
    ids = _join_ids(mesh, nv) if joins else None
    near = _near_others(mesh, vbox, edges, faces) if ids is not None else None
    side_by_side = nf and ne and _side_by_side(method, nf + ne)
    if (near is None and joins and nf and ne and not side_by_side and cell_join.compact_fits(nv, nf)
            and cell_join.compact_fits(ne, ne)):
        found = mesh_pairs(vbox, faces, edges, v_obst, f_obst, e_obst)
        if found is not None:
            out.vf, out.ee = found
            return
    if near is not None:  # only the primitives near another body, their pairs mapped back to mesh ids
        (vs, es, fs), ebox, fbox = near
        vertices = (vbox[vs], ids[vs].reshape(-1, 1), v_obst[vs])
        edata = (ebox[es], ids[edges[es]], e_obst[es])
        fdata = (fbox[fs], ids[faces[fs]], f_obst[fs]) if nf else None
        side_by_side = len(fs) and len(es) and _side_by_side(method, len(fs) + len(es))
    else:
        vids, eids, fids = ((np.arange(nv, dtype=np.int64).reshape(-1, 1), edges, faces) if ids is None
                            else (ids.reshape(-1, 1), ids[edges], ids[faces]))
        vertices = (vbox, vids, v_obst)
        edata = (simplex_boxes6(vbox, edges), eids, e_obst)
        fdata = (simplex_boxes6(vbox, faces), fids, f_obst) if nf else None
    if side_by_side:  # nf and ne > 0; this thread does both when the helper cannot start (``beside``)
        vf, ee = beside(lambda: _pairs(method, vertices, fdata, False), lambda: _pairs(method, edata, edata, True))
    else:
        vf = _pairs(method, vertices, fdata, False) if nf else None
        ee = _pairs(method, edata, edata, True) if ne else None
    if near is not None:  # the selections are increasing: the rows stay sorted
        vf = None if vf is None else np.stack([vs[vf[:, 0]], fs[vf[:, 1]]], axis=1)
        ee = None if ee is None else np.stack([es[ee[:, 0]], es[ee[:, 1]]], axis=1)
    if vf is not None:
        out.vf = vf
    if ee is not None:
        out.ee = ee


#: bodies above which ``_near_others`` is not tried (its test is per primitive and body)
NEAR_OTHERS_MAX_BODIES = 64


def _near_others(mesh, vbox, edges, faces):
    """((vertex ids, edge ids, face ids) (int64, increasing), edge boxes, face boxes or None) for the primitives
    that may pair: those of bodies with self contact and those whose box meets another body's box
    (``boxes.near_other_bodies``); None when that leaves more than half of the vertices or of all primitives (the
    joins' own tests are then as cheap; the vertices are tested first, so such a mesh pays for no edge or face
    box here) or the mesh has many bodies. In the plate rack most of each finger's surface is far from the plate:
    its ~109,000 same-body box pairs per broad phase are never formed."""
    body = np.asarray(mesh.body, np.int64)
    n_bodies = int(body.max()) + 1
    if n_bodies > NEAR_OTHERS_MAX_BODIES:
        return None
    keep = np.zeros(n_bodies, bool)
    keep[:len(mesh.self_contact)] = np.asarray(mesh.self_contact, bool)[:n_bodies]
    bbox = body_boxes6(vbox, body, n_bodies)
    vs = np.flatnonzero(near_other_bodies(vbox, body, keep, bbox))
    if 2 * len(vs) > len(vbox):
        return None
    ebox = simplex_boxes6(vbox, edges)
    fbox = simplex_boxes6(vbox, faces) if len(faces) else None
    es = np.flatnonzero(near_other_bodies(ebox, body[edges[:, 0]], keep, bbox))
    fs = (np.flatnonzero(near_other_bodies(fbox, body[faces[:, 0]], keep, bbox)) if fbox is not None
          else np.zeros(0, np.int64))
    if 2 * (len(vs) + len(es) + len(fs)) > len(vbox) + len(edges) + len(faces):
        return None
    return (vs, es, fs), ebox, fbox


def _join_ids(mesh, n: int) -> np.ndarray | None:
    """(n,) int64 vertex ids for the joins' shared-vertex test, or None when every body has self contact: a
    vertex of a body without self contact (``mesh.self_contact``) takes its body's id n + b, every other vertex its
    own. The joins then reject every pair of two primitives of such a body as they reject two primitives that
    share a vertex, instead of writing them out for ``_drop_self_pairs`` (in the plate rack, 99 % of the pairs:
    ~109,000 per broad phase, of which ~830 are kept). Pairs across bodies never share an id either way."""
    self_contact = mesh.self_contact
    if self_contact is None or np.all(self_contact):
        return None
    body = np.asarray(mesh.body, np.int64)
    if body.size == 0 or body.min() < 0:  # no body ids to group by: every vertex keeps its own id
        return None
    grouped = ~np.asarray(self_contact, bool)[body]
    return np.where(grouped, n + body, np.arange(n, dtype=np.int64))


def _drop_self_pairs(out: Candidates, mesh) -> None:
    """Remove the pairs of two primitives of one body without self contact (``mesh.self_contact``)."""
    body, off = np.asarray(mesh.body, np.int64), ~np.asarray(mesh.self_contact, bool)
    faces, edges = mesh.faces.reshape(-1, 3), mesh.edges.reshape(-1, 2)
    owners = {"vf": (body, body[faces[:, 0]] if len(faces) else body[:0]),
              "ee": (body[edges[:, 0]] if len(edges) else body[:0],) * 2,
              "vv": (body, body),
              "ev": (body[edges[:, 0]] if len(edges) else body[:0], body)}
    for name, (first, second) in owners.items():
        pairs = getattr(out, name)
        if len(pairs):
            a, b = first[pairs[:, 0]], second[pairs[:, 1]]
            setattr(out, name, np.ascontiguousarray(pairs[~((a == b) & off[a])]))


def brute_force_candidates(mesh, x0, x1=None, inflation_radius: float = 0.0, method: str = "brute_force") -> Candidates:
    """The O(n^2) reference: ``build_candidates`` with every box pair tested (same signature)."""
    return build_candidates(mesh, x0, x1, inflation_radius, method="brute_force")
