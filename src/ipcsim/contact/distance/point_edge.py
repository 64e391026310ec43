"""Squared distance from point p to segment (e0, e1) for a given distance type, and derivatives.

dtype (``types``): PE_P_E0 -> |p - e0|^2, PE_P_E1 -> |p - e1|^2, PE_P_E -> point-line,
PE_AUTO -> classified here with ``point_edge_distance_type``. Callers that evaluate value,
gradient and Hessian should classify once and pass the type.
Stencil order (p, e0, e1): gradient (9,) [m], Hessian (9, 9) [1]; rows of vertices the type
does not involve are zero. The ``_into`` variants zero ``out`` first.
"""
from __future__ import annotations

import numpy as np

from ...runtime.jit import generic_njit
from ._vec import check_matrix_out, check_vector_out, check_vertex, squared_norm, sub, vec3
from .point_line import _pl_gradient_blocks, _pl_hessian_blocks, _pl_value
from .point_point import _pp_gradient_blocks, _pp_hessian_blocks
from .types import PE_AUTO, PE_P_E, PE_P_E0, PE_P_E1, point_edge_type

_BAD_VERTEX = "point_edge_distance_squared: p, e0, e1 must be float arrays of shape (3,)"


# ------------------------------------------------------------------ kernels on 3-tuples
@generic_njit(error_model="numpy")
def _resolve(p, e0, e1, dtype):
    if dtype == PE_AUTO:
        return point_edge_type(p, e0, e1)
    if dtype < 0 or dtype > PE_P_E:
        raise ValueError("point_edge_distance_squared: invalid point-edge distance type (dtype)")
    return dtype


@generic_njit(error_model="numpy")
def pe_value(p, e0, e1, dtype):
    """``point_edge_distance_squared`` on 3-tuples."""
    dtype = _resolve(p, e0, e1, dtype)
    if dtype == PE_P_E0:
        return squared_norm(sub(p, e0))
    if dtype == PE_P_E1:
        return squared_norm(sub(p, e1))
    return _pl_value(p, e0, e1)


@generic_njit(error_model="numpy")
def pe_gradient(p, e0, e1, dtype, out):
    """``point_edge_distance_squared_gradient_into`` on 3-tuples (out unchecked)."""
    dtype = _resolve(p, e0, e1, dtype)
    out[:] = 0.0
    if dtype == PE_P_E0:
        return _pp_gradient_blocks(p, e0, out, 0, 1)
    elif dtype == PE_P_E1:
        return _pp_gradient_blocks(p, e1, out, 0, 2)
    else:
        return _pl_gradient_blocks(p, e0, e1, out, 0, 1, 2)


@generic_njit(error_model="numpy")
def pe_hessian(p, e0, e1, dtype, out):
    """``point_edge_distance_squared_hessian_into`` on 3-tuples (out unchecked)."""
    dtype = _resolve(p, e0, e1, dtype)
    out[:, :] = 0.0
    if dtype == PE_P_E0:
        _pp_hessian_blocks(out, 0, 1)
    elif dtype == PE_P_E1:
        _pp_hessian_blocks(out, 0, 2)
    else:
        _pl_hessian_blocks(p, e0, e1, out, 0, 1, 2)


# ------------------------------------------------------------------ public API
@generic_njit(error_model="numpy")
def point_edge_distance_squared(p, e0, e1, dtype):
    """Squared distance [m^2] of point p to segment (e0, e1) for distance type dtype; (3,) float64 [m]."""
    if not (check_vertex(p) & check_vertex(e0) & check_vertex(e1)):
        raise ValueError(_BAD_VERTEX)
    return pe_value(vec3(p), vec3(e0), vec3(e1), dtype)


@generic_njit(error_model="numpy")
def point_edge_distance_squared_gradient_into(p, e0, e1, dtype, out):
    """Write d(d2)/d(p, e0, e1) [m] into out, a (9,) float64 array (zeroed here first).
    Returns d2 [m^2] as a by-product."""
    if not (check_vertex(p) & check_vertex(e0) & check_vertex(e1)):
        raise ValueError(_BAD_VERTEX)
    if not check_vector_out(out, 9):
        raise ValueError("point_edge_distance_squared_gradient_into: out must have shape (9,)")
    return pe_gradient(vec3(p), vec3(e0), vec3(e1), dtype, out)


@generic_njit(error_model="numpy")
def point_edge_distance_squared_gradient(p, e0, e1, dtype):
    """d(d2)/d(p, e0, e1): (9,) float64 [m]."""
    out = np.empty(9)
    point_edge_distance_squared_gradient_into(p, e0, e1, dtype, out)
    return out


@generic_njit(error_model="numpy")
def point_edge_distance_squared_hessian_into(p, e0, e1, dtype, out):
    """Write the Hessian of d2 w.r.t. (p, e0, e1) [1] into out, (9, 9) float64 (zeroed here first)."""
    if not (check_vertex(p) & check_vertex(e0) & check_vertex(e1)):
        raise ValueError(_BAD_VERTEX)
    if not check_matrix_out(out, 9):
        raise ValueError("point_edge_distance_squared_hessian_into: out must have shape (9, 9)")
    pe_hessian(vec3(p), vec3(e0), vec3(e1), dtype, out)


@generic_njit(error_model="numpy")
def point_edge_distance_squared_hessian(p, e0, e1, dtype):
    """Hessian of d2 w.r.t. (p, e0, e1): (9, 9) float64 [1]."""
    out = np.empty((9, 9))
    point_edge_distance_squared_hessian_into(p, e0, e1, dtype, out)
    return out
