"""Automatic coarse embedding meshes (voxel cages) for Embedded IPC, and the fine body's volume samples.

A voxel cage at cell size h [m]: the fine shape's bounding box (grown by a margin) is cut into cubic cells of
side h, each cell is split into the 6 positively oriented Kuhn tets of ``box_tet_mesh`` (below; re-exported by ipcsim.model), and a tet
is kept when it holds fine material (a volume sample of the fine body), a fine surface vertex, or a margin point
(a fine surface vertex moved by the margin along the 26 axis/diagonal directions, so that every fine vertex lies
at least about the margin inside the cage). Unused grid vertices are dropped.

The fine body's volume is represented by quadrature samples (points (k, 3) [m], volumes (k,) [m^3]):
- a tet mesh: each fine tet split ``level`` times into 8 sub-tets of equal volume (8**level samples at their
  centroids); the centroid rule integrates linear functions exactly, so these samples give a coarse node the
  exact integral of its hat function over the fine body;
- a closed triangle surface: the centres of a regular grid inside the surface (generalised winding number
  >= 1/2), their volumes scaled so that they sum to the enclosed volume.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from .surface import boundary_faces, compact_vertices, tet_signed_volumes


@dataclass
class CageReport:
    """A generated coarse mesh: cell_size h [m], counts, the worst radius ratio [1] (3 r_in / r_circ: 1 for the
    regular tet, 0.717 for a Kuhn tet), the smallest tet volume [m^3], the margin asked for [m], the clearance [m]
    (smallest distance of a fine surface vertex to the cage boundary; negative: minus the largest distance of a
    vertex outside) and the number of fine surface points (vertices, margin points) outside the cage."""

    cell_size: float
    n_vertices: int
    n_tets: int
    worst_radius_ratio: float
    min_volume: float
    margin: float
    clearance: float
    n_outside: int

    def __str__(self) -> str:
        return (f"cell {self.cell_size:.4g} m: {self.n_vertices} vertices, {self.n_tets} tets, worst radius ratio "
                f"{self.worst_radius_ratio:.3f}, min volume {self.min_volume:.3g} m^3, clearance "
                f"{self.clearance:.3g} m (margin {self.margin:.3g} m), {self.n_outside} surface points outside")


def fine_surface(vertices, elements) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The fine collision surface of a tet mesh (t, 4) (its boundary) or a closed triangle surface (f, 3).

    Returns (surface vertex indices (n_s,) int64 into vertices, faces (f, 3) int64 over the surface vertices,
    outward for tet meshes).
    """
    e = np.asarray(elements, np.int64)
    if e.ndim != 2 or e.shape[1] not in (3, 4) or len(e) == 0:
        raise ValueError(f"fine body: elements must be (t, 4) tets or (f, 3) triangles, got shape {e.shape}")
    faces = boundary_faces(vertices, e) if e.shape[1] == 4 else e
    used, (f,) = compact_vertices(len(vertices), faces)
    return used, f


def subdivision_centroids(level: int) -> np.ndarray:
    """Barycentric coordinates (8**level, 4) [1] of the centroids of a tet's sub-tets after ``level`` midpoint
    (1 -> 8, equal volumes) subdivisions."""
    tets = np.eye(4)[None]  # (1, 4 corners, 4 barycentric)
    pairs = list(itertools.combinations(range(4), 2))
    for _ in range(level):
        a, b, c, d = (tets[:, i] for i in range(4))
        mid = {p: 0.5 * (tets[:, p[0]] + tets[:, p[1]]) for p in pairs}
        ab, ac, ad, bc, bd, cd = (mid[p] for p in pairs)
        children = [(a, ab, ac, ad), (ab, b, bc, bd), (ac, bc, c, cd), (ad, bd, cd, d),
                    (ac, bd, ab, bc), (ac, bd, bc, cd), (ac, bd, cd, ad), (ac, bd, ad, ab)]
        tets = np.concatenate([np.stack(ch, axis=1) for ch in children])
    return tets.mean(axis=1)


