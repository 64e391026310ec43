"""Squared distance between segments (ea0, ea1) and (eb0, eb1) for a given type, and derivatives.

dtype (``types``): EA{i}_EB{j} -> point-point |ea_i - eb_j|^2, EA_EB{j} -> point-line (eb_j to
line a), EA{i}_EB -> point-line (ea_i to line b), EA_EB -> line-line, EE_AUTO -> classified here
with ``edge_edge_distance_type``. Callers that evaluate value, gradient and Hessian should
classify once and pass the type. The edge-edge barrier also needs the mollifier
(``edge_edge_mollifier``) near parallel edges.
Stencil order (ea0, ea1, eb0, eb1): gradient (12,) [m], Hessian (12, 12) [1]; rows of vertices
the type does not involve are zero. The ``_into`` variants zero ``out`` first.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ...runtime.jit import generic_njit
from ._vec import check_matrix_out, check_vector_out, check_vertex, squared_norm, sub, vec3
from .line_line import _ll_gradient_blocks, _ll_hessian_blocks, _ll_value
from .point_line import _pl_gradient_blocks, _pl_hessian_blocks, _pl_value
from .point_point import _pp_gradient_blocks, _pp_hessian_blocks
from .types import EA0_EB, EA0_EB0, EA0_EB1, EA1_EB, EA1_EB0, EA1_EB1, EA_EB, EA_EB0, EA_EB1, EE_AUTO, edge_edge_type

_BAD_VERTEX = "edge_edge_distance_squared: ea0, ea1, eb0, eb1 must be float arrays of shape (3,)"


# ------------------------------------------------------------------ kernels on 3-tuples
@generic_njit(error_model="numpy")
def _resolve(ea0, ea1, eb0, eb1, dtype):
    if dtype == EE_AUTO:
        return edge_edge_type(ea0, ea1, eb0, eb1)
    if dtype < 0 or dtype > EA_EB:
        raise ValueError("edge_edge_distance_squared: invalid edge-edge distance type (dtype)")
    return dtype


@generic_njit(error_model="numpy")
def ee_value(ea0, ea1, eb0, eb1, dtype):
    """``edge_edge_distance_squared`` on 3-tuples."""
    dtype = _resolve(ea0, ea1, eb0, eb1, dtype)
    if dtype == EA0_EB0:
        return squared_norm(sub(ea0, eb0))
    if dtype == EA0_EB1:
        return squared_norm(sub(ea0, eb1))
    if dtype == EA1_EB0:
        return squared_norm(sub(ea1, eb0))
    if dtype == EA1_EB1:
        return squared_norm(sub(ea1, eb1))
    if dtype == EA_EB0:
        return _pl_value(eb0, ea0, ea1)
    if dtype == EA_EB1:
        return _pl_value(eb1, ea0, ea1)
    if dtype == EA0_EB:
        return _pl_value(ea0, eb0, eb1)
    if dtype == EA1_EB:
        return _pl_value(ea1, eb0, eb1)
    return _ll_value(ea0, ea1, eb0, eb1)


@njit(cache=True, error_model="numpy", inline="always")
def ee_gradient(ea0, ea1, eb0, eb1, dtype, out):
    """``edge_edge_distance_squared_gradient_into`` on 3-tuples (out unchecked)."""
    dtype = _resolve(ea0, ea1, eb0, eb1, dtype)
    out[:] = 0.0
    if dtype == EA0_EB0:
        return _pp_gradient_blocks(ea0, eb0, out, 0, 2)
    elif dtype == EA0_EB1:
        return _pp_gradient_blocks(ea0, eb1, out, 0, 3)
    elif dtype == EA1_EB0:
        return _pp_gradient_blocks(ea1, eb0, out, 1, 2)
    elif dtype == EA1_EB1:
        return _pp_gradient_blocks(ea1, eb1, out, 1, 3)
    elif dtype == EA_EB0:
        return _pl_gradient_blocks(eb0, ea0, ea1, out, 2, 0, 1)
    elif dtype == EA_EB1:
        return _pl_gradient_blocks(eb1, ea0, ea1, out, 3, 0, 1)
    elif dtype == EA0_EB:
        return _pl_gradient_blocks(ea0, eb0, eb1, out, 0, 2, 3)
    elif dtype == EA1_EB:
        return _pl_gradient_blocks(ea1, eb0, eb1, out, 1, 2, 3)
    else:
        return _ll_gradient_blocks(ea0, ea1, eb0, eb1, out, 0, 1, 2, 3)


@generic_njit(error_model="numpy")
def ee_hessian(ea0, ea1, eb0, eb1, dtype, out):
    """``edge_edge_distance_squared_hessian_into`` on 3-tuples (out unchecked)."""
    dtype = _resolve(ea0, ea1, eb0, eb1, dtype)
    out[:, :] = 0.0
    if dtype == EA0_EB0:
        _pp_hessian_blocks(out, 0, 2)
    elif dtype == EA0_EB1:
        _pp_hessian_blocks(out, 0, 3)
    elif dtype == EA1_EB0:
        _pp_hessian_blocks(out, 1, 2)
    elif dtype == EA1_EB1:
        _pp_hessian_blocks(out, 1, 3)
    elif dtype == EA_EB0:
        _pl_hessian_blocks(eb0, ea0, ea1, out, 2, 0, 1)
    elif dtype == EA_EB1:
        _pl_hessian_blocks(eb1, ea0, ea1, out, 3, 0, 1)
    elif dtype == EA0_EB:
        _pl_hessian_blocks(ea0, eb0, eb1, out, 0, 2, 3)
    elif dtype == EA1_EB:
        _pl_hessian_blocks(ea1, eb0, eb1, out, 1, 2, 3)
    else:
        _ll_hessian_blocks(ea0, ea1, eb0, eb1, out, 0, 1, 2, 3)


# ------------------------------------------------------------------ public API
@generic_njit(error_model="numpy")
def edge_edge_distance_squared(ea0, ea1, eb0, eb1, dtype):
    """Squared distance [m^2] between segments a = (ea0, ea1), b = (eb0, eb1) for type dtype;
    (3,) float64 [m]."""
    if not (check_vertex(ea0) & check_vertex(ea1) & check_vertex(eb0) & check_vertex(eb1)):
        raise ValueError(_BAD_VERTEX)
    return ee_value(vec3(ea0), vec3(ea1), vec3(eb0), vec3(eb1), dtype)


@generic_njit(error_model="numpy")
def edge_edge_distance_squared_gradient_into(ea0, ea1, eb0, eb1, dtype, out):
    """Write d(d2)/d(ea0, ea1, eb0, eb1) [m] into out, a (12,) float64 array (zeroed here first).
    Returns d2 [m^2] as a by-product."""
    if not (check_vertex(ea0) & check_vertex(ea1) & check_vertex(eb0) & check_vertex(eb1)):
        raise ValueError(_BAD_VERTEX)
    if not check_vector_out(out, 12):
        raise ValueError("edge_edge_distance_squared_gradient_into: out must have shape (12,)")
    return ee_gradient(vec3(ea0), vec3(ea1), vec3(eb0), vec3(eb1), dtype, out)


@generic_njit(error_model="numpy")
def edge_edge_distance_squared_gradient(ea0, ea1, eb0, eb1, dtype):
    """d(d2)/d(ea0, ea1, eb0, eb1): (12,) float64 [m]."""
    out = np.empty(12)
    edge_edge_distance_squared_gradient_into(ea0, ea1, eb0, eb1, dtype, out)
    return out


@generic_njit(error_model="numpy")
def edge_edge_distance_squared_hessian_into(ea0, ea1, eb0, eb1, dtype, out):
    """Write the Hessian of d2 w.r.t. (ea0, ea1, eb0, eb1) [1] into out, (12, 12) float64
    (zeroed here first)."""
    if not (check_vertex(ea0) & check_vertex(ea1) & check_vertex(eb0) & check_vertex(eb1)):
        raise ValueError(_BAD_VERTEX)
    if not check_matrix_out(out, 12):
        raise ValueError("edge_edge_distance_squared_hessian_into: out must have shape (12, 12)")
    ee_hessian(vec3(ea0), vec3(ea1), vec3(eb0), vec3(eb1), dtype, out)


@generic_njit(error_model="numpy")
def edge_edge_distance_squared_hessian(ea0, ea1, eb0, eb1, dtype):
    """Hessian of d2 w.r.t. (ea0, ea1, eb0, eb1): (12, 12) float64 [1]."""
    out = np.empty((12, 12))
    edge_edge_distance_squared_hessian_into(ea0, ea1, eb0, eb1, dtype, out)
    return out
