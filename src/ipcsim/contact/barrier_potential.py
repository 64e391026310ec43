"""The barrier potential of an active set, its gradient and its (projected) Hessian.

    P(x) = kappa * s * sum_c  w_c * m_c(x) * b(d2_c(x), dhat^2)

with b the clamped log barrier on squared distances (``barrier.py``), d2_c the squared distance of
stencil c (typed by its kind, see ``collisions_data``), w_c its weight, m_c the edge-edge mollifier
(1 for other kinds), kappa the barrier stiffness and s = 1 or, with ``use_physical_barrier``,
s = 1 / dhat^3 (002: the barrier then has units of distance [m] and kappa of pressure [Pa] when
the weights are areas [m^2], so P is an energy [J]).

Units without the physical scale: b [m^4], so P [kappa * m^4]. Gradient (3n,) and Hessian (3n, 3n)
are flattened vertex-major: x[i, k] -> 3 i + k.

Per stencil (Li et al. 2020, Sec. 4; ipc-toolkit's NormalPotential), with g = grad d2, H = Hess d2:
    grad (m b) = m b' g + b grad m
    Hess (m b) = m (b'' g g^T + b' H) + b' (g grad m^T + grad m g^T) + b Hess m
The local Hessian (times kappa s w, w may be negative in the improved max approximator) is
projected to PSD per stencil when asked (``psd.py``), then scattered (``sparse.py``).
"""
from __future__ import annotations

import numpy as np
from numba import get_num_threads, njit, prange

from . import psd
from .barrier import barrier, barrier_first_derivative, barrier_second_derivative
from .collisions_data import EE, EV, FV, PV, STENCIL_SIZE, VV
from .distance.edge_edge import (edge_edge_distance_squared, edge_edge_distance_squared_gradient_into,
                                 edge_edge_distance_squared_hessian_into)
from .distance.edge_mollifier import (edge_edge_cross_squarednorm, edge_edge_mollifier,
                                      edge_edge_mollifier_gradient_into, edge_edge_mollifier_hessian_into)
from .distance.point_line import (point_line_distance_squared, point_line_distance_squared_gradient_into,
                                  point_line_distance_squared_hessian_into)
from .distance.point_plane import (point_plane_distance_squared, point_plane_distance_squared_gradient_into,
                                   point_plane_distance_squared_hessian_into)
from .distance.point_point import (point_point_distance_squared, point_point_distance_squared_gradient_into,
                                   point_point_distance_squared_hessian_into)
from .sparse import assemble_block_csr


# ---------------------------------------------------------------------------- per-stencil kernels
@njit(cache=True)
def stencil_distance_squared(kind, v, plane, dtype, x, plane_o, plane_n):
    """Squared distance d2 [m^2] of one stencil (vertex ids v (4,), plane id for PV)."""
    if kind == VV:
        return point_point_distance_squared(x[v[0]], x[v[1]])
    if kind == EV:
        return point_line_distance_squared(x[v[0]], x[v[1]], x[v[2]])
    if kind == EE:
        return edge_edge_distance_squared(x[v[0]], x[v[1]], x[v[2]], x[v[3]], dtype)
    if kind == FV:
        return point_plane_distance_squared(x[v[0]], x[v[1]], x[v[2]], x[v[3]])
    s = 0.0
    for k in range(3):
        s += plane_n[plane, k] * (x[v[0], k] - plane_o[plane, k])
    return s * s


