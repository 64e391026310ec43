"""A uniform hash grid in Numba: all pairs (query box, element box) that overlap, each pair once.

Elements are binned into the cubic cells (edge ``h`` [m]) their boxes overlap; the cell coordinates
are packed into one int64 key and the entries are counting-sorted into a power-of-two hash table.
A query visits the cells its box overlaps and accepts an element when (a) the boxes overlap and
(b) the visited cell is the cell holding the lower corner of the boxes' intersection,
max(q_lo, e_lo): that cell lies in both boxes' cell ranges, so every overlapping pair is reported
exactly once without a deduplication pass. Elements covering more than ``MAX_CELLS`` cells go to
an overflow list that every query scans linearly (a few huge obstacle triangles do not blow up the
grid); queries covering too many cells scan all elements directly.

The exclusions of IPC candidates are applied in the kernel: pairs sharing a vertex, pairs whose
both primitives are obstacles, and (self queries) each unordered pair once with first < second.
Results are built in two parallel passes (count, then fill) and come out sorted by (query, element).
"""
from __future__ import annotations

import os

import numba as nb
import numpy as np

MAX_CELLS = 64  # an element or query box covering more cells is handled without the grid
_SLOTS = 16  # results per query kept in the first pass
_BLOCK = 512  # queries per parallel task
_BITS = 21  # bits per axis in a cell key
_AXIS_MAX = (1 << _BITS) - 1


@nb.njit(cache=True)
def _cell_coord(value, origin, inv_h):
    c = int(np.floor((value - origin) * inv_h))
    if c < 0:
        return 0
    if c > _AXIS_MAX:
        return _AXIS_MAX
    return c


@nb.njit(cache=True)
def _cell_key(ix, iy, iz):
    return (ix << (2 * _BITS)) | (iy << _BITS) | iz


@nb.njit(cache=True)
def _bucket(key, mask):
    ix = key >> (2 * _BITS)
    iy = (key >> _BITS) & _AXIS_MAX
    iz = key & _AXIS_MAX
    return ((ix * 73856093) ^ (iy * 19349663) ^ (iz * 83492791)) & mask


@nb.njit(cache=True)
def _n_cells(lo, hi, origin, inv_h):
    n = 1
    for a in range(3):
        n *= _cell_coord(hi[a], origin[a], inv_h) - _cell_coord(lo[a], origin[a], inv_h) + 1
    return n


@nb.njit(cache=True)
def build_grid(elo, ehi, origin, inv_h):
    """Bin element boxes into the hash grid.

    Args:
        elo, ehi: (m, 3) float64 [m], element boxes.
        origin: (3,) [m], lower corner of the grid; inv_h: 1 / cell size [1/m].

    Returns:
        (bucket_start (T + 1,) int64, entry_key (k,) int64, entry_elem (k,) int64,
        entry_box (k, 6) float64 [m] (lo, hi of the entry's element, stored in entry order so that a
        cell's boxes are read contiguously), entry_low_cell (k,) int64 (key of the cell holding the
        element's lower corner), overflow (j,) int64 ids of the elements left out of
        the grid).
    """
    m = elo.shape[0]
    ncell = np.empty(m, np.int64)
    total = 0
    n_over = 0
    for i in range(m):
        c = _n_cells(elo[i], ehi[i], origin, inv_h)
        if c > MAX_CELLS:
            ncell[i] = 0
            n_over += 1
        else:
            ncell[i] = c
            total += c
    overflow = np.empty(n_over, np.int64)
    table = 1
    while table < 2 * total:
        table *= 2
    mask = table - 1
    keys = np.empty(total, np.int64)
    elems = np.empty(total, np.int64)
    k = 0
    j = 0
    for i in range(m):
        if ncell[i] == 0:
            overflow[j] = i
            j += 1
            continue
        x0 = _cell_coord(elo[i, 0], origin[0], inv_h)
        x1 = _cell_coord(ehi[i, 0], origin[0], inv_h)
        y0 = _cell_coord(elo[i, 1], origin[1], inv_h)
        y1 = _cell_coord(ehi[i, 1], origin[1], inv_h)
        z0 = _cell_coord(elo[i, 2], origin[2], inv_h)
        z1 = _cell_coord(ehi[i, 2], origin[2], inv_h)
        for ix in range(x0, x1 + 1):
            for iy in range(y0, y1 + 1):
                for iz in range(z0, z1 + 1):
                    keys[k] = _cell_key(ix, iy, iz)
                    elems[k] = i
                    k += 1
    bucket_start = np.zeros(table + 1, np.int64)
    for e in range(total):
        bucket_start[_bucket(keys[e], mask) + 1] += 1
    for b in range(table):
        bucket_start[b + 1] += bucket_start[b]
    fill = bucket_start[:-1].copy()
    entry_key = np.empty(total, np.int64)
    entry_elem = np.empty(total, np.int64)
    entry_box = np.empty((total, 6), np.float64)
    entry_low_cell = np.empty(total, np.int64)
    for e in range(total):
        b = _bucket(keys[e], mask)
        t = fill[b]
        entry_key[t] = keys[e]
        entry_elem[t] = elems[e]
        for a in range(3):
            entry_box[t, a] = elo[elems[e], a]
            entry_box[t, 3 + a] = ehi[elems[e], a]
        i = elems[e]
        entry_low_cell[t] = _cell_key(_cell_coord(elo[i, 0], origin[0], inv_h),
                                      _cell_coord(elo[i, 1], origin[1], inv_h),
                                      _cell_coord(elo[i, 2], origin[2], inv_h))
        fill[b] += 1
    return bucket_start, entry_key, entry_elem, entry_box, entry_low_cell, overflow


