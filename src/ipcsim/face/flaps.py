"""A synthetic ``FaceModel``: two soft flaps (an upper and a lower "lip") closing onto each other.

Two slabs of size (L, T, D) [m] lie above and below the plane y = 0 with a gap G between them (box tet meshes,
``geometry.voxel_cage.box_tet_mesh``). The upper slab's top face and the lower slab's bottom face are bone.
The collision proxy is the pair of facing sheets (like 000 Fig. 2a's mouth region): a finer triangulated grid
just inside each slab's facing face, embedded in the tets (s = W x, ``geometry.embedding.embed_points``), so
x2 (the vertices of the tets that embed it) is the slabs' facing layers and n1 the rest.

Blendshapes (K = 2):

* "jaw": the lower bone rotates by ``angle`` [deg] about the z-parallel axis through its back edge (x = 0,
  bottom), lifting the far end: bone_displacements[0] = the rotated minus the rest positions (blended linearly,
  as FaceModel's jaw). Without collision handling the lower sheet passes through the upper one (they cross
  along a line), so the intersection check of a run can fail.
* "bulge": both slabs thicken, A = diag(1, 1 + bulge, 1) (symmetric, per tet), pushing the sheets together.

The sequence ramps both weights from 0 to 1 over ``frames`` frames.
"""
from __future__ import annotations

import math

import numpy as np

from ..geometry.embedding import embed_points
from ..geometry.voxel_cage import box_tet_mesh
from .model import FaceModel


def _sheet(x_range, z_range, y: float, n_x: int, n_z: int) -> tuple[np.ndarray, np.ndarray]:
    """A flat triangulated grid at height y: vertices ((n_x + 1)(n_z + 1), 3) [m], faces (2 n_x n_z, 3)."""
    xs = np.linspace(*x_range, n_x + 1)
    zs = np.linspace(*z_range, n_z + 1)
    gx, gz = np.meshgrid(xs, zs, indexing="ij")
    v = np.stack([gx.ravel(), np.full(gx.size, y), gz.ravel()], axis=1)
    vid = np.arange(v.shape[0]).reshape(n_x + 1, n_z + 1)
    a, b, c, d = vid[:-1, :-1], vid[1:, :-1], vid[1:, 1:], vid[:-1, 1:]
    faces = np.concatenate([np.stack([a, b, c], -1).reshape(-1, 3), np.stack([a, c, d], -1).reshape(-1, 3)])
    return v, faces


def two_flaps(size=(4.0, 1.0, 1.0), resolution=(8, 4, 2), gap: float = 0.3, angle: float = 8.0,
              bulge: float = 0.1, proxy_refine: int = 2, frames: int = 6, stiffness: float = 1e3) -> FaceModel:
    """The two-flaps FaceModel (module doc).

    Args:
        size: (L, T, D) [m] of each slab; resolution: cells of each slab along (x, y, z); gap: G [m];
        angle: the jaw rotation [deg]; bulge: relative thickening of the "bulge" target; proxy_refine: proxy
        grid cells per simulation cell along x and z; frames: length of the sequence; stiffness [Pa].
    """
    length, thick, depth = (float(s) for s in size)
    v, t = box_tet_mesh(size, resolution)
    up = v + [0.0, 0.5 * gap, 0.0]
    low = v + [0.0, -0.5 * gap - thick, 0.0]
    rest = np.vstack([up, low])
    tets = np.vstack([t, t + len(v)])
    n_up = len(v)
    eps = 1e-9 * length
    top = np.flatnonzero(np.abs(up[:, 1] - up[:, 1].max()) < eps)
    bottom = n_up + np.flatnonzero(np.abs(low[:, 1] - low[:, 1].min()) < eps)
    bone = np.concatenate([top, bottom]).astype(np.int64)

    inset = 0.05 * thick / resolution[1]  # the sheets lie this far inside their slab's facing face
    nx, nz = resolution[0] * proxy_refine, resolution[2] * proxy_refine
    xr, zr = (inset, length - inset), (inset, depth - inset)
    s_up, f_up = _sheet(xr, zr, 0.5 * gap + inset, nx, nz)
    s_low, f_low = _sheet(xr, zr, -0.5 * gap - inset, nx, nz)
    proxy = np.vstack([s_up, s_low])
    faces = np.vstack([f_up, f_low + len(s_up)])
    proxy_map, _ = embed_points(proxy, rest, tets)

    m = len(tets)
    actuation = np.broadcast_to(np.eye(3), (2, m, 3, 3)).copy()
    actuation[1, :, 1, 1] = 1.0 + bulge
    hinge = np.array([0.0, -0.5 * gap - thick, 0.0])
    c, s = math.cos(math.radians(angle)), math.sin(math.radians(angle))
    rot = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    disp = np.zeros((2, len(bone), 3))
    low_bone = rest[bone] - hinge
    is_low = bone >= n_up
    disp[0, is_low] = (low_bone[is_low] @ rot.T) - low_bone[is_low]
    ramp = np.linspace(0.0, 1.0, frames + 1)[1:]
    sequence = np.stack([ramp, ramp], axis=1)
    return FaceModel(rest=rest, tets=tets.astype(np.int64), bone=bone, names=["jaw", "bulge"], actuation=actuation,
                     bone_displacements=disp, proxy_vertices=proxy, proxy_faces=faces.astype(np.int64),
                     proxy_map=proxy_map, sequence=sequence, stiffness=np.full(m, float(stiffness)),
                     info={"source": "ipcsim.face.flaps.two_flaps", "size": size, "resolution": resolution,
                           "gap": gap, "angle": angle, "bulge": bulge})
