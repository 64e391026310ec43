"""Elastic energy of a Model, summed over its material groups, with sparse PSD Hessian assembly.

The Hessian is assembled straight into a CSR matrix whose sparsity pattern (all vertex pairs sharing a tet,
3x3 blocks, sorted columns) is built once per model. Each call computes every tet's gradient (12,) and
PSD-projected Hessian (12, 12) (energies/tet_blocks.py; the SVDs of F vectorised over svd_lanes.LANES tets) and
adds them into the CSR data and the gradient at once, without per-tet buffers. The tets are sorted once along a
bandwidth-reducing (reverse Cuthill-McKee) vertex order and cut into chunks of _CHUNK tets; chunks that share no
vertex form a phase (greedy colouring). The phases run one after the other, the chunks of a phase in parallel:
no two threads ever add into the same entry, and the order of the additions (phase, chunk, tet) is fixed by the
model alone, so the result does not depend on the number of threads. The returned CSR matrices of all calls
share the same ``indptr``/``indices`` arrays, so downstream code (free-dof reduction, the factorisation's
symbolic analysis) can recognise an unchanged pattern by identity.
"""
from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from numba import njit, prange
from scipy.sparse.csgraph import reverse_cuthill_mckee

from ..runtime.threads import cpu_cores, numba_threads
from ..linalg.sparse import canonical_csr
from ..energies.materials import (FCR, LCR, LCR_LAGGED, STIFFNESS_EIGEN, STIFFNESS_LCR, material_info, material_psi,
                                  material_response_into, material_scratch, needs_inversion_guard)
from ..energies.mat3 import det3
from ..energies.svd_lanes import F_ROW, LANES, SIGMA_ROW, U_ROW, V_ROW, lanes_workspace, svd3_rv_lanes
from ..energies.tet_blocks import (HW_H, HW_STRIDE, deformation_gradient_into, hessian_workspace,
                                   shape_gradients_into, tet_gradient_into, tet_hessian_from_dpdf_into,
                                   tet_hessian_from_eigensystem_into, tet_hessian_lcr_into)
from ..energies.neohookean import J_FLOOR, max_step_keeping_orientation
from ..geometry.surface import tet_signed_volumes
from ..runtime.jit import current_threads, dynamic_schedule, twin
from ..model import Model
from ..model.core import DEFAULT_INVERSION
from .elastic_split import SplitPlan, split_plan, sum_split


# ------------------------------------------------------------------------------------------ kernels
#: Tets per chunk (the unit of parallel work; fixed, so that the summation order does not depend on threads).
_CHUNK = 512

#: Models with fewer tets evaluate their elastic energy and derivatives on one thread on machines with fewer than
#: 4 cores (a tenth of it on larger machines). Measured on the shared 2-core machine (load 3 to 4 from other
#: jobs; LCR; median of 31, twice) [ms], gradient + Hessian / energy, 1 thread vs 2: teddy 1,207 tets 0.63-0.75 /
#: 0.79-0.85 vs 0.59-0.78 / 0.40-0.48; box 3,072 tets 1.7 / 2.1 vs 24 / 12; 10,368 tets 10.3 / 11.2 vs 36 / 12-13:
#: a parallel region waits for the second core whenever another process holds it (up to ~10 ms a call in the
#: small-scene benchmark), which costs far more than the second thread can save on small meshes. A model of several
#: bodies uses the second core there without that risk: ``elastic_split`` (two groups of bodies, one per thread).
SERIAL_BELOW_TETS = 5_000


def _threads(n_tets: int) -> int:
    """Numba threads for an elastic evaluation over n_tets tets (see ``SERIAL_BELOW_TETS``)."""
    below = SERIAL_BELOW_TETS if cpu_cores() < 4 else SERIAL_BELOW_TETS // 10
    return 1 if n_tets < below else current_threads()


@njit(cache=True, inline="always")
def _load_lanes(x, tets, dm_inv, e0, n, f, work) -> None:
    """F (3, 3) of the tets e0 .. e0 + n - 1 into the F rows of the lanes workspace (identity in padding lanes);
    f: (3, 3) scratch."""
    for l in range(LANES):
        if l < n:
            deformation_gradient_into(x, tets, dm_inv, e0 + l, f)
        else:  # padding lane
            for i in range(3):
                for j in range(3):
                    f[i, j] = 1.0 if i == j else 0.0
        for i in range(3):
            for j in range(3):
                work[(F_ROW + 3 * i + j) * LANES + l] = f[i, j]


