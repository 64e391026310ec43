"""Box pairs by sorting boxes into grid cells and testing the boxes that share a cell ("cell join").

Every box is entered in each cubic cell (edge h [m]) it overlaps; the entries are counting-sorted by
cell into one array, so that the boxes of a cell lie side by side in memory with their ids, vertex ids
and obstacle flags. The pairs are then found cell by cell, testing every two entries of the cell
(self join) or every query entry against every element entry of the cell (cross join): no per-query
hash lookups, no traversal, and the inner loop streams through contiguous memory.

Two overlapping boxes share every cell of their intersection; a pair is reported only in the cell
holding the intersection's lower corner max(lo_a, lo_b). Per axis that cell is the larger of the two
boxes' lowest cells (the cell map is monotone), so an entry stores a 3-bit mask "my box starts in
this cell along axis a" and the pair is reported in the cell iff the two masks OR to 0b111.

The cells are keyed by their linear index in the grid's bounding box; the buckets are those indices
themselves when the grid is small enough, else a multiplicative hash of them (a bucket may then
hold several cells; entries of different cells never pair since their keys differ). Boxes covering
more than ``MAX_CELLS`` cells are left out of the grid ("overflow") and tested against everything
directly (a few huge obstacle triangles or very fast vertices); while that direct work would be large,
the cell size is doubled.

The pairs are written packed, (first << 32) | second, into a buffer sized from the previous call's
count (a too small buffer only makes the join run again) and finally counting-sorted by first id,
each group sorted by second id. On 4+ cores, runs of buckets are joined in parallel (``THREADS``).

Measured (serial, shared 2-core machine): two 100x100 sheets ~28 ms for all vf + ee candidates (old
per-query hash grid ~72-88 ms), bunny on bunny ~10 ms (old ~20 ms). An implicit LBVH over
Morton-sorted boxes was also tried: ~110 node visits per edge query on the sheets, 71 ms for the ee
query alone, so it was dropped.
"""
from __future__ import annotations

import os

import numba as nb
import numpy as np

MAX_CELLS = 64  # a box covering more cells is tested directly
CELL_FACTOR = 1.5  # cell size / mean largest box side
_AXIS_BITS = 20  # at most 2^20 cells per axis (farther boxes are clamped into the border cells)
_AXIS_MAX = (1 << _AXIS_BITS) - 1
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@nb.njit(cache=True, inline="always")
def _cell(value, origin, inv_h):
    """Cell coordinate of a coordinate value [m] along one axis, clamped to [0, _AXIS_MAX]."""
    t = (value - origin) * inv_h
    if t <= 0.0:
        return 0
    if t >= _AXIS_MAX:
        return _AXIS_MAX
    return int(t)


@nb.njit(cache=True)
def grid_frame(box_a, box_b, h):
    """(origin (3,) [m], dims (3,) int64 cells per axis) of the grid of cell size h [m] covering all
    boxes of the two (n, 6) arrays [lo, hi]."""
    lo = np.full(3, np.inf)
    hi = np.full(3, -np.inf)
    for box in (box_a, box_b):
        for i in range(box.shape[0]):
            for a in range(3):
                lo[a] = min(lo[a], box[i, a])
                hi[a] = max(hi[a], box[i, 3 + a])
    dims = np.ones(3, np.int64)
    for a in range(3):
        if not lo[a] <= hi[a]:
            lo[a] = 0.0
            hi[a] = 0.0
        dims[a] = _cell(hi[a], lo[a], 1.0 / h) + 1
    return lo, dims


