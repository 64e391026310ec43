"""Squared distances between contact primitives, their gradients/Hessians, distance types and the
edge-edge mollifier (IPC, Li et al. 2020; ipc-toolkit's conventions and type codes).

Every function here is ``numba.njit(cache=True)`` and callable from other njit code. Vertex
arguments are 1D float64 arrays of shape (3,) [m]. All distances are SQUARED [m^2]; gradients
are [m], Hessians [1]. Stencil order = argument order; typed functions return full-stencil
derivatives (rows of vertices the type does not involve are zero).

* raw:   point_point / point_line / point_plane / line_line  ``_distance_squared[_gradient|_hessian][_into]``
* typed: point_edge / point_triangle / edge_edge ``_distance_squared[...](..., dtype)``; classify once with
         ``point_edge_distance_type`` / ``point_triangle_distance_type`` / ``edge_edge_distance_type``
* ``_into(..., out)`` variants write every entry of the caller's ``out`` (no allocation).
* ``*_gradient_into`` also return the value (d2, c or m) they compute on the way.
* mollifier: ``edge_edge_mollifier_threshold``, ``edge_edge_cross_squarednorm[...]``, ``mollifier*``,
  ``edge_edge_mollifier[_gradient|_hessian][_into]``.

Hot loops: pass row views (``x[i]`` of an (n, 3) array); the public functions copy them into
3-tuples once and run on those. njit code that already holds 3-tuples can call the unchecked
tuple kernels directly: ``types.point_triangle_type / edge_edge_type / point_edge_type`` and
``point_triangle.pt_value / pt_gradient / pt_hessian`` (likewise ``point_edge.pe_*``,
``edge_edge.ee_*``), which take the type code explicitly and write into ``out`` like ``_into``.

Cross-product-matrix identities used by the hand derivations ([a]x y = a x y):
    d(u x v) = -[v]x du + [u]x dv,   [a]x [b]x = b a^T - (a.b) I.
"""
from .edge_edge import (edge_edge_distance_squared, edge_edge_distance_squared_gradient,
                        edge_edge_distance_squared_gradient_into, edge_edge_distance_squared_hessian,
                        edge_edge_distance_squared_hessian_into)
from .edge_mollifier import (MOLLIFIER_THRESHOLD_SCALE, edge_edge_cross_squarednorm,
                                  edge_edge_cross_squarednorm_gradient, edge_edge_cross_squarednorm_gradient_into,
                                  edge_edge_cross_squarednorm_hessian, edge_edge_cross_squarednorm_hessian_into,
                                  edge_edge_mollifier, edge_edge_mollifier_gradient,
                                  edge_edge_mollifier_gradient_into, edge_edge_mollifier_hessian,
                                  edge_edge_mollifier_hessian_into, edge_edge_mollifier_threshold, mollifier,
                                  mollifier_first_derivative, mollifier_second_derivative)
from .line_line import (line_line_distance_squared, line_line_distance_squared_gradient,
                        line_line_distance_squared_gradient_into, line_line_distance_squared_hessian,
                        line_line_distance_squared_hessian_into)
from .point_edge import (point_edge_distance_squared, point_edge_distance_squared_gradient,
                         point_edge_distance_squared_gradient_into, point_edge_distance_squared_hessian,
                         point_edge_distance_squared_hessian_into)
from .point_line import (point_line_distance_squared, point_line_distance_squared_gradient,
                         point_line_distance_squared_gradient_into, point_line_distance_squared_hessian,
                         point_line_distance_squared_hessian_into)
from .point_plane import (point_plane_distance_squared, point_plane_distance_squared_gradient,
                          point_plane_distance_squared_gradient_into, point_plane_distance_squared_hessian,
                          point_plane_distance_squared_hessian_into)
from .point_point import (point_point_distance_squared, point_point_distance_squared_gradient,
                          point_point_distance_squared_gradient_into, point_point_distance_squared_hessian,
                          point_point_distance_squared_hessian_into)
from .point_triangle import (point_triangle_distance_squared, point_triangle_distance_squared_gradient,
                             point_triangle_distance_squared_gradient_into, point_triangle_distance_squared_hessian,
                             point_triangle_distance_squared_hessian_into)
from .types import (EA0_EB, EA0_EB0, EA0_EB1, EA1_EB, EA1_EB0, EA1_EB1, EA_EB, EA_EB0, EA_EB1, EE_AUTO,
                    EE_PARALLEL_THRESHOLD, P_E0, P_E1, P_E2, P_T, P_T0, P_T1, P_T2, PE_AUTO, PE_P_E, PE_P_E0, PE_P_E1,
                    PT_AUTO, edge_edge_distance_type, edge_edge_is_parallel, edge_edge_parallel_distance_type,
                    point_edge_distance_type, point_triangle_distance_type)

__all__ = [name for name in dir() if not name.startswith("_") and name not in (
    "edge_edge", "edge_mollifier", "line_line", "point_edge", "point_line", "point_plane",
    "point_point", "point_triangle", "types")]
