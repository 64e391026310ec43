"""Small test scenes (tests only)."""
from __future__ import annotations

import numpy as np


def grid(n: int, z: float):
    """Unit square at height z, n x n vertices, 2 (n-1)^2 triangles: ((n*n, 3), (m, 3))."""
    xs = np.linspace(0.0, 1.0, n)
    gx, gy = np.meshgrid(xs, xs, indexing="ij")
    v = np.stack([gx.ravel(), gy.ravel(), np.full(n * n, z)], axis=1)
    f = []
    for i in range(n - 1):
        for j in range(n - 1):
            a, b, c, d = i * n + j, (i + 1) * n + j, i * n + j + 1, (i + 1) * n + j + 1
            f += [[a, b, d], [a, d, c]]
    return v, np.array(f, dtype=np.int64)


def two_sheets(n: int, dhat: float, jitter: float = 0.0, seed: int = 0):
    """Two parallel n x n sheets at z = 0 and z = dhat / 2; vertices jittered by jitter * dhat."""
    v0, f0 = grid(n, 0.0)
    v1, f1 = grid(n, 0.5 * dhat)
    v = np.vstack([v0, v1])
    if jitter:
        v = v + np.random.default_rng(seed).uniform(-1.0, 1.0, v.shape) * jitter * dhat
    return v, np.vstack([f0, f1 + len(v0)])
