"""Squared distance from point p to triangle (t0, t1, t2) for a given distance type, and derivatives.

dtype (``types``): P_T0/P_T1/P_T2 -> point-point to t0/t1/t2, P_E0/P_E1/P_E2 -> point-line to
edge (t0,t1)/(t1,t2)/(t2,t0), P_T -> point-plane, PT_AUTO -> classified here with
``point_triangle_distance_type``. Callers that evaluate value, gradient and Hessian should
classify once and pass the type.
Stencil order (p, t0, t1, t2): gradient (12,) [m], Hessian (12, 12) [1]; rows of vertices the
type does not involve are zero. The ``_into`` variants zero ``out`` first.
"""
from __future__ import annotations

import numpy as np

from ...runtime.jit import generic_njit
from ._vec import check_matrix_out, check_vector_out, check_vertex, squared_norm, sub, vec3
from .point_line import _pl_gradient_blocks, _pl_hessian_blocks, _pl_value
from .point_plane import _ppl_gradient_blocks, _ppl_hessian_blocks, _ppl_value
from .point_point import _pp_gradient_blocks, _pp_hessian_blocks
from .types import P_E0, P_E1, P_E2, P_T, P_T0, P_T1, P_T2, PT_AUTO, point_triangle_type

_BAD_VERTEX = "point_triangle_distance_squared: p, t0, t1, t2 must be float arrays of shape (3,)"


# ------------------------------------------------------------------ kernels on 3-tuples
@generic_njit(error_model="numpy")
def _resolve(p, t0, t1, t2, dtype):
    if dtype == PT_AUTO:
        return point_triangle_type(p, t0, t1, t2)
    if dtype < 0 or dtype > P_T:
        raise ValueError("point_triangle_distance_squared: invalid point-triangle distance type (dtype)")
    return dtype


@generic_njit(error_model="numpy")
def pt_value(p, t0, t1, t2, dtype):
    """``point_triangle_distance_squared`` on 3-tuples."""
    dtype = _resolve(p, t0, t1, t2, dtype)
    if dtype == P_T0:
        return squared_norm(sub(p, t0))
    if dtype == P_T1:
        return squared_norm(sub(p, t1))
    if dtype == P_T2:
        return squared_norm(sub(p, t2))
    if dtype == P_E0:
        return _pl_value(p, t0, t1)
    if dtype == P_E1:
        return _pl_value(p, t1, t2)
    if dtype == P_E2:
        return _pl_value(p, t2, t0)
    return _ppl_value(p, t0, t1, t2)


@generic_njit(error_model="numpy")
def pt_gradient(p, t0, t1, t2, dtype, out):
    """``point_triangle_distance_squared_gradient_into`` on 3-tuples (out unchecked)."""
    dtype = _resolve(p, t0, t1, t2, dtype)
    out[:] = 0.0
    if dtype == P_T0:
        return _pp_gradient_blocks(p, t0, out, 0, 1)
    elif dtype == P_T1:
        return _pp_gradient_blocks(p, t1, out, 0, 2)
    elif dtype == P_T2:
        return _pp_gradient_blocks(p, t2, out, 0, 3)
    elif dtype == P_E0:
        return _pl_gradient_blocks(p, t0, t1, out, 0, 1, 2)
    elif dtype == P_E1:
        return _pl_gradient_blocks(p, t1, t2, out, 0, 2, 3)
    elif dtype == P_E2:
        return _pl_gradient_blocks(p, t2, t0, out, 0, 3, 1)
    else:
        return _ppl_gradient_blocks(p, t0, t1, t2, out, 0, 1, 2, 3)


@generic_njit(error_model="numpy")
def pt_hessian(p, t0, t1, t2, dtype, out):
    """``point_triangle_distance_squared_hessian_into`` on 3-tuples (out unchecked)."""
    dtype = _resolve(p, t0, t1, t2, dtype)
    out[:, :] = 0.0
    if dtype == P_T0:
        _pp_hessian_blocks(out, 0, 1)
    elif dtype == P_T1:
        _pp_hessian_blocks(out, 0, 2)
    elif dtype == P_T2:
        _pp_hessian_blocks(out, 0, 3)
    elif dtype == P_E0:
        _pl_hessian_blocks(p, t0, t1, out, 0, 1, 2)
    elif dtype == P_E1:
        _pl_hessian_blocks(p, t1, t2, out, 0, 2, 3)
    elif dtype == P_E2:
        _pl_hessian_blocks(p, t2, t0, out, 0, 3, 1)
    else:
        _ppl_hessian_blocks(p, t0, t1, t2, out, 0, 1, 2, 3)


# ------------------------------------------------------------------ public API
@generic_njit(error_model="numpy")
def point_triangle_distance_squared(p, t0, t1, t2, dtype):
    """Squared distance [m^2] of point p to triangle (t0, t1, t2) for type dtype; (3,) float64 [m]."""
    if not (check_vertex(p) & check_vertex(t0) & check_vertex(t1) & check_vertex(t2)):
        raise ValueError(_BAD_VERTEX)
    return pt_value(vec3(p), vec3(t0), vec3(t1), vec3(t2), dtype)


@generic_njit(error_model="numpy")
def point_triangle_distance_squared_gradient_into(p, t0, t1, t2, dtype, out):
    """Write d(d2)/d(p, t0, t1, t2) [m] into out, a (12,) float64 array (zeroed here first).
    Returns d2 [m^2] as a by-product."""
    if not (check_vertex(p) & check_vertex(t0) & check_vertex(t1) & check_vertex(t2)):
        raise ValueError(_BAD_VERTEX)
    if not check_vector_out(out, 12):
        raise ValueError("point_triangle_distance_squared_gradient_into: out must have shape (12,)")
    return pt_gradient(vec3(p), vec3(t0), vec3(t1), vec3(t2), dtype, out)


@generic_njit(error_model="numpy")
def point_triangle_distance_squared_gradient(p, t0, t1, t2, dtype):
    """d(d2)/d(p, t0, t1, t2): (12,) float64 [m]."""
    out = np.empty(12)
    point_triangle_distance_squared_gradient_into(p, t0, t1, t2, dtype, out)
    return out


@generic_njit(error_model="numpy")
def point_triangle_distance_squared_hessian_into(p, t0, t1, t2, dtype, out):
    """Write the Hessian of d2 w.r.t. (p, t0, t1, t2) [1] into out, (12, 12) float64 (zeroed here first)."""
    if not (check_vertex(p) & check_vertex(t0) & check_vertex(t1) & check_vertex(t2)):
        raise ValueError(_BAD_VERTEX)
    if not check_matrix_out(out, 12):
        raise ValueError("point_triangle_distance_squared_hessian_into: out must have shape (12, 12)")
    pt_hessian(vec3(p), vec3(t0), vec3(t1), vec3(t2), dtype, out)


@generic_njit(error_model="numpy")
def point_triangle_distance_squared_hessian(p, t0, t1, t2, dtype):
    """Hessian of d2 w.r.t. (p, t0, t1, t2): (12, 12) float64 [1]."""
    out = np.empty((12, 12))
    point_triangle_distance_squared_hessian_into(p, t0, t1, t2, dtype, out)
    return out