@nb.njit(cache=True)
def bin_boxes(box, verts, obst, origin, inv_h, dims, n_buckets_log2, pad):
    """Sort the boxes into the grid's buckets.

    Args:
        box: (n, 6) float64 [m]; verts: (n, k) int64 vertex ids; obst: (n,) bool obstacle flags.
        origin: (3,) [m], inv_h: 1 / cell size [1/m], dims: (3,) int64 cells per axis.
        n_buckets_log2: -1 to use the linear cell index as the bucket (dims product buckets), else
            the log2 of the number of hash buckets.
        pad: -1 or -2: the entries' vertex ids are padded to 3 columns with pad - 2 id (negative,
            distinct per box; grids padded with different ``pad`` never match each other).

    Returns:
        (grid, overflow): grid = (start (T + 1,) int64, box (N, 6) [m], id (N,) int64, mask (N,) int8,
        key (N,) int64 (the cell's linear index; all -1 with dense buckets), verts (N, 3) int32,
        obst (N,) bool): the N entries in bucket order (ascending id within a bucket);
        overflow: (j,) int64 ids of the boxes covering more than MAX_CELLS cells.
    """
    n, k = verts.shape
    cells = np.empty((n, 6), np.int64)  # lowest and highest cell per axis
    total = 0
    n_over = 0
    for i in range(n):
        c = 1
        for a in range(3):
            cells[i, a] = _cell(box[i, a], origin[a], inv_h)
            cells[i, 3 + a] = _cell(box[i, 3 + a], origin[a], inv_h)
            c *= cells[i, 3 + a] - cells[i, a] + 1
        if c > MAX_CELLS:
            n_over += 1
            cells[i, 0] = -1
        else:
            total += c
    dense = n_buckets_log2 < 0
    n_buckets = dims[0] * dims[1] * dims[2] if dense else 1 << n_buckets_log2
    shift = np.uint64(64 - max(n_buckets_log2, 1))
    nx, nxy = dims[0], dims[0] * dims[1]
    overflow = np.empty(n_over, np.int64)
    t_bucket = np.empty(total, np.int64)
    start = np.zeros(n_buckets + 1, np.int64)
    t = 0
    j = 0
    for i in range(n):  # count the entries per bucket
        if cells[i, 0] < 0:
            overflow[j] = i
            j += 1
            continue
        for iz in range(cells[i, 2], cells[i, 5] + 1):
            for iy in range(cells[i, 1], cells[i, 4] + 1):
                for ix in range(cells[i, 0], cells[i, 3] + 1):
                    key = ix + nx * iy + nxy * iz
                    b = key if dense else np.int64((np.uint64(key) * _GOLDEN) >> shift)
                    t_bucket[t] = b
                    start[b + 1] += 1
                    t += 1
    for b in range(n_buckets):
        start[b + 1] += start[b]
    fill = start[:-1].copy()
    g_id = np.empty(total, np.int64)
    g_mask = np.empty(total, np.int8)
    g_key = np.full(total, -1, np.int64)
    t = 0
    for i in range(n):  # scatter (id, mask, key); the boxes follow in one sequential pass
        if cells[i, 0] < 0:
            continue
        for iz in range(cells[i, 2], cells[i, 5] + 1):
            for iy in range(cells[i, 1], cells[i, 4] + 1):
                for ix in range(cells[i, 0], cells[i, 3] + 1):
                    b = t_bucket[t]
                    r = fill[b]
                    fill[b] = r + 1
                    g_id[r] = i
                    g_mask[r] = np.int8((1 if ix == cells[i, 0] else 0) | (2 if iy == cells[i, 1] else 0) | (
                        4 if iz == cells[i, 2] else 0))
                    if not dense:
                        g_key[r] = ix + nx * iy + nxy * iz
                    t += 1
    g_box = np.empty((total, 6), np.float64)
    g_verts = np.empty((total, 3), np.int32)
    g_obst = np.empty(total, np.bool_)
    for r in range(total):
        i = g_id[r]
        for a in range(6):
            g_box[r, a] = box[i, a]
        for c in range(k):
            g_verts[r, c] = verts[i, c]
        for c in range(k, 3):  # padding that matches no vertex id and no other padding
            g_verts[r, c] = pad - 2 * i
        g_obst[r] = obst[i]
    return (start, g_box, g_id, g_mask, g_key, g_verts, g_obst), overflow


