"""Fast assembly of per-stencil 3x3-block matrices into a global CSR matrix (Numba).

Each stencil s has k_s <= 4 vertices ``verts[s, :k_s]`` and a dense local matrix
``local[s, :3k_s, :3k_s]`` in vertex-major order (row 3a + i is coordinate i of local vertex a).
The global matrix is (3n, 3n), vertex-major (x[i, k] -> 3i + k).

Scheme (count, fill, reduce), all on 3x3 vertex blocks so that index work is 1/9 of scalar COO:
1. count the block entries per global vertex row, prefix-sum;
2. fill (column vertex, source block) pairs per row;
3. per row (parallel): sort the pairs by column, merge duplicates;
4. per row (parallel): write the three scalar CSR rows, summing the 3x3 blocks of duplicates.
The CSR has sorted column indices and no duplicates (``has_canonical_format``).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit, prange


@njit(cache=True)
def _count_and_fill(verts, nverts, n_vertices):
    n = len(nverts)
    cnt = np.zeros(n_vertices + 1, np.int64)
    for s in range(n):
        k = nverts[s]
        for a in range(k):
            cnt[verts[s, a] + 1] += k
    for v in range(n_vertices):
        cnt[v + 1] += cnt[v]
    total = cnt[n_vertices]
    col = np.empty(total, np.int64)
    src = np.empty(total, np.int64)
    pos = cnt[:-1].copy()
    for s in range(n):
        k = nverts[s]
        for a in range(k):
            va = verts[s, a]
            p = pos[va]
            for b in range(k):
                col[p + b] = verts[s, b]
                src[p + b] = s * 16 + a * 4 + b
            pos[va] = p + k
    return cnt, col, src


@njit(cache=True, parallel=True)
def _sort_rows(row_ptr, col, src, n_vertices):
    """Sort each row's (col, src) by col; returns the number of distinct columns per row."""
    ucount = np.zeros(n_vertices, np.int64)
    for v in prange(n_vertices):
        lo, hi = row_ptr[v], row_ptr[v + 1]
        m = hi - lo
        if m == 0:
            continue
        if m <= 48:  # insertion sort (rows are short)
            for i in range(lo + 1, hi):
                c, s = col[i], src[i]
                j = i - 1
                while j >= lo and col[j] > c:
                    col[j + 1] = col[j]
                    src[j + 1] = src[j]
                    j -= 1
                col[j + 1] = c
                src[j + 1] = s
        else:
            order = np.argsort(col[lo:hi], kind="mergesort")
            c2 = col[lo:hi][order]
            s2 = src[lo:hi][order]
            col[lo:hi] = c2
            src[lo:hi] = s2
        u = 1
        for i in range(lo + 1, hi):
            if col[i] != col[i - 1]:
                u += 1
        ucount[v] = u
    return ucount


@njit(cache=True, parallel=True)
def _write_csr(row_ptr, col, src, ucount, local, n_vertices, index_sample):
    indptr = np.zeros(3 * n_vertices + 1, np.int64)
    for v in range(n_vertices):
        w = 3 * ucount[v]
        base = indptr[3 * v]
        indptr[3 * v + 1] = base + w
        indptr[3 * v + 2] = base + 2 * w
        indptr[3 * v + 3] = base + 3 * w
    nnz = indptr[3 * n_vertices]
    indices = np.empty(nnz, index_sample.dtype)
    data = np.empty(nnz, np.float64)
    for v in prange(n_vertices):
        lo, hi = row_ptr[v], row_ptr[v + 1]
        w = 3 * ucount[v]
        u = -1
        i = lo
        while i < hi:
            c = col[i]
            u += 1
            for r in range(3):
                base = indptr[3 * v + r] + 3 * u
                for q in range(3):
                    indices[base + q] = 3 * c + q
                    data[base + q] = 0.0
            while i < hi and col[i] == c:
                code = src[i]
                s = code // 16
                a = (code // 4) % 4
                b = code % 4
                for r in range(3):
                    base = indptr[3 * v + r] + 3 * u
                    for q in range(3):
                        data[base + q] += local[s, 3 * a + r, 3 * b + q]
                i += 1
    return indptr, indices, data


def assemble_block_csr(verts: np.ndarray, nverts: np.ndarray, local: np.ndarray, n_vertices: int) -> sp.csr_matrix:
    """Sum of the scattered stencil matrices as a (3n, 3n) CSR matrix.

    Args:
        verts: (m, 4) int64 vertex ids (rows padded with anything past ``nverts``).
        nverts: (m,) int64, number of vertices of each stencil (1..4).
        local: (m, 12, 12) float64 local matrices (the leading 3k x 3k block is used).
        n_vertices: n, the number of vertices.
    """
    verts = np.ascontiguousarray(verts, dtype=np.int64)
    nverts = np.ascontiguousarray(nverts, dtype=np.int64)
    if len(verts) != len(nverts) or len(local) != len(nverts):
        raise ValueError("assemble_block_csr: verts, nverts and local must have the same length")
    if len(nverts) and (nverts.min() < 1 or nverts.max() > 4):
        raise ValueError("assemble_block_csr: nverts must lie in 1..4")
    row_ptr, col, src = _count_and_fill(verts, nverts, n_vertices)
    ucount = _sort_rows(row_ptr, col, src, n_vertices)
    small = 9 * len(col) < 2**31 - 1 and 3 * n_vertices < 2**31 - 1
    index_sample = np.empty(0, np.int32 if small else np.int64)
    indptr, indices, data = _write_csr(row_ptr, col, src, ucount, local, n_vertices, index_sample)
    m = sp.csr_matrix((3 * n_vertices, 3 * n_vertices), dtype=np.float64)
    m.data, m.indices, m.indptr = data, indices, indptr.astype(indices.dtype)
    m.has_sorted_indices = True
    m.has_canonical_format = True
    return m
