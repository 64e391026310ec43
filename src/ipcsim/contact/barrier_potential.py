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

import math

import numpy as np
from numba import get_num_threads, njit, parallel_chunksize, prange

from . import psd
from .barrier_stencils import (FORM_BARRIER, FORM_PARALLEL, cross_squarednorm_blocks, local_gradient, local_hessian,
                               local_value, parallel_edges, parallel_edges_coefficient)
from .collisions_data import EE, FV, PV, STENCIL_SIZE, VV
from .distance.types import EA_EB
from ..runtime.scratch import scratch_array
from ..linalg.sparse import UPPER_BLOCK, assemble_symmetric_block_csr


# ---------------------------------------------------------------------------- loops over stencils
# ``st`` = (kind, verts, prims, dtype, eps_x, weight) arrays of the Collisions container (``_inputs``),
# ``geo`` = (x, plane_o, plane_n); ``sc`` = (dhat2, scale). Each loop body runs on a range of
# stencils [lo, hi); the drivers run it over chunks in parallel or, for small sets (where waking
# the thread pool costs more than the work), on one thread.

#: Active sets with fewer stencils than this are evaluated on one thread.
SERIAL_BELOW = 2048


@njit(cache=True)
def _value_range(st, geo, sc, lo, hi):
    kind, verts, prims, dtype, eps_x, weight = st
    x, plane_o, plane_n = geo
    v = np.empty(4, np.int64)  # private copies: no per-stencil views (see ``_accumulate_range``)
    acc = 0.0
    for c in range(lo, hi):
        for a in range(4):
            v[a] = verts[c, a]
        acc += local_value(kind[c], v, prims[c, 0], dtype[c], eps_x[c], x, plane_o, plane_n, sc[0],
                           sc[1] * weight[c])
    return acc


@njit(cache=True, parallel=True)
def _value_parallel(st, geo, sc, bounds):
    partial = np.zeros(len(bounds) - 1)
    for ch in prange(len(bounds) - 1):
        partial[ch] = _value_range(st, geo, sc, bounds[ch], bounds[ch + 1])
    return partial.sum()


@njit(cache=True)
def _value_serial(st, geo, sc):
    return _value_range(st, geo, sc, 0, len(st[0]))


@njit(cache=True)
def _gradient_range(st, geo, sc, lo, hi, local):
    """local[c, :3k] = gradient of stencil c, for c in [lo, hi)."""
    kind, verts, prims, dtype, eps_x, weight = st
    x, plane_o, plane_n = geo
    g = np.empty(12)
    v = np.empty(4, np.int64)  # private copies: no per-stencil views (see ``_accumulate_range``)
    for c in range(lo, hi):
        for a in range(4):
            v[a] = verts[c, a]
        local_gradient(kind[c], v, prims[c, 0], dtype[c], eps_x[c], x, plane_o, plane_n, sc[0],
                       sc[1] * weight[c], g)
        for i in range(12):
            local[c, i] = g[i]


@njit(cache=True)
def _scatter_gradient(kind, verts, local, n_vertices):
    """Sum of the local gradients (n_stencils, 12) into a (3n,) vector, in stencil order."""
    out = np.zeros(3 * n_vertices)
    for c in range(len(kind)):
        for a in range(STENCIL_SIZE[kind[c]]):
            base = 3 * verts[c, a]
            out[base] += local[c, 3 * a]
            out[base + 1] += local[c, 3 * a + 1]
            out[base + 2] += local[c, 3 * a + 2]
    return out


@njit(cache=True, parallel=True)
def _gradient_parallel(st, geo, sc, bounds, local):
    """Local gradients over chunks in parallel (many chunks: robust to a thread that shares its core
    with another process), then one deterministic serial scatter."""
    for ch in prange(len(bounds) - 1):
        _gradient_range(st, geo, sc, bounds[ch], bounds[ch + 1], local)
    return _scatter_gradient(st[0], st[1], local, geo[0].shape[0])


@njit(cache=True)
def _accumulate_range(st, geo, sc, lo, hi, out):
    """out (3n,) += the gradients of stencils [lo, hi), in stencil order."""
    kind, verts, prims, dtype, eps_x, weight = st
    x, plane_o, plane_n = geo
    g = np.empty(12)
    v = np.empty(4, np.int64)  # private copy of the stencil's ids: a view verts[c] per stencil would
    # update the shared array's reference count atomically, which serialises the threads
    for c in range(lo, hi):
        for a in range(4):
            v[a] = verts[c, a]
        local_gradient(kind[c], v, prims[c, 0], dtype[c], eps_x[c], x, plane_o, plane_n, sc[0],
                       sc[1] * weight[c], g)
        for a in range(STENCIL_SIZE[kind[c]]):
            base = 3 * v[a]
            out[base] += g[3 * a]
            out[base + 1] += g[3 * a + 1]
            out[base + 2] += g[3 * a + 2]


