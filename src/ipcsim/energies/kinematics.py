"""Kinematics of a linear tetrahedron and derivatives of the invariants of F (per-element, Numba).

Conventions shared by every material in this package:

* Per tet the 12 unknowns are the 4 vertex positions stacked vertex-major (x0, y0, z0, x1, ..., z3) [m].
* F = Ds Dm^{-1} (3, 3), Ds = [x1 - x0, x2 - x0, x3 - x0] (columns), dimensionless.
* vec(.) is column-major: vec(F) = (F[0,0], F[1,0], F[2,0], F[0,1], ...). dF/dx (9, 12) follows this layout
  (the layout pitfall of 001 §1: a row-major reshape of the course's formula silently transposes F).
* Invariants (Dynamic Deformables course): I1 = tr S, I2 = tr(F^T F), I3 = det F, with F = R S the polar
  decomposition computed from the *rotation-variant* SVD F = U diag(sigma) V^T, det U = det V = +1, so an
  inverted element has sigma[2] < 0 and R = U V^T is always a rotation (never a reflection).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .mat3 import mul3, svd3_rv

INV_SQRT2 = 1.0 / math.sqrt(2.0)


@njit(cache=True)
def deformation_gradient(xs: np.ndarray, dm_inv: np.ndarray) -> np.ndarray:
    """F (3, 3) of one tet from its vertex positions xs (4, 3) [m] and Dm^{-1} (3, 3) [1/m]."""
    ds = np.empty((3, 3))
    for c in range(3):
        for r in range(3):
            ds[r, c] = xs[c + 1, r] - xs[0, r]
    return mul3(ds, dm_inv)


@njit(cache=True)
def dfdx(dm_inv: np.ndarray) -> np.ndarray:
    """dvec(F)/dx (9, 12) [1/m]; vec column-major, x vertex-major."""
    out = np.zeros((9, 12))
    for j in range(3):  # column j of F: F[:, j] = sum_c (x_{c+1} - x_0) Dm_inv[c, j]
        s = dm_inv[0, j] + dm_inv[1, j] + dm_inv[2, j]
        for r in range(3):
            row = 3 * j + r
            out[row, r] = -s
            for c in range(3):
                out[row, 3 * (c + 1) + r] = dm_inv[c, j]
    return out


@njit(cache=True)
def vec(m: np.ndarray) -> np.ndarray:
    """Column-major vec (9,) of a 3x3 matrix."""
    out = np.empty(9)
    for j in range(3):
        for i in range(3):
            out[3 * j + i] = m[i, j]
    return out


@njit(cache=True, inline="always")
def cofactor_into(f, c) -> float:
    """c (3, 3) := the cofactor matrix of F (3, 3) (= dI3/dF = dJ/dF; F^-T = c / det F); returns det F."""
    c[0, 0] = f[1, 1] * f[2, 2] - f[1, 2] * f[2, 1]
    c[0, 1] = f[1, 2] * f[2, 0] - f[1, 0] * f[2, 2]
    c[0, 2] = f[1, 0] * f[2, 1] - f[1, 1] * f[2, 0]
    c[1, 0] = f[0, 2] * f[2, 1] - f[0, 1] * f[2, 2]
    c[1, 1] = f[0, 0] * f[2, 2] - f[0, 2] * f[2, 0]
    c[1, 2] = f[0, 1] * f[2, 0] - f[0, 0] * f[2, 1]
    c[2, 0] = f[0, 1] * f[1, 2] - f[0, 2] * f[1, 1]
    c[2, 1] = f[0, 2] * f[1, 0] - f[0, 0] * f[1, 2]
    c[2, 2] = f[0, 0] * f[1, 1] - f[0, 1] * f[1, 0]
    return f[0, 0] * c[0, 0] + f[0, 1] * c[0, 1] + f[0, 2] * c[0, 2]


@njit(cache=True)
def cofactor(f: np.ndarray) -> np.ndarray:
    """Cofactor matrix (3, 3) of F, = dI3/dF = dJ/dF."""
    c = np.empty((3, 3))
    cofactor_into(f, c)
    return c


@njit(cache=True)
def _levi_civita(a: int, b: int, c: int) -> float:
    """Sign of the permutation (a, b, c) of (0, 1, 2); callers pass distinct indices only."""
    if (a == 0 and b == 1) or (a == 1 and b == 2) or (a == 2 and b == 0):
        return 1.0
    return -1.0


@njit(cache=True)
def i3_hessian(f: np.ndarray) -> np.ndarray:
    """d^2 I3 / dF^2 (9, 9), column-major vec: d cof(F)_ij / dF_kl = eps_ikm eps_jln F_mn."""
    h = np.zeros((9, 9))
    for i in range(3):
        for j in range(3):
            for k in range(3):
                if k == i:
                    continue
                m = 3 - i - k
                for l in range(3):
                    if l == j:
                        continue
                    n = 3 - j - l
                    h[3 * j + i, 3 * l + k] = _levi_civita(i, k, m) * _levi_civita(j, l, n) * f[m, n]
    return h


@njit(cache=True)
def svd_rv(f: np.ndarray):
    """Rotation-variant SVD of F (3, 3): (U (3, 3), sigma (3,), V (3, 3)) with det U = det V = +1.

    sigma is sorted by magnitude, descending; only sigma[2] may be negative (when det F < 0).
    One-sided Jacobi (mat3.svd3_rv), several times faster than LAPACK on a 3x3 matrix.
    """
    return svd3_rv(f)


@njit(cache=True)
def rotation_variant_sigma(f: np.ndarray) -> np.ndarray:
    """Signed singular values (3,) of F: the last one carries the sign of det F."""
    return svd3_rv(f)[1]


@njit(cache=True)
def pair_mode(u: np.ndarray, v: np.ndarray, i: int, j: int, sign: float) -> np.ndarray:
    """vec(U (e_i e_j^T + sign e_j e_i^T) V^T) / sqrt(2) (9,): a twist (sign = -1) or flip (sign = +1)."""
    out = np.empty(9)
    pair_mode_into(u, v, i, j, sign, out)
    return out


@njit(cache=True)
def pair_mode_into(u: np.ndarray, v: np.ndarray, i: int, j: int, sign: float, out: np.ndarray) -> None:
    """pair_mode written into out (9,) (no allocation)."""
    for c in range(3):
        for r in range(3):
            out[3 * c + r] = INV_SQRT2 * (u[r, i] * v[c, j] + sign * u[r, j] * v[c, i])


@njit(cache=True)
def scaling_mode(u: np.ndarray, v: np.ndarray, w: np.ndarray) -> np.ndarray:
    """vec(U diag(w) V^T) (9,) for a unit 3-vector w: an eigenvector of an isotropic dP/dF's scaling block."""
    out = np.empty(9)
    scaling_mode_into(u, v, w[0], w[1], w[2], out)
    return out


