"""Per-contact tangent frames: closest points, tangent bases and relative-displacement maps.

For one contact stencil with vertex displacements u_i (stencil order of
``ipcsim.contact.collisions_data``), the relative displacement of the two closest points is

    r = Gamma u_stencil = sum_i gamma_i u_i              r: (3,) [m],  Gamma = [gamma_0 I, ..., gamma_3 I]

with scalar coefficients gamma (4,) that depend on the kind and on the barycentric closest-point
parameters beta (IPC 2020 §5.1). Its tangential part in the 2D contact frame is

    u_k = T^T r                                          T: (3, 2) orthonormal columns, u_k: (2,) [m]

The closest points, bases and coefficients (same conventions as ipc-toolkit's tangent module):

====  ==================  ======================================  =================================
kind  beta                T columns                               gamma
====  ==================  ======================================  =================================
VV    -                   d = p1 - p0: unit(a x d), unit(d x a)   (1, -1, 0, 0)
                          with a = e_x or e_y (the one giving
                          the larger |a x d|, e_y on ties)
EV    alpha (line param)  e = e1 - e0: unit(e), unit(e x (p-e0))  (1, alpha - 1, -alpha, 0)
EE    (a, b) line params  unit(ea), unit((ea x eb) x ea)          (1 - a, a, b - 1, -b)
FV    (b1, b2) plane      unit(t1 - t0), unit(n x (t1 - t0)),     (1, b1 + b2 - 1, -b1, -b2)
      params              n = (t1 - t0) x (t2 - t0)
PV    -                   as VV with d = plane normal             (1, 0, 0, 0)
====  ==================  ======================================  =================================

Closest points are those of the infinite lines/plane (not clamped to the primitives), as in IPC:
the active set only holds these kinds where the closest point is interior.

All functions are Numba-compiled; positions are (3,) float64 [m]. Degenerate input (zero-length
edge, parallel edges, degenerate triangle) gives non-finite output; ``FrictionCollisions.build``
checks and rejects it with a ValueError naming the stencil.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..collisions_data import EE, EV, FV, PV, STENCIL_SIZE, VV


# ----------------------------------------------------------------------------- small vector helpers
@njit(cache=True)
def _cross(a, b):
    out = np.empty(3)
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]
    return out


@njit(cache=True)
def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit(cache=True)
def _unit(a):
    return a / math.sqrt(_dot(a, a))


@njit(cache=True)
def _basis(c0, c1):
    """(3, 2) matrix whose columns are unit(c0), unit(c1)."""
    T = np.empty((3, 2))
    T[:, 0] = _unit(c0)
    T[:, 1] = _unit(c1)
    return T


# ----------------------------------------------------------------------------- tangent bases T
@njit(cache=True)
def point_point_tangent_basis(p0, p1):
    """Tangent basis T (3, 2) of a vertex-vertex contact: the plane orthogonal to d = p1 - p0."""
    d = p1 - p0
    ex = np.array([1.0, 0.0, 0.0])
    ey = np.array([0.0, 1.0, 0.0])
    a_x = _cross(ex, d)
    a_y = _cross(ey, d)
    a = a_x if _dot(a_x, a_x) > _dot(a_y, a_y) else a_y
    return _basis(a, _cross(d, a))


@njit(cache=True)
def point_edge_tangent_basis(p, e0, e1):
    """Tangent basis T (3, 2) of an edge-vertex contact: the edge direction and e x (p - e0)."""
    e = e1 - e0
    return _basis(e, _cross(e, p - e0))


@njit(cache=True)
def edge_edge_tangent_basis(ea0, ea1, eb0, eb1):
    """Tangent basis T (3, 2) of an edge-edge contact: the plane spanned by both edge directions."""
    ea = ea1 - ea0
    n = _cross(ea, eb1 - eb0)
    return _basis(ea, _cross(n, ea))


@njit(cache=True)
def point_triangle_tangent_basis(p, t0, t1, t2):
    """Tangent basis T (3, 2) of a face-vertex contact: the triangle's plane."""
    e = t1 - t0
    n = _cross(e, t2 - t0)
    return _basis(e, _cross(n, e))


@njit(cache=True)
def plane_vertex_tangent_basis(normal):
    """Tangent basis T (3, 2) of a plane-vertex contact: the plane, built as VV with d = normal."""
    return point_point_tangent_basis(np.zeros(3), normal)


# ----------------------------------------------------------------------------- closest points beta
@njit(cache=True)
def point_edge_closest_point(p, e0, e1):
    """Parameter alpha [1] of the point of the line e0 + alpha (e1 - e0) closest to p."""
    e = e1 - e0
    return _dot(p - e0, e) / _dot(e, e)