def volume_samples(vertices, elements, level: int = 2, spacing: float | None = None):
    """Quadrature samples of the fine body's volume: (points (k, 3) [m], volumes (k,) [m^3]).

    elements: (t, 4) tets (``level`` subdivisions, 8**level samples per tet) or (f, 3) closed triangles (grid of
    ``spacing`` [m], default 1/24 of the largest bounding-box side, inside by winding number).
    """
    v = np.asarray(vertices, np.float64)
    e = np.asarray(elements, np.int64)
    if e.shape[1] == 4:
        bary = subdivision_centroids(level)
        points = np.einsum("pk,tkd->tpd", bary, v[e]).reshape(-1, 3)
        volumes = np.repeat(np.abs(tet_signed_volumes(v, e)) / len(bary), len(bary))
        return points, volumes
    lo, hi = v.min(axis=0), v.max(axis=0)
    h = float(spacing) if spacing is not None else float(np.max(hi - lo)) / 24.0
    axes = [np.arange(a + 0.5 * h, b, h) for a, b in zip(lo, hi)]
    grid = np.stack(np.meshgrid(*axes, indexing="ij"), -1).reshape(-1, 3)
    points = grid[winding_number(grid, v, e) >= 0.5]
    if len(points) == 0:
        raise ValueError("fine body: no volume sample inside the triangle surface (is it closed? spacing?)")
    total = abs(enclosed_volume(v, e))
    return points, np.full(len(points), total / len(points))


def enclosed_volume(vertices, faces) -> float:
    """Signed volume [m^3] enclosed by a closed triangle surface (positive for outward faces)."""
    a, b, c = (np.asarray(vertices, np.float64)[np.asarray(faces)[:, i]] for i in range(3))
    return float(np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6.0)


def winding_number(points, vertices, faces, chunk: int = 4096) -> np.ndarray:
    """Generalised winding numbers (n,) [1] of points (n, 3) [m] w.r.t. a closed surface (sum of the faces'
    signed solid angles / 4 pi; |value| ~ 1 inside, ~ 0 outside, for either face orientation up to sign)."""
    p = np.asarray(points, np.float64)
    v = np.asarray(vertices, np.float64)
    f = np.asarray(faces, np.int64)
    out = np.empty(len(p))
    for lo in range(0, len(p), chunk):
        r = v[f][None] - p[lo:lo + chunk, None, None]  # (n, f, 3 corners, 3)
        a, b, c = r[..., 0, :], r[..., 1, :], r[..., 2, :]
        la, lb, lc = (np.linalg.norm(x, axis=-1) for x in (a, b, c))
        num = np.einsum("...i,...i->...", a, np.cross(b, c))
        den = la * lb * lc + np.einsum("...i,...i->...", a, b) * lc + np.einsum("...i,...i->...", b, c) * la \
            + np.einsum("...i,...i->...", c, a) * lb
        out[lo:lo + chunk] = np.abs(2.0 * np.arctan2(num, den).sum(axis=1) / (4.0 * np.pi))
    return out


def box_tet_mesh(size=(1.0, 1.0, 1.0), resolution=(4, 4, 4)) -> tuple[np.ndarray, np.ndarray]:
    """A box [0, sx] x [0, sy] x [0, sz] split into resolution cells, 6 positively oriented tets per cell.

    Returns (vertices (n, 3) [m], tets (m, 4) int64).
    """
    nx, ny, nz = (int(r) for r in resolution)
    grid = np.stack(np.meshgrid(*(np.linspace(0, s, n + 1) for s, n in zip(size, (nx, ny, nz))), indexing="ij"), -1)
    vertices = grid.reshape(-1, 3)

    def vid(i, j, k):
        return (i * (ny + 1) + j) * (nz + 1) + k

    # Kuhn subdivision of the unit cube: 6 tets around the main diagonal (0,0,0)-(1,1,1).
    paths = [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]
    i, j, k = (a.ravel() for a in np.meshgrid(np.arange(nx), np.arange(ny), np.arange(nz), indexing="ij"))
    tets = []
    for path in paths:
        corner = np.zeros((len(i), 3), np.int64)
        verts = [vid(i, j, k)]
        for axis in path:
            corner[:, axis] += 1
            verts.append(vid(i + corner[:, 0], j + corner[:, 1], k + corner[:, 2]))
        tets.append(np.stack(verts, 1))
    tets = np.vstack(tets)
    a, b, c, d = (vertices[tets[:, m]] for m in range(4))
    neg = np.einsum("ij,ij->i", np.cross(b - a, c - a), d - a) < 0
    tets[neg] = tets[neg][:, [0, 2, 1, 3]]
    return vertices, tets


