"""The rotation-variant SVD of ``mat3.svd3_rv`` for LANES 3x3 matrices at once, bitwise equal per matrix.

The one-sided Jacobi sweeps of svd3_rv are a chain of dependent square roots and divisions (~9 rotations per
matrix, latency bound: ~0.5 us per matrix). ``svd3_rv_lanes`` runs LANES matrices in lockstep with the lane
index innermost, a constant trip count and no branches, so that the loops vectorise (one SIMD chain serves
LANES matrices). Lockstep does not change any lane's result:

* a lane whose rotation is skipped keeps its values (a select; c = 1, s = 0 could turn -0.0 into +0.0);
* a lane that has converged (a sweep without rotation) finds nothing to rotate in the further sweeps that
  other lanes need, exactly where svd3_rv would have stopped;
* the rotation and the final step (column order, U, signed sigma) repeat svd3_rv's arithmetic operation by
  operation (mat3._svd_rotate with _jacobi_rotation, mat3.svd3_rv_finish), with selects for its branches;
* the rare special cases (F = 0, rank-deficient F: no direction for u_1) are recomputed by svd3_rv itself.

Layout: one flat float64 array ``work`` of LANES_ROWS * LANES entries; "row" k of lane l is work[k * LANES + l]
(a flat array with constant row offsets lets the compiler prove the rows independent, which it cannot for a
2-D array of run-time shape). Input F[i, j] in row F_ROW + 3 i + j; outputs U[i, j] in row U_ROW + 3 i + j,
sigma[i] in row SIGMA_ROW + i, V[i, j] in row V_ROW + 3 i + j. Pad unused lanes with any finite F.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .mat3 import _EPS, _MAX_SWEEPS, svd3_rv

#: Matrices per call (16 doubles: two AVX-512 or four AVX2 registers per row; 8 lanes do not vectorise).
LANES = 16
F_ROW = 0
_B_ROW = 9       # b[i, j] = (F V / scale)[i, j] in row _B_ROW + 3 j + i (columns contiguous)
_VACC_ROW = 18   # the accumulated rotations, v[i, j] in row _VACC_ROW + 3 j + i
_SCALE_ROW = 27  # max|F_ij| (or 1); -1 after the sweeps marks a lane left to svd3_rv
U_ROW = 28
SIGMA_ROW = 37
V_ROW = 40
LANES_ROWS = 49


@njit(cache=True)
def lanes_workspace() -> np.ndarray:
    """The flat work array of svd3_rv_lanes (LANES_ROWS * LANES,)."""
    return np.empty(LANES_ROWS * LANES)


@njit(cache=True, error_model="numpy")  # IEEE division (inf/nan in skipped lanes, discarded): no branches
def svd3_rv_lanes(work: np.ndarray) -> None:
    """svd3_rv of the F in rows F_ROW.. of every lane into rows U_ROW.., SIGMA_ROW.., V_ROW.. (see module doc)."""
    for l in range(LANES):
        sc = 0.0
        for k in range(9):
            sc = max(sc, abs(work[(F_ROW + k) * LANES + l]))
        work[_SCALE_ROW * LANES + l] = 1.0 if (sc == 0.0 or not math.isfinite(sc)) else sc
    for i in range(3):
        for j in range(3):
            for l in range(LANES):
                work[(_B_ROW + 3 * j + i) * LANES + l] = (work[(F_ROW + 3 * i + j) * LANES + l]
                                                          / work[_SCALE_ROW * LANES + l])
                work[(_VACC_ROW + 3 * j + i) * LANES + l] = 1.0 if i == j else 0.0
    for _ in range(_MAX_SWEEPS):
        rotated = _rotate_lanes(work, 0, 1)
        rotated = _rotate_lanes(work, 0, 2) or rotated
        rotated = _rotate_lanes(work, 1, 2) or rotated
        if not rotated:
            break
    _finish_lanes(work)
    for l in range(LANES):
        if work[_SCALE_ROW * LANES + l] < 0.0:
            _special_lane(work, l)


@njit(cache=True)
def _special_lane(work: np.ndarray, l: int) -> None:
    """svd3_rv of lane l (allocates: F = 0 or rank-deficient F only)."""
    f = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            f[i, j] = work[(F_ROW + 3 * i + j) * LANES + l]
    u, sigma, v = svd3_rv(f)
    for i in range(3):
        work[(SIGMA_ROW + i) * LANES + l] = sigma[i]
        for j in range(3):
            work[(U_ROW + 3 * i + j) * LANES + l] = u[i, j]
            work[(V_ROW + 3 * i + j) * LANES + l] = v[i, j]


@njit(error_model="numpy", inline="always")  # inlined with constant p, r: the lane loop vectorises
def _rotate_lanes(work, p, r) -> bool:
    """mat3._svd_rotate of columns p < r in every lane, branch-free (same arithmetic)."""
    bp_row, br_row = (_B_ROW + 3 * p) * LANES, (_B_ROW + 3 * r) * LANES
    vp_row, vr_row = (_VACC_ROW + 3 * p) * LANES, (_VACC_ROW + 3 * r) * LANES
    rotated = False
    for l in range(LANES):
        bp0, bp1, bp2 = work[bp_row + l], work[bp_row + LANES + l], work[bp_row + 2 * LANES + l]
        br0, br1, br2 = work[br_row + l], work[br_row + LANES + l], work[br_row + 2 * LANES + l]
        alpha = bp0 * bp0 + bp1 * bp1 + bp2 * bp2
        beta = br0 * br0 + br1 * br1 + br2 * br2
        gamma = bp0 * br0 + bp1 * br1 + bp2 * br2
        rot = not ((gamma == 0.0) | (abs(gamma) <= _EPS * math.sqrt(alpha * beta)))
        zeta = (beta - alpha) / (2.0 * gamma)
        az = abs(zeta)
        big = az > 134217728.0  # 2^27, see mat3._jacobi_rotation
        tg = 1.0 / (az + math.sqrt(1.0 + az * az))
        tg = tg if zeta >= 0.0 else -tg
        t = 0.5 / zeta if big else tg
        c = 1.0 if big else 1.0 / math.sqrt(1.0 + t * t)
        s = t if big else c * t
        vp0, vp1, vp2 = work[vp_row + l], work[vp_row + LANES + l], work[vp_row + 2 * LANES + l]
        vr0, vr1, vr2 = work[vr_row + l], work[vr_row + LANES + l], work[vr_row + 2 * LANES + l]
        work[bp_row + l] = (c * bp0 - s * br0) if rot else bp0
        work[bp_row + LANES + l] = (c * bp1 - s * br1) if rot else bp1
        work[bp_row + 2 * LANES + l] = (c * bp2 - s * br2) if rot else bp2
        work[br_row + l] = (s * bp0 + c * br0) if rot else br0
        work[br_row + LANES + l] = (s * bp1 + c * br1) if rot else br1
        work[br_row + 2 * LANES + l] = (s * bp2 + c * br2) if rot else br2
        work[vp_row + l] = (c * vp0 - s * vr0) if rot else vp0
        work[vp_row + LANES + l] = (c * vp1 - s * vr1) if rot else vp1
        work[vp_row + 2 * LANES + l] = (c * vp2 - s * vr2) if rot else vp2
        work[vr_row + l] = (s * vp0 + c * vr0) if rot else vr0
        work[vr_row + LANES + l] = (s * vp1 + c * vr1) if rot else vr1
        work[vr_row + 2 * LANES + l] = (s * vp2 + c * vr2) if rot else vr2
        rotated = rotated | rot
    return rotated


@njit(error_model="numpy", inline="always")
def _pick(k, x0, x1, x2):
    """x_k for k in (0, 1, 2) (selects)."""
    r = x2
    r = x1 if k == 1 else r
    r = x0 if k == 0 else r
    return r


@njit(error_model="numpy", inline="always")
def _finish_lanes(work) -> None:
    """mat3.svd3_rv_finish in every lane, branch-free (same arithmetic); a lane that needs its special cases
    (F = 0, or no direction for u_1) gets scale -1 and is left to _special_lane."""
    n = LANES
    for l in range(LANES):
        scale = work[_SCALE_ROW * n + l]
        b00, b10, b20 = work[_B_ROW * n + l], work[(_B_ROW + 1) * n + l], work[(_B_ROW + 2) * n + l]
        b01, b11, b21 = work[(_B_ROW + 3) * n + l], work[(_B_ROW + 4) * n + l], work[(_B_ROW + 5) * n + l]
        b02, b12, b22 = work[(_B_ROW + 6) * n + l], work[(_B_ROW + 7) * n + l], work[(_B_ROW + 8) * n + l]
        n20 = b00 * b00 + b10 * b10 + b20 * b20
        n21 = b01 * b01 + b11 * b11 + b21 * b21
        n22 = b02 * b02 + b12 * b12 + b22 * b22
        # order columns by norm, descending: svd3_rv_finish's sorting network with selects
        c1 = n21 > n20
        a0 = 1 if c1 else 0
        a1 = 0 if c1 else 1
        m0 = n21 if c1 else n20
        m1 = n20 if c1 else n21
        c2 = n22 > m1
        j1 = 2 if c2 else a1
        i2 = a1 if c2 else 2
        q1 = n22 if c2 else m1
        c3 = c2 & (q1 > m0)
        i0 = j1 if c3 else a0
        i1 = a0 if c3 else j1
        n20 = q1 if c3 else m0
        n21 = m0 if c3 else q1
        va0, va1, va2 = work[_VACC_ROW * n + l], work[(_VACC_ROW + 1) * n + l], work[(_VACC_ROW + 2) * n + l]
        vb0, vb1, vb2 = work[(_VACC_ROW + 3) * n + l], work[(_VACC_ROW + 4) * n + l], work[(_VACC_ROW + 5) * n + l]
        vc0, vc1, vc2 = work[(_VACC_ROW + 6) * n + l], work[(_VACC_ROW + 7) * n + l], work[(_VACC_ROW + 8) * n + l]
        v00, v10, v20 = _pick(i0, va0, vb0, vc0), _pick(i0, va1, vb1, vc1), _pick(i0, va2, vb2, vc2)
        v01, v11, v21 = _pick(i1, va0, vb0, vc0), _pick(i1, va1, vb1, vc1), _pick(i1, va2, vb2, vc2)
        v02, v12, v22 = _pick(i2, va0, vb0, vc0), _pick(i2, va1, vb1, vc1), _pick(i2, va2, vb2, vc2)
        det = (v00 * (v11 * v22 - v12 * v21)
               - v01 * (v10 * v22 - v12 * v20)
               + v02 * (v10 * v21 - v11 * v20))  # mat3.det3
        neg = det < 0.0
        flip = -1.0 if neg else 1.0
        work[V_ROW * n + l], work[(V_ROW + 3) * n + l], work[(V_ROW + 6) * n + l] = v00, v10, v20
        work[(V_ROW + 1) * n + l], work[(V_ROW + 4) * n + l], work[(V_ROW + 7) * n + l] = v01, v11, v21
        work[(V_ROW + 2) * n + l] = -v02 if neg else v02
        work[(V_ROW + 5) * n + l] = -v12 if neg else v12
        work[(V_ROW + 8) * n + l] = -v22 if neg else v22
        s0 = math.sqrt(n20)
        u00 = _pick(i0, b00, b01, b02) / s0
        u10 = _pick(i0, b10, b11, b12) / s0
        u20 = _pick(i0, b20, b21, b22) / s0
        e0, e1, e2 = _pick(i1, b00, b01, b02), _pick(i1, b10, b11, b12), _pick(i1, b20, b21, b22)
        d = u00 * e0 + u10 * e1 + u20 * e2
        w0 = e0 - d * u00
        w1 = e1 - d * u10
        w2 = e2 - d * u20
        nw = math.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
        regular = (s0 != 0.0) & (nw > 0.0) & (nw > 1e-300 * s0)
        work[_SCALE_ROW * n + l] = scale if regular else -1.0
        u01, u11, u21 = w0 / nw, w1 / nw, w2 / nw
        u02 = u10 * u21 - u20 * u11
        u12 = u20 * u01 - u00 * u21
        u22 = u00 * u11 - u10 * u01
        work[U_ROW * n + l], work[(U_ROW + 3) * n + l], work[(U_ROW + 6) * n + l] = u00, u10, u20
        work[(U_ROW + 1) * n + l], work[(U_ROW + 4) * n + l], work[(U_ROW + 7) * n + l] = u01, u11, u21
        work[(U_ROW + 2) * n + l], work[(U_ROW + 5) * n + l], work[(U_ROW + 8) * n + l] = u02, u12, u22
        work[SIGMA_ROW * n + l] = scale * s0
        work[(SIGMA_ROW + 1) * n + l] = scale * math.sqrt(n21)
        work[(SIGMA_ROW + 2) * n + l] = scale * flip * (u02 * _pick(i2, b00, b01, b02) + u12 * _pick(i2, b10, b11, b12)
                                                        + u22 * _pick(i2, b20, b21, b22))
