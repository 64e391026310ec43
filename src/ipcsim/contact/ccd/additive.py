"""Additive continuous collision detection (ACCD) kernels [Li et al. 2021, "Codimensional IPC", Alg. 1].

Every primitive pair (a *stencil*) moves linearly from ``x0`` (t = 0) to ``x1`` (t = 1). ACCD advances
time by steps that are provably shorter than the time of first contact:

1. subtract the mean displacement of the stencil's vertices from every displacement (distances are
   translation invariant, and this shrinks the bound below);
2. ``l_p`` bounds the speed at which the distance can shrink: |dp| + max_i |dt_i| (point-triangle,
   point-edge, point-point) or max |dea_i| + max |deb_i| (edge-edge);
3. from the current distance ``d`` the step ``t_l = s (d - xi) / l_p`` cannot reach distance ``xi``
   (``xi`` = min_distance, ``s`` = conservative rescaling, 0.9 by default);
4. the loop stops once ``d - xi < (1 - s)(d0 - xi)`` (the "gap") and returns the accumulated time
   *before* the last step, or returns +inf once the accumulated time reaches ``tmax``.
5. (pruning) before the exact distance, a cheap lower bound of it (bounding-box gap, point-plane or
   line-line distance) is tried: if even the first step from it reaches ``tmax`` the pair is dropped.

Floating point: distances are computed in float64, so ``xi`` is enlarged by ``64 eps L`` where L is the
largest absolute coordinate of the stencil over its trajectory; a computed distance that falls below
this effective ``xi`` is treated as contact. This keeps the method conservative when the true
distance comes within rounding of zero.

All kernels are ``@njit`` scalar functions on one stencil, usable from ``prange`` loops. Arrays:
``x0``, ``x1`` are (4, 3) float64 [m] stencil vertex positions in the stencil order of
``ipcsim.contact.collisions_data`` (VV: v0, v1; EV: v, e0, e1; EE: ea0, ea1, eb0, eb1;
FV: v, f0, f1, f2); unused rows are ignored. ``x`` and ``dx`` are (4, 3) float64 scratch buffers.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from ...runtime.jit import generic_njit
from ..collisions_data import EE, EV, FV
from ..stencils import CLOSEST, stencil_d2, stencil_size

CONSERVATIVE_RESCALING = 0.9
"""Default ``s`` of ACCD: each step covers at most this fraction of the remaining gap."""

MAX_ITERATIONS = 1_000_000
"""Default iteration cap of the ACCD loop; reaching it returns the (conservative) time reached so far."""

ROUNDING_SAFETY = 64.0 * np.finfo(np.float64).eps
"""Relative size (times the stencil's largest coordinate) of the distance margin added to ``xi``."""


#: Vertex ids of a stencil held in its own (4, 3) array (rows in stencil order).
_ROWS = (0, 1, 2, 3)


@njit(cache=True, inline="always")
def closest_distance_squared(kind: int, x: np.ndarray) -> float:
    """Squared distance [m^2] between the two primitives of a stencil (kind VV, EV, EE or FV); x (4, 3) [m]
    in stencil order (``stencils.stencil_d2`` with ``CLOSEST``)."""
    return stencil_d2(kind, _ROWS, 0, CLOSEST, x, x, x, None)


@generic_njit
def _row_norm2(a: np.ndarray, i: int) -> float:
    return a[i, 0] * a[i, 0] + a[i, 1] * a[i, 1] + a[i, 2] * a[i, 2]


@generic_njit
def relative_displacements(kind: int, x0: np.ndarray, x1: np.ndarray, dx: np.ndarray) -> float:
    """Write into dx (4, 3) [m] the displacements x1 - x0 minus their mean over the stencil's vertices.

    Returns the largest absolute coordinate [m] of the stencil over x0 and x1 (for the rounding margin).
    """
    n = stencil_size(kind)
    big = 0.0
    for k in range(3):
        mean = 0.0
        for i in range(n):
            big = max(big, max(abs(x0[i, k]), abs(x1[i, k])))
            dx[i, k] = x1[i, k] - x0[i, k]
            mean += dx[i, k]
        mean /= n
        for i in range(n):
            dx[i, k] -= mean
    return big


@generic_njit
def l_p(kind: int, dx: np.ndarray) -> float:
    """Bound l_p [m] on how fast (per unit time) the stencil's distance can shrink, from dx (4, 3) [m]."""
    if kind == EE:
        return math.sqrt(max(_row_norm2(dx, 0), _row_norm2(dx, 1))) + math.sqrt(
            max(_row_norm2(dx, 2), _row_norm2(dx, 3)))
    if kind == FV:
        return math.sqrt(_row_norm2(dx, 0)) + math.sqrt(
            max(_row_norm2(dx, 1), max(_row_norm2(dx, 2), _row_norm2(dx, 3))))
    if kind == EV:
        return math.sqrt(_row_norm2(dx, 0)) + math.sqrt(max(_row_norm2(dx, 1), _row_norm2(dx, 2)))
    return math.sqrt(_row_norm2(dx, 0)) + math.sqrt(_row_norm2(dx, 1))


@generic_njit
def _aabb_gap_squared(x: np.ndarray, a_lo: int, a_hi: int, b_lo: int, b_hi: int) -> float:
    """Squared distance [m^2] between the boxes of rows a_lo..a_hi-1 and b_lo..b_hi-1 of x (4, 3)."""
    g2 = 0.0
    for k in range(3):
        amin = amax = x[a_lo, k]
        for i in range(a_lo + 1, a_hi):
            amin = min(amin, x[i, k])
            amax = max(amax, x[i, k])
        bmin = bmax = x[b_lo, k]
        for i in range(b_lo + 1, b_hi):
            bmin = min(bmin, x[i, k])
            bmax = max(bmax, x[i, k])
        g = max(0.0, max(bmin - amax, amin - bmax))
        g2 += g * g
    return g2


@generic_njit
def _plane_gap_squared(x: np.ndarray, p: int, o: int, i: int, j: int) -> float:
    """Squared distance [m^2] of x[p] to the plane through x[o] spanned by x[i] - x[o], x[j] - x[o]
    (0 when the plane is degenerate)."""
    u0, u1, u2 = x[i, 0] - x[o, 0], x[i, 1] - x[o, 1], x[i, 2] - x[o, 2]
    v0, v1, v2 = x[j, 0] - x[o, 0], x[j, 1] - x[o, 1], x[j, 2] - x[o, 2]
    n0, n1, n2 = u1 * v2 - u2 * v1, u2 * v0 - u0 * v2, u0 * v1 - u1 * v0
    nn = n0 * n0 + n1 * n1 + n2 * n2
    if not nn > 0.0:
        return 0.0
    h = n0 * (x[p, 0] - x[o, 0]) + n1 * (x[p, 1] - x[o, 1]) + n2 * (x[p, 2] - x[o, 2])
    return h * h / nn


@generic_njit
def _line_line_gap_squared(x: np.ndarray) -> float:
    """Squared distance [m^2] between the lines of edges (x0, x1) and (x2, x3); 0 when nearly parallel."""
    u0, u1, u2 = x[1, 0] - x[0, 0], x[1, 1] - x[0, 1], x[1, 2] - x[0, 2]
    v0, v1, v2 = x[3, 0] - x[2, 0], x[3, 1] - x[2, 1], x[3, 2] - x[2, 2]
    n0, n1, n2 = u1 * v2 - u2 * v1, u2 * v0 - u0 * v2, u0 * v1 - u1 * v0
    nn = n0 * n0 + n1 * n1 + n2 * n2
    if not nn > 1e-8 * (u0 * u0 + u1 * u1 + u2 * u2) * (v0 * v0 + v1 * v1 + v2 * v2):
        return 0.0
    h = n0 * (x[2, 0] - x[0, 0]) + n1 * (x[2, 1] - x[0, 1]) + n2 * (x[2, 2] - x[0, 2])
    return h * h / nn


@generic_njit
def distance_lower_bound_squared(kind: int, x: np.ndarray) -> float:
    """A cheap lower bound [m^2] of ``closest_distance_squared``: the gap between the two primitives'
    bounding boxes, and the point-plane (FV) or line-line (EE, not nearly parallel) distance."""
    if kind == FV:
        return max(_aabb_gap_squared(x, 0, 1, 1, 4), _plane_gap_squared(x, 0, 1, 2, 3))
    if kind == EE:
        return max(_aabb_gap_squared(x, 0, 2, 2, 4), _line_line_gap_squared(x))
    if kind == EV:
        return _aabb_gap_squared(x, 0, 1, 1, 3)
    return _aabb_gap_squared(x, 0, 1, 1, 2)


@generic_njit
def additive_ccd_loop(
    kind: int,
    x0: np.ndarray,
    dx: np.ndarray,
    lp: float,
    xi: float,
    tmax: float,
    conservative_rescaling: float,
    max_iterations: int,
    x: np.ndarray,
) -> float:
    """The ACCD loop of ``additive_ccd`` from prepared data: dx (4, 3) [m] relative displacements
    (``relative_displacements``), lp [m] (``l_p``), xi [m] the effective min distance (rounding margin
    included); x (4, 3) scratch. Same return value as ``additive_ccd``."""
    n = stencil_size(kind)
    for i in range(n):
        for k in range(3):
            x[i, k] = x0[i, k]
    d = math.sqrt(closest_distance_squared(kind, x))
    if d <= xi:
        return 0.0
    if lp == 0.0:
        return math.inf
    gap = (1.0 - conservative_rescaling) * (d - xi)
    toi = 0.0
    for _ in range(max_iterations):
        t_l = conservative_rescaling * (d - xi) / lp
        if toi == 0.0 and t_l >= tmax:
            return math.inf  # even the first, always-safe step reaches tmax
        for i in range(n):
            for k in range(3):
                x[i, k] += t_l * dx[i, k]
        d = math.sqrt(closest_distance_squared(kind, x))
        if d <= xi:
            return toi  # only reachable through rounding: stop before this step
        if toi > 0.0 and d - xi < gap:
            return toi
        toi += t_l
        if toi >= tmax:
            return math.inf
    return toi


@generic_njit
def additive_ccd(
    kind: int,
    x0: np.ndarray,
    x1: np.ndarray,
    min_distance: float,
    tmax: float,
    conservative_rescaling: float,
    max_iterations: int,
    x: np.ndarray,
    dx: np.ndarray,
) -> float:
    """ACCD time of impact of one stencil (kind VV, EV, EE or FV).

    Args:
        x0, x1: (4, 3) float64 [m], stencil positions at t = 0 and t = 1.
        min_distance: xi [m], the distance that counts as contact (>= 0).
        tmax: in (0, 1]; +inf is returned as soon as the interval [0, tmax] is certified free of
            contact (pruning with an already known step).
        conservative_rescaling: s in (0, 1].
        max_iterations: loop cap; when reached the time accumulated so far is returned.
        x, dx: (4, 3) float64 scratch buffers (overwritten).

    Returns:
        t in [0, tmax): the distance stays above ``min_distance`` on [0, t] (0 if it already is within
        min_distance at t = 0), or +inf when it stays above it on [0, tmax].
    """
    xi = min_distance + ROUNDING_SAFETY * relative_displacements(kind, x0, x1, dx)
    lp = l_p(kind, dx)
    if lp > 0.0:
        # cheap pruning: the first (always accepted) step from a lower bound of d0 already reaches tmax
        lower2 = distance_lower_bound_squared(kind, x0)
        reach = tmax * lp / conservative_rescaling + xi  # lower >= reach  <=>  s (lower - xi) >= tmax lp
        if lower2 >= reach * reach:
            return math.inf
    return additive_ccd_loop(kind, x0, dx, lp, xi, tmax, conservative_rescaling, max_iterations, x)


@generic_njit
def point_plane_ccd(
    p0: np.ndarray,
    p1: np.ndarray,
    origin: np.ndarray,
    normal: np.ndarray,
    min_distance: float,
    tmax: float,
    conservative_rescaling: float,
) -> float:
    """Time of impact of a point moving p0 -> p1 (3,) [m] with the static half-space plane (origin, unit normal).

    The signed distance h(t) = dot(p(t) - origin, normal) is linear in t; the returned time is
    ``s * t*`` where h(t*) = min_distance (what the ACCD loop returns for this stencil), 0 if
    h(0) <= min_distance (already touching or on the wrong side), +inf if h stays above
    min_distance on [0, 1] or the time is not below tmax.
    """
    h0 = 0.0
    h1 = 0.0
    big = 0.0
    for k in range(3):
        h0 += (p0[k] - origin[k]) * normal[k]
        h1 += (p1[k] - origin[k]) * normal[k]
        big = max(big, max(abs(p0[k]), max(abs(p1[k]), abs(origin[k]))))
    xi = min_distance + ROUNDING_SAFETY * big
    if h0 <= xi:
        return 0.0
    if h1 > xi:
        return math.inf
    toi = conservative_rescaling * (h0 - xi) / (h0 - h1)
    if toi >= tmax:
        return math.inf
    return toi