@njit(cache=True)
def _gradient_serial(st, geo, sc):
    out = np.zeros(3 * geo[0].shape[0])
    _accumulate_range(st, geo, sc, 0, len(st[0]), out)
    return out


@njit(cache=True)
def _unit_normal(kind, v, x):
    """Unit normal (3-tuple) of triangle (v1, v2, v3) (FV) or of ea x eb (EE); ok=False if degenerate."""
    if kind == FV:
        a, b, c = v[1], v[2], v[3]
        u = (x[b, 0] - x[a, 0], x[b, 1] - x[a, 1], x[b, 2] - x[a, 2])
        w = (x[c, 0] - x[a, 0], x[c, 1] - x[a, 1], x[c, 2] - x[a, 2])
    else:
        u = (x[v[1], 0] - x[v[0], 0], x[v[1], 1] - x[v[0], 1], x[v[1], 2] - x[v[0], 2])
        w = (x[v[3], 0] - x[v[2], 0], x[v[3], 1] - x[v[2], 1], x[v[3], 2] - x[v[2], 2])
    n = (u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0])
    nn = math.sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2])
    if not nn > 0.0:
        return False, (0.0, 0.0, 0.0)
    return True, (n[0] / nn, n[1] / nn, n[2] / nn)


@njit(cache=True)
def _project_local(kind, v, dtype, x, h, c1, c2, form, method, ws):
    """Project the local Hessian h[:3k, :3k] to PSD in place (``psd`` module).

    'analytic' (every branch equals the eigenvalue clamp up to round-off):
    plane-vertex: rank one, clamp its trace; vertex-vertex: closed-form eigensystem from
    (c1, c2) = kappa s w (b'', b'); point-triangle (P_T) and line-line (EA_EB) barrier Hessians:
    the <= 5-dimensional normal/tangent subspace (``psd.project_normal_tangent``); exactly parallel
    mollified edges (form FORM_PARALLEL): h = c1 H_c with H_c PSD, so h is kept (c1 >= 0) or zeroed;
    other barrier-form stencils (never PSD: c2 H_d is indefinite and c1 g g^T is rank one): the
    translation-reduced eigenvalue clamp; mollified edges: unchanged if PSD up to round-off
    (``psd.is_psd_within``), else the translation-reduced clamp. 'clamp' / 'abs': full eigen-decomposition.
    """
    if method == psd.PROJECT_NONE:
        return
    k = STENCIL_SIZE[kind]
    if method != psd.PROJECT_ANALYTIC:
        psd.project_full(h, 3 * k, method, ws)
        return
    if kind == PV:  # rank one: h = lam n n^T with lam = trace(h)
        if h[0, 0] + h[1, 1] + h[2, 2] < 0.0:
            for i in range(3):
                for j in range(3):
                    h[i, j] = 0.0
        return
    if kind == VV:
        u = (x[v[0], 0] - x[v[1], 0], x[v[0], 1] - x[v[1], 1], x[v[0], 2] - x[v[1], 2])
        psd.project_vertex_vertex_closed_form(h, c1, c2, u, method)
        return
    if form == FORM_PARALLEL:
        if c1 < 0.0:
            for i in range(12):
                for j in range(12):
                    h[i, j] = 0.0
        return
    if form == FORM_BARRIER:
        if kind == FV or (kind == EE and dtype == EA_EB):
            ok, nrm = _unit_normal(kind, v, x)
            if ok:
                if kind == FV:
                    psd.project_normal_tangent(h, nrm, 2, 3, method, ws)
                else:
                    psd.project_normal_tangent(h, nrm, 1, 3, method, ws)
                return
        psd.project_translation_invariant(h, k, method, ws)
        return
    if psd.is_psd_within(h, 3 * k, psd.PSD_REL_TOL, ws[1], ws[3]):
        return
    psd.project_translation_invariant(h, k, method, ws)


