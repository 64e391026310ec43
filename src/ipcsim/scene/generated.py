"""Generated meshes of scenes: ``{"box": ...}`` (a tet box) and ``{"half_ellipsoid": ...}`` (a soft-bubble finger,
``geometry.shapes.half_ellipsoid_tet_mesh``), resolved with every default filled in."""
from __future__ import annotations

import numpy as np

BOX_RESOLUTION = [4, 4, 4]
#: the optional keys of {"half_ellipsoid": ...} and their defaults (those of half_ellipsoid_tet_mesh)
HALF_ELLIPSOID = {"rim": 20, "dome": [18, 13, 7], "base": [7], "layers": []}
GENERATED_KINDS = ("box", "half_ellipsoid")


def generated_mesh(entry: dict) -> tuple[dict, np.ndarray, np.ndarray]:
    """(resolved entry, vertices (n, 3) [m], tets (m, 4) int64) of a validated generated-mesh dict.

    ``{"box": {"size": [sx, sy, sz], "resolution": [nx, ny, nz]}}``: [0, sx] x [0, sy] x [0, sz] [m] in
    nx x ny x nz cells of 6 tets. ``{"half_ellipsoid": {"semi_axes": [a, b], "depth": d, "rim": n, "dome": [...],
    "base": [...], "layers": [...]}}``: the solid (x/a)^2 + (y/b)^2 + (z/d)^2 <= 1, z >= 0 [m] (its flat base in
    the plane z = 0, the dome towards +z); rim, dome and base are vertex counts of its rings, layers inner copies
    of the boundary (scales in (0, 1), decreasing)."""
    if "box" in entry:
        from ..geometry.voxel_cage import box_tet_mesh

        box = {"size": list(entry["box"]["size"]),
               "resolution": list(entry["box"].get("resolution", BOX_RESOLUTION))}
        v, t = box_tet_mesh(box["size"], box["resolution"])
        return {"box": box}, v, t
    from ..geometry.shapes import half_ellipsoid_tet_mesh

    given = entry["half_ellipsoid"]
    he = {"semi_axes": list(given["semi_axes"]), "depth": given["depth"]}
    for k, default in HALF_ELLIPSOID.items():
        value = given.get(k, default)
        he[k] = list(value) if isinstance(value, list) else value
    v, t = half_ellipsoid_tet_mesh(tuple(he["semi_axes"]), he["depth"], he["rim"], tuple(he["dome"]),
                                   tuple(he["base"]), tuple(he["layers"]))
    return {"half_ellipsoid": he}, v, np.asarray(t, np.int64)