@njit(cache=True, inline="always")
def _read_lane(work, l, f, s) -> None:
    """F (3, 3) and the signed singular values s (3,) of lane l of the lanes workspace."""
    for i in range(3):
        s[i] = work[(SIGMA_ROW + i) * LANES + l]
        for j in range(3):
            f[i, j] = work[(F_ROW + 3 * i + j) * LANES + l]


@njit(cache=True)
def _tet_range(codes, x, tets, dm_inv, volume, mu, lam, lo, hi, blk_off, indptr, tet_energy, grad_out,
               data_out) -> float:
    """Adds the gradients (12,) [N] and PSD-projected Hessians (12, 12) [N/m] of the tets lo <= e < hi into
    grad_out (3n,) and the CSR data data_out (nnz,) (positions blk_off, see TetBlockPattern), in tet order; returns
    their energy sum_e volume_e Psi(F_e) [J], the very sum ``_energy_range`` makes (same lanes, same order), and
    writes each term into tet_energy[e] unless tet_energy is empty.

    Scratch arrays are allocated once per call, never per tet, and the shared arrays are indexed [e, ...] (a
    view tets[e] per tet would update their reference counts atomically). The SVDs of F run LANES tets at a
    time (svd_lanes.py: vectorised, bitwise equal to svd_rv).
    """
    work = lanes_workspace()
    f, u, v = np.empty((3, 3)), np.empty((3, 3)), np.empty((3, 3))
    s = np.empty(3)
    p, dpdf = np.empty((3, 3)), np.empty((9, 9))
    dpsi, d2psi, ap = np.empty(3), np.empty((3, 3)), np.empty((3, 3))
    scratch = material_scratch()
    g, ge, hw = np.empty((4, 3)), np.empty(12), hessian_workspace()
    total = 0.0
    for e0 in range(lo, hi, LANES):
        n = min(LANES, hi - e0)
        _load_lanes(x, tets, dm_inv, e0, n, f, work)
        svd3_rv_lanes(work)
        for l in range(n):
            e = e0 + l
            _read_lane(work, l, f, s)
            term = volume[e] * _psi(codes[e], f, s, mu[e], lam[e])
            total += term
            if tet_energy.shape[0]:
                tet_energy[e] = term
            for i in range(3):
                for j in range(3):
                    u[i, j] = work[(U_ROW + 3 * i + j) * LANES + l]
                    v[i, j] = work[(V_ROW + 3 * i + j) * LANES + l]
            kind = material_response_into(codes[e], f, u, s, v, mu[e], lam[e], p, dpdf, dpsi, d2psi, ap, scratch)
            shape_gradients_into(dm_inv, e, g)
            tet_gradient_into(p, g, volume[e], ge)
            if kind == STIFFNESS_LCR:
                tet_hessian_lcr_into(u, s, v, dpsi, mu[e], lam[e], g, volume[e], hw)
            elif kind == STIFFNESS_EIGEN:
                tet_hessian_from_eigensystem_into(u, s, v, dpsi, ap, g, volume[e], hw)
            else:
                tet_hessian_from_dpdf_into(dpdf, g, volume[e], hw)
            _scatter_add(tets, blk_off, indptr, e, ge, hw, grad_out, data_out)
    return total


@njit(cache=True, inline="always")
def _scatter_add(tets, blk_off, indptr, e, ge, hw, grad_out, data_out) -> None:
    """grad_out += tet e's gradient ge (12,), data_out += its Hessian (in hw, see tet_blocks.HW_H)."""
    for a in range(4):
        vtx = tets[e, a]
        w = indptr[3 * vtx + 1] - indptr[3 * vtx]  # row width of the vertex
        for r in range(3):
            grad_out[3 * vtx + r] += ge[3 * a + r]
        for b in range(4):
            off = blk_off[e, a, b]
            for r in range(3):
                for q in range(3):
                    data_out[off + r * w + q] += hw[HW_H + HW_STRIDE * (3 * a + r) + 3 * b + q]


