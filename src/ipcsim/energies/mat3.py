"""Small dense 3x3 linear algebra in Numba, written out for speed (no LAPACK call, no temporaries in loops).

* ``det3(m)``: determinant of a 3x3 matrix (cofactor expansion along the first row).
* ``sym_eig3(a)``: eigen-decomposition of a symmetric 3x3 matrix by cyclic Jacobi rotations; eigenvalues
  ascending like ``np.linalg.eigh`` (eigenvector signs may differ from LAPACK's).
* ``svd3_rv(f)``: the *rotation-variant* SVD F = U diag(sigma) V^T, det U = det V = +1, by one-sided
  (Hestenes) Jacobi: right rotations V orthogonalise the columns of B = F V (sorted by norm); then sigma_i = |b_i|
  and u_0 = b_0 / |b_0|, u_1 = b_1 orthogonalised against u_0 and normalised, u_2 = u_0 x u_1 with a signed
  sigma_2 = u_2 . b_2 (F is first scaled by 1 / max|F_ij| so that squared norms cannot under- or overflow). One-sided Jacobi works on F
  itself (not on F^T F), so small singular values keep full accuracy relative to |F|; zero, repeated and
  tiny singular values need no special case beyond completing an orthonormal U when a column vanishes.
* ``mul3(a, b)``, ``mul3_abt(a, b)``, ``frob2(a)``: a @ b, a @ b.T and sum(a * a) without BLAS calls/temporaries.
* ``sym_eig3_into``, ``svd3_rv_into``: the same results written into given arrays (no allocation).
  svd_lanes.py repeats svd3_rv operation by operation for many matrices at once (vectorised, same bits).

All routines are deterministic and terminate after a bounded number of sweeps.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

_MAX_SWEEPS = 30
_EPS = 2.220446049250313e-16


@njit(cache=True)
def det3(m: np.ndarray) -> float:
    """det(m) of a (3, 3) matrix."""
    return (m[0, 0] * (m[1, 1] * m[2, 2] - m[1, 2] * m[2, 1])
            - m[0, 1] * (m[1, 0] * m[2, 2] - m[1, 2] * m[2, 0])
            + m[0, 2] * (m[1, 0] * m[2, 1] - m[1, 1] * m[2, 0]))


@njit(cache=True)
def _jacobi_tangent(zeta: float) -> float:
    """The smaller-magnitude root t of t^2 + 2 zeta t - 1 = 0 (tangent of a Jacobi rotation angle)."""
    az = abs(zeta)
    if az > 1e150:                       # sqrt(1 + zeta^2) would overflow; t = 1 / (2 zeta) to full precision
        return 0.5 / zeta
    t = 1.0 / (az + math.sqrt(1.0 + az * az))
    return t if zeta >= 0.0 else -t


@njit(cache=True)
def _jacobi_rotation(zeta: float):
    """(t, c, s): t = _jacobi_tangent(zeta), c = 1 / sqrt(1 + t^2), s = c t.

    For |zeta| > 2^27 (the last, tiny rotations of a converging sweep) fl(1 + zeta^2) = zeta^2, so the tangent is
    exactly 0.5 / zeta and fl(1 + t^2) = 1: the same bits as the general formulas without their sqrt and divisions.
    """
    if abs(zeta) > 134217728.0:
        t = 0.5 / zeta
        return t, 1.0, t
    t = _jacobi_tangent(zeta)
    c = 1.0 / math.sqrt(1.0 + t * t)
    return t, c, c * t


@njit(cache=True)
def sym_eig3(a: np.ndarray):
    """Eigenvalues w (3,) ascending and orthonormal eigenvectors q (3, 3) (columns) of a symmetric (3, 3) a.

    Only the upper triangle of ``a`` is read (a is not modified). a = q diag(w) q^T to ~1e-15 |a|.
    """
    w = np.empty(3)
    q = np.empty((3, 3))
    sym_eig3_into(a, w, q, np.empty((3, 3)))
    return w, q


@njit(cache=True)
def sym_eig3_into(a: np.ndarray, w: np.ndarray, q: np.ndarray, m: np.ndarray) -> None:
    """sym_eig3 written into w (3,) and q (3, 3), with m (3, 3) as scratch (no allocation)."""
    for i in range(3):
        for j in range(i, 3):
            m[i, j] = a[i, j]
            m[j, i] = a[i, j]
    for i in range(3):
        for j in range(3):
            q[i, j] = 1.0 if i == j else 0.0
    for _ in range(_MAX_SWEEPS):
        rotated = _eig_rotate(m, q, 0, 1)
        rotated = _eig_rotate(m, q, 0, 2) or rotated
        rotated = _eig_rotate(m, q, 1, 2) or rotated
        if not rotated:
            break
    # ascending order of the diagonal (a 3-element sorting network on indices)
    o0, o1, o2 = 0, 1, 2
    if m[o1, o1] < m[o0, o0]:
        o0, o1 = o1, o0
    if m[o2, o2] < m[o1, o1]:
        o1, o2 = o2, o1
        if m[o1, o1] < m[o0, o0]:
            o0, o1 = o1, o0
    w[0], w[1], w[2] = m[o0, o0], m[o1, o1], m[o2, o2]
    _permute_columns(q, o0, o1, o2)


@njit(cache=True)
def _eig_rotate(m: np.ndarray, q: np.ndarray, p: int, r: int) -> bool:
    """One Jacobi rotation of sym_eig3 annihilating m[p, r] (p < r); False if it was below round-off already."""
    apr = m[p, r]
    if apr == 0.0:
        return False
    app, arr = m[p, p], m[r, r]
    if abs(apr) <= _EPS * 0.5 * math.sqrt(abs(app)) * math.sqrt(abs(arr)):  # below round-off of the diagonal
        m[p, r] = 0.0
        m[r, p] = 0.0
        return False
    t, c, s = _jacobi_rotation((arr - app) / (2.0 * apr))
    m[p, p] = app - t * apr
    m[r, r] = arr + t * apr
    m[p, r] = 0.0
    m[r, p] = 0.0
    k = 3 - p - r
    akp, akr = m[k, p], m[k, r]
    m[k, p] = c * akp - s * akr
    m[p, k] = m[k, p]
    m[k, r] = s * akp + c * akr
    m[r, k] = m[k, r]
    for i in range(3):
        qp, qr = q[i, p], q[i, r]
        q[i, p] = c * qp - s * qr
        q[i, r] = s * qp + c * qr
    return True


@njit(cache=True)
def _permute_columns(q: np.ndarray, o0: int, o1: int, o2: int) -> None:
    """Columns of q (3, 3) := its columns (o0, o1, o2) (in place)."""
    for i in range(3):
        c0, c1, c2 = q[i, o0], q[i, o1], q[i, o2]
        q[i, 0], q[i, 1], q[i, 2] = c0, c1, c2


@njit(cache=True)
def _unit_orthogonal(u: np.ndarray) -> None:
    """Column 1 of u (3, 3) := a unit vector orthogonal to its unit column 0."""
    k = 0
    if abs(u[1, 0]) < abs(u[k, 0]):
        k = 1
    if abs(u[2, 0]) < abs(u[k, 0]):
        k = 2
    # column 1 = u0 x e_k, normalised
    a0 = u[1, 0] * (k == 2) - u[2, 0] * (k == 1)
    a1 = u[2, 0] * (k == 0) - u[0, 0] * (k == 2)
    a2 = u[0, 0] * (k == 1) - u[1, 0] * (k == 0)
    n = math.sqrt(a0 * a0 + a1 * a1 + a2 * a2)
    u[0, 1], u[1, 1], u[2, 1] = a0 / n, a1 / n, a2 / n


@njit(cache=True)
def _svd_rotate(b: np.ndarray, v: np.ndarray, p: int, r: int) -> bool:
    """One right rotation of svd3_rv orthogonalising columns p and r of b (and v); False if already orthogonal
    to round-off."""
    alpha = b[0, p] * b[0, p] + b[1, p] * b[1, p] + b[2, p] * b[2, p]
    beta = b[0, r] * b[0, r] + b[1, r] * b[1, r] + b[2, r] * b[2, r]
    gamma = b[0, p] * b[0, r] + b[1, p] * b[1, r] + b[2, p] * b[2, r]
    if gamma == 0.0 or abs(gamma) <= _EPS * math.sqrt(alpha * beta):
        return False
    _, c, s = _jacobi_rotation((beta - alpha) / (2.0 * gamma))
    for i in range(3):
        bp, br = b[i, p], b[i, r]
        b[i, p] = c * bp - s * br
        b[i, r] = s * bp + c * br
        vp, vr = v[i, p], v[i, r]
        v[i, p] = c * vp - s * vr
        v[i, r] = s * vp + c * vr
    return True


@njit(cache=True)
def svd3_rv(f: np.ndarray):
    """Rotation-variant SVD of F (3, 3): (U (3, 3), sigma (3,), V (3, 3)), det U = det V = +1.

    sigma is sorted by magnitude, descending; sigma[0] >= sigma[1] >= |sigma[2]|, and sigma[2] < 0 exactly when
    det F < 0 (up to round-off when sigma[2] ~ 0). F = U diag(sigma) V^T to ~1e-15 |F|.
    """
    u = np.empty((3, 3))
    sigma = np.empty(3)
    v = np.empty((3, 3))
    svd3_rv_into(f, u, sigma, v, np.empty((3, 3)))
    return u, sigma, v


@njit(cache=True)
def svd3_rv_into(f: np.ndarray, u: np.ndarray, sigma: np.ndarray, v: np.ndarray, b: np.ndarray) -> None:
    """svd3_rv written into u (3, 3), sigma (3,) and v (3, 3), with b (3, 3) as scratch (no allocation)."""
    scale = _svd_start(f, b, v)
    for _ in range(_MAX_SWEEPS):
        rotated = _svd_rotate(b, v, 0, 1)
        rotated = _svd_rotate(b, v, 0, 2) or rotated
        rotated = _svd_rotate(b, v, 1, 2) or rotated
        if not rotated:
            break
    svd3_rv_finish(b, scale, u, sigma, v)


@njit(cache=True)
def _svd_start(f: np.ndarray, b: np.ndarray, v: np.ndarray) -> float:
    """b := F / scale, v := I; returns scale = max|F_ij| (1 if 0 or not finite)."""
    scale = 0.0  # work on F / max|F_ij| so that squared column norms neither underflow nor overflow
    for i in range(3):
        for j in range(3):
            scale = max(scale, abs(f[i, j]))
    if scale == 0.0 or not math.isfinite(scale):
        scale = 1.0
    for i in range(3):
        for j in range(3):
            b[i, j] = f[i, j] / scale
            v[i, j] = 1.0 if i == j else 0.0
    return scale


@njit(cache=True)
def svd3_rv_finish(b: np.ndarray, scale: float, u: np.ndarray, sigma: np.ndarray, v: np.ndarray) -> None:
    """The SVD from the converged one-sided Jacobi state: b = F V / scale (3, 3) with orthogonal columns and the
    accumulated rotations v (3, 3) (sorted and made proper in place); writes u (3, 3) and sigma (3,)."""
    n20 = b[0, 0] * b[0, 0] + b[1, 0] * b[1, 0] + b[2, 0] * b[2, 0]
    n21 = b[0, 1] * b[0, 1] + b[1, 1] * b[1, 1] + b[2, 1] * b[2, 1]
    n22 = b[0, 2] * b[0, 2] + b[1, 2] * b[1, 2] + b[2, 2] * b[2, 2]
    # order columns by norm, descending
    i0, i1, i2 = 0, 1, 2
    if n21 > n20:
        i0, i1 = 1, 0
        n20, n21 = n21, n20
    if n22 > n21:
        i1, i2 = i2, i1
        n21, n22 = n22, n21
        if n21 > n20:
            i0, i1 = i1, i0
            n20, n21 = n21, n20
    _permute_columns(v, i0, i1, i2)
    flip = 1.0
    if det3(v) < 0.0:
        flip = -1.0
        for i in range(3):
            v[i, 2] = -v[i, 2]
    s0 = math.sqrt(n20)
    if s0 == 0.0:  # F = 0
        for i in range(3):
            sigma[i] = 0.0
            for j in range(3):
                u[i, j] = 1.0 if i == j else 0.0
        return
    for i in range(3):
        u[i, 0] = b[i, i0] / s0
    d = u[0, 0] * b[0, i1] + u[1, 0] * b[1, i1] + u[2, 0] * b[2, i1]
    w0 = b[0, i1] - d * u[0, 0]
    w1 = b[1, i1] - d * u[1, 0]
    w2 = b[2, i1] - d * u[2, 0]
    nw = math.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
    if nw > 0.0 and nw > 1e-300 * s0:
        u[0, 1], u[1, 1], u[2, 1] = w0 / nw, w1 / nw, w2 / nw
    else:
        _unit_orthogonal(u)
    u[0, 2] = u[1, 0] * u[2, 1] - u[2, 0] * u[1, 1]
    u[1, 2] = u[2, 0] * u[0, 1] - u[0, 0] * u[2, 1]
    u[2, 2] = u[0, 0] * u[1, 1] - u[1, 0] * u[0, 1]
    sigma[0] = scale * s0
    sigma[1] = scale * math.sqrt(n21)
    sigma[2] = scale * flip * (u[0, 2] * b[0, i2] + u[1, 2] * b[1, i2] + u[2, 2] * b[2, i2])


@njit(cache=True)
def mul3(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b (3, 3) of two (3, 3) matrices, written out (no BLAS call)."""
    out = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            out[i, j] = a[i, 0] * b[0, j] + a[i, 1] * b[1, j] + a[i, 2] * b[2, j]
    return out


@njit(cache=True)
def mul3_abt(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b.T (3, 3) of two (3, 3) matrices (e.g. R = U V^T), written out."""
    out = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            out[i, j] = a[i, 0] * b[j, 0] + a[i, 1] * b[j, 1] + a[i, 2] * b[j, 2]
    return out


@njit(cache=True)
def frob2(a: np.ndarray) -> float:
    """Squared Frobenius norm sum_ij a_ij^2 of a (3, 3) matrix."""
    s = 0.0
    for i in range(3):
        for j in range(3):
            s += a[i, j] * a[i, j]
    return s
