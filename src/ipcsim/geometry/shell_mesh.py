"""A soft-tissue shell from a surface patch with a hole: remesh, extrude inwards into prism layers, cut into tets.

Built for the actuated face of 000_face_pd_ipc_paper.txt (the lips are the two sides of the patch's hole, the
mouth), but nothing here knows about faces: the input is a triangulated surface patch of annulus topology
(one outer boundary loop, one inner boundary loop: the hole) in metres.

1. ``annulus_map``: a harmonic map of the patch onto a planar annulus: the hole's loop on the unit circle, the
   outer loop on a circle of radius R, each boundary vertex at its angle under the conformal map of the outside
   of a slit (the hole seen as a slit between its two corners; x = a cos(theta) along each side of the hole);
2. ``annulus_grid``: a structured polar grid in that annulus (columns at the angles of every ``step``-th hole
   vertex, or between them; rings at radii growing geometrically), triangulated, each grid point lifted onto
   the fine patch by its barycentric coordinates in the fine triangle that holds it (``PlanarLocator``). The
   first ring lies exactly on the hole's loop, so the two sides of the hole (two lips) stay apart: no grid
   triangle spans the hole;
3. ``extrude_shell``: every surface vertex is moved inwards along a smoothed normal direction (``smooth_unit``,
   ``tilt_towards_normals``) by a per-vertex thickness (reduced where tets would invert or be slivers), in
   ``n_layers`` equal steps; each triangle and layer gives a prism cut into three tets by the global-index rule
   (corners sorted by vertex id: (a, b, c, c'), (a, b, b', c'), (a, a', b', c')), so that neighbouring prisms
   cut their shared quad along the same diagonal and the mesh is conforming.

Vertex numbering of the shell: vertex s of the surface in layer l (l = 0 outer, l = n_layers inner) is
``l * n_surface + s``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import scipy.sparse.csgraph as csgraph
import scipy.sparse.linalg as spla
from scipy.spatial import cKDTree

from .surface import boundary_faces, face_edges, tet_signed_volumes
from .voxel_cage import radius_ratio


# ------------------------------------------------------------------------------------------- surface helpers
def vertex_normals(vertices, triangles) -> np.ndarray:
    """Area-weighted unit vertex normals (n, 3) [1] of triangles (f, 3) over vertices (n, 3) [m]."""
    v = np.asarray(vertices, np.float64)
    t = np.asarray(triangles, np.int64)
    fn = np.cross(v[t[:, 1]] - v[t[:, 0]], v[t[:, 2]] - v[t[:, 0]])  # 2 * area * unit normal
    n = np.zeros_like(v)
    for k in range(3):
        np.add.at(n, t[:, k], fn)
    return n / np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-300)


def smooth_unit(vectors, triangles, iterations: int) -> np.ndarray:
    """Unit vectors (n, 3) after ``iterations`` Jacobi steps v <- normalise(v + mean of the edge neighbours' v)
    over the edges of triangles (f, 3); vectors (n, 3)."""
    v = np.asarray(vectors, np.float64).copy()
    edges, _ = face_edges(triangles)
    n = len(v)
    adj = sp.coo_matrix((np.ones(2 * len(edges)), (np.r_[edges[:, 0], edges[:, 1]], np.r_[edges[:, 1], edges[:, 0]])),
                        shape=(n, n)).tocsr()
    deg = np.maximum(np.asarray(adj.sum(axis=1)).ravel(), 1.0)
    for _ in range(int(iterations)):
        v = v + (adj @ v) / deg[:, None]
        v /= np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-300)
    return v


def boundary_loops(triangles) -> list[np.ndarray]:
    """The boundary loops of a manifold triangle patch (f, 3), each an ordered (k,) int64 vertex array following
    the triangles' orientation (boundary edge a -> b of a triangle (a, b, c)); longest loop first."""
    t = np.asarray(triangles, np.int64)
    half = np.stack([t, np.roll(t, -1, axis=1)], axis=2).reshape(-1, 2)
    key = half[:, 0] * (t.max() + 1) + half[:, 1]
    rev = half[:, 1] * (t.max() + 1) + half[:, 0]
    border = half[~np.isin(key, rev)]
    nxt = dict(zip(border[:, 0].tolist(), border[:, 1].tolist()))
    if len(nxt) != len(border):
        raise ValueError("boundary_loops: the patch has a boundary vertex shared by two loops (not manifold)")
    loops, seen = [], set()
    for start in nxt:
        if start in seen:
            continue
        loop, cur = [], start
        while cur not in seen:
            seen.add(cur)
            loop.append(cur)
            cur = nxt[cur]
        loops.append(np.asarray(loop, np.int64))
    return sorted(loops, key=len, reverse=True)


def edge_distance(vertices, triangles, sources, unweighted: bool = False) -> np.ndarray:
    """Shortest-path distance (n,) [m] along the edges of triangles (f, 3) from the vertex set ``sources``
    (unweighted: the number of edges [1])."""
    v = np.asarray(vertices, np.float64)
    edges, _ = face_edges(triangles)
    w = np.ones(len(edges)) if unweighted else np.linalg.norm(v[edges[:, 0]] - v[edges[:, 1]], axis=1)
    g = sp.coo_matrix((w, (edges[:, 0], edges[:, 1])), shape=(len(v), len(v))).tocsr()
    return csgraph.dijkstra(g, directed=False, indices=np.asarray(sources, np.int64), min_only=True)


def cotangent_laplacian(vertices, triangles, min_weight: float | None = None) -> sp.csr_matrix:
    """The P1 stiffness matrix L (n, n) [1] of a triangle mesh (cotangent weights; L 1 = 0). min_weight: clamp
    each triangle's half-cotangent edge weights from below (a positive value gives an M-matrix)."""
    v = np.asarray(vertices, np.float64)
    t = np.asarray(triangles, np.int64)
    rows, cols, vals = [], [], []
    for k in range(3):
        i, j, o = t[:, (k + 1) % 3], t[:, (k + 2) % 3], t[:, k]
        a, b = v[i] - v[o], v[j] - v[o]
        cot = np.einsum("ij,ij->i", a, b) / np.maximum(np.linalg.norm(np.cross(a, b), axis=1), 1e-300)
        if min_weight is not None:
            cot = np.maximum(cot, min_weight)
        rows += [i, j, i, j]
        cols += [j, i, i, j]
        vals += [-0.5 * cot, -0.5 * cot, 0.5 * cot, 0.5 * cot]
    n = len(v)
    return sp.coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n, n)).tocsr()


