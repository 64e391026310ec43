"""Edge-edge mollifier (IPC, Li et al. 2020, Sec. 4.3): smooths the edge-edge barrier where the
two edges become parallel and the edge-edge distance type switches discontinuously.

    c(x)   = |(ea1 - ea0) x (eb1 - eb0)|^2                    [m^4]  (edge_edge_cross_squarednorm)
    eps_x  = 1e-3 |ea_rest|^2 |eb_rest|^2                     [m^4]  (edge_edge_mollifier_threshold)
    m(c)   = (2 - c / eps_x) c / eps_x   for c < eps_x,  1 otherwise   [1]
    m'(c)  = (2 / eps_x) (1 - c / eps_x),   m''(c) = -2 / eps_x^2   (both 0 for c >= eps_x)
The mollified edge-edge barrier is m(c(x)) b(d2(x)). m is C1 at c = eps_x.
Gradient of c, with u = ea1 - ea0, v = eb1 - eb0, n = u x v: dc/du = 2 v x n, dc/dv = 2 n x u,
dc/dea0 = -dc/du, dc/deb0 = -dc/dv; Hessian: ``_vec.add_cross_squarednorm_hessian_blocks``.
Stencil order (ea0, ea1, eb0, eb1): gradients (12,), Hessians (12, 12). The ``_into`` variants
overwrite every entry of ``out``.
"""
from __future__ import annotations

import numpy as np

from ...runtime.jit import generic_njit
from ._vec import (add_block_outer, add_cross_squarednorm_hessian_blocks, check_matrix_out, check_vector_out,
                   check_vertex, cross, hess_col_axpy, hess_row_axpy, set_block_vec, squared_norm, sub, vec3)

#: eps_x = MOLLIFIER_THRESHOLD_SCALE * |ea_rest|^2 * |eb_rest|^2 (IPC 2020, Sec. 4.3).
MOLLIFIER_THRESHOLD_SCALE = 1e-3


@generic_njit(error_model="numpy")
def _check4(a, b, c, d):
    return check_vertex(a) & check_vertex(b) & check_vertex(c) & check_vertex(d)


# ------------------------------------------------------------------ scalar mollifier m(c)
@generic_njit(error_model="numpy")
def mollifier(c, eps_x):
    """m(c) [1] for c = |ea x eb|^2 [m^4] and threshold eps_x [m^4]."""
    if c < eps_x:
        r = c / eps_x
        return (2.0 - r) * r
    return 1.0


@generic_njit(error_model="numpy")
def mollifier_first_derivative(c, eps_x):
    """dm/dc [1/m^4]."""
    if c < eps_x:
        return 2.0 / eps_x * (1.0 - c / eps_x)
    return 0.0


@generic_njit(error_model="numpy")
def mollifier_second_derivative(c, eps_x):
    """d2m/dc2 [1/m^8]."""
    if c < eps_x:
        return -2.0 / (eps_x * eps_x)
    return 0.0


# ------------------------------------------------------------------ threshold
@generic_njit(error_model="numpy")
def edge_edge_mollifier_threshold(ea0_rest, ea1_rest, eb0_rest, eb1_rest):
    """eps_x = 1e-3 |ea1_rest - ea0_rest|^2 |eb1_rest - eb0_rest|^2 [m^4]; rest positions (3,) [m]."""
    if not _check4(ea0_rest, ea1_rest, eb0_rest, eb1_rest):
        raise ValueError("edge_edge_mollifier_threshold: ea0_rest, ea1_rest, eb0_rest, eb1_rest must be "
                         "float arrays of shape (3,)")
    return (MOLLIFIER_THRESHOLD_SCALE * squared_norm(sub(vec3(ea1_rest), vec3(ea0_rest)))
            * squared_norm(sub(vec3(eb1_rest), vec3(eb0_rest))))


