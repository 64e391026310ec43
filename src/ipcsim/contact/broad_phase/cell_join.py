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

Sweep and prune inside a cell: the boxes are first counting-sorted by the bin of their lower side
along the axis with the most cells (``SWEEP_BINS`` bins per cell), and the stable scatter into the
buckets keeps that order inside every bucket. A box is then tested only against the entries whose
lower bin lies between its own lower and upper bins, and the scan stops at the first entry beyond
(bunny on bunny, ee: 357k box tests -> 236k; vf: 134k -> 69k). The bins are a monotone map of the
coordinate, so no overlapping pair is missed, however the floating-point values fall.

The pairs are written packed, (first << 32) | second, into a buffer sized from the previous call's
count (a too small buffer only makes the join run again) and finally counting-sorted by first id,
each group sorted by second id. On 4+ cores, runs of buckets are joined in parallel (``THREADS``).

Measured (serial, shared 2-core machine): two 100x100 sheets ~28 ms for all vf + ee candidates (old
per-query hash grid ~72-88 ms), bunny on bunny ~10 ms (old ~20 ms); with the sweep, bunny stacked on
bunny (6,270 vertices, static boxes, r = dhat): ee 5.0 ms (was 5.6-5.9), vf 3.0 ms (was 3.4), best of
25 alternating runs. On the 100x100 sheets the sweep costs: ee ~57 ms (was ~49), vf about even -
scattering in sweep order loses the id-order locality of a regular grid. Cell sizes 1.5-2.5 x the
mean box side time the same, 1.0 x is ~10 % slower. An implicit LBVH over
Morton-sorted boxes was also tried: ~110 node visits per edge query on the sheets, 71 ms for the ee
query alone, so it was dropped.
"""
from __future__ import annotations

import os

import numba as nb
import numpy as np

from .pair_buffers import overflow_pairs, scan_pairs, sort_pairs  # noqa: F401  (scan_pairs: API)

MAX_CELLS = 64  # a box covering more cells is tested directly
CELL_FACTOR = 1.5  # cell size / mean largest box side
SWEEP_BINS = 16  # sweep-and-prune bins per cell along the sweep axis (see join_buckets)
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


@nb.njit(cache=True, inline="always")
def _sweep_bin(value, sweep):
    """Sweep coordinate of a coordinate value: sweep = (origin [m], scale [1/m], n_bins); a monotone
    (non-decreasing) map onto 0 .. n_bins - 1, so sweep_bin(lo_b) > sweep_bin(hi_a) implies lo_b > hi_a."""
    t = (value - sweep[0]) * sweep[1]
    if not t > 0.0:
        return 0
    if t >= sweep[2] - 1.0:
        return int(sweep[2]) - 1
    return int(t)


@nb.njit(cache=True)
def bin_boxes(box, verts, obst, origin, inv_h, dims, n_buckets_log2, pad, axis, sweep):
    """Sort the boxes into the grid's buckets, each bucket in the order of the boxes' lower sweep bins.

    Args:
        box: (n, 6) float64 [m]; verts: (n, k) int64 vertex ids; obst: (n,) bool obstacle flags.
        origin: (3,) [m], inv_h: 1 / cell size [1/m], dims: (3,) int64 cells per axis.
        n_buckets_log2: -1 to use the linear cell index as the bucket (dims product buckets), else
            the log2 of the number of hash buckets.
        pad: -1 or -2: the entries' vertex ids are padded to 3 columns with pad - 2 id (negative,
            distinct per box; grids padded with different ``pad`` never match each other).
        axis: the sweep axis (0, 1, 2); sweep: (origin [m], scale [1/m], n_bins) of ``_sweep_bin``.

    Returns:
        (grid, overflow): grid = (start (T + 1,) int64, box (N, 6) [m], id (N,) int64, mask (N,) int8,
        key (N,) int64 (the cell's linear index; all -1 with dense buckets), verts (N, 3) int32,
        obst (N,) bool, slo (N,) int32 and shi (N,) int32 sweep bins of the box's lower and upper
        side along ``axis``): the N entries in bucket order, ascending slo within a bucket;
        overflow: (j,) int64 ids of the boxes covering more than MAX_CELLS cells.
    """
    n, k = verts.shape
    n_bins = int(sweep[2])
    s_lo = np.empty(n, np.int32)
    s_hi = np.empty(n, np.int32)
    s_start = np.zeros(n_bins + 1, np.int64)
    for i in range(n):
        s_lo[i] = _sweep_bin(box[i, axis], sweep)
        s_hi[i] = _sweep_bin(box[i, 3 + axis], sweep)
        s_start[s_lo[i] + 1] += 1
    for b in range(n_bins):  # the boxes in the order of their lower sweep bins (a counting sort)
        s_start[b + 1] += s_start[b]
    order = np.empty(n, np.int64)
    for i in range(n):
        order[s_start[s_lo[i]]] = i
        s_start[s_lo[i]] += 1
    cells = np.empty((n, 6), np.int64)  # lowest and highest cell per axis of box order[r], row r
    is_over = np.zeros(n, np.bool_)
    total = 0
    n_over = 0
    for r in range(n):
        i = order[r]
        c = 1
        for a in range(3):
            cells[r, a] = _cell(box[i, a], origin[a], inv_h)
            cells[r, 3 + a] = _cell(box[i, 3 + a], origin[a], inv_h)
            c *= cells[r, 3 + a] - cells[r, a] + 1
        if c > MAX_CELLS:
            n_over += 1
            cells[r, 0] = -1
            is_over[i] = True
        else:
            total += c
    dense = n_buckets_log2 < 0
    n_buckets = dims[0] * dims[1] * dims[2] if dense else 1 << n_buckets_log2
    shift = np.uint64(64 - max(n_buckets_log2, 1))
    nx, nxy = dims[0], dims[0] * dims[1]
    overflow = np.empty(n_over, np.int64)
    j = 0
    for i in range(n):
        if is_over[i]:
            overflow[j] = i
            j += 1
    t_bucket = np.empty(total, np.int64)
    start = np.zeros(n_buckets + 1, np.int64)
    t = 0
    for r in range(n):  # count the entries per bucket
        if cells[r, 0] < 0:
            continue
        for iz in range(cells[r, 2], cells[r, 5] + 1):
            for iy in range(cells[r, 1], cells[r, 4] + 1):
                for ix in range(cells[r, 0], cells[r, 3] + 1):
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
    for s_ in range(n):  # scatter (id, mask, key) stably: ascending slo within a bucket; the rest follows
        if cells[s_, 0] < 0:
            continue
        i = order[s_]
        for iz in range(cells[s_, 2], cells[s_, 5] + 1):
            for iy in range(cells[s_, 1], cells[s_, 4] + 1):
                for ix in range(cells[s_, 0], cells[s_, 3] + 1):
                    b = t_bucket[t]
                    r = fill[b]
                    fill[b] = r + 1
                    g_id[r] = i
                    g_mask[r] = np.int8((1 if ix == cells[s_, 0] else 0) | (2 if iy == cells[s_, 1] else 0) | (
                        4 if iz == cells[s_, 2] else 0))
                    if not dense:
                        g_key[r] = ix + nx * iy + nxy * iz
                    t += 1
    g_box = np.empty((total, 6), np.float64)
    g_verts = np.empty((total, 3), np.int32)
    g_obst = np.empty(total, np.bool_)
    g_slo = np.empty(total, np.int32)
    g_shi = np.empty(total, np.int32)
    for r in range(total):
        i = g_id[r]
        g_slo[r] = s_lo[i]
        g_shi[r] = s_hi[i]
        for a in range(6):
            g_box[r, a] = box[i, a]
        for c in range(k):
            g_verts[r, c] = verts[i, c]
        for c in range(k, 3):  # padding that matches no vertex id and no other padding
            g_verts[r, c] = pad - 2 * i
        g_obst[r] = obst[i]
    return (start, g_box, g_id, g_mask, g_key, g_verts, g_obst, g_slo, g_shi), overflow


_SELF, _QUERY_SIDE, _ELEMENT_SIDE = 0, 1, 2  # sweep directions of ``_sweep_bucket``


@nb.njit(cache=True)
def _sweep_bucket(b, grid_a, grid_c, side, out, out0, n, cap):
    """One sweep over bucket b: each entry a of grid_a against the entries c of grid_c whose lower
    sweep bin lies in [bin_lo(a), bin_hi(a)] (``_SELF``: the later entries of the same grid), or in
    (bin_lo(a), bin_hi(a)] for ``_ELEMENT_SIDE`` (a is an element, c a query; ties belong to the
    ``_QUERY_SIDE`` sweep). The c entries are in sweep order, so the scan stops at the first c beyond
    bin_hi(a). Pairs go to out[out0 + n ...] as in ``join_buckets``; returns the new count n."""
    a_start, a_box, a_id, a_mask, a_key, a_verts, a_obst, a_slo, a_shi = grid_a
    c_start, c_box, c_id, c_mask, c_key, c_verts, c_obst, c_slo, c_shi = grid_c
    p, c_end = c_start[b], c_start[b + 1]
    for a in range(a_start[b], a_start[b + 1]):
        if side == _SELF:
            p = a + 1
        elif side == _QUERY_SIDE:
            while p < c_end and c_slo[p] < a_slo[a]:
                p += 1
        else:
            while p < c_end and c_slo[p] <= a_slo[a]:
                p += 1
        need = a_mask[a] ^ 7
        lo0, lo1, lo2 = a_box[a, 0], a_box[a, 1], a_box[a, 2]
        hi0, hi1, hi2 = a_box[a, 3], a_box[a, 4], a_box[a, 5]
        u0, u1, u2 = a_verts[a, 0], a_verts[a, 1], a_verts[a, 2]
        ka, oa, ia, top = a_key[a], a_obst[a], a_id[a], a_shi[a]
        for c in range(p, c_end):
            if c_slo[c] > top:
                break  # this and every later entry start beyond a's box along the sweep axis
            # the pair belongs to this cell iff together the boxes start in it along every axis
            if not (((c_mask[c] & need) == need) & (lo0 <= c_box[c, 3]) & (c_box[c, 0] <= hi0)
                    & (lo1 <= c_box[c, 4]) & (c_box[c, 1] <= hi1) & (lo2 <= c_box[c, 5]) & (c_box[c, 2] <= hi2)):
                continue
            w0, w1, w2 = c_verts[c, 0], c_verts[c, 1], c_verts[c, 2]
            if ((u0 == w0) | (u0 == w1) | (u0 == w2) | (u1 == w0) | (u1 == w1) | (u1 == w2) | (u2 == w0)
                    | (u2 == w1) | (u2 == w2)):
                continue  # shared vertex
            if (c_key[c] != ka) | (oa & c_obst[c]):
                continue  # another cell in the same hash bucket, or two obstacles
            j = c_id[c]
            if n < cap:
                if side == _ELEMENT_SIDE or (side == _SELF and j < ia):
                    out[out0 + n] = (j << 32) | ia
                else:
                    out[out0 + n] = (ia << 32) | j
            n += 1
    return n


@nb.njit(cache=True)
def join_buckets(b0, b1, grid_q, grid_e, self_query, out, out0, cap):
    """Pairs found in the buckets b0 .. b1 - 1.

    Within a bucket the entries are ordered by their lower sweep bin (``bin_boxes``), so a pair is
    only tested when the lower bin of one box lies between the lower and upper bins of the other
    (sweep and prune, ``_sweep_bucket``; in cross mode in both directions).

    Args:
        grid_q, grid_e: ``bin_boxes`` grids sharing origin, cell size, buckets and sweep bins (the
            same grid in self mode).
        self_query: every two entries of a bucket once, as [smaller id, larger id]; else every
            query entry against every element entry, as [query id, element id].
        out: int64 buffer; pair [i, j] goes to out[out0 + t] packed as (i << 32) | j, at most cap
            of them.

    Returns the number of pairs found (> cap: the buffer was too small, run again with more room).
    """
    n = 0
    for b in range(b0, b1):
        if self_query:
            n = _sweep_bucket(b, grid_q, grid_q, _SELF, out, out0, n, cap)
        elif grid_q[0][b] < grid_q[0][b + 1] and grid_e[0][b] < grid_e[0][b + 1]:
            n = _sweep_bucket(b, grid_q, grid_e, _QUERY_SIDE, out, out0, n, cap)
            n = _sweep_bucket(b, grid_e, grid_q, _ELEMENT_SIDE, out, out0, n, cap)
    return n


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
def _grids(q_data, e_data, self_query, h):
    """Bin both box sets; doubles h while the overflow boxes would cost much more than the grid."""
    qbox, ebox = q_data[0], e_data[0]
    nq, ne = qbox.shape[0], ebox.shape[0]
    while True:
        origin, dims = grid_frame(qbox, ebox[:0] if self_query else ebox, h)  # self: one pass
        bits = _bucket_bits(dims, nq + ne)
        axis = 0  # sweep along the axis with the most cells, SWEEP_BINS bins per cell
        for a in range(1, 3):
            if dims[a] > dims[axis]:
                axis = a
        n_bins = min(SWEEP_BINS * dims[axis], 2 * (nq + ne) + 64)
        sweep = (origin[axis], n_bins / (dims[axis] * h), float(n_bins))
        grid_q, over_q = bin_boxes(q_data[0], q_data[1], q_data[2], origin, 1.0 / h, dims, bits, -1, axis, sweep)
        if self_query:
            grid_e, over_e = grid_q, over_q
        else:
            grid_e, over_e = bin_boxes(e_data[0], e_data[1], e_data[2], origin, 1.0 / h, dims, bits, -2, axis,
                                       sweep)
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
            extra = overflow_pairs(over_q, over_e, q_data, e_data, self_query, out, 0, cap)
        if extra <= cap:
            merged = np.empty(n + extra, np.int64)
            merged[:n] = joined
            merged[n:] = out[:extra]
            return merged, n + extra
        return out, n + extra  # too small: the caller runs again with room for n + extra
    n = join_buckets(0, grid_q[0].shape[0] - 1, grid_q, grid_e, self_query, out, 0, cap)
    if over_q.shape[0] or over_e.shape[0]:
        n += overflow_pairs(over_q, over_e, q_data, e_data, self_query, out, n, max(cap - n, 0))
    return out, n


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


@nb.njit(cache=True, nogil=True)
def cell_join_pairs(q_data, e_data, self_query, h, guess, n_chunks):
    """All accepted (query, element) pairs with overlapping boxes, sorted lexicographically. Releases the GIL,
    so that two joins can run side by side in two Python threads (``candidates.build_candidates``).

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
        h = choose_cell_size(q_data[0], e_data[0][:0] if self_query else e_data[0])  # self: one pass
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
            with nb.parallel_chunksize(1):  # dynamic scheduling: robust to a core shared with another process
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
    (n,) bool) tuples of ``brute_force.brute_force_pairs`` (same result)."""
    q = (np.hstack([queries[0], queries[1]]), queries[2], queries[3])
    e = q if self_query else (np.hstack([elements[0], elements[1]]), elements[2], elements[3])
    return cell_pairs6(q, e, self_query)
