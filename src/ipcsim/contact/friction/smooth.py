"""Smooth friction mollifier of IPC (Li et al. 2020, Eq. 13-15; 004 Eq. 9).

The static/dynamic transition is smoothed over a tangential displacement threshold

    eps_u = eps_v * h        [m]  (velocity threshold eps_v [m/s] times the time step h [s]).

With y = ||u_k|| >= 0 the norm of the tangential relative displacement [m] of one contact:

    f1(y) = 2 y / eps_u - y^2 / eps_u^2      for 0 <= y < eps_u,   1 otherwise      [1]
    f0(y) = int_{eps_u}^{y} f1 + eps_u
          = y^2 / eps_u - y^3 / (3 eps_u^2) + eps_u / 3   for y < eps_u,  y otherwise [m]

so that f0' = f1 and the friction potential of one contact is D_k = mu * lambda_k * f0(||u_k||).
The functions below are the scalar pieces the potential and its derivatives need; each is
C^0/C^1 exactly where IPC's are (f1 is C^1 at eps_u, f2 = f1' jumps from 0 to 0 there).
``eps_u`` must be > 0 (not checked in these njit kernels; the public classes check it).
"""
from __future__ import annotations

from numba import njit


@njit(cache=True)
def f0(y: float, eps_u: float) -> float:
    """f0(y) [m]: antiderivative of f1 with f0(eps_u) = eps_u; y [m] is a norm (>= 0)."""
    if y >= eps_u:
        return y
    return y * y * (1.0 - y / (3.0 * eps_u)) / eps_u + eps_u / 3.0


@njit(cache=True)
def f1(y: float, eps_u: float) -> float:
    """f1(y) = df0/dy [1]: 2 y/eps_u - y^2/eps_u^2 below eps_u, 1 above (004 Eq. 9)."""
    if y >= eps_u:
        return 1.0
    s = y / eps_u
    return s * (2.0 - s)


@njit(cache=True)
def f1_over_x(y: float, eps_u: float) -> float:
    """f1(y) / y [1/m], finite at y = 0 (limit 2/eps_u)."""
    if y >= eps_u:
        return 1.0 / y
    return (2.0 - y / eps_u) / eps_u


@njit(cache=True)
def f2(y: float, eps_u: float) -> float:
    """f2(y) = df1/dy [1/m]: 2/eps_u - 2 y/eps_u^2 below eps_u, 0 above."""
    if y >= eps_u:
        return 0.0
    return 2.0 * (1.0 - y / eps_u) / eps_u


@njit(cache=True)
def f2_x_minus_f1_over_x3(y: float, eps_u: float) -> float:
    """(f2(y) y - f1(y)) / y^3 [1/m^3]: -1/(y eps_u^2) below eps_u, -1/y^3 above.

    This is d(f1(y)/y)/dy / y, the coefficient of u u^T in the Hessian of f0(||u||);
    it diverges like 1/y at y -> 0 but is always multiplied by u u^T (order y^2).
    """
    if y >= eps_u:
        return -1.0 / (y * y * y)
    return -1.0 / (y * eps_u * eps_u)
