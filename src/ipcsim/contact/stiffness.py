"""Barrier stiffness kappa: IPC's adaptive rule (Li et al. 2020, Sec. 4.3 / Supp. B) and the fixed
physical stiffness of the convergent formulation (002).

Adaptive (original IPC, same semantics as ipc-toolkit's ``initial_barrier_stiffness`` and
``update_barrier_stiffness``):

* kappa_min = scale * m_avg / (4 d0 b''(d0, dhat^2)), d0 = (1e-8 * bbox_diagonal + dmin)^2, so the
  barrier's stiffness at a tiny distance balances the average mass (scale 1e11 by default);
  kappa_max = 100 kappa_min;
* kappa_0 = clamp(-<grad_B, grad_E> / |grad_B|^2, kappa_min, kappa_max): the stiffness that best
  balances the elastic/inertial gradient with the barrier gradient (1 if grad_B = 0);
* update: double kappa (up to kappa_max) while the minimum distance keeps decreasing below
  dhat_epsilon_scale * bbox_diagonal.

Physical (convergent formulation): kappa is a pressure [Pa], the barrier is scaled by 1/dhat^3 and
the stencils carry area weights, so kappa * P is an energy [J]; 002 suggests kappa = 0.1 E.
See docs/contact.md for the simulator's default.
"""
from __future__ import annotations

import math

import numpy as np
from numba import prange

from ..runtime.jit import twin
from .barrier import barrier_second_derivative
from ..runtime.threads import numba_threads, threads_for
from .stencils import stencil_d2


def initial_barrier_stiffness(bbox_diagonal: float, dhat: float, average_mass: float, grad_energy,
                              grad_barrier, min_barrier_stiffness_scale: float = 1e11,
                              dmin: float = 0.0) -> tuple[float, float]:
    """Initial adaptive barrier stiffness and its upper bound.

    Args:
        bbox_diagonal: scene bounding-box diagonal [m], > 0.
        dhat: activation distance [m], > 0.
        average_mass: average vertex mass [kg], > 0 (with area weights pass average_mass / mean weight).
        grad_energy: (3n,) gradient of the incremental potential without contact.
        grad_barrier: (3n,) gradient of the (unit-stiffness) barrier potential.
        min_barrier_stiffness_scale: the 1e11 premultiplier of kappa_min.
        dmin: minimum distance [m] (offset barrier), default 0.

    Returns:
        (kappa, kappa_max).
    """
    for name, val in (("bbox_diagonal", bbox_diagonal), ("dhat", dhat), ("average_mass", average_mass),
                      ("min_barrier_stiffness_scale", min_barrier_stiffness_scale)):
        if not (math.isfinite(val) and val > 0.0):
            raise ValueError(f"initial_barrier_stiffness: {name} must be positive and finite, got {val}")
    ge = np.asarray(grad_energy, dtype=np.float64).ravel()
    gb = np.asarray(grad_barrier, dtype=np.float64).ravel()
    if ge.shape != gb.shape:
        raise ValueError(f"initial_barrier_stiffness: grad_energy {ge.shape} and grad_barrier {gb.shape} differ")
    dhat2 = dhat * dhat
    dmin2 = dmin * dmin
    activation2 = 2.0 * dmin * dhat + dhat2
    d0 = (1e-8 * bbox_diagonal + dmin) ** 2
    if d0 - dmin2 >= activation2:
        d0 = dmin * dhat + 0.5 * dhat2
    kappa_min = 4.0 * d0 * barrier_second_derivative(d0 - dmin2, activation2)
    kappa_min = min_barrier_stiffness_scale * average_mass / kappa_min
    kappa_max = 100.0 * kappa_min
    kappa = 1.0
    gb2 = float(gb @ gb)
    if gb2 > 0.0:
        kappa = -float(gb @ ge) / gb2
    return float(min(max(kappa, kappa_min), kappa_max)), float(kappa_max)


def update_barrier_stiffness(prev_min_distance: float, min_distance: float, max_barrier_stiffness: float,
                             barrier_stiffness: float, bbox_diagonal: float, dhat_epsilon_scale: float = 1e-9,
                             dmin: float = 0.0) -> float:
    """Adaptive kappa update: double it (capped at the max) if the minimum SQUARED distance [m^2]
    decreased and both previous and current values are below (dhat_epsilon_scale * (diag + dmin))^2.
    """
    eps2 = (dhat_epsilon_scale * (bbox_diagonal + dmin)) ** 2
    if prev_min_distance < eps2 and min_distance < eps2 and min_distance < prev_min_distance:
        return float(min(max_barrier_stiffness, 2.0 * barrier_stiffness))
    return float(barrier_stiffness)


