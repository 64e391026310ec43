"""Per-stencil kernels of the barrier potential: value, local gradient and local Hessian in one pass.

One stencil c of kind VV / EV / EE / FV / PV (``collisions_data``) with k = STENCIL_SIZE[kind]
vertices contributes (``barrier_potential`` module docstring)

    P_c = sw * m * b(d2, dhat2),          sw = kappa * s * w_c  (stiffness, physical scale, weight)
    grad P_c = sw * (m b' g + b gm)
    Hess P_c = sw * (m b'' g g^T + m b' H_d + b' (g gm^T + gm g^T) + b H_m)

with d2 the squared distance, g = grad d2, H_d = Hess d2, m the edge-edge mollifier of
c_x = |u x v|^2 (u = ea1 - ea0, v = eb1 - eb0): m = m(c_x), gm = m'(c_x) gc, H_m = m'' gc gc^T + m' H_c
(gc = grad c_x, H_c = Hess c_x; m = 1, gm = 0 for non-mollified stencils).

Everything here works on 3-tuples read from x (no heap allocation per stencil) and writes into the
caller's fixed-size buffers: a local gradient (12,) and a local Hessian (12, 12), vertex-major
(row 3a + i is coordinate i of stencil vertex a). Only the leading 3k entries are written.
The squared distance and its derivatives come from the dispatch on the stencil kind in ``stencils``.
"""
from __future__ import annotations

import math

from numba import njit

from .collisions_data import EE
from .distance.edge_edge import ee_value
from .stencils import row3, stencil_d2, stencil_d2_hessian, stencil_size


# ---------------------------------------------------------------------------- scalars
@njit(cache=True, inline="always")
def barrier_and_derivatives(d2, dhat2):
    """(b, b', b'') of the clamped log barrier at squared distance d2 < dhat2 (one log; the same
    formulas as ``barrier.py``): b [m^4], b' = db/d(d2) [m^2], b'' [1]."""
    if d2 <= 0.0:
        return math.inf, -math.inf, math.inf
    lg = math.log(d2 / dhat2)
    t = dhat2 - d2
    b = -t * t * lg
    db = t * (2.0 * lg - dhat2 / d2 + 1.0)
    d2b = -2.0 * lg + t * (dhat2 + 3.0 * d2) / (d2 * d2)
    return b, db, d2b


@njit(cache=True)
def mollifier_scalars(c, eps_x):
    """(m, m', m'') of the edge-edge mollifier at c = |u x v|^2 < eps_x [m^4] (IPC 2020, Sec. 4.3)."""
    r = c / eps_x
    return (2.0 - r) * r, 2.0 / eps_x * (1.0 - r), -2.0 / (eps_x * eps_x)


@njit(cache=True)
def cross_squarednorm_reduced(ea0, ea1, eb0, eb1):
    """(c, u, v, n, dc/du, dc/dv) of c = |u x v|^2 [m^4], u = ea1 - ea0, v = eb1 - eb0, n = u x v;
    dc/du = 2 v x n, dc/dv = 2 n x u (tuples)."""
    u = (ea1[0] - ea0[0], ea1[1] - ea0[1], ea1[2] - ea0[2])
    v = (eb1[0] - eb0[0], eb1[1] - eb0[1], eb1[2] - eb0[2])
    n = (u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0])
    gu = (2.0 * (v[1] * n[2] - v[2] * n[1]), 2.0 * (v[2] * n[0] - v[0] * n[2]), 2.0 * (v[0] * n[1] - v[1] * n[0]))
    gv = (2.0 * (n[1] * u[2] - n[2] * u[1]), 2.0 * (n[2] * u[0] - n[0] * u[2]), 2.0 * (n[0] * u[1] - n[1] * u[0]))
    return n[0] * n[0] + n[1] * n[1] + n[2] * n[2], u, v, n, gu, gv


@njit(cache=True, inline="always")
def _skew(n, a, b):
    """Entry (a, b) of the cross-product matrix [n]x ([n]x y = n x y)."""
    if a == b:
        return 0.0
    if a == 0:
        return -n[2] if b == 1 else n[1]
    if a == 1:
        return n[2] if b == 0 else -n[0]
    return -n[1] if b == 0 else n[0]


@njit(cache=True, inline="always")
def cross_squarednorm_blocks(coef, u, v, n, uu, vv, uv, a, b):
    """Entry (a, b) of coef * (H_uu, H_vv, H_uv), the blocks of Hess c_x in (u, v) (c_x = |u x v|^2, n = u x v,
    uu = |u|^2, vv = |v|^2, uv = u . v): H_uu = 2 (|v|^2 I - v v^T), H_vv = 2 (|u|^2 I - u u^T),
    H_uv = 2 (u v^T - (u.v) I - [n]x)."""
    c2 = 2.0 * coef
    dab = 1.0 if a == b else 0.0
    return (c2 * (vv * dab - v[a] * v[b]), c2 * (uu * dab - u[a] * u[b]),
            c2 * (u[a] * v[b] - uv * dab - _skew(n, a, b)))


