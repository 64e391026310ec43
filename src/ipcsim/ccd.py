"""Public facade of ipcsim's continuous collision detection (see ``ipcsim.contact.ccd``).

    import ipcsim.ccd
    ipcsim.ccd.point_triangle_toi(x0, x1)          # x0, x1: (4, 3) [m] rows p, t0, t1, t2
    ipcsim.ccd.compute_collision_free_stepsize(mesh, x0, x1)
"""
from .contact.ccd import (  # noqa: F401
    CONSERVATIVE_RESCALING,
    MAX_ITERATIONS,
    compute_collision_free_stepsize,
    edge_edge_toi,
    point_edge_toi,
    point_plane_toi,
    point_point_toi,
    point_triangle_toi,
)

__all__ = [
    "CONSERVATIVE_RESCALING",
    "MAX_ITERATIONS",
    "compute_collision_free_stepsize",
    "edge_edge_toi",
    "point_edge_toi",
    "point_plane_toi",
    "point_point_toi",
    "point_triangle_toi",
]