@njit(cache=True)
def stencil_distance_squared_derivatives(kind, v, plane, dtype, x, plane_o, plane_n, g, h, order):
    """d2 of one stencil; writes grad d2 into g[:3k] (order >= 1) and Hess d2 into h[:3k, :3k]
    (order >= 2), k = STENCIL_SIZE[kind]. g: (12,), h: (12, 12) float64."""
    if kind == VV:
        gv, hv = g[:6], h[:6, :6]
        if order >= 1:
            point_point_distance_squared_gradient_into(x[v[0]], x[v[1]], gv)
        if order >= 2:
            point_point_distance_squared_hessian_into(x[v[0]], x[v[1]], hv)
        return point_point_distance_squared(x[v[0]], x[v[1]])
    if kind == EV:
        if order >= 1:
            point_line_distance_squared_gradient_into(x[v[0]], x[v[1]], x[v[2]], g[:9])
        if order >= 2:
            point_line_distance_squared_hessian_into(x[v[0]], x[v[1]], x[v[2]], h[:9, :9])
        return point_line_distance_squared(x[v[0]], x[v[1]], x[v[2]])
    if kind == EE:
        if order >= 1:
            edge_edge_distance_squared_gradient_into(x[v[0]], x[v[1]], x[v[2]], x[v[3]], dtype, g)
        if order >= 2:
            edge_edge_distance_squared_hessian_into(x[v[0]], x[v[1]], x[v[2]], x[v[3]], dtype, h)
        return edge_edge_distance_squared(x[v[0]], x[v[1]], x[v[2]], x[v[3]], dtype)
    if kind == FV:
        if order >= 1:
            point_plane_distance_squared_gradient_into(x[v[0]], x[v[1]], x[v[2]], x[v[3]], g)
        if order >= 2:
            point_plane_distance_squared_hessian_into(x[v[0]], x[v[1]], x[v[2]], x[v[3]], h)
        return point_plane_distance_squared(x[v[0]], x[v[1]], x[v[2]], x[v[3]])
    s = 0.0
    for k in range(3):
        s += plane_n[plane, k] * (x[v[0], k] - plane_o[plane, k])
    for k in range(3):
        g[k] = 2.0 * s * plane_n[plane, k]
        for j in range(3):
            h[k, j] = 2.0 * plane_n[plane, k] * plane_n[plane, j]
    return s * s


@njit(cache=True)
def _local_barrier(kind, v, plane, dtype, eps_x, x, plane_o, plane_n, dhat2, scale, order, g, h, gd, hd, gm, hm):
    """Scaled local value; local gradient into g[:3k] (order >= 1), Hessian into h (order >= 2)."""
    k = STENCIL_SIZE[kind]
    n = 3 * k
    d2 = stencil_distance_squared_derivatives(kind, v, plane, dtype, x, plane_o, plane_n, gd, hd, order)
    if not d2 < dhat2:
        if order >= 1:
            g[:n] = 0.0
        if order >= 2:
            h[:n, :n] = 0.0
        return 0.0
    b = barrier(d2, dhat2)
    mollified = False
    m = 1.0
    if kind == EE:
        a0, a1, b0, b1 = x[v[0]], x[v[1]], x[v[2]], x[v[3]]
        if edge_edge_cross_squarednorm(a0, a1, b0, b1) < eps_x:
            mollified = True
            m = edge_edge_mollifier(a0, a1, b0, b1, eps_x)
            if order >= 1:
                edge_edge_mollifier_gradient_into(a0, a1, b0, b1, eps_x, gm)
            if order >= 2:
                edge_edge_mollifier_hessian_into(a0, a1, b0, b1, eps_x, hm)
    if order == 0:
        return scale * m * b
    db = barrier_first_derivative(d2, dhat2)
    for i in range(n):
        g[i] = scale * m * db * gd[i]
        if mollified:
            g[i] += scale * b * gm[i]
    if order >= 2:
        d2b = barrier_second_derivative(d2, dhat2)
        c1 = scale * m * d2b
        c2 = scale * m * db
        for i in range(n):
            for j in range(n):
                h[i, j] = c1 * gd[i] * gd[j] + c2 * hd[i, j]
        if mollified:
            c3 = scale * db
            c4 = scale * b
            for i in range(n):
                for j in range(n):
                    h[i, j] += c3 * (gd[i] * gm[j] + gm[i] * gd[j]) + c4 * hm[i, j]
    return scale * m * b


