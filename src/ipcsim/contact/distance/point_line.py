"""Squared distance from point p to the infinite line through e0, e1, and its derivatives.

With r = p - e0, e = e1 - e0, n = r x e, N = |n|^2, L = |e|^2:
    d2 = N / L  [m^2]
    grad_r d2 = (2 e x n) / L,    grad_e d2 = (2 n x r) / L - (2 N / L^2) e
    Hess d2   = Hess(N) / L - (g dL^T + dL g^T) / L - (N / L^2) Hess(L)
where g = grad d2, dL = (0, 2e), Hess(L) = diag(0, 2I) in the reduced coordinates (r, e), and
Hess(N) is the cross-product Hessian of ``_vec.add_cross_squarednorm_hessian_blocks``. The
e0 rows follow from translation invariance (they are minus the sum of the others).
Stencil order (p, e0, e1): gradient (9,) [m], Hessian (9, 9) [1]. Undefined (division by
zero) for a degenerate line e0 == e1.
"""
from __future__ import annotations

import numpy as np

from ...runtime.jit import generic_njit
from ._vec import (add_block_identity, add_block_outer, add_cross_squarednorm_hessian_blocks, check_matrix_out,
                   check_vector_out, check_vertex, cross, grad_fill_reference, hess_fill_reference,
                   set_block_vec, squared_norm, sub, zero_blocks, vec3)


# ------------------------------------------------------------------ block kernels (private)
@generic_njit(error_model="numpy")
def _pl_value(p, e0, e1):
    e = sub(e1, e0)
    return squared_norm(cross(sub(p, e0), e)) / squared_norm(e)


@generic_njit(error_model="numpy")
def _pl_reduced_gradient(r, e):
    """(N, L, grad_r d2, grad_e d2) in the reduced coordinates (r, e)."""
    n = cross(r, e)
    N = squared_norm(n)
    L = squared_norm(e)
    inv_L = 1.0 / L
    a = cross(e, n)
    b = cross(n, r)
    c = N * inv_L
    g_r = (2.0 * a[0] * inv_L, 2.0 * a[1] * inv_L, 2.0 * a[2] * inv_L)
    g_e = (2.0 * (b[0] - c * e[0]) * inv_L, 2.0 * (b[1] - c * e[1]) * inv_L, 2.0 * (b[2] - c * e[2]) * inv_L)
    return N, L, g_r, g_e


@generic_njit(error_model="numpy")
def _pl_gradient_blocks(p, e0, e1, g, bp, be0, be1):
    """Return d2 and write grad d2 into blocks bp, be0, be1 of g."""
    r = sub(p, e0)
    e = sub(e1, e0)
    N, L, g_r, g_e = _pl_reduced_gradient(r, e)
    set_block_vec(g, bp, 1.0, g_r)
    set_block_vec(g, be1, 1.0, g_e)
    grad_fill_reference(g, be0, (bp, be1))
    return N / L


@generic_njit(error_model="numpy")
def _pl_hessian_blocks(p, e0, e1, h, bp, be0, be1):
    """Write Hess d2 into the (bp, be0, be1)^2 blocks of h."""
    r = sub(p, e0)
    e = sub(e1, e0)
    N, L, g_r, g_e = _pl_reduced_gradient(r, e)
    inv_L = 1.0 / L
    zero_blocks(h, (bp, be1))
    add_cross_squarednorm_hessian_blocks(h, bp, be1, inv_L, r, e)
    c = -2.0 * inv_L  # -(g dL^T + dL g^T) / L with dL = (0, 2e)
    add_block_outer(h, bp, be1, c, g_r, e)
    add_block_outer(h, be1, bp, c, e, g_r)
    add_block_outer(h, be1, be1, c, g_e, e)
    add_block_outer(h, be1, be1, c, e, g_e)
    add_block_identity(h, be1, be1, -2.0 * N * inv_L * inv_L)
    hess_fill_reference(h, be0, (bp, be1))


# ------------------------------------------------------------------ public API
@generic_njit(error_model="numpy")
def point_line_distance_squared(p, e0, e1):
    """Squared distance [m^2] from p to the line through e0, e1; all (3,) float64 [m]."""
    if not (check_vertex(p) & check_vertex(e0) & check_vertex(e1)):
        raise ValueError("point_line_distance_squared: p, e0, e1 must be float arrays of shape (3,)")
    return _pl_value(vec3(p), vec3(e0), vec3(e1))


@generic_njit(error_model="numpy")
def point_line_distance_squared_gradient_into(p, e0, e1, out):
    """Write d(d2)/d(p, e0, e1) [m] into out, a (9,) float64 array (every entry overwritten).
    Returns d2 [m^2] as a by-product."""
    if not (check_vertex(p) & check_vertex(e0) & check_vertex(e1)):
        raise ValueError("point_line_distance_squared_gradient: p, e0, e1 must be float arrays of shape (3,)")
    if not check_vector_out(out, 9):
        raise ValueError("point_line_distance_squared_gradient_into: out must have shape (9,)")
    return _pl_gradient_blocks(vec3(p), vec3(e0), vec3(e1), out, 0, 1, 2)


@generic_njit(error_model="numpy")
def point_line_distance_squared_gradient(p, e0, e1):
    """d(d2)/d(p, e0, e1): (9,) float64 [m]."""
    out = np.empty(9)
    point_line_distance_squared_gradient_into(p, e0, e1, out)
    return out


@generic_njit(error_model="numpy")
def point_line_distance_squared_hessian_into(p, e0, e1, out):
    """Write the Hessian of d2 w.r.t. (p, e0, e1) [1] into out, (9, 9) float64 (every entry overwritten)."""
    if not (check_vertex(p) & check_vertex(e0) & check_vertex(e1)):
        raise ValueError("point_line_distance_squared_hessian: p, e0, e1 must be float arrays of shape (3,)")
    if not check_matrix_out(out, 9):
        raise ValueError("point_line_distance_squared_hessian_into: out must have shape (9, 9)")
    _pl_hessian_blocks(vec3(p), vec3(e0), vec3(e1), out, 0, 1, 2)


@generic_njit(error_model="numpy")
def point_line_distance_squared_hessian(p, e0, e1):
    """Hessian of d2 w.r.t. (p, e0, e1): (9, 9) float64 [1]."""
    out = np.empty((9, 9))
    point_line_distance_squared_hessian_into(p, e0, e1, out)
    return out