@nb.njit(cache=True, inline="always")
def _boxes_overlap(alo, ahi, blo, bhi):
    return (
        alo[0] <= bhi[0] and blo[0] <= ahi[0]
        and alo[1] <= bhi[1] and blo[1] <= ahi[1]
        and alo[2] <= bhi[2] and blo[2] <= ahi[2]
    )


@nb.njit(cache=True, inline="always")
def _share_vertex(qv, q, ev, e):
    # 2D indexing on purpose: row views would cost a reference-count update per call
    for a in range(qv.shape[1]):
        for b in range(ev.shape[1]):
            if qv[q, a] == ev[e, b]:
                return True
    return False


@nb.njit(cache=True, inline="always")
def _accept(q, e, qv, ev, q_obst, e_obst, self_query):
    """IPC exclusions: (self query) e > q, not both obstacles, no shared vertex."""
    if self_query and e <= q:
        return False
    if q_obst[q] and e_obst[e]:
        return False
    return not _share_vertex(qv, q, ev, e)


@nb.njit(cache=True)
def _scan_grid_elements(q, queries, elements, self_query, is_overflow, out, start, cap, n):
    """A query box too big for the grid: test every grid element. Returns the updated count n."""
    qlo, qhi, qv, q_obst = queries
    elo, ehi, ev, e_obst = elements
    for e in range(elo.shape[0]):
        if is_overflow[e] or not _accept(q, e, qv, ev, q_obst, e_obst, self_query):
            continue
        if _boxes_overlap(qlo[q], qhi[q], elo[e], ehi[e]):
            if n < cap:
                out[start + n] = e
            n += 1
    return n


@nb.njit(cache=True)
def _scan_overflow(q, queries, elements, self_query, q_over, overflow, out, start, cap, n):
    """Test query q against the overflow elements (those left out of the grid). Returns n updated."""
    qlo, qhi, qv, q_obst = queries
    elo, ehi, ev, e_obst = elements
    for t in range(overflow.shape[0]):
        e = overflow[t]
        if self_query:
            # pair (q, e) with e an overflow element: a grid query takes it whatever the order,
            # an overflow query only takes larger overflow ids.
            if e == q or (q_over and e < q):
                continue
            if e < q:  # self query: both sides are the same arrays
                ok = _accept(e, q, qv, ev, q_obst, e_obst, False)
            else:
                ok = _accept(q, e, qv, ev, q_obst, e_obst, False)
        else:
            ok = _accept(q, e, qv, ev, q_obst, e_obst, False)
        if ok and _boxes_overlap(qlo[q], qhi[q], elo[e], ehi[e]):
            if n < cap:
                out[start + n] = e
            n += 1
    return n