@njit(cache=True)
def _store_upper(h, k, upper, c):
    """upper[c, UPPER_BLOCK[a, b]] = block (a, b) of h for a <= b < k (compact symmetric storage);
    diagonal blocks symmetrised (h is symmetric up to round-off), so the assembled matrix is exactly
    symmetric. Indexed writes, no views of the shared ``upper`` (see ``_accumulate_range``)."""
    for a in range(k):
        blk = UPPER_BLOCK[a, a]
        for r in range(3):
            for q in range(3):
                upper[c, blk, r, q] = 0.5 * (h[3 * a + r, 3 * a + q] + h[3 * a + q, 3 * a + r])
        for b in range(a + 1, k):
            blk = UPPER_BLOCK[a, b]
            for r in range(3):
                for q in range(3):
                    upper[c, blk, r, q] = h[3 * a + r, 3 * b + q]


#: Sign of stencil vertex a in the edge differences (u, v) = (ea1 - ea0, eb1 - eb0).
_EDGE_SIGN = np.array([-1.0, 1.0, -1.0, 1.0])


@njit(cache=True)
def _store_parallel_edges(c4, u, v, method, upper, c):
    """Exactly parallel mollified edges (FORM_PARALLEL): h = c4 Hess|u x v|^2 (n = u x v = 0), written straight
    into the upper blocks: block (a, b) = sign_a sign_b G_{a // 2, b // 2} with G = c4 [[H_uu, H_uv], [H_vu, H_vv]]
    (``barrier_stencils.cross_squarednorm_blocks``). Hess|u x v|^2 is PSD, so the analytic projection keeps
    c4 >= 0 and zeroes the stencil otherwise (as ``_project_local`` does for this form)."""
    if method == psd.PROJECT_ANALYTIC and c4 < 0.0:
        c4 = 0.0
    uu = u[0] * u[0] + u[1] * u[1] + u[2] * u[2]
    vv = v[0] * v[0] + v[1] * v[1] + v[2] * v[2]
    uv = u[0] * v[0] + u[1] * v[1] + u[2] * v[2]
    z = (0.0, 0.0, 0.0)
    for r in range(3):
        for q in range(3):
            huu, hvv, huv = cross_squarednorm_blocks(c4, u, v, z, uu, vv, uv, r, q)
            for a in range(4):
                for b in range(a, 4):
                    g = huu if b < 2 else (huv if a < 2 else hvv)
                    upper[c, UPPER_BLOCK[a, b], r, q] = _EDGE_SIGN[a] * _EDGE_SIGN[b] * g


@njit(cache=True)
def _hessian_range(st, geo, sc, method, lo, hi, upper, nverts):
    kind, verts, prims, dtype, eps_x, weight = st
    x, plane_o, plane_n = geo
    g = np.empty(12)
    h = np.empty((12, 12))
    ws = psd.make_workspace()
    v = np.empty(4, np.int64)  # private copies: no per-stencil views (see ``_accumulate_range``)
    # exactly parallel mollified edges skip the 12x12 local matrix: their projection is known (see
    # ``_store_parallel_edges``); 'clamp' / 'abs' keep the general path (a full eigen-decomposition each)
    direct = method == psd.PROJECT_NONE or method == psd.PROJECT_ANALYTIC
    for c in range(lo, hi):
        for a in range(4):
            v[a] = verts[c, a]
        k = STENCIL_SIZE[kind[c]]
        nverts[c] = k
        if direct and kind[c] == EE:
            par, d2, u, vv, _ = parallel_edges(kind[c], v, dtype[c], eps_x[c], x, sc[0])
            if par:
                c4 = parallel_edges_coefficient(d2, eps_x[c], sc[0], sc[1] * weight[c])
                _store_parallel_edges(c4, u, vv, method, upper, c)
                continue
        active, c1, c2, form = local_hessian(kind[c], v, prims[c, 0], dtype[c], eps_x[c], x, plane_o,
                                             plane_n, sc[0], sc[1] * weight[c], h, g)
        if active:
            _project_local(kind[c], v, dtype[c], x, h, c1, c2, form, method, ws)
        _store_upper(h, k, upper, c)


@njit(cache=True, parallel=True)
def _hessian_parallel(st, geo, sc, method, bounds, upper, nverts):
    for ch in prange(len(bounds) - 1):
        _hessian_range(st, geo, sc, method, bounds[ch], bounds[ch + 1], upper, nverts)


def _chunks(n: int) -> np.ndarray:
    """Chunk boundaries for the parallel loops (scratch arrays are allocated once per chunk).

    The loops over chunks run with dynamic scheduling (``parallel_chunksize(1)``): with the default
    static split, a thread whose core is shared with another process delays the whole call."""
    n_chunks = max(1, min(n, 8 * get_num_threads()))
    return np.linspace(0, n, n_chunks + 1).astype(np.int64)