@njit(cache=True)
def _project_local(kind, h, method, ws):
    """Project the local Hessian h[:3k, :3k] to PSD in place (``psd`` module)."""
    k = STENCIL_SIZE[kind]
    if method == psd.PROJECT_NONE:
        return
    if method != psd.PROJECT_ANALYTIC:
        psd.project_full(h, 3 * k, method, ws)
        return
    if kind == PV:  # rank one: h = lam n n^T with lam = trace(h)
        lam = h[0, 0] + h[1, 1] + h[2, 2]
        if lam < 0.0:
            h[:3, :3] = 0.0
        return
    if kind == VV:
        _project_vertex_vertex(h, method, ws)
        return
    psd.project_translation_invariant(h, k, method, ws)


@njit(cache=True)
def _project_vertex_vertex(h, method, ws):
    """Exact PSD projection of a vertex-vertex Hessian (6, 6) through a 3x3 eigenproblem.

    d2 = |p0 - p1|^2 depends on p0 - p1 only, so h = [[1, -1], [-1, 1]] (x) A with A = h[:3, :3]
    (= 4 b'' u u^T + 2 b' I times the weight, u = p0 - p1). Since [[1, -1], [-1, 1]] has the
    eigenvalues 2 and 0, the eigenpairs of h are those of A (times 2) and zeros: projecting A
    projects h exactly.
    """
    a = ws[5]
    for i in range(3):
        for j in range(3):
            a[i, j] = 0.5 * (h[i, j] + h[j, i])
    psd.project_symmetric_inplace(a, 3, method, ws[1], ws[2], ws[3], ws[4])
    for i in range(3):
        for j in range(3):
            h[i, j] = a[i, j]
            h[i + 3, j + 3] = a[i, j]
            h[i, j + 3] = -a[i, j]
            h[i + 3, j] = -a[i, j]


def _chunks(n: int) -> np.ndarray:
    """Chunk boundaries for the parallel loops (scratch arrays are allocated once per chunk)."""
    n_chunks = max(1, min(n, 8 * get_num_threads()))
    return np.linspace(0, n, n_chunks + 1).astype(np.int64)


@njit(cache=True, parallel=True)
def _value_kernel(kind, verts, prims, dtype, eps_x, weight, x, plane_o, plane_n, dhat2, scale, bounds):
    partial = np.zeros(len(bounds) - 1)
    for ch in prange(len(bounds) - 1):
        g = np.empty(12)
        h = np.empty((12, 12))
        acc = 0.0
        for c in range(bounds[ch], bounds[ch + 1]):
            acc += _local_barrier(kind[c], verts[c], prims[c, 0], dtype[c], eps_x[c], x, plane_o, plane_n, dhat2,
                                  scale * weight[c], 0, g, h, g, h, g, h)
        partial[ch] = acc
    return partial.sum()


@njit(cache=True, parallel=True)
def _gradient_kernel(kind, verts, prims, dtype, eps_x, weight, x, plane_o, plane_n, dhat2, scale, bounds):
    n = len(kind)
    local = np.empty((n, 12))
    for ch in prange(len(bounds) - 1):
        gd = np.empty(12)
        gm = np.empty(12)
        hd = np.empty((12, 12))
        for c in range(bounds[ch], bounds[ch + 1]):
            _local_barrier(kind[c], verts[c], prims[c, 0], dtype[c], eps_x[c], x, plane_o, plane_n, dhat2,
                           scale * weight[c], 1, local[c], hd, gd, hd, gm, hd)
    out = np.zeros(3 * x.shape[0])
    for c in range(n):
        k = STENCIL_SIZE[kind[c]]
        for a in range(k):
            base = 3 * verts[c, a]
            for i in range(3):
                out[base + i] += local[c, 3 * a + i]
    return out


@njit(cache=True, parallel=True)
def _hessian_kernel(kind, verts, prims, dtype, eps_x, weight, x, plane_o, plane_n, dhat2, scale, method, bounds):
    n = len(kind)
    local = np.empty((n, 12, 12))
    nverts = np.empty(n, np.int64)
    for ch in prange(len(bounds) - 1):
        g = np.empty(12)
        gd = np.empty(12)
        gm = np.empty(12)
        hd = np.zeros((12, 12))
        hm = np.empty((12, 12))
        ws = psd.make_workspace()
        for c in range(bounds[ch], bounds[ch + 1]):
            h = local[c]
            _local_barrier(kind[c], verts[c], prims[c, 0], dtype[c], eps_x[c], x, plane_o, plane_n, dhat2,
                           scale * weight[c], 2, g, h, gd, hd, gm, hm)
            _project_local(kind[c], h, method, ws)
            nverts[c] = STENCIL_SIZE[kind[c]]
    return local, nverts