# ------------------------------------------------------------------------------------------- annulus map
def slit_angles(points, centre, axis_x, axis_y, half_width: float) -> tuple[np.ndarray, np.ndarray]:
    """Angle [rad] and radius [1] of points (k, 3) [m] under the conformal map of the plane outside a slit onto the
    outside of the unit disc (inverse Joukowski map w = (z + sqrt(z - a) sqrt(z + a)) / a), z the point seen in
    the frame (centre, axis_x, axis_y), a = half_width [m] the slit's half length along axis_x."""
    d = np.asarray(points, np.float64) - centre
    z = (d @ axis_x + 1j * (d @ axis_y)) / half_width
    w = z + np.sqrt(z - 1.0) * np.sqrt(z + 1.0)
    small = np.abs(w) < 1.0  # the other branch
    w[small] = z[small] - np.sqrt(z[small] - 1.0) * np.sqrt(z[small] + 1.0)
    return np.angle(w), np.abs(w)


def _slit_loop_angles(points, i: int, j: int, up) -> np.ndarray:
    """Angles (k,) [rad] of a hole's loop (points (k, 3) in loop order) whose extreme points are i and j: each of
    the two chains between them is a side of the slit, x = a cos(theta) with x spread by arc length (the
    side whose points lie further along ``up`` gets theta in [0, pi], the other [-pi, 0]); the result is
    monotone along each chain whatever the chain's shape."""
    k = len(points)
    theta = np.zeros(k)
    seg = np.linalg.norm(np.roll(points, -1, axis=0) - points, axis=1)  # seg[a]: a -> a + 1
    chains = [(np.arange(i, i + ((j - i) % k) + 1) % k), (np.arange(j, j + ((i - j) % k) + 1) % k)]
    means = [points[c] @ up for c in chains]
    for c, mean in zip(chains, means):
        s = np.r_[0.0, np.cumsum(seg[c[:-1]])]
        sigma = s / s[-1]
        is_up = mean.mean() >= max(m.mean() for m in means)
        # the chain runs from point i to j or from j to i; theta(i) = 0 (x = +a), theta(j) = +-pi
        t = np.arccos(np.clip(1.0 - 2.0 * sigma, -1.0, 1.0)) if c[0] == i else np.pi - np.arccos(
            np.clip(1.0 - 2.0 * sigma, -1.0, 1.0))
        theta[c] = t if is_up else -t
    return theta


