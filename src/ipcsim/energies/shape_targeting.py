"""Shape-targeting actuation (000 Eq. 1-2; Klar et al. 2020): per tet i, with a target A_i (3, 3) (symmetric in
000; any A works here),

    E_i(x) = w_i min_{R in SO(3)} ||F_i(x) - R A_i||_F^2,        w_i = stiffness_i V_i   [J]

and E(x) = sum_i E_i(x). Projective Dynamics splits it in two steps:

* local step (``local_step``): with M_i = F_i A_i^T = U diag(sigma) V^T its rotation-variant SVD (det U = det V
  = +1, ``mat3.svd3_rv``), the minimising rotation is R_i = U V^T (the rotation of the polar decomposition of
  F_i A_i^T = F_i A_i for 000's symmetric targets; always a rotation, also for det M_i <= 0, where it maximises
  tr(R^T M) = sigma_0 + sigma_1 + sigma_2 with the signed sigma_2), and the minimum is ||F||^2 + ||A||^2 -
  2 (sigma_0 + sigma_1 + sigma_2); computed, where det M_i is safely positive (every tet of a face
  that is not inverted against its target), by the scaled Newton iteration X <- (zeta X + X^-T / zeta) / 2
  from X = M_i (Higham 1986; ``polar_newton_into``: 3-6 iterations of a 3x3 cofactor matrix, about a third of
  the time of the Jacobi SVD), run until its step is below 1e-9 (the iteration converges quadratically, so the
  result is the polar factor to round-off: within 1e-14 of U V^T), else (det M_i <= 1e-6 max|M_ij|^3, or
  no convergence) by the SVD; the loops over tets run the iteration for ``svd_lanes.LANES`` tets at a time in
  lockstep (``polar_lanes``: vectorised, bitwise equal to ``polar_newton_into`` per tet), and the residuals and
  gradient terms after it likewise (``target_lanes``);
* global step: with R_i frozen, E_R(x) = sum_i w_i ||F_i(x) - R_i A_i||^2 is quadratic in x. With the shape
  gradients g_a (4, 3) [1/m] of the tet (F = sum_a x_a g_a^T, ``tet_blocks.shape_gradients_into``),
  ||F - P||^2 = sum_r ||sum_a x_a[r] g_a - P[r, :]||^2 splits into three identical scalar problems, one per
  coordinate r, so its Hessian is K (x) I_3 with the n x n scalar matrix

      K_ab = 2 sum_i w_i g_a . g_b          (a Laplacian with the tets' cotangent-like weights)  [Pa m = N/m]

  (000 Eq. 2's H = sum w_i G_i^T G_i is K (x) I_3 / 2; the factor 2 makes K the exact Hessian of E_R). The
  global step factors the n x n K once and solves with three right-hand-side columns: a third of the size and
  about 1/27 of the factorisation work of the 3n x 3n matrix. Its gradient is

      grad_a E_R = 2 sum_i w_i (F_i - R_i A_i) g_a          (n, 3) [N]

  and, by the envelope theorem (dE_i/dF = 2 (F - R* A) at the minimising R*), the gradient of the true energy E
  is the same expression with R = ``local_step(x)``.

The true energy's Hessian (for Newton references and tests) follows from E_i(F) = w (||F||^2 + ||A||^2 -
2 I1(F A^T)) with I1(M) = sigma_0 + sigma_1 + sigma_2 (``kinematics.i1_hessian``): d^2E_i/dF^2 = 2 w (I_9 -
(A^T (x) I) d^2I1/dM^2 (A (x) I)) in column-major vec (vec(F A^T) = (A (x) I) vec(F), vec(R A) = (A^T (x) I)
vec(R)). It is not PSD in general (the rotation term); PD never needs it.

Arrays: x, rest (n, 3) [m]; tets (m, 4) int64; dm_inv (m, 3, 3) [1/m] (``rest_shape``); w (m,) [J] per unit
||.||^2 (= stiffness [Pa] times rest volume [m^3]); A, R (m, 3, 3) [1].
"""
from __future__ import annotations

import math

import numba as nb
import numpy as np
import scipy.sparse as sp
from numba import njit, prange

from ..runtime.threads import cpu_cores, numba_threads
from ..runtime.jit import twin
from ..runtime.scratch import scratch_array
from .kinematics import cofactor_into, dfdx, i1_hessian
from .mat3 import svd3_rv_into
from .polar_lanes import M_ROW, NEWTON_MAX_STEPS, NEWTON_MIN_DET, R_ROW, polar_newton_lanes, polar_rotation_into
from .svd_lanes import LANES
from .target_lanes import (fallback_rotations, gradient_lanes, load_lanes, mul_target_into,
                           residual_lanes, scatter_lanes, store_gradient_lanes, target_workspace)
