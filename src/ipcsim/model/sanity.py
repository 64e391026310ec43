"""Checks of a scene before its first step: degenerate or inverted tets, open surfaces, non-manifold surfaces (a
warning), initial intersections (between triangles or with half-space obstacles), and bodies closer than dhat (a
warning: the barrier is already active there and pushes them apart in the first step)."""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..contact.collisions import build_collisions
from ..contact.collisions_data import KIND_NAMES
from ..contact.intersection import describe_intersection, find_intersections
from ..contact.stiffness import minimum_distance_squared
from ..geometry.surface import tet_signed_volumes


class SanityWarning(UserWarning):
    """A scene that can be simulated but probably not as intended."""


@dataclass
class SanityReport:
    """Findings of ``check_scene``: errors (the scene cannot be simulated) and warnings, one line each."""

    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when there is no error."""
        return not self.errors

    def raise_if_errors(self) -> None:
        """Raise ValueError listing every error (the first 10 and a count)."""
        if self.errors:
            more = f" (and {len(self.errors) - 10} more)" if len(self.errors) > 10 else ""
            raise ValueError("scene check failed: " + "; ".join(self.errors[:10]) + more)


def vertex_body(model) -> np.ndarray:
    """(n,) int64 body id of every node (bodies, then obstacles; -1 for a node in no tet that no collision
    vertex depends on)."""
    body = np.full(model.n_vertices, -1, np.int64)
    mesh, jmap = model.collision_mesh, model.surface_map
    for a in range(jmap.width):  # the nodes each surface vertex depends on belong to its body
        used = jmap.weights[:, a] != 0.0
        body[jmap.nodes[used, a]] = mesh.body[used]
    # interior vertices: take the body of a surface vertex of the same tet (tets never span bodies)
    for _ in range(4):
        unknown = body[model.tets] < 0
        if not unknown.any():
            break
        known = np.where(unknown, -1, body[model.tets]).max(axis=1)
        for c in range(4):
            rows = unknown[:, c] & (known >= 0)
            body[model.tets[rows, c]] = known[rows]
    return body


def check_tets(model, x: np.ndarray, report: SanityReport, relative_volume: float = 1e-8) -> None:
    """Errors for inverted tets (signed volume <= 0) and degenerate ones (|volume| below relative_volume times
    the cube of the tet's longest edge), at full positions x (n, 3) [m]."""
    if len(model.tets) == 0:
        return
    vol = tet_signed_volumes(x, model.tets)
    pts = x[model.tets]
    edges = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    longest = np.max([np.linalg.norm(pts[:, a] - pts[:, b], axis=1) for a, b in edges], axis=0)
    body = vertex_body(model)[model.tets[:, 0]]
    for k in np.flatnonzero(vol <= 0):
        report.errors.append(f"tet {k} of body {body[k]} is inverted (signed volume {vol[k]:.3e} m^3)")
    for k in np.flatnonzero((vol > 0) & (vol < relative_volume * longest ** 3)):
        report.errors.append(f"tet {k} of body {body[k]} is degenerate (volume {vol[k]:.3e} m^3, longest edge "
                             f"{longest[k]:.3e} m)")


def check_manifold(mesh, report: SanityReport) -> None:
    """Warnings for surface edges shared by more than two faces and for vertices whose faces form several fans
    (pinched), one per body and kind, naming them; errors for simulated bodies' edges with a single face (an open
    surface where a closed one is expected).

    Contact needs no manifold surface (every primitive pair of a triangle soup gets its barrier and CCD), so
    obstacles like IPC's ``hole.obj`` run. A simulated body needs a surface that bounds its volume: tet bodies
    take their boundary from the tets (always closed; non-manifold only where parts of the mesh meet at a lone
    vertex or edge, a hinge with no elastic stiffness: a warning); closed-surface bodies (embedded, affine) are
    checked when loaded (``scene.mesh_files.closed_surface``): their inside and volume need every edge in exactly
    two faces of opposite orientation. See docs/scenes.md, "Non-manifold meshes".
    """
    if mesh.n_faces == 0:
        return
    count = np.bincount(mesh.face_edges.ravel(), minlength=mesh.n_edges)
    has_face = np.zeros(mesh.n_edges, bool)
    has_face[mesh.face_edges.ravel()] = True
    for e in np.flatnonzero((count == 1) & ~mesh.edge_is_obstacle & has_face):
        a, b = mesh.edges[e]
        report.errors.append(f"edge {e} (vertices {a}, {b}) of body {mesh.body[a]} bounds a single face: the "
                             f"body's surface is not closed")
    bad_edges = np.flatnonzero(count > 2)
    on_bad_edge = np.zeros(mesh.n_vertices, bool)
    on_bad_edge[mesh.edges[bad_edges].ravel()] = True  # named with their edge
    pinched = [v for v in non_manifold_vertices(mesh.faces, mesh.face_edges, mesh.n_vertices) if not on_bad_edge[v]]
    for body in np.unique(mesh.body):
        edges = [int(e) for e in bad_edges if mesh.body[mesh.edges[e, 0]] == body]
        verts = [int(v) for v in pinched if mesh.body[v] == body]
        obstacle = bool(np.all(mesh.is_obstacle[mesh.body == body]))
        what, note = ("obstacle body", _NOTE_OBSTACLE) if obstacle else ("body", _NOTE_BODY)
        if edges:
            report.warnings.append(f"{what} {body} has {len(edges)} non-manifold edge(s) shared by more than two "
                                   f"faces: {_listing(edges, lambda e: f'{e} {tuple(mesh.edges[e].tolist())}')}"
                                   f"{note}")
        if verts:
            report.warnings.append(f"{what} {body} has {len(verts)} pinched vertex(es) whose faces form separate "
                                   f"fans: {_listing(verts, str)}{note}")


_NOTE_OBSTACLE = " (contact works on any triangle soup: it runs)"
_NOTE_BODY = (" (parts of the body meet only there: a tet mesh's parts joined at a lone vertex or edge turn freely "
              "about it)")


def _listing(items, name, limit: int = 10) -> str:
    shown = ", ".join(name(i) for i in items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def non_manifold_vertices(faces: np.ndarray, face_edges: np.ndarray, n_vertices: int) -> np.ndarray:
    """Vertices whose incident faces form more than one edge-connected fan (e.g. two cones touching at their
    tips), as a sorted (k,) int64 array. faces (f, 3) and face_edges (f, 3) as in ``CollisionMesh``; fans are
    joined only across edges shared by exactly two faces."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    f = len(faces)
    if f == 0:
        return np.zeros(0, np.int64)
    side_face = np.repeat(np.arange(f), 3)
    side_k = np.tile(np.arange(3), f)
    side_edge = face_edges.ravel()
    count = np.bincount(side_edge, minlength=int(side_edge.max()) + 1)
    keep = count[side_edge] == 2
    order = np.argsort(side_edge[keep], kind="stable")
    fa, ka = side_face[keep][order][0::2], side_k[keep][order][0::2]
    fb, kb = side_face[keep][order][1::2], side_k[keep][order][1::2]
    rows, cols = [], []
    for shift in (0, 1):  # both end vertices of the shared edge
        node_a = 3 * fa + (ka + shift) % 3
        vert = faces[fa, (ka + shift) % 3]
        local_b = np.where(faces[fb, kb] == vert, kb, (kb + 1) % 3)
        rows.append(node_a)
        cols.append(3 * fb + local_b)
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    graph = coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(3 * f, 3 * f))
    _, label = connected_components(graph, directed=False)
    corner_vertex = faces.ravel()
    pairs = np.unique(np.stack([corner_vertex, label], 1), axis=0)
    fans = np.bincount(pairs[:, 0], minlength=n_vertices)
    return np.flatnonzero(fans > 1).astype(np.int64)


def check_intersections(mesh, xs: np.ndarray, report: SanityReport, max_count: int = 10) -> None:
    """Errors for intersecting edge-face pairs and for vertices on the wrong side of (or on) a plane, at
    collision-vertex positions xs (n_surface, 3) [m]."""
    for e, f in find_intersections(mesh, xs, max_count=max_count):
        report.errors.append("initial intersection: " + describe_intersection(mesh, int(e), int(f)))
    for p, plane in enumerate(mesh.planes):
        d = (xs - plane.origin) @ plane.normal
        bad = np.flatnonzero((d <= 0) & ~mesh.is_obstacle)
        if len(bad):
            v = int(bad[np.argmin(d[bad])])
            report.errors.append(f"initial intersection: {len(bad)} vertices of bodies "
                                 f"{sorted(set(mesh.body[bad].tolist()))} lie on or behind plane {p} (vertex {v} "
                                 f"of body {mesh.body[v]} at signed distance {d[v]:.3e} m)")


def check_proximity(mesh, xs: np.ndarray, dhat: float, report: SanityReport) -> None:
    """A warning when some pair of primitives starts closer than dhat [m] (the barrier is active)."""
    coll = build_collisions(mesh, xs, dhat)
    if len(coll) == 0:
        return
    d = math.sqrt(max(minimum_distance_squared(coll, mesh, xs), 0.0))
    kinds = {KIND_NAMES[k]: int(c) for k, c in zip(*np.unique(coll.kind, return_counts=True))}
    v = coll.vertices[:, :2]
    bodies = sorted(set(mesh.body[v[v >= 0]].tolist()))
    report.warnings.append(f"{len(coll)} contact pairs {kinds} among bodies {bodies} start closer than dhat = "
                           f"{dhat:g} m (closest {d:.3e} m)")


def check_quasi_static_support(model, x: np.ndarray, prescribed: np.ndarray, dhat: float) -> None:
    """Raise ValueError naming the first simulated body that has neither a prescribed vertex nor a contact
    (closer than dhat [m]) at full positions x (n, 3): a quasi-static solve has no equilibrium for it."""
    mesh = model.collision_mesh
    body = vertex_body(model)
    held = set(body[np.asarray(prescribed, bool) & ~model.is_obstacle].tolist())
    xs = model.surface_positions(x)
    coll = build_collisions(mesh, xs, dhat)
    v = coll.vertices[coll.vertices >= 0] if len(coll) else np.zeros(0, np.int64)
    touching = set(mesh.body[v].tolist())
    for b in sorted(set(body[~model.is_obstacle].tolist())):
        if b not in held and b not in touching:
            raise ValueError(f"quasi-static solve: body {b} has no Dirichlet vertex and no contact, so it has no "
                             f"equilibrium (add_dirichlet, fixed=..., or start it within dhat of a support)")


def check_scene(model, state, dhat: float | None = None, *, raise_on_error: bool = True,
                warn: bool = True) -> SanityReport:
    """Check a scene before its first step.

    Args:
        model: ``ipcsim.model.Model``; state: its ``State`` (positions x (n, 3) [m]).
        dhat: activation distance [m] for the proximity warning (None skips it).
        raise_on_error: raise ValueError naming every problem found; warn: emit the warnings as
            ``SanityWarning``.
    Returns:
        the ``SanityReport``.
    """
    x = np.asarray(state.x, dtype=np.float64)
    if x.shape != (model.n_vertices, 3) or not np.all(np.isfinite(x)):
        raise ValueError(f"state.x must be a finite ({model.n_vertices}, 3) array, got shape {x.shape}")
    report = SanityReport()
    mesh = model.collision_mesh
    xs = model.surface_positions(x)
    check_tets(model, x, report)
    check_manifold(mesh, report)
    check_intersections(mesh, xs, report)
    if dhat is not None and report.ok:
        check_proximity(mesh, xs, float(dhat), report)
    if warn:
        for w in report.warnings:
            warnings.warn(w, SanityWarning, stacklevel=2)
    if raise_on_error:
        report.raise_if_errors()
    return report
