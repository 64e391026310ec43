"""Lagged smooth-Coulomb friction of IPC (Li et al. 2020 §5; 004 §III-B Eq. 8-9).

* ``smooth``: the mollifier f0, f1, f1/x, f2, (f2 x - f1)/x^3 on a displacement threshold eps_u.
* ``tangent``: per-kind closest points, tangent bases T (3, 2) and relative-displacement maps Gamma.
* ``lagged``: ``FrictionCollisions``, the tangential data lagged at x^n (normal forces lambda,
  closest points, bases) built from an active set ``Collisions``.
* ``potential``: ``FrictionPotential``, D(u) with its gradient, PSD-projected Hessian and force.

Typical use, once per lagging update and then inside Newton::

    fc = FrictionCollisions.build(collisions, mesh, x_n, kappa, mu)   # lagged at x^n
    D = FrictionPotential(eps_v, dt)                                 # eps_u = eps_v * dt [m]
    u = x - x_n
    D(fc, u), D.gradient(fc, u), D.hessian(fc, u, project="clamp"), D.force(fc, u)
"""
from .lagged import FrictionCollisions, build_friction_collisions, normal_force_magnitude
from .potential import (FrictionPotential, friction_direction, increment_effect, project_2x2_psd,
                        relative_displacements, tangential_displacements)
from .smooth import f0, f1, f1_over_x, f2, f2_x_minus_f1_over_x3
from .tangent import (
    edge_edge_closest_point,
    edge_edge_tangent_basis,
    plane_vertex_tangent_basis,
    point_edge_closest_point,
    point_edge_tangent_basis,
    point_point_tangent_basis,
    point_triangle_closest_point,
    point_triangle_tangent_basis,
    relative_displacement_coefficients,
    relative_displacement_jacobian,
    stencil_tangent_frame,
)

__all__ = [
    "FrictionCollisions",
    "FrictionPotential",
    "build_friction_collisions",
    "normal_force_magnitude",
    "project_2x2_psd",
    "f0",
    "f1",
    "f1_over_x",
    "f2",
    "f2_x_minus_f1_over_x3",
    "edge_edge_closest_point",
    "edge_edge_tangent_basis",
    "plane_vertex_tangent_basis",
    "point_edge_closest_point",
    "point_edge_tangent_basis",
    "point_point_tangent_basis",
    "point_triangle_closest_point",
    "point_triangle_tangent_basis",
    "relative_displacement_coefficients",
    "relative_displacement_jacobian",
    "stencil_tangent_frame",
    "relative_displacements",
    "tangential_displacements",
    "friction_direction",
    "increment_effect",
]
