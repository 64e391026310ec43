"""Shared configurations and finite-difference helpers for the distance/mollifier tests."""
from __future__ import annotations

import numpy as np

OFFSETS = (-10.0, -1.0, -1e-12, 0.0, 1e-12, 1.0, 10.0)

# Point-triangle: triangle t0=(0,0,0), t1=(1,0,0), t2=(0,1,0); in-plane positions of p per region.
TRIANGLE = (np.array([0.0, 0.0, 0.0]), np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0]))
PT_REGION_POINTS = {  # ipctk type id -> (x, y)
    0: (-0.5, -0.5),   # P_T0
    1: (1.5, -0.2),    # P_T1
    2: (-0.2, 1.5),    # P_T2
    3: (0.5, -0.5),    # P_E0 (t0, t1)
    4: (0.6, 0.6),     # P_E1 (t1, t2)
    5: (-0.5, 0.5),    # P_E2 (t2, t0)
    6: (0.25, 0.25),   # P_T
}
PT_BOUNDARY_POINTS = [(0.5, 0.0), (0.0, 0.0), (1.0, 0.0), (0.5, 0.5), (0.0, 0.5)]  # on edges / at vertices

# Edge-edge: ea = (0,0,0)-(1,0,0); eb along y at x = xb from y = y0 to y1, lifted to z = offset.
EE_REGION_EDGES = {  # ipctk type id -> (xb, y0, y1)
    0: (-0.5, 0.5, 1.5),   # EA0_EB0
    1: (-0.5, -1.5, -0.5), # EA0_EB1
    2: (1.5, 0.5, 1.5),    # EA1_EB0
    3: (1.5, -1.5, -0.5),  # EA1_EB1
    4: (0.5, 0.5, 1.5),    # EA_EB0
    5: (0.5, -1.5, -0.5),  # EA_EB1
    6: (-0.5, -1.0, 1.0),  # EA0_EB
    7: (1.5, -1.0, 1.0),   # EA1_EB
    8: (0.5, -1.0, 1.0),   # EA_EB
}
# Parallel / nearly parallel: eb = (x0, y, z) -> (x1, y + slope * (x1 - x0), z); expected parallel types.
EE_PARALLEL_EDGES = {  # (x0, x1) -> ipctk type id
    (0.5, 1.5): 4,    # EA_EB0
    (-1.5, -0.5): 1,  # EA0_EB1
    (1.5, 2.5): 2,    # EA1_EB0
    (-0.5, 0.5): 5,   # EA_EB1
    (-0.5, 1.5): 6,   # EA0_EB
    (2.5, 1.5): 3,    # EA1_EB1 (eb reversed, beyond ea1)
}


def random_rigid(rng):
    """A random rotation (3, 3) and translation (3,)."""
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    q = q * np.sign(np.diag(r))
    if np.linalg.det(q) < 0:
        q[:, 0] = -q[:, 0]
    return q, rng.normal(size=3)


def point_triangle_config(xy, offset):
    """(p, t0, t1, t2) with p = (x, y, offset) over the reference triangle."""
    p = np.array([xy[0], xy[1], offset])
    return (p,) + tuple(t.copy() for t in TRIANGLE)


def edge_edge_config(xb, y0, y1, offset):
    """(ea0, ea1, eb0, eb1) with eb along y at x = xb, z = offset."""
    return (np.array([0.0, 0.0, 0.0]), np.array([1.0, 0.0, 0.0]),
            np.array([xb, y0, offset]), np.array([xb, y1, offset]))


def parallel_edge_config(x0, x1, y, slope):
    """(ea0, ea1, eb0, eb1) with eb nearly parallel to ea (|ea x eb| = |x1 - x0| |slope|)."""
    return (np.array([0.0, 0.0, 0.0]), np.array([1.0, 0.0, 0.0]),
            np.array([x0, y, 0.0]), np.array([x1, y + slope * (x1 - x0), 0.0]))


# ------------------------------------------------------------------ finite differences
def fd_gradient(f, x, h):
    """Central-difference gradient of scalar f(X) at X = x (k, 3); returns (3k,)."""
    x = np.asarray(x, dtype=float)
    flat = x.ravel()
    g = np.empty(flat.size)
    for i in range(flat.size):
        xp = flat.copy()
        xm = flat.copy()
        xp[i] += h
        xm[i] -= h
        g[i] = (f(xp.reshape(x.shape)) - f(xm.reshape(x.shape))) / (2.0 * h)
    return g


def fd_jacobian(g, x, h):
    """Central-difference Jacobian of vector g(X) at X = x (k, 3); returns (3k, 3k)."""
    x = np.asarray(x, dtype=float)
    flat = x.ravel()
    cols = []
    for i in range(flat.size):
        xp = flat.copy()
        xm = flat.copy()
        xp[i] += h
        xm[i] -= h
        cols.append((np.asarray(g(xp.reshape(x.shape))) - np.asarray(g(xm.reshape(x.shape)))) / (2.0 * h))
    return np.stack(cols, axis=1)


def assert_fd_close(analytic, fd, rtol, scale_floor=1.0, what=""):
    """max|analytic - fd| <= rtol * max(max|fd|, scale_floor)."""
    analytic = np.asarray(analytic)
    fd = np.asarray(fd)
    scale = max(np.abs(fd).max(), scale_floor)
    err = np.abs(analytic - fd).max()
    assert err <= rtol * scale, f"{what}: FD mismatch {err:.3e} > {rtol:.1e} * {scale:.3e}"


def rel_err(a, b):
    """max|a - b| / max|b| (0 if both are zero)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    scale = np.abs(b).max()
    err = np.abs(a - b).max()
    if scale == 0.0:
        return err
    return err / scale
