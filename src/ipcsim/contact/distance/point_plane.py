"""Squared distance from point p to the plane through t0, t1, t2, and its derivatives.

    n = (t1 - t0) x (t2 - t0),   d2 = (n . (p - t0))^2 / |n|^2   [m^2]
(the ``_triple`` kernel with w = p - t0, u = t1 - t0, v = t2 - t0; the t0 rows follow from
translation invariance). Stencil order (p, t0, t1, t2): gradient (12,) [m], Hessian (12, 12) [1].
Undefined (division by zero) for a degenerate triangle (n = 0).
"""
from __future__ import annotations

import numpy as np

from ...runtime.jit import generic_njit
from ._triple import triple_reduced_gradient, triple_reduced_hessian_blocks, triple_value
from ._vec import (check_matrix_out, check_vector_out, check_vertex, grad_fill_reference, hess_fill_reference,
                   set_block_vec, sub, vec3)


# ------------------------------------------------------------------ block kernels (private)
@generic_njit(error_model="numpy")
def _ppl_value(p, t0, t1, t2):
    return triple_value(sub(p, t0), sub(t1, t0), sub(t2, t0))


@generic_njit(error_model="numpy")
def _ppl_gradient_blocks(p, t0, t1, t2, g, bp, bt0, bt1, bt2):
    """Return d2 and write grad d2 into blocks bp, bt0, bt1, bt2 of g."""
    d2, g_w, g_u, g_v = triple_reduced_gradient(sub(p, t0), sub(t1, t0), sub(t2, t0))
    set_block_vec(g, bp, 1.0, g_w)
    set_block_vec(g, bt1, 1.0, g_u)
    set_block_vec(g, bt2, 1.0, g_v)
    grad_fill_reference(g, bt0, (bp, bt1, bt2))
    return d2


@generic_njit(error_model="numpy")
def _ppl_hessian_blocks(p, t0, t1, t2, h, bp, bt0, bt1, bt2):
    """Write Hess d2 into the (bp, bt0, bt1, bt2)^2 blocks of h."""
    triple_reduced_hessian_blocks(sub(p, t0), sub(t1, t0), sub(t2, t0), h, bp, bt1, bt2)
    hess_fill_reference(h, bt0, (bp, bt1, bt2))


@generic_njit(error_model="numpy")
def _check4(a, b, c, d):
    return check_vertex(a) & check_vertex(b) & check_vertex(c) & check_vertex(d)


# ------------------------------------------------------------------ public API
@generic_njit(error_model="numpy")
def point_plane_distance_squared(p, t0, t1, t2):
    """Squared distance [m^2] from p to the plane of triangle (t0, t1, t2); all (3,) float64 [m]."""
    if not _check4(p, t0, t1, t2):
        raise ValueError("point_plane_distance_squared: p, t0, t1, t2 must be float arrays of shape (3,)")
    return _ppl_value(vec3(p), vec3(t0), vec3(t1), vec3(t2))


@generic_njit(error_model="numpy")
def point_plane_distance_squared_gradient_into(p, t0, t1, t2, out):
    """Write d(d2)/d(p, t0, t1, t2) [m] into out, a (12,) float64 array (every entry overwritten).
    Returns d2 [m^2] as a by-product."""
    if not _check4(p, t0, t1, t2):
        raise ValueError("point_plane_distance_squared_gradient: p, t0, t1, t2 must be float arrays of shape (3,)")
    if not check_vector_out(out, 12):
        raise ValueError("point_plane_distance_squared_gradient_into: out must have shape (12,)")
    return _ppl_gradient_blocks(vec3(p), vec3(t0), vec3(t1), vec3(t2), out, 0, 1, 2, 3)


@generic_njit(error_model="numpy")
def point_plane_distance_squared_gradient(p, t0, t1, t2):
    """d(d2)/d(p, t0, t1, t2): (12,) float64 [m]."""
    out = np.empty(12)
    point_plane_distance_squared_gradient_into(p, t0, t1, t2, out)
    return out


@generic_njit(error_model="numpy")
def point_plane_distance_squared_hessian_into(p, t0, t1, t2, out):
    """Write the Hessian of d2 [1] into out, a (12, 12) float64 array (every entry overwritten)."""
    if not _check4(p, t0, t1, t2):
        raise ValueError("point_plane_distance_squared_hessian: p, t0, t1, t2 must be float arrays of shape (3,)")
    if not check_matrix_out(out, 12):
        raise ValueError("point_plane_distance_squared_hessian_into: out must have shape (12, 12)")
    _ppl_hessian_blocks(vec3(p), vec3(t0), vec3(t1), vec3(t2), out, 0, 1, 2, 3)


@generic_njit(error_model="numpy")
def point_plane_distance_squared_hessian(p, t0, t1, t2):
    """Hessian of d2 w.r.t. (p, t0, t1, t2): (12, 12) float64 [1]."""
    out = np.empty((12, 12))
    point_plane_distance_squared_hessian_into(p, t0, t1, t2, out)
    return out