@njit(cache=True)
def scaling_mode_into(u: np.ndarray, v: np.ndarray, w0: float, w1: float, w2: float, out: np.ndarray) -> None:
    """scaling_mode with w = (w0, w1, w2) written into out (9,) (no allocation)."""
    for c in range(3):
        for r in range(3):
            out[3 * c + r] = u[r, 0] * w0 * v[c, 0] + u[r, 1] * w1 * v[c, 1] + u[r, 2] * w2 * v[c, 2]


@njit(cache=True)
def safe_pair_sum(a: float, b: float) -> float:
    """sigma_i + sigma_j kept away from 0 (|.| >= 1e-12, sign kept): I1's twist curvature is 2/(sigma_i+sigma_j),
    which is infinite where an inverted element's rotation is not defined."""
    s = a + b
    if abs(s) < 1e-12:
        return 1e-12 if s >= 0.0 else -1e-12
    return s


@njit(cache=True)
def i1_hessian(u: np.ndarray, sigma: np.ndarray, v: np.ndarray) -> np.ndarray:
    """d^2 I1 / dF^2 (9, 9) = sum over pairs (i, j) of 2/(sigma_i + sigma_j) t_ij t_ij^T (twist modes t_ij)."""
    h = np.zeros((9, 9))
    for p in range(3):
        i = 0 if p < 2 else 1
        j = 1 if p == 0 else 2
        t = pair_mode(u, v, i, j, -1.0)
        lam = 2.0 / safe_pair_sum(sigma[i], sigma[j])
        for a in range(9):
            for b in range(9):
                h[a, b] += lam * t[a] * t[b]
    return h