@njit(cache=True)
def add_cross_squarednorm_hessian(h, coef, u, v, n):
    """h[:12, :12] += coef * Hess c_x w.r.t. (ea0, ea1, eb0, eb1), c_x = |u x v|^2.

    In (u, v) the blocks of ``cross_squarednorm_blocks``, H_vu = H_uv^T; d/dea0 = -d/du and d/deb0 = -d/dv.
    """
    uu = u[0] * u[0] + u[1] * u[1] + u[2] * u[2]
    vv = v[0] * v[0] + v[1] * v[1] + v[2] * v[2]
    uv = u[0] * v[0] + u[1] * v[1] + u[2] * v[2]
    for a in range(3):
        for b in range(3):
            huu, hvv, huv = cross_squarednorm_blocks(coef, u, v, n, uu, vv, uv, a, b)
            h[a, b] += huu
            h[a, 3 + b] -= huu
            h[3 + a, b] -= huu
            h[3 + a, 3 + b] += huu
            h[6 + a, 6 + b] += hvv
            h[6 + a, 9 + b] -= hvv
            h[9 + a, 6 + b] -= hvv
            h[9 + a, 9 + b] += hvv
            # (a-blocks, b-blocks) get +-huv, (b-blocks, a-blocks) its transpose
            h[a, 6 + b] += huv
            h[a, 9 + b] -= huv
            h[3 + a, 6 + b] -= huv
            h[3 + a, 9 + b] += huv
            h[6 + b, a] += huv
            h[9 + b, a] -= huv
            h[6 + b, 3 + a] -= huv
            h[9 + b, 3 + a] += huv


# ---------------------------------------------------------------------------- barrier per stencil
#: Structure of a local Hessian returned by ``local_hessian`` (used by the exact projections):
#: FORM_GENERAL: no known structure (mollified edge-edge, or inactive);
#: FORM_BARRIER: h = c1 g g^T + c2 H_d (non-mollified: c1 = sw b'', c2 = sw b');
#: FORM_PARALLEL: mollified edge-edge with exactly parallel edges (|ea x eb|^2 == 0): m = 0 and
#: grad c_x = 0, so h = c4 H_c (c4 = sw b m' returned as c1) with H_c = Hess |ea x eb|^2 PSD
#: (c_x >= 0 attains its minimum there).
FORM_GENERAL = 0
FORM_BARRIER = 1
FORM_PARALLEL = 2


@njit(cache=True, inline="always")
def parallel_edges(kind, v, dtype, eps_x, x, dhat2):
    """For exactly parallel mollified edges (EE with |ea x eb|^2 == 0 < eps_x): (True, d2, u, v, n);
    (False, ...) otherwise. There m = 0 and grad |ea x eb|^2 = 0, so the stencil's value and gradient
    are exactly zero and its Hessian is sw b m' Hess|ea x eb|^2 (FORM_PARALLEL): callers skip the
    distance derivatives. Not taken at d2 <= 0 (infinite barrier: the general path's inf/nan)."""
    z = (0.0, 0.0, 0.0)
    if kind != EE:
        return False, 0.0, z, z, z
    ea0, ea1, eb0, eb1 = row3(x, v[0]), row3(x, v[1]), row3(x, v[2]), row3(x, v[3])
    c, u, vv, nn, _, _ = cross_squarednorm_reduced(ea0, ea1, eb0, eb1)
    if not (c == 0.0 and c < eps_x):
        return False, 0.0, z, z, z
    d2 = ee_value(ea0, ea1, eb0, eb1, dtype)
    if not d2 > 0.0:
        return False, 0.0, z, z, z
    return True, d2, u, vv, nn


@njit(cache=True, inline="always")
def parallel_edges_coefficient(d2, eps_x, dhat2, sw):
    """c4 = sw b(d2) m'(0) of exactly parallel mollified edges at squared distance d2 (their Hessian is
    c4 Hess|ea x eb|^2, FORM_PARALLEL); 0 when inactive (d2 >= dhat2)."""
    if not d2 < dhat2:
        return 0.0
    b, _, _ = barrier_and_derivatives(d2, dhat2)
    _, dm, _ = mollifier_scalars(0.0, eps_x)
    return sw * b * dm


@njit(cache=True)
def local_value(kind, v, plane, dtype, eps_x, x, plane_o, plane_n, dhat2, sw):
    """sw * m * b of one stencil."""
    d2 = stencil_d2(kind, v, plane, dtype, x, plane_o, plane_n, None)
    if not d2 < dhat2:
        return 0.0
    b, _, _ = barrier_and_derivatives(d2, dhat2)
    if kind == EE:
        c, _, _, _, _, _ = cross_squarednorm_reduced(row3(x, v[0]), row3(x, v[1]), row3(x, v[2]), row3(x, v[3]))
        if c < eps_x:
            m, _, _ = mollifier_scalars(c, eps_x)
            return sw * m * b
    return sw * b


