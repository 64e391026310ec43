"""Box pairs by sorting the boxes along one axis and sweeping them column by column ("cell join").

The sweep axis is the axis along which the boxes spread farthest; the plane of the other two axes (u, v)
is cut into square columns of side h (``choose_cell_size``). ``columns.column_grid`` sorts every box set by
the lower side of its boxes along the sweep axis and enters each box in every column it overlaps, in that
order, so the entries of a column are sorted. The join then sweeps each column: an entry is tested against
the later entries (cross mode: the other set's entries) until the first whose lower side lies beyond its
upper side, an exact float comparison. A pair shares several columns only when both boxes span them; it is
reported in one of them only (``columns.py``), so no pair comes out twice. There are no per-query hash
lookups, no traversal, and a pair is tested once however long its boxes are along the sweep axis.

The columns are keyed by their linear index in the grid's bounding rectangle; the buckets are those indices
themselves when the grid is small enough, else a multiplicative hash of them (a bucket may then hold
several columns; entries of different columns never pair since their keys differ). Boxes covering more
than ``columns.MAX_CELLS`` columns are left out of the grid ("overflow") and tested against everything
directly (a few huge obstacle triangles or very fast vertices); while that direct work would be large, the
column size is doubled.

The pairs are written packed, (first << 32) | second, into a buffer sized from the previous call's count
(a too small buffer only makes the join run again) and finally counting-sorted by first id, each group
sorted by second id. On 4+ cores, runs of buckets are joined in parallel (``THREADS``). Serial joins of fewer
than ``COMPACT_MAX_BOXES`` boxes go to ``compact_join`` (the same columns and pairs in a layout for few
boxes), which hands back what it does not fit.

Measured (serial, shared 2-core machine, medians of 50-100 calls): bunny stacked on bunny (6,270 vertices,
static boxes, r = dhat / 2): ee 3.0-3.2 ms, vf 1.9-2.1 ms; the 3D cell grid this replaced (each box entered
in every cubic cell it overlapped, a sweep inside each cell on 16 bins per cell) took 4.1-4.6 and 2.4-2.6 ms.
Two 100x100 sheets: vf 6.6-7.5 ms (was 7.5-8.3), ee 13-14 ms (the same). Column sides of 1-3 x the mean box
side time the same. An implicit LBVH over Morton-sorted boxes was also tried: ~110 node visits per edge
query on the sheets, 71 ms for the ee query alone, so it was dropped.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from .columns import column_grid, join_buckets
from .compact_join import compact_join_pairs
from .layout import bounds, bucket_bits, choose_cell_size, column_frame, sweep_layout  # noqa: F401  (bounds: API)
from .pair_buffers import overflow_pairs, scan_pairs, sort_pairs  # noqa: F401  (scan_pairs: API)
from ...runtime.threads import cpu_cores

@nb.njit(cache=True)
def _grids(q_data, e_data, self_query, h):
    """Both column grids, their overflow and the sweep axis; h <= 0: ``choose_cell_size``; doubles h while the
    overflow boxes would cost much more than the grid."""
    qbox, ebox = q_data[0], e_data[0]
    nq, ne = qbox.shape[0], ebox.shape[0]
    n_boxes = nq + (0 if self_query else ne)
    lo, hi, axis, h, sweep = sweep_layout(qbox, ebox, self_query, h)
    while True:
        frame = column_frame(lo, hi, axis, h)
        bits = bucket_bits(int(frame[3]) * int(frame[4]), n_boxes)
        grid_q, over_q = column_grid(qbox, q_data[1], q_data[2], -1, axis, sweep, frame, bits)
        if self_query:
            grid_e, over_e = grid_q, over_q
        else:
            grid_e, over_e = column_grid(ebox, e_data[1], e_data[2], -2, axis, sweep, frame, bits)
        direct = over_q.shape[0] * ne + over_e.shape[0] * nq
        if direct <= 16 * (nq + ne) + 100_000 or max(frame[3], frame[4]) <= 4:
            return grid_q, over_q, grid_e, over_e, axis
        h *= 2.0


@nb.njit(cache=True)
def _chunk_bounds(grid_q, grid_e, n_chunks):
    """Bucket bounds (n_chunks + 1,) splitting the buckets into runs of about equal entry counts."""
    qs, es = grid_q[0], grid_e[0]
    n_b = qs.shape[0] - 1
    total = qs[n_b] + es[n_b]
    cuts = np.empty(n_chunks + 1, np.int64)
    cuts[0] = 0
    b = 0
    for c in range(1, n_chunks):
        target = (total * c) // n_chunks
        while b < n_b and qs[b] + es[b] < target:
            b += 1
        cuts[c] = b
    cuts[n_chunks] = n_b
    return cuts


@nb.njit(cache=True, parallel=True)
def join_parallel(grid_q, grid_e, self_query, axis, guess, n_chunks):
    """``join_buckets`` over all buckets, split into n_chunks runs of buckets joined in parallel.

    Returns (out int64 packed pairs, n): the n pairs are out[:n], in bucket order (as the serial
    join)."""
    cuts = _chunk_bounds(grid_q, grid_e, n_chunks)
    n_b = grid_q[0].shape[0] - 1
    caps = np.empty(n_chunks, np.int64)
    out0 = np.empty(n_chunks, np.int64)
    s = 0
    for c in range(n_chunks):
        entries = grid_q[0][cuts[c + 1]] - grid_q[0][cuts[c]] + grid_e[0][cuts[c + 1]] - grid_e[0][cuts[c]]
        total = grid_q[0][n_b] + grid_e[0][n_b]
        caps[c] = 64 + (guess * entries) // max(total, 1)
        out0[c] = s
        s += caps[c]
    out = np.empty(s, np.int64)
    found = np.empty(n_chunks, np.int64)
    for c in nb.prange(n_chunks):
        found[c] = join_buckets(cuts[c], cuts[c + 1], grid_q, grid_e, self_query, axis, out, out0[c], caps[c])
    new0 = np.empty(n_chunks, np.int64)
    s = 0
    for c in range(n_chunks):
        new0[c] = s
        s += found[c]
    packed = np.empty(s, np.int64)
    for c in nb.prange(n_chunks):
        if found[c] > caps[c]:  # the guess was too small for this chunk: run it again
            join_buckets(cuts[c], cuts[c + 1], grid_q, grid_e, self_query, axis, packed, new0[c], found[c])
        else:
            for t in range(found[c]):
                packed[new0[c] + t] = out[out0[c] + t]
    return packed, s


@nb.njit(cache=True)
def _serial_pairs(grids, q_data, e_data, self_query, out, cap):
    """Every pair into out[:cap]: the grid's buckets, then the overflow boxes directly. Returns (out, count); a
    count above cap means out was too small (the caller runs again with room for count)."""
    grid_q, over_q, grid_e, over_e, axis = grids
    n = join_buckets(0, grid_q[0].shape[0] - 1, grid_q, grid_e, self_query, axis, out, 0, cap)
    if over_q.shape[0] or over_e.shape[0]:
        n += overflow_pairs(over_q, over_e, q_data, e_data, self_query, out, n, max(cap - n, 0))
    return out, n


@nb.njit(cache=True)
def _parallel_pairs(grids, q_data, e_data, self_query, out, cap, n_chunks):
    """``_serial_pairs`` with the buckets joined in n_chunks runs in parallel into a new exact-size array (``out``
    then only takes the overflow pairs); out too small when the returned array is shorter than the count."""
    grid_q, over_q, grid_e, over_e, axis = grids
    joined, n = join_parallel(grid_q, grid_e, self_query, axis, cap, n_chunks)
    extra = 0
    if over_q.shape[0] or over_e.shape[0]:
        extra = overflow_pairs(over_q, over_e, q_data, e_data, self_query, out, 0, cap)
    if extra <= cap:
        merged = np.empty(n + extra, np.int64)
        merged[:n] = joined
        merged[n:] = out[:extra]
        return merged, n + extra
    return out, n + extra  # too small: the caller runs again with room for n + extra


@nb.njit(cache=True, nogil=True)
def cell_join_pairs(q_data, e_data, self_query, h, guess):
    """All accepted (query, element) pairs with overlapping boxes, sorted lexicographically, joined on one thread.
    Releases the GIL, so that two joins can run side by side in two Python threads
    (``candidates.build_candidates``).

    Args:
        q_data, e_data: (box (n, 6) float64 [m] [lo, hi], verts (n, k) int64 vertex ids,
            obst (n,) bool obstacle flags) of the queries and the elements (the same in self mode).
        self_query: each unordered pair once, as [smaller id, larger id].
        h: column side [m] (doubled while too many boxes overflow); <= 0: ``choose_cell_size``.
        guess: expected number of pairs (sizes the first buffer; a wrong guess only costs time).

    Returns:
        (m, 2) int64 [query, element]. Excluded: pairs sharing a vertex id, pairs of two obstacles.
    """
    grids = _grids(q_data, e_data, self_query, h)
    cap = max(guess, 64)
    out, n = _serial_pairs(grids, q_data, e_data, self_query, np.empty(cap, np.int64), cap)
    if n > cap:
        out, n = _serial_pairs(grids, q_data, e_data, self_query, np.empty(n, np.int64), n)
    return sort_pairs(out, n, q_data[0].shape[0])


@nb.njit(cache=True, nogil=True)
def cell_join_pairs_parallel(q_data, e_data, self_query, h, guess, n_chunks):
    """``cell_join_pairs`` with the buckets split into n_chunks runs joined in parallel (``join_parallel``); a
    kernel of its own, so that scenes joining on one thread never compile the parallel one."""
    grids = _grids(q_data, e_data, self_query, h)
    cap = max(guess, 64)
    out, n = _parallel_pairs(grids, q_data, e_data, self_query, np.empty(cap, np.int64), cap, n_chunks)
    if out.shape[0] < n:
        out, n = _parallel_pairs(grids, q_data, e_data, self_query, np.empty(n, np.int64), n, n_chunks)
    return sort_pairs(out, n, q_data[0].shape[0])


_GUESS: dict = {}  # (n_queries, n_elements, self_query) -> number of pairs of the last such call

THREADS: int | None = None
"""Threads for the join; None = automatic (see ``n_threads``)."""

PARALLEL_MIN_BOXES = 20_000
"""Fewer boxes (both sides) than this always join on one thread."""

COMPACT_MAX_BOXES = 20_000
"""Fewer boxes (both sides) than this join in compact columns (``compact_join``) where they fit, on one thread
(``compact_fits``). Time of the compact join / the cell join, shared 2-core machine, medians: teddy grasp 0.78
(vertex-face, 1,326 boxes) and 0.57 (edge-edge, 2,640); two sheets of n x n vertices, trajectories, for n = 8 to
100 (320 to 118,000 boxes): 0.77 to 1.0, never slower. So the bound is no crossover: it keeps the joins that may
run in parallel (``PARALLEL_MIN_BOXES``) on their path."""


def n_threads() -> int:
    """Threads the join uses: ``THREADS`` if set, else all Numba threads on machines with 4+ cores and
    1 on smaller ones (on the shared 2-core development machine a parallel region cost up to ~8 ms to
    start whenever the other core was busy, more than the whole serial join of a 6k-vertex scene)."""
    if THREADS is not None:
        return max(1, min(int(THREADS), nb.config.NUMBA_NUM_THREADS))
    cores = cpu_cores()
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
    guess = pair_guess(nq, ne, self_query)
    if compact_fits(nq, ne):
        pairs, ok = compact_join_pairs(q_data, e_data, bool(self_query), float(cell_size), guess)
        if ok:
            remember_pairs(nq, ne, self_query, len(pairs))
            return pairs
    threads = n_threads() if nq + ne >= PARALLEL_MIN_BOXES else 1
    if threads > 1:
        previous = nb.get_num_threads()
        nb.set_num_threads(threads)
        try:
            with nb.parallel_chunksize(1):  # dynamic scheduling: robust to a core shared with another process
                pairs = cell_join_pairs_parallel(q_data, e_data, bool(self_query), float(cell_size), guess,
                                                 4 * threads)
        finally:
            nb.set_num_threads(previous)
    else:
        pairs = cell_join_pairs(q_data, e_data, bool(self_query), float(cell_size), guess)
    remember_pairs(nq, ne, self_query, len(pairs))
    return pairs


def compact_fits(nq: int, ne: int) -> bool:
    """Whether a join of nq queries and ne elements (ne = nq in self mode) goes to compact columns
    (``compact_join``): fewer boxes than ``COMPACT_MAX_BOXES``, and not a join that runs in parallel."""
    return nq + ne < COMPACT_MAX_BOXES and (nq + ne < PARALLEL_MIN_BOXES or n_threads() == 1)


def pair_guess(nq: int, ne: int, self_query: bool) -> int:
    """Room for the pairs of a join of nq queries and ne elements: twice the count of the last join of that size
    and mode (the counts of successive Newton iterations differ by tens of percent, and a buffer too small
    costs a second join, while untouched room costs nothing), else 32 per box of the larger side."""
    guess = _GUESS.get((nq, ne, bool(self_query)), 16 * max(nq, ne))
    return 2 * guess + 1024


def remember_pairs(nq: int, ne: int, self_query: bool, n_pairs: int) -> None:
    """Record the pair count of a join of nq queries and ne elements (for ``pair_guess``)."""
    if len(_GUESS) > 256:
        _GUESS.clear()
    _GUESS[(nq, ne, bool(self_query))] = n_pairs


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