@twin  # small models run the serial variant (see ``_threads``), the same bits
def _assemble(codes, x, tets, dm_inv, volume, mu, lam, blk_off, indptr, chunk_bounds, phase_ptr, phase_chunks,
              grad_out, data_out):
    """grad_out, data_out (zeros) += the sums over all tets: the phases in order, the chunks of a phase in
    parallel (dynamic scheduling: call it under ``parallel_chunksize(1)``). Returns Psi [J], the chunks' energies
    added in chunk order: the bits of ``_energy``."""
    partial = np.zeros(len(chunk_bounds) - 1)
    for ph in range(len(phase_ptr) - 1):
        for k in prange(phase_ptr[ph], phase_ptr[ph + 1]):
            c = phase_chunks[k]
            partial[c] = _tet_range(codes, x, tets, dm_inv, volume, mu, lam, chunk_bounds[c], chunk_bounds[c + 1],
                                    blk_off, indptr, grad_out[:0], grad_out, data_out)
    total = 0.0
    for c in range(len(partial)):
        total += partial[c]
    return total


@njit(cache=True, nogil=True)
def _assemble_runs(codes, x, tets, dm_inv, volume, mu, lam, blk_off, indptr, runs, totals, tet_energy, grad_out,
                   data_out) -> None:
    """One group's half of ``elastic_split.sum_split``: the tet runs (k, 3) int64 (chunk, lo, hi) in order,
    each run's energy sum into totals (k,) and each tet's into tet_energy (m,); the GIL released."""
    for i in range(runs.shape[0]):
        totals[i] = _tet_range(codes, x, tets, dm_inv, volume, mu, lam, runs[i, 1], runs[i, 2], blk_off, indptr,
                               tet_energy, grad_out, data_out)


@njit(cache=True, nogil=True)
def _energy_runs(codes, x, tets, dm_inv, volume, mu, lam, runs, totals, tet_energy) -> None:
    """One group's half of ``elastic_split.sum_split`` for the energy alone: the tet runs (k, 3) int64 (chunk, lo,
    hi) in order, each run's energy sum into totals (k,) and each tet's into tet_energy (m,); the GIL released."""
    for i in range(runs.shape[0]):
        totals[i] = _energy_range(codes, x, tets, dm_inv, volume, mu, lam, runs[i, 1], runs[i, 2], tet_energy)


@njit(cache=True)
def _inversion_count_min(x, tets, det_dm_inv):
    """(number of tets with det F <= 0 or NaN, smallest det F) at positions x (n, 3) [m], det F = 6 V det(Dm^-1)
    with the signed volume V of ``geometry.surface.tet_signed_volumes`` (the same arithmetic), in one pass."""
    count, smallest = 0, math.inf
    for e in range(tets.shape[0]):
        a, b, c, d = tets[e, 0], tets[e, 1], tets[e, 2], tets[e, 3]
        u0, u1, u2 = x[b, 0] - x[a, 0], x[b, 1] - x[a, 1], x[b, 2] - x[a, 2]
        v0, v1, v2 = x[c, 0] - x[a, 0], x[c, 1] - x[a, 1], x[c, 2] - x[a, 2]
        w0, w1, w2 = x[d, 0] - x[a, 0], x[d, 1] - x[a, 1], x[d, 2] - x[a, 2]
        volume = ((u1 * v2 - u2 * v1) * w0 + (u2 * v0 - u0 * v2) * w1 + (u0 * v1 - u1 * v0) * w2) / 6.0
        j = 6.0 * volume * det_dm_inv[e]
        if not j > 0.0:
            count += 1
        if j != j:
            smallest = j  # a NaN propagates, as in NumPy's min
        elif j < smallest:
            smallest = j
    return count, smallest


@njit(cache=True, inline="always")
def _uses_rotation(code) -> bool:
    return code == LCR or code == LCR_LAGGED or code == FCR


@njit(cache=True)
def _psi(code, f, s, mu, lam) -> float:
    """Energy density [Pa] of material ``code`` at F (3, 3) with signed singular values s (3,) (read for the
    rotation-based materials only): the arithmetic of ``materials.material_psi``, without its SVD."""
    if code == LCR or code == LCR_LAGGED:
        e0, e1, e2 = s[0] - 1.0, s[1] - 1.0, s[2] - 1.0
        tr = e0 + e1 + e2
        return mu * (e0 * e0 + e1 * e1 + e2 * e2) + 0.5 * lam * tr * tr
    if code == FCR:
        jm1 = det3(f) - 1.0
        return mu * ((s[0] - 1.0) ** 2 + (s[1] - 1.0) ** 2 + (s[2] - 1.0) ** 2) + 0.5 * lam * jm1 * jm1
    return material_psi(code, f, mu, lam)