@nb.njit(cache=True)
def join_buckets(b0, b1, grid_q, grid_e, self_query, out, out0, cap):
    """Pairs found in the buckets b0 .. b1 - 1.

    Args:
        grid_q, grid_e: ``bin_boxes`` grids sharing origin, cell size and buckets (the same grid in
            self mode).
        self_query: every two entries of a bucket once, as [smaller id, larger id]; else every
            query entry against every element entry, as [query id, element id].
        out: int64 buffer; pair [i, j] goes to out[out0 + t] packed as (i << 32) | j, at most cap
            of them.

    Returns the number of pairs found (> cap: the buffer was too small, run again with more room).
    """
    q_start, q_box, q_id, q_mask, q_key, q_verts, q_obst = grid_q
    e_start, e_box, e_id, e_mask, e_key, e_verts, e_obst = grid_e
    n = 0
    for b in range(b0, b1):
        e_end = e_start[b + 1]
        for a in range(q_start[b], q_start[b + 1]):
            need = q_mask[a] ^ 7
            lo0, lo1, lo2 = q_box[a, 0], q_box[a, 1], q_box[a, 2]
            hi0, hi1, hi2 = q_box[a, 3], q_box[a, 4], q_box[a, 5]
            u0, u1, u2 = q_verts[a, 0], q_verts[a, 1], q_verts[a, 2]
            ka, oa, ia = q_key[a], q_obst[a], q_id[a]
            for c in range(a + 1 if self_query else e_start[b], e_end):
                # the pair belongs to this cell iff together the boxes start in it along every axis
                if not (((e_mask[c] & need) == need) & (lo0 <= e_box[c, 3]) & (e_box[c, 0] <= hi0)
                        & (lo1 <= e_box[c, 4]) & (e_box[c, 1] <= hi1) & (lo2 <= e_box[c, 5]) & (e_box[c, 2] <= hi2)):
                    continue
                w0, w1, w2 = e_verts[c, 0], e_verts[c, 1], e_verts[c, 2]
                if ((u0 == w0) | (u0 == w1) | (u0 == w2) | (u1 == w0) | (u1 == w1) | (u1 == w2) | (u2 == w0)
                        | (u2 == w1) | (u2 == w2)):
                    continue  # shared vertex
                if (e_key[c] != ka) | (oa & e_obst[c]):
                    continue  # another cell in the same hash bucket, or two obstacles
                j = e_id[c]
                if n < cap:
                    if self_query and j < ia:
                        out[out0 + n] = (j << 32) | ia
                    else:
                        out[out0 + n] = (ia << 32) | j
                n += 1
    return n


@nb.njit(cache=True)
def scan_pairs(q_ids, e_ids, q_data, e_data, self_query, out, out0, cap):
    """Every (q, e) of the id lists q_ids x e_ids tested directly (for the overflow boxes).

    q_data, e_data: (box (n, 6) [m], verts (n, k) int64, obst (n,) bool) of all queries / elements.
    Self mode: pairs with q == e are skipped and pairs come out [smaller, larger] (the caller makes
    sure that each unordered pair is scanned once). Output as in ``join_buckets``."""
    qb, qv, qo = q_data
    eb, ev, eo = e_data
    n = 0
    for s in range(q_ids.shape[0]):
        i = q_ids[s]
        for t in range(e_ids.shape[0]):
            j = e_ids[t]
            if self_query and i == j:
                continue
            if not (qb[i, 0] <= eb[j, 3] and eb[j, 0] <= qb[i, 3] and qb[i, 1] <= eb[j, 4] and eb[j, 1] <= qb[i, 4]
                    and qb[i, 2] <= eb[j, 5] and eb[j, 2] <= qb[i, 5]):
                continue
            if qo[i] and eo[j]:
                continue
            shared = False
            for u in range(qv.shape[1]):
                for w in range(ev.shape[1]):
                    if qv[i, u] == ev[j, w]:
                        shared = True
            if shared:
                continue
            if n < cap:
                out[out0 + n] = (min(i, j) << 32) | max(i, j) if self_query else (i << 32) | j
            n += 1
    return n


@nb.njit(cache=True)
def sort_pairs(packed, m, n_first):
    """(m, 2) int64 rows sorted lexicographically from the first m packed pairs (i << 32) | j of
    ``packed``; first ids lie in [0, n_first)."""
    start = np.zeros(n_first + 1, np.int64)
    for r in range(m):
        start[(packed[r] >> 32) + 1] += 1
    for k in range(n_first):
        start[k + 1] += start[k]
    fill = start[:-1].copy()
    second = np.empty(m, np.int32)
    for r in range(m):
        f = packed[r] >> 32
        t = fill[f]
        fill[f] = t + 1
        second[t] = packed[r] & 0xFFFFFFFF
    out = np.empty((m, 2), np.int64)
    for k in range(n_first):
        g0, g1 = start[k], start[k + 1]
        if g1 - g0 > 32:
            second[g0:g1] = np.sort(second[g0:g1])
        else:
            for r in range(g0 + 1, g1):
                v = second[r]
                s = r - 1
                while s >= g0 and second[s] > v:
                    second[s + 1] = second[s]
                    s -= 1
                second[s + 1] = v
        for r in range(g0, g1):
            out[r, 0] = k
            out[r, 1] = second[r]
    return out


