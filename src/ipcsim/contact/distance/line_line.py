"""Squared distance between the infinite lines through (ea0, ea1) and (eb0, eb1), and derivatives.

    n = (ea1 - ea0) x (eb1 - eb0),   d2 = (n . (eb0 - ea0))^2 / |n|^2   [m^2]
(the ``_triple`` kernel with w = eb0 - ea0, u = ea1 - ea0, v = eb1 - eb0). Derivatives are taken in
y = (ea1 - ea0, eb0 - ea0, eb1 - ea0), so d/d(eb0 - ea0) = d/dw - d/dv, and the ea0 rows follow
from translation invariance. Stencil order (ea0, ea1, eb0, eb1): gradient (12,) [m],
Hessian (12, 12) [1]. Undefined (division by zero) for parallel lines (n = 0).
"""
from __future__ import annotations

import numpy as np

from ...runtime.jit import generic_njit
from ._triple import triple_reduced_gradient, triple_reduced_hessian_blocks, triple_value
from ._vec import (check_matrix_out, check_vector_out, check_vertex, grad_fill_reference, hess_col_axpy,
                   hess_fill_reference, hess_row_axpy, set_block_vec, sub, vec3)


# ------------------------------------------------------------------ block kernels (private)
@generic_njit(error_model="numpy")
def _ll_value(ea0, ea1, eb0, eb1):
    return triple_value(sub(eb0, ea0), sub(ea1, ea0), sub(eb1, eb0))


@generic_njit(error_model="numpy")
def _ll_gradient_blocks(ea0, ea1, eb0, eb1, g, ba0, ba1, bb0, bb1):
    """Return d2 and write grad d2 into blocks ba0, ba1, bb0, bb1 of g."""
    d2, g_w, g_u, g_v = triple_reduced_gradient(sub(eb0, ea0), sub(ea1, ea0), sub(eb1, eb0))
    set_block_vec(g, ba1, 1.0, g_u)
    set_block_vec(g, bb0, 1.0, (g_w[0] - g_v[0], g_w[1] - g_v[1], g_w[2] - g_v[2]))
    set_block_vec(g, bb1, 1.0, g_v)
    grad_fill_reference(g, ba0, (ba1, bb0, bb1))
    return d2


@generic_njit(error_model="numpy")
def _ll_hessian_blocks(ea0, ea1, eb0, eb1, h, ba0, ba1, bb0, bb1):
    """Write Hess d2 into the (ba0, ba1, bb0, bb1)^2 blocks of h."""
    triple_reduced_hessian_blocks(sub(eb0, ea0), sub(ea1, ea0), sub(eb1, eb0), h, bb0, ba1, bb1)
    blocks = (ba1, bb0, bb1)
    hess_row_axpy(h, bb0, bb1, -1.0, blocks)  # rows: d/d(b0) = d/dw - d/dv
    hess_col_axpy(h, bb0, bb1, -1.0, blocks)  # columns likewise
    hess_fill_reference(h, ba0, blocks)


@generic_njit(error_model="numpy")
def _check4(a, b, c, d):
    return check_vertex(a) & check_vertex(b) & check_vertex(c) & check_vertex(d)


# ------------------------------------------------------------------ public API
@generic_njit(error_model="numpy")
def line_line_distance_squared(ea0, ea1, eb0, eb1):
    """Squared distance [m^2] between line (ea0, ea1) and line (eb0, eb1); all (3,) float64 [m]."""
    if not _check4(ea0, ea1, eb0, eb1):
        raise ValueError("line_line_distance_squared: ea0, ea1, eb0, eb1 must be float arrays of shape (3,)")
    return _ll_value(vec3(ea0), vec3(ea1), vec3(eb0), vec3(eb1))


@generic_njit(error_model="numpy")
def line_line_distance_squared_gradient_into(ea0, ea1, eb0, eb1, out):
    """Write d(d2)/d(ea0, ea1, eb0, eb1) [m] into out, a (12,) float64 array (every entry overwritten).
    Returns d2 [m^2] as a by-product."""
    if not _check4(ea0, ea1, eb0, eb1):
        raise ValueError("line_line_distance_squared_gradient: ea0, ea1, eb0, eb1 must be float arrays of shape (3,)")
    if not check_vector_out(out, 12):
        raise ValueError("line_line_distance_squared_gradient_into: out must have shape (12,)")
    return _ll_gradient_blocks(vec3(ea0), vec3(ea1), vec3(eb0), vec3(eb1), out, 0, 1, 2, 3)


@generic_njit(error_model="numpy")
def line_line_distance_squared_gradient(ea0, ea1, eb0, eb1):
    """d(d2)/d(ea0, ea1, eb0, eb1): (12,) float64 [m]."""
    out = np.empty(12)
    line_line_distance_squared_gradient_into(ea0, ea1, eb0, eb1, out)
    return out


@generic_njit(error_model="numpy")
def line_line_distance_squared_hessian_into(ea0, ea1, eb0, eb1, out):
    """Write the Hessian of d2 [1] into out, a (12, 12) float64 array (every entry overwritten)."""
    if not _check4(ea0, ea1, eb0, eb1):
        raise ValueError("line_line_distance_squared_hessian: ea0, ea1, eb0, eb1 must be float arrays of shape (3,)")
    if not check_matrix_out(out, 12):
        raise ValueError("line_line_distance_squared_hessian_into: out must have shape (12, 12)")
    _ll_hessian_blocks(vec3(ea0), vec3(ea1), vec3(eb0), vec3(eb1), out, 0, 1, 2, 3)


@generic_njit(error_model="numpy")
def line_line_distance_squared_hessian(ea0, ea1, eb0, eb1):
    """Hessian of d2 w.r.t. (ea0, ea1, eb0, eb1): (12, 12) float64 [1]."""
    out = np.empty((12, 12))
    line_line_distance_squared_hessian_into(ea0, ea1, eb0, eb1, out)
    return out
