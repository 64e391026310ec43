"""Energy densities Psi(F) [Pa = J/m^3] of the elastic materials, per element (3x3 F), with Lame mu, lam [Pa].

Invariants I1 = tr S (rotation-variant polar F = R S), I2 = tr(F^T F), I3 = J = det F (see kinematics.py).
Every isotropic material gives ``*_psi(f, mu, lam)`` (the value, written in a cancellation-free form) and
``*_invariant_derivatives(i1, i2, i3, mu, lam) -> (dpsi (3,), d2psi (3, 3))`` (consumed by isotropic.py).
All five are parameterised so that, linearised at F = I, they give linear elasticity with the same (mu, lam):

NH   Neo-Hookean, log barrier form (IPC 2020):   mu/2 (I2 - 3) - mu ln J + lam/2 (ln J)^2          (+inf if J <= 0)
SNH  Stable Neo-Hookean (Smith et al. 2018, the course's simplified form without the log(I_C + 1) term):
         mu/2 (I2 - 3) - mu (J - 1) + lam_s/2 (J - 1)^2,   lam_s = lam + mu
     (equal to mu/2 (I2 - 3) + lam_s/2 (J - 1 - mu/lam_s)^2 minus its rest value; the shift lam_s = lam + mu makes
     the small-strain response that of the Lame pair (mu, lam), see Smith et al. 2018 §3.4 for the analogue).
FCR  fixed corotated (IPC / Stomakhin et al. 2012): mu ||F - R||^2 + lam/2 (J - 1)^2
         = mu (I2 - 2 I1 + 3) + lam/2 (I3 - 1)^2
LCR  linear corotated: mu ||F - R||^2 + lam/2 (tr(R^T F) - 3)^2 = mu (I2 - 2 I1 + 3) + lam/2 (I1 - 3)^2
     with R = R(F) the polar rotation of the *current* F, so the energy is an honest function of x (a line search
     can use it). Its gradient P = 2 mu (F - R) + lam (I1 - 3) R equals the gradient of the classic corotated
     linear energy mu ||sym(R0^T F) - I||^2 + lam/2 tr(R0^T F - I)^2 with R0 frozen at R(F) (R^T F = S is
     symmetric). lcr_lagged_dpdf gives that frozen-rotation stiffness (PSD by construction, R0 K R0^T of the
     stiffness-warping literature); the exact Hessian goes through the invariants like the others.
LE   linear elasticity (small strain): mu ||eps||^2 + lam/2 (tr eps)^2, eps = sym(F) - I; not rotation invariant.
ABD  affine-body orthogonality (Lan et al. 2022, 004 §III-D): kappa ||F^T F - I||^2 = kappa sum (sigma_i^2 - 1)^2
     with kappa = mu (the builder puts the body's kappa_a there, lam unused). Not the same small-strain limit as the
     others: 4 kappa ||eps||^2, i.e. LE with (mu, lam) = (4 kappa, 0). In the invariants (Newton's identities for
     the power sums of the signed sigma: sum sigma^4 = I1^2 I2 - I1^4 / 2 + I2^2 / 2 + 4 I1 I3) a polynomial:
         Psi = kappa (I1^2 I2 - I1^4 / 2 + I2^2 / 2 + 4 I1 I3 - 2 I2 + 3).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .kinematics import rotation_variant_sigma
from .mat3 import det3, frob2


@njit(cache=True)
def _zero_derivatives(dpsi: np.ndarray, d2psi: np.ndarray) -> None:
    for a in range(3):
        dpsi[a] = 0.0
        for b in range(3):
            d2psi[a, b] = 0.0


# ------------------------------------------------------------------------------------------------- NH
@njit(cache=True)
def neohookean_psi(f: np.ndarray, mu: float, lam: float) -> float:
    """NH energy density [Pa] of F (3, 3); +inf when det F <= 0."""
    j = det3(f)
    if j <= 0.0:
        return math.inf
    lnj = math.log(j)
    return 0.5 * mu * (frob2(f) - 3.0) - mu * lnj + 0.5 * lam * lnj * lnj


@njit(cache=True)
def neohookean_invariant_derivatives_into(i1, i2, i3, mu, lam, dpsi, d2psi) -> None:
    """NH dPsi/dI (3,) and d2Psi/dI2 (3, 3) [Pa] written into dpsi, d2psi; NaN for I3 <= 0 (the solver must keep J > 0)."""
    _zero_derivatives(dpsi, d2psi)
    lnj = math.log(i3) if i3 > 0.0 else math.nan
    dpsi[1] = 0.5 * mu
    dpsi[2] = (lam * lnj - mu) / i3
    d2psi[2, 2] = (lam + mu - lam * lnj) / (i3 * i3)


# ------------------------------------------------------------------------------------------------ SNH
@njit(cache=True)
def stable_neohookean_psi(f: np.ndarray, mu: float, lam: float) -> float:
    """SNH energy density [Pa] of F (3, 3); finite for inverted F."""
    lam_s = lam + mu
    jm1 = det3(f) - 1.0
    return 0.5 * mu * (frob2(f) - 3.0) - mu * jm1 + 0.5 * lam_s * jm1 * jm1


@njit(cache=True)
def stable_neohookean_invariant_derivatives_into(i1, i2, i3, mu, lam, dpsi, d2psi) -> None:
    """SNH dPsi/dI (3,) and d2Psi/dI2 (3, 3) [Pa] written into dpsi, d2psi."""
    _zero_derivatives(dpsi, d2psi)
    lam_s = lam + mu
    dpsi[1] = 0.5 * mu
    dpsi[2] = lam_s * (i3 - 1.0) - mu
    d2psi[2, 2] = lam_s


# ------------------------------------------------------------------------------------------------ FCR
@njit(cache=True)
def fixed_corotated_psi(f: np.ndarray, mu: float, lam: float) -> float:
    """FCR energy density [Pa] of F (3, 3): mu sum (sigma_i - 1)^2 + lam/2 (J - 1)^2, signed sigma."""
    s = rotation_variant_sigma(f)
    jm1 = det3(f) - 1.0
    return mu * ((s[0] - 1.0) ** 2 + (s[1] - 1.0) ** 2 + (s[2] - 1.0) ** 2) + 0.5 * lam * jm1 * jm1


@njit(cache=True)
def fixed_corotated_invariant_derivatives_into(i1, i2, i3, mu, lam, dpsi, d2psi) -> None:
    """FCR dPsi/dI (3,) and d2Psi/dI2 (3, 3) [Pa] written into dpsi, d2psi."""
    _zero_derivatives(dpsi, d2psi)
    dpsi[0] = -2.0 * mu
    dpsi[1] = mu
    dpsi[2] = lam * (i3 - 1.0)
    d2psi[2, 2] = lam


# ------------------------------------------------------------------------------------------------ LCR
@njit(cache=True)
def linear_corotated_psi(f: np.ndarray, mu: float, lam: float) -> float:
    """LCR energy density [Pa] of F (3, 3): mu sum (sigma_i - 1)^2 + lam/2 (sum sigma_i - 3)^2, signed sigma."""
    s = rotation_variant_sigma(f)
    e0, e1, e2 = s[0] - 1.0, s[1] - 1.0, s[2] - 1.0
    tr = e0 + e1 + e2
    return mu * (e0 * e0 + e1 * e1 + e2 * e2) + 0.5 * lam * tr * tr


@njit(cache=True)
def linear_corotated_invariant_derivatives_into(i1, i2, i3, mu, lam, dpsi, d2psi) -> None:
    """LCR dPsi/dI (3,) and d2Psi/dI2 (3, 3) [Pa] written into dpsi, d2psi."""
    _zero_derivatives(dpsi, d2psi)
    dpsi[0] = -2.0 * mu + lam * (i1 - 3.0)
    dpsi[1] = mu
    d2psi[0, 0] = lam


@njit(cache=True)
def lcr_lagged_dpdf(r: np.ndarray, mu: float, lam: float) -> np.ndarray:
    """Frozen-rotation LCR stiffness (9, 9) [Pa]: Hessian in F of mu ||sym(R^T F) - I||^2 + lam/2 tr(R^T F - I)^2
    for a fixed rotation R (3, 3). Eigenvalues: 0 (3 rotations), 2 mu (5), 2 mu + 3 lam (1): PSD for lam >= 0.

    dP = mu dF + mu R dF^T R + lam (R : dF) R, i.e. entries [(i,j),(l,k)] += mu R_ik R_lj.
    """
    h = np.empty((9, 9))
    lcr_lagged_dpdf_into(r, mu, lam, h)
    return h


@njit(cache=True)
def lcr_lagged_dpdf_into(r: np.ndarray, mu: float, lam: float, h: np.ndarray) -> None:
    """lcr_lagged_dpdf written into h (9, 9) (no allocation)."""
    for a in range(9):
        ra = r[a % 3, a // 3]  # vec(R)[a]
        for b in range(9):
            h[a, b] = mu if a == b else 0.0
            h[a, b] += lam * ra * r[b % 3, b // 3]
    for i in range(3):
        for j in range(3):
            for k in range(3):
                for l in range(3):
                    h[3 * j + i, 3 * k + l] += mu * r[i, k] * r[l, j]


# ------------------------------------------------------------------------------------------------- LE
@njit(cache=True)
def linear_elastic_psi(f: np.ndarray, mu: float, lam: float) -> float:
    """LE energy density [Pa] of F (3, 3): mu eps:eps + lam/2 (tr eps)^2, eps = (F + F^T)/2 - I."""
    tr = f[0, 0] + f[1, 1] + f[2, 2] - 3.0
    e2 = 0.0
    for i in range(3):
        for j in range(3):
            e = 0.5 * (f[i, j] + f[j, i]) - (1.0 if i == j else 0.0)
            e2 += e * e
    return mu * e2 + 0.5 * lam * tr * tr


@njit(cache=True)
def linear_elastic_pk1(f: np.ndarray, mu: float, lam: float) -> np.ndarray:
    """LE stress P (3, 3) [Pa] = 2 mu eps + lam tr(eps) I."""
    p = np.empty((3, 3))
    linear_elastic_pk1_into(f, mu, lam, p)
    return p


@njit(cache=True)
def linear_elastic_pk1_into(f: np.ndarray, mu: float, lam: float, p: np.ndarray) -> None:
    """linear_elastic_pk1 written into p (3, 3)."""
    tr = f[0, 0] + f[1, 1] + f[2, 2] - 3.0
    for i in range(3):
        for j in range(3):
            p[i, j] = mu * (f[i, j] + f[j, i])
    for i in range(3):
        p[i, i] += lam * tr - 2.0 * mu


@njit(cache=True)
def linear_elastic_dpdf(mu: float, lam: float) -> np.ndarray:
    """LE stiffness dvec(P)/dvec(F) (9, 9) [Pa], constant and PSD (eigenvalues 0, 2 mu, 2 mu + 3 lam)."""
    h = np.empty((9, 9))
    linear_elastic_dpdf_into(mu, lam, h)
    return h


@njit(cache=True)
def linear_elastic_dpdf_into(mu: float, lam: float, h: np.ndarray) -> None:
    """linear_elastic_dpdf written into h (9, 9)."""
    for a in range(9):
        for b in range(9):
            h[a, b] = 0.0
    for i in range(3):
        for j in range(3):
            h[3 * j + i, 3 * j + i] += mu
            h[3 * j + i, 3 * i + j] += mu
            h[3 * i + i, 3 * j + j] += lam


# ------------------------------------------------------------------------------------------------ ABD
@njit(cache=True)
def abd_orthogonality_psi(f: np.ndarray, mu: float, lam: float) -> float:
    """ABD energy density [Pa] of F (3, 3): mu ||F^T F - I||_F^2 (mu = kappa_a; lam unused), cancellation-free."""
    total = 0.0
    for i in range(3):
        for j in range(3):
            c = f[0, i] * f[0, j] + f[1, i] * f[1, j] + f[2, i] * f[2, j] - (1.0 if i == j else 0.0)
            total += c * c
    return mu * total


@njit(cache=True)
def abd_orthogonality_invariant_derivatives_into(i1, i2, i3, mu, lam, dpsi, d2psi) -> None:
    """ABD dPsi/dI (3,) and d2Psi/dI2 (3, 3) [Pa] written into dpsi, d2psi (the polynomial of the module doc)."""
    _zero_derivatives(dpsi, d2psi)
    dpsi[0] = mu * (2.0 * i1 * i2 - 2.0 * i1 * i1 * i1 + 4.0 * i3)
    dpsi[1] = mu * (i1 * i1 + i2 - 2.0)
    dpsi[2] = mu * 4.0 * i1
    d2psi[0, 0] = mu * (2.0 * i2 - 6.0 * i1 * i1)
    d2psi[0, 1] = d2psi[1, 0] = mu * 2.0 * i1
    d2psi[0, 2] = d2psi[2, 0] = mu * 4.0
    d2psi[1, 1] = mu