@nb.njit(cache=True)
def mean_extent(box):
    """Mean over the (n, 6) boxes of their largest side [m] (0 for no boxes)."""
    s = 0.0
    for i in range(box.shape[0]):
        s += max(box[i, 3] - box[i, 0], box[i, 4] - box[i, 1], box[i, 5] - box[i, 2])
    return s / max(box.shape[0], 1)


@nb.njit(cache=True)
def _bucket_bits(dims, n_boxes):
    """-1 (dense buckets: the linear cell index) when the grid has few enough cells, else log2 of a
    hash table size of about 4 buckets per box."""
    n_cells = dims[0] * dims[1] * dims[2]
    if n_cells <= 8 * n_boxes + 4096:
        return -1
    bits = 4
    while (1 << bits) < 4 * n_boxes:
        bits += 1
    return bits


@nb.njit(cache=True)
def _ids_not_in(n, ids):
    """(n - len(ids),) int64: 0 .. n - 1 without ``ids`` (sorted)."""
    keep = np.ones(n, np.bool_)
    for t in range(ids.shape[0]):
        keep[ids[t]] = False
    return np.flatnonzero(keep).astype(np.int64)


@nb.njit(cache=True)
def _grids(q_data, e_data, self_query, h):
    """Bin both box sets; doubles h while the overflow boxes would cost much more than the grid."""
    qbox, ebox = q_data[0], e_data[0]
    nq, ne = qbox.shape[0], ebox.shape[0]
    while True:
        origin, dims = grid_frame(qbox, ebox, h)
        bits = _bucket_bits(dims, nq + ne)
        grid_q, over_q = bin_boxes(q_data[0], q_data[1], q_data[2], origin, 1.0 / h, dims, bits, -1)
        if self_query:
            grid_e, over_e = grid_q, over_q
        else:
            grid_e, over_e = bin_boxes(e_data[0], e_data[1], e_data[2], origin, 1.0 / h, dims, bits, -2)
        direct = over_q.shape[0] * ne + over_e.shape[0] * nq
        if direct <= 16 * (nq + ne) + 100_000 or max(dims[0], dims[1], dims[2]) <= 4:
            return grid_q, over_q, grid_e, over_e
        h *= 2.0


@nb.njit(cache=True)
def _chunk_bounds(grid_q, grid_e, n_chunks):
    """Bucket bounds (n_chunks + 1,) splitting the buckets into runs of about equal entry counts."""
    qs, es = grid_q[0], grid_e[0]
    n_b = qs.shape[0] - 1
    total = qs[n_b] + es[n_b]
    bounds = np.empty(n_chunks + 1, np.int64)
    bounds[0] = 0
    b = 0
    for c in range(1, n_chunks):
        target = (total * c) // n_chunks
        while b < n_b and qs[b] + es[b] < target:
            b += 1
        bounds[c] = b
    bounds[n_chunks] = n_b
    return bounds


@nb.njit(cache=True, parallel=True)
def join_parallel(grid_q, grid_e, self_query, guess, n_chunks):
    """``join_buckets`` over all buckets, split into n_chunks runs of buckets joined in parallel.

    Returns (out int64 packed pairs, n): the n pairs are out[:n], in bucket order (as the serial
    join)."""
    bounds = _chunk_bounds(grid_q, grid_e, n_chunks)
    n_b = grid_q[0].shape[0] - 1
    caps = np.empty(n_chunks, np.int64)
    out0 = np.empty(n_chunks, np.int64)
    s = 0
    for c in range(n_chunks):
        entries = grid_q[0][bounds[c + 1]] - grid_q[0][bounds[c]] + grid_e[0][bounds[c + 1]] - grid_e[0][bounds[c]]
        total = grid_q[0][n_b] + grid_e[0][n_b]
        caps[c] = 64 + (guess * entries) // max(total, 1)
        out0[c] = s
        s += caps[c]
    out = np.empty(s, np.int64)
    found = np.empty(n_chunks, np.int64)
    for c in nb.prange(n_chunks):
        found[c] = join_buckets(bounds[c], bounds[c + 1], grid_q, grid_e, self_query, out, out0[c], caps[c])
    new0 = np.empty(n_chunks, np.int64)
    s = 0
    for c in range(n_chunks):
        new0[c] = s
        s += found[c]
    packed = np.empty(s, np.int64)
    for c in nb.prange(n_chunks):
        if found[c] > caps[c]:  # the guess was too small for this chunk: run it again
            join_buckets(bounds[c], bounds[c + 1], grid_q, grid_e, self_query, packed, new0[c], found[c])
        else:
            for t in range(found[c]):
                packed[new0[c] + t] = out[out0[c] + t]
    return packed, s