def physical_barrier_stiffness(young_modulus: float, fraction: float = 0.1) -> float:
    """Fixed physical barrier stiffness kappa = fraction * E [Pa] (002 suggests 0.1 E).

    Use with area-weighted collisions and ``use_physical_barrier=True`` so that kappa * P is in J.
    """
    if not (math.isfinite(young_modulus) and young_modulus > 0.0):
        raise ValueError(f"physical_barrier_stiffness: young_modulus must be positive [Pa], got {young_modulus}")
    if not (math.isfinite(fraction) and fraction > 0.0):
        raise ValueError(f"physical_barrier_stiffness: fraction must be positive, got {fraction}")
    return float(fraction * young_modulus)


def surface_youngs_modulus(tets, youngs_modulus, n_nodes: int, nodes, weights) -> np.ndarray:
    """(n_surface,) float64 [Pa]: the Young's modulus each collision vertex's contacts see, +inf if none.

    A node takes the smallest modulus of its tets (+inf for nodes of no tet: obstacles), a surface vertex
    x_s = sum_a weights[s, a] q[nodes[s, a]] the smallest over the nodes it depends on (weight != 0).

    Args:
        tets: (m, 4) int64 node ids; youngs_modulus: (m,) float64 [Pa] per tet; n_nodes: number of nodes;
        nodes, weights: (n_surface, k) int64 / float64, the surface map's (``SurfaceMap``) nodes and weights.
    """
    node_e = np.full(int(n_nodes), np.inf)
    t = np.asarray(tets, np.int64)
    if t.size:
        np.minimum.at(node_e, t.ravel(), np.repeat(np.asarray(youngs_modulus, np.float64), t.shape[1]))
    nodes, weights = np.asarray(nodes, np.int64), np.asarray(weights, np.float64)
    return np.where(weights != 0.0, node_e[nodes], np.inf).min(axis=1)


def softer_side_stiffness(surface_modulus, fraction: float = 0.1) -> tuple[float, np.ndarray | None]:
    """The physical barrier stiffness per contact: kappa_c = fraction * min(E_a, E_b) of its two sides.

    Returns (kappa, vertex_stiffness): kappa [Pa] = fraction * the largest finite modulus, and the relative
    stiffness E_v / E_max per collision vertex (+inf on obstacles) for ``build_collisions``; None when every
    body vertex has the same modulus (all contacts then share kappa, the single-material default).

    Args:
        surface_modulus: (n_surface,) float64 [Pa], ``surface_youngs_modulus`` (+inf on obstacles).
    """
    e = np.asarray(surface_modulus, np.float64)
    finite = e[np.isfinite(e)]
    if not finite.size:
        raise ValueError("softer_side_stiffness: no collision vertex belongs to an elastic body")
    if not np.all(finite > 0.0):
        raise ValueError("softer_side_stiffness: Young's moduli must be positive [Pa]")
    e_max = float(finite.max())
    kappa = physical_barrier_stiffness(e_max, fraction)
    if np.all(finite == e_max):
        return kappa, None
    return kappa, np.ascontiguousarray(e / e_max)


@twin  # one Numba thread: the serial variant (a minimum: the same result)
def _min_d2(kind, verts, prims, dtype, x, plane_o, plane_n):
    d2 = np.full(len(kind), np.inf)
    for c in prange(len(kind)):
        d2[c] = stencil_d2(kind[c], verts[c], prims[c, 0], dtype[c], x, plane_o, plane_n, None)
    return d2.min()


def minimum_distance_squared(collisions, mesh, x) -> float:
    """Smallest squared distance [m^2] over the stencils of ``collisions`` at x (n, 3) [m]; inf if empty.

    The quantity ``update_barrier_stiffness`` expects (ipc-toolkit's ``compute_minimum_distance``).
    """
    x = np.ascontiguousarray(x, dtype=np.float64)
    if x.shape != (mesh.n_vertices, 3):
        raise ValueError(f"minimum_distance_squared: x must have shape ({mesh.n_vertices}, 3), got {x.shape}")
    if len(collisions) == 0:
        return math.inf
    plane_o, plane_n = mesh.planes_array()
    with numba_threads(threads_for(len(collisions))):  # small sets: one thread (see runtime.threads)
        return float(_min_d2(np.ascontiguousarray(collisions.kind), np.ascontiguousarray(collisions.vertices),
                             np.ascontiguousarray(collisions.primitives), np.ascontiguousarray(collisions.dtype),
                             x, plane_o, plane_n))