# ---------------------------------------------------------------------------- public API
def _inputs(collisions, mesh, x, stiffness, use_physical_barrier):
    """(st, geo, sc) tuples of the loops (see above), validated."""
    x = np.asarray(x, dtype=np.float64)
    if x.shape != (mesh.n_vertices, 3):
        raise ValueError(f"barrier potential: x must have shape ({mesh.n_vertices}, 3), got {x.shape}")
    dhat = float(collisions.dhat)
    if not dhat > 0.0:
        raise ValueError(f"barrier potential: collisions.dhat must be positive (got {dhat}); build the set first")
    if not math.isfinite(stiffness) or stiffness < 0.0:
        raise ValueError(f"barrier potential: stiffness must be a finite non-negative number, got {stiffness}")
    scale = float(stiffness) / dhat**3 if use_physical_barrier else float(stiffness)
    plane_o, plane_n = mesh.planes_array()
    st = (np.ascontiguousarray(collisions.kind, dtype=np.int64),
          np.ascontiguousarray(collisions.vertices, dtype=np.int64).reshape(-1, 4),
          np.ascontiguousarray(collisions.primitives, dtype=np.int64).reshape(-1, 2),
          np.ascontiguousarray(collisions.dtype, dtype=np.int64),
          np.ascontiguousarray(collisions.eps_x, dtype=np.float64),
          np.ascontiguousarray(collisions.weight, dtype=np.float64))
    geo = (np.ascontiguousarray(x), np.ascontiguousarray(plane_o, dtype=np.float64),
           np.ascontiguousarray(plane_n, dtype=np.float64))
    return st, geo, (dhat * dhat, scale)


def barrier_potential(collisions, mesh, x, stiffness: float = 1.0, use_physical_barrier: bool = False) -> float:
    """P(x) = kappa s sum_c w_c m_c b(d2_c, dhat^2) (module docstring); x (n, 3) [m].

    Units: kappa * m^4 (plain) or kappa * m^3 per unit weight (physical: with area weights [m^2]
    and kappa [Pa], Joules). dhat is ``collisions.dhat``.
    """
    st, geo, sc = _inputs(collisions, mesh, x, stiffness, use_physical_barrier)
    n = len(st[0])
    if n == 0:
        return 0.0
    if n < SERIAL_BELOW:
        return float(_value_serial(st, geo, sc))
    with parallel_chunksize(1):  # dynamic scheduling of the chunks (see ``_chunks``)
        return float(_value_parallel(st, geo, sc, _chunks(n)))


def barrier_potential_gradient(collisions, mesh, x, stiffness: float = 1.0,
                               use_physical_barrier: bool = False) -> np.ndarray:
    """Gradient of ``barrier_potential`` w.r.t. x, shape (3n,), vertex-major (x[i, k] -> 3i + k)."""
    st, geo, sc = _inputs(collisions, mesh, x, stiffness, use_physical_barrier)
    n = len(st[0])
    if n == 0:
        return np.zeros(3 * mesh.n_vertices)
    if n < SERIAL_BELOW:
        return _gradient_serial(st, geo, sc)
    with parallel_chunksize(1):  # dynamic scheduling of the chunks (see ``_chunks``)
        return _gradient_parallel(st, geo, sc, _chunks(n), scratch_array("gradient", (n, 12)))


def barrier_potential_hessian(collisions, mesh, x, stiffness: float = 1.0, use_physical_barrier: bool = False,
                              project: str = "none"):
    """Hessian of ``barrier_potential`` w.r.t. x: scipy.sparse.csr_matrix (3n, 3n), vertex-major.

    project: 'none' (exact Hessian), 'clamp' (per-stencil eigenvalue clamping), 'abs' (absolute
    eigenvalues) or 'analytic' (the clamped matrix computed from the barrier's structure, see
    ``psd`` and ``_project_local``; equal to 'clamp' up to round-off, cheaper).
    """
    method = psd.projection_code(project)
    st, geo, sc = _inputs(collisions, mesh, x, stiffness, use_physical_barrier)
    n_vertices = mesh.n_vertices
    n = len(st[0])
    if n == 0:
        import scipy.sparse as sp

        return sp.csr_matrix((3 * n_vertices, 3 * n_vertices))
    upper = scratch_array("hessian", (n, 10, 3, 3))
    nverts = np.empty(n, np.int64)
    if n < SERIAL_BELOW:
        _hessian_range(st, geo, sc, method, 0, n, upper, nverts)
    else:
        with parallel_chunksize(1):  # dynamic scheduling of the chunks (see ``_chunks``)
            _hessian_parallel(st, geo, sc, method, _chunks(n), upper, nverts)
    return assemble_symmetric_block_csr(st[1], nverts, upper, n_vertices)
