"""IPC's clamped log barrier on squared distances (Li et al. 2020, Eq. 6, with d -> d^2).

    b(d2, dhat2) = -(d2 - dhat2)^2 * ln(d2 / dhat2)   for 0 < d2 < dhat2
                 = 0                                  for d2 >= dhat2

d2 and dhat2 are squared distances [m^2]; b has units m^4. It is C2 at d2 = dhat2 and +inf at d2 -> 0.
The physical barrier of the convergent formulation (002) is this function divided by dhat^3, which gives
units of distance [m] (see ``physical_barrier_scale``).
"""
from __future__ import annotations

import math

from numba import njit


@njit(cache=True, fastmath=False)
def barrier(d2: float, dhat2: float) -> float:
    """b(d2, dhat2) [m^4]; +inf for d2 <= 0."""
    if d2 >= dhat2:
        return 0.0
    if d2 <= 0.0:
        return math.inf
    t = d2 - dhat2
    return -t * t * math.log(d2 / dhat2)


@njit(cache=True, fastmath=False)
def barrier_first_derivative(d2: float, dhat2: float) -> float:
    """db/d(d2) [m^2]: (dhat2 - d2) * (2 ln(d2/dhat2) - dhat2/d2 + 1)."""
    if d2 >= dhat2:
        return 0.0
    if d2 <= 0.0:
        return -math.inf
    t = dhat2 - d2
    return t * (2.0 * math.log(d2 / dhat2) - dhat2 / d2 + 1.0)


@njit(cache=True, fastmath=False)
def barrier_second_derivative(d2: float, dhat2: float) -> float:
    """d2b/d(d2)^2 [1]: -2 ln(d2/dhat2) + (dhat2 - d2)(dhat2 + 3 d2)/d2^2."""
    if d2 >= dhat2:
        return 0.0
    if d2 <= 0.0:
        return math.inf
    t = dhat2 - d2
    return -2.0 * math.log(d2 / dhat2) + t * (dhat2 + 3.0 * d2) / (d2 * d2)


def physical_barrier_scale(dhat: float) -> float:
    """Factor 1/dhat^3 [1/m^3] that turns b(d2, dhat2) [m^4] into the physical barrier [m] (002)."""
    return 1.0 / (dhat * dhat * dhat)