@nb.njit(cache=True)
def _all_pairs(grid_q, over_q, grid_e, over_e, q_data, e_data, self_query, out, cap, n_chunks):
    """Every pair: the grid's buckets, then the overflow boxes directly. Returns (out, count): when
    n_chunks > 1 the buckets are joined in parallel into a new exact-size array (then ``out`` is
    only used for the overflow pairs when it is big enough)."""
    nq, ne = q_data[0].shape[0], e_data[0].shape[0]
    if n_chunks > 1:
        joined, n = join_parallel(grid_q, grid_e, self_query, cap, n_chunks)
        extra = 0
        if over_q.shape[0] or over_e.shape[0]:
            extra = _overflow_pairs(over_q, over_e, q_data, e_data, self_query, out, 0, cap)
        if extra <= cap:
            merged = np.empty(n + extra, np.int64)
            merged[:n] = joined
            merged[n:] = out[:extra]
            return merged, n + extra
        return out, n + extra  # too small: the caller runs again with room for n + extra
    n = join_buckets(0, grid_q[0].shape[0] - 1, grid_q, grid_e, self_query, out, 0, cap)
    if over_q.shape[0] or over_e.shape[0]:
        n += _overflow_pairs(over_q, over_e, q_data, e_data, self_query, out, n, max(cap - n, 0))
    return out, n


@nb.njit(cache=True)
def _overflow_pairs(over_q, over_e, q_data, e_data, self_query, out, out0, cap):
    """The pairs with an overflow box, tested directly. Returns the count."""
    nq, ne = q_data[0].shape[0], e_data[0].shape[0]
    n = 0
    if self_query:
        if over_q.shape[0]:
            n += scan_pairs(over_q, _ids_not_in(nq, over_q), q_data, e_data, True, out, out0 + n, max(cap - n, 0))
            for s in range(over_q.shape[0] - 1):
                n += scan_pairs(over_q[s:s + 1], over_q[s + 1:], q_data, e_data, True, out, out0 + n,
                                max(cap - n, 0))
    else:
        if over_q.shape[0]:
            n += scan_pairs(over_q, np.arange(ne), q_data, e_data, False, out, out0 + n, max(cap - n, 0))
        if over_e.shape[0]:
            n += scan_pairs(_ids_not_in(nq, over_q), over_e, q_data, e_data, False, out, out0 + n,
                            max(cap - n, 0))
    return n


@nb.njit(cache=True)
def choose_cell_size(q_box, e_box):
    """Cell size [m]: ``CELL_FACTOR`` x the larger of the two box sets' mean largest side; for boxes
    of zero size, about one box per cell; never below 2^-19 of the scene's extent."""
    extent = 0.0
    n = q_box.shape[0] + e_box.shape[0]
    for a in range(3):
        lo, hi = np.inf, -np.inf
        for box in (q_box, e_box):
            for i in range(box.shape[0]):
                lo = min(lo, box[i, a])
                hi = max(hi, box[i, 3 + a])
        if hi > lo:
            extent = max(extent, hi - lo)
    h = CELL_FACTOR * max(mean_extent(q_box), mean_extent(e_box))
    if not h > 0.0:
        h = extent / max(1.0, n ** (1.0 / 3.0))
    h = max(h, extent * 2.0 ** -19)
    return h if h > 0.0 else 1.0


@nb.njit(cache=True)
def cell_join_pairs(q_data, e_data, self_query, h, guess, n_chunks):
    """All accepted (query, element) pairs with overlapping boxes, sorted lexicographically.

    Args:
        q_data, e_data: (box (n, 6) float64 [m] [lo, hi], verts (n, k) int64 vertex ids,
            obst (n,) bool obstacle flags) of the queries and the elements (the same in self mode).
        self_query: each unordered pair once, as [smaller id, larger id].
        h: cell size [m] (doubled while too many boxes overflow); <= 0: ``choose_cell_size``.
        guess: expected number of pairs (sizes the first buffer; a wrong guess only costs time).
        n_chunks: 1 for a serial join, else the number of bucket runs joined in parallel.

    Returns:
        (m, 2) int64 [query, element]. Excluded: pairs sharing a vertex id, pairs of two obstacles.
    """
    if not h > 0.0:
        h = choose_cell_size(q_data[0], e_data[0])
    grid_q, over_q, grid_e, over_e = _grids(q_data, e_data, self_query, h)
    cap = max(guess, 64)
    out, n = _all_pairs(grid_q, over_q, grid_e, over_e, q_data, e_data, self_query, np.empty(cap, np.int64), cap,
                        n_chunks)
    if n > cap and n_chunks <= 1:
        out, n = _all_pairs(grid_q, over_q, grid_e, over_e, q_data, e_data, self_query, np.empty(n, np.int64), n, 1)
    elif out.shape[0] < n:
        out, n = _all_pairs(grid_q, over_q, grid_e, over_e, q_data, e_data, self_query, np.empty(n, np.int64), n,
                            n_chunks)
    return sort_pairs(out, n, q_data[0].shape[0])