# ---------------------------------------------------------------------------- public API
def _inputs(collisions, mesh, x, stiffness, use_physical_barrier):
    x = np.asarray(x, dtype=np.float64)
    if x.shape != (mesh.n_vertices, 3):
        raise ValueError(f"barrier potential: x must have shape ({mesh.n_vertices}, 3), got {x.shape}")
    dhat = float(collisions.dhat)
    if not dhat > 0.0:
        raise ValueError(f"barrier potential: collisions.dhat must be positive (got {dhat}); build the set first")
    if not np.isfinite(stiffness) or stiffness < 0.0:
        raise ValueError(f"barrier potential: stiffness must be a finite non-negative number, got {stiffness}")
    scale = float(stiffness) / dhat**3 if use_physical_barrier else float(stiffness)
    plane_o, plane_n = mesh.planes_array()
    prims = np.ascontiguousarray(collisions.primitives, dtype=np.int64).reshape(-1, 2)
    return (np.ascontiguousarray(collisions.kind, dtype=np.int64),
            np.ascontiguousarray(collisions.vertices, dtype=np.int64).reshape(-1, 4),
            prims,
            np.ascontiguousarray(collisions.dtype, dtype=np.int64),
            np.ascontiguousarray(collisions.eps_x, dtype=np.float64),
            np.ascontiguousarray(collisions.weight, dtype=np.float64),
            np.ascontiguousarray(x), plane_o, plane_n, dhat * dhat, scale)


def barrier_potential(collisions, mesh, x, stiffness: float = 1.0, use_physical_barrier: bool = False) -> float:
    """P(x) = kappa s sum_c w_c m_c b(d2_c, dhat^2) (module docstring); x (n, 3) [m].

    Units: kappa * m^4 (plain) or kappa * m^3 per unit weight (physical: with area weights [m^2]
    and kappa [Pa], Joules). dhat is ``collisions.dhat``.
    """
    args = _inputs(collisions, mesh, x, stiffness, use_physical_barrier)
    if len(args[0]) == 0:
        return 0.0
    return float(_value_kernel(*args, _chunks(len(args[0]))))


def barrier_potential_gradient(collisions, mesh, x, stiffness: float = 1.0,
                               use_physical_barrier: bool = False) -> np.ndarray:
    """Gradient of ``barrier_potential`` w.r.t. x, shape (3n,), vertex-major (x[i, k] -> 3i + k)."""
    args = _inputs(collisions, mesh, x, stiffness, use_physical_barrier)
    if len(args[0]) == 0:
        return np.zeros(3 * mesh.n_vertices)
    return _gradient_kernel(*args, _chunks(len(args[0])))


def barrier_potential_hessian(collisions, mesh, x, stiffness: float = 1.0, use_physical_barrier: bool = False,
                              project: str = "none"):
    """Hessian of ``barrier_potential`` w.r.t. x: scipy.sparse.csr_matrix (3n, 3n), vertex-major.

    project: 'none' (exact Hessian), 'clamp' (per-stencil eigenvalue clamping), 'abs' (absolute
    eigenvalues) or 'analytic' (the clamped matrix computed from the barrier's structure, see
    ``psd``; equal to 'clamp' up to round-off, cheaper).
    """
    method = psd.projection_code(project)
    args = _inputs(collisions, mesh, x, stiffness, use_physical_barrier)
    n = mesh.n_vertices
    if len(args[0]) == 0:
        import scipy.sparse as sp

        return sp.csr_matrix((3 * n, 3 * n))
    local, nverts = _hessian_kernel(*args, method, _chunks(len(args[0])))
    return assemble_block_csr(args[1], nverts, local, n)
