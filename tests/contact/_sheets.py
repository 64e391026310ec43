"""Two parallel triangulated unit-square sheets (tests only): exactly aligned geometry full of ties."""
from __future__ import annotations

import numpy as np

from ipcsim.geometry import CollisionMesh


def grid_sheet(n: int, z: float, shift=(0.0, 0.0)):
    """An n x n vertex grid on the unit square (moved by ``shift`` in x, y) at height z [m]:
    vertices (n*n, 3) float64 [m], faces (2 (n-1)^2, 3) int (same split as benchmarks/bench_contact.py)."""
    s = np.linspace(0.0, 1.0, n)
    gx, gy = np.meshgrid(s + shift[0], s + shift[1], indexing="ij")
    v = np.stack([gx.ravel(), gy.ravel(), np.full(n * n, z)], 1)
    idx = np.arange(n * n).reshape(n, n)
    a, b, c, d = idx[:-1, :-1].ravel(), idx[1:, :-1].ravel(), idx[1:, 1:].ravel(), idx[:-1, 1:].ravel()
    f = np.vstack([np.stack([a, b, c], 1), np.stack([a, c, d], 1)])
    return v, f


def sheets_mesh(n: int, gap: float, shift=(0.0, 0.0)):
    """CollisionMesh of a sheet at z=0 (body 0) and one at z=gap (body 1, moved by ``shift``), and
    its rest positions (2 n^2, 3) [m]."""
    v0, f0 = grid_sheet(n, 0.0)
    v1, f1 = grid_sheet(n, gap, shift)
    mesh = CollisionMesh.concatenate([CollisionMesh.from_triangle_mesh(v0, f0, body=0),
                                      CollisionMesh.from_triangle_mesh(v1, f1, body=1)])
    return mesh, mesh.rest_positions.copy()