from .tet_blocks import deformation_gradient_into, shape_gradients_into


# ------------------------------------------------------------------------------------------ rest shape
def rest_shape(rest: np.ndarray, tets: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(dm_inv (m, 3, 3) [1/m], volume (m,) [m^3], shape gradients (m, 4, 3) [1/m]) of positively oriented tets;
    ValueError naming the first degenerate or inverted tet."""
    v = np.asarray(rest, np.float64)
    t = np.asarray(tets, np.int64)
    dm = (v[t[:, 1:]] - v[t[:, :1]]).transpose(0, 2, 1)  # (m, 3, 3), columns x_a - x_0
    det = np.linalg.det(dm)
    scale = np.max(np.linalg.norm(dm, axis=1), axis=1) ** 3
    bad = np.flatnonzero(~(det > 1e-12 * scale))
    if bad.size:
        raise ValueError(f"shape targeting: rest tet {bad[0]} is degenerate or inverted (det Dm = {det[bad[0]]:.3g})")
    dm_inv = np.ascontiguousarray(np.linalg.inv(dm))
    grads = np.empty((len(t), 4, 3))
    grads[:, 1:] = dm_inv
    grads[:, 0] = -dm_inv.sum(axis=1)
    return dm_inv, det / 6.0, grads


def scalar_hessian(n: int, tets: np.ndarray, grads: np.ndarray, w: np.ndarray) -> sp.csr_matrix:
    """K (n, n) CSR [N/m]: the scalar factor of the global-step Hessian K (x) I_3 (module doc), SPD once enough
    vertices are fixed. grads (m, 4, 3) [1/m] from ``rest_shape``; w (m,) [J]."""
    t = np.asarray(tets, np.int64)
    blocks = 2.0 * w[:, None, None] * np.einsum("mak,mbk->mab", grads, grads)  # (m, 4, 4)
    rows = np.repeat(t, 4, axis=1).ravel()
    cols = np.tile(t, (1, 4)).ravel()
    k = sp.csr_matrix((blocks.ravel(), (rows, cols)), shape=(n, n))
    k = (0.5 * (k + k.T)).tocsr()  # exactly symmetric (the duplicate sums differ in round-off)
    k.sum_duplicates()
    k.sort_indices()
    return k


# ------------------------------------------------------------------------------------------ per tet
# Newton polar iteration (``polar_newton_into``, and ``polar_lanes`` for many at once): the SVD takes over below
# NEWTON_MIN_DET = det(M / max|M_ij|) (condition number beyond ~1e6 / inverted or flat tets: the rotation-variant
# SVD handles them) or after NEWTON_MAX_STEPS steps; both constants are defined in ``polar_lanes``.


@njit(cache=True, inline="always")
def polar_newton_into(m, r, c) -> bool:
    """r (3, 3) := the rotation of the polar decomposition of m (3, 3) by the scaled Newton iteration
    X <- (zeta X + X^-T / zeta) / 2 from X = m / max|m_ij| (Frobenius scaling zeta = (|X^-1| / |X|)^(1/2) while
    the step is above 1e-2, then zeta = 1 for the quadratic end), stopped once the step |X_new - X|_F is below
    1e-9 (the next error is then ~1e-18: the polar factor to round-off). Returns False (r undefined) when
    det(m / max|m_ij|) <= ``NEWTON_MIN_DET`` (inverted, flat or very ill-conditioned: take the SVD) or after
    ``NEWTON_MAX_STEPS``. c (3, 3) is scratch."""
    scale = 0.0
    for i in range(3):
        for j in range(3):
            scale = max(scale, abs(m[i, j]))
    if not (scale > 0.0 and math.isfinite(scale)):
        return False
    for i in range(3):
        for j in range(3):
            r[i, j] = m[i, j] / scale
    scaled = True
    for it in range(NEWTON_MAX_STEPS):
        det = cofactor_into(r, c)
        if it == 0 and not det > NEWTON_MIN_DET:
            return False
        zeta = 1.0
        if scaled:
            nx, nc = 0.0, 0.0
            for i in range(3):
                for j in range(3):
                    nx += r[i, j] * r[i, j]
                    nc += c[i, j] * c[i, j]
            zeta = math.sqrt(math.sqrt(nc / nx) / det)
        inv = 1.0 / (zeta * det)
        step2 = 0.0
        for i in range(3):
            for j in range(3):
                new = 0.5 * (zeta * r[i, j] + c[i, j] * inv)
                d = new - r[i, j]
                step2 += d * d
                r[i, j] = new
        if step2 < 1e-4:
            scaled = False
        if step2 <= 1e-18:
            return True
    return False


@njit(cache=True, inline="always")
def best_rotation_into(m, r, u, sigma, v, b) -> None:
    """r (3, 3) := argmax over SO(3) of tr(R^T m): ``polar_newton_into`` where it applies, else
    ``polar_rotation_into`` (the rotation-variant SVD). u, v, b (3, 3) and sigma (3,) are scratch."""
    if not polar_newton_into(m, r, b):
        polar_rotation_into(m, u, sigma, v, b, r)


@njit(cache=True, inline="always")
def target_residual_into(f, r, a, e: int, out) -> float:
    """out (3, 3) = F - R_e A_e of tet e (r, a (m, 3, 3); indexed, no per-tet views); returns ||F - R A||_F^2."""
    acc = 0.0
    for i in range(3):
        for j in range(3):
            d = f[i, j] - (r[e, i, 0] * a[e, 0, j] + r[e, i, 1] * a[e, 1, j] + r[e, i, 2] * a[e, 2, j])
            out[i, j] = d
            acc += d * d
    return acc


# ------------------------------------------------------------------------------------------ loops over tets
#: Meshes with fewer tets run the local step and residuals on one thread on machines with fewer than 4 cores (a
#: tenth of it on larger ones): on the shared 2-core machine a parallel region waits for the second core whenever
#: another process holds it (576 tets: 13-15 ms a call on 2 threads under load, ~0.1 ms on one), as
#: ``solvers.elastic.SERIAL_BELOW_TETS`` measured for the elastic kernels.
SERIAL_BELOW_TETS = 5_000


def _threads(n_tets: int) -> int:
    below = SERIAL_BELOW_TETS if cpu_cores() < 4 else SERIAL_BELOW_TETS // 10
    return 1 if n_tets < below else nb.get_num_threads()


#: Tets per chunk of the parallel loops (scratch allocated once per chunk; fixed, so results do not depend on
#: the number of threads).
_CHUNK = 256


@njit(cache=True, inline="always")
def _lane_block(x, tets, dm_inv, a, e0, hi, f, m, work, targets: bool) -> int:
    """The tets e0 .. min(e0 + LANES, hi) - 1 loaded into the lanes (``target_lanes.load_lanes``, with targets
    the rows of A and Dm^-1 too) and their local-step rotations in the R rows: the polar iteration, the SVD where
    it declined (``best_rotation_into``, the same bits). Returns their number; f, m (3, 3) scratch."""
    n = min(LANES, hi - e0)
    load_lanes(x, tets, dm_inv, a, e0, n, f, m, work, targets)
    polar_newton_lanes(work)
    fallback_rotations(work, n)
    return n


@njit(cache=True, inline="always")
def _residual_block(x, tets, dm_inv, a, w, e0, hi, f, m, work, acc, e_out) -> int:
    """``_lane_block`` with the A and Dm^-1 rows, then the residuals D = F - R A in the M rows
    (``target_lanes.residual_lanes``) and e_out[e] = w ||D||^2 [J] of its tets; returns their number."""
    n = _lane_block(x, tets, dm_inv, a, e0, hi, f, m, work, True)
    residual_lanes(work, acc)
    for l in range(n):
        e_out[e0 + l] = w[e0 + l] * acc[l]
    return n


@njit(cache=True, inline="always")
def _store_rows(work, row: int, e0: int, n: int, out) -> None:
    """out[e0 + l] (3, 3) = the lane rows row .. row + 8 of lane l, for l < n."""
    for l in range(n):
        for i in range(3):
            for j in range(3):
                out[e0 + l, i, j] = work[(row + 3 * i + j) * LANES + l]


@twin
def _local_step_kernel(x, tets, dm_inv, a, r_out):
    n_chunks = (tets.shape[0] + _CHUNK - 1) // _CHUNK
    for ch in prange(n_chunks):
        f, m, work = np.empty((3, 3)), np.empty((3, 3)), target_workspace()
        hi = min((ch + 1) * _CHUNK, tets.shape[0])
        for e0 in range(ch * _CHUNK, hi, LANES):
            n = _lane_block(x, tets, dm_inv, a, e0, hi, f, m, work, False)
            _store_rows(work, R_ROW, e0, n, r_out)


@twin
def _residual_kernel(x, tets, dm_inv, a, rot, w, res_out, e_out):
    """res_out[e] = F - R A (3, 3), e_out[e] = w ||F - R A||^2 [J]."""
    n_chunks = (tets.shape[0] + _CHUNK - 1) // _CHUNK
    for ch in prange(n_chunks):
        f, d = np.empty((3, 3)), np.empty((3, 3))
        for e in range(ch * _CHUNK, min((ch + 1) * _CHUNK, tets.shape[0])):
            deformation_gradient_into(x, tets, dm_inv, e, f)
            e_out[e] = w[e] * target_residual_into(f, rot, a, e, d)
            for i in range(3):
                for j in range(3):
                    res_out[e, i, j] = d[i, j]


@njit(cache=True)
def _residual_chunk(x, tets, dm_inv, a, w, ch, e_out, rot_out, res_out, terms_out) -> None:
    """Chunk ch (_CHUNK tets) of the parallel passes below: e_out[e] = w ||F - R A||^2 [J] (R as ``local_step``)
    and, unless empty, rot_out[e] = R and res_out[e] = F - R A (3, 3), or terms_out[e] (12,) [N] the gradient
    terms 2 w (F - R A) g_q of ``_energy_gradient_fused``."""
    f, m, acc, work = np.empty((3, 3)), np.empty((3, 3)), np.empty(LANES), target_workspace()
    hi = min((ch + 1) * _CHUNK, tets.shape[0])
    for e0 in range(ch * _CHUNK, hi, LANES):
        n = _residual_block(x, tets, dm_inv, a, w, e0, hi, f, m, work, acc, e_out)
        if rot_out.shape[0]:
            _store_rows(work, R_ROW, e0, n, rot_out)
            _store_rows(work, M_ROW, e0, n, res_out)
        if terms_out.shape[0]:
            gradient_lanes(work, w, e0, n)
            store_gradient_lanes(work, e0, n, terms_out)


@twin
def _local_residual_kernel(x, tets, dm_inv, a, w, rot_out, res_out, e_out):
    """The local step and the residuals in one pass (F computed once per tet): rot_out[e] = R (3, 3) of
    ``local_step``, res_out[e] = F - R A (3, 3), e_out[e] = w ||F - R A||^2 [J]."""
    no_terms = np.empty((0, 12))
    for ch in prange((tets.shape[0] + _CHUNK - 1) // _CHUNK):
        _residual_chunk(x, tets, dm_inv, a, w, ch, e_out, rot_out, res_out, no_terms)


@njit(cache=True)
def _scatter_gradient(tets, dm_inv, w, res, n):
    """(n, 3): sum over tets of 2 w (F - R A) g_a into vertex a, in tet order (deterministic)."""
    out = np.zeros((n, 3))
    g = np.empty((4, 3))
    for e in range(tets.shape[0]):
        shape_gradients_into(dm_inv, e, g)
        c = 2.0 * w[e]
        for q in range(4):
            vq = tets[e, q]
            for i in range(3):
                out[vq, i] += c * (res[e, i, 0] * g[q, 0] + res[e, i, 1] * g[q, 1] + res[e, i, 2] * g[q, 2])
    return out


@njit(cache=True)
def _true_hessian_blocks(x, tets, dm_inv, a, w):
    """(m, 12, 12) [N/m]: the true energy's per-tet Hessians (module doc), unprojected."""
    m_t = tets.shape[0]
    out = np.empty((m_t, 12, 12))
    f, mm = np.empty((3, 3)), np.empty((3, 3))
    u, v, b = np.empty((3, 3)), np.empty((3, 3)), np.empty((3, 3))
    sigma = np.empty(3)
    ka = np.zeros((9, 9))
    for e in range(m_t):
        deformation_gradient_into(x, tets, dm_inv, e, f)
        mul_target_into(f, a, e, mm)
        svd3_rv_into(mm, u, sigma, v, b)
        h1 = i1_hessian(u, sigma, v)
        for j in range(3):  # ka = A (x) I: ka[3j + i, 3l + i] = A[j, l]
            for l in range(3):
                for i in range(3):
                    ka[3 * j + i, 3 * l + i] = a[e, j, l]
        hf = -2.0 * (ka.T @ h1 @ ka)  # (A^T (x) I) H_I1 (A (x) I)
        for i in range(9):
            hf[i, i] += 2.0
        d = dfdx(dm_inv[e])
        out[e] = w[e] * (d.T @ hf @ d)
    return out


@njit(cache=True)
def _energy_gradient_fused(x, tets, dm_inv, a, w, e_out, g_out):
    """One serial pass over the tets: e_out[e] = w ||F - R A||^2 [J] and g_out (n, 3) [N] += 2 w (F - R A) g_a
    (zeroed first), R as ``local_step``, the residuals never stored. The same arithmetic in the same tet order as
    ``_local_residual_kernel`` then ``_scatter_gradient``, so the same bits (the one-thread path)."""
    f, m, acc, work = np.empty((3, 3)), np.empty((3, 3)), np.empty(LANES), target_workspace()
    g_out[:] = 0.0
    for e0 in range(0, tets.shape[0], LANES):
        n = _residual_block(x, tets, dm_inv, a, w, e0, tets.shape[0], f, m, work, acc, e_out)
        gradient_lanes(work, w, e0, n)
        scatter_lanes(work, tets, e0, n, g_out)


@twin
def _energy_gradient_terms(x, tets, dm_inv, a, w, e_out, terms_out):
    """e_out[e] = w ||F - R A||^2 [J] and terms_out[e, 3 q + i] = (2 w (F - R A) g_q)[i] [N] (R as
    ``local_step``), chunks of tets in parallel: the per-tet arithmetic of ``_energy_gradient_fused``."""
    no_rot = np.empty((0, 3, 3))
    for ch in prange((tets.shape[0] + _CHUNK - 1) // _CHUNK):
        _residual_chunk(x, tets, dm_inv, a, w, ch, e_out, no_rot, no_rot, terms_out)


@twin
def _gather_gradient(ptr, slots, terms, g_out):
    """g_out[v] (n, 3) [N] = the sum, from 0 in ascending tet order, of the terms (m, 12) of vertex v's slots
    4 e + q (``vertex_incidence``): the bits of adding them tet by tet into zeros, vertices in parallel."""
    flat = terms.reshape(-1)
    for v in prange(len(ptr) - 1):
        s0, s1, s2 = 0.0, 0.0, 0.0
        for k in range(ptr[v], ptr[v + 1]):
            j = 3 * slots[k]
            s0 += flat[j]
            s1 += flat[j + 1]
            s2 += flat[j + 2]
        g_out[v, 0] = s0
        g_out[v, 1] = s1
        g_out[v, 2] = s2


@njit(cache=True)
def _vertex_incidence(tets, n):
    ptr = np.zeros(n + 1, np.int64)
    for e in range(tets.shape[0]):
        for q in range(4):
            ptr[tets[e, q] + 1] += 1
    for v in range(n):
        ptr[v + 1] += ptr[v]
    fill = ptr[:-1].copy()
    slots = np.empty(4 * tets.shape[0], np.int64)
    for e in range(tets.shape[0]):
        for q in range(4):
            v = tets[e, q]
            slots[fill[v]] = 4 * e + q
            fill[v] += 1
    return ptr, slots


# ------------------------------------------------------------------------------------------ public API
def _arrays(x, tets, dm_inv, a):
    return (np.ascontiguousarray(x, np.float64), np.ascontiguousarray(tets, np.int64),
            np.ascontiguousarray(dm_inv, np.float64), np.ascontiguousarray(a, np.float64))


def vertex_incidence(tets, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(ptr (n + 1,), slots (4 m,)) int64: vertex v's corners of the tets (m, 4) are slots[ptr[v]:ptr[v + 1]],
    each 4 e + q (tet e, corner q), in ascending e. For ``energy_gradient(..., incidence=...)``: compute it once
    per mesh."""
    return _vertex_incidence(np.ascontiguousarray(tets, np.int64), int(n))


def local_step(x, tets, dm_inv, a) -> np.ndarray:
    """R (m, 3, 3) [1]: the PD projections, per tet the rotation of the polar decomposition of F_i A_i^T (det +1;
    = F_i A_i for symmetric targets), in parallel over tets. x (n, 3) [m]; a (m, 3, 3) targets."""
    x, tets, dm_inv, a = _arrays(x, tets, dm_inv, a)
    r = np.empty((len(tets), 3, 3))
    with numba_threads(_threads(len(tets))):
        _local_step_kernel(x, tets, dm_inv, a, r)
    return r


def residuals(x, tets, dm_inv, a, w, rot) -> tuple[np.ndarray, np.ndarray]:
    """(F - R A (m, 3, 3) [1], per-tet energies w ||F - R A||^2 (m,) [J]) for rotations rot (m, 3, 3)."""
    x, tets, dm_inv, a = _arrays(x, tets, dm_inv, a)
    res = np.empty((len(tets), 3, 3))
    e = np.empty(len(tets))
    with numba_threads(_threads(len(tets))):
        _residual_kernel(x, tets, dm_inv, a, np.ascontiguousarray(rot, np.float64),
                         np.ascontiguousarray(w, np.float64), res, e)
    return res, e


def energy(x, tets, dm_inv, a, w, rot=None) -> float:
    """E_R(x) = sum w ||F - R A||^2 [J] for given rotations rot (m, 3, 3); rot None: the true energy E(x)
    (R = ``local_step(x)``, the minimum over SO(3))."""
    if rot is None:
        rot = local_step(x, tets, dm_inv, a)
    return float(np.sum(residuals(x, tets, dm_inv, a, w, rot)[1]))


def gradient(x, tets, dm_inv, a, w, rot=None) -> np.ndarray:
    """grad E_R (n, 3) [N] for rotations rot (m, 3, 3); rot None: grad E (true energy, envelope theorem)."""
    if rot is None:
        rot = local_step(x, tets, dm_inv, a)
    res, _ = residuals(x, tets, dm_inv, a, w, rot)
    return _scatter_gradient(np.ascontiguousarray(tets, np.int64), np.ascontiguousarray(dm_inv, np.float64),
                             np.ascontiguousarray(w, np.float64), res, len(x))


def energy_and_gradient(x, tets, dm_inv, a, w) -> tuple[float, np.ndarray, np.ndarray]:
    """(E(x) [J], grad E (n, 3) [N], R (m, 3, 3)) with one local step: the true energy, its gradient and the PD
    projections at x."""
    x, tets, dm_inv, a = _arrays(x, tets, dm_inv, a)
    w = np.ascontiguousarray(w, np.float64)
    m_t = len(tets)
    rot, res, e = np.empty((m_t, 3, 3)), np.empty((m_t, 3, 3)), np.empty(m_t)
    with numba_threads(_threads(m_t)):
        _local_residual_kernel(x, tets, dm_inv, a, w, rot, res, e)
    g = _scatter_gradient(tets, dm_inv, w, res, len(x))
    return float(np.sum(e)), g, rot


def energy_gradient(x, tets, dm_inv, a, w, incidence=None) -> tuple[float, np.ndarray]:
    """(E(x) [J], grad E (n, 3) [N]): ``energy_and_gradient`` without the rotations, the same numbers bit for
    bit. On one Numba thread a single pass over the tets that stores no per-tet matrices; on more, the tets'
    energies and gradient terms (m, 12) in parallel, then each vertex's terms gathered in tet order (vertices in
    parallel). incidence: ``vertex_incidence(tets, n)`` (computed here when None; pass it for repeated calls)."""
    x, tets, dm_inv, a = _arrays(x, tets, dm_inv, a)
    w = np.ascontiguousarray(w, np.float64)
    m_t, threads = len(tets), _threads(len(tets))
    e_t, g = np.empty(m_t), np.empty((len(x), 3))
    if threads == 1:
        _energy_gradient_fused(x, tets, dm_inv, a, w, e_t, g)
        return float(np.sum(e_t)), g
    ptr, slots = vertex_incidence(tets, len(x)) if incidence is None else incidence
    terms = scratch_array("shape_targeting.terms", (m_t, 12))
    with numba_threads(threads):
        _energy_gradient_terms(x, tets, dm_inv, a, w, e_t, terms)
        _gather_gradient(ptr, slots, terms, g)
    return float(np.sum(e_t)), g


def true_hessian(x, tets, dm_inv, a, w) -> sp.csr_matrix:
    """The true energy's Hessian (3n, 3n) CSR [N/m], vertex-major, unprojected (for Newton references)."""
    x, tets, dm_inv, a = _arrays(x, tets, dm_inv, a)
    blocks = _true_hessian_blocks(x, tets, dm_inv, a, np.ascontiguousarray(w, np.float64))
    dof = (3 * tets[:, :, None] + np.arange(3)).reshape(-1, 12)  # (m, 12)
    rows = np.repeat(dof, 12, axis=1).ravel()
    cols = np.tile(dof, (1, 12)).ravel()
    n3 = 3 * len(x)
    h = sp.csr_matrix((blocks.ravel(), (rows, cols)), shape=(n3, n3))
    h.sum_duplicates()
    return h
