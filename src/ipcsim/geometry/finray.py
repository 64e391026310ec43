"""FinRay fingers (004 §IV-B): a planar profile of two flexible flanks joined at the tip, a base bar and inclined
cross ribs, triangulated in 2D and extruded into a tet mesh.

Frame: the profile lies in the x-y plane, the base (mounting face) on y = 0 spanning x in [-w/2, w/2], the tip at
(0, length); the finger is extruded along z over [0, thickness]. Units: metres.

Default dimensions are those of a common 3D-printed FinRay finger (about 100 mm long, 40-50 mm at the base, 20 mm
wide, walls of 1.5-2 mm, ribs of 1-1.5 mm, 4-6 ribs parallel to the base as in Festo's original Fin Ray design;
``rib_angle`` tilts them). They are typical values, not a copy of one product.

Material of a printed TPU finger (``TPU_MATERIAL``): TPU 95A (Shore 95A, e.g. Ultimaker "TPU 95A" technical data
sheet: tensile modulus 26 MPa, density 1.22 g/cm^3; NinjaTek NinjaFlex 85A data sheet: 12 MPa, 1.19 g/cm^3). We use
E = 26 MPa, rho = 1220 kg/m^3 from the TPU 95A sheet and nu = 0.45 (elastomers are nearly incompressible; the data
sheets give no Poisson ratio, 0.45 is the value 004 uses for its soft bodies and keeps linear tets from locking).
"""
from __future__ import annotations

import numpy as np
from scipy.spatial import Delaunay

TPU_MATERIAL = {"youngs_modulus": 26e6, "poisson_ratio": 0.45, "density": 1220.0}


def _halfplane(p: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, float]:
    """Half-plane (n (2,), c) = {x : n . x <= c} to the left of the directed line p -> q; n (unit) points to its
    right (outward for an edge of a counter-clockwise polygon)."""
    d = q - p
    n = np.array([d[1], -d[0]]) / np.hypot(d[0], d[1])
    return n, float(n @ p)


def _clip(poly: np.ndarray, n: np.ndarray, c: float) -> np.ndarray:
    """Clip a convex polygon (k, 2) [m] by {n . x <= c} (Sutherland-Hodgman)."""
    out = []
    for i in range(len(poly)):
        a, b = poly[i], poly[(i + 1) % len(poly)]
        fa, fb = n @ a - c, n @ b - c
        if fa <= 0:
            out.append(a)
        if fa * fb < 0:
            out.append(a + fa / (fa - fb) * (b - a))
    return np.array(out).reshape(-1, 2)


def _area(poly: np.ndarray) -> float:
    x, y = poly[:, 0], poly[:, 1]
    return 0.5 * float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y))


def finray_profile(length=0.1, base_width=0.045, flank_thickness=0.0018, rib_thickness=0.0012, n_ribs=5,
                   rib_angle=0.0, base_thickness=None) -> tuple[np.ndarray, list[np.ndarray]]:
    """The profile as (outer (3, 2) [m] counter-clockwise triangle, holes: list of (k, 2) [m] convex
    counter-clockwise polygons, the n_ribs + 1 cells between base bar, ribs and flanks).

    rib_angle [rad]: the ribs' angle to the base (x axis), positive rising towards +x; rib i's centre line passes
    through the finger's axis x = 0 at equal spacing between the base bar and the inner tip. base_thickness [m]
    of the base bar (default 2 * flank_thickness).
    """
    if not (length > 0 and base_width > 0 and flank_thickness > 0 and rib_thickness > 0 and n_ribs >= 0):
        raise ValueError("finray: length, base_width, flank and rib thickness must be positive, n_ribs >= 0")
    tb = 2.0 * flank_thickness if base_thickness is None else float(base_thickness)
    a, b, t = np.array([-base_width / 2, 0.0]), np.array([base_width / 2, 0.0]), np.array([0.0, length])
    outer = np.array([a, b, t])
    inner = outer.copy()
    for p, q, off in ((a, b, tb), (b, t, flank_thickness), (t, a, flank_thickness)):
        n, c = _halfplane(p, q)
        inner = _clip(inner, n, c - off)
    if len(inner) < 3 or _area(inner) <= 0:
        raise ValueError("finray: the flanks and the base bar leave no hollow inside the finger")
    y0, y1 = inner[:, 1].min(), inner[:, 1].max()
    centres = y0 + (y1 - y0) * np.arange(1, n_ribs + 1) / (n_ribs + 1)
    d = np.array([np.cos(rib_angle), np.sin(rib_angle)])
    nrm = np.array([-d[1], d[0]])  # the rib's normal, pointing towards the tip
    lows = [-np.inf] + [float(nrm @ (0.0, y)) + rib_thickness / 2 for y in centres]
    highs = [float(nrm @ (0.0, y)) - rib_thickness / 2 for y in centres] + [np.inf]
    holes = []
    for lo, hi in zip(lows, highs):
        cell = inner
        if np.isfinite(lo):
            cell = _clip(cell, -nrm, -lo)
        if np.isfinite(hi):
            cell = _clip(cell, nrm, hi)
        if len(cell) < 3 or _area(cell) <= 1e-3 * rib_thickness ** 2:
            raise ValueError("finray: ribs too thick or too many for the hollow (a cell vanishes)")
        holes.append(cell)
    return outer, holes


