"""Generated tet meshes of simple solids: the half ellipsoid of a soft-bubble gripper finger.

A convex solid is star-shaped about an interior point c, so a closed triangulation of its boundary gives a tet mesh:
the boundary scaled towards c in layers (prisms between consecutive layers, each cut into 3 tets), and a cone of
tets from c to the innermost layer. Prisms are cut by the global-index rule (each triangle's corners sorted by
vertex id; tets (a, b, c, c'), (a, b, b', c'), (a, a', b', c')), so neighbouring prisms cut their shared quad
along the same diagonal and the mesh is conforming.
"""
from __future__ import annotations

import math

import numpy as np

from .surface import tet_signed_volumes


def _ring(n: int, phase: float = 0.0) -> np.ndarray:
    """n angles [rad] in [0, 2 pi), uniformly spaced, starting at phase * spacing."""
    return (np.arange(n) + phase) * (2.0 * math.pi / n)


def _zip_rings(ids_a, ang_a, ids_b, ang_b) -> list:
    """Triangles between two closed rings of vertex ids with their angles (increasing, one turn each): walk both
    rings, always advancing the one whose next vertex comes first in angle."""
    na, nb = len(ids_a), len(ids_b)
    i = j = 0
    tris = []
    while i < na or j < nb:
        next_a = ang_a[(i + 1) % na] + (2 * math.pi if i + 1 >= na else 0.0)
        next_b = ang_b[(j + 1) % nb] + (2 * math.pi if j + 1 >= nb else 0.0)
        if j >= nb or (i < na and next_a <= next_b):
            tris.append((ids_a[i % na], ids_a[(i + 1) % na], ids_b[j % nb]))
            i += 1
        else:
            tris.append((ids_a[i % na], ids_b[(j + 1) % nb], ids_b[j % nb]))
            j += 1
    return tris


def _fan(center: int, ids) -> list:
    return [(center, ids[k], ids[(k + 1) % len(ids)]) for k in range(len(ids))]


def half_ellipsoid_surface(semi_axes=(0.05, 0.075), depth=0.04, rim=20, dome=(18, 13, 7), base=(7,)):
    """The closed boundary of the half ellipsoid (x/a)^2 + (y/b)^2 + (z/depth)^2 <= 1, z >= 0: vertices (n, 3) [m]
    and outward triangles (f, 3).

    semi_axes: (a, b) [m] of the base ellipse; depth [m]: the dome's height; rim: vertices on the base ellipse;
    dome: vertex counts of the dome's rings from the rim up (equal latitude steps), then the apex; base: counts of
    the base disk's rings from the rim in, then its centre."""
    a, b = (float(s) for s in semi_axes)
    verts, rings = [], []

    def add_ring(radius, z, n, phase):
        ang = _ring(n, phase)
        start = len(verts)
        verts.extend((radius[0] * a * math.cos(t), radius[1] * b * math.sin(t), z) for t in ang)
        rings.append((np.arange(start, start + n), ang))

    add_ring((1.0, 1.0), 0.0, rim, 0.0)
    for k, n in enumerate(dome, start=1):
        phi = 0.5 * math.pi * k / (len(dome) + 1)
        add_ring((math.cos(phi),) * 2, depth * math.sin(phi), n, 0.5 * k)
    apex = len(verts)
    verts.append((0.0, 0.0, depth))
    tris = []
    dome_rings = rings[:]
    for (ia, aa), (ib, ab) in zip(dome_rings[:-1], dome_rings[1:]):
        tris += _zip_rings(ia, aa, ib, ab)
    tris += _fan(apex, list(dome_rings[-1][0]))
    base_rings = [rings[0]]
    for k, n in enumerate(base, start=1):
        r = 1.0 - k / (len(base) + 1)
        add_ring((r, r), 0.0, n, 0.5 * k)
        base_rings.append(rings[-1])
    centre = len(verts)
    verts.append((0.0, 0.0, 0.0))
    for (ia, aa), (ib, ab) in zip(base_rings[:-1], base_rings[1:]):
        tris += _zip_rings(ia, aa, ib, ab)
    tris += _fan(centre, list(base_rings[-1][0]))
    v = np.array(verts)
    f = np.array(tris, np.int64)
    # outward: the solid is star-shaped about an inner point, so each face's normal must point away from it
    inner = np.array([0.0, 0.0, depth / 3.0])
    normal = np.cross(v[f[:, 1]] - v[f[:, 0]], v[f[:, 2]] - v[f[:, 0]])
    flip = np.einsum("ij,ij->i", normal, v[f].mean(axis=1) - inner) < 0
    f[flip] = f[flip][:, [0, 2, 1]]
    return v, f


def star_tet_mesh(vertices, faces, center, layers=(0.5,)) -> tuple[np.ndarray, np.ndarray]:
    """Tets (m, 4), positively oriented, filling the solid bounded by the closed triangulation (vertices (n, 3) [m],
    faces (f, 3)), star-shaped about center (3,) [m]: the boundary (vertices 0..n-1 of the result, in order), its
    copies scaled by ``layers`` (decreasing, in (0, 1)) towards the center, and the center last."""
    v = np.asarray(vertices, np.float64)
    c = np.asarray(center, np.float64)
    n = len(v)
    scales = [1.0] + [float(s) for s in layers]
    points = np.vstack([c + s * (v - c) for s in scales] + [c[None]])
    tri = np.sort(np.asarray(faces, np.int64), axis=1)
    tets = []
    for layer in range(len(scales) - 1):
        lo, hi = tri + layer * n, tri + (layer + 1) * n
        a, b, cc = lo.T
        a2, b2, c2 = hi.T
        tets += [np.stack(t, axis=1) for t in ((a, b, cc, c2), (a, b, b2, c2), (a, a2, b2, c2))]
    inner = tri + (len(scales) - 1) * n
    tets.append(np.column_stack([inner, np.full(len(tri), len(points) - 1)]))
    t = np.vstack(tets)
    neg = tet_signed_volumes(points, t) < 0
    t[neg] = t[neg][:, [0, 2, 1, 3]]
    return points, t


def half_ellipsoid_tet_mesh(semi_axes=(0.05, 0.075), depth=0.04, rim=20, dome=(18, 13, 7), base=(7,),
                            layers=()) -> tuple[np.ndarray, np.ndarray]:
    """A solid half ellipsoid (a soft bubble): base ellipse with semi-axes (a, b) [m] in the plane z = 0, dome of
    height depth [m] towards +z. Returns vertices (n, 3) [m] (the boundary's first, see
    ``half_ellipsoid_surface``) and positively oriented tets (m, 4). layers: inner copies of the boundary (scales in
    (0, 1)); none gives a cone of tets from one inner vertex (the defaults: 67 surface vertices, 68 in all)."""
    v, f = half_ellipsoid_surface(semi_axes, depth, rim, dome, base)
    return star_tet_mesh(v, f, (0.0, 0.0, depth / 3.0), layers)
