"""Stress and stiffness of isotropic energies written in the invariants I1 = tr S, I2 = tr(F^T F), I3 = det F.

A material supplies Psi(I1, I2, I3) through its first derivatives dpsi = (Psi_1, Psi_2, Psi_3) [Pa] and its
second derivatives d2psi (3, 3) [Pa]; everything else is generic (Dynamic Deformables course, ch. 5-7):

    P       = Psi_1 R + 2 Psi_2 F + Psi_3 cof F                                   (first Piola-Kirchhoff)
    dP/dF   = Psi_1 H1 + 2 Psi_2 Id + Psi_3 H3 + sum_ab Psi_ab g_a g_b^T          (g_a = vec dI_a/dF)

The PSD projection uses the analytic eigensystem of dP/dF (Smith et al. 2019): with the rotation-variant SVD
F = U diag(sigma) V^T and (i, j, k) a permutation of (0, 1, 2),

    twist  U (e_i e_j^T - e_j e_i^T) V^T / sqrt2:  lambda = 2 Psi_1 / (sigma_i + sigma_j) + 2 Psi_2 + sigma_k Psi_3
    flip   U (e_i e_j^T + e_j e_i^T) V^T / sqrt2:  lambda = 2 Psi_2 - sigma_k Psi_3
    scaling U diag(w) V^T, (alpha, w) eigenpairs of A = d^2 Psi / d sigma^2 (3, 3)

and negative eigenvalues are clamped to zero. Neither formula divides by sigma_i - sigma_j, so repeated
singular values need no special case. All matrices here are 9x9 in column-major vec(F) layout.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .kinematics import cofactor, i1_hessian, i3_hessian, pair_mode_into, safe_pair_sum, scaling_mode_into, vec
from .mat3 import det3, mul3_abt, sym_eig3, sym_eig3_into


@njit(cache=True)
def pk1_from_invariants(f: np.ndarray, r: np.ndarray, dpsi: np.ndarray) -> np.ndarray:
    """First Piola-Kirchhoff stress P (3, 3) [Pa] from dpsi = dPsi/dI (3,); r = R (3, 3), read only if Psi_1 != 0."""
    p = np.empty((3, 3))
    pk1_from_invariants_into(f, r, dpsi, p)
    return p


@njit(cache=True, inline="always")
def pk1_from_invariants_into(f: np.ndarray, r: np.ndarray, dpsi: np.ndarray, p: np.ndarray) -> None:
    """pk1_from_invariants written into p (3, 3) (no allocation)."""
    a, c = 2.0 * dpsi[1], dpsi[2]
    for i in range(3):
        i1, i2 = (i + 1) % 3, (i + 2) % 3
        for j in range(3):
            j1, j2 = (j + 1) % 3, (j + 2) % 3
            cof = f[i1, j1] * f[i2, j2] - f[i1, j2] * f[i2, j1]  # cofactor(f)[i, j]
            p[i, j] = a * f[i, j] + c * cof
    if dpsi[0] != 0.0:
        for i in range(3):
            for j in range(3):
                p[i, j] += dpsi[0] * r[i, j]


@njit(cache=True)
def dpdf_from_invariants(f, u, sigma, v, dpsi, d2psi) -> np.ndarray:
    """Exact dvec(P)/dvec(F) (9, 9) [Pa]; u, sigma, v: rotation-variant SVD of f, read only if Psi_1 != 0
    or any Psi_1a != 0."""
    uses_i1 = dpsi[0] != 0.0 or d2psi[0, 0] != 0.0 or d2psi[0, 1] != 0.0 or d2psi[0, 2] != 0.0
    g = np.zeros((3, 9))
    if uses_i1:
        g[0] = vec(mul3_abt(u, v))
    g[1] = 2.0 * vec(f)
    g[2] = vec(cofactor(f))
    h = dpsi[2] * i3_hessian(f)
    if dpsi[0] != 0.0:
        h += dpsi[0] * i1_hessian(u, sigma, v)
    for a in range(9):
        h[a, a] += 2.0 * dpsi[1]
    for ia in range(3):
        for ib in range(3):
            c = d2psi[ia, ib]
            if c == 0.0:
                continue
            for a in range(9):
                for b in range(9):
                    h[a, b] += c * g[ia, a] * g[ib, b]
    return h


@njit(cache=True)
def sigma_hessian(sigma: np.ndarray, dpsi: np.ndarray, d2psi: np.ndarray) -> np.ndarray:
    """A = d^2 Psi / d sigma^2 (3, 3) [Pa] of Psi(I1, I2, I3) in the signed singular values sigma (3,)."""
    a = np.empty((3, 3))
    sigma_hessian_into(sigma, dpsi, d2psi, a, np.empty((3, 3)))
    return a


@njit(cache=True, inline="always")
def sigma_hessian_into(sigma: np.ndarray, dpsi: np.ndarray, d2psi: np.ndarray, a: np.ndarray, di: np.ndarray) -> None:
    """sigma_hessian written into a (3, 3); di (3, 3) scratch (no allocation)."""
    for i in range(3):  # di[a, i] = dI_a / dsigma_i
        di[0, i] = 1.0
        di[1, i] = 2.0 * sigma[i]
        di[2, i] = sigma[(i + 1) % 3] * sigma[(i + 2) % 3]
    for i in range(3):
        for j in range(3):
            s = 0.0
            for p in range(3):
                for q in range(3):
                    s += di[p, i] * d2psi[p, q] * di[q, j]
            a[i, j] = s
    for i in range(3):
        a[i, i] += 2.0 * dpsi[1]
        for j in range(3):
            if j != i:
                a[i, j] += dpsi[2] * sigma[3 - i - j]


@njit(cache=True)
def _add_outer_upper(h: np.ndarray, lam: float, q: np.ndarray) -> None:
    """Upper triangle of h (9, 9) += lam q q^T."""
    for a in range(9):
        la = lam * q[a]
        for b in range(a, 9):
            h[a, b] += la * q[b]


@njit(cache=True, inline="always")
def pair_eigenvalues(sigma: np.ndarray, dpsi: np.ndarray, i: int, j: int):
    """(twist, flip) eigenvalues [Pa] of dP/dF for the pair i < j of singular values (see module doc)."""
    k = 3 - i - j
    lam_twist = 2.0 * dpsi[0] / safe_pair_sum(sigma[i], sigma[j]) + 2.0 * dpsi[1] + sigma[k] * dpsi[2]
    lam_flip = 2.0 * dpsi[1] - sigma[k] * dpsi[2]
    return lam_twist, lam_flip


@njit(cache=True)
def dpdf_projected_from_invariants(u, sigma, v, dpsi, d2psi) -> np.ndarray:
    """PSD projection (9, 9) [Pa] of dP/dF by clamping its analytic eigenvalues at 0 (see module doc)."""
    h = np.zeros((9, 9))
    q = np.empty(9)
    for p in range(3):
        i = 0 if p < 2 else 1
        j = 1 if p == 0 else 2
        lam_twist, lam_flip = pair_eigenvalues(sigma, dpsi, i, j)
        if lam_twist > 0.0:
            pair_mode_into(u, v, i, j, -1.0, q)
            _add_outer_upper(h, lam_twist, q)
        if lam_flip > 0.0:
            pair_mode_into(u, v, i, j, 1.0, q)
            _add_outer_upper(h, lam_flip, q)
    alpha, w = sym_eig3(sigma_hessian(sigma, dpsi, d2psi))
    for m in range(3):
        if alpha[m] > 0.0:
            scaling_mode_into(u, v, w[0, m], w[1, m], w[2, m], q)
            _add_outer_upper(h, alpha[m], q)
    for a in range(9):
        for b in range(a):
            h[a, b] = h[b, a]
    return h


@njit(cache=True, inline="always")
def projected_sigma_hessian_into(sigma, dpsi, d2psi, ap, alpha, w, m) -> None:
    """A+ (3, 3) [Pa] into ap: the PSD projection (eigenvalues clamped at 0) of A = sigma_hessian (upper triangle,
    mirrored), i.e. the scaling block of the projected dP/dF in the basis vec(u_i v_i^T). A itself when it is
    positive definite (the common case: no eigen-decomposition); scratch alpha (3,), w (3, 3), m (3, 3)."""
    sigma_hessian_into(sigma, dpsi, d2psi, ap, m)
    for i in range(3):
        for j in range(i):
            ap[i, j] = ap[j, i]
    d1 = ap[0, 0] * ap[1, 1] - ap[0, 1] * ap[0, 1]
    if ap[0, 0] > 0.0 and d1 > 0.0 and det3(ap) > 0.0:  # Sylvester: positive definite
        return
    sym_eig3_into(ap, alpha, w, m)
    for i in range(3):
        for j in range(3):
            s = 0.0
            for k in range(3):
                if alpha[k] > 0.0:
                    s += alpha[k] * w[i, k] * w[j, k]
            ap[i, j] = s
