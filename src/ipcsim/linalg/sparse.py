"""Fast assembly of per-stencil 3x3-block matrices into a global CSR matrix (Numba).

Each stencil s has k_s <= 4 vertices ``verts[s, :k_s]`` and a dense local matrix
``local[s, :3k_s, :3k_s]`` in vertex-major order (row 3a + i is coordinate i of local vertex a).
The global matrix is (3n, 3n), vertex-major (x[i, k] -> 3i + k).

Scheme (count, fill, reduce), all on 3x3 vertex blocks so that index work is 1/9 of scalar COO:
1. count the block entries per global vertex row, prefix-sum;
2. fill (column vertex, source block) pairs per row;
3. per row (parallel): the sorted distinct columns (insertion into a small sorted list) and each
   pair's slot among them;
4. layout (indptr, indices), then per row (parallel): add each pair's 3x3 block at its slot.
The CSR has sorted column indices and no duplicates (``has_canonical_format``).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit, parallel_chunksize, prange

from ..runtime.jit import current_threads, twin


@njit(cache=True, inline="always")
def csr_lower_bound(indptr, indices, r, c):
    """First position k in row r of a CSR pattern with sorted columns (indptr, indices) whose column is >= c (the
    row's end when none): column c's entry when the row holds it (binary search)."""
    lo, hi = indptr[r], indptr[r + 1]
    while lo < hi:
        mid = (lo + hi) // 2
        if indices[mid] < c:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True)
def _count(verts, nverts, n_vertices):
    """(n_vertices + 1,) int64 row starts of the block entries: stencil s adds k_s entries to each of its
    k_s vertex rows."""
    cnt = np.zeros(n_vertices + 1, np.int64)
    for s in range(len(nverts)):
        k = nverts[s]
        for a in range(k):
            cnt[verts[s, a] + 1] += k
    for v in range(n_vertices):
        cnt[v + 1] += cnt[v]
    return cnt


@njit(cache=True)
def _fill(verts, nverts, cnt, col, src):
    """col[i], src[i]: column vertex and source block (s * 16 + a * 4 + b) of every block entry, by row."""
    pos = cnt[:-1].copy()
    for s in range(len(nverts)):
        k = nverts[s]
        for a in range(k):
            va = verts[s, a]
            p = pos[va]
            for b in range(k):
                col[p + b] = verts[s, b]
                src[p + b] = s * 16 + a * 4 + b
            pos[va] = p + k


@twin  # twins: small inputs run the serial variants (one Numba thread, see ``_assemble``), the same bits
def _unique_columns(row_ptr, col, n_vertices, n_chunks, ucol, slot):
    """Per row v: its distinct columns, sorted, into ucol[row_ptr[v]: row_ptr[v] + ucount[v]], and for
    every entry i its slot (rank of col[i] among the row's distinct columns).

    Rows are split into n_chunks contiguous ranges; each range uses its own (n_vertices,) marker
    arrays (last row that saw a column, the column's slot), so deduplication is O(1) per entry and
    only the few distinct columns of a row are sorted (insertion sort). ucol, slot: outputs shaped as col.
    """
    ucount = np.zeros(n_vertices, np.int64)
    for t in prange(n_chunks):
        seen = np.full(n_vertices, -1, np.int64)
        pos = np.empty(n_vertices, np.int64)
        for v in range(t * n_vertices // n_chunks, (t + 1) * n_vertices // n_chunks):
            lo, hi = row_ptr[v], row_ptr[v + 1]
            u = 0
            for i in range(lo, hi):
                c = col[i]
                if seen[c] != v:
                    seen[c] = v
                    j = lo + u
                    while j > lo and ucol[j - 1] > c:
                        ucol[j] = ucol[j - 1]
                        j -= 1
                    ucol[j] = c
                    u += 1
            for j in range(u):
                pos[ucol[lo + j]] = j
            for i in range(lo, hi):
                slot[i] = pos[col[i]]
            ucount[v] = u
    return ucount


@njit(cache=True)
def _csr_indptr(ucount, n_vertices):
    """indptr (3n + 1,) of the block rows: rows 3v..3v+2 hold 3 ucount[v] entries each (the 3x3 blocks
    of the distinct columns, in column order)."""
    indptr = np.zeros(3 * n_vertices + 1, np.int64)
    for v in range(n_vertices):
        w = 3 * ucount[v]
        base = indptr[3 * v]
        indptr[3 * v + 1] = base + w
        indptr[3 * v + 2] = base + 2 * w
        indptr[3 * v + 3] = base + 3 * w
    return indptr


@twin
def _fill_indices(row_ptr, ucol, ucount, indptr, indices):
    for v in prange(len(ucount)):
        lo = row_ptr[v]
        for r in range(3):
            base = indptr[3 * v + r]
            for j in range(ucount[v]):
                c = 3 * ucol[lo + j]
                for q in range(3):
                    indices[base + 3 * j + q] = c + q


@njit(cache=True, inline="always")
def _entry_blocks(code):
    """(stencil s, local row vertex a, local column vertex b) of a block entry's source code s * 16 + a * 4 + b
    (``_fill``)."""
    return code // 16, (code // 4) % 4, code % 4


@twin
def _write_full(row_ptr, slot, src, ucount, local, indptr, data):
    """data = the sum of the 3x3 blocks local[s, 3a:3a+3, 3b:3b+3] of every entry (row-parallel: no races)."""
    for v in prange(len(ucount)):
        w = 3 * ucount[v]
        base = indptr[3 * v]
        data[base:base + 3 * w] = 0.0  # zeroed here, while the rows are in cache (data comes uninitialised)
        for i in range(row_ptr[v], row_ptr[v + 1]):
            s, a, b = _entry_blocks(src[i])
            off = base + 3 * slot[i]
            for r in range(3):
                for q in range(3):
                    data[off + r * w + q] += local[s, 3 * a + r, 3 * b + q]


#: Block (a, b), a <= b, of a symmetric 4-vertex stencil matrix in the compact (m, 10, 3, 3) storage.
UPPER_BLOCK = np.array([[0, 1, 2, 3], [1, 4, 5, 6], [2, 5, 7, 8], [3, 6, 8, 9]], dtype=np.int64)


@twin
def _write_symmetric(row_ptr, slot, src, ucount, upper, indptr, data):
    """data = the sum of block (a, b) of every entry, from the upper blocks (b < a: transpose of block (b, a));
    row-parallel, each row zeroed first as in ``_write_full``."""
    for v in prange(len(ucount)):
        w = 3 * ucount[v]
        base = indptr[3 * v]
        data[base:base + 3 * w] = 0.0
        for i in range(row_ptr[v], row_ptr[v + 1]):
            s, a, b = _entry_blocks(src[i])
            off = base + 3 * slot[i]
            # indexed reads: a view upper[s, bi] per entry would update the shared array's reference count
            # atomically, which cost a third of this loop on the sheets benchmark
            if a <= b:
                bi = UPPER_BLOCK[a, b]
                for r in range(3):
                    for q in range(3):
                        data[off + r * w + q] += upper[s, bi, r, q]
            else:
                bi = UPPER_BLOCK[b, a]
                for r in range(3):
                    for q in range(3):
                        data[off + r * w + q] += upper[s, bi, q, r]


#: Rows per dynamically scheduled chunk of the row-parallel loops (``parallel_chunksize``): with the
#: default static split, a thread whose core is shared with another process delays the whole call.
ROW_CHUNK = 256

#: Below this many block entries the assembly runs on one thread (waking the pool costs more).
SERIAL_BELOW_ENTRIES = 32768


_unique_columns_serial = _unique_columns.serial
_fill_indices_serial = _fill_indices.serial
_write_full_serial = _write_full.serial
_write_symmetric_serial = _write_symmetric.serial


@njit(cache=True)
def _small_pattern(verts, nverts, n_vertices):
    """``_pattern`` on one thread in one call (int32 ids): (row_ptr, slot, src, ucount, indptr, indices, data)."""
    row_ptr = _count(verts, nverts, n_vertices)
    m = row_ptr[-1]
    col, src = np.empty(m, np.int32), np.empty(m, np.int32)
    ucol, slot = np.empty(m, np.int32), np.empty(m, np.int32)
    _fill(verts, nverts, row_ptr, col, src)
    ucount = _unique_columns_serial(row_ptr, col, n_vertices, 1, ucol, slot)
    indptr = _csr_indptr(ucount, n_vertices)
    indices = np.empty(indptr[-1], np.int32)
    _fill_indices_serial(row_ptr, ucol, ucount, indptr, indices)
    return row_ptr, slot, src, ucount, indptr, indices, np.empty(indptr[-1])


@njit(cache=True)
def _assemble_small_full(verts, nverts, local, n_vertices):
    """(indptr, indices, data) of ``assemble_block_csr`` for small inputs: one kernel call, one thread."""
    row_ptr, slot, src, ucount, indptr, indices, data = _small_pattern(verts, nverts, n_vertices)
    _write_full_serial(row_ptr, slot, src, ucount, local, indptr, data)
    return indptr, indices, data


@njit(cache=True)
def _assemble_small_symmetric(verts, nverts, upper, n_vertices):
    """(indptr, indices, data) of ``assemble_symmetric_block_csr`` for small inputs: one kernel call, one thread."""
    row_ptr, slot, src, ucount, indptr, indices, data = _small_pattern(verts, nverts, n_vertices)
    _write_symmetric_serial(row_ptr, slot, src, ucount, upper, indptr, data)
    return indptr, indices, data


def _assemble(verts, nverts, local, n_vertices, writer):
    """Pattern + ``writer`` (``_write_full`` / ``_write_symmetric``), on one thread for small inputs (one fused
    kernel call: the same kernels in the same order, so the same bits)."""
    small = 16 * len(nverts) < SERIAL_BELOW_ENTRIES
    if small:
        verts, nverts = _checked_stencils(verts, nverts, len(local))
        fused = _assemble_small_full if writer is _write_full else _assemble_small_symmetric
        indptr, indices, data = fused(verts, nverts, local, n_vertices)
        return _to_csr(indptr, indices, data, n_vertices)
    row_ptr, slot, src, ucount, indptr, indices, data = _pattern(verts, nverts, n_vertices, len(local))
    with parallel_chunksize(ROW_CHUNK):
        writer(row_ptr, slot, src, ucount, local, indptr, data)
    return _to_csr(indptr, indices, data, n_vertices)


def _checked_stencils(verts, nverts, n_local):
    """(verts (m, 4), nverts (m,)) as contiguous int64, checked against the m local matrices."""
    verts = np.ascontiguousarray(verts, dtype=np.int64)
    nverts = np.ascontiguousarray(nverts, dtype=np.int64)
    if len(verts) != len(nverts) or n_local != len(nverts):
        raise ValueError("assemble_block_csr: verts, nverts and local must have the same length")
    if len(nverts) and (nverts.min() < 1 or nverts.max() > 4):
        raise ValueError("assemble_block_csr: nverts must lie in 1..4")
    return verts, nverts


def _pattern(verts, nverts, n_vertices, n_local):
    """The block pattern of the stencils for large inputs (parallel kernels; ``_small_pattern`` is the small path)."""
    verts, nverts = _checked_stencils(verts, nverts, n_local)
    # the large arrays come from NumPy, not from inside the kernels: NumPy asks for transparent huge pages,
    # and page-faulting them in costs ~1/5 of 4 KiB pages (sheets benchmark: ~100 MB per Hessian)
    row_ptr = _count(verts, nverts, n_vertices)
    small_ids = 16 * len(nverts) < 2**31 - 1 and n_vertices < 2**31 - 1  # int32 halves their memory traffic
    col, src, ucol, slot = (np.empty(row_ptr[-1], np.int32 if small_ids else np.int64) for _ in range(4))
    _fill(verts, nverts, row_ptr, col, src)
    n_chunks = max(1, min(4 * current_threads(), n_vertices // 1024, len(col) // 16384))
    with parallel_chunksize(1):  # dynamic scheduling (see ROW_CHUNK)
        ucount = _unique_columns(row_ptr, col, n_vertices, n_chunks, ucol, slot)
    indptr = _csr_indptr(ucount, n_vertices)
    fits32 = 9 * len(col) < 2**31 - 1 and 3 * n_vertices < 2**31 - 1
    indices = np.empty(indptr[-1], np.int32 if fits32 else np.int64)
    with parallel_chunksize(ROW_CHUNK):
        _fill_indices(row_ptr, ucol, ucount, indptr, indices)
    return row_ptr, slot, src, ucount, indptr, indices, np.empty(indptr[-1])


def _to_csr(indptr, indices, data, n_vertices):
    return canonical_csr(data, indices, indptr.astype(indices.dtype), 3 * n_vertices)


def _csr_by_constructor(data, indices, indptr, n: int) -> sp.csr_matrix:
    m = sp.csr_matrix((n, n), dtype=np.float64)
    m.data, m.indices, m.indptr = data, indices, indptr
    m.has_sorted_indices = True
    m.has_canonical_format = True
    return m


def _csr_by_attributes(data, indices, indptr, n: int) -> sp.csr_matrix:
    m = object.__new__(sp.csr_matrix)
    m._shape = (n, n)
    m.maxprint = _MAXPRINT
    m.data, m.indices, m.indptr = data, indices, indptr
    m.has_sorted_indices = True
    m.has_canonical_format = True
    return m


_MAXPRINT = sp.csr_matrix((1, 1)).maxprint
_CSR_FAST: bool | None = None  # whether ``_csr_by_attributes`` builds what the constructor builds (checked once)


def _fast_csr_works() -> bool:
    """True when a CSR made by setting SciPy's attributes directly has the attributes and behaviour of one made by
    the constructor (SciPy's private layout: ``_shape``, ``maxprint`` and the three arrays); checked once."""
    try:
        args = (np.array([2.0, 1.0, 3.0]), np.array([0, 1, 1], np.int32), np.array([0, 2, 3], np.int32), 2)
        a, b = _csr_by_attributes(*args), _csr_by_constructor(*args)
        return (set(vars(a)) == set(vars(b)) and a.shape == b.shape and np.array_equal(a.toarray(), b.toarray())
                and np.array_equal((a @ a).toarray(), (b @ b).toarray()) and (a - b).nnz == 0)
    except Exception:  # pragma: no cover - another SciPy layout: the constructor path
        return False


def canonical_csr(data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, n: int) -> sp.csr_matrix:
    """(n, n) ``scipy.sparse.csr_matrix`` on the given arrays (not copied, not checked): the caller guarantees a
    canonical CSR (sorted, unique column indices per row; indptr (n + 1,) and indices of one integer dtype).

    The hot loops build several such matrices per Newton iteration; SciPy's constructor validates and scans its
    arrays (10-25 us a call), so the attributes are set directly where that gives the same object as the
    constructor (checked once per process, ``_fast_csr_works``)."""
    global _CSR_FAST
    if _CSR_FAST is None:
        _CSR_FAST = _fast_csr_works()
    return (_csr_by_attributes if _CSR_FAST else _csr_by_constructor)(data, indices, indptr, n)


def assemble_block_csr(verts: np.ndarray, nverts: np.ndarray, local: np.ndarray, n_vertices: int) -> sp.csr_matrix:
    """Sum of the scattered stencil matrices as a (3n, 3n) CSR matrix.

    Args:
        verts: (m, 4) int64 vertex ids (rows padded with anything past ``nverts``).
        nverts: (m,) int64, number of vertices of each stencil (1..4).
        local: (m, 12, 12) float64 local matrices (the leading 3k x 3k block is used).
        n_vertices: n, the number of vertices.
    """
    return _assemble(verts, nverts, local, n_vertices, _write_full)


def assemble_symmetric_block_csr(verts: np.ndarray, nverts: np.ndarray, upper: np.ndarray,
                                 n_vertices: int) -> sp.csr_matrix:
    """Like ``assemble_block_csr`` for symmetric local matrices given by their upper 3x3 blocks.

    Args:
        verts, nverts, n_vertices: as in ``assemble_block_csr``.
        upper: (m, 10, 3, 3) float64; upper[s, UPPER_BLOCK[a, b]] is block (a, b), a <= b < k_s, of
            stencil s's local matrix (block (b, a) is its transpose). 62.5% of the dense (12, 12)
            storage, which is what the assembly's memory traffic is made of.
    The result is exactly symmetric if the diagonal blocks are (contributions to (i, j) and (j, i)
    are summed in the same stencil order).
    """
    if upper.ndim != 4 or upper.shape[1:] != (10, 3, 3):
        raise ValueError(f"assemble_symmetric_block_csr: upper must have shape (m, 10, 3, 3), got {upper.shape}")
    return _assemble(verts, nverts, upper, n_vertices, _write_symmetric)
