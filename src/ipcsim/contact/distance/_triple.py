"""Shared kernel of point-plane and line-line: f = s^2 / N with n = u x v, s = n . w, N = |n|^2.

Reduced coordinates y = (w, u, v), three free 3-vectors:
    ds/dw = n,   ds/du = v x w,   ds/dv = w x u
    dN/dw = 0,   dN/du = 2 v x n, dN/dv = 2 n x u
    grad f = (2 s / N) ds - (s^2 / N^2) dN
    Hess f = (2 / N) q q^T + (2 s / N) Hess(s) - (s^2 / N^2) Hess(N),   q = ds - (s / N) dN
    Hess(s): (w,u) = -[v]x, (w,v) = [u]x, (u,v) = -[w]x (and transposes), zero diagonal blocks
    Hess(N): see ``_vec.add_cross_squarednorm_hessian_blocks`` (zero w rows/columns).
Point-plane: w = p - t0, u = t1 - t0, v = t2 - t0.  Line-line: w = eb0 - ea0, u = ea1 - ea0,
v = eb1 - eb0.  Undefined (division by zero) when u and v are parallel (N = 0).
"""
from __future__ import annotations

from ...runtime.jit import generic_njit
from ._vec import add_block_skew, add_cross_squarednorm_hessian_blocks, cross, dot, set_block_outer, squared_norm


@generic_njit(error_model="numpy")
def triple_value(w, u, v):
    """s^2 / N [m^2]."""
    n = cross(u, v)
    s = dot(n, w)
    return s * s / squared_norm(n)


@generic_njit(error_model="numpy")
def triple_reduced_gradient(w, u, v):
    """(f, grad_w f, grad_u f, grad_v f): f [m^2] and three tuples [m]."""
    n = cross(u, v)
    s = dot(n, w)
    N = squared_norm(n)
    c1 = 2.0 * s / N
    c2 = -2.0 * s * s / (N * N)  # -(s^2/N^2) * 2 (the factor 2 of dN)
    su = cross(v, w)
    sv = cross(w, u)
    nu = cross(v, n)
    nv = cross(n, u)
    g_w = (c1 * n[0], c1 * n[1], c1 * n[2])
    g_u = (c1 * su[0] + c2 * nu[0], c1 * su[1] + c2 * nu[1], c1 * su[2] + c2 * nu[2])
    g_v = (c1 * sv[0] + c2 * nv[0], c1 * sv[1] + c2 * nv[1], c1 * sv[2] + c2 * nv[2])
    return s * s / N, g_w, g_u, g_v


@generic_njit(error_model="numpy")
def triple_reduced_hessian_blocks(w, u, v, h, bw, bu, bv):
    """Overwrite the (bw, bu, bv)^2 blocks of h with Hess f in the reduced coordinates (w, u, v)."""
    n = cross(u, v)
    s = dot(n, w)
    N = squared_norm(n)
    r = s / N
    su = cross(v, w)
    sv = cross(w, u)
    nu = cross(v, n)
    nv = cross(n, u)
    # q = ds - (s / N) dN
    q_w = n
    q_u = (su[0] - 2.0 * r * nu[0], su[1] - 2.0 * r * nu[1], su[2] - 2.0 * r * nu[2])
    q_v = (sv[0] - 2.0 * r * nv[0], sv[1] - 2.0 * r * nv[1], sv[2] - 2.0 * r * nv[2])
    c = 2.0 / N
    set_block_outer(h, bw, bw, c, q_w, q_w)
    set_block_outer(h, bw, bu, c, q_w, q_u)
    set_block_outer(h, bw, bv, c, q_w, q_v)
    set_block_outer(h, bu, bw, c, q_u, q_w)
    set_block_outer(h, bu, bu, c, q_u, q_u)
    set_block_outer(h, bu, bv, c, q_u, q_v)
    set_block_outer(h, bv, bw, c, q_v, q_w)
    set_block_outer(h, bv, bu, c, q_v, q_u)
    set_block_outer(h, bv, bv, c, q_v, q_v)
    cs = 2.0 * r
    add_block_skew(h, bw, bu, -cs, v)
    add_block_skew(h, bw, bv, cs, u)
    add_block_skew(h, bu, bv, -cs, w)
    add_cross_squarednorm_hessian_blocks(h, bu, bv, -r * r, u, v)