@njit(cache=True)
def _energy_range(codes, x, tets, dm_inv, volume, mu, lam, lo, hi, tet_energy) -> float:
    """sum_e volume_e Psi(F_e) [J] over the tets lo <= e < hi, in tet order, each term also into tet_energy[e]
    unless tet_energy is empty; the SVDs of F run LANES tets at a time (svd_lanes.py: bitwise equal to svd_rv, so
    each tet's term is that of ``materials.elastic_energy``)."""
    work = lanes_workspace()
    f, s = np.empty((3, 3)), np.empty(3)
    total = 0.0
    for e0 in range(lo, hi, LANES):
        n = min(LANES, hi - e0)
        _load_lanes(x, tets, dm_inv, e0, n, f, work)
        rotation = False
        for l in range(n):
            rotation = rotation or _uses_rotation(codes[e0 + l])
        if rotation:
            svd3_rv_lanes(work)
        for l in range(n):
            e = e0 + l
            _read_lane(work, l, f, s)
            term = volume[e] * _psi(codes[e], f, s, mu[e], lam[e])
            total += term
            if tet_energy.shape[0]:
                tet_energy[e] = term
    return total


@twin
def _energy(codes, x, tets, dm_inv, volume, mu, lam, chunk_bounds) -> float:
    """Psi [J]: the chunks' sums (in parallel), added in chunk order (the same bits on any number of threads)."""
    n_chunks = len(chunk_bounds) - 1
    partial = np.zeros(n_chunks)
    for c in prange(n_chunks):
        partial[c] = _energy_range(codes, x, tets, dm_inv, volume, mu, lam, chunk_bounds[c], chunk_bounds[c + 1],
                                   volume[:0])
    total = 0.0
    for c in range(n_chunks):
        total += partial[c]
    return total


def _bandwidth_order(tets: np.ndarray, n_vertices: int) -> np.ndarray:
    """Permutation of the tets (m,) sorting them by their lowest-ranked vertex in a reverse Cuthill-McKee order
    of the vertices (stable): consecutive tets then share vertices, and chunks of them touch few other chunks."""
    if len(tets) == 0:
        return np.zeros(0, np.int64)
    rows = np.repeat(tets, 4, axis=1).ravel()
    cols = np.tile(tets, (1, 4)).ravel()
    graph = sp.csr_matrix((np.ones(len(rows), np.int8), (rows, cols)), shape=(n_vertices, n_vertices))
    rank = np.empty(n_vertices, np.int64)
    rank[reverse_cuthill_mckee(graph, symmetric_mode=True)] = np.arange(n_vertices)
    return np.argsort(rank[tets].min(axis=1), kind="stable")


