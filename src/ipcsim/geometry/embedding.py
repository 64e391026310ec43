"""Point location in a coarse tet mesh and the embedding x = J q of a fine surface (004 §III-D, Eq. 13-14).

Each fine point p (a collision-surface vertex, or a quadrature sample of the fine body's volume) is written in
the barycentric frame of one coarse tet T = (i0, i1, i2, i3):

    p = sum_a w_a q_{i_a},   sum_a w_a = 1                                          (004 Eq. 13)

- p inside one or more tets (within a tolerance on the weights, so points on shared faces, edges and corners
  are found by every tet that holds them): the lowest tet index among those is chosen (deterministic);
- p outside every tet (a fine vertex slightly outside the coarse mesh): the nearest tet (Euclidean distance,
  lowest index on ties) with its barycentric weights *extrapolated* (some w_a < 0, still sum_a w_a = 1, so
  J q_rest reproduces p exactly); such points are counted and their largest distance is reported.

Candidate tets come from a uniform grid of the tets' bounding boxes (``TetGrid``; cells of about the median
box size per axis, each box grown by a relative 1e-6 so that points within the weight tolerance are kept): a
tet holding p has p in its box, so the tets listed in p's cell are every candidate; the barycentric tests are
vectorised over (point, candidate) pairs, in chunks. (A ball query of the largest centroid-to-corner radius on
a cKDTree of centroids, the earlier method, gave the same candidates and more: for the plate-rack demo's long
prism cages, 1.2 mm triangles by 10 mm, about 700 candidates a point and 25 s of a 28 s scene build.) The
cKDTree on the centroids still finds the nearest tet of a point outside every tet.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial import cKDTree

from .surface_map import SurfaceMap

#: Default tolerance on the barycentric weights [1] for "inside" (absorbs round-off on shared faces/edges).
WEIGHT_TOL = 1e-10
_CHUNK_PAIRS = 2_000_000
#: relative growth of a tet's bounding box in ``TetGrid`` (points within the weight tolerance of a tet)
BOX_GROWTH = 1e-6


@dataclass
class EmbeddingReport:
    """Summary of a point location.

    Attributes:
        n_points: number of located points.
        n_outside: points outside every coarse tet (extrapolated weights).
        max_distance_outside: [m], the largest distance of such a point to its tet (0 if none).
        n_shared: points held by more than one tet within the tolerance (on shared faces, edges, corners).
        min_weight: [1], the smallest weight of any point (< 0 only for extrapolated points).
    """

    n_points: int
    n_outside: int
    max_distance_outside: float
    n_shared: int
    min_weight: float

    def __str__(self) -> str:
        return (f"{self.n_points} points, {self.n_shared} on shared faces/edges/corners, {self.n_outside} outside "
                f"(max distance {self.max_distance_outside:.3g} m), min weight {self.min_weight:.3g}")


class TetLocator:
    """Point location in a tet mesh; vertices (n, 3) [m], tets (m, 4) int (any orientation, non-degenerate)."""

    def __init__(self, vertices, tets):
        self.vertices = np.ascontiguousarray(vertices, np.float64)
        self.tets = np.ascontiguousarray(tets, np.int64)
        if self.tets.ndim != 2 or self.tets.shape[1] != 4 or len(self.tets) == 0:
            raise ValueError(f"embedding: coarse tets must be a non-empty (m, 4) array, got {self.tets.shape}")
        if self.tets.min() < 0 or self.tets.max() >= len(self.vertices):
            raise ValueError(f"embedding: coarse tet indices must lie in 0..{len(self.vertices) - 1}")
        corners = self.vertices[self.tets]  # (m, 4, 3)
        edges = (corners[:, 1:] - corners[:, :1]).transpose(0, 2, 1)  # (m, 3, 3), columns q_a - q_0
        det = np.linalg.det(edges)
        scale = np.max(np.linalg.norm(edges, axis=1), axis=1) ** 3
        bad = np.flatnonzero(~(np.abs(det) > 1e-14 * scale))
        if bad.size:
            raise ValueError(f"embedding: coarse tet {bad[0]} is degenerate (zero volume)")
        self.corners = corners
        self.inverse = np.linalg.inv(edges)  # (m, 3, 3) [1/m]
        self.centroids = corners.mean(axis=1)
        self.radius = float(np.max(np.linalg.norm(corners - self.centroids[:, None], axis=2)))  # r_max [m]
        self.tree = cKDTree(self.centroids)
        self._boxes = (corners.min(axis=1), corners.max(axis=1))
        self._grids = {}  # box growth -> TetGrid

    def grid(self, tol: float = WEIGHT_TOL) -> "TetGrid":
        """The ``TetGrid`` of the tets' boxes grown by max(``BOX_GROWTH``, 100 tol) of their extent (a point with
        every weight >= -tol lies within about tol times the tet's extent of it)."""
        growth = max(BOX_GROWTH, 100.0 * tol)
        if growth not in self._grids:
            self._grids[growth] = TetGrid(*self._boxes, growth)
        return self._grids[growth]

    def weights(self, points: np.ndarray, tet_index: np.ndarray) -> np.ndarray:
        """Barycentric weights (k, 4) [1] of points (k, 3) [m] in the tets tet_index (k,) (extrapolated outside)."""
        local = np.einsum("kij,kj->ki", self.inverse[tet_index], points - self.corners[tet_index, 0])
        return np.concatenate([1.0 - local.sum(axis=1, keepdims=True), local], axis=1)

    def locate(self, points, tol: float = WEIGHT_TOL):
        """Locate points (n, 3) [m].

        Returns (tet (n,) int64, weights (n, 4) float64 [1], distance_outside (n,) float64 [m] (0 inside),
        n_holding (n,) int64: how many tets hold each point within tol).
        """
        p = np.ascontiguousarray(points, np.float64).reshape(-1, 3)
        n = len(p)
        tet = np.full(n, -1, np.int64)
        n_holding = np.zeros(n, np.int64)
        grid = self.grid(tol)
        for lo, hi in self._chunks(n, grid):
            pt, tt = grid.candidates(p[lo:hi])
            if pt.size == 0:
                continue
            pt += lo
            inside = self.weights(p[pt], tt).min(axis=1) >= -tol
            pt, tt = pt[inside], tt[inside]
            np.add.at(n_holding, pt, 1)
            best = np.full(n, np.iinfo(np.int64).max)
            np.minimum.at(best, pt, tt)  # the lowest tet index holding the point
            got = best[lo:hi] < np.iinfo(np.int64).max
            tet[lo:hi][got] = best[lo:hi][got]
        distance = np.zeros(n)
        out = np.flatnonzero(tet < 0)
        if out.size:
            tet[out], distance[out] = self._nearest(p[out])
        return tet, self.weights(p, tet), distance, n_holding

    def _chunks(self, n: int, grid: "TetGrid"):
        step = max(1, _CHUNK_PAIRS // (4 * grid.max_per_cell))
        for lo in range(0, n, step):
            yield lo, min(n, lo + step)

    def _nearest(self, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The nearest tet (lowest index on ties) and its distance [m] for points (k, 3) outside every tet."""
        _, first = self.tree.query(p)
        d0 = point_tet_distance(p, self.corners[first])
        cand = self.tree.query_ball_point(p, d0 + self.radius * (1.0 + 1e-9))
        tet = np.empty(len(p), np.int64)
        dist = np.empty(len(p))
        for i, c in enumerate(cand):
            c = np.sort(np.asarray(c, np.int64))
            d = point_tet_distance(np.broadcast_to(p[i], (len(c), 3)), self.corners[c])
            j = int(np.argmin(d))  # argmin returns the first minimum: the lowest index on ties
            tet[i], dist[i] = c[j], d[j]
        return tet, dist


class TetGrid:
    """A uniform grid over tet bounding boxes (lo, hi: (m, 3) [m] each) for point location: cells of the median
    box extent per axis; every tet is listed in each cell its box (grown by ``BOX_GROWTH`` of its extent)
    overlaps. ``candidates(points)`` gives, for points (k, 3) [m], the (point, tet) pairs of each point's cell: a
    superset of the tets whose box holds the point."""

    def __init__(self, lo: np.ndarray, hi: np.ndarray, growth: float = BOX_GROWTH):
        ext = hi - lo
        grow = growth * ext.max(axis=1, keepdims=True) + 1e-300
        lo, hi = lo - grow, hi + grow
        self.origin = lo.min(axis=0)
        self.size = np.maximum(np.median(hi - lo, axis=0), 1e-9 * float(np.max(hi - lo)) + 1e-300)
        while True:  # coarser cells while a few huge boxes would be listed in too many of them
            i0 = np.floor((lo - self.origin) / self.size).astype(np.int64)
            i1 = np.floor((hi - self.origin) / self.size).astype(np.int64)
            self.shape = i1.max(axis=0) + 1
            span = i1 - i0 + 1  # (m, 3) cells per axis
            count = span.prod(axis=1)
            if count.sum() <= 64 * len(lo) + 4096 and float(np.prod(self.shape.astype(float))) < 2.0 ** 60:
                break
            self.size = 2.0 * self.size
        tet = np.repeat(np.arange(len(lo)), count)
        k = np.arange(len(tet)) - np.repeat(np.cumsum(count) - count, count)  # the pair's rank in its tet
        sy, sz = np.repeat(span[:, 1], count), np.repeat(span[:, 2], count)
        cell = np.repeat(i0, count, axis=0) + np.column_stack([k // (sy * sz), (k // sz) % sy, k % sz])
        key = self._key(cell)
        order = np.argsort(key, kind="stable")  # tets in increasing index within a cell
        self.keys, self.tets = key[order], tet[order]
        bounds = np.flatnonzero(np.diff(self.keys)) + 1
        self.max_per_cell = int(np.diff(np.concatenate([[0], bounds, [len(self.keys)]])).max(initial=1))

    def _key(self, cell: np.ndarray) -> np.ndarray:
        return (cell[:, 0] * self.shape[1] + cell[:, 1]) * self.shape[2] + cell[:, 2]

    def candidates(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(point index (q,) int64, tet (q,) int64): every tet listed in the cell of each point (k, 3) [m]."""
        cell = np.floor((points - self.origin) / self.size).astype(np.int64)
        ok = np.all((cell >= 0) & (cell < self.shape), axis=1)
        key = self._key(np.where(ok[:, None], cell, 0))
        start = np.searchsorted(self.keys, key, side="left")
        stop = np.searchsorted(self.keys, key, side="right")
        counts = np.where(ok, stop - start, 0)
        pt = np.repeat(np.arange(len(points)), counts)
        offset = np.arange(len(pt)) - np.repeat(np.cumsum(counts) - counts, counts)
        return pt, self.tets[np.repeat(start, counts) + offset]


def embed_points(points, coarse_vertices, coarse_tets, tol: float = WEIGHT_TOL,
                 locator: TetLocator | None = None) -> tuple[SurfaceMap, EmbeddingReport]:
    """The embedding x = J q of fine points (n, 3) [m] in a coarse tet mesh (vertices (n_c, 3) [m], tets (m, 4)).

    Returns (SurfaceMap with 4 weights per point over the n_c coarse vertices, EmbeddingReport). tol [1] is the
    slack on the weights for "inside".
    """
    loc = locator if locator is not None else TetLocator(coarse_vertices, coarse_tets)
    tet, w, dist, n_holding = loc.locate(points, tol)
    report = EmbeddingReport(len(tet), int(np.count_nonzero(dist > 0)), float(dist.max(initial=0.0)),
                             int(np.count_nonzero(n_holding > 1)), float(w.min()) if w.size else 1.0)
    return SurfaceMap(loc.tets[tet], w, len(loc.vertices)), report


def point_triangle_distance(p, a, b, c) -> np.ndarray:
    """Euclidean distance (k,) [m] of points p (k, 3) [m] to triangles (a, b, c), each (k, 3) [m]
    (closest-point region tests: vertices, edges, interior)."""
    ab, ac, ap = b - a, c - a, p - a
    d1, d2 = _dot(ab, ap), _dot(ac, ap)
    bp = p - b
    d3, d4 = _dot(ab, bp), _dot(ac, bp)
    cp = p - c
    d5, d6 = _dot(ab, cp), _dot(ac, cp)
    va, vb, vc = d3 * d6 - d5 * d4, d5 * d2 - d1 * d6, d1 * d4 - d3 * d2
    denom = va + vb + vc
    safe = np.where(denom == 0.0, 1.0, denom)
    v, w = vb / safe, vc / safe  # interior (face region) coordinates
    # edge regions (clamped parameters), then vertex regions, checked from the least to the most specific
    t_ab = np.clip(d1 / np.where(d1 - d3 == 0, 1, d1 - d3), 0, 1)
    t_ac = np.clip(d2 / np.where(d2 - d6 == 0, 1, d2 - d6), 0, 1)
    t_bc = np.clip((d4 - d3) / np.where((d4 - d3) + (d5 - d6) == 0, 1, (d4 - d3) + (d5 - d6)), 0, 1)
    closest = a + v[:, None] * ab + w[:, None] * ac
    for region, point in ((va <= 0) & (d4 - d3 >= 0) & (d5 - d6 >= 0), b + t_bc[:, None] * (c - b)), \
                         ((vb <= 0) & (d2 >= 0) & (d6 <= 0), a + t_ac[:, None] * ac), \
                         ((d6 >= 0) & (d5 <= d6), c), ((vc <= 0) & (d1 >= 0) & (d3 <= 0), a + t_ab[:, None] * ab), \
                         ((d3 >= 0) & (d4 <= d3), b), ((d1 <= 0) & (d2 <= 0), a):
        closest = np.where(region[:, None], point, closest)
    return np.linalg.norm(p - closest, axis=1)


def point_tet_distance(p, corners) -> np.ndarray:
    """Distance (k,) [m] of points p (k, 3) [m] to solid tets corners (k, 4, 3) [m]; 0 inside."""
    p = np.asarray(p, np.float64)
    faces = ((0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3))
    d = np.min([point_triangle_distance(p, corners[:, i], corners[:, j], corners[:, k]) for i, j, k in faces],
               axis=0)
    edges = (corners[:, 1:] - corners[:, :1]).transpose(0, 2, 1)
    local = np.linalg.solve(edges, (p - corners[:, 0])[..., None])[..., 0]
    inside = (local.min(axis=1) >= 0) & (local.sum(axis=1) <= 1)
    return np.where(inside, 0.0, d)


def _dot(a, b):
    return np.einsum("ij,ij->i", a, b)
