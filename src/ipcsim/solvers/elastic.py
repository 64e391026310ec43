"""Elastic energy of a Model, summed over its material groups, with sparse PSD Hessian assembly.

The Hessian is assembled straight into a CSR matrix whose sparsity pattern (all vertex pairs sharing a tet,
3x3 blocks, sorted columns) is built once per model: each call computes the per-tet gradients (12,) and
PSD-projected Hessians (12, 12) into persistent buffers, then every vertex row gathers its incident tets'
blocks in a fixed order (row-parallel, no races, deterministic). The returned CSR matrices of all calls share
the same ``indptr``/``indices`` arrays, so downstream code (free-dof reduction, the factorisation's symbolic
analysis) can recognise an unchanged pattern by identity.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit, prange

from ..energies.materials import elastic_energy, material_info, material_pk1_and_dpdf, needs_inversion_guard
from ..energies.kinematics import deformation_gradient
from ..energies.neohookean import max_step_without_inversion
from ..model import Model


# ------------------------------------------------------------------------------------------ per-tet kernels
@njit(cache=True)
def _shape_gradients(dm_inv: np.ndarray) -> np.ndarray:
    """G (4, 3) [1/m] with F = sum_a x_a G[a]^T: G[a + 1] = row a of Dm^{-1}, G[0] = -(sum of the rows)."""
    g = np.empty((4, 3))
    for k in range(3):
        g[0, k] = -(dm_inv[0, k] + dm_inv[1, k] + dm_inv[2, k])
        for c in range(3):
            g[c + 1, k] = dm_inv[c, k]
    return g


@njit(cache=True)
def _tet_blocks(code, x, tet, dm_inv, volume, mu, lam, grad_out, hess_out):
    """Gradient (12,) [N] and PSD-projected Hessian (12, 12) [N/m] of one tet into grad_out / hess_out.

    With vec(F) column-major (entry 3k + i is F[i, k]) and dF[i, k]/dx[a, j] = delta_ij G[a, k]:
    g[3a + i] = V sum_k P[i, k] G[a, k],  H[3a + i, 3b + j] = V sum_{k,l} G[a, k] D[3k + i, 3l + j] G[b, l].
    """
    xs = np.empty((4, 3))
    for a in range(4):
        for d in range(3):
            xs[a, d] = x[tet[a], d]
    f = deformation_gradient(xs, dm_inv)
    p, dpdf = material_pk1_and_dpdf(code, f, mu, lam, True, True)
    g = _shape_gradients(dm_inv)
    for a in range(4):
        for i in range(3):
            s = 0.0
            for k in range(3):
                s += p[i, k] * g[a, k]
            grad_out[3 * a + i] = volume * s
    t = np.empty((9, 12))  # t[3k + i, 3b + j] = sum_l D[3k + i, 3l + j] G[b, l]
    for r in range(9):
        for b in range(4):
            for j in range(3):
                s = 0.0
                for l in range(3):
                    s += dpdf[r, 3 * l + j] * g[b, l]
                t[r, 3 * b + j] = s
    for a in range(4):
        for i in range(3):
            for c in range(12):
                s = 0.0
                for k in range(3):
                    s += g[a, k] * t[3 * k + i, c]
                hess_out[3 * a + i, c] = volume * s


@njit(cache=True, parallel=True)
def _all_tet_blocks(codes, x, tets, dm_inv, volume, mu, lam, grads, hess):
    for e in prange(tets.shape[0]):
        _tet_blocks(codes[e], x, tets[e], dm_inv[e], volume[e], mu[e], lam[e], grads[e], hess[e])


@njit(cache=True, parallel=True)
def _gather_rows(inc_ptr, inc, tets, blk_off, indptr, grads, hess, grad_out, data_out):
    """Per vertex v (parallel): grad_out[3v:3v+3] and CSR rows 3v..3v+2 from the incident tets, in tet order."""
    for v in prange(len(inc_ptr) - 1):
        w = indptr[3 * v + 1] - indptr[3 * v]
        for r in range(3):
            grad_out[3 * v + r] = 0.0
            for q in range(indptr[3 * v + r], indptr[3 * v + r + 1]):
                data_out[q] = 0.0
        for i in range(inc_ptr[v], inc_ptr[v + 1]):
            e = inc[i] // 4
            a = inc[i] % 4
            for r in range(3):
                grad_out[3 * v + r] += grads[e, 3 * a + r]
            for b in range(4):
                off = blk_off[e, a, b]
                for r in range(3):
                    for q in range(3):
                        data_out[off + r * w + q] += hess[e, 3 * a + r, 3 * b + q]


# ------------------------------------------------------------------------------------------ pattern
class TetBlockPattern:
    """CSR pattern (3n, 3n) of a tet mesh's vertex-pair blocks and the scatter map of each tet's 4x4 blocks.

    Attributes:
        indptr (3n + 1,), indices (nnz,): int32 (int64 when too large), sorted columns, no duplicates.
        blk_off: (m, 4, 4) int64, data position of entry (0, 0) of tet e's block (a, b); entry (r, q) of the
            block lies at blk_off + r * (row width of vertex tets[e, a]) + q.
        inc_ptr (n + 1,), inc (4m,): the (tet, local vertex) pairs e * 4 + a of every vertex, in tet order.
        diagonal: (3n,) int64, data position of each diagonal entry (-1 for vertices in no tet).
    """

    def __init__(self, tets: np.ndarray, n_vertices: int):
        tets = np.ascontiguousarray(tets, np.int64)
        n, m = int(n_vertices), len(tets)
        rows = np.repeat(tets, 4, axis=1).ravel()      # (m*16,) vertex a of pair (a, b)
        cols = np.tile(tets, (1, 4)).ravel()
        keys = rows * n + cols
        ukeys = np.unique(keys)                          # sorted by (row vertex, column vertex)
        urow, ucol = ukeys // n, ukeys % n
        vptr = np.zeros(n + 1, np.int64)
        np.add.at(vptr, urow + 1, 1)
        vptr = np.cumsum(vptr)
        deg = np.diff(vptr)
        big = 9 * len(ukeys) >= 2**31 - 1 or 3 * n >= 2**31 - 1
        itype = np.int64 if big else np.int32
        width = np.repeat(3 * deg, 3)                    # entries per scalar row
        self.indptr = np.concatenate([[0], np.cumsum(width)]).astype(itype)
        # indices: row 3v + r holds 3 * ucol[j] + q for the block columns j of v, q = 0..2
        block_cols = (3 * ucol[:, None] + np.arange(3)).reshape(-1)           # per vertex: its columns
        starts = np.repeat(3 * vptr[:-1], 3)            # per scalar row: start of its vertex's columns
        total = int(self.indptr[-1])
        idx = np.arange(total) - np.repeat(self.indptr[:-1].astype(np.int64), width) + np.repeat(starts, width)
        self.indices = block_cols[idx].astype(itype)
        slot = np.searchsorted(ukeys, keys) - vptr[rows]                      # block slot within its vertex row
        self.blk_off = (self.indptr[3 * rows].astype(np.int64) + 3 * slot).reshape(m, 4, 4)
        self.row_width = 3 * deg
        order = np.argsort(tets.ravel(), kind="stable")                      # incidence, tet order per vertex
        self.inc = np.ascontiguousarray(order, np.int64)
        self.inc_ptr = np.concatenate([[0], np.cumsum(np.bincount(tets.ravel(), minlength=n))]).astype(np.int64)
        diag = np.full(3 * n, -1, np.int64)
        v = np.flatnonzero(deg > 0)                      # a vertex of some tet has its own (v, v) block
        self_slot = np.searchsorted(ukeys, v * n + v) - vptr[v]
        for r in range(3):
            diag[3 * v + r] = self.indptr[3 * v + r] + 3 * self_slot + r
        self.diagonal = diag
        self.n_vertices = n

    @property
    def nnz(self) -> int:
        """Number of stored entries."""
        return len(self.indices)

    def csr(self, data: np.ndarray) -> sp.csr_matrix:
        """A (3n, 3n) CSR matrix on this pattern (shares indptr/indices; data (nnz,) is not copied)."""
        n3 = 3 * self.n_vertices
        m = sp.csr_matrix((n3, n3), dtype=np.float64)
        m.data, m.indices, m.indptr = data, self.indices, self.indptr
        m.has_sorted_indices = True
        m.has_canonical_format = True
        return m


class ElasticTerm:
    """Psi(x) [J] of all tets; gradient (3n,) [N] and PSD-projected Hessian (3n, 3n) [N/m] vertex-major."""

    def __init__(self, model: Model):
        self.model = model
        self._groups = []
        order = []
        codes = []
        for name, idx in model.material_groups:
            tets = np.ascontiguousarray(model.tets[idx])
            self._groups.append((name, tets, np.ascontiguousarray(model.dm_inv[idx]), model.volume[idx],
                                 model.mu[idx], model.lam[idx]))
            order.append(np.asarray(idx, np.int64))
            codes.append(np.full(len(idx), material_info(name).code, np.int64))
        order = np.concatenate(order) if order else np.zeros(0, np.int64)
        # all tets in group order (the order in which contributions are summed)
        self._codes = np.concatenate(codes) if codes else np.zeros(0, np.int64)
        self._tets = np.ascontiguousarray(model.tets[order], np.int64)
        self._dm_inv = np.ascontiguousarray(model.dm_inv[order], np.float64)
        self._volume = np.ascontiguousarray(model.volume[order], np.float64)
        self._mu = np.ascontiguousarray(model.mu[order], np.float64)
        self._lam = np.ascontiguousarray(model.lam[order], np.float64)
        self.pattern = TetBlockPattern(self._tets, model.n_vertices)
        self._grads = None
        self._hess = None
        self.guarded_tets = np.vstack([g[1] for g in self._groups if needs_inversion_guard(g[0])] or
                                      [np.zeros((0, 4), np.int64)])

    def energy(self, x: np.ndarray) -> float:
        """Psi(x) [J] at positions x (n, 3) [m] (+inf if a guarded tet is inverted)."""
        return sum(elastic_energy(name, x, t, dm, vol, mu, lam) for name, t, dm, vol, mu, lam in self._groups)

    def gradient_and_hessian(self, x: np.ndarray) -> tuple[np.ndarray, sp.csr_matrix]:
        """Gradient (3n,) [N] and PSD-projected Hessian (3n, 3n) [N/m] CSR on ``self.pattern`` (fresh data)."""
        m = len(self._tets)
        if self._grads is None:
            self._grads = np.empty((m, 12))
            self._hess = np.empty((m, 12, 12))
        x = np.ascontiguousarray(x, dtype=np.float64)
        pat = self.pattern
        grad = np.empty(3 * pat.n_vertices)
        data = np.empty(pat.nnz)
        if m:
            _all_tet_blocks(self._codes, x, self._tets, self._dm_inv, self._volume, self._mu, self._lam,
                            self._grads, self._hess)
        _gather_rows(pat.inc_ptr, pat.inc, self._tets, pat.blk_off, pat.indptr, self._grads, self._hess,
                     grad, data)
        return grad, pat.csr(data)

    def max_step(self, x: np.ndarray, p: np.ndarray, safety: float = 0.9) -> float:
        """Largest step fraction keeping every inversion-guarded tet positively oriented (1.0 if none)."""
        if len(self.guarded_tets) == 0:
            return 1.0
        return float(max_step_without_inversion(x, p, self.guarded_tets, safety))