_GUESS: dict = {}  # (n_queries, n_elements, self_query) -> number of pairs of the last such call

THREADS: int | None = None
"""Threads for the join; None = automatic (see ``n_threads``)."""

PARALLEL_MIN_BOXES = 20_000
"""Fewer boxes (both sides) than this always join on one thread."""


def n_threads() -> int:
    """Threads the join uses: ``THREADS`` if set, else all Numba threads on machines with 4+ cores and
    1 on smaller ones (on the shared 2-core development machine a parallel region cost up to ~8 ms to
    start whenever the other core was busy, more than the whole serial join of a 6k-vertex scene)."""
    if THREADS is not None:
        return max(1, min(int(THREADS), nb.config.NUMBA_NUM_THREADS))
    cores = os.cpu_count() or 1
    return nb.config.NUMBA_NUM_THREADS if cores >= 4 else 1


def cell_pairs6(q_data: tuple, e_data: tuple, self_query: bool, cell_size: float = 0.0) -> np.ndarray:
    """Overlapping (query, element) box pairs that pass the IPC exclusions, by the cell join.

    Args:
        q_data: (box (nq, 6) float64 [m] rows [lo_x, lo_y, lo_z, hi_x, hi_y, hi_z], vertex ids
            (nq, kq) int64, obstacle flags (nq,) bool).
        e_data: the same for the elements (ignored in self mode).
        self_query: queries and elements are the same primitives: each unordered pair once.
        cell_size: [m], <= 0 for ``choose_cell_size``.

    Returns:
        (n, 2) int64 [query, element] rows sorted lexicographically ([smaller, larger] in self mode).
        Excluded: pairs sharing a vertex id, pairs of two obstacles.
    """
    q_data = _normalized(q_data)
    e_data = q_data if self_query else _normalized(e_data)
    nq, ne = len(q_data[0]), len(e_data[0])
    if nq == 0 or ne == 0:
        return np.zeros((0, 2), np.int64)
    if max(nq, ne) >= 1 << 30:
        raise ValueError(f"cell join: at most 2^30 - 1 boxes per side, got {max(nq, ne)}")
    key = (nq, ne, bool(self_query))
    guess = _GUESS.get(key, 32 * max(nq, ne))
    threads = n_threads() if nq + ne >= PARALLEL_MIN_BOXES else 1
    if threads > 1:
        previous = nb.get_num_threads()
        nb.set_num_threads(threads)
        try:
            pairs = cell_join_pairs(q_data, e_data, bool(self_query), float(cell_size), guess + guess // 8 + 64,
                                    4 * threads)
        finally:
            nb.set_num_threads(previous)
    else:
        pairs = cell_join_pairs(q_data, e_data, bool(self_query), float(cell_size), guess + guess // 8 + 64, 1)
    if len(_GUESS) > 256:
        _GUESS.clear()
    _GUESS[key] = len(pairs)
    return pairs


def _normalized(data: tuple) -> tuple:
    box, verts, obst = data
    return (np.ascontiguousarray(box, dtype=np.float64), np.ascontiguousarray(verts, dtype=np.int64),
            np.ascontiguousarray(obst, dtype=np.bool_))


def cell_pairs(queries: tuple, elements: tuple, self_query: bool) -> np.ndarray:
    """``cell_pairs6`` with the (lo (n, 3) [m], hi (n, 3) [m], vertex ids (n, k) int64, obstacle flags
    (n,) bool) tuples of ``hash_grid.grid_pairs`` and ``brute_force.brute_force_pairs`` (same result)."""
    q = (np.hstack([queries[0], queries[1]]), queries[2], queries[3])
    e = q if self_query else (np.hstack([elements[0], elements[1]]), elements[2], elements[3])
    return cell_pairs6(q, e, self_query)
