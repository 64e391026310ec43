"""Continuous collision detection: additive CCD (ACCD) narrow phase and the collision-free step size.

Public API:
    point_triangle_toi, edge_edge_toi, point_edge_toi, point_point_toi, point_plane_toi
        single-pair time of impact in [0, 1] or math.inf;
    compute_collision_free_stepsize(mesh, x0, x1, candidates=None, min_distance=0.0)
        largest collision-free fraction of a linear step.
Njit kernels for use inside other parallel loops: ``additive.additive_ccd``, ``additive.point_plane_ccd``.
"""
from .additive import CONSERVATIVE_RESCALING, MAX_ITERATIONS, additive_ccd, point_plane_ccd
from .narrow_phase import (
    edge_edge_toi,
    point_edge_toi,
    point_plane_toi,
    point_point_toi,
    point_triangle_toi,
)
from .stepsize import candidate_stencils, compute_collision_free_stepsize

__all__ = [
    "CONSERVATIVE_RESCALING",
    "MAX_ITERATIONS",
    "additive_ccd",
    "point_plane_ccd",
    "point_triangle_toi",
    "edge_edge_toi",
    "point_edge_toi",
    "point_point_toi",
    "point_plane_toi",
    "candidate_stencils",
    "compute_collision_free_stepsize",
]