@nb.njit(cache=True)
def _query_block(qs, starts, caps, counts, out, queries, elements, self_query, origin, inv_h, grid, is_overflow):
    """Run the queries qs: query qs[i] stores up to caps[i] accepted element ids into
    out[starts[i]:] and its full count into counts[qs[i]] (a count above the cap means "run again
    with more room"). The hot loop is written out in one function on purpose: a Numba call that
    passes arrays costs reference-count updates, too much per query or per pair.

    queries = (qlo, qhi, qv, q_obst), elements = (elo, ehi, ev, e_obst), grid = ``build_grid``'s
    result (see ``query_grid``)."""
    qlo, qhi, qv, q_obst = queries
    elo, ehi, ev, e_obst = elements
    bucket_start, entry_key, entry_elem, entry_box, entry_low_cell, overflow = grid
    mask = bucket_start.shape[0] - 2
    for i in range(qs.shape[0]):
        q = qs[i]
        start = starts[i]
        cap = caps[i]
        n = 0
        lo0, lo1, lo2 = qlo[q, 0], qlo[q, 1], qlo[q, 2]
        hi0, hi1, hi2 = qhi[q, 0], qhi[q, 1], qhi[q, 2]
        x0 = _cell_coord(lo0, origin[0], inv_h)
        x1 = _cell_coord(hi0, origin[0], inv_h)
        y0 = _cell_coord(lo1, origin[1], inv_h)
        y1 = _cell_coord(hi1, origin[1], inv_h)
        z0 = _cell_coord(lo2, origin[2], inv_h)
        z1 = _cell_coord(hi2, origin[2], inv_h)
        q_over = self_query and is_overflow[q]
        if q_over:
            pass  # its pairs with grid elements are reported by those elements' queries
        elif (x1 - x0 + 1) * (y1 - y0 + 1) * (z1 - z0 + 1) > MAX_CELLS:
            n = _scan_grid_elements(q, queries, elements, self_query, is_overflow, out, start, cap, n)
        else:
            for ix in range(x0, x1 + 1):
                for iy in range(y0, y1 + 1):
                    for iz in range(z0, z1 + 1):
                        key = _cell_key(ix, iy, iz)
                        b = _bucket(key, mask)
                        # a bucket's entries are in ascending element order: a self query walks
                        # it backwards and stops at the first element id <= q
                        for t in range(bucket_start[b + 1] - 1, bucket_start[b] - 1, -1):
                            e = entry_elem[t]
                            if self_query and e <= q:
                                break
                            if entry_key[t] != key:
                                continue
                            if not (lo0 <= entry_box[t, 3] and entry_box[t, 0] <= hi0
                                    and lo1 <= entry_box[t, 4] and entry_box[t, 1] <= hi1
                                    and lo2 <= entry_box[t, 5] and entry_box[t, 2] <= hi2):
                                continue
                            # report only from the cell of the intersection's lower corner; the
                            # cell map is monotone, so that cell is max(query's lowest, element's)
                            ec = entry_low_cell[t]
                            if (max(x0, ec >> (2 * _BITS)) != ix or max(y0, (ec >> _BITS) & _AXIS_MAX) != iy
                                    or max(z0, ec & _AXIS_MAX) != iz):
                                continue
                            # the IPC exclusions: not two obstacles, no shared vertex
                            if q_obst[q] and e_obst[e]:
                                continue
                            shared = False
                            for a in range(qv.shape[1]):
                                for c in range(ev.shape[1]):
                                    if qv[q, a] == ev[e, c]:
                                        shared = True
                            if shared:
                                continue
                            if n < cap:
                                out[start + n] = e
                            n += 1
        if overflow.shape[0]:
            n = _scan_overflow(q, queries, elements, self_query, q_over, overflow, out, start, cap, n)
        counts[q] = n


