"""The per-tet arithmetic of the shape-targeting passes (``shape_targeting``: local step, residuals, energy and
gradient) for LANES tets at a time, in the lane layout of ``polar_lanes``, bitwise equal per tet to the
tet-by-tet helpers (``tet_blocks.deformation_gradient_into``, ``mul_target_into``,
``target_residual_into``, ``tet_blocks.shape_gradients_into``).

A lane block is LANES consecutive tets e0 .. e0 + n - 1. F and M = F A^T are computed tet by tet as they are
loaded (``load_lanes``: in registers, which measured cheaper than computing them in lanes from gathered edge
vectors); every formula after the polar iteration (the residual, the energy, the vertex gradients) runs with the
lane index innermost and no branches, so that it vectorises. Each lane does the operations of the single-tet
helper in the same order, so the same bits. Padding lanes (l >= n) repeat the block's last tet; their results are
never stored.

Measured on this project's 2-core machine (AVX-512), one thread, the large face's 279,180 tets
(``python benchmarks/bench_polar_lanes.py --model face.npz``, after three jaw frames): the local step 23.3 ->
15.6 ms and the face solver's one-pass energy and gradient 54.1 ms tet by tet -> 20.8 ms (about 29 ms with only
the polar iteration in lanes).

Layout: ``target_workspace()`` extends the ``polar_lanes`` work array; row k of lane l is work[k * LANES + l]:

    M_ROW..   M = F A^T (3, 3) on load; D = F - R A after ``residual_lanes``
    R_ROW..   R, the rotation (the polar iteration's, or the SVD's where it declined: ``fallback_rotations``)
    F_ROW..   F (3, 3)
    A_ROW..   A (3, 3) of the tet;  DM_ROW..  Dm^-1 (3, 3) [1/m]
    C_ROW..   12 rows: the vertex gradients (4, 3) [N] after ``gradient_lanes``
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .polar_lanes import CONVERGED, F_ROW, M_ROW, POLAR_ROWS, R_ROW, STATE_ROW, polar_rotation_into
from .svd_lanes import LANES
from .tet_blocks import deformation_gradient_into

A_ROW = POLAR_ROWS
DM_ROW = A_ROW + 9
C_ROW = DM_ROW + 9
TARGET_ROWS = C_ROW + 12


@njit(cache=True)
def target_workspace() -> np.ndarray:
    """The flat work array of the lane helpers below (TARGET_ROWS * LANES,)."""
    return np.empty(TARGET_ROWS * LANES)


@njit(cache=True, inline="always")
def mul_target_into(f, a, e: int, out) -> None:
    """out (3, 3) = F A_e^T (a (m, 3, 3)): the matrix whose polar rotation minimises ||F - R A_e||."""
    for i in range(3):
        for j in range(3):
            out[i, j] = f[i, 0] * a[e, j, 0] + f[i, 1] * a[e, j, 1] + f[i, 2] * a[e, j, 2]


@njit(cache=True, inline="always")
def _load_lane(x, tets, dm_inv, a, e: int, l: int, f, m, work, targets: bool) -> None:
    """F (``deformation_gradient_into``) and M = F A^T (``mul_target_into``) of tet e into the F and M rows of lane
    l, and with targets A and Dm^-1 into theirs; f, m (3, 3) scratch. F and M are computed tet by tet: in
    registers that is cheaper than in lanes (measured)."""
    deformation_gradient_into(x, tets, dm_inv, e, f)
    mul_target_into(f, a, e, m)
    for i in range(3):
        for j in range(3):
            work[(F_ROW + 3 * i + j) * LANES + l] = f[i, j]
            work[(M_ROW + 3 * i + j) * LANES + l] = m[i, j]
            if targets:
                work[(A_ROW + 3 * i + j) * LANES + l] = a[e, i, j]
                work[(DM_ROW + 3 * i + j) * LANES + l] = dm_inv[e, i, j]


@njit(cache=True, inline="always")
def load_lanes(x, tets, dm_inv, a, e0: int, n: int, f, m, work, targets: bool) -> None:
    """F = Ds Dm^-1 and M = F A^T of the tets e0 .. e0 + n - 1 (n <= LANES) into their rows (what the polar
    iteration needs), with targets also the rows of A and Dm^-1 (what ``residual_lanes`` and ``gradient_lanes``
    read); x (nv, 3) [m], tets (m, 4), dm_inv (m, 3, 3) [1/m], a (m, 3, 3); f, m (3, 3) scratch."""
    last = e0 + n - 1
    for l in range(LANES):
        _load_lane(x, tets, dm_inv, a, e0 + l if l < n else last, l, f, m, work, targets)


@njit(cache=True, inline="always")
def fallback_rotations(work, n: int) -> None:
    """After ``polar_lanes.polar_newton_lanes``: the R rows of every lane l < n whose iteration declined become
    the rotation of M's rotation-variant SVD (``polar_rotation_into``). Its scratch is allocated only in a block
    that has such a lane (inverted, flat or very ill-conditioned tets: rare)."""
    for l in range(n):
        if work[STATE_ROW * LANES + l] != CONVERGED:
            _svd_rotations(work, l, n)
            return


@njit(cache=True)
def _svd_rotations(work, first: int, n: int) -> None:
    """``fallback_rotations`` from lane first on."""
    m, u, v, b, r = np.empty((3, 3)), np.empty((3, 3)), np.empty((3, 3)), np.empty((3, 3)), np.empty((3, 3))
    sigma = np.empty(3)
    for l in range(first, n):
        if work[STATE_ROW * LANES + l] == CONVERGED:
            continue
        for i in range(3):
            for j in range(3):
                m[i, j] = work[(M_ROW + 3 * i + j) * LANES + l]
        polar_rotation_into(m, u, sigma, v, b, r)
        for i in range(3):
            for j in range(3):
                work[(R_ROW + 3 * i + j) * LANES + l] = r[i, j]


@njit(cache=True, inline="always")
def residual_lanes(work, acc) -> None:
    """D = F - R A (3, 3) into the M rows and acc (LANES,) = ||D||_F^2 per lane (``target_residual_into``)."""
    for l in range(LANES):
        acc[l] = 0.0
    for i in range(3):
        r = (R_ROW + 3 * i) * LANES
        for j in range(3):
            fij, dij, a0 = (F_ROW + 3 * i + j) * LANES, (M_ROW + 3 * i + j) * LANES, (A_ROW + j) * LANES
            for l in range(LANES):
                d = work[fij + l] - (work[r + l] * work[a0 + l] + work[r + LANES + l] * work[a0 + 3 * LANES + l]
                                     + work[r + 2 * LANES + l] * work[a0 + 6 * LANES + l])
                work[dij + l] = d
                acc[l] += d * d


@njit(cache=True, inline="always")
def gradient_lanes(work, w, e0: int, n: int) -> None:
    """The vertex gradients 2 w_e D g_q (4, 3) [N] of every lane into the C rows (row C_ROW + 3 q + i), after
    ``residual_lanes``; w (m,) [J], g_q the shape gradients (``shape_gradients_into``)."""
    dm = DM_ROW * LANES
    last = e0 + n - 1
    for i in range(3):
        d = (M_ROW + 3 * i) * LANES
        for l in range(LANES):
            c = 2.0 * w[min(e0 + l, last)]
            d0, d1, d2 = work[d + l], work[d + LANES + l], work[d + 2 * LANES + l]
            g0 = -(work[dm + l] + work[dm + 3 * LANES + l] + work[dm + 6 * LANES + l])
            g1 = -(work[dm + LANES + l] + work[dm + 4 * LANES + l] + work[dm + 7 * LANES + l])
            g2 = -(work[dm + 2 * LANES + l] + work[dm + 5 * LANES + l] + work[dm + 8 * LANES + l])
            work[(C_ROW + i) * LANES + l] = c * (d0 * g0 + d1 * g1 + d2 * g2)
            for q in range(1, 4):
                g = dm + 3 * (q - 1) * LANES
                work[(C_ROW + 3 * q + i) * LANES + l] = c * (d0 * work[g + l] + d1 * work[g + LANES + l]
                                                             + d2 * work[g + 2 * LANES + l])


@njit(cache=True, inline="always")
def store_gradient_lanes(work, e0: int, n: int, out) -> None:
    """out[e0 + l, 3 q + i] = the C rows' vertex gradient term of lane l < n (out (m, 12) [N]): the values
    ``scatter_lanes`` adds, kept per tet for a vertex-ordered gather."""
    for l in range(n):
        for k in range(12):
            out[e0 + l, k] = work[(C_ROW + k) * LANES + l]


@njit(cache=True, inline="always")
def scatter_lanes(work, tets, e0: int, n: int, g_out) -> None:
    """g_out (nv, 3) [N] += the C rows' vertex gradients of the lanes l < n, tet by tet in order (deterministic:
    the order of a tet-by-tet loop)."""
    for l in range(n):
        for q in range(4):
            vq = tets[e0 + l, q]
            for i in range(3):
                g_out[vq, i] += work[(C_ROW + 3 * q + i) * LANES + l]