# ------------------------------------------------------------------ c(x) = |ea x eb|^2
@generic_njit(error_model="numpy")
def _cross_reduced_gradient(ea0, ea1, eb0, eb1):
    """(c, dc/du, dc/dv) with u = ea1 - ea0, v = eb1 - eb0."""
    u = sub(ea1, ea0)
    v = sub(eb1, eb0)
    n = cross(u, v)
    a = cross(v, n)
    b = cross(n, u)
    return squared_norm(n), (2.0 * a[0], 2.0 * a[1], 2.0 * a[2]), (2.0 * b[0], 2.0 * b[1], 2.0 * b[2])


@generic_njit(error_model="numpy")
def _write_gradient(out, c, g_u, g_v):
    """out = c * (-g_u, g_u, -g_v, g_v)."""
    set_block_vec(out, 0, -c, g_u)
    set_block_vec(out, 1, c, g_u)
    set_block_vec(out, 2, -c, g_v)
    set_block_vec(out, 3, c, g_v)


@generic_njit(error_model="numpy")
def _expand_reduced_hessian(out):
    """Blocks (1, 3) hold the Hessian in (u, v); fill the rest: d/dea0 = -d/du, d/deb0 = -d/dv."""
    hess_row_axpy(out, 0, 1, -1.0, (1, 3))
    hess_row_axpy(out, 2, 3, -1.0, (1, 3))
    hess_col_axpy(out, 0, 1, -1.0, (0, 1, 2, 3))
    hess_col_axpy(out, 2, 3, -1.0, (0, 1, 2, 3))


@generic_njit(error_model="numpy")
def edge_edge_cross_squarednorm(ea0, ea1, eb0, eb1):
    """c = |(ea1 - ea0) x (eb1 - eb0)|^2 [m^4]; vertices (3,) float64 [m]."""
    if not _check4(ea0, ea1, eb0, eb1):
        raise ValueError("edge_edge_cross_squarednorm: ea0, ea1, eb0, eb1 must be float arrays of shape (3,)")
    return squared_norm(cross(sub(vec3(ea1), vec3(ea0)), sub(vec3(eb1), vec3(eb0))))


@generic_njit(error_model="numpy")
def edge_edge_cross_squarednorm_gradient_into(ea0, ea1, eb0, eb1, out):
    """Write dc/d(ea0, ea1, eb0, eb1) [m^3] into out, (12,) float64; returns c [m^4]."""
    if not _check4(ea0, ea1, eb0, eb1):
        raise ValueError("edge_edge_cross_squarednorm_gradient: ea0, ea1, eb0, eb1 must be float arrays of shape (3,)")
    if not check_vector_out(out, 12):
        raise ValueError("edge_edge_cross_squarednorm_gradient_into: out must have shape (12,)")
    c, g_u, g_v = _cross_reduced_gradient(vec3(ea0), vec3(ea1), vec3(eb0), vec3(eb1))
    _write_gradient(out, 1.0, g_u, g_v)
    return c


@generic_njit(error_model="numpy")
def edge_edge_cross_squarednorm_gradient(ea0, ea1, eb0, eb1):
    """dc/d(ea0, ea1, eb0, eb1): (12,) float64 [m^3]."""
    out = np.empty(12)
    edge_edge_cross_squarednorm_gradient_into(ea0, ea1, eb0, eb1, out)
    return out


@generic_njit(error_model="numpy")
def edge_edge_cross_squarednorm_hessian_into(ea0, ea1, eb0, eb1, out):
    """Write the Hessian of c [m^2] into out, (12, 12) float64."""
    if not _check4(ea0, ea1, eb0, eb1):
        raise ValueError("edge_edge_cross_squarednorm_hessian: ea0, ea1, eb0, eb1 must be float arrays of shape (3,)")
    if not check_matrix_out(out, 12):
        raise ValueError("edge_edge_cross_squarednorm_hessian_into: out must have shape (12, 12)")
    out[:, :] = 0.0
    add_cross_squarednorm_hessian_blocks(out, 1, 3, 1.0, sub(vec3(ea1), vec3(ea0)), sub(vec3(eb1), vec3(eb0)))
    _expand_reduced_hessian(out)


