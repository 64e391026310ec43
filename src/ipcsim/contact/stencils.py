"""Stencil kinds: vertex count and squared distance (with its derivatives), one dispatch on the kind.

The one place that maps a stencil kind (VV, EV, EE, FV, PV, see ``collisions_data``) to its distance
function. Two distances exist per kind, chosen by the ``dtype`` argument:

* the active-set distance (dtype = the stencil's ``Collisions.dtype``, -1 except for EE): what the
  barrier, the stiffness update and friction evaluate. The active set already reduced every stencil
  to the primitives realising the distance, so EV is point-line, FV point-plane and EE the typed
  edge-edge distance of its stored type; VV point-point, PV point to the half-space's plane.
* ``CLOSEST``: the distance between the two primitives, the closest points classified here (point-edge,
  point-triangle, edge-edge with automatic type): what continuous collision detection needs. No PV.

Arguments shared by the kernels: kind (int); v: 4 vertex ids (int64 array (4,) or tuple, -1 padded;
rows of ``x`` in the stencil order of ``collisions_data``); plane: plane id (PV only); dtype (above);
x: (n, 3) float64 [m] positions; plane_o, plane_n: (n_planes, 3) float64 plane origins [m] and unit
normals [1] (PV only, any (m, 3) float64 arrays otherwise). Only the rows a kind uses are read.
"""
from __future__ import annotations

from numba import njit

from .collisions_data import EE, EV, FV, STENCIL_SIZE, VV
from .distance.edge_edge import ee_gradient, ee_hessian, ee_value
from .distance.point_edge import pe_gradient, pe_hessian, pe_value
from .distance.point_triangle import pt_gradient, pt_hessian, pt_value
from .distance.types import EE_AUTO, P_T, PE_AUTO, PE_P_E, PT_AUTO

#: ``dtype`` of the distance between the two primitives (closest points classified by the kernel).
CLOSEST = -2


@njit(cache=True, inline="always")
def stencil_size(kind):
    """Number of vertices of a stencil kind: VV 2, EV 3, EE 4, FV 4, PV 1 (``STENCIL_SIZE``)."""
    return STENCIL_SIZE[kind]


@njit(cache=True, inline="always")
def row3(x, i):
    """Vertex i of x (n, 3) as a 3-tuple [m]."""
    return (x[i, 0], x[i, 1], x[i, 2])


@njit(cache=True, inline="always")
def _pe_type(dtype):
    """Point-edge distance type of an EV stencil: point-line, or classified (CLOSEST)."""
    return PE_AUTO if dtype == CLOSEST else PE_P_E


@njit(cache=True, inline="always")
def _pt_type(dtype):
    """Point-triangle distance type of an FV stencil: point-plane, or classified (CLOSEST)."""
    return PT_AUTO if dtype == CLOSEST else P_T


@njit(cache=True, inline="always")
def _ee_type(dtype):
    """Edge-edge distance type of an EE stencil: the stored one, or classified (CLOSEST)."""
    return EE_AUTO if dtype == CLOSEST else dtype


@njit(cache=True, inline="always")
def stencil_d2(kind, v, plane, dtype, x, plane_o, plane_n, g):
    """Squared distance d2 [m^2] of one stencil (module docstring for the arguments).

    g: None for the value only, or a (12,) float64 array that receives grad d2 [m] in g[:3k]
    (k = ``stencil_size(kind)``, vertex-major: entry 3a + i is coordinate i of stencil vertex a).
    The branch not taken is removed at compile time (``g is None``).
    """
    if kind == VV:
        p0, p1 = row3(x, v[0]), row3(x, v[1])
        d2 = 0.0
        for i in range(3):
            r = p0[i] - p1[i]
            if g is not None:
                g[i] = 2.0 * r
                g[3 + i] = -2.0 * r
            d2 += r * r
        return d2
    if kind == EV:
        if g is None:
            return pe_value(row3(x, v[0]), row3(x, v[1]), row3(x, v[2]), _pe_type(dtype))
        return pe_gradient(row3(x, v[0]), row3(x, v[1]), row3(x, v[2]), _pe_type(dtype), g[:9])
    if kind == EE:
        if g is None:
            return ee_value(row3(x, v[0]), row3(x, v[1]), row3(x, v[2]), row3(x, v[3]), _ee_type(dtype))
        return ee_gradient(row3(x, v[0]), row3(x, v[1]), row3(x, v[2]), row3(x, v[3]), _ee_type(dtype), g)
    if kind == FV:
        if g is None:
            return pt_value(row3(x, v[0]), row3(x, v[1]), row3(x, v[2]), row3(x, v[3]), _pt_type(dtype))
        return pt_gradient(row3(x, v[0]), row3(x, v[1]), row3(x, v[2]), row3(x, v[3]), _pt_type(dtype), g)
    s = 0.0  # PV: signed distance to the plane
    for k in range(3):
        s += plane_n[plane, k] * (x[v[0], k] - plane_o[plane, k])
    if g is not None:
        for k in range(3):
            g[k] = 2.0 * s * plane_n[plane, k]
    return s * s


@njit(cache=True)
def stencil_d2_hessian(kind, v, plane, dtype, x, plane_n, h):
    """Writes Hess d2 [1] of one stencil into h (12, 12)[:3k, :3k] (every entry of that block); the
    arguments as for ``stencil_d2``."""
    if kind == VV:
        for i in range(3):
            for j in range(3):
                e = 2.0 if i == j else 0.0
                h[i, j] = e
                h[3 + i, 3 + j] = e
                h[i, 3 + j] = -e
                h[3 + i, j] = -e
    elif kind == EV:
        pe_hessian(row3(x, v[0]), row3(x, v[1]), row3(x, v[2]), _pe_type(dtype), h[:9, :9])
    elif kind == EE:
        ee_hessian(row3(x, v[0]), row3(x, v[1]), row3(x, v[2]), row3(x, v[3]), _ee_type(dtype), h)
    elif kind == FV:
        pt_hessian(row3(x, v[0]), row3(x, v[1]), row3(x, v[2]), row3(x, v[3]), _pt_type(dtype), h)
    else:
        for i in range(3):
            for j in range(3):
                h[i, j] = 2.0 * plane_n[plane, i] * plane_n[plane, j]