def _inside_convex(points: np.ndarray, poly: np.ndarray, slack: float = 0.0) -> np.ndarray:
    """(k,) bool: points (k, 2) inside the counter-clockwise convex polygon poly grown by slack [m]."""
    inside = np.ones(len(points), bool)
    for i in range(len(poly)):
        n, c = _halfplane(poly[i], poly[(i + 1) % len(poly)])
        inside &= points @ n <= c + slack
    return inside


def _edge_points(poly: np.ndarray, h: float) -> np.ndarray:
    pts = []
    for i in range(len(poly)):
        p, q = poly[i], poly[(i + 1) % len(poly)]
        k = max(1, int(np.ceil(np.hypot(*(q - p)) / h)))
        pts.append(p + np.linspace(0.0, 1.0, k, endpoint=False)[:, None] * (q - p))
    return np.concatenate(pts)


def _boundary_distance(points: np.ndarray, polys: list[np.ndarray]) -> np.ndarray:
    best = np.full(len(points), np.inf)
    for poly in polys:
        for i in range(len(poly)):
            p, q = poly[i], poly[(i + 1) % len(poly)]
            d = q - p
            s = np.clip((points - p) @ d / (d @ d), 0.0, 1.0)
            best = np.minimum(best, np.linalg.norm(points - p - s[:, None] * d, axis=1))
    return best


def triangulate_profile(outer: np.ndarray, holes: list[np.ndarray], h: float) -> tuple[np.ndarray, np.ndarray]:
    """Triangles of the profile (outer minus holes) with edges of about h [m]: boundary points every <= h, an
    equilateral lattice inside, Delaunay, triangles kept whose centroid is in the (exact) profile. Returns
    (points (n, 2) [m], triangles (m, 3) counter-clockwise). Raises if the kept area misses the profile's area
    (a Delaunay edge crossing a hole boundary)."""
    polys = [outer] + list(holes)
    bnd = np.concatenate([_edge_points(p, h) for p in polys])
    lo, hi = outer.min(axis=0), outer.max(axis=0)
    ys = np.arange(lo[1], hi[1] + h, h * np.sqrt(3) / 2)
    lattice = np.concatenate([np.column_stack([np.arange(lo[0] + (j % 2) * h / 2, hi[0] + h, h),
                                               np.full(len(np.arange(lo[0] + (j % 2) * h / 2, hi[0] + h, h)), y)])
                              for j, y in enumerate(ys)])
    keep = _solid(lattice, outer, holes) & (_boundary_distance(lattice, polys) > 0.6 * h)
    pts = np.concatenate([bnd, lattice[keep]])
    tri = Delaunay(pts).simplices.astype(np.int64)
    tri = tri[_solid(pts[tri].mean(axis=1), outer, holes)]
    e1, e2 = pts[tri[:, 1]] - pts[tri[:, 0]], pts[tri[:, 2]] - pts[tri[:, 0]]
    cross = e1[:, 0] * e2[:, 1] - e1[:, 1] * e2[:, 0]
    tri[cross < 0] = tri[cross < 0][:, [0, 2, 1]]
    area = 0.5 * np.abs(cross).sum()
    exact = _area(outer) - sum(_area(p) for p in holes)
    if abs(area - exact) > 1e-9 * exact:
        raise ValueError(f"finray: triangulation misses the profile (area {area:.6e} vs {exact:.6e} m^2); "
                         "use a finer resolution")
    used = np.unique(tri)
    remap = np.full(len(pts), -1, np.int64)
    remap[used] = np.arange(len(used))
    return pts[used], remap[tri]


def _solid(points: np.ndarray, outer: np.ndarray, holes: list[np.ndarray]) -> np.ndarray:
    inside = _inside_convex(points, outer)
    for hole in holes:
        inside &= ~_inside_convex(points, hole)
    return inside