@nb.njit(cache=True, parallel=True)
def query_grid(queries, elements, self_query, origin, inv_h, grid):
    """All accepted (query, element) pairs with overlapping boxes.

    Args:
        queries: (qlo, qhi, qv, q_obst): (nq, 3) [m] query boxes, (nq, kq) int64 query vertex ids,
            (nq,) bool obstacle flags.
        elements: (elo, ehi, ev, e_obst), the same for the elements binned in the grid.
        self_query: queries and elements are the same primitives; pairs come out once, q < e.
        origin: (3,) [m], inv_h: [1/m], grid: the grid (``build_grid``'s result).

    Returns:
        (n, 2) int64 pairs [query, element] sorted by query then element; in self mode each pair
        is [smaller id, larger id] (sorted only when no overflow element took part).

    Two parallel loops over blocks of queries: the first stores up to ``_SLOTS`` results per query in fixed slots and counts them; the second
    moves them to their final place, running again the few queries with more results.
    """
    qlo = queries[0]
    ne = elements[0].shape[0]
    overflow = grid[5]
    nq = qlo.shape[0]
    is_overflow = np.empty(ne, np.bool_)
    for e in range(ne):
        is_overflow[e] = False
    for t in range(overflow.shape[0]):
        is_overflow[overflow[t]] = True
    slots = np.empty(nq * _SLOTS, np.int64)
    counts = np.empty(nq, np.int64)
    n_blocks = (nq + _BLOCK - 1) // _BLOCK
    for bi in nb.prange(n_blocks):
        b0 = bi * _BLOCK
        nb_q = min(nq, b0 + _BLOCK) - b0
        qs = np.empty(nb_q, np.int64)
        starts = np.empty(nb_q, np.int64)
        caps = np.empty(nb_q, np.int64)
        for i in range(nb_q):
            qs[i] = b0 + i
            starts[i] = (b0 + i) * _SLOTS
            caps[i] = _SLOTS
        _query_block(qs, starts, caps, counts, slots, queries, elements, self_query, origin, inv_h, grid,
                     is_overflow)
    offsets = np.empty(nq + 1, np.int64)
    offsets[0] = 0
    for q in range(nq):
        offsets[q + 1] = offsets[q] + counts[q]
    found = np.empty(offsets[nq], np.int64)
    pairs = np.empty((offsets[nq], 2), np.int64)
    for bi in nb.prange(n_blocks):
        one_q = np.empty(1, np.int64)
        one_start = np.empty(1, np.int64)
        one_cap = np.empty(1, np.int64)
        for q in range(bi * _BLOCK, min(nq, (bi + 1) * _BLOCK)):
            c = counts[q]
            o = offsets[q]
            if c <= _SLOTS:
                for t in range(c):
                    found[o + t] = slots[q * _SLOTS + t]
            else:
                one_q[0] = q
                one_start[0] = o
                one_cap[0] = c
                _query_block(one_q, one_start, one_cap, counts, found, queries, elements, self_query, origin,
                             inv_h, grid, is_overflow)
            # sort the query's few results: reverse (a cell's results come in descending order),
            # then insertion sort
            for i in range(c // 2):
                v = found[o + i]
                found[o + i] = found[o + c - 1 - i]
                found[o + c - 1 - i] = v
            for i in range(o + 1, o + c):
                v = found[i]
                j = i - 1
                while j >= o and found[j] > v:
                    found[j + 1] = found[j]
                    j -= 1
                found[j + 1] = v
            for t in range(o, o + c):
                e = found[t]
                if self_query and e < q:
                    pairs[t, 0] = e
                    pairs[t, 1] = q
                else:
                    pairs[t, 0] = q
                    pairs[t, 1] = e
    return pairs


THREADS: int | None = None
"""Threads for the grid queries; None = automatic (see ``n_threads``)."""


def n_threads() -> int:
    """Threads the grid queries use: ``THREADS`` if set, else all Numba threads on machines with
    4+ cores and 1 thread on smaller ones. (On the shared 2-core development machine the parallel
    loops measured 1.0-2.5x *slower* than one thread: other processes keep the second core busy
    and the parallel regions wait for it.)"""
    if THREADS is not None:
        return max(1, min(int(THREADS), nb.config.NUMBA_NUM_THREADS))
    cores = os.cpu_count() or 1
    return nb.config.NUMBA_NUM_THREADS if cores >= 4 else 1


def choose_cell_size(elo: np.ndarray, ehi: np.ndarray) -> float:
    """Cell size [m] for the grid: 1.5 x the mean of the elements' largest box extents (> 0).

    (Measured on the two-sheet benchmark: 1.5-2 x is fastest; smaller cells multiply the entries,
    larger ones the elements per cell.)
    """
    if len(elo) == 0:
        return 1.0
    ext = np.max(ehi - elo, axis=1)
    h = 1.5 * float(np.mean(ext))
    if not np.isfinite(h) or h <= 0.0:
        h = float(np.max(ext)) if np.max(ext) > 0 else 1.0
    return h


def grid_pairs(queries: tuple, elements: tuple, self_query: bool, cell_size: float | None = None) -> np.ndarray:
    """Overlapping (query, element) box pairs that pass the IPC exclusions, via the hash grid.

    Args:
        queries: (lo (nq, 3) [m], hi (nq, 3) [m], vertex ids (nq, kq) int64, obstacle flags (nq,) bool).
        elements: the same for the elements (binned in the grid).
        self_query: queries and elements are the same primitives: each unordered pair once.
        cell_size: [m], default ``choose_cell_size``.

    Returns:
        (n, 2) int64 [query, element] rows sorted lexicographically ([smaller, larger] in self mode).
    """
    qlo, qhi, qv, q_obst = queries
    elo, ehi, ev, e_obst = elements
    if len(qlo) == 0 or len(elo) == 0:
        return np.zeros((0, 2), np.int64)
    h = choose_cell_size(elo, ehi) if cell_size is None else float(cell_size)
    origin = np.minimum(qlo.min(axis=0), elo.min(axis=0))
    extent = float(np.max(np.maximum(qhi.max(axis=0), ehi.max(axis=0)) - origin))
    h = max(h, extent / (_AXIS_MAX - 1), 1e-300)  # keep cell coordinates within the key's bits
    inv_h = 1.0 / h
    grid = build_grid(elo, ehi, origin, inv_h)
    overflow = grid[-1]
    threads = n_threads()
    previous = nb.get_num_threads()
    nb.set_num_threads(threads)
    try:
        pairs = query_grid((qlo, qhi, qv, q_obst), (elo, ehi, ev, e_obst), self_query, origin, inv_h, grid)
    finally:
        nb.set_num_threads(previous)
    if self_query and len(overflow) and len(pairs):
        pairs = pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]
    return pairs