def _monotone_angles(theta) -> np.ndarray:
    """Angles (k,) [rad] of a loop made strictly monotone in loop order (a running extremum in the loop's overall
    sense; ties spread by 1e-6 of the mean step): a jagged outline keeps its vertices in order on the circle."""
    t = np.unwrap(np.asarray(theta, np.float64))
    sense = 1.0 if t[-1] >= t[0] else -1.0
    m = np.maximum.accumulate(sense * t)
    m = m + 1e-6 * (2.0 * np.pi / len(m)) * np.arange(len(m))
    return sense * m


def _loop_points(uv, loop, angles) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where the rays at ``angles`` (c,) [rad] cross the polygon of a boundary loop in the plane (loop vertices
    at increasing or decreasing angle): (first vertex (c,), second vertex (c,), fraction (c,) along the edge)."""
    loop = np.asarray(loop, np.int64)
    th = np.unwrap(np.arctan2(uv[loop, 1], uv[loop, 0]))
    if th[-1] < th[0]:
        loop, th = loop[::-1], th[::-1]
    lp, th_c = np.r_[loop, loop[0]], np.r_[th, th[0] + 2.0 * np.pi]
    a = (np.asarray(angles) - th[0]) % (2.0 * np.pi) + th[0]
    i = np.clip(np.searchsorted(th_c, a, side="right") - 1, 0, len(loop) - 1)
    frac = np.clip((a - th_c[i]) / (th_c[i + 1] - th_c[i]), 0.0, 1.0)
    return lp[i], lp[i + 1], frac


def _edge_triangles(triangles, a, b) -> tuple[np.ndarray, np.ndarray]:
    """For boundary edges (a, b) (c,): the triangle holding each and the slots (c, 2) of a and b in it."""
    t = np.asarray(triangles, np.int64)
    key = {}
    for f, tri in enumerate(t.tolist()):
        for k in range(3):
            key[(tri[k], tri[(k + 1) % 3])] = (f, k, (k + 1) % 3)
            key[(tri[(k + 1) % 3], tri[k])] = (f, (k + 1) % 3, k)
    hit = np.array([key[(int(i), int(j))] for i, j in zip(a, b)], np.int64).reshape(-1, 3)
    return hit[:, 0], hit[:, 1:]


def annulus_map(vertices, triangles, inner_loop, outer_loop, view) -> tuple[np.ndarray, float]:
    """Planar coordinates (n, 2) [1] of a patch of annulus topology, and the outer radius [1].

    The hole's loop goes onto the unit circle, the outer loop onto the circle of radius R, each boundary vertex at
    its angle under the conformal map of the outside of a slit (``slit_angles``): the slit joins the hole's two
    extreme points (its corners) seen along ``view`` (3,), R is the median radius of the outer loop under that map;
    the interior solves the Laplace equation (cotangent weights clamped to a small positive minimum, so that the
    system is an M-matrix).

    Args:
        vertices: (n, 3) [m]; triangles: (f, 3) int64.
        inner_loop: (k,) int64, the hole's boundary loop; outer_loop: (q,) int64, the outer boundary loop.
        view: (3,), the direction the patch is seen from (towards the viewer).
    """
    v = np.asarray(vertices, np.float64)
    inner, outer = np.asarray(inner_loop, np.int64), np.asarray(outer_loop, np.int64)
    view = np.asarray(view, np.float64) / np.linalg.norm(view)
    flat = v[inner] - np.outer(v[inner] @ view, view)
    i, j = np.unravel_index(np.argmax(np.linalg.norm(flat[:, None] - flat[None], axis=2)), (len(inner),) * 2)
    ex = flat[i] - flat[j]  # from corner j (x = -a) to corner i (x = +a)
    half = 0.5 * np.linalg.norm(ex)
    ex /= 2.0 * half
    ey = np.cross(view, ex)
    centre = 0.5 * (v[inner[i]] + v[inner[j]])
    th_in = _slit_loop_angles(v[inner], i, j, ey)
    th_out, r_out = slit_angles(v[outer], centre, ex, ey, half)
    th_out = _monotone_angles(th_out)
    radius = float(np.median(r_out))
    fixed = np.r_[inner, outer]
    uv_fixed = np.r_[np.c_[np.cos(th_in), np.sin(th_in)], radius * np.c_[np.cos(th_out), np.sin(th_out)]]
    L = cotangent_laplacian(v, triangles, min_weight=1e-2)
    free = np.setdiff1d(np.arange(len(v)), fixed)
    uv = np.zeros((len(v), 2))
    uv[fixed] = uv_fixed
    solve = spla.factorized(L[free][:, free].tocsc())
    rhs = -(L[free][:, fixed] @ uv_fixed)
    uv[free] = np.c_[solve(rhs[:, 0]), solve(rhs[:, 1])]
    return uv, radius


class PlanarLocator:
    """Point location in a planar triangulation: uv (n, 2), triangles (f, 3) (no overlaps)."""

    def __init__(self, uv, triangles):
        self.uv = np.asarray(uv, np.float64)
        self.tris = np.asarray(triangles, np.int64)
        c = self.uv[self.tris]
        self.centroids = c.mean(axis=1)
        self.radius = float(np.max(np.linalg.norm(c - self.centroids[:, None], axis=2)))
        self.tree = cKDTree(self.centroids)

    def barycentric(self, points, tri) -> np.ndarray:
        """Weights (k, 3) [1] of points (k, 2) in triangles tri (k,) (extrapolated outside)."""
        a, b, c = (self.uv[self.tris[tri, i]] for i in range(3))
        m = np.stack([b - a, c - a], axis=2)  # (k, 2, 2)
        st = np.linalg.solve(m, (points - a)[..., None])[..., 0]
        return np.c_[1.0 - st.sum(axis=1), st]

    def locate(self, points, tol: float = 1e-9) -> tuple[np.ndarray, np.ndarray]:
        """(triangle (k,) int64, weights (k, 3)) of points (k, 2); a point in no triangle (within tol on the
        weights) takes the candidate triangle with the largest smallest weight (clamped weights, renormalised)."""
        p = np.asarray(points, np.float64).reshape(-1, 2)
        cand = self.tree.query_ball_point(p, self.radius * (1 + 1e-9))
        tri = np.empty(len(p), np.int64)
        w = np.empty((len(p), 3))
        for i, c in enumerate(cand):
            c = np.asarray(sorted(c) or [int(self.tree.query(p[i])[1])], np.int64)
            wc = self.barycentric(np.broadcast_to(p[i], (len(c), 2)), c)
            j = int(np.argmax(wc.min(axis=1)))
            tri[i], w[i] = c[j], wc[j]
        out = w.min(axis=1) < -tol
        if out.any():
            w[out] = np.clip(w[out], 0.0, None)
            w[out] /= w[out].sum(axis=1, keepdims=True)
        return tri, w


# ------------------------------------------------------------------------------------------- polar grid
@dataclass
class AnnulusGrid:
    """A structured remesh of an annulus patch.

    Attributes:
        vertices: (n_rings * n_columns, 3) [m], grid points lifted onto the fine patch (ring-major: ring r,
            column j is r * n_columns + j); ring 0 lies on the hole's loop.
        triangles: (2 (n_rings - 1) n_columns, 3) int64, oriented like the fine patch.
        fine_triangle: (N,) int64, the fine triangle holding each grid point; fine_weights: (N, 3) [1] its
            barycentric weights (a field f on the fine vertices lifts as sum_a w_a f[fine_tri[a]]).
        ring: (N,) int64 ring index; column: (N,) int64 column index.
        uv: (N, 2) [1], the grid points in the annulus map's plane.
    """

    vertices: np.ndarray
    triangles: np.ndarray
    fine_triangle: np.ndarray
    fine_weights: np.ndarray
    ring: np.ndarray
    column: np.ndarray
    uv: np.ndarray

    def lift(self, fine_triangles, field) -> np.ndarray:
        """A field (n_fine, ...) on the fine vertices interpolated at the grid points: (N, ...)."""
        idx = np.asarray(fine_triangles, np.int64)[self.fine_triangle]  # (N, 3)
        f = np.asarray(field, np.float64)
        return np.einsum("na,na...->n...", self.fine_weights, f[idx])


def annulus_grid(vertices, triangles, uv, inner_loop, column_factor: float, n_rings: int,
                 outer_radius: float = 4.0, growth: float | None = None, outer_loop=None) -> AnnulusGrid:
    """Structured polar remesh of a fine patch mapped by ``annulus_map``.

    Args:
        vertices: (n, 3) [m], triangles (f, 3) int64: the fine patch; uv: (n, 2) its annulus map.
        inner_loop: (k,) int64, the hole's loop (as given to ``annulus_map``).
        column_factor: columns per hole vertex: 1 (one column through every hole vertex), 0.5 (every other one),
            2 (also one through each hole edge's midpoint: the hole's fine polygon is kept exactly).
        n_rings: rings from the hole (ring 0, radius 1) to the outer circle (radius outer_radius).
        growth: ratio of consecutive ring spacings (None: geometric radii, isotropic cells of a conformal map).
        outer_loop: (q,) int64, the outer boundary loop: the last ring is put on its polygon (None: the grid
            points of the last ring are located like the others, clamped onto the nearest fine triangle).
    """
    v = np.asarray(vertices, np.float64)
    inner = np.asarray(inner_loop, np.int64)
    th = np.unwrap(np.arctan2(uv[inner, 1], uv[inner, 0]))
    k = len(inner)
    if column_factor >= 1:
        sub = int(round(column_factor))
        t = np.arange(k * sub) / sub
        i0 = np.floor(t).astype(np.int64)
        th_end = np.r_[th, th[0] + 2 * np.pi * np.sign(th[-1] - th[0])]
        cols = th_end[i0] + (t - i0) * (th_end[i0 + 1] - th_end[i0])
    else:
        step = int(round(1.0 / column_factor))
        cols = th[::step]
    n_col = len(cols)
    if growth is None:
        radii = outer_radius ** (np.arange(n_rings) / (n_rings - 1))
    else:
        s = growth ** np.arange(n_rings - 1)
        radii = 1.0 + (outer_radius - 1.0) * np.r_[0.0, np.cumsum(s)] / s.sum()
    rr, cc = np.meshgrid(radii, cols, indexing="ij")
    pts = np.c_[(rr * np.cos(cc)).ravel(), (rr * np.sin(cc)).ravel()]
    ring, column = np.divmod(np.arange(len(pts)), n_col)
    loc = PlanarLocator(uv, triangles)
    tri, w = loc.locate(pts)
    t_idx = np.asarray(triangles, np.int64)
    # the first and last rings exactly on the fine boundary polygons (where the rays of the columns cross them)
    for r, loop in ((0, inner), (n_rings - 1, outer_loop)):
        if loop is None:
            continue
        a, b, frac = _loop_points(uv, loop, cols)
        f, slots = _edge_triangles(t_idx, a, b)
        rows = r * n_col + np.arange(n_col)
        tri[rows] = f
        w[rows] = 0.0
        w[rows, slots[:, 0]] = 1.0 - frac
        w[rows, slots[:, 1]] = frac
    xyz = np.einsum("na,nac->nc", w, v[t_idx[tri]])
    quads = []
    for r in range(n_rings - 1):
        a = r * n_col + np.arange(n_col)
        b = r * n_col + (np.arange(n_col) + 1) % n_col
        quads.append(np.c_[a, b, b + n_col, a + n_col])
    q = np.concatenate(quads)
    d02 = np.linalg.norm(xyz[q[:, 0]] - xyz[q[:, 2]], axis=1)
    d13 = np.linalg.norm(xyz[q[:, 1]] - xyz[q[:, 3]], axis=1)
    tris = np.where((d02 <= d13)[:, None, None],
                    np.stack([q[:, [0, 1, 2]], q[:, [0, 2, 3]]], axis=1),
                    np.stack([q[:, [0, 1, 3]], q[:, [1, 2, 3]]], axis=1)).reshape(-1, 3)
    # orient like the fine patch (its normals facing the viewer): compare with the lifted fine normals
    fine_n = vertex_normals(v, t_idx)
    gn = np.cross(xyz[tris[:, 1]] - xyz[tris[:, 0]], xyz[tris[:, 2]] - xyz[tris[:, 0]])
    ref = np.einsum("na,nac->nc", w, fine_n[t_idx[tri]])[tris].sum(axis=1)
    if np.sum(np.einsum("ij,ij->i", gn, ref)) < 0:
        tris = tris[:, [0, 2, 1]]
    return AnnulusGrid(xyz, tris, tri, w, ring, column, pts)


# ------------------------------------------------------------------------------------------- extrusion
@dataclass
class ShellReport:
    """Quality of an extruded shell: counts, min_volume [m^3] (> 0: no inverted tet), worst_radius_ratio [1]
    (3 r_in / r_circ), n_inverted (tets with volume <= 0), closed (every boundary edge shared by exactly two
    boundary triangles: the boundary surface is closed and edge-manifold)."""

    n_vertices: int
    n_tets: int
    min_volume: float
    worst_radius_ratio: float
    n_inverted: int
    closed: bool

    def __str__(self) -> str:
        return (f"{self.n_vertices} vertices, {self.n_tets} tets, min volume {self.min_volume:.3g} m^3, worst "
                f"radius ratio {self.worst_radius_ratio:.3g}, {self.n_inverted} inverted, closed={self.closed}")


def prism_tets(triangles, n_surface: int, n_layers: int) -> np.ndarray:
    """Tets (3 f n_layers, 4) int64 of the prisms between consecutive layers (global-index rule, see module doc);
    each prism's corners are sorted by surface index first, so shared quads are cut alike. Orientation is not
    fixed here (``orient_prism_tets``)."""
    t = np.sort(np.asarray(triangles, np.int64), axis=1)
    out = []
    for layer in range(n_layers):
        a, b, c = (t[:, i] + layer * n_surface for i in range(3))
        a2, b2, c2 = a + n_surface, b + n_surface, c + n_surface
        out.append(np.stack([np.c_[a, b, c, c2], np.c_[a, b, b2, c2], np.c_[a, a2, b2, c2]], axis=1).reshape(-1, 4))
    return np.concatenate(out)


def shell_report(vertices, tets) -> ShellReport:
    """Counts and quality of a shell (vertices (n, 3) [m], tets (m, 4))."""
    vol = tet_signed_volumes(vertices, tets)
    faces = boundary_faces(vertices, tets)
    edges = np.sort(np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]]), axis=1)
    _, counts = np.unique(edges, axis=0, return_counts=True)
    return ShellReport(len(vertices), len(tets), float(vol.min()), float(radius_ratio(vertices, tets).min()),
                       int(np.count_nonzero(vol <= 0)), bool(np.all(counts == 2)))


def tilt_towards_normals(directions, triangles, surface_vertices, min_dot: float = 0.5) -> np.ndarray:
    """Unit directions (n, 3) tilted towards the area-weighted vertex normals until each makes a dot product
    >= min_dot [1] with the unit normal of every triangle around its vertex (a prism extruded along them then
    has positive volume to first order in the thickness), in steps d <- normalise(d + 0.25 n)."""
    d = np.asarray(directions, np.float64).copy()
    x = np.asarray(surface_vertices, np.float64)
    t = np.asarray(triangles, np.int64)
    vn = vertex_normals(x, t)
    fn = np.cross(x[t[:, 1]] - x[t[:, 0]], x[t[:, 2]] - x[t[:, 0]])
    fn /= np.linalg.norm(fn, axis=1, keepdims=True)
    for _ in range(100):
        worst = np.full(len(d), np.inf)
        for k in range(3):
            np.minimum.at(worst, t[:, k], np.einsum("ij,ij->i", fn, d[t[:, k]]))
        low = worst < min_dot
        if not low.any():
            break
        d[low] += 0.25 * vn[low]
        d[low] /= np.linalg.norm(d[low], axis=1, keepdims=True)
    return d


def extrude_shell(surface_vertices, triangles, directions, thickness, n_layers: int, fix_rounds: int = 0,
                  min_volume_ratio: float = 0.0, min_fraction: float = 0.25):
    """Extrude a surface inwards into prism layers cut into tets.

    Args:
        surface_vertices: (n_s, 3) [m]; triangles (f, 3) int64 with normals pointing *out* of the shell.
        directions: (n_s, 3) [1] unit outward directions (smoothed normals); vertex s of layer l sits at
            x_s - (l / n_layers) thickness_s directions_s.
        thickness: (n_s,) [m].
        n_layers: prism layers (>= 1).
        fix_rounds: while some tet is inverted, or squashed (its volume below min_volume_ratio [1] times
            A h / 3, its share of a straight prism on its surface triangle of area A, h = the layer height at the
            triangle's corners), up to this many times, shrink the thickness of the corners of those tets by 0.8,
            not below min_fraction of the given thickness (a fold-over of the inner layers, or nearly: thinner
            there; a tet that the limit leaves inverted shows in the report).
    Returns:
        vertices (n_s (n_layers + 1), 3) [m], tets (3 f n_layers, 4) int64 (positively oriented wherever the
        prism is not folded over), ShellReport, the thickness used (n_s,) [m].
    """
    x = np.asarray(surface_vertices, np.float64)
    d = np.asarray(directions, np.float64)
    h0 = np.asarray(thickness, np.float64).reshape(-1, 1)
    h = h0.copy()
    n_s = len(x)
    tets = _oriented_prism_tets(x, triangles, n_layers)
    for _ in range(fix_rounds + 1):
        verts = np.concatenate([x - (layer / n_layers) * h * d for layer in range(n_layers + 1)])
        bad = tets[tet_signed_volumes(verts, tets) <= min_volume_ratio * _straight_volumes(x, triangles, h, n_layers)]
        bad = bad % n_s
        if len(bad) == 0:
            break
        idx = np.unique(bad)
        h[idx] = np.maximum(0.8 * h[idx], min_fraction * h0[idx])
    return verts, tets, shell_report(verts, tets), h.ravel()


def _straight_volumes(x, triangles, h, n_layers: int) -> np.ndarray:
    """A h / 3 [m^3] per tet of ``prism_tets``: a third of the straight prism on each surface triangle (area A)
    with the layer height h = mean corner thickness / n_layers."""
    t = np.asarray(triangles, np.int64)
    area = 0.5 * np.linalg.norm(np.cross(x[t[:, 1]] - x[t[:, 0]], x[t[:, 2]] - x[t[:, 0]]), axis=1)
    per_tri = area * h.ravel()[t].mean(axis=1) / (3.0 * n_layers)
    return np.tile(np.repeat(per_tri, 3), n_layers)


def _oriented_prism_tets(x, triangles, n_layers: int) -> np.ndarray:
    """``prism_tets`` oriented positively for an unfolded extrusion (each prism along its triangle's normal)."""
    n_s = len(x)
    tets = prism_tets(triangles, n_s, n_layers)
    # orientation from an unfolded reference: each prism extruded along its own triangle's normal
    t = np.sort(np.asarray(triangles, np.int64), axis=1)
    fn = np.cross(x[t[:, 1]] - x[t[:, 0]], x[t[:, 2]] - x[t[:, 0]])
    orig = np.asarray(triangles, np.int64)
    orig_n = np.cross(x[orig[:, 1]] - x[orig[:, 0]], x[orig[:, 2]] - x[orig[:, 0]])
    sign_fix = np.sign(np.einsum("ij,ij->i", fn, orig_n))
    fn *= sign_fix[:, None]  # outward normal of each triangle (length 2 area)
    unit = fn / np.linalg.norm(fn, axis=1, keepdims=True)
    scale = np.sqrt(np.linalg.norm(fn, axis=1))
    ref_layer = np.repeat(np.arange(n_layers), 3 * len(t))
    tri_of = np.tile(np.repeat(np.arange(len(t)), 3), n_layers)
    s_idx, l_idx = tets % n_s, tets // n_s
    ref = x[s_idx] - (l_idx[..., None] - ref_layer[:, None, None]) * (scale[tri_of] * 0.5)[:, None, None] \
        * unit[tri_of][:, None, :]
    a, b, c, dd = (ref[:, i] for i in range(4))
    neg = np.einsum("ij,ij->i", np.cross(b - a, c - a), dd - a) < 0
    tets[neg] = tets[neg][:, [0, 1, 3, 2]]
    return tets