def extrude_prisms(points: np.ndarray, triangles: np.ndarray, zs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Extrude a 2D triangulation (points (n, 2) [m], triangles (m, 3)) through the levels zs (L,) [m] into tets:
    each prism splits into 3 tets by the vertex-order rule (the diagonal of each side quad runs from the lower
    index's top to the higher index's bottom), so neighbouring prisms share their diagonals (conforming).
    Returns (vertices (n L, 3) [m], tets (3 m (L-1), 4)), positively oriented."""
    n = len(points)
    verts = np.concatenate([np.column_stack([points, np.full(n, z)]) for z in zs])
    s = np.sort(triangles, axis=1)
    a, b, c = s[:, 0], s[:, 1], s[:, 2]
    tets = []
    for k in range(len(zs) - 1):
        lo, up = k * n, (k + 1) * n
        tets += [np.column_stack([a + lo, b + lo, c + lo, a + up]), np.column_stack([b + lo, c + lo, a + up, b + up]),
                 np.column_stack([c + lo, a + up, b + up, c + up])]
    tets = np.concatenate(tets)
    x = verts[tets]
    vol = np.einsum("ij,ij->i", np.cross(x[:, 1] - x[:, 0], x[:, 2] - x[:, 0]), x[:, 3] - x[:, 0])
    tets[vol < 0] = tets[vol < 0][:, [0, 2, 1, 3]]
    return verts, tets


def finray_finger(length=0.1, base_width=0.045, thickness=0.02, flank_thickness=0.0018, rib_thickness=0.0012,
                  n_ribs=5, rib_angle=0.0, resolution=None, base_thickness=None) -> tuple[np.ndarray, np.ndarray]:
    """A FinRay finger tet mesh: (vertices (n, 3) [m], tets (m, 4) positively oriented).

    length [m] base to tip; base_width [m]; thickness [m] of the extrusion (z); flank_thickness and rib_thickness
    [m]; n_ribs cross ribs at rib_angle [rad] to the base; resolution [m]: target edge length in the profile
    (default: the rib thickness, one to two triangles across a wall); the z layers are about 2 * resolution
    apart (at least 2 layers). base_thickness: see ``finray_profile``. Linear tets with one triangle across a
    rib lock its hinges: to simulate the finger itself (full space, or as a conforming cage) use a resolution
    of at most about rib_thickness / 1.4 (``scene.finray_push`` uses 0.8 mm for 1.2 mm ribs).
    """
    outer, holes = finray_profile(length, base_width, flank_thickness, rib_thickness, n_ribs, rib_angle,
                                  base_thickness)
    h = float(rib_thickness if resolution is None else resolution)
    pts, tri = triangulate_profile(outer, holes, h)
    layers = max(2, int(round(thickness / (2.0 * h))))
    return extrude_prisms(pts, tri, np.linspace(0.0, thickness, layers + 1))


def finray_base_vertices(vertices: np.ndarray, tol: float = 1e-9) -> np.ndarray:
    """Indices (k,) of the vertices on the base (mounting) face y = min y (within tol [m])."""
    v = np.asarray(vertices, np.float64)
    return np.flatnonzero(v[:, 1] <= v[:, 1].min() + tol)


def _grow_triangle(tri: np.ndarray, margin: float) -> np.ndarray:
    """The triangle (3, 2) [m] with every edge moved outward by margin [m] (scaled about its incenter)."""
    sides = np.array([np.hypot(*(tri[(i + 2) % 3] - tri[(i + 1) % 3])) for i in range(3)])  # opposite vertex i
    incenter = sides @ tri / sides.sum()
    r = 2.0 * abs(_area(tri)) / sides.sum()
    return incenter + (tri - incenter) * (r + margin) / r


def _shrink_convex(poly: np.ndarray, margin: float) -> np.ndarray:
    """The counter-clockwise convex polygon (k, 2) [m] with every edge moved inward by margin [m]."""
    out = poly
    for i in range(len(poly)):
        n, c = _halfplane(poly[i], poly[(i + 1) % len(poly)])
        out = _clip(out, n, c - margin)
    return out


def finray_cage(margin=0.0, resolution=0.002, layers=1, length=0.1, base_width=0.045, thickness=0.02,
                flank_thickness=0.0018, rib_thickness=0.0012, n_ribs=5, rib_angle=0.0, base_thickness=None):
    """A coarse cage that follows the finger's holes (so it keeps the ribs' hinges, which a voxel cage fills):
    the finger's profile with every wall grown by margin [m] on each side, triangulated at resolution [m] and
    extruded over z in [-margin, thickness + margin] in `layers` layers. Finger parameters as ``finray_finger``
    (use the same). Returns (vertices (n, 3) [m], tets (m, 4)); the finger lies inside (on its boundary with
    margin 0, the default: with margin > 0 coarse tets in the grown corners hold no finger material and
    ``add_embedded_body`` refuses their nodes).

    Measured (``python benchmarks/finray_bending.py``): at 0.9 mm triangles and one layer the cage keeps the
    fin-ray bending within about 25 % of the full-space finger; voxel cages (which fill the holes) lose it."""
    outer, holes = finray_profile(length, base_width, flank_thickness, rib_thickness, n_ribs, rib_angle,
                                  base_thickness)
    holes = [_shrink_convex(h, margin) for h in holes]
    if any(len(h) < 3 or _area(h) <= 0 for h in holes):
        raise ValueError("finray_cage: the margin closes a hole; use a smaller margin")
    pts, tri = triangulate_profile(_grow_triangle(outer, margin), holes, float(resolution))
    return extrude_prisms(pts, tri, np.linspace(-margin, thickness + margin, int(layers) + 1))
