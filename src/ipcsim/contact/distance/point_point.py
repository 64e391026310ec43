"""Squared point-point distance d2 = |p0 - p1|^2 [m^2] and its derivatives.

Stencil order (p0, p1); gradient (6,) [m], Hessian (6, 6) [1]:
    grad = 2 (p0 - p1, p1 - p0),   Hess = 2 [[I, -I], [-I, I]].
d = sqrt(d2) is not differentiable at p0 == p1; d2 is smooth everywhere.
"""
from __future__ import annotations

import numpy as np

from ...runtime.jit import generic_njit
from ._vec import check_matrix_out, check_vector_out, check_vertex, set_block_vec, squared_norm, sub, vec3


# ------------------------------------------------------------------ block kernels (private)
@generic_njit(error_model="numpy")
def _pp_gradient_blocks(p0, p1, g, b0, b1):
    """Return d2 and write grad d2 into blocks b0, b1 of g."""
    r = sub(p0, p1)
    set_block_vec(g, b0, 2.0, r)
    set_block_vec(g, b1, -2.0, r)
    return squared_norm(r)


@generic_njit(error_model="numpy")
def _pp_hessian_blocks(h, b0, b1):
    """Write Hess d2 into the (b0, b1) x (b0, b1) blocks of h (other entries of them zeroed)."""
    for i in range(3):
        for j in range(3):
            v = 2.0 if i == j else 0.0
            h[3 * b0 + i, 3 * b0 + j] = v
            h[3 * b1 + i, 3 * b1 + j] = v
            h[3 * b0 + i, 3 * b1 + j] = -v
            h[3 * b1 + i, 3 * b0 + j] = -v


# ------------------------------------------------------------------ public API
@generic_njit(error_model="numpy")
def point_point_distance_squared(p0, p1):
    """|p0 - p1|^2 [m^2]; p0, p1: (3,) float64 [m]."""
    if not (check_vertex(p0) & check_vertex(p1)):
        raise ValueError("point_point_distance_squared: p0, p1 must be float arrays of shape (3,)")
    return squared_norm(sub(vec3(p0), vec3(p1)))


@generic_njit(error_model="numpy")
def point_point_distance_squared_gradient_into(p0, p1, out):
    """Write d(d2)/d(p0, p1) [m] into out, a (6,) float64 array (every entry overwritten).
    Returns d2 [m^2] as a by-product."""
    if not (check_vertex(p0) & check_vertex(p1)):
        raise ValueError("point_point_distance_squared_gradient: p0, p1 must be float arrays of shape (3,)")
    if not check_vector_out(out, 6):
        raise ValueError("point_point_distance_squared_gradient_into: out must have shape (6,)")
    return _pp_gradient_blocks(vec3(p0), vec3(p1), out, 0, 1)


@generic_njit(error_model="numpy")
def point_point_distance_squared_gradient(p0, p1):
    """d(d2)/d(p0, p1): (6,) float64 [m]."""
    out = np.empty(6)
    point_point_distance_squared_gradient_into(p0, p1, out)
    return out


@generic_njit(error_model="numpy")
def point_point_distance_squared_hessian_into(p0, p1, out):
    """Write the Hessian of d2 [1] into out, a (6, 6) float64 array (every entry overwritten)."""
    if not (check_vertex(p0) & check_vertex(p1)):
        raise ValueError("point_point_distance_squared_hessian: p0, p1 must be float arrays of shape (3,)")
    if not check_matrix_out(out, 6):
        raise ValueError("point_point_distance_squared_hessian_into: out must have shape (6, 6)")
    _pp_hessian_blocks(out, 0, 1)


@generic_njit(error_model="numpy")
def point_point_distance_squared_hessian(p0, p1):
    """Hessian of d2 w.r.t. (p0, p1): (6, 6) float64 [1]."""
    out = np.empty((6, 6))
    point_point_distance_squared_hessian_into(p0, p1, out)
    return out