@njit(cache=True, inline="always")
def local_gradient(kind, v, plane, dtype, eps_x, x, plane_o, plane_n, dhat2, sw, g):
    """Writes grad P_c [kappa s w m^3] into g[:3k] (zeros when inactive); returns P_c."""
    n = 3 * stencil_size(kind)
    par, _, _, _, _ = parallel_edges(kind, v, dtype, eps_x, x, dhat2)
    if par:  # m = 0 and grad m = 0: value and gradient are exactly zero
        for i in range(12):
            g[i] = 0.0
        return 0.0
    d2 = stencil_d2(kind, v, plane, dtype, x, plane_o, plane_n, g)
    if not d2 < dhat2:
        for i in range(n):
            g[i] = 0.0
        return 0.0
    b, db, _ = barrier_and_derivatives(d2, dhat2)
    if kind == EE:
        c, _, _, _, gu, gv = cross_squarednorm_reduced(row3(x, v[0]), row3(x, v[1]), row3(x, v[2]), row3(x, v[3]))
        if c < eps_x:
            m, dm, _ = mollifier_scalars(c, eps_x)
            cg = sw * m * db
            cm = sw * b * dm
            for i in range(3):
                g[i] = cg * g[i] - cm * gu[i]
                g[3 + i] = cg * g[3 + i] + cm * gu[i]
                g[6 + i] = cg * g[6 + i] - cm * gv[i]
                g[9 + i] = cg * g[9 + i] + cm * gv[i]
            return sw * m * b
    cg = sw * db
    for i in range(n):
        g[i] *= cg
    return sw * b


@njit(cache=True)
def local_hessian(kind, v, plane, dtype, eps_x, x, plane_o, plane_n, dhat2, sw, h, g):
    """Writes Hess P_c into h[:3k, :3k] (zeros when inactive); g: (12,) scratch.

    Returns (active, c1, c2, form), form one of FORM_GENERAL / FORM_BARRIER / FORM_PARALLEL (see
    there): for an active non-mollified stencil h = c1 g g^T + c2 H_d with c1 = sw b'', c2 = sw b';
    for exactly parallel mollified edges h = c1 H_c (c2 = 0); c1 = c2 = 0 otherwise.
    """
    n = 3 * stencil_size(kind)
    par, d2, u, vv, nn = parallel_edges(kind, v, dtype, eps_x, x, dhat2)
    if par:  # h = c4 H_c (see FORM_PARALLEL)
        for i in range(12):
            for j in range(12):
                h[i, j] = 0.0
        if not d2 < dhat2:
            return False, 0.0, 0.0, FORM_GENERAL
        c4 = parallel_edges_coefficient(d2, eps_x, dhat2, sw)
        add_cross_squarednorm_hessian(h, c4, u, vv, nn)
        return True, c4, 0.0, FORM_PARALLEL
    d2 = stencil_d2(kind, v, plane, dtype, x, plane_o, plane_n, g)
    if not d2 < dhat2:
        for i in range(n):
            for j in range(n):
                h[i, j] = 0.0
        return False, 0.0, 0.0, FORM_GENERAL
    stencil_d2_hessian(kind, v, plane, dtype, x, plane_n, h)
    b, db, d2b = barrier_and_derivatives(d2, dhat2)
    if kind == EE:
        c, u, vv, nn, gu, gv = cross_squarednorm_reduced(row3(x, v[0]), row3(x, v[1]), row3(x, v[2]),
                                                         row3(x, v[3]))
        if c < eps_x:
            m, dm, d2m = mollifier_scalars(c, eps_x)
            # gc = (-gu, gu, -gv, gv): h = c2 H_d + [g gc] [[c1, c3], [c3, c5]] [g gc]^T + c4 H_c
            c1 = sw * m * d2b
            c2 = sw * m * db
            c3 = sw * db * dm
            c4 = sw * b * dm
            c5 = sw * b * d2m
            gc = (-gu[0], -gu[1], -gu[2], gu[0], gu[1], gu[2], -gv[0], -gv[1], -gv[2], gv[0], gv[1], gv[2])
            for i in range(12):
                gi = g[i]
                ci = gc[i]
                a1 = c1 * gi + c3 * ci
                a2 = c3 * gi + c5 * ci
                for j in range(12):
                    h[i, j] = c2 * h[i, j] + a1 * g[j] + a2 * gc[j]
            add_cross_squarednorm_hessian(h, c4, u, vv, nn)
            if c == 0.0:
                return True, c4, 0.0, FORM_PARALLEL
            return True, 0.0, 0.0, FORM_GENERAL
    c1 = sw * d2b
    c2 = sw * db
    for i in range(n):
        a1 = c1 * g[i]
        for j in range(n):
            h[i, j] = c2 * h[i, j] + a1 * g[j]
    return True, c1, c2, FORM_BARRIER