@njit(cache=True)
def edge_edge_closest_point(ea0, ea1, eb0, eb1):
    """Parameters (a, b) (2,) [1] of the closest points ea0 + a (ea1 - ea0), eb0 + b (eb1 - eb0)
    of the two (infinite) lines; solves the 2x2 normal equations (singular for parallel edges)."""
    ea = ea1 - ea0
    eb = eb1 - eb0
    w = ea0 - eb0
    A00 = _dot(ea, ea)
    A01 = -_dot(ea, eb)
    A11 = _dot(eb, eb)
    r0 = -_dot(w, ea)
    r1 = _dot(w, eb)
    det = A00 * A11 - A01 * A01
    out = np.empty(2)
    out[0] = (A11 * r0 - A01 * r1) / det
    out[1] = (A00 * r1 - A01 * r0) / det
    return out


@njit(cache=True)
def point_triangle_closest_point(p, t0, t1, t2):
    """Parameters (b1, b2) (2,) [1] of the projection t0 + b1 (t1 - t0) + b2 (t2 - t0) of p on the
    triangle's plane (barycentric coordinates of t1 and t2)."""
    e1 = t1 - t0
    e2 = t2 - t0
    w = p - t0
    A00 = _dot(e1, e1)
    A01 = _dot(e1, e2)
    A11 = _dot(e2, e2)
    r0 = _dot(e1, w)
    r1 = _dot(e2, w)
    det = A00 * A11 - A01 * A01
    out = np.empty(2)
    out[0] = (A11 * r0 - A01 * r1) / det
    out[1] = (A00 * r1 - A01 * r0) / det
    return out


# ----------------------------------------------------------------------------- Gamma
@njit(cache=True)
def relative_displacement_coefficients(kind, beta):
    """gamma (4,) [1] with r = sum_i gamma_i u_i for a stencil of ``kind`` and closest point beta (2,)."""
    g = np.zeros(4)
    g[0] = 1.0
    if kind == VV:
        g[1] = -1.0
    elif kind == EV:
        g[1] = beta[0] - 1.0
        g[2] = -beta[0]
    elif kind == EE:
        g[0] = 1.0 - beta[0]
        g[1] = beta[0]
        g[2] = beta[1] - 1.0
        g[3] = -beta[1]
    elif kind == FV:
        g[1] = beta[0] + beta[1] - 1.0
        g[2] = -beta[0]
        g[3] = -beta[1]
    return g


def relative_displacement_jacobian(kind: int, beta=()) -> np.ndarray:
    """Gamma (3, 3 * stencil_size): r = Gamma @ u_stencil.ravel(), u_stencil (stencil_size, 3) [m].

    beta: closest-point parameters, (1,) alpha for EV, (2,) for EE and FV, ignored for VV and PV.
    """
    if kind not in (VV, EV, EE, FV, PV):
        raise ValueError(f"unknown contact kind {kind}")
    b = np.ravel(np.asarray(beta, dtype=np.float64))
    need = {VV: 0, EV: 1, EE: 2, FV: 2, PV: 0}[kind]
    if b.size < need:
        raise ValueError(f"beta needs {need} closest-point parameter(s) for kind {kind}, got {b.size}")
    beta2 = np.zeros(2)
    beta2[: min(b.size, 2)] = b[:2]
    g = relative_displacement_coefficients(int(kind), beta2)
    n = int(STENCIL_SIZE[kind])
    return np.hstack([g[i] * np.eye(3) for i in range(n)])


# ----------------------------------------------------------------------------- one stencil
@njit(cache=True)
def stencil_tangent_frame(kind, xs, plane_normal):
    """Closest point, tangent basis and Gamma coefficients of one stencil.

    Args:
        kind: contact kind (VV, EV, EE, FV, PV).
        xs: (4, 3) float64 [m], stencil vertex positions in the kind's order (unused rows ignored).
        plane_normal: (3,) unit normal of the plane (PV only).
    Returns:
        beta (2,) [1] (zeros for VV and PV), T (3, 2), gamma (4,) [1].
    """
    beta = np.zeros(2)
    if kind == VV:
        T = point_point_tangent_basis(xs[0], xs[1])
    elif kind == EV:
        beta[0] = point_edge_closest_point(xs[0], xs[1], xs[2])
        T = point_edge_tangent_basis(xs[0], xs[1], xs[2])
    elif kind == EE:
        beta = edge_edge_closest_point(xs[0], xs[1], xs[2], xs[3])
        T = edge_edge_tangent_basis(xs[0], xs[1], xs[2], xs[3])
    elif kind == FV:
        beta = point_triangle_closest_point(xs[0], xs[1], xs[2], xs[3])
        T = point_triangle_tangent_basis(xs[0], xs[1], xs[2], xs[3])
    else:
        T = plane_vertex_tangent_basis(plane_normal)
    return beta, T, relative_displacement_coefficients(kind, beta)