def _chunk_phases(tets: np.ndarray, n_vertices: int, chunk: int):
    """Chunks of ``chunk`` consecutive tets and a greedy colouring into phases of chunks that share no vertex.

    Returns chunk_bounds (n_chunks + 1,), phase_ptr (n_phases + 1,), phase_chunks (n_chunks,): the chunks of
    phase p are phase_chunks[phase_ptr[p]:phase_ptr[p + 1]], ascending.
    """
    m = len(tets)
    n_chunks = max(1, -(-m // chunk))
    bounds = np.minimum(np.arange(n_chunks + 1, dtype=np.int64) * chunk, m)
    owner = np.repeat(np.arange(n_chunks), 4 * chunk)[:4 * m]             # chunk of each (tet, vertex) entry
    pairs = np.unique(tets.ravel().astype(np.int64) * n_chunks + owner)    # (vertex, chunk), sorted by vertex
    vert, ch = pairs // n_chunks, pairs % n_chunks
    starts = np.flatnonzero(np.r_[True, vert[1:] != vert[:-1]])
    counts = np.diff(np.r_[starts, len(vert)])
    neighbours = [set() for _ in range(n_chunks)]
    for st, cnt in zip(starts[counts > 1], counts[counts > 1]):          # vertices shared by several chunks
        shared = ch[st:st + cnt].tolist()
        for c in shared:
            neighbours[c].update(shared)
    colour = np.zeros(n_chunks, np.int64)
    for c in range(n_chunks):
        used = {colour[d] for d in neighbours[c] if d < c}
        k = 0
        while k in used:
            k += 1
        colour[c] = k
    phase_chunks = np.argsort(colour, kind="stable").astype(np.int64)
    phase_ptr = np.r_[0, np.cumsum(np.bincount(colour))].astype(np.int64)
    return bounds, phase_ptr, phase_chunks


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
        return canonical_csr(data, self.indices, self.indptr, 3 * self.n_vertices)


class ElasticAssembler:
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
        codes = np.concatenate(codes) if codes else np.zeros(0, np.int64)
        # all tets (with their material codes) in a bandwidth-reducing order, cut into chunks and phases
        by_vertex = _bandwidth_order(model.tets[order], model.n_vertices)
        order, self._codes = order[by_vertex], codes[by_vertex]
        self._tets = np.ascontiguousarray(model.tets[order], np.int64)
        self._dm_inv = np.ascontiguousarray(model.dm_inv[order], np.float64)
        self._volume = np.ascontiguousarray(model.volume[order], np.float64)
        self._mu = np.ascontiguousarray(model.mu[order], np.float64)
        self._lam = np.ascontiguousarray(model.lam[order], np.float64)
        self.pattern = TetBlockPattern(self._tets, model.n_vertices)
        self._chunk_bounds, self._phase_ptr, self._phase_chunks = _chunk_phases(self._tets, model.n_vertices,
                                                                                _CHUNK)
        guard = np.zeros(len(model.tets), bool)  # NH always (+inf energy when inverted); others by their body
        prevent = getattr(model, "prevent_inversion", None)
        guard[:] = DEFAULT_INVERSION == "prevent" if prevent is None else np.asarray(prevent, bool)
        for name, idx in model.material_groups:
            if needs_inversion_guard(name):
                guard[idx] = True
        #: (k, 4) int64: the tets whose orientation ``max_step`` keeps (model order)
        self.guarded_tets = np.ascontiguousarray(model.tets[guard], np.int64)
        self._det_dm_inv = np.linalg.det(model.dm_inv) if len(model.tets) else np.zeros(0)
        #: (k,) [m^3]: det(Ds) of each guarded tet at det F = J_FLOOR
        self._floor = np.ascontiguousarray(J_FLOOR / self._det_dm_inv[guard])
        self._unprescribed = (None, self.guarded_tets, self._floor)  # a prescribed mask, its tets (``max_step``)
        self._last = None  # (x (n, 3) [m], Hessian) of the last assembly (``hessian_at``)
        self._split = False  # the ``elastic_split`` plan (None: none), made on first use

    def energy(self, x: np.ndarray) -> float:
        """Psi(x) [J] at positions x (n, 3) [m] (+inf if a guarded tet is inverted); the same per-tet terms as
        ``materials.elastic_energy``, summed in this object's tet order by chunks."""
        x = np.ascontiguousarray(x, dtype=np.float64)
        if len(self._tets) == 0:
            return 0.0
        threads = _threads(len(self._tets))
        plan = self._split_plan() if threads == 1 else None
        if plan is not None:  # two bodies' groups side by side, serial each (elastic_split)
            arrays = (self._codes, x, self._tets, self._dm_inv, self._volume, self._mu, self._lam)
            return sum_split(_energy_runs, plan, arrays, ())
        with dynamic_schedule(threads > 1), numba_threads(threads):
            return float(_energy(self._codes, x, self._tets, self._dm_inv, self._volume, self._mu, self._lam,
                                 self._chunk_bounds))

    def gradient_and_hessian(self, x: np.ndarray) -> tuple[np.ndarray, sp.csr_matrix]:
        """Gradient (3n,) [N] and PSD-projected Hessian (3n, 3n) [N/m] CSR on ``self.pattern`` (fresh data)."""
        return self.gradient_hessian_energy(x)[:2]

    def gradient_hessian_energy(self, x: np.ndarray) -> tuple[np.ndarray, sp.csr_matrix, float]:
        """``gradient_and_hessian`` and Psi(x) [J] from the same pass over the tets (the energy equal, bit for bit,
        to ``energy(x)`` wherever that is finite; meant for positions with no inverted guarded tet)."""
        x = np.ascontiguousarray(x, dtype=np.float64)
        pat = self.pattern
        grad = np.zeros(3 * pat.n_vertices)
        data = np.zeros(pat.nnz)
        threads = _threads(len(self._tets))
        plan = self._split_plan() if threads == 1 else None
        if plan is not None:  # two bodies' groups side by side, serial each (elastic_split)
            arrays = (self._codes, x, self._tets, self._dm_inv, self._volume, self._mu, self._lam, pat.blk_off,
                      pat.indptr)
            psi = sum_split(_assemble_runs, plan, arrays, (grad, data))
        else:
            with dynamic_schedule(threads > 1), numba_threads(threads):  # dynamic scheduling of the chunks
                psi = _assemble(self._codes, x, self._tets, self._dm_inv, self._volume, self._mu, self._lam,
                                pat.blk_off, pat.indptr, self._chunk_bounds, self._phase_ptr, self._phase_chunks,
                                grad, data)
        hess = pat.csr(data)
        self._last = (x.copy(), hess)
        return grad, hess, float(psi)

    def _split_plan(self) -> SplitPlan | None:
        """The ``elastic_split`` plan where this machine runs the assembly on one thread only because it has fewer
        than 4 cores (``SERIAL_BELOW_TETS``) and Numba may use two (else None); made on first use."""
        if cpu_cores() >= 4 or current_threads() < 2:
            return None
        if self._split is False:
            self._split = split_plan(self._tets, self.model.n_vertices, self._chunk_bounds, self._phase_chunks)
        return self._split

    def hessian_at(self, x: np.ndarray) -> sp.csr_matrix:
        """The PSD-projected Hessian (3n, 3n) [N/m] at x (n, 3) [m]: the last one assembled when it was at x bit
        for bit (a step's lagged damping reads the one of the previous step's last Newton direction), else a new
        one. Either way the same bits. Do not modify the result (it may be shared)."""
        x = np.ascontiguousarray(x, dtype=np.float64)
        last = self._last
        if last is not None and last[0].shape == x.shape and np.array_equal(last[0].view(np.int64),
                                                                             x.view(np.int64)):
            return last[1]
        return self.gradient_hessian_energy(x)[1]

    def max_step(self, x: np.ndarray, p: np.ndarray, prescribed: np.ndarray | None = None,
                 safety: float = 0.9) -> float:
        """Largest step fraction alpha in (0, 1] along x + alpha p (x, p (n, 3) [m]) that keeps every guarded tet
        (``guarded_tets``) positively oriented (``max_step_keeping_orientation``): no such tet's det F falls below
        a tenth of its value at x nor below ``J_FLOOR`` (one already below it does not shrink further), times
        ``safety``. Tets already degenerate or inverted at x and tets whose four nodes are all prescribed ((n,)
        bool mask; their path is given, not chosen) set no bound. 1.0 if none."""
        tets, floor = self.guarded_tets, self._floor
        if prescribed is not None and len(tets):
            if self._unprescribed[0] is not prescribed:  # the same mask object for a whole step
                keep = ~np.asarray(prescribed, bool)[tets].all(axis=1)
                self._unprescribed = (prescribed, np.ascontiguousarray(tets[keep]), np.ascontiguousarray(floor[keep]))
            tets, floor = self._unprescribed[1:]
        if len(tets) == 0:
            return 1.0
        with numba_threads(_threads(len(tets))):  # one thread: the serial variant (a minimum: same)
            return float(max_step_keeping_orientation(x, p, tets, floor, safety))

    def volume_ratios(self, x: np.ndarray) -> np.ndarray:
        """det F (m,) [1] of every tet in model order at positions x (n, 3) [m]: its current over its rest volume
        (<= 0: degenerate or inverted)."""
        if len(self.model.tets) == 0:
            return np.zeros(0)
        return 6.0 * tet_signed_volumes(x, self.model.tets) * self._det_dm_inv  # det Ds = 6 V

    def inversion_stats(self, x: np.ndarray) -> tuple[int, float]:
        """(number of tets with det F <= 0, smallest det F (inf without tets)) at positions x (n, 3) [m]."""
        if len(self.model.tets) == 0:
            return 0, math.inf
        count, smallest = _inversion_count_min(np.ascontiguousarray(x, np.float64), self.model.tets,
                                               self._det_dm_inv)
        return int(count), float(smallest)
