"""Neo-Hookean elasticity on linear tetrahedra (log-barrier form, IPC 2020 Eq. 23 with Lame parameters).

Energy density (J = det F, I_C = tr(F^T F)):
    psi(F) = mu/2 (I_C - 3) - mu ln J + lambda/2 (ln J)^2
Element energy = rest volume * psi. psi -> +inf as J -> 0+, so a line search must keep every J > 0.

The per-element math lives in constitutive.py / isotropic.py / kinematics.py and the assembly in
materials.py (shared by all materials); this module keeps the NH entry points used by the solver plus the
rest-shape data, Lame parameters and the inversion step bound common to every material.

Layout: per tet, the 12 unknowns are the 4 vertex positions stacked vertex-major
(x0, y0, z0, x1, ..., z3). F = Ds Dm^{-1} with Ds = [x1-x0, x2-x0, x3-x0] (3x3, columns).
dF/dx (9 x 12) uses column-major vec(F) (F[0,0], F[1,0], F[2,0], F[0,1], ...) - the layout pitfall of 001 §1.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .constitutive import neohookean_psi  # noqa: F401  (re-export)
from .kinematics import dfdx  # noqa: F401  (re-export)
from .materials import elastic_energy, elastic_gradient_and_hessian_blocks


def lame_parameters(youngs_modulus: float, poisson_ratio: float) -> tuple[float, float]:
    """(mu, lambda) [Pa] from Young's modulus E [Pa] and Poisson's ratio nu (0 <= nu < 0.5)."""
    if not (youngs_modulus > 0.0 and math.isfinite(youngs_modulus)):
        raise ValueError(f"Young's modulus must be positive and finite, got {youngs_modulus}")
    if not (-1.0 < poisson_ratio < 0.5):
        raise ValueError(f"Poisson's ratio must lie in (-1, 0.5), got {poisson_ratio}")
    mu = youngs_modulus / (2.0 * (1.0 + poisson_ratio))
    lam = youngs_modulus * poisson_ratio / ((1.0 + poisson_ratio) * (1.0 - 2.0 * poisson_ratio))
    return mu, lam


def rest_shape_data(rest_positions: np.ndarray, tets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per tet inverse rest edge matrices Dm^{-1} (n, 3, 3) and rest volumes (n,) [m^3].

    Raises ValueError naming the first degenerate or inverted tet.
    """
    x = np.asarray(rest_positions, dtype=np.float64)
    t = np.asarray(tets, dtype=np.int64)
    dm = np.stack([x[t[:, 1]] - x[t[:, 0]], x[t[:, 2]] - x[t[:, 0]], x[t[:, 3]] - x[t[:, 0]]], axis=2)
    det = np.linalg.det(dm)
    scale = np.einsum("nij,nij->n", dm, dm) ** 1.5 + 1e-300
    bad = np.flatnonzero(~(det > 1e-12 * scale))
    if bad.size:
        i = int(bad[0])
        state = "degenerate" if abs(det[i]) <= 1e-12 * scale[i] else "inverted"
        raise ValueError(f"tet {i} (vertices {t[i].tolist()}) is {state} in the rest shape")
    return np.linalg.inv(dm), det / 6.0


def neohookean_energy(x, tets, dm_inv, volume, mu, lam) -> float:
    """Total NH energy [J] over tets; x (n, 3) [m]; mu, lam (n_tets,) [Pa]. +inf if any tet is inverted.

    Same as ``elastic_energy("NH", ...)`` (materials.py).
    """
    return elastic_energy("NH", x, tets, dm_inv, volume, mu, lam)


def neohookean_gradient_and_hessian_blocks(x, tets, dm_inv, volume, mu, lam, project, want_hessian):
    """Per-tet NH gradients (n_tets, 12) [N] and (PSD-projected if ``project``) Hessians (n_tets, 12, 12) [N/m].

    Same as ``elastic_gradient_and_hessian_blocks("NH", ...)``; the projection clamps the analytic eigensystem
    of the 9x9 dP/dF (isotropic.py) rather than the 12x12 block.
    """
    return elastic_gradient_and_hessian_blocks("NH", x, tets, dm_inv, volume, mu, lam, project, want_hessian)


@njit(cache=True, parallel=True)
def max_step_without_inversion(x, p, tets, safety) -> float:
    """Largest alpha in (0, 1] such that no tet's volume reaches ``(1 - safety)`` of it shrinking to zero.

    Solves det(Ds(x + t p)) = 0 (a cubic in t) per tet and returns safety * the smallest positive root.
    """
    best = np.ones(tets.shape[0])
    for e in prange(tets.shape[0]):
        a0 = x[tets[e, 0]]
        d0 = p[tets[e, 0]]
        m0 = np.empty((3, 3))
        m1 = np.empty((3, 3))
        for c in range(3):
            m0[:, c] = x[tets[e, c + 1]] - a0
            m1[:, c] = p[tets[e, c + 1]] - d0
        # det(m0 + t m1) sampled at 4 points -> cubic coefficients
        ts = np.array([0.0, 1.0, -1.0, 2.0])
        vals = np.empty(4)
        for k in range(4):
            vals[k] = np.linalg.det(m0 + ts[k] * m1)
        c0 = vals[0]
        c2 = 0.5 * (vals[1] + vals[2]) - c0
        c3 = (vals[3] - 2.0 * vals[1] + c0 - 2.0 * c2) / 6.0
        c1 = vals[1] - c0 - c2 - c3
        best[e] = _first_root_in_unit(c3, c2, c1, c0, safety)
    return best.min()


@njit(cache=True)
def _cubic(c3, c2, c1, c0, t):
    return ((c3 * t + c2) * t + c1) * t + c0


@njit(cache=True)
def _first_root_in_unit(c3, c2, c1, c0, safety):
    """safety * the first t in [0, 1] where the cubic falls to 0.1 c0 (c0 > 0: the current volume), else 1.

    The cubic is monotone between its critical points, so checking the ends of each monotone piece and
    bisecting inside the first piece that crosses is exact up to bisection precision.
    """
    target = 0.1 * c0
    knots = np.empty(4)
    knots[0] = 0.0
    count = 1
    # critical points: 3 c3 t^2 + 2 c2 t + c1 = 0
    qa, qb, qc = 3.0 * c3, 2.0 * c2, c1
    roots = np.empty(2)
    nr = 0
    if qa != 0.0:
        disc = qb * qb - 4.0 * qa * qc
        if disc >= 0.0:
            sq = math.sqrt(disc)
            roots[0] = (-qb - sq) / (2.0 * qa)
            roots[1] = (-qb + sq) / (2.0 * qa)
            nr = 2
    elif qb != 0.0:
        roots[0] = -qc / qb
        nr = 1
    roots[:nr].sort()
    for i in range(nr):
        if 0.0 < roots[i] < 1.0:
            knots[count] = roots[i]
            count += 1
    knots[count] = 1.0
    count += 1
    for k in range(1, count):
        lo, hi = knots[k - 1], knots[k]
        if _cubic(c3, c2, c1, c0, hi) <= target:
            for _ in range(60):
                mid = 0.5 * (lo + hi)
                if _cubic(c3, c2, c1, c0, mid) <= target:
                    hi = mid
                else:
                    lo = mid
            return safety * lo
    return 1.0