def _kuhn_locate(points: np.ndarray, lo: np.ndarray, h: float, shape: np.ndarray):
    """The Kuhn tet of ``box_tet_mesh`` (grid corner lo (3,) [m], cell h [m], shape (3,) cells) holding each point
    (k, 3) [m]: cell (i, j, k) and the order of the local coordinates (largest first; ties: the lower axis first)
    name it. Returns (tet index (k,), corner grid-vertex ids (k, 4), barycentric weights (k, 4) [1])."""
    g = (points - lo) / h
    ijk = np.clip(np.floor(g).astype(np.int64), 0, shape - 1)
    local = g - ijk
    order = np.argsort(-local, axis=1, kind="stable")
    s = np.take_along_axis(local, order, axis=1)
    weights = np.stack([1.0 - s[:, 0], s[:, 0] - s[:, 1], s[:, 1] - s[:, 2], s[:, 2]], axis=1)
    step = np.eye(3, dtype=np.int64)
    c1 = ijk + step[order[:, 0]]
    c2 = c1 + step[order[:, 1]]
    corners = np.stack([ijk, c1, c2, ijk + 1], axis=1)
    vid = (corners[..., 0] * (shape[1] + 1) + corners[..., 1]) * (shape[2] + 1) + corners[..., 2]
    cell = (ijk[:, 0] * shape[1] + ijk[:, 1]) * shape[2] + ijk[:, 2]
    return _perm_rank(order) * int(np.prod(shape)) + cell, vid, weights  # paths: itertools.permutations order


def _perm_rank(order: np.ndarray) -> np.ndarray:
    """Rank (k,) of each permutation row (k, 3) in itertools.permutations(range(3)) order."""
    return order[:, 0] * 2 + (order[:, 1] > order[:, 2]).astype(np.int64)


def _margin_points(points: np.ndarray, margin: float) -> np.ndarray:
    if margin <= 0:
        return points
    dirs = np.array([d for d in itertools.product((-1, 0, 1), repeat=3) if any(d)], float)
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    return np.vstack([points, (points[:, None] + margin * dirs[None]).reshape(-1, 3)])


def _cage_at(samples, surface: np.ndarray, h: float, offset: np.ndarray):
    """The cage of one grid placement: (vertices, tets, number of surface points outside it, the smallest node
    volume share [1]: min over nodes of sum_p V_p w_p,node / (total volume / number of nodes))."""
    samples, volumes = samples
    lo = np.minimum(samples.min(axis=0), surface.min(axis=0)) - offset * h
    hi = np.maximum(samples.max(axis=0), surface.max(axis=0))
    shape = np.floor((hi - lo) / h).astype(np.int64) + 1
    grid, tets = box_tet_mesh(tuple(h * shape.astype(float)), tuple(int(n) for n in shape))
    held = np.zeros(len(tets), bool)
    tet, vid, w = _kuhn_locate(samples, lo, h, shape)
    held[tet] = True
    n_out = int(np.count_nonzero(~held[_kuhn_locate(surface, lo, h, shape)[0]]))
    used, (kept,) = compact_vertices(len(grid), tets[held])
    node_volume = np.bincount(vid.ravel(), (volumes[:, None] * w).ravel(), len(grid))[used]
    share = float(node_volume.min() / (volumes.sum() / len(used)))
    return grid[used] + lo, kept, n_out, share


def voxel_cage(vertices, elements, cell_size: float, margin: float | None = None, samples=None,
               placements: int = 2):
    """A voxel-cage coarse tet mesh around a fine body (tets (t, 4) or a closed triangle surface (f, 3)).

    Only tets holding fine material (a volume sample) are kept, so that every coarse node carries fine mass.
    The grid is tried at placements**3 offsets ((i + 1/2) h / placements); the chosen one has the fewest fine
    surface points (vertices and margin points) outside the cage, then the largest smallest node mass (the
    fine volume a node's hat function covers). Surface vertices still outside are embedded by extrapolation
    (``embed_points`` reports them).

    Args:
        cell_size: h [m], the side of the cubic cells.
        margin: [m], the clearance wanted around every fine surface vertex (default 0: each surface vertex lies strictly inside a kept tet, the clearance is reported): surface vertices
            moved by the margin along the 26 axis/diagonal directions are kept inside the cage too.
        samples: optional (points (k, 3) [m], volumes (k,) [m^3]) of the fine body (default ``volume_samples``).
    Returns (coarse vertices (n_c, 3) [m], coarse tets (m, 4) int64 positively oriented, CageReport).
    """
    v = np.asarray(vertices, np.float64)
    h = float(cell_size)
    if not h > 0:
        raise ValueError(f"voxel cage: cell_size must be positive, got {cell_size}")
    margin = 0.0 if margin is None else float(margin)
    sv, _ = fine_surface(v, elements)
    samples = volume_samples(v, elements) if samples is None else samples
    surface = _margin_points(v[sv], margin)
    best = None
    for offset in itertools.product((np.arange(placements) + 0.5) / placements, repeat=3):
        cage = _cage_at(samples, surface, h, np.asarray(offset))
        if best is None or (cage[2], -cage[3]) < (best[2], -best[3]):
            best = cage
    cv, ct, n_out, _ = best
    return cv, ct, cage_report(cv, ct, h, margin, clearance(v[sv], cv, ct), n_out)


