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

from ..runtime.jit import twin
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


#: det F below which a step bound keeps a tet from shrinking further (``max_step_keeping_orientation``): far
#: above the round-off of det F (~1e-15), so that a solver stalled against the bound cannot drive a tet's
#: volume to round-off and flip its sign
J_FLOOR = 1e-6


@twin  # ``max_step_without_inversion(...)`` runs the serial variant under one Numba thread
def max_step_without_inversion(x, p, tets, safety) -> float:
    """Largest alpha in (0, 1] such that no tet's volume reaches ``(1 - safety)`` of it shrinking to zero.

    Solves det(Ds(x + t p)) = 0 (a cubic in t) per tet and returns safety * the smallest positive root (the
    first t where the volume falls to a tenth of its value). x, p (n, 3) [m]; tets (m, 4).
    """
    best = np.ones(tets.shape[0])
    for e in prange(tets.shape[0]):
        best[e] = _tet_step_bound(x, p, tets, e, 0.0, safety)
    return best.min()


@twin
def max_step_keeping_orientation(x, p, tets, floor, safety) -> float:
    """Largest alpha in (0, 1] along x + alpha p (x, p (n, 3) [m]) keeping every positive tet of tets (m, 4)
    positive: per tet with det(Ds(x)) = d0 > floor[e] (floor (m,) [m^3], the det(Ds) of det F = ``J_FLOOR``),
    safety * the first t where det(Ds(x + t p)) (a cubic in t) falls to max(d0 / 10, floor[e]); per tet with
    0 < d0 <= floor[e], safety * the first t where it falls below d0 (no further shrinking: 0 if it shrinks at
    once). A tet with d0 <= 0 (already degenerate or inverted) sets no bound. 1.0 if nothing bounds the step.
    """
    best = np.ones(tets.shape[0])
    for e in prange(tets.shape[0]):
        best[e] = _tet_step_bound(x, p, tets, e, floor[e], safety)
    return best.min()


@njit(cache=True)
def _tet_step_bound(x, p, tets, e, floor, safety) -> float:
    """The step bound of tet e (``max_step_keeping_orientation``; floor 0: ``max_step_without_inversion``)."""
    m0 = np.empty((3, 3))
    m1 = np.empty((3, 3))
    i0 = tets[e, 0]
    for c in range(3):
        ic = tets[e, c + 1]
        for r in range(3):
            m0[r, c] = x[ic, r] - x[i0, r]
            m1[r, c] = p[ic, r] - p[i0, r]
    # det(m0 + t m1) sampled at t = 0, 1, -1, 2 -> cubic coefficients
    v0 = _det_combo(m0, m1, 0.0)
    if not v0 > 0.0:  # degenerate or inverted already: its orientation cannot be kept, no bound
        return 1.0
    v1 = _det_combo(m0, m1, 1.0)
    vm = _det_combo(m0, m1, -1.0)
    v2 = _det_combo(m0, m1, 2.0)
    c0 = v0
    c2 = 0.5 * (v1 + vm) - c0
    c3 = (v2 - 2.0 * v1 + c0 - 2.0 * c2) / 6.0
    c1 = v1 - c0 - c2 - c3
    target = max(0.1 * c0, floor) if c0 > floor else c0
    return _first_root_below(c3, c2, c1, c0, target, safety)


@njit(cache=True)
def _det_combo(m0: np.ndarray, m1: np.ndarray, t: float) -> float:
    """det(m0 + t m1) of two (3, 3) matrices, written out (no temporary)."""
    a00, a01, a02 = m0[0, 0] + t * m1[0, 0], m0[0, 1] + t * m1[0, 1], m0[0, 2] + t * m1[0, 2]
    a10, a11, a12 = m0[1, 0] + t * m1[1, 0], m0[1, 1] + t * m1[1, 1], m0[1, 2] + t * m1[1, 2]
    a20, a21, a22 = m0[2, 0] + t * m1[2, 0], m0[2, 1] + t * m1[2, 1], m0[2, 2] + t * m1[2, 2]
    return a00 * (a11 * a22 - a12 * a21) - a01 * (a10 * a22 - a12 * a20) + a02 * (a10 * a21 - a11 * a20)


@njit(cache=True)
def _cubic(c3, c2, c1, c0, t):
    return ((c3 * t + c2) * t + c1) * t + c0


@njit(cache=True)
def _first_root_in_unit(c3, c2, c1, c0, safety):
    """safety * the first t in [0, 1] where the cubic falls to 0.1 c0 (c0 > 0: the current volume), else 1."""
    return _first_root_below(c3, c2, c1, c0, 0.1 * c0, safety)


@njit(cache=True)
def _first_root_below(c3, c2, c1, c0, target, safety):
    """safety * the first t in [0, 1] where the cubic falls to target (<= c0, its value at 0), else 1.

    The cubic is monotone between its critical points, so checking the ends of each monotone piece and
    bisecting inside the first piece that crosses is exact up to bisection precision.
    """
    # critical points: 3 c3 t^2 + 2 c2 t + c1 = 0 (sorted; NaN = absent)
    qa, qb, qc = 3.0 * c3, 2.0 * c2, c1
    r0 = math.nan
    r1 = math.nan
    if qa != 0.0:
        disc = qb * qb - 4.0 * qa * qc
        if disc >= 0.0:
            sq = math.sqrt(disc)
            r0 = (-qb - sq) / (2.0 * qa)
            r1 = (-qb + sq) / (2.0 * qa)
            if r1 < r0:
                r0, r1 = r1, r0
    elif qb != 0.0:
        r0 = -qc / qb
    lo = 0.0
    for k in range(3):  # the monotone pieces [0, r0], [r0, r1], [r1, 1] (absent/outside knots skipped)
        if k == 0:
            hi = r0
        elif k == 1:
            hi = r1
        else:
            hi = 1.0
        if not (lo < hi < 1.0) and k < 2:
            continue
        if _cubic(c3, c2, c1, c0, hi) <= target:
            for _ in range(60):
                mid = 0.5 * (lo + hi)
                if _cubic(c3, c2, c1, c0, mid) <= target:
                    hi = mid
                else:
                    lo = mid
            return safety * lo
        lo = hi
    return 1.0
