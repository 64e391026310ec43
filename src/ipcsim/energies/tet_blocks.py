"""Gradient (12,) [N] and PSD-projected Hessian (12, 12) [N/m] of one linear tet, without allocation.

Conventions of kinematics.py: the 12 unknowns are the 4 vertex positions, vertex-major; vec(F) is column-major
(entry 3k + i is F[i, k]). With the shape gradients G (4, 3) [1/m] (F = sum_a x_a G[a]^T: G[a + 1] = row a of
Dm^{-1}, G[0] = -(sum of the rows)), dF[i, k]/dx[a, j] = delta_ij G[a, k], so that for a tet of rest volume V

    g[3a + i]         = V sum_k P[i, k] G[a, k]
    H[3a + i, 3b + j] = V sum_{k,l} G[a, k] D[3k + i, 3l + j] G[b, l]          (D = dP/dF (9, 9), projected)

Isotropic materials give the projected D by its eigensystem (isotropic.py) instead of as a 9x9 matrix: with
F = U diag(sigma) V^T, the modes are vec(U S V^T) for S = (e_i e_j^T -+ e_j e_i^T)/sqrt2 (twist, flip of a pair
i < j) and the scaling block A+ (3, 3) on S = e_i e_i^T. Mapped through dF/dx, vec(u_i v_j^T) becomes the
12-vector x_ij with x_ij[3a + c] = U[c, i] y[a, j], y[a, j] = G[a] . v_j, and

    H = V [ sum_{i<j} (lt_ij / 2) (x_ij - x_ji)(x_ij - x_ji)^T + (lf_ij / 2) (x_ij + x_ji)(x_ij + x_ji)^T
            + sum_{i,k} A+[i, k] x_ii x_kk^T ]                    (lt, lf: pair eigenvalues clamped at 0)

i.e. the same matrix as B^T D B with D assembled from the modes, in fewer operations and without the 9x9 D.
For linear corotated materials (flip eigenvalues 2 mu, A+ = A) ``tet_hessian_lcr_into`` writes the same matrix as
2 mu (G G^T (x) I_3) plus four rank-one terms.
Every routine writes into arrays passed in (allocate them once per chunk of tets) and indexes the shared arrays
with [e, ...] (no per-tet views). The per-tet routines (here and the ``*_into`` ones they call) are compiled with
inline="always": Numba does not inline calls between compiled functions by itself, and a call passing a dozen
arrays costs about as much as the arithmetic of a small routine (after editing one, clear the Numba caches of
its callers too).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .isotropic import pair_eigenvalues


@njit(cache=True, inline="always")
def deformation_gradient_into(x, tets, dm_inv, e: int, f) -> None:
    """F (3, 3) of tet e = Ds Dm^{-1} (the arithmetic of kinematics.deformation_gradient)."""
    v0, v1, v2, v3 = tets[e, 0], tets[e, 1], tets[e, 2], tets[e, 3]
    for i in range(3):
        x0 = x[v0, i]
        d1, d2, d3 = x[v1, i] - x0, x[v2, i] - x0, x[v3, i] - x0
        for k in range(3):
            f[i, k] = d1 * dm_inv[e, 0, k] + d2 * dm_inv[e, 1, k] + d3 * dm_inv[e, 2, k]


@njit(cache=True, inline="always")
def shape_gradients_into(dm_inv, e: int, g) -> None:
    """G (4, 3) [1/m] of tet e (module doc)."""
    for k in range(3):
        g[0, k] = -(dm_inv[e, 0, k] + dm_inv[e, 1, k] + dm_inv[e, 2, k])
        for c in range(3):
            g[c + 1, k] = dm_inv[e, c, k]


@njit(cache=True, inline="always")
def tet_gradient_into(p, g, volume: float, out) -> None:
    """out (12,) [N] = V sum_k P[i, k] G[a, k] at 3a + i."""
    for a in range(4):
        for i in range(3):
            out[3 * a + i] = volume * (p[i, 0] * g[a, 0] + p[i, 1] * g[a, 1] + p[i, 2] * g[a, 2])


# The Hessian routines work in one flat float64 array (``hessian_workspace()``) with rows of HW_STRIDE = 16
# entries (12 used): constant offsets let the compiler see the regions apart, and rows of 16 vectorise (LLVM does
# not vectorise loops of 12). H[r, c] ends up in hw[HW_H + HW_STRIDE * r + c].
HW_STRIDE = 16
_HW_Y = 0                        # y[a, j] at 3 a + j
_HW_Z = HW_STRIDE                # 9 mode vectors z_m (rows)
_HW_W = _HW_Z + 9 * HW_STRIDE    # their weighted partners w_m: H = sum_m z_m w_m^T
HW_H = _HW_W + 9 * HW_STRIDE     # H (12 rows)
_HW_T = HW_H + 12 * HW_STRIDE    # t (9 rows) of tet_hessian_from_dpdf_into
HW_SIZE = _HW_T + 9 * HW_STRIDE


@njit(cache=True)
def hessian_workspace() -> np.ndarray:
    """The flat scratch array of the Hessian routines (zeros: the unused row ends must stay finite)."""
    return np.zeros(HW_SIZE)


@njit(cache=True)
def tet_hessian_from_dpdf_into(dpdf, g, volume: float, hw) -> None:
    """H (12, 12) [N/m] = V G^T D G into hw (see HW_H) for a symmetric D = dpdf (9, 9); upper triangle, mirrored."""
    for r in range(9):  # t[3k + i, 3b + j] = sum_l D[3k + i, 3l + j] G[b, l]
        for b in range(4):
            g0, g1, g2 = g[b, 0], g[b, 1], g[b, 2]
            for j in range(3):
                hw[_HW_T + HW_STRIDE * r + 3 * b + j] = dpdf[r, j] * g0 + dpdf[r, 3 + j] * g1 + dpdf[r, 6 + j] * g2
    for a in range(4):
        g0, g1, g2 = volume * g[a, 0], volume * g[a, 1], volume * g[a, 2]
        for i in range(3):
            row = 3 * a + i
            for c in range(row, 12):
                hw[HW_H + HW_STRIDE * row + c] = (g0 * hw[_HW_T + HW_STRIDE * i + c]
                                                  + g1 * hw[_HW_T + HW_STRIDE * (3 + i) + c]
                                                  + g2 * hw[_HW_T + HW_STRIDE * (6 + i) + c])
    _mirror_upper(hw)


@njit(cache=True, inline="always")
def tet_hessian_from_eigensystem_into(u, sigma, v, dpsi, ap, g, volume: float, hw) -> None:
    """H (12, 12) [N/m] into hw (see HW_H) from the projected eigensystem of an isotropic material (module doc).

    u, sigma, v: rotation-variant SVD of F; dpsi (3,): dPsi/dI (for the pair eigenvalues); ap (3, 3): A+.
    H = sum_m z_m w_m^T over 9 modes: z = x_ij -+ x_ji and w = (V lambda / 2) z for the pairs (w = 0 where lambda
    is clamped), z = x_ii and w = V sum_k A+[i, k] x_kk for the scaling block.
    """
    for a in range(4):
        for j in range(3):
            hw[_HW_Y + 3 * a + j] = g[a, 0] * v[0, j] + g[a, 1] * v[1, j] + g[a, 2] * v[2, j]
    for p in range(3):
        i = 0 if p < 2 else 1
        j = 1 if p == 0 else 2
        lam_twist, lam_flip = pair_eigenvalues(sigma, dpsi, i, j)
        wt = 0.5 * volume * lam_twist if lam_twist > 0.0 else 0.0
        wf = 0.5 * volume * lam_flip if lam_flip > 0.0 else 0.0
        zt_row, zf_row = _HW_Z + HW_STRIDE * 2 * p, _HW_Z + HW_STRIDE * (2 * p + 1)
        wt_row, wf_row = _HW_W + HW_STRIDE * 2 * p, _HW_W + HW_STRIDE * (2 * p + 1)
        for a in range(4):
            yj, yi = hw[_HW_Y + 3 * a + j], hw[_HW_Y + 3 * a + i]
            for c in range(3):
                zt = u[c, i] * yj - u[c, j] * yi
                zf = u[c, i] * yj + u[c, j] * yi
                hw[zt_row + 3 * a + c] = zt
                hw[zf_row + 3 * a + c] = zf
                hw[wt_row + 3 * a + c] = wt * zt
                hw[wf_row + 3 * a + c] = wf * zf
    for i in range(3):
        for a in range(4):
            for c in range(3):
                hw[_HW_Z + HW_STRIDE * (6 + i) + 3 * a + c] = u[c, i] * hw[_HW_Y + 3 * a + i]
    for i in range(3):
        for r in range(12):
            hw[_HW_W + HW_STRIDE * (6 + i) + r] = volume * (ap[i, 0] * hw[_HW_Z + HW_STRIDE * 6 + r]
                                                            + ap[i, 1] * hw[_HW_Z + HW_STRIDE * 7 + r]
                                                            + ap[i, 2] * hw[_HW_Z + HW_STRIDE * 8 + r])
    for r in range(12):
        for c in range(HW_STRIDE):
            s = 0.0
            for m in range(9):
                s += hw[_HW_Z + HW_STRIDE * m + r] * hw[_HW_W + HW_STRIDE * m + c]
            hw[HW_H + HW_STRIDE * r + c] = s
    _mirror_upper(hw)


@njit(cache=True, inline="always")
def tet_hessian_lcr_into(u, sigma, v, dpsi, mu: float, lam: float, g, volume: float, hw) -> None:
    """H (12, 12) [N/m] into hw (see HW_H) of a linear-corotated tet (mu > 0, lam >= 0): the matrix of
    ``tet_hessian_from_eigensystem_into`` (equal to round-off) from four rank-one terms instead of nine, on the
    upper triangle (scalar: LLVM's vectorised form of a four-term sum was slower here).

    For LCR the flip eigenvalues are all 2 mu and the scaling block is A = 2 mu I + lam 1 1^T (positive definite,
    so A+ = A); the nine modes being orthonormal, the projected dP/dF is

        2 mu I_9 + sum_{i<j} (max(lt_ij, 0) - 2 mu) t_ij t_ij^T + lam vec(R) vec(R)^T        (R = U V^T),

    and through dF/dx: H = V [2 mu (G G^T (x) I_3) + sum_{i<j} (c_ij / 2) z_ij z_ij^T + lam b b^T] with the twist
    vectors z_ij = x_ij - x_ji of the module doc, c_ij = max(lt_ij, 0) - 2 mu and b = sum_i x_ii
    (b[3a + c] = (R G[a])_c). dpsi (3,): the LCR invariant derivatives (for ``pair_eigenvalues``).
    """
    for a in range(4):
        for j in range(3):
            hw[_HW_Y + 3 * a + j] = g[a, 0] * v[0, j] + g[a, 1] * v[1, j] + g[a, 2] * v[2, j]
    two_mu = 2.0 * mu
    for p in range(3):
        i = 0 if p < 2 else 1
        j = 1 if p == 0 else 2
        lam_twist = pair_eigenvalues(sigma, dpsi, i, j)[0]
        wt = 0.5 * volume * ((lam_twist if lam_twist > 0.0 else 0.0) - two_mu)
        for a in range(4):
            yj, yi = hw[_HW_Y + 3 * a + j], hw[_HW_Y + 3 * a + i]
            for c in range(3):
                zt = u[c, i] * yj - u[c, j] * yi
                hw[_HW_Z + HW_STRIDE * p + 3 * a + c] = zt
                hw[_HW_W + HW_STRIDE * p + 3 * a + c] = wt * zt
    wb = volume * lam
    for a in range(4):
        y0, y1, y2 = hw[_HW_Y + 3 * a], hw[_HW_Y + 3 * a + 1], hw[_HW_Y + 3 * a + 2]
        for c in range(3):
            rg = u[c, 0] * y0 + u[c, 1] * y1 + u[c, 2] * y2  # (R G[a])_c
            hw[_HW_Z + HW_STRIDE * 3 + 3 * a + c] = rg
            hw[_HW_W + HW_STRIDE * 3 + 3 * a + c] = wb * rg
    for r in range(12):
        z0, z1 = hw[_HW_Z + r], hw[_HW_Z + HW_STRIDE + r]
        z2, z3 = hw[_HW_Z + 2 * HW_STRIDE + r], hw[_HW_Z + 3 * HW_STRIDE + r]
        for c in range(r, 12):
            h = (z0 * hw[_HW_W + c] + z1 * hw[_HW_W + HW_STRIDE + c]
                 + z2 * hw[_HW_W + 2 * HW_STRIDE + c] + z3 * hw[_HW_W + 3 * HW_STRIDE + c])
            hw[HW_H + HW_STRIDE * r + c] = h
            hw[HW_H + HW_STRIDE * c + r] = h
    for a in range(4):  # + 2 mu V (G G^T (x) I_3)
        for b in range(a, 4):
            gg = two_mu * volume * (g[a, 0] * g[b, 0] + g[a, 1] * g[b, 1] + g[a, 2] * g[b, 2])
            for i in range(3):
                hw[HW_H + HW_STRIDE * (3 * a + i) + 3 * b + i] += gg
                if b != a:
                    hw[HW_H + HW_STRIDE * (3 * b + i) + 3 * a + i] += gg


@njit(cache=True, inline="always")
def _mirror_upper(hw) -> None:
    """Lower triangle of H := its upper triangle (exactly symmetric H)."""
    for r in range(12):
        for c in range(r):
            hw[HW_H + HW_STRIDE * r + c] = hw[HW_H + HW_STRIDE * c + r]
