"""The scaled Newton polar iteration of ``shape_targeting.polar_newton_into`` for LANES 3x3 matrices at once,
bitwise equal per matrix.

The iteration X <- (zeta X + X^-T / zeta) / 2 is a chain of dependent divisions and square roots (a cofactor
matrix, its determinant, zeta = (|X^-1| / |X|)^(1/2) from two square roots, 3-6 iterations a matrix): one matrix at
a time it is latency bound. ``polar_newton_lanes`` runs LANES matrices in lockstep with the lane index innermost
and no branches in the lane loop, so that it vectorises (one SIMD chain serves LANES matrices). Lockstep does not
change any lane's result:

* every lane computes the same operations in the same order as ``polar_newton_into`` (cofactors, determinant,
  the Frobenius sums, zeta, the update, the squared step), with selects for its branches (zeta = 1 once the
  step is small, the failure test of the first iteration);
* a lane that has converged or failed keeps its matrix (a select) while the other lanes iterate; the loop stops
  when no lane is left iterating or after ``NEWTON_MAX_STEPS``, as the single-matrix iteration does.

Measured on this project's 2-core machine (AVX-512 vectors), one thread: the iteration alone on 279,180 random
near-identity matrices 52.7 -> 11.5 ms (4.6x); the large face's whole local step after three frames of its
sequence (279,180 tets, mostly 4 iterations each; F, F A^T and the stores included) 47.4 -> 23.3 ms (2.0x,
``benchmarks/bench_polar_lanes.py``); 15.6 ms (3.0x) with the loads and stores of ``target_lanes``.

Layout: one flat float64 array ``work`` of POLAR_ROWS * LANES entries; "row" k of lane l is work[k * LANES + l].
Input M[i, j] in row M_ROW + 3 i + j; output R[i, j] in row R_ROW + 3 i + j (the polar rotation where
``STATE_ROW`` holds ``CONVERGED``) and the lane's state in STATE_ROW: ``CONVERGED``, or anything else where
``polar_newton_into`` returns False (the caller then takes the SVD, as ``best_rotation_into`` does). Pad unused
lanes with any finite matrix (the identity converges at once).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .mat3 import svd3_rv_into
from .svd_lanes import LANES

#: The iteration's constants, shared with the single-matrix ``shape_targeting.polar_newton_into``.
NEWTON_MIN_DET = 1e-6
NEWTON_MAX_STEPS = 30

M_ROW = 0
R_ROW = 9
F_ROW = 18          # a caller's row block for F (the residual needs it after the iteration), untouched here
STATE_ROW = 27      # _ITERATING, CONVERGED or _FAILED
_SCALED_ROW = 28    # 1.0 while zeta is computed, 0.0 once a step fell below 1e-2
POLAR_ROWS = 29

_FAILED = 0.0
_ITERATING = 1.0
CONVERGED = 2.0


@njit(cache=True, inline="always")
def polar_rotation_into(m, u, sigma, v, b, r) -> None:
    """r (3, 3) = U V^T: the rotation (det +1) of the polar decomposition of m (3, 3), i.e. argmax over SO(3)
    of tr(R^T m); for det m < 0 it is the rotation that leaves the reflection in the stretch (signed sigma_2).
    u, v, b (3, 3) and sigma (3,) are scratch."""
    svd3_rv_into(m, u, sigma, v, b)
    for i in range(3):
        for j in range(3):
            r[i, j] = u[i, 0] * v[j, 0] + u[i, 1] * v[j, 1] + u[i, 2] * v[j, 2]


@njit(cache=True)
def polar_workspace() -> np.ndarray:
    """The flat work array of polar_newton_lanes (POLAR_ROWS * LANES,)."""
    return np.empty(POLAR_ROWS * LANES)


@njit(cache=True, error_model="numpy")  # IEEE division (inf/nan in finished lanes, discarded): no branches
def polar_newton_lanes(work: np.ndarray) -> None:
    """``polar_newton_into`` of the M in rows M_ROW.. of every lane: R in rows R_ROW.., the outcome in STATE_ROW
    (``CONVERGED`` where polar_newton_into returns True). See the module doc."""
    for l in range(LANES):
        scale = 0.0
        for k in range(9):
            scale = max(scale, abs(work[(M_ROW + k) * LANES + l]))
        usable = scale > 0.0 and math.isfinite(scale)
        for k in range(9):
            work[(R_ROW + k) * LANES + l] = work[(M_ROW + k) * LANES + l] / scale if usable else 1.0
        work[STATE_ROW * LANES + l] = _ITERATING if usable else _FAILED
        work[_SCALED_ROW * LANES + l] = 1.0
    for it in range(NEWTON_MAX_STEPS):
        if not _newton_step_lanes(work, it == 0):
            break


@njit(error_model="numpy", inline="always")
def _newton_step_lanes(work: np.ndarray, first: bool) -> bool:
    """One step of the scaled Newton iteration in every lane still iterating (the others keep their values);
    returns whether a lane is still iterating. first: the first step (its determinant decides the failure)."""
    iterating = False
    r = R_ROW * LANES
    for l in range(LANES):
        r0, r1, r2 = work[r + l], work[r + LANES + l], work[r + 2 * LANES + l]
        r3, r4, r5 = work[r + 3 * LANES + l], work[r + 4 * LANES + l], work[r + 5 * LANES + l]
        r6, r7, r8 = work[r + 6 * LANES + l], work[r + 7 * LANES + l], work[r + 8 * LANES + l]
        c0, c1, c2 = r4 * r8 - r5 * r7, r5 * r6 - r3 * r8, r3 * r7 - r4 * r6  # kinematics.cofactor_into
        c3, c4, c5 = r2 * r7 - r1 * r8, r0 * r8 - r2 * r6, r1 * r6 - r0 * r7
        c6, c7, c8 = r1 * r5 - r2 * r4, r2 * r3 - r0 * r5, r0 * r4 - r1 * r3
        det = r0 * c0 + r1 * c1 + r2 * c2
        state = work[STATE_ROW * LANES + l]
        state = _FAILED if (first & (not det > NEWTON_MIN_DET)) else state
        scaled = work[_SCALED_ROW * LANES + l] == 1.0
        nx = r0 * r0 + r1 * r1 + r2 * r2 + r3 * r3 + r4 * r4 + r5 * r5 + r6 * r6 + r7 * r7 + r8 * r8
        nc = c0 * c0 + c1 * c1 + c2 * c2 + c3 * c3 + c4 * c4 + c5 * c5 + c6 * c6 + c7 * c7 + c8 * c8
        zeta_scaled = math.sqrt(math.sqrt(nc / nx) / det)
        zeta = zeta_scaled if scaled else 1.0
        inv = 1.0 / (zeta * det)
        n0, n1, n2 = 0.5 * (zeta * r0 + c0 * inv), 0.5 * (zeta * r1 + c1 * inv), 0.5 * (zeta * r2 + c2 * inv)
        n3, n4, n5 = 0.5 * (zeta * r3 + c3 * inv), 0.5 * (zeta * r4 + c4 * inv), 0.5 * (zeta * r5 + c5 * inv)
        n6, n7, n8 = 0.5 * (zeta * r6 + c6 * inv), 0.5 * (zeta * r7 + c7 * inv), 0.5 * (zeta * r8 + c8 * inv)
        d0, d1, d2, d3, d4 = n0 - r0, n1 - r1, n2 - r2, n3 - r3, n4 - r4
        d5, d6, d7, d8 = n5 - r5, n6 - r6, n7 - r7, n8 - r8
        step2 = d0 * d0 + d1 * d1 + d2 * d2 + d3 * d3 + d4 * d4 + d5 * d5 + d6 * d6 + d7 * d7 + d8 * d8
        moving = state == _ITERATING
        work[r + l] = n0 if moving else r0
        work[r + LANES + l] = n1 if moving else r1
        work[r + 2 * LANES + l] = n2 if moving else r2
        work[r + 3 * LANES + l] = n3 if moving else r3
        work[r + 4 * LANES + l] = n4 if moving else r4
        work[r + 5 * LANES + l] = n5 if moving else r5
        work[r + 6 * LANES + l] = n6 if moving else r6
        work[r + 7 * LANES + l] = n7 if moving else r7
        work[r + 8 * LANES + l] = n8 if moving else r8
        work[_SCALED_ROW * LANES + l] = 0.0 if (moving & (step2 < 1e-4)) else work[_SCALED_ROW * LANES + l]
        state = CONVERGED if (moving & (step2 <= 1e-18)) else state
        work[STATE_ROW * LANES + l] = state
        iterating = iterating | (state == _ITERATING)
    return iterating
