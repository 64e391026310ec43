"""Public, validated time-of-impact queries for single primitive pairs (additive CCD).

Each function takes the stencil's vertex positions at t = 0 and t = 1 (linear trajectories) and returns
a time in [0, 1] no later than the first time the primitives come within ``min_distance`` of each other,
or ``math.inf`` when they provably stay farther apart than that over [0, 1].
"""
from __future__ import annotations

import math

import numpy as np

from ..collisions_data import EE, EV, FV, VV
from .additive import (
    CONSERVATIVE_RESCALING,
    MAX_ITERATIONS,
    additive_ccd,
    point_plane_ccd,
)

_PRIMITIVE_NAMES = {
    FV: "point-triangle (p, t0, t1, t2)",
    EE: "edge-edge (ea0, ea1, eb0, eb1)",
    EV: "point-edge (p, e0, e1)",
    VV: "point-point (p0, p1)",
}
_SIZES = {FV: 4, EE: 4, EV: 3, VV: 2}


def _check_options(min_distance, conservative_rescaling, max_iterations) -> tuple[float, float, int]:
    min_distance = float(min_distance)
    if not math.isfinite(min_distance) or min_distance < 0.0:
        raise ValueError(f"min_distance must be a finite number >= 0, got {min_distance}")
    s = float(conservative_rescaling)
    if not (0.0 < s <= 1.0):
        raise ValueError(f"conservative_rescaling must lie in (0, 1], got {s}")
    max_iterations = int(max_iterations)
    if max_iterations < 1:
        raise ValueError(f"max_iterations must be >= 1, got {max_iterations}")
    return min_distance, s, max_iterations


def _stencil_positions(a, kind: int, name: str) -> np.ndarray:
    n = _SIZES[kind]
    arr = np.asarray(a, dtype=np.float64)
    if arr.shape != (n, 3):
        raise ValueError(f"{name} of a {_PRIMITIVE_NAMES[kind]} query must have shape ({n}, 3), got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} of a {_PRIMITIVE_NAMES[kind]} query has a non-finite coordinate")
    out = np.zeros((4, 3), dtype=np.float64)
    out[:n] = arr
    return out


def _stencil_toi(kind, x0, x1, min_distance, conservative_rescaling, max_iterations) -> float:
    xi, s, iters = _check_options(min_distance, conservative_rescaling, max_iterations)
    a = _stencil_positions(x0, kind, "x0")
    b = _stencil_positions(x1, kind, "x1")
    work = np.empty((2, 4, 3), dtype=np.float64)
    return float(additive_ccd(kind, a, b, xi, 1.0, s, iters, work[0], work[1]))


def point_triangle_toi(
    x0, x1, min_distance: float = 0.0, *, conservative_rescaling: float = CONSERVATIVE_RESCALING,
    max_iterations: int = MAX_ITERATIONS,
) -> float:
    """Time of impact of a point and a triangle.

    Args:
        x0, x1: (4, 3) float64 [m], rows (p, t0, t1, t2) at t = 0 and t = 1.
        min_distance: [m] the separation that counts as contact.
        conservative_rescaling: ACCD's s in (0, 1]; smaller is more conservative.
        max_iterations: cap on ACCD steps (the time reached so far is returned when hit).

    Returns:
        toi in [0, 1] (0 when already within min_distance at t = 0) or math.inf.
    """
    return _stencil_toi(FV, x0, x1, min_distance, conservative_rescaling, max_iterations)


def edge_edge_toi(
    x0, x1, min_distance: float = 0.0, *, conservative_rescaling: float = CONSERVATIVE_RESCALING,
    max_iterations: int = MAX_ITERATIONS,
) -> float:
    """Time of impact of two edges; x0, x1 (4, 3) float64 [m], rows (ea0, ea1, eb0, eb1).

    See ``point_triangle_toi`` for the other arguments and the return value.
    """
    return _stencil_toi(EE, x0, x1, min_distance, conservative_rescaling, max_iterations)


def point_edge_toi(
    x0, x1, min_distance: float = 0.0, *, conservative_rescaling: float = CONSERVATIVE_RESCALING,
    max_iterations: int = MAX_ITERATIONS,
) -> float:
    """Time of impact of a point and an edge; x0, x1 (3, 3) float64 [m], rows (p, e0, e1).

    See ``point_triangle_toi`` for the other arguments and the return value.
    """
    return _stencil_toi(EV, x0, x1, min_distance, conservative_rescaling, max_iterations)


def point_point_toi(
    x0, x1, min_distance: float = 0.0, *, conservative_rescaling: float = CONSERVATIVE_RESCALING,
    max_iterations: int = MAX_ITERATIONS,
) -> float:
    """Time of impact of two points; x0, x1 (2, 3) float64 [m], rows (p0, p1).

    See ``point_triangle_toi`` for the other arguments and the return value.
    """
    return _stencil_toi(VV, x0, x1, min_distance, conservative_rescaling, max_iterations)


def _vector3(a, name: str) -> np.ndarray:
    arr = np.asarray(a, dtype=np.float64)
    if arr.shape != (3,):
        raise ValueError(f"point-plane query: {name} must have shape (3,), got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"point-plane query: {name} has a non-finite coordinate")
    return arr


def point_plane_toi(
    p0, p1, origin, normal, min_distance: float = 0.0, *,
    conservative_rescaling: float = CONSERVATIVE_RESCALING,
) -> float:
    """Time of impact of a point moving linearly p0 -> p1 with a static half-space {x: dot(x - origin, n) >= 0}.

    Args:
        p0, p1: (3,) float64 [m], the point at t = 0 and t = 1.
        origin: (3,) float64 [m], a point of the plane.
        normal: (3,) float64, the plane normal (normalised here; must be non-zero).
        min_distance: [m] the signed distance that counts as contact.

    Returns:
        toi in [0, 1] (0 when the point starts within min_distance or on the wrong side), or math.inf.
    """
    xi, s, _ = _check_options(min_distance, conservative_rescaling, 1)
    a, b, o = _vector3(p0, "p0"), _vector3(p1, "p1"), _vector3(origin, "origin")
    n = _vector3(normal, "normal")
    norm = float(np.linalg.norm(n))
    if norm == 0.0:
        raise ValueError("point-plane query: normal must be non-zero")
    return float(point_plane_ccd(a, b, o, n / norm, xi, 1.0, s))