@generic_njit(error_model="numpy")
def edge_edge_cross_squarednorm_hessian(ea0, ea1, eb0, eb1):
    """Hessian of c w.r.t. (ea0, ea1, eb0, eb1): (12, 12) float64 [m^2]."""
    out = np.empty((12, 12))
    edge_edge_cross_squarednorm_hessian_into(ea0, ea1, eb0, eb1, out)
    return out


# ------------------------------------------------------------------ m(c(x))
@generic_njit(error_model="numpy")
def edge_edge_mollifier(ea0, ea1, eb0, eb1, eps_x):
    """m(c(x)) [1] for current vertices (3,) float64 [m] and threshold eps_x [m^4]."""
    return mollifier(edge_edge_cross_squarednorm(ea0, ea1, eb0, eb1), eps_x)


@generic_njit(error_model="numpy")
def edge_edge_mollifier_gradient_into(ea0, ea1, eb0, eb1, eps_x, out):
    """Write d m(c(x)) / d(ea0, ea1, eb0, eb1) [1/m] into out, (12,) float64 (zero when c >= eps_x);
    returns m(c(x)) [1]."""
    if not _check4(ea0, ea1, eb0, eb1):
        raise ValueError("edge_edge_mollifier_gradient: ea0, ea1, eb0, eb1 must be float arrays of shape (3,)")
    if not check_vector_out(out, 12):
        raise ValueError("edge_edge_mollifier_gradient_into: out must have shape (12,)")
    c, g_u, g_v = _cross_reduced_gradient(vec3(ea0), vec3(ea1), vec3(eb0), vec3(eb1))
    _write_gradient(out, mollifier_first_derivative(c, eps_x), g_u, g_v)
    return mollifier(c, eps_x)


@generic_njit(error_model="numpy")
def edge_edge_mollifier_gradient(ea0, ea1, eb0, eb1, eps_x):
    """d m(c(x)) / d(ea0, ea1, eb0, eb1): (12,) float64 [1/m]."""
    out = np.empty(12)
    edge_edge_mollifier_gradient_into(ea0, ea1, eb0, eb1, eps_x, out)
    return out


@generic_njit(error_model="numpy")
def edge_edge_mollifier_hessian_into(ea0, ea1, eb0, eb1, eps_x, out):
    """Write the Hessian of m(c(x)) [1/m^2] into out, (12, 12) float64 (zero when c >= eps_x):
    m''(c) dc dc^T + m'(c) Hess(c)."""
    if not _check4(ea0, ea1, eb0, eb1):
        raise ValueError("edge_edge_mollifier_hessian: ea0, ea1, eb0, eb1 must be float arrays of shape (3,)")
    if not check_matrix_out(out, 12):
        raise ValueError("edge_edge_mollifier_hessian_into: out must have shape (12, 12)")
    out[:, :] = 0.0
    c, g_u, g_v = _cross_reduced_gradient(vec3(ea0), vec3(ea1), vec3(eb0), vec3(eb1))
    if not c < eps_x:
        return
    d1 = mollifier_first_derivative(c, eps_x)
    d2 = mollifier_second_derivative(c, eps_x)
    add_cross_squarednorm_hessian_blocks(out, 1, 3, d1, sub(vec3(ea1), vec3(ea0)), sub(vec3(eb1), vec3(eb0)))
    add_block_outer(out, 1, 1, d2, g_u, g_u)
    add_block_outer(out, 1, 3, d2, g_u, g_v)
    add_block_outer(out, 3, 1, d2, g_v, g_u)
    add_block_outer(out, 3, 3, d2, g_v, g_v)
    _expand_reduced_hessian(out)


@generic_njit(error_model="numpy")
def edge_edge_mollifier_hessian(ea0, ea1, eb0, eb1, eps_x):
    """Hessian of m(c(x)) w.r.t. (ea0, ea1, eb0, eb1): (12, 12) float64 [1/m^2]."""
    out = np.empty((12, 12))
    edge_edge_mollifier_hessian_into(ea0, ea1, eb0, eb1, eps_x, out)
    return out
