"""Neo-Hookean elasticity on linear tetrahedra (log-barrier form, IPC 2020 Eq. 23 with Lame parameters).

Energy density (J = det F, I_C = tr(F^T F)):
    psi(F) = mu/2 (I_C - 3) - mu ln J + lambda/2 (ln J)^2
Element energy = rest volume * psi. psi -> +inf as J -> 0+, so a line search must keep every J > 0.

Layout: per tet, the 12 unknowns are the 4 vertex positions stacked vertex-major
(x0, y0, z0, x1, ..., z3). F = Ds Dm^{-1} with Ds = [x1-x0, x2-x0, x3-x0] (3x3, columns).
dF/dx (9 x 12) uses column-major vec(F) (F[0,0], F[1,0], F[2,0], F[0,1], ...) - the layout pitfall of 001 §1.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .psd import project_psd_clamp


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


@njit(cache=True)
def _deformation_gradient(xs: np.ndarray, dm_inv: np.ndarray) -> np.ndarray:
    ds = np.empty((3, 3))
    for c in range(3):
        for r in range(3):
            ds[r, c] = xs[c + 1, r] - xs[0, r]
    return ds @ dm_inv


@njit(cache=True)
def dfdx(dm_inv: np.ndarray) -> np.ndarray:
    """dvec(F)/dx (9, 12), vec column-major, x vertex-major."""
    out = np.zeros((9, 12))
    for j in range(3):  # column of F: F[:, j] = sum_c (x_{c+1} - x_0) Dm_inv[c, j]
        s = dm_inv[0, j] + dm_inv[1, j] + dm_inv[2, j]
        for r in range(3):
            row = 3 * j + r
            out[row, r] = -s
            for c in range(3):
                out[row, 3 * (c + 1) + r] = dm_inv[c, j]
    return out


@njit(cache=True)
def neohookean_psi(f: np.ndarray, mu: float, lam: float) -> float:
    """Energy density [Pa] of a 3x3 deformation gradient; +inf when det F <= 0."""
    j = np.linalg.det(f)
    if j <= 0.0:
        return math.inf
    lnj = math.log(j)
    return 0.5 * mu * (np.sum(f * f) - 3.0) - mu * lnj + 0.5 * lam * lnj * lnj


@njit(cache=True)
def _cofactor(f: np.ndarray) -> np.ndarray:
    """dJ/dF = cofactor matrix of F."""
    c = np.empty((3, 3))
    c[0, 0] = f[1, 1] * f[2, 2] - f[1, 2] * f[2, 1]
    c[0, 1] = f[1, 2] * f[2, 0] - f[1, 0] * f[2, 2]
    c[0, 2] = f[1, 0] * f[2, 1] - f[1, 1] * f[2, 0]
    c[1, 0] = f[0, 2] * f[2, 1] - f[0, 1] * f[2, 2]
    c[1, 1] = f[0, 0] * f[2, 2] - f[0, 2] * f[2, 0]
    c[1, 2] = f[0, 1] * f[2, 0] - f[0, 0] * f[2, 1]
    c[2, 0] = f[0, 1] * f[1, 2] - f[0, 2] * f[1, 1]
    c[2, 1] = f[0, 2] * f[1, 0] - f[0, 0] * f[1, 2]
    c[2, 2] = f[0, 0] * f[1, 1] - f[0, 1] * f[1, 0]
    return c


@njit(cache=True)
def _vec(m: np.ndarray) -> np.ndarray:
    out = np.empty(9)
    for j in range(3):
        for i in range(3):
            out[3 * j + i] = m[i, j]
    return out


@njit(cache=True)
def neohookean_pk1_and_dpdf(f: np.ndarray, mu: float, lam: float):
    """First Piola-Kirchhoff stress P (3, 3) [Pa] and dvec(P)/dvec(F) (9, 9), column-major vec."""
    j = np.linalg.det(f)
    lnj = math.log(j)
    g = _vec(_cofactor(f))  # dJ/dF
    p = mu * f + ((lam * lnj - mu) / j) * _cofactor(f)
    # P = mu F + a(J) dJ/dF, a(J) = (lam lnJ - mu)/J ; a'(J) = (lam + mu - lam lnJ)/J^2
    da = (lam + mu - lam * lnj) / (j * j)
    a = (lam * lnj - mu) / j
    h = np.zeros((9, 9))
    for i in range(9):
        h[i, i] += mu
        for k in range(9):
            h[i, k] += da * g[i] * g[k]
    # + a * d2J/dF2: d(cof F)_{ij}/dF_{kl} = eps_ikm eps_jln F_mn (column-major indices)
    for i in range(3):
        for jj in range(3):
            for k in range(3):
                for l in range(3):
                    if i == k or jj == l:
                        continue
                    m = 3 - i - k
                    n = 3 - jj - l
                    sign = _perm_sign(i, k, m) * _perm_sign(jj, l, n)
                    h[3 * jj + i, 3 * l + k] += a * sign * f[m, n]
    return p, h


@njit(cache=True)
def _perm_sign(a: int, b: int, c: int) -> float:
    if (a, b, c) in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
        return 1.0
    return -1.0


@njit(cache=True, parallel=True)
def neohookean_energy(x, tets, dm_inv, volume, mu, lam) -> float:
    """Total energy [J] over tets; x (n, 3) [m]; mu, lam (n_tets,) [Pa]. +inf if any tet is inverted."""
    total = 0.0
    for e in prange(tets.shape[0]):
        xs = np.empty((4, 3))
        for a in range(4):
            xs[a] = x[tets[e, a]]
        total += volume[e] * neohookean_psi(_deformation_gradient(xs, dm_inv[e]), mu[e], lam[e])
    return total


@njit(cache=True, parallel=True)
def neohookean_gradient_and_hessian_blocks(x, tets, dm_inv, volume, mu, lam, project, want_hessian):
    """Per-tet gradients (n_tets, 12) [N] and (PSD-projected if ``project``) Hessians (n_tets, 12, 12) [N/m]."""
    n = tets.shape[0]
    grads = np.empty((n, 12))
    hess = np.empty((n, 12, 12)) if want_hessian else np.empty((0, 12, 12))
    for e in prange(n):
        xs = np.empty((4, 3))
        for a in range(4):
            xs[a] = x[tets[e, a]]
        f = _deformation_gradient(xs, dm_inv[e])
        p, dpdf = neohookean_pk1_and_dpdf(f, mu[e], lam[e])
        b = dfdx(dm_inv[e])
        grads[e] = volume[e] * (b.T @ _vec(p))
        if want_hessian:
            he = volume[e] * (b.T @ dpdf @ b)
            hess[e] = project_psd_clamp(he) if project else he
    return grads, hess


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