def clearance(points, vertices, tets) -> float:
    """The smallest distance [m] of points (k, 3) [m] to the boundary of a tet mesh (negative: some point is
    outside, the value is then minus the largest distance outside)."""
    from .embedding import TetLocator, point_triangle_distance

    faces = boundary_faces(vertices, tets)
    p = np.asarray(points, np.float64)
    _, _, outside, _ = TetLocator(vertices, tets).locate(p)
    if outside.max() > 0:
        return -float(outside.max())
    pi = np.repeat(np.arange(len(p)), len(faces))
    fi = np.tile(np.arange(len(faces)), len(p))
    d = point_triangle_distance(p[pi], *(vertices[faces[fi, a]] for a in range(3)))
    return float(d.min())


def cage_report(vertices, tets, cell_size: float, margin: float, clearance_: float, n_out: int) -> CageReport:
    """Counts and quality of a coarse mesh (vertices (n, 3) [m], tets (m, 4))."""
    vol = tet_signed_volumes(vertices, tets)
    return CageReport(float(cell_size), len(vertices), len(tets), float(radius_ratio(vertices, tets).min()),
                      float(vol.min()), float(margin), float(clearance_), int(n_out))


def radius_ratio(vertices, tets) -> np.ndarray:
    """Radius ratio (m,) [1] = 3 r_in / r_circ of each tet (1: regular, -> 0: degenerate)."""
    c = np.asarray(vertices, np.float64)[np.asarray(tets)]
    a, b, d = c[:, 1] - c[:, 0], c[:, 2] - c[:, 0], c[:, 3] - c[:, 0]
    six_v = np.abs(np.einsum("ij,ij->i", a, np.cross(b, d)))
    faces = ((0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3))
    area = sum(0.5 * np.linalg.norm(np.cross(c[:, j] - c[:, i], c[:, k] - c[:, i]), axis=1) for i, j, k in faces)
    r_in = 0.5 * six_v / area  # 3 V / A
    num = (np.einsum("ij,ij->i", a, a)[:, None] * np.cross(b, d) + np.einsum("ij,ij->i", b, b)[:, None]
           * np.cross(d, a) + np.einsum("ij,ij->i", d, d)[:, None] * np.cross(a, b))
    r_circ = np.linalg.norm(num, axis=1) / (2.0 * six_v)
    return 3.0 * r_in / r_circ


def cage_for_vertex_count(vertices, elements, target_vertices: int, margin: float | None = None,
                          iterations: int = 40):
    """The voxel cage whose vertex count is closest to target_vertices (bisection on the cell size, then the
    best of the sizes tried). Returns (coarse vertices, coarse tets, CageReport)."""
    v = np.asarray(vertices, np.float64)
    samples = volume_samples(v, elements)
    sizes = {}
    extent = float(np.max(v.max(axis=0) - v.min(axis=0)))
    lo_h, hi_h = extent / 200.0, 2.0 * extent  # many vertices .. a single cell
    for _ in range(iterations):  # one grid placement while searching (fast), all placements at the end
        h = float(np.sqrt(lo_h * hi_h))
        n = voxel_cage(v, elements, h, margin, samples, placements=1)[2].n_vertices
        sizes[h] = abs(n - target_vertices)
        if n == target_vertices or hi_h / lo_h < 1.0 + 1e-4:
            break
        lo_h, hi_h = (h, hi_h) if n > target_vertices else (lo_h, h)
    return voxel_cage(v, elements, min(sizes, key=sizes.get), margin, samples)
